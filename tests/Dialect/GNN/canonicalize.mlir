// Folding and CSE of gnn ops: reshape chains collapse, identity reshapes and
// dropout with p = 0 fold away, constants are uniqued, and pure ops are
// deduplicated and dropped when unused.
//
// RUN: gnn-opt %s --split-input-file --canonicalize | FileCheck %s
// RUN: gnn-opt %s --split-input-file --cse | FileCheck %s --check-prefix=CSE
// RUN: gnn-opt %s --split-input-file --canonicalize --cse | FileCheck %s --check-prefix=BOTH

// CHECK-LABEL: func.func @reshape_of_reshape
// CHECK-SAME: (%[[X:.*]]: !gnn.tensor<dense, ?x64xf32>)
// CHECK-NEXT: %[[R:.*]] = gnn.reshape %[[X]] : <dense, ?x64xf32> -> <dense, ?x4x16xf32>
// CHECK-NEXT: return %[[R]]
// CSE-LABEL: func.func @reshape_of_reshape
// CSE-COUNT-2: gnn.reshape
func.func @reshape_of_reshape(%x: !gnn.tensor<dense, ?x64xf32>) -> !gnn.tensor<dense, ?x4x16xf32> {
  %0 = gnn.reshape %x : !gnn.tensor<dense, ?x64xf32> -> !gnn.tensor<dense, ?x8x8xf32>
  %1 = gnn.reshape %0 : !gnn.tensor<dense, ?x8x8xf32> -> !gnn.tensor<dense, ?x4x16xf32>
  return %1 : !gnn.tensor<dense, ?x4x16xf32>
}

// -----

// Three reshapes in a row become one.
// CHECK-LABEL: func.func @reshape_chain_of_three
// CHECK-SAME: (%[[X:.*]]: !gnn.tensor<edge, 2x3x4xf32>)
// CHECK-NEXT: %[[R:.*]] = gnn.reshape %[[X]] : <edge, 2x3x4xf32> -> <edge, 4x6xf32>
// CHECK-NEXT: return %[[R]]
func.func @reshape_chain_of_three(%x: !gnn.tensor<edge, 2x3x4xf32>) -> !gnn.tensor<edge, 4x6xf32> {
  %0 = gnn.reshape %x : !gnn.tensor<edge, 2x3x4xf32> -> !gnn.tensor<edge, 24xf32>
  %1 = gnn.reshape %0 : !gnn.tensor<edge, 24xf32> -> !gnn.tensor<edge, 8x3xf32>
  %2 = gnn.reshape %1 : !gnn.tensor<edge, 8x3xf32> -> !gnn.tensor<edge, 4x6xf32>
  return %2 : !gnn.tensor<edge, 4x6xf32>
}

// -----

// A reshape there and back is the input itself.
// CHECK-LABEL: func.func @reshape_round_trip
// CHECK-SAME: (%[[X:.*]]: !gnn.tensor<dense, ?x64xf32>)
// CHECK-NEXT: return %[[X]]
func.func @reshape_round_trip(%x: !gnn.tensor<dense, ?x64xf32>) -> !gnn.tensor<dense, ?x64xf32> {
  %0 = gnn.reshape %x : !gnn.tensor<dense, ?x64xf32> -> !gnn.tensor<dense, ?x8x8xf32>
  %1 = gnn.reshape %0 : !gnn.tensor<dense, ?x8x8xf32> -> !gnn.tensor<dense, ?x64xf32>
  return %1 : !gnn.tensor<dense, ?x64xf32>
}

// -----

// CHECK-LABEL: func.func @identity_reshape
// CHECK-SAME: (%[[X:.*]]: !gnn.tensor<edge, 8x8xf32>)
// CHECK-NEXT: return %[[X]]
// CSE-LABEL: func.func @identity_reshape
// CSE: gnn.reshape
func.func @identity_reshape(%x: !gnn.tensor<edge, 8x8xf32>) -> !gnn.tensor<edge, 8x8xf32> {
  %0 = gnn.reshape %x : !gnn.tensor<edge, 8x8xf32> -> !gnn.tensor<edge, 8x8xf32>
  return %0 : !gnn.tensor<edge, 8x8xf32>
}

// -----

// The inner reshape keeps its other user; the outer one reads the input.
// CHECK-LABEL: func.func @reshape_with_other_use
// CHECK-SAME: (%[[X:.*]]: !gnn.tensor<dense, ?x64xf32>)
// CHECK-NEXT: %[[A:.*]] = gnn.reshape %[[X]] : <dense, ?x64xf32> -> <dense, ?x8x8xf32>
// CHECK-NEXT: %[[B:.*]] = gnn.reshape %[[X]] : <dense, ?x64xf32> -> <dense, ?x4x16xf32>
// CHECK-NEXT: return %[[A]], %[[B]]
func.func @reshape_with_other_use(%x: !gnn.tensor<dense, ?x64xf32>) -> (!gnn.tensor<dense, ?x8x8xf32>, !gnn.tensor<dense, ?x4x16xf32>) {
  %0 = gnn.reshape %x : !gnn.tensor<dense, ?x64xf32> -> !gnn.tensor<dense, ?x8x8xf32>
  %1 = gnn.reshape %0 : !gnn.tensor<dense, ?x8x8xf32> -> !gnn.tensor<dense, ?x4x16xf32>
  return %0, %1 : !gnn.tensor<dense, ?x8x8xf32>, !gnn.tensor<dense, ?x4x16xf32>
}

// -----

// dropout with p = 0 is the identity in training too; p > 0 stays.
// CHECK-LABEL: func.func @dropout_zero
// CHECK-SAME: (%[[X:.*]]: !gnn.tensor<dense, ?x16xf32>, %[[E:.*]]: !gnn.tensor<edge, 8x1xf32>)
// CHECK-NEXT: %[[D:.*]] = gnn.dropout %[[X]] {p = 5.000000e-01 : f64, seed = 2 : i64} : <dense, ?x16xf32>
// CHECK-NEXT: return %[[D]], %[[E]]
func.func @dropout_zero(%x: !gnn.tensor<dense, ?x16xf32>, %e: !gnn.tensor<edge, 8x1xf32>) -> (!gnn.tensor<dense, ?x16xf32>, !gnn.tensor<edge, 8x1xf32>) {
  %0 = gnn.dropout %x {p = 0.0 : f64, seed = 1 : i64} : !gnn.tensor<dense, ?x16xf32>
  %1 = gnn.dropout %0 {p = 0.5 : f64, seed = 2 : i64} : !gnn.tensor<dense, ?x16xf32>
  %2 = gnn.dropout %e {p = 0.0 : f64, seed = 3 : i64} : !gnn.tensor<edge, 8x1xf32>
  return %1, %2 : !gnn.tensor<dense, ?x16xf32>, !gnn.tensor<edge, 8x1xf32>
}

// -----

// Equal constants become one (per element type); unused ones disappear.
// CHECK-LABEL: func.func @constants
// CHECK-DAG: %[[ONE:.*]] = gnn.constant 1.000000e+00 : <dense, f32>
// CHECK-DAG: %[[TWO:.*]] = gnn.constant 2.000000e+00 : <dense, f32>
// CHECK-NOT: gnn.constant
// CHECK: %[[M:.*]] = gnn.binary max %{{.*}}, %[[ONE]]
// CHECK-NEXT: %[[A:.*]] = gnn.binary add %[[M]], %[[ONE]]
// CHECK-NEXT: gnn.binary mul %[[A]], %[[TWO]]
// CSE-LABEL: func.func @constants
// CSE: %[[ONE:.*]] = gnn.constant 1.000000e+00 : <dense, f32>
// CSE-NEXT: gnn.binary max %{{.*}}, %[[ONE]]
// CSE-NEXT: gnn.binary add %{{.*}}, %[[ONE]]
// CSE-NEXT: gnn.constant 2.000000e+00 : <dense, f32>
// CSE-NOT: gnn.constant
// CSE-NOT: gnn.unary
// CSE: return
func.func @constants(%x: !gnn.tensor<dense, ?x16xf32>) -> !gnn.tensor<dense, ?x16xf32> {
  %c0 = gnn.constant 1.0 : !gnn.tensor<dense, f32>
  %0 = gnn.binary max %x, %c0 : !gnn.tensor<dense, ?x16xf32>, !gnn.tensor<dense, f32> -> !gnn.tensor<dense, ?x16xf32>
  %c1 = gnn.constant 1.0 : !gnn.tensor<dense, f32>
  %1 = gnn.binary add %0, %c1 : !gnn.tensor<dense, ?x16xf32>, !gnn.tensor<dense, f32> -> !gnn.tensor<dense, ?x16xf32>
  %c2 = gnn.constant 2.0 : !gnn.tensor<dense, f32>
  %2 = gnn.binary mul %1, %c2 : !gnn.tensor<dense, ?x16xf32>, !gnn.tensor<dense, f32> -> !gnn.tensor<dense, ?x16xf32>
  %c3 = gnn.constant 1.0 : !gnn.tensor<dense, f64>
  %dead = gnn.unary exp %x : !gnn.tensor<dense, ?x16xf32>
  return %2 : !gnn.tensor<dense, ?x16xf32>
}

// -----

// Constants of different element types are not merged.
// BOTH-LABEL: func.func @constants_by_type
// BOTH-DAG: gnn.constant 1.000000e+00 : <dense, f32>
// BOTH-DAG: gnn.constant 1.000000e+00 : <dense, f64>
func.func @constants_by_type(%x: !gnn.tensor<dense, 4xf32>, %y: !gnn.tensor<dense, 4xf64>) -> (!gnn.tensor<dense, 4xf32>, !gnn.tensor<dense, 4xf64>) {
  %c0 = gnn.constant 1.0 : !gnn.tensor<dense, f32>
  %c1 = gnn.constant 1.0 : !gnn.tensor<dense, f64>
  %0 = gnn.binary add %x, %c0 : !gnn.tensor<dense, 4xf32>, !gnn.tensor<dense, f32> -> !gnn.tensor<dense, 4xf32>
  %1 = gnn.binary add %y, %c1 : !gnn.tensor<dense, 4xf64>, !gnn.tensor<dense, f64> -> !gnn.tensor<dense, 4xf64>
  return %0, %1 : !gnn.tensor<dense, 4xf32>, !gnn.tensor<dense, 4xf64>
}

// -----

// Graph ops are pure: the same gather twice is computed once. Dropout is a
// function of (seed, element), so two dropouts with one seed are one value,
// while different seeds give different masks and both stay.
// BOTH-LABEL: func.func @pure_graph_ops
// BOTH-SAME: (%[[G:.*]]: !gnn.graph<graph>, %[[H:.*]]: !gnn.tensor<src, 4xf32>)
// BOTH: %[[M:.*]] = gnn.gather %[[G]], %[[H]]
// BOTH-NOT: gnn.gather
// BOTH: %[[D1:.*]] = gnn.dropout %[[M]] {p = 5.000000e-01 : f64, seed = 1 : i64}
// BOTH-NEXT: %[[D2:.*]] = gnn.dropout %[[M]] {p = 5.000000e-01 : f64, seed = 2 : i64}
// BOTH-NOT: gnn.dropout
// BOTH: gnn.binary add %[[D1]], %[[D1]]
// BOTH: gnn.binary add %{{.*}}, %[[D2]]
// BOTH: gnn.scatter sum %[[G]]
func.func @pure_graph_ops(%g: !gnn.graph<graph>, %h: !gnn.tensor<src, 4xf32>) -> !gnn.tensor<dst, 4xf32> {
  %m0 = gnn.gather %g, %h : !gnn.graph<graph>, !gnn.tensor<src, 4xf32> -> !gnn.tensor<edge, 4xf32>
  %m1 = gnn.gather %g, %h : !gnn.graph<graph>, !gnn.tensor<src, 4xf32> -> !gnn.tensor<edge, 4xf32>
  %d0 = gnn.dropout %m0 {p = 0.5 : f64, seed = 1 : i64} : !gnn.tensor<edge, 4xf32>
  %d1 = gnn.dropout %m1 {p = 0.5 : f64, seed = 1 : i64} : !gnn.tensor<edge, 4xf32>
  %d2 = gnn.dropout %m1 {p = 0.5 : f64, seed = 2 : i64} : !gnn.tensor<edge, 4xf32>
  %s0 = gnn.binary add %d0, %d1 : !gnn.tensor<edge, 4xf32>, !gnn.tensor<edge, 4xf32> -> !gnn.tensor<edge, 4xf32>
  %s1 = gnn.binary add %s0, %d2 : !gnn.tensor<edge, 4xf32>, !gnn.tensor<edge, 4xf32> -> !gnn.tensor<edge, 4xf32>
  %r = gnn.scatter sum %g, %s1 : !gnn.graph<graph>, !gnn.tensor<edge, 4xf32> -> !gnn.tensor<dst, 4xf32>
  // Unused: dropped.
  %unused = gnn.scatter max %g, %m1 : !gnn.graph<graph>, !gnn.tensor<edge, 4xf32> -> !gnn.tensor<dst, 4xf32>
  return %r : !gnn.tensor<dst, 4xf32>
}
