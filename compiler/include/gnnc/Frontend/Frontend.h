//===- Frontend.h - One-call entry point to the .gnn front end --*- C++ -*-===//
//
// Part of gnnc. Lexes, parses and checks a .gnn buffer.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_FRONTEND_FRONTEND_H
#define GNNC_FRONTEND_FRONTEND_H

#include "gnnc/Frontend/AST.h"
#include "gnnc/Frontend/Diagnostics.h"
#include "gnnc/Frontend/Token.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <vector>

namespace gnnc {

/// How far the front end runs.
enum class FrontendStage { Lex, Parse, Check };

struct FrontendResult {
  std::vector<Token> tokens;
  /// Null when lexing or parsing failed, or when stopping after lexing.
  std::unique_ptr<Module> module;
  bool success = false;
};

/// Runs the front end over buffer `bufferID` of the diagnostics' source
/// manager, up to and including `stopAfter`.
FrontendResult runFrontend(unsigned bufferID, DiagnosticEngine &diags,
                           FrontendStage stopAfter = FrontendStage::Check);

/// Runs the whole front end (lexer, parser, semantic analysis) over `text`,
/// which is named `bufferName` in diagnostics. Diagnostics are printed to
/// `diagOS`. Returns true when the source is free of errors. Never aborts on
/// bad input: every problem becomes a diagnostic.
bool checkSource(llvm::StringRef text, llvm::StringRef bufferName,
                 llvm::raw_ostream &diagOS);

} // namespace gnnc

#endif // GNNC_FRONTEND_FRONTEND_H
