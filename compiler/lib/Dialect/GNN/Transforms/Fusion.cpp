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
//     share one pass over the edges.
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
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/SetVector.h"

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

/// Erases ops without uses, repeatedly, so that the per-edge chains the
/// aggregates replaced disappear.
void eraseDeadOps(func::FuncOp func) {
  bool changed = true;
  while (changed) {
    changed = false;
    SmallVector<Operation *> dead;
    func.walk([&](Operation *op) {
      if (op->getParentOp() != func.getOperation() || isa<func::ReturnOp>(op) ||
          op->getNumResults() == 0)
        return;
      if (op->use_empty() && isa<GNNDialect>(op->getDialect()))
        dead.push_back(op);
    });
    for (Operation *op : dead) {
      op->erase();
      changed = true;
    }
  }
}

/// True when `op` uses, directly or through other ops of the block, a
/// result of `source`.
bool dependsOn(Operation *op, Operation *source) {
  SmallVector<Operation *> worklist{op};
  DenseSet<Operation *> seen;
  while (!worklist.empty()) {
    Operation *current = worklist.pop_back_val();
    if (!seen.insert(current).second)
      continue;
    for (Value operand : current->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (!def)
        continue;
      if (def == source)
        return true;
      if (def->getBlock() == source->getBlock() && source->isBeforeInBlock(def))
        worklist.push_back(def);
    }
    // Values used inside regions (none: aggregate bodies are isolated).
  }
  return false;
}

/// Merges aggregates over the same graph and grouping that do not depend on
/// each other into one, placed at the later one (or at the earlier one when
/// the later one's inputs are all ready there).
bool mergeOnce(func::FuncOp func, OpBuilder &builder) {
  SmallVector<AggregateOp> aggregates;
  func.walk([&](AggregateOp op) {
    if (op->getParentOp() == func.getOperation())
      aggregates.push_back(op);
  });
  for (size_t i = 0; i < aggregates.size(); ++i) {
    for (size_t j = i + 1; j < aggregates.size(); ++j) {
      AggregateOp a = aggregates[i], b = aggregates[j];
      if (a.getGraph() != b.getGraph() || a.getBy() != b.getBy())
        continue;
      if (dependsOn(b, a))
        continue;
      // a's results are used only after b.
      bool usersAfter = llvm::all_of(a->getUsers(), [&](Operation *user) {
        return b->isBeforeInBlock(user);
      });
      // Or b can move up to a: its operands are all there before a.
      bool operandsBefore = llvm::all_of(b->getOperands(), [&](Value v) {
        Operation *def = v.getDefiningOp();
        return !def || def->isBeforeInBlock(a);
      });
      if (!usersAfter && !operandsBefore)
        continue;
      // Build the merged op: inputs of both, bodies one after the other.
      builder.setInsertionPoint(usersAfter ? b.getOperation()
                                           : a.getOperation());
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
        argOf[input] = block->addArgument(
            tensorOf(input).withDomain(Domain::dense), input.getLoc());
      SmallVector<Value> yields;
      for (AggregateOp part : {a, b}) {
        IRMapping mapping;
        for (auto [input, arg] :
             llvm::zip(part.getInputs(), part.getBlock().getArguments()))
          mapping.map(arg, argOf[input]);
        builder.setInsertionPointToEnd(block);
        for (Operation &op : part.getBlock().without_terminator())
          builder.clone(op, mapping);
        for (Value v :
             cast<YieldOp>(part.getBlock().getTerminator()).getValues())
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
      return true;
    }
  }
  return false;
}

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
    while (mergeOnce(func, builder))
      ;
    eraseDeadOps(func);
  }
};

} // namespace
