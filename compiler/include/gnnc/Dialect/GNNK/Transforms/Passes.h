//===- Passes.h - Passes producing the gnnk dialect -------------*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_DIALECT_GNNK_TRANSFORMS_PASSES_H
#define GNNC_DIALECT_GNNK_TRANSFORMS_PASSES_H

#include "gnnc/Conversion/GNNToGNNK/GNNToGNNK.h"
#include "gnnc/Dialect/GNNK/IR/GNNK.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace gnnc::gnnk {

#define GEN_PASS_DECL
#include "gnnc/Dialect/GNNK/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "gnnc/Dialect/GNNK/Transforms/Passes.h.inc"

/// Adds the kernel pipeline: gnn-lower-to-kernels (the conversion,
/// gnnc/Conversion/Passes.td), then gnnk-bound-scratch, then gnnk-map-gpu
/// (whose `gnnk.gpu` attributes the CUDA printer reads and the C++ printer
/// ignores). gnnc runs it, followed by the preparation for the printers, as
/// gnnc::target::buildKernelIRPipeline (gnnc/Target/Passes.h).
void buildKernelPipeline(mlir::OpPassManager &pm);

} // namespace gnnc::gnnk

#endif // GNNC_DIALECT_GNNK_TRANSFORMS_PASSES_H
