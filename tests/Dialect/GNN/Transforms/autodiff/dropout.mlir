// The derivative of dropout is dropout of the cotangent with the same
// probability and seed: the mask is a counter-based hash of (seed, element),
// so the backward draws exactly the mask the forward drew, and inference
// (where dropout is the identity) stays consistent too.
//
// RUN: gnn-opt %s --gnn-autodiff | FileCheck %s

// CHECK-LABEL: func.func @drop.backward(
// CHECK-SAME: %[[G:[^:]*]]: !gnn.graph<graph>
// CHECK: %[[E:.*]] = gnn.gather
// The edge dropout (seed 4) of the cotangent's edge rows...
// CHECK: %[[DE:.*]] = gnn.dropout %{{.*}} {p = 3.000000e-01 : f64, seed = 4 : i64} : <edge, 3xf32>
// CHECK-NEXT: %[[S:.*]] = gnn.scatter sum %[[G]], %[[DE]] : <graph>, <edge, 3xf32> -> <src, 3xf32>
// ...then the dense one (seed 3).
// CHECK-NEXT: %[[C:.*]] = gnn.collect %[[G]], %[[S]]
// CHECK-NEXT: gnn.dropout %[[C]] {p = 5.000000e-01 : f64, seed = 3 : i64} : <dense, ?x3xf32>
// CHECK-NOT: gnn.dropout
// CHECK: return
func.func @drop(%g: !gnn.graph<graph> {gnn.name = "g"}, %x: !gnn.tensor<dense, ?x3xf32> {gnn.name = "x"}) -> !gnn.tensor<dense, ?x3xf32> {
  %d = gnn.dropout %x {p = 0.5 : f64, seed = 3 : i64} : !gnn.tensor<dense, ?x3xf32>
  %a = gnn.attach %g, %d : !gnn.graph<graph>, !gnn.tensor<dense, ?x3xf32> -> !gnn.tensor<src, 3xf32>
  %e = gnn.gather %g, %a : !gnn.graph<graph>, !gnn.tensor<src, 3xf32> -> !gnn.tensor<edge, 3xf32>
  %e2 = gnn.dropout %e {p = 0.3 : f64, seed = 4 : i64} : !gnn.tensor<edge, 3xf32>
  %s = gnn.scatter sum %g, %e2 : !gnn.graph<graph>, !gnn.tensor<edge, 3xf32> -> !gnn.tensor<dst, 3xf32>
  %r = gnn.collect %g, %s : !gnn.graph<graph>, !gnn.tensor<dst, 3xf32> -> !gnn.tensor<dense, ?x3xf32>
  return %r : !gnn.tensor<dense, ?x3xf32>
}

// Attention dropout in GAT from the front end: the recomputed forward and
// the backward use seed 1 (the attention weights) and the backward scatters
// the masked cotangent back.
// RUN: %gnnc %examples/gat.gnn --emit=mlir-grad-unfused --entry GATConv -D in_dim=4 -D out_dim=2 -D heads=2 -D attn_drop=0.6 \
// RUN:   | FileCheck %s --check-prefix=GAT
// GAT-LABEL: func.func @GATConv.backward(
// GAT: gnn.dropout %{{.*}} {p = 6.000000e-01 : f64, seed = 1 : i64} : <edge, 2x1xf32>
// GAT: gnn.dropout %{{.*}} {p = 6.000000e-01 : f64, seed = 1 : i64} : <edge, 2x1xf32>
// GAT-NOT: gnn.dropout
// GAT: return
