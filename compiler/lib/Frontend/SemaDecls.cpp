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
        if (mentionsGraphSize(d, sizeNames)) {
          error(param.type.loc, DiagID::err_param_graph_size, param.name.name,
                d.str());
          type.reset();
          break;
        }
      }
    }
    if (!type) {
      // Declared anyway, as an error value, so uses stay quiet.
      declare(param.name.name,
              param.isBuffer ? Binding::Kind::Buffer : Binding::Kind::Param,
              ValueType::error(), param.name.loc);
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
    declare(param.name.name,
            param.isBuffer ? Binding::Kind::Buffer : Binding::Kind::Param,
            *type, param.name.loc);
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
  case TypeExpr::Kind::Block: {
    ValueType t = graph(GraphKind::Block);
    if (badBlockArgs.count(graphKey.str()))
      return std::nullopt; // its names were reported
    auto named = blockSizes.find(graphKey.str());
    if (!type.dims.empty() && named != blockSizes.end()) {
      t.srcSize = named->second.src;
      t.dstSize = named->second.dst;
      t.edgeSize = named->second.edge;
    }
    return t;
  }
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

//===----------------------------------------------------------------------===//
// Sizes named by Block arguments
//===----------------------------------------------------------------------===//

void Checker::collectBlockSizes(Definition &def) {
  namedSizes.clear();
  blockSizes.clear();
  badBlockArgs.clear();
  sizeNames.clear();
  namedSizesText.clear();
  edgeDefaultValid = true;
  // Only the first forward counts: a second one is an error of its own.
  auto fwd = llvm::find_if(def.forwards, [](const ForwardDef &f) {
    return f.name.name == "forward";
  });
  if (fwd == def.forwards.end())
    return;
  auto isGraph = [](const ForwardArg &arg) {
    return arg.type.kind != TypeExpr::Kind::Int &&
           arg.type.kind != TypeExpr::Kind::Float &&
           arg.type.kind != TypeExpr::Kind::Tensor;
  };
  size_t numGraphs = llvm::count_if(fwd->args, isGraph);
  // The names the definition declares before its forward.
  std::map<std::string, SMLoc> declared;
  for (const HyperParam &hp : def.hyperParams)
    declared.emplace(hp.name.name, hp.name.loc);
  for (const ParamDecl &p : def.params)
    declared.emplace(p.name.name, p.name.loc);
  for (const InstanceDecl &inst : def.instances)
    declared.emplace(inst.name.name, inst.name.loc);
  std::vector<std::string> written;
  for (const ForwardArg &arg : fwd->args) {
    if (!isGraph(arg))
      continue;
    const std::string &argName = arg.name.name;
    if (arg.type.kind != TypeExpr::Kind::Block || arg.type.dims.empty()) {
      if (numGraphs > 1) {
        error(arg.type.loc, DiagID::err_several_graphs_unnamed, argName);
        badBlockArgs.insert(argName);
      }
      continue;
    }
    const std::vector<ExprPtr> &dims = arg.type.dims;
    const Domain sides[] = {Domain::Src, Domain::Dst, Domain::Edge};
    bool ok = true;
    if (dims.size() != 2 && dims.size() != 3) {
      error(dims[0]->getLoc(), DiagID::err_block_size_count, dims.size());
      ok = false;
    }
    // The names that can be sizes are declared even when the type is wrong,
    // so that their uses say nothing more.
    std::vector<std::string> names;
    for (const ExprPtr &dim : dims) {
      auto *name = llvm::dyn_cast<NameExpr>(dim.get());
      if (!name) {
        std::string what = "an expression";
        if (auto *i = llvm::dyn_cast<IntExpr>(dim.get()))
          what = "the number " + std::to_string(i->value);
        if (ok)
          error(dim->getLoc(), DiagID::err_block_size_name, what);
        ok = false;
        continue;
      }
      if (isSizeSymbol(name->name)) {
        if (ok)
          error(dim->getLoc(), DiagID::err_block_size_reserved, name->name);
        ok = false;
        continue;
      }
      if (auto prior = declared.find(name->name); prior != declared.end()) {
        if (ok) {
          error(dim->getLoc(), DiagID::err_already_defined, name->name);
          error(prior->second, DiagID::note_previous_definition, name->name);
        }
        ok = false;
        continue;
      }
      if (llvm::is_contained(names, name->name)) {
        if (ok)
          error(dim->getLoc(), DiagID::err_block_size_twice, name->name,
                argName);
        ok = false;
        continue;
      }
      names.push_back(name->name);
      size_t k = names.size() - 1;
      namedSizes[name->name].push_back(
          {argName, sides[std::min<size_t>(k, 2)], dim->getLoc()});
      if (!llvm::is_contained(sizeNames, name->name))
        sizeNames.push_back(name->name);
    }
    if (!ok) {
      badBlockArgs.insert(argName);
      edgeDefaultValid = false;
      continue;
    }
    GraphSizeNames sizes;
    sizes.src = names[0];
    sizes.dst = names[1];
    // A lone graph keeps `E` for its edges unless it names them; among
    // several, an unnamed edge count gets a symbol no source spells.
    sizes.edge = names.size() == 3 ? names[2]
                 : numGraphs == 1  ? std::string(sym::E)
                                   : argName + ".n_edges";
    if (names.size() == 3 || numGraphs > 1)
      edgeDefaultValid = false;
    if (!llvm::is_contained(sizeNames, sizes.edge) && sizes.edge != sym::E)
      sizeNames.push_back(sizes.edge);
    written.push_back(argName + ": Block[" + llvm::join(names, ", ") + "]");
    blockSizes[argName] = std::move(sizes);
  }
  namedSizesText = llvm::join(written, ", ");
}
