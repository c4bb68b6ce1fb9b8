//===- GoldenTest.cpp - The interpreter against PyTorch Geometric ---------===//
//
// Part of gnnc. Each directory under tests/goldens holds a layer run through
// PyG with fixed parameters (tools/make_goldens.py writes them). Here the
// matching dsl-examples layer runs through the front end, MLIRGen and the
// reference interpreter on the same graph, inputs and parameters, and must
// agree within 1e-9 relative in double precision. Where a case holds
// gradients (case.json "gradients"), @<Layer>.backward made by gnn-autodiff
// and run with the case's cotangent must agree with PyG's autograd too.
//
//===----------------------------------------------------------------------===//

#include "ExecSupport.h"
#include "TestSupport.h"

#include "gnnc/Dialect/GNN/Transforms/Passes.h"
#include "gnnc/Interpreter/Interpreter.h"
#include "gnnc/runtime/Npy.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <set>

using namespace gnnc;
using namespace gnnc::testing_support;

namespace {

const std::string &kCora = coraDir();

template <typename T>
::testing::AssertionResult readTensor(const std::string &file,
                                      interp::Tensor<T> &out) {
  rt::NpyArray array;
  if (auto ok = isOk(rt::readNpy(file, array)); !ok)
    return ok;
  out = interp::Tensor<T>::dense(array.shape, {});
  for (int64_t i = 0; i < array.numElements(); ++i)
    out.data.push_back(array.dtype == rt::DType::Float64
                           ? static_cast<T>(array.data<double>()[i])
                           : static_cast<T>(array.data<float>()[i]));
  return ::testing::AssertionSuccess();
}

/// Everything a case needs, loaded once per case.
struct Case {
  llvm::json::Object json;
  std::string dir;
  std::string gnnFile;
  std::string definition;
  std::map<std::string, double> hparams;
  std::shared_ptr<rt::Graph> graph;
  std::string skipReason;
};

::testing::AssertionResult loadCase(const std::string &name, Case &c) {
  GoldenFiles files;
  if (auto ok = loadGoldenFiles(name, files); !ok)
    return ok;
  c.dir = files.dir;
  c.json = std::move(files.json);
  c.gnnFile = joinPath({kRoot, c.json.getString("gnn")->str()});
  c.definition = c.json.getString("definition")->str();
  // The heads-averaged GAT is its own layer in gat.gnn.
  if (const llvm::json::Object *variant = c.json.getObject("variant"))
    if (variant->getBoolean("concat") == false)
      c.definition += "Mean";
  for (const auto &[key, value] : *c.json.getObject("hparams"))
    c.hparams[key.str()] = *value.getAsNumber();
  c.skipReason = files.skip;
  c.graph = files.graph;
  return ::testing::AssertionSuccess();
}

/// Lowers the case's layer.
::testing::AssertionResult
compileCase(const Case &c, mlir::MLIRContext &context,
            mlir::OwningOpRef<mlir::ModuleOp> &module) {
  std::string text;
  if (auto ok = readText(c.gnnFile, text); !ok)
    return ok;
  return lowerGNN(context, text, c.gnnFile, c.definition, c.hparams, module);
}

/// The arguments of the case's layer (@definition), in precision T.
template <typename T>
::testing::AssertionResult caseArgs(const Case &c, mlir::ModuleOp module,
                                    std::vector<interp::Value<T>> &args) {
  auto func = module.lookupSymbol<mlir::func::FuncOp>(c.definition);
  if (!func)
    return ::testing::AssertionFailure() << "no @" << c.definition;
  const llvm::json::Object *inputs = c.json.getObject("inputs");
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    if (mlir::isa<gnn::GraphType>(func.getArgument(i).getType())) {
      interp::GraphValue gv;
      gv.graph = c.graph;
      gv.numVertices = c.graph->numDst();
      args.push_back(gv);
      continue;
    }
    std::string file;
    if (auto param =
            func.getArgAttrOfType<mlir::StringAttr>(i, gnn::kParamAttrName)) {
      file = joinPath({c.dir, "params", param.getValue().str() + ".npy"});
    } else {
      auto name =
          func.getArgAttrOfType<mlir::StringAttr>(i, gnn::kNameAttrName);
      std::optional<llvm::StringRef> source =
          inputs->getString(name.getValue());
      if (!source)
        return ::testing::AssertionFailure()
               << "case.json names no input '" << name.getValue().str() << "'";
      file = *source == "cora" ? joinPath({kCora, "x.npy"})
                               : joinPath({c.dir, source->str()});
    }
    interp::Tensor<T> t;
    if (auto ok = readTensor(file, t); !ok)
      return ok;
    args.push_back(std::move(t));
  }
  return ::testing::AssertionSuccess();
}

/// The mode PyG's module ran in: case.json "training" (eval by default,
/// as make_goldens builds its modules).
interp::RunOptions caseOptions(const Case &c) {
  interp::RunOptions options;
  options.training = c.json.getBoolean("training").value_or(false);
  return options;
}

/// Compiles the case's layer and runs it in precision T; `buffers`, when
/// given, receives the layer's buffers as the run left them.
template <typename T>
::testing::AssertionResult
runCase(const Case &c, interp::Tensor<T> &result,
        std::map<std::string, interp::Tensor<T>> *buffers = nullptr) {
  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  if (auto ok = compileCase(c, context, module); !ok)
    return ok;
  std::vector<interp::Value<T>> args;
  if (auto ok = caseArgs(c, *module, args); !ok)
    return ok;
  std::vector<interp::Tensor<T>> results;
  std::map<std::string, interp::Tensor<T>> after;
  if (auto ok = isOk(interp::runWithBuffers<T>(*module, c.definition, args,
                                               results, after, caseOptions(c)));
      !ok)
    return ok;
  if (results.size() != 1)
    return ::testing::AssertionFailure()
           << "@" << c.definition << " returns " << results.size() << " values";
  result = std::move(results.front());
  if (buffers)
    *buffers = std::move(after);
  return ::testing::AssertionSuccess();
}

/// The largest elementwise error, relative to each expected value with a
/// floor of `floor * max|expected|` for values near zero.
template <typename T>
double maxRelativeError(const interp::Tensor<T> &got,
                        const interp::Tensor<double> &want, double floor) {
  double scale = 0;
  for (double x : want.data)
    scale = std::max(scale, std::abs(x));
  // A reference of zeros only (a gradient that vanishes in exact
  // arithmetic, case.json's gradients.exact_zero): the error is absolute.
  if (scale == 0)
    scale = 1 / floor;
  double worst = 0;
  for (size_t i = 0; i < want.data.size(); ++i) {
    double denom = std::max(std::abs(want.data[i]), floor * scale);
    worst = std::max(worst,
                     std::abs(static_cast<double>(got.data[i]) - want.data[i]) /
                         std::max(denom, 1e-300));
  }
  return worst;
}

class PyGGolden : public ::testing::TestWithParam<std::string> {};

TEST_P(PyGGolden, DoublePrecisionMatchesPyG) {
  Case c;
  ASSERT_TRUE(loadCase(GetParam(), c));
  if (!c.skipReason.empty())
    GTEST_SKIP() << c.skipReason;
  interp::Tensor<double> got, want;
  ASSERT_TRUE(runCase(c, got));
  ASSERT_TRUE(readTensor(joinPath({c.dir, "expected", "out.npy"}), want));
  ASSERT_EQ(got.shape, want.shape);
  // 1e-9 relative per element; entries a million times smaller than the
  // output's largest are compared at that scale instead.
  EXPECT_LE(maxRelativeError(got, want, 1e-6), 1e-9);
}

TEST_P(PyGGolden, SinglePrecisionIsClose) {
  Case c;
  ASSERT_TRUE(loadCase(GetParam(), c));
  if (!c.skipReason.empty())
    GTEST_SKIP() << c.skipReason;
  interp::Tensor<float> got;
  interp::Tensor<double> want;
  ASSERT_TRUE(runCase(c, got));
  ASSERT_TRUE(readTensor(joinPath({c.dir, "expected", "out.npy"}), want));
  ASSERT_EQ(got.shape, want.shape);
  EXPECT_LE(maxRelativeError(got, want, 1e-3), 1e-3);
}

/// Buffers (batch norm's running statistics) as PyG's module left them
/// after the forward: updated in training mode, unchanged in eval mode.
TEST_P(PyGGolden, BuffersMatchPyG) {
  Case c;
  ASSERT_TRUE(loadCase(GetParam(), c));
  const llvm::json::Object *files = c.json.getObject("buffers");
  if (!files)
    GTEST_SKIP() << "the layer has no buffers";
  interp::Tensor<double> out;
  std::map<std::string, interp::Tensor<double>> buffers;
  ASSERT_TRUE(runCase(c, out, &buffers));
  ASSERT_EQ(buffers.size(), files->size());
  for (const auto &[name, file] : *files) {
    interp::Tensor<double> want, before;
    ASSERT_TRUE(readTensor(joinPath({c.dir, file.getAsString()->str()}), want));
    ASSERT_TRUE(
        readTensor(joinPath({c.dir, "params", name.str() + ".npy"}), before));
    auto it = buffers.find(name.str());
    ASSERT_NE(it, buffers.end()) << name.str();
    ASSERT_EQ(it->second.shape, want.shape);
    EXPECT_LE(maxRelativeError(it->second, want, 1e-6), 1e-9) << name.str();
    // In training the forward moved them; in eval it left them alone.
    bool moved = it->second.data != before.data;
    EXPECT_EQ(moved, caseOptions(c).training) << name.str();
  }
}

/// Where PyG's default layer means something else than ours (GCN and APPNP
/// normalise both ends by in-degree on a directed graph), the difference is
/// real and documented: the default output must not match ours.
TEST_P(PyGGolden, DocumentedDifferenceFromPyGDefault) {
  Case c;
  ASSERT_TRUE(loadCase(GetParam(), c));
  std::string file = joinPath({c.dir, "expected", "out_pyg_default.npy"});
  if (!c.skipReason.empty() || !llvm::sys::fs::exists(file))
    GTEST_SKIP() << "no PyG-default output for this case";
  interp::Tensor<double> got, pygDefault;
  ASSERT_TRUE(runCase(c, got));
  ASSERT_TRUE(readTensor(file, pygDefault));
  ASSERT_EQ(got.shape, pygDefault.shape);
  EXPECT_GT(maxRelativeError(got, pygDefault, 1e-6), 1e-2);
}

/// Reverse mode against PyG: @<Layer>.backward (gnn-autodiff) called with
/// the case's cotangent returns dL/d(argument) for L = <cotangent, out>;
/// every gradient the case stores (grad_<input>.npy, grad_params/<name>.npy)
/// must match PyG's autograd within 1e-9 relative, like the forward.
TEST_P(PyGGolden, GradientsMatchPyG) {
  Case c;
  ASSERT_TRUE(loadCase(GetParam(), c));
  const llvm::json::Object *grads = c.json.getObject("gradients");
  if (!grads || !grads->getString("cotangent"))
    GTEST_SKIP() << "no gradients for this case";
  if (!c.skipReason.empty())
    GTEST_SKIP() << c.skipReason;
  const llvm::json::Object *inputGrads = grads->getObject("inputs");
  const llvm::json::Object *paramGrads = grads->getObject("params");
  ASSERT_TRUE(inputGrads && paramGrads);

  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  ASSERT_TRUE(compileCase(c, context, module));
  ASSERT_TRUE(runPipeline(context, *module, [](mlir::PassManager &pm) {
    pm.addPass(gnn::createGNNAutodiff());
  }));
  std::string backwardName = c.definition + ".backward";
  auto backward = module->lookupSymbol<mlir::func::FuncOp>(backwardName);
  ASSERT_TRUE(backward) << "no @" << backwardName;

  std::vector<interp::Value<double>> args;
  ASSERT_TRUE(caseArgs(c, *module, args));
  interp::Tensor<double> cotangent;
  ASSERT_TRUE(readTensor(
      joinPath({c.dir, grads->getString("cotangent")->str()}), cotangent));
  args.push_back(std::move(cotangent));
  std::vector<interp::Tensor<double>> got;
  ASSERT_TRUE(isOk(interp::runAll<double>(*module, backwardName, args, got,
                                          caseOptions(c))));
  ASSERT_EQ(got.size(), backward.getNumResults());

  size_t compared = 0;
  for (unsigned r = 0; r < backward.getNumResults(); ++r) {
    auto of = backward.getResultAttrOfType<mlir::StringAttr>(r, "gnn.grad_of");
    ASSERT_TRUE(of) << "result " << r << " has no gnn.grad_of";
    std::string name = of.getValue().str();
    std::optional<llvm::StringRef> file = paramGrads->getString(name);
    if (!file)
      file = inputGrads->getString(name);
    if (!file)
      continue; // not stored (Cora inputs); case.json says why
    interp::Tensor<double> want;
    ASSERT_TRUE(readTensor(joinPath({c.dir, file->str()}), want));
    ASSERT_EQ(got[r].shape, want.shape) << "gradient of " << name;
    double err = maxRelativeError(got[r], want, 1e-6);
    std::cout << "[ gradient ] " << GetParam() << " d/d" << name
              << " max relative error " << err << "\n";
    ++compared;
    // Where several edges attain a maximum, gnn routes the gradient to the
    // first of them (docs/language.md, section 14) and torch splits it
    // evenly: upstream of the max (the pooling weights) the two differ, and
    // the test shows that they do.
    const llvm::json::Object *checks = c.json.getObject("checks");
    int64_t ties =
        checks
            ? checks->getInteger("grad_max_ties_distinct_sources").value_or(0)
            : 0;
    if (ties > 0 && (name == "W_pool" || name == "x")) {
      EXPECT_GT(err, 1e-3) << "gradient of " << name << " through " << ties
                           << " tied maxima was expected to differ";
      continue;
    }
    EXPECT_LE(err, 1e-9) << "gradient of " << name << "; case.json: "
                         << grads->getString("tie_rule").value_or("").str();
  }
  // Every stored gradient belongs to some argument of the layer.
  EXPECT_EQ(compared, inputGrads->size() + paramGrads->size());
  EXPECT_GT(compared, 0u);
}

INSTANTIATE_TEST_SUITE_P(Goldens, PyGGolden,
                         ::testing::ValuesIn(goldenCaseNames()),
                         [](const auto &info) { return info.param; });

TEST(PyGGoldenSet, AllLayersCovered) {
  // GCNConv, GATConv (concat and mean), SAGEConv (mean and max), GINConv and
  // APPNP, each on the small directed graph and on Cora; the library's
  // layers on the small graph and on the power-law graph.
  std::vector<std::string> cases = goldenCaseNames();
  for (const char *prefix :
       {"gcn_small", "gcn_cora", "gat_small_concat", "gat_small_mean",
        "gat_cora_concat", "gat_cora_mean", "sage_mean_small", "sage_mean_cora",
        "sage_max_small", "sage_max_cora", "gin_small", "gin_cora",
        "appnp_small", "appnp_cora",
        // The layer library (gnn/).
        "lgconv_small", "sgconv_small_k2", "sgconv_small_k3_selfloops",
        "ssgconv_small_selfloops", "graphconv_small_add",
        "graphconv_small_mean", "leconv_small", "gcn2conv_small_selfloops",
        "gcn2conv_small_selfloops_separate", "resgatedgraphconv_small",
        "agnnconv_small_selfloops", "faconv_small_selfloops",
        "transformerconv_small", "transformerconv_small_mean", "cgconv_small",
        "gineconv_small", "wlconvcontinuous_small", "edgeconv_small",
        "nnconv_small", "gmmconv_small", "pointnetconv_small_selfloops",
        "generalconv_small", "supergatconv_small_selfloops", "filmconv_small",
        "simpleconv_small", "simpleconv_small_mean",
        "simpleconv_small_max_root", "clustergcnconv_small_selfloops",
        "cfconv_small", "genconv_small", "genconv_small_batchnorm",
        "genconv_small_batchnorm_eval", "pdnconv_small", "pnaconv_small"})
    EXPECT_NE(std::find(cases.begin(), cases.end(), prefix), cases.end())
        << prefix;
  // Every case of the library on the power-law graph too.
  for (const std::string &c : cases) {
    llvm::StringRef name(c);
    if (!name.contains("_small") || name.starts_with("gcn_") ||
        name.starts_with("gat_") || name.starts_with("sage_") ||
        name.starts_with("gin_") || name.starts_with("appnp_"))
      continue;
    std::string power = name.str();
    power.replace(power.find("_small"), 6, "_power");
    EXPECT_NE(std::find(cases.begin(), cases.end(), power), cases.end())
        << power;
  }
  // Every file of the library is some case's layer.
  std::set<std::string> covered;
  for (const std::string &c : cases) {
    Case loaded;
    ASSERT_TRUE(loadCase(c, loaded)) << c;
    covered.insert(loaded.json.getString("gnn")->str());
  }
  std::error_code ec;
  int files = 0;
  for (llvm::sys::fs::directory_iterator it(joinPath({kRoot, "gnn"}), ec), end;
       it != end && !ec; it.increment(ec)) {
    llvm::StringRef file = llvm::sys::path::filename(it->path());
    if (!file.ends_with(".gnn"))
      continue;
    ++files;
    EXPECT_TRUE(covered.count(("gnn/" + file).str())) << file.str();
  }
  EXPECT_FALSE(ec) << ec.message();
  EXPECT_GE(files, 25);
}

} // namespace
