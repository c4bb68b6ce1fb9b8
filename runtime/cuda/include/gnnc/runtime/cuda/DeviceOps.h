//===- DeviceOps.h - Device operations called by generated CUDA -*- C++ -*-===//
//
// Part of gnnc. The host side of a module printed by `gnnc --emit=cuda`
// calls these for everything that is not a fused aggregation: the same
// operations as gnnc/runtime/Ops.h (whose comments say what each computes;
// the results are the reference interpreter's up to the order of float
// additions), on device memory, queued on the stream given last. Dense
// matmuls go through cuBLAS (cublasSgemm, FP32, no TF32), device-wide
// reductions through CUB; the rest are small kernels of this library.
//
// Every function returns a failed Status when a CUDA or cuBLAS call fails
// (an error of the launch; errors of the kernels' execution show at the
// next synchronisation). Nothing allocates device memory: an operation that
// needs scratch takes it from the caller (`*ScratchBytes`), who carves it
// out of the workspace. Nothing synchronises. Results do not depend on
// timing: every sum runs in a fixed order, and no operation uses atomics.
//
// Generated CUDA includes this header and Kernel.cuh; through it, the
// reflection tables of its modules (gnnc/runtime/cuda/Abi.h).
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_RUNTIME_CUDA_DEVICEOPS_H
#define GNNC_RUNTIME_CUDA_DEVICEOPS_H

#include "gnnc/runtime/Abi.h"
#include "gnnc/runtime/Graph.h"
#include "gnnc/runtime/Random.h"
#include "gnnc/runtime/Status.h"
#include "gnnc/runtime/cuda/Abi.h"
#include "gnnc/runtime/cuda/Device.h"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>

namespace gnnc::rt::cuda {

//===----------------------------------------------------------------------===//
// Checks and graph facts
//===----------------------------------------------------------------------===//

/// Success when every pointer is a multiple of `bytes` (16 for float4
/// accesses); else an error naming `what`. Null pointers pass.
Status checkAligned(const char *what, std::size_t bytes,
                    std::initializer_list<const void *> pointers);

/// `out = in * mask` for dropout with probability `p` (rt::dropout).

Status dropout(const float *in, float *out, int64_t n, double p, uint64_t seed,
               bool training, cudaStream_t stream);

/// batch_norm's running-statistics update (rt::updateBatchStats): one
/// block per column, in double, in a fixed order.
Status updateBatchStats(const float *x, int64_t rows, int64_t cols,
                        float *runningMean, float *runningVar, double momentum,
                        bool training, cudaStream_t stream);

Status inDegree(const DeviceGraph &g, float *out, cudaStream_t stream);
Status outDegree(const DeviceGraph &g, float *out, cudaStream_t stream);
Status graphSizes(const DeviceBatchedGraph &g, float *out, cudaStream_t stream);

//===----------------------------------------------------------------------===//
// Elementwise maths
//===----------------------------------------------------------------------===//

Status fill(float *out, int64_t n, float value, cudaStream_t stream);
Status copy(const float *in, float *out, int64_t n, cudaStream_t stream);

Status neg(const float *x, float *y, int64_t n, cudaStream_t stream);
Status exp(const float *x, float *y, int64_t n, cudaStream_t stream);
Status log(const float *x, float *y, int64_t n, cudaStream_t stream);
Status sqrt(const float *x, float *y, int64_t n, cudaStream_t stream);
Status rsqrt(const float *x, float *y, int64_t n, cudaStream_t stream);
Status abs(const float *x, float *y, int64_t n, cudaStream_t stream);
Status relu(const float *x, float *y, int64_t n, cudaStream_t stream);
Status sigmoid(const float *x, float *y, int64_t n, cudaStream_t stream);
Status tanh(const float *x, float *y, int64_t n, cudaStream_t stream);
Status gelu(const float *x, float *y, int64_t n, cudaStream_t stream);
Status erf(const float *x, float *y, int64_t n, cudaStream_t stream);
Status sin(const float *x, float *y, int64_t n, cudaStream_t stream);
Status cos(const float *x, float *y, int64_t n, cudaStream_t stream);
Status elu(const float *x, float *y, int64_t n, float alpha,
           cudaStream_t stream);
Status leakyRelu(const float *x, float *y, int64_t n, float alpha,
                 cudaStream_t stream);

Status add(const float *a, const Shape &sa, const float *b, const Shape &sb,
           float *out, const Shape &so, cudaStream_t stream);
Status sub(const float *a, const Shape &sa, const float *b, const Shape &sb,
           float *out, const Shape &so, cudaStream_t stream);
Status mul(const float *a, const Shape &sa, const float *b, const Shape &sb,
           float *out, const Shape &so, cudaStream_t stream);
Status div(const float *a, const Shape &sa, const float *b, const Shape &sb,
           float *out, const Shape &so, cudaStream_t stream);
Status max(const float *a, const Shape &sa, const float *b, const Shape &sb,
           float *out, const Shape &so, cudaStream_t stream);
Status min(const float *a, const Shape &sa, const float *b, const Shape &sb,
           float *out, const Shape &so, cudaStream_t stream);
Status pow(const float *a, const Shape &sa, const float *b, const Shape &sb,
           float *out, const Shape &so, cudaStream_t stream);
Status gt(const float *a, const Shape &sa, const float *b, const Shape &sb,
          float *out, const Shape &so, cudaStream_t stream);
Status ge(const float *a, const Shape &sa, const float *b, const Shape &sb,
          float *out, const Shape &so, cudaStream_t stream);
Status eq(const float *a, const Shape &sa, const float *b, const Shape &sb,
          float *out, const Shape &so, cudaStream_t stream);
Status ne(const float *a, const Shape &sa, const float *b, const Shape &sb,
          float *out, const Shape &so, cudaStream_t stream);
Status mask(const float *a, const Shape &sa, const float *b, const Shape &sb,
            float *out, const Shape &so, cudaStream_t stream);
/// rt::addMul: `out = x + y * z` (the product rounded before the sum)
/// without the product tensor.
Status addMul(const float *x, const Shape &sx, const float *y, const Shape &sy,
              const float *z, const Shape &sz, float *out, const Shape &so,
              cudaStream_t stream);
Status broadcastTo(const float *in, const Shape &si, float *out,
                   const Shape &so, cudaStream_t stream);

//===----------------------------------------------------------------------===//
// Dense operations
//===----------------------------------------------------------------------===//

/// `out[rows, n] = a[rows, k] @ w[k, n]` with cublasSgemm on a cuBLAS handle
/// of the calling thread and the current device, created on first use, and
/// a cuBLAS workspace of `stream`'s own (made by the stream's first matmul
/// from this thread, or by prepareCapture): two streams never share one,
/// so results are bitwise the same however their work interleaves.
Status matmul(const float *a, const float *w, float *out, int64_t rows,
              int64_t k, int64_t n, cudaStream_t stream);
/// `out[rows, n] = op(a) @ op(w)` as rt::matmulT (op(a) is a[rows, k] or,
/// with `transA`, the transpose of a stored as [k, rows]; op(w) is w[k, n]
/// or, with `transW`, the transpose of w stored as [n, k]): the transposed
/// operands are read in place (CUBLAS_OP_T), as matmul runs otherwise.
Status matmulT(const float *a, bool transA, const float *w, bool transW,
               float *out, int64_t rows, int64_t k, int64_t n,
               cudaStream_t stream);

/// The scratch bytes of the reductions of [outer, len, inner] below (a
/// multiple of 64, 0 when they need none).
std::size_t reduceScratchBytes(int64_t outer, int64_t len, int64_t inner);
Status reduceSum(const float *in, float *out, int64_t outer, int64_t len,
                 int64_t inner, void *scratch, cudaStream_t stream);
Status reduceMean(const float *in, float *out, int64_t outer, int64_t len,
                  int64_t inner, void *scratch, cudaStream_t stream);
Status reduceMax(const float *in, float *out, int64_t outer, int64_t len,
                 int64_t inner, void *scratch, cudaStream_t stream);
Status reduceMin(const float *in, float *out, int64_t outer, int64_t len,
                 int64_t inner, void *scratch, cudaStream_t stream);
Status reduceSelectMax(const float *in, float *out, int64_t outer, int64_t len,
                       int64_t inner, void *scratch, cudaStream_t stream);
Status reduceSelectMin(const float *in, float *out, int64_t outer, int64_t len,
                       int64_t inner, void *scratch, cudaStream_t stream);
/// rt::mulReduceSum: reduceSum of the broadcast product `a * b` without
/// the product tensor (each product rounded before it is added), with the
/// scratch of mulReduceScratchBytes (a whole-tensor sum keeps the products
/// there for CUB).
std::size_t mulReduceScratchBytes(int64_t outer, int64_t len, int64_t inner);
Status mulReduceSum(const float *a, const Shape &sa, const float *b,
                    const Shape &sb, const Shape &product, float *out,
                    int64_t outer, int64_t len, int64_t inner, void *scratch,
                    cudaStream_t stream);
Status softmax(const float *in, float *out, int64_t outer, int64_t len,
               int64_t inner, cudaStream_t stream);
Status logSoftmax(const float *in, float *out, int64_t outer, int64_t len,
                  int64_t inner, cudaStream_t stream);
Status copyRows(const float *in, int64_t inStride, float *out,
                int64_t outStride, int64_t rows, int64_t width,
                cudaStream_t stream);
Status transpose(const float *in, float *out, int64_t batch, int64_t a,
                 int64_t b, cudaStream_t stream);

//===----------------------------------------------------------------------===//
// Graph operations (unfused)
//===----------------------------------------------------------------------===//

/// Row `index[e]` of `in` for each of `count` edges (`index` is
/// g.edgeSrc() or g.edgeDst()).
Status gather(const int32_t *index, int64_t count, const float *in, int64_t row,
              float *out, cudaStream_t stream);
Status splat(const float *row, int64_t rowSize, int64_t count, float *out,
             cudaStream_t stream);

Status scatterSum(const DeviceGraph &g, Side by, const float *in, int64_t row,
                  float *out, cudaStream_t stream);
Status scatterMean(const DeviceGraph &g, Side by, const float *in, int64_t row,
                   float *out, cudaStream_t stream);
Status scatterMax(const DeviceGraph &g, Side by, const float *in, int64_t row,
                  float *out, cudaStream_t stream);
Status scatterMin(const DeviceGraph &g, Side by, const float *in, int64_t row,
                  float *out, cudaStream_t stream);
Status scatterLogSumExp(const DeviceGraph &g, Side by, const float *in,
                        int64_t row, float *out, cudaStream_t stream);
Status scatterSelectMax(const DeviceGraph &g, Side by, const float *in,
                        int64_t row, float *out, cudaStream_t stream);
Status scatterSelectMin(const DeviceGraph &g, Side by, const float *in,
                        int64_t row, float *out, cudaStream_t stream);
Status edgeSoftmax(const DeviceGraph &g, Side by, const float *in, int64_t row,
                   float *out, cudaStream_t stream);

Status readoutSum(const DeviceBatchedGraph &g, const float *in, int64_t n,
                  int64_t row, float *out, cudaStream_t stream);
Status readoutMean(const DeviceBatchedGraph &g, const float *in, int64_t n,
                   int64_t row, float *out, cudaStream_t stream);
Status readoutMax(const DeviceBatchedGraph &g, const float *in, int64_t n,
                  int64_t row, float *out, cudaStream_t stream);
Status readoutMin(const DeviceBatchedGraph &g, const float *in, int64_t n,
                  int64_t row, float *out, cudaStream_t stream);
Status readoutSelectMax(const DeviceBatchedGraph &g, const float *in, int64_t n,
                        int64_t row, float *out, cudaStream_t stream);
Status readoutSelectMin(const DeviceBatchedGraph &g, const float *in, int64_t n,
                        int64_t row, float *out, cudaStream_t stream);
Status broadcastGraphs(const DeviceBatchedGraph &g, const float *in, int64_t n,
                       int64_t row, float *out, cudaStream_t stream);

} // namespace gnnc::rt::cuda

#endif // GNNC_RUNTIME_CUDA_DEVICEOPS_H
