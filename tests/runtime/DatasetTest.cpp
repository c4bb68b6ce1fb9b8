//===- DatasetTest.cpp - Tests of the dataset loader and bundles ----------===//
//
// Part of gnnc. The bundles shipped in runtime/data are checked against the
// known Planetoid sizes and, when ../shared/datasets is present, element by
// element against the .npy files they were packed from. Damaged bundles are
// built here with a small writer that follows docs/runtime.md independently
// of the loader, so every validation has a test with its exact message.
//
//===----------------------------------------------------------------------===//

#include "gnnc/runtime/Dataset.h"
#include "gnnc/runtime/Npy.h"

#include "RuntimeTestUtil.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <system_error>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

using namespace gnnc::rt;
using gnnc::rt::testing::TempDir;

namespace {

std::string sourceDir() { return GNNC_SOURCE_DIR; }
std::string bundlePath(const std::string &name) {
  return sourceDir() + "/runtime/data/" + name + ".gnnd";
}
std::string sharedDir(const std::string &name) {
  return sourceDir() + "/../shared/datasets/" + name;
}
bool exists(const std::string &path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec);
}

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in),
                     std::istreambuf_iterator<char>());
}

void writeFile(const std::string &path, const std::string &contents) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  ASSERT_TRUE(out.good()) << "cannot write " << path;
}

/// Sets an environment variable for the lifetime of the object.
class ScopedEnv {
public:
  ScopedEnv(const char *name, const char *value) : Name(name) {
    if (const char *old = std::getenv(name))
      Old = old, HadOld = true;
    if (value)
      ::setenv(name, value, 1);
    else
      ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (HadOld)
      ::setenv(Name, Old.c_str(), 1);
    else
      ::unsetenv(Name);
  }

private:
  const char *Name;
  std::string Old;
  bool HadOld = false;
};

//===----------------------------------------------------------------------===//
// An independent bundle writer (docs/runtime.md, "Dataset bundles")
//===----------------------------------------------------------------------===//

template <class T> void put(std::string &out, T value) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  out.append(bytes, sizeof(T));
}

void putVarint(std::string &out, uint64_t value) {
  do {
    unsigned char byte = value & 0x7f;
    value >>= 7;
    out += static_cast<char>(value ? byte | 0x80 : byte);
  } while (value);
}

uint64_t fnv(const std::string &bytes) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : bytes)
    h = (h ^ c) * 1099511628211ull;
  return h;
}

struct Header {
  uint32_t Version = 1, Flags = 0, N = 0, F = 0, E = 0, C = 0;
  uint64_t NNZ = 0;
};

/// Header + payload + checksum.
std::string frame(const Header &h, const std::string &payload) {
  std::string out = "GNNCDATA";
  put<uint32_t>(out, h.Version);
  put<uint32_t>(out, h.Flags);
  put<uint32_t>(out, h.N);
  put<uint32_t>(out, h.F);
  put<uint32_t>(out, h.E);
  put<uint32_t>(out, h.C);
  put<uint64_t>(out, h.NNZ);
  put<uint64_t>(out, payload.size());
  out += payload;
  put<uint64_t>(out, fnv(out));
  return out;
}

/// The sections of a bundle, editable before framing.
struct Parts {
  Header H;
  std::string Features, Edges, Labels, Masks;
  std::string bytes() const {
    return frame(H, Features + Edges + Labels + Masks);
  }
};

/// Encodes `ds` (0/1 features) the way tools/pack_datasets.py does.
Parts encode(const Dataset &ds) {
  Parts p;
  p.H.N = static_cast<uint32_t>(ds.NumNodes);
  p.H.F = static_cast<uint32_t>(ds.NumFeatures);
  p.H.E = static_cast<uint32_t>(ds.numEdges());
  p.H.C = static_cast<uint32_t>(ds.NumClasses);
  for (int64_t v = 0; v < ds.NumNodes; ++v) {
    std::vector<uint64_t> cols;
    for (int64_t j = 0; j < ds.NumFeatures; ++j)
      if (ds.X[v * ds.NumFeatures + j] != 0)
        cols.push_back(static_cast<uint64_t>(j));
    putVarint(p.Features, cols.size());
    uint64_t next = 0;
    for (uint64_t c : cols) {
      putVarint(p.Features, c - next);
      next = c + 1;
    }
    p.H.NNZ += cols.size();
  }
  bool wide = ds.NumNodes > 65536;
  for (const std::vector<int64_t> *ends : {&ds.EdgeSrc, &ds.EdgeDst})
    for (int64_t v : *ends) {
      if (wide)
        put<uint32_t>(p.Edges, static_cast<uint32_t>(v));
      else
        put<uint16_t>(p.Edges, static_cast<uint16_t>(v));
    }
  for (int64_t y : ds.Y)
    p.Labels += static_cast<char>(y);
  for (const std::vector<uint8_t> *m :
       {&ds.TrainMask, &ds.ValMask, &ds.TestMask}) {
    std::string bits((m->size() + 7) / 8, '\0');
    for (size_t v = 0; v < m->size(); ++v)
      if ((*m)[v])
        bits[v / 8] = static_cast<char>(bits[v / 8] | (1 << (v % 8)));
    p.Masks += bits;
  }
  return p;
}

/// A small dataset: 10 nodes, 6 features, 3 classes, 5 edges.
Dataset smallDataset() {
  Dataset ds;
  ds.NumNodes = 10;
  ds.NumFeatures = 6;
  ds.NumClasses = 3;
  ds.X.assign(60, 0.0f);
  for (int v = 0; v < 10; ++v)
    for (int j = 0; j < 6; ++j)
      if ((v * 7 + j * 3) % 4 == 0 && v != 4)
        ds.X[v * 6 + j] = 1.0f;
  ds.EdgeSrc = {0, 1, 9, 3, 3};
  ds.EdgeDst = {1, 0, 2, 3, 8};
  ds.Y = {0, 1, 2, 0, 1, 2, 0, 1, 2, 2};
  ds.TrainMask = {1, 1, 1, 0, 0, 0, 0, 0, 0, 0};
  ds.ValMask = {0, 0, 0, 1, 1, 0, 0, 0, 0, 0};
  ds.TestMask = {0, 0, 0, 0, 0, 1, 1, 1, 1, 1};
  return ds;
}

void expectSame(const Dataset &a, const Dataset &b) {
  EXPECT_EQ(a.NumNodes, b.NumNodes);
  EXPECT_EQ(a.NumFeatures, b.NumFeatures);
  EXPECT_EQ(a.NumClasses, b.NumClasses);
  EXPECT_TRUE(a.EdgeSrc == b.EdgeSrc) << "EdgeSrc differs";
  EXPECT_TRUE(a.EdgeDst == b.EdgeDst) << "EdgeDst differs";
  ASSERT_EQ(a.X.size(), b.X.size());
  // Bitwise, so that -0.0 and 0.0 would differ too.
  bool sameX = a.X.empty() || std::memcmp(a.X.data(), b.X.data(),
                                          a.X.size() * sizeof(float)) == 0;
  EXPECT_TRUE(sameX) << "X differs";
  EXPECT_TRUE(a.Y == b.Y) << "Y differs";
  EXPECT_TRUE(a.TrainMask == b.TrainMask) << "TrainMask differs";
  EXPECT_TRUE(a.ValMask == b.ValMask) << "ValMask differs";
  EXPECT_TRUE(a.TestMask == b.TestMask) << "TestMask differs";
}

int64_t count(const std::vector<uint8_t> &mask) {
  int64_t n = 0;
  for (uint8_t m : mask)
    n += m != 0;
  return n;
}

/// Writes `bytes` to a file and loads it; returns the status.
Status loadBytes(const std::string &bytes, Dataset &out,
                 std::string *pathOut = nullptr) {
  static TempDir dir;
  std::string path = dir.path("bundle.gnnd");
  writeFile(path, bytes);
  if (pathOut)
    *pathOut = path;
  return loadDataset(path, out);
}

/// The error of loading `bytes`, with the file name removed.
std::string errorOf(const std::string &bytes) {
  Dataset ds;
  std::string path;
  Status s = loadBytes(bytes, ds, &path);
  if (s.ok())
    return "(success)";
  std::string message = s.message();
  if (message.rfind(path + ": ", 0) == 0)
    return message.substr(path.size() + 2);
  return "(no file name) " + message;
}

//===----------------------------------------------------------------------===//
// The shipped bundles
//===----------------------------------------------------------------------===//

struct Known {
  const char *Name;
  int64_t N, E, F, C, NNZ, Train, Val, Test, ZeroRows;
};

const Known kKnown[] = {
    {"cora", 2708, 10556, 1433, 7, 49216, 140, 500, 1000, 0},
    {"citeseer", 3327, 9104, 3703, 6, 105165, 120, 500, 1000, 15},
};

TEST(Bundle, KnownSizes) {
  for (const Known &k : kKnown) {
    SCOPED_TRACE(k.Name);
    Dataset ds;
    Status s = loadDataset(bundlePath(k.Name), ds);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(ds.NumNodes, k.N);
    EXPECT_EQ(ds.numEdges(), k.E);
    EXPECT_EQ(ds.NumFeatures, k.F);
    EXPECT_EQ(ds.NumClasses, k.C);
    EXPECT_EQ(ds.EdgeDst.size(), static_cast<size_t>(k.E));
    EXPECT_EQ(ds.X.size(), static_cast<size_t>(k.N * k.F));
    EXPECT_EQ(ds.Y.size(), static_cast<size_t>(k.N));
    EXPECT_EQ(count(ds.TrainMask), k.Train);
    EXPECT_EQ(count(ds.ValMask), k.Val);
    EXPECT_EQ(count(ds.TestMask), k.Test);
    int64_t nnz = 0, zeroRows = 0;
    for (int64_t v = 0; v < k.N; ++v) {
      int64_t row = 0;
      for (int64_t j = 0; j < k.F; ++j) {
        float x = ds.X[v * k.F + j];
        ASSERT_TRUE(x == 0.0f || x == 1.0f);
        row += x != 0;
      }
      nnz += row;
      zeroRows += row == 0;
    }
    EXPECT_EQ(nnz, k.NNZ);
    EXPECT_EQ(zeroRows, k.ZeroRows);
    std::vector<int64_t> perClass(static_cast<size_t>(k.C));
    for (int64_t y : ds.Y) {
      ASSERT_TRUE(y >= 0 && y < k.C);
      ++perClass[static_cast<size_t>(y)];
    }
    for (int64_t c : perClass)
      EXPECT_GT(c, 0);
    // The Planetoid split: 20 training nodes per class, disjoint sets.
    std::vector<int64_t> trainPerClass(static_cast<size_t>(k.C));
    for (int64_t v = 0; v < k.N; ++v) {
      EXPECT_LE(ds.TrainMask[v] + ds.ValMask[v] + ds.TestMask[v], 1);
      if (ds.TrainMask[v])
        ++trainPerClass[static_cast<size_t>(ds.Y[v])];
    }
    EXPECT_EQ(trainPerClass, std::vector<int64_t>(k.C, 20));
  }
}

TEST(Bundle, SmallerThanOneMegabyte) {
  uint64_t total = 0;
  for (const Known &k : kKnown)
    total += std::filesystem::file_size(bundlePath(k.Name));
  EXPECT_LT(total, 1u << 20);
}

TEST(Bundle, EqualsTheNpyFiles) {
  for (const Known &k : kKnown) {
    SCOPED_TRACE(k.Name);
    if (!exists(sharedDir(k.Name)))
      GTEST_SKIP() << sharedDir(k.Name) << " is absent";
    Dataset bundle, npy;
    Status s = loadDataset(bundlePath(k.Name), bundle);
    ASSERT_TRUE(s.ok()) << s.message();
    s = loadDataset(sharedDir(k.Name), npy);
    ASSERT_TRUE(s.ok()) << s.message();
    expectSame(bundle, npy);
  }
}

TEST(Bundle, FindDatasetUsesTheBuiltInFolder) {
  ScopedEnv env("GNNC_DATA_DIR", nullptr);
  EXPECT_EQ(dataDir(), defaultDataDir());
  EXPECT_TRUE(std::filesystem::equivalent(defaultDataDir(),
                                          sourceDir() + "/runtime/data"));
  Dataset found, direct;
  Status s = findDataset("citeseer", found);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_TRUE(loadDataset(bundlePath("citeseer"), direct).ok());
  expectSame(found, direct);

  s = findDataset("pubmed", found);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("dataset 'pubmed' not found: neither "),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("set GNNC_DATA_DIR"), std::string::npos);
  for (const char *bad : {"", "../cora", "a/b", ".hidden", "cora\n"}) {
    s = findDataset(bad, found);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_EQ(s.message().rfind("invalid dataset name", 0), 0u) << s.message();
  }
}

TEST(Bundle, FindDatasetHonoursTheEnvironment) {
  TempDir dir;
  writeFile(dir.path("mini.gnnd"), encode(smallDataset()).bytes());
  ScopedEnv env("GNNC_DATA_DIR", dir.dir().c_str());
  EXPECT_EQ(dataDir(), dir.dir());
  Dataset ds;
  Status s = findDataset("mini", ds);
  ASSERT_TRUE(s.ok()) << s.message();
  expectSame(ds, smallDataset());
  s = findDataset("cora", ds);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("comes from GNNC_DATA_DIR"), std::string::npos)
      << s.message();

  // A folder of .npy directories works too (e.g. ../shared/datasets).
  std::string shared = sourceDir() + "/../shared/datasets";
  if (!exists(shared + "/cora"))
    GTEST_SKIP() << shared << " is absent";
  ScopedEnv env2("GNNC_DATA_DIR", shared.c_str());
  Dataset npy, bundle;
  s = findDataset("cora", npy);
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_TRUE(loadDataset(bundlePath("cora"), bundle).ok());
  expectSame(npy, bundle);
}

//===----------------------------------------------------------------------===//
// Synthetic bundles
//===----------------------------------------------------------------------===//

TEST(Bundle, RoundTripsSmallDatasets) {
  Dataset ds;
  Status s = loadBytes(encode(smallDataset()).bytes(), ds);
  ASSERT_TRUE(s.ok()) << s.message();
  expectSame(ds, smallDataset());

  // No nodes at all.
  Dataset empty;
  empty.NumClasses = 1;
  s = loadBytes(encode(empty).bytes(), ds);
  ASSERT_TRUE(s.ok()) << s.message();
  expectSame(ds, empty);
}

TEST(Bundle, WideIndicesAboveSixtyFiveThousandNodes) {
  Dataset big;
  big.NumNodes = 70000;
  big.NumFeatures = 2;
  big.NumClasses = 256;
  big.X.assign(140000, 0.0f);
  big.X[2 * 69999 + 1] = 1.0f;
  big.EdgeSrc = {69999, 0, 65536};
  big.EdgeDst = {12, 69998, 65535};
  big.Y.assign(70000, 255);
  big.Y[3] = 0;
  big.TrainMask.assign(70000, 0);
  big.TrainMask[69999] = 1;
  big.ValMask.assign(70000, 1);
  big.TestMask.assign(70000, 0);
  Dataset ds;
  Status s = loadBytes(encode(big).bytes(), ds);
  ASSERT_TRUE(s.ok()) << s.message();
  expectSame(ds, big);
}

//===----------------------------------------------------------------------===//
// Damaged bundles
//===----------------------------------------------------------------------===//

TEST(BundleErrors, Truncated) {
  std::string good = readFile(bundlePath("cora"));
  ASSERT_GT(good.size(), 1000u);
  EXPECT_EQ(errorOf(""), "file is truncated: 0 bytes, but a dataset bundle "
                         "has at least 56");
  EXPECT_EQ(errorOf(good.substr(0, 5)),
            "file is truncated: 5 bytes, but a dataset bundle has at least 56");
  EXPECT_EQ(errorOf(good.substr(0, 55)),
            "file is truncated: 55 bytes, but a dataset bundle has at least "
            "56");
  std::string payload = std::to_string(good.size() - 56);
  for (size_t keep : {size_t(56), good.size() / 2, good.size() - 1})
    EXPECT_EQ(errorOf(good.substr(0, keep)),
              "file is truncated: the header announces " + payload +
                  " payload bytes and an 8-byte checksum, but only " +
                  std::to_string(keep - 48) + " bytes follow the header");
  EXPECT_EQ(errorOf(good + "x"),
            "trailing data: the header announces " + payload +
                " payload bytes and an 8-byte checksum, but " +
                std::to_string(good.size() + 1 - 48) +
                " bytes follow the header");
}

TEST(BundleErrors, BadMagicAndVersion) {
  std::string good = readFile(bundlePath("citeseer"));
  std::string bad = good;
  bad[0] = 'X';
  EXPECT_EQ(errorOf(bad), "not a gnnc dataset bundle (bad magic string)");
  EXPECT_EQ(errorOf("\x93NUMPY"),
            "not a gnnc dataset bundle (bad magic string)");
  EXPECT_EQ(errorOf("GNNCDAT"), "file is truncated: 7 bytes, but a dataset "
                                "bundle has at least 56");
  bad = good;
  bad[8] = 2;
  EXPECT_EQ(errorOf(bad),
            "unsupported bundle version 2 (this runtime reads version 1)");
  bad = good;
  bad[12] = 1;
  EXPECT_EQ(errorOf(bad),
            "unsupported flags 0x0000000000000001 (version 1 defines none)");
}

TEST(BundleErrors, ChecksumCatchesFlippedBytes) {
  std::string good = readFile(bundlePath("cora"));
  // Header fields after the framing (N, F, E, C, NNZ), payload, checksum.
  for (size_t pos :
       {size_t(16), size_t(28), size_t(36), size_t(48), size_t(1000),
        good.size() / 2, good.size() - 60, good.size() - 1}) {
    std::string bad = good;
    bad[pos] = static_cast<char>(bad[pos] ^ 0x10);
    std::string message = errorOf(bad);
    EXPECT_EQ(message.rfind("checksum mismatch (stored 0x", 0), 0u)
        << "byte " << pos << ": " << message;
    EXPECT_NE(message.find("): the file is corrupt"), std::string::npos);
  }
}

TEST(BundleErrors, EveryFlippedByteIsAnErrorNeverACrash) {
  std::string good = encode(smallDataset()).bytes();
  for (size_t pos = 0; pos < good.size(); ++pos)
    for (unsigned char mask : {0x01, 0x80, 0xff}) {
      std::string bad = good;
      bad[pos] = static_cast<char>(bad[pos] ^ mask);
      EXPECT_NE(errorOf(bad), "(success)") << "byte " << pos;
    }
  for (size_t keep = 0; keep < good.size(); ++keep)
    EXPECT_NE(errorOf(good.substr(0, keep)), "(success)") << keep;
}

TEST(BundleErrors, InvalidContentWithAValidChecksum) {
  Parts p = encode(smallDataset());
  auto with = [&](auto edit) {
    Parts q = p;
    edit(q);
    return errorOf(q.bytes());
  };
  EXPECT_EQ(with([](Parts &q) { q.Edges[4] = 10; }),
            "edge 2: source 10 is outside [0, 10)");
  EXPECT_EQ(with([](Parts &q) { q.Edges[10 + 8] = 12; }),
            "edge 4: destination 12 is outside [0, 10)");
  EXPECT_EQ(with([](Parts &q) { q.Labels[7] = 3; }),
            "node 7: label 3 is outside [0, 3)");
  EXPECT_EQ(with([](Parts &q) { q.Masks[1] = 0x04; }),
            "train mask: the padding bits after the last node are not zero");
  EXPECT_EQ(with([](Parts &q) { q.Masks[5] = char(0x80); }),
            "test mask: the padding bits after the last node are not zero");
  EXPECT_EQ(with([](Parts &q) { q.H.C = 0; }),
            "the header says 0 classes for 10 nodes");
  EXPECT_EQ(with([](Parts &q) { q.H.C = 300; }),
            "the header says 300 classes; a bundle holds at most 256 "
            "(labels are stored in one byte)");
  EXPECT_EQ(with([](Parts &q) { q.H.E = 1000; }),
            "payload of " +
                std::to_string(p.Features.size() + 5 * 2 * 2 + 10 + 3 * 2) +
                " bytes is too small for 1000 edges and 10 nodes (they need " +
                std::to_string(1000 * 2 * 2 + 10 + 3 * 2) + " bytes)");
  EXPECT_EQ(with([](Parts &q) { q.H.NNZ = 1000; }),
            "the header says 1000 nonzero features, but the feature section "
            "has only " +
                std::to_string(p.Features.size()) + " bytes");
  EXPECT_EQ(with([](Parts &q) { --q.H.NNZ; }).rfind("feature row ", 0), 0u);
  EXPECT_EQ(with([](Parts &q) { ++q.H.NNZ; }),
            "the feature section holds " + std::to_string(p.H.NNZ) +
                " nonzero features, but the header announces " +
                std::to_string(p.H.NNZ + 1));
  // Row 0's first column pushed past F.
  EXPECT_EQ(with([](Parts &q) { q.Features[1] = 6; }),
            "feature row 0: column 6 is outside [0, 6)");
  EXPECT_EQ(with([](Parts &q) { q.Features[0] = 7; }),
            "feature row 0: 7 nonzero columns, but there are only 6 features");
  EXPECT_EQ(with([](Parts &q) { q.Features += '\0'; }),
            "the feature section has 1 unused bytes");
  // A varint that never ends, and one that overflows 32 bits.
  EXPECT_EQ(with([](Parts &q) {
              q.Features = std::string(q.Features.size(), '\x80');
            }),
            "feature row 0: malformed or truncated column count");
  EXPECT_EQ(with([](Parts &q) {
              q.Features = "\x01\x80";
              q.H.NNZ = 1;
            }),
            "feature row 0: malformed or truncated column gap");
  EXPECT_EQ(with([](Parts &q) {
              q.Features =
                  std::string("\x80\x80\x80\x80\x10", 5) + q.Features.substr(5);
            }),
            "feature row 0: malformed or truncated column count");
}

//===----------------------------------------------------------------------===//
// .npy directories
//===----------------------------------------------------------------------===//

template <class T>
void writeArray(const std::string &path, std::vector<int64_t> shape,
                const std::vector<T> &values) {
  NpyArray a;
  a.dtype = DTypeOf<T>::value;
  a.shape = std::move(shape);
  a.bytes.resize(values.size() * sizeof(T));
  if (!values.empty())
    std::memcpy(a.bytes.data(), values.data(), a.bytes.size());
  Status s = writeNpy(path, a);
  ASSERT_TRUE(s.ok()) << s.message();
}

void writeNpyDataset(const std::string &dir, const Dataset &ds) {
  int64_t n = ds.NumNodes, e = ds.numEdges();
  writeArray(dir + "/x.npy", {n, ds.NumFeatures}, ds.X);
  std::vector<int64_t> edges = ds.EdgeSrc;
  edges.insert(edges.end(), ds.EdgeDst.begin(), ds.EdgeDst.end());
  writeArray(dir + "/edge_index.npy", {2, e}, edges);
  writeArray(dir + "/y.npy", {n}, ds.Y);
  const char *names[3] = {"train", "val", "test"};
  const std::vector<uint8_t> *masks[3] = {&ds.TrainMask, &ds.ValMask,
                                          &ds.TestMask};
  for (int m = 0; m < 3; ++m) {
    NpyArray a;
    a.dtype = DType::Bool;
    a.shape = {n};
    a.bytes.assign(masks[m]->begin(), masks[m]->end());
    ASSERT_TRUE(
        writeNpy(dir + "/" + names[m] + std::string("_mask.npy"), a).ok());
  }
}

TEST(NpyDataset, LoadsADirectory) {
  TempDir dir;
  writeNpyDataset(dir.dir(), smallDataset());
  Dataset ds;
  Status s = loadDataset(dir.dir(), ds);
  ASSERT_TRUE(s.ok()) << s.message();
  expectSame(ds, smallDataset());
}

TEST(NpyDataset, Errors) {
  TempDir dir;
  Dataset ds;
  auto errorAfter = [&](auto edit) {
    writeNpyDataset(dir.dir(), smallDataset());
    edit();
    Status s = loadDataset(dir.dir(), ds);
    return s.ok() ? std::string("(success)") : s.message();
  };
  std::string d = dir.dir();
  EXPECT_EQ(errorAfter([&] {
              writeArray<int64_t>(d + "/edge_index.npy", {2, 2}, {0, 1, 5, 10});
            }),
            d + "/edge_index.npy: edge 1: destination 10 is outside [0, 10)");
  EXPECT_EQ(errorAfter([&] {
              writeArray<int64_t>(d + "/edge_index.npy", {2, 1}, {-1, 0});
            }),
            d + "/edge_index.npy: edge 0: source -1 is outside [0, 10)");
  EXPECT_EQ(errorAfter([&] {
              std::vector<int64_t> y(10, 1);
              y[4] = -2;
              writeArray(d + "/y.npy", {10}, y);
            }),
            d + "/y.npy: node 4: negative label -2");
  EXPECT_EQ(errorAfter([&] {
              writeArray(d + "/y.npy", {10}, std::vector<int32_t>(10, 0));
            }),
            d + "/y.npy: expected dtype int64, got int32");
  EXPECT_EQ(errorAfter([&] {
              writeArray(d + "/y.npy", {9}, std::vector<int64_t>(9, 0));
            }),
            d + "/y.npy: expected shape 10, got 9");
  EXPECT_EQ(errorAfter([&] {
              writeArray(d + "/val_mask.npy", {10},
                         std::vector<int64_t>(10, 0));
            }),
            d + "/val_mask.npy: expected dtype bool, got int64");
  EXPECT_EQ(errorAfter([&] {
              writeArray(d + "/x.npy", {60}, std::vector<float>(60, 0));
            }),
            d + "/x.npy: expected shape *x*, got 60");
  EXPECT_EQ(errorAfter([&] { std::filesystem::remove(d + "/test_mask.npy"); }),
            d + "/test_mask.npy: cannot open file: no such file or directory");
  EXPECT_EQ(errorAfter([&] { writeFile(d + "/x.npy", "junk"); }),
            d + "/x.npy: not a .npy file (bad magic string)");

  Status s = loadDataset(d + "/missing", ds);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(),
            d + "/missing: cannot open: no such file or directory");
  ASSERT_EQ(::mkfifo((d + "/fifo").c_str(), 0600), 0);
  s = loadDataset(d + "/fifo", ds);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), d + "/fifo: not a regular file or directory");
}

TEST(NpyDataset, Float64FeaturesLoadAsFloat32) {
  TempDir dir;
  Dataset small = smallDataset();
  writeNpyDataset(dir.dir(), small);
  // The features as float64, with values float32 holds exactly, and one it
  // rounds: 0.1 becomes the float nearest to it.
  std::vector<double> x(small.X.begin(), small.X.end());
  x[5] = 0.1;
  x[59] = -2.5;
  writeArray(dir.path("x.npy"), {10, 6}, x);
  Dataset ds;
  Status s = loadDataset(dir.dir(), ds);
  ASSERT_TRUE(s.ok()) << s.message();
  small.X[5] = 0.1f;
  small.X[59] = -2.5f;
  expectSame(ds, small);

  // A float64 beyond float32's range is an error, not an infinity.
  x[13] = 1e39;
  writeArray(dir.path("x.npy"), {10, 6}, x);
  s = loadDataset(dir.dir(), ds);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), dir.path("x.npy") + ": element [2, 1] = 1e+39 is "
                                             "too large for float32");
}

TEST(NpyDataset, NonFiniteFeaturesAreAnErrorUnlessAllowed) {
  TempDir dir;
  Dataset small = smallDataset();
  writeNpyDataset(dir.dir(), small);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  struct Case {
    int64_t Index;
    float Value;
    const char *Message;
  };
  for (const Case &c : {Case{8, nan, "element [1, 2] is nan"},
                        Case{59, inf, "element [9, 5] is inf"},
                        Case{0, -inf, "element [0, 0] is -inf"}}) {
    std::vector<float> x = small.X;
    x[c.Index] = c.Value;
    writeArray(dir.path("x.npy"), {10, 6}, x);
    Dataset ds;
    Status s = loadDataset(dir.dir(), ds);
    ASSERT_FALSE(s.ok());
    EXPECT_EQ(s.message(), dir.path("x.npy") + ": " + c.Message +
                               " (non-finite values are rejected)");
    DatasetOptions allow;
    allow.AllowNonFinite = true;
    s = loadDataset(dir.dir(), ds, allow);
    ASSERT_TRUE(s.ok()) << s.message();
    ASSERT_EQ(ds.X.size(), x.size());
    EXPECT_TRUE(std::memcmp(ds.X.data(), x.data(), x.size() * 4) == 0);
  }

  // findDataset passes the options on.
  ScopedEnv env("GNNC_DATA_DIR", dir.dir().c_str());
  std::filesystem::create_directory(dir.path("nan"));
  writeNpyDataset(dir.path("nan"), small);
  std::vector<float> x = small.X;
  x[1] = nan;
  writeArray(dir.path("nan/x.npy"), {10, 6}, x);
  Dataset ds;
  EXPECT_FALSE(findDataset("nan", ds).ok());
  DatasetOptions allow;
  allow.AllowNonFinite = true;
  Status s = findDataset("nan", ds, allow);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(std::isnan(ds.X[1]));
}

TEST(BundleErrors, FeatureSizeIsCheckedAgainstTheFileSize) {
  // Three nodes without features and F = 2^30 in a 65-byte file: 12 GiB of
  // dense features, rejected before anything is allocated.
  Parts p;
  p.H.N = 3;
  p.H.F = 1u << 30;
  p.H.C = 1;
  p.Features = std::string(3, '\0');
  p.Labels = std::string(3, '\0');
  p.Masks = std::string(3, '\0');
  std::string bytes = p.bytes();
  ASSERT_EQ(bytes.size(), 65u);
  EXPECT_EQ(errorOf(bytes), "the header says 3x1073741824 features "
                            "(12884901888 bytes as float32), more than 65536 "
                            "times the size of the 65-byte file");

  // One node in a 61-byte file: at most 61 * 65536 bytes of features, so
  // F = 999424 loads and F = 999425 does not.
  p.H.N = 1;
  p.Features = std::string(1, '\0');
  p.Labels = std::string(1, '\0');
  p.Masks = std::string(3, '\0');
  p.H.F = 999424;
  ASSERT_EQ(p.bytes().size(), 61u);
  Dataset ds;
  Status s = loadBytes(p.bytes(), ds);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(ds.X.size(), 999424u);
  p.H.F = 999425;
  EXPECT_EQ(errorOf(p.bytes()), "the header says 1x999425 features (3997700 "
                                "bytes as float32), more than 65536 times the "
                                "size of the 61-byte file");
}

//===----------------------------------------------------------------------===//
// Reading parts of a dataset (datasetArrayInfo, readDatasetRows)
//===----------------------------------------------------------------------===//

/// Every array of `path` through datasetArrayInfo and readDatasetRows, for
/// the slices [b, e) with b, e in `cuts`, equals the same rows of `ds`.
void expectRowsMatch(const std::string &path, const Dataset &ds,
                     const std::vector<int64_t> &cuts) {
  int64_t n = ds.NumNodes, f = ds.NumFeatures;
  DatasetArrayInfo info;
  Status s = datasetArrayInfo(path, "features", info);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(info.Dtype, DType::Float32);
  EXPECT_EQ(info.Shape, (std::vector<int64_t>{n, f}));
  ASSERT_TRUE(datasetArrayInfo(path, "labels", info).ok());
  EXPECT_EQ(info.Dtype, DType::Int64);
  EXPECT_EQ(info.Shape, (std::vector<int64_t>{n}));
  const char *maskNames[3] = {"train_mask", "val_mask", "test_mask"};
  const std::vector<uint8_t> *masks[3] = {&ds.TrainMask, &ds.ValMask,
                                          &ds.TestMask};
  for (const char *mask : maskNames) {
    ASSERT_TRUE(datasetArrayInfo(path, mask, info).ok());
    EXPECT_EQ(info.Dtype, DType::Bool);
    EXPECT_EQ(info.Shape, (std::vector<int64_t>{n}));
  }
  for (int64_t b : cuts) {
    for (int64_t e : cuts) {
      if (e < b)
        continue;
      SCOPED_TRACE(path + " rows [" + std::to_string(b) + ", " +
                   std::to_string(e) + ")");
      size_t rows = static_cast<size_t>(e - b);
      std::vector<float> x(rows * static_cast<size_t>(f), -1.0f);
      s = readDatasetRows(path, "features", b, e - b, x.data());
      ASSERT_TRUE(s.ok()) << s.message();
      EXPECT_TRUE(std::equal(x.begin(), x.end(), ds.X.begin() + b * f));
      std::vector<int64_t> y(rows, -1);
      s = readDatasetRows(path, "labels", b, e - b, y.data());
      ASSERT_TRUE(s.ok()) << s.message();
      EXPECT_TRUE(std::equal(y.begin(), y.end(), ds.Y.begin() + b));
      for (int m = 0; m < 3; ++m) {
        std::vector<uint8_t> bits(rows, 9);
        s = readDatasetRows(path, maskNames[m], b, e - b, bits.data());
        ASSERT_TRUE(s.ok()) << s.message();
        EXPECT_TRUE(std::equal(bits.begin(), bits.end(), masks[m]->begin() + b))
            << maskNames[m];
      }
    }
  }
}

TEST(DatasetRows, BundleSlicesMatchLoadDataset) {
  for (const char *name : {"cora", "citeseer"}) {
    Dataset ds;
    Status s = loadDataset(bundlePath(name), ds);
    ASSERT_TRUE(s.ok()) << s.message();
    int64_t n = ds.NumNodes;
    expectRowsMatch(bundlePath(name), ds, {0, 1000, n - 1, n});
  }
  TempDir dir;
  std::string path = dir.path("small.gnnd");
  writeFile(path, encode(smallDataset()).bytes());
  std::vector<int64_t> cuts;
  for (int64_t i = 0; i <= 10; ++i)
    cuts.push_back(i);
  expectRowsMatch(path, smallDataset(), cuts);
}

TEST(DatasetRows, FolderSlicesMatchLoadDataset) {
  TempDir dir;
  writeNpyDataset(dir.dir(), smallDataset());
  std::vector<int64_t> cuts;
  for (int64_t i = 0; i <= 10; ++i)
    cuts.push_back(i);
  expectRowsMatch(dir.dir(), smallDataset(), cuts);

  // float64 features are converted to float32 as loadDataset converts them.
  Dataset wide = smallDataset();
  std::vector<double> x(wide.X.begin(), wide.X.end());
  x[13] = 0.1;
  wide.X[13] = static_cast<float>(0.1);
  writeArray(dir.dir() + "/x.npy", {10, 6}, x);
  Dataset loaded;
  ASSERT_TRUE(loadDataset(dir.dir(), loaded).ok());
  expectSame(loaded, wide);
  expectRowsMatch(dir.dir(), loaded, cuts);

  if (exists(sharedDir("cora"))) {
    Dataset cora;
    ASSERT_TRUE(loadDataset(sharedDir("cora"), cora).ok());
    expectRowsMatch(sharedDir("cora"), cora, {0, 5, 2000, 2708});
  }
}

TEST(DatasetRows, Errors) {
  TempDir dir;
  std::string d = dir.dir();
  writeNpyDataset(d, smallDataset());
  std::vector<float> x(60);
  auto errorOf = [&](const std::string &path, const std::string &array,
                     int64_t b, int64_t n) {
    Status s = readDatasetRows(path, array, b, n, x.data());
    return s.ok() ? std::string("(success)") : s.message();
  };
  DatasetArrayInfo info;
  Status s = datasetArrayInfo(d, "edges", info);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), d + ": unknown dataset array 'edges' (expected "
                             "'features', 'labels', 'train_mask', 'val_mask' "
                             "or 'test_mask')");
  EXPECT_EQ(errorOf(d, "x", 0, 1), s.message().substr(0, d.size() + 2) +
                                       "unknown dataset array 'x' (expected "
                                       "'features', 'labels', 'train_mask', "
                                       "'val_mask' or 'test_mask')");
  EXPECT_EQ(errorOf(d, "labels", 8, 3),
            d + "/y.npy: labels: rows [8, 11) are outside the 10 rows of the "
                "dataset");
  EXPECT_EQ(errorOf(d, "labels", -1, 1),
            d + "/y.npy: labels: rows [-1, 0) are outside the 10 rows of the "
                "dataset");

  // Labels, wrong shapes and non-finite features, in a folder.
  std::vector<int64_t> y(10, 1);
  y[4] = -2;
  writeArray(d + "/y.npy", {10}, y);
  EXPECT_EQ(errorOf(d, "labels", 0, 4), "(success)");
  EXPECT_EQ(errorOf(d, "labels", 3, 2),
            d + "/y.npy: node 4: negative label -2");
  writeArray(d + "/y.npy", {9}, std::vector<int64_t>(9, 0));
  EXPECT_EQ(errorOf(d, "labels", 0, 1), d + "/y.npy: expected shape 10, got 9");
  s = datasetArrayInfo(d, "labels", info);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), d + "/y.npy: expected shape 10, got 9");
  writeArray(d + "/val_mask.npy", {10}, std::vector<int64_t>(10, 0));
  s = datasetArrayInfo(d, "val_mask", info);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), d + "/val_mask.npy: expected dtype bool, got int64");
  std::vector<float> nan(60, 0.0f);
  nan[2 * 6 + 5] = std::nanf("");
  writeArray(d + "/x.npy", {10, 6}, nan);
  EXPECT_EQ(errorOf(d, "features", 0, 2), "(success)");
  EXPECT_EQ(errorOf(d, "features", 1, 3),
            d + "/x.npy: element [2, 5] is nan (non-finite values are "
                "rejected)");
  DatasetOptions allow;
  allow.AllowNonFinite = true;
  s = readDatasetRows(d, "features", 1, 3, x.data(), allow);
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(std::isnan(x[6 + 5]));
  std::vector<double> big(60, 0.0);
  big[7] = 1e300;
  writeArray(d + "/x.npy", {10, 6}, big);
  EXPECT_EQ(errorOf(d, "features", 0, 3),
            d + "/x.npy: element [1, 1] = 1e+300 is too large for float32");

  // A bundle: the slice's values are checked, as is its framing.
  std::string path = dir.path("b.gnnd");
  Parts p = encode(smallDataset());
  p.Labels[6] = 5;
  writeFile(path, p.bytes());
  EXPECT_EQ(errorOf(path, "labels", 0, 6), "(success)");
  EXPECT_EQ(errorOf(path, "labels", 5, 3),
            path + ": node 6: label 5 is outside [0, 3)");
  p = encode(smallDataset());
  p.Masks[3] = 0x10; // val mask, padding bit of node 12
  writeFile(path, p.bytes());
  EXPECT_EQ(errorOf(path, "val_mask", 0, 9), "(success)");
  EXPECT_EQ(errorOf(path, "val_mask", 9, 1),
            path + ": val mask: the padding bits after the last node are not "
                   "zero");
  // Feature row 3 lists column 6 of 6: rows before it read, rows from it on
  // need it decoded and fail.
  Dataset bad = smallDataset();
  p = encode(bad);
  std::string features;
  for (int64_t v = 0; v < 10; ++v) {
    if (v == 3) {
      putVarint(features, 1);
      putVarint(features, 6);
      continue;
    }
    std::vector<uint64_t> cols;
    for (int64_t j = 0; j < 6; ++j)
      if (bad.X[v * 6 + j] != 0)
        cols.push_back(static_cast<uint64_t>(j));
    putVarint(features, cols.size());
    uint64_t next = 0;
    for (uint64_t c : cols) {
      putVarint(features, c - next);
      next = c + 1;
    }
  }
  p.Features = features;
  writeFile(path, p.bytes());
  EXPECT_EQ(errorOf(path, "features", 0, 3), "(success)");
  EXPECT_EQ(errorOf(path, "features", 5, 2),
            path + ": feature row 3: column 6 is outside [0, 6)");
  std::string good = encode(smallDataset()).bytes();
  writeFile(path, good.substr(0, good.size() - 1));
  Dataset ds;
  Status whole = loadDataset(path, ds);
  ASSERT_FALSE(whole.ok());
  EXPECT_EQ(errorOf(path, "labels", 0, 1), whole.message());
  s = datasetArrayInfo(path, "labels", info);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), whole.message());
}

} // namespace
