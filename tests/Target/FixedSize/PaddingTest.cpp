//===- PaddingTest.cpp - Padding never changes a real result --------------===//
//
// Part of gnnc. gnnc_sample pads a mini-batch to fixed capacities
// (FixedSize.h): padding vertices after the real ones of each level,
// padding edges that are self-loops of padding destinations, zero feature
// rows. For every example that runs on blocks, a batch sampled from Cora
// runs through the generated C++ as sampled and padded, with the same
// parameters, and the real rows are compared:
//   - the inference forward and the saving forward (F_train): real output
//     rows bit for bit;
//   - the backward, with the cotangent on the real seeds (zero on padding,
//     as a masked loss gives): the input gradient's real rows bit for bit,
//     and the gradient of every parameter.
// Parameter gradients are sums over rows (W = x^T g, b = sum g): padding
// rows add exact zeros (their cotangent is zero, so is everything the
// backward sends to them), but cblas' sgemm splits the row dimension into
// blocks and the real rows sit at other positions in the padded tensors,
// so the partial sums are grouped differently. Those gradients are
// compared within a relative 1e-5 of the largest entry, and the test
// prints whether they came out bit-identical.
// Dropout is off (training = false): its mask is drawn per row position,
// and padding moves real rows; training with padding is checked by
// gnnc-train --fixed-size against unpadded training.
//
// Static shapes: GraphSAGE2Block compiled with -D of all its sizes (the
// capacities of batches of 32 seeds with fanouts 5,5 on Cora) gives the
// same bits as the model compiled for any shapes, and rejects a batch of
// other sizes.
//
//===----------------------------------------------------------------------===//

#include "FixedSizeSupport.h"

#include "gnnc_fs_gat2/gat2_block.h"
#include "gnnc_fs_sage1/sage_block.h"
#include "gnnc_fs_sage2/sage2_block.h"
#include "gnnc_fs_sage2_static/sage2_block.h"

#include <gtest/gtest.h>

#include <cstring>
#include <iostream>

using namespace gnnc;
using namespace gnnc::fixedsize_test;

namespace {

/// Relative tolerance of parameter gradients (see the file comment).
constexpr double kGradTolerance = 1e-5;

/// What one run of a model computes.
struct ModelRun {
  int64_t Classes = 0;
  std::vector<float> Out, TrainOut, GradX;
  std::vector<std::vector<float>> Grads;
};

// One adapter per model: the generated entry points behind one interface.
// Graphs are the blocks outermost first; x the input vertices' features.
#define GNNC_TWO_HOP_MODEL(NAME, NS, F)                                        \
  struct NAME {                                                                \
    using Params = NS::F##_Params;                                             \
    [[maybe_unused]] static constexpr const char *kName = #F;                  \
    static rt::Status forward(const std::vector<rt::Graph> &g,                 \
                              const std::vector<float> &x, const Params &p,    \
                              float *out) {                                    \
      AlignedBuffer ws(NS::F##_workspace_bytes(g[0], g[1]));                   \
      return NS::F(g[0], g[1], x.data(), p, out, ws.get(), false, 0);          \
    }                                                                          \
    static rt::Status step(const std::vector<rt::Graph> &g,                    \
                           const std::vector<float> &x, const Params &p,       \
                           const std::vector<float> &cot, float *out,          \
                           float *gradX, const Params &grads) {                \
      AlignedBuffer saved(NS::F##_saved_bytes(g[0], g[1]));                    \
      NS::F##_Saved s = NS::F##_saved_layout(saved.get(), g[0], g[1]);         \
      AlignedBuffer ws(std::max(NS::F##_train_workspace_bytes(g[0], g[1]),     \
                                NS::F##_backward_workspace_bytes(g[0], g[1])));\
      if (rt::Status st = NS::F##_train(g[0], g[1], x.data(), p, out, s,       \
                                        ws.get(), false, 0);                   \
          !st.ok())                                                            \
        return st;                                                             \
      return NS::F##_backward(g[0], g[1], x.data(), s, cot.data(), p, gradX,   \
                              grads, ws.get(), false, 0);                      \
    }                                                                          \
  };

GNNC_TWO_HOP_MODEL(Sage2, fs_sage2, GraphSAGE2Block)
GNNC_TWO_HOP_MODEL(Gat2, fs_gat2, GAT2Block)
GNNC_TWO_HOP_MODEL(Sage2Static, fs_sage2_static, GraphSAGE2Block)
#undef GNNC_TWO_HOP_MODEL

/// SAGEBlockNet takes the destinations' features apart (x_dst: the first
/// N_dst rows of x_src); its input gradient is the sum of both.
struct Sage1 {
  using Params = fs_sage1::SAGEBlockNet_Params;
  static constexpr const char *kName = "SAGEBlockNet";
  static std::vector<float> dstRows(const rt::Graph &g,
                                    const std::vector<float> &x) {
    int64_t width = static_cast<int64_t>(x.size()) / g.numSrc();
    return std::vector<float>(x.begin(), x.begin() + g.numDst() * width);
  }
  static rt::Status forward(const std::vector<rt::Graph> &g,
                            const std::vector<float> &x, const Params &p,
                            float *out) {
    std::vector<float> xDst = dstRows(g[0], x);
    AlignedBuffer ws(fs_sage1::SAGEBlockNet_workspace_bytes(g[0]));
    return fs_sage1::SAGEBlockNet(g[0], x.data(), xDst.data(), p, out,
                                  ws.get(), false, 0);
  }
  static rt::Status step(const std::vector<rt::Graph> &g,
                         const std::vector<float> &x, const Params &p,
                         const std::vector<float> &cot, float *out,
                         float *gradX, const Params &grads) {
    std::vector<float> xDst = dstRows(g[0], x);
    AlignedBuffer saved(fs_sage1::SAGEBlockNet_saved_bytes(g[0]));
    fs_sage1::SAGEBlockNet_Saved s =
        fs_sage1::SAGEBlockNet_saved_layout(saved.get(), g[0]);
    AlignedBuffer ws(
        std::max(fs_sage1::SAGEBlockNet_train_workspace_bytes(g[0]),
                 fs_sage1::SAGEBlockNet_backward_workspace_bytes(g[0])));
    if (rt::Status st = fs_sage1::SAGEBlockNet_train(
            g[0], x.data(), xDst.data(), p, out, s, ws.get(), false, 0);
        !st.ok())
      return st;
    std::vector<float> gradDst(xDst.size());
    if (rt::Status st = fs_sage1::SAGEBlockNet_backward(
            g[0], x.data(), xDst.data(), s, cot.data(), p, gradX,
            gradDst.data(), grads, ws.get(), false, 0);
        !st.ok())
      return st;
    for (size_t i = 0; i < gradDst.size(); ++i)
      gradX[i] += gradDst[i];
    return rt::Status::success();
  }
};

/// Runs model M on `batch` (sampled or padded) with the parameters
/// `values`; `cot` is the cotangent of the output rows.
template <typename M>
::testing::AssertionResult runModel(const sample::MiniBatch &batch,
                                    ParamValues<typename M::Params> &values,
                                    int64_t classes,
                                    const std::vector<float> &cot, ModelRun &r) {
  std::vector<rt::Graph> g;
  if (auto ok = graphsOf(batch, g); !ok)
    return ok;
  const int64_t rows = g.back().numDst();
  r.Classes = classes;
  r.Out.assign(rows * classes, NAN);
  r.TrainOut.assign(rows * classes, NAN);
  r.GradX.assign(batch.Features.size(), NAN);
  typename M::Params p = values.bind();
  ParamValues<typename M::Params> grads(0);
  for (std::vector<float> &v : grads.Values)
    std::fill(v.begin(), v.end(), NAN);
  typename M::Params gp = grads.bind();
  if (rt::Status s = M::forward(g, batch.Features, p, r.Out.data()); !s.ok())
    return ::testing::AssertionFailure() << s.message();
  if (rt::Status s = M::step(g, batch.Features, p, cot, r.TrainOut.data(),
                             r.GradX.data(), gp);
      !s.ok())
    return ::testing::AssertionFailure() << s.message();
  r.Grads = std::move(grads.Values);
  return ::testing::AssertionSuccess();
}

/// How the rows of `padded` (width `width`) at `pos` differ from the rows
/// of `real`: rows that differ in any bit, and the largest difference
/// relative to the largest |real| entry.
struct RowDiff {
  int64_t Rows = 0, Differing = 0;
  double Rel = 0;
};
RowDiff rowDiff(const std::vector<float> &real,
                const std::vector<float> &padded, int64_t width,
                const std::vector<int64_t> &pos) {
  RowDiff d;
  d.Rows = static_cast<int64_t>(pos.size());
  double scale = 0, diff = 0;
  for (size_t i = 0; i < pos.size(); ++i) {
    const float *a = real.data() + i * width,
                *b = padded.data() + pos[i] * width;
    d.Differing += std::memcmp(a, b, width * sizeof(float)) != 0;
    for (int64_t j = 0; j < width; ++j) {
      scale = std::max(scale, std::fabs(static_cast<double>(a[j])));
      double e = std::fabs(static_cast<double>(a[j]) - b[j]);
      diff = std::max(diff, std::isfinite(e) ? e : INFINITY);
    }
  }
  d.Rel = scale > 0 ? diff / scale : diff;
  return d;
}

/// Rows at `pos` (width `width`) that differ in any bit between `a` and
/// `b`.
int64_t differingAt(const std::vector<float> &a, const std::vector<float> &b,
                    int64_t width, const std::vector<int64_t> &pos) {
  int64_t n = 0;
  for (int64_t v : pos)
    n += std::memcmp(a.data() + v * width, b.data() + v * width,
                     width * sizeof(float)) != 0;
  return n;
}

/// The capacities that leave exactly one padding vertex per destination
/// level and no padding edge.
sample::Capacities tightCapacities(const sample::MiniBatch &b) {
  sample::Capacities c;
  const size_t h = b.Blocks.size();
  c.Vertices.assign(h + 1, 0);
  c.Vertices[h] = b.Blocks.back().NumDst + 1;
  for (size_t l = h; l-- > 0;)
    c.Vertices[l] =
        c.Vertices[l + 1] + (b.Blocks[l].NumSrc - b.Blocks[l].NumDst);
  for (const sample::Block &blk : b.Blocks)
    c.Edges.push_back(std::max<int64_t>(1, blk.numEdges()));
  return c;
}

/// The padded position of every real vertex of every level, from the
/// layout FixedSize.h documents (independently of the padder's RealPos).
std::vector<std::vector<int64_t>> expectedPositions(const sample::MiniBatch &b,
                                                    const sample::Capacities &c) {
  const size_t h = b.Blocks.size();
  std::vector<std::vector<int64_t>> pos(h + 1);
  for (int64_t i = 0; i < b.Blocks.back().NumDst; ++i)
    pos[h].push_back(i);
  for (size_t l = h; l-- > 0;) {
    const sample::Block &blk = b.Blocks[l];
    for (int64_t i = 0; i < blk.NumSrc; ++i)
      pos[l].push_back(i < blk.NumDst ? pos[l + 1][i]
                                      : i - blk.NumDst + c.Vertices[l + 1]);
  }
  return pos;
}

/// Samples batches, pads them to bound and to tight capacities, and checks
/// that model M's real rows do not change.
template <typename M>
void checkPaddingInvariance(bool selfLoops, std::vector<int64_t> fanouts,
                            int64_t batchSize, int64_t classes) {
  const rt::Graph &g = coraGraph(selfLoops);
  sample::NeighborSamplerOptions options;
  options.Fanouts = fanouts;
  sample::Capacities bound;
  ASSERT_TRUE(sample::boundCapacities(options, sample::GraphView::of(g),
                                      batchSize, bound)
                  .ok());
  ParamValues<typename M::Params> values(11);
  bool allBitIdentical = true;
  double worst = 0;
  for (int step = 0; step < 3; ++step) {
    sample::MiniBatch batch;
    ASSERT_TRUE(sampleBatch(g, fanouts, randomSeeds(batchSize, 100 + step),
                            step, batch));
    const int64_t seeds = static_cast<int64_t>(batch.Seeds.size());
    std::vector<float> cot(seeds * classes);
    std::mt19937_64 rng(300 + step);
    std::uniform_real_distribution<float> unit(-1, 1);
    for (float &v : cot)
      v = unit(rng);
    ModelRun real;
    ASSERT_TRUE(runModel<M>(batch, values, classes, cot, real));

    for (const sample::Capacities &caps : {bound, tightCapacities(batch)}) {
      SCOPED_TRACE(std::string(M::kName) + " step " + std::to_string(step) +
                   ", capacities " + caps.str());
      sample::MiniBatch padded = batch;
      sample::PadOutcome outcome;
      ASSERT_TRUE(
          sample::padBatch(padded, caps, sample::Oversize::Error, outcome)
              .ok());
      ASSERT_TRUE(padded.Padded);
      auto pos = expectedPositions(batch, caps);
      ASSERT_EQ(padded.RealPos, pos);
      // The padded cotangent: the real seeds' rows, zero elsewhere.
      std::vector<float> padCot(caps.Vertices.back() * classes, 0.0f);
      for (int64_t i = 0; i < seeds; ++i)
        std::copy(cot.begin() + i * classes, cot.begin() + (i + 1) * classes,
                  padCot.begin() + pos.back()[i] * classes);
      ModelRun pad;
      ASSERT_TRUE(runModel<M>(padded, values, classes, padCot, pad));

      for (auto [what, d] :
           {std::pair{"inference output",
                      rowDiff(real.Out, pad.Out, classes, pos.back())},
            std::pair{"saving forward output",
                      rowDiff(real.TrainOut, pad.TrainOut, classes,
                              pos.back())},
            std::pair{"input gradient",
                      rowDiff(real.GradX, pad.GradX, batch.FeatureDim,
                              pos.front())}}) {
        std::cout << "[          ] " << what << ": " << d.Differing << " of "
                  << d.Rows << " rows differ, rel " << d.Rel << "\n";
        EXPECT_LE(d.Rel, kGradTolerance) << what;
      }
      // The same padded batch with random finite features on the padding
      // rows: every real row and every parameter gradient must keep its
      // bits (same positions, same sums; padding contributes exact zeros).
      sample::MiniBatch poisoned = padded;
      std::uniform_real_distribution<float> wide(-100, 100);
      const std::vector<uint8_t> &inputMask = poisoned.VertexMask.front();
      for (size_t v = 0; v < inputMask.size(); ++v)
        if (!inputMask[v])
          for (int64_t j = 0; j < poisoned.FeatureDim; ++j)
            poisoned.Features[v * poisoned.FeatureDim + j] = wide(rng);
      ModelRun poison;
      ASSERT_TRUE(runModel<M>(poisoned, values, classes, padCot, poison));
      EXPECT_EQ(differingAt(pad.Out, poison.Out, classes, pos.back()), 0);
      EXPECT_EQ(differingAt(pad.TrainOut, poison.TrainOut, classes,
                            pos.back()),
                0);
      EXPECT_EQ(differingAt(pad.GradX, poison.GradX, batch.FeatureDim,
                            pos.front()),
                0);
      EXPECT_EQ(pad.Grads, poison.Grads);

      ASSERT_EQ(real.Grads.size(), pad.Grads.size());
      for (size_t k = 0; k < real.Grads.size(); ++k) {
        const std::vector<float> &a = real.Grads[k], &b = pad.Grads[k];
        ASSERT_EQ(a.size(), b.size());
        double scale = 0, diff = 0;
        for (size_t i = 0; i < a.size(); ++i) {
          scale = std::max(scale, std::fabs(static_cast<double>(a[i])));
          diff = std::max(diff, std::fabs(static_cast<double>(a[i]) - b[i]));
        }
        allBitIdentical =
            allBitIdentical &&
            std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
        double rel = scale > 0 ? diff / scale : diff;
        worst = std::max(worst, rel);
        EXPECT_LE(rel, kGradTolerance)
            << "gradient of " << M::Params::kPaths[k];
      }
    }
  }
  std::cout << "[          ] " << M::kName
            << ": real output rows and input-gradient rows bit-identical; "
               "parameter gradients "
            << (allBitIdentical ? "bit-identical"
                                : "largest relative difference " +
                                      std::to_string(worst))
            << "\n";
}

TEST(Padding, SAGEBlockNetRealRowsUnchanged) {
  checkPaddingInvariance<Sage1>(false, {10}, 64, 7);
}

TEST(Padding, GraphSAGE2BlockRealRowsUnchanged) {
  checkPaddingInvariance<Sage2>(false, {10, 5}, 64, 7);
}

TEST(Padding, GAT2BlockRealRowsUnchanged) {
  checkPaddingInvariance<Gat2>(true, {10, 5}, 64, 7);
}

//===----------------------------------------------------------------------===//
// Static shapes
//===----------------------------------------------------------------------===//

/// The batches fs_sage2_static was compiled for (tests/Target/FixedSize/
/// CMakeLists.txt): 32 seeds, fanouts 5,5, bound capacities.
sample::Capacities staticCapacities() {
  sample::NeighborSamplerOptions options;
  options.Fanouts = {5, 5};
  sample::Capacities caps;
  EXPECT_TRUE(sample::boundCapacities(options,
                                      sample::GraphView::of(coraGraph(false)),
                                      32, caps)
                  .ok());
  return caps;
}

TEST(StaticShapes, CompiledSizesAreTheBoundCapacities) {
  sample::Capacities caps = staticCapacities();
  // N0 = 1153, N1 = 193, N2 = 33, E1 = 960, E2 = 160: 33 = 32 seeds and
  // one padding vertex; 160 = 32 * 5 edges, as many new sources; 960 =
  // 192 * 5.
  EXPECT_EQ(caps.Vertices, (std::vector<int64_t>{1153, 193, 33}));
  EXPECT_EQ(caps.Edges, (std::vector<int64_t>{960, 160}));
}

TEST(StaticShapes, SameBitsAsTheModelForAnyShapes) {
  sample::Capacities caps = staticCapacities();
  ParamValues<Sage2::Params> values(5);
  ParamValues<Sage2Static::Params> staticValues(5);
  for (int step = 0; step < 2; ++step) {
    sample::MiniBatch batch;
    ASSERT_TRUE(sampleBatch(coraGraph(false), {5, 5},
                            randomSeeds(32, 40 + step), step, batch));
    sample::PadOutcome outcome;
    ASSERT_TRUE(
        sample::padBatch(batch, caps, sample::Oversize::Error, outcome).ok());
    std::vector<float> cot(caps.Vertices.back() * 7, 0.0f);
    std::mt19937_64 rng(step);
    std::uniform_real_distribution<float> unit(-1, 1);
    for (int64_t i : batch.RealPos.back())
      for (int c = 0; c < 7; ++c)
        cot[i * 7 + c] = unit(rng);
    ModelRun dynamic, fixed;
    ASSERT_TRUE(runModel<Sage2>(batch, values, 7, cot, dynamic));
    ASSERT_TRUE(runModel<Sage2Static>(batch, staticValues, 7, cot, fixed));
    EXPECT_EQ(dynamic.Out, fixed.Out);
    EXPECT_EQ(dynamic.TrainOut, fixed.TrainOut);
    EXPECT_EQ(dynamic.GradX, fixed.GradX);
    EXPECT_EQ(dynamic.Grads, fixed.Grads);
  }
}

TEST(StaticShapes, RejectsOtherSizes) {
  sample::MiniBatch batch;
  ASSERT_TRUE(
      sampleBatch(coraGraph(false), {5, 5}, randomSeeds(32, 1), 0, batch));
  ParamValues<Sage2Static::Params> values(5);
  ModelRun r;
  ::testing::AssertionResult ok =
      runModel<Sage2Static>(batch, values, 7, std::vector<float>(32 * 7), r);
  ASSERT_FALSE(ok);
  EXPECT_NE(std::string(ok.message())
                .find("sources, but the code was compiled for N0 = 1153 "
                      "(static shapes, gnnc -D N0=1153)"),
            std::string::npos)
      << ok.message();
}

} // namespace
