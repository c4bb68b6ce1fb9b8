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

#include "TestSupport.h"

#include "gnnc/Dialect/GNN/Transforms/Passes.h"
#include "gnnc/Interpreter/Interpreter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <vector>

using namespace gnnc;
using namespace gnnc::testing_support;

namespace {

//===----------------------------------------------------------------------===//
// Graphs: small, so that finite differences stay cheap
//===----------------------------------------------------------------------===//

GraphSuite makeGraphSuite() {
  GraphSuite s;
  s.homogeneousSeed = 31337;
  s.rmat = {5, 90, 3, 5}; // 32 vertices
  s.preferential = {24, 2, 4, 2, 4};
  s.noEdges = 4;
  // Members of 7, 0, 8 and 1 vertices.
  s.batchedSeed = 5;
  s.batch = {{7, 0, 2, 1}, {0}, {8, 20}, {1}};
  s.blockSeed = 77;
  s.block = {24, 10, 12.0, 2.0, true};
  s.heteroSeed = 11;
  s.hetero = {4, 40, 1, 2}; // 16 vertices
  s.noGraphVertices = 5;
  return s;
}

const GraphSuite kGraphs = makeGraphSuite();

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
};

::testing::AssertionResult
lowerSource(Compiled &c, llvm::StringRef source, llvm::StringRef bufferName,
            const std::string &entry,
            const std::map<std::string, double> &defines) {
  c.entry = entry;
  return lowerGNN(c.context, source, bufferName, entry, defines, c.module);
}

::testing::AssertionResult parseIR(Compiled &c, llvm::StringRef ir) {
  c.entry = "f";
  return parseModule(c.context, ir, c.module);
}

::testing::AssertionResult differentiate(Compiled &c) {
  return runPipeline(c.context, *c.module, [](mlir::PassManager &pm) {
    pm.addPass(gnn::createGNNAutodiff());
  });
}

::testing::AssertionResult
compileExample(Compiled &c, const std::string &file, const std::string &entry,
               const std::map<std::string, double> &defines) {
  if (auto ok = lowerExample(c.context, file, entry, defines, c.module); !ok)
    return ok;
  c.entry = entry;
  return differentiate(c);
}

//===----------------------------------------------------------------------===//
// Finite differences
//===----------------------------------------------------------------------===//

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

//===----------------------------------------------------------------------===//
// Every layer and model of the examples
//===----------------------------------------------------------------------===//

std::vector<ExampleCase> exampleCases() {
  return testing_support::exampleCases(ExampleSizes::FiniteDifferences);
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
  for (const TestGraph &g : kGraphs.forEntry(*c.module, ec.entry)) {
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
    std::vector<TestGraph> graphs = kGraphs.forEntry(*c.module, name);
    checkGradients(*c.module, name, graphs.front(), ec.spec, ec.hasDropout, 3);
  }
}

INSTANTIATE_TEST_SUITE_P(Examples, AutodiffExample,
                         ::testing::ValuesIn(exampleCases()),
                         [](const auto &info) { return caseName(info.param); });

/// The table lists every layer and model of every example.
TEST(AutodiffExampleSet, EveryDefinitionIsCovered) {
  expectEveryDefinitionCovered(exampleCases());
}

/// Backward functions are ordinary unfused gnn IR: the fusion pipeline
/// fuses their gather-scatter chains, and the fused gradients are the
/// unfused ones.
TEST_P(AutodiffExample, FusedBackwardComputesTheSame) {
  const ExampleCase &ec = GetParam();
  Compiled c;
  ASSERT_TRUE(compileExample(c, ec.file, ec.entry, ec.defines));
  mlir::OwningOpRef<mlir::ModuleOp> fused = c.module->clone();
  ASSERT_TRUE(runPipeline(c.context, *fused, [](mlir::PassManager &pm) {
    gnn::buildFusionPipeline(pm);
  }));
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
  for (const TestGraph &g : kGraphs.forEntry(*c.module, ec.entry)) {
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

/// kExtraLayers (FusionDifferentialTest.cpp runs them too), and DenseOps.
const std::string kExtras = std::string(kExtraLayers) + R"(
# Dense reductions over the vertex axis, feature softmaxes, graph counts,
# gelu, sigmoid and a readout with every reduction.
layer DenseOps(d: int = 3):
    param W: f32[d, d] = glorot

    def forward(g: BatchedGraph, x: f32[N, d]) -> f32[B, 4 * d]:
        h = gelu(x @ W) + sigmoid(x) * mean(x, 0) - max(x, 0, keepdims=True)
        p = softmax(h, 0) + log_softmax(h, -1) + sqrt(exp(x)) * min(x, 1, keepdims=True)
        return concat([g.sum_nodes(p), g.avg_nodes(h), g.max_nodes(p - h), g.avg_nodes(x @ (tanh(transpose(W) @ transpose(x)) @ x))], -1)

# Comparisons and where, on the host and per edge: both branches of each
# where are taken somewhere, and the branch not taken (an infinite rsqrt)
# leaves no NaN in the values or the gradients.
layer Selections(d: int = 3):
    param W: f32[d, d] = glorot

    def forward(g: Graph, x: f32[N, d]) -> f32[N, d]:
        deg = reshape(g.in_degree(), [N, 1])
        norm = where(deg > 0, rsqrt(deg), 0)
        h = where(x @ W >= 0, x @ W, 0.5 * x) * norm + (deg == 0) - (deg != 1) * 0.25
        g.set_vertex_attr({"h": h, "n": norm})
        for v in g.dst_vertex:
            v.m = g.sum([where(u.h < v.h, u.h * u.n, v.h - u.h) for u in v.innbs])
            v.k = g.max([where(u.h <= 0.1, 0, u.h) for u in v.innbs])
        return [v.m for v in g.dst_vertex] + where(x < 0, [v.k for v in g.dst_vertex], x)
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
  for (const TestGraph &g : kGraphs.forEntry(*c.module, entry)) {
    checkGradients(*c.module, entry, g, spec, false, seed++);
    checkGradients(*c.module, entry, g, spec, true, seed++);
  }
}

INSTANTIATE_TEST_SUITE_P(Layers, AutodiffExtra,
                         ::testing::Values("BlockAttn", "OutAttn",
                                           "OutAttnMSGL", "RowOps", "DenseOps",
                                           "Selections"));

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
                         "sigmoid", "tanh", "gelu", "erf", "sin", "cos"}) {
    OpCase c{"unary_" + fn, unaryIR(fn), {}};
    if (fn == "log" || fn == "sqrt" || fn == "rsqrt")
      c.spec.positive.insert("x");
    out.push_back(c);
  }
  out.push_back({"unary_elu", unaryIR("elu", "{alpha = 1.5 : f64}"), {}});
  out.push_back(
      {"unary_leaky_relu", unaryIR("leaky_relu", "{alpha = 0.2 : f64}"), {}});
  for (std::string fn : {"add", "sub", "mul", "div", "max", "min", "pow", "ge",
                         "eq", "ne", "mask"}) {
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
    graphs = {tinyGraph(), kGraphs.homogeneousGraphs().front()};
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
      for (const TestGraph &g : kGraphs.homogeneousGraphs()) {
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
  ASSERT_TRUE(lowerExample(fused.context, "gcn.gnn", "GCNConv",
                           {{"in_dim", 4}, {"out_dim", 3}}, fused.module));
  ASSERT_TRUE(
      runPipeline(fused.context, *fused.module, [](mlir::PassManager &pm) {
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
  ASSERT_TRUE(
      lowerExample(tidy.context, ec.file, ec.entry, ec.defines, tidy.module));
  ASSERT_TRUE(
      runPipeline(tidy.context, *tidy.module, [](mlir::PassManager &pm) {
        pm.addPass(mlir::createCanonicalizerPass());
        pm.addPass(mlir::createCSEPass());
        pm.addPass(gnn::createGNNAutodiff());
        pm.addPass(mlir::createCanonicalizerPass());
        pm.addPass(mlir::createCSEPass());
      }));
  TestGraph g = kGraphs.homogeneousGraphs().front();
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
