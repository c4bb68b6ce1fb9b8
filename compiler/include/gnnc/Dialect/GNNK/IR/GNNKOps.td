//===- GNNKOps.td - Operations of the gnnk dialect ---------*- tablegen -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_DIALECT_GNNK_IR_GNNKOPS_TD
#define GNNC_DIALECT_GNNK_IR_GNNKOPS_TD

include "gnnc/Dialect/GNNK/IR/GNNKDialect.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class GNNK_Op<string mnemonic, list<Trait> traits = []>
    : Op<GNNK_Dialect, mnemonic, traits>;

def GNNK_Graph : Type<CPred<"::llvm::isa<::gnnc::gnnk::GraphType>($_self)">,
                      "gnnk graph", "::gnnc::gnnk::GraphType">,
                 BuildableType<"::gnnc::gnnk::GraphType::get($_builder.getContext())">;

//===----------------------------------------------------------------------===//
// Loops
//===----------------------------------------------------------------------===//

def GNNK_ForVerticesOp : GNNK_Op<"for_vertices", [
    AutomaticAllocationScope, RecursiveMemoryEffects,
    SingleBlockImplicitTerminator<"::gnnc::gnnk::YieldOp">]> {
  let summary = "parallel loop over the vertices of one side of the graph";
  let description = [{
    Runs the body once for every destination vertex (`by dst`: the rows of
    the CSR) or every source vertex (`by src`: the rows of the CSC). The
    iterations are independent: each writes only its own output rows, so a
    backend may run them in any order and in parallel (OpenMP rows on a CPU,
    one warp or thread group per vertex on a GPU). The body has one `index`
    argument, the vertex.

    The op is an automatic allocation scope: `memref.alloca`s in its body
    are private to one iteration (per-vertex accumulators and per-edge
    scratch rows; registers or local arrays in a printed kernel).

    ```mlir
    gnnk.for_vertices %v in %g by dst {
      %acc = memref.alloca() : memref<16xf32>
      ...
    }
    ```
  }];
  let arguments = (ins GNNK_Graph:$graph, GNNK_SideAttr:$by);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasRegionVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    OpBuilder<(ins "::mlir::Value":$graph, "::gnnc::gnnk::Side":$by)>
  ];
  let extraClassDeclaration = [{
    /// The vertex of the current iteration.
    ::mlir::BlockArgument getVertex() { return getBody().getArgument(0); }
    ::mlir::Block *getBodyBlock() { return &getBody().front(); }
  }];
}

def GNNK_ForEdgesOp : GNNK_Op<"for_edges", [
    RecursiveMemoryEffects,
    SingleBlockImplicitTerminator<"::gnnc::gnnk::YieldOp">]> {
  let summary = "sequential loop over the edges of one vertex";
  let description = [{
    Inside `gnnk.for_vertices %v ... by dst` (or `by src`), runs the body
    once for every in-edge of `%v` in CSR order (or out-edge in CSC order),
    one edge after the other: reductions that the body updates see the edges
    in that order, as the reference interpreter does. The body's arguments
    are the edge's original id (its position in `edge_index`: the row of an
    edge tensor) and the neighbour at the other end (the source of an
    in-edge, the destination of an out-edge).

    The body must not allocate: scratch rows are `memref.alloca`s of the
    enclosing `gnnk.for_vertices`, reused by every edge.

    ```mlir
    gnnk.for_edges %e, %u in %g of %v by dst {
      %x = memref.load %h[%u, %i] : memref<?x16xf32>
      ...
    }
    ```
  }];
  let arguments = (ins GNNK_Graph:$graph, Index:$vertex, GNNK_SideAttr:$by);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasRegionVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    OpBuilder<(ins "::mlir::Value":$graph, "::mlir::Value":$vertex,
                   "::gnnc::gnnk::Side":$by)>
  ];
  let extraClassDeclaration = [{
    /// The original id of the current edge.
    ::mlir::BlockArgument getEdge() { return getBody().getArgument(0); }
    /// The vertex at the other end of the current edge.
    ::mlir::BlockArgument getNeighbour() { return getBody().getArgument(1); }
    ::mlir::Block *getBodyBlock() { return &getBody().front(); }
  }];
}

def GNNK_YieldOp : GNNK_Op<"yield", [
    Pure, ReturnLike, Terminator,
    ParentOneOf<["ForVerticesOp", "ForEdgesOp"]>]> {
  let summary = "end of a gnnk loop body";
  let description = [{
    Terminates the body of `gnnk.for_vertices` and `gnnk.for_edges`; it is
    implicit in their custom form.

    ```mlir
    gnnk.yield
    ```
  }];
  let assemblyFormat = "attr-dict";
}

//===----------------------------------------------------------------------===//
// Graph facts and scalars
//===----------------------------------------------------------------------===//

def GNNK_DegreeOp : GNNK_Op<"degree", [Pure]> {
  let summary = "number of edges of one vertex";
  let description = [{
    The number of in-edges of destination `%v` (`by dst`) or out-edges of
    source `%v` (`by src`): how many times `gnnk.for_edges` over the same
    vertex runs its body. Finalisation uses it (`mean`, empty
    neighbourhoods).

    ```mlir
    %n = gnnk.degree %g of %v by dst
    ```
  }];
  let arguments = (ins GNNK_Graph:$graph, Index:$vertex, GNNK_SideAttr:$by);
  let results = (outs Index:$result);
  let assemblyFormat = "$graph `of` $vertex `by` custom<Side>($by) attr-dict";
}

def GNNK_DropoutKeepOp : GNNK_Op<"dropout_keep", [Pure]> {
  let summary = "the multiplier of one element of a dropout mask";
  let description = [{
    Inverted dropout with probability `p`: returns `1 / (1 - p)` if element
    `index` of the tensor dropped with `seed` is kept and 0 if it is
    dropped. The mask is the counter-based hash of the reference
    interpreter (`interp::dropoutKeeps`): splitmix64 of
    `seed * 0x9E3779B97F4A7C15 + index` (unsigned 64-bit arithmetic), whose
    top 53 bits as a double `u` in [0, 1) keep the element when `u >= p`.
    The multiplier is `1 / (1 - p)` computed in double and rounded to the
    result type. Inside an aggregation, `index` is
    `edge * rowSize + element`, so the mask is the one the unfused
    `gnn.dropout` applies to the `[E, ...]` edge tensor.

    ```mlir
    %k = gnnk.dropout_keep %seed, %i, 6.000000e-01 : f32
    ```
  }];
  let arguments = (ins I64:$seed, Index:$index, F64Attr:$p);
  let results = (outs AnyFloat:$result);
  let assemblyFormat = "$seed `,` $index `,` $p attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Host side
//===----------------------------------------------------------------------===//

def GNNK_LaunchOp : GNNK_Op<"launch", [
    Pure, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "run a kernel from host code";
  let description = [{
    Calls the `gnnk.kernel` function `@kernel` on a graph and its inputs and
    returns its outputs. In a `gnn` function the operands and results are
    `gnn` values: the graph (`!gnn.graph`) becomes the kernel's
    `!gnnk.graph`, a `src`, `dst` or `edge` tensor with row shape `S`
    becomes a `memref<?xS>` (one row per vertex or edge) and a dense tensor
    a memref of its shape; each result is a fresh tensor that the kernel
    fills through its output memref. Operands may also be the kernel's own
    types (a graph and memrefs), for host code that is already lowered.

    ```mlir
    %h = gnnk.launch @GCN.conv1.aggregate0(%g, %x)
           : (!gnn.graph<graph>, !gnn.tensor<src, 16xf32>) -> !gnn.tensor<dst, 16xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$kernel, Variadic<AnyType>:$args);
  let results = (outs Variadic<AnyType>:$results);
  let assemblyFormat = [{
    $kernel `(` $args `)` attr-dict `:` functional-type($args, $results)
  }];
  let hasVerifier = 1;
}

#endif // GNNC_DIALECT_GNNK_IR_GNNKOPS_TD
