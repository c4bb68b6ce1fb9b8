//===- CommunicatorTest.cpp - Communicators on the threads backend --------===//
//
// Part of gnnc's tests. checkCollectives at 1, 2, 3, 4 and 7 thread ranks
// (its digest must not depend on the number of ranks), and the faults a
// checked communicator must turn into a clear error on every rank within a
// stated time: sizes that disagree, a different collective on one rank, a
// missing rank (after the timeout), a rank that leaves (at once), invalid
// arguments, and the broken communicator afterwards.
//
//===----------------------------------------------------------------------===//

#include "gnnc/dist/Communicator.h"

#include "DistChecks.h"
#include "RuntimeTestUtil.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

using namespace gnnc;
using namespace gnnc::dist;

namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// The short timeout of the tests of a missing rank, which must fail after
/// it and well before 5 times it.
constexpr double kTimeout = 0.5;
/// The timeout of the tests of mismatches, which must fail before it: the
/// headers tell, no rank waits for the timeout.
constexpr double kMismatchTimeout = 2;
/// How long a call on a broken communicator may take (it is refused
/// without waiting for anything).
constexpr double kAtOnce = 0.25;

CommOptions shortTimeout(bool check = true) {
  CommOptions options;
  options.TimeoutSeconds = kTimeout;
  options.CheckArguments = check;
  return options;
}

CommOptions mismatchTimeout(bool check = true) {
  CommOptions options;
  options.TimeoutSeconds = kMismatchTimeout;
  options.CheckArguments = check;
  return options;
}

/// What each rank of a fault test saw: the message of its failing call and
/// how long that call took.
struct Outcome {
  std::string Message;
  double Seconds = -1;
};

/// Runs `call` on every rank of a `size`-rank threads communicator, timing
/// it; then, when `after` is set, a barrier (which must be refused at once
/// on a broken communicator). Returns each rank's outcome.
std::vector<Outcome> runFault(int size, const CommOptions &options,
                              const std::function<Status(Communicator &)> &call,
                              std::vector<Outcome> *after = nullptr) {
  std::vector<Outcome> outcomes(size);
  if (after)
    after->assign(size, Outcome());
  Status status = runThreads(
      size,
      [&](Communicator &comm) {
        Outcome &mine = outcomes[comm.rank()];
        Clock::time_point start = Clock::now();
        Status result = call(comm);
        mine.Seconds = secondsSince(start);
        mine.Message = result.message();
        if (after) {
          Outcome &next = (*after)[comm.rank()];
          start = Clock::now();
          next.Message = comm.barrier().message();
          next.Seconds = secondsSince(start);
        }
        return result;
      },
      options);
  EXPECT_FALSE(status.ok());
  for (int r = 0; r < size; ++r)
    std::printf("  rank %d: %.3f s: %s\n", r, outcomes[r].Seconds,
                outcomes[r].Message.c_str());
  return outcomes;
}

std::string prefix(int rank, int size) {
  return "gnnc dist (threads, rank " + std::to_string(rank) + " of " +
         std::to_string(size) + "): ";
}

/// Sets an environment variable for the life of the object.
class ScopedEnv {
public:
  ScopedEnv(const char *name, const char *value) : Name(name) {
    if (const char *old = std::getenv(name))
      Old = old;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (Old)
      setenv(Name, Old->c_str(), 1);
    else
      unsetenv(Name);
  }

private:
  const char *Name;
  std::optional<std::string> Old;
};

//===----------------------------------------------------------------------===//
// Every collective at several sizes
//===----------------------------------------------------------------------===//

/// Runs checkCollectives on `size` ranks; returns every rank's digest and
/// fails the test with every rank's error.
std::vector<uint64_t> runChecks(int size, const CommOptions &options) {
  rt::testing::TempDir dir;
  std::vector<uint64_t> digests(size, 0);
  std::vector<std::string> errors(size);
  Status status = runThreads(
      size,
      [&](Communicator &comm) {
        checks::CheckContext ctx(comm, dir.dir());
        Status result = checks::checkCollectives(ctx);
        digests[comm.rank()] = ctx.Digest;
        errors[comm.rank()] = result.message();
        return result;
      },
      options);
  std::string all;
  for (const std::string &e : errors)
    if (!e.empty())
      all += "\n  " + e;
  EXPECT_TRUE(status.ok()) << status.message() << all;
  return digests;
}

class CollectiveChecksTest : public ::testing::TestWithParam<int> {};

TEST_P(CollectiveChecksTest, EveryCollectiveMatchesLocalValues) {
  int size = GetParam();
  std::vector<uint64_t> digests = runChecks(size, CommOptions());
  std::vector<uint64_t> single = runChecks(1, CommOptions());
  ASSERT_EQ(single.size(), 1u);
  // FNV-1a's offset basis: the digest before anything is mixed in.
  EXPECT_NE(single[0], 14695981039346656037ull)
      << "nothing was mixed into the digest";
  std::printf("  checkCollectives digest %016llx\n",
              static_cast<unsigned long long>(single[0]));
  for (int r = 0; r < size; ++r)
    EXPECT_EQ(digests[r], single[0])
        << "rank " << r << " of " << size
        << ": the digest depends on the number of ranks";
}

INSTANTIATE_TEST_SUITE_P(Sizes, CollectiveChecksTest,
                         ::testing::Values(1, 2, 3, 4, 7));

TEST(CommunicatorTest, CollectivesWithoutHeaderCheck) {
  CommOptions options;
  options.CheckArguments = false;
  std::vector<uint64_t> unchecked = runChecks(4, options);
  std::vector<uint64_t> checked = runChecks(4, CommOptions());
  EXPECT_EQ(unchecked, checked);
}

TEST(CommunicatorTest, Topology) {
  Status status = runThreads(3, [](Communicator &comm) {
    EXPECT_STREQ(comm.backend(), "threads");
    EXPECT_FALSE(comm.deviceBuffers());
    EXPECT_EQ(comm.size(), 3);
    EXPECT_FALSE(comm.nodeName().empty());
    // Thread ranks share one process, so one node.
    EXPECT_EQ(comm.numNodes(), 1);
    EXPECT_EQ(comm.nodeIndex(), 0);
    EXPECT_EQ(comm.localSize(), 3);
    EXPECT_EQ(comm.localRank(), comm.rank());
    return Status::success();
  });
  EXPECT_TRUE(status.ok()) << status.message();
}

TEST(CommunicatorTest, FloatSumsFollowRankOrder) {
  // Values whose sum depends on the order: 1e8, then 1, -1e8, 1, ... in
  // float32. In rank order: ((1e8 + 1) - 1e8) + 1 = 1 (1e8 + 1 rounds to
  // 1e8); in any other order the result differs.
  const float values[4] = {1e8f, 1.0f, -1e8f, 1.0f};
  float expected = values[0];
  for (int q = 1; q < 4; ++q)
    expected += values[q];
  ASSERT_EQ(expected, 1.0f);
  for (int repeat = 0; repeat < 5; ++repeat) {
    std::vector<float> results(4, -1);
    Status status = runThreads(4, [&](Communicator &comm) {
      float sum = 0;
      GNNC_TRY(comm.allReduce(&values[comm.rank()], &sum, 1, DType::Float32,
                              ReduceOp::Sum));
      results[comm.rank()] = sum;
      return Status::success();
    });
    ASSERT_TRUE(status.ok()) << status.message();
    for (int r = 0; r < 4; ++r)
      EXPECT_EQ(results[r], expected) << "rank " << r;
  }
}

TEST(CommunicatorTest, RunThreadsReturnsTheFirstErrorByRank) {
  Status status = runThreads(4, [](Communicator &comm) {
    if (comm.rank() == 2 || comm.rank() == 3)
      return Status::error("failure of rank " + std::to_string(comm.rank()));
    return Status::success();
  });
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(), "failure of rank 2");

  Status none = runThreads(0, [](Communicator &) { return Status::success(); });
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.message(),
            "gnnc dist (threads): runThreads: size 0 is not positive");
}

TEST(CommunicatorTest, ReduceOpNames) {
  EXPECT_STREQ(reduceOpName(ReduceOp::Sum), "sum");
  EXPECT_STREQ(reduceOpName(ReduceOp::Max), "max");
  EXPECT_STREQ(reduceOpName(ReduceOp::Min), "min");
}

TEST(CommunicatorTest, MpiAvailabilityIsReported) {
  if (haveMpi())
    GTEST_SKIP() << "built with MPI: createMpiWorld is run by mpi/";
  std::unique_ptr<Communicator> world;
  Status status = createMpiWorld(world);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("gnnc_dist was built without MPI"),
            std::string::npos)
      << status.message();
  EXPECT_EQ(world, nullptr);
}

//===----------------------------------------------------------------------===//
// Options from the environment
//===----------------------------------------------------------------------===//

TEST(CommOptionsTest, Defaults) {
  ScopedEnv timeout("GNNC_DIST_TIMEOUT", nullptr);
  ScopedEnv check("GNNC_DIST_CHECK", nullptr);
  CommOptions options;
  options.TimeoutSeconds = -7;
  ASSERT_TRUE(CommOptions::fromEnvironment(options).ok());
  EXPECT_EQ(options.TimeoutSeconds, 60);
  EXPECT_TRUE(options.CheckArguments);
}

TEST(CommOptionsTest, ValidOverrides) {
  ScopedEnv timeout("GNNC_DIST_TIMEOUT", "2.5");
  ScopedEnv check("GNNC_DIST_CHECK", "0");
  CommOptions options;
  Status status = CommOptions::fromEnvironment(options);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(options.TimeoutSeconds, 2.5);
  EXPECT_FALSE(options.CheckArguments);

  ScopedEnv on("GNNC_DIST_CHECK", "1");
  ASSERT_TRUE(CommOptions::fromEnvironment(options).ok());
  EXPECT_TRUE(options.CheckArguments);
}

TEST(CommOptionsTest, InvalidTimeoutIsAnErrorNamingIt) {
  for (const char *value : {"abc", "0", "-3", "", "5s", "inf", "nan"}) {
    ScopedEnv timeout("GNNC_DIST_TIMEOUT", value);
    CommOptions options;
    options.TimeoutSeconds = 7;
    Status status = CommOptions::fromEnvironment(options);
    ASSERT_FALSE(status.ok()) << "'" << value << "' was accepted";
    EXPECT_EQ(status.message(),
              std::string("GNNC_DIST_TIMEOUT: invalid value '") + value +
                  "' (expected a positive number of seconds)");
    EXPECT_EQ(options.TimeoutSeconds, 7) << "written on error";
  }
}

TEST(CommOptionsTest, InvalidCheckIsAnErrorNamingIt) {
  ScopedEnv check("GNNC_DIST_CHECK", "yes");
  CommOptions options;
  Status status = CommOptions::fromEnvironment(options);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(),
            "GNNC_DIST_CHECK: invalid value 'yes' (expected 0 or 1)");
}

TEST(CommOptionsTest, MpiWorldWithoutOptionsReadsTheEnvironment) {
  // An invalid value fails before MPI is initialised, with or without MPI.
  ScopedEnv timeout("GNNC_DIST_TIMEOUT", "soon");
  std::unique_ptr<Communicator> world;
  Status status = createMpiWorld(world);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(), "GNNC_DIST_TIMEOUT: invalid value 'soon' "
                              "(expected a positive number of seconds)");
  EXPECT_EQ(world, nullptr);
}

//===----------------------------------------------------------------------===//
// Faults: every rank gets a clear error, in a stated time
//===----------------------------------------------------------------------===//

TEST(CommunicatorFaultTest, AllReduceCountsDisagree) {
  std::vector<Outcome> after;
  std::vector<Outcome> out = runFault(
      4, mismatchTimeout(),
      [](Communicator &comm) {
        size_t count = comm.rank() == 3 ? 12 : 10;
        std::vector<int32_t> send(12, 1), recv(12);
        return comm.allReduce(send.data(), recv.data(), count, DType::Int32,
                              ReduceOp::Sum);
      },
      &after);
  for (int r = 0; r < 4; ++r) {
    std::string first =
        r == 3 ? "all-reduce #1: count 12 here, but rank 0 passes 10"
               : "all-reduce #1: count 10 here, but rank 3 passes 12";
    EXPECT_EQ(out[r].Message, prefix(r, 4) + first);
    // Found from the headers: no rank waits for a timeout.
    EXPECT_LT(out[r].Seconds, kMismatchTimeout);
    // The communicator is broken: the next call is refused at once and
    // repeats the first error.
    EXPECT_EQ(after[r].Message,
              prefix(r, 4) + "barrier #2: broken communicator: " + first);
    EXPECT_LT(after[r].Seconds, kAtOnce);
  }
}

TEST(CommunicatorFaultTest, AllToAllVCountsDisagree) {
  std::vector<Outcome> out =
      runFault(4, mismatchTimeout(), [](Communicator &comm) {
        // One element from every rank to every rank, but rank 2 sends two
        // to rank 0.
        std::vector<size_t> sendCounts(4, 1), recvCounts(4, 1);
        if (comm.rank() == 2)
          sendCounts[0] = 2;
        std::vector<int64_t> send(5, 7), recv(4);
        return comm.allToAllV(send.data(), sendCounts.data(), recv.data(),
                              recvCounts.data(), DType::Int64);
      });
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(out[r].Message, prefix(r, 4) +
                                  "all-to-all-v #1: rank 2 sends 2 elements to "
                                  "rank 0, but rank 0 expects 1 from rank 2");
    EXPECT_LT(out[r].Seconds, kMismatchTimeout);
  }
}

TEST(CommunicatorFaultTest, DifferentCollectiveOnOneRank) {
  std::vector<Outcome> out =
      runFault(4, mismatchTimeout(), [](Communicator &comm) {
        std::vector<float> send(4, 1), recv(16);
        if (comm.rank() == 2)
          return comm.allGather(send.data(), recv.data(), 4, DType::Float32);
        return comm.allReduce(send.data(), recv.data(), 4, DType::Float32,
                              ReduceOp::Sum);
      });
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(out[r].Message,
              prefix(r, 4) + (r == 2 ? "all-gather #1: rank 0 called "
                                       "all-reduce #1"
                                     : "all-reduce #1: rank 2 called "
                                       "all-gather #1"));
    EXPECT_LT(out[r].Seconds, kMismatchTimeout);
  }
}

TEST(CommunicatorFaultTest, DTypeRootAndReductionDisagree) {
  std::vector<Outcome> dtype =
      runFault(3, mismatchTimeout(), [](Communicator &comm) {
        std::vector<double> data(4, 1);
        return comm.broadcast(
            data.data(), 4, comm.rank() == 1 ? DType::Float64 : DType::Float32,
            0);
      });
  EXPECT_EQ(dtype[0].Message,
            prefix(0, 3) + "broadcast #1: dtype float32 here, but rank 1 "
                           "passes float64");
  EXPECT_EQ(dtype[1].Message,
            prefix(1, 3) + "broadcast #1: dtype float64 here, but rank 0 "
                           "passes float32");

  std::vector<Outcome> root =
      runFault(3, mismatchTimeout(), [](Communicator &comm) {
        int32_t value = 0;
        return comm.broadcast(&value, 1, DType::Int32,
                              comm.rank() == 2 ? 1 : 0);
      });
  EXPECT_EQ(root[0].Message,
            prefix(0, 3) + "broadcast #1: root 0 here, but rank 2 passes 1");
  EXPECT_EQ(root[2].Message,
            prefix(2, 3) + "broadcast #1: root 1 here, but rank 0 passes 0");

  std::vector<Outcome> op =
      runFault(3, mismatchTimeout(), [](Communicator &comm) {
        int64_t value = 1, sum = 0;
        return comm.allReduce(&value, &sum, 1, DType::Int64,
                              comm.rank() == 1 ? ReduceOp::Max : ReduceOp::Sum);
      });
  EXPECT_EQ(op[2].Message, prefix(2, 3) +
                               "all-reduce #1: reduction sum here, but rank 1 "
                               "passes max");
  for (const auto *outcomes : {&dtype, &root, &op})
    for (const Outcome &o : *outcomes)
      EXPECT_LT(o.Seconds, kMismatchTimeout);
}

TEST(CommunicatorFaultTest, InvalidArgumentsOnOneRank) {
  std::vector<Outcome> out =
      runFault(4, mismatchTimeout(), [](Communicator &comm) {
        int32_t value = 0;
        return comm.broadcast(&value, 1, DType::Int32,
                              comm.rank() == 1 ? 7 : 0);
      });
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(out[r].Message,
              prefix(r, 4) + (r == 1 ? "broadcast #1: root 7 is out of range "
                                       "[0, 4)"
                                     : "broadcast #1: rank 1 passed invalid "
                                       "arguments (its error says which)"));
    EXPECT_LT(out[r].Seconds, kMismatchTimeout);
  }

  std::vector<Outcome> null =
      runFault(2, mismatchTimeout(), [](Communicator &comm) {
        int32_t value = 0;
        return comm.allReduce(comm.rank() == 0 ? nullptr : &value, &value, 1,
                              DType::Int32, ReduceOp::Sum);
      });
  EXPECT_EQ(null[0].Message, prefix(0, 2) + "all-reduce #1: the send buffer "
                                            "is null but holds 1 element");
  EXPECT_EQ(null[1].Message, prefix(1, 2) + "all-reduce #1: rank 0 passed "
                                            "invalid arguments (its error "
                                            "says which)");
}

TEST(CommunicatorFaultTest, EngineCatchesMismatchWithoutHeaderCheck) {
  // With the header check off the threads engine still compares what it
  // copies, so a count mismatch is an error, not an out-of-bounds read.
  std::vector<Outcome> out =
      runFault(4, mismatchTimeout(false), [](Communicator &comm) {
        size_t count = comm.rank() == 3 ? 12 : 10;
        std::vector<int32_t> send(12, 1), recv(12);
        return comm.allReduce(send.data(), recv.data(), count, DType::Int32,
                              ReduceOp::Sum);
      });
  EXPECT_EQ(out[0].Message, prefix(0, 4) +
                                "all-reduce #1: sum 10 int32 here, but rank 3 "
                                "passes sum 12 int32");
  for (const Outcome &o : out) {
    EXPECT_NE(o.Message, "");
    EXPECT_LT(o.Seconds, kMismatchTimeout);
  }
}

/// A rank that never calls: the others fail after the timeout with an
/// error that names it; when it calls after they have given up, it fails
/// at once.
void missingRank(bool check) {
  std::mutex mutex;
  std::condition_variable changed;
  int finished = 0;
  std::vector<Outcome> after;
  std::vector<Outcome> out = runFault(
      4, shortTimeout(check),
      [&](Communicator &comm) {
        if (comm.rank() != 3) {
          Status status = comm.barrier();
          std::lock_guard<std::mutex> lock(mutex);
          ++finished;
          changed.notify_all();
          return status;
        }
        // Rank 3 comes late: after every other rank has given up.
        std::unique_lock<std::mutex> lock(mutex);
        changed.wait_for(lock, std::chrono::seconds(20),
                         [&] { return finished == 3; });
        lock.unlock();
        return comm.barrier();
      },
      &after);
  // The first rank to give up waited the whole timeout; the others give up
  // with it, so a rank that arrived later may have waited less.
  double longest = 0;
  for (int r = 0; r < 3; ++r)
    longest = std::max(longest, out[r].Seconds);
  EXPECT_GE(longest, kTimeout);
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(out[r].Message,
              prefix(r, 4) + "barrier #1: timed out after 0.5 s waiting for "
                             "rank 3 (missing or dead)");
    EXPECT_LT(out[r].Seconds, 5 * kTimeout);
    EXPECT_EQ(after[r].Message,
              prefix(r, 4) + "barrier #2: broken communicator: barrier #1: "
                             "timed out after 0.5 s waiting for rank 3 "
                             "(missing or dead)");
    EXPECT_LT(after[r].Seconds, kAtOnce);
  }
  // Rank 3 waited for the others on its own; its barrier fails at once.
  EXPECT_EQ(out[3].Message,
            prefix(3, 4) + "barrier #1: rank 0 has left the communicator");
}

TEST(CommunicatorFaultTest, MissingRankIsNamedAfterTheTimeout) {
  missingRank(true);
}

TEST(CommunicatorFaultTest, MissingRankWithoutHeaderCheck) {
  missingRank(false);
}

TEST(CommunicatorFaultTest, RankThatLeavesEndsCollectivesAtOnce) {
  // A long timeout: the others must not wait for it.
  CommOptions options;
  options.TimeoutSeconds = 10;
  std::vector<Outcome> out = runFault(4, options, [](Communicator &comm) {
    GNNC_TRY(comm.barrier());
    if (comm.rank() == 3) {
      // Leave while the others wait in the next collective.
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      return Status::error("rank 3 leaves");
    }
    int64_t value = comm.rank(), sum = 0;
    return comm.allReduce(&value, &sum, 1, DType::Int64, ReduceOp::Sum);
  });
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(out[r].Message, prefix(r, 4) +
                                  "all-reduce #2: rank 3 has left the "
                                  "communicator");
    EXPECT_LT(out[r].Seconds, 2.0);
  }
}

TEST(CommunicatorFaultTest, CallsAfterARankLeftFailAtOnce) {
  CommOptions options;
  options.TimeoutSeconds = 10;
  std::atomic<bool> gone{false};
  std::vector<Outcome> out = runFault(3, options, [&](Communicator &comm) {
    if (comm.rank() == 0) {
      gone = true;
      return Status::error("rank 0 leaves");
    }
    while (!gone)
      std::this_thread::yield();
    // Rank 0's communicator may not be destroyed yet: it is gone within
    // moments, and the barrier must fail then.
    return comm.barrier();
  });
  for (int r = 1; r < 3; ++r) {
    EXPECT_EQ(out[r].Message,
              prefix(r, 3) + "barrier #1: rank 0 has left the communicator");
    EXPECT_LT(out[r].Seconds, 2.0);
  }
}

} // namespace
