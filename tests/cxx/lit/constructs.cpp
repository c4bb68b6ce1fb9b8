// RUN: %gnnc-cxx --emit=ast %s -- %cxxflags | FileCheck %s
// RUN: %gnnc-cxx --emit=mlir %s -- %cxxflags | FileCheck %s --check-prefix=MLIR
//
// Every construct of the C++ spelling, as the .gnn AST it becomes, each
// node at its C++ line and column.

#include "gnnc/cxx/NodeCentric.h"

namespace nc = gnnc::cxx;

GNNC_LAYER void Everything(nc::Graph &g, const nc::Rows<4> &x,
                           nc::EdgeRows<3> w, nc::Weight<4, 2> W,
                           nc::Weight<3, 2> W_e, nc::Rows<2> &out) {
  g.set_vertex_attr("h", nc::matmul(x, W));
  g.set_edge_attr("a", nc::matmul(w, W_e));
  auto deg = nc::reshape(g.in_degree(), {g.num_vertices(), 1});
  for (nc::Vertex v : g.dst_vertices()) {
    auto s = nc::map(v.in_edges(), [&](nc::Edge e) {
      return nc::relu(e.src().get("h") + e.get("a") - v.get("h"));
    });
    v.set("sum", g.sum(s));
    v.set("avg", g.mean(v.out_neighbors(),
                        [](nc::Vertex u) { return -u.get("h"); }));
    v.set("max", g.max(v.out_edges(), [](nc::Edge e) {
      return nc::exp(e.dst().get("h") / 2.0f);
    }));
    v.set("min", g.min(v.in_neighbors(),
                       [](nc::Vertex u) { return nc::tanh(u.get("h")); }));
    v.set("att", g.sum(g.softmax(s) * nc::map(v.in_neighbors(), [](nc::Vertex u) {
                         return u.get("h");
                       })));
  }
  out = (g.dst_attr("sum") + g.dst_attr("avg") * g.dst_attr("max") -
         g.dst_attr("min") + nc::sum(g.dst_attr("att"), -1, true)) /
        nc::max(deg, 1.0f);
}

// The dense maths the layer above does not use.
GNNC_LAYER void Dense(nc::Graph &g, nc::Rows<4> x, nc::Weight<2, 4> V,
                      nc::Rows<4> &out) {
  auto y = nc::where(x >= 0.0f, nc::gelu(x), nc::layer_norm(x, 1e-3f));
  auto z = nc::softmax(y, -1) + nc::log_softmax(y, 1) * (y != x) +
           (y < x) - (y <= x) + (y > 1.0f) * (y == x);
  out = nc::concat({nc::matmul(z, nc::transpose(V)), nc::mean(z, 1, true),
                    nc::sum(z, -1, true)},
                   1);
}

int untouched(int a) { return a; }

// The signature: the graph and inputs are forward's arguments (x by const
// reference, w an EdgeRows), each Weight a parameter, Rows & the result.
// CHECK: layer Everything @11:12
// CHECK-NEXT: param W: f32[4, 2] @12:64
// CHECK-NEXT: param W_e: f32[3, 2] @13:45
// CHECK-NEXT: def forward -> f32[N, 2]
// CHECK-NEXT: arg g: Graph @11:39
// CHECK-NEXT: arg x: f32[N, 4] @11:61
// CHECK-NEXT: arg w: f32[E, 3] @12:44
// Attributes of the vertices and of the edges.
// CHECK: attr .set_vertex_attr @14:3
// CHECK: key "h" @14:21
// CHECK-NEXT: binary @ @14:26 : f32[N, 2]
// CHECK: attr .set_edge_attr @15:3
// CHECK: key "a" @15:19
// CHECK-NEXT: binary @ @15:24 : f32[E, 2]
// CHECK: assign deg @16:8
// CHECK-NEXT: call @16:14 : f32[N, 1]
// CHECK-NEXT: name reshape
// CHECK: attr .in_degree
// CHECK: name N @16:42
// The vertex loop; a map over in-edges binds the neighbour e.src() too.
// CHECK: for-vertex v @17:3
// CHECK: assign s @18:10
// CHECK-NEXT: comprehension for e_nbr, e @18:14 : f32[2] per-edge(in)
// CHECK-NEXT: attr .inedges
// CHECK-NEXT: name v
// CHECK-NEXT: call @19:14 : f32[2] per-edge(in)
// CHECK-NEXT: name relu
// CHECK-NEXT: binary - @19:53
// CHECK-NEXT: binary + @19:40
// CHECK-NEXT: attr .h @19:35 : f32[2] per-source
// CHECK-NEXT: name e_nbr
// CHECK-NEXT: attr .a @19:48 : f32[2] per-edge(in)
// CHECK-NEXT: name e @19:42 : edge
// CHECK-NEXT: attr .h @19:61 : f32[2] per-destination
// CHECK-NEXT: name v
// CHECK: attr-assign v.sum @21:5
// CHECK-NEXT: call @21:18
// CHECK-NEXT: attr .sum
// The mean is g.avg; out-neighbours; out-edges, whose neighbour is e.dst().
// CHECK: attr-assign v.avg @22:5
// CHECK-NEXT: call
// CHECK-NEXT: attr .avg
// CHECK: comprehension for u @22:18 : f32[2] per-edge(out)
// CHECK-NEXT: attr .outnbs
// CHECK: unary -
// CHECK: attr-assign v.max @24:5
// CHECK: attr .max
// CHECK: comprehension for e_nbr, e @24:18 : f32[2] per-edge(out)
// CHECK-NEXT: attr .outedges
// CHECK: name exp
// CHECK-NEXT: binary / @25:39
// CHECK-NEXT: attr .h
// CHECK-NEXT: name e_nbr
// CHECK-NEXT: float 2.0 @25:41
// CHECK: attr-assign v.min @27:5
// CHECK: attr .min
// CHECK: attr .innbs
// CHECK: name tanh
// CHECK: attr-assign v.att @29:5
// CHECK-NEXT: call
// CHECK-NEXT: attr .sum
// CHECK-NEXT: name g
// CHECK-NEXT: binary * @29:37
// CHECK-NEXT: call
// CHECK-NEXT: attr .softmax
// The result: g.dst_attr is [w.h for w in g.dst_vertex]; a reduction
// with keepdims; the elementwise nc::max.
// CHECK: return @33:3
// CHECK: comprehension for __vertex @33:10 : f32[N, 2]
// CHECK-NEXT: attr .dst_vertex
// CHECK: name sum @34:30
// CHECK: keyword keepdims
// CHECK-NEXT: bool True
// CHECK: call @35:9 : f32[N, 1]
// CHECK-NEXT: name max

// CHECK: layer Dense
// CHECK: assign y
// CHECK-NEXT: call {{.*}} : f32[N, 4]
// CHECK-NEXT: name where
// CHECK-NEXT: binary >= {{.*}} : f32[N, 4]
// CHECK: name gelu
// CHECK: name layer_norm
// CHECK: float 1e-3
// CHECK: assign z
// CHECK: name softmax
// CHECK: name log_softmax
// CHECK: binary !=
// CHECK: binary <
// CHECK: binary <=
// CHECK: binary >
// CHECK: binary ==
// CHECK: return
// CHECK-NEXT: call {{.*}} : f32[N, 4]
// CHECK-NEXT: name concat
// CHECK-NEXT: list
// CHECK: name transpose
// CHECK: name mean
// CHECK: name sum

// Every layer is rewritten into a call of its kernels, and the rest stays.
// RUN: rm -rf %t && %gnnc-cxx %s -o %t -- %cxxflags
// RUN: FileCheck %s --check-prefix=REWRITE --input-file=%t/constructs.cpp
// REWRITE: GNNC_LAYER void Everything({{.*}} { /* gnnc-cxx: compiled into constructs_gnnc::Everything (constructs_gnnc.h) */ gnnc::cxx::detail::expectRows(x, g.num_vertices(), "x"); gnnc::cxx::detail::expectRows(w, g.num_edges(), "w"); gnnc::cxx::detail::check(::constructs_gnnc::Everything(g.graph(), x.data(), w.data(), ::constructs_gnnc::Everything_Params{const_cast<float *>(W.data()), const_cast<float *>(W_e.data())}, out.prepare(g.num_vertices()), g.workspace(::constructs_gnnc::Everything_workspace_bytes(g.graph())), false, 0)); }
// REWRITE: GNNC_LAYER void Dense({{.*}} { /* gnnc-cxx: compiled into constructs_gnnc::Dense (constructs_gnnc.h) */
// REWRITE: int untouched(int a) { return a; }

// MLIR-LABEL: func.func @Everything(
// MLIR-SAME: gnn.name = "g"
// MLIR-SAME: gnn.dims = ["E", "3"], gnn.name = "w"
// MLIR-SAME: gnn.param = "W_e"
// MLIR: gnn.scatter sum
// MLIR: gnn.edge_softmax
// MLIR: return
