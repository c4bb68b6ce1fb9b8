//===- Remat.cpp - What the forward stores for the backward ---------------===//
//
// Part of gnnc.
//
// gnn-autodiff writes @F.backward as a function of F's arguments and the
// cotangent: it recomputes every forward value it reads. Training runs the
// forward first anyway, so the forward could hand values over instead. This
// pass chooses, value by value, and splits the pair into
//
//   @F.train(args)                -> (y, saved...)
//   @F.backward(args, saved..., dy) -> (gradients...)
//
// Choices. A value the backward reads is
//   - free when it is a view or a graph fact (attach, collect, reshape,
//     constants, degrees, counts, relations, splats, transposes of an
//     argument): always recomputed, nothing to store;
//   - per-vertex or dense: stored (recomputing a matmul to save O(N) bytes
//     is never worth it);
//   - per-edge: the policy decides. `never` stores it (what a framework
//     with a tape does: PyG keeps every message and attention weight).
//     `always` recomputes it from per-vertex values. `auto` compares
//     the flops of its per-edge cone (the edge ops back to gathers and
//     stored values), per edge, with `balance` times the bytes a store
//     costs per edge (written by the forward, read by the backward):
//     cheap elementwise chains are recomputed, per-edge matmuls stored.
//
// Attention. With `always` and `auto`, every `edge_softmax` of the backward
// first becomes `exp(l - gather(max(lse, lowest)))` with
// `lse = scatter logsumexp(l)` and `lowest` the lowest finite float (which
// only a row of -inf logits, whose lse is -inf, falls below: its weights
// are then exp(-inf) = 0, as edge_softmax's, not exp(-inf - -inf) = NaN):
// the weights are then a per-edge function of the logits and one per-vertex
// statistic (per head), so the forward stores O(N.H) floats where a tape
// stores O(E.H). In @F.train the logsumexp sits next to the forward's
// softmax aggregation, and fusion merges the two into one pass over the
// edges.
//
// Calls of layers are inlined into both functions first (and CSE merges
// the recomputed forward of an inlined layer backward with the model's), so
// a model decides for all of its layers at once.
//
//===----------------------------------------------------------------------===//

#include "gnnc/Dialect/GNN/Transforms/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/CSE.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <set>

namespace gnnc::gnn {
#define GEN_PASS_DEF_GNNREMAT
#include "gnnc/Dialect/GNN/Transforms/Passes.h.inc"
} // namespace gnnc::gnn

using namespace mlir;
using namespace gnnc::gnn;

namespace {

//===----------------------------------------------------------------------===//
// Function surgery
//===----------------------------------------------------------------------===//

/// Replaces every func.call in `func` by the callee's body, until none is
/// left (callees are single-block gnn functions).
LogicalResult inlineCalls(func::FuncOp func) {
  auto module = func->getParentOfType<ModuleOp>();
  for (unsigned depth = 0;; ++depth) {
    SmallVector<func::CallOp> calls;
    func.walk([&](func::CallOp call) { calls.push_back(call); });
    if (calls.empty())
      return success();
    if (depth > 64)
      return func.emitOpError("gnn-remat: calls nest too deeply");
    for (func::CallOp call : calls) {
      auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee());
      if (!callee || callee.isExternal() ||
          callee.getBody().getBlocks().size() != 1)
        return call.emitOpError("gnn-remat: cannot inline @")
               << call.getCallee();
      IRMapping map;
      Block &body = callee.getBody().front();
      map.map(body.getArguments(), call.getOperands());
      OpBuilder b(call);
      for (Operation &op : body.without_terminator())
        b.clone(op, map);
      for (auto [result, value] :
           llvm::zip(call.getResults(), body.getTerminator()->getOperands()))
        result.replaceAllUsesWith(map.lookupOrDefault(value));
      call.erase();
    }
  }
}

/// Erases the ops of `func` whose results nobody reads (all gnn ops are
/// pure).
void eraseDeadOps(func::FuncOp func) {
  Block &body = func.getBody().front();
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
    if (!op.hasTrait<OpTrait::IsTerminator>() && op.use_empty() &&
        isMemoryEffectFree(&op))
      op.erase();
}

void eliminateCommonSubexpressions(func::FuncOp func) {
  IRRewriter rewriter(func.getContext());
  DominanceInfo dominance(func);
  mlir::eliminateCommonSubExpressions(rewriter, dominance, func);
}

//===----------------------------------------------------------------------===//
// Costs
//===----------------------------------------------------------------------===//

int64_t rowElements(DomainTensorType t) {
  int64_t n = 1;
  for (int64_t d : t.getShape())
    n *= ShapedType::isDynamic(d) ? 1 : d;
  return n;
}

int64_t elementBytes(DomainTensorType t) {
  return (t.getElementType().getIntOrFloatBitWidth() + 7) / 8;
}

/// Bytes one edge (one row) of an edge tensor takes.
int64_t rowBytes(Value v) {
  DomainTensorType t = tensorOf(v);
  return rowElements(t) * elementBytes(t);
}

/// Floating-point work of one op per row of its result: 1 per element for
/// arithmetic, 4 for divisions, roots and the dropout hash, 8 for
/// transcendental functions, 2.K per output element of a matmul, the input
/// row for a reduction; nothing for data movement (gathers, reshapes).
double flopsPerRow(Operation *op) {
  Value result = op->getResult(0);
  double n = static_cast<double>(rowElements(tensorOf(result)));
  if (isa<GatherOp, ReshapeOp, TransposeOp, ConcatOp, SliceOp, SplatOp,
          BroadcastLikeOp, AttachOp, CollectOp, ConstantOp, DstRowsOp,
          PadDstRowsOp>(op))
    return 0;
  if (auto u = dyn_cast<UnaryOp>(op)) {
    switch (u.getFn()) {
    case UnaryFn::exp:
    case UnaryFn::log:
    case UnaryFn::tanh:
    case UnaryFn::sigmoid:
    case UnaryFn::gelu:
    case UnaryFn::elu:
    case UnaryFn::erf:
    case UnaryFn::sin:
    case UnaryFn::cos:
      return 8 * n;
    case UnaryFn::sqrt:
    case UnaryFn::rsqrt:
      return 4 * n;
    default:
      return n;
    }
  }
  if (auto bin = dyn_cast<BinaryOp>(op)) {
    if (bin.getFn() == BinaryFn::pow)
      return 8 * n;
    return bin.getFn() == BinaryFn::div ? 4 * n : n;
  }
  if (auto matmul = dyn_cast<MatmulOp>(op)) {
    ArrayRef<int64_t> rhs = tensorOf(matmul.getRhs()).getShape();
    return 2.0 * static_cast<double>(rhs.front()) * n;
  }
  if (auto reduce = dyn_cast<ReduceOp>(op))
    return static_cast<double>(rowElements(tensorOf(reduce.getInput())));
  if (isa<DropoutOp>(op))
    return 4 * n;
  if (isa<EdgeSoftmaxOp>(op))
    return 12 * n;
  return n;
}

/// Views, data movement and graph facts: recomputing them costs nothing
/// worth storing.
bool isFree(Operation *op) {
  return isa<ConstantOp, TrainingOp, AttachOp, CollectOp, ReshapeOp,
             TransposeOp, BroadcastLikeOp, InDegreeOp, OutDegreeOp,
             NumVerticesOp, NumEdgesOp, GraphSizesOp, RelationOp, SplatOp,
             DstRowsOp, PadDstRowsOp>(op);
}

/// Ops that reduce over a graph's edges or vertices: a per-vertex or dense
/// value computed by one is stored, never recomputed (the pass over the
/// edges is the expensive part of a layer).
bool reducesOverGraph(Operation *op) {
  return isa<ScatterOp, ScatterSelectOp, EdgeSoftmaxOp, ReadoutOp,
             ReadoutSelectOp, AggregateOp, func::CallOp>(op);
}

/// `file:line:col` of an op, the file without its directory.
std::string where(Location loc) {
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations())
      if (isa<FileLineColLoc>(inner))
        return where(inner);
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return llvm::formatv("{0}:{1}:{2}",
                         llvm::sys::path::filename(file.getFilename()),
                         file.getLine(), file.getColumn())
        .str();
  return "?";
}

/// What an op computes, for the report: `binary add`, `matmul`, ...
std::string describe(Operation *op) {
  std::string text = op->getName().stripDialect().str();
  StringRef fn;
  if (auto u = dyn_cast<UnaryOp>(op))
    fn = stringifyUnaryFn(u.getFn());
  else if (auto bin = dyn_cast<BinaryOp>(op))
    fn = stringifyBinaryFn(bin.getFn());
  else if (auto r = dyn_cast<ReduceOp>(op))
    fn = stringifyReduceFn(r.getFn());
  else if (auto sc = dyn_cast<ScatterOp>(op))
    fn = stringifyReduceFn(sc.getFn());
  if (!fn.empty())
    text += " " + fn.str();
  return text;
}

//===----------------------------------------------------------------------===//
// Planning
//===----------------------------------------------------------------------===//

enum class Policy { Auto, Always, Never };

/// The values of a backward function that depend on its cotangent (its
/// last argument); the others recompute the forward.
DenseSet<Value> adjointValues(func::FuncOp backward) {
  Block &body = backward.getBody().front();
  DenseSet<Value> adjoint{body.getArguments().back()};
  for (Operation &op : body)
    if (llvm::any_of(op.getOperands(),
                     [&](Value v) { return adjoint.contains(v); }))
      for (Value r : op.getResults())
        adjoint.insert(r);
  return adjoint;
}

/// `gnn.broadcast_like %x, %like` reads only the shape of `%like`. Where
/// that is a forward value, reads the shape from a value of the same type
/// that costs nothing to keep instead: an argument, a value of the
/// backward itself, or a view. (The vector-Jacobian product of a reduction
/// broadcasts to its input's shape, and the input itself is rarely needed.)
/// A type says the shape only where every `?` is the same count: not in a
/// function of several graphs (each has its own vertex counts), nor where
/// a block's destination rows are taken from its source rows.
void substituteShapeOperands(func::FuncOp backward) {
  unsigned graphs = llvm::count_if(backward.getArgumentTypes(),
                                   [](Type t) { return isa<GraphType>(t); });
  bool severalCounts = graphs > 1;
  backward.walk([&](Operation *op) {
    severalCounts |= isa<DstRowsOp, PadDstRowsOp>(op);
  });
  if (severalCounts)
    return;
  DenseSet<Value> adjoint = adjointValues(backward);
  Block &body = backward.getBody().front();
  // The cheapest value of each type seen so far: 0 argument, 1 adjoint,
  // 2 view.
  DenseMap<Type, std::pair<int, Value>> cheapest;
  auto offer = [&](Value v, int rank) {
    auto it = cheapest.find(v.getType());
    if (it == cheapest.end() || rank < it->second.first)
      cheapest[v.getType()] = {rank, v};
  };
  for (BlockArgument arg : body.getArguments())
    offer(arg, 0);
  for (Operation &op : body) {
    if (auto b = dyn_cast<BroadcastLikeOp>(op)) {
      Value like = b.getLike();
      Operation *def = like.getDefiningOp();
      if (def && !adjoint.contains(like) && !isFree(def)) {
        auto it = cheapest.find(like.getType());
        if (it != cheapest.end())
          b.getLikeMutable().assign(it->second.second);
      }
    }
    for (Value r : op.getResults()) {
      if (adjoint.contains(r))
        offer(r, 1);
      else if (isFree(&op))
        offer(r, 2);
    }
  }
}

/// One value of the forward that the backward reads and that is not free.
struct Decision {
  Value value;
  bool store = false;
  bool edge = false;
  /// Per-edge values: flop per edge to recompute it.
  double flops = 0;
  /// Whether it is the logsumexp statistic of a rewritten edge_softmax.
  bool softmaxStatistic = false;
  unsigned order = 0;
};

struct Plan {
  std::vector<Decision> decisions; // in program order
  SmallVector<Value> stored;       // in program order
};

class Planner {
public:
  /// Cones end at `likelyStored` values too: a first plan's stores, which
  /// a second plan will mostly store again. With `exact`, every decision's
  /// cone is costed in full (for the report); without, only until it costs
  /// more than storing, which decides the same and keeps the planner linear
  /// in the function's size.
  Planner(func::FuncOp backward, Policy policy, double balance,
          const DenseSet<Operation *> &statistics,
          const DenseSet<Value> &likelyStored, bool exact)
      : backward(backward), policy(policy), balance(balance), exact(exact),
        statistics(statistics), likelyStored(likelyStored) {}

  Plan run();

private:
  /// `flops` plus the flop per row of recomputing the values of `op`'s
  /// operands and the values of the same kind (per-edge, or per-vertex and
  /// dense) that they need and that are not stored; infinite through a
  /// reduction over the graph. Stops adding once the total exceeds
  /// `limit`.
  double coneFlops(Operation *op, double flops, bool edge, double limit);
  void enqueue(Value v);

  func::FuncOp backward;
  Policy policy;
  double balance;
  bool exact;
  const DenseSet<Operation *> &statistics;
  const DenseSet<Value> &likelyStored;
  DenseMap<Operation *, unsigned> order;
  DenseSet<Value> storedSet, decided;
  std::set<std::pair<unsigned, unsigned>> queue; // (op order, result)
  DenseMap<std::pair<unsigned, unsigned>, Value> byKey;
};

void Planner::enqueue(Value v) {
  auto result = dyn_cast<OpResult>(v);
  if (!result || decided.contains(v))
    return;
  std::pair<unsigned, unsigned> key{order.lookup(result.getOwner()),
                                    result.getResultNumber()};
  queue.insert(key);
  byKey[key] = v;
}

double Planner::coneFlops(Operation *op, double flops, bool edge,
                          double limit) {
  DenseSet<Operation *> seen;
  SmallVector<Operation *> worklist{op};
  while (!worklist.empty() && !(flops > limit)) {
    Operation *user = worklist.pop_back_val();
    for (Value v : user->getOperands()) {
      Operation *def = v.getDefiningOp();
      if (!def || storedSet.contains(v) || likelyStored.contains(v) ||
          isEdge(v) != edge || !isa<DomainTensorType>(v.getType()) ||
          !seen.insert(def).second)
        continue;
      if (reducesOverGraph(def))
        return std::numeric_limits<double>::infinity();
      flops += flopsPerRow(def);
      worklist.push_back(def);
    }
  }
  return flops;
}

Plan Planner::run() {
  Block &body = backward.getBody().front();
  DenseSet<Value> adjoint = adjointValues(backward);
  unsigned index = 0;
  for (Operation &op : body)
    order[&op] = index++;
  // What the adjoint ops (and the return) read of the forward.
  for (Operation &op : body) {
    bool readsPrimal =
        adjoint.contains(op.getNumResults() ? op.getResult(0) : Value()) ||
        op.hasTrait<OpTrait::IsTerminator>();
    if (!readsPrimal)
      continue;
    for (Value operand : op.getOperands())
      if (!adjoint.contains(operand))
        enqueue(operand);
  }

  Plan plan;
  while (!queue.empty()) {
    auto last = std::prev(queue.end());
    Value v = byKey.lookup(*last);
    queue.erase(last);
    if (!decided.insert(v).second)
      continue;
    Operation *op = v.getDefiningOp();
    if (isFree(op)) {
      for (Value operand : op->getOperands())
        enqueue(operand);
      continue;
    }
    Decision d;
    d.value = v;
    d.order = order.lookup(op);
    d.edge = isEdge(v);
    d.softmaxStatistic = statistics.contains(op);
    double storeCost = 2.0 * static_cast<double>(rowBytes(v));
    if (reducesOverGraph(op))
      d.flops = std::numeric_limits<double>::infinity();
    else
      d.flops = coneFlops(op, flopsPerRow(op), d.edge,
                          exact ? std::numeric_limits<double>::infinity()
                                : balance * storeCost);
    bool cheap = d.flops <= balance * storeCost;
    if (d.edge && policy == Policy::Always)
      d.store = false;
    else if (d.edge && policy == Policy::Never)
      d.store = true;
    else
      d.store = !cheap;
    if (d.store) {
      storedSet.insert(v);
    } else {
      for (Value operand : op->getOperands())
        enqueue(operand);
    }
    plan.decisions.push_back(d);
  }
  llvm::sort(plan.decisions, [](const Decision &a, const Decision &b) {
    return a.order < b.order;
  });
  for (const Decision &d : plan.decisions)
    if (d.store)
      plan.stored.push_back(d.value);
  return plan;
}

/// What rewriteSoftmaxes did: the logsumexp scatters, and for the weights
/// each rewrite computes, the softmax they replace (to put it back where a
/// forward value's cone is cloned into @F.train, so that it meets the
/// forward's own softmax there).
struct SoftmaxRewrites {
  DenseSet<Operation *> statistics;
  DenseMap<Value, EdgeSoftmaxOp> original; // weights -> erased op's twin
  OwningOpRef<ModuleOp> holder;            // owns the twins
};

/// Rewrites every edge_softmax of `func` as
/// exp(l - gather(max(logsumexp(l), lowest))), lowest = -FLT_MAX (for f32).
void rewriteSoftmaxes(func::FuncOp func, SoftmaxRewrites &rewrites) {
  DenseSet<Operation *> &statistics = rewrites.statistics;
  rewrites.holder = ModuleOp::create(func.getLoc());
  SmallVector<EdgeSoftmaxOp> softmaxes;
  func.walk([&](EdgeSoftmaxOp op) { softmaxes.push_back(op); });
  for (EdgeSoftmaxOp op : softmaxes) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    Value logits = op.getInput();
    DomainTensorType t = tensorOf(logits);
    auto lse = b.create<ScatterOp>(
        loc, t.withDomain(op.getBy()),
        ReduceFnAttr::get(b.getContext(), ReduceFn::logsumexp), op.getGraph(),
        logits);
    // A row of -inf only has lse = -inf; shifting by the lowest finite
    // value instead gives its edges exp(-inf) = 0. max keeps a NaN lse (a
    // row with +inf or NaN logits), so those weights stay NaN.
    DomainTensorType scalar = DomainTensorType::get(
        b.getContext(), Domain::dense, {}, t.getElementType());
    double lowest =
        t.getElementType().isF32()
            ? static_cast<double>(std::numeric_limits<float>::lowest())
            : std::numeric_limits<double>::lowest();
    Value floor = b.create<ConstantOp>(loc, scalar, b.getF64FloatAttr(lowest));
    Value shift =
        b.create<BinaryOp>(loc, tensorOf(lse), BinaryFn::max, lse, floor);
    Value back = b.create<GatherOp>(loc, t, op.getGraph(), shift);
    Value shifted = b.create<BinaryOp>(loc, t, BinaryFn::sub, logits, back);
    Value weights =
        b.create<UnaryOp>(loc, t, UnaryFn::exp, shifted, FloatAttr());
    op.getResult().replaceAllUsesWith(weights);
    op->moveBefore(rewrites.holder->getBody(),
                   rewrites.holder->getBody()->end());
    rewrites.original[weights] = op;
    statistics.insert(lse);
    statistics.insert(shift.getDefiningOp()); // what F.train stores
  }
}

//===----------------------------------------------------------------------===//
// The report
//===----------------------------------------------------------------------===//

struct Sizes {
  int64_t vertices, edges;

  /// Bytes of `v` between forward and backward, and the formula.
  std::pair<int64_t, std::string> bytes(Value v) const {
    DomainTensorType t = tensorOf(v);
    int64_t row = elementBytes(t);
    bool perVertex = false;
    for (int64_t d : t.getShape()) {
      if (ShapedType::isDynamic(d))
        perVertex = true;
      else
        row *= d;
    }
    switch (t.getDomain()) {
    case Domain::edge:
      return {row * edges, llvm::formatv("E*{0}", row).str()};
    case Domain::src:
    case Domain::dst:
      return {row * vertices, llvm::formatv("N*{0}", row).str()};
    case Domain::dense:
      if (perVertex)
        return {row * vertices, llvm::formatv("N*{0}", row).str()};
      return {row, std::to_string(row)};
    }
    return {row, std::to_string(row)};
  }
};

struct Totals {
  int64_t vertexBytes = 0, edgeBytes = 0;
};

Totals totals(const Plan &plan, const Sizes &sizes) {
  Totals t;
  for (Value v : plan.stored)
    (isEdge(v) ? t.edgeBytes : t.vertexBytes) += sizes.bytes(v).first;
  return t;
}

void printReport(llvm::raw_ostream &os, func::FuncOp forward,
                 StringRef policyName, double balance, const Sizes &sizes,
                 const Plan &plan, const Totals &all) {
  os << llvm::formatv("@{0}: policy {1}, balance {2:F1} flop/B, N = {3}, E = "
                      "{4}\n",
                      forward.getName(), policyName, balance, sizes.vertices,
                      sizes.edges);
  for (const Decision &d : plan.decisions) {
    auto [bytes, formula] = sizes.bytes(d.value);
    Operation *op = d.value.getDefiningOp();
    std::string what =
        d.softmaxStatistic ? "softmax statistic (logsumexp)" : describe(op);
    std::string cost =
        std::isinf(d.flops)
            ? std::string("reduces over the graph")
            : llvm::formatv("{0} flop vs {1} B per {2}",
                            static_cast<int64_t>(std::ceil(d.flops)),
                            2 * rowBytes(d.value), d.edge ? "edge" : "row")
                  .str();
    os << llvm::formatv("  {0,-9} {1,-16} {2,-22} {3,-13} {4,10} B  {5,-30} "
                        "{6}\n",
                        d.store ? "store" : "recompute", where(op->getLoc()),
                        describeType(tensorOf(d.value)), formula, bytes, what,
                        cost);
  }
  Totals chosen = totals(plan, sizes);
  os << llvm::formatv("  kept for the backward: {0} B per-vertex and dense "
                      "+ {1} B per-edge = {2} B\n",
                      chosen.vertexBytes, chosen.edgeBytes,
                      chosen.vertexBytes + chosen.edgeBytes);
  os << llvm::formatv("  a tape (storing everything the backward reads): "
                      "{0} B per-vertex and dense + {1} B per-edge = {2} B\n",
                      all.vertexBytes, all.edgeBytes,
                      all.vertexBytes + all.edgeBytes);
}

//===----------------------------------------------------------------------===//
// Splitting
//===----------------------------------------------------------------------===//

/// A name for a stored value: what computes it (`dropout`, `binary_gt`),
/// with an ordinal from the second value of a function computed the same way
/// on (`reduce_sum_2`). Names come from the program alone, never from its
/// locations, so that editing comments or whitespace of the .gnn file
/// renames nothing (they name fields of the generated `F_Saved` struct).
std::string savedName(const Decision &d, llvm::StringSet<> &used,
                      llvm::StringMap<unsigned> &next) {
  Operation *op = d.value.getDefiningOp();
  std::string stem;
  if (d.softmaxStatistic) {
    stem = "softmax_lse";
  } else {
    stem = describe(op);
    std::replace(stem.begin(), stem.end(), ' ', '_');
  }
  // The first free one of stem, stem_2, stem_3, ...; `next` keeps, per
  // stem, the suffix to try next (names are never released).
  unsigned &k = next[stem];
  std::string name = stem;
  if (k == 0) {
    k = 2;
    if (used.insert(name).second)
      return name;
  }
  while (!used.insert(name = stem + "_" + std::to_string(k)).second)
    ++k;
  ++k;
  return name;
}

/// Builds @F.train and rewrites @F.backward for `plan`.
LogicalResult split(func::FuncOp forward, func::FuncOp backward,
                    const Plan &plan, const SoftmaxRewrites &rewrites) {
  MLIRContext *ctx = forward.getContext();
  Builder attrs(ctx);
  unsigned numArgs = forward.getNumArguments();
  std::vector<std::string> names;
  llvm::StringSet<> used;
  llvm::StringMap<unsigned> next;
  for (const Decision &d : plan.decisions)
    if (d.store)
      names.push_back(savedName(d, used, next));

  // @F.train: the forward, then the cones of the stored values.
  func::FuncOp train = forward.clone();
  train.setName((forward.getName() + ".train").str());
  train->setAttr(kTrainOfAttrName, FlatSymbolRefAttr::get(forward));
  SymbolTable(forward->getParentOfType<ModuleOp>())
      .insert(train, ++Block::iterator(backward));
  if (failed(inlineCalls(train)))
    return failure();
  Block &trainBody = train.getBody().front();
  Operation *ret = trainBody.getTerminator();
  IRMapping map;
  for (unsigned i = 0; i < numArgs; ++i)
    map.map(backward.getArgument(i), train.getArgument(i));
  OpBuilder b(ret);
  std::function<Value(Value)> cloneInto = [&](Value v) -> Value {
    if (Value mapped = map.lookupOrNull(v))
      return mapped;
    Operation *op = v.getDefiningOp();
    auto it = rewrites.original.find(v);
    if (it != rewrites.original.end())
      op = it->second; // the forward computes the softmax itself
    for (Value operand : op->getOperands())
      cloneInto(operand);
    Operation *copy = b.clone(*op, map);
    map.map(v, copy->getResult(0));
    return map.lookup(v);
  };
  SmallVector<Value> results(ret->getOperands());
  SmallVector<Type> resultTypes(train.getResultTypes());
  SmallVector<DictionaryAttr> resultAttrs;
  resultAttrs.push_back(train.getResultAttrDict(0));
  for (auto [v, name] : llvm::zip(plan.stored, names)) {
    results.push_back(cloneInto(v));
    resultTypes.push_back(v.getType());
    resultAttrs.push_back(attrs.getDictionaryAttr(
        attrs.getNamedAttr(kSavedAttrName, attrs.getStringAttr(name))));
  }
  ret->setOperands(results);
  // Buffer updates stay last: the cones above read the buffers as the call
  // found them.
  SmallVector<UpdateBatchStatsOp> updates(
      trainBody.getOps<UpdateBatchStatsOp>());
  for (UpdateBatchStatsOp u : updates)
    u->moveBefore(ret);
  train.setFunctionType(
      FunctionType::get(ctx, train.getArgumentTypes(), resultTypes));
  train.setAllResultAttrs(resultAttrs);
  eliminateCommonSubexpressions(train);
  eraseDeadOps(train);

  // @F.backward reads the stored values from new arguments (inserted at
  // once: one at a time rebuilds the function type for each).
  SmallVector<unsigned> positions(plan.stored.size(), numArgs);
  SmallVector<Type> types;
  SmallVector<DictionaryAttr> argAttrs;
  SmallVector<Location> locs;
  for (auto [v, name] : llvm::zip(plan.stored, names)) {
    types.push_back(v.getType());
    argAttrs.push_back(attrs.getDictionaryAttr(
        attrs.getNamedAttr(kSavedAttrName, attrs.getStringAttr(name))));
    locs.push_back(v.getLoc());
  }
  backward.insertArguments(positions, types, argAttrs, locs);
  for (auto [k, v] : llvm::enumerate(plan.stored))
    Value(v).replaceAllUsesWith(
        backward.getArgument(numArgs + static_cast<unsigned>(k)));
  eraseDeadOps(backward);
  return success();
}

struct RematPass : public gnnc::gnn::impl::GNNRematBase<RematPass> {
  using GNNRematBase::GNNRematBase;

  void runOnOperation() override {
    GNNRematOptions options;
    options.policy = policy;
    options.balance = balance;
    options.report = report;
    options.vertices = vertices;
    options.edges = edges;
    if (failed(runRemat(getOperation(), options,
                        report ? &llvm::outs() : nullptr)))
      signalPassFailure();
  }
};

} // namespace

LogicalResult gnnc::gnn::runRemat(ModuleOp module,
                                  const GNNRematOptions &options,
                                  llvm::raw_ostream *report) {
  Policy policy;
  if (options.policy == "auto")
    policy = Policy::Auto;
  else if (options.policy == "always")
    policy = Policy::Always;
  else if (options.policy == "never")
    policy = Policy::Never;
  else
    return module.emitError("gnn-remat: unknown policy '")
           << options.policy << "'; expected auto, always or never";
  if (!(options.balance >= 0))
    return module.emitError("gnn-remat: balance must be at least 0");

  SmallVector<std::pair<func::FuncOp, func::FuncOp>> pairs;
  for (auto func : module.getOps<func::FuncOp>())
    if (auto of = func->getAttrOfType<FlatSymbolRefAttr>(kBackwardOfAttrName))
      if (auto forward = module.lookupSymbol<func::FuncOp>(of.getAttr()))
        pairs.push_back({forward, func});
  // Inline first: a model's backward calls its layers' backward functions
  // as gnn-autodiff wrote them, before any is rewritten.
  for (auto [forward, backward] : pairs) {
    if (failed(inlineCalls(backward)))
      return failure();
    eliminateCommonSubexpressions(backward);
    eraseDeadOps(backward);
  }
  Sizes sizes{options.vertices, options.edges};
  for (auto [forward, backward] : pairs) {
    DenseSet<Operation *> none;
    DenseSet<Value> noValues;
    // Measured before the softmaxes change (they erase values).
    Totals storeAll = totals(
        Planner(backward, Policy::Never, 0, none, noValues, /*exact=*/false)
            .run(),
        sizes);
    SoftmaxRewrites rewrites;
    if (policy != Policy::Never)
      rewriteSoftmaxes(backward, rewrites);
    const DenseSet<Operation *> &statistics = rewrites.statistics;
    substituteShapeOperands(backward);
    // Twice: the first plan's stores end the cones of the second.
    Plan first =
        Planner(backward, policy, options.balance, statistics, noValues,
                /*exact=*/false)
            .run();
    DenseSet<Value> likely(first.stored.begin(), first.stored.end());
    Plan plan = Planner(backward, policy, options.balance, statistics, likely,
                        /*exact=*/report != nullptr)
                    .run();
    if (report)
      printReport(*report, forward, options.policy, options.balance, sizes,
                  plan, storeAll);
    if (failed(split(forward, backward, plan, rewrites)))
      return failure();
  }
  return success();
}

void gnnc::gnn::buildTrainingPipeline(OpPassManager &pm,
                                      const GNNRematOptions &remat) {
  pm.addPass(createGNNAutodiff());
  pm.addPass(createGNNRemat(remat));
  buildFusionPipeline(pm);
}
