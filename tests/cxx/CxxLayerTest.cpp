//===- CxxLayerTest.cpp - Layers written in C++ against their .gnn twins --===//
//
// Part of gnnc's tests. dsl-examples/cxx holds GCNConv, SAGEConv and GATConv
// written in C++ (gnnc/cxx/NodeCentric.h). Each runs here three ways, on
// random graphs with isolated vertices, self-loops and repeated edges:
//
//   - as written (plain_<Layer>: the example compiled as it is, one vertex
//     at a time);
//   - as gnnc-cxx rewrote it (<Layer>: the body a call of the kernels gnnc
//     compiled from it);
//   - its compiled saving forward and backward (<Layer>_train,
//     <Layer>_backward of <stem>_gnnc.h),
//
// and each must agree with the .gnn layer of the same name in the
// reference interpreter (dsl-examples/<file>.gnn, the same dimensions):
// the forward in double within the execution suite's tolerance, the
// gradients of the input and of every parameter too.
//
//===----------------------------------------------------------------------===//

#include "ExecSupport.h"
#include "TestSupport.h"

#include "gat_gnnc.h"
#include "gcn_gnnc.h"
#include "sage_gnnc.h"

#include "gnnc/Dialect/GNN/Transforms/Passes.h"
#include "gnnc/Interpreter/Interpreter.h"
#include "gnnc/cxx/NodeCentric.h"

#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <functional>
#include <random>

namespace nc = gnnc::cxx;
using namespace gnnc;
using namespace gnnc::testing_support;

// The examples as written, and as rewritten (both link: see CMakeLists.txt).
void plain_GCNConv(nc::Graph &, nc::Rows<12>, nc::Weight<12, 8>, nc::Weight<8>,
                   nc::Rows<8> &);
void GCNConv(nc::Graph &, nc::Rows<12>, nc::Weight<12, 8>, nc::Weight<8>,
             nc::Rows<8> &);
void plain_SAGEConv(nc::Graph &, nc::Rows<12>, nc::Weight<12, 8>,
                    nc::Weight<12, 8>, nc::Weight<8>, nc::Rows<8> &);
void SAGEConv(nc::Graph &, nc::Rows<12>, nc::Weight<12, 8>, nc::Weight<12, 8>,
              nc::Weight<8>, nc::Rows<8> &);
void plain_GATConv(nc::Graph &, nc::Rows<12>, nc::Weight<12, 8>,
                   nc::Weight<2, 4>, nc::Weight<2, 4>, nc::Weight<8>,
                   nc::Rows<8> &);
void GATConv(nc::Graph &, nc::Rows<12>, nc::Weight<12, 8>, nc::Weight<2, 4>,
             nc::Weight<2, 4>, nc::Weight<8>, nc::Rows<8> &);
// tests/cxx/mixed.cpp.
void plain_Mixed(nc::Graph &, nc::Rows<4>, nc::EdgeRows<3>, nc::Weight<4, 4>,
                 nc::Weight<3, 4>, nc::Weight<4, 4>, nc::Weight<4>,
                 nc::Rows<6> &);
void Mixed(nc::Graph &, nc::Rows<4>, nc::EdgeRows<3>, nc::Weight<4, 4>,
           nc::Weight<3, 4>, nc::Weight<4, 4>, nc::Weight<4>, nc::Rows<6> &);

namespace {

using Floats = std::vector<float>;
constexpr int64_t kIn = 12, kOut = 8;

/// One layer: how to call its C++ versions, and its .gnn twin.
struct Layer {
  std::string name, gnnFile;
  std::map<std::string, double> defines;
  std::vector<std::string> paramNames;
  std::vector<std::vector<int64_t>> paramShapes;
  /// The C++ layer, as written (`compiled` false) or rewritten.
  std::function<void(bool compiled, nc::Graph &, const Floats &x,
                     const std::vector<Floats> &params, nc::Rows<kOut> &)>
      run;
  /// Its compiled saving forward and backward: the gradients of x and of
  /// each parameter for the cotangent.
  std::function<rt::Status(const rt::Graph &, const Floats &x,
                           const std::vector<Floats> &params,
                           const Floats &cotangent, std::vector<Floats> &)>
      backward;
};

/// The compiled backward of a generated module whose layer takes (g, x).
template <typename P, typename S, typename Train, typename Backward,
          typename Bytes, typename Layout>
rt::Status backwardOf(Train train, Backward backward, Bytes trainBytes,
                      Bytes backwardBytes, Bytes savedBytes, Layout layout,
                      const rt::Graph &g, const Floats &x,
                      const std::vector<Floats> &params, const Floats &cot,
                      std::vector<Floats> &grads) {
  P p, dp;
  grads.assign(1, Floats(x.size()));
  for (int i = 0; i < P::kNumParams; ++i) {
    p.set(i, const_cast<float *>(params[i].data()));
    grads.emplace_back(P::kNumElements[i]);
  }
  for (int i = 0; i < P::kNumParams; ++i)
    dp.set(i, grads[i + 1].data());
  Floats out(static_cast<size_t>(g.numDst() * kOut));
  std::unique_ptr<void, decltype(&std::free)> saved(
      std::aligned_alloc(64, std::max<std::size_t>(64, savedBytes(g))),
      &std::free);
  std::size_t wsBytes = std::max(trainBytes(g), backwardBytes(g));
  std::unique_ptr<void, decltype(&std::free)> ws(
      std::aligned_alloc(64, std::max<std::size_t>(64, wsBytes)), &std::free);
  S s = layout(saved.get(), g);
  if (rt::Status st = train(g, x.data(), p, out.data(), s, ws.get(), false, 0);
      !st.ok())
    return st;
  return backward(g, x.data(), s, cot.data(), p, grads[0].data(), dp, ws.get(),
                  false, 0);
}

template <int64_t... D> nc::Weight<D...> weight(const Floats &data) {
  return nc::Weight<D...>(data);
}

/// Layer `name` of dsl-examples/`gnnFile`, with the parameters of P.
template <typename P>
Layer describe(std::string name, std::string gnnFile,
               std::map<std::string, double> defines) {
  Layer l;
  l.name = std::move(name);
  l.gnnFile = std::move(gnnFile);
  l.defines = std::move(defines);
  for (int i = 0; i < P::kNumParams; ++i) {
    l.paramNames.push_back(P::kPaths[i]);
    l.paramShapes.emplace_back(P::kShapes[i], P::kShapes[i] + P::kRanks[i]);
  }
  return l;
}

/// backwardOf for layer F of the generated namespace NS.
#define COMPILED_BACKWARD(NS, F)                                               \
  [](auto &&...a) {                                                            \
    return backwardOf<NS::F##_Params, NS::F##_Saved>(                          \
        NS::F##_train, NS::F##_backward, NS::F##_train_workspace_bytes,        \
        NS::F##_backward_workspace_bytes, NS::F##_saved_bytes,                 \
        NS::F##_saved_layout, a...);                                           \
  }

std::vector<Layer> layers() {
  std::vector<Layer> out;
  {
    Layer l = describe<gcn_gnnc::GCNConv_Params>(
        "GCNConv", "gcn.gnn", {{"in_dim", kIn}, {"out_dim", kOut}});
    l.run = [](bool compiled, nc::Graph &g, const Floats &x,
               const std::vector<Floats> &p, nc::Rows<kOut> &o) {
      nc::Rows<kIn> in(g.num_vertices(), x);
      (compiled ? GCNConv : plain_GCNConv)(g, in, weight<kIn, kOut>(p[0]),
                                           weight<kOut>(p[1]), o);
    };
    l.backward = COMPILED_BACKWARD(gcn_gnnc, GCNConv);
    out.push_back(std::move(l));
  }
  {
    Layer l = describe<sage_gnnc::SAGEConv_Params>(
        "SAGEConv", "sage_mean.gnn", {{"in_dim", kIn}, {"out_dim", kOut}});
    l.run = [](bool compiled, nc::Graph &g, const Floats &x,
               const std::vector<Floats> &p, nc::Rows<kOut> &o) {
      nc::Rows<kIn> in(g.num_vertices(), x);
      (compiled ? SAGEConv : plain_SAGEConv)(g, in, weight<kIn, kOut>(p[0]),
                                             weight<kIn, kOut>(p[1]),
                                             weight<kOut>(p[2]), o);
    };
    l.backward = COMPILED_BACKWARD(sage_gnnc, SAGEConv);
    out.push_back(std::move(l));
  }
  {
    Layer l = describe<gat_gnnc::GATConv_Params>(
        "GATConv", "gat.gnn",
        {{"in_dim", kIn}, {"out_dim", 4}, {"heads", 2}, {"slope", 0.2}});
    l.run = [](bool compiled, nc::Graph &g, const Floats &x,
               const std::vector<Floats> &p, nc::Rows<kOut> &o) {
      nc::Rows<kIn> in(g.num_vertices(), x);
      (compiled ? GATConv : plain_GATConv)(
          g, in, weight<kIn, kOut>(p[0]), weight<2, 4>(p[1]),
          weight<2, 4>(p[2]), weight<kOut>(p[3]), o);
    };
    l.backward = COMPILED_BACKWARD(gat_gnnc, GATConv);
    out.push_back(std::move(l));
  }
  return out;
}

/// Random graphs: isolated vertices (no in-edges, no out-edges), a
/// self-loop, repeated edges; and one without edges.
std::vector<GraphPtr> graphs() {
  std::vector<GraphPtr> out;
  for (uint64_t seed : {1, 2}) {
    std::mt19937_64 rng(seed);
    int64_t n = 23;
    Edges edges;
    std::uniform_int_distribution<int64_t> pick(0, n - 3); // n-2, n-1 isolated
    for (int k = 0; k < 60; ++k)
      edges.push_back({pick(rng), pick(rng)});
    edges.push_back({3, 3});
    edges.push_back(edges.front());
    out.push_back(makeGraph(edges, n, n));
  }
  out.push_back(makeGraph(Edges{}, 5, 5));
  return out;
}

Floats randomFloats(size_t n, std::mt19937_64 &rng, float scale = 1.0f) {
  std::uniform_real_distribution<float> u(-scale, scale);
  Floats out(n);
  for (float &x : out)
    x = u(rng);
  return out;
}

/// Random values for each parameter of `l`.
std::vector<Floats> randomParams(const Layer &l, std::mt19937_64 &rng) {
  std::vector<Floats> p;
  for (const auto &shape : l.paramShapes)
    p.push_back(
        randomFloats(static_cast<size_t>(nc::Tensor::count(shape)), rng, 0.5f));
  return p;
}

interp::Tensor<double> dense(std::vector<int64_t> shape, const Floats &data) {
  return interp::Tensor<double>::dense(
      std::move(shape), std::vector<double>(data.begin(), data.end()));
}

/// The .gnn layer's arguments: the graph, x, the parameters by name.
std::vector<interp::Value<double>> interpArgs(const Layer &l, GraphPtr g,
                                              const Floats &x,
                                              const std::vector<Floats> &p) {
  std::vector<interp::Value<double>> args;
  args.push_back(graphValue(g));
  args.push_back(dense({g->numDst(), kIn}, x));
  for (size_t i = 0; i < p.size(); ++i)
    args.push_back(dense(l.paramShapes[i], p[i]));
  return args;
}

void expectNear(const Floats &got, const std::vector<double> &want,
                const std::string &what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  EXPECT_LE(maxRelativeError(got, want, kFloor), kTolerance) << what;
}

class CxxLayer : public ::testing::TestWithParam<int> {};

TEST_P(CxxLayer, PlainAndCompiledMatchTheGnnLayer) {
  Layer l = layers()[GetParam()];
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  ASSERT_TRUE(lowerExample(context, l.gnnFile, l.name, l.defines, module));
  // The .gnn layer's parameters are the C++ layer's, in the same order.
  auto fn = module->lookupSymbol<mlir::func::FuncOp>(l.name);
  ASSERT_TRUE(fn);
  std::vector<std::string> gnnParams;
  for (unsigned i = 0; i < fn.getNumArguments(); ++i)
    if (auto p = fn.getArgAttrOfType<mlir::StringAttr>(i, gnn::kParamAttrName))
      gnnParams.push_back(p.getValue().str());
  ASSERT_EQ(gnnParams, l.paramNames);

  std::mt19937_64 rng(GetParam() + 7);
  for (GraphPtr g : graphs()) {
    SCOPED_TRACE(std::to_string(g->numEdges()) + " edges");
    Floats x = randomFloats(static_cast<size_t>(g->numDst() * kIn), rng);
    std::vector<Floats> p = randomParams(l, rng);
    interp::Tensor<double> want;
    ASSERT_TRUE(isOk(
        interp::run<double>(*module, l.name, interpArgs(l, g, x, p), want)));
    for (bool compiled : {false, true}) {
      nc::Graph graph(*g);
      nc::Rows<kOut> out;
      l.run(compiled, graph, x, p, out);
      ASSERT_EQ(out.shape(), (std::vector<int64_t>{g->numDst(), kOut}));
      expectNear(out.values(), want.data,
                 l.name + (compiled ? " (compiled)" : " (as written)"));
    }
  }
}

TEST_P(CxxLayer, CompiledGradientsMatchTheGnnLayer) {
  Layer l = layers()[GetParam()];
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  ASSERT_TRUE(lowerExample(context, l.gnnFile, l.name, l.defines, module));
  ASSERT_TRUE(runPipeline(context, *module, [](mlir::PassManager &pm) {
    pm.addPass(gnn::createGNNAutodiff());
  }));
  std::mt19937_64 rng(GetParam() + 70);
  for (GraphPtr g : graphs()) {
    SCOPED_TRACE(std::to_string(g->numEdges()) + " edges");
    Floats x = randomFloats(static_cast<size_t>(g->numDst() * kIn), rng);
    std::vector<Floats> p = randomParams(l, rng);
    Floats cot = randomFloats(static_cast<size_t>(g->numDst() * kOut), rng);
    std::vector<interp::Value<double>> args = interpArgs(l, g, x, p);
    args.push_back(dense({g->numDst(), kOut}, cot));
    std::vector<interp::Tensor<double>> want;
    ASSERT_TRUE(isOk(
        interp::runAll<double>(*module, l.name + ".backward", args, want)));
    std::vector<Floats> got;
    ASSERT_TRUE(isOk(l.backward(*g, x, p, cot, got)));
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i)
      expectNear(got[i], want[i].data,
                 l.name + " d/d" + (i ? l.paramNames[i - 1] : "x"));
  }
}

INSTANTIATE_TEST_SUITE_P(Examples, CxxLayer, ::testing::Values(0, 1, 2),
                         [](const auto &info) {
                           return layers()[info.param].name;
                         });

/// The constructs the examples do not use (tests/cxx/mixed.cpp): the layer
/// as written and as compiled agree.
TEST(CxxMixed, PlainAndCompiledAgree) {
  std::mt19937_64 rng(11);
  auto random = [&](std::vector<int64_t> shape, float scale) {
    return nc::Tensor(
        shape, randomFloats(static_cast<size_t>(nc::Tensor::count(shape)), rng,
                            scale));
  };
  for (GraphPtr g : graphs()) {
    SCOPED_TRACE(std::to_string(g->numEdges()) + " edges");
    int64_t n = g->numDst(), e = g->numEdges();
    nc::Rows<4> x(n, random({n, 4}, 1.0f).values());
    nc::EdgeRows<3> w(e, random({e, 3}, 1.0f).values());
    nc::Weight<4, 4> W(random({4, 4}, 0.7f).values()),
        V(random({4, 4}, 0.7f).values());
    nc::Weight<3, 4> W_e(random({3, 4}, 0.7f).values());
    nc::Weight<4> b(random({4}, 0.3f).values());
    nc::Rows<6> plain, compiled;
    nc::Graph g1(*g), g2(*g);
    plain_Mixed(g1, x, w, W, W_e, V, b, plain);
    Mixed(g2, x, w, W, W_e, V, b, compiled);
    ASSERT_EQ(compiled.shape(), (std::vector<int64_t>{n, 6}));
    expectNear(
        compiled.values(),
        std::vector<double>(plain.values().begin(), plain.values().end()),
        "Mixed");
  }
}

/// A layer as written reports what the .gnn language forbids at run time
/// too: a neighbour's attribute is not written.
TEST(CxxPlain, OnlyTheLoopVertexIsWritten) {
  GraphPtr g = makeGraph(Edges{{0, 1}}, 2, 2);
  nc::Graph graph(*g);
  graph.set_vertex_attr("h", nc::Tensor({2, 1}, {1, 2}));
  for (nc::Vertex v : graph.dst_vertices()) {
    for (const nc::Vertex &u : v.in_neighbors().vertices())
      EXPECT_THROW(nc::Vertex(u).set("h", nc::Tensor({1}, {0})),
                   std::invalid_argument);
    v.set("h", v.get("h") * nc::Tensor(2.0f));
  }
  // Reads within the loop saw the values from before it; now the new ones.
  EXPECT_EQ(graph.dst_attr("h").values(), (Floats{2, 4}));
}

} // namespace
