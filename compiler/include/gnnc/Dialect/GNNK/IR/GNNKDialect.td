//===- GNNKDialect.td - The gnnk kernel dialect ------------*- tablegen -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_DIALECT_GNNK_IR_GNNKDIALECT_TD
#define GNNC_DIALECT_GNNK_IR_GNNKDIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def GNNK_Dialect : Dialect {
  let name = "gnnk";
  let cppNamespace = "::gnnc::gnnk";
  let summary = "Backend-neutral kernels of fused GNN aggregations";
  let description = [{
    The `gnnk` dialect holds what standard MLIR dialects lack to write a
    fused aggregation as a kernel that both the C++ (OpenMP) and the CUDA
    printers can consume: a graph operand, a parallel loop over the vertices
    of one side of the graph, a sequential loop over the edges of one vertex,
    the vertex degree and the counter-based dropout mask. Everything else in
    a kernel is standard: `scf.for` loops over row elements (feature loops,
    without iteration arguments), `arith` and `math` for scalars, and
    `memref` for buffers (`memref<?x8x8xf32>` for vertex and edge tensors,
    `memref.alloca` for per-vertex scratch).

    A kernel is a `func.func` carrying the `gnnk.kernel` attribute: its
    first argument is the `!gnnk.graph`, then one memref per input, then one
    memref per output; it returns nothing. Host code calls it with
    `gnnk.launch`, which takes and returns `gnn` tensors.

    ```mlir
    func.func @f.aggregate0(%g: !gnnk.graph, %x: memref<?x16xf32>,
                            %out: memref<?x16xf32>)
        attributes {gnnk.kernel = {num_outputs = 1 : i64}} {
      gnnk.for_vertices %v in %g by dst {
        gnnk.for_edges %e, %u in %g of %v by dst {
          ...
        }
      }
      return
    }
    ```
  }];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    /// The function attribute that marks a kernel.
    static constexpr ::llvm::StringLiteral getKernelAttrName() {
      return ::llvm::StringLiteral("gnnk.kernel");
    }
  }];
}

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def GNNK_Side : I32EnumAttr<"Side",
    "which end of the edges groups them: dst (CSR) or src (CSC)", [
    I32EnumAttrCase<"dst", 0>, I32EnumAttrCase<"src", 1>]> {
  let cppNamespace = "::gnnc::gnnk";
  let genSpecializedAttr = 0;
}
def GNNK_SideAttr : EnumAttr<GNNK_Dialect, GNNK_Side, "side">;

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

def GNNK_GraphType : TypeDef<GNNK_Dialect, "Graph"> {
  let mnemonic = "graph";
  let summary = "a graph inside a kernel: CSR by destination, CSC by source";
  let description = [{
    The graph a kernel runs over. A backend decides its layout; the kernel
    only reaches it through `gnnk.for_vertices`, `gnnk.for_edges` and
    `gnnk.degree`. For every vertex `v` of the grouping side, the edges are
    visited in CSR order (by destination) or CSC order (by source), as the
    reference interpreter does; each edge has its original id (its position
    in `edge_index`), which indexes edge tensors and the dropout mask.

    ```mlir
    func.func @k(%g: !gnnk.graph)
    ```
  }];
}

#endif // GNNC_DIALECT_GNNK_IR_GNNKDIALECT_TD
