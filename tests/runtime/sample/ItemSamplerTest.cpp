//===- ItemSamplerTest.cpp - Tests of the item samplers -------------------===//
//
// Part of gnnc. Batches against hand-written ones, GraphBolt's worked table
// of DistributedItemSampler (15 items, 4 replicas, batch size 2), and the
// shuffle against statistical bounds.
//
//===----------------------------------------------------------------------===//

#include "gnnc/sample/ItemSampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

using namespace gnnc::sample;
using Batches = std::vector<std::vector<int64_t>>;

namespace {
std::vector<int64_t> iota(int64_t n, int64_t from = 0) {
  std::vector<int64_t> v(n);
  std::iota(v.begin(), v.end(), from);
  return v;
}

template <typename S> Batches epochOf(const S &s, uint64_t epoch) {
  Batches out;
  for (int64_t step = 0; step < s.numBatches(); ++step) {
    std::vector<int64_t> b;
    EXPECT_TRUE(s.batch(epoch, step, b).ok());
    out.push_back(b);
  }
  return out;
}

ItemSampler makeSampler(std::vector<int64_t> items, int64_t batch,
                        bool shuffle, bool dropLast, uint64_t seed = 7) {
  ItemSamplerOptions o;
  o.BatchSize = batch;
  o.Shuffle = shuffle;
  o.DropLast = dropLast;
  o.Seed = seed;
  ItemSampler s;
  EXPECT_TRUE(ItemSampler::create(std::move(items), o, s).ok());
  return s;
}

DistributedItemSampler makeDist(int64_t items, int rank, int ranks,
                                bool shuffle, bool dropLast, bool uneven,
                                ItemSplit split = ItemSplit::SplitItems) {
  DistributedItemSamplerOptions o;
  o.BatchSize = 2;
  o.Shuffle = shuffle;
  o.DropLast = dropLast;
  o.DropUnevenInputs = uneven;
  o.Split = split;
  o.Seed = 11;
  DistributedItemSampler s;
  EXPECT_TRUE(
      DistributedItemSampler::create(iota(items), o, rank, ranks, s).ok());
  return s;
}
} // namespace

TEST(ItemSampler, BatchesInOrder) {
  ItemSampler s = makeSampler(iota(10), 4, false, false);
  EXPECT_EQ(s.numBatches(), 3);
  EXPECT_EQ(epochOf(s, 0), (Batches{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9}}));
  ItemSampler d = makeSampler(iota(10), 4, false, true);
  EXPECT_EQ(d.numBatches(), 2);
  EXPECT_EQ(epochOf(d, 3), (Batches{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  // Items are whatever ids the caller gives, e.g. a mask's.
  std::vector<uint8_t> mask = {0, 1, 1, 0, 1};
  EXPECT_EQ(ItemSampler::itemsOfMask(mask), (std::vector<int64_t>{1, 2, 4}));
  ItemSampler m = makeSampler(ItemSampler::itemsOfMask(mask), 2, false, false);
  EXPECT_EQ(epochOf(m, 0), (Batches{{1, 2}, {4}}));
}

TEST(ItemSampler, ShuffleIsAPermutationPerEpochAndRepeatable) {
  ItemSampler s = makeSampler(iota(1000), 64, true, false);
  std::set<std::vector<int64_t>> orders;
  for (uint64_t epoch = 0; epoch < 4; ++epoch) {
    Batches b = epochOf(s, epoch);
    std::vector<int64_t> all;
    for (auto &x : b)
      all.insert(all.end(), x.begin(), x.end());
    std::vector<int64_t> sorted = all;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(sorted, iota(1000)) << "epoch " << epoch;
    orders.insert(all);
    // Asked again, out of order, by a copy of the sampler: the same.
    ItemSampler copy = s;
    std::vector<int64_t> last;
    ASSERT_TRUE(copy.batch(epoch, s.numBatches() - 1, last).ok());
    EXPECT_EQ(last, b.back());
  }
  EXPECT_EQ(orders.size(), 4u) << "every epoch has its own order";
  ItemSampler other = makeSampler(iota(1000), 64, true, false, 8);
  EXPECT_NE(epochOf(other, 0), epochOf(s, 0)) << "another seed";
}

TEST(ItemSampler, ShuffleIsUniform) {
  // Over 4000 epochs, the item at position 0 should be each of 8 items
  // 500 times; chi-square with 7 degrees of freedom stays below 24.3 with
  // probability 0.999.
  ItemSampler s = makeSampler(iota(8), 8, true, false, 3);
  std::vector<int> count(8, 0);
  const int epochs = 4000;
  for (int e = 0; e < epochs; ++e) {
    std::vector<int64_t> b;
    ASSERT_TRUE(s.batch(e, 0, b).ok());
    ++count[b[0]];
  }
  double chi2 = 0, expected = epochs / 8.0;
  for (int c : count)
    chi2 += (c - expected) * (c - expected) / expected;
  EXPECT_LT(chi2, 24.3);
}

TEST(ItemSampler, Errors) {
  ItemSampler s;
  ItemSamplerOptions o;
  o.BatchSize = 0;
  EXPECT_EQ(ItemSampler::create(iota(3), o, s).message(),
            "item sampler: the batch size must be positive, got 0");
  s = makeSampler(iota(5), 2, false, false);
  std::vector<int64_t> b;
  EXPECT_EQ(s.batch(0, 3, b).message(),
            "item sampler: step 3 is outside the epoch's 3 batches");
  DistributedItemSampler d;
  DistributedItemSamplerOptions dopt;
  dopt.BatchSize = 2;
  EXPECT_EQ(DistributedItemSampler::create(iota(3), dopt, 4, 4, d).message(),
            "distributed item sampler: rank 4 is outside a world of 4 ranks");
}

// GraphBolt's DistributedItemSampler docstring, cases 1 to 4 (no shuffle):
// 15 items over 4 replicas with batch size 2.
TEST(DistributedItemSampler, GraphBoltTable) {
  struct Case {
    bool DropLast, Uneven;
    std::vector<Batches> PerRank;
  };
  std::vector<Case> cases = {
      {false, false,
       {{{0, 1}, {2, 3}}, {{4, 5}, {6, 7}}, {{8, 9}, {10, 11}},
        {{12, 13}, {14}}}},
      {true, false,
       {{{0, 1}, {2, 3}}, {{4, 5}, {6, 7}}, {{8, 9}, {10, 11}}, {{12, 13}}}},
      {false, true,
       {{{0, 1}, {2, 3}}, {{4, 5}, {6, 7}}, {{8, 9}, {10, 11}},
        {{12, 13}, {14}}}},
      {true, true, {{{0, 1}}, {{4, 5}}, {{8, 9}}, {{12, 13}}}},
  };
  for (const Case &c : cases)
    for (int r = 0; r < 4; ++r) {
      DistributedItemSampler s = makeDist(15, r, 4, false, c.DropLast, c.Uneven);
      EXPECT_EQ(epochOf(s, 0), c.PerRank[r])
          << "drop_last " << c.DropLast << " drop_uneven_inputs " << c.Uneven
          << " rank " << r;
    }
}

// Cases 5 and 6 shuffle: each replica keeps its own items, in a shuffled
// order, and the batch counts follow the flags (drop_last: 2, 2, 2, 1;
// with drop_uneven_inputs: 1 each).
TEST(DistributedItemSampler, GraphBoltTableShuffled) {
  std::vector<std::vector<int64_t>> ranges = {
      {0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9, 10, 11}, {12, 13, 14}};
  for (bool uneven : {false, true}) {
    std::vector<int64_t> counts;
    for (int r = 0; r < 4; ++r) {
      DistributedItemSampler s = makeDist(15, r, 4, true, true, uneven);
      counts.push_back(s.numBatches());
      for (uint64_t epoch = 0; epoch < 3; ++epoch)
        for (const auto &b : epochOf(s, epoch)) {
          EXPECT_EQ(b.size(), 2u);
          for (int64_t x : b)
            EXPECT_TRUE(std::count(ranges[r].begin(), ranges[r].end(), x))
                << x << " is not rank " << r << "'s item";
        }
    }
    EXPECT_EQ(counts, uneven ? (std::vector<int64_t>{1, 1, 1, 1})
                             : (std::vector<int64_t>{2, 2, 2, 1}));
  }
}

TEST(DistributedItemSampler, UnevenInputsNeverLeaveARankWaiting) {
  // For many item counts, rank counts and batch sizes, with
  // drop_uneven_inputs every rank has the same number of batches.
  for (int64_t items : {0, 1, 7, 15, 16, 33})
    for (int ranks : {1, 2, 3, 4, 7})
      for (bool dropLast : {false, true}) {
        std::set<int64_t> counts;
        for (int r = 0; r < ranks; ++r)
          counts.insert(makeDist(items, r, ranks, true, dropLast, true)
                            .numBatches());
        EXPECT_EQ(counts.size(), 1u) << items << " items, " << ranks
                                     << " ranks, drop_last " << dropLast;
      }
}

TEST(DistributedItemSampler, SplitBatchesUnionIsTheGlobalBatch) {
  // Step s of 4 ranks together is batch s of one process with 4x the batch.
  ItemSampler single = makeSampler(iota(37), 8, true, false, 11);
  std::vector<DistributedItemSampler> ranks;
  for (int r = 0; r < 4; ++r)
    ranks.push_back(
        makeDist(37, r, 4, true, false, false, ItemSplit::SplitBatches));
  for (uint64_t epoch = 0; epoch < 2; ++epoch)
    for (int64_t step = 0; step < single.numBatches(); ++step) {
      std::vector<int64_t> global, joined;
      ASSERT_TRUE(single.batch(epoch, step, global).ok());
      for (auto &r : ranks) {
        ASSERT_EQ(r.numBatches(), single.numBatches());
        std::vector<int64_t> part;
        ASSERT_TRUE(r.batch(epoch, step, part).ok());
        joined.insert(joined.end(), part.begin(), part.end());
      }
      EXPECT_EQ(joined, global) << "epoch " << epoch << " step " << step;
    }
}
