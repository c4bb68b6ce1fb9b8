//===- MLIRGen.cpp - Lower the checked AST to the gnn dialect -------------===//
//
// Part of gnnc.
//
// Vertex-centric code becomes whole-graph operations:
//   - `g.set_vertex_attr({"h": x})` records `x`; reading `u.h` later
//     attaches it to the source vertices (`gnn.attach`) and, inside a
//     neighbour-list comprehension, gathers it along the edges
//     (`gnn.gather`);
//   - a comprehension is its element, computed for every edge at once;
//   - `g.sum(list)` is `gnn.scatter sum` onto the vertex the loop runs over;
//   - `[v.h for v in g.dst_vertex]` is `gnn.collect`;
//   - range loops are unrolled; layer calls are `func.call`s of one function
//     per instance, with the instance's parameters passed explicitly.
//
//===----------------------------------------------------------------------===//

#include "gnnc/Conversion/ASTToGNN/MLIRGen.h"
#include "gnnc/Dialect/GNN/IR/GNN.h"
#include "gnnc/Frontend/Builtins.h"
#include "gnnc/Frontend/Lexer.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"

#include <array>
#include <cmath>
#include <set>

using namespace gnnc;
using mlir::Value;
namespace g = gnnc::gnn;

static std::string mlirTypeString(mlir::Type t) {
  std::string out;
  llvm::raw_string_ostream os(out);
  t.print(os);
  return out;
}

DefineValue::DefineValue(double value) : number(value) {
  if (std::isfinite(value) && std::trunc(value) == value &&
      std::fabs(value) < 0x1p63) {
    isInteger = true;
    integer = static_cast<int64_t>(value);
  }
  text = llvm::formatv("{0}", value).str();
}

static bool isIdentifier(llvm::StringRef name) {
  if (name.empty() || !(llvm::isAlpha(name.front()) || name.front() == '_'))
    return false;
  return llvm::all_of(name,
                      [](char c) { return llvm::isAlnum(c) || c == '_'; });
}

bool gnnc::parseDefines(llvm::ArrayRef<std::string> defines,
                        MLIRGenOptions &options, DiagnosticEngine &diags,
                        llvm::StringRef fileName) {
  for (const std::string &define : defines) {
    auto [rawName, rawValue] = llvm::StringRef(define).split('=');
    llvm::StringRef name = rawName.trim(), text = rawValue.trim();
    if (!isIdentifier(name) || text.empty()) {
      diags.reportFile(fileName, DiagID::err_bad_define, define);
      return false;
    }
    DefineValue value;
    value.text = (name + "=" + text).str();
    llvm::StringRef digits = text;
    digits.consume_front("-") || digits.consume_front("+");
    if (!digits.empty() && llvm::all_of(digits, llvm::isDigit)) {
      // An integer literal is exact or an error, never rounded.
      llvm::StringRef literal = text;
      literal.consume_front("+");
      if (literal.getAsInteger(10, value.integer)) {
        diags.reportFile(fileName, DiagID::err_define_out_of_range, define,
                         text);
        return false;
      }
      value.isInteger = true;
      value.number = static_cast<double>(value.integer);
    } else {
      if (text.getAsDouble(value.number)) {
        diags.reportFile(fileName, DiagID::err_bad_define, define);
        return false;
      }
      if (!std::isfinite(value.number)) {
        diags.reportFile(fileName, DiagID::err_define_not_finite, define);
        return false;
      }
      if (std::trunc(value.number) == value.number &&
          std::fabs(value.number) <= 0x1p53) {
        value.isInteger = true;
        value.integer = static_cast<int64_t>(value.number);
      }
    }
    auto [it, inserted] = options.defines.emplace(name.str(), value);
    if (!inserted) {
      diags.reportFile(fileName, DiagID::err_define_twice, name,
                       it->second.text, value.text);
      return false;
    }
  }
  return true;
}

void gnnc::loadGNNDialects(mlir::MLIRContext &context) {
  context.getOrLoadDialect<g::GNNDialect>();
  context.getOrLoadDialect<mlir::func::FuncDialect>();
}

namespace {

/// A compile-time hyper-parameter value.
struct Const {
  bool isFloat = false;
  int64_t i = 0;
  double f = 0;
  double asDouble() const { return isFloat ? f : static_cast<double>(i); }
};
using HEnv = std::map<std::string, Const>;

/// One parameter of an emitted function, with its path from that function.
struct ParamInfo {
  std::string path;
  g::DomainTensorType type;
  std::string init;
  /// A buffer (`buffer running_mean: ...`): state a training forward
  /// updates, which is not trained.
  bool buffer = false;
};

struct EmittedFunction {
  mlir::func::FuncOp func;
  std::vector<ParamInfo> params;
};

/// Where a comprehension's edges start and end, seen from the loop vertex.
struct CompContext {
  Direction direction;
  std::string neighbour; ///< `u`
  std::string edge;      ///< `e`, may be empty
  std::string element;   ///< `c` in `[... for c in lst]`, may be empty
  Value elementValue;
};

struct VertexContext {
  Domain side;
  Value graph;
  std::string graphKey;
  GraphKind kind;
  std::string var;
};

/// Per-graph attributes: the dense tensor set, and its attached views.
struct AttrTable {
  std::map<std::string, Value> src, dst, edge;
};

class MLIRGenImpl {
public:
  MLIRGenImpl(mlir::MLIRContext &context, const Module &ast,
              DiagnosticEngine &diags)
      : context(context), builder(&context), ast(ast), diags(diags) {}

  mlir::OwningOpRef<mlir::ModuleOp> run(const MLIRGenOptions &options);

private:
  // Functions.
  EmittedFunction *emitFunction(const Definition &def, const HEnv &env,
                                const std::string &name);
  bool checkDefineNames(const MLIRGenOptions &options);
  /// `in_dim = 5, heads = 8`: the int hyper-parameters that `dims` mention.
  std::string hyperParamValues(llvm::ArrayRef<Dim> dims) const;
  /// Where to report bad dimensions: the declaration of the first
  /// hyper-parameter they mention, else the definition.
  llvm::SMLoc dimLoc(llvm::ArrayRef<Dim> dims) const;
  bool bindHyperParams(const Definition &def, llvm::ArrayRef<Arg> args,
                       const HEnv &callerEnv, HEnv &env, llvm::SMLoc loc);
  std::optional<Const> evalConst(const Expr &expr, const HEnv &env);

  // Statements.
  bool lowerBody(const StmtList &body);
  bool lowerStmt(const Stmt &stmt);
  bool lowerSetAttr(const CallExpr &call);

  // Expressions.
  Value lower(const Expr &expr);
  Value lowerName(const NameExpr &expr);
  Value lowerAttr(const AttrExpr &expr);
  Value lowerCall(const CallExpr &call);
  Value lowerBuiltin(const CallExpr &call, llvm::StringRef name);
  Value lowerGraphMethod(const CallExpr &call, Value graph,
                         llvm::StringRef method);
  Value lowerComprehension(const ComprehensionExpr &expr);
  Value lowerBinary(g::BinaryFn fn, const Expr &lhs, const Expr &rhs,
                    mlir::Location loc);
  Value binary(g::BinaryFn fn, Value a, Value b, mlir::Location loc,
               Direction direction);
  Value lowerWhere(const Expr &cond, const Expr &x, const Expr &y,
                   mlir::Location l);
  Value constant(double value, mlir::Type elem, mlir::Location loc);
  Value weakScalar(const Expr &e, mlir::Type elem);

  // Domains.
  Value toSide(Value v, g::Domain side, mlir::Location loc);
  Value atCenter(Value v, mlir::Location loc);
  Value atNeighbour(Value v, mlir::Location loc);
  Value readAttr(const std::string &graphKey, Value graph, g::Domain side,
                 const std::string &name, mlir::Location loc);
  g::Domain centerSide() const;
  Value currentGraph() const { return vertex->graph; }

  // Types.
  mlir::Location loc(llvm::SMLoc l);
  mlir::Type elemType(ElemType t);
  g::DomainTensorType tensorType(const ValueType &t, g::Domain domain);
  int64_t dimValue(const Dim &d);
  g::DomainTensorType typeOf(Value v) {
    return mlir::cast<g::DomainTensorType>(v.getType());
  }
  g::Domain domainOf(Value v) { return typeOf(v).getDomain(); }
  static g::Domain toDomain(Domain d);
  bool fail(llvm::SMLoc l, llvm::StringRef what) {
    diags.report(l, DiagID::err_lowering_unsupported, what);
    return false;
  }

  mlir::MLIRContext &context;
  mlir::OpBuilder builder;
  const Module &ast;
  DiagnosticEngine &diags;
  mlir::ModuleOp module;
  std::map<std::string, const Definition *> defs;
  std::map<std::string, EmittedFunction> emitted;
  int64_t nextSeed = 1;
  /// (function, dimension) pairs already reported as invalid.
  std::set<std::pair<std::string, std::string>> reportedDims;

  // State of the function being emitted.
  struct FunctionState {
    const Definition *def = nullptr;
    std::string name;
    HEnv env;
    std::map<std::string, Dim> dims;
    std::map<std::string, Value> values;
    std::map<std::string, Value> graphs;    ///< graph values by key
    std::map<std::string, AttrTable> dense; ///< dense tensors set as attrs
    std::map<std::string, AttrTable> views; ///< attached views, cached
    std::map<std::string, std::pair<const Definition *, HEnv>> instances;
    std::map<std::string, std::vector<Value>> instanceParams;
    Value result;
  };
  FunctionState *fn = nullptr;
  std::optional<VertexContext> vertex;
  std::vector<CompContext> comps;
};

} // namespace

//===----------------------------------------------------------------------===//
// Types and locations
//===----------------------------------------------------------------------===//

mlir::Location MLIRGenImpl::loc(llvm::SMLoc l) {
  const llvm::SourceMgr &sm = diags.getSourceMgr();
  unsigned id = sm.FindBufferContainingLoc(l);
  if (!id)
    return builder.getUnknownLoc();
  auto [line, col] = sm.getLineAndColumn(l, id);
  return mlir::FileLineColLoc::get(
      &context, sm.getMemoryBuffer(id)->getBufferIdentifier(), line, col);
}

mlir::Type MLIRGenImpl::elemType(ElemType t) {
  switch (t) {
  case ElemType::F64:
    return builder.getF64Type();
  case ElemType::I32:
    return builder.getI32Type();
  case ElemType::I64:
  case ElemType::WeakInt:
    return builder.getI64Type();
  case ElemType::Bool:
    return builder.getI1Type();
  case ElemType::F32:
  case ElemType::WeakFloat:
    return builder.getF32Type();
  }
  return builder.getF32Type();
}

g::Domain MLIRGenImpl::toDomain(Domain d) {
  switch (d) {
  case Domain::Dense:
    return g::Domain::dense;
  case Domain::Src:
    return g::Domain::src;
  case Domain::Dst:
    return g::Domain::dst;
  case Domain::Edge:
    return g::Domain::edge;
  }
  return g::Domain::dense;
}

int64_t MLIRGenImpl::dimValue(const Dim &d) {
  std::optional<Dim> concrete = d.substitute(fn->dims);
  // Every int hyper-parameter has a value here: what stays symbolic is a
  // graph size, and a failed substitution an overflow. A bad dimension is
  // reported and then taken as 1, so that the types built until the error
  // ends the lowering stay valid.
  if (!concrete) {
    if (reportedDims.insert({fn->name, d.str()}).second)
      diags.report(dimLoc(d), DiagID::err_dim_value_overflow, d.str(), fn->name,
                   hyperParamValues(d));
    return 1;
  }
  std::optional<int64_t> c = concrete->getConstant();
  if (!c)
    return mlir::ShapedType::kDynamic;
  if (*c <= 0) {
    if (reportedDims.insert({fn->name, d.str()}).second)
      diags.report(dimLoc(d), DiagID::err_dim_value_not_positive, d.str(),
                   fn->name, *c, hyperParamValues(d));
    return 1;
  }
  return *c;
}

g::DomainTensorType MLIRGenImpl::tensorType(const ValueType &t,
                                            g::Domain domain) {
  llvm::SmallVector<int64_t> shape;
  // The bytes of the sizes known at compile time must leave room for the
  // graph's: at most 2^62.
  int64_t bytes = t.elem == ElemType::F64 || t.elem == ElemType::I64 ||
                          t.elem == ElemType::WeakInt
                      ? 8
                      : 4;
  bool tooLarge = false;
  for (const Dim &d : t.shape) {
    int64_t value = dimValue(d);
    shape.push_back(value);
    if (mlir::ShapedType::isDynamic(value))
      continue;
    tooLarge |= __builtin_mul_overflow(bytes, value, &bytes) ||
                bytes > (int64_t(1) << 62);
  }
  if (tooLarge) {
    std::vector<std::string> dims;
    for (const Dim &d : t.shape)
      dims.push_back(d.str());
    std::string shapeText = llvm::join(dims, ", ");
    if (reportedDims.insert({fn->name, "[" + shapeText + "]"}).second)
      diags.report(dimLoc(t.shape), DiagID::err_tensor_too_large, shapeText,
                   fn->name, hyperParamValues(t.shape));
  }
  return g::DomainTensorType::get(&context, domain, shape, elemType(t.elem));
}

//===----------------------------------------------------------------------===//
// Driver and functions
//===----------------------------------------------------------------------===//

mlir::OwningOpRef<mlir::ModuleOp>
MLIRGenImpl::run(const MLIRGenOptions &options) {
  // Owned here, so that every error return frees what was built.
  mlir::OwningOpRef<mlir::ModuleOp> owned =
      mlir::ModuleOp::create(builder.getUnknownLoc());
  module = *owned;
  for (const auto &def : ast.definitions)
    defs[def->name.name] = def.get();

  if (!options.entry.empty() && !defs.count(options.entry)) {
    diags.reportFile(ast.fileName, DiagID::err_unknown_entry, options.entry);
    return nullptr;
  }
  if (!checkDefineNames(options))
    return nullptr;
  for (const auto &def : ast.definitions) {
    if (!options.entry.empty() && def->name.name != options.entry)
      continue;
    HEnv env;
    bool complete = true;
    for (const HyperParam &hp : def->hyperParams) {
      auto define = options.defines.find(hp.name.name);
      if (define != options.defines.end()) {
        const DefineValue &value = define->second;
        if (!hp.isFloat && !value.isInteger) {
          diags.report(hp.name.loc, DiagID::err_define_not_int, hp.name.name,
                       value.text);
          return nullptr;
        }
        Const c;
        c.isFloat = hp.isFloat;
        c.f = value.number;
        c.i = value.integer;
        env[hp.name.name] = c;
        continue;
      }
      std::optional<Const> value;
      if (hp.defaultValue)
        value = evalConst(*hp.defaultValue, env);
      if (!value) {
        // Without --entry, definitions that cannot be instantiated on their
        // own are emitted only through the models that use them.
        if (!options.entry.empty())
          diags.report(hp.name.loc, DiagID::err_missing_hparam_value,
                       hp.name.name, def->name.name);
        complete = false;
        break;
      }
      env[hp.name.name] = *value;
    }
    if (!complete)
      continue;
    if (!emitFunction(*def, env, def->name.name))
      return nullptr;
  }
  if (diags.hadError() || mlir::failed(mlir::verify(module)))
    return nullptr;
  return owned;
}

bool MLIRGenImpl::checkDefineNames(const MLIRGenOptions &options) {
  // The hyper-parameters a define may set: those of the entry, else of every
  // top-level definition.
  std::map<std::string, const HyperParam *> known;
  for (const auto &def : ast.definitions)
    if (options.entry.empty() || def->name.name == options.entry)
      for (const HyperParam &hp : def->hyperParams)
        known.emplace(hp.name.name, &hp);
  // The graph sizes a define may fix (static shapes): those the forwards of
  // the same definitions name (`g1: Block[N0, N1, E1]`), or the implicit
  // sizes of a lone graph argument.
  std::set<std::string> sizes;
  for (const auto &def : ast.definitions) {
    if (!options.entry.empty() && def->name.name != options.entry)
      continue;
    for (const ForwardDef &fwd : def->forwards) {
      size_t numGraphs = 0;
      for (const ForwardArg &arg : fwd.args)
        numGraphs += arg.type.kind == TypeExpr::Kind::Graph ||
                     arg.type.kind == TypeExpr::Kind::Block ||
                     arg.type.kind == TypeExpr::Kind::BatchedGraph;
      for (const ForwardArg &arg : fwd.args) {
        if (arg.type.kind == TypeExpr::Kind::Block && !arg.type.dims.empty()) {
          for (const ExprPtr &dim : arg.type.dims)
            if (auto *n = llvm::dyn_cast<NameExpr>(dim.get()))
              sizes.insert(n->name);
          continue;
        }
        if (numGraphs != 1)
          continue;
        if (arg.type.kind == TypeExpr::Kind::Graph ||
            arg.type.kind == TypeExpr::Kind::BatchedGraph)
          sizes.insert({"N", "E"});
        else if (arg.type.kind == TypeExpr::Kind::Block)
          sizes.insert({"N_src", "N_dst", "E"});
      }
    }
  }
  for (const auto &[name, value] : options.defines) {
    if (known.count(name))
      continue;
    if (sizes.count(name)) {
      // A fixed size: the generated entry points check it and plan their
      // workspace once.
      if (!value.isInteger || value.integer <= 0) {
        diags.reportFile(ast.fileName, DiagID::err_define_size, value.text,
                         name);
        return false;
      }
      continue;
    }
    const HyperParam *closest = nullptr;
    unsigned best = std::max<unsigned>(2, name.size() / 3) + 1;
    for (const auto &[candidate, hp] : known) {
      unsigned distance = llvm::StringRef(name).edit_distance(
          candidate, /*AllowReplacements=*/true, best);
      if (distance < best) {
        best = distance;
        closest = hp;
      }
    }
    std::string what =
        options.entry.empty()
            ? "no layer or model has a hyper-parameter '" + name + "'"
            : "'" + options.entry + "' has no hyper-parameter '" + name + "'";
    std::string hint =
        closest ? "; did you mean '" + closest->name.name + "'?" : "";
    diags.reportFile(ast.fileName, DiagID::err_define_unknown, value.text, what,
                     hint);
    if (closest)
      diags.report(closest->name.loc, DiagID::note_define_suggestion,
                   closest->name.name);
    return false;
  }
  return true;
}

std::string MLIRGenImpl::hyperParamValues(llvm::ArrayRef<Dim> dims) const {
  std::vector<std::string> parts;
  for (const auto &entry : fn->env) {
    const std::string &name = entry.first;
    if (!entry.second.isFloat &&
        llvm::any_of(dims, [&](const Dim &d) { return d.mentions(name); }))
      parts.push_back(name + " = " + std::to_string(entry.second.i));
  }
  return parts.empty() ? std::string("its literal sizes")
                       : llvm::join(parts, ", ");
}

llvm::SMLoc MLIRGenImpl::dimLoc(llvm::ArrayRef<Dim> dims) const {
  for (const HyperParam &hp : fn->def->hyperParams)
    if (llvm::any_of(dims,
                     [&](const Dim &d) { return d.mentions(hp.name.name); }))
      return hp.name.loc;
  return fn->def->loc;
}

std::optional<Const> MLIRGenImpl::evalConst(const Expr &expr, const HEnv &env) {
  if (auto *i = llvm::dyn_cast<IntExpr>(&expr))
    return Const{false, i->value, 0};
  if (auto *f = llvm::dyn_cast<FloatExpr>(&expr))
    return Const{true, 0, f->value};
  if (auto *n = llvm::dyn_cast<NameExpr>(&expr)) {
    auto it = env.find(n->name);
    if (it != env.end())
      return it->second;
    return std::nullopt;
  }
  if (auto *u = llvm::dyn_cast<UnaryExpr>(&expr)) {
    std::optional<Const> v = evalConst(*u->operand, env);
    if (v && u->op == UnaryOp::Neg) {
      v->i = -v->i;
      v->f = -v->f;
    }
    return v;
  }
  if (auto *b = llvm::dyn_cast<BinaryExpr>(&expr)) {
    std::optional<Const> l = evalConst(*b->lhs, env);
    std::optional<Const> r = evalConst(*b->rhs, env);
    if (!l || !r)
      return std::nullopt;
    if (!l->isFloat && !r->isFloat && b->op != BinaryOp::Div &&
        b->op != BinaryOp::Pow && !isComparison(b->op)) {
      int64_t out;
      switch (b->op) {
      case BinaryOp::Add:
        if (__builtin_add_overflow(l->i, r->i, &out))
          return std::nullopt;
        return Const{false, out, 0};
      case BinaryOp::Sub:
        if (__builtin_sub_overflow(l->i, r->i, &out))
          return std::nullopt;
        return Const{false, out, 0};
      case BinaryOp::Mul:
        if (__builtin_mul_overflow(l->i, r->i, &out))
          return std::nullopt;
        return Const{false, out, 0};
      case BinaryOp::FloorDiv:
        if (r->i == 0 || (l->i == INT64_MIN && r->i == -1))
          return std::nullopt;
        out = l->i / r->i;
        if ((l->i % r->i != 0) && ((l->i < 0) != (r->i < 0)))
          --out;
        return Const{false, out, 0};
      default:
        return std::nullopt;
      }
    }
    double a = l->asDouble(), c = r->asDouble();
    if (isComparison(b->op))
      return Const{true, 0, compareNumbers(b->op, a, c) ? 1.0 : 0.0};
    switch (b->op) {
    case BinaryOp::Add:
      return Const{true, 0, a + c};
    case BinaryOp::Sub:
      return Const{true, 0, a - c};
    case BinaryOp::Mul:
      return Const{true, 0, a * c};
    case BinaryOp::Div:
      return Const{true, 0, a / c};
    case BinaryOp::Pow:
      return Const{true, 0, std::pow(a, c)};
    default:
      return std::nullopt;
    }
  }
  return std::nullopt;
}

bool MLIRGenImpl::bindHyperParams(const Definition &def,
                                  llvm::ArrayRef<Arg> args,
                                  const HEnv &callerEnv, HEnv &env,
                                  llvm::SMLoc loc) {
  size_t position = 0;
  for (const Arg &arg : args) {
    std::optional<Const> value = evalConst(*arg.value, callerEnv);
    if (!value)
      return fail(arg.value->getLoc(), "a non-constant hyper-parameter value");
    const HyperParam *hp = nullptr;
    if (arg.keyword.name.empty()) {
      if (position < def.hyperParams.size())
        hp = &def.hyperParams[position++];
    } else {
      for (const HyperParam &h : def.hyperParams)
        if (h.name.name == arg.keyword.name)
          hp = &h;
    }
    if (!hp)
      return false; // reported by semantic analysis
    value->isFloat = hp->isFloat;
    if (hp->isFloat)
      value->f = value->asDouble();
    env[hp->name.name] = *value;
  }
  for (const HyperParam &hp : def.hyperParams) {
    if (env.count(hp.name.name))
      continue;
    std::optional<Const> value;
    if (hp.defaultValue)
      value = evalConst(*hp.defaultValue, env);
    if (!value) {
      diags.report(loc, DiagID::err_missing_hparam_value, hp.name.name,
                   def.name.name);
      return false;
    }
    value->isFloat = hp.isFloat;
    if (hp.isFloat)
      value->f = value->asDouble();
    env[hp.name.name] = *value;
  }
  return true;
}

EmittedFunction *MLIRGenImpl::emitFunction(const Definition &def,
                                           const HEnv &env,
                                           const std::string &name) {
  if (def.forwards.empty())
    return nullptr;
  const ForwardDef &fwd = def.forwards.front();

  FunctionState state;
  state.def = &def;
  state.name = name;
  state.env = env;
  for (const auto &[hpName, value] : env)
    if (!value.isFloat)
      state.dims[hpName] = Dim::constant(value.i);

  // Instances first: their functions and parameter lists.
  std::vector<std::pair<std::string, EmittedFunction *>> children;
  for (const InstanceDecl &inst : def.instances) {
    auto it = defs.find(inst.callee.name);
    if (it == defs.end())
      return nullptr;
    HEnv calleeEnv;
    if (!bindHyperParams(*it->second, inst.args, env, calleeEnv,
                         inst.callee.loc))
      return nullptr;
    EmittedFunction *child =
        emitFunction(*it->second, calleeEnv, name + "." + inst.name.name);
    if (!child)
      return nullptr;
    children.push_back({inst.name.name, child});
    state.instances[inst.name.name] = {it->second, calleeEnv};
  }

  FunctionState *savedFn = fn;
  fn = &state;
  auto restore = llvm::make_scope_exit([&] { fn = savedFn; });

  // Signature: forward arguments, then own parameters, then the
  // instances' parameters in declaration order.
  llvm::SmallVector<mlir::Type> argTypes;
  for (const ForwardArg &arg : fwd.args) {
    switch (arg.type.kind) {
    case TypeExpr::Kind::Graph:
      argTypes.push_back(g::GraphType::get(&context, g::GraphKind::graph));
      break;
    case TypeExpr::Kind::Block:
      argTypes.push_back(g::GraphType::get(&context, g::GraphKind::block));
      break;
    case TypeExpr::Kind::BatchedGraph:
      argTypes.push_back(g::GraphType::get(&context, g::GraphKind::batched));
      break;
    case TypeExpr::Kind::HeteroGraph:
      argTypes.push_back(g::GraphType::get(&context, g::GraphKind::hetero));
      break;
    case TypeExpr::Kind::Int:
      argTypes.push_back(g::DomainTensorType::get(&context, g::Domain::dense,
                                                  {}, builder.getI64Type()));
      break;
    case TypeExpr::Kind::Float:
      argTypes.push_back(g::DomainTensorType::get(&context, g::Domain::dense,
                                                  {}, builder.getF32Type()));
      break;
    case TypeExpr::Kind::Tensor: {
      llvm::SmallVector<int64_t> shape;
      for (const ExprPtr &d : arg.type.dims)
        shape.push_back(d->type && d->type->intValue
                            ? dimValue(*d->type->intValue)
                            : mlir::ShapedType::kDynamic);
      argTypes.push_back(g::DomainTensorType::get(
          &context, g::Domain::dense, shape, elemType(arg.type.elemType)));
      break;
    }
    }
  }
  std::vector<ParamInfo> params;
  for (const ParamDecl &p : def.params) {
    if (!p.resolvedType)
      return nullptr;
    std::string init = p.init.name;
    if (init.empty())
      init = p.resolvedType->shape.size() >= 2 ? "glorot" : "zeros";
    params.push_back({p.name.name,
                      tensorType(*p.resolvedType, g::Domain::dense), init,
                      p.isBuffer});
  }
  for (auto &[instName, child] : children)
    for (const ParamInfo &p : child->params)
      params.push_back({instName + "." + p.path, p.type, p.init, p.buffer});
  for (const ParamInfo &p : params)
    argTypes.push_back(p.type);

  mlir::Type resultType;
  if (fwd.resolvedResult && fwd.resolvedResult->isTensor())
    resultType = tensorType(*fwd.resolvedResult, g::Domain::dense);
  else
    return nullptr;

  mlir::OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(module.getBody());
  auto func = builder.create<mlir::func::FuncOp>(
      loc(def.loc), name, builder.getFunctionType(argTypes, {resultType}));
  func->setAttr(g::kKindAttrName,
                builder.getStringAttr(def.isModel ? "model" : "layer"));
  size_t nArgs = fwd.args.size();
  for (size_t i = 0; i < nArgs; ++i) {
    func.setArgAttr(i, g::kNameAttrName,
                    builder.getStringAttr(fwd.args[i].name.name));
    // Graph sizes stay symbolic in the type (`?`); keep their names.
    llvm::SmallVector<mlir::Attribute> dims;
    bool symbolic = false;
    for (const ExprPtr &d : fwd.args[i].type.dims) {
      std::string text = "?";
      if (d->type && d->type->intValue) {
        std::optional<Dim> concrete = d->type->intValue->substitute(state.dims);
        text = concrete ? concrete->str() : d->type->intValue->str();
        // Every hyper-parameter has a value: what stays is a graph size.
        symbolic |= mentionsGraphSize(*d->type->intValue) ||
                    (concrete && !concrete->isConstant());
      }
      dims.push_back(builder.getStringAttr(text));
    }
    if (symbolic)
      func.setArgAttr(i, g::kDimsAttrName, builder.getArrayAttr(dims));
    // A block that names its sizes: the names, for the checks that chain
    // blocks at run time.
    if (fwd.args[i].type.kind == TypeExpr::Kind::Block &&
        !fwd.args[i].type.dims.empty()) {
      llvm::SmallVector<mlir::Attribute> names;
      for (const ExprPtr &d : fwd.args[i].type.dims)
        if (auto *name = llvm::dyn_cast<NameExpr>(d.get()))
          names.push_back(builder.getStringAttr(name->name));
      func.setArgAttr(i, g::kSizesAttrName, builder.getArrayAttr(names));
    }
  }
  for (size_t i = 0; i < params.size(); ++i) {
    func.setArgAttr(nArgs + i, g::kParamAttrName,
                    builder.getStringAttr(params[i].path));
    func.setArgAttr(nArgs + i, g::kInitAttrName,
                    builder.getStringAttr(params[i].init));
    if (params[i].buffer)
      func.setArgAttr(nArgs + i, g::kBufferAttrName, builder.getUnitAttr());
  }
  mlir::Block *entry = func.addEntryBlock();
  builder.setInsertionPointToStart(entry);
  for (size_t i = 0; i < nArgs; ++i)
    entry->getArgument(i).setLoc(loc(fwd.args[i].name.loc));
  for (size_t i = 0; i < def.params.size(); ++i)
    entry->getArgument(nArgs + i).setLoc(loc(def.params[i].name.loc));

  for (size_t i = 0; i < nArgs; ++i) {
    const std::string &argName = fwd.args[i].name.name;
    Value v = entry->getArgument(i);
    if (mlir::isa<g::GraphType>(v.getType()))
      state.graphs[argName] = v;
    state.values[argName] = v;
  }
  for (size_t i = 0; i < def.params.size(); ++i)
    state.values[def.params[i].name.name] = entry->getArgument(nArgs + i);
  size_t next = nArgs + def.params.size();
  for (auto &[instName, child] : children)
    for (size_t i = 0; i < child->params.size(); ++i)
      state.instanceParams[instName].push_back(entry->getArgument(next++));

  if (!lowerBody(fwd.body) || !state.result)
    return nullptr;
  auto ret =
      builder.create<mlir::func::ReturnOp>(state.result.getLoc(), state.result);
  // Buffer updates come last, in program order: every read of a buffer in
  // the forward sees the value it had when the call began.
  llvm::SmallVector<g::UpdateBatchStatsOp> updates(
      entry->getOps<g::UpdateBatchStatsOp>());
  for (g::UpdateBatchStatsOp u : updates)
    u->moveBefore(ret);

  EmittedFunction &out = emitted[name];
  out.func = func;
  out.params = std::move(params);
  return &out;
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

bool MLIRGenImpl::lowerBody(const StmtList &body) {
  for (const StmtPtr &stmt : body)
    if (!lowerStmt(*stmt))
      return false;
  return true;
}

bool MLIRGenImpl::lowerStmt(const Stmt &stmt) {
  switch (stmt.getKind()) {
  case Stmt::Kind::Pass:
    return true;
  case Stmt::Kind::Assign: {
    auto &s = llvm::cast<AssignStmt>(stmt);
    Value v = lower(*s.value);
    if (!v)
      return false;
    fn->values[s.target.name] = v;
    if (mlir::isa<g::GraphType>(v.getType()))
      fn->graphs[s.target.name] = v;
    return true;
  }
  case Stmt::Kind::AttrAssign: {
    auto &s = llvm::cast<AttrAssignStmt>(stmt);
    Value v = lower(*s.value);
    if (!v)
      return false;
    mlir::Location l = loc(s.getLoc());
    if (domainOf(v) == g::Domain::dense)
      v = builder.create<g::SplatOp>(
          l, typeOf(v).withDomain(toDomain(vertex->side)), vertex->graph, v);
    v = toSide(v, toDomain(vertex->side), l);
    AttrTable &views = fn->views[vertex->graphKey];
    auto &own = vertex->side == Domain::Dst ? views.dst : views.src;
    own[s.attr.name] = v;
    return true;
  }
  case Stmt::Kind::ExprStmt: {
    auto &s = llvm::cast<ExprStmt>(stmt);
    if (auto *call = llvm::dyn_cast<CallExpr>(s.expr.get()))
      return lowerSetAttr(*call);
    return fail(s.getLoc(), "this statement");
  }
  case Stmt::Kind::VertexLoop: {
    auto &s = llvm::cast<VertexLoopStmt>(stmt);
    auto &set = llvm::cast<AttrExpr>(*s.vertexSet);
    auto *graphName = llvm::dyn_cast<NameExpr>(set.base.get());
    if (!graphName || !fn->graphs.count(graphName->name))
      return fail(s.getLoc(), "a vertex loop over this graph");
    Value graph = fn->graphs[graphName->name];
    Domain side = set.attr.name == "dst_vertex" ? Domain::Dst : Domain::Src;
    GraphKind kind = mlir::cast<g::GraphType>(graph.getType()).getKind() ==
                             g::GraphKind::block
                         ? GraphKind::Block
                         : GraphKind::Graph;
    auto savedValues = fn->values;
    vertex = VertexContext{side, graph, graphName->name, kind, s.var.name};
    AttrTable &views = fn->views[graphName->name];
    auto &written = side == Domain::Dst ? views.dst : views.src;
    std::map<std::string, Value> before = written;
    bool ok = lowerBody(s.body);
    // On a homogeneous graph what the loop wrote is visible from both
    // sides once the loop is over: the other side's old value is dropped,
    // and a later read there re-labels this side's value.
    if (ok && kind != GraphKind::Block) {
      AttrTable &dense = fn->dense[graphName->name];
      auto &otherViews = side == Domain::Dst ? views.src : views.dst;
      auto &otherDense = side == Domain::Dst ? dense.src : dense.dst;
      for (auto &[name, value] : written) {
        if (before.count(name) && before[name] == value)
          continue;
        otherViews.erase(name);
        otherDense.erase(name);
      }
    }
    vertex.reset();
    fn->values = std::move(savedValues); // loop locals expire
    return ok;
  }
  case Stmt::Kind::RangeLoop: {
    auto &s = llvm::cast<RangeLoopStmt>(stmt);
    std::optional<Const> count = evalConst(*s.count, fn->env);
    if (!count || count->isFloat)
      return fail(s.count->getLoc(), "a trip count that is not a constant");
    constexpr int64_t maxUnroll = FrontendLimits::maxUnroll;
    if (count->i > maxUnroll) {
      diags.report(s.count->getLoc(), DiagID::err_unroll_limit,
                   std::to_string(count->i), std::to_string(maxUnroll));
      return false;
    }
    for (int64_t i = 0; i < count->i; ++i)
      if (!lowerBody(s.body))
        return false;
    return true;
  }
  case Stmt::Kind::Return: {
    Value v = lower(*llvm::cast<ReturnStmt>(stmt).value);
    if (!v)
      return false;
    fn->result = v;
    return true;
  }
  }
  return false;
}

bool MLIRGenImpl::lowerSetAttr(const CallExpr &call) {
  auto &callee = llvm::cast<AttrExpr>(*call.callee);
  auto *graphName = llvm::dyn_cast<NameExpr>(callee.base.get());
  if (!graphName || !fn->graphs.count(graphName->name))
    return fail(call.getLoc(), "setting attributes on this graph");
  const std::string &key = graphName->name;
  llvm::StringRef method = callee.attr.name;
  auto &dict = llvm::cast<DictExpr>(*call.args[0].value);
  AttrTable &dense = fn->dense[key];
  AttrTable &views = fn->views[key];
  for (const DictExpr::Entry &entry : dict.entries) {
    Value v = lower(*entry.value);
    if (!v)
      return false;
    const std::string &name = entry.key.name;
    if (method == "set_edge_attr") {
      dense.edge[name] = v;
      views.edge.erase(name);
      continue;
    }
    if (method != "set_dst_attr") {
      dense.src[name] = v;
      views.src.erase(name);
    }
    if (method != "set_src_attr") {
      dense.dst[name] = v;
      views.dst.erase(name);
    }
  }
  return true;
}

//===----------------------------------------------------------------------===//
// Domains
//===----------------------------------------------------------------------===//

/// Re-labels per-vertex values between the source and destination side of a
/// homogeneous graph (one vertex set, so this is a view).
Value MLIRGenImpl::toSide(Value v, g::Domain side, mlir::Location l) {
  g::Domain have = domainOf(v);
  if (have == side || have == g::Domain::dense || have == g::Domain::edge)
    return v;
  g::DomainTensorType row = typeOf(v);
  llvm::SmallVector<int64_t> shape{mlir::ShapedType::kDynamic};
  shape.append(row.getShape().begin(), row.getShape().end());
  auto denseType = g::DomainTensorType::get(&context, g::Domain::dense, shape,
                                            row.getElementType());
  Value dense = builder.create<g::CollectOp>(l, denseType, currentGraph(), v);
  return builder.create<g::AttachOp>(l, row.withDomain(side), currentGraph(),
                                     dense);
}

/// The side of the edge's end that the loop vertex sits at.
g::Domain MLIRGenImpl::centerSide() const {
  return comps.back().direction == Direction::In ? g::Domain::dst
                                                 : g::Domain::src;
}

Value MLIRGenImpl::atCenter(Value v, mlir::Location l) {
  if (comps.empty() || domainOf(v) == g::Domain::edge ||
      domainOf(v) == g::Domain::dense)
    return v;
  v = toSide(v, centerSide(), l);
  return builder.create<g::GatherOp>(l, typeOf(v).withDomain(g::Domain::edge),
                                     currentGraph(), v);
}

Value MLIRGenImpl::atNeighbour(Value v, mlir::Location l) {
  g::Domain end =
      centerSide() == g::Domain::dst ? g::Domain::src : g::Domain::dst;
  v = toSide(v, end, l);
  return builder.create<g::GatherOp>(l, typeOf(v).withDomain(g::Domain::edge),
                                     currentGraph(), v);
}

Value MLIRGenImpl::readAttr(const std::string &graphKey, Value graph,
                            g::Domain side, const std::string &name,
                            mlir::Location l) {
  AttrTable &views = fn->views[graphKey];
  auto &cache = side == g::Domain::src   ? views.src
                : side == g::Domain::dst ? views.dst
                                         : views.edge;
  auto it = cache.find(name);
  if (it != cache.end())
    return it->second;
  AttrTable &dense = fn->dense[graphKey];
  auto &source = side == g::Domain::src   ? dense.src
                 : side == g::Domain::dst ? dense.dst
                                          : dense.edge;
  auto found = source.find(name);
  if (found == source.end())
    return nullptr;
  g::DomainTensorType t = typeOf(found->second);
  Value view = builder.create<g::AttachOp>(
      l,
      g::DomainTensorType::get(&context, side, t.getShape().drop_front(),
                               t.getElementType()),
      graph, found->second);
  cache[name] = view;
  return view;
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

Value MLIRGenImpl::constant(double value, mlir::Type elem, mlir::Location l) {
  auto type = g::DomainTensorType::get(&context, g::Domain::dense, {}, elem);
  return builder.create<g::ConstantOp>(l, type, builder.getF64FloatAttr(value));
}

/// True for a number or float hyper-parameter: lowered with the element
/// type of the other operand.
static bool isScalarConstant(const Expr &e) {
  return e.type && e.type->isScalar() && e.type->domain == Domain::Dense &&
         (e.type->isConstant || e.type->isIntConstant());
}

/// A Python number, a hyper-parameter or a graph size: a scalar that takes
/// the element type of the tensor it meets.
static bool isWeakScalar(const Expr &e) {
  return e.type && e.type->isScalar() && e.type->domain == Domain::Dense &&
         (e.type->elem == ElemType::WeakFloat ||
          e.type->elem == ElemType::WeakInt);
}

Value MLIRGenImpl::weakScalar(const Expr &e, mlir::Type elem) {
  mlir::Location l = loc(e.getLoc());
  if (std::optional<Const> c = evalConst(e, fn->env))
    return constant(c->asDouble(), elem, l);
  // Graph sizes: N (vertices, destinations on a block), E, g.n_nodes and
  // g.n_edges, counted at run time.
  bool vertices = false, edges = false;
  Value graph;
  if (auto *name = llvm::dyn_cast<NameExpr>(&e)) {
    vertices = name->name == sym::N || name->name == sym::NDst;
    edges = name->name == sym::E;
    if (!fn->graphs.empty())
      graph = fn->graphs.begin()->second;
  } else if (auto *attr = llvm::dyn_cast<AttrExpr>(&e)) {
    auto *base = llvm::dyn_cast<NameExpr>(attr->base.get());
    if (base && fn->graphs.count(base->name)) {
      graph = fn->graphs[base->name];
      vertices = attr->attr.name == "n_nodes";
      edges = attr->attr.name == "n_edges";
    }
  }
  auto scalar = g::DomainTensorType::get(&context, g::Domain::dense, {}, elem);
  if (graph && vertices)
    return builder.create<g::NumVerticesOp>(l, scalar, graph);
  if (graph && edges)
    return builder.create<g::NumEdgesOp>(l, scalar, graph);
  fail(e.getLoc(), "this scalar");
  return nullptr;
}

Value MLIRGenImpl::lower(const Expr &expr) {
  mlir::Location l = loc(expr.getLoc());
  switch (expr.getKind()) {
  case Expr::Kind::Int:
  case Expr::Kind::Float: {
    std::optional<Const> c = evalConst(expr, fn->env);
    return constant(c->asDouble(), elemType(expr.type->elem), l);
  }
  case Expr::Kind::Name:
    return lowerName(llvm::cast<NameExpr>(expr));
  case Expr::Kind::Attr:
    return lowerAttr(llvm::cast<AttrExpr>(expr));
  case Expr::Kind::Call:
    return lowerCall(llvm::cast<CallExpr>(expr));
  case Expr::Kind::Binary: {
    auto &b = llvm::cast<BinaryExpr>(expr);
    mlir::Location opLoc = loc(b.opLoc);
    switch (b.op) {
    case BinaryOp::Add:
      return lowerBinary(g::BinaryFn::add, *b.lhs, *b.rhs, opLoc);
    case BinaryOp::Sub:
      return lowerBinary(g::BinaryFn::sub, *b.lhs, *b.rhs, opLoc);
    case BinaryOp::Mul:
      return lowerBinary(g::BinaryFn::mul, *b.lhs, *b.rhs, opLoc);
    case BinaryOp::Div:
      return lowerBinary(g::BinaryFn::div, *b.lhs, *b.rhs, opLoc);
    case BinaryOp::Pow:
      return lowerBinary(g::BinaryFn::pow, *b.lhs, *b.rhs, opLoc);
    // The dialect has >, >=, == and !=; a < b is b > a.
    case BinaryOp::Lt:
      return lowerBinary(g::BinaryFn::gt, *b.rhs, *b.lhs, opLoc);
    case BinaryOp::Le:
      return lowerBinary(g::BinaryFn::ge, *b.rhs, *b.lhs, opLoc);
    case BinaryOp::Gt:
      return lowerBinary(g::BinaryFn::gt, *b.lhs, *b.rhs, opLoc);
    case BinaryOp::Ge:
      return lowerBinary(g::BinaryFn::ge, *b.lhs, *b.rhs, opLoc);
    case BinaryOp::Eq:
      return lowerBinary(g::BinaryFn::eq, *b.lhs, *b.rhs, opLoc);
    case BinaryOp::Ne:
      return lowerBinary(g::BinaryFn::ne, *b.lhs, *b.rhs, opLoc);
    case BinaryOp::MatMul: {
      Value lhs = lower(*b.lhs), rhs = lower(*b.rhs);
      if (!lhs || !rhs)
        return nullptr;
      g::DomainTensorType t = typeOf(lhs);
      llvm::SmallVector<int64_t> shape(t.getShape());
      shape.back() = typeOf(rhs).getShape()[1];
      return builder.create<g::MatmulOp>(opLoc, t.withShape(shape), lhs, rhs);
    }
    case BinaryOp::FloorDiv:
      break;
    }
    fail(expr.getLoc(), "'//' on tensors");
    return nullptr;
  }
  case Expr::Kind::Unary: {
    auto &u = llvm::cast<UnaryExpr>(expr);
    if (isScalarConstant(expr)) {
      std::optional<Const> c = evalConst(expr, fn->env);
      if (c)
        return constant(c->asDouble(), elemType(expr.type->elem), l);
    }
    Value v = lower(*u.operand);
    if (!v || u.op == UnaryOp::Plus)
      return v;
    return builder.create<g::UnaryOp>(
        l, v.getType(), g::UnaryFnAttr::get(&context, g::UnaryFn::neg), v,
        nullptr);
  }
  case Expr::Kind::Comprehension:
    return lowerComprehension(llvm::cast<ComprehensionExpr>(expr));
  default:
    fail(expr.getLoc(), "this expression");
    return nullptr;
  }
}

Value MLIRGenImpl::lowerName(const NameExpr &expr) {
  mlir::Location l = loc(expr.getLoc());
  if (!comps.empty() && expr.name == comps.back().element)
    return comps.back().elementValue;
  auto it = fn->values.find(expr.name);
  if (it != fn->values.end()) {
    if (mlir::isa<g::GraphType>(it->second.getType()))
      return it->second;
    return atCenter(it->second, l);
  }
  auto hp = fn->env.find(expr.name);
  if (hp != fn->env.end())
    return constant(hp->second.asDouble(), elemType(expr.type->elem), l);
  fail(expr.getLoc(), "'" + expr.name + "' used as a value");
  return nullptr;
}

Value MLIRGenImpl::lowerAttr(const AttrExpr &expr) {
  mlir::Location l = loc(expr.attr.loc);
  auto *base = llvm::dyn_cast<NameExpr>(expr.base.get());
  if (!base) {
    fail(expr.getLoc(), "this attribute");
    return nullptr;
  }
  const std::string &attr = expr.attr.name;
  // g.n_nodes, g.n_edges.
  if (fn->graphs.count(base->name)) {
    Value graph = fn->graphs[base->name];
    auto scalar = g::DomainTensorType::get(&context, g::Domain::dense, {},
                                           builder.getI64Type());
    if (attr == "n_nodes")
      return builder.create<g::NumVerticesOp>(l, scalar, graph);
    if (attr == "n_edges")
      return builder.create<g::NumEdgesOp>(l, scalar, graph);
    fail(expr.getLoc(), "this graph member as a value");
    return nullptr;
  }
  // v.h: the loop vertex's own attribute.
  if (vertex && base->name == vertex->var) {
    g::Domain side = toDomain(vertex->side);
    Value v = readAttr(vertex->graphKey, vertex->graph, side, attr, l);
    if (!v) {
      // Set on the other side of a homogeneous graph only.
      v = readAttr(vertex->graphKey, vertex->graph,
                   side == g::Domain::dst ? g::Domain::src : g::Domain::dst,
                   attr, l);
      if (v)
        v = toSide(v, side, l);
    }
    if (!v) {
      fail(expr.getLoc(), "reading attribute '" + attr + "'");
      return nullptr;
    }
    return atCenter(v, l);
  }
  // u.h and e.w inside a comprehension.
  if (!comps.empty()) {
    const CompContext &comp = comps.back();
    if (base->name == comp.neighbour) {
      g::Domain end =
          centerSide() == g::Domain::dst ? g::Domain::src : g::Domain::dst;
      Value v = readAttr(vertex->graphKey, vertex->graph, end, attr, l);
      if (!v) {
        v = readAttr(vertex->graphKey, vertex->graph,
                     end == g::Domain::dst ? g::Domain::src : g::Domain::dst,
                     attr, l);
      }
      if (!v) {
        fail(expr.getLoc(), "reading attribute '" + attr + "'");
        return nullptr;
      }
      return atNeighbour(v, l);
    }
    if (base->name == comp.edge) {
      Value v =
          readAttr(vertex->graphKey, vertex->graph, g::Domain::edge, attr, l);
      if (!v)
        fail(expr.getLoc(), "reading edge attribute '" + attr + "'");
      return v;
    }
  }
  fail(expr.getLoc(), "this attribute");
  return nullptr;
}

Value MLIRGenImpl::lowerComprehension(const ComprehensionExpr &expr) {
  mlir::Location l = loc(expr.getLoc());
  // [v.h for v in g.dst_vertex]: compute per vertex, then collect.
  if (auto *set = llvm::dyn_cast<AttrExpr>(expr.source.get())) {
    if (set->attr.name == "dst_vertex" || set->attr.name == "src_vertex") {
      auto *graphName = llvm::dyn_cast<NameExpr>(set->base.get());
      if (!graphName || !fn->graphs.count(graphName->name)) {
        fail(expr.getLoc(), "collecting from this graph");
        return nullptr;
      }
      Value graph = fn->graphs[graphName->name];
      Domain side = set->attr.name == "dst_vertex" ? Domain::Dst : Domain::Src;
      GraphKind kind = mlir::cast<g::GraphType>(graph.getType()).getKind() ==
                               g::GraphKind::block
                           ? GraphKind::Block
                           : GraphKind::Graph;
      vertex =
          VertexContext{side, graph, graphName->name, kind, expr.vars[0].name};
      Value v = lower(*expr.element);
      if (v && domainOf(v) == g::Domain::dense)
        v = builder.create<g::SplatOp>(l, typeOf(v).withDomain(toDomain(side)),
                                       graph, v);
      if (v)
        v = toSide(v, toDomain(side), l);
      vertex.reset();
      if (!v)
        return nullptr;
      return builder.create<g::CollectOp>(
          l, tensorType(*expr.type, g::Domain::dense), graph, v);
    }
  }
  CompContext comp;
  ValueType sourceType = *expr.source->type;
  if (sourceType.kind == ValueType::Kind::Neighbours) {
    comp.direction = sourceType.direction;
    comp.neighbour = expr.vars[0].name;
    if (expr.vars.size() == 2)
      comp.edge = expr.vars[1].name;
  } else {
    // [f(c) for c in lst]: c is the list itself, edge by edge.
    Value list = lower(*expr.source);
    if (!list)
      return nullptr;
    comp.direction = sourceType.direction;
    comp.element = expr.vars[0].name;
    comp.elementValue = list;
  }
  comps.push_back(comp);
  Value v = lower(*expr.element);
  if (v && domainOf(v) == g::Domain::dense)
    v = builder.create<g::SplatOp>(l, typeOf(v).withDomain(g::Domain::edge),
                                   currentGraph(), v);
  else if (v)
    v = atCenter(v, l);
  comps.pop_back();
  return v;
}

Value MLIRGenImpl::binary(g::BinaryFn op, Value a, Value b, mlir::Location l,
                          Direction direction) {
  // A per-vertex value meeting a per-edge one (`a * [u.h for u in
  // v.innbs]` with a per-vertex `a`) is read at the loop vertex's end of
  // each edge.
  auto align = [&](Value &vertexValue) {
    if (!comps.empty()) {
      vertexValue = atCenter(vertexValue, l);
      return;
    }
    g::Domain end =
        direction == Direction::In ? g::Domain::dst : g::Domain::src;
    vertexValue = toSide(vertexValue, end, l);
    vertexValue = builder.create<g::GatherOp>(
        l, typeOf(vertexValue).withDomain(g::Domain::edge), currentGraph(),
        vertexValue);
  };
  g::Domain da = domainOf(a), db = domainOf(b);
  if (da == g::Domain::edge && (db == g::Domain::src || db == g::Domain::dst))
    align(b);
  else if (db == g::Domain::edge &&
           (da == g::Domain::src || da == g::Domain::dst))
    align(a);
  g::DomainTensorType ta = typeOf(a), tb = typeOf(b);
  g::Domain domain =
      ta.getDomain() == g::Domain::dense ? tb.getDomain() : ta.getDomain();
  size_t rank = std::max(ta.getRank(), tb.getRank());
  llvm::SmallVector<int64_t> shape(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t x = i < static_cast<size_t>(ta.getRank())
                    ? ta.getShape()[ta.getRank() - 1 - i]
                    : 1;
    int64_t y = i < static_cast<size_t>(tb.getRank())
                    ? tb.getShape()[tb.getRank() - 1 - i]
                    : 1;
    shape[rank - 1 - i] = x == 1 ? y : x;
  }
  auto type =
      g::DomainTensorType::get(&context, domain, shape, ta.getElementType());
  return builder.create<g::BinaryOp>(l, type, op, a, b);
}

Value MLIRGenImpl::lowerBinary(g::BinaryFn op, const Expr &lhs, const Expr &rhs,
                               mlir::Location l) {
  // A number takes the element type of the tensor it meets.
  Value a, b;
  if (isWeakScalar(lhs) && !isWeakScalar(rhs)) {
    b = lower(rhs);
    if (!b)
      return nullptr;
    a = weakScalar(lhs, typeOf(b).getElementType());
  } else if (isWeakScalar(rhs) && !isWeakScalar(lhs)) {
    a = lower(lhs);
    if (!a)
      return nullptr;
    b = weakScalar(rhs, typeOf(a).getElementType());
  } else if (isWeakScalar(lhs) && isWeakScalar(rhs) &&
             (lhs.type->elem == ElemType::WeakFloat ||
              rhs.type->elem == ElemType::WeakFloat)) {
    // Two numbers, one of them a float (`theta / depth` of a float and an
    // int hyper-parameter): both in f32, as a float meets an int.
    a = weakScalar(lhs, builder.getF32Type());
    b = weakScalar(rhs, builder.getF32Type());
  } else {
    a = lower(lhs);
    b = lower(rhs);
  }
  if (!a || !b)
    return nullptr;
  if (typeOf(a).getElementType() != typeOf(b).getElementType()) {
    // A run-time integer (g.n_nodes, an int argument) meeting a float
    // tensor: the dialect has no conversion op yet.
    fail(lhs.getLoc(),
         "arithmetic between " + mlirTypeString(typeOf(a).getElementType()) +
             " and " + mlirTypeString(typeOf(b).getElementType()) + " values");
    return nullptr;
  }
  Direction direction = Direction::In;
  for (const Expr *e : {&lhs, &rhs})
    if (e->type && e->type->domain == Domain::Edge)
      direction = e->type->direction;
  return binary(op, a, b, l, direction);
}

/// where(c, x, y) as mask(c, x) + mask(c == 0, y): `mask` is exact for
/// every x (an infinite or NaN x that is not picked never meets a 0 * ...),
/// and a y (or x) of constant 0 drops its term.
Value MLIRGenImpl::lowerWhere(const Expr &cond, const Expr &x, const Expr &y,
                              mlir::Location l) {
  std::array<const Expr *, 3> exprs = {&cond, &x, &y};
  std::array<Value, 3> values;
  mlir::Type elem;
  for (size_t i = 0; i < exprs.size(); ++i) {
    if (isWeakScalar(*exprs[i]))
      continue;
    values[i] = lower(*exprs[i]);
    if (!values[i])
      return nullptr;
    if (!elem)
      elem = typeOf(values[i]).getElementType();
  }
  if (!elem)
    elem = builder.getF32Type();
  // A branch of constant 0 drops its term (below): it is not materialised.
  auto isZero = [&](const Expr &e) {
    std::optional<Const> c =
        isWeakScalar(e) ? evalConst(e, fn->env) : std::nullopt;
    return c && c->asDouble() == 0.0;
  };
  bool keepX = !isZero(x), keepY = !isZero(y) || !keepX;
  for (size_t i = 0; i < exprs.size(); ++i) {
    if ((i == 1 && !keepX) || (i == 2 && !keepY))
      continue;
    if (!values[i])
      values[i] = weakScalar(*exprs[i], elem);
    if (!values[i])
      return nullptr;
    if (typeOf(values[i]).getElementType() != elem) {
      fail(exprs[i]->getLoc(),
           "where() over " + mlirTypeString(elem) + " and " +
               mlirTypeString(typeOf(values[i]).getElementType()) + " values");
      return nullptr;
    }
  }
  Direction direction = Direction::In;
  for (const Expr *e : exprs)
    if (e->type && e->type->domain == Domain::Edge)
      direction = e->type->direction;
  Value picked, other;
  if (keepX)
    picked = binary(g::BinaryFn::mask, values[0], values[1], l, direction);
  if (keepY) {
    Value notCond = binary(g::BinaryFn::eq, values[0], constant(0.0, elem, l),
                           l, direction);
    other = binary(g::BinaryFn::mask, notCond, values[2], l, direction);
  }
  if (!picked || !other)
    return picked ? picked : other;
  return binary(g::BinaryFn::add, picked, other, l, direction);
}

Value MLIRGenImpl::lowerCall(const CallExpr &call) {
  mlir::Location l = loc(call.getLoc());
  if (auto *attr = llvm::dyn_cast<AttrExpr>(call.callee.get())) {
    auto *base = llvm::dyn_cast<NameExpr>(attr->base.get());
    if (base && fn->graphs.count(base->name))
      return lowerGraphMethod(call, fn->graphs[base->name], attr->attr.name);
    fail(call.getLoc(), "this call");
    return nullptr;
  }
  auto *callee = llvm::dyn_cast<NameExpr>(call.callee.get());
  if (!callee) {
    fail(call.getLoc(), "this call");
    return nullptr;
  }
  auto inst = fn->instances.find(callee->name);
  if (inst == fn->instances.end())
    return lowerBuiltin(call, callee->name);
  // A layer call: the instance's function with its parameters appended.
  llvm::SmallVector<Value> args;
  for (const Arg &arg : call.args) {
    Value v = lower(*arg.value);
    if (!v)
      return nullptr;
    args.push_back(v);
  }
  const std::vector<Value> &params = fn->instanceParams[callee->name];
  args.append(params.begin(), params.end());
  std::string name = fn->name + "." + callee->name;
  EmittedFunction &target = emitted[name];
  auto op = builder.create<mlir::func::CallOp>(l, target.func, args);
  return op.getResult(0);
}

/// The gnn.unary function of an elementwise builtin (Builtins.def).
static std::optional<g::UnaryFn> getUnaryFn(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<g::UnaryFn>>(name)
#define UNARY(Name, Fn) .Case(#Name, g::UnaryFn::Fn)
#define UNARY_WITH_PARAM(Name, Fn, Param, Default) .Case(#Name, g::UnaryFn::Fn)
#include "gnnc/Frontend/Builtins.def"
      .Default(std::nullopt);
}

/// The gnn.reduce function of a reduction builtin (Builtins.def).
static std::optional<g::ReduceFn> getReduceFn(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<g::ReduceFn>>(name)
#define REDUCTION(Name, Fn, FloatOnly) .Case(#Name, g::ReduceFn::Fn)
#define EXTREMUM(Name, Fn) .Case(#Name, g::ReduceFn::Fn)
#include "gnnc/Frontend/Builtins.def"
      .Default(std::nullopt);
}

/// The gnn.binary function of an elementwise extremum (Builtins.def).
static std::optional<g::BinaryFn> getBinaryFn(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<g::BinaryFn>>(name)
#define EXTREMUM(Name, Fn) .Case(#Name, g::BinaryFn::Fn)
#include "gnnc/Frontend/Builtins.def"
      .Default(std::nullopt);
}

/// The default epsilon of layer_norm, as torch's.
static constexpr double kLayerNormEps = 1e-5;

/// The defaults of batch_norm, as torch's.
static constexpr double kBatchNormMomentum = 0.1;
static constexpr double kBatchNormEps = 1e-5;

/// The least variance of g.std, as in PyG's StdAggregation.
static constexpr double kStdVarianceFloor = 1e-5;

/// The gnn.scatter or gnn.readout function of an aggregating graph method
/// (Builtins.def); g.std is two mean scatters.
static std::optional<g::ReduceFn> getGraphReduceFn(llvm::StringRef method) {
  return llvm::StringSwitch<std::optional<g::ReduceFn>>(method)
#define AGGREGATION(Name, Fn, FloatOnly) .Case(#Name, g::ReduceFn::Fn)
#define READOUT(Name, Fn, FloatOnly) .Case(#Name, g::ReduceFn::Fn)
#include "gnnc/Frontend/Builtins.def"
      .Default(std::nullopt);
}

Value MLIRGenImpl::lowerBuiltin(const CallExpr &call, llvm::StringRef name) {
  mlir::Location l = loc(call.getLoc());
  const BuiltinInfo *builtin = lookupBuiltin(name);
  if (!builtin) {
    fail(call.getLoc(), "'" + name.str() + "'");
    return nullptr;
  }
  auto argExpr = [&](size_t position, llvm::StringRef keyword) -> const Expr * {
    size_t pos = 0;
    for (const Arg &a : call.args) {
      if (a.keyword.name == keyword)
        return a.value.get();
      if (a.keyword.name.empty() && pos++ == position)
        return a.value.get();
    }
    return nullptr;
  };
  auto constArg = [&](size_t position, llvm::StringRef keyword,
                      double fallback) {
    const Expr *e = argExpr(position, keyword);
    if (!e)
      return fallback;
    std::optional<Const> c = evalConst(*e, fn->env);
    return c ? c->asDouble() : fallback;
  };
  const Expr *first = argExpr(0, "x");
  auto result = [&]() { return tensorType(*call.type, g::Domain::dense); };
  auto resultLike = [&](Value x) {
    return tensorType(*call.type, domainOf(x));
  };
  auto axisOf = [&](Value x, size_t position, int64_t fallback) {
    double raw = constArg(position, "axis", static_cast<double>(fallback));
    int64_t axis = static_cast<int64_t>(raw);
    return axis < 0 ? axis + typeOf(x).getRank() : axis;
  };

  switch (builtin->kind) {
  case BuiltinKind::Where:
    return lowerWhere(*argExpr(0, "condition"), *argExpr(1, "x"),
                      *argExpr(2, "y"), l);
  case BuiltinKind::Unary: {
    // Of a number (sqrt(out_dim)): an f32 scalar, as Sema types it.
    Value x = isWeakScalar(*first) ? weakScalar(*first, builder.getF32Type())
                                   : lower(*first);
    if (!x)
      return nullptr;
    mlir::FloatAttr alpha;
    if (!builtin->param.empty())
      alpha = builder.getF64FloatAttr(
          constArg(1, builtin->param, builtin->paramDefault));
    return builder.create<g::UnaryOp>(
        l, x.getType(), g::UnaryFnAttr::get(&context, *getUnaryFn(name)), x,
        alpha);
  }
  case BuiltinKind::LayerNorm: {
    // (x - mean) / sqrt(var + eps) over the last axis, var the biased
    // variance: gnn ops that autodiff and fusion already handle.
    Value x = lower(*first);
    if (!x)
      return nullptr;
    double eps = constArg(1, "eps", kLayerNormEps);
    Direction direction = call.type->direction;
    g::DomainTensorType t = typeOf(x);
    llvm::SmallVector<int64_t> shape(t.getShape());
    shape.back() = 1;
    auto meanOfLastAxis = [&](Value v) -> Value {
      return builder.create<g::ReduceOp>(
          l, t.withShape(shape),
          g::ReduceFnAttr::get(&context, g::ReduceFn::mean), v,
          builder.getI64IntegerAttr(t.getRank() - 1), builder.getUnitAttr());
    };
    Value centred =
        binary(g::BinaryFn::sub, x, meanOfLastAxis(x), l, direction);
    Value variance = meanOfLastAxis(
        binary(g::BinaryFn::mul, centred, centred, l, direction));
    Value shifted = binary(g::BinaryFn::add, variance,
                           constant(eps, t.getElementType(), l), l, direction);
    Value scale = builder.create<g::UnaryOp>(
        l, shifted.getType(), g::UnaryFnAttr::get(&context, g::UnaryFn::rsqrt),
        shifted, nullptr);
    return binary(g::BinaryFn::mul, centred, scale, l, direction);
  }
  case BuiltinKind::BatchNorm: {
    // (x - mean) / sqrt(var + eps) per column, with the batch's mean and
    // biased variance in training and the running ones in inference,
    // selected by gnn.training as where() selects; a training forward also
    // blends the batch's statistics into the running ones.
    Value x = lower(*first);
    Value runningMean = lower(*argExpr(1, "running_mean"));
    Value runningVar = lower(*argExpr(2, "running_var"));
    if (!x || !runningMean || !runningVar)
      return nullptr;
    double momentum = constArg(3, "momentum", kBatchNormMomentum);
    double eps = constArg(4, "eps", kBatchNormEps);
    g::DomainTensorType t = typeOf(x);
    mlir::Type elem = t.getElementType();
    auto columnMean = [&](Value v) -> Value {
      return builder.create<g::ReduceOp>(
          l, t.withShape({t.getShape()[1]}),
          g::ReduceFnAttr::get(&context, g::ReduceFn::mean), v,
          builder.getI64IntegerAttr(0), nullptr);
    };
    Direction direction = call.type->direction;
    Value batchMean = columnMean(x);
    Value centred = binary(g::BinaryFn::sub, x, batchMean, l, direction);
    Value batchVar =
        columnMean(binary(g::BinaryFn::mul, centred, centred, l, direction));
    Value training = builder.create<g::TrainingOp>(
        l, g::DomainTensorType::get(&context, g::Domain::dense, {}, elem));
    Value inference =
        binary(g::BinaryFn::eq, training, constant(0.0, elem, l), l, direction);
    // (Each op on its own line: the order of the IR does not depend on the
    // order in which a compiler evaluates arguments.)
    auto select = [&](Value batch, Value running) {
      Value picked = binary(g::BinaryFn::mask, training, batch, l, direction);
      Value other = binary(g::BinaryFn::mask, inference, running, l, direction);
      return binary(g::BinaryFn::add, picked, other, l, direction);
    };
    Value mean = select(batchMean, runningMean);
    Value variance = select(batchVar, runningVar);
    Value shifted = binary(g::BinaryFn::add, variance, constant(eps, elem, l),
                           l, direction);
    Value scale = builder.create<g::UnaryOp>(
        l, shifted.getType(), g::UnaryFnAttr::get(&context, g::UnaryFn::rsqrt),
        shifted, nullptr);
    builder.create<g::UpdateBatchStatsOp>(l, runningMean, runningVar, x,
                                          builder.getF64FloatAttr(momentum));
    return binary(g::BinaryFn::mul,
                  binary(g::BinaryFn::sub, x, mean, l, direction), scale, l,
                  direction);
  }
  case BuiltinKind::Extremum: {
    // max(a, b) is elementwise; with an axis it is a reduction.
    bool hasAxisKeyword = llvm::any_of(call.args, [](const Arg &a) {
      return a.keyword.name == "axis" || a.keyword.name == "keepdims";
    });
    if (!hasAxisKeyword)
      return lowerBinary(*getBinaryFn(name), *argExpr(0, "a"), *argExpr(1, "b"),
                         l);
    [[fallthrough]];
  }
  case BuiltinKind::Reduction: {
    Value x = lower(*first);
    if (!x)
      return nullptr;
    g::ReduceFn reduce = *getReduceFn(name);
    const Expr *axisExpr = argExpr(1, "axis");
    mlir::IntegerAttr axis;
    if (axisExpr)
      axis = builder.getI64IntegerAttr(axisOf(x, 1, -1));
    const Expr *keep = argExpr(2, "keepdims");
    bool keepdims =
        keep && llvm::isa<BoolExpr>(keep) && llvm::cast<BoolExpr>(keep)->value;
    return builder.create<g::ReduceOp>(
        l, resultLike(x), g::ReduceFnAttr::get(&context, reduce), x, axis,
        keepdims ? builder.getUnitAttr() : nullptr);
  }
  case BuiltinKind::Softmax: {
    Value x = lower(*first);
    if (!x)
      return nullptr;
    return builder.create<g::SoftmaxOp>(
        l, x.getType(), x, builder.getI64IntegerAttr(axisOf(x, 1, -1)),
        builtin->log ? builder.getUnitAttr() : nullptr);
  }
  case BuiltinKind::Dropout: {
    Value x = lower(*first);
    if (!x)
      return nullptr;
    return builder.create<g::DropoutOp>(
        l, x.getType(), x, builder.getF64FloatAttr(constArg(1, "p", 0.0)),
        builder.getI64IntegerAttr(nextSeed++));
  }
  case BuiltinKind::Transpose: {
    Value x = lower(*first);
    if (!x)
      return nullptr;
    return builder.create<g::TransposeOp>(l, resultLike(x), x);
  }
  case BuiltinKind::Reshape: {
    Value x = lower(*first);
    if (!x)
      return nullptr;
    return builder.create<g::ReshapeOp>(l, resultLike(x), x);
  }
  case BuiltinKind::Concat: {
    auto &list = llvm::cast<ListExpr>(*argExpr(0, "xs"));
    llvm::SmallVector<Value> inputs;
    for (const ExprPtr &e : list.elements) {
      Value v = lower(*e);
      if (!v)
        return nullptr;
      inputs.push_back(v);
    }
    // Mixed domains (a per-vertex value next to a dense row) meet in the
    // richest one.
    g::Domain domain = g::Domain::dense;
    for (Value v : inputs)
      if (domainOf(v) != g::Domain::dense)
        domain = domainOf(v);
    for (Value &v : inputs)
      if (domainOf(v) == g::Domain::dense && domain != g::Domain::dense)
        v = builder.create<g::SplatOp>(l, typeOf(v).withDomain(domain),
                                       currentGraph(), v);
    int64_t axis = axisOf(inputs[0], 1, 0);
    return builder.create<g::ConcatOp>(l, tensorType(*call.type, domain),
                                       inputs, builder.getI64IntegerAttr(axis));
  }
  case BuiltinKind::Range:
    // Only the source of a range loop, which Sema checked.
    break;
  }
  (void)result;
  fail(call.getLoc(), "'" + name.str() + "'");
  return nullptr;
}

Value MLIRGenImpl::lowerGraphMethod(const CallExpr &call, Value graph,
                                    llvm::StringRef method) {
  mlir::Location l = loc(call.getLoc());
  const GraphMethodInfo *info = lookupGraphMethod(method);
  if (!info || info->kind == GraphMethodKind::SetAttr) {
    fail(call.getLoc(), "this call"); // Sema accepts neither
    return nullptr;
  }
  switch (info->kind) {
  case GraphMethodKind::Degree:
    if (method == "in_degree")
      return builder.create<g::InDegreeOp>(
          l, tensorType(*call.type, g::Domain::dense), graph);
    return builder.create<g::OutDegreeOp>(
        l, tensorType(*call.type, g::Domain::dense), graph);
  case GraphMethodKind::Relation: {
    auto &name = llvm::cast<StringExpr>(*call.args[0].value);
    return builder.create<g::RelationOp>(
        l, g::GraphType::get(&context, g::GraphKind::graph), graph,
        builder.getStringAttr(name.value));
  }
  case GraphMethodKind::Readout: {
    Value x = lower(*call.args[0].value);
    if (!x)
      return nullptr;
    g::ReduceFn reduce = *getGraphReduceFn(method);
    return builder.create<g::ReadoutOp>(
        l, tensorType(*call.type, g::Domain::dense), reduce, graph, x);
  }
  case GraphMethodKind::Dot: {
    Value a = lower(*call.args[0].value), b = lower(*call.args[1].value);
    if (!a || !b)
      return nullptr;
    Value product = binary(g::BinaryFn::mul, a, b, l, call.type->direction);
    g::DomainTensorType t = typeOf(product);
    llvm::SmallVector<int64_t> shape(t.getShape());
    shape.back() = 1;
    return builder.create<g::ReduceOp>(
        l, t.withShape(shape), g::ReduceFnAttr::get(&context, g::ReduceFn::sum),
        product, builder.getI64IntegerAttr(t.getRank() - 1),
        builder.getUnitAttr());
  }
  case GraphMethodKind::DstRows: {
    Value x = lower(*call.args[0].value);
    if (!x)
      return nullptr;
    // Every vertex of a homogeneous graph is a destination.
    if (mlir::cast<g::GraphType>(graph.getType()).getKind() !=
        g::GraphKind::block)
      return x;
    return builder.create<g::DstRowsOp>(
        l, tensorType(*call.type, g::Domain::dense), graph, x);
  }
  case GraphMethodKind::Aggregation:
  case GraphMethodKind::EdgeSoftmax:
  case GraphMethodKind::SetAttr:
    break;
  }
  // Aggregations and edge softmax: over the loop vertex's neighbourhood.
  Value list = lower(*call.args[0].value);
  if (!list)
    return nullptr;
  if (domainOf(list) != g::Domain::edge) {
    fail(call.getLoc(), "an aggregation of a value that is not per-edge");
    return nullptr;
  }
  Direction direction = call.args[0].value->type->direction;
  g::Domain center =
      direction == Direction::In ? g::Domain::dst : g::Domain::src;
  if (info->kind == GraphMethodKind::EdgeSoftmax)
    return builder.create<g::EdgeSoftmaxOp>(
        l, list.getType(), graph, list, g::DomainAttr::get(&context, center));
  g::ReduceFn reduce = *getGraphReduceFn(method);
  auto aggregate = [&](Value perEdge) {
    Value aggregated = builder.create<g::ScatterOp>(
        l, typeOf(perEdge).withDomain(center), reduce, graph, perEdge);
    aggregated = toSide(aggregated, toDomain(vertex->side), l);
    return atCenter(aggregated, l);
  };
  if (method != "std")
    return aggregate(list);
  // PyG's StdAggregation, sqrt(max(var, 1e-5)), so a vertex without
  // in-edges gets sqrt(1e-5). The variance is the mean of the squared
  // deviations from the mean, a second pass over the edges: PyG's
  // mean(l * l) - mean(l)^2 is the same in exact arithmetic but cancels in
  // float32 where the deviations are small against the mean.
  Value mean = aggregate(list);
  Value deviation = binary(g::BinaryFn::sub, list, mean, l, direction);
  Value variance =
      aggregate(binary(g::BinaryFn::mul, deviation, deviation, l, direction));
  Value floor = constant(kStdVarianceFloor, typeOf(list).getElementType(), l);
  Value clamped = binary(g::BinaryFn::max, variance, floor, l, direction);
  return builder.create<g::UnaryOp>(
      l, clamped.getType(), g::UnaryFnAttr::get(&context, g::UnaryFn::sqrt),
      clamped, nullptr);
}

mlir::OwningOpRef<mlir::ModuleOp> gnnc::mlirGen(mlir::MLIRContext &context,
                                                const Module &module,
                                                DiagnosticEngine &diags,
                                                const MLIRGenOptions &options) {
  loadGNNDialects(context);
  return MLIRGenImpl(context, module, diags).run(options);
}
