//===- FusionDifferentialTest.cpp - Fused IR computes what unfused IR does
//-===//
//
// Part of gnnc. Every layer and model of every dsl-examples/*.gnn is lowered
// with small hyper-parameters, copied, and the copy is run through the
// fusion pipeline (canonicalize, cse, gnn-fuse, canonicalize, cse). Both
// modules then run in the reference interpreter, in double, on the same
// random graphs, inputs and parameters, and must agree to 1e-10 relative:
//
//   - random power-law graphs (R-MAT and preferential attachment, 128-150
//     vertices) with isolated vertices, self-loops and multi-edges, and the
//     corner cases of a graph without edges and of one vertex (alone, and
//     with two self-loops);
//   - batched graphs (with an empty member graph), bipartite blocks
//     (N_src != N_dst, some destinations without in-edges) and
//     heterogeneous graphs with the relations rgcn.gnn names;
//   - inference and training: in training every dropout draws a mask, and
//     the masks of dropout moved into an aggregate body and of attention
//     dropout folded into softmax_sum must be the unfused op's masks.
//
// Hand-written IR covers what the examples do not: chains fusion must leave
// partly unfused (tests/Dialect/GNN/Transforms/fusion/negative.mlir) still
// compute the same values. Attention logits of +-1e4 check that the online
// softmax_sum never overflows, where MSGL's unfused exp(l) / sum(exp(l)) does.
//
// Tests named DISABLED_* reproduce known fusion bugs; run them with
// --gtest_also_run_disabled_tests.
//
//===----------------------------------------------------------------------===//

#include "TestSupport.h"

#include "gnnc/Dialect/GNN/Transforms/Passes.h"
#include "gnnc/Interpreter/Interpreter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

using namespace gnnc;
using namespace gnnc::testing_support;

namespace {

//===----------------------------------------------------------------------===//
// Graphs
//===----------------------------------------------------------------------===//

/// Power-law graphs of 128-150 vertices with isolated vertices, self-loops
/// and multi-edges, and every corner case.
GraphSuite makeGraphSuite() {
  GraphSuite s;
  s.homogeneousSeed = 20240611;
  s.rmat = {7, 640, 4, 8}; // 128 vertices
  s.preferential = {150, 3, 12, 5, 10};
  s.noEdges = 6;
  // Member graphs of 9, 0, 16, 1 and 32 vertices.
  s.batchedSeed = 77;
  s.batch = {{9, 0, 2, 2}, {0}, {16, 64}, {1}, {32, 128}};
  s.blockSeed = 4242;
  s.block = {60, 20, 30.0, 2.5, false};
  s.heteroSeed = 99;
  s.hetero = {7, 500, 2, 4}; // 128 vertices
  s.noGraphVertices = 7;
  s.moreCornerCases = true;
  return s;
}

const GraphSuite kGraphs = makeGraphSuite();

//===----------------------------------------------------------------------===//
// Compiling
//===----------------------------------------------------------------------===//

/// Both modules of one definition, and the context they live in.
struct Compiled {
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> unfused, fused;
  std::string entry;
};

::testing::AssertionResult lower(Compiled &c, llvm::StringRef source,
                                 llvm::StringRef bufferName,
                                 const std::string &entry,
                                 const std::map<std::string, double> &defines) {
  c.entry = entry;
  return lowerGNN(c.context, source, bufferName, entry, defines, c.unfused);
}

/// Copies the unfused module and runs the fusion pipeline on the copy.
::testing::AssertionResult fuse(Compiled &c) {
  c.fused = c.unfused->clone();
  return runPipeline(c.context, *c.fused, [](mlir::PassManager &pm) {
    gnn::buildFusionPipeline(pm);
  });
}

::testing::AssertionResult
compileExample(Compiled &c, const std::string &file, const std::string &entry,
               const std::map<std::string, double> &defines) {
  if (auto ok = lowerExample(c.context, file, entry, defines, c.unfused); !ok)
    return ok;
  c.entry = entry;
  return fuse(c);
}

::testing::AssertionResult compileIR(Compiled &c, llvm::StringRef ir) {
  if (auto ok = parseModule(c.context, ir, c.unfused); !ok)
    return ok;
  return fuse(c);
}

//===----------------------------------------------------------------------===//
// Running
//===----------------------------------------------------------------------===//

bool allFinite(const interp::Tensor<double> &t) {
  return std::all_of(t.data.begin(), t.data.end(),
                     [](double x) { return std::isfinite(x); });
}

/// Element by element within `rel` relative; values far below the output's
/// largest magnitude are compared at 1e-12 of that magnitude instead.
::testing::AssertionResult near(const interp::Tensor<double> &got,
                                const interp::Tensor<double> &want,
                                double rel = 1e-10) {
  if (got.shape != want.shape)
    return ::testing::AssertionFailure() << "shapes differ";
  if (!allFinite(want))
    return ::testing::AssertionFailure() << "the reference is not finite";
  double scale = 0;
  for (double x : want.data)
    scale = std::max(scale, std::abs(x));
  for (size_t i = 0; i < want.data.size(); ++i) {
    double a = got.data[i], b = want.data[i];
    double diff = std::abs(a - b);
    if (!(diff <= rel * std::max(std::abs(a), std::abs(b)) ||
          diff <= 1e-12 * scale))
      return ::testing::AssertionFailure()
             << "element " << i << ": " << a << " vs " << b << " (difference "
             << diff << ", output scale " << scale << ")";
  }
  return ::testing::AssertionSuccess();
}

/// Runs the unfused and the fused module on the same arguments and
/// compares. Training runs must draw the same dropout masks in both.
void expectSame(Compiled &c, const TestGraph &graph, const ArgSpec &spec,
                bool training, uint64_t seed = 1) {
  SCOPED_TRACE("graph " + graph.name + (training ? ", training" : ""));
  Args args;
  ASSERT_TRUE(makeArgs(*c.unfused, c.entry, graph, spec, seed, args));
  interp::Tensor<double> unfused, fused;
  ASSERT_TRUE(run(*c.unfused, c.entry, args, unfused, training));
  ASSERT_TRUE(run(*c.fused, c.entry, args, fused, training));
  ASSERT_TRUE(allFinite(unfused));
  EXPECT_TRUE(near(fused, unfused));
}

//===----------------------------------------------------------------------===//
// Every layer and model of the examples
//===----------------------------------------------------------------------===//

std::vector<ExampleCase> exampleCases() {
  return testing_support::exampleCases(ExampleSizes::Differential);
}

class FusionDifferential : public ::testing::TestWithParam<ExampleCase> {};

TEST_P(FusionDifferential, FusedIsFullyFused) {
  const ExampleCase &ec = GetParam();
  Compiled c;
  ASSERT_TRUE(compileExample(c, ec.file, ec.entry, ec.defines));
  // Every gather-scatter chain of the examples fuses completely.
  EXPECT_EQ(countOps(*c.fused, "gnn.scatter"), 0);
  EXPECT_EQ(countOps(*c.fused, "gnn.gather"), 0);
  EXPECT_EQ(countOps(*c.fused, "gnn.edge_softmax"), 0);
  // One aggregate per scatter (no example has two independent aggregations
  // over the same edges in one function), except that MSGL's normalising
  // sums fold into the softmax_sum of the weighted sum they normalise.
  int64_t scatters = countOps(*c.unfused, "gnn.scatter");
  EXPECT_EQ(countOps(*c.fused, "gnn.aggregate"),
            ec.file == "gat_msgl.gnn" ? scatters / 2 : scatters);
}

TEST_P(FusionDifferential, InferenceMatchesUnfused) {
  const ExampleCase &ec = GetParam();
  Compiled c;
  ASSERT_TRUE(compileExample(c, ec.file, ec.entry, ec.defines));
  for (const TestGraph &g : kGraphs.forEntry(*c.unfused, ec.entry))
    expectSame(c, g, ec.spec, /*training=*/false);
}

TEST_P(FusionDifferential, TrainingMatchesUnfused) {
  const ExampleCase &ec = GetParam();
  Compiled c;
  ASSERT_TRUE(compileExample(c, ec.file, ec.entry, ec.defines));
  std::vector<TestGraph> graphs = kGraphs.forEntry(*c.unfused, ec.entry);
  for (const TestGraph &g : graphs)
    expectSame(c, g, ec.spec, /*training=*/true, /*seed=*/2);
  if (!ec.hasDropout)
    return;
  // Dropout really draws: training differs from inference on the first
  // graph (so the comparison above compared masked results).
  Args args;
  ASSERT_TRUE(makeArgs(*c.fused, ec.entry, graphs.front(), ec.spec, 2, args));
  interp::Tensor<double> train, infer;
  ASSERT_TRUE(run(*c.fused, ec.entry, args, train, true));
  ASSERT_TRUE(run(*c.fused, ec.entry, args, infer, false));
  EXPECT_FALSE(near(train, infer));
}

INSTANTIATE_TEST_SUITE_P(Examples, FusionDifferential,
                         ::testing::ValuesIn(exampleCases()),
                         [](const auto &info) { return caseName(info.param); });

/// The table above lists every layer and model of every example.
TEST(FusionDifferentialSet, EveryDefinitionIsCovered) {
  expectEveryDefinitionCovered(exampleCases());
}

/// The random graphs have what the tests claim: isolated vertices,
/// self-loops and multi-edges.
TEST(FusionDifferentialSet, GraphsHaveCornerCases) {
  for (const TestGraph &t : kGraphs.homogeneousGraphs()) {
    const Graph &g = *t.graph;
    if (g.numEdges() < 100)
      continue;
    SCOPED_TRACE(t.name);
    bool isolated = false, loop = false, multi = false;
    int64_t maxDegree = 0;
    for (int64_t v = 0; v < g.numDst(); ++v) {
      isolated |= g.inDegree(v) == 0;
      maxDegree = std::max(maxDegree, g.inDegree(v));
      std::set<int64_t> seen;
      for (int64_t k = g.inPtr()[v]; k < g.inPtr()[v + 1]; ++k) {
        loop |= g.inSrc()[k] == v;
        multi |= !seen.insert(g.inSrc()[k]).second;
      }
    }
    EXPECT_TRUE(isolated);
    EXPECT_TRUE(loop);
    EXPECT_TRUE(multi);
    // Skewed: the largest in-degree is far above the mean.
    EXPECT_GT(maxDegree, 4 * g.numEdges() / g.numDst());
  }
}

//===----------------------------------------------------------------------===//
// Dropout inside an aggregate body
//===----------------------------------------------------------------------===//

constexpr llvm::StringLiteral kEdgeDropout = R"(
layer EdgeDrop(dim: int = 4, p: float = 0.5):
    param W: f32[dim, dim] = glorot

    def forward(g: Graph, x: f32[N, dim]) -> f32[N, dim]:
        g.set_vertex_attr({"h": x @ W})
        for v in g.dst_vertex:
            m = dropout([relu(u.h) * v.h for u in v.innbs], p)
            v.s = g.sum(m)
            v.t = g.max(m)
        return [v.s for v in g.dst_vertex] + [v.t for v in g.dst_vertex]
)";

TEST(FusionDifferentialDropout, PerEdgeDropoutInBodyKeepsTheMask) {
  Compiled c;
  ASSERT_TRUE(lower(c, kEdgeDropout, "edge_dropout.gnn", "EdgeDrop", {}));
  ASSERT_TRUE(fuse(c));
  // One aggregate with both reductions; the dropout is in its body.
  ASSERT_EQ(countOps(*c.fused, "gnn.aggregate"), 1);
  int64_t outside = 0;
  c.fused->walk([&](gnn::DropoutOp op) {
    if (!op->getParentOfType<gnn::AggregateOp>())
      ++outside;
  });
  EXPECT_EQ(outside, 0);
  EXPECT_GE(countOps(*c.fused, "gnn.dropout"), 1);
  for (const TestGraph &g : kGraphs.homogeneousGraphs()) {
    expectSame(c, g, {}, /*training=*/true, 5);
    expectSame(c, g, {}, /*training=*/false, 5);
  }
}

//===----------------------------------------------------------------------===//
// Beyond the examples: blocks, out-edges, every row-local op
//===----------------------------------------------------------------------===//

class FusionDifferentialExtra : public ::testing::TestWithParam<const char *> {
};

TEST_P(FusionDifferentialExtra, FusesAndMatchesUnfused) {
  std::string entry = GetParam();
  Compiled c;
  ASSERT_TRUE(lower(c, kExtraLayers, "extras.gnn", entry, {}));
  ASSERT_TRUE(fuse(c));
  EXPECT_EQ(countOps(*c.fused, "gnn.scatter"), 0);
  EXPECT_EQ(countOps(*c.fused, "gnn.gather"), 0);
  EXPECT_EQ(countOps(*c.fused, "gnn.edge_softmax"), 0);
  EXPECT_EQ(countOps(*c.fused, "gnn.aggregate"), 1);
  ArgSpec spec;
  spec.dynamic["x_src"] = Count::Src;
  spec.dynamic["w"] = Count::Edges;
  for (const TestGraph &g : kGraphs.forEntry(*c.unfused, entry)) {
    expectSame(c, g, spec, /*training=*/false, 8);
    expectSame(c, g, spec, /*training=*/true, 9);
  }
}

INSTANTIATE_TEST_SUITE_P(Layers, FusionDifferentialExtra,
                         ::testing::Values("BlockAttn", "OutAttn",
                                           "OutAttnMSGL", "RowOps"));

//===----------------------------------------------------------------------===//
// Large attention logits
//===----------------------------------------------------------------------===//

/// GATConv in float64, computed stably by hand: per head, the softmax of
/// leaky_relu(es_u + ed_v) over v's in-edges, max subtracted, weights the
/// source rows of h = x W; heads concatenated, plus b.
/// `maxLogit` is the largest score of any edge.
interp::Tensor<double> referenceGAT(const Graph &g, const Args &args,
                                    int64_t heads, int64_t outDim, double slope,
                                    double &maxLogit) {
  maxLogit = -INFINITY;
  const auto &x = std::get<interp::Tensor<double>>(args[1]);
  const auto &W = std::get<interp::Tensor<double>>(args[2]);
  const auto &aSrc = std::get<interp::Tensor<double>>(args[3]);
  const auto &aDst = std::get<interp::Tensor<double>>(args[4]);
  const auto &b = std::get<interp::Tensor<double>>(args[5]);
  int64_t n = x.shape[0], in = x.shape[1], width = heads * outDim;
  std::vector<double> h(n * width, 0.0), es(n * heads, 0.0), ed(n * heads, 0.0);
  for (int64_t v = 0; v < n; ++v)
    for (int64_t j = 0; j < width; ++j)
      for (int64_t k = 0; k < in; ++k)
        h[v * width + j] += x.data[v * in + k] * W.data[k * width + j];
  for (int64_t v = 0; v < n; ++v)
    for (int64_t hd = 0; hd < heads; ++hd)
      for (int64_t j = 0; j < outDim; ++j) {
        double hv = h[v * width + hd * outDim + j];
        es[v * heads + hd] += hv * aSrc.data[hd * outDim + j];
        ed[v * heads + hd] += hv * aDst.data[hd * outDim + j];
      }
  interp::Tensor<double> out =
      interp::Tensor<double>::dense({n, width}, std::vector<double>(n * width));
  for (int64_t v = 0; v < n; ++v) {
    for (int64_t hd = 0; hd < heads; ++hd) {
      int64_t begin = g.inPtr()[v], end = g.inPtr()[v + 1];
      std::vector<double> logit;
      for (int64_t k = begin; k < end; ++k) {
        double s = es[g.inSrc()[k] * heads + hd] + ed[v * heads + hd];
        logit.push_back(s > 0 ? s : slope * s);
        maxLogit = std::max(maxLogit, logit.back());
      }
      double mx = -INFINITY, sum = 0;
      for (double l : logit)
        mx = std::max(mx, l);
      for (double l : logit)
        sum += std::exp(l - mx);
      for (int64_t j = 0; j < outDim; ++j) {
        double acc = 0;
        for (int64_t k = begin; k < end; ++k)
          acc += std::exp(logit[k - begin] - mx) / sum *
                 h[g.inSrc()[k] * width + hd * outDim + j];
        out.data[v * width + hd * outDim + j] = acc + b.data[hd * outDim + j];
      }
    }
  }
  return out;
}

/// Scales a_src and a_dst so that the scores reach about +-1e4: exp of
/// them overflows double (the largest finite exp argument is about 709).
TEST(FusionDifferentialLargeLogits, OnlineSoftmaxDoesNotOverflow) {
  const std::map<std::string, double> defines = {
      {"in_dim", 5}, {"out_dim", 3}, {"heads", 2}};
  ArgSpec spec;
  spec.scale["a_src"] = 5e3;
  spec.scale["a_dst"] = 5e3;
  for (const TestGraph &t : kGraphs.homogeneousGraphs()) {
    SCOPED_TRACE(t.name);
    Compiled gat, msgl;
    ASSERT_TRUE(compileExample(gat, "gat.gnn", "GATConv", defines));
    ASSERT_TRUE(compileExample(msgl, "gat_msgl.gnn", "GATConv", defines));
    Args args;
    ASSERT_TRUE(makeArgs(*gat.unfused, "GATConv", t, spec, 11, args));
    double maxLogit;
    interp::Tensor<double> want =
        referenceGAT(*t.graph, args, 2, 3, 0.2, maxLogit);
    ASSERT_TRUE(allFinite(want));
    // The scores really are large where there are edges: exp overflows
    // double beyond about 709.
    if (t.graph->numEdges() > 100) {
      EXPECT_GT(maxLogit, 5e3);
    }

    interp::Tensor<double> out;
    // gat.gnn: edge_softmax subtracts the maximum; fused, softmax_sum runs
    // online. Both are right.
    ASSERT_TRUE(run(*gat.unfused, "GATConv", args, out, false));
    EXPECT_TRUE(near(out, want, 1e-9));
    ASSERT_TRUE(run(*gat.fused, "GATConv", args, out, false));
    EXPECT_TRUE(allFinite(out));
    EXPECT_TRUE(near(out, want, 1e-9));
    // gat_msgl.gnn fused: the same online softmax_sum, finite and right.
    ASSERT_TRUE(run(*msgl.fused, "GATConv", args, out, false));
    EXPECT_TRUE(allFinite(out));
    EXPECT_TRUE(near(out, want, 1e-9));
    // gat_msgl.gnn unfused: exp(score) overflows to inf and inf / inf is
    // NaN wherever a vertex has an in-edge.
    ASSERT_TRUE(run(*msgl.unfused, "GATConv", args, out, false));
    if (maxLogit > 710) {
      EXPECT_FALSE(allFinite(out));
    } else {
      EXPECT_TRUE(near(out, want, 1e-9));
    }
  }
}

/// The same in training mode: attention dropout inside softmax_sum with
/// huge logits still agrees with the unfused gat.gnn (whose edge_softmax is
/// stable).
TEST(FusionDifferentialLargeLogits, TrainingWithAttentionDropout) {
  const std::map<std::string, double> defines = {
      {"in_dim", 5}, {"out_dim", 3}, {"heads", 2}, {"attn_drop", 0.3}};
  ArgSpec spec;
  spec.scale["a_src"] = 5e3;
  spec.scale["a_dst"] = 5e3;
  Compiled gat, msgl;
  ASSERT_TRUE(compileExample(gat, "gat.gnn", "GATConv", defines));
  ASSERT_TRUE(compileExample(msgl, "gat_msgl.gnn", "GATConv", defines));
  for (const TestGraph &t : kGraphs.homogeneousGraphs()) {
    SCOPED_TRACE(t.name);
    Args args;
    ASSERT_TRUE(makeArgs(*gat.unfused, "GATConv", t, spec, 12, args));
    interp::Tensor<double> want, fused, fusedMsgl;
    ASSERT_TRUE(run(*gat.unfused, "GATConv", args, want, true));
    ASSERT_TRUE(run(*gat.fused, "GATConv", args, fused, true));
    ASSERT_TRUE(run(*msgl.fused, "GATConv", args, fusedMsgl, true));
    EXPECT_TRUE(near(fused, want, 1e-9));
    EXPECT_TRUE(near(fusedMsgl, want, 1e-9));
  }
}

//===----------------------------------------------------------------------===//
// Hand-written IR: partial fusion still computes the same
//===----------------------------------------------------------------------===//

/// The cases of negative.mlir (and merges), as one module.
constexpr llvm::StringLiteral kPartialIR = R"mlir(
func.func @softmax_then_max(%g: !gnn.graph<graph>, %l: !gnn.tensor<dense, ?x2x1xf32>, %h: !gnn.tensor<dense, ?x2x3xf32>) -> !gnn.tensor<dense, ?x2x3xf32> {
  %ls = gnn.attach %g, %l : !gnn.graph<graph>, !gnn.tensor<dense, ?x2x1xf32> -> !gnn.tensor<src, 2x1xf32>
  %le = gnn.gather %g, %ls : !gnn.graph<graph>, !gnn.tensor<src, 2x1xf32> -> !gnn.tensor<edge, 2x1xf32>
  %a = gnn.edge_softmax %g, %le {by = #gnn<domain dst>} : !gnn.graph<graph>, !gnn.tensor<edge, 2x1xf32> -> !gnn.tensor<edge, 2x1xf32>
  %hs = gnn.attach %g, %h : !gnn.graph<graph>, !gnn.tensor<dense, ?x2x3xf32> -> !gnn.tensor<src, 2x3xf32>
  %he = gnn.gather %g, %hs : !gnn.graph<graph>, !gnn.tensor<src, 2x3xf32> -> !gnn.tensor<edge, 2x3xf32>
  %m = gnn.binary mul %a, %he : !gnn.tensor<edge, 2x1xf32>, !gnn.tensor<edge, 2x3xf32> -> !gnn.tensor<edge, 2x3xf32>
  %s = gnn.scatter max %g, %m : !gnn.graph<graph>, !gnn.tensor<edge, 2x3xf32> -> !gnn.tensor<dst, 2x3xf32>
  %r = gnn.collect %g, %s : !gnn.graph<graph>, !gnn.tensor<dst, 2x3xf32> -> !gnn.tensor<dense, ?x2x3xf32>
  return %r : !gnn.tensor<dense, ?x2x3xf32>
}
func.func @weights_twice(%g: !gnn.graph<graph>, %l: !gnn.tensor<dense, ?x2x1xf32>, %h: !gnn.tensor<dense, ?x2x3xf32>) -> !gnn.tensor<dense, ?x2x3xf32> {
  %ls = gnn.attach %g, %l : !gnn.graph<graph>, !gnn.tensor<dense, ?x2x1xf32> -> !gnn.tensor<src, 2x1xf32>
  %le = gnn.gather %g, %ls : !gnn.graph<graph>, !gnn.tensor<src, 2x1xf32> -> !gnn.tensor<edge, 2x1xf32>
  %a = gnn.edge_softmax %g, %le {by = #gnn<domain dst>} : !gnn.graph<graph>, !gnn.tensor<edge, 2x1xf32> -> !gnn.tensor<edge, 2x1xf32>
  %d = gnn.dropout %a {p = 0.5 : f64, seed = 7 : i64} : !gnn.tensor<edge, 2x1xf32>
  %hs = gnn.attach %g, %h : !gnn.graph<graph>, !gnn.tensor<dense, ?x2x3xf32> -> !gnn.tensor<src, 2x3xf32>
  %he = gnn.gather %g, %hs : !gnn.graph<graph>, !gnn.tensor<src, 2x3xf32> -> !gnn.tensor<edge, 2x3xf32>
  %m = gnn.binary mul %d, %he : !gnn.tensor<edge, 2x1xf32>, !gnn.tensor<edge, 2x3xf32> -> !gnn.tensor<edge, 2x3xf32>
  %s = gnn.scatter sum %g, %m : !gnn.graph<graph>, !gnn.tensor<edge, 2x3xf32> -> !gnn.tensor<dst, 2x3xf32>
  %t = gnn.scatter max %g, %d : !gnn.graph<graph>, !gnn.tensor<edge, 2x1xf32> -> !gnn.tensor<dst, 2x1xf32>
  %r = gnn.collect %g, %s : !gnn.graph<graph>, !gnn.tensor<dst, 2x3xf32> -> !gnn.tensor<dense, ?x2x3xf32>
  %q = gnn.collect %g, %t : !gnn.graph<graph>, !gnn.tensor<dst, 2x1xf32> -> !gnn.tensor<dense, ?x2x1xf32>
  %z = gnn.binary add %r, %q : !gnn.tensor<dense, ?x2x3xf32>, !gnn.tensor<dense, ?x2x1xf32> -> !gnn.tensor<dense, ?x2x3xf32>
  return %z : !gnn.tensor<dense, ?x2x3xf32>
}
func.func @exp_used_thrice(%g: !gnn.graph<graph>, %l: !gnn.tensor<dense, ?x1xf32>, %h: !gnn.tensor<dense, ?x3xf32>) -> !gnn.tensor<dense, ?x3xf32> {
  %ls = gnn.attach %g, %l : !gnn.graph<graph>, !gnn.tensor<dense, ?x1xf32> -> !gnn.tensor<src, 1xf32>
  %le = gnn.gather %g, %ls : !gnn.graph<graph>, !gnn.tensor<src, 1xf32> -> !gnn.tensor<edge, 1xf32>
  %x = gnn.unary exp %le : !gnn.tensor<edge, 1xf32>
  %n = gnn.scatter sum %g, %x : !gnn.graph<graph>, !gnn.tensor<edge, 1xf32> -> !gnn.tensor<dst, 1xf32>
  %ne = gnn.gather %g, %n : !gnn.graph<graph>, !gnn.tensor<dst, 1xf32> -> !gnn.tensor<edge, 1xf32>
  %a = gnn.binary div %x, %ne : !gnn.tensor<edge, 1xf32>, !gnn.tensor<edge, 1xf32> -> !gnn.tensor<edge, 1xf32>
  %hs = gnn.attach %g, %h : !gnn.graph<graph>, !gnn.tensor<dense, ?x3xf32> -> !gnn.tensor<src, 3xf32>
  %he = gnn.gather %g, %hs : !gnn.graph<graph>, !gnn.tensor<src, 3xf32> -> !gnn.tensor<edge, 3xf32>
  %m = gnn.binary mul %a, %he : !gnn.tensor<edge, 1xf32>, !gnn.tensor<edge, 3xf32> -> !gnn.tensor<edge, 3xf32>
  %s = gnn.scatter sum %g, %m : !gnn.graph<graph>, !gnn.tensor<edge, 3xf32> -> !gnn.tensor<dst, 3xf32>
  %t = gnn.scatter max %g, %x : !gnn.graph<graph>, !gnn.tensor<edge, 1xf32> -> !gnn.tensor<dst, 1xf32>
  %r = gnn.collect %g, %s : !gnn.graph<graph>, !gnn.tensor<dst, 3xf32> -> !gnn.tensor<dense, ?x3xf32>
  %q = gnn.collect %g, %t : !gnn.graph<graph>, !gnn.tensor<dst, 1xf32> -> !gnn.tensor<dense, ?x1xf32>
  %z = gnn.binary sub %r, %q : !gnn.tensor<dense, ?x3xf32>, !gnn.tensor<dense, ?x1xf32> -> !gnn.tensor<dense, ?x3xf32>
  return %z : !gnn.tensor<dense, ?x3xf32>
}
func.func @softmax_by_src(%g: !gnn.graph<graph>, %l: !gnn.tensor<dense, ?x1xf32>, %h: !gnn.tensor<dense, ?x3xf32>) -> !gnn.tensor<dense, ?x3xf32> {
  %ls = gnn.attach %g, %l : !gnn.graph<graph>, !gnn.tensor<dense, ?x1xf32> -> !gnn.tensor<dst, 1xf32>
  %le = gnn.gather %g, %ls : !gnn.graph<graph>, !gnn.tensor<dst, 1xf32> -> !gnn.tensor<edge, 1xf32>
  %a = gnn.edge_softmax %g, %le {by = #gnn<domain src>} : !gnn.graph<graph>, !gnn.tensor<edge, 1xf32> -> !gnn.tensor<edge, 1xf32>
  %hs = gnn.attach %g, %h : !gnn.graph<graph>, !gnn.tensor<dense, ?x3xf32> -> !gnn.tensor<dst, 3xf32>
  %he = gnn.gather %g, %hs : !gnn.graph<graph>, !gnn.tensor<dst, 3xf32> -> !gnn.tensor<edge, 3xf32>
  %m = gnn.binary mul %he, %a : !gnn.tensor<edge, 3xf32>, !gnn.tensor<edge, 1xf32> -> !gnn.tensor<edge, 3xf32>
  %s = gnn.scatter sum %g, %m : !gnn.graph<graph>, !gnn.tensor<edge, 3xf32> -> !gnn.tensor<src, 3xf32>
  %u = gnn.scatter sum %g, %m : !gnn.graph<graph>, !gnn.tensor<edge, 3xf32> -> !gnn.tensor<dst, 3xf32>
  %r = gnn.collect %g, %s : !gnn.graph<graph>, !gnn.tensor<src, 3xf32> -> !gnn.tensor<dense, ?x3xf32>
  %q = gnn.collect %g, %u : !gnn.graph<graph>, !gnn.tensor<dst, 3xf32> -> !gnn.tensor<dense, ?x3xf32>
  %z = gnn.binary add %r, %q : !gnn.tensor<dense, ?x3xf32>, !gnn.tensor<dense, ?x3xf32> -> !gnn.tensor<dense, ?x3xf32>
  return %z : !gnn.tensor<dense, ?x3xf32>
}
func.func @two_graphs(%g1: !gnn.graph<graph>, %g2: !gnn.graph<graph>, %x: !gnn.tensor<dense, ?x4xf32>) -> !gnn.tensor<dense, ?x4xf32> {
  %h1 = gnn.attach %g1, %x : !gnn.graph<graph>, !gnn.tensor<dense, ?x4xf32> -> !gnn.tensor<src, 4xf32>
  %m1 = gnn.gather %g1, %h1 : !gnn.graph<graph>, !gnn.tensor<src, 4xf32> -> !gnn.tensor<edge, 4xf32>
  %s1 = gnn.scatter sum %g1, %m1 : !gnn.graph<graph>, !gnn.tensor<edge, 4xf32> -> !gnn.tensor<dst, 4xf32>
  %h2 = gnn.attach %g2, %x : !gnn.graph<graph>, !gnn.tensor<dense, ?x4xf32> -> !gnn.tensor<src, 4xf32>
  %m2 = gnn.gather %g2, %h2 : !gnn.graph<graph>, !gnn.tensor<src, 4xf32> -> !gnn.tensor<edge, 4xf32>
  %s2 = gnn.scatter max %g2, %m2 : !gnn.graph<graph>, !gnn.tensor<edge, 4xf32> -> !gnn.tensor<dst, 4xf32>
  %hd = gnn.attach %g1, %x : !gnn.graph<graph>, !gnn.tensor<dense, ?x4xf32> -> !gnn.tensor<dst, 4xf32>
  %md = gnn.gather %g1, %hd : !gnn.graph<graph>, !gnn.tensor<dst, 4xf32> -> !gnn.tensor<edge, 4xf32>
  %s3 = gnn.scatter min %g1, %md : !gnn.graph<graph>, !gnn.tensor<edge, 4xf32> -> !gnn.tensor<src, 4xf32>
  %c1 = gnn.collect %g1, %s1 : !gnn.graph<graph>, !gnn.tensor<dst, 4xf32> -> !gnn.tensor<dense, ?x4xf32>
  %c2 = gnn.collect %g2, %s2 : !gnn.graph<graph>, !gnn.tensor<dst, 4xf32> -> !gnn.tensor<dense, ?x4xf32>
  %c3 = gnn.collect %g1, %s3 : !gnn.graph<graph>, !gnn.tensor<src, 4xf32> -> !gnn.tensor<dense, ?x4xf32>
  %r = gnn.binary add %c1, %c2 : !gnn.tensor<dense, ?x4xf32>, !gnn.tensor<dense, ?x4xf32> -> !gnn.tensor<dense, ?x4xf32>
  %z = gnn.binary mul %r, %c3 : !gnn.tensor<dense, ?x4xf32>, !gnn.tensor<dense, ?x4xf32> -> !gnn.tensor<dense, ?x4xf32>
  return %z : !gnn.tensor<dense, ?x4xf32>
}
func.func @gather_other_graph(%g1: !gnn.graph<graph>, %g2: !gnn.graph<graph>, %x: !gnn.tensor<dense, ?x4xf32>) -> !gnn.tensor<dense, ?x4xf32> {
  %h = gnn.attach %g2, %x : !gnn.graph<graph>, !gnn.tensor<dense, ?x4xf32> -> !gnn.tensor<src, 4xf32>
  %m = gnn.gather %g2, %h : !gnn.graph<graph>, !gnn.tensor<src, 4xf32> -> !gnn.tensor<edge, 4xf32>
  %r = gnn.unary tanh %m : !gnn.tensor<edge, 4xf32>
  %s = gnn.scatter sum %g1, %r : !gnn.graph<graph>, !gnn.tensor<edge, 4xf32> -> !gnn.tensor<dst, 4xf32>
  %c = gnn.collect %g1, %s : !gnn.graph<graph>, !gnn.tensor<dst, 4xf32> -> !gnn.tensor<dense, ?x4xf32>
  return %c : !gnn.tensor<dense, ?x4xf32>
}
func.func @dependent_in_body(%g: !gnn.graph<graph>, %x: !gnn.tensor<dense, ?x4xf32>) -> !gnn.tensor<dense, ?x4xf32> {
  %h = gnn.attach %g, %x : !gnn.graph<graph>, !gnn.tensor<dense, ?x4xf32> -> !gnn.tensor<src, 4xf32>
  %m = gnn.gather %g, %h : !gnn.graph<graph>, !gnn.tensor<src, 4xf32> -> !gnn.tensor<edge, 4xf32>
  %mx = gnn.scatter max %g, %m : !gnn.graph<graph>, !gnn.tensor<edge, 4xf32> -> !gnn.tensor<dst, 4xf32>
  %mxe = gnn.gather %g, %mx : !gnn.graph<graph>, !gnn.tensor<dst, 4xf32> -> !gnn.tensor<edge, 4xf32>
  %d = gnn.binary sub %m, %mxe : !gnn.tensor<edge, 4xf32>, !gnn.tensor<edge, 4xf32> -> !gnn.tensor<edge, 4xf32>
  %e = gnn.unary exp %d : !gnn.tensor<edge, 4xf32>
  %s = gnn.scatter mean %g, %e : !gnn.graph<graph>, !gnn.tensor<edge, 4xf32> -> !gnn.tensor<dst, 4xf32>
  %c = gnn.collect %g, %s : !gnn.graph<graph>, !gnn.tensor<dst, 4xf32> -> !gnn.tensor<dense, ?x4xf32>
  return %c : !gnn.tensor<dense, ?x4xf32>
}
)mlir";

TEST(FusionDifferentialPartial, PartlyFusedChainsComputeTheSame) {
  Compiled c;
  ASSERT_TRUE(compileIR(c, kPartialIR));
  // What must stay: the softmax of softmax_then_max, weights_twice and
  // softmax_by_src with the gathers of their logits, and the gather on g2
  // of gather_other_graph.
  EXPECT_EQ(countOps(*c.fused, "gnn.edge_softmax"), 3);
  EXPECT_EQ(countOps(*c.fused, "gnn.gather"), 4);
  EXPECT_EQ(countOps(*c.fused, "gnn.scatter"), 0);
  std::vector<TestGraph> graphs = kGraphs.homogeneousGraphs();
  for (llvm::StringRef fn : {"softmax_then_max", "weights_twice",
                             "exp_used_thrice", "softmax_by_src", "two_graphs",
                             "gather_other_graph", "dependent_in_body"}) {
    SCOPED_TRACE(fn.str());
    c.entry = fn.str();
    bool twoGraphs = fn == "two_graphs" || fn == "gather_other_graph";
    for (size_t i = 0; i < graphs.size(); ++i) {
      const TestGraph &g = graphs[i];
      if (!twoGraphs) {
        expectSame(c, g, {}, /*training=*/false, 3);
        expectSame(c, g, {}, /*training=*/true, 3);
        continue;
      }
      // A second graph over the same vertices: the edges reversed (so with
      // the same edge count, which gather_other_graph needs: its edge
      // tensor of g2 is reduced over g1's edges).
      TestGraph second = g;
      Edges e;
      for (int64_t k = 0; k < g.graph->numEdges(); ++k)
        e.push_back({g.graph->edgeDst()[k], g.graph->edgeSrc()[k]});
      second.graph = makeGraph(e, g.numSrc(), g.numDst());
      Args args;
      ASSERT_TRUE(makeArgs(*c.unfused, c.entry, g, {}, 4, args));
      args[1] = second.value();
      interp::Tensor<double> unfused, fused;
      ASSERT_TRUE(run(*c.unfused, c.entry, args, unfused, false));
      ASSERT_TRUE(run(*c.fused, c.entry, args, fused, false));
      EXPECT_TRUE(near(fused, unfused)) << g.name;
    }
  }
}

//===----------------------------------------------------------------------===//
// Known bugs (disabled until fixed)
//===----------------------------------------------------------------------===//

/// softmax(l) * m where the values m broadcast against the weights (here
/// [heads, 1] weights and [d] values give [heads, d]): gnn-fuse builds a
/// softmax_sum whose value yield ([d]) does not have the result's rows
/// ([heads, d]) and the verifier rejects it, so --emit=mlir-fused fails on
/// a valid program.
TEST(FusionRegression, SoftmaxWeightsBroadcastAgainstValues) {
  constexpr llvm::StringLiteral source = R"(
layer SharedValues(d: int = 3, heads: int = 2):
    def forward(g: Graph, s: f32[N, heads, 1], x: f32[N, d]) -> f32[N, heads, d]:
        g.set_vertex_attr({"s": s, "x": x})
        for v in g.dst_vertex:
            a = g.softmax([u.s for u in v.innbs])
            v.o = g.sum(a * [u.x for u in v.innbs])
        return [v.o for v in g.dst_vertex]
)";
  Compiled c;
  ASSERT_TRUE(lower(c, source, "shared_values.gnn", "SharedValues", {}));
  ASSERT_TRUE(fuse(c));
  for (const TestGraph &g : kGraphs.homogeneousGraphs())
    expectSame(c, g, {}, false);
}

/// exp(l) / gather(scatter_sum(exp(l))) is matched as a softmax over g even
/// when the normalising sum runs over another graph g2: the fused op
/// normalises over g's in-edges instead.
TEST(FusionRegression, HandWrittenSoftmaxNormalisedOverAnotherGraph) {
  constexpr llvm::StringLiteral ir = R"mlir(
func.func @f(%g: !gnn.graph<graph>, %g2: !gnn.graph<graph>, %l: !gnn.tensor<dense, ?x1xf32>, %h: !gnn.tensor<dense, ?x3xf32>) -> !gnn.tensor<dense, ?x3xf32> {
  %ls = gnn.attach %g, %l : !gnn.graph<graph>, !gnn.tensor<dense, ?x1xf32> -> !gnn.tensor<src, 1xf32>
  %le = gnn.gather %g, %ls : !gnn.graph<graph>, !gnn.tensor<src, 1xf32> -> !gnn.tensor<edge, 1xf32>
  %x = gnn.unary exp %le : !gnn.tensor<edge, 1xf32>
  %n = gnn.scatter sum %g2, %x : !gnn.graph<graph>, !gnn.tensor<edge, 1xf32> -> !gnn.tensor<dst, 1xf32>
  %ne = gnn.gather %g, %n : !gnn.graph<graph>, !gnn.tensor<dst, 1xf32> -> !gnn.tensor<edge, 1xf32>
  %a = gnn.binary div %x, %ne : !gnn.tensor<edge, 1xf32>, !gnn.tensor<edge, 1xf32> -> !gnn.tensor<edge, 1xf32>
  %hs = gnn.attach %g, %h : !gnn.graph<graph>, !gnn.tensor<dense, ?x3xf32> -> !gnn.tensor<src, 3xf32>
  %he = gnn.gather %g, %hs : !gnn.graph<graph>, !gnn.tensor<src, 3xf32> -> !gnn.tensor<edge, 3xf32>
  %m = gnn.binary mul %a, %he : !gnn.tensor<edge, 1xf32>, !gnn.tensor<edge, 3xf32> -> !gnn.tensor<edge, 3xf32>
  %s = gnn.scatter sum %g, %m : !gnn.graph<graph>, !gnn.tensor<edge, 3xf32> -> !gnn.tensor<dst, 3xf32>
  %r = gnn.collect %g, %s : !gnn.graph<graph>, !gnn.tensor<dst, 3xf32> -> !gnn.tensor<dense, ?x3xf32>
  return %r : !gnn.tensor<dense, ?x3xf32>
}
)mlir";
  Compiled c;
  ASSERT_TRUE(compileIR(c, ir));
  c.entry = "f";
  // g2: g with the destinations rotated by one edge. Every vertex keeps its
  // in-degree (so no normaliser is 0), but sums other edges' exp(l).
  const TestGraph g = kGraphs.homogeneousGraphs().front();
  TestGraph second = g;
  Edges e;
  int64_t numEdges = g.graph->numEdges();
  for (int64_t k = 0; k < numEdges; ++k)
    e.push_back(
        {g.graph->edgeSrc()[k], g.graph->edgeDst()[(k + 1) % numEdges]});
  second.graph = makeGraph(e, g.numSrc(), g.numDst());
  Args args;
  ASSERT_TRUE(makeArgs(*c.unfused, "f", g, {}, 6, args));
  args[1] = second.value();
  interp::Tensor<double> unfused, fused;
  ASSERT_TRUE(run(*c.unfused, "f", args, unfused, false));
  ASSERT_TRUE(run(*c.fused, "f", args, fused, false));
  EXPECT_TRUE(near(fused, unfused));
}

} // namespace
