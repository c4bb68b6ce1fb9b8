//===- main.cpp - gnnc-train: GCN and GAT on Cora and Citeseer ------------===//
//
// Part of gnnc. Trains the GCN (dsl-examples/gcn.gnn, Kipf and Welling, ICLR
// 2017) and GAT (dsl-examples/gat.gnn, Velickovic et al., ICLR 2018)
// examples, compiled to C++ by gnnc at build time (gnnc_add_model in
// CMakeLists.txt), on the Planetoid splits of Cora and Citeseer, the way
// PyTorch Geometric's examples/gcn.py and examples/gat.py do:
//
//   * one self-loop per vertex (both papers propagate over A + I);
//   * row-normalised features (both papers; PyG's NormalizeFeatures);
//   * parameters initialised as the .gnn declares (glorot, zeros), from a
//     seed;
//   * 200 epochs of full-batch training: the saving forward F_train
//     (dropout on, a new mask every epoch), the masked softmax
//     cross-entropy over the 140 (Cora) / 120 (Citeseer) training vertices,
//     the backward F_backward with the loss gradient as cotangent, one Adam
//     step (GCN: lr 0.01, weight decay 5e-4 on the first layer only, as
//     Kipf's code and PyG's gcn.py; GAT: lr 0.005, weight decay 5e-4 on
//     every parameter, as the GAT code and PyG's gat.py);
//   * after every step an inference forward (dropout off) for the
//     accuracies, and the test accuracy reported at the epoch of best
//     validation accuracy (PyG's examples; the papers also select on the
//     validation set, with early stopping). The last epoch's is shown too.
//
// Inference calls the typed entry point (GCN(g, x, params, out, workspace,
// training, seed)); the training step calls GCN.train and GCN.backward
// through the module's reflection table (gnnc/runtime/Ops.h, EntryInfo),
// which also gives the shapes of the values the forward saves for the
// backward, so this driver does not depend on which values those are.
//
//===----------------------------------------------------------------------===//

#include "gnnc_train_gat_citeseer/gat.h"
#include "gnnc_train_gat_cora/gat.h"
#include "gnnc_train_gcn_citeseer/gcn.h"
#include "gnnc_train_gcn_cora/gcn.h"

#include "gnnc/runtime/Dataset.h"
#include "gnnc/runtime/Graph.h"
#include "gnnc/runtime/Ops.h"
#include "gnnc/runtime/Status.h"
#include "gnnc/runtime/Train.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <string_view>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace rt = gnnc::rt;

namespace {

//===----------------------------------------------------------------------===//
// The compiled models
//===----------------------------------------------------------------------===//

/// Which parameters Adam decays.
enum class DecayScope { FirstLayer, All };

/// One model compiled for one dataset.
struct Variant {
  const char *model;   // "gcn"
  const char *dataset; // "cora"
  const char *entry;   // "GCN": the function in the module
  const rt::ModuleInfo *module;
  int64_t inDim, classes;
  // The parameters, from the generated <entry>_Params struct.
  int numParams;
  const char *const *paths;
  const char *const *inits;
  const int *ranks;
  const int64_t (*shapes)[rt::kMaxRank];
  const int64_t *numElements;
  // Inference through the typed entry point (training = false).
  rt::Status (*forward)(const rt::Graph &g, const float *x,
                        float *const *params, float *out, void *workspace);
  std::size_t (*forwardWorkspace)(const rt::Graph &g);
  // The papers' optimiser settings.
  double learningRate, weightDecay;
  DecayScope decayScope;
  double paperAccuracy; // test accuracy (%) reported by the paper
};

template <typename P>
using EntryFn = rt::Status (*)(const rt::Graph &, const float *, const P &,
                               float *, void *, bool, uint64_t);

template <typename P, EntryFn<P> F, std::size_t (*FW)(const rt::Graph &)>
Variant makeVariant(const char *model, const char *dataset, const char *entry,
                    const rt::ModuleInfo &module, int64_t inDim,
                    int64_t classes, double lr, double wd, DecayScope scope,
                    double paper) {
  Variant v;
  v.model = model;
  v.dataset = dataset;
  v.entry = entry;
  v.module = &module;
  v.inDim = inDim;
  v.classes = classes;
  v.numParams = P::kNumParams;
  v.paths = P::kPaths;
  v.inits = P::kInits;
  v.ranks = P::kRanks;
  v.shapes = P::kShapes;
  v.numElements = P::kNumElements;
  v.forward = [](const rt::Graph &g, const float *x, float *const *params,
                 float *out, void *workspace) {
    P p{};
    for (int i = 0; i < P::kNumParams; ++i)
      p.set(i, params[i]);
    return F(g, x, p, out, workspace, /*training=*/false, /*seed=*/0);
  };
  v.forwardWorkspace = FW;
  v.learningRate = lr;
  v.weightDecay = wd;
  v.decayScope = scope;
  v.paperAccuracy = paper;
  return v;
}

std::vector<Variant> variants() {
  return {
      makeVariant<gcn_cora::GCN_Params, gcn_cora::GCN,
                  gcn_cora::GCN_workspace_bytes>(
          "gcn", "cora", "GCN", gcn_cora::gnnc_module, 1433, 7, 0.01, 5e-4,
          DecayScope::FirstLayer, 81.5),
      makeVariant<gcn_citeseer::GCN_Params, gcn_citeseer::GCN,
                  gcn_citeseer::GCN_workspace_bytes>(
          "gcn", "citeseer", "GCN", gcn_citeseer::gnnc_module, 3703, 6, 0.01,
          5e-4, DecayScope::FirstLayer, 70.3),
      makeVariant<gat_cora::GAT_Params, gat_cora::GAT,
                  gat_cora::GAT_workspace_bytes>(
          "gat", "cora", "GAT", gat_cora::gnnc_module, 1433, 7, 0.005, 5e-4,
          DecayScope::All, 83.0),
      makeVariant<gat_citeseer::GAT_Params, gat_citeseer::GAT,
                  gat_citeseer::GAT_workspace_bytes>(
          "gat", "citeseer", "GAT", gat_citeseer::gnnc_module, 3703, 6, 0.005,
          5e-4, DecayScope::All, 72.5),
  };
}

//===----------------------------------------------------------------------===//
// Small helpers
//===----------------------------------------------------------------------===//

/// A 64-byte aligned, zero-initialised byte buffer (generated code carves
/// its workspace into kWorkspaceAlign-aligned pieces).
class AlignedBuffer {
public:
  AlignedBuffer() = default;
  AlignedBuffer(const AlignedBuffer &) = delete;
  AlignedBuffer &operator=(const AlignedBuffer &) = delete;
  ~AlignedBuffer() { std::free(Data); }

  bool allocate(std::size_t bytes) {
    std::free(Data);
    std::size_t n = rt::alignUp(static_cast<int64_t>(std::max<std::size_t>(bytes, 1)));
    Data = std::aligned_alloc(rt::kWorkspaceAlign, n);
    if (Data)
      std::memset(Data, 0, n);
    return Data != nullptr;
  }
  void *data() const { return Data; }

private:
  void *Data = nullptr;
};

double msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - t0)
      .count();
}

const rt::EntryInfo *findEntry(const rt::ModuleInfo &m,
                               const std::string &name) {
  for (int i = 0; i < m.numEntries; ++i)
    if (name == m.entries[i].name)
      return &m.entries[i];
  return nullptr;
}

/// The initialiser name and its argument: "glorot" -> ("glorot", 0),
/// "normal(0.1)" or "normal(std=0.1)" -> ("normal", 0.1).
void splitInit(std::string_view text, std::string &name, double &arg) {
  arg = 0.0;
  size_t open = text.find('(');
  name = std::string(text.substr(0, open));
  if (open == std::string_view::npos)
    return;
  std::string inside(text.substr(open + 1));
  size_t eq = inside.find('=');
  if (eq != std::string::npos)
    inside = inside.substr(eq + 1);
  arg = std::strtod(inside.c_str(), nullptr);
}

//===----------------------------------------------------------------------===//
// One call of a generated entry point through the reflection table
//===----------------------------------------------------------------------===//

/// The tensors of one entry point's call: element counts of every argument
/// and result (from EntryInfo::shapes) and the pointers to pass.
struct Call {
  const rt::EntryInfo *info = nullptr;
  std::vector<int64_t> argElements, resultElements;
  std::vector<const float *> inputs;
  std::vector<float *> outputs;
  AlignedBuffer workspace;
  const void *graph = nullptr;

  rt::Status prepare(const rt::EntryInfo *entry, const rt::Graph &g) {
    info = entry;
    graph = &g;
    if (info->numGraphs != 1 || info->graphKinds[0] != rt::GraphKind::Graph)
      return rt::Status::error(std::string(info->name) +
                               ": expected one Graph argument");
    if (info->numSizes != 0)
      return rt::Status::error(std::string(info->name) +
                               ": explicit sizes are not supported here");
    rt::CallArgs args = callArgs(false, 0);
    int total = 0;
    for (int i = 0; i < info->numArgs; ++i)
      total += info->args[i].rank;
    for (int i = 0; i < info->numResults; ++i)
      total += info->results[i].rank;
    std::vector<int64_t> dims(static_cast<size_t>(total) + 1);
    info->shapes(args, dims.data());
    size_t at = 0;
    auto count = [&](const rt::TensorInfo &t) {
      int64_t n = 1;
      for (int k = 0; k < t.rank; ++k)
        n *= dims[at++];
      return n;
    };
    argElements.clear();
    resultElements.clear();
    for (int i = 0; i < info->numArgs; ++i)
      argElements.push_back(count(info->args[i]));
    for (int i = 0; i < info->numResults; ++i)
      resultElements.push_back(count(info->results[i]));
    inputs.assign(info->numArgs, nullptr);
    outputs.assign(info->numResults, nullptr);
    if (!workspace.allocate(info->workspaceBytes(args)))
      return rt::Status::error(std::string(info->name) +
                               ": cannot allocate the workspace");
    return rt::Status::success();
  }

  rt::CallArgs callArgs(bool training, uint64_t seed) const {
    rt::CallArgs a{};
    a.graphs = &graph;
    a.sizes = nullptr;
    a.inputs = inputs.data();
    a.outputs = outputs.data();
    a.workspace = workspace.data();
    a.training = training;
    a.seed = seed;
    return a;
  }

  rt::Status run(bool training, uint64_t seed) const {
    for (size_t i = 0; i < inputs.size(); ++i)
      if (!inputs[i])
        return rt::Status::error(std::string(info->name) + ": argument '" +
                                 info->args[i].name + "' is not bound");
    for (size_t i = 0; i < outputs.size(); ++i)
      if (!outputs[i])
        return rt::Status::error(std::string(info->name) + ": result '" +
                                 info->results[i].name + "' is not bound");
    return info->call(callArgs(training, seed))
        .withPrefix(std::string(info->name));
  }
};

//===----------------------------------------------------------------------===//
// Training
//===----------------------------------------------------------------------===//

struct Options {
  std::string model = "gcn", dataset = "cora", dataPath;
  int epochs = 200, seeds = 1, logEvery = 1;
  uint64_t firstSeed = 0;
  bool quiet = false;
  bool normalize = true;
  double checkMinTestAcc = -1.0;
  double learningRate = -1.0, weightDecay = -1.0; // < 0: the paper's
  std::string decayScope;                         // "": the paper's
};

struct Problem {
  rt::Dataset data;
  rt::Graph graph; // with self-loops
};

struct RunResult {
  double bestVal = -1.0, testAtBestVal = 0.0;
  int bestEpoch = 0;
  double finalTrain = 0.0, finalVal = 0.0, finalTest = 0.0;
  double firstLoss = 0.0, lastLoss = 0.0;
  double stepMs = 0.0, evalMs = 0.0; // means per epoch (wall clock)
  double cpuMs = 0.0; // process CPU time per epoch (all threads, step + eval)
};

rt::Status trainOnce(const Variant &v, const Problem &p, const Options &opt,
                     uint64_t seed, RunResult &result) {
  const rt::Dataset &ds = p.data;
  const rt::Graph &g = p.graph;
  const int64_t n = ds.NumNodes, c = ds.NumClasses;

  // Parameters, initialised as the .gnn declares them.
  std::vector<std::vector<float>> params(v.numParams), grads(v.numParams);
  std::vector<float *> paramPtrs(v.numParams);
  for (int i = 0; i < v.numParams; ++i) {
    params[i].assign(static_cast<size_t>(v.numElements[i]), 0.0f);
    grads[i].assign(static_cast<size_t>(v.numElements[i]), 0.0f);
    paramPtrs[i] = params[i].data();
    std::string init;
    double arg;
    splitInit(v.inits[i], init, arg);
    rt::Status st = rt::initParam(init, arg, v.shapes[i],
                                  static_cast<size_t>(v.ranks[i]),
                                  params[i].data(),
                                  rt::paramSeed(seed, v.paths[i]));
    if (!st.ok())
      return st.withPrefix(std::string("initialising ") + v.paths[i]);
  }

  // Adam: one optimiser for the decayed parameters, one for the others.
  DecayScope scope = v.decayScope;
  if (opt.decayScope == "all")
    scope = DecayScope::All;
  else if (opt.decayScope == "first")
    scope = DecayScope::FirstLayer;
  rt::AdamOptions decayed, plain;
  decayed.LearningRate = plain.LearningRate =
      opt.learningRate >= 0 ? opt.learningRate : v.learningRate;
  decayed.WeightDecay = opt.weightDecay >= 0 ? opt.weightDecay : v.weightDecay;
  rt::Adam adamDecayed(decayed), adamPlain(plain);
  std::vector<const float *> gradsDecayed, gradsPlain;
  for (int i = 0; i < v.numParams; ++i) {
    bool decay = scope == DecayScope::All ||
                 std::string_view(v.paths[i]).rfind("conv1.", 0) == 0;
    rt::Adam &adam = decay ? adamDecayed : adamPlain;
    rt::Status st = adam.addParam(params[i].data(), v.numElements[i]);
    if (!st.ok())
      return st;
    (decay ? gradsDecayed : gradsPlain).push_back(grads[i].data());
  }

  // The saving forward and the backward, bound to their buffers.
  std::string entry = v.entry;
  const rt::EntryInfo *trainInfo = findEntry(*v.module, entry + ".train");
  const rt::EntryInfo *backInfo = findEntry(*v.module, entry + ".backward");
  if (!trainInfo || !backInfo)
    return rt::Status::error("the module has no " + entry + ".train or " +
                             entry + ".backward (compile it with TRAINING)");
  Call train, back;
  rt::Status st = train.prepare(trainInfo, g);
  if (st.ok())
    st = back.prepare(backInfo, g);
  if (!st.ok())
    return st;

  auto paramIndex = [&](const char *path) {
    for (int i = 0; i < v.numParams; ++i)
      if (std::strcmp(path, v.paths[i]) == 0)
        return i;
    return -1;
  };
  std::vector<float> logits(static_cast<size_t>(n * c)),
      gradLogits(static_cast<size_t>(n * c)),
      gradX(static_cast<size_t>(n * v.inDim));
  std::vector<std::vector<float>> saved(trainInfo->numResults);

  for (int i = 0; i < trainInfo->numArgs; ++i) {
    const rt::TensorInfo &t = trainInfo->args[i];
    if (std::strcmp(t.role, "param") == 0) {
      int k = paramIndex(t.name);
      if (k < 0 || train.argElements[i] != v.numElements[k])
        return rt::Status::error(std::string(trainInfo->name) + ": parameter " +
                                 t.name + " does not match " + v.entry +
                                 "_Params");
      train.inputs[i] = params[k].data();
    } else if (std::strcmp(t.name, "x") == 0 &&
               train.argElements[i] == n * v.inDim) {
      train.inputs[i] = ds.X.data();
    }
  }
  for (int i = 0; i < trainInfo->numResults; ++i) {
    const rt::TensorInfo &t = trainInfo->results[i];
    if (std::strcmp(t.role, "output") == 0 &&
        train.resultElements[i] == n * c) {
      train.outputs[i] = logits.data();
    } else if (std::strcmp(t.role, "saved") == 0) {
      saved[i].assign(static_cast<size_t>(train.resultElements[i]), 0.0f);
      train.outputs[i] = saved[i].data();
    }
  }
  for (int i = 0; i < backInfo->numArgs; ++i) {
    const rt::TensorInfo &t = backInfo->args[i];
    if (std::strcmp(t.role, "param") == 0) {
      int k = paramIndex(t.name);
      if (k < 0)
        return rt::Status::error(std::string(backInfo->name) +
                                 ": unknown parameter " + t.name);
      back.inputs[i] = params[k].data();
    } else if (std::strcmp(t.role, "saved") == 0) {
      for (int j = 0; j < trainInfo->numResults; ++j)
        if (std::strcmp(trainInfo->results[j].role, "saved") == 0 &&
            std::strcmp(trainInfo->results[j].name, t.name) == 0 &&
            train.resultElements[j] == back.argElements[i])
          back.inputs[i] = saved[j].data();
    } else if (std::strcmp(t.name, "x") == 0) {
      back.inputs[i] = ds.X.data();
    } else if (std::strcmp(t.name, "cotangent") == 0 &&
               back.argElements[i] == n * c) {
      back.inputs[i] = gradLogits.data();
    }
  }
  for (int i = 0; i < backInfo->numResults; ++i) {
    const rt::TensorInfo &t = backInfo->results[i];
    if (std::strcmp(t.role, "grad") != 0)
      continue;
    int k = paramIndex(t.name);
    if (k >= 0 && back.resultElements[i] == v.numElements[k])
      back.outputs[i] = grads[k].data();
    else if (std::strcmp(t.name, "x") == 0 &&
             back.resultElements[i] == n * v.inDim)
      back.outputs[i] = gradX.data();
  }

  // Inference.
  AlignedBuffer inferWs;
  if (!inferWs.allocate(v.forwardWorkspace(g)))
    return rt::Status::error("cannot allocate the inference workspace");
  std::vector<float> evalLogits(static_cast<size_t>(n * c));

  double stepTotal = 0.0, evalTotal = 0.0;
  std::clock_t cpu0 = std::clock();
  std::vector<double> losses;
  rt::SplitMix64 epochSeeds(seed ^ 0x5EEDF00DCAFEull);
  for (int epoch = 1; epoch <= opt.epochs; ++epoch) {
    uint64_t stepSeed = epochSeeds.next();
    if (stepSeed == 0) // 0 would reproduce the interpreter's fixed masks
      stepSeed = 1;

    auto t0 = std::chrono::steady_clock::now();
    st = train.run(/*training=*/true, stepSeed);
    if (!st.ok())
      return st;
    double loss = 0.0;
    st = rt::softmaxCrossEntropy(logits.data(), n, c, ds.Y.data(),
                                 ds.TrainMask.data(), loss, gradLogits.data());
    if (!st.ok())
      return st.withPrefix("loss");
    st = back.run(/*training=*/true, stepSeed);
    if (!st.ok())
      return st;
    st = adamDecayed.step(gradsDecayed);
    if (st.ok() && adamPlain.numParams() > 0)
      st = adamPlain.step(gradsPlain);
    if (!st.ok())
      return st.withPrefix("adam");
    double stepMs = msSince(t0);

    auto t1 = std::chrono::steady_clock::now();
    st = v.forward(g, ds.X.data(), paramPtrs.data(), evalLogits.data(),
                   inferWs.data());
    if (!st.ok())
      return st.withPrefix(std::string(v.entry));
    double accTrain, accVal, accTest;
    st = rt::maskedAccuracy(evalLogits.data(), n, c, ds.Y.data(),
                            ds.TrainMask.data(), accTrain);
    if (st.ok())
      st = rt::maskedAccuracy(evalLogits.data(), n, c, ds.Y.data(),
                              ds.ValMask.data(), accVal);
    if (st.ok())
      st = rt::maskedAccuracy(evalLogits.data(), n, c, ds.Y.data(),
                              ds.TestMask.data(), accTest);
    if (!st.ok())
      return st.withPrefix("accuracy");
    double evalMs = msSince(t1);

    if (!std::isfinite(loss))
      return rt::Status::error("epoch " + std::to_string(epoch) +
                               ": the loss is not finite");
    losses.push_back(loss);
    stepTotal += stepMs;
    evalTotal += evalMs;
    if (accVal > result.bestVal) {
      result.bestVal = accVal;
      result.testAtBestVal = accTest;
      result.bestEpoch = epoch;
    }
    result.finalTrain = accTrain;
    result.finalVal = accVal;
    result.finalTest = accTest;
    if (!opt.quiet && (epoch % opt.logEvery == 0 || epoch == 1))
      std::printf("  epoch %3d  loss %.4f  train %.4f  val %.4f  test %.4f  "
                  "%6.2f ms (+ %5.2f ms eval)\n",
                  epoch, loss, accTrain, accVal, accTest, stepMs, evalMs);
    if (!opt.quiet)
      std::fflush(stdout);
  }
  result.firstLoss = losses.front();
  // The mean of the last five losses: dropout makes single epochs noisy.
  size_t tail = std::min<size_t>(5, losses.size());
  double sum = 0.0;
  for (size_t i = losses.size() - tail; i < losses.size(); ++i)
    sum += losses[i];
  result.lastLoss = sum / static_cast<double>(tail);
  result.stepMs = stepTotal / opt.epochs;
  result.evalMs = evalTotal / opt.epochs;
  result.cpuMs = 1000.0 * static_cast<double>(std::clock() - cpu0) /
                 CLOCKS_PER_SEC / opt.epochs;
  return rt::Status::success();
}

rt::Status loadProblem(const Variant &v, const Options &opt, Problem &p,
                       std::string &source) {
  rt::Status st;
  if (!opt.dataPath.empty()) {
    source = opt.dataPath;
    st = rt::loadDataset(opt.dataPath, p.data);
  } else {
    // What findDataset reads: <dir>/<name>.gnnd, else the folder <dir>/<name>.
    source = rt::dataDir() + "/" + opt.dataset;
    if (std::FILE *f = std::fopen((source + ".gnnd").c_str(), "rb")) {
      std::fclose(f);
      source += ".gnnd";
    }
    st = rt::findDataset(opt.dataset, p.data);
#ifdef GNNC_TRAIN_DATA_DIR
    // The installed package's copy, when the library's default folder (the
    // source tree gnnc was built from) is gone and GNNC_DATA_DIR is unset.
    const char *env = std::getenv("GNNC_DATA_DIR");
    if (!st.ok() && (!env || !*env)) {
      std::string installed =
          std::string(GNNC_TRAIN_DATA_DIR) + "/" + opt.dataset + ".gnnd";
      if (rt::loadDataset(installed, p.data).ok()) {
        source = installed;
        st = rt::Status::success();
      }
    }
#endif
  }
  if (!st.ok())
    return st;
  const rt::Dataset &ds = p.data;
  if (ds.NumFeatures != v.inDim || ds.NumClasses != v.classes)
    return rt::Status::error(
        source + ": " + std::to_string(ds.NumFeatures) + " features and " +
        std::to_string(ds.NumClasses) + " classes, but the " + v.model +
        " model for " + v.dataset + " was compiled for " +
        std::to_string(v.inDim) + " and " + std::to_string(v.classes));
  rt::Graph g;
  st = rt::Graph::fromEdgeIndex(ds.EdgeSrc.data(), ds.EdgeDst.data(),
                                ds.numEdges(), ds.NumNodes, ds.NumNodes, g);
  if (!st.ok())
    return st.withPrefix(source);
  st = rt::addSelfLoops(g, p.graph);
  if (!st.ok())
    return st;
  if (opt.normalize) {
    st = rt::normalizeRows(p.data.X.data(), ds.NumNodes, ds.NumFeatures);
    if (!st.ok())
      return st;
  }
  return rt::Status::success();
}

void meanStd(const std::vector<double> &xs, double &mean, double &sd) {
  mean = 0.0;
  for (double x : xs)
    mean += x;
  mean /= static_cast<double>(xs.size());
  double var = 0.0;
  for (double x : xs)
    var += (x - mean) * (x - mean);
  sd = std::sqrt(var / static_cast<double>(xs.size()));
}

const char *kUsage =
    "usage: gnnc-train [--model gcn|gat] [--dataset cora|citeseer]\n"
    "                  [--data PATH] [--epochs N] [--seeds K] [--seed S]\n"
    "                  [--log-every N] [--quiet] [--check-min-test-acc A]\n"
    "                  [--lr X] [--weight-decay X] [--decay first|all]\n"
    "                  [--no-normalize]\n"
    "\n"
    "Trains the GCN or GAT example (compiled by gnnc) on Cora or Citeseer and\n"
    "reports the test accuracy at the epoch of best validation accuracy.\n"
    "\n"
    "  --model         gcn (default) or gat\n"
    "  --dataset       cora (default) or citeseer\n"
    "  --data PATH     a .gnnd bundle or a folder of .npy files instead of the\n"
    "                  bundled dataset\n"
    "  --epochs N      epochs per run (default 200)\n"
    "  --seeds K       runs with seeds S, S+1, ..., S+K-1; prints mean and\n"
    "                  standard deviation of the test accuracy (default 1)\n"
    "  --seed S        the first seed (default 0)\n"
    "  --log-every N   print every N-th epoch's line (and the first; default 1)\n"
    "  --quiet         no per-epoch lines\n"
    "  --check-min-test-acc A\n"
    "                  exit 1 unless the mean test accuracy is at least A (a\n"
    "                  fraction) and every run's loss fell\n"
    "  --lr, --weight-decay, --decay\n"
    "                  override the paper's optimiser settings (weight decay\n"
    "                  on the first layer's parameters or on all of them)\n"
    "  --no-normalize  keep the raw 0/1 features\n";

bool parseArgs(int argc, char **argv, Options &opt, std::string &error) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](std::string &out) {
      size_t eq = a.find('=');
      if (a.rfind("--", 0) == 0 && eq != std::string::npos) {
        out = a.substr(eq + 1);
        a = a.substr(0, eq);
        return true;
      }
      if (i + 1 >= argc) {
        error = a + " needs a value";
        return false;
      }
      out = argv[++i];
      return true;
    };
    auto number = [&](const std::string &s, double &out) {
      char *end = nullptr;
      out = std::strtod(s.c_str(), &end);
      if (s.empty() || *end || !std::isfinite(out)) {
        error = a + ": '" + s + "' is not a number";
        return false;
      }
      return true;
    };
    auto integer = [&](const std::string &s, long long lo, long long &out) {
      char *end = nullptr;
      out = std::strtoll(s.c_str(), &end, 10);
      if (s.empty() || *end || out < lo) {
        error = a + ": '" + s + "' is not an integer >= " + std::to_string(lo);
        return false;
      }
      return true;
    };
    std::string key = a.substr(0, a.find('='));
    std::string s;
    long long k;
    double d;
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    } else if (a == "--quiet" || a == "-q") {
      opt.quiet = true;
    } else if (a == "--no-normalize") {
      opt.normalize = false;
    } else if (key == "--model") {
      if (!value(opt.model))
        return false;
    } else if (key == "--dataset") {
      if (!value(opt.dataset))
        return false;
    } else if (key == "--data") {
      if (!value(opt.dataPath))
        return false;
    } else if (key == "--epochs") {
      if (!value(s) || !integer(s, 1, k))
        return false;
      opt.epochs = static_cast<int>(std::min<long long>(k, 1000000));
    } else if (key == "--seeds") {
      if (!value(s) || !integer(s, 1, k))
        return false;
      opt.seeds = static_cast<int>(std::min<long long>(k, 10000));
    } else if (key == "--log-every") {
      if (!value(s) || !integer(s, 1, k))
        return false;
      opt.logEvery = static_cast<int>(std::min<long long>(k, 1000000));
    } else if (key == "--seed") {
      if (!value(s) || !integer(s, 0, k))
        return false;
      opt.firstSeed = static_cast<uint64_t>(k);
    } else if (key == "--check-min-test-acc") {
      if (!value(s) || !number(s, d))
        return false;
      opt.checkMinTestAcc = d;
    } else if (key == "--lr") {
      if (!value(s) || !number(s, d) || d < 0) {
        if (error.empty())
          error = "--lr must be >= 0";
        return false;
      }
      opt.learningRate = d;
    } else if (key == "--weight-decay") {
      if (!value(s) || !number(s, d) || d < 0) {
        if (error.empty())
          error = "--weight-decay must be >= 0";
        return false;
      }
      opt.weightDecay = d;
    } else if (key == "--decay") {
      if (!value(opt.decayScope))
        return false;
      if (opt.decayScope != "first" && opt.decayScope != "all") {
        error = "--decay: expected first or all, got '" + opt.decayScope + "'";
        return false;
      }
    } else {
      error = "unknown argument '" + a + "' (see --help)";
      return false;
    }
  }
  return true;
}

} // namespace

int main(int argc, char **argv) {
  Options opt;
  std::string error;
  if (!parseArgs(argc, argv, opt, error)) {
    std::fprintf(stderr, "gnnc-train: error: %s\n", error.c_str());
    return 2;
  }
  std::vector<Variant> all = variants();
  const Variant *v = nullptr;
  for (const Variant &c : all)
    if (opt.model == c.model && opt.dataset == c.dataset)
      v = &c;
  if (!v) {
    std::fprintf(stderr,
                 "gnnc-train: error: no compiled model for --model %s "
                 "--dataset %s (models: gcn, gat; datasets: cora, citeseer)\n",
                 opt.model.c_str(), opt.dataset.c_str());
    return 2;
  }

  Problem problem;
  std::string source;
  rt::Status st = loadProblem(*v, opt, problem, source);
  if (!st.ok()) {
    std::fprintf(stderr, "gnnc-train: error: %s\n", st.message().c_str());
    return 1;
  }

  int threads = 1;
#ifdef _OPENMP
  threads = omp_get_max_threads();
#endif
  const rt::Dataset &ds = problem.data;
  auto count = [](const std::vector<uint8_t> &m) {
    return static_cast<long long>(std::count_if(
        m.begin(), m.end(), [](uint8_t b) { return b != 0; }));
  };
  std::printf("== %s on %s (%s): %lld nodes, %lld edges + %lld self-loops, "
              "%lld features, %lld classes, train/val/test %lld/%lld/%lld\n",
              v->entry, opt.dataset.c_str(), source.c_str(),
              static_cast<long long>(ds.NumNodes),
              static_cast<long long>(ds.numEdges()),
              static_cast<long long>(ds.NumNodes),
              static_cast<long long>(ds.NumFeatures),
              static_cast<long long>(ds.NumClasses), count(ds.TrainMask),
              count(ds.ValMask), count(ds.TestMask));
  std::printf("   %d epochs x %d seed(s) from %llu; Adam lr %g, weight decay "
              "%g (%s); %s features; %d thread(s)\n",
              opt.epochs, opt.seeds,
              static_cast<unsigned long long>(opt.firstSeed),
              opt.learningRate >= 0 ? opt.learningRate : v->learningRate,
              opt.weightDecay >= 0 ? opt.weightDecay : v->weightDecay,
              (opt.decayScope.empty()
                   ? v->decayScope == DecayScope::All
                   : opt.decayScope == "all")
                  ? "all parameters"
                  : "first layer only",
              opt.normalize ? "row-normalised" : "raw", threads);
  std::fflush(stdout);

  std::vector<double> selected, finals, stepMs, evalMs, cpuMs;
  bool lossFell = true;
  for (int s = 0; s < opt.seeds; ++s) {
    uint64_t seed = opt.firstSeed + static_cast<uint64_t>(s);
    if (!opt.quiet)
      std::printf("-- seed %llu\n", static_cast<unsigned long long>(seed));
    RunResult r;
    st = trainOnce(*v, problem, opt, seed, r);
    if (!st.ok()) {
      std::fprintf(stderr, "gnnc-train: error: %s\n", st.message().c_str());
      return 1;
    }
    std::printf("seed %llu: test %.4f at best val %.4f (epoch %d); last "
                "epoch: test %.4f, val %.4f, train %.4f; loss %.4f -> %.4f; "
                "%.2f ms/epoch (+ %.2f ms eval; CPU %.2f ms)\n",
                static_cast<unsigned long long>(seed), r.testAtBestVal,
                r.bestVal, r.bestEpoch, r.finalTest, r.finalVal, r.finalTrain,
                r.firstLoss, r.lastLoss, r.stepMs, r.evalMs, r.cpuMs);
    std::fflush(stdout);
    selected.push_back(r.testAtBestVal * 100.0);
    finals.push_back(r.finalTest * 100.0);
    stepMs.push_back(r.stepMs);
    evalMs.push_back(r.evalMs);
    cpuMs.push_back(r.cpuMs);
    if (!(r.lastLoss < r.firstLoss))
      lossFell = false;
  }

  double mSel, sdSel, mFin, sdFin, mStep, sdStep, mEval, sdEval, mCpu, sdCpu;
  meanStd(selected, mSel, sdSel);
  meanStd(finals, mFin, sdFin);
  meanStd(stepMs, mStep, sdStep);
  meanStd(evalMs, mEval, sdEval);
  meanStd(cpuMs, mCpu, sdCpu);
  std::printf("== %s %s, %d seed(s), %d epochs: test accuracy %.2f +- %.2f %% "
              "(at the best validation epoch; last epoch %.2f +- %.2f %%); "
              "paper %.1f %%; %.2f ms/epoch training (fastest run %.2f; + "
              "%.2f ms inference; CPU time %.2f ms/epoch)\n",
              v->entry, opt.dataset.c_str(), opt.seeds, opt.epochs, mSel, sdSel,
              mFin, sdFin, v->paperAccuracy, mStep,
              *std::min_element(stepMs.begin(), stepMs.end()), mEval, mCpu);

  if (opt.checkMinTestAcc >= 0) {
    bool ok = true;
    if (!lossFell) {
      std::fprintf(stderr, "gnnc-train: check failed: the training loss did "
                           "not fall in every run\n");
      ok = false;
    }
    if (mSel / 100.0 < opt.checkMinTestAcc) {
      std::fprintf(stderr,
                   "gnnc-train: check failed: mean test accuracy %.4f is "
                   "below %.4f\n",
                   mSel / 100.0, opt.checkMinTestAcc);
      ok = false;
    }
    if (!ok)
      return 1;
    std::printf("check passed: loss fell, test accuracy %.4f >= %.4f\n",
                mSel / 100.0, opt.checkMinTestAcc);
  }
  return 0;
}
