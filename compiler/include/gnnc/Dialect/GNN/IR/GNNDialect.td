//===- GNNDialect.td - The gnn dialect ---------------------*- tablegen -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_DIALECT_GNN_IR_GNNDIALECT_TD
#define GNNC_DIALECT_GNN_IR_GNNDIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def GNN_Dialect : Dialect {
  let name = "gnn";
  let cppNamespace = "::gnnc::gnn";
  let summary = "Whole-graph operations of node-centric GNN layers";
  let description = [{
    The `gnn` dialect is what a `.gnn` program becomes after semantic
    analysis. Every tensor carries its domain in its type: `dense` tensors
    are ordinary arrays, while `src`, `dst` and `edge` tensors hold one row
    per source vertex, destination vertex or edge of a graph, and their
    shape is the row shape. Vertex-centric code lowers to whole-graph
    gathers (`gnn.gather`), elementwise maths on edge tensors, and
    scatter-reductions (`gnn.scatter`) back to vertices; the fusion pass
    later finds these gather-injective-scatter chains.

    Layers and models are `func.func` functions. Their parameters are
    function arguments tagged with the `gnn.param` argument attribute.
  }];
  let useDefaultTypePrinterParser = 1;
  let hasConstantMaterializer = 1;
  let useDefaultAttributePrinterParser = 1;
}

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def GNN_Domain : I32EnumAttr<"Domain", "where the rows of a tensor live", [
    I32EnumAttrCase<"dense", 0>, I32EnumAttrCase<"src", 1>,
    I32EnumAttrCase<"dst", 2>, I32EnumAttrCase<"edge", 3>]> {
  let cppNamespace = "::gnnc::gnn";
  let genSpecializedAttr = 0;
}
def GNN_DomainAttr : EnumAttr<GNN_Dialect, GNN_Domain, "domain">;

def GNN_GraphKind : I32EnumAttr<"GraphKind", "kind of graph", [
    I32EnumAttrCase<"graph", 0>, I32EnumAttrCase<"block", 1>,
    I32EnumAttrCase<"batched", 2>, I32EnumAttrCase<"hetero", 3>]> {
  let cppNamespace = "::gnnc::gnn";
  let genSpecializedAttr = 0;
}

def GNN_UnaryFn : I32EnumAttr<"UnaryFn", "elementwise unary function", [
    I32EnumAttrCase<"neg", 0>, I32EnumAttrCase<"exp", 1>,
    I32EnumAttrCase<"log", 2>, I32EnumAttrCase<"sqrt", 3>,
    I32EnumAttrCase<"rsqrt", 4>, I32EnumAttrCase<"abs", 5>,
    I32EnumAttrCase<"relu", 6>, I32EnumAttrCase<"sigmoid", 7>,
    I32EnumAttrCase<"tanh", 8>, I32EnumAttrCase<"gelu", 9>,
    I32EnumAttrCase<"elu", 10>, I32EnumAttrCase<"leaky_relu", 11>,
    I32EnumAttrCase<"erf", 12>, I32EnumAttrCase<"sin", 13>,
    I32EnumAttrCase<"cos", 14>]> {
  let cppNamespace = "::gnnc::gnn";
}

def GNN_BinaryFn : I32EnumAttr<"BinaryFn", "elementwise binary function", [
    I32EnumAttrCase<"add", 0>, I32EnumAttrCase<"sub", 1>,
    I32EnumAttrCase<"mul", 2>, I32EnumAttrCase<"div", 3>,
    I32EnumAttrCase<"max", 4>, I32EnumAttrCase<"min", 5>,
    I32EnumAttrCase<"pow", 6>, I32EnumAttrCase<"gt", 7>,
    I32EnumAttrCase<"ge", 8>, I32EnumAttrCase<"eq", 9>,
    I32EnumAttrCase<"ne", 10>, I32EnumAttrCase<"mask", 11>]> {
  let cppNamespace = "::gnnc::gnn";
}

def GNN_ReduceFn : I32EnumAttr<"ReduceFn", "reduction", [
    I32EnumAttrCase<"sum", 0>, I32EnumAttrCase<"mean", 1>,
    I32EnumAttrCase<"max", 2>, I32EnumAttrCase<"min", 3>,
    I32EnumAttrCase<"logsumexp", 4>]> {
  let cppNamespace = "::gnnc::gnn";
}

#endif // GNNC_DIALECT_GNN_IR_GNNDIALECT_TD
