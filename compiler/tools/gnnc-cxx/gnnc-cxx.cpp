//===- gnnc-cxx.cpp - Compile node-centric layers inside C++ sources ------===//
//
// Part of gnnc.
//
//   gnnc-cxx file.cpp -o out/ [-p build/] [-- <compile flags>]
//
// Parses file.cpp with Clang (the flags after `--`, or a
// compile_commands.json), finds every function annotated GNNC_LAYER
// (gnnc/cxx/NodeCentric.h) and compiles its body as a .gnn layer: semantic
// analysis, fusion, autodiff and the C++ printer, with C++ locations
// throughout. It writes to out/:
//
//   <stem>_gnnc.h, <stem>_gnnc.cpp, <stem>_gnnc.gnnmap.json
//       the kernels (docs/abi.md), namespace <stem>_gnnc, with every
//       generated line mapped to the C++ line it comes from;
//   file.cpp
//       a copy of the input whose annotated bodies are calls of them, the
//       rest byte for byte, and each line where it was.
//
// A construct outside the subset gets `file:line:col: error: ...` at its
// C++ location and exit status 1, and nothing is written.
//
//===----------------------------------------------------------------------===//

#include "CxxToAST.h"

#include "gnnc/Conversion/ASTToGNN/MLIRGen.h"
#include "gnnc/Dialect/GNN/Transforms/Passes.h"
#include "gnnc/Frontend/AST.h"
#include "gnnc/Frontend/Diagnostics.h"
#include "gnnc/Frontend/Sema.h"
#include "gnnc/Target/Passes.h"
#include "gnnc/Target/Target.h"

#include "clang/AST/ASTConsumer.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendAction.h"
#include "clang/Rewrite/Core/Rewriter.h"
#include "clang/Tooling/ArgumentsAdjusters.h"
#include "clang/Tooling/CommonOptionsParser.h"
#include "clang/Tooling/Tooling.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <string>

using namespace gnnc;
namespace c = clang;

namespace {

llvm::cl::OptionCategory category("gnnc-cxx options");
llvm::cl::opt<std::string> outputDir("o", llvm::cl::desc("Output directory"),
                                     llvm::cl::value_desc("dir"),
                                     llvm::cl::cat(category));
enum class Emit { Files, AST, MLIR };
llvm::cl::opt<Emit>
    emit("emit", llvm::cl::desc("What to produce"), llvm::cl::init(Emit::Files),
         llvm::cl::values(
             clEnumValN(Emit::Files, "files",
                        "the kernels and the rewritten source in -o (default)"),
             clEnumValN(Emit::AST, "ast",
                        "each layer as gnnc's checked .gnn AST, with C++ "
                        "locations, on standard output"),
             clEnumValN(Emit::MLIR, "mlir",
                        "each layer in the gnn dialect, before any "
                        "optimisation, on standard output")),
         llvm::cl::cat(category));
llvm::cl::opt<bool>
    training("training",
             llvm::cl::desc("Also write each layer's saving forward and "
                            "backward (default: on)"),
             llvm::cl::init(true), llvm::cl::cat(category));

/// The functions annotated GNNC_LAYER in the main file.
class LayerFinder : public c::RecursiveASTVisitor<LayerFinder> {
public:
  explicit LayerFinder(c::SourceManager &sm) : sm(sm) {}
  bool VisitFunctionDecl(c::FunctionDecl *fn) {
    if (!fn->doesThisDeclarationHaveABody() ||
        !sm.isInMainFile(sm.getExpansionLoc(fn->getLocation())))
      return true;
    for (const c::AnnotateAttr *a : fn->specific_attrs<c::AnnotateAttr>())
      if (a->getAnnotation() == "gnnc.layer") {
        layers.push_back(fn);
        break;
      }
    return true;
  }
  std::vector<const c::FunctionDecl *> layers;

private:
  c::SourceManager &sm;
};

/// `file.cpp`'s kernels: `file_gnnc`.
std::string stemOf(llvm::StringRef path) {
  std::string stem;
  for (char ch : llvm::sys::path::stem(path))
    stem += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  if (stem.empty() || std::isdigit(static_cast<unsigned char>(stem[0])))
    stem = "_" + stem;
  return stem + "_gnnc";
}

/// The body that calls layer `t`'s kernels, on one line.
std::string callBody(const cxx::TranslatedLayer &t, llvm::StringRef ns) {
  std::string fn = "::" + ns.str() + "::" + t.function->getName().str();
  std::string graph, checks, inputs, params, output;
  for (const cxx::LayerArg &a : t.args) {
    switch (a.kind) {
    case cxx::LayerArg::Kind::Graph:
      graph = a.name;
      break;
    case cxx::LayerArg::Kind::Input:
    case cxx::LayerArg::Kind::EdgeInput: {
      bool edges = a.kind == cxx::LayerArg::Kind::EdgeInput;
      checks += "gnnc::cxx::detail::expectRows(" + a.name + ", " + graph +
                (edges ? ".num_edges()" : ".num_vertices()") + ", \"" + a.name +
                "\"); ";
      inputs += a.name + ".data(), ";
      break;
    }
    case cxx::LayerArg::Kind::Weight:
      params += std::string(params.empty() ? "" : ", ") +
                "const_cast<float *>(" + a.name + ".data())";
      break;
    case cxx::LayerArg::Kind::Output:
      output = a.name;
      break;
    }
  }
  return "{ /* gnnc-cxx: compiled into " + ns.str() +
         "::" + t.function->getName().str() + " (" + ns.str() + ".h) */ " +
         checks + "gnnc::cxx::detail::check(" + fn + "(" + graph +
         ".graph(), " + inputs + fn + "_Params{" + params + "}, " + output +
         ".prepare(" + graph + ".num_vertices()), " + graph + ".workspace(" +
         fn + "_workspace_bytes(" + graph + ".graph())), false, 0)); }";
}

class LayerConsumer : public c::ASTConsumer {
public:
  LayerConsumer(c::CompilerInstance &ci, int &status)
      : ci(ci), status(status) {}

  void HandleTranslationUnit(c::ASTContext &ctx) override {
    if (ctx.getDiagnostics().hasErrorOccurred()) {
      status = 1;
      return;
    }
    status = process(ctx);
  }

private:
  int process(c::ASTContext &ctx);

  c::CompilerInstance &ci;
  int &status;
};

int LayerConsumer::process(c::ASTContext &ctx) {
  c::SourceManager &sm = ctx.getSourceManager();
  c::FileID main = sm.getMainFileID();
  std::string path = sm.getFileEntryRefForID(main)->getName().str();
  LayerFinder finder(sm);
  finder.TraverseDecl(ctx.getTranslationUnitDecl());

  // gnnc's diagnostics print the C++ file: the same text, under its name.
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(sm.getBufferData(main), path),
      llvm::SMLoc());
  const llvm::MemoryBuffer &buffer =
      *sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  DiagnosticEngine diags(sourceMgr, llvm::errs());

  std::vector<std::unique_ptr<cxx::TranslatedLayer>> layers;
  Module module;
  module.fileName = path;
  bool ok = true;
  for (const c::FunctionDecl *fn : finder.layers) {
    std::unique_ptr<cxx::TranslatedLayer> t = cxx::translateLayer(*fn, buffer);
    if (!t) {
      ok = false;
      continue;
    }
    module.definitions.push_back(std::move(t->definition));
    layers.push_back(std::move(t));
  }
  if (!ok)
    return 1;
  if (layers.empty()) {
    llvm::WithColor::error(llvm::errs(), "gnnc-cxx")
        << path << " has no function annotated GNNC_LAYER\n";
    return 1;
  }
  std::string stem = stemOf(path);
  // The rewritten copy's path, checked before anything is written.
  llvm::SmallString<256> target(outputDir.getValue());
  llvm::sys::path::append(target, llvm::sys::path::filename(path));
  if (emit == Emit::Files && llvm::sys::fs::equivalent(target, path)) {
    llvm::WithColor::error(llvm::errs(), "gnnc-cxx")
        << "-o " << outputDir << " would overwrite the input " << path << "\n";
    return 1;
  }
  if (!checkModule(module, diags))
    return 1;
  if (emit == Emit::AST) {
    dumpAST(module, sourceMgr, llvm::outs());
    return 0;
  }
  mlir::MLIRContext context;
  mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context);
  MLIRGenOptions options;
  mlir::OwningOpRef<mlir::ModuleOp> ir =
      mlirGen(context, module, diags, options);
  if (!ir)
    return 1;
  if (emit == Emit::MLIR) {
    ir->print(llvm::outs());
    llvm::outs() << "\n";
    return 0;
  }
  mlir::PassManager pm(&context);
  if (training) {
    gnn::GNNRematOptions remat;
    gnn::buildTrainingPipeline(pm, remat);
  } else {
    gnn::buildFusionPipeline(pm);
  }
  target::buildKernelIRPipeline(pm);
  if (mlir::failed(pm.run(*ir)))
    return 1;
  target::DriverOptions driver;
  driver.target.stem = stem;
  driver.target.cppNamespace = stem;
  driver.target.sourceMgr = &sourceMgr;
  driver.target.source = path;
  driver.target.training = training;
  driver.outputDir = outputDir;
  driver.toolName = "gnnc-cxx";
  if (target::runCppDriver(*ir, driver, llvm::outs(), llvm::errs()) != 0)
    return 1;

  // The rewritten copy: each body one call, on as many lines as it had.
  c::Rewriter rewriter(sm, ci.getLangOpts());
  for (const auto &t : layers) {
    c::SourceRange body = t->function->getBody()->getSourceRange();
    unsigned first = sm.getExpansionLineNumber(body.getBegin());
    unsigned last = sm.getExpansionLineNumber(body.getEnd());
    std::string text = callBody(*t, stem) + std::string(last - first, '\n');
    rewriter.ReplaceText(sm.getExpansionRange(body), text);
  }
  rewriter.InsertTextBefore(sm.getLocForStartOfFile(main),
                            "#include \"" + stem + ".h\"\n#line 1 \"" + path +
                                "\"\n");
  std::string out;
  llvm::raw_string_ostream os(out);
  rewriter.getEditBuffer(main).write(os);
  os.flush();
  std::string error;
  if (mlir::failed(target::writeFileAtomically(target, out, error))) {
    llvm::WithColor::error(llvm::errs(), "gnnc-cxx")
        << "cannot write " << target << ": " << error << "\n";
    return 1;
  }
  return 0;
}

class LayerAction : public c::ASTFrontendAction {
public:
  explicit LayerAction(int &status) : status(status) {}
  std::unique_ptr<c::ASTConsumer> CreateASTConsumer(c::CompilerInstance &ci,
                                                    llvm::StringRef) override {
    return std::make_unique<LayerConsumer>(ci, status);
  }

private:
  int &status;
};

class LayerActionFactory : public c::tooling::FrontendActionFactory {
public:
  std::unique_ptr<c::FrontendAction> create() override {
    return std::make_unique<LayerAction>(status);
  }
  int status = 0;
};

} // namespace

int main(int argc, const char **argv) {
  llvm::Expected<c::tooling::CommonOptionsParser> parsed =
      c::tooling::CommonOptionsParser::create(
          argc, argv, category, llvm::cl::OneOrMore,
          "gnnc-cxx: compiles the GNNC_LAYER functions of C++ sources into "
          "fused kernels, and rewrites each body into a call of them");
  if (!parsed) {
    llvm::WithColor::error(llvm::errs(), "gnnc-cxx")
        << llvm::toString(parsed.takeError()) << "\n";
    return 1;
  }
  if (outputDir.empty() && emit == Emit::Files) {
    llvm::WithColor::error(llvm::errs(), "gnnc-cxx")
        << "no output directory: -o <dir>\n";
    return 1;
  }
  if (std::error_code ec = emit == Emit::Files
                               ? llvm::sys::fs::create_directories(outputDir)
                               : std::error_code()) {
    llvm::WithColor::error(llvm::errs(), "gnnc-cxx")
        << "cannot create " << outputDir << ": " << ec.message() << "\n";
    return 1;
  }
  int status = 0;
  for (const std::string &file : parsed->getSourcePathList()) {
    LayerActionFactory factory;
    c::tooling::ClangTool tool(parsed->getCompilations(), {file});
    // Clang's own headers (stddef.h, ...) from the Clang this tool is built
    // on, wherever the tool is installed.
    tool.appendArgumentsAdjuster(c::tooling::getInsertArgumentAdjuster(
        "-resource-dir=" GNNC_CLANG_RESOURCE_DIR,
        c::tooling::ArgumentInsertPosition::BEGIN));
    // The layers are compiled here, not the program: its warnings are the
    // compiler's business.
    tool.appendArgumentsAdjuster(c::tooling::getInsertArgumentAdjuster(
        "-Wno-everything", c::tooling::ArgumentInsertPosition::END));
    if (tool.run(&factory) != 0 || factory.status != 0)
      status = 1;
  }
  return status;
}
