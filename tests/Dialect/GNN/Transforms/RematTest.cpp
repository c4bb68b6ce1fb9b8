//===- RematTest.cpp - gnn-remat against the recomputing backward ---------===//
//
// Part of gnnc. gnn-autodiff's @F.backward recomputes the whole forward; it
// is checked against finite differences (AutodiffTest.cpp) and PyG
// (GoldenTest.cpp), so it is the reference here. gnn-remat splits it into
// @F.train, which returns F's result and the values it stores, and an
// @F.backward that reads them. For every layer and model of the examples,
// every policy (auto, always, never), unfused and after the fusion
// pipeline, in inference and training (dropout) mode, the interpreter
// checks in double that
//
//   - @F.train returns what @F returns, and one value per `gnn.saved`;
//   - @F.backward(args, saved, c) returns what the reference
//     @F.backward(args, c) returns, to 1e-10 relative;
//   - `always` and `never` give the same gradients;
//   - `always` stores no per-edge value; `never` recomputes none: every
//     per-edge value its backward reads is an argument.
//
// And for GAT, the point of the pass: with `auto`, the training forward
// keeps one logsumexp statistic per vertex and head, and neither function
// holds an edge tensor outside a fused aggregation once fused.
//
//===----------------------------------------------------------------------===//

#include "TestSupport.h"

#include "gnnc/Dialect/GNN/Transforms/Passes.h"
#include "gnnc/Interpreter/Interpreter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/Support/raw_ostream.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

using namespace gnnc;
using namespace gnnc::testing_support;

namespace {

GraphSuite makeGraphSuite() {
  GraphSuite s;
  s.homogeneousSeed = 4242;
  s.rmat = {5, 120, 3, 5}; // 32 vertices
  s.preferential = {30, 2, 5, 2, 4};
  s.noEdges = 3;
  s.batchedSeed = 8;
  s.batch = {{8, 24}, {0}, {6, 0, 2, 1}, {1}};
  s.blockSeed = 19;
  s.block = {20, 9, 10.0, 2.0, true};
  s.heteroSeed = 23;
  s.hetero = {4, 50, 1, 2};
  s.noGraphVertices = 6;
  return s;
}

const GraphSuite kGraphs = makeGraphSuite();

const char *const kPolicies[] = {"auto", "always", "never"};

/// The example with gnn-autodiff only (the reference), and with
/// gnn-remat(policy), optionally fused.
::testing::AssertionResult compile(mlir::MLIRContext &context,
                                   const ExampleCase &ec,
                                   const std::string &policy, bool fuse,
                                   mlir::OwningOpRef<mlir::ModuleOp> &module) {
  if (auto ok = lowerExample(context, ec.file, ec.entry, ec.defines, module);
      !ok)
    return ok;
  return runPipeline(context, *module, [&](mlir::PassManager &pm) {
    gnn::GNNRematOptions options;
    options.policy = policy;
    if (policy.empty()) {
      pm.addPass(gnn::createGNNAutodiff());
    } else if (fuse) {
      gnn::buildTrainingPipeline(pm, options);
    } else {
      pm.addPass(gnn::createGNNAutodiff());
      pm.addPass(gnn::createGNNRemat(options));
    }
  });
}

::testing::AssertionResult near(const std::vector<Tensor> &got,
                                const std::vector<Tensor> &want,
                                double tolerance, const std::string &what) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure()
           << what << ": " << got.size() << " tensors, want " << want.size();
  for (size_t k = 0; k < want.size(); ++k) {
    if (got[k].shape != want[k].shape)
      return ::testing::AssertionFailure()
             << what << " " << k << ": shapes differ";
    double scale = 0;
    for (double x : want[k].data)
      scale = std::max(scale, std::abs(x));
    for (size_t j = 0; j < want[k].data.size(); ++j)
      if (!(std::abs(got[k].data[j] - want[k].data[j]) <=
            tolerance * (1 + scale)))
        return ::testing::AssertionFailure()
               << what << " " << k << " element " << j << ": " << got[k].data[j]
               << ", want " << want[k].data[j];
  }
  return ::testing::AssertionSuccess();
}

/// Runs @F.train then @F.backward of `module`; fills `y` and `grads`.
::testing::AssertionResult trainAndBackward(mlir::ModuleOp module,
                                            const std::string &entry,
                                            const Args &args, const Tensor &c,
                                            bool training, Tensor &y,
                                            std::vector<Tensor> &grads) {
  auto train = module.lookupSymbol<mlir::func::FuncOp>(entry + ".train");
  auto backward = module.lookupSymbol<mlir::func::FuncOp>(entry + ".backward");
  if (!train || !backward)
    return ::testing::AssertionFailure()
           << "no @" << entry << ".train/.backward";
  std::vector<Tensor> outs;
  if (auto ok = run(module, entry + ".train", args, outs, training); !ok)
    return ok;
  if (outs.size() != train.getNumResults())
    return ::testing::AssertionFailure() << "@train returned " << outs.size();
  y = outs.front();
  Args backArgs = args;
  for (size_t k = 1; k < outs.size(); ++k)
    backArgs.push_back(outs[k]);
  backArgs.push_back(c);
  if (backArgs.size() != backward.getNumArguments())
    return ::testing::AssertionFailure()
           << "@backward takes " << backward.getNumArguments()
           << " arguments, the forward saved " << outs.size() - 1;
  return run(module, entry + ".backward", backArgs, grads, training);
}

class RematExample : public ::testing::TestWithParam<ExampleCase> {};

/// Signatures: @F.train returns F's result then the saved values, each
/// named; @F.backward takes F's arguments, the same values, the cotangent.
TEST_P(RematExample, SavedValuesLineUp) {
  const ExampleCase &ec = GetParam();
  for (const char *policy : kPolicies) {
    SCOPED_TRACE(policy);
    mlir::MLIRContext context;
    mlir::OwningOpRef<mlir::ModuleOp> module;
    ASSERT_TRUE(compile(context, ec, policy, /*fuse=*/false, module));
    int pairs = 0;
    for (auto train : module->getOps<mlir::func::FuncOp>()) {
      auto of = train->getAttrOfType<mlir::FlatSymbolRefAttr>("gnn.train_of");
      if (!of)
        continue;
      ++pairs;
      auto func = module->lookupSymbol<mlir::func::FuncOp>(of.getValue());
      auto backward = module->lookupSymbol<mlir::func::FuncOp>(
          (of.getValue() + ".backward").str());
      ASSERT_TRUE(func && backward);
      unsigned n = func.getNumArguments();
      unsigned saved = train.getNumResults() - 1;
      EXPECT_EQ(train.getArgumentTypes(), func.getArgumentTypes());
      EXPECT_EQ(train.getResultTypes()[0], func.getResultTypes()[0]);
      ASSERT_EQ(backward.getNumArguments(), n + saved + 1);
      for (unsigned k = 0; k < saved; ++k) {
        auto name =
            train.getResultAttrOfType<mlir::StringAttr>(1 + k, "gnn.saved");
        ASSERT_TRUE(name);
        EXPECT_EQ(backward.getArgument(n + k).getType(),
                  train.getResultTypes()[1 + k]);
        auto argName =
            backward.getArgAttrOfType<mlir::StringAttr>(n + k, "gnn.saved");
        ASSERT_TRUE(argName);
        EXPECT_EQ(argName.getValue(), name.getValue());
        bool edge = gnn::isEdge(backward.getArgument(n + k));
        if (std::string(policy) == "always") {
          EXPECT_FALSE(edge)
              << "always stored per-edge " << name.getValue().str();
        }
      }
      if (std::string(policy) == "never") {
        // Nothing per edge is recomputed: no gather is left whose result
        // the backward reads unfused (all per-edge forward values come in
        // as arguments).
        EXPECT_EQ(countOps(backward, "gnn.edge_softmax"), 0)
            << "never recomputed an edge_softmax";
      }
    }
    EXPECT_GE(pairs, 1);
  }
}

/// Gradients of every policy, unfused and fused, match the recomputing
/// reference backward; always and never agree with each other.
TEST_P(RematExample, GradientsMatchTheReference) {
  const ExampleCase &ec = GetParam();
  mlir::MLIRContext refContext;
  mlir::OwningOpRef<mlir::ModuleOp> reference;
  ASSERT_TRUE(compile(refContext, ec, "", false, reference));
  struct Variant {
    std::string policy;
    bool fuse;
    mlir::MLIRContext context;
    mlir::OwningOpRef<mlir::ModuleOp> module;
  };
  std::vector<std::unique_ptr<Variant>> variants;
  for (const char *policy : kPolicies)
    for (bool fuse : {false, true}) {
      auto v = std::make_unique<Variant>();
      v->policy = policy;
      v->fuse = fuse;
      ASSERT_TRUE(compile(v->context, ec, policy, fuse, v->module));
      variants.push_back(std::move(v));
    }
  int64_t checked = 0;
  uint64_t seed = 1;
  for (const TestGraph &g : kGraphs.forEntry(*reference, ec.entry)) {
    for (bool training : {false, true}) {
      if (training && !ec.hasDropout)
        continue;
      SCOPED_TRACE(g.name + (training ? " training" : " inference"));
      auto func = reference->lookupSymbol<mlir::func::FuncOp>(ec.entry);
      Args args;
      ASSERT_TRUE(makeArgs(func, g, ec.spec, seed++, args));
      std::vector<Tensor> y;
      ASSERT_TRUE(run(*reference, ec.entry, args, y, training));
      std::mt19937_64 rng(seed * 31);
      Tensor c = randomTensor(y[0].shape, rng);
      Args refArgs = args;
      refArgs.push_back(c);
      std::vector<Tensor> want;
      ASSERT_TRUE(
          run(*reference, ec.entry + ".backward", refArgs, want, training));
      std::vector<Tensor> always, never;
      for (auto &v : variants) {
        SCOPED_TRACE(v->policy + (v->fuse ? " fused" : " unfused"));
        Tensor trainY;
        std::vector<Tensor> grads;
        ASSERT_TRUE(trainAndBackward(*v->module, ec.entry, args, c, training,
                                     trainY, grads));
        EXPECT_TRUE(near({trainY}, y, 1e-10, "forward"));
        EXPECT_TRUE(near(grads, want, 1e-10, "gradient"));
        if (!v->fuse && v->policy == "always")
          always = grads;
        if (!v->fuse && v->policy == "never")
          never = grads;
        ++checked;
      }
      EXPECT_TRUE(near(always, never, 1e-10, "always vs never"));
    }
  }
  EXPECT_GT(checked, 0);
}

INSTANTIATE_TEST_SUITE_P(
    Examples, RematExample,
    ::testing::ValuesIn(exampleCases(ExampleSizes::FiniteDifferences)),
    [](const auto &info) { return caseName(info.param); });

/// GAT with auto: the forward keeps O(N.H) softmax statistics, not O(E.H)
/// attention weights, and once fused neither function holds an edge tensor
/// outside an aggregation (the backward recomputes the weights inside its
/// kernels).
TEST(RematGAT, KeepsPerVertexSoftmaxStatistics) {
  ExampleCase gat;
  gat.file = "gat.gnn";
  gat.entry = "GAT";
  gat.defines = {{"in_dim", 12}, {"hidden", 4}, {"heads", 3}, {"classes", 5}};
  for (bool fuse : {false, true}) {
    mlir::MLIRContext context;
    mlir::OwningOpRef<mlir::ModuleOp> module;
    ASSERT_TRUE(compile(context, gat, "auto", fuse, module));
    auto train = module->lookupSymbol<mlir::func::FuncOp>("GAT.train");
    auto backward = module->lookupSymbol<mlir::func::FuncOp>("GAT.backward");
    ASSERT_TRUE(train && backward);
    int statistics = 0;
    for (unsigned k = 1; k < train.getNumResults(); ++k) {
      auto t = mlir::cast<gnn::DomainTensorType>(train.getResultTypes()[k]);
      auto name = train.getResultAttrOfType<mlir::StringAttr>(k, "gnn.saved");
      EXPECT_NE(t.getDomain(), gnn::Domain::edge) << name.getValue().str();
      if (name.getValue().starts_with("softmax_lse")) {
        ++statistics;
        // One per destination and head: [heads, 1] or [1, 1] per vertex.
        EXPECT_EQ(t.getDomain(), gnn::Domain::dst);
        EXPECT_EQ(t.getShape().back(), 1);
      }
    }
    EXPECT_EQ(statistics, 2) << "one statistic per attention layer";
    if (!fuse)
      continue;
    for (auto f : {train, backward})
      for (mlir::Operation &op : f.getBody().front())
        for (mlir::Value r : op.getResults())
          EXPECT_FALSE(gnn::isEdge(r))
              << f.getName().str() << ": " << op.getName().getStringRef().str()
              << " makes an edge tensor";
    // The statistic shares the forward's pass over the edges.
    int merged = 0;
    train.walk([&](gnn::AggregateOp op) {
      for (unsigned i = 0; i < op.getNumResults(); ++i)
        if (op.getKind(i) == "logsumexp" && op.getNumResults() > 1)
          ++merged;
    });
    EXPECT_EQ(merged, 2);
  }
}

/// The report names every decision with its bytes and location, and
/// `never` stores the attention weights that `auto` recomputes.
TEST(RematGAT, ReportShowsTheDecisions) {
  ExampleCase gat;
  gat.file = "gat.gnn";
  gat.entry = "GATConv";
  gat.defines = {{"in_dim", 12}, {"out_dim", 4}, {"heads", 3}};
  for (const char *policy : kPolicies) {
    mlir::MLIRContext context;
    mlir::OwningOpRef<mlir::ModuleOp> module;
    ASSERT_TRUE(
        lowerExample(context, gat.file, gat.entry, gat.defines, module));
    ASSERT_TRUE(runPipeline(context, *module, [](mlir::PassManager &pm) {
      pm.addPass(gnn::createGNNAutodiff());
    }));
    std::string text;
    llvm::raw_string_ostream os(text);
    gnn::GNNRematOptions options;
    options.policy = policy;
    options.vertices = 100;
    options.edges = 1000;
    ASSERT_TRUE(mlir::succeeded(gnn::runRemat(*module, options, &os)));
    SCOPED_TRACE(text);
    if (std::string(policy) == "never") {
      // The weights: 1000 edges * 3 heads * 4 bytes.
      EXPECT_NE(text.find("store     gat.gnn:"), std::string::npos);
      EXPECT_NE(text.find("E*12"), std::string::npos);
      EXPECT_EQ(text.find("softmax statistic"), std::string::npos);
    } else {
      // The statistic: 100 vertices * 3 heads * 4 bytes, and no edge bytes.
      EXPECT_NE(text.find("softmax statistic (logsumexp)"), std::string::npos);
      EXPECT_NE(text.find("N*12"), std::string::npos);
      EXPECT_NE(text.find("+ 0 B per-edge"), std::string::npos);
    }
  }
}

} // namespace
