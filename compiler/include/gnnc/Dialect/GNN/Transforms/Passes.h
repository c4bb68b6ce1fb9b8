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

/// What gnn-remat does, callable directly: splits every @F / @F.backward
/// pair of `module` as `options` say and, when `report` is not null,
/// prints every decision to it.
mlir::LogicalResult runRemat(mlir::ModuleOp module,
                             const GNNRematOptions &options,
                             llvm::raw_ostream *report);

/// Adds the training pipeline: gnn-autodiff, gnn-remat with `remat`, then
/// the fusion pipeline, so that @F, @F.train and @F.backward all fuse.
void buildTrainingPipeline(mlir::OpPassManager &pm,
                           const GNNRematOptions &remat = {});

} // namespace gnnc::gnn

#endif // GNNC_DIALECT_GNN_TRANSFORMS_PASSES_H
