//===- Passes.h - Passes of the gnn dialect ---------------------*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_DIALECT_GNN_TRANSFORMS_PASSES_H
#define GNNC_DIALECT_GNN_TRANSFORMS_PASSES_H

#include "gnnc/Dialect/GNN/IR/GNN.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace gnnc::gnn {

#define GEN_PASS_DECL
#include "gnnc/Dialect/GNN/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "gnnc/Dialect/GNN/Transforms/Passes.h.inc"

/// Adds the fusion pipeline: canonicalize and CSE (so equal gathers meet),
/// gnn-fuse, then canonicalize and CSE again.
void buildFusionPipeline(mlir::OpPassManager &pm);

} // namespace gnnc::gnn

#endif // GNNC_DIALECT_GNN_TRANSFORMS_PASSES_H
