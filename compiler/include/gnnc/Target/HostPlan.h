//===- HostPlan.h - Host decisions recorded in the kernel IR ----*- C++ -*-===//
//
// Part of gnnc. What the host code of a printer does besides printing ops
// one by one is decided here, before printing, and recorded as attributes of
// the kernel IR (`gnnk-plan-host-fusion`, `gnnk-plan-workspace`;
// docs/architecture.md, "Host plan"):
//
//  - the host fusions of the runtimes: a transpose that matmuls read in
//    place (`gnn.host_fusion = "transposed_read"`); a `broadcast_like`
//    that only elementwise ops read, which read its input in place,
//    broadcasting it as they broadcast their operands
//    (`"broadcast_read"`); `reduce sum` of a product nothing else reads,
//    computed without the product tensor (`"mul_reduce"` on the reduce,
//    rt::mulReduceSum); an `add` of such a product (`"add_mul"` on the
//    add, rt::addMul); and, in the C++ runtime, the gradient of an edge
//    weight, `reduce sum` of `mul(gather(x), gather(y))`, computed in one
//    pass over the edges (`"gather_dot"`). A fusion of several ops has
//    `gnn.fusion_group` on its root and on the ops it absorbs; the
//    function says how many fusions it has (`gnn.host_fusions`);
//  - the workspace of each host function, per printer (`gnn.workspace =
//    {cpp = [...], cuda = [...]}`): its slots in placement order, each with
//    the op that needs it (position in the body), what it holds (a result,
//    the scratch of the op, the workspace of a callee), its bytes as a
//    symbolic expression of the graph sizes, the positions between which it
//    is live, and the earlier slots live at the same time.
//
// The attributes annotate host code, which is gnn dialect, so they are in
// its namespace. The printers read them. On kernel IR without them (written by
// hand, or from a pipeline without the passes), the printer runs the same
// functions first; attributes that do not match the IR are an error.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_TARGET_HOSTPLAN_H
#define GNNC_TARGET_HOSTPLAN_H

#include "gnnc/Dialect/GNN/IR/GNN.h"
#include "gnnc/Target/HostShapes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/ADT/StringRef.h"

#include <functional>
#include <string>
#include <vector>

namespace gnnc::target {

/// Attribute names of the host plan.
inline constexpr llvm::StringLiteral kHostFusionAttr = gnn::kHostFusionAttrName;
inline constexpr llvm::StringLiteral kFusionGroupAttr =
    gnn::kFusionGroupAttrName;
inline constexpr llvm::StringLiteral kHostFusionsAttr =
    gnn::kHostFusionsAttrName;
inline constexpr llvm::StringLiteral kWorkspaceAttr = "gnn.workspace";

/// What of the host plan depends on the printer (and the runtime its host
/// code calls).
struct HostTraits {
  /// The key of its workspace plan ("cpp", "cuda").
  llvm::StringLiteral key;
  /// Whether it prints the host fusions: matmuls that read a transposed
  /// operand in place (rt::matmulT, rt::cuda::matmulT), and, with
  /// `gatherDots`, gather-dot passes (rt::gatherDot).
  bool hostFusions = false;
  /// Whether constants are workspace buffers (device memory).
  bool constantsInWorkspace = false;
  /// Whether the gradients of a backward's inputs may be null.
  bool optionalInputGrads = false;
  /// Scratch of its own: int64 per graph of a readout (C++), partial
  /// results of a reduction (CUDA).
  bool readoutScratch = false;
  bool reduceScratch = false;
  /// Whether it prints the gather-dot fusions (with hostFusions).
  bool gatherDots = false;
  /// Whether it prints the dropout-matmul fusions (with hostFusions).
  bool dropoutMatmuls = false;
};

/// The traits of the C++ and CUDA printers.
const HostTraits &cppHostTraits();
const HostTraits &cudaHostTraits();

/// Whether `func` is a host function (neither a kernel nor external).
bool isHostFunction(mlir::func::FuncOp func);

//===----------------------------------------------------------------------===//
// Host fusions
//===----------------------------------------------------------------------===//

/// The product an add_mul fusion folds into `add`: a `mul` operand that
/// nothing else reads and no other fusion claims (the right one first).
gnn::BinaryOp addedProduct(gnn::BinaryOp add);

/// The dropout whose result `m` reads as its left operand, directly or
/// through a transpose (the forward's `dropout(x) @ w`, the weight
/// gradient's `transpose(dropout(x)) @ dy`), when nothing else reads it and
/// the right operand is read as it is stored; null otherwise.
gnn::DropoutOp droppedLhs(gnn::MatmulOp m);

/// Decides the host fusions of `func` and records them (replacing any).
void planHostFusions(mlir::func::FuncOp func);

/// The host fusions of a function, as a printer uses them.
struct HostFusions {
  /// Transposes that matmuls read in place: views that print nothing.
  llvm::DenseSet<mlir::Operation *> absorbedTransposes;
  /// Broadcasts that elementwise ops read in place: views of their input
  /// that print nothing.
  llvm::DenseSet<mlir::Operation *> absorbedBroadcasts;
  /// The reduces computed as rt::mulReduceSum, with their product.
  llvm::DenseMap<mlir::Operation *, gnn::BinaryOp> mulReduces;
  /// The adds computed as rt::addMul, with the product they add.
  llvm::DenseMap<mlir::Operation *, gnn::BinaryOp> addMuls;
  /// Ops that another op prints.
  llvm::DenseSet<mlir::Operation *> fusedOps;
  /// The reduces computed as one gather-dot pass, with their two gathers.
  llvm::DenseMap<mlir::Operation *, std::pair<gnn::GatherOp, gnn::GatherOp>>
      gatherDots;
  /// The matmuls computed as rt::dropoutMatmul (or, reading it transposed,
  /// rt::dropoutTransposeMatmul), with the dropout they read.
  llvm::DenseMap<mlir::Operation *, gnn::DropoutOp> dropoutMatmuls;
};

/// Whether `op` is a view that a fusion makes of an op that would compute
/// (an absorbed transpose or broadcast).
inline bool isAbsorbed(const HostFusions &fusions, mlir::Operation *op) {
  return fusions.absorbedTransposes.count(op) ||
         fusions.absorbedBroadcasts.count(op);
}

/// The value a view (attach, collect, reshape, an absorbed transpose or
/// broadcast) names.
inline mlir::Value viewedValue(mlir::Operation *view) {
  if (auto b = llvm::dyn_cast<gnn::BroadcastLikeOp>(view))
    return b.getInput();
  return view->getOperand(view->getNumOperands() - 1);
}

/// Reads the recorded host fusions of `func` (the gather-dots and the
/// dropout-matmuls only where `traits` print them); reports an error when
/// they are missing or do not match the IR.
mlir::LogicalResult readHostFusions(mlir::func::FuncOp func,
                                    HostFusions &fusions,
                                    const HostTraits &traits);

//===----------------------------------------------------------------------===//
// Storage and liveness of host values
//===----------------------------------------------------------------------===//

/// Which results of `func` may be null (the gradients of a backward's
/// inputs, where the traits allow it).
llvm::SmallBitVector optionalResults(mlir::func::FuncOp func,
                                     const HostTraits &traits);

/// Which host values of a function are printed, where their buffers come
/// from and how long they live.
class HostStorage {
public:
  /// Analyses `func`, whose shapes are `shapes`; `fusions` are those the
  /// printer prints (none for a printer without host fusions), `optional`
  /// its optional results, `calleeOptional` those of a callee.
  HostStorage(mlir::func::FuncOp func, const FunctionShapes &shapes,
              const HostFusions &fusions, const llvm::SmallBitVector &optional,
              const std::function<llvm::SmallBitVector(llvm::StringRef)>
                  &calleeOptional);

  /// Ops whose results reach the return (the others are not printed).
  llvm::DenseSet<mlir::Operation *> live;
  /// The position of every op of the body, and for every value whose
  /// buffer is its own, the position of the last op that reads it
  /// (through views too).
  llvm::DenseMap<mlir::Operation *, unsigned> position;
  llvm::DenseMap<mlir::Value, unsigned> lastUse;
  /// The results of the function each value and op contributes to.
  llvm::DenseMap<mlir::Value, llvm::SmallBitVector> valueFeeds;
  llvm::DenseMap<mlir::Operation *, llvm::SmallBitVector> opFeeds;
  /// Values computed directly into result i (the others are copied): the
  /// buffer the result is a view of, and, when an elementwise op computes
  /// that in place over an operand that nothing else reads, the operand's.
  llvm::DenseMap<mlir::Value, unsigned> placed;

  /// Ops that only name another buffer.
  bool isView(mlir::Operation *op) const;
  /// Whether a printed op reads `v`'s data.
  bool isUsed(mlir::Value v) const;
  /// The buffer `v` is a view of.
  mlir::Value bufferRoot(mlir::Value v) const;

private:
  const HostFusions &fusions;
};

//===----------------------------------------------------------------------===//
// Workspace
//===----------------------------------------------------------------------===//

/// One slot of a workspace plan.
struct WorkspaceSlot {
  enum Kind { Buffer, Scratch, Callee } kind = Buffer;
  /// The op that needs it (position in the body), and for a buffer the
  /// result it holds.
  unsigned op = 0;
  unsigned result = 0;
  /// Live from op `first` to op `last` (positions).
  unsigned first = 0, last = 0;
  /// Its bytes, symbolic ("align64(4 * (N * 16))").
  std::string bytes;
  /// For a buffer written in place: the earlier buffer slot whose bytes it
  /// takes over (that slot lives on to this one's `last`); -1 otherwise.
  int reuses = -1;
};

/// The buffers `op` may overwrite with its result (in place): the buffer
/// roots (through attach, collect and reshape) of the operands that an
/// elementwise op reads element for element at the element it writes, and
/// reads no other way. Unary ops, dropouts and binary ops (an add_mul with
/// its product's operands) read an operand of their result's shape so.
llvm::SmallVector<mlir::Value, 2> inPlaceOperands(mlir::Operation *op,
                                                  const FunctionShapes &shapes,
                                                  const HostFusions &fusions);

/// Decides the workspace of every host function of `module` for the
/// printer of `traits` and records it under its key (host fusions must be
/// recorded first when the printer prints them). Reports an error on what
/// the shape analysis cannot handle.
mlir::LogicalResult planWorkspaces(mlir::ModuleOp module,
                                   const HostTraits &traits);

/// Reads the recorded workspace of `func` for `traits`; reports an error
/// when it is missing or malformed.
mlir::FailureOr<std::vector<WorkspaceSlot>>
readWorkspace(mlir::func::FuncOp func, const HostTraits &traits);

/// Records what the printer of `traits` needs on the host functions of
/// `module` that lack it: the host fusions, then its workspace plan.
mlir::LogicalResult ensureHostPlan(mlir::ModuleOp module,
                                   const HostTraits &traits);

} // namespace gnnc::target

#endif // GNNC_TARGET_HOSTPLAN_H
