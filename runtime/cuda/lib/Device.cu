//===- Device.cu - Device graphs: upload, degree order, batches -----------===//
//
// Part of gnnc. DeviceGraph::upload copies the two layouts of an rt::Graph
// (checked on the host by detail::layoutForDevice) into one device
// allocation and sorts the rows of each layout by descending degree with
// CUB's radix sort (stable, so equal degrees keep increasing ids: the
// order detail::degreeOrder computes on the host). DeviceBatchedGraph
// groups the vertices of a batch by member graph with a radix sort, a
// histogram and an exclusive scan (CUB), for readouts without atomics.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

#include "gnnc/runtime/cuda/Kernel.cuh"

#include <cub/cub.cuh>

#include <algorithm>
#include <memory>
#include <vector>

// (No using-directive: `cuda` would clash with libcu++'s ::cuda in the
// code nvcc generates.)
namespace gnnc::rt::cuda {

namespace {

/// Device memory freed with the last owner.
std::shared_ptr<void> deviceMemory(std::size_t bytes, cudaError_t &err) {
  void *p = nullptr;
  err = bytes ? cudaMalloc(&p, bytes) : cudaSuccess;
  if (err != cudaSuccess)
    return nullptr;
  return std::shared_ptr<void>(p, [](void *q) {
    if (q)
      (void)cudaFree(q);
  });
}

/// Carves 256-byte aligned arrays out of one allocation.
class Carver {
public:
  template <typename T> std::size_t reserve(int64_t count) {
    std::size_t at = Size;
    Size += (static_cast<std::size_t>(std::max<int64_t>(count, 0)) * sizeof(T) +
             255) /
            256 * 256;
    return at;
  }
  std::size_t size() const { return Size; }

private:
  std::size_t Size = 0;
};

template <typename T>
T *at(const std::shared_ptr<void> &base, std::size_t off) {
  return reinterpret_cast<T *>(static_cast<char *>(base.get()) + off);
}

template <typename T>
Status copyIn(T *dst, const std::vector<T> &src, cudaStream_t stream) {
  if (!src.empty())
    GNNC_CUDA_CHECK(cudaMemcpyAsync(dst, src.data(), src.size() * sizeof(T),
                                    cudaMemcpyHostToDevice, stream));
  return Status::success();
}

/// keys[r] = degree of row r, ids[r] = r.
__global__ void degreesAndIds(const int64_t *ptr, int64_t rows, int32_t *keys,
                              int32_t *ids) {
  for (int64_t r = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
       r < rows; r += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    keys[r] = static_cast<int32_t>(ptr[r + 1] - ptr[r]);
    ids[r] = static_cast<int32_t>(r);
  }
}

__global__ void iota(int32_t *ids, int64_t n) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
       i < n; i += static_cast<int64_t>(gridDim.x) * blockDim.x)
    ids[i] = static_cast<int32_t>(i);
}

int64_t gridFor(int64_t n) {
  return std::min<int64_t>(std::max<int64_t>((n + 255) / 256, 1), 65535);
}

/// Sorts the rows of a layout by descending degree into `order`.
Status sortByDegree(const int64_t *ptr, int64_t rows, int32_t *order,
                    cudaStream_t stream) {
  if (rows == 0)
    return Status::success();
  std::size_t tempBytes = 0;
  GNNC_CUDA_CHECK(cub::DeviceRadixSort::SortPairsDescending(
      nullptr, tempBytes, static_cast<const int32_t *>(nullptr),
      static_cast<int32_t *>(nullptr), static_cast<const int32_t *>(nullptr),
      static_cast<int32_t *>(nullptr), static_cast<int>(rows), 0, 32, stream));
  Carver c;
  std::size_t keysIn = c.reserve<int32_t>(rows);
  std::size_t keysOut = c.reserve<int32_t>(rows);
  std::size_t ids = c.reserve<int32_t>(rows);
  std::size_t temp = c.reserve<char>(static_cast<int64_t>(tempBytes));
  cudaError_t err;
  std::shared_ptr<void> scratch = deviceMemory(c.size(), err);
  GNNC_CUDA_CHECK(err);
  degreesAndIds<<<static_cast<unsigned>(gridFor(rows)), 256, 0, stream>>>(
      ptr, rows, at<int32_t>(scratch, keysIn), at<int32_t>(scratch, ids));
  GNNC_CUDA_CHECK(cudaGetLastError());
  GNNC_CUDA_CHECK(cub::DeviceRadixSort::SortPairsDescending(
      at<char>(scratch, temp), tempBytes, at<int32_t>(scratch, keysIn),
      at<int32_t>(scratch, keysOut), at<int32_t>(scratch, ids), order,
      static_cast<int>(rows), 0, 32, stream));
  // The scratch is freed after the sort has run.
  GNNC_CUDA_CHECK(cudaStreamSynchronize(stream));
  return Status::success();
}

} // namespace

Status DeviceGraph::upload(const Graph &g, cudaStream_t stream,
                           DeviceGraph &out) {
  detail::HostLayout l;
  if (Status s = detail::layoutForDevice(g, l); !s.ok())
    return s;
  int64_t e = g.numEdges();
  Carver c;
  std::size_t inPtr = c.reserve<int64_t>(g.numDst() + 1);
  std::size_t outPtr = c.reserve<int64_t>(g.numSrc() + 1);
  std::size_t inSrc = c.reserve<int32_t>(e), inEdge = c.reserve<int32_t>(e);
  std::size_t outDst = c.reserve<int32_t>(e), outEdge = c.reserve<int32_t>(e);
  std::size_t edgeSrc = c.reserve<int32_t>(e), edgeDst = c.reserve<int32_t>(e);
  std::size_t inOrder = c.reserve<int32_t>(g.numDst());
  std::size_t outOrder = c.reserve<int32_t>(g.numSrc());
  cudaError_t err;
  std::shared_ptr<void> storage = deviceMemory(c.size(), err);
  GNNC_CUDA_CHECK(err);
  GNNC_TRY(copyIn(at<int64_t>(storage, inPtr), l.inPtr, stream));
  GNNC_TRY(copyIn(at<int64_t>(storage, outPtr), l.outPtr, stream));
  GNNC_TRY(copyIn(at<int32_t>(storage, inSrc), l.inSrc, stream));
  GNNC_TRY(copyIn(at<int32_t>(storage, inEdge), l.inEdge, stream));
  GNNC_TRY(copyIn(at<int32_t>(storage, outDst), l.outDst, stream));
  GNNC_TRY(copyIn(at<int32_t>(storage, outEdge), l.outEdge, stream));
  GNNC_TRY(copyIn(at<int32_t>(storage, edgeSrc), l.edgeSrc, stream));
  GNNC_TRY(copyIn(at<int32_t>(storage, edgeDst), l.edgeDst, stream));
  GNNC_TRY(sortByDegree(at<int64_t>(storage, inPtr), g.numDst(),
                        at<int32_t>(storage, inOrder), stream));
  GNNC_TRY(sortByDegree(at<int64_t>(storage, outPtr), g.numSrc(),
                        at<int32_t>(storage, outOrder), stream));
  GNNC_CUDA_CHECK(cudaStreamSynchronize(stream));
  KernelGraph in{at<int64_t>(storage, inPtr), at<int32_t>(storage, inSrc),
                 at<int32_t>(storage, inEdge), at<int32_t>(storage, inOrder),
                 g.numDst()};
  KernelGraph outLayout{at<int64_t>(storage, outPtr),
                        at<int32_t>(storage, outDst),
                        at<int32_t>(storage, outEdge),
                        at<int32_t>(storage, outOrder), g.numSrc()};
  DeviceGraph d;
  detail::DeviceGraphBuilder::set(d, storage, g.numSrc(), g.numDst(), e, in,
                                  outLayout, at<int32_t>(storage, edgeSrc),
                                  at<int32_t>(storage, edgeDst));
  out = std::move(d);
  return Status::success();
}

Status DeviceBatchedGraph::upload(const BatchedGraph &g,
                                  const DeviceGraph &graph, cudaStream_t stream,
                                  DeviceBatchedGraph &out) {
  if (Status s = detail::checkBatchForDevice(g, graph); !s.ok())
    return s;
  int64_t n = graph.numDst(), b = g.numGraphs;
  std::vector<int32_t> graphOf(g.graphOf, g.graphOf + n);
  Carver c;
  std::size_t graphOfAt = c.reserve<int32_t>(n);
  std::size_t members = c.reserve<int32_t>(n);
  std::size_t memberPtr = c.reserve<int64_t>(b + 1);
  cudaError_t err;
  std::shared_ptr<void> storage = deviceMemory(c.size(), err);
  GNNC_CUDA_CHECK(err);
  GNNC_TRY(copyIn(at<int32_t>(storage, graphOfAt), graphOf, stream));
  GNNC_CUDA_CHECK(cudaMemsetAsync(
      at<int64_t>(storage, memberPtr), 0,
      static_cast<std::size_t>(b + 1) * sizeof(int64_t), stream));
  if (n > 0) {
    // members: the vertices sorted by graph (stable: increasing ids);
    // memberPtr: the exclusive sum of the graphs' vertex counts.
    std::size_t sortBytes = 0, histBytes = 0, scanBytes = 0;
    int levels = static_cast<int>(b + 1);
    GNNC_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
        nullptr, sortBytes, static_cast<const int32_t *>(nullptr),
        static_cast<int32_t *>(nullptr), static_cast<const int32_t *>(nullptr),
        static_cast<int32_t *>(nullptr), static_cast<int>(n), 0, 32, stream));
    GNNC_CUDA_CHECK(cub::DeviceHistogram::HistogramEven(
        nullptr, histBytes, static_cast<const int32_t *>(nullptr),
        static_cast<int *>(nullptr), levels, 0, static_cast<int>(b),
        static_cast<int>(n), stream));
    GNNC_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(
        nullptr, scanBytes, static_cast<const int *>(nullptr),
        static_cast<int64_t *>(nullptr), static_cast<int>(b + 1), stream));
    Carver s;
    std::size_t keysOut = s.reserve<int32_t>(n);
    std::size_t ids = s.reserve<int32_t>(n);
    std::size_t counts = s.reserve<int>(b + 1);
    std::size_t temp = s.reserve<char>(
        static_cast<int64_t>(std::max({sortBytes, histBytes, scanBytes})));
    std::shared_ptr<void> scratch = deviceMemory(s.size(), err);
    GNNC_CUDA_CHECK(err);
    iota<<<static_cast<unsigned>(gridFor(n)), 256, 0, stream>>>(
        at<int32_t>(scratch, ids), n);
    GNNC_CUDA_CHECK(cudaGetLastError());
    GNNC_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(
        at<char>(scratch, temp), sortBytes, at<int32_t>(storage, graphOfAt),
        at<int32_t>(scratch, keysOut), at<int32_t>(scratch, ids),
        at<int32_t>(storage, members), static_cast<int>(n), 0, 32, stream));
    GNNC_CUDA_CHECK(
        cudaMemsetAsync(at<int>(scratch, counts), 0,
                        static_cast<std::size_t>(b + 1) * sizeof(int), stream));
    GNNC_CUDA_CHECK(cub::DeviceHistogram::HistogramEven(
        at<char>(scratch, temp), histBytes, at<int32_t>(storage, graphOfAt),
        at<int>(scratch, counts), levels, 0, static_cast<int>(b),
        static_cast<int>(n), stream));
    GNNC_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(
        at<char>(scratch, temp), scanBytes, at<int>(scratch, counts),
        at<int64_t>(storage, memberPtr), static_cast<int>(b + 1), stream));
    GNNC_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  GNNC_CUDA_CHECK(cudaStreamSynchronize(stream));
  DeviceBatchedGraph d;
  d.graph = &graph;
  d.numGraphs = b;
  d.graphOf = at<int32_t>(storage, graphOfAt);
  d.members = at<int32_t>(storage, members);
  d.memberPtr = at<int64_t>(storage, memberPtr);
  d.storage = storage;
  out = std::move(d);
  return Status::success();
}

} // namespace gnnc::rt::cuda
