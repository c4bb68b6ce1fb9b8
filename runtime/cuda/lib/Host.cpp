//===- Host.cpp - The host side of the CUDA runtime -----------------------===//
//
// Part of gnnc. What runtime/cuda does without kernels: errors, graph
// checks and layouts, relations, device memory. Plain C++ against the CUDA
// runtime API (also compiled, by the tests, against its host emulation).
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include "gnnc/runtime/cuda/DeviceOps.h"
#include "gnnc/runtime/cuda/Invoke.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <limits>
#include <numeric>
#include <string>

using namespace gnnc::rt;
using namespace gnnc::rt::cuda;

//===----------------------------------------------------------------------===//
// Errors and devices
//===----------------------------------------------------------------------===//

Status gnnc::rt::cuda::toStatus(cudaError_t err, const char *what,
                                const char *file, int line) {
  if (err == cudaSuccess)
    return Status::success();
  // Clear the thread's error state, so that the next check starts afresh.
  (void)cudaGetLastError();
  std::string where = file ? std::string(file) : std::string();
  if (size_t slash = where.find_last_of('/'); slash != std::string::npos)
    where = where.substr(slash + 1);
  return Status::error(fmt::format("{}: {}: {} ({}:{})", what,
                                   cudaGetErrorName(err),
                                   cudaGetErrorString(err), where, line));
}

Status gnnc::rt::cuda::deviceCount(int &count) {
  int n = 0;
  cudaError_t err = cudaGetDeviceCount(&n);
  if (err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver) {
    (void)cudaGetLastError();
    count = 0;
    return Status::success();
  }
  GNNC_CUDA_CHECK(err);
  count = n;
  return Status::success();
}

Status
gnnc::rt::cuda::checkAligned(const char *what, std::size_t bytes,
                             std::initializer_list<const void *> pointers) {
  for (const void *p : pointers)
    if (reinterpret_cast<std::uintptr_t>(p) % bytes != 0)
      return Status::error(fmt::format(
          "{}: device pointer {} is not {}-byte aligned (docs/abi.md, "
          "\"CUDA\")",
          what, reinterpret_cast<std::uintptr_t>(p), bytes));
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Graphs
//===----------------------------------------------------------------------===//

namespace {

constexpr int64_t kMaxId = std::numeric_limits<int32_t>::max();

/// Checks one host layout: `rows + 1` offsets from 0 to `edges`, never
/// decreasing, and entries in range.
Status checkLayout(const char *name, const std::vector<int64_t> &ptr,
                   const std::vector<int64_t> &other,
                   const std::vector<int64_t> &edge, int64_t rows,
                   int64_t otherRows, int64_t edges) {
  if (static_cast<int64_t>(ptr.size()) != rows + 1 || ptr.front() != 0 ||
      ptr.back() != edges)
    return Status::error(
        fmt::format("graph: the {} offsets do not cover the edges", name));
  for (int64_t r = 0; r < rows; ++r)
    if (ptr[r + 1] < ptr[r])
      return Status::error(
          fmt::format("graph: the {} offsets decrease at row {}", name, r));
  if (static_cast<int64_t>(other.size()) != edges ||
      static_cast<int64_t>(edge.size()) != edges)
    return Status::error(fmt::format(
        "graph: the {} arrays do not have one entry per edge", name));
  for (int64_t k = 0; k < edges; ++k)
    if (other[k] < 0 || other[k] >= otherRows || edge[k] < 0 ||
        edge[k] >= edges)
      return Status::error(
          fmt::format("graph: the {} entry {} is out of range", name, k));
  return Status::success();
}

std::vector<int32_t> narrow(const std::vector<int64_t> &in) {
  return std::vector<int32_t>(in.begin(), in.end());
}

} // namespace

Status gnnc::rt::cuda::detail::checkForDevice(const Graph &g) {
  int64_t e = g.numEdges();
  if (g.numSrc() > kMaxId || g.numDst() > kMaxId || e > kMaxId)
    return Status::error(fmt::format(
        "graph: {} sources, {} destinations and {} edges: device graphs have "
        "fewer than 2^31 of each (32-bit ids)",
        g.numSrc(), g.numDst(), e));
  if (Status s = checkLayout("CSR (by destination)", g.inPtr(), g.inSrc(),
                             g.inEdge(), g.numDst(), g.numSrc(), e);
      !s.ok())
    return s;
  if (Status s = checkLayout("CSC (by source)", g.outPtr(), g.outDst(),
                             g.outEdge(), g.numSrc(), g.numDst(), e);
      !s.ok())
    return s;
  if (static_cast<int64_t>(g.edgeSrc().size()) != e ||
      static_cast<int64_t>(g.edgeDst().size()) != e)
    return Status::error("graph: the edge list does not have one entry per "
                         "edge");
  return Status::success();
}

void gnnc::rt::cuda::detail::narrowInto(const std::vector<int64_t> &in,
                                        int32_t *out) {
  for (std::size_t i = 0; i < in.size(); ++i)
    out[i] = static_cast<int32_t>(in[i]);
}

Status gnnc::rt::cuda::detail::layoutForDevice(const Graph &g,
                                               HostLayout &out) {
  GNNC_TRY(checkForDevice(g));
  HostLayout l;
  l.inPtr = g.inPtr();
  l.outPtr = g.outPtr();
  l.inSrc = narrow(g.inSrc());
  l.inEdge = narrow(g.inEdge());
  l.outDst = narrow(g.outDst());
  l.outEdge = narrow(g.outEdge());
  l.edgeSrc = narrow(g.edgeSrc());
  l.edgeDst = narrow(g.edgeDst());
  out = std::move(l);
  return Status::success();
}

std::vector<int32_t>
gnnc::rt::cuda::detail::degreeOrder(const std::vector<int64_t> &ptr) {
  std::vector<int32_t> order(ptr.size() - 1);
  degreeOrderInto(ptr, order.data());
  return order;
}

void gnnc::rt::cuda::detail::degreeOrderInto(const std::vector<int64_t> &ptr,
                                             int32_t *order) {
  int32_t *end = order + (ptr.size() - 1);
  std::iota(order, end, 0);
  std::stable_sort(order, end, [&](int32_t a, int32_t b) {
    return ptr[a + 1] - ptr[a] > ptr[b + 1] - ptr[b];
  });
}

void gnnc::rt::cuda::detail::rowsOverInto(const std::vector<int64_t> &ptr,
                                          int64_t *out) {
  // A row of d > 1 edges has more than 2^k of them for k below the bit
  // width of d - 1: count the rows by that width (at most kRowsOverSize),
  // then add up from the top. One pass; assign runs it every step.
  constexpr int kSize = KernelGraph::kRowsOverSize;
  std::array<int64_t, kSize + 1> byWidth{};
  for (std::size_t r = 0; r + 1 < ptr.size(); ++r) {
    int64_t degree = ptr[r + 1] - ptr[r];
    int width = degree > 1
                    ? 64 - __builtin_clzll(static_cast<uint64_t>(degree - 1))
                    : 0;
    ++byWidth[std::min(width, kSize)];
  }
  int64_t over = 0;
  for (int k = kSize - 1; k >= 0; --k) {
    over += byWidth[k + 1];
    out[k] = over;
  }
}

Status gnnc::rt::cuda::detail::checkNotCapturing(const char *what,
                                                 cudaStream_t stream) {
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  GNNC_CUDA_CHECK(cudaStreamIsCapturing(stream, &capture));
  if (capture != cudaStreamCaptureStatusNone)
    return Status::error(fmt::format(
        "{}: the stream is capturing; {} is called outside the capture, "
        "before each replay (docs/abi.md, \"CUDA graphs of a training "
        "step\")",
        what, what));
  return Status::success();
}

Status gnnc::rt::cuda::detail::checkAssign(const DeviceGraph &d, const Graph &g,
                                           cudaStream_t stream) {
  GNNC_TRY(checkNotCapturing("DeviceGraph::assign", stream));
  if (g.numSrc() != d.numSrc() || g.numDst() != d.numDst() ||
      g.numEdges() != d.numEdges())
    return Status::error(fmt::format(
        "DeviceGraph::assign: the graph has {} sources, {} destinations and "
        "{} edges, the device graph {}, {} and {}: assign keeps the sizes of "
        "upload (pad every batch to the same sizes, or upload a new graph)",
        g.numSrc(), g.numDst(), g.numEdges(), d.numSrc(), d.numDst(),
        d.numEdges()));
  return checkForDevice(g);
}

void gnnc::rt::cuda::detail::DeviceGraphBuilder::set(
    DeviceGraph &g, std::shared_ptr<void> storage, int64_t numSrc,
    int64_t numDst, int64_t numEdges, const KernelGraph &in,
    const KernelGraph &out, const int32_t *edgeSrc, const int32_t *edgeDst) {
  g.Storage = std::move(storage);
  g.NumSrc = numSrc;
  g.NumDst = numDst;
  g.NumEdges = numEdges;
  g.In = in;
  g.Out = out;
  g.EdgeSrc = edgeSrc;
  g.EdgeDst = edgeDst;
}

const std::shared_ptr<void> &
gnnc::rt::cuda::detail::DeviceGraphBuilder::storage(const DeviceGraph &g) {
  return g.Storage;
}

Status gnnc::rt::cuda::detail::checkBatchForDevice(const BatchedGraph &g,
                                                   const DeviceGraph &graph) {
  if (Status s = rt::checkBatch(g); !s.ok())
    return s;
  if (g.graph->numSrc() != graph.numSrc() ||
      g.graph->numDst() != graph.numDst() ||
      g.graph->numEdges() != graph.numEdges())
    return Status::error("batched graph: the device graph is not the batch's "
                         "graph (their sizes differ)");
  if (g.numGraphs > kMaxId)
    return Status::error("batched graph: more than 2^31 graphs");
  return Status::success();
}

const DeviceGraph *gnnc::rt::cuda::findRelation(const DeviceHeteroGraph &g,
                                                const char *name) {
  for (int64_t i = 0; i < g.numRelations; ++i) {
    const DeviceRelation &r = g.relations[i];
    if (r.name && r.graph && std::strcmp(r.name, name) == 0)
      return r.graph->numSrc() == g.numVertices &&
                     r.graph->numDst() == g.numVertices
                 ? r.graph
                 : nullptr;
  }
  return nullptr;
}

const DeviceGraph &gnnc::rt::cuda::relationOrEmpty(const DeviceHeteroGraph &g,
                                                   const char *name) {
  static const DeviceGraph empty;
  const DeviceGraph *r = findRelation(g, name);
  return r ? *r : empty;
}

Status gnnc::rt::cuda::checkBatch(const DeviceBatchedGraph &g) {
  if (!g.graph)
    return Status::error("batched graph: no graph");
  if (g.numGraphs < 0)
    return Status::error("batched graph: negative graph count");
  if (g.graph->numDst() > 0 && (!g.graphOf || !g.members || !g.memberPtr))
    return Status::error("batched graph: not uploaded "
                         "(DeviceBatchedGraph::upload)");
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Device memory
//===----------------------------------------------------------------------===//

DeviceBuffer::DeviceBuffer(DeviceBuffer &&other) noexcept
    : Data(other.Data), Bytes(other.Bytes) {
  other.Data = nullptr;
  other.Bytes = 0;
}

DeviceBuffer &DeviceBuffer::operator=(DeviceBuffer &&other) noexcept {
  if (this != &other) {
    if (Data)
      (void)cudaFree(Data);
    Data = other.Data;
    Bytes = other.Bytes;
    other.Data = nullptr;
    other.Bytes = 0;
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  if (Data)
    (void)cudaFree(Data);
}

Status DeviceBuffer::allocate(std::size_t bytes, DeviceBuffer &out) {
  DeviceBuffer b;
  if (bytes > 0)
    GNNC_CUDA_CHECK(cudaMalloc(&b.Data, bytes));
  b.Bytes = bytes;
  out = std::move(b);
  return Status::success();
}

Status CudaFlavour::allocateWorkspace(std::size_t bytes, DeviceBuffer &out) {
  DeviceBuffer b;
  GNNC_TRY(DeviceBuffer::allocate(bytes, b));
  if (bytes > 0)
    GNNC_CUDA_CHECK(cudaMemset(b.data(), 0, bytes));
  out = std::move(b);
  return Status::success();
}

int64_t DeviceTensor::numElements() const {
  int64_t n = 1;
  for (int64_t d : Shape)
    n *= d;
  return n;
}

Status DeviceTensor::allocate(const std::vector<int64_t> &shape,
                              DeviceTensor &out) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return Status::error(
          fmt::format("device tensor: negative dimension {}", d));
    n *= d;
  }
  DeviceTensor t;
  t.Shape = shape;
  if (Status s = DeviceBuffer::allocate(
          static_cast<std::size_t>(n) * sizeof(float), t.Buffer);
      !s.ok())
    return s;
  out = std::move(t);
  return Status::success();
}

Status DeviceTensor::upload(const float *host,
                            const std::vector<int64_t> &shape,
                            cudaStream_t stream, DeviceTensor &out) {
  DeviceTensor t;
  if (Status s = allocate(shape, t); !s.ok())
    return s;
  std::size_t bytes = static_cast<std::size_t>(t.numElements()) * sizeof(float);
  if (bytes) {
    GNNC_CUDA_CHECK(
        cudaMemcpyAsync(t.data(), host, bytes, cudaMemcpyHostToDevice, stream));
    GNNC_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  out = std::move(t);
  return Status::success();
}

Status DeviceTensor::assign(const float *host,
                            const std::vector<int64_t> &shape,
                            cudaStream_t stream) {
  GNNC_TRY(detail::checkNotCapturing("DeviceTensor::assign", stream));
  if (shape != Shape) {
    auto str = [](const std::vector<int64_t> &dims) {
      std::string out = "[";
      for (std::size_t i = 0; i < dims.size(); ++i)
        out += (i ? ", " : "") + std::to_string(dims[i]);
      return out + "]";
    };
    return Status::error(
        fmt::format("DeviceTensor::assign: a tensor of shape {} into one of "
                    "shape {}: assign keeps the shape",
                    str(shape), str(Shape)));
  }
  std::size_t bytes = static_cast<std::size_t>(numElements()) * sizeof(float);
  if (bytes)
    GNNC_CUDA_CHECK(
        cudaMemcpyAsync(data(), host, bytes, cudaMemcpyHostToDevice, stream));
  return Status::success();
}

Status DeviceTensor::download(float *host, cudaStream_t stream) const {
  std::size_t bytes = static_cast<std::size_t>(numElements()) * sizeof(float);
  if (bytes) {
    GNNC_CUDA_CHECK(
        cudaMemcpyAsync(host, data(), bytes, cudaMemcpyDeviceToHost, stream));
    GNNC_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  return Status::success();
}
