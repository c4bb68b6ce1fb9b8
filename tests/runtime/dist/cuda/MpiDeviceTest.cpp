//===- MpiDeviceTest.cpp - Device tensors shared by MPI processes ---------===//
//
// Part of gnnc's tests. Run as `mpirun -np 2 gnnc-dist-cuda-mpi-tests`:
// two processes on one GPU (device 0) share a chunked tensor through CUDA
// IPC handles and a continuous one through cuMem allocations exported as
// file descriptors, and route a distributed one over MPI; each process
// also runs a NCCL communicator of its own (NCCL takes one rank per GPU).
// Without a CUDA device the program prints "no CUDA device: skipped" and
// exits successfully (ctest reports the test as skipped).
//
//===----------------------------------------------------------------------===//

#include "DeviceChecks.h"
#include "DeviceTestUtil.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <unistd.h>

using namespace gnnc::dist;
using namespace gnnc::dist::devtest;

namespace {

std::unique_ptr<Communicator> World;
std::string SharedDir;

/// A folder every process writes: created by rank 0, its name broadcast.
Status makeSharedDir(Communicator &comm, std::string &out) {
  int64_t words[32] = {};
  if (comm.rank() == 0) {
    char name[] = "/tmp/gnnc-dist-cuda-mpi-XXXXXX";
    if (!::mkdtemp(name))
      return Status::error("mkdtemp failed");
    std::memcpy(words, name, sizeof name);
  }
  GNNC_TRY(comm.broadcast(words, 32, DType::Int64, 0));
  out = reinterpret_cast<const char *>(words);
  return Status();
}

void expectOnEveryRank(const Status &st) {
  EXPECT_TRUE(st.ok()) << "rank " << World->rank() << ": " << st.message();
}

TEST(TwoProcessesOneDevice, Chunked) {
  for (DeviceCase c : {DeviceCase{MemoryType::Chunked, 10, 3, {}},
                       DeviceCase{MemoryType::Chunked, 10, 3, {0, 10}},
                       DeviceCase{MemoryType::Chunked, 2051, 300, {}}})
    expectOnEveryRank(checkDeviceTensor(*World, c, SharedDir));
}

TEST(TwoProcessesOneDevice, Continuous) {
  for (DeviceCase c : {DeviceCase{MemoryType::Continuous, 10, 3, {}},
                       DeviceCase{MemoryType::Continuous, 11, 0, {}},
                       DeviceCase{MemoryType::Continuous, 4099, 300, {}}})
    expectOnEveryRank(checkDeviceTensor(*World, c, SharedDir));
}

TEST(TwoProcessesOneDevice, Distributed) {
  for (DeviceCase c : {DeviceCase{MemoryType::Distributed, 10, 3, {7, 3}},
                       DeviceCase{MemoryType::Distributed, 2051, 300, {}}})
    expectOnEveryRank(checkDeviceTensor(*World, c, SharedDir));
}

TEST(TwoProcessesOneDevice, NcclPerProcess) {
  if (!haveNccl())
    GTEST_SKIP() << "gnnc_dist_cuda built without NCCL";
  // One NCCL rank per process: each process splits off a communicator of
  // its own (NCCL refuses two ranks on one device).
  std::unique_ptr<Communicator> self, nccl;
  Status st = World->split(World->rank(), 0, self);
  if (st.ok())
    st = createNccl(*self, nccl);
  if (st.ok())
    st = checkNcclWorldOfOne(*nccl);
  expectOnEveryRank(st);
}

} // namespace

int main(int argc, char **argv) {
  if (!haveDevice()) {
    std::printf("gnnc-dist-cuda-mpi-tests: no CUDA device: skipped\n");
    return 0;
  }
  testing::InitGoogleTest(&argc, argv);
  CommOptions options;
  Status st = CommOptions::fromEnvironment(options);
  if (st.ok())
    st = createMpiWorld(World, options);
  if (st.ok() && cudaSetDevice(0) != cudaSuccess)
    st = Status::error("cudaSetDevice(0) failed");
  if (st.ok())
    st = makeSharedDir(*World, SharedDir);
  if (!st.ok()) {
    std::fprintf(stderr, "gnnc-dist-cuda-mpi-tests: %s\n",
                 st.message().c_str());
    return 1;
  }
  int rc = RUN_ALL_TESTS();
  // Every rank fails when one does.
  int32_t mine = rc, worst = 0;
  st = World->allReduce(&mine, &worst, 1, DType::Int32, ReduceOp::Max);
  if (World->rank() == 0 && st.ok())
    std::filesystem::remove_all(SharedDir);
  World.reset();
  return st.ok() ? worst : 1;
}
