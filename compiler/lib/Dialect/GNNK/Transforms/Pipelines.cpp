//===- Pipelines.cpp - The kernel pipeline of gnnc ------------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnnc/Dialect/GNNK/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"

void gnnc::gnnk::buildKernelPipeline(mlir::OpPassManager &pm) {
  pm.addPass(createGNNLowerToKernels());
  pm.addPass(createGNNKBoundScratch());
  pm.addPass(createGNNKMapGpu());
}
