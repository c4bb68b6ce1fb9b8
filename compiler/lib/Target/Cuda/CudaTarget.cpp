//===- CudaTarget.cpp - The CUDA printer of the kernel IR -----------------===//
//
// Part of gnnc. Prints a module of the kernel IR as `<stem>.h` (a host
// header, plain C++) and `<stem>.cu` (docs/abi.md, "CUDA"):
//
//   - every public host function F becomes an entry point `F(graphs, sizes,
//     inputs, params, outputs, workspace, training, seed, stream)` with
//     `F_workspace_bytes(graphs, sizes)`, exactly as the C++ printer's but
//     on device memory: graphs are rt::cuda::DeviceGraph (and the batched
//     and heterogeneous kinds), every pointer is a device pointer, the
//     workspace is device memory, and everything is queued on `stream`.
//     Host ops call the device runtime (gnnc/runtime/cuda/DeviceOps.h):
//     cuBLAS for matmuls, CUB for device-wide reductions, small kernels for
//     the rest;
//   - every kernel of the IR becomes a `__global__` function and a host
//     launcher. The mapping, which gnnk-map-gpu decides and records as the
//     kernel's `gnnk.gpu` attribute (GpuMapping.h; docs/architecture.md,
//     "The CUDA printer"):
//     one group of kLanes lanes (a power of two sized to the row width,
//     Seastar's feature-adaptive groups) per destination row of the CSR
//     (`by dst`) or source row of the CSC (`by src`), rows taken in
//     descending degree order; the elements of the row's widest common
//     shape spread over the lanes (V consecutive elements per lane and
//     chunk, read with float4 / float2 loads); per-vertex scratch rows in
//     registers where every access is the lane's own element, replicated in
//     registers for scalars, in shared memory otherwise (with __syncwarp
//     between dependent statements); the edge loop uniform over the group,
//     its neighbour and edge ids loaded once per kLanes edges and
//     broadcast with __shfl_sync. Both graph layouts are on the device, so
//     no kernel needs an atomic;
//   - reflection tables (rt::cuda::ModuleInfo) let a program call any entry
//     point generically.
//
// Names come from the .gnn source, as in the C++ printer, and every block
// of code is preceded by `// file.gnn:37: <the line>`. The host side is
// printed by the code the C++ printer uses (gnnc/Target/HostModule.h), with
// this file's ABI (device graphs, rt::cuda, the stream) and host ops.
//
//===----------------------------------------------------------------------===//
//===----------------------------------------------------------------------===//

#include "gnnc/Dialect/GNN/IR/GNN.h"
#include "gnnc/Dialect/GNNK/IR/GNNK.h"
#include "gnnc/Dialect/GNNK/Transforms/GpuMapping.h"
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
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
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
using namespace gnnc::gnnk::gpu;
using gnn::Domain;
using gnn::DomainTensorType;

namespace {

//===----------------------------------------------------------------------===//
// Kernels: printing
//===----------------------------------------------------------------------===//

class KernelPrinter {
public:
  KernelPrinter(KernelInfo &info, SourceFiles &sources, CodeWriter &w)
      : info(info), kernel(info.func), sources(sources), w(&w) {}

  /// The __global__ function and its host launcher.
  LogicalResult print();

private:
  /// What the body of the nest being printed runs for.
  struct Unit {
    const NestPlan *nest = nullptr;
    bool perKey = false; // inside the loop over the V keys of a chunk
    std::string primary; // the unit that stores shared rows ("" all)
    DenseMap<Operation *, std::string> vectors; // vector load/store -> array
  };

  Expr expr(Value v);
  /// Values whose names the printed code has used.
  DenseSet<Value> referenced;
  FailureOr<Expr> build(Operation *op);
  /// The flat index of `indices` into `memref` (see flatIndex).
  std::string index(Value memref, ValueRange indices) {
    return flatIndex(memref, indices, [&](Value v) { return expr(v); });
  }
  std::string access(Operation *op, Value memref, ValueRange indices);
  std::string chunkIndex() const { return plan.chunks == 1 ? "0" : "c"; }
  std::string keyIndex() const;
  void setSource(Operation *op);
  std::string fresh(StringRef base) { return namer.unique(base); }
  std::string ivName() {
    static const char *const kNames[] = {"i", "j", "k", "l"};
    std::string name =
        loopDepth < 4 ? kNames[loopDepth] : "i" + std::to_string(loopDepth);
    ++loopDepth;
    namer.reserve(name);
    return name;
  }

  LogicalResult printBlock(Block &block);
  LogicalResult printStatement(Operation &op);
  LogicalResult printOp(Operation &op);
  LogicalResult printFor(scf::ForOp loop);
  LogicalResult printNest(scf::ForOp root);
  LogicalResult printExpanded(scf::ForOp root, const NestPlan &nest);
  LogicalResult printLoopsFrom(const NestPlan &nest, unsigned from,
                               Block *&body);
  LogicalResult printEdges(gnnk::ForEdgesOp loop);
  void printSplitMerge();
  void printOnlineMerge(const KernelPlan::SplitPart &acc,
                        const std::string &first);
  std::string splitSlot(const KernelPlan::SplitPart &part,
                        llvm::StringRef row) const;
  void forSplitValues(
      const KernelPlan::SplitPart &part, llvm::StringRef row,
      llvm::function_ref<void(const std::string &, const std::string &)> body,
      bool scoped = false);
  void printAlloca(memref::AllocaOp alloca);

  // Shared-memory hazards between statements.
  void sharedAccesses(Operation *op, DenseSet<Value> &reads,
                      DenseSet<Value> &writes);
  bool touchesShared(Operation *op);
  void syncBefore(Operation *op);
  void sync();

  KernelInfo &info;
  func::FuncOp kernel;
  SourceFiles &sources;
  /// Where lines go (a nest's body is printed before what declares it).
  CodeWriter *w;
  KernelPlan plan;
  Namer namer;
  DenseMap<Value, std::string> names;
  DenseMap<Value, std::string> arrayNames; // alloca -> variable
  DenseMap<Value, std::string> seeds;      // dropout seed value -> variable
  unsigned loopDepth = 0;
  unsigned temps = 0;
  SourceLine lastComment;
  Unit *unit = nullptr;
  DenseSet<Value> pendingReads, pendingWrites;
  bool usesMask = false, usesLane = false, usesTraining = false,
       usesKey0 = false;
};

void KernelPrinter::setSource(Operation *op) {
  SourceLoc loc = primaryLoc(op->getLoc());
  w->setSource(loc.toLine());
  if (loc && loc.toLine() != lastComment) {
    writeLocationComment(*w, sources, {loc});
    lastComment = loc.toLine();
  }
}

/// The unit index of a per-key register row in the current unit.
std::string KernelPrinter::keyIndex() const {
  if (plan.chunks == 1)
    return "s";
  return "c * " + std::to_string(plan.vec) + " + s";
}

std::string KernelPrinter::access(Operation *op, Value memref,
                                  ValueRange indices) {
  if (unit) {
    auto it = unit->vectors.find(op);
    if (it != unit->vectors.end())
      return it->second + "[s]";
  }
  Value root = rootOf(memref);
  auto it = plan.arrays.find(root);
  std::string base =
      it == plan.arrays.end() ? expr(memref).text : arrayNames.lookup(root);
  if (it == plan.arrays.end())
    return base + "[" + index(memref, indices) + "]";
  const ArrayPlan &a = it->second;
  switch (a.kind) {
  case ArrayKind::Replicated:
    if (a.numElements == 1)
      return base;
    return base + "[" + index(memref, indices) + "]";
  case ArrayKind::Lane:
    if (a.units == 1)
      return base;
    return base + "[" + (a.perChunk ? chunkIndex() : keyIndex()) + "]";
  case ArrayKind::Shared:
    return base + "[" + index(memref, indices) + "]";
  }
  return base;
}

Expr KernelPrinter::expr(Value v) {
  auto it = names.find(v);
  if (it != names.end()) {
    referenced.insert(v);
    return {it->second, kPrimary};
  }
  Operation *def = v.getDefiningOp();
  if (!def)
    return {"<?>", kPrimary};
  FailureOr<Expr> e = build(def);
  return succeeded(e) ? *e : Expr{"<?>", kPrimary};
}

/// The scalar maths of CUDA kernels: the f32 function of the CUDA maths
/// library (expf), the double one for f64; INFINITY and NAN.
const ScalarSyntax &scalarSyntax() {
  static const ScalarSyntax syntax{
      "the CUDA printer", NonFiniteSpelling::CMathMacros,
      [](StringRef name, bool isF32) -> std::string {
        return (name + (isF32 ? "f" : "")).str();
      }};
  return syntax;
}

FailureOr<Expr> KernelPrinter::build(Operation *op) {
  if (isScalarOp(op))
    return printScalarOp(
        op, [&](Value v) { return expr(v); }, scalarSyntax());
  return llvm::TypeSwitch<Operation *, FailureOr<Expr>>(op)
      .Case<memref::LoadOp>([&](memref::LoadOp o) {
        return Expr{access(o, o.getMemRef(), o.getIndices()), kPrimary};
      })
      .Case<gnnk::DegreeOp>([&](gnnk::DegreeOp o) {
        std::string v = expr(o.getVertex()).text;
        return Expr{"g.ptr[" + v + " + 1] - g.ptr[" + v + "]", kAdd};
      })
      .Case<gnnk::DropoutKeepOp>([&](gnnk::DropoutKeepOp o) {
        usesTraining = true;
        // keep when the hash's top 53 bits m satisfy m * 2^-53 >= p, that
        // is m >= ceil(p * 2^53); scale 1 / (1 - p) rounded to float.
        double p = o.getPAttr().getValueAsDouble();
        uint64_t threshold = 0;
        if (p >= 1.0)
          threshold = uint64_t(1) << 53;
        else if (p > 0.0)
          threshold = static_cast<uint64_t>(std::ceil(std::ldexp(p, 53)));
        double scale = p < 1.0 ? 1.0 / (1.0 - p) : 0.0;
        std::string text =
            "rt::cuda::dropoutKeep(training, " + seeds.lookup(o.getSeed()) +
            ", static_cast<uint64_t>(" + wrap(expr(o.getIndex()), kCond) +
            "), " + std::to_string(threshold) + "ull, " +
            floatLiteral(static_cast<float>(scale), true,
                         NonFiniteSpelling::CMathMacros) +
            ")";
        if (!o.getType().isF32())
          text = "static_cast<" + cTypeOf(o.getType()) + ">(" + text + ")";
        return Expr{text, kPrimary};
      })
      .Default([&](Operation *other) -> FailureOr<Expr> {
        return other->emitError("the CUDA printer does not support '")
               << other->getName() << "' in a kernel";
      });
}

//===--- Shared-memory hazards ---===//

void KernelPrinter::sharedAccesses(Operation *op, DenseSet<Value> &reads,
                                   DenseSet<Value> &writes) {
  auto shared = [&](Value memref) -> Value {
    Value root = rootOf(memref);
    auto it = plan.arrays.find(root);
    if (it == plan.arrays.end() || it->second.kind != ArrayKind::Shared)
      return Value();
    return root;
  };
  op->walk([&](Operation *inner) {
    if (auto load = dyn_cast<memref::LoadOp>(inner))
      if (Value s = shared(load.getMemRef()))
        reads.insert(s);
    if (auto store = dyn_cast<memref::StoreOp>(inner))
      if (Value s = shared(store.getMemRef()))
        writes.insert(s);
  });
}

bool KernelPrinter::touchesShared(Operation *op) {
  DenseSet<Value> reads, writes;
  sharedAccesses(op, reads, writes);
  return !reads.empty() || !writes.empty();
}

void KernelPrinter::sync() {
  usesMask = true;
  w->line("__syncwarp(mask);");
  pendingReads.clear();
  pendingWrites.clear();
}

/// Before a statement: a barrier when it reads a shared row another lane
/// may have written since the last one, or writes one another lane may
/// have read or written. Then the statement's accesses are pending.
void KernelPrinter::syncBefore(Operation *op) {
  DenseSet<Value> reads, writes;
  sharedAccesses(op, reads, writes);
  bool hazard = false;
  for (Value r : reads)
    hazard = hazard || pendingWrites.count(r);
  for (Value x : writes)
    hazard = hazard || pendingWrites.count(x) || pendingReads.count(x);
  if (hazard && plan.lanes > 1)
    sync();
  pendingReads.insert(reads.begin(), reads.end());
  pendingWrites.insert(writes.begin(), writes.end());
}

//===--- Statements ---===//

LogicalResult KernelPrinter::printBlock(Block &block) {
  for (Operation &op : block)
    if (failed(printStatement(op)))
      return failure();
  return success();
}

void KernelPrinter::printAlloca(memref::AllocaOp alloca) {
  const ArrayPlan &a = plan.arrays[alloca.getResult()];
  setSource(alloca);
  std::string name = fresh(scratchRowName(alloca, kernel, sources));
  arrayNames[alloca.getResult()] = name;
  std::string elem = cTypeOf(a.elementType);
  switch (a.kind) {
  case ArrayKind::Replicated:
    if (a.numElements == 1)
      w->line(elem + " " + name + " = " + (elem == "bool" ? "false" : "0") +
              ";");
    else
      w->line(elem + " " + name + "[" + std::to_string(a.numElements) + "];");
    break;
  case ArrayKind::Lane:
    if (a.units == 1)
      w->line(elem + " " + name + ";");
    else
      w->line(elem + " " + name + "[" + std::to_string(a.units) + "];");
    break;
  case ArrayKind::Shared:
    // The group's row of the block's shared array (declared at the top).
    w->line(elem + " *const " + name + " = " + name + "_rows[group];");
    break;
  }
}

LogicalResult KernelPrinter::printStatement(Operation &op) {
  if (isa<gnnk::YieldOp, scf::YieldOp, func::ReturnOp, arith::ConstantOp>(op))
    return success();
  if (auto alloca = dyn_cast<memref::AllocaOp>(op)) {
    printAlloca(alloca);
    return success();
  }
  if (auto loop = dyn_cast<scf::ForOp>(op)) {
    syncBefore(loop);
    return printNest(loop);
  }
  if (auto loop = dyn_cast<gnnk::ForEdgesOp>(op))
    return printEdges(loop);
  if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
    if (ifOp.getNumResults() != 0)
      return ifOp.emitError("the CUDA printer does not support scf.if with "
                            "results");
    setSource(ifOp);
    // The condition is the same in every lane of the group (statements
    // compute group-uniform values), so barriers inside are reached by all.
    w->line("if (" + expr(ifOp.getCondition()).text + ") {");
    w->indent();
    DenseSet<Value> beforeReads = pendingReads, beforeWrites = pendingWrites;
    if (failed(printBlock(ifOp.getThenRegion().front())))
      return failure();
    DenseSet<Value> thenReads = pendingReads, thenWrites = pendingWrites;
    w->dedent();
    if (!ifOp.getElseRegion().empty()) {
      w->line("} else {");
      w->indent();
      pendingReads = beforeReads;
      pendingWrites = beforeWrites;
      if (failed(printBlock(ifOp.getElseRegion().front())))
        return failure();
      w->dedent();
    } else {
      pendingReads = beforeReads;
      pendingWrites = beforeWrites;
    }
    pendingReads.insert(thenReads.begin(), thenReads.end());
    pendingWrites.insert(thenWrites.begin(), thenWrites.end());
    w->line("}");
    return success();
  }
  if (auto store = dyn_cast<memref::StoreOp>(op)) {
    syncBefore(store);
    setSource(store);
    Value root = rootOf(store.getMemRef());
    auto it = plan.arrays.find(root);
    bool replicated =
        it != plan.arrays.end() && it->second.kind == ArrayKind::Replicated;
    std::string line = access(store, store.getMemRef(), store.getIndices()) +
                       " = " + expr(store.getValueToStore()).text + ";";
    if (replicated || plan.lanes == 1) {
      w->line(line);
    } else {
      // Memory other lanes read: one lane writes it.
      usesLane = true;
      w->line("if (lane == 0)");
      w->indent();
      w->line(line);
      w->dedent();
    }
    return success();
  }
  if (auto load = dyn_cast<memref::LoadOp>(op))
    syncBefore(load);
  return printOp(op);
}

/// A scalar op: written into its user, or declared here.
LogicalResult KernelPrinter::printOp(Operation &op) {
  if (isa<gnnk::YieldOp, scf::YieldOp, arith::ConstantOp>(op))
    return success();
  if (auto loop = dyn_cast<scf::ForOp>(op))
    return printFor(loop);
  if (auto ifOp = dyn_cast<scf::IfOp>(op)) {
    if (ifOp.getNumResults() != 0)
      return ifOp.emitError("the CUDA printer does not support scf.if with "
                            "results");
    setSource(ifOp);
    w->line("if (" + expr(ifOp.getCondition()).text + ") {");
    w->indent();
    for (Operation &inner : ifOp.getThenRegion().front())
      if (failed(printOp(inner)))
        return failure();
    w->dedent();
    if (!ifOp.getElseRegion().empty()) {
      w->line("} else {");
      w->indent();
      for (Operation &inner : ifOp.getElseRegion().front())
        if (failed(printOp(inner)))
          return failure();
      w->dedent();
    }
    w->line("}");
    return success();
  }
  if (auto store = dyn_cast<memref::StoreOp>(op)) {
    setSource(store);
    std::string line = access(store, store.getMemRef(), store.getIndices()) +
                       " = " + expr(store.getValueToStore()).text + ";";
    // A unit that is not the first of its prefix does not write memory
    // other lanes read (it would write the same values again).
    Value root = rootOf(store.getMemRef());
    auto it = plan.arrays.find(root);
    bool shared =
        it == plan.arrays.end() || it->second.kind == ArrayKind::Shared;
    if (unit && shared && !unit->primary.empty() &&
        !unit->vectors.count(store)) {
      w->line("if (" + unit->primary + ")");
      w->indent();
      w->line(line);
      w->dedent();
    } else {
      w->line(line);
    }
    return success();
  }
  if (isa<memref::AllocaOp, gnnk::ForEdgesOp, gnnk::ForVerticesOp>(op))
    return op.emitError("the CUDA printer does not support '")
           << op.getName() << "' inside a feature loop";
  if (op.getNumResults() != 1 || op.getNumRegions() != 0)
    return op.emitError("the CUDA printer does not support '")
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
  w->line("const " + cTypeOf(op.getResult(0).getType()) + " " + name + " = " +
          e->text + ";");
  names[op.getResult(0)] = name;
  return success();
}

/// A sequential loop (inside a nest, or a whole nest that one lane or every
/// lane runs).
LogicalResult KernelPrinter::printFor(scf::ForOp loop) {
  if (loop.getNumResults() != 0)
    return loop.emitError("the CUDA printer does not support scf.for with "
                          "results");
  std::string iv = ivName();
  names[loop.getInductionVar()] = iv;
  setSource(loop);
  std::string step = expr(loop.getStep()).text;
  w->line("for (int64_t " + iv + " = " + expr(loop.getLowerBound()).text +
          "; " + iv + " < " + wrap(expr(loop.getUpperBound()), kAdd) + "; " +
          (step == "1" ? "++" + iv : iv + " += " + step) + ") {");
  w->indent();
  for (Operation &op : *loop.getBody())
    if (failed(printOp(op)))
      return failure();
  --loopDepth;
  w->dedent();
  w->line("}");
  return success();
}

/// The loops of `nest` from `from` on, as plain loops; `body` receives the
/// innermost perfect body (the caller closes the braces: one per loop).
LogicalResult KernelPrinter::printLoopsFrom(const NestPlan &nest, unsigned from,
                                            Block *&body) {
  for (unsigned d = from; d < nest.loops.size(); ++d) {
    scf::ForOp loop = nest.loops[d];
    std::string iv = ivName();
    names[loop.getInductionVar()] = iv;
    w->line("for (int " + iv + " = 0; " + iv + " < " +
            std::to_string(nest.trips[d]) + "; ++" + iv + ") {");
    w->indent();
  }
  scf::ForOp last = nest.loops.empty() ? scf::ForOp() : nest.loops.back();
  body = last ? last.getBody() : nullptr;
  return success();
}

LogicalResult KernelPrinter::printNest(scf::ForOp root) {
  const NestPlan &nest = plan.nests[root];
  setSource(root);
  unsigned savedDepth = loopDepth;
  LogicalResult result = success();
  switch (nest.mode) {
  case NestMode::Expanded:
    result = printExpanded(root, nest);
    break;
  case NestMode::Flat: {
    // Its own iteration space, spread over the lanes.
    usesLane = true;
    int64_t count =
        productOf(ArrayRef<int64_t>(nest.trips).take_front(nest.depth));
    std::string idx = fresh("it");
    SmallVector<std::string, 4> ivs;
    for (unsigned d = 0; d < nest.depth; ++d) {
      ivs.push_back(ivName());
      names[scf::ForOp(nest.loops[d]).getInductionVar()] = ivs.back();
    }
    CodeWriter *outer = w;
    CodeWriter body;
    w = &body;
    Block *block = nullptr;
    if (failed(printLoopsFrom(nest, nest.depth, block)))
      return failure();
    for (Operation &op : *block)
      if (failed(printOp(op)))
        return failure();
    for (unsigned d = nest.depth; d < nest.loops.size(); ++d) {
      w->dedent();
      w->line("}");
    }
    w = outer;
    w->line("for (int " + idx + " = lane; " + idx + " < " +
            std::to_string(count) + "; " + idx + " += kLanes) {");
    w->indent();
    std::string coords;
    for (unsigned d = 0; d < nest.depth; ++d) {
      if (!referenced.count(scf::ForOp(nest.loops[d]).getInductionVar()))
        continue;
      int64_t stride = productOf(ArrayRef<int64_t>(nest.trips)
                                     .take_front(nest.depth)
                                     .drop_front(d + 1));
      std::string value = idx;
      if (stride != 1)
        value += " / " + std::to_string(stride);
      if (d > 0)
        value = (stride != 1 ? "(" + value + ")" : value) + " % " +
                std::to_string(nest.trips[d]);
      coords += (coords.empty() ? "" : ", ") + ivs[d] + " = " + value;
    }
    if (!coords.empty())
      w->line("const int " + coords + ";");
    w->append(body);
    w->dedent();
    w->line("}");
    break;
  }
  case NestMode::LaneZero:
    if (plan.lanes > 1) {
      usesLane = true;
      w->line("if (lane == 0) {");
      w->indent();
      result = printFor(root);
      w->dedent();
      w->line("}");
    } else {
      result = printFor(root);
    }
    break;
  case NestMode::Redundant:
    result = printFor(root);
    break;
  }
  loopDepth = savedDepth;
  return result;
}

/// A nest whose leading p loops are D's leading axes: the lane runs the
/// body for its chunks (once per chunk, or once per key of the chunk).
LogicalResult KernelPrinter::printExpanded(scf::ForOp root,
                                           const NestPlan &nest) {
  int64_t V = plan.vec;
  unsigned p = nest.p;
  bool chunkLoop = plan.chunks > 1;
  bool perKey = !nest.perChunk;
  bool guard = plan.chunks * plan.lanes * V != plan.n;
  bool oneAxis = plan.keyShape.size() == 1;
  // Stores to memory other lanes read come from one unit of each prefix
  // (the others would write the same values again).
  bool needPrimary = false;
  if (p < plan.keyShape.size())
    root.walk([&](memref::StoreOp store) {
      auto it = plan.arrays.find(rootOf(store.getMemRef()));
      if (it == plan.arrays.end() || it->second.kind == ArrayKind::Shared)
        needPrimary = true;
    });
  bool vectors =
      perKey && (!nest.vectorLoads.empty() || !nest.vectorStores.empty());

  // Names: the coordinates of the unit's key (the nest's leading loops),
  // the key, the vector rows.
  SmallVector<Value, 4> coordValues;
  SmallVector<std::string, 4> coordNames;
  for (unsigned d = 0; d < p; ++d) {
    Value iv = scf::ForOp(nest.loops[d]).getInductionVar();
    coordValues.push_back(iv);
    coordNames.push_back(ivName());
    names[iv] = coordNames.back();
  }
  std::string key =
      oneAxis ? (perKey ? coordNames[0] : "k0") : (perKey ? "key" : "k0");
  Unit u;
  u.nest = &nest;
  u.perKey = perKey;
  if (needPrimary)
    u.primary = key + " % " + std::to_string(plan.strideAfter(p)) + " == 0";
  std::vector<std::pair<memref::LoadOp, std::string>> loads;
  std::vector<std::pair<memref::StoreOp, std::string>> stores;
  if (perKey) {
    for (memref::LoadOp load : nest.vectorLoads) {
      loads.emplace_back(load, fresh(expr(load.getMemRef()).text + "_v"));
      u.vectors[load] = loads.back().second;
    }
    for (memref::StoreOp store : nest.vectorStores) {
      stores.emplace_back(store, fresh(expr(store.getMemRef()).text + "_v"));
      u.vectors[store] = stores.back().second;
    }
  }

  // The body first, to know which coordinates it reads.
  CodeWriter *outer = w;
  CodeWriter body;
  w = &body;
  unit = &u;
  Block *block = nullptr;
  if (failed(printLoopsFrom(nest, p, block)))
    return failure();
  for (Operation &op : *block)
    if (failed(printOp(op)))
      return failure();
  for (unsigned d = p; d < nest.loops.size(); ++d) {
    w->dedent();
    w->line("}");
  }
  unit = nullptr;
  w = outer;
  SmallVector<bool, 4> coordUsed;
  bool anyCoord = false;
  for (Value iv : coordValues) {
    coordUsed.push_back(referenced.count(iv) > 0);
    anyCoord = anyCoord || coordUsed.back();
  }
  bool needKey = !oneAxis && perKey && (anyCoord || needPrimary);
  bool needK0 = guard || anyCoord || needPrimary || vectors;

  if (chunkLoop) {
    w->directive("#pragma unroll");
    w->line("for (int c = 0; c < " + std::to_string(plan.chunks) + "; ++c) {");
    w->indent();
  }
  // The chunk's first key: per chunk, or once per kernel (the prologue's
  // k0) when a lane has one chunk.
  if (needK0) {
    usesLane = true;
    if (chunkLoop)
      w->line("const int k0 = (c * kLanes + lane)" +
              (V > 1 ? " * " + std::to_string(V) : std::string()) + ";");
    else
      usesKey0 = true;
  }
  // A scope for the unit's coordinates, unless a loop or the guard opens
  // one.
  bool bare = !chunkLoop && !guard && !perKey && anyCoord;
  if (guard) {
    w->line("if (k0 < " + std::to_string(plan.n) + ") {");
    w->indent();
  } else if (bare) {
    w->line("{");
    w->indent();
  }
  auto vectorBase = [&](Value memref, ValueRange indices) {
    Value row;
    SmallVector<Value, 4> idx;
    normalise(memref, indices, idx, &row);
    std::string base = expr(memref).text + " + ";
    if (row)
      base += wrap(expr(row), kMul) + " * " + std::to_string(plan.n) + " + ";
    return base + "k0";
  };
  if (perKey) {
    // Vector accesses of the chunk: loaded before its keys, stored after.
    for (auto &[load, name] : loads) {
      setSource(load);
      w->line("float " + name + "[" + std::to_string(V) + "];");
      w->line("rt::cuda::load" + std::to_string(V) + "(" + name + ", " +
              vectorBase(load.getMemRef(), load.getIndices()) + ");");
    }
    for (auto &[store, name] : stores)
      w->line("float " + name + "[" + std::to_string(V) + "];");
    w->directive("#pragma unroll");
    w->line("for (int s = 0; s < " + std::to_string(V) + "; ++s) {");
    w->indent();
  }
  if (oneAxis) {
    if (coordUsed[0])
      w->line("const int " + coordNames[0] + " = " +
              (perKey ? "k0 + s" : "k0") + ";");
  } else {
    if (needKey)
      w->line("const int key = k0 + s;");
    std::string coords;
    for (unsigned d = 0; d < p; ++d) {
      if (!coordUsed[d])
        continue;
      int64_t stride = plan.strideAfter(d + 1);
      std::string value = key;
      if (stride != 1)
        value += " / " + std::to_string(stride);
      if (d > 0)
        value = (stride != 1 ? "(" + value + ")" : value) + " % " +
                std::to_string(plan.keyShape[d]);
      coords += (coords.empty() ? "" : ", ") + coordNames[d] + " = " + value;
    }
    if (!coords.empty())
      w->line("const int " + coords + ";");
  }
  w->append(body);
  if (perKey) {
    w->dedent();
    w->line("}");
    for (auto &[store, name] : stores) {
      setSource(store);
      w->line("rt::cuda::store" + std::to_string(V) + "(" +
              vectorBase(store.getMemRef(), store.getIndices()) + ", " + name +
              ");");
    }
  }
  if (guard || bare) {
    w->dedent();
    w->line("}");
  }
  if (chunkLoop) {
    w->dedent();
    w->line("}");
  }
  return success();
}

/// Whether the edge id `edge` only indexes dropout masks: through pure
/// arithmetic into the index of gnnk.dropout_keep. The inference instance of
/// the kernel then loads no edge id.
static bool onlyIndexesDropout(Value edge) {
  SmallVector<Value> work{edge};
  bool indexes = false;
  while (!work.empty()) {
    Value value = work.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (auto keep = dyn_cast<gnnk::DropoutKeepOp>(user)) {
        if (&use != &keep.getIndexMutable())
          return false;
        indexes = true;
        continue;
      }
      if (!isa<arith::ArithDialect>(user->getDialect()) || !isPure(user))
        return false;
      llvm::append_range(work, user->getResults());
    }
  }
  return indexes;
}

/// The edge loop, uniform over the group: the lanes load kLanes neighbour
/// and edge ids at once and broadcast them one edge after the other, so
/// every lane sees the edges in CSR (CSC) order.
LogicalResult KernelPrinter::printEdges(gnnk::ForEdgesOp loop) {
  // Shared rows touched before the loop and in it: the first iteration
  // must see them, and each iteration the previous one's.
  bool shared = touchesShared(loop);
  if (shared && (!pendingReads.empty() || !pendingWrites.empty()) &&
      plan.lanes > 1)
    sync();
  DenseSet<Value> beforeReads = pendingReads, beforeWrites = pendingWrites;
  setSource(loop);
  std::string v = expr(loop.getVertex()).text;
  bool needU = !loop.getNeighbour().use_empty();
  bool needE = !loop.getEdge().use_empty();
  // Edge ids that only the dropout hash reads: none in inference.
  std::string edgeIdIf =
      needE && onlyIndexesDropout(loop.getEdge()) ? "training && " : "";
  bool split = plan.splitAbove > 0;
  w->line(std::string(split ? "int64_t" : "const int64_t") + " begin = g.ptr[" +
          v + "], end = g.ptr[" + v + " + 1];");
  if (split) {
    w->line("if (split) { // this group's share of the edges of a long row");
    w->indent();
    w->line("const int64_t share = (end - begin + kGroups - 1) / kGroups;");
    w->line("begin = begin + share * group < end ? begin + share * group : "
            "end;");
    w->line("end = begin + share < end ? begin + share : end;");
    w->dedent();
    w->line("}");
  }
  // Unrolled by rt::cuda::kEdgeUnroll (Kernel.cuh): without it, a lane
  // group waits for each edge's gathered row before it asks for the next
  // one's, and a long row (a hub of a power-law graph) leaves the kernel
  // waiting on memory latency. The edges are still folded in their order.
  const char *unroll = "#pragma unroll rt::cuda::kEdgeUnroll // several "
                       "edges' gathers in flight";
  if (plan.lanes == 1) {
    w->directive(unroll);
    w->line("for (int64_t at = begin; at < end; ++at) {");
    w->indent();
    if (needE)
      w->line(edgeIdIf.empty() ? "const int64_t e = g.eid[at];"
                               : "const int64_t e = training ? g.eid[at] : 0;");
    if (needU)
      w->line("const int64_t u = g.nbr[at];");
  } else {
    usesLane = usesMask = true;
    plan.usesShuffles = true;
    w->line("for (int64_t base = begin; base < end; base += kLanes) {");
    w->indent();
    w->line("const int64_t mine = base + lane;");
    if (needE)
      w->line("const int lane_e = " + edgeIdIf +
              "mine < end ? g.eid[mine] : 0;");
    if (needU)
      w->line("const int lane_u = mine < end ? g.nbr[mine] : 0;");
    w->line("const int count = end - base < kLanes ? static_cast<int>(end - "
            "base) : kLanes;");
    w->directive(unroll);
    w->line("for (int t = 0; t < count; ++t) {");
    w->indent();
    if (needE)
      w->line("const int64_t e = __shfl_sync(mask, lane_e, t, kLanes);");
    if (needU)
      w->line("const int64_t u = __shfl_sync(mask, lane_u, t, kLanes);");
  }
  names[loop.getEdge()] = "e";
  names[loop.getNeighbour()] = "u";
  pendingReads.clear();
  pendingWrites.clear();
  if (failed(printBlock(*loop.getBodyBlock())))
    return failure();
  if (shared && plan.lanes > 1 &&
      (!pendingReads.empty() || !pendingWrites.empty()))
    sync();
  if (plan.lanes > 1) {
    w->dedent();
    w->line("}");
  }
  w->dedent();
  w->setSource(primaryLoc(loop.getLoc()).toLine());
  w->line("}");
  if (split)
    printSplitMerge();
  pendingReads = beforeReads;
  pendingWrites = beforeWrites;
  if (shared) {
    pendingReads.clear();
    pendingWrites.clear();
  }
  return success();
}

/// The slot of this lane's value of `part` in `row`'s exchange row: value
/// `s` when the part has several.
std::string KernelPrinter::splitSlot(const KernelPlan::SplitPart &part,
                                     llvm::StringRef row) const {
  std::string at = "split_state[" + row.str() + "][";
  if (part.offset)
    at += std::to_string(part.offset) + " + ";
  return at + (part.units > 1 ? "s * kLanes + lane]" : "lane]");
}

/// Prints `body(mine, theirs)` for this lane's values of `part` (a loop
/// over `s` when it has several), `theirs` being the value's slot in
/// `row`'s exchange row; in braces when `scoped` (`body` declares names).
void KernelPrinter::forSplitValues(
    const KernelPlan::SplitPart &part, llvm::StringRef row,
    llvm::function_ref<void(const std::string &, const std::string &)> body,
    bool scoped) {
  bool each = part.units > 1;
  if (each)
    w->line("for (int s = 0; s < " + std::to_string(part.units) + "; ++s) {");
  else if (scoped)
    w->line("{");
  if (each || scoped)
    w->indent();
  body(arrayNames.lookup(part.array) + (each ? "[s]" : ""),
       splitSlot(part, row));
  if (each || scoped) {
    w->dedent();
    w->line("}");
  }
}

/// After the edge loop of a kernel that splits long rows: the groups of a
/// block that shared one row leave their reduction state in the block's
/// exchange row, and group 0 merges the others' into its own in group order
/// (sums added; maxima and minima compared as the edge loop compares; an
/// online softmax's running sums and accumulators rescaled to the larger
/// running maximum), then finishes the row. A group whose share had no edge
/// still has its first-edge flag set and is skipped.
void KernelPrinter::printSplitMerge() {
  usesLane = true;
  const KernelPlan::SplitPart *first = nullptr;
  for (const KernelPlan::SplitPart &part : plan.splitState)
    if (part.kind == gnnk::FoldKind::First)
      first = &part;
  std::string firstName = first ? arrayNames.lookup(first->array) : "";

  w->line("if (split) { // merge the groups' states in group order");
  w->indent();
  for (const KernelPlan::SplitPart &part : plan.splitState)
    forSplitValues(part, "group",
                   [&](const std::string &mine, const std::string &slot) {
                     w->line(slot + " = " + mine +
                             (&part == first ? " ? 1.0f : 0.0f;" : ";"));
                   });
  w->line("__syncthreads();");
  w->line("if (group != 0)");
  w->indent();
  w->line("return;");
  w->dedent();
  w->line("for (int other = 1; other < kGroups; ++other) {");
  w->indent();
  for (const KernelPlan::SplitPart &part : plan.splitState)
    if (part.kind == gnnk::FoldKind::Sum)
      forSplitValues(part, "other",
                     [&](const std::string &mine, const std::string &theirs) {
                       w->line(mine + " = " + mine + " + " + theirs + ";");
                     });
  if (first) {
    w->line("if (" + splitSlot(*first, "other") +
            " == 0.0f) { // its share had edges");
    w->indent();
    for (const KernelPlan::SplitPart &part : plan.splitState) {
      bool max = part.kind == gnnk::FoldKind::Max;
      if (max || part.kind == gnnk::FoldKind::Min)
        forSplitValues(
            part, "other",
            [&](const std::string &mine, const std::string &theirs) {
              w->line("const float theirs = " + theirs + ";");
              w->line("if (" + firstName + " || theirs " + (max ? "> " : "< ") +
                      mine + ")");
              w->indent();
              w->line(mine + " = theirs;");
              w->dedent();
            },
            /*scoped=*/true);
      if (part.kind != gnnk::FoldKind::OnlineAcc)
        continue;
      w->line("{");
      w->indent();
      printOnlineMerge(part, firstName);
      w->dedent();
      w->line("}");
    }
    w->line(firstName + " = false;");
    w->dedent();
    w->line("}");
  }
  w->dedent();
  w->line("}");
  w->dedent();
  w->line("}");
}

/// Merges the other group's online softmax state of `acc`'s reduction into
/// this group's (inside printSplitMerge's loop over the other groups).
void KernelPrinter::printOnlineMerge(const KernelPlan::SplitPart &acc,
                                     const std::string &first) {
  const KernelPlan &kp = plan;
  const KernelPlan::SplitPart &maxPart = kp.splitState[acc.maxPart];
  const KernelPlan::SplitPart &sumPart = kp.splitState[acc.sumPart];
  const ArrayPlan &m = kp.arrays.find(maxPart.array)->second;
  const ArrayPlan &a = kp.arrays.find(acc.array)->second;
  int64_t logits = maxPart.units;
  bool each = logits > 1;
  std::string maxName = arrayNames.lookup(maxPart.array);
  std::string sumName = arrayNames.lookup(sumPart.array);
  std::string ix = each ? "[s]" : "";
  w->line("float rescale_mine" +
          (each ? "[" + std::to_string(logits) + "]" : std::string()) +
          ", rescale_theirs" +
          (each ? "[" + std::to_string(logits) + "]" : std::string()) + ";");
  if (each) {
    w->line("for (int s = 0; s < " + std::to_string(logits) + "; ++s) {");
    w->indent();
  }
  w->line("const float top_theirs = " + splitSlot(maxPart, "other") + ";");
  w->line("const float top = " + first + " ? top_theirs : (" + maxName + ix +
          " < top_theirs ? top_theirs : " + maxName + ix + ");");
  w->line("const float ref = top == -INFINITY ? 0.0f : top;");
  w->line("rescale_mine" + ix + " = expf((" + first +
          " ? -INFINITY : " + maxName + ix + ") - ref);");
  w->line("rescale_theirs" + ix + " = expf(top_theirs - ref);");
  w->line(sumName + ix + " = " + sumName + ix + " * rescale_mine" + ix + " + " +
          splitSlot(sumPart, "other") + " * rescale_theirs" + ix + ";");
  w->line(maxName + ix + " = top;");
  if (each) {
    w->dedent();
    w->line("}");
  }
  // The logit of each accumulator value.
  std::string logit;
  if (logits > 1) {
    if (m.kind == ArrayKind::Replicated && a.kind == ArrayKind::Replicated) {
      logit = "[s / " + std::to_string(a.numElements / m.numElements) + "]";
    } else if (m.kind == ArrayKind::Replicated) {
      // The element of the lane's key of value s.
      usesKey0 = true;
      std::string key = a.perChunk
                            ? "k0 + s * " + std::to_string(kp.lanes * kp.vec)
                            : "k0 + s / " + std::to_string(kp.vec) + " * " +
                                  std::to_string(kp.lanes * kp.vec) +
                                  " + s % " + std::to_string(kp.vec);
      logit = "[(" + key + ") / " +
              std::to_string(kp.strideAfter(m.norm.size())) + "]";
    } else if (m.perChunk && !a.perChunk) {
      logit = "[s / " + std::to_string(kp.vec) + "]";
    } else {
      logit = "[s]";
    }
  }
  forSplitValues(acc, "other",
                 [&](const std::string &mine, const std::string &theirs) {
                   w->line(mine + " = " + mine + " * rescale_mine" + logit +
                           " + " + theirs + " * rescale_theirs" + logit + ";");
                 });
}

LogicalResult KernelPrinter::print() {
  // The decisions of gnnk-map-gpu; a kernel without them (kernel IR that
  // did not go through the pass, or a kernel the pass could not map) is
  // mapped here by the same analysis, which reports what does not fit.
  if (failed(kernel->hasAttr(gnnk::kGpuMappingAttrName)
                 ? gnnk::gpu::readPlan(kernel, plan)
                 : gnnk::gpu::planKernel(kernel, plan)))
    return failure();
  Block &entry = kernel.getBody().front();
  gnnk::ForVerticesOp vertices;
  for (Operation &op : entry)
    if (auto loop = dyn_cast<gnnk::ForVerticesOp>(op))
      vertices = loop;
  info.side = vertices.getBy();
  names[entry.getArgument(0)] = "g";
  for (StringRef reserved : {"g",
                             "v",
                             "lane",
                             "group",
                             "row",
                             "mask",
                             "c",
                             "s",
                             "key",
                             "begin",
                             "end",
                             "base",
                             "mine",
                             "lane_u",
                             "lane_e",
                             "count",
                             "t",
                             "at",
                             "u",
                             "k0",
                             "e",
                             "training",
                             "seed",
                             "kLanes",
                             "kGroups",
                             "i",
                             "j",
                             "k",
                             "l",
                             "rt",
                             "stream",
                             "threadIdx",
                             "blockIdx",
                             "blockDim",
                             "gridDim",
                             "warpSize",
                             "INFINITY",
                             "NAN",
                             "exp",
                             "expf",
                             "log",
                             "logf",
                             "sqrt",
                             "sqrtf",
                             "fabs",
                             "fabsf",
                             "tanh",
                             "tanhf",
                             "erf",
                             "erff",
                             "pow",
                             "powf",
                             "sin",
                             "sinf",
                             "cos",
                             "cosf",
                             "floor",
                             "floorf",
                             "ceil",
                             "ceilf",
                             "fmod",
                             "fmodf",
                             "min",
                             "max",
                             "split",
                             "share",
                             "other",
                             "split_rows",
                             "split_state",
                             "block",
                             "theirs",
                             "top",
                             "top_theirs",
                             "ref",
                             "rescale_mine",
                             "rescale_theirs"})
    namer.reserve(reserved);
  for (unsigned i = 1; i < entry.getNumArguments(); ++i) {
    std::string base = i - 1 < info.argNames.size() ? info.argNames[i - 1]
                                                    : "arg" + std::to_string(i);
    names[entry.getArgument(i)] = fresh(base);
  }
  names[vertices.getVertex()] = "v";
  // The dropout seeds, mixed with the step's seed once per thread.
  std::vector<std::pair<std::string, int64_t>> seedLines;
  kernel.walk([&](gnnk::DropoutKeepOp keep) {
    Value seed = keep.getSeed();
    if (seeds.count(seed))
      return;
    IntegerAttr attr;
    if (auto c = seed.getDefiningOp<arith::ConstantOp>())
      attr = dyn_cast<IntegerAttr>(c.getValue());
    int64_t value = attr ? attr.getInt() : 0;
    std::string name = fresh("seed" + std::to_string(value));
    seeds[seed] = name;
    seedLines.emplace_back(name, value);
  });

  // The body first: it decides what the prologue declares.
  CodeWriter body;
  KernelPrinter inner(info, sources, body);
  inner.plan = std::move(plan);
  inner.names = names;
  inner.namer = namer;
  inner.seeds = seeds;
  SmallVector<SourceLoc, 4> locs = allLocs(kernel.getLoc());
  SourceLine home = primaryLoc(kernel.getLoc()).toLine();
  inner.lastComment = home;
  body.setSource(home);
  if (failed(inner.printBlock(*vertices.getBodyBlock())))
    return failure();
  plan = std::move(inner.plan);
  const KernelPlan &kp = plan;

  std::string kernelName = info.symbol + "_kernel";
  int numInputs =
      static_cast<int>(entry.getNumArguments()) - 1 - info.numOutputs;
  std::vector<std::string> params{"const rt::cuda::KernelGraph g"};
  for (unsigned i = 1; i < entry.getNumArguments(); ++i) {
    bool output = static_cast<int>(i) - 1 >= numInputs;
    params.push_back(std::string(output ? "float *" : "const float *") +
                     "__restrict__ " + names[entry.getArgument(i)]);
  }
  // A kernel with dropout is a template on `training`: inference has its
  // own instance, without the dropout hash and without the edge ids that
  // only the hash reads.
  if (info.usesDropout)
    params.push_back("uint64_t seed");
  if (kp.splitAbove)
    params.push_back("const int64_t split_rows");

  w->setSource(home);
  w->beginKernel();
  writeLocationComment(*w, sources, locs);
  // What the kernel maps where, for the reader.
  w->line(std::string("// ") +
          (info.side == gnnk::Side::dst ? "Destination rows of the CSR"
                                        : "Source rows of the CSC") +
          " in descending degree order, " +
          (kp.lanes == 1
               ? std::string("one thread")
               : "a group of " + std::to_string(kp.lanes) + " lanes") +
          " per row, " + std::to_string(kp.groups) + " rows per block" +
          (kp.splitAbove
               ? "; the first split_rows rows (more than " +
                     std::to_string(kp.splitAbove) + " edges) a block each"
               : std::string()) +
          ".");
  if (!kp.keyShape.empty()) {
    std::string shapeText;
    for (auto [i, d] : llvm::enumerate(kp.keyShape))
      shapeText += (i ? "x" : "") + std::to_string(d);
    std::string stride = std::to_string(kp.lanes * kp.vec);
    std::string held;
    if (kp.vec == 1)
      held = kp.lanes == 1 ? "every element" : "element l";
    else
      held = "elements " +
             (kp.lanes == 1 ? std::string("0") : std::to_string(kp.vec) + "l") +
             " .. " + (kp.lanes == 1 ? "" : std::to_string(kp.vec) + "l + ") +
             std::to_string(kp.vec - 1);
    if (kp.chunks > 1)
      held += " + " + stride + "c for c < " + std::to_string(kp.chunks);
    w->line("// Lane l holds " + held + " of the " + shapeText + " elements" +
            (kp.vec == 4   ? " (float4 accesses)"
             : kp.vec == 2 ? " (float2 accesses)"
                           : "") +
            ".");
  }
  if (info.usesDropout)
    w->line("template <bool training>");
  w->line("__global__ void __launch_bounds__(" + std::to_string(kp.threads) +
          ") " + kernelName + "(");
  w->indent();
  w->indent();
  for (auto [i, p] : llvm::enumerate(params))
    w->line(p + (i + 1 == params.size() ? ") {" : ","));
  w->dedent();
  w->line("constexpr int kLanes = " + std::to_string(kp.lanes) + ";");
  w->line("constexpr int kGroups = " + std::to_string(kp.groups) + ";");
  for (auto &[value, a] : kp.arrays)
    if (a.kind == ArrayKind::Shared) {
      w->line("__shared__ " + cTypeOf(a.elementType) + " " +
              inner.arrayNames.lookup(value) + "_rows[kGroups][" +
              std::to_string(a.numElements) + "];");
    }
  if (kp.splitAbove)
    w->line("__shared__ float split_state[kGroups][" +
            std::to_string(kp.splitFloats()) + "];");
  w->line("const int group = static_cast<int>(threadIdx.x) / kLanes;");
  if (inner.usesLane)
    w->line("const int lane = static_cast<int>(threadIdx.x) % kLanes;");
  if (kp.splitAbove) {
    w->line("const int64_t block = static_cast<int64_t>(blockIdx.x);");
    w->line("const bool split = block < split_rows;");
    w->line("const int64_t row = split ? block : split_rows + (block - "
            "split_rows) * kGroups + group;");
  } else {
    w->line("const int64_t row = static_cast<int64_t>(blockIdx.x) * kGroups + "
            "group;");
  }
  w->line("if (row >= g.count)");
  w->indent();
  w->line("return;");
  w->dedent();
  w->line("const int64_t v = g.order[row];");
  if (inner.usesMask)
    w->line("const unsigned mask = rt::cuda::groupMask(kLanes);");
  if (inner.usesKey0)
    w->line("const int k0 = lane" +
            (kp.vec > 1 ? " * " + std::to_string(kp.vec) : std::string()) +
            "; // the first of the lane's elements");
  for (auto &[name, value] : seedLines)
    w->line("const uint64_t " + name + " = rt::cuda::mixSeed(" +
            std::to_string(value) + ", seed);");
  w->append(body);
  w->dedent();
  w->setSource(home);
  w->line("}");
  w->endKernel();
  w->blank();

  // The launcher.
  w->setSource(home);
  std::vector<std::string> launchParams{"const rt::cuda::KernelGraph &g"};
  std::vector<std::string> args{"g"};
  for (unsigned i = 1; i < entry.getNumArguments(); ++i) {
    bool output = static_cast<int>(i) - 1 >= numInputs;
    launchParams.push_back(std::string(output ? "float *" : "const float *") +
                           names[entry.getArgument(i)]);
    args.push_back(names[entry.getArgument(i)]);
  }
  if (info.usesDropout) {
    launchParams.push_back("bool training");
    launchParams.push_back("uint64_t seed");
    args.push_back("seed");
  }
  launchParams.push_back("cudaStream_t stream");
  w->line("/// Launches " + kernelName + " on `stream`.");
  w->line("rt::Status " + info.symbol + "(" + llvm::join(launchParams, ", ") +
          ") {");
  w->indent();
  if (!kp.vectorArgs.empty()) {
    std::vector<std::string> pointers;
    for (Value arg : kp.vectorArgs)
      pointers.push_back(names[arg]);
    w->line("GNNC_TRY(rt::cuda::checkAligned(" + cString(info.symbol) + ", " +
            std::to_string(4 * kp.vec) + ", {" + llvm::join(pointers, ", ") +
            "}));");
  }
  std::string blocks =
      "rt::cuda::blocksFor(g.count, " + std::to_string(kp.groups) + ")";
  if (kp.splitAbove) {
    w->line("// Rows of more than " + std::to_string(kp.splitAbove) +
            " edges run on a block each.");
    w->line("const int64_t split_rows = rt::cuda::splitRows(g, " +
            std::to_string(llvm::Log2_64(kp.splitAbove)) + ");");
    blocks = "split_rows + rt::cuda::blocksFor(g.count - split_rows, " +
             std::to_string(kp.groups) + ")";
    args.push_back("split_rows");
  }
  auto launch = [&](const std::string &kernel) {
    return "rt::cuda::launch(" + cString(info.symbol) + ", " + kernel + ", " +
           blocks + ", " + std::to_string(kp.threads) + ", stream, " +
           llvm::join(args, ", ") + ")";
  };
  if (info.usesDropout) {
    w->line("return training ? " + launch(kernelName + "<true>"));
    w->line("                : " + launch(kernelName + "<false>") + ";");
  } else {
    w->line("return " + launch(kernelName) + ";");
  }
  w->dedent();
  w->line("}");
  return success();
}

//===----------------------------------------------------------------------===//
// Host functions
//===----------------------------------------------------------------------===//

/// Prints a host function whose ops call the device runtime
/// (gnnc/runtime/cuda/DeviceOps.h), everything queued on `stream`.
class HostPrinter : public HostFunctionPrinter {
public:
  using HostFunctionPrinter::HostFunctionPrinter;

private:
  LogicalResult printOp(Operation *op, CodeWriter &w,
                        CodeWriter &decl) override;
  std::string copyStatement(const std::string &from, const std::string &to,
                            const std::string &count) override {
    usesExtraParam = true;
    return "GNNC_TRY(rt::cuda::copy(" + from + ", " + to + ", " + count +
           ", stream));";
  }
  /// A call of the device runtime, queued on the stream.
  void printRuntimeCall(CodeWriter &w, const std::string &fn,
                        const std::string &args) override {
    usesExtraParam = true;
    w.line("GNNC_TRY(rt::cuda::" + fn + "(" + args + ", stream));");
  }
  std::string edgeEnds(Value graph, bool src) override {
    return member(kernelGraph(graph), src ? "edgeSrc()" : "edgeDst()");
  }
  /// A constant lives in the workspace (device memory), filled first.
  bool constantsInWorkspace() const override { return true; }
};

LogicalResult HostPrinter::printOp(Operation *op, CodeWriter &w,
                                   CodeWriter &decl) {
  using namespace gnn;
  auto out = [&]() { return ptr(op->getResult(0)); };
  auto in = [&](Value v) { return ptr(v); };
  auto call = [&](const std::string &fn, const std::string &args) {
    printRuntimeCall(w, fn, args);
  };
  for (Value r : op->getResults())
    if (isa<DomainTensorType>(r.getType()) &&
        !isa<AttachOp, CollectOp, ReshapeOp>(op) && !isa<func::CallOp>(op))
      declare(r, decl);
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case<NumVerticesOp, NumEdgesOp>([&](auto n) -> LogicalResult {
        const FunctionShapes::GraphSymbols *g =
            shapes.graphSymbols(n.getGraph());
        int s = !g ? -1 : isa<NumVerticesOp>(op) ? g->numDst : g->numEdges;
        if (s < 0)
          return op->emitError("the CUDA printer cannot tell this count");
        call("fill", out() + ", 1, static_cast<float>(" + sym(s) + ")");
        return success();
      })
      .Case<ReadoutOp, ReadoutSelectOp>([&](auto r) -> LogicalResult {
        bool select = isa<ReadoutSelectOp>(op);
        const FunctionShapes::GraphSymbols *g =
            shapes.graphSymbols(r.getGraph());
        if (!g || g->numGraphs < 0)
          return op->emitError("the CUDA printer needs a batched graph");
        call(std::string("readout") + (select ? "Select" : "") +
                 capitalized(stringifyReduceFn(r.getFn())),
             graph(r.getGraph()) + ", " + in(r.getInput()) + ", " +
                 dims(r.getInput(), 0, 1) + ", " + rowSize(r.getInput()) +
                 ", " + out());
        return success();
      })
      .Case<ConstantOp>([&](ConstantOp c) -> LogicalResult {
        bool f32 = tensorOf(c.getResult()).getElementType().isF32();
        call("fill", out() + ", 1, " +
                         floatLiteral(c.getValue().convertToDouble(), f32,
                                      NonFiniteSpelling::CMathMacros));
        return success();
      })
      .Case<MatmulOp>([&](MatmulOp m) -> LogicalResult {
        MatmulOperands mm = matmulOperands(m);
        if (!mm.transA && !mm.transW) {
          call("matmul",
               in(mm.a) + ", " + in(mm.w) + ", " + out() + ", " + mm.sizes);
          return success();
        }
        // The transposed operands are read in place (CUBLAS_OP_T).
        auto flag = [](bool trans) { return trans ? ", true" : ", false"; };
        call("matmulT", in(mm.a) + flag(mm.transA) + ", " + in(mm.w) +
                            flag(mm.transW) + ", " + out() + ", " + mm.sizes);
        return success();
      })
      .Case<ReduceOp, ReduceSelectOp>([&](auto r) -> LogicalResult {
        Value input = r.getInput();
        std::string parts = reduceSplit(input, r.getAxisAttr());
        auto m = fusions.mulReduces.find(op);
        bool product = m != fusions.mulReduces.end();
        // Scratch for the partial results of long reductions.
        std::string scratchName = namer.unique(out() + "_scratch");
        addSlot(
            scratchName,
            std::string("rt::alignUp(static_cast<int64_t>(rt::cuda::") +
                (product ? "mulReduceScratchBytes(" : "reduceScratchBytes(") +
                parts + ")))",
            op);
        if (product) {
          // The products are summed as they are computed.
          BinaryOp mul = m->second;
          call("mulReduceSum", binaryOperands(mul) + ", " +
                                   shapeList(shapes.shape(mul.getResult())) +
                                   ", " + out() + ", " + parts +
                                   ", rt::wsBytes(workspace, layout." +
                                   scratchName + ")");
          return success();
        }
        std::string fn = capitalized(stringifyReduceFn(r.getFn()));
        call(std::string("reduce") + (isa<ReduceSelectOp>(op) ? "Select" : "") +
                 fn,
             in(input) + ", " + out() + ", " + parts +
                 ", rt::wsBytes(workspace, layout." + scratchName + ")");
        return success();
      })
      .Case<gnnk::LaunchOp>([&](gnnk::LaunchOp l) -> LogicalResult {
        auto it = kernels.find(l.getKernel().str());
        if (it == kernels.end())
          return l.emitError("the CUDA printer cannot find kernel @")
                 << l.getKernel();
        const KernelInfo &k = it->second;
        std::string layout = k.side == gnnk::Side::dst ? "byDst()" : "bySrc()";
        std::vector<std::string> args;
        for (Value v : l.getArgs())
          args.push_back(isa<gnn::GraphType>(v.getType())
                             ? member(kernelGraph(v), layout)
                             : in(v));
        for (Value r : l.getResults())
          args.push_back(ptr(r));
        if (k.usesDropout) {
          args.push_back("training");
          args.push_back("seed");
          usesTraining = usesSeed = true;
        }
        args.push_back("stream");
        usesExtraParam = true;
        w.line("GNNC_TRY(" + k.symbol + "(" + llvm::join(args, ", ") + "));");
        return success();
      })
      .Default([&](Operation *other) -> LogicalResult {
        return printRuntimeOp(other, w, decl);
      });
}

//===----------------------------------------------------------------------===//
// The module
//===----------------------------------------------------------------------===//

/// Prints `<stem>.h` (a host header) and `<stem>.cu`.
class ModulePrinter : public HostModulePrinter {
public:
  ModulePrinter(ModuleOp module, const TargetOptions &options)
      : HostModulePrinter(cudaABI(), module, options) {}

private:
  /// The host ABI of the CUDA printer: device graphs, the gnnc::rt::cuda
  /// runtime, a trailing `cudaStream_t stream`.
  static HostABI cudaABI() {
    HostABI abi;
    abi.printerName = "CUDA";
    abi.runtime = "rt::cuda";
    abi.graphType = "const gnnc::rt::cuda::DeviceGraph &";
    abi.batchedGraphType = "const gnnc::rt::cuda::DeviceBatchedGraph &";
    abi.heteroGraphType = "const gnnc::rt::cuda::DeviceHeteroGraph &";
    abi.relationType = "rt::cuda::DeviceGraph";
    abi.extraParamType = "cudaStream_t";
    abi.extraParamName = "stream";
    abi.nonFinite = NonFiniteSpelling::CMathMacros;
    abi.optionalInputGrads = true;
    abi.guardPrefix = "GNNC_GENERATED_CUDA_";
    abi.runtimeHeader = "gnnc/runtime/cuda/DeviceOps.h";
    abi.sourceExtension = ".cu";
    abi.bufferMemory = "device memory";
    return abi;
  }

  std::unique_ptr<HostFunctionPrinter> createHostPrinter(HostFunc &f) override {
    return std::make_unique<HostPrinter>(abi, f, sources, byName, kernels);
  }
  LogicalResult printKernel(KernelInfo &k, CodeWriter &w) override {
    return KernelPrinter(k, sources, w).print();
  }
  void printHeaderAbout(CodeWriter &w) override {
    w.line("// The ABI of this header is described in gnnc's docs/abi.md "
           "(\"CUDA\"); plain C++,");
    w.line("// the kernels are in " + options.stem + ".cu.");
  }
  void printSourceIncludes(CodeWriter &w) override {
    w.line("#include \"gnnc/runtime/cuda/Kernel.cuh\"");
    w.blank();
    w.line("#include <cmath>");
  }
  std::string memoryNote(const HostFunc &f) override {
    return "/// Device pointers; `workspace` holds " + f.symbol +
           "_workspace_bytes(...) bytes of device memory, 64-byte aligned. "
           "Queued on `stream`.";
  }
};

class CudaTarget : public KernelTarget {
public:
  StringRef getName() const override { return "cuda"; }
  LogicalResult printModule(ModuleOp module, const TargetOptions &options,
                            std::vector<GeneratedFile> &files) override {
    return ModulePrinter(module, options).print(files);
  }
};

} // namespace

std::unique_ptr<KernelTarget> gnnc::target::createCudaTarget() {
  return std::make_unique<CudaTarget>();
}
