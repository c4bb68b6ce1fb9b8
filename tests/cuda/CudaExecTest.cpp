//===- CudaExecTest.cpp - Generated CUDA against the interpreter --------===//
//
// Part of gnnc. The modules of CudaModules.h are the examples compiled to
// CUDA by `gnnc --emit=cuda` at build time (tests/cuda/CMakeLists.txt).
// This file is built twice:
//
//   - gnnc-cuda-tests (when CUDA is found): the `.cu` files compiled by
//     nvcc, linked with the CUDA runtime of runtime/cuda; every test skips
//     (GTEST_SKIP) when cudaGetDeviceCount reports no device;
//   - gnnc-cuda-emu-tests (always): the same `.cu` files compiled as C++
//     with the host emulation of tests/cuda/emu, whose device operations
//     are the host ones: it checks the printed kernels and host code on
//     any machine.
//
// Through the reflection tables (docs/abi.md, "CUDA") every entry point is
// called with device graphs, device tensors and a stream, on the random
// graphs of TestSupport (power-law graphs with empty neighbourhoods,
// self-loops and multi-edges; blocks, batches, heterogeneous graphs), in
// inference and training (dropout seed 0 draws the interpreter's masks),
// against the reference interpreter; with --training, @F.train and
// @F.backward against the interpreter and the unfused gnn-autodiff
// gradients; on a device, also Cora for the models as written. Outputs and
// the workspace are filled with NaN before a call.
//
//===----------------------------------------------------------------------===//

#include "CudaModules.h"
#include "Interpreter/TestSupport.h"

#include "gnnc/Dialect/GNN/Transforms/Passes.h"
#include "gnnc/runtime/Npy.h"
#include "gnnc/runtime/cuda/DeviceOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <random>

using namespace gnnc;
using namespace gnnc::testing_support;

namespace {

//===----------------------------------------------------------------------===//
// Tolerances
//===----------------------------------------------------------------------===//

/// The generated code computes in float. Against the interpreter in double
/// (the reference): each element within kTolerance relative, elements
/// smaller than kFloor times the output's largest compared at that scale.
/// Against the interpreter in float, whose own rounding differs (matmuls
/// sum in another order than cblas_sgemm), within kFloatTolerance with the
/// smaller floor kFloatFloor.
constexpr double kTolerance = 1e-5;
constexpr double kFloor = 1e-1;
constexpr double kFloatTolerance = 1e-3;
constexpr double kFloatFloor = 1e-2;
/// Differences up to this much count as none (as numpy.allclose's atol): a
/// gradient that is 0 in exact arithmetic (a softmax over identical
/// logits) is a few float ulps in float.
constexpr double kAbsolute = 1e-7;
/// Gradients come through twice as many float operations as outputs.
constexpr double kGradientTolerance = 1e-4;

/// The largest error of `got` against `want`, relative to each expected
/// value with a floor of `floor * max(scale, max|want|)`, after subtracting
/// `absolute` from each difference. NaN in either is infinite.
double maxRelativeError(const std::vector<float> &got,
                        const std::vector<double> &want, double floor,
                        double scale = 0, double absolute = kAbsolute) {
  if (got.size() != want.size())
    return std::numeric_limits<double>::infinity();
  for (double x : want)
    scale = std::max(scale, std::abs(x));
  double worst = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(got[i]) || std::isnan(want[i]))
      return std::numeric_limits<double>::infinity();
    double denom = std::max({std::abs(want[i]), floor * scale, 1e-300});
    double diff = std::abs(static_cast<double>(got[i]) - want[i]);
    worst = std::max(worst, std::max(diff - absolute, 0.0) / denom);
  }
  return worst;
}

//===----------------------------------------------------------------------===//
// Modules and their IR
//===----------------------------------------------------------------------===//

const CudaModule *findModule(llvm::StringRef id) {
  for (size_t i = 0; i < kNumCudaModules; ++i)
    if (id == kCudaModules[i].id)
      return &kCudaModules[i];
  return nullptr;
}

const rt::cuda::EntryInfo *findEntry(const rt::cuda::ModuleInfo &m,
                                     llvm::StringRef name) {
  for (int i = 0; i < m.numEntries; ++i)
    if (name == m.entries[i].name)
      return &m.entries[i];
  return nullptr;
}

std::map<std::string, double> definesOf(const rt::cuda::ModuleInfo &m) {
  std::map<std::string, double> out;
  for (int i = 0; i < m.numDefines; ++i) {
    auto [name, value] = llvm::StringRef(m.defines[i]).split('=');
    out[name.str()] = std::strtod(value.str().c_str(), nullptr);
  }
  return out;
}

/// What the reference interpreter runs.
enum class Stage {
  Unfused,  ///< MLIRGen's module, as written
  Autodiff, ///< plus gnn-autodiff (unfused backward functions)
  Training, ///< the training pipeline gnnc --training runs before kernels
};

::testing::AssertionResult
compileReference(const rt::cuda::ModuleInfo &m, Stage stage,
                 mlir::MLIRContext &context,
                 mlir::OwningOpRef<mlir::ModuleOp> &module) {
  std::string source;
  if (auto ok = readText(m.source, source); !ok)
    return ok;
  if (auto ok =
          lowerGNN(context, source, m.source, m.entry, definesOf(m), module);
      !ok)
    return ok;
  if (stage == Stage::Autodiff)
    return runPipeline(context, *module, [](mlir::PassManager &pm) {
      pm.addPass(gnn::createGNNAutodiff());
    });
  if (stage == Stage::Training)
    return runPipeline(context, *module, [](mlir::PassManager &pm) {
      // gnnc's defaults (--remat=auto, --remat-balance=8, Cora sizes).
      gnn::GNNRematOptions options;
      options.policy = "auto";
      options.balance = 8.0;
      options.vertices = 2708;
      options.edges = 13264;
      gnn::buildTrainingPipeline(pm, options);
    });
  return ::testing::AssertionSuccess();
}

//===----------------------------------------------------------------------===//
// Calling generated code
//===----------------------------------------------------------------------===//

GK graphKindOf(rt::GraphKind k) {
  switch (k) {
  case rt::GraphKind::Graph:
    return GK::graph;
  case rt::GraphKind::Block:
    return GK::block;
  case rt::GraphKind::Batched:
    return GK::batched;
  case rt::GraphKind::Hetero:
    return GK::hetero;
  }
  return GK::graph;
}

std::optional<GK> graphKindOf(const rt::cuda::EntryInfo &e) {
  if (e.numGraphs == 0)
    return std::nullopt;
  return graphKindOf(e.graphKinds[0]);
}

/// A tensor of the generated code: float data and its shape.
struct Array {
  std::vector<int64_t> shape;
  std::vector<float> data;
};

/// Whether a CUDA device can run the tests (always in the emulation).
bool haveDevice() {
  static const bool have = [] {
    int count = 0;
    rt::Status s = rt::cuda::deviceCount(count);
    if (!s.ok())
      std::cerr << "cudaGetDeviceCount: " << s.message() << "\n";
    return s.ok() && count > 0;
  }();
  return have;
}

#define SKIP_WITHOUT_DEVICE()                                                  \
  do {                                                                         \
    if (!haveDevice())                                                         \
      GTEST_SKIP() << "no CUDA device";                                        \
  } while (0)

/// The device copies of a test graph (all kinds), uploaded once.
struct DeviceGraphs {
  rt::cuda::DeviceGraph graph;
  rt::cuda::DeviceBatchedGraph batch;
  std::vector<std::unique_ptr<rt::cuda::DeviceGraph>> relationGraphs;
  std::vector<rt::cuda::DeviceRelation> relations;
  rt::cuda::DeviceHeteroGraph hetero;
  rt::Status status;
  /// The host graphs, kept alive: the cache is keyed by their address.
  TestGraph host;
};

const DeviceGraphs &onDevice(const TestGraph &graph) {
  static std::map<std::pair<const void *, GK>, std::unique_ptr<DeviceGraphs>>
      cache;
  // Test graphs are built once per suite; key them by their host graph.
  const void *key =
      graph.graph ? static_cast<const void *>(graph.graph.get())
      : graph.relations.empty()
          ? nullptr
          : static_cast<const void *>(graph.relations.begin()->second.get());
  auto &slot = cache[{key, graph.kind}];
  if (slot)
    return *slot;
  slot = std::make_unique<DeviceGraphs>();
  DeviceGraphs &d = *slot;
  d.host = graph;
  if (graph.graph) {
    d.status = rt::cuda::DeviceGraph::upload(*graph.graph, nullptr, d.graph);
    if (d.status.ok() && graph.kind == GK::batched) {
      rt::BatchedGraph b;
      b.graph = graph.graph.get();
      b.graphOf = graph.graphOf.data();
      b.numGraphs = graph.numGraphs;
      d.status =
          rt::cuda::DeviceBatchedGraph::upload(b, d.graph, nullptr, d.batch);
    }
  }
  for (const auto &[name, g] : graph.relations) {
    if (!d.status.ok())
      break;
    d.relationGraphs.push_back(std::make_unique<rt::cuda::DeviceGraph>());
    d.status =
        rt::cuda::DeviceGraph::upload(*g, nullptr, *d.relationGraphs.back());
  }
  for (size_t i = 0; i < d.relationGraphs.size(); ++i)
    d.relations.push_back({std::next(graph.relations.begin(), i)->first.c_str(),
                           d.relationGraphs[i].get()});
  d.hetero.numVertices =
      graph.graph ? graph.graph->numDst() : graph.numVertices;
  d.hetero.relations = d.relations.data();
  d.hetero.numRelations = static_cast<int64_t>(d.relations.size());
  return d;
}

/// One call of an entry point, with the device graphs it needs.
class NativeCall {
public:
  NativeCall(const rt::cuda::EntryInfo &entry, const TestGraph &graph)
      : entry(entry), device(onDevice(graph)) {
    for (int i = 0; i < entry.numGraphs; ++i) {
      switch (entry.graphKinds[i]) {
      case rt::GraphKind::Graph:
      case rt::GraphKind::Block:
        graphs.push_back(&device.graph);
        break;
      case rt::GraphKind::Batched:
        graphs.push_back(&device.batch);
        break;
      case rt::GraphKind::Hetero:
        graphs.push_back(&device.hetero);
        break;
      }
    }
    // Explicit sizes: the vertex count (graph-less layers' N).
    for (int i = 0; i < entry.numSizes; ++i)
      sizes.push_back(graph.numDst());
    args.graphs = graphs.data();
    args.sizes = sizes.data();
    args.inputs = nullptr;
    args.outputs = nullptr;
    args.workspace = nullptr;
    args.training = false;
    args.seed = 0;
    args.stream = nullptr;
    // The shapes of every argument and result.
    int total = 0;
    for (int i = 0; i < entry.numArgs; ++i)
      total += entry.args[i].rank;
    for (int i = 0; i < entry.numResults; ++i)
      total += entry.results[i].rank;
    std::vector<int64_t> dims(total + 1);
    entry.shapes(args, dims.data());
    int at = 0;
    for (int i = 0; i < entry.numArgs; ++i) {
      argShapes.emplace_back(dims.begin() + at,
                             dims.begin() + at + entry.args[i].rank);
      at += entry.args[i].rank;
    }
    for (int i = 0; i < entry.numResults; ++i) {
      resultShapes.emplace_back(dims.begin() + at,
                                dims.begin() + at + entry.results[i].rank);
      at += entry.results[i].rank;
    }
  }

  /// Runs the entry point on `inputs` (every tensor argument, in order):
  /// uploads them, calls it on a stream, downloads the results.
  ::testing::AssertionResult run(const std::vector<Array> &inputs,
                                 bool training, uint64_t seed,
                                 std::vector<Array> &outputs) {
    if (auto ok = isOk(device.status); !ok)
      return ok << " (uploading the graph)";
    if (inputs.size() != static_cast<size_t>(entry.numArgs))
      return ::testing::AssertionFailure()
             << entry.name << " takes " << entry.numArgs << " tensors";
    cudaStream_t stream = nullptr;
    if (cudaStreamCreate(&stream) != cudaSuccess)
      return ::testing::AssertionFailure() << "cudaStreamCreate failed";
    std::unique_ptr<CUstream_st, void (*)(cudaStream_t)> streamOwner(
        stream, [](cudaStream_t s) { (void)cudaStreamDestroy(s); });
    std::vector<rt::cuda::DeviceTensor> in(inputs.size());
    std::vector<const float *> inPtrs;
    for (auto [i, a] : llvm::enumerate(inputs)) {
      if (a.shape != argShapes[i])
        return ::testing::AssertionFailure()
               << entry.name << ": argument " << entry.args[i].name
               << " has another shape than the ABI says";
      if (auto ok = isOk(rt::cuda::DeviceTensor::upload(a.data.data(), a.shape,
                                                        stream, in[i]));
          !ok)
        return ok;
      inPtrs.push_back(in[i].data());
    }
    // Outputs and workspace: exactly the bytes asked for, all NaN.
    std::vector<rt::cuda::DeviceTensor> out(resultShapes.size());
    std::vector<float *> outPtrs;
    for (auto [i, shape] : llvm::enumerate(resultShapes)) {
      if (auto ok = isOk(rt::cuda::DeviceTensor::allocate(shape, out[i])); !ok)
        return ok;
      if (cudaMemsetAsync(out[i].data(), 0xFF,
                          static_cast<size_t>(out[i].numElements()) *
                              sizeof(float),
                          stream) != cudaSuccess)
        return ::testing::AssertionFailure() << "cudaMemsetAsync failed";
      outPtrs.push_back(out[i].data());
    }
    size_t bytes = entry.workspaceBytes(args);
    if (bytes % rt::kWorkspaceAlign != 0)
      return ::testing::AssertionFailure()
             << "workspace size " << bytes << " is not 64-byte aligned";
    rt::cuda::DeviceBuffer workspace;
    if (auto ok = isOk(rt::cuda::DeviceBuffer::allocate(bytes, workspace)); !ok)
      return ok;
    if (bytes &&
        cudaMemsetAsync(workspace.data(), 0xFF, bytes, stream) != cudaSuccess)
      return ::testing::AssertionFailure() << "cudaMemsetAsync failed";
    rt::cuda::CallArgs call = args;
    call.inputs = inPtrs.data();
    call.outputs = outPtrs.data();
    call.workspace = workspace.data();
    call.training = training;
    call.seed = seed;
    call.stream = stream;
    rt::Status s = entry.call(call);
    if (!s.ok())
      return ::testing::AssertionFailure()
             << entry.name << " failed: " << s.message();
    if (auto ok = isOk(rt::cuda::toStatus(cudaStreamSynchronize(stream),
                                          entry.name, __FILE__, __LINE__));
        !ok)
      return ok;
    outputs.clear();
    for (auto [i, t] : llvm::enumerate(out)) {
      Array a;
      a.shape = resultShapes[i];
      a.data.resize(static_cast<size_t>(t.numElements()));
      if (auto ok = isOk(t.download(a.data.data(), stream)); !ok)
        return ok;
      outputs.push_back(std::move(a));
    }
    return ::testing::AssertionSuccess();
  }

  const rt::cuda::EntryInfo &entry;
  std::vector<std::vector<int64_t>> argShapes, resultShapes;

private:
  const DeviceGraphs &device;
  std::vector<const void *> graphs;
  std::vector<int64_t> sizes;
  rt::cuda::CallArgs args;
};

Array randomArray(const std::vector<int64_t> &shape, std::mt19937_64 &rng) {
  Array a;
  a.shape = shape;
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  a.data.resize(n);
  for (float &x : a.data)
    x = unit(rng);
  return a;
}

/// A random value for every argument: uniform in [-1, 1], parameters
/// scaled as glorot initialises them (so activations stay of order 1).
std::vector<Array> randomInputs(const rt::cuda::EntryInfo &entry,
                                const std::vector<std::vector<int64_t>> &shapes,
                                std::mt19937_64 &rng) {
  std::vector<Array> out;
  for (int i = 0; i < entry.numArgs; ++i) {
    Array a = randomArray(shapes[i], rng);
    const std::vector<int64_t> &s = shapes[i];
    if (llvm::StringRef(entry.args[i].role) == "param" && !s.empty()) {
      int64_t fanOut = s.back(), fanIn = s.size() > 1 ? s[s.size() - 2] : 1;
      float scale = std::sqrt(6.0f / static_cast<float>(fanIn + fanOut));
      for (float &v : a.data)
        v *= scale;
    }
    out.push_back(std::move(a));
  }
  return out;
}

template <typename T> interp::Tensor<T> toTensor(const Array &a) {
  return interp::Tensor<T>::dense(a.shape,
                                  std::vector<T>(a.data.begin(), a.data.end()));
}

/// The interpreter's arguments for @fn: `graph` for graph arguments, the
/// tensors in order for the others.
template <typename T>
::testing::AssertionResult
interpArgs(mlir::ModuleOp module, const std::string &fn, const TestGraph &graph,
           const std::vector<Array> &tensors,
           std::vector<interp::Value<T>> &args) {
  auto func = module.lookupSymbol<mlir::func::FuncOp>(fn);
  if (!func)
    return ::testing::AssertionFailure() << "no @" << fn << " in the IR";
  args.clear();
  size_t next = 0;
  for (mlir::Type t : func.getArgumentTypes()) {
    if (mlir::isa<gnn::GraphType>(t)) {
      args.push_back(graph.value());
      continue;
    }
    if (next >= tensors.size())
      return ::testing::AssertionFailure() << "@" << fn << ": too few tensors";
    interp::Tensor<T> tensor = toTensor<T>(tensors[next++]);
    tensor.domain = mlir::cast<gnn::DomainTensorType>(t).getDomain();
    args.push_back(std::move(tensor));
  }
  return ::testing::AssertionSuccess();
}

/// Runs @fn of `module` in the interpreter in precision T.
template <typename T>
::testing::AssertionResult
interpret(mlir::ModuleOp module, const std::string &fn, const TestGraph &graph,
          const std::vector<Array> &tensors, bool training,
          std::vector<interp::Tensor<T>> &out) {
  std::vector<interp::Value<T>> args;
  if (auto ok = interpArgs<T>(module, fn, graph, tensors, args); !ok)
    return ok;
  interp::RunOptions options;
  options.training = training;
  return isOk(interp::runAll<T>(module, fn, args, out, options));
}

/// Expects every output to match the interpreter's result.
template <typename T>
void expectClose(const std::vector<Array> &got,
                 const std::vector<interp::Tensor<T>> &want,
                 const rt::cuda::EntryInfo &entry, const std::string &what,
                 double tolerance, double floor) {
  ASSERT_EQ(got.size(), want.size()) << what;
  // The floor is relative to the largest expected value of any result: a
  // gradient that is 0 in exact arithmetic next to others of order 1 is
  // compared at their scale.
  double callScale = 0;
  for (const interp::Tensor<T> &t : want)
    for (T x : t.data)
      callScale = std::max(callScale, std::abs(static_cast<double>(x)));
  for (size_t r = 0; r < got.size(); ++r) {
    EXPECT_EQ(got[r].shape, want[r].shape)
        << what << ": result " << entry.results[r].name;
    double err = maxRelativeError(
        got[r].data,
        std::vector<double>(want[r].data.begin(), want[r].data.end()), floor,
        callScale);
    double scale = 0, diff = 0;
    for (size_t i = 0; i < want[r].data.size() && i < got[r].data.size(); ++i) {
      scale = std::max(scale, std::abs(static_cast<double>(want[r].data[i])));
      diff = std::max(diff, std::abs(static_cast<double>(got[r].data[i]) -
                                     static_cast<double>(want[r].data[i])));
    }
    size_t nanGot = 0, nanWant = 0;
    for (float x : got[r].data)
      nanGot += std::isnan(x);
    for (T x : want[r].data)
      nanWant += std::isnan(x);
    EXPECT_LE(err, tolerance)
        << what << ": result " << r << " (" << entry.results[r].name
        << ") max relative error " << err << " (largest |expected| " << scale
        << ", largest |difference| " << diff << "; NaN: " << nanGot
        << " generated, " << nanWant << " expected)";
  }
}

/// Expects `got` (the outputs of entry point `entry`) to be what @fn of
/// `module` computes in the interpreter, in float and in double.
void expectInterpreter(const std::vector<Array> &got, mlir::ModuleOp module,
                       const std::string &fn, const TestGraph &graph,
                       const std::vector<Array> &inputs, bool training,
                       const rt::cuda::EntryInfo &entry,
                       const std::string &what, double tolerance = kTolerance) {
  std::vector<interp::Tensor<float>> single;
  ASSERT_TRUE(interpret<float>(module, fn, graph, inputs, training, single));
  expectClose(got, single, entry, what + " (float interpreter)",
              kFloatTolerance, kFloatFloor);
  std::vector<interp::Tensor<double>> precise;
  ASSERT_TRUE(interpret<double>(module, fn, graph, inputs, training, precise));
  expectClose(got, precise, entry, what + " (double interpreter)", tolerance,
              kFloor);
}

//===----------------------------------------------------------------------===//
// The graphs
//===----------------------------------------------------------------------===//

GraphSuite makeGraphSuite() {
  GraphSuite s;
  s.homogeneousSeed = 424242;
  s.rmat = {6, 300, 3, 6}; // 64 vertices
  s.preferential = {80, 2, 8, 4, 6};
  s.noEdges = 5;
  s.batchedSeed = 17;
  s.batch = {{9, 0, 2, 2}, {0}, {16, 48}, {1}};
  s.blockSeed = 99;
  s.block = {40, 16, 20.0, 2.0, true};
  s.heteroSeed = 5;
  s.hetero = {5, 120, 2, 3}; // 32 vertices
  s.noGraphVertices = 6;
  s.moreCornerCases = true;
  return s;
}

const GraphSuite &graphs() {
  static const GraphSuite suite = makeGraphSuite();
  return suite;
}

/// The suite's graphs of `kind`, and for homogeneous graphs a hub: vertex
/// 0 with 100 in-edges and 70 out-edges (more edges than a warp has lanes,
/// so a group loads its edge ids several times and the last load is
/// partial), multi-edges and a self-loop on it, isolated vertices.
std::vector<TestGraph> graphsOfKind(std::optional<GK> kind) {
  std::vector<TestGraph> out = graphs().ofKind(kind);
  if (kind == GK::graph) {
    static const GraphPtr hub = [] {
      Edges edges;
      for (int64_t k = 0; k < 100; ++k)
        edges.push_back({1 + k % 37, 0});
      for (int64_t k = 0; k < 70; ++k)
        edges.push_back({0, 1 + (k * 7) % 40});
      edges.push_back({0, 0});
      return makeGraph(edges, 45, 45);
    }();
    out.push_back(named("hub", GK::graph, hub));
  }
  return out;
}

//===----------------------------------------------------------------------===//
// Forward: every layer and model of every module
//===----------------------------------------------------------------------===//

struct EntryCase {
  const CudaModule *module;
  const rt::cuda::EntryInfo *entry;
};

void PrintTo(const EntryCase &c, std::ostream *os) {
  *os << c.module->id << " @" << c.entry->name;
}

std::vector<EntryCase> forwardCases() {
  std::vector<EntryCase> out;
  for (size_t i = 0; i < kNumCudaModules; ++i) {
    const rt::cuda::ModuleInfo &m = *kCudaModules[i].info;
    for (int e = 0; e < m.numEntries; ++e) {
      llvm::StringRef kind = m.entries[e].kind;
      if (kind == "layer" || kind == "model")
        out.push_back({&kCudaModules[i], &m.entries[e]});
    }
  }
  return out;
}

std::string entryCaseName(const ::testing::TestParamInfo<EntryCase> &info) {
  return testName(std::string(info.param.module->id) + "_" +
                  info.param.entry->symbol);
}

class CudaForward : public ::testing::TestWithParam<EntryCase> {};
// (gnnc-cuda-tests compiles a subset of the modules with nvcc.)
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CudaForward);

TEST_P(CudaForward, MatchesInterpreter) {
  SKIP_WITHOUT_DEVICE();
  const CudaModule &cm = *GetParam().module;
  const rt::cuda::EntryInfo &entry = *GetParam().entry;
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> reference;
  ASSERT_TRUE(compileReference(*cm.info, Stage::Unfused, context, reference));
  uint64_t seed = 1;
  for (const TestGraph &graph : graphsOfKind(graphKindOf(entry))) {
    SCOPED_TRACE("graph " + graph.name);
    NativeCall call(entry, graph);
    std::mt19937_64 rng(seed++);
    std::vector<Array> inputs = randomInputs(entry, call.argShapes, rng);
    for (bool training : {false, true}) {
      SCOPED_TRACE(training ? "training" : "inference");
      std::vector<Array> got;
      ASSERT_TRUE(call.run(inputs, training, /*seed=*/0, got));
      expectInterpreter(got, *reference, entry.name, graph, inputs, training,
                        entry, entry.name);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Modules, CudaForward,
                         ::testing::ValuesIn(forwardCases()), entryCaseName);

//===----------------------------------------------------------------------===//
// Training: @F.train and @F.backward
//===----------------------------------------------------------------------===//

std::vector<EntryCase> trainingCases() {
  std::vector<EntryCase> out;
  for (const EntryCase &c : forwardCases()) {
    const rt::cuda::ModuleInfo &m = *c.module->info;
    std::string name = c.entry->name;
    if (findEntry(m, name + ".train") && findEntry(m, name + ".backward"))
      out.push_back(c);
  }
  return out;
}

class CudaTraining : public ::testing::TestWithParam<EntryCase> {};
// (gnnc-cuda-tests compiles a subset of the modules with nvcc.)
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CudaTraining);

/// @F.train, then @F.backward on what it saved, against the interpreter on
/// the same IR and against the unfused gnn-autodiff gradients.
TEST_P(CudaTraining, TrainAndBackwardMatchInterpreter) {
  SKIP_WITHOUT_DEVICE();
  const CudaModule &cm = *GetParam().module;
  const rt::cuda::EntryInfo &forward = *GetParam().entry;
  std::string name = forward.name;
  const rt::cuda::EntryInfo &train = *findEntry(*cm.info, name + ".train");
  const rt::cuda::EntryInfo &backward =
      *findEntry(*cm.info, name + ".backward");
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> unfused, trainingIR, autodiff;
  ASSERT_TRUE(compileReference(*cm.info, Stage::Unfused, context, unfused));
  ASSERT_TRUE(compileReference(*cm.info, Stage::Training, context, trainingIR));
  ASSERT_TRUE(compileReference(*cm.info, Stage::Autodiff, context, autodiff));
  auto oracleFn =
      autodiff->lookupSymbol<mlir::func::FuncOp>(name + ".backward");
  ASSERT_TRUE(oracleFn);

  uint64_t seed = 100;
  for (const TestGraph &graph : graphsOfKind(graphKindOf(forward))) {
    SCOPED_TRACE("graph " + graph.name);
    NativeCall trainCall(train, graph), backwardCall(backward, graph);
    std::mt19937_64 rng(seed++);
    std::vector<Array> inputs = randomInputs(train, trainCall.argShapes, rng);
    Array cotangent = randomArray(trainCall.resultShapes[0], rng);
    for (bool training : {false, true}) {
      SCOPED_TRACE(training ? "training" : "inference");
      // The saving forward, and its first result is the forward's.
      std::vector<Array> saved;
      ASSERT_TRUE(trainCall.run(inputs, training, 0, saved));
      expectInterpreter(saved, *trainingIR, name + ".train", graph, inputs,
                        training, train, name + ".train");
      std::vector<interp::Tensor<double>> forwardWant;
      ASSERT_TRUE(interpret<double>(*unfused, name, graph, inputs, training,
                                    forwardWant));
      expectClose(std::vector<Array>{saved[0]},
                  std::vector<interp::Tensor<double>>{forwardWant[0]}, train,
                  name + " (forward, double interpreter)", kTolerance, kFloor);

      // The backward: the forward's tensors, the saved ones by name, the
      // cotangent.
      std::vector<Array> backwardInputs;
      for (int i = 0; i < backward.numArgs; ++i) {
        llvm::StringRef arg = backward.args[i].name;
        const Array *a = nullptr;
        if (llvm::StringRef(backward.args[i].role) == "saved") {
          for (int r = 0; r < train.numResults; ++r)
            if (arg == train.results[r].name)
              a = &saved[r];
        } else if (arg == "cotangent") {
          a = &cotangent;
        } else {
          for (int k = 0; k < train.numArgs; ++k)
            if (arg == train.args[k].name)
              a = &inputs[k];
        }
        ASSERT_TRUE(a) << "no tensor for argument " << arg.str();
        backwardInputs.push_back(*a);
      }
      std::vector<Array> grads;
      ASSERT_TRUE(backwardCall.run(backwardInputs, training, 0, grads));
      expectInterpreter(grads, *trainingIR, name + ".backward", graph,
                        backwardInputs, training, backward, name + ".backward",
                        kGradientTolerance);

      // The unfused oracle: gnn-autodiff's backward recomputes everything.
      std::vector<Array> oracleInputs = inputs;
      oracleInputs.push_back(cotangent);
      std::vector<interp::Tensor<double>> oracle;
      ASSERT_TRUE(interpret<double>(*autodiff, name + ".backward", graph,
                                    oracleInputs, training, oracle));
      double oracleScale = 0;
      for (const interp::Tensor<double> &t : oracle)
        for (double x : t.data)
          oracleScale = std::max(oracleScale, std::abs(x));
      for (unsigned r = 0; r < oracleFn.getNumResults(); ++r) {
        auto of = oracleFn.getResultAttrOfType<mlir::StringAttr>(
            r, gnn::kGradOfAttrName);
        ASSERT_TRUE(of);
        int found = -1;
        for (int k = 0; k < backward.numResults; ++k)
          if (of.getValue() == backward.results[k].name)
            found = k;
        ASSERT_GE(found, 0) << "no gradient of " << of.getValue().str();
        double err = maxRelativeError(grads[found].data, oracle[r].data, kFloor,
                                      oracleScale);
        EXPECT_LE(err, kGradientTolerance)
            << "gradient of " << of.getValue().str()
            << " against the unfused backward: max relative error " << err;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Modules, CudaTraining,
                         ::testing::ValuesIn(trainingCases()), entryCaseName);

//===----------------------------------------------------------------------===//
// Unfused backward functions (gnn-autodiff's, printed by gnnc-print-target)
//===----------------------------------------------------------------------===//

std::vector<EntryCase> unfusedBackwardCases() {
  std::vector<EntryCase> out;
  for (size_t i = 0; i < kNumCudaModules; ++i) {
    const rt::cuda::ModuleInfo &m = *kCudaModules[i].info;
    for (int e = 0; e < m.numEntries; ++e) {
      llvm::StringRef name = m.entries[e].name;
      if (llvm::StringRef(m.entries[e].kind) != "backward" ||
          !name.ends_with(".backward"))
        continue;
      std::string forward = name.drop_back(9).str();
      if (!findEntry(m, forward + ".train"))
        out.push_back({&kCudaModules[i], &m.entries[e]});
    }
  }
  return out;
}

class CudaUnfusedBackward : public ::testing::TestWithParam<EntryCase> {};
// (gnnc-cuda-tests compiles a subset of the modules with nvcc.)
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CudaUnfusedBackward);

/// @F.backward(arguments, cotangent), which recomputes the forward, against
/// the interpreter on the same (unfused) IR.
TEST_P(CudaUnfusedBackward, MatchesInterpreter) {
  SKIP_WITHOUT_DEVICE();
  const CudaModule &cm = *GetParam().module;
  const rt::cuda::EntryInfo &entry = *GetParam().entry;
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> reference;
  ASSERT_TRUE(compileReference(*cm.info, Stage::Autodiff, context, reference));
  uint64_t seed = 300;
  for (const TestGraph &graph : graphsOfKind(graphKindOf(entry))) {
    SCOPED_TRACE("graph " + graph.name);
    NativeCall call(entry, graph);
    std::mt19937_64 rng(seed++);
    std::vector<Array> inputs = randomInputs(entry, call.argShapes, rng);
    for (bool training : {false, true}) {
      SCOPED_TRACE(training ? "training" : "inference");
      std::vector<Array> got;
      ASSERT_TRUE(call.run(inputs, training, 0, got));
      expectInterpreter(got, *reference, entry.name, graph, inputs, training,
                        entry, entry.name, kGradientTolerance);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Modules, CudaUnfusedBackward,
                         ::testing::ValuesIn(unfusedBackwardCases()),
                         entryCaseName);

//===----------------------------------------------------------------------===//
// Seeds
//===----------------------------------------------------------------------===//

/// A step seed changes the masks of a layer with dropout, and the same seed
/// draws the same masks again; inference ignores it.
TEST(CudaSeeds, StepSeedDrawsNewMasks) {
  SKIP_WITHOUT_DEVICE();
  const CudaModule *cm = findModule("small_gcn_GCN");
  ASSERT_TRUE(cm);
  const rt::cuda::EntryInfo *entry = findEntry(*cm->info, "GCN");
  ASSERT_TRUE(entry);
  const TestGraph graph = graphs().homogeneousGraphs().front();
  NativeCall call(*entry, graph);
  std::mt19937_64 rng(7);
  std::vector<Array> inputs = randomInputs(*entry, call.argShapes, rng);
  std::vector<Array> zero, one, oneAgain, inference0, inference1;
  ASSERT_TRUE(call.run(inputs, true, 0, zero));
  ASSERT_TRUE(call.run(inputs, true, 1, one));
  ASSERT_TRUE(call.run(inputs, true, 1, oneAgain));
  ASSERT_TRUE(call.run(inputs, false, 0, inference0));
  ASSERT_TRUE(call.run(inputs, false, 12345, inference1));
  EXPECT_NE(zero[0].data, one[0].data);
  EXPECT_EQ(one[0].data, oneAgain[0].data);
  EXPECT_EQ(inference0[0].data, inference1[0].data);
  // The mixing itself: seed 0 is the op's seed.
  EXPECT_EQ(rt::mixSeed(7, 0), 7u);
  EXPECT_NE(rt::mixSeed(7, 1), rt::mixSeed(8, 1));
  EXPECT_NE(rt::mixSeed(7, 1), rt::mixSeed(7, 2));
}

//===----------------------------------------------------------------------===//
// The modules cover the examples
//===----------------------------------------------------------------------===//

TEST(CudaModules, EveryExampleCaseIsCompiled) {
  for (const ExampleCase &c : exampleCases(ExampleSizes::Differential)) {
    std::string id =
        "small_" + llvm::sys::path::stem(c.file).str() + "_" + c.entry;
    const CudaModule *cm = findModule(id);
    ASSERT_TRUE(cm) << id << " is not compiled (tests/cuda/CMakeLists.txt)";
    EXPECT_EQ(definesOf(*cm->info), c.defines) << id;
    EXPECT_TRUE(findEntry(*cm->info, c.entry)) << id;
    EXPECT_TRUE(cm->info->training) << id;
  }
  // Every example as written.
  std::error_code ec;
  llvm::SmallString<256> dir(kRoot);
  llvm::sys::path::append(dir, "dsl-examples");
  int files = 0;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec)) {
    if (llvm::sys::path::extension(it->path()) != ".gnn")
      continue;
    ++files;
    std::string id = "ex_" + llvm::sys::path::stem(it->path()).str();
    const CudaModule *cm = findModule(id);
    ASSERT_TRUE(cm) << id;
    EXPECT_GT(cm->info->numEntries, 0) << id;
    EXPECT_EQ(cm->info->abiVersion, rt::kAbiVersion);
  }
  EXPECT_EQ(files, 12);
}

//===----------------------------------------------------------------------===//
// Cora
//===----------------------------------------------------------------------===//

std::string joinPath(std::initializer_list<llvm::StringRef> parts) {
  llvm::SmallString<256> out;
  for (llvm::StringRef p : parts)
    llvm::sys::path::append(out, p);
  return std::string(out);
}

const std::string kCora = joinPath({kRoot, "..", "shared", "datasets", "cora"});

::testing::AssertionResult readArray(const std::string &file, Array &out) {
  rt::NpyArray array;
  if (auto ok = isOk(rt::readNpy(file, array)); !ok)
    return ok;
  out.shape = array.shape;
  out.data.clear();
  for (int64_t i = 0; i < array.numElements(); ++i)
    out.data.push_back(array.dtype == rt::DType::Float64
                           ? static_cast<float>(array.data<double>()[i])
                           : array.data<float>()[i]);
  return ::testing::AssertionSuccess();
}

std::vector<EntryCase> coraCases() {
  std::vector<EntryCase> out;
  for (const EntryCase &c : forwardCases())
    if (llvm::StringRef(c.module->id).starts_with("ex_") &&
        llvm::StringRef(c.entry->kind) == "model" &&
        graphKindOf(*c.entry) == GK::graph)
      out.push_back(c);
  return out;
}

class CudaCora : public ::testing::TestWithParam<EntryCase> {};
// (gnnc-cuda-tests compiles a subset of the modules with nvcc.)
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(CudaCora);

/// The models as written (Cora's 1433 features) on Cora, against the
/// interpreter, with Cora's features as `x` and random parameters.
TEST_P(CudaCora, MatchesInterpreter) {
  SKIP_WITHOUT_DEVICE();
#ifdef GNNC_CUDA_EMULATION
  GTEST_SKIP() << "Cora is left to a device (the emulation runs every "
                  "thread as a fiber)";
#endif
  if (!llvm::sys::fs::exists(joinPath({kCora, "edge_index.npy"})))
    GTEST_SKIP() << "../shared/datasets/cora is not present";
  const CudaModule &cm = *GetParam().module;
  const rt::cuda::EntryInfo &entry = *GetParam().entry;
  auto g = std::make_shared<rt::Graph>();
  ASSERT_TRUE(isOk(rt::loadGraphDir(kCora, *g)));
  TestGraph graph = named("cora", GK::graph, g);
  Array x;
  ASSERT_TRUE(readArray(joinPath({kCora, "x.npy"}), x));
  NativeCall call(entry, graph);
  std::mt19937_64 rng(2708);
  std::vector<Array> inputs;
  for (int i = 0; i < entry.numArgs; ++i) {
    if (llvm::StringRef(entry.args[i].name) == "x" &&
        call.argShapes[i] == x.shape) {
      inputs.push_back(x);
      continue;
    }
    Array a = randomArray(call.argShapes[i], rng);
    // Glorot-sized parameters keep activations in a sensible range.
    if (llvm::StringRef(entry.args[i].role) == "param" &&
        call.argShapes[i].size() == 2)
      for (float &v : a.data)
        v *= std::sqrt(6.0f / static_cast<float>(call.argShapes[i][0] +
                                                 call.argShapes[i][1]));
    inputs.push_back(std::move(a));
  }
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> reference;
  ASSERT_TRUE(compileReference(*cm.info, Stage::Unfused, context, reference));
  for (bool training : {false, true}) {
    SCOPED_TRACE(training ? "training" : "inference");
    std::vector<Array> got;
    ASSERT_TRUE(call.run(inputs, training, 0, got));
    expectInterpreter(got, *reference, entry.name, graph, inputs, training,
                      entry, std::string(entry.name) + " on Cora");
  }
}

INSTANTIATE_TEST_SUITE_P(Models, CudaCora, ::testing::ValuesIn(coraCases()),
                         entryCaseName);

} // namespace
