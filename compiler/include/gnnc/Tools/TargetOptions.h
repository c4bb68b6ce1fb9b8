//===- TargetOptions.h - Command-line options of the printers ---*- C++ -*-===//
//
// Part of gnnc. The llvm::cl options that say how kernel IR is printed as
// source files, shared by `gnnc --emit=cpp|cuda` and `gnn-translate
// --gnnk-to-cpp|--gnnk-to-cuda`: --cpp-namespace, --line-directives,
// --show-map, --width, and the provenance recorded in the generated code,
// --entry, --define (-D) and --training.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_TOOLS_TARGETOPTIONS_H
#define GNNC_TOOLS_TARGETOPTIONS_H

#include "gnnc/Target/Target.h"

#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <vector>

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace gnnc::tools {

/// What --entry, --define and --training mean to the tool.
enum class ProvenanceUse {
  /// gnnc: they select what is compiled, and the generated code records them.
  Compile,
  /// gnn-translate: the kernel IR is already compiled; they are only
  /// recorded in the generated code.
  Record
};

/// Registers the options in `category`. Call once, before the command line
/// is parsed.
void registerTargetCLOptions(llvm::cl::OptionCategory &category,
                             ProvenanceUse use);

/// The values of the options, once the command line is parsed.
struct TargetCLValues {
  std::string cppNamespace;
  bool lineDirectives = false;
  bool showMap = false;
  /// 0: the terminal's width.
  unsigned width = 0;
  std::string entry;
  std::vector<std::string> defines;
  bool training = false;
};
TargetCLValues getTargetCLValues();

/// Checks the values that do not depend on the input (--cpp-namespace
/// must be a namespace for generated code). Reports the first problem to
/// `errs` as an error of `tool` and fails.
mlir::LogicalResult verifyTargetCLOptions(llvm::StringRef tool,
                                          llvm::raw_ostream &errs);

/// The printers' options from the command line: the files are `stem.*` in
/// `outputDir`, the .gnn text of locations is looked up in `sourceMgr`
/// (then on disk), and `source` is the .gnn file recorded in the code.
target::DriverOptions getTargetDriverOptions(llvm::StringRef stem,
                                             llvm::StringRef source,
                                             llvm::StringRef outputDir,
                                             const llvm::SourceMgr *sourceMgr);

} // namespace gnnc::tools

#endif // GNNC_TOOLS_TARGETOPTIONS_H
