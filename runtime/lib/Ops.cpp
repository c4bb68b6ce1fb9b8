//===- Ops.cpp - Host operations called by generated C++ ------------------===//
//
// Part of gnnc. Each function follows the reference interpreter's loop
// order (compiler/lib/Interpreter/Interpreter.cpp); parallel loops only
// split independent outputs, so results do not depend on the thread count.
//
//===----------------------------------------------------------------------===//

#include "gnnc/runtime/Ops.h"

#include <algorithm>
#include <cblas.h>
#include <cmath>
#include <cstring>

using namespace gnnc::rt;

namespace {

/// Work below this many elements runs on one thread.
[[maybe_unused]] constexpr int64_t kParallelThreshold = 1 << 15;

const int64_t *ptrOf(const Graph &g, Side by) {
  return by == Side::Dst ? g.inPtr().data() : g.outPtr().data();
}
const int64_t *edgesOf(const Graph &g, Side by) {
  return by == Side::Dst ? g.inEdge().data() : g.outEdge().data();
}
int64_t countOf(const Graph &g, Side by) {
  return by == Side::Dst ? g.numDst() : g.numSrc();
}

template <typename Fn>
void unaryMap(const float *x, float *y, int64_t n, Fn fn) {
#pragma omp parallel for simd schedule(static) if (n > kParallelThreshold)
  for (int64_t i = 0; i < n; ++i)
    y[i] = fn(x[i]);
}

/// NumPy broadcasting over equal-rank shapes: the last axis is the inner
/// loop, the others are decomposed from a row number.
template <typename Fn>
void binaryMap(const float *a, const Shape &sa, const float *b, const Shape &sb,
               float *out, const Shape &so, Fn fn) {
  int rank = so.rank;
  int64_t n = so.numElements();
  if (n == 0)
    return;
  if (rank == 0) {
    out[0] = fn(a[0], b[0]);
    return;
  }
  // Fast path: equal shapes.
  bool sameA = true, sameB = true;
  for (int d = 0; d < rank; ++d) {
    sameA = sameA && sa.dims[d] == so.dims[d];
    sameB = sameB && sb.dims[d] == so.dims[d];
  }
  if (sameA && sameB) {
#pragma omp parallel for simd schedule(static) if (n > kParallelThreshold)
    for (int64_t i = 0; i < n; ++i)
      out[i] = fn(a[i], b[i]);
    return;
  }
  int64_t strideA[kMaxRank], strideB[kMaxRank];
  int64_t accA = 1, accB = 1;
  for (int d = rank - 1; d >= 0; --d) {
    strideA[d] = sa.dims[d] == 1 ? 0 : accA;
    strideB[d] = sb.dims[d] == 1 ? 0 : accB;
    accA *= sa.dims[d];
    accB *= sb.dims[d];
  }
  int64_t inner = so.dims[rank - 1];
  int64_t rows = n / inner;
  int64_t ia = strideA[rank - 1], ib = strideB[rank - 1];
#pragma omp parallel for schedule(static) if (n > kParallelThreshold)
  for (int64_t r = 0; r < rows; ++r) {
    int64_t offA = 0, offB = 0, rest = r;
    for (int d = rank - 2; d >= 0; --d) {
      int64_t index = rest % so.dims[d];
      rest /= so.dims[d];
      offA += index * strideA[d];
      offB += index * strideB[d];
    }
    const float *pa = a + offA;
    const float *pb = b + offB;
    float *po = out + r * inner;
    for (int64_t j = 0; j < inner; ++j)
      po[j] = fn(pa[j * ia], pb[j * ib]);
  }
}

template <typename Update, typename Finish>
void scatterWith(const Graph &g, Side by, const float *in, int64_t row,
                 float *out, Update update, Finish finish) {
  const int64_t *ptr = ptrOf(g, by);
  const int64_t *edges = edgesOf(g, by);
  int64_t count = countOf(g, by);
#pragma omp parallel for schedule(dynamic, 64) if (count * row > 4096)
  for (int64_t v = 0; v < count; ++v) {
    int64_t begin = ptr[v], end = ptr[v + 1];
    for (int64_t j = 0; j < row; ++j) {
      float acc = 0.0f;
      for (int64_t k = begin; k < end; ++k)
        acc = update(acc, in[edges[k] * row + j], k == begin);
      out[v * row + j] = end > begin ? finish(acc, v, j, begin, end) : acc;
    }
  }
}

template <typename Better>
void scatterSelect(const Graph &g, Side by, const float *in, int64_t row,
                   float *out, Better better) {
  const int64_t *ptr = ptrOf(g, by);
  const int64_t *edges = edgesOf(g, by);
  int64_t count = countOf(g, by);
  // Every edge belongs to exactly one group, so the groups write disjoint
  // rows of the mask.
  fill(out, g.numEdges() * row, 0.0f);
#pragma omp parallel for schedule(dynamic, 64) if (count * row > 4096)
  for (int64_t v = 0; v < count; ++v) {
    int64_t begin = ptr[v], end = ptr[v + 1];
    if (begin == end)
      continue;
    for (int64_t j = 0; j < row; ++j) {
      int64_t best = edges[begin];
      for (int64_t k = begin + 1; k < end; ++k)
        if (better(in[edges[k] * row + j], in[best * row + j]))
          best = edges[k];
      out[best * row + j] = 1.0f;
    }
  }
}

template <typename Update>
void readoutWith(const BatchedGraph &g, const float *in, int64_t n, int64_t row,
                 float *out, int64_t *count, Update update) {
  fill(out, g.numGraphs * row, 0.0f);
  std::fill(count, count + g.numGraphs, int64_t{0});
  for (int64_t v = 0; v < n; ++v) {
    int64_t b = g.graphOf[v];
    for (int64_t j = 0; j < row; ++j)
      out[b * row + j] = update(out[b * row + j], in[v * row + j], count[b]);
    ++count[b];
  }
}

template <typename Better>
void readoutSelect(const BatchedGraph &g, const float *in, int64_t n,
                   int64_t row, float *out, int64_t *chosen, Better better) {
  std::fill(chosen, chosen + g.numGraphs * row, int64_t{-1});
  for (int64_t v = 0; v < n; ++v)
    for (int64_t j = 0; j < row; ++j) {
      int64_t &c = chosen[g.graphOf[v] * row + j];
      if (c < 0 || better(in[v * row + j], in[c * row + j]))
        c = v;
    }
  fill(out, n * row, 0.0f);
  for (int64_t b = 0; b < g.numGraphs; ++b)
    for (int64_t j = 0; j < row; ++j)
      if (int64_t c = chosen[b * row + j]; c >= 0)
        out[c * row + j] = 1.0f;
}

template <typename Fn>
void reduceWith(const float *in, float *out, int64_t outer, int64_t len,
                int64_t inner, Fn fn) {
#pragma omp parallel for schedule(static) if (outer * len * inner >            \
                                                  kParallelThreshold)
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      float acc = 0.0f;
      for (int64_t j = 0; j < len; ++j)
        acc = fn(acc, in[(o * len + j) * inner + i], j == 0);
      out[o * inner + i] = acc;
    }
}

template <typename Better>
void reduceSelectWith(const float *in, float *out, int64_t outer, int64_t len,
                      int64_t inner, Better better) {
#pragma omp parallel for schedule(static) if (outer * len * inner >            \
                                                  kParallelThreshold)
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t best = 0;
      for (int64_t j = 1; j < len; ++j)
        if (better(in[(o * len + j) * inner + i],
                   in[(o * len + best) * inner + i]))
          best = j;
      for (int64_t j = 0; j < len; ++j)
        out[(o * len + j) * inner + i] = j == best ? 1.0f : 0.0f;
    }
}

template <bool Log>
void softmaxWith(const float *in, float *out, int64_t outer, int64_t len,
                 int64_t inner) {
  if (len == 0)
    return;
#pragma omp parallel for schedule(static) if (outer * len * inner >            \
                                                  kParallelThreshold)
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const float *x = in + o * len * inner + i;
      float *y = out + o * len * inner + i;
      float mx = x[0];
      for (int64_t j = 1; j < len; ++j)
        mx = std::max(mx, x[j * inner]);
      float sum = 0.0f;
      for (int64_t j = 0; j < len; ++j)
        sum += std::exp(x[j * inner] - mx);
      for (int64_t j = 0; j < len; ++j)
        y[j * inner] = Log ? x[j * inner] - mx - std::log(sum)
                           : std::exp(x[j * inner] - mx) / sum;
    }
}

Graph &emptyGraph() {
  static Graph empty;
  return empty;
}

} // namespace

//===----------------------------------------------------------------------===//
// Graph arguments
//===----------------------------------------------------------------------===//

const Graph *gnnc::rt::findRelation(const HeteroGraph &g, const char *name) {
  for (int64_t i = 0; i < g.numRelations; ++i) {
    const Relation &r = g.relations[i];
    if (r.name && r.graph && std::strcmp(r.name, name) == 0)
      return r.graph->numSrc() == g.numVertices &&
                     r.graph->numDst() == g.numVertices
                 ? r.graph
                 : nullptr;
  }
  return nullptr;
}

const Graph &gnnc::rt::relationOrEmpty(const HeteroGraph &g, const char *name) {
  const Graph *r = findRelation(g, name);
  return r ? *r : emptyGraph();
}

Status gnnc::rt::checkBatch(const BatchedGraph &g) {
  if (!g.graph)
    return Status::error("batched graph: no graph");
  if (g.numGraphs < 0)
    return Status::error("batched graph: negative graph count");
  if (g.graph->numDst() > 0 && !g.graphOf)
    return Status::error("batched graph: no graphOf array");
  for (int64_t v = 0; v < g.graph->numDst(); ++v)
    if (g.graphOf[v] < 0 || g.graphOf[v] >= g.numGraphs)
      return Status::error("batched graph: vertex " + std::to_string(v) +
                           " is in graph " + std::to_string(g.graphOf[v]) +
                           ", outside [0, " + std::to_string(g.numGraphs) +
                           ")");
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Dropout and graph facts
//===----------------------------------------------------------------------===//

void gnnc::rt::dropout(const float *in, float *out, int64_t n, double p,
                       uint64_t seed, bool training) {
  if (!training || p <= 0) {
    copy(in, out, n);
    return;
  }
#pragma omp parallel for simd schedule(static) if (n > kParallelThreshold)
  for (int64_t i = 0; i < n; ++i) {
    float keep = dropoutKeep(true, seed, static_cast<uint64_t>(i), p);
    out[i] = keep > 0.0f ? in[i] * keep : 0.0f;
  }
}

void gnnc::rt::inDegree(const Graph &g, float *out) {
  for (int64_t v = 0; v < g.numDst(); ++v)
    out[v] = static_cast<float>(g.inDegree(v));
}

void gnnc::rt::outDegree(const Graph &g, float *out) {
  for (int64_t u = 0; u < g.numSrc(); ++u)
    out[u] = static_cast<float>(g.outDegree(u));
}

void gnnc::rt::graphSizes(const BatchedGraph &g, float *out) {
  fill(out, g.numGraphs, 0.0f);
  for (int64_t v = 0; v < g.graph->numDst(); ++v)
    out[g.graphOf[v]] += 1.0f;
}

//===----------------------------------------------------------------------===//
// Elementwise maths
//===----------------------------------------------------------------------===//

void gnnc::rt::fill(float *out, int64_t n, float value) {
  std::fill(out, out + std::max<int64_t>(n, 0), value);
}

void gnnc::rt::copy(const float *in, float *out, int64_t n) {
  if (n > 0 && in != out)
    std::memcpy(out, in, static_cast<size_t>(n) * sizeof(float));
}

void gnnc::rt::neg(const float *x, float *y, int64_t n) {
  unaryMap(x, y, n, [](float v) { return -v; });
}
void gnnc::rt::exp(const float *x, float *y, int64_t n) {
  unaryMap(x, y, n, [](float v) { return std::exp(v); });
}
void gnnc::rt::log(const float *x, float *y, int64_t n) {
  unaryMap(x, y, n, [](float v) { return std::log(v); });
}
void gnnc::rt::sqrt(const float *x, float *y, int64_t n) {
  unaryMap(x, y, n, [](float v) { return std::sqrt(v); });
}
void gnnc::rt::rsqrt(const float *x, float *y, int64_t n) {
  unaryMap(x, y, n, [](float v) { return 1.0f / std::sqrt(v); });
}
void gnnc::rt::abs(const float *x, float *y, int64_t n) {
  unaryMap(x, y, n, [](float v) { return std::abs(v); });
}
void gnnc::rt::relu(const float *x, float *y, int64_t n) {
  unaryMap(x, y, n, [](float v) { return v > 0.0f ? v : 0.0f; });
}
void gnnc::rt::sigmoid(const float *x, float *y, int64_t n) {
  unaryMap(x, y, n, [](float v) { return 1.0f / (1.0f + std::exp(-v)); });
}
void gnnc::rt::tanh(const float *x, float *y, int64_t n) {
  unaryMap(x, y, n, [](float v) { return std::tanh(v); });
}
void gnnc::rt::gelu(const float *x, float *y, int64_t n) {
  unaryMap(x, y, n, [](float v) {
    return 0.5f * v * (1.0f + std::erf(v / std::sqrt(2.0f)));
  });
}
void gnnc::rt::erf(const float *x, float *y, int64_t n) {
  unaryMap(x, y, n, [](float v) { return std::erf(v); });
}
void gnnc::rt::elu(const float *x, float *y, int64_t n, float alpha) {
  unaryMap(x, y, n, [alpha](float v) {
    return v > 0.0f ? v : alpha * (std::exp(v) - 1.0f);
  });
}
void gnnc::rt::leakyRelu(const float *x, float *y, int64_t n, float alpha) {
  unaryMap(x, y, n, [alpha](float v) { return v > 0.0f ? v : alpha * v; });
}

void gnnc::rt::add(const float *a, const Shape &sa, const float *b,
                   const Shape &sb, float *out, const Shape &so) {
  binaryMap(a, sa, b, sb, out, so, [](float x, float y) { return x + y; });
}
void gnnc::rt::sub(const float *a, const Shape &sa, const float *b,
                   const Shape &sb, float *out, const Shape &so) {
  binaryMap(a, sa, b, sb, out, so, [](float x, float y) { return x - y; });
}
void gnnc::rt::mul(const float *a, const Shape &sa, const float *b,
                   const Shape &sb, float *out, const Shape &so) {
  binaryMap(a, sa, b, sb, out, so, [](float x, float y) { return x * y; });
}
void gnnc::rt::div(const float *a, const Shape &sa, const float *b,
                   const Shape &sb, float *out, const Shape &so) {
  binaryMap(a, sa, b, sb, out, so, [](float x, float y) { return x / y; });
}
void gnnc::rt::max(const float *a, const Shape &sa, const float *b,
                   const Shape &sb, float *out, const Shape &so) {
  binaryMap(a, sa, b, sb, out, so,
            [](float x, float y) { return std::max(x, y); });
}
void gnnc::rt::min(const float *a, const Shape &sa, const float *b,
                   const Shape &sb, float *out, const Shape &so) {
  binaryMap(a, sa, b, sb, out, so,
            [](float x, float y) { return std::min(x, y); });
}
void gnnc::rt::pow(const float *a, const Shape &sa, const float *b,
                   const Shape &sb, float *out, const Shape &so) {
  binaryMap(a, sa, b, sb, out, so,
            [](float x, float y) { return std::pow(x, y); });
}
void gnnc::rt::gt(const float *a, const Shape &sa, const float *b,
                  const Shape &sb, float *out, const Shape &so) {
  binaryMap(a, sa, b, sb, out, so,
            [](float x, float y) { return x > y ? 1.0f : 0.0f; });
}
void gnnc::rt::broadcastTo(const float *in, const Shape &si, float *out,
                           const Shape &so) {
  binaryMap(in, si, in, si, out, so, [](float x, float) { return x; });
}

//===----------------------------------------------------------------------===//
// Dense operations
//===----------------------------------------------------------------------===//

void gnnc::rt::matmul(const float *a, const float *w, float *out, int64_t rows,
                      int64_t k, int64_t n) {
  if (rows <= 0 || n <= 0)
    return;
  if (k <= 0) {
    fill(out, rows * n, 0.0f);
    return;
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(rows),
              static_cast<int>(n), static_cast<int>(k), 1.0f, a,
              static_cast<int>(k), w, static_cast<int>(n), 0.0f, out,
              static_cast<int>(n));
}

void gnnc::rt::reduceSum(const float *in, float *out, int64_t outer,
                         int64_t len, int64_t inner) {
  reduceWith(in, out, outer, len, inner,
             [](float acc, float x, bool) { return acc + x; });
}
void gnnc::rt::reduceMean(const float *in, float *out, int64_t outer,
                          int64_t len, int64_t inner) {
  reduceSum(in, out, outer, len, inner);
  if (len > 0)
    for (int64_t i = 0; i < outer * inner; ++i)
      out[i] /= static_cast<float>(len);
}
void gnnc::rt::reduceMax(const float *in, float *out, int64_t outer,
                         int64_t len, int64_t inner) {
  reduceWith(in, out, outer, len, inner, [](float acc, float x, bool first) {
    return first || x > acc ? x : acc;
  });
}
void gnnc::rt::reduceMin(const float *in, float *out, int64_t outer,
                         int64_t len, int64_t inner) {
  reduceWith(in, out, outer, len, inner, [](float acc, float x, bool first) {
    return first || x < acc ? x : acc;
  });
}
void gnnc::rt::reduceSelectMax(const float *in, float *out, int64_t outer,
                               int64_t len, int64_t inner) {
  reduceSelectWith(in, out, outer, len, inner,
                   [](float x, float best) { return x > best; });
}
void gnnc::rt::reduceSelectMin(const float *in, float *out, int64_t outer,
                               int64_t len, int64_t inner) {
  reduceSelectWith(in, out, outer, len, inner,
                   [](float x, float best) { return x < best; });
}
void gnnc::rt::softmax(const float *in, float *out, int64_t outer, int64_t len,
                       int64_t inner) {
  softmaxWith<false>(in, out, outer, len, inner);
}
void gnnc::rt::logSoftmax(const float *in, float *out, int64_t outer,
                          int64_t len, int64_t inner) {
  softmaxWith<true>(in, out, outer, len, inner);
}

void gnnc::rt::copyRows(const float *in, int64_t inStride, float *out,
                        int64_t outStride, int64_t rows, int64_t width) {
  if (width <= 0)
    return;
#pragma omp parallel for schedule(static) if (rows * width > kParallelThreshold)
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy(out + r * outStride, in + r * inStride,
                static_cast<size_t>(width) * sizeof(float));
}

void gnnc::rt::transpose(const float *in, float *out, int64_t batch, int64_t a,
                         int64_t b) {
#pragma omp parallel for schedule(static) if (batch * a * b >                  \
                                                  kParallelThreshold)
  for (int64_t r = 0; r < batch; ++r)
    for (int64_t i = 0; i < a; ++i)
      for (int64_t j = 0; j < b; ++j)
        out[r * a * b + j * a + i] = in[r * a * b + i * b + j];
}

//===----------------------------------------------------------------------===//
// Graph operations
//===----------------------------------------------------------------------===//

void gnnc::rt::gather(const int64_t *index, int64_t count, const float *in,
                      int64_t row, float *out) {
#pragma omp parallel for schedule(static) if (count * row > kParallelThreshold)
  for (int64_t e = 0; e < count; ++e)
    for (int64_t j = 0; j < row; ++j)
      out[e * row + j] = in[index[e] * row + j];
}

void gnnc::rt::splat(const float *row, int64_t rowSize, int64_t count,
                     float *out) {
  for (int64_t i = 0; i < count; ++i)
    for (int64_t j = 0; j < rowSize; ++j)
      out[i * rowSize + j] = row[j];
}

void gnnc::rt::scatterSum(const Graph &g, Side by, const float *in, int64_t row,
                          float *out) {
  scatterWith(
      g, by, in, row, out, [](float acc, float x, bool) { return acc + x; },
      [](float acc, int64_t, int64_t, int64_t, int64_t) { return acc; });
}
void gnnc::rt::scatterMean(const Graph &g, Side by, const float *in,
                           int64_t row, float *out) {
  scatterWith(
      g, by, in, row, out, [](float acc, float x, bool) { return acc + x; },
      [](float acc, int64_t, int64_t, int64_t begin, int64_t end) {
        return acc / static_cast<float>(end - begin);
      });
}
void gnnc::rt::scatterMax(const Graph &g, Side by, const float *in, int64_t row,
                          float *out) {
  scatterWith(
      g, by, in, row, out,
      [](float acc, float x, bool first) { return first || x > acc ? x : acc; },
      [](float acc, int64_t, int64_t, int64_t, int64_t) { return acc; });
}
void gnnc::rt::scatterMin(const Graph &g, Side by, const float *in, int64_t row,
                          float *out) {
  scatterWith(
      g, by, in, row, out,
      [](float acc, float x, bool first) { return first || x < acc ? x : acc; },
      [](float acc, int64_t, int64_t, int64_t, int64_t) { return acc; });
}
void gnnc::rt::scatterLogSumExp(const Graph &g, Side by, const float *in,
                                int64_t row, float *out) {
  const int64_t *edges = edgesOf(g, by);
  scatterWith(
      g, by, in, row, out,
      [](float acc, float x, bool first) { return first || x > acc ? x : acc; },
      [&](float mx, int64_t, int64_t j, int64_t begin, int64_t end) {
        float sum = 0.0f;
        for (int64_t k = begin; k < end; ++k)
          sum += std::exp(in[edges[k] * row + j] - mx);
        return mx + std::log(sum);
      });
}

void gnnc::rt::scatterSelectMax(const Graph &g, Side by, const float *in,
                                int64_t row, float *out) {
  scatterSelect(g, by, in, row, out,
                [](float x, float best) { return x > best; });
}
void gnnc::rt::scatterSelectMin(const Graph &g, Side by, const float *in,
                                int64_t row, float *out) {
  scatterSelect(g, by, in, row, out,
                [](float x, float best) { return x < best; });
}

void gnnc::rt::edgeSoftmax(const Graph &g, Side by, const float *in,
                           int64_t row, float *out) {
  const int64_t *ptr = ptrOf(g, by);
  const int64_t *edges = edgesOf(g, by);
  int64_t count = countOf(g, by);
  // Edges of no group (none: every edge has both ends) would keep `in`.
  copy(in, out, g.numEdges() * row);
#pragma omp parallel for schedule(dynamic, 64) if (count * row > 4096)
  for (int64_t v = 0; v < count; ++v) {
    int64_t begin = ptr[v], end = ptr[v + 1];
    if (begin == end)
      continue;
    for (int64_t j = 0; j < row; ++j) {
      float mx = in[edges[begin] * row + j];
      for (int64_t k = begin; k < end; ++k)
        mx = std::max(mx, in[edges[k] * row + j]);
      float sum = 0.0f;
      for (int64_t k = begin; k < end; ++k)
        sum += std::exp(in[edges[k] * row + j] - mx);
      for (int64_t k = begin; k < end; ++k) {
        float &x = out[edges[k] * row + j];
        x = std::exp(in[edges[k] * row + j] - mx) / sum;
      }
    }
  }
}

void gnnc::rt::readoutSum(const BatchedGraph &g, const float *in, int64_t n,
                          int64_t row, float *out, int64_t *scratch) {
  readoutWith(g, in, n, row, out, scratch,
              [](float acc, float x, int64_t) { return acc + x; });
}
void gnnc::rt::readoutMean(const BatchedGraph &g, const float *in, int64_t n,
                           int64_t row, float *out, int64_t *scratch) {
  readoutSum(g, in, n, row, out, scratch);
  for (int64_t b = 0; b < g.numGraphs; ++b)
    for (int64_t j = 0; j < row && scratch[b]; ++j)
      out[b * row + j] /= static_cast<float>(scratch[b]);
}
void gnnc::rt::readoutMax(const BatchedGraph &g, const float *in, int64_t n,
                          int64_t row, float *out, int64_t *scratch) {
  readoutWith(g, in, n, row, out, scratch,
              [](float acc, float x, int64_t seen) {
                return seen == 0 ? x : std::max(acc, x);
              });
}
void gnnc::rt::readoutMin(const BatchedGraph &g, const float *in, int64_t n,
                          int64_t row, float *out, int64_t *scratch) {
  readoutWith(g, in, n, row, out, scratch,
              [](float acc, float x, int64_t seen) {
                return seen == 0 ? x : std::min(acc, x);
              });
}
void gnnc::rt::readoutSelectMax(const BatchedGraph &g, const float *in,
                                int64_t n, int64_t row, float *out,
                                int64_t *scratch) {
  readoutSelect(g, in, n, row, out, scratch,
                [](float x, float best) { return x > best; });
}
void gnnc::rt::readoutSelectMin(const BatchedGraph &g, const float *in,
                                int64_t n, int64_t row, float *out,
                                int64_t *scratch) {
  readoutSelect(g, in, n, row, out, scratch,
                [](float x, float best) { return x < best; });
}
void gnnc::rt::broadcastGraphs(const BatchedGraph &g, const float *in,
                               int64_t n, int64_t row, float *out) {
#pragma omp parallel for schedule(static) if (n * row > kParallelThreshold)
  for (int64_t v = 0; v < n; ++v)
    for (int64_t j = 0; j < row; ++j)
      out[v * row + j] = in[g.graphOf[v] * row + j];
}
