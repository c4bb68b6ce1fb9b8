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

def GNNRemat : Pass<"gnn-remat", "mlir::ModuleOp"> {
  let summary = "Split each backward into a saving forward and a backward, "
                "choosing what to store and what to recompute";
  let description = [{
    Runs after gnn-autodiff, before fusion. For every function `@F` with a
    backward function `@F.backward` (which recomputes the whole forward),
    it decides, for each value of the forward that the backward reads,
    whether the forward stores it or the backward recomputes it:

    - per-vertex and dense values are stored, except views and graph facts
      (attach, collect, reshape, constants, degrees, transposes of
      arguments), which are recomputed for free;
    - per-edge values follow `policy`: `never` stores every one, `always`
      recomputes every one from per-vertex values, `auto` recomputes one
      when the work of recomputing it (the ops of its per-edge cone, in
      flop per edge) is at most `balance` times the bytes a store costs
      (written once, read once);
    - with `always` and `auto`, `edge_softmax` in the backward becomes
      `exp(l - gather(scatter logsumexp(l)))`, so the attention weights are
      rebuilt from one O(vertices) statistic per head instead of being
      stored per edge.

    It adds `@F.train` (attribute `gnn.train_of = @F`): F's arguments, F's
    result followed by the stored values (result attribute `gnn.saved`),
    and rewrites `@F.backward` to take F's arguments, the stored values
    (argument attribute `gnn.saved`) and the cotangent. Calls of layers are
    inlined into both, so a model stores what its layers need. With
    `report`, prints every decision to standard output.
  }];
  let options = [
    Option<"policy", "policy", "std::string", "\"auto\"",
           "auto, always or never">,
    Option<"balance", "balance", "double", "8.0",
           "Flop per byte at which recomputing an edge value costs as much "
           "as storing it">,
    Option<"report", "report", "bool", "false",
           "Print the decisions to standard output">,
    Option<"vertices", "vertices", "int64_t", "2708",
           "Number of vertices (N) for the bytes in the report">,
    Option<"edges", "edges", "int64_t", "13264",
           "Number of edges (E) for the bytes in the report">,
  ];
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
