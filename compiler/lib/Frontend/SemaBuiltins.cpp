//===- SemaBuiltins.cpp - Builtin functions -------------------------------===//
//
// Part of gnnc. Checks calls of the builtin functions of Builtins.def, by
// category: elementwise functions, reductions, softmax, dropout and the
// shape functions.
//
//===----------------------------------------------------------------------===//

#include "SemaInternal.h"

#include <sstream>

using namespace gnnc;
using namespace gnnc::sema;

//===----------------------------------------------------------------------===//
// Arguments
//===----------------------------------------------------------------------===//

BuiltinArgs sema::matchArgs(CallExpr &call, llvm::ArrayRef<StringRef> names,
                            size_t required, StringRef fn,
                            DiagnosticEngine &diags) {
  BuiltinArgs result;
  result.slots.assign(names.size(), nullptr);
  size_t position = 0;
  auto usage = [&]() {
    std::string sig = "(";
    for (size_t i = 0; i < names.size(); ++i)
      sig += (i ? ", " : "") + names[i].str() + (i >= required ? "=..." : "");
    return sig + ")";
  };
  for (Arg &arg : call.args) {
    size_t index;
    if (arg.keyword.name.empty()) {
      index = position++;
      if (index >= names.size()) {
        diags.report(arg.value->getLoc(), DiagID::err_builtin_arity, fn,
                     usage());
        result.ok = false;
        return result;
      }
    } else {
      auto it = llvm::find(names, StringRef(arg.keyword.name));
      if (it == names.end()) {
        diags.report(arg.keyword.loc, DiagID::err_unknown_keyword_arg, fn,
                     arg.keyword.name);
        result.ok = false;
        return result;
      }
      index = it - names.begin();
    }
    if (result.slots[index]) {
      diags.report(arg.value->getLoc(), DiagID::err_duplicate_arg,
                   names[index]);
      result.ok = false;
      return result;
    }
    result.slots[index] = arg.value.get();
  }
  for (size_t i = 0; i < required; ++i) {
    if (!result.slots[i]) {
      diags.report(call.getLoc(), DiagID::err_builtin_arity, fn, usage());
      result.ok = false;
      return result;
    }
  }
  return result;
}

//===----------------------------------------------------------------------===//
// Builtin functions
//===----------------------------------------------------------------------===//

ValueType Checker::checkBuiltin(CallExpr &call, StringRef name) {
  SMLoc loc = call.getLoc();
  auto axisOf = [&](Expr *e, const ValueType &x) -> std::optional<int64_t> {
    ValueType t = check(*e);
    if (t.isError())
      return std::nullopt;
    std::optional<int64_t> c =
        t.isIntConstant() ? t.intValue->getConstant() : std::nullopt;
    if (!c) {
      error(e->getLoc(), DiagID::err_constant_arg, "axis", name,
            "known integer", t.str());
      return std::nullopt;
    }
    return normalizeAxis(*c, x, e->getLoc());
  };
  auto boolOf = [&](Expr *e, bool &out) {
    if (!e)
      return true;
    ValueType t = check(*e);
    if (t.isError())
      return false;
    auto *lit = llvm::dyn_cast<BoolExpr>(e);
    if (!lit) {
      error(e->getLoc(), DiagID::err_constant_arg, "keepdims", name, "bool",
            t.str());
      return false;
    }
    out = lit->value;
    return true;
  };

  const BuiltinInfo *builtin = lookupBuiltin(name);
  if (!builtin) {
    error(loc, DiagID::err_not_callable, "'" + name.str() + "'");
    return ValueType::error();
  }
  switch (builtin->kind) {
  case BuiltinKind::Range:
    error(loc, DiagID::err_range_outside_for);
    return ValueType::error();

  case BuiltinKind::Where: {
    // where(condition, x, y): x where the condition is not 0, else y, all
    // three broadcast together (a comparison makes the condition).
    BuiltinArgs args = matchArgs(call, {"condition", "x", "y"}, 3, name, diags);
    if (!args.ok)
      return ValueType::error();
    std::optional<ValueType> operands[3];
    for (int i = 0; i < 3; ++i)
      operands[i] = requireTensor(*args.slots[i]);
    if (!operands[0] || !operands[1] || !operands[2])
      return ValueType::error();
    for (int i = 0; i < 3; ++i)
      if (!requireFloat(*operands[i], name, args.slots[i]->getLoc()))
        return ValueType::error();
    const std::optional<ValueType> &c = operands[0], &x = operands[1],
                                   &y = operands[2];
    ValueType values = elementwise(*x, *y, loc);
    if (values.isError())
      return values;
    ValueType result = elementwise(*c, values, loc);
    if (result.isError())
      return result;
    return runtimeFloat(std::move(result));
  }

  case BuiltinKind::Unary: {
    // Elementwise activations, some with a constant second argument.
    bool simpleUnary = builtin->param.empty();
    StringRef second = builtin->param;
    BuiltinArgs args = simpleUnary
                           ? matchArgs(call, {"x"}, 1, name, diags)
                           : matchArgs(call, {"x", second}, 1, name, diags);
    if (!args.ok)
      return ValueType::error();
    std::optional<ValueType> x = requireTensor(*args.slots[0]);
    if (!x || !requireFloat(*x, name, args.slots[0]->getLoc()))
      return ValueType::error();
    if (!simpleUnary && args.slots[1] &&
        !constantNumber(*args.slots[1], second, name))
      return ValueType::error();
    // Of a number too (sqrt(out_dim)): the result is a float.
    ValueType result = concretize(*x);
    if (result.elem == ElemType::WeakInt)
      result.elem = ElemType::F32;
    return result;
  }

  case BuiltinKind::LayerNorm: {
    // Over the last axis of x's rows (the features), as torch's layer_norm
    // with normalized_shape the last dimension.
    BuiltinArgs args = matchArgs(call, {"x", "eps"}, 1, name, diags);
    if (!args.ok)
      return ValueType::error();
    std::optional<ValueType> x = requireTensor(*args.slots[0]);
    if (!x || !requireFloat(*x, name, args.slots[0]->getLoc()))
      return ValueType::error();
    if (args.slots[1] && !constantNumber(*args.slots[1], "eps", name))
      return ValueType::error();
    return concretize(*x);
  }

  case BuiltinKind::BatchNorm: {
    // torch's batch_norm over the rows of x, each column (feature) on its
    // own; the running statistics are buffers, which a training forward
    // updates.
    BuiltinArgs args =
        matchArgs(call, {"x", "running_mean", "running_var", "momentum", "eps"},
                  3, name, diags);
    if (!args.ok)
      return ValueType::error();
    std::optional<ValueType> x = requireTensor(*args.slots[0]);
    if (!x || !requireFloat(*x, name, args.slots[0]->getLoc()))
      return ValueType::error();
    if (x->domain != Domain::Dense || x->shape.size() != 2) {
      diags.report(args.slots[0]->getLoc(), DiagID::err_batch_norm_input,
                   x->str());
      return ValueType::error();
    }
    bool ok = true;
    for (size_t i : {1, 2}) {
      StringRef argName = i == 1 ? "running_mean" : "running_var";
      Expr &arg = *args.slots[i];
      auto *ref = llvm::dyn_cast<NameExpr>(&arg);
      const Binding *binding = ref ? lookup(ref->name) : nullptr;
      if (!binding || binding->kind != Binding::Kind::Buffer) {
        ValueType t = check(arg);
        if (!t.isError())
          diags.report(arg.getLoc(), DiagID::err_batch_norm_buffer, argName,
                       binding ? getBindingKindName(binding->kind).str() +
                                     " '" + ref->name + "'"
                               : t.str());
        ok = false;
        continue;
      }
      ValueType t = check(arg);
      if (t.isError()) {
        ok = false;
        continue;
      }
      if (t.shape.size() != 1 || !(t.shape[0] == x->shape[1]) ||
          t.elem != x->elem) {
        diags.report(arg.getLoc(), DiagID::err_batch_norm_buffer_shape,
                     ref->name, x->shape[1].str(), t.str());
        ok = false;
        continue;
      }
      auto [it, fresh] = updatedBuffers.emplace(ref->name, arg.getLoc());
      if (!fresh) {
        diags.report(arg.getLoc(), DiagID::err_buffer_updated_twice, ref->name);
        diags.report(it->second, DiagID::note_buffer_updated_here);
        ok = false;
      }
    }
    if (args.slots[3]) {
      std::optional<double> m =
          constantNumber(*args.slots[3], "momentum", name);
      if (!m)
        ok = false;
      else if (!(*m >= 0.0 && *m <= 1.0)) {
        std::ostringstream text;
        text << *m;
        diags.report(args.slots[3]->getLoc(), DiagID::err_batch_norm_momentum,
                     text.str());
        ok = false;
      }
    }
    if (args.slots[4] && !constantNumber(*args.slots[4], "eps", name))
      ok = false;
    return ok ? concretize(*x) : ValueType::error();
  }

  case BuiltinKind::Extremum: {
    bool hasAxis = llvm::any_of(call.args, [](const Arg &a) {
      return a.keyword.name == "axis" || a.keyword.name == "keepdims";
    });
    if (!hasAxis) {
      BuiltinArgs args = matchArgs(call, {"a", "b"}, 2, name, diags);
      if (!args.ok)
        return ValueType::error();
      std::optional<ValueType> a = requireTensor(*args.slots[0]);
      std::optional<ValueType> b = requireTensor(*args.slots[1]);
      if (!a || !b)
        return ValueType::error();
      ValueType result = elementwise(*a, *b, loc);
      if (result.isError())
        return result;
      if (a->isIntConstant() && b->isIntConstant()) {
        std::optional<int64_t> ca = a->intValue->getConstant();
        std::optional<int64_t> cb = b->intValue->getConstant();
        if (ca && cb)
          return ValueType::intConstant(Dim::constant(
              name == "max" ? std::max(*ca, *cb) : std::min(*ca, *cb)));
      }
      result.intValue.reset();
      return result;
    }
    BuiltinArgs args =
        matchArgs(call, {"x", "axis", "keepdims"}, 2, name, diags);
    if (!args.ok)
      return ValueType::error();
    std::optional<ValueType> x = requireTensor(*args.slots[0]);
    if (!x)
      return ValueType::error();
    std::optional<int64_t> axis = axisOf(args.slots[1], *x);
    bool keep = false;
    if (!axis || !boolOf(args.slots[2], keep))
      return ValueType::error();
    return reduce(*x, axis, keep, loc);
  }

  case BuiltinKind::Reduction: {
    BuiltinArgs args =
        matchArgs(call, {"x", "axis", "keepdims"}, 1, name, diags);
    if (!args.ok)
      return ValueType::error();
    std::optional<ValueType> x = requireTensor(*args.slots[0]);
    if (!x)
      return ValueType::error();
    if (builtin->floatOnly && !requireFloat(*x, name, args.slots[0]->getLoc()))
      return ValueType::error();
    std::optional<int64_t> axis;
    if (args.slots[1]) {
      axis = axisOf(args.slots[1], *x);
      if (!axis)
        return ValueType::error();
    }
    bool keep = false;
    if (!boolOf(args.slots[2], keep))
      return ValueType::error();
    return reduce(*x, axis, keep, loc);
  }

  case BuiltinKind::Softmax: {
    BuiltinArgs args = matchArgs(call, {"x", "axis"}, 1, name, diags);
    if (!args.ok)
      return ValueType::error();
    std::optional<ValueType> x = requireTensor(*args.slots[0]);
    if (!x || !requireFloat(*x, name, args.slots[0]->getLoc()))
      return ValueType::error();
    if (x->shape.empty()) {
      error(loc, DiagID::err_axis_out_of_range, "-1", x->shapeStr());
      return ValueType::error();
    }
    if (args.slots[1] && !axisOf(args.slots[1], *x))
      return ValueType::error();
    return concretize(*x);
  }

  case BuiltinKind::Dropout: {
    BuiltinArgs args = matchArgs(call, {"x", "p"}, 2, name, diags);
    if (!args.ok)
      return ValueType::error();
    std::optional<ValueType> x = requireTensor(*args.slots[0]);
    if (!x || !requireFloat(*x, name, args.slots[0]->getLoc()))
      return ValueType::error();
    std::optional<double> p = constantNumber(*args.slots[1], "p", name);
    if (!p)
      return ValueType::error();
    if (!std::isnan(*p) && !(*p >= 0.0 && *p < 1.0)) {
      error(args.slots[1]->getLoc(), DiagID::err_probability, formatNumber(*p));
      return ValueType::error();
    }
    return concretize(*x);
  }

  case BuiltinKind::Transpose: {
    BuiltinArgs args = matchArgs(call, {"x"}, 1, name, diags);
    if (!args.ok)
      return ValueType::error();
    std::optional<ValueType> x = requireTensor(*args.slots[0]);
    if (!x)
      return ValueType::error();
    if (x->shape.size() != 2) {
      error(loc, DiagID::err_builtin_arity, name, "a tensor of rank 2");
      return ValueType::error();
    }
    ValueType result = concretize(*x);
    std::swap(result.shape[0], result.shape[1]);
    return result;
  }

  case BuiltinKind::Reshape: {
    BuiltinArgs args = matchArgs(call, {"x", "shape"}, 2, name, diags);
    if (!args.ok)
      return ValueType::error();
    std::optional<ValueType> x = requireTensor(*args.slots[0]);
    if (!x)
      return ValueType::error();
    auto *list = llvm::dyn_cast<ListExpr>(args.slots[1]);
    if (!list || list->elements.empty()) {
      if (!list)
        check(*args.slots[1]);
      error(args.slots[1]->getLoc(), DiagID::err_reshape_target);
      return ValueType::error();
    }
    list->type = ValueType::ofKind(ValueType::Kind::List);
    std::vector<Dim> shape;
    std::optional<size_t> inferred;
    Dim known = Dim::constant(1);
    bool ok = true;
    for (size_t i = 0; i < list->elements.size(); ++i) {
      ValueType d = check(*list->elements[i]);
      if (d.isError()) {
        ok = false;
        continue;
      }
      if (!d.isIntConstant()) {
        error(list->elements[i]->getLoc(), DiagID::err_reshape_target);
        ok = false;
        continue;
      }
      std::optional<int64_t> c = d.intValue->getConstant();
      if (c && *c == -1 && !inferred) {
        inferred = i;
        shape.push_back(Dim::constant(1));
        continue;
      }
      if (c && *c <= 0) {
        error(list->elements[i]->getLoc(), DiagID::err_dim_not_positive,
              std::to_string(*c));
        ok = false;
        continue;
      }
      shape.push_back(*d.intValue);
      std::optional<Dim> next = known.mul(*d.intValue);
      if (!next) {
        error(list->elements[i]->getLoc(), DiagID::err_dim_overflow);
        ok = false;
        continue;
      }
      known = *next;
    }
    if (!ok)
      return ValueType::error();
    Dim total = Dim::constant(1);
    for (const Dim &d : x->shape) {
      std::optional<Dim> next = total.mul(d);
      if (!next) {
        error(loc, DiagID::err_dim_overflow);
        return ValueType::error();
      }
      total = *next;
    }
    ValueType result = concretize(*x);
    if (inferred) {
      std::optional<Dim> rest = total.divExact(known);
      if (!rest) {
        std::vector<std::string> parts;
        for (size_t i = 0; i < shape.size(); ++i)
          parts.push_back(i == *inferred ? "-1" : shape[i].str());
        error(loc, DiagID::err_reshape_infer, x->shapeStr(),
              "[" + llvm::join(parts, ", ") + "]");
        return ValueType::error();
      }
      shape[*inferred] = *rest;
    } else if (known != total) {
      error(loc, DiagID::err_reshape_count, x->shapeStr(), shapeList(shape));
      return ValueType::error();
    }
    result.shape = std::move(shape);
    return result;
  }

  case BuiltinKind::Concat: {
    BuiltinArgs args = matchArgs(call, {"xs", "axis"}, 2, name, diags);
    if (!args.ok)
      return ValueType::error();
    auto *list = llvm::dyn_cast<ListExpr>(args.slots[0]);
    if (!list || list->elements.empty()) {
      error(loc, DiagID::err_concat_operands);
      return ValueType::error();
    }
    list->type = ValueType::ofKind(ValueType::Kind::List);
    std::optional<ValueType> result;
    std::vector<ValueType> operands;
    for (ExprPtr &e : list->elements) {
      std::optional<ValueType> t = requireTensor(*e);
      if (!t)
        return ValueType::error();
      operands.push_back(*t);
    }
    std::optional<int64_t> axis = axisOf(args.slots[1], operands[0]);
    if (!axis)
      return ValueType::error();
    ValueType acc = concretize(operands[0]);
    for (size_t i = 1; i < operands.size(); ++i) {
      const ValueType &t = operands[i];
      bool same = t.shape.size() == acc.shape.size();
      for (size_t d = 0; same && d < t.shape.size(); ++d)
        same = d == static_cast<size_t>(*axis) || t.shape[d] == acc.shape[d];
      if (!same) {
        error(list->elements[i]->getLoc(), DiagID::err_concat_mismatch,
              acc.shapeStr(), t.shapeStr());
        return ValueType::error();
      }
      // Element type and domain combine as for '+'; shapes were checked above.
      ValueType accScalar = acc, tScalar = concretize(t);
      accScalar.shape.clear();
      tScalar.shape.clear();
      ValueType merged =
          elementwise(accScalar, tScalar, list->elements[i]->getLoc());
      if (merged.isError())
        return merged;
      std::optional<Dim> sum = acc.shape[*axis].add(t.shape[*axis]);
      if (!sum) {
        error(loc, DiagID::err_dim_overflow);
        return ValueType::error();
      }
      acc.domain = merged.domain;
      acc.direction = merged.direction;
      acc.shape[*axis] = *sum;
    }
    return acc;
  }
  }
  llvm_unreachable("unknown builtin kind");
}
