//===- Pipelines.cpp - From gnn IR to the kernel IR the printers read -----===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnnc/Target/Passes.h"

#include "gnnc/Dialect/GNNK/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"

void gnnc::target::buildEmissionPreparation(mlir::OpPassManager &pm) {
  pm.addPass(createGNNKPlanHostFusion());
  pm.addPass(createGNNKPlanWorkspace());
}

void gnnc::target::buildKernelIRPipeline(mlir::OpPassManager &pm) {
  gnnk::buildKernelPipeline(pm);
  buildEmissionPreparation(pm);
}
