//===- MpiFaults.cpp - Faults an MPI communicator must report -------------===//
//
// Part of gnnc's tests. gnnc-dist-mpi-faults MODE runs one fault on the MPI
// world (4 ranks or more, launched by mpirun; GNNC_DIST_TIMEOUT sets the
// timeout) and prints, on every rank, "rank R pid P" and then the error its
// collective returned:
//
//   rank 0: error: gnnc dist (mpi, rank 0 of 4): barrier #1: timed out ...
//
// Modes:
//   size-mismatch     all-reduce with count 10, but 12 on rank 3
//   wrong-collective  all-gather on rank 2, all-reduce on the others
//   missing           rank 3 skips a barrier and waits until the others
//                     have timed out
//   stuck             rank 3 skips a barrier and stays alive for 60 s
//                     without finalising MPI: the others' finalisation
//                     must give up (see Communicator.h) instead of waiting
//   killed            every rank creates a host tensor of each shared
//                     memory type (continuous, chunked), then rank 3 kills
//                     itself with SIGKILL; the others call a barrier
//
// A rank that sees the error its mode expects prints it and exits 0; any
// other outcome prints "rank R: unexpected: ..." and exits 1. The driver
// (run-faults.py) checks the lines, the time and what the job left behind.
//
//===----------------------------------------------------------------------===//

#include "gnnc/dist/Communicator.h"
#include "gnnc/dist/DistTensor.h"

#include <fmt/format.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

using namespace gnnc;
using namespace gnnc::dist;

namespace {

/// Prints one line at once (ranks' lines interleave, never mix).
void say(const std::string &line) {
  std::fputs((line + "\n").c_str(), stdout);
  std::fflush(stdout);
}

/// Reports `status` against the error this rank expects (a fragment of
/// its message); returns the exit code.
int report(Communicator &comm, const Status &status,
           const std::string &expected) {
  int r = comm.rank();
  if (status.ok()) {
    say(fmt::format("rank {}: unexpected: the collective succeeded", r));
    return 1;
  }
  if (status.message().find(expected) == std::string::npos) {
    say(fmt::format("rank {}: unexpected: {} (expected '{}')", r,
                    status.message(), expected));
    return 1;
  }
  say(fmt::format("rank {}: error: {}", r, status.message()));
  return 0;
}

std::string secondsText(double seconds) { return fmt::format("{}", seconds); }

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: gnnc-dist-mpi-faults size-mismatch | "
                         "wrong-collective | missing | stuck | killed\n");
    return 2;
  }
  std::string mode = argv[1];
  if (mode != "size-mismatch" && mode != "wrong-collective" &&
      mode != "missing" && mode != "stuck" && mode != "killed") {
    std::fprintf(stderr, "gnnc-dist-mpi-faults: unknown mode '%s'\n",
                 mode.c_str());
    return 2;
  }

  CommOptions options;
  Status status = CommOptions::fromEnvironment(options);
  std::unique_ptr<Communicator> world;
  if (status.ok())
    status = createMpiWorld(world, options);
  if (!status.ok()) {
    say(status.message());
    return 1;
  }
  Communicator &comm = *world;
  int r = comm.rank();
  say(fmt::format("rank {} pid {}", r, static_cast<long>(getpid())));
  if (comm.size() < 4) {
    say(fmt::format("rank {}: unexpected: {} ranks, the faults need 4", r,
                    comm.size()));
    return 1;
  }
  std::string timedOut =
      fmt::format("timed out after {} s waiting for rank 3 (missing or dead)",
                  secondsText(options.TimeoutSeconds));

  if (mode == "size-mismatch") {
    size_t count = r == 3 ? 12 : 10;
    std::vector<int32_t> send(12, r), recv(12);
    Status s = comm.allReduce(send.data(), recv.data(), count, DType::Int32,
                              ReduceOp::Sum);
    return report(comm, s,
                  r == 3 ? "all-reduce #1: count 12 here, but rank 0 passes 10"
                         : "all-reduce #1: count 10 here, but rank 3 passes "
                           "12");
  }

  if (mode == "wrong-collective") {
    std::vector<float> send(4, 1), recv(4 * comm.size());
    Status s = r == 2
                   ? comm.allGather(send.data(), recv.data(), 4, DType::Float32)
                   : comm.allReduce(send.data(), recv.data(), 4, DType::Float32,
                                    ReduceOp::Sum);
    return report(comm, s,
                  r == 2 ? "all-gather #1: rank 0 called all-reduce #1"
                         : "all-reduce #1: rank 2 called all-gather #1");
  }

  if (mode == "missing") {
    if (r == 3) {
      // Skip the barrier; stay alive until the others have timed out.
      std::this_thread::sleep_for(
          std::chrono::duration<double>(2 * options.TimeoutSeconds + 0.5));
      say("rank 3: skipped the barrier");
      return 0;
    }
    return report(comm, comm.barrier(), "barrier #1: " + timedOut);
  }

  if (mode == "stuck") {
    if (r == 3) {
      std::this_thread::sleep_for(std::chrono::seconds(60));
      say("rank 3: unexpected: still alive after 60 s");
      std::_Exit(1);
    }
    return report(comm, comm.barrier(), "barrier #1: " + timedOut);
  }

  // killed: tensors of the shared memory types, then rank 3 dies.
  std::vector<std::unique_ptr<DistTensor>> tensors;
  for (MemoryType type : {MemoryType::Continuous, MemoryType::Chunked}) {
    TensorOptions tensorOptions;
    tensorOptions.Type = type;
    tensorOptions.Name = memoryTypeName(type);
    std::unique_ptr<DistTensor> tensor;
    Status s =
        createTensor(comm, 1000, 16, DType::Float32, tensorOptions, tensor);
    if (!s.ok()) {
      say(fmt::format("rank {}: unexpected: {}", r, s.message()));
      return 1;
    }
    tensors.push_back(std::move(tensor));
  }
  if (r == 3) {
    say("rank 3: killing itself");
    std::raise(SIGKILL);
  }
  // The next collective: its number depends on how many createTensor
  // used, so only the rest of the message is expected.
  return report(comm, comm.barrier(), timedOut);
}
