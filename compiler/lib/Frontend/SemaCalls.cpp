//===- SemaCalls.cpp - Calls, graph methods and layer calls ---------------===//
//
// Part of gnnc. Dispatches a call to a graph method, a builtin or a layer
// instance; checks the graph methods (aggregations, edge softmax, degrees,
// relations, readouts) and layer calls, whose signature is the callee's
// with the instance's bindings and the caller's graph sizes substituted.
//
//===----------------------------------------------------------------------===//

#include "SemaInternal.h"

using namespace gnnc;
using namespace gnnc::sema;

//===----------------------------------------------------------------------===//
// Calls
//===----------------------------------------------------------------------===//

ValueType Checker::checkCall(CallExpr &call) {
  // Graph methods: g.sum(...), g.set_vertex_attr(...), ...
  if (auto *attr = llvm::dyn_cast<AttrExpr>(call.callee.get())) {
    ValueType base = check(*attr->base);
    if (base.isError())
      return base;
    if (base.kind == ValueType::Kind::Graph && isGraphMethod(attr->attr.name)) {
      ValueType fn = ValueType::ofKind(ValueType::Kind::Function);
      fn.name = attr->attr.name;
      attr->type = fn;
      if (isSetAttrMethod(attr->attr.name)) {
        error(call.getLoc(), DiagID::err_setattr_in_expr, attr->attr.name);
        return ValueType::error();
      }
      return checkGraphMethod(call, base, attr->attr.name);
    }
    ValueType callee = check(*call.callee);
    if (!callee.isError())
      error(call.getLoc(), DiagID::err_not_callable, callee.str());
    return ValueType::error();
  }
  ValueType callee = check(*call.callee);
  if (callee.isError())
    return callee;
  if (callee.kind == ValueType::Kind::Layer)
    return checkLayerCall(call, callee);
  if (callee.kind == ValueType::Kind::Function)
    return checkBuiltin(call, callee.name);
  error(call.getLoc(), DiagID::err_not_callable, callee.str());
  return ValueType::error();
}

//===----------------------------------------------------------------------===//
// Graph methods
//===----------------------------------------------------------------------===//

ValueType Checker::checkGraphMethod(CallExpr &call, const ValueType &graph,
                                    StringRef method) {
  SMLoc loc = call.getLoc();
  std::string qualified = "g." + method.str();
  auto needKind = [&](GraphKind kind) {
    if (graph.graphKind == kind)
      return true;
    error(loc, DiagID::err_graph_kind_member, graph.name, method,
          getGraphKindName(kind), getGraphKindName(graph.graphKind));
    return false;
  };

  const GraphMethodInfo *info = lookupGraphMethod(method);
  if (!info) {
    error(loc, DiagID::err_not_callable, "'" + qualified + "'");
    return ValueType::error();
  }
  switch (info->kind) {
  case GraphMethodKind::Aggregation:
  case GraphMethodKind::EdgeSoftmax: {
    BuiltinArgs args = matchArgs(call, {"list"}, 1, qualified, diags);
    if (!args.ok)
      return ValueType::error();
    if (!vertex) {
      check(*args.slots[0]);
      error(loc, DiagID::err_aggregate_outside_loop, qualified);
      return ValueType::error();
    }
    std::optional<ValueType> x = requireTensor(*args.slots[0]);
    if (!x)
      return ValueType::error();
    if (x->domain != Domain::Edge) {
      error(args.slots[0]->getLoc(), DiagID::err_aggregate_needs_list,
            qualified, x->str());
      return ValueType::error();
    }
    bool isSoftmax = info->kind == GraphMethodKind::EdgeSoftmax;
    if ((isSoftmax || info->floatOnly) &&
        !requireFloat(*x, qualified, args.slots[0]->getLoc()))
      return ValueType::error();
    ValueType result = concretize(*x);
    if (!isSoftmax)
      result.domain = vertex->side;
    return result;
  }

  case GraphMethodKind::Dot: {
    BuiltinArgs args = matchArgs(call, {"a", "b"}, 2, qualified, diags);
    if (!args.ok)
      return ValueType::error();
    std::optional<ValueType> a = requireTensor(*args.slots[0]);
    std::optional<ValueType> b = requireTensor(*args.slots[1]);
    if (!a || !b)
      return ValueType::error();
    ValueType product = elementwise(*a, *b, loc);
    if (product.isError())
      return product;
    if (product.shape.empty()) {
      error(loc, DiagID::err_axis_out_of_range, "-1", product.shapeStr());
      return ValueType::error();
    }
    return reduce(product, product.shape.size() - 1, /*keepDims=*/true, loc);
  }

  case GraphMethodKind::Degree: {
    BuiltinArgs args = matchArgs(call, {}, 0, qualified, diags);
    if (!args.ok)
      return ValueType::error();
    if (graph.graphKind == GraphKind::HeteroGraph) {
      error(loc, DiagID::err_graph_kind_member, graph.name, method,
            "Graph, Block or BatchedGraph", "HeteroGraph");
      return ValueType::error();
    }
    Domain side = method == "in_degree" ? Domain::Dst : Domain::Src;
    return ValueType::tensor(ElemType::F32, {sideCount(side, graph)});
  }

  case GraphMethodKind::Relation: {
    if (!needKind(GraphKind::HeteroGraph))
      return ValueType::error();
    BuiltinArgs args = matchArgs(call, {"name"}, 1, qualified, diags);
    if (!args.ok)
      return ValueType::error();
    auto *str = llvm::dyn_cast<StringExpr>(args.slots[0]);
    if (!str) {
      ValueType t = check(*args.slots[0]);
      error(args.slots[0]->getLoc(), DiagID::err_constant_arg, "name",
            qualified, "string", t.str());
      return ValueType::error();
    }
    str->type = ValueType::ofKind(ValueType::Kind::String);
    ValueType rel = ValueType::ofKind(ValueType::Kind::Graph);
    rel.graphKind = GraphKind::Graph;
    rel.name = graph.name + ".relation(\"" + str->value + "\")";
    return rel;
  }

  case GraphMethodKind::Readout: {
    if (!needKind(GraphKind::BatchedGraph))
      return ValueType::error();
    BuiltinArgs args = matchArgs(call, {"x"}, 1, qualified, diags);
    if (!args.ok)
      return ValueType::error();
    std::optional<ValueType> x = requireTensor(*args.slots[0]);
    if (!x)
      return ValueType::error();
    if (x->domain != Domain::Dense || x->shape.empty() ||
        x->shape[0] != Dim::symbol(sym::N)) {
      error(args.slots[0]->getLoc(), DiagID::err_batched_needs_rows, qualified,
            x->str());
      return ValueType::error();
    }
    if (info->floatOnly &&
        !requireFloat(*x, qualified, args.slots[0]->getLoc()))
      return ValueType::error();
    ValueType result = concretize(*x);
    result.shape[0] = Dim::symbol(sym::B);
    return result;
  }
  case GraphMethodKind::DstRows: {
    // The destinations of a sampled block are its first sources; on a
    // homogeneous graph both are every vertex and this is the identity.
    if (graph.graphKind != GraphKind::Block &&
        graph.graphKind != GraphKind::Graph) {
      error(loc, DiagID::err_graph_kind_member, graph.name, method,
            "Block or Graph", getGraphKindName(graph.graphKind));
      return ValueType::error();
    }
    BuiltinArgs args = matchArgs(call, {"x"}, 1, qualified, diags);
    if (!args.ok)
      return ValueType::error();
    std::optional<ValueType> x = requireTensor(*args.slots[0]);
    if (!x)
      return ValueType::error();
    GraphSizeNames sizes = graphSizeNames(graph);
    if (x->domain != Domain::Dense || x->shape.empty() ||
        x->shape[0] != Dim::symbol(sizes.src)) {
      error(args.slots[0]->getLoc(), DiagID::err_dst_rows_rows, qualified,
            graph.name, sizes.src, x->str());
      return ValueType::error();
    }
    ValueType result = concretize(*x);
    result.shape[0] = Dim::symbol(sizes.dst);
    return result;
  }
  case GraphMethodKind::SetAttr:
    // A statement of its own (checkSetAttr); checkCall reports it here.
    break;
  }
  error(loc, DiagID::err_not_callable, "'" + qualified + "'");
  return ValueType::error();
}

//===----------------------------------------------------------------------===//
// Layer calls
//===----------------------------------------------------------------------===//

ValueType Checker::checkLayerCall(CallExpr &call, const ValueType &layer) {
  auto *calleeName = llvm::dyn_cast<NameExpr>(call.callee.get());
  std::string instName = calleeName ? calleeName->name : layer.name;
  for (Arg &arg : call.args)
    check(*arg.value);
  if (vertex) {
    error(call.getLoc(), DiagID::err_layer_call_in_loop);
    return ValueType::error();
  }
  for (Arg &arg : call.args) {
    if (!arg.keyword.name.empty()) {
      error(arg.keyword.loc, DiagID::err_layer_call_keyword);
      return ValueType::error();
    }
  }
  auto instIt = instances.find(instName);
  if (layer.name.empty() || instIt == instances.end())
    return ValueType::error(); // the instance itself had errors
  DefInfo &callee = defs[instIt->second.callee];
  if (!callee.hasSignature)
    return ValueType::error(); // reported where the callee is defined
  if (call.args.size() != callee.argTypes.size()) {
    error(call.getLoc(), DiagID::err_layer_call_arity, instName,
          std::to_string(callee.argTypes.size()),
          std::to_string(call.args.size()));
    return ValueType::error();
  }
  std::map<std::string, Dim> subst = instIt->second.bindings;
  // First the graphs: they decide how the callee's size symbols (N_src,
  // N_dst, E, or the names its blocks give them) map to the caller's.
  std::map<std::string, size_t> boundBy;
  for (size_t i = 0; i < call.args.size(); ++i) {
    const ValueType &want = callee.argTypes[i];
    if (want.kind != ValueType::Kind::Graph)
      continue;
    const ValueType &got = *call.args[i].value->type;
    if (got.isError())
      return ValueType::error();
    bool ok = got.kind == ValueType::Kind::Graph &&
              (got.graphKind == want.graphKind ||
               (want.graphKind == GraphKind::Block &&
                got.graphKind == GraphKind::Graph));
    if (!ok) {
      error(call.args[i].value->getLoc(), DiagID::err_layer_call_graph,
            std::to_string(i + 1), instName, getGraphKindName(want.graphKind),
            got.str());
      error(callee.argLocs[i], DiagID::note_callee_arg, std::to_string(i + 1),
            callee.def->name.name);
      return ValueType::error();
    }
    GraphSizeNames theirs = graphSizeNames(want), mine = graphSizeNames(got);
    std::pair<const std::string *, const std::string *> pairs[] = {
        {&theirs.src, &mine.src},
        {&theirs.dst, &mine.dst},
        {&theirs.edge, &mine.edge}};
    for (auto [from, to] : pairs) {
      Dim value = Dim::symbol(*to);
      auto [it, inserted] = subst.try_emplace(*from, value);
      if (!inserted && it->second != value) {
        // Two blocks of the callee share a size; the caller's do not.
        error(call.args[i].value->getLoc(),
              DiagID::err_call_blocks_do_not_chain, instName, *from,
              std::to_string(boundBy[*from] + 1), std::to_string(i + 1),
              it->second.str(), *to);
        error(callee.argLocs[i], DiagID::note_callee_arg, std::to_string(i + 1),
              callee.def->name.name);
        return ValueType::error();
      }
      boundBy[*from] = i;
    }
  }
  // A layer without a graph argument (an MLP, say) has no graph sizes of
  // its own: a size symbol that is a whole dimension of an argument takes
  // the caller's dimension there, so `mlp(g.sum_nodes(h))` has N = B.
  bool hasGraphArg = llvm::any_of(callee.argTypes, [](const ValueType &t) {
    return t.kind == ValueType::Kind::Graph;
  });
  if (!hasGraphArg) {
    for (size_t i = 0; i < call.args.size(); ++i) {
      const ValueType &want = callee.argTypes[i];
      const ValueType &got = *call.args[i].value->type;
      if (!got.isTensor() || got.shape.size() != want.shape.size())
        continue;
      for (size_t d = 0; d < want.shape.size(); ++d)
        for (const char *size : {sym::N, sym::NSrc, sym::NDst, sym::E, sym::B})
          if (want.shape[d] == Dim::symbol(size) && !subst.count(size))
            subst[size] = got.shape[d];
    }
  }
  auto substitute = [&](const ValueType &t) -> std::optional<ValueType> {
    ValueType out = t;
    for (Dim &d : out.shape) {
      std::optional<Dim> s = d.substitute(subst);
      if (!s)
        return std::nullopt;
      d = *s;
    }
    return out;
  };
  for (size_t i = 0; i < call.args.size(); ++i) {
    const ValueType &want = callee.argTypes[i];
    if (want.kind == ValueType::Kind::Graph)
      continue;
    const ValueType &got = *call.args[i].value->type;
    if (got.isError())
      return ValueType::error();
    std::optional<ValueType> expected = substitute(want);
    if (!expected) {
      error(call.getLoc(), DiagID::err_dim_overflow);
      return ValueType::error();
    }
    bool elemOk = got.elem == expected->elem ||
                  (isWeak(got.elem) && isFloatElem(expected->elem)) ||
                  (isWeak(expected->elem));
    if (!got.isTensor() || got.domain != Domain::Dense || !elemOk ||
        got.shape != expected->shape) {
      if (got.isTensor() && got.domain == Domain::Dense && elemOk &&
          !got.shape.empty() && got.shape.size() == expected->shape.size() &&
          reportUnchained(call, i, instName, got.shape[0], expected->shape[0]))
        return ValueType::error();
      error(call.args[i].value->getLoc(), DiagID::err_layer_call_arg_type,
            std::to_string(i + 1), instName, got.str(), callee.def->name.name,
            expected->shapeStr());
      error(callee.argLocs[i], DiagID::note_callee_arg, std::to_string(i + 1),
            callee.def->name.name);
      return ValueType::error();
    }
  }
  std::optional<ValueType> result = substitute(callee.result);
  if (!result) {
    error(call.getLoc(), DiagID::err_dim_overflow);
    return ValueType::error();
  }
  return *result;
}

bool Checker::reportUnchained(CallExpr &call, size_t index, StringRef instName,
                              const Dim &got, const Dim &want) {
  // Which graph argument of the caller (and which side of it) a symbol is
  // a vertex count of.
  struct Side {
    const GraphArgInfo *graph = nullptr;
    bool src = false;
  };
  auto find = [&](const Dim &d, StringRef onlyGraph) {
    Side out;
    for (const GraphArgInfo &g : graphArgs) {
      if (!onlyGraph.empty() && g.name != onlyGraph)
        continue;
      if (d == Dim::symbol(g.sizes.src))
        return Side{&g, true};
      if (d == Dim::symbol(g.sizes.dst) && !out.graph)
        out = Side{&g, false};
    }
    return out;
  };
  Side have = find(got, "");
  if (!have.graph)
    return false;
  // The graph of the call that wants `want` rows.
  for (const Arg &arg : call.args) {
    const std::optional<ValueType> &t = arg.value->type;
    if (!t || t->kind != ValueType::Kind::Graph || t->name == have.graph->name)
      continue;
    Side need = find(want, t->name);
    if (!need.graph)
      continue;
    std::string fix = need.src ? "Block[" + got.str() + ", ...]"
                               : "Block[..., " + got.str() + "]";
    error(call.args[index].value->getLoc(), DiagID::err_blocks_do_not_chain,
          std::to_string(index + 1), instName, got.str(),
          have.src ? "sources" : "destinations", have.graph->name,
          need.graph->name, want.str(), need.src ? "sources" : "destinations",
          fix);
    error(need.graph->loc, DiagID::note_declared_here, need.graph->name);
    error(have.graph->loc, DiagID::note_declared_here, have.graph->name);
    return true;
  }
  return false;
}
