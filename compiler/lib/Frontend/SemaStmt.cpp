//===- SemaStmt.cpp - Statements ------------------------------------------===//
//
// Part of gnnc. Checks the statements of a forward: assignments and
// rebinding, vertex attribute writes, g.set_*_attr, vertex loops (whose
// locals and loop variable expire with the loop) and range loops (whose
// values must keep their type from one iteration to the next).
//
//===----------------------------------------------------------------------===//

#include "SemaInternal.h"

#include "llvm/ADT/StringMap.h"

using namespace gnnc;
using namespace gnnc::sema;

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

void Checker::checkBody(StmtList &body, bool topLevel) {
  for (StmtPtr &stmt : body) {
    if (diags.shouldStop())
      return;
    if (returned && topLevel) {
      error(stmt->getLoc(), DiagID::err_unreachable);
      return;
    }
    checkStmt(*stmt);
  }
}

void Checker::checkStmt(Stmt &stmt) {
  switch (stmt.getKind()) {
  case Stmt::Kind::Assign:
    return checkAssign(llvm::cast<AssignStmt>(stmt));
  case Stmt::Kind::AttrAssign:
    return checkAttrAssign(llvm::cast<AttrAssignStmt>(stmt));
  case Stmt::Kind::ExprStmt:
    return checkExprStmt(llvm::cast<ExprStmt>(stmt));
  case Stmt::Kind::VertexLoop:
    return checkVertexLoop(llvm::cast<VertexLoopStmt>(stmt));
  case Stmt::Kind::RangeLoop:
    return checkRangeLoop(llvm::cast<RangeLoopStmt>(stmt));
  case Stmt::Kind::Pass:
    return;
  case Stmt::Kind::Return: {
    auto &ret = llvm::cast<ReturnStmt>(stmt);
    ValueType t = check(*ret.value);
    if (vertex || inRangeLoop) {
      error(ret.getLoc(), DiagID::err_return_in_loop);
      return;
    }
    returned = true;
    if (t.isError())
      return;
    if (!t.isTensor() || t.domain != Domain::Dense) {
      error(ret.value->getLoc(), DiagID::err_return_not_tensor, t.str());
      return;
    }
    if (!forward->resultType || !declaredResult)
      return;
    const std::optional<ValueType> &declared = declaredResult;
    ValueType got = t;
    if (isWeak(got.elem) && isFloatElem(declared->elem))
      got.elem = declared->elem;
    if (got.elem != declared->elem || got.shape != declared->shape) {
      error(ret.value->getLoc(), DiagID::err_return_type_mismatch, t.shapeStr(),
            declared->shapeStr());
      error(forward->resultType->loc, DiagID::note_declared_result);
    }
    return;
  }
  }
}

void Checker::checkAssign(AssignStmt &stmt) {
  ValueType t = check(*stmt.value);
  const std::string &name = stmt.target.name;
  const Binding *existing = lookup(name);
  if (existing && existing->kind != Binding::Kind::Local &&
      !(existing->kind == Binding::Kind::Arg && existing->type.isTensor())) {
    error(stmt.target.loc, DiagID::err_assign_to_nonlocal,
          getBindingKindName(existing->kind), name);
    error(existing->loc, DiagID::note_declared_here, name);
    return;
  }
  if (!existing && (isSizeSymbol(name) || isBuiltin(name))) {
    error(stmt.target.loc, DiagID::err_already_defined, name);
    return;
  }
  if (t.isError()) {
    // Bind the name anyway so later uses do not report it as undefined.
    if (!existing)
      scopes.back()[name] = Binding{Binding::Kind::Local, t, stmt.target.loc};
    return;
  }
  if (!t.isTensor() && t.kind != ValueType::Kind::Graph) {
    error(stmt.value->getLoc(), DiagID::err_bad_local_value, "a " + t.str());
    return;
  }
  ValueType stored = t.isTensor() ? concretize(t) : t;
  if (stored.kind == ValueType::Kind::Graph && stored.name.empty())
    stored.name = name;
  if (existing && vertex) {
    // Per-vertex values cannot flow into names that outlive the loop.
    bool inLoopScope = false;
    for (size_t i = vertex->scope; i < scopes.size(); ++i)
      inLoopScope |= scopes[i].count(name) != 0;
    if (!inLoopScope) {
      error(stmt.target.loc, DiagID::err_assign_outer_in_loop, name);
      error(existing->loc, DiagID::note_declared_here, name);
      return;
    }
  }
  if (existing) {
    if (inRangeLoop && existing->type.isTensor() &&
        !sameTensorType(existing->type, stored)) {
      error(stmt.target.loc, DiagID::err_loop_carried_type, name,
            existing->type.str(), stored.str());
      return;
    }
    // Rebinding: replace in the scope that holds the name.
    for (auto it = scopes.rbegin(); it != scopes.rend(); ++it) {
      auto found = it->find(name);
      if (found != it->end()) {
        found->second.type = stored;
        return;
      }
    }
  }
  scopes.back()[name] = Binding{Binding::Kind::Local, stored, stmt.target.loc};
  expired.erase(name);
}

void Checker::checkAttrAssign(AttrAssignStmt &stmt) {
  ValueType t = check(*stmt.value);
  const Binding *object = lookup(stmt.object.name);
  if (object && object->type.kind == ValueType::Kind::Graph) {
    error(stmt.object.loc, DiagID::err_attr_assign_to_graph, stmt.object.name);
    return;
  }
  if (!vertex || vertex->var != stmt.object.name) {
    if (!object && !expired.count(stmt.object.name)) {
      error(stmt.object.loc, DiagID::err_unknown_name, stmt.object.name);
      return;
    }
    error(stmt.object.loc, DiagID::err_attr_assign_outside_loop,
          stmt.object.name, stmt.attr.name);
    return;
  }
  AttrTables &tables = attrs(vertex->graphKey);
  auto &table = vertex->side == Domain::Dst ? tables.dst : tables.src;
  // A bad value still defines the attribute (as an error value), so later
  // reads do not add "no attribute" errors to the real one.
  table[stmt.attr.name] = AttrInfo{ValueType::error(), stmt.attr.loc};
  if (t.isError())
    return;
  if (!t.isTensor()) {
    error(stmt.value->getLoc(), DiagID::err_vertex_attr_value, stmt.attr.name,
          t.str());
    return;
  }
  if (t.domain == Domain::Edge) {
    error(stmt.value->getLoc(), DiagID::err_assign_list_to_vertex,
          stmt.attr.name);
    return;
  }
  ValueType row = concretize(t);
  row.domain = Domain::Dense;
  table[stmt.attr.name] = AttrInfo{row, stmt.attr.loc};
}

void Checker::checkExprStmt(ExprStmt &stmt) {
  if (auto *call = llvm::dyn_cast<CallExpr>(stmt.expr.get())) {
    if (auto *callee = llvm::dyn_cast<AttrExpr>(call->callee.get())) {
      StringRef method = callee->attr.name;
      if (isSetAttrMethod(method)) {
        ValueType base = check(*callee->base);
        if (base.isError())
          return;
        if (base.kind == ValueType::Kind::Graph) {
          checkSetAttr(*call, base, method);
          return;
        }
      }
    }
  }
  ValueType t = check(*stmt.expr);
  if (!t.isError())
    error(stmt.expr->getLoc(), DiagID::err_unused_expression);
}

void Checker::checkSetAttr(CallExpr &call, const ValueType &graph,
                           StringRef method) {
  auto *callee = llvm::cast<AttrExpr>(call.callee.get());
  callee->type = ValueType::ofKind(ValueType::Kind::Function);
  callee->type->name = method.str();
  std::string qualified = "g." + method.str();
  if (vertex) {
    error(call.getLoc(), DiagID::err_setattr_in_loop, method);
    return;
  }
  if (graph.graphKind == GraphKind::HeteroGraph) {
    error(callee->attr.loc, DiagID::err_graph_kind_member, graph.name, method,
          "Graph, Block or BatchedGraph", "HeteroGraph");
    return;
  }
  auto *dict = call.args.size() == 1 && call.args[0].keyword.name.empty()
                   ? llvm::dyn_cast<DictExpr>(call.args[0].value.get())
                   : nullptr;
  if (!dict) {
    error(call.getLoc(), DiagID::err_setattr_needs_dict, method);
    return;
  }
  dict->type = ValueType::ofKind(ValueType::Kind::Dict);
  bool isBlock = graph.graphKind == GraphKind::Block;
  if (method == "set_vertex_attr" && isBlock) {
    error(callee->attr.loc, DiagID::err_setattr_vertex_on_block);
    return;
  }
  Dim rows = method == "set_edge_attr" ? Dim::symbol(graphSizeNames(graph).edge)
             : method == "set_src_attr" ? sideCount(Domain::Src, graph)
             : method == "set_dst_attr" ? sideCount(Domain::Dst, graph)
                                        : Dim::symbol(sym::N);
  llvm::StringMap<SMLoc> seen;
  AttrTables &tables = attrs(graph.name);
  for (DictExpr::Entry &entry : dict->entries) {
    ValueType t = check(*entry.value);
    auto [it, inserted] = seen.try_emplace(entry.key.name, entry.key.loc);
    if (!inserted) {
      error(entry.key.loc, DiagID::err_duplicate_key, entry.key.name);
      error(it->second, DiagID::note_previous_definition, entry.key.name);
      continue;
    }
    if (t.isError())
      continue;
    if (!t.isTensor() || t.domain != Domain::Dense) {
      error(entry.value->getLoc(), DiagID::err_attr_value, entry.key.name,
            t.str());
      continue;
    }
    if (t.shape.empty() || t.shape[0] != rows) {
      error(entry.value->getLoc(), DiagID::err_setattr_leading_dim,
            entry.key.name, rows.str(), t.shapeStr());
      continue;
    }
    ValueType row = concretize(t);
    row.shape.erase(row.shape.begin());
    AttrInfo info{row, entry.key.loc};
    if (method == "set_edge_attr") {
      tables.edge[entry.key.name] = info;
    } else {
      if (method != "set_dst_attr")
        tables.src[entry.key.name] = info;
      if (method != "set_src_attr")
        tables.dst[entry.key.name] = info;
    }
  }
}

//===----------------------------------------------------------------------===//
// Loops
//===----------------------------------------------------------------------===//

void Checker::checkVertexLoop(VertexLoopStmt &stmt) {
  auto *set = llvm::dyn_cast<AttrExpr>(stmt.vertexSet.get());
  if (!set ||
      (set->attr.name != "dst_vertex" && set->attr.name != "src_vertex")) {
    error(stmt.vertexSet->getLoc(), DiagID::err_bad_vertex_loop);
    return;
  }
  ValueType graph = check(*set->base);
  if (graph.isError())
    return;
  if (graph.kind != ValueType::Kind::Graph) {
    error(stmt.vertexSet->getLoc(), DiagID::err_bad_vertex_loop);
    return;
  }
  if (graph.graphKind == GraphKind::HeteroGraph) {
    error(stmt.vertexSet->getLoc(), DiagID::err_hetero_loop);
    return;
  }
  if (vertex) {
    error(stmt.getLoc(), DiagID::err_nested_vertex_loop);
    return;
  }
  set->type = ValueType::ofKind(ValueType::Kind::VertexSet);
  Domain side = set->attr.name == "dst_vertex" ? Domain::Dst : Domain::Src;
  set->type->side = side;

  scopes.emplace_back();
  ValueType v = ValueType::ofKind(ValueType::Kind::Vertex);
  v.side = side;
  copyGraphIdentity(v, graph);
  if (!declare(stmt.var.name, Binding::Kind::LoopVar, v, stmt.var.loc)) {
    scopes.pop_back();
    return;
  }
  vertex = VertexContext{side, graph.name, graph.graphKind, stmt.var.name,
                         scopes.size() - 1};
  // Snapshot the attributes of the other side: neighbours read the values
  // from before the loop.
  checkBody(stmt.body, /*topLevel=*/false);
  vertex.reset();

  // A homogeneous graph has one set of vertices, so what the loop wrote is
  // visible from both sides afterwards.
  if (graph.graphKind != GraphKind::Block) {
    AttrTables &tables = attrs(graph.name);
    auto &from = side == Domain::Dst ? tables.dst : tables.src;
    auto &to = side == Domain::Dst ? tables.src : tables.dst;
    for (auto &[name, info] : from)
      to[name] = info;
  }
  for (auto &[name, binding] : scopes.back())
    expired[name] = {binding.kind == Binding::Kind::LoopVar
                         ? DiagID::err_loop_var_outside
                         : DiagID::err_loop_local_outside,
                     binding.loc};
  scopes.pop_back();
}

void Checker::checkRangeLoop(RangeLoopStmt &stmt) {
  ValueType count = check(*stmt.count);
  if (vertex) {
    error(stmt.getLoc(), DiagID::err_range_in_vertex_loop);
    return;
  }
  if (!count.isError()) {
    std::optional<int64_t> c =
        count.isIntConstant() ? count.intValue->getConstant() : std::nullopt;
    if (!count.isIntConstant() || (c && *c < 0))
      error(stmt.count->getLoc(), DiagID::err_range_count, count.str());
  }
  // Locals of a range loop live on after it, as in Python, so the body is
  // checked in the enclosing scope; only the index expires with the loop.
  ValueType index = ValueType::tensor(ElemType::WeakInt, {});
  bool named = stmt.var.name != "_";
  if (named &&
      !declare(stmt.var.name, Binding::Kind::LoopVar, index, stmt.var.loc))
    return;
  bool savedInRange = inRangeLoop;
  inRangeLoop = true;
  checkBody(stmt.body, /*topLevel=*/false);
  inRangeLoop = savedInRange;
  if (named) {
    scopes.back().erase(stmt.var.name);
    expired[stmt.var.name] = {DiagID::err_loop_var_outside, stmt.var.loc};
  }
}
