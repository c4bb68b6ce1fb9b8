//===- FixedSizeTest.cpp - Tests of fixed-size (padded) batches -----------===//
//
// Part of gnnc. Capacities against hand-computed bounds and against the
// counts of sampled Cora batches; padded batches against hand-written
// arrays and, on Cora, against the unpadded batch through the position
// maps; each oversize strategy, alone and through the pipeline.
//
//===----------------------------------------------------------------------===//

#include "gnnc/sample/FixedSize.h"
#include "gnnc/runtime/Dataset.h"
#include "gnnc/sample/Pipeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <new>
#include <set>
#include <tuple>

using namespace gnnc;
using namespace gnnc::sample;

// Allocation counting for the test that padding a recycled batch does not
// allocate (counting is off everywhere else).
namespace {
std::atomic<bool> gCounting{false};
std::atomic<int64_t> gAllocations{0};

__attribute__((noinline)) void *rawAllocate(std::size_t n) {
  return std::malloc(n ? n : 1);
}
__attribute__((noinline)) void rawFree(void *p) { std::free(p); }
} // namespace

void *operator new(std::size_t n) {
  if (gCounting.load(std::memory_order_relaxed))
    gAllocations.fetch_add(1, std::memory_order_relaxed);
  if (void *p = rawAllocate(n))
    return p;
  throw std::bad_alloc();
}
void operator delete(void *p) noexcept { rawFree(p); }
void operator delete(void *p, std::size_t) noexcept { rawFree(p); }

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

// In-degrees 3, 2, 1, 0, 5, 1 (12 edges, largest in-degree 5).
rt::Graph smallGraph() {
  return fromEdges({{1, 0},
                    {2, 0},
                    {3, 0},
                    {0, 1},
                    {4, 1},
                    {5, 2},
                    {0, 4},
                    {1, 4},
                    {2, 4},
                    {3, 4},
                    {5, 4},
                    {4, 5}},
                   6);
}

NeighborSamplerOptions samplerOptions(std::vector<int64_t> fanouts,
                                      SamplerKind kind = SamplerKind::Neighbor,
                                      bool replace = false) {
  NeighborSamplerOptions o;
  o.Kind = kind;
  o.Fanouts = std::move(fanouts);
  o.Replace = replace;
  o.Seed = 11;
  return o;
}

Capacities caps(std::vector<int64_t> v, std::vector<int64_t> e) {
  Capacities c;
  c.Vertices = std::move(v);
  c.Edges = std::move(e);
  return c;
}

struct Cora {
  rt::Dataset Data;
  rt::Graph G;
  bool Ok = false;
  int64_t N = 0, Dim = 0;
};

const Cora &cora() {
  static Cora c = [] {
    Cora c;
    if (!rt::findDataset("cora", c.Data).ok())
      return c;
    c.N = c.Data.NumNodes;
    c.Dim = c.Data.NumFeatures;
    c.Ok =
        rt::Graph::fromEdgeIndex(c.Data.EdgeSrc.data(), c.Data.EdgeDst.data(),
                                 c.Data.numEdges(), c.N, c.N, c.G)
            .ok();
    return c;
  }();
  return c;
}

#define NEED_CORA()                                                            \
  const Cora &C = cora();                                                      \
  ASSERT_TRUE(C.Ok) << "cannot load Cora"

std::vector<int64_t> allVertices(int64_t n) {
  std::vector<int64_t> v(n);
  for (int64_t i = 0; i < n; ++i)
    v[i] = i;
  return v;
}

ItemSampler coraItems(int64_t batchSize, uint64_t seed = 3) {
  ItemSamplerOptions io;
  io.BatchSize = batchSize;
  io.Shuffle = true;
  io.Seed = seed;
  ItemSampler items;
  EXPECT_TRUE(ItemSampler::create(allVertices(cora().N), io, items).ok());
  return items;
}

NeighborSampler coraSampler(const NeighborSamplerOptions &o) {
  NeighborSampler s;
  Status st = NeighborSampler::create(GraphView::of(cora().G), o, s);
  EXPECT_TRUE(st.ok()) << st.message();
  return s;
}

/// The features of the input vertices and the seeds' labels, as the
/// pipeline's fetch writes them.
void fetchByHand(MiniBatch &b) {
  const Cora &c = cora();
  const std::vector<int64_t> &ids = b.inputIds();
  b.FeatureDim = c.Dim;
  b.Features.resize(ids.size() * c.Dim);
  for (size_t i = 0; i < ids.size(); ++i)
    std::copy_n(c.Data.X.begin() + ids[i] * c.Dim, c.Dim,
                b.Features.begin() + i * c.Dim);
  b.Labels.resize(b.Seeds.size());
  for (size_t i = 0; i < b.Seeds.size(); ++i)
    b.Labels[i] = c.Data.Y[b.Seeds[i]];
}

/// Batch `step` of `epoch`, sampled and fetched.
MiniBatch sampled(const ItemSampler &items, const NeighborSampler &s,
                  uint64_t epoch, int64_t step) {
  std::vector<int64_t> seeds;
  EXPECT_TRUE(items.batch(epoch, step, seeds).ok());
  SamplerScratch scratch;
  MiniBatch b;
  EXPECT_TRUE(s.sample(seeds, epoch, step, scratch, b).ok());
  fetchByHand(b);
  return b;
}

/// Real counts of an unpadded batch: vertices per level, edges per block.
struct Counts {
  std::vector<int64_t> N, E;
};
Counts countsOf(const MiniBatch &b) {
  Counts c;
  for (const Block &k : b.Blocks) {
    c.N.push_back(k.NumSrc);
    c.E.push_back(k.numEdges());
  }
  c.N.push_back(b.Blocks.back().NumDst);
  return c;
}

/// The fit rule, written out: one padding seed, the other vertices of each
/// level between the level above and the capacity, the edges.
bool fitsByHand(const Capacities &cap, const Counts &c) {
  size_t h = cap.Edges.size();
  if (c.N[h] + 1 > cap.Vertices[h])
    return false;
  for (size_t b = 0; b < h; ++b)
    if (c.N[b] - c.N[b + 1] > cap.Vertices[b] - cap.Vertices[b + 1] ||
        c.E[b] > cap.Edges[b])
      return false;
  return true;
}

void expectSameBatch(const MiniBatch &a, const MiniBatch &b) {
  EXPECT_EQ(a.Epoch, b.Epoch);
  EXPECT_EQ(a.Step, b.Step);
  EXPECT_EQ(a.Seeds, b.Seeds);
  ASSERT_EQ(a.Blocks.size(), b.Blocks.size());
  for (size_t h = 0; h < a.Blocks.size(); ++h) {
    const Block &x = a.Blocks[h], &y = b.Blocks[h];
    EXPECT_EQ(x.NumSrc, y.NumSrc);
    EXPECT_EQ(x.NumDst, y.NumDst);
    EXPECT_EQ(x.Ptr, y.Ptr);
    EXPECT_EQ(x.Src, y.Src);
    EXPECT_EQ(x.EdgeId, y.EdgeId);
    EXPECT_EQ(x.SrcIds, y.SrcIds);
    EXPECT_EQ(x.DstIds, y.DstIds);
  }
  EXPECT_EQ(a.FeatureDim, b.FeatureDim);
  EXPECT_EQ(a.Features, b.Features);
  EXPECT_EQ(a.Labels, b.Labels);
  EXPECT_EQ(a.Padded, b.Padded);
  EXPECT_EQ(a.VertexMask, b.VertexMask);
  EXPECT_EQ(a.EdgeMask, b.EdgeMask);
  EXPECT_EQ(a.RealPos, b.RealPos);
}

/// The padded list of level l (0..H).
const std::vector<int64_t> &levelIds(const MiniBatch &b, size_t l) {
  return l < b.Blocks.size() ? b.Blocks[l].SrcIds : b.Blocks.back().DstIds;
}

/// The real vertices of level l of a padded batch, in their unpadded order.
std::vector<int64_t> realIds(const MiniBatch &b, size_t l) {
  std::vector<int64_t> ids;
  for (int64_t p : b.RealPos[l])
    ids.push_back(levelIds(b, l)[p]);
  return ids;
}

int64_t ones(const std::vector<uint8_t> &v) {
  return std::count(v.begin(), v.end(), 1);
}

Block makeBlock(std::vector<int64_t> dstIds, std::vector<int64_t> srcIds,
                std::vector<int64_t> ptr, std::vector<int64_t> src,
                std::vector<int64_t> edgeIds) {
  Block k;
  k.NumDst = static_cast<int64_t>(dstIds.size());
  k.NumSrc = static_cast<int64_t>(srcIds.size());
  k.DstIds = std::move(dstIds);
  k.SrcIds = std::move(srcIds);
  k.Ptr = std::move(ptr);
  k.Src = std::move(src);
  k.EdgeId = std::move(edgeIds);
  return k;
}

/// Two rows of features per vertex id v: (v, v + 0.5).
void handFeatures(MiniBatch &b) {
  b.FeatureDim = 2;
  b.Features.clear();
  for (int64_t v : b.Blocks.front().SrcIds) {
    b.Features.push_back(static_cast<float>(v));
    b.Features.push_back(static_cast<float>(v) + 0.5f);
  }
}

// Seeds 10, 11. Block 1: 10 <- 12, 10 <- 11, 11 <- 10. Block 0: 10 <- 13,
// 11 <- 10, 11 <- 14, 12 has no in-edge.
MiniBatch handBatch() {
  MiniBatch b;
  b.Epoch = 0;
  b.Step = 3;
  b.Seeds = {10, 11};
  b.Blocks.push_back(makeBlock({10, 11, 12}, {10, 11, 12, 13, 14}, {0, 1, 3, 3},
                               {3, 0, 4}, {200, 201, 202}));
  b.Blocks.push_back(
      makeBlock({10, 11}, {10, 11, 12}, {0, 2, 3}, {2, 1, 0}, {100, 101, 102}));
  handFeatures(b);
  b.Labels = {7, 8};
  return b;
}

// Seeds 10, 11. Block 1: 10 <- 11, 10 <- 12, 11 <- 10. Block 0: 10 <- 13,
// 11 <- 10, 11 <- 14, 12 <- 13.
MiniBatch trimBatch() {
  MiniBatch b;
  b.Epoch = 2;
  b.Step = 5;
  b.Seeds = {10, 11};
  b.Blocks.push_back(makeBlock({10, 11, 12}, {10, 11, 12, 13, 14}, {0, 1, 3, 4},
                               {3, 0, 4, 3}, {200, 201, 202, 203}));
  b.Blocks.push_back(
      makeBlock({10, 11}, {10, 11, 12}, {0, 2, 3}, {1, 2, 0}, {100, 101, 102}));
  handFeatures(b);
  b.Labels = {7, 8};
  return b;
}

std::vector<PreparedBatch> runEpoch(Pipeline &p, uint64_t epoch,
                                    Pipeline *recycleInto = nullptr) {
  std::vector<PreparedBatch> out;
  EXPECT_TRUE(p.startEpoch(epoch).ok());
  while (true) {
    PreparedBatch b;
    bool done;
    Status st = p.next(b, done);
    EXPECT_TRUE(st.ok()) << st.message();
    if (!st.ok() || done)
      break;
    out.push_back(std::move(b));
    if (recycleInto && out.size() > 2) {
      recycleInto->recycle(std::move(out.front()));
      out.erase(out.begin());
    }
  }
  return out;
}
} // namespace

//===----------------------------------------------------------------------===//
// Capacities
//===----------------------------------------------------------------------===//

TEST(FixedSize, CapacitiesCheck) {
  EXPECT_TRUE(caps({8, 6, 4}, {5, 4}).check().ok());
  EXPECT_EQ(caps({8, 6, 4}, {5, 4}).str(), "vertices [8, 6, 4], edges [5, 4]");
  EXPECT_FALSE(caps({4}, {}).check().ok());           // no hop
  EXPECT_FALSE(caps({8, 6}, {5, 4}).check().ok());    // one level short
  EXPECT_FALSE(caps({8, 6, 4}, {0, 4}).check().ok()); // an empty block
  EXPECT_FALSE(caps({8, 0, 4}, {5, 4}).check().ok());
  Status st = caps({5, 6, 4}, {5, 4}).check(); // increasing towards the seeds
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("level 0 has 5 vertices, fewer than level 1 (6)"),
            std::string::npos)
      << st.message();
  EXPECT_FALSE(caps({3, 1}, {2}).check().ok()); // no room for the padding
}

TEST(FixedSize, BoundOnHandGraph) {
  rt::Graph g = smallGraph();
  GraphView v = GraphView::of(g);
  Capacities c;
  // Hop 1 (the seeds), fanout 3, at most 2 destinations: edges min(6, 12),
  // new sources max over n <= 2 of min(6 - n, 3n) = 4. Hop 0, fanout 2, at
  // most 6 destinations: edges min(12, 12), new sources max over n <= 6 of
  // min(6 - n, 2n) = 4 (n = 2).
  ASSERT_TRUE(boundCapacities(samplerOptions({2, 3}), v, 2, c).ok());
  EXPECT_EQ(c.Vertices, (std::vector<int64_t>{11, 7, 3}));
  EXPECT_EQ(c.Edges, (std::vector<int64_t>{12, 6}));
  EXPECT_TRUE(c.check().ok());
  // f = -1: the largest in-degree, 5.
  ASSERT_TRUE(boundCapacities(samplerOptions({-1}), v, 1, c).ok());
  EXPECT_EQ(c.Vertices, (std::vector<int64_t>{7, 2}));
  EXPECT_EQ(c.Edges, (std::vector<int64_t>{5}));
  // A batch larger than the graph: at most 6 seeds; fanout 1 gives
  // max over n <= 6 of min(6 - n, n) = 3 new sources.
  ASSERT_TRUE(boundCapacities(samplerOptions({1}), v, 100, c).ok());
  EXPECT_EQ(c.Vertices, (std::vector<int64_t>{10, 7}));
  EXPECT_EQ(c.Edges, (std::vector<int64_t>{6}));
  // With replacement 3 * 5 draws, duplicates kept: more than the 12 edges.
  ASSERT_TRUE(
      boundCapacities(samplerOptions({5}, SamplerKind::Neighbor, true), v, 3, c)
          .ok());
  EXPECT_EQ(c.Vertices, (std::vector<int64_t>{9, 4}));
  EXPECT_EQ(c.Edges, (std::vector<int64_t>{15}));
  // LABOR: as without replacement.
  ASSERT_TRUE(
      boundCapacities(samplerOptions({2, 3}, SamplerKind::Labor), v, 2, c)
          .ok());
  EXPECT_EQ(c.Vertices, (std::vector<int64_t>{11, 7, 3}));
  EXPECT_EQ(c.Edges, (std::vector<int64_t>{12, 6}));
  // Saturation instead of overflow.
  int64_t huge = INT64_MAX / 2;
  ASSERT_TRUE(
      boundCapacities(samplerOptions({huge, huge}, SamplerKind::Neighbor, true),
                      v, INT64_MAX, c)
          .ok());
  EXPECT_EQ(c.Vertices[2], 7);
  EXPECT_EQ(c.Edges[1], INT64_MAX);
  EXPECT_EQ(c.Edges[0], INT64_MAX);
  EXPECT_TRUE(c.check().ok()) << c.str();
  ASSERT_TRUE(
      boundCapacities(samplerOptions({huge, huge}), v, INT64_MAX, c).ok());
  EXPECT_EQ(c.Edges, (std::vector<int64_t>{12, 12}));
  EXPECT_TRUE(c.check().ok()) << c.str();
  EXPECT_FALSE(boundCapacities(samplerOptions({2}), v, 0, c).ok());
  EXPECT_FALSE(boundCapacities(samplerOptions({}), v, 2, c).ok());

  // Every pair of seeds, over several epochs, fits the bound.
  NeighborSampler s;
  ASSERT_TRUE(NeighborSampler::create(v, samplerOptions({2, 3}), s).ok());
  ASSERT_TRUE(boundCapacities(s.options(), v, 2, c).ok());
  SamplerScratch scratch;
  for (uint64_t epoch = 0; epoch < 20; ++epoch)
    for (int64_t a = 0; a < 6; ++a)
      for (int64_t b = a + 1; b < 6; ++b) {
        MiniBatch mb;
        ASSERT_TRUE(s.sample({a, b}, epoch, a * 6 + b, scratch, mb).ok());
        EXPECT_TRUE(fitsByHand(c, countsOf(mb)));
      }
}

TEST(FixedSize, BoundNeverOverflowsOnCora) {
  NEED_CORA();
  struct Case {
    NeighborSamplerOptions O;
    int64_t Batch;
  };
  std::vector<Case> cases = {
      {samplerOptions({10, 5}), 64},
      {samplerOptions({4, 3, 2}, SamplerKind::Neighbor, true), 32},
      {samplerOptions({10, 5}, SamplerKind::Labor), 64},
      {samplerOptions({-1, -1}), 8},
  };
  for (const Case &k : cases) {
    NeighborSampler s = coraSampler(k.O);
    ItemSampler items = coraItems(k.Batch);
    Capacities c;
    ASSERT_TRUE(boundCapacities(k.O, GraphView::of(C.G), k.Batch, c).ok());
    ASSERT_TRUE(c.check().ok());
    EXPECT_EQ(c.Vertices.back(), k.Batch + 1);
    Padder padder;
    int64_t batches = 0;
    for (uint64_t epoch = 0; epoch < 3 && batches < 100; ++epoch)
      for (int64_t step = 0; step < items.numBatches() && batches < 100;
           ++step, ++batches) {
        MiniBatch b = sampled(items, s, epoch, step);
        Counts n = countsOf(b);
        EXPECT_TRUE(fitsByHand(c, n));
        PadOutcome out;
        Status st = padder.pad(b, c, Oversize::Error, out);
        ASSERT_TRUE(st.ok()) << st.message();
        EXPECT_EQ(out.Result, PadResult::Fitted);
      }
  }
}

TEST(FixedSize, FitIsBetweenQuantileAndBound) {
  NEED_CORA();
  NeighborSamplerOptions o = samplerOptions({10, 5});
  NeighborSampler s = coraSampler(o);
  ItemSampler items = coraItems(64);
  Capacities bound;
  ASSERT_TRUE(boundCapacities(o, GraphView::of(C.G), 64, bound).ok());

  FitOptions fo;
  fo.Quantile = 0.9;
  fo.Margin = 0.1;
  fo.Batches = 60;
  Capacities fit;
  Status st = fitCapacities(s, items, fo, fit);
  ASSERT_TRUE(st.ok()) << st.message();
  ASSERT_TRUE(fit.check().ok());

  // The same 60 batches: steps 0..42 of epoch 0, then 0..16 of epoch 1.
  ASSERT_EQ(items.numBatches(), 43);
  std::vector<std::vector<int64_t>> level(3), other(2), edges(2);
  for (int64_t k = 0; k < 60; ++k) {
    MiniBatch b = sampled(items, s, k / 43, k % 43);
    Counts n = countsOf(b);
    for (int l = 0; l < 3; ++l)
      level[l].push_back(n.N[l]);
    for (int h = 0; h < 2; ++h) {
      other[h].push_back(n.N[h] - n.N[h + 1]);
      edges[h].push_back(n.E[h]);
    }
  }
  // The 0.9 quantile of 60 counts is the 54th smallest; with a margin of
  // 0.1, ceil(1.1 x) = (11 x + 9) / 10.
  auto q = [](std::vector<int64_t> v) {
    std::sort(v.begin(), v.end());
    return v[53];
  };
  auto grow = [](int64_t x) { return (11 * x + 9) / 10; };
  int64_t v2 = std::min(bound.Vertices[2], grow(q(level[2])) + 1);
  int64_t v1 = std::min(bound.Vertices[1], std::max(v2 + grow(q(other[1])),
                                                    grow(q(level[1])) + 1));
  int64_t v0 = std::min(bound.Vertices[0],
                        std::max(v1 + grow(q(other[0])), grow(q(level[0]))));
  EXPECT_EQ(fit.Vertices, (std::vector<int64_t>{v0, v1, v2}));
  EXPECT_EQ(fit.Edges, (std::vector<int64_t>{
                           std::min(bound.Edges[0], grow(q(edges[0]))),
                           std::min(bound.Edges[1], grow(q(edges[1])))}));
  // Never above the bound, never below the quantile.
  for (int l = 0; l < 3; ++l) {
    EXPECT_LE(fit.Vertices[l], bound.Vertices[l]);
    EXPECT_GE(fit.Vertices[l], q(level[l]) + (l > 0 ? 1 : 0));
  }
  for (int h = 0; h < 2; ++h) {
    EXPECT_LE(fit.Edges[h], bound.Edges[h]);
    EXPECT_GE(fit.Edges[h], q(edges[h]));
    EXPECT_GE(fit.Vertices[h] - fit.Vertices[h + 1], q(other[h]));
  }
  // The seed level: full batches of 64, and 64 * 1.1 rounds up to 71,
  // then the bound (65) clamps it.
  EXPECT_EQ(fit.Vertices[2], 65);

  // Quantile 1 and no margin: the largest counts.
  fo.Quantile = 1;
  fo.Margin = 0;
  ASSERT_TRUE(fitCapacities(s, items, fo, fit).ok());
  EXPECT_EQ(fit.Edges[0], *std::max_element(edges[0].begin(), edges[0].end()));
  EXPECT_EQ(fit.Edges[1], *std::max_element(edges[1].begin(), edges[1].end()));
  EXPECT_EQ(fit.Vertices[2], 65);

  fo.Quantile = 0;
  EXPECT_FALSE(fitCapacities(s, items, fo, fit).ok());
  fo.Quantile = 0.5;
  fo.Batches = 0;
  EXPECT_FALSE(fitCapacities(s, items, fo, fit).ok());
  fo.Batches = 10;
  fo.Margin = -0.5;
  EXPECT_FALSE(fitCapacities(s, items, fo, fit).ok());
}

//===----------------------------------------------------------------------===//
// The padded layout
//===----------------------------------------------------------------------===//

TEST(FixedSize, HandBuiltBatchLayout) {
  MiniBatch b = handBatch();
  PadOutcome out;
  Status st = padBatch(b, caps({8, 6, 4}, {5, 4}), Oversize::Error, out);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(out.Result, PadResult::Fitted);
  EXPECT_TRUE(b.Padded);
  // Level 2: [10, 11, pad, pad]; level 1: level 2, then 12, then padding;
  // level 0: level 1, then 13, 14.
  const Block &b1 = b.Blocks[1], &b0 = b.Blocks[0];
  EXPECT_EQ(b1.DstIds, (std::vector<int64_t>{10, 11, -1, -1}));
  EXPECT_EQ(b1.SrcIds, (std::vector<int64_t>{10, 11, -1, -1, 12, -1}));
  EXPECT_EQ(b0.DstIds, b1.SrcIds);
  EXPECT_EQ(b0.SrcIds, (std::vector<int64_t>{10, 11, -1, -1, 12, -1, 13, 14}));
  EXPECT_EQ(b.RealPos, (std::vector<std::vector<int64_t>>{
                           {0, 1, 4, 6, 7}, {0, 1, 4}, {0, 1}}));
  EXPECT_EQ(b.VertexMask,
            (std::vector<std::vector<uint8_t>>{
                {1, 1, 0, 0, 1, 0, 1, 1}, {1, 1, 0, 0, 1, 0}, {1, 1, 0, 0}}));
  // Block 1: one padding edge, a self-loop of the first padding
  // destination (2).
  EXPECT_EQ(b1.NumDst, 4);
  EXPECT_EQ(b1.NumSrc, 6);
  EXPECT_EQ(b1.Ptr, (std::vector<int64_t>{0, 2, 3, 4, 4}));
  EXPECT_EQ(b1.Src, (std::vector<int64_t>{4, 1, 0, 2}));
  EXPECT_EQ(b1.EdgeId, (std::vector<int64_t>{100, 101, 102, -1}));
  // Block 0: two padding edges, round-robin over padding destinations
  // 2, 3 and 5.
  EXPECT_EQ(b0.NumDst, 6);
  EXPECT_EQ(b0.NumSrc, 8);
  EXPECT_EQ(b0.Ptr, (std::vector<int64_t>{0, 1, 3, 4, 5, 5, 5}));
  EXPECT_EQ(b0.Src, (std::vector<int64_t>{6, 0, 7, 2, 3}));
  EXPECT_EQ(b0.EdgeId, (std::vector<int64_t>{200, 201, 202, -1, -1}));
  EXPECT_EQ(b.EdgeMask,
            (std::vector<std::vector<uint8_t>>{{1, 1, 1, 0, 0}, {1, 1, 1, 0}}));
  EXPECT_EQ(b.Features, (std::vector<float>{10, 10.5, 11, 11.5, 0, 0, 0, 0, 12,
                                            12.5, 0, 0, 13, 13.5, 14, 14.5}));
  EXPECT_EQ(b.Labels, (std::vector<int64_t>{7, 8, -1, -1}));
  EXPECT_EQ(b.labelMask(), (std::vector<uint8_t>{1, 1, 0, 0}));
  EXPECT_EQ(b.Seeds, (std::vector<int64_t>{10, 11}));
  EXPECT_EQ(out.RealVertices, (std::vector<int64_t>{5, 3, 2}));
  EXPECT_EQ(out.PaddedVertices, (std::vector<int64_t>{8, 6, 4}));
  EXPECT_EQ(out.RealEdges, (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(out.PaddedEdges, (std::vector<int64_t>{5, 4}));
  // A padded batch is not padded again.
  EXPECT_FALSE(padBatch(b, caps({8, 6, 4}, {5, 4}), Oversize::Error, out).ok());

  // The padded block as a runtime graph: real destinations keep their
  // in-degree, real sources their out-degree.
  rt::Graph g;
  ASSERT_TRUE(b0.toGraph(g).ok());
  EXPECT_EQ(g.numDst(), 6);
  EXPECT_EQ(g.numEdges(), 5);
  EXPECT_EQ(g.inDegree(0), 1);
  EXPECT_EQ(g.inDegree(1), 2);
  EXPECT_EQ(g.inDegree(4), 0);
}

TEST(FixedSize, PaddedLayoutOnCora) {
  NEED_CORA();
  NeighborSamplerOptions o = samplerOptions({4, 3, 2});
  NeighborSampler s = coraSampler(o);
  ItemSampler items = coraItems(32);
  Capacities c;
  ASSERT_TRUE(boundCapacities(o, GraphView::of(C.G), 32, c).ok());
  Padder padder;
  for (int64_t step = 0; step < 25; ++step) {
    MiniBatch ref = sampled(items, s, 1, step);
    MiniBatch b = ref;
    PadOutcome out;
    ASSERT_TRUE(padder.pad(b, c, Oversize::Error, out).ok());
    Counts n = countsOf(ref);
    const int h = 3;
    ASSERT_EQ(b.RealPos.size(), 4u);
    // Sizes are the capacities; dst-first; the blocks chain.
    for (int k = 0; k < h; ++k) {
      const Block &x = b.Blocks[k];
      EXPECT_EQ(x.NumSrc, c.Vertices[k]);
      EXPECT_EQ(x.NumDst, c.Vertices[k + 1]);
      ASSERT_EQ(static_cast<int64_t>(x.Ptr.size()), c.Vertices[k + 1] + 1);
      ASSERT_EQ(x.numEdges(), c.Edges[k]);
      ASSERT_EQ(x.Ptr.back(), c.Edges[k]);
      ASSERT_EQ(static_cast<int64_t>(x.EdgeId.size()), c.Edges[k]);
      ASSERT_EQ(static_cast<int64_t>(x.SrcIds.size()), c.Vertices[k]);
      for (int64_t i = 0; i < x.NumDst; ++i)
        ASSERT_EQ(x.SrcIds[i], x.DstIds[i]);
      if (k + 1 < h) {
        EXPECT_EQ(x.DstIds, b.Blocks[k + 1].SrcIds);
      }
    }
    // Vertices: the real ones where the maps say, with their ids; -1
    // elsewhere; the masks count them.
    for (int l = 0; l <= h; ++l) {
      const std::vector<int64_t> &ids = levelIds(b, l);
      const std::vector<int64_t> &refIds = levelIds(ref, l);
      ASSERT_EQ(static_cast<int64_t>(b.RealPos[l].size()), n.N[l]);
      EXPECT_EQ(ones(b.VertexMask[l]), n.N[l]);
      EXPECT_EQ(out.RealVertices[l], n.N[l]);
      for (int64_t i = 0; i < n.N[l]; ++i)
        EXPECT_EQ(ids[b.RealPos[l][i]], refIds[i]);
      for (size_t p = 0; p < ids.size(); ++p)
        EXPECT_EQ(ids[p] == -1, b.VertexMask[l][p] == 0);
    }
    for (int64_t i = 0; i < n.N[h]; ++i)
      EXPECT_EQ(b.RealPos[h][i], i);
    // Edges.
    for (int k = 0; k < h; ++k) {
      const Block &x = b.Blocks[k], &r = ref.Blocks[k];
      const std::vector<uint8_t> &srcReal = b.VertexMask[k];
      const std::vector<uint8_t> &dstReal = b.VertexMask[k + 1];
      EXPECT_EQ(ones(b.EdgeMask[k]), n.E[k]);
      std::vector<int64_t> outDeg(x.NumSrc, 0), padCounts;
      for (int64_t p = 0; p < x.NumDst; ++p) {
        int64_t count = x.Ptr[p + 1] - x.Ptr[p];
        if (!dstReal[p])
          padCounts.push_back(count);
        for (int64_t q = x.Ptr[p]; q < x.Ptr[p + 1]; ++q) {
          if (b.EdgeMask[k][q]) {
            ++outDeg[x.Src[q]];
            continue;
          }
          // A padding edge: a self-loop of a padding destination, from a
          // padding source.
          EXPECT_FALSE(dstReal[p]);
          EXPECT_EQ(x.Src[q], p);
          EXPECT_FALSE(srcReal[x.Src[q]]);
          EXPECT_EQ(x.EdgeId[q], -1);
        }
      }
      // Round-robin: the padding destinations' shares differ by at most
      // one, the larger shares first.
      int64_t padEdges = c.Edges[k] - n.E[k];
      int64_t d = static_cast<int64_t>(padCounts.size());
      ASSERT_GE(d, 1);
      for (int64_t i = 0; i < d; ++i)
        EXPECT_EQ(padCounts[i], padEdges / d + (i < padEdges % d ? 1 : 0));
      // Real edges: exactly the unpadded block's, in order, through the maps.
      std::vector<int64_t> refOut(r.NumSrc, 0);
      for (int64_t j = 0; j < r.NumDst; ++j) {
        int64_t p = b.RealPos[k + 1][j];
        ASSERT_EQ(x.Ptr[p + 1] - x.Ptr[p], r.Ptr[j + 1] - r.Ptr[j]);
        for (int64_t e = 0; e < r.Ptr[j + 1] - r.Ptr[j]; ++e) {
          int64_t q = x.Ptr[p] + e, qr = r.Ptr[j] + e;
          EXPECT_TRUE(b.EdgeMask[k][q]);
          EXPECT_EQ(x.Src[q], b.RealPos[k][r.Src[qr]]);
          EXPECT_EQ(x.SrcIds[x.Src[q]], r.SrcIds[r.Src[qr]]);
          EXPECT_EQ(x.EdgeId[q], r.EdgeId[qr]);
          ++refOut[r.Src[qr]];
        }
      }
      for (int64_t i = 0; i < r.NumSrc; ++i)
        EXPECT_EQ(outDeg[b.RealPos[k][i]], refOut[i]);
    }
    // Features: real rows as unpadded, padding rows zero.
    ASSERT_EQ(static_cast<int64_t>(b.Features.size()), c.Vertices[0] * C.Dim);
    std::vector<bool> seen(c.Vertices[0], false);
    for (int64_t i = 0; i < n.N[0]; ++i) {
      int64_t p = b.RealPos[0][i];
      seen[p] = true;
      for (int64_t f = 0; f < C.Dim; ++f)
        ASSERT_EQ(b.Features[p * C.Dim + f], ref.Features[i * C.Dim + f]);
    }
    for (int64_t p = 0; p < c.Vertices[0]; ++p) {
      if (!seen[p]) {
        for (int64_t f = 0; f < C.Dim; ++f)
          ASSERT_EQ(b.Features[p * C.Dim + f], 0.0f);
      }
    }
    // Labels.
    ASSERT_EQ(static_cast<int64_t>(b.Labels.size()), c.Vertices[h]);
    for (int64_t i = 0; i < c.Vertices[h]; ++i)
      EXPECT_EQ(b.Labels[i], i < n.N[h] ? ref.Labels[i] : -1);
    EXPECT_EQ(ones(b.labelMask()), n.N[h]);
  }
}

TEST(FixedSize, PaddingIsDeterministic) {
  NEED_CORA();
  NeighborSamplerOptions o = samplerOptions({5, 5});
  NeighborSampler s = coraSampler(o);
  ItemSampler items = coraItems(32);
  FitOptions fo;
  fo.Quantile = 0.3;
  fo.Margin = 0;
  fo.Batches = 20;
  Capacities tight;
  ASSERT_TRUE(fitCapacities(s, items, fo, tight).ok());
  for (Oversize policy : {Oversize::Error, Oversize::Trim}) {
    Capacities c = tight;
    if (policy == Oversize::Error) {
      ASSERT_TRUE(boundCapacities(o, GraphView::of(C.G), 32, c).ok());
    }
    Padder padder;
    for (int64_t step = 0; step < 6; ++step) {
      MiniBatch a = sampled(items, s, 0, step), b = a;
      MiniBatch other = sampled(items, s, 0, step + 7);
      PadOutcome oa, ob, oo;
      ASSERT_TRUE(padder.pad(a, c, policy, oa).ok());
      ASSERT_TRUE(padder.pad(other, c, policy, oo).ok());
      ASSERT_TRUE(padBatch(b, c, policy, ob).ok());
      expectSameBatch(a, b);
      EXPECT_EQ(oa.Result, ob.Result);
      EXPECT_EQ(oa.TrimmedEdges, ob.TrimmedEdges);
      EXPECT_EQ(oa.RealEdges, ob.RealEdges);
    }
  }
}

TEST(FixedSize, PaddingARecycledBatchDoesNotAllocate) {
  NEED_CORA();
  NeighborSamplerOptions o = samplerOptions({5, 5});
  NeighborSampler s = coraSampler(o);
  ItemSampler items = coraItems(32);
  Capacities c;
  ASSERT_TRUE(boundCapacities(o, GraphView::of(C.G), 32, c).ok());
  Padder padder;
  SamplerScratch scratch;
  MiniBatch b;
  PadOutcome out;
  std::vector<int64_t> seeds;
  for (int64_t step = 0; step < 8; ++step) {
    ASSERT_TRUE(items.batch(0, step, seeds).ok());
    ASSERT_TRUE(s.sample(seeds, 0, step, scratch, b).ok());
    fetchByHand(b);
    gAllocations = 0;
    gCounting = true;
    Status st = padder.pad(b, c, Oversize::Error, out);
    gCounting = false;
    ASSERT_TRUE(st.ok()) << st.message();
    if (step >= 1) {
      EXPECT_EQ(gAllocations.load(), 0) << "step " << step;
    }
  }
}

//===----------------------------------------------------------------------===//
// Oversize strategies
//===----------------------------------------------------------------------===//

TEST(FixedSize, ErrorNamesTheBlockAndCounts) {
  struct Case {
    Capacities Caps;
    std::string Message;
  };
  std::vector<Case> cases = {
      {caps({8, 6, 4}, {5, 2}),
       "batch (epoch 0, step 3) does not fit: block 1 has 3 sampled edges, "
       "capacity 2"},
      {caps({7, 6, 4}, {5, 4}),
       "batch (epoch 0, step 3) does not fit: block 0 has 2 source vertices "
       "besides its destinations, capacity 1"},
      {caps({8, 6, 2}, {5, 4}),
       "batch (epoch 0, step 3) does not fit: block 1 has 2 destination "
       "vertices (the seeds), capacity 1 (and one padding vertex)"},
  };
  for (const Case &k : cases) {
    MiniBatch b = handBatch(), before = b;
    PadOutcome out;
    Status st = padBatch(b, k.Caps, Oversize::Error, out);
    ASSERT_FALSE(st.ok());
    EXPECT_EQ(st.message(), k.Message);
    expectSameBatch(b, before);
    // Skip leaves it alone too.
    ASSERT_TRUE(padBatch(b, k.Caps, Oversize::Skip, out).ok());
    EXPECT_EQ(out.Result, PadResult::Skipped);
    expectSameBatch(b, before);
  }
  // Just enough: 2 seeds and a padding vertex, block 1's other vertex in
  // 4 - 3, block 0's two in 8 - 4.
  MiniBatch b = handBatch();
  PadOutcome out;
  EXPECT_TRUE(padBatch(b, caps({8, 4, 3}, {5, 4}), Oversize::Error, out).ok());
  EXPECT_EQ(out.Result, PadResult::Fitted);
}

TEST(FixedSize, TrimHandBuilt) {
  MiniBatch b = trimBatch();
  PadOutcome out;
  Status st = padBatch(b, caps({7, 5, 3}, {4, 2}), Oversize::Trim, out);
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_EQ(out.Result, PadResult::Trimmed);
  // Block 1 keeps one in-edge per seed (10 <- 11, 11 <- 10): 12 is no
  // longer reached, and block 0 loses it and its edge 12 <- 13.
  EXPECT_EQ(out.TrimmedEdges, 2);
  const Block &b1 = b.Blocks[1], &b0 = b.Blocks[0];
  EXPECT_EQ(b1.DstIds, (std::vector<int64_t>{10, 11, -1}));
  EXPECT_EQ(b1.SrcIds, (std::vector<int64_t>{10, 11, -1, -1, -1}));
  EXPECT_EQ(b1.Ptr, (std::vector<int64_t>{0, 1, 2, 2}));
  EXPECT_EQ(b1.Src, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(b1.EdgeId, (std::vector<int64_t>{100, 102}));
  EXPECT_EQ(b0.SrcIds, (std::vector<int64_t>{10, 11, -1, -1, -1, 13, 14}));
  EXPECT_EQ(b0.Ptr, (std::vector<int64_t>{0, 1, 3, 4, 4, 4}));
  EXPECT_EQ(b0.Src, (std::vector<int64_t>{5, 0, 6, 2}));
  EXPECT_EQ(b0.EdgeId, (std::vector<int64_t>{200, 201, 202, -1}));
  EXPECT_EQ(b.RealPos,
            (std::vector<std::vector<int64_t>>{{0, 1, 5, 6}, {0, 1}, {0, 1}}));
  EXPECT_EQ(b.Features, (std::vector<float>{10, 10.5, 11, 11.5, 0, 0, 0, 0, 0,
                                            0, 13, 13.5, 14, 14.5}));
  EXPECT_EQ(b.Labels, (std::vector<int64_t>{7, 8, -1}));
  EXPECT_EQ(out.RealVertices, (std::vector<int64_t>{4, 2, 2}));
  EXPECT_EQ(out.RealEdges, (std::vector<int64_t>{3, 2}));

  // Block 1 fits whole (3 edges, 12 in 4 - 3); block 0 has 4 edges for 3:
  // each destination's first in-edge (t = 1) makes 3, so 11 <- 14 is
  // dropped and 14 with it.
  b = trimBatch();
  ASSERT_TRUE(padBatch(b, caps({7, 4, 3}, {3, 3}), Oversize::Trim, out).ok());
  EXPECT_EQ(out.Result, PadResult::Trimmed);
  EXPECT_EQ(realIds(b, 1), (std::vector<int64_t>{10, 11, 12}));
  EXPECT_EQ(out.TrimmedEdges, 1);
  EXPECT_EQ(b.Blocks[0].EdgeId, (std::vector<int64_t>{200, 201, 203}));
  EXPECT_EQ(realIds(b, 0), (std::vector<int64_t>{10, 11, 12, 13}));

  // Even one in-edge per destination is too many.
  b = trimBatch();
  MiniBatch before = b;
  st = padBatch(b, caps({7, 5, 3}, {4, 1}), Oversize::Trim, out);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.message(),
            "batch (epoch 2, step 5) does not fit, and trimming could not fit "
            "it: with one in-edge per destination, block 1 has 2 sampled "
            "edges, capacity 1");
  expectSameBatch(b, before);
}

TEST(FixedSize, TrimOnCora) {
  NEED_CORA();
  NeighborSamplerOptions o = samplerOptions({5, 5});
  NeighborSampler s = coraSampler(o);
  ItemSampler items = coraItems(32);
  FitOptions fo;
  fo.Quantile = 0.3;
  fo.Margin = 0;
  fo.Batches = 30;
  Capacities c;
  ASSERT_TRUE(fitCapacities(s, items, fo, c).ok());
  Padder padder;
  int64_t trimmed = 0;
  for (int64_t step = 0; step < 40; ++step) {
    MiniBatch ref = sampled(items, s, 0, step);
    MiniBatch b = ref;
    PadOutcome out;
    Status st = padder.pad(b, c, Oversize::Trim, out);
    ASSERT_TRUE(st.ok()) << st.message();
    Counts n = countsOf(ref);
    if (fitsByHand(c, n)) {
      EXPECT_EQ(out.Result, PadResult::Fitted);
      continue;
    }
    EXPECT_EQ(out.Result, PadResult::Trimmed);
    ++trimmed;
    const size_t h = 2;
    // The seeds stay.
    EXPECT_EQ(realIds(b, h), ref.Seeds);
    int64_t keptEdges = 0;
    Counts kept;
    for (size_t l = 0; l <= h; ++l)
      kept.N.push_back(static_cast<int64_t>(b.RealPos[l].size()));
    for (size_t k = 0; k < h; ++k) {
      const Block &x = b.Blocks[k], &r = ref.Blocks[k];
      // The original edges as (destination, source, edge id), and each
      // original destination's in-degree.
      std::multiset<std::tuple<int64_t, int64_t, int64_t>> original;
      std::map<int64_t, int64_t> inDegree;
      for (int64_t j = 0; j < r.NumDst; ++j)
        for (int64_t q = r.Ptr[j]; q < r.Ptr[j + 1]; ++q) {
          original.insert({r.DstIds[j], r.SrcIds[r.Src[q]], r.EdgeId[q]});
          ++inDegree[r.DstIds[j]];
        }
      std::vector<int64_t> dsts = realIds(b, k + 1);
      std::set<int64_t> reached(dsts.begin(), dsts.end());
      int64_t edges = 0;
      for (int64_t p = 0; p < x.NumDst; ++p) {
        int64_t realIn = 0;
        for (int64_t q = x.Ptr[p]; q < x.Ptr[p + 1]; ++q) {
          if (!b.EdgeMask[k][q])
            continue;
          auto e =
              std::make_tuple(x.DstIds[p], x.SrcIds[x.Src[q]], x.EdgeId[q]);
          // A subset of the original edges.
          auto it = original.find(e);
          ASSERT_TRUE(it != original.end());
          original.erase(it);
          reached.insert(x.SrcIds[x.Src[q]]);
          ++realIn;
          ++edges;
        }
        // Every kept destination that had an in-edge keeps one.
        if (b.VertexMask[k + 1][p] && inDegree[x.DstIds[p]] > 0) {
          EXPECT_GE(realIn, 1)
              << "block " << k << " destination " << x.DstIds[p];
        }
      }
      kept.E.push_back(edges);
      keptEdges += edges;
      // Level k is exactly what block k still reaches.
      std::vector<int64_t> level = realIds(b, k);
      EXPECT_EQ(std::set<int64_t>(level.begin(), level.end()), reached);
      EXPECT_EQ(level.size(), reached.size());
    }
    EXPECT_EQ(out.TrimmedEdges, ref.numSampledEdges() - keptEdges);
    EXPECT_EQ(out.RealEdges, kept.E);
    EXPECT_TRUE(fitsByHand(c, kept));
    // Features follow the kept input vertices.
    std::vector<int64_t> inputs = realIds(b, 0);
    for (size_t i = 0; i < inputs.size(); ++i)
      for (int64_t f = 0; f < C.Dim; ++f)
        ASSERT_EQ(b.Features[b.RealPos[0][i] * C.Dim + f],
                  C.Data.X[inputs[i] * C.Dim + f]);
    for (size_t i = 0; i < ref.Seeds.size(); ++i)
      EXPECT_EQ(b.Labels[i], C.Data.Y[ref.Seeds[i]]);
  }
  EXPECT_GT(trimmed, 0);
}

TEST(FixedSize, SkipThroughThePipeline) {
  NEED_CORA();
  NeighborSamplerOptions o = samplerOptions({5, 5});
  NeighborSampler s = coraSampler(o);
  ItemSampler items = coraItems(32, 9);
  FitOptions fo;
  fo.Quantile = 0.5;
  fo.Margin = 0;
  fo.Batches = 40;
  Capacities c;
  ASSERT_TRUE(fitCapacities(s, items, fo, c).ok());

  // The batches that fit, by hand.
  std::vector<MiniBatch> expected;
  for (int64_t step = 0; step < items.numBatches(); ++step) {
    MiniBatch b = sampled(items, s, 0, step);
    if (!fitsByHand(c, countsOf(b)))
      continue;
    PadOutcome out;
    ASSERT_TRUE(padBatch(b, c, Oversize::Error, out).ok());
    expected.push_back(std::move(b));
  }
  int64_t skipped = items.numBatches() - static_cast<int64_t>(expected.size());
  ASSERT_GT(skipped, 0);
  ASSERT_FALSE(expected.empty());

  auto features = localFeatures(C.Data.X.data(), C.N, C.Dim);
  auto seeds = seedsOf(items);
  for (int workers : {0, 2}) {
    PipelineOptions po;
    po.Workers = workers;
    po.Prefetch = 3;
    po.BuildGraphs = true;
    po.FixedSize = FixedSizeOptions{c, Oversize::Skip};
    std::unique_ptr<Pipeline> p;
    ASSERT_TRUE(
        Pipeline::create(*seeds, &s, features.get(), C.Data.Y.data(), po, p)
            .ok());
    std::vector<PreparedBatch> got = runEpoch(*p, 0);
    ASSERT_EQ(got.size(), expected.size());
    int64_t real = 0, realEdges = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      expectSameBatch(got[i].Batch, expected[i]);
      ASSERT_EQ(got[i].Graphs.size(), 2u);
      for (int k = 0; k < 2; ++k) {
        EXPECT_EQ(got[i].Graphs[k].numSrc(), c.Vertices[k]);
        EXPECT_EQ(got[i].Graphs[k].numDst(), c.Vertices[k + 1]);
        EXPECT_EQ(got[i].Graphs[k].numEdges(), c.Edges[k]);
        realEdges += ones(got[i].Batch.EdgeMask[k]);
      }
      for (const std::vector<uint8_t> &m : got[i].Batch.VertexMask)
        real += ones(m);
    }
    PipelineReport r = p->report();
    int64_t delivered = static_cast<int64_t>(expected.size());
    EXPECT_EQ(r.Batches, delivered);
    EXPECT_EQ(r.SkippedBatches, skipped);
    EXPECT_EQ(r.TrimmedBatches, 0);
    EXPECT_EQ(r.RealVertices, real);
    EXPECT_EQ(r.PaddedVertices,
              delivered * (c.Vertices[0] + c.Vertices[1] + c.Vertices[2]));
    EXPECT_EQ(r.RealEdges, realEdges);
    EXPECT_EQ(r.SampledEdges, realEdges);
    EXPECT_EQ(r.PaddedEdges, delivered * (c.Edges[0] + c.Edges[1]));
    EXPECT_NE(r.summary().find(std::to_string(skipped) + " skipped"),
              std::string::npos)
        << r.summary();
  }

  // Error through the pipeline: the first batch that does not fit ends the
  // epoch with its message.
  PipelineOptions po;
  po.Workers = 2;
  po.FixedSize = FixedSizeOptions{c, Oversize::Error};
  std::unique_ptr<Pipeline> p;
  ASSERT_TRUE(
      Pipeline::create(*seeds, &s, features.get(), C.Data.Y.data(), po, p)
          .ok());
  ASSERT_TRUE(p->startEpoch(0).ok());
  Status st;
  int64_t delivered = 0;
  while (true) {
    PreparedBatch b;
    bool done = false;
    st = p->next(b, done);
    if (!st.ok() || done)
      break;
    ++delivered;
  }
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("does not fit: block"), std::string::npos)
      << st.message();
  EXPECT_LT(delivered, items.numBatches());

  // Capacities that do not match the sampler.
  po.FixedSize = FixedSizeOptions{caps({8, 4}, {5}), Oversize::Skip};
  EXPECT_FALSE(
      Pipeline::create(*seeds, &s, features.get(), C.Data.Y.data(), po, p)
          .ok());
  po.FixedSize = FixedSizeOptions{c, Oversize::Skip};
  po.Sample = false;
  EXPECT_FALSE(
      Pipeline::create(*seeds, &s, features.get(), C.Data.Y.data(), po, p)
          .ok());
}

TEST(FixedSize, TrimAndRecycleThroughThePipeline) {
  NEED_CORA();
  NeighborSamplerOptions o = samplerOptions({5, 5});
  NeighborSampler s = coraSampler(o);
  ItemSampler items = coraItems(32, 4);
  FitOptions fo;
  fo.Quantile = 0.4;
  fo.Margin = 0;
  fo.Batches = 40;
  Capacities c;
  ASSERT_TRUE(fitCapacities(s, items, fo, c).ok());
  auto features = localFeatures(C.Data.X.data(), C.N, C.Dim);
  auto seeds = seedsOf(items);
  PipelineOptions po;
  po.Workers = 2;
  po.Prefetch = 2;
  po.FixedSize = FixedSizeOptions{c, Oversize::Trim};
  std::unique_ptr<Pipeline> plain, recycled;
  ASSERT_TRUE(
      Pipeline::create(*seeds, &s, features.get(), C.Data.Y.data(), po, plain)
          .ok());
  ASSERT_TRUE(Pipeline::create(*seeds, &s, features.get(), C.Data.Y.data(), po,
                               recycled)
                  .ok());
  std::vector<PreparedBatch> want = runEpoch(*plain, 1);
  ASSERT_EQ(static_cast<int64_t>(want.size()), items.numBatches());
  // By hand: every batch padded with Trim.
  int64_t trimmedBatches = 0, trimmedEdges = 0;
  for (int64_t step = 0; step < items.numBatches(); ++step) {
    MiniBatch b = sampled(items, s, 1, step);
    PadOutcome out;
    ASSERT_TRUE(padBatch(b, c, Oversize::Trim, out).ok());
    trimmedBatches += out.Result == PadResult::Trimmed;
    trimmedEdges += out.TrimmedEdges;
    expectSameBatch(want[step].Batch, b);
  }
  ASSERT_GT(trimmedBatches, 0);
  PipelineReport r = plain->report();
  EXPECT_EQ(r.TrimmedBatches, trimmedBatches);
  EXPECT_EQ(r.TrimmedEdges, trimmedEdges);
  EXPECT_EQ(r.SkippedBatches, 0);

  // Recycled storage, over two epochs, gives the same batches.
  for (int round = 0; round < 2; ++round) {
    EXPECT_TRUE(recycled->startEpoch(1).ok());
    for (int64_t step = 0;; ++step) {
      PreparedBatch b;
      bool done;
      ASSERT_TRUE(recycled->next(b, done).ok());
      if (done)
        break;
      expectSameBatch(b.Batch, want[step].Batch);
      recycled->recycle(std::move(b));
    }
  }
}
