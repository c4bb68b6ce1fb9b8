//===- gnnc-interp.cpp - Run a .gnn layer or model on .npy data -----------===//
//
// Part of gnnc. The command-line mode of the reference interpreter:
//
//   gnnc-interp model.gnn --entry GCN --graph data/cora
//       [--inputs DIR] [--params DIR] [--define k=v]... [--precision f64]
//       [--self-loops] [--training] [--allow-nonfinite] -o out.npy
//
// The graph directory has the layout of a dataset: edge_index.npy (int64
// [2, E], row 0 sources, row 1 destinations) and x.npy, whose row count is
// the number of vertices. A batched graph also has batch.npy (int64 [N], the
// graph of every vertex, each below N). Each tensor argument `name` of
// forward is read from `--inputs/name.npy`, or else from the graph
// directory; each parameter `path` (e.g. `conv1.W`) from
// `--params/path.npy`. Tensors may be float32 or float64
// (rt::readNpyAsFloat32, rt::readNpyAsFloat64); NaN and infinite values in
// them are an error unless --allow-nonfinite. Running out of memory is an
// error (exit status 1) like any other.
//
//===----------------------------------------------------------------------===//

#include "gnnc/Conversion/ASTToGNN/MLIRGen.h"
#include "gnnc/Dialect/GNN/Transforms/Passes.h"
#include "gnnc/Frontend/Frontend.h"
#include "gnnc/Interpreter/Interpreter.h"
#include "gnnc/runtime/Npy.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"

#include <cstdlib>
#include <cstring>
#include <new>

using namespace gnnc;
namespace g = gnnc::gnn;

namespace {
llvm::cl::OptionCategory category("gnnc-interp options");
llvm::cl::opt<std::string> inputFile(llvm::cl::Positional, llvm::cl::Required,
                                     llvm::cl::desc("<input .gnn file>"),
                                     llvm::cl::cat(category));
llvm::cl::opt<std::string> entry("entry", llvm::cl::Required,
                                 llvm::cl::desc("Layer or model to run"),
                                 llvm::cl::cat(category));
llvm::cl::opt<std::string> graphDir("graph", llvm::cl::Required,
                                    llvm::cl::desc("Graph directory"),
                                    llvm::cl::cat(category));
llvm::cl::opt<std::string>
    inputsDir("inputs", llvm::cl::desc("Directory of input tensors"),
              llvm::cl::cat(category));
llvm::cl::opt<std::string>
    paramsDir("params", llvm::cl::desc("Directory of parameter tensors"),
              llvm::cl::cat(category));
llvm::cl::opt<std::string> outputFile("o", llvm::cl::Required,
                                      llvm::cl::desc("Output .npy file"),
                                      llvm::cl::cat(category));
llvm::cl::list<std::string>
    defines("define", llvm::cl::desc("Hyper-parameter value name=value"),
            llvm::cl::cat(category));
llvm::cl::alias definesShort("D", llvm::cl::aliasopt(defines),
                             llvm::cl::desc("Alias for --define"),
                             llvm::cl::cat(category));
enum class Precision { F32, F64 };
llvm::cl::opt<Precision> precision(
    "precision", llvm::cl::desc("Arithmetic precision"),
    llvm::cl::init(Precision::F64),
    llvm::cl::values(clEnumValN(Precision::F32, "f32", "single precision"),
                     clEnumValN(Precision::F64, "f64", "double precision")),
    llvm::cl::cat(category));
llvm::cl::opt<bool> selfLoops("self-loops",
                              llvm::cl::desc("Add one self-loop per vertex"),
                              llvm::cl::cat(category));
llvm::cl::opt<int64_t> numNodes(
    "num-nodes",
    llvm::cl::desc("Number of vertices (default: the rows of GRAPH/x.npy)"),
    llvm::cl::init(-1), llvm::cl::cat(category));
llvm::cl::opt<bool> fuse("fuse",
                         llvm::cl::desc("Run the fused IR (after gnn-fuse)"),
                         llvm::cl::cat(category));
llvm::cl::opt<bool> training("training",
                             llvm::cl::desc("Apply dropout (training mode)"),
                             llvm::cl::cat(category));
llvm::cl::opt<bool> allowNonFinite(
    "allow-nonfinite",
    llvm::cl::desc("Accept NaN and infinite values in input and parameter "
                   "tensors"),
    llvm::cl::cat(category));
} // namespace

static int fail(const std::string &message) {
  llvm::WithColor::error(llvm::errs(), "gnnc-interp") << message << "\n";
  return 1;
}

/// LLVM's allocation failures (and, through LLVM's new-handler, any that
/// happen before main resets it): one error line and exit status 1.
static void reportOutOfMemory(void *, const char *reason, bool) {
  llvm::WithColor::error(llvm::errs(), "gnnc-interp")
      << "out of memory (" << reason << ")\n";
  llvm::errs().flush();
  std::_Exit(1);
}

static std::string join(const std::string &dir, const std::string &file) {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, file);
  return std::string(path);
}

/// Reads a float32 or float64 .npy into a tensor of T (float or double).
template <typename T>
static rt::Status readTensor(const std::string &path, interp::Tensor<T> &out) {
  rt::NpyArray array;
  rt::FloatReadOptions options;
  options.AllowNonFinite = allowNonFinite;
  rt::Status s = std::is_same_v<T, float>
                     ? rt::readNpyAsFloat32(path, array, options)
                     : rt::readNpyAsFloat64(path, array, options);
  if (!s.ok())
    return s;
  out = interp::Tensor<T>::dense(array.shape, {});
  const T *data = array.data<T>();
  out.data.assign(data, data + (data ? array.numElements() : 0));
  return rt::Status::success();
}

/// What to add to an error about a NaN or an infinity in a tensor.
static std::string nonFiniteHint(const rt::Status &s) {
  if (allowNonFinite ||
      s.message().find("(non-finite values are rejected)") == std::string::npos)
    return "";
  return "; --allow-nonfinite accepts them";
}

template <typename T> static int runAs(mlir::ModuleOp module) {
  auto func = module.lookupSymbol<mlir::func::FuncOp>(entry);
  if (!func)
    return fail("no function @" + entry + " (is '" + entry +
                "' a layer or model of the file?)");

  std::vector<interp::Value<T>> args;
  std::shared_ptr<rt::Graph> graph;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    mlir::Type type = func.getArgument(i).getType();
    if (auto graphType = mlir::dyn_cast<g::GraphType>(type)) {
      if (!graph) {
        rt::Graph loaded;
        rt::Status s = rt::loadGraphDir(graphDir, loaded, numNodes);
        if (!s.ok())
          return fail(s.message());
        if (selfLoops) {
          rt::Graph looped;
          s = rt::addSelfLoops(loaded, looped);
          if (!s.ok())
            return fail(s.message());
          loaded = std::move(looped);
        }
        graph = std::make_shared<rt::Graph>(std::move(loaded));
      }
      interp::GraphValue value;
      value.kind = graphType.getKind();
      value.graph = graph;
      value.numVertices = graph->numDst();
      if (value.kind == g::GraphKind::batched) {
        rt::NpyArray batch;
        std::string path = join(graphDir, "batch.npy");
        rt::Status s =
            rt::readNpyExpect(path, rt::DType::Int64, {graph->numDst()}, batch);
        if (!s.ok())
          return fail(s.message());
        const int64_t *ids = batch.data<int64_t>();
        value.graphOf.assign(ids, ids + graph->numDst());
        // N vertices make at most N graphs: larger ids would only size the
        // per-graph tensors.
        for (int64_t v = 0; v < graph->numDst(); ++v) {
          int64_t id = value.graphOf[v];
          if (id < 0)
            return fail(path + ": graph ids must be non-negative");
          if (id >= graph->numDst())
            return fail(path + ": vertex " + std::to_string(v) +
                        " is in graph " + std::to_string(id) +
                        "; graph ids must be below the number of vertices, " +
                        std::to_string(graph->numDst()));
          value.numGraphs = std::max(value.numGraphs, id + 1);
        }
      } else if (value.kind != g::GraphKind::graph) {
        return fail("gnnc-interp runs layers on a Graph or BatchedGraph; '" +
                    entry + "' takes a " +
                    g::stringifyGraphKind(value.kind).str());
      }
      args.push_back(value);
      continue;
    }
    interp::Tensor<T> tensor;
    std::string path;
    if (auto param =
            func.getArgAttrOfType<mlir::StringAttr>(i, g::kParamAttrName)) {
      if (paramsDir.empty())
        return fail("parameter '" + param.getValue().str() +
                    "' needs --params DIR");
      path = join(paramsDir, param.getValue().str() + ".npy");
    } else {
      auto name = func.getArgAttrOfType<mlir::StringAttr>(i, g::kNameAttrName);
      std::string file = (name ? name.getValue().str() : "x") + ".npy";
      path = join(inputsDir.empty() ? graphDir : inputsDir, file);
      if (!inputsDir.empty() && !llvm::sys::fs::exists(path))
        path = join(graphDir, file);
    }
    rt::Status s = readTensor(path, tensor);
    if (!s.ok())
      return fail(s.message() + nonFiniteHint(s));
    args.push_back(std::move(tensor));
  }

  interp::Tensor<T> result;
  interp::RunOptions options;
  options.training = training;
  rt::Status s = interp::run<T>(module, entry, args, result, options);
  if (!s.ok())
    return fail(s.message());

  rt::NpyArray out;
  out.shape = result.shape;
  out.dtype =
      std::is_same_v<T, double> ? rt::DType::Float64 : rt::DType::Float32;
  out.bytes.resize(result.data.size() * sizeof(T));
  std::memcpy(out.bytes.data(), result.data.data(), out.bytes.size());
  s = rt::writeNpy(outputFile, out);
  if (!s.ok())
    return fail(s.message());
  return 0;
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  // LLVM's new-handler aborts on a failed allocation; without it operator
  // new throws std::bad_alloc, which the runtime and runAs() report.
  std::set_new_handler(nullptr);
  llvm::install_bad_alloc_error_handler(reportOutOfMemory);
  llvm::cl::HideUnrelatedOptions(category);
  llvm::cl::ParseCommandLineOptions(
      argc, argv, "gnnc-interp: run a .gnn layer or model on .npy data\n");

  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFile(inputFile, /*IsText=*/true);
  if (std::error_code ec = buffer.getError())
    return fail(inputFile + ": cannot read file: " + ec.message());
  llvm::SourceMgr sourceMgr;
  unsigned id = sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  DiagnosticEngine diags(sourceMgr, llvm::errs());
  FrontendResult frontend = runFrontend(id, diags);
  if (!frontend.success)
    return 1;

  MLIRGenOptions options;
  options.entry = entry;
  if (!parseDefines(defines, options, diags, inputFile))
    return 1;
  mlir::MLIRContext context;
  mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlirGen(context, *frontend.module, diags, options);
  if (!module)
    return 1;
  if (fuse) {
    mlir::PassManager pm(&context);
    gnn::buildFusionPipeline(pm);
    if (mlir::failed(pm.run(*module)))
      return 1;
  }
  try {
    return precision == Precision::F64 ? runAs<double>(*module)
                                       : runAs<float>(*module);
  } catch (const std::bad_alloc &) {
    return fail("out of memory running @" + entry);
  }
}
