//===- GNNOps.td - Operations of the gnn dialect -----------*- tablegen -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_DIALECT_GNN_IR_GNNOPS_TD
#define GNNC_DIALECT_GNN_IR_GNNOPS_TD

include "gnnc/Dialect/GNN/IR/GNNTypes.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

class GNN_Op<string mnemonic, list<Trait> traits = []>
    : Op<GNN_Dialect, mnemonic, !listconcat([Pure], traits)>;

def GNN_AnyTensor : Type<CPred<"::llvm::isa<::gnnc::gnn::DomainTensorType>($_self)">,
                         "gnn tensor", "::gnnc::gnn::DomainTensorType">;
def GNN_Graph : Type<CPred<"::llvm::isa<::gnnc::gnn::GraphType>($_self)">,
                     "gnn graph", "::gnnc::gnn::GraphType">;

//===----------------------------------------------------------------------===//
// Graph facts
//===----------------------------------------------------------------------===//

def GNN_InDegreeOp : GNN_Op<"in_degree"> {
  let summary = "number of in-edges of every destination vertex";
  let description = [{
    Returns a dense `[N_dst]` tensor of floats: the in-degree of each
    destination vertex (multi-edges count once each, self-loops once).

    ```mlir
    %deg = gnn.in_degree %g : !gnn.graph<graph> -> !gnn.tensor<dense, ?xf32>
    ```
  }];
  let arguments = (ins GNN_Graph:$graph);
  let results = (outs GNN_AnyTensor:$result);
  let assemblyFormat = "$graph attr-dict `:` type($graph) `->` type($result)";
  let hasVerifier = 1;
}

def GNN_OutDegreeOp : GNN_Op<"out_degree"> {
  let summary = "number of out-edges of every source vertex";
  let description = [{
    Returns a dense `[N_src]` tensor of floats.

    ```mlir
    %deg = gnn.out_degree %g : !gnn.graph<graph> -> !gnn.tensor<dense, ?xf32>
    ```
  }];
  let arguments = (ins GNN_Graph:$graph);
  let results = (outs GNN_AnyTensor:$result);
  let assemblyFormat = "$graph attr-dict `:` type($graph) `->` type($result)";
  let hasVerifier = 1;
}

def GNN_NumVerticesOp : GNN_Op<"num_vertices"> {
  let summary = "number of vertices (destinations on a block)";
  let description = [{
    A run-time scalar, in whatever element type the arithmetic around it
    needs.

    ```mlir
    %n = gnn.num_vertices %g : !gnn.graph<graph> -> !gnn.tensor<dense, i64>
    ```
  }];
  let arguments = (ins GNN_Graph:$graph);
  let results = (outs GNN_AnyTensor:$result);
  let assemblyFormat = "$graph attr-dict `:` type($graph) `->` type($result)";
  let hasVerifier = 1;
}

def GNN_NumEdgesOp : GNN_Op<"num_edges"> {
  let summary = "number of edges";
  let description = [{
    A run-time scalar, in whatever element type the arithmetic around it
    needs.

    ```mlir
    %e = gnn.num_edges %g : !gnn.graph<graph> -> !gnn.tensor<dense, i64>
    ```
  }];
  let arguments = (ins GNN_Graph:$graph);
  let results = (outs GNN_AnyTensor:$result);
  let assemblyFormat = "$graph attr-dict `:` type($graph) `->` type($result)";
  let hasVerifier = 1;
}

def GNN_GraphSizesOp : GNN_Op<"graph_sizes"> {
  let summary = "number of vertices of every graph of a batch";
  let description = [{
    Returns a dense `[B]` tensor of floats: how many vertices each member
    graph of a batched graph has (0 for an empty member). The derivative of
    `gnn.readout mean` divides by it.

    ```mlir
    %n = gnn.graph_sizes %g : !gnn.graph<batched> -> !gnn.tensor<dense, ?xf32>
    ```
  }];
  let arguments = (ins GNN_Graph:$graph);
  let results = (outs GNN_AnyTensor:$result);
  let assemblyFormat = "$graph attr-dict `:` type($graph) `->` type($result)";
  let hasVerifier = 1;
}

def GNN_RelationOp : GNN_Op<"relation"> {
  let summary = "one relation of a heterogeneous graph";
  let description = [{
    The edges of one relation, as a homogeneous graph over the same
    vertices.

    ```mlir
    %r = gnn.relation %g "cites" : !gnn.graph<hetero> -> !gnn.graph<graph>
    ```
  }];
  let arguments = (ins GNN_Graph:$graph, StrAttr:$name);
  let results = (outs GNN_Graph:$result);
  let assemblyFormat = "$graph $name attr-dict `:` type($graph) `->` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Moving between domains
//===----------------------------------------------------------------------===//

def GNN_AttachOp : GNN_Op<"attach"> {
  let summary = "view a dense tensor as per-vertex or per-edge rows";
  let description = [{
    The rows of a dense `[N, ...]` tensor become the attribute of the
    source vertices, the destination vertices or the edges (edge ids in
    `edge_index` order). No data moves.

    ```mlir
    %h = gnn.attach %g, %x : !gnn.graph<graph>, !gnn.tensor<dense, ?x16xf32> -> !gnn.tensor<src, 16xf32>
    ```
  }];
  let arguments = (ins GNN_Graph:$graph, GNN_AnyTensor:$input);
  let results = (outs GNN_AnyTensor:$result);
  let assemblyFormat = [{
    $graph `,` $input attr-dict `:` type($graph) `,` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def GNN_CollectOp : GNN_Op<"collect"> {
  let summary = "view per-vertex or per-edge rows as a dense tensor";
  let description = [{
    The inverse of `gnn.attach`: `[v.h for v in g.dst_vertex]`. On an edge
    tensor it gives the `[E, ...]` tensor in edge id order (the front end
    never does this; the derivative of `gnn.attach` to edges does).

    ```mlir
    %d = gnn.collect %g, %h : !gnn.graph<graph>, !gnn.tensor<dst, 16xf32> -> !gnn.tensor<dense, ?x16xf32>
    ```
  }];
  let arguments = (ins GNN_Graph:$graph, GNN_AnyTensor:$input);
  let results = (outs GNN_AnyTensor:$result);
  let assemblyFormat = [{
    $graph `,` $input attr-dict `:` type($graph) `,` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def GNN_SplatOp : GNN_Op<"splat"> {
  let summary = "the same row for every vertex or edge";
  let description = [{
    Broadcasts a dense tensor (without a vertex axis) to every source
    vertex, destination vertex or edge, e.g. `v.h = b` or `[1.0 for u in
    v.innbs]`.

    ```mlir
    %b = gnn.splat %g, %bias : !gnn.graph<graph>, !gnn.tensor<dense, 16xf32> -> !gnn.tensor<dst, 16xf32>
    ```
  }];
  let arguments = (ins GNN_Graph:$graph, GNN_AnyTensor:$input);
  let results = (outs GNN_AnyTensor:$result);
  let assemblyFormat = [{
    $graph `,` $input attr-dict `:` type($graph) `,` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def GNN_GatherOp : GNN_Op<"gather"> {
  let summary = "read a vertex value along every edge";
  let description = [{
    For every edge, the row of its source (operand domain `src`) or of its
    destination (operand domain `dst`). This is `u.h` and `v.h` inside a
    neighbour-list comprehension.

    ```mlir
    %m = gnn.gather %g, %h : !gnn.graph<graph>, !gnn.tensor<src, 16xf32> -> !gnn.tensor<edge, 16xf32>
    ```
  }];
  let arguments = (ins GNN_Graph:$graph, GNN_AnyTensor:$input);
  let results = (outs GNN_AnyTensor:$result);
  let assemblyFormat = [{
    $graph `,` $input attr-dict `:` type($graph) `,` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def GNN_ScatterOp : GNN_Op<"scatter"> {
  let summary = "reduce edge values onto vertices";
  let description = [{
    Reduces the rows of an edge tensor grouped by destination (result
    domain `dst`: `g.sum([...] for u in v.innbs)`) or by source (result
    domain `src`: over out-edges). `sum` of an empty group is 0, and so are
    `mean`, `max` and `min` (as in PyG). Ties in `max`/`min` go to the
    first edge in CSR order. `logsumexp` gives `log(sum_e exp(x_e))`,
    computed as `m + log(sum_e exp(x_e - m))` with `m` the maximum, so it
    never overflows (0 for an empty group); `exp(x - gather(logsumexp(x)))`
    is `edge_softmax(x)`, which is how the backward pass rebuilds attention
    weights from O(vertices) statistics (see gnn-remat).

    ```mlir
    %s = gnn.scatter sum %g, %m : !gnn.graph<graph>, !gnn.tensor<edge, 16xf32> -> !gnn.tensor<dst, 16xf32>
    ```
  }];
  let arguments = (ins GNN_ReduceFn:$fn, GNN_Graph:$graph,
                       GNN_AnyTensor:$input);
  let results = (outs GNN_AnyTensor:$result);
  let assemblyFormat = [{
    $fn $graph `,` $input attr-dict `:` type($graph) `,` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def GNN_ScatterSelectOp : GNN_Op<"scatter_select"> {
  let summary = "which edge a scatter max or min picks";
  let description = [{
    The edge mask of `gnn.scatter max|min` with the same grouping (`by =
    dst`: each destination's in-edges, `by = src`: each source's
    out-edges): an edge tensor of the input's type holding 1 where the edge
    is the one whose element the scatter returns and 0 elsewhere, element
    by element. Ties go to the first extreme edge in CSR (CSC) order, the
    edge `gnn.scatter` keeps, so every vertex with edges has exactly one 1
    per element. The derivative of a scatter max is `gather(dy) * mask`.

    ```mlir
    %m = gnn.scatter_select max %g, %x {by = #gnn<domain dst>} : !gnn.graph<graph>, !gnn.tensor<edge, 16xf32> -> !gnn.tensor<edge, 16xf32>
    ```
  }];
  let arguments = (ins GNN_ReduceFn:$fn, GNN_Graph:$graph,
                       GNN_AnyTensor:$input, GNN_DomainAttr:$by);
  let results = (outs GNN_AnyTensor:$result);
  let assemblyFormat = [{
    $fn $graph `,` $input attr-dict `:` type($graph) `,` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def GNN_EdgeSoftmaxOp : GNN_Op<"edge_softmax"> {
  let summary = "softmax over each vertex's edges";
  let description = [{
    Normalises the rows of an edge tensor, elementwise, over the in-edges of
    each destination (`by = dst`) or the out-edges of each source
    (`by = src`): `exp(x - max) / sum(exp(x - max))`.

    ```mlir
    %a = gnn.edge_softmax %g, %e {by = #gnn<domain dst>} : !gnn.graph<graph>, !gnn.tensor<edge, 8x1xf32> -> !gnn.tensor<edge, 8x1xf32>
    ```
  }];
  let arguments = (ins GNN_Graph:$graph, GNN_AnyTensor:$input,
                       GNN_DomainAttr:$by);
  let results = (outs GNN_AnyTensor:$result);
  let assemblyFormat = [{
    $graph `,` $input attr-dict `:` type($graph) `,` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def GNN_ReadoutOp : GNN_Op<"readout"> {
  let summary = "per-graph reduction over the vertices of a batched graph";
  let description = [{
    `g.sum_nodes`, `g.avg_nodes`, `g.max_nodes`: reduces a dense `[N, ...]`
    tensor to `[B, ...]`, one row per graph. Empty graphs give 0.

    ```mlir
    %r = gnn.readout mean %g, %x : !gnn.graph<batched>, !gnn.tensor<dense, ?x16xf32> -> !gnn.tensor<dense, ?x16xf32>
    ```
  }];
  let arguments = (ins GNN_ReduceFn:$fn, GNN_Graph:$graph,
                       GNN_AnyTensor:$input);
  let results = (outs GNN_AnyTensor:$result);
  let assemblyFormat = [{
    $fn $graph `,` $input attr-dict `:` type($graph) `,` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def GNN_BroadcastGraphsOp : GNN_Op<"broadcast_graphs"> {
  let summary = "the row of each vertex's graph, for every vertex of a batch";
  let description = [{
    The transpose of `gnn.readout sum`: a dense `[B, ...]` tensor (one row
    per member graph) becomes `[N, ...]`, each vertex getting the row of
    the graph it belongs to.

    ```mlir
    %x = gnn.broadcast_graphs %g, %y : !gnn.graph<batched>, !gnn.tensor<dense, ?x16xf32> -> !gnn.tensor<dense, ?x16xf32>
    ```
  }];
  let arguments = (ins GNN_Graph:$graph, GNN_AnyTensor:$input);
  let results = (outs GNN_AnyTensor:$result);
  let assemblyFormat = [{
    $graph `,` $input attr-dict `:` type($graph) `,` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def GNN_ReadoutSelectOp : GNN_Op<"readout_select"> {
  let summary = "which vertex a readout max or min picks";
  let description = [{
    The vertex mask of `gnn.readout max|min`: a dense `[N, ...]` tensor of
    the input's type holding 1 where the vertex is the one whose element
    the readout returns for its graph and 0 elsewhere, element by element.
    Ties go to the first extreme vertex (lowest id), the one `gnn.readout`
    keeps.

    ```mlir
    %m = gnn.readout_select max %g, %x : !gnn.graph<batched>, !gnn.tensor<dense, ?x16xf32> -> !gnn.tensor<dense, ?x16xf32>
    ```
  }];
  let arguments = (ins GNN_ReduceFn:$fn, GNN_Graph:$graph,
                       GNN_AnyTensor:$input);
  let results = (outs GNN_AnyTensor:$result);
  let assemblyFormat = [{
    $fn $graph `,` $input attr-dict `:` type($graph) `,` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise maths (any domain)
//===----------------------------------------------------------------------===//

def GNN_ConstantOp : GNN_Op<"constant", [ConstantLike]> {
  let summary = "a scalar constant";
  let description = [{
    ```mlir
    %c = gnn.constant 1.0 : !gnn.tensor<dense, f32>
    ```
  }];
  let arguments = (ins F64Attr:$value);
  let results = (outs GNN_AnyTensor:$result);
  let assemblyFormat = "$value attr-dict `:` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def GNN_UnaryOp : GNN_Op<"unary", [SameOperandsAndResultType]> {
  let summary = "elementwise function";
  let description = [{
    `neg exp log sqrt rsqrt abs relu sigmoid tanh gelu erf sin cos` and, with
    `alpha`, `elu` (alpha) and `leaky_relu` (negative slope). `gelu` is the
    exact (erf) form. The language has no `erf`; the derivative of `gelu`
    (written by `gnn-autodiff`) uses it.

    ```mlir
    %y = gnn.unary leaky_relu %x {alpha = 2.000000e-01 : f64} : !gnn.tensor<edge, 8x1xf32>
    ```
  }];
  let arguments = (ins GNN_UnaryFn:$fn, GNN_AnyTensor:$input,
                       OptionalAttr<F64Attr>:$alpha);
  let results = (outs GNN_AnyTensor:$result);
  let assemblyFormat = "$fn $input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def GNN_BinaryOp : GNN_Op<"binary"> {
  let summary = "elementwise function of two tensors, with broadcasting";
  let description = [{
    `add sub mul div max min pow gt ge eq ne mask`, NumPy broadcasting on
    the (row) shapes. The domains must be equal, or one operand is a dense
    tensor without a vertex axis, broadcast to every row. `max` and `min`
    return the left operand on a tie. `gt`, `ge`, `eq` and `ne` are the
    comparisons `lhs > rhs`, `>=`, `==` and `!=` as 1 or 0 in the element
    type (a NaN compares false except under `ne`; the language's `<` and
    `<=` swap the operands; derivatives of `relu`, `abs`, `max`, ... written
    by `gnn-autodiff` use `gt`). `mask` is `lhs != 0 ? rhs : 0`, exact for
    every `rhs` (an infinite or NaN `rhs` where `lhs` is 0 gives 0): the
    language's `where(c, x, y)` is `mask(c, x) + mask(c == 0, y)`.

    ```mlir
    %z = gnn.binary mul %a, %m : !gnn.tensor<edge, 8x1xf32>, !gnn.tensor<edge, 8x8xf32> -> !gnn.tensor<edge, 8x8xf32>
    ```
  }];
  let arguments = (ins GNN_BinaryFn:$fn, GNN_AnyTensor:$lhs,
                       GNN_AnyTensor:$rhs);
  let results = (outs GNN_AnyTensor:$result);
  let assemblyFormat = [{
    $fn $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def GNN_BroadcastLikeOp : GNN_Op<"broadcast_like",
                                  [AllTypesMatch<["like", "result"]>]> {
  let summary = "broadcast a tensor to the type and size of another";
  let description = [{
    The result has the type of `like` and, at run time, its shape; its
    elements are `input` broadcast as `gnn.binary` broadcasts (NumPy rules
    on the rows, a dense operand without a vertex axis repeated for every
    row). Only the shape of `like` is read. With a scalar constant it makes
    a tensor of zeros or ones; derivatives of reductions spread a reduced
    value back over the reduced axes with it.

    ```mlir
    %z = gnn.broadcast_like %c0, %x : !gnn.tensor<dense, f32>, !gnn.tensor<dst, 4x8xf32>
    ```
  }];
  let arguments = (ins GNN_AnyTensor:$input, GNN_AnyTensor:$like);
  let results = (outs GNN_AnyTensor:$result);
  let assemblyFormat = [{
    $input `,` $like attr-dict `:` type($input) `,` type($like)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Dense operations (on the row shape for vertex and edge tensors)
//===----------------------------------------------------------------------===//

def GNN_MatmulOp : GNN_Op<"matmul"> {
  let summary = "[..., k] x [k, n] -> [..., n]";
  let description = [{
    The right operand is a dense matrix; the left one may be in any domain
    (then each row is multiplied).

    ```mlir
    %h = gnn.matmul %x, %W : !gnn.tensor<dense, ?x1433xf32>, !gnn.tensor<dense, 1433x16xf32> -> !gnn.tensor<dense, ?x16xf32>
    ```
  }];
  let arguments = (ins GNN_AnyTensor:$lhs, GNN_AnyTensor:$rhs);
  let results = (outs GNN_AnyTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def GNN_ReshapeOp : GNN_Op<"reshape"> {
  let summary = "same elements, new shape";
  let description = [{
    ```mlir
    %h = gnn.reshape %x : !gnn.tensor<dense, ?x64xf32> -> !gnn.tensor<dense, ?x8x8xf32>
    ```
  }];
  let arguments = (ins GNN_AnyTensor:$input);
  let results = (outs GNN_AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def GNN_ReduceOp : GNN_Op<"reduce"> {
  let summary = "reduction over one axis, or over all axes";
  let description = [{
    ```mlir
    %s = gnn.reduce sum %x {axis = 2 : i64, keepdims} : !gnn.tensor<dense, ?x8x8xf32> -> !gnn.tensor<dense, ?x8x1xf32>
    ```
  }];
  let arguments = (ins GNN_ReduceFn:$fn, GNN_AnyTensor:$input,
                       OptionalAttr<I64Attr>:$axis, UnitAttr:$keepdims);
  let results = (outs GNN_AnyTensor:$result);
  let assemblyFormat = "$fn $input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def GNN_ReduceSelectOp : GNN_Op<"reduce_select", [SameOperandsAndResultType]> {
  let summary = "which element a reduce max or min picks";
  let description = [{
    The mask of `gnn.reduce max|min` with the same `axis` (one axis, or all
    axes without it): a tensor of the input's type holding 1 at the element
    the reduction returns and 0 elsewhere. Ties go to the first extreme
    element in row-major order, the one `gnn.reduce` keeps.

    ```mlir
    %m = gnn.reduce_select max %x {axis = 1 : i64} : !gnn.tensor<dense, ?x8xf32>
    ```
  }];
  let arguments = (ins GNN_ReduceFn:$fn, GNN_AnyTensor:$input,
                       OptionalAttr<I64Attr>:$axis);
  let results = (outs GNN_AnyTensor:$result);
  let assemblyFormat = "$fn $input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def GNN_SoftmaxOp : GNN_Op<"softmax", [SameOperandsAndResultType]> {
  let summary = "softmax (or log-softmax) over one feature axis";
  let description = [{
    ```mlir
    %p = gnn.softmax %x {axis = 1 : i64, log} : !gnn.tensor<dense, ?x7xf32>
    ```
  }];
  let arguments = (ins GNN_AnyTensor:$input, I64Attr:$axis, UnitAttr:$log);
  let results = (outs GNN_AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def GNN_ConcatOp : GNN_Op<"concat"> {
  let summary = "concatenation along one axis";
  let description = [{
    ```mlir
    %c = gnn.concat %a, %b {axis = 1 : i64} : !gnn.tensor<dense, ?x8xf32>, !gnn.tensor<dense, ?x8xf32> -> !gnn.tensor<dense, ?x16xf32>
    ```
  }];
  let arguments = (ins Variadic<GNN_AnyTensor>:$inputs, I64Attr:$axis);
  let results = (outs GNN_AnyTensor:$result);
  let assemblyFormat = [{
    $inputs attr-dict `:` type($inputs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def GNN_SliceOp : GNN_Op<"slice"> {
  let summary = "a contiguous range of one axis";
  let description = [{
    Elements `start` to `start + size - 1` of `axis` (a row axis for
    vertex and edge tensors), every other axis whole: the transpose of
    `gnn.concat`, whose derivative slices each operand's part back out.

    ```mlir
    %b = gnn.slice %c {axis = 1 : i64, start = 8 : i64, size = 8 : i64} : !gnn.tensor<dense, ?x16xf32> -> !gnn.tensor<dense, ?x8xf32>
    ```
  }];
  let arguments = (ins GNN_AnyTensor:$input, I64Attr:$axis, I64Attr:$start,
                       I64Attr:$size);
  let results = (outs GNN_AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def GNN_DstRowsOp : GNN_Op<"dst_rows"> {
  let summary = "the rows of a block's destinations among its sources";
  let description = [{
    A sampled block lists its destinations first among its sources: source
    `i` is destination `i` for `i < N_dst`. Given a dense tensor with one
    row per source (`[N_src, ...]`), returns its first `N_dst` rows
    (`[N_dst, ...]`), the destinations' own rows. `g.dst_rows(x)` in the
    language; on a homogeneous graph MLIRGen writes nothing (every vertex
    is a destination).

    ```mlir
    %d = gnn.dst_rows %g, %x : !gnn.graph<block>, !gnn.tensor<dense, ?x16xf32> -> !gnn.tensor<dense, ?x16xf32>
    ```
  }];
  let arguments = (ins GNN_Graph:$graph, GNN_AnyTensor:$input);
  let results = (outs GNN_AnyTensor:$result);
  let assemblyFormat = [{
    $graph `,` $input attr-dict `:` type($graph) `,` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def GNN_PadDstRowsOp : GNN_Op<"pad_dst_rows"> {
  let summary = "destination rows placed among a block's sources";
  let description = [{
    The transpose of `gnn.dst_rows`, written by `gnn-autodiff`: given a
    dense `[N_dst, ...]` tensor, returns the `[N_src, ...]` tensor whose
    first `N_dst` rows are the input and whose other rows are zero.

    ```mlir
    %p = gnn.pad_dst_rows %g, %dy : !gnn.graph<block>, !gnn.tensor<dense, ?x16xf32> -> !gnn.tensor<dense, ?x16xf32>
    ```
  }];
  let arguments = (ins GNN_Graph:$graph, GNN_AnyTensor:$input);
  let results = (outs GNN_AnyTensor:$result);
  let assemblyFormat = [{
    $graph `,` $input attr-dict `:` type($graph) `,` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def GNN_TransposeOp : GNN_Op<"transpose"> {
  let summary = "swap the two axes of a matrix";
  let description = [{
    ```mlir
    %t = gnn.transpose %w : !gnn.tensor<dense, 4x8xf32> -> !gnn.tensor<dense, 8x4xf32>
    ```
  }];
  let arguments = (ins GNN_AnyTensor:$input);
  let results = (outs GNN_AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def GNN_DropoutOp : GNN_Op<"dropout", [SameOperandsAndResultType]> {
  let summary = "inverted dropout with an explicit seed";
  let description = [{
    In training, zeroes each element with probability `p` and scales the
    others by `1 / (1 - p)`; the mask is a counter-based hash of
    (`seed`, row, element), so recomputing it gives the same mask. In
    inference it is the identity.

    ```mlir
    %d = gnn.dropout %x {p = 5.000000e-01 : f64, seed = 7 : i64} : !gnn.tensor<dense, ?x16xf32>
    ```
  }];
  let arguments = (ins GNN_AnyTensor:$input, F64Attr:$p, I64Attr:$seed);
  let results = (outs GNN_AnyTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def GNN_TrainingOp : GNN_Op<"training"> {
  let summary = "1 in training, 0 in inference";
  let description = [{
    The entry point's `training` flag (docs/abi.md) as a scalar: 1 when the
    function runs in training mode, 0 in inference. `batch_norm` selects its
    statistics with it. `--gnn-inference` replaces it by 0.

    ```mlir
    %t = gnn.training : !gnn.tensor<dense, f32>
    ```
  }];
  let results = (outs GNN_AnyTensor:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def GNN_UpdateBatchStatsOp
    : Op<GNN_Dialect, "update_batch_stats", [MemoryEffects<[MemWrite]>]> {
  let summary = "blend a batch's statistics into running statistics";
  let description = [{
    In training mode only (the entry point's `training` flag), with `m` the
    momentum, `mean` and `var` the mean and the unbiased variance of each
    column of the `[M, F]` tensor `input` (M >= 2, or the call fails):

        running_mean = (1 - m) running_mean + m mean
        running_var  = (1 - m) running_var  + m var

    in place, as torch's `batch_norm` updates its running statistics. Both
    are buffers: `[F]` arguments of the function marked `gnn.buffer`. In
    inference mode it does nothing. The op has no result; it writes its
    buffers, so no pass erases or moves it as dead, and a backward function
    never contains it (a gradient does not depend on it).

    ```mlir
    gnn.update_batch_stats %running_mean, %running_var, %x {momentum = 1.000000e-01 : f64} : !gnn.tensor<dense, 16xf32>, !gnn.tensor<dense, 16xf32>, !gnn.tensor<dense, ?x16xf32>
    ```
  }];
  let arguments = (ins GNN_AnyTensor:$running_mean, GNN_AnyTensor:$running_var,
                       GNN_AnyTensor:$input, F64Attr:$momentum);
  let assemblyFormat = [{
    $running_mean `,` $running_var `,` $input attr-dict `:`
    type($running_mean) `,` type($running_var) `,` type($input)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Fused aggregation
//===----------------------------------------------------------------------===//

def GNN_AggregateOp : GNN_Op<"aggregate", [IsolatedFromAbove, SingleBlock]> {
  let summary = "a fused gather-compute-scatter over each vertex's edges";
  let description = [{
    One pass over the edges of every destination (`by = dst`, CSR) or source
    (`by = src`, CSC) vertex. For each edge the body computes per-edge rows
    from its inputs and yields them; each entry of `reductions` folds its
    yields into one result row per vertex. Nothing per edge is stored.

    Inputs are `src`, `dst` or `edge` tensors, whose block argument is the
    row of the edge's source, destination or the edge itself (a dense tensor
    of the row shape), or dense tensors, passed unchanged.

    Reductions, in order, each a dictionary with a `kind`:
    - `sum`, `mean`, `max`, `min`, `logsumexp`: one yield each; an empty
      neighbourhood gives 0; `logsumexp` is computed online (running
      maximum and rescaled sum), as `softmax_sum` computes its normaliser;
    - `softmax_sum`: two yields, logits `l` and values `m`; the result is
      `sum_e softmax(l)_e * m_e` with the softmax over the vertex's edges,
      computed online (running maximum and rescaling) so that no logit
      overflows. Optional `dropout` (probability) and `seed` drop
      normalised attention weights, with the mask of `gnn.dropout` on the
      `[E, ...]` weight tensor.

    A `gnn.dropout` inside the body masks by (seed, edge, element), so it
    drops exactly what the unfused op on the edge tensor drops.

    ```mlir
    %h = gnn.aggregate %g (%es, %ed, %hs : !gnn.tensor<src, 8x1xf32>, !gnn.tensor<dst, 8x1xf32>, !gnn.tensor<src, 8x8xf32>)
           by dst reductions [ {kind = "softmax_sum"} ] : !gnn.graph<graph> -> !gnn.tensor<dst, 8x8xf32> {
    ^bb0(%a: !gnn.tensor<dense, 8x1xf32>, %b: !gnn.tensor<dense, 8x1xf32>, %m: !gnn.tensor<dense, 8x8xf32>):
      %l = gnn.binary add %a, %b : !gnn.tensor<dense, 8x1xf32>, !gnn.tensor<dense, 8x1xf32> -> !gnn.tensor<dense, 8x1xf32>
      gnn.yield %l, %m : !gnn.tensor<dense, 8x1xf32>, !gnn.tensor<dense, 8x8xf32>
    }
    ```
  }];
  let arguments = (ins GNN_Graph:$graph, Variadic<GNN_AnyTensor>:$inputs,
                       GNN_DomainAttr:$by, ArrayAttr:$reductions);
  let results = (outs Variadic<GNN_AnyTensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $graph `(` ($inputs^ `:` type($inputs))? `)` `by` custom<Side>($by)
    `reductions`
    $reductions attr-dict `:` type($graph) `->` type($results) $body
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// The kind of reduction `i` ("sum", "mean", "max", "min",
    /// "logsumexp", "softmax_sum").
    ::llvm::StringRef getKind(unsigned i);
    /// How many values reduction `i` consumes from the yield.
    unsigned getNumYields(unsigned i) { return getKind(i) == "softmax_sum" ? 2 : 1; }
    ::mlir::Block &getBlock() { return getBody().front(); }
  }];
}

def GNN_YieldOp : GNN_Op<"yield", [Terminator, HasParent<"AggregateOp">]> {
  let summary = "the per-edge values of an aggregation body";
  let description = [{
    ```mlir
    gnn.yield %l, %m : !gnn.tensor<dense, 8x1xf32>, !gnn.tensor<dense, 8x8xf32>
    ```
  }];
  let arguments = (ins Variadic<GNN_AnyTensor>:$values);
  let assemblyFormat = "$values attr-dict `:` type($values)";
}

#endif // GNNC_DIALECT_GNN_IR_GNNOPS_TD
