// RUN: rm -rf %t && not %gnnc-cxx %s -o %t/out -- %cxxflags 2>&1 | FileCheck %s
// RUN: not %gnnc-cxx %s -o %t/out -- %cxxflags 2>&1 | grep -c "error:" | FileCheck %s --check-prefix=COUNT
// Nothing is written.
// RUN: ls %t/out | count 0
//
// Constructs outside the node-centric subset: each gets an error at its C++
// location, with the line and a caret.

#include "gnnc/cxx/NodeCentric.h"

namespace nc = gnnc::cxx;

nc::Tensor helper(const nc::Tensor &t) { return t; }

GNNC_LAYER void WritesANeighbour(nc::Graph &g, nc::Rows<3> x,
                                 nc::Rows<3> &out) {
  g.set_vertex_attr("h", x);
  for (nc::Vertex v : g.dst_vertices())
// CHECK: errors.cpp:[[@LINE+4]]:5: error: this loop writes a neighbour's attribute: in a vertex loop only the loop vertex is written (v.set), and a neighbourhood is read through nc::map and aggregated
// CHECK-NEXT: {{^}}   [[@LINE+3]] |     for (nc::Vertex u : v.in_neighbors().vertices())
// CHECK-NEXT: {{^}}       |     ^
// CHECK-NOT: WritesANeighbour
    for (nc::Vertex u : v.in_neighbors().vertices())
      u.set("h", v.get("h"));
  out = g.dst_attr("h");
}

GNNC_LAYER void CallsAnUnknownFunction(nc::Graph &g, nc::Rows<3> x,
                                       nc::Rows<3> &out) {
// CHECK: errors.cpp:[[@LINE+1]]:9: error: a call to 'helper', which gnnc-cxx cannot compile: a layer calls the functions of gnnc/cxx/NodeCentric.h only
  out = helper(x);
}

GNNC_LAYER void TwoHops(nc::Graph &g, nc::Rows<3> x, nc::Rows<3> &out) {
  g.set_vertex_attr("h", x);
  for (nc::Vertex v : g.dst_vertices())
    v.set("h", g.sum(v.in_neighbors(), [&](nc::Vertex u) {
// CHECK: errors.cpp:[[@LINE+1]]:20: error: a data-dependent neighbour list cannot be compiled: a map reads a neighbourhood of the loop vertex as the graph fixes it (v.in_neighbors(), v.out_neighbors(), v.in_edges(), v.out_edges())
      return g.sum(u.in_neighbors(), [](nc::Vertex w) { return w.get("h"); });
    }));
  out = g.dst_attr("h");
}

GNNC_LAYER void Branches(nc::Graph &g, nc::Rows<3> x, nc::Rows<3> &out) {
// CHECK: errors.cpp:[[@LINE+1]]:3: error: an 'if' statement is outside the node-centric subset that gnnc-cxx compiles (docs/cxx.md)
  if (g.num_vertices() > 2)
    x = x;
  out = x;
}

// COUNT: 4
