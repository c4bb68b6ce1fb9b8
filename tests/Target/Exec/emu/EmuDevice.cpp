//===- EmuDevice.cpp - The CUDA runtime's device side, on the host --------===//
//
// Part of gnnc's tests. Implements what runtime/cuda/lib/Device.cu and
// DeviceOps.cu implement on a GPU, for the host emulation
// (include/cuda_runtime.h): device memory is host memory, so graph uploads
// build the same arrays on the host, and every device operation is the
// host operation of gnnc/runtime/Ops.h (the reference those kernels
// mirror). What this checks is the code gnnc prints: its kernels run here
// as emulated CUDA threads, its host code calls these. Reductions scribble
// over the scratch they are given, so that a workspace layout giving it
// bytes something else still needs shows. Every operation is work on its
// stream (gnnc_emu_enqueue): recorded, with copies of its arguments as a
// kernel's, while the stream captures. DeviceGraph::assign overwrites the
// arrays of an upload in place.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include "gnnc/runtime/Ops.h"
#include "gnnc/runtime/cuda/DeviceOps.h"
#include "gnnc/runtime/cuda/StepGraph.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

using namespace gnnc::rt;
using namespace gnnc::rt::cuda;

namespace {

/// The storage of an emulated DeviceGraph: the arrays, and the host graph
/// for the host operations.
struct GraphStorage {
  detail::HostLayout layout;
  std::vector<int32_t> inOrder, outOrder;
  int64_t inOver[KernelGraph::kRowsOverSize] = {};
  int64_t outOver[KernelGraph::kRowsOverSize] = {};
  Graph host;
};

/// The storage of `g`, kept by the work that reads it (as a kernel keeps
/// the device pointers it is given).
std::shared_ptr<void> storageOf(const DeviceGraph &g) {
  return detail::DeviceGraphBuilder::storage(g);
}

const Graph &hostGraph(const std::shared_ptr<void> &storage) {
  static const Graph empty;
  return storage ? static_cast<const GraphStorage *>(storage.get())->host
                 : empty;
}

struct BatchStorage {
  std::vector<int32_t> graphOf, members;
  std::vector<int64_t> graphOf64, memberPtr;
};

BatchedGraph hostBatch(const DeviceBatchedGraph &g) {
  BatchedGraph b;
  b.graph = &hostGraph(storageOf(*g.graph));
  b.numGraphs = g.numGraphs;
  b.graphOf =
      g.storage
          ? static_cast<const BatchStorage *>(g.storage.get())->graphOf64.data()
          : nullptr;
  return b;
}

/// Runs `work` on `stream` (recorded while it captures).
Status enqueue(const char *what, cudaStream_t stream,
               std::function<void()> work) {
  return toStatus(gnnc_emu_enqueue(stream, std::move(work)), what, __FILE__,
                  __LINE__);
}

} // namespace

Status DeviceGraph::upload(const Graph &g, cudaStream_t stream,
                           DeviceGraph &out) {
  // Waits, as on a device (which fails on a capturing stream).
  GNNC_CUDA_CHECK(cudaStreamSynchronize(stream));
  auto storage = std::make_shared<GraphStorage>();
  if (Status s = detail::layoutForDevice(g, storage->layout); !s.ok())
    return s;
  storage->inOrder = detail::degreeOrder(storage->layout.inPtr);
  storage->outOrder = detail::degreeOrder(storage->layout.outPtr);
  storage->host = g;
  const detail::HostLayout &l = storage->layout;
  detail::rowsOverInto(l.inPtr, storage->inOver);
  detail::rowsOverInto(l.outPtr, storage->outOver);
  KernelGraph in{l.inPtr.data(),          l.inSrc.data(), l.inEdge.data(),
                 storage->inOrder.data(), g.numDst(),     storage->inOver};
  KernelGraph out2{l.outPtr.data(),          l.outDst.data(), l.outEdge.data(),
                   storage->outOrder.data(), g.numSrc(),      storage->outOver};
  DeviceGraph d;
  detail::DeviceGraphBuilder::set(d, storage, g.numSrc(), g.numDst(),
                                  g.numEdges(), in, out2, l.edgeSrc.data(),
                                  l.edgeDst.data());
  out = std::move(d);
  return Status::success();
}

Status DeviceGraph::assign(const Graph &g, cudaStream_t stream) {
  GNNC_TRY(detail::checkAssign(*this, g, stream));
  if (!Storage)
    return Status::success(); // No vertices and no edges: nothing to write.
  auto &storage = *static_cast<GraphStorage *>(Storage.get());
  // In place: the arrays keep their sizes, so their addresses.
  detail::HostLayout &l = storage.layout;
  std::copy(g.inPtr().begin(), g.inPtr().end(), l.inPtr.begin());
  std::copy(g.outPtr().begin(), g.outPtr().end(), l.outPtr.begin());
  detail::narrowInto(g.inSrc(), l.inSrc.data());
  detail::narrowInto(g.inEdge(), l.inEdge.data());
  detail::narrowInto(g.outDst(), l.outDst.data());
  detail::narrowInto(g.outEdge(), l.outEdge.data());
  detail::narrowInto(g.edgeSrc(), l.edgeSrc.data());
  detail::narrowInto(g.edgeDst(), l.edgeDst.data());
  detail::degreeOrderInto(l.inPtr, storage.inOrder.data());
  detail::degreeOrderInto(l.outPtr, storage.outOrder.data());
  detail::rowsOverInto(l.inPtr, storage.inOver);
  detail::rowsOverInto(l.outPtr, storage.outOver);
  storage.host = g;
  return Status::success();
}

Status DeviceBatchedGraph::upload(const BatchedGraph &g,
                                  const DeviceGraph &graph, cudaStream_t stream,
                                  DeviceBatchedGraph &out) {
  GNNC_CUDA_CHECK(cudaStreamSynchronize(stream));
  if (Status s = detail::checkBatchForDevice(g, graph); !s.ok())
    return s;
  auto storage = std::make_shared<BatchStorage>();
  int64_t n = graph.numDst();
  storage->graphOf64.assign(g.graphOf, g.graphOf + n);
  storage->graphOf.assign(g.graphOf, g.graphOf + n);
  storage->memberPtr.assign(g.numGraphs + 1, 0);
  for (int64_t v = 0; v < n; ++v)
    ++storage->memberPtr[g.graphOf[v] + 1];
  for (int64_t b = 0; b < g.numGraphs; ++b)
    storage->memberPtr[b + 1] += storage->memberPtr[b];
  storage->members.resize(n);
  std::vector<int64_t> next(storage->memberPtr.begin(),
                            storage->memberPtr.end() - 1);
  for (int64_t v = 0; v < n; ++v)
    storage->members[next[g.graphOf[v]]++] = static_cast<int32_t>(v);
  DeviceBatchedGraph d;
  d.graph = &graph;
  d.numGraphs = g.numGraphs;
  d.graphOf = storage->graphOf.data();
  d.memberPtr = storage->memberPtr.data();
  d.members = storage->members.data();
  d.storage = storage;
  out = std::move(d);
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Operations: the host's, on the stream
//===----------------------------------------------------------------------===//

/// Emulated cuBLAS has no handle or workspace to make.
Status gnnc::rt::cuda::prepareCapture(cudaStream_t) {
  return Status::success();
}

Status gnnc::rt::cuda::dropout(const float *in, float *out, int64_t n, double p,
                               uint64_t seed, bool training,
                               cudaStream_t stream) {
  return enqueue("dropout", stream,
                 [=] { rt::dropout(in, out, n, p, seed, training); });
}
Status gnnc::rt::cuda::updateBatchStats(const float *x, int64_t rows,
                                        int64_t cols, float *runningMean,
                                        float *runningVar, double momentum,
                                        bool training, cudaStream_t stream) {
  // The sizes are known on the host: the error comes at once, as on a GPU.
  if (training && rows < 2)
    return rt::updateBatchStats(x, rows, cols, runningMean, runningVar,
                                momentum, training);
  return enqueue("updateBatchStats", stream, [=] {
    (void)rt::updateBatchStats(x, rows, cols, runningMean, runningVar, momentum,
                               training);
  });
}
Status gnnc::rt::cuda::inDegree(const DeviceGraph &g, float *out,
                                cudaStream_t stream) {
  return enqueue("inDegree", stream, [storage = storageOf(g), out] {
    rt::inDegree(hostGraph(storage), out);
  });
}
Status gnnc::rt::cuda::outDegree(const DeviceGraph &g, float *out,
                                 cudaStream_t stream) {
  return enqueue("outDegree", stream, [storage = storageOf(g), out] {
    rt::outDegree(hostGraph(storage), out);
  });
}
Status gnnc::rt::cuda::graphSizes(const DeviceBatchedGraph &g, float *out,
                                  cudaStream_t stream) {
  return enqueue("graphSizes", stream,
                 [g, out] { rt::graphSizes(hostBatch(g), out); });
}
Status gnnc::rt::cuda::fill(float *out, int64_t n, float value,
                            cudaStream_t stream) {
  return enqueue("fill", stream, [=] { rt::fill(out, n, value); });
}
Status gnnc::rt::cuda::copy(const float *in, float *out, int64_t n,
                            cudaStream_t stream) {
  return enqueue("copy", stream, [=] { rt::copy(in, out, n); });
}

#define GNNC_EMU_UNARY(name)                                                   \
  Status gnnc::rt::cuda::name(const float *x, float *y, int64_t n,             \
                              cudaStream_t stream) {                           \
    return enqueue(#name, stream, [=] { rt::name(x, y, n); });                 \
  }
GNNC_EMU_UNARY(neg)
GNNC_EMU_UNARY(exp)
GNNC_EMU_UNARY(log)
GNNC_EMU_UNARY(sqrt)
GNNC_EMU_UNARY(rsqrt)
GNNC_EMU_UNARY(abs)
GNNC_EMU_UNARY(relu)
GNNC_EMU_UNARY(sigmoid)
GNNC_EMU_UNARY(tanh)
GNNC_EMU_UNARY(gelu)
GNNC_EMU_UNARY(erf)
GNNC_EMU_UNARY(sin)
GNNC_EMU_UNARY(cos)
Status gnnc::rt::cuda::elu(const float *x, float *y, int64_t n, float alpha,
                           cudaStream_t stream) {
  return enqueue("elu", stream, [=] { rt::elu(x, y, n, alpha); });
}
Status gnnc::rt::cuda::leakyRelu(const float *x, float *y, int64_t n,
                                 float alpha, cudaStream_t stream) {
  return enqueue("leakyRelu", stream, [=] { rt::leakyRelu(x, y, n, alpha); });
}

#define GNNC_EMU_BINARY(name)                                                  \
  Status gnnc::rt::cuda::name(const float *a, const Shape &sa, const float *b, \
                              const Shape &sb, float *out, const Shape &so,    \
                              cudaStream_t stream) {                           \
    return enqueue(#name, stream, [=] { rt::name(a, sa, b, sb, out, so); });   \
  }
GNNC_EMU_BINARY(add)
GNNC_EMU_BINARY(sub)
GNNC_EMU_BINARY(mul)
GNNC_EMU_BINARY(div)
GNNC_EMU_BINARY(max)
GNNC_EMU_BINARY(min)
GNNC_EMU_BINARY(pow)
GNNC_EMU_BINARY(gt)
GNNC_EMU_BINARY(ge)
GNNC_EMU_BINARY(eq)
GNNC_EMU_BINARY(ne)
GNNC_EMU_BINARY(mask)
Status gnnc::rt::cuda::addMul(const float *x, const Shape &sx, const float *y,
                              const Shape &sy, const float *z, const Shape &sz,
                              float *out, const Shape &so,
                              cudaStream_t stream) {
  return enqueue("addMul", stream,
                 [=] { rt::addMul(x, sx, y, sy, z, sz, out, so); });
}
Status gnnc::rt::cuda::broadcastTo(const float *in, const Shape &si, float *out,
                                   const Shape &so, cudaStream_t stream) {
  return enqueue("broadcastTo", stream,
                 [=] { rt::broadcastTo(in, si, out, so); });
}

Status gnnc::rt::cuda::matmul(const float *a, const float *w, float *out,
                              int64_t rows, int64_t k, int64_t n,
                              cudaStream_t stream) {
  return enqueue("matmul", stream, [=] { rt::matmul(a, w, out, rows, k, n); });
}
Status gnnc::rt::cuda::matmulT(const float *a, bool transA, const float *w,
                               bool transW, float *out, int64_t rows, int64_t k,
                               int64_t n, cudaStream_t stream) {
  return enqueue("matmulT", stream,
                 [=] { rt::matmulT(a, transA, w, transW, out, rows, k, n); });
}

std::size_t gnnc::rt::cuda::reduceScratchBytes(int64_t outer, int64_t len,
                                               int64_t inner) {
  // As much as the device needs in the worst case, so that the layout is
  // exercised: a partial sum per element.
  int64_t n = outer * len * inner;
  return n > 1 ? alignUp(8 * n) : 0;
}

namespace {
void scribble(void *scratch, int64_t outer, int64_t len, int64_t inner) {
  std::size_t bytes = reduceScratchBytes(outer, len, inner);
  if (bytes)
    std::memset(scratch, 0xFF, bytes);
}
} // namespace

#define GNNC_EMU_REDUCE(name)                                                  \
  Status gnnc::rt::cuda::name(const float *in, float *out, int64_t outer,      \
                              int64_t len, int64_t inner, void *scratch,       \
                              cudaStream_t stream) {                           \
    return enqueue(#name, stream, [=] {                                        \
      scribble(scratch, outer, len, inner);                                    \
      rt::name(in, out, outer, len, inner);                                    \
    });                                                                        \
  }
GNNC_EMU_REDUCE(reduceSum)
GNNC_EMU_REDUCE(reduceMean)
GNNC_EMU_REDUCE(reduceMax)
GNNC_EMU_REDUCE(reduceMin)
GNNC_EMU_REDUCE(reduceSelectMax)
GNNC_EMU_REDUCE(reduceSelectMin)

std::size_t gnnc::rt::cuda::mulReduceScratchBytes(int64_t outer, int64_t len,
                                                  int64_t inner) {
  // The worst case of the device (a whole-tensor sum keeps the products
  // beside the reduction's scratch).
  return reduceScratchBytes(outer, len, inner) + alignUp(4 * len);
}
Status gnnc::rt::cuda::mulReduceSum(const float *a, const Shape &sa,
                                    const float *b, const Shape &sb,
                                    const Shape &product, float *out,
                                    int64_t outer, int64_t len, int64_t inner,
                                    void *scratch, cudaStream_t stream) {
  return enqueue("mulReduceSum", stream, [=] {
    std::size_t bytes = mulReduceScratchBytes(outer, len, inner);
    if (bytes)
      std::memset(scratch, 0xFF, bytes);
    rt::mulReduceSum(a, sa, b, sb, product, out, outer, len, inner);
  });
}

Status gnnc::rt::cuda::softmax(const float *in, float *out, int64_t outer,
                               int64_t len, int64_t inner,
                               cudaStream_t stream) {
  return enqueue("softmax", stream,
                 [=] { rt::softmax(in, out, outer, len, inner); });
}
Status gnnc::rt::cuda::logSoftmax(const float *in, float *out, int64_t outer,
                                  int64_t len, int64_t inner,
                                  cudaStream_t stream) {
  return enqueue("logSoftmax", stream,
                 [=] { rt::logSoftmax(in, out, outer, len, inner); });
}
Status gnnc::rt::cuda::copyRows(const float *in, int64_t inStride, float *out,
                                int64_t outStride, int64_t rows, int64_t width,
                                cudaStream_t stream) {
  return enqueue("copyRows", stream, [=] {
    rt::copyRows(in, inStride, out, outStride, rows, width);
  });
}
Status gnnc::rt::cuda::transpose(const float *in, float *out, int64_t batch,
                                 int64_t a, int64_t b, cudaStream_t stream) {
  return enqueue("transpose", stream,
                 [=] { rt::transpose(in, out, batch, a, b); });
}

Status gnnc::rt::cuda::gather(const int32_t *index, int64_t count,
                              const float *in, int64_t row, float *out,
                              cudaStream_t stream) {
  return enqueue("gather", stream, [=] {
    for (int64_t e = 0; e < count; ++e)
      for (int64_t j = 0; j < row; ++j)
        out[e * row + j] = in[static_cast<int64_t>(index[e]) * row + j];
  });
}
Status gnnc::rt::cuda::splat(const float *row, int64_t rowSize, int64_t count,
                             float *out, cudaStream_t stream) {
  return enqueue("splat", stream, [=] { rt::splat(row, rowSize, count, out); });
}

#define GNNC_EMU_SCATTER(name)                                                 \
  Status gnnc::rt::cuda::name(const DeviceGraph &g, Side by, const float *in,  \
                              int64_t row, float *out, cudaStream_t stream) {  \
    return enqueue(#name, stream, [storage = storageOf(g), by, in, row, out] { \
      rt::name(hostGraph(storage), by, in, row, out);                          \
    });                                                                        \
  }
GNNC_EMU_SCATTER(scatterSum)
GNNC_EMU_SCATTER(scatterMean)
GNNC_EMU_SCATTER(scatterMax)
GNNC_EMU_SCATTER(scatterMin)
GNNC_EMU_SCATTER(scatterLogSumExp)
GNNC_EMU_SCATTER(scatterSelectMax)
GNNC_EMU_SCATTER(scatterSelectMin)
GNNC_EMU_SCATTER(edgeSoftmax)

#define GNNC_EMU_READOUT(name, scratchPerGraph)                                \
  Status gnnc::rt::cuda::name(const DeviceBatchedGraph &g, const float *in,    \
                              int64_t n, int64_t row, float *out,              \
                              cudaStream_t stream) {                           \
    return enqueue(#name, stream, [g, in, n, row, out] {                       \
      std::vector<int64_t> scratch(                                            \
          static_cast<size_t>(g.numGraphs * (scratchPerGraph) + 1));           \
      rt::name(hostBatch(g), in, n, row, out, scratch.data());                 \
    });                                                                        \
  }
GNNC_EMU_READOUT(readoutSum, 1)
GNNC_EMU_READOUT(readoutMean, 1)
GNNC_EMU_READOUT(readoutMax, 1)
GNNC_EMU_READOUT(readoutMin, 1)
GNNC_EMU_READOUT(readoutSelectMax, row)
GNNC_EMU_READOUT(readoutSelectMin, row)

Status gnnc::rt::cuda::broadcastGraphs(const DeviceBatchedGraph &g,
                                       const float *in, int64_t n, int64_t row,
                                       float *out, cudaStream_t stream) {
  return enqueue("broadcastGraphs", stream, [g, in, n, row, out] {
    rt::broadcastGraphs(hostBatch(g), in, n, row, out);
  });
}
