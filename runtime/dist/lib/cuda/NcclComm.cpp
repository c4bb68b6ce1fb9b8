//===- NcclComm.cpp - The NCCL communicator of gnnc_dist ------------------===//
//
// Part of gnnc. A Communicator whose collectives run NCCL on a CUDA stream
// of its own, one GPU per rank. The ranks find each other through a
// bootstrap communicator (MPI): rank 0 creates the NCCL unique id and
// broadcasts it. Call headers are exchanged over the bootstrap, so the
// argument check and its timeout are the bootstrap's.
//
// NCCL runs in non-blocking mode: every call returns at once and this file
// polls the communicator's asynchronous error and the stream until the
// operation is done or CommOptions::TimeoutSeconds have passed; then it
// aborts the NCCL communicator, which ends the operation on this rank, and
// the communicator is broken.
//
// Buffers are device pointers. Host pointers are staged through device
// memory, so that the communicator's own topology exchange (host buffers)
// and small control messages work as well.
//
//===----------------------------------------------------------------------===//

#include "gnnc/dist/Communicator.h"

#include <fmt/format.h>

#include <cuda_runtime_api.h>

#ifdef GNNC_DIST_HAVE_NCCL
#include "CudaUtil.h"

#include <nccl.h>

#include <chrono>
#include <cstring>
#include <thread>
#endif

namespace gnnc::dist {

#ifndef GNNC_DIST_HAVE_NCCL

bool haveNccl() { return false; }

Status createNccl(Communicator &bootstrap, std::unique_ptr<Communicator> &) {
  return Status::error(fmt::format(
      "gnnc dist ({}, rank {} of {}): create nccl: gnnc_dist_cuda was built "
      "without NCCL",
      bootstrap.backend(), bootstrap.rank(), bootstrap.size()));
}

#else

bool haveNccl() { return true; }

namespace {

using Clock = std::chrono::steady_clock;

std::string cudaMessage(const char *call, cudaError_t err) {
  return fmt::format("{} failed: {} ({})", call, cudaGetErrorString(err),
                     cudaGetErrorName(err));
}

std::string ncclMessage(const char *call, ncclResult_t res, ncclComm_t comm) {
  const char *last = comm ? ncclGetLastError(comm) : nullptr;
  if (last && *last)
    return fmt::format("{} failed: {} ({})", call, ncclGetErrorString(res),
                       last);
  return fmt::format("{} failed: {}", call, ncclGetErrorString(res));
}

bool ncclType(DType dtype, ncclDataType_t &out) {
  switch (dtype) {
  case DType::Bool:
    out = ncclUint8;
    return true;
  case DType::Int32:
    out = ncclInt32;
    return true;
  case DType::Int64:
    out = ncclInt64;
    return true;
  case DType::Float32:
    out = ncclFloat32;
    return true;
  case DType::Float64:
    out = ncclFloat64;
    return true;
  }
  return false;
}

ncclRedOp_t ncclOp(ReduceOp op) {
  switch (op) {
  case ReduceOp::Sum:
    return ncclSum;
  case ReduceOp::Max:
    return ncclMax;
  case ReduceOp::Min:
    return ncclMin;
  }
  return ncclSum;
}

ncclConfig_t nonBlockingConfig() {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;
  return config;
}

/// Polls `comm`'s asynchronous error until it leaves ncclInProgress or the
/// deadline passes. Returns ncclInProgress on expiry.
ncclResult_t pollComm(ncclComm_t comm, Clock::time_point deadline) {
  for (;;) {
    ncclResult_t state = ncclSuccess;
    ncclResult_t res = ncclCommGetAsyncError(comm, &state);
    if (res != ncclSuccess)
      return res;
    if (state != ncclInProgress)
      return state;
    if (Clock::now() >= deadline)
      return ncclInProgress;
    std::this_thread::yield();
  }
}

Clock::time_point deadlineAfter(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(
                            std::chrono::duration<double>(seconds));
}

using detail::DeviceGuard;

/// Device memory for the duration of one collective: a device pointer is
/// used as it is; a host pointer is copied to a temporary device buffer
/// (when `in`) and back (when `out`, by finish()).
class DeviceView {
public:
  DeviceView() = default;
  DeviceView(const DeviceView &) = delete;
  DeviceView &operator=(const DeviceView &) = delete;
  ~DeviceView() {
    if (Temp)
      cudaFree(Temp);
  }

  Status init(const void *ptr, size_t bytes, bool in, bool out,
              std::string &failure) {
    Host = const_cast<void *>(ptr);
    Bytes = bytes;
    CopyBack = out;
    Device = Host;
    if (!ptr || bytes == 0)
      return Status();
    cudaPointerAttributes attrs;
    cudaError_t err = cudaPointerGetAttributes(&attrs, ptr);
    if (err != cudaSuccess) {
      failure = cudaMessage("cudaPointerGetAttributes", err);
      return Status::error(failure);
    }
    if (attrs.type == cudaMemoryTypeDevice ||
        attrs.type == cudaMemoryTypeManaged)
      return Status();
    if ((err = cudaMalloc(&Temp, bytes)) != cudaSuccess) {
      Temp = nullptr;
      failure = cudaMessage("cudaMalloc", err);
      return Status::error(failure);
    }
    Device = Temp;
    if (in && (err = cudaMemcpy(Temp, ptr, bytes, cudaMemcpyHostToDevice)) !=
                  cudaSuccess) {
      failure = cudaMessage("cudaMemcpy", err);
      return Status::error(failure);
    }
    return Status();
  }

  void *get() const { return Device; }

  Status finish(std::string &failure) {
    if (!Temp || !CopyBack)
      return Status();
    cudaError_t err = cudaMemcpy(Host, Temp, Bytes, cudaMemcpyDeviceToHost);
    if (err != cudaSuccess) {
      failure = cudaMessage("cudaMemcpy", err);
      return Status::error(failure);
    }
    return Status();
  }

private:
  void *Host = nullptr, *Device = nullptr, *Temp = nullptr;
  size_t Bytes = 0;
  bool CopyBack = false;
};

class NcclComm final : public Communicator {
public:
  NcclComm(int rank, int size, CommOptions options, Communicator *bootstrap,
           std::unique_ptr<Communicator> ownedBootstrap, ncclComm_t comm,
           cudaStream_t stream, int *scratch, int device)
      : Communicator(rank, size, std::move(options)), Bootstrap(bootstrap),
        OwnedBootstrap(std::move(ownedBootstrap)), Comm(comm), Stream(stream),
        Scratch(scratch), Device(device) {}

  ~NcclComm() override {
    DeviceGuard guard(Device);
    if (Comm) {
      // Finish in-flight work and release NCCL's resources; a peer that
      // is gone must not hang the destructor.
      ncclResult_t res = ncclCommFinalize(Comm);
      if (res == ncclSuccess || res == ncclInProgress)
        res = pollComm(Comm, deadlineAfter(options().TimeoutSeconds));
      if (res == ncclSuccess)
        ncclCommDestroy(Comm);
      else
        ncclCommAbort(Comm);
    }
    if (Stream)
      cudaStreamDestroy(Stream);
    if (Scratch)
      cudaFree(Scratch);
  }

  const char *backend() const override { return "nccl"; }
  bool deviceBuffers() const override { return true; }

  /// Creates the topology fields (a collective on the new communicator).
  Status init(const std::string &nodeName) { return initTopology(nodeName); }

protected:
  Status exchangeHeaders(const std::string &call, const CallHeader &mine,
                         std::vector<CallHeader> &all) override {
    const size_t n = static_cast<size_t>(size());
    const size_t fixed = 8, len = fixed + 2 * n;
    std::vector<int64_t> buf(len, 0), gathered(len * n, 0);
    buf[0] = mine.Kind;
    buf[1] = static_cast<int64_t>(mine.Sequence);
    buf[2] = static_cast<int64_t>(mine.Count);
    buf[3] = mine.DType;
    buf[4] = mine.Root;
    buf[5] = mine.Op;
    buf[6] = static_cast<int64_t>(mine.SendCounts.size());
    buf[7] = static_cast<int64_t>(mine.RecvCounts.size());
    if (mine.SendCounts.size() > n || mine.RecvCounts.size() > n)
      return error(fmt::format("{}: call header with more counts ({}, {}) "
                               "than ranks ({})",
                               call, mine.SendCounts.size(),
                               mine.RecvCounts.size(), n));
    for (size_t i = 0; i < mine.SendCounts.size(); ++i)
      buf[fixed + i] = static_cast<int64_t>(mine.SendCounts[i]);
    for (size_t i = 0; i < mine.RecvCounts.size(); ++i)
      buf[fixed + n + i] = static_cast<int64_t>(mine.RecvCounts[i]);
    Status st =
        Bootstrap->allGather(buf.data(), gathered.data(), len, DType::Int64);
    if (!st.ok())
      return error(fmt::format("{}: header exchange over the bootstrap "
                               "communicator failed: {}",
                               call, st.message()));
    std::vector<CallHeader> headers(n);
    for (size_t r = 0; r < n; ++r) {
      const int64_t *h = gathered.data() + r * len;
      CallHeader &out = headers[r];
      out.Kind = static_cast<uint32_t>(h[0]);
      out.Sequence = static_cast<uint64_t>(h[1]);
      out.Count = static_cast<uint64_t>(h[2]);
      out.DType = static_cast<int32_t>(h[3]);
      out.Root = static_cast<int32_t>(h[4]);
      out.Op = static_cast<int32_t>(h[5]);
      if (h[6] < 0 || h[7] < 0 || static_cast<size_t>(h[6]) > n ||
          static_cast<size_t>(h[7]) > n)
        return error(
            fmt::format("{}: malformed call header from rank {}", call, r));
      out.SendCounts.assign(h + fixed, h + fixed + h[6]);
      out.RecvCounts.assign(h + fixed + n, h + fixed + n + h[7]);
    }
    all = std::move(headers);
    return Status();
  }

  Status doBarrier(const std::string &call) override {
    DeviceGuard guard(Device);
    GNNC_TRY(checkUsable(call));
    GNNC_TRY(enqueue(
        call, "ncclAllReduce",
        ncclAllReduce(Scratch, Scratch, 1, ncclInt32, ncclSum, Comm, Stream)));
    return wait(call);
  }

  Status doBroadcast(const std::string &call, void *data, size_t count,
                     DType dtype, int root) override {
    DeviceGuard guard(Device);
    GNNC_TRY(checkUsable(call));
    ncclDataType_t type = ncclUint8;
    GNNC_TRY(typeOf(call, dtype, type));
    DeviceView view;
    GNNC_TRY(stage(call, view, data, count * rt::dtypeSize(dtype), true, true));
    GNNC_TRY(enqueue(call, "ncclBroadcast",
                     ncclBroadcast(view.get(), view.get(), count, type, root,
                                   Comm, Stream)));
    GNNC_TRY(wait(call));
    return finish(call, view);
  }

  Status doAllReduce(const std::string &call, const void *send, void *recv,
                     size_t count, DType dtype, ReduceOp op) override {
    DeviceGuard guard(Device);
    GNNC_TRY(checkUsable(call));
    ncclDataType_t type = ncclUint8;
    GNNC_TRY(typeOf(call, dtype, type));
    const size_t bytes = count * rt::dtypeSize(dtype);
    DeviceView sendView, recvView;
    GNNC_TRY(stage(call, recvView, recv, bytes, send == recv, true));
    if (send != recv)
      GNNC_TRY(stage(call, sendView, send, bytes, true, false));
    const void *src = send == recv ? recvView.get() : sendView.get();
    GNNC_TRY(enqueue(call, "ncclAllReduce",
                     ncclAllReduce(src, recvView.get(), count, type, ncclOp(op),
                                   Comm, Stream)));
    GNNC_TRY(wait(call));
    return finish(call, recvView);
  }

  Status doAllGatherV(const std::string &call, const void *send, void *recv,
                      const size_t *recvCounts, DType dtype) override {
    std::vector<size_t> sendCounts(static_cast<size_t>(size()),
                                   recvCounts[rank()]);
    return exchange(call, send, sendCounts.data(), recv, recvCounts, dtype,
                    /*sameSend=*/true);
  }

  Status doAllToAllV(const std::string &call, const void *send,
                     const size_t *sendCounts, void *recv,
                     const size_t *recvCounts, DType dtype) override {
    return exchange(call, send, sendCounts, recv, recvCounts, dtype,
                    /*sameSend=*/false);
  }

  Status doSplit(const std::string &call, int color, int key,
                 std::unique_ptr<Communicator> &out) override {
    DeviceGuard guard(Device);
    GNNC_TRY(checkUsable(call));
    // The new communicator's bootstrap: the same split of ours.
    std::unique_ptr<Communicator> boot;
    Status st = Bootstrap->split(color, key, boot);
    if (!st.ok())
      return error(fmt::format("{}: split of the bootstrap communicator "
                               "failed: {}",
                               call, st.message()));
    ncclConfig_t config = nonBlockingConfig();
    ncclComm_t sub = nullptr;
    ncclResult_t res = ncclCommSplit(
        Comm, color < 0 ? NCCL_SPLIT_NOCOLOR : color, key, &sub, &config);
    if (res != ncclSuccess && res != ncclInProgress)
      return fail(call, ncclMessage("ncclCommSplit", res, Comm));
    const Clock::time_point deadline = deadlineAfter(options().TimeoutSeconds);
    res = pollComm(sub ? sub : Comm, deadline);
    if (res == ncclInProgress) {
      if (sub)
        ncclCommAbort(sub);
      return fail(call, fmt::format("ncclCommSplit timed out after {} s "
                                    "(a rank missing or dead)",
                                    options().TimeoutSeconds));
    }
    if (res != ncclSuccess) {
      std::string msg = ncclMessage("ncclCommSplit", res, sub ? sub : Comm);
      if (sub)
        ncclCommAbort(sub);
      return fail(call, msg);
    }
    if (color < 0 || !sub) {
      if (sub)
        ncclCommAbort(sub);
      out.reset();
      return Status();
    }
    int subRank = -1, subSize = 0;
    if (!boot || ncclCommUserRank(sub, &subRank) != ncclSuccess ||
        ncclCommCount(sub, &subSize) != ncclSuccess ||
        subRank != boot->rank() || subSize != boot->size()) {
      ncclCommAbort(sub);
      return fail(call, fmt::format("the NCCL split (rank {} of {}) does not "
                                    "match the bootstrap's split",
                                    subRank, subSize));
    }
    std::unique_ptr<NcclComm> made;
    std::string failure;
    st = makeComm(subRank, subSize, options(), nullptr, std::move(boot), sub,
                  made, failure);
    if (!st.ok())
      return fail(call, failure);
    GNNC_TRY(made->init(nodeName()));
    out = std::move(made);
    return Status();
  }

public:
  /// Wraps `comm` with a stream and a scratch word of its own; on failure
  /// aborts `comm` and describes the failed call in `failure`.
  static Status makeComm(int rank, int size, const CommOptions &options,
                         Communicator *bootstrap,
                         std::unique_ptr<Communicator> ownedBootstrap,
                         ncclComm_t comm, std::unique_ptr<NcclComm> &out,
                         std::string &failure) {
    cudaStream_t stream = nullptr;
    int *scratch = nullptr;
    int device = -1;
    cudaError_t err = cudaGetDevice(&device);
    if (err != cudaSuccess) {
      failure = cudaMessage("cudaGetDevice", err);
    } else if ((err = cudaStreamCreateWithFlags(
                    &stream, cudaStreamNonBlocking)) != cudaSuccess) {
      failure = cudaMessage("cudaStreamCreateWithFlags", err);
    } else if ((err = cudaMalloc(&scratch, sizeof(int))) != cudaSuccess) {
      scratch = nullptr;
      failure = cudaMessage("cudaMalloc", err);
    } else if ((err = cudaMemset(scratch, 0, sizeof(int))) != cudaSuccess) {
      failure = cudaMessage("cudaMemset", err);
    }
    if (err != cudaSuccess) {
      ncclCommAbort(comm);
      if (stream)
        cudaStreamDestroy(stream);
      if (scratch)
        cudaFree(scratch);
      return Status::error(failure);
    }
    Communicator *boot = bootstrap ? bootstrap : ownedBootstrap.get();
    out = std::make_unique<NcclComm>(rank, size, options, boot,
                                     std::move(ownedBootstrap), comm, stream,
                                     scratch, device);
    return Status();
  }

private:
  Status checkUsable(const std::string &call) {
    if (!Comm)
      return error(fmt::format("{}: the NCCL communicator was aborted", call));
    return Status();
  }

  /// Aborts the NCCL communicator (a later call fails at once) and returns
  /// the error.
  Status fail(const std::string &call, const std::string &message) {
    if (Comm) {
      ncclCommAbort(Comm);
      Comm = nullptr;
    }
    return error(fmt::format("{}: {}", call, message));
  }

  Status typeOf(const std::string &call, DType dtype, ncclDataType_t &out) {
    if (!ncclType(dtype, out))
      return error(fmt::format("{}: unsupported dtype {}", call,
                               static_cast<int>(dtype)));
    return Status();
  }

  Status stage(const std::string &call, DeviceView &view, const void *ptr,
               size_t bytes, bool in, bool out) {
    std::string failure;
    if (!view.init(ptr, bytes, in, out, failure).ok())
      return fail(call, failure);
    return Status();
  }

  Status finish(const std::string &call, DeviceView &view) {
    std::string failure;
    if (!view.finish(failure).ok())
      return fail(call, failure);
    return Status();
  }

  Status enqueue(const std::string &call, const char *what, ncclResult_t res) {
    if (res == ncclSuccess || res == ncclInProgress)
      return Status();
    return fail(call, ncclMessage(what, res, Comm));
  }

  /// Waits until the enqueued operation is done, at most the timeout.
  Status wait(const std::string &call) {
    const Clock::time_point deadline = deadlineAfter(options().TimeoutSeconds);
    for (;;) {
      ncclResult_t state = ncclSuccess;
      ncclResult_t res = ncclCommGetAsyncError(Comm, &state);
      if (res != ncclSuccess)
        return fail(call, ncclMessage("ncclCommGetAsyncError", res, Comm));
      if (state != ncclSuccess && state != ncclInProgress)
        return fail(call, ncclMessage("NCCL", state, Comm));
      if (state == ncclSuccess) {
        cudaError_t err = cudaStreamQuery(Stream);
        if (err == cudaSuccess)
          return Status();
        if (err != cudaErrorNotReady)
          return fail(call, cudaMessage("cudaStreamQuery", err));
      }
      if (Clock::now() >= deadline)
        return fail(call, fmt::format("timed out after {} s waiting for the "
                                      "NCCL operation (a rank missing or "
                                      "dead)",
                                      options().TimeoutSeconds));
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }

  /// All-to-all-v (and all-gather-v: the same send buffer to every peer)
  /// as grouped point-to-point calls.
  Status exchange(const std::string &call, const void *send,
                  const size_t *sendCounts, void *recv,
                  const size_t *recvCounts, DType dtype, bool sameSend) {
    DeviceGuard guard(Device);
    GNNC_TRY(checkUsable(call));
    ncclDataType_t type = ncclUint8;
    GNNC_TRY(typeOf(call, dtype, type));
    const size_t es = rt::dtypeSize(dtype);
    const int n = size(), me = rank();
    std::vector<size_t> sendOff(n + 1, 0), recvOff(n + 1, 0);
    for (int r = 0; r < n; ++r) {
      sendOff[r + 1] = sendOff[r] + (sameSend ? 0 : sendCounts[r]);
      recvOff[r + 1] = recvOff[r] + recvCounts[r];
    }
    const size_t sendElems = sameSend ? sendCounts[me] : sendOff[n];
    DeviceView sendView, recvView;
    GNNC_TRY(stage(call, sendView, send, sendElems * es, true, false));
    GNNC_TRY(stage(call, recvView, recv, recvOff[n] * es, false, true));
    const char *src = static_cast<const char *>(sendView.get());
    char *dst = static_cast<char *>(recvView.get());
    auto sendAt = [&](int r) { return src + (sameSend ? 0 : sendOff[r] * es); };

    if (recvCounts[me] > 0) {
      cudaError_t err = cudaMemcpyAsync(dst + recvOff[me] * es, sendAt(me),
                                        recvCounts[me] * es,
                                        cudaMemcpyDeviceToDevice, Stream);
      if (err != cudaSuccess)
        return fail(call, cudaMessage("cudaMemcpyAsync", err));
    }
    GNNC_TRY(enqueue(call, "ncclGroupStart", ncclGroupStart()));
    ncclResult_t res = ncclSuccess;
    const char *what = "ncclGroupEnd";
    for (int r = 0; r < n && res == ncclSuccess; ++r) {
      if (r == me)
        continue;
      if (sendCounts[r] > 0 && (res = ncclSend(sendAt(r), sendCounts[r], type,
                                               r, Comm, Stream)) != ncclSuccess)
        what = "ncclSend";
      if (res == ncclSuccess && recvCounts[r] > 0 &&
          (res = ncclRecv(dst + recvOff[r] * es, recvCounts[r], type, r, Comm,
                          Stream)) != ncclSuccess)
        what = "ncclRecv";
    }
    ncclResult_t end = ncclGroupEnd();
    if (res == ncclSuccess || res == ncclInProgress)
      res = end;
    GNNC_TRY(enqueue(call, what, res));
    GNNC_TRY(wait(call));
    return finish(call, recvView);
  }

  Communicator *Bootstrap;
  std::unique_ptr<Communicator> OwnedBootstrap;
  ncclComm_t Comm;
  cudaStream_t Stream;
  int *Scratch;
  int Device;
};

} // namespace

Status createNccl(Communicator &bootstrap, std::unique_ptr<Communicator> &out) {
  auto fail = [&](const std::string &message) {
    return Status::error(fmt::format("gnnc dist ({}, rank {} of {}): create "
                                     "nccl: {}",
                                     bootstrap.backend(), bootstrap.rank(),
                                     bootstrap.size(), message));
  };
  if (bootstrap.deviceBuffers())
    return fail(fmt::format("the bootstrap communicator must take host "
                            "buffers (mpi), not {}",
                            bootstrap.backend()));

  // Every rank learns whether every rank can go on, so that none waits in
  // NCCL's initialisation for a rank that has already failed.
  std::string local;
  int device = -1;
  cudaError_t err = cudaGetDevice(&device);
  if (err != cudaSuccess)
    local = cudaMessage("cudaGetDevice", err);
  else if ((err = cudaFree(nullptr)) != cudaSuccess)
    local = cudaMessage("cudaFree", err);
  static_assert(sizeof(ncclUniqueId) % sizeof(int64_t) == 0,
                "ncclUniqueId is broadcast as int64 words");
  int64_t idWords[sizeof(ncclUniqueId) / sizeof(int64_t)] = {};
  if (local.empty() && bootstrap.rank() == 0) {
    ncclUniqueId id;
    ncclResult_t res = ncclGetUniqueId(&id);
    if (res != ncclSuccess)
      local = ncclMessage("ncclGetUniqueId", res, nullptr);
    else
      std::memcpy(idWords, &id, sizeof id);
  }
  int32_t failed = local.empty() ? 0 : 1, anyFailed = 0;
  GNNC_TRY(
      bootstrap.allReduce(&failed, &anyFailed, 1, DType::Int32, ReduceOp::Max));
  if (!local.empty())
    return fail(local);
  if (anyFailed)
    return fail("another rank failed to set up CUDA or NCCL");
  GNNC_TRY(bootstrap.broadcast(idWords, sizeof idWords / sizeof(int64_t),
                               DType::Int64, 0));
  ncclUniqueId id;
  std::memcpy(&id, idWords, sizeof id);

  ncclConfig_t config = nonBlockingConfig();
  ncclComm_t comm = nullptr;
  ncclResult_t res = ncclCommInitRankConfig(&comm, bootstrap.size(), id,
                                            bootstrap.rank(), &config);
  if (res != ncclSuccess && res != ncclInProgress) {
    std::string msg = ncclMessage("ncclCommInitRankConfig", res, comm);
    if (comm)
      ncclCommAbort(comm);
    return fail(msg);
  }
  const double timeout = bootstrap.options().TimeoutSeconds;
  res = pollComm(comm, deadlineAfter(timeout));
  if (res != ncclSuccess) {
    std::string msg =
        res == ncclInProgress
            ? fmt::format("ncclCommInitRankConfig timed out after {} s (a "
                          "rank missing or dead)",
                          timeout)
            : ncclMessage("ncclCommInitRankConfig", res, comm);
    ncclCommAbort(comm);
    return fail(msg);
  }

  std::unique_ptr<NcclComm> made;
  std::string failure;
  if (!NcclComm::makeComm(bootstrap.rank(), bootstrap.size(),
                          bootstrap.options(), &bootstrap, nullptr, comm, made,
                          failure)
           .ok())
    return fail(failure);
  GNNC_TRY(made->init(bootstrap.nodeName()));
  out = std::move(made);
  return Status();
}

#endif // GNNC_DIST_HAVE_NCCL

} // namespace gnnc::dist
