// SAGEConv of dsl-examples/sage_mean.gnn, written in C++
// (gnnc/cxx/NodeCentric.h): in_dim 12, out_dim 8, the mean of the
// neighbours.

#include "gnnc/cxx/NodeCentric.h"

namespace nc = gnnc::cxx;

GNNC_LAYER void SAGEConv(nc::Graph &g, nc::Rows<12> x, nc::Weight<12, 8> W_self,
                         nc::Weight<12, 8> W_neigh, nc::Weight<8> b,
                         nc::Rows<8> &out) {
  g.set_vertex_attr("h", nc::matmul(x, W_neigh));
  for (nc::Vertex v : g.dst_vertices())
    v.set("m",
          g.mean(v.in_neighbors(), [](nc::Vertex u) { return u.get("h"); }));
  out = nc::matmul(x, W_self) + g.dst_attr("m") + b;
}
