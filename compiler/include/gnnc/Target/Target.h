//===- Target.h - Printers from the kernel IR to source code ----*- C++ -*-===//
//
// Part of gnnc. A KernelTarget prints a module of the kernel IR (gnn host
// functions with gnnk.launch, gnnk kernels; `gnnc --emit=kernel-ir`) as
// source files of one language. The C++ printer (lib/Target/Cpp) is one
// target; a CUDA printer would be another. What every printer needs (the
// .gnn source text of locations, C identifiers, line tracking and the line
// map, symbolic shapes of host values) lives next to this header.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_TARGET_TARGET_H
#define GNNC_TARGET_TARGET_H

#include "gnnc/Target/LineMap.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <string>
#include <vector>

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace gnnc::target {

/// How to print a module.
struct TargetOptions {
  /// Base name of the generated files ("gat" for gat.h, gat.cpp).
  std::string stem;
  /// The C++ namespace of everything generated (default: the stem).
  std::string cppNamespace;
  /// Emit `#line N "file.gnn"` before code that comes from a .gnn line.
  bool lineDirectives = false;
  /// Where to find the text of the .gnn files named in locations (buffers
  /// are matched by name); files not found there are read from disk.
  const llvm::SourceMgr *sourceMgr = nullptr;
  /// Provenance recorded in the generated code: the .gnn file, --entry,
  /// the -D definitions, whether backward functions were requested.
  std::string source;
  std::string entry;
  std::vector<std::string> defines;
  bool training = false;
};

/// One printed file: its name (no directory) and contents, and for each of
/// its lines the .gnn line it comes from.
struct GeneratedFile {
  std::string name;
  std::string contents;
  std::vector<SourceLine> lineSources;
  /// Line ranges [first, last] (1-based) of kernel bodies.
  std::vector<std::pair<unsigned, unsigned>> kernelRanges;
};

/// A printer from the kernel IR to one language.
class KernelTarget {
public:
  virtual ~KernelTarget();

  /// A short name ("cpp").
  virtual llvm::StringRef getName() const = 0;

  /// Prints `module` into `files`. On failure, reports an error on the
  /// offending op (through the MLIR diagnostic engine) and leaves `files`
  /// unspecified.
  virtual mlir::LogicalResult
  printModule(mlir::ModuleOp module, const TargetOptions &options,
              std::vector<GeneratedFile> &files) = 0;
};

/// The C++/OpenMP printer: `<stem>.h` and `<stem>.cpp` (docs/abi.md).
std::unique_ptr<KernelTarget> createCppTarget();

/// The CUDA printer: `<stem>.h` (a host header) and `<stem>.cu` (docs/abi.md,
/// "CUDA").
std::unique_ptr<KernelTarget> createCudaTarget();

/// The line map of `files` (each .gnn line and the generated lines that come
/// from it, and back), for `<stem>.gnnmap.json`.
LineMap buildLineMap(const std::vector<GeneratedFile> &files);

/// Writes `files` into directory `dir` (created when missing), each through
/// a temporary file, and keeps them only when all of them were written;
/// otherwise removes everything it wrote and returns the error message.
/// `extra` files (name, contents) are written the same way.
mlir::LogicalResult writeFilesAtomically(
    llvm::StringRef dir,
    const std::vector<std::pair<std::string, std::string>> &files,
    std::string &error);

/// Writes `contents` to `path` through a temporary file beside it that
/// replaces `path` only once it is complete: a failed or interrupted write
/// leaves an existing `path` as it was. The directory must exist. Returns
/// the error message on failure.
mlir::LogicalResult writeFileAtomically(llvm::StringRef path,
                                        llvm::StringRef contents,
                                        std::string &error);

/// What `gnnc --emit=cpp|cuda` and `gnnc --show-map` do after the pipeline.
struct DriverOptions {
  TargetOptions target;
  /// --emit=cpp|cuda: the output directory.
  std::string outputDir;
  /// --show-map: print the side-by-side view to `os` instead of writing
  /// files, `width` columns wide.
  bool showMap = false;
  unsigned width = 160;
  /// The program named in the errors of writing the files.
  std::string toolName = "gnnc";
};

/// Prints `module` with `target` and writes the files (with
/// `<stem>.gnnmap.json`) or shows the map. Errors go to `errs`; returns the
/// process exit status (0 or 1).
int runTargetDriver(KernelTarget &target, mlir::ModuleOp module,
                    const DriverOptions &options, llvm::raw_ostream &os,
                    llvm::raw_ostream &errs);

/// runTargetDriver with the C++ target.
int runCppDriver(mlir::ModuleOp module, const DriverOptions &options,
                 llvm::raw_ostream &os, llvm::raw_ostream &errs);

/// The terminal width for --show-map: COLUMNS, else the window size of
/// standard output when it is a terminal, else 160.
unsigned defaultTerminalWidth();

} // namespace gnnc::target

#endif // GNNC_TARGET_TARGET_H
