//===- MiniBatch.cpp - gnnc-train --minibatch -----------------------------===//
//
// Part of gnnc. See MiniBatch.h. The block models are called through their
// typed entry points (docs/abi.md): F(g1, g2, x, params, out, workspace,
// training, seed), F_train(..., out, saved, workspace, ...) and
// F_backward(g1, g2, x, saved, cotangent, params, grad_x, grads, ...). Their
// sizes change with every batch, so the workspace and the saved values live
// in buffers that grow to the largest batch seen (padded to fixed sizes,
// every training batch has the same sizes).
//
//===----------------------------------------------------------------------===//

#include "MiniBatch.h"

#include "BlockModels.h"

#include "gnnc/runtime/Dataset.h"
#include "gnnc/runtime/Invoke.h"
#include "gnnc/runtime/Train.h"
#include "gnnc/sample/Pipeline.h"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>

namespace gnnc::train {

//===----------------------------------------------------------------------===//
// Shared with DataParallel.cpp
//===----------------------------------------------------------------------===//

sample::SamplerKind samplerKind(const std::string &name) {
  return name == "labor" ? sample::SamplerKind::Labor
                         : sample::SamplerKind::Neighbor;
}

/// The oversize policy of `a` (its default depends on the capacities).
sample::Oversize oversizeOf(const MiniBatchArgs &a) {
  std::string name = !a.Oversize.empty()    ? a.Oversize
                     : a.FixedSize == "fit" ? "trim"
                                            : "error";
  return name == "skip"   ? sample::Oversize::Skip
         : name == "trim" ? sample::Oversize::Trim
                          : sample::Oversize::Error;
}

const char *oversizeName(sample::Oversize o) {
  switch (o) {
  case sample::Oversize::Error:
    return "error";
  case sample::Oversize::Skip:
    return "skip";
  case sample::Oversize::Trim:
    return "trim";
  }
  return "?";
}

int64_t argmax(const float *row, int64_t n) {
  return std::max_element(row, row + n) - row;
}

std::vector<int64_t> evalFanouts(const MiniBatchArgs &a) {
  return a.EvalFanouts.empty() ? std::vector<int64_t>(a.Fanouts.size(), -1)
                               : a.EvalFanouts;
}

std::string joinFanouts(const std::vector<int64_t> &f) {
  std::string s;
  for (size_t i = 0; i < f.size(); ++i)
    s += (i ? "," : "") + std::to_string(f[i]);
  return s;
}

/// "vertices [...], edges [...], oversize P".
std::string fixedSizeText(const sample::FixedSizeOptions &fs) {
  return fmt::format("{}, oversize {}", fs.Caps.str(), oversizeName(fs.Policy));
}

/// The padding statistics of a report of fixed-size batches.
std::string paddingText(const sample::PipelineReport &r) {
  auto pct = [](int64_t real, int64_t padded) {
    return padded > 0 ? 100.0 * static_cast<double>(real) / padded : 0.0;
  };
  return fmt::format("real/padded vertices {}/{} ({:.1f}%), edges {}/{} "
                     "({:.1f}%); {} batch(es) trimmed ({} edges dropped), {} "
                     "skipped",
                     r.RealVertices, r.PaddedVertices,
                     pct(r.RealVertices, r.PaddedVertices), r.RealEdges,
                     r.PaddedEdges, pct(r.RealEdges, r.PaddedEdges),
                     r.TrimmedBatches, r.TrimmedEdges, r.SkippedBatches);
}

namespace {

using rt::Status;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

double secondsSince(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t)
      .count();
}

struct Problem {
  rt::Dataset Data;
  rt::Graph Graph;
};

Status loadProblem(const MiniBatchArgs &a, const BlockModel &m, Problem &p,
                   std::string &source) {
  rt::DatasetOptions options;
  options.AllowNonFinite = a.AllowNonFinite;
  if (!a.DataPath.empty()) {
    source = a.DataPath;
    GNNC_TRY(rt::loadDataset(a.DataPath, p.Data, options));
  } else {
    GNNC_TRY(rt::findDataset(a.Dataset, p.Data, options));
    // What findDataset read: <dir>/<name>.gnnd, else the folder <dir>/<name>.
    source = rt::dataDir() + "/" + a.Dataset;
    if (std::FILE *f = std::fopen((source + ".gnnd").c_str(), "rb")) {
      std::fclose(f);
      source += ".gnnd";
    }
  }
  const rt::Dataset &ds = p.Data;
  if (ds.NumFeatures != m.InDim || ds.NumClasses != m.Classes)
    return Status::error(fmt::format(
        "{}: {} features and {} classes, but the {} block model was compiled "
        "for {} and {}",
        source, ds.NumFeatures, ds.NumClasses, m.Name, m.InDim, m.Classes));
  rt::Graph g;
  GNNC_TRY(rt::Graph::fromEdgeIndex(ds.EdgeSrc.data(), ds.EdgeDst.data(),
                                    ds.numEdges(), ds.NumNodes, ds.NumNodes, g)
               .withPrefix(source));
  if (m.SelfLoops)
    GNNC_TRY(rt::addSelfLoops(g, p.Graph));
  else
    p.Graph = std::move(g);
  if (a.Normalize)
    GNNC_TRY(rt::normalizeRows(p.Data.X.data(), ds.NumNodes, ds.NumFeatures));
  return Status::success();
}

/// Everything sampling needs for one set of seeds: the item sampler, the
/// neighbour sampler and the pipeline over them.
struct Loader {
  sample::ItemSampler Items;
  sample::NeighborSampler Sampler;
  std::unique_ptr<sample::SeedSource> Seeds;
  std::unique_ptr<sample::Pipeline> Pipe;
  /// The capacities of fixed-size batches (`fixedSize` of create).
  std::optional<sample::FixedSizeOptions> Fixed;

  /// With `fixedSize`, every batch is padded to the capacities of
  /// a.FixedSize: bound ones for the largest batch the item sampler makes,
  /// fitted ones from the first batches of the epochs training runs (1, 2,
  /// ...), or a's explicit ones.
  Status create(const Problem &p, sample::FeatureSource &features,
                std::vector<int64_t> items, int64_t batchSize, bool shuffle,
                std::vector<int64_t> fanouts, const MiniBatchArgs &a,
                uint64_t seed, bool fixedSize = false) {
    sample::ItemSamplerOptions io;
    io.BatchSize = batchSize;
    io.Shuffle = shuffle;
    io.Seed = seed;
    GNNC_TRY(sample::ItemSampler::create(std::move(items), io, Items));
    sample::NeighborSamplerOptions so;
    so.Fanouts = std::move(fanouts);
    so.Kind = samplerKind(a.Sampler);
    so.Seed = seed;
    so.KeepEdgeIds = false;
    GNNC_TRY(sample::NeighborSampler::create(sample::GraphView::of(p.Graph), so,
                                             Sampler));
    Seeds = sample::seedsOf(Items);
    sample::PipelineOptions po;
    po.Workers = a.Workers;
    po.Prefetch = a.Prefetch;
    po.BuildGraphs = true;
    if (fixedSize) {
      sample::FixedSizeOptions fs;
      fs.Policy = oversizeOf(a);
      if (a.FixedSize == "bound") {
        GNNC_TRY(sample::boundCapacities(
            Sampler.options(), Sampler.graph(),
            std::min<int64_t>(batchSize, Items.numItems()), fs.Caps));
      } else if (a.FixedSize == "fit") {
        sample::FitOptions fo;
        fo.FirstEpoch = 1;
        GNNC_TRY(sample::fitCapacities(Sampler, Items, fo, fs.Caps));
      } else {
        fs.Caps.Vertices = a.CapVertices;
        fs.Caps.Edges = a.CapEdges;
      }
      po.FixedSize = fs;
      Fixed = fs;
    }
    return sample::Pipeline::create(*Seeds, &Sampler, &features,
                                    p.Data.Y.data(), po, Pipe);
  }
};

/// Runs the inference entry point over every batch of `loader`'s epoch 0
/// and calls `row(seed, logits)` for each seed.
template <typename RowFn>
Status inferAll(const BlockModel &m, Loader &loader, const Params &params,
                GrowBuffer &ws, GrowBuffer &out, RowFn row) {
  GNNC_TRY(loader.Pipe->startEpoch(0));
  while (true) {
    sample::PreparedBatch pb;
    bool done;
    GNNC_TRY(loader.Pipe->next(pb, done));
    if (done)
      return Status::success();
    const rt::Graph &g1 = pb.Graphs[0], &g2 = pb.Graphs[1];
    GNNC_TRY(ws.reserve(m.InferWorkspace(g1, g2)));
    GNNC_TRY(out.reserve(g2.numDst() * m.Classes * sizeof(float)));
    GNNC_TRY(m.Infer(g1, g2, pb.Batch.Features.data(), params.Ptrs.data(),
                     out.floats(), ws.data())
                 .withPrefix(m.Entry));
    for (size_t i = 0; i < pb.Batch.Seeds.size(); ++i)
      row(pb.Batch.Seeds[i], out.floats() + i * m.Classes);
    loader.Pipe->recycle(std::move(pb));
  }
}

//===----------------------------------------------------------------------===//
// --check-blocks
//===----------------------------------------------------------------------===//

int checkBlocks(const MiniBatchArgs &a, const BlockModel &m,
                const FullModel &full, Problem &p) {
  auto fail = [](const Status &st) {
    fmt::print(stderr, "gnnc-train: error: {}\n", st.message());
    return 1;
  };
  Params params;
  Status st = params.init(m, a.FirstSeed);
  if (!st.ok())
    return fail(st);
  // The full-graph model's parameters, taken by path from the block model's.
  std::vector<float *> fullParams(full.NumParams, nullptr);
  for (int i = 0; i < full.NumParams; ++i) {
    for (int j = 0; j < m.NumParams; ++j)
      if (std::strcmp(full.Paths[i], m.Paths[j]) == 0 &&
          full.NumElements[i] == m.NumElements[j])
        fullParams[i] = params.Ptrs[j];
    if (!fullParams[i])
      return fail(Status::error(fmt::format(
          "--check-blocks: the full-graph model's parameter {} has no "
          "counterpart of the same size in {}",
          full.Paths[i], m.Entry)));
  }
  const rt::Dataset &ds = p.Data;
  std::vector<float> ref(ds.NumNodes * m.Classes);
  rt::HostBuffer fullWs;
  st = rt::HostBuffer::allocate(full.Workspace(p.Graph), fullWs);
  if (st.ok())
    st = full.Forward(p.Graph, ds.X.data(), fullParams.data(), ref.data(),
                      fullWs.data());
  if (!st.ok())
    return fail(st.withPrefix("the full-graph model"));

  auto features =
      sample::localFeatures(ds.X.data(), ds.NumNodes, ds.NumFeatures);
  std::vector<int64_t> all(ds.NumNodes);
  for (int64_t v = 0; v < ds.NumNodes; ++v)
    all[v] = v;
  Loader loader;
  st =
      loader.create(p, *features, all, a.EvalBatchSize, /*shuffle=*/true,
                    std::vector<int64_t>(a.Fanouts.size(), -1), a, a.FirstSeed);
  if (!st.ok())
    return fail(st);
  GrowBuffer ws, out;
  double maxAbs = 0, maxRef = 0;
  int64_t rows = 0;
  st =
      inferAll(m, loader, params, ws, out, [&](int64_t v, const float *logits) {
        ++rows;
        for (int64_t c = 0; c < m.Classes; ++c) {
          double r = ref[v * m.Classes + c];
          maxAbs = std::max(maxAbs, std::fabs(logits[c] - r));
          maxRef = std::max(maxRef, std::fabs(r));
        }
      });
  if (!st.ok())
    return fail(st);
  double rel = maxAbs / std::max(maxRef, 1e-30);
  fmt::print(
      "check-blocks: {} on full-neighbourhood blocks (fanouts {}) vs "
      "the full-graph model on {} seed rows in batches of {}: max |diff| "
      "{:.3g}, max |logit| {:.3g}, relative {:.3g} (tolerance {:.3g})\n",
      m.Entry, joinFanouts(std::vector<int64_t>(a.Fanouts.size(), -1)), rows,
      a.EvalBatchSize, maxAbs, maxRef, rel, a.CheckTolerance);
  if (rows != ds.NumNodes || !(rel <= a.CheckTolerance)) {
    fmt::print(stderr, "gnnc-train: check-blocks failed\n");
    return 1;
  }
  fmt::print("check-blocks passed\n");
  return 0;
}

//===----------------------------------------------------------------------===//
// Training
//===----------------------------------------------------------------------===//

struct RunResult {
  double BestVal = -1, TestAtBestVal = 0, FinalTest = 0;
  int BestEpoch = 0;
  double FirstLoss = 0, LastLoss = 0;
  double EpochSeconds = 0; // mean wall time of an epoch's training
  sample::PipelineReport Report;
};

/// Trains one model from `seed`. `announce` prints the capacities of
/// fixed-size batches.
Status trainOnce(const MiniBatchArgs &a, const BlockModel &m, Problem &p,
                 uint64_t seed, bool announce, RunResult &result) {
  const rt::Dataset &ds = p.Data;
  Params params;
  GNNC_TRY(params.init(m, seed));
  rt::AdamOptions ao;
  ao.LearningRate = a.LearningRate >= 0 ? a.LearningRate : m.LearningRate;
  ao.WeightDecay = a.WeightDecay >= 0 ? a.WeightDecay : m.WeightDecay;
  rt::Adam adam(ao);
  std::vector<const float *> grads;
  for (int i = 0; i < m.NumParams; ++i) {
    GNNC_TRY(adam.addParam(params.Ptrs[i], m.NumElements[i]));
    grads.push_back(params.GradPtrs[i]);
  }

  auto features =
      sample::localFeatures(ds.X.data(), ds.NumNodes, ds.NumFeatures);
  Loader train, eval;
  GNNC_TRY(train.create(p, *features,
                        sample::ItemSampler::itemsOfMask(ds.TrainMask),
                        a.BatchSize, /*shuffle=*/true, a.Fanouts, a, seed,
                        /*fixedSize=*/!a.FixedSize.empty()));
  if (train.Fixed && announce) {
    fmt::print("fixed-size batches ({} capacities{}): {}\n", a.FixedSize,
               a.FixedSize == "fit" ? fmt::format(", seed {}", seed) : "",
               fixedSizeText(*train.Fixed));
    std::fflush(stdout);
  }
  std::vector<int64_t> evalItems;
  for (int64_t v = 0; v < ds.NumNodes; ++v)
    if (ds.ValMask[v] || ds.TestMask[v])
      evalItems.push_back(v);
  GNNC_TRY(eval.create(p, *features, std::move(evalItems), a.EvalBatchSize,
                       /*shuffle=*/false, evalFanouts(a), a, seed + 1));

  GrowBuffer ws, saved, logits, gradLogits, evalWs, evalOut;
  std::vector<uint8_t> all;
  rt::SplitMix64 stepSeeds(seed ^ 0x5EEDF00DCAFEull);
  std::vector<double> losses;
  double trainSeconds = 0;
  for (int epoch = 1; epoch <= a.Epochs; ++epoch) {
    auto t0 = std::chrono::steady_clock::now();
    GNNC_TRY(train.Pipe->startEpoch(static_cast<uint64_t>(epoch)));
    double lossSum = 0;
    int64_t lossRows = 0;
    while (true) {
      sample::PreparedBatch pb;
      bool done;
      GNNC_TRY(train.Pipe->next(pb, done));
      if (done)
        break;
      const rt::Graph &g1 = pb.Graphs[0], &g2 = pb.Graphs[1];
      const float *x = pb.Batch.Features.data();
      // n rows of logits; a padded batch's loss covers its real seeds only.
      int64_t n = g2.numDst();
      int64_t real = static_cast<int64_t>(pb.Batch.Seeds.size());
      GNNC_TRY(ws.reserve(
          std::max(m.TrainWorkspace(g1, g2), m.BackwardWorkspace(g1, g2))));
      GNNC_TRY(saved.reserve(m.SavedBytes(g1, g2)));
      GNNC_TRY(logits.reserve(n * m.Classes * sizeof(float)));
      GNNC_TRY(gradLogits.reserve(n * m.Classes * sizeof(float)));
      uint64_t stepSeed = stepSeeds.next() | 1;
      GNNC_TRY(m.Train(g1, g2, x, params.Ptrs.data(), logits.floats(),
                       saved.data(), ws.data(), stepSeed, /*training=*/true)
                   .withPrefix(m.Entry));
      const uint8_t *mask = pb.Batch.labelMask().data();
      if (!pb.Batch.Padded) {
        all.assign(n, 1);
        mask = all.data();
      }
      double loss;
      GNNC_TRY(rt::softmaxCrossEntropy(logits.floats(), n, m.Classes,
                                       pb.Batch.Labels.data(), mask, loss,
                                       gradLogits.floats())
                   .withPrefix("loss"));
      GNNC_TRY(m.Backward(g1, g2, x, saved.data(), gradLogits.floats(),
                          params.Ptrs.data(), /*gradX=*/nullptr,
                          params.GradPtrs.data(), ws.data(), stepSeed,
                          /*training=*/true)
                   .withPrefix(m.Entry));
      GNNC_TRY(adam.step(grads).withPrefix("adam"));
      if (!std::isfinite(loss))
        return Status::error(
            fmt::format("epoch {}: the loss is not finite", epoch));
      lossSum += loss * real;
      lossRows += real;
      train.Pipe->recycle(std::move(pb));
    }
    trainSeconds += secondsSince(t0);
    double loss = lossSum / std::max<int64_t>(lossRows, 1);
    losses.push_back(loss);

    // Accuracies on the validation and test vertices.
    int64_t valHit = 0, valAll = 0, testHit = 0, testAll = 0;
    GNNC_TRY(inferAll(m, eval, params, evalWs, evalOut,
                      [&](int64_t v, const float *row) {
                        bool hit = argmax(row, m.Classes) == ds.Y[v];
                        if (ds.ValMask[v]) {
                          ++valAll;
                          valHit += hit;
                        }
                        if (ds.TestMask[v]) {
                          ++testAll;
                          testHit += hit;
                        }
                      }));
    double val = double(valHit) / std::max<int64_t>(valAll, 1);
    double test = double(testHit) / std::max<int64_t>(testAll, 1);
    if (val > result.BestVal) {
      result.BestVal = val;
      result.TestAtBestVal = test;
      result.BestEpoch = epoch;
    }
    result.FinalTest = test;
    if (!a.Quiet && (epoch % a.LogEvery == 0 || epoch == 1)) {
      fmt::print("  epoch {:3}  loss {:.4f}  val {:.4f}  test {:.4f}  {}\n",
                 epoch, loss, val, test, train.Pipe->report().summary());
      std::fflush(stdout);
    }
  }
  result.FirstLoss = losses.front();
  result.LastLoss = recentLoss(losses);
  result.EpochSeconds = trainSeconds / a.Epochs;
  result.Report = train.Pipe->report();
  return Status::success();
}

} // namespace

const char *miniBatchModels() { return "sage, gat (on cora)"; }

int runMiniBatch(const MiniBatchArgs &a, const FullModel *full) {
  auto fail = [](const Status &st) {
    fmt::print(stderr, "gnnc-train: error: {}\n", st.message());
    return 1;
  };
  std::vector<BlockModel> models = blockModels();
  const BlockModel *m = nullptr;
  for (const BlockModel &c : models)
    if (a.Model == c.Name && a.Dataset == c.Dataset)
      m = &c;
  if (!m)
    return fail(Status::error(fmt::format(
        "--minibatch: no compiled block model for --model {} --dataset {} "
        "(models: {})",
        a.Model, a.Dataset, miniBatchModels())));
  if (a.Fanouts.size() != 2 ||
      (!a.EvalFanouts.empty() && a.EvalFanouts.size() != 2))
    return fail(Status::error(fmt::format(
        "--minibatch: {} has two layers, so --fanouts (and --eval-fanouts) "
        "need two values, got '{}'",
        m->Entry,
        joinFanouts(a.Fanouts.size() != 2 ? a.Fanouts : a.EvalFanouts))));
  if (a.FixedSize == "explicit") {
    sample::Capacities caps;
    caps.Vertices = a.CapVertices;
    caps.Edges = a.CapEdges;
    if (caps.Edges.size() != a.Fanouts.size() ||
        caps.Vertices.size() != a.Fanouts.size() + 1)
      return fail(Status::error(fmt::format(
          "--capacities: {} has two layers, so it needs 3 vertex and 2 edge "
          "capacities (V0,V1,V2:E0,E1), got {} and {}",
          m->Entry, caps.Vertices.size(), caps.Edges.size())));
    if (Status c = caps.check(); !c.ok()) {
      std::string msg = c.message();
      if (msg.rfind("capacities: ", 0) == 0)
        msg = msg.substr(12);
      return fail(Status::error("--capacities: " + msg));
    }
  }
  Problem p;
  std::string source;
  Status st = loadProblem(a, *m, p, source);
  if (!st.ok())
    return fail(st);
  if (a.CheckBlocks) {
    if (!full)
      return fail(Status::error("--check-blocks: no full-graph model"));
    return checkBlocks(a, *m, *full, p);
  }

  const rt::Dataset &ds = p.Data;
  fmt::print("== {} on {} ({}), mini-batch: {} nodes, {} edges{}, batch size "
             "{}, fanouts {} ({} sampler, outermost first), evaluation "
             "fanouts {}, {} worker(s), prefetch {}\n",
             m->Entry, a.Dataset, source, ds.NumNodes, p.Graph.numEdges(),
             m->SelfLoops ? " with self-loops" : "", a.BatchSize,
             joinFanouts(a.Fanouts), a.Sampler, joinFanouts(evalFanouts(a)),
             a.Workers, a.Prefetch);
  if (!a.FixedSize.empty())
    fmt::print("== fixed-size training batches: {} capacities, oversize {} "
               "(the loss over the real seeds only; evaluation batches are "
               "not padded)\n",
               a.FixedSize, oversizeName(oversizeOf(a)));
  std::fflush(stdout);
  std::vector<double> selected;
  sample::PipelineReport padding; // summed over the seeds
  bool lossFell = true;
  for (int s = 0; s < a.Seeds; ++s) {
    uint64_t seed = a.FirstSeed + static_cast<uint64_t>(s);
    if (!a.Quiet)
      fmt::print("-- seed {}\n", seed);
    RunResult r;
    st = trainOnce(a, *m, p, seed, /*announce=*/s == 0 || a.FixedSize == "fit",
                   r);
    if (!st.ok())
      return fail(st);
    fmt::print("seed {}: test {:.4f} at best val {:.4f} (epoch {}); last "
               "epoch test {:.4f}; loss {:.4f} -> {:.4f}; {:.1f} ms/epoch; "
               "pipeline: {}\n",
               seed, r.TestAtBestVal, r.BestVal, r.BestEpoch, r.FinalTest,
               r.FirstLoss, r.LastLoss, 1000 * r.EpochSeconds,
               r.Report.summary());
    std::fflush(stdout);
    if (!a.FixedSize.empty()) {
      fmt::print("seed {} padding: {}\n", seed, paddingText(r.Report));
      padding.Batches += r.Report.Batches;
      padding.RealVertices += r.Report.RealVertices;
      padding.PaddedVertices += r.Report.PaddedVertices;
      padding.RealEdges += r.Report.RealEdges;
      padding.PaddedEdges += r.Report.PaddedEdges;
      padding.TrimmedBatches += r.Report.TrimmedBatches;
      padding.TrimmedEdges += r.Report.TrimmedEdges;
      padding.SkippedBatches += r.Report.SkippedBatches;
    }
    std::fflush(stdout);
    selected.push_back(r.TestAtBestVal * 100);
    if (!(r.LastLoss < r.FirstLoss))
      lossFell = false;
  }
  double mean, sd;
  meanStd(selected, mean, sd);
  fmt::print(
      "== {} {} mini-batch{}, {} seed(s), {} epochs: test accuracy "
      "{:.2f} +- {:.2f} % (at the best validation epoch)\n",
      m->Entry, a.Dataset,
      a.FixedSize.empty() ? "" : fmt::format(" (fixed size: {})", a.FixedSize),
      a.Seeds, a.Epochs, mean, sd);
  if (!a.FixedSize.empty())
    fmt::print("== padding, {} training batches in all: {}\n", padding.Batches,
               paddingText(padding));
  if (a.CheckMinTestAcc >= 0) {
    if (!lossFell || mean / 100 < a.CheckMinTestAcc) {
      fmt::print(stderr,
                 "gnnc-train: check failed: {}mean test accuracy {:.4f} "
                 "(minimum {:.4f})\n",
                 lossFell ? "" : "the loss did not fall in every run; ",
                 mean / 100, a.CheckMinTestAcc);
      return 1;
    }
    fmt::print("check passed: loss fell, test accuracy {:.4f} >= {:.4f}\n",
               mean / 100, a.CheckMinTestAcc);
  }
  return 0;
}

} // namespace gnnc::train
