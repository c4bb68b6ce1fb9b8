//===- Token.h - Tokens of the .gnn language --------------------*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_FRONTEND_TOKEN_H
#define GNNC_FRONTEND_TOKEN_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SMLoc.h"

#include <cstdint>
#include <string>

namespace gnnc {

enum class TokenKind {
#define TOKEN(NAME, SPELLING) NAME,
#include "gnnc/Frontend/TokenKinds.def"
};

/// Returns how a token kind is spelled in messages: `'('`, `identifier`, ...
llvm::StringRef getTokenSpelling(TokenKind kind);
/// Returns the enumerator name of a token kind, for `--emit=tokens`.
llvm::StringRef getTokenName(TokenKind kind);

struct Token {
  TokenKind kind = TokenKind::eof;
  /// The characters of the token in the source buffer (empty for INDENT,
  /// DEDENT and EOF).
  llvm::StringRef text;
  llvm::SMLoc loc;
  /// Value of an integer or float literal, or the unescaped string literal.
  int64_t intValue = 0;
  double floatValue = 0;
  std::string stringValue;
  /// Set when the lexer already reported an error for this token, so the
  /// parser does not report it again.
  bool reported = false;

  bool is(TokenKind k) const { return kind == k; }
};

} // namespace gnnc

#endif // GNNC_FRONTEND_TOKEN_H
