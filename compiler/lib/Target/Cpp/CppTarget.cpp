//===- CppTarget.cpp - The C++/OpenMP printer of the kernel IR ------------===//
//
// Part of gnnc. Prints a module of the kernel IR as `<stem>.h` and
// `<stem>.cpp` (the ABI is docs/abi.md):
//
//   - every public host function F (a layer, a model, a backward, ...)
//     becomes an entry point `F(graphs, sizes, inputs, params, outputs,
//     workspace, training, seed)` with `F_workspace_bytes(graphs, sizes)`;
//     its parameters travel in a struct `P_Params` (one float pointer per
//     parameter), its intermediates live in the caller's workspace at the
//     offsets of `F_Layout`, and host ops call the runtime library
//     (gnnc/runtime/Ops.h): cblas_sgemm for matmuls, whole-tensor loops for
//     the rest;
//   - every kernel becomes a static function of loops: OpenMP over the
//     vertices (`schedule(dynamic, 64)`), a sequential loop over each
//     vertex's edges in CSR/CSC order, `#pragma omp simd` over feature
//     loops without loop-carried dependences, stack arrays for the
//     per-vertex scratch rows (memref.alloca);
//   - reflection tables (ModuleInfo) let a program call any entry point
//     generically.
//
// Names come from the .gnn source: arguments keep theirs, a value gets the
// variable its line assigns or the attribute it reads (`u.h` -> h), and
// every block of code is preceded by `// file.gnn:37: <the line>`.
//
//===----------------------------------------------------------------------===//

#include "gnnc/Dialect/GNN/IR/GNN.h"
#include "gnnc/Dialect/GNNK/IR/GNNK.h"
#include "gnnc/Target/CodeWriter.h"
#include "gnnc/Target/HostShapes.h"
#include "gnnc/Target/SourceInfo.h"
#include "gnnc/Target/Target.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

using namespace mlir;
using namespace gnnc;
using namespace gnnc::target;
using gnn::Domain;
using gnn::DomainTensorType;

namespace {

//===----------------------------------------------------------------------===//
// Literals
//===----------------------------------------------------------------------===//

/// The shortest decimal form of `value` that reads back exactly, as a C++
/// literal of type float (`isFloat`) or double.
std::string floatLiteral(double value, bool isFloat) {
  const char *type = isFloat ? "float" : "double";
  if (std::isnan(value))
    return llvm::formatv("std::numeric_limits<{0}>::quiet_NaN()", type).str();
  if (std::isinf(value))
    return llvm::formatv("{0}std::numeric_limits<{1}>::infinity()",
                         value < 0 ? "-" : "", type)
        .str();
  char buffer[64];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buffer, sizeof(buffer), "%.*g", precision, value);
    if (isFloat ? std::strtof(buffer, nullptr) == static_cast<float>(value)
                : std::strtod(buffer, nullptr) == value)
      break;
  }
  std::string text = buffer;
  if (text.find_first_of(".e") == std::string::npos)
    text += ".0";
  return text + (isFloat ? "f" : "");
}

std::string cString(StringRef s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

//===----------------------------------------------------------------------===//
// Names from the .gnn source
//===----------------------------------------------------------------------===//

bool isIdentStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool isIdentChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

/// The variable a statement assigns: "h = ..." -> "h", "v.h = ..." -> "h"
/// ("" for anything else).
std::string assignedName(StringRef line) {
  line = line.ltrim();
  size_t i = 0;
  std::string last;
  while (i < line.size() && isIdentStart(line[i])) {
    size_t start = i;
    while (i < line.size() && isIdentChar(line[i]))
      ++i;
    last = line.substr(start, i - start).str();
    if (i < line.size() && line[i] == '.') {
      ++i;
      continue;
    }
    break;
  }
  if (last.empty())
    return "";
  while (i < line.size() && line[i] == ' ')
    ++i;
  if (i + 1 < line.size() && line[i] == '=' && line[i + 1] != '=')
    return last;
  return "";
}

/// What starts at column `col` (1-based): an attribute read `u.h` gives
/// ("h", true); a call `relu(` or a name gives ("relu", false).
std::pair<std::string, bool> nameAt(StringRef line, unsigned col) {
  if (col == 0 || col > line.size())
    return {"", false};
  size_t i = col - 1;
  if (!isIdentStart(line[i]))
    return {"", false};
  // `u.h` located at its attribute name.
  if (i >= 2 && line[i - 1] == '.' && isIdentChar(line[i - 2])) {
    size_t end = i;
    while (end < line.size() && isIdentChar(line[end]))
      ++end;
    bool call = end < line.size() && line[end] == '(';
    return {line.substr(i, end - i).str(), !call};
  }
  SmallVector<std::string, 2> parts;
  while (i < line.size() && isIdentStart(line[i])) {
    size_t start = i;
    while (i < line.size() && isIdentChar(line[i]))
      ++i;
    parts.push_back(line.substr(start, i - start).str());
    if (i + 1 < line.size() && line[i] == '.' && isIdentStart(line[i + 1])) {
      ++i;
      continue;
    }
    break;
  }
  bool call = i < line.size() && line[i] == '(';
  if (parts.size() == 2 && !call)
    return {parts.back(), true};
  return {parts.back(), false};
}

/// The .gnn comment of a location: one `// file.gnn:N: text` per line.
void writeLocationComment(CodeWriter &w, SourceFiles &sources,
                          ArrayRef<SourceLoc> locs) {
  std::set<std::pair<std::string, unsigned>> seen;
  for (const SourceLoc &loc : locs) {
    if (!seen.insert({loc.file, loc.line}).second)
      continue;
    std::string text = sources.line(loc.file, loc.line).trim().str();
    w.line("// " + baseName(loc.file).str() + ":" + std::to_string(loc.line) +
           (text.empty() ? "" : ": " + text));
  }
}

//===----------------------------------------------------------------------===//
// Module-level information
//===----------------------------------------------------------------------===//

/// The parameter struct shared by functions with the same parameters.
struct ParamStruct {
  std::string name;
  std::vector<std::string> paths, fields, inits;
  std::vector<std::vector<int64_t>> shapes;
};

/// One host function: its C names and ABI.
struct HostFunc {
  func::FuncOp func;
  std::string symbol;
  std::string kind;
  const FunctionShapes *shapes = nullptr;
  /// C names of the size symbols (by symbol id).
  std::vector<std::string> symbolNames;
  struct Arg {
    enum Kind { Graph, Input, Param } kind = Input;
    std::string name;  // the C parameter name (graphs, inputs)
    std::string field; // the struct field (parameters)
    gnn::GraphKind graphKind = gnn::GraphKind::graph;
  };
  std::vector<Arg> args;
  const ParamStruct *params = nullptr;
  struct Result {
    std::string name;  // the C parameter name ("out", "grad_x")
    std::string role;  // output, grad, saved
    std::string field; // grads.<field> when packed
    std::string of;    // grad_of / saved name
    /// The gradient of an input (not of a parameter) of a backward: the
    /// caller may pass null, and the ops that only it needs are skipped.
    bool optional = false;
  };
  std::vector<Result> results;
  bool packGrads = false;

  std::string symbolName(int s) const { return symbolNames[s]; }
};

/// A kernel and how the host calls it.
struct KernelInfo {
  func::FuncOp func;
  std::string symbol;
  std::vector<std::string> argNames; // after the graph
  bool usesDropout = false;
  int numOutputs = 0;
};

std::string graphType(gnn::GraphKind kind) {
  switch (kind) {
  case gnn::GraphKind::graph:
  case gnn::GraphKind::block:
    return "const gnnc::rt::Graph &";
  case gnn::GraphKind::batched:
    return "const gnnc::rt::BatchedGraph &";
  case gnn::GraphKind::hetero:
    return "const gnnc::rt::HeteroGraph &";
  }
  return "";
}

std::string graphKindEnum(gnn::GraphKind kind) {
  switch (kind) {
  case gnn::GraphKind::graph:
    return "rt::GraphKind::Graph";
  case gnn::GraphKind::block:
    return "rt::GraphKind::Block";
  case gnn::GraphKind::batched:
    return "rt::GraphKind::Batched";
  case gnn::GraphKind::hetero:
    return "rt::GraphKind::Hetero";
  }
  return "";
}

std::string graphKindName(gnn::GraphKind kind) {
  return gnn::stringifyGraphKind(kind).str();
}

/// The C++ expression of a size symbol, read from the graph arguments
/// (`graphExpr(i)` is the expression of graph argument i).
std::string symbolSource(const SizeSymbol &s, const HostFunc &f,
                         const std::function<std::string(unsigned)> &graph) {
  std::string g = graph(s.graphArg);
  gnn::GraphKind kind = f.args[s.graphArg].graphKind;
  bool batched = kind == gnn::GraphKind::batched;
  switch (s.kind) {
  case SizeSymbol::Kind::NumDst:
    return batched ? g + ".graph->numDst()" : g + ".numDst()";
  case SizeSymbol::Kind::NumSrc:
    return batched ? g + ".graph->numSrc()" : g + ".numSrc()";
  case SizeSymbol::Kind::NumEdges:
    return batched ? g + ".graph->numEdges()" : g + ".numEdges()";
  case SizeSymbol::Kind::NumGraphs:
    return g + ".numGraphs";
  case SizeSymbol::Kind::NumVertices:
    return g + ".numVertices";
  case SizeSymbol::Kind::RelationEdges:
    return "rt::relationOrEmpty(" + g + ", " + cString(s.relation) +
           ").numEdges()";
  case SizeSymbol::Kind::Explicit:
  case SizeSymbol::Kind::Unknown:
    break;
  }
  return "0";
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

/// A C++ expression and its precedence (0: primary; larger binds looser).
struct Expr {
  std::string text;
  int prec = 0;
};

enum Prec {
  kPrimary = 0,
  kUnary = 3,
  kMul = 5,
  kAdd = 6,
  kRel = 9,
  kEq = 10,
  kAnd = 14,
  kOr = 15,
  kCond = 16,
};

std::string wrap(const Expr &e, int maxPrec) {
  return e.prec > maxPrec ? "(" + e.text + ")" : e.text;
}

std::string cTypeOf(Type t) {
  if (t.isF32())
    return "float";
  if (t.isF64())
    return "double";
  if (t.isInteger(1))
    return "bool";
  return "int64_t";
}

/// How many edges ahead an edge loop prefetches the rows it gathers
/// (measured on R-MAT graphs beyond the last-level cache: 16 to 64 edges
/// ahead are within a few percent of each other for rows of 64 to 1024
/// bytes; rows of at most a cache line want twice as many).
constexpr int64_t kPrefetchDistance = 32;

class KernelPrinter {
public:
  KernelPrinter(const KernelInfo &info, SourceFiles &sources, CodeWriter &w)
      : info(info), kernel(info.func), sources(sources), w(w) {}

  LogicalResult print();

private:
  Expr expr(Value v);
  FailureOr<Expr> build(Operation *op);
  LogicalResult printBlock(Block &block);
  LogicalResult printOp(Operation &op);
  LogicalResult printFor(scf::ForOp loop);
  LogicalResult printVertices(gnnk::ForVerticesOp loop);
  LogicalResult printEdges(gnnk::ForEdgesOp loop);
  void printGatheredRows(gnnk::ForEdgesOp loop);
  std::string index(Value memref, ValueRange indices, unsigned from = 0);
  bool inlinable(Operation *op);
  bool simdSafe(scf::ForOp loop);
  void setSource(Operation *op);
  std::string fresh(StringRef base) { return namer.unique(base); }

  const KernelInfo &info;
  func::FuncOp kernel;
  SourceFiles &sources;
  CodeWriter &w;
  Namer namer;
  DenseMap<Value, std::string> names;
  DenseMap<Value, Value> viewOf; // reinterpret_cast -> source
  /// Inside an edge loop: the row pointer of each input row read at the
  /// neighbour or the edge (keyed by the input and that index value).
  DenseMap<std::pair<Value, Value>, std::string> rowPointers;
  unsigned loopDepth = 0;
  unsigned temps = 0;
  SourceLine lastComment;
  // Graph arrays used by the kernel.
  bool usesNeighbour = false, usesEdge = false, usesPtr = false;
  bool usesNumEdges = false;
  gnnk::Side side = gnnk::Side::dst;
};

void KernelPrinter::setSource(Operation *op) {
  SourceLoc loc = primaryLoc(op->getLoc());
  w.setSource(loc.toLine());
  if (loc && loc.toLine() != lastComment) {
    writeLocationComment(w, sources, {loc});
    lastComment = loc.toLine();
  }
}

/// The flat index of `indices` into `memref` (row-major, static strides
/// behind a leading `?`), counting from index `from` (the offset inside a
/// row when `from` is 1).
std::string KernelPrinter::index(Value memref, ValueRange indices,
                                 unsigned from) {
  auto type = cast<MemRefType>(memref.getType());
  ArrayRef<int64_t> shape = type.getShape();
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  std::string out;
  for (auto [i, idx] : llvm::enumerate(indices)) {
    if (i < from)
      continue;
    if (auto c = idx.getDefiningOp<arith::ConstantIndexOp>())
      if (c.value() == 0)
        continue;
    Expr e = expr(idx);
    std::string term = strides[i] == 1
                           ? wrap(e, kAdd)
                           : wrap(e, kMul) + " * " + std::to_string(strides[i]);
    out += (out.empty() ? "" : " + ") + term;
  }
  return out.empty() ? "0" : out;
}

/// Whether `op`'s single result can be written into its user's expression:
/// one use, in the same block, with no write to memory in between.
bool KernelPrinter::inlinable(Operation *op) {
  if (op->getNumResults() != 1 || !op->getResult(0).hasOneUse())
    return false;
  Operation *user = *op->getResult(0).getUsers().begin();
  if (user->getBlock() != op->getBlock())
    return false;
  for (Operation *it = op->getNextNode(); it && it != user;
       it = it->getNextNode())
    if (isa<memref::StoreOp>(it) || it->getNumRegions() > 0)
      return false;
  return true;
}

Expr KernelPrinter::expr(Value v) {
  auto it = names.find(v);
  if (it != names.end())
    return {it->second, kPrimary};
  Operation *def = v.getDefiningOp();
  if (!def)
    return {"<?>", kPrimary};
  FailureOr<Expr> e = build(def);
  return succeeded(e) ? *e : Expr{"<?>", kPrimary};
}

FailureOr<Expr> KernelPrinter::build(Operation *op) {
  auto binary = [&](Value a, Value b, StringRef sym, int prec) -> Expr {
    return {wrap(expr(a), prec) + " " + sym.str() + " " +
                wrap(expr(b), prec - 1),
            prec};
  };
  auto call = [&](StringRef fn, ValueRange args) -> Expr {
    std::string text = fn.str() + "(";
    for (auto [i, a] : llvm::enumerate(args))
      text += (i ? ", " : "") + wrap(expr(a), kCond);
    return {text + ")", kPrimary};
  };
  return llvm::TypeSwitch<Operation *, FailureOr<Expr>>(op)
      .Case<arith::ConstantOp>([&](arith::ConstantOp c) -> FailureOr<Expr> {
        Attribute value = c.getValue();
        if (auto f = dyn_cast<FloatAttr>(value)) {
          std::string text =
              floatLiteral(f.getValueAsDouble(), f.getType().isF32());
          return Expr{text, text[0] == '-' ? kUnary : kPrimary};
        }
        if (auto i = dyn_cast<IntegerAttr>(value)) {
          if (i.getType().isInteger(1))
            return Expr{i.getValue().isZero() ? "false" : "true", kPrimary};
          int64_t v = i.getValue().getSExtValue();
          return Expr{std::to_string(v), v < 0 ? kUnary : kPrimary};
        }
        return op->emitError("the C++ printer cannot print this constant");
      })
      .Case<arith::AddFOp, arith::AddIOp>(
          [&](auto o) { return binary(o.getLhs(), o.getRhs(), "+", kAdd); })
      .Case<arith::SubFOp, arith::SubIOp>(
          [&](auto o) { return binary(o.getLhs(), o.getRhs(), "-", kAdd); })
      .Case<arith::MulFOp, arith::MulIOp>(
          [&](auto o) { return binary(o.getLhs(), o.getRhs(), "*", kMul); })
      .Case<arith::DivFOp, arith::DivSIOp>(
          [&](auto o) { return binary(o.getLhs(), o.getRhs(), "/", kMul); })
      .Case<arith::RemSIOp>(
          [&](auto o) { return binary(o.getLhs(), o.getRhs(), "%", kMul); })
      .Case<arith::RemFOp>([&](arith::RemFOp o) {
        return call("std::fmod", {o.getLhs(), o.getRhs()});
      })
      .Case<arith::AndIOp>([&](arith::AndIOp o) {
        return o.getType().isInteger(1)
                   ? binary(o.getLhs(), o.getRhs(), "&&", kAnd)
                   : binary(o.getLhs(), o.getRhs(), "&", kAnd);
      })
      .Case<arith::OrIOp>([&](arith::OrIOp o) {
        return o.getType().isInteger(1)
                   ? binary(o.getLhs(), o.getRhs(), "||", kOr)
                   : binary(o.getLhs(), o.getRhs(), "|", kOr);
      })
      .Case<arith::XOrIOp>(
          [&](auto o) { return binary(o.getLhs(), o.getRhs(), "!=", kEq); })
      .Case<arith::NegFOp>([&](arith::NegFOp o) {
        return Expr{"-" + wrap(expr(o.getOperand()), kUnary), kUnary};
      })
      .Case<arith::CmpFOp>([&](arith::CmpFOp o) -> FailureOr<Expr> {
        using P = arith::CmpFPredicate;
        Value a = o.getLhs(), b = o.getRhs();
        switch (o.getPredicate()) {
        case P::OGT:
          return binary(a, b, ">", kRel);
        case P::OGE:
          return binary(a, b, ">=", kRel);
        case P::OLT:
          return binary(a, b, "<", kRel);
        case P::OLE:
          return binary(a, b, "<=", kRel);
        case P::OEQ:
          return binary(a, b, "==", kEq);
        case P::UNE:
          return binary(a, b, "!=", kEq);
        case P::UGT:
          return Expr{"!(" + binary(a, b, "<=", kRel).text + ")", kUnary};
        case P::UGE:
          return Expr{"!(" + binary(a, b, "<", kRel).text + ")", kUnary};
        case P::ULT:
          return Expr{"!(" + binary(a, b, ">=", kRel).text + ")", kUnary};
        case P::ULE:
          return Expr{"!(" + binary(a, b, ">", kRel).text + ")", kUnary};
        case P::AlwaysTrue:
          return Expr{"true", kPrimary};
        case P::AlwaysFalse:
          return Expr{"false", kPrimary};
        default:
          return o.emitError("the C++ printer does not support this "
                             "comparison");
        }
      })
      .Case<arith::CmpIOp>([&](arith::CmpIOp o) -> FailureOr<Expr> {
        using P = arith::CmpIPredicate;
        Value a = o.getLhs(), b = o.getRhs();
        switch (o.getPredicate()) {
        case P::eq:
          return binary(a, b, "==", kEq);
        case P::ne:
          return binary(a, b, "!=", kEq);
        case P::slt:
        case P::ult:
          return binary(a, b, "<", kRel);
        case P::sle:
        case P::ule:
          return binary(a, b, "<=", kRel);
        case P::sgt:
        case P::ugt:
          return binary(a, b, ">", kRel);
        case P::sge:
        case P::uge:
          return binary(a, b, ">=", kRel);
        }
        return failure();
      })
      .Case<arith::SelectOp>([&](arith::SelectOp o) {
        // Nested conditionals get parentheses, for the reader.
        return Expr{wrap(expr(o.getCondition()), kOr) + " ? " +
                        wrap(expr(o.getTrueValue()), kCond - 1) + " : " +
                        wrap(expr(o.getFalseValue()), kCond - 1),
                    kCond};
      })
      .Case<arith::IndexCastOp>(
          [&](arith::IndexCastOp o) { return expr(o.getIn()); })
      .Case<arith::SIToFPOp, arith::UIToFPOp, arith::FPToSIOp, arith::ExtFOp,
            arith::TruncFOp>([&](auto o) {
        return Expr{"static_cast<" + cTypeOf(o.getType()) + ">(" +
                        wrap(expr(o.getIn()), kCond) + ")",
                    kPrimary};
      })
      // rt::simdExp vectorises (std::exp does not without -ffast-math).
      .Case<math::ExpOp>([&](math::ExpOp o) {
        return call(o.getType().isF32() ? "rt::simdExp" : "std::exp",
                    o.getOperand());
      })
      .Case<math::LogOp>(
          [&](auto o) { return call("std::log", o.getOperand()); })
      .Case<math::SqrtOp>(
          [&](auto o) { return call("std::sqrt", o.getOperand()); })
      .Case<math::RsqrtOp>([&](math::RsqrtOp o) {
        bool f32 = o.getType().isF32();
        return Expr{(f32 ? "1.0f / " : "1.0 / ") +
                        call("std::sqrt", o.getOperand()).text,
                    kMul};
      })
      .Case<math::AbsFOp>(
          [&](auto o) { return call("std::abs", o.getOperand()); })
      .Case<math::TanhOp>(
          [&](auto o) { return call("std::tanh", o.getOperand()); })
      .Case<math::ErfOp>(
          [&](auto o) { return call("std::erf", o.getOperand()); })
      .Case<math::PowFOp>([&](math::PowFOp o) {
        return call("std::pow", {o.getLhs(), o.getRhs()});
      })
      .Case<math::SinOp>(
          [&](auto o) { return call("std::sin", o.getOperand()); })
      .Case<math::CosOp>(
          [&](auto o) { return call("std::cos", o.getOperand()); })
      .Case<math::FloorOp>(
          [&](auto o) { return call("std::floor", o.getOperand()); })
      .Case<math::CeilOp>(
          [&](auto o) { return call("std::ceil", o.getOperand()); })
      .Case<memref::LoadOp>([&](memref::LoadOp o) {
        Value m = o.getMemRef();
        auto type = cast<MemRefType>(m.getType());
        std::string base = expr(m).text;
        if (type.getRank() == 0 && !isa<BlockArgument>(m) &&
            isa_and_nonnull<memref::AllocaOp>(m.getDefiningOp()))
          return Expr{base, kPrimary};
        if (!o.getIndices().empty()) {
          auto row = rowPointers.find({m, o.getIndices()[0]});
          if (row != rowPointers.end())
            return Expr{row->second + "[" + index(m, o.getIndices(), 1) + "]",
                        kPrimary};
        }
        return Expr{base + "[" + index(m, o.getIndices()) + "]", kPrimary};
      })
      .Case<gnnk::DegreeOp>([&](gnnk::DegreeOp o) {
        usesPtr = true;
        std::string v = expr(o.getVertex()).text;
        std::string ptr = o.getBy() == gnnk::Side::dst ? "in_ptr" : "out_ptr";
        return Expr{ptr + "[" + v + " + 1] - " + ptr + "[" + v + "]", kAdd};
      })
      .Case<gnnk::DropoutKeepOp>([&](gnnk::DropoutKeepOp o) {
        Expr seed = expr(o.getSeed());
        Expr at = expr(o.getIndex());
        std::string text =
            "rt::dropoutKeep(training, rt::mixSeed(" + seed.text + ", seed), " +
            "static_cast<uint64_t>(" + wrap(at, kCond) + "), " +
            floatLiteral(o.getPAttr().getValueAsDouble(), false) + ")";
        if (!o.getType().isF32())
          text = "static_cast<" + cTypeOf(o.getType()) + ">(" + text + ")";
        return Expr{text, kPrimary};
      })
      .Default([&](Operation *other) -> FailureOr<Expr> {
        return other->emitError("the C++ printer does not support '")
               << other->getName() << "' in a kernel";
      });
}

bool KernelPrinter::simdSafe(scf::ForOp loop) {
  Value iv = loop.getInductionVar();
  bool safe = true;
  // Buffers written in the loop, with the one index list they are written
  // and read at.
  DenseMap<Value, SmallVector<Value, 4>> written;
  loop.getBody()->walk([&](Operation *op) {
    if (isa<scf::ForOp, gnnk::ForEdgesOp, gnnk::ForVerticesOp>(op))
      safe = false;
    if (auto store = dyn_cast<memref::StoreOp>(op)) {
      Value m = store.getMemRef();
      SmallVector<Value, 4> idx(store.getIndices());
      if (!llvm::is_contained(idx, iv) || viewOf.count(m))
        safe = false;
      auto [it, inserted] = written.try_emplace(m, idx);
      if (!inserted && it->second != idx)
        safe = false;
    }
  });
  if (!safe)
    return false;
  loop.getBody()->walk([&](memref::LoadOp load) {
    Value m = load.getMemRef();
    auto it = written.find(m);
    if (it != written.end() &&
        SmallVector<Value, 4>(load.getIndices()) != it->second)
      safe = false;
    // A buffer written through another view of it.
    if (auto source = viewOf.lookup(m))
      if (written.count(source))
        safe = false;
  });
  for (auto &entry : written)
    for (auto &[view, source] : viewOf)
      if (source == entry.first)
        safe = false;
  return safe;
}

LogicalResult KernelPrinter::printFor(scf::ForOp loop) {
  if (loop.getNumResults() != 0)
    return loop.emitError("the C++ printer does not support scf.for with "
                          "results");
  static const char *const kNames[] = {"i", "j", "k", "l"};
  std::string iv =
      loopDepth < 4 ? kNames[loopDepth] : "i" + std::to_string(loopDepth);
  namer.reserve(iv);
  names[loop.getInductionVar()] = iv;
  setSource(loop);
  if (simdSafe(loop))
    w.directive("#pragma omp simd");
  std::string step = expr(loop.getStep()).text;
  w.line("for (int64_t " + iv + " = " + expr(loop.getLowerBound()).text + "; " +
         iv + " < " + wrap(expr(loop.getUpperBound()), kAdd) + "; " +
         (step == "1" ? "++" + iv : iv + " += " + step) + ") {");
  w.indent();
  ++loopDepth;
  LogicalResult r = printBlock(*loop.getBody());
  --loopDepth;
  w.dedent();
  w.line("}");
  return r;
}

LogicalResult KernelPrinter::printVertices(gnnk::ForVerticesOp loop) {
  names[loop.getVertex()] = "v";
  namer.reserve("v");
  std::string count =
      loop.getBy() == gnnk::Side::dst ? "g.numDst()" : "g.numSrc()";
  setSource(loop);
  w.directive("#pragma omp parallel for schedule(dynamic, 64)");
  w.line("for (int64_t v = 0; v < " + count + "; ++v) {");
  w.indent();
  LogicalResult r = printBlock(*loop.getBodyBlock());
  w.dedent();
  w.setSource(primaryLoc(loop.getLoc()).toLine());
  w.line("}");
  return r;
}

LogicalResult KernelPrinter::printEdges(gnnk::ForEdgesOp loop) {
  bool dst = loop.getBy() == gnnk::Side::dst;
  std::string ptr = dst ? "in_ptr" : "out_ptr";
  std::string v = expr(loop.getVertex()).text;
  usesPtr = true;
  setSource(loop);
  w.line("for (int64_t at = " + ptr + "[" + v + "]; at < " + ptr + "[" + v +
         " + 1]; ++at) {");
  w.indent();
  if (!loop.getEdge().use_empty()) {
    usesEdge = true;
    names[loop.getEdge()] = "e";
    w.line(std::string("const int64_t e = ") + (dst ? "in_edge" : "out_edge") +
           "[at];");
  }
  if (!loop.getNeighbour().use_empty()) {
    usesNeighbour = true;
    names[loop.getNeighbour()] = "u";
    w.line(std::string("const int64_t u = ") + (dst ? "in_src" : "out_dst") +
           "[at];");
  }
  namer.reserve("e");
  namer.reserve("u");
  namer.reserve("at");
  printGatheredRows(loop);
  LogicalResult r = printBlock(*loop.getBodyBlock());
  rowPointers.clear();
  w.dedent();
  w.setSource(primaryLoc(loop.getLoc()).toLine());
  w.line("}");
  return r;
}

/// The input rows an edge reads at its neighbour or at itself are gathered
/// from addresses that only the graph knows, so the hardware prefetchers do
/// not see them coming and a plain loop waits for memory on every edge. The
/// loop asks for the rows of a later edge of the CSR (or CSC) order in
/// advance, `kPrefetchDistance` places ahead, across vertices, and reads
/// each row through a pointer to it (contiguous loads, which GCC otherwise
/// turns into gathers when it vectorises across unrolled edges).
void KernelPrinter::printGatheredRows(gnnk::ForEdgesOp loop) {
  bool dst = loop.getBy() == gnnk::Side::dst;
  Block &entry = kernel.getBody().front();
  SmallVector<std::pair<Value, Value>, 4> rows;
  loop.getBodyBlock()->walk([&](memref::LoadOp load) {
    auto arg = dyn_cast<BlockArgument>(load.getMemRef());
    if (!arg || arg.getOwner() != &entry || load.getIndices().empty())
      return;
    Value at = load.getIndices()[0];
    if (at != loop.getNeighbour() && at != loop.getEdge())
      return;
    if (!llvm::is_contained(rows, std::make_pair(Value(arg), at)))
      rows.push_back({arg, at});
  });
  if (rows.empty())
    return;
  auto rowSize = [](Value m) {
    ArrayRef<int64_t> shape = cast<MemRefType>(m.getType()).getShape();
    int64_t n = 1;
    for (int64_t d : shape.drop_front())
      n *= d;
    return n;
  };
  // Rows of a cache line or less (64 bytes) in all: twice as far ahead.
  int64_t bytes = 0;
  for (auto &[m, at] : rows)
    bytes += 4 * rowSize(m);
  int64_t distance = bytes <= 64 ? 2 * kPrefetchDistance : kPrefetchDistance;
  std::string ahead = "at + " + std::to_string(distance);
  usesNumEdges = true;
  w.line("// Prefetch the rows of the edge " + std::to_string(distance) +
         " places ahead.");
  w.line("if (" + ahead + " < num_edges) {");
  w.indent();
  for (auto &[m, at] : rows) {
    bool byNeighbour = at == loop.getNeighbour();
    std::string array = byNeighbour ? (dst ? "in_src" : "out_dst")
                                    : (dst ? "in_edge" : "out_edge");
    usesNeighbour = usesNeighbour || byNeighbour;
    usesEdge = usesEdge || !byNeighbour;
    int64_t n = rowSize(m);
    w.line("rt::prefetchRow<" + std::to_string(n) + ">(" + names[m] + " + " +
           array + "[" + ahead + "]" +
           (n == 1 ? "" : " * " + std::to_string(n)) + ");");
  }
  w.dedent();
  w.line("}");
  for (auto &[m, at] : rows) {
    bool byNeighbour = at == loop.getNeighbour();
    std::string name = fresh(names[m] + (byNeighbour ? "_u" : "_e"));
    int64_t n = rowSize(m);
    w.line("const float *" + name + " = " + names[m] + " + " +
           (byNeighbour ? "u" : "e") +
           (n == 1 ? "" : " * " + std::to_string(n)) + ";");
    rowPointers[{m, at}] = name;
  }
}

LogicalResult KernelPrinter::printBlock(Block &block) {
  for (Operation &op : block)
    if (failed(printOp(op)))
      return failure();
  return success();
}

LogicalResult KernelPrinter::printOp(Operation &op) {
  if (isa<gnnk::YieldOp, scf::YieldOp, func::ReturnOp, arith::ConstantOp>(op))
    return success();
  if (auto loop = dyn_cast<scf::ForOp>(op))
    return printFor(loop);
  if (auto loop = dyn_cast<gnnk::ForVerticesOp>(op))
    return printVertices(loop);
  if (auto loop = dyn_cast<gnnk::ForEdgesOp>(op))
    return printEdges(loop);
  if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
    if (ifOp.getNumResults() != 0)
      return ifOp.emitError("the C++ printer does not support scf.if with "
                            "results");
    setSource(ifOp);
    w.line("if (" + expr(ifOp.getCondition()).text + ") {");
    w.indent();
    if (failed(printBlock(ifOp.getThenRegion().front())))
      return failure();
    w.dedent();
    if (!ifOp.getElseRegion().empty()) {
      w.line("} else {");
      w.indent();
      if (failed(printBlock(ifOp.getElseRegion().front())))
        return failure();
      w.dedent();
    }
    w.line("}");
    return success();
  }
  if (auto alloca = dyn_cast<memref::AllocaOp>(op)) {
    MemRefType type = alloca.getType();
    if (!type.hasStaticShape())
      return alloca.emitError("the C++ printer needs static scratch rows");
    std::string elem = cTypeOf(type.getElementType());
    setSource(alloca);
    std::string base;
    SourceLoc loc = primaryLoc(alloca.getLoc());
    SourceLoc kernelLoc = primaryLoc(kernel.getLoc());
    if (type.getRank() == 0 && type.getElementType().isInteger(1))
      base = "first";
    else if (loc.line == kernelLoc.line && loc.column == kernelLoc.column)
      base = "acc";
    else
      base = nameAt(sources.line(loc.file, loc.line), loc.column).first;
    if (base.empty())
      base = "row";
    std::string name = fresh(base);
    names[alloca.getResult()] = name;
    // A scalar flag (the first-edge flag) is an int, as the temporaries
    // that read it in feature loops are (below).
    if (type.getRank() == 0)
      w.line((elem == "bool" ? "int" : elem) + " " + name + " = " +
             (elem == "bool" ? "false" : "0") + ";");
    else
      w.line(elem + " " + name + "[" + std::to_string(type.getNumElements()) +
             "];");
    return success();
  }
  if (auto cast = dyn_cast<memref::ReinterpretCastOp>(op)) {
    names[cast.getResult()] = expr(cast.getSource()).text;
    Value source = cast.getSource();
    while (Value s = viewOf.lookup(source))
      source = s;
    viewOf[cast.getResult()] = source;
    return success();
  }
  if (auto store = dyn_cast<memref::StoreOp>(op)) {
    setSource(store);
    Value m = store.getMemRef();
    std::string target = expr(m).text;
    if (cast<MemRefType>(m.getType()).getRank() != 0 ||
        !isa_and_nonnull<memref::AllocaOp>(m.getDefiningOp()))
      target += "[" + index(m, store.getIndices()) + "]";
    w.line(target + " = " + expr(store.getValueToStore()).text + ";");
    return success();
  }
  // A scalar: written into its user, or declared here.
  if (op.getNumResults() != 1 || op.getNumRegions() != 0)
    return op.emitError("the C++ printer does not support '")
           << op.getName() << "' in a kernel";
  if (op.getResult(0).use_empty())
    return success();
  FailureOr<Expr> e = build(&op);
  if (failed(e))
    return failure();
  if (inlinable(&op))
    return success();
  setSource(&op);
  std::string name = fresh("t" + std::to_string(temps++));
  Value result = op.getResult(0);
  std::string type = cTypeOf(result.getType());
  // A flag read inside a feature loop it is not defined in (the first-edge
  // flag of an online softmax) is an int: GCC 12 does not vectorise a loop
  // of few iterations that mixes a bool invariant with floats.
  if (type == "bool" && llvm::any_of(result.getUsers(), [&](Operation *user) {
        scf::ForOp loop = user->getParentOfType<scf::ForOp>();
        return loop && !loop->isProperAncestor(&op);
      }))
    type = "int";
  w.line("const " + type + " " + name + " = " + e->text + ";");
  names[result] = name;
  return success();
}

LogicalResult KernelPrinter::print() {
  Block &entry = kernel.getBody().front();
  names[entry.getArgument(0)] = "g";
  namer.reserve("g");
  namer.reserve("v");
  for (StringRef reserved :
       {"in_ptr", "in_src", "in_edge", "out_ptr", "out_dst", "out_edge",
        "num_edges", "training", "seed", "i", "j", "k", "l", "e", "u", "at"})
    namer.reserve(reserved);
  for (unsigned i = 1; i < entry.getNumArguments(); ++i) {
    std::string base = i - 1 < info.argNames.size() ? info.argNames[i - 1]
                                                    : "arg" + std::to_string(i);
    names[entry.getArgument(i)] = fresh(base);
  }
  kernel.walk([&](gnnk::ForVerticesOp loop) { side = loop.getBy(); });

  SmallVector<SourceLoc, 4> locs = allLocs(kernel.getLoc());
  SourceLine home = primaryLoc(kernel.getLoc()).toLine();
  w.setSource(home);
  w.beginKernel();
  writeLocationComment(w, sources, locs);
  lastComment = home;
  std::string signature = "void " + info.symbol + "(const rt::Graph &g";
  int numInputs =
      static_cast<int>(entry.getNumArguments()) - 1 - info.numOutputs;
  for (unsigned i = 1; i < entry.getNumArguments(); ++i) {
    bool output = static_cast<int>(i) - 1 >= numInputs;
    signature += std::string(", ") + (output ? "float *" : "const float *") +
                 "__restrict " + names[entry.getArgument(i)];
  }
  if (info.usesDropout)
    signature += ", bool training, uint64_t seed";
  signature += ") {";
  w.line(signature);
  w.indent();
  // Print the loops into a separate writer, then the graph arrays they use.
  CodeWriter loops;
  KernelPrinter inner(info, sources, loops);
  inner.names = names;
  inner.namer = namer;
  inner.lastComment = lastComment;
  inner.side = side;
  if (failed(inner.printBlock(entry)))
    return failure();
  bool dst = inner.side == gnnk::Side::dst;
  if (inner.usesPtr)
    w.line(std::string("const int64_t *") + (dst ? "in_ptr" : "out_ptr") +
           " = g." + (dst ? "inPtr" : "outPtr") + "().data();");
  if (inner.usesNeighbour)
    w.line(std::string("const int64_t *") + (dst ? "in_src" : "out_dst") +
           " = g." + (dst ? "inSrc" : "outDst") + "().data();");
  if (inner.usesEdge)
    w.line(std::string("const int64_t *") + (dst ? "in_edge" : "out_edge") +
           " = g." + (dst ? "inEdge" : "outEdge") + "().data();");
  if (inner.usesNumEdges)
    w.line("const int64_t num_edges = g.numEdges();");
  w.append(loops);
  w.dedent();
  w.setSource(home);
  w.line("}");
  w.endKernel();
  return success();
}

//===----------------------------------------------------------------------===//
// Host functions
//===----------------------------------------------------------------------===//

/// How a host value is stored.
struct Storage {
  enum Kind { Arg, Alias, Buffer, Output, Scalar, Graph } kind = Buffer;
  std::string name;      // variable or expression of its pointer
  bool isConst = false;  // a const float *
  bool declared = false; // has its own variable (Buffer, Alias)
};

class HostPrinter {
public:
  HostPrinter(HostFunc &f, SourceFiles &sources,
              const std::map<std::string, HostFunc *> &functions,
              const std::map<std::string, KernelInfo> &kernels)
      : f(f), func(f.func), shapes(*f.shapes), sources(sources),
        functions(functions), kernels(kernels) {}

  /// Names every value and decides where it lives.
  LogicalResult plan();
  /// The C names of the operands of each launch of a kernel.
  void kernelArgNames(std::map<std::string, KernelInfo> &kernels) const;
  /// Prints the Layout struct, the entry point and its workspace size.
  LogicalResult print(CodeWriter &w);

private:
  std::string sym(int s) {
    usedSymbols.insert(s);
    return f.symbolName(s);
  }
  std::string dim(Dim d) {
    return dimExpr(d, [&](int s) { return sym(s); });
  }
  std::string numel(const Shape &s) {
    return productExpr(s, [&](int x) { return sym(x); });
  }
  std::string numel(Value v) { return numel(shapes.shape(v)); }
  std::string shapeList(const Shape &s) {
    std::string out = "{";
    for (auto [i, d] : llvm::enumerate(s))
      out += (i ? ", " : "") + dim(d);
    return out + "}";
  }
  std::string ptr(Value v) { return storage[v].name; }
  std::string graph(Value g);
  std::string kernelGraph(Value g);
  /// The product of dims [from, to) of v's shape.
  std::string dims(Value v, size_t from, size_t to) {
    Shape s = shapes.shape(v);
    to = std::min(to, s.size());
    return numel(Shape(s.begin() + std::min(from, to), s.begin() + to));
  }
  std::string rowSize(Value v) {
    Shape s = shapes.shape(v);
    return dims(v, 1, s.size());
  }
  /// Prints `op` into `w`, the declarations of its buffers into `decl`.
  LogicalResult printOp(Operation *op, CodeWriter &w, CodeWriter &decl);
  LogicalResult printCall(func::CallOp call, CodeWriter &w, CodeWriter &decl);
  void declare(Value v, CodeWriter &w);
  /// The condition under which `op` runs: "" (always), or "grad_x || ..."
  /// when every result it contributes to is optional (may be null).
  std::string guardOf(Operation *op) const;
  /// The same for the results value `v` contributes to.
  std::string guardOfValue(Value v) const;
  std::string valueName(Operation *op, Value result, unsigned ssa,
                        bool &meaningful);

  HostFunc &f;
  func::FuncOp func;
  const FunctionShapes &shapes;
  SourceFiles &sources;
  const std::map<std::string, HostFunc *> &functions;
  const std::map<std::string, KernelInfo> &kernels;
  Namer namer;
  DenseMap<Value, Storage> storage;
  /// A buffer of the workspace: its name, its byte count (an expression)
  /// and the ops (by position in the body) between which it is live.
  struct Slot {
    std::string name, bytes;
    unsigned first = 0, last = 0;
  };
  std::vector<Slot> layout;
  /// The position of every op of the body, and for every value whose
  /// buffer is its own, the position of the last op that reads it (through
  /// views too).
  DenseMap<Operation *, unsigned> position;
  DenseMap<Value, unsigned> lastUse;
  void addSlot(std::string name, std::string bytes, Operation *op,
               Value value = Value()) {
    unsigned first = position.lookup(op);
    unsigned last = value ? std::max(first, lastUse.lookup(value)) : first;
    layout.push_back({std::move(name), std::move(bytes), first, last});
    usesWorkspace = true;
  }
  DenseMap<Operation *, std::string> callWorkspace, scratch;
  std::set<int> usedSymbols;
  bool usesTraining = false, usesSeed = false, usesWorkspace = false;
  std::set<unsigned> usedGraphs;
  /// Result i copied from a value at the end.
  std::vector<bool> copyResult;
  /// Ops whose results reach the return (the others are not printed).
  DenseSet<Operation *> live;
  /// The results of the function (by index) each value contributes to,
  /// through the ops that read it; an op's set is the union of its
  /// results'.
  DenseMap<Value, llvm::SmallBitVector> valueFeeds;
  DenseMap<Operation *, llvm::SmallBitVector> opFeeds;
  bool hasOptionalResults = false;
  std::string guardFor(const llvm::SmallBitVector &results) const;
  /// Transposes of a matrix that only matmuls read: the matmul reads the
  /// input through cblas_sgemm's CblasTrans instead (rt::matmulT), and the
  /// transpose is a view of its input that prints nothing.
  DenseSet<Operation *> absorbedTransposes;
  /// `reduce sum` of a whole edge row of `mul(gather(x), gather(y))` (the
  /// gradient of an edge weight): one pass over the edges that gathers both
  /// rows (rt::gatherDot), keyed by the reduce, with the two gathers; the
  /// gathers and the product print nothing.
  DenseMap<Operation *, std::pair<gnn::GatherOp, gnn::GatherOp>> gatherDots;
  DenseSet<Operation *> fusedIntoDot;
  /// Ops that only name another buffer (attach, collect, reshape, absorbed
  /// transposes).
  bool isView(Operation *op) const {
    return isa<gnn::AttachOp, gnn::CollectOp, gnn::ReshapeOp>(op) ||
           absorbedTransposes.count(op);
  }
  /// Whether a printed op reads `v`'s data (broadcast_like reads only the
  /// shape of its second operand, which is known without it).
  bool isUsed(Value v) const {
    return llvm::any_of(v.getUses(), [&](OpOperand &use) {
      Operation *user = use.getOwner();
      if (isa<gnn::BroadcastLikeOp>(user) && use.getOperandNumber() == 1)
        return false;
      return live.count(user) > 0;
    });
  }
};

std::string HostPrinter::graph(Value g) {
  if (auto arg = dyn_cast<BlockArgument>(g)) {
    usedGraphs.insert(arg.getArgNumber());
    return f.args[arg.getArgNumber()].name;
  }
  return "*" + storage[g].name;
}

/// The rt::Graph of a graph value (the union of a batch).
std::string HostPrinter::kernelGraph(Value g) {
  std::string e = graph(g);
  auto type = cast<gnn::GraphType>(g.getType());
  if (type.getKind() == gnn::GraphKind::batched)
    return "*" + e + ".graph";
  return e;
}

std::string HostPrinter::valueName(Operation *op, Value result, unsigned ssa,
                                   bool &meaningful) {
  meaningful = false;
  SourceLoc loc = primaryLoc(op->getLoc());
  StringRef text = sources.line(loc.file, loc.line);
  // The last op of an assignment's line computes the assigned variable.
  if (loc) {
    bool last = true;
    for (Operation *next = op->getNextNode(); next && last;
         next = next->getNextNode()) {
      if (isa<func::ReturnOp>(next))
        break;
      if (primaryLoc(next->getLoc()).line == loc.line &&
          primaryLoc(next->getLoc()).file == loc.file)
        last = false;
    }
    auto [name, isAttribute] = nameAt(text, loc.column);
    if (isAttribute) {
      meaningful = true;
      return name;
    }
    std::string assigned = last ? assignedName(text) : "";
    if (!assigned.empty() && op->getNumResults() == 1) {
      meaningful = true;
      return assigned;
    }
  }
  std::string kind =
      llvm::TypeSwitch<Operation *, std::string>(op)
          .Case<gnn::UnaryOp>(
              [](auto o) { return gnn::stringifyUnaryFn(o.getFn()).str(); })
          .Case<gnn::BinaryOp>(
              [](auto o) { return gnn::stringifyBinaryFn(o.getFn()).str(); })
          .Case<gnn::ScatterOp, gnn::ReduceOp>(
              [](auto o) { return gnn::stringifyReduceFn(o.getFn()).str(); })
          .Case<gnn::ReadoutOp>([](auto o) {
            return "readout_" + gnn::stringifyReduceFn(o.getFn()).str();
          })
          .Case<func::CallOp>([](func::CallOp c) {
            StringRef callee = c.getCallee();
            StringRef last = callee.rsplit('.').second;
            return (last.empty() ? callee : last).str();
          })
          .Case<gnnk::LaunchOp>([](auto) { return std::string("aggregated"); })
          .Default([](Operation *o) {
            StringRef name = o->getName().stripDialect();
            return name.str();
          });
  if (op->getNumResults() > 1)
    kind += "_" + std::to_string(cast<OpResult>(result).getResultNumber());
  return kind + "_" + std::to_string(ssa);
}

LogicalResult HostPrinter::plan() {
  // Arguments, results and size symbols.
  for (const std::string &s : f.symbolNames)
    if (!s.empty())
      namer.reserve(s);
  for (auto [i, arg] : llvm::enumerate(func.getArguments())) {
    HostFunc::Arg &a = f.args[i];
    Storage s;
    if (a.kind == HostFunc::Arg::Param) {
      s.kind = Storage::Arg;
      s.name = "params." + a.field;
      s.isConst = false;
    } else if (a.kind == HostFunc::Arg::Graph) {
      s.kind = Storage::Graph;
      s.name = a.name;
      namer.reserve(a.name);
    } else {
      s.kind = Storage::Arg;
      s.name = a.name;
      s.isConst = true;
      namer.reserve(a.name);
    }
    storage[arg] = s;
  }
  for (const HostFunc::Result &r : f.results)
    if (r.field.empty())
      namer.reserve(r.name);

  // Values: names first, then where they live.
  Block &body = func.getBody().front();
  for (Operation &op : body) {
    auto t = dyn_cast<gnn::TransposeOp>(op);
    if (!t || gnn::tensorOf(t.getInput()).isVertexOrEdge() ||
        gnn::tensorOf(t.getInput()).getShape().size() != 2 ||
        t.getResult().use_empty())
      continue;
    if (llvm::all_of(t.getResult().getUsers(),
                     [](Operation *user) { return isa<gnn::MatmulOp>(user); }))
      absorbedTransposes.insert(&op);
  }
  for (Operation &op : body) {
    auto r = dyn_cast<gnn::ReduceOp>(op);
    if (!r || r.getFn() != gnn::ReduceFn::sum ||
        gnn::tensorOf(r.getInput()).getDomain() != Domain::edge ||
        gnn::tensorOf(r.getInput()).getShape().size() != 1 ||
        (r.getAxisAttr() && r.getAxisAttr().getInt() != 0))
      continue;
    auto m = r.getInput().getDefiningOp<gnn::BinaryOp>();
    if (!m || m.getFn() != gnn::BinaryFn::mul || !m->hasOneUse())
      continue;
    auto a = m.getLhs().getDefiningOp<gnn::GatherOp>();
    auto b = m.getRhs().getDefiningOp<gnn::GatherOp>();
    if (!a || !b || a == b || !a->hasOneUse() || !b->hasOneUse() ||
        a.getGraph() != b.getGraph() ||
        a.getResult().getType() != m.getResult().getType() ||
        b.getResult().getType() != m.getResult().getType())
      continue;
    gatherDots[&op] = {a, b};
    fusedIntoDot.insert(a);
    fusedIntoDot.insert(b);
    fusedIntoDot.insert(m);
  }
  for (Operation &op : llvm::reverse(body))
    if (isa<func::ReturnOp>(op) ||
        llvm::any_of(op.getResults(), [&](Value r) { return isUsed(r); }))
      live.insert(&op);
  // Lifetimes: a read through a view reads the viewed buffer.
  unsigned index = 0;
  for (Operation &op : body)
    position[&op] = index++;
  for (Operation &op : body) {
    if (!live.count(&op))
      continue;
    SmallVector<Value, 4> operands(op.getOperands());
    if (auto dot = gatherDots.find(&op); dot != gatherDots.end()) {
      operands.push_back(dot->second.first.getInput());
      operands.push_back(dot->second.second.getInput());
    }
    for (Value operand : operands) {
      Value root = operand;
      while (Operation *def = root.getDefiningOp()) {
        if (!isView(def))
          break;
        root = def->getOperand(def->getNumOperands() - 1);
      }
      unsigned &last = lastUse[root];
      last = std::max(last, position[&op]);
    }
  }
  unsigned ssa = 0;
  DenseMap<Value, std::pair<std::string, bool>> base;
  DenseMap<Value, unsigned> number;
  for (Operation &op : body)
    for (Value r : op.getResults()) {
      bool meaningful = false;
      std::string name = valueName(&op, r, ssa, meaningful);
      base[r] = {name, meaningful};
      number[r] = ssa++;
    }
  // A view whose input has no other user shares its variable; the group
  // takes the view's name when the view has a .gnn name.
  DenseMap<Value, Value> groupOf;
  for (Operation &op : body) {
    for (Value r : op.getResults())
      groupOf[r] = r;
    if (isView(&op) && op.getOperand(op.getNumOperands() - 1).hasOneUse()) {
      Value in = op.getOperand(op.getNumOperands() - 1);
      if (groupOf.count(in)) {
        Value root = groupOf[in];
        groupOf[op.getResult(0)] = root;
        auto viewBase = base[op.getResult(0)];
        if (viewBase.second && !base[root].second &&
            !absorbedTransposes.count(&op))
          base[root] = viewBase;
      }
    }
  }
  // What each value and op contributes to (for optional results).
  unsigned numResults = f.results.size();
  for (const HostFunc::Result &r : f.results)
    hasOptionalResults = hasOptionalResults || r.optional;
  for (Operation &op : llvm::reverse(body)) {
    llvm::SmallBitVector all(numResults);
    for (Value r : op.getResults()) {
      llvm::SmallBitVector bits(numResults);
      for (OpOperand &use : r.getUses()) {
        Operation *user = use.getOwner();
        if (isa<func::ReturnOp>(user))
          bits.set(use.getOperandNumber());
        else if (auto it = opFeeds.find(user); it != opFeeds.end())
          bits |= it->second;
      }
      all |= bits;
      valueFeeds[r] = std::move(bits);
    }
    opFeeds[&op] = std::move(all);
  }
  // Output placement: the buffer a result is a view of is the output.
  copyResult.assign(f.results.size(), true);
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  DenseMap<Value, unsigned> placed;
  auto bufferRoot = [&](Value v) {
    while (Operation *def = v.getDefiningOp()) {
      if (!isView(def))
        break;
      v = def->getOperand(def->getNumOperands() - 1);
    }
    return v;
  };
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    Value root = bufferRoot(v);
    Operation *def = root.getDefiningOp();
    if (!def || isa<gnn::ConstantOp>(def) || placed.count(root))
      continue;
    // An optional output may be null: only what runs just for it (or a
    // call that accepts null there too) may write into it.
    if (f.results[i].optional) {
      llvm::SmallBitVector only(numResults);
      only.set(i);
      auto call = dyn_cast<func::CallOp>(def);
      bool passesNull = false;
      if (call) {
        auto callee = functions.find(call.getCallee().str());
        unsigned k = cast<OpResult>(root).getResultNumber();
        passesNull = callee != functions.end() &&
                     callee->second->results[k].optional &&
                     valueFeeds[root] == only;
      }
      if (!passesNull && opFeeds[def] != only)
        continue;
    }
    placed[root] = i;
    copyResult[i] = false;
  }
  for (Operation &op : body) {
    if (isa<func::ReturnOp>(op))
      continue;
    for (Value r : op.getResults()) {
      Storage s;
      if (isa<gnn::GraphType>(r.getType())) {
        s.kind = Storage::Graph;
        s.name = namer.unique(cIdentifier(cast<gnn::RelationOp>(op).getName()));
        storage[r] = s;
        continue;
      }
      Value root = groupOf[r];
      if (root != r) {
        // A copy first: inserting `r` may move the map's entries.
        Storage shared = storage.lookup(root);
        shared.declared = false;
        storage[r] = shared;
        continue;
      }
      if (isView(&op)) {
        Storage &in = storage[op.getOperand(op.getNumOperands() - 1)];
        s.kind = Storage::Alias;
        s.isConst = in.isConst;
        Value input = op.getOperand(op.getNumOperands() - 1);
        bool own = base[r].second && !absorbedTransposes.count(&op) &&
                   (!base.count(input) || base[input].first != base[r].first);
        s.name = own ? namer.unique(base[r].first, std::to_string(number[r]))
                     : in.name;
        s.declared = own;
        storage[r] = s;
        continue;
      }
      if (isa<gnn::ConstantOp>(op)) {
        s.kind = Storage::Scalar;
        s.name = namer.unique(base[r].first);
        s.isConst = true;
        storage[r] = s;
        continue;
      }
      if (auto it = placed.find(r); it != placed.end()) {
        s.kind = Storage::Output;
        const HostFunc::Result &res = f.results[it->second];
        s.name = res.field.empty() ? res.name : "grads." + res.field;
        storage[r] = s;
        continue;
      }
      s.kind = Storage::Buffer;
      s.name = namer.unique(base[r].first, std::to_string(number[r]));
      s.declared = true;
      storage[r] = s;
    }
  }
  // Names of views that share a variable follow their group.
  for (Operation &op : body)
    for (Value r : op.getResults())
      if (groupOf.count(r) && groupOf[r] != r)
        storage[r].name = storage[groupOf[r]].name;
  return success();
}

void HostPrinter::kernelArgNames(
    std::map<std::string, KernelInfo> &kernels) const {
  func::FuncOp fn = func;
  fn.walk([&](gnnk::LaunchOp launch) {
    auto it = kernels.find(launch.getKernel().str());
    if (it == kernels.end() || !it->second.argNames.empty())
      return;
    for (Value v : launch.getArgs()) {
      if (isa<gnn::GraphType>(v.getType()))
        continue;
      auto s = storage.find(v);
      std::string name = s != storage.end() ? s->second.name : "in";
      if (StringRef(name).starts_with("params."))
        name = name.substr(7);
      if (StringRef(name).starts_with("grads."))
        name = "grad_" + name.substr(6);
      it->second.argNames.push_back(name);
    }
    for (Value v : launch.getResults()) {
      auto s = storage.find(v);
      std::string name = s != storage.end() ? s->second.name : "out";
      if (StringRef(name).starts_with("grads."))
        name = "grad_" + name.substr(6);
      it->second.argNames.push_back(name);
    }
  });
}

/// Declares the variable of a fresh value (a workspace buffer).
void HostPrinter::declare(Value v, CodeWriter &w) {
  Storage &s = storage[v];
  if (s.kind != Storage::Buffer || !s.declared)
    return;
  addSlot(s.name, "rt::alignUp(4 * (" + numel(v) + "))", v.getDefiningOp(), v);
  w.line("float *" + s.name + " = rt::wsFloats(workspace, layout." + s.name +
         ");");
}

std::string HostPrinter::guardFor(const llvm::SmallBitVector &results) const {
  if (!hasOptionalResults || results.none())
    return "";
  std::string condition;
  for (unsigned i : results.set_bits()) {
    if (!f.results[i].optional)
      return "";
    condition += (condition.empty() ? "" : " || ") + f.results[i].name;
  }
  return condition;
}

std::string HostPrinter::guardOf(Operation *op) const {
  // Views and constants declare variables; they cost nothing.
  auto it = opFeeds.find(op);
  if (isView(op) || isa<gnn::ConstantOp>(op) || it == opFeeds.end())
    return "";
  return guardFor(it->second);
}

std::string HostPrinter::guardOfValue(Value v) const {
  auto it = valueFeeds.find(v);
  return it == valueFeeds.end() ? "" : guardFor(it->second);
}

LogicalResult HostPrinter::printCall(func::CallOp call, CodeWriter &w,
                                     CodeWriter &decl) {
  auto it = functions.find(call.getCallee().str());
  if (it == functions.end())
    return call.emitError("the C++ printer cannot call @") << call.getCallee();
  HostFunc &callee = *it->second;
  // An optional result of the callee that nothing reads is not computed.
  auto unread = [&](unsigned r) {
    return callee.results[r].optional && call.getResult(r).use_empty();
  };
  for (auto [r, result] : llvm::enumerate(call.getResults()))
    if (!unread(r))
      declare(result, decl);
  ArrayRef<Dim> calleeSyms = shapes.calleeSymbols(call);
  // The callee's workspace follows its layout.
  StringRef calleeName = call.getCallee();
  StringRef shortName = calleeName.rsplit('.').second;
  std::string wsName = namer.unique(
      cIdentifier(shortName.empty() ? calleeName : shortName) + "_ws");
  std::string layoutArgs;
  for (int s : callee.shapes->liveSymbols())
    layoutArgs += (layoutArgs.empty() ? "" : ", ") + dim(calleeSyms[s]);
  addSlot(wsName, callee.symbol + "_Layout(" + layoutArgs + ").total", call);
  std::vector<std::string> args;
  for (auto [i, operand] : llvm::enumerate(call.getOperands()))
    if (callee.args[i].kind == HostFunc::Arg::Graph)
      args.push_back(graph(operand));
  for (int s : callee.shapes->explicitSymbols())
    args.push_back(dim(calleeSyms[s]));
  std::vector<std::string> paramPtrs;
  for (auto [i, operand] : llvm::enumerate(call.getOperands())) {
    const HostFunc::Arg &a = callee.args[i];
    if (a.kind == HostFunc::Arg::Input)
      args.push_back(ptr(operand));
    if (a.kind == HostFunc::Arg::Param)
      paramPtrs.push_back(storage[operand].isConst
                              ? "const_cast<float *>(" + ptr(operand) + ")"
                              : ptr(operand));
  }
  if (callee.params) {
    std::string list = "{";
    for (auto [i, p] : llvm::enumerate(paramPtrs))
      list += (i ? ", " : "") + p;
    args.push_back(callee.params->name + list + "}");
  }
  std::vector<std::string> gradPtrs(callee.params ? callee.params->fields.size()
                                                  : 0);
  std::string callGuard = guardOf(call);
  for (auto [r, result] : llvm::enumerate(call.getResults())) {
    const HostFunc::Result &res = callee.results[r];
    if (!res.field.empty()) {
      for (auto [k, field] : llvm::enumerate(callee.params->fields))
        if (field == res.field)
          gradPtrs[k] = ptr(result);
      continue;
    }
    std::string p = unread(r) ? "nullptr" : ptr(result);
    // An optional result the caller only needs for its own optional
    // results: asked for only when one of those is.
    std::string guard = res.optional ? guardOfValue(result) : "";
    if (!unread(r) && !guard.empty() && guard != callGuard &&
        storage[result].kind == Storage::Buffer)
      p = "(" + guard + ") ? " + p + " : nullptr";
    args.push_back(p);
  }
  if (callee.packGrads) {
    std::string list = "{";
    for (auto [i, p] : llvm::enumerate(gradPtrs))
      list += (i ? ", " : "") + p;
    args.push_back(callee.params->name + list + "}");
  }
  args.push_back("rt::wsBytes(workspace, layout." + wsName + ")");
  args.push_back("training");
  args.push_back("seed");
  usesTraining = usesSeed = true;
  std::string line = "if (rt::Status s = " + callee.symbol + "(";
  for (auto [i, a] : llvm::enumerate(args))
    line += (i ? ", " : "") + a;
  w.line(line + "); !s.ok())");
  w.indent();
  w.line("return s;");
  w.dedent();
  return success();
}

LogicalResult HostPrinter::printOp(Operation *op, CodeWriter &w,
                                   CodeWriter &decl) {
  using namespace gnn;
  auto out = [&]() { return ptr(op->getResult(0)); };
  auto in = [&](Value v) { return ptr(v); };
  auto side = [](Domain d) {
    return d == Domain::src ? std::string("rt::Side::Src")
                            : std::string("rt::Side::Dst");
  };
  auto fnName = [](StringRef s) {
    std::string out = s.str();
    out[0] =
        static_cast<char>(std::toupper(static_cast<unsigned char>(out[0])));
    return out;
  };
  /// (outer, len, inner) of axis `axis` of v's full shape.
  auto split = [&](Value v, size_t axis) {
    Shape s = shapes.shape(v);
    return dims(v, 0, axis) + ", " + dims(v, axis, axis + 1) + ", " +
           dims(v, axis + 1, s.size());
  };
  for (Value r : op->getResults())
    if (isa<DomainTensorType>(r.getType()) && !isa<ConstantOp>(op) &&
        !isView(op) && !isa<func::CallOp>(op))
      declare(r, decl);
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case<InDegreeOp>([&](InDegreeOp d) -> LogicalResult {
        w.line("rt::inDegree(" + kernelGraph(d.getGraph()) + ", " + out() +
               ");");
        return success();
      })
      .Case<OutDegreeOp>([&](OutDegreeOp d) -> LogicalResult {
        w.line("rt::outDegree(" + kernelGraph(d.getGraph()) + ", " + out() +
               ");");
        return success();
      })
      .Case<GraphSizesOp>([&](GraphSizesOp d) -> LogicalResult {
        w.line("rt::graphSizes(" + graph(d.getGraph()) + ", " + out() + ");");
        return success();
      })
      .Case<NumVerticesOp, NumEdgesOp>([&](auto n) -> LogicalResult {
        const FunctionShapes::GraphSymbols *g =
            shapes.graphSymbols(n.getGraph());
        int s = !g ? -1 : isa<NumVerticesOp>(op) ? g->numDst : g->numEdges;
        if (s < 0)
          return op->emitError("the C++ printer cannot tell this count");
        w.line(out() + "[0] = static_cast<float>(" + sym(s) + ");");
        return success();
      })
      .Case<RelationOp>([&](RelationOp) -> LogicalResult { return success(); })
      .Case<AttachOp, CollectOp, ReshapeOp>(
          [&](Operation *view) -> LogicalResult {
            Storage &s = storage[view->getResult(0)];
            if (s.declared)
              w.line(std::string(s.isConst ? "const float *" : "float *") +
                     s.name + " = " +
                     in(view->getOperand(view->getNumOperands() - 1)) + ";");
            return success();
          })
      .Case<SplatOp>([&](SplatOp s) -> LogicalResult {
        w.line("rt::splat(" + in(s.getInput()) + ", " + numel(s.getInput()) +
               ", " + dims(s.getResult(), 0, 1) + ", " + out() + ");");
        return success();
      })
      .Case<GatherOp>([&](GatherOp g) -> LogicalResult {
        bool src = tensorOf(g.getInput()).getDomain() == Domain::src;
        // `*p` (a relation, a batch's union) is read through the pointer.
        std::string gr = kernelGraph(g.getGraph());
        std::string ends = src ? "edgeSrc()" : "edgeDst()";
        gr = gr[0] == '*' ? gr.substr(1) + "->" + ends : gr + "." + ends;
        w.line("rt::gather(" + gr + ".data(), " + dims(g.getResult(), 0, 1) +
               ", " + in(g.getInput()) + ", " + rowSize(g.getResult()) + ", " +
               out() + ");");
        return success();
      })
      .Case<ScatterOp>([&](ScatterOp s) -> LogicalResult {
        std::string fn = s.getFn() == ReduceFn::logsumexp
                             ? "LogSumExp"
                             : fnName(stringifyReduceFn(s.getFn()));
        w.line("rt::scatter" + fn + "(" + kernelGraph(s.getGraph()) + ", " +
               side(tensorOf(s.getResult()).getDomain()) + ", " +
               in(s.getInput()) + ", " + rowSize(s.getInput()) + ", " + out() +
               ");");
        return success();
      })
      .Case<ScatterSelectOp>([&](ScatterSelectOp s) -> LogicalResult {
        w.line("rt::scatterSelect" + fnName(stringifyReduceFn(s.getFn())) +
               "(" + kernelGraph(s.getGraph()) + ", " + side(s.getBy()) + ", " +
               in(s.getInput()) + ", " + rowSize(s.getInput()) + ", " + out() +
               ");");
        return success();
      })
      .Case<EdgeSoftmaxOp>([&](EdgeSoftmaxOp s) -> LogicalResult {
        w.line("rt::edgeSoftmax(" + kernelGraph(s.getGraph()) + ", " +
               side(s.getBy()) + ", " + in(s.getInput()) + ", " +
               rowSize(s.getInput()) + ", " + out() + ");");
        return success();
      })
      .Case<ReadoutOp, ReadoutSelectOp>([&](auto r) -> LogicalResult {
        bool select = isa<ReadoutSelectOp>(op);
        std::string name = out() + "_scratch";
        name = namer.unique(name);
        const FunctionShapes::GraphSymbols *g =
            shapes.graphSymbols(r.getGraph());
        if (!g || g->numGraphs < 0)
          return op->emitError("the C++ printer needs a batched graph");
        std::string count = sym(g->numGraphs);
        if (select)
          count = "(" + count + ") * " + rowSize(r.getInput());
        addSlot(name, "rt::alignUp(8 * (" + count + "))", op);
        w.line(std::string("rt::readout") + (select ? "Select" : "") +
               fnName(stringifyReduceFn(r.getFn())) + "(" +
               graph(r.getGraph()) + ", " + in(r.getInput()) + ", " +
               dims(r.getInput(), 0, 1) + ", " + rowSize(r.getInput()) + ", " +
               out() + ", rt::wsInt64s(workspace, layout." + name + "));");
        return success();
      })
      .Case<BroadcastGraphsOp>([&](BroadcastGraphsOp b) -> LogicalResult {
        w.line("rt::broadcastGraphs(" + graph(b.getGraph()) + ", " +
               in(b.getInput()) + ", " + dims(b.getResult(), 0, 1) + ", " +
               rowSize(b.getInput()) + ", " + out() + ");");
        return success();
      })
      .Case<ConstantOp>([&](ConstantOp c) -> LogicalResult {
        Storage &s = storage[c.getResult()];
        bool f32 = tensorOf(c.getResult()).getElementType().isF32();
        w.line("const float " + s.name + "[1] = {" +
               floatLiteral(c.getValue().convertToDouble(), f32) + "};");
        return success();
      })
      .Case<UnaryOp>([&](UnaryOp u) -> LogicalResult {
        std::string fn = stringifyUnaryFn(u.getFn()).str();
        if (u.getFn() == UnaryFn::leaky_relu)
          fn = "leakyRelu";
        std::string line = "rt::" + fn + "(" + in(u.getInput()) + ", " + out() +
                           ", " + numel(u.getResult());
        if (u.getFn() == UnaryFn::elu || u.getFn() == UnaryFn::leaky_relu)
          line +=
              ", " +
              floatLiteral(u.getAlpha() ? u.getAlpha()->convertToDouble() : 0.0,
                           true);
        w.line(line + ");");
        return success();
      })
      .Case<BinaryOp>([&](BinaryOp b) -> LogicalResult {
        auto [sa, sb] = shapes.alignedOperands(op);
        w.line("rt::" + stringifyBinaryFn(b.getFn()).str() + "(" +
               in(b.getLhs()) + ", " + shapeList(sa) + ", " + in(b.getRhs()) +
               ", " + shapeList(sb) + ", " + out() + ", " +
               shapeList(shapes.shape(b.getResult())) + ");");
        return success();
      })
      .Case<BroadcastLikeOp>([&](BroadcastLikeOp b) -> LogicalResult {
        auto [sa, sb] = shapes.alignedOperands(op);
        w.line("rt::broadcastTo(" + in(b.getInput()) + ", " + shapeList(sa) +
               ", " + out() + ", " + shapeList(shapes.shape(b.getResult())) +
               ");");
        return success();
      })
      .Case<MatmulOp>([&](MatmulOp m) -> LogicalResult {
        Shape a = shapes.shape(m.getLhs());
        Shape wgt = shapes.shape(m.getRhs());
        std::string sizes = dims(m.getLhs(), 0, a.size() - 1) + ", " +
                            dim(wgt[0]) + ", " + dim(wgt[1]);
        Operation *ta = m.getLhs().getDefiningOp();
        Operation *tw = m.getRhs().getDefiningOp();
        bool transA = ta && absorbedTransposes.count(ta);
        bool transW = tw && absorbedTransposes.count(tw);
        if (!transA && !transW) {
          w.line("rt::matmul(" + in(m.getLhs()) + ", " + in(m.getRhs()) + ", " +
                 out() + ", " + sizes + ");");
          return success();
        }
        // The transposed operands are read in place (CblasTrans).
        auto operand = [&](Operation *t, Value v, bool trans) {
          return (trans ? in(t->getOperand(0)) + ", true" : in(v) + ", false");
        };
        w.line("rt::matmulT(" + operand(ta, m.getLhs(), transA) + ", " +
               operand(tw, m.getRhs(), transW) + ", " + out() + ", " + sizes +
               ");");
        return success();
      })
      .Case<ReduceOp, ReduceSelectOp>([&](auto r) -> LogicalResult {
        if (auto dot = gatherDots.find(op); dot != gatherDots.end()) {
          // Both rows of each edge are gathered and multiplied in one pass.
          auto index = [&](GatherOp g) {
            bool src = tensorOf(g.getInput()).getDomain() == Domain::src;
            std::string gr = kernelGraph(g.getGraph());
            std::string ends = src ? "edgeSrc()" : "edgeDst()";
            return (gr[0] == '*' ? gr.substr(1) + "->" + ends
                                 : gr + "." + ends) +
                   ".data()";
          };
          GatherOp a = dot->second.first, b = dot->second.second;
          w.line("rt::gatherDot(" + index(a) + ", " + in(a.getInput()) + ", " +
                 index(b) + ", " + in(b.getInput()) + ", " +
                 dims(a.getResult(), 0, 1) + ", " + rowSize(a.getResult()) +
                 ", " + out() + ");");
          return success();
        }
        Value input = r.getInput();
        Shape s = shapes.shape(input);
        size_t offset = tensorOf(input).isVertexOrEdge() ? 1 : 0;
        std::string parts;
        if (auto axis = r.getAxisAttr())
          parts = split(input, axis.getInt() + offset);
        else
          parts = dims(input, 0, offset) + ", " +
                  dims(input, offset, s.size()) + ", 1";
        std::string fn = fnName(stringifyReduceFn(r.getFn()));
        w.line(std::string("rt::reduce") +
               (isa<ReduceSelectOp>(op) ? "Select" : "") + fn + "(" +
               in(input) + ", " + out() + ", " + parts + ");");
        return success();
      })
      .Case<SoftmaxOp>([&](SoftmaxOp s) -> LogicalResult {
        size_t offset = tensorOf(s.getInput()).isVertexOrEdge() ? 1 : 0;
        w.line(std::string("rt::") + (s.getLog() ? "logSoftmax" : "softmax") +
               "(" + in(s.getInput()) + ", " + out() + ", " +
               split(s.getInput(), s.getAxisAttr().getInt() + offset) + ");");
        return success();
      })
      .Case<ConcatOp>([&](ConcatOp c) -> LogicalResult {
        size_t offset = tensorOf(c.getResult()).isVertexOrEdge() ? 1 : 0;
        size_t axis = c.getAxisAttr().getInt() + offset;
        Shape so = shapes.shape(c.getResult());
        std::string outer = dims(c.getResult(), 0, axis);
        std::string outChunk = dims(c.getResult(), axis, so.size());
        std::string at = "";
        for (Value input : c.getInputs()) {
          Shape si = shapes.shape(input);
          std::string chunk = dims(input, axis, si.size());
          w.line("rt::copyRows(" + in(input) + ", " + chunk + ", " + out() +
                 (at.empty() ? "" : " + " + at) + ", " + outChunk + ", " +
                 outer + ", " + chunk + ");");
          at += (at.empty() ? "" : " + ") + chunk;
        }
        return success();
      })
      .Case<SliceOp>([&](SliceOp s) -> LogicalResult {
        size_t offset = tensorOf(s.getInput()).isVertexOrEdge() ? 1 : 0;
        size_t axis = s.getAxisAttr().getInt() + offset;
        Shape si = shapes.shape(s.getInput());
        std::string inner = dims(s.getInput(), axis + 1, si.size());
        std::string outer = dims(s.getInput(), 0, axis);
        int64_t start = s.getStartAttr().getInt(),
                size = s.getSizeAttr().getInt();
        std::string from = in(s.getInput());
        if (start)
          from += " + " + std::to_string(start) + " * " + inner;
        w.line("rt::copyRows(" + from + ", " +
               dims(s.getInput(), axis, si.size()) + ", " + out() + ", " +
               std::to_string(size) + " * " + inner + ", " + outer + ", " +
               std::to_string(size) + " * " + inner + ");");
        return success();
      })
      .Case<TransposeOp>([&](TransposeOp t) -> LogicalResult {
        size_t offset = tensorOf(t.getInput()).isVertexOrEdge() ? 1 : 0;
        Shape s = shapes.shape(t.getInput());
        w.line("rt::transpose(" + in(t.getInput()) + ", " + out() + ", " +
               dims(t.getInput(), 0, offset) + ", " + dim(s[offset]) + ", " +
               dim(s[offset + 1]) + ");");
        return success();
      })
      .Case<DropoutOp>([&](DropoutOp d) -> LogicalResult {
        usesTraining = usesSeed = true;
        w.line("rt::dropout(" + in(d.getInput()) + ", " + out() + ", " +
               numel(d.getResult()) + ", " +
               floatLiteral(d.getP().convertToDouble(), false) +
               ", rt::mixSeed(" + std::to_string(d.getSeedAttr().getInt()) +
               ", seed), training);");
        return success();
      })
      .Case<func::CallOp>([&](func::CallOp c) -> LogicalResult {
        return printCall(c, w, decl);
      })
      .Case<gnnk::LaunchOp>([&](gnnk::LaunchOp l) -> LogicalResult {
        auto it = kernels.find(l.getKernel().str());
        if (it == kernels.end())
          return l.emitError("the C++ printer cannot find kernel @")
                 << l.getKernel();
        std::string line = it->second.symbol + "(";
        bool first = true;
        for (Value v : l.getArgs()) {
          line += (first ? "" : ", ") +
                  (isa<gnn::GraphType>(v.getType()) ? kernelGraph(v) : in(v));
          first = false;
        }
        for (Value r : l.getResults())
          line += ", " + ptr(r);
        if (it->second.usesDropout) {
          line += ", training, seed";
          usesTraining = usesSeed = true;
        }
        w.line(line + ");");
        return success();
      })
      .Default([&](Operation *other) -> LogicalResult {
        return other->emitError("the C++ printer does not support '")
               << other->getName() << "' in host code";
      });
}

LogicalResult HostPrinter::print(CodeWriter &w) {
  SourceLoc home = primaryLoc(func.getLoc());
  // The body first (it decides what the prologue declares).
  CodeWriter body;
  Block &block = func.getBody().front();
  SourceLine lastComment;
  // Ops that only optional results need run inside `if (grad_x) { ... }`;
  // consecutive ones under the same condition share a block, and the
  // buffers they write are declared before it.
  std::string openGuard;
  auto closeGuard = [&]() {
    if (openGuard.empty())
      return;
    body.dedent();
    body.line("}");
    openGuard.clear();
  };
  for (Operation &op : block) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      closeGuard();
      body.setSource(primaryLoc(ret.getLoc()).toLine());
      for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
        if (!copyResult[i])
          continue;
        const HostFunc::Result &r = f.results[i];
        std::string copy = "rt::copy(" + ptr(v) + ", " +
                           (r.field.empty() ? r.name : "grads." + r.field) +
                           ", " + numel(v) + ");";
        if (r.optional) {
          body.line("if (" + r.name + ")");
          body.indent();
          body.line(copy);
          body.dedent();
        } else {
          body.line(copy);
        }
      }
      body.line("return rt::Status::success();");
      continue;
    }
    if (!live.count(&op) || isa<gnn::RelationOp>(op) || fusedIntoDot.count(&op))
      continue;
    // Views that share their input's variable print nothing.
    if (isView(&op) && !storage[op.getResult(0)].declared)
      continue;
    SmallVector<SourceLoc, 4> locs = allLocs(op.getLoc());
    SourceLine line = locs.empty() ? SourceLine() : locs.front().toLine();
    std::string guard = guardOf(&op);
    CodeWriter decl, code;
    decl.setSource(line);
    code.setSource(line);
    if (failed(printOp(&op, code, decl)))
      return failure();
    bool comment = line && line != lastComment;
    if (guard != openGuard || (!guard.empty() && (comment || !decl.empty())))
      closeGuard();
    if (comment) {
      body.setSource(line);
      body.blank();
      writeLocationComment(body, sources, locs);
      lastComment = line;
    }
    body.setSource(line);
    body.append(decl);
    if (!guard.empty() && openGuard.empty()) {
      body.line("if (" + guard + ") {");
      body.indent();
      openGuard = guard;
    }
    body.append(code);
  }

  // The Layout struct: byte offsets of the workspace buffers (boilerplate,
  // of no .gnn line).
  w.setSource(SourceLine());
  w.line("namespace {");
  w.line("/// Byte offsets of the intermediates of @" + func.getName().str() +
         " in its workspace.");
  w.line("struct " + f.symbol + "_Layout {");
  w.indent();
  for (const Slot &slot : layout)
    w.line("std::size_t " + slot.name + " = 0;");
  w.line("std::size_t total = 0;");
  w.blank();
  std::string ctor = "explicit " + f.symbol + "_Layout(";
  bool firstParam = true;
  for (int s : shapes.liveSymbols()) {
    ctor += (firstParam ? "" : ", ") +
            std::string("[[maybe_unused]] int64_t ") + f.symbolName(s);
    firstParam = false;
  }
  w.line(ctor + ") {");
  w.indent();
  if (!layout.empty()) {
    w.line("// Buffers live between two ops of the body (by position) share "
           "bytes");
    w.line("// with those that are not live at the same time.");
    w.line("rt::WorkspacePlan<" + std::to_string(layout.size()) + "> plan;");
  }
  for (const Slot &slot : layout)
    w.line(slot.name + " = plan.place(" + slot.bytes + ", " +
           std::to_string(slot.first) + ", " + std::to_string(slot.last) +
           ");");
  w.line(layout.empty() ? "total = 0;" : "total = plan.total();");
  w.dedent();
  w.line("}");
  w.dedent();
  w.line("};");
  w.line("} // namespace");
  w.blank();

  // The prologue: checks of the graphs, relations, sizes, size checks.
  CodeWriter pro;
  pro.setSource(home.toLine());
  std::string fname = cString(func.getName());
  for (auto [i, a] : llvm::enumerate(f.args)) {
    if (a.kind != HostFunc::Arg::Graph)
      continue;
    if (a.graphKind == gnn::GraphKind::graph) {
      usedGraphs.insert(i);
      pro.line("if (" + a.name + ".numSrc() != " + a.name + ".numDst())");
      pro.indent();
      pro.line("return rt::Status::error(" +
               cString(func.getName().str() + ": graph '" + a.name +
                       "' must have as many sources as destinations") +
               ");");
      pro.dedent();
    } else if (a.graphKind == gnn::GraphKind::batched) {
      usedGraphs.insert(i);
      pro.line("if (rt::Status s = rt::checkBatch(" + a.name + "); !s.ok())");
      pro.indent();
      pro.line("return s.withPrefix(" + fname + ");");
      pro.dedent();
    }
  }
  for (Operation &op : block)
    if (auto rel = dyn_cast<gnn::RelationOp>(op)) {
      if (!live.count(&op))
        continue;
      std::string g = graph(rel.getGraph());
      std::string name = storage[rel.getResult()].name;
      pro.line("const rt::Graph *" + name + " = rt::findRelation(" + g + ", " +
               cString(rel.getName()) + ");");
      pro.line("if (!" + name + ")");
      pro.indent();
      pro.line("return rt::Status::error(" +
               cString(func.getName().str() + ": graph '" + g +
                       "' has no relation '" + rel.getName().str() +
                       "' on its vertices") +
               ");");
      pro.dedent();
    }
  std::vector<std::pair<std::string, std::string>> checks;
  for (auto &[a, b, op] : shapes.checks()) {
    std::string x = dim(a), y = dim(b);
    SourceLoc loc = primaryLoc(op->getLoc());
    checks.emplace_back(
        "if (" + x + " != " + y + ")",
        "return rt::Status::error(" +
            cString(func.getName().str() + ": sizes " + x + " and " + y +
                    " differ" +
                    (loc ? " (" + baseName(loc.file).str() + ":" +
                               std::to_string(loc.line) + ")"
                         : std::string())) +
            ");");
  }
  // The layout needs every size; otherwise declare those the code uses.
  bool needLayout = usesWorkspace;
  for (int s : shapes.liveSymbols()) {
    const SizeSymbol &symbol = shapes.symbol(s);
    if (symbol.kind == SizeSymbol::Kind::Explicit)
      continue;
    if (!needLayout && !usedSymbols.count(s))
      continue;
    usedGraphs.insert(symbol.graphArg);
    std::string source =
        symbolSource(symbol, f, [&](unsigned i) { return f.args[i].name; });
    // A relation this function looked up already.
    if (symbol.kind == SizeSymbol::Kind::RelationEdges)
      for (Operation &op : block)
        if (auto rel = dyn_cast<gnn::RelationOp>(op))
          if (live.count(&op) && rel.getName() == symbol.relation)
            source = storage[rel.getResult()].name + "->numEdges()";
    pro.line("const int64_t " + f.symbolName(s) + " = " + source + ";");
  }
  for (auto &[condition, action] : checks) {
    pro.line(condition);
    pro.indent();
    pro.line(action);
    pro.dedent();
  }
  if (needLayout) {
    std::string args;
    for (int s : shapes.liveSymbols())
      args += (args.empty() ? "" : ", ") + f.symbolName(s);
    pro.line("const " + f.symbol + "_Layout layout(" + args + ");");
  }

  // The entry point.
  w.setSource(home.toLine());
  writeLocationComment(w, sources, {home});
  std::string signature = "rt::Status " + f.symbol + "(";
  std::vector<std::string> params;
  for (auto [i, a] : llvm::enumerate(f.args))
    if (a.kind == HostFunc::Arg::Graph)
      params.push_back(graphType(a.graphKind) +
                       (usedGraphs.count(i) ? a.name : "/*" + a.name + "*/"));
  for (int s : shapes.explicitSymbols())
    params.push_back("int64_t " + f.symbolName(s));
  bool usesParams = false;
  for (auto [i, a] : llvm::enumerate(f.args)) {
    bool used = isUsed(func.getArgument(i));
    if (a.kind == HostFunc::Arg::Input)
      params.push_back(std::string(used ? "" : "[[maybe_unused]] ") +
                       "const float *" + a.name);
    if (a.kind == HostFunc::Arg::Param)
      usesParams = usesParams || used;
  }
  if (f.params)
    params.push_back(std::string(usesParams ? "" : "[[maybe_unused]] ") +
                     "const " + f.params->name + " &params");
  for (const HostFunc::Result &r : f.results)
    if (r.field.empty())
      params.push_back("float *" + r.name);
  if (f.packGrads)
    params.push_back("const " + f.params->name + " &grads");
  params.push_back(std::string(usesWorkspace ? "" : "[[maybe_unused]] ") +
                   "void *workspace");
  params.push_back(std::string(usesTraining ? "" : "[[maybe_unused]] ") +
                   "bool training");
  params.push_back(std::string(usesSeed ? "" : "[[maybe_unused]] ") +
                   "uint64_t seed");
  for (auto [i, p] : llvm::enumerate(params))
    signature += (i ? ", " : "") + p;
  w.line(signature + ") {");
  w.indent();
  w.append(pro);
  w.append(body);
  w.dedent();
  w.setSource(home.toLine());
  w.line("}");
  w.blank();

  // Its workspace size.
  std::string wsSig = "std::size_t " + f.symbol + "_workspace_bytes(";
  std::vector<std::string> wsParams;
  std::set<unsigned> graphsForSizes;
  for (int s : shapes.liveSymbols())
    if (shapes.symbol(s).kind != SizeSymbol::Kind::Explicit)
      graphsForSizes.insert(shapes.symbol(s).graphArg);
  for (auto [i, a] : llvm::enumerate(f.args))
    if (a.kind == HostFunc::Arg::Graph)
      wsParams.push_back(graphType(a.graphKind) + (graphsForSizes.count(i)
                                                       ? a.name
                                                       : "/*" + a.name + "*/"));
  for (int s : shapes.explicitSymbols())
    wsParams.push_back("int64_t " + f.symbolName(s));
  for (auto [i, p] : llvm::enumerate(wsParams))
    wsSig += (i ? ", " : "") + p;
  w.line(wsSig + ") {");
  w.indent();
  std::string args;
  for (int s : shapes.liveSymbols()) {
    const SizeSymbol &symbol = shapes.symbol(s);
    args += (args.empty() ? "" : ", ") +
            (symbol.kind == SizeSymbol::Kind::Explicit
                 ? f.symbolName(s)
                 : symbolSource(symbol, f,
                                [&](unsigned i) { return f.args[i].name; }));
  }
  w.line("return " + f.symbol + "_Layout(" + args + ").total;");
  w.dedent();
  w.line("}");
  w.blank();
  return success();
}

//===----------------------------------------------------------------------===//
// The module
//===----------------------------------------------------------------------===//

class ModulePrinter {
public:
  ModulePrinter(ModuleOp module, const TargetOptions &options)
      : module(module), options(options), sources(options.sourceMgr) {}

  LogicalResult print(std::vector<GeneratedFile> &files);

private:
  LogicalResult collect();
  LogicalResult planFunction(HostFunc &f);
  void printHeader(CodeWriter &w);
  void printParamStruct(CodeWriter &w, const ParamStruct &p);
  void printDeclaration(CodeWriter &w, const HostFunc &f);
  void printReflection(CodeWriter &w);
  std::string tensorInfo(const std::string &name, const std::string &role,
                         const std::string &init, const Shape &shape,
                         const HostFunc &f);

  ModuleOp module;
  const TargetOptions &options;
  SourceFiles sources;
  std::vector<std::unique_ptr<HostFunc>> hosts; // callee-first
  std::map<std::string, HostFunc *> byName;
  std::map<std::string, KernelInfo> kernels;
  std::vector<std::string> kernelOrder;
  llvm::StringMap<FunctionShapes> analyses;
  std::vector<std::unique_ptr<ParamStruct>> structs;
  std::vector<std::unique_ptr<HostPrinter>> printers;
};

LogicalResult ModulePrinter::collect() {
  Namer moduleNames;
  moduleNames.reserve("gnnc_module");
  std::vector<func::FuncOp> hostFuncs;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal())
      return func.emitError("the C++ printer needs function bodies");
    if (gnnk::getNumKernelOutputs(func) >= 0) {
      KernelInfo k;
      k.func = func;
      k.symbol = moduleNames.unique(cIdentifier(func.getName()));
      k.numOutputs = static_cast<int>(gnnk::getNumKernelOutputs(func));
      func.walk([&](gnnk::DropoutKeepOp) { k.usesDropout = true; });
      kernelOrder.push_back(func.getName().str());
      kernels[func.getName().str()] = std::move(k);
      continue;
    }
    hostFuncs.push_back(func);
  }
  // Callee-first order.
  std::set<std::string> done, visiting;
  std::vector<func::FuncOp> order;
  std::function<LogicalResult(func::FuncOp)> visit =
      [&](func::FuncOp func) -> LogicalResult {
    std::string name = func.getName().str();
    if (done.count(name))
      return success();
    if (!visiting.insert(name).second)
      return func.emitError("the C++ printer cannot print recursive calls");
    WalkResult r = func.walk([&](func::CallOp call) {
      auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee());
      if (!callee || gnnk::getNumKernelOutputs(callee) >= 0 ||
          failed(visit(callee)))
        return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (r.wasInterrupted())
      return failure();
    done.insert(name);
    order.push_back(func);
    return success();
  };
  for (func::FuncOp func : hostFuncs)
    if (failed(visit(func)))
      return failure();

  for (func::FuncOp func : order) {
    FailureOr<FunctionShapes> shapes = FunctionShapes::analyse(func, analyses);
    if (failed(shapes))
      return failure();
    analyses.try_emplace(func.getName(), std::move(*shapes));
    auto f = std::make_unique<HostFunc>();
    f->func = func;
    f->symbol = moduleNames.unique(cIdentifier(func.getName()));
    f->shapes = &analyses.find(func.getName())->second;
    if (auto kind = func->getAttrOfType<StringAttr>(gnn::kKindAttrName))
      f->kind = kind.getValue().str();
    if (func->hasAttr(gnn::kBackwardOfAttrName))
      f->kind = "backward";
    if (func->hasAttr(gnn::kTrainOfAttrName))
      f->kind = "train";
    byName[func.getName().str()] = f.get();
    hosts.push_back(std::move(f));
  }
  // Parameter structs: one per distinct parameter list, named after the
  // shortest function that has it.
  std::map<std::string, std::vector<HostFunc *>> byParams;
  std::map<HostFunc *, std::string> keyOf;
  for (auto &f : hosts) {
    std::string key;
    for (unsigned i = 0; i < f->func.getNumArguments(); ++i)
      if (auto p =
              f->func.getArgAttrOfType<StringAttr>(i, gnn::kParamAttrName)) {
        auto init = f->func.getArgAttrOfType<StringAttr>(i, gnn::kInitAttrName);
        llvm::raw_string_ostream os(key);
        os << p.getValue() << ":" << f->func.getArgument(i).getType() << ":"
           << (init ? init.getValue() : "") << ";";
      }
    if (key.empty())
      continue;
    keyOf[f.get()] = key;
    byParams[key].push_back(f.get());
  }
  std::map<std::string, ParamStruct *> structOf;
  for (auto &f : hosts) {
    auto it = keyOf.find(f.get());
    if (it == keyOf.end() || structOf.count(it->second))
      continue;
    HostFunc *owner = f.get();
    for (HostFunc *other : byParams[it->second])
      if (other->symbol.size() < owner->symbol.size())
        owner = other;
    auto p = std::make_unique<ParamStruct>();
    p->name = moduleNames.unique(owner->symbol + "_Params");
    Namer fields;
    func::FuncOp func = owner->func;
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      auto path = func.getArgAttrOfType<StringAttr>(i, gnn::kParamAttrName);
      if (!path)
        continue;
      auto init = func.getArgAttrOfType<StringAttr>(i, gnn::kInitAttrName);
      auto type = cast<DomainTensorType>(func.getArgument(i).getType());
      if (!type.getElementType().isF32())
        return func.emitError("the C++ printer supports f32 parameters only");
      if (llvm::any_of(type.getShape(), ShapedType::isDynamic))
        return func.emitError("parameter '")
               << path.getValue() << "' has a run-time size";
      p->paths.push_back(path.getValue().str());
      p->fields.push_back(fields.unique(cIdentifier(path.getValue())));
      p->inits.push_back(init ? init.getValue().str() : "");
      p->shapes.emplace_back(type.getShape().begin(), type.getShape().end());
    }
    structOf[it->second] = p.get();
    structs.push_back(std::move(p));
  }
  for (auto &f : hosts)
    if (auto it = keyOf.find(f.get()); it != keyOf.end())
      f->params = structOf[it->second];
  for (auto &f : hosts)
    if (failed(planFunction(*f)))
      return failure();
  return success();
}

LogicalResult ModulePrinter::planFunction(HostFunc &f) {
  func::FuncOp func = f.func;
  Namer names;
  // Arguments.
  unsigned paramIndex = 0;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    HostFunc::Arg a;
    Type type = func.getArgument(i).getType();
    auto name = func.getArgAttrOfType<StringAttr>(i, gnn::kNameAttrName);
    if (auto g = dyn_cast<gnn::GraphType>(type)) {
      a.kind = HostFunc::Arg::Graph;
      a.graphKind = g.getKind();
      a.name = names.unique(name ? name.getValue() : "g");
    } else if (func.getArgAttrOfType<StringAttr>(i, gnn::kParamAttrName)) {
      a.kind = HostFunc::Arg::Param;
      a.field = f.params->fields[paramIndex++];
    } else {
      auto t = cast<DomainTensorType>(type);
      if (!t.getElementType().isF32())
        return func.emitError("the C++ printer supports f32 tensors only");
      a.kind = HostFunc::Arg::Input;
      auto saved = func.getArgAttrOfType<StringAttr>(i, gnn::kSavedAttrName);
      std::string base = name    ? name.getValue().str()
                         : saved ? "saved_" + saved.getValue().str()
                                 : "arg" + std::to_string(i);
      a.name = names.unique(cIdentifier(base));
    }
    f.args.push_back(a);
  }
  // Size symbols (the live ones are all a printer uses).
  int maxSymbol = -1;
  for (int s : f.shapes->liveSymbols())
    maxSymbol = std::max(maxSymbol, s);
  f.symbolNames.assign(maxSymbol + 1, "");
  for (int s : f.shapes->liveSymbols())
    f.symbolNames[s] = names.unique(f.shapes->symbol(s).name);
  // Results.
  unsigned numResults = func.getNumResults();
  std::map<std::string, int> gradOfParam;
  if (f.params)
    for (auto [k, path] : llvm::enumerate(f.params->paths))
      gradOfParam[path] = -1;
  bool pack = f.params != nullptr;
  unsigned numOutputs = 0;
  for (unsigned r = 0; r < numResults; ++r)
    numOutputs += !func.getResultAttr(r, gnn::kGradOfAttrName) &&
                  !func.getResultAttr(r, gnn::kSavedAttrName);
  for (unsigned r = 0; r < numResults; ++r) {
    auto type = dyn_cast<DomainTensorType>(func.getResultTypes()[r]);
    if (!type || !type.getElementType().isF32())
      return func.emitError("the C++ printer supports f32 results only");
    HostFunc::Result res;
    auto gradOf = func.getResultAttrOfType<StringAttr>(r, gnn::kGradOfAttrName);
    auto saved = func.getResultAttrOfType<StringAttr>(r, gnn::kSavedAttrName);
    auto name = func.getResultAttrOfType<StringAttr>(r, gnn::kNameAttrName);
    if (gradOf) {
      res.role = "grad";
      res.of = gradOf.getValue().str();
      res.name = "grad_" + cIdentifier(gradOf.getValue());
      auto it = gradOfParam.find(res.of);
      if (it != gradOfParam.end()) {
        if (it->second >= 0)
          pack = false;
        it->second = r;
      }
    } else if (saved) {
      res.role = "saved";
      res.of = saved.getValue().str();
      res.name = "saved_" + cIdentifier(saved.getValue());
    } else {
      res.role = "output";
      res.name = name ? cIdentifier(name.getValue())
                      : (numOutputs == 1 ? "out" : "out" + std::to_string(r));
    }
    res.name = names.unique(res.name);
    f.results.push_back(res);
  }
  for (auto &[path, r] : gradOfParam)
    if (r < 0)
      pack = false;
  if (pack && !gradOfParam.empty()) {
    f.packGrads = true;
    for (auto [k, path] : llvm::enumerate(f.params->paths))
      f.results[gradOfParam[path]].field = f.params->fields[k];
  }
  if (f.kind == "backward")
    for (HostFunc::Result &res : f.results) {
      if (res.role != "grad" || !res.field.empty())
        continue;
      for (unsigned i = 0; i < func.getNumArguments(); ++i) {
        auto name = func.getArgAttrOfType<StringAttr>(i, gnn::kNameAttrName);
        if (f.args[i].kind == HostFunc::Arg::Input && name &&
            name.getValue() == res.of)
          res.optional = true;
      }
    }
  return success();
}

void ModulePrinter::printParamStruct(CodeWriter &w, const ParamStruct &p) {
  w.line("/// The parameters of " + p.name.substr(0, p.name.size() - 7) +
         ", one pointer to the float32 row-major data of each, in the "
         "order of the function's arguments.");
  w.line("struct " + p.name + " {");
  w.indent();
  for (size_t i = 0; i < p.fields.size(); ++i) {
    std::string dims;
    for (auto [k, d] : llvm::enumerate(p.shapes[i]))
      dims += (k ? ", " : "") + std::to_string(d);
    w.line("float *" + p.fields[i] + "; ///< " + p.paths[i] + ": f32[" + dims +
           "], init " + (p.inits[i].empty() ? "none" : p.inits[i]));
  }
  w.blank();
  size_t n = p.fields.size();
  w.line("static constexpr int kNumParams = " + std::to_string(n) + ";");
  std::string paths, inits, ranks, shapesText, sizes;
  for (size_t i = 0; i < n; ++i) {
    paths += (i ? ", " : "") + cString(p.paths[i]);
    inits += (i ? ", " : "") + cString(p.inits[i]);
    ranks += (i ? ", " : "") + std::to_string(p.shapes[i].size());
    std::string dims;
    int64_t count = 1;
    for (auto [k, d] : llvm::enumerate(p.shapes[i])) {
      dims += (k ? ", " : "") + std::to_string(d);
      count *= d;
    }
    shapesText += std::string(i ? ", " : "") + "{" + dims + "}";
    sizes += (i ? ", " : "") + std::to_string(count);
  }
  w.line("/// Paths (\"conv1.W\"), initialisers, ranks, shapes and element "
         "counts.");
  w.line("static constexpr const char *kPaths[kNumParams] = {" + paths + "};");
  w.line("static constexpr const char *kInits[kNumParams] = {" + inits + "};");
  w.line("static constexpr int kRanks[kNumParams] = {" + ranks + "};");
  w.line("static constexpr int64_t kShapes[kNumParams][gnnc::rt::kMaxRank] = "
         "{" +
         shapesText + "};");
  w.line("static constexpr int64_t kNumElements[kNumParams] = {" + sizes +
         "};");
  w.blank();
  w.line("/// Parameter `i`, in the order above.");
  w.line("float *get(int i) const {");
  w.indent();
  w.line("switch (i) {");
  for (size_t i = 0; i < n; ++i)
    w.line("case " + std::to_string(i) + ": return " + p.fields[i] + ";");
  w.line("default: return nullptr;");
  w.line("}");
  w.dedent();
  w.line("}");
  w.line("void set(int i, float *data) {");
  w.indent();
  w.line("switch (i) {");
  for (size_t i = 0; i < n; ++i)
    w.line("case " + std::to_string(i) + ": " + p.fields[i] +
           " = data; break;");
  w.line("default: break;");
  w.line("}");
  w.dedent();
  w.line("}");
  w.dedent();
  w.line("};");
  w.blank();
}

void ModulePrinter::printDeclaration(CodeWriter &w, const HostFunc &f) {
  func::FuncOp func = f.func;
  auto symName = [&](int s) { return f.symbolName(s); };
  SourceLoc home = primaryLoc(func.getLoc());
  w.setSource(SourceLine());
  std::string what = f.kind.empty() ? "function" : f.kind;
  std::string text = sources.line(home.file, home.line).trim().str();
  w.line(
      "/// @" + func.getName().str() + " (" + what +
      (home ? ", " + baseName(home.file).str() + ":" + std::to_string(home.line)
            : "") +
      (text.empty() ? "" : ": " + text) + ")");
  for (auto [i, a] : llvm::enumerate(f.args)) {
    if (a.kind == HostFunc::Arg::Graph) {
      w.line("///   " + a.name + ": " + graphKindName(a.graphKind));
      continue;
    }
    Shape s = f.shapes->argShape(i);
    std::string dims;
    for (auto [k, d] : llvm::enumerate(s))
      dims += (k ? ", " : "") + dimText(d, symName);
    w.line("///   " +
           (a.kind == HostFunc::Arg::Param ? "params." + a.field : a.name) +
           ": f32[" + dims + "]" +
           (a.kind == HostFunc::Arg::Param ? " (parameter)" : " (input)"));
  }
  for (auto [r, res] : llvm::enumerate(f.results)) {
    Shape s = f.shapes->resultShape(r);
    std::string dims;
    for (auto [k, d] : llvm::enumerate(s))
      dims += (k ? ", " : "") + dimText(d, symName);
    w.line("///   " + (res.field.empty() ? res.name : "grads." + res.field) +
           ": f32[" + dims + "] (" + res.role +
           (res.of.empty() ? "" : " of " + res.of) +
           (res.optional ? "; may be null: not computed" : "") + ")");
  }
  std::string sizes;
  for (int s : f.shapes->explicitSymbols())
    sizes += (sizes.empty() ? "" : ", ") + f.symbolName(s);
  if (!sizes.empty())
    w.line("/// Explicit sizes: " + sizes + ".");
  w.line("/// `workspace` holds " + f.symbol +
         "_workspace_bytes(...) bytes, 64-byte aligned.");
  std::string sig = "gnnc::rt::Status " + f.symbol + "(";
  std::vector<std::string> params;
  for (const HostFunc::Arg &a : f.args)
    if (a.kind == HostFunc::Arg::Graph)
      params.push_back(graphType(a.graphKind) + a.name);
  for (int s : f.shapes->explicitSymbols())
    params.push_back("int64_t " + f.symbolName(s));
  for (const HostFunc::Arg &a : f.args)
    if (a.kind == HostFunc::Arg::Input)
      params.push_back("const float *" + a.name);
  if (f.params)
    params.push_back("const " + f.params->name + " &params");
  for (const HostFunc::Result &r : f.results)
    if (r.field.empty())
      params.push_back("float *" + r.name);
  if (f.packGrads)
    params.push_back("const " + f.params->name + " &grads");
  params.push_back("void *workspace");
  params.push_back("bool training");
  params.push_back("uint64_t seed");
  for (auto [i, p] : llvm::enumerate(params))
    sig += (i ? ", " : "") + p;
  w.line(sig + ");");
  std::string wsSig = "std::size_t " + f.symbol + "_workspace_bytes(";
  std::vector<std::string> wsParams;
  for (const HostFunc::Arg &a : f.args)
    if (a.kind == HostFunc::Arg::Graph)
      wsParams.push_back(graphType(a.graphKind) + a.name);
  for (int s : f.shapes->explicitSymbols())
    wsParams.push_back("int64_t " + f.symbolName(s));
  for (auto [i, p] : llvm::enumerate(wsParams))
    wsSig += (i ? ", " : "") + p;
  w.line(wsSig + ");");
  w.setSource(SourceLine());
  w.blank();
}

std::string ModulePrinter::tensorInfo(const std::string &name,
                                      const std::string &role,
                                      const std::string &init,
                                      const Shape &shape, const HostFunc &f) {
  std::string dims;
  for (auto [k, d] : llvm::enumerate(shape))
    dims += (k ? ", " : "") +
            cString(dimText(d, [&](int s) { return f.symbolName(s); }));
  return "{" + cString(name) + ", " + cString(role) + ", " + cString(init) +
         ", " + std::to_string(shape.size()) + ", {" + dims + "}}";
}

void ModulePrinter::printReflection(CodeWriter &w) {
  w.setSource(SourceLine());
  w.line("//===--- Reflection: generic calls (docs/abi.md) ---===//");
  w.blank();
  w.line("namespace {");
  w.blank();
  std::vector<std::string> entries;
  for (auto &fp : hosts) {
    HostFunc &f = *fp;
    if (f.func.isPrivate())
      continue;
    std::string sym = f.symbol;
    // Graph and size arguments from CallArgs.
    auto graphArgExpr = [&](unsigned argIndex) {
      unsigned k = 0;
      for (unsigned i = 0; i < argIndex; ++i)
        k += f.args[i].kind == HostFunc::Arg::Graph;
      std::string type = graphType(f.args[argIndex].graphKind);
      type = type.substr(6, type.size() - 8); // strip "const " and " &"
      return "(*static_cast<const " + type + " *>(a.graphs[" +
             std::to_string(k) + "]))";
    };
    std::vector<std::string> graphArgs, sizeArgs;
    for (unsigned i = 0; i < f.args.size(); ++i)
      if (f.args[i].kind == HostFunc::Arg::Graph)
        graphArgs.push_back(graphArgExpr(i));
    for (size_t k = 0; k < f.shapes->explicitSymbols().size(); ++k)
      sizeArgs.push_back("a.sizes[" + std::to_string(k) + "]");
    // call
    w.line("rt::Status " + sym + "_call(const rt::CallArgs &a) {");
    w.indent();
    std::vector<std::string> args = graphArgs;
    args.insert(args.end(), sizeArgs.begin(), sizeArgs.end());
    unsigned tensor = 0;
    std::vector<std::string> paramPtrs;
    for (const HostFunc::Arg &a : f.args) {
      if (a.kind == HostFunc::Arg::Graph)
        continue;
      std::string p = "a.inputs[" + std::to_string(tensor++) + "]";
      if (a.kind == HostFunc::Arg::Input)
        args.push_back(p);
      else
        paramPtrs.push_back("const_cast<float *>(" + p + ")");
    }
    if (f.params)
      args.push_back(f.params->name + "{" + llvm::join(paramPtrs, ", ") + "}");
    std::vector<std::string> grads(f.params ? f.params->fields.size() : 0);
    for (auto [r, res] : llvm::enumerate(f.results)) {
      std::string p = "a.outputs[" + std::to_string(r) + "]";
      if (res.field.empty()) {
        args.push_back(p);
        continue;
      }
      for (auto [k, field] : llvm::enumerate(f.params->fields))
        if (field == res.field)
          grads[k] = p;
    }
    if (f.packGrads)
      args.push_back(f.params->name + "{" + llvm::join(grads, ", ") + "}");
    args.push_back("a.workspace");
    args.push_back("a.training");
    args.push_back("a.seed");
    w.line("return " + sym + "(" + llvm::join(args, ", ") + ");");
    w.dedent();
    w.line("}");
    // workspace
    std::vector<std::string> wsArgs = graphArgs;
    wsArgs.insert(wsArgs.end(), sizeArgs.begin(), sizeArgs.end());
    bool usesA = !wsArgs.empty();
    w.line("std::size_t " + sym + "_call_workspace(const rt::CallArgs &" +
           (usesA ? "a" : "/*a*/") + ") {");
    w.indent();
    w.line("return " + sym + "_workspace_bytes(" + llvm::join(wsArgs, ", ") +
           ");");
    w.dedent();
    w.line("}");
    // shapes
    std::vector<std::string> dimsOut;
    std::set<int> used;
    auto name = [&](int s) {
      used.insert(s);
      return f.symbolName(s);
    };
    for (unsigned i = 0; i < f.args.size(); ++i)
      if (f.args[i].kind != HostFunc::Arg::Graph)
        for (Dim d : f.shapes->argShape(i))
          dimsOut.push_back(dimExpr(d, name));
    for (unsigned r = 0; r < f.results.size(); ++r)
      for (Dim d : f.shapes->resultShape(r))
        dimsOut.push_back(dimExpr(d, name));
    bool readsA = false;
    std::vector<std::string> symbolLines;
    for (int s : f.shapes->liveSymbols()) {
      if (!used.count(s))
        continue;
      readsA = true;
      const SizeSymbol &symbol = f.shapes->symbol(s);
      std::string source;
      if (symbol.kind == SizeSymbol::Kind::Explicit) {
        auto ex = f.shapes->explicitSymbols();
        size_t k = std::find(ex.begin(), ex.end(), s) - ex.begin();
        source = "a.sizes[" + std::to_string(k) + "]";
      } else {
        source = symbolSource(symbol, f, graphArgExpr);
      }
      symbolLines.push_back("const int64_t " + f.symbolName(s) + " = " +
                            source + ";");
    }
    w.line("void " + sym + "_call_shapes(const rt::CallArgs &" +
           (readsA ? "a" : "/*a*/") + ", int64_t *" +
           (dimsOut.empty() ? "/*dims*/" : "dims") + ") {");
    w.indent();
    for (const std::string &l : symbolLines)
      w.line(l);
    for (auto [k, d] : llvm::enumerate(dimsOut))
      w.line("dims[" + std::to_string(k) + "] = " + d + ";");
    w.dedent();
    w.line("}");
    // tables
    std::vector<std::string> kinds, tensors, results;
    for (const HostFunc::Arg &a : f.args)
      if (a.kind == HostFunc::Arg::Graph)
        kinds.push_back(graphKindEnum(a.graphKind));
    for (auto [i, a] : llvm::enumerate(f.args)) {
      if (a.kind == HostFunc::Arg::Graph)
        continue;
      std::string nameText = a.name, init;
      std::string role = a.kind == HostFunc::Arg::Param ? "param" : "input";
      if (auto saved =
              f.func.getArgAttrOfType<StringAttr>(i, gnn::kSavedAttrName)) {
        nameText = saved.getValue().str();
        role = "saved";
      }
      if (a.kind == HostFunc::Arg::Param) {
        auto path = f.func.getArgAttrOfType<StringAttr>(i, gnn::kParamAttrName);
        auto in = f.func.getArgAttrOfType<StringAttr>(i, gnn::kInitAttrName);
        nameText = path.getValue().str();
        init = in ? in.getValue().str() : "";
      }
      tensors.push_back(
          tensorInfo(nameText, role, init, f.shapes->argShape(i), f));
    }
    for (auto [r, res] : llvm::enumerate(f.results))
      results.push_back(tensorInfo(res.of.empty() ? res.name : res.of, res.role,
                                   "", f.shapes->resultShape(r), f));
    std::string sizeNames;
    for (int s : f.shapes->explicitSymbols())
      sizeNames += (sizeNames.empty() ? "" : ", ") + cString(f.symbolName(s));
    auto table = [&](const std::string &type, const std::string &name,
                     const std::vector<std::string> &items) {
      if (items.empty())
        return std::string("nullptr");
      w.line("const " + type + " " + name + "[] = {");
      w.indent();
      for (const std::string &item : items)
        w.line(item + ",");
      w.dedent();
      w.line("};");
      return name;
    };
    std::string graphsName =
        table("rt::GraphKind", sym + "_graph_kinds", kinds);
    std::string sizesName =
        sizeNames.empty()
            ? "nullptr"
            : table("char *const", sym + "_size_names", {sizeNames});
    std::string argsName = table("rt::TensorInfo", sym + "_args", tensors);
    std::string resultsName =
        table("rt::TensorInfo", sym + "_results", results);
    w.blank();
    entries.push_back("{" + cString(f.func.getName()) + ", " + cString(sym) +
                      ", " + cString(f.kind) + ", " +
                      std::to_string(kinds.size()) + ", " + graphsName + ", " +
                      std::to_string(f.shapes->explicitSymbols().size()) +
                      ", " + sizesName + ", " + std::to_string(tensors.size()) +
                      ", " + argsName + ", " + std::to_string(results.size()) +
                      ", " + resultsName + ", " + sym + "_call, " + sym +
                      "_call_workspace, " + sym + "_call_shapes}");
  }
  w.line("const rt::EntryInfo kEntries[] = {");
  w.indent();
  for (const std::string &e : entries)
    w.line(e + ",");
  w.dedent();
  w.line("};");
  std::vector<std::string> defines;
  for (const std::string &d : options.defines)
    defines.push_back(cString(d));
  std::string definesName = "nullptr";
  if (!defines.empty()) {
    w.line("const char *const kDefines[] = {" + llvm::join(defines, ", ") +
           "};");
    definesName = "kDefines";
  }
  w.blank();
  w.line("} // namespace");
  w.blank();
  w.line("const rt::ModuleInfo gnnc_module = {GNNC_ABI_VERSION, " +
         cString(options.source) + ", " + cString(options.entry) + ", " +
         std::to_string(defines.size()) + ", " + definesName + ", " +
         (options.training ? "true" : "false") + ", " +
         std::to_string(entries.size()) + ", kEntries};");
}

void ModulePrinter::printHeader(CodeWriter &w) {
  std::string guard = "GNNC_GENERATED_" + cIdentifier(options.cppNamespace) +
                      "_" + cIdentifier(options.stem) + "_H";
  for (char &c : guard)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  w.line("// Generated by gnnc " GNNC_VERSION " from " +
         baseName(options.source).str() + "; do not edit.");
  w.line("// The ABI of this header is described in gnnc's docs/abi.md.");
  w.line("#ifndef " + guard);
  w.line("#define " + guard);
  w.blank();
  w.line("#include \"gnnc/runtime/Ops.h\"");
  w.blank();
  w.line("#include <cstddef>");
  w.line("#include <cstdint>");
  w.blank();
  w.line("/// The version of the ABI of generated code (docs/abi.md).");
  w.line("#define GNNC_ABI_VERSION 1");
  w.line("static_assert(GNNC_ABI_VERSION == gnnc::rt::kAbiVersion,");
  w.line(
      "              \"generated code and gnnc/runtime/Ops.h disagree on the "
      "ABI version\");");
  w.blank();
  w.line("namespace " + options.cppNamespace + " {");
  w.blank();
  for (auto &p : structs)
    printParamStruct(w, *p);
  for (auto &f : hosts)
    if (!f->func.isPrivate())
      printDeclaration(w, *f);
  w.line("/// What this module was compiled from, and its entry points.");
  w.line("extern const gnnc::rt::ModuleInfo gnnc_module;");
  w.blank();
  w.line("} // namespace " + options.cppNamespace);
  w.blank();
  w.line("#endif // " + guard);
}

LogicalResult ModulePrinter::print(std::vector<GeneratedFile> &files) {
  if (failed(collect()))
    return failure();
  for (auto &f : hosts) {
    auto printer = std::make_unique<HostPrinter>(*f, sources, byName, kernels);
    if (failed(printer->plan()))
      return failure();
    printer->kernelArgNames(kernels);
    printers.push_back(std::move(printer));
  }

  CodeWriter header;
  printHeader(header);

  CodeWriter source;
  source.line("// Generated by gnnc " GNNC_VERSION " from " +
              baseName(options.source).str() + "; do not edit.");
  source.line("#include \"" + options.stem + ".h\"");
  source.blank();
  source.line("#include <cmath>");
  source.line("#include <cstring>");
  source.line("#include <limits>");
  source.blank();
  source.line("namespace " + options.cppNamespace + " {");
  source.line("namespace rt = ::gnnc::rt;");
  source.blank();
  source.line("namespace {");
  source.blank();
  std::set<std::string> launched;
  module.walk([&](gnnk::LaunchOp l) { launched.insert(l.getKernel().str()); });
  for (const std::string &name : kernelOrder) {
    if (!launched.count(name))
      continue;
    KernelInfo &k = kernels[name];
    KernelPrinter printer(k, sources, source);
    if (failed(printer.print()))
      return failure();
    source.setSource(SourceLine());
    source.blank();
  }
  source.line("} // namespace");
  source.blank();
  for (auto &printer : printers) {
    if (failed(printer->print(source)))
      return failure();
    source.setSource(SourceLine());
  }
  printReflection(source);
  source.blank();
  source.line("} // namespace " + options.cppNamespace);

  files.push_back(header.render(options.stem + ".h", options.lineDirectives));
  files.push_back(source.render(options.stem + ".cpp", options.lineDirectives));
  return success();
}

class CppTarget : public KernelTarget {
public:
  StringRef getName() const override { return "cpp"; }
  LogicalResult printModule(ModuleOp module, const TargetOptions &options,
                            std::vector<GeneratedFile> &files) override {
    TargetOptions opts = options;
    if (opts.cppNamespace.empty())
      opts.cppNamespace = cIdentifier(opts.stem);
    ModulePrinter printer(module, opts);
    return printer.print(files);
  }
};

} // namespace

std::unique_ptr<KernelTarget> gnnc::target::createCppTarget() {
  return std::make_unique<CppTarget>();
}
