//===- Lexer.h - Tokenizer for .gnn source ----------------------*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_FRONTEND_LEXER_H
#define GNNC_FRONTEND_LEXER_H

#include "gnnc/Frontend/Diagnostics.h"
#include "gnnc/Frontend/Token.h"

#include <vector>

namespace gnnc {

/// Limits that keep hostile input from exhausting the compiler.
struct FrontendLimits {
  static constexpr size_t maxFileBytes = 1 << 20;
  static constexpr unsigned maxLineColumns = 4096;
  static constexpr unsigned maxIndentLevels = 32;
  static constexpr unsigned maxBracketDepth = 64;
  /// Recursion guard of the parser. An input that reaches it has an
  /// expression taller than maxExprHeight, and is reported as such: the
  /// user-facing limits are the bracket depth and the expression height.
  static constexpr unsigned maxExprDepth = 1024;
  /// Bound on the height of any expression tree, flat chains included
  /// (docs/language.md, "Limits").
  static constexpr unsigned maxExprHeight = 256;
  /// Bound on chains of layers instantiating layers.
  static constexpr unsigned maxInstanceNesting = 64;
  /// Bound on the iterations of one unrolled `range` loop.
  static constexpr unsigned maxUnroll = 4096;
};

/// Splits one buffer into tokens, Python style: NEWLINE ends a logical line,
/// INDENT and DEDENT bracket blocks, and line breaks inside brackets are
/// ignored. Lexical errors are reported and skipped, so the token stream is
/// always well formed (balanced INDENT/DEDENT, ends with EOF).
class Lexer {
public:
  Lexer(unsigned bufferID, DiagnosticEngine &diags);

  /// Tokenizes the whole buffer.
  std::vector<Token> lex();

  /// Returns true when the buffer is not text (NUL byte, invalid UTF-8) or is
  /// too large; such a buffer has been reported and `lex()` yields only EOF.
  bool isUnreadable() const { return unreadable; }

private:
  void checkWholeBuffer();
  void lexLineStart();
  void lexToken();
  void lexIdentifier();
  void lexNumber();
  void lexString();
  void push(TokenKind kind, const char *start, const char *end);
  llvm::SMLoc locAt(const char *p) const {
    return llvm::SMLoc::getFromPointer(p);
  }
  void checkLineLength(const char *lineStart);

  DiagnosticEngine &diags;
  llvm::StringRef buffer;
  llvm::StringRef bufferName;
  const char *cur;
  const char *end;
  bool unreadable = false;
  bool atLineStart = true;
  std::vector<Token> tokens;
  std::vector<unsigned> indentStack{0};
  /// The character ('\t' or ' ') the file first indented with, and where.
  char indentChar = 0;
  const char *indentCharLoc = nullptr;
  /// Open brackets and where they were opened.
  std::vector<std::pair<char, const char *>> brackets;
  bool reportedDeepBrackets = false;
};

} // namespace gnnc

#endif // GNNC_FRONTEND_LEXER_H
