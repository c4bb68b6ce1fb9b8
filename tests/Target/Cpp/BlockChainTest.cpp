//===- BlockChainTest.cpp - Two-hop block models against full-graph ones --===//
//
// Part of gnnc. dsl-examples/sage2_block.gnn and gat2_block.gnn run a
// two-layer model over two sampled blocks that chain
// (`forward(g1: Block[N0, N1], g2: Block[N1, N2], x: f32[N0, ...])`). On
// full neighbourhoods they compute, on the seed vertices, exactly what
// sage_mean.gnn's and gat.gnn's models compute on the whole graph with the
// same parameters. The blocks are built here, independently of any
// sampler: for 40 random seeds of Cora, block 2 has the seeds as
// destinations and as sources the seeds followed by their in-neighbours
// (each once, in order of first appearance), with every in-edge; block 1
// has block 2's sources as destinations and, as sources, those followed by
// their in-neighbours, with every in-edge. GAT runs on Cora with a
// self-loop per vertex (as its full-graph training does), GraphSAGE on Cora
// as it is (its self term stands apart from the neighbours).
//
// Checked, with dropout off:
//   - the generated C++ of the models as written (Cora's 1433 features) and
//     the reference interpreter in double: the block model's rows against
//     the full model's seed rows;
//   - the training entry points (small hyper-parameters, --training): the
//     block model's gradients of every parameter and of its input against
//     the full model's with the cotangent on the seed rows only (the full
//     model's input gradient is zero off the blocks' first sources);
//   - the entry points and the interpreter reject blocks that do not chain
//     (g2's sources are not g1's destinations), naming both arguments.
//
// Entry points with several graphs are not called through rt::Invocation
// (it binds one graph per kind): ExecTest.cpp leaves them to this file.
//
//===----------------------------------------------------------------------===//

#include "ExecSupport.h"
#include "TestSupport.h"

#include "ex_gat/gat.h"
#include "ex_gat2_block/gat2_block.h"
#include "ex_sage2_block/sage2_block.h"
#include "ex_sage_mean/sage_mean.h"
#include "small_gat2_block_GAT2Block/gat2_block.h"
#include "small_gat_GAT/gat.h"
#include "small_sage2_block_GraphSAGE2Block/sage2_block.h"
#include "small_sage_mean_GraphSAGE/sage_mean.h"

#include "gnnc/Interpreter/Interpreter.h"
#include "gnnc/runtime/Dataset.h"
#include "gnnc/runtime/Train.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

using namespace gnnc;
using namespace gnnc::testing_support;

namespace {

/// Relative differences are taken against max(|want|, kRelFloor * the
/// largest |want|): the float code sums in another order than the full
/// model (the matmuls over other row sets, cblas' blocking).
constexpr double kRelFloor = 1e-2;
/// The generated code in float, against itself on the full graph.
constexpr double kFloatTolerance = 1e-4;
/// The interpreter in double, against itself on the full graph.
constexpr double kDoubleTolerance = 1e-10;

/// Largest absolute and relative differences of `got` against `want`.
struct Diff {
  double abs = 0, rel = 0;
};
template <typename A, typename B>
Diff difference(const std::vector<A> &got, const std::vector<B> &want) {
  Diff d;
  double scale = 0;
  for (B w : want)
    scale = std::max(scale, std::fabs(static_cast<double>(w)));
  EXPECT_EQ(got.size(), want.size());
  for (size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
    double a = static_cast<double>(got[i]), b = static_cast<double>(want[i]);
    double e = std::fabs(a - b);
    if (!std::isfinite(a) || !std::isfinite(b))
      e = INFINITY;
    d.abs = std::max(d.abs, e);
    d.rel = std::max(d.rel, e / std::max(std::fabs(b), kRelFloor * scale));
  }
  return d;
}

void report(const std::string &what, Diff d) {
  std::cout << "[          ] " << what << ": max abs " << d.abs << ", max rel "
            << d.rel << "\n";
}

/// Memory from std::aligned_alloc, 64-byte aligned, filled with NaN.
struct Buffer {
  explicit Buffer(std::size_t bytes)
      : data(bytes
                 ? std::aligned_alloc(rt::kWorkspaceAlign,
                                      rt::alignUp(static_cast<int64_t>(bytes)))
                 : nullptr,
             &std::free) {
    if (bytes)
      std::memset(data.get(), 0xFF, bytes);
  }
  std::unique_ptr<void, decltype(&std::free)> data;
};

/// The graphs of one check: the full graph and the two blocks of the seeds.
struct Hops {
  GraphPtr full, g1, g2;
  std::vector<int64_t> seeds;
  /// Global ids of the sources of each block (destinations first).
  std::vector<int64_t> src1, src2;
};

/// A block with every in-edge of the vertices `dst` of `g`: its sources are
/// `dst` followed by their in-neighbours, each once, in order of first
/// appearance; its edges keep each destination's in-edges in `g`'s order.
GraphPtr fullBlock(const rt::Graph &g, const std::vector<int64_t> &dst,
                   std::vector<int64_t> &src) {
  std::unordered_map<int64_t, int64_t> local;
  src = dst;
  for (size_t i = 0; i < dst.size(); ++i)
    local.emplace(dst[i], static_cast<int64_t>(i));
  std::vector<int64_t> es, ed;
  for (size_t i = 0; i < dst.size(); ++i) {
    int64_t v = dst[i];
    for (int64_t k = g.inPtr()[v]; k < g.inPtr()[v + 1]; ++k) {
      int64_t u = g.inSrc()[k];
      auto [it, inserted] = local.emplace(u, static_cast<int64_t>(src.size()));
      if (inserted)
        src.push_back(u);
      es.push_back(it->second);
      ed.push_back(static_cast<int64_t>(i));
    }
  }
  return makeGraph(es, ed, static_cast<int64_t>(src.size()),
                   static_cast<int64_t>(dst.size()));
}

const rt::Dataset &cora() {
  static rt::Dataset ds;
  static rt::Status status = rt::findDataset("cora", ds);
  EXPECT_TRUE(status.ok()) << status.message();
  return ds;
}

/// Cora (with a self-loop per vertex when `selfLoops`), 40 seeds and their
/// two full-neighbourhood blocks.
Hops makeHops(bool selfLoops) {
  const rt::Dataset &ds = cora();
  Hops h;
  h.full = makeGraph(ds.EdgeSrc, ds.EdgeDst, ds.NumNodes, ds.NumNodes);
  if (selfLoops) {
    auto looped = std::make_shared<rt::Graph>();
    EXPECT_TRUE(rt::addSelfLoops(*h.full, *looped).ok());
    h.full = looped;
  }
  std::mt19937_64 rng(2024);
  std::vector<int64_t> all(ds.NumNodes);
  for (int64_t v = 0; v < ds.NumNodes; ++v)
    all[v] = v;
  std::shuffle(all.begin(), all.end(), rng);
  h.seeds.assign(all.begin(), all.begin() + 40);
  h.g2 = fullBlock(*h.full, h.seeds, h.src2);
  h.g1 = fullBlock(*h.full, h.src2, h.src1);
  return h;
}

/// Rows `ids` of a row-major [n, width] tensor.
template <typename T>
std::vector<T> rowsOf(const std::vector<T> &t, int64_t width,
                      const std::vector<int64_t> &ids) {
  std::vector<T> out;
  out.reserve(ids.size() * width);
  for (int64_t v : ids)
    out.insert(out.end(), t.begin() + v * width, t.begin() + (v + 1) * width);
  return out;
}

/// Parameter values shared by the full and the block model, by path:
/// uniform in [-s, s] with s = sqrt(6 / (fan_in + fan_out)) for matrices
/// (glorot's range) and 0.1 for vectors, so that biases count too.
template <typename P>
std::map<std::string, std::vector<float>> randomParams(uint64_t seed) {
  std::map<std::string, std::vector<float>> out;
  std::mt19937_64 rng(seed);
  for (int i = 0; i < P::kNumParams; ++i) {
    double s = 0.1;
    if (P::kRanks[i] >= 2)
      s = std::sqrt(6.0 / static_cast<double>(P::kShapes[i][0] +
                                              P::kShapes[i][P::kRanks[i] - 1]));
    std::uniform_real_distribution<float> unit(static_cast<float>(-s),
                                               static_cast<float>(s));
    std::vector<float> &v = out[P::kPaths[i]];
    v.resize(P::kNumElements[i]);
    for (float &x : v)
      x = unit(rng);
  }
  return out;
}

/// A parameter struct of type P pointing into `values` (by path).
template <typename P>
P bind(std::map<std::string, std::vector<float>> &values) {
  P p{};
  for (int i = 0; i < P::kNumParams; ++i) {
    auto it = values.find(P::kPaths[i]);
    EXPECT_NE(it, values.end()) << "no parameter " << P::kPaths[i];
    if (it != values.end()) {
      EXPECT_EQ(static_cast<int64_t>(it->second.size()), P::kNumElements[i])
          << P::kPaths[i];
      p.set(i, it->second.data());
    }
  }
  return p;
}

//===----------------------------------------------------------------------===//
// The models as written, generated C++ and interpreter
//===----------------------------------------------------------------------===//

/// One pair of models: the full-graph one and the block one of the same
/// parameters, in the generated C++ of the ex_ modules and in the source
/// for the interpreter.
template <typename FullP, typename BlockP> struct ModelPair {
  const char *fullFile, *fullEntry, *blockFile, *blockEntry;
  bool selfLoops;
  int64_t classes;
  rt::Status (*full)(const rt::Graph &, const float *, const FullP &, float *,
                     void *, bool, uint64_t);
  std::size_t (*fullBytes)(const rt::Graph &);
  rt::Status (*block)(const rt::Graph &, const rt::Graph &, const float *,
                      const BlockP &, float *, void *, bool, uint64_t);
  std::size_t (*blockBytes)(const rt::Graph &, const rt::Graph &);
};

template <typename FullP, typename BlockP>
void checkGenerated(const ModelPair<FullP, BlockP> &m, const Hops &h,
                    std::map<std::string, std::vector<float>> &values) {
  const rt::Dataset &ds = cora();
  const int64_t width = ds.NumFeatures, classes = m.classes;
  FullP fullParams = bind<FullP>(values);
  BlockP blockParams = bind<BlockP>(values);

  std::vector<float> fullOut(h.full->numDst() * classes);
  Buffer fullWs(m.fullBytes(*h.full));
  rt::Status s = m.full(*h.full, ds.X.data(), fullParams, fullOut.data(),
                        fullWs.data.get(), false, 0);
  ASSERT_TRUE(s.ok()) << s.message();

  std::vector<float> x = rowsOf(ds.X, width, h.src1);
  std::vector<float> blockOut(h.seeds.size() * classes);
  Buffer blockWs(m.blockBytes(*h.g1, *h.g2));
  s = m.block(*h.g1, *h.g2, x.data(), blockParams, blockOut.data(),
              blockWs.data.get(), false, 0);
  ASSERT_TRUE(s.ok()) << s.message();

  Diff d = difference(blockOut, rowsOf(fullOut, classes, h.seeds));
  report(std::string(m.blockEntry) + " vs " + m.fullEntry +
             " (generated C++, float)",
         d);
  EXPECT_LE(d.rel, kFloatTolerance);

  // Blocks that do not chain: g1 in place of g2 (its sources are not its
  // destinations).
  s = m.block(*h.g1, *h.g1, x.data(), blockParams, blockOut.data(),
              blockWs.data.get(), false, 0);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("the sources of block 'g2' must be the "
                             "destinations of block 'g1'"),
            std::string::npos)
      << s.message();
}

/// A float tensor in double, for the interpreter.
interp::Tensor<double> toDouble(const std::vector<float> &data,
                                std::vector<int64_t> shape) {
  return interp::Tensor<double>::dense(
      std::move(shape), std::vector<double>(data.begin(), data.end()));
}

/// Runs @entry in the interpreter in double: the graphs in order, `x`, and
/// every parameter by path.
::testing::AssertionResult
interpret(mlir::ModuleOp module, const std::string &entry,
          const std::vector<GraphPtr> &graphs, GK kind,
          const interp::Tensor<double> &x,
          std::map<std::string, std::vector<float>> &values,
          interp::Tensor<double> &out) {
  auto func = module.lookupSymbol<mlir::func::FuncOp>(entry);
  if (!func)
    return ::testing::AssertionFailure() << "no @" << entry;
  std::vector<interp::Value<double>> args;
  size_t g = 0;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    if (mlir::isa<gnn::GraphType>(func.getArgument(i).getType())) {
      args.push_back(graphValue(graphs.at(g++), kind));
      continue;
    }
    std::string name = argName(func, i);
    if (name == "x") {
      args.push_back(x);
      continue;
    }
    auto it = values.find(name);
    if (it == values.end())
      return ::testing::AssertionFailure() << "no parameter " << name;
    auto type =
        mlir::cast<gnn::DomainTensorType>(func.getArgument(i).getType());
    args.push_back(
        toDouble(it->second, std::vector<int64_t>(type.getShape().begin(),
                                                  type.getShape().end())));
  }
  rt::Status s = interp::run<double>(module, entry, args, out);
  if (!s.ok())
    return ::testing::AssertionFailure() << s.message();
  return ::testing::AssertionSuccess();
}

template <typename FullP, typename BlockP>
void checkInterpreter(const ModelPair<FullP, BlockP> &m, const Hops &h,
                      std::map<std::string, std::vector<float>> &values) {
  const rt::Dataset &ds = cora();
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> full, block;
  ASSERT_TRUE(lowerExample(context, m.fullFile, m.fullEntry, {}, full));
  ASSERT_TRUE(lowerExample(context, m.blockFile, m.blockEntry, {}, block));
  interp::Tensor<double> fullOut, blockOut;
  ASSERT_TRUE(interpret(*full, m.fullEntry, {h.full}, GK::graph,
                        toDouble(ds.X, {ds.NumNodes, ds.NumFeatures}), values,
                        fullOut));
  std::vector<float> x = rowsOf(ds.X, ds.NumFeatures, h.src1);
  interp::Tensor<double> xBlock =
      toDouble(x, {static_cast<int64_t>(h.src1.size()), ds.NumFeatures});
  ASSERT_TRUE(interpret(*block, m.blockEntry, {h.g1, h.g2}, GK::block, xBlock,
                        values, blockOut));
  Diff d = difference(blockOut.data, rowsOf(fullOut.data, m.classes, h.seeds));
  report(std::string(m.blockEntry) + " vs " + m.fullEntry +
             " (interpreter, double)",
         d);
  EXPECT_LE(d.rel, kDoubleTolerance);

  // The interpreter checks the chain too.
  interp::Tensor<double> unused;
  ::testing::AssertionResult r = interpret(*block, m.blockEntry, {h.g1, h.g1},
                                           GK::block, xBlock, values, unused);
  ASSERT_FALSE(r);
  EXPECT_NE(std::string(r.message())
                .find("the sources of 'g2' must be the "
                      "destinations of 'g1'"),
            std::string::npos)
      << r.message();
}

TEST(BlockChain, GraphSAGEMatchesFullGraphOnSeeds) {
  Hops h = makeHops(/*selfLoops=*/false);
  std::cout << "[          ] seeds 40, block 2: " << h.g2->numSrc()
            << " sources, " << h.g2->numEdges()
            << " edges; block 1: " << h.g1->numSrc() << " sources, "
            << h.g1->numEdges() << " edges\n";
  ModelPair<ex_sage_mean::GraphSAGE_Params,
            ex_sage2_block::GraphSAGE2Block_Params>
      m{"sage_mean.gnn",
        "GraphSAGE",
        "sage2_block.gnn",
        "GraphSAGE2Block",
        false,
        7,
        &ex_sage_mean::GraphSAGE,
        &ex_sage_mean::GraphSAGE_workspace_bytes,
        &ex_sage2_block::GraphSAGE2Block,
        &ex_sage2_block::GraphSAGE2Block_workspace_bytes};
  auto values = randomParams<ex_sage_mean::GraphSAGE_Params>(1);
  checkGenerated(m, h, values);
  checkInterpreter(m, h, values);
}

TEST(BlockChain, GATMatchesFullGraphOnSeeds) {
  Hops h = makeHops(/*selfLoops=*/true);
  ModelPair<ex_gat::GAT_Params, ex_gat2_block::GAT2Block_Params> m{
      "gat.gnn",
      "GAT",
      "gat2_block.gnn",
      "GAT2Block",
      true,
      7,
      &ex_gat::GAT,
      &ex_gat::GAT_workspace_bytes,
      &ex_gat2_block::GAT2Block,
      &ex_gat2_block::GAT2Block_workspace_bytes};
  auto values = randomParams<ex_gat::GAT_Params>(2);
  checkGenerated(m, h, values);
  checkInterpreter(m, h, values);
}

//===----------------------------------------------------------------------===//
// Gradients: the training entry points of the small modules
//===----------------------------------------------------------------------===//

/// What F_train and F_backward return: the output, the input's gradient
/// and the parameters' gradients by path.
template <typename P, typename S> struct Training {
  std::vector<float> out, gradX;
  std::map<std::string, std::vector<float>> grads;
};

/// Runs `train` then `backward` with `cotangent`; the gradients of every
/// parameter by path.
template <typename P, typename S, typename Train, typename Backward,
          typename SavedLayout>
void trainAndBackward(Train train, Backward backward, SavedLayout layout,
                      std::size_t savedBytes, std::size_t wsBytes,
                      const float *x, int64_t xElements,
                      std::map<std::string, std::vector<float>> &values,
                      int64_t outElements, const std::vector<float> &cotangent,
                      Training<P, S> &result) {
  P params = bind<P>(values);
  P grads{};
  for (int i = 0; i < P::kNumParams; ++i) {
    std::vector<float> &g = result.grads[P::kPaths[i]];
    g.assign(P::kNumElements[i], std::nanf(""));
    grads.set(i, g.data());
  }
  Buffer savedBuffer(savedBytes), ws(wsBytes);
  S saved = layout(savedBuffer.data.get());
  result.out.assign(outElements, std::nanf(""));
  result.gradX.assign(xElements, std::nanf(""));
  rt::Status s = train(x, params, result.out.data(), saved, ws.data.get());
  ASSERT_TRUE(s.ok()) << s.message();
  ASSERT_EQ(static_cast<int64_t>(cotangent.size()), outElements);
  s = backward(x, saved, cotangent.data(), params, result.gradX.data(), grads,
               ws.data.get());
  ASSERT_TRUE(s.ok()) << s.message();
}

/// The small modules' full and block models on the same parameters: the
/// block model's output, parameter gradients and input gradient against
/// the full model's with the cotangent on the seed rows.
template <typename FullP, typename FullS, typename BlockP, typename BlockS,
          typename FT, typename FB, typename FL, typename BT, typename BB,
          typename BL>
void checkGradients(const std::string &what, const Hops &h, int64_t inDim,
                    int64_t classes, FT fullTrain, FB fullBackward,
                    FL fullLayout, std::size_t fullSaved, std::size_t fullWs,
                    BT blockTrain, BB blockBackward, BL blockLayout,
                    std::size_t blockSaved, std::size_t blockWs) {
  const int64_t n = h.full->numDst();
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::vector<float> x(n * inDim);
  for (float &v : x)
    v = unit(rng);
  auto values = randomParams<FullP>(3);
  std::vector<float> cotangent(h.seeds.size() * classes);
  for (float &v : cotangent)
    v = unit(rng);
  // The full model's cotangent: the seeds' rows, zero elsewhere.
  std::vector<float> fullCotangent(n * classes, 0.0f);
  for (size_t i = 0; i < h.seeds.size(); ++i)
    std::copy(cotangent.begin() + i * classes,
              cotangent.begin() + (i + 1) * classes,
              fullCotangent.begin() + h.seeds[i] * classes);

  Training<FullP, FullS> full;
  trainAndBackward<FullP, FullS>(fullTrain, fullBackward, fullLayout, fullSaved,
                                 fullWs, x.data(), n * inDim, values,
                                 n * classes, fullCotangent, full);
  std::vector<float> xBlock = rowsOf(x, inDim, h.src1);
  Training<BlockP, BlockS> block;
  trainAndBackward<BlockP, BlockS>(
      blockTrain, blockBackward, blockLayout, blockSaved, blockWs,
      xBlock.data(), static_cast<int64_t>(xBlock.size()), values,
      static_cast<int64_t>(cotangent.size()), cotangent, block);
  if (::testing::Test::HasFatalFailure())
    return;

  Diff d = difference(block.out, rowsOf(full.out, classes, h.seeds));
  report(what + " forward", d);
  EXPECT_LE(d.rel, kFloatTolerance);
  Diff worst;
  for (auto &[path, g] : full.grads) {
    Diff p = difference(block.grads[path], g);
    EXPECT_LE(p.rel, kFloatTolerance) << path;
    worst.abs = std::max(worst.abs, p.abs);
    worst.rel = std::max(worst.rel, p.rel);
  }
  report(what + " parameter gradients", worst);
  // dL/dx: the block model's rows are the full model's at its sources, and
  // the full model's are zero everywhere else.
  Diff dx = difference(block.gradX, rowsOf(full.gradX, inDim, h.src1));
  report(what + " input gradient", dx);
  EXPECT_LE(dx.rel, kFloatTolerance);
  std::vector<bool> inBlock(n, false);
  for (int64_t v : h.src1)
    inBlock[v] = true;
  for (int64_t v = 0; v < n; ++v) {
    if (inBlock[v])
      continue;
    for (int64_t k = 0; k < inDim; ++k)
      ASSERT_EQ(full.gradX[v * inDim + k], 0.0f) << "vertex " << v;
  }
}

TEST(BlockChain, GraphSAGEGradientsMatchFullGraph) {
  Hops h = makeHops(/*selfLoops=*/false);
  namespace F = small_sage_mean_GraphSAGE;
  namespace B = small_sage2_block_GraphSAGE2Block;
  const rt::Graph &g = *h.full, &g1 = *h.g1, &g2 = *h.g2;
  checkGradients<F::GraphSAGE_Params, F::GraphSAGE_Saved,
                 B::GraphSAGE2Block_Params, B::GraphSAGE2Block_Saved>(
      "GraphSAGE2Block vs GraphSAGE (generated C++, training entry points)", h,
      /*inDim=*/5, /*classes=*/3,
      [&](const float *x, const F::GraphSAGE_Params &p, float *out,
          const F::GraphSAGE_Saved &s, void *ws) {
        return F::GraphSAGE_train(g, x, p, out, s, ws, false, 0);
      },
      [&](const float *x, const F::GraphSAGE_Saved &s, const float *dy,
          const F::GraphSAGE_Params &p, float *dx,
          const F::GraphSAGE_Params &grads, void *ws) {
        return F::GraphSAGE_backward(g, x, s, dy, p, dx, grads, ws, false, 0);
      },
      [&](void *buffer) { return F::GraphSAGE_saved_layout(buffer, g); },
      F::GraphSAGE_saved_bytes(g),
      std::max(F::GraphSAGE_train_workspace_bytes(g),
               F::GraphSAGE_backward_workspace_bytes(g)),
      [&](const float *x, const B::GraphSAGE2Block_Params &p, float *out,
          const B::GraphSAGE2Block_Saved &s, void *ws) {
        return B::GraphSAGE2Block_train(g1, g2, x, p, out, s, ws, false, 0);
      },
      [&](const float *x, const B::GraphSAGE2Block_Saved &s, const float *dy,
          const B::GraphSAGE2Block_Params &p, float *dx,
          const B::GraphSAGE2Block_Params &grads, void *ws) {
        return B::GraphSAGE2Block_backward(g1, g2, x, s, dy, p, dx, grads, ws,
                                           false, 0);
      },
      [&](void *buffer) {
        return B::GraphSAGE2Block_saved_layout(buffer, g1, g2);
      },
      B::GraphSAGE2Block_saved_bytes(g1, g2),
      std::max(B::GraphSAGE2Block_train_workspace_bytes(g1, g2),
               B::GraphSAGE2Block_backward_workspace_bytes(g1, g2)));
}

TEST(BlockChain, GATGradientsMatchFullGraph) {
  Hops h = makeHops(/*selfLoops=*/true);
  namespace F = small_gat_GAT;
  namespace B = small_gat2_block_GAT2Block;
  const rt::Graph &g = *h.full, &g1 = *h.g1, &g2 = *h.g2;
  checkGradients<F::GAT_Params, F::GAT_Saved, B::GAT2Block_Params,
                 B::GAT2Block_Saved>(
      "GAT2Block vs GAT (generated C++, training entry points)", h,
      /*inDim=*/5, /*classes=*/4,
      [&](const float *x, const F::GAT_Params &p, float *out,
          const F::GAT_Saved &s,
          void *ws) { return F::GAT_train(g, x, p, out, s, ws, false, 0); },
      [&](const float *x, const F::GAT_Saved &s, const float *dy,
          const F::GAT_Params &p, float *dx, const F::GAT_Params &grads,
          void *ws) {
        return F::GAT_backward(g, x, s, dy, p, dx, grads, ws, false, 0);
      },
      [&](void *buffer) { return F::GAT_saved_layout(buffer, g); },
      F::GAT_saved_bytes(g),
      std::max(F::GAT_train_workspace_bytes(g),
               F::GAT_backward_workspace_bytes(g)),
      [&](const float *x, const B::GAT2Block_Params &p, float *out,
          const B::GAT2Block_Saved &s, void *ws) {
        return B::GAT2Block_train(g1, g2, x, p, out, s, ws, false, 0);
      },
      [&](const float *x, const B::GAT2Block_Saved &s, const float *dy,
          const B::GAT2Block_Params &p, float *dx,
          const B::GAT2Block_Params &grads, void *ws) {
        return B::GAT2Block_backward(g1, g2, x, s, dy, p, dx, grads, ws, false,
                                     0);
      },
      [&](void *buffer) { return B::GAT2Block_saved_layout(buffer, g1, g2); },
      B::GAT2Block_saved_bytes(g1, g2),
      std::max(B::GAT2Block_train_workspace_bytes(g1, g2),
               B::GAT2Block_backward_workspace_bytes(g1, g2)));
}

} // namespace
