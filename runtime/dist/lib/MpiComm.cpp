//===- MpiComm.cpp - Communicators over MPI ------------------------------===//
//
// Part of gnnc. The MPI backend: one communicator is two duplicates of an
// MPI communicator, one for the data and one for the call headers, with
// MPI_ERRORS_RETURN on both (an MPI error is a Status, never an abort).
//
// Every wait honours CommOptions::TimeoutSeconds: the engines start
// nonblocking operations (MPI_Ibarrier, MPI_Ibcast, MPI_Iallreduce,
// MPI_Iallgatherv, MPI_Ialltoallv) and poll them with MPI_Testsome until
// they complete or the deadline passes. Headers travel point to point
// (MPI_Isend / MPI_Irecv to and from every peer, one tag per call), so a
// timeout names the ranks whose header did not arrive.
//
// A header exchange that times out cancels its receives and keeps its send
// buffer alive for the life of the process (an abandoned send may still
// complete). A data operation that times out cannot be cancelled (MPI has
// no cancellation for collectives): with the header check on, it only times
// out when a peer died after the headers were exchanged, so it never
// completes and never touches the caller's buffers again.
//
// Floating-point all-reduce does not use MPI_Iallreduce, whose summation
// order is up to the library and may differ between ranks. It reduces
// in rank order instead: an all-to-all gives rank r slice r (a block of
// about count / size elements) of every rank's input, rank r reduces its
// slice in rank order, and an all-gather assembles the slices. Each rank
// sends and receives 2 (size - 1) / size * count elements, as many as a ring
// all-reduce, in two latency-bound steps, and holds count + count / size
// elements of scratch. Integer reductions, which are exact in any order,
// use MPI_Iallreduce.
//
// MPI counts and displacements are C ints: a call that would need more than
// INT_MAX elements in one buffer is an error (found on every rank alike
// when the header check is on).
//
//===----------------------------------------------------------------------===//

#include "CommInternal.h"

#include <fmt/format.h>

#ifdef GNNC_DIST_HAVE_MPI
// The C API only (gnnc_dist links MPI::MPI_C, not the C++ bindings).
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <thread>

#include <unistd.h>
#endif

using namespace gnnc;
using namespace gnnc::dist;

#ifndef GNNC_DIST_HAVE_MPI

bool gnnc::dist::haveMpi() { return false; }

Status gnnc::dist::createMpiWorld(std::unique_ptr<Communicator> &out,
                                  const CommOptions &options) {
  (void)out;
  (void)options;
  return Status::error("gnnc dist (mpi): gnnc_dist was built without MPI");
}

#else

namespace {

using Clock = std::chrono::steady_clock;

std::string mpiErrorText(int code) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS || length <= 0)
    return fmt::format("MPI error {}", code);
  std::string result(text, static_cast<size_t>(length));
  if (!result.empty() && result[0] >= 'A' && result[0] <= 'Z')
    result[0] = static_cast<char>(result[0] - 'A' + 'a');
  return result;
}

MPI_Datatype mpiType(DType dtype) {
  switch (dtype) {
  case DType::Bool:
    return MPI_UINT8_T;
  case DType::Int32:
    return MPI_INT32_T;
  case DType::Int64:
    return MPI_INT64_T;
  case DType::Float32:
    return MPI_FLOAT;
  case DType::Float64:
    return MPI_DOUBLE;
  }
  return MPI_BYTE;
}

MPI_Op mpiOp(ReduceOp op) {
  switch (op) {
  case ReduceOp::Sum:
    return MPI_SUM;
  case ReduceOp::Max:
    return MPI_MAX;
  case ReduceOp::Min:
    return MPI_MIN;
  }
  return MPI_SUM;
}

Clock::time_point deadlineAfter(double seconds) {
  return Clock::now() + std::chrono::duration_cast<Clock::duration>(
                            std::chrono::duration<double>(seconds));
}

/// How a poll ended.
enum class Poll { Complete, TimedOut, Failed };

/// Polls `requests` until every one is complete (MPI_REQUEST_NULL) or
/// `deadline` passes. Completed requests become MPI_REQUEST_NULL, so on a
/// timeout the pending ones are the non-null ones. On an MPI error `code`
/// holds it. Polls yield the processor, then sleep briefly, so waiting
/// ranks leave the cores to the ranks they wait for.
Poll pollRequests(std::vector<MPI_Request> &requests,
                  Clock::time_point deadline, int &code) {
  std::vector<int> indices(requests.size());
  std::vector<MPI_Status> statuses(requests.size());
  for (unsigned polls = 0;; ++polls) {
    int done = 0;
    code = MPI_Testsome(static_cast<int>(requests.size()), requests.data(),
                        &done, indices.data(), statuses.data());
    if (code == MPI_ERR_IN_STATUS) {
      for (int i = 0; i < done; ++i)
        if (statuses[i].MPI_ERROR != MPI_SUCCESS) {
          code = statuses[i].MPI_ERROR;
          break;
        }
      return Poll::Failed;
    }
    if (code != MPI_SUCCESS)
      return Poll::Failed;
    if (done == MPI_UNDEFINED)
      return Poll::Complete;
    if (done > 0)
      continue;
    if (Clock::now() >= deadline)
      return Poll::TimedOut;
    if (polls < 64)
      std::this_thread::yield();
    else
      std::this_thread::sleep_for(
          std::chrono::microseconds(polls < 256 ? 20 : 200));
  }
}

/// Whether `n` elements fit MPI's int counts.
bool fitsInt(size_t n) { return n <= static_cast<size_t>(INT_MAX); }

/// A valid address for a buffer of no elements.
const void *orDummy(const void *data) {
  static const unsigned char dummy[8] = {};
  return data ? data : dummy;
}
void *orDummy(void *data) {
  static unsigned char dummy[8] = {};
  return data ? data : dummy;
}

bool overlaps(const void *a, size_t an, const void *b, size_t bn) {
  if (!a || !b || an == 0 || bn == 0)
    return false;
  auto pa = reinterpret_cast<uintptr_t>(a);
  auto pb = reinterpret_cast<uintptr_t>(b);
  return pa < pb + bn && pb < pa + an;
}

/// The serialised size of a header's fixed fields (the per-rank counts
/// follow them).
constexpr size_t kHeaderFixed = 4 + 8 + 8 + 4 + 4 + 4 + 4;

/// After a communicator of this process broke: how long MPI_Finalize may
/// take at exit, in milliseconds (0: no communicator broke).
std::atomic<int64_t> FinalizeBoundMs{0};

/// Finalises MPI at exit when createMpiWorld initialised it. After a
/// failure MPI_Finalize may wait forever for a dead peer (Open MPI's
/// finalisation is collective): a watchdog then ends the process.
void finalizeAtExit() {
  int finalized = 0;
  if (MPI_Finalized(&finalized) != MPI_SUCCESS || finalized)
    return;
  if (int64_t bound = FinalizeBoundMs.load()) {
    std::thread([bound] {
      std::this_thread::sleep_for(std::chrono::milliseconds(bound));
      std::string line = fmt::format(
          "gnnc dist (mpi): MPI_Finalize had not returned {} s after a "
          "failed collective (a peer is dead?); exiting with status 1 "
          "without it\n",
          static_cast<double>(bound) / 1000);
      (void)!::write(STDERR_FILENO, line.data(), line.size());
      ::_exit(1);
    }).detach();
  }
  MPI_Finalize();
}

class MpiComm final : public Communicator {
public:
  MpiComm(int rank, int size, CommOptions options, MPI_Comm data,
          MPI_Comm header, int tagLimit)
      : Communicator(rank, size, options), Data(data), Header(header),
        TagLimit(tagLimit) {}

  ~MpiComm() override {
    int finalized = 0;
    if (MPI_Finalized(&finalized) == MPI_SUCCESS && !finalized) {
      // Pending operations of a broken communicator complete (or not)
      // after the communicators are freed; MPI allows this.
      MPI_Comm_free(&Header);
      MPI_Comm_free(&Data);
    }
    // Buffers of abandoned operations may still be used by MPI: never
    // freed (a broken communicator keeps a few headers' worth).
    if (!Retained.empty())
      (void)new std::vector<Buffers>(std::move(Retained));
  }

  const char *backend() const override { return "mpi"; }

  void onBroken() override {
    auto bound = static_cast<int64_t>((options().TimeoutSeconds + 5) * 1000);
    int64_t seen = FinalizeBoundMs.load();
    while (bound > seen && !FinalizeBoundMs.compare_exchange_weak(seen, bound))
      ;
  }

  /// A communicator over `data` (which it owns from here on): duplicates
  /// it for headers and learns the topology. `what` names the creation in
  /// messages.
  static Status create(MPI_Comm data, const CommOptions &options,
                       const std::string &what,
                       std::unique_ptr<Communicator> &out);

protected:
  Status exchangeHeaders(const std::string &call, const CallHeader &mine,
                         std::vector<CallHeader> &all) override;
  Status doBarrier(const std::string &call) override;
  Status doBroadcast(const std::string &call, void *data, size_t count,
                     DType dtype, int root) override;
  Status doAllReduce(const std::string &call, const void *send, void *recv,
                     size_t count, DType dtype, ReduceOp op) override;
  Status doAllGatherV(const std::string &call, const void *send, void *recv,
                      const size_t *recvCounts, DType dtype) override;
  Status doAllToAllV(const std::string &call, const void *send,
                     const size_t *sendCounts, void *recv,
                     const size_t *recvCounts, DType dtype) override;
  Status doSplit(const std::string &call, int color, int key,
                 std::unique_ptr<Communicator> &out) override;

private:
  /// Waits for one data operation started by `code` (its return value)
  /// into `request`.
  Status wait(const std::string &call, int code, MPI_Request request,
              const char *what);
  Status mpiError(const std::string &call, const char *what, int code) const {
    return error(
        fmt::format("{}: {} failed: {}", call, what, mpiErrorText(code)));
  }
  /// The headers of this call, when the header check exchanged them.
  const std::vector<CallHeader> *takeHeaders() {
    if (!HaveHeaders)
      return nullptr;
    HaveHeaders = false;
    return &LastHeaders;
  }
  Status reduceInOrder(const std::string &call, const void *send, void *recv,
                       size_t count, DType dtype, ReduceOp op);

  MPI_Comm Data, Header;
  int TagLimit;
  uint64_t HeaderCalls = 0;
  std::vector<CallHeader> LastHeaders;
  bool HaveHeaders = false;
  /// Buffers of abandoned header transfers (moving a vector keeps the
  /// addresses of its elements' storage).
  using Buffers = std::vector<std::vector<unsigned char>>;
  std::vector<Buffers> Retained;
};

Status MpiComm::wait(const std::string &call, int code, MPI_Request request,
                     const char *what) {
  if (code != MPI_SUCCESS)
    return mpiError(call, what, code);
  std::vector<MPI_Request> requests{request};
  switch (
      pollRequests(requests, deadlineAfter(options().TimeoutSeconds), code)) {
  case Poll::Complete:
    return Status::success();
  case Poll::Failed:
    return mpiError(call, what, code);
  case Poll::TimedOut:
    break;
  }
  return error(fmt::format("{}: timed out after {} s in {} waiting for the "
                           "other ranks (missing or dead)",
                           call, options().TimeoutSeconds, what));
}

Status MpiComm::create(MPI_Comm data, const CommOptions &options,
                       const std::string &what,
                       std::unique_ptr<Communicator> &out) {
  int rank = 0, size = 0;
  MPI_Comm_set_errhandler(data, MPI_ERRORS_RETURN);
  MPI_Comm_rank(data, &rank);
  MPI_Comm_size(data, &size);
  auto fail = [&](const std::string &message) {
    MPI_Comm_free(&data);
    return Status::error(fmt::format("gnnc dist (mpi, rank {} of {}): {}: {}",
                                     rank, size, what, message));
  };

  MPI_Comm header = MPI_COMM_NULL;
  MPI_Request request = MPI_REQUEST_NULL;
  int code = MPI_Comm_idup(data, &header, &request);
  if (code != MPI_SUCCESS)
    return fail("MPI_Comm_idup failed: " + mpiErrorText(code));
  std::vector<MPI_Request> requests{request};
  Poll poll =
      pollRequests(requests, deadlineAfter(options.TimeoutSeconds), code);
  if (poll == Poll::Failed)
    return fail("MPI_Comm_idup failed: " + mpiErrorText(code));
  if (poll == Poll::TimedOut)
    return fail(fmt::format("timed out after {} s waiting for the other "
                            "ranks (missing or dead)",
                            options.TimeoutSeconds));
  MPI_Comm_set_errhandler(header, MPI_ERRORS_RETURN);

  int tagLimit = 32767, found = 0;
  void *value = nullptr;
  if (MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &value, &found) ==
          MPI_SUCCESS &&
      found && value)
    tagLimit = *static_cast<int *>(value);
  auto comm = std::make_unique<MpiComm>(rank, size, options, data, header,
                                        std::max(tagLimit, 1));
  GNNC_TRY(comm->initTopology(detail::commHostName()));
  out = std::move(comm);
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Headers
//===----------------------------------------------------------------------===//

Status MpiComm::exchangeHeaders(const std::string &call, const CallHeader &mine,
                                std::vector<CallHeader> &all) {
  HaveHeaders = false;
  int n = size(), me = rank();
  // Serialise: the fixed fields, then the per-rank counts.
  auto put = [](std::vector<unsigned char> &buffer, const auto &value) {
    const auto *bytes = reinterpret_cast<const unsigned char *>(&value);
    buffer.insert(buffer.end(), bytes, bytes + sizeof(value));
  };
  Buffers sendBuffer(1);
  std::vector<unsigned char> &out = sendBuffer[0];
  put(out, mine.Kind);
  put(out, mine.Sequence);
  put(out, mine.Count);
  put(out, mine.DType);
  put(out, mine.Root);
  put(out, mine.Op);
  put(out, static_cast<uint32_t>(mine.SendCounts.size()));
  for (uint64_t c : mine.SendCounts)
    put(out, c);
  for (uint64_t c : mine.RecvCounts)
    put(out, c);
  if (mine.SendCounts.size() != mine.RecvCounts.size() ||
      mine.SendCounts.size() > static_cast<size_t>(n))
    return error(fmt::format("{}: malformed call header", call));

  size_t capacity = kHeaderFixed + 16 * static_cast<size_t>(n);
  int tag = static_cast<int>(++HeaderCalls % static_cast<uint64_t>(TagLimit));
  Buffers received(n);
  // Receives first (indices 0..n-1, MPI_REQUEST_NULL for this rank), then
  // sends.
  std::vector<MPI_Request> requests(2 * static_cast<size_t>(n),
                                    MPI_REQUEST_NULL);
  int code = MPI_SUCCESS;
  for (int q = 0; q < n && code == MPI_SUCCESS; ++q) {
    if (q == me)
      continue;
    received[q].resize(capacity);
    code = MPI_Irecv(received[q].data(), static_cast<int>(capacity), MPI_BYTE,
                     q, tag, Header, &requests[q]);
  }
  for (int q = 0; q < n && code == MPI_SUCCESS; ++q) {
    if (q == me)
      continue;
    code = MPI_Isend(out.data(), static_cast<int>(out.size()), MPI_BYTE, q, tag,
                     Header, &requests[n + q]);
  }
  Poll poll = code == MPI_SUCCESS
                  ? pollRequests(requests,
                                 deadlineAfter(options().TimeoutSeconds), code)
                  : Poll::Failed;
  if (poll != Poll::Complete) {
    std::vector<int> missing, unsent;
    std::vector<MPI_Request> cancelled;
    bool sendsPending = false;
    for (int q = 0; q < n; ++q) {
      if (requests[q] != MPI_REQUEST_NULL) {
        missing.push_back(q);
        MPI_Cancel(&requests[q]);
        cancelled.push_back(requests[q]);
      }
      if (requests[n + q] != MPI_REQUEST_NULL) {
        unsent.push_back(q);
        sendsPending = true;
        MPI_Request_free(&requests[n + q]);
      }
    }
    // A cancelled receive completes at once unless its message was already
    // being delivered; one that does not complete soon keeps its buffer.
    int ignored = MPI_SUCCESS;
    if (!cancelled.empty() &&
        pollRequests(cancelled, deadlineAfter(1.0), ignored) != Poll::Complete)
      Retained.push_back(std::move(received));
    if (sendsPending)
      Retained.push_back(std::move(sendBuffer));
    if (poll == Poll::Failed)
      return mpiError(call, "the header exchange", code);
    if (!missing.empty())
      return error(fmt::format("{}: timed out after {} s waiting for {} "
                               "(missing or dead)",
                               call, options().TimeoutSeconds,
                               detail::commRankList(missing)));
    return error(fmt::format("{}: timed out after {} s sending the call "
                             "header to {} (missing or dead)",
                             call, options().TimeoutSeconds,
                             detail::commRankList(unsent)));
  }

  std::vector<CallHeader> headers(n);
  headers[me] = mine;
  for (int q = 0; q < n; ++q) {
    if (q == me)
      continue;
    // The message's actual length is what the sender serialised; a header
    // that does not parse is an error that names its sender.
    const std::vector<unsigned char> &in = received[q];
    size_t at = 0;
    bool ok = true;
    auto get = [&](auto &value) {
      if (at + sizeof(value) > in.size()) {
        ok = false;
        return;
      }
      std::memcpy(&value, in.data() + at, sizeof(value));
      at += sizeof(value);
    };
    CallHeader &h = headers[q];
    uint32_t perRank = 0;
    get(h.Kind);
    get(h.Sequence);
    get(h.Count);
    get(h.DType);
    get(h.Root);
    get(h.Op);
    get(perRank);
    ok = ok && perRank <= static_cast<uint32_t>(n);
    if (ok) {
      h.SendCounts.resize(perRank);
      h.RecvCounts.resize(perRank);
      for (uint64_t &c : h.SendCounts)
        get(c);
      for (uint64_t &c : h.RecvCounts)
        get(c);
    }
    if (!ok)
      return error(
          fmt::format("{}: the call header of rank {} is malformed", call, q));
  }
  LastHeaders = headers;
  HaveHeaders = true;
  all = std::move(headers);
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Engines
//===----------------------------------------------------------------------===//

Status MpiComm::doBarrier(const std::string &call) {
  takeHeaders();
  MPI_Request request = MPI_REQUEST_NULL;
  int code = MPI_Ibarrier(Data, &request);
  return wait(call, code, request, "the barrier");
}

Status MpiComm::doBroadcast(const std::string &call, void *data, size_t count,
                            DType dtype, int root) {
  takeHeaders();
  if (!fitsInt(count))
    return error(fmt::format("{}: {} elements are more than MPI's int counts "
                             "allow ({})",
                             call, count, INT_MAX));
  MPI_Request request = MPI_REQUEST_NULL;
  int code = MPI_Ibcast(orDummy(data), static_cast<int>(count), mpiType(dtype),
                        root, Data, &request);
  return wait(call, code, request, "the broadcast");
}

Status MpiComm::doAllReduce(const std::string &call, const void *send,
                            void *recv, size_t count, DType dtype,
                            ReduceOp op) {
  takeHeaders();
  if (!fitsInt(count + static_cast<size_t>(size())))
    return error(fmt::format("{}: {} elements are more than MPI's int counts "
                             "allow ({})",
                             call, count, INT_MAX - size()));
  if (dtype == DType::Float32 || dtype == DType::Float64)
    return reduceInOrder(call, send, recv, count, dtype, op);
  size_t bytes = count * rt::dtypeSize(dtype);
  std::vector<unsigned char> staged;
  const void *input = send;
  if (send == recv) {
    input = MPI_IN_PLACE;
  } else if (overlaps(send, bytes, recv, bytes)) {
    staged.assign(static_cast<const unsigned char *>(send),
                  static_cast<const unsigned char *>(send) + bytes);
    input = staged.data();
  }
  MPI_Request request = MPI_REQUEST_NULL;
  int code =
      MPI_Iallreduce(orDummy(input), orDummy(recv), static_cast<int>(count),
                     mpiType(dtype), mpiOp(op), Data, &request);
  return wait(call, code, request, "the all-reduce");
}

Status MpiComm::reduceInOrder(const std::string &call, const void *send,
                              void *recv, size_t count, DType dtype,
                              ReduceOp op) {
  int n = size(), me = rank();
  size_t elem = rt::dtypeSize(dtype);
  // Slice q: a block of count / n elements, one more for the first
  // count % n slices.
  auto sliceBegin = [&](int q) {
    size_t base = count / n, extra = count % n;
    return base * q + std::min<size_t>(q, extra);
  };
  auto sliceLength = [&](int q) { return sliceBegin(q + 1) - sliceBegin(q); };
  size_t mine = sliceLength(me);
  std::vector<int> sendCounts(n), sendDispls(n), recvCounts(n), recvDispls(n);
  for (int q = 0; q < n; ++q) {
    sendCounts[q] = static_cast<int>(sliceLength(q));
    sendDispls[q] = static_cast<int>(sliceBegin(q));
    recvCounts[q] = static_cast<int>(mine);
    recvDispls[q] = static_cast<int>(mine * q);
  }
  std::vector<unsigned char> parts(mine * n * elem), reduced(mine * elem);
  MPI_Request request = MPI_REQUEST_NULL;
  int code =
      MPI_Ialltoallv(orDummy(send), sendCounts.data(), sendDispls.data(),
                     mpiType(dtype), orDummy(parts.data()), recvCounts.data(),
                     recvDispls.data(), mpiType(dtype), Data, &request);
  GNNC_TRY(wait(call, code, request, "the all-to-all of the all-reduce"));
  if (mine != 0) {
    std::vector<const void *> inputs(n);
    for (int q = 0; q < n; ++q)
      inputs[q] = parts.data() + mine * q * elem;
    detail::reduceInRankOrder(inputs, reduced.data(), mine, dtype, op);
  }
  code = MPI_Iallgatherv(orDummy(reduced.data()), static_cast<int>(mine),
                         mpiType(dtype), orDummy(recv), sendCounts.data(),
                         sendDispls.data(), mpiType(dtype), Data, &request);
  return wait(call, code, request, "the all-gather of the all-reduce");
}

Status MpiComm::doAllGatherV(const std::string &call, const void *send,
                             void *recv, const size_t *recvCounts,
                             DType dtype) {
  takeHeaders();
  int n = size(), me = rank();
  // recvCounts agree on every rank (the header check compared them), so
  // this check fails on every rank alike.
  size_t total = 0;
  for (int q = 0; q < n; ++q)
    total += recvCounts[q];
  if (!fitsInt(total))
    return error(fmt::format("{}: {} elements in all are more than MPI's "
                             "int counts allow ({})",
                             call, total, INT_MAX));
  std::vector<int> counts(n), displs(n);
  size_t offset = 0;
  for (int q = 0; q < n; ++q) {
    counts[q] = static_cast<int>(recvCounts[q]);
    displs[q] = static_cast<int>(offset);
    offset += recvCounts[q];
  }
  size_t elem = rt::dtypeSize(dtype);
  size_t myBytes = recvCounts[me] * elem;
  const void *input = send;
  std::vector<unsigned char> staged;
  const void *own =
      recv ? static_cast<unsigned char *>(recv) + displs[me] * elem : nullptr;
  if (send && send == own && myBytes != 0) {
    input = MPI_IN_PLACE;
  } else if (overlaps(send, myBytes, recv, total * elem)) {
    staged.assign(static_cast<const unsigned char *>(send),
                  static_cast<const unsigned char *>(send) + myBytes);
    input = staged.data();
  }
  MPI_Request request = MPI_REQUEST_NULL;
  int code = MPI_Iallgatherv(orDummy(input), counts[me], mpiType(dtype),
                             orDummy(recv), counts.data(), displs.data(),
                             mpiType(dtype), Data, &request);
  return wait(call, code, request, "the all-gather");
}

Status MpiComm::doAllToAllV(const std::string &call, const void *send,
                            const size_t *sendCounts, void *recv,
                            const size_t *recvCounts, DType dtype) {
  int n = size();
  // With the headers of every rank, every rank finds a rank whose buffers
  // are too large for MPI, so all fail alike; otherwise only this rank's.
  auto tooLarge = [&](const std::vector<uint64_t> &counts) {
    uint64_t total = 0;
    for (uint64_t c : counts) {
      total += c;
      if (total > static_cast<uint64_t>(INT_MAX))
        return true;
    }
    return false;
  };
  std::string problem;
  if (const std::vector<CallHeader> *headers = takeHeaders()) {
    for (int q = 0; q < n && problem.empty(); ++q)
      if (tooLarge((*headers)[q].SendCounts) ||
          tooLarge((*headers)[q].RecvCounts))
        problem = fmt::format("rank {} exchanges more elements than MPI's "
                              "int counts allow ({})",
                              q, INT_MAX);
  } else {
    std::vector<uint64_t> s(sendCounts, sendCounts + n),
        r(recvCounts, recvCounts + n);
    if (tooLarge(s) || tooLarge(r))
      problem = fmt::format("this rank exchanges more elements than MPI's "
                            "int counts allow ({})",
                            INT_MAX);
  }
  if (!problem.empty())
    return error(fmt::format("{}: {}", call, problem));

  std::vector<int> sc(n), sd(n), rc(n), rd(n);
  size_t sendTotal = 0, recvTotal = 0;
  for (int q = 0; q < n; ++q) {
    sc[q] = static_cast<int>(sendCounts[q]);
    sd[q] = static_cast<int>(sendTotal);
    sendTotal += sendCounts[q];
    rc[q] = static_cast<int>(recvCounts[q]);
    rd[q] = static_cast<int>(recvTotal);
    recvTotal += recvCounts[q];
  }
  size_t elem = rt::dtypeSize(dtype);
  const void *input = send;
  std::vector<unsigned char> staged;
  if (overlaps(send, sendTotal * elem, recv, recvTotal * elem)) {
    staged.assign(static_cast<const unsigned char *>(send),
                  static_cast<const unsigned char *>(send) + sendTotal * elem);
    input = staged.data();
  }
  MPI_Request request = MPI_REQUEST_NULL;
  int code = MPI_Ialltoallv(orDummy(input), sc.data(), sd.data(),
                            mpiType(dtype), orDummy(recv), rc.data(), rd.data(),
                            mpiType(dtype), Data, &request);
  return wait(call, code, request, "the all-to-all");
}

Status MpiComm::doSplit(const std::string &call, int color, int key,
                        std::unique_ptr<Communicator> &out) {
  takeHeaders();
  // MPI_Comm_split blocks without a deadline: enter it only once every
  // rank is known to be here.
  MPI_Request request = MPI_REQUEST_NULL;
  int code = MPI_Ibarrier(Data, &request);
  GNNC_TRY(wait(call, code, request, "the split"));
  MPI_Comm sub = MPI_COMM_NULL;
  code = MPI_Comm_split(Data, color < 0 ? MPI_UNDEFINED : color, key, &sub);
  if (code != MPI_SUCCESS)
    return mpiError(call, "MPI_Comm_split", code);
  if (sub == MPI_COMM_NULL) {
    out.reset();
    return Status::success();
  }
  std::unique_ptr<Communicator> comm;
  GNNC_TRY(create(sub, options(), call, comm));
  out = std::move(comm);
  return Status::success();
}

} // namespace

bool gnnc::dist::haveMpi() { return true; }

Status gnnc::dist::createMpiWorld(std::unique_ptr<Communicator> &out,
                                  const CommOptions &options) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (finalized)
    return Status::error("gnnc dist (mpi): MPI is already finalised");
  if (!initialized) {
    int provided = 0;
    int code =
        MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided);
    if (code != MPI_SUCCESS)
      return Status::error(fmt::format(
          "gnnc dist (mpi): MPI_Init_thread failed: {}", mpiErrorText(code)));
    std::atexit(finalizeAtExit);
  }
  MPI_Comm data = MPI_COMM_NULL;
  MPI_Request request = MPI_REQUEST_NULL;
  int code = MPI_Comm_idup(MPI_COMM_WORLD, &data, &request);
  std::vector<MPI_Request> requests{request};
  Poll poll =
      code == MPI_SUCCESS
          ? pollRequests(requests, deadlineAfter(options.TimeoutSeconds), code)
          : Poll::Failed;
  if (poll != Poll::Complete) {
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    std::string problem =
        poll == Poll::Failed
            ? "MPI_Comm_idup failed: " + mpiErrorText(code)
            : fmt::format("timed out after {} s waiting for the other ranks "
                          "(missing or dead)",
                          options.TimeoutSeconds);
    return Status::error(fmt::format(
        "gnnc dist (mpi, rank {} of {}): creating the world communicator: {}",
        rank, size, problem));
  }
  return MpiComm::create(data, options, "creating the world communicator", out);
}

#endif // GNNC_DIST_HAVE_MPI
