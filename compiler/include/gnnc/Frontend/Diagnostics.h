//===- Diagnostics.h - Located diagnostics for the front end ----*- C++ -*-===//
//
// Part of gnnc. Every diagnostic the front end can emit is listed in
// Diagnostics.def; this engine prints them through llvm::SourceMgr so each one
// reads `file:line:col: error: message`, followed by the line and a caret.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_FRONTEND_DIAGNOSTICS_H
#define GNNC_FRONTEND_DIAGNOSTICS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/SMLoc.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <set>
#include <string>
#include <utility>

namespace gnnc {

/// Identifies one entry of Diagnostics.def.
enum class DiagID {
#define DIAG(ID, KIND, FORMAT) ID,
#include "gnnc/Frontend/Diagnostics.def"
};

enum class DiagKind { Error, Note };

/// Returns the format string (llvm::formatv syntax) of a diagnostic.
llvm::StringRef getDiagFormat(DiagID id);
/// Returns whether a diagnostic is an error or a note.
DiagKind getDiagKind(DiagID id);
/// Returns the identifier of a diagnostic as written in Diagnostics.def.
llvm::StringRef getDiagName(DiagID id);
/// Number of entries in Diagnostics.def.
unsigned getNumDiags();

/// Collects and prints diagnostics. After `maxErrors` errors it prints one
/// last error and refuses further ones; callers poll `shouldStop()`.
class DiagnosticEngine {
public:
  DiagnosticEngine(llvm::SourceMgr &sourceMgr, llvm::raw_ostream &os,
                   unsigned maxErrors = 20)
      : sourceMgr(sourceMgr), os(os), maxErrors(maxErrors) {}

  template <typename... Ts>
  void report(llvm::SMLoc loc, DiagID id, Ts &&...args) {
    emit(loc, id,
         llvm::formatv(getDiagFormat(id).data(), std::forward<Ts>(args)...)
             .str());
  }

  /// Reports a problem with the file as a whole, or with a command-line
  /// option about it (no source line to show). Notes that follow it print.
  template <typename... Ts>
  void reportFile(llvm::StringRef fileName, DiagID id, Ts &&...args) {
    emitFile(fileName, id,
             llvm::formatv(getDiagFormat(id).data(), std::forward<Ts>(args)...)
                 .str());
  }

  /// Source lines longer than this many columns are shown as a window of
  /// this width around the caret, with `...` where the line was cut.
  static constexpr unsigned maxShownColumns = 160;

  unsigned getNumErrors() const { return numErrors; }
  /// Whether an error was reported on the line of `loc`.
  bool hasErrorOnLine(llvm::SMLoc loc) const;
  bool hadError() const { return numErrors != 0; }
  bool shouldStop() const { return stopped; }
  llvm::SourceMgr &getSourceMgr() { return sourceMgr; }

private:
  void emit(llvm::SMLoc loc, DiagID id, const std::string &message);
  void emitFile(llvm::StringRef fileName, DiagID id,
                const std::string &message);
  void print(llvm::SMLoc loc, llvm::SourceMgr::DiagKind kind,
             const std::string &message);

  llvm::SourceMgr &sourceMgr;
  llvm::raw_ostream &os;
  unsigned maxErrors;
  unsigned numErrors = 0;
  bool stopped = false;
  /// A note is printed only when the error it belongs to was printed.
  bool lastErrorPrinted = false;
  /// (buffer, line) of every error reported.
  std::set<std::pair<unsigned, unsigned>> errorLines;
};

} // namespace gnnc

#endif // GNNC_FRONTEND_DIAGNOSTICS_H
