//===- SemaInternal.h - Shared state of semantic analysis -------*- C++ -*-===//
//
// Part of gnnc. The checker of Sema.h is one class whose members are
// defined by phase in the Sema*.cpp files of this directory: Sema.cpp
// (driver, definitions, forwards), SemaDecls.cpp (hyper-parameters,
// parameters, instances, types), SemaStmt.cpp (statements), SemaExpr.cpp
// (names and attributes), SemaDomains.cpp (comprehensions, broadcasting),
// SemaOperators.cpp (operators, axes, reductions), SemaBuiltins.cpp
// (builtin functions) and SemaCalls.cpp (calls, graph methods, layers).
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_LIB_FRONTEND_SEMAINTERNAL_H
#define GNNC_LIB_FRONTEND_SEMAINTERNAL_H

#include "gnnc/Frontend/Builtins.h"
#include "gnnc/Frontend/Lexer.h"
#include "gnnc/Frontend/Sema.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/ErrorHandling.h"

#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace gnnc {
namespace sema {

using llvm::SMLoc;
using llvm::StringRef;

struct Binding {
  enum class Kind {
    HyperParam,
    Param,
    Buffer,
    Instance,
    Arg,
    Local,
    LoopVar,
    CompVar
  };
  Kind kind;
  ValueType type;
  SMLoc loc;
};

/// How a diagnostic names a kind of binding ("loop variable").
StringRef getBindingKindName(Binding::Kind kind);

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

/// One size a Block argument names: which argument and which of its sizes.
struct SizeUse {
  std::string graph;
  Domain side; ///< Src, Dst, or Edge
  SMLoc loc;
};

/// A graph argument of the forward being checked.
struct GraphArgInfo {
  std::string name;
  GraphSizeNames sizes;
  SMLoc loc;
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
  ValueType checkComparison(BinaryExpr &expr, const ValueType &lhs,
                            const ValueType &rhs);
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
  Dim sideCount(Domain side, const ValueType &graph) const;
  /// Reads the sizes the Block arguments of `def`'s forward name.
  void collectBlockSizes(Definition &def);
  /// The chain diagnostic of a layer call whose argument `index` has
  /// `got` rows where the graph `graph` passed to it wants `want`; false
  /// when the sizes are not those of two different graph arguments.
  bool reportUnchained(CallExpr &call, size_t index, StringRef instName,
                       const Dim &got, const Dim &want);
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
  /// The sizes the Block arguments of the definition's forward name
  /// (`g1: Block[N0, N1]`): every use of each name, by name, ...
  std::map<std::string, std::vector<SizeUse>> namedSizes;
  /// ... the names of each such argument, ...
  std::map<std::string, GraphSizeNames> blockSizes;
  /// ... Block arguments whose names are wrong (their type is an error) ...
  std::set<std::string> badBlockArgs;
  /// ... every graph size symbol besides the default ones (the names, and
  /// the edge counts of graphs that do not name them) ...
  std::vector<std::string> sizeNames;
  /// ... the graph arguments as written, for messages ...
  std::string namedSizesText;
  /// ... and whether `E` still names the edge count of the one graph.
  bool edgeDefaultValid = true;
  /// The graph arguments of the forward being checked.
  std::vector<GraphArgInfo> graphArgs;
  std::map<std::string, AttrTables> attrTables;
  std::optional<VertexContext> vertex;
  /// Directions of the enclosing comprehensions over a neighbourhood.
  std::vector<Direction> comprehensions;
  bool inRangeLoop = false;
  bool returned = false;
  ForwardDef *forward = nullptr;
  /// The buffers a batch_norm of the forward being checked updates, and
  /// where.
  std::map<std::string, SMLoc> updatedBuffers;
  /// The resolved `-> type` of the forward being checked, if valid.
  std::optional<ValueType> declaredResult;
  unsigned nesting = 0;
};

//===----------------------------------------------------------------------===//
// Small helpers
//===----------------------------------------------------------------------===//

inline bool isWeak(ElemType t) {
  return t == ElemType::WeakFloat || t == ElemType::WeakInt;
}

/// Type of a value once stored: a Python number stored in a tensor is f32.
inline ValueType concretize(ValueType t) {
  if (t.elem == ElemType::WeakFloat)
    t.elem = ElemType::F32;
  t.intValue.reset();
  t.floatValue.reset();
  t.isConstant = false;
  return t;
}

inline bool sameTensorType(const ValueType &a, const ValueType &b) {
  return a.kind == b.kind && a.elem == b.elem && a.shape == b.shape &&
         a.domain == b.domain;
}

inline std::string shapeList(const std::vector<Dim> &shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    out += (i ? ", " : "") + shape[i].str();
  return out + "]";
}

inline bool isGraphMethod(StringRef name) {
  return lookupGraphMethod(name) != nullptr;
}

/// g.set_vertex_attr and the like: statements, not values.
inline bool isSetAttrMethod(StringRef name) {
  const GraphMethodInfo *method = lookupGraphMethod(name);
  return method && method->kind == GraphMethodKind::SetAttr;
}

inline bool isBuiltin(StringRef name) { return lookupBuiltin(name) != nullptr; }

inline bool isSizeSymbol(StringRef name) {
  return name == sym::N || name == sym::NSrc || name == sym::NDst ||
         name == sym::E || name == sym::B;
}

/// Sorts the arguments of a builtin call into named slots.
struct BuiltinArgs {
  std::vector<Expr *> slots;
  bool ok = true;
};

/// Matches positional and keyword arguments against `names`; `required` is
/// how many leading slots must be present.
BuiltinArgs matchArgs(CallExpr &call, llvm::ArrayRef<StringRef> names,
                      size_t required, StringRef fn, DiagnosticEngine &diags);

/// Whether `t` is a number known at compile time (a dense scalar constant).
bool isKnownNumber(const ValueType &t);
/// The value of such a number, when it is known (a float or an integer).
std::optional<double> numberValue(const ValueType &t);
/// `t` as a value computed at run time, in a float type (a comparison, a
/// where): no constant, and a weak int becomes a weak float.
ValueType runtimeFloat(ValueType t);

} // namespace sema
} // namespace gnnc

#endif // GNNC_LIB_FRONTEND_SEMAINTERNAL_H
