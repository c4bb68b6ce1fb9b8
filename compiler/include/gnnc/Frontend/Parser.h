//===- Parser.h - Recursive-descent parser for .gnn -------------*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_FRONTEND_PARSER_H
#define GNNC_FRONTEND_PARSER_H

#include "gnnc/Frontend/AST.h"
#include "gnnc/Frontend/Diagnostics.h"
#include "gnnc/Frontend/Token.h"

#include <initializer_list>
#include <memory>
#include <vector>

namespace gnnc {

/// Builds the AST from a token stream. On a syntax error it reports, skips
/// to the end of the logical line (or the end of the block it opened) and
/// goes on, so one run can show several errors.
class Parser {
public:
  Parser(std::vector<Token> tokens, DiagnosticEngine &diags,
         llvm::StringRef fileName)
      : tokens(std::move(tokens)), diags(diags), fileName(fileName.str()) {}

  std::unique_ptr<Module> parseModule();

private:
  const Token &tok() const { return tokens[pos]; }
  const Token &peekAhead(unsigned n = 1) const {
    return tokens[std::min(pos + n, tokens.size() - 1)];
  }
  bool at(TokenKind kind) const { return tok().is(kind); }
  Token advance();
  bool consumeIf(TokenKind kind);
  bool expect(TokenKind kind, llvm::StringRef context);
  void errorExpected(llvm::StringRef what, llvm::StringRef context);
  std::string describe(const Token &t) const;
  void skipLine();
  void skipBlock();

  std::unique_ptr<Definition> parseDefinition();
  bool parseHyperParam(Definition &def);
  bool parseMember(Definition &def);
  bool parseParamDecl(Definition &def, bool isBuffer = false);
  bool parseInstance(Definition &def);
  bool parseForward(Definition &def);
  std::optional<TypeExpr> parseType(llvm::StringRef context);
  bool parseDims(TypeExpr &type);
  bool parseSuite(StmtList &body, llvm::StringRef context);
  StmtPtr parseStatement();
  StmtPtr parseFor();

  ExprPtr parseExpr();
  ExprPtr parseExprNoTuple();
  ExprPtr parseBinary(int minPrec);
  ExprPtr parseUnary();
  ExprPtr parsePower();
  ExprPtr parsePostfix();
  ExprPtr parsePrimary();
  ExprPtr parseBracket();
  ExprPtr parseDict();
  bool parseArgs(std::vector<Arg> &args, TokenKind close);
  bool checkHeight(Expr &node, std::initializer_list<const Expr *> kids);

  std::vector<Token> tokens;
  size_t pos = 0;
  DiagnosticEngine &diags;
  std::string fileName;
  unsigned exprDepth = 0;
  bool reportedDepth = false;
};

} // namespace gnnc

#endif // GNNC_FRONTEND_PARSER_H
