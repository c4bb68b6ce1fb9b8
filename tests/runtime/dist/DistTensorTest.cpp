//===- DistTensorTest.cpp - Tests of distributed host tensors -------------===//
//
// Part of gnnc's tests. The shared checks (checkTensors) on the threads
// backend at several rank counts, whose digests must agree, and targeted
// tests of partitions, arguments, error messages, files and the lifetime of
// shared-memory segments (a killed process must leave none behind).
//
//===----------------------------------------------------------------------===//

#include "DistChecks.h"
#include "RuntimeTestUtil.h"

#include "gnnc/dist/DistTensor.h"
#include "gnnc/runtime/Npy.h"

#include "../../../runtime/dist/lib/SharedMemory.h"

#include "gtest/gtest.h"

#include <atomic>
#include <cstring>
#include <dirent.h>
#include <mutex>
#include <numeric>
#include <signal.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using namespace gnnc::dist;
using gnnc::rt::NpyArray;
using gnnc::rt::testing::readFile;
using gnnc::rt::testing::TempDir;
using gnnc::rt::testing::writeFile;

namespace {

/// Runs `body` on `size` thread ranks and returns the error messages by
/// rank ("" where a rank succeeded).
std::vector<std::string>
messagesOf(int size, const std::function<Status(Communicator &)> &body) {
  std::vector<std::string> messages(static_cast<size_t>(size));
  std::mutex mutex;
  Status all = runThreads(size, [&](Communicator &comm) {
    Status s = body(comm);
    std::lock_guard<std::mutex> lock(mutex);
    messages[static_cast<size_t>(comm.rank())] = s.ok() ? "" : s.message();
    return Status::success();
  });
  EXPECT_TRUE(all.ok()) << all.message();
  return messages;
}

/// The /dev/shm entries named gnnc-<pid>-*.
std::vector<std::string> segmentsOf(pid_t pid) {
  std::vector<std::string> out;
  std::string prefix = "gnnc-" + std::to_string(pid) + "-";
  if (DIR *dir = ::opendir("/dev/shm")) {
    while (struct dirent *e = ::readdir(dir))
      if (std::strncmp(e->d_name, prefix.c_str(), prefix.size()) == 0)
        out.push_back(e->d_name);
    ::closedir(dir);
  }
  return out;
}

template <class T>
NpyArray makeArray(std::vector<int64_t> shape, const std::vector<T> &values) {
  NpyArray a;
  a.dtype = gnnc::rt::DTypeOf<T>::value;
  a.shape = std::move(shape);
  a.bytes.resize(values.size() * sizeof(T));
  if (!values.empty())
    std::memcpy(a.bytes.data(), values.data(), a.bytes.size());
  return a;
}

const MemoryType kTypes[] = {MemoryType::Continuous, MemoryType::Chunked,
                             MemoryType::Distributed};

//===----------------------------------------------------------------------===//
// The shared checks
//===----------------------------------------------------------------------===//

TEST(DistTensorChecks, EveryTypeAndOperationAtSeveralRankCounts) {
  TempDir dir;
  std::vector<uint64_t> digests;
  for (int size : {1, 2, 3, 4, 7}) {
    SCOPED_TRACE("ranks: " + std::to_string(size));
    std::vector<uint64_t> perRank(static_cast<size_t>(size));
    std::vector<std::string> errors = messagesOf(size, [&](Communicator &comm) {
      checks::CheckContext ctx(comm, dir.dir());
      Status r = checks::checkTensors(ctx);
      perRank[static_cast<size_t>(comm.rank())] = ctx.Digest;
      return r;
    });
    // The rank that failed first, not the ranks it left behind.
    std::string first;
    for (const std::string &e : errors)
      if (first.empty() ||
          (first.find("has left the communicator") != std::string::npos &&
           !e.empty()))
        first = e;
    ASSERT_EQ(first, "");
    for (uint64_t d : perRank)
      EXPECT_EQ(d, perRank[0]) << "ranks disagree on the digest";
    digests.push_back(perRank[0]);
    EXPECT_EQ(dir.listing(), std::vector<std::string>{})
        << "files left in the temporary folder";
  }
  for (uint64_t d : digests)
    EXPECT_EQ(d, digests[0]) << "the digest depends on the rank count";
  EXPECT_NE(digests[0], 14695981039346656037ull)
      << "nothing was mixed into the digest";
}

//===----------------------------------------------------------------------===//
// Names and partitions
//===----------------------------------------------------------------------===//

TEST(DistTensor, Names) {
  for (MemoryType type : kTypes) {
    MemoryType parsed = MemoryType::Continuous;
    ASSERT_TRUE(parseMemoryType(memoryTypeName(type), parsed));
    EXPECT_EQ(parsed, type);
  }
  EXPECT_STREQ(memoryTypeName(MemoryType::Chunked), "chunked");
  EXPECT_STREQ(memoryLocationName(MemoryLocation::Host), "host");
  EXPECT_STREQ(memoryLocationName(MemoryLocation::Device), "device");
  MemoryType unchanged = MemoryType::Chunked;
  EXPECT_FALSE(parseMemoryType("Continuous", unchanged));
  EXPECT_FALSE(parseMemoryType("", unchanged));
  EXPECT_EQ(unchanged, MemoryType::Chunked);
}

TEST(RowPartition, BlocksAndOwners) {
  RowPartition p;
  ASSERT_TRUE(RowPartition::make(10, 4, {}, p).ok());
  EXPECT_EQ(p.rows(), 10);
  EXPECT_EQ(p.ranks(), 4);
  std::vector<int64_t> counts, begins;
  for (int r = 0; r < 4; ++r) {
    counts.push_back(p.count(r));
    begins.push_back(p.begin(r));
  }
  EXPECT_EQ(counts, (std::vector<int64_t>{3, 3, 2, 2}));
  EXPECT_EQ(begins, (std::vector<int64_t>{0, 3, 6, 8}));

  // Explicit counts with empty ranks: owners by a linear scan.
  std::vector<int64_t> explicitCounts = {0, 4, 0, 0, 1, 5, 0};
  ASSERT_TRUE(RowPartition::make(10, 7, explicitCounts, p).ok());
  for (int64_t row = 0; row < 10; ++row) {
    int expected = -1;
    int64_t end = 0;
    for (int r = 0; r < 7 && expected < 0; ++r) {
      end += explicitCounts[static_cast<size_t>(r)];
      if (row < end)
        expected = r;
    }
    EXPECT_EQ(p.owner(row), expected) << "row " << row;
  }
  ASSERT_TRUE(RowPartition::make(0, 3, {}, p).ok());
  EXPECT_EQ(p.rows(), 0);
  EXPECT_EQ(p.count(2), 0);
  ASSERT_TRUE(RowPartition::make(2, 5, {}, p).ok());
  EXPECT_EQ(p.owner(0), 0);
  EXPECT_EQ(p.owner(1), 1);
  EXPECT_EQ(p.count(4), 0);
}

TEST(RowPartition, Errors) {
  RowPartition p;
  auto errorOf = [&](int64_t rows, int ranks, std::vector<int64_t> counts) {
    Status s = RowPartition::make(rows, ranks, counts, p);
    return s.ok() ? std::string("(success)") : s.message();
  };
  EXPECT_EQ(errorOf(10, 3, {5, 5}), "row partition: 2 row counts for 3 ranks");
  EXPECT_EQ(errorOf(10, 3, {5, 5, 1}),
            "row partition: the row counts sum to 11, not 10");
  EXPECT_EQ(errorOf(10, 3, {5, 4, 0}),
            "row partition: the row counts sum to 9, not 10");
  EXPECT_EQ(errorOf(10, 2, {12, -2}),
            "row partition: rank 1 has a negative row count -2");
  EXPECT_EQ(errorOf(10, 2, {INT64_MAX, 2}),
            "row partition: the row counts sum to more than 2^63, not 10");
  EXPECT_EQ(errorOf(10, 2, {-2, 12}),
            "row partition: rank 0 has a negative row count -2");
  EXPECT_EQ(errorOf(-1, 2, {}), "row partition: negative row count -1");
  EXPECT_EQ(errorOf(1, 0, {}), "row partition: 0 ranks (expected at least 1)");
}

//===----------------------------------------------------------------------===//
// Creation
//===----------------------------------------------------------------------===//

TEST(DistTensor, BadArgumentsFailOnEveryRank) {
  for (MemoryType type : kTypes) {
    SCOPED_TRACE(memoryTypeName(type));
    TensorOptions options;
    options.Type = type;
    options.Name = "emb";
    auto create = [&](int64_t rows, int64_t cols, DType dtype,
                      TensorOptions o) {
      return messagesOf(3, [=](Communicator &comm) {
        std::unique_ptr<DistTensor> t;
        return createTensor(comm, rows, cols, dtype, o, t);
      });
    };
    EXPECT_EQ(create(-4, 2, DType::Float32, options),
              std::vector<std::string>(3, "emb: create: negative row count "
                                          "-4"));
    EXPECT_EQ(create(4, -2, DType::Float32, options),
              std::vector<std::string>(3, "emb: create: negative column count "
                                          "-2"));
    TensorOptions counts = options;
    counts.RowsPerRank = {1, 2, 2};
    EXPECT_EQ(create(4, 2, DType::Float32, counts),
              std::vector<std::string>(3, "emb: create: row partition: the "
                                          "row counts sum to 5, not 4"));
    counts.RowsPerRank = {2, 2};
    EXPECT_EQ(create(4, 2, DType::Float32, counts),
              std::vector<std::string>(3, "emb: create: row partition: 2 row "
                                          "counts for 3 ranks"));
    TensorOptions device = options;
    device.Location = MemoryLocation::Device;
    EXPECT_EQ(create(4, 2, DType::Float32, device),
              std::vector<std::string>(3, "emb: create: device tensors need "
                                          "gnnc_dist_cuda "
                                          "(createDeviceTensor)"));

    // Ranks that disagree: every rank fails and names the other side.
    std::vector<std::string> m = messagesOf(3, [&](Communicator &comm) {
      std::unique_ptr<DistTensor> t;
      return createTensor(comm, comm.rank() == 1 ? 12 : 10, 2, DType::Float32,
                          options, t);
    });
    EXPECT_EQ(m[0], "emb: create: rows 10 here, but rank 1 passes 12");
    EXPECT_EQ(m[1], "emb: create: rows 12 here, but rank 0 passes 10");
    EXPECT_EQ(m[2], "emb: create: rows 10 here, but rank 1 passes 12");
    m = messagesOf(2, [&](Communicator &comm) {
      std::unique_ptr<DistTensor> t;
      return createTensor(comm, 4, comm.rank() == 0 ? 0 : 1,
                          comm.rank() == 0 ? DType::Int64 : DType::Float32,
                          options, t);
    });
    EXPECT_EQ(m[0], "emb: create: cols 0 here, but rank 1 passes 1");
    EXPECT_EQ(m[1], "emb: create: cols 1 here, but rank 0 passes 0");
    m = messagesOf(2, [&](Communicator &comm) {
      std::unique_ptr<DistTensor> t;
      return createTensor(comm, 4, 1,
                          comm.rank() == 0 ? DType::Int64 : DType::Float32,
                          options, t);
    });
    EXPECT_EQ(m[1], "emb: create: dtype float32 here, but rank 0 passes int64");
    m = messagesOf(2, [&](Communicator &comm) {
      TensorOptions o = options;
      o.RowsPerRank = comm.rank() == 0 ? std::vector<int64_t>{1, 3}
                                       : std::vector<int64_t>{2, 2};
      std::unique_ptr<DistTensor> t;
      return createTensor(comm, 4, 1, DType::Int64, o, t);
    });
    EXPECT_EQ(m[0], "emb: create: the rows per rank differ from rank 1's");
  }
  std::vector<std::string> m = messagesOf(2, [&](Communicator &comm) {
    TensorOptions o;
    o.Name = "emb";
    o.Type = comm.rank() == 0 ? MemoryType::Chunked : MemoryType::Distributed;
    std::unique_ptr<DistTensor> t;
    return createTensor(comm, 4, 1, DType::Int64, o, t);
  });
  EXPECT_EQ(m[0], "emb: create: memory type chunked here, but rank 1 passes "
                  "distributed");
}

TEST(DistTensor, SegmentsAreUnlinkedOnceMapped) {
  std::vector<std::string> before = segmentsOf(::getpid());
  Status s = runThreads(3, [&](Communicator &comm) {
    std::unique_ptr<DistTensor> a, b;
    TensorOptions options;
    options.Type = MemoryType::Continuous;
    GNNC_TRY(createTensor(comm, 100, 8, DType::Float64, options, a));
    options.Type = MemoryType::Chunked;
    GNNC_TRY(createTensor(comm, 100, 8, DType::Float64, options, b));
    GNNC_TRY(comm.barrier());
    // The tensors are alive and mapped, their names already gone.
    if (!segmentsOf(::getpid()).empty())
      return Status::error("a segment is still linked");
    // Writes through one rank's mapping reach every rank.
    int64_t row = comm.rank();
    std::vector<double> values(8, 1.5 + comm.rank());
    GNNC_TRY(a->scatter(&row, 1, values.data()));
    GNNC_TRY(b->scatter(&row, 1, values.data()));
    for (DistTensor *t : {a.get(), b.get()}) {
      std::vector<int64_t> all = {0, 1, 2};
      std::vector<double> got(24);
      GNNC_TRY(t->gather(all.data(), 3, got.data()));
      for (int r = 0; r < 3; ++r)
        if (got[static_cast<size_t>(r) * 8 + 7] != 1.5 + r)
          return Status::error("a row written by another rank is missing");
    }
    return Status::success();
  });
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(segmentsOf(::getpid()), before);
}

//===----------------------------------------------------------------------===//
// Partitions, views and gathers
//===----------------------------------------------------------------------===//

TEST(DistTensor, UnevenPartitionWithEmptyRanks) {
  for (MemoryType type : kTypes) {
    SCOPED_TRACE(memoryTypeName(type));
    Status s = runThreads(4, [&](Communicator &comm) -> Status {
      TensorOptions options;
      options.Type = type;
      options.RowsPerRank = {0, 5, 0, 2};
      std::unique_ptr<DistTensor> t;
      GNNC_TRY(createTensor(comm, 7, 3, DType::Int32, options, t));
      int64_t begins[4] = {0, 0, 5, 5}, counts[4] = {0, 5, 0, 2};
      if (t->localRowBegin() != begins[comm.rank()] ||
          t->localRows() != counts[comm.rank()] ||
          t->localBytes() != static_cast<size_t>(counts[comm.rank()]) * 12)
        return Status::error("wrong local rows");
      // Every rank writes its rows through the local view: 100 row + col.
      auto *local = static_cast<int32_t *>(t->localData());
      for (int64_t i = 0; i < t->localRows(); ++i)
        for (int c = 0; c < 3; ++c)
          local[i * 3 + c] =
              static_cast<int32_t>(100 * (t->localRowBegin() + i) + c);
      GNNC_TRY(comm.barrier());
      std::vector<int64_t> rows = {6, 0, 4, 5, 6, 1};
      std::vector<int32_t> got(rows.size() * 3, -1);
      GNNC_TRY(t->gather(rows.data(), rows.size(), got.data()));
      for (size_t i = 0; i < rows.size(); ++i)
        for (int c = 0; c < 3; ++c)
          if (got[i * 3 + static_cast<size_t>(c)] != 100 * rows[i] + c)
            return Status::error("row " + std::to_string(rows[i]) + " col " +
                                 std::to_string(c) + ": got " +
                                 std::to_string(got[i * 3 + c]));
      return Status::success();
    });
    ASSERT_TRUE(s.ok()) << s.message();
  }
}

TEST(DistTensor, EmptyGathersAndScatters) {
  for (MemoryType type : kTypes) {
    SCOPED_TRACE(memoryTypeName(type));
    Status s = runThreads(3, [&](Communicator &comm) -> Status {
      TensorOptions options;
      options.Type = type;
      for (int64_t rows : {0, 5}) {
        std::unique_ptr<DistTensor> t;
        GNNC_TRY(createTensor(comm, rows, 0, DType::Float32, options, t));
        GNNC_TRY(t->gather(nullptr, 0, nullptr));
        GNNC_TRY(t->scatter(nullptr, 0, nullptr));
        // Only rank 2 asks for rows.
        int64_t index = rows - 1;
        float value = -1;
        if (rows > 0) {
          GNNC_TRY(t->gather(comm.rank() == 2 ? &index : nullptr,
                             comm.rank() == 2 ? 1 : 0,
                             comm.rank() == 2 ? &value : nullptr));
          if (comm.rank() == 2 && value != 0.0f)
            return Status::error("an element did not start zeroed");
        }
      }
      return Status::success();
    });
    ASSERT_TRUE(s.ok()) << s.message();
  }
}

TEST(DistTensor, OutOfRangeMessages) {
  for (MemoryType type : kTypes) {
    SCOPED_TRACE(memoryTypeName(type));
    std::vector<std::string> m = messagesOf(3, [&](Communicator &comm) {
      TensorOptions options;
      options.Type = type;
      options.Name = "features";
      std::unique_ptr<DistTensor> t;
      GNNC_TRY(createTensor(comm, 8, 4, DType::Float32, options, t));
      std::vector<int64_t> indices = {0, 7, comm.rank() == 1 ? 9 : 2};
      std::vector<float> rows(12);
      return t->gather(indices.data(), indices.size(), rows.data());
    });
    std::string text = "features: gather: index 9 at position 2 is out of "
                       "range [0, 8)";
    EXPECT_EQ(m[0], text + " (on rank 1)");
    EXPECT_EQ(m[1], text);
    EXPECT_EQ(m[2], text + " (on rank 1)");
  }
}

//===----------------------------------------------------------------------===//
// Files
//===----------------------------------------------------------------------===//

TEST(DistTensor, LoadNpyErrors) {
  TempDir dir;
  std::string path = dir.path("x.npy");
  ASSERT_TRUE(gnnc::rt::writeNpy(
                  path, makeArray<float>({6, 2}, std::vector<float>(12, 2.0f)))
                  .ok());
  auto load = [&](int64_t rows, int64_t cols, DType dtype) {
    return messagesOf(3, [&](Communicator &comm) {
      TensorOptions options;
      options.Name = "x";
      std::unique_ptr<DistTensor> t;
      GNNC_TRY(createTensor(comm, rows, cols, dtype, options, t));
      return t->loadNpy(path);
    });
  };
  EXPECT_EQ(load(6, 2, DType::Float32), std::vector<std::string>(3, ""));
  EXPECT_EQ(load(6, 2, DType::Int64),
            std::vector<std::string>(3, "x: loadNpy: " + path +
                                            ": expected dtype int64, got "
                                            "float32"));
  EXPECT_EQ(load(6, 3, DType::Float32),
            std::vector<std::string>(3, "x: loadNpy: " + path +
                                            ": expected shape 6x3, got 6x2"));
  EXPECT_EQ(load(12, 0, DType::Float32),
            std::vector<std::string>(3, "x: loadNpy: " + path +
                                            ": expected shape 12, got 6x2"));
  std::string full = readFile(path);
  writeFile(path, full.substr(0, full.size() - 8));
  std::vector<std::string> m = load(6, 2, DType::Float32);
  for (const std::string &message : m)
    EXPECT_EQ(message, "x: loadNpy: " + path +
                           ": file is truncated: header says 6x2 float32 (48 "
                           "bytes) but only 40 bytes follow");
}

TEST(DistTensor, LoadNpyOfAFortranOrderMatrix) {
  TempDir dir;
  std::string path = dir.path("f.npy");
  // [[0, 1, 2], [10, 11, 12], ..., [40, 41, 42]] column by column.
  std::string dict = "{'descr': '<i8', 'fortran_order': True, 'shape': (5, "
                     "3), }";
  std::string header = dict;
  header.append((64 - (10 + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string file = "\x93NUMPY";
  file += '\x01';
  file += '\x00';
  file += static_cast<char>(header.size() & 0xff);
  file += static_cast<char>(header.size() >> 8);
  file += header;
  for (int64_t c = 0; c < 3; ++c)
    for (int64_t r = 0; r < 5; ++r) {
      int64_t v = 10 * r + c;
      file.append(reinterpret_cast<const char *>(&v), sizeof(v));
    }
  writeFile(path, file);
  Status s = runThreads(3, [&](Communicator &comm) -> Status {
    TensorOptions options;
    options.Type = MemoryType::Chunked;
    std::unique_ptr<DistTensor> t;
    GNNC_TRY(createTensor(comm, 5, 3, DType::Int64, options, t));
    GNNC_TRY(t->loadNpy(path));
    std::vector<int64_t> all = {0, 1, 2, 3, 4};
    std::vector<int64_t> got(15);
    GNNC_TRY(t->gather(all.data(), 5, got.data()));
    for (int64_t i = 0; i < 15; ++i)
      if (got[static_cast<size_t>(i)] != 10 * (i / 3) + i % 3)
        return Status::error("element " + std::to_string(i) + ": " +
                             std::to_string(got[static_cast<size_t>(i)]));
    return Status::success();
  });
  ASSERT_TRUE(s.ok()) << s.message();
}

TEST(DistTensor, StoreNpyFailureIsReportedEverywhereAndLeavesNothing) {
  TempDir dir;
  std::string path = dir.path("missing/x.npy");
  std::vector<std::string> m = messagesOf(3, [&](Communicator &comm) {
    TensorOptions options;
    options.Name = "x";
    std::unique_ptr<DistTensor> t;
    GNNC_TRY(createTensor(comm, 4, 2, DType::Float32, options, t));
    return t->storeNpy(path);
  });
  EXPECT_EQ(m[0].rfind("x: storeNpy: " + path +
                           ": cannot create temporary "
                           "file",
                       0),
            0u)
      << m[0];
  EXPECT_EQ(m[1], m[0] + " (on rank 0)");
  EXPECT_EQ(m[2], m[0] + " (on rank 0)");
  EXPECT_EQ(dir.listing(), std::vector<std::string>{});

  // Storing over an existing file replaces it, leaving no temporary file.
  path = dir.path("x.npy");
  writeFile(path, "old contents");
  Status s = runThreads(2, [&](Communicator &comm) -> Status {
    TensorOptions options;
    options.Type = MemoryType::Continuous;
    std::unique_ptr<DistTensor> t;
    GNNC_TRY(createTensor(comm, 3, 0, DType::Int32, options, t));
    std::vector<int64_t> rows = {0, 1, 2};
    std::vector<int32_t> values = {7, 8, 9};
    GNNC_TRY(t->scatter(rows.data(), comm.rank() == 0 ? 3 : 0, values.data()));
    return t->storeNpy(path);
  });
  ASSERT_TRUE(s.ok()) << s.message();
  NpyArray a;
  ASSERT_TRUE(gnnc::rt::readNpy(path, a).ok());
  EXPECT_EQ(a.shape, (std::vector<int64_t>{3}));
  ASSERT_NE(a.data<int32_t>(), nullptr);
  EXPECT_EQ(std::vector<int32_t>(a.data<int32_t>(), a.data<int32_t>() + 3),
            (std::vector<int32_t>{7, 8, 9}));
  EXPECT_EQ(dir.listing(), std::vector<std::string>{"x.npy"});
}

TEST(DistTensor, LoadDatasetArrayFromANpyFolder) {
  // A folder of 5 nodes and 3 features, the features stored as float64.
  TempDir dir;
  std::vector<double> x(15);
  std::vector<int64_t> y = {2, 0, 1, 1, 0};
  std::vector<bool> trainBits = {true, false, true, false, false};
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = 0.5 * static_cast<double>(i) - 1.0;
  ASSERT_TRUE(gnnc::rt::writeNpy(dir.path("x.npy"), makeArray({5, 3}, x)).ok());
  ASSERT_TRUE(gnnc::rt::writeNpy(dir.path("y.npy"), makeArray({5}, y)).ok());
  NpyArray train;
  train.dtype = DType::Bool;
  train.shape = {5};
  for (bool b : trainBits)
    train.bytes.push_back(b ? 1 : 0);
  ASSERT_TRUE(gnnc::rt::writeNpy(dir.path("train_mask.npy"), train).ok());

  for (MemoryType type : kTypes) {
    SCOPED_TRACE(memoryTypeName(type));
    Status s = runThreads(3, [&](Communicator &comm) -> Status {
      TensorOptions options;
      options.Type = type;
      options.RowsPerRank = {3, 0, 2};
      std::unique_ptr<DistTensor> features, labels, mask;
      GNNC_TRY(createTensor(comm, 5, 3, DType::Float32, options, features));
      GNNC_TRY(createTensor(comm, 5, 0, DType::Int64, options, labels));
      GNNC_TRY(createTensor(comm, 5, 0, DType::Bool, options, mask));
      GNNC_TRY(features->loadDatasetArray(dir.dir(), "features"));
      GNNC_TRY(labels->loadDatasetArray(dir.dir(), "labels"));
      GNNC_TRY(mask->loadDatasetArray(dir.dir(), "train_mask"));
      std::vector<int64_t> all = {0, 1, 2, 3, 4};
      std::vector<float> f(15);
      std::vector<int64_t> l(5);
      std::vector<uint8_t> m(5);
      GNNC_TRY(features->gather(all.data(), 5, f.data()));
      GNNC_TRY(labels->gather(all.data(), 5, l.data()));
      GNNC_TRY(mask->gather(all.data(), 5, m.data()));
      for (size_t i = 0; i < 15; ++i)
        if (f[i] != static_cast<float>(x[i]))
          return Status::error("feature " + std::to_string(i) + " differs");
      for (size_t i = 0; i < 5; ++i)
        if (l[i] != y[i] || m[i] != (trainBits[i] ? 1 : 0))
          return Status::error("node " + std::to_string(i) + " differs");
      // The shape must match: a tensor of 4 rows is refused on every rank.
      std::unique_ptr<DistTensor> small;
      options.RowsPerRank.clear();
      GNNC_TRY(createTensor(comm, 4, 0, DType::Int64, options, small));
      Status wrong = small->loadDatasetArray(dir.dir(), "labels");
      std::string expected = "tensor: loadDatasetArray(labels): " + dir.dir() +
                             ": labels: shape 5, but the tensor is 4";
      if (wrong.ok() || wrong.message() != expected)
        return Status::error("unexpected: '" + wrong.message() + "'");
      return Status::success();
    });
    ASSERT_TRUE(s.ok()) << s.message();
  }
}

//===----------------------------------------------------------------------===//
// A killed process leaves no segment behind
//===----------------------------------------------------------------------===//

/// Forks a child that creates a continuous and a chunked tensor on two
/// thread ranks and is then killed: after creation (`inWindow` false) or
/// inside the creation window, between creating and unlinking a segment,
/// after writing the segment's name to `nameFd`.
pid_t runKilledChild(bool inWindow, int nameFd) {
  pid_t child = ::fork();
  if (child != 0)
    return child;
  if (inWindow)
    detail::setSegmentCreatedHook([nameFd](const std::string &name) {
      if (::write(nameFd, name.data(), name.size()) !=
          static_cast<ssize_t>(name.size()))
        ::_exit(4);
      ::raise(SIGKILL);
    });
  Status s = runThreads(2, [&](Communicator &comm) -> Status {
    std::unique_ptr<DistTensor> a, b;
    TensorOptions options;
    options.Type = MemoryType::Continuous;
    GNNC_TRY(createTensor(comm, 64, 4, DType::Float32, options, a));
    options.Type = MemoryType::Chunked;
    GNNC_TRY(createTensor(comm, 64, 4, DType::Float32, options, b));
    GNNC_TRY(comm.barrier());
    if (comm.rank() == 0)
      ::raise(SIGKILL);
    return comm.barrier();
  });
  (void)s;
  ::_exit(3); // Not reached: the process kills itself.
}

TEST(DistTensorCrash, KilledProcessLeavesNoSegment) {
  pid_t child = runKilledChild(false, -1);
  ASSERT_GT(child, 0);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  EXPECT_EQ(segmentsOf(child), std::vector<std::string>{});
}

TEST(DistTensorCrash, KilledInsideTheCreateWindowIsSweptLater) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  pid_t child = runKilledChild(true, fds[1]);
  ASSERT_GT(child, 0);
  ::close(fds[1]);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << status;
  // The child died inside the window, holding the segment it names (which
  // any later creation, here or in a concurrent test, removes).
  char buffer[128] = {};
  ssize_t n = ::read(fds[0], buffer, sizeof(buffer) - 1);
  ::close(fds[0]);
  ASSERT_GT(n, 0);
  std::string name(buffer, static_cast<size_t>(n));
  std::string prefix = "/gnnc-" + std::to_string(child) + "-";
  EXPECT_EQ(name.rfind(prefix, 0), 0u) << name;
  Status s = runThreads(1, [&](Communicator &comm) {
    TensorOptions options;
    options.Type = MemoryType::Chunked;
    std::unique_ptr<DistTensor> t;
    return createTensor(comm, 4, 4, DType::Float32, options, t);
  });
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(segmentsOf(child), std::vector<std::string>{});
}

} // namespace
