//===- gnnc_fixedsize_bench.cpp - Fixed-size batches: time and waste ------===//
//
// Part of gnnc. Two measurements of fixed-size (padded) mini-batches
// (gnnc/sample/FixedSize.h), each printing one JSON object on its last line:
//
//   gnnc-fixedsize-bench step --model sage|gat --batch-size B --fanouts A,B
//       [--batches K] [--reps R] [--warmup W] [--seed S]
//
//     Samples K batches of Cora once (the first K steps of epoch 0, all
//     vertices as seeds, shuffled), pads a copy of each to the bound
//     capacities (boundCapacities, Oversize::Error) and another to fitted
//     ones (fitCapacities over 100 batches of epochs 1.., Oversize::Trim),
//     then times one training step (F_train, the softmax cross-entropy over
//     the real seeds, F_backward, an Adam step) of the same batches in each
//     form: W untimed passes, then R timed passes over the K batches, the
//     three forms interleaved pass by pass. A pass's time over K is its time
//     per step; the JSON has every pass.
//
//   gnnc-fixedsize-bench waste --dataset cora|citeseer --batch-size B
//       --fanouts A,B [--batches N] [--seed S]
//
//     Pads N batches (epochs 1000.., all vertices as seeds, shuffled) to the
//     bound capacities and to capacities fitted on 100 batches of epochs
//     0.. (Oversize::Trim), and sums the real and padded vertices of every
//     level and edges of every block, with the trimmed batches and edges.
//
// The graph is the dataset's, with one self-loop per vertex for GAT (as
// gnnc-train builds it) and without for SAGE and for `waste`.
//
//===----------------------------------------------------------------------===//

#include "BlockModels.h"

#include "gnnc/runtime/Dataset.h"
#include "gnnc/sample/FixedSize.h"
#include "gnnc/sample/Pipeline.h"

#include <fmt/core.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace {

using gnnc::rt::Status;
namespace rt = gnnc::rt;
namespace sample = gnnc::sample;
namespace train = gnnc::train;

struct Args {
  std::string Mode, Model = "sage", Dataset = "cora";
  int64_t BatchSize = 256;
  std::vector<int64_t> Fanouts = {25, 10};
  int64_t Batches = 0; // 0: the mode's default
  int Reps = 5, Warmup = 1;
  uint64_t Seed = 0;
};

bool parseList(const std::string &s, std::vector<int64_t> &out) {
  out.clear();
  size_t start = 0;
  while (true) {
    size_t comma = s.find(',', start);
    std::string item = s.substr(start, comma - start);
    int64_t x = 0;
    auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), x);
    if (item.empty() || ptr != item.data() + item.size() || ec != std::errc() ||
        (x != -1 && x < 1))
      return false;
    out.push_back(x);
    if (comma == std::string::npos)
      return true;
    start = comma + 1;
  }
}

bool parseInt(const std::string &s, int64_t lo, int64_t &out) {
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return !s.empty() && ptr == s.data() + s.size() && ec == std::errc() &&
         out >= lo;
}

bool parseArgs(int argc, char **argv, Args &a, std::string &error) {
  if (argc < 2) {
    error = "usage: gnnc-fixedsize-bench step|waste [options]";
    return false;
  }
  a.Mode = argv[1];
  if (a.Mode != "step" && a.Mode != "waste") {
    error = fmt::format("expected step or waste, got '{}'", a.Mode);
    return false;
  }
  for (int i = 2; i < argc; ++i) {
    std::string key = argv[i];
    if (i + 1 >= argc) {
      error = key + " needs a value";
      return false;
    }
    std::string v = argv[++i];
    int64_t k = 0;
    bool ok = true;
    if (key == "--model") {
      a.Model = v;
      ok = v == "sage" || v == "gat";
    } else if (key == "--dataset") {
      a.Dataset = v;
    } else if (key == "--batch-size") {
      ok = parseInt(v, 1, a.BatchSize);
    } else if (key == "--fanouts") {
      ok = parseList(v, a.Fanouts) && a.Fanouts.size() == 2;
    } else if (key == "--batches") {
      ok = parseInt(v, 1, a.Batches);
    } else if (key == "--reps") {
      ok = parseInt(v, 1, k) && k <= 1000;
      a.Reps = static_cast<int>(k);
    } else if (key == "--warmup") {
      ok = parseInt(v, 0, k) && k <= 1000;
      a.Warmup = static_cast<int>(k);
    } else if (key == "--seed") {
      ok = parseInt(v, 0, k);
      a.Seed = static_cast<uint64_t>(k);
    } else {
      error = fmt::format("unknown argument '{}'", key);
      return false;
    }
    if (!ok) {
      error = fmt::format("{}: bad value '{}'", key, v);
      return false;
    }
  }
  return true;
}

std::string jsonList(const std::vector<int64_t> &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

std::string jsonList(const std::vector<double> &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i)
    s += fmt::format("{}{:.6g}", i ? ", " : "", v[i]);
  return s + "]";
}

std::string jsonCaps(const sample::Capacities &c) {
  return fmt::format("{{\"vertices\": {}, \"edges\": {}}}",
                     jsonList(c.Vertices), jsonList(c.Edges));
}

/// The dataset, its row-normalised features and its graph (with self-loops
/// when `selfLoops`).
struct Problem {
  rt::Dataset Data;
  rt::Graph Graph;

  Status load(const std::string &name, bool selfLoops) {
    GNNC_TRY(rt::findDataset(name, Data));
    rt::Graph g;
    GNNC_TRY(rt::Graph::fromEdgeIndex(Data.EdgeSrc.data(), Data.EdgeDst.data(),
                                      Data.numEdges(), Data.NumNodes,
                                      Data.NumNodes, g));
    if (selfLoops)
      GNNC_TRY(rt::addSelfLoops(g, Graph));
    else
      Graph = std::move(g);
    return rt::normalizeRows(Data.X.data(), Data.NumNodes, Data.NumFeatures);
  }
};

/// Item and neighbour samplers over every vertex of `p`.
struct Samplers {
  sample::ItemSampler Items;
  sample::NeighborSampler Sampler;
  std::unique_ptr<sample::SeedSource> Seeds;

  Status create(const Problem &p, const Args &a) {
    std::vector<int64_t> all(p.Data.NumNodes);
    for (int64_t v = 0; v < p.Data.NumNodes; ++v)
      all[v] = v;
    sample::ItemSamplerOptions io;
    io.BatchSize = a.BatchSize;
    io.Shuffle = true;
    io.Seed = a.Seed;
    GNNC_TRY(sample::ItemSampler::create(std::move(all), io, Items));
    sample::NeighborSamplerOptions so;
    so.Fanouts = a.Fanouts;
    so.Seed = a.Seed;
    so.KeepEdgeIds = false;
    GNNC_TRY(sample::NeighborSampler::create(sample::GraphView::of(p.Graph), so,
                                             Sampler));
    Seeds = sample::seedsOf(Items);
    return Status::success();
  }

  Status bound(sample::Capacities &caps) const {
    return sample::boundCapacities(
        Sampler.options(), Sampler.graph(),
        std::min<int64_t>(Items.options().BatchSize, Items.numItems()), caps);
  }
  Status fit(uint64_t firstEpoch, sample::Capacities &caps) const {
    sample::FitOptions fo;
    fo.FirstEpoch = firstEpoch;
    return sample::fitCapacities(Sampler, Items, fo, caps);
  }
};

/// Real and padded counts summed over batches, per level and per block.
struct Waste {
  std::vector<int64_t> RealV, PadV, RealE, PadE;
  int64_t Batches = 0, Trimmed = 0, TrimmedEdges = 0;

  void add(const sample::PadOutcome &o) {
    auto acc = [](std::vector<int64_t> &to, const std::vector<int64_t> &from) {
      to.resize(from.size(), 0);
      for (size_t i = 0; i < from.size(); ++i)
        to[i] += from[i];
    };
    acc(RealV, o.RealVertices);
    acc(PadV, o.PaddedVertices);
    acc(RealE, o.RealEdges);
    acc(PadE, o.PaddedEdges);
    Batches += 1;
    Trimmed += o.Result == sample::PadResult::Trimmed;
    TrimmedEdges += o.TrimmedEdges;
  }
  std::string json(const sample::Capacities &caps) const {
    return fmt::format(
        "{{\"capacities\": {}, \"batches\": {}, \"trimmed_batches\": {}, "
        "\"trimmed_edges\": {}, \"real_vertices\": {}, \"padded_vertices\": "
        "{}, \"real_edges\": {}, \"padded_edges\": {}}}",
        jsonCaps(caps), Batches, Trimmed, TrimmedEdges, jsonList(RealV),
        jsonList(PadV), jsonList(RealE), jsonList(PadE));
  }
};

//===----------------------------------------------------------------------===//
// waste
//===----------------------------------------------------------------------===//

Status runWaste(const Args &a, std::string &json) {
  Problem p;
  GNNC_TRY(p.load(a.Dataset, /*selfLoops=*/false));
  Samplers s;
  GNNC_TRY(s.create(p, a));
  sample::Capacities bound, fit;
  GNNC_TRY(s.bound(bound));
  GNNC_TRY(s.fit(/*firstEpoch=*/0, fit));
  int64_t n = a.Batches ? a.Batches : 200;
  int64_t perEpoch = s.Items.numBatches();
  sample::SamplerScratch scratch;
  sample::Padder padder;
  Waste wb, wf;
  std::vector<int64_t> seeds;
  int64_t dynV = 0, dynE = 0;
  for (int64_t i = 0; i < n; ++i) {
    uint64_t epoch = 1000 + static_cast<uint64_t>(i / perEpoch);
    int64_t step = i % perEpoch;
    GNNC_TRY(s.Seeds->batch(epoch, step, seeds));
    sample::MiniBatch b;
    GNNC_TRY(s.Sampler.sample(seeds, epoch, step, scratch, b));
    for (const sample::Block &blk : b.Blocks)
      dynV += blk.NumSrc;
    dynV += b.Blocks.back().NumDst;
    dynE += b.numSampledEdges();
    sample::MiniBatch c = b;
    sample::PadOutcome o;
    GNNC_TRY(padder.pad(c, bound, sample::Oversize::Error, o));
    wb.add(o);
    GNNC_TRY(padder.pad(b, fit, sample::Oversize::Trim, o));
    wf.add(o);
  }
  json = fmt::format(
      "{{\"mode\": \"waste\", \"dataset\": \"{}\", \"vertices\": {}, "
      "\"edges\": {}, \"batch_size\": {}, \"fanouts\": {}, \"batches\": {}, "
      "\"batches_per_epoch\": {}, \"dynamic_vertices\": {}, "
      "\"dynamic_edges\": {}, \"bound\": {}, \"fit\": {}}}",
      a.Dataset, p.Data.NumNodes, p.Graph.numEdges(), a.BatchSize,
      jsonList(a.Fanouts), n, perEpoch, dynV, dynE, wb.json(bound),
      wf.json(fit));
  return Status::success();
}

//===----------------------------------------------------------------------===//
// step
//===----------------------------------------------------------------------===//

/// One form of the batches (dynamic, bound or fit) and the model state
/// that trains on it.
struct Form {
  std::string Name;
  std::vector<sample::PreparedBatch> Batches;
  train::Params P;
  std::unique_ptr<rt::Adam> Opt;
  std::vector<const float *> Grads;
  train::GrowBuffer Ws, Saved, Logits, GradLogits;
  std::vector<uint8_t> All;
  std::vector<double> PassSeconds;
  Waste W;
  sample::Capacities Caps;
};

Status step(const train::BlockModel &m, Form &f, sample::PreparedBatch &pb,
            uint64_t seed) {
  const rt::Graph &g1 = pb.Graphs[0], &g2 = pb.Graphs[1];
  int64_t n = g2.numDst();
  const uint8_t *mask = pb.Batch.labelMask().data();
  if (!pb.Batch.Padded) {
    f.All.assign(n, 1);
    mask = f.All.data();
  }
  GNNC_TRY(m.Train(g1, g2, pb.Batch.Features.data(), f.P.Ptrs.data(),
                   f.Logits.floats(), f.Saved.data(), f.Ws.data(), seed,
                   /*training=*/true));
  double loss;
  GNNC_TRY(rt::softmaxCrossEntropy(f.Logits.floats(), n, m.Classes,
                                   pb.Batch.Labels.data(), mask, loss,
                                   f.GradLogits.floats()));
  GNNC_TRY(m.Backward(g1, g2, pb.Batch.Features.data(), f.Saved.data(),
                      f.GradLogits.floats(), f.P.Ptrs.data(),
                      /*gradX=*/nullptr, f.P.GradPtrs.data(), f.Ws.data(),
                      seed, /*training=*/true));
  return f.Opt->step(f.Grads);
}

Status runStep(const Args &a, std::string &json) {
  const train::BlockModel *m = nullptr;
  std::vector<train::BlockModel> models = train::blockModels();
  for (const train::BlockModel &c : models)
    if (a.Model == c.Name)
      m = &c;
  Problem p;
  GNNC_TRY(p.load("cora", m->SelfLoops));
  Samplers s;
  GNNC_TRY(s.create(p, a));
  int64_t k =
      std::min<int64_t>(a.Batches ? a.Batches : 8, s.Items.numBatches());

  // The K batches of epoch 0, sampled and fetched once.
  auto features = sample::localFeatures(p.Data.X.data(), p.Data.NumNodes,
                                        p.Data.NumFeatures);
  sample::PipelineOptions po;
  po.Workers = 0;
  std::unique_ptr<sample::Pipeline> pipe;
  GNNC_TRY(sample::Pipeline::create(*s.Seeds, &s.Sampler, features.get(),
                                    p.Data.Y.data(), po, pipe));
  GNNC_TRY(pipe->startEpoch(0));
  std::vector<sample::MiniBatch> sampled;
  for (int64_t i = 0; i < k; ++i) {
    sample::PreparedBatch pb;
    bool done;
    GNNC_TRY(pipe->next(pb, done));
    sampled.push_back(std::move(pb.Batch));
  }

  std::vector<Form> forms(3);
  forms[0].Name = "dynamic";
  forms[1].Name = "bound";
  forms[2].Name = "fit";
  GNNC_TRY(s.bound(forms[1].Caps));
  GNNC_TRY(s.fit(/*firstEpoch=*/1, forms[2].Caps));
  sample::Padder padder;
  for (size_t fi = 0; fi < forms.size(); ++fi) {
    Form &f = forms[fi];
    for (const sample::MiniBatch &b : sampled) {
      sample::PreparedBatch pb;
      pb.Batch = b;
      if (fi > 0) {
        sample::PadOutcome o;
        GNNC_TRY(padder.pad(
            pb.Batch, f.Caps,
            fi == 1 ? sample::Oversize::Error : sample::Oversize::Trim, o));
        f.W.add(o);
      }
      pb.Graphs.resize(pb.Batch.Blocks.size());
      for (size_t i = 0; i < pb.Batch.Blocks.size(); ++i)
        GNNC_TRY(pb.Batch.Blocks[i].toGraph(pb.Graphs[i]));
      const rt::Graph &g1 = pb.Graphs[0], &g2 = pb.Graphs[1];
      GNNC_TRY(f.Ws.reserve(
          std::max(m->TrainWorkspace(g1, g2), m->BackwardWorkspace(g1, g2))));
      GNNC_TRY(f.Saved.reserve(m->SavedBytes(g1, g2)));
      GNNC_TRY(f.Logits.reserve(g2.numDst() * m->Classes * sizeof(float)));
      GNNC_TRY(f.GradLogits.reserve(g2.numDst() * m->Classes * sizeof(float)));
      f.Batches.push_back(std::move(pb));
    }
    GNNC_TRY(f.P.init(*m, a.Seed));
    rt::AdamOptions ao;
    ao.LearningRate = m->LearningRate;
    ao.WeightDecay = m->WeightDecay;
    f.Opt = std::make_unique<rt::Adam>(ao);
    for (int i = 0; i < m->NumParams; ++i) {
      GNNC_TRY(f.Opt->addParam(f.P.Ptrs[i], m->NumElements[i]));
      f.Grads.push_back(f.P.GradPtrs[i]);
    }
  }

  // Passes: the three forms one after the other, in a rotating order.
  for (int pass = 0; pass < a.Warmup + a.Reps; ++pass) {
    for (size_t j = 0; j < forms.size(); ++j) {
      Form &f = forms[(pass + j) % forms.size()];
      auto t0 = std::chrono::steady_clock::now();
      for (int64_t i = 0; i < k; ++i)
        GNNC_TRY(step(*m, f, f.Batches[i],
                      (static_cast<uint64_t>(pass) << 20 | i) * 2 + 1)
                     .withPrefix(f.Name));
      double sec =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
              .count();
      if (pass >= a.Warmup)
        f.PassSeconds.push_back(sec / static_cast<double>(k));
    }
  }

  int64_t dynV = 0, dynE = 0;
  for (const sample::MiniBatch &b : sampled) {
    for (const sample::Block &blk : b.Blocks)
      dynV += blk.NumSrc;
    dynV += b.Blocks.back().NumDst;
    dynE += b.numSampledEdges();
  }
  std::string forms_json;
  for (size_t fi = 0; fi < forms.size(); ++fi) {
    const Form &f = forms[fi];
    forms_json +=
        fmt::format("{}\"{}\": {{\"step_seconds\": {}, \"padding\": {}}}",
                    fi ? ", " : "", f.Name, jsonList(f.PassSeconds),
                    fi ? f.W.json(f.Caps) : std::string("null"));
  }
  const char *omp = std::getenv("OMP_NUM_THREADS");
  json = fmt::format(
      "{{\"mode\": \"step\", \"model\": \"{}\", \"entry\": \"{}\", "
      "\"dataset\": \"cora\", \"batch_size\": {}, \"fanouts\": {}, "
      "\"batches\": {}, \"reps\": {}, \"warmup\": {}, \"omp_threads\": "
      "\"{}\", \"dynamic_vertices\": {}, \"dynamic_edges\": {}, \"forms\": "
      "{{{}}}}}",
      a.Model, m->Entry, a.BatchSize, jsonList(a.Fanouts), k, a.Reps, a.Warmup,
      omp ? omp : "", dynV, dynE, forms_json);
  return Status::success();
}

} // namespace

int main(int argc, char **argv) {
  Args a;
  std::string error;
  if (!parseArgs(argc, argv, a, error)) {
    fmt::print(stderr, "gnnc-fixedsize-bench: error: {}\n", error);
    return 2;
  }
  std::string json;
  Status st = a.Mode == "step" ? runStep(a, json) : runWaste(a, json);
  if (!st.ok()) {
    fmt::print(stderr, "gnnc-fixedsize-bench: error: {}\n", st.message());
    return 1;
  }
  fmt::print("{}\n", json);
  return 0;
}
