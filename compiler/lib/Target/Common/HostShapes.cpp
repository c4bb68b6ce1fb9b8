//===- HostShapes.cpp - Run-time shapes of host values --------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnnc/Target/HostShapes.h"

#include "gnnc/Dialect/GNN/IR/GNN.h"
#include "gnnc/Dialect/GNNK/IR/GNNK.h"
#include "gnnc/Target/CodeWriter.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <numeric>

using namespace mlir;
using namespace gnnc;
using namespace gnnc::target;
using gnn::Domain;
using gnn::DomainTensorType;

namespace {

Dim normalized(Dim d) {
  if (d.num == 0)
    return Dim::constant(0);
  if (d.den < 0) {
    d.num = -d.num;
    d.den = -d.den;
  }
  int64_t g = std::gcd(d.num < 0 ? -d.num : d.num, d.den);
  if (g > 1) {
    d.num /= g;
    d.den /= g;
  }
  return d;
}

} // namespace

std::optional<Dim> gnnc::target::multiply(Dim a, Dim b) {
  if (a.symbol >= 0 && b.symbol >= 0)
    return std::nullopt;
  Dim out{a.num * b.num, a.den * b.den, a.symbol >= 0 ? a.symbol : b.symbol};
  return normalized(out);
}

Dim gnnc::target::divide(Dim a, int64_t c) {
  return normalized(Dim{a.num, a.den * c, a.symbol});
}

std::string gnnc::target::dimExpr(Dim d,
                                  const std::function<std::string(int)> &name) {
  if (d.symbol < 0)
    return std::to_string(d.num / d.den);
  std::string s = name(d.symbol);
  if (d.num == 1 && d.den == 1)
    return s;
  if (d.den == 1)
    return std::to_string(d.num) + " * " + s;
  return s + " * " + std::to_string(d.num) + " / " + std::to_string(d.den);
}

std::string gnnc::target::dimText(Dim d,
                                  const std::function<std::string(int)> &name) {
  if (d.symbol < 0)
    return std::to_string(d.num / d.den);
  std::string s = name(d.symbol);
  if (d.num == 1 && d.den == 1)
    return s;
  if (d.den == 1)
    return std::to_string(d.num) + "*" + s;
  return std::to_string(d.num) + "*" + s + "/" + std::to_string(d.den);
}

std::string
gnnc::target::productExpr(ArrayRef<Dim> dims,
                          const std::function<std::string(int)> &name) {
  if (FailureOr<Dim> p = FunctionShapes::product(dims); succeeded(p))
    return dimExpr(*p, name);
  std::string out;
  for (Dim d : dims) {
    if (d.isConstant(1))
      continue;
    std::string e = dimExpr(d, name);
    if (e.find(' ') != std::string::npos)
      e = "(" + e + ")";
    out += (out.empty() ? "" : " * ") + e;
  }
  return out.empty() ? "1" : out;
}

FailureOr<Dim> FunctionShapes::product(ArrayRef<Dim> dims) {
  Dim acc = Dim::constant(1);
  for (Dim d : dims) {
    std::optional<Dim> next = multiply(acc, d);
    if (!next)
      return failure();
    acc = *next;
  }
  return acc;
}

Dim FunctionShapes::resolve(Dim d) const {
  for (unsigned depth = 0; d.symbol >= 0 && depth < 64; ++depth) {
    const std::optional<Dim> &b = bindings[d.symbol];
    if (!b)
      break;
    d = normalized(Dim{d.num * b->num, d.den * b->den, b->symbol});
  }
  return d;
}

Shape FunctionShapes::shape(Value v) const {
  auto it = shapes.find(v);
  if (it == shapes.end())
    return {};
  Shape out;
  for (Dim d : it->second)
    out.push_back(resolve(d));
  return out;
}

Shape FunctionShapes::argShape(unsigned i) const {
  Shape out;
  for (Dim d : argShapes[i])
    out.push_back(resolve(d));
  return out;
}

Shape FunctionShapes::resultShape(unsigned i) const {
  Shape out;
  for (Dim d : resultShapes[i])
    out.push_back(resolve(d));
  return out;
}

std::pair<Shape, Shape> FunctionShapes::alignedOperands(Operation *op) const {
  auto it = aligned.find(op);
  if (it == aligned.end())
    return {};
  auto fix = [&](const Shape &s) {
    Shape out;
    for (Dim d : s)
      out.push_back(resolve(d));
    return out;
  };
  return {fix(it->second.first), fix(it->second.second)};
}

ArrayRef<Dim> FunctionShapes::calleeSymbols(Operation *call) const {
  auto it = callSymbols.find(call);
  if (it == callSymbols.end())
    return {};
  return it->second;
}

const FunctionShapes::GraphSymbols *
FunctionShapes::graphSymbols(Value graph) const {
  auto it = graphs.find(graph);
  return it == graphs.end() ? nullptr : &it->second;
}

namespace gnnc::target {

/// Builds a FunctionShapes op by op.
class ShapeAnalysis {
public:
  ShapeAnalysis(func::FuncOp func,
                const llvm::StringMap<FunctionShapes> &callees)
      : func(func), callees(callees) {}

  LogicalResult run();
  FunctionShapes result;

private:
  int newSymbol(SizeSymbol::Kind kind, std::string name, unsigned graphArg = 0,
                std::string relation = "") {
    SizeSymbol s;
    s.kind = kind;
    s.name = std::move(name);
    s.graphArg = graphArg;
    s.relation = std::move(relation);
    result.symbols.push_back(std::move(s));
    result.bindings.push_back(std::nullopt);
    return static_cast<int>(result.symbols.size()) - 1;
  }
  Dim resolve(Dim d) const { return result.resolve(d); }
  Shape resolved(const Shape &s) const {
    Shape out;
    for (Dim d : s)
      out.push_back(resolve(d));
    return out;
  }
  Shape &shapeOf(Value v) { return result.shapes[v]; }
  Shape get(Value v) { return resolved(result.shapes.lookup(v)); }
  void set(Value v, Shape s) { result.shapes[v] = std::move(s); }

  /// Requires a == b: binds an unknown, or records a run-time check.
  LogicalResult unify(Dim a, Dim b, Operation *op);
  LogicalResult unifyShapes(const Shape &a, const Shape &b, Operation *op);

  /// The number of rows of `domain` of `graph`.
  FailureOr<Dim> countOf(Value graph, Domain domain, Operation *op);
  FailureOr<Dim> graphDim(Value graph, int FunctionShapes::GraphSymbols::*,
                          StringRef what, Operation *op);
  /// The symbols of the graph arguments and relations; `names` are the
  /// sizes a block argument names (gnn.sizes), shared with the other
  /// arguments that name them.
  void addGraphArg(unsigned index, gnn::GraphKind kind, StringRef prefix,
                   ArrayRef<std::string> names = {});

  /// The edge count of relation `relation` of heterogeneous argument `arg`.
  int relationEdges(unsigned arg, StringRef relation);

  LogicalResult visit(Operation *op);
  LogicalResult visitBinary(Operation *op, Value lhs, Value rhs,
                            bool keepLhs = false);
  LogicalResult visitCall(func::CallOp call);
  LogicalResult visitLaunch(gnnk::LaunchOp launch);

  func::FuncOp func;
  const llvm::StringMap<FunctionShapes> &callees;
  int firstGraphArg = -1;
  llvm::StringMap<int> explicitByName;
  /// Symbols of the sizes block arguments name, by name.
  llvm::StringMap<int> namedSizes;
};

} // namespace gnnc::target

LogicalResult ShapeAnalysis::unify(Dim a, Dim b, Operation *op) {
  a = resolve(a);
  b = resolve(b);
  if (a == b)
    return success();
  auto isUnknown = [&](Dim d) {
    return d.symbol >= 0 &&
           result.symbols[d.symbol].kind == SizeSymbol::Kind::Unknown;
  };
  // a = (n/d) U  ==>  U = b * d / n.
  auto bind = [&](Dim u, Dim other) {
    result.bindings[u.symbol] =
        normalized(Dim{other.num * u.den, other.den * u.num, other.symbol});
  };
  if (isUnknown(a) && a.num != 0) {
    bind(a, b);
    return success();
  }
  if (isUnknown(b) && b.num != 0) {
    bind(b, a);
    return success();
  }
  if (a.isConstant() && b.isConstant())
    return op->emitError("sizes ")
           << a.num / a.den << " and " << b.num / b.den
           << " must be equal (C++ printer shape analysis)";
  result.checkList.emplace_back(a, b, op);
  return success();
}

LogicalResult ShapeAnalysis::unifyShapes(const Shape &a, const Shape &b,
                                         Operation *op) {
  if (a.size() != b.size())
    return op->emitError("ranks ") << a.size() << " and " << b.size()
                                   << " differ (C++ printer shape analysis)";
  for (auto [x, y] : llvm::zip(a, b))
    if (failed(unify(x, y, op)))
      return failure();
  return success();
}

void ShapeAnalysis::addGraphArg(unsigned index, gnn::GraphKind kind,
                                StringRef prefix, ArrayRef<std::string> names) {
  FunctionShapes::GraphSymbols g;
  std::string p = prefix.str();
  using K = SizeSymbol::Kind;
  // A named size: the symbol of the first argument that names it; a later
  // one reads the same symbol and is checked against it at run time.
  auto named = [&](size_t i, K k, const std::string &fallback) {
    if (i >= names.size())
      return newSymbol(k, fallback, index);
    auto it = namedSizes.find(names[i]);
    if (it != namedSizes.end()) {
      result.shared.push_back({it->second, index, k, names[i]});
      return it->second;
    }
    std::string cname = cIdentifier(names[i]);
    // Not a name the generated code gives one of its own parameters or
    // variables.
    if (isReservedName(cname) ||
        llvm::is_contained({"stream", "saved", "plan", "buffer", "args"},
                           StringRef(cname)))
      cname = (p.empty() ? "g_" : p) + cname;
    int s = newSymbol(k, cname, index);
    namedSizes[names[i]] = s;
    return s;
  };
  if (kind == gnn::GraphKind::block && !names.empty()) {
    g.numSrc = named(0, K::NumSrc, p + "N_src");
    g.numDst = named(1, K::NumDst, p + "N_dst");
    g.numEdges = named(2, K::NumEdges, p + "E");
    result.graphs[func.getArgument(index)] = g;
    return;
  }
  switch (kind) {
  case gnn::GraphKind::graph:
    g.numDst = g.numSrc = newSymbol(K::NumDst, p + "N", index);
    g.numEdges = newSymbol(K::NumEdges, p + "E", index);
    break;
  case gnn::GraphKind::block:
    g.numSrc = newSymbol(K::NumSrc, p + "N_src", index);
    g.numDst = newSymbol(K::NumDst, p + "N_dst", index);
    g.numEdges = newSymbol(K::NumEdges, p + "E", index);
    break;
  case gnn::GraphKind::batched:
    g.numDst = g.numSrc = newSymbol(K::NumDst, p + "N", index);
    g.numEdges = newSymbol(K::NumEdges, p + "E", index);
    g.numGraphs = newSymbol(K::NumGraphs, p + "B", index);
    break;
  case gnn::GraphKind::hetero:
    g.numDst = g.numSrc = newSymbol(K::NumVertices, p + "N", index);
    break;
  }
  result.graphs[func.getArgument(index)] = g;
}

int ShapeAnalysis::relationEdges(unsigned arg, StringRef relation) {
  for (unsigned s = 0; s < result.symbols.size(); ++s)
    if (result.symbols[s].kind == SizeSymbol::Kind::RelationEdges &&
        result.symbols[s].graphArg == arg &&
        result.symbols[s].relation == relation)
      return s;
  // "N" of the argument, or "<g>_N" in a function of several graphs.
  std::string prefix;
  for (const SizeSymbol &s : result.symbols)
    if (s.kind == SizeSymbol::Kind::NumVertices && s.graphArg == arg)
      prefix = s.name.substr(0, s.name.size() - 1);
  return newSymbol(SizeSymbol::Kind::RelationEdges,
                   prefix + "E_" + cIdentifier(relation), arg, relation.str());
}

FailureOr<Dim> ShapeAnalysis::graphDim(Value graph,
                                       int FunctionShapes::GraphSymbols::*field,
                                       StringRef what, Operation *op) {
  auto it = result.graphs.find(graph);
  if (it == result.graphs.end() || it->second.*field < 0)
    return op->emitError("the C++ printer cannot tell the ")
           << what << " of this graph";
  return Dim::of(it->second.*field);
}

FailureOr<Dim> ShapeAnalysis::countOf(Value graph, Domain domain,
                                      Operation *op) {
  switch (domain) {
  case Domain::src:
    return graphDim(graph, &FunctionShapes::GraphSymbols::numSrc,
                    "source count", op);
  case Domain::dst:
    return graphDim(graph, &FunctionShapes::GraphSymbols::numDst,
                    "destination count", op);
  case Domain::edge:
    return graphDim(graph, &FunctionShapes::GraphSymbols::numEdges,
                    "edge count", op);
  case Domain::dense:
    break;
  }
  return op->emitError("a dense tensor has no row count");
}

FailureOr<FunctionShapes>
FunctionShapes::analyse(func::FuncOp func,
                        const llvm::StringMap<FunctionShapes> &callees) {
  ShapeAnalysis analysis(func, callees);
  if (failed(analysis.run()))
    return failure();
  return std::move(analysis.result);
}

LogicalResult ShapeAnalysis::run() {
  using K = SizeSymbol::Kind;
  unsigned numGraphs = 0;
  for (Type t : func.getArgumentTypes())
    numGraphs += isa<gnn::GraphType>(t);
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    auto g = dyn_cast<gnn::GraphType>(func.getArgument(i).getType());
    if (!g)
      continue;
    if (firstGraphArg < 0)
      firstGraphArg = i;
    std::string prefix;
    if (numGraphs > 1) {
      auto name = func.getArgAttrOfType<StringAttr>(i, gnn::kNameAttrName);
      prefix =
          cIdentifier(name ? name.getValue() : "g" + std::to_string(i)) + "_";
    }
    std::vector<std::string> names;
    if (auto sizes = func.getArgAttrOfType<ArrayAttr>(i, gnn::kSizesAttrName))
      for (Attribute a : sizes)
        if (auto s = dyn_cast<StringAttr>(a))
          names.push_back(s.getValue().str());
    addGraphArg(i, g.getKind(), prefix, names);
  }
  // Tensor arguments: gnn.dims names a graph size or an explicit size;
  // without it a `?` is unknown until an op ties it to something.
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    Value arg = func.getArgument(i);
    if (isa<gnn::GraphType>(arg.getType()))
      continue;
    auto type = dyn_cast<DomainTensorType>(arg.getType());
    if (!type)
      return func.emitError("the C++ printer needs gnn tensor arguments");
    auto dims = func.getArgAttrOfType<ArrayAttr>(i, gnn::kDimsAttrName);
    auto nameAttr = func.getArgAttrOfType<StringAttr>(i, gnn::kNameAttrName);
    auto paramAttr = func.getArgAttrOfType<StringAttr>(i, gnn::kParamAttrName);
    std::string argName = cIdentifier(
        nameAttr ? nameAttr.getValue()
                 : (paramAttr ? paramAttr.getValue()
                              : StringRef("arg" + std::to_string(i))));
    Shape shape;
    if (type.isVertexOrEdge()) {
      if (firstGraphArg < 0)
        return func.emitError("argument ")
               << i << " is a vertex or edge tensor of a graph-less function";
      if (numGraphs > 1) {
        // Which graph's rows: the first op that reads it says.
        shape.push_back(Dim::of(newSymbol(K::Unknown, argName + "_rows")));
      } else {
        FailureOr<Dim> rows =
            countOf(func.getArgument(firstGraphArg), type.getDomain(), func);
        if (failed(rows))
          return failure();
        shape.push_back(*rows);
      }
    }
    for (auto [d, size] : llvm::enumerate(type.getShape())) {
      if (!ShapedType::isDynamic(size)) {
        shape.push_back(Dim::constant(size));
        continue;
      }
      StringRef dimName;
      if (dims && d < dims.size())
        if (auto s = dyn_cast<StringAttr>(dims[d]))
          dimName = s.getValue();
      Value graph =
          firstGraphArg >= 0 ? func.getArgument(firstGraphArg) : Value();
      const FunctionShapes::GraphSymbols *g =
          graph ? result.graphSymbols(graph) : nullptr;
      int sym = -1;
      if (auto it = namedSizes.find(dimName); it != namedSizes.end())
        sym = it->second;
      else if (g && (dimName == "N" || dimName == "N_dst"))
        sym = g->numDst;
      else if (g && dimName == "N_src")
        sym = g->numSrc;
      else if (g && dimName == "E")
        sym = g->numEdges;
      else if (g && dimName == "B")
        sym = g->numGraphs;
      if (sym < 0 && !dimName.empty()) {
        std::string cname = cIdentifier(dimName);
        auto it = explicitByName.find(cname);
        if (it == explicitByName.end())
          it = explicitByName.insert({cname, newSymbol(K::Explicit, cname)})
                   .first;
        sym = it->second;
      }
      if (sym < 0)
        sym = newSymbol(K::Unknown,
                        argName + (d == 0 ? std::string("_rows")
                                          : "_d" + std::to_string(d)));
      shape.push_back(Dim::of(sym));
    }
    set(arg, shape);
  }
  for (Operation &op : func.getBody().front())
    if (failed(visit(&op)))
      return failure();

  // Unknowns nothing bound become explicit sizes.
  for (unsigned s = 0; s < result.symbols.size(); ++s) {
    SizeSymbol &sym = result.symbols[s];
    if (sym.kind == K::Unknown && !result.bindings[s])
      sym.kind = K::Explicit;
    if (sym.kind == K::Unknown)
      continue;
    result.live.push_back(s);
    if (sym.kind == K::Explicit)
      result.explicits.push_back(s);
  }
  // Checks that hold now need no run-time test.
  std::vector<std::tuple<Dim, Dim, Operation *>> checks;
  for (auto &[a, b, op] : result.checkList) {
    Dim x = resolve(a), y = resolve(b);
    if (x != y)
      checks.emplace_back(x, y, op);
  }
  result.checkList = std::move(checks);
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    result.argShapes.push_back(get(func.getArgument(i)));
  return success();
}

LogicalResult ShapeAnalysis::visitBinary(Operation *op, Value lhs, Value rhs,
                                         bool likeRhs) {
  // As Evaluator::binary (and broadcastLike, which broadcasts lhs to the
  // shape of rhs): a dense operand next to a row tensor is lifted over the
  // rows; two row tensors share their first axis; then NumPy rules.
  auto ta = cast<DomainTensorType>(lhs.getType());
  auto tb = cast<DomainTensorType>(rhs.getType());
  Shape sa = get(lhs), sb = get(rhs);
  Domain da = ta.getDomain(), db = tb.getDomain();
  Dim one = Dim::constant(1);
  auto lift = [&](Shape &dense, Shape &rows) {
    size_t rank = std::max(dense.size(), rows.size() - 1);
    while (rows.size() - 1 < rank)
      rows.insert(rows.begin() + 1, one);
    while (dense.size() < rank)
      dense.insert(dense.begin(), one);
    dense.insert(dense.begin(), one);
  };
  if (likeRhs) {
    if (db != Domain::dense) {
      if (da == Domain::dense) {
        while (sa.size() < sb.size() - 1)
          sa.insert(sa.begin(), one);
        sa.insert(sa.begin(), one);
      } else {
        while (sa.size() < sb.size())
          sa.insert(sa.begin() + 1, one);
      }
    }
  } else {
    if (da == Domain::dense && db != Domain::dense)
      lift(sa, sb);
    if (db == Domain::dense && da != Domain::dense)
      lift(sb, sa);
    if (da != Domain::dense && db != Domain::dense) {
      while (sa.size() < sb.size())
        sa.insert(sa.begin() + 1, one);
      while (sb.size() < sa.size())
        sb.insert(sb.begin() + 1, one);
    }
  }
  size_t rank = std::max(sa.size(), sb.size());
  while (sa.size() < rank)
    sa.insert(sa.begin(), one);
  while (sb.size() < rank)
    sb.insert(sb.begin(), one);
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    if (likeRhs) {
      if (!sa[i].isConstant(1) && failed(unify(sa[i], sb[i], op)))
        return failure();
      out[i] = sb[i];
      continue;
    }
    if (sa[i].isConstant(1)) {
      out[i] = sb[i];
    } else if (sb[i].isConstant(1)) {
      out[i] = sa[i];
    } else {
      if (failed(unify(sa[i], sb[i], op)))
        return failure();
      out[i] = resolve(sa[i]);
    }
  }
  result.aligned[op] = {sa, sb};
  set(op->getResult(0), out);
  return success();
}

LogicalResult ShapeAnalysis::visitCall(func::CallOp call) {
  auto it = callees.find(call.getCallee());
  if (it == callees.end())
    return call.emitError("the C++ printer has not analysed @")
           << call.getCallee();
  const FunctionShapes &callee = it->second;
  SmallVector<Dim> values(callee.symbols.size(), Dim::constant(0));
  SmallVector<bool> known(callee.symbols.size(), false);
  // Graph symbols come from the graph operands.
  for (auto [i, operand] : llvm::enumerate(call.getOperands())) {
    if (!isa<gnn::GraphType>(operand.getType()))
      continue;
    const FunctionShapes::GraphSymbols *mine = result.graphSymbols(operand);
    if (!mine)
      return call.emitError("the C++ printer cannot tell the sizes of graph "
                            "operand ")
             << i;
    for (unsigned s = 0; s < callee.symbols.size(); ++s) {
      const SizeSymbol &sym = callee.symbols[s];
      if (sym.graphArg != i)
        continue;
      int mapped = -1;
      switch (sym.kind) {
      case SizeSymbol::Kind::NumDst:
      case SizeSymbol::Kind::NumVertices:
        mapped = mine->numDst;
        break;
      case SizeSymbol::Kind::NumSrc:
        mapped = mine->numSrc;
        break;
      case SizeSymbol::Kind::NumEdges:
        mapped = mine->numEdges;
        break;
      case SizeSymbol::Kind::NumGraphs:
        mapped = mine->numGraphs;
        break;
      case SizeSymbol::Kind::RelationEdges: {
        // The same relation of the heterogeneous graph we pass.
        auto arg = dyn_cast<BlockArgument>(operand);
        if (!arg || arg.getOwner() != &func.getBody().front())
          return call.emitError("the C++ printer needs heterogeneous graphs "
                                "to be arguments");
        mapped = relationEdges(arg.getArgNumber(), sym.relation);
        break;
      }
      default:
        continue;
      }
      if (mapped < 0)
        return call.emitError("the C++ printer cannot map the sizes of @")
               << call.getCallee();
      values[s] = Dim::of(mapped);
      known[s] = true;
    }
  }
  auto substitute = [&](Dim d) -> std::optional<Dim> {
    d = callee.resolve(d);
    if (d.symbol < 0)
      return d;
    if (!known[d.symbol])
      return std::nullopt;
    Dim v = values[d.symbol];
    return normalized(Dim{d.num * v.num, d.den * v.den, v.symbol});
  };
  // Explicit callee sizes come from the operands' shapes.
  for (auto [i, operand] : llvm::enumerate(call.getOperands())) {
    if (isa<gnn::GraphType>(operand.getType()))
      continue;
    Shape mine = get(operand);
    Shape theirs = callee.argShape(i);
    if (mine.size() != theirs.size())
      return call.emitError("operand ") << i << " has another rank";
    for (auto [a, b] : llvm::zip(theirs, mine)) {
      if (a.symbol < 0 || known[a.symbol])
        continue;
      // a = (n/d) S = b  ==>  S = b * d / n.
      values[a.symbol] =
          normalized(Dim{b.num * a.den, b.den * a.num, b.symbol});
      known[a.symbol] = true;
    }
  }
  for (auto [i, operand] : llvm::enumerate(call.getOperands())) {
    if (isa<gnn::GraphType>(operand.getType()))
      continue;
    Shape mine = get(operand);
    for (auto [a, b] : llvm::zip(callee.argShape(i), mine)) {
      std::optional<Dim> s = substitute(a);
      if (s && failed(unify(*s, b, call)))
        return failure();
    }
  }
  for (unsigned r = 0; r < call.getNumResults(); ++r) {
    Shape out;
    for (Dim d : callee.resultShape(r)) {
      std::optional<Dim> s = substitute(d);
      if (!s)
        return call.emitError("the C++ printer cannot tell the size of "
                              "result ")
               << r;
      out.push_back(*s);
    }
    set(call.getResult(r), out);
  }
  for (unsigned s = 0; s < callee.symbols.size(); ++s)
    if (!known[s] && callee.symbols[s].kind != SizeSymbol::Kind::Unknown)
      return call.emitError("the C++ printer cannot tell size '")
             << callee.symbols[s].name << "' of @" << call.getCallee();
  // Blocks the callee chains must chain here too.
  for (const FunctionShapes::SharedSize &s : callee.sharedSizes()) {
    const FunctionShapes::GraphSymbols *mine =
        result.graphSymbols(call.getOperand(s.graphArg));
    int other = !mine                                ? -1
                : s.kind == SizeSymbol::Kind::NumSrc ? mine->numSrc
                : s.kind == SizeSymbol::Kind::NumDst ? mine->numDst
                                                     : mine->numEdges;
    if (other < 0 || !known[s.symbol])
      return call.emitError("the C++ printer cannot map the sizes of @")
             << call.getCallee();
    if (failed(unify(values[s.symbol], Dim::of(other), call)))
      return failure();
  }
  result.callSymbols[call] = values;
  return success();
}

LogicalResult ShapeAnalysis::visitLaunch(gnnk::LaunchOp launch) {
  Value graph;
  for (Value v : launch.getArgs())
    if (isa<gnn::GraphType>(v.getType()))
      graph = v;
  if (!graph)
    return launch.emitError("the C++ printer needs a gnn graph operand");
  // Vertex and edge inputs have the rows of the kernel's graph.
  for (Value v : launch.getArgs()) {
    auto type = dyn_cast<DomainTensorType>(v.getType());
    if (!type || !type.isVertexOrEdge())
      continue;
    Shape in = get(v);
    FailureOr<Dim> rows = countOf(graph, type.getDomain(), launch);
    if (failed(rows) || in.empty() || failed(unify(in[0], *rows, launch)))
      return failure();
  }
  for (Value r : launch.getResults()) {
    auto type = dyn_cast<DomainTensorType>(r.getType());
    if (!type)
      return launch.emitError("the C++ printer needs gnn tensor results");
    Shape shape;
    if (type.isVertexOrEdge()) {
      FailureOr<Dim> rows = countOf(graph, type.getDomain(), launch);
      if (failed(rows))
        return failure();
      shape.push_back(*rows);
    }
    for (int64_t d : type.getShape()) {
      if (ShapedType::isDynamic(d))
        return launch.emitError("the C++ printer needs static row shapes");
      shape.push_back(Dim::constant(d));
    }
    set(r, shape);
  }
  return success();
}

LogicalResult ShapeAnalysis::visit(Operation *op) {
  using namespace gnn;
  auto rowsOf = [&](Value graph, Value result) -> FailureOr<Dim> {
    return countOf(graph, tensorOf(result).getDomain(), op);
  };
  auto withRows = [](Dim rows, const Shape &s) {
    Shape out{rows};
    out.append(s.begin() + 1, s.end());
    return out;
  };
  auto scalarShape = [](DomainTensorType t) {
    Shape out;
    for (int64_t d : t.getShape())
      out.push_back(Dim::constant(d));
    return out;
  };
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case<InDegreeOp, OutDegreeOp, GraphSizesOp>(
          [&](auto o) -> LogicalResult {
            int FunctionShapes::GraphSymbols::*field =
                isa<InDegreeOp>(op) ? &FunctionShapes::GraphSymbols::numDst
                : isa<OutDegreeOp>(op)
                    ? &FunctionShapes::GraphSymbols::numSrc
                    : &FunctionShapes::GraphSymbols::numGraphs;
            FailureOr<Dim> n = graphDim(o.getGraph(), field, "size", op);
            if (failed(n))
              return failure();
            set(o.getResult(), Shape{*n});
            return success();
          })
      .Case<NumVerticesOp, NumEdgesOp>([&](auto o) -> LogicalResult {
        set(o.getResult(), Shape{});
        return success();
      })
      .Case<RelationOp>([&](RelationOp r) -> LogicalResult {
        auto arg = dyn_cast<BlockArgument>(r.getGraph());
        const FunctionShapes::GraphSymbols *h =
            arg ? result.graphSymbols(arg) : nullptr;
        if (!h)
          return r.emitError("the C++ printer needs relations of a graph "
                             "argument");
        FunctionShapes::GraphSymbols g;
        g.numDst = g.numSrc = h->numDst;
        g.heteroArg = arg.getArgNumber();
        g.relation = r.getName().str();
        g.numEdges = relationEdges(arg.getArgNumber(), r.getName());
        result.graphs[r.getResult()] = g;
        return success();
      })
      .Case<AttachOp>([&](AttachOp a) -> LogicalResult {
        Shape in = get(a.getInput());
        FailureOr<Dim> rows = rowsOf(a.getGraph(), a.getResult());
        if (failed(rows) || in.empty() || failed(unify(in[0], *rows, op)))
          return failure();
        set(a.getResult(), in);
        return success();
      })
      .Case<CollectOp>([&](CollectOp c) -> LogicalResult {
        set(c.getResult(), get(c.getInput()));
        return success();
      })
      .Case<SplatOp>([&](SplatOp s) -> LogicalResult {
        FailureOr<Dim> rows = rowsOf(s.getGraph(), s.getResult());
        if (failed(rows))
          return failure();
        Shape out{*rows};
        Shape in = get(s.getInput());
        out.append(in.begin(), in.end());
        set(s.getResult(), out);
        return success();
      })
      .Case<GatherOp>([&](GatherOp g) -> LogicalResult {
        FailureOr<Dim> e = countOf(g.getGraph(), Domain::edge, op);
        FailureOr<Dim> n =
            countOf(g.getGraph(), tensorOf(g.getInput()).getDomain(), op);
        Shape in = get(g.getInput());
        if (failed(e) || failed(n) || failed(unify(in[0], *n, op)))
          return failure();
        set(g.getResult(), withRows(*e, in));
        return success();
      })
      .Case<ScatterOp>([&](ScatterOp s) -> LogicalResult {
        FailureOr<Dim> rows = rowsOf(s.getGraph(), s.getResult());
        FailureOr<Dim> e = countOf(s.getGraph(), Domain::edge, op);
        Shape in = get(s.getInput());
        if (failed(rows) || failed(e) || failed(unify(in[0], *e, op)))
          return failure();
        set(s.getResult(), withRows(*rows, in));
        return success();
      })
      .Case<ScatterSelectOp, EdgeSoftmaxOp>([&](auto s) -> LogicalResult {
        FailureOr<Dim> e = countOf(s.getGraph(), Domain::edge, op);
        Shape in = get(s.getInput());
        if (failed(e) || failed(unify(in[0], *e, op)))
          return failure();
        set(s.getResult(), in);
        return success();
      })
      .Case<ReadoutOp>([&](ReadoutOp r) -> LogicalResult {
        FailureOr<Dim> b =
            graphDim(r.getGraph(), &FunctionShapes::GraphSymbols::numGraphs,
                     "graph "
                     "count",
                     op);
        FailureOr<Dim> n = countOf(r.getGraph(), Domain::dst, op);
        Shape in = get(r.getInput());
        if (failed(b) || failed(n) || failed(unify(in[0], *n, op)))
          return failure();
        set(r.getResult(), withRows(*b, in));
        return success();
      })
      .Case<ReadoutSelectOp>([&](ReadoutSelectOp r) -> LogicalResult {
        FailureOr<Dim> n = countOf(r.getGraph(), Domain::dst, op);
        Shape in = get(r.getInput());
        if (failed(n) || failed(unify(in[0], *n, op)))
          return failure();
        set(r.getResult(), in);
        return success();
      })
      .Case<BroadcastGraphsOp>([&](BroadcastGraphsOp r) -> LogicalResult {
        FailureOr<Dim> b =
            graphDim(r.getGraph(), &FunctionShapes::GraphSymbols::numGraphs,
                     "graph "
                     "count",
                     op);
        FailureOr<Dim> n = countOf(r.getGraph(), Domain::dst, op);
        Shape in = get(r.getInput());
        if (failed(b) || failed(n) || failed(unify(in[0], *b, op)))
          return failure();
        set(r.getResult(), withRows(*n, in));
        return success();
      })
      .Case<ConstantOp>([&](ConstantOp c) -> LogicalResult {
        set(c.getResult(), scalarShape(tensorOf(c.getResult())));
        return success();
      })
      .Case<TrainingOp>([&](TrainingOp t) -> LogicalResult {
        set(t.getResult(), Shape{});
        return success();
      })
      .Case<UpdateBatchStatsOp>(
          [&](UpdateBatchStatsOp) -> LogicalResult { return success(); })
      .Case<UnaryOp, DropoutOp, SoftmaxOp, ReduceSelectOp>(
          [&](auto u) -> LogicalResult {
            set(u.getResult(), get(u.getInput()));
            return success();
          })
      .Case<BinaryOp>([&](BinaryOp b) -> LogicalResult {
        return visitBinary(op, b.getLhs(), b.getRhs());
      })
      .Case<BroadcastLikeOp>([&](BroadcastLikeOp b) -> LogicalResult {
        return visitBinary(op, b.getInput(), b.getLike(), /*likeRhs=*/true);
      })
      .Case<MatmulOp>([&](MatmulOp m) -> LogicalResult {
        Shape a = get(m.getLhs()), w = get(m.getRhs());
        if (a.empty() || w.size() != 2 || failed(unify(a.back(), w[0], op)))
          return failure();
        a.back() = w[1];
        set(m.getResult(), a);
        return success();
      })
      .Case<ReshapeOp>([&](ReshapeOp r) -> LogicalResult {
        Shape in = get(r.getInput());
        auto type = tensorOf(r.getResult());
        size_t offset = tensorOf(r.getInput()).isVertexOrEdge() ? 1 : 0;
        Shape out;
        if (offset)
          out.push_back(in[0]);
        FailureOr<Dim> total =
            FunctionShapes::product(ArrayRef<Dim>(in).drop_front(offset));
        int64_t known = 1;
        int dynamicAt = -1;
        for (auto [i, d] : llvm::enumerate(type.getShape())) {
          if (ShapedType::isDynamic(d))
            dynamicAt = i;
          else
            known *= d;
        }
        for (auto [i, d] : llvm::enumerate(type.getShape())) {
          if (static_cast<int>(i) != dynamicAt) {
            out.push_back(Dim::constant(d));
            continue;
          }
          if (failed(total) || known == 0)
            return r.emitError("the C++ printer cannot tell the size of "
                               "this reshape");
          out.push_back(divide(*total, known));
        }
        set(r.getResult(), out);
        return success();
      })
      .Case<ReduceOp>([&](ReduceOp r) -> LogicalResult {
        Shape in = get(r.getInput());
        size_t offset = tensorOf(r.getInput()).isVertexOrEdge() ? 1 : 0;
        SmallVector<bool> reduced(in.size(), false);
        if (auto axis = r.getAxisAttr())
          reduced[axis.getInt() + offset] = true;
        else
          for (size_t d = offset; d < in.size(); ++d)
            reduced[d] = true;
        Shape out;
        for (size_t d = 0; d < in.size(); ++d) {
          if (!reduced[d])
            out.push_back(in[d]);
          else if (r.getKeepdims())
            out.push_back(Dim::constant(1));
        }
        set(r.getResult(), out);
        return success();
      })
      .Case<ConcatOp>([&](ConcatOp c) -> LogicalResult {
        size_t offset = tensorOf(c.getResult()).isVertexOrEdge() ? 1 : 0;
        size_t axis = c.getAxis() + offset;
        Shape out = get(c.getInputs()[0]);
        Dim sum = Dim::constant(0);
        for (Value in : c.getInputs()) {
          Shape s = get(in);
          for (size_t d = 0; d < s.size(); ++d)
            if (d != axis && failed(unify(s[d], out[d], op)))
              return failure();
          Dim a = resolve(s[axis]);
          if (sum.num != 0 && a.num != 0 && a.symbol != sum.symbol)
            return c.emitError("the C++ printer cannot add sizes of "
                               "different kinds");
          int sym = a.num != 0 ? a.symbol : sum.symbol;
          sum = normalized(
              Dim{sum.num * a.den + a.num * sum.den, sum.den * a.den, sym});
        }
        out[axis] = sum;
        set(c.getResult(), out);
        return success();
      })
      .Case<DstRowsOp, PadDstRowsOp>([&](auto r) -> LogicalResult {
        // dst_rows: N_src rows in, N_dst out; its transpose the other way.
        bool pad = isa<PadDstRowsOp>(op);
        FailureOr<Dim> from =
            countOf(r.getGraph(), pad ? Domain::dst : Domain::src, op);
        FailureOr<Dim> to =
            countOf(r.getGraph(), pad ? Domain::src : Domain::dst, op);
        Shape in = get(r.getInput());
        if (failed(from) || failed(to) || in.empty() ||
            failed(unify(in[0], *from, op)))
          return failure();
        set(r.getResult(), withRows(*to, in));
        return success();
      })
      .Case<SliceOp>([&](SliceOp s) -> LogicalResult {
        Shape in = get(s.getInput());
        size_t offset = tensorOf(s.getInput()).isVertexOrEdge() ? 1 : 0;
        in[s.getAxis() + offset] = Dim::constant(s.getSize());
        set(s.getResult(), in);
        return success();
      })
      .Case<TransposeOp>([&](TransposeOp t) -> LogicalResult {
        Shape in = get(t.getInput());
        size_t offset = tensorOf(t.getInput()).isVertexOrEdge() ? 1 : 0;
        std::swap(in[offset], in[offset + 1]);
        set(t.getResult(), in);
        return success();
      })
      .Case<func::CallOp>(
          [&](func::CallOp c) -> LogicalResult { return visitCall(c); })
      .Case<gnnk::LaunchOp>(
          [&](gnnk::LaunchOp l) -> LogicalResult { return visitLaunch(l); })
      .Case<func::ReturnOp>([&](func::ReturnOp r) -> LogicalResult {
        for (Value v : r.getOperands())
          result.resultShapes.push_back(get(v));
        return success();
      })
      .Default([&](Operation *other) -> LogicalResult {
        return other->emitError("the C++ printer does not support '")
               << other->getName() << "' in host code";
      });
}
