//===- Passes.td - Preparation of kernel IR for printing ---*- tablegen -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_TARGET_PASSES_TD
#define GNNC_TARGET_PASSES_TD

include "mlir/Pass/PassBase.td"

def GNNKPlanHostFusion : Pass<"gnnk-plan-host-fusion", "mlir::ModuleOp"> {
  let summary = "Decide the fused host calls of the C++ runtime and record them";
  let description = [{
    In every host function (neither a kernel nor external), marks the host
    ops that the C++ printer prints as one runtime call with another:

    - a `gnn.transpose` of a matrix that only `gnn.matmul`s read gets
      `gnn.host_fusion = "transposed_read"`: the matmuls read its input
      transposed in place (`rt::matmulT`) and the transpose prints nothing;
    - a `gnn.reduce sum` of a whole edge row of `mul(gather(x), gather(y))`
      (the gradient of an edge weight), each intermediate read once, gets
      `gnn.host_fusion = "gather_dot"`, and it, the product and both
      gathers get `gnn.fusion_group = k`: one pass over the edges
      (`rt::gatherDot`) computes the reduce, the others print nothing;
    - a `gnn.matmul` whose left operand is a `gnn.dropout` of a function
      argument at least 256 wide that nothing else reads, directly or
      through a transpose, gets `gnn.host_fusion = "dropout_matmul"`, and
      it and the dropout get `gnn.fusion_group = k`: the product drops and
      reads x in one pass, skipping its zeros (`rt::dropoutMatmul`,
      `rt::dropoutTransposeMatmul`), and the dropout prints nothing.

    The function gets `gnn.host_fusions = n`, the number of fusions
    (0 when none). The CUDA printer prints all but the gather-dots and the
    dropout-matmuls.
  }];
}

def GNNKPlanWorkspace : Pass<"gnnk-plan-workspace", "mlir::ModuleOp"> {
  let summary = "Decide the workspace of every host function and record it";
  let description = [{
    For every host function and printer (`cpp`, `cuda`), decides which
    values and ops need bytes of the caller's workspace, in which order they
    are placed and between which ops each is live, and records it as
    `gnn.workspace = {cpp = [...], cuda = [...]}` on the function. Each
    slot is a dictionary:

    - `kind`: `buffer` (result `result` of the op, an intermediate that is
      neither a view, nor a constant the printer keeps elsewhere, nor
      computed directly into an output), `scratch` (the op's own scratch:
      int64 per graph of a C++ readout, partial results of a CUDA
      reduction) or `callee` (the workspace of the function a `func.call`
      calls);
    - `op`: the op's position in the body (0-based, every op counted);
    - `bytes`: the size as a symbolic expression of the graph sizes
      (`N`, `E`, `N_src`, `B`, ...), every slot rounded up to 64 bytes
      (`align64(4 * (N * 16))`);
    - `live = [first, last]`: from the op to the last op that reads the
      value (through views too).

    The entry point's Layout places the slots in this order at run time,
    when the sizes are known: each at the lowest 64-byte aligned offset,
    among 0 and the ends of the earlier slots live at the same time, that
    overlaps none of them, so
    slots that are never live together share bytes. The `cpp` plan follows
    the host fusions of `gnnk-plan-host-fusion` (run first where a function
    has none). A module whose host code the shape analysis cannot handle
    gets no plan; the printer, which plans kernel IR without one itself,
    reports why.
  }];
}

#endif // GNNC_TARGET_PASSES_TD
