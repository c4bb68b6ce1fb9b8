//===- Passes.td - Passes on the gnnk dialect --------------*- tablegen -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_DIALECT_GNNK_TRANSFORMS_PASSES_TD
#define GNNC_DIALECT_GNNK_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

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

def GNNKMapGpu : Pass<"gnnk-map-gpu", "mlir::ModuleOp"> {
  let summary = "Decide how each kernel runs on a GPU and record it";
  let description = [{
    For every `gnnk.kernel` function, decides how a GPU runs it (the group
    of lanes per row of the vertex loop, the key shape spread over the
    lanes, the vector width, where each scratch row lives, how each feature
    loop nest runs, the rows of a block) and records the decisions as the
    kernel's `gnnk.gpu` dictionary (docs/architecture.md, "Stage 6: kernel
    IR"), which the CUDA printer reads. A kernel that no group of lanes can
    run keeps no `gnnk.gpu`; the C++ printer ignores the attribute.
  }];
}

#endif // GNNC_DIALECT_GNNK_TRANSFORMS_PASSES_TD
