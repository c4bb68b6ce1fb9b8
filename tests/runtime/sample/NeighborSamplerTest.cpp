//===- NeighborSamplerTest.cpp - Tests of the neighbour samplers ----------===//
//
// Part of gnnc. Blocks against hand-built ones, inclusion frequencies
// against their exact probabilities (bounds of five standard deviations),
// and the same samples whichever way a global batch is split over ranks.
//
//===----------------------------------------------------------------------===//

#include "gnnc/sample/ItemSampler.h"
#include "gnnc/sample/NeighborSampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <set>

using namespace gnnc;
using namespace gnnc::sample;

namespace {
rt::Graph fromEdges(const std::vector<std::pair<int64_t, int64_t>> &edges,
                    int64_t n) {
  std::vector<int64_t> src, dst;
  for (auto [s, d] : edges) {
    src.push_back(s);
    dst.push_back(d);
  }
  rt::Graph g;
  EXPECT_TRUE(rt::Graph::fromEdgeIndex(src.data(), dst.data(),
                                       static_cast<int64_t>(src.size()), n, n,
                                       g)
                  .ok());
  return g;
}

// Edge e is listed as (source, destination); in-edges of each vertex in
// this order.
rt::Graph smallGraph() {
  return fromEdges({{1, 0}, {2, 0}, {3, 0}, // e0..e2
                    {0, 1}, {4, 1},         // e3, e4
                    {5, 2},                 // e5
                    {0, 4}, {1, 4}, {2, 4}, {3, 4}, {5, 4}, // e6..e10
                    {4, 5}},                // e11
                   6);
}

NeighborSampler makeSampler(const GraphView &g, std::vector<int64_t> fanouts,
                            SamplerKind kind = SamplerKind::Neighbor,
                            bool replace = false, uint64_t seed = 5) {
  NeighborSamplerOptions o;
  o.Kind = kind;
  o.Fanouts = std::move(fanouts);
  o.Replace = replace;
  o.Seed = seed;
  NeighborSampler s;
  Status st = NeighborSampler::create(g, o, s);
  EXPECT_TRUE(st.ok()) << st.message();
  return s;
}

MiniBatch sampleOf(const NeighborSampler &s, std::vector<int64_t> seeds,
                   uint64_t epoch = 0, int64_t step = 0) {
  SamplerScratch scratch;
  MiniBatch b;
  Status st = s.sample(seeds, epoch, step, scratch, b);
  EXPECT_TRUE(st.ok()) << st.message();
  return b;
}

/// The original (source, edge id) pairs each destination of a block drew.
std::map<int64_t, std::multiset<std::pair<int64_t, int64_t>>>
drawnEdges(const Block &b) {
  std::map<int64_t, std::multiset<std::pair<int64_t, int64_t>>> out;
  for (int64_t j = 0; j < b.NumDst; ++j) {
    auto &edges = out[b.DstIds[j]];
    for (int64_t e = b.Ptr[j]; e < b.Ptr[j + 1]; ++e)
      edges.insert({b.SrcIds[b.Src[e]], b.EdgeId[e]});
  }
  return out;
}

/// A star: vertex 0's in-neighbours are 1..deg (edge ids 0..deg-1).
rt::Graph star(int64_t deg) {
  std::vector<std::pair<int64_t, int64_t>> edges;
  for (int64_t u = 1; u <= deg; ++u)
    edges.push_back({u, 0});
  return fromEdges(edges, deg + 1);
}

/// Inclusion frequency of each in-edge of vertex 0 over `draws` steps.
std::vector<double> frequencies(const NeighborSampler &s, int64_t deg,
                                int draws, double *meanCount = nullptr) {
  std::vector<double> f(deg, 0);
  double total = 0;
  SamplerScratch scratch;
  for (int t = 0; t < draws; ++t) {
    MiniBatch b;
    EXPECT_TRUE(s.sample({0}, 1, t, scratch, b).ok());
    const Block &blk = b.Blocks.back();
    std::set<int64_t> seen;
    for (int64_t e = 0; e < blk.numEdges(); ++e)
      seen.insert(blk.EdgeId[e]);
    for (int64_t e : seen)
      f[e] += 1;
    total += blk.numEdges();
  }
  for (double &x : f)
    x /= draws;
  if (meanCount)
    *meanCount = total / draws;
  return f;
}

void expectNear(double freq, double p, int draws, const std::string &what) {
  double sigma = std::sqrt(p * (1 - p) / draws);
  EXPECT_NEAR(freq, p, 5 * sigma + 1e-12) << what;
}

rt::Graph randomGraph(int64_t n, int64_t m, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::pair<int64_t, int64_t>> edges;
  for (int64_t e = 0; e < m; ++e)
    edges.push_back({static_cast<int64_t>(rng() % n),
                     static_cast<int64_t>(rng() % n)});
  return fromEdges(edges, n);
}
} // namespace

TEST(NeighborSampler, FullNeighbourhoodBlocksByHand) {
  rt::Graph g = smallGraph();
  NeighborSampler s = makeSampler(GraphView::of(g), {-1, -1});
  MiniBatch b = sampleOf(s, {0, 4});
  ASSERT_EQ(b.Blocks.size(), 2u);
  const Block &inner = b.Blocks[1], &outer = b.Blocks[0];
  // The seeds' block: sources are the seeds, then new sources in order of
  // first appearance.
  EXPECT_EQ(inner.DstIds, (std::vector<int64_t>{0, 4}));
  EXPECT_EQ(inner.SrcIds, (std::vector<int64_t>{0, 4, 1, 2, 3, 5}));
  EXPECT_EQ(inner.Ptr, (std::vector<int64_t>{0, 3, 8}));
  EXPECT_EQ(inner.Src, (std::vector<int64_t>{2, 3, 4, 0, 2, 3, 4, 5}));
  EXPECT_EQ(inner.EdgeId, (std::vector<int64_t>{0, 1, 2, 6, 7, 8, 9, 10}));
  EXPECT_EQ(inner.NumSrc, 6);
  EXPECT_EQ(inner.NumDst, 2);
  // The outer block's destinations are the inner block's sources.
  EXPECT_EQ(outer.DstIds, inner.SrcIds);
  EXPECT_EQ(outer.SrcIds, (std::vector<int64_t>{0, 4, 1, 2, 3, 5}));
  EXPECT_EQ(outer.Ptr, (std::vector<int64_t>{0, 3, 8, 10, 11, 11, 12}));
  EXPECT_EQ(outer.Src,
            (std::vector<int64_t>{2, 3, 4, 0, 2, 3, 4, 5, 0, 1, 5, 1}));
  EXPECT_EQ(outer.EdgeId,
            (std::vector<int64_t>{0, 1, 2, 6, 7, 8, 9, 10, 3, 4, 5, 11}));
  EXPECT_EQ(b.inputIds(), outer.SrcIds);
  EXPECT_EQ(b.numSampledEdges(), 20);

  // As a runtime graph: the same in-edges.
  rt::Graph bg;
  ASSERT_TRUE(inner.toGraph(bg).ok());
  EXPECT_EQ(bg.numSrc(), 6);
  EXPECT_EQ(bg.numDst(), 2);
  EXPECT_EQ(bg.inPtr(), inner.Ptr);
  EXPECT_EQ(bg.inSrc(), inner.Src);
}

TEST(NeighborSampler, FullNeighbourhoodOnARandomGraphTakesEveryInEdge) {
  rt::Graph g = randomGraph(500, 4000, 1);
  NeighborSampler s = makeSampler(GraphView::of(g), {-1, -1, -1});
  MiniBatch b = sampleOf(s, {3, 17, 255, 499});
  for (size_t h = 0; h < b.Blocks.size(); ++h) {
    const Block &blk = b.Blocks[h];
    if (h + 1 < b.Blocks.size()) {
      EXPECT_EQ(blk.DstIds, b.Blocks[h + 1].SrcIds);
    }
    // Sources: destinations first, no duplicates.
    EXPECT_TRUE(std::equal(blk.DstIds.begin(), blk.DstIds.end(),
                           blk.SrcIds.begin()));
    EXPECT_EQ(std::set<int64_t>(blk.SrcIds.begin(), blk.SrcIds.end()).size(),
              blk.SrcIds.size());
    for (auto &[v, edges] : drawnEdges(blk)) {
      std::multiset<std::pair<int64_t, int64_t>> all;
      for (int64_t p = g.inPtr()[v]; p < g.inPtr()[v + 1]; ++p)
        all.insert({g.inSrc()[p], g.inEdge()[p]});
      EXPECT_EQ(edges, all) << "vertex " << v << " hop " << h;
    }
  }
}

TEST(NeighborSampler, FanoutWithoutReplacement) {
  rt::Graph g = randomGraph(300, 6000, 2);
  NeighborSampler s = makeSampler(GraphView::of(g), {7, 3});
  MiniBatch b = sampleOf(s, {0, 1, 2, 100, 299});
  for (size_t h = 0; h < 2; ++h)
    for (auto &[v, edges] : drawnEdges(b.Blocks[h])) {
      int64_t deg = g.inDegree(v), k = h == 0 ? 7 : 3;
      EXPECT_EQ(static_cast<int64_t>(edges.size()), std::min(deg, k));
      std::set<int64_t> ids;
      for (auto &[u, e] : edges) {
        ids.insert(e);
        EXPECT_EQ(g.edgeDst()[e], v);
        EXPECT_EQ(g.edgeSrc()[e], u);
      }
      EXPECT_EQ(ids.size(), edges.size()) << "an edge drawn twice";
    }
}

TEST(NeighborSampler, UniformInclusionWithoutReplacement) {
  // Each of 10 in-edges is in a sample of 3 with probability 0.3.
  for (int64_t k : {3, 70}) {
    int64_t deg = k == 3 ? 10 : 100; // 70 of 100 exercises the shuffle path
    rt::Graph g = star(deg);
    NeighborSampler s = makeSampler(GraphView::of(g), {k});
    const int draws = 20000;
    double mean;
    std::vector<double> f = frequencies(s, deg, draws, &mean);
    EXPECT_EQ(mean, static_cast<double>(k));
    for (int64_t e = 0; e < deg; ++e)
      expectNear(f[e], double(k) / deg, draws, "edge " + std::to_string(e));
  }
}

TEST(NeighborSampler, UniformWithReplacement) {
  // 4 draws from 5 in-edges: edge e appears at least once with probability
  // 1 - (4/5)^4; a vertex of degree 2 still gets 4 (repeated) edges.
  rt::Graph g = star(5);
  NeighborSampler s = makeSampler(GraphView::of(g), {4}, SamplerKind::Neighbor,
                                  /*replace=*/true);
  const int draws = 20000;
  double mean;
  std::vector<double> f = frequencies(s, 5, draws, &mean);
  EXPECT_EQ(mean, 4.0);
  for (int e = 0; e < 5; ++e)
    expectNear(f[e], 1 - std::pow(0.8, 4), draws, "edge " + std::to_string(e));
  rt::Graph two = star(2);
  NeighborSampler s2 = makeSampler(GraphView::of(two), {4},
                                   SamplerKind::Neighbor, true);
  EXPECT_EQ(sampleOf(s2, {0}).Blocks[0].numEdges(), 4);
}

TEST(NeighborSampler, WeightedWithReplacement) {
  rt::Graph g = star(4);
  std::vector<float> w = {1, 2, 3, 4};
  GraphView v = GraphView::of(g);
  v.Weight = w.data();
  NeighborSampler s = makeSampler(v, {1}, SamplerKind::Neighbor, true);
  const int draws = 20000;
  std::vector<double> f = frequencies(s, 4, draws);
  for (int e = 0; e < 4; ++e)
    expectNear(f[e], w[e] / 10.0, draws, "edge " + std::to_string(e));
}

TEST(NeighborSampler, WeightedWithoutReplacement) {
  // Two draws without replacement, proportional to the weights: edge i is
  // in the sample with probability p_i + sum_{j != i} p_j p_i / (1 - p_j).
  rt::Graph g = star(4);
  std::vector<float> w = {1, 2, 3, 4};
  GraphView v = GraphView::of(g);
  v.Weight = w.data();
  NeighborSampler s = makeSampler(v, {2});
  const int draws = 20000;
  double mean;
  std::vector<double> f = frequencies(s, 4, draws, &mean);
  EXPECT_EQ(mean, 2.0);
  for (int i = 0; i < 4; ++i) {
    double pi = w[i] / 10.0, exact = pi;
    for (int j = 0; j < 4; ++j)
      if (j != i)
        exact += (w[j] / 10.0) * pi / (1 - w[j] / 10.0);
    expectNear(f[i], exact, draws, "edge " + std::to_string(i));
  }
}

TEST(NeighborSampler, MaskAndZeroWeightsExcludeEdges) {
  rt::Graph g = star(6);
  std::vector<uint8_t> mask = {1, 0, 1, 1, 0, 1};
  std::vector<float> w = {1, 5, 0, 1, 5, 1};
  GraphView v = GraphView::of(g);
  v.Mask = mask.data();
  // All neighbours: every unmasked edge, once.
  NeighborSampler all = makeSampler(v, {-1});
  EXPECT_EQ(sampleOf(all, {0}).Blocks[0].EdgeId,
            (std::vector<int64_t>{0, 2, 3, 5}));
  NeighborSampler two = makeSampler(v, {2});
  const int draws = 5000;
  std::vector<double> f = frequencies(two, 6, draws);
  EXPECT_EQ(f[1], 0.0);
  EXPECT_EQ(f[4], 0.0);
  for (int e : {0, 2, 3, 5})
    expectNear(f[e], 0.5, draws, "edge " + std::to_string(e));
  // Mask and weights: masked and zero-weight edges never appear.
  v.Weight = w.data();
  for (bool replace : {false, true}) {
    NeighborSampler s = makeSampler(v, {2}, SamplerKind::Neighbor, replace);
    std::vector<double> fw = frequencies(s, 6, 2000);
    EXPECT_EQ(fw[1] + fw[2] + fw[4], 0.0);
    EXPECT_GT(fw[0] * fw[3] * fw[5], 0.0);
  }
}

TEST(LaborSampler, InclusionAndSharedSources) {
  // LABOR-0 keeps each of 10 in-edges with probability 3/10, so 3 edges in
  // expectation.
  rt::Graph g = star(10);
  NeighborSampler s = makeSampler(GraphView::of(g), {3}, SamplerKind::Labor);
  const int draws = 20000;
  double mean;
  std::vector<double> f = frequencies(s, 10, draws, &mean);
  for (int e = 0; e < 10; ++e)
    expectNear(f[e], 0.3, draws, "edge " + std::to_string(e));
  EXPECT_NEAR(mean, 3.0, 5 * std::sqrt(10 * 0.3 * 0.7 / draws));

  // Two destinations with the same in-neighbours draw the same sources
  // (one variate per source and hop), unlike independent sampling.
  std::vector<std::pair<int64_t, int64_t>> edges;
  for (int64_t u = 2; u < 22; ++u) {
    edges.push_back({u, 0});
    edges.push_back({u, 1});
  }
  rt::Graph twin = fromEdges(edges, 22);
  NeighborSampler labor =
      makeSampler(GraphView::of(twin), {5}, SamplerKind::Labor);
  NeighborSampler plain = makeSampler(GraphView::of(twin), {5});
  int differ = 0;
  for (int t = 0; t < 50; ++t) {
    MiniBatch lb = sampleOf(labor, {0, 1}, 0, t);
    auto d = drawnEdges(lb.Blocks[0]);
    std::set<int64_t> a, b;
    for (auto &[u, e] : d[0])
      a.insert(u);
    for (auto &[u, e] : d[1])
      b.insert(u);
    EXPECT_EQ(a, b) << "step " << t;
    // LABOR's sources: only the shared ones, never more than either side.
    EXPECT_EQ(lb.Blocks[0].NumSrc, 2 + static_cast<int64_t>(a.size()));
    MiniBatch pb = sampleOf(plain, {0, 1}, 0, t);
    differ += pb.Blocks[0].NumSrc > 2 + 5;
  }
  EXPECT_GT(differ, 40) << "independent sampling rarely shares all sources";
}

TEST(NeighborSampler, SameSamplesOnOneRankOrFour) {
  // A global batch sampled by one process, and split over 4 ranks with the
  // same (epoch, step): every destination draws the same edges, and the
  // ranks' input vertices together are the single process's.
  rt::Graph g = randomGraph(3000, 40000, 3);
  for (SamplerKind kind : {SamplerKind::Neighbor, SamplerKind::Labor}) {
    NeighborSampler s = makeSampler(GraphView::of(g), {5, 4, 3}, kind);
    DistributedItemSamplerOptions io;
    io.BatchSize = 16;
    io.Shuffle = true;
    io.Seed = 9;
    io.Split = ItemSplit::SplitBatches;
    std::vector<int64_t> items(3000);
    std::iota(items.begin(), items.end(), int64_t{0});
    ItemSampler single;
    ItemSamplerOptions so = io;
    so.BatchSize = 64;
    ASSERT_TRUE(ItemSampler::create(items, so, single).ok());
    for (int64_t step = 0; step < 3; ++step) {
      std::vector<int64_t> global;
      ASSERT_TRUE(single.batch(2, step, global).ok());
      MiniBatch whole = sampleOf(s, global, 2, step);
      std::set<int64_t> inputs;
      for (int r = 0; r < 4; ++r) {
        DistributedItemSampler ds;
        ASSERT_TRUE(DistributedItemSampler::create(items, io, r, 4, ds).ok());
        std::vector<int64_t> part;
        ASSERT_TRUE(ds.batch(2, step, part).ok());
        MiniBatch mine = sampleOf(s, part, 2, step);
        for (size_t h = 0; h < 3; ++h) {
          auto ref = drawnEdges(whole.Blocks[h]);
          for (auto &[v, edges] : drawnEdges(mine.Blocks[h])) {
            ASSERT_TRUE(ref.count(v)) << "vertex " << v;
            EXPECT_EQ(edges, ref[v]) << "rank " << r << " hop " << h
                                     << " vertex " << v;
          }
        }
        inputs.insert(mine.inputIds().begin(), mine.inputIds().end());
      }
      EXPECT_EQ(inputs, std::set<int64_t>(whole.inputIds().begin(),
                                          whole.inputIds().end()));
    }
  }
}

TEST(NeighborSampler, DeterministicAndKeyed) {
  rt::Graph g = randomGraph(1000, 20000, 4);
  NeighborSampler s = makeSampler(GraphView::of(g), {10, 5});
  MiniBatch a = sampleOf(s, {1, 2, 3}, 4, 7), b = sampleOf(s, {1, 2, 3}, 4, 7);
  EXPECT_EQ(a.Blocks[0].Src, b.Blocks[0].Src);
  EXPECT_EQ(a.Blocks[0].EdgeId, b.Blocks[0].EdgeId);
  MiniBatch c = sampleOf(s, {1, 2, 3}, 4, 8), d = sampleOf(s, {1, 2, 3}, 5, 7);
  EXPECT_NE(a.Blocks[0].EdgeId, c.Blocks[0].EdgeId) << "another step";
  EXPECT_NE(a.Blocks[0].EdgeId, d.Blocks[0].EdgeId) << "another epoch";
  NeighborSampler other = makeSampler(GraphView::of(g), {10, 5},
                                      SamplerKind::Neighbor, false, 6);
  EXPECT_NE(sampleOf(other, {1, 2, 3}, 4, 7).Blocks[0].EdgeId,
            a.Blocks[0].EdgeId)
      << "another seed";
}

TEST(NeighborSampler, Errors) {
  rt::Graph g = smallGraph();
  GraphView v = GraphView::of(g);
  NeighborSampler s;
  NeighborSamplerOptions o;
  EXPECT_EQ(NeighborSampler::create(v, o, s).message(),
            "neighbour sampler: no fanouts (one per hop)");
  o.Fanouts = {5, 0};
  EXPECT_EQ(NeighborSampler::create(v, o, s).message(),
            "neighbour sampler: fanout 0 of hop 1 must be positive or -1 (all "
            "neighbours)");
  o.Fanouts = {5};
  o.Kind = SamplerKind::Labor;
  o.Replace = true;
  EXPECT_FALSE(NeighborSampler::create(v, o, s).ok());

  std::vector<int64_t> badSrc = g.inSrc();
  badSrc[3] = 6;
  GraphView bad = v;
  bad.InSrc = badSrc.data();
  o = NeighborSamplerOptions();
  o.Fanouts = {2};
  EXPECT_EQ(NeighborSampler::create(bad, o, s).message(),
            "sampling graph: edge position 3: source 6 is outside [0, 6)");
  std::vector<float> w(12, 1.0f);
  w[5] = std::nanf("");
  bad = v;
  bad.Weight = w.data();
  EXPECT_EQ(NeighborSampler::create(bad, o, s).message(),
            "sampling graph: edge position 5: weight nan is not a finite "
            "number >= 0");

  ASSERT_TRUE(NeighborSampler::create(v, o, s).ok());
  SamplerScratch scratch;
  MiniBatch b;
  EXPECT_EQ(s.sample({0, 6}, 0, 0, scratch, b).message(),
            "neighbour sampler: seed 6 at position 1 is outside [0, 6)");
  EXPECT_EQ(s.sample({4, 1, 4}, 0, 0, scratch, b).message(),
            "neighbour sampler: seed 4 appears twice (positions 0 and 2)");
}
