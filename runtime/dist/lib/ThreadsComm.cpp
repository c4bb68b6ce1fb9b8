//===- ThreadsComm.cpp - N ranks as threads of one process ----------------===//
//
// Part of gnnc. The threads backend, a test double: the ranks of a
// communicator are threads sharing one rendezvous (a mutex, a condition
// variable and one slot per rank). Every collective takes two steps:
//
//   publish  a rank fills its slot (the call, its buffer pointers and
//            counts), marks itself arrived and waits until every rank has
//            arrived; it then reads the other ranks' slots and copies the
//            data it needs straight from their buffers into its own;
//   finish   it marks itself done reading and waits until every rank is,
//            so no buffer a slot points to goes away while it is read.
//
// Only the publish wait has a deadline (CommOptions::TimeoutSeconds): the
// finish wait only waits for ranks that are inside the same call, between
// two steps, with no user code to run. A rank whose publish wait fails (a
// peer left, or the deadline passed) withdraws its arrival and leaves the
// rendezvous, so no rank ever reads a slot whose buffers are gone, and the
// others fail at once with the same diagnosis ("timed out after 2 s
// waiting for rank 3", or "rank 3 has left the communicator").
//
// The engines check what they read against what they were passed (counts,
// dtype, root, reduction) even when the header check is off, so a mismatch
// is an error here, never an out-of-bounds copy.
//
//===----------------------------------------------------------------------===//

#include "CommInternal.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <exception>
#include <map>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>

#include <unistd.h>

using namespace gnnc;
using namespace gnnc::dist;

namespace {

using Clock = std::chrono::steady_clock;

/// The engine operation a slot belongs to.
enum class Op : uint32_t {
  None,
  Headers,
  Barrier,
  Broadcast,
  AllReduce,
  AllGatherV,
  AllToAllV,
  Split,
};

const char *opName(Op op) {
  switch (op) {
  case Op::None:
    return "nothing";
  case Op::Headers:
    return "the header exchange";
  case Op::Barrier:
    return "barrier";
  case Op::Broadcast:
    return "broadcast";
  case Op::AllReduce:
    return "all-reduce";
  case Op::AllGatherV:
    return "all-gather";
  case Op::AllToAllV:
    return "all-to-all";
  case Op::Split:
    return "split";
  }
  return "unknown";
}

/// What a rank publishes for one step.
struct Slot {
  Op Kind = Op::None;
  const void *Send = nullptr;
  size_t Count = 0;
  DType ElemType = DType::Bool;
  int Root = -1;
  ReduceOp Reduction = ReduceOp::Sum;
  const size_t *SendCounts = nullptr;
  const size_t *RecvCounts = nullptr;
  const void *Header = nullptr; ///< a Communicator::CallHeader
  int Color = 0, Key = 0;
};

/// The state the threads of one communicator share.
struct Rendezvous {
  explicit Rendezvous(int size)
      : Size(size), Arrived(size, 0), Left(size, 0), GaveUpAt(size, 0),
        TimedOutAt(size, 0), Slots(size) {}

  int Size;
  std::mutex Mutex;
  std::condition_variable Changed;
  /// The last step each rank arrived at.
  std::vector<uint64_t> Arrived;
  /// Whether each rank has left (its communicator was destroyed, or it
  /// gave up on a step and is broken).
  std::vector<char> Left;
  /// The step at which a rank gave up (0: none), and the step at which it
  /// gave up because its deadline passed.
  std::vector<uint64_t> GaveUpAt, TimedOutAt;
  std::vector<Slot> Slots;
  /// Sub-communicators being created by split, by (publish step, colour):
  /// the new rendezvous and how many members have yet to take it.
  std::map<std::pair<uint64_t, int>,
           std::pair<std::shared_ptr<Rendezvous>, int>>
      Splits;
};

/// True when the byte ranges [a, a + an) and [b, b + bn) overlap.
bool overlaps(const void *a, size_t an, const void *b, size_t bn) {
  if (!a || !b || an == 0 || bn == 0)
    return false;
  auto pa = reinterpret_cast<uintptr_t>(a);
  auto pb = reinterpret_cast<uintptr_t>(b);
  return pa < pb + bn && pb < pa + an;
}

class ThreadsComm final : public Communicator {
public:
  ThreadsComm(int rank, int size, CommOptions options,
              std::shared_ptr<Rendezvous> rendezvous)
      : Communicator(rank, size, options), R(std::move(rendezvous)) {}

  ~ThreadsComm() override {
    std::lock_guard<std::mutex> lock(R->Mutex);
    R->Left[rank()] = 1;
    R->Changed.notify_all();
  }

  const char *backend() const override { return "threads"; }

  Status init() { return initTopology(detail::commHostName()); }

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
  /// The publish step: see the file comment.
  Status publish(const std::string &call, const Slot &slot);
  /// The finish step.
  void finish();
  /// Checks that every rank published the same operation; "" when so.
  std::string sameOp(Op op) const;
  /// Ends a call after its publish step: finishes, then returns `problem`
  /// as this call's error (success when empty).
  Status end(const std::string &call, const std::string &problem);
  const Slot &slot(int r) const { return R->Slots[r]; }

  std::shared_ptr<Rendezvous> R;
  uint64_t Step = 0;
  uint64_t LastPublish = 0;
};

Status ThreadsComm::publish(const std::string &call, const Slot &slot) {
  uint64_t step = ++Step;
  LastPublish = step;
  int me = rank();
  std::unique_lock<std::mutex> lock(R->Mutex);
  R->Slots[me] = slot;
  R->Arrived[me] = step;
  R->Changed.notify_all();

  // Whether every rank has arrived; otherwise, in `failure`, why this step
  // cannot succeed any more ("" while it still may).
  std::string failure;
  auto settled = [&]() {
    bool all = true;
    for (int q = 0; q < size(); ++q)
      all = all && R->Arrived[q] >= step;
    if (all)
      return true;
    for (int q = 0; q < size(); ++q)
      if (R->Arrived[q] < step && R->Left[q] && R->GaveUpAt[q] != step) {
        failure = fmt::format("rank {} has left the communicator", q);
        return true;
      }
    for (int q = 0; q < size(); ++q) {
      if (R->TimedOutAt[q] != step)
        continue;
      // A rank gave up on this step after its deadline: report the ranks
      // it waited for, as it did.
      std::vector<int> missing, gaveUp;
      for (int p = 0; p < size(); ++p)
        if (R->Arrived[p] < step)
          (R->GaveUpAt[p] == step ? gaveUp : missing).push_back(p);
      // When every rank it waited for has come since, this rank is the
      // latecomer: the others have left.
      failure =
          missing.empty()
              ? fmt::format("rank {} has left the communicator", gaveUp.front())
              : fmt::format("timed out after {} s waiting for {} "
                            "(missing or dead)",
                            options().TimeoutSeconds,
                            detail::commRankList(missing));
      return true;
    }
    return false;
  };

  auto timeout = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(options().TimeoutSeconds));
  auto deadline = Clock::now() + timeout;
  bool timedOut = false;
  while (!settled()) {
    if (R->Changed.wait_until(lock, deadline) == std::cv_status::timeout &&
        !settled()) {
      std::vector<int> missing;
      for (int q = 0; q < size(); ++q)
        if (R->Arrived[q] < step)
          missing.push_back(q);
      failure =
          fmt::format("timed out after {} s waiting for {} (missing "
                      "or dead)",
                      options().TimeoutSeconds, detail::commRankList(missing));
      timedOut = true;
      break;
    }
  }
  if (failure.empty())
    return Status::success();

  // Withdraw: nobody may read this slot any more, and this rank (whose
  // communicator is now broken) takes part in nothing else.
  R->Arrived[me] = step - 1;
  R->GaveUpAt[me] = step;
  if (timedOut)
    R->TimedOutAt[me] = step;
  R->Left[me] = 1;
  R->Changed.notify_all();
  return error(fmt::format("{}: {}", call, failure));
}

void ThreadsComm::finish() {
  uint64_t step = ++Step;
  std::unique_lock<std::mutex> lock(R->Mutex);
  R->Arrived[rank()] = step;
  R->Changed.notify_all();
  R->Changed.wait(lock, [&]() {
    for (int q = 0; q < size(); ++q)
      if (R->Arrived[q] < step)
        return false;
    return true;
  });
}

std::string ThreadsComm::sameOp(Op op) const {
  for (int q = 0; q < size(); ++q)
    if (slot(q).Kind != op)
      return fmt::format("rank {} called {}, but this rank {}", q,
                         opName(slot(q).Kind), opName(op));
  return "";
}

Status ThreadsComm::end(const std::string &call, const std::string &problem) {
  finish();
  if (problem.empty())
    return Status::success();
  return error(fmt::format("{}: {}", call, problem));
}

Status ThreadsComm::exchangeHeaders(const std::string &call,
                                    const CallHeader &mine,
                                    std::vector<CallHeader> &all) {
  Slot s;
  s.Kind = Op::Headers;
  s.Header = &mine;
  GNNC_TRY(publish(call, s));
  std::string problem = sameOp(Op::Headers);
  std::vector<CallHeader> headers;
  if (problem.empty()) {
    headers.reserve(size());
    for (int q = 0; q < size(); ++q)
      headers.push_back(*static_cast<const CallHeader *>(slot(q).Header));
  }
  GNNC_TRY(end(call, problem));
  all = std::move(headers);
  return Status::success();
}

Status ThreadsComm::doBarrier(const std::string &call) {
  Slot s;
  s.Kind = Op::Barrier;
  GNNC_TRY(publish(call, s));
  return end(call, sameOp(Op::Barrier));
}

Status ThreadsComm::doBroadcast(const std::string &call, void *data,
                                size_t count, DType dtype, int root) {
  Slot s;
  s.Kind = Op::Broadcast;
  s.Send = data;
  s.Count = count;
  s.ElemType = dtype;
  s.Root = root;
  GNNC_TRY(publish(call, s));
  std::string problem = sameOp(Op::Broadcast);
  if (problem.empty()) {
    const Slot &from = slot(root);
    if (from.Root != root)
      problem = fmt::format("root {} here, but rank {} passes {}", root, root,
                            from.Root);
    else if (from.Count != count || from.ElemType != dtype)
      problem = fmt::format("{} {} here, but the root passes {} {}", count,
                            rt::dtypeName(dtype), from.Count,
                            rt::dtypeName(from.ElemType));
    else if (rank() != root && count != 0 && from.Send != data)
      std::memmove(data, from.Send, count * rt::dtypeSize(dtype));
  }
  return end(call, problem);
}

Status ThreadsComm::doAllReduce(const std::string &call, const void *send,
                                void *recv, size_t count, DType dtype,
                                ReduceOp op) {
  Slot s;
  s.Kind = Op::AllReduce;
  s.Send = send;
  s.Count = count;
  s.ElemType = dtype;
  s.Reduction = op;
  GNNC_TRY(publish(call, s));
  std::string problem = sameOp(Op::AllReduce);
  for (int q = 0; q < size() && problem.empty(); ++q)
    if (slot(q).Count != count || slot(q).ElemType != dtype ||
        slot(q).Reduction != op)
      problem = fmt::format("{} {} {} here, but rank {} passes {} {} {}",
                            reduceOpName(op), count, rt::dtypeName(dtype), q,
                            reduceOpName(slot(q).Reduction), slot(q).Count,
                            rt::dtypeName(slot(q).ElemType));
  size_t bytes = count * rt::dtypeSize(dtype);
  // The other ranks read this rank's send buffer until every rank has
  // finished: a receive buffer that overlaps it is written afterwards.
  bool staged = overlaps(send, bytes, recv, bytes);
  std::vector<unsigned char> temp;
  if (problem.empty() && count != 0) {
    std::vector<const void *> inputs(size());
    for (int q = 0; q < size(); ++q)
      inputs[q] = slot(q).Send;
    if (staged)
      temp.resize(bytes);
    detail::reduceInRankOrder(inputs, staged ? temp.data() : recv, count, dtype,
                              op);
  }
  GNNC_TRY(end(call, problem));
  if (staged && count != 0)
    std::memcpy(recv, temp.data(), bytes);
  return Status::success();
}

Status ThreadsComm::doAllGatherV(const std::string &call, const void *send,
                                 void *recv, const size_t *recvCounts,
                                 DType dtype) {
  Slot s;
  s.Kind = Op::AllGatherV;
  s.Send = send;
  s.Count = recvCounts[rank()];
  s.ElemType = dtype;
  GNNC_TRY(publish(call, s));
  std::string problem = sameOp(Op::AllGatherV);
  size_t elem = rt::dtypeSize(dtype), total = 0;
  for (int q = 0; q < size() && problem.empty(); ++q) {
    if (slot(q).ElemType != dtype)
      problem =
          fmt::format("dtype {} here, but rank {} passes {}",
                      rt::dtypeName(dtype), q, rt::dtypeName(slot(q).ElemType));
    else if (slot(q).Count != recvCounts[q])
      problem = fmt::format("rank {} sends {} elements, but this rank "
                            "expects {} from it",
                            q, slot(q).Count, recvCounts[q]);
    total += recvCounts[q];
  }
  bool staged = overlaps(send, recvCounts[rank()] * elem, recv, total * elem);
  std::vector<unsigned char> temp;
  if (problem.empty() && total != 0) {
    if (staged)
      temp.resize(total * elem);
    auto *out = staged ? temp.data() : static_cast<unsigned char *>(recv);
    size_t offset = 0;
    for (int q = 0; q < size(); ++q) {
      if (recvCounts[q] != 0)
        std::memcpy(out + offset * elem, slot(q).Send, recvCounts[q] * elem);
      offset += recvCounts[q];
    }
  }
  GNNC_TRY(end(call, problem));
  if (staged && total != 0)
    std::memcpy(recv, temp.data(), total * elem);
  return Status::success();
}

Status ThreadsComm::doAllToAllV(const std::string &call, const void *send,
                                const size_t *sendCounts, void *recv,
                                const size_t *recvCounts, DType dtype) {
  Slot s;
  s.Kind = Op::AllToAllV;
  s.Send = send;
  s.ElemType = dtype;
  s.SendCounts = sendCounts;
  s.RecvCounts = recvCounts;
  GNNC_TRY(publish(call, s));
  std::string problem = sameOp(Op::AllToAllV);
  int me = rank();
  size_t elem = rt::dtypeSize(dtype), sendTotal = 0, recvTotal = 0;
  for (int q = 0; q < size(); ++q) {
    sendTotal += sendCounts[q];
    recvTotal += recvCounts[q];
  }
  for (int q = 0; q < size() && problem.empty(); ++q) {
    if (slot(q).ElemType != dtype)
      problem =
          fmt::format("dtype {} here, but rank {} passes {}",
                      rt::dtypeName(dtype), q, rt::dtypeName(slot(q).ElemType));
    else if (slot(q).SendCounts[me] != recvCounts[q])
      problem = fmt::format("rank {} sends {} elements here, but this rank "
                            "expects {} from it",
                            q, slot(q).SendCounts[me], recvCounts[q]);
  }
  bool staged = overlaps(send, sendTotal * elem, recv, recvTotal * elem);
  std::vector<unsigned char> temp;
  if (problem.empty() && recvTotal != 0) {
    if (staged)
      temp.resize(recvTotal * elem);
    auto *out = staged ? temp.data() : static_cast<unsigned char *>(recv);
    size_t offset = 0;
    for (int q = 0; q < size(); ++q) {
      // Rank q's elements for this rank follow those for lower ranks.
      size_t from = 0;
      for (int p = 0; p < me; ++p)
        from += slot(q).SendCounts[p];
      if (recvCounts[q] != 0)
        std::memcpy(out + offset * elem,
                    static_cast<const unsigned char *>(slot(q).Send) +
                        from * elem,
                    recvCounts[q] * elem);
      offset += recvCounts[q];
    }
  }
  GNNC_TRY(end(call, problem));
  if (staged && recvTotal != 0)
    std::memcpy(recv, temp.data(), recvTotal * elem);
  return Status::success();
}

Status ThreadsComm::doSplit(const std::string &call, int color, int key,
                            std::unique_ptr<Communicator> &out) {
  Slot s;
  s.Kind = Op::Split;
  s.Color = color;
  s.Key = key;
  GNNC_TRY(publish(call, s));
  std::string problem = sameOp(Op::Split);
  std::shared_ptr<Rendezvous> sub;
  int newRank = 0, newSize = 0;
  if (problem.empty() && color >= 0) {
    // Members of this colour ordered by (key, old rank).
    std::vector<std::pair<int, int>> members;
    for (int q = 0; q < size(); ++q)
      if (slot(q).Color == color)
        members.emplace_back(slot(q).Key, q);
    std::sort(members.begin(), members.end());
    newSize = static_cast<int>(members.size());
    for (int i = 0; i < newSize; ++i)
      if (members[i].second == rank())
        newRank = i;
    // The first member to get here creates the group's rendezvous.
    std::lock_guard<std::mutex> lock(R->Mutex);
    auto &entry = R->Splits[{LastPublish, color}];
    if (!entry.first) {
      entry.first = std::make_shared<Rendezvous>(newSize);
      entry.second = newSize;
    }
    sub = entry.first;
    if (--entry.second == 0)
      R->Splits.erase({LastPublish, color});
  }
  GNNC_TRY(end(call, problem));
  if (color < 0) {
    out.reset();
    return Status::success();
  }
  auto comm = std::make_unique<ThreadsComm>(newRank, newSize, options(),
                                            std::move(sub));
  GNNC_TRY(comm->init());
  out = std::move(comm);
  return Status::success();
}

} // namespace

Status gnnc::dist::runThreads(int size,
                              const std::function<Status(Communicator &)> &body,
                              const CommOptions &options) {
  if (size < 1)
    return Status::error(fmt::format(
        "gnnc dist (threads): runThreads: size {} is not positive", size));
  if (!body)
    return Status::error("gnnc dist (threads): runThreads: no body");
  auto rendezvous = std::make_shared<Rendezvous>(size);
  std::vector<Status> results(size);
  auto runRank = [&](int r) {
    ThreadsComm comm(r, size, options, rendezvous);
    Status status = comm.init();
    if (!status.ok()) {
      results[r] = status;
      return;
    }
    try {
      results[r] = body(comm);
    } catch (const std::exception &e) {
      results[r] = Status::error(
          fmt::format("gnnc dist (threads, rank {} of {}): the body threw: {}",
                      r, size, e.what()));
    } catch (...) {
      results[r] = Status::error(fmt::format(
          "gnnc dist (threads, rank {} of {}): the body threw", r, size));
    }
  };

  std::vector<std::thread> threads;
  threads.reserve(size);
  for (int r = 0; r < size; ++r) {
    try {
      threads.emplace_back(runRank, r);
    } catch (const std::system_error &e) {
      // The ranks that never start count as having left, so the started
      // ones fail at once instead of waiting for them.
      {
        std::lock_guard<std::mutex> lock(rendezvous->Mutex);
        for (int q = r; q < size; ++q)
          rendezvous->Left[q] = 1;
        rendezvous->Changed.notify_all();
      }
      for (int q = r; q < size; ++q)
        results[q] = Status::error(fmt::format(
            "gnnc dist (threads, rank {} of {}): cannot start a thread: {}", q,
            size, e.what()));
      break;
    }
  }
  for (std::thread &t : threads)
    t.join();
  for (const Status &status : results)
    if (!status.ok())
      return status;
  return Status::success();
}
