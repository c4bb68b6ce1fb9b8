//===- PrintTarget.cpp - A printer on a module read from a file -----------===//
//
// Part of gnnc. gnnc-print-target runs the C++ or the CUDA target on gnn IR
// written by `gnnc --emit=mlir-grad-unfused --mlir-print-debuginfo` (or any
// other stage), so that the tests can print modules that `gnnc --emit=cpp`
// and `--emit=cuda` would fuse first: the unfused dialect keeps its gathers,
// scatters, edge softmaxes and selections on the host side, where the
// runtime library or the device runtime (tests/Target/Exec) computes
// them.
//
//   gnnc-print-target IN.mlir -o DIR --stem S --cpp-namespace NS
//       [--target=cpp|cuda] --source FILE.gnn [--entry E]
//       [-D name=value ...] [--training]
//
//===----------------------------------------------------------------------===//

#include "gnnc/Dialect/GNN/IR/GNN.h"
#include "gnnc/Dialect/GNNK/IR/GNNK.h"
#include "gnnc/Target/Target.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

namespace cl = llvm::cl;

static cl::opt<std::string> input(cl::Positional, cl::desc("<input .mlir>"),
                                  cl::Required);
static cl::opt<std::string> outputDir("o", cl::desc("Output directory"),
                                      cl::Required);
static cl::opt<std::string> stem("stem", cl::desc("Base name of the files"),
                                 cl::Required);
static cl::opt<std::string> ns("cpp-namespace", cl::desc("C++ namespace"));
static cl::opt<std::string> source("source",
                                   cl::desc("The .gnn file (provenance)"));
static cl::opt<std::string> entry("entry", cl::desc("--entry (provenance)"));
static cl::list<std::string> defines("D", cl::desc("-D values (provenance)"),
                                     cl::ZeroOrMore, cl::Prefix);
static cl::opt<bool> training("training",
                              cl::desc("Compiled with backward functions"));
static cl::opt<std::string>
    targetName("target", cl::desc("The printer: cpp or cuda"), cl::init("cpp"));

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv, "gnnc-print-target\n");
  std::unique_ptr<gnnc::target::KernelTarget> target;
  if (targetName == "cpp") {
    target = gnnc::target::createCppTarget();
  } else if (targetName == "cuda") {
    target = gnnc::target::createCudaTarget();
  } else {
    llvm::errs() << "gnnc-print-target: unknown --target '" << targetName
                 << "' (expected cpp or cuda)\n";
    return 1;
  }
  mlir::MLIRContext context;
  context.loadDialect<gnnc::gnn::GNNDialect, gnnc::gnnk::GNNKDialect,
                      mlir::func::FuncDialect, mlir::arith::ArithDialect,
                      mlir::math::MathDialect, mlir::memref::MemRefDialect,
                      mlir::scf::SCFDialect>();
  llvm::SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(input, sourceMgr, &context);
  if (!module)
    return 1;
  gnnc::target::DriverOptions options;
  options.target.stem = stem;
  options.target.cppNamespace = ns;
  options.target.source = source;
  options.target.entry = entry;
  options.target.defines.assign(defines.begin(), defines.end());
  options.target.training = training;
  options.outputDir = outputDir;
  return gnnc::target::runTargetDriver(*target, *module, options, llvm::outs(),
                                       llvm::errs());
}
