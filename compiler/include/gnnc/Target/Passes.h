//===- Passes.h - Preparation of kernel IR for printing ---------*- C++ -*-===//
//
// Part of gnnc. The passes that record, on kernel IR, what the printers
// decide before printing (Passes.td, gnnc/Target/HostPlan.h), their
// registration for gnn-opt, and the pipeline that takes gnn IR to the kernel
// IR the printers read.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_TARGET_PASSES_H
#define GNNC_TARGET_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace gnnc::target {

#define GEN_PASS_DECL
#include "gnnc/Target/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "gnnc/Target/Passes.h.inc"

/// Adds the preparation of kernel IR for the printers:
/// gnnk-plan-host-fusion, then gnnk-plan-workspace (the host plan both
/// printers read).
void buildEmissionPreparation(mlir::OpPassManager &pm);

/// Adds what `gnnc --emit=kernel-ir|cpp|cuda` runs after the fusion
/// pipeline: the kernel pipeline (gnnc::gnnk::buildKernelPipeline), then
/// the preparation for the printers (buildEmissionPreparation).
void buildKernelIRPipeline(mlir::OpPassManager &pm);

} // namespace gnnc::target

#endif // GNNC_TARGET_PASSES_H
