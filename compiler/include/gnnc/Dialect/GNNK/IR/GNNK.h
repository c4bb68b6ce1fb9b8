//===- GNNK.h - The gnnk kernel dialect -------------------------*- C++ -*-===//
//
// Part of gnnc. Include this header for the dialect, its type and its ops.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_DIALECT_GNNK_IR_GNNK_H
#define GNNC_DIALECT_GNNK_IR_GNNK_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/STLExtras.h"

#include <optional>

#include "gnnc/Dialect/GNNK/IR/GNNKEnums.h.inc"

#include "gnnc/Dialect/GNNK/IR/GNNKDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "gnnc/Dialect/GNNK/IR/GNNKAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "gnnc/Dialect/GNNK/IR/GNNKTypes.h.inc"

#define GET_OP_CLASSES
#include "gnnc/Dialect/GNNK/IR/GNNKOps.h.inc"

namespace gnnc::gnnk {

/// The entry of the `gnnk.kernel` dictionary: how many of the kernel's last
/// arguments are outputs.
constexpr llvm::StringLiteral kNumOutputsName = "num_outputs";

/// The kernel attribute of gnnk-map-gpu: how a GPU runs the kernel
/// (gnnc/Dialect/GNNK/Transforms/GpuMapping.h).
constexpr llvm::StringLiteral kGpuMappingAttrName = "gnnk.gpu";

/// On a memref.alloca of a vertex loop that holds a reduction's state:
/// `gnnk.fold = {kind = K, reduction = i}`, K one of kFoldKinds (the
/// accumulator of a sum or mean, of a max or min; the first-edge flag; the
/// running maximum, the rescaled running sum and the rescaled accumulator of
/// the online softmax of reduction i). The CUDA printer merges partial
/// states by it when it splits a row over several groups of lanes.
constexpr llvm::StringLiteral kFoldAttrName = "gnnk.fold";
constexpr llvm::StringLiteral kFoldKinds[] = {
    "sum", "max", "min", "first", "online_max", "online_sum", "online_acc"};
/// The kinds of kFoldKinds, in its order.
enum class FoldKind { Sum, Max, Min, First, OnlineMax, OnlineSum, OnlineAcc };

/// The FoldKind spelt `name`, or none.
inline std::optional<FoldKind> foldKindNamed(llvm::StringRef name) {
  for (auto [i, kind] : llvm::enumerate(kFoldKinds))
    if (kind == name)
      return static_cast<FoldKind>(i);
  return std::nullopt;
}

/// The type a kernel sees for a host value of type `hostType`: a
/// `!gnn.graph` becomes `!gnnk.graph`; a `src`, `dst` or `edge`
/// `!gnn.tensor` with row shape S becomes `memref<?xS>`, a dense one a
/// memref of its shape. Kernel types (a `!gnnk.graph`, a memref) map to
/// themselves; anything else gives a null type.
mlir::Type kernelTypeOf(mlir::Type hostType);

/// The number of outputs of a `gnnk.kernel` function, or -1 when `func`
/// is not one.
int64_t getNumKernelOutputs(mlir::Operation *func);

} // namespace gnnc::gnnk

#endif // GNNC_DIALECT_GNNK_IR_GNNK_H
