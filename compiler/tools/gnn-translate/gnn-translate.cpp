//===- gnn-translate.cpp - Kernel IR to C++ or CUDA -----------------------===//
//
// Part of gnnc. Reads the kernel IR (`gnnc --emit=kernel-ir
// --mlir-print-debuginfo`) and prints it with a KernelTarget, as
// `gnnc --emit=cpp|cuda` does after its pipeline:
//
//   gnn-translate --gnnk-to-cpp|--gnnk-to-cuda IN.mlir -o DIR [--stem S]
//       [--cpp-namespace NS] [--line-directives] [--show-map [--width N]]
//       [--source FILE.gnn] [--entry E] [-D name=value ...] [--training]
//
// The operations' locations name the .gnn lines the generated code comes
// from; their text is read from the files the locations name.
//
//===----------------------------------------------------------------------===//

#include "gnnc/Dialect/GNN/IR/GNN.h"
#include "gnnc/Dialect/GNNK/IR/GNNK.h"
#include "gnnc/Target/Target.h"
#include "gnnc/Tools/TargetOptions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"

using namespace mlir;
namespace cl = llvm::cl;

namespace {
enum class Translation { Cpp, Cuda };

cl::OptionCategory translateCategory("gnn-translate options");

// A set, so that giving both is an error rather than the last one winning.
cl::bits<Translation> translations(
    cl::desc("Translation (exactly one):"),
    cl::values(clEnumValN(Translation::Cpp, "gnnk-to-cpp",
                          "C++ with OpenMP: <stem>.h, <stem>.cpp and "
                          "<stem>.gnnmap.json (docs/abi.md)"),
               clEnumValN(Translation::Cuda, "gnnk-to-cuda",
                          "CUDA: <stem>.h (host header), <stem>.cu and "
                          "<stem>.gnnmap.json (docs/abi.md, \"CUDA\")")),
    cl::cat(translateCategory));

cl::opt<std::string> inputFile(cl::Positional,
                               cl::desc("<input kernel IR .mlir>"),
                               cl::init("-"), cl::cat(translateCategory));

cl::opt<std::string>
    outputDir("o",
              cl::desc("Directory of the generated files (default: the "
                       "current directory)"),
              cl::value_desc("dir"), cl::init("."), cl::cat(translateCategory));

cl::opt<std::string>
    stemOption("stem",
               cl::desc("Base name of the generated files (default: the "
                        "input's name without its extension, or the .gnn "
                        "file's for standard input)"),
               cl::value_desc("name"), cl::cat(translateCategory));

cl::opt<std::string> sourceOption(
    "source",
    cl::desc("The .gnn file recorded in the generated code (default: the "
             "file of the module's first .gnn location)"),
    cl::value_desc("file"), cl::cat(translateCategory));
} // namespace

/// The file, line and column of `loc`: the first file location inside it.
static FileLineColLoc findFileLoc(Location loc) {
  FileLineColLoc found;
  loc->walk([&](Location inner) {
    if (auto file = dyn_cast<FileLineColLoc>(inner)) {
      found = file;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return found;
}

/// Checks that every operation of `module` has a location in a .gnn file
/// (not in the .mlir input `input`, where the parser places operations
/// printed without locations) and that those files can be read. Returns
/// the files, in the order of their first use. Terminators are not
/// checked: the printer elides `scf.yield`s without operands, and the parser
/// recreates them at the line of their block.
static FailureOr<llvm::SmallVector<std::string>>
collectSourceFiles(ModuleOp module, llvm::StringRef input) {
  llvm::SetVector<StringAttr> files;
  Operation *unlocated = nullptr;
  module->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (op->hasTrait<OpTrait::IsTerminator>())
      return WalkResult::advance();
    FileLineColLoc loc = findFileLoc(op->getLoc());
    if (!loc)
      return WalkResult::advance();
    if (loc.getFilename() == input) {
      unlocated = op;
      return WalkResult::interrupt();
    }
    files.insert(loc.getFilename());
    return WalkResult::advance();
  });
  if (unlocated) {
    unlocated->emitOpError()
        << "has no .gnn location: the generated code and its line map need "
           "the locations of the kernel IR (print it with `gnnc "
           "--emit=kernel-ir --mlir-print-debuginfo`)";
    return failure();
  }
  llvm::SmallVector<std::string> names;
  for (StringAttr file : files) {
    auto buffer = llvm::MemoryBuffer::getFile(file.getValue(), /*IsText=*/true);
    if (std::error_code ec = buffer.getError()) {
      llvm::WithColor::error(llvm::errs(), "gnn-translate")
          << "cannot read '" << file.getValue()
          << "', the .gnn file of the locations of " << input << ": "
          << ec.message() << "\n";
      return failure();
    }
    names.push_back(file.getValue().str());
  }
  return names;
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  gnnc::tools::registerTargetCLOptions(translateCategory,
                                       gnnc::tools::ProvenanceUse::Record);
  cl::HideUnrelatedOptions(translateCategory);
  cl::ParseCommandLineOptions(
      argc, argv,
      "gnn-translate: the kernel IR (gnnc --emit=kernel-ir "
      "--mlir-print-debuginfo) as C++ or CUDA\n");
  if (translations.getBits() == 0 || (translations.isSet(Translation::Cpp) &&
                                      translations.isSet(Translation::Cuda))) {
    llvm::WithColor::error(llvm::errs(), "gnn-translate")
        << "give one translation: --gnnk-to-cpp or --gnnk-to-cuda\n";
    return 1;
  }
  if (failed(gnnc::tools::verifyTargetCLOptions("gnn-translate", llvm::errs())))
    return 1;

  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFileOrSTDIN(inputFile, /*IsText=*/true);
  if (std::error_code ec = buffer.getError()) {
    llvm::WithColor::error(llvm::errs(), inputFile)
        << "cannot read file: " << ec.message() << "\n";
    return 1;
  }
  std::string input = (*buffer)->getBufferIdentifier().str();

  MLIRContext context;
  context.printOpOnDiagnostic(false);
  context.loadDialect<gnnc::gnn::GNNDialect, gnnc::gnnk::GNNKDialect,
                      func::FuncDialect, arith::ArithDialect, math::MathDialect,
                      memref::MemRefDialect, scf::SCFDialect>();
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(&context));
  if (!module)
    return 1;
  FailureOr<llvm::SmallVector<std::string>> sources =
      collectSourceFiles(*module, input);
  if (failed(sources))
    return 1;

  std::string source = sourceOption;
  if (source.empty() && !sources->empty())
    source = sources->front();
  std::string stem = stemOption;
  if (stem.empty())
    stem = llvm::sys::path::stem(inputFile == "-" ? source : input).str();
  if (stem.empty()) {
    llvm::WithColor::error(llvm::errs(), "gnn-translate")
        << "no name for the generated files: give --stem\n";
    return 1;
  }

  gnnc::target::DriverOptions options =
      gnnc::tools::getTargetDriverOptions(stem, source, outputDir, &sourceMgr);
  options.toolName = "gnn-translate";
  std::unique_ptr<gnnc::target::KernelTarget> target =
      translations.isSet(Translation::Cuda) ? gnnc::target::createCudaTarget()
                                            : gnnc::target::createCppTarget();
  return gnnc::target::runTargetDriver(*target, *module, options, llvm::outs(),
                                       llvm::errs());
}
