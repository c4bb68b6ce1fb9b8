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
//     vertices (rt::forVertices: chunks of 64 rows taken in turn, on as
//     many threads as other processes leave cores), a sequential loop over each
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
// The host side (entry points, layouts, parameter structs, reflection, the
// header) is the one the CUDA printer prints too (gnnc/Target/HostModule.h):
// this file gives its ABI, the runtime calls of host ops and the kernels.
//
//===----------------------------------------------------------------------===//

#include "gnnc/Dialect/GNN/IR/GNN.h"
#include "gnnc/Dialect/GNNK/IR/GNNK.h"
#include "gnnc/Target/CodeWriter.h"
#include "gnnc/Target/HostModule.h"
#include "gnnc/Target/HostShapes.h"
#include "gnnc/Target/PrinterSupport.h"
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
// Kernels
//===----------------------------------------------------------------------===//

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
  /// The flat index of `indices` into `memref` (see flatIndex).
  std::string index(Value memref, ValueRange indices, unsigned from = 0) {
    return flatIndex(
        memref, indices, [&](Value v) { return expr(v); }, from);
  }
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

/// The scalar maths of C++ kernels: <cmath>, but rt::simdExp for the f32
/// exponential, which vectorises (std::exp does not without -ffast-math).
const ScalarSyntax &scalarSyntax() {
  static const ScalarSyntax syntax{
      "the C++ printer", NonFiniteSpelling::NumericLimits,
      [](StringRef name, bool isF32) -> std::string {
        if (name == "exp" && isF32)
          return "rt::simdExp";
        if (name == "fabs")
          return "std::abs";
        return ("std::" + name).str();
      }};
  return syntax;
}

FailureOr<Expr> KernelPrinter::build(Operation *op) {
  if (isScalarOp(op))
    return printScalarOp(
        op, [&](Value v) { return expr(v); }, scalarSyntax());
  return llvm::TypeSwitch<Operation *, FailureOr<Expr>>(op)
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
  w.line("rt::forVertices(" + count + ", [&](int64_t v) {");
  w.indent();
  LogicalResult r = printBlock(*loop.getBodyBlock());
  w.dedent();
  w.setSource(primaryLoc(loop.getLoc()).toLine());
  w.line("});");
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
    std::string name = fresh(scratchRowName(alloca, kernel, sources));
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
  if (isInlinable(&op))
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

/// Prints a host function whose ops call the runtime library
/// (gnnc/runtime/Ops.h): cblas_sgemm for matmuls, whole-tensor loops for
/// the rest.
class HostPrinter : public HostFunctionPrinter {
public:
  using HostFunctionPrinter::HostFunctionPrinter;

private:
  LogicalResult printOp(Operation *op, CodeWriter &w,
                        CodeWriter &decl) override;
  std::string copyStatement(const std::string &from, const std::string &to,
                            const std::string &count) override {
    return "rt::copy(" + from + ", " + to + ", " + count + ");";
  }
  void printRuntimeCall(CodeWriter &w, const std::string &fn,
                        const std::string &args) override {
    w.line("rt::" + fn + "(" + args + ");");
  }
  void printCheckedRuntimeCall(CodeWriter &w, const std::string &fn,
                               const std::string &args) override {
    w.line("if (rt::Status s = rt::" + fn + "(" + args + "); !s.ok())");
    w.line("  return s;");
  }
  /// `*p` (a relation, a batch's union) is read through the pointer; the
  /// ends are std::vectors.
  std::string edgeEnds(Value graph, bool src) override {
    return member(kernelGraph(graph), src ? "edgeSrc()" : "edgeDst()") +
           ".data()";
  }
};

LogicalResult HostPrinter::printOp(Operation *op, CodeWriter &w,
                                   CodeWriter &decl) {
  using namespace gnn;
  auto out = [&]() { return ptr(op->getResult(0)); };
  auto in = [&](Value v) { return ptr(v); };
  for (Value r : op->getResults())
    if (isa<DomainTensorType>(r.getType()) && !isa<ConstantOp>(op) &&
        !isView(op) && !isa<func::CallOp>(op))
      declare(r, decl);
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case<NumVerticesOp, NumEdgesOp>([&](auto n) -> LogicalResult {
        const FunctionShapes::GraphSymbols *g =
            shapes.graphSymbols(n.getGraph());
        int s = !g ? -1 : isa<NumVerticesOp>(op) ? g->numDst : g->numEdges;
        if (s < 0)
          return op->emitError("the C++ printer cannot tell this count");
        w.line(out() + "[0] = static_cast<float>(" + sym(s) + ");");
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
               capitalized(stringifyReduceFn(r.getFn())) + "(" +
               graph(r.getGraph()) + ", " + in(r.getInput()) + ", " +
               dims(r.getInput(), 0, 1) + ", " + rowSize(r.getInput()) + ", " +
               out() + ", rt::wsInt64s(workspace, layout." + name + "));");
        return success();
      })
      .Case<ConstantOp>([&](ConstantOp c) -> LogicalResult {
        Storage &s = storage[c.getResult()];
        bool f32 = tensorOf(c.getResult()).getElementType().isF32();
        w.line("const float " + s.name + "[1] = {" +
               floatLiteral(c.getValue().convertToDouble(), f32) + "};");
        return success();
      })
      .Case<MatmulOp>([&](MatmulOp m) -> LogicalResult {
        MatmulOperands mm = matmulOperands(m);
        if (auto f = fusions.dropoutMatmuls.find(op);
            f != fusions.dropoutMatmuls.end()) {
          // The product drops x's elements as it reads them, skipping its
          // zeros: dropout(x) @ w, or transpose(dropout(x)) @ dy.
          DropoutOp d = f->second;
          Value x = d.getInput();
          std::string sizes = dims(x, 0, 1) + ", " + dims(x, 1, 2) + ", " +
                              dims(m.getRhs(), 1, 2);
          w.line(std::string("rt::dropout") +
                 (mm.transA ? "TransposeMatmul(" : "Matmul(") + in(x) + ", " +
                 in(mm.w) + ", " + out() + ", " + sizes + ", " +
                 dropoutArgs(d) + ");");
          return success();
        }
        if (!mm.transA && !mm.transW) {
          w.line("rt::matmul(" + in(mm.a) + ", " + in(mm.w) + ", " + out() +
                 ", " + mm.sizes + ");");
          return success();
        }
        // The transposed operands are read in place (CblasTrans).
        auto flag = [](bool trans) { return trans ? ", true" : ", false"; };
        w.line("rt::matmulT(" + in(mm.a) + flag(mm.transA) + ", " + in(mm.w) +
               flag(mm.transW) + ", " + out() + ", " + mm.sizes + ");");
        return success();
      })
      .Case<ReduceOp, ReduceSelectOp>([&](auto r) -> LogicalResult {
        if (auto dot = fusions.gatherDots.find(op);
            dot != fusions.gatherDots.end()) {
          // Both rows of each edge are gathered and multiplied in one pass.
          auto index = [&](GatherOp g) {
            return edgeEnds(g.getGraph(),
                            tensorOf(g.getInput()).getDomain() == Domain::src);
          };
          GatherOp a = dot->second.first, b = dot->second.second;
          w.line("rt::gatherDot(" + index(a) + ", " + in(a.getInput()) + ", " +
                 index(b) + ", " + in(b.getInput()) + ", " +
                 dims(a.getResult(), 0, 1) + ", " + rowSize(a.getResult()) +
                 ", " + out() + ");");
          return success();
        }
        Value input = r.getInput();
        std::string parts = reduceSplit(input, r.getAxisAttr());
        if (auto m = fusions.mulReduces.find(op);
            m != fusions.mulReduces.end()) {
          // The products are summed as they are computed.
          BinaryOp mul = m->second;
          w.line("rt::mulReduceSum(" + binaryOperands(mul) + ", " +
                 shapeList(shapes.shape(mul.getResult())) + ", " + out() +
                 ", " + parts + ");");
          return success();
        }
        std::string fn = capitalized(stringifyReduceFn(r.getFn()));
        w.line(std::string("rt::reduce") +
               (isa<ReduceSelectOp>(op) ? "Select" : "") + fn + "(" +
               in(input) + ", " + out() + ", " + parts + ");");
        return success();
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
        return printRuntimeOp(other, w, decl);
      });
}

//===----------------------------------------------------------------------===//
// The module
//===----------------------------------------------------------------------===//

/// Prints `<stem>.h` and `<stem>.cpp`.
class ModulePrinter : public HostModulePrinter {
public:
  ModulePrinter(ModuleOp module, const TargetOptions &options)
      : HostModulePrinter(cppABI(), module, options) {}

private:
  /// The host ABI of the C++ printer: host graphs, the gnnc::rt runtime.
  static HostABI cppABI() {
    HostABI abi;
    abi.printerName = "C++";
    abi.runtime = "rt";
    abi.graphType = "const gnnc::rt::Graph &";
    abi.batchedGraphType = "const gnnc::rt::BatchedGraph &";
    abi.heteroGraphType = "const gnnc::rt::HeteroGraph &";
    abi.relationType = "rt::Graph";
    abi.optionalInputGrads = true;
    abi.guardPrefix = "GNNC_GENERATED_";
    abi.runtimeHeader = "gnnc/runtime/Ops.h";
    abi.sourceExtension = ".cpp";
    return abi;
  }

  std::unique_ptr<HostFunctionPrinter> createHostPrinter(HostFunc &f) override {
    return std::make_unique<HostPrinter>(abi, f, sources, byName, kernels);
  }
  LogicalResult printKernel(KernelInfo &k, CodeWriter &w) override {
    return KernelPrinter(k, sources, w).print();
  }
  void printHeaderAbout(CodeWriter &w) override {
    w.line("// The ABI of this header is described in gnnc's docs/abi.md.");
  }
  void printSourceIncludes(CodeWriter &w) override {
    w.line("#include <cmath>");
    w.line("#include <cstring>");
    w.line("#include <limits>");
  }
  std::string memoryNote(const HostFunc &f) override {
    return "/// `workspace` holds " + f.symbol +
           "_workspace_bytes(...) bytes, 64-byte aligned.";
  }
};

class CppTarget : public KernelTarget {
public:
  StringRef getName() const override { return "cpp"; }
  LogicalResult printModule(ModuleOp module, const TargetOptions &options,
                            std::vector<GeneratedFile> &files) override {
    return ModulePrinter(module, options).print(files);
  }
};

} // namespace

std::unique_ptr<KernelTarget> gnnc::target::createCppTarget() {
  return std::make_unique<CppTarget>();
}
