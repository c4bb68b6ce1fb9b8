// GCNConv of dsl-examples/gcn.gnn, written in C++ (gnnc/cxx/NodeCentric.h):
// in_dim 12, out_dim 8. Compiled as it is, it runs one vertex at a time;
// gnnc-cxx rewrites the body into a call of gnnc's fused kernels.

#include "gnnc/cxx/NodeCentric.h"

namespace nc = gnnc::cxx;

GNNC_LAYER void GCNConv(nc::Graph &g, nc::Rows<12> x, nc::Weight<12, 8> W,
                        nc::Weight<8> b, nc::Rows<8> &out) {
  // max(deg, 1) keeps vertices without edges finite; their sums are 0.
  auto src_norm = nc::rsqrt(
      nc::max(nc::reshape(g.out_degree(), {g.num_vertices(), 1}), 1.0f));
  auto dst_norm = nc::rsqrt(
      nc::max(nc::reshape(g.in_degree(), {g.num_vertices(), 1}), 1.0f));
  g.set_vertex_attr("h", nc::matmul(x, W) * src_norm);
  for (nc::Vertex v : g.dst_vertices())
    v.set("h",
          g.sum(v.in_neighbors(), [](nc::Vertex u) { return u.get("h"); }));
  out = g.dst_attr("h") * dst_norm + b;
}
