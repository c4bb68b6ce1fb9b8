//===- Sema.cpp - Semantic analysis of .gnn modules -----------------------===//
//
// Part of gnnc.
//
// Each layer is checked once, generically: an int hyper-parameter is a
// symbol, so shapes are polynomials over hyper-parameters and graph sizes.
// An instance binds a callee's hyper-parameters, and a call substitutes the
// bindings into the callee's signature. Domains follow the vertex-centric
// model: inside `for v in g.dst_vertex`, `v.x` is per-destination, `u.x` in a
// comprehension over `v.innbs` is per-source, and the comprehension itself is
// a per-edge neighbour list that an aggregation turns back into a
// per-destination value.
//
// This file holds the driver, the order in which definitions are checked,
// forwards and scopes; SemaInternal.h lists the other phases.
//
//===----------------------------------------------------------------------===//

#include "SemaInternal.h"

using namespace gnnc;
using namespace gnnc::sema;

//===----------------------------------------------------------------------===//
// Driver and definitions
//===----------------------------------------------------------------------===//

bool Checker::run() {
  for (auto &def : module.definitions) {
    auto [it, inserted] = defs.try_emplace(def->name.name);
    if (!inserted) {
      error(def->name.loc, DiagID::err_redefinition, def->name.name);
      error(it->second.def->name.loc, DiagID::note_previous_definition,
            def->name.name);
      continue;
    }
    it->second.def = def.get();
  }
  for (auto &def : module.definitions) {
    if (diags.shouldStop())
      break;
    DefInfo &info = defs[def->name.name];
    if (info.def == def.get() && info.state == DefInfo::State::Unvisited)
      checkDefinition(info);
  }
  return !diags.hadError();
}

void Checker::checkDefinition(DefInfo &info) {
  info.state = DefInfo::State::InProgress;
  Definition &def = *info.def;

  // Callees are checked first: a call needs the callee's signature.
  for (InstanceDecl &inst : def.instances) {
    auto it = defs.find(inst.callee.name);
    if (it == defs.end())
      continue; // reported with the instance
    if (it->second.state == DefInfo::State::InProgress) {
      error(inst.callee.loc, DiagID::err_recursive_instance, inst.callee.name);
      continue;
    }
    if (it->second.state == DefInfo::State::Unvisited) {
      // Checking callees first recurses; bound it so a long chain of
      // definitions cannot exhaust the stack.
      if (nesting >= FrontendLimits::maxInstanceNesting) {
        error(inst.callee.loc, DiagID::err_instance_too_deep,
              FrontendLimits::maxInstanceNesting);
        continue;
      }
      ++nesting;
      checkDefinition(it->second);
      --nesting;
    }
  }

  // Save and reset per-definition state (recursion above may have used it).
  DefInfo *savedCurrent = current;
  auto savedScopes = std::move(scopes);
  auto savedInstances = std::move(instances);
  GraphKind savedGraphKind = graphKind;
  auto savedNamedSizes = std::move(namedSizes);
  auto savedBlockSizes = std::move(blockSizes);
  auto savedBadBlockArgs = std::move(badBlockArgs);
  auto savedSizeNames = std::move(sizeNames);
  std::string savedSizesText = std::move(namedSizesText);
  bool savedEdgeDefault = edgeDefaultValid;
  current = &info;
  scopes.clear();
  scopes.emplace_back();
  instances.clear();

  // The graph kind decides how N, N_src and N_dst resolve in every type of
  // this definition.
  graphKind = GraphKind::Graph;
  for (ForwardDef &fwd : def.forwards)
    for (ForwardArg &arg : fwd.args)
      if (arg.type.kind == TypeExpr::Kind::Block) {
        graphKind = GraphKind::Block;
        break;
      }
  collectBlockSizes(def);

  checkHyperParams(info);
  checkParams(def);
  checkInstances(def);

  StringRef what = def.isModel ? "model" : "layer";
  if (def.forwards.empty()) {
    error(def.name.loc, DiagID::err_no_forward, what, def.name.name);
  }
  for (size_t i = 0; i < def.forwards.size(); ++i) {
    ForwardDef &fwd = def.forwards[i];
    if (fwd.name.name != "forward") {
      error(fwd.name.loc, DiagID::err_forward_name, fwd.name.name);
      continue;
    }
    if (info.hasSignature) {
      error(fwd.name.loc, DiagID::err_redefinition, "forward");
      error(info.def->forwards[0].name.loc, DiagID::note_previous_definition,
            "forward");
      continue;
    }
    checkForward(info, fwd);
  }

  current = savedCurrent;
  scopes = std::move(savedScopes);
  instances = std::move(savedInstances);
  graphKind = savedGraphKind;
  namedSizes = std::move(savedNamedSizes);
  blockSizes = std::move(savedBlockSizes);
  badBlockArgs = std::move(savedBadBlockArgs);
  sizeNames = std::move(savedSizeNames);
  namedSizesText = std::move(savedSizesText);
  edgeDefaultValid = savedEdgeDefault;
  info.state = DefInfo::State::Done;
}

void Checker::checkForward(DefInfo &info, ForwardDef &fwd) {
  scopes.emplace_back();
  forward = &fwd;
  updatedBuffers.clear();
  attrTables.clear();
  expired.clear();
  vertex.reset();
  comprehensions.clear();
  inRangeLoop = false;
  returned = false;

  bool signatureOk = true;
  graphArgs.clear();
  for (ForwardArg &arg : fwd.args) {
    std::optional<ValueType> type = resolveType(arg.type, arg.name.name);
    if (type && type->kind == ValueType::Kind::Graph)
      graphArgs.push_back({arg.name.name, graphSizeNames(*type), arg.type.loc});
    if (!type) {
      signatureOk = false;
      declare(arg.name.name, Binding::Kind::Arg, ValueType::error(),
              arg.name.loc);
      continue;
    }
    info.argTypes.push_back(*type);
    info.argLocs.push_back(arg.type.loc);
    declare(arg.name.name, Binding::Kind::Arg, *type, arg.name.loc);
  }
  std::optional<ValueType> declared;
  if (fwd.resultType) {
    declared = resolveType(*fwd.resultType, "");
    if (!declared)
      signatureOk = false;
    else if (declared->kind != ValueType::Kind::Tensor) {
      error(fwd.resultType->loc, DiagID::err_return_not_tensor,
            declared->str());
      signatureOk = false;
      declared.reset();
    }
  }

  declaredResult = declared;
  checkBody(fwd.body, /*topLevel=*/true);
  if (!returned && !diags.shouldStop())
    error(fwd.loc, DiagID::err_missing_return);

  // The result type is the declared one when there is one, so that callers
  // see the documented signature even when the body has errors.
  if (declared) {
    info.result = *declared;
  } else {
    for (auto &stmt : fwd.body)
      if (auto *ret = llvm::dyn_cast<ReturnStmt>(stmt.get()))
        if (ret->value->type && ret->value->type->isTensor())
          info.result = concretize(*ret->value->type);
  }
  fwd.resolvedResult = info.result;
  info.hasSignature = signatureOk && !info.result.isError();
  scopes.pop_back();
}

//===----------------------------------------------------------------------===//
// Scopes
//===----------------------------------------------------------------------===//

bool Checker::declare(StringRef name, Binding::Kind kind, ValueType type,
                      SMLoc loc) {
  if (isSizeSymbol(name)) {
    error(loc, DiagID::err_already_defined, name);
    return false;
  }
  if (auto size = namedSizes.find(name.str()); size != namedSizes.end()) {
    error(loc, DiagID::err_already_defined, name);
    error(size->second.front().loc, DiagID::note_previous_definition, name);
    return false;
  }
  for (auto &scope : scopes) {
    auto it = scope.find(name.str());
    if (it != scope.end()) {
      error(loc, DiagID::err_already_defined, name);
      error(it->second.loc, DiagID::note_previous_definition, name);
      return false;
    }
  }
  scopes.back()[name.str()] = Binding{kind, std::move(type), loc};
  expired.erase(name.str());
  return true;
}

const Binding *Checker::lookup(StringRef name) const {
  for (auto it = scopes.rbegin(); it != scopes.rend(); ++it) {
    auto found = it->find(name.str());
    if (found != it->end())
      return &found->second;
  }
  return nullptr;
}

StringRef sema::getBindingKindName(Binding::Kind kind) {
  switch (kind) {
  case Binding::Kind::HyperParam:
    return "hyper-parameter";
  case Binding::Kind::Param:
    return "parameter";
  case Binding::Kind::Buffer:
    return "buffer";
  case Binding::Kind::Instance:
    return "layer instance";
  case Binding::Kind::Arg:
    return "argument";
  case Binding::Kind::Local:
    return "local";
  case Binding::Kind::LoopVar:
    return "loop variable";
  case Binding::Kind::CompVar:
    return "comprehension variable";
  }
  return "name";
}

bool gnnc::checkModule(Module &module, DiagnosticEngine &diags) {
  Checker checker(module, diags);
  return checker.run();
}
