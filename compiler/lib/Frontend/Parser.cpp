//===- Parser.cpp - Recursive-descent parser for .gnn ---------------------===//
//
// Part of gnnc. The grammar each function accepts is written above it; the
// whole grammar is in docs/language.md.
//
//===----------------------------------------------------------------------===//

#include "gnnc/Frontend/Parser.h"
#include "gnnc/Frontend/Lexer.h"

#include "llvm/ADT/StringSwitch.h"

using namespace gnnc;

llvm::StringRef gnnc::getBinaryOpSpelling(BinaryOp op) {
  switch (op) {
  case BinaryOp::Add:
    return "+";
  case BinaryOp::Sub:
    return "-";
  case BinaryOp::Mul:
    return "*";
  case BinaryOp::Div:
    return "/";
  case BinaryOp::FloorDiv:
    return "//";
  case BinaryOp::MatMul:
    return "@";
  case BinaryOp::Pow:
    return "**";
  case BinaryOp::Lt:
    return "<";
  case BinaryOp::Le:
    return "<=";
  case BinaryOp::Gt:
    return ">";
  case BinaryOp::Ge:
    return ">=";
  case BinaryOp::Eq:
    return "==";
  case BinaryOp::Ne:
    return "!=";
  }
  return "?";
}

Token Parser::advance() {
  Token t = tokens[pos];
  if (pos + 1 < tokens.size())
    ++pos;
  return t;
}

bool Parser::consumeIf(TokenKind kind) {
  if (!at(kind))
    return false;
  advance();
  return true;
}

std::string Parser::describe(const Token &t) const {
  switch (t.kind) {
  case TokenKind::identifier:
  case TokenKind::integer:
  case TokenKind::floating:
    return "'" + t.text.str() + "'";
  default:
    return getTokenSpelling(t.kind).str();
  }
}

void Parser::errorExpected(llvm::StringRef what, llvm::StringRef context) {
  // The lexer already explained this token; a second message would only
  // repeat the problem in worse words.
  // Neither after an error the lexer reported on the same line: the parser
  // would only describe its echo.
  if (tok().reported || diags.hasErrorOnLine(tok().loc))
    return;
  if (at(TokenKind::indent)) {
    diags.report(tok().loc, DiagID::err_unexpected_indent);
    return;
  }
  std::string where = context.empty() ? "" : " " + context.str();
  diags.report(tok().loc, DiagID::err_expected, what, where, describe(tok()));
}

bool Parser::expect(TokenKind kind, llvm::StringRef context) {
  if (consumeIf(kind))
    return true;
  errorExpected(getTokenSpelling(kind), context);
  return false;
}

/// Skips an indented block whose INDENT is the current token.
void Parser::skipBlock() {
  unsigned depth = 0;
  do {
    if (at(TokenKind::indent))
      ++depth;
    else if (at(TokenKind::dedent))
      --depth;
    else if (at(TokenKind::eof))
      return;
    advance();
  } while (depth != 0);
}

/// Error recovery: skips the rest of the logical line, and the block the
/// line opens if it is followed by one.
void Parser::skipLine() {
  while (!at(TokenKind::newline) && !at(TokenKind::eof) &&
         !at(TokenKind::dedent)) {
    if (at(TokenKind::indent)) {
      skipBlock();
      continue;
    }
    advance();
  }
  consumeIf(TokenKind::newline);
  if (at(TokenKind::indent))
    skipBlock();
}

/// file = { NEWLINE | definition } EOF ;
std::unique_ptr<Module> Parser::parseModule() {
  auto module = std::make_unique<Module>();
  module->fileName = fileName;
  while (!at(TokenKind::eof) && !diags.shouldStop()) {
    if (consumeIf(TokenKind::newline))
      continue;
    if (at(TokenKind::kw_layer) || at(TokenKind::kw_model)) {
      if (auto def = parseDefinition())
        module->definitions.push_back(std::move(def));
      continue;
    }
    if (at(TokenKind::indent)) {
      errorExpected("", "");
      skipBlock();
      continue;
    }
    if (!tok().reported) {
      if (at(TokenKind::kw_def))
        diags.report(tok().loc, DiagID::err_def_outside_layer);
      else
        diags.report(tok().loc, DiagID::err_expected_definition,
                     describe(tok()));
    }
    skipLine();
    consumeIf(TokenKind::dedent);
  }
  return module;
}

/// definition = ("layer" | "model") IDENT "(" [hparam {"," hparam} [","]] ")"
///              ":" NEWLINE INDENT member {member} DEDENT ;
std::unique_ptr<Definition> Parser::parseDefinition() {
  auto def = std::make_unique<Definition>();
  def->isModel = at(TokenKind::kw_model);
  def->loc = tok().loc;
  llvm::StringRef what = def->isModel ? "after 'model'" : "after 'layer'";
  advance();
  if (!at(TokenKind::identifier)) {
    errorExpected("a name", what);
    skipLine();
    return nullptr;
  }
  def->name = {advance().text.str(), tokens[pos - 1].loc};
  if (!expect(TokenKind::l_paren, "after the layer name")) {
    skipLine();
    return nullptr;
  }
  while (!at(TokenKind::r_paren)) {
    if (!parseHyperParam(*def)) {
      skipLine();
      return nullptr;
    }
    if (!consumeIf(TokenKind::comma))
      break;
  }
  if (!expect(TokenKind::r_paren, "to close the hyper-parameter list") ||
      !expect(TokenKind::colon, "after the layer header")) {
    skipLine();
    return nullptr;
  }
  if (!at(TokenKind::newline)) {
    if (!tok().reported)
      diags.report(tok().loc, DiagID::err_block_on_same_line,
                   def->isModel ? "model body" : "layer body");
    skipLine();
    return nullptr;
  }
  advance();
  if (!at(TokenKind::indent)) {
    diags.report(tok().loc, DiagID::err_expected_indent, "layer body");
    return nullptr;
  }
  advance();
  while (!at(TokenKind::dedent) && !at(TokenKind::eof) && !diags.shouldStop()) {
    if (!parseMember(*def))
      skipLine();
  }
  consumeIf(TokenKind::dedent);
  return def;
}

/// hparam = IDENT ":" ("int" | "float") ["=" expr] ;
bool Parser::parseHyperParam(Definition &def) {
  HyperParam hp;
  if (!at(TokenKind::identifier)) {
    errorExpected("a hyper-parameter name", "in the layer header");
    return false;
  }
  hp.name = {tok().text.str(), tok().loc};
  advance();
  if (!at(TokenKind::colon)) {
    if (!tok().reported)
      diags.report(tok().loc, DiagID::err_hparam_needs_type, hp.name.name);
    return false;
  }
  advance();
  hp.typeLoc = tok().loc;
  if (!at(TokenKind::identifier) ||
      (tok().text != "int" && tok().text != "float")) {
    if (!tok().reported)
      diags.report(tok().loc, DiagID::err_bad_hparam_type, describe(tok()));
    return false;
  }
  hp.isFloat = tok().text == "float";
  advance();
  if (consumeIf(TokenKind::equal)) {
    hp.defaultValue = parseExpr();
    if (!hp.defaultValue)
      return false;
  }
  def.hyperParams.push_back(std::move(hp));
  return true;
}

/// member = param_decl | buffer_decl | instance | forward | "pass" NEWLINE ;
bool Parser::parseMember(Definition &def) {
  switch (tok().kind) {
  case TokenKind::kw_param:
    return parseParamDecl(def);
  case TokenKind::kw_def:
    return parseForward(def);
  case TokenKind::kw_pass:
    advance();
    return expect(TokenKind::newline, "after 'pass'");
  case TokenKind::identifier:
    if (peekAhead().is(TokenKind::equal))
      return parseInstance(def);
    // `buffer` is a keyword only here, before a name.
    if (tok().text == "buffer" && peekAhead().is(TokenKind::identifier))
      return parseParamDecl(def, /*isBuffer=*/true);
    [[fallthrough]];
  default:
    if (at(TokenKind::indent))
      errorExpected("", "");
    else if (!tok().reported)
      diags.report(tok().loc, DiagID::err_expected_member, describe(tok()));
    return false;
  }
}

/// param_decl = "param" IDENT ":" tensor_type ["=" IDENT ["(" args ")"]]
///              NEWLINE ;
/// buffer_decl = "buffer" IDENT ":" tensor_type ["=" IDENT ["(" args ")"]]
///               NEWLINE ;
bool Parser::parseParamDecl(Definition &def, bool isBuffer) {
  advance();
  ParamDecl param;
  param.isBuffer = isBuffer;
  if (!at(TokenKind::identifier)) {
    errorExpected("a parameter name", "after 'param'");
    return false;
  }
  param.name = {tok().text.str(), tok().loc};
  advance();
  if (!expect(TokenKind::colon, "after the parameter name"))
    return false;
  std::optional<TypeExpr> type = parseType("parameter type");
  if (!type)
    return false;
  param.type = std::move(*type);
  if (consumeIf(TokenKind::equal)) {
    if (!at(TokenKind::identifier)) {
      errorExpected("an initialiser name", "after '='");
      return false;
    }
    param.init = {tok().text.str(), tok().loc};
    advance();
    if (consumeIf(TokenKind::l_paren) &&
        !parseArgs(param.initArgs, TokenKind::r_paren))
      return false;
  }
  if (!expect(TokenKind::newline, "after the parameter declaration"))
    return false;
  def.params.push_back(std::move(param));
  return true;
}

/// instance = IDENT "=" IDENT "(" [args] ")" NEWLINE ;
bool Parser::parseInstance(Definition &def) {
  InstanceDecl inst;
  inst.name = {tok().text.str(), tok().loc};
  advance();
  advance(); // '='
  if (!at(TokenKind::identifier)) {
    if (!tok().reported)
      diags.report(tok().loc, DiagID::err_bad_instance, describe(tok()));
    return false;
  }
  inst.callee = {tok().text.str(), tok().loc};
  advance();
  if (!at(TokenKind::l_paren)) {
    if (!tok().reported)
      diags.report(tok().loc, DiagID::err_bad_instance, describe(tok()));
    return false;
  }
  advance();
  if (!parseArgs(inst.args, TokenKind::r_paren))
    return false;
  if (!expect(TokenKind::newline, "after the instance declaration"))
    return false;
  def.instances.push_back(std::move(inst));
  return true;
}

/// forward = "def" IDENT "(" argdecl {"," argdecl} [","] ")" ["->" type] ":"
///           suite ;
/// argdecl = IDENT ":" type ;
bool Parser::parseForward(Definition &def) {
  ForwardDef fwd;
  fwd.loc = tok().loc;
  advance();
  if (!at(TokenKind::identifier)) {
    errorExpected("a method name", "after 'def'");
    return false;
  }
  fwd.name = {tok().text.str(), tok().loc};
  advance();
  if (!expect(TokenKind::l_paren, "after the method name"))
    return false;
  while (!at(TokenKind::r_paren)) {
    ForwardArg arg;
    if (!at(TokenKind::identifier)) {
      errorExpected("an argument name", "in the argument list");
      return false;
    }
    arg.name = {tok().text.str(), tok().loc};
    advance();
    if (!at(TokenKind::colon)) {
      if (!tok().reported)
        diags.report(tok().loc, DiagID::err_arg_needs_type, arg.name.name);
      return false;
    }
    advance();
    std::optional<TypeExpr> type = parseType("argument type");
    if (!type)
      return false;
    arg.type = std::move(*type);
    fwd.args.push_back(std::move(arg));
    if (!consumeIf(TokenKind::comma))
      break;
  }
  if (!expect(TokenKind::r_paren, "to close the argument list"))
    return false;
  if (consumeIf(TokenKind::arrow)) {
    fwd.resultType = parseType("result type");
    if (!fwd.resultType)
      return false;
  }
  if (!expect(TokenKind::colon, "after the method signature"))
    return false;
  if (!parseSuite(fwd.body, "method body"))
    return true; // the suite reported and skipped what it could not read
  def.forwards.push_back(std::move(fwd));
  return true;
}

/// type        = "Graph" | block_type | "BatchedGraph" | "HeteroGraph"
///             | "int" | "float" | tensor_type ;
/// block_type  = "Block" ["[" NAME "," NAME ["," NAME] "]"] ;
/// tensor_type = dtype ["[" dim {"," dim} "]"] ;
///
/// The names of a Block are parsed as expressions and checked by Sema,
/// which says what it expected.
std::optional<TypeExpr> Parser::parseType(llvm::StringRef context) {
  TypeExpr type;
  type.loc = tok().loc;
  if (!at(TokenKind::identifier)) {
    errorExpected("a type", llvm::Twine("for the " + context).str());
    return std::nullopt;
  }
  llvm::StringRef name = tok().text;
  std::optional<TypeExpr::Kind> kind =
      llvm::StringSwitch<std::optional<TypeExpr::Kind>>(name)
          .Case("Graph", TypeExpr::Kind::Graph)
          .Case("Block", TypeExpr::Kind::Block)
          .Case("BatchedGraph", TypeExpr::Kind::BatchedGraph)
          .Case("HeteroGraph", TypeExpr::Kind::HeteroGraph)
          .Case("int", TypeExpr::Kind::Int)
          .Case("float", TypeExpr::Kind::Float)
          .Cases("f32", "f64", "i32", "i64", "bool", TypeExpr::Kind::Tensor)
          .Default(std::nullopt);
  if (!kind) {
    if (!tok().reported)
      diags.report(tok().loc, DiagID::err_unknown_type, name);
    return std::nullopt;
  }
  type.kind = *kind;
  advance();
  if (type.kind == TypeExpr::Kind::Block && at(TokenKind::l_square))
    return parseDims(type) ? std::optional<TypeExpr>(std::move(type))
                           : std::nullopt;
  if (type.kind != TypeExpr::Kind::Tensor)
    return type;
  type.elemType = llvm::StringSwitch<ElemType>(name)
                      .Case("f64", ElemType::F64)
                      .Case("i32", ElemType::I32)
                      .Case("i64", ElemType::I64)
                      .Case("bool", ElemType::Bool)
                      .Default(ElemType::F32);
  if (!at(TokenKind::l_square))
    return type;
  if (!parseDims(type))
    return std::nullopt;
  return type;
}

/// "[" dim {"," dim} "]", after a dtype or a Block.
bool Parser::parseDims(TypeExpr &type) {
  if (!consumeIf(TokenKind::l_square))
    return false;
  if (at(TokenKind::r_square)) {
    diags.report(tok().loc, DiagID::err_empty_shape);
    return false;
  }
  while (true) {
    ExprPtr dim = parseExpr();
    if (!dim)
      return false;
    type.dims.push_back(std::move(dim));
    if (!consumeIf(TokenKind::comma) || at(TokenKind::r_square))
      break;
  }
  return expect(TokenKind::r_square, "to close the shape");
}

/// suite = NEWLINE INDENT stmt {stmt} DEDENT ;
/// Returns false after reporting a missing block.
bool Parser::parseSuite(StmtList &body, llvm::StringRef context) {
  if (!at(TokenKind::newline)) {
    if (!tok().reported)
      diags.report(tok().loc, DiagID::err_block_on_same_line, context);
    skipLine();
    return false;
  }
  advance();
  if (!at(TokenKind::indent)) {
    diags.report(tok().loc, DiagID::err_expected_indent, context);
    return false;
  }
  advance();
  while (!at(TokenKind::dedent) && !at(TokenKind::eof) && !diags.shouldStop()) {
    if (StmtPtr stmt = parseStatement())
      body.push_back(std::move(stmt));
    else
      skipLine();
  }
  consumeIf(TokenKind::dedent);
  return true;
}

/// stmt = IDENT "=" expr NEWLINE | IDENT "." IDENT "=" expr NEWLINE
///      | for_stmt | "return" expr NEWLINE | "pass" NEWLINE | expr NEWLINE ;
StmtPtr Parser::parseStatement() {
  llvm::SMLoc loc = tok().loc;
  switch (tok().kind) {
  case TokenKind::kw_for:
    return parseFor();
  case TokenKind::kw_return: {
    advance();
    if (at(TokenKind::newline)) {
      diags.report(loc, DiagID::err_return_needs_value);
      return nullptr;
    }
    ExprPtr value = parseExprNoTuple();
    if (!value)
      return nullptr;
    if (!expect(TokenKind::newline, "after the return value"))
      return nullptr;
    return std::make_unique<ReturnStmt>(loc, std::move(value));
  }
  case TokenKind::kw_pass:
    advance();
    if (!expect(TokenKind::newline, "after 'pass'"))
      return nullptr;
    return std::make_unique<PassStmt>(loc);
  case TokenKind::kw_def:
  case TokenKind::kw_param:
  case TokenKind::kw_layer:
  case TokenKind::kw_model:
    diags.report(loc, DiagID::err_misplaced_keyword, tok().text);
    return nullptr;
  case TokenKind::indent:
    errorExpected("", "");
    return nullptr;
  default:
    break;
  }
  ExprPtr expr = parseExprNoTuple();
  if (!expr)
    return nullptr;
  if (!consumeIf(TokenKind::equal)) {
    if (!expect(TokenKind::newline, "after the expression"))
      return nullptr;
    return std::make_unique<ExprStmt>(loc, std::move(expr));
  }
  if (tokens[pos - 1].reported) {
    // An augmented assignment, already reported; parse on as plain `=`.
  }
  ExprPtr value = parseExpr();
  if (!value)
    return nullptr;
  if (at(TokenKind::equal)) {
    diags.report(tok().loc, DiagID::err_chained_assignment);
    return nullptr;
  }
  if (!expect(TokenKind::newline, "after the assignment"))
    return nullptr;
  if (auto *name = llvm::dyn_cast<NameExpr>(expr.get()))
    return std::make_unique<AssignStmt>(loc, Ident{name->name, name->getLoc()},
                                        std::move(value));
  if (auto *attr = llvm::dyn_cast<AttrExpr>(expr.get()))
    if (auto *base = llvm::dyn_cast<NameExpr>(attr->base.get()))
      return std::make_unique<AttrAssignStmt>(
          loc, Ident{base->name, base->getLoc()}, attr->attr, std::move(value));
  diags.report(expr->getLoc(), DiagID::err_bad_assign_target);
  return nullptr;
}

/// for_stmt = "for" IDENT "in" ( IDENT "." IDENT | "range" "(" expr ")" ) ":"
///            suite ;
StmtPtr Parser::parseFor() {
  llvm::SMLoc loc = tok().loc;
  advance();
  if (!at(TokenKind::identifier)) {
    errorExpected("a loop variable", "after 'for'");
    return nullptr;
  }
  Ident var{tok().text.str(), tok().loc};
  advance();
  if (at(TokenKind::comma)) {
    diags.report(tok().loc, DiagID::err_loop_tuple);
    return nullptr;
  }
  if (!expect(TokenKind::kw_in, "after the loop variable"))
    return nullptr;
  ExprPtr source = parseExpr();
  if (!source)
    return nullptr;
  if (!expect(TokenKind::colon, "after the loop header"))
    return nullptr;
  StmtList body;
  if (!parseSuite(body, "loop body"))
    return nullptr;
  if (auto *call = llvm::dyn_cast<CallExpr>(source.get())) {
    auto *callee = llvm::dyn_cast<NameExpr>(call->callee.get());
    if (callee && callee->name == "range") {
      if (call->args.size() != 1 || !call->args[0].keyword.name.empty()) {
        diags.report(call->getLoc(), DiagID::err_range_args);
        return nullptr;
      }
      return std::make_unique<RangeLoopStmt>(
          loc, std::move(var), std::move(call->args[0].value), std::move(body));
    }
  }
  return std::make_unique<VertexLoopStmt>(loc, std::move(var),
                                          std::move(source), std::move(body));
}

namespace {
/// Counts expression nesting so that hostile input cannot overflow the
/// stack.
struct DepthGuard {
  unsigned &depth;
  explicit DepthGuard(unsigned &depth) : depth(depth) { ++depth; }
  ~DepthGuard() { --depth; }
};
} // namespace

/// Sets the height of a freshly built node from its children and reports
/// a tree that is too deep (a long chain such as `a + a + ... + a` grows the
/// tree without recursing in the parser). With no `kids`, `node.height`
/// already holds the tallest child's height.
bool Parser::checkHeight(Expr &node, std::initializer_list<const Expr *> kids) {
  unsigned height = kids.size() == 0 ? node.height : 0;
  for (const Expr *kid : kids)
    if (kid)
      height = std::max(height, kid->height);
  node.height = height + 1;
  if (node.height <= FrontendLimits::maxExprHeight)
    return true;
  if (!reportedDepth)
    diags.report(node.getLoc(), DiagID::err_expr_too_deep,
                 FrontendLimits::maxExprHeight);
  reportedDepth = true;
  return false;
}

/// expr = binary ;
ExprPtr Parser::parseExpr() { return parseBinary(1); }

/// An expression where Python would also accept a tuple (`return a, b`):
/// says that tuples are not supported.
ExprPtr Parser::parseExprNoTuple() {
  ExprPtr expr = parseExpr();
  if (expr && at(TokenKind::comma)) {
    diags.report(tok().loc, DiagID::err_tuple);
    return nullptr;
  }
  return expr;
}

/// Comparisons bind loosest (as in Python), then + -, then * / // @.
static int getPrecedence(TokenKind kind, BinaryOp &op) {
  switch (kind) {
  case TokenKind::less:
    op = BinaryOp::Lt;
    return 1;
  case TokenKind::lessequal:
    op = BinaryOp::Le;
    return 1;
  case TokenKind::greater:
    op = BinaryOp::Gt;
    return 1;
  case TokenKind::greaterequal:
    op = BinaryOp::Ge;
    return 1;
  case TokenKind::equalequal:
    op = BinaryOp::Eq;
    return 1;
  case TokenKind::exclaimequal:
    op = BinaryOp::Ne;
    return 1;
  case TokenKind::plus:
    op = BinaryOp::Add;
    return 2;
  case TokenKind::minus:
    op = BinaryOp::Sub;
    return 2;
  case TokenKind::star:
    op = BinaryOp::Mul;
    return 3;
  case TokenKind::slash:
    op = BinaryOp::Div;
    return 3;
  case TokenKind::slashslash:
    op = BinaryOp::FloorDiv;
    return 3;
  case TokenKind::at:
    op = BinaryOp::MatMul;
    return 3;
  default:
    return 0;
  }
}

/// binary = unary { binop unary } ;  (precedence climbing, left-assoc)
ExprPtr Parser::parseBinary(int minPrec) {
  DepthGuard guard(exprDepth);
  if (exprDepth > FrontendLimits::maxExprDepth) {
    if (!reportedDepth)
      diags.report(tok().loc, DiagID::err_expr_too_deep,
                   FrontendLimits::maxExprHeight);
    reportedDepth = true;
    return nullptr;
  }
  ExprPtr lhs = parseUnary();
  if (!lhs)
    return nullptr;
  while (true) {
    BinaryOp op;
    int prec = getPrecedence(tok().kind, op);
    if (prec < minPrec || prec == 0)
      return lhs;
    llvm::SMLoc opLoc = advance().loc;
    ExprPtr rhs = parseBinary(prec + 1);
    if (!rhs)
      return nullptr;
    llvm::SMLoc loc = lhs->getLoc();
    const Expr *l = lhs.get(), *r = rhs.get();
    lhs = std::make_unique<BinaryExpr>(loc, op, opLoc, std::move(lhs),
                                       std::move(rhs));
    if (!checkHeight(*lhs, {l, r}))
      return nullptr;
    // Python chains `a < b < c` into `a < b and b < c`; the language has
    // no `and`, so a second comparison in a row is an error.
    BinaryOp next;
    if (isComparison(op) && getPrecedence(tok().kind, next) == 1) {
      diags.report(tok().loc, DiagID::err_chained_comparison,
                   getBinaryOpSpelling(op), getBinaryOpSpelling(next));
      return nullptr;
    }
  }
}

/// unary = ("-" | "+") unary | power ;
ExprPtr Parser::parseUnary() {
  DepthGuard guard(exprDepth);
  if (exprDepth > FrontendLimits::maxExprDepth) {
    if (!reportedDepth)
      diags.report(tok().loc, DiagID::err_expr_too_deep,
                   FrontendLimits::maxExprHeight);
    reportedDepth = true;
    return nullptr;
  }
  if (at(TokenKind::minus) || at(TokenKind::plus)) {
    Token opTok = advance();
    ExprPtr operand = parseUnary();
    if (!operand)
      return nullptr;
    const Expr *kid = operand.get();
    auto unary = std::make_unique<UnaryExpr>(
        opTok.loc, opTok.is(TokenKind::minus) ? UnaryOp::Neg : UnaryOp::Plus,
        std::move(operand));
    if (!checkHeight(*unary, {kid}))
      return nullptr;
    return unary;
  }
  return parsePower();
}

/// power = postfix ["**" unary] ;  (right-assoc, binds tighter than unary)
ExprPtr Parser::parsePower() {
  ExprPtr base = parsePostfix();
  if (!base || !at(TokenKind::starstar))
    return base;
  llvm::SMLoc opLoc = advance().loc;
  ExprPtr exponent = parseUnary();
  if (!exponent)
    return nullptr;
  llvm::SMLoc loc = base->getLoc();
  const Expr *l = base.get(), *r = exponent.get();
  auto pow = std::make_unique<BinaryExpr>(loc, BinaryOp::Pow, opLoc,
                                          std::move(base), std::move(exponent));
  if (!checkHeight(*pow, {l, r}))
    return nullptr;
  return pow;
}

/// postfix = primary { "(" [args] ")" | "." IDENT | "[" ... "]" } ;
ExprPtr Parser::parsePostfix() {
  ExprPtr expr = parsePrimary();
  while (expr) {
    if (at(TokenKind::l_paren)) {
      advance();
      std::vector<Arg> args;
      if (!parseArgs(args, TokenKind::r_paren))
        return nullptr;
      llvm::SMLoc loc = expr->getLoc();
      unsigned height = expr->height;
      for (const Arg &arg : args)
        height = std::max(height, arg.value->height);
      expr = std::make_unique<CallExpr>(loc, std::move(expr), std::move(args));
      expr->height = height;
      if (!checkHeight(*expr, {}))
        return nullptr;
    } else if (at(TokenKind::dot)) {
      advance();
      if (!at(TokenKind::identifier)) {
        errorExpected("an attribute name", "after '.'");
        return nullptr;
      }
      Ident attr{tok().text.str(), tok().loc};
      advance();
      llvm::SMLoc loc = expr->getLoc();
      unsigned height = expr->height;
      expr = std::make_unique<AttrExpr>(loc, std::move(expr), std::move(attr));
      expr->height = height;
      if (!checkHeight(*expr, {}))
        return nullptr;
    } else if (at(TokenKind::l_square)) {
      llvm::SMLoc loc = tok().loc;
      // Skip the balanced subscript; semantic analysis rejects it.
      unsigned depth = 0;
      do {
        if (at(TokenKind::l_square))
          ++depth;
        else if (at(TokenKind::r_square))
          --depth;
        else if (at(TokenKind::eof) || at(TokenKind::newline))
          break;
        advance();
      } while (depth != 0);
      unsigned height = expr->height;
      expr = std::make_unique<SubscriptExpr>(loc, std::move(expr));
      expr->height = height;
      if (!checkHeight(*expr, {}))
        return nullptr;
    } else {
      break;
    }
  }
  return expr;
}

/// primary = INT | FLOAT | STRING | "True" | "False" | IDENT | "(" expr ")"
///         | list | comprehension | dict ;
ExprPtr Parser::parsePrimary() {
  const Token &t = tok();
  llvm::SMLoc loc = t.loc;
  switch (t.kind) {
  case TokenKind::integer: {
    int64_t value = t.intValue;
    advance();
    return std::make_unique<IntExpr>(loc, value);
  }
  case TokenKind::floating: {
    double value = t.floatValue;
    llvm::StringRef text = t.text;
    advance();
    return std::make_unique<FloatExpr>(loc, value, text);
  }
  case TokenKind::string: {
    std::string value = t.stringValue;
    advance();
    return std::make_unique<StringExpr>(loc, std::move(value));
  }
  case TokenKind::kw_True:
  case TokenKind::kw_False: {
    bool value = t.is(TokenKind::kw_True);
    advance();
    return std::make_unique<BoolExpr>(loc, value);
  }
  case TokenKind::identifier: {
    if (t.reported) {
      advance();
      return nullptr;
    }
    std::string name = t.text.str();
    advance();
    return std::make_unique<NameExpr>(loc, std::move(name));
  }
  case TokenKind::l_paren: {
    advance();
    if (at(TokenKind::r_paren)) {
      diags.report(loc, DiagID::err_tuple);
      return nullptr;
    }
    ExprPtr inner = parseExprNoTuple();
    if (!inner)
      return nullptr;
    if (!expect(TokenKind::r_paren, "to close the parenthesis"))
      return nullptr;
    return inner;
  }
  case TokenKind::l_square:
    return parseBracket();
  case TokenKind::l_brace:
    return parseDict();
  default:
    errorExpected("an expression", "");
    return nullptr;
  }
}

/// list          = "[" [expr {"," expr} [","]] "]" ;
/// comprehension = "[" expr "for" IDENT ["," IDENT] "in" expr "]" ;
ExprPtr Parser::parseBracket() {
  llvm::SMLoc loc = advance().loc;
  std::vector<ExprPtr> elements;
  if (consumeIf(TokenKind::r_square))
    return std::make_unique<ListExpr>(loc, std::move(elements));
  ExprPtr first = parseExpr();
  if (!first)
    return nullptr;
  if (consumeIf(TokenKind::kw_for)) {
    std::vector<Ident> vars;
    do {
      if (!at(TokenKind::identifier)) {
        errorExpected("a variable name", "in the comprehension");
        return nullptr;
      }
      vars.push_back({tok().text.str(), tok().loc});
      advance();
    } while (consumeIf(TokenKind::comma));
    if (vars.size() > 2) {
      diags.report(vars[2].loc, DiagID::err_too_many_comp_vars);
      return nullptr;
    }
    if (!expect(TokenKind::kw_in, "in the comprehension"))
      return nullptr;
    ExprPtr source = parseExpr();
    if (!source)
      return nullptr;
    if (at(TokenKind::kw_for)) {
      diags.report(tok().loc, DiagID::err_nested_comprehension_for);
      return nullptr;
    }
    if (!expect(TokenKind::r_square, "to close the comprehension"))
      return nullptr;
    const Expr *element = first.get(), *src = source.get();
    auto comp = std::make_unique<ComprehensionExpr>(
        loc, std::move(first), std::move(vars), std::move(source));
    if (!checkHeight(*comp, {element, src}))
      return nullptr;
    return comp;
  }
  elements.push_back(std::move(first));
  while (consumeIf(TokenKind::comma)) {
    if (at(TokenKind::r_square))
      break;
    ExprPtr next = parseExpr();
    if (!next)
      return nullptr;
    elements.push_back(std::move(next));
  }
  if (!expect(TokenKind::r_square, "to close the list"))
    return nullptr;
  unsigned height = 0;
  for (const ExprPtr &e : elements)
    height = std::max(height, e->height);
  auto list = std::make_unique<ListExpr>(loc, std::move(elements));
  list->height = height;
  if (!checkHeight(*list, {}))
    return nullptr;
  return list;
}

/// dict = "{" [STRING ":" expr {"," STRING ":" expr} [","]] "}" ;
ExprPtr Parser::parseDict() {
  llvm::SMLoc loc = advance().loc;
  std::vector<DictExpr::Entry> entries;
  while (!at(TokenKind::r_brace)) {
    if (!at(TokenKind::string)) {
      if (!tok().reported)
        diags.report(tok().loc, DiagID::err_dict_key, describe(tok()));
      return nullptr;
    }
    DictExpr::Entry entry;
    entry.key = {tok().stringValue, tok().loc};
    advance();
    if (!expect(TokenKind::colon, "after the dictionary key"))
      return nullptr;
    entry.value = parseExpr();
    if (!entry.value)
      return nullptr;
    entries.push_back(std::move(entry));
    if (!consumeIf(TokenKind::comma))
      break;
  }
  if (!expect(TokenKind::r_brace, "to close the dictionary"))
    return nullptr;
  unsigned height = 0;
  for (const DictExpr::Entry &e : entries)
    height = std::max(height, e.value->height);
  auto dict = std::make_unique<DictExpr>(loc, std::move(entries));
  dict->height = height;
  if (!checkHeight(*dict, {}))
    return nullptr;
  return dict;
}

/// args = arg {"," arg} [","] ;  arg = [IDENT "="] expr ;
/// The opening bracket has been consumed; consumes the closing one.
bool Parser::parseArgs(std::vector<Arg> &args, TokenKind close) {
  bool sawKeyword = false;
  while (!at(close)) {
    Arg arg;
    if (at(TokenKind::identifier) && peekAhead().is(TokenKind::equal)) {
      arg.keyword = {tok().text.str(), tok().loc};
      advance();
      advance();
      sawKeyword = true;
    } else if (sawKeyword) {
      diags.report(tok().loc, DiagID::err_positional_after_keyword);
      return false;
    }
    arg.value = parseExpr();
    if (!arg.value)
      return false;
    args.push_back(std::move(arg));
    if (!consumeIf(TokenKind::comma))
      break;
  }
  return expect(close, "to close the argument list");
}
