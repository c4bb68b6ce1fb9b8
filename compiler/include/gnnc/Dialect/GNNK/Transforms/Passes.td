//===- Passes.td - Passes producing the gnnk dialect -------*- tablegen -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_DIALECT_GNNK_TRANSFORMS_PASSES_TD
#define GNNC_DIALECT_GNNK_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def GNNLowerToKernels : Pass<"gnn-lower-to-kernels", "mlir::ModuleOp"> {
  let summary = "Lower every gnn.aggregate to a gnnk kernel and a launch";
  let description = [{
    For each function, the k-th `gnn.aggregate` (in program order) becomes
    a kernel function `@<function>.aggregate<k>` placed after the function:
    a `func.func` with the `gnnk.kernel` attribute whose arguments are the
    graph, one memref per input (`memref<?xS>` for src, dst and edge inputs
    with row shape S, dense inputs as they are) and one memref per result.
    The aggregate is replaced by a `gnnk.launch` of the kernel, so the
    surrounding gnn code stays as it was.

    The kernel is one `gnnk.for_vertices` over the aggregate's side. Per
    vertex it initialises the reductions' accumulators (`memref.alloca`s of
    the row shape), runs `gnnk.for_edges` over the vertex's edges in CSR
    (CSC) order, in which the body's ops are computed element by element
    into scratch rows with `scf.for` nests and the reductions are updated
    (`softmax_sum` online: running maximum, rescaled sum and accumulator),
    then finalises (`mean` divides by the degree, `softmax_sum` by the sum,
    an empty neighbourhood gives 0) and stores the output row. The
    arithmetic follows the reference interpreter operation by operation.
    Every generated op has the location of the gnn op it comes from.
  }];
  let dependentDialects = [
    "::gnnc::gnnk::GNNKDialect", "::mlir::arith::ArithDialect",
    "::mlir::func::FuncDialect", "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect"
  ];
}

def GNNKBoundScratch : Pass<"gnnk-bound-scratch", "mlir::ModuleOp"> {
  let summary = "Move large per-vertex scratch of kernels off the stack";
  let description = [{
    The `memref.alloca`s of a kernel's vertex loop are per-iteration scratch:
    arrays on the stack of a CPU thread, registers, local or shared memory of
    a GPU thread group. Their size is known at compile time but unbounded
    (a 65536-head attention has rows of 2^32 floats), so this pass bounds
    it: while the f32 scratch of one iteration exceeds `max-bytes`, its
    largest array that is only loaded and stored becomes one row of a new
    output of the kernel, `memref<?xS>` indexed by the loop's vertex, and
    every `gnnk.launch` of the kernel gets the matching result, a `src` or
    `dst` tensor that the host places in the workspace like any other
    intermediate. A kernel whose scratch stays over the budget after that
    is an error.
  }];
  let options = [
    Option<"maxBytes", "max-bytes", "int64_t", /*default=*/"65536",
           "Bytes of stack scratch one vertex iteration may use">
  ];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

#endif // GNNC_DIALECT_GNNK_TRANSFORMS_PASSES_TD
