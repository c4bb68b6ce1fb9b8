//===- Ops.h - Host operations called by generated C++ ----------*- C++ -*-===//
//
// Part of gnnc. The small library of whole-tensor operations that the C++
// printer (`gnnc --emit=cpp`) calls for the host side of a layer: dense maths
// (elementwise functions with NumPy broadcasting, reductions, softmax,
// matmul through OpenBLAS' cblas_sgemm), unfused graph operations (gather,
// scatter, edge softmax, readouts) and the dropout mask. Fused aggregations
// are printed as loops and do not come here.
//
// Every function computes exactly what the reference interpreter
// (compiler/lib/Interpreter) computes for the op of the same name, in the
// same order of floating-point operations wherever the order is observable
// (sums run over edges in CSR/CSC order, over vertices in id order, over
// elements in row-major order; max/min keep the first extreme), except
// matmul, which is cblas_sgemm's.
//
// Tensors are float32, dense and row-major; the caller owns every buffer
// (generated code carves them out of one workspace), and outputs never
// alias inputs, except in the elementwise maths below: the output of a
// unary op, a dropout, a binary op or addMul may be an input of the
// output's shape (computed in place). Nothing here allocates or throws;
// loops over vertices and large tensors run in parallel with OpenMP when it
// is enabled.
//
// Generated C++ includes this header only: it brings in the graph argument
// types (Graph.h), the reflection tables and workspace helpers (Abi.h), the
// dropout mask (Random.h) and the thread count of parallel loops
// (Threads.h).
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_RUNTIME_OPS_H
#define GNNC_RUNTIME_OPS_H

#include "gnnc/runtime/Abi.h"
#include "gnnc/runtime/Graph.h"
#include "gnnc/runtime/Random.h"
#include "gnnc/runtime/SimdMath.h"
#include "gnnc/runtime/Status.h"
#include "gnnc/runtime/Threads.h"

#include <cstddef>
#include <cstdint>

namespace gnnc::rt {

//===----------------------------------------------------------------------===//
// Prefetching, dropout
//===----------------------------------------------------------------------===//

/// Asks for the cache lines of `row` (`Floats` floats) to be loaded: generated
/// edge loops call it for the rows a later edge gathers. A hint only: the
/// address need not be valid.
template <int64_t Floats> inline void prefetchRow(const float *row) {
#if defined(__GNUC__) || defined(__clang__)
  for (int64_t i = 0; i < Floats; i += 64 / sizeof(float))
    __builtin_prefetch(row + i);
#else
  (void)row;
#endif
}

/// `out = in * mask` for dropout with probability `p` (the identity when not
/// training or p <= 0); element i of the mask is dropoutKeep(training,
/// seed, i, p).
void dropout(const float *in, float *out, int64_t n, double p, uint64_t seed,
             bool training);

/// batch_norm's running-statistics update (gnn.update_batch_stats), as
/// torch's: in training, with `mean` and `var` the mean and the unbiased
/// variance of each column of the `[rows, cols]` tensor `x` (in double),
/// `runningMean = (1 - momentum) runningMean + momentum mean` and the same
/// for `runningVar`. Nothing when not training. An error when training with
/// fewer than 2 rows, whose variance is not defined.
Status updateBatchStats(const float *x, int64_t rows, int64_t cols,
                        float *runningMean, float *runningVar, double momentum,
                        bool training);

//===----------------------------------------------------------------------===//
// Graph facts
//===----------------------------------------------------------------------===//

/// In-degree of every destination ([N_dst]), out-degree of every source
/// ([N_src]), as floats.
void inDegree(const Graph &g, float *out);
void outDegree(const Graph &g, float *out);
/// Vertices of each member graph ([B]), as floats.
void graphSizes(const BatchedGraph &g, float *out);

//===----------------------------------------------------------------------===//
// Elementwise maths
//===----------------------------------------------------------------------===//

void fill(float *out, int64_t n, float value);
void copy(const float *in, float *out, int64_t n);

/// `y = fn(x)` elementwise. As in PyTorch, a NaN stays a NaN in every one of
/// them (relu, leaky_relu and elu included).
void neg(const float *x, float *y, int64_t n);
void exp(const float *x, float *y, int64_t n);
void log(const float *x, float *y, int64_t n);
void sqrt(const float *x, float *y, int64_t n);
void rsqrt(const float *x, float *y, int64_t n);
void abs(const float *x, float *y, int64_t n);
void relu(const float *x, float *y, int64_t n);
void sigmoid(const float *x, float *y, int64_t n);
void tanh(const float *x, float *y, int64_t n);
void gelu(const float *x, float *y, int64_t n);
void erf(const float *x, float *y, int64_t n);
void sin(const float *x, float *y, int64_t n);
void cos(const float *x, float *y, int64_t n);
void elu(const float *x, float *y, int64_t n, float alpha);
void leakyRelu(const float *x, float *y, int64_t n, float alpha);

/// `out = a (op) b` with NumPy broadcasting: the three shapes have one rank,
/// and each axis of `a` and `b` is 1 or the axis of `out`. max and min return
/// `a` on a tie (std::max, std::min) and a NaN when either operand is one
/// (torch.maximum, torch.minimum); gt, ge, eq and ne are 1 or 0 (0 when
/// either is a NaN, except ne); mask is `a != 0 ? b : 0`.
void add(const float *a, const Shape &sa, const float *b, const Shape &sb,
         float *out, const Shape &so);
void sub(const float *a, const Shape &sa, const float *b, const Shape &sb,
         float *out, const Shape &so);
void mul(const float *a, const Shape &sa, const float *b, const Shape &sb,
         float *out, const Shape &so);
void div(const float *a, const Shape &sa, const float *b, const Shape &sb,
         float *out, const Shape &so);
void max(const float *a, const Shape &sa, const float *b, const Shape &sb,
         float *out, const Shape &so);
void min(const float *a, const Shape &sa, const float *b, const Shape &sb,
         float *out, const Shape &so);
void pow(const float *a, const Shape &sa, const float *b, const Shape &sb,
         float *out, const Shape &so);
void gt(const float *a, const Shape &sa, const float *b, const Shape &sb,
        float *out, const Shape &so);
void ge(const float *a, const Shape &sa, const float *b, const Shape &sb,
        float *out, const Shape &so);
void eq(const float *a, const Shape &sa, const float *b, const Shape &sb,
        float *out, const Shape &so);
void ne(const float *a, const Shape &sa, const float *b, const Shape &sb,
        float *out, const Shape &so);
void mask(const float *a, const Shape &sa, const float *b, const Shape &sb,
          float *out, const Shape &so);
/// `out = x + y * z`, each broadcast to `so` as add and mul broadcast: the
/// floats of mul then add (the product rounded before the sum) without
/// the product tensor.
void addMul(const float *x, const Shape &sx, const float *y, const Shape &sy,
            const float *z, const Shape &sz, float *out, const Shape &so);
/// `in` broadcast to `so` (same rank, axes of `si` are 1 or those of `so`).
void broadcastTo(const float *in, const Shape &si, float *out, const Shape &so);

//===----------------------------------------------------------------------===//
// Dense operations
//===----------------------------------------------------------------------===//

/// `out[rows, n] = a[rows, k] @ w[k, n]` (cblas_sgemm; zeros when k is 0).
/// Large products are split into blocks of rows (or columns) over OpenMP's
/// threads, each a cblas_sgemm with OpenBLAS on one thread for the call.
void matmul(const float *a, const float *w, float *out, int64_t rows, int64_t k,
            int64_t n);
/// `out[rows, n] = op(a) @ op(w)`, where op(a) is a[rows, k] or, with
/// `transA`, the transpose of a stored as [k, rows], and op(w) is w[k, n] or,
/// with `transW`, the transpose of w stored as [n, k]: a matmul of a
/// transposed operand without copying it (cblas_sgemm's CblasTrans).
void matmulT(const float *a, bool transA, const float *w, bool transW,
             float *out, int64_t rows, int64_t k, int64_t n);

/// `out[rows, n] = dropout(x[rows, k]) @ w[k, n]` without the dropped
/// tensor: dropout(x) is dropout's (the same mask for the same `p`, `seed`
/// and `training`). Rows are taken in tiles of 32, each by one thread: row
/// by row over the kept elements that are not +0.0, in column order, as
/// long as at most one element in 8 of the tile is not +0.0 (bag-of-words
/// features: about 1 in 80); the rest of a denser tile through a dropped
/// copy of a few columns at a time and cblas_sgemm. The floats depend on x
/// only, not on the number of threads. Terms of +0.0 are skipped, as in any
/// sparse product (a +0.0 times an infinite weight adds nothing, not NaN).
void dropoutMatmul(const float *x, const float *w, float *out, int64_t rows,
                   int64_t k, int64_t n, double p, uint64_t seed,
                   bool training);
/// `out[k, n] = transpose(dropout(x[rows, k])) @ dy[rows, n]` (the weight
/// gradient of dropoutMatmul) without the dropped tensor, in the same way:
/// blocks of 64 of x's columns, each summed over the rows in order by one
/// thread, in tiles of 128 rows.
void dropoutTransposeMatmul(const float *x, const float *dy, float *out,
                            int64_t rows, int64_t k, int64_t n, double p,
                            uint64_t seed, bool training);

/// Reductions of the middle axis of `in` seen as [outer, len, inner] into
/// `out` [outer, inner]: sums from 0 in index order, mean divides by len,
/// max and min keep the first extreme; an empty axis gives 0.
void reduceSum(const float *in, float *out, int64_t outer, int64_t len,
               int64_t inner);
/// reduceSum of `a * b` (broadcast as mul broadcasts them to `product`,
/// which is [outer, len, inner] flattened) without the product tensor: the
/// same floats as mul then reduceSum.
void mulReduceSum(const float *a, const Shape &sa, const float *b,
                  const Shape &sb, const Shape &product, float *out,
                  int64_t outer, int64_t len, int64_t inner);
void reduceMean(const float *in, float *out, int64_t outer, int64_t len,
                int64_t inner);
void reduceMax(const float *in, float *out, int64_t outer, int64_t len,
               int64_t inner);
void reduceMin(const float *in, float *out, int64_t outer, int64_t len,
               int64_t inner);
/// The mask of the element reduceMax / reduceMin keeps: 1 at the first
/// extreme of each [outer, :, inner] lane, 0 elsewhere (shape of `in`).
void reduceSelectMax(const float *in, float *out, int64_t outer, int64_t len,
                     int64_t inner);
void reduceSelectMin(const float *in, float *out, int64_t outer, int64_t len,
                     int64_t inner);
/// Softmax (log-softmax) of the middle axis of [outer, len, inner].
void softmax(const float *in, float *out, int64_t outer, int64_t len,
             int64_t inner);
void logSoftmax(const float *in, float *out, int64_t outer, int64_t len,
                int64_t inner);
/// `out[r * outStride + j] = in[r * inStride + j]` for r < rows, j < width:
/// a block of a concatenation or a slice.
void copyRows(const float *in, int64_t inStride, float *out, int64_t outStride,
              int64_t rows, int64_t width);
/// Transposes each of `batch` [a, b] matrices of `in` into [b, a].
void transpose(const float *in, float *out, int64_t batch, int64_t a,
               int64_t b);

//===----------------------------------------------------------------------===//
// Graph operations (unfused)
//===----------------------------------------------------------------------===//

/// Row `index[e]` of `in` for each of `count` edges (`index` is
/// g.edgeSrc() or g.edgeDst()).
void gather(const int64_t *index, int64_t count, const float *in, int64_t row,
            float *out);
/// `out[e] = sum over j of x[xIndex[e] * row + j] * y[yIndex[e] * row + j]`
/// for each of `count` edges, summed from 0 in j order: the sum over the
/// row of the product of two gathers (the gradient of an edge weight)
/// without the [count, row] gathered rows.
void gatherDot(const int64_t *xIndex, const float *x, const int64_t *yIndex,
               const float *y, int64_t count, int64_t row, float *out);
/// `row` broadcast to `count` rows.
void splat(const float *row, int64_t rowSize, int64_t count, float *out);

/// Reduces the edge rows `in` ([E, row]) of each vertex's edges into `out`
/// ([count, row]); an empty group gives 0.
void scatterSum(const Graph &g, Side by, const float *in, int64_t row,
                float *out);
void scatterMean(const Graph &g, Side by, const float *in, int64_t row,
                 float *out);
void scatterMax(const Graph &g, Side by, const float *in, int64_t row,
                float *out);
void scatterMin(const Graph &g, Side by, const float *in, int64_t row,
                float *out);
void scatterLogSumExp(const Graph &g, Side by, const float *in, int64_t row,
                      float *out);
/// The edge mask of scatterMax / scatterMin (ties: the first edge).
void scatterSelectMax(const Graph &g, Side by, const float *in, int64_t row,
                      float *out);
void scatterSelectMin(const Graph &g, Side by, const float *in, int64_t row,
                      float *out);
/// Softmax of the edge rows over each vertex's edges.
void edgeSoftmax(const Graph &g, Side by, const float *in, int64_t row,
                 float *out);

/// Per-graph reductions of `in` ([n, row], n = vertices of the batch) into
/// `out` ([B, row]); `scratch` holds B int64 (the counts).
void readoutSum(const BatchedGraph &g, const float *in, int64_t n, int64_t row,
                float *out, int64_t *scratch);
void readoutMean(const BatchedGraph &g, const float *in, int64_t n, int64_t row,
                 float *out, int64_t *scratch);
void readoutMax(const BatchedGraph &g, const float *in, int64_t n, int64_t row,
                float *out, int64_t *scratch);
void readoutMin(const BatchedGraph &g, const float *in, int64_t n, int64_t row,
                float *out, int64_t *scratch);
/// The vertex mask of readoutMax / readoutMin ([n, row]); `scratch` holds
/// B * row int64.
void readoutSelectMax(const BatchedGraph &g, const float *in, int64_t n,
                      int64_t row, float *out, int64_t *scratch);
void readoutSelectMin(const BatchedGraph &g, const float *in, int64_t n,
                      int64_t row, float *out, int64_t *scratch);
/// Row graphOf[v] of `in` ([B, row]) for each of the n vertices.
void broadcastGraphs(const BatchedGraph &g, const float *in, int64_t n,
                     int64_t row, float *out);

} // namespace gnnc::rt

#endif // GNNC_RUNTIME_OPS_H
