//===- DeviceTensor.cu - Device memory types of gnnc_dist -----------------===//
//
// Part of gnnc. createDeviceTensor: distributed tensors in device memory,
// one realisation per WholeGraph memory type, each rank on its current
// CUDA device.
//
//   continuous   every rank creates one physical allocation (cuMemCreate)
//                exportable as a POSIX file descriptor; the ranks exchange
//                (pid, fd), import each other's descriptors with
//                pidfd_open + pidfd_getfd, and map all allocations, in rank
//                order, into one reserved virtual range (ranks of one
//                process map each other's handles directly). The allocations
//                cut the tensor's bytes at granularity boundaries, so that
//                the range holds every row contiguously; each rank's piece
//                starts at the granule holding its first row.
//   chunked      every rank allocates its rows (cudaMalloc) and shares them
//                with a CUDA IPC handle; peers open the handles (ranks in
//                one process use the pointer directly).
//   distributed  every rank allocates its rows only; gather and scatter
//                route indices and rows with all-to-all-v, on device
//                buffers when the communicator takes them (NCCL) and
//                through host copies otherwise (MPI, threads).
//
// Indices and rows are device pointers. gather and scatter check the
// indices on the device (the first bad position, by atomicMin) and agree on
// the outcome with every rank. A scatter drops all but the last occurrence
// of each index, on a host copy of the indices, before its kernel writes;
// the distributed type routes with host copies of the indices too (its rows
// stay on the device on a NCCL communicator).
//
// Driver entry points are looked up through the runtime
// (cudaGetDriverEntryPointByVersion), so that nothing links libcuda and a
// machine without a driver still loads the library. Every CUDA, driver and
// collective failure is an error naming the call.
//
//===----------------------------------------------------------------------===//

#include "../CommInternal.h"
#include "CudaUtil.h"
#include "gnnc/dist/DistTensor.h"

#include <fmt/format.h>

#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <functional>
#include <mutex>
#include <sys/syscall.h>
#include <unistd.h>
#include <unordered_map>

namespace gnnc::dist {
namespace {

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

/// Where rows live: either one base pointer holding rows [Begin, ...), or
/// one pointer per rank (Chunks) with the partition's prefix sums
/// (Offsets, NumChunks + 1 entries), both in device memory.
struct RowTable {
  char *const *Chunks = nullptr;
  const int64_t *Offsets = nullptr;
  int NumChunks = 0;
  char *Base = nullptr;
  int64_t Begin = 0;
};

__device__ inline char *rowAddress(const RowTable &t, int64_t row,
                                   int64_t rowBytes) {
  if (!t.Chunks)
    return t.Base + (row - t.Begin) * rowBytes;
  // The largest r with Offsets[r] <= row: the rank that owns `row`.
  int lo = 0, hi = t.NumChunks;
  while (hi - lo > 1) {
    int mid = (lo + hi) / 2;
    if (t.Offsets[mid] <= row)
      lo = mid;
    else
      hi = mid;
  }
  return t.Chunks[lo] + (row - t.Offsets[lo]) * rowBytes;
}

/// Records in `firstBad` the smallest position whose index is outside
/// [0, rows).
__global__ void checkIndicesKernel(const int64_t *indices, int64_t n,
                                   int64_t rows, unsigned long long *firstBad) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
       i < n; i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t v = indices[i];
    if (v < 0 || v >= rows)
      atomicMin(firstBad, static_cast<unsigned long long>(i));
  }
}

/// out[i] = row indices[i] of `src`, for i < n, in words of type W.
template <class W>
__global__ void copyRowsKernel(RowTable src, const int64_t *indices, int64_t n,
                               char *out, int64_t wordsPerRow) {
  const int64_t rowBytes = wordsPerRow * static_cast<int64_t>(sizeof(W));
  const int64_t total = n * wordsPerRow;
  for (int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
       t < total; t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t i = t / wordsPerRow, w = t % wordsPerRow;
    const W *from =
        reinterpret_cast<const W *>(rowAddress(src, indices[i], rowBytes));
    reinterpret_cast<W *>(out + i * rowBytes)[w] = from[w];
  }
}

/// Row indices[p] of `dst` = rows[p] for p = positions[k] (k < m), or for
/// p = k when positions is null.
template <class W>
__global__ void writeRowsKernel(RowTable dst, const int64_t *indices,
                                const int64_t *positions, int64_t m,
                                const char *rows, int64_t wordsPerRow) {
  const int64_t rowBytes = wordsPerRow * static_cast<int64_t>(sizeof(W));
  const int64_t total = m * wordsPerRow;
  for (int64_t t = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
       t < total; t += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t k = t / wordsPerRow, w = t % wordsPerRow;
    int64_t p = positions ? positions[k] : k;
    W *to = reinterpret_cast<W *>(rowAddress(dst, indices[p], rowBytes));
    to[w] = reinterpret_cast<const W *>(rows + p * rowBytes)[w];
  }
}

constexpr int ThreadsPerBlock = 256;

int blocksFor(int64_t work) {
  int64_t blocks = (work + ThreadsPerBlock - 1) / ThreadsPerBlock;
  if (blocks < 1)
    blocks = 1;
  return static_cast<int>(blocks < 8192 ? blocks : 8192);
}

/// The widest word (16, 8, 4 or 1 bytes) dividing the row size and every
/// address.
size_t wordSize(size_t rowBytes, std::initializer_list<const void *> ptrs) {
  for (size_t w : {size_t(16), size_t(8), size_t(4)}) {
    bool fits = rowBytes % w == 0;
    for (const void *p : ptrs)
      fits = fits && reinterpret_cast<uintptr_t>(p) % w == 0;
    if (fits)
      return w;
  }
  return 1;
}

//===----------------------------------------------------------------------===//
// CUDA errors and driver entry points
//===----------------------------------------------------------------------===//

std::string cudaMessage(const char *call, cudaError_t err) {
  return fmt::format("{} failed: {} ({})", call, cudaGetErrorString(err),
                     cudaGetErrorName(err));
}

/// The driver calls of the continuous type.
struct Driver {
  decltype(&::cuGetErrorString) GetErrorString = nullptr;
  decltype(&::cuMemGetAllocationGranularity) GetGranularity = nullptr;
  decltype(&::cuMemCreate) Create = nullptr;
  decltype(&::cuMemRelease) Release = nullptr;
  decltype(&::cuMemExportToShareableHandle) Export = nullptr;
  decltype(&::cuMemImportFromShareableHandle) Import = nullptr;
  decltype(&::cuMemAddressReserve) Reserve = nullptr;
  decltype(&::cuMemAddressFree) AddressFree = nullptr;
  decltype(&::cuMemMap) Map = nullptr;
  decltype(&::cuMemUnmap) Unmap = nullptr;
  decltype(&::cuMemSetAccess) SetAccess = nullptr;
  std::string Failure; ///< why the entry points are missing, if they are

  std::string message(const char *call, CUresult res) const {
    const char *text = nullptr;
    if (GetErrorString)
      GetErrorString(res, &text);
    return fmt::format("{} failed: {} (CUresult {})", call,
                       text ? text : "unknown error", static_cast<int>(res));
  }
};

template <class F> void lookUp(Driver &d, const char *symbol, F &slot) {
  if (!d.Failure.empty())
    return;
  void *fn = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  cudaError_t err = cudaGetDriverEntryPointByVersion(symbol, &fn, 12000,
                                                     cudaEnableDefault, &found);
  if (err != cudaSuccess)
    d.Failure = cudaMessage("cudaGetDriverEntryPointByVersion", err);
  else if (found != cudaDriverEntryPointSuccess || !fn)
    d.Failure = fmt::format("the CUDA driver has no {}", symbol);
  else
    slot = reinterpret_cast<F>(fn);
}

const Driver &driver() {
  static const Driver d = [] {
    Driver d;
    lookUp(d, "cuGetErrorString", d.GetErrorString);
    lookUp(d, "cuMemGetAllocationGranularity", d.GetGranularity);
    lookUp(d, "cuMemCreate", d.Create);
    lookUp(d, "cuMemRelease", d.Release);
    lookUp(d, "cuMemExportToShareableHandle", d.Export);
    lookUp(d, "cuMemImportFromShareableHandle", d.Import);
    lookUp(d, "cuMemAddressReserve", d.Reserve);
    lookUp(d, "cuMemAddressFree", d.AddressFree);
    lookUp(d, "cuMemMap", d.Map);
    lookUp(d, "cuMemUnmap", d.Unmap);
    lookUp(d, "cuMemSetAccess", d.SetAccess);
    return d;
  }();
  return d;
}

/// Whether the device can address `ptr` (device, managed or pinned host
/// memory); otherwise `failure` says why not.
bool deviceAddressable(const void *ptr, const char *name,
                       std::string &failure) {
  cudaPointerAttributes attrs;
  cudaError_t err = cudaPointerGetAttributes(&attrs, ptr);
  if (err != cudaSuccess) {
    cudaGetLastError();
    failure = cudaMessage("cudaPointerGetAttributes", err);
    return false;
  }
  if (attrs.type == cudaMemoryTypeUnregistered) {
    failure = fmt::format("the {} are not device memory (pass device "
                          "pointers to a device tensor)",
                          name);
    return false;
  }
  return true;
}

/// A duplicate of file descriptor `fd` of process `pid`.
bool importFd(int64_t pid, int64_t fd, int &out, std::string &failure) {
  long pidfd = ::syscall(SYS_pidfd_open, static_cast<pid_t>(pid), 0u);
  if (pidfd < 0) {
    failure =
        fmt::format("pidfd_open(pid {}) failed: {}", pid, std::strerror(errno));
    return false;
  }
  long got = ::syscall(SYS_pidfd_getfd, static_cast<int>(pidfd),
                       static_cast<int>(fd), 0u);
  int saved = errno;
  ::close(static_cast<int>(pidfd));
  if (got < 0) {
    failure = fmt::format("pidfd_getfd(pid {}, fd {}) failed: {}{}", pid, fd,
                          std::strerror(saved),
                          saved == EPERM ? " (this process may not trace the "
                                           "peer; see "
                                           "/proc/sys/kernel/yama/ptrace_scope)"
                                         : "");
    return false;
  }
  out = static_cast<int>(got);
  return true;
}

using detail::DeviceGuard;

//===----------------------------------------------------------------------===//
// Scratch memory and host-side collectives
//===----------------------------------------------------------------------===//

/// A device buffer freed on destruction.
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  ~DeviceBuffer() {
    if (Ptr)
      cudaFree(Ptr);
  }
  /// Allocates `bytes` (none for 0); the message names the failed call.
  bool allocate(size_t bytes, std::string &failure) {
    if (bytes == 0)
      return true;
    cudaError_t err = cudaMalloc(&Ptr, bytes);
    if (err != cudaSuccess) {
      Ptr = nullptr;
      failure = cudaMessage("cudaMalloc", err);
      return false;
    }
    return true;
  }
  void *get() const { return Ptr; }
  template <class T> T *as() const { return static_cast<T *>(Ptr); }

private:
  void *Ptr = nullptr;
};

/// Runs a collective `call(send, recv)` on host data: directly, or through
/// device copies when the communicator takes device buffers.
Status onHost(Communicator &comm, const void *send, size_t sendBytes,
              void *recv, size_t recvBytes,
              const std::function<Status(const void *, void *)> &call) {
  if (!comm.deviceBuffers())
    return call(send, recv);
  DeviceBuffer dsend, drecv;
  std::string failure;
  cudaError_t err = cudaSuccess;
  if (!dsend.allocate(sendBytes, failure) ||
      !drecv.allocate(recvBytes, failure))
    return Status::error(failure);
  if (sendBytes && (err = cudaMemcpy(dsend.get(), send, sendBytes,
                                     cudaMemcpyHostToDevice)) != cudaSuccess)
    return Status::error(cudaMessage("cudaMemcpy", err));
  GNNC_TRY(call(dsend.get(), drecv.get()));
  if (recvBytes && (err = cudaMemcpy(recv, drecv.get(), recvBytes,
                                     cudaMemcpyDeviceToHost)) != cudaSuccess)
    return Status::error(cudaMessage("cudaMemcpy", err));
  return Status();
}

Status allGatherHost(Communicator &comm, const int64_t *send, int64_t *recv,
                     size_t count) {
  const size_t bytes = count * sizeof(int64_t);
  return onHost(comm, send, bytes, recv, bytes * comm.size(),
                [&](const void *s, void *r) {
                  return comm.allGather(s, r, count, DType::Int64);
                });
}

Status allToAllHost(Communicator &comm, const int64_t *send, int64_t *recv) {
  const size_t bytes = comm.size() * sizeof(int64_t);
  return onHost(comm, send, bytes, recv, bytes, [&](const void *s, void *r) {
    return comm.allToAll(s, r, 1, DType::Int64);
  });
}

/// For each value, the position of its last occurrence, in order of first
/// appearance: the writes that survive "last occurrence wins".
std::vector<int64_t> lastOccurrences(const std::vector<int64_t> &v,
                                     bool &hasDuplicates) {
  std::unordered_map<int64_t, int64_t> last;
  last.reserve(v.size());
  for (size_t i = 0; i < v.size(); ++i)
    last[v[i]] = static_cast<int64_t>(i);
  hasDuplicates = last.size() != v.size();
  std::vector<int64_t> winners;
  winners.reserve(last.size());
  for (size_t i = 0; i < v.size(); ++i)
    if (last[v[i]] == static_cast<int64_t>(i))
      winners.push_back(static_cast<int64_t>(i));
  return winners;
}

uint64_t fnv(const std::vector<int64_t> &values) {
  uint64_t h = 14695981039346656037ull;
  for (int64_t v : values)
    for (int b = 0; b < 8; ++b)
      h = (h ^ ((static_cast<uint64_t>(v) >> (8 * b)) & 0xff)) *
          1099511628211ull;
  return h;
}

//===----------------------------------------------------------------------===//
// The tensor
//===----------------------------------------------------------------------===//

class DeviceTensor final : public DistTensor {
public:
  DeviceTensor(Communicator &comm, int dims, int64_t cols, DType dtype,
               RowPartition partition, TensorOptions options, int device)
      : DistTensor(comm, dims, cols, dtype, std::move(partition),
                   std::move(options)),
        Device(device) {}

  ~DeviceTensor() override {
    DeviceGuard guard(Device);
    if (Stream)
      cudaStreamSynchronize(Stream);
    const Driver &d = driver();
    for (const auto &[offset, bytes] : MappedPieces)
      d.Unmap(Range + offset, bytes);
    for (CUmemGenericAllocationHandle h : Handles)
      d.Release(h);
    if (Range)
      d.AddressFree(Range, RangeBytes);
    for (void *p : OpenedPeers)
      cudaIpcCloseMemHandle(p);
    if (Own)
      cudaFree(Own);
    if (DevChunks)
      cudaFree(DevChunks);
    if (DevOffsets)
      cudaFree(DevOffsets);
    if (Stream)
      cudaStreamDestroy(Stream);
  }

  /// Allocates and shares the memory. Collective; every rank runs the
  /// same collectives whatever fails locally, and all fail together.
  Status create(int64_t granularity);

  void *localData() override { return Local; }
  void *globalData() override {
    return type() == MemoryType::Continuous
               ? reinterpret_cast<void *>(static_cast<uintptr_t>(Range))
               : nullptr;
  }

  size_t localBytes() const override {
    if (type() != MemoryType::Continuous)
      return static_cast<size_t>(localRows()) * rowBytes();
    if (rows() == 0)
      return 0;
    return static_cast<size_t>(static_cast<long double>(RangeBytes) *
                               static_cast<long double>(localRows()) /
                               static_cast<long double>(rows()));
  }

  Status gather(const int64_t *indices, size_t n, void *out) override;
  Status scatter(const int64_t *indices, size_t n, const void *rows) override;

protected:
  Status writeLocalRows(int64_t first, int64_t count,
                        const void *host) override;
  Status readLocalRows(int64_t first, int64_t count, void *host) override;

private:
  Status createContinuous(int64_t granularity, std::string &failure, bool &ok);
  Status createChunked(std::string &failure, bool &ok);
  bool uploadTables(const std::vector<char *> &chunks, std::string &failure);

  Status cudaError(const char *what, const char *call, cudaError_t err) const {
    return error(what, cudaMessage(call, err));
  }
  Status sync(const char *what) const {
    cudaError_t err = cudaStreamSynchronize(Stream);
    return err == cudaSuccess ? Status()
                              : cudaError(what, "cudaStreamSynchronize", err);
  }
  Status wrap(const char *what, Status st) const {
    return st.ok() ? st : error(what, st.message());
  }

  /// Checks the indices on the device: the first one out of range is an
  /// error naming it and its position. `data` (the rows or the output, n
  /// rows) must be device memory too.
  Status findBadIndex(const char *what, const int64_t *indices, size_t n,
                      const void *data, const char *dataName);
  /// As findBadIndex, agreed with every rank: a bad index anywhere fails
  /// the call everywhere.
  Status checkIndices(const char *what, const int64_t *indices, size_t n,
                      const void *data, const char *dataName) {
    Status local = findBadIndex(what, indices, n, data, dataName);
    return detail::agreeStatus(comm(), local);
  }
  /// Copies device indices to the host.
  Status indicesToHost(const char *what, const int64_t *indices, size_t n,
                       std::vector<int64_t> &out) const;
  /// Exchanges device buffers with all-to-all-v (counts in rows of `width`
  /// elements of `dtype`).
  Status allToAllVDevice(const char *what, const void *send,
                         const std::vector<size_t> &sendRows, void *recv,
                         const std::vector<size_t> &recvRows, DType dtype,
                         size_t width);
  /// The per-rank receive counts for per-rank send counts.
  Status exchangeCounts(const char *what, const std::vector<size_t> &send,
                        std::vector<size_t> &recv);

  void launchCopy(const RowTable &src, const int64_t *indices, int64_t n,
                  void *out, const void *srcBase) const;
  void launchWrite(const RowTable &dst, const int64_t *indices,
                   const int64_t *positions, int64_t m, const void *rows,
                   const void *dstBase) const;

  RowTable sharedTable() const {
    RowTable t;
    if (type() == MemoryType::Continuous) {
      t.Base = reinterpret_cast<char *>(static_cast<uintptr_t>(Range));
    } else {
      t.Chunks = DevChunks;
      t.Offsets = DevOffsets;
      t.NumChunks = comm().size();
    }
    return t;
  }
  RowTable localTable() const {
    RowTable t;
    t.Base = static_cast<char *>(Local);
    t.Begin = localRowBegin();
    return t;
  }

  Status gatherDistributed(const int64_t *indices, size_t n, void *out);
  /// Writes rows of a continuous or chunked tensor (no collective).
  Status writeShared(const char *what, const int64_t *indices, size_t n,
                     const void *rows);
  Status scatterDistributed(const int64_t *indices, size_t n, const void *rows);

  int Device;
  cudaStream_t Stream = nullptr;
  void *Local = nullptr; ///< this rank's rows
  // Continuous.
  CUdeviceptr Range = 0;
  size_t RangeBytes = 0;
  std::vector<std::pair<size_t, size_t>> MappedPieces; ///< offset, bytes
  std::vector<CUmemGenericAllocationHandle> Handles;
  // Chunked and distributed.
  void *Own = nullptr;
  std::vector<void *> OpenedPeers;
  char **DevChunks = nullptr;
  int64_t *DevOffsets = nullptr;
};

bool DeviceTensor::uploadTables(const std::vector<char *> &chunks,
                                std::string &failure) {
  const int n = comm().size();
  std::vector<int64_t> offsets(n + 1);
  for (int r = 0; r <= n; ++r)
    offsets[r] = r < n ? partition().begin(r) : rows();
  cudaError_t err =
      cudaMalloc(reinterpret_cast<void **>(&DevOffsets), offsets.size() * 8);
  if (err != cudaSuccess) {
    DevOffsets = nullptr;
    failure = cudaMessage("cudaMalloc", err);
    return false;
  }
  if ((err = cudaMemcpy(DevOffsets, offsets.data(), offsets.size() * 8,
                        cudaMemcpyHostToDevice)) != cudaSuccess) {
    failure = cudaMessage("cudaMemcpy", err);
    return false;
  }
  if (chunks.empty())
    return true;
  const size_t bytes = chunks.size() * sizeof(char *);
  if ((err = cudaMalloc(reinterpret_cast<void **>(&DevChunks), bytes)) !=
      cudaSuccess) {
    DevChunks = nullptr;
    failure = cudaMessage("cudaMalloc", err);
    return false;
  }
  if ((err = cudaMemcpy(DevChunks, chunks.data(), bytes,
                        cudaMemcpyHostToDevice)) != cudaSuccess) {
    failure = cudaMessage("cudaMemcpy", err);
    return false;
  }
  return true;
}

Status DeviceTensor::create(int64_t granularity) {
  const char *what = "create";
  std::string failure;
  bool ok = true;
  cudaError_t err = cudaStreamCreate(&Stream);
  if (err != cudaSuccess) {
    Stream = nullptr;
    ok = false;
    failure = cudaMessage("cudaStreamCreate", err);
  }

  if (type() == MemoryType::Continuous) {
    GNNC_TRY(createContinuous(granularity, failure, ok));
  } else if (type() == MemoryType::Chunked) {
    GNNC_TRY(createChunked(failure, ok));
  } else {
    const size_t bytes = static_cast<size_t>(localRows()) * rowBytes();
    if (ok && bytes > 0) {
      if ((err = cudaMalloc(&Own, bytes)) != cudaSuccess) {
        Own = nullptr;
        ok = false;
        failure = cudaMessage("cudaMalloc", err);
      } else if ((err = cudaMemset(Own, 0, bytes)) != cudaSuccess) {
        ok = false;
        failure = cudaMessage("cudaMemset", err);
      }
    }
    Local = Own;
    if (ok && !uploadTables({}, failure))
      ok = false;
    return detail::agreeStatus(comm(), ok ? Status() : error(what, failure));
  }
  return Status();
}

Status DeviceTensor::createContinuous(int64_t granularity, std::string &failure,
                                      bool &ok) {
  const char *what = "create";
  const Driver &d = driver();
  const int n = comm().size(), me = comm().rank();
  const uint64_t g = static_cast<uint64_t>(granularity);
  const uint64_t total = static_cast<uint64_t>(rows()) * rowBytes();
  // Piece r: [bound[r], bound[r + 1]), cut at granule boundaries.
  std::vector<uint64_t> bound(n + 1);
  for (int r = 0; r < n; ++r)
    bound[r] = static_cast<uint64_t>(partition().begin(r)) * rowBytes() / g * g;
  bound[n] = (total + g - 1) / g * g;
  RangeBytes = bound[n];
  auto pieceBytes = [&](int r) { return bound[r + 1] - bound[r]; };

  CUmemAllocationProp prop;
  std::memset(&prop, 0, sizeof prop);
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = Device;
  prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;

  // This rank's allocation, exported as a file descriptor.
  CUmemGenericAllocationHandle mine = 0;
  bool haveMine = false;
  int exported = -1;
  if (ok && pieceBytes(me) > 0) {
    CUresult res = d.Create(&mine, pieceBytes(me), &prop, 0);
    if (res != CUDA_SUCCESS) {
      ok = false;
      failure = d.message("cuMemCreate", res);
    } else {
      haveMine = true;
      Handles.push_back(mine);
      res = d.Export(&exported, mine, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                     0);
      if (res != CUDA_SUCCESS) {
        ok = false;
        exported = -1;
        failure = d.message("cuMemExportToShareableHandle", res);
      }
    }
  }
  // ok, pid, exported descriptor, allocation handle (used by the ranks
  // of this process, which map it without importing it).
  std::vector<int64_t> mineWords = {ok ? 1 : 0,
                                    static_cast<int64_t>(::getpid()), exported,
                                    static_cast<int64_t>(mine)};
  std::vector<int64_t> all(4 * n);
  Status st = allGatherHost(comm(), mineWords.data(), all.data(), 4);
  if (!st.ok()) {
    if (exported >= 0)
      ::close(exported);
    return error(what, st.message());
  }
  for (int r = 0; r < n && ok; ++r)
    if (!all[4 * r]) {
      if (exported >= 0)
        ::close(exported);
      return error(what, fmt::format("rank {} failed to create its part of "
                                     "the range",
                                     r));
    }
  if (!ok) {
    if (exported >= 0)
      ::close(exported);
    return error(what, failure);
  }

  // Every rank's allocation, mapped in rank order into one range.
  std::vector<CUmemGenericAllocationHandle> handle(n, 0);
  if (haveMine)
    handle[me] = mine;
  for (int r = 0; r < n && ok; ++r) {
    if (r == me || pieceBytes(r) == 0)
      continue;
    if (all[4 * r + 1] == static_cast<int64_t>(::getpid())) {
      handle[r] = static_cast<CUmemGenericAllocationHandle>(all[4 * r + 3]);
      continue;
    }
    int fd = -1;
    if (!importFd(all[4 * r + 1], all[4 * r + 2], fd, failure)) {
      ok = false;
      break;
    }
    CUresult res = d.Import(&handle[r],
                            reinterpret_cast<void *>(static_cast<intptr_t>(fd)),
                            CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
    ::close(fd);
    if (res != CUDA_SUCCESS) {
      ok = false;
      failure = d.message("cuMemImportFromShareableHandle", res);
      break;
    }
    Handles.push_back(handle[r]);
  }
  if (ok && RangeBytes > 0) {
    CUresult res = d.Reserve(&Range, RangeBytes, g, 0, 0);
    if (res != CUDA_SUCCESS) {
      Range = 0;
      ok = false;
      failure = d.message("cuMemAddressReserve", res);
    }
    for (int r = 0; r < n && ok; ++r) {
      if (pieceBytes(r) == 0)
        continue;
      res = d.Map(Range + bound[r], pieceBytes(r), 0, handle[r], 0);
      if (res != CUDA_SUCCESS) {
        ok = false;
        failure = d.message("cuMemMap", res);
        break;
      }
      MappedPieces.emplace_back(bound[r], pieceBytes(r));
    }
    if (ok) {
      CUmemAccessDesc access;
      std::memset(&access, 0, sizeof access);
      access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
      access.location.id = Device;
      access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
      res = d.SetAccess(Range, RangeBytes, &access, 1);
      if (res != CUDA_SUCCESS) {
        ok = false;
        failure = d.message("cuMemSetAccess", res);
      }
    }
    // Each rank zeroes its own piece.
    if (ok && pieceBytes(me) > 0) {
      cudaError_t err = cudaMemset(
          reinterpret_cast<void *>(static_cast<uintptr_t>(Range + bound[me])),
          0, pieceBytes(me));
      if (err == cudaSuccess)
        err = cudaDeviceSynchronize();
      if (err != cudaSuccess) {
        ok = false;
        failure = cudaMessage("cudaMemset", err);
      }
    }
  }
  if (ok && Range)
    Local = reinterpret_cast<char *>(static_cast<uintptr_t>(Range)) +
            localRowBegin() * static_cast<int64_t>(rowBytes());
  // Every peer has imported this rank's descriptor (and zeroed its piece)
  // once this returns.
  Status agreed =
      detail::agreeStatus(comm(), ok ? Status() : error(what, failure));
  if (exported >= 0)
    ::close(exported);
  return agreed;
}

Status DeviceTensor::createChunked(std::string &failure, bool &ok) {
  const char *what = "create";
  const int n = comm().size(), me = comm().rank();
  const size_t bytes = static_cast<size_t>(localRows()) * rowBytes();
  cudaIpcMemHandle_t handle;
  std::memset(&handle, 0, sizeof handle);
  cudaError_t err = cudaSuccess;
  if (ok && bytes > 0) {
    if ((err = cudaMalloc(&Own, bytes)) != cudaSuccess) {
      Own = nullptr;
      failure = cudaMessage("cudaMalloc", err);
    } else if ((err = cudaMemset(Own, 0, bytes)) != cudaSuccess) {
      failure = cudaMessage("cudaMemset", err);
    } else if ((err = cudaDeviceSynchronize()) != cudaSuccess) {
      failure = cudaMessage("cudaDeviceSynchronize", err);
    } else if ((err = cudaIpcGetMemHandle(&handle, Own)) != cudaSuccess) {
      failure = cudaMessage("cudaIpcGetMemHandle", err);
    }
    ok = err == cudaSuccess;
  }
  Local = Own;

  // ok, pid, device, pointer, has rows, IPC handle.
  constexpr size_t HandleWords = sizeof(cudaIpcMemHandle_t) / sizeof(int64_t);
  static_assert(sizeof(cudaIpcMemHandle_t) % sizeof(int64_t) == 0,
                "IPC handles are exchanged as int64 words");
  constexpr size_t Words = 5 + HandleWords;
  std::vector<int64_t> mine(Words, 0), all(Words * n, 0);
  mine[0] = ok ? 1 : 0;
  mine[1] = ::getpid();
  mine[2] = Device;
  mine[3] = static_cast<int64_t>(reinterpret_cast<uintptr_t>(Own));
  mine[4] = Own ? 1 : 0;
  std::memcpy(&mine[5], &handle, sizeof handle);
  GNNC_TRY(wrap(what, allGatherHost(comm(), mine.data(), all.data(), Words)));
  if (!ok)
    return error(what, failure);
  for (int r = 0; r < n; ++r)
    if (!all[Words * r])
      return error(what,
                   fmt::format("rank {} failed to allocate its chunk", r));

  std::vector<char *> chunks(n, nullptr);
  for (int r = 0; r < n && ok; ++r) {
    const int64_t *w = &all[Words * r];
    if (r == me || !w[4]) {
      chunks[r] = r == me ? static_cast<char *>(Own) : nullptr;
      continue;
    }
    if (w[1] == static_cast<int64_t>(::getpid())) {
      // A rank of this process: its pointer, with peer access from this
      // device when it lives on another one.
      chunks[r] = reinterpret_cast<char *>(static_cast<uintptr_t>(w[3]));
      if (w[2] != Device) {
        err = cudaDeviceEnablePeerAccess(static_cast<int>(w[2]), 0);
        if (err == cudaErrorPeerAccessAlreadyEnabled) {
          cudaGetLastError();
          err = cudaSuccess;
        }
        if (err != cudaSuccess) {
          ok = false;
          failure = cudaMessage("cudaDeviceEnablePeerAccess", err);
        }
      }
      continue;
    }
    cudaIpcMemHandle_t peer;
    std::memcpy(&peer, w + 5, sizeof peer);
    void *p = nullptr;
    err = cudaIpcOpenMemHandle(&p, peer, cudaIpcMemLazyEnablePeerAccess);
    if (err != cudaSuccess) {
      ok = false;
      failure = cudaMessage("cudaIpcOpenMemHandle", err);
      break;
    }
    OpenedPeers.push_back(p);
    chunks[r] = static_cast<char *>(p);
  }
  if (ok && !uploadTables(chunks, failure))
    ok = false;
  return detail::agreeStatus(comm(), ok ? Status() : error(what, failure));
}

Status DeviceTensor::writeLocalRows(int64_t first, int64_t count,
                                    const void *host) {
  DeviceGuard guard(Device);
  const char *what = "write rows";
  if (first < 0 || count < 0 || first + count > localRows())
    return error(what, fmt::format("local rows [{}, {}) outside [0, {})", first,
                                   first + count, localRows()));
  if (count == 0)
    return Status();
  cudaError_t err = cudaMemcpyAsync(
      static_cast<char *>(Local) + first * static_cast<int64_t>(rowBytes()),
      host, static_cast<size_t>(count) * rowBytes(), cudaMemcpyHostToDevice,
      Stream);
  if (err != cudaSuccess)
    return cudaError(what, "cudaMemcpyAsync", err);
  return sync(what);
}

Status DeviceTensor::readLocalRows(int64_t first, int64_t count, void *host) {
  DeviceGuard guard(Device);
  const char *what = "read rows";
  if (first < 0 || count < 0 || first + count > localRows())
    return error(what, fmt::format("local rows [{}, {}) outside [0, {})", first,
                                   first + count, localRows()));
  if (count == 0)
    return Status();
  cudaError_t err = cudaMemcpyAsync(
      host,
      static_cast<const char *>(Local) +
          first * static_cast<int64_t>(rowBytes()),
      static_cast<size_t>(count) * rowBytes(), cudaMemcpyDeviceToHost, Stream);
  if (err != cudaSuccess)
    return cudaError(what, "cudaMemcpyAsync", err);
  return sync(what);
}

void DeviceTensor::launchCopy(const RowTable &src, const int64_t *indices,
                              int64_t n, void *out, const void *srcBase) const {
  if (n == 0 || rowBytes() == 0)
    return;
  const size_t w = wordSize(rowBytes(), {out, srcBase});
  const int64_t words = static_cast<int64_t>(rowBytes() / w);
  const int blocks = blocksFor(n * words);
  char *dst = static_cast<char *>(out);
  switch (w) {
  case 16:
    copyRowsKernel<uint4>
        <<<blocks, ThreadsPerBlock, 0, Stream>>>(src, indices, n, dst, words);
    break;
  case 8:
    copyRowsKernel<unsigned long long>
        <<<blocks, ThreadsPerBlock, 0, Stream>>>(src, indices, n, dst, words);
    break;
  case 4:
    copyRowsKernel<unsigned int>
        <<<blocks, ThreadsPerBlock, 0, Stream>>>(src, indices, n, dst, words);
    break;
  default:
    copyRowsKernel<unsigned char>
        <<<blocks, ThreadsPerBlock, 0, Stream>>>(src, indices, n, dst, words);
    break;
  }
}

void DeviceTensor::launchWrite(const RowTable &dst, const int64_t *indices,
                               const int64_t *positions, int64_t m,
                               const void *rows, const void *dstBase) const {
  if (m == 0 || rowBytes() == 0)
    return;
  const size_t w = wordSize(rowBytes(), {rows, dstBase});
  const int64_t words = static_cast<int64_t>(rowBytes() / w);
  const int blocks = blocksFor(m * words);
  const char *src = static_cast<const char *>(rows);
  switch (w) {
  case 16:
    writeRowsKernel<uint4><<<blocks, ThreadsPerBlock, 0, Stream>>>(
        dst, indices, positions, m, src, words);
    break;
  case 8:
    writeRowsKernel<unsigned long long><<<blocks, ThreadsPerBlock, 0, Stream>>>(
        dst, indices, positions, m, src, words);
    break;
  case 4:
    writeRowsKernel<unsigned int><<<blocks, ThreadsPerBlock, 0, Stream>>>(
        dst, indices, positions, m, src, words);
    break;
  default:
    writeRowsKernel<unsigned char><<<blocks, ThreadsPerBlock, 0, Stream>>>(
        dst, indices, positions, m, src, words);
    break;
  }
}

Status DeviceTensor::findBadIndex(const char *what, const int64_t *indices,
                                  size_t n, const void *data,
                                  const char *dataName) {
  if (n == 0)
    return Status();
  std::string failure;
  if (!indices || !data)
    return error(what, fmt::format("{} indices but a null {}", n,
                                   indices ? dataName : "index list"));
  if (!deviceAddressable(indices, "indices", failure) ||
      (rowBytes() > 0 && !deviceAddressable(data, dataName, failure)))
    return error(what, failure);
  DeviceBuffer flag;
  if (!flag.allocate(sizeof(unsigned long long), failure))
    return error(what, failure);
  unsigned long long first = ULLONG_MAX;
  cudaError_t err = cudaMemcpyAsync(flag.get(), &first, sizeof first,
                                    cudaMemcpyHostToDevice, Stream);
  if (err != cudaSuccess)
    return cudaError(what, "cudaMemcpyAsync", err);
  checkIndicesKernel<<<blocksFor(static_cast<int64_t>(n)), ThreadsPerBlock, 0,
                       Stream>>>(indices, static_cast<int64_t>(n), rows(),
                                 flag.as<unsigned long long>());
  if ((err = cudaGetLastError()) != cudaSuccess)
    return cudaError(what, "the index check kernel", err);
  if ((err = cudaMemcpyAsync(&first, flag.get(), sizeof first,
                             cudaMemcpyDeviceToHost, Stream)) != cudaSuccess)
    return cudaError(what, "cudaMemcpyAsync", err);
  GNNC_TRY(sync(what));
  if (first == ULLONG_MAX)
    return Status();
  int64_t value = 0;
  if ((err = cudaMemcpy(&value, indices + first, sizeof value,
                        cudaMemcpyDeviceToHost)) != cudaSuccess)
    return cudaError(what, "cudaMemcpy", err);
  return error(what, fmt::format("index {} at position {} is out of range "
                                 "[0, {})",
                                 value, first, rows()));
}

Status DeviceTensor::indicesToHost(const char *what, const int64_t *indices,
                                   size_t n, std::vector<int64_t> &out) const {
  out.resize(n);
  if (n == 0)
    return Status();
  cudaError_t err = cudaMemcpy(out.data(), indices, n * sizeof(int64_t),
                               cudaMemcpyDeviceToHost);
  if (err != cudaSuccess)
    return cudaError(what, "cudaMemcpy", err);
  return Status();
}

Status DeviceTensor::exchangeCounts(const char *what,
                                    const std::vector<size_t> &send,
                                    std::vector<size_t> &recv) {
  const int n = comm().size();
  std::vector<int64_t> s(send.begin(), send.end()), r(n, 0);
  GNNC_TRY(wrap(what, allToAllHost(comm(), s.data(), r.data())));
  recv.assign(n, 0);
  for (int i = 0; i < n; ++i) {
    if (r[i] < 0)
      return error(what, fmt::format("rank {} sends a negative count", i));
    recv[i] = static_cast<size_t>(r[i]);
  }
  return Status();
}

Status DeviceTensor::allToAllVDevice(const char *what, const void *send,
                                     const std::vector<size_t> &sendRows,
                                     void *recv,
                                     const std::vector<size_t> &recvRows,
                                     DType dtype, size_t width) {
  const int n = comm().size();
  std::vector<size_t> sc(n), rc(n);
  size_t sendTotal = 0, recvTotal = 0;
  for (int r = 0; r < n; ++r) {
    sc[r] = sendRows[r] * width;
    rc[r] = recvRows[r] * width;
    sendTotal += sc[r];
    recvTotal += rc[r];
  }
  if (comm().deviceBuffers())
    return wrap(what,
                comm().allToAllV(send, sc.data(), recv, rc.data(), dtype));
  const size_t es = rt::dtypeSize(dtype);
  std::vector<unsigned char> hs(sendTotal * es), hr(recvTotal * es);
  cudaError_t err;
  if (!hs.empty() && (err = cudaMemcpy(hs.data(), send, hs.size(),
                                       cudaMemcpyDeviceToHost)) != cudaSuccess)
    return cudaError(what, "cudaMemcpy", err);
  GNNC_TRY(wrap(what, comm().allToAllV(hs.data(), sc.data(), hr.data(),
                                       rc.data(), dtype)));
  if (!hr.empty() && (err = cudaMemcpy(recv, hr.data(), hr.size(),
                                       cudaMemcpyHostToDevice)) != cudaSuccess)
    return cudaError(what, "cudaMemcpy", err);
  return Status();
}

Status DeviceTensor::gather(const int64_t *indices, size_t n, void *out) {
  DeviceGuard guard(Device);
  const char *what = "gather";
  GNNC_TRY(checkIndices(what, indices, n, out, "output rows"));
  if (type() == MemoryType::Distributed)
    return gatherDistributed(indices, n, out);
  const void *base =
      type() == MemoryType::Continuous
          ? reinterpret_cast<const void *>(static_cast<uintptr_t>(Range))
          : nullptr;
  launchCopy(sharedTable(), indices, static_cast<int64_t>(n), out, base);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess)
    return cudaError(what, "the gather kernel", err);
  return sync(what);
}

Status DeviceTensor::writeShared(const char *what, const int64_t *indices,
                                 size_t n, const void *rowsIn) {
  if (n == 0)
    return Status();
  // The last occurrence of an index wins: duplicates are dropped first.
  std::vector<int64_t> host;
  GNNC_TRY(indicesToHost(what, indices, n, host));
  bool dup = false;
  std::vector<int64_t> winners = lastOccurrences(host, dup);
  DeviceBuffer positions;
  std::string failure;
  cudaError_t err = cudaSuccess;
  if (dup && !positions.allocate(winners.size() * 8, failure))
    return error(what, failure);
  if (dup &&
      (err = cudaMemcpy(positions.get(), winners.data(), winners.size() * 8,
                        cudaMemcpyHostToDevice)) != cudaSuccess)
    return cudaError(what, "cudaMemcpy", err);
  const void *base =
      type() == MemoryType::Continuous
          ? reinterpret_cast<const void *>(static_cast<uintptr_t>(Range))
          : nullptr;
  launchWrite(sharedTable(), indices, dup ? positions.as<int64_t>() : nullptr,
              static_cast<int64_t>(winners.size()), rowsIn, base);
  if ((err = cudaGetLastError()) != cudaSuccess)
    return cudaError(what, "the scatter kernel", err);
  return sync(what);
}

Status DeviceTensor::scatter(const int64_t *indices, size_t n,
                             const void *rowsIn) {
  DeviceGuard guard(Device);
  const char *what = "scatter";
  GNNC_TRY(checkIndices(what, indices, n, rowsIn, "rows"));
  if (type() == MemoryType::Distributed)
    return scatterDistributed(indices, n, rowsIn);

  Status local = writeShared(what, indices, n, rowsIn);
  // Every rank's writes are done (and visible to every rank) after this.
  return detail::agreeStatus(comm(), local);
}

Status DeviceTensor::gatherDistributed(const int64_t *indices, size_t n,
                                       void *out) {
  const char *what = "gather";
  const int ranks = comm().size();
  // Route: the indices sorted by owner (stably), and where each result
  // comes back.
  std::vector<int64_t> host;
  GNNC_TRY(indicesToHost(what, indices, n, host));
  std::vector<size_t> sendCounts(ranks, 0), recvCounts;
  for (int64_t v : host)
    ++sendCounts[partition().owner(v)];
  std::vector<size_t> cursor(ranks, 0);
  for (int r = 1; r < ranks; ++r)
    cursor[r] = cursor[r - 1] + sendCounts[r - 1];
  std::vector<int64_t> sendIdx(n), back(n);
  for (size_t i = 0; i < n; ++i) {
    size_t pos = cursor[partition().owner(host[i])]++;
    sendIdx[pos] = host[i];
    back[i] = static_cast<int64_t>(pos);
  }
  GNNC_TRY(exchangeCounts(what, sendCounts, recvCounts));
  size_t recvTotal = 0;
  for (size_t c : recvCounts)
    recvTotal += c;

  std::string failure;
  DeviceBuffer dSendIdx, dRecvIdx, dBack, dServe, dRows;
  if (!dSendIdx.allocate(n * 8, failure) ||
      !dRecvIdx.allocate(recvTotal * 8, failure) ||
      !dBack.allocate(n * 8, failure) ||
      !dServe.allocate(recvTotal * rowBytes(), failure) ||
      !dRows.allocate(n * rowBytes(), failure))
    return error(what, failure);
  cudaError_t err;
  if (n > 0 && ((err = cudaMemcpy(dSendIdx.get(), sendIdx.data(), n * 8,
                                  cudaMemcpyHostToDevice)) != cudaSuccess ||
                (err = cudaMemcpy(dBack.get(), back.data(), n * 8,
                                  cudaMemcpyHostToDevice)) != cudaSuccess))
    return cudaError(what, "cudaMemcpy", err);
  GNNC_TRY(allToAllVDevice(what, dSendIdx.get(), sendCounts, dRecvIdx.get(),
                           recvCounts, DType::Int64, 1));
  // Serve the rows peers asked for, then send them back.
  launchCopy(localTable(), dRecvIdx.as<int64_t>(),
             static_cast<int64_t>(recvTotal), dServe.get(), Local);
  if ((err = cudaGetLastError()) != cudaSuccess)
    return cudaError(what, "the gather kernel", err);
  GNNC_TRY(sync(what));
  GNNC_TRY(allToAllVDevice(what, dServe.get(), recvCounts, dRows.get(),
                           sendCounts, dtype(), static_cast<size_t>(cols())));
  RowTable received;
  received.Base = dRows.as<char>();
  launchCopy(received, dBack.as<int64_t>(), static_cast<int64_t>(n), out,
             dRows.get());
  if ((err = cudaGetLastError()) != cudaSuccess)
    return cudaError(what, "the gather kernel", err);
  return sync(what);
}

Status DeviceTensor::scatterDistributed(const int64_t *indices, size_t n,
                                        const void *rowsIn) {
  const char *what = "scatter";
  const int ranks = comm().size();
  // This rank's surviving writes, grouped by owner in their order.
  std::vector<int64_t> host;
  GNNC_TRY(indicesToHost(what, indices, n, host));
  bool dup = false;
  std::vector<int64_t> winners = lastOccurrences(host, dup);
  std::vector<size_t> sendCounts(ranks, 0), recvCounts;
  for (int64_t p : winners)
    ++sendCounts[partition().owner(host[p])];
  std::vector<size_t> cursor(ranks, 0);
  for (int r = 1; r < ranks; ++r)
    cursor[r] = cursor[r - 1] + sendCounts[r - 1];
  const size_t m = winners.size();
  std::vector<int64_t> sendIdx(m), sendPos(m);
  for (int64_t p : winners) {
    size_t at = cursor[partition().owner(host[p])]++;
    sendIdx[at] = host[p];
    sendPos[at] = p;
  }
  GNNC_TRY(exchangeCounts(what, sendCounts, recvCounts));
  size_t recvTotal = 0;
  for (size_t c : recvCounts)
    recvTotal += c;

  std::string failure;
  DeviceBuffer dSendIdx, dSendPos, dSendRows, dRecvIdx, dRecvRows, dApply;
  if (!dSendIdx.allocate(m * 8, failure) ||
      !dSendPos.allocate(m * 8, failure) ||
      !dSendRows.allocate(m * rowBytes(), failure) ||
      !dRecvIdx.allocate(recvTotal * 8, failure) ||
      !dRecvRows.allocate(recvTotal * rowBytes(), failure) ||
      !dApply.allocate(recvTotal * 8, failure))
    return error(what, failure);
  cudaError_t err;
  if (m > 0 && ((err = cudaMemcpy(dSendIdx.get(), sendIdx.data(), m * 8,
                                  cudaMemcpyHostToDevice)) != cudaSuccess ||
                (err = cudaMemcpy(dSendPos.get(), sendPos.data(), m * 8,
                                  cudaMemcpyHostToDevice)) != cudaSuccess))
    return cudaError(what, "cudaMemcpy", err);
  // Pack the rows in send order.
  RowTable user;
  user.Base = static_cast<char *>(const_cast<void *>(rowsIn));
  launchCopy(user, dSendPos.as<int64_t>(), static_cast<int64_t>(m),
             dSendRows.get(), rowsIn);
  if ((err = cudaGetLastError()) != cudaSuccess)
    return cudaError(what, "the scatter kernel", err);
  GNNC_TRY(sync(what));
  GNNC_TRY(allToAllVDevice(what, dSendIdx.get(), sendCounts, dRecvIdx.get(),
                           recvCounts, DType::Int64, 1));
  GNNC_TRY(allToAllVDevice(what, dSendRows.get(), sendCounts, dRecvRows.get(),
                           recvCounts, dtype(), static_cast<size_t>(cols())));
  // Apply in rank order: the last write to a row (highest rank, then last
  // position) wins.
  std::vector<int64_t> recvHost;
  GNNC_TRY(indicesToHost(what, dRecvIdx.as<int64_t>(), recvTotal, recvHost));
  for (int64_t v : recvHost)
    if (v < localRowBegin() || v >= localRowBegin() + localRows())
      return error(what, fmt::format("received row {} outside this rank's "
                                     "rows [{}, {})",
                                     v, localRowBegin(),
                                     localRowBegin() + localRows()));
  bool recvDup = false;
  std::vector<int64_t> apply = lastOccurrences(recvHost, recvDup);
  if (!apply.empty() &&
      (err = cudaMemcpy(dApply.get(), apply.data(), apply.size() * 8,
                        cudaMemcpyHostToDevice)) != cudaSuccess)
    return cudaError(what, "cudaMemcpy", err);
  launchWrite(localTable(), dRecvIdx.as<int64_t>(),
              recvDup ? dApply.as<int64_t>() : nullptr,
              static_cast<int64_t>(apply.size()), dRecvRows.get(), Local);
  if ((err = cudaGetLastError()) != cudaSuccess)
    return cudaError(what, "the scatter kernel", err);
  return sync(what);
}

} // namespace

//===----------------------------------------------------------------------===//
// Creation
//===----------------------------------------------------------------------===//

Status createDeviceTensor(Communicator &comm, int64_t rows, int64_t cols,
                          DType dtype, const TensorOptions &options,
                          std::unique_ptr<DistTensor> &out) {
  const std::string prefix = options.Name + ": create";
  auto fail = [&](const std::string &message) {
    return Status::error(prefix + ": " + message);
  };

  // Local checks; every rank then learns every rank's outcome, so that a
  // rank with bad arguments does not leave the others waiting.
  std::string local;
  RowPartition partition;
  int device = -1;
  int64_t granularity = 1;
  size_t elem = 0;
  switch (dtype) {
  case DType::Bool:
  case DType::Int32:
  case DType::Int64:
  case DType::Float32:
  case DType::Float64:
    elem = rt::dtypeSize(dtype);
    break;
  }
  if (elem == 0)
    local = fmt::format("unsupported dtype {}", static_cast<int>(dtype));
  else if (options.Location != MemoryLocation::Device)
    local = fmt::format("a {} tensor: createDeviceTensor makes device "
                        "tensors (use createTensor)",
                        memoryLocationName(options.Location));
  else if (options.Type != MemoryType::Continuous &&
           options.Type != MemoryType::Chunked &&
           options.Type != MemoryType::Distributed)
    local = "invalid memory type";
  else if (rows < 0 || cols < 0)
    local = fmt::format("negative shape {}x{}", rows, cols);
  else if (cols > 0 && rows > INT64_MAX / cols / static_cast<int64_t>(elem))
    local = fmt::format("shape {}x{} overflows", rows, cols);
  else if (options.Type != MemoryType::Distributed && comm.numNodes() != 1)
    local = fmt::format("a {} tensor needs every rank on one node, but the "
                        "communicator spans {} nodes (use distributed, or a "
                        "communicator split by node)",
                        memoryTypeName(options.Type), comm.numNodes());
  if (local.empty()) {
    Status st =
        RowPartition::make(rows, comm.size(), options.RowsPerRank, partition);
    if (!st.ok())
      local = st.message();
  }
  if (local.empty()) {
    cudaError_t err = cudaGetDevice(&device);
    if (err == cudaSuccess)
      err = cudaFree(nullptr); // makes the primary context current
    if (err != cudaSuccess)
      local = cudaMessage("cudaGetDevice", err);
  }
  if (local.empty() && options.Type == MemoryType::Continuous) {
    const Driver &d = driver();
    if (!d.Failure.empty()) {
      local = d.Failure;
    } else {
      CUmemAllocationProp prop;
      std::memset(&prop, 0, sizeof prop);
      prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
      prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
      prop.location.id = device;
      prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
      size_t g = 0;
      CUresult res =
          d.GetGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
      if (res != CUDA_SUCCESS || g == 0)
        local = d.message("cuMemGetAllocationGranularity", res);
      else
        granularity = static_cast<int64_t>(g);
    }
  }

  std::vector<int64_t> offsets;
  if (local.empty())
    for (int r = 0; r < comm.size(); ++r)
      offsets.push_back(partition.begin(r));
  const int64_t descriptor[7] = {local.empty() ? 1 : 0,
                                 rows,
                                 cols,
                                 static_cast<int64_t>(dtype),
                                 static_cast<int64_t>(options.Type),
                                 static_cast<int64_t>(fnv(offsets)),
                                 granularity};
  const int n = comm.size();
  std::vector<int64_t> all(7 * static_cast<size_t>(n));
  Status st = allGatherHost(comm, descriptor, all.data(), 7);
  if (!st.ok())
    return fail(st.message());
  if (!local.empty())
    return fail(local);
  static const char *const Fields[] = {
      "", "rows", "columns", "dtypes", "memory types", "partitions (hash)"};
  for (int r = 0; r < n; ++r) {
    const int64_t *d = &all[7 * static_cast<size_t>(r)];
    if (!d[0])
      return fail(fmt::format("rank {} rejects the arguments", r));
    for (int f = 1; f < 6; ++f)
      if (d[f] != descriptor[f])
        return fail(fmt::format("the {} differ between ranks: rank {} passes "
                                "{}, rank {} passes {}",
                                Fields[f], comm.rank(), descriptor[f], r,
                                d[f]));
    // Granularities are powers of two: the largest is a multiple of all.
    granularity = std::max(granularity, d[6]);
  }

  auto tensor = std::make_unique<DeviceTensor>(
      comm, cols == 0 ? 1 : 2, cols == 0 ? 1 : cols, dtype,
      std::move(partition), options, device);
  GNNC_TRY(tensor->create(granularity));
  out = std::move(tensor);
  return Status();
}

} // namespace gnnc::dist
