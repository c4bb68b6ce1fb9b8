//===- TargetOptions.cpp - Command-line options of the printers -----------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnnc/Tools/TargetOptions.h"

#include "gnnc/Target/CodeWriter.h"

#include "llvm/Support/WithColor.h"

#include <memory>

using namespace gnnc;
using namespace gnnc::tools;
namespace cl = llvm::cl;

namespace {
struct Options {
  Options(cl::OptionCategory &category, ProvenanceUse use)
      : cppNamespace(
            "cpp-namespace",
            cl::desc("Namespace of the generated C++ (default: the file stem)"),
            cl::value_desc("name"), cl::cat(category)),
        lineDirectives(
            "line-directives",
            cl::desc("Emit #line directives so that compiler errors and "
                     "debuggers point at the .gnn file"),
            cl::init(false), cl::cat(category)),
        showMap("show-map",
                cl::desc(use == ProvenanceUse::Compile
                             ? "Print the .gnn source and the generated C++ "
                               "(or CUDA, --target=cuda) side by side"
                             : "Print the .gnn source and the generated C++ "
                               "or CUDA side by side instead of writing "
                               "files"),
                cl::init(false), cl::cat(category)),
        width("width",
              cl::desc("Width of --show-map (default: the terminal's, else "
                       "160)"),
              cl::init(0), cl::cat(category)),
        training("training",
                 cl::desc(use == ProvenanceUse::Compile
                              ? "With --emit=mlir-fused, kernel-ir or cpp: "
                                "compile for training (forward, saving "
                                "forward and backward of every function, as "
                                "--emit=mlir-grad)"
                              : "Record in the generated code that the "
                                "kernel IR was compiled with gnnc --training"),
                 cl::init(false), cl::cat(category)),
        defines("define",
                cl::desc(use == ProvenanceUse::Compile
                             ? "Value of a hyper-parameter of the top-level "
                               "layers and models"
                             : "A --define of the gnnc run that wrote the "
                               "kernel IR, recorded in the generated code"),
                cl::value_desc("name=value"), cl::ZeroOrMore,
                cl::cat(category)),
        definesShort("D", cl::desc("Alias for --define"), cl::aliasopt(defines),
                     cl::cat(category)),
        entry("entry",
              cl::desc(use == ProvenanceUse::Compile
                           ? "Emit only this layer or model (and what it "
                             "uses)"
                           : "The --entry of the gnnc run that wrote the "
                             "kernel IR, recorded in the generated code"),
              cl::value_desc("name"), cl::cat(category)) {}

  cl::opt<std::string> cppNamespace;
  cl::opt<bool> lineDirectives;
  cl::opt<bool> showMap;
  cl::opt<unsigned> width;
  cl::opt<bool> training;
  cl::list<std::string> defines;
  cl::alias definesShort;
  cl::opt<std::string> entry;
};

std::unique_ptr<Options> &options() {
  static std::unique_ptr<Options> instance;
  return instance;
}
} // namespace

void gnnc::tools::registerTargetCLOptions(cl::OptionCategory &category,
                                          ProvenanceUse use) {
  if (!options())
    options() = std::make_unique<Options>(category, use);
}

TargetCLValues gnnc::tools::getTargetCLValues() {
  TargetCLValues values;
  if (!options())
    return values;
  const Options &o = *options();
  values.cppNamespace = o.cppNamespace;
  values.lineDirectives = o.lineDirectives;
  values.showMap = o.showMap;
  values.width = o.width;
  values.entry = o.entry;
  values.defines.assign(o.defines.begin(), o.defines.end());
  values.training = o.training;
  return values;
}

mlir::LogicalResult
gnnc::tools::verifyTargetCLOptions(llvm::StringRef tool,
                                   llvm::raw_ostream &errs) {
  TargetCLValues values = getTargetCLValues();
  if (values.cppNamespace.empty())
    return mlir::success();
  std::string why = target::checkCppNamespace(values.cppNamespace);
  if (why.empty())
    return mlir::success();
  llvm::WithColor::error(errs, tool)
      << "--cpp-namespace='" << values.cppNamespace
      << "' is not a namespace for generated code: " << why << "\n";
  return mlir::failure();
}

target::DriverOptions gnnc::tools::getTargetDriverOptions(
    llvm::StringRef stem, llvm::StringRef source, llvm::StringRef outputDir,
    const llvm::SourceMgr *sourceMgr) {
  TargetCLValues values = getTargetCLValues();
  target::DriverOptions driver;
  driver.target.stem = stem.str();
  driver.target.cppNamespace = values.cppNamespace;
  driver.target.lineDirectives = values.lineDirectives;
  driver.target.sourceMgr = sourceMgr;
  driver.target.source = source.str();
  driver.target.entry = values.entry;
  driver.target.defines = values.defines;
  driver.target.training = values.training;
  driver.outputDir = outputDir.str();
  driver.showMap = values.showMap;
  driver.width = values.width ? values.width : target::defaultTerminalWidth();
  return driver;
}
