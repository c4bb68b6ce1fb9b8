//===- LineMap.h - Generated lines and the .gnn lines they come from -*- C++
//-*-===//
//
// Part of gnnc. Every printer records, for each line it writes, the .gnn
// line of the op it was printing (or none, for boilerplate). The line map
// (`<stem>.gnnmap.json`) states that relation both ways, and `gnnc
// --show-map` shows it side by side.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_TARGET_LINEMAP_H
#define GNNC_TARGET_LINEMAP_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace gnnc::target {

class SourceFiles;

/// A line of a .gnn file (`line` 0: none).
struct SourceLine {
  std::string file;
  unsigned line = 0;

  explicit operator bool() const { return line != 0; }
  bool operator==(const SourceLine &other) const {
    return line == other.line && file == other.file;
  }
  bool operator!=(const SourceLine &other) const { return !(*this == other); }
};

/// Which generated lines come from which .gnn lines.
struct LineMap {
  /// A run of consecutive lines of one generated file.
  struct Range {
    std::string file;
    unsigned first = 0, last = 0;
  };
  /// A generated file: for each of its lines (index + 1 is the line number)
  /// the .gnn line it comes from, and its kernel bodies.
  struct File {
    std::string name;
    std::vector<SourceLine> lines;
    std::vector<std::pair<unsigned, unsigned>> kernels;
  };
  std::vector<File> files;

  /// The .gnn files the generated code comes from.
  std::vector<std::string> sources() const;
  /// For each line of `source`, the ranges of generated lines from it, in
  /// file order and line order.
  std::map<unsigned, std::vector<Range>> rangesOf(llvm::StringRef source) const;

  /// The JSON form (docs/abi.md, "Line map"):
  ///   {"version": 1, "sources": [...],
  ///    "source_to_generated": {"<file.gnn>": {"<line>": [{"file": "x.cpp",
  ///        "lines": [first, last]}, ...]}},
  ///    "generated_to_source": {"x.cpp": {"<line>": {"file": "<file.gnn>",
  ///        "line": n}}},
  ///    "kernels": {"x.cpp": [[first, last], ...]}}
  /// written with an indent of 2 and the keys of every object sorted, as
  /// llvm::json prints a value; streamed, without building one.
  void printJSON(llvm::raw_ostream &os) const;

  /// The side-by-side view: every line of each source file on the left,
  /// the generated lines from it on the right (`file:line  text`), in rows
  /// of `width` columns.
  void printSideBySide(SourceFiles &sources,
                       const std::map<std::string, std::string> &generated,
                       unsigned width, llvm::raw_ostream &os) const;
};

} // namespace gnnc::target

#endif // GNNC_TARGET_LINEMAP_H
