//===- GpuMapping.cpp - How a kernel maps onto a GPU's lanes --------------===//
//
// Part of gnnc. `gnnk-map-gpu`: the analysis that decides how each kernel
// runs on a GPU (docs/architecture.md, "The CUDA printer"), and the
// `gnnk.gpu` attribute that records its decisions on the kernel:
//
//   func.func @GAT.conv1.aggregate0(...) attributes {gnnk.gpu = {   (abridged)
//       mapping = "group-per-vertex", schedule = "descending-degree",
//       keys = array<i64: 8, 8>, lanes = 16, vector = 4, chunks = 1,
//       rows_per_block = 16, shared_bytes = 0, split_above = 512,
//       scratch = ["lane", ..., "replicated", ...],
//       nests = ["expanded", ...]}, gnnk.kernel = {...}}
//
// `scratch` holds the place of every memref.alloca of the vertex loop and
// `nests` the mode of every feature loop nest, both in program order. What
// follows from these mechanically (the values per lane of a register row,
// whether a nest runs once per chunk or per key, its vector loads and
// stores) is derived again by readPlan.
//
//===----------------------------------------------------------------------===//

#include "gnnc/Dialect/GNNK/Transforms/GpuMapping.h"
#include "gnnc/Dialect/GNNK/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSwitch.h"

namespace gnnc::gnnk {
#define GEN_PASS_DEF_GNNKMAPGPU
#include "gnnc/Dialect/GNNK/Transforms/Passes.h.inc"
} // namespace gnnc::gnnk

using namespace mlir;
using namespace gnnc;
using namespace gnnc::gnnk;
using namespace gnnc::gnnk::gpu;

//===----------------------------------------------------------------------===//
// Shapes and accesses
//===----------------------------------------------------------------------===//

int64_t gpu::productOf(ArrayRef<int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  return n;
}

bool gpu::isConstantIndex(Value v, int64_t value) {
  if (auto c = v.getDefiningOp<arith::ConstantIndexOp>())
    return c.value() == value;
  return false;
}

Value gpu::rootOf(Value memref) {
  while (auto view = memref.getDefiningOp<memref::ReinterpretCastOp>())
    memref = view.getSource();
  return memref;
}

bool gpu::normalise(Value memref, ValueRange indices,
                    SmallVectorImpl<Value> &out, Value *row) {
  ArrayRef<int64_t> shape = cast<MemRefType>(memref.getType()).getShape();
  size_t start = 0;
  if (!shape.empty() && ShapedType::isDynamic(shape[0])) {
    if (row)
      *row = indices[0];
    start = 1;
  }
  for (size_t d = start; d < shape.size(); ++d) {
    if (shape[d] == 1) {
      if (!isConstantIndex(indices[d], 0))
        return false;
      continue;
    }
    out.push_back(indices[d]);
  }
  return true;
}

SmallVector<int64_t, 4> gpu::normalShape(MemRefType type) {
  SmallVector<int64_t, 4> out;
  ArrayRef<int64_t> shape = type.getShape();
  for (size_t d = 0; d < shape.size(); ++d) {
    if (d == 0 && ShapedType::isDynamic(shape[d]))
      continue;
    if (shape[d] != 1)
      out.push_back(shape[d]);
  }
  return out;
}

namespace {

int64_t pow2Ceil(int64_t x) {
  int64_t p = 1;
  while (p < x)
    p *= 2;
  return p;
}

//===----------------------------------------------------------------------===//
// Kernels: the mapping onto a group of lanes
//===----------------------------------------------------------------------===//
//
// A kernel of the IR is one gnnk.for_vertices whose body holds scratch rows
// (memref.alloca), statements (stores, scalar ops, the edge loop, an
// scf.if of the finalisation) and feature loop nests (scf.for). Each vertex
// runs on a group of kLanes = G lanes. The plan decides, for the whole
// kernel:
//
//   - D, the key shape: the leading loop shape that most of the work's
//     nests share (GAT's [heads, features]); its n = prod(D) elements
//     ("keys") are spread over the lanes in chunks of V consecutive keys
//     (V = 4 or 2 when n allows: float4 / float2 accesses), chunk c of lane
//     l holding keys (c * G + l) * V .. + V - 1, C chunks per lane;
//   - for every nest, how it runs: Expanded (its leading p loops are D's
//     leading p axes: each lane runs the body for the keys it holds, once
//     per chunk when every key of a chunk has the same first p coordinates,
//     else once per key), Flat (parallel, but another shape: its iterations
//     spread over the lanes on their own), LaneZero (not parallel, it
//     writes memory others read: lane 0 runs it) or Redundant (not
//     parallel, it writes only replicated registers: every lane runs it);
//   - for every scratch row, where it lives: Lane (registers, when its
//     shape is a prefix of D and every access is at the accessing unit's
//     own key: one value per chunk or per key of the lane), Replicated
//     (registers, the same in every lane: scalars written outside parallel
//     nests, such as the first-edge flag), or Shared (shared memory, one
//     row per group, for the rest).
//
// A nest may run in parallel to depth d when every store it makes is at the
// indices of its d leading loops (and a value it reads from a buffer it
// writes is the one its own iteration wrote).

class KernelAnalysis {
public:
  KernelAnalysis(func::FuncOp kernel, KernelPlan &plan)
      : kernel(kernel), plan(plan) {}
  /// Checks the form of the kernel and collects its scratch rows and
  /// nests.
  LogicalResult structure();
  /// Decides the mapping (after structure()).
  LogicalResult run();
  /// One round of the class and mode decisions; true when a scratch row
  /// moved.
  bool decide();
  /// What follows from the decisions: values per lane of the register
  /// rows, nests once per chunk or per key, vector accesses, the shared
  /// bytes of one group.
  void derive();

  /// The nests in program order.
  SmallVector<scf::ForOp> roots;

private:
  void collect(Block &block);
  void analyseNest(scf::ForOp root);
  void unitsOf(ArrayPlan &a) const;

  func::FuncOp kernel;
  KernelPlan &plan;
  SmallVector<Operation *> statements; // stores and loads outside nests
};

void KernelAnalysis::collect(Block &block) {
  for (Operation &op : block) {
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      roots.push_back(loop);
      analyseNest(loop);
      continue;
    }
    if (auto alloca = dyn_cast<memref::AllocaOp>(op)) {
      ArrayPlan a;
      a.elementType = alloca.getType().getElementType();
      a.norm = normalShape(alloca.getType());
      a.numElements = productOf(alloca.getType().getShape());
      plan.arrays[alloca.getResult()] = a;
      continue;
    }
    if (isa<memref::LoadOp, memref::StoreOp>(op))
      statements.push_back(&op);
    for (Region &region : op.getRegions())
      for (Block &inner : region)
        collect(inner);
  }
}

/// The perfect nest of `root`, and the depth to which it may run in
/// parallel.
void KernelAnalysis::analyseNest(scf::ForOp root) {
  NestPlan nest;
  for (scf::ForOp loop = root; loop;) {
    auto lower = loop.getLowerBound().getDefiningOp<arith::ConstantIndexOp>();
    auto upper = loop.getUpperBound().getDefiningOp<arith::ConstantIndexOp>();
    if (!lower || !upper || lower.value() != 0 ||
        !isConstantIndex(loop.getStep(), 1) || loop.getNumResults() != 0)
      break;
    nest.loops.push_back(loop);
    nest.trips.push_back(upper.value());
    Block *body = loop.getBody();
    scf::ForOp inner;
    if (body->getOperations().size() == 2)
      inner = dyn_cast<scf::ForOp>(body->front());
    loop = inner;
  }
  // Stores at the indices of the leading loops; reads of written buffers
  // at the indices they are written.
  unsigned depth = nest.loops.size();
  DenseMap<Value, SmallVector<Value, 4>> written; // root -> indices
  bool viewAccess = false;
  root.walk([&](memref::StoreOp store) {
    Value memref = store.getMemRef();
    if (memref != rootOf(memref))
      viewAccess = true;
    SmallVector<Value, 4> idx;
    Value row;
    if (!normalise(memref, store.getIndices(), idx, &row)) {
      depth = 0;
      return;
    }
    if (row && root->isAncestor(row.getParentRegion()->getParentOp()))
      depth = 0;
    unsigned matched = 0;
    while (matched < idx.size() && matched < nest.loops.size() &&
           idx[matched] == nest.loops[matched].getInductionVar())
      ++matched;
    depth = std::min(depth, matched);
    SmallVector<Value, 4> all(store.getIndices());
    auto [it, inserted] = written.try_emplace(rootOf(memref), all);
    if (!inserted && it->second != all)
      depth = 0;
  });
  root.walk([&](memref::LoadOp load) {
    Value memref = load.getMemRef();
    auto it = written.find(rootOf(memref));
    if (it == written.end())
      return;
    if (memref != rootOf(memref) ||
        SmallVector<Value, 4>(load.getIndices()) != it->second)
      depth = 0;
  });
  if (viewAccess)
    depth = 0;
  nest.depth = depth;
  plan.nests[root] = std::move(nest);
}

/// One round of the class and mode decisions; true when something changed.
bool KernelAnalysis::decide() {
  bool changed = false;
  auto arrayOf = [&](Value memref) -> ArrayPlan * {
    auto it = plan.arrays.find(rootOf(memref));
    return it == plan.arrays.end() ? nullptr : &it->second;
  };
  auto demote = [&](ArrayPlan *a) {
    if (a && a->kind != ArrayKind::Shared) {
      a->kind = ArrayKind::Shared;
      changed = true;
    }
  };
  // Outside nests every lane runs the statement: a lane's own elements
  // cannot be read or written there.
  for (Operation *op : statements) {
    Value memref = isa<memref::LoadOp>(op)
                       ? cast<memref::LoadOp>(op).getMemRef()
                       : cast<memref::StoreOp>(op).getMemRef();
    ArrayPlan *a = arrayOf(memref);
    if (a && a->kind == ArrayKind::Lane)
      demote(a);
  }
  for (scf::ForOp root : roots) {
    NestPlan &nest = plan.nests[root];
    bool writesMemory = false, writesLane = false;
    root.walk([&](memref::StoreOp store) {
      ArrayPlan *a = arrayOf(store.getMemRef());
      if (!a || a->kind == ArrayKind::Shared)
        writesMemory = true;
      else if (a->kind == ArrayKind::Lane)
        writesLane = true;
    });
    // How the nest runs.
    unsigned q = std::min<unsigned>(nest.depth, plan.keyShape.size());
    bool compatible =
        q >= 1 && std::equal(nest.trips.begin(), nest.trips.begin() + q,
                             plan.keyShape.begin());
    if (nest.depth == 0)
      nest.mode =
          writesMemory || writesLane ? NestMode::LaneZero : NestMode::Redundant;
    else if (compatible)
      nest.mode = NestMode::Expanded;
    else
      nest.mode = NestMode::Flat;
    nest.p = nest.mode == NestMode::Expanded ? q : 0;
    auto ivsMatch = [&](ArrayRef<Value> idx, size_t count) {
      if (idx.size() != count)
        return false;
      for (size_t i = 0; i < count; ++i)
        if (idx[i] != nest.loops[i].getInductionVar())
          return false;
      return true;
    };
    root.walk([&](Operation *op) {
      Value memref;
      ValueRange indices;
      bool isStore = false;
      if (auto load = dyn_cast<memref::LoadOp>(op)) {
        memref = load.getMemRef();
        indices = load.getIndices();
      } else if (auto store = dyn_cast<memref::StoreOp>(op)) {
        memref = store.getMemRef();
        indices = store.getIndices();
        isStore = true;
      } else {
        return;
      }
      ArrayPlan *a = arrayOf(memref);
      if (!a)
        return;
      if (a->kind == ArrayKind::Replicated && isStore &&
          nest.mode != NestMode::Redundant)
        demote(a);
      if (a->kind != ArrayKind::Lane)
        return;
      if (nest.mode != NestMode::Expanded) {
        demote(a);
        return;
      }
      SmallVector<Value, 4> idx;
      size_t rank = a->norm.size();
      if (!normalise(memref, indices, idx) || !ivsMatch(idx, rank) ||
          rank > nest.p || (isStore && rank != nest.p))
        demote(a);
    });
  }
  return changed;
}

LogicalResult KernelAnalysis::structure() {
  gnnk::ForVerticesOp vertices;
  for (Operation &op : kernel.getBody().front()) {
    if (auto loop = dyn_cast<gnnk::ForVerticesOp>(op)) {
      if (vertices)
        return loop.emitError("the CUDA printer needs one vertex loop per "
                              "kernel");
      vertices = loop;
      continue;
    }
    if (!isa<arith::ConstantOp, func::ReturnOp>(op))
      return op.emitError("the CUDA printer does not support '")
             << op.getName() << "' outside the vertex loop";
  }
  if (!vertices)
    return kernel.emitError("the CUDA printer needs a vertex loop");
  WalkResult nested = vertices.getBodyBlock()->walk([&](Operation *op) {
    if (isa<gnnk::ForVerticesOp>(op) ||
        (isa<gnnk::ForEdgesOp>(op) && op->getParentOfType<scf::ForOp>()))
      return WalkResult::interrupt();
    return WalkResult::advance();
  });
  if (nested.wasInterrupted())
    return kernel.emitError("the CUDA printer needs the edge loop outside "
                            "feature loops");
  collect(*vertices.getBodyBlock());
  kernel.walk([&](memref::ReinterpretCastOp view) {
    auto it = plan.arrays.find(rootOf(view.getSource()));
    if (it != plan.arrays.end())
      it->second.viewed = true;
  });
  return success();
}

LogicalResult KernelAnalysis::run() {
  // D: the key shape of the parallel nests that covers the most work.
  std::vector<SmallVector<int64_t, 4>> candidates;
  for (scf::ForOp root : roots) {
    const NestPlan &nest = plan.nests[root];
    if (nest.depth > 0)
      candidates.emplace_back(nest.trips.begin(),
                              nest.trips.begin() + nest.depth);
  }
  double best = -1;
  for (const auto &cand : candidates) {
    double score = 0;
    for (scf::ForOp root : roots) {
      const NestPlan &nest = plan.nests[root];
      unsigned q = std::min<unsigned>(nest.depth, cand.size());
      if (q == 0 ||
          !std::equal(nest.trips.begin(), nest.trips.begin() + q, cand.begin()))
        continue;
      score +=
          static_cast<double>(productOf(nest.trips)) *
          static_cast<double>(productOf(ArrayRef<int64_t>(cand).take_front(q)));
    }
    bool better = score > best ||
                  (score == best && productOf(cand) > productOf(plan.keyShape));
    if (better) {
      best = score;
      plan.keyShape = cand;
    }
  }
  plan.n = productOf(plan.keyShape);
  plan.vec = plan.n >= 4 && plan.n % 4 == 0 ? 4 : plan.n % 2 == 0 ? 2 : 1;
  plan.lanes =
      std::min<int64_t>(32, pow2Ceil((plan.n + plan.vec - 1) / plan.vec));
  plan.chunks = (plan.n + plan.lanes * plan.vec - 1) / (plan.lanes * plan.vec);

  // Classes: scalars replicated, prefixes of D in lanes, the rest shared;
  // then demote until every access agrees.
  for (auto &[value, a] : plan.arrays) {
    if (a.viewed)
      a.kind = ArrayKind::Shared;
    else if (a.norm.empty())
      a.kind = ArrayKind::Replicated;
    else if (plan.isPrefixOfKeys(a.norm))
      a.kind = ArrayKind::Lane;
    else
      a.kind = ArrayKind::Shared;
  }
  while (decide()) {
  }
  // Units of the register rows; the largest move to shared memory when
  // they take too many registers.
  int64_t registers = 0;
  for (auto &[value, a] : plan.arrays)
    if (a.kind == ArrayKind::Lane) {
      unitsOf(a);
      registers += a.units;
    }
  while (registers > kMaxLaneRegisters) {
    ArrayPlan *largest = nullptr;
    for (auto &[value, a] : plan.arrays)
      if (a.kind == ArrayKind::Lane && (!largest || a.units > largest->units))
        largest = &a;
    registers -= largest->units;
    largest->kind = ArrayKind::Shared;
  }
  // A demotion may change how nests that read the row run.
  while (decide()) {
  }
  // With one lane per vertex nothing is shared: every row is the thread's.
  if (plan.lanes == 1)
    for (auto &[value, a] : plan.arrays)
      if (a.kind == ArrayKind::Shared)
        a.kind = ArrayKind::Replicated;
  derive();
  plan.groups = kBlockThreads / plan.lanes;
  if (plan.sharedBytes > 0)
    plan.groups =
        std::min<int64_t>(plan.groups, kSharedBytesPerBlock / plan.sharedBytes);
  plan.threads = plan.groups * plan.lanes;
  if (plan.groups < 1)
    return kernel.emitError("the scratch rows of this kernel need ")
           << plan.sharedBytes << " bytes of shared memory per vertex; the "
           << "CUDA printer supports at most " << kSharedBytesPerBlock;
  return success();
}

void KernelAnalysis::unitsOf(ArrayPlan &a) const {
  a.perChunk = plan.strideAfter(a.norm.size()) % plan.vec == 0;
  a.units = a.perChunk ? plan.chunks : plan.chunks * plan.vec;
}

void KernelAnalysis::derive() {
  for (auto &[value, a] : plan.arrays)
    if (a.kind == ArrayKind::Lane)
      unitsOf(a);
  // (Nests in program order, so that the printed code does not depend on
  // where the ops are in memory.)
  for (scf::ForOp root : roots) {
    NestPlan &nest = plan.nests[root];
    if (nest.mode != NestMode::Expanded)
      continue;
    nest.perChunk = plan.strideAfter(nest.p) % plan.vec == 0;
  }
  // Vector loads and stores: global rows at the nest's own keys, in nests
  // that run once per key over all of D.
  for (scf::ForOp root : roots) {
    Operation *rootOp = root;
    NestPlan &nest = plan.nests[root];
    if (nest.mode != NestMode::Expanded || nest.perChunk || plan.vec == 1 ||
        nest.p != plan.keyShape.size())
      continue;
    scf::ForOp innermost = nest.loops[nest.p - 1];
    // Only the perfectly nested part is bound to keys.
    if (nest.loops.size() != nest.p)
      continue;
    DenseMap<Value, int> loads, stores;
    rootOp->walk([&](Operation *op) {
      if (auto l = dyn_cast<memref::LoadOp>(op))
        ++loads[l.getMemRef()];
      if (auto s = dyn_cast<memref::StoreOp>(op))
        ++stores[s.getMemRef()];
    });
    auto eligible = [&](Operation *op, Value memref, ValueRange indices) {
      if (op->getBlock() != innermost.getBody() ||
          plan.arrays.count(rootOf(memref)) || memref != rootOf(memref))
        return false;
      SmallVector<int64_t, 4> rowShape =
          normalShape(cast<MemRefType>(memref.getType()));
      if (ArrayRef<int64_t>(rowShape) != ArrayRef<int64_t>(plan.keyShape))
        return false;
      SmallVector<Value, 4> idx;
      Value row;
      if (!normalise(memref, indices, idx, &row) ||
          idx.size() != nest.loops.size())
        return false;
      for (size_t i = 0; i < idx.size(); ++i)
        if (idx[i] != nest.loops[i].getInductionVar())
          return false;
      return !row || !rootOp->isAncestor(row.getParentRegion()->getParentOp());
    };
    for (Operation &op : *innermost.getBody()) {
      if (auto load = dyn_cast<memref::LoadOp>(op))
        if (!stores.count(load.getMemRef()) &&
            eligible(load, load.getMemRef(), load.getIndices())) {
          nest.vectorLoads.push_back(load);
          plan.vectorArgs.insert(load.getMemRef());
        }
      if (auto store = dyn_cast<memref::StoreOp>(op))
        if (!loads.count(store.getMemRef()) && stores[store.getMemRef()] == 1 &&
            eligible(store, store.getMemRef(), store.getIndices())) {
          nest.vectorStores.push_back(store);
          plan.vectorArgs.insert(store.getMemRef());
        }
    }
  }
  // Shared memory: one row of every shared array per group.
  plan.sharedBytes = 0;
  for (auto &[value, a] : plan.arrays)
    if (a.kind == ArrayKind::Shared) {
      int64_t bytes =
          a.elementType.isInteger(1)
              ? 1
              : std::max<int64_t>(1, a.elementType.getIntOrFloatBitWidth() / 8);
      plan.sharedBytes += (a.numElements * bytes + 7) / 8 * 8;
    }
}

//===----------------------------------------------------------------------===//
// The gnnk.gpu attribute
//===----------------------------------------------------------------------===//

StringRef nameOf(ArrayKind kind) {
  switch (kind) {
  case ArrayKind::Lane:
    return "lane";
  case ArrayKind::Replicated:
    return "replicated";
  case ArrayKind::Shared:
    return "shared";
  }
  llvm_unreachable("unknown scratch place");
}

StringRef nameOf(NestMode mode) {
  switch (mode) {
  case NestMode::Expanded:
    return "expanded";
  case NestMode::Flat:
    return "flat";
  case NestMode::LaneZero:
    return "lane-zero";
  case NestMode::Redundant:
    return "redundant";
  }
  llvm_unreachable("unknown nest mode");
}

std::optional<ArrayKind> arrayKindNamed(StringRef name) {
  return llvm::StringSwitch<std::optional<ArrayKind>>(name)
      .Case("lane", ArrayKind::Lane)
      .Case("replicated", ArrayKind::Replicated)
      .Case("shared", ArrayKind::Shared)
      .Default(std::nullopt);
}

std::optional<NestMode> nestModeNamed(StringRef name) {
  return llvm::StringSwitch<std::optional<NestMode>>(name)
      .Case("expanded", NestMode::Expanded)
      .Case("flat", NestMode::Flat)
      .Case("lane-zero", NestMode::LaneZero)
      .Case("redundant", NestMode::Redundant)
      .Default(std::nullopt);
}

/// What runs one row of the vertex loop.
StringRef mappingName(int64_t lanes) {
  if (lanes == 1)
    return "thread-per-vertex";
  if (lanes == 32)
    return "warp-per-vertex";
  return "group-per-vertex";
}

/// Decides whether long rows of `kernel` may be split over a block
/// (KernelPlan::splitAbove): one edge loop directly in the vertex loop, no
/// output written before it or in it, and every scratch row that the loop
/// writes and the code after it reads (and the first-edge flag) a reduction
/// state the lowering tagged with gnnk.fold, in registers, whose parts fit
/// each other: an online softmax's running maximum and sum of one shape, its
/// accumulator's elements each with one logit of the lane's.
void planSplit(func::FuncOp kernel, KernelPlan &plan) {
  plan.splitAbove = 0;
  plan.splitState.clear();
  ForVerticesOp vertices;
  for (Operation &op : kernel.getBody().front())
    if (auto loop = dyn_cast<ForVerticesOp>(op))
      vertices = loop;
  if (!vertices)
    return;
  Block &body = *vertices.getBodyBlock();
  ForEdgesOp edges;
  unsigned loops = 0;
  vertices.walk([&](ForEdgesOp loop) {
    ++loops;
    edges = loop;
  });
  if (loops != 1 || edges->getBlock() != &body)
    return;
  DenseSet<Value> writtenIn, readAfter;
  bool before = true, output = false;
  for (Operation &op : body) {
    if (&op == edges.getOperation()) {
      before = false;
      op.walk([&](memref::StoreOp store) {
        Value root = rootOf(store.getMemRef());
        writtenIn.insert(root);
        output |= !plan.arrays.count(root);
      });
      continue;
    }
    op.walk([&](Operation *inner) {
      if (auto store = dyn_cast<memref::StoreOp>(inner))
        output |= before && !plan.arrays.count(rootOf(store.getMemRef()));
      else if (auto load = dyn_cast<memref::LoadOp>(inner); load && !before)
        readAfter.insert(rootOf(load.getMemRef()));
    });
  }
  if (output)
    return;
  SmallVector<KernelPlan::SplitPart, 4> state;
  bool hasFirst = false, needsFirst = false;
  for (auto &[value, a] : plan.arrays) {
    if (!writtenIn.count(value))
      continue;
    auto alloca = value.getDefiningOp<memref::AllocaOp>();
    auto fold = alloca ? alloca->getAttrOfType<DictionaryAttr>(kFoldAttrName)
                       : DictionaryAttr();
    if (!fold) {
      if (readAfter.count(value))
        return; // a value of the last edge, say: no merge for it
      continue; // scratch of one edge
    }
    // The dialect verifier accepts only the kinds of kFoldKinds.
    FoldKind kind = *foldKindNamed(fold.getAs<StringAttr>("kind").getValue());
    bool flag = kind == FoldKind::First;
    if (a.viewed || a.kind == ArrayKind::Shared ||
        !(flag ? a.elementType.isInteger(1) : a.elementType.isF32()))
      return;
    hasFirst |= flag;
    needsFirst |= kind != FoldKind::Sum && !flag;
    KernelPlan::SplitPart part;
    part.array = value;
    part.kind = kind;
    part.reduction = fold.getAs<IntegerAttr>("reduction").getInt();
    part.units = a.kind == ArrayKind::Lane ? a.units : a.numElements;
    part.offset = state.empty()
                      ? 0
                      : state.back().offset + state.back().units * plan.lanes;
    state.push_back(part);
  }
  if (state.empty() || needsFirst != hasFirst)
    return;
  // An online softmax's parts: a maximum and a sum of one place and shape,
  // and an accumulator whose every value has its logit in the lane.
  for (KernelPlan::SplitPart &part : state) {
    if (part.kind != FoldKind::OnlineAcc && part.kind != FoldKind::OnlineMax)
      continue;
    int maxPart = -1, sumPart = -1;
    for (auto [i, other] : llvm::enumerate(state))
      if (other.reduction == part.reduction) {
        if (other.kind == FoldKind::OnlineMax)
          maxPart = static_cast<int>(i);
        else if (other.kind == FoldKind::OnlineSum)
          sumPart = static_cast<int>(i);
      }
    if (maxPart < 0 || sumPart < 0)
      return;
    const ArrayPlan &m = plan.arrays.find(state[maxPart].array)->second;
    const ArrayPlan &sum = plan.arrays.find(state[sumPart].array)->second;
    if (m.kind != sum.kind || m.norm != sum.norm)
      return;
    if (part.kind == FoldKind::OnlineMax)
      continue;
    part.maxPart = maxPart;
    part.sumPart = sumPart;
    const ArrayPlan &acc = plan.arrays.find(part.array)->second;
    bool prefix = m.norm.size() <= acc.norm.size() &&
                  std::equal(m.norm.begin(), m.norm.end(), acc.norm.begin());
    bool scalar =
        m.kind == ArrayKind::Replicated ? m.numElements == 1 : m.units == 1;
    if (!prefix ||
        (!scalar && acc.kind == ArrayKind::Replicated &&
         m.kind != ArrayKind::Replicated) ||
        (!scalar && m.kind == ArrayKind::Lane && !m.perChunk && acc.perChunk))
      return;
  }
  plan.splitState = std::move(state);
  // The groups of a block exchange their state in shared memory.
  if ((plan.sharedBytes + 4 * plan.splitFloats()) * plan.groups >
      kSharedBytesPerBlock) {
    plan.splitState.clear();
    return;
  }
  plan.splitAbove = pow2Ceil(kSplitEdgesPerThread * plan.threads);
}

} // namespace

LogicalResult gpu::planKernel(func::FuncOp kernel, KernelPlan &plan) {
  KernelAnalysis analysis(kernel, plan);
  if (failed(analysis.structure()) || failed(analysis.run()))
    return failure();
  planSplit(kernel, plan);
  return success();
}

void gpu::recordPlan(func::FuncOp kernel, const KernelPlan &plan) {
  Builder b(kernel.getContext());
  SmallVector<Attribute> scratch, nests;
  for (const auto &[value, a] : plan.arrays)
    scratch.push_back(b.getStringAttr(nameOf(a.kind)));
  // Nests in program order (no nest is inside another).
  kernel.walk<WalkOrder::PreOrder>([&](scf::ForOp loop) {
    auto it = plan.nests.find(loop);
    if (it != plan.nests.end())
      nests.push_back(b.getStringAttr(nameOf(it->second.mode)));
  });
  NamedAttribute entries[] = {
      b.getNamedAttr("mapping", b.getStringAttr(mappingName(plan.lanes))),
      b.getNamedAttr("schedule", b.getStringAttr(kDescendingDegree)),
      b.getNamedAttr("keys", b.getDenseI64ArrayAttr(plan.keyShape)),
      b.getNamedAttr("lanes", b.getI64IntegerAttr(plan.lanes)),
      b.getNamedAttr("vector", b.getI64IntegerAttr(plan.vec)),
      b.getNamedAttr("chunks", b.getI64IntegerAttr(plan.chunks)),
      b.getNamedAttr("rows_per_block", b.getI64IntegerAttr(plan.groups)),
      b.getNamedAttr("shared_bytes", b.getI64IntegerAttr(plan.sharedBytes)),
      b.getNamedAttr("split_above", b.getI64IntegerAttr(plan.splitAbove)),
      b.getNamedAttr("scratch", b.getArrayAttr(scratch)),
      b.getNamedAttr("nests", b.getArrayAttr(nests))};
  kernel->setAttr(kGpuMappingAttrName, b.getDictionaryAttr(entries));
}

LogicalResult gpu::readPlan(func::FuncOp kernel, KernelPlan &plan) {
  auto dict = kernel->getAttrOfType<DictionaryAttr>(kGpuMappingAttrName);
  if (!dict)
    return kernel.emitError("kernel has no '")
           << kGpuMappingAttrName << "' attribute (run gnnk-map-gpu)";
  KernelAnalysis analysis(kernel, plan);
  if (failed(analysis.structure()))
    return failure();
  auto fail = [&]() {
    return kernel.emitError("'") << kGpuMappingAttrName << "' ";
  };
  auto number = [&](StringRef name) -> int64_t {
    auto attr = dict.getAs<IntegerAttr>(name);
    return attr ? attr.getInt() : -1;
  };
  auto keys = dict.getAs<DenseI64ArrayAttr>("keys");
  auto scratch = dict.getAs<ArrayAttr>("scratch");
  auto nests = dict.getAs<ArrayAttr>("nests");
  auto mapping = dict.getAs<StringAttr>("mapping");
  auto schedule = dict.getAs<StringAttr>("schedule");
  if (!keys || !scratch || !nests || !mapping || !schedule)
    return fail() << "needs keys, scratch, nests, mapping and schedule";
  plan.keyShape.assign(keys.asArrayRef().begin(), keys.asArrayRef().end());
  if (llvm::any_of(plan.keyShape, [](int64_t d) { return d < 1; }))
    return fail() << "has a key axis of size less than 1";
  plan.n = productOf(plan.keyShape);
  plan.lanes = number("lanes");
  plan.vec = number("vector");
  plan.chunks = number("chunks");
  plan.groups = number("rows_per_block");
  int64_t sharedBytes = number("shared_bytes");
  if (plan.lanes < 1 || plan.lanes > 32 || !llvm::isPowerOf2_64(plan.lanes))
    return fail() << "lanes must be a power of two up to 32";
  if ((plan.vec != 1 && plan.vec != 2 && plan.vec != 4) ||
      plan.n % plan.vec != 0)
    return fail() << "vector must be 1, 2 or 4 and divide the " << plan.n
                  << " keys";
  if (plan.chunks !=
      (plan.n + plan.lanes * plan.vec - 1) / (plan.lanes * plan.vec))
    return fail() << "chunks must be the keys per lane and vector";
  if (mapping.getValue() != mappingName(plan.lanes))
    return fail() << "mapping must be '" << mappingName(plan.lanes) << "' with "
                  << plan.lanes << " lanes";
  if (schedule.getValue() != kDescendingDegree)
    return fail() << "schedule must be '" << kDescendingDegree << "'";
  if (plan.groups < 1 || plan.groups * plan.lanes > 1024)
    return fail() << "rows_per_block must give 1 to 1024 threads";
  plan.threads = plan.groups * plan.lanes;

  // Places of the scratch rows, modes of the nests.
  if (scratch.size() != plan.arrays.size())
    return fail() << "has " << scratch.size() << " scratch places for "
                  << plan.arrays.size() << " scratch rows";
  unsigned i = 0;
  for (auto &[value, a] : plan.arrays) {
    auto name = dyn_cast<StringAttr>(scratch[i++]);
    std::optional<ArrayKind> kind =
        name ? arrayKindNamed(name.getValue()) : std::nullopt;
    if (!kind)
      return fail() << "scratch place " << i - 1
                    << " must be lane, replicated or shared";
    a.kind = *kind;
    if (a.kind == ArrayKind::Lane &&
        (a.viewed || a.norm.empty() || !plan.isPrefixOfKeys(a.norm)))
      return fail() << "scratch row " << i - 1
                    << " cannot live in lanes: its shape is not a prefix of "
                       "the keys";
  }
  if (nests.size() != analysis.roots.size())
    return fail() << "has " << nests.size() << " nest modes for "
                  << analysis.roots.size() << " loop nests";
  SmallVector<NestMode> modes;
  for (auto [index, attr] : llvm::enumerate(nests)) {
    auto name = dyn_cast<StringAttr>(attr);
    std::optional<NestMode> mode =
        name ? nestModeNamed(name.getValue()) : std::nullopt;
    if (!mode)
      return fail() << "nest mode " << index
                    << " must be expanded, flat, lane-zero or redundant";
    modes.push_back(*mode);
  }
  // With more than one lane the recorded places and modes must be those the
  // access rules allow: one round of decisions changes nothing. (With one
  // lane every row and nest is the thread's.)
  if (plan.lanes > 1) {
    SmallVector<ArrayKind> places;
    for (auto &[value, a] : plan.arrays)
      places.push_back(a.kind);
    analysis.decide();
    i = 0;
    for (auto &[value, a] : plan.arrays) {
      if (a.kind != places[i])
        return fail() << "scratch place " << i << " is '" << nameOf(places[i])
                      << "' but the row is accessed as '" << nameOf(a.kind)
                      << "'";
      ++i;
    }
    for (auto [index, root] : llvm::enumerate(analysis.roots))
      if (plan.nests[root].mode != modes[index])
        return fail() << "nest mode " << index << " is '"
                      << nameOf(modes[index]) << "' but the nest runs '"
                      << nameOf(plan.nests[root].mode) << "'";
  }
  for (auto [index, root] : llvm::enumerate(analysis.roots)) {
    NestPlan &nest = plan.nests[root];
    nest.mode = modes[index];
    unsigned q = std::min<unsigned>(nest.depth, plan.keyShape.size());
    bool compatible =
        q >= 1 && std::equal(nest.trips.begin(), nest.trips.begin() + q,
                             plan.keyShape.begin());
    if ((nest.mode == NestMode::Expanded && !compatible) ||
        (nest.mode == NestMode::Flat && nest.depth == 0))
      return fail() << "nest mode " << index << " is '" << nameOf(nest.mode)
                    << "' but the nest is not parallel over the keys";
    nest.p = nest.mode == NestMode::Expanded ? q : 0;
  }
  analysis.derive();
  if (plan.sharedBytes != sharedBytes)
    return fail() << "shared_bytes must be " << plan.sharedBytes
                  << ", the bytes of one row of every shared scratch row";
  if (plan.sharedBytes * plan.groups > kSharedBytesPerBlock)
    return fail() << "needs " << plan.sharedBytes * plan.groups
                  << " bytes of shared memory per block; at most "
                  << kSharedBytesPerBlock;
  // Absent in kernel IR written before rows were split: no split.
  int64_t splitAbove = dict.get("split_above") ? number("split_above") : 0;
  planSplit(kernel, plan);
  if (splitAbove != 0 && splitAbove != plan.splitAbove) {
    if (!plan.splitAbove)
      return fail() << "split_above must be 0: the kernel cannot split rows "
                       "(its edge loop keeps state that is not a tagged "
                       "reduction in registers)";
    return fail() << "split_above must be 0 or " << plan.splitAbove;
  }
  plan.splitAbove = splitAbove;
  if (!splitAbove)
    plan.splitState.clear();
  return success();
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace {

struct MapGpuPass : public gnnc::gnnk::impl::GNNKMapGpuBase<MapGpuPass> {
  void runOnOperation() override {
    for (auto kernel : getOperation().getOps<func::FuncOp>()) {
      if (getNumKernelOutputs(kernel) < 0)
        continue;
      // A kernel no GPU group can run keeps no attribute: the C++ printer
      // does not need one, and the CUDA printer, which maps such a kernel
      // itself, reports why.
      KernelPlan plan;
      LogicalResult planned = failure();
      {
        ScopedDiagnosticHandler quiet(&getContext(),
                                      [](Diagnostic &) { return success(); });
        planned = planKernel(kernel, plan);
      }
      if (succeeded(planned))
        recordPlan(kernel, plan);
      else
        kernel->removeAttr(kGpuMappingAttrName);
    }
  }
};

} // namespace
