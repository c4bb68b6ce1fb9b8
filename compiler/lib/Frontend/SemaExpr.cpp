//===- SemaExpr.cpp - Expressions, names and attributes -------------------===//
//
// Part of gnnc. Types an expression: literals, unary operators, names
// (bindings, graph sizes, builtins, expired loop names) and attributes
// (graph members, vertex and edge attributes, neighbour sets).
//
//===----------------------------------------------------------------------===//

#include "SemaInternal.h"

using namespace gnnc;
using namespace gnnc::sema;

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

ValueType Checker::check(Expr &expr) {
  ValueType t = checkExpr(expr);
  expr.type = t;
  return t;
}

std::optional<ValueType> Checker::requireTensor(Expr &expr) {
  ValueType t = check(expr);
  if (t.isError())
    return std::nullopt;
  if (!t.isTensor()) {
    switch (t.kind) {
    case ValueType::Kind::List:
      error(expr.getLoc(), DiagID::err_list_value);
      break;
    case ValueType::Kind::Dict:
      error(expr.getLoc(), DiagID::err_dict_value);
      break;
    case ValueType::Kind::String:
      error(expr.getLoc(), DiagID::err_string_value);
      break;
    default:
      error(expr.getLoc(), DiagID::err_not_a_value, t.str());
      break;
    }
    return std::nullopt;
  }
  if (t.elem == ElemType::Bool) {
    error(expr.getLoc(), DiagID::err_bool_arith);
    return std::nullopt;
  }
  return t;
}

bool Checker::requireFloat(const ValueType &t, StringRef what, SMLoc loc) {
  if (isFloatElem(t.elem) || t.elem == ElemType::WeakInt)
    return true;
  error(loc, DiagID::err_not_float, what, t.str());
  return false;
}

ValueType Checker::checkExpr(Expr &expr) {
  switch (expr.getKind()) {
  case Expr::Kind::Int:
    return ValueType::intConstant(
        Dim::constant(llvm::cast<IntExpr>(expr).value));
  case Expr::Kind::Float:
    return ValueType::floatConstant(llvm::cast<FloatExpr>(expr).value);
  case Expr::Kind::Bool: {
    ValueType t = ValueType::tensor(ElemType::Bool, {});
    t.isConstant = true;
    return t;
  }
  case Expr::Kind::String:
    return ValueType::ofKind(ValueType::Kind::String);
  case Expr::Kind::Name:
    return checkName(llvm::cast<NameExpr>(expr));
  case Expr::Kind::Attr:
    return checkAttr(llvm::cast<AttrExpr>(expr));
  case Expr::Kind::Call:
    return checkCall(llvm::cast<CallExpr>(expr));
  case Expr::Kind::Binary:
    return checkBinary(llvm::cast<BinaryExpr>(expr));
  case Expr::Kind::Unary: {
    auto &unary = llvm::cast<UnaryExpr>(expr);
    std::optional<ValueType> t = requireTensor(*unary.operand);
    if (!t)
      return ValueType::error();
    if (unary.op == UnaryOp::Plus)
      return *t;
    if (t->intValue) {
      std::optional<Dim> neg = Dim::constant(0).sub(*t->intValue);
      if (!neg) {
        error(expr.getLoc(), DiagID::err_dim_overflow);
        return ValueType::error();
      }
      return ValueType::intConstant(*neg);
    }
    if (t->floatValue)
      t->floatValue = -*t->floatValue;
    return *t;
  }
  case Expr::Kind::List: {
    for (ExprPtr &element : llvm::cast<ListExpr>(expr).elements)
      check(*element);
    return ValueType::ofKind(ValueType::Kind::List);
  }
  case Expr::Kind::Comprehension:
    return checkComprehension(llvm::cast<ComprehensionExpr>(expr));
  case Expr::Kind::Dict:
    error(expr.getLoc(), DiagID::err_dict_value);
    return ValueType::error();
  case Expr::Kind::Subscript:
    check(*llvm::cast<SubscriptExpr>(expr).base);
    error(expr.getLoc(), DiagID::err_subscript);
    return ValueType::error();
  }
  return ValueType::error();
}

//===----------------------------------------------------------------------===//
// Names and sizes
//===----------------------------------------------------------------------===//

Dim Checker::sideCount(Domain side, const ValueType &graph) const {
  GraphSizeNames names = graphSizeNames(graph);
  return Dim::symbol(side == Domain::Src ? names.src : names.dst);
}

std::optional<ValueType> Checker::sizeSymbol(StringRef name, SMLoc loc) {
  if (namedSizes.count(name.str()))
    return ValueType::intConstant(Dim::symbol(name));
  // Where the graphs name their sizes, the default symbols would be
  // ambiguous (or, with one graph, a second name for one size); the edge
  // count of a lone graph that names only its vertex counts stays `E`.
  if (!namedSizes.empty() &&
      (name == sym::N || name == sym::NSrc || name == sym::NDst ||
       (name == sym::E && !edgeDefaultValid))) {
    error(loc, DiagID::err_size_not_named, name, namedSizesText);
    return ValueType::error();
  }
  if (name == sym::N && graphKind == GraphKind::Block) {
    error(loc, DiagID::err_n_on_block);
    return ValueType::error();
  }
  if ((name == sym::NSrc || name == sym::NDst) && graphKind != GraphKind::Block)
    return ValueType::intConstant(Dim::symbol(sym::N));
  if (isSizeSymbol(name))
    return ValueType::intConstant(Dim::symbol(name));
  return std::nullopt;
}

ValueType Checker::checkName(NameExpr &expr) {
  const Binding *binding = lookup(expr.name);
  if (!binding) {
    if (std::optional<ValueType> size = sizeSymbol(expr.name, expr.getLoc()))
      return *size;
    auto dead = expired.find(expr.name);
    if (dead != expired.end()) {
      error(expr.getLoc(), dead->second.first, expr.name);
      error(dead->second.second, DiagID::note_bound_here, expr.name);
      return ValueType::error();
    }
    if (isBuiltin(expr.name)) {
      ValueType fn = ValueType::ofKind(ValueType::Kind::Function);
      fn.name = expr.name;
      return fn;
    }
    error(expr.getLoc(), DiagID::err_unknown_name, expr.name);
    return ValueType::error();
  }
  const ValueType &t = binding->type;
  // A tensor with a vertex axis inside a vertex loop would be read whole
  // by every vertex: almost certainly a mistake.
  if (vertex && t.isTensor() && t.domain == Domain::Dense) {
    for (const Dim &d : t.shape) {
      if (mentionsGraphSize(d, sizeNames)) {
        error(expr.getLoc(), DiagID::err_vertex_axis_in_loop, expr.name,
              t.shapeStr());
        return ValueType::error();
      }
    }
  }
  return t;
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

ValueType Checker::checkAttr(AttrExpr &expr) {
  ValueType base = check(*expr.base);
  if (base.isError())
    return base;
  const std::string &attr = expr.attr.name;
  std::string baseName = "value";
  if (auto *name = llvm::dyn_cast<NameExpr>(expr.base.get()))
    baseName = name->name;

  switch (base.kind) {
  case ValueType::Kind::Graph: {
    if (attr == "dst_vertex" || attr == "src_vertex") {
      if (base.graphKind == GraphKind::HeteroGraph) {
        error(expr.attr.loc, DiagID::err_hetero_loop);
        return ValueType::error();
      }
      ValueType set = ValueType::ofKind(ValueType::Kind::VertexSet);
      set.side = attr == "dst_vertex" ? Domain::Dst : Domain::Src;
      copyGraphIdentity(set, base);
      return set;
    }
    if (attr == "n_nodes" || attr == "n_edges")
      return ValueType::tensor(ElemType::WeakInt, {});
    if (isGraphMethod(attr)) {
      ValueType fn = ValueType::ofKind(ValueType::Kind::Function);
      fn.name = attr;
      return fn;
    }
    error(expr.attr.loc, DiagID::err_unknown_graph_member, baseName, attr);
    return ValueType::error();
  }
  case ValueType::Kind::Vertex: {
    bool isNeighbourSet = attr == "innbs" || attr == "inedges" ||
                          attr == "outnbs" || attr == "outedges";
    if (isNeighbourSet) {
      if (!vertex || vertex->var != baseName) {
        // Vertices exist only in vertex contexts, so this is a neighbour.
        error(expr.getLoc(), DiagID::err_nbrs_of_neighbour, baseName, attr);
        return ValueType::error();
      }
      Direction dir =
          attr.substr(0, 2) == "in" ? Direction::In : Direction::Out;
      // Out-neighbours of a destination (or in-neighbours of a source) exist
      // only when both sides are the same vertex set.
      bool natural = (dir == Direction::In) == (base.side == Domain::Dst);
      if (!natural && base.graphKind == GraphKind::Block) {
        error(expr.getLoc(), DiagID::err_nbrs_wrong_side, attr,
              base.side == Domain::Dst ? "destination" : "source",
              base.side == Domain::Dst
                  ? "'for v in g.src_vertex' with v.outnbs"
                  : "'for v in g.dst_vertex' with v.innbs");
        return ValueType::error();
      }
      ValueType nbrs = ValueType::ofKind(ValueType::Kind::Neighbours);
      nbrs.direction = dir;
      nbrs.withEdges = attr.find("edges") != std::string::npos;
      copyGraphIdentity(nbrs, base);
      return nbrs;
    }
    AttrTables &tables = attrs(base.name);
    auto &table = base.side == Domain::Dst ? tables.dst : tables.src;
    auto it = table.find(attr);
    if (it == table.end()) {
      error(expr.attr.loc, DiagID::err_unknown_attr,
            base.side == Domain::Dst ? "destination vertices"
                                     : "source vertices",
            attr);
      return ValueType::error();
    }
    ValueType t = it->second.type;
    if (t.isError())
      return t;
    t.domain = base.side;
    // On a homogeneous graph a neighbour can sit on the loop vertex's side
    // (`u` in `v.innbs` of a source loop). Its value differs per edge, so it
    // is per-edge from the start rather than confusable with `v`'s.
    if (vertex && vertex->var != baseName && base.side == vertex->side &&
        !comprehensions.empty()) {
      t.domain = Domain::Edge;
      t.direction = comprehensions.back();
    }
    return t;
  }
  case ValueType::Kind::EdgeVar: {
    auto &table = attrs(base.name).edge;
    auto it = table.find(attr);
    if (it == table.end()) {
      error(expr.attr.loc, DiagID::err_unknown_attr, "edges", attr);
      return ValueType::error();
    }
    ValueType t = it->second.type;
    t.domain = Domain::Edge;
    t.direction = base.direction;
    return t;
  }
  case ValueType::Kind::Tensor:
    error(expr.attr.loc, DiagID::err_tensor_attr, attr);
    return ValueType::error();
  default:
    error(expr.attr.loc, DiagID::err_unknown_graph_member, baseName, attr);
    return ValueType::error();
  }
}
