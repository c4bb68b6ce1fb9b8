//===- DeviceOps.cu - Device operations of generated CUDA's host side -----===//
//
// Part of gnnc. Each operation computes what its namesake in
// runtime/lib/Ops.cpp computes (the reference interpreter's semantics: the
// first edge / vertex / element wins a tie of max and min, an empty
// group gives 0), on device memory, queued on a stream:
//
//   - elementwise maths with NumPy broadcasting: grid-stride kernels;
//   - matmul, matmulT (a transposed operand read in place, CUBLAS_OP_T):
//     cublasSgemm on a cuBLAS handle of the calling thread and
//     device, in FP32 (CUBLAS_DEFAULT_MATH: no TF32), with a workspace of
//     the stream's own: cuBLAS is bitwise reproducible only while one
//     stream uses a workspace, and a handle's default workspace is shared
//     by every stream the handle runs on. The workspace is made by the
//     stream's first matmul (or by prepareCapture, StepGraph.h, before a
//     capture, so that a captured matmul allocates nothing);
//   - reductions of the middle axis of [outer, len, inner]: one thread per
//     output element adding the axis in order (the host's order) when the
//     axis is short; for a long axis, partial results of chunks of
//     kChunk elements in order, then their combination in order (two
//     kernels, scratch from the caller); a device-wide reduction of a
//     whole tensor (outer = inner = 1) with CUB (DeviceReduce Sum / Max /
//     Min / ArgMax / ArgMin);
//   - graph operations over the CSR (by destination) or the CSC (by
//     source), one thread per row and element walking the row's edges in
//     order; readouts over the members of each graph (DeviceBatchedGraph).
//
// Every edge belongs to one row of each layout and every vertex to one
// graph, so every thread writes its own outputs: no atomics, and results
// that do not depend on timing.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include "gnnc/runtime/cuda/Kernel.cuh"
#include "gnnc/runtime/cuda/StepGraph.h"

#include <cub/cub.cuh>
#include <cublas_v2.h>

#include <algorithm>
#include <cfloat>
#include <climits>
#include <cmath>
#include <map>
#include <string>

// (No using-directive: `cuda` would clash with libcu++'s ::cuda in the
// code nvcc generates.)
namespace gnnc::rt::cuda {

namespace {

constexpr int kThreads = 256;
/// Elements of the reduced axis per partial result of a long reduction.
constexpr int64_t kChunk = 256;

unsigned gridFor(int64_t n) {
  return static_cast<unsigned>(std::min<int64_t>(
      std::max<int64_t>((n + kThreads - 1) / kThreads, 1), 65535));
}

#define GNNC_GRID_STRIDE(i, n)                                                 \
  for (int64_t i =                                                             \
           blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;        \
       i < (n); i += static_cast<int64_t>(gridDim.x) * blockDim.x)

Status launched(const char *what) {
  return toStatus(cudaGetLastError(), what, __FILE__, __LINE__);
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

__global__ void fillKernel(float *out, int64_t n, float value) {
  GNNC_GRID_STRIDE(i, n) out[i] = value;
}

enum class Unary {
  Neg,
  Exp,
  Log,
  Sqrt,
  Rsqrt,
  Abs,
  Relu,
  Sigmoid,
  Tanh,
  Gelu,
  Erf,
  Sin,
  Cos,
  Elu,
  LeakyRelu
};

__device__ __forceinline__ float applyUnary(Unary fn, float v, float alpha) {
  switch (fn) {
  case Unary::Neg:
    return -v;
  case Unary::Exp:
    return expf(v);
  case Unary::Log:
    return logf(v);
  case Unary::Sqrt:
    return sqrtf(v);
  case Unary::Rsqrt:
    return 1.0f / sqrtf(v);
  case Unary::Abs:
    return fabsf(v);
  case Unary::Relu: // a NaN is not <= 0 and passes through
    return v <= 0.0f ? 0.0f : v;
  case Unary::Sigmoid:
    return 1.0f / (1.0f + expf(-v));
  case Unary::Tanh:
    return tanhf(v);
  case Unary::Gelu:
    return 0.5f * v * (1.0f + erff(v / sqrtf(2.0f)));
  case Unary::Erf:
    return erff(v);
  case Unary::Sin:
    return sinf(v);
  case Unary::Cos:
    return cosf(v);
  case Unary::Elu: // a NaN takes the second branch and stays a NaN
    return v > 0.0f ? v : alpha * (expf(v) - 1.0f);
  case Unary::LeakyRelu:
    return v > 0.0f ? v : alpha * v;
  }
  return v;
}

__global__ void unaryKernel(Unary fn, const float *x, float *y, int64_t n,
                            float alpha) {
  GNNC_GRID_STRIDE(i, n) y[i] = applyUnary(fn, x[i], alpha);
}

Status unary(Unary fn, const float *x, float *y, int64_t n, float alpha,
             cudaStream_t stream) {
  if (n <= 0)
    return Status::success();
  unaryKernel<<<gridFor(n), kThreads, 0, stream>>>(fn, x, y, n, alpha);
  return launched("unary operation");
}

enum class Binary {
  Add,
  Sub,
  Mul,
  Div,
  Max,
  Min,
  Pow,
  Gt,
  Ge,
  Eq,
  Ne,
  Mask,
  First
};

__device__ __forceinline__ float applyBinary(Binary fn, float a, float b) {
  switch (fn) {
  case Binary::Add:
    return a + b;
  case Binary::Sub:
    return a - b;
  case Binary::Mul:
    return a * b;
  case Binary::Div:
    return a / b;
  // torch.maximum / torch.minimum: a NaN on either side gives a NaN,
  // otherwise std::max / std::min (a on a tie).
  case Binary::Max:
    return a < b || b != b ? b : a;
  case Binary::Min:
    return b < a || b != b ? b : a;
  case Binary::Pow:
    return powf(a, b);
  case Binary::Gt:
    return a > b ? 1.0f : 0.0f;
  case Binary::Ge:
    return a >= b ? 1.0f : 0.0f;
  case Binary::Eq:
    return a == b ? 1.0f : 0.0f;
  case Binary::Ne:
    return a != b ? 1.0f : 0.0f;
  case Binary::Mask:
    return a != 0.0f ? b : 0.0f;
  case Binary::First:
    return a;
  }
  return a;
}

/// The shape of the result and the strides of both operands (0 on a
/// broadcast axis), by value.
struct Broadcast {
  int rank = 0;
  int64_t dims[kMaxRank] = {};
  int64_t strideA[kMaxRank] = {};
  int64_t strideB[kMaxRank] = {};

  /// The operands' offsets of element `i` of the result.
  __device__ void offsets(int64_t i, int64_t &offA, int64_t &offB) const {
    offA = offB = 0;
    for (int d = rank - 1; d >= 0; --d) {
      int64_t index = i % dims[d];
      i /= dims[d];
      offA += index * strideA[d];
      offB += index * strideB[d];
    }
  }
};

__global__ void binaryKernel(Binary fn, const float *a, const float *b,
                             float *out, int64_t n, Broadcast s) {
  GNNC_GRID_STRIDE(i, n) {
    int64_t offA, offB;
    s.offsets(i, offA, offB);
    out[i] = applyBinary(fn, a[offA], b[offB]);
  }
}

__global__ void binarySameKernel(Binary fn, const float *a, const float *b,
                                 float *out, int64_t n) {
  GNNC_GRID_STRIDE(i, n) out[i] = applyBinary(fn, a[i], b[i]);
}

/// The strides of `sa` and `sb` broadcast to `so` (equal ranks).
Broadcast broadcastOf(const Shape &sa, const Shape &sb, const Shape &so) {
  Broadcast s;
  s.rank = so.rank;
  int64_t accA = 1, accB = 1;
  for (int d = so.rank - 1; d >= 0; --d) {
    s.dims[d] = so.dims[d];
    s.strideA[d] = sa.dims[d] == 1 ? 0 : accA;
    s.strideB[d] = sb.dims[d] == 1 ? 0 : accB;
    accA *= sa.dims[d];
    accB *= sb.dims[d];
  }
  return s;
}

/// Whether `sa` and `sb` broadcast to `so`: equal ranks, each axis 1 or
/// that of `so`.
bool broadcasts(const Shape &sa, const Shape &sb, const Shape &so) {
  if (so.rank > kMaxRank || sa.rank != so.rank || sb.rank != so.rank)
    return false;
  for (int d = 0; d < so.rank; ++d)
    if ((sa.dims[d] != 1 && sa.dims[d] != so.dims[d]) ||
        (sb.dims[d] != 1 && sb.dims[d] != so.dims[d]))
      return false;
  return true;
}

Status binary(Binary fn, const float *a, const Shape &sa, const float *b,
              const Shape &sb, float *out, const Shape &so,
              cudaStream_t stream) {
  int64_t n = so.numElements();
  if (n <= 0)
    return Status::success();
  if (so.rank > kMaxRank || sa.rank != so.rank || sb.rank != so.rank)
    return Status::error("broadcast: the shapes have different ranks");
  bool same = true;
  for (int d = 0; d < so.rank; ++d)
    same = same && sa.dims[d] == so.dims[d] && sb.dims[d] == so.dims[d];
  if (same) {
    binarySameKernel<<<gridFor(n), kThreads, 0, stream>>>(fn, a, b, out, n);
    return launched("elementwise operation");
  }
  binaryKernel<<<gridFor(n), kThreads, 0, stream>>>(fn, a, b, out, n,
                                                    broadcastOf(sa, sb, so));
  return launched("elementwise operation");
}

/// `out = x + y * z` with the strides of x (as a, against itself) and of y
/// and z; the product is rounded first (__fmul_rn is never contracted).
__global__ void addMulKernel(const float *x, const float *y, const float *z,
                             float *out, int64_t n, Broadcast sx,
                             Broadcast syz) {
  GNNC_GRID_STRIDE(i, n) {
    int64_t offX, unused, offY, offZ;
    sx.offsets(i, offX, unused);
    syz.offsets(i, offY, offZ);
    out[i] = x[offX] + __fmul_rn(y[offY], z[offZ]);
  }
}

__global__ void dropoutKernel(const float *in, float *out, int64_t n,
                              uint64_t seed, uint64_t threshold, float scale) {
  GNNC_GRID_STRIDE(i, n) {
    float keep =
        dropoutKeep(true, seed, static_cast<uint64_t>(i), threshold, scale);
    out[i] = keep > 0.0f ? in[i] * keep : 0.0f;
  }
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

enum class Reduce { Sum, Mean, Max, Min, SelectMax, SelectMin };

/// Whether `x` replaces the running extreme `best` (strict: ties keep the
/// first).
__device__ __forceinline__ bool better(Reduce fn, float x, float best) {
  return fn == Reduce::Max || fn == Reduce::SelectMax ? x > best : x < best;
}

/// Reads the elements of a reduction's input by flat index: a tensor, or
/// the broadcast product of two (mulReduceSum), each product rounded
/// before it is added (__fmul_rn is never contracted into an FMA), as mul
/// then reduceSum round it.
struct TensorReader {
  const float *in;
  __device__ __forceinline__ float operator()(int64_t i) const {
    return in[i];
  }
};
struct ProductReader {
  const float *a, *b;
  Broadcast s;
  __device__ float operator()(int64_t i) const {
    int64_t offA, offB;
    s.offsets(i, offA, offB);
    return __fmul_rn(a[offA], b[offB]);
  }
};

/// The reduction of elements [from, to) of lane (o, i), in order: the sum,
/// or the extreme and its index.
template <typename Reader>
__device__ void reduceRange(Reduce fn, Reader in, int64_t len, int64_t inner,
                            int64_t o, int64_t i, int64_t from, int64_t to,
                            float &value, int64_t &index) {
  const int64_t base = o * len * inner + i;
  if (fn == Reduce::Sum || fn == Reduce::Mean) {
    float acc = 0.0f;
    for (int64_t j = from; j < to; ++j)
      acc += in(base + j * inner);
    value = acc;
    index = from;
    return;
  }
  value = in(base + from * inner);
  index = from;
  for (int64_t j = from + 1; j < to; ++j) {
    float x = in(base + j * inner);
    if (better(fn, x, value)) {
      value = x;
      index = j;
    }
  }
}

/// Writes the result of lane (o, i): the value (mean: divided by len), or
/// the 0/1 mask of the extreme.
__device__ void reduceWrite(Reduce fn, float *out, int64_t len, int64_t inner,
                            int64_t o, int64_t i, float value, int64_t index) {
  if (!(fn == Reduce::SelectMax || fn == Reduce::SelectMin)) {
    out[o * inner + i] =
        fn == Reduce::Mean ? value / static_cast<float>(len) : value;
    return;
  }
  for (int64_t j = 0; j < len; ++j)
    out[(o * len + j) * inner + i] = j == index ? 1.0f : 0.0f;
}

/// One thread per lane (o, i), the whole axis in order.
template <typename Reader>
__global__ void reduceDirect(Reduce fn, Reader in, float *out,
                             int64_t outer, int64_t len, int64_t inner) {
  GNNC_GRID_STRIDE(t, outer * inner) {
    int64_t o = t / inner, i = t % inner;
    float value = 0.0f;
    int64_t index = 0;
    if (len > 0)
      reduceRange(fn, in, len, inner, o, i, 0, len, value, index);
    reduceWrite(fn, out, len, inner, o, i, value, index);
  }
}

/// Partial results: one thread per (o, chunk, i).
template <typename Reader>
__global__ void reducePartial(Reduce fn, Reader in, int64_t outer,
                              int64_t len, int64_t inner, int64_t chunks,
                              float *values, int64_t *indices) {
  GNNC_GRID_STRIDE(t, outer * chunks * inner) {
    int64_t i = t % inner, c = t / inner % chunks, o = t / inner / chunks;
    int64_t from = c * kChunk, to = len < from + kChunk ? len : from + kChunk;
    float value;
    int64_t index;
    reduceRange(fn, in, len, inner, o, i, from, to, value, index);
    values[t] = value;
    indices[t] = index;
  }
}

/// The partial results of each lane combined in chunk order.
__global__ void reduceCombine(Reduce fn, const float *values,
                              const int64_t *indices, float *out, int64_t outer,
                              int64_t len, int64_t inner, int64_t chunks) {
  GNNC_GRID_STRIDE(t, outer * inner) {
    int64_t o = t / inner, i = t % inner;
    const int64_t base = o * chunks * inner + i;
    float value = values[base];
    int64_t index = indices[base];
    for (int64_t c = 1; c < chunks; ++c) {
      float x = values[base + c * inner];
      if (fn == Reduce::Sum || fn == Reduce::Mean) {
        value += x;
      } else if (better(fn, x, value)) {
        value = x;
        index = indices[base + c * inner];
      }
    }
    reduceWrite(fn, out, len, inner, o, i, value, index);
  }
}

__global__ void scaleKernel(float *out, int64_t n, float factor) {
  GNNC_GRID_STRIDE(i, n) out[i] /= factor;
}

__global__ void markKernel(float *out, const int *index) { out[*index] = 1.0f; }

bool wholeTensor(int64_t outer, int64_t len, int64_t inner) {
  return outer == 1 && inner == 1 && len > kChunk;
}
int64_t chunksOf(int64_t len) { return (len + kChunk - 1) / kChunk; }

/// CUB's scratch for a device-wide reduction of `len` floats (0 when it
/// cannot tell, which the reduction then reports).
std::size_t cubBytes(int64_t len) {
  std::size_t bytes = 0, b = 0;
  const float *in = nullptr;
  float *value = nullptr;
  int *index = nullptr;
  int n = static_cast<int>(len);
  if (cub::DeviceReduce::Sum(nullptr, b, in, value, n) == cudaSuccess)
    bytes = std::max(bytes, b);
  if (cub::DeviceReduce::Max(nullptr, b, in, value, n) == cudaSuccess)
    bytes = std::max(bytes, b);
  if (cub::DeviceReduce::Min(nullptr, b, in, value, n) == cudaSuccess)
    bytes = std::max(bytes, b);
  if (cub::DeviceReduce::ArgMax(nullptr, b, in, value, index,
                                static_cast<int64_t>(n)) == cudaSuccess)
    bytes = std::max(bytes, b);
  if (cub::DeviceReduce::ArgMin(nullptr, b, in, value, index,
                                static_cast<int64_t>(n)) == cudaSuccess)
    bytes = std::max(bytes, b);
  (void)cudaGetLastError();
  return bytes;
}

/// The reduction of [outer, len, inner] read through `in`, lane by lane:
/// chunks of a long axis first when it has more than kChunk elements.
template <typename Reader>
Status reduceLanes(Reduce fn, Reader in, float *out, int64_t outer,
                   int64_t len, int64_t inner, void *scratch,
                   cudaStream_t stream) {
  int64_t lanes = outer * inner;
  if (len > kChunk) {
    int64_t chunks = chunksOf(len);
    float *values = static_cast<float *>(scratch);
    int64_t *indices = reinterpret_cast<int64_t *>(
        static_cast<char *>(scratch) +
        alignUp(static_cast<int64_t>(sizeof(float)) * outer * chunks * inner));
    reducePartial<<<gridFor(outer * chunks * inner), kThreads, 0, stream>>>(
        fn, in, outer, len, inner, chunks, values, indices);
    GNNC_TRY(launched("reduction"));
    reduceCombine<<<gridFor(lanes), kThreads, 0, stream>>>(
        fn, values, indices, out, outer, len, inner, chunks);
    return launched("reduction");
  }
  reduceDirect<<<gridFor(lanes), kThreads, 0, stream>>>(fn, in, out, outer, len,
                                                        inner);
  return launched("reduction");
}

Status reduce(Reduce fn, const float *in, float *out, int64_t outer,
              int64_t len, int64_t inner, void *scratch, cudaStream_t stream) {
  int64_t lanes = outer * inner;
  if (lanes <= 0)
    return Status::success();
  if (len > INT_MAX)
    return Status::error("reduction: an axis of more than 2^31 elements");
  if (wholeTensor(outer, len, inner)) {
    // Device-wide: CUB, then the mean's division or the select's mask.
    std::size_t bytes = cubBytes(len);
    char *temp = static_cast<char *>(scratch) + 256;
    float *value = static_cast<float *>(scratch);
    int *index = reinterpret_cast<int *>(static_cast<char *>(scratch) + 128);
    int n = static_cast<int>(len);
    switch (fn) {
    case Reduce::Sum:
    case Reduce::Mean:
      GNNC_CUDA_CHECK(cub::DeviceReduce::Sum(temp, bytes, in, out, n, stream));
      if (fn == Reduce::Mean) {
        scaleKernel<<<1, 1, 0, stream>>>(out, 1, static_cast<float>(len));
        GNNC_TRY(launched("reduceMean"));
      }
      return Status::success();
    case Reduce::Max:
      GNNC_CUDA_CHECK(cub::DeviceReduce::Max(temp, bytes, in, out, n, stream));
      return Status::success();
    case Reduce::Min:
      GNNC_CUDA_CHECK(cub::DeviceReduce::Min(temp, bytes, in, out, n, stream));
      return Status::success();
    case Reduce::SelectMax:
    case Reduce::SelectMin:
      if (fn == Reduce::SelectMax)
        GNNC_CUDA_CHECK(cub::DeviceReduce::ArgMax(
            temp, bytes, in, value, index, static_cast<int64_t>(n), stream));
      else
        GNNC_CUDA_CHECK(cub::DeviceReduce::ArgMin(
            temp, bytes, in, value, index, static_cast<int64_t>(n), stream));
      fillKernel<<<gridFor(len), kThreads, 0, stream>>>(out, len, 0.0f);
      GNNC_TRY(launched("reduceSelect"));
      markKernel<<<1, 1, 0, stream>>>(out, index);
      return launched("reduceSelect");
    }
  }
  return reduceLanes(fn, TensorReader{in}, out, outer, len, inner, scratch,
                     stream);
}

template <bool Log>
__global__ void softmaxKernel(const float *in, float *out, int64_t outer,
                              int64_t len, int64_t inner) {
  GNNC_GRID_STRIDE(t, outer * inner) {
    int64_t o = t / inner, i = t % inner;
    const float *x = in + o * len * inner + i;
    float *y = out + o * len * inner + i;
    float mx = x[0];
    for (int64_t j = 1; j < len; ++j)
      mx = fmaxf(mx, x[j * inner]);
    float sum = 0.0f;
    for (int64_t j = 0; j < len; ++j)
      sum += expf(x[j * inner] - mx);
    for (int64_t j = 0; j < len; ++j)
      y[j * inner] =
          Log ? x[j * inner] - mx - logf(sum) : expf(x[j * inner] - mx) / sum;
  }
}

__global__ void transposeKernel(const float *in, float *out, int64_t batch,
                                int64_t a, int64_t b) {
  GNNC_GRID_STRIDE(t, batch * a * b) {
    int64_t r = t / (a * b), i = t / b % a, j = t % b;
    out[r * a * b + j * a + i] = in[t];
  }
}

//===----------------------------------------------------------------------===//
// Graph operations
//===----------------------------------------------------------------------===//

__global__ void gatherKernel(const int32_t *index, int64_t count,
                             const float *in, int64_t row, float *out) {
  GNNC_GRID_STRIDE(t, count * row) {
    int64_t e = t / row, j = t % row;
    out[t] = in[static_cast<int64_t>(index[e]) * row + j];
  }
}

__global__ void splatKernel(const float *rowIn, int64_t rowSize, int64_t count,
                            float *out) {
  GNNC_GRID_STRIDE(t, count * rowSize) out[t] = rowIn[t % rowSize];
}

enum class Scatter { Sum, Mean, Max, Min, LogSumExp };

/// One thread per (row v of the layout, element j): the row's edges in
/// order.
__global__ void scatterKernel(Scatter fn, KernelGraph g, const float *in,
                              int64_t row, float *out) {
  GNNC_GRID_STRIDE(t, g.count * row) {
    int64_t v = t / row, j = t % row;
    int64_t begin = g.ptr[v], end = g.ptr[v + 1];
    float acc = 0.0f;
    for (int64_t k = begin; k < end; ++k) {
      float x = in[static_cast<int64_t>(g.eid[k]) * row + j];
      bool first = k == begin;
      switch (fn) {
      case Scatter::Sum:
      case Scatter::Mean:
        acc += x;
        break;
      case Scatter::Max:
      case Scatter::LogSumExp:
        acc = first || x > acc ? x : acc;
        break;
      case Scatter::Min:
        acc = first || x < acc ? x : acc;
        break;
      }
    }
    if (end > begin) {
      if (fn == Scatter::Mean) {
        acc /= static_cast<float>(end - begin);
      } else if (fn == Scatter::LogSumExp && acc != -INFINITY) {
        // (A row of -inf only keeps -inf: log 0, not -inf + log(NaN).)
        float sum = 0.0f;
        for (int64_t k = begin; k < end; ++k)
          sum += expf(in[static_cast<int64_t>(g.eid[k]) * row + j] - acc);
        acc = acc + logf(sum);
      }
    }
    out[t] = acc;
  }
}

__global__ void scatterSelectKernel(bool max, KernelGraph g, const float *in,
                                    int64_t row, float *out) {
  GNNC_GRID_STRIDE(t, g.count * row) {
    int64_t v = t / row, j = t % row;
    int64_t begin = g.ptr[v], end = g.ptr[v + 1];
    if (begin == end)
      continue;
    int64_t best = g.eid[begin];
    for (int64_t k = begin + 1; k < end; ++k) {
      float x = in[static_cast<int64_t>(g.eid[k]) * row + j];
      float b = in[best * row + j];
      if (max ? x > b : x < b)
        best = g.eid[k];
    }
    out[best * row + j] = 1.0f;
  }
}

__global__ void edgeSoftmaxKernel(KernelGraph g, const float *in, int64_t row,
                                  float *out) {
  GNNC_GRID_STRIDE(t, g.count * row) {
    int64_t v = t / row, j = t % row;
    int64_t begin = g.ptr[v], end = g.ptr[v + 1];
    if (begin == end)
      continue;
    float mx = in[static_cast<int64_t>(g.eid[begin]) * row + j];
    for (int64_t k = begin; k < end; ++k)
      mx = fmaxf(mx, in[static_cast<int64_t>(g.eid[k]) * row + j]);
    // A row of -inf: every exp is 0 (not NaN) and so is every weight.
    if (mx == -INFINITY)
      mx = 0.0f;
    float sum = 0.0f;
    for (int64_t k = begin; k < end; ++k)
      sum += expf(in[static_cast<int64_t>(g.eid[k]) * row + j] - mx);
    for (int64_t k = begin; k < end; ++k) {
      int64_t at = static_cast<int64_t>(g.eid[k]) * row + j;
      out[at] = sum == 0.0f ? 0.0f : expf(in[at] - mx) / sum;
    }
  }
}

__global__ void degreeKernel(KernelGraph g, float *out) {
  GNNC_GRID_STRIDE(v, g.count)
  out[v] = static_cast<float>(g.ptr[v + 1] - g.ptr[v]);
}

enum class Readout { Sum, Mean, Max, Min };

/// One thread per (graph b, element j): its vertices in increasing id
/// order, as the host's loop over the vertices meets them.
__global__ void readoutKernel(Readout fn, const int64_t *memberPtr,
                              const int32_t *members, int64_t numGraphs,
                              const float *in, int64_t row, float *out) {
  GNNC_GRID_STRIDE(t, numGraphs * row) {
    int64_t b = t / row, j = t % row;
    int64_t begin = memberPtr[b], end = memberPtr[b + 1];
    float acc = 0.0f;
    for (int64_t k = begin; k < end; ++k) {
      float x = in[static_cast<int64_t>(members[k]) * row + j];
      switch (fn) {
      case Readout::Sum:
      case Readout::Mean:
        acc += x;
        break;
      case Readout::Max:
        acc = k == begin ? x : fmaxf(acc, x);
        break;
      case Readout::Min:
        acc = k == begin ? x : fminf(acc, x);
        break;
      }
    }
    if (fn == Readout::Mean && end > begin)
      acc /= static_cast<float>(end - begin);
    out[t] = acc;
  }
}

__global__ void readoutSelectKernel(bool max, const int64_t *memberPtr,
                                    const int32_t *members, int64_t numGraphs,
                                    const float *in, int64_t row, float *out) {
  GNNC_GRID_STRIDE(t, numGraphs * row) {
    int64_t b = t / row, j = t % row;
    int64_t begin = memberPtr[b], end = memberPtr[b + 1];
    if (begin == end)
      continue;
    int64_t best = members[begin];
    for (int64_t k = begin + 1; k < end; ++k) {
      float x = in[static_cast<int64_t>(members[k]) * row + j];
      float c = in[best * row + j];
      if (max ? x > c : x < c)
        best = members[k];
    }
    out[best * row + j] = 1.0f;
  }
}

__global__ void broadcastGraphsKernel(const int32_t *graphOf, const float *in,
                                      int64_t n, int64_t row, float *out) {
  GNNC_GRID_STRIDE(t, n * row) {
    int64_t v = t / row, j = t % row;
    out[t] = in[static_cast<int64_t>(graphOf[v]) * row + j];
  }
}

__global__ void graphSizesKernel(const int64_t *memberPtr, int64_t numGraphs,
                                 float *out) {
  GNNC_GRID_STRIDE(b, numGraphs)
  out[b] = static_cast<float>(memberPtr[b + 1] - memberPtr[b]);
}

const KernelGraph &layoutOf(const DeviceGraph &g, Side by) {
  return by == Side::Dst ? g.byDst() : g.bySrc();
}

Status scatter(Scatter fn, const DeviceGraph &g, Side by, const float *in,
               int64_t row, float *out, cudaStream_t stream) {
  const KernelGraph &k = layoutOf(g, by);
  if (k.count * row <= 0)
    return Status::success();
  scatterKernel<<<gridFor(k.count * row), kThreads, 0, stream>>>(fn, k, in, row,
                                                                 out);
  return launched("scatter");
}

Status scatterSelect(bool max, const DeviceGraph &g, Side by, const float *in,
                     int64_t row, float *out, cudaStream_t stream) {
  GNNC_TRY(fill(out, g.numEdges() * row, 0.0f, stream));
  const KernelGraph &k = layoutOf(g, by);
  if (k.count * row <= 0)
    return Status::success();
  scatterSelectKernel<<<gridFor(k.count * row), kThreads, 0, stream>>>(
      max, k, in, row, out);
  return launched("scatterSelect");
}

Status readout(Readout fn, const DeviceBatchedGraph &g, const float *in,
               int64_t row, float *out, cudaStream_t stream) {
  if (g.numGraphs * row <= 0)
    return Status::success();
  readoutKernel<<<gridFor(g.numGraphs * row), kThreads, 0, stream>>>(
      fn, g.memberPtr, g.members, g.numGraphs, in, row, out);
  return launched("readout");
}

Status readoutSelect(bool max, const DeviceBatchedGraph &g, const float *in,
                     int64_t n, int64_t row, float *out, cudaStream_t stream) {
  GNNC_TRY(fill(out, n * row, 0.0f, stream));
  if (g.numGraphs * row <= 0)
    return Status::success();
  readoutSelectKernel<<<gridFor(g.numGraphs * row), kThreads, 0, stream>>>(
      max, g.memberPtr, g.members, g.numGraphs, in, row, out);
  return launched("readoutSelect");
}

//===----------------------------------------------------------------------===//
// cuBLAS
//===----------------------------------------------------------------------===//

/// A cuBLAS handle, and the workspace of every stream it has run on (or
/// that prepareCapture prepared), each of `workspaceBytes` of device
/// memory, kept until the thread ends.
struct BlasHandle {
  cublasHandle_t handle = nullptr;
  std::size_t workspaceBytes = 0;
  std::map<cudaStream_t, void *> workspaces;
};

/// The cuBLAS handles of this thread, one per device.
struct BlasHandles {
  std::map<int, BlasHandle> byDevice;
  ~BlasHandles() {
    for (auto &[device, h] : byDevice) {
      (void)cublasDestroy(h.handle);
      for (auto &[stream, workspace] : h.workspaces)
        (void)cudaFree(workspace);
    }
  }
};

const char *blasError(cublasStatus_t s) {
  switch (s) {
  case CUBLAS_STATUS_NOT_INITIALIZED:
    return "CUBLAS_STATUS_NOT_INITIALIZED";
  case CUBLAS_STATUS_ALLOC_FAILED:
    return "CUBLAS_STATUS_ALLOC_FAILED";
  case CUBLAS_STATUS_INVALID_VALUE:
    return "CUBLAS_STATUS_INVALID_VALUE";
  case CUBLAS_STATUS_ARCH_MISMATCH:
    return "CUBLAS_STATUS_ARCH_MISMATCH";
  case CUBLAS_STATUS_EXECUTION_FAILED:
    return "CUBLAS_STATUS_EXECUTION_FAILED";
  case CUBLAS_STATUS_INTERNAL_ERROR:
    return "CUBLAS_STATUS_INTERNAL_ERROR";
  default:
    return "a cuBLAS error";
  }
}

/// The workspace cuBLAS recommends for a device of compute capability
/// `major` (the size of its own default workspace): 32 MiB on Hopper and
/// later, 4 MiB before.
std::size_t blasWorkspaceBytes(int major) {
  return (major >= 9 ? 32 : 4) * std::size_t{1} << 20;
}

/// The handle of this thread and the current device, created on first use.
Status blasHandle(BlasHandle *&out) {
  thread_local BlasHandles handles;
  int device = 0;
  GNNC_CUDA_CHECK(cudaGetDevice(&device));
  auto it = handles.byDevice.find(device);
  if (it == handles.byDevice.end()) {
    int major = 0;
    GNNC_CUDA_CHECK(cudaDeviceGetAttribute(
        &major, cudaDevAttrComputeCapabilityMajor, device));
    BlasHandle h;
    h.workspaceBytes = blasWorkspaceBytes(major);
    if (cublasStatus_t s = cublasCreate(&h.handle); s != CUBLAS_STATUS_SUCCESS)
      return Status::error(std::string("cublasCreate: ") + blasError(s));
    (void)cublasSetMathMode(h.handle, CUBLAS_DEFAULT_MATH);
    it = handles.byDevice.emplace(device, std::move(h)).first;
  }
  out = &it->second;
  return Status::success();
}

/// The workspace of `stream` in `blas`, made on the stream's first use. A
/// stream that is being captured must have one already (an allocation
/// cannot be captured).
Status streamWorkspace(BlasHandle &blas, cudaStream_t stream, void *&out) {
  if (auto it = blas.workspaces.find(stream); it != blas.workspaces.end()) {
    out = it->second;
    return Status::success();
  }
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  GNNC_CUDA_CHECK(cudaStreamIsCapturing(stream, &capture));
  if (capture != cudaStreamCaptureStatusNone)
    return Status::error(
        "matmul: the stream is captured but has no cuBLAS workspace: call "
        "rt::cuda::prepareCapture(stream) before the capture (StepGraph's "
        "capture does)");
  void *workspace = nullptr;
  GNNC_CUDA_CHECK(cudaMalloc(&workspace, blas.workspaceBytes));
  blas.workspaces.emplace(stream, workspace);
  out = workspace;
  return Status::success();
}

/// One block per column j of `x` ([rows, cols]): the column's mean, then
/// its unbiased variance, summed in double in a fixed order (each thread a
/// strided range, then CUB's block reduction), blended into the running
/// statistics by thread 0.
__global__ void batchStatsKernel(const float *x, int64_t rows, int64_t cols,
                                 float *runningMean, float *runningVar,
                                 double momentum) {
  using BlockSum = cub::BlockReduce<double, kThreads>;
  __shared__ typename BlockSum::TempStorage temp;
  __shared__ double mean;
  int64_t j = blockIdx.x;
  double part = 0.0;
  for (int64_t i = threadIdx.x; i < rows; i += kThreads)
    part += static_cast<double>(x[i * cols + j]);
  double sum = BlockSum(temp).Sum(part);
  if (threadIdx.x == 0)
    mean = sum / static_cast<double>(rows);
  __syncthreads();
  double mu = mean;
  part = 0.0;
  for (int64_t i = threadIdx.x; i < rows; i += kThreads) {
    double d = static_cast<double>(x[i * cols + j]) - mu;
    part += d * d;
  }
  double squares = BlockSum(temp).Sum(part);
  if (threadIdx.x == 0) {
    double var = squares / static_cast<double>(rows - 1);
    runningMean[j] =
        static_cast<float>((1 - momentum) * runningMean[j] + momentum * mu);
    runningVar[j] =
        static_cast<float>((1 - momentum) * runningVar[j] + momentum * var);
  }
}

} // namespace

//===----------------------------------------------------------------------===//
// The operations
//===----------------------------------------------------------------------===//

Status updateBatchStats(const float *x, int64_t rows, int64_t cols,
                        float *runningMean, float *runningVar, double momentum,
                        bool training, cudaStream_t stream) {
  if (!training || cols <= 0)
    return Status::success();
  if (rows < 2)
    return Status::error("batch_norm needs at least 2 rows in training, to "
                         "estimate the variance; got " +
                         std::to_string(rows));
  if (cols > INT_MAX)
    return Status::error("batch_norm: more than 2^31 columns");
  batchStatsKernel<<<static_cast<unsigned>(cols), kThreads, 0, stream>>>(
      x, rows, cols, runningMean, runningVar, momentum);
  return launched("updateBatchStats");
}

Status dropout(const float *in, float *out, int64_t n, double p, uint64_t seed,
               bool training, cudaStream_t stream) {
  if (!training || p <= 0)
    return copy(in, out, n, stream);
  if (n <= 0)
    return Status::success();
  uint64_t threshold =
      p >= 1.0 ? uint64_t(1) << 53
               : static_cast<uint64_t>(std::ceil(std::ldexp(p, 53)));
  float scale = p < 1.0 ? static_cast<float>(1.0 / (1.0 - p)) : 0.0f;
  dropoutKernel<<<gridFor(n), kThreads, 0, stream>>>(in, out, n, seed,
                                                     threshold, scale);
  return launched("dropout");
}

Status inDegree(const DeviceGraph &g, float *out, cudaStream_t stream) {
  if (g.numDst() <= 0)
    return Status::success();
  degreeKernel<<<gridFor(g.numDst()), kThreads, 0, stream>>>(g.byDst(), out);
  return launched("inDegree");
}

Status outDegree(const DeviceGraph &g, float *out, cudaStream_t stream) {
  if (g.numSrc() <= 0)
    return Status::success();
  degreeKernel<<<gridFor(g.numSrc()), kThreads, 0, stream>>>(g.bySrc(), out);
  return launched("outDegree");
}

Status graphSizes(const DeviceBatchedGraph &g, float *out,
                  cudaStream_t stream) {
  if (g.numGraphs <= 0)
    return Status::success();
  graphSizesKernel<<<gridFor(g.numGraphs), kThreads, 0, stream>>>(
      g.memberPtr, g.numGraphs, out);
  return launched("graphSizes");
}

Status fill(float *out, int64_t n, float value, cudaStream_t stream) {
  if (n <= 0)
    return Status::success();
  fillKernel<<<gridFor(n), kThreads, 0, stream>>>(out, n, value);
  return launched("fill");
}

Status copy(const float *in, float *out, int64_t n, cudaStream_t stream) {
  if (n > 0 && in != out)
    GNNC_CUDA_CHECK(cudaMemcpyAsync(out, in,
                                    static_cast<std::size_t>(n) * sizeof(float),
                                    cudaMemcpyDeviceToDevice, stream));
  return Status::success();
}

#define GNNC_UNARY(name, fn)                                                   \
  Status name(const float *x, float *y, int64_t n, cudaStream_t stream) {      \
    return unary(Unary::fn, x, y, n, 0.0f, stream);                            \
  }
GNNC_UNARY(neg, Neg)
GNNC_UNARY(exp, Exp)
GNNC_UNARY(log, Log)
GNNC_UNARY(sqrt, Sqrt)
GNNC_UNARY(rsqrt, Rsqrt)
GNNC_UNARY(abs, Abs)
GNNC_UNARY(relu, Relu)
GNNC_UNARY(sigmoid, Sigmoid)
GNNC_UNARY(tanh, Tanh)
GNNC_UNARY(gelu, Gelu)
GNNC_UNARY(erf, Erf)
GNNC_UNARY(sin, Sin)
GNNC_UNARY(cos, Cos)

Status elu(const float *x, float *y, int64_t n, float alpha,
           cudaStream_t stream) {
  return unary(Unary::Elu, x, y, n, alpha, stream);
}
Status leakyRelu(const float *x, float *y, int64_t n, float alpha,
                 cudaStream_t stream) {
  return unary(Unary::LeakyRelu, x, y, n, alpha, stream);
}

#define GNNC_BINARY(name, fn)                                                  \
  Status name(const float *a, const Shape &sa, const float *b,                 \
              const Shape &sb, float *out, const Shape &so,                    \
              cudaStream_t stream) {                                           \
    return binary(Binary::fn, a, sa, b, sb, out, so, stream);                  \
  }
GNNC_BINARY(add, Add)
GNNC_BINARY(sub, Sub)
GNNC_BINARY(mul, Mul)
GNNC_BINARY(div, Div)
GNNC_BINARY(max, Max)
GNNC_BINARY(min, Min)
GNNC_BINARY(pow, Pow)
GNNC_BINARY(gt, Gt)
GNNC_BINARY(ge, Ge)
GNNC_BINARY(eq, Eq)
GNNC_BINARY(ne, Ne)
GNNC_BINARY(mask, Mask)

Status broadcastTo(const float *in, const Shape &si, float *out,
                   const Shape &so, cudaStream_t stream) {
  return binary(Binary::First, in, si, in, si, out, so, stream);
}

Status matmul(const float *a, const float *w, float *out, int64_t rows,
              int64_t k, int64_t n, cudaStream_t stream) {
  return matmulT(a, false, w, false, out, rows, k, n, stream);
}

Status matmulT(const float *a, bool transA, const float *w, bool transW,
               float *out, int64_t rows, int64_t k, int64_t n,
               cudaStream_t stream) {
  if (rows <= 0 || n <= 0)
    return Status::success();
  if (k <= 0)
    return fill(out, rows * n, 0.0f, stream);
  if (rows > INT_MAX || k > INT_MAX || n > INT_MAX)
    return Status::error("matmul: a dimension of more than 2^31");
  BlasHandle *blas = nullptr;
  GNNC_TRY(blasHandle(blas));
  cublasHandle_t h = blas->handle;
  // The stream's own workspace, set after cublasSetStream (which goes back
  // to the handle's default workspace, shared by all its streams).
  void *workspace = nullptr;
  GNNC_TRY(streamWorkspace(*blas, stream, workspace));
  if (cublasStatus_t s = cublasSetStream(h, stream); s != CUBLAS_STATUS_SUCCESS)
    return Status::error(std::string("cublasSetStream: ") + blasError(s));
  if (cublasStatus_t s = cublasSetWorkspace(h, workspace, blas->workspaceBytes);
      s != CUBLAS_STATUS_SUCCESS)
    return Status::error(std::string("cublasSetWorkspace: ") + blasError(s));
  // Row-major out[rows, n] = op(a) @ op(w) is column-major
  // out^T[n, rows] = op(w)^T[n, k] @ op(a)^T[k, rows]. A row-major [r, c]
  // array is a column-major [c, r] one: w[k, n] is w^T as stored (no op,
  // leading dimension n), a w stored as [n, k] needs CUBLAS_OP_T (leading
  // dimension k); likewise a[rows, k] (k) and a stored as [k, rows]
  // (CUBLAS_OP_T, rows).
  const float one = 1.0f, zero = 0.0f;
  if (cublasStatus_t s = cublasSgemm(
          h, transW ? CUBLAS_OP_T : CUBLAS_OP_N,
          transA ? CUBLAS_OP_T : CUBLAS_OP_N, static_cast<int>(n),
          static_cast<int>(rows), static_cast<int>(k), &one, w,
          static_cast<int>(transW ? k : n), a,
          static_cast<int>(transA ? rows : k), &zero, out, static_cast<int>(n));
      s != CUBLAS_STATUS_SUCCESS)
    return Status::error(std::string("matmul: cublasSgemm: ") + blasError(s));
  return Status::success();
}

Status prepareCapture(cudaStream_t stream) {
  BlasHandle *blas = nullptr;
  GNNC_TRY(blasHandle(blas));
  void *workspace = nullptr;
  return streamWorkspace(*blas, stream, workspace);
}

std::size_t reduceScratchBytes(int64_t outer, int64_t len, int64_t inner) {
  if (outer * inner <= 0)
    return 0;
  if (wholeTensor(outer, len, inner))
    return alignUp(static_cast<int64_t>(256 + cubBytes(len)));
  if (len > kChunk) {
    int64_t partials = outer * chunksOf(len) * inner;
    return alignUp(static_cast<int64_t>(sizeof(float)) * partials) +
           alignUp(static_cast<int64_t>(sizeof(int64_t)) * partials);
  }
  return 0;
}

Status addMul(const float *x, const Shape &sx, const float *y, const Shape &sy,
              const float *z, const Shape &sz, float *out, const Shape &so,
              cudaStream_t stream) {
  int64_t n = so.numElements();
  if (n <= 0)
    return Status::success();
  if (!broadcasts(sx, sx, so) || !broadcasts(sy, sz, so))
    return Status::error("addMul: the shapes do not broadcast to the result");
  addMulKernel<<<gridFor(n), kThreads, 0, stream>>>(
      x, y, z, out, n, broadcastOf(sx, sx, so), broadcastOf(sy, sz, so));
  return launched("addMul");
}

std::size_t mulReduceScratchBytes(int64_t outer, int64_t len,
                                  int64_t inner) {
  std::size_t bytes = reduceScratchBytes(outer, len, inner);
  if (wholeTensor(outer, len, inner)) // the products, for CUB
    bytes += alignUp(static_cast<int64_t>(sizeof(float)) * len);
  return bytes;
}

Status mulReduceSum(const float *a, const Shape &sa, const float *b,
                    const Shape &sb, const Shape &product, float *out,
                    int64_t outer, int64_t len, int64_t inner, void *scratch,
                    cudaStream_t stream) {
  if (outer * inner <= 0)
    return Status::success();
  if (len <= 0)
    return fill(out, outer * inner, 0.0f, stream);
  if (!broadcasts(sa, sb, product) ||
      product.numElements() != outer * len * inner)
    return Status::error("mulReduceSum: the shapes do not broadcast to the "
                         "product [outer, len, inner]");
  if (len > INT_MAX)
    return Status::error("reduction: an axis of more than 2^31 elements");
  if (wholeTensor(outer, len, inner)) {
    // A device-wide sum: the products first, then CUB over them.
    float *products = reinterpret_cast<float *>(
        static_cast<char *>(scratch) + reduceScratchBytes(outer, len, inner));
    GNNC_TRY(mul(a, sa, b, sb, products, product, stream));
    return reduce(Reduce::Sum, products, out, outer, len, inner, scratch,
                  stream);
  }
  return reduceLanes(Reduce::Sum,
                     ProductReader{a, b, broadcastOf(sa, sb, product)}, out,
                     outer, len, inner, scratch, stream);
}

#define GNNC_REDUCE(name, fn)                                                  \
  Status name(const float *in, float *out, int64_t outer, int64_t len,         \
              int64_t inner, void *scratch, cudaStream_t stream) {             \
    return reduce(Reduce::fn, in, out, outer, len, inner, scratch, stream);    \
  }
GNNC_REDUCE(reduceSum, Sum)
GNNC_REDUCE(reduceMean, Mean)
GNNC_REDUCE(reduceMax, Max)
GNNC_REDUCE(reduceMin, Min)
GNNC_REDUCE(reduceSelectMax, SelectMax)
GNNC_REDUCE(reduceSelectMin, SelectMin)

Status softmax(const float *in, float *out, int64_t outer, int64_t len,
               int64_t inner, cudaStream_t stream) {
  if (len <= 0 || outer * inner <= 0)
    return Status::success();
  softmaxKernel<false><<<gridFor(outer * inner), kThreads, 0, stream>>>(
      in, out, outer, len, inner);
  return launched("softmax");
}

Status logSoftmax(const float *in, float *out, int64_t outer, int64_t len,
                  int64_t inner, cudaStream_t stream) {
  if (len <= 0 || outer * inner <= 0)
    return Status::success();
  softmaxKernel<true><<<gridFor(outer * inner), kThreads, 0, stream>>>(
      in, out, outer, len, inner);
  return launched("logSoftmax");
}

Status copyRows(const float *in, int64_t inStride, float *out,
                int64_t outStride, int64_t rows, int64_t width,
                cudaStream_t stream) {
  if (width <= 0 || rows <= 0)
    return Status::success();
  GNNC_CUDA_CHECK(cudaMemcpy2DAsync(
      out, static_cast<std::size_t>(outStride) * sizeof(float), in,
      static_cast<std::size_t>(inStride) * sizeof(float),
      static_cast<std::size_t>(width) * sizeof(float),
      static_cast<std::size_t>(rows), cudaMemcpyDeviceToDevice, stream));
  return Status::success();
}

Status transpose(const float *in, float *out, int64_t batch, int64_t a,
                 int64_t b, cudaStream_t stream) {
  if (batch * a * b <= 0)
    return Status::success();
  transposeKernel<<<gridFor(batch * a * b), kThreads, 0, stream>>>(in, out,
                                                                   batch, a, b);
  return launched("transpose");
}

Status gather(const int32_t *index, int64_t count, const float *in, int64_t row,
              float *out, cudaStream_t stream) {
  if (count * row <= 0)
    return Status::success();
  gatherKernel<<<gridFor(count * row), kThreads, 0, stream>>>(index, count, in,
                                                              row, out);
  return launched("gather");
}

Status splat(const float *row, int64_t rowSize, int64_t count, float *out,
             cudaStream_t stream) {
  if (count * rowSize <= 0)
    return Status::success();
  splatKernel<<<gridFor(count * rowSize), kThreads, 0, stream>>>(row, rowSize,
                                                                 count, out);
  return launched("splat");
}

#define GNNC_SCATTER(name, fn)                                                 \
  Status name(const DeviceGraph &g, Side by, const float *in, int64_t row,     \
              float *out, cudaStream_t stream) {                               \
    return scatter(Scatter::fn, g, by, in, row, out, stream);                  \
  }
GNNC_SCATTER(scatterSum, Sum)
GNNC_SCATTER(scatterMean, Mean)
GNNC_SCATTER(scatterMax, Max)
GNNC_SCATTER(scatterMin, Min)
GNNC_SCATTER(scatterLogSumExp, LogSumExp)

Status scatterSelectMax(const DeviceGraph &g, Side by, const float *in,
                        int64_t row, float *out, cudaStream_t stream) {
  return scatterSelect(true, g, by, in, row, out, stream);
}
Status scatterSelectMin(const DeviceGraph &g, Side by, const float *in,
                        int64_t row, float *out, cudaStream_t stream) {
  return scatterSelect(false, g, by, in, row, out, stream);
}

Status edgeSoftmax(const DeviceGraph &g, Side by, const float *in, int64_t row,
                   float *out, cudaStream_t stream) {
  // Edges of no group (none: every edge has both ends) would keep `in`.
  GNNC_TRY(copy(in, out, g.numEdges() * row, stream));
  const KernelGraph &k = layoutOf(g, by);
  if (k.count * row <= 0)
    return Status::success();
  edgeSoftmaxKernel<<<gridFor(k.count * row), kThreads, 0, stream>>>(k, in, row,
                                                                     out);
  return launched("edgeSoftmax");
}

#define GNNC_READOUT(name, fn)                                                 \
  Status name(const DeviceBatchedGraph &g, const float *in, int64_t,           \
              int64_t row, float *out, cudaStream_t stream) {                  \
    return readout(Readout::fn, g, in, row, out, stream);                      \
  }
GNNC_READOUT(readoutSum, Sum)
GNNC_READOUT(readoutMean, Mean)
GNNC_READOUT(readoutMax, Max)
GNNC_READOUT(readoutMin, Min)

Status readoutSelectMax(const DeviceBatchedGraph &g, const float *in, int64_t n,
                        int64_t row, float *out, cudaStream_t stream) {
  return readoutSelect(true, g, in, n, row, out, stream);
}
Status readoutSelectMin(const DeviceBatchedGraph &g, const float *in, int64_t n,
                        int64_t row, float *out, cudaStream_t stream) {
  return readoutSelect(false, g, in, n, row, out, stream);
}

Status broadcastGraphs(const DeviceBatchedGraph &g, const float *in, int64_t n,
                       int64_t row, float *out, cudaStream_t stream) {
  if (n * row <= 0)
    return Status::success();
  broadcastGraphsKernel<<<gridFor(n * row), kThreads, 0, stream>>>(
      g.graphOf, in, n, row, out);
  return launched("broadcastGraphs");
}

} // namespace gnnc::rt::cuda
