//===- TypedAbiTest.cpp - Generated entry points called by their types ----===//
//
// Part of gnnc. A training step written once, as a template over the types
// of the entry points (docs/abi.md, "A training step"), for every layer and
// model of a few modules of Modules.h: the parameters allocated and
// initialised from the `P::k*` tables of the parameter struct, the saved
// tensors carved out of one buffer by `F_saved_layout`, then `F_train` and
// `F_backward`. It compiles only if every entry point has the same shape:
// a parameter struct (empty for a layer without parameters, APPNP's
// propagation), and a saved-state struct for every saving forward and
// backward (empty when nothing is saved). The results must be those of the
// reflection tables' calls (bit for bit: the same code on the same data),
// which pass each saved tensor separately.
//
//===----------------------------------------------------------------------===//

#include "ExecSupport.h"
#include "TestSupport.h"

#include "small_appnp_APPNP/appnp.h"
#include "small_gat_GAT/gat.h"
#include "small_gcn_GCN/gcn.h"

#include "gnnc/runtime/Train.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

using namespace gnnc;
using namespace gnnc::testing_support;

namespace {

/// `T` in a context where it is not deduced.
template <typename T> struct Same { using type = T; };

/// Memory from std::aligned_alloc, 64-byte aligned, filled with NaN.
struct Buffer {
  explicit Buffer(std::size_t bytes)
      : data(bytes ? std::aligned_alloc(rt::kWorkspaceAlign, bytes) : nullptr,
             &std::free) {
    if (bytes)
      std::memset(data.get(), 0xFF, bytes);
  }
  std::unique_ptr<void, decltype(&std::free)> data;
};

/// The graph or the explicit size of an entry point, as CallArgs.
struct Context {
  explicit Context(const rt::Graph &g) : graphs{&g} {
    args.graphs = graphs.data();
  }
  explicit Context(int64_t n) : sizes{n} { args.sizes = sizes.data(); }
  std::vector<const void *> graphs;
  std::vector<int64_t> sizes;
  rt::CallArgs args{};
};

/// The shapes of every argument and result of `e`.
void shapesOf(const rt::EntryInfo &e, const rt::CallArgs &args,
              std::vector<std::vector<int64_t>> &argShapes,
              std::vector<std::vector<int64_t>> &resultShapes) {
  int total = 0;
  for (int i = 0; i < e.numArgs; ++i)
    total += e.args[i].rank;
  for (int i = 0; i < e.numResults; ++i)
    total += e.results[i].rank;
  std::vector<int64_t> dims(total + 1);
  e.shapes(args, dims.data());
  auto at = dims.begin();
  for (int i = 0; i < e.numArgs; ++i) {
    argShapes.emplace_back(at, at + e.args[i].rank);
    at += e.args[i].rank;
  }
  for (int i = 0; i < e.numResults; ++i) {
    resultShapes.emplace_back(at, at + e.results[i].rank);
    at += e.results[i].rank;
  }
}

const rt::EntryInfo *findEntry(const rt::ModuleInfo &m,
                               const std::string &name) {
  for (int i = 0; i < m.numEntries; ++i)
    if (name == m.entries[i].name)
      return &m.entries[i];
  return nullptr;
}

/// The index of `name` in `names` (`count` of them), or -1.
int indexOf(const char *const *names, int count, const char *name) {
  for (int i = 0; i < count; ++i)
    if (std::strcmp(names[i], name) == 0)
      return i;
  return -1;
}

/// One training step of forward F (`name` in `info`) through its typed
/// entry points, against the same step through the reflection tables.
template <typename Ctx, typename P, typename S>
void checkTypedStep(const rt::ModuleInfo &info, const std::string &name,
                    typename Same<Ctx>::type ctx, const Context &context,
                    rt::Status (*train)(Ctx, const float *, const P &, float *,
                                        const S &, void *, bool, uint64_t),
                    rt::Status (*backward)(Ctx, const float *, const S &,
                                           const float *, const P &, float *,
                                           const P &, void *, bool, uint64_t),
                    std::size_t (*trainBytes)(Ctx),
                    std::size_t (*backwardBytes)(Ctx),
                    std::size_t (*savedBytes)(Ctx),
                    S (*savedLayout)(void *, Ctx)) {
  SCOPED_TRACE(name);
  const rt::EntryInfo *trainInfo = findEntry(info, name + ".train");
  const rt::EntryInfo *backInfo = findEntry(info, name + ".backward");
  ASSERT_TRUE(trainInfo && backInfo);
  std::vector<std::vector<int64_t>> trainArgs, trainResults, backArgs,
      backResults;
  shapesOf(*trainInfo, context.args, trainArgs, trainResults);
  shapesOf(*backInfo, context.args, backArgs, backResults);
  std::mt19937_64 rng(11);

  // The parameters (and their gradients) from the struct's tables.
  std::vector<std::vector<float>> p(P::kNumParams), dp(P::kNumParams);
  P params{}, grads{};
  for (int i = 0; i < P::kNumParams; ++i) {
    p[i].resize(P::kNumElements[i]);
    dp[i].assign(P::kNumElements[i], std::nanf(""));
    params.set(i, p[i].data());
    grads.set(i, dp[i].data());
    ASSERT_TRUE(rt::initParam(P::kInits[i], 0, P::kShapes[i], P::kRanks[i],
                              params.get(i), rt::paramSeed(3, P::kPaths[i]))
                    .ok());
    int64_t n = 1;
    for (int k = 0; k < P::kRanks[i]; ++k)
      n *= P::kShapes[i][k];
    EXPECT_EQ(n, P::kNumElements[i]) << P::kPaths[i];
  }
  // The input: the argument that is not a parameter.
  int inputArg = -1;
  for (int i = 0; i < trainInfo->numArgs; ++i)
    if (std::strcmp(trainInfo->args[i].role, "input") == 0)
      inputArg = i;
  ASSERT_GE(inputArg, 0);
  std::vector<float> x = randomArray(trainArgs[inputArg], rng).data;
  std::vector<float> out(numElements(trainResults[0]), std::nanf(""));
  std::vector<float> cotangent = randomArray(trainResults[0], rng).data;
  std::vector<float> gradX(x.size(), std::nanf(""));

  // Typed: every saved tensor in one buffer.
  std::size_t bytes = savedBytes(ctx);
  EXPECT_EQ(bytes % rt::kWorkspaceAlign, 0u);
  Buffer savedBuffer(bytes);
  S saved = savedLayout(savedBuffer.data.get(), ctx);
  ASSERT_EQ(S::kNumSaved, trainInfo->numResults - 1);
  Buffer ws(std::max(trainBytes(ctx), backwardBytes(ctx)));
  ASSERT_TRUE(
      train(ctx, x.data(), params, out.data(), saved, ws.data.get(), true, 5)
          .ok());
  ASSERT_TRUE(backward(ctx, x.data(), saved, cotangent.data(), params,
                       gradX.data(), grads, ws.data.get(), true, 5)
                  .ok());

  // Reflection: the saved tensors one by one, found by name.
  std::size_t expectedBytes = 0;
  std::vector<std::vector<float>> refSaved(trainInfo->numResults);
  std::vector<float> refOut(out.size(), std::nanf(""));
  std::vector<float *> trainOutputs;
  for (int r = 0; r < trainInfo->numResults; ++r) {
    const rt::TensorInfo &t = trainInfo->results[r];
    if (std::strcmp(t.role, "saved") != 0) {
      trainOutputs.push_back(refOut.data());
      continue;
    }
    int k = indexOf(S::kNames, S::kNumSaved, t.name);
    ASSERT_GE(k, 0) << "saved value " << t.name << " is not in the struct";
    int64_t n = numElements(trainResults[r]);
    refSaved[r].assign(n, std::nanf(""));
    trainOutputs.push_back(refSaved[r].data());
    // The layout: 64-byte aligned offsets, in the struct's order.
    std::size_t offset = reinterpret_cast<char *>(saved.get(k)) -
                         static_cast<char *>(savedBuffer.data.get());
    EXPECT_EQ(offset % rt::kWorkspaceAlign, 0u) << t.name;
    EXPECT_LE(offset + 4 * n, bytes) << t.name;
    expectedBytes += rt::alignUp(4 * n);
  }
  EXPECT_EQ(bytes, expectedBytes);
  auto paramsOf = [&](const rt::EntryInfo &e, const P &from,
                      std::vector<const float *> &in) {
    for (int i = 0; i < e.numArgs; ++i)
      if (std::strcmp(e.args[i].role, "param") == 0)
        in[i] = from.get(indexOf(P::kPaths, P::kNumParams, e.args[i].name));
  };
  std::vector<const float *> trainInputs(trainInfo->numArgs, x.data());
  paramsOf(*trainInfo, params, trainInputs);
  Buffer refWs(std::max(trainBytes(ctx), backwardBytes(ctx)));
  rt::CallArgs a = context.args;
  a.inputs = trainInputs.data();
  a.outputs = trainOutputs.data();
  a.workspace = refWs.data.get();
  a.training = true;
  a.seed = 5;
  ASSERT_TRUE(trainInfo->call(a).ok());
  EXPECT_EQ(0, std::memcmp(refOut.data(), out.data(), 4 * out.size()));
  if constexpr (S::kNumSaved > 0) {
    for (int r = 1; r < trainInfo->numResults; ++r) {
      int k = indexOf(S::kNames, S::kNumSaved, trainInfo->results[r].name);
      EXPECT_EQ(0, std::memcmp(refSaved[r].data(), saved.get(k),
                               4 * refSaved[r].size()))
          << "saved." << S::kNames[k];
    }
  }

  std::vector<const float *> backInputs(backInfo->numArgs, nullptr);
  paramsOf(*backInfo, params, backInputs);
  for (int i = 0; i < backInfo->numArgs; ++i) {
    const rt::TensorInfo &t = backInfo->args[i];
    if (std::strcmp(t.role, "saved") == 0) {
      for (int r = 0; r < trainInfo->numResults; ++r)
        if (std::strcmp(trainInfo->results[r].name, t.name) == 0)
          backInputs[i] = refSaved[r].data();
    } else if (std::strcmp(t.name, "cotangent") == 0) {
      backInputs[i] = cotangent.data();
    } else if (std::strcmp(t.role, "input") == 0) {
      backInputs[i] = x.data();
    }
    ASSERT_TRUE(backInputs[i]) << "no tensor for " << t.name;
  }
  std::vector<std::vector<float>> refGrads(backInfo->numResults);
  std::vector<float *> backOutputs;
  for (int r = 0; r < backInfo->numResults; ++r) {
    refGrads[r].assign(numElements(backResults[r]), std::nanf(""));
    backOutputs.push_back(refGrads[r].data());
  }
  a.inputs = backInputs.data();
  a.outputs = backOutputs.data();
  ASSERT_TRUE(backInfo->call(a).ok());
  for (int r = 0; r < backInfo->numResults; ++r) {
    const char *of = backInfo->results[r].name;
    int k = indexOf(P::kPaths, P::kNumParams, of);
    const float *typed = k >= 0 ? grads.get(k) : gradX.data();
    EXPECT_EQ(0, std::memcmp(refGrads[r].data(), typed, 4 * refGrads[r].size()))
        << "gradient of " << of;
  }
}

/// `F_train`, `F_backward` and their sizes of forward `F` (`@name`) in
/// namespace `ns`.
#define TYPED_STEP(ns, F, name, ctx, context)                                  \
  checkTypedStep(ns::gnnc_module, name, ctx, context, ns::F##_train,           \
                 ns::F##_backward, ns::F##_train_workspace_bytes,              \
                 ns::F##_backward_workspace_bytes, ns::F##_saved_bytes,        \
                 ns::F##_saved_layout)

GraphPtr testGraph() {
  std::mt19937_64 rng(17);
  return makeGraph(rmatEdges(6, 300, rng), 64, 64);
}

TEST(CppTypedAbi, GcnLayersAndModel) {
  GraphPtr g = testGraph();
  Context context(*g);
  // GCN saves two tensors, its layers nothing.
  static_assert(small_gcn_GCN::GCN_Saved::kNumSaved == 2);
  static_assert(small_gcn_GCN::GCN_conv1_Saved::kNumSaved == 0);
  TYPED_STEP(small_gcn_GCN, GCN, "GCN", *g, context);
  TYPED_STEP(small_gcn_GCN, GCN_conv1, "GCN.conv1", *g, context);
  TYPED_STEP(small_gcn_GCN, GCN_conv2, "GCN.conv2", *g, context);
}

TEST(CppTypedAbi, AppnpWithALayerWithoutParameters) {
  GraphPtr g = testGraph();
  Context context(*g);
  static_assert(small_appnp_APPNP::APPNP_prop_Params::kNumParams == 0);
  TYPED_STEP(small_appnp_APPNP, APPNP_prop, "APPNP.prop", *g, context);
  TYPED_STEP(small_appnp_APPNP, APPNP, "APPNP", *g, context);
  // The graph-less layer takes its vertex count.
  Context sized(g->numDst());
  TYPED_STEP(small_appnp_APPNP, APPNP_predict, "APPNP.predict", g->numDst(),
             sized);
}

TEST(CppTypedAbi, GatSavesStatisticsAndDropouts) {
  GraphPtr g = testGraph();
  Context context(*g);
  TYPED_STEP(small_gat_GAT, GAT, "GAT", *g, context);
  TYPED_STEP(small_gat_GAT, GAT_conv1, "GAT.conv1", *g, context);
}

} // namespace
