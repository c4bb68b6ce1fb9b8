// GATConv of dsl-examples/gat.gnn, written in C++ (gnnc/cxx/NodeCentric.h):
// in_dim 12, 2 heads of 4 features, slope 0.2, no attention dropout.

#include "gnnc/cxx/NodeCentric.h"

namespace nc = gnnc::cxx;

GNNC_LAYER void GATConv(nc::Graph &g, nc::Rows<12> x, nc::Weight<12, 8> W,
                        nc::Weight<2, 4> a_src, nc::Weight<2, 4> a_dst,
                        nc::Weight<8> b, nc::Rows<8> &out) {
  auto h = nc::reshape(nc::matmul(x, W), {g.num_vertices(), 2, 4});
  // es, ed: [N, 2, 1], one score half per vertex and head.
  g.set_vertex_attr("h", h);
  g.set_vertex_attr("es", nc::sum(h * a_src, -1, true));
  g.set_vertex_attr("ed", nc::sum(h * a_dst, -1, true));
  for (nc::Vertex v : g.dst_vertices()) {
    // e, a: [2, 1] per in-edge; v.h: [2, 4].
    auto e = nc::map(v.in_neighbors(), [&](nc::Vertex u) {
      return nc::leaky_relu(u.get("es") + v.get("ed"), 0.2f);
    });
    auto a = g.softmax(e);
    v.set("h", g.sum(a * nc::map(v.in_neighbors(),
                                 [](nc::Vertex u) { return u.get("h"); })));
  }
  out = nc::reshape(g.dst_attr("h"), {g.num_vertices(), 8}) + b;
}
