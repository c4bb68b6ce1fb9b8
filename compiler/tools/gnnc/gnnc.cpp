//===- gnnc.cpp - The gnnc compiler driver --------------------------------===//
//
// Part of gnnc. Usage: gnnc FILE [-o OUT]
//   --emit=tokens|ast|mlir|mlir-grad|mlir-grad-unfused|remat-report|
//          mlir-fused|kernel-ir  [--remat=auto|always|never] [--training]
//   --emit=cpp -o DIR [--cpp-namespace=NS] [--line-directives]
//   --target=cuda --emit=cuda -o DIR [--cpp-namespace=NS] [--line-directives]
//   --show-map [--target=cpp|cuda] [--width=N]
//   --emit=html [-o PAGE.html] [--target=cpp|cuda] [--training]
//
//===----------------------------------------------------------------------===//

#include "gnnc/Conversion/ASTToGNN/MLIRGen.h"
#include "gnnc/Frontend/Frontend.h"

#include "gnnc/Dialect/GNN/Transforms/Passes.h"
#include "gnnc/Target/HtmlView.h"
#include "gnnc/Target/Passes.h"
#include "gnnc/Target/SourceInfo.h"
#include "gnnc/Target/Target.h"
#include "gnnc/Tools/TargetOptions.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"

using namespace gnnc;

namespace {
enum class EmitKind {
  Tokens,
  AST,
  MLIR,
  MLIRGrad,
  MLIRGradUnfused,
  RematReport,
  MLIRFused,
  KernelIR,
  Cpp,
  Cuda,
  Html
};

enum class TargetKind { Default, Cpp, Cuda };

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
                   "the training module, fused: per function @F, a saving "
                   "forward @F.train and its @F.backward (gnn-autodiff, "
                   "gnn-remat, fusion)"),
        clEnumValN(EmitKind::MLIRGradUnfused, "mlir-grad-unfused",
                   "gnn-autodiff alone: @F.backward recomputing the "
                   "forward, unfused"),
        clEnumValN(EmitKind::RematReport, "remat-report",
                   "what the forward stores for the backward and what the "
                   "backward recomputes, with bytes and .gnn locations"),
        clEnumValN(EmitKind::MLIRFused, "mlir-fused",
                   "the gnn dialect after gather-scatter fusion"),
        clEnumValN(EmitKind::KernelIR, "kernel-ir",
                   "after fusion, every aggregation as a gnnk kernel (with "
                   "--mlir-print-debuginfo, what gnn-translate reads)"),
        clEnumValN(EmitKind::Cpp, "cpp",
                   "C++ with OpenMP: <stem>.h, <stem>.cpp and "
                   "<stem>.gnnmap.json in the directory -o (docs/abi.md)"),
        clEnumValN(EmitKind::Cuda, "cuda",
                   "CUDA: <stem>.h (host header), <stem>.cu and "
                   "<stem>.gnnmap.json in the directory -o (docs/abi.md, "
                   "\"CUDA\")"),
        clEnumValN(EmitKind::Html, "html",
                   "one self-contained page: the source beside the fused "
                   "IR, the kernel IR and the generated code (with "
                   "--target=cuda, the CUDA too), linked line to line, "
                   "with the fused kernels and the remat decisions "
                   "(docs/html-view.md)")),
    llvm::cl::cat(gnncCategory));

llvm::cl::opt<TargetKind> targetKind(
    "target",
    llvm::cl::desc("The backend of --emit=cpp|cuda and --show-map (default: "
                   "the one --emit names, else cpp)"),
    llvm::cl::init(TargetKind::Default),
    llvm::cl::values(clEnumValN(TargetKind::Cpp, "cpp", "C++ with OpenMP"),
                     clEnumValN(TargetKind::Cuda, "cuda", "CUDA")),
    llvm::cl::cat(gnncCategory));

llvm::cl::opt<std::string>
    remat("remat",
          llvm::cl::desc("What the backward recomputes instead of reading "
                         "from the forward: auto (cost model), always "
                         "(every per-edge value), never (store everything)"),
          llvm::cl::value_desc("auto|always|never"), llvm::cl::init("auto"),
          llvm::cl::cat(gnncCategory));

llvm::cl::opt<double> rematBalance(
    "remat-balance",
    llvm::cl::desc("Flop per byte at which recomputing a per-edge value "
                   "costs as much as storing it (--remat=auto)"),
    llvm::cl::init(8.0), llvm::cl::cat(gnncCategory));

llvm::cl::opt<int64_t> reportNodes(
    "report-nodes",
    llvm::cl::desc("Vertex count for the bytes of --emit=remat-report "
                   "(default: Cora)"),
    llvm::cl::init(2708), llvm::cl::cat(gnncCategory));

llvm::cl::opt<int64_t> reportEdges(
    "report-edges",
    llvm::cl::desc("Edge count for the bytes of --emit=remat-report "
                   "(default: Cora with a self-loop per vertex)"),
    llvm::cl::init(13264), llvm::cl::cat(gnncCategory));

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

/// Writes `text` to `outputFile` ("-": standard output) as a whole; returns
/// the exit status.
static int writeOutput(llvm::StringRef text) {
  if (outputFile == "-") {
    llvm::outs() << text;
    llvm::outs().flush();
    if (llvm::outs().has_error()) {
      llvm::WithColor::error(llvm::errs(), "gnnc")
          << "cannot write to standard output\n";
      llvm::outs().clear_error();
      return 1;
    }
    return 0;
  }
  std::string error;
  if (mlir::failed(
          gnnc::target::writeFileAtomically(outputFile, text, error))) {
    llvm::WithColor::error(llvm::errs(), outputFile)
        << "cannot open output file: " << error << "\n";
    return 1;
  }
  return 0;
}

/// --emit=html: compiles `module` through every stage the page shows and
/// writes the page. Nothing is written unless every stage succeeds.
static int emitHtml(mlir::ModuleOp module, const llvm::SourceMgr &sourceMgr,
                    const gnnc::gnn::GNNRematOptions &rematOptions,
                    bool training, const std::string &command) {
  namespace target = gnnc::target;
  target::HtmlPage page;
  page.command = command;
  page.training = training;
  page.vertices = rematOptions.vertices;
  page.edges = rematOptions.edges;

  // The remat decisions, on a copy differentiated alone.
  std::string report;
  {
    mlir::OwningOpRef<mlir::ModuleOp> copy = module.clone();
    mlir::PassManager pm(module.getContext());
    if (mlir::failed(mlir::applyPassManagerCLOptions(pm)))
      return 1;
    pm.addPass(gnnc::gnn::createGNNAutodiff());
    if (mlir::failed(pm.run(*copy)))
      return 1;
    llvm::raw_string_ostream os(report);
    if (mlir::failed(gnnc::gnn::runRemat(*copy, rematOptions, &os)))
      return 1;
  }

  mlir::PassManager fusion(module.getContext());
  if (mlir::failed(mlir::applyPassManagerCLOptions(fusion)))
    return 1;
  if (training)
    gnnc::gnn::buildTrainingPipeline(fusion, rematOptions);
  else
    gnnc::gnn::buildFusionPipeline(fusion);
  if (mlir::failed(fusion.run(module)))
    return 1;
  page.tabs.push_back(target::printIRTab(
      module, "fused-ir", training ? "fused gnn IR (training)" : "fused gnn IR",
      "fused-ir"));
  page.kernels = target::collectFusedKernels(module);

  mlir::PassManager kernels(module.getContext());
  if (mlir::failed(mlir::applyPassManagerCLOptions(kernels)))
    return 1;
  target::buildKernelIRPipeline(kernels);
  if (mlir::failed(kernels.run(module)))
    return 1;
  page.tabs.push_back(
      target::printIRTab(module, "kernel-ir", "kernel IR", "kernel-ir"));

  // C++ always, CUDA with --target=cuda.
  std::vector<bool> printCuda{false};
  if (targetKind == TargetKind::Cuda)
    printCuda.push_back(true);
  target::DriverOptions options = gnnc::tools::getTargetDriverOptions(
      llvm::sys::path::stem(inputFile), inputFile, ".", &sourceMgr);
  std::vector<std::string> others;
  for (bool cuda : printCuda) {
    std::unique_ptr<target::KernelTarget> printer =
        cuda ? target::createCudaTarget() : target::createCppTarget();
    std::vector<target::GeneratedFile> files;
    if (mlir::failed(printer->printModule(module, options.target, files)))
      return 1;
    for (const target::GeneratedFile &file : files) {
      target::HtmlTab tab;
      tab.target = cuda ? "cuda" : "cpp";
      tab.id = tab.target + "-" + file.name;
      std::replace_if(
          tab.id.begin(), tab.id.end(),
          [](char c) { return !llvm::isAlnum(c) && c != '-'; }, '-');
      tab.title = (cuda ? "CUDA " : "C++ ") + file.name;
      tab.file = file.name;
      tab.language = "cpp";
      tab.text = file.contents;
      tab.lines = file.lineSources;
      page.tabs.push_back(std::move(tab));
    }
    for (const std::string &source : target::buildLineMap(files).sources())
      if (source != inputFile && !llvm::is_contained(others, source))
        others.push_back(source);
  }
  page.sources.push_back(inputFile);
  llvm::sort(others);
  page.sources.insert(page.sources.end(), others.begin(), others.end());
  page.remat = target::parseRematReport(report, page.sources);

  std::string text;
  llvm::raw_string_ostream os(text);
  target::SourceFiles sourceFiles(&sourceMgr);
  target::printHtmlPage(page, sourceFiles, os);
  os.flush();
  return writeOutput(text);
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  // --cpp-namespace, --line-directives, --show-map, --width, --training,
  // --define and --entry, shared with gnn-translate.
  gnnc::tools::registerTargetCLOptions(gnncCategory,
                                       gnnc::tools::ProvenanceUse::Compile);
  llvm::cl::HideUnrelatedOptions(gnncCategory);
  llvm::cl::SetVersionPrinter(printVersion);
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  mlir::registerPassManagerCLOptions();
  // The page shows the command line (without the program's directory).
  std::string command = "gnnc";
  for (int i = 1; i < argc; ++i)
    command += std::string(" ") + argv[i];
  llvm::cl::ParseCommandLineOptions(
      argc, argv, "gnnc: a compiler for node-centric graph neural networks\n");

  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      llvm::MemoryBuffer::getFileOrSTDIN(inputFile, /*IsText=*/true);
  if (std::error_code ec = buffer.getError()) {
    llvm::WithColor::error(llvm::errs(), inputFile)
        << "cannot read file: " << ec.message() << "\n";
    return 1;
  }

  // --target picks the backend; --emit=cpp|cuda must agree with it.
  if ((emitKind == EmitKind::Cpp && targetKind == TargetKind::Cuda) ||
      (emitKind == EmitKind::Cuda && targetKind == TargetKind::Cpp)) {
    llvm::WithColor::error(llvm::errs(), "gnnc")
        << "--emit=" << (emitKind == EmitKind::Cpp ? "cpp" : "cuda")
        << " prints for its own target; it cannot be combined with --target="
        << (targetKind == TargetKind::Cpp ? "cpp" : "cuda") << "\n";
    return 1;
  }
  if (mlir::failed(gnnc::tools::verifyTargetCLOptions("gnnc", llvm::errs())))
    return 1;
  const gnnc::tools::TargetCLValues targetValues =
      gnnc::tools::getTargetCLValues();
  const std::string &entry = targetValues.entry;
  const std::vector<std::string> &defines = targetValues.defines;
  const bool training = targetValues.training;
  if (targetValues.showMap && emitKind == EmitKind::Html) {
    llvm::WithColor::error(llvm::errs(), "gnnc")
        << "--show-map prints the map to the terminal; it cannot be combined "
           "with --emit=html, whose page shows it\n";
    return 1;
  }
  if (targetValues.showMap)
    emitKind = targetKind == TargetKind::Cuda || emitKind == EmitKind::Cuda
                   ? EmitKind::Cuda
                   : EmitKind::Cpp;

  llvm::SourceMgr sourceMgr;
  unsigned id = sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  DiagnosticEngine diags(sourceMgr, llvm::errs());
  FrontendResult result = runFrontend(
      id, diags,
      emitKind == EmitKind::Tokens ? FrontendStage::Lex : FrontendStage::Check);
  if (!result.success)
    return 1;

  if (remat != "auto" && remat != "always" && remat != "never") {
    llvm::WithColor::error(llvm::errs(), "gnnc")
        << "unknown --remat value '" << remat
        << "'; expected auto, always or never\n";
    return 1;
  }
  gnnc::gnn::GNNRematOptions rematOptions;
  rematOptions.policy = remat;
  rematOptions.balance = rematBalance;
  rematOptions.vertices = reportNodes;
  rematOptions.edges = reportEdges;

  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> mlirModule;
  std::string report;
  if (emitKind != EmitKind::Tokens && emitKind != EmitKind::AST) {
    MLIRGenOptions options;
    options.entry = entry;
    if (!parseDefines(defines, options, diags, inputFile))
      return 1;
    // MLIR's own diagnostics (verifier failures) print with carets too.
    mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context);
    mlirModule = mlirGen(context, *result.module, diags, options);
    if (!mlirModule)
      return 1;
    if (emitKind == EmitKind::Html)
      return emitHtml(*mlirModule, sourceMgr, rematOptions, training, command);
    if (emitKind != EmitKind::MLIR) {
      mlir::PassManager pm(&context);
      if (mlir::failed(mlir::applyPassManagerCLOptions(pm)))
        return 1;
      if (emitKind == EmitKind::MLIRGradUnfused ||
          emitKind == EmitKind::RematReport)
        pm.addPass(gnnc::gnn::createGNNAutodiff());
      else if (emitKind == EmitKind::MLIRGrad || training)
        gnnc::gnn::buildTrainingPipeline(pm, rematOptions);
      else
        gnnc::gnn::buildFusionPipeline(pm);
      bool printSource =
          emitKind == EmitKind::Cpp || emitKind == EmitKind::Cuda;
      if (emitKind == EmitKind::KernelIR || printSource)
        gnnc::target::buildKernelIRPipeline(pm);
      if (mlir::failed(pm.run(*mlirModule)))
        return 1;
      if (printSource) {
        gnnc::target::DriverOptions cpp = gnnc::tools::getTargetDriverOptions(
            llvm::sys::path::stem(inputFile), inputFile,
            outputFile == "-" ? llvm::StringRef(".")
                              : llvm::StringRef(outputFile),
            &sourceMgr);
        std::unique_ptr<gnnc::target::KernelTarget> target =
            emitKind == EmitKind::Cuda ? gnnc::target::createCudaTarget()
                                       : gnnc::target::createCppTarget();
        return gnnc::target::runTargetDriver(*target, *mlirModule, cpp,
                                             llvm::outs(), llvm::errs());
      }
      if (emitKind == EmitKind::RematReport) {
        llvm::raw_string_ostream os(report);
        os << "# gnnc --emit=remat-report " << inputFile << ": per function, "
           << "each value of the forward that the backward reads\n";
        if (mlir::failed(gnnc::gnn::runRemat(*mlirModule, rematOptions, &os)))
          return 1;
      }
    }
  }

  // The whole text first: a failed compile or write leaves no file, and an
  // existing one is replaced only by a complete new one.
  std::string text;
  llvm::raw_string_ostream output(text);
  if (emitKind == EmitKind::Tokens)
    printTokens(result.tokens, sourceMgr, output);
  else if (emitKind == EmitKind::AST)
    dumpAST(*result.module, sourceMgr, output);
  else if (emitKind == EmitKind::RematReport)
    output << report;
  else {
    mlirModule->print(output, mlir::OpPrintingFlags());
    output << "\n";
  }
  output.flush();
  return writeOutput(text);
}
