//===- FixedSizeSupport.h - Batches and parameters for the tests -*- C++ -*-===//
//
// Part of gnnc. What PaddingTest.cpp and NoAllocTest.cpp share: Cora (with
// or without a self-loop per vertex), sampled batches with their input
// features, the rt::Graph of each block, and parameter values.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_TESTS_FIXEDSIZE_SUPPORT_H
#define GNNC_TESTS_FIXEDSIZE_SUPPORT_H

#include "gnnc/runtime/Dataset.h"
#include "gnnc/runtime/Graph.h"
#include "gnnc/sample/FixedSize.h"
#include "gnnc/sample/NeighborSampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <vector>

namespace gnnc::fixedsize_test {

inline const rt::Dataset &cora() {
  static rt::Dataset ds;
  static rt::Status status = rt::findDataset("cora", ds);
  EXPECT_TRUE(status.ok()) << status.message();
  return ds;
}

/// Cora as an rt::Graph, with a self-loop per vertex when `selfLoops` (GAT
/// trains on that graph).
inline const rt::Graph &coraGraph(bool selfLoops) {
  static std::map<bool, rt::Graph> graphs;
  auto it = graphs.find(selfLoops);
  if (it != graphs.end())
    return it->second;
  const rt::Dataset &ds = cora();
  rt::Graph g;
  EXPECT_TRUE(rt::Graph::fromEdgeIndex(ds.EdgeSrc.data(), ds.EdgeDst.data(),
                                       ds.numEdges(), ds.NumNodes, ds.NumNodes,
                                       g)
                  .ok());
  if (selfLoops) {
    EXPECT_TRUE(rt::addSelfLoops(g, g).ok());
  }
  return graphs.emplace(selfLoops, std::move(g)).first->second;
}

/// `count` distinct random vertices of Cora.
inline std::vector<int64_t> randomSeeds(int64_t count, uint64_t seed) {
  std::vector<int64_t> all(cora().NumNodes);
  std::iota(all.begin(), all.end(), 0);
  std::mt19937_64 rng(seed);
  std::shuffle(all.begin(), all.end(), rng);
  all.resize(count);
  return all;
}

/// The blocks of `seeds` (fanouts outermost first), the input features and
/// the seeds' labels.
inline ::testing::AssertionResult sampleBatch(const rt::Graph &g,
                                              const std::vector<int64_t> &fanouts,
                                              const std::vector<int64_t> &seeds,
                                              int64_t step,
                                              sample::MiniBatch &out) {
  sample::NeighborSamplerOptions options;
  options.Fanouts = fanouts;
  options.Seed = 7;
  sample::NeighborSampler sampler;
  sample::SamplerScratch scratch;
  rt::Status s =
      sample::NeighborSampler::create(sample::GraphView::of(g), options, sampler);
  if (s.ok())
    s = sampler.sample(seeds, 0, step, scratch, out);
  if (!s.ok())
    return ::testing::AssertionFailure() << s.message();
  const rt::Dataset &ds = cora();
  out.FeatureDim = ds.NumFeatures;
  out.Features.clear();
  for (int64_t v : out.inputIds())
    out.Features.insert(out.Features.end(), ds.X.begin() + v * ds.NumFeatures,
                        ds.X.begin() + (v + 1) * ds.NumFeatures);
  out.Labels.clear();
  for (int64_t v : out.Seeds)
    out.Labels.push_back(ds.Y[v]);
  return ::testing::AssertionSuccess();
}

/// The rt::Graph of every block of `batch`.
inline ::testing::AssertionResult graphsOf(const sample::MiniBatch &batch,
                                           std::vector<rt::Graph> &out) {
  out.assign(batch.Blocks.size(), rt::Graph());
  for (size_t b = 0; b < batch.Blocks.size(); ++b)
    if (rt::Status s = batch.Blocks[b].toGraph(out[b]); !s.ok())
      return ::testing::AssertionFailure() << s.message();
  return ::testing::AssertionSuccess();
}

/// Parameter values of a generated parameter struct P: uniform in [-s, s],
/// s = sqrt(6 / (fan_in + fan_out)) for matrices and 0.1 for vectors (so
/// that biases are not zero), by path.
template <typename P> struct ParamValues {
  std::vector<std::vector<float>> Values;

  explicit ParamValues(uint64_t seed) {
    std::mt19937_64 rng(seed);
    for (int i = 0; i < P::kNumParams; ++i) {
      double s = 0.1;
      if (P::kRanks[i] >= 2)
        s = std::sqrt(6.0 /
                      static_cast<double>(P::kShapes[i][0] +
                                          P::kShapes[i][P::kRanks[i] - 1]));
      std::uniform_real_distribution<float> unit(static_cast<float>(-s),
                                                 static_cast<float>(s));
      Values.emplace_back(P::kNumElements[i]);
      for (float &x : Values.back())
        x = unit(rng);
    }
  }
  /// The struct pointing into Values.
  P bind() {
    P p{};
    for (int i = 0; i < P::kNumParams; ++i)
      p.set(i, Values[i].data());
    return p;
  }
};

/// 64-byte aligned bytes, freed with the object.
struct AlignedBuffer {
  explicit AlignedBuffer(std::size_t bytes)
      : Data(bytes ? std::aligned_alloc(64, (bytes + 63) / 64 * 64) : nullptr,
             &std::free) {}
  void *get() const { return Data.get(); }
  std::unique_ptr<void, decltype(&std::free)> Data;
};

} // namespace gnnc::fixedsize_test

#endif // GNNC_TESTS_FIXEDSIZE_SUPPORT_H
