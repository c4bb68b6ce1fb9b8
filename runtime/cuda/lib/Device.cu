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

/// The scratch of sorting `rows` rows by degree: keys in and out, ids, and
/// CUB's temporary storage.
struct SortScratch {
  std::size_t keysIn = 0, keysOut = 0, ids = 0, temp = 0, tempBytes = 0;
  std::size_t size = 0;
};

Status sortScratchFor(int64_t rows, SortScratch &out) {
  SortScratch s;
  GNNC_CUDA_CHECK(cub::DeviceRadixSort::SortPairsDescending(
      nullptr, s.tempBytes, static_cast<const int32_t *>(nullptr),
      static_cast<int32_t *>(nullptr), static_cast<const int32_t *>(nullptr),
      static_cast<int32_t *>(nullptr), static_cast<int>(rows), 0, 32));
  Carver c;
  s.keysIn = c.reserve<int32_t>(rows);
  s.keysOut = c.reserve<int32_t>(rows);
  s.ids = c.reserve<int32_t>(rows);
  s.temp = c.reserve<char>(static_cast<int64_t>(s.tempBytes));
  s.size = c.size();
  out = s;
  return Status::success();
}

/// Sorts the rows of a layout by descending degree into `order`, queued on
/// `stream`, with `scratch` laid out by `s` (sortScratchFor(rows)).
Status sortByDegree(const int64_t *ptr, int64_t rows, int32_t *order,
                    const SortScratch &s, const std::shared_ptr<void> &scratch,
                    cudaStream_t stream) {
  if (rows == 0)
    return Status::success();
  std::size_t tempBytes = s.tempBytes;
  degreesAndIds<<<static_cast<unsigned>(gridFor(rows)), 256, 0, stream>>>(
      ptr, rows, at<int32_t>(scratch, s.keysIn), at<int32_t>(scratch, s.ids));
  GNNC_CUDA_CHECK(cudaGetLastError());
  GNNC_CUDA_CHECK(cub::DeviceRadixSort::SortPairsDescending(
      at<char>(scratch, s.temp), tempBytes, at<int32_t>(scratch, s.keysIn),
      at<int32_t>(scratch, s.keysOut), at<int32_t>(scratch, s.ids), order,
      static_cast<int>(rows), 0, 32, stream));
  return Status::success();
}

/// Sorts the rows of a layout by descending degree into `order` with
/// scratch of its own, and waits for it (the scratch is freed after the
/// sort has run).
Status sortByDegree(const int64_t *ptr, int64_t rows, int32_t *order,
                    cudaStream_t stream) {
  if (rows == 0)
    return Status::success();
  SortScratch s;
  GNNC_TRY(sortScratchFor(rows, s));
  cudaError_t err;
  std::shared_ptr<void> scratch = deviceMemory(s.size, err);
  GNNC_CUDA_CHECK(err);
  GNNC_TRY(sortByDegree(ptr, rows, order, s, scratch, stream));
  GNNC_CUDA_CHECK(cudaStreamSynchronize(stream));
  return Status::success();
}

/// Where the arrays of a DeviceGraph lie in its allocation. The degree
/// orders come last, so that the arrays copied from the host are one range.
struct GraphOffsets {
  std::size_t inPtr, outPtr, inSrc, inEdge, outDst, outEdge, edgeSrc, edgeDst;
  std::size_t inOrder, outOrder, size;
};

GraphOffsets offsetsFor(int64_t numSrc, int64_t numDst, int64_t e) {
  GraphOffsets o;
  Carver c;
  o.inPtr = c.reserve<int64_t>(numDst + 1);
  o.outPtr = c.reserve<int64_t>(numSrc + 1);
  o.inSrc = c.reserve<int32_t>(e);
  o.inEdge = c.reserve<int32_t>(e);
  o.outDst = c.reserve<int32_t>(e);
  o.outEdge = c.reserve<int32_t>(e);
  o.edgeSrc = c.reserve<int32_t>(e);
  o.edgeDst = c.reserve<int32_t>(e);
  o.inOrder = c.reserve<int32_t>(numDst);
  o.outOrder = c.reserve<int32_t>(numSrc);
  o.size = c.size();
  return o;
}

/// The storage of a DeviceGraph: its device memory, and what
/// DeviceGraph::assign makes on its first call (a pinned host copy of the
/// arrays copied from the host, the degree sort's scratch, an event after
/// the copies).
struct GraphStorage {
  std::shared_ptr<void> device;
  GraphOffsets offsets;
  void *staging = nullptr;
  SortScratch inSort, outSort;
  std::shared_ptr<void> scratch;
  cudaEvent_t copied = nullptr;
  bool pending = false;
  /// KernelGraph::rowsOver of the two layouts (host memory).
  int64_t inOver[KernelGraph::kRowsOverSize] = {};
  int64_t outOver[KernelGraph::kRowsOverSize] = {};

  GraphStorage() = default;
  GraphStorage(const GraphStorage &) = delete;
  GraphStorage &operator=(const GraphStorage &) = delete;
  ~GraphStorage() {
    // The last copies read the staging buffer until they have run.
    if (pending)
      (void)cudaEventSynchronize(copied);
    if (copied)
      (void)cudaEventDestroy(copied);
    if (staging)
      (void)cudaFreeHost(staging);
  }

  /// Makes what assign reuses, once.
  Status prepareAssign(int64_t numSrc, int64_t numDst) {
    if (copied)
      return Status::success();
    GNNC_TRY(sortScratchFor(numDst, inSort));
    GNNC_TRY(sortScratchFor(numSrc, outSort));
    cudaError_t err;
    std::shared_ptr<void> s =
        deviceMemory(std::max(inSort.size, outSort.size), err);
    GNNC_CUDA_CHECK(err);
    void *host = nullptr;
    if (offsets.inOrder)
      GNNC_CUDA_CHECK(cudaMallocHost(&host, offsets.inOrder));
    cudaEvent_t event = nullptr;
    if (cudaError_t e =
            cudaEventCreateWithFlags(&event, cudaEventDisableTiming);
        e != cudaSuccess) {
      if (host)
        (void)cudaFreeHost(host);
      GNNC_CUDA_CHECK(e);
    }
    scratch = std::move(s);
    staging = host;
    copied = event;
    return Status::success();
  }
};

template <typename T>
void stageInto(void *staging, std::size_t off, const std::vector<T> &src) {
  std::copy(src.begin(), src.end(),
            reinterpret_cast<T *>(static_cast<char *>(staging) + off));
}
void stageNarrow(void *staging, std::size_t off,
                 const std::vector<int64_t> &src) {
  detail::narrowInto(
      src, reinterpret_cast<int32_t *>(static_cast<char *>(staging) + off));
}

} // namespace

Status DeviceGraph::upload(const Graph &g, cudaStream_t stream,
                           DeviceGraph &out) {
  detail::HostLayout l;
  if (Status s = detail::layoutForDevice(g, l); !s.ok())
    return s;
  int64_t e = g.numEdges();
  auto graphStorage = std::make_shared<GraphStorage>();
  GraphOffsets o = offsetsFor(g.numSrc(), g.numDst(), e);
  graphStorage->offsets = o;
  cudaError_t err;
  std::shared_ptr<void> storage = deviceMemory(o.size, err);
  GNNC_CUDA_CHECK(err);
  graphStorage->device = storage;
  GNNC_TRY(copyIn(at<int64_t>(storage, o.inPtr), l.inPtr, stream));
  GNNC_TRY(copyIn(at<int64_t>(storage, o.outPtr), l.outPtr, stream));
  GNNC_TRY(copyIn(at<int32_t>(storage, o.inSrc), l.inSrc, stream));
  GNNC_TRY(copyIn(at<int32_t>(storage, o.inEdge), l.inEdge, stream));
  GNNC_TRY(copyIn(at<int32_t>(storage, o.outDst), l.outDst, stream));
  GNNC_TRY(copyIn(at<int32_t>(storage, o.outEdge), l.outEdge, stream));
  GNNC_TRY(copyIn(at<int32_t>(storage, o.edgeSrc), l.edgeSrc, stream));
  GNNC_TRY(copyIn(at<int32_t>(storage, o.edgeDst), l.edgeDst, stream));
  GNNC_TRY(sortByDegree(at<int64_t>(storage, o.inPtr), g.numDst(),
                        at<int32_t>(storage, o.inOrder), stream));
  GNNC_TRY(sortByDegree(at<int64_t>(storage, o.outPtr), g.numSrc(),
                        at<int32_t>(storage, o.outOrder), stream));
  GNNC_CUDA_CHECK(cudaStreamSynchronize(stream));
  detail::rowsOverInto(l.inPtr, graphStorage->inOver);
  detail::rowsOverInto(l.outPtr, graphStorage->outOver);
  KernelGraph in{at<int64_t>(storage, o.inPtr),   at<int32_t>(storage, o.inSrc),
                 at<int32_t>(storage, o.inEdge),  at<int32_t>(storage, o.inOrder),
                 g.numDst(),                      graphStorage->inOver};
  KernelGraph outLayout{at<int64_t>(storage, o.outPtr),
                        at<int32_t>(storage, o.outDst),
                        at<int32_t>(storage, o.outEdge),
                        at<int32_t>(storage, o.outOrder), g.numSrc(),
                        graphStorage->outOver};
  DeviceGraph d;
  detail::DeviceGraphBuilder::set(
      d, graphStorage, g.numSrc(), g.numDst(), e, in, outLayout,
      at<int32_t>(storage, o.edgeSrc), at<int32_t>(storage, o.edgeDst));
  out = std::move(d);
  return Status::success();
}

Status DeviceGraph::assign(const Graph &g, cudaStream_t stream) {
  GNNC_TRY(detail::checkAssign(*this, g, stream));
  if (!Storage)
    return Status::success(); // No vertices and no edges: nothing to write.
  auto &s = *static_cast<GraphStorage *>(Storage.get());
  GNNC_TRY(s.prepareAssign(NumSrc, NumDst));
  // The staging buffer is still read by the copies of the last call until
  // they have run.
  if (s.pending) {
    GNNC_CUDA_CHECK(cudaEventSynchronize(s.copied));
    s.pending = false;
  }
  const GraphOffsets &o = s.offsets;
  stageInto(s.staging, o.inPtr, g.inPtr());
  stageInto(s.staging, o.outPtr, g.outPtr());
  stageNarrow(s.staging, o.inSrc, g.inSrc());
  stageNarrow(s.staging, o.inEdge, g.inEdge());
  stageNarrow(s.staging, o.outDst, g.outDst());
  stageNarrow(s.staging, o.outEdge, g.outEdge());
  stageNarrow(s.staging, o.edgeSrc, g.edgeSrc());
  stageNarrow(s.staging, o.edgeDst, g.edgeDst());
  // Launchers read the long rows on the host when they launch.
  detail::rowsOverInto(g.inPtr(), s.inOver);
  detail::rowsOverInto(g.outPtr(), s.outOver);
  // Every array but the degree orders, in one copy.
  if (o.inOrder)
    GNNC_CUDA_CHECK(cudaMemcpyAsync(s.device.get(), s.staging, o.inOrder,
                                    cudaMemcpyHostToDevice, stream));
  GNNC_CUDA_CHECK(cudaEventRecord(s.copied, stream));
  s.pending = true;
  GNNC_TRY(sortByDegree(at<int64_t>(s.device, o.inPtr), NumDst,
                        at<int32_t>(s.device, o.inOrder), s.inSort, s.scratch,
                        stream));
  GNNC_TRY(sortByDegree(at<int64_t>(s.device, o.outPtr), NumSrc,
                        at<int32_t>(s.device, o.outOrder), s.outSort, s.scratch,
                        stream));
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
