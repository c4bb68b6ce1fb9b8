//===- Communicator.h - Ranks and collectives for gnnc_dist -----*- C++ -*-===//
//
// Part of gnnc. One interface over the engines that move data between ranks:
// MPI (processes on one host or many), NCCL (one GPU per rank, bootstrapped
// over MPI) and threads (N ranks in one process, a test double for unit
// tests). Nothing here opens a socket or speaks a protocol of its own.
//
// Every collective is *checked* by default: before the data moves, the ranks
// exchange a small call header (which collective, its sequence number, the
// element count and type, the root, the reduction, per-peer counts of
// all-to-all-v) and every rank compares all headers. Disagreement is an
// error on every rank that names the ranks and the values, e.g.
//
//   gnnc dist (threads, rank 1 of 4): all-reduce #7: count 10 here, but
//   rank 3 passes 12
//
// and a rank that never arrives (missing, or dead) ends the collective on
// the others after CommOptions::TimeoutSeconds with an error that names it:
//
//   gnnc dist (mpi, rank 0 of 4): barrier #3: timed out after 5 s waiting
//   for rank 3 (missing or dead)
//
// After a failed collective the communicator is broken: every later call
// returns an error at once (a "broken communicator" message that repeats
// the first error). For MPI, a process whose communicator broke bounds its
// shutdown: if MPI_Finalize (run at exit) has not returned after
// TimeoutSeconds + 5 s, because a dead peer never joins it, the process
// says so on stderr and exits with status 1 without it.
//
// Buffers are host memory except for a communicator whose deviceBuffers()
// is true (NCCL), whose buffers are device pointers.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_DIST_COMMUNICATOR_H
#define GNNC_DIST_COMMUNICATOR_H

#include "gnnc/runtime/Npy.h"
#include "gnnc/runtime/Status.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace gnnc::dist {

using rt::DType;
using rt::Status;

/// The reductions of allReduce.
enum class ReduceOp { Sum, Max, Min };
/// "sum", "max", "min".
const char *reduceOpName(ReduceOp op);

/// How collectives behave; every backend takes one.
struct CommOptions {
  /// Seconds a collective waits for every rank before it fails with an
  /// error that names the ranks not heard from. The environment variable
  /// GNNC_DIST_TIMEOUT (seconds, a positive number) overrides the default.
  double TimeoutSeconds = 60;
  /// Exchange and compare call headers before each collective (see the file
  /// comment). GNNC_DIST_CHECK=0 turns it off; a mismatch then is undefined
  /// behaviour of the engine, as it is in plain MPI.
  bool CheckArguments = true;

  /// The defaults with the environment's overrides applied; an invalid
  /// value of GNNC_DIST_TIMEOUT or GNNC_DIST_CHECK is an error.
  static Status fromEnvironment(CommOptions &out);
};

/// A group of ranks that take part in collectives together. All collectives
/// are blocking and must be called by every rank of the communicator in the
/// same order. Counts are in elements of `dtype`.
class Communicator {
public:
  virtual ~Communicator();

  /// This rank, in [0, size()).
  int rank() const { return Rank; }
  /// The number of ranks.
  int size() const { return Size; }
  /// "threads", "mpi" or "nccl".
  virtual const char *backend() const = 0;
  /// Whether collective buffers are device pointers (NCCL).
  virtual bool deviceBuffers() const { return false; }

  /// The node this rank runs on: ranks with the same node name share host
  /// memory (POSIX shared memory is only used among them). The name is the
  /// host name (every thread rank of one process shares the process' node).
  const std::string &nodeName() const { return NodeName; }
  /// This rank's index among the ranks of its node, the number of ranks on
  /// its node, the index of its node (nodes numbered in the order of their
  /// lowest rank) and the number of nodes.
  int localRank() const { return LocalRank; }
  int localSize() const { return LocalSize; }
  int nodeIndex() const { return NodeIndex; }
  int numNodes() const { return NumNodes; }

  const CommOptions &options() const { return Options; }

  Status barrier();
  /// `data` (count elements) on `root` is copied to every other rank.
  Status broadcast(void *data, size_t count, DType dtype, int root);
  /// Element-wise reduction of every rank's `send` into every rank's
  /// `recv`. `send == recv` reduces in place. Sums of floating-point values
  /// are accumulated in rank order on every backend except NCCL, so the
  /// result is the same on every rank and in every run.
  Status allReduce(const void *send, void *recv, size_t count, DType dtype,
                   ReduceOp op);
  /// Rank r's `count` elements land at recv + r * count.
  Status allGather(const void *send, void *recv, size_t count, DType dtype);
  /// As allGather with a count per rank: `recvCounts[r]` elements from rank
  /// r, packed in rank order; this rank sends recvCounts[rank()].
  Status allGatherV(const void *send, void *recv, const size_t *recvCounts,
                    DType dtype);
  /// `countPerRank` elements to each rank, packed in rank order, in both
  /// buffers.
  Status allToAll(const void *send, void *recv, size_t countPerRank,
                  DType dtype);
  /// `sendCounts[r]` elements to rank r, `recvCounts[r]` from rank r, both
  /// packed in rank order. sendCounts[r] here must equal recvCounts[rank()]
  /// on rank r; the header check compares them.
  Status allToAllV(const void *send, const size_t *sendCounts, void *recv,
                   const size_t *recvCounts, DType dtype);
  /// Splits into sub-communicators: ranks passing the same `color` form one,
  /// ordered by (key, old rank). A negative color takes part in the split
  /// but gets no communicator (`out` is null). Collective.
  Status split(int color, int key, std::unique_ptr<Communicator> &out);

  /// A communicator of the ranks on this rank's node (split by nodeName()).
  Status splitByNode(std::unique_ptr<Communicator> &out);

  /// Whether an earlier collective failed; every call then fails at once.
  bool broken() const { return !BrokenMessage.empty(); }

protected:
  Communicator(int rank, int size, CommOptions options);

  /// Fills the node fields from every rank's node name (an all-gather of
  /// the names). Backends call it once, at the end of their creation.
  Status initTopology(const std::string &nodeName);

  /// The backend's engines. `call` names the collective for messages
  /// ("all-reduce #7"). The header check has already passed when these
  /// run; they still honour the timeout. A non-OK status breaks the
  /// communicator.
  struct CallHeader {
    uint32_t Kind = 0;     ///< which collective (an internal enum)
    uint64_t Sequence = 0; ///< per-communicator call number, from 1
    uint64_t Count = 0;    ///< element count (per rank where it applies)
    int32_t DType = -1;    ///< rt::DType, -1 where none
    int32_t Root = -1;     ///< broadcast root, split: -1
    int32_t Op = -1;       ///< ReduceOp, -1 where none
    /// allToAllV and allGatherV: the count this rank sends to each peer
    /// (allGatherV: its own count repeated) and expects from each peer.
    std::vector<uint64_t> SendCounts, RecvCounts;
  };
  /// Exchanges headers with every rank (within the timeout; the error names
  /// the ranks not heard from) and returns them indexed by rank.
  virtual Status exchangeHeaders(const std::string &call,
                                 const CallHeader &mine,
                                 std::vector<CallHeader> &all) = 0;
  virtual Status doBarrier(const std::string &call) = 0;
  virtual Status doBroadcast(const std::string &call, void *data, size_t count,
                             DType dtype, int root) = 0;
  virtual Status doAllReduce(const std::string &call, const void *send,
                             void *recv, size_t count, DType dtype,
                             ReduceOp op) = 0;
  virtual Status doAllGatherV(const std::string &call, const void *send,
                              void *recv, const size_t *recvCounts,
                              DType dtype) = 0;
  virtual Status doAllToAllV(const std::string &call, const void *send,
                             const size_t *sendCounts, void *recv,
                             const size_t *recvCounts, DType dtype) = 0;
  virtual Status doSplit(const std::string &call, int color, int key,
                         std::unique_ptr<Communicator> &out) = 0;

  /// "gnnc dist (<backend>, rank <r> of <n>): " + message.
  Status error(const std::string &message) const;

  /// Called once, when a failed collective breaks this communicator.
  virtual void onBroken() {}

private:
  template <class F> Status run(uint32_t kind, const char *what, F &&body);

  int Rank, Size;
  CommOptions Options;
  uint64_t Sequence = 0;
  std::string BrokenMessage;
  std::string NodeName;
  int LocalRank = 0, LocalSize = 1, NodeIndex = 0, NumNodes = 1;
};

//===----------------------------------------------------------------------===//
// Backends
//===----------------------------------------------------------------------===//

/// Runs `body(comm)` on `size` threads, each with its own rank of a threads
/// communicator, and returns when all have returned. A test double for unit
/// tests: collectives rendezvous in shared memory. When a rank's body
/// returns (or its communicator is destroyed) while others still call
/// collectives, they fail at once with "rank r has left the communicator".
/// Returns the first non-OK status of a body, by rank. `options` are taken
/// as given (the environment is not read).
Status runThreads(int size, const std::function<Status(Communicator &)> &body,
                  const CommOptions &options = {});

/// Whether gnnc_dist was built with MPI (and so with createMpiWorld).
bool haveMpi();
/// Initialises MPI (MPI_Init_thread with MPI_THREAD_SERIALIZED) if needed
/// and returns a communicator over MPI_COMM_WORLD. Without MPI support, an
/// error. When gnnc_dist initialised MPI, it finalises it at exit.
Status createMpiWorld(std::unique_ptr<Communicator> &out,
                      const CommOptions &options);
/// As above with CommOptions::fromEnvironment(): the defaults, with
/// GNNC_DIST_TIMEOUT and GNNC_DIST_CHECK applied (an invalid value is an
/// error).
Status createMpiWorld(std::unique_ptr<Communicator> &out);

/// Whether gnnc_dist_cuda was built with NCCL. Defined in gnnc_dist_cuda.
bool haveNccl();
/// A NCCL communicator over the same ranks as `bootstrap` (an MPI
/// communicator): rank 0 creates the NCCL unique id and broadcasts it over
/// `bootstrap`; each rank uses the current CUDA device. Buffers are device
/// pointers; the header check runs over `bootstrap`. Defined in
/// gnnc_dist_cuda.
Status createNccl(Communicator &bootstrap, std::unique_ptr<Communicator> &out);

} // namespace gnnc::dist

#endif // GNNC_DIST_COMMUNICATOR_H
