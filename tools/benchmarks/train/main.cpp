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
// through the module's reflection table with the runtime's generic call
// (rt::Invocation, gnnc/runtime/Invoke.h), which also gives the shapes of
// the values the forward saves for the backward, so this driver does not
// depend on which values those are.
//
// --device cuda (when built with CUDA: GNNC_TRAIN_HAVE_CUDA) runs the same
// models compiled with BACKEND cuda (docs/abi.md, "CUDA") on device copies
// of the graph, the features and the parameters. The training loop is the
// same for both devices (trainOnce): the parameters, the loss and its
// gradient, Adam and the accuracies stay on the host, and a Backend
// (CpuBackend, CudaBackend) runs the entry points on them.
//
//===----------------------------------------------------------------------===//

#include "gnnc_train_gat_citeseer/gat.h"
#include "gnnc_train_gat_cora/gat.h"
#include "gnnc_train_gcn_citeseer/gcn.h"
#include "gnnc_train_gcn_cora/gcn.h"
#include "gnnc_train_sage_cora/sage_mean.h"
#include "gnnc_train_sage_sbm/sage_mean.h"
#ifdef GNNC_TRAIN_HAVE_CUDA
#include "gnnc_train_gat_citeseer_cuda/gat.h"
#include "gnnc_train_gat_cora_cuda/gat.h"
#include "gnnc_train_gcn_citeseer_cuda/gcn.h"
#include "gnnc_train_gcn_cora_cuda/gcn.h"

#include "gnnc/runtime/cuda/Device.h"
#include "gnnc/runtime/cuda/DeviceOps.h"
#include "gnnc/runtime/cuda/Invoke.h"

#include <cuda_runtime_api.h>
#endif

#include "MiniBatch.h"

#include "gnnc/runtime/Dataset.h"
#include "gnnc/runtime/Flags.h"
#include "gnnc/runtime/Graph.h"
#include "gnnc/runtime/Invoke.h"
#include "gnnc/runtime/Ops.h"
#include "gnnc/runtime/Status.h"
#include "gnnc/runtime/Train.h"

#include <fmt/core.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace rt = gnnc::rt;
#ifdef GNNC_TRAIN_HAVE_CUDA
namespace cuda = gnnc::rt::cuda;
#endif

namespace {

//===----------------------------------------------------------------------===//
// The compiled models
//===----------------------------------------------------------------------===//

/// Which parameters Adam decays.
enum class DecayScope { FirstLayer, All };

#ifdef GNNC_TRAIN_HAVE_CUDA
/// The model compiled with BACKEND cuda: its reflection table and its typed
/// inference entry point (device pointers, queued on `stream`).
struct CudaModel {
  const cuda::ModuleInfo *module = nullptr;
  rt::Status (*forward)(const cuda::DeviceGraph &g, const float *x,
                        float *const *params, float *out, void *workspace,
                        cudaStream_t stream) = nullptr;
  std::size_t (*forwardWorkspace)(const cuda::DeviceGraph &g) = nullptr;
};
#else
struct CudaModel {}; // built without CUDA
#endif

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
  CudaModel cuda;       // the same model for --device cuda
  bool hasCuda = true;  // whether `cuda` was built
  bool selfLoops = true; // whether the graph gets one self-loop per vertex
};

/// Calls the typed inference entry point F (training = false) with the
/// parameters in P::kPaths order; `stream` is the CUDA stream of a CUDA
/// entry point, nothing for a C++ one.
template <typename P, auto F, typename GraphT, typename... Stream>
rt::Status inferTyped(const GraphT &g, const float *x, float *const *params,
                      float *out, void *workspace, Stream... stream) {
  P p{};
  for (int i = 0; i < P::kNumParams; ++i)
    p.set(i, params[i]);
  return F(g, x, p, out, workspace, /*training=*/false, /*seed=*/0, stream...);
}

template <typename P, auto F, auto FW>
Variant makeVariant(const char *model, const char *dataset, const char *entry,
                    const rt::ModuleInfo &module, int64_t inDim,
                    int64_t classes, double lr, double wd, DecayScope scope,
                    double paper, CudaModel cuda) {
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
  v.forward = &inferTyped<P, F, rt::Graph>;
  v.forwardWorkspace = FW;
  v.learningRate = lr;
  v.weightDecay = wd;
  v.decayScope = scope;
  v.paperAccuracy = paper;
  v.cuda = cuda;
  return v;
}

#ifdef GNNC_TRAIN_HAVE_CUDA
template <typename P, auto F, auto FW>
CudaModel makeCudaModel(const cuda::ModuleInfo &module) {
  static_assert(P::kNumParams > 0, "a model without parameters");
  return {&module, &inferTyped<P, F, cuda::DeviceGraph, cudaStream_t>, FW};
}
/// The model compiled into namespace NS with BACKEND cuda; F is its entry.
#define TRAIN_CUDA_MODEL(NS, F)                                                \
  makeCudaModel<NS::F##_Params, NS::F, NS::F##_workspace_bytes>(NS::gnnc_module)
#else
#define TRAIN_CUDA_MODEL(NS, F)                                                \
  CudaModel {}
#endif

/// GraphSAGE-mean (dsl-examples/sage_mean.gnn), C++ only: the full-batch
/// counterpart of the mini-batch SAGE (--minibatch), on Cora and on
/// gnnc-gen-sbm's graphs (--dataset sbm --data DIR: 64 features, 16
/// classes). Its mean aggregator has a separate self term, so the graph gets
/// no self-loops. The paper reports no accuracy for these (0 below).
template <typename P, auto F, auto FW>
Variant sageVariant(const char *dataset, const rt::ModuleInfo &module,
                    int64_t inDim, int64_t classes) {
  Variant v = makeVariant<P, F, FW>("sage", dataset, "GraphSAGE", module, inDim,
                                    classes, 0.01, 5e-4, DecayScope::All, 0.0,
                                    CudaModel{});
  v.hasCuda = false;
  v.selfLoops = false;
  return v;
}

std::vector<Variant> variants() {
  return {
      makeVariant<gcn_cora::GCN_Params, gcn_cora::GCN,
                  gcn_cora::GCN_workspace_bytes>(
          "gcn", "cora", "GCN", gcn_cora::gnnc_module, 1433, 7, 0.01, 5e-4,
          DecayScope::FirstLayer, 81.5, TRAIN_CUDA_MODEL(gcn_cora_cuda, GCN)),
      makeVariant<gcn_citeseer::GCN_Params, gcn_citeseer::GCN,
                  gcn_citeseer::GCN_workspace_bytes>(
          "gcn", "citeseer", "GCN", gcn_citeseer::gnnc_module, 3703, 6, 0.01,
          5e-4, DecayScope::FirstLayer, 70.3,
          TRAIN_CUDA_MODEL(gcn_citeseer_cuda, GCN)),
      makeVariant<gat_cora::GAT_Params, gat_cora::GAT,
                  gat_cora::GAT_workspace_bytes>(
          "gat", "cora", "GAT", gat_cora::gnnc_module, 1433, 7, 0.005, 5e-4,
          DecayScope::All, 83.0, TRAIN_CUDA_MODEL(gat_cora_cuda, GAT)),
      makeVariant<gat_citeseer::GAT_Params, gat_citeseer::GAT,
                  gat_citeseer::GAT_workspace_bytes>(
          "gat", "citeseer", "GAT", gat_citeseer::gnnc_module, 3703, 6, 0.005,
          5e-4, DecayScope::All, 72.5,
          TRAIN_CUDA_MODEL(gat_citeseer_cuda, GAT)),
      sageVariant<sage_cora::GraphSAGE_Params, sage_cora::GraphSAGE,
                  sage_cora::GraphSAGE_workspace_bytes>(
          "cora", sage_cora::gnnc_module, 1433, 7),
      sageVariant<sage_sbm::GraphSAGE_Params, sage_sbm::GraphSAGE,
                  sage_sbm::GraphSAGE_workspace_bytes>(
          "sbm", sage_sbm::gnnc_module, 64, 16),
  };
}

//===----------------------------------------------------------------------===//
// Small helpers
//===----------------------------------------------------------------------===//

double msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - t0)
      .count();
}

//===----------------------------------------------------------------------===//
// Memory and reflection, for either device
//===----------------------------------------------------------------------===//

/// Host memory for tensors and workspaces: 64-byte aligned, zeroed, freed
/// with the object.
class HostMemory {
public:
  rt::Status allocate(std::size_t bytes, void *&out) {
    rt::HostBuffer buffer;
    GNNC_TRY(rt::HostBuffer::allocate(
        std::max<std::size_t>(bytes, rt::kWorkspaceAlign), buffer));
    out = buffer.data();
    Buffers.push_back(std::move(buffer));
    return rt::Status::success();
  }

private:
  std::vector<rt::HostBuffer> Buffers;
};

/// The reflection types of generated C++ (docs/abi.md, "Reflection"), the
/// runtime's generic call of its entry points (gnnc/runtime/Invoke.h) and
/// the memory its tensors are in.
struct CpuAbi {
  using Graph = rt::Graph;
  using ModuleInfo = rt::ModuleInfo;
  using GraphArgs = rt::GraphArgs;
  using Invocation = rt::Invocation;
  using Memory = HostMemory;
};

#ifdef GNNC_TRAIN_HAVE_CUDA
/// Device memory for tensors and workspaces (cudaMalloc: 256-byte aligned),
/// zeroed, freed with the object.
class DeviceMemory {
public:
  rt::Status allocate(std::size_t bytes, void *&out) {
    cuda::DeviceBuffer buffer;
    GNNC_TRY(cuda::DeviceBuffer::allocate(
        std::max<std::size_t>(bytes, rt::kWorkspaceAlign), buffer));
    GNNC_CUDA_CHECK(cudaMemset(buffer.data(), 0, buffer.size()));
    out = buffer.data();
    Buffers.push_back(std::move(buffer));
    return rt::Status::success();
  }

private:
  std::vector<cuda::DeviceBuffer> Buffers;
};

/// The reflection types of generated CUDA (docs/abi.md, "CUDA": device
/// graphs and pointers, and a stream in each call), its generic call
/// (gnnc/runtime/cuda/Invoke.h) and device memory.
struct CudaAbi {
  using Graph = cuda::DeviceGraph;
  using ModuleInfo = cuda::ModuleInfo;
  using GraphArgs = cuda::GraphArgs;
  using Invocation = cuda::Invocation;
  using Memory = DeviceMemory;
};
#endif

template <typename Memory>
rt::Status allocateFloats(Memory &memory, int64_t count, float *&out) {
  void *data = nullptr;
  GNNC_TRY(
      memory.allocate(static_cast<std::size_t>(count) * sizeof(float), data));
  out = static_cast<float *>(data);
  return rt::Status::success();
}

/// The tensors of one training run, in one memory (the host's or the
/// device's).
struct RunTensors {
  std::vector<float *> params, grads; // per parameter, in kPaths order
  float *logits = nullptr;            // F.train's output, [N, classes]
  float *gradLogits = nullptr;        // the loss gradient: the cotangent
  float *evalLogits = nullptr;        // the inference forward's output
  float *gradX = nullptr;             // F.backward's gradient of x (or null)
};

/// Allocates `t` for `n` vertices in `memory`; the gradient of x only when
/// `withGradX`.
template <typename Memory>
rt::Status allocateRun(const Variant &v, int64_t n, bool withGradX,
                       Memory &memory, RunTensors &t) {
  t.params.assign(v.numParams, nullptr);
  t.grads.assign(v.numParams, nullptr);
  for (int i = 0; i < v.numParams; ++i) {
    GNNC_TRY(allocateFloats(memory, v.numElements[i], t.params[i]));
    GNNC_TRY(allocateFloats(memory, v.numElements[i], t.grads[i]));
  }
  GNNC_TRY(allocateFloats(memory, n * v.classes, t.logits));
  GNNC_TRY(allocateFloats(memory, n * v.classes, t.gradLogits));
  GNNC_TRY(allocateFloats(memory, n * v.classes, t.evalLogits));
  if (withGradX)
    GNNC_TRY(allocateFloats(memory, n * v.inDim, t.gradX));
  return rt::Status::success();
}

/// Binds F.train and F.backward of `module` (through the runtime's generic
/// call, Abi::Invocation) to the graph `g`, the features `x` and the
/// tensors `t` (all in `memory`), allocates there the values F.train saves
/// for F.backward, and gives both calls a workspace of their own.
template <typename Abi>
rt::Status bindTrainingStep(const Variant &v,
                            const typename Abi::ModuleInfo &module,
                            const typename Abi::Graph &g, const float *x,
                            const RunTensors &t, typename Abi::Memory &memory,
                            typename Abi::Invocation &train,
                            typename Abi::Invocation &back) {
  const int64_t n = g.numDst(), c = v.classes;
  std::string entry = v.entry;
  const auto *trainInfo = rt::lookupEntry(module, entry + ".train");
  const auto *backInfo = rt::lookupEntry(module, entry + ".backward");
  if (!trainInfo || !backInfo)
    return rt::Status::error(fmt::format(
        "the module has no {0}.train or {0}.backward (compile it with "
        "TRAINING)",
        entry));
  typename Abi::GraphArgs graphs;
  graphs.graph = &g;
  GNNC_TRY(train.bind(*trainInfo, graphs));
  GNNC_TRY(back.bind(*backInfo, graphs));
  // One workspace, the larger of the two: the backward reads what the
  // forward saved, nothing of its workspace.
  bool trainLarger = train.workspaceBytes() >= back.workspaceBytes();
  auto &owner = trainLarger ? train : back;
  GNNC_TRY(owner.allocateWorkspace().withPrefix(fmt::format(
      "{}: workspace", (trainLarger ? trainInfo : backInfo)->name)));
  (trainLarger ? back : train).setWorkspace(owner.workspace());

  auto paramIndex = [&](const char *path) {
    for (int i = 0; i < v.numParams; ++i)
      if (std::strcmp(path, v.paths[i]) == 0)
        return i;
    return -1;
  };
  for (int i = 0; i < trainInfo->numArgs; ++i) {
    const rt::TensorInfo &a = trainInfo->args[i];
    if (std::strcmp(a.role, "param") == 0) {
      int k = paramIndex(a.name);
      if (k < 0 || train.argElements(i) != v.numElements[k])
        return rt::Status::error(
            fmt::format("{}: parameter {} does not match {}_Params",
                        trainInfo->name, a.name, v.entry));
      train.setInput(i, t.params[k]);
    } else if (std::strcmp(a.name, "x") == 0 &&
               train.argElements(i) == n * v.inDim) {
      train.setInput(i, x);
    }
  }
  for (int i = 0; i < trainInfo->numResults; ++i) {
    const rt::TensorInfo &r = trainInfo->results[i];
    float *out = nullptr;
    if (std::strcmp(r.role, "output") == 0 && train.resultElements(i) == n * c)
      out = t.logits;
    else if (std::strcmp(r.role, "saved") == 0)
      GNNC_TRY(allocateFloats(memory, train.resultElements(i), out));
    train.setOutput(i, out);
  }
  for (int i = 0; i < backInfo->numArgs; ++i) {
    const rt::TensorInfo &a = backInfo->args[i];
    if (std::strcmp(a.role, "param") == 0) {
      int k = paramIndex(a.name);
      if (k < 0)
        return rt::Status::error(
            fmt::format("{}: unknown parameter {}", backInfo->name, a.name));
      back.setInput(i, t.params[k]);
    } else if (std::strcmp(a.role, "saved") == 0) {
      for (int j = 0; j < trainInfo->numResults; ++j)
        if (std::strcmp(trainInfo->results[j].role, "saved") == 0 &&
            std::strcmp(trainInfo->results[j].name, a.name) == 0 &&
            train.resultElements(j) == back.argElements(i))
          back.setInput(i, train.output(j));
    } else if (std::strcmp(a.name, "x") == 0) {
      back.setInput(i, x);
    } else if (std::strcmp(a.name, "cotangent") == 0 &&
               back.argElements(i) == n * c) {
      back.setInput(i, t.gradLogits);
    }
  }
  for (int i = 0; i < backInfo->numResults; ++i) {
    const rt::TensorInfo &r = backInfo->results[i];
    if (std::strcmp(r.role, "grad") != 0)
      continue;
    int k = paramIndex(r.name);
    if (k >= 0 && back.resultElements(i) == v.numElements[k])
      back.setOutput(i, t.grads[k]);
    else if (std::strcmp(r.name, "x") == 0 &&
             back.resultElements(i) == n * v.inDim)
      back.setOutput(i, t.gradX);
  }

  // Every result is bound, except the gradient of x when `t` has none (the
  // entry point then skips the work only it needs, docs/abi.md). Inputs are
  // checked by each call.
  auto unbound = [](const typename Abi::Invocation &call, int i) {
    return rt::Status::error(fmt::format("{}: result '{}' is not bound",
                                         call.entry().name,
                                         call.entry().results[i].name));
  };
  for (int i = 0; i < trainInfo->numResults; ++i)
    if (!train.output(i))
      return unbound(train, i);
  for (int i = 0; i < backInfo->numResults; ++i)
    if (!back.output(i) && !(t.gradX == nullptr &&
                             std::strcmp(backInfo->results[i].name, "x") == 0))
      return unbound(back, i);
  return rt::Status::success();
}

//===----------------------------------------------------------------------===//
// Devices
//===----------------------------------------------------------------------===//

struct Problem {
  rt::Dataset data;
  rt::Graph graph; // with self-loops when the variant wants them
};

/// Runs a model's entry points for the training loop (trainOnce), which
/// works on host tensors: it initialises the parameters, computes the loss
/// and its gradient, steps Adam and measures the accuracies.
class Backend {
public:
  virtual ~Backend() = default;
  /// For the header line: "cpu, 2 thread(s)".
  virtual std::string describe() const = 0;
  /// Allocates and binds one run's tensors and gives their host view
  /// (zeroed host memory, valid until the next startRun).
  virtual rt::Status startRun(RunTensors &host) = 0;
  /// The host parameters changed (initialised, or an Adam step).
  virtual rt::Status paramsChanged() = 0;
  /// F.train (training, dropout seed `seed`): the host logits.
  virtual rt::Status trainForward(uint64_t seed) = 0;
  /// F.backward with the host gradLogits as cotangent: the host grads.
  virtual rt::Status backward(uint64_t seed) = 0;
  /// The inference forward (dropout off): the host evalLogits.
  virtual rt::Status infer() = 0;
};

/// --device cpu: the C++ entry points, on the host tensors themselves.
class CpuBackend final : public Backend {
public:
  CpuBackend(const Variant &v, const Problem &p) : V(v), P(p) {}

  std::string describe() const override {
    int threads = 1;
#ifdef _OPENMP
    threads = omp_get_max_threads();
#endif
    return fmt::format("cpu, {} thread(s)", threads);
  }

  rt::Status startRun(RunTensors &host) override {
    Memory = HostMemory();
    // No gradient of x: the generated C++ backward takes a null pointer for
    // the gradient of an input and skips the work only it needs.
    GNNC_TRY(allocateRun(V, P.graph.numDst(), /*withGradX=*/false, Memory, T));
    GNNC_TRY(bindTrainingStep<CpuAbi>(V, *V.module, P.graph, P.data.X.data(), T,
                                      Memory, Train, Back));
    GNNC_TRY(Memory.allocate(V.forwardWorkspace(P.graph), InferWorkspace)
                 .withPrefix("the inference workspace"));
    host = T;
    return rt::Status::success();
  }

  rt::Status paramsChanged() override { return rt::Status::success(); }

  rt::Status trainForward(uint64_t seed) override {
    return Train.call(/*training=*/true, seed);
  }

  rt::Status backward(uint64_t seed) override {
    return Back.call(/*training=*/true, seed);
  }

  rt::Status infer() override {
    return V
        .forward(P.graph, P.data.X.data(), T.params.data(), T.evalLogits,
                 InferWorkspace)
        .withPrefix(V.entry);
  }

private:
  const Variant &V;
  const Problem &P;
  HostMemory Memory;
  RunTensors T;
  rt::Invocation Train, Back;
  void *InferWorkspace = nullptr;
};

#ifdef GNNC_TRAIN_HAVE_CUDA
/// --device cuda: the CUDA entry points on device copies of the graph, the
/// features and the run's tensors, queued on one stream. The host view is
/// copied in (parameters, loss gradient) and out (logits, gradients) around
/// the calls, and each step waits for the stream, where the errors of the
/// kernels show.
class CudaBackend final : public Backend {
public:
  explicit CudaBackend(const Variant &v) : V(v) {}
  ~CudaBackend() override {
    if (Stream)
      (void)cudaStreamDestroy(Stream);
  }

  /// Creates the stream and uploads the graph and the features.
  rt::Status init(const Problem &p) {
    int device = 0;
    GNNC_CUDA_CHECK(cudaGetDevice(&device));
    cudaDeviceProp prop;
    GNNC_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    std::string cc = fmt::format("{}.{}", prop.major, prop.minor);
    if (prop.major < 7)
      return rt::Status::error(
          fmt::format("{} has compute capability {}; generated CUDA needs "
                      "7.0 or more",
                      prop.name, cc));
    Name = fmt::format("cuda:{} ({}, compute capability {})", device, prop.name,
                       cc);
    GNNC_CUDA_CHECK(cudaStreamCreate(&Stream));
    GNNC_TRY(cuda::DeviceGraph::upload(p.graph, Stream, Graph)
                 .withPrefix("uploading the graph"));
    return cuda::DeviceTensor::upload(p.data.X.data(),
                                      {p.data.NumNodes, p.data.NumFeatures},
                                      Stream, X)
        .withPrefix("uploading the features");
  }

  std::string describe() const override { return Name; }

  rt::Status startRun(RunTensors &host) override {
    Device = DeviceMemory();
    Host = HostMemory();
    // No gradient of x: the CUDA backward, too, takes null for it.
    GNNC_TRY(allocateRun(V, Graph.numDst(), /*withGradX=*/false, Device, D));
    GNNC_TRY(allocateRun(V, Graph.numDst(), /*withGradX=*/false, Host, H));
    GNNC_TRY(bindTrainingStep<CudaAbi>(V, *V.cuda.module, Graph, X.data(), D,
                                       Device, Train, Back));
    GNNC_TRY(Device.allocate(V.cuda.forwardWorkspace(Graph), InferWorkspace)
                 .withPrefix("the inference workspace"));
    host = H;
    return rt::Status::success();
  }

  rt::Status paramsChanged() override {
    for (int i = 0; i < V.numParams; ++i)
      GNNC_TRY(toDevice(D.params[i], H.params[i], V.numElements[i]));
    return sync();
  }

  rt::Status trainForward(uint64_t seed) override {
    GNNC_TRY(Train.call(/*training=*/true, seed, Stream));
    GNNC_TRY(toHost(H.logits, D.logits, numLogits()));
    return sync();
  }

  rt::Status backward(uint64_t seed) override {
    GNNC_TRY(toDevice(D.gradLogits, H.gradLogits, numLogits()));
    GNNC_TRY(Back.call(/*training=*/true, seed, Stream));
    for (int i = 0; i < V.numParams; ++i)
      GNNC_TRY(toHost(H.grads[i], D.grads[i], V.numElements[i]));
    return sync();
  }

  rt::Status infer() override {
    GNNC_TRY(V.cuda
                 .forward(Graph, X.data(), D.params.data(), D.evalLogits,
                          InferWorkspace, Stream)
                 .withPrefix(V.entry));
    GNNC_TRY(toHost(H.evalLogits, D.evalLogits, numLogits()));
    return sync();
  }

private:
  int64_t numLogits() const { return Graph.numDst() * V.classes; }

  rt::Status copy(float *to, const float *from, int64_t count,
                  cudaMemcpyKind kind) {
    GNNC_CUDA_CHECK(cudaMemcpyAsync(
        to, from, static_cast<std::size_t>(count) * sizeof(float), kind,
        Stream));
    return rt::Status::success();
  }
  rt::Status toDevice(float *to, const float *from, int64_t count) {
    return copy(to, from, count, cudaMemcpyHostToDevice);
  }
  rt::Status toHost(float *to, const float *from, int64_t count) {
    return copy(to, from, count, cudaMemcpyDeviceToHost);
  }
  rt::Status sync() {
    GNNC_CUDA_CHECK(cudaStreamSynchronize(Stream));
    return rt::Status::success();
  }

  const Variant &V;
  std::string Name;
  cudaStream_t Stream = nullptr;
  cuda::DeviceGraph Graph;
  cuda::DeviceTensor X;
  DeviceMemory Device; // D, the saved values and the workspaces
  HostMemory Host;     // H
  RunTensors D, H;
  cuda::Invocation Train, Back;
  void *InferWorkspace = nullptr;
};
#endif

/// Fails unless `device` can run here: --device cuda needs a build with
/// CUDA and a CUDA device.
rt::Status checkDevice(const std::string &device) {
  if (device != "cuda")
    return rt::Status::success();
#ifndef GNNC_TRAIN_HAVE_CUDA
  return rt::Status::error(
      "built without CUDA (the gnnc package has no gnnc::cuda, no CUDA "
      "compiler was found, or GNNC_TRAIN_CUDA is OFF): --device cuda is not "
      "available");
#else
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    return rt::Status::error(
        fmt::format("--device cuda: no CUDA device (cudaGetDeviceCount: {}: "
                    "{})",
                    cudaGetErrorName(err), cudaGetErrorString(err)));
  }
  if (count == 0)
    return rt::Status::error("--device cuda: no CUDA device "
                             "(cudaGetDeviceCount found none)");
  return rt::Status::success();
#endif
}

/// The backend of `device` (checked by checkDevice) for `v` on `p`.
rt::Status makeBackend(const std::string &device, const Variant &v,
                       const Problem &p, std::unique_ptr<Backend> &out) {
#ifdef GNNC_TRAIN_HAVE_CUDA
  if (device == "cuda") {
    if (!v.hasCuda)
      return rt::Status::error(fmt::format(
          "--device cuda: {} is built for the CPU only", v.entry));
    auto backend = std::make_unique<CudaBackend>(v);
    GNNC_TRY(backend->init(p).withPrefix("--device cuda"));
    out = std::move(backend);
    return rt::Status::success();
  }
#endif
  (void)device;
  out = std::make_unique<CpuBackend>(v, p);
  return rt::Status::success();
}

//===----------------------------------------------------------------------===//
// Training
//===----------------------------------------------------------------------===//

struct Options {
  std::string model = "gcn", dataset = "cora", dataPath, device = "cpu";
  int epochs = 200, seeds = 1, logEvery = 1;
  uint64_t firstSeed = 0;
  bool quiet = false;
  bool normalize = true;
  bool allowNonFinite = false;
  double checkMinTestAcc = -1.0;
  double learningRate = -1.0, weightDecay = -1.0; // < 0: the paper's
  std::string decayScope;                         // "": the paper's
  bool minibatch = false;
  bool modelGiven = false;
  gnnc::train::MiniBatchArgs mb; // --minibatch's own settings
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
                     uint64_t seed, Backend &backend, RunResult &result) {
  const rt::Dataset &ds = p.data;
  const int64_t n = ds.NumNodes, c = ds.NumClasses;

  // The run's tensors, and the parameters initialised as the .gnn declares
  // them.
  RunTensors h;
  GNNC_TRY(backend.startRun(h));
  for (int i = 0; i < v.numParams; ++i) {
    std::string init;
    double arg;
    gnnc::train::splitInit(v.inits[i], init, arg);
    rt::Status st =
        rt::initParam(init, arg, v.shapes[i], static_cast<size_t>(v.ranks[i]),
                      h.params[i], rt::paramSeed(seed, v.paths[i]));
    if (!st.ok())
      return st.withPrefix(std::string("initialising ") + v.paths[i]);
  }
  GNNC_TRY(backend.paramsChanged());

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
    GNNC_TRY(adam.addParam(h.params[i], v.numElements[i]));
    (decay ? gradsDecayed : gradsPlain).push_back(h.grads[i]);
  }

  double stepTotal = 0.0, evalTotal = 0.0;
  std::clock_t cpu0 = std::clock();
  std::vector<double> losses;
  rt::SplitMix64 epochSeeds(seed ^ 0x5EEDF00DCAFEull);
  for (int epoch = 1; epoch <= opt.epochs; ++epoch) {
    uint64_t stepSeed = epochSeeds.next();
    if (stepSeed == 0) // 0 would reproduce the interpreter's fixed masks
      stepSeed = 1;

    auto t0 = std::chrono::steady_clock::now();
    GNNC_TRY(backend.trainForward(stepSeed));
    double loss = 0.0;
    GNNC_TRY(rt::softmaxCrossEntropy(h.logits, n, c, ds.Y.data(),
                                     ds.TrainMask.data(), loss, h.gradLogits)
                 .withPrefix("loss"));
    GNNC_TRY(backend.backward(stepSeed));
    rt::Status st = adamDecayed.step(gradsDecayed);
    if (st.ok() && adamPlain.numParams() > 0)
      st = adamPlain.step(gradsPlain);
    GNNC_TRY(st.withPrefix("adam"));
    GNNC_TRY(backend.paramsChanged());
    double stepMs = msSince(t0);

    auto t1 = std::chrono::steady_clock::now();
    GNNC_TRY(backend.infer());
    double accTrain, accVal, accTest;
    st = rt::maskedAccuracy(h.evalLogits, n, c, ds.Y.data(),
                            ds.TrainMask.data(), accTrain);
    if (st.ok())
      st = rt::maskedAccuracy(h.evalLogits, n, c, ds.Y.data(),
                              ds.ValMask.data(), accVal);
    if (st.ok())
      st = rt::maskedAccuracy(h.evalLogits, n, c, ds.Y.data(),
                              ds.TestMask.data(), accTest);
    GNNC_TRY(st.withPrefix("accuracy"));
    double evalMs = msSince(t1);

    if (!std::isfinite(loss))
      return rt::Status::error(
          fmt::format("epoch {}: the loss is not finite", epoch));
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
      fmt::print("  epoch {:3}  loss {:.4f}  train {:.4f}  val {:.4f}  test "
                 "{:.4f}  {:6.2f} ms (+ {:5.2f} ms eval)\n",
                 epoch, loss, accTrain, accVal, accTest, stepMs, evalMs);
    if (!opt.quiet)
      std::fflush(stdout);
  }
  result.firstLoss = losses.front();
  result.lastLoss = gnnc::train::recentLoss(losses);
  result.stepMs = stepTotal / opt.epochs;
  result.evalMs = evalTotal / opt.epochs;
  result.cpuMs = 1000.0 * static_cast<double>(std::clock() - cpu0) /
                 CLOCKS_PER_SEC / opt.epochs;
  return rt::Status::success();
}

rt::Status loadProblem(const Variant &v, const Options &opt, Problem &p,
                       std::string &source) {
  rt::Status st;
  rt::DatasetOptions loadOptions;
  loadOptions.AllowNonFinite = opt.allowNonFinite;
  if (!opt.dataPath.empty()) {
    source = opt.dataPath;
    st = rt::loadDataset(opt.dataPath, p.data, loadOptions);
  } else {
    // What findDataset reads: <dir>/<name>.gnnd, else the folder <dir>/<name>.
    source = rt::dataDir() + "/" + opt.dataset;
    if (std::FILE *f = std::fopen((source + ".gnnd").c_str(), "rb")) {
      std::fclose(f);
      source += ".gnnd";
    }
    st = rt::findDataset(opt.dataset, p.data, loadOptions);
#ifdef GNNC_TRAIN_DATA_DIR
    // The installed package's copy, when the library's default folder (the
    // source tree gnnc was built from) is gone and GNNC_DATA_DIR is unset.
    const char *env = std::getenv("GNNC_DATA_DIR");
    if (!st.ok() && (!env || !*env)) {
      std::string installed =
          std::string(GNNC_TRAIN_DATA_DIR) + "/" + opt.dataset + ".gnnd";
      if (rt::loadDataset(installed, p.data, loadOptions).ok()) {
        source = installed;
        st = rt::Status::success();
      }
    }
#endif
  }
  if (!st.ok()) {
    if (!opt.allowNonFinite &&
        st.message().find("(non-finite values are rejected)") !=
            std::string::npos)
      return rt::Status::error(st.message() +
                               "; --allow-nonfinite accepts them");
    return st;
  }
  const rt::Dataset &ds = p.data;
  if (ds.NumFeatures != v.inDim || ds.NumClasses != v.classes)
    return rt::Status::error(fmt::format(
        "{}: {} features and {} classes, but the {} model for {} was "
        "compiled for {} and {}",
        source, ds.NumFeatures, ds.NumClasses, v.model, v.dataset, v.inDim,
        v.classes));
  rt::Graph g;
  st = rt::Graph::fromEdgeIndex(ds.EdgeSrc.data(), ds.EdgeDst.data(),
                                ds.numEdges(), ds.NumNodes, ds.NumNodes, g);
  if (!st.ok())
    return st.withPrefix(source);
  if (v.selfLoops) {
    st = rt::addSelfLoops(g, p.graph);
    if (!st.ok())
      return st;
  } else {
    p.graph = std::move(g);
  }
  if (opt.normalize) {
    st = rt::normalizeRows(p.data.X.data(), ds.NumNodes, ds.NumFeatures);
    if (!st.ok())
      return st;
  }
  return rt::Status::success();
}


const char *kUsage =
    "usage: gnnc-train [--model gcn|gat|sage] [--dataset cora|citeseer]\n"
    "                  [--data PATH] [--epochs N] [--seeds K] [--seed S]\n"
    "                  [--log-every N] [--quiet] [--check-min-test-acc A]\n"
    "                  [--lr X] [--weight-decay X] [--decay first|all]\n"
    "                  [--no-normalize] [--allow-nonfinite]\n"
    "                  [--device cpu|cuda]\n"
    "       gnnc-train --minibatch [--model sage|gat] [--fanouts A,B]\n"
    "                  [--batch-size N] [--workers W] [--prefetch P]\n"
    "                  [--sampler neighbor|labor] [--eval-fanouts A,B]\n"
    "                  [--eval-batch-size N] [--check-blocks\n"
    "                  [--check-tolerance T]]\n"
    "                  [--fixed-size bound|fit | --capacities V0,V1,V2:E0,E1]\n"
    "                  [--oversize error|skip|trim] [the options above]\n"
    "\n"
    "Trains the GCN or GAT example (compiled by gnnc) on Cora or Citeseer and\n"
    "reports the test accuracy at the epoch of best validation accuracy.\n"
    "\n"
    "  --model         gcn (default), gat or sage (GraphSAGE-mean, CPU: Cora,\n"
    "                  or --dataset sbm --data DIR, a gnnc-gen-sbm graph)\n"
    "  --dataset       cora (default) or citeseer\n"
    "  --data PATH     a .gnnd bundle or a folder of .npy files instead of "
    "the\n"
    "                  bundled dataset\n"
    "  --epochs N      epochs per run, 1 to 1000000 (default 200)\n"
    "  --seeds K       runs with seeds S, S+1, ..., S+K-1, K from 1 to 10000;\n"
    "                  prints mean and standard deviation of the test\n"
    "                  accuracy (default 1)\n"
    "  --seed S        the first seed, 0 to 2^64 - K (default 0)\n"
    "  --log-every N   print every N-th epoch's line (and the first), 1 to\n"
    "                  1000000 (default 1)\n"
    "  --quiet         no per-epoch lines\n"
    "  --check-min-test-acc A\n"
    "                  exit 1 unless the mean test accuracy is at least A (a\n"
    "                  fraction, 0 to 1) and every run's loss fell\n"
    "  --lr, --weight-decay, --decay\n"
    "                  override the paper's optimiser settings (finite, >= 0;\n"
    "                  weight decay on the first layer's parameters or on all\n"
    "                  of them)\n"
    "  --no-normalize  keep the raw 0/1 features\n"
    "  --allow-nonfinite\n"
    "                  accept NaN and infinite features in a --data folder\n"
    "                  (by default they are an error)\n"
    "  --device D      cpu (default): the models compiled to C++; cuda: the\n"
    "                  models compiled to CUDA, on the current CUDA device\n"
    "                  (when gnnc-train was built with CUDA)\n"
    "\n"
    "Mini-batch training (dsl-examples/sage2_block.gnn, gat2_block.gnn on Cora,\n"
    "CPU) through gnnc_sample's pipeline (docs/sampling.md):\n"
    "  --minibatch     train on sampled two-hop blocks of the training vertices\n"
    "  --fanouts A,B   neighbours per layer, outermost first, -1 for all\n"
    "                  (default 25,10)\n"
    "  --batch-size N  seeds per batch (default 256)\n"
    "  --workers W     sampling threads, 0 for none (default 1)\n"
    "  --prefetch P    prepared batches that may wait (default 4)\n"
    "  --sampler S     neighbor (default) or labor\n"
    "  --eval-fanouts A,B\n"
    "                  evaluation blocks (default -1,-1: every neighbour)\n"
    "  --eval-batch-size N  seeds per evaluation batch (default 1024)\n"
    "  --check-blocks  no training: the block model on full-neighbourhood\n"
    "                  blocks must match the full-graph model on every vertex\n"
    "                  (same parameters), within --check-tolerance (relative,\n"
    "                  default 1e-4)\n"
    "  --fixed-size C  pad every training batch to fixed capacities: bound\n"
    "                  (the worst case of the batch size and fanouts) or fit\n"
    "                  (measured on 100 training batches: the 99th\n"
    "                  percentile + 10%); the loss covers the real seeds only\n"
    "  --capacities V0,V1,V2:E0,E1\n"
    "                  explicit capacities instead: vertices of the input,\n"
    "                  middle and seed levels, edges of the outer and inner\n"
    "                  block\n"
    "  --oversize P    a batch that does not fit: error (default for bound\n"
    "                  and explicit capacities), skip or trim (default for\n"
    "                  fit)\n"
    "\n"
    "Data-parallel training over ranks (docs/training.md), e.g.\n"
    "  mpirun -np 2 gnnc-train --comm mpi --data DIR --model sage:\n"
    "  --comm C        threads (N ranks in this process: --ranks N, default\n"
    "                  2), mpi (the ranks of mpirun) or nccl (MPI ranks,\n"
    "                  gradients over NCCL, one GPU per rank); implies\n"
    "                  --minibatch; the model defaults to sage\n"
    "  --batch-size N  seeds per rank and step (the global batch is N x ranks)\n"
    "  --memory T      memory type of the features, labels and embeddings:\n"
    "                  distributed (default), chunked or continuous\n"
    "  --feature-cache R  rows of other ranks' features cached per rank\n"
    "  --embeddings D  learn D-wide node embeddings instead of the features\n"
    "                  (a model compiled for D columns; D = 32 for 7 classes)\n"
    "  --emb-optimizer O  sgd, adam (default), adagrad or rmsprop, sparse\n"
    "  --emb-lr X      its learning rate (default 0.01)\n"
    "  --normalize, --no-normalize\n"
    "                  row-normalise the features (default: only the bundled\n"
    "                  cora and citeseer)\n"
    "  --data PATH     also an OGB node-property dataset folder (raw/,\n"
    "                  split/; docs/runtime.md), with --ogb-inverse-edges\n"
    "                  for datasets whose edges the ogb package mirrors\n"
    "  --eval-every N  evaluate every N epochs, 0: after the last (default 1)\n"
    "  --no-eval       no evaluation at all\n"
    "  --checkpoint DIR  save the parameters, Adam's state and the embeddings\n"
    "                  after every epoch; --resume continues from DIR\n"
    "  --max-steps N   stop after N global steps\n"
    "  --no-dropout    train without dropout (its masks depend on a row's\n"
    "                  position in the batch, so they differ between ranks)\n"
    "  --trace FILE    rank 0 writes epoch, step, global step and loss per step\n"
    "  --save-params DIR  the final parameters (.npy)\n"
    "  --kill-at R:E:S    fault injection: rank R kills itself before step S\n"
    "                  of epoch E (mpi)\n";

bool parseArgs(int argc, char **argv, Options &opt, std::string &error) {
  bool fixedSizeFlag = false, capacitiesFlag = false, ranksFlag = false;
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
    // The whole of `s` as a decimal number in [lo, hi] (`range` says which
    // in the error), or integer (gnnc/runtime/Flags.h).
    auto number = [&](const std::string &s, double lo, double hi,
                      const char *range, double &out) {
      return gnnc::rt::parseFlagNumber(a, s, lo, hi, range, out, error);
    };
    auto integer = [&](const std::string &s, uint64_t lo, uint64_t hi,
                       uint64_t &out) {
      return gnnc::rt::parseFlagInteger(a, s, lo, hi, out, error);
    };
    constexpr double kMaxDouble = std::numeric_limits<double>::max();
    std::string key = a.substr(0, a.find('='));
    std::string s;
    uint64_t k;
    double d;
    if (a == "-h" || a == "--help") {
      fmt::print("{}", kUsage);
      std::exit(0);
    } else if (a == "--quiet" || a == "-q") {
      opt.quiet = true;
    } else if (a == "--no-normalize" || a == "--normalize") {
      opt.normalize = a == "--normalize";
      opt.mb.NormalizeGiven = true;
    } else if (a == "--allow-nonfinite") {
      opt.allowNonFinite = true;
    } else if (key == "--model") {
      if (!value(opt.model))
        return false;
      opt.modelGiven = true;
    } else if (key == "--dataset") {
      if (!value(opt.dataset))
        return false;
    } else if (key == "--data") {
      if (!value(opt.dataPath))
        return false;
    } else if (key == "--epochs") {
      if (!value(s) || !integer(s, 1, 1000000, k))
        return false;
      opt.epochs = static_cast<int>(k);
    } else if (key == "--seeds") {
      if (!value(s) || !integer(s, 1, 10000, k))
        return false;
      opt.seeds = static_cast<int>(k);
    } else if (key == "--log-every") {
      if (!value(s) || !integer(s, 1, 1000000, k))
        return false;
      opt.logEvery = static_cast<int>(k);
    } else if (key == "--seed") {
      if (!value(s) || !integer(s, 0, std::numeric_limits<uint64_t>::max(), k))
        return false;
      opt.firstSeed = k;
    } else if (key == "--check-min-test-acc") {
      if (!value(s) || !number(s, 0.0, 1.0, "a number in [0, 1]", d))
        return false;
      opt.checkMinTestAcc = d;
    } else if (key == "--lr") {
      if (!value(s) || !number(s, 0.0, kMaxDouble, "a finite number >= 0", d))
        return false;
      opt.learningRate = d;
    } else if (key == "--weight-decay") {
      if (!value(s) || !number(s, 0.0, kMaxDouble, "a finite number >= 0", d))
        return false;
      opt.weightDecay = d;
    } else if (key == "--device") {
      if (!value(opt.device))
        return false;
      if (opt.device != "cpu" && opt.device != "cuda") {
        error =
            fmt::format("--device: expected cpu or cuda, got '{}'", opt.device);
        return false;
      }
    } else if (a == "--minibatch") {
      opt.minibatch = true;
    } else if (a == "--check-blocks") {
      opt.mb.CheckBlocks = true;
    } else if (key == "--fanouts" || key == "--eval-fanouts") {
      std::vector<int64_t> &f =
          key == "--fanouts" ? opt.mb.Fanouts : opt.mb.EvalFanouts;
      if (!value(s))
        return false;
      f.clear();
      size_t start = 0;
      while (true) {
        size_t comma = s.find(',', start);
        std::string item = s.substr(start, comma - start);
        int64_t x = 0;
        auto [ptr, ec] =
            std::from_chars(item.data(), item.data() + item.size(), x);
        if (item.empty() || ptr != item.data() + item.size() ||
            ec != std::errc() || (x != -1 && (x < 1 || x > 1000000))) {
          error = fmt::format("{}: '{}' is not a fanout (an integer in [1, "
                              "1000000], or -1 for every neighbour)",
                              key, item);
          return false;
        }
        f.push_back(x);
        if (comma == std::string::npos)
          break;
        start = comma + 1;
      }
    } else if (key == "--batch-size" || key == "--eval-batch-size") {
      if (!value(s) || !integer(s, 1, 1u << 30, k))
        return false;
      (key == "--batch-size" ? opt.mb.BatchSize : opt.mb.EvalBatchSize) =
          static_cast<int64_t>(k);
    } else if (key == "--workers") {
      if (!value(s) || !integer(s, 0, 256, k))
        return false;
      opt.mb.Workers = static_cast<int>(k);
    } else if (key == "--prefetch") {
      if (!value(s) || !integer(s, 1, 1024, k))
        return false;
      opt.mb.Prefetch = static_cast<int>(k);
    } else if (key == "--sampler") {
      if (!value(opt.mb.Sampler))
        return false;
      if (opt.mb.Sampler != "neighbor" && opt.mb.Sampler != "labor") {
        error = fmt::format("--sampler: expected neighbor or labor, got '{}'",
                            opt.mb.Sampler);
        return false;
      }
    } else if (key == "--fixed-size") {
      if (!value(opt.mb.FixedSize))
        return false;
      if (opt.mb.FixedSize != "bound" && opt.mb.FixedSize != "fit") {
        error = fmt::format("--fixed-size: expected bound or fit, got '{}'",
                            opt.mb.FixedSize);
        return false;
      }
      fixedSizeFlag = true;
    } else if (key == "--capacities") {
      if (!value(s))
        return false;
      // V0,V1,...:E0,E1,...: positive integers.
      size_t colon = s.find(':');
      auto list = [&](const std::string &text, std::vector<int64_t> &out) {
        out.clear();
        size_t start = 0;
        while (true) {
          size_t comma = text.find(',', start);
          std::string item = text.substr(start, comma - start);
          int64_t x = 0;
          auto [ptr, ec] =
              std::from_chars(item.data(), item.data() + item.size(), x);
          if (item.empty() || ptr != item.data() + item.size() ||
              ec != std::errc() || x < 1 || x > (int64_t(1) << 40))
            return false;
          out.push_back(x);
          if (comma == std::string::npos)
            return true;
          start = comma + 1;
        }
      };
      if (colon == std::string::npos ||
          !list(s.substr(0, colon), opt.mb.CapVertices) ||
          !list(s.substr(colon + 1), opt.mb.CapEdges)) {
        error = fmt::format("--capacities: expected V0,V1,V2:E0,E1 (vertex "
                            "capacities, then edge capacities, integers in "
                            "[1, 2^40]), got '{}'",
                            s);
        return false;
      }
      capacitiesFlag = true;
    } else if (key == "--oversize") {
      if (!value(opt.mb.Oversize))
        return false;
      if (opt.mb.Oversize != "error" && opt.mb.Oversize != "skip" &&
          opt.mb.Oversize != "trim") {
        error =
            fmt::format("--oversize: expected error, skip or trim, got '{}'",
                        opt.mb.Oversize);
        return false;
      }
    } else if (key == "--check-tolerance") {
      if (!value(s) || !number(s, 0.0, 1.0, "a number in [0, 1]", d))
        return false;
      opt.mb.CheckTolerance = d;
    } else if (key == "--comm") {
      if (!value(opt.mb.Dist.Comm))
        return false;
      const std::string &c = opt.mb.Dist.Comm;
      if (c != "threads" && c != "mpi" && c != "nccl") {
        error = fmt::format("--comm: expected threads, mpi or nccl, got '{}'",
                            c);
        return false;
      }
    } else if (key == "--ranks") {
      if (!value(s) || !integer(s, 1, 256, k))
        return false;
      opt.mb.Dist.Ranks = static_cast<int>(k);
      ranksFlag = true;
    } else if (key == "--memory") {
      if (!value(opt.mb.Dist.Memory))
        return false;
      const std::string &m = opt.mb.Dist.Memory;
      if (m != "continuous" && m != "chunked" && m != "distributed") {
        error = fmt::format(
            "--memory: expected continuous, chunked or distributed, got '{}'",
            m);
        return false;
      }
    } else if (key == "--feature-cache") {
      if (!value(s) || !integer(s, 0, 1ull << 40, k))
        return false;
      opt.mb.Dist.FeatureCache = static_cast<int64_t>(k);
    } else if (key == "--embeddings") {
      if (!value(s) || !integer(s, 1, 1u << 16, k))
        return false;
      opt.mb.Dist.Embeddings = static_cast<int64_t>(k);
    } else if (key == "--emb-optimizer") {
      if (!value(opt.mb.Dist.EmbOptimizer))
        return false;
      const std::string &o = opt.mb.Dist.EmbOptimizer;
      if (o != "sgd" && o != "adam" && o != "adagrad" && o != "rmsprop") {
        error = fmt::format(
            "--emb-optimizer: expected sgd, adam, adagrad or rmsprop, got '{}'",
            o);
        return false;
      }
    } else if (key == "--emb-lr") {
      if (!value(s) || !number(s, 0, kMaxDouble, "a finite number >= 0", d))
        return false;
      opt.mb.Dist.EmbLearningRate = d;
    } else if (key == "--max-steps") {
      if (!value(s) || !integer(s, 1, 1ull << 40, k))
        return false;
      opt.mb.Dist.MaxSteps = static_cast<int64_t>(k);
    } else if (a == "--ogb-inverse-edges") {
      opt.mb.Dist.OgbInverseEdges = true;
    } else if (a == "--no-dropout") {
      opt.mb.Dist.NoDropout = true;
    } else if (key == "--eval-every") {
      if (!value(s) || !integer(s, 0, 1000000, k))
        return false;
      opt.mb.Dist.EvalEvery = static_cast<int>(k);
    } else if (a == "--no-eval") {
      opt.mb.Dist.NoEval = true;
    } else if (key == "--trace") {
      if (!value(opt.mb.Dist.Trace))
        return false;
    } else if (key == "--save-params") {
      if (!value(opt.mb.Dist.SaveParams))
        return false;
    } else if (key == "--checkpoint") {
      if (!value(opt.mb.Dist.Checkpoint))
        return false;
    } else if (a == "--resume") {
      opt.mb.Dist.Resume = true;
    } else if (key == "--kill-at") {
      if (!value(opt.mb.Dist.KillAt))
        return false;
      // RANK:EPOCH:STEP, three decimal numbers.
      const std::string &v = opt.mb.Dist.KillAt;
      size_t c1 = v.find(':'), c2 = v.find(':', c1 + 1);
      auto digits = [&](size_t b, size_t e) {
        return e > b && v.find_first_not_of("0123456789", b) >= e;
      };
      if (c1 == std::string::npos || c2 == std::string::npos ||
          !digits(0, c1) || !digits(c1 + 1, c2) || !digits(c2 + 1, v.size()) ||
          v.size() - c2 > 10 || c2 - c1 > 10 || c1 > 9) {
        error = fmt::format("--kill-at: expected RANK:EPOCH:STEP, got '{}'", v);
        return false;
      }
    } else if (key == "--decay") {
      if (!value(opt.decayScope))
        return false;
      if (opt.decayScope != "first" && opt.decayScope != "all") {
        error = fmt::format("--decay: expected first or all, got '{}'",
                            opt.decayScope);
        return false;
      }
    } else {
      error = fmt::format("unknown argument '{}' (see --help)", a);
      return false;
    }
  }
  if (fixedSizeFlag && capacitiesFlag) {
    error = "--fixed-size and --capacities exclude each other (--capacities "
            "gives the capacities explicitly)";
    return false;
  }
  if (capacitiesFlag)
    opt.mb.FixedSize = "explicit";
  if (!opt.mb.Oversize.empty() && opt.mb.FixedSize.empty()) {
    error = "--oversize needs --fixed-size or --capacities";
    return false;
  }
  // Data-parallel training is mini-batch training.
  const gnnc::train::DataParallelArgs &dp = opt.mb.Dist;
  if (!dp.Comm.empty())
    opt.minibatch = true;
  if (dp.Comm.empty() &&
      (ranksFlag || dp.Embeddings || dp.MaxSteps || dp.NoDropout ||
       !dp.Trace.empty() || !dp.SaveParams.empty() || !dp.Checkpoint.empty() ||
       dp.Resume || !dp.KillAt.empty() || dp.FeatureCache ||
       dp.OgbInverseEdges ||
       dp.Memory != "distributed" || dp.EvalEvery != 1 || dp.NoEval ||
       dp.EmbOptimizer != "adam" || dp.EmbLearningRate != 0.01)) {
    error = "--ranks, --memory, --feature-cache, --embeddings, "
            "--emb-optimizer, --emb-lr, --max-steps, --no-dropout, "
            "--eval-every, --no-eval, --trace, --save-params, --checkpoint, --resume, "
            "--kill-at and --ogb-inverse-edges are options of data-parallel "
            "training: they need --comm";
    return false;
  }
  if (ranksFlag && dp.Comm != "threads") {
    error = "--ranks is the rank count of --comm threads (with mpi and nccl, "
            "mpirun -np sets it)";
    return false;
  }
  if (!dp.Comm.empty() && opt.mb.CheckBlocks) {
    error = "--check-blocks runs in one process: drop --comm";
    return false;
  }
  if (!opt.mb.FixedSize.empty() && !opt.minibatch) {
    error = fmt::format("--{} needs --minibatch",
                        capacitiesFlag ? "capacities" : "fixed-size");
    return false;
  }
  // Seeds S .. S+K-1 must not wrap around.
  if (opt.firstSeed > std::numeric_limits<uint64_t>::max() -
                          static_cast<uint64_t>(opt.seeds - 1)) {
    error =
        fmt::format("--seed {} with --seeds {}: the last seed is past 2^64 - 1",
                    opt.firstSeed, opt.seeds);
    return false;
  }
  return true;
}

} // namespace

int main(int argc, char **argv) {
  Options opt;
  std::string error;
  if (!parseArgs(argc, argv, opt, error)) {
    fmt::print(stderr, "gnnc-train: error: {}\n", error);
    return 1;
  }
  std::vector<Variant> all = variants();
  const Variant *v = nullptr;
  for (const Variant &c : all)
    if (opt.model == c.model && opt.dataset == c.dataset)
      v = &c;
  if (opt.minibatch || opt.mb.CheckBlocks) {
    if (opt.device != "cpu") {
      fmt::print(stderr, "gnnc-train: error: --minibatch runs on the CPU "
                         "only (--device cpu)\n");
      return 1;
    }
    gnnc::train::MiniBatchArgs &mb = opt.mb;
    mb.Model = opt.model;
    mb.Dataset = opt.dataset;
    mb.DataPath = opt.dataPath;
    mb.Epochs = opt.epochs;
    mb.Seeds = opt.seeds;
    mb.LogEvery = opt.logEvery;
    mb.FirstSeed = opt.firstSeed;
    mb.Quiet = opt.quiet;
    mb.Normalize = opt.normalize;
    mb.AllowNonFinite = opt.allowNonFinite;
    mb.LearningRate = opt.learningRate;
    mb.WeightDecay = opt.weightDecay;
    mb.CheckMinTestAcc = opt.checkMinTestAcc;
    if (!mb.Dist.Comm.empty()) {
      if (!opt.modelGiven)
        mb.Model = "sage";
      if (mb.Model != "sage" && mb.Model != "gat") {
        fmt::print(stderr, "gnnc-train: error: --comm trains the two-block "
                           "models: --model sage or gat\n");
        return 1;
      }
      return gnnc::train::runDataParallel(mb);
    }
    gnnc::train::FullModel full;
    if (v) {
      full.NumParams = v->numParams;
      full.Paths = v->paths;
      full.NumElements = v->numElements;
      full.Forward = v->forward;
      full.Workspace = v->forwardWorkspace;
    }
    return gnnc::train::runMiniBatch(mb, v ? &full : nullptr);
  }
  if (!v) {
    fmt::print(stderr,
               "gnnc-train: error: no compiled model for --model {} "
               "--dataset {} (models: gcn, gat on cora and citeseer; sage on "
               "cora and sbm, a gnnc-gen-sbm graph given by --data)\n",
               opt.model, opt.dataset);
    return 1;
  }

  auto fail = [](const rt::Status &st) {
    fmt::print(stderr, "gnnc-train: error: {}\n", st.message());
    return 1;
  };
  rt::Status st = checkDevice(opt.device);
  if (!st.ok())
    return fail(st);
  Problem problem;
  std::string source;
  st = loadProblem(*v, opt, problem, source);
  if (!st.ok())
    return fail(st);
  std::unique_ptr<Backend> backend;
  st = makeBackend(opt.device, *v, problem, backend);
  if (!st.ok())
    return fail(st);

  const rt::Dataset &ds = problem.data;
  auto count = [](const std::vector<uint8_t> &m) {
    return static_cast<long long>(
        std::count_if(m.begin(), m.end(), [](uint8_t b) { return b != 0; }));
  };
  fmt::print("== {} on {} ({}): {} nodes, {} edges + {} self-loops, {} "
             "features, {} classes, train/val/test {}/{}/{}\n",
             v->entry, opt.dataset, source, ds.NumNodes, ds.numEdges(),
             v->selfLoops ? ds.NumNodes : 0, ds.NumFeatures, ds.NumClasses,
             count(ds.TrainMask),
             count(ds.ValMask), count(ds.TestMask));
  fmt::print(
      "   {} epochs x {} seed(s) from {}; Adam lr {:g}, weight decay {:g} "
      "({}); {} features; {}\n",
      opt.epochs, opt.seeds, opt.firstSeed,
      opt.learningRate >= 0 ? opt.learningRate : v->learningRate,
      opt.weightDecay >= 0 ? opt.weightDecay : v->weightDecay,
      (opt.decayScope.empty() ? v->decayScope == DecayScope::All
                              : opt.decayScope == "all")
          ? "all parameters"
          : "first layer only",
      opt.normalize ? "row-normalised" : "raw", backend->describe());
  std::fflush(stdout);

  std::vector<double> selected, finals, stepMs, evalMs, cpuMs;
  bool lossFell = true;
  for (int s = 0; s < opt.seeds; ++s) {
    uint64_t seed = opt.firstSeed + static_cast<uint64_t>(s);
    if (!opt.quiet)
      fmt::print("-- seed {}\n", seed);
    RunResult r;
    st = trainOnce(*v, problem, opt, seed, *backend, r);
    if (!st.ok())
      return fail(st);
    fmt::print("seed {}: test {:.4f} at best val {:.4f} (epoch {}); last "
               "epoch: test {:.4f}, val {:.4f}, train {:.4f}; loss {:.4f} -> "
               "{:.4f}; {:.2f} ms/epoch (+ {:.2f} ms eval; CPU {:.2f} ms)\n",
               seed, r.testAtBestVal, r.bestVal, r.bestEpoch, r.finalTest,
               r.finalVal, r.finalTrain, r.firstLoss, r.lastLoss, r.stepMs,
               r.evalMs, r.cpuMs);
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
  using gnnc::train::meanStd;
  meanStd(selected, mSel, sdSel);
  meanStd(finals, mFin, sdFin);
  meanStd(stepMs, mStep, sdStep);
  meanStd(evalMs, mEval, sdEval);
  meanStd(cpuMs, mCpu, sdCpu);
  fmt::print("== {} {}, {} seed(s), {} epochs: test accuracy {:.2f} +- {:.2f} "
             "% (at the best validation epoch; last epoch {:.2f} +- {:.2f} %); "
             "{}; {:.2f} ms/epoch training (fastest run {:.2f}; + "
             "{:.2f} ms inference; CPU time {:.2f} ms/epoch)\n",
             v->entry, opt.dataset, opt.seeds, opt.epochs, mSel, sdSel, mFin,
             sdFin,
             v->paperAccuracy > 0
                 ? fmt::format("paper {:.1f} %", v->paperAccuracy)
                 : std::string("no figure in the paper"),
             mStep,
             *std::min_element(stepMs.begin(), stepMs.end()), mEval, mCpu);

  if (opt.checkMinTestAcc >= 0) {
    bool ok = true;
    if (!lossFell) {
      fmt::print(stderr, "gnnc-train: check failed: the training loss did "
                         "not fall in every run\n");
      ok = false;
    }
    if (mSel / 100.0 < opt.checkMinTestAcc) {
      fmt::print(stderr,
                 "gnnc-train: check failed: mean test accuracy {:.4f} is "
                 "below {:.4f}\n",
                 mSel / 100.0, opt.checkMinTestAcc);
      ok = false;
    }
    if (!ok)
      return 1;
    fmt::print("check passed: loss fell, test accuracy {:.4f} >= {:.4f}\n",
               mSel / 100.0, opt.checkMinTestAcc);
  }
  return 0;
}
