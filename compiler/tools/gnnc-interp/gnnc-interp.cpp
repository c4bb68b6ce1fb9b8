//===- gnnc-interp.cpp - Run a .gnn layer or model on .npy data -----------===//
//
// Part of gnnc. The command-line mode of the reference interpreter:
//
//   gnnc-interp model.gnn --entry GCN --graph data/cora
//       [--inputs DIR] [--params DIR] [--define k=v]... [--precision f64]
//       [--self-loops] [--training] -o out.npy
//
// The graph directory has the layout of a dataset: edge_index.npy (int64
// [2, E], row 0 sources, row 1 destinations) and x.npy, whose row count is
// the number of vertices. A batched graph also has batch.npy (int64 [N], the
// graph of every vertex). Each tensor argument `name` of forward is read
// from `--inputs/name.npy`, or else from the graph directory; each parameter
// `path` (e.g. `conv1.W`) from `--params/path.npy`.
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
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"

#include <cstring>

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
} // namespace

static int fail(const std::string &message) {
  llvm::WithColor::error(llvm::errs(), "gnnc-interp") << message << "\n";
  return 1;
}

static std::string join(const std::string &dir, const std::string &file) {
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, file);
  return std::string(path);
}

/// Reads a float32 or float64 .npy into a tensor of T.
template <typename T>
static rt::Status readTensor(const std::string &path, interp::Tensor<T> &out) {
  rt::NpyArray array;
  rt::Status s = rt::readNpy(path, array);
  if (!s.ok())
    return s;
  out = interp::Tensor<T>::dense(array.shape, {});
  int64_t n = array.numElements();
  out.data.resize(n);
  if (array.dtype == rt::DType::Float64) {
    const double *d = array.data<double>();
    for (int64_t i = 0; i < n; ++i)
      out.data[i] = static_cast<T>(d[i]);
  } else if (array.dtype == rt::DType::Float32) {
    const float *d = array.data<float>();
    for (int64_t i = 0; i < n; ++i)
      out.data[i] = static_cast<T>(d[i]);
  } else {
    return rt::Status::error(path + ": expected float32 or float64 data");
  }
  return rt::Status::success();
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
        for (int64_t id : value.graphOf) {
          if (id < 0)
            return fail(path + ": graph ids must be non-negative");
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
      return fail(s.message());
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
  return precision == Precision::F64 ? runAs<double>(*module)
                                     : runAs<float>(*module);
}
