//===- BoundScratch.cpp - Large per-vertex scratch into the workspace -----===//
//
// Part of gnnc.
//
// A kernel's per-vertex scratch arrays (memref.alloca in gnnk.for_vertices)
// print as stack arrays (C++) or per-thread arrays (CUDA). Past a budget,
// the largest of them becomes a row of an extra kernel output:
//
//   gnnk.for_vertices %v in %g by dst {          (kernel args ..., %s)
//     %acc = memref.alloca() : memref<S>    =>     load/store %s[%v, i...]
//
// and each launch gets the result `!gnn.tensor<dst, S>` that backs it.
//
//===----------------------------------------------------------------------===//

#include "gnnc/Dialect/GNNK/Transforms/Passes.h"

#include "gnnc/Dialect/GNN/IR/GNN.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/STLExtras.h"

namespace gnnc::gnnk {
#define GEN_PASS_DEF_GNNKBOUNDSCRATCH
#include "gnnc/Dialect/GNNK/Transforms/Passes.h.inc"
} // namespace gnnc::gnnk

using namespace mlir;
using namespace gnnc;
using namespace gnnc::gnnk;

namespace {

int64_t bytesOf(memref::AllocaOp alloca) {
  MemRefType type = alloca.getType();
  if (!type.hasStaticShape())
    return 0;
  unsigned bits = type.getElementType().isIntOrFloat()
                      ? type.getElementType().getIntOrFloatBitWidth()
                      : 64;
  return type.getNumElements() * static_cast<int64_t>((bits + 7) / 8);
}

/// Whether every use of `alloca` is a load of it or a store into it, so
/// that its accesses can move to another buffer.
bool onlyLoadedAndStored(memref::AllocaOp alloca) {
  return llvm::all_of(alloca->getUses(), [](OpOperand &use) {
    if (isa<memref::LoadOp>(use.getOwner()))
      return true;
    auto store = dyn_cast<memref::StoreOp>(use.getOwner());
    return store && use.get() == store.getMemRef() &&
           store.getValueToStore() != use.get();
  });
}

/// Makes `alloca` a row of a new last argument of `kernel`, indexed by the
/// vertex `v`.
void moveToArgument(func::FuncOp kernel, memref::AllocaOp alloca, Value v) {
  MemRefType type = alloca.getType();
  SmallVector<int64_t> shape{ShapedType::kDynamic};
  shape.append(type.getShape().begin(), type.getShape().end());
  auto rowsType = MemRefType::get(shape, type.getElementType());
  unsigned position = kernel.getNumArguments();
  kernel.insertArgument(position, rowsType, DictionaryAttr(), alloca.getLoc());
  Value rows = kernel.getArgument(position);
  for (Operation *user : llvm::make_early_inc_range(alloca->getUsers())) {
    OpBuilder b(user);
    if (auto load = dyn_cast<memref::LoadOp>(user)) {
      SmallVector<Value> indices{v};
      indices.append(load.getIndices().begin(), load.getIndices().end());
      auto moved = b.create<memref::LoadOp>(load.getLoc(), rows, indices);
      load.replaceAllUsesWith(moved.getResult());
      load.erase();
      continue;
    }
    auto store = cast<memref::StoreOp>(user);
    SmallVector<Value> indices{v};
    indices.append(store.getIndices().begin(), store.getIndices().end());
    b.create<memref::StoreOp>(store.getLoc(), store.getValueToStore(), rows,
                              indices);
    store.erase();
  }
  alloca.erase();
}

/// Gives every launch of `kernel` in `module` results for its new outputs:
/// one `side` tensor (or memref, for lowered host code) per row buffer.
LogicalResult addLaunchResults(ModuleOp module, func::FuncOp kernel,
                               ArrayRef<MemRefType> added, Side side) {
  SmallVector<LaunchOp> launches;
  module.walk([&](LaunchOp launch) {
    if (launch.getKernel() == kernel.getName())
      launches.push_back(launch);
  });
  for (LaunchOp launch : launches) {
    bool host = isa<gnn::GraphType>(launch.getArgs().front().getType());
    SmallVector<Type> types(launch.getResultTypes());
    for (MemRefType rows : added) {
      if (!host) {
        types.push_back(rows);
        continue;
      }
      types.push_back(gnn::DomainTensorType::get(
          launch.getContext(),
          side == Side::dst ? gnn::Domain::dst : gnn::Domain::src,
          rows.getShape().drop_front(), rows.getElementType()));
    }
    OpBuilder b(launch);
    auto grown = b.create<LaunchOp>(launch.getLoc(), types,
                                    launch.getKernelAttr(), launch.getArgs());
    grown->setDiscardableAttrs(launch->getDiscardableAttrDictionary());
    for (auto [old, now] : llvm::zip(launch.getResults(), grown.getResults()))
      old.replaceAllUsesWith(now);
    launch.erase();
  }
  return success();
}

struct BoundScratchPass
    : public gnnc::gnnk::impl::GNNKBoundScratchBase<BoundScratchPass> {
  using GNNKBoundScratchBase::GNNKBoundScratchBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> kernels;
    for (auto func : module.getOps<func::FuncOp>())
      if (getNumKernelOutputs(func) >= 0)
        kernels.push_back(func);
    for (func::FuncOp kernel : kernels)
      if (failed(bound(module, kernel)))
        return signalPassFailure();
  }

  LogicalResult bound(ModuleOp module, func::FuncOp kernel) {
    SmallVector<ForVerticesOp> loops;
    kernel.walk([&](ForVerticesOp loop) { loops.push_back(loop); });
    SmallVector<MemRefType> added;
    Side side = Side::dst;
    for (ForVerticesOp loop : loops) {
      Block &body = loop.getBody().front();
      SmallVector<memref::AllocaOp> allocas;
      int64_t total = 0;
      loop.walk([&](memref::AllocaOp alloca) {
        total += bytesOf(alloca);
        if (alloca->getBlock() == &body &&
            alloca.getType().getElementType().isF32() &&
            alloca.getType().hasStaticShape() && onlyLoadedAndStored(alloca))
          allocas.push_back(alloca);
      });
      if (total <= maxBytes)
        continue;
      llvm::stable_sort(allocas, [](memref::AllocaOp a, memref::AllocaOp b) {
        return bytesOf(a) > bytesOf(b);
      });
      for (memref::AllocaOp alloca : allocas) {
        if (total <= maxBytes)
          break;
        total -= bytesOf(alloca);
        SmallVector<int64_t> shape{ShapedType::kDynamic};
        shape.append(alloca.getType().getShape().begin(),
                     alloca.getType().getShape().end());
        added.push_back(
            MemRefType::get(shape, alloca.getType().getElementType()));
        moveToArgument(kernel, alloca, body.getArgument(0));
      }
      if (total > maxBytes)
        return kernel.emitError("a vertex of this kernel needs ")
               << total << " bytes of scratch that cannot move off the "
               << "stack; at most " << maxBytes << " are allowed";
      side = loop.getBy();
    }
    if (added.empty())
      return success();
    int64_t outputs =
        getNumKernelOutputs(kernel) + static_cast<int64_t>(added.size());
    OpBuilder attrs(kernel.getContext());
    kernel->setAttr(GNNKDialect::getKernelAttrName(),
                    attrs.getDictionaryAttr(attrs.getNamedAttr(
                        kNumOutputsName, attrs.getI64IntegerAttr(outputs))));
    return addLaunchResults(module, kernel, added, side);
  }
};

} // namespace
