//===- SbmTest.cpp - Tests of gnnc-gen-sbm --------------------------------===//
//
// Part of gnnc. Runs gnnc-gen-sbm on graphs of 20,000 vertices, loads the
// folder with rt::loadDataset and checks what the model promises against
// expectations computed here from the flags alone: sizes, a symmetric simple
// graph, label balance, the split, edge homophily, heavy-tailed in-degrees,
// features around the class centroids, determinism (whatever the number of
// threads), and that a failed or interrupted run leaves no partial dataset.
//
//===----------------------------------------------------------------------===//

#include "gnnc/runtime/Dataset.h"
#include "gnnc/runtime/Npy.h"

#include "RuntimeTestUtil.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iterator>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace gnnc::rt;
using gnnc::rt::testing::fileExists;
using gnnc::rt::testing::readFile;
using gnnc::rt::testing::TempDir;

namespace {

/// How a run of gnnc-gen-sbm ended.
struct RunResult {
  int ExitCode = -1; // -1 when it was killed
  int Signal = 0;
  std::string Out, Err;
};

/// Extra conditions of a run.
struct RunLimits {
  /// RLIMIT_FSIZE in bytes, or 0 for none.
  rlim_t MaxFileSize = 0;
  /// Sends SIGTERM after this many milliseconds, or never when negative.
  int TermAfterMs = -1;
};

/// Runs gnnc-gen-sbm with `args`; its output goes through files in `logs`.
RunResult runGenerator(const std::vector<std::string> &args,
                       const TempDir &logs, const RunLimits &limits = {}) {
  std::string outPath = logs.path("stdout"), errPath = logs.path("stderr");
  std::vector<std::string> all = {GNNC_GEN_SBM};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char *> argv;
  for (std::string &a : all)
    argv.push_back(a.data());
  argv.push_back(nullptr);

  RunResult result;
  pid_t pid = ::fork();
  if (pid == 0) {
    int out = ::open(outPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = ::open(errPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0 || err < 0 || ::dup2(out, 1) < 0 || ::dup2(err, 2) < 0)
      ::_exit(127);
    if (limits.MaxFileSize) {
      struct rlimit rl = {limits.MaxFileSize, limits.MaxFileSize};
      if (::setrlimit(RLIMIT_FSIZE, &rl) != 0)
        ::_exit(127);
    }
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  EXPECT_GT(pid, 0) << "fork failed";
  if (pid <= 0)
    return result;
  if (limits.TermAfterMs >= 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(limits.TermAfterMs));
    ::kill(pid, SIGTERM);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFEXITED(status))
    result.ExitCode = WEXITSTATUS(status);
  if (WIFSIGNALED(status))
    result.Signal = WTERMSIG(status);
  result.Out = readFile(outPath);
  result.Err = readFile(errPath);
  return result;
}

/// The flags of the test graph: 20,000 vertices, the defaults written out.
std::vector<std::string> graphFlags(const std::string &out) {
  return {"--out=" + out,    "--nodes=20000",   "--classes=16",
          "--features=64",   "--avg-degree=20", "--power-law-exponent=2.5",
          "--homophily=0.5", "--noise=1",       "--seed=7",
          "--quiet"};
}

constexpr int64_t kNodes = 20000, kClasses = 16, kFeatures = 64;
constexpr double kAvgDegree = 20, kExponent = 2.5, kHomophily = 0.5, kNoise = 1;

/// The files of a dataset folder.
const char *const kDataFiles[] = {
    "edge_index.npy", "x.npy",         "y.npy",        "train_mask.npy",
    "val_mask.npy",   "test_mask.npy", "centroids.npy"};

/// Generates into `dir/name` with `args` (after --out) and loads it.
void generate(const TempDir &dir, const std::string &name,
              const std::vector<std::string> &args, Dataset &ds) {
  std::vector<std::string> all = {"--out", dir.path(name), "--quiet"};
  all.insert(all.end(), args.begin(), args.end());
  RunResult r = runGenerator(all, dir);
  ASSERT_EQ(r.ExitCode, 0) << r.Err;
  ASSERT_EQ(r.Err, "");
  Status st = loadDataset(dir.path(name), ds);
  ASSERT_TRUE(st.ok()) << st.message();
}

/// The test graph, generated once per test process.
class SbmGraph : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    Dir = new TempDir();
    Path = Dir->path("sbm");
    Run = new RunResult(runGenerator(graphFlags(Path), *Dir));
    Data = new Dataset();
    LoadStatus = loadDataset(Path, *Data);
  }
  static void TearDownTestSuite() {
    delete Data;
    delete Run;
    delete Dir;
  }
  void SetUp() override {
    ASSERT_EQ(Run->ExitCode, 0) << Run->Err;
    ASSERT_TRUE(LoadStatus.ok()) << LoadStatus.message();
  }

  static TempDir *Dir;
  static std::string Path;
  static RunResult *Run;
  static Dataset *Data;
  static Status LoadStatus;
};
TempDir *SbmGraph::Dir = nullptr;
std::string SbmGraph::Path;
RunResult *SbmGraph::Run = nullptr;
Dataset *SbmGraph::Data = nullptr;
Status SbmGraph::LoadStatus;

TEST_F(SbmGraph, SizesAndFiles) {
  const Dataset &ds = *Data;
  EXPECT_EQ(ds.NumNodes, kNodes);
  EXPECT_EQ(ds.NumFeatures, kFeatures);
  EXPECT_EQ(ds.NumClasses, kClasses);
  // round(N * avg / 2) undirected edges, each stored both ways.
  EXPECT_EQ(ds.numEdges(), 2 * std::llround(kNodes * kAvgDegree / 2));
  // Nothing else in the folder (no temporary file is left).
  std::vector<std::string> expected(std::begin(kDataFiles),
                                    std::end(kDataFiles));
  expected.push_back("meta.json");
  std::sort(expected.begin(), expected.end());
  std::vector<std::string> listing;
  for (const auto &e : std::filesystem::directory_iterator(Path))
    listing.push_back(e.path().filename().string());
  std::sort(listing.begin(), listing.end());
  EXPECT_EQ(listing, expected);
  std::string meta = readFile(Path + "/meta.json");
  EXPECT_NE(meta.find("\"generator\": \"gnnc-gen-sbm\""), std::string::npos);
  EXPECT_NE(meta.find("\"edges\": 400000,"), std::string::npos) << meta;

  // Rows read alone match the whole load.
  std::vector<float> rows(10 * kFeatures);
  Status st = readDatasetRows(Path, "features", 12345, 10, rows.data());
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_TRUE(
      std::equal(rows.begin(), rows.end(), ds.X.begin() + 12345 * kFeatures));
  std::vector<int64_t> labels(10);
  st = readDatasetRows(Path, "labels", kNodes - 10, 10, labels.data());
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_TRUE(std::equal(labels.begin(), labels.end(), ds.Y.end() - 10));
}

TEST_F(SbmGraph, SymmetricWithoutSelfLoopsOrRepeats) {
  const Dataset &ds = *Data;
  std::vector<uint64_t> pairs, reversed;
  for (int64_t e = 0; e < ds.numEdges(); ++e) {
    uint64_t s = static_cast<uint64_t>(ds.EdgeSrc[e]);
    uint64_t d = static_cast<uint64_t>(ds.EdgeDst[e]);
    ASSERT_NE(s, d) << "self-loop at edge " << e;
    pairs.push_back(s << 32 | d);
    reversed.push_back(d << 32 | s);
  }
  std::sort(pairs.begin(), pairs.end());
  std::sort(reversed.begin(), reversed.end());
  EXPECT_EQ(std::adjacent_find(pairs.begin(), pairs.end()), pairs.end())
      << "an edge appears twice";
  EXPECT_EQ(pairs, reversed) << "an edge lacks its reverse";
}

/// |count - n p| <= 5 sd of Binomial(n, p) for every class.
void expectBalanced(const std::vector<int64_t> &labels,
                    const std::vector<double> &proportions) {
  std::vector<int64_t> count(proportions.size(), 0);
  for (int64_t y : labels) {
    ASSERT_GE(y, 0);
    ASSERT_LT(y, static_cast<int64_t>(proportions.size()));
    ++count[static_cast<size_t>(y)];
  }
  auto n = static_cast<double>(labels.size());
  for (size_t c = 0; c < proportions.size(); ++c) {
    double p = proportions[c];
    double sd = std::sqrt(n * p * (1 - p));
    EXPECT_LE(std::abs(static_cast<double>(count[c]) - n * p), 5 * sd)
        << "class " << c << ": " << count[c] << " vertices, expected " << n * p;
  }
}

TEST_F(SbmGraph, LabelsAreBalanced) {
  expectBalanced(Data->Y, std::vector<double>(kClasses, 1.0 / kClasses));
}

TEST_F(SbmGraph, SplitHasTheRequestedSizesAndIsDisjoint) {
  const Dataset &ds = *Data;
  int64_t train = 0, val = 0, test = 0;
  for (int64_t v = 0; v < ds.NumNodes; ++v) {
    int sets = ds.TrainMask[v] + ds.ValMask[v] + ds.TestMask[v];
    ASSERT_LE(sets, 1) << "vertex " << v << " is in two sets";
    train += ds.TrainMask[v];
    val += ds.ValMask[v];
    test += ds.TestMask[v];
  }
  // round(0.10 N), round(0.15 N) - round(0.10 N), round(0.25 N) - ...
  EXPECT_EQ(train, 2000);
  EXPECT_EQ(val, 1000);
  EXPECT_EQ(test, 2000);
  // The training vertices are a random sample: every class is there,
  // within 5 sd of 2000 / 16.
  std::vector<int64_t> trainLabels;
  for (int64_t v = 0; v < ds.NumNodes; ++v)
    if (ds.TrainMask[v])
      trainLabels.push_back(ds.Y[v]);
  expectBalanced(trainLabels, std::vector<double>(kClasses, 1.0 / kClasses));
}

/// The fraction of edges whose ends share a class.
double edgeHomophily(const Dataset &ds) {
  int64_t same = 0;
  for (int64_t e = 0; e < ds.numEdges(); ++e)
    same += ds.Y[ds.EdgeSrc[e]] == ds.Y[ds.EdgeDst[e]];
  return static_cast<double>(same) / static_cast<double>(ds.numEdges());
}

// The generator draws exactly round(h M) same-class pairs among the M
// undirected edges, so the measured homophily is round(h M) / M: within
// 0.5 / M of h.
TEST_F(SbmGraph, EdgeHomophilyIsTheRequestedOne) {
  double m = static_cast<double>(Data->numEdges()) / 2;
  EXPECT_LE(std::abs(edgeHomophily(*Data) - kHomophily), 0.5 / m + 1e-12);
}

TEST(Sbm, EdgeHomophilyFollowsTheFlag) {
  TempDir dir;
  for (double h : {0.0, 0.137, 0.9}) {
    Dataset ds;
    std::string name = "h" + std::to_string(h);
    ASSERT_NO_FATAL_FAILURE(generate(dir, name,
                                     {"--nodes", "20000", "--features", "1",
                                      "--homophily", std::to_string(h)},
                                     ds));
    double m = static_cast<double>(ds.numEdges()) / 2;
    EXPECT_LE(std::abs(edgeHomophily(ds) - h), 0.5 / m + 1e-12) << "h " << h;
  }
}

TEST(Sbm, ClassProportions) {
  TempDir dir;
  Dataset ds;
  ASSERT_NO_FATAL_FAILURE(generate(dir, "p",
                                   {"--nodes", "20000", "--features", "2",
                                    "--class-proportions", "4,2,1,0,1"},
                                   ds));
  // Class 3 has no vertex: NumClasses is 1 + the largest label.
  EXPECT_EQ(ds.NumClasses, 5);
  expectBalanced(ds.Y, {0.5, 0.25, 0.125, 0.0, 0.125});
  EXPECT_LE(std::abs(edgeHomophily(ds) - 0.5),
            1.0 / static_cast<double>(ds.numEdges()));
}

/// In-degrees of a dataset.
std::vector<int64_t> inDegrees(const Dataset &ds) {
  std::vector<int64_t> deg(static_cast<size_t>(ds.NumNodes), 0);
  for (int64_t d : ds.EdgeDst)
    ++deg[static_cast<size_t>(d)];
  return deg;
}

/// The least-squares slope of log P(D >= d) against log d at 20 points
/// spaced evenly in log d from twice the mean degree to the degree of the
/// 50th largest vertex (so that each point stands on 50 or more vertices).
double ccdfSlope(const std::vector<int64_t> &deg) {
  double mean = 0;
  for (int64_t d : deg)
    mean += static_cast<double>(d);
  mean /= static_cast<double>(deg.size());
  std::vector<int64_t> sorted(deg);
  std::sort(sorted.begin(), sorted.end(), std::greater<int64_t>());
  double lo = std::log(2 * mean), hi = std::log(double(sorted[49]));
  EXPECT_GT(hi, lo + 1) << "the tail is too short to fit";
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  constexpr int kPoints = 20;
  for (int i = 0; i < kPoints; ++i) {
    double x = lo + (hi - lo) * i / (kPoints - 1);
    double t = std::exp(x);
    auto atLeast = std::count_if(deg.begin(), deg.end(),
                                 [&](int64_t d) { return double(d) >= t; });
    double y = std::log(static_cast<double>(atLeast) /
                        static_cast<double>(deg.size()));
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  return (kPoints * sxy - sx * sy) / (kPoints * sxx - sx * sx);
}

// Theta has P(theta > t) = t^-(gamma - 1), and a degree is Poisson around a
// multiple of theta, so the degree CCDF falls as d^-(gamma - 1) in its tail.
// The fit's spread over seeds is about 0.05 (one sd) at 20,000 vertices, and
// redrawing repeated pairs, which at this size saturate between the largest
// hubs, steepens the tail by up to about 0.1 (a multigraph of the same
// weights fits -1.51 to -1.57 for gamma 2.5, the simple graph -1.55 to
// -1.60); 0.25 covers both.
TEST_F(SbmGraph, InDegreesAreHeavyTailed) {
  std::vector<int64_t> deg = inDegrees(*Data);
  // Every edge is stored both ways: in-degree is the undirected degree.
  std::vector<int64_t> outDeg(deg.size(), 0);
  for (int64_t s : Data->EdgeSrc)
    ++outDeg[static_cast<size_t>(s)];
  EXPECT_EQ(deg, outDeg);
  int64_t maxDeg = *std::max_element(deg.begin(), deg.end());
  // A Poisson graph of mean 20 has its maximum near 40; here theta_max
  // exceeds 75 (25 times the mean weight 3) with probability
  // 1 - exp(-20000 * 75^-1.5) > 1 - 1e-13.
  EXPECT_GE(maxDeg, 25 * kAvgDegree);
  EXPECT_NEAR(ccdfSlope(deg), -(kExponent - 1), 0.25);
}

TEST(Sbm, DegreeTailFollowsTheExponent) {
  TempDir dir;
  Dataset ds;
  ASSERT_NO_FATAL_FAILURE(
      generate(dir, "g",
               {"--nodes", "20000", "--features", "1", "--power-law-exponent",
                "3.5", "--seed", "3"},
               ds));
  EXPECT_NEAR(ccdfSlope(inDegrees(ds)), -2.5, 0.25);
}

// x_v = mu_c + sigma z_v: per class and column, the mean of n_c rows lies
// within 5 sigma / sqrt(n_c) of the centroid (1024 such means; a normal
// value beyond 5 sd has probability 5.7e-7), and the pooled variance of
// the rows around their centroid, over N F = 1.28M values, is sigma^2
// within 2% (its relative sd is sqrt(2 / (N F)) = 0.13%).
TEST_F(SbmGraph, FeaturesScatterAroundTheCentroids) {
  const Dataset &ds = *Data;
  NpyArray mu;
  Status st = readNpyExpect(Path + "/centroids.npy", DType::Float32,
                            {kClasses, kFeatures}, mu);
  ASSERT_TRUE(st.ok()) << st.message();
  const float *centroid = mu.data<float>();
  for (int64_t c = 0; c < kClasses; ++c) {
    double norm2 = 0;
    for (int64_t j = 0; j < kFeatures; ++j)
      norm2 +=
          double(centroid[c * kFeatures + j]) * centroid[c * kFeatures + j];
    EXPECT_NEAR(std::sqrt(norm2), 1.0, 1e-5) << "centroid " << c;
  }
  std::vector<double> sum(kClasses * kFeatures, 0.0);
  std::vector<int64_t> count(kClasses, 0);
  double squares = 0;
  for (int64_t v = 0; v < ds.NumNodes; ++v) {
    int64_t c = ds.Y[v];
    ++count[c];
    for (int64_t j = 0; j < kFeatures; ++j) {
      double x = ds.X[v * kFeatures + j];
      double dev = x - centroid[c * kFeatures + j];
      sum[c * kFeatures + j] += x;
      squares += dev * dev;
    }
  }
  for (int64_t c = 0; c < kClasses; ++c)
    for (int64_t j = 0; j < kFeatures; ++j) {
      double mean = sum[c * kFeatures + j] / double(count[c]);
      EXPECT_LE(std::abs(mean - centroid[c * kFeatures + j]),
                5 * kNoise / std::sqrt(double(count[c])))
          << "class " << c << ", column " << j;
    }
  double variance = squares / double(kNodes * kFeatures);
  EXPECT_NEAR(variance, kNoise * kNoise, 0.02 * kNoise * kNoise);
}

TEST(Sbm, NoiseZeroGivesTheCentroids) {
  TempDir dir;
  Dataset ds;
  ASSERT_NO_FATAL_FAILURE(generate(
      dir, "z", {"--nodes", "500", "--features", "5", "--noise", "0"}, ds));
  NpyArray mu;
  Status st = readNpy(dir.path("z/centroids.npy"), mu);
  ASSERT_TRUE(st.ok()) << st.message();
  for (int64_t v = 0; v < ds.NumNodes; ++v)
    for (int64_t j = 0; j < 5; ++j)
      ASSERT_EQ(ds.X[v * 5 + j], mu.data<float>()[ds.Y[v] * 5 + j]);
}

TEST(Sbm, SameSeedSameFilesWhateverTheThreads) {
  TempDir dir;
  std::vector<std::string> one = graphFlags(dir.path("one"));
  std::vector<std::string> two = graphFlags(dir.path("two"));
  std::vector<std::string> other = graphFlags(dir.path("other"));
  one.insert(one.end(), {"--threads", "1"});
  two.insert(two.end(), {"--threads", "3"});
  *std::find(other.begin(), other.end(), "--seed=7") = "--seed=8";
  for (auto *args : {&one, &two, &other}) {
    RunResult r = runGenerator(*args, dir);
    ASSERT_EQ(r.ExitCode, 0) << r.Err;
  }
  for (const char *file : kDataFiles) {
    std::string a = readFile(dir.path("one/") + file);
    EXPECT_FALSE(a.empty()) << file;
    EXPECT_TRUE(a == readFile(dir.path("two/") + file))
        << file << " depends on the number of threads";
    if (std::string(file) != "train_mask.npy" &&
        std::string(file) != "val_mask.npy" &&
        std::string(file) != "test_mask.npy") {
      EXPECT_FALSE(a == readFile(dir.path("other/") + file))
          << file << " does not depend on the seed";
    }
  }
  // The masks too: the same sizes, other vertices.
  EXPECT_FALSE(readFile(dir.path("one/train_mask.npy")) ==
               readFile(dir.path("other/train_mask.npy")));
}

TEST(Sbm, ReplacesADatasetAndKeepsOtherFiles) {
  TempDir dir;
  std::string out = dir.path("ds");
  std::vector<std::string> a = {"--out", out, "--nodes", "3000", "--seed", "1"};
  ASSERT_EQ(runGenerator(a, dir).ExitCode, 0);
  gnnc::rt::testing::writeFile(out + "/notes.txt", "mine");
  a[5] = "2";
  ASSERT_EQ(runGenerator(a, dir).ExitCode, 0);
  std::vector<std::string> b = {"--out", dir.path("fresh"), "--nodes",
                                "3000",  "--seed",          "2"};
  ASSERT_EQ(runGenerator(b, dir).ExitCode, 0);
  for (const char *file : kDataFiles)
    EXPECT_TRUE(readFile(out + "/" + file) ==
                readFile(dir.path("fresh/") + file))
        << file;
  EXPECT_EQ(readFile(out + "/notes.txt"), "mine");
}

/// Names in `dir` that hold ".tmp.".
std::vector<std::string> temporaries(const std::string &dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto &e : std::filesystem::directory_iterator(dir, ec)) {
    std::string name = e.path().filename().string();
    if (name.find(".tmp.") != std::string::npos)
      names.push_back(name);
  }
  return names;
}

TEST(Sbm, FailedWriteLeavesNoFolder) {
  TempDir dir;
  std::string out = dir.path("new");
  // x.npy outgrows a 1 MiB file size limit: a write error.
  RunResult r =
      runGenerator({"--out", out, "--nodes", "20000"}, dir, {1 << 20, -1});
  EXPECT_EQ(r.ExitCode, 1);
  EXPECT_EQ(r.Out, "");
  EXPECT_EQ(r.Err.rfind("gnnc-gen-sbm: error: ", 0), 0u) << r.Err;
  EXPECT_NE(r.Err.find("write error: file too large"), std::string::npos)
      << r.Err;
  EXPECT_EQ(std::count(r.Err.begin(), r.Err.end(), '\n'), 1) << r.Err;
  EXPECT_FALSE(fileExists(out)) << "the run left its folder";
}

TEST(Sbm, FailedWriteKeepsTheOldDataset) {
  TempDir dir;
  std::string out = dir.path("old");
  ASSERT_EQ(runGenerator({"--out", out, "--nodes", "3000"}, dir).ExitCode, 0);
  std::vector<std::string> before;
  for (const char *file : kDataFiles)
    before.push_back(readFile(out + "/" + file));
  std::string meta = readFile(out + "/meta.json");
  RunResult r = runGenerator({"--out", out, "--nodes", "20000", "--seed", "5"},
                             dir, {1 << 20, -1});
  EXPECT_EQ(r.ExitCode, 1) << r.Err;
  for (size_t i = 0; i < before.size(); ++i)
    EXPECT_TRUE(readFile(out + "/" + kDataFiles[i]) == before[i])
        << kDataFiles[i];
  EXPECT_EQ(readFile(out + "/meta.json"), meta);
  EXPECT_EQ(temporaries(out), std::vector<std::string>());
}

// SIGTERM at any moment leaves either no folder or a whole dataset (with
// meta.json, loadable), and never a temporary file.
TEST(Sbm, InterruptedRunLeavesNoPartialDataset) {
  TempDir dir;
  int complete = 0, removed = 0;
  for (int ms : {0, 20, 60, 150, 300, 600}) {
    std::string out = dir.path("run" + std::to_string(ms));
    RunResult r =
        runGenerator({"--out", out, "--nodes", "100000"}, dir, {0, ms});
    if (r.ExitCode == 0) {
      Dataset ds;
      EXPECT_TRUE(fileExists(out + "/meta.json"));
      EXPECT_TRUE(loadDataset(out, ds).ok());
      EXPECT_EQ(temporaries(out), std::vector<std::string>());
      ++complete;
      continue;
    }
    EXPECT_EQ(r.Signal, SIGTERM) << "exit " << r.ExitCode << ": " << r.Err;
    if (fileExists(out)) {
      // Killed once everything was in place.
      EXPECT_TRUE(fileExists(out + "/meta.json")) << ms << " ms";
      Dataset ds;
      EXPECT_TRUE(loadDataset(out, ds).ok()) << ms << " ms";
      EXPECT_EQ(temporaries(out), std::vector<std::string>());
      ++complete;
    } else {
      ++removed;
    }
  }
  // The early signals find the run under way.
  EXPECT_GE(removed, 1);
  EXPECT_EQ(complete + removed, 6);
}

} // namespace
