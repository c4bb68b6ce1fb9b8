//===- AST.h - Abstract syntax tree of the .gnn language --------*- C++ -*-===//
//
// Part of gnnc. Every node carries the location of its first token. Semantic
// analysis annotates expressions with their inferred type.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_FRONTEND_AST_H
#define GNNC_FRONTEND_AST_H

#include "gnnc/Frontend/Types.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Casting.h"
#include "llvm/Support/SMLoc.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gnnc {

/// A name together with where it was written.
struct Ident {
  std::string name;
  llvm::SMLoc loc;
};

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

class Expr {
public:
  enum class Kind {
    Int,
    Float,
    String,
    Bool,
    Name,
    Attr,
    Call,
    Binary,
    Unary,
    List,
    Comprehension,
    Dict,
    Subscript,
  };
  Expr(Kind kind, llvm::SMLoc loc) : kind(kind), loc(loc) {}
  virtual ~Expr() = default;
  Kind getKind() const { return kind; }
  llvm::SMLoc getLoc() const { return loc; }

  /// The type semantic analysis inferred, if it got that far.
  std::optional<ValueType> type;
  /// Height of the expression tree rooted here (a leaf is 1). The parser
  /// bounds it, so every recursive walk over expressions is bounded too.
  unsigned height = 1;

private:
  Kind kind;
  llvm::SMLoc loc;
};
using ExprPtr = std::unique_ptr<Expr>;

#define GNNC_EXPR_CLASSOF(K)                                                   \
  static bool classof(const Expr *e) { return e->getKind() == Kind::K; }

struct IntExpr : Expr {
  IntExpr(llvm::SMLoc loc, int64_t value)
      : Expr(Kind::Int, loc), value(value) {}
  int64_t value;
  GNNC_EXPR_CLASSOF(Int)
};

struct FloatExpr : Expr {
  FloatExpr(llvm::SMLoc loc, double value, llvm::StringRef spelling)
      : Expr(Kind::Float, loc), value(value), spelling(spelling.str()) {}
  double value;
  std::string spelling;
  GNNC_EXPR_CLASSOF(Float)
};

struct StringExpr : Expr {
  StringExpr(llvm::SMLoc loc, std::string value)
      : Expr(Kind::String, loc), value(std::move(value)) {}
  std::string value;
  GNNC_EXPR_CLASSOF(String)
};

struct BoolExpr : Expr {
  BoolExpr(llvm::SMLoc loc, bool value) : Expr(Kind::Bool, loc), value(value) {}
  bool value;
  GNNC_EXPR_CLASSOF(Bool)
};

struct NameExpr : Expr {
  NameExpr(llvm::SMLoc loc, std::string name)
      : Expr(Kind::Name, loc), name(std::move(name)) {}
  std::string name;
  GNNC_EXPR_CLASSOF(Name)
};

/// `base.name`, e.g. `u.h`, `g.sum`, `v.innbs`.
struct AttrExpr : Expr {
  AttrExpr(llvm::SMLoc loc, ExprPtr base, Ident attr)
      : Expr(Kind::Attr, loc), base(std::move(base)), attr(std::move(attr)) {}
  ExprPtr base;
  Ident attr;
  GNNC_EXPR_CLASSOF(Attr)
};

/// One call argument, positional (`name` empty) or keyword.
struct Arg {
  Ident keyword;
  ExprPtr value;
};

struct CallExpr : Expr {
  CallExpr(llvm::SMLoc loc, ExprPtr callee, std::vector<Arg> args)
      : Expr(Kind::Call, loc), callee(std::move(callee)),
        args(std::move(args)) {}
  ExprPtr callee;
  std::vector<Arg> args;
  GNNC_EXPR_CLASSOF(Call)
};

enum class BinaryOp {
  Add,
  Sub,
  Mul,
  Div,
  FloorDiv,
  MatMul,
  Pow,
  // Comparisons: 1 where true, 0 where false, in the element type.
  Lt,
  Le,
  Gt,
  Ge,
  Eq,
  Ne,
};
/// Whether `op` is one of the comparisons.
inline bool isComparison(BinaryOp op) { return op >= BinaryOp::Lt; }
/// `a op b` for a comparison `op` (false for any other op): what folding
/// two numbers gives, in Sema and in the lowering alike.
inline bool compareNumbers(BinaryOp op, double a, double b) {
  switch (op) {
  case BinaryOp::Lt:
    return a < b;
  case BinaryOp::Le:
    return a <= b;
  case BinaryOp::Gt:
    return a > b;
  case BinaryOp::Ge:
    return a >= b;
  case BinaryOp::Eq:
    return a == b;
  case BinaryOp::Ne:
    return a != b;
  default:
    return false;
  }
}
llvm::StringRef getBinaryOpSpelling(BinaryOp op);

struct BinaryExpr : Expr {
  BinaryExpr(llvm::SMLoc loc, BinaryOp op, llvm::SMLoc opLoc, ExprPtr lhs,
             ExprPtr rhs)
      : Expr(Kind::Binary, loc), op(op), opLoc(opLoc), lhs(std::move(lhs)),
        rhs(std::move(rhs)) {}
  BinaryOp op;
  llvm::SMLoc opLoc;
  ExprPtr lhs, rhs;
  GNNC_EXPR_CLASSOF(Binary)
};

enum class UnaryOp { Neg, Plus };

struct UnaryExpr : Expr {
  UnaryExpr(llvm::SMLoc loc, UnaryOp op, ExprPtr operand)
      : Expr(Kind::Unary, loc), op(op), operand(std::move(operand)) {}
  UnaryOp op;
  ExprPtr operand;
  GNNC_EXPR_CLASSOF(Unary)
};

/// `[a, b, c]`: shapes for reshape, operands of concat.
struct ListExpr : Expr {
  ListExpr(llvm::SMLoc loc, std::vector<ExprPtr> elements)
      : Expr(Kind::List, loc), elements(std::move(elements)) {}
  std::vector<ExprPtr> elements;
  GNNC_EXPR_CLASSOF(List)
};

/// `[element for a in source]` or `[element for a, b in source]`.
struct ComprehensionExpr : Expr {
  ComprehensionExpr(llvm::SMLoc loc, ExprPtr element, std::vector<Ident> vars,
                    ExprPtr source)
      : Expr(Kind::Comprehension, loc), element(std::move(element)),
        vars(std::move(vars)), source(std::move(source)) {}
  ExprPtr element;
  std::vector<Ident> vars;
  ExprPtr source;
  GNNC_EXPR_CLASSOF(Comprehension)
};

/// `{"h": expr, ...}`, the argument of the attribute setters.
struct DictExpr : Expr {
  struct Entry {
    Ident key;
    ExprPtr value;
  };
  DictExpr(llvm::SMLoc loc, std::vector<Entry> entries)
      : Expr(Kind::Dict, loc), entries(std::move(entries)) {}
  std::vector<Entry> entries;
  GNNC_EXPR_CLASSOF(Dict)
};

/// `x[...]`: parsed so that the error can say subscripts are unsupported.
struct SubscriptExpr : Expr {
  SubscriptExpr(llvm::SMLoc loc, ExprPtr base)
      : Expr(Kind::Subscript, loc), base(std::move(base)) {}
  ExprPtr base;
  GNNC_EXPR_CLASSOF(Subscript)
};

#undef GNNC_EXPR_CLASSOF

//===----------------------------------------------------------------------===//
// Types written in the source
//===----------------------------------------------------------------------===//

struct TypeExpr {
  enum class Kind {
    Graph,
    Block,
    BatchedGraph,
    HeteroGraph,
    Int,
    Float,
    Tensor
  };
  Kind kind = Kind::Tensor;
  llvm::SMLoc loc;
  ElemType elemType = ElemType::F32;
  /// The dimensions, when the tensor type has brackets.
  std::vector<ExprPtr> dims;
};

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

class Stmt {
public:
  enum class Kind {
    Assign,
    AttrAssign,
    ExprStmt,
    VertexLoop,
    RangeLoop,
    Return,
    Pass
  };
  Stmt(Kind kind, llvm::SMLoc loc) : kind(kind), loc(loc) {}
  virtual ~Stmt() = default;
  Kind getKind() const { return kind; }
  llvm::SMLoc getLoc() const { return loc; }

private:
  Kind kind;
  llvm::SMLoc loc;
};
using StmtPtr = std::unique_ptr<Stmt>;
using StmtList = std::vector<StmtPtr>;

#define GNNC_STMT_CLASSOF(K)                                                   \
  static bool classof(const Stmt *s) { return s->getKind() == Kind::K; }

/// `name = value`.
struct AssignStmt : Stmt {
  AssignStmt(llvm::SMLoc loc, Ident target, ExprPtr value)
      : Stmt(Kind::Assign, loc), target(std::move(target)),
        value(std::move(value)) {}
  Ident target;
  ExprPtr value;
  GNNC_STMT_CLASSOF(Assign)
};

/// `v.attr = value` inside a vertex loop.
struct AttrAssignStmt : Stmt {
  AttrAssignStmt(llvm::SMLoc loc, Ident object, Ident attr, ExprPtr value)
      : Stmt(Kind::AttrAssign, loc), object(std::move(object)),
        attr(std::move(attr)), value(std::move(value)) {}
  Ident object;
  Ident attr;
  ExprPtr value;
  GNNC_STMT_CLASSOF(AttrAssign)
};

struct ExprStmt : Stmt {
  ExprStmt(llvm::SMLoc loc, ExprPtr expr)
      : Stmt(Kind::ExprStmt, loc), expr(std::move(expr)) {}
  ExprPtr expr;
  GNNC_STMT_CLASSOF(ExprStmt)
};

/// `for v in g.dst_vertex:` or `for v in g.src_vertex:`.
struct VertexLoopStmt : Stmt {
  VertexLoopStmt(llvm::SMLoc loc, Ident var, ExprPtr vertexSet, StmtList body)
      : Stmt(Kind::VertexLoop, loc), var(std::move(var)),
        vertexSet(std::move(vertexSet)), body(std::move(body)) {}
  Ident var;
  ExprPtr vertexSet;
  StmtList body;
  GNNC_STMT_CLASSOF(VertexLoop)
};

/// `for i in range(count):` with a compile-time count.
struct RangeLoopStmt : Stmt {
  RangeLoopStmt(llvm::SMLoc loc, Ident var, ExprPtr count, StmtList body)
      : Stmt(Kind::RangeLoop, loc), var(std::move(var)),
        count(std::move(count)), body(std::move(body)) {}
  Ident var;
  ExprPtr count;
  StmtList body;
  GNNC_STMT_CLASSOF(RangeLoop)
};

struct ReturnStmt : Stmt {
  ReturnStmt(llvm::SMLoc loc, ExprPtr value)
      : Stmt(Kind::Return, loc), value(std::move(value)) {}
  ExprPtr value;
  GNNC_STMT_CLASSOF(Return)
};

struct PassStmt : Stmt {
  explicit PassStmt(llvm::SMLoc loc) : Stmt(Kind::Pass, loc) {}
  GNNC_STMT_CLASSOF(Pass)
};

#undef GNNC_STMT_CLASSOF

//===----------------------------------------------------------------------===//
// Definitions
//===----------------------------------------------------------------------===//

/// `name: int = default` in a layer's header.
struct HyperParam {
  Ident name;
  bool isFloat = false;
  llvm::SMLoc typeLoc;
  ExprPtr defaultValue;
};

/// `param W: f32[a, b] = glorot`, or `buffer running_mean: f32[d] = zeros`:
/// a buffer is state that is not trained (no optimiser step), which a
/// training forward updates (batch_norm's running statistics).
struct ParamDecl {
  Ident name;
  bool isBuffer = false;
  TypeExpr type;
  /// The initialiser; empty name when omitted.
  Ident init;
  std::vector<Arg> initArgs;
  /// Set by semantic analysis.
  std::optional<ValueType> resolvedType;
};

/// `conv1 = GATConv(in_dim, 8, heads=8)`.
struct InstanceDecl {
  Ident name;
  Ident callee;
  std::vector<Arg> args;
};

struct ForwardArg {
  Ident name;
  TypeExpr type;
};

struct ForwardDef {
  llvm::SMLoc loc;
  Ident name;
  std::vector<ForwardArg> args;
  std::optional<TypeExpr> resultType;
  StmtList body;
  /// Set by semantic analysis.
  std::optional<ValueType> resolvedResult;
};

/// A `layer` or a `model`.
struct Definition {
  bool isModel = false;
  llvm::SMLoc loc;
  Ident name;
  std::vector<HyperParam> hyperParams;
  std::vector<ParamDecl> params;
  std::vector<InstanceDecl> instances;
  std::vector<ForwardDef> forwards;
};

struct Module {
  std::string fileName;
  std::vector<std::unique_ptr<Definition>> definitions;
};

/// Prints the AST as an indented tree with `@line:col` on every node and,
/// after semantic analysis, each expression's type.
void dumpAST(const Module &module, const llvm::SourceMgr &sourceMgr,
             llvm::raw_ostream &os);

} // namespace gnnc

#endif // GNNC_FRONTEND_AST_H
