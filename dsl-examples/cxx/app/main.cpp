// cxx-app: calls GCNConv (../gcn.cpp, compiled by gnnc-cxx) on a small
// graph and checks it against the layer's formula computed here:
// out[v] = dst_norm[v] * sum over in-edges u -> v of src_norm[u] (x[u] W)
// + b, with src_norm = 1 / sqrt(max(out-degree, 1)), dst_norm likewise
// with the in-degree.

#include "gnnc/cxx/NodeCentric.h"

#include <cmath>
#include <cstdio>
#include <vector>

namespace nc = gnnc::cxx;

void GCNConv(nc::Graph &g, nc::Rows<12> x, nc::Weight<12, 8> W, nc::Weight<8> b,
             nc::Rows<8> &out);

int main() {
  // A ring of 6 vertices with one chord, and vertex 6 on its own.
  const int64_t n = 7;
  std::vector<int64_t> src = {0, 1, 2, 3, 4, 5, 0}, dst = {1, 2, 3, 4, 5, 0, 3};
  gnnc::rt::Graph graph;
  if (gnnc::rt::Status s = gnnc::rt::Graph::fromEdgeIndex(
          src.data(), dst.data(), static_cast<int64_t>(src.size()), n, n,
          graph);
      !s.ok()) {
    std::fprintf(stderr, "cxx-app: %s\n", s.message().c_str());
    return 1;
  }
  std::vector<float> x(n * 12), w(12 * 8), b(8);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<float>((i * 7) % 11) / 10.0f - 0.5f;
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = static_cast<float>((i * 5) % 13) / 13.0f - 0.4f;
  for (size_t i = 0; i < b.size(); ++i)
    b[i] = 0.1f * static_cast<float>(i);

  nc::Graph g(graph);
  nc::Rows<8> out;
  GCNConv(g, nc::Rows<12>(n, x), nc::Weight<12, 8>(w), nc::Weight<8>(b), out);

  double worst = 0;
  for (int64_t v = 0; v < n; ++v)
    for (int64_t j = 0; j < 8; ++j) {
      double sum = 0;
      for (size_t e = 0; e < src.size(); ++e) {
        if (dst[e] != v)
          continue;
        int64_t u = src[e];
        double h = 0;
        for (int64_t k = 0; k < 12; ++k)
          h += static_cast<double>(x[u * 12 + k]) * w[k * 8 + j];
        sum += h / std::sqrt(
                       std::max(1.0, static_cast<double>(graph.outDegree(u))));
      }
      double want =
          sum /
              std::sqrt(std::max(1.0, static_cast<double>(graph.inDegree(v)))) +
          b[j];
      worst = std::max(worst, std::fabs(out.values()[v * 8 + j] - want));
    }
  std::printf("cxx-app: GCNConv compiled by gnnc-cxx on %lld vertices, max "
              "|difference| from the formula %.3g\n",
              static_cast<long long>(n), worst);
  if (worst > 1e-5) {
    std::printf("cxx-app: FAILED\n");
    return 1;
  }
  std::printf("cxx-app: check passed\n");
  return 0;
}
