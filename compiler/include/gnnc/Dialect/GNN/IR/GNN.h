//===- GNN.h - The gnn dialect ----------------------------------*- C++ -*-===//
//
// Part of gnnc. Include this header for the dialect, its types and its ops.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_DIALECT_GNN_IR_GNN_H
#define GNNC_DIALECT_GNN_IR_GNN_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include <string>

#include "gnnc/Dialect/GNN/IR/GNNEnums.h.inc"

#include "gnnc/Dialect/GNN/IR/GNNDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "gnnc/Dialect/GNN/IR/GNNAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "gnnc/Dialect/GNN/IR/GNNTypes.h.inc"

#define GET_OP_CLASSES
#include "gnnc/Dialect/GNN/IR/GNNOps.h.inc"

namespace gnnc::gnn {
/// The argument attribute that marks a function argument as a parameter;
/// its value is the parameter's path, e.g. "conv1.W".
constexpr llvm::StringLiteral kParamAttrName = "gnn.param";
/// The unit argument attribute of a parameter that is a buffer: state that
/// is not trained, which a training forward updates in place
/// (gnn.update_batch_stats).
constexpr llvm::StringLiteral kBufferAttrName = "gnn.buffer";
/// The argument attribute naming a parameter's initialiser.
constexpr llvm::StringLiteral kInitAttrName = "gnn.init";
/// The argument attribute holding a forward argument's name in the source.
constexpr llvm::StringLiteral kNameAttrName = "gnn.name";
/// The argument attribute holding a tensor argument's shape as written,
/// one string per dimension ("N", "E", "16"), so that run-time sizes can be
/// checked against the graph.
constexpr llvm::StringLiteral kDimsAttrName = "gnn.dims";
/// The argument attribute of a block argument that names its sizes in the
/// source (`g1: Block[N0, N1]`): its sources, its destinations and, when
/// named, its edges ("N0", "N1"). `gnn.dims` of the other arguments use the
/// same names, and two blocks that share a name must agree on that size
/// (the second block's sources are the first block's destinations).
constexpr llvm::StringLiteral kSizesAttrName = "gnn.sizes";
/// Function attribute: "layer" or "model".
constexpr llvm::StringLiteral kKindAttrName = "gnn.kind";
/// Function attribute of a backward function written by gnn-autodiff: the
/// symbol of the function it differentiates.
constexpr llvm::StringLiteral kBackwardOfAttrName = "gnn.backward_of";
/// Result attribute of a backward function: the name or parameter path of
/// the argument whose gradient the result is.
constexpr llvm::StringLiteral kGradOfAttrName = "gnn.grad_of";
/// Function attribute of a saving forward written by gnn-remat: the symbol
/// of the function it computes.
constexpr llvm::StringLiteral kTrainOfAttrName = "gnn.train_of";
/// Result attribute of a saving forward and argument attribute of the
/// backward that reads it: the name of a value kept between the two.
constexpr llvm::StringLiteral kSavedAttrName = "gnn.saved";

/// Op attributes of the host plan (gnnk-plan-host-fusion,
/// gnnc/Target/HostPlan.h): the kind of a host fusion on the op that prints
/// it, the group of the ops a fusion absorbs, and, on a function, how many
/// fusions it has.
constexpr llvm::StringLiteral kHostFusionAttrName = "gnn.host_fusion";
constexpr llvm::StringLiteral kFusionGroupAttrName = "gnn.fusion_group";
constexpr llvm::StringLiteral kHostFusionsAttrName = "gnn.host_fusions";

/// The gnn tensor type of `v`, which must have one.
inline DomainTensorType tensorOf(mlir::Value v) {
  return mlir::cast<DomainTensorType>(v.getType());
}

/// Whether `v` is a gnn tensor of the edge domain.
inline bool isEdge(mlir::Value v) {
  auto t = mlir::dyn_cast<DomainTensorType>(v.getType());
  return t && t.getDomain() == Domain::edge;
}

/// A tensor type as reports print it: its domain, its shape with `?` for a
/// size known at run time, and its element type ("src 8x1xf32",
/// "dense ?x64xf32").
std::string describeType(DomainTensorType type);

/// Whether `v` is a gnn tensor of floats.
inline bool isFloatTensor(mlir::Value v) {
  auto t = mlir::dyn_cast<DomainTensorType>(v.getType());
  return t && mlir::isa<mlir::FloatType>(t.getElementType());
}

/// Whether `fn` compares (1 or 0: it has no gradient).
inline bool isComparison(BinaryFn fn) {
  return fn == BinaryFn::gt || fn == BinaryFn::ge || fn == BinaryFn::eq ||
         fn == BinaryFn::ne;
}
} // namespace gnnc::gnn

#endif // GNNC_DIALECT_GNN_IR_GNN_H
