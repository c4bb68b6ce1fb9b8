//===- ParserTest.cpp - Unit tests for the .gnn parser --------------------===//
//
// Part of gnnc. Expressions are rendered by a small S-expression printer
// defined here (independent of ASTDump), so precedence and associativity are
// checked against hand-written trees.
//
//===----------------------------------------------------------------------===//

#include "FrontendTestUtil.h"

#include "gtest/gtest.h"

#include <string>

using namespace gnnc;
using gnnc::test::SourceFixture;

namespace {

std::string sexpr(const Expr *e);

std::string sexprArgs(const std::vector<Arg> &args) {
  std::string out;
  for (const Arg &a : args) {
    out += " ";
    if (!a.keyword.name.empty())
      out += a.keyword.name + "=";
    out += sexpr(a.value.get());
  }
  return out;
}

std::string sexpr(const Expr *e) {
  if (!e)
    return "<null>";
  switch (e->getKind()) {
  case Expr::Kind::Int:
    return std::to_string(llvm::cast<IntExpr>(e)->value);
  case Expr::Kind::Float:
    return llvm::cast<FloatExpr>(e)->spelling;
  case Expr::Kind::String:
    return "\"" + llvm::cast<StringExpr>(e)->value + "\"";
  case Expr::Kind::Bool:
    return llvm::cast<BoolExpr>(e)->value ? "True" : "False";
  case Expr::Kind::Name:
    return llvm::cast<NameExpr>(e)->name;
  case Expr::Kind::Attr: {
    auto *a = llvm::cast<AttrExpr>(e);
    return "(. " + sexpr(a->base.get()) + " " + a->attr.name + ")";
  }
  case Expr::Kind::Call: {
    auto *c = llvm::cast<CallExpr>(e);
    return "(call " + sexpr(c->callee.get()) + sexprArgs(c->args) + ")";
  }
  case Expr::Kind::Binary: {
    auto *b = llvm::cast<BinaryExpr>(e);
    return "(" + getBinaryOpSpelling(b->op).str() + " " + sexpr(b->lhs.get()) +
           " " + sexpr(b->rhs.get()) + ")";
  }
  case Expr::Kind::Unary: {
    auto *u = llvm::cast<UnaryExpr>(e);
    return std::string(u->op == UnaryOp::Neg ? "(neg " : "(pos ") +
           sexpr(u->operand.get()) + ")";
  }
  case Expr::Kind::List: {
    std::string out = "(list";
    for (const ExprPtr &x : llvm::cast<ListExpr>(e)->elements)
      out += " " + sexpr(x.get());
    return out + ")";
  }
  case Expr::Kind::Comprehension: {
    auto *c = llvm::cast<ComprehensionExpr>(e);
    std::string vars;
    for (const Ident &v : c->vars)
      vars += (vars.empty() ? "" : ",") + v.name;
    return "(comp " + sexpr(c->element.get()) + " " + vars + " " +
           sexpr(c->source.get()) + ")";
  }
  case Expr::Kind::Dict: {
    std::string out = "(dict";
    for (const DictExpr::Entry &en : llvm::cast<DictExpr>(e)->entries)
      out += " \"" + en.key.name + "\":" + sexpr(en.value.get());
    return out + ")";
  }
  case Expr::Kind::Subscript:
    return "(subscript " + sexpr(llvm::cast<SubscriptExpr>(e)->base.get()) +
           ")";
  }
  return "?";
}

/// Parses `return <expr>` inside a forward and keeps the fixture alive.
struct ExprParse {
  explicit ExprParse(const std::string &expr)
      : f("layer L():\n    def forward(g: Graph):\n        return " + expr +
          "\n") {
    module = f.parse();
  }
  const Expr *expr() const {
    if (module->definitions.size() != 1 ||
        module->definitions[0]->forwards.size() != 1)
      return nullptr;
    const StmtList &body = module->definitions[0]->forwards[0].body;
    if (body.size() != 1)
      return nullptr;
    auto *ret = llvm::dyn_cast<ReturnStmt>(body[0].get());
    return ret ? ret->value.get() : nullptr;
  }
  SourceFixture f;
  std::unique_ptr<Module> module;
};

std::string parseExpr(const std::string &expr) {
  ExprParse p(expr);
  EXPECT_EQ(p.f.numErrors(), 0u) << p.f.messages();
  return sexpr(p.expr());
}

TEST(ParserTest, Precedence) {
  EXPECT_EQ(parseExpr("a + b * c"), "(+ a (* b c))");
  EXPECT_EQ(parseExpr("a * b + c"), "(+ (* a b) c)");
  EXPECT_EQ(parseExpr("a @ b + c"), "(+ (@ a b) c)");
  EXPECT_EQ(parseExpr("a + b @ c"), "(+ a (@ b c))");
  EXPECT_EQ(parseExpr("(a + b) * c"), "(* (+ a b) c)");
  EXPECT_EQ(parseExpr("a - b / c // d"), "(- a (// (/ b c) d))");
  // Comparisons bind loosest.
  EXPECT_EQ(parseExpr("a + b < c * d"), "(< (+ a b) (* c d))");
  EXPECT_EQ(parseExpr("-a >= b ** 2"), "(>= (neg a) (** b 2))");
  EXPECT_EQ(parseExpr("(a == b) * (c != d)"), "(* (== a b) (!= c d))");
  EXPECT_EQ(parseExpr("where(x <= 0, 0, x)"), "(call where (<= x 0) 0 x)");
}

TEST(ParserTest, ComparisonsDoNotChain) {
  ExprParse p("a < b > c");
  EXPECT_EQ(p.f.numErrors(), 1u);
  EXPECT_NE(p.f.messages().find("comparisons do not chain: write '(a < b) * "
                                "(b > c)' for both"),
            std::string::npos)
      << p.f.messages();
}

TEST(ParserTest, UnaryAndPower) {
  // ** binds tighter than unary minus on its left: -x ** 2 == -(x ** 2).
  EXPECT_EQ(parseExpr("-x ** 2"), "(neg (** x 2))");
  // ... but its right operand may be a unary expression.
  EXPECT_EQ(parseExpr("2 ** -x"), "(** 2 (neg x))");
  // Unary minus binds tighter than * and +.
  EXPECT_EQ(parseExpr("-a * b"), "(* (neg a) b)");
  EXPECT_EQ(parseExpr("a - -b"), "(- a (neg b))");
  EXPECT_EQ(parseExpr("+-a"), "(pos (neg a))");
  // ** is right-associative.
  EXPECT_EQ(parseExpr("a ** b ** c"), "(** a (** b c))");
  // A postfix binds tighter than **: x.h ** 2, f(x) ** 2.
  EXPECT_EQ(parseExpr("u.h ** 2"), "(** (. u h) 2)");
  EXPECT_EQ(parseExpr("f(x) ** 2 * 3"), "(* (** (call f x) 2) 3)");
}

TEST(ParserTest, LeftAssociativity) {
  EXPECT_EQ(parseExpr("a - b - c"), "(- (- a b) c)");
  EXPECT_EQ(parseExpr("a - b + c"), "(+ (- a b) c)");
  EXPECT_EQ(parseExpr("a / b / c"), "(/ (/ a b) c)");
  EXPECT_EQ(parseExpr("a / b * c @ d // e"), "(// (@ (* (/ a b) c) d) e)");
  EXPECT_EQ(parseExpr("a - (b - c)"), "(- a (- b c))");
}

TEST(ParserTest, Postfix) {
  EXPECT_EQ(parseExpr("g.sum(x)"), "(call (. g sum) x)");
  EXPECT_EQ(parseExpr("a.b.c"), "(. (. a b) c)");
  EXPECT_EQ(parseExpr("f(x)(y)"), "(call (call f x) y)");
  EXPECT_EQ(parseExpr("g.relation(\"r\").n_nodes"),
            "(. (call (. g relation) \"r\") n_nodes)");
  EXPECT_EQ(parseExpr("x[0, 1:2]"), "(subscript x)");
  EXPECT_EQ(parseExpr("f()"), "(call f)");
}

TEST(ParserTest, Literals) {
  EXPECT_EQ(parseExpr("1 + 2.5 + 1e-3"), "(+ (+ 1 2.5) 1e-3)");
  EXPECT_EQ(parseExpr("True"), "True");
  EXPECT_EQ(parseExpr("False"), "False");
  EXPECT_EQ(parseExpr("'s'"), "\"s\"");
  ExprParse p("2.50");
  auto *f = llvm::dyn_cast_or_null<FloatExpr>(p.expr());
  ASSERT_NE(f, nullptr);
  EXPECT_DOUBLE_EQ(f->value, 2.5);
  EXPECT_EQ(f->spelling, "2.50");
}

TEST(ParserTest, KeywordArguments) {
  EXPECT_EQ(parseExpr("sum(x, -1, keepdims=True)"),
            "(call sum x (neg 1) keepdims=True)");
  EXPECT_EQ(parseExpr("max(x, axis=0,)"), "(call max x axis=0)");
  ExprParse p("leaky_relu(x, slope=0.2)");
  auto *call = llvm::dyn_cast_or_null<CallExpr>(p.expr());
  ASSERT_NE(call, nullptr);
  ASSERT_EQ(call->args.size(), 2u);
  EXPECT_TRUE(call->args[0].keyword.name.empty());
  EXPECT_EQ(call->args[1].keyword.name, "slope");
  EXPECT_EQ(p.f.pos(call->args[1].keyword.loc), "3:30");
  EXPECT_EQ(p.f.pos(call->args[1].value->getLoc()), "3:36");
}

TEST(ParserTest, ListsComprehensionsAndDicts) {
  EXPECT_EQ(parseExpr("[N, heads, -1]"), "(list N heads (neg 1))");
  EXPECT_EQ(parseExpr("[a, b,]"), "(list a b)");
  EXPECT_EQ(parseExpr("[]"), "(list)");
  EXPECT_EQ(parseExpr("[u.h for u in v.innbs]"),
            "(comp (. u h) u (. v innbs))");
  EXPECT_EQ(parseExpr("[u.h * e.w for u, e in v.inedges]"),
            "(comp (* (. u h) (. e w)) u,e (. v inedges))");
  EXPECT_EQ(parseExpr("[c / g.sum(edge) for c in edge]"),
            "(comp (/ c (call (. g sum) edge)) c edge)");
  EXPECT_EQ(parseExpr("{\"h\": x, 'e': y + 1,}"),
            "(dict \"h\":x \"e\":(+ y 1))");
  EXPECT_EQ(parseExpr("{}"), "(dict)");
}

TEST(ParserTest, ExpressionLocations) {
  //                  col: 16  20  24  28  32  36  40  44
  //                       v   v   v   v   v   v   v   v
  ExprParse p("a + -b ** 2 * f(x).h");
  // return is at 3:9, the expression starts at 3:16.
  auto *add = llvm::dyn_cast_or_null<BinaryExpr>(p.expr());
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(sexpr(add), "(+ a (* (neg (** b 2)) (. (call f x) h)))");
  // A binary node sits at its left operand; the operator has its own loc.
  EXPECT_EQ(p.f.pos(add->getLoc()), "3:16");
  EXPECT_EQ(p.f.pos(add->opLoc), "3:18");
  EXPECT_EQ(p.f.pos(add->lhs->getLoc()), "3:16");
  auto *mul = llvm::cast<BinaryExpr>(add->rhs.get());
  EXPECT_EQ(p.f.pos(mul->getLoc()), "3:20");
  EXPECT_EQ(p.f.pos(mul->opLoc), "3:28");
  // A unary node sits at its operator.
  auto *neg = llvm::cast<UnaryExpr>(mul->lhs.get());
  EXPECT_EQ(p.f.pos(neg->getLoc()), "3:20");
  auto *pow = llvm::cast<BinaryExpr>(neg->operand.get());
  EXPECT_EQ(p.f.pos(pow->getLoc()), "3:21");
  EXPECT_EQ(p.f.pos(pow->opLoc), "3:23");
  EXPECT_EQ(p.f.pos(pow->rhs->getLoc()), "3:26");
  // Attribute and call nodes sit at their base; the attribute name and the
  // arguments have their own locations.
  auto *attr = llvm::cast<AttrExpr>(mul->rhs.get());
  EXPECT_EQ(p.f.pos(attr->getLoc()), "3:30");
  EXPECT_EQ(p.f.pos(attr->attr.loc), "3:35");
  auto *call = llvm::cast<CallExpr>(attr->base.get());
  EXPECT_EQ(p.f.pos(call->getLoc()), "3:30");
  EXPECT_EQ(p.f.pos(call->args[0].value->getLoc()), "3:32");
}

TEST(ParserTest, BracketLocations) {
  ExprParse p("[u.h for u, e in v.inedges]");
  auto *comp = llvm::dyn_cast_or_null<ComprehensionExpr>(p.expr());
  ASSERT_NE(comp, nullptr);
  EXPECT_EQ(p.f.pos(comp->getLoc()), "3:16");
  EXPECT_EQ(p.f.pos(comp->element->getLoc()), "3:17");
  ASSERT_EQ(comp->vars.size(), 2u);
  EXPECT_EQ(p.f.pos(comp->vars[0].loc), "3:25");
  EXPECT_EQ(p.f.pos(comp->vars[1].loc), "3:28");
  EXPECT_EQ(p.f.pos(comp->source->getLoc()), "3:33");

  ExprParse d("{\"h\": x}");
  auto *dict = llvm::dyn_cast_or_null<DictExpr>(d.expr());
  ASSERT_NE(dict, nullptr);
  EXPECT_EQ(d.f.pos(dict->getLoc()), "3:16");
  EXPECT_EQ(d.f.pos(dict->entries[0].key.loc), "3:17");
  EXPECT_EQ(d.f.pos(dict->entries[0].value->getLoc()), "3:22");

  // A subscript node sits at its '[' (where the error about it points).
  ExprParse s("xs[0]");
  ASSERT_NE(s.expr(), nullptr);
  EXPECT_EQ(s.f.pos(s.expr()->getLoc()), "3:18");

  // A parenthesised expression is the inner node, at its own first token.
  ExprParse q("(a)");
  ASSERT_NE(q.expr(), nullptr);
  EXPECT_EQ(q.f.pos(q.expr()->getLoc()), "3:17");
}

TEST(ParserTest, Definitions) {
  SourceFixture f(
      "layer GAT(in_dim: int, heads: int = 8, slope: float = 0.2,):\n"
      "    param W: f32[in_dim, heads * 8] = glorot\n"
      "    param b: f64 = normal(std=0.1)\n"
      "    param s: f32[4]\n"
      "    sub = Other(in_dim, k=2)\n"
      "    pass\n"
      "    def forward(g: Block, x: f32[N_src, in_dim]) -> f32:\n"
      "        return x\n"
      "\n"
      "model M():\n"
      "    def forward(g: HeteroGraph, n: int, p: float,\n"
      "                b: BatchedGraph, m: bool[E],):\n"
      "        return n\n");
  std::unique_ptr<Module> m = f.parse();
  ASSERT_EQ(f.numErrors(), 0u) << f.messages();
  ASSERT_EQ(m->definitions.size(), 2u);
  const Definition &gat = *m->definitions[0];
  EXPECT_FALSE(gat.isModel);
  EXPECT_EQ(gat.name.name, "GAT");
  EXPECT_EQ(f.pos(gat.loc), "1:1");
  EXPECT_EQ(f.pos(gat.name.loc), "1:7");

  ASSERT_EQ(gat.hyperParams.size(), 3u);
  EXPECT_EQ(gat.hyperParams[0].name.name, "in_dim");
  EXPECT_FALSE(gat.hyperParams[0].isFloat);
  EXPECT_EQ(gat.hyperParams[0].defaultValue, nullptr);
  EXPECT_EQ(f.pos(gat.hyperParams[0].name.loc), "1:11");
  EXPECT_EQ(f.pos(gat.hyperParams[0].typeLoc), "1:19");
  EXPECT_EQ(sexpr(gat.hyperParams[1].defaultValue.get()), "8");
  EXPECT_TRUE(gat.hyperParams[2].isFloat);
  EXPECT_EQ(sexpr(gat.hyperParams[2].defaultValue.get()), "0.2");
  EXPECT_EQ(f.pos(gat.hyperParams[2].defaultValue->getLoc()), "1:55");

  ASSERT_EQ(gat.params.size(), 3u);
  const ParamDecl &w = gat.params[0];
  EXPECT_EQ(w.name.name, "W");
  EXPECT_EQ(f.pos(w.name.loc), "2:11");
  EXPECT_EQ(w.type.kind, TypeExpr::Kind::Tensor);
  EXPECT_EQ(w.type.elemType, ElemType::F32);
  EXPECT_EQ(f.pos(w.type.loc), "2:14");
  ASSERT_EQ(w.type.dims.size(), 2u);
  EXPECT_EQ(sexpr(w.type.dims[0].get()), "in_dim");
  EXPECT_EQ(sexpr(w.type.dims[1].get()), "(* heads 8)");
  EXPECT_EQ(w.init.name, "glorot");
  EXPECT_EQ(f.pos(w.init.loc), "2:39");
  EXPECT_TRUE(w.initArgs.empty());
  const ParamDecl &b = gat.params[1];
  EXPECT_EQ(b.type.elemType, ElemType::F64);
  EXPECT_TRUE(b.type.dims.empty());
  EXPECT_EQ(b.init.name, "normal");
  EXPECT_EQ(sexprArgs(b.initArgs), " std=0.1");
  EXPECT_TRUE(gat.params[2].init.name.empty());

  ASSERT_EQ(gat.instances.size(), 1u);
  EXPECT_EQ(gat.instances[0].name.name, "sub");
  EXPECT_EQ(gat.instances[0].callee.name, "Other");
  EXPECT_EQ(f.pos(gat.instances[0].callee.loc), "5:11");
  EXPECT_EQ(sexprArgs(gat.instances[0].args), " in_dim k=2");

  ASSERT_EQ(gat.forwards.size(), 1u);
  const ForwardDef &fwd = gat.forwards[0];
  EXPECT_EQ(f.pos(fwd.loc), "7:5");
  EXPECT_EQ(fwd.name.name, "forward");
  EXPECT_EQ(f.pos(fwd.name.loc), "7:9");
  ASSERT_EQ(fwd.args.size(), 2u);
  EXPECT_EQ(fwd.args[0].type.kind, TypeExpr::Kind::Block);
  EXPECT_EQ(f.pos(fwd.args[1].name.loc), "7:27");
  EXPECT_EQ(f.pos(fwd.args[1].type.loc), "7:30");
  EXPECT_EQ(sexpr(fwd.args[1].type.dims[0].get()), "N_src");
  ASSERT_TRUE(fwd.resultType.has_value());
  EXPECT_EQ(fwd.resultType->kind, TypeExpr::Kind::Tensor);
  EXPECT_TRUE(fwd.resultType->dims.empty());
  EXPECT_EQ(f.pos(fwd.resultType->loc), "7:53");

  const Definition &model = *m->definitions[1];
  EXPECT_TRUE(model.isModel);
  EXPECT_EQ(f.pos(model.loc), "10:1");
  EXPECT_TRUE(model.hyperParams.empty());
  const ForwardDef &mf = model.forwards[0];
  EXPECT_FALSE(mf.resultType.has_value());
  ASSERT_EQ(mf.args.size(), 5u);
  EXPECT_EQ(mf.args[0].type.kind, TypeExpr::Kind::HeteroGraph);
  EXPECT_EQ(mf.args[1].type.kind, TypeExpr::Kind::Int);
  EXPECT_EQ(mf.args[2].type.kind, TypeExpr::Kind::Float);
  EXPECT_EQ(mf.args[3].type.kind, TypeExpr::Kind::BatchedGraph);
  EXPECT_EQ(f.pos(mf.args[3].name.loc), "12:17");
  EXPECT_EQ(mf.args[4].type.elemType, ElemType::Bool);
  EXPECT_EQ(sexpr(mf.args[4].type.dims[0].get()), "E");
}

TEST(ParserTest, Statements) {
  SourceFixture f("layer L():\n"
                  "    def forward(g: Graph, x: f32[N, 4]):\n"
                  "        h = x\n"
                  "        g.set_vertex_attr({\"h\": h})\n"
                  "        for v in g.dst_vertex:\n"
                  "            v.h = g.sum([u.h for u in v.innbs])\n"
                  "            pass\n"
                  "        for _ in range(3):\n"
                  "            h = relu(h)\n"
                  "        return h\n");
  std::unique_ptr<Module> m = f.parse();
  ASSERT_EQ(f.numErrors(), 0u) << f.messages();
  const StmtList &body = m->definitions[0]->forwards[0].body;
  ASSERT_EQ(body.size(), 5u);

  auto *assign = llvm::dyn_cast<AssignStmt>(body[0].get());
  ASSERT_NE(assign, nullptr);
  EXPECT_EQ(f.pos(assign->getLoc()), "3:9");
  EXPECT_EQ(assign->target.name, "h");
  EXPECT_EQ(f.pos(assign->target.loc), "3:9");
  EXPECT_EQ(f.pos(assign->value->getLoc()), "3:13");

  auto *es = llvm::dyn_cast<ExprStmt>(body[1].get());
  ASSERT_NE(es, nullptr);
  EXPECT_EQ(f.pos(es->getLoc()), "4:9");
  EXPECT_EQ(sexpr(es->expr.get()),
            "(call (. g set_vertex_attr) (dict \"h\":h))");

  auto *loop = llvm::dyn_cast<VertexLoopStmt>(body[2].get());
  ASSERT_NE(loop, nullptr);
  EXPECT_EQ(f.pos(loop->getLoc()), "5:9");
  EXPECT_EQ(loop->var.name, "v");
  EXPECT_EQ(f.pos(loop->var.loc), "5:13");
  EXPECT_EQ(sexpr(loop->vertexSet.get()), "(. g dst_vertex)");
  ASSERT_EQ(loop->body.size(), 2u);
  auto *attrAssign = llvm::dyn_cast<AttrAssignStmt>(loop->body[0].get());
  ASSERT_NE(attrAssign, nullptr);
  EXPECT_EQ(f.pos(attrAssign->getLoc()), "6:13");
  EXPECT_EQ(attrAssign->object.name, "v");
  EXPECT_EQ(attrAssign->attr.name, "h");
  EXPECT_EQ(f.pos(attrAssign->attr.loc), "6:15");
  EXPECT_EQ(f.pos(attrAssign->value->getLoc()), "6:19");
  auto *pass = llvm::dyn_cast<PassStmt>(loop->body[1].get());
  ASSERT_NE(pass, nullptr);
  EXPECT_EQ(f.pos(pass->getLoc()), "7:13");

  auto *range = llvm::dyn_cast<RangeLoopStmt>(body[3].get());
  ASSERT_NE(range, nullptr);
  EXPECT_EQ(f.pos(range->getLoc()), "8:9");
  EXPECT_EQ(range->var.name, "_");
  EXPECT_EQ(sexpr(range->count.get()), "3");
  EXPECT_EQ(f.pos(range->count->getLoc()), "8:24");
  ASSERT_EQ(range->body.size(), 1u);

  auto *ret = llvm::dyn_cast<ReturnStmt>(body[4].get());
  ASSERT_NE(ret, nullptr);
  EXPECT_EQ(f.pos(ret->getLoc()), "10:9");
  EXPECT_EQ(f.pos(ret->value->getLoc()), "10:16");
}

TEST(ParserTest, SyntaxErrorsRecoverPerLine) {
  // Three independent syntax errors: each is reported once, and the parser
  // keeps the statements and definitions around them.
  SourceFixture f("layer L():\n"
                  "    def forward(g: Graph, x: f32[N, 4]):\n"
                  "        a = x +\n"
                  "        b = relu(x)\n"
                  "        c = f(k=1, x)\n"
                  "        return b\n"
                  "layer M(d):\n"
                  "    pass\n"
                  "model K():\n"
                  "    def forward(g: Graph):\n"
                  "        return (1, 2)\n");
  std::unique_ptr<Module> m = f.parse();
  const std::string &msg = f.messages();
  EXPECT_EQ(f.numErrors(), 4u) << msg;
  EXPECT_NE(msg.find("3:16: error: expected an expression, found end of line"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("5:20: error: positional argument follows keyword "
                     "argument"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("7:10: error: hyper-parameter 'd' needs a type"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("11:18: error: tuples are not supported"),
            std::string::npos)
      << msg;
  // L keeps its two good statements; M is dropped; K is kept (empty body).
  ASSERT_EQ(m->definitions.size(), 2u);
  EXPECT_EQ(m->definitions[0]->name.name, "L");
  const StmtList &body = m->definitions[0]->forwards[0].body;
  ASSERT_EQ(body.size(), 2u);
  EXPECT_EQ(f.pos(body[0]->getLoc()), "4:9");
  EXPECT_EQ(f.pos(body[1]->getLoc()), "6:9");
  EXPECT_EQ(m->definitions[1]->name.name, "K");
}

TEST(ParserTest, ExpressionDepthLimit) {
  // 255 unary minus signs make a tree of height 256 and parse; 256 exceed
  // the limit, reported once (at the outermost operator) even for much
  // deeper input.
  EXPECT_EQ(ExprParse(std::string(255, '-') + "x").f.numErrors(), 0u);
  ExprParse deep(std::string(256, '-') + "x");
  EXPECT_EQ(deep.f.numErrors(), 1u);
  EXPECT_NE(deep.f.messages().find("3:16: error: expression is nested more "
                                   "than 256 levels deep"),
            std::string::npos)
      << deep.f.messages();
  ExprParse deeper(std::string(4000, '-') + "x");
  EXPECT_EQ(deeper.f.numErrors(), 1u);
}

TEST(ParserTest, FlatChainsAreBounded) {
  // `x + x + ...` is built left-deep by a loop, so it is bounded by the
  // height of the tree (256), not by recursion: 255 additions give a tree of
  // height 256 and parse; 256 additions give 257 and are an error at the
  // start of the chain. Postfix chains are bounded the same way.
  auto chain = [](const char *link, int n) {
    std::string s = "x";
    for (int i = 0; i < n; ++i)
      s += link;
    return s;
  };
  ExprParse ok(chain(" + x", 255));
  EXPECT_EQ(ok.f.numErrors(), 0u) << ok.f.messages();
  ASSERT_NE(ok.expr(), nullptr);
  EXPECT_EQ(ok.expr()->height, 256u);
  for (const char *link : {" + x", ".a", "(1)"}) {
    ExprParse bad(chain(link, 256));
    EXPECT_EQ(bad.f.numErrors(), 1u) << link;
    EXPECT_NE(bad.f.messages().find("test.gnn:3:16: error: expression is "
                                    "nested more than"),
              std::string::npos)
        << bad.f.messages();
  }
  // 1000 links: still one error.
  EXPECT_EQ(ExprParse(chain(".a", 1000)).f.numErrors(), 1u);
}

} // namespace
