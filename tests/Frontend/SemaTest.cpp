//===- SemaTest.cpp - Unit tests for semantic analysis --------------------===//
//
// Part of gnnc. Each test checks a small module and reads the types that
// semantic analysis attached to the expressions. Expected shapes are built
// from Dim::symbol/Dim::constant by hand.
//
//===----------------------------------------------------------------------===//

#include "FrontendTestUtil.h"

#include "gtest/gtest.h"

#include <string>
#include <vector>

using namespace gnnc;
using gnnc::test::SourceFixture;

namespace {

Dim sym(const char *name) { return Dim::symbol(name); }
Dim cst(int64_t v) { return Dim::constant(v); }
Dim mul(const Dim &a, const Dim &b) { return *a.mul(b); }
Dim add(const Dim &a, const Dim &b) { return *a.add(b); }
using Shape = std::vector<Dim>;

std::string shapeStr(const Shape &shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    out += (i ? ", " : "") + shape[i].str();
  return out + "]";
}

/// Checks a module; keeps the fixture (and so the AST) alive.
struct Checked {
  explicit Checked(const std::string &src, unsigned maxErrors = 20)
      : f(src, maxErrors) {
    module = f.check();
  }

  const Definition *def(llvm::StringRef name) const {
    if (!module)
      return nullptr;
    for (const auto &d : module->definitions)
      if (d->name.name == name)
        return d.get();
    return nullptr;
  }

  /// The `occurrence`-th statement `target = value` (searching loop bodies
  /// too) in the forward of `defName`; returns the value expression.
  const Expr *assigned(llvm::StringRef defName, llvm::StringRef target,
                       unsigned occurrence = 0) const {
    const Definition *d = def(defName);
    if (!d || d->forwards.empty())
      return nullptr;
    unsigned seen = 0;
    return find(d->forwards[0].body, target, occurrence, seen);
  }

  /// The value of the first `v.attr = value` in the forward of `defName`.
  const Expr *attrAssigned(llvm::StringRef defName,
                           llvm::StringRef attr) const {
    const Definition *d = def(defName);
    if (!d || d->forwards.empty())
      return nullptr;
    return findAttr(d->forwards[0].body, attr);
  }

  static const Expr *find(const StmtList &body, llvm::StringRef target,
                          unsigned occurrence, unsigned &seen) {
    for (const StmtPtr &s : body) {
      if (auto *a = llvm::dyn_cast<AssignStmt>(s.get()))
        if (a->target.name == target && seen++ == occurrence)
          return a->value.get();
      const StmtList *inner = nullptr;
      if (auto *l = llvm::dyn_cast<VertexLoopStmt>(s.get()))
        inner = &l->body;
      if (auto *l = llvm::dyn_cast<RangeLoopStmt>(s.get()))
        inner = &l->body;
      if (inner)
        if (const Expr *e = find(*inner, target, occurrence, seen))
          return e;
    }
    return nullptr;
  }

  static const Expr *findAttr(const StmtList &body, llvm::StringRef attr) {
    for (const StmtPtr &s : body) {
      if (auto *a = llvm::dyn_cast<AttrAssignStmt>(s.get()))
        if (a->attr.name == attr)
          return a->value.get();
      if (auto *l = llvm::dyn_cast<VertexLoopStmt>(s.get()))
        if (const Expr *e = findAttr(l->body, attr))
          return e;
    }
    return nullptr;
  }

  /// Type of an expression; an <error> type when there is none.
  static ValueType typeOf(const Expr *e) {
    if (!e || !e->type)
      return ValueType::error();
    return *e->type;
  }

  ValueType local(llvm::StringRef defName, llvm::StringRef target,
                  unsigned occurrence = 0) const {
    return typeOf(assigned(defName, target, occurrence));
  }

  SourceFixture f;
  std::unique_ptr<Module> module;
};

#define EXPECT_CLEAN(c)                                                        \
  do {                                                                         \
    ASSERT_NE((c).module, nullptr) << (c).f.messages();                        \
    EXPECT_TRUE((c).f.checked) << (c).f.messages();                            \
    EXPECT_EQ((c).f.numErrors(), 0u) << (c).f.messages();                     \
  } while (0)

#define EXPECT_TENSOR(t, elemType, shapeV, dom)                                \
  do {                                                                         \
    ValueType vt_ = (t);                                                       \
    ASSERT_TRUE(vt_.isTensor()) << vt_.str();                                  \
    EXPECT_EQ(vt_.elem, (elemType)) << vt_.str();                              \
    EXPECT_EQ(vt_.shape, Shape(shapeV))                                        \
        << vt_.str() << " vs " << shapeStr(Shape(shapeV));                     \
    EXPECT_EQ(vt_.domain, (dom)) << vt_.str();                                 \
  } while (0)

const Domain Dense = Domain::Dense, Src = Domain::Src, Dst = Domain::Dst,
             Edge = Domain::Edge;

TEST(SemaTest, Broadcasting) {
  Checked c(R"(layer L(d: int):
    param b: f32[d]
    param r: f32[1, d]
    def forward(g: Graph, x: f32[N, d], col: f32[N, 1], y: f32[N, 1, d],
                k: i32[N], z: f64[d]) -> f32[N, d]:
        s1 = x + b
        s2 = col * r
        s3 = y + x
        s4 = 2.0 * x
        s5 = b - 1
        s6 = col / 2
        s7 = k + 1
        s8 = z * 0.5
        s9 = x - col
        return x
)");
  EXPECT_CLEAN(c);
  Dim N = sym("N"), d = sym("d");
  // [N, d] + [d] -> [N, d]
  EXPECT_TENSOR(c.local("L", "s1"), ElemType::F32, Shape({N, d}), Dense);
  // [N, 1] * [1, d] -> [N, d]
  EXPECT_TENSOR(c.local("L", "s2"), ElemType::F32, Shape({N, d}), Dense);
  // [N, 1, d] + [N, d]: aligned from the right, 1 stretches to N.
  EXPECT_TENSOR(c.local("L", "s3"), ElemType::F32, Shape({N, N, d}), Dense);
  // Python numbers are weak: they take the tensor's element type.
  EXPECT_TENSOR(c.local("L", "s4"), ElemType::F32, Shape({N, d}), Dense);
  EXPECT_TENSOR(c.local("L", "s5"), ElemType::F32, Shape({d}), Dense);
  EXPECT_TENSOR(c.local("L", "s6"), ElemType::F32, Shape({N, cst(1)}), Dense);
  EXPECT_TENSOR(c.local("L", "s7"), ElemType::I32, Shape({N}), Dense);
  EXPECT_TENSOR(c.local("L", "s8"), ElemType::F64, Shape({d}), Dense);
  // [N, d] - [N, 1] -> [N, d]
  EXPECT_TENSOR(c.local("L", "s9"), ElemType::F32, Shape({N, d}), Dense);
}

TEST(SemaTest, BroadcastMismatch) {
  Checked c(R"(layer L(d: int, e: int):
    def forward(g: Graph, x: f32[N, d], y: f32[N, e]) -> f32[N, d]:
        s = x + y
        return x
)");
  EXPECT_EQ(c.f.numErrors(), 1u);
  EXPECT_NE(c.f.messages().find("test.gnn:3:15: error: shapes f32[N, d] and "
                                "f32[N, e] do not broadcast: dimension d vs e"),
            std::string::npos)
      << c.f.messages();
}

TEST(SemaTest, CompileTimeIntegers) {
  Checked c(R"(layer L(d: int, heads: int = 4):
    def forward(g: Graph, x: f32[N, d * heads + 1]) -> f32[N, heads * d + 1]:
        s = d * 2 + 1
        t = 7 // 2
        u = -7 // 2
        w = heads * d - d * heads
        return x
)");
  EXPECT_CLEAN(c);
  Dim d = sym("d");
  // The values are the unassigned expressions' types (a local stores a
  // tensor and forgets the constant).
  ValueType s = Checked::typeOf(c.assigned("L", "s"));
  ASSERT_TRUE(s.isIntConstant()) << s.str();
  EXPECT_EQ(*s.intValue, add(add(d, d), cst(1)));
  EXPECT_EQ(Checked::typeOf(c.assigned("L", "t")).intValue, cst(3));
  // Floor division rounds towards minus infinity, as in Python.
  EXPECT_EQ(Checked::typeOf(c.assigned("L", "u")).intValue, cst(-4));
  EXPECT_EQ(Checked::typeOf(c.assigned("L", "w")).intValue, cst(0));
  // The result type heads*d + 1 is the argument's d*heads + 1.
  const ForwardDef &fwd = c.def("L")->forwards[0];
  ASSERT_TRUE(fwd.resolvedResult.has_value());
  EXPECT_EQ(fwd.resolvedResult->shape,
            Shape({sym("N"), add(mul(sym("heads"), d), cst(1))}));
}

TEST(SemaTest, DomainsInDestinationLoop) {
  Checked c(R"(layer L(d: int):
    param W: f32[d, d]
    def forward(g: Graph, x: f32[N, d]) -> f32[N, d]:
        g.set_vertex_attr({"h": x})
        for v in g.dst_vertex:
            a = v.h
            b = [u.h for u in v.innbs]
            e = [u.h - v.h for u in v.innbs]
            s = g.sum(b)
            t = v.h @ W
            w = g.softmax(b)
            p = g.dot(v.h, v.h)
            v.out = s + t * 2.0
        return [v.out for v in g.dst_vertex]
)");
  EXPECT_CLEAN(c);
  Dim d = sym("d");
  // v.h is a per-destination row.
  EXPECT_TENSOR(c.local("L", "a"), ElemType::F32, Shape({d}), Dst);
  // A comprehension over in-neighbours is a per-edge list over in-edges; its
  // element u.h is per-source.
  ValueType b = c.local("L", "b");
  EXPECT_TENSOR(b, ElemType::F32, Shape({d}), Edge);
  EXPECT_EQ(b.direction, Direction::In);
  auto *comp = llvm::cast<ComprehensionExpr>(c.assigned("L", "b"));
  EXPECT_TENSOR(Checked::typeOf(comp->element.get()), ElemType::F32, Shape({d}),
                Src);
  // Per-source minus per-destination meet on the edge.
  auto *comp2 = llvm::cast<ComprehensionExpr>(c.assigned("L", "e"));
  EXPECT_TENSOR(Checked::typeOf(comp2->element.get()), ElemType::F32,
                Shape({d}), Edge);
  // Aggregation gives back a per-destination value; softmax keeps the list.
  EXPECT_TENSOR(c.local("L", "s"), ElemType::F32, Shape({d}), Dst);
  EXPECT_TENSOR(c.local("L", "w"), ElemType::F32, Shape({d}), Edge);
  // A per-vertex row times a dense matrix stays per-vertex.
  EXPECT_TENSOR(c.local("L", "t"), ElemType::F32, Shape({d}), Dst);
  // g.dot keeps a trailing axis of 1.
  EXPECT_TENSOR(c.local("L", "p"), ElemType::F32, Shape({cst(1)}), Dst);
  // Collecting v.out gives a dense [N, d].
  const ForwardDef &fwd = c.def("L")->forwards[0];
  auto *ret = llvm::cast<ReturnStmt>(fwd.body.back().get());
  EXPECT_TENSOR(Checked::typeOf(ret->value.get()), ElemType::F32,
                Shape({sym("N"), d}), Dense);
}

TEST(SemaTest, DomainsInSourceLoop) {
  Checked c(R"(layer L(d: int):
    def forward(g: Graph, x: f32[N, d], w: f32[E, 1]) -> f32[N, d]:
        g.set_vertex_attr({"h": x})
        g.set_edge_attr({"w": w})
        for v in g.src_vertex:
            a = v.h
            o = [u.h * e.w for u, e in v.outedges]
            v.m = g.max(o)
        return [v.m for v in g.src_vertex]
)");
  EXPECT_CLEAN(c);
  Dim d = sym("d");
  EXPECT_TENSOR(c.local("L", "a"), ElemType::F32, Shape({d}), Src);
  ValueType o = c.local("L", "o");
  EXPECT_TENSOR(o, ElemType::F32, Shape({d}), Edge);
  EXPECT_EQ(o.direction, Direction::Out);
  // In an out-edge comprehension u is a destination vertex and e.w is
  // per-edge ([1], broadcast against [d]).
  auto *comp = llvm::cast<ComprehensionExpr>(c.assigned("L", "o"));
  auto *prod = llvm::cast<BinaryExpr>(comp->element.get());
  EXPECT_TENSOR(Checked::typeOf(prod->lhs.get()), ElemType::F32, Shape({d}),
                Dst);
  EXPECT_TENSOR(Checked::typeOf(prod->rhs.get()), ElemType::F32,
                Shape({cst(1)}), Edge);
  EXPECT_TENSOR(Checked::typeOf(c.attrAssigned("L", "m")), ElemType::F32,
                Shape({d}), Src);
}

TEST(SemaTest, DomainsOnBlock) {
  Checked c(R"(layer L(d: int):
    def forward(g: Block, x: f32[N_src, d], y: f32[N_dst, d]) -> f32[N_dst, d]:
        g.set_src_attr({"h": x})
        g.set_dst_attr({"s": y})
        deg = g.in_degree()
        odeg = g.out_degree()
        for v in g.dst_vertex:
            v.o = v.s + g.avg([u.h for u in v.innbs])
        return [v.o for v in g.dst_vertex]
)");
  EXPECT_CLEAN(c);
  EXPECT_TENSOR(c.local("L", "deg"), ElemType::F32, Shape({sym("N_dst")}),
                Dense);
  EXPECT_TENSOR(c.local("L", "odeg"), ElemType::F32, Shape({sym("N_src")}),
                Dense);
  EXPECT_TENSOR(Checked::typeOf(c.attrAssigned("L", "o")), ElemType::F32,
                Shape({sym("d")}), Dst);
  const ForwardDef &fwd = c.def("L")->forwards[0];
  auto *ret = llvm::cast<ReturnStmt>(fwd.body.back().get());
  EXPECT_TENSOR(Checked::typeOf(ret->value.get()), ElemType::F32,
                Shape({sym("N_dst"), sym("d")}), Dense);
}

TEST(SemaTest, GraphSizesOnGraphAreOneSymbol) {
  // On a Graph, N_src and N_dst are N.
  Checked c(R"(layer L(d: int):
    def forward(g: Graph, x: f32[N_src, d]) -> f32[N_dst, d]:
        deg = g.out_degree()
        return x + reshape(deg, [N, 1])
)");
  EXPECT_CLEAN(c);
  EXPECT_TENSOR(c.local("L", "deg"), ElemType::F32, Shape({sym("N")}), Dense);
}

TEST(SemaTest, PolynomialDimensionEquality) {
  Checked c(R"(layer L(d: int, heads: int, out_dim: int):
    param W: f32[d, heads * out_dim]
    def forward(g: Graph, x: f32[N, d]) -> f32[N, out_dim * heads]:
        h = x @ W
        r = reshape(h, [N, out_dim, heads])
        return h
)");
  EXPECT_CLEAN(c);
  Dim ho = mul(sym("heads"), sym("out_dim"));
  EXPECT_TENSOR(c.local("L", "h"), ElemType::F32, Shape({sym("N"), ho}),
                Dense);
  EXPECT_EQ(ho, mul(sym("out_dim"), sym("heads")));

  // A genuinely different dimension is still an error.
  Checked bad(R"(layer L(d: int, heads: int, out_dim: int):
    param W: f32[d, heads * out_dim]
    def forward(g: Graph, x: f32[N, d]) -> f32[N, out_dim + heads]:
        return x @ W
)");
  EXPECT_EQ(bad.f.numErrors(), 1u);
  EXPECT_NE(bad.f.messages().find(
                "4:16: error: 'forward' returns f32[N, heads*out_dim] but is "
                "declared to return f32[N, heads + out_dim]"),
            std::string::npos)
      << bad.f.messages();
}

TEST(SemaTest, ReshapeInfersMinusOne) {
  Checked c(R"(layer L(d: int, heads: int, out_dim: int):
    param W: f32[d, heads * out_dim]
    def forward(g: Graph, x: f32[N, d]) -> f32[N, d]:
        h = x @ W
        r1 = reshape(h, [N, heads, -1])
        r2 = reshape(h, [-1, out_dim])
        r3 = reshape(h, [-1])
        r4 = reshape(x, [N, d, 1])
        return x
)");
  EXPECT_CLEAN(c);
  Dim N = sym("N"), heads = sym("heads"), out = sym("out_dim");
  EXPECT_TENSOR(c.local("L", "r1"), ElemType::F32, Shape({N, heads, out}),
                Dense);
  EXPECT_TENSOR(c.local("L", "r2"), ElemType::F32, Shape({mul(N, heads), out}),
                Dense);
  EXPECT_TENSOR(c.local("L", "r3"), ElemType::F32,
                Shape({mul(mul(out, N), heads)}), Dense);
  EXPECT_TENSOR(c.local("L", "r4"), ElemType::F32, Shape({N, sym("d"), cst(1)}),
                Dense);

  Checked bad(R"(layer L(d: int, heads: int):
    def forward(g: Graph, x: f32[N, d]) -> f32[N, d]:
        r = reshape(x, [N, heads, -1])
        return x
)");
  EXPECT_EQ(bad.f.numErrors(), 1u);
  EXPECT_NE(bad.f.messages().find("3:13: error: 'reshape' cannot infer the -1 "
                                  "dimension of f32[N, d]"),
            std::string::npos)
      << bad.f.messages();
}

TEST(SemaTest, BuiltinShapes) {
  Checked c(R"(layer L(d: int):
    def forward(g: BatchedGraph, x: f32[N, d]) -> f32[B, 2 * d]:
        a = sum(x, -1, keepdims=True)
        b = mean(x, 0)
        m = max(x, axis=1)
        e = max(x, 0.0)
        k = concat([x, x], -1)
        t = transpose(x)
        s = softmax(x)
        p = dropout(x, 0.5)
        r = g.avg_nodes(k)
        return g.sum_nodes(k)
)");
  EXPECT_CLEAN(c);
  Dim N = sym("N"), d = sym("d");
  EXPECT_TENSOR(c.local("L", "a"), ElemType::F32, Shape({N, cst(1)}), Dense);
  EXPECT_TENSOR(c.local("L", "b"), ElemType::F32, Shape({d}), Dense);
  EXPECT_TENSOR(c.local("L", "m"), ElemType::F32, Shape({N}), Dense);
  EXPECT_TENSOR(c.local("L", "e"), ElemType::F32, Shape({N, d}), Dense);
  EXPECT_TENSOR(c.local("L", "k"), ElemType::F32, Shape({N, add(d, d)}),
                Dense);
  EXPECT_TENSOR(c.local("L", "t"), ElemType::F32, Shape({d, N}), Dense);
  EXPECT_TENSOR(c.local("L", "s"), ElemType::F32, Shape({N, d}), Dense);
  EXPECT_TENSOR(c.local("L", "p"), ElemType::F32, Shape({N, d}), Dense);
  EXPECT_TENSOR(c.local("L", "r"), ElemType::F32, Shape({sym("B"), add(d, d)}),
                Dense);
}

TEST(SemaTest, LayerInstantiationSubstitutes) {
  Checked c(R"(layer Lin(i: int, o: int = 2 * i):
    param W: f32[i, o]
    def forward(g: Graph, x: f32[N, i]) -> f32[N, o]:
        return x @ W

layer BlockMean(i: int):
    def forward(g: Block, x: f32[N_src, i]) -> f32[N_dst, i]:
        g.set_src_attr({"h": x})
        for v in g.dst_vertex:
            v.s = g.avg([u.h for u in v.innbs])
        return [v.s for v in g.dst_vertex]

model M(d: int):
    a = Lin(d, 3 * d)
    b = Lin(5)
    c = Lin(o=d + 1, i=d)
    bm = BlockMean(d)
    def forward(g: Graph, x: f32[N, d], y: f32[N, 5]) -> f32[N, d]:
        ha = a(g, x)
        hb = b(g, y)
        hc = c(g, x)
        hd = bm(g, x)
        return hd
)");
  EXPECT_CLEAN(c);
  Dim N = sym("N"), d = sym("d");
  // Lin(d, 3*d): o := 3*d.
  EXPECT_TENSOR(c.local("M", "ha"), ElemType::F32, Shape({N, add(add(d, d), d)}),
                Dense);
  // Lin(5): o defaults to 2*i = 10.
  EXPECT_TENSOR(c.local("M", "hb"), ElemType::F32, Shape({N, cst(10)}), Dense);
  // Keyword arguments in any order: o := d + 1.
  EXPECT_TENSOR(c.local("M", "hc"), ElemType::F32, Shape({N, add(d, cst(1))}),
                Dense);
  // A Block layer applied to a Graph: N_src and N_dst become N.
  EXPECT_TENSOR(c.local("M", "hd"), ElemType::F32, Shape({N, d}), Dense);
}

TEST(SemaTest, LayerCallChecksSubstitutedArguments) {
  Checked c(R"(layer Lin(i: int, o: int):
    param W: f32[i, o]
    def forward(g: Graph, x: f32[N, i]) -> f32[N, o]:
        return x @ W

model M(d: int):
    a = Lin(2 * d, d)
    def forward(g: Graph, x: f32[N, d]) -> f32[N, d]:
        return a(g, x)
)");
  EXPECT_EQ(c.f.numErrors(), 1u) << c.f.messages();
  EXPECT_NE(c.f.messages().find("9:21: error: argument 2 of 'a' has type "
                                "f32[N, d], but 'Lin' expects f32[N, 2*d]"),
            std::string::npos)
      << c.f.messages();
  EXPECT_NE(c.f.messages().find("3:30: note: argument 2 of 'Lin.forward' is "
                                "declared here"),
            std::string::npos)
      << c.f.messages();
}

TEST(SemaTest, ErrorsAreCounted) {
  // Three independent errors in three layers, one of them with a note.
  Checked c(R"(layer A(d: int):
    def forward(g: Graph, x: f32[N, d]) -> f32[N, d]:
        return x + y

layer B(d: int):
    param W: f32[d, d]
    def forward(g: Graph, x: f32[N, d]) -> f32[N, d]:
        W = x
        return x

layer C(d: int):
    def forward(g: Graph, x: f32[N, d]) -> f32[N, d]:
        return x @ x
)");
  ASSERT_NE(c.module, nullptr);
  EXPECT_FALSE(c.f.checked);
  EXPECT_EQ(c.f.numErrors(), 3u) << c.f.messages();
  EXPECT_EQ(c.f.countPrinted("error:"), 3u) << c.f.messages();
  EXPECT_EQ(c.f.countPrinted("note:"), 1u) << c.f.messages();
  const std::string &m = c.f.messages();
  size_t e1 = m.find("3:20: error: use of undefined name 'y'");
  size_t e2 = m.find("8:9: error: cannot assign to parameter 'W'");
  size_t e3 = m.find("13:18: error: '@' inner dimensions differ: d vs N");
  EXPECT_NE(e1, std::string::npos) << m;
  EXPECT_NE(e2, std::string::npos) << m;
  EXPECT_NE(e3, std::string::npos) << m;
  // In source order.
  EXPECT_LT(e1, e2);
  EXPECT_LT(e2, e3);
}

TEST(SemaTest, ErrorLimitStops) {
  std::string src = "layer L(d: int):\n"
                    "    def forward(g: Graph, x: f32[N, d]) -> f32[N, d]:\n";
  for (int i = 0; i < 6; ++i)
    src += "        y" + std::to_string(i) + " = z" + std::to_string(i) + "\n";
  src += "        return x\n";
  Checked c(src, /*maxErrors=*/2);
  EXPECT_TRUE(c.f.diags->shouldStop());
  // Two errors, then the "too many errors" one, then nothing.
  EXPECT_EQ(c.f.countPrinted("error:"), 3u) << c.f.messages();
  EXPECT_NE(c.f.messages().find("5:14: error: too many errors (2), stopping"),
            std::string::npos)
      << c.f.messages();
  EXPECT_EQ(c.f.messages().find("z3"), std::string::npos) << c.f.messages();
}

TEST(SemaTest, ValidExamplesHaveTypesEverywhere) {
  // Every expression of a checked forward carries a type.
  Checked c(R"(layer GCN(i: int, o: int):
    param W: f32[i, o] = glorot
    def forward(g: Graph, x: f32[N, i]) -> f32[N, o]:
        norm = rsqrt(max(reshape(g.in_degree(), [N, 1]), 1.0))
        g.set_vertex_attr({"h": x @ W * norm})
        for v in g.dst_vertex:
            v.h = g.sum([u.h for u in v.innbs]) * v.h
        return [v.h for v in g.dst_vertex]
)");
  EXPECT_CLEAN(c);
  EXPECT_TENSOR(c.local("GCN", "norm"), ElemType::F32,
                Shape({sym("N"), cst(1)}), Dense);
  EXPECT_TENSOR(Checked::typeOf(c.attrAssigned("GCN", "h")), ElemType::F32,
                Shape({sym("o")}), Dst);
}

} // namespace
