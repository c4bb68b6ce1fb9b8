//===- GraphTest.cpp - Unit tests for gnnc::rt::Graph ---------------------===//
//
// Part of gnnc. The expected CSR / CSC arrays of the small graphs below are
// worked out by hand; larger graphs are checked against a naive quadratic
// construction.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestUtil.h"

#include "gnnc/runtime/Graph.h"
#include "gnnc/runtime/Npy.h"

#include "gtest/gtest.h"

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace gnnc::rt;
using gnnc::rt::testing::fileExists;
using gnnc::rt::testing::TempDir;

namespace {

using Vec = std::vector<int64_t>;

Graph build(const Vec &src, const Vec &dst, int64_t numSrc, int64_t numDst) {
  EXPECT_EQ(src.size(), dst.size());
  Graph g;
  Status s =
      Graph::fromEdgeIndex(src.data(), dst.data(),
                           static_cast<int64_t>(src.size()), numSrc, numDst, g);
  EXPECT_TRUE(s.ok()) << s.message();
  return g;
}

std::string buildError(const Vec &src, const Vec &dst, int64_t numSrc,
                       int64_t numDst) {
  Graph g;
  Status s =
      Graph::fromEdgeIndex(src.data(), dst.data(),
                           static_cast<int64_t>(src.size()), numSrc, numDst, g);
  EXPECT_FALSE(s.ok());
  return s.message();
}

/// The 5-vertex directed graph of the hand-computed tests:
///   e0: 0->1  e1: 1->2  e2: 2->2 (self-loop)  e3: 0->1 (repeats e0)
///   e4: 3->1  e5: 2->0; vertex 4 is isolated.
const Vec kSrc = {0, 1, 2, 0, 3, 2};
const Vec kDst = {1, 2, 2, 1, 1, 0};

TEST(GraphTest, HandComputedDirectedGraph) {
  Graph g = build(kSrc, kDst, 5, 5);
  EXPECT_EQ(g.numSrc(), 5);
  EXPECT_EQ(g.numDst(), 5);
  EXPECT_EQ(g.numEdges(), 6);
  EXPECT_TRUE(g.isHomogeneous());
  EXPECT_EQ(g.edgeSrc(), kSrc);
  EXPECT_EQ(g.edgeDst(), kDst);

  // In-edges: v0 {e5 from 2}, v1 {e0 from 0, e3 from 0, e4 from 3},
  // v2 {e1 from 1, e2 from 2}, v3 {}, v4 {}.
  EXPECT_EQ(g.inPtr(), (Vec{0, 1, 4, 6, 6, 6}));
  EXPECT_EQ(g.inSrc(), (Vec{2, 0, 0, 3, 1, 2}));
  EXPECT_EQ(g.inEdge(), (Vec{5, 0, 3, 4, 1, 2}));

  // Out-edges: u0 {e0 to 1, e3 to 1}, u1 {e1 to 2}, u2 {e2 to 2, e5 to 0},
  // u3 {e4 to 1}, u4 {}.
  EXPECT_EQ(g.outPtr(), (Vec{0, 2, 3, 5, 6, 6}));
  EXPECT_EQ(g.outDst(), (Vec{1, 1, 2, 2, 0, 1}));
  EXPECT_EQ(g.outEdge(), (Vec{0, 3, 1, 2, 5, 4}));
}

TEST(GraphTest, Degrees) {
  Graph g = build(kSrc, kDst, 5, 5);
  int64_t in[] = {1, 3, 2, 0, 0};
  int64_t out[] = {2, 1, 2, 1, 0};
  for (int64_t v = 0; v < 5; ++v) {
    EXPECT_EQ(g.inDegree(v), in[v]) << v;
    EXPECT_EQ(g.outDegree(v), out[v]) << v;
  }
  EXPECT_EQ(g.inDegrees(), (std::vector<float>{1, 3, 2, 0, 0}));
  EXPECT_EQ(g.outDegrees(), (std::vector<float>{2, 1, 2, 1, 0}));
}

TEST(GraphTest, BipartiteBlock) {
  // 3 sources -> 2 destinations: e0 2->0, e1 0->1, e2 1->0, e3 2->1.
  Graph g = build({2, 0, 1, 2}, {0, 1, 0, 1}, 3, 2);
  EXPECT_FALSE(g.isHomogeneous());
  EXPECT_EQ(g.numSrc(), 3);
  EXPECT_EQ(g.numDst(), 2);
  EXPECT_EQ(g.inPtr(), (Vec{0, 2, 4}));
  EXPECT_EQ(g.inSrc(), (Vec{2, 1, 0, 2}));
  EXPECT_EQ(g.inEdge(), (Vec{0, 2, 1, 3}));
  EXPECT_EQ(g.outPtr(), (Vec{0, 1, 2, 4}));
  EXPECT_EQ(g.outDst(), (Vec{1, 0, 0, 1}));
  EXPECT_EQ(g.outEdge(), (Vec{1, 2, 0, 3}));
  EXPECT_EQ(g.inDegrees(), (std::vector<float>{2, 2}));
  EXPECT_EQ(g.outDegrees(), (std::vector<float>{1, 1, 2}));
  // Index 2 is a valid source but not a valid destination.
  EXPECT_EQ(buildError({0, 1}, {1, 2}, 3, 2),
            "edge 1: destination 2 is outside [0, 2)");
}

TEST(GraphTest, EmptyGraphs) {
  Graph def;
  EXPECT_EQ(def.numSrc(), 0);
  EXPECT_EQ(def.numEdges(), 0);
  EXPECT_EQ(def.inPtr(), Vec{0});
  EXPECT_EQ(def.outPtr(), Vec{0});

  Graph g;
  ASSERT_TRUE(Graph::fromEdgeIndex(nullptr, nullptr, 0, 3, 3, g).ok());
  EXPECT_EQ(g.numEdges(), 0);
  EXPECT_EQ(g.inPtr(), (Vec{0, 0, 0, 0}));
  EXPECT_EQ(g.outPtr(), (Vec{0, 0, 0, 0}));
  EXPECT_TRUE(g.inSrc().empty());
  EXPECT_EQ(g.inDegrees(), (std::vector<float>{0, 0, 0}));

  ASSERT_TRUE(Graph::fromEdgeIndex(nullptr, nullptr, 0, 0, 0, g).ok());
  EXPECT_EQ(g.inPtr(), Vec{0});
  EXPECT_TRUE(g.inDegrees().empty());
}

TEST(GraphTest, OutOfRangeIndices) {
  // 20 valid edges on 2708 vertices, then break edge 17.
  Vec src(20), dst(20);
  for (int64_t e = 0; e < 20; ++e) {
    src[e] = e * 100;
    dst[e] = 2707 - e;
  }
  Vec badSrc = src;
  badSrc[17] = 2708;
  EXPECT_EQ(buildError(badSrc, dst, 2708, 2708),
            "edge 17: source 2708 is outside [0, 2708)");
  Vec badDst = dst;
  badDst[4] = -1;
  EXPECT_EQ(buildError(src, badDst, 2708, 2708),
            "edge 4: destination -1 is outside [0, 2708)");
  // The first bad edge is named, whichever side is wrong.
  badDst[17] = 99999;
  EXPECT_EQ(buildError(badSrc, badDst, 2708, 2708),
            "edge 4: destination -1 is outside [0, 2708)");
  badSrc[2] = -5;
  EXPECT_EQ(buildError(badSrc, badDst, 2708, 2708),
            "edge 2: source -5 is outside [0, 2708)");
  // Every index is out of range on zero vertices.
  EXPECT_EQ(buildError({0}, {0}, 0, 0), "edge 0: source 0 is outside [0, 0)");
}

TEST(GraphTest, InvalidCounts) {
  Graph g;
  int64_t e[] = {0};
  Status s = Graph::fromEdgeIndex(e, e, 1, -1, 1, g);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(),
            "graph: negative vertex count (-1 sources, 1 destinations)");
  s = Graph::fromEdgeIndex(e, e, -3, 1, 1, g);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "graph: negative edge count -3");
  s = Graph::fromEdgeIndex(nullptr, e, 1, 1, 1, g);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "graph: null edge array for 1 edges");
}

TEST(GraphTest, OutputUntouchedOnError) {
  Graph g = build(kSrc, kDst, 5, 5);
  Vec bad = {0, 9};
  Status s = Graph::fromEdgeIndex(bad.data(), bad.data(), 2, 5, 5, g);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(g.numEdges(), 6);
  EXPECT_EQ(g.inEdge(), (Vec{5, 0, 3, 4, 1, 2}));
}

TEST(GraphTest, EdgeOrderIsStable) {
  // Six edges into vertex 0 and three out of vertex 1, neighbours in
  // scrambled order: rows must list them by edge id, not by neighbour.
  Vec src = {4, 1, 3, 1, 0, 2, 1, 4};
  Vec dst = {0, 2, 0, 0, 0, 0, 3, 0};
  Graph g = build(src, dst, 5, 5);
  EXPECT_EQ(g.inPtr(), (Vec{0, 6, 6, 7, 8, 8}));
  EXPECT_EQ(g.inEdge(), (Vec{0, 2, 3, 4, 5, 7, 1, 6}));
  EXPECT_EQ(g.inSrc(), (Vec{4, 3, 1, 0, 2, 4, 1, 1}));
  EXPECT_EQ(g.outPtr(), (Vec{0, 1, 4, 5, 6, 8}));
  EXPECT_EQ(g.outEdge(), (Vec{4, 1, 3, 6, 5, 2, 0, 7}));
  EXPECT_EQ(g.outDst(), (Vec{0, 2, 0, 3, 0, 0, 0, 0}));
}

TEST(GraphTest, MatchesNaiveConstruction) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 20; ++trial) {
    int64_t numSrc = 1 + static_cast<int64_t>(rng() % 30);
    int64_t numDst = trial % 2 ? numSrc : 1 + static_cast<int64_t>(rng() % 30);
    int64_t numEdges = static_cast<int64_t>(rng() % 200);
    Vec src(numEdges), dst(numEdges);
    for (int64_t e = 0; e < numEdges; ++e) {
      src[e] = static_cast<int64_t>(rng() % static_cast<uint64_t>(numSrc));
      dst[e] = static_cast<int64_t>(rng() % static_cast<uint64_t>(numDst));
    }
    Graph g = build(src, dst, numSrc, numDst);
    Vec inPtr{0}, inSrc, inEdge, outPtr{0}, outDst, outEdge;
    for (int64_t v = 0; v < numDst; ++v) {
      for (int64_t e = 0; e < numEdges; ++e)
        if (dst[e] == v) {
          inSrc.push_back(src[e]);
          inEdge.push_back(e);
        }
      inPtr.push_back(static_cast<int64_t>(inSrc.size()));
    }
    for (int64_t u = 0; u < numSrc; ++u) {
      for (int64_t e = 0; e < numEdges; ++e)
        if (src[e] == u) {
          outDst.push_back(dst[e]);
          outEdge.push_back(e);
        }
      outPtr.push_back(static_cast<int64_t>(outDst.size()));
    }
    SCOPED_TRACE(trial);
    EXPECT_EQ(g.inPtr(), inPtr);
    EXPECT_EQ(g.inSrc(), inSrc);
    EXPECT_EQ(g.inEdge(), inEdge);
    EXPECT_EQ(g.outPtr(), outPtr);
    EXPECT_EQ(g.outDst(), outDst);
    EXPECT_EQ(g.outEdge(), outEdge);
  }
}

//===----------------------------------------------------------------------===//
// addSelfLoops
//===----------------------------------------------------------------------===//

TEST(GraphTest, AddSelfLoops) {
  Graph g = build(kSrc, kDst, 5, 5);
  Graph h;
  Status s = addSelfLoops(g, h);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(h.numEdges(), 11);
  EXPECT_EQ(h.edgeSrc(), (Vec{0, 1, 2, 0, 3, 2, 0, 1, 2, 3, 4}));
  EXPECT_EQ(h.edgeDst(), (Vec{1, 2, 2, 1, 1, 0, 0, 1, 2, 3, 4}));
  // Each row gains its loop (edge 6 + v) at the end; the existing self-loop
  // e2 on vertex 2 stays.
  EXPECT_EQ(h.inPtr(), (Vec{0, 2, 6, 9, 10, 11}));
  EXPECT_EQ(h.inEdge(), (Vec{5, 6, 0, 3, 4, 7, 1, 2, 8, 9, 10}));
  EXPECT_EQ(h.inSrc(), (Vec{2, 0, 0, 0, 3, 1, 1, 2, 2, 3, 4}));
  EXPECT_EQ(h.outPtr(), (Vec{0, 3, 5, 8, 10, 11}));
  EXPECT_EQ(h.outEdge(), (Vec{0, 3, 6, 1, 7, 2, 5, 8, 4, 9, 10}));
  EXPECT_EQ(h.inDegrees(), (std::vector<float>{2, 4, 3, 1, 1}));

  // In place.
  ASSERT_TRUE(addSelfLoops(g, g).ok());
  EXPECT_EQ(g.inEdge(), h.inEdge());
  EXPECT_EQ(g.outEdge(), h.outEdge());
}

TEST(GraphTest, AddSelfLoopsNeedsAHomogeneousGraph) {
  Graph g = build({0}, {1}, 3, 2);
  Graph h;
  Status s = addSelfLoops(g, h);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "addSelfLoops: needs a homogeneous graph, got 3 "
                         "sources and 2 destinations");
}

//===----------------------------------------------------------------------===//
// loadGraphDir
//===----------------------------------------------------------------------===//

NpyArray int64Array(Vec shape, const Vec &values) {
  NpyArray a;
  a.dtype = DType::Int64;
  a.shape = std::move(shape);
  a.bytes.resize(values.size() * sizeof(int64_t));
  if (!values.empty())
    std::memcpy(a.bytes.data(), values.data(), a.bytes.size());
  return a;
}

NpyArray float32Zeros(Vec shape) {
  NpyArray a;
  a.dtype = DType::Float32;
  a.shape = shape;
  a.bytes.resize(static_cast<size_t>(a.numElements()) * 4);
  return a;
}

Vec concat(const Vec &a, const Vec &b) {
  Vec out = a;
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

TEST(GraphTest, LoadGraphDir) {
  TempDir dir;
  ASSERT_TRUE(writeNpy(dir.path("edge_index.npy"),
                       int64Array({2, 6}, concat(kSrc, kDst)))
                  .ok());
  Graph g;

  // No x.npy and no node count.
  Status s = loadGraphDir(dir.path(""), g);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("number of nodes unknown"), std::string::npos)
      << s.message();

  // The node count given explicitly.
  s = loadGraphDir(dir.path(""), g, 7);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(g.numSrc(), 7);
  EXPECT_EQ(g.numEdges(), 6);
  EXPECT_EQ(g.inEdge(), (Vec{5, 0, 3, 4, 1, 2}));

  // Too few nodes: the error names the file and the edge.
  s = loadGraphDir(dir.path(""), g, 3);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), dir.path("edge_index.npy") +
                             ": edge 4: source 3 is outside [0, 3)");
  s = loadGraphDir(dir.path(""), g, -2);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("invalid node count -2"), std::string::npos);

  // N from x.npy (a directory path with or without the trailing slash).
  ASSERT_TRUE(writeNpy(dir.path("x.npy"), float32Zeros({5, 3})).ok());
  s = loadGraphDir(dir.path(""), g);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(g.numSrc(), 5);
  EXPECT_EQ(g.inPtr(), (Vec{0, 1, 4, 6, 6, 6}));
  std::string noSlash = dir.path("");
  noSlash.pop_back();
  ASSERT_TRUE(loadGraphDir(noSlash, g).ok());
  EXPECT_EQ(g.numSrc(), 5);

  // A broken x.npy is reported as such.
  ASSERT_TRUE(writeNpy(dir.path("x.npy"), float32Zeros({})).ok());
  s = loadGraphDir(dir.path(""), g);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), dir.path("x.npy") + ": expected at least 1 dimension "
                                             "(one row per node), got a "
                                             "scalar");

  // Wrong dtype / shape of edge_index.npy.
  ASSERT_TRUE(writeNpy(dir.path("edge_index.npy"), float32Zeros({2, 6})).ok());
  s = loadGraphDir(dir.path(""), g, 5);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(),
            dir.path("edge_index.npy") + ": expected dtype int64, got float32");
  ASSERT_TRUE(writeNpy(dir.path("edge_index.npy"),
                       int64Array({3, 2}, {0, 1, 2, 0, 1, 2}))
                  .ok());
  s = loadGraphDir(dir.path(""), g, 5);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(),
            dir.path("edge_index.npy") + ": expected shape 2x*, got 3x2");

  // No edges at all.
  ASSERT_TRUE(
      writeNpy(dir.path("edge_index.npy"), int64Array({2, 0}, {})).ok());
  s = loadGraphDir(dir.path(""), g, 4);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(g.numEdges(), 0);
  EXPECT_EQ(g.inPtr(), (Vec{0, 0, 0, 0, 0}));
}

TEST(GraphTest, AbsurdVertexCountsAreErrorsBeforeAllocating) {
  TempDir dir;
  ASSERT_TRUE(writeNpy(dir.path("edge_index.npy"),
                       int64Array({2, 6}, concat(kSrc, kDst)))
                  .ok());
  Graph g;
  // A valid 128-byte x.npy of shape (2^40, 0): nothing backs the row count.
  const int64_t huge = int64_t{1} << 40;
  ASSERT_TRUE(writeNpy(dir.path("x.npy"), float32Zeros({huge, 0})).ok());
  Status s = loadGraphDir(dir.path(""), g);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), dir.path("x.npy") +
                             ": a 1099511627776x0 array holds no data, so its "
                             "1099511627776 rows cannot give the number of "
                             "nodes");
  // A count given by the caller: above kMaxVertices it is an error.
  s = loadGraphDir(dir.path(""), g, huge);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), dir.path("") +
                             ": 1099511627776 nodes are more than the limit "
                             "of 2147483647");
  s = Graph::fromEdgeIndex(nullptr, nullptr, 0, kMaxVertices + 1, 1, g);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(),
            "graph: 2147483648 vertices are more than the limit of 2147483647");
  s = Graph::fromEdgeIndex(nullptr, nullptr, 0, 3, huge, g);
  ASSERT_FALSE(s.ok());
  // An empty x.npy with no rows is fine: a graph without vertices.
  ASSERT_TRUE(writeNpy(dir.path("x.npy"), float32Zeros({0, 4})).ok());
  ASSERT_TRUE(
      writeNpy(dir.path("edge_index.npy"), int64Array({2, 0}, {})).ok());
  s = loadGraphDir(dir.path(""), g);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(g.numDst(), 0);
}

TEST(GraphTest, LoadCora) {
  std::string cora = gnnc::rt::testing::coraDir();
  if (!fileExists(cora + "/edge_index.npy"))
    GTEST_SKIP() << cora << " not present";
  Graph g;
  Status s = loadGraphDir(cora, g);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(g.numSrc(), 2708);
  EXPECT_EQ(g.numDst(), 2708);
  EXPECT_EQ(g.numEdges(), 10556);
  EXPECT_EQ(g.inPtr().back(), 10556);
  EXPECT_EQ(g.outPtr().back(), 10556);
  // Both directions of every edge are present and there are no self-loops,
  // so in- and out-degrees agree and every vertex has an edge.
  for (int64_t v = 0; v < 2708; ++v) {
    ASSERT_EQ(g.inDegree(v), g.outDegree(v)) << v;
    EXPECT_GT(g.inDegree(v), 0) << v;
  }
  for (int64_t e = 0; e < g.numEdges(); ++e)
    ASSERT_NE(g.edgeSrc()[e], g.edgeDst()[e]) << e;

  Graph h;
  ASSERT_TRUE(addSelfLoops(g, h).ok());
  EXPECT_EQ(h.numEdges(), 10556 + 2708);
  for (int64_t v = 0; v < 2708; ++v)
    ASSERT_EQ(h.inDegree(v), g.inDegree(v) + 1);
}

} // namespace
