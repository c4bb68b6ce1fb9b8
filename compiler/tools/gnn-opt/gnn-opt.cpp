//===- gnn-opt.cpp - mlir-opt for the gnn dialect -------------------------===//
//
// Part of gnnc. Parses, verifies, transforms and prints gnn IR; every gnn
// pass and MLIR's generic ones (canonicalize, cse, inline, ...) are
// registered.
//
//===----------------------------------------------------------------------===//

#include "gnnc/Dialect/GNN/IR/GNN.h"
#include "gnnc/Dialect/GNN/Transforms/Passes.h"

#include "mlir/Dialect/Func/Extensions/InlinerExtension.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::registerTransformsPasses();
  gnnc::gnn::registerGNNPasses();

  mlir::DialectRegistry registry;
  registry.insert<gnnc::gnn::GNNDialect, mlir::func::FuncDialect>();
  mlir::func::registerInlinerExtension(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "gnn optimizer driver\n", registry));
}
