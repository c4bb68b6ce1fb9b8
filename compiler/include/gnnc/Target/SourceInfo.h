//===- SourceInfo.h - .gnn locations and source text ------------*- C++ -*-===//
//
// Part of gnnc. Ops of the kernel IR keep the FileLineColLoc of the .gnn
// construct they come from (a FusedLoc for what fusion merged). Printers
// use them for `// file.gnn:37: <the line>` comments, for names of values
// (the variable a line assigns) and for the line map.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_TARGET_SOURCEINFO_H
#define GNNC_TARGET_SOURCEINFO_H

#include "gnnc/Target/LineMap.h"

#include "mlir/IR/Location.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"

#include <memory>
#include <string>
#include <vector>

namespace llvm {
class MemoryBuffer;
class SourceMgr;
} // namespace llvm

namespace gnnc::target {

/// A position in a .gnn file (`line` 0: unknown).
struct SourceLoc {
  std::string file;
  unsigned line = 0, column = 0;

  explicit operator bool() const { return line != 0; }
  SourceLine toLine() const { return SourceLine{file, line}; }
};

/// The first file position in `loc`, looking through fused, name and
/// call-site locations.
SourceLoc primaryLoc(mlir::Location loc);

/// Every file position in `loc`, in order, without repeats.
llvm::SmallVector<SourceLoc, 4> allLocs(mlir::Location loc);

/// The text of .gnn files, by the name locations use.
class SourceFiles {
public:
  explicit SourceFiles(const llvm::SourceMgr *sourceMgr = nullptr);
  ~SourceFiles();

  /// Line `line` (1-based) of `file` without its line break; empty when
  /// the file cannot be read or has fewer lines.
  llvm::StringRef line(llvm::StringRef file, unsigned line);
  /// The number of lines of `file` (0 when it cannot be read).
  unsigned numLines(llvm::StringRef file);

private:
  const std::vector<llvm::StringRef> &linesOf(llvm::StringRef file);

  const llvm::SourceMgr *sourceMgr;
  std::vector<std::unique_ptr<llvm::MemoryBuffer>> owned;
  llvm::StringMap<std::vector<llvm::StringRef>> cache;
};

/// `file`'s last path component ("dsl-examples/gat.gnn" -> "gat.gnn").
llvm::StringRef baseName(llvm::StringRef file);

} // namespace gnnc::target

#endif // GNNC_TARGET_SOURCEINFO_H
