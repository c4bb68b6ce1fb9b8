//===- AutodiffTest.cpp - gnn-autodiff against finite differences ---------===//
//
// Part of gnnc. Every backward function gnn-autodiff writes is run in the
// reference interpreter, in double, and compared with central finite
// differences of its forward function:
//
//   for a random linear functional L(x, params) = <c, F(x, params)>, the
//   backward of F called with cotangent c returns dL/da for every tensor
//   argument a; each element (a sample of them when there are many) is
//   compared with (L(a + eps) - L(a - eps)) / (2 eps), eps = 1e-6, to 1e-6
//   relative with a floor of 1e-8 * (1 + |c| . |F|) (the rounding error of
//   the difference quotient).
//
// Covered:
//   - every layer and model of every dsl-examples/*.gnn that runs on a
//     graph, on small random power-law graphs with isolated vertices,
//     self-loops and multi-edges (and a graph without edges, one vertex
//     with two self-loops, batched graphs with an empty member, blocks,
//     heterogeneous graphs), in inference and in training (dropout draws
//     a deterministic mask, so the differences see the same mask);
//   - the layers of FusionDifferentialTest.cpp beyond the examples
//     (attention by source, over blocks, row-local ops of every kind);
//   - the vector-Jacobian product of every op MLIRGen emits, on small
//     hand-written IR, with broadcasting in every direction;
//   - the ops gnn-autodiff adds (scatter_select, readout_select,
//     reduce_select, slice, broadcast_graphs, graph_sizes, broadcast_like,
//     erf, gt) in the interpreter, ties included;
//   - backward functions still fuse: the fusion pipeline on a module with
//     backward functions computes the same gradients.
//
// Max and min are tested on continuous random inputs, so that no tie is
// within eps; structural ties (a multi-edge gathers the same row twice) get
// the same gradient whichever edge is chosen.
//
//===----------------------------------------------------------------------===//

#include "gnnc/Conversion/ASTToGNN/MLIRGen.h"
#include "gnnc/Dialect/GNN/Transforms/Passes.h"
#include "gnnc/Frontend/Frontend.h"
#include "gnnc/Interpreter/Interpreter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

// GCC 12 at -O3 reports std::variant members copied into vectors of
// interp::Value as maybe uninitialised: a known false positive.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

using namespace gnnc;
using GK = gnn::GraphKind;
using Graph = rt::Graph;
using GraphPtr = std::shared_ptr<const Graph>;
using Tensor = interp::Tensor<double>;
using Args = std::vector<interp::Value<double>>;

namespace {

const std::string kRoot = GNNC_SOURCE_DIR;

//===----------------------------------------------------------------------===//
// Graphs: small, so that finite differences stay cheap
//===----------------------------------------------------------------------===//

using Edges = std::vector<std::pair<int64_t, int64_t>>;

GraphPtr makeGraph(const Edges &edges, int64_t numSrc, int64_t numDst) {
  std::vector<int64_t> src, dst;
  for (auto [u, v] : edges) {
    src.push_back(u);
    dst.push_back(v);
  }
  auto g = std::make_shared<Graph>();
  rt::Status s = Graph::fromEdgeIndex(src.data(), dst.data(),
                                      static_cast<int64_t>(edges.size()),
                                      numSrc, numDst, *g);
  EXPECT_TRUE(s.ok()) << s.message();
  return g;
}

/// Self-loops and copies of existing edges, interleaved with the others.
void addLoopsAndDuplicates(Edges &edges, int64_t n, int loops, int dups,
                           std::mt19937_64 &rng) {
  for (int i = 0; i < loops; ++i) {
    int64_t v = static_cast<int64_t>(rng() % n);
    edges.insert(edges.begin() + rng() % (edges.size() + 1), {v, v});
  }
  for (int i = 0; i < dups && !edges.empty(); ++i) {
    auto e = edges[rng() % edges.size()];
    edges.insert(edges.begin() + rng() % (edges.size() + 1), e);
  }
}

/// R-MAT: power-law degrees, many high-numbered vertices without edges.
Edges rmatEdges(int scale, int64_t numEdges, std::mt19937_64 &rng) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  Edges edges;
  for (int64_t e = 0; e < numEdges; ++e) {
    int64_t u = 0, v = 0;
    for (int bit = 0; bit < scale; ++bit) {
      double r = unit(rng);
      int qu = r >= 0.76 ? 1 : 0;
      int qv = (r >= 0.57 && r < 0.76) || r >= 0.95 ? 1 : 0;
      u = 2 * u + qu;
      v = 2 * v + qv;
    }
    edges.push_back({u, v});
  }
  return edges;
}

/// Preferential attachment; the last `isolated` vertices get no edges.
Edges preferentialEdges(int64_t n, int m, int64_t isolated,
                        std::mt19937_64 &rng) {
  Edges edges;
  std::vector<int64_t> ends;
  for (int64_t v = 0; v < m; ++v)
    ends.push_back(v);
  for (int64_t v = m; v < n - isolated; ++v)
    for (int k = 0; k < m; ++k) {
      int64_t t = ends[rng() % ends.size()];
      edges.push_back(rng() % 2 ? std::make_pair(v, t) : std::make_pair(t, v));
      ends.push_back(t);
      ends.push_back(v);
    }
  return edges;
}

struct TestGraph {
  std::string name;
  GK kind = GK::graph;
  GraphPtr graph;
  std::vector<int64_t> graphOf;
  int64_t numGraphs = 0;
  std::map<std::string, std::shared_ptr<const Graph>> relations;
  int64_t numVertices = 0;

  interp::GraphValue value() const {
    interp::GraphValue v;
    v.kind = kind;
    v.graph = graph;
    v.graphOf = graphOf;
    v.numGraphs = numGraphs;
    v.relations = relations;
    v.numVertices = graph ? graph->numDst() : numVertices;
    return v;
  }
  int64_t numSrc() const { return graph ? graph->numSrc() : numVertices; }
  int64_t numDst() const { return graph ? graph->numDst() : numVertices; }
  int64_t numEdges() const { return graph ? graph->numEdges() : 0; }
};

TestGraph named(std::string name, GK kind, GraphPtr graph = nullptr) {
  TestGraph t;
  t.name = std::move(name);
  t.kind = kind;
  t.graph = std::move(graph);
  return t;
}

std::vector<TestGraph> homogeneousGraphs() {
  std::vector<TestGraph> out;
  std::mt19937_64 rng(31337);
  {
    Edges e = rmatEdges(5, 90, rng); // 32 vertices
    addLoopsAndDuplicates(e, 32, 3, 5, rng);
    out.push_back(named("rmat32", GK::graph, makeGraph(e, 32, 32)));
  }
  {
    Edges e = preferentialEdges(24, 2, 4, rng);
    addLoopsAndDuplicates(e, 20, 2, 4, rng);
    out.push_back(named("preferential24", GK::graph, makeGraph(e, 24, 24)));
  }
  out.push_back(named("no_edges4", GK::graph, makeGraph({}, 4, 4)));
  out.push_back(named("one_vertex_two_loops", GK::graph,
                      makeGraph({{0, 0}, {0, 0}}, 1, 1)));
  return out;
}

std::vector<TestGraph> batchedGraphs() {
  std::mt19937_64 rng(5);
  // Members of 7, 0, 8 and 1 vertices; no edge crosses members.
  const std::vector<int64_t> sizes = {7, 0, 8, 1};
  Edges edges;
  std::vector<int64_t> graphOf;
  int64_t offset = 0;
  for (size_t b = 0; b < sizes.size(); ++b) {
    int64_t n = sizes[b];
    Edges local;
    if (n == 7)
      local = preferentialEdges(7, 2, 1, rng);
    if (n == 8)
      local = rmatEdges(3, 20, rng);
    if (n > 0)
      addLoopsAndDuplicates(local, n, 1, 2, rng);
    for (auto [u, v] : local)
      edges.push_back({u + offset, v + offset});
    for (int64_t i = 0; i < n; ++i)
      graphOf.push_back(static_cast<int64_t>(b));
    offset += n;
  }
  TestGraph t =
      named("batched4", GK::batched, makeGraph(edges, offset, offset));
  t.graphOf = graphOf;
  t.numGraphs = static_cast<int64_t>(sizes.size());
  return {t};
}

std::vector<TestGraph> blockGraphs() {
  std::mt19937_64 rng(77);
  const int64_t numSrc = 24, numDst = 10;
  Edges edges;
  for (int64_t v = 0; v < numDst; ++v) {
    if (v % 4 == 3)
      continue; // no in-edges
    int64_t degree = 1 + 12 / (1 + v);
    for (int64_t k = 0; k < degree; ++k)
      edges.push_back({static_cast<int64_t>(
                           numSrc * std::pow((rng() % 1000) / 1000.0, 2.0)),
                       v});
    edges.push_back({v, v});
  }
  edges.push_back(edges.front()); // a multi-edge
  std::shuffle(edges.begin(), edges.end(), rng);
  return {named("block24x10", GK::block, makeGraph(edges, numSrc, numDst))};
}

std::vector<TestGraph> heteroGraphs() {
  std::mt19937_64 rng(11);
  Edges cites = rmatEdges(4, 40, rng); // 16 vertices
  addLoopsAndDuplicates(cites, 16, 1, 2, rng);
  Edges citedBy;
  for (auto [u, v] : cites)
    citedBy.push_back({v, u});
  TestGraph t = named("hetero16", GK::hetero);
  t.relations["cites"] = makeGraph(cites, 16, 16);
  t.relations["cited_by"] = makeGraph(citedBy, 16, 16);
  t.graph = t.relations["cites"];
  TestGraph sparse = named("hetero_sparse", GK::hetero);
  sparse.relations["cites"] = makeGraph({}, 5, 5);
  sparse.relations["cited_by"] = makeGraph({{3, 1}, {3, 1}}, 5, 5);
  sparse.graph = sparse.relations["cites"];
  return {t, sparse};
}

std::vector<TestGraph> graphsOfKind(std::optional<GK> kind) {
  if (!kind) {
    TestGraph t = named("no_graph", GK::graph);
    t.numVertices = 5;
    return {t};
  }
  switch (*kind) {
  case GK::graph:
    return homogeneousGraphs();
  case GK::batched:
    return batchedGraphs();
  case GK::block:
    return blockGraphs();
  case GK::hetero:
    return heteroGraphs();
  }
  return {};
}

/// A small graph for the per-op tests: a multi-edge (2 -> 1 twice), a
/// self-loop (3), vertex 5 without edges, vertex 4 without in-edges.
TestGraph tinyGraph() {
  return named("tiny", GK::graph,
               makeGraph({{0, 1},
                          {2, 1},
                          {3, 3},
                          {2, 1},
                          {1, 0},
                          {4, 2},
                          {0, 2},
                          {3, 2},
                          {1, 3}},
                         6, 6));
}

TestGraph tinyBatch() {
  TestGraph t = named("tiny_batch", GK::batched,
                      makeGraph({{0, 1}, {1, 2}, {4, 4}}, 6, 6));
  t.graphOf = {0, 0, 0, 2, 2, 3}; // graph 1 is empty
  t.numGraphs = 4;
  return t;
}

//===----------------------------------------------------------------------===//
// Compiling
//===----------------------------------------------------------------------===//

struct Compiled {
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::string entry;
  std::string diagText;
};

::testing::AssertionResult
lowerSource(Compiled &c, llvm::StringRef source, llvm::StringRef bufferName,
            const std::string &entry,
            const std::map<std::string, double> &defines) {
  llvm::SourceMgr sourceMgr;
  unsigned id = sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(source, bufferName), llvm::SMLoc());
  std::string diagText;
  llvm::raw_string_ostream diagOS(diagText);
  DiagnosticEngine diags(sourceMgr, diagOS);
  FrontendResult frontend = runFrontend(id, diags);
  if (!frontend.success)
    return ::testing::AssertionFailure() << diagText;
  loadGNNDialects(c.context);
  MLIRGenOptions options;
  options.entry = entry;
  options.defines = defines;
  c.module = mlirGen(c.context, *frontend.module, diags, options);
  if (!c.module)
    return ::testing::AssertionFailure() << diagText;
  c.entry = entry;
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult parseIR(Compiled &c, llvm::StringRef ir) {
  loadGNNDialects(c.context);
  std::string errors;
  llvm::raw_string_ostream os(errors);
  mlir::ScopedDiagnosticHandler handler(&c.context, [&](mlir::Diagnostic &d) {
    os << d.getLocation() << ": " << d << "\n";
    return mlir::success();
  });
  c.module = mlir::parseSourceString<mlir::ModuleOp>(ir, &c.context);
  if (!c.module)
    return ::testing::AssertionFailure() << "cannot parse the IR:\n" << errors;
  c.entry = "f";
  return ::testing::AssertionSuccess();
}

/// Runs `passes` (gnn-autodiff first) and verifies the result.
::testing::AssertionResult
runPasses(Compiled &c, mlir::ModuleOp module,
          const std::function<void(mlir::PassManager &)> &passes) {
  c.diagText.clear();
  llvm::raw_string_ostream os(c.diagText);
  mlir::ScopedDiagnosticHandler handler(&c.context, [&](mlir::Diagnostic &d) {
    os << d.getLocation() << ": " << d << "\n";
    return mlir::success();
  });
  mlir::PassManager pm(&c.context);
  passes(pm);
  if (mlir::failed(pm.run(module)))
    return ::testing::AssertionFailure() << "the passes failed:\n"
                                         << c.diagText;
  if (mlir::failed(mlir::verify(module)))
    return ::testing::AssertionFailure() << "the IR does not verify:\n"
                                         << c.diagText;
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult differentiate(Compiled &c) {
  return runPasses(c, *c.module, [](mlir::PassManager &pm) {
    pm.addPass(gnn::createGNNAutodiff());
  });
}

::testing::AssertionResult
compileExample(Compiled &c, const std::string &file, const std::string &entry,
               const std::map<std::string, double> &defines) {
  llvm::SmallString<256> path(kRoot);
  llvm::sys::path::append(path, "dsl-examples", file);
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return ::testing::AssertionFailure() << "cannot read " << file;
  if (auto ok = lowerSource(c, (*buffer)->getBuffer(), file, entry, defines);
      !ok)
    return ok;
  return differentiate(c);
}

int64_t countOps(mlir::Operation *root, llvm::StringRef name) {
  int64_t n = 0;
  root->walk([&](mlir::Operation *op) {
    if (op->getName().getStringRef() == name)
      ++n;
  });
  return n;
}

//===----------------------------------------------------------------------===//
// Arguments and running
//===----------------------------------------------------------------------===//

enum class Count { Dst, Src, Edges, Graphs };

struct ArgSpec {
  /// What a `?` dimension of a named argument counts (vertices by default).
  std::map<std::string, Count> dynamic;
  /// Arguments drawn from [0.5, 2] instead of [-1, 1] (log, sqrt, pow).
  std::set<std::string> positive;
};

std::string argName(mlir::func::FuncOp func, unsigned i) {
  if (auto p = func.getArgAttrOfType<mlir::StringAttr>(i, gnn::kParamAttrName))
    return p.getValue().str();
  if (auto n = func.getArgAttrOfType<mlir::StringAttr>(i, gnn::kNameAttrName))
    return n.getValue().str();
  return "arg" + std::to_string(i);
}

std::vector<int64_t> runtimeShape(gnn::DomainTensorType type,
                                  const TestGraph &graph, Count count) {
  std::vector<int64_t> shape;
  for (int64_t d : type.getShape())
    shape.push_back(!mlir::ShapedType::isDynamic(d) ? d
                    : count == Count::Src           ? graph.numSrc()
                    : count == Count::Dst           ? graph.numDst()
                    : count == Count::Graphs        ? graph.numGraphs
                                                    : graph.numEdges());
  return shape;
}

Tensor randomTensor(std::vector<int64_t> shape, std::mt19937_64 &rng,
                    bool positive = false) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  std::uniform_real_distribution<double> unit(positive ? 0.5 : -1.0,
                                              positive ? 2.0 : 1.0);
  std::vector<double> data(n);
  for (double &x : data)
    x = unit(rng);
  return Tensor::dense(std::move(shape), std::move(data));
}

::testing::AssertionResult makeArgs(mlir::func::FuncOp func,
                                    const TestGraph &graph, const ArgSpec &spec,
                                    uint64_t seed, Args &args) {
  std::mt19937_64 rng(seed);
  args.clear();
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    mlir::Type type = func.getArgument(i).getType();
    if (mlir::isa<gnn::GraphType>(type)) {
      args.push_back(graph.value());
      continue;
    }
    std::string name = argName(func, i);
    Count count = Count::Dst;
    if (auto it = spec.dynamic.find(name); it != spec.dynamic.end())
      count = it->second;
    args.push_back(randomTensor(
        runtimeShape(mlir::cast<gnn::DomainTensorType>(type), graph, count),
        rng, spec.positive.count(name) > 0));
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult run(mlir::ModuleOp module, const std::string &fn,
                               const Args &args, std::vector<Tensor> &out,
                               bool training) {
  interp::RunOptions options;
  options.training = training;
  rt::Status s = interp::runAll<double>(module, fn, args, out, options);
  if (!s.ok())
    return ::testing::AssertionFailure() << s.message();
  return ::testing::AssertionSuccess();
}

double dot(const Tensor &a, const Tensor &b) {
  double s = 0;
  for (size_t i = 0; i < a.data.size(); ++i)
    s += a.data[i] * b.data[i];
  return s;
}

/// Checks every gradient of `@entry.backward` against central differences
/// of `@entry`, at `maxSamples` elements per argument (all when fewer).
/// Returns how many gradient elements were compared.
int64_t checkGradients(mlir::ModuleOp module, const std::string &entry,
                       const TestGraph &graph, const ArgSpec &spec,
                       bool training, uint64_t seed, int64_t maxSamples = 24) {
  SCOPED_TRACE("@" + entry + " on " + graph.name +
               (training ? ", training" : ", inference"));
  auto func = module.lookupSymbol<mlir::func::FuncOp>(entry);
  auto backward = module.lookupSymbol<mlir::func::FuncOp>(entry + ".backward");
  EXPECT_TRUE(func && backward);
  if (!func || !backward)
    return 0;
  Args args;
  EXPECT_TRUE(makeArgs(func, graph, spec, seed, args));
  std::vector<Tensor> outs;
  EXPECT_TRUE(run(module, entry, args, outs, training));
  if (outs.size() != 1)
    return 0;
  const Tensor &y = outs.front();
  std::mt19937_64 rng(seed * 7919 + 1);
  Tensor c = randomTensor(y.shape, rng);
  double magnitude = 0;
  for (size_t i = 0; i < y.data.size(); ++i) {
    EXPECT_TRUE(std::isfinite(y.data[i])) << "forward output " << i;
    magnitude += std::abs(c.data[i] * y.data[i]);
  }
  Args backArgs = args;
  backArgs.push_back(c);
  std::vector<Tensor> grads;
  EXPECT_TRUE(run(module, entry + ".backward", backArgs, grads, training));

  const double eps = 1e-6;
  const double rel = 1e-6;
  const double floor = 1e-8 * (1.0 + magnitude);
  int64_t compared = 0;
  size_t next = 0;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    if (!mlir::isa<gnn::DomainTensorType>(func.getArgument(i).getType()))
      continue;
    std::string name = argName(func, i);
    if (next >= grads.size()) {
      ADD_FAILURE() << "no gradient for " << name;
      return compared;
    }
    const Tensor &grad = grads[next++];
    const Tensor &arg = std::get<Tensor>(args[i]);
    EXPECT_EQ(grad.shape, arg.shape) << "gradient of " << name;
    EXPECT_EQ(grad.domain, gnn::Domain::dense) << "gradient of " << name;
    if (grad.shape != arg.shape)
      continue;
    for (double g : grad.data)
      EXPECT_TRUE(std::isfinite(g)) << "gradient of " << name;
    // Which elements: all of a small argument, a random sample otherwise.
    std::vector<int64_t> picks(arg.data.size());
    std::iota(picks.begin(), picks.end(), 0);
    if (static_cast<int64_t>(picks.size()) > maxSamples) {
      std::shuffle(picks.begin(), picks.end(), rng);
      picks.resize(maxSamples);
    }
    for (int64_t j : picks) {
      Args plus = args, minus = args;
      std::get<Tensor>(plus[i]).data[j] += eps;
      std::get<Tensor>(minus[i]).data[j] -= eps;
      std::vector<Tensor> yp, ym;
      EXPECT_TRUE(run(module, entry, plus, yp, training));
      EXPECT_TRUE(run(module, entry, minus, ym, training));
      if (yp.size() != 1 || ym.size() != 1)
        return compared;
      double fd = (dot(c, yp[0]) - dot(c, ym[0])) / (2 * eps);
      double ad = grad.data[j];
      double diff = std::abs(fd - ad);
      EXPECT_TRUE(diff <= rel * std::max(std::abs(fd), std::abs(ad)) + floor)
          << "d<c, F>/d " << name << "[" << j << "]: backward " << ad
          << ", finite difference " << fd << " (difference " << diff
          << ", floor " << floor << ")";
      ++compared;
    }
  }
  EXPECT_EQ(next, grads.size()) << "extra gradients";
  return compared;
}

std::optional<GK> graphKindOf(mlir::ModuleOp module, const std::string &entry) {
  auto func = module.lookupSymbol<mlir::func::FuncOp>(entry);
  for (mlir::Type t : func.getArgumentTypes())
    if (auto g = mlir::dyn_cast<gnn::GraphType>(t))
      return g.getKind();
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Every layer and model of the examples
//===----------------------------------------------------------------------===//

struct ExampleCase {
  std::string file;
  std::string entry;
  std::map<std::string, double> defines;
  ArgSpec spec;
  bool hasDropout = false;
};

void PrintTo(const ExampleCase &c, std::ostream *os) {
  *os << c.file << " " << c.entry;
}

std::vector<ExampleCase> exampleCases() {
  const ArgSpec plain;
  ArgSpec block;
  block.dynamic["x_src"] = Count::Src;
  ArgSpec gin;
  gin.dynamic["w"] = Count::Edges;
  // clang-format off
  return {
      {"appnp.gnn", "MLP", {{"in_dim", 4}, {"hidden", 3}, {"out_dim", 2}, {"drop", 0.5}}, plain, true},
      {"appnp.gnn", "APPNPProp", {{"dim", 3}, {"k", 3}}, plain},
      {"appnp.gnn", "APPNP", {{"in_dim", 4}, {"hidden", 3}, {"classes", 2}, {"k", 3}}, plain, true},
      {"gat.gnn", "GATConv", {{"in_dim", 4}, {"out_dim", 3}, {"heads", 2}, {"attn_drop", 0.5}}, plain, true},
      {"gat.gnn", "GATConvMean", {{"in_dim", 4}, {"out_dim", 3}, {"heads", 2}, {"attn_drop", 0.5}}, plain, true},
      {"gat.gnn", "GAT", {{"in_dim", 4}, {"hidden", 2}, {"heads", 2}, {"classes", 3}}, plain, true},
      {"gat_msgl.gnn", "GATConv", {{"in_dim", 4}, {"out_dim", 3}, {"heads", 2}, {"attn_drop", 0.5}}, plain, true},
      {"gat_msgl.gnn", "GAT", {{"in_dim", 4}, {"hidden", 2}, {"heads", 2}, {"classes", 3}}, plain, true},
      {"gatv2.gnn", "GATv2Conv", {{"in_dim", 4}, {"out_dim", 3}, {"heads", 2}, {"attn_drop", 0.5}}, plain, true},
      {"gatv2.gnn", "GATv2", {{"in_dim", 4}, {"hidden", 2}, {"heads", 2}, {"classes", 3}}, plain, true},
      {"gcn.gnn", "GCNConv", {{"in_dim", 4}, {"out_dim", 3}}, plain},
      {"gcn.gnn", "GCN", {{"in_dim", 4}, {"hidden", 3}, {"classes", 2}}, plain, true},
      {"gin.gnn", "GINConv", {{"in_dim", 4}, {"out_dim", 2}, {"mlp_dim", 3}, {"eps", 0.1}}, gin},
      {"gin.gnn", "GIN", {{"in_dim", 4}, {"hidden", 3}, {"classes", 2}, {"eps", 0.1}}, gin, true},
      {"out_gcn.gnn", "DirGCNConv", {{"in_dim", 4}, {"out_dim", 3}, {"alpha", 0.3}}, plain},
      {"out_gcn.gnn", "DirGCN", {{"in_dim", 4}, {"hidden", 3}, {"classes", 2}}, plain, true},
      {"readout.gnn", "BatchGCNConv", {{"in_dim", 4}, {"out_dim", 3}}, plain},
      {"readout.gnn", "GCNGraphClassifier", {{"in_dim", 4}, {"hidden", 3}, {"classes", 2}}, plain, true},
      {"rgcn.gnn", "RelConv", {{"in_dim", 4}, {"out_dim", 3}}, plain},
      {"rgcn.gnn", "RGCNConv", {{"in_dim", 4}, {"out_dim", 3}}, plain},
      {"rgcn.gnn", "RGCN", {{"in_dim", 4}, {"hidden", 3}, {"classes", 2}}, plain},
      {"sage_block.gnn", "SAGEBlockConv", {{"in_dim", 4}, {"out_dim", 3}}, block},
      {"sage_block.gnn", "SAGEBlockNet", {{"in_dim", 4}, {"hidden", 3}, {"classes", 2}}, block, true},
      {"sage_max.gnn", "SAGEPoolConv", {{"in_dim", 4}, {"out_dim", 3}, {"pool_dim", 5}}, plain},
      {"sage_max.gnn", "GraphSAGEPool", {{"in_dim", 4}, {"hidden", 3}, {"classes", 2}, {"pool", 5}}, plain, true},
      {"sage_mean.gnn", "SAGEConv", {{"in_dim", 4}, {"out_dim", 3}}, plain},
      {"sage_mean.gnn", "GraphSAGE", {{"in_dim", 4}, {"hidden", 3}, {"classes", 2}}, plain, true},
  };
  // clang-format on
}

std::string caseName(const ExampleCase &c) {
  std::string name = llvm::sys::path::stem(c.file).str() + "_" + c.entry;
  for (char &ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch)))
      ch = '_';
  return name;
}

class AutodiffExample : public ::testing::TestWithParam<ExampleCase> {};

/// Every function of the module has a backward function with the right
/// signature and attributes.
TEST_P(AutodiffExample, BackwardSignatures) {
  const ExampleCase &ec = GetParam();
  Compiled c;
  ASSERT_TRUE(compileExample(c, ec.file, ec.entry, ec.defines));
  int forwards = 0;
  for (auto func : c.module->getOps<mlir::func::FuncOp>()) {
    if (func->hasAttr("gnn.backward_of"))
      continue;
    ++forwards;
    SCOPED_TRACE(func.getName().str());
    auto backward = c.module->lookupSymbol<mlir::func::FuncOp>(
        (func.getName() + ".backward").str());
    ASSERT_TRUE(backward);
    auto of =
        backward->getAttrOfType<mlir::FlatSymbolRefAttr>("gnn.backward_of");
    ASSERT_TRUE(of);
    EXPECT_EQ(of.getValue(), func.getName());
    unsigned n = func.getNumArguments();
    ASSERT_EQ(backward.getNumArguments(), n + 1);
    for (unsigned i = 0; i < n; ++i)
      EXPECT_EQ(backward.getArgument(i).getType(),
                func.getArgument(i).getType());
    EXPECT_EQ(backward.getArgument(n).getType(), func.getResultTypes()[0]);
    unsigned r = 0;
    for (unsigned i = 0; i < n; ++i) {
      if (!mlir::isa<gnn::DomainTensorType>(func.getArgument(i).getType()))
        continue;
      ASSERT_LT(r, backward.getNumResults());
      EXPECT_EQ(backward.getResultTypes()[r], func.getArgument(i).getType());
      auto gradOf =
          backward.getResultAttrOfType<mlir::StringAttr>(r, "gnn.grad_of");
      ASSERT_TRUE(gradOf);
      EXPECT_EQ(gradOf.getValue().str(), argName(func, i));
      ++r;
    }
    EXPECT_EQ(r, backward.getNumResults());
    // A layer call became a call of the layer's backward.
    backward.walk([&](mlir::func::CallOp call) {
      EXPECT_TRUE(call.getCallee().ends_with(".backward") ||
                  c.module->lookupSymbol<mlir::func::FuncOp>(call.getCallee()))
          << call.getCallee().str();
    });
  }
  EXPECT_GE(forwards, 1);
}

TEST_P(AutodiffExample, MatchesFiniteDifferences) {
  const ExampleCase &ec = GetParam();
  Compiled c;
  ASSERT_TRUE(compileExample(c, ec.file, ec.entry, ec.defines));
  int64_t compared = 0;
  uint64_t seed = 1;
  for (const TestGraph &g : graphsOfKind(graphKindOf(*c.module, ec.entry))) {
    compared += checkGradients(*c.module, ec.entry, g, ec.spec, false, seed++);
    if (ec.hasDropout)
      compared += checkGradients(*c.module, ec.entry, g, ec.spec, true, seed++);
  }
  EXPECT_GT(compared, 0);
  std::cout << "[          ] " << ec.file << " " << ec.entry << ": " << compared
            << " gradient elements against finite differences\n";
}

/// Sub-layers are differentiated on their own too (a layer's backward is
/// what its callers call).
TEST_P(AutodiffExample, SubLayersMatchFiniteDifferences) {
  const ExampleCase &ec = GetParam();
  Compiled c;
  ASSERT_TRUE(compileExample(c, ec.file, ec.entry, ec.defines));
  for (auto func : c.module->getOps<mlir::func::FuncOp>()) {
    std::string name = func.getName().str();
    if (func->hasAttr("gnn.backward_of") || name == ec.entry)
      continue;
    std::vector<TestGraph> graphs = graphsOfKind(graphKindOf(*c.module, name));
    checkGradients(*c.module, name, graphs.front(), ec.spec, ec.hasDropout, 3);
  }
}

INSTANTIATE_TEST_SUITE_P(Examples, AutodiffExample,
                         ::testing::ValuesIn(exampleCases()),
                         [](const auto &info) { return caseName(info.param); });

/// The table lists every layer and model of every example.
TEST(AutodiffExampleSet, EveryDefinitionIsCovered) {
  std::set<std::pair<std::string, std::string>> covered;
  for (const ExampleCase &c : exampleCases())
    covered.insert({c.file, c.entry});
  std::error_code ec;
  llvm::SmallString<256> dir(kRoot);
  llvm::sys::path::append(dir, "dsl-examples");
  int files = 0;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec)) {
    if (llvm::sys::path::extension(it->path()) != ".gnn")
      continue;
    ++files;
    std::string file = llvm::sys::path::filename(it->path()).str();
    auto buffer = llvm::MemoryBuffer::getFile(it->path(), /*IsText=*/true);
    ASSERT_TRUE(bool(buffer)) << file;
    llvm::SourceMgr sourceMgr;
    unsigned id =
        sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
    std::string diagText;
    llvm::raw_string_ostream diagOS(diagText);
    DiagnosticEngine diags(sourceMgr, diagOS);
    FrontendResult frontend = runFrontend(id, diags);
    ASSERT_TRUE(frontend.success) << diagText;
    for (const auto &def : frontend.module->definitions)
      EXPECT_TRUE(covered.count({file, def->name.name}))
          << file << ": " << def->name.name << " is not tested";
  }
  EXPECT_EQ(files, 12);
}

/// Backward functions are ordinary unfused gnn IR: the fusion pipeline
/// fuses their gather-scatter chains, and the fused gradients are the
/// unfused ones.
TEST_P(AutodiffExample, FusedBackwardComputesTheSame) {
  const ExampleCase &ec = GetParam();
  Compiled c;
  ASSERT_TRUE(compileExample(c, ec.file, ec.entry, ec.defines));
  mlir::OwningOpRef<mlir::ModuleOp> fused = c.module->clone();
  ASSERT_TRUE(runPasses(
      c, *fused, [](mlir::PassManager &pm) { gnn::buildFusionPipeline(pm); }));
  std::string backward = ec.entry + ".backward";
  auto fusedBackward = fused->lookupSymbol<mlir::func::FuncOp>(backward);
  ASSERT_TRUE(fusedBackward);
  // Chains of the backward that end in a scatter fuse (edge tensors the
  // backward needs as such, like recomputed attention weights, stay: fusing
  // the backward properly is a later pass).
  auto unfusedBackward = c.module->lookupSymbol<mlir::func::FuncOp>(backward);
  if (countOps(unfusedBackward, "gnn.scatter") > 0) {
    EXPECT_GT(countOps(fusedBackward, "gnn.aggregate"), 0);
  }
  for (const TestGraph &g : graphsOfKind(graphKindOf(*c.module, ec.entry))) {
    SCOPED_TRACE(g.name);
    auto func = c.module->lookupSymbol<mlir::func::FuncOp>(ec.entry);
    Args args;
    ASSERT_TRUE(makeArgs(func, g, ec.spec, 4, args));
    std::vector<Tensor> y;
    ASSERT_TRUE(run(*c.module, ec.entry, args, y, ec.hasDropout));
    std::mt19937_64 rng(9);
    args.push_back(randomTensor(y[0].shape, rng));
    std::vector<Tensor> want, got;
    ASSERT_TRUE(run(*c.module, backward, args, want, ec.hasDropout));
    ASSERT_TRUE(run(*fused, backward, args, got, ec.hasDropout));
    ASSERT_EQ(want.size(), got.size());
    for (size_t k = 0; k < want.size(); ++k) {
      ASSERT_EQ(want[k].shape, got[k].shape);
      double scale = 0;
      for (double x : want[k].data)
        scale = std::max(scale, std::abs(x));
      for (size_t j = 0; j < want[k].data.size(); ++j)
        EXPECT_NEAR(got[k].data[j], want[k].data[j], 1e-10 * (1 + scale))
            << "gradient " << k << " element " << j;
    }
  }
}

//===----------------------------------------------------------------------===//
// Beyond the examples (the extra layers of FusionDifferentialTest.cpp)
//===----------------------------------------------------------------------===//

constexpr llvm::StringLiteral kExtras = R"(
layer BlockAttn(d: int = 3, heads: int = 2, attn_drop: float = 0.4):
    param a_src: f32[heads, d] = glorot
    param a_dst: f32[heads, d] = glorot

    def forward(g: Block, x_src: f32[N_src, heads, d],
                x_dst: f32[N_dst, heads, d]) -> f32[N_dst, heads, d]:
        g.set_src_attr({"h": x_src, "es": sum(x_src * a_src, -1, keepdims=True)})
        g.set_dst_attr({"ed": sum(x_dst * a_dst, -1, keepdims=True)})
        for v in g.dst_vertex:
            a = dropout(g.softmax([leaky_relu(u.es + v.ed, 0.2) for u in v.innbs]), attn_drop)
            v.o = g.sum(a * [u.h for u in v.innbs])
        return [v.o for v in g.dst_vertex]

layer OutAttn(d: int = 3, attn_drop: float = 0.4):
    def forward(g: Graph, s: f32[N, 1], x: f32[N, d]) -> f32[N, d]:
        g.set_vertex_attr({"s": s, "x": x})
        for v in g.src_vertex:
            a = dropout(g.softmax([w.s * v.s for w in v.outnbs]), attn_drop)
            v.o = g.sum(a * [w.x for w in v.outnbs])
        return [v.o for v in g.src_vertex]

layer OutAttnMSGL(d: int = 3, attn_drop: float = 0.4):
    def forward(g: Graph, s: f32[N, 1], x: f32[N, d]) -> f32[N, d]:
        g.set_vertex_attr({"s": s, "x": x})
        for v in g.src_vertex:
            edge = [exp(w.s * v.s) for w in v.outnbs]
            attn = dropout([c / g.sum(edge) for c in edge], attn_drop)
            v.o = g.sum(attn * [w.x for w in v.outnbs])
        return [v.o for v in g.src_vertex]

layer RowOps(d: int = 4):
    param W: f32[d, 6] = glorot
    param V: f32[3, 2] = glorot

    def forward(g: Graph, x: f32[N, d], w: f32[E, 2]) -> f32[N, 4]:
        g.set_vertex_attr({"h": x})
        g.set_edge_attr({"w": w})
        for v in g.dst_vertex:
            v.o = g.sum([(softmax(reshape(u.h @ W, [2, 3]), -1) @ V) * reshape(e.w, [2, 1]) for u, e in v.inedges])
            v.c = g.min([concat([tanh(u.h), abs(v.h - u.h) ** 2.0], 0) for u in v.innbs])
            v.q = g.avg([max(elu(u.h), axis=0, keepdims=True) + log_softmax(v.h, -1) for u in v.innbs])
        o = reshape([v.o for v in g.dst_vertex], [N, 4])
        c = sum([v.c for v in g.dst_vertex], -1, keepdims=True)
        q = mean([v.q for v in g.dst_vertex], -1, keepdims=True)
        return o + c - q

# Dense reductions over the vertex axis, feature softmaxes, graph counts,
# gelu, sigmoid and a readout with every reduction.
layer DenseOps(d: int = 3):
    param W: f32[d, d] = glorot

    def forward(g: BatchedGraph, x: f32[N, d]) -> f32[B, 4 * d]:
        h = gelu(x @ W) + sigmoid(x) * mean(x, 0) - max(x, 0, keepdims=True)
        p = softmax(h, 0) + log_softmax(h, -1) + sqrt(exp(x)) * min(x, 1, keepdims=True)
        return concat([g.sum_nodes(p), g.avg_nodes(h), g.max_nodes(p - h), g.avg_nodes(x @ (tanh(transpose(W) @ transpose(x)) @ x))], -1)
)";

class AutodiffExtra : public ::testing::TestWithParam<const char *> {};

TEST_P(AutodiffExtra, MatchesFiniteDifferences) {
  std::string entry = GetParam();
  Compiled c;
  ASSERT_TRUE(lowerSource(c, kExtras, "extras.gnn", entry, {}));
  ASSERT_TRUE(differentiate(c));
  ArgSpec spec;
  spec.dynamic["x_src"] = Count::Src;
  spec.dynamic["w"] = Count::Edges;
  uint64_t seed = 20;
  for (const TestGraph &g : graphsOfKind(graphKindOf(*c.module, entry))) {
    checkGradients(*c.module, entry, g, spec, false, seed++);
    checkGradients(*c.module, entry, g, spec, true, seed++);
  }
}

INSTANTIATE_TEST_SUITE_P(Layers, AutodiffExtra,
                         ::testing::Values("BlockAttn", "OutAttn",
                                           "OutAttnMSGL", "RowOps",
                                           "DenseOps"));

//===----------------------------------------------------------------------===//
// Each op's vector-Jacobian product, on hand-written IR
//===----------------------------------------------------------------------===//

struct OpCase {
  std::string name;
  std::string ir; ///< defines @f (and maybe more)
  ArgSpec spec;
  bool training = false;
  bool batched = false;
};

void PrintTo(const OpCase &c, std::ostream *os) { *os << c.name; }

/// `@f(%g, %x: dense [?, shape]) -> dense [?, shape]` around `body`, which
/// reads %g and %x and defines %r.
std::string vertexFn(const std::string &shape, const std::string &body,
                     const std::string &graph = "graph") {
  return "func.func @f(%g: !gnn.graph<" + graph +
         ">, %x: !gnn.tensor<dense, ?x" + shape +
         "xf32> {gnn.name = \"x\"}) -> !gnn.tensor<dense, ?x" + shape +
         "xf32> {\n" + body + "\n  return %r : !gnn.tensor<dense, ?x" + shape +
         "xf32>\n}\n";
}

std::string unaryIR(const std::string &fn, const std::string &attrs = "") {
  return "func.func @f(%x: !gnn.tensor<dense, ?x3xf32> {gnn.name = \"x\"}) -> "
         "!gnn.tensor<dense, ?x3xf32> {\n"
         "  %r = gnn.unary " +
         fn + " %x " + attrs +
         " : !gnn.tensor<dense, ?x3xf32>\n"
         "  return %r : !gnn.tensor<dense, ?x3xf32>\n}\n";
}

/// `@f(%a, %b) = binary fn(a, b)` on the given types, with a result type.
std::string binaryIR(const std::string &fn, const std::string &a,
                     const std::string &b, const std::string &r) {
  return "func.func @f(%a: !gnn.tensor<" + a +
         "> {gnn.name = \"a\"}, %b: "
         "!gnn.tensor<" +
         b + "> {gnn.name = \"b\"}) -> !gnn.tensor<" + r +
         "> {\n  %r = gnn.binary " + fn + " %a, %b : !gnn.tensor<" + a +
         ">, !gnn.tensor<" + b + "> -> !gnn.tensor<" + r +
         ">\n  return %r : !gnn.tensor<" + r + ">\n}\n";
}

/// Binary ops on rows: `a` gathered from sources ([?, 2, 3] rows 2x3),
/// `b` an edge attribute with rows 2x1, scattered back by destination.
std::string binaryEdgeIR(const std::string &fn) {
  return R"(func.func @f(%g: !gnn.graph<graph>, %a: !gnn.tensor<dense, ?x2x3xf32> {gnn.name = "a"}, %b: !gnn.tensor<dense, ?x2x1xf32> {gnn.name = "b"}) -> !gnn.tensor<dense, ?x2x3xf32> {
  %as = gnn.attach %g, %a : !gnn.graph<graph>, !gnn.tensor<dense, ?x2x3xf32> -> !gnn.tensor<src, 2x3xf32>
  %ae = gnn.gather %g, %as : !gnn.graph<graph>, !gnn.tensor<src, 2x3xf32> -> !gnn.tensor<edge, 2x3xf32>
  %be = gnn.attach %g, %b : !gnn.graph<graph>, !gnn.tensor<dense, ?x2x1xf32> -> !gnn.tensor<edge, 2x1xf32>
  %m = gnn.binary )" +
         fn +
         R"( %be, %ae : !gnn.tensor<edge, 2x1xf32>, !gnn.tensor<edge, 2x3xf32> -> !gnn.tensor<edge, 2x3xf32>
  %s = gnn.scatter sum %g, %m : !gnn.graph<graph>, !gnn.tensor<edge, 2x3xf32> -> !gnn.tensor<dst, 2x3xf32>
  %r = gnn.collect %g, %s : !gnn.graph<graph>, !gnn.tensor<dst, 2x3xf32> -> !gnn.tensor<dense, ?x2x3xf32>
  return %r : !gnn.tensor<dense, ?x2x3xf32>
}
)";
}

/// A vertex tensor (rows [3]) meeting a dense row [3].
std::string binaryVertexDenseIR(const std::string &fn) {
  return R"(func.func @f(%g: !gnn.graph<graph>, %a: !gnn.tensor<dense, ?x3xf32> {gnn.name = "a"}, %b: !gnn.tensor<dense, 3xf32> {gnn.name = "b"}) -> !gnn.tensor<dense, ?x3xf32> {
  %as = gnn.attach %g, %a : !gnn.graph<graph>, !gnn.tensor<dense, ?x3xf32> -> !gnn.tensor<dst, 3xf32>
  %m = gnn.binary )" +
         fn +
         R"( %as, %b : !gnn.tensor<dst, 3xf32>, !gnn.tensor<dense, 3xf32> -> !gnn.tensor<dst, 3xf32>
  %r = gnn.collect %g, %m : !gnn.graph<graph>, !gnn.tensor<dst, 3xf32> -> !gnn.tensor<dense, ?x3xf32>
  return %r : !gnn.tensor<dense, ?x3xf32>
}
)";
}

std::string reduceIR(const std::string &fn, const std::string &attrs,
                     const std::string &out) {
  return "func.func @f(%x: !gnn.tensor<dense, ?x3x4xf32> {gnn.name = \"x\"}) "
         "-> !gnn.tensor<" +
         out + "> {\n  %r = gnn.reduce " + fn + " %x " + attrs +
         " : !gnn.tensor<dense, ?x3x4xf32> -> !gnn.tensor<" + out +
         ">\n  return %r : !gnn.tensor<" + out + ">\n}\n";
}

/// A reduction of the rows of a destination tensor.
std::string reduceRowsIR(const std::string &fn, const std::string &attrs,
                         const std::string &rows) {
  return R"(func.func @f(%g: !gnn.graph<graph>, %x: !gnn.tensor<dense, ?x3x4xf32> {gnn.name = "x"}) -> !gnn.tensor<dense, ?x)" +
         rows + R"(xf32> {
  %d = gnn.attach %g, %x : !gnn.graph<graph>, !gnn.tensor<dense, ?x3x4xf32> -> !gnn.tensor<dst, 3x4xf32>
  %m = gnn.reduce )" +
         fn + " %d " + attrs +
         R"( : !gnn.tensor<dst, 3x4xf32> -> !gnn.tensor<dst, )" + rows +
         R"(xf32>
  %r = gnn.collect %g, %m : !gnn.graph<graph>, !gnn.tensor<dst, )" +
         rows + R"(xf32> -> !gnn.tensor<dense, ?x)" + rows + R"(xf32>
  return %r : !gnn.tensor<dense, ?x)" +
         rows + R"(xf32>
}
)";
}

std::vector<OpCase> opCases() {
  std::vector<OpCase> out;
  ArgSpec edgeW;
  edgeW.dynamic["w"] = Count::Edges;
  edgeW.dynamic["b"] = Count::Edges;

  // Domains and message passing.
  const char *gatherScatter = R"(
  %a = gnn.attach %g, %x : !gnn.graph<graph>, !gnn.tensor<dense, ?x3xf32> -> !gnn.tensor<{0}, 3xf32>
  %e = gnn.gather %g, %a : !gnn.graph<graph>, !gnn.tensor<{0}, 3xf32> -> !gnn.tensor<edge, 3xf32>
  %t = gnn.unary tanh %e : !gnn.tensor<edge, 3xf32>
  %s = gnn.scatter {2} %g, %t : !gnn.graph<graph>, !gnn.tensor<edge, 3xf32> -> !gnn.tensor<{1}, 3xf32>
  %r = gnn.collect %g, %s : !gnn.graph<graph>, !gnn.tensor<{1}, 3xf32> -> !gnn.tensor<dense, ?x3xf32>)";
  for (std::string fn : {"sum", "mean", "max", "min"})
    for (auto [from, to] : {std::pair<std::string, std::string>{"src", "dst"},
                            {"dst", "src"},
                            {"src", "src"},
                            {"dst", "dst"}}) {
      std::string body = gatherScatter;
      for (auto [key, value] :
           {std::pair<std::string, std::string>{"{0}", from},
            {"{1}", to},
            {"{2}", fn}})
        for (size_t at; (at = body.find(key)) != std::string::npos;)
          body.replace(at, key.size(), value);
      out.push_back({"gather_" + from + "_scatter_" + fn + "_" + to,
                     vertexFn("3", body),
                     {}});
    }
  // Max and min of edge values (distinct on every edge, multi-edges too).
  for (std::string fn : {"max", "min"})
    for (std::string by : {"dst", "src"})
      out.push_back(
          {"edge_scatter_" + fn + "_" + by,
           R"(func.func @f(%g: !gnn.graph<graph>, %w: !gnn.tensor<dense, ?x2xf32> {gnn.name = "w"}) -> !gnn.tensor<dense, ?x2xf32> {
  %e = gnn.attach %g, %w : !gnn.graph<graph>, !gnn.tensor<dense, ?x2xf32> -> !gnn.tensor<edge, 2xf32>
  %s = gnn.scatter )" +
               fn +
               " %g, %e : !gnn.graph<graph>, !gnn.tensor<edge, 2xf32> -> "
               "!gnn.tensor<" +
               by + R"(, 2xf32>
  %r = gnn.collect %g, %s : !gnn.graph<graph>, !gnn.tensor<)" +
               by + R"(, 2xf32> -> !gnn.tensor<dense, ?x2xf32>
  return %r : !gnn.tensor<dense, ?x2xf32>
}
)",
           edgeW});
  for (std::string by : {"dst", "src"}) {
    std::string other = by == "dst" ? "src" : "dst";
    out.push_back(
        {"edge_softmax_by_" + by,
         R"(func.func @f(%g: !gnn.graph<graph>, %w: !gnn.tensor<dense, ?x2x1xf32> {gnn.name = "w"}, %x: !gnn.tensor<dense, ?x2x3xf32> {gnn.name = "x"}) -> !gnn.tensor<dense, ?x2x3xf32> {
  %e = gnn.attach %g, %w : !gnn.graph<graph>, !gnn.tensor<dense, ?x2x1xf32> -> !gnn.tensor<edge, 2x1xf32>
  %a = gnn.edge_softmax %g, %e {by = #gnn<domain )" +
             by +
             R"(>} : !gnn.graph<graph>, !gnn.tensor<edge, 2x1xf32> -> !gnn.tensor<edge, 2x1xf32>
  %xs = gnn.attach %g, %x : !gnn.graph<graph>, !gnn.tensor<dense, ?x2x3xf32> -> !gnn.tensor<)" +
             other + R"(, 2x3xf32>
  %xe = gnn.gather %g, %xs : !gnn.graph<graph>, !gnn.tensor<)" +
             other + R"(, 2x3xf32> -> !gnn.tensor<edge, 2x3xf32>
  %m = gnn.binary mul %a, %xe : !gnn.tensor<edge, 2x1xf32>, !gnn.tensor<edge, 2x3xf32> -> !gnn.tensor<edge, 2x3xf32>
  %s = gnn.scatter sum %g, %m : !gnn.graph<graph>, !gnn.tensor<edge, 2x3xf32> -> !gnn.tensor<)" +
             by + R"(, 2x3xf32>
  %r = gnn.collect %g, %s : !gnn.graph<graph>, !gnn.tensor<)" +
             by + R"(, 2x3xf32> -> !gnn.tensor<dense, ?x2x3xf32>
  return %r : !gnn.tensor<dense, ?x2x3xf32>
}
)",
         edgeW});
  }
  out.push_back(
      {"splat_dst_and_edge",
       R"(func.func @f(%g: !gnn.graph<graph>, %b: !gnn.tensor<dense, 3xf32> {gnn.name = "b"}, %s: !gnn.tensor<dense, f32> {gnn.name = "s"}) -> !gnn.tensor<dense, ?x3xf32> {
  %d = gnn.splat %g, %b : !gnn.graph<graph>, !gnn.tensor<dense, 3xf32> -> !gnn.tensor<dst, 3xf32>
  %e = gnn.splat %g, %s : !gnn.graph<graph>, !gnn.tensor<dense, f32> -> !gnn.tensor<edge, f32>
  %t = gnn.binary mul %e, %e : !gnn.tensor<edge, f32>, !gnn.tensor<edge, f32> -> !gnn.tensor<edge, f32>
  %ts = gnn.scatter sum %g, %t : !gnn.graph<graph>, !gnn.tensor<edge, f32> -> !gnn.tensor<dst, f32>
  %m = gnn.binary mul %d, %ts : !gnn.tensor<dst, 3xf32>, !gnn.tensor<dst, f32> -> !gnn.tensor<dst, 3xf32>
  %r = gnn.collect %g, %m : !gnn.graph<graph>, !gnn.tensor<dst, 3xf32> -> !gnn.tensor<dense, ?x3xf32>
  return %r : !gnn.tensor<dense, ?x3xf32>
}
)",
       {}});
  for (std::string fn : {"sum", "mean", "max", "min"}) {
    OpCase c{
        "readout_" + fn,
        R"(func.func @f(%g: !gnn.graph<batched>, %x: !gnn.tensor<dense, ?x3xf32> {gnn.name = "x"}) -> !gnn.tensor<dense, ?x3xf32> {
  %r = gnn.readout )" +
            fn +
            R"( %g, %x : !gnn.graph<batched>, !gnn.tensor<dense, ?x3xf32> -> !gnn.tensor<dense, ?x3xf32>
  return %r : !gnn.tensor<dense, ?x3xf32>
}
)",
        {}};
    c.batched = true;
    out.push_back(c);
  }
  {
    OpCase c{
        "broadcast_graphs_and_graph_sizes",
        R"(func.func @f(%g: !gnn.graph<batched>, %y: !gnn.tensor<dense, ?x3xf32> {gnn.name = "y"}) -> !gnn.tensor<dense, ?x3xf32> {
  %n = gnn.graph_sizes %g : !gnn.graph<batched> -> !gnn.tensor<dense, ?xf32>
  %n2 = gnn.reshape %n : !gnn.tensor<dense, ?xf32> -> !gnn.tensor<dense, ?x1xf32>
  %s = gnn.binary mul %y, %n2 : !gnn.tensor<dense, ?x3xf32>, !gnn.tensor<dense, ?x1xf32> -> !gnn.tensor<dense, ?x3xf32>
  %b = gnn.broadcast_graphs %g, %s : !gnn.graph<batched>, !gnn.tensor<dense, ?x3xf32> -> !gnn.tensor<dense, ?x3xf32>
  %r = gnn.readout max %g, %b : !gnn.graph<batched>, !gnn.tensor<dense, ?x3xf32> -> !gnn.tensor<dense, ?x3xf32>
  return %r : !gnn.tensor<dense, ?x3xf32>
}
)",
        {}};
    c.batched = true;
    c.spec.dynamic["y"] = Count::Graphs;
    out.push_back(c);
  }

  // Elementwise maths.
  for (std::string fn : {"neg", "exp", "log", "sqrt", "rsqrt", "abs", "relu",
                         "sigmoid", "tanh", "gelu", "erf"}) {
    OpCase c{"unary_" + fn, unaryIR(fn), {}};
    if (fn == "log" || fn == "sqrt" || fn == "rsqrt")
      c.spec.positive.insert("x");
    out.push_back(c);
  }
  out.push_back({"unary_elu", unaryIR("elu", "{alpha = 1.5 : f64}"), {}});
  out.push_back(
      {"unary_leaky_relu", unaryIR("leaky_relu", "{alpha = 0.2 : f64}"), {}});
  for (std::string fn : {"add", "sub", "mul", "div", "max", "min", "pow"}) {
    ArgSpec positive;
    positive.positive = {"a", "b"};
    ArgSpec spec = fn == "pow" || fn == "div" ? positive : ArgSpec{};
    out.push_back(
        {"binary_" + fn + "_dense_broadcast",
         binaryIR(fn, "dense, ?x3xf32", "dense, 3xf32", "dense, ?x3xf32"),
         spec});
    out.push_back(
        {"binary_" + fn + "_dense_both_ways",
         binaryIR(fn, "dense, 4x1xf32", "dense, 1x3xf32", "dense, 4x3xf32"),
         spec});
    out.push_back(
        {"binary_" + fn + "_scalar_left",
         binaryIR(fn, "dense, f32", "dense, ?x2xf32", "dense, ?x2xf32"), spec});
    ArgSpec edge = spec;
    edge.dynamic["b"] = Count::Edges;
    out.push_back({"binary_" + fn + "_edge_rows", binaryEdgeIR(fn), edge});
    out.push_back(
        {"binary_" + fn + "_vertex_dense", binaryVertexDenseIR(fn), spec});
  }
  out.push_back(
      {"constant_and_degrees",
       R"(func.func @f(%g: !gnn.graph<graph>, %x: !gnn.tensor<dense, ?x3xf32> {gnn.name = "x"}) -> !gnn.tensor<dense, ?x3xf32> {
  %d = gnn.in_degree %g : !gnn.graph<graph> -> !gnn.tensor<dense, ?xf32>
  %o = gnn.out_degree %g : !gnn.graph<graph> -> !gnn.tensor<dense, ?xf32>
  %n = gnn.num_edges %g : !gnn.graph<graph> -> !gnn.tensor<dense, f32>
  %v = gnn.num_vertices %g : !gnn.graph<graph> -> !gnn.tensor<dense, f32>
  %c = gnn.constant 2.5 : !gnn.tensor<dense, f32>
  %do = gnn.binary sub %d, %o : !gnn.tensor<dense, ?xf32>, !gnn.tensor<dense, ?xf32> -> !gnn.tensor<dense, ?xf32>
  %d2 = gnn.reshape %do : !gnn.tensor<dense, ?xf32> -> !gnn.tensor<dense, ?x1xf32>
  %nv = gnn.binary div %n, %v : !gnn.tensor<dense, f32>, !gnn.tensor<dense, f32> -> !gnn.tensor<dense, f32>
  %k = gnn.binary add %nv, %c : !gnn.tensor<dense, f32>, !gnn.tensor<dense, f32> -> !gnn.tensor<dense, f32>
  %a = gnn.binary mul %x, %d2 : !gnn.tensor<dense, ?x3xf32>, !gnn.tensor<dense, ?x1xf32> -> !gnn.tensor<dense, ?x3xf32>
  %r = gnn.binary mul %a, %k : !gnn.tensor<dense, ?x3xf32>, !gnn.tensor<dense, f32> -> !gnn.tensor<dense, ?x3xf32>
  return %r : !gnn.tensor<dense, ?x3xf32>
}
)",
       {}});

  // Dense operations.
  out.push_back(
      {"matmul_dense",
       R"(func.func @f(%x: !gnn.tensor<dense, ?x4xf32> {gnn.name = "x"}, %w: !gnn.tensor<dense, 4x3xf32> {gnn.param = "W"}) -> !gnn.tensor<dense, ?x3xf32> {
  %r = gnn.matmul %x, %w : !gnn.tensor<dense, ?x4xf32>, !gnn.tensor<dense, 4x3xf32> -> !gnn.tensor<dense, ?x3xf32>
  return %r : !gnn.tensor<dense, ?x3xf32>
}
)",
       {}});
  out.push_back(
      {"matmul_vector_and_batch",
       R"(func.func @f(%v: !gnn.tensor<dense, 4xf32> {gnn.name = "v"}, %x: !gnn.tensor<dense, 2x?x4xf32> {gnn.name = "x"}, %w: !gnn.tensor<dense, 4x3xf32> {gnn.param = "W"}) -> !gnn.tensor<dense, 2x?x3xf32> {
  %a = gnn.matmul %v, %w : !gnn.tensor<dense, 4xf32>, !gnn.tensor<dense, 4x3xf32> -> !gnn.tensor<dense, 3xf32>
  %b = gnn.matmul %x, %w : !gnn.tensor<dense, 2x?x4xf32>, !gnn.tensor<dense, 4x3xf32> -> !gnn.tensor<dense, 2x?x3xf32>
  %r = gnn.binary mul %b, %a : !gnn.tensor<dense, 2x?x3xf32>, !gnn.tensor<dense, 3xf32> -> !gnn.tensor<dense, 2x?x3xf32>
  return %r : !gnn.tensor<dense, 2x?x3xf32>
}
)",
       {}});
  out.push_back(
      {"matmul_edge_rows",
       R"(func.func @f(%g: !gnn.graph<graph>, %x: !gnn.tensor<dense, ?x2x4xf32> {gnn.name = "x"}, %w: !gnn.tensor<dense, 4x3xf32> {gnn.param = "W"}) -> !gnn.tensor<dense, ?x2x3xf32> {
  %xs = gnn.attach %g, %x : !gnn.graph<graph>, !gnn.tensor<dense, ?x2x4xf32> -> !gnn.tensor<src, 2x4xf32>
  %xe = gnn.gather %g, %xs : !gnn.graph<graph>, !gnn.tensor<src, 2x4xf32> -> !gnn.tensor<edge, 2x4xf32>
  %m = gnn.matmul %xe, %w : !gnn.tensor<edge, 2x4xf32>, !gnn.tensor<dense, 4x3xf32> -> !gnn.tensor<edge, 2x3xf32>
  %t = gnn.unary tanh %m : !gnn.tensor<edge, 2x3xf32>
  %s = gnn.scatter sum %g, %t : !gnn.graph<graph>, !gnn.tensor<edge, 2x3xf32> -> !gnn.tensor<dst, 2x3xf32>
  %r = gnn.collect %g, %s : !gnn.graph<graph>, !gnn.tensor<dst, 2x3xf32> -> !gnn.tensor<dense, ?x2x3xf32>
  return %r : !gnn.tensor<dense, ?x2x3xf32>
}
)",
       {}});
  out.push_back(
      {"reshape_and_transpose",
       R"(func.func @f(%x: !gnn.tensor<dense, ?x6xf32> {gnn.name = "x"}, %w: !gnn.tensor<dense, 3x2xf32> {gnn.param = "W"}) -> !gnn.tensor<dense, ?x2x3xf32> {
  %a = gnn.reshape %x : !gnn.tensor<dense, ?x6xf32> -> !gnn.tensor<dense, ?x2x3xf32>
  %t = gnn.transpose %w : !gnn.tensor<dense, 3x2xf32> -> !gnn.tensor<dense, 2x3xf32>
  %r = gnn.binary mul %a, %t : !gnn.tensor<dense, ?x2x3xf32>, !gnn.tensor<dense, 2x3xf32> -> !gnn.tensor<dense, ?x2x3xf32>
  return %r : !gnn.tensor<dense, ?x2x3xf32>
}
)",
       {}});
  for (std::string fn : {"sum", "mean", "max", "min"}) {
    out.push_back(
        {"reduce_" + fn + "_axis_keepdims",
         reduceIR(fn, "{axis = 2 : i64, keepdims}", "dense, ?x3x1xf32"),
         {}});
    out.push_back({"reduce_" + fn + "_axis",
                   reduceIR(fn, "{axis = 1 : i64}", "dense, ?x4xf32"),
                   {}});
    out.push_back({"reduce_" + fn + "_vertex_axis",
                   reduceIR(fn, "{axis = 0 : i64}", "dense, 3x4xf32"),
                   {}});
    out.push_back(
        {"reduce_" + fn + "_all", reduceIR(fn, "", "dense, f32"), {}});
    out.push_back({"reduce_" + fn + "_all_keepdims",
                   reduceIR(fn, "{keepdims}", "dense, 1x1x1xf32"),
                   {}});
    out.push_back({"reduce_" + fn + "_rows_axis",
                   reduceRowsIR(fn, "{axis = 0 : i64}", "4"),
                   {}});
    out.push_back({"reduce_" + fn + "_rows_all",
                   reduceRowsIR(fn, "{keepdims}", "1x1"),
                   {}});
  }
  for (std::string log : {"", ", log"})
    for (std::string axis : {"0", "1"})
      out.push_back(
          {std::string(log.empty() ? "softmax" : "log_softmax") + "_axis" +
               axis,
           "func.func @f(%x: !gnn.tensor<dense, ?x4xf32> {gnn.name = \"x\"}) "
           "-> "
           "!gnn.tensor<dense, ?x4xf32> {\n  %r = gnn.softmax %x {axis = " +
               axis + " : i64" + log +
               "} : !gnn.tensor<dense, ?x4xf32>\n  return %r : "
               "!gnn.tensor<dense, ?x4xf32>\n}\n",
           {}});
  out.push_back(
      {"softmax_edge_rows",
       R"(func.func @f(%g: !gnn.graph<graph>, %w: !gnn.tensor<dense, ?x2x3xf32> {gnn.name = "w"}) -> !gnn.tensor<dense, ?x2x3xf32> {
  %e = gnn.attach %g, %w : !gnn.graph<graph>, !gnn.tensor<dense, ?x2x3xf32> -> !gnn.tensor<edge, 2x3xf32>
  %p = gnn.softmax %e {axis = 1 : i64} : !gnn.tensor<edge, 2x3xf32>
  %q = gnn.softmax %e {axis = 0 : i64, log} : !gnn.tensor<edge, 2x3xf32>
  %m = gnn.binary mul %p, %q : !gnn.tensor<edge, 2x3xf32>, !gnn.tensor<edge, 2x3xf32> -> !gnn.tensor<edge, 2x3xf32>
  %s = gnn.scatter sum %g, %m : !gnn.graph<graph>, !gnn.tensor<edge, 2x3xf32> -> !gnn.tensor<src, 2x3xf32>
  %r = gnn.collect %g, %s : !gnn.graph<graph>, !gnn.tensor<src, 2x3xf32> -> !gnn.tensor<dense, ?x2x3xf32>
  return %r : !gnn.tensor<dense, ?x2x3xf32>
}
)",
       edgeW});
  out.push_back(
      {"concat_dense_and_rows",
       R"(func.func @f(%g: !gnn.graph<graph>, %a: !gnn.tensor<dense, ?x2xf32> {gnn.name = "a"}, %b: !gnn.tensor<dense, ?x3xf32> {gnn.name = "b"}, %c: !gnn.tensor<dense, 1xf32> {gnn.name = "c"}) -> !gnn.tensor<dense, ?x6xf32> {
  %ab = gnn.concat %a, %b {axis = 1 : i64} : !gnn.tensor<dense, ?x2xf32>, !gnn.tensor<dense, ?x3xf32> -> !gnn.tensor<dense, ?x5xf32>
  %d = gnn.attach %g, %ab : !gnn.graph<graph>, !gnn.tensor<dense, ?x5xf32> -> !gnn.tensor<dst, 5xf32>
  %cs = gnn.splat %g, %c : !gnn.graph<graph>, !gnn.tensor<dense, 1xf32> -> !gnn.tensor<dst, 1xf32>
  %e = gnn.concat %cs, %d {axis = 0 : i64} : !gnn.tensor<dst, 1xf32>, !gnn.tensor<dst, 5xf32> -> !gnn.tensor<dst, 6xf32>
  %t = gnn.unary tanh %e : !gnn.tensor<dst, 6xf32>
  %r = gnn.collect %g, %t : !gnn.graph<graph>, !gnn.tensor<dst, 6xf32> -> !gnn.tensor<dense, ?x6xf32>
  return %r : !gnn.tensor<dense, ?x6xf32>
}
)",
       {}});
  {
    OpCase c{
        "dropout_dense_and_edge",
        R"(func.func @f(%g: !gnn.graph<graph>, %x: !gnn.tensor<dense, ?x3xf32> {gnn.name = "x"}) -> !gnn.tensor<dense, ?x3xf32> {
  %d = gnn.dropout %x {p = 0.5 : f64, seed = 3 : i64} : !gnn.tensor<dense, ?x3xf32>
  %a = gnn.attach %g, %d : !gnn.graph<graph>, !gnn.tensor<dense, ?x3xf32> -> !gnn.tensor<src, 3xf32>
  %e = gnn.gather %g, %a : !gnn.graph<graph>, !gnn.tensor<src, 3xf32> -> !gnn.tensor<edge, 3xf32>
  %e2 = gnn.dropout %e {p = 0.3 : f64, seed = 4 : i64} : !gnn.tensor<edge, 3xf32>
  %s = gnn.scatter sum %g, %e2 : !gnn.graph<graph>, !gnn.tensor<edge, 3xf32> -> !gnn.tensor<dst, 3xf32>
  %c = gnn.collect %g, %s : !gnn.graph<graph>, !gnn.tensor<dst, 3xf32> -> !gnn.tensor<dense, ?x3xf32>
  %r = gnn.binary mul %c, %x : !gnn.tensor<dense, ?x3xf32>, !gnn.tensor<dense, ?x3xf32> -> !gnn.tensor<dense, ?x3xf32>
  return %r : !gnn.tensor<dense, ?x3xf32>
}
)",
        {}};
    c.training = true;
    out.push_back(c);
  }
  out.push_back(
      {"call_twice_accumulates",
       R"(func.func @inner(%g: !gnn.graph<graph>, %x: !gnn.tensor<dense, ?x3xf32> {gnn.name = "x"}, %w: !gnn.tensor<dense, 3x3xf32> {gnn.param = "W"}) -> !gnn.tensor<dense, ?x3xf32> {
  %h = gnn.matmul %x, %w : !gnn.tensor<dense, ?x3xf32>, !gnn.tensor<dense, 3x3xf32> -> !gnn.tensor<dense, ?x3xf32>
  %a = gnn.attach %g, %h : !gnn.graph<graph>, !gnn.tensor<dense, ?x3xf32> -> !gnn.tensor<src, 3xf32>
  %e = gnn.gather %g, %a : !gnn.graph<graph>, !gnn.tensor<src, 3xf32> -> !gnn.tensor<edge, 3xf32>
  %s = gnn.scatter mean %g, %e : !gnn.graph<graph>, !gnn.tensor<edge, 3xf32> -> !gnn.tensor<dst, 3xf32>
  %r = gnn.collect %g, %s : !gnn.graph<graph>, !gnn.tensor<dst, 3xf32> -> !gnn.tensor<dense, ?x3xf32>
  return %r : !gnn.tensor<dense, ?x3xf32>
}
func.func @f(%g: !gnn.graph<graph>, %x: !gnn.tensor<dense, ?x3xf32> {gnn.name = "x"}, %w: !gnn.tensor<dense, 3x3xf32> {gnn.param = "W"}, %unused: !gnn.tensor<dense, 2xf32> {gnn.param = "unused"}) -> !gnn.tensor<dense, ?x3xf32> {
  %a = call @inner(%g, %x, %w) : (!gnn.graph<graph>, !gnn.tensor<dense, ?x3xf32>, !gnn.tensor<dense, 3x3xf32>) -> !gnn.tensor<dense, ?x3xf32>
  %t = gnn.unary tanh %a : !gnn.tensor<dense, ?x3xf32>
  %b = call @inner(%g, %t, %w) : (!gnn.graph<graph>, !gnn.tensor<dense, ?x3xf32>, !gnn.tensor<dense, 3x3xf32>) -> !gnn.tensor<dense, ?x3xf32>
  %r = gnn.binary mul %a, %b : !gnn.tensor<dense, ?x3xf32>, !gnn.tensor<dense, ?x3xf32> -> !gnn.tensor<dense, ?x3xf32>
  return %r : !gnn.tensor<dense, ?x3xf32>
}
)",
       {}});
  out.push_back(
      {"broadcast_like",
       R"(func.func @f(%g: !gnn.graph<graph>, %x: !gnn.tensor<dense, ?x2x1xf32> {gnn.name = "x"}, %b: !gnn.tensor<dense, 1xf32> {gnn.name = "b"}, %c: !gnn.tensor<dense, 3xf32> {gnn.name = "c"}) -> !gnn.tensor<dense, ?x2x3xf32> {
  %d = gnn.attach %g, %x : !gnn.graph<graph>, !gnn.tensor<dense, ?x2x1xf32> -> !gnn.tensor<dst, 2x1xf32>
  %bb = gnn.broadcast_like %b, %d : !gnn.tensor<dense, 1xf32>, !gnn.tensor<dst, 2x1xf32>
  %e = gnn.gather %g, %d : !gnn.graph<graph>, !gnn.tensor<dst, 2x1xf32> -> !gnn.tensor<edge, 2x1xf32>
  %s = gnn.scatter sum %g, %e : !gnn.graph<graph>, !gnn.tensor<edge, 2x1xf32> -> !gnn.tensor<dst, 2x1xf32>
  %big = gnn.binary mul %s, %bb : !gnn.tensor<dst, 2x1xf32>, !gnn.tensor<dst, 2x1xf32> -> !gnn.tensor<dst, 2x1xf32>
  %cs = gnn.splat %g, %c : !gnn.graph<graph>, !gnn.tensor<dense, 3xf32> -> !gnn.tensor<dst, 3xf32>
  %r0 = gnn.binary mul %big, %cs : !gnn.tensor<dst, 2x1xf32>, !gnn.tensor<dst, 3xf32> -> !gnn.tensor<dst, 2x3xf32>
  %r1 = gnn.collect %g, %r0 : !gnn.graph<graph>, !gnn.tensor<dst, 2x3xf32> -> !gnn.tensor<dense, ?x2x3xf32>
  %cd = gnn.broadcast_like %c, %r1 : !gnn.tensor<dense, 3xf32>, !gnn.tensor<dense, ?x2x3xf32>
  %r = gnn.binary mul %r1, %cd : !gnn.tensor<dense, ?x2x3xf32>, !gnn.tensor<dense, ?x2x3xf32> -> !gnn.tensor<dense, ?x2x3xf32>
  return %r : !gnn.tensor<dense, ?x2x3xf32>
}
)",
       {}});
  return out;
}

class AutodiffOp : public ::testing::TestWithParam<OpCase> {};

TEST_P(AutodiffOp, MatchesFiniteDifferences) {
  const OpCase &oc = GetParam();
  Compiled c;
  ASSERT_TRUE(parseIR(c, oc.ir));
  ASSERT_TRUE(differentiate(c));
  std::vector<TestGraph> graphs;
  if (oc.batched)
    graphs = {tinyBatch()};
  else
    graphs = {tinyGraph(), homogeneousGraphs().front()};
  int64_t compared = 0;
  uint64_t seed = 100;
  for (const TestGraph &g : graphs)
    compared += checkGradients(*c.module, "f", g, oc.spec, oc.training, seed++,
                               /*maxSamples=*/40);
  EXPECT_GT(compared, 0);
}

INSTANTIATE_TEST_SUITE_P(Ops, AutodiffOp, ::testing::ValuesIn(opCases()),
                         [](const auto &info) { return info.param.name; });

//===----------------------------------------------------------------------===//
// The ops the derivatives use, in the interpreter
//===----------------------------------------------------------------------===//

/// Runs @f of `ir` on `args` and returns its results.
std::vector<Tensor> runIR(llvm::StringRef ir, const Args &args,
                          bool training = false) {
  Compiled c;
  EXPECT_TRUE(parseIR(c, ir));
  if (!c.module)
    return {};
  std::vector<Tensor> out;
  EXPECT_TRUE(run(*c.module, "f", args, out, training));
  return out;
}

Tensor dense(std::vector<int64_t> shape, std::vector<double> data) {
  return Tensor::dense(std::move(shape), std::move(data));
}

interp::GraphValue graphValue(GraphPtr g, GK kind = GK::graph) {
  TestGraph t = named("g", kind, std::move(g));
  return t.value();
}

TEST(AutodiffInterpreter, ScatterSelectKeepsTheFirstExtremeEdge) {
  // In-edges of 1 in CSR order: e0 (from 0), e1 (from 2), e2 (from 3);
  // e3 is the only in-edge of 0; vertex 2 has none. Out-edges of 2: e1, e4.
  GraphPtr g = makeGraph({{0, 1}, {2, 1}, {3, 1}, {1, 0}, {2, 3}}, 4, 4);
  const char *ir = R"(
func.func @f(%g: !gnn.graph<graph>, %w: !gnn.tensor<dense, ?x2xf32>) -> (!gnn.tensor<dense, ?x2xf32>, !gnn.tensor<dense, ?x2xf32>, !gnn.tensor<dense, ?x2xf32>) {
  %e = gnn.attach %g, %w : !gnn.graph<graph>, !gnn.tensor<dense, ?x2xf32> -> !gnn.tensor<edge, 2xf32>
  %a = gnn.scatter_select max %g, %e {by = #gnn<domain dst>} : !gnn.graph<graph>, !gnn.tensor<edge, 2xf32> -> !gnn.tensor<edge, 2xf32>
  %b = gnn.scatter_select min %g, %e {by = #gnn<domain dst>} : !gnn.graph<graph>, !gnn.tensor<edge, 2xf32> -> !gnn.tensor<edge, 2xf32>
  %c = gnn.scatter_select max %g, %e {by = #gnn<domain src>} : !gnn.graph<graph>, !gnn.tensor<edge, 2xf32> -> !gnn.tensor<edge, 2xf32>
  %ra = gnn.collect %g, %a : !gnn.graph<graph>, !gnn.tensor<edge, 2xf32> -> !gnn.tensor<dense, ?x2xf32>
  %rb = gnn.collect %g, %b : !gnn.graph<graph>, !gnn.tensor<edge, 2xf32> -> !gnn.tensor<dense, ?x2xf32>
  %rc = gnn.collect %g, %c : !gnn.graph<graph>, !gnn.tensor<edge, 2xf32> -> !gnn.tensor<dense, ?x2xf32>
  return %ra, %rb, %rc : !gnn.tensor<dense, ?x2xf32>, !gnn.tensor<dense, ?x2xf32>, !gnn.tensor<dense, ?x2xf32>
}
)";
  // Column 0: into vertex 1, 5 twice (e1, e2) is the max, 2 (e0) the min.
  // Column 1: all three into vertex 1 tie, e0 comes first. e3 and e4 are
  // alone in their groups.
  std::vector<Tensor> out =
      runIR(ir, {graphValue(g), dense({5, 2}, {2, 1, 5, 1, 5, 1, 9, 9, 5, 0})});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].data, (std::vector<double>{0, 1, 1, 0, 0, 0, 1, 1, 1, 1}));
  EXPECT_EQ(out[1].data, (std::vector<double>{1, 1, 0, 0, 0, 0, 1, 1, 1, 1}));
  // By source: vertex 2's out-edges e1 and e4 tie in column 0 (5 and 5):
  // e1 comes first in CSC order; column 1: 1 > 0 at e1. The other sources
  // have one out-edge each.
  EXPECT_EQ(out[2].data, (std::vector<double>{1, 1, 1, 1, 1, 1, 1, 1, 0, 0}));
}

/// On random graphs with many ties, the selected edges are exactly what
/// the scatter returns: sum(mask * x) = max(x), one 1 per non-empty group.
TEST(AutodiffInterpreter, ScatterSelectAgreesWithScatter) {
  const char *ir = R"(
func.func @f(%g: !gnn.graph<graph>, %w: !gnn.tensor<dense, ?x3xf32>) -> (!gnn.tensor<dense, ?x3xf32>, !gnn.tensor<dense, ?x3xf32>, !gnn.tensor<dense, ?x3xf32>) {
  %e = gnn.attach %g, %w : !gnn.graph<graph>, !gnn.tensor<dense, ?x3xf32> -> !gnn.tensor<edge, 3xf32>
  %s = gnn.scatter {FN} %g, %e : !gnn.graph<graph>, !gnn.tensor<edge, 3xf32> -> !gnn.tensor<{BY}, 3xf32>
  %m = gnn.scatter_select {FN} %g, %e {by = #gnn<domain {BY}>} : !gnn.graph<graph>, !gnn.tensor<edge, 3xf32> -> !gnn.tensor<edge, 3xf32>
  %p = gnn.binary mul %m, %e : !gnn.tensor<edge, 3xf32>, !gnn.tensor<edge, 3xf32> -> !gnn.tensor<edge, 3xf32>
  %ps = gnn.scatter sum %g, %p : !gnn.graph<graph>, !gnn.tensor<edge, 3xf32> -> !gnn.tensor<{BY}, 3xf32>
  %ms = gnn.scatter sum %g, %m : !gnn.graph<graph>, !gnn.tensor<edge, 3xf32> -> !gnn.tensor<{BY}, 3xf32>
  %r0 = gnn.collect %g, %s : !gnn.graph<graph>, !gnn.tensor<{BY}, 3xf32> -> !gnn.tensor<dense, ?x3xf32>
  %r1 = gnn.collect %g, %ps : !gnn.graph<graph>, !gnn.tensor<{BY}, 3xf32> -> !gnn.tensor<dense, ?x3xf32>
  %r2 = gnn.collect %g, %ms : !gnn.graph<graph>, !gnn.tensor<{BY}, 3xf32> -> !gnn.tensor<dense, ?x3xf32>
  return %r0, %r1, %r2 : !gnn.tensor<dense, ?x3xf32>, !gnn.tensor<dense, ?x3xf32>, !gnn.tensor<dense, ?x3xf32>
}
)";
  for (std::string fn : {"max", "min"})
    for (std::string by : {"dst", "src"}) {
      std::string text = ir;
      for (auto [key, value] :
           {std::pair<std::string, std::string>{"{FN}", fn}, {"{BY}", by}})
        for (size_t at; (at = text.find(key)) != std::string::npos;)
          text.replace(at, key.size(), value);
      for (const TestGraph &g : homogeneousGraphs()) {
        SCOPED_TRACE(fn + " by " + by + " on " + g.name);
        std::mt19937_64 rng(3);
        std::vector<double> w(g.numEdges() * 3);
        for (double &x : w)
          x = static_cast<double>(rng() % 3); // many ties
        std::vector<Tensor> out =
            runIR(text, {g.value(), dense({g.numEdges(), 3}, w)});
        ASSERT_EQ(out.size(), 3u);
        EXPECT_EQ(out[1].data, out[0].data);
        for (int64_t v = 0; v < out[2].shape[0]; ++v) {
          int64_t degree =
              by == "dst" ? g.graph->inDegree(v) : g.graph->outDegree(v);
          for (int j = 0; j < 3; ++j)
            EXPECT_EQ(out[2].data[v * 3 + j], degree > 0 ? 1.0 : 0.0);
        }
      }
    }
}

TEST(AutodiffInterpreter, ReadoutSelectBroadcastGraphsAndSizes) {
  // Graphs: {0, 1, 2}, {} (empty), {3, 4}.
  TestGraph t = named("b", GK::batched, makeGraph({}, 5, 5));
  t.graphOf = {0, 0, 0, 2, 2};
  t.numGraphs = 3;
  const char *ir = R"(
func.func @f(%g: !gnn.graph<batched>, %x: !gnn.tensor<dense, ?x2xf32>, %y: !gnn.tensor<dense, ?x2xf32>) -> (!gnn.tensor<dense, ?x2xf32>, !gnn.tensor<dense, ?x2xf32>, !gnn.tensor<dense, ?x2xf32>, !gnn.tensor<dense, ?xf32>) {
  %a = gnn.readout_select max %g, %x : !gnn.graph<batched>, !gnn.tensor<dense, ?x2xf32> -> !gnn.tensor<dense, ?x2xf32>
  %b = gnn.readout_select min %g, %x : !gnn.graph<batched>, !gnn.tensor<dense, ?x2xf32> -> !gnn.tensor<dense, ?x2xf32>
  %c = gnn.broadcast_graphs %g, %y : !gnn.graph<batched>, !gnn.tensor<dense, ?x2xf32> -> !gnn.tensor<dense, ?x2xf32>
  %n = gnn.graph_sizes %g : !gnn.graph<batched> -> !gnn.tensor<dense, ?xf32>
  return %a, %b, %c, %n : !gnn.tensor<dense, ?x2xf32>, !gnn.tensor<dense, ?x2xf32>, !gnn.tensor<dense, ?x2xf32>, !gnn.tensor<dense, ?xf32>
}
)";
  std::vector<Tensor> out =
      runIR(ir, {t.value(), dense({5, 2}, {1, 4, 3, 4, 3, 0, 7, 7, 7, 7}),
                 dense({3, 2}, {10, 11, 20, 21, 30, 31})});
  ASSERT_EQ(out.size(), 4u);
  // Column 0 of graph 0: 3 at vertices 1 and 2, the first (1) is chosen.
  EXPECT_EQ(out[0].data, (std::vector<double>{0, 1, 1, 0, 0, 0, 1, 1, 0, 0}));
  EXPECT_EQ(out[1].data, (std::vector<double>{1, 0, 0, 0, 0, 1, 1, 1, 0, 0}));
  EXPECT_EQ(out[2].shape, (std::vector<int64_t>{5, 2}));
  EXPECT_EQ(out[2].data,
            (std::vector<double>{10, 11, 10, 11, 10, 11, 30, 31, 30, 31}));
  EXPECT_EQ(out[3].data, (std::vector<double>{3, 0, 2}));
}

TEST(AutodiffInterpreter, ReduceSelectKeepsTheFirstExtremeElement) {
  const char *ir = R"(
func.func @f(%x: !gnn.tensor<dense, 2x3xf32>) -> (!gnn.tensor<dense, 2x3xf32>, !gnn.tensor<dense, 2x3xf32>, !gnn.tensor<dense, 2x3xf32>) {
  %a = gnn.reduce_select max %x {axis = 1 : i64} : !gnn.tensor<dense, 2x3xf32>
  %b = gnn.reduce_select min %x {axis = 0 : i64} : !gnn.tensor<dense, 2x3xf32>
  %c = gnn.reduce_select max %x : !gnn.tensor<dense, 2x3xf32>
  return %a, %b, %c : !gnn.tensor<dense, 2x3xf32>, !gnn.tensor<dense, 2x3xf32>, !gnn.tensor<dense, 2x3xf32>
}
)";
  std::vector<Tensor> out = runIR(ir, {dense({2, 3}, {1, 5, 5, 5, 2, 5})});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].data, (std::vector<double>{0, 1, 0, 1, 0, 0}));
  EXPECT_EQ(out[1].data, (std::vector<double>{1, 0, 1, 0, 1, 0}));
  EXPECT_EQ(out[2].data, (std::vector<double>{0, 1, 0, 0, 0, 0}));
}

TEST(AutodiffInterpreter, ReduceSelectOnRows) {
  // A vertex tensor: the axis is a row axis, each vertex selects its own.
  const char *ir = R"(
func.func @f(%g: !gnn.graph<graph>, %x: !gnn.tensor<dense, ?x2xf32>) -> !gnn.tensor<dense, ?x2xf32> {
  %d = gnn.attach %g, %x : !gnn.graph<graph>, !gnn.tensor<dense, ?x2xf32> -> !gnn.tensor<dst, 2xf32>
  %m = gnn.reduce_select min %d : !gnn.tensor<dst, 2xf32>
  %r = gnn.collect %g, %m : !gnn.graph<graph>, !gnn.tensor<dst, 2xf32> -> !gnn.tensor<dense, ?x2xf32>
  return %r : !gnn.tensor<dense, ?x2xf32>
}
)";
  std::vector<Tensor> out = runIR(ir, {graphValue(makeGraph({}, 3, 3)),
                                       dense({3, 2}, {1, 0, 4, 4, -1, 2})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].data, (std::vector<double>{0, 1, 1, 0, 1, 0}));
}

TEST(AutodiffInterpreter, SliceBroadcastLikeErfGtAndEdgeCollect) {
  const char *ir = R"(
func.func @f(%g: !gnn.graph<graph>, %x: !gnn.tensor<dense, ?x4xf32>, %c: !gnn.tensor<dense, f32>) -> (!gnn.tensor<dense, ?x2xf32>, !gnn.tensor<dense, ?x4xf32>, !gnn.tensor<dense, ?x4xf32>, !gnn.tensor<dense, ?x4xf32>, !gnn.tensor<dense, ?xf32>) {
  %s = gnn.slice %x {axis = 1 : i64, start = 1 : i64, size = 2 : i64} : !gnn.tensor<dense, ?x4xf32> -> !gnn.tensor<dense, ?x2xf32>
  %b = gnn.broadcast_like %c, %x : !gnn.tensor<dense, f32>, !gnn.tensor<dense, ?x4xf32>
  %e = gnn.unary erf %x : !gnn.tensor<dense, ?x4xf32>
  %t = gnn.binary gt %x, %c : !gnn.tensor<dense, ?x4xf32>, !gnn.tensor<dense, f32> -> !gnn.tensor<dense, ?x4xf32>
  %n = gnn.num_edges %g : !gnn.graph<graph> -> !gnn.tensor<dense, f32>
  %z = gnn.splat %g, %n : !gnn.graph<graph>, !gnn.tensor<dense, f32> -> !gnn.tensor<edge, f32>
  %ec = gnn.collect %g, %z : !gnn.graph<graph>, !gnn.tensor<edge, f32> -> !gnn.tensor<dense, ?xf32>
  return %s, %b, %e, %t, %ec : !gnn.tensor<dense, ?x2xf32>, !gnn.tensor<dense, ?x4xf32>, !gnn.tensor<dense, ?x4xf32>, !gnn.tensor<dense, ?x4xf32>, !gnn.tensor<dense, ?xf32>
}
)";
  GraphPtr g = makeGraph({{0, 1}, {1, 0}, {1, 1}}, 2, 2);
  std::vector<Tensor> out =
      runIR(ir, {graphValue(g), dense({2, 4}, {0, 1, 2, 3, -1, 0.5, 0.25, 2}),
                 dense({}, {0.5})});
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(out[0].shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(out[0].data, (std::vector<double>{1, 2, 0.5, 0.25}));
  EXPECT_EQ(out[1].shape, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(out[1].data, std::vector<double>(8, 0.5));
  EXPECT_NEAR(out[2].data[1], 0.8427007929497149, 1e-15); // erf(1)
  EXPECT_NEAR(out[2].data[4], -0.8427007929497149, 1e-15);
  // gt: strictly greater, 0.5 > 0.5 is false.
  EXPECT_EQ(out[3].data, (std::vector<double>{0, 1, 1, 1, 0, 0, 0, 1}));
  EXPECT_EQ(out[4].shape, (std::vector<int64_t>{3}));
  EXPECT_EQ(out[4].data, (std::vector<double>{3, 3, 3}));
}

TEST(AutodiffInterpreter, BroadcastLikeAlignsRowsAndDense) {
  // A dense row broadcast over the rows of an edge tensor, and an edge
  // tensor over a wider edge tensor (behind the edge axis).
  const char *ir = R"(
func.func @f(%g: !gnn.graph<graph>, %r: !gnn.tensor<dense, 2x1xf32>, %w: !gnn.tensor<dense, ?x3xf32>) -> (!gnn.tensor<dense, ?x2x3xf32>, !gnn.tensor<dense, ?x2x3xf32>) {
  %we = gnn.attach %g, %w : !gnn.graph<graph>, !gnn.tensor<dense, ?x3xf32> -> !gnn.tensor<edge, 3xf32>
  %z = gnn.constant 0.0 : !gnn.tensor<dense, f32>
  %zr = gnn.broadcast_like %z, %we : !gnn.tensor<dense, f32>, !gnn.tensor<edge, 3xf32>
  %wide = gnn.binary add %zr, %r : !gnn.tensor<edge, 3xf32>, !gnn.tensor<dense, 2x1xf32> -> !gnn.tensor<edge, 2x3xf32>
  %a = gnn.broadcast_like %r, %wide : !gnn.tensor<dense, 2x1xf32>, !gnn.tensor<edge, 2x3xf32>
  %b = gnn.broadcast_like %we, %wide : !gnn.tensor<edge, 3xf32>, !gnn.tensor<edge, 2x3xf32>
  %ra = gnn.collect %g, %a : !gnn.graph<graph>, !gnn.tensor<edge, 2x3xf32> -> !gnn.tensor<dense, ?x2x3xf32>
  %rb = gnn.collect %g, %b : !gnn.graph<graph>, !gnn.tensor<edge, 2x3xf32> -> !gnn.tensor<dense, ?x2x3xf32>
  return %ra, %rb : !gnn.tensor<dense, ?x2x3xf32>, !gnn.tensor<dense, ?x2x3xf32>
}
)";
  GraphPtr g = makeGraph({{0, 1}, {1, 1}}, 2, 2);
  std::vector<Tensor> out = runIR(ir, {graphValue(g), dense({2, 1}, {7, 8}),
                                       dense({2, 3}, {1, 2, 3, 4, 5, 6})});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].shape, (std::vector<int64_t>{2, 2, 3}));
  EXPECT_EQ(out[0].data,
            (std::vector<double>{7, 7, 7, 8, 8, 8, 7, 7, 7, 8, 8, 8}));
  EXPECT_EQ(out[1].data,
            (std::vector<double>{1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6}));
  // Without edges everything is empty.
  out = runIR(ir, {graphValue(makeGraph({}, 2, 2)), dense({2, 1}, {7, 8}),
                   dense({0, 3}, {})});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].shape, (std::vector<int64_t>{0, 2, 3}));
}

/// dW = A^T dY on a graph without edges multiplies [k, 0] by [0, n]: zeros.
TEST(AutodiffInterpreter, MatmulWithAnEmptyInnerDimension) {
  const char *ir = R"(
func.func @f(%a: !gnn.tensor<dense, 3x?xf32>, %b: !gnn.tensor<dense, ?x2xf32>) -> !gnn.tensor<dense, 3x2xf32> {
  %r = gnn.matmul %a, %b : !gnn.tensor<dense, 3x?xf32>, !gnn.tensor<dense, ?x2xf32> -> !gnn.tensor<dense, 3x2xf32>
  return %r : !gnn.tensor<dense, 3x2xf32>
}
)";
  std::vector<Tensor> out = runIR(ir, {dense({3, 0}, {}), dense({0, 2}, {})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(out[0].data, std::vector<double>(6, 0.0));
}

/// interp::run insists on one result; runAll takes any number.
TEST(AutodiffInterpreter, RunNeedsOneResult) {
  Compiled c;
  ASSERT_TRUE(parseIR(c, R"(
func.func @f(%x: !gnn.tensor<dense, 2xf32>) -> (!gnn.tensor<dense, 2xf32>, !gnn.tensor<dense, 2xf32>) {
  return %x, %x : !gnn.tensor<dense, 2xf32>, !gnn.tensor<dense, 2xf32>
}
)"));
  Tensor out;
  rt::Status s = interp::run<double>(*c.module, "f", {dense({2}, {1, 2})}, out);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("returns 2 values"), std::string::npos)
      << s.message();
  std::vector<Tensor> outs;
  EXPECT_TRUE(run(*c.module, "f", {dense({2}, {1, 2})}, outs, false));
  EXPECT_EQ(outs.size(), 2u);
}

//===----------------------------------------------------------------------===//
// The pass itself
//===----------------------------------------------------------------------===//

/// Fused functions get no backward; running the pass twice adds nothing;
/// the gradients do not depend on whether canonicalize and CSE ran first.
TEST(AutodiffPass, SkipsFusedFunctionsAndIsIdempotent) {
  Compiled c;
  ASSERT_TRUE(compileExample(c, "gcn.gnn", "GCN",
                             {{"in_dim", 4}, {"hidden", 3}, {"classes", 2}}));
  int64_t functions = countOps(*c.module, "func.func");
  EXPECT_EQ(functions, 6); // three forward, three backward
  ASSERT_TRUE(differentiate(c));
  EXPECT_EQ(countOps(*c.module, "func.func"), functions);

  Compiled fused;
  llvm::SmallString<256> path(kRoot);
  llvm::sys::path::append(path, "dsl-examples", "gcn.gnn");
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  ASSERT_TRUE(bool(buffer));
  ASSERT_TRUE(lowerSource(fused, (*buffer)->getBuffer(), "gcn.gnn", "GCNConv",
                          {{"in_dim", 4}, {"out_dim", 3}}));
  ASSERT_TRUE(runPasses(fused, *fused.module, [](mlir::PassManager &pm) {
    gnn::buildFusionPipeline(pm);
    pm.addPass(gnn::createGNNAutodiff());
  }));
  EXPECT_FALSE(fused.module->lookupSymbol("GCNConv.backward"));
}

TEST(AutodiffPass, CanonicalizedInputGivesTheSameGradients) {
  ExampleCase ec = exampleCases()[5]; // gat.gnn GAT
  ASSERT_EQ(ec.entry, "GAT");
  Compiled plain, tidy;
  ASSERT_TRUE(compileExample(plain, ec.file, ec.entry, ec.defines));
  llvm::SmallString<256> path(kRoot);
  llvm::sys::path::append(path, "dsl-examples", ec.file);
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  ASSERT_TRUE(bool(buffer));
  ASSERT_TRUE(
      lowerSource(tidy, (*buffer)->getBuffer(), ec.file, ec.entry, ec.defines));
  ASSERT_TRUE(runPasses(tidy, *tidy.module, [](mlir::PassManager &pm) {
    pm.addPass(mlir::createCanonicalizerPass());
    pm.addPass(mlir::createCSEPass());
    pm.addPass(gnn::createGNNAutodiff());
    pm.addPass(mlir::createCanonicalizerPass());
    pm.addPass(mlir::createCSEPass());
  }));
  TestGraph g = homogeneousGraphs().front();
  auto func = plain.module->lookupSymbol<mlir::func::FuncOp>(ec.entry);
  Args args;
  ASSERT_TRUE(makeArgs(func, g, ec.spec, 8, args));
  std::vector<Tensor> y;
  ASSERT_TRUE(run(*plain.module, ec.entry, args, y, true));
  std::mt19937_64 rng(1);
  args.push_back(randomTensor(y[0].shape, rng));
  std::vector<Tensor> a, b;
  ASSERT_TRUE(run(*plain.module, ec.entry + ".backward", args, a, true));
  ASSERT_TRUE(run(*tidy.module, ec.entry + ".backward", args, b, true));
  ASSERT_EQ(a.size(), b.size());
  for (size_t k = 0; k < a.size(); ++k)
    for (size_t j = 0; j < a[k].data.size(); ++j)
      EXPECT_NEAR(a[k].data[j], b[k].data[j],
                  1e-12 * (1 + std::abs(a[k].data[j])));
}

} // namespace
