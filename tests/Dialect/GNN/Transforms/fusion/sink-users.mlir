// Independent aggregations over the same edges share one pass even when the
// first one's result is used before the second one runs: the pure ops that
// carry it onwards move down to their first user, past the second
// aggregation, keeping their relative order.
//
// RUN: gnn-opt %s --split-input-file --gnn-fuse | FileCheck %s

// A collect, a bias and an activation of the first result stand between
// the two; after the merge they sit just before their first user.
// CHECK-LABEL: func.func @chain_in_between
// CHECK: %[[M:.*]]:2 = gnn.aggregate {{.*}} by dst reductions [{kind = "sum"}, {kind = "min"}]
// CHECK-NOT: gnn.aggregate
// CHECK: %[[C2:.*]] = gnn.collect %{{.*}}, %[[M]]#1
// CHECK-NEXT: %[[C1:.*]] = gnn.collect %{{.*}}, %[[M]]#0
// CHECK-NEXT: %[[B:.*]] = gnn.binary add %[[C1]], %{{.*}}
// CHECK-NEXT: %[[R:.*]] = gnn.unary relu %[[B]]
// CHECK-NEXT: gnn.binary add %[[R]], %[[C2]]
func.func @chain_in_between(%g: !gnn.graph<graph>, %x: !gnn.tensor<dense, ?x4xf32>, %b: !gnn.tensor<dense, 4xf32>) -> !gnn.tensor<dense, ?x4xf32> {
  %h1 = gnn.attach %g, %x : !gnn.graph<graph>, !gnn.tensor<dense, ?x4xf32> -> !gnn.tensor<src, 4xf32>
  %m1 = gnn.gather %g, %h1 : !gnn.graph<graph>, !gnn.tensor<src, 4xf32> -> !gnn.tensor<edge, 4xf32>
  %s1 = gnn.scatter sum %g, %m1 : !gnn.graph<graph>, !gnn.tensor<edge, 4xf32> -> !gnn.tensor<dst, 4xf32>
  %c1 = gnn.collect %g, %s1 : !gnn.graph<graph>, !gnn.tensor<dst, 4xf32> -> !gnn.tensor<dense, ?x4xf32>
  %biased = gnn.binary add %c1, %b : !gnn.tensor<dense, ?x4xf32>, !gnn.tensor<dense, 4xf32> -> !gnn.tensor<dense, ?x4xf32>
  %act = gnn.unary relu %biased : !gnn.tensor<dense, ?x4xf32>
  %y = gnn.binary mul %x, %x : !gnn.tensor<dense, ?x4xf32>, !gnn.tensor<dense, ?x4xf32> -> !gnn.tensor<dense, ?x4xf32>
  %h2 = gnn.attach %g, %y : !gnn.graph<graph>, !gnn.tensor<dense, ?x4xf32> -> !gnn.tensor<src, 4xf32>
  %m2 = gnn.gather %g, %h2 : !gnn.graph<graph>, !gnn.tensor<src, 4xf32> -> !gnn.tensor<edge, 4xf32>
  %s2 = gnn.scatter min %g, %m2 : !gnn.graph<graph>, !gnn.tensor<edge, 4xf32> -> !gnn.tensor<dst, 4xf32>
  %c2 = gnn.collect %g, %s2 : !gnn.graph<graph>, !gnn.tensor<dst, 4xf32> -> !gnn.tensor<dense, ?x4xf32>
  %r = gnn.binary add %act, %c2 : !gnn.tensor<dense, ?x4xf32>, !gnn.tensor<dense, ?x4xf32> -> !gnn.tensor<dense, ?x4xf32>
  return %r : !gnn.tensor<dense, ?x4xf32>
}

// -----

// The first result's use sits between two aggregations of which the second
// reads a third one that reads the first: a, c (reads a, other direction),
// b (reads c). b depends on a, so a and b stay apart even though the collect
// in between moves.
// CHECK-LABEL: func.func @dependent_through_other_direction
// CHECK: %[[A:.*]] = gnn.aggregate {{.*}} by dst reductions [{kind = "sum"}]
// CHECK: %[[C:.*]] = gnn.aggregate %{{.*}}(%[[A]] : {{.*}} by src reductions [{kind = "sum"}]
// CHECK: gnn.aggregate %{{.*}}(%[[C]] : {{.*}} by dst reductions [{kind = "max"}]
// CHECK-NOT: gnn.aggregate
func.func @dependent_through_other_direction(%g: !gnn.graph<graph>, %x: !gnn.tensor<dense, ?x4xf32>) -> !gnn.tensor<dense, ?x4xf32> {
  %h = gnn.attach %g, %x : !gnn.graph<graph>, !gnn.tensor<dense, ?x4xf32> -> !gnn.tensor<src, 4xf32>
  %m = gnn.gather %g, %h : !gnn.graph<graph>, !gnn.tensor<src, 4xf32> -> !gnn.tensor<edge, 4xf32>
  %a = gnn.scatter sum %g, %m : !gnn.graph<graph>, !gnn.tensor<edge, 4xf32> -> !gnn.tensor<dst, 4xf32>
  %ca = gnn.collect %g, %a : !gnn.graph<graph>, !gnn.tensor<dst, 4xf32> -> !gnn.tensor<dense, ?x4xf32>
  %ae = gnn.gather %g, %a : !gnn.graph<graph>, !gnn.tensor<dst, 4xf32> -> !gnn.tensor<edge, 4xf32>
  %c = gnn.scatter sum %g, %ae : !gnn.graph<graph>, !gnn.tensor<edge, 4xf32> -> !gnn.tensor<src, 4xf32>
  %ce = gnn.gather %g, %c : !gnn.graph<graph>, !gnn.tensor<src, 4xf32> -> !gnn.tensor<edge, 4xf32>
  %b = gnn.scatter max %g, %ce : !gnn.graph<graph>, !gnn.tensor<edge, 4xf32> -> !gnn.tensor<dst, 4xf32>
  %cb = gnn.collect %g, %b : !gnn.graph<graph>, !gnn.tensor<dst, 4xf32> -> !gnn.tensor<dense, ?x4xf32>
  %r = gnn.binary add %ca, %cb : !gnn.tensor<dense, ?x4xf32>, !gnn.tensor<dense, ?x4xf32> -> !gnn.tensor<dense, ?x4xf32>
  return %r : !gnn.tensor<dense, ?x4xf32>
}
