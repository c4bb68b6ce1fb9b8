//===- LoadersTest.cpp - Tests of the SNAP, Matrix Market and OGB loaders -===//
//
// Part of gnnc. Small files written here, plain and gzip-compressed, with
// their graphs and datasets worked out by hand; every error with its exact
// message (file, line, problem); and the converted binary cache: used when
// up to date, rebuilt when a source is touched or edited, when it is corrupt,
// truncated or of another version, and never needed (a folder that cannot
// be written still loads). Sources get a modification time in the past, as
// the loaders write no cache of a file modified in the last two seconds.
//
//===----------------------------------------------------------------------===//

#include "gnnc/runtime/Loaders.h"

#include "RuntimeTestUtil.h"

#include "gtest/gtest.h"

#include <zlib.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace gnnc::rt;
using gnnc::rt::testing::fileExists;
using gnnc::rt::testing::readFile;
using gnnc::rt::testing::TempDir;
using gnnc::rt::testing::writeFile;

namespace {

using EdgeList = std::vector<std::pair<int64_t, int64_t>>;

EdgeList edgesOf(const Graph &g) {
  EdgeList out;
  for (int64_t e = 0; e < g.numEdges(); ++e)
    out.emplace_back(g.edgeSrc()[e], g.edgeDst()[e]);
  return out;
}

/// Writes `text` gzip-compressed.
void writeGzip(const std::string &path, const std::string &text) {
  std::error_code ec;
  std::filesystem::remove(path, ec);
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr) << path;
  ASSERT_EQ(gzwrite(f, text.data(), static_cast<unsigned>(text.size())),
            static_cast<int>(text.size()));
  ASSERT_EQ(gzclose(f), Z_OK);
}

/// Sets the modification time of `path` to `seconds` (+ `nanoseconds`)
/// after the epoch: far enough in the past for the cache to be written.
void setMtime(const std::string &path, int64_t seconds,
              int64_t nanoseconds = 0) {
  struct timespec times[2];
  times[0].tv_sec = static_cast<time_t>(seconds);
  times[0].tv_nsec = static_cast<long>(nanoseconds);
  times[1] = times[0];
  ASSERT_EQ(::utimensat(AT_FDCWD, path.c_str(), times, 0), 0) << path;
}

constexpr int64_t kPast = 1'600'000'000;

/// Writes `text` (gzip-compressed when `gzip`) with an old mtime.
void writeSource(const std::string &path, const std::string &text,
                 bool gzip = false) {
  if (gzip)
    writeGzip(path, text);
  else
    writeFile(path, text);
  setMtime(path, kPast);
}

CacheOptions noCache() {
  CacheOptions c;
  c.Read = false;
  c.Write = false;
  return c;
}

LoadedGraph loadSnap(const std::string &path, SnapOptions o = {}) {
  o.Cache = noCache();
  LoadedGraph g;
  Status s = loadSnapEdgeList(path, g, o);
  EXPECT_TRUE(s.ok()) << s.message();
  return g;
}

std::string snapError(const std::string &path, SnapOptions o = {}) {
  o.Cache = noCache();
  LoadedGraph g;
  Status s = loadSnapEdgeList(path, g, o);
  EXPECT_FALSE(s.ok());
  return s.message();
}

LoadedGraph loadMm(const std::string &path, MatrixMarketOptions o = {}) {
  o.Cache = noCache();
  LoadedGraph g;
  Status s = loadMatrixMarket(path, g, o);
  EXPECT_TRUE(s.ok()) << s.message();
  return g;
}

std::string mmError(const std::string &path, MatrixMarketOptions o = {}) {
  o.Cache = noCache();
  LoadedGraph g;
  Status s = loadMatrixMarket(path, g, o);
  EXPECT_FALSE(s.ok());
  return s.message();
}

//===----------------------------------------------------------------------===//
// SNAP
//===----------------------------------------------------------------------===//

TEST(LoadersSnap, TabsSpacesCommentsAndBlankLines) {
  TempDir td;
  std::string path = td.path("g.txt");
  writeFile(path, "# Directed graph: g.txt\n"
                  "# FromNodeId\tToNodeId\n"
                  "0\t1\n"
                  "\n"
                  "  1   2  \n"
                  "% another comment\n"
                  "4 0\r\n"
                  "   # indented comment\n"
                  "2\t \t2");
  LoadedGraph g = loadSnap(path);
  EXPECT_EQ(g.G.numSrc(), 5);
  EXPECT_EQ(g.G.numDst(), 5);
  EXPECT_EQ(edgesOf(g.G), (EdgeList{{0, 1}, {1, 2}, {4, 0}, {2, 2}}));
  EXPECT_TRUE(g.Weights.empty());
  EXPECT_TRUE(g.OriginalIds.empty());
  EXPECT_EQ(g.G.inDegree(2), 2);
  EXPECT_EQ(g.G.outDegree(3), 0);
}

TEST(LoadersSnap, GivenVertexCount) {
  TempDir td;
  std::string path = td.path("g.txt");
  writeFile(path, "0 1\n1 2\n");
  SnapOptions o;
  o.NumVertices = 6;
  LoadedGraph g = loadSnap(path, o);
  EXPECT_EQ(g.G.numSrc(), 6);
  EXPECT_EQ(g.G.numEdges(), 2);
  o.NumVertices = 2;
  EXPECT_EQ(snapError(path, o),
            path + ":2: vertex id 2 is outside [0, 2) (the given vertex "
                   "count)");
}

TEST(LoadersSnap, RelabelInOrderOfFirstAppearance) {
  TempDir td;
  std::string path = td.path("g.txt");
  writeFile(path, "# sparse ids\n1000000007 5\n5 42\n42 1000000007\n5 5\n");
  SnapOptions o;
  o.Relabel = true;
  LoadedGraph g = loadSnap(path, o);
  EXPECT_EQ(g.G.numSrc(), 3);
  EXPECT_EQ(edgesOf(g.G), (EdgeList{{0, 1}, {1, 2}, {2, 0}, {1, 1}}));
  EXPECT_EQ(g.OriginalIds, (std::vector<int64_t>{1000000007, 5, 42}));

  // A larger given count adds isolated vertices without an id.
  o.NumVertices = 5;
  g = loadSnap(path, o);
  EXPECT_EQ(g.G.numSrc(), 5);
  EXPECT_EQ(g.OriginalIds, (std::vector<int64_t>{1000000007, 5, 42, -1, -1}));

  o.NumVertices = 2;
  EXPECT_EQ(snapError(path, o),
            path + ":3: more than 2 distinct vertex ids (the given vertex "
                   "count)");
}

TEST(LoadersSnap, AddReverseEdges) {
  TempDir td;
  std::string path = td.path("g.txt");
  writeFile(path, "0 1\n2 2\n1 2\n");
  SnapOptions o;
  o.AddReverseEdges = true;
  LoadedGraph g = loadSnap(path, o);
  EXPECT_EQ(edgesOf(g.G), (EdgeList{{0, 1}, {1, 0}, {2, 2}, {1, 2}, {2, 1}}));
}

TEST(LoadersSnap, CommentsOnlyIsAGraphWithoutEdges) {
  TempDir td;
  std::string path = td.path("g.txt");
  writeFile(path, "# nothing here\n\n");
  LoadedGraph g = loadSnap(path);
  EXPECT_EQ(g.G.numSrc(), 0);
  EXPECT_EQ(g.G.numEdges(), 0);
}

TEST(LoadersSnap, Gzip) {
  TempDir td;
  std::string text = "# c\n0 1\n1 2\n2 0\n";
  writeFile(td.path("g.txt"), text);
  writeGzip(td.path("g.txt.gz"), text);
  // Recognised by its content, whatever its name.
  writeGzip(td.path("g.edges"), text);
  EdgeList want = {{0, 1}, {1, 2}, {2, 0}};
  EXPECT_EQ(edgesOf(loadSnap(td.path("g.txt")).G), want);
  EXPECT_EQ(edgesOf(loadSnap(td.path("g.txt.gz")).G), want);
  EXPECT_EQ(edgesOf(loadSnap(td.path("g.edges")).G), want);
}

TEST(LoadersSnap, Errors) {
  TempDir td;
  std::string path = td.path("g.txt");
  auto check = [&](const std::string &text, const std::string &message,
                   SnapOptions o = {}) {
    writeFile(path, text);
    EXPECT_EQ(snapError(path, o), path + message) << text;
  };
  check("", ": empty file");
  check("0 1\n2\n", ":2: expected two vertex ids separated by spaces or "
                    "tabs, found one field");
  check("# c\n0 1 7\n", ":2: expected two vertex ids, found a third field "
                        "'7'");
  check("0 1\n1 x2\n", ":2: 'x2' is not a vertex id (expected a "
                       "non-negative integer)");
  check("0 1.5\n", ":1: '1.5' is not a vertex id (expected a non-negative "
                   "integer)");
  check("0 1\n\n3 -4\n", ":3: negative vertex id -4");
  check("9223372036854775808 0\n",
        ":1: vertex id '9223372036854775808' overflows int64");
  check("0 99999999999999999999999\n",
        ":1: vertex id '99999999999999999999999' overflows int64");
  check("0 2147483647\n",
        ":1: vertex id 2147483647 is too large: a graph here has at most "
        "2147483647 vertices (use Relabel for sparse ids)");
  SnapOptions small;
  small.MaxVertices = 10;
  check("0 1\n3 10\n",
        ":2: vertex id 10 is too large: a graph here has at most 10 "
        "vertices (use Relabel for sparse ids)",
        small);
  small.Relabel = true;
  check("0 1\n3 10\n5 6\n7 8\n9 11\n11 12\n",
        ":6: more than 10 distinct vertex ids (a graph here has at most 10 "
        "vertices)",
        small);
  EXPECT_EQ(snapError(td.path("missing.txt")),
            td.path("missing.txt") +
                ": cannot open file: no such file or directory");
  EXPECT_EQ(snapError(td.dir()), td.dir() + ": not a regular file");
}

TEST(LoadersSnap, OutputUntouchedOnError) {
  TempDir td;
  std::string good = td.path("good.txt"), bad = td.path("bad.txt");
  writeFile(good, "0 1\n");
  writeFile(bad, "0 1\n1 -1\n");
  LoadedGraph g = loadSnap(good);
  SnapOptions o;
  o.Cache = noCache();
  EXPECT_FALSE(loadSnapEdgeList(bad, g, o).ok());
  EXPECT_EQ(edgesOf(g.G), (EdgeList{{0, 1}}));
}

//===----------------------------------------------------------------------===//
// gzip
//===----------------------------------------------------------------------===//

TEST(LoadersGzip, TruncatedAndCorrupt) {
  TempDir td;
  std::string text;
  for (int i = 0; i < 2000; ++i)
    text += std::to_string(i) + " " + std::to_string((i * 7) % 2000) + "\n";
  std::string full = td.path("full.gz");
  writeGzip(full, text);
  std::string bytes = readFile(full);
  ASSERT_GT(bytes.size(), 100u);

  std::string cut = td.path("cut.txt.gz");
  writeFile(cut, bytes.substr(0, bytes.size() / 2));
  EXPECT_EQ(snapError(cut),
            cut + ": unexpected end of compressed data (the file is "
                  "truncated)");
  // Only the 8-byte trailer (CRC and size) missing.
  writeFile(cut, bytes.substr(0, bytes.size() - 8));
  EXPECT_EQ(snapError(cut),
            cut + ": unexpected end of compressed data (the file is "
                  "truncated)");
  // The magic bytes alone.
  writeFile(cut, bytes.substr(0, 2));
  EXPECT_EQ(snapError(cut),
            cut + ": unexpected end of compressed data (the file is "
                  "truncated)");

  std::string bad = td.path("bad.gz");
  std::string flipped = bytes;
  flipped[flipped.size() - 6] ^= 0x5a; // the CRC
  writeFile(bad, flipped);
  EXPECT_EQ(snapError(bad),
            bad + ": corrupt compressed data (incorrect data check)");

  // An empty file after decompression.
  std::string empty = td.path("empty.gz");
  writeGzip(empty, "");
  EXPECT_EQ(snapError(empty), empty + ": empty file");
}

TEST(LoadersGzip, LongLinesAndManyBuffers) {
  TempDir td;
  // More than one read buffer of input, and a line longer than a buffer
  // (a comment): lines that straddle buffers are joined.
  std::string text = "# " + std::string(2 << 20, 'x') + "\n";
  for (int i = 0; i < 120000; ++i)
    text += std::to_string(i) + "\t" + std::to_string(i + 1) + "\n";
  std::string plain = td.path("g.txt"), gz = td.path("g.txt.gz");
  writeFile(plain, text);
  writeGzip(gz, text);
  for (const std::string &path : {plain, gz}) {
    LoadedGraph g = loadSnap(path);
    ASSERT_EQ(g.G.numEdges(), 120000) << path;
    EXPECT_EQ(g.G.numSrc(), 120001);
    EXPECT_EQ(g.G.edgeSrc()[65432], 65432);
    EXPECT_EQ(g.G.edgeDst()[119999], 120000);
  }
}

//===----------------------------------------------------------------------===//
// Matrix Market
//===----------------------------------------------------------------------===//

TEST(LoadersMatrixMarket, PatternGeneralRectangular) {
  TempDir td;
  std::string path = td.path("m.mtx");
  writeFile(path, "%%MatrixMarket matrix coordinate pattern general\n"
                  "% a comment\n"
                  "%\n"
                  "2 3 3\n"
                  "1 3\n"
                  "2 1\n"
                  "\n"
                  "2 2\n");
  LoadedGraph g = loadMm(path);
  EXPECT_EQ(g.G.numSrc(), 2);
  EXPECT_EQ(g.G.numDst(), 3);
  EXPECT_EQ(edgesOf(g.G), (EdgeList{{0, 2}, {1, 0}, {1, 1}}));
  EXPECT_TRUE(g.Weights.empty());
}

TEST(LoadersMatrixMarket, RealSymmetricDiagonalOnce) {
  TempDir td;
  std::string path = td.path("m.mtx");
  writeFile(path, "%%MatrixMarket matrix coordinate real symmetric\r\n"
                  "3 3 4\r\n"
                  "1 1 0.5\r\n"
                  "2 1 -2e0\r\n"
                  "3 2 1.25e-1\r\n"
                  "3 3 4\r\n");
  LoadedGraph g = loadMm(path);
  EXPECT_EQ(g.G.numSrc(), 3);
  EXPECT_EQ(edgesOf(g.G),
            (EdgeList{{0, 0}, {1, 0}, {0, 1}, {2, 1}, {1, 2}, {2, 2}}));
  EXPECT_EQ(g.Weights, (std::vector<float>{0.5f, -2, -2, 0.125f, 0.125f, 4}));
}

TEST(LoadersMatrixMarket, IntegerGeneralAndHeaderCase) {
  TempDir td;
  std::string path = td.path("m.mtx");
  writeFile(path, "%%MatrixMarket Matrix Coordinate INTEGER General\n"
                  "2 2 3\n"
                  "1 2 7\n"
                  "2 1 -3\n"
                  "2 2 16777217\n");
  LoadedGraph g = loadMm(path);
  EXPECT_EQ(edgesOf(g.G), (EdgeList{{0, 1}, {1, 0}, {1, 1}}));
  // Rounded to float32.
  EXPECT_EQ(g.Weights, (std::vector<float>{7, -3, 16777216}));
}

TEST(LoadersMatrixMarket, PatternSymmetricAndEmptyMatrix) {
  TempDir td;
  std::string path = td.path("m.mtx");
  writeFile(path, "%%MatrixMarket matrix coordinate pattern symmetric\n"
                  "3 3 2\n2 1\n3 3\n");
  EXPECT_EQ(edgesOf(loadMm(path).G), (EdgeList{{1, 0}, {0, 1}, {2, 2}}));
  writeFile(path, "%%MatrixMarket matrix coordinate real general\n4 4 0\n");
  LoadedGraph g = loadMm(path);
  EXPECT_EQ(g.G.numSrc(), 4);
  EXPECT_EQ(g.G.numEdges(), 0);
}

TEST(LoadersMatrixMarket, NonFiniteValues) {
  TempDir td;
  std::string path = td.path("m.mtx");
  writeFile(path, "%%MatrixMarket matrix coordinate real general\n"
                  "2 2 2\n1 1 nan\n2 2 -inf\n");
  EXPECT_EQ(mmError(path), path + ":3: value 'nan' is not finite "
                                  "(non-finite values are rejected)");
  MatrixMarketOptions o;
  o.AllowNonFinite = true;
  LoadedGraph g = loadMm(path, o);
  ASSERT_EQ(g.Weights.size(), 2u);
  EXPECT_TRUE(std::isnan(g.Weights[0]));
  EXPECT_EQ(g.Weights[1], -INFINITY);
}

TEST(LoadersMatrixMarket, Errors) {
  TempDir td;
  std::string path = td.path("graph.mtx");
  const std::string realHeader =
      "%%MatrixMarket matrix coordinate real general\n";
  const std::string patternHeader =
      "%%MatrixMarket matrix coordinate pattern general\n";
  auto check = [&](const std::string &text, const std::string &message,
                   MatrixMarketOptions o = {}) {
    writeFile(path, text);
    EXPECT_EQ(mmError(path, o), path + message) << text;
  };
  check("", ": empty file");
  check("1 2 3\n", ":1: not a Matrix Market file (the first line must "
                   "start with '%%MatrixMarket')");
  check("%%MatrixMarket matrix coordinate real\n",
        ":1: malformed header: expected '%%MatrixMarket matrix coordinate "
        "<field> <symmetry>'");
  check("%%MatrixMarket vector coordinate real general\n",
        ":1: unsupported object 'vector' (only 'matrix' is read)");
  check("%%MatrixMarket matrix array real general\n",
        ":1: unsupported format 'array' (only sparse 'coordinate' matrices "
        "are read)");
  check("%%MatrixMarket matrix coordinate complex general\n",
        ":1: unsupported field 'complex' (expected 'pattern', 'real' or "
        "'integer')");
  check("%%MatrixMarket matrix coordinate real hermitian\n",
        ":1: unsupported symmetry 'hermitian' (expected 'general' or "
        "'symmetric')");
  check(realHeader + "% only comments\n",
        ":2: the file ends before the size line");
  check(realHeader + "3 3\n",
        ":2: malformed size line: expected 'rows columns entries'");
  check(realHeader + "3 x 1\n",
        ":2: malformed size line: 'x' is not a count (expected 'rows "
        "columns entries')");
  check(realHeader + "3 -3 1\n", ":2: negative column count -3");
  check(realHeader + "3 3 99999999999999999999\n",
        ":2: entry count '99999999999999999999' overflows int64");
  check("%%MatrixMarket matrix coordinate real symmetric\n3 4 1\n",
        ":2: a symmetric matrix must be square, but the size line says 3 x "
        "4");
  MatrixMarketOptions small;
  small.MaxVertices = 100;
  check(realHeader + "101 5 1\n",
        ":2: a 101 x 5 matrix: a graph here has at most 100 vertices on "
        "each side",
        small);
  check(realHeader + "% c\n5 4 3\n1 1 1\n2 2 2\n% c\n0 3 1\n",
        ":7: row index 0 is outside [1, 5]");
  check(realHeader + "5 4 3\n1 1 1\n6 2 2\n", ":4: row index 6 is outside "
                                              "[1, 5]");
  check(realHeader + "5 4 3\n1 -1 1\n",
        ":3: column index -1 is outside [1, 4]");
  check(realHeader + "5 4 3\n1 5 1\n", ":3: column index 5 is outside [1, "
                                       "4]");
  check(realHeader + "5 4 1\n1 x 1\n",
        ":3: malformed entry: column index 'x' is not an integer");
  check(realHeader + "5 4 1\n1 99999999999999999999 1\n",
        ":3: column index '99999999999999999999' overflows int64");
  check(realHeader + "5 4 2\n1 1 1\n2 2 2\n3 3 3\n",
        ":5: more entries than the 2 the size line (line 2) announces");
  check(realHeader + "% c\n5 4 3\n1 1 1\n2 2 2\n",
        ":5: the file ends after 2 of the 3 entries the size line (line 3) "
        "announces");
  check(realHeader + "5 4 3\n1 1\n",
        ":3: malformed entry: expected 'row column value' (3 fields), found "
        "2 fields");
  check(patternHeader + "5 4 3\n1 1 1.0\n",
        ":3: malformed entry: expected 'row column' (2 fields), found 3 "
        "fields");
  check(realHeader + "5 4 3\n1 1 1 1 1\n",
        ":3: malformed entry: expected 'row column value' (3 fields), found "
        "4 or more fields");
  check(realHeader + "5 4 1\n1 1 abc\n", ":3: value 'abc' is not a number");
  check(realHeader + "5 4 1\n1 1 1e39\n",
        ":3: value '1e39' is too large for float32");
  check("%%MatrixMarket matrix coordinate integer general\n5 4 1\n1 1 1.5\n",
        ":3: value '1.5' is not an integer (the matrix is 'integer')");
}

TEST(LoadersMatrixMarket, TinyValuesBecomeZero) {
  TempDir td;
  std::string path = td.path("m.mtx");
  writeFile(path, "%%MatrixMarket matrix coordinate real general\n"
                  "1 1 1\n1 1 1e-50\n");
  EXPECT_EQ(loadMm(path).Weights, (std::vector<float>{0.0f}));
}

//===----------------------------------------------------------------------===//
// OGB
//===----------------------------------------------------------------------===//

/// The files of a small OGB dataset folder: 4 nodes, 3 edges, 2 features,
/// labels 2 0 1 2, split "time": train {0, 1}, valid {2}, test {3}.
struct OgbFixture {
  std::string NumNodes = "4\n", NumEdges = "3\n";
  std::string Edge = "0,1\n1,2\n3,0\n";
  std::string Feat = "0.5,-1\n1e-3,2\n3,4.25\n-0.0,7\n";
  std::string Label = "2\n0\n1\n2\n";
  std::string Train = "0\n1\n", Valid = "2\n", Test = "3\n";
  std::string Split = "time";
  bool WithFeatures = true;

  /// Writes the folder under `root`, gzip-compressed when `gzip`.
  void write(const std::string &root, bool gzip) const {
    std::string ext = gzip ? ".csv.gz" : ".csv";
    std::filesystem::create_directories(root + "/raw");
    std::filesystem::create_directories(root + "/split/" + Split);
    writeSource(root + "/raw/num-node-list" + ext, NumNodes, gzip);
    writeSource(root + "/raw/num-edge-list" + ext, NumEdges, gzip);
    writeSource(root + "/raw/edge" + ext, Edge, gzip);
    if (WithFeatures)
      writeSource(root + "/raw/node-feat" + ext, Feat, gzip);
    writeSource(root + "/raw/node-label" + ext, Label, gzip);
    std::string split = root + "/split/" + Split + "/";
    writeSource(split + "train" + ext, Train, gzip);
    writeSource(split + "valid" + ext, Valid, gzip);
    writeSource(split + "test" + ext, Test, gzip);
  }
};

Dataset loadOgb(const std::string &root, OgbOptions o = {}) {
  o.Cache = noCache();
  Dataset ds;
  Status s = loadOgbNodeDataset(root, ds, o);
  EXPECT_TRUE(s.ok()) << s.message();
  return ds;
}

std::string ogbError(const std::string &root, OgbOptions o = {}) {
  o.Cache = noCache();
  Dataset ds;
  Status s = loadOgbNodeDataset(root, ds, o);
  EXPECT_FALSE(s.ok());
  return s.message();
}

void expectSmallDataset(const Dataset &ds) {
  EXPECT_EQ(ds.NumNodes, 4);
  EXPECT_EQ(ds.NumFeatures, 2);
  EXPECT_EQ(ds.NumClasses, 3);
  EXPECT_EQ(ds.EdgeSrc, (std::vector<int64_t>{0, 1, 3}));
  EXPECT_EQ(ds.EdgeDst, (std::vector<int64_t>{1, 2, 0}));
  EXPECT_EQ(ds.X, (std::vector<float>{0.5f, -1, 1e-3f, 2, 3, 4.25f, -0.0f, 7}));
  EXPECT_EQ(ds.Y, (std::vector<int64_t>{2, 0, 1, 2}));
  EXPECT_EQ(ds.TrainMask, (std::vector<uint8_t>{1, 1, 0, 0}));
  EXPECT_EQ(ds.ValMask, (std::vector<uint8_t>{0, 0, 1, 0}));
  EXPECT_EQ(ds.TestMask, (std::vector<uint8_t>{0, 0, 0, 1}));
}

TEST(LoadersOgb, PlainFiles) {
  TempDir td;
  OgbFixture().write(td.dir(), false);
  expectSmallDataset(loadOgb(td.dir()));
}

TEST(LoadersOgb, GzipFilesAndGzipPreferred) {
  TempDir td;
  OgbFixture().write(td.dir(), true);
  expectSmallDataset(loadOgb(td.dir()));
  // With both, the .csv.gz is read: a broken .csv beside it is ignored.
  writeFile(td.path("raw/edge.csv"), "not,an,edge\n");
  expectSmallDataset(loadOgb(td.dir()));
  // A mix of plain and compressed files.
  std::filesystem::remove(td.path("raw/node-feat.csv.gz"));
  writeFile(td.path("raw/node-feat.csv"), OgbFixture().Feat);
  expectSmallDataset(loadOgb(td.dir()));
}

TEST(LoadersOgb, InverseEdgesNoFeaturesAndFloatLabels) {
  TempDir td;
  OgbFixture f;
  f.WithFeatures = false;
  f.Label = "2.0\n0\n1.0\n2\n";
  f.write(td.dir(), false);
  OgbOptions o;
  o.AddInverseEdges = true;
  Dataset ds = loadOgb(td.dir(), o);
  EXPECT_EQ(ds.NumFeatures, 0);
  EXPECT_TRUE(ds.X.empty());
  EXPECT_EQ(ds.Y, (std::vector<int64_t>{2, 0, 1, 2}));
  EXPECT_EQ(ds.EdgeSrc, (std::vector<int64_t>{0, 1, 1, 2, 3, 0}));
  EXPECT_EQ(ds.EdgeDst, (std::vector<int64_t>{1, 0, 2, 1, 0, 3}));
}

TEST(LoadersOgb, UnlabeledNodes) {
  TempDir td;
  OgbFixture f;
  f.Label = "2\n\nNaN\n1\n";
  f.Train = "0\n";
  f.Valid = "";
  f.write(td.dir(), false);
  std::string labels = td.path("raw/node-label.csv");
  EXPECT_EQ(ogbError(td.dir()),
            labels + ":2: node 1 has no label (an empty or NaN line; set "
                     "OgbOptions::AllowUnlabeled to accept unlabeled nodes)");
  OgbOptions o;
  o.AllowUnlabeled = true;
  Dataset ds = loadOgb(td.dir(), o);
  EXPECT_EQ(ds.Y, (std::vector<int64_t>{2, -1, -1, 1}));
  EXPECT_EQ(ds.NumClasses, 3);
  EXPECT_EQ(ds.TrainMask, (std::vector<uint8_t>{1, 0, 0, 0}));
  EXPECT_EQ(ds.ValMask, (std::vector<uint8_t>{0, 0, 0, 0}));

  // An unlabeled node in a split.
  writeSource(td.path("split/time/valid.csv"), "2\n");
  EXPECT_EQ(ogbError(td.dir(), o),
            td.path("split/time/valid.csv") +
                ":1: node 2 is unlabeled (raw/node-label.csv line 3)");
}

TEST(LoadersOgb, ChoosingTheSplit) {
  TempDir td;
  OgbFixture().write(td.dir(), false);
  OgbFixture other;
  other.Split = "random";
  other.Train = "3\n";
  other.write(td.dir(), false);
  EXPECT_EQ(ogbError(td.dir()),
            td.path("split") + ": several splits (random, time): choose one "
                               "with OgbOptions::Split");
  OgbOptions o;
  o.Split = "random";
  EXPECT_EQ(loadOgb(td.dir(), o).TrainMask, (std::vector<uint8_t>{0, 0, 0, 1}));
  o.Split = "time";
  expectSmallDataset(loadOgb(td.dir(), o));
  o.Split = "scaffold";
  EXPECT_EQ(ogbError(td.dir(), o),
            td.path("split") + ": no split 'scaffold' (the splits here: "
                               "random, time)");
  std::filesystem::remove_all(td.path("split"));
  EXPECT_EQ(ogbError(td.dir()),
            td.path("split") + ": cannot open the split folder: no such file "
                               "or directory");
}

TEST(LoadersOgb, MissingFiles) {
  TempDir td;
  OgbFixture().write(td.dir(), false);
  std::filesystem::remove(td.path("raw/edge.csv"));
  EXPECT_EQ(ogbError(td.dir()),
            td.path("raw") + ": neither edge.csv.gz nor edge.csv exists");
  EXPECT_EQ(ogbError(td.path("nowhere")),
            td.path("nowhere") + ": cannot open: no such file or directory");
  writeFile(td.path("file"), "x");
  EXPECT_EQ(ogbError(td.path("file")),
            td.path("file") + ": not a directory (expected an OGB dataset "
                              "folder with raw/ and split/)");
}

TEST(LoadersOgb, Errors) {
  struct Case {
    const char *File; // relative to the root
    std::string OgbFixture::*Member;
    std::string Text;
    std::string Message; // after the file's path
  };
  const std::vector<Case> cases = {
      {"raw/num-node-list.csv", &OgbFixture::NumNodes, "", ": empty file"},
      {"raw/num-node-list.csv", &OgbFixture::NumNodes, "4\n5\n",
       ":2: a second node count: only datasets of a single graph are read"},
      {"raw/num-node-list.csv", &OgbFixture::NumNodes, "four\n",
       ":1: 'four' is not a node count"},
      {"raw/num-node-list.csv", &OgbFixture::NumNodes, "-4\n",
       ":1: negative node count -4"},
      {"raw/num-edge-list.csv", &OgbFixture::NumEdges,
       "\n18446744073709551616\n",
       ":2: edge count '18446744073709551616' overflows int64"},
      {"raw/num-edge-list.csv", &OgbFixture::NumEdges, "\n\n",
       ": no edge count in it"},
      {"raw/edge.csv", &OgbFixture::Edge, "0,1\n1,2\n3,0\n2,3\n",
       ":4: more edges than the 3 that raw/num-edge-list.csv announces"},
      {"raw/edge.csv", &OgbFixture::Edge, "0,1\n1,2\n",
       ":2: the file ends after 2 edges, but raw/num-edge-list.csv says 3"},
      {"raw/edge.csv", &OgbFixture::Edge, "",
       ": empty file, but raw/num-edge-list.csv says 3 edges"},
      {"raw/edge.csv", &OgbFixture::Edge, "0,1\n1,4\n3,0\n",
       ":2: node 4 is outside [0, 4) (raw/num-node-list.csv says 4 nodes)"},
      {"raw/edge.csv", &OgbFixture::Edge, "0,1\n-1,2\n3,0\n",
       ":2: negative node id -1"},
      {"raw/edge.csv", &OgbFixture::Edge, "0,1\n1,2\n3,99999999999999999999\n",
       ":3: node id '99999999999999999999' overflows int64"},
      {"raw/edge.csv", &OgbFixture::Edge, "0,1\n1\n3,0\n",
       ":2: expected 'source,destination', found one field"},
      {"raw/edge.csv", &OgbFixture::Edge, "0,1\n1,2,3\n3,0\n",
       ":2: expected 'source,destination', found more than two fields"},
      {"raw/edge.csv", &OgbFixture::Edge, "0,1\n1,two\n3,0\n",
       ":2: 'two' is not a node id (expected a non-negative integer)"},
      {"raw/node-label.csv", &OgbFixture::Label, "2\n0\n1\n",
       ":3: the file ends after 3 labels, but raw/num-node-list.csv says 4"},
      {"raw/node-label.csv", &OgbFixture::Label, "2\n0\n1\n2\n0\n",
       ":5: more labels than the 4 nodes that raw/num-node-list.csv "
       "announces"},
      {"raw/node-label.csv", &OgbFixture::Label, "2\n0,1\n1\n2\n",
       ":2: expected one label, found 2 values (multi-label datasets are not "
       "read)"},
      {"raw/node-label.csv", &OgbFixture::Label, "2\n0\n-1\n2\n",
       ":3: negative label -1"},
      {"raw/node-label.csv", &OgbFixture::Label, "2\n0\n1.5\n2\n",
       ":3: label '1.5' is not an integer"},
      {"raw/node-feat.csv", &OgbFixture::Feat, "0.5,-1\n1e-3,2,3\n3,4\n0,7\n",
       ":2: expected 2 values (as on line 1), found more"},
      {"raw/node-feat.csv", &OgbFixture::Feat, "0.5,-1\n1e-3,2\n3\n0,7\n",
       ":3: expected 2 values (as on line 1), found 1"},
      {"raw/node-feat.csv", &OgbFixture::Feat, "0.5,-1\n1e-3,2\n3,4\n",
       ":3: the file ends after 3 feature rows, but raw/num-node-list.csv "
       "says 4"},
      {"raw/node-feat.csv", &OgbFixture::Feat, "",
       ": empty file, but raw/num-node-list.csv says 4 feature rows"},
      {"raw/node-feat.csv", &OgbFixture::Feat,
       "0.5,-1\n1e-3,2\n3,4\n0,7\n1,1\n",
       ":5: more feature rows than the 4 nodes that raw/num-node-list.csv "
       "announces"},
      {"raw/node-feat.csv", &OgbFixture::Feat, "0.5,-1\n1e-3,nan\n3,4\n0,7\n",
       ":2: column 2 is nan (non-finite values are rejected)"},
      {"raw/node-feat.csv", &OgbFixture::Feat, "0.5,-1\n1e-3,2\n-inf,4\n0,7\n",
       ":3: column 1 is -inf (non-finite values are rejected)"},
      {"raw/node-feat.csv", &OgbFixture::Feat, "0.5,-1\n1e-3,2\n3,x\n0,7\n",
       ":3: column 2: 'x' is not a number"},
      {"raw/node-feat.csv", &OgbFixture::Feat, "0.5,-1\n1e-3,2\n3,\n0,7\n",
       ":3: column 2: '' is not a number"},
      {"raw/node-feat.csv", &OgbFixture::Feat, "0.5,-1\n1e-3,2\n3,1e40\n0,7\n",
       ":3: column 2: '1e40' is too large for float32"},
      {"raw/node-feat.csv", &OgbFixture::Feat, "0.5,-1\n\n3,4\n0,7\n",
       ":2: empty line (expected 2 comma-separated feature values)"},
      {"split/time/train.csv", &OgbFixture::Train, "0\n4\n",
       ":2: node 4 is outside [0, 4) (raw/num-node-list.csv says 4 nodes)"},
      {"split/time/test.csv", &OgbFixture::Test, "3\n-2\n",
       ":2: negative node id -2"},
  };
  for (const Case &c : cases) {
    TempDir td;
    OgbFixture f;
    f.*c.Member = c.Text;
    f.write(td.dir(), false);
    EXPECT_EQ(ogbError(td.dir()), td.path(c.File) + c.Message)
        << c.File << ": " << c.Text;
  }
}

TEST(LoadersOgb, NonFiniteFeaturesAllowed) {
  TempDir td;
  OgbFixture f;
  f.Feat = "0.5,-1\n1e-3,nan\n3,4\ninf,7\n";
  f.write(td.dir(), false);
  OgbOptions o;
  o.AllowNonFinite = true;
  Dataset ds = loadOgb(td.dir(), o);
  EXPECT_TRUE(std::isnan(ds.X[3]));
  EXPECT_EQ(ds.X[6], INFINITY);
}

TEST(LoadersOgb, TruncatedGzipNamesTheFile) {
  TempDir td;
  OgbFixture().write(td.dir(), true);
  std::string path = td.path("raw/node-label.csv.gz");
  std::string bytes = readFile(path);
  writeFile(path, bytes.substr(0, bytes.size() - 4));
  EXPECT_EQ(ogbError(td.dir()),
            path + ": unexpected end of compressed data (the file is "
                   "truncated)");
}

//===----------------------------------------------------------------------===//
// The cache
//===----------------------------------------------------------------------===//

Status snapWithInfo(const std::string &path, LoadedGraph &g, LoadInfo &info,
                    SnapOptions o = {}) {
  return loadSnapEdgeList(path, g, o, &info);
}

TEST(LoadersCache, SecondLoadUsesTheCache) {
  TempDir td;
  std::string path = td.path("g.txt");
  writeSource(path, "0 1\n1 2\n2 0\n");
  LoadedGraph g;
  LoadInfo info;
  ASSERT_TRUE(snapWithInfo(path, g, info).ok());
  EXPECT_EQ(info.Source, LoadSource::Parsed);
  EXPECT_EQ(info.CachePath, path + ".gnnc-cache");
  EXPECT_TRUE(info.CacheWritten);
  EXPECT_EQ(info.CacheRejected, "");
  EXPECT_EQ(info.CacheNotWritten, "");
  EXPECT_TRUE(fileExists(path + ".gnnc-cache"));
  // No temporary file is left behind.
  EXPECT_EQ(td.listing(),
            (std::vector<std::string>{"g.txt", "g.txt.gnnc-cache"}));

  LoadedGraph again;
  ASSERT_TRUE(snapWithInfo(path, again, info).ok());
  EXPECT_EQ(info.Source, LoadSource::Cache);
  EXPECT_FALSE(info.CacheWritten);
  EXPECT_EQ(edgesOf(again.G), (EdgeList{{0, 1}, {1, 2}, {2, 0}}));
  EXPECT_EQ(again.G.numSrc(), 3);
  EXPECT_EQ(again.G.inPtr(), g.G.inPtr());
  EXPECT_EQ(again.G.outDst(), g.G.outDst());
}

TEST(LoadersCache, RelabelledAndWeightedGraphsRoundTrip) {
  TempDir td;
  std::string snap = td.path("g.txt");
  writeSource(snap, "100 7\n7 100\n9 9\n");
  SnapOptions o;
  o.Relabel = true;
  o.NumVertices = 4;
  LoadedGraph first, second;
  LoadInfo info;
  ASSERT_TRUE(snapWithInfo(snap, first, info, o).ok());
  ASSERT_TRUE(info.CacheWritten);
  ASSERT_TRUE(snapWithInfo(snap, second, info, o).ok());
  EXPECT_EQ(info.Source, LoadSource::Cache);
  EXPECT_EQ(second.OriginalIds, (std::vector<int64_t>{100, 7, 9, -1}));
  EXPECT_EQ(edgesOf(second.G), edgesOf(first.G));
  EXPECT_EQ(second.G.numSrc(), 4);

  std::string mm = td.path("m.mtx");
  writeSource(mm, "%%MatrixMarket matrix coordinate real symmetric\n"
                  "3 3 2\n2 1 0.25\n3 3 -8\n");
  ASSERT_TRUE(loadMatrixMarket(mm, first, {}, &info).ok());
  ASSERT_TRUE(info.CacheWritten);
  ASSERT_TRUE(loadMatrixMarket(mm, second, {}, &info).ok());
  EXPECT_EQ(info.Source, LoadSource::Cache);
  EXPECT_EQ(edgesOf(second.G), (EdgeList{{1, 0}, {0, 1}, {2, 2}}));
  EXPECT_EQ(second.Weights, (std::vector<float>{0.25f, 0.25f, -8}));
  EXPECT_TRUE(second.OriginalIds.empty());
}

TEST(LoadersCache, TouchedOrEditedSourceRebuildsIt) {
  TempDir td;
  std::string path = td.path("g.txt");
  writeSource(path, "0 1\n1 2\n");
  LoadedGraph g;
  LoadInfo info;
  ASSERT_TRUE(snapWithInfo(path, g, info).ok());
  ASSERT_TRUE(info.CacheWritten);

  // Touched: same content, another mtime (one nanosecond later).
  setMtime(path, kPast, 1);
  ASSERT_TRUE(snapWithInfo(path, g, info).ok());
  EXPECT_EQ(info.Source, LoadSource::Parsed);
  EXPECT_EQ(info.CacheRejected, "stale: g.txt has changed");
  EXPECT_TRUE(info.CacheWritten);
  ASSERT_TRUE(snapWithInfo(path, g, info).ok());
  EXPECT_EQ(info.Source, LoadSource::Cache);

  // Edited: the new content is loaded and cached.
  writeSource(path, "0 1\n1 2\n2 3\n");
  ASSERT_TRUE(snapWithInfo(path, g, info).ok());
  EXPECT_EQ(info.Source, LoadSource::Parsed);
  EXPECT_EQ(info.CacheRejected, "stale: g.txt has changed");
  EXPECT_EQ(g.G.numEdges(), 3);
  ASSERT_TRUE(snapWithInfo(path, g, info).ok());
  EXPECT_EQ(info.Source, LoadSource::Cache);
  EXPECT_EQ(g.G.numEdges(), 3);

  // Other options: parsed again, and cached for them.
  SnapOptions o;
  o.AddReverseEdges = true;
  ASSERT_TRUE(snapWithInfo(path, g, info, o).ok());
  EXPECT_EQ(info.Source, LoadSource::Parsed);
  EXPECT_EQ(info.CacheRejected, "stale: written with other options");
  EXPECT_EQ(g.G.numEdges(), 6);
}

TEST(LoadersCache, CorruptTruncatedOrOtherVersionIsRebuilt) {
  TempDir td;
  std::string path = td.path("g.txt"), cache = path + ".gnnc-cache";
  writeSource(path, "0 1\n1 2\n2 0\n");
  LoadedGraph g;
  LoadInfo info;
  ASSERT_TRUE(snapWithInfo(path, g, info).ok());
  const std::string good = readFile(cache);
  ASSERT_GT(good.size(), 60u);

  auto expectRebuilt = [&](const std::string &bytes, const std::string &why) {
    writeFile(cache, bytes);
    LoadedGraph h;
    ASSERT_TRUE(snapWithInfo(path, h, info).ok());
    EXPECT_EQ(info.Source, LoadSource::Parsed);
    EXPECT_EQ(info.CacheRejected, why);
    EXPECT_TRUE(info.CacheWritten);
    EXPECT_EQ(edgesOf(h.G), (EdgeList{{0, 1}, {1, 2}, {2, 0}}));
    EXPECT_EQ(readFile(cache), good);
  };
  // A flipped bit in the payload, then in the checksum.
  std::string bytes = good;
  bytes[bytes.size() - 12] ^= 1;
  expectRebuilt(bytes, "corrupt: checksum mismatch");
  bytes = good;
  bytes[bytes.size() - 1] ^= 0x80;
  expectRebuilt(bytes, "corrupt: checksum mismatch");
  // Truncated, by one byte and to the middle of the header.
  uint64_t headerSize, payloadSize;
  std::memcpy(&headerSize, good.data() + 16, 8);
  std::memcpy(&payloadSize, good.data() + 24, 8);
  expectRebuilt(good.substr(0, good.size() - 1),
                "corrupt: " + std::to_string(good.size() - 1) +
                    " bytes, but the header announces " +
                    std::to_string(headerSize) + " + " +
                    std::to_string(payloadSize) + " + 8");
  expectRebuilt(good.substr(0, 20), "corrupt: truncated header");
  expectRebuilt("", "corrupt: not a gnnc cache file");
  expectRebuilt("something else entirely", "corrupt: not a gnnc cache file");
  // Another format version.
  bytes = good;
  bytes[8] = 99;
  expectRebuilt(bytes, "stale: format version 99 (this library writes 1)");
}

TEST(LoadersCache, UnwritableFolderStillLoads) {
  TempDir td;
  std::string path = td.path("g.txt");
  writeSource(path, "0 1\n");
  // A directory where the cache file would go: it can be neither read nor
  // replaced.
  std::filesystem::create_directory(path + ".gnnc-cache");
  LoadedGraph g;
  LoadInfo info;
  ASSERT_TRUE(snapWithInfo(path, g, info).ok());
  EXPECT_EQ(info.Source, LoadSource::Parsed);
  EXPECT_EQ(info.CacheRejected, "not a regular file");
  EXPECT_FALSE(info.CacheWritten);
  EXPECT_NE(info.CacheNotWritten.find("cannot rename"), std::string::npos)
      << info.CacheNotWritten;
  EXPECT_EQ(edgesOf(g.G), (EdgeList{{0, 1}}));
  // The temporary file is gone.
  EXPECT_EQ(td.listing(),
            (std::vector<std::string>{"g.txt", "g.txt.gnnc-cache"}));
  std::filesystem::remove(path + ".gnnc-cache");

  // A read-only folder (root may write anyway).
  ::chmod(td.dir().c_str(), 0555);
  bool readOnly = ::access(td.dir().c_str(), W_OK) != 0;
  ASSERT_TRUE(snapWithInfo(path, g, info).ok());
  ::chmod(td.dir().c_str(), 0755);
  EXPECT_EQ(edgesOf(g.G), (EdgeList{{0, 1}}));
  if (readOnly) {
    EXPECT_FALSE(info.CacheWritten);
    EXPECT_NE(info.CacheNotWritten.find("cannot create"), std::string::npos)
        << info.CacheNotWritten;
    EXPECT_FALSE(fileExists(path + ".gnnc-cache"));
  }
}

TEST(LoadersCache, OptionsTurnItOff) {
  TempDir td;
  std::string path = td.path("g.txt"), cache = path + ".gnnc-cache";
  writeSource(path, "0 1\n");
  LoadedGraph g;
  LoadInfo info;
  SnapOptions o;
  o.Cache.Write = false;
  ASSERT_TRUE(snapWithInfo(path, g, info, o).ok());
  EXPECT_FALSE(info.CacheWritten);
  EXPECT_EQ(info.CacheNotWritten, "");
  EXPECT_FALSE(fileExists(cache));

  ASSERT_TRUE(snapWithInfo(path, g, info).ok());
  ASSERT_TRUE(info.CacheWritten);
  o = SnapOptions();
  o.Cache.Read = false;
  ASSERT_TRUE(snapWithInfo(path, g, info, o).ok());
  EXPECT_EQ(info.Source, LoadSource::Parsed);
  EXPECT_EQ(info.CacheRejected, "");

  o.Cache.Write = false;
  ASSERT_TRUE(snapWithInfo(path, g, info, o).ok());
  EXPECT_EQ(info.CachePath, "");
}

TEST(LoadersCache, RecentSourceIsNotCached) {
  TempDir td;
  std::string path = td.path("g.txt");
  writeFile(path, "0 1\n");
  LoadedGraph g;
  LoadInfo info;
  ASSERT_TRUE(snapWithInfo(path, g, info).ok());
  EXPECT_FALSE(info.CacheWritten);
  EXPECT_EQ(info.CacheNotWritten,
            "g.txt was modified less than 2 seconds ago, too recently for "
            "its timestamp to reveal a later change");
  EXPECT_FALSE(fileExists(path + ".gnnc-cache"));
}

TEST(LoadersCache, FailedLoadLeavesTheCacheAlone) {
  TempDir td;
  std::string path = td.path("g.txt");
  writeSource(path, "0 1\n");
  LoadedGraph g;
  LoadInfo info;
  ASSERT_TRUE(snapWithInfo(path, g, info).ok());
  writeSource(path, "0 1\nbad\n");
  Status s = snapWithInfo(path, g, info);
  EXPECT_EQ(s.message(),
            path + ":2: expected two vertex ids separated by spaces or tabs, "
                   "found one field");
  EXPECT_EQ(info.CacheRejected, "stale: g.txt has changed");
  EXPECT_FALSE(info.CacheWritten);
  EXPECT_EQ(edgesOf(g.G), (EdgeList{{0, 1}}));
}

TEST(LoadersCache, OgbDataset) {
  TempDir td;
  OgbFixture().write(td.dir(), true);
  std::string cache = td.path("gnnc-cache.bin");
  Dataset ds;
  LoadInfo info;
  ASSERT_TRUE(loadOgbNodeDataset(td.dir(), ds, {}, &info).ok());
  EXPECT_EQ(info.Source, LoadSource::Parsed);
  EXPECT_EQ(info.CachePath, cache);
  EXPECT_TRUE(info.CacheWritten);

  Dataset cached;
  ASSERT_TRUE(loadOgbNodeDataset(td.dir(), cached, {}, &info).ok());
  EXPECT_EQ(info.Source, LoadSource::Cache);
  expectSmallDataset(cached);

  // Touching any one file (here a split) rebuilds it.
  setMtime(td.path("split/time/valid.csv.gz"), kPast + 5);
  ASSERT_TRUE(loadOgbNodeDataset(td.dir(), cached, {}, &info).ok());
  EXPECT_EQ(info.Source, LoadSource::Parsed);
  EXPECT_EQ(info.CacheRejected, "stale: split/time/valid.csv.gz has changed");
  ASSERT_TRUE(loadOgbNodeDataset(td.dir(), cached, {}, &info).ok());
  EXPECT_EQ(info.Source, LoadSource::Cache);

  // Another file taking a source's place (a .csv removed in favour of a
  // .csv.gz or the other way round) rebuilds it.
  std::filesystem::remove(td.path("raw/node-label.csv.gz"));
  writeSource(td.path("raw/node-label.csv"), "2\n0\n1\n2\n");
  ASSERT_TRUE(loadOgbNodeDataset(td.dir(), cached, {}, &info).ok());
  EXPECT_EQ(info.Source, LoadSource::Parsed);
  EXPECT_EQ(info.CacheRejected, "stale: made from other source files");
  expectSmallDataset(cached);

  // Unlabeled nodes survive the cache.
  writeSource(td.path("raw/node-label.csv"), "2\n0\n1\nnan\n");
  writeSource(td.path("split/time/test.csv.gz"), "", true);
  OgbOptions o;
  o.AllowUnlabeled = true;
  ASSERT_TRUE(loadOgbNodeDataset(td.dir(), cached, o, &info).ok());
  EXPECT_EQ(info.Source, LoadSource::Parsed);
  ASSERT_TRUE(loadOgbNodeDataset(td.dir(), cached, o, &info).ok());
  EXPECT_EQ(info.Source, LoadSource::Cache);
  EXPECT_EQ(cached.Y, (std::vector<int64_t>{2, 0, 1, -1}));
  EXPECT_EQ(cached.TestMask, (std::vector<uint8_t>{0, 0, 0, 0}));

  // A corrupt cache is rebuilt.
  std::string bytes = readFile(cache);
  bytes[bytes.size() - 20] ^= 4; // in the payload (the test mask)
  writeFile(cache, bytes);
  ASSERT_TRUE(loadOgbNodeDataset(td.dir(), cached, o, &info).ok());
  EXPECT_EQ(info.Source, LoadSource::Parsed);
  EXPECT_EQ(info.CacheRejected, "corrupt: checksum mismatch");
  EXPECT_TRUE(info.CacheWritten);
}

} // namespace
