//===- Passes.td - Passes of the gnn dialect ---------------*- tablegen -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_DIALECT_GNN_TRANSFORMS_PASSES_TD
#define GNNC_DIALECT_GNN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def GNNInference : Pass<"gnn-inference", "mlir::ModuleOp"> {
  let summary = "Specialise a module for inference";
  let description = [{
    Dropout is the identity at inference time: every `gnn.dropout` is
    replaced by its input. Run it before fusion when compiling a model for
    inference only, so that dropout does not split fusible chains.
  }];
  let dependentDialects = ["::gnnc::gnn::GNNDialect"];
}

#endif // GNNC_DIALECT_GNN_TRANSFORMS_PASSES_TD
