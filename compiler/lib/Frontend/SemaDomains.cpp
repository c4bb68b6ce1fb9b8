//===- SemaDomains.cpp - Comprehensions and broadcasting ------------------===//
//
// Part of gnnc. A comprehension over a neighbourhood is a per-edge
// neighbour list, one over a vertex set collects a dense tensor; an
// elementwise operation broadcasts shapes NumPy-style and combines the
// domains of its operands (per-source and per-destination values meet on
// the current edge).
//
//===----------------------------------------------------------------------===//

#include "SemaInternal.h"

using namespace gnnc;
using namespace gnnc::sema;

//===----------------------------------------------------------------------===//
// Comprehensions
//===----------------------------------------------------------------------===//

ValueType Checker::checkComprehension(ComprehensionExpr &expr) {
  ValueType source = check(*expr.source);
  if (source.isError())
    return source;
  auto varCountError = [&](StringRef yields, StringRef form) {
    error(expr.vars[0].loc, DiagID::err_comp_var_count, source.str(), yields,
          form);
  };

  // The element computed for every edge of a neighbourhood: a neighbour
  // list over that neighbourhood.
  auto edgeList = [&](Direction direction) {
    comprehensions.push_back(direction);
    std::optional<ValueType> element = requireTensor(*expr.element);
    comprehensions.pop_back();
    if (!element)
      return ValueType::error();
    if (element->domain == Domain::Edge && element->direction != direction) {
      error(expr.element->getLoc(), DiagID::err_direction_mismatch);
      return ValueType::error();
    }
    ValueType result = concretize(*element);
    result.domain = Domain::Edge;
    result.direction = direction;
    return result;
  };

  scopes.emplace_back();
  auto finish = [&](ValueType result) {
    for (auto &[name, binding] : scopes.back())
      expired[name] = {DiagID::err_comp_var_outside, binding.loc};
    scopes.pop_back();
    return result;
  };

  switch (source.kind) {
  case ValueType::Kind::Neighbours: {
    size_t want = source.withEdges ? 2 : 1;
    if (expr.vars.size() != want) {
      varCountError(source.withEdges ? "pairs of (neighbour, edge)"
                                     : "single neighbours",
                    source.withEdges ? "for u, e in ..." : "for u in ...");
      return finish(ValueType::error());
    }
    ValueType u = ValueType::ofKind(ValueType::Kind::Vertex);
    u.side = source.direction == Direction::In ? Domain::Src : Domain::Dst;
    copyGraphIdentity(u, source);
    if (!declare(expr.vars[0].name, Binding::Kind::CompVar, u,
                 expr.vars[0].loc))
      return finish(ValueType::error());
    if (want == 2) {
      ValueType e = ValueType::ofKind(ValueType::Kind::EdgeVar);
      e.direction = source.direction;
      e.name = source.name;
      if (!declare(expr.vars[1].name, Binding::Kind::CompVar, e,
                   expr.vars[1].loc))
        return finish(ValueType::error());
    }
    return finish(edgeList(source.direction));
  }
  case ValueType::Kind::VertexSet: {
    if (vertex) {
      error(expr.getLoc(), DiagID::err_collect_in_loop);
      return finish(ValueType::error());
    }
    if (expr.vars.size() != 1) {
      varCountError("single vertices", "for v in ...");
      return finish(ValueType::error());
    }
    ValueType v = ValueType::ofKind(ValueType::Kind::Vertex);
    v.side = source.side;
    copyGraphIdentity(v, source);
    if (!declare(expr.vars[0].name, Binding::Kind::CompVar, v,
                 expr.vars[0].loc))
      return finish(ValueType::error());
    vertex = VertexContext{source.side, source.name, source.graphKind,
                           expr.vars[0].name, scopes.size() - 1};
    std::optional<ValueType> element = requireTensor(*expr.element);
    vertex.reset();
    if (!element)
      return finish(ValueType::error());
    if (element->domain == Domain::Edge) {
      error(expr.element->getLoc(), DiagID::err_collect_list);
      return finish(ValueType::error());
    }
    ValueType result = concretize(*element);
    result.domain = Domain::Dense;
    result.shape.insert(result.shape.begin(), sideCount(source.side, source));
    return finish(result);
  }
  case ValueType::Kind::Tensor:
    if (source.domain == Domain::Edge) {
      if (expr.vars.size() != 1) {
        varCountError("one value per edge", "for c in ...");
        return finish(ValueType::error());
      }
      ValueType c = source;
      if (!declare(expr.vars[0].name, Binding::Kind::CompVar, c,
                   expr.vars[0].loc))
        return finish(ValueType::error());
      return finish(edgeList(source.direction));
    }
    [[fallthrough]];
  default:
    error(expr.source->getLoc(), DiagID::err_comp_source, source.str());
    return finish(ValueType::error());
  }
}

//===----------------------------------------------------------------------===//
// Elementwise operations
//===----------------------------------------------------------------------===//

/// Combines the domains of two operands. Inside a comprehension element,
/// per-source and per-destination values meet on the current edge.
static std::optional<Domain> combineDomains(const ValueType &a,
                                            const ValueType &b) {
  if (a.domain == Domain::Dense)
    return b.domain;
  if (b.domain == Domain::Dense || a.domain == b.domain)
    return a.domain;
  return Domain::Edge;
}

ValueType Checker::elementwise(const ValueType &a, const ValueType &b,
                               SMLoc loc) {
  ElemType elem;
  if (a.elem == b.elem || isWeak(b.elem))
    elem = a.elem;
  else if (isWeak(a.elem))
    elem = b.elem;
  else {
    error(loc, DiagID::err_elem_mismatch, getElemTypeName(a.elem),
          getElemTypeName(b.elem));
    return ValueType::error();
  }
  if (a.elem == ElemType::WeakInt && b.elem == ElemType::WeakFloat)
    elem = ElemType::WeakFloat;
  // A float literal would be truncated into an integer tensor.
  bool aInt = a.elem == ElemType::I32 || a.elem == ElemType::I64;
  bool bInt = b.elem == ElemType::I32 || b.elem == ElemType::I64;
  if ((aInt && b.elem == ElemType::WeakFloat) ||
      (bInt && a.elem == ElemType::WeakFloat)) {
    error(loc, DiagID::err_elem_mismatch, getElemTypeName(a.elem),
          getElemTypeName(b.elem));
    return ValueType::error();
  }

  if (a.domain == Domain::Edge && b.domain == Domain::Edge &&
      a.direction != b.direction) {
    error(loc, DiagID::err_direction_mismatch);
    return ValueType::error();
  }
  Domain domain = *combineDomains(a, b);

  // NumPy broadcasting, aligned from the right.
  size_t rank = std::max(a.shape.size(), b.shape.size());
  std::vector<Dim> shape(rank);
  for (size_t i = 0; i < rank; ++i) {
    const Dim *da =
        i < a.shape.size() ? &a.shape[a.shape.size() - 1 - i] : nullptr;
    const Dim *db =
        i < b.shape.size() ? &b.shape[b.shape.size() - 1 - i] : nullptr;
    Dim one = Dim::constant(1);
    if (!da || *da == one)
      shape[rank - 1 - i] = db ? *db : one;
    else if (!db || *db == one || *da == *db)
      shape[rank - 1 - i] = *da;
    else {
      error(loc, DiagID::err_broadcast, a.shapeStr(), b.shapeStr(), da->str(),
            db->str());
      return ValueType::error();
    }
  }
  ValueType result = ValueType::tensor(elem, std::move(shape), domain);
  if (a.domain == Domain::Edge)
    result.direction = a.direction;
  else if (b.domain == Domain::Edge)
    result.direction = b.direction;
  else if (!comprehensions.empty())
    result.direction = comprehensions.back(); // a source meets a destination
  return result;
}
