//===- ExecSupport.cpp - Running generated code against the interpreter ---===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "ExecSupport.h"

#include "gnnc/Dialect/GNN/Transforms/Passes.h"
#include "gnnc/runtime/Npy.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace gnnc::testing_support {

double maxRelativeError(const std::vector<float> &got,
                        const std::vector<double> &want, double floor,
                        double scale, double absolute) {
  if (got.size() != want.size())
    return std::numeric_limits<double>::infinity();
  for (double x : want)
    scale = std::max(scale, std::abs(x));
  // A reference of zeros only (a gradient that vanishes in exact
  // arithmetic) has no scale of its own: the error is absolute.
  if (scale == 0 && floor > 0)
    scale = 1 / floor;
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
// Arrays
//===----------------------------------------------------------------------===//

int64_t numElements(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

Array randomArray(const std::vector<int64_t> &shape, std::mt19937_64 &rng) {
  Array a;
  a.shape = shape;
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  a.data.resize(numElements(shape));
  for (float &x : a.data)
    x = unit(rng);
  return a;
}

std::vector<Array> randomInputs(const rt::TensorInfo *args, int numArgs,
                                const std::vector<std::vector<int64_t>> &shapes,
                                std::mt19937_64 &rng) {
  std::vector<Array> out;
  for (int i = 0; i < numArgs; ++i) {
    Array a = randomArray(shapes[i], rng);
    const std::vector<int64_t> &s = shapes[i];
    // Buffers (running statistics) in [0.5, 1.5]: a variance is positive.
    if (llvm::StringRef(args[i].role) == "buffer")
      for (float &v : a.data)
        v = 1.0f + 0.5f * v;
    if (llvm::StringRef(args[i].role) == "param" && !s.empty()) {
      int64_t fanOut = s.back(), fanIn = s.size() > 1 ? s[s.size() - 2] : 1;
      float scale = std::sqrt(6.0f / static_cast<float>(fanIn + fanOut));
      for (float &v : a.data)
        v *= scale;
    }
    out.push_back(std::move(a));
  }
  return out;
}

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

std::vector<double> readDoubles(const std::string &file) {
  rt::NpyArray array;
  EXPECT_TRUE(isOk(rt::readNpy(file, array)));
  std::vector<double> out;
  for (int64_t i = 0; i < array.numElements(); ++i)
    out.push_back(array.dtype == rt::DType::Float64 ? array.data<double>()[i]
                                                    : array.data<float>()[i]);
  return out;
}

std::string joinPath(std::initializer_list<llvm::StringRef> parts) {
  llvm::SmallString<256> out;
  for (llvm::StringRef p : parts)
    llvm::sys::path::append(out, p);
  return std::string(out);
}

const std::string &coraDir() {
  static const std::string dir =
      joinPath({kRoot, "..", "shared", "datasets", "cora"});
  return dir;
}

const std::string &goldensDir() {
  static const std::string dir = joinPath({kRoot, "tests", "goldens"});
  return dir;
}

//===----------------------------------------------------------------------===//
// PyG goldens
//===----------------------------------------------------------------------===//

std::vector<std::string> goldenCaseNames() {
  std::vector<std::string> names;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(goldensDir(), ec), end;
       it != end && !ec; it.increment(ec))
    if (llvm::sys::fs::exists(joinPath({it->path(), "case.json"})))
      names.push_back(llvm::sys::path::filename(it->path()).str());
  std::sort(names.begin(), names.end());
  return names;
}

::testing::AssertionResult loadGoldenFiles(const std::string &name,
                                           GoldenFiles &out) {
  out.dir = joinPath({goldensDir(), name});
  auto buffer = llvm::MemoryBuffer::getFile(joinPath({out.dir, "case.json"}));
  if (!buffer)
    return ::testing::AssertionFailure() << "cannot read case.json";
  llvm::Expected<llvm::json::Value> parsed =
      llvm::json::parse((*buffer)->getBuffer());
  if (!parsed)
    return ::testing::AssertionFailure() << llvm::toString(parsed.takeError());
  out.json = std::move(*parsed->getAsObject());
  bool cora = out.json.getString("graph") == llvm::StringRef("cora");
  if (cora && !llvm::sys::fs::exists(joinPath({coraDir(), "edge_index.npy"}))) {
    out.skip = "../shared/datasets/cora is not present";
    return ::testing::AssertionSuccess();
  }
  auto g = std::make_shared<rt::Graph>();
  if (auto ok = isOk(rt::loadGraphDir(cora ? coraDir() : out.dir, *g,
                                      *out.json.getInteger("num_nodes")));
      !ok)
    return ok;
  if (out.json.getBoolean("self_loops").value_or(false)) {
    auto looped = std::make_shared<rt::Graph>();
    if (auto ok = isOk(rt::addSelfLoops(*g, *looped)); !ok)
      return ok;
    g = std::move(looped);
  }
  out.graph = std::move(g);
  return ::testing::AssertionSuccess();
}

//===----------------------------------------------------------------------===//
// Modules and their entry points
//===----------------------------------------------------------------------===//

std::map<std::string, double> parseDefines(int numDefines,
                                           const char *const *defines) {
  std::map<std::string, double> out;
  for (int i = 0; i < numDefines; ++i) {
    auto [name, value] = llvm::StringRef(defines[i]).split('=');
    out[name.str()] = std::strtod(value.str().c_str(), nullptr);
  }
  return out;
}

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

//===----------------------------------------------------------------------===//
// The reference interpreter
//===----------------------------------------------------------------------===//

::testing::AssertionResult
compileReference(const std::string &source, const std::string &entry,
                 const std::map<std::string, double> &defines, Stage stage,
                 mlir::MLIRContext &context,
                 mlir::OwningOpRef<mlir::ModuleOp> &module) {
  std::string text;
  if (auto ok = readText(source, text); !ok)
    return ok;
  if (auto ok = lowerGNN(context, text, source, entry, defines, module); !ok)
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

namespace {

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

} // namespace

template <typename T>
::testing::AssertionResult
interpret(mlir::ModuleOp module, const std::string &fn, const TestGraph &graph,
          const std::vector<Array> &tensors, bool training,
          std::vector<interp::Tensor<T>> &out,
          std::map<std::string, interp::Tensor<T>> *buffers) {
  std::vector<interp::Value<T>> args;
  if (auto ok = interpArgs<T>(module, fn, graph, tensors, args); !ok)
    return ok;
  interp::RunOptions options;
  options.training = training;
  std::map<std::string, interp::Tensor<T>> after;
  rt::Status s =
      interp::runWithBuffers<T>(module, fn, args, out, after, options);
  if (buffers)
    *buffers = std::move(after);
  return isOk(s);
}

template ::testing::AssertionResult
interpret<float>(mlir::ModuleOp, const std::string &, const TestGraph &,
                 const std::vector<Array> &, bool,
                 std::vector<interp::Tensor<float>> &,
                 std::map<std::string, interp::Tensor<float>> *);
template ::testing::AssertionResult
interpret<double>(mlir::ModuleOp, const std::string &, const TestGraph &,
                  const std::vector<Array> &, bool,
                  std::vector<interp::Tensor<double>> &,
                  std::map<std::string, interp::Tensor<double>> *);

template <typename T>
void expectClose(const std::vector<Array> &got,
                 const std::vector<interp::Tensor<T>> &want,
                 const rt::TensorInfo *results, const std::string &what,
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
        << what << ": result " << results[r].name;
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
        << what << ": result " << r << " (" << results[r].name
        << ") max relative error " << err << " (largest |expected| " << scale
        << ", largest |difference| " << diff << "; NaN: " << nanGot
        << " generated, " << nanWant << " expected)";
  }
}

template void expectClose<float>(const std::vector<Array> &,
                                 const std::vector<interp::Tensor<float>> &,
                                 const rt::TensorInfo *, const std::string &,
                                 double, double);
template void expectClose<double>(const std::vector<Array> &,
                                  const std::vector<interp::Tensor<double>> &,
                                  const rt::TensorInfo *, const std::string &,
                                  double, double);

void expectInterpreter(const std::vector<Array> &got, mlir::ModuleOp module,
                       const std::string &fn, const TestGraph &graph,
                       const std::vector<Array> &inputs, bool training,
                       const rt::TensorInfo *results, const std::string &what,
                       double tolerance) {
  std::vector<interp::Tensor<float>> single;
  ASSERT_TRUE(interpret<float>(module, fn, graph, inputs, training, single));
  expectClose(got, single, results, what + " (float interpreter)",
              kFloatTolerance, kFloatFloor);
  std::vector<interp::Tensor<double>> precise;
  ASSERT_TRUE(interpret<double>(module, fn, graph, inputs, training, precise));
  expectClose(got, precise, results, what + " (double interpreter)", tolerance,
              kFloor);
}

//===----------------------------------------------------------------------===//
// Test graphs
//===----------------------------------------------------------------------===//

const GraphSuite &execGraphs() {
  static const GraphSuite suite = [] {
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
  }();
  return suite;
}

namespace {
/// `count` edges into `v` from sources first, first + 1, ... wrapping
/// after `spread` of them (so repeated edges too).
void addInEdges(Edges &edges, int64_t v, int64_t count, int64_t first,
                int64_t spread) {
  for (int64_t k = 0; k < count; ++k)
    edges.push_back({first + k % spread, v});
}

/// `count` edges out of vertex 0 to first + (7k mod 40), then a self-loop
/// of vertex 0, on 45 vertices.
GraphPtr withHubOutEdges(Edges edges, int64_t count, int64_t first) {
  for (int64_t k = 0; k < count; ++k)
    edges.push_back({0, first + (k * 7) % 40});
  edges.push_back({0, 0});
  return makeGraph(edges, 45, 45);
}
} // namespace

std::vector<TestGraph> execGraphsOfKind(std::optional<GK> kind) {
  std::vector<TestGraph> out = execGraphs().ofKind(kind);
  if (kind == GK::graph) {
    static const GraphPtr hub = [] {
      Edges edges;
      addInEdges(edges, 0, 100, 1, 37);
      return withHubOutEdges(edges, 70, 1);
    }();
    out.push_back(named("hub", GK::graph, hub));
  }
  return out;
}

TestGraph longRowsGraph() {
  static const GraphPtr graph = [] {
    Edges edges;
    addInEdges(edges, 0, 1100, 1, 37);
    addInEdges(edges, 1, 513, 2, 29);
    addInEdges(edges, 2, 512, 3, 31);
    return withHubOutEdges(edges, 700, 3);
  }();
  return named("long-rows", GK::graph, graph);
}

} // namespace gnnc::testing_support
