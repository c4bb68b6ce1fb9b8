//===- DeviceTensorTest.cpp - Device tensors and NCCL in one process ------===//
//
// Part of gnnc's tests. The device memory types of gnnc_dist_cuda on a
// threads communicator (every rank on the current device; rows of the
// distributed type travel through host buffers), and a NCCL communicator of
// one rank, bootstrapped over threads. Every test skips without a CUDA
// device.
//
//===----------------------------------------------------------------------===//

#include "DeviceChecks.h"
#include "DeviceTestUtil.h"

#include "RuntimeTestUtil.h"

#include <gtest/gtest.h>

using namespace gnnc::dist;
using namespace gnnc::dist::devtest;

namespace {

#define SKIP_WITHOUT_DEVICE()                                                  \
  do {                                                                         \
    if (!haveDevice())                                                         \
      GTEST_SKIP() << "no CUDA device";                                        \
  } while (0)

struct ThreadsCase {
  MemoryType Type;
  int Ranks;
  int64_t Rows, Cols;
  std::vector<int64_t> RowsPerRank;
};

std::string caseName(const testing::TestParamInfo<ThreadsCase> &info) {
  const ThreadsCase &c = info.param;
  return fmt::format("{}_{}ranks_{}x{}{}", memoryTypeName(c.Type), c.Ranks,
                     c.Rows, c.Cols, c.RowsPerRank.empty() ? "" : "_uneven");
}

class DeviceTensorThreads : public testing::TestWithParam<ThreadsCase> {};

TEST_P(DeviceTensorThreads, MatchesHostReference) {
  SKIP_WITHOUT_DEVICE();
  const ThreadsCase &p = GetParam();
  gnnc::rt::testing::TempDir dir;
  DeviceCase c;
  c.Type = p.Type;
  c.Rows = p.Rows;
  c.Cols = p.Cols;
  c.RowsPerRank = p.RowsPerRank;
  Status st = runThreads(p.Ranks, [&](Communicator &comm) {
    if (cudaSetDevice(0) != cudaSuccess)
      return Status::error("cudaSetDevice(0) failed");
    return checkDeviceTensor(comm, c, dir.dir());
  });
  EXPECT_TRUE(st.ok()) << st.message();
}

std::vector<ThreadsCase> threadsCases() {
  std::vector<ThreadsCase> cases;
  for (MemoryType type :
       {MemoryType::Continuous, MemoryType::Chunked, MemoryType::Distributed}) {
    cases.push_back({type, 1, 10, 3, {}});
    cases.push_back({type, 1, 7, 0, {}});
    cases.push_back({type, 3, 10, 3, {4, 0, 6}});
    cases.push_back({type, 2, 11, 0, {}});
    // Rows of 1200 bytes over several allocation granules: the pieces of a
    // continuous range are cut inside rows.
    cases.push_back({type, 3, 4099, 300, {}});
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(AllTypes, DeviceTensorThreads,
                         testing::ValuesIn(threadsCases()), caseName);

TEST(DeviceTensor, RejectsHostLocationAndBadArguments) {
  SKIP_WITHOUT_DEVICE();
  Status st = runThreads(2, [](Communicator &comm) {
    TensorOptions options;
    options.Location = MemoryLocation::Host;
    options.Name = "features";
    std::unique_ptr<DistTensor> t;
    Status host = createDeviceTensor(comm, 4, 2, DType::Float32, options, t);
    if (host.ok() || host.message().find("features: create") != 0)
      return Status::error("a host location gives: " + host.message());
    // Ranks that disagree on the shape fail together.
    options.Location = MemoryLocation::Device;
    Status differ = createDeviceTensor(comm, 4 + comm.rank(), 2, DType::Float32,
                                       options, t);
    if (differ.ok() || differ.message().find("rows") == std::string::npos)
      return Status::error("different row counts give: " + differ.message());
    // A negative shape on one rank fails every rank.
    Status negative = createDeviceTensor(comm, comm.rank() == 1 ? -1 : 4, 2,
                                         DType::Float32, options, t);
    if (negative.ok())
      return Status::error("a negative row count on rank 1 is accepted");
    return Status();
  });
  EXPECT_TRUE(st.ok()) << st.message();
}

TEST(DeviceTensor, RejectsHostPointers) {
  SKIP_WITHOUT_DEVICE();
  Status st = runThreads(1, [](Communicator &comm) {
    TensorOptions options;
    options.Location = MemoryLocation::Device;
    options.Type = MemoryType::Chunked;
    std::unique_ptr<DistTensor> t;
    GNNC_TRY(createDeviceTensor(comm, 4, 2, DType::Float32, options, t));
    std::vector<int64_t> indices = {1, 2};
    std::vector<float> out(4);
    Status g = t->gather(indices.data(), indices.size(), out.data());
    if (g.ok() || g.message().find("not device memory") == std::string::npos)
      return Status::error("a gather with host pointers gives: " + g.message());
    return Status();
  });
  EXPECT_TRUE(st.ok()) << st.message();
}

TEST(NcclComm, WorldOfOneOverThreads) {
  SKIP_WITHOUT_DEVICE();
  if (!haveNccl())
    GTEST_SKIP() << "gnnc_dist_cuda built without NCCL";
  Status st = runThreads(1, [](Communicator &boot) {
    std::unique_ptr<Communicator> nccl;
    GNNC_TRY(createNccl(boot, nccl));
    return checkNcclWorldOfOne(*nccl);
  });
  EXPECT_TRUE(st.ok()) << st.message();
}

TEST(NcclComm, DeviceTensorsOnNccl) {
  SKIP_WITHOUT_DEVICE();
  if (!haveNccl())
    GTEST_SKIP() << "gnnc_dist_cuda built without NCCL";
  gnnc::rt::testing::TempDir dir;
  Status st = runThreads(1, [&](Communicator &boot) {
    std::unique_ptr<Communicator> nccl;
    GNNC_TRY(createNccl(boot, nccl));
    for (MemoryType type : {MemoryType::Continuous, MemoryType::Chunked,
                            MemoryType::Distributed}) {
      DeviceCase c;
      c.Type = type;
      GNNC_TRY(checkDeviceTensor(*nccl, c, dir.dir()));
      c.Cols = 0;
      c.Rows = 13;
      GNNC_TRY(checkDeviceTensor(*nccl, c, ""));
    }
    return Status();
  });
  EXPECT_TRUE(st.ok()) << st.message();
}

TEST(NcclComm, RefusesDeviceBootstrapAndReportsAvailability) {
  if (haveNccl()) {
    SKIP_WITHOUT_DEVICE();
    // A NCCL communicator cannot bootstrap another one.
    Status st = runThreads(1, [](Communicator &boot) {
      std::unique_ptr<Communicator> nccl, again;
      GNNC_TRY(createNccl(boot, nccl));
      Status second = createNccl(*nccl, again);
      if (second.ok() ||
          second.message().find("bootstrap") == std::string::npos)
        return Status::error("a NCCL bootstrap gives: " + second.message());
      return Status();
    });
    EXPECT_TRUE(st.ok()) << st.message();
    return;
  }
  Status st = runThreads(1, [](Communicator &boot) {
    std::unique_ptr<Communicator> nccl;
    Status made = createNccl(boot, nccl);
    if (made.ok() || made.message().find("without NCCL") == std::string::npos)
      return Status::error("createNccl without NCCL gives: " + made.message());
    return Status();
  });
  EXPECT_TRUE(st.ok()) << st.message();
}

} // namespace
