//===- CxxToAST.cpp - Node-centric C++ to the .gnn AST --------------------===//
//
// Part of gnnc. The C++ spelling of each .gnn construct (docs/cxx.md):
//
//   nc::Rows<F...> x, nc::EdgeRows<F...> a     x: f32[N, F...], a: f32[E, F...]
//   nc::Weight<D...> W                         param W: f32[D...]
//   nc::Rows<F...> &out ... out = e;           -> f32[N, F...] ... return e
//   auto h = e;                                h = e
//   for (nc::Vertex v : g.dst_vertices())      for v in g.dst_vertex:
//   v.set("h", e)                              v.h = e
//   u.get("h"), e.get("w")                     u.h, e.w
//   nc::map(v.in_neighbors(), [](nc::Vertex u) { return e; })
//                                              [e for u in v.innbs]
//   nc::map(v.in_edges(), [](nc::Edge e) { return e.src().get("h"); })
//                                              [e_nbr.h for e_nbr, e in
//                                              v.inedges]
//   g.sum(list), g.sum(v.in_neighbors(), f)    g.sum(list), g.sum([...])
//   g.set_vertex_attr("h", e)                  g.set_vertex_attr({"h": e})
//   g.dst_attr("h")                            [w.h for w in g.dst_vertex]
//   nc::matmul(a, W), a + b, nc::relu(a), ...  a @ W, a + b, relu(a), ...
//
//===----------------------------------------------------------------------===//

#include "CxxToAST.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"

#include <map>
#include <optional>

using namespace gnnc;
using namespace gnnc::cxx;
namespace c = clang;

namespace {

/// The builtins a layer may call as `nc::name(...)`, as the .gnn builtin of
/// the same name.
const llvm::StringSet<> &mathFunctions() {
  static const llvm::StringSet<> names = {
      "exp",        "log",        "sqrt",  "rsqrt", "abs",     "relu",
      "sigmoid",    "tanh",       "sin",   "cos",   "gelu",    "elu",
      "leaky_relu", "max",        "min",   "where", "softmax", "log_softmax",
      "transpose",  "layer_norm", "concat"};
  return names;
}

/// The class of `type` (references and qualifiers stripped) when it is one
/// of gnnc::cxx's: "Graph", "Vertex", "Edge", "Tensor", "EdgeValues",
/// "Rows", "EdgeRows", "Weight"; "" otherwise.
std::string nodeCentricClass(c::QualType type) {
  const c::RecordDecl *record =
      type.getNonReferenceType().getCanonicalType()->getAsRecordDecl();
  if (!record)
    return "";
  std::string name = record->getQualifiedNameAsString();
  if (auto *spec = llvm::dyn_cast<c::ClassTemplateSpecializationDecl>(record))
    name = spec->getSpecializedTemplate()->getQualifiedNameAsString();
  llvm::StringRef ref(name);
  if (!ref.consume_front("gnnc::cxx::"))
    return "";
  return ref.str();
}

/// The integer template arguments of a Rows/EdgeRows/Weight type.
std::vector<int64_t> shapeOf(c::QualType type) {
  std::vector<int64_t> dims;
  const c::RecordDecl *record =
      type.getNonReferenceType().getCanonicalType()->getAsRecordDecl();
  auto *spec =
      llvm::dyn_cast_or_null<c::ClassTemplateSpecializationDecl>(record);
  if (!spec)
    return dims;
  for (const c::TemplateArgument &arg : spec->getTemplateArgs().asArray()) {
    if (arg.getKind() == c::TemplateArgument::Pack) {
      for (const c::TemplateArgument &d : arg.pack_elements())
        dims.push_back(d.getAsIntegral().getSExtValue());
    } else if (arg.getKind() == c::TemplateArgument::Integral) {
      dims.push_back(arg.getAsIntegral().getSExtValue());
    }
  }
  return dims;
}

/// What a name bound in a map's function stands for.
struct Bound {
  enum class Kind { Neighbour, Edge };
  Kind kind;
  /// Edge: the .gnn name of the neighbour at its other end, and whether
  /// the edge is an in-edge of the loop vertex (its source is the
  /// neighbour).
  std::string neighbour;
  bool in = true;
};

class Translator {
public:
  Translator(const c::FunctionDecl &fn, const llvm::MemoryBuffer &buffer)
      : fn(fn), ctx(fn.getASTContext()), sm(ctx.getSourceManager()),
        buffer(buffer),
        file(sm.getFileID(sm.getExpansionLoc(fn.getLocation()))) {}

  std::unique_ptr<TranslatedLayer> run();

private:
  // Locations and errors.
  llvm::SMLoc loc(c::SourceLocation l) const {
    c::SourceLocation e = sm.getExpansionLoc(l);
    if (sm.getFileID(e) != file)
      e = sm.getExpansionLoc(fn.getLocation());
    return llvm::SMLoc::getFromPointer(buffer.getBufferStart() +
                                       sm.getFileOffset(e));
  }
  llvm::SMLoc loc(const c::Stmt *s) const { return loc(s->getBeginLoc()); }
  std::nullptr_t error(c::SourceLocation l, const llvm::Twine &message) {
    c::DiagnosticsEngine &d = ctx.getDiagnostics();
    d.Report(l, d.getCustomDiagID(c::DiagnosticsEngine::Error, "%0"))
        << message.str();
    failed = true;
    return nullptr;
  }
  std::nullptr_t unsupported(const c::Stmt *s, const llvm::Twine &what) {
    return error(s->getBeginLoc(),
                 what + " is outside the node-centric subset that gnnc-cxx "
                        "compiles (docs/cxx.md)");
  }
  std::string text(c::SourceRange r) const {
    return c::Lexer::getSourceText(c::CharSourceRange::getTokenRange(r), sm,
                                   ctx.getLangOpts())
        .str();
  }

  // Signature.
  bool translateSignature(Definition &def, ForwardDef &fwd,
                          std::vector<LayerArg> &args);
  TypeExpr tensorType(c::SourceLocation l, const char *rows,
                      const std::vector<int64_t> &dims);

  // Statements.
  bool translateBody(const c::Stmt *body, StmtList &out, bool topLevel);
  bool translateStmt(const c::Stmt *s, StmtList &out, bool topLevel, bool last);
  bool translateCall(const c::Expr *e, StmtList &out);

  // Expressions.
  const c::Expr *strip(const c::Expr *e) const;
  ExprPtr expr(const c::Expr *e);
  ExprPtr memberCall(const c::CXXMemberCallExpr *call);
  ExprPtr freeCall(const c::CallExpr *call);
  ExprPtr comprehension(const c::Expr *range, const c::Expr *function,
                        c::SourceLocation at);
  ExprPtr reshape(const c::CallExpr *call);
  ExprPtr stringKey(const c::Expr *e, std::string &key);
  ExprPtr binary(BinaryOp op, c::SourceLocation at, c::SourceLocation opLoc,
                 const c::Expr *lhs, const c::Expr *rhs);
  ExprPtr name(c::SourceLocation at, const std::string &n) {
    return std::make_unique<NameExpr>(loc(at), n);
  }
  ExprPtr attr(c::SourceLocation at, ExprPtr base, const std::string &a) {
    return std::make_unique<AttrExpr>(loc(at), std::move(base),
                                      Ident{a, loc(at)});
  }
  /// The .gnn name that a vertex-valued expression stands for: the loop
  /// vertex, a map's neighbour, or an end of a map's edge.
  std::optional<std::string> vertexName(const c::Expr *e);

  const c::FunctionDecl &fn;
  c::ASTContext &ctx;
  c::SourceManager &sm;
  const llvm::MemoryBuffer &buffer;
  c::FileID file;
  bool failed = false;

  std::string graphName, outputName;
  /// The loop vertex of the vertex loop being translated.
  std::string loopVertex;
  /// The names bound by the map functions being translated.
  std::map<std::string, Bound> bound;
};

TypeExpr Translator::tensorType(c::SourceLocation l, const char *rows,
                                const std::vector<int64_t> &dims) {
  TypeExpr t;
  t.kind = TypeExpr::Kind::Tensor;
  t.loc = loc(l);
  t.elemType = ElemType::F32;
  if (rows)
    t.dims.push_back(std::make_unique<NameExpr>(loc(l), rows));
  for (int64_t d : dims)
    t.dims.push_back(std::make_unique<IntExpr>(loc(l), d));
  return t;
}

bool Translator::translateSignature(Definition &def, ForwardDef &fwd,
                                    std::vector<LayerArg> &args) {
  for (const c::ParmVarDecl *p : fn.parameters()) {
    std::string cls = nodeCentricClass(p->getType());
    std::string pname = p->getName().str();
    c::SourceLocation l = p->getLocation();
    bool ref = p->getType()->isLValueReferenceType();
    bool isConst = p->getType().getNonReferenceType().isConstQualified();
    if (pname.empty()) {
      error(l, "every argument of a layer needs a name");
      continue;
    }
    if (cls == "Graph") {
      if (!graphName.empty()) {
        error(l, "a layer takes one graph");
        continue;
      }
      graphName = pname;
      ForwardArg a{{pname, loc(l)}, TypeExpr()};
      a.type.kind = TypeExpr::Kind::Graph;
      a.type.loc = loc(l);
      fwd.args.push_back(std::move(a));
      args.push_back({LayerArg::Kind::Graph, pname});
      continue;
    }
    if (cls == "Weight") {
      ParamDecl param;
      param.name = {pname, loc(l)};
      param.type =
          tensorType(p->getTypeSpecStartLoc(), nullptr, shapeOf(p->getType()));
      def.params.push_back(std::move(param));
      args.push_back({LayerArg::Kind::Weight, pname, ref && isConst});
      continue;
    }
    if (cls == "Rows" || cls == "EdgeRows") {
      bool edges = cls == "EdgeRows";
      TypeExpr type = tensorType(p->getTypeSpecStartLoc(), edges ? "E" : "N",
                                 shapeOf(p->getType()));
      if (ref && !isConst) {
        if (edges || !outputName.empty()) {
          error(l, edges ? "a layer's result has one row per vertex (Rows)"
                         : "a layer has one result: one Rows<...> & argument");
          continue;
        }
        outputName = pname;
        fwd.resultType = std::move(type);
        args.push_back({LayerArg::Kind::Output, pname});
        continue;
      }
      fwd.args.push_back({{pname, loc(l)}, std::move(type)});
      args.push_back({edges ? LayerArg::Kind::EdgeInput : LayerArg::Kind::Input,
                      pname, ref && isConst});
      continue;
    }
    error(l, "argument '" + pname +
                 "' of a layer is a gnnc::cxx::Graph &, "
                 "Rows<...>, EdgeRows<...> or Weight<...> (the result a "
                 "Rows<...> &), not '" +
                 p->getType().getAsString() + "'");
  }
  if (!fn.getReturnType()->isVoidType())
    error(fn.getReturnTypeSourceRange().getBegin(),
          "a layer returns void: its result is the Rows<...> & argument it "
          "assigns");
  if (graphName.empty())
    error(fn.getLocation(), "a layer takes a gnnc::cxx::Graph &");
  if (outputName.empty())
    error(fn.getLocation(), "a layer writes its result to a Rows<...> & "
                            "argument");
  return !failed;
}

/// A copy, a move or a conversion (`Tensor(1.0f)`, `std::string("h")`):
/// one argument, the others defaulted.
static bool convertsOneValue(const c::CXXConstructExpr *k) {
  if (k->getNumArgs() == 0 || llvm::isa<c::CXXTemporaryObjectExpr>(k))
    return false;
  for (unsigned i = 1; i < k->getNumArgs(); ++i)
    if (!llvm::isa<c::CXXDefaultArgExpr>(k->getArg(i)))
      return false;
  return true;
}

const c::Expr *Translator::strip(const c::Expr *e) const {
  while (e) {
    if (auto *x = llvm::dyn_cast<c::ExprWithCleanups>(e))
      e = x->getSubExpr();
    else if (auto *m = llvm::dyn_cast<c::MaterializeTemporaryExpr>(e))
      e = m->getSubExpr();
    else if (auto *b = llvm::dyn_cast<c::CXXBindTemporaryExpr>(e))
      e = b->getSubExpr();
    else if (auto *i = llvm::dyn_cast<c::ImplicitCastExpr>(e))
      e = i->getSubExpr();
    else if (auto *p = llvm::dyn_cast<c::ParenExpr>(e))
      e = p->getSubExpr();
    else if (auto *f = llvm::dyn_cast<c::CXXFunctionalCastExpr>(e))
      e = f->getSubExpr();
    else if (auto *k = llvm::dyn_cast<c::CXXConstructExpr>(e);
             k && convertsOneValue(k))
      e = k->getArg(0);
    else
      break;
  }
  return e;
}

bool Translator::translateBody(const c::Stmt *body, StmtList &out,
                               bool topLevel) {
  if (auto *block = llvm::dyn_cast<c::CompoundStmt>(body)) {
    size_t n = block->size(), i = 0;
    for (const c::Stmt *s : block->body())
      if (!translateStmt(s, out, topLevel, ++i == n) && failed)
        return false;
    return !failed;
  }
  return translateStmt(body, out, topLevel, true);
}

bool Translator::translateStmt(const c::Stmt *s, StmtList &out, bool topLevel,
                               bool last) {
  if (llvm::isa<c::NullStmt>(s))
    return true;
  if (auto *decl = llvm::dyn_cast<c::DeclStmt>(s)) {
    for (const c::Decl *d : decl->decls()) {
      auto *var = llvm::dyn_cast<c::VarDecl>(d);
      if (!var || !var->getInit())
        return unsupported(s, "a declaration without a value"), false;
      ExprPtr value = expr(var->getInit());
      if (!value)
        return false;
      out.push_back(std::make_unique<AssignStmt>(
          loc(var->getLocation()),
          Ident{var->getName().str(), loc(var->getLocation())},
          std::move(value)));
    }
    return true;
  }
  if (auto *loop = llvm::dyn_cast<c::CXXForRangeStmt>(s)) {
    const c::Expr *range = strip(loop->getRangeInit());
    auto *call = llvm::dyn_cast_or_null<c::CXXMemberCallExpr>(range);
    bool overVertices =
        call && call->getMethodDecl()->getName() == "dst_vertices" &&
        nodeCentricClass(call->getImplicitObjectArgument()->getType()) ==
            "Graph";
    if (!overVertices) {
      // A loop over a neighbourhood: its writes would go to neighbours.
      bool writes = false;
      std::function<void(const c::Stmt *)> find = [&](const c::Stmt *t) {
        if (!t)
          return;
        if (auto *m = llvm::dyn_cast<c::CXXMemberCallExpr>(t))
          if (m->getMethodDecl()->getName() == "set" &&
              nodeCentricClass(m->getImplicitObjectArgument()->getType()) ==
                  "Vertex")
            writes = true;
        for (const c::Stmt *child : t->children())
          find(child);
      };
      find(loop->getBody());
      if (writes)
        error(loop->getBeginLoc(),
              "this loop writes a neighbour's attribute: in a vertex loop "
              "only the loop vertex is written (v.set), and a neighbourhood "
              "is read through nc::map and aggregated");
      else
        error(loop->getBeginLoc(),
              "a loop over anything but g.dst_vertices() is outside the "
              "node-centric subset; read a neighbourhood with "
              "nc::map(v.in_neighbors(), ...) and aggregate it");
      return false;
    }
    if (!topLevel || !loopVertex.empty())
      return error(loop->getBeginLoc(), "vertex loops do not nest"), false;
    std::string var = loop->getLoopVariable()->getName().str();
    loopVertex = var;
    StmtList body;
    bool ok = translateBody(loop->getBody(), body, /*topLevel=*/false);
    loopVertex.clear();
    if (!ok)
      return false;
    out.push_back(std::make_unique<VertexLoopStmt>(
        loc(loop->getBeginLoc()),
        Ident{var, loc(loop->getLoopVariable()->getLocation())},
        attr(loop->getRangeInit()->getBeginLoc(),
             name(loop->getRangeInit()->getBeginLoc(), graphName),
             "dst_vertex"),
        std::move(body)));
    return true;
  }
  if (auto *e = llvm::dyn_cast<c::Expr>(s)) {
    const c::Expr *x = strip(e);
    // `out = e;`: the layer's result, its last statement.
    if (auto *op = llvm::dyn_cast<c::CXXOperatorCallExpr>(x);
        op && op->getOperator() == c::OO_Equal) {
      auto *target = llvm::dyn_cast<c::DeclRefExpr>(strip(op->getArg(0)));
      if (!target)
        return unsupported(x, "an assignment to this"), false;
      std::string t = target->getDecl()->getName().str();
      ExprPtr value = expr(op->getArg(1));
      if (!value)
        return false;
      if (t == outputName) {
        if (!topLevel || !last)
          return error(x->getBeginLoc(),
                       "the result '" + t +
                           "' is assigned once, by the layer's last "
                           "statement"),
                 false;
        out.push_back(std::make_unique<ReturnStmt>(loc(x), std::move(value)));
        return true;
      }
      out.push_back(std::make_unique<AssignStmt>(
          loc(x), Ident{t, loc(target->getBeginLoc())}, std::move(value)));
      return true;
    }
    return translateCall(x, out);
  }
  if (auto *block = llvm::dyn_cast<c::CompoundStmt>(s))
    return translateBody(block, out, topLevel);
  // IfStmt -> an 'if' statement.
  llvm::StringRef kind(s->getStmtClassName());
  kind.consume_back("Stmt");
  std::string word = kind.lower();
  unsupported(
      s,
      llvm::Twine(llvm::StringRef("aeiou").contains(word[0]) ? "an '" : "a '") +
          word + "' statement");
  return false;
}

/// Calls that are statements: v.set, g.set_vertex_attr, g.set_edge_attr.
bool Translator::translateCall(const c::Expr *e, StmtList &out) {
  auto *call = llvm::dyn_cast<c::CXXMemberCallExpr>(e);
  if (!call) {
    unsupported(e, "this statement");
    return false;
  }
  llvm::StringRef method = call->getMethodDecl()->getName();
  const c::Expr *object = strip(call->getImplicitObjectArgument());
  std::string cls = nodeCentricClass(object->getType());
  if (cls == "Vertex" && method == "set") {
    std::optional<std::string> v = vertexName(object);
    if (!v || *v != loopVertex) {
      error(call->getBeginLoc(),
            "this writes an attribute of " +
                (v ? "the neighbour '" + *v + "'" : std::string("a vertex")) +
                " that is not the loop vertex: in a vertex loop only the "
                "loop vertex is written");
      return false;
    }
    std::string key;
    ExprPtr keyExpr = stringKey(call->getArg(0), key);
    ExprPtr value = expr(call->getArg(1));
    if (!keyExpr || !value)
      return false;
    out.push_back(std::make_unique<AttrAssignStmt>(
        loc(call), Ident{*v, loc(object)},
        Ident{key, loc(call->getArg(0)->getBeginLoc())}, std::move(value)));
    return true;
  }
  if (cls == "Graph" &&
      (method == "set_vertex_attr" || method == "set_edge_attr")) {
    std::string key;
    ExprPtr keyExpr = stringKey(call->getArg(0), key);
    ExprPtr value = expr(call->getArg(1));
    if (!keyExpr || !value)
      return false;
    std::vector<DictExpr::Entry> entries;
    entries.push_back(
        {Ident{key, loc(call->getArg(0)->getBeginLoc())}, std::move(value)});
    std::vector<Arg> args;
    args.push_back({Ident(), std::make_unique<DictExpr>(
                                 loc(call->getArg(0)->getBeginLoc()),
                                 std::move(entries))});
    out.push_back(std::make_unique<ExprStmt>(
        loc(call),
        std::make_unique<CallExpr>(loc(call),
                                   attr(call->getBeginLoc(),
                                        name(object->getBeginLoc(), graphName),
                                        method.str()),
                                   std::move(args))));
    return true;
  }
  unsupported(e, "this statement (a layer's statements are declarations, "
                 "vertex loops, v.set, g.set_vertex_attr, g.set_edge_attr "
                 "and the result's assignment)");
  return false;
}

ExprPtr Translator::stringKey(const c::Expr *e, std::string &key) {
  auto *s = llvm::dyn_cast_or_null<c::StringLiteral>(strip(e));
  if (!s)
    return error(e->getBeginLoc(),
                 "an attribute name is a string literal (\"h\")");
  key = s->getString().str();
  if (key.empty() ||
      !(std::isalpha(static_cast<unsigned char>(key[0])) || key[0] == '_'))
    return error(e->getBeginLoc(),
                 "the attribute name '" + key + "' is not an identifier");
  for (char ch : key)
    if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'))
      return error(e->getBeginLoc(),
                   "the attribute name '" + key + "' is not an identifier");
  return std::make_unique<StringExpr>(loc(e), key);
}

std::optional<std::string> Translator::vertexName(const c::Expr *e) {
  e = strip(e);
  if (auto *ref = llvm::dyn_cast<c::DeclRefExpr>(e)) {
    std::string n = ref->getDecl()->getName().str();
    if (n == loopVertex)
      return n;
    auto it = bound.find(n);
    if (it != bound.end() && it->second.kind == Bound::Kind::Neighbour)
      return n;
    return std::nullopt;
  }
  // e.src() / e.dst() of a map's edge.
  if (auto *call = llvm::dyn_cast<c::CXXMemberCallExpr>(e)) {
    llvm::StringRef m = call->getMethodDecl()->getName();
    auto *ref = llvm::dyn_cast<c::DeclRefExpr>(
        strip(call->getImplicitObjectArgument()));
    if (!ref || (m != "src" && m != "dst"))
      return std::nullopt;
    auto it = bound.find(ref->getDecl()->getName().str());
    if (it == bound.end() || it->second.kind != Bound::Kind::Edge)
      return std::nullopt;
    bool neighbourEnd = (m == "src") == it->second.in;
    return neighbourEnd ? it->second.neighbour : loopVertex;
  }
  return std::nullopt;
}

ExprPtr Translator::binary(BinaryOp op, c::SourceLocation at,
                           c::SourceLocation opLoc, const c::Expr *lhs,
                           const c::Expr *rhs) {
  ExprPtr a = expr(lhs);
  if (!a)
    return nullptr;
  ExprPtr b = expr(rhs);
  if (!b)
    return nullptr;
  return std::make_unique<BinaryExpr>(loc(at), op, loc(opLoc), std::move(a),
                                      std::move(b));
}

ExprPtr Translator::expr(const c::Expr *e) {
  e = strip(e);
  if (!e)
    return nullptr;
  if (auto *f = llvm::dyn_cast<c::FloatingLiteral>(e)) {
    std::string spelling = text(f->getSourceRange());
    while (!spelling.empty() &&
           (spelling.back() == 'f' || spelling.back() == 'F' ||
            spelling.back() == 'l' || spelling.back() == 'L'))
      spelling.pop_back();
    return std::make_unique<FloatExpr>(loc(e), f->getValueAsApproximateDouble(),
                                       spelling);
  }
  if (auto *i = llvm::dyn_cast<c::IntegerLiteral>(e))
    return std::make_unique<IntExpr>(loc(e), i->getValue().getSExtValue());
  if (auto *b = llvm::dyn_cast<c::CXXBoolLiteralExpr>(e))
    return std::make_unique<BoolExpr>(loc(e), b->getValue());
  if (auto *ref = llvm::dyn_cast<c::DeclRefExpr>(e)) {
    const c::ValueDecl *d = ref->getDecl();
    if (llvm::isa<c::VarDecl>(d) || llvm::isa<c::ParmVarDecl>(d))
      return name(e->getBeginLoc(), d->getName().str());
    return unsupported(e, "a reference to '" + d->getNameAsString() + "'");
  }
  if (auto *op = llvm::dyn_cast<c::CXXOperatorCallExpr>(e)) {
    c::OverloadedOperatorKind k = op->getOperator();
    if (op->getNumArgs() == 1 && k == c::OO_Minus) {
      ExprPtr x = expr(op->getArg(0));
      return x ? std::make_unique<UnaryExpr>(loc(e), UnaryOp::Neg, std::move(x))
               : nullptr;
    }
    if (op->getNumArgs() == 2) {
      std::optional<BinaryOp> b;
      switch (k) {
      case c::OO_Plus:
        b = BinaryOp::Add;
        break;
      case c::OO_Minus:
        b = BinaryOp::Sub;
        break;
      case c::OO_Star:
        b = BinaryOp::Mul;
        break;
      case c::OO_Slash:
        b = BinaryOp::Div;
        break;
      case c::OO_Less:
        b = BinaryOp::Lt;
        break;
      case c::OO_LessEqual:
        b = BinaryOp::Le;
        break;
      case c::OO_Greater:
        b = BinaryOp::Gt;
        break;
      case c::OO_GreaterEqual:
        b = BinaryOp::Ge;
        break;
      case c::OO_EqualEqual:
        b = BinaryOp::Eq;
        break;
      case c::OO_ExclaimEqual:
        b = BinaryOp::Ne;
        break;
      default:
        break;
      }
      if (b)
        return binary(*b, e->getBeginLoc(), op->getOperatorLoc(), op->getArg(0),
                      op->getArg(1));
    }
    return unsupported(e, "this operator");
  }
  if (auto *bin = llvm::dyn_cast<c::BinaryOperator>(e)) {
    std::optional<BinaryOp> b;
    switch (bin->getOpcode()) {
    case c::BO_Add:
      b = BinaryOp::Add;
      break;
    case c::BO_Sub:
      b = BinaryOp::Sub;
      break;
    case c::BO_Mul:
      b = BinaryOp::Mul;
      break;
    case c::BO_Div:
      b = BinaryOp::Div;
      break;
    case c::BO_LT:
      b = BinaryOp::Lt;
      break;
    case c::BO_LE:
      b = BinaryOp::Le;
      break;
    case c::BO_GT:
      b = BinaryOp::Gt;
      break;
    case c::BO_GE:
      b = BinaryOp::Ge;
      break;
    case c::BO_EQ:
      b = BinaryOp::Eq;
      break;
    case c::BO_NE:
      b = BinaryOp::Ne;
      break;
    default:
      break;
    }
    if (!b)
      return unsupported(e, "this operator");
    return binary(*b, e->getBeginLoc(), bin->getOperatorLoc(), bin->getLHS(),
                  bin->getRHS());
  }
  if (auto *un = llvm::dyn_cast<c::UnaryOperator>(e)) {
    if (un->getOpcode() != c::UO_Minus && un->getOpcode() != c::UO_Plus)
      return unsupported(e, "this operator");
    ExprPtr x = expr(un->getSubExpr());
    return x ? std::make_unique<UnaryExpr>(loc(e),
                                           un->getOpcode() == c::UO_Minus
                                               ? UnaryOp::Neg
                                               : UnaryOp::Plus,
                                           std::move(x))
             : nullptr;
  }
  if (auto *m = llvm::dyn_cast<c::CXXMemberCallExpr>(e))
    return memberCall(m);
  if (auto *call = llvm::dyn_cast<c::CallExpr>(e))
    return freeCall(call);
  if (llvm::isa<c::LambdaExpr>(e))
    return unsupported(e, "a function outside nc::map and the aggregations");
  return unsupported(e, llvm::Twine("this expression (") +
                            e->getStmtClassName() + ")");
}

ExprPtr Translator::memberCall(const c::CXXMemberCallExpr *call) {
  llvm::StringRef m = call->getMethodDecl()->getName();
  const c::Expr *object = strip(call->getImplicitObjectArgument());
  std::string cls = nodeCentricClass(object->getType());
  c::SourceLocation at = call->getBeginLoc();
  if (cls == "Vertex" && m == "get") {
    std::optional<std::string> v = vertexName(object);
    if (!v)
      return error(object->getBeginLoc(),
                   "a vertex here is the loop vertex or a map's neighbour");
    std::string key;
    if (!stringKey(call->getArg(0), key))
      return nullptr;
    return attr(call->getArg(0)->getBeginLoc(), name(object->getBeginLoc(), *v),
                key);
  }
  if (cls == "Edge" && m == "get") {
    auto *ref = llvm::dyn_cast<c::DeclRefExpr>(object);
    if (!ref || !bound.count(ref->getDecl()->getName().str()))
      return error(object->getBeginLoc(), "an edge here is a map's edge");
    std::string key;
    if (!stringKey(call->getArg(0), key))
      return nullptr;
    return attr(call->getArg(0)->getBeginLoc(),
                name(object->getBeginLoc(), ref->getDecl()->getName().str()),
                key);
  }
  if (cls == "Graph") {
    if (m == "sum" || m == "mean" || m == "max" || m == "min" ||
        m == "softmax") {
      ExprPtr list = call->getNumArgs() == 2
                         ? comprehension(call->getArg(0), call->getArg(1), at)
                         : expr(call->getArg(0));
      if (!list)
        return nullptr;
      std::vector<Arg> args;
      args.push_back({Ident(), std::move(list)});
      // The mean aggregation is g.avg in .gnn.
      return std::make_unique<CallExpr>(
          loc(at),
          attr(at, name(object->getBeginLoc(), graphName),
               m == "mean" ? "avg" : m.str()),
          std::move(args));
    }
    if (m == "in_degree" || m == "out_degree")
      return std::make_unique<CallExpr>(
          loc(at), attr(at, name(object->getBeginLoc(), graphName), m.str()),
          std::vector<Arg>());
    if (m == "dst_attr") {
      std::string key;
      if (!stringKey(call->getArg(0), key))
        return nullptr;
      // [w.h for w in g.dst_vertex], with a name no C++ name can clash with
      // (C++ reserves those with two underscores).
      std::string w = "__vertex";
      std::vector<Ident> vars{{w, loc(at)}};
      return std::make_unique<ComprehensionExpr>(
          loc(at), attr(call->getArg(0)->getBeginLoc(), name(at, w), key),
          std::move(vars),
          attr(at, name(object->getBeginLoc(), graphName), "dst_vertex"));
    }
  }
  if (cls == "Vertex" && (m == "in_neighbors" || m == "out_neighbors" ||
                          m == "in_edges" || m == "out_edges"))
    return error(at, "a neighbourhood is read through nc::map(" + m.str() +
                         ", f) or an aggregation of it");
  return error(at, "'" + call->getMethodDecl()->getQualifiedNameAsString() +
                       "' is outside the node-centric subset that gnnc-cxx "
                       "compiles (docs/cxx.md)");
}

ExprPtr Translator::freeCall(const c::CallExpr *call) {
  const c::FunctionDecl *callee = call->getDirectCallee();
  c::SourceLocation at = call->getBeginLoc();
  if (!callee)
    return error(at, "a call through a pointer or a functor cannot be "
                     "compiled: call the functions of gnnc/cxx/NodeCentric.h");
  std::string qualified = callee->getQualifiedNameAsString();
  llvm::StringRef fnName(qualified);
  if (!fnName.consume_front("gnnc::cxx::"))
    return error(at, "a call to '" + qualified +
                         "', which gnnc-cxx cannot compile: a layer calls "
                         "the functions of gnnc/cxx/NodeCentric.h only");
  if (fnName == "map")
    return comprehension(call->getArg(0), call->getArg(1), at);
  if (fnName == "matmul")
    return binary(BinaryOp::MatMul, at, at, call->getArg(0), call->getArg(1));
  if (fnName == "reshape")
    return reshape(call);
  if (fnName == "sum" || fnName == "mean") {
    // sum(x, axis, keepdims): the last argument as .gnn's keyword.
    std::vector<Arg> args;
    for (unsigned i = 0; i < call->getNumArgs(); ++i) {
      const c::Expr *a = call->getArg(i);
      if (llvm::isa<c::CXXDefaultArgExpr>(a))
        continue;
      ExprPtr x = expr(a);
      if (!x)
        return nullptr;
      Ident keyword;
      if (i == 2)
        keyword = {"keepdims", loc(a->getBeginLoc())};
      args.push_back({keyword, std::move(x)});
    }
    return std::make_unique<CallExpr>(loc(at), name(at, fnName.str()),
                                      std::move(args));
  }
  if (!mathFunctions().contains(fnName))
    return error(at, "a call to '" + qualified +
                         "', which gnnc-cxx cannot compile");
  std::vector<Arg> args;
  for (const c::Expr *a : call->arguments()) {
    if (llvm::isa<c::CXXDefaultArgExpr>(a))
      continue;
    // concat({a, b}, axis): the braced list is .gnn's list.
    const c::Expr *list = strip(a);
    if (auto *il = llvm::dyn_cast<c::CXXStdInitializerListExpr>(list))
      list = strip(il->getSubExpr());
    if (auto *init = llvm::dyn_cast<c::InitListExpr>(list)) {
      std::vector<ExprPtr> elements;
      for (const c::Expr *e : init->inits()) {
        ExprPtr x = expr(e);
        if (!x)
          return nullptr;
        elements.push_back(std::move(x));
      }
      args.push_back({Ident(), std::make_unique<ListExpr>(
                                   loc(list), std::move(elements))});
      continue;
    }
    ExprPtr x = expr(a);
    if (!x)
      return nullptr;
    args.push_back({Ident(), std::move(x)});
  }
  return std::make_unique<CallExpr>(loc(at), name(at, fnName.str()),
                                    std::move(args));
}

/// `nc::reshape(x, {g.num_vertices(), 2, -1})`: `reshape(x, [N, 2, -1])`.
ExprPtr Translator::reshape(const c::CallExpr *call) {
  ExprPtr x = expr(call->getArg(0));
  if (!x)
    return nullptr;
  const c::Expr *shape = strip(call->getArg(1));
  if (auto *list = llvm::dyn_cast<c::CXXStdInitializerListExpr>(shape))
    shape = strip(list->getSubExpr());
  auto *init = llvm::dyn_cast<c::InitListExpr>(shape);
  if (!init)
    return error(call->getArg(1)->getBeginLoc(),
                 "the shape of nc::reshape is a braced list of integers and "
                 "g.num_vertices(), such as {g.num_vertices(), 2, -1}");
  std::vector<ExprPtr> dims;
  for (const c::Expr *d : init->inits()) {
    d = strip(d);
    if (auto *m = llvm::dyn_cast<c::CXXMemberCallExpr>(d);
        m && m->getMethodDecl()->getName() == "num_vertices") {
      dims.push_back(name(d->getBeginLoc(), "N"));
      continue;
    }
    ExprPtr e = expr(d);
    if (!e)
      return nullptr;
    dims.push_back(std::move(e));
  }
  std::vector<Arg> args;
  args.push_back({Ident(), std::move(x)});
  args.push_back({Ident(), std::make_unique<ListExpr>(loc(shape->getBeginLoc()),
                                                      std::move(dims))});
  return std::make_unique<CallExpr>(loc(call->getBeginLoc()),
                                    name(call->getBeginLoc(), "reshape"),
                                    std::move(args));
}

ExprPtr Translator::comprehension(const c::Expr *range, const c::Expr *function,
                                  c::SourceLocation at) {
  // The neighbourhood: v.in_neighbors() ... of the loop vertex, as the graph
  // fixes it.
  auto *source = llvm::dyn_cast<c::CXXMemberCallExpr>(strip(range));
  llvm::StringRef which =
      source ? source->getMethodDecl()->getName() : llvm::StringRef();
  const char *gnnSource = llvm::StringSwitch<const char *>(which)
                              .Case("in_neighbors", "innbs")
                              .Case("out_neighbors", "outnbs")
                              .Case("in_edges", "inedges")
                              .Case("out_edges", "outedges")
                              .Default(nullptr);
  std::optional<std::string> owner =
      source && gnnSource ? vertexName(source->getImplicitObjectArgument())
                          : std::nullopt;
  if (!gnnSource || !owner || *owner != loopVertex || loopVertex.empty())
    return error(range->getBeginLoc(),
                 "a data-dependent neighbour list cannot be compiled: a map "
                 "reads a neighbourhood of the loop vertex as the graph fixes "
                 "it (v.in_neighbors(), v.out_neighbors(), v.in_edges(), "
                 "v.out_edges())");
  auto *lambda = llvm::dyn_cast<c::LambdaExpr>(strip(function));
  if (!lambda)
    return error(function->getBeginLoc(),
                 "a map's function is a lambda returning one expression");
  const c::CXXMethodDecl *op = lambda->getCallOperator();
  auto *body = llvm::dyn_cast_or_null<c::CompoundStmt>(op->getBody());
  const c::ReturnStmt *ret =
      body && body->size() == 1
          ? llvm::dyn_cast<c::ReturnStmt>(body->body_front())
          : nullptr;
  if (!ret || !ret->getRetValue() || op->getNumParams() != 1)
    return error(function->getBeginLoc(),
                 "a map's function takes one vertex or edge and is one "
                 "return statement");
  const c::ParmVarDecl *param = op->getParamDecl(0);
  std::string var = param->getName().str();
  bool edges = which.ends_with("edges");
  std::string cls = nodeCentricClass(param->getType());
  if (cls != (edges ? "Edge" : "Vertex"))
    return error(param->getLocation(),
                 std::string("the function of a map over ") +
                     (edges ? "edges takes an nc::Edge"
                            : "neighbours takes an nc::Vertex"));
  Bound b;
  b.kind = edges ? Bound::Kind::Edge : Bound::Kind::Neighbour;
  b.in = which.starts_with("in_");
  b.neighbour = var + "_nbr";
  bound[var] = b;
  ExprPtr element = expr(ret->getRetValue());
  bound.erase(var);
  if (!element)
    return nullptr;
  std::vector<Ident> vars;
  if (edges)
    vars.push_back({b.neighbour, loc(param->getLocation())});
  vars.push_back({var, loc(param->getLocation())});
  return std::make_unique<ComprehensionExpr>(
      loc(at), std::move(element), std::move(vars),
      attr(source->getBeginLoc(), name(source->getBeginLoc(), loopVertex),
           gnnSource));
}

std::unique_ptr<TranslatedLayer> Translator::run() {
  auto out = std::make_unique<TranslatedLayer>();
  out->function = &fn;
  auto def = std::make_unique<Definition>();
  def->loc = loc(fn.getBeginLoc());
  def->name = {fn.getName().str(), loc(fn.getLocation())};
  ForwardDef fwd;
  fwd.loc = loc(fn.getBody()->getBeginLoc());
  fwd.name = {"forward", loc(fn.getLocation())};
  if (!translateSignature(*def, fwd, out->args))
    return nullptr;
  if (!translateBody(fn.getBody(), fwd.body, /*topLevel=*/true))
    return nullptr;
  if (fwd.body.empty() || !llvm::isa<ReturnStmt>(fwd.body.back().get()))
    return error(fn.getBody()->getEndLoc(),
                 "a layer ends by assigning its result ('" + outputName +
                     " = ...;')");
  def->forwards.push_back(std::move(fwd));
  out->definition = std::move(def);
  return failed ? nullptr : std::move(out);
}

} // namespace

std::unique_ptr<TranslatedLayer>
gnnc::cxx::translateLayer(const c::FunctionDecl &function,
                          const llvm::MemoryBuffer &buffer) {
  return Translator(function, buffer).run();
}
