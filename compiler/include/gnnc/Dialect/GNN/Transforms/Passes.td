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

def GNNFuse : Pass<"gnn-fuse", "mlir::ModuleOp"> {
  let summary = "Fuse gather-injective-scatter chains into gnn.aggregate";
  let description = [{
    Replaces every `gnn.scatter` and the per-edge computation feeding it by
    one `gnn.aggregate`: gathers become inputs, row-local ops move into its
    body, `edge_softmax` (or `exp(l) / sum(exp(l))`) followed by a weighted
    sum becomes an online `softmax_sum` reduction, and independent
    aggregations over the same edges share one op. Afterwards no edge
    tensor is left that only fed fused chains.
  }];
  let dependentDialects = ["::gnnc::gnn::GNNDialect",
                           "::mlir::func::FuncDialect"];
}

def GNNAutodiff : Pass<"gnn-autodiff", "mlir::ModuleOp"> {
  let summary = "Write the reverse-mode derivative of every unfused function";
  let description = [{
    For every function `@F` without a `gnn.aggregate` (run it before
    fusion), adds `@F.backward` (attribute `gnn.backward_of = @F`): its
    arguments are F's arguments followed by the cotangent of F's result
    (same type), and it returns the gradient of every tensor argument of F
    (inputs and parameters, in argument order; each result carries
    `gnn.grad_of` = the argument's name or parameter path). The backward
    recomputes the forward ops it needs, then applies the vector-Jacobian
    product of each op in reverse, written as gnn ops (gathers become
    scatters, scatters gathers, max/min aggregations a `gnn.scatter_select`
    mask, dropout the same dropout with the same seed, a call of a layer a
    call of that layer's backward). Ties of max/min go where the forward op
    took its value: the first extreme edge in CSR/CSC order, the first
    vertex of a graph, the first element in row-major order, and the left
    operand of `gnn.binary max|min`.
  }];
  let dependentDialects = ["::gnnc::gnn::GNNDialect",
                           "::mlir::func::FuncDialect"];
}

def GNNReportIntermediates : Pass<"gnn-report-intermediates", "mlir::ModuleOp"> {
  let summary = "Print the bytes of intermediate tensors of each function";
  let description = [{
    For each function, sums the sizes of the tensors its ops produce outside
    `gnn.aggregate` bodies (arguments excluded), with run-time sizes taken
    from the options: a `?` vertex axis counts `vertices` rows, a vertex
    tensor `vertices` rows, an edge tensor `edges` rows. Prints one line per
    function and a breakdown by domain to standard output; the IR is left
    unchanged.
  }];
  let options = [
    Option<"vertices", "vertices", "int64_t", "2708",
           "Number of vertices (N)">,
    Option<"edges", "edges", "int64_t", "10556", "Number of edges (E)">,
  ];
}

#endif // GNNC_DIALECT_GNN_TRANSFORMS_PASSES_TD
