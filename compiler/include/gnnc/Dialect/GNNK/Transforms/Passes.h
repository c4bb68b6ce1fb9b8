//===- Passes.h - Passes producing the gnnk dialect -------------*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_DIALECT_GNNK_TRANSFORMS_PASSES_H
#define GNNC_DIALECT_GNNK_TRANSFORMS_PASSES_H

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

/// Adds what `gnnc --emit=kernel-ir` runs after the fusion pipeline:
/// gnn-lower-to-kernels, then gnnk-bound-scratch.
void buildKernelPipeline(mlir::OpPassManager &pm);

} // namespace gnnc::gnnk

#endif // GNNC_DIALECT_GNNK_TRANSFORMS_PASSES_H
