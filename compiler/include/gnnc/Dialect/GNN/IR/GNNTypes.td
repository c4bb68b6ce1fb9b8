//===- GNNTypes.td - Types of the gnn dialect --------------*- tablegen -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_DIALECT_GNN_IR_GNNTYPES_TD
#define GNNC_DIALECT_GNN_IR_GNNTYPES_TD

include "gnnc/Dialect/GNN/IR/GNNDialect.td"

class GNN_Type<string name, string typeMnemonic> : TypeDef<GNN_Dialect, name> {
  let mnemonic = typeMnemonic;
}

def GNN_GraphType : GNN_Type<"Graph", "graph"> {
  let summary = "a graph: CSR by destination and CSC by source";
  let description = [{
    A graph operand. `graph` is homogeneous (one vertex set, N vertices),
    `block` is bipartite (N_src sources, N_dst destinations), `batched` is a
    disjoint union of B small graphs, `hetero` has one edge set per relation.

    ```mlir
    func.func @f(%g: !gnn.graph<block>)
    ```
  }];
  let parameters = (ins EnumParameter<GNN_GraphKind>:$kind);
  let assemblyFormat = "`<` $kind `>`";
}

def GNN_TensorType : GNN_Type<"DomainTensor", "tensor"> {
  let summary = "a tensor with a domain";
  let description = [{
    A `dense` tensor has its full shape; `?` is a size known only at run
    time (a vertex or edge count). A `src`, `dst` or `edge` tensor has an
    implicit leading axis over source vertices, destination vertices or
    edges, and its shape is the row shape.

    ```mlir
    !gnn.tensor<dense, ?x64xf32>   // [N, 64]
    !gnn.tensor<edge, 8x1xf32>     // one [8, 1] row per edge
    !gnn.tensor<dst, f32>          // one scalar per destination
    ```
  }];
  let parameters = (ins EnumParameter<GNN_Domain>:$domain,
                        ArrayRefParameter<"int64_t">:$shape,
                        "::mlir::Type":$elementType);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    int64_t getRank() const { return getShape().size(); }
    bool isVertexOrEdge() const { return getDomain() != Domain::dense; }
    /// The same type in another domain or with another shape.
    DomainTensorType withDomain(Domain domain) const {
      return DomainTensorType::get(getContext(), domain, getShape(), getElementType());
    }
    DomainTensorType withShape(::llvm::ArrayRef<int64_t> shape) const {
      return DomainTensorType::get(getContext(), getDomain(), shape, getElementType());
    }
  }];
}

#endif // GNNC_DIALECT_GNN_IR_GNNTYPES_TD
