//===- Fusion.cpp - Gather-injective-scatter fusion -----------------------===//
//
// Part of gnnc.
//
// Every `gnn.scatter` reduces an edge tensor that was computed, edge by edge,
// from gathered vertex rows, edge attributes and dense values. This pass
// moves that whole per-edge computation into the body of one
// `gnn.aggregate`, which a backend runs as one loop over each vertex's edges
// without storing anything per edge:
//
//   - gathers become inputs (the gathered vertex tensor; the body sees the
//     row of the edge's end);
//   - row-local ops on edge tensors (elementwise maths, row reductions,
//     reshapes, matmuls with a dense matrix, dropout) are cloned into the
//     body, with dense row types;
//   - `edge_softmax` followed by a weighted sum (optionally with attention
//     dropout in between) becomes a `softmax_sum` reduction, computed online;
//     so does the hand-written form `exp(l) / gather(scatter_sum(exp(l)))`;
//   - aggregations over the same graph and edge direction that do not
//     depend on each other are merged into one multi-result op, so they
//     share one pass over the edges; the ops that only carry an
//     aggregation's result onwards are first moved down to their first
//     user, so that they do not stand between two such aggregations.
//
// A per-edge value that is not produced by such ops (an `edge_softmax`
// whose result feeds something other than a weighted sum, say) is left
// alone and enters the body as an edge input.
//
//===----------------------------------------------------------------------===//

#include "gnnc/Dialect/GNN/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/SetVector.h"

#include <limits>
#include <memory>
#include <optional>
#include <set>

namespace gnnc::gnn {
#define GEN_PASS_DEF_GNNFUSE
#include "gnnc/Dialect/GNN/Transforms/Passes.h.inc"
} // namespace gnnc::gnn

using namespace mlir;
using namespace gnnc::gnn;

namespace {

/// Ops computed row by row on edge tensors: they can run inside the body.
bool isRowLocal(Operation *op) {
  if (!op || op->getNumResults() != 1 || !isEdge(op->getResult(0)))
    return false;
  if (isa<UnaryOp, BinaryOp, ReduceOp, ReshapeOp, DropoutOp, SoftmaxOp,
          ConcatOp, TransposeOp>(op))
    return true;
  if (auto matmul = dyn_cast<MatmulOp>(op))
    return tensorOf(matmul.getRhs()).getDomain() == Domain::dense;
  return false;
}

/// What one scatter will fold, before it is built into an aggregate.
struct Reduction {
  Operation *root;              // the scatter being replaced
  DictionaryAttr attr;          // the reduction's entry
  SmallVector<Value, 2> yields; // per-edge values (edge tensors)
  /// Ops folded into the reduction itself (softmax, weighting, a
  /// hand-written normaliser): their locations join the fused op's.
  SmallVector<Operation *> folded;
};

/// Recognises `sum_e softmax(l)_e * m_e` in the two spellings, optionally
/// with dropout on the normalised weights. Fills `logits`, `values` and the
/// dropout parameters; returns false when the scatter is something else.
bool matchSoftmaxSum(ScatterOp scatter, Value &logits, Value &values,
                     std::optional<std::pair<double, int64_t>> &dropout,
                     SmallVectorImpl<Operation *> &folded) {
  if (scatter.getFn() != ReduceFn::sum)
    return false;
  auto mul = scatter.getInput().getDefiningOp<BinaryOp>();
  if (!mul || mul.getFn() != BinaryFn::mul || !mul->hasOneUse())
    return false;
  Domain by = tensorOf(scatter.getResult()).getDomain();
  for (int side = 0; side < 2; ++side) {
    Value weights = side ? mul.getRhs() : mul.getLhs();
    Value other = side ? mul.getLhs() : mul.getRhs();
    // The values must already have the result's rows: softmax_sum
    // broadcasts weights over values, not values over weights.
    if (!isEdge(weights) || !isEdge(other) ||
        tensorOf(other).getShape() != tensorOf(mul.getResult()).getShape())
      continue;
    Value w = weights;
    std::optional<std::pair<double, int64_t>> drop;
    if (auto d = w.getDefiningOp<DropoutOp>()) {
      if (!d->hasOneUse())
        continue;
      drop = {d.getP().convertToDouble(), d.getSeed()};
      w = d.getInput();
    }
    // softmax(l) as an op.
    if (auto sm = w.getDefiningOp<EdgeSoftmaxOp>()) {
      if (sm.getBy() != by || !sm->hasOneUse() ||
          sm.getGraph() != scatter.getGraph())
        continue;
      logits = sm.getInput();
      values = other;
      dropout = drop;
      folded.assign({mul.getOperation(), sm.getOperation()});
      if (Operation *d = weights.getDefiningOp<DropoutOp>())
        folded.push_back(d);
      return true;
    }
    // softmax(l) written out: exp(l) / gather(scatter_sum(exp(l))).
    auto div = w.getDefiningOp<BinaryOp>();
    if (!div || div.getFn() != BinaryFn::div || !div->hasOneUse())
      continue;
    auto exp = div.getLhs().getDefiningOp<UnaryOp>();
    auto gather = div.getRhs().getDefiningOp<GatherOp>();
    if (!exp || exp.getFn() != UnaryFn::exp || !gather ||
        !gather->hasOneUse() || gather.getGraph() != scatter.getGraph())
      continue;
    auto norm = gather.getInput().getDefiningOp<ScatterOp>();
    if (!norm || norm.getFn() != ReduceFn::sum ||
        norm.getGraph() != scatter.getGraph() ||
        norm.getInput() != exp.getResult() || !norm->hasOneUse() ||
        tensorOf(norm.getResult()).getDomain() != by ||
        tensorOf(gather.getInput()).getDomain() != by)
      continue;
    // exp(l) may have only these two users: the numerator and the sum.
    if (!llvm::all_of(exp->getUsers(), [&](Operation *user) {
          return user == div.getOperation() || user == norm.getOperation();
        }))
      continue;
    logits = exp.getInput();
    values = other;
    dropout = drop;
    folded.assign({mul.getOperation(), div.getOperation(), exp.getOperation(),
                   gather.getOperation(), norm.getOperation()});
    if (Operation *d = weights.getDefiningOp<DropoutOp>())
      folded.push_back(d);
    return true;
  }
  return false;
}

/// Builds one `gnn.aggregate` for `reductions`, all over the same graph and
/// grouping, at the position of the last root. Replaces the roots.
AggregateOp buildAggregate(OpBuilder &builder, Value graph, Domain by,
                           ArrayRef<Reduction> reductions) {
  MLIRContext *context = builder.getContext();
  // Collect inputs and the ops to clone, in program order.
  llvm::SetVector<Value> inputs;
  llvm::SetVector<Operation *> body;
  SmallVector<Value> worklist;
  for (const Reduction &r : reductions)
    worklist.append(r.yields.begin(), r.yields.end());
  SmallVector<Location> leafLocs; // gathers and splats read by the body
  std::function<void(Value)> visit = [&](Value v) {
    Operation *def = v.getDefiningOp();
    if (auto gather = dyn_cast_or_null<GatherOp>(def)) {
      if (gather.getGraph() == graph) {
        inputs.insert(gather.getInput());
        leafLocs.push_back(gather.getLoc());
        return;
      }
    }
    if (auto splat = dyn_cast_or_null<SplatOp>(def)) {
      inputs.insert(splat.getInput());
      leafLocs.push_back(splat.getLoc());
      return;
    }
    if (isa_and_nonnull<ConstantOp>(def)) {
      body.insert(def);
      return;
    }
    if (isRowLocal(def)) {
      for (Value operand : def->getOperands())
        visit(operand);
      body.insert(def);
      return;
    }
    // Dense values and edge tensors made elsewhere enter as inputs.
    inputs.insert(v);
  };
  for (Value v : worklist)
    visit(v);
  // Keep the cloned ops in their original order.
  SmallVector<Operation *> ordered(body.begin(), body.end());
  llvm::sort(ordered,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });

  Operation *last = reductions.front().root;
  for (const Reduction &r : reductions)
    if (last->isBeforeInBlock(r.root))
      last = r.root;
  builder.setInsertionPoint(last);

  SmallVector<Type> resultTypes;
  SmallVector<Attribute> attrs;
  SmallVector<Location> locs;
  for (const Reduction &r : reductions) {
    resultTypes.push_back(r.root->getResult(0).getType());
    attrs.push_back(r.attr);
    locs.push_back(r.root->getLoc());
  }
  // The fused op carries the locations of everything it replaced.
  for (Operation *op : ordered)
    locs.push_back(op->getLoc());
  for (const Reduction &r : reductions)
    for (Operation *op : r.folded)
      locs.push_back(op->getLoc());
  locs.append(leafLocs.begin(), leafLocs.end());
  auto aggregate = builder.create<AggregateOp>(
      FusedLoc::get(context, locs), resultTypes, graph, inputs.getArrayRef(),
      DomainAttr::get(context, by), builder.getArrayAttr(attrs));

  Block *block = builder.createBlock(&aggregate.getBody());
  IRMapping mapping;
  for (Value input : inputs) {
    DomainTensorType row = tensorOf(input).withDomain(Domain::dense);
    Value arg = block->addArgument(row, input.getLoc());
    mapping.map(input, arg);
  }
  std::function<Value(Value)> lookup = [&](Value v) -> Value {
    if (Value mapped = mapping.lookupOrNull(v))
      return mapped;
    Operation *def = v.getDefiningOp();
    if (auto gather = dyn_cast_or_null<GatherOp>(def))
      return mapping.lookup(gather.getInput());
    if (auto splat = dyn_cast_or_null<SplatOp>(def))
      return mapping.lookup(splat.getInput());
    return nullptr;
  };
  for (Operation *op : ordered) {
    Operation *clone = op->clone();
    for (OpOperand &operand : clone->getOpOperands())
      if (Value mapped = lookup(operand.get()))
        operand.set(mapped);
    for (Value result : clone->getResults())
      if (auto t = dyn_cast<DomainTensorType>(result.getType()))
        result.setType(t.withDomain(Domain::dense));
    block->push_back(clone);
    mapping.map(op->getResults(), clone->getResults());
  }
  SmallVector<Value> yields;
  for (const Reduction &r : reductions)
    for (Value v : r.yields)
      yields.push_back(lookup(v));
  builder.setInsertionPointToEnd(block);
  builder.create<YieldOp>(aggregate.getLoc(), yields);

  for (auto [i, r] : llvm::enumerate(reductions))
    r.root->getResult(0).replaceAllUsesWith(aggregate.getResult(i));
  return aggregate;
}

/// Erases ops without uses, so that the per-edge chains the aggregates
/// replaced disappear. Users come after their operands, so one pass from the
/// end erases a whole dead chain; the pass repeats until nothing changes.
void eraseDeadOps(func::FuncOp func) {
  for (Block &block : func.getBody()) {
    bool changed = true;
    while (changed) {
      changed = false;
      for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block))) {
        if (isa<func::ReturnOp>(op) || op.getNumResults() == 0 ||
            !op.use_empty() || !isa<GNNDialect>(op.getDialect()))
          continue;
        op.erase();
        changed = true;
      }
    }
  }
}

/// Moves every op that reads an aggregate's results, directly or through
/// other such ops, down to just before its first user when an aggregate lies
/// in between (aggregates themselves stay put).
/// A chain that only carries an aggregation's result to the end of the
/// function (a collect, a bias, an activation) then no longer sits between
/// that aggregation and the next one over the same edges: "every user of a
/// comes after b" holds whenever b does not depend on a, and the Merger can
/// give both one pass. The ops are pure, and each still comes after its
/// operands and before its users, so the function computes the same.
void sinkAggregateUsers(Block &block) {
  // The ops in their original order, and how many aggregates precede each.
  SmallVector<Operation *> ops;
  DenseMap<Operation *, unsigned> index;
  SmallVector<unsigned> aggregatesBefore;
  unsigned aggregates = 0;
  for (Operation &op : block) {
    index[&op] = ops.size();
    ops.push_back(&op);
    aggregatesBefore.push_back(aggregates);
    aggregates += isa<AggregateOp>(op);
  }
  DenseSet<Operation *> carried;
  for (Operation *op : ops) {
    if (isa<AggregateOp>(op) || op->getNumResults() == 0 ||
        op->getNumRegions() != 0 || !isMemoryEffectFree(op))
      continue;
    for (Value v : op->getOperands()) {
      Operation *def = v.getDefiningOp();
      if (def && (isa<AggregateOp>(def) || carried.contains(def))) {
        carried.insert(op);
        break;
      }
    }
  }
  // From the end, so that a whole chain follows its last op down: an op
  // lands just before the op its first user lands before (itself when it
  // stays), and moves only when an aggregate lies in between; elsewhere the
  // order stays as written. Linear in the block's size.
  unsigned n = ops.size();
  SmallVector<unsigned> landing(n);
  SmallVector<bool> moved(n, false);
  for (unsigned i = n; i-- > 0;) {
    landing[i] = i;
    if (!carried.contains(ops[i]))
      continue;
    unsigned first = n;
    for (Operation *user : ops[i]->getUsers())
      if (Operation *top = block.findAncestorOpInBlock(*user))
        first = std::min(first, landing[index.lookup(top)]);
    if (first < n && aggregatesBefore[first] > aggregatesBefore[i]) {
      landing[i] = first;
      moved[i] = true;
    }
  }
  if (llvm::none_of(moved, [](bool m) { return m; }))
    return;
  // The new order: the ops that move, in their original order, just before
  // the op they land at. Each still follows its operands and precedes its
  // users.
  std::vector<SmallVector<Operation *, 2>> before(n);
  for (unsigned i = 0; i < n; ++i)
    if (moved[i])
      before[landing[i]].push_back(ops[i]);
  for (unsigned i = 0; i < n; ++i) {
    for (Operation *op : before[i])
      op->moveBefore(&block, block.end());
    if (!moved[i])
      ops[i]->moveBefore(&block, block.end());
  }
}

/// Builds the merge of `a` and `b` (a before b): inputs of both, bodies one
/// after the other, placed at `b` when `atB`, else at `a`. Replaces and
/// erases both.
AggregateOp mergePair(OpBuilder &builder, AggregateOp a, AggregateOp b,
                      bool atB) {
  builder.setInsertionPoint(atB ? b.getOperation() : a.getOperation());
  llvm::SetVector<Value> inputs;
  inputs.insert(a.getInputs().begin(), a.getInputs().end());
  inputs.insert(b.getInputs().begin(), b.getInputs().end());
  SmallVector<Type> types(a.getResultTypes());
  types.append(b.getResultTypes().begin(), b.getResultTypes().end());
  SmallVector<Attribute> reductions(a.getReductions().begin(),
                                    a.getReductions().end());
  reductions.append(b.getReductions().begin(), b.getReductions().end());
  auto merged = builder.create<AggregateOp>(
      FusedLoc::get(builder.getContext(), {a.getLoc(), b.getLoc()}), types,
      a.getGraph(), inputs.getArrayRef(), a.getByAttr(),
      builder.getArrayAttr(reductions));
  Block *block = builder.createBlock(&merged.getBody());
  DenseMap<Value, Value> argOf;
  for (Value input : inputs)
    argOf[input] = block->addArgument(tensorOf(input).withDomain(Domain::dense),
                                      input.getLoc());
  SmallVector<Value> yields;
  for (AggregateOp part : {a, b}) {
    IRMapping mapping;
    for (auto [input, arg] :
         llvm::zip(part.getInputs(), part.getBlock().getArguments()))
      mapping.map(arg, argOf[input]);
    builder.setInsertionPointToEnd(block);
    for (Operation &op : part.getBlock().without_terminator())
      builder.clone(op, mapping);
    for (Value v : cast<YieldOp>(part.getBlock().getTerminator()).getValues())
      yields.push_back(mapping.lookup(v));
  }
  builder.setInsertionPointToEnd(block);
  builder.create<YieldOp>(merged.getLoc(), yields);
  unsigned n = a.getNumResults();
  for (unsigned k = 0; k < n; ++k)
    a.getResult(k).replaceAllUsesWith(merged.getResult(k));
  for (unsigned k = 0; k < b.getNumResults(); ++k)
    b.getResult(k).replaceAllUsesWith(merged.getResult(n + k));
  a->erase();
  b->erase();
  return merged;
}

/// A minimum over an array, with the first index at or after `from` whose
/// value is below a limit.
class MinTree {
public:
  explicit MinTree(ArrayRef<int64_t> values) {
    while (size < values.size())
      size *= 2;
    tree.assign(2 * size, kNone);
    for (auto [i, v] : llvm::enumerate(values))
      tree[size + i] = v;
    for (size_t i = size - 1; i > 0; --i)
      tree[i] = std::min(tree[2 * i], tree[2 * i + 1]);
  }

  void set(size_t i, int64_t value) {
    i += size;
    tree[i] = value;
    for (i /= 2; i > 0; i /= 2)
      tree[i] = std::min(tree[2 * i], tree[2 * i + 1]);
  }

  /// The first index >= `from` whose value is < `limit`, or npos.
  size_t firstBelow(size_t from, int64_t limit) const {
    return find(1, 0, size, from, limit);
  }

  static constexpr int64_t kNone = std::numeric_limits<int64_t>::max();
  static constexpr size_t npos = std::numeric_limits<size_t>::max();

private:
  size_t find(size_t node, size_t lo, size_t hi, size_t from,
              int64_t limit) const {
    if (hi <= from || tree[node] >= limit)
      return npos;
    if (hi - lo == 1)
      return lo;
    size_t mid = (lo + hi) / 2;
    size_t left = find(2 * node, lo, mid, from, limit);
    return left != npos ? left : find(2 * node + 1, mid, hi, from, limit);
  }

  size_t size = 1;
  std::vector<int64_t> tree;
};

/// Merges aggregates over the same graph and grouping that do not depend on
/// each other into one, placed at the later one, or at the earlier one when
/// the later one's inputs are all ready there. Repeatedly merges the first
/// such pair (a, b) in program order (by a, then by b) until none is left.
///
/// Two aggregates a before b can share a pass when every user of a comes
/// after b (then b cannot read a, even indirectly: the merge goes at b) or
/// when every operand of b is defined before a (the merge goes at a). With
/// the positions of the block's ops, the first b for a given a is the next
/// aggregate of its group if that one is before a's first user, else the
/// first of the group whose last operand is defined before a: a search in a
/// tree of minima over the group. A merge changes the answer only for a, for
/// the aggregates after it, and for those whose results a or b read (their
/// users moved); the scan goes on from there instead of from the start.
class Merger {
public:
  Merger(func::FuncOp func, OpBuilder &builder) : builder(builder) {
    Block &block = func.getBody().front();
    int64_t index = 0;
    for (Operation &op : block) {
      position[&op] = index++;
      if (auto aggregate = dyn_cast<AggregateOp>(op)) {
        slotOf[aggregate] = slots.size();
        slots.push_back(aggregate);
      }
    }
    DenseMap<std::pair<Value, unsigned>, unsigned> groupIds;
    std::vector<std::vector<int64_t>> lastDefs;
    for (auto [slot, aggregate] : llvm::enumerate(slots)) {
      std::pair<Value, unsigned> key{aggregate.getGraph(),
                                     static_cast<unsigned>(aggregate.getBy())};
      auto [it, inserted] = groupIds.try_emplace(key, groups.size());
      if (inserted) {
        groups.emplace_back();
        lastDefs.emplace_back();
      }
      groupOf.push_back(it->second);
      rank.push_back(groups[it->second].slots.size());
      groups[it->second].slots.push_back(slot);
      lastDefs[it->second].push_back(lastDef(aggregate));
    }
    for (auto [group, values] : llvm::zip(groups, lastDefs))
      group.tree = std::make_unique<MinTree>(values);
  }

  void run() {
    size_t cursor = 0;
    while (true) {
      // The next aggregate whose pairs may have changed.
      size_t slot;
      if (!pending.empty() && *pending.begin() < cursor) {
        slot = *pending.begin();
        pending.erase(pending.begin());
      } else if (cursor < slots.size()) {
        slot = cursor++;
      } else {
        return;
      }
      AggregateOp a = slots[slot];
      if (!a)
        continue;
      std::optional<size_t> partner = partnerOf(slot);
      if (!partner)
        continue;
      AggregateOp b = slots[*partner];
      bool atB = position.lookup(b) < firstUser(a);
      // The aggregates whose results a or b read: their users move.
      SmallVector<AggregateOp> providers;
      for (AggregateOp part : {a, b})
        for (Value v : part->getOperands())
          if (auto def = v.getDefiningOp<AggregateOp>())
            providers.push_back(def);
      size_t kept = atB ? *partner : slot;
      size_t gone = atB ? slot : *partner;
      int64_t at = position.lookup(atB ? b : a);
      position.erase(a);
      position.erase(b);
      slotOf.erase(a);
      slotOf.erase(b);
      AggregateOp merged = mergePair(builder, a, b, atB);
      position[merged] = at;
      slotOf[merged] = kept;
      slots[kept] = merged;
      slots[gone] = nullptr;
      Group &group = groups[groupOf[slot]];
      group.tree->set(rank[gone], MinTree::kNone);
      group.tree->set(rank[kept], lastDef(merged));
      // Aggregates that read the merged results: their operands moved.
      for (Operation *user : merged->getUsers())
        if (auto reader = dyn_cast<AggregateOp>(user))
          if (auto it = slotOf.find(reader); it != slotOf.end())
            groups[groupOf[it->second]].tree->set(rank[it->second],
                                                  lastDef(reader));
      for (AggregateOp provider : providers)
        if (auto it = slotOf.find(provider); it != slotOf.end())
          pending.insert(it->second);
      cursor = std::min(cursor, slot);
    }
  }

private:
  struct Group {
    std::vector<size_t> slots; // in program order
    /// Per member, the position of its last operand's definition (-1:
    /// arguments only); kNone once merged away.
    std::unique_ptr<MinTree> tree;
  };

  int64_t lastDef(AggregateOp op) const {
    int64_t last = -1;
    for (Value v : op->getOperands())
      if (Operation *def = v.getDefiningOp())
        last = std::max(last, position.lookup(def));
    return last;
  }

  int64_t firstUser(AggregateOp op) const {
    int64_t first = MinTree::kNone;
    for (Operation *user : op->getUsers())
      first = std::min(first, position.lookup(user));
    return first;
  }

  /// The first aggregate after `slot` that it can merge with.
  std::optional<size_t> partnerOf(size_t slot) const {
    AggregateOp a = slots[slot];
    const Group &group = groups[groupOf[slot]];
    size_t next = group.tree->firstBelow(rank[slot] + 1, MinTree::kNone);
    if (next == MinTree::npos || next >= group.slots.size())
      return std::nullopt;
    if (position.lookup(slots[group.slots[next]]) < firstUser(a))
      return group.slots[next];
    size_t ready = group.tree->firstBelow(rank[slot] + 1, position.lookup(a));
    if (ready == MinTree::npos || ready >= group.slots.size())
      return std::nullopt;
    return group.slots[ready];
  }

  OpBuilder &builder;
  DenseMap<Operation *, int64_t> position;
  std::vector<AggregateOp> slots; // in program order; null once merged away
  DenseMap<Operation *, size_t> slotOf;
  std::vector<unsigned> groupOf; // per slot
  std::vector<size_t> rank;      // per slot, its index in its group
  std::vector<Group> groups;
  std::set<size_t> pending; // slots before the cursor to look at again
};

} // namespace

void gnnc::gnn::buildFusionPipeline(mlir::OpPassManager &pm) {
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
  pm.addPass(createGNNFuse());
  pm.addPass(mlir::createCanonicalizerPass());
  pm.addPass(mlir::createCSEPass());
}

namespace {
struct FusePass : public gnnc::gnn::impl::GNNFuseBase<FusePass> {
  void runOnOperation() override {
    getOperation().walk([&](func::FuncOp func) { fuse(func); });
  }

  void fuse(func::FuncOp func) {
    OpBuilder builder(func.getContext());
    SmallVector<ScatterOp> scatters;
    func.walk([&](ScatterOp op) { scatters.push_back(op); });
    // Inner normalising sums of hand-written softmaxes are consumed by the
    // outer match; skip them.
    DenseSet<Operation *> consumed;
    SmallVector<std::pair<ScatterOp, Reduction>> plans;
    for (ScatterOp scatter : scatters) {
      Reduction r;
      r.root = scatter;
      Value logits, values;
      std::optional<std::pair<double, int64_t>> dropout;
      if (matchSoftmaxSum(scatter, logits, values, dropout, r.folded)) {
        SmallVector<NamedAttribute> entries{
            builder.getNamedAttr("kind", builder.getStringAttr("softmax_sum"))};
        if (dropout && dropout->first > 0) {
          entries.push_back(builder.getNamedAttr(
              "dropout", builder.getF64FloatAttr(dropout->first)));
          entries.push_back(builder.getNamedAttr(
              "seed", builder.getI64IntegerAttr(dropout->second)));
        }
        r.attr = builder.getDictionaryAttr(entries);
        r.yields = {logits, values};
        // A hand-written normaliser is part of this reduction.
        for (Operation *op : r.folded)
          if (isa<ScatterOp>(op))
            consumed.insert(op);
      } else {
        StringRef kind = stringifyReduceFn(scatter.getFn());
        r.attr = builder.getDictionaryAttr(
            {builder.getNamedAttr("kind", builder.getStringAttr(kind))});
        r.yields = {scatter.getInput()};
      }
      plans.push_back({scatter, r});
    }
    for (auto &[scatter, r] : plans) {
      if (consumed.contains(scatter.getOperation()))
        continue;
      buildAggregate(builder, scatter.getGraph(),
                     tensorOf(scatter.getResult()).getDomain(), {r});
    }
    // Replaced scatters (and hand-written normalisers) are now dead.
    eraseDeadOps(func);
    if (func.getBody().hasOneBlock()) {
      sinkAggregateUsers(func.getBody().front());
      Merger(func, builder).run();
    }
    eraseDeadOps(func);
  }
};

} // namespace
