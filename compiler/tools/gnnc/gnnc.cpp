//===- gnnc.cpp - The gnnc compiler driver --------------------------------===//
//
// Part of gnnc. Usage: gnnc FILE [-o OUT]
//   --emit=tokens|ast|mlir|mlir-grad|mlir-fused|kernel-ir
//
//===----------------------------------------------------------------------===//

#include "gnnc/Conversion/ASTToGNN/MLIRGen.h"
#include "gnnc/Frontend/Frontend.h"

#include "gnnc/Dialect/GNN/Transforms/Passes.h"
#include "gnnc/Dialect/GNNK/Transforms/Passes.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

using namespace gnnc;

namespace {
enum class EmitKind { Tokens, AST, MLIR, MLIRGrad, MLIRFused, KernelIR };

llvm::cl::OptionCategory gnncCategory("gnnc options");

llvm::cl::opt<std::string> inputFile(llvm::cl::Positional,
                                     llvm::cl::desc("<input .gnn file>"),
                                     llvm::cl::Required,
                                     llvm::cl::cat(gnncCategory));

llvm::cl::opt<std::string>
    outputFile("o", llvm::cl::desc("Output file (default: standard output)"),
               llvm::cl::value_desc("file"), llvm::cl::init("-"),
               llvm::cl::cat(gnncCategory));

llvm::cl::opt<EmitKind> emitKind(
    "emit", llvm::cl::desc("What to produce"), llvm::cl::init(EmitKind::AST),
    llvm::cl::values(
        clEnumValN(EmitKind::Tokens, "tokens", "the token stream"),
        clEnumValN(EmitKind::AST, "ast",
                   "the checked AST with locations and types"),
        clEnumValN(EmitKind::MLIR, "mlir",
                   "the gnn dialect, before any optimisation"),
        clEnumValN(EmitKind::MLIRGrad, "mlir-grad",
                   "the gnn dialect with a backward function @F.backward "
                   "per function (gnn-autodiff; unfused for now)"),
        clEnumValN(EmitKind::MLIRFused, "mlir-fused",
                   "the gnn dialect after gather-scatter fusion"),
        clEnumValN(EmitKind::KernelIR, "kernel-ir",
                   "after fusion, every aggregation as a gnnk kernel")),
    llvm::cl::cat(gnncCategory));

llvm::cl::list<std::string>
    defines("define",
            llvm::cl::desc("Value of a hyper-parameter of the top-level "
                           "layers and models"),
            llvm::cl::value_desc("name=value"), llvm::cl::ZeroOrMore,
            llvm::cl::cat(gnncCategory));
llvm::cl::alias definesShort("D", llvm::cl::desc("Alias for --define"),
                             llvm::cl::aliasopt(defines),
                             llvm::cl::cat(gnncCategory));

llvm::cl::opt<std::string>
    entry("entry",
          llvm::cl::desc("Emit only this layer or model (and what it uses)"),
          llvm::cl::value_desc("name"), llvm::cl::cat(gnncCategory));
} // namespace

static void printVersion(llvm::raw_ostream &os) {
  os << "gnnc version " GNNC_VERSION " (LLVM " LLVM_VERSION_STRING ")\n";
}

static void printTokens(const std::vector<Token> &tokens,
                        const llvm::SourceMgr &sourceMgr,
                        llvm::raw_ostream &os) {
  for (const Token &tok : tokens) {
    auto [line, col] = sourceMgr.getLineAndColumn(tok.loc);
    os << llvm::formatv("{0}:{1} {2}", line, col, getTokenName(tok.kind));
    if (!tok.text.empty())
      os << " '" << tok.text << "'";
    os << "\n";
  }
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  llvm::cl::HideUnrelatedOptions(gnncCategory);
  llvm::cl::SetVersionPrinter(printVersion);
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  mlir::registerPassManagerCLOptions();
  llvm::cl::ParseCommandLineOptions(
      argc, argv, "gnnc: a compiler for node-centric graph neural networks\n");

  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFileOrSTDIN(inputFile, /*IsText=*/true);
  if (std::error_code ec = buffer.getError()) {
    llvm::WithColor::error(llvm::errs(), inputFile)
        << "cannot read file: " << ec.message() << "\n";
    return 1;
  }

  llvm::SourceMgr sourceMgr;
  unsigned id = sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  DiagnosticEngine diags(sourceMgr, llvm::errs());
  FrontendResult result = runFrontend(
      id, diags,
      emitKind == EmitKind::Tokens ? FrontendStage::Lex : FrontendStage::Check);
  if (!result.success)
    return 1;

  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> mlirModule;
  if (emitKind == EmitKind::MLIR || emitKind == EmitKind::MLIRGrad ||
      emitKind == EmitKind::MLIRFused || emitKind == EmitKind::KernelIR) {
    MLIRGenOptions options;
    options.entry = entry;
    if (!parseDefines(defines, options, diags, inputFile))
      return 1;
    // MLIR's own diagnostics (verifier failures) print with carets too.
    mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context);
    mlirModule = mlirGen(context, *result.module, diags, options);
    if (!mlirModule)
      return 1;
    if (emitKind == EmitKind::MLIRGrad || emitKind == EmitKind::MLIRFused ||
        emitKind == EmitKind::KernelIR) {
      mlir::PassManager pm(&context);
      if (mlir::failed(mlir::applyPassManagerCLOptions(pm)))
        return 1;
      if (emitKind == EmitKind::MLIRGrad)
        pm.addPass(gnnc::gnn::createGNNAutodiff());
      else
        gnnc::gnn::buildFusionPipeline(pm);
      if (emitKind == EmitKind::KernelIR)
        gnnc::gnnk::buildKernelPipeline(pm);
      if (mlir::failed(pm.run(*mlirModule)))
        return 1;
    }
  }

  std::error_code ec;
  llvm::ToolOutputFile output(outputFile, ec, llvm::sys::fs::OF_Text);
  if (ec) {
    llvm::WithColor::error(llvm::errs(), outputFile)
        << "cannot open output file: " << ec.message() << "\n";
    return 1;
  }
  if (emitKind == EmitKind::Tokens)
    printTokens(result.tokens, sourceMgr, output.os());
  else if (emitKind == EmitKind::AST)
    dumpAST(*result.module, sourceMgr, output.os());
  else {
    mlirModule->print(output.os(), mlir::OpPrintingFlags());
    output.os() << "\n";
  }
  output.os().flush();
  if (output.os().has_error()) {
    llvm::WithColor::error(llvm::errs(), outputFile)
        << "cannot write output file\n";
    output.os().clear_error();
    return 1;
  }
  output.keep();
  return 0;
}
