//===- gnn-opt.cpp - mlir-opt for the gnn dialect -------------------------===//
//
// Part of gnnc. Parses, verifies, transforms and prints gnn IR and the gnnk
// kernel IR; every gnn and gnnk pass, the conversions between them, the
// preparation of kernel IR for the printers and MLIR's generic passes
// (canonicalize, cse, inline, ...) are registered.
//
//===----------------------------------------------------------------------===//

#include "gnnc/Conversion/Passes.h"
#include "gnnc/Dialect/GNN/IR/GNN.h"
#include "gnnc/Dialect/GNN/Transforms/Passes.h"
#include "gnnc/Dialect/GNNK/IR/GNNK.h"
#include "gnnc/Dialect/GNNK/Transforms/Passes.h"
#include "gnnc/Target/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/Extensions/InlinerExtension.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::registerTransformsPasses();
  gnnc::gnn::registerGNNPasses();
  gnnc::gnnk::registerGNNKPasses();
  gnnc::gnnk::registerGNNCConversionPasses();
  gnnc::target::registerGNNCTargetPasses();

  mlir::DialectRegistry registry;
  registry.insert<gnnc::gnn::GNNDialect, mlir::func::FuncDialect>();
  // The kernel IR: gnnk and the standard dialects it is written with.
  registry.insert<gnnc::gnnk::GNNKDialect, mlir::arith::ArithDialect,
                  mlir::math::MathDialect, mlir::memref::MemRefDialect,
                  mlir::scf::SCFDialect>();
  mlir::func::registerInlinerExtension(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "gnn optimizer driver\n", registry));
}
