//===- ASTDump.cpp - Textual dump of the AST ------------------------------===//
//
// Part of gnnc. The format is one node per line, indented by depth:
//   <node> <details> @line:col [: <type>]
// where the type is what semantic analysis inferred.
//
//===----------------------------------------------------------------------===//

#include "gnnc/Frontend/AST.h"

#include "llvm/Support/FormatVariadic.h"

using namespace gnnc;

namespace {
class ASTPrinter {
public:
  ASTPrinter(const llvm::SourceMgr &sourceMgr, llvm::raw_ostream &os)
      : sourceMgr(sourceMgr), os(os) {}

  void print(const Module &module);

private:
  void line(llvm::StringRef text, llvm::SMLoc loc,
            const std::optional<ValueType> &type = std::nullopt);
  std::string loc(llvm::SMLoc l) const;
  std::string typeExpr(const TypeExpr &type) const;
  void print(const Definition &def);
  void print(const Stmt &stmt);
  void print(const Expr &expr);
  void printArgs(const std::vector<Arg> &args);
  void printBody(const StmtList &body);

  struct Indent {
    unsigned &depth;
    explicit Indent(unsigned &depth) : depth(depth) { ++depth; }
    ~Indent() { --depth; }
  };

  const llvm::SourceMgr &sourceMgr;
  llvm::raw_ostream &os;
  unsigned depth = 0;
};
} // namespace

std::string ASTPrinter::loc(llvm::SMLoc l) const {
  if (!l.isValid())
    return "@?";
  auto [lineNo, col] = sourceMgr.getLineAndColumn(l);
  return llvm::formatv("@{0}:{1}", lineNo, col).str();
}

void ASTPrinter::line(llvm::StringRef text, llvm::SMLoc l,
                      const std::optional<ValueType> &type) {
  os.indent(2 * depth) << text << " " << loc(l);
  if (type)
    os << " : " << type->str();
  os << "\n";
}

std::string ASTPrinter::typeExpr(const TypeExpr &type) const {
  switch (type.kind) {
  case TypeExpr::Kind::Graph:
    return "Graph";
  case TypeExpr::Kind::Block: {
    std::string out = "Block";
    for (size_t i = 0; i < type.dims.size(); ++i) {
      auto *name = llvm::dyn_cast<NameExpr>(type.dims[i].get());
      out += i ? ", " : "[";
      out += name ? name->name : "?";
    }
    return type.dims.empty() ? out : out + "]";
  }
  case TypeExpr::Kind::BatchedGraph:
    return "BatchedGraph";
  case TypeExpr::Kind::HeteroGraph:
    return "HeteroGraph";
  case TypeExpr::Kind::Int:
    return "int";
  case TypeExpr::Kind::Float:
    return "float";
  case TypeExpr::Kind::Tensor:
    break;
  }
  std::string out = getElemTypeName(type.elemType).str();
  if (type.dims.empty())
    return out;
  out += "[";
  for (size_t i = 0; i < type.dims.size(); ++i) {
    const std::optional<ValueType> &t = type.dims[i]->type;
    out += i ? ", " : "";
    out += t && t->intValue ? t->intValue->str() : "?";
  }
  return out + "]";
}

void ASTPrinter::print(const Module &module) {
  os << "module \"" << module.fileName << "\"\n";
  Indent indent(depth);
  for (const auto &def : module.definitions)
    print(*def);
}

void ASTPrinter::print(const Definition &def) {
  line((def.isModel ? "model " : "layer ") + def.name.name, def.loc);
  Indent indent(depth);
  for (const HyperParam &hp : def.hyperParams) {
    line("hparam " + hp.name.name + (hp.isFloat ? ": float" : ": int"),
         hp.name.loc);
    if (hp.defaultValue) {
      Indent inner(depth);
      print(*hp.defaultValue);
    }
  }
  for (const ParamDecl &param : def.params) {
    std::string text = "param " + param.name.name + ": " +
                       (param.resolvedType ? param.resolvedType->shapeStr()
                                           : typeExpr(param.type));
    if (!param.init.name.empty())
      text += " = " + param.init.name;
    line(text, param.name.loc);
    if (!param.initArgs.empty()) {
      Indent inner(depth);
      printArgs(param.initArgs);
    }
  }
  for (const InstanceDecl &inst : def.instances) {
    line("instance " + inst.name.name + " = " + inst.callee.name,
         inst.name.loc);
    Indent inner(depth);
    printArgs(inst.args);
  }
  for (const ForwardDef &fwd : def.forwards) {
    std::string text = "def " + fwd.name.name;
    if (fwd.resolvedResult && !fwd.resolvedResult->isError())
      text += " -> " + fwd.resolvedResult->shapeStr();
    else if (fwd.resultType)
      text += " -> " + typeExpr(*fwd.resultType);
    line(text, fwd.loc);
    Indent inner(depth);
    for (const ForwardArg &arg : fwd.args)
      line("arg " + arg.name.name + ": " + typeExpr(arg.type), arg.name.loc);
    printBody(fwd.body);
  }
}

void ASTPrinter::printBody(const StmtList &body) {
  for (const StmtPtr &stmt : body)
    print(*stmt);
}

void ASTPrinter::printArgs(const std::vector<Arg> &args) {
  for (const Arg &arg : args) {
    if (arg.keyword.name.empty()) {
      print(*arg.value);
      continue;
    }
    line("keyword " + arg.keyword.name, arg.keyword.loc);
    Indent inner(depth);
    print(*arg.value);
  }
}

void ASTPrinter::print(const Stmt &stmt) {
  switch (stmt.getKind()) {
  case Stmt::Kind::Assign: {
    auto &s = llvm::cast<AssignStmt>(stmt);
    line("assign " + s.target.name, s.getLoc());
    Indent inner(depth);
    print(*s.value);
    return;
  }
  case Stmt::Kind::AttrAssign: {
    auto &s = llvm::cast<AttrAssignStmt>(stmt);
    line("attr-assign " + s.object.name + "." + s.attr.name, s.getLoc());
    Indent inner(depth);
    print(*s.value);
    return;
  }
  case Stmt::Kind::ExprStmt: {
    line("expr-stmt", stmt.getLoc());
    Indent inner(depth);
    print(*llvm::cast<ExprStmt>(stmt).expr);
    return;
  }
  case Stmt::Kind::VertexLoop: {
    auto &s = llvm::cast<VertexLoopStmt>(stmt);
    line("for-vertex " + s.var.name, s.getLoc());
    Indent inner(depth);
    print(*s.vertexSet);
    printBody(s.body);
    return;
  }
  case Stmt::Kind::RangeLoop: {
    auto &s = llvm::cast<RangeLoopStmt>(stmt);
    line("for-range " + s.var.name, s.getLoc());
    Indent inner(depth);
    print(*s.count);
    printBody(s.body);
    return;
  }
  case Stmt::Kind::Return: {
    line("return", stmt.getLoc());
    Indent inner(depth);
    print(*llvm::cast<ReturnStmt>(stmt).value);
    return;
  }
  case Stmt::Kind::Pass:
    line("pass", stmt.getLoc());
    return;
  }
}

void ASTPrinter::print(const Expr &expr) {
  const std::optional<ValueType> &type = expr.type;
  switch (expr.getKind()) {
  case Expr::Kind::Int:
    line("int " + std::to_string(llvm::cast<IntExpr>(expr).value),
         expr.getLoc(), type);
    return;
  case Expr::Kind::Float:
    line("float " + llvm::cast<FloatExpr>(expr).spelling, expr.getLoc(), type);
    return;
  case Expr::Kind::String:
    line("string \"" + llvm::cast<StringExpr>(expr).value + "\"", expr.getLoc(),
         type);
    return;
  case Expr::Kind::Bool:
    line(llvm::cast<BoolExpr>(expr).value ? "bool True" : "bool False",
         expr.getLoc(), type);
    return;
  case Expr::Kind::Name:
    line("name " + llvm::cast<NameExpr>(expr).name, expr.getLoc(), type);
    return;
  case Expr::Kind::Attr: {
    auto &e = llvm::cast<AttrExpr>(expr);
    line("attr ." + e.attr.name, e.attr.loc, type);
    Indent inner(depth);
    print(*e.base);
    return;
  }
  case Expr::Kind::Call: {
    auto &e = llvm::cast<CallExpr>(expr);
    line("call", expr.getLoc(), type);
    Indent inner(depth);
    print(*e.callee);
    printArgs(e.args);
    return;
  }
  case Expr::Kind::Binary: {
    auto &e = llvm::cast<BinaryExpr>(expr);
    line("binary " + getBinaryOpSpelling(e.op).str(), e.opLoc, type);
    Indent inner(depth);
    print(*e.lhs);
    print(*e.rhs);
    return;
  }
  case Expr::Kind::Unary: {
    auto &e = llvm::cast<UnaryExpr>(expr);
    line(e.op == UnaryOp::Neg ? "unary -" : "unary +", expr.getLoc(), type);
    Indent inner(depth);
    print(*e.operand);
    return;
  }
  case Expr::Kind::List: {
    line("list", expr.getLoc(), type);
    Indent inner(depth);
    for (const ExprPtr &element : llvm::cast<ListExpr>(expr).elements)
      print(*element);
    return;
  }
  case Expr::Kind::Comprehension: {
    auto &e = llvm::cast<ComprehensionExpr>(expr);
    std::string vars;
    for (const Ident &v : e.vars)
      vars += (vars.empty() ? "" : ", ") + v.name;
    line("comprehension for " + vars, expr.getLoc(), type);
    Indent inner(depth);
    print(*e.source);
    print(*e.element);
    return;
  }
  case Expr::Kind::Dict: {
    line("dict", expr.getLoc());
    Indent inner(depth);
    for (const DictExpr::Entry &entry : llvm::cast<DictExpr>(expr).entries) {
      line("key \"" + entry.key.name + "\"", entry.key.loc);
      Indent value(depth);
      print(*entry.value);
    }
    return;
  }
  case Expr::Kind::Subscript:
    line("subscript", expr.getLoc(), type);
    return;
  }
}

void gnnc::dumpAST(const Module &module, const llvm::SourceMgr &sourceMgr,
                   llvm::raw_ostream &os) {
  ASTPrinter(sourceMgr, os).print(module);
}
