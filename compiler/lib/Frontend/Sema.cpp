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
//===----------------------------------------------------------------------===//

#include "gnnc/Frontend/Sema.h"
#include "gnnc/Frontend/Lexer.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/StringSwitch.h"

#include <cmath>
#include <map>

using namespace gnnc;
using llvm::SMLoc;
using llvm::StringRef;

namespace {

struct Binding {
  enum class Kind { HyperParam, Param, Instance, Arg, Local, LoopVar, CompVar };
  Kind kind;
  ValueType type;
  SMLoc loc;
};

StringRef getBindingKindName(Binding::Kind kind) {
  switch (kind) {
  case Binding::Kind::HyperParam:
    return "hyper-parameter";
  case Binding::Kind::Param:
    return "parameter";
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

/// An attribute attached to a graph: its element type and row shape.
struct AttrInfo {
  ValueType type;
  SMLoc loc;
};

struct AttrTables {
  std::map<std::string, AttrInfo> src, dst, edge;
};

struct HyperParamInfo {
  std::string name;
  bool isFloat = false;
  bool hasDefault = false;
  std::optional<Dim> defaultValue; // int hyper-parameters only
  SMLoc loc;
};

struct InstanceInfo {
  std::string callee;
  std::map<std::string, Dim> bindings;
};

/// What callers need to know about a layer: its hyper-parameters and the
/// signature of its forward, in the layer's own symbols.
struct DefInfo {
  Definition *def = nullptr;
  enum class State { Unvisited, InProgress, Done } state = State::Unvisited;
  bool hasSignature = false;
  std::vector<HyperParamInfo> hyperParams;
  std::vector<ValueType> argTypes;
  std::vector<SMLoc> argLocs;
  ValueType result;
};

/// The vertex loop (or vertex collection) being checked.
struct VertexContext {
  Domain side;
  std::string graphKey;
  GraphKind graphKind;
  std::string var;
  /// Index in the scope stack of the loop's own scope.
  size_t scope;
};

class Checker {
public:
  Checker(Module &module, DiagnosticEngine &diags)
      : module(module), diags(diags) {}
  bool run();

private:
  template <typename... Ts> void error(SMLoc loc, DiagID id, Ts &&...args) {
    diags.report(loc, id, std::forward<Ts>(args)...);
  }

  // Definitions.
  void checkDefinition(DefInfo &info);
  void checkHyperParams(DefInfo &info);
  void checkParams(Definition &def);
  void checkInstances(Definition &def);
  void checkForward(DefInfo &info, ForwardDef &fwd);
  std::optional<ValueType> resolveType(const TypeExpr &type,
                                       StringRef graphKey);
  std::optional<Dim> evalDim(Expr &expr);
  bool declare(StringRef name, Binding::Kind kind, ValueType type, SMLoc loc);

  // Statements.
  void checkBody(StmtList &body, bool topLevel);
  void checkStmt(Stmt &stmt);
  void checkAssign(AssignStmt &stmt);
  void checkAttrAssign(AttrAssignStmt &stmt);
  void checkExprStmt(ExprStmt &stmt);
  void checkVertexLoop(VertexLoopStmt &stmt);
  void checkRangeLoop(RangeLoopStmt &stmt);
  void checkSetAttr(CallExpr &call, const ValueType &graph, StringRef method);

  // Expressions.
  ValueType check(Expr &expr);
  ValueType checkExpr(Expr &expr);
  ValueType checkName(NameExpr &expr);
  ValueType checkAttr(AttrExpr &expr);
  ValueType checkCall(CallExpr &expr);
  ValueType checkBinary(BinaryExpr &expr);
  ValueType checkComprehension(ComprehensionExpr &expr);
  ValueType checkBuiltin(CallExpr &call, StringRef name);
  ValueType checkGraphMethod(CallExpr &call, const ValueType &graph,
                             StringRef method);
  ValueType checkLayerCall(CallExpr &call, const ValueType &layer);
  ValueType elementwise(const ValueType &a, const ValueType &b, SMLoc loc);
  ValueType reduce(const ValueType &x, std::optional<int64_t> axis,
                   bool keepDims, SMLoc loc);
  std::optional<int64_t> normalizeAxis(int64_t axis, const ValueType &x,
                                       SMLoc loc);
  std::optional<ValueType> requireTensor(Expr &expr);
  std::optional<double> constantNumber(Expr &expr, StringRef argName,
                                       StringRef fn);
  bool requireFloat(const ValueType &t, StringRef what, SMLoc loc);

  // Names and sizes.
  const Binding *lookup(StringRef name) const;
  std::optional<ValueType> sizeSymbol(StringRef name, SMLoc loc);
  Dim sideCount(Domain side, GraphKind kind) const;
  AttrTables &attrs(StringRef graphKey) { return attrTables[graphKey.str()]; }

  Module &module;
  DiagnosticEngine &diags;
  std::map<std::string, DefInfo> defs;
  DefInfo *current = nullptr;
  std::map<std::string, InstanceInfo> instances;

  std::vector<std::map<std::string, Binding>> scopes;
  /// Names that went out of scope, to explain a later use.
  std::map<std::string, std::pair<DiagID, SMLoc>> expired;
  GraphKind graphKind = GraphKind::Graph;
  std::map<std::string, AttrTables> attrTables;
  std::optional<VertexContext> vertex;
  /// Directions of the enclosing comprehensions over a neighbourhood.
  std::vector<Direction> comprehensions;
  bool inRangeLoop = false;
  bool returned = false;
  ForwardDef *forward = nullptr;
  /// The resolved `-> type` of the forward being checked, if valid.
  std::optional<ValueType> declaredResult;
  unsigned nesting = 0;
};

} // namespace

//===----------------------------------------------------------------------===//
// Small helpers
//===----------------------------------------------------------------------===//

static bool isWeak(ElemType t) {
  return t == ElemType::WeakFloat || t == ElemType::WeakInt;
}

/// Type of a value once stored: a Python number stored in a tensor is f32.
static ValueType concretize(ValueType t) {
  if (t.elem == ElemType::WeakFloat)
    t.elem = ElemType::F32;
  t.intValue.reset();
  t.floatValue.reset();
  t.isConstant = false;
  return t;
}

static bool sameTensorType(const ValueType &a, const ValueType &b) {
  return a.kind == b.kind && a.elem == b.elem && a.shape == b.shape &&
         a.domain == b.domain;
}

static std::string shapeList(const std::vector<Dim> &shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    out += (i ? ", " : "") + shape[i].str();
  return out + "]";
}

static bool isAggregation(StringRef name) {
  return name == "sum" || name == "avg" || name == "max" || name == "min";
}

static bool isGraphMethod(StringRef name) {
  return llvm::StringSwitch<bool>(name)
      .Cases("sum", "avg", "max", "min", "softmax", "dot", true)
      .Cases("set_vertex_attr", "set_src_attr", "set_dst_attr", "set_edge_attr",
             true)
      .Cases("in_degree", "out_degree", "relation", true)
      .Cases("sum_nodes", "avg_nodes", "max_nodes", true)
      .Default(false);
}

static bool isBuiltin(StringRef name) {
  return llvm::StringSwitch<bool>(name)
      .Cases("exp", "log", "sqrt", "rsqrt", "abs", "relu", "sigmoid", true)
      .Cases("tanh", "gelu", "elu", "leaky_relu", true)
      .Cases("max", "min", "sum", "mean", true)
      .Cases("reshape", "concat", "transpose", "softmax", "log_softmax", true)
      .Cases("dropout", "range", true)
      .Default(false);
}

static bool isSizeSymbol(StringRef name) {
  return name == sym::N || name == sym::NSrc || name == sym::NDst ||
         name == sym::E || name == sym::B;
}

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
  info.state = DefInfo::State::Done;
}

bool Checker::declare(StringRef name, Binding::Kind kind, ValueType type,
                      SMLoc loc) {
  if (isSizeSymbol(name)) {
    error(loc, DiagID::err_already_defined, name);
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

void Checker::checkForward(DefInfo &info, ForwardDef &fwd) {
  scopes.emplace_back();
  forward = &fwd;
  attrTables.clear();
  expired.clear();
  vertex.reset();
  comprehensions.clear();
  inRangeLoop = false;
  returned = false;

  bool signatureOk = true;
  for (ForwardArg &arg : fwd.args) {
    std::optional<ValueType> type = resolveType(arg.type, arg.name.name);
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

const Binding *Checker::lookup(StringRef name) const {
  for (auto it = scopes.rbegin(); it != scopes.rend(); ++it) {
    auto found = it->find(name.str());
    if (found != it->end())
      return &found->second;
  }
  return nullptr;
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
      if (method.starts_with("set_") && isGraphMethod(method)) {
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
  Dim rows =
      method == "set_edge_attr"  ? Dim::symbol(sym::E)
      : method == "set_src_attr" ? sideCount(Domain::Src, graph.graphKind)
      : method == "set_dst_attr" ? sideCount(Domain::Dst, graph.graphKind)
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
  v.graphKind = graph.graphKind;
  v.name = graph.name;
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

Dim Checker::sideCount(Domain side, GraphKind kind) const {
  if (kind != GraphKind::Block)
    return Dim::symbol(sym::N);
  return Dim::symbol(side == Domain::Src ? sym::NSrc : sym::NDst);
}

std::optional<ValueType> Checker::sizeSymbol(StringRef name, SMLoc loc) {
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
      if (mentionsGraphSize(d)) {
        error(expr.getLoc(), DiagID::err_vertex_axis_in_loop, expr.name,
              t.shapeStr());
        return ValueType::error();
      }
    }
  }
  return t;
}

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
      set.graphKind = base.graphKind;
      set.name = base.name;
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
      nbrs.graphKind = base.graphKind;
      nbrs.name = base.name;
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
    u.graphKind = source.graphKind;
    u.name = source.name;
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
    v.graphKind = source.graphKind;
    v.name = source.name;
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
    result.shape.insert(result.shape.begin(),
                        sideCount(source.side, source.graphKind));
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

ValueType Checker::checkBinary(BinaryExpr &expr) {
  std::optional<ValueType> lhs = requireTensor(*expr.lhs);
  std::optional<ValueType> rhs = requireTensor(*expr.rhs);
  if (!lhs || !rhs)
    return ValueType::error();
  SMLoc loc = expr.opLoc;

  // Compile-time integer arithmetic: dimensions and trip counts.
  if (lhs->isIntConstant() && rhs->isIntConstant()) {
    std::optional<Dim> value;
    switch (expr.op) {
    case BinaryOp::Add:
      value = lhs->intValue->add(*rhs->intValue);
      break;
    case BinaryOp::Sub:
      value = lhs->intValue->sub(*rhs->intValue);
      break;
    case BinaryOp::Mul:
      value = lhs->intValue->mul(*rhs->intValue);
      break;
    case BinaryOp::FloorDiv: {
      std::optional<int64_t> a = lhs->intValue->getConstant();
      std::optional<int64_t> b = rhs->intValue->getConstant();
      if (!a || !b || *b == 0) {
        error(loc, DiagID::err_floordiv_symbolic, lhs->intValue->str(),
              rhs->intValue->str());
        return ValueType::error();
      }
      if (*a == INT64_MIN && *b == -1) {
        error(loc, DiagID::err_dim_overflow);
        return ValueType::error();
      }
      int64_t q = *a / *b;
      if ((*a % *b != 0) && ((*a < 0) != (*b < 0)))
        --q;
      return ValueType::intConstant(Dim::constant(q));
    }
    case BinaryOp::Div: {
      std::optional<int64_t> a = lhs->intValue->getConstant();
      std::optional<int64_t> b = rhs->intValue->getConstant();
      std::optional<double> v;
      if (a && b && *b != 0)
        v = static_cast<double>(*a) / static_cast<double>(*b);
      return ValueType::floatConstant(v);
    }
    case BinaryOp::Pow:
    case BinaryOp::MatMul:
      break;
    }
    if (expr.op != BinaryOp::Pow && expr.op != BinaryOp::MatMul) {
      if (!value) {
        error(loc, DiagID::err_dim_overflow);
        return ValueType::error();
      }
      return ValueType::intConstant(*value);
    }
  }

  switch (expr.op) {
  case BinaryOp::MatMul: {
    if (!requireFloat(*lhs, "@", loc) || !requireFloat(*rhs, "@", loc))
      return ValueType::error();
    if (lhs->shape.empty()) {
      error(loc, DiagID::err_matmul_rank, "a left operand of rank 1 or more",
            lhs->shapeStr());
      return ValueType::error();
    }
    if (rhs->shape.size() != 2 || rhs->domain != Domain::Dense) {
      error(loc, DiagID::err_matmul_rank, "a dense right operand of rank 2",
            rhs->str());
      return ValueType::error();
    }
    if (lhs->shape.back() != rhs->shape[0]) {
      error(loc, DiagID::err_matmul_inner, lhs->shape.back().str(),
            rhs->shape[0].str());
      return ValueType::error();
    }
    ValueType result = *lhs;
    result.shape.back() = rhs->shape[1];
    if (isWeak(result.elem))
      result.elem = rhs->elem;
    result.intValue.reset();
    result.floatValue.reset();
    result.isConstant = false;
    return result;
  }
  case BinaryOp::Pow: {
    if (!rhs->isScalar() || !(rhs->isIntConstant() || rhs->isConstant) ||
        rhs->domain != Domain::Dense) {
      error(expr.rhs->getLoc(), DiagID::err_pow_exponent, rhs->str());
      return ValueType::error();
    }
    if (!requireFloat(*lhs, "**", loc))
      return ValueType::error();
    ValueType result = *lhs;
    if (result.intValue) {
      result = ValueType::floatConstant(std::nullopt);
    } else if (result.floatValue) {
      std::optional<double> exponent =
          rhs->floatValue ? rhs->floatValue
          : rhs->intValue && rhs->intValue->getConstant()
              ? std::optional<double>(*rhs->intValue->getConstant())
              : std::nullopt;
      result.floatValue =
          exponent
              ? std::optional<double>(std::pow(*result.floatValue, *exponent))
              : std::nullopt;
    }
    return result;
  }
  case BinaryOp::FloorDiv:
    error(loc, DiagID::err_floordiv_tensor);
    return ValueType::error();
  case BinaryOp::Div:
    if (!isFloatElem(lhs->elem) && !isFloatElem(rhs->elem) &&
        !(lhs->elem == ElemType::WeakInt && rhs->elem == ElemType::WeakInt)) {
      error(loc, DiagID::err_int_division, lhs->str(), rhs->str());
      return ValueType::error();
    }
    break;
  default:
    break;
  }
  ValueType result = elementwise(*lhs, *rhs, loc);
  if (result.isError())
    return result;
  if (expr.op == BinaryOp::Div && result.elem == ElemType::WeakInt)
    result.elem = ElemType::WeakFloat;
  // Constant folding of float scalars keeps dropout rates and slopes known.
  if (lhs->isScalar() && rhs->isScalar() && lhs->domain == Domain::Dense &&
      rhs->domain == Domain::Dense &&
      (lhs->isConstant || lhs->isIntConstant()) &&
      (rhs->isConstant || rhs->isIntConstant())) {
    result.isConstant = true;
    auto value = [](const ValueType &t) -> std::optional<double> {
      if (t.floatValue)
        return t.floatValue;
      if (t.intValue)
        if (std::optional<int64_t> c = t.intValue->getConstant())
          return static_cast<double>(*c);
      return std::nullopt;
    };
    std::optional<double> a = value(*lhs), b = value(*rhs);
    if (a && b) {
      switch (expr.op) {
      case BinaryOp::Add:
        result.floatValue = *a + *b;
        break;
      case BinaryOp::Sub:
        result.floatValue = *a - *b;
        break;
      case BinaryOp::Mul:
        result.floatValue = *a * *b;
        break;
      case BinaryOp::Div:
        if (*b != 0)
          result.floatValue = *a / *b;
        break;
      default:
        break;
      }
    }
  }
  return result;
}

std::optional<double> Checker::constantNumber(Expr &expr, StringRef argName,
                                              StringRef fn) {
  ValueType t = check(expr);
  if (t.isError())
    return std::nullopt;
  if (!t.isScalar() || t.domain != Domain::Dense ||
      !(t.isConstant || t.isIntConstant()) || t.elem == ElemType::Bool) {
    error(expr.getLoc(), DiagID::err_constant_arg, argName, fn, "number",
          t.str());
    return std::nullopt;
  }
  if (t.floatValue)
    return t.floatValue;
  if (t.intValue)
    if (std::optional<int64_t> c = t.intValue->getConstant())
      return static_cast<double>(*c);
  return std::nan(""); // a constant whose value is a hyper-parameter
}

std::optional<int64_t> Checker::normalizeAxis(int64_t axis, const ValueType &x,
                                              SMLoc loc) {
  int64_t rank = static_cast<int64_t>(x.shape.size());
  if (axis < -rank || axis >= rank) {
    error(loc, DiagID::err_axis_out_of_range, std::to_string(axis),
          x.shapeStr());
    return std::nullopt;
  }
  return axis < 0 ? axis + rank : axis;
}

ValueType Checker::reduce(const ValueType &x, std::optional<int64_t> axis,
                          bool keepDims, SMLoc loc) {
  (void)loc;
  ValueType result = concretize(x);
  if (!axis) {
    result.shape.clear();
    return result;
  }
  if (keepDims)
    result.shape[*axis] = Dim::constant(1);
  else
    result.shape.erase(result.shape.begin() + *axis);
  return result;
}

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
      if (StringRef(attr->attr.name).starts_with("set_")) {
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

namespace {
/// Sorts the arguments of a builtin call into named slots.
struct BuiltinArgs {
  std::vector<Expr *> slots;
  bool ok = true;
};
} // namespace

/// Matches positional and keyword arguments against `names`; `required` is
/// how many leading slots must be present.
static BuiltinArgs matchArgs(CallExpr &call, llvm::ArrayRef<StringRef> names,
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

  if (name == "range") {
    error(loc, DiagID::err_range_outside_for);
    return ValueType::error();
  }

  // Elementwise activations.
  bool simpleUnary = llvm::StringSwitch<bool>(name)
                         .Cases("exp", "log", "sqrt", "rsqrt", "abs", true)
                         .Cases("relu", "sigmoid", "tanh", "gelu", true)
                         .Default(false);
  if (simpleUnary || name == "elu" || name == "leaky_relu") {
    StringRef second = name == "elu" ? "alpha" : "slope";
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
    ValueType result = concretize(*x);
    return result;
  }

  if (name == "max" || name == "min") {
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

  if (name == "sum" || name == "mean") {
    BuiltinArgs args =
        matchArgs(call, {"x", "axis", "keepdims"}, 1, name, diags);
    if (!args.ok)
      return ValueType::error();
    std::optional<ValueType> x = requireTensor(*args.slots[0]);
    if (!x)
      return ValueType::error();
    if (name == "mean" && !requireFloat(*x, name, args.slots[0]->getLoc()))
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

  if (name == "softmax" || name == "log_softmax") {
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

  if (name == "dropout") {
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

  if (name == "transpose") {
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

  if (name == "reshape") {
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

  if (name == "concat") {
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

  error(loc, DiagID::err_not_callable, "'" + name.str() + "'");
  return ValueType::error();
}

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

  if (isAggregation(method) || method == "softmax") {
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
    if (method != "sum" &&
        !requireFloat(*x, qualified, args.slots[0]->getLoc()))
      return ValueType::error();
    ValueType result = concretize(*x);
    if (method != "softmax")
      result.domain = vertex->side;
    return result;
  }

  if (method == "dot") {
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

  if (method == "in_degree" || method == "out_degree") {
    BuiltinArgs args = matchArgs(call, {}, 0, qualified, diags);
    if (!args.ok)
      return ValueType::error();
    if (graph.graphKind == GraphKind::HeteroGraph) {
      error(loc, DiagID::err_graph_kind_member, graph.name, method,
            "Graph, Block or BatchedGraph", "HeteroGraph");
      return ValueType::error();
    }
    Domain side = method == "in_degree" ? Domain::Dst : Domain::Src;
    return ValueType::tensor(ElemType::F32, {sideCount(side, graph.graphKind)});
  }

  if (method == "relation") {
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

  if (method == "sum_nodes" || method == "avg_nodes" || method == "max_nodes") {
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
    if (method != "sum_nodes" &&
        !requireFloat(*x, qualified, args.slots[0]->getLoc()))
      return ValueType::error();
    ValueType result = concretize(*x);
    result.shape[0] = Dim::symbol(sym::B);
    return result;
  }

  error(loc, DiagID::err_not_callable, "'" + qualified + "'");
  return ValueType::error();
}

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
  // First the graphs: they decide how the callee's N_src/N_dst map.
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
    if (want.graphKind == GraphKind::Block &&
        got.graphKind == GraphKind::Graph) {
      subst[sym::NSrc] = Dim::symbol(sym::N);
      subst[sym::NDst] = Dim::symbol(sym::N);
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

bool gnnc::checkModule(Module &module, DiagnosticEngine &diags) {
  Checker checker(module, diags);
  return checker.run();
}
