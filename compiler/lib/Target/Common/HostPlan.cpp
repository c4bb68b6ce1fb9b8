//===- HostPlan.cpp - Host decisions recorded in the kernel IR ------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnnc/Target/HostPlan.h"

#include "gnnc/Dialect/GNNK/IR/GNNK.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringMap.h"

#include <algorithm>
#include <functional>
#include <set>

using namespace mlir;
using namespace gnnc;
using namespace gnnc::target;
using gnn::Domain;
using gnn::DomainTensorType;

const HostTraits &gnnc::target::cppHostTraits() {
  static const HostTraits traits{"cpp",
                                 /*hostFusions=*/true,
                                 /*constantsInWorkspace=*/false,
                                 /*optionalInputGrads=*/true,
                                 /*readoutScratch=*/true,
                                 /*reduceScratch=*/false,
                                 /*gatherDots=*/true,
                                 /*dropoutMatmuls=*/true};
  return traits;
}

const HostTraits &gnnc::target::cudaHostTraits() {
  static const HostTraits traits{"cuda",
                                 /*hostFusions=*/true,
                                 /*constantsInWorkspace=*/true,
                                 /*optionalInputGrads=*/true,
                                 /*readoutScratch=*/false,
                                 /*reduceScratch=*/true,
                                 /*gatherDots=*/false,
                                 /*dropoutMatmuls=*/false};
  return traits;
}

bool gnnc::target::isHostFunction(func::FuncOp func) {
  return !func.isExternal() && gnnk::getNumKernelOutputs(func) < 0;
}

//===----------------------------------------------------------------------===//
// Host fusions
//===----------------------------------------------------------------------===//

gnn::BinaryOp gnnc::target::addedProduct(gnn::BinaryOp add) {
  for (Value v : {add.getRhs(), add.getLhs()}) {
    auto m = v.getDefiningOp<gnn::BinaryOp>();
    if (m && m.getFn() == gnn::BinaryFn::mul && m->hasOneUse() &&
        add.getLhs() != add.getRhs() &&
        (!m->hasAttr(kFusionGroupAttr) ||
         m->getAttr(kFusionGroupAttr) == add->getAttr(kFusionGroupAttr)))
      return m;
  }
  return nullptr;
}

gnn::DropoutOp gnnc::target::droppedLhs(gnn::MatmulOp m) {
  Value lhs = m.getLhs();
  if (lhs == m.getRhs() || m.getRhs().getDefiningOp<gnn::TransposeOp>())
    return nullptr;
  if (auto t = lhs.getDefiningOp<gnn::TransposeOp>()) {
    if (!t->hasOneUse())
      return nullptr;
    lhs = t.getInput();
  }
  auto d = lhs.getDefiningOp<gnn::DropoutOp>();
  return d && d->hasOneUse() ? d : nullptr;
}

void gnnc::target::planHostFusions(func::FuncOp func) {
  Block &body = func.getBody().front();
  for (Operation &op : body) {
    op.removeAttr(kHostFusionAttr);
    op.removeAttr(kFusionGroupAttr);
  }
  MLIRContext *ctx = func.getContext();
  Builder b(ctx);
  int64_t count = 0;
  // Transposes of a matrix that only matmuls read: the matmul reads the
  // input transposed in place (cblas_sgemm's CblasTrans).
  for (Operation &op : body) {
    auto t = dyn_cast<gnn::TransposeOp>(op);
    if (!t || gnn::tensorOf(t.getInput()).isVertexOrEdge() ||
        gnn::tensorOf(t.getInput()).getShape().size() != 2 ||
        t.getResult().use_empty())
      continue;
    if (llvm::all_of(t.getResult().getUsers(), [](Operation *user) {
          return isa<gnn::MatmulOp>(user);
        })) {
      op.setAttr(kHostFusionAttr, b.getStringAttr("transposed_read"));
      ++count;
    }
  }
  // Marks `root` as a fusion of `kind` that absorbs `members`.
  int64_t group = 0;
  auto fuse = [&](Operation *root, StringRef kind,
                  ArrayRef<Operation *> members) {
    IntegerAttr id = b.getI64IntegerAttr(group++);
    root->setAttr(kHostFusionAttr, b.getStringAttr(kind));
    root->setAttr(kFusionGroupAttr, id);
    for (Operation *member : members)
      member->setAttr(kFusionGroupAttr, id);
    ++count;
  };
  // `reduce sum` of a whole edge row of `mul(gather(x), gather(y))` (the
  // gradient of an edge weight): one pass over the edges that gathers both
  // rows; the gathers and the product print nothing.
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
    auto x = m.getLhs().getDefiningOp<gnn::GatherOp>();
    auto y = m.getRhs().getDefiningOp<gnn::GatherOp>();
    if (!x || !y || x == y || !x->hasOneUse() || !y->hasOneUse() ||
        x.getGraph() != y.getGraph() ||
        x.getResult().getType() != m.getResult().getType() ||
        y.getResult().getType() != m.getResult().getType())
      continue;
    fuse(&op, "gather_dot", {m, x, y});
  }
  // Any other `reduce sum` of a product that nothing else reads (a row dot
  // such as GAT's `sum(h * a_src, -1)`, a parameter's gradient summed over
  // the vertices): one pass without the product tensor (rt::mulReduceSum).
  for (Operation &op : body) {
    auto r = dyn_cast<gnn::ReduceOp>(op);
    if (!r || r.getFn() != gnn::ReduceFn::sum || op.hasAttr(kHostFusionAttr))
      continue;
    auto m = r.getInput().getDefiningOp<gnn::BinaryOp>();
    if (!m || m.getFn() != gnn::BinaryFn::mul || !m->hasOneUse() ||
        m->hasAttr(kFusionGroupAttr))
      continue;
    fuse(&op, "mul_reduce", {m});
  }
  // A dropout of an input feature matrix that only a matmul reads: the
  // forward's `dropout(x) @ W`, or the weight gradient's
  // `transpose(dropout(x)) @ dy` (the backward recomputes the dropout). The
  // product drops the elements as it reads them and skips x's zeros,
  // without the dropped tensor (rt::dropoutMatmul,
  // rt::dropoutTransposeMatmul). Only for a function argument at least
  // kWideFeatures wide: input features, such as bag-of-words rows, which
  // are mostly zeros (the runtime falls back to cblas_sgemm on dense tiles,
  // but a dense intermediate gains nothing).
  constexpr int64_t kWideFeatures = 256;
  for (Operation &op : body) {
    auto m = dyn_cast<gnn::MatmulOp>(op);
    gnn::DropoutOp d = m ? droppedLhs(m) : nullptr;
    if (!d || d->hasAttr(kFusionGroupAttr))
      continue;
    DomainTensorType x = gnn::tensorOf(d.getInput());
    if (!isa<BlockArgument>(d.getInput()) || x.isVertexOrEdge() ||
        x.getShape().size() != 2 || ShapedType::isDynamic(x.getShape()[1]) ||
        x.getShape()[1] < kWideFeatures)
      continue;
    fuse(&op, "dropout_matmul", {d});
  }
  // An add of a product that nothing else reads (a gradient accumulated
  // from the terms of a chain rule): `x + y * z` in one pass (rt::addMul).
  for (Operation &op : body) {
    auto add = dyn_cast<gnn::BinaryOp>(op);
    if (!add || add.getFn() != gnn::BinaryFn::add ||
        op.hasAttr(kFusionGroupAttr))
      continue;
    if (gnn::BinaryOp m = addedProduct(add))
      fuse(&op, "add_mul", {m});
  }
  // Broadcasts that only elementwise ops read (the derivative of a
  // reduction spreading a gradient back over the reduced axis): the ops
  // broadcast the input themselves, as they broadcast any operand.
  for (Operation &op : body) {
    auto bl = dyn_cast<gnn::BroadcastLikeOp>(op);
    if (!bl || bl.getResult().use_empty() ||
        !llvm::all_of(bl.getResult().getUsers(),
                      [](Operation *user) { return isa<gnn::BinaryOp>(user); }))
      continue;
    op.setAttr(kHostFusionAttr, b.getStringAttr("broadcast_read"));
    ++count;
  }
  func->setAttr(kHostFusionsAttr, b.getI64IntegerAttr(count));
}

LogicalResult gnnc::target::readHostFusions(func::FuncOp func,
                                            HostFusions &fusions,
                                            const HostTraits &traits) {
  if (!func->getAttrOfType<IntegerAttr>(kHostFusionsAttr))
    return func.emitError("host function has no '")
           << kHostFusionsAttr << "' (run gnnk-plan-host-fusion)";
  Block &body = func.getBody().front();
  llvm::DenseMap<int64_t, Operation *> roots;
  for (Operation &op : body) {
    auto kind = op.getAttr(kHostFusionAttr);
    if (!kind)
      continue;
    auto name = dyn_cast<StringAttr>(kind);
    StringRef fusion = name ? name.getValue() : "";
    auto group = op.getAttrOfType<IntegerAttr>(kFusionGroupAttr);
    auto onlyUsers = [&](auto isUser) {
      return llvm::all_of(op.getResult(0).getUsers(), isUser);
    };
    auto inGroup = [&](Operation *o) {
      return o && o->getAttr(kFusionGroupAttr) == group;
    };
    auto r = dyn_cast<gnn::ReduceOp>(op);
    auto m = r ? r.getInput().getDefiningOp<gnn::BinaryOp>() : nullptr;
    auto x = m ? m.getLhs().getDefiningOp<gnn::GatherOp>() : nullptr;
    auto y = m ? m.getRhs().getDefiningOp<gnn::GatherOp>() : nullptr;
    bool ok = false;
    if (fusion == "transposed_read") {
      ok = !group && isa<gnn::TransposeOp>(op) &&
           onlyUsers([](Operation *u) { return isa<gnn::MatmulOp>(u); });
      if (ok)
        fusions.absorbedTransposes.insert(&op);
    } else if (fusion == "broadcast_read") {
      ok = !group && isa<gnn::BroadcastLikeOp>(op) &&
           onlyUsers([](Operation *u) { return isa<gnn::BinaryOp>(u); });
      if (ok)
        fusions.absorbedBroadcasts.insert(&op);
    } else if (fusion == "mul_reduce") {
      ok = group && m && r.getFn() == gnn::ReduceFn::sum &&
           m.getFn() == gnn::BinaryFn::mul && m->hasOneUse() && inGroup(m) &&
           roots.try_emplace(group.getInt(), &op).second;
      if (ok) {
        fusions.mulReduces[&op] = m;
        fusions.fusedOps.insert(m);
      }
    } else if (fusion == "add_mul") {
      auto add = dyn_cast<gnn::BinaryOp>(op);
      gnn::BinaryOp product = add && add.getFn() == gnn::BinaryFn::add
                                  ? addedProduct(add)
                                  : gnn::BinaryOp();
      ok = group && product && inGroup(product) &&
           roots.try_emplace(group.getInt(), &op).second;
      if (ok) {
        fusions.addMuls[&op] = product;
        fusions.fusedOps.insert(product);
      }
    } else if (fusion == "gather_dot") {
      // Checked for every printer; printed fused where it can.
      ok = group && x && y && inGroup(m) && inGroup(x) && inGroup(y) &&
           roots.try_emplace(group.getInt(), &op).second;
      if (ok && traits.gatherDots) {
        fusions.gatherDots[&op] = {x, y};
        fusions.fusedOps.insert(m);
        fusions.fusedOps.insert(x);
        fusions.fusedOps.insert(y);
      }
    } else if (fusion == "dropout_matmul") {
      // The printers read the dropout's input as a [rows, k] matrix, and a
      // transpose between them must be one the matmul reads in place.
      auto mm = dyn_cast<gnn::MatmulOp>(op);
      gnn::DropoutOp d = mm ? droppedLhs(mm) : nullptr;
      auto t = mm ? mm.getLhs().getDefiningOp<gnn::TransposeOp>() : nullptr;
      DomainTensorType x;
      if (d)
        x = gnn::tensorOf(d.getInput());
      ok = group && d && inGroup(d) && !x.isVertexOrEdge() &&
           x.getShape().size() == 2 &&
           (!t || fusions.absorbedTransposes.count(t)) &&
           roots.try_emplace(group.getInt(), &op).second;
      if (ok && traits.dropoutMatmuls) {
        fusions.dropoutMatmuls[&op] = d;
        fusions.fusedOps.insert(d);
      }
    }
    if (!ok)
      return op.emitError("malformed host fusion '") << kind << "'";
  }
  for (Operation &op : body)
    if (auto group = op.getAttrOfType<IntegerAttr>(kFusionGroupAttr);
        group && !roots.count(group.getInt()))
      return op.emitError("fusion group ") << group.getInt() << " has no root";
  return success();
}

//===----------------------------------------------------------------------===//
// Storage and liveness of host values
//===----------------------------------------------------------------------===//

llvm::SmallBitVector gnnc::target::optionalResults(func::FuncOp func,
                                                   const HostTraits &traits) {
  llvm::SmallBitVector optional(func.getNumResults());
  if (!traits.optionalInputGrads || !func->hasAttr(gnn::kBackwardOfAttrName) ||
      func->hasAttr(gnn::kTrainOfAttrName))
    return optional;
  for (unsigned r = 0; r < func.getNumResults(); ++r) {
    auto gradOf = func.getResultAttrOfType<StringAttr>(r, gnn::kGradOfAttrName);
    if (!gradOf)
      continue;
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      auto name = func.getArgAttrOfType<StringAttr>(i, gnn::kNameAttrName);
      bool input = !isa<gnn::GraphType>(func.getArgument(i).getType()) &&
                   !func.getArgAttr(i, gnn::kParamAttrName) &&
                   !func.getArgAttr(i, gnn::kSavedAttrName);
      if (input && name && name == gradOf)
        optional.set(r);
    }
  }
  return optional;
}

bool HostStorage::isView(Operation *op) const {
  return isa<gnn::AttachOp, gnn::CollectOp, gnn::ReshapeOp>(op) ||
         isAbsorbed(fusions, op);
}

bool HostStorage::isUsed(Value v) const {
  return llvm::any_of(v.getUses(), [&](OpOperand &use) {
    Operation *user = use.getOwner();
    if (isa<gnn::BroadcastLikeOp>(user) && use.getOperandNumber() == 1)
      return false;
    return live.count(user) > 0;
  });
}

Value HostStorage::bufferRoot(Value v) const {
  while (Operation *def = v.getDefiningOp()) {
    if (!isView(def))
      break;
    v = viewedValue(def);
  }
  return v;
}

HostStorage::HostStorage(
    func::FuncOp func, const FunctionShapes &shapes, const HostFusions &fusions,
    const llvm::SmallBitVector &optional,
    const std::function<llvm::SmallBitVector(StringRef)> &calleeOptional)
    : fusions(fusions) {
  Block &body = func.getBody().front();
  // Live: the return, what writes memory (a buffer update) and what they
  // read.
  for (Operation &op : llvm::reverse(body))
    if (isa<func::ReturnOp, gnn::UpdateBatchStatsOp>(op) ||
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
    if (auto dot = fusions.gatherDots.find(&op);
        dot != fusions.gatherDots.end()) {
      gnn::GatherOp x = dot->second.first, y = dot->second.second;
      operands.push_back(x.getInput());
      operands.push_back(y.getInput());
    }
    // A mul_reduce and an add_mul read the product's operands.
    if (auto m = fusions.mulReduces.find(&op); m != fusions.mulReduces.end())
      operands.append(m->second->operand_begin(), m->second->operand_end());
    if (auto m = fusions.addMuls.find(&op); m != fusions.addMuls.end())
      operands.append(m->second->operand_begin(), m->second->operand_end());
    // A dropout-matmul reads the dropout's input.
    if (auto d = fusions.dropoutMatmuls.find(&op);
        d != fusions.dropoutMatmuls.end())
      operands.push_back(gnn::DropoutOp(d->second).getInput());
    for (Value operand : operands) {
      unsigned &last = lastUse[bufferRoot(operand)];
      last = std::max(last, position[&op]);
    }
  }
  // What each value and op contributes to (for optional results).
  unsigned numResults = func.getNumResults();
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
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    Value root = bufferRoot(v);
    Operation *def = root.getDefiningOp();
    if (!def || isa<gnn::ConstantOp>(def) || placed.count(root))
      continue;
    // An optional output may be null: only what runs just for it (or a
    // call that accepts null there too) may write into it.
    if (optional.test(i)) {
      llvm::SmallBitVector only(numResults);
      only.set(i);
      bool passesNull = false;
      if (auto call = dyn_cast<func::CallOp>(def)) {
        llvm::SmallBitVector calleeOpt = calleeOptional(call.getCallee());
        unsigned k = cast<OpResult>(root).getResultNumber();
        passesNull = k < calleeOpt.size() && calleeOpt.test(k) &&
                     valueFeeds[root] == only;
      }
      if (!passesNull && opFeeds[def] != only)
        continue;
    }
    placed[root] = i;
    if (optional.test(i))
      continue;
    // An elementwise op that would write the output in place over an
    // operand that nothing reads after it: the operand is computed into
    // the output too (an aggregation's result, then its bias added there).
    for (Operation *op = def; op;) {
      Operation *producer = nullptr;
      for (Value operand : inPlaceOperands(op, shapes, fusions)) {
        Operation *d = operand.getDefiningOp();
        if (!d || placed.count(operand) ||
            lastUse.lookup(operand) != position[op])
          continue;
        placed[operand] = i;
        producer = d;
        break;
      }
      op = producer;
    }
  }
}

//===----------------------------------------------------------------------===//
// Workspace
//===----------------------------------------------------------------------===//

SmallVector<Value, 2>
gnnc::target::inPlaceOperands(Operation *op, const FunctionShapes &shapes,
                              const HostFusions &fusions) {
  // What the op reads, and whether it reads it at the element it writes.
  SmallVector<std::pair<Value, bool>, 4> reads;
  Shape result =
      op->getNumResults() == 1 ? shapes.shape(op->getResult(0)) : Shape();
  auto readBinary = [&](gnn::BinaryOp b) {
    auto [sa, sb] = shapes.alignedOperands(b);
    Shape sr = shapes.shape(b.getResult());
    bool whole = sr == result;
    reads.push_back({b.getLhs(), whole && sa == sr});
    reads.push_back({b.getRhs(), whole && sb == sr});
  };
  if (isa<gnn::UnaryOp, gnn::DropoutOp>(op)) {
    reads.push_back({op->getOperand(0), true});
  } else if (auto b = dyn_cast<gnn::BinaryOp>(op)) {
    readBinary(b);
    if (auto m = fusions.addMuls.find(op); m != fusions.addMuls.end()) {
      // The product is not a buffer; its operands are read instead.
      gnn::BinaryOp product = m->second;
      Value p = product.getResult();
      llvm::erase_if(
          reads, [&](const std::pair<Value, bool> &r) { return r.first == p; });
      readBinary(product);
    }
  } else {
    return {};
  }
  // Through views: those that keep the order of the elements, and those
  // that do not (an absorbed broadcast or transpose).
  auto rootOf = [&](Value v, bool &inOrder) {
    while (Operation *def = v.getDefiningOp()) {
      if (isAbsorbed(fusions, def))
        inOrder = false;
      else if (!isa<gnn::AttachOp, gnn::CollectOp, gnn::ReshapeOp>(def))
        break;
      v = viewedValue(def);
    }
    return v;
  };
  llvm::DenseMap<Value, bool> roots;
  SmallVector<Value, 2> order;
  for (auto [v, atElement] : reads) {
    bool inOrder = atElement;
    Value root = rootOf(v, inOrder);
    auto [it, fresh] = roots.try_emplace(root, inOrder);
    if (fresh)
      order.push_back(root);
    else
      it->second = it->second && inOrder;
  }
  SmallVector<Value, 2> operands;
  for (Value root : order)
    if (roots[root] && !isa_and_nonnull<gnn::ConstantOp>(root.getDefiningOp()))
      operands.push_back(root);
  return operands;
}

namespace {

/// The host functions of `module`, callee-first; none on recursion or a
/// missing callee (the printer reports those).
FailureOr<std::vector<func::FuncOp>> calleeFirst(ModuleOp module) {
  std::set<std::string> done, visiting;
  std::vector<func::FuncOp> order;
  std::function<LogicalResult(func::FuncOp)> visit =
      [&](func::FuncOp func) -> LogicalResult {
    std::string name = func.getName().str();
    if (done.count(name))
      return success();
    if (!visiting.insert(name).second)
      return failure();
    WalkResult r = func.walk([&](func::CallOp call) {
      auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee());
      if (!callee || !isHostFunction(callee) || failed(visit(callee)))
        return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (r.wasInterrupted())
      return failure();
    done.insert(name);
    order.push_back(func);
    return success();
  };
  for (auto func : module.getOps<func::FuncOp>()) {
    if (func.isExternal())
      return failure();
    if (isHostFunction(func) && failed(visit(func)))
      return failure();
  }
  return order;
}

/// The workspace slots of one function for one printer.
std::vector<WorkspaceSlot> planFunctionWorkspace(func::FuncOp func,
                                                 const FunctionShapes &shapes,
                                                 const HostFusions &fusions,
                                                 const HostTraits &traits) {
  ModuleOp module = func->getParentOfType<ModuleOp>();
  auto calleeOptional = [&](StringRef name) {
    auto callee = module.lookupSymbol<func::FuncOp>(name);
    return callee ? optionalResults(callee, traits) : llvm::SmallBitVector();
  };
  HostStorage storage(func, shapes, fusions, optionalResults(func, traits),
                      calleeOptional);
  auto symbolName = [&](int s) { return shapes.symbol(s).name; };
  auto numel = [&](ArrayRef<Dim> dims) {
    return productExpr(dims, symbolName);
  };
  auto dims = [&](Value v, size_t from, size_t to) {
    Shape s = shapes.shape(v);
    to = std::min(to, s.size());
    return numel(
        ArrayRef<Dim>(s).slice(std::min(from, to), to - std::min(from, to)));
  };
  // `size` bytes per element of `shape` ("16 * N", "4 * (N * E)").
  auto bytesOf = [&](int64_t size, Shape shape) {
    shape.push_back(Dim::constant(size));
    if (succeeded(FunctionShapes::product(shape)))
      return numel(shape);
    shape.pop_back();
    return std::to_string(size) + " * (" + numel(shape) + ")";
  };
  std::vector<WorkspaceSlot> slots;
  // The slot of each buffer.
  llvm::DenseMap<Value, unsigned> slotOf;
  auto add = [&](WorkspaceSlot::Kind kind, Operation *op, unsigned result,
                 unsigned last, std::string bytes) {
    WorkspaceSlot s;
    s.kind = kind;
    s.op = storage.position.lookup(op);
    s.result = result;
    s.first = s.op;
    s.last = std::max(s.first, last);
    s.bytes = std::move(bytes);
    slots.push_back(std::move(s));
  };
  for (Operation &op : func.getBody().front()) {
    if (isa<func::ReturnOp>(op) || !storage.live.count(&op) ||
        isa<gnn::RelationOp>(op) || fusions.fusedOps.count(&op) ||
        storage.isView(&op))
      continue;
    auto call = dyn_cast<func::CallOp>(op);
    llvm::SmallBitVector calleeOpt =
        call ? calleeOptional(call.getCallee()) : llvm::SmallBitVector();
    // The buffers of its results.
    for (auto [r, result] : llvm::enumerate(op.getResults())) {
      if (!isa<DomainTensorType>(result.getType()) ||
          storage.placed.count(result) ||
          (isa<gnn::ConstantOp>(op) && !traits.constantsInWorkspace))
        continue;
      if (call && r < calleeOpt.size() && calleeOpt.test(r) &&
          result.use_empty())
        continue;
      add(WorkspaceSlot::Buffer, &op, r, storage.lastUse.lookup(result),
          "align64(" + bytesOf(4, shapes.shape(result)) + ")");
      WorkspaceSlot &slot = slots.back();
      slotOf[result] = slots.size() - 1;
      // In place: over an operand of its size that no later op reads.
      for (Value operand : inPlaceOperands(&op, shapes, fusions)) {
        auto it = slotOf.find(operand);
        if (it == slotOf.end() || storage.lastUse.lookup(operand) != slot.first)
          continue;
        int origin = slots[it->second].reuses >= 0 ? slots[it->second].reuses
                                                   : it->second;
        if (slots[origin].bytes != slot.bytes)
          continue;
        slot.reuses = origin;
        slots[origin].last = std::max(slots[origin].last, slot.last);
        break;
      }
    }
    // Its own scratch, and a callee's workspace.
    auto readoutScratch = [&](auto r) {
      Value input = r.getInput();
      const FunctionShapes::GraphSymbols *g = shapes.graphSymbols(r.getGraph());
      Shape count;
      if (g && g->numGraphs >= 0)
        count.push_back(Dim::of(g->numGraphs));
      if (isa<gnn::ReadoutSelectOp>(op)) {
        Shape in = shapes.shape(input);
        count.append(in.begin() + std::min<size_t>(1, in.size()), in.end());
      }
      add(WorkspaceSlot::Scratch, &op, 0, 0,
          "align64(" + bytesOf(8, count) + ")");
    };
    auto reduceScratch = [&](auto r, StringRef what) {
      Value input = r.getInput();
      IntegerAttr axis = r.getAxisAttr();
      size_t offset = gnn::tensorOf(input).isVertexOrEdge() ? 1 : 0;
      size_t rank = shapes.shape(input).size();
      std::string parts;
      if (axis) {
        size_t a = axis.getInt() + offset;
        parts = dims(input, 0, a) + ", " + dims(input, a, a + 1) + ", " +
                dims(input, a + 1, rank);
      } else {
        parts =
            dims(input, 0, offset) + ", " + dims(input, offset, rank) + ", 1";
      }
      add(WorkspaceSlot::Scratch, &op, 0, 0,
          "align64(" + what.str() + "(" + parts + "))");
    };
    if (traits.readoutScratch) {
      if (auto r = dyn_cast<gnn::ReadoutOp>(op))
        readoutScratch(r);
      if (auto r = dyn_cast<gnn::ReadoutSelectOp>(op))
        readoutScratch(r);
    }
    if (traits.reduceScratch) {
      if (auto r = dyn_cast<gnn::ReduceOp>(op))
        reduceScratch(r, fusions.mulReduces.count(&op) ? "mul_reduce_scratch"
                                                       : "reduce_scratch");
      if (auto r = dyn_cast<gnn::ReduceSelectOp>(op))
        reduceScratch(r, "reduce_scratch");
    }
    if (call)
      add(WorkspaceSlot::Callee, &op, 0, 0,
          "workspace(@" + call.getCallee().str() + ")");
  }
  return slots;
}

StringRef kindName(WorkspaceSlot::Kind kind) {
  switch (kind) {
  case WorkspaceSlot::Buffer:
    return "buffer";
  case WorkspaceSlot::Scratch:
    return "scratch";
  case WorkspaceSlot::Callee:
    return "callee";
  }
  return "";
}

Attribute slotAttr(Builder &b, const WorkspaceSlot &s) {
  SmallVector<NamedAttribute> fields;
  fields.push_back(b.getNamedAttr("kind", b.getStringAttr(kindName(s.kind))));
  fields.push_back(b.getNamedAttr("op", b.getI64IntegerAttr(s.op)));
  if (s.kind == WorkspaceSlot::Buffer)
    fields.push_back(b.getNamedAttr("result", b.getI64IntegerAttr(s.result)));
  fields.push_back(b.getNamedAttr("bytes", b.getStringAttr(s.bytes)));
  fields.push_back(b.getNamedAttr(
      "live", b.getDenseI64ArrayAttr({static_cast<int64_t>(s.first),
                                      static_cast<int64_t>(s.last)})));
  if (s.reuses >= 0)
    fields.push_back(b.getNamedAttr("reuses", b.getI64IntegerAttr(s.reuses)));
  return b.getDictionaryAttr(fields);
}

} // namespace

LogicalResult gnnc::target::planWorkspaces(ModuleOp module,
                                           const HostTraits &traits) {
  FailureOr<std::vector<func::FuncOp>> order = calleeFirst(module);
  if (failed(order))
    return module.emitError("cannot order the host functions callee-first");
  llvm::StringMap<FunctionShapes> analyses;
  Builder b(module.getContext());
  for (func::FuncOp func : *order) {
    FailureOr<FunctionShapes> shapes = FunctionShapes::analyse(func, analyses);
    if (failed(shapes))
      return failure();
    HostFusions fusions;
    if (traits.hostFusions && failed(readHostFusions(func, fusions, traits)))
      return failure();
    std::vector<WorkspaceSlot> slots =
        planFunctionWorkspace(func, *shapes, fusions, traits);
    analyses.try_emplace(func.getName(), std::move(*shapes));
    SmallVector<Attribute> list;
    for (const WorkspaceSlot &s : slots)
      list.push_back(slotAttr(b, s));
    NamedAttrList plans;
    if (auto old = func->getAttrOfType<DictionaryAttr>(kWorkspaceAttr))
      plans.append(old.getValue());
    plans.set(traits.key, b.getArrayAttr(list));
    func->setAttr(kWorkspaceAttr, plans.getDictionary(module.getContext()));
  }
  return success();
}

FailureOr<std::vector<WorkspaceSlot>>
gnnc::target::readWorkspace(func::FuncOp func, const HostTraits &traits) {
  auto plans = func->getAttrOfType<DictionaryAttr>(kWorkspaceAttr);
  auto list = plans ? plans.getAs<ArrayAttr>(traits.key) : ArrayAttr();
  if (!list)
    return func.emitError("host function has no ")
           << kWorkspaceAttr << " plan '" << traits.key
           << "' (run gnnk-plan-workspace)";
  std::vector<WorkspaceSlot> slots;
  unsigned numOps = func.getBody().front().getOperations().size();
  for (Attribute a : list) {
    auto d = dyn_cast<DictionaryAttr>(a);
    auto kind = d ? d.getAs<StringAttr>("kind") : StringAttr();
    auto op = d ? d.getAs<IntegerAttr>("op") : IntegerAttr();
    auto live = d ? d.getAs<DenseI64ArrayAttr>("live") : DenseI64ArrayAttr();
    auto bytes = d ? d.getAs<StringAttr>("bytes") : StringAttr();
    WorkspaceSlot s;
    bool ok = kind && op && live && live.size() == 2 && bytes &&
              op.getInt() >= 0 && op.getInt() < numOps && live[0] >= 0 &&
              live[0] <= live[1] && live[1] < numOps;
    if (ok && kind.getValue() == "buffer") {
      auto result = d.getAs<IntegerAttr>("result");
      ok = result && result.getInt() >= 0;
      s.result = ok ? result.getInt() : 0;
      // An earlier buffer that reuses none, lives as long and is as big.
      if (Attribute reuses = d.get("reuses")) {
        auto k = dyn_cast<IntegerAttr>(reuses);
        const WorkspaceSlot *origin =
            k && k.getInt() >= 0 && k.getInt() < int64_t(slots.size())
                ? &slots[k.getInt()]
                : nullptr;
        ok = ok && origin && origin->kind == WorkspaceSlot::Buffer &&
             origin->reuses < 0 && origin->first <= live[0] &&
             origin->last >= live[1] && origin->bytes == bytes.getValue();
        s.reuses = ok ? k.getInt() : -1;
      }
    } else if (ok && kind.getValue() == "scratch") {
      s.kind = WorkspaceSlot::Scratch;
    } else if (ok && kind.getValue() == "callee") {
      s.kind = WorkspaceSlot::Callee;
    } else {
      ok = false;
    }
    if (!ok)
      return func.emitError("malformed workspace slot ") << a;
    s.op = op.getInt();
    s.first = live[0];
    s.last = live[1];
    s.bytes = bytes.getValue().str();
    slots.push_back(std::move(s));
  }
  return slots;
}

LogicalResult gnnc::target::ensureHostPlan(ModuleOp module,
                                           const HostTraits &traits) {
  bool missing = false;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (!isHostFunction(func))
      continue;
    if (traits.hostFusions && !func->hasAttr(kHostFusionsAttr))
      planHostFusions(func);
    auto plans = func->getAttrOfType<DictionaryAttr>(kWorkspaceAttr);
    missing = missing || !plans || !plans.get(traits.key);
  }
  return missing ? planWorkspaces(module, traits) : success();
}
