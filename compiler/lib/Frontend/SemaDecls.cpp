//===- SemaDecls.cpp - Hyper-parameters, parameters and instances ---------===//
//
// Part of gnnc. Checks the declarations of a definition: its int and float
// hyper-parameters (int ones are symbols), its parameters and their
// initialisers, its layer instances (which bind a callee's hyper-parameters)
// and the types written in signatures, whose dimensions are polynomials over
// hyper-parameters and graph sizes.
//
//===----------------------------------------------------------------------===//

#include "SemaInternal.h"

using namespace gnnc;
using namespace gnnc::sema;

//===----------------------------------------------------------------------===//
// Declarations
//===----------------------------------------------------------------------===//

void Checker::checkHyperParams(DefInfo &info) {
  for (HyperParam &hp : info.def->hyperParams) {
    HyperParamInfo hpInfo;
    hpInfo.name = hp.name.name;
    hpInfo.isFloat = hp.isFloat;
    hpInfo.loc = hp.name.loc;
    if (hp.defaultValue) {
      hpInfo.hasDefault = true;
      ValueType t = check(*hp.defaultValue);
      if (!t.isError()) {
        if (!hp.isFloat) {
          if (!t.isIntConstant())
            error(hp.defaultValue->getLoc(), DiagID::err_hparam_default_type,
                  hp.name.name, t.str());
          else
            hpInfo.defaultValue = t.intValue;
        } else if (!t.isScalar() || t.elem == ElemType::Bool ||
                   !(t.isIntConstant() || t.isConstant)) {
          error(hp.defaultValue->getLoc(), DiagID::err_float_hparam_default,
                hp.name.name, t.str());
        }
      }
    }
    ValueType type = hp.isFloat
                         ? ValueType::floatConstant(std::nullopt)
                         : ValueType::intConstant(Dim::symbol(hp.name.name));
    if (declare(hp.name.name, Binding::Kind::HyperParam, type, hp.name.loc))
      info.hyperParams.push_back(std::move(hpInfo));
  }
}

void Checker::checkParams(Definition &def) {
  for (ParamDecl &param : def.params) {
    std::optional<ValueType> type = resolveType(param.type, "");
    if (type &&
        (type->kind != ValueType::Kind::Tensor || !isFloatElem(type->elem))) {
      error(param.type.loc, DiagID::err_param_not_float, param.name.name,
            type->str());
      type.reset();
    }
    if (type) {
      for (const Dim &d : type->shape) {
        if (mentionsGraphSize(d)) {
          error(param.type.loc, DiagID::err_param_graph_size, param.name.name,
                d.str());
          type.reset();
          break;
        }
      }
    }
    if (!type) {
      // Declared anyway, as an error value, so uses stay quiet.
      declare(param.name.name, Binding::Kind::Param, ValueType::error(),
              param.name.loc);
      continue;
    }
    if (!param.init.name.empty()) {
      bool known = llvm::StringSwitch<bool>(param.init.name)
                       .Cases("glorot", "kaiming", "zeros", "ones", "normal",
                              "uniform", true)
                       .Default(false);
      if (!known)
        error(param.init.loc, DiagID::err_unknown_initializer, param.init.name);
      for (Arg &arg : param.initArgs) {
        ValueType t = check(*arg.value);
        if (!t.isError() && !(t.isIntConstant() || t.isConstant))
          error(arg.value->getLoc(), DiagID::err_initializer_arg);
      }
    }
    param.resolvedType = *type;
    declare(param.name.name, Binding::Kind::Param, *type, param.name.loc);
  }
}

void Checker::checkInstances(Definition &def) {
  for (InstanceDecl &inst : def.instances) {
    auto it = defs.find(inst.callee.name);
    if (it == defs.end()) {
      error(inst.callee.loc, DiagID::err_unknown_layer, inst.callee.name);
      continue;
    }
    DefInfo &callee = it->second;
    if (callee.state != DefInfo::State::Done) {
      // A cycle, reported where it was found; its signature is unknown.
      for (Arg &arg : inst.args)
        check(*arg.value);
      declare(inst.name.name, Binding::Kind::Instance,
              ValueType::ofKind(ValueType::Kind::Layer), inst.name.loc);
      continue;
    }
    InstanceInfo info;
    info.callee = inst.callee.name;
    bool ok = callee.state == DefInfo::State::Done;
    std::vector<bool> bound(callee.hyperParams.size(), false);
    size_t position = 0;
    for (Arg &arg : inst.args) {
      ValueType t = check(*arg.value);
      size_t index;
      if (arg.keyword.name.empty()) {
        index = position++;
        if (index >= callee.hyperParams.size()) {
          error(arg.value->getLoc(), DiagID::err_too_many_args,
                inst.callee.name,
                std::to_string(callee.hyperParams.size()) +
                    (callee.hyperParams.size() == 1 ? " hyper-parameter"
                                                    : " hyper-parameters"));
          ok = false;
          break;
        }
      } else {
        auto found = llvm::find_if(callee.hyperParams, [&](auto &hp) {
          return hp.name == arg.keyword.name;
        });
        if (found == callee.hyperParams.end()) {
          error(arg.keyword.loc, DiagID::err_unknown_keyword, inst.callee.name,
                arg.keyword.name);
          ok = false;
          continue;
        }
        index = found - callee.hyperParams.begin();
      }
      const HyperParamInfo &hp = callee.hyperParams[index];
      if (bound[index]) {
        error(arg.value->getLoc(), DiagID::err_duplicate_arg, hp.name);
        ok = false;
        continue;
      }
      bound[index] = true;
      if (t.isError()) {
        ok = false;
        continue;
      }
      if (!hp.isFloat) {
        if (!t.isIntConstant()) {
          error(arg.value->getLoc(), DiagID::err_hparam_arg_type, hp.name,
                "an int", t.str());
          error(hp.loc, DiagID::note_declared_here, hp.name);
          ok = false;
          continue;
        }
        info.bindings[hp.name] = *t.intValue;
      } else if (!t.isScalar() || t.elem == ElemType::Bool ||
                 !(t.isIntConstant() || t.isConstant)) {
        error(arg.value->getLoc(), DiagID::err_hparam_arg_type, hp.name,
              "a float", t.str());
        error(hp.loc, DiagID::note_declared_here, hp.name);
        ok = false;
      }
    }
    for (size_t i = 0; i < callee.hyperParams.size(); ++i) {
      const HyperParamInfo &hp = callee.hyperParams[i];
      if (bound[i])
        continue;
      if (!hp.hasDefault) {
        error(inst.callee.loc, DiagID::err_missing_arg, hp.name,
              inst.callee.name);
        ok = false;
        continue;
      }
      if (!hp.isFloat && hp.defaultValue) {
        // Defaults may use earlier hyper-parameters of the callee.
        std::optional<Dim> value = hp.defaultValue->substitute(info.bindings);
        if (!value) {
          error(inst.callee.loc, DiagID::err_dim_overflow);
          ok = false;
          continue;
        }
        info.bindings[hp.name] = *value;
      }
    }
    ValueType type = ValueType::ofKind(ValueType::Kind::Layer);
    type.name = ok ? inst.callee.name : "";
    if (declare(inst.name.name, Binding::Kind::Instance, type, inst.name.loc) &&
        ok)
      instances[inst.name.name] = std::move(info);
  }
}

//===----------------------------------------------------------------------===//
// Types and dimensions
//===----------------------------------------------------------------------===//

std::optional<Dim> Checker::evalDim(Expr &expr) {
  ValueType t = check(expr);
  if (t.isError())
    return std::nullopt;
  if (!t.isIntConstant()) {
    error(expr.getLoc(), DiagID::err_dim_not_int, t.str());
    return std::nullopt;
  }
  std::optional<int64_t> c = t.intValue->getConstant();
  if ((c && *c <= 0) || t.intValue->isNegativeDefinite()) {
    error(expr.getLoc(), DiagID::err_dim_not_positive, t.intValue->str());
    return std::nullopt;
  }
  return t.intValue;
}

std::optional<ValueType> Checker::resolveType(const TypeExpr &type,
                                              StringRef graphKey) {
  auto graph = [&](GraphKind kind) {
    ValueType t = ValueType::ofKind(ValueType::Kind::Graph);
    t.graphKind = kind;
    t.name = graphKey.str();
    return t;
  };
  switch (type.kind) {
  case TypeExpr::Kind::Graph:
    return graph(GraphKind::Graph);
  case TypeExpr::Kind::Block:
    return graph(GraphKind::Block);
  case TypeExpr::Kind::BatchedGraph:
    return graph(GraphKind::BatchedGraph);
  case TypeExpr::Kind::HeteroGraph:
    return graph(GraphKind::HeteroGraph);
  case TypeExpr::Kind::Int:
    return ValueType::tensor(ElemType::WeakInt, {});
  case TypeExpr::Kind::Float:
    return ValueType::tensor(ElemType::WeakFloat, {});
  case TypeExpr::Kind::Tensor:
    break;
  }
  std::vector<Dim> shape;
  bool ok = true;
  for (const ExprPtr &dimExpr : type.dims) {
    std::optional<Dim> dim = evalDim(*dimExpr);
    if (!dim)
      ok = false;
    else
      shape.push_back(*dim);
  }
  if (!ok)
    return std::nullopt;
  return ValueType::tensor(type.elemType, std::move(shape));
}
