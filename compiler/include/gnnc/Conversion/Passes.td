//===- Passes.td - Conversions between gnnc's dialects -----*- tablegen -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_CONVERSION_PASSES_TD
#define GNNC_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// GNNToGNNK
//===----------------------------------------------------------------------===//

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

#endif // GNNC_CONVERSION_PASSES_TD
