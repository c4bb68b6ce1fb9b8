// --gnn-inference removes every gnn.dropout (the identity at inference), in
// every domain, and leaves everything else alone.
//
// RUN: gnn-opt %s --gnn-inference | FileCheck %s
// RUN: gnn-opt %s --gnn-inference --mlir-print-ir-after-all -o /dev/null 2>&1 | FileCheck %s --check-prefix=AFTER
// RUN: gnn-opt %s --gnn-inference --canonicalize --cse --mlir-print-ir-after-all -o /dev/null 2>&1 | FileCheck %s --check-prefix=PIPELINE
// The dropouts gnnc emits for a model go too.
// RUN: %gnnc %examples/gat.gnn --emit=mlir | gnn-opt --gnn-inference | FileCheck %s --check-prefix=GAT

// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[G:.*]]: !gnn.graph<graph>, %[[X:.*]]: !gnn.tensor<dense, ?x16xf32>
// CHECK-NOT: gnn.dropout
// CHECK: %[[H:.*]] = gnn.attach %[[G]], %[[X]]
// CHECK-NOT: gnn.dropout
// CHECK: %[[M:.*]] = gnn.gather %[[G]], %[[H]]
// CHECK-NOT: gnn.dropout
// CHECK: %[[S:.*]] = gnn.scatter sum %[[G]], %[[M]]
// CHECK-NEXT: %[[C:.*]] = gnn.collect %[[G]], %[[S]]
// CHECK-NEXT: return %[[C]]
func.func @chain(%g: !gnn.graph<graph>, %x: !gnn.tensor<dense, ?x16xf32>) -> !gnn.tensor<dense, ?x16xf32> {
  %0 = gnn.dropout %x {p = 0.5 : f64, seed = 1 : i64} : !gnn.tensor<dense, ?x16xf32>
  %1 = gnn.dropout %0 {p = 0.6 : f64, seed = 2 : i64} : !gnn.tensor<dense, ?x16xf32>
  %h = gnn.attach %g, %1 : !gnn.graph<graph>, !gnn.tensor<dense, ?x16xf32> -> !gnn.tensor<src, 16xf32>
  %m = gnn.gather %g, %h : !gnn.graph<graph>, !gnn.tensor<src, 16xf32> -> !gnn.tensor<edge, 16xf32>
  %d = gnn.dropout %m {p = 0.6 : f64, seed = 3 : i64} : !gnn.tensor<edge, 16xf32>
  %s = gnn.scatter sum %g, %d : !gnn.graph<graph>, !gnn.tensor<edge, 16xf32> -> !gnn.tensor<dst, 16xf32>
  %c = gnn.collect %g, %s : !gnn.graph<graph>, !gnn.tensor<dst, 16xf32> -> !gnn.tensor<dense, ?x16xf32>
  return %c : !gnn.tensor<dense, ?x16xf32>
}

// A dropout whose result is returned directly.
// CHECK-LABEL: func.func @returned
// CHECK-SAME: (%[[X:.*]]: !gnn.tensor<dst, 2x1xf64>)
// CHECK-NEXT: return %[[X]]
func.func @returned(%x: !gnn.tensor<dst, 2x1xf64>) -> !gnn.tensor<dst, 2x1xf64> {
  %0 = gnn.dropout %x {p = 0.1 : f64, seed = 9 : i64} : !gnn.tensor<dst, 2x1xf64>
  return %0 : !gnn.tensor<dst, 2x1xf64>
}

// AFTER: // -----// IR Dump After GNNInference (gnn-inference) //----- //
// AFTER-NEXT: module {
// AFTER-LABEL: func.func @chain
// AFTER-NOT: gnn.dropout
// AFTER: gnn.scatter sum
// AFTER-LABEL: func.func @returned
// AFTER-NOT: gnn.dropout

// PIPELINE: IR Dump After GNNInference (gnn-inference)
// PIPELINE: IR Dump After Canonicalizer (canonicalize)
// PIPELINE: IR Dump After CSE (cse)
// PIPELINE-NOT: gnn.dropout

// GAT-LABEL: func.func @GAT.conv1
// GAT-NOT: gnn.dropout
// GAT: gnn.edge_softmax
// GAT-NOT: gnn.dropout
// GAT: gnn.scatter sum
// GAT-LABEL: func.func @GAT(
// GAT-NOT: gnn.dropout
// GAT: call @GAT.conv1(%arg0, %arg1,
// GAT-NEXT: gnn.unary elu
// GAT-NEXT: call @GAT.conv2(%arg0, %{{.*}},
