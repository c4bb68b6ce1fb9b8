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
#include <cstdint>
#include <cstring>
#include <limits>

#ifdef _OPENMP
#include <omp.h>
#endif

using namespace gnnc::rt;

// The library is built for the baseline instruction set of its target, while
// a few loops here are compute-bound (the dropout hash, exponentials): on
// x86-64 they are compiled three times (AVX-512, AVX2 + FMA, baseline) and
// the loader picks the best the machine runs (an ifunc, GCC's and clang's
// target_clones). Not under the sanitizers, whose runtime starts after the
// ifunc resolvers run.
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer) ||     \
    __has_feature(thread_sanitizer)
#define GNNC_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define GNNC_SANITIZED 1
#endif
#if defined(__x86_64__) && defined(__ELF__) && defined(__has_attribute) &&     \
    !defined(GNNC_SANITIZED)
#if __has_attribute(target_clones)
#define GNNC_MULTIVERSION                                                      \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#endif
#endif
#ifndef GNNC_MULTIVERSION
#define GNNC_MULTIVERSION
#endif

namespace {

/// Work below this many elements runs on one thread.
[[maybe_unused]] constexpr int64_t kParallelThreshold = 1 << 15;

/// How parallelFor splits its range over OpenMP's threads.
enum class Schedule {
  Blocks,  ///< equal blocks, several per thread, taken in turn
  Simd,    ///< the same, each block's loop vectorised
  Dynamic, ///< chunks of 64 taken in turn (rows of uneven cost: edges)
  Tiles,   ///< each iteration taken in turn (a few large tiles of uneven cost)
};

/// Blocks and Simd cut the range into up to this many blocks per thread,
/// of at least kMinBlockLength iterations each. A thread takes the next
/// block when it is done with one, so a thread that shares its core with
/// another process for a while takes fewer of them and the others do the
/// rest, where one block per thread made the loop as slow as its slowest
/// thread. Smaller blocks cost more than they save (GAT on Cora, 2
/// threads: 5% slower with blocks of 2,048 elements).
[[maybe_unused]] constexpr int64_t kBlocksPerThread = 4;
[[maybe_unused]] constexpr int64_t kMinBlockLength = 1 << 16;

/// Calls body(i) for i in [0, n), on teamSize() OpenMP threads when
/// `parallel` holds and that is more than one; otherwise on this thread,
/// without entering a parallel region: libgomp allocates and frees a team for
/// every region that runs on one thread, and a training step with static shapes
/// allocates nothing (tests/Target/FixedSize/NoAllocTest.cpp).
template <Schedule S = Schedule::Blocks, typename Body>
inline void parallelFor(int64_t n, bool parallel, Body &&body) {
  if constexpr (S == Schedule::Dynamic) {
    if (parallel) {
      forVertices(n, body);
      return;
    }
  }
#ifdef _OPENMP
  int threads = parallel && S != Schedule::Dynamic ? teamSize() : 1;
  if (threads > 1) {
    int64_t blocks = S == Schedule::Tiles
                         ? n
                         : std::clamp<int64_t>(n / kMinBlockLength, threads,
                                               threads * kBlocksPerThread);
    blocks = std::min(blocks, n);
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
    for (int64_t b = 0; b < blocks; ++b) {
      int64_t lo = n * b / blocks, hi = n * (b + 1) / blocks;
      if constexpr (S == Schedule::Simd) {
#pragma omp simd
        for (int64_t i = lo; i < hi; ++i)
          body(i);
      } else {
        for (int64_t i = lo; i < hi; ++i)
          body(i);
      }
    }
    return;
  }
#endif
  (void)parallel;
  if constexpr (S == Schedule::Simd) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i)
      body(i);
  } else {
    for (int64_t i = 0; i < n; ++i)
      body(i);
  }
}

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
  parallelFor<Schedule::Simd>(n, n > kParallelThreshold,
                              [&](int64_t i) { y[i] = fn(x[i]); });
}

/// torch.maximum and torch.minimum: a NaN on either side gives a NaN;
/// otherwise std::max and std::min (`x` on a tie, so max(-0, +0) is -0).
inline float maxOf(float x, float y) { return x < y || y != y ? y : x; }
inline float minOf(float x, float y) { return y < x || y != y ? y : x; }

/// The elementwise functions built on e^x (rt::simdExp).
enum class ExpFn { Exp, Sigmoid, Elu };

GNNC_MULTIVERSION
void expFamilyRange(const float *x, float *y, int64_t n, ExpFn fn,
                    float alpha) {
  switch (fn) {
  case ExpFn::Exp:
#pragma omp simd
    for (int64_t i = 0; i < n; ++i)
      y[i] = simdExp(x[i]);
    return;
  case ExpFn::Sigmoid:
#pragma omp simd
    for (int64_t i = 0; i < n; ++i)
      y[i] = 1.0f / (1.0f + simdExp(-x[i]));
    return;
  case ExpFn::Elu:
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) {
      float v = x[i];
      float negative = alpha * (simdExp(v) - 1.0f);
      // A NaN takes the second branch, where it stays a NaN.
      y[i] = v > 0.0f ? v : negative;
    }
    return;
  }
}

void expFamily(const float *x, float *y, int64_t n, ExpFn fn, float alpha) {
  constexpr int64_t kChunk = 1 << 14;
  int64_t chunks = (n + kChunk - 1) / kChunk;
  parallelFor(chunks, n > kParallelThreshold, [&](int64_t c) {
    int64_t begin = c * kChunk;
    expFamilyRange(x + begin, y + begin, std::min(kChunk, n - begin), fn,
                   alpha);
  });
}

/// One row of a broadcast binary map: out[j] = fn(a[j * ia], b[j * ib]),
/// with each stride 0 or 1 (a constant in each branch, so that the loop
/// vectorises); `out` may be `a` or `b` (in place).
template <typename Fn>
inline void binaryRow(const float *a, int64_t ia, const float *b, int64_t ib,
                      float *out, int64_t len, Fn fn) {
  if (ia == 1 && ib == 1) {
#pragma omp simd
    for (int64_t j = 0; j < len; ++j)
      out[j] = fn(a[j], b[j]);
  } else if (ia == 1 && ib == 0) {
    const float y = b[0];
#pragma omp simd
    for (int64_t j = 0; j < len; ++j)
      out[j] = fn(a[j], y);
  } else if (ia == 0 && ib == 1) {
    const float x = a[0];
#pragma omp simd
    for (int64_t j = 0; j < len; ++j)
      out[j] = fn(x, b[j]);
  } else {
    for (int64_t j = 0; j < len; ++j)
      out[j] = fn(a[j * ia], b[j * ib]);
  }
}

/// NumPy broadcasting over equal-rank shapes, planned once. Axes of size 1
/// are dropped and neighbouring axes that both operands walk alike (both
/// broadcast, or both contiguous across them) are merged, so that
/// `[N, 8, 8] * [1, 8, 8]` is N rows of 64; the last merged axis is the
/// inner loop (a row), and the others are counted like an odometer.
class BroadcastPlan {
public:
  BroadcastPlan(const Shape &sa, const Shape &sb, const Shape &so) {
    int rank = so.rank;
    int64_t strideA[kMaxRank], strideB[kMaxRank];
    int64_t accA = 1, accB = 1;
    for (int d = rank - 1; d >= 0; --d) {
      strideA[d] = sa.dims[d] == 1 ? 0 : accA;
      strideB[d] = sb.dims[d] == 1 ? 0 : accB;
      accA *= sa.dims[d];
      accB *= sb.dims[d];
    }
    for (int d = 0; d < rank; ++d) {
      if (so.dims[d] == 1)
        continue;
      if (merged > 0 && stA[merged - 1] == strideA[d] * so.dims[d] &&
          stB[merged - 1] == strideB[d] * so.dims[d]) {
        dims[merged - 1] *= so.dims[d];
        stA[merged - 1] = strideA[d];
        stB[merged - 1] = strideB[d];
        continue;
      }
      dims[merged] = so.dims[d];
      stA[merged] = strideA[d];
      stB[merged] = strideB[d];
      ++merged;
    }
  }

  /// The length of a row and the operands' strides along it (0 or 1 each
  /// when the shapes broadcast; one row of one element when every axis is
  /// 1).
  int64_t rowLength() const { return merged ? dims[merged - 1] : 1; }
  int64_t rowStrideA() const { return merged ? stA[merged - 1] : 0; }
  int64_t rowStrideB() const { return merged ? stB[merged - 1] : 0; }

  /// A position among the rows: the index on every outer axis and the
  /// operands' offsets of the row's first element.
  struct Cursor {
    int64_t index[kMaxRank] = {};
    int64_t offA = 0, offB = 0;
  };
  /// The cursor of row `r`.
  Cursor rowAt(int64_t r) const {
    Cursor c;
    for (int d = merged - 2; d >= 0; --d) {
      c.index[d] = r % dims[d];
      r /= dims[d];
      c.offA += c.index[d] * stA[d];
      c.offB += c.index[d] * stB[d];
    }
    return c;
  }
  /// Moves `c` to the next row.
  void next(Cursor &c) const {
    for (int d = merged - 2; d >= 0; --d) {
      c.offA += stA[d];
      c.offB += stB[d];
      if (++c.index[d] < dims[d])
        return;
      c.offA -= stA[d] * dims[d];
      c.offB -= stB[d] * dims[d];
      c.index[d] = 0;
    }
  }

  /// `out[k] = fn(a, b)` at flat elements [first, first + count) of the
  /// result, in order, whatever rows they start and end in.
  template <typename Fn>
  void apply(const float *a, const float *b, int64_t first, int64_t count,
             float *out, Fn fn) const {
    const int64_t len = rowLength(), ia = rowStrideA(), ib = rowStrideB();
    Cursor c = rowAt(first / len);
    int64_t at = first % len;
    while (count > 0) {
      int64_t n = std::min(len - at, count);
      binaryRow(a + c.offA + at * ia, ia, b + c.offB + at * ib, ib, out, n, fn);
      out += n;
      count -= n;
      at = 0;
      next(c);
    }
  }

private:
  int merged = 0;
  int64_t dims[kMaxRank] = {}, stA[kMaxRank] = {}, stB[kMaxRank] = {};
};

/// `out = fn(a, b)` with NumPy broadcasting (BroadcastPlan), in blocks of
/// rows over the threads.
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
    parallelFor<Schedule::Simd>(n, n > kParallelThreshold,
                                [&](int64_t i) { out[i] = fn(a[i], b[i]); });
    return;
  }
  const BroadcastPlan plan(sa, sb, so);
  const int64_t inner = plan.rowLength();
  const int64_t ia = plan.rowStrideA(), ib = plan.rowStrideB();
  const int64_t rows = n / inner;
  constexpr int64_t kRowsPerBlock = 256;
  const int64_t blocks = (rows + kRowsPerBlock - 1) / kRowsPerBlock;
  parallelFor(blocks, n > kParallelThreshold, [&](int64_t blk) {
    int64_t first = blk * kRowsPerBlock;
    int64_t last = std::min(rows, first + kRowsPerBlock);
    BroadcastPlan::Cursor c = plan.rowAt(first);
    for (int64_t r = first; r < last; ++r) {
      binaryRow(a + c.offA, ia, b + c.offB, ib, out + r * inner, inner, fn);
      plan.next(c);
    }
  });
}

/// The graph operations below walk a vertex's edges once per block of this
/// many columns of the rows, with one accumulator per column: each edge's
/// row is read a block at a time rather than one column per walk (the
/// order of the operations on every element stays the same: edges in order).
constexpr int64_t kColumns = 64;

template <typename Update, typename Finish>
void scatterWith(const Graph &g, Side by, const float *in, int64_t row,
                 float *out, Update update, Finish finish) {
  const int64_t *ptr = ptrOf(g, by);
  const int64_t *edges = edgesOf(g, by);
  int64_t count = countOf(g, by);
  parallelFor<Schedule::Dynamic>(count, count * row > 4096, [&](int64_t v) {
    int64_t begin = ptr[v], end = ptr[v + 1];
    for (int64_t j0 = 0; j0 < row; j0 += kColumns) {
      const int64_t width = std::min(kColumns, row - j0);
      float acc[kColumns];
      for (int64_t j = 0; j < width; ++j)
        acc[j] = 0.0f;
      for (int64_t k = begin; k < end; ++k) {
        const float *x = in + edges[k] * row + j0;
        for (int64_t j = 0; j < width; ++j)
          acc[j] = update(acc[j], x[j], k == begin);
      }
      for (int64_t j = 0; j < width; ++j)
        out[v * row + j0 + j] =
            end > begin ? finish(acc[j], v, j0 + j, begin, end) : acc[j];
    }
  });
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
  parallelFor<Schedule::Dynamic>(count, count * row > 4096, [&](int64_t v) {
    int64_t begin = ptr[v], end = ptr[v + 1];
    if (begin == end)
      return;
    for (int64_t j0 = 0; j0 < row; j0 += kColumns) {
      const int64_t width = std::min(kColumns, row - j0);
      int64_t best[kColumns];
      float bestValue[kColumns];
      const float *first = in + edges[begin] * row + j0;
      for (int64_t j = 0; j < width; ++j) {
        best[j] = edges[begin];
        bestValue[j] = first[j];
      }
      for (int64_t k = begin + 1; k < end; ++k) {
        const float *x = in + edges[k] * row + j0;
        for (int64_t j = 0; j < width; ++j)
          if (better(x[j], bestValue[j])) {
            best[j] = edges[k];
            bestValue[j] = x[j];
          }
      }
      for (int64_t j = 0; j < width; ++j)
        out[best[j] * row + j0 + j] = 1.0f;
    }
  });
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
  parallelFor(outer, outer * len * inner > kParallelThreshold, [&](int64_t o) {
    for (int64_t i = 0; i < inner; ++i) {
      float acc = 0.0f;
      for (int64_t j = 0; j < len; ++j)
        acc = fn(acc, in[(o * len + j) * inner + i], j == 0);
      out[o * inner + i] = acc;
    }
  });
}

template <typename Better>
void reduceSelectWith(const float *in, float *out, int64_t outer, int64_t len,
                      int64_t inner, Better better) {
  parallelFor(outer, outer * len * inner > kParallelThreshold, [&](int64_t o) {
    for (int64_t i = 0; i < inner; ++i) {
      int64_t best = 0;
      for (int64_t j = 1; j < len; ++j)
        if (better(in[(o * len + j) * inner + i],
                   in[(o * len + best) * inner + i]))
          best = j;
      for (int64_t j = 0; j < len; ++j)
        out[(o * len + j) * inner + i] = j == best ? 1.0f : 0.0f;
    }
  });
}

template <bool Log>
void softmaxWith(const float *in, float *out, int64_t outer, int64_t len,
                 int64_t inner) {
  if (len == 0)
    return;
  parallelFor(outer, outer * len * inner > kParallelThreshold, [&](int64_t o) {
    for (int64_t i = 0; i < inner; ++i) {
      const float *x = in + o * len * inner + i;
      float *y = out + o * len * inner + i;
      float mx = x[0];
      for (int64_t j = 1; j < len; ++j)
        mx = std::max(mx, x[j * inner]);
      float sum = 0.0f;
      for (int64_t j = 0; j < len; ++j)
        sum += simdExp(x[j * inner] - mx);
      for (int64_t j = 0; j < len; ++j)
        y[j * inner] = Log ? x[j * inner] - mx - std::log(sum)
                           : simdExp(x[j * inner] - mx) / sum;
    }
  });
}

} // namespace

//===----------------------------------------------------------------------===//
// Dropout and graph facts
//===----------------------------------------------------------------------===//

namespace {

/// Element i of a dropout: in * scale when kept, else +0.0, selected with a
/// bit mask rather than a branch (a kept element is a coin toss, which a
/// branch predictor cannot learn). Same bits as dropoutKept(...) ? in * scale
/// : 0.0f.
inline float droppedElement(float in, uint64_t seed, uint64_t index,
                            uint64_t threshold, float scale) {
  uint32_t keep =
      0u - static_cast<uint32_t>(dropoutKept(seed, index, threshold));
  float v = in * scale;
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  bits &= keep;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

/// Elements [begin, begin + n) of a dropout: kept elements are scaled, the
/// others are 0. The hash is 64-bit integer arithmetic, which the AVX2 and
/// AVX-512 clones vectorise (the loops call inline functions only: a lambda
/// would be compiled for the default target and not vectorise in a clone).
/// A block of elements that are all +0.0 (the bulk of sparse input
/// features, such as bag-of-words rows) gives +0.0 whatever the mask, so its
/// hashes are skipped.
GNNC_MULTIVERSION
void dropoutRange(const float *in, float *out, int64_t begin, int64_t n,
                  uint64_t seed, uint64_t threshold, float scale) {
  constexpr int64_t kBlock = 16;
  const int64_t blocks = n / kBlock * kBlock;
  const uint64_t first = static_cast<uint64_t>(begin);
  for (int64_t b = 0; b < blocks; b += kBlock) {
    uint32_t bits = 0;
#pragma omp simd reduction(| : bits)
    for (int64_t i = 0; i < kBlock; ++i) {
      uint32_t x;
      std::memcpy(&x, in + b + i, sizeof(float));
      bits |= x;
    }
    if (bits == 0) {
#pragma omp simd
      for (int64_t i = 0; i < kBlock; ++i)
        out[b + i] = 0.0f;
      continue;
    }
#pragma omp simd
    for (int64_t i = b; i < b + kBlock; ++i)
      out[i] = droppedElement(in[i], seed, first + static_cast<uint64_t>(i),
                              threshold, scale);
  }
  for (int64_t i = blocks; i < n; ++i)
    out[i] = droppedElement(in[i], seed, first + static_cast<uint64_t>(i),
                            threshold, scale);
}

} // namespace

Status gnnc::rt::updateBatchStats(const float *x, int64_t rows, int64_t cols,
                                  float *runningMean, float *runningVar,
                                  double momentum, bool training) {
  if (!training)
    return Status::success();
  if (rows < 2)
    return Status::error("batch_norm needs at least 2 rows in training, to "
                         "estimate the variance; got " +
                         std::to_string(rows));
  std::vector<double> sum(cols, 0.0), squares(cols, 0.0);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      sum[j] += x[i * cols + j];
  for (int64_t j = 0; j < cols; ++j)
    sum[j] /= static_cast<double>(rows);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      double d = x[i * cols + j] - sum[j];
      squares[j] += d * d;
    }
  for (int64_t j = 0; j < cols; ++j) {
    double var = squares[j] / static_cast<double>(rows - 1);
    runningMean[j] =
        static_cast<float>((1 - momentum) * runningMean[j] + momentum * sum[j]);
    runningVar[j] =
        static_cast<float>((1 - momentum) * runningVar[j] + momentum * var);
  }
  return Status::success();
}

void gnnc::rt::dropout(const float *in, float *out, int64_t n, double p,
                       uint64_t seed, bool training) {
  if (!training || p <= 0) {
    copy(in, out, n);
    return;
  }
  // dropoutKeep's test and scale, computed once.
  const uint64_t threshold = dropoutThreshold(p);
  const float scale = dropoutScale(p);
  constexpr int64_t kChunk = 1 << 14;
  int64_t chunks = (n + kChunk - 1) / kChunk;
  parallelFor(chunks, n > kParallelThreshold, [&](int64_t c) {
    int64_t begin = c * kChunk;
    dropoutRange(in + begin, out + begin, begin, std::min(kChunk, n - begin),
                 seed, threshold, scale);
  });
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
  expFamily(x, y, n, ExpFn::Exp, 0.0f);
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
  // A NaN is not <= 0 and passes through; -0 becomes +0.
  unaryMap(x, y, n, [](float v) { return v <= 0.0f ? 0.0f : v; });
}
void gnnc::rt::sigmoid(const float *x, float *y, int64_t n) {
  expFamily(x, y, n, ExpFn::Sigmoid, 0.0f);
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
void gnnc::rt::sin(const float *x, float *y, int64_t n) {
  unaryMap(x, y, n, [](float v) { return std::sin(v); });
}
void gnnc::rt::cos(const float *x, float *y, int64_t n) {
  unaryMap(x, y, n, [](float v) { return std::cos(v); });
}
void gnnc::rt::elu(const float *x, float *y, int64_t n, float alpha) {
  expFamily(x, y, n, ExpFn::Elu, alpha);
}
void gnnc::rt::leakyRelu(const float *x, float *y, int64_t n, float alpha) {
  // alpha * NaN is a NaN.
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
void gnnc::rt::addMul(const float *x, const Shape &sx, const float *y,
                      const Shape &sy, const float *z, const Shape &sz,
                      float *out, const Shape &so) {
  const int64_t n = so.numElements();
  if (n == 0)
    return;
  // In blocks: the products into one buffer and x, broadcast, into another
  // (so that no product is contracted into a fused multiply-add), then
  // their sums.
  const BroadcastPlan products(sy, sz, so), addends(sx, sx, so);
  constexpr int64_t kBlock = 1024;
  const auto times = [](float a, float b) { return a * b; };
  const auto first = [](float a, float) { return a; };
  parallelFor((n + kBlock - 1) / kBlock, n > kParallelThreshold,
              [&](int64_t blk) {
                float p[kBlock], a[kBlock];
                const int64_t begin = blk * kBlock;
                const int64_t count = std::min(kBlock, n - begin);
                products.apply(y, z, begin, count, p, times);
                addends.apply(x, x, begin, count, a, first);
                float *__restrict o = out + begin;
#pragma omp simd
                for (int64_t k = 0; k < count; ++k)
                  o[k] = a[k] + p[k];
              });
}
void gnnc::rt::div(const float *a, const Shape &sa, const float *b,
                   const Shape &sb, float *out, const Shape &so) {
  binaryMap(a, sa, b, sb, out, so, [](float x, float y) { return x / y; });
}
void gnnc::rt::max(const float *a, const Shape &sa, const float *b,
                   const Shape &sb, float *out, const Shape &so) {
  binaryMap(a, sa, b, sb, out, so,
            [](float x, float y) { return maxOf(x, y); });
}
void gnnc::rt::min(const float *a, const Shape &sa, const float *b,
                   const Shape &sb, float *out, const Shape &so) {
  binaryMap(a, sa, b, sb, out, so,
            [](float x, float y) { return minOf(x, y); });
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
void gnnc::rt::ge(const float *a, const Shape &sa, const float *b,
                  const Shape &sb, float *out, const Shape &so) {
  binaryMap(a, sa, b, sb, out, so,
            [](float x, float y) { return x >= y ? 1.0f : 0.0f; });
}
void gnnc::rt::eq(const float *a, const Shape &sa, const float *b,
                  const Shape &sb, float *out, const Shape &so) {
  binaryMap(a, sa, b, sb, out, so,
            [](float x, float y) { return x == y ? 1.0f : 0.0f; });
}
void gnnc::rt::ne(const float *a, const Shape &sa, const float *b,
                  const Shape &sb, float *out, const Shape &so) {
  binaryMap(a, sa, b, sb, out, so,
            [](float x, float y) { return x != y ? 1.0f : 0.0f; });
}
void gnnc::rt::mask(const float *a, const Shape &sa, const float *b,
                    const Shape &sb, float *out, const Shape &so) {
  binaryMap(a, sa, b, sb, out, so,
            [](float x, float y) { return x != 0.0f ? y : 0.0f; });
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
  matmulT(a, false, w, false, out, rows, k, n);
}

namespace {

/// OpenBLAS on one thread while it lives, on as many as before after.
/// gnnc's products run on OpenMP's threads, a block of the result each,
/// with OpenBLAS on one thread: OpenBLAS's own (pthreads) workers keep
/// spinning for a while after each product, so beside OpenMP's threads
/// they took cores from the next loops and from each other (a GAT training
/// epoch on Cora: 55 ms with OpenBLAS's 2 threads, 24 ms with 1, on 2
/// cores) and fell far behind when another process held a core.
class SingleThreadedBlas {
public:
  SingleThreadedBlas() : before(openblas_get_num_threads()) {
    if (before != 1)
      openblas_set_num_threads(1);
  }
  ~SingleThreadedBlas() {
    if (before != 1)
      openblas_set_num_threads(before);
  }
  SingleThreadedBlas(const SingleThreadedBlas &) = delete;
  SingleThreadedBlas &operator=(const SingleThreadedBlas &) = delete;

private:
  int before;
};

/// One cblas_sgemm of the matmulT below, on rows [r0, r1) and columns
/// [c0, c1) of the result.
void sgemmBlock(const float *a, bool transA, const float *w, bool transW,
                float *out, int64_t rows, int64_t k, int64_t n, int64_t r0,
                int64_t r1, int64_t c0, int64_t c1) {
  // Row-major leading dimensions of a and w as stored.
  int lda = static_cast<int>(transA ? rows : k);
  int ldw = static_cast<int>(transW ? k : n);
  const float *aBlock = transA ? a + r0 : a + r0 * k;
  const float *wBlock = transW ? w + c0 * k : w + c0;
  cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
              transW ? CblasTrans : CblasNoTrans, static_cast<int>(r1 - r0),
              static_cast<int>(c1 - c0), static_cast<int>(k), 1.0f, aBlock, lda,
              wBlock, ldw, 0.0f, out + r0 * n + c0, static_cast<int>(n));
}

} // namespace

void gnnc::rt::matmulT(const float *a, bool transA, const float *w, bool transW,
                       float *out, int64_t rows, int64_t k, int64_t n) {
  if (rows <= 0 || n <= 0)
    return;
  if (k <= 0) {
    fill(out, rows * n, 0.0f);
    return;
  }
  SingleThreadedBlas oneThread;
  // Blocks of rows, or of columns when there are too few rows (a weight
  // gradient, transpose(x) @ dy, has as many rows as x has features), one
  // for each of OpenMP's threads, whichever threads take them (teamSize
  // may be fewer): cblas_sgemm rounds a block of another shape differently,
  // and the result must not depend on the machine's load.
  int64_t threads = 1;
#ifdef _OPENMP
  threads = omp_get_max_threads();
#endif
  constexpr int64_t kMinBlock = 16;
  bool byRows = rows >= threads * kMinBlock;
  int64_t extent = byRows ? rows : n;
  int64_t blocks = std::min(threads, extent / kMinBlock);
  if (blocks <= 1 || rows * n * k < kParallelThreshold * 8) {
    sgemmBlock(a, transA, w, transW, out, rows, k, n, 0, rows, 0, n);
    return;
  }
  parallelFor(blocks, true, [&](int64_t b) {
    int64_t lo = extent * b / blocks, hi = extent * (b + 1) / blocks;
    if (byRows)
      sgemmBlock(a, transA, w, transW, out, rows, k, n, lo, hi, 0, n);
    else
      sgemmBlock(a, transA, w, transW, out, rows, k, n, 0, rows, lo, hi);
  });
}

//===----------------------------------------------------------------------===//
// Dropout fused into a matmul
//===----------------------------------------------------------------------===//

namespace {

/// The dropout of a dropoutMatmul or dropoutTransposeMatmul: the test and
/// the scale computed once, and whether there is a mask at all.
struct DropoutMask {
  DropoutMask(double p, uint64_t seed, bool training)
      : seed(seed), drop(training && p > 0),
        threshold(drop ? dropoutThreshold(p) : 0),
        scale(drop ? dropoutScale(p) : 1.0f) {}
  uint64_t seed;
  bool drop;
  uint64_t threshold;
  float scale;
  bool kept(uint64_t index) const {
    return !drop || dropoutKept(seed, index, threshold);
  }
  /// Elements [begin, begin + n) of the dropped tensor, from `in`.
  void apply(const float *in, float *out, int64_t begin, int64_t n) const {
    if (drop)
      dropoutRange(in, out, begin, n, seed, threshold, scale);
    else
      std::memcpy(out, in, static_cast<size_t>(n) * sizeof(float));
  }
};

/// Elements of a sparse-product tile: rows of the matmul's input, columns
/// of the transposed one's (a multiple of the 16-element blocks whose zero
/// test skips them).
constexpr int64_t kSparseTileRows = 32;
constexpr int64_t kDenseTileCols = 256;
constexpr int64_t kTransposedCols = 64;
constexpr int64_t kTransposedTileRows = 128;

/// Whether a tile of `elements` with `nonzero` elements not +0.0 (so far)
/// is computed over those elements: one in 8 or fewer (bag-of-words
/// features are about 1 in 80). The rest of a denser tile goes through a
/// dropped copy and cblas_sgemm.
bool sparseEnough(int64_t nonzero, int64_t elements) {
  return nonzero * 8 <= elements;
}

/// Columns of a row segment whose kept elements are listed at once.
constexpr int64_t kSegment = 512;

/// Appends column `c` of a row and its dropped value when the mask keeps
/// element `index`.
__attribute__((always_inline)) inline void
pushKept(const DropoutMask &mask, uint64_t index, int64_t c, float value,
         int32_t *cols, float *vals, int64_t &count) {
  if (!mask.kept(index))
    return;
  cols[count] = static_cast<int32_t>(c);
  vals[count] = value * mask.scale;
  ++count;
}

/// Lists the elements c in [c0, c1) (at most kSegment) of row `row` of
/// x[?, k] that are not +0.0 and that the mask keeps: their columns in
/// `cols`, their dropped values in `vals`, in column order; returns how
/// many, and adds to `nonzero` the elements that are not +0.0, kept or not.
/// Each 16 elements give a bit mask of those that are not +0.0 (vector
/// compares, no branch per element), whose set bits are visited in order.
/// Inlined into the multiversioned loops below, which vectorise it.
__attribute__((always_inline)) inline int64_t
keptElements(const float *x, int64_t row, int64_t k, int64_t c0, int64_t c1,
             const DropoutMask &mask, int32_t *cols, float *vals,
             int64_t &nonzero) {
  const float *xr = x + row * k;
  const uint64_t base = static_cast<uint64_t>(row * k);
  int64_t count = 0;
  int64_t b = c0;
  for (; b + 16 <= c1; b += 16) {
    uint32_t bitsSet = 0;
#pragma omp simd reduction(| : bitsSet)
    for (int i = 0; i < 16; ++i) {
      uint32_t bits;
      std::memcpy(&bits, xr + b + i, sizeof bits);
      bitsSet |= static_cast<uint32_t>(bits != 0) << i;
    }
    nonzero += __builtin_popcount(bitsSet);
    for (; bitsSet != 0; bitsSet &= bitsSet - 1) {
      int64_t c = b + __builtin_ctz(bitsSet);
      pushKept(mask, base + static_cast<uint64_t>(c), c, xr[c], cols, vals,
               count);
    }
  }
  for (; b < c1; ++b) {
    uint32_t bits;
    std::memcpy(&bits, xr + b, sizeof bits);
    if (bits != 0) {
      ++nonzero;
      pushKept(mask, base + static_cast<uint64_t>(b), b, xr[b], cols, vals,
               count);
    }
  }
  return count;
}

/// Rows [r0, r1) of dropout(x) @ w over their kept non-zero elements, in
/// column order, into out (zeros), while the tile of `elements` starting at
/// r0 stays sparse enough; returns the first row not computed.
GNNC_MULTIVERSION
int64_t sparseProductRows(const float *x, int64_t k, int64_t r0, int64_t r1,
                          const DropoutMask &mask, const float *w, int64_t n,
                          float *out, int64_t elements) {
  int32_t cols[kSegment];
  float vals[kSegment];
  int64_t nonzero = 0, i = r0;
  for (; i < r1 && sparseEnough(nonzero, elements); ++i) {
    float *o = out + i * n;
    for (int64_t c0 = 0; c0 < k; c0 += kSegment) {
      int64_t count = keptElements(x, i, k, c0, std::min(k, c0 + kSegment),
                                   mask, cols, vals, nonzero);
      for (int64_t e = 0; e < count; ++e) {
        const float *wr = w + static_cast<int64_t>(cols[e]) * n;
        const float v = vals[e];
#pragma omp simd
        for (int64_t j = 0; j < n; ++j)
          o[j] += v * wr[j];
      }
    }
  }
  return i;
}

/// Rows [r0, r1) of x, columns [c0, c1) (at most kSegment), added to
/// transpose(dropout(x)) @ dy in `out` over their kept non-zero elements,
/// row by row, while the tile of `elements` stays sparse enough; returns
/// the first row not added.
GNNC_MULTIVERSION
int64_t sparseTransposedRows(const float *x, int64_t k, int64_t r0, int64_t r1,
                             int64_t c0, int64_t c1, const DropoutMask &mask,
                             const float *dy, int64_t n, float *out,
                             int64_t elements) {
  int32_t cols[kSegment];
  float vals[kSegment];
  int64_t nonzero = 0, i = r0;
  // The columns of the row kAhead rows down are asked for ahead: they are
  // a row's length from this row's, a stride the hardware prefetchers do
  // not follow, and the loads of the zero tests otherwise wait on memory.
  constexpr int64_t kAhead = 8;
  for (; i < r1 && sparseEnough(nonzero, elements); ++i) {
    if (i + kAhead < r1)
      for (int64_t c = c0; c < c1; c += 16)
        __builtin_prefetch(x + (i + kAhead) * k + c);
    int64_t count = keptElements(x, i, k, c0, c1, mask, cols, vals, nonzero);
    const float *d = dy + i * n;
    for (int64_t e = 0; e < count; ++e) {
      float *o = out + static_cast<int64_t>(cols[e]) * n;
      const float v = vals[e];
#pragma omp simd
      for (int64_t j = 0; j < n; ++j)
        o[j] += v * d[j];
    }
  }
  return i;
}

} // namespace

void gnnc::rt::dropoutMatmul(const float *x, const float *w, float *out,
                             int64_t rows, int64_t k, int64_t n, double p,
                             uint64_t seed, bool training) {
  if (rows <= 0 || n <= 0)
    return;
  fill(out, rows * n, 0.0f);
  if (k <= 0)
    return;
  SingleThreadedBlas oneThread;
  const DropoutMask mask(p, seed, training);
  // Tiles of rows, each computed on its own (the same floats on any number
  // of threads): row by row over its kept non-zero elements, until the
  // tile turns out too dense; its remaining rows through a dropped copy.
  int64_t tiles = (rows + kSparseTileRows - 1) / kSparseTileRows;
  parallelFor<Schedule::Tiles>(
      tiles, rows * k > kParallelThreshold, [&](int64_t t) {
        int64_t r0 = t * kSparseTileRows;
        int64_t r1 = std::min(rows, r0 + kSparseTileRows);
        int64_t i =
            sparseProductRows(x, k, r0, r1, mask, w, n, out, (r1 - r0) * k);
        if (i == r1)
          return;
        float tile[kSparseTileRows * kDenseTileCols];
        for (int64_t c0 = 0; c0 < k; c0 += kDenseTileCols) {
          int64_t cw = std::min(kDenseTileCols, k - c0);
          for (int64_t r = i; r < r1; ++r)
            mask.apply(x + r * k + c0, tile + (r - i) * cw, r * k + c0, cw);
          cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans,
                      static_cast<int>(r1 - i), static_cast<int>(n),
                      static_cast<int>(cw), 1.0f, tile, static_cast<int>(cw),
                      w + c0 * n, static_cast<int>(n), 1.0f, out + i * n,
                      static_cast<int>(n));
        }
      });
}

void gnnc::rt::dropoutTransposeMatmul(const float *x, const float *dy,
                                      float *out, int64_t rows, int64_t k,
                                      int64_t n, double p, uint64_t seed,
                                      bool training) {
  if (k <= 0 || n <= 0)
    return;
  fill(out, k * n, 0.0f);
  if (rows <= 0)
    return;
  SingleThreadedBlas oneThread;
  const DropoutMask mask(p, seed, training);
  // Blocks of columns of x (rows of the result), each summed over x's rows
  // in order by one thread, tile by tile: no two threads write a row.
  int64_t blocks = (k + kTransposedCols - 1) / kTransposedCols;
  parallelFor<Schedule::Tiles>(
      blocks, rows * k > kParallelThreshold, [&](int64_t b) {
        int64_t c0 = b * kTransposedCols;
        int64_t c1 = std::min(k, c0 + kTransposedCols), cw = c1 - c0;
        float *o = out + c0 * n;
        static_assert(kTransposedCols <= kSegment, "a block is one segment");
        for (int64_t r0 = 0; r0 < rows; r0 += kTransposedTileRows) {
          int64_t r1 = std::min(rows, r0 + kTransposedTileRows);
          int64_t i = sparseTransposedRows(x, k, r0, r1, c0, c1, mask, dy, n,
                                           out, (r1 - r0) * cw);
          if (i == r1)
            continue;
          float tile[kTransposedTileRows * kTransposedCols];
          for (int64_t r = i; r < r1; ++r)
            mask.apply(x + r * k + c0, tile + (r - i) * cw, r * k + c0, cw);
          cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans,
                      static_cast<int>(cw), static_cast<int>(n),
                      static_cast<int>(r1 - i), 1.0f, tile,
                      static_cast<int>(cw), dy + i * n, static_cast<int>(n),
                      1.0f, o, static_cast<int>(n));
        }
      });
}

void gnnc::rt::reduceSum(const float *in, float *out, int64_t outer,
                         int64_t len, int64_t inner) {
  if (inner == 1) { // row sums
    parallelFor(outer, outer * len > kParallelThreshold, [&](int64_t o) {
      const float *row = in + o * len;
      float acc = 0.0f;
      for (int64_t j = 0; j < len; ++j)
        acc += row[j];
      out[o] = acc;
    });
    return;
  }
  // Column sums (the vertex axis of a [N, ...] tensor, the backward's bias
  // gradients): rows are added one after the other into the output row, so
  // every element is still summed from 0 in index order, and the loop over
  // the row is contiguous and vectorised.
  parallelFor(outer, outer * len * inner > kParallelThreshold, [&](int64_t o) {
    float *__restrict acc = out + o * inner;
    for (int64_t i = 0; i < inner; ++i)
      acc[i] = 0.0f;
    for (int64_t j = 0; j < len; ++j) {
      const float *__restrict row = in + (o * len + j) * inner;
#pragma omp simd
      for (int64_t i = 0; i < inner; ++i)
        acc[i] += row[i];
    }
  });
}
void gnnc::rt::mulReduceSum(const float *a, const Shape &sa, const float *b,
                            const Shape &sb, const Shape &product, float *out,
                            int64_t outer, int64_t len, int64_t inner) {
  if (outer * inner <= 0)
    return;
  if (len <= 0) {
    fill(out, outer * inner, 0.0f);
    return;
  }
  // The products are written to a block on the stack by one loop and summed
  // by another, so that each is rounded before it is added (no fused
  // multiply-add), and every sum runs from 0 in index order: the floats of
  // mul then reduceSum, without the product tensor.
  const BroadcastPlan plan(sa, sb, product);
  const auto times = [](float x, float y) { return x * y; };
  constexpr int64_t kBlock = 1024;
  const bool parallel = outer * len * inner > kParallelThreshold;
  if (inner == 1) { // row sums: blocks of whole rows, or one long row
    const int64_t rowsPer = std::max<int64_t>(1, kBlock / len);
    const int64_t blocks = (outer + rowsPer - 1) / rowsPer;
    parallelFor(blocks, parallel, [&](int64_t blk) {
      float products[kBlock];
      const int64_t o0 = blk * rowsPer, o1 = std::min(outer, o0 + rowsPer);
      if (len <= kBlock) {
        plan.apply(a, b, o0 * len, (o1 - o0) * len, products, times);
        for (int64_t o = o0; o < o1; ++o) {
          const float *row = products + (o - o0) * len;
          float acc = 0.0f;
          for (int64_t j = 0; j < len; ++j)
            acc += row[j];
          out[o] = acc;
        }
        return;
      }
      float acc = 0.0f;
      for (int64_t j0 = 0; j0 < len; j0 += kBlock) {
        const int64_t n = std::min(kBlock, len - j0);
        plan.apply(a, b, o0 * len + j0, n, products, times);
        for (int64_t j = 0; j < n; ++j)
          acc += products[j];
      }
      out[o0] = acc;
    });
    return;
  }
  // Column sums: the products of one row of the axis at a time are added
  // into the output row, in blocks of up to kBlock columns (each column is
  // still summed in index order). Narrower blocks would spread a single
  // output row (a parameter's gradient summed over the vertices) over the
  // threads, but each would read a strided fraction of every input row,
  // which runs at memory latency (5x slower on GAT's [N, 8, 8]).
  const int64_t width = std::min(kBlock, inner);
  const int64_t columnBlocks = (inner + width - 1) / width;
  parallelFor(outer * columnBlocks, parallel, [&](int64_t task) {
    float products[kBlock];
    const int64_t o = task / columnBlocks;
    const int64_t i0 = task % columnBlocks * width;
    const int64_t n = std::min(width, inner - i0);
    float *__restrict acc = out + o * inner + i0;
    for (int64_t i = 0; i < n; ++i)
      acc[i] = 0.0f;
    const int64_t start = o * len * inner + i0;
    for (int64_t j = 0; j < len; ++j) {
      plan.apply(a, b, start + j * inner, n, products, times);
#pragma omp simd
      for (int64_t i = 0; i < n; ++i)
        acc[i] += products[i];
    }
  });
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
  parallelFor(rows, rows * width > kParallelThreshold, [&](int64_t r) {
    std::memcpy(out + r * outStride, in + r * inStride,
                static_cast<size_t>(width) * sizeof(float));
  });
}

void gnnc::rt::transpose(const float *in, float *out, int64_t batch, int64_t a,
                         int64_t b) {
  // In tiles of 32 x 32, so that both sides are read and written a cache
  // line at a time.
  constexpr int64_t kTile = 32;
  parallelFor(batch, batch * a * b > kParallelThreshold, [&](int64_t r) {
    for (int64_t i0 = 0; i0 < a; i0 += kTile)
      for (int64_t j0 = 0; j0 < b; j0 += kTile) {
        int64_t i1 = std::min(a, i0 + kTile), j1 = std::min(b, j0 + kTile);
        for (int64_t i = i0; i < i1; ++i)
          for (int64_t j = j0; j < j1; ++j)
            out[r * a * b + j * a + i] = in[r * a * b + i * b + j];
      }
  });
}

//===----------------------------------------------------------------------===//
// Graph operations
//===----------------------------------------------------------------------===//

void gnnc::rt::gather(const int64_t *index, int64_t count, const float *in,
                      int64_t row, float *out) {
  parallelFor(count, count * row > kParallelThreshold, [&](int64_t e) {
    for (int64_t j = 0; j < row; ++j)
      out[e * row + j] = in[index[e] * row + j];
  });
}

void gnnc::rt::gatherDot(const int64_t *xIndex, const float *x,
                         const int64_t *yIndex, const float *y, int64_t count,
                         int64_t row, float *out) {
  // The rows of the edge kAhead places ahead are prefetched: the indices
  // follow the edge ids, not the memory order of x and y.
  constexpr int64_t kAhead = 16;
  parallelFor(count, count * row > kParallelThreshold, [&](int64_t e) {
    if (e + kAhead < count)
      for (int64_t j = 0; j < row; j += 16) {
#if defined(__GNUC__) || defined(__clang__)
        __builtin_prefetch(x + xIndex[e + kAhead] * row + j);
        __builtin_prefetch(y + yIndex[e + kAhead] * row + j);
#endif
      }
    const float *a = x + xIndex[e] * row;
    const float *b = y + yIndex[e] * row;
    float acc = 0.0f;
    for (int64_t j = 0; j < row; ++j) {
      // The product is rounded before the sum, as mul then reduceSum do.
      float product = a[j] * b[j];
      acc += product;
    }
    out[e] = acc;
  });
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
  const int64_t *ptr = ptrOf(g, by);
  const int64_t *edges = edgesOf(g, by);
  int64_t count = countOf(g, by);
  parallelFor<Schedule::Dynamic>(count, count * row > 4096, [&](int64_t v) {
    int64_t begin = ptr[v], end = ptr[v + 1];
    for (int64_t j0 = 0; j0 < row; j0 += kColumns) {
      const int64_t width = std::min(kColumns, row - j0);
      float mx[kColumns], sum[kColumns];
      for (int64_t j = 0; j < width; ++j) {
        mx[j] = 0.0f;
        sum[j] = 0.0f;
      }
      for (int64_t k = begin; k < end; ++k) {
        const float *x = in + edges[k] * row + j0;
        for (int64_t j = 0; j < width; ++j)
          mx[j] = k == begin || x[j] > mx[j] ? x[j] : mx[j];
      }
      for (int64_t k = begin; k < end; ++k) {
        const float *x = in + edges[k] * row + j0;
        for (int64_t j = 0; j < width; ++j)
          sum[j] += simdExp(x[j] - mx[j]);
      }
      // A row of -inf only: -inf (log 0), not mx + log(NaN).
      for (int64_t j = 0; j < width; ++j)
        out[v * row + j0 + j] =
            end == begin ? 0.0f
            : mx[j] == -std::numeric_limits<float>::infinity()
                ? mx[j]
                : mx[j] + std::log(sum[j]);
    }
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
  parallelFor<Schedule::Dynamic>(count, count * row > 4096, [&](int64_t v) {
    int64_t begin = ptr[v], end = ptr[v + 1];
    if (begin == end)
      return;
    for (int64_t j0 = 0; j0 < row; j0 += kColumns) {
      const int64_t width = std::min(kColumns, row - j0);
      float mx[kColumns], sum[kColumns];
      const float *first = in + edges[begin] * row + j0;
      for (int64_t j = 0; j < width; ++j) {
        mx[j] = first[j];
        sum[j] = 0.0f;
      }
      for (int64_t k = begin; k < end; ++k) {
        const float *x = in + edges[k] * row + j0;
        for (int64_t j = 0; j < width; ++j)
          mx[j] = std::max(mx[j], x[j]);
      }
      // A column of -inf: every exp is 0 (not NaN) and so is every weight.
      for (int64_t j = 0; j < width; ++j)
        if (mx[j] == -std::numeric_limits<float>::infinity())
          mx[j] = 0.0f;
      for (int64_t k = begin; k < end; ++k) {
        const float *x = in + edges[k] * row + j0;
        for (int64_t j = 0; j < width; ++j)
          sum[j] += simdExp(x[j] - mx[j]);
      }
      for (int64_t k = begin; k < end; ++k) {
        const float *x = in + edges[k] * row + j0;
        float *y = out + edges[k] * row + j0;
        for (int64_t j = 0; j < width; ++j)
          y[j] = sum[j] == 0.0f ? 0.0f : simdExp(x[j] - mx[j]) / sum[j];
      }
    }
  });
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
  parallelFor(n, n * row > kParallelThreshold, [&](int64_t v) {
    for (int64_t j = 0; j < row; ++j)
      out[v * row + j] = in[g.graphOf[v] * row + j];
  });
}
