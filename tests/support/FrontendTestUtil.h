//===- FrontendTestUtil.h - Helpers for the front-end unit tests -*- C++ -*-===//
//
// Part of gnnc. A SourceFixture owns one source buffer and a diagnostic
// engine that prints into a string, so a test can run any front-end stage on
// a snippet and inspect both the result and the messages. It must outlive
// every token and AST node made from its buffer: they point into it.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_TESTS_SUPPORT_FRONTENDTESTUTIL_H
#define GNNC_TESTS_SUPPORT_FRONTENDTESTUTIL_H

#include "gnnc/Frontend/AST.h"
#include "gnnc/Frontend/Diagnostics.h"
#include "gnnc/Frontend/Lexer.h"
#include "gnnc/Frontend/Parser.h"
#include "gnnc/Frontend/Sema.h"
#include "gnnc/Frontend/Token.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <ostream>
#include <string>
#include <vector>

namespace gnnc {
/// Lets GoogleTest print dimensions in failure messages ("2*N + 1").
inline void PrintTo(const Dim &dim, std::ostream *os) { *os << dim.str(); }
} // namespace gnnc

namespace gnnc::test {

class SourceFixture {
public:
  explicit SourceFixture(llvm::StringRef text, unsigned maxErrors = 20,
                         llvm::StringRef name = "test.gnn")
      : diagOS(diagText) {
    bufferID = sourceMgr.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBufferCopy(text, name), llvm::SMLoc());
    diags = std::make_unique<DiagnosticEngine>(sourceMgr, diagOS, maxErrors);
  }

  /// Runs the lexer alone.
  std::vector<Token> lex() {
    Lexer lexer(bufferID, *diags);
    return lexer.lex();
  }

  /// Runs lexer and parser; returns the module even when there were errors.
  std::unique_ptr<Module> parse() {
    std::vector<Token> tokens = lex();
    Parser parser(std::move(tokens), *diags, "test.gnn");
    return parser.parseModule();
  }

  /// Runs lexer, parser and, when they succeed, semantic analysis. Returns
  /// null when lexing or parsing failed.
  std::unique_ptr<Module> check() {
    std::unique_ptr<Module> module = parse();
    if (diags->hadError())
      return nullptr;
    checked = checkModule(*module, *diags);
    return module;
  }

  /// "line:col" of a location in this buffer.
  std::string pos(llvm::SMLoc loc) const {
    if (!loc.isValid())
      return "invalid";
    auto [line, col] = sourceMgr.getLineAndColumn(loc, bufferID);
    return std::to_string(line) + ":" + std::to_string(col);
  }

  /// Everything the diagnostic engine printed so far.
  const std::string &messages() {
    diagOS.flush();
    return diagText;
  }

  /// How many lines of the printed diagnostics carry `kind` ("error:" or
  /// "note:").
  unsigned countPrinted(llvm::StringRef kind = "error:") {
    unsigned n = 0;
    llvm::StringRef rest = messages();
    while (!rest.empty()) {
      auto [line, tail] = rest.split('\n');
      if (line.contains(kind))
        ++n;
      rest = tail;
    }
    return n;
  }

  unsigned numErrors() const { return diags->getNumErrors(); }

  llvm::SourceMgr sourceMgr;
  unsigned bufferID = 0;
  std::string diagText;
  llvm::raw_string_ostream diagOS;
  std::unique_ptr<DiagnosticEngine> diags;
  bool checked = false;
};

} // namespace gnnc::test

#endif // GNNC_TESTS_SUPPORT_FRONTENDTESTUTIL_H
