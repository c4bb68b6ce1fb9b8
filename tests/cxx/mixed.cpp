// A layer of gnnc-cxx's tests that uses the constructs the examples do not:
// an edge input, in-edges and their ends, out-neighbours, max, min and mean
// aggregations, comparisons and where, gelu, elu, sigmoid, layer_norm, the
// dense softmax and log_softmax, transpose, concat, reshape and reductions
// along an axis. CxxLayerTest.cpp runs it as written and as compiled.

#include "gnnc/cxx/NodeCentric.h"

namespace nc = gnnc::cxx;

GNNC_LAYER void Mixed(nc::Graph &g, nc::Rows<4> x, nc::EdgeRows<3> w,
                      nc::Weight<4, 4> W, nc::Weight<3, 4> W_e,
                      nc::Weight<4, 4> V, nc::Weight<4> b, nc::Rows<6> &out) {
  g.set_vertex_attr("h", nc::matmul(x, W));
  g.set_edge_attr("a", nc::sigmoid(nc::matmul(w, W_e)));
  for (nc::Vertex v : g.dst_vertices()) {
    auto m = nc::map(v.in_edges(), [&](nc::Edge e) {
      return nc::where(e.get("a") > 0.5f, e.src().get("h"), -e.src().get("h")) *
             e.get("a");
    });
    v.set("s", g.sum(g.softmax(m) * m));
    v.set("hi", g.max(m));
    v.set("lo", g.min(v.in_neighbors(),
                      [](nc::Vertex u) { return nc::gelu(u.get("h")); }));
    v.set("o", g.mean(v.out_neighbors(), [&](nc::Vertex u) {
      return nc::elu(u.get("h") - v.get("h"), 0.5f);
    }));
  }
  auto z = nc::layer_norm(g.dst_attr("s") + g.dst_attr("hi") - g.dst_attr("lo"),
                          1e-3f) +
           nc::matmul(g.dst_attr("o"), nc::transpose(V)) + b;
  auto p = nc::log_softmax(z, -1) + nc::softmax(z, 1) * (z >= 0.0f);
  out = nc::concat({p, nc::sum(p, -1, true),
                    nc::reshape(nc::mean(p, 1), {g.num_vertices(), 1})},
                   1);
}
