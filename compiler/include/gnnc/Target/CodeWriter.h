//===- CodeWriter.h - Indented source text with line tracking ---*- C++ -*-===//
//
// Part of gnnc. A printer writes lines into a CodeWriter: each line gets the
// current indentation and the .gnn line the printer says it comes from.
// Writers nest (a function body is printed before its prologue and appended
// after it), and rendering numbers the lines, inserts `#line` directives on
// request and records the kernel ranges of the line map. Namer makes C
// identifiers from .gnn names.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_TARGET_CODEWRITER_H
#define GNNC_TARGET_CODEWRITER_H

#include "gnnc/Target/Target.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/Twine.h"

#include <string>
#include <vector>

namespace gnnc::target {

class CodeWriter {
public:
  /// The .gnn line of the lines written from now on (none: boilerplate).
  void setSource(SourceLine source) { current = std::move(source); }
  const SourceLine &getSource() const { return current; }

  /// One line at the current indentation.
  void line(const llvm::Twine &text);
  /// One line at column 0 (preprocessor directives, pragmas).
  void directive(const llvm::Twine &text);
  /// An empty line (it belongs to no .gnn line).
  void blank();
  void indent() { ++depth; }
  void dedent() {
    if (depth)
      --depth;
  }

  /// The lines of `other`, indented by this writer's indentation.
  void append(const CodeWriter &other);

  /// Brackets a kernel body for the line map.
  void beginKernel();
  void endKernel();

  bool empty() const { return lines.empty(); }

  /// The text of all lines (two spaces per indentation level), each line's
  /// .gnn line, and kernel ranges; with `lineDirectives`, a `#line N
  /// "file.gnn"` directive precedes each line whose .gnn line the compiler
  /// would not otherwise assume, and `#line M "<name>"` returns to the
  /// generated file's own numbering before lines that have none.
  GeneratedFile render(llvm::StringRef name, bool lineDirectives) const;

private:
  struct Line {
    unsigned indent = 0;
    bool column0 = false;
    std::string text;
    SourceLine source;
    /// +1: a kernel starts at this line; -1: the kernel ended before it.
    int kernelMark = 0;
  };
  std::vector<Line> lines;
  SourceLine current;
  unsigned depth = 0;
  int pendingMark = 0;
};

/// `name` as a C identifier: characters other than letters, digits and '_'
/// become '_' ("GCN.conv1" -> "GCN_conv1"), and a leading digit gets a '_'
/// in front.
std::string cIdentifier(llvm::StringRef name);

/// Whether `name` is a C++ keyword or alternative token (`class`, `and`).
bool isCppKeyword(llvm::StringRef name);

/// Whether `name` is a C++ keyword or a name generated code must not shadow.
bool isReservedName(llvm::StringRef name);

/// Checks a namespace for generated code: identifiers separated by `::`
/// (`models::gcn`), none a keyword or an identifier reserved to the
/// implementation (`__x`, `_X`), and not `std`. Returns an empty string when
/// it is valid, else why not.
std::string checkCppNamespace(llvm::StringRef name);

/// Unique C identifiers in one scope.
class Namer {
public:
  /// Marks `name` as taken.
  void reserve(llvm::StringRef name) { taken.insert(name); }
  bool isTaken(llvm::StringRef name) const { return taken.count(name); }
  /// cIdentifier(base), or with a suffix `_<hint>` (then `_<hint>_<k>`)
  /// when that is taken or reserved.
  std::string unique(llvm::StringRef base, llvm::StringRef hint = "");

private:
  llvm::StringSet<> taken;
};

} // namespace gnnc::target

#endif // GNNC_TARGET_CODEWRITER_H
