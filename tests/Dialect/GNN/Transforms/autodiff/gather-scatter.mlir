// gnn-autodiff on the message-passing ops: a gather's transpose is a sum
// scatter grouped by the end it gathered from, a sum scatter's transpose a
// gather from the vertices it grouped by, attach and collect are each
// other's transposes.
//
// RUN: gnn-opt %s --gnn-autodiff | FileCheck %s

// The forward function is left as it was.
// CHECK-LABEL: func.func @aggregate(
// CHECK-NOT: backward
// CHECK: return

// The backward takes the arguments and the cotangent of the result, and
// returns one gradient per tensor argument (the graph gets none).
// CHECK-LABEL: func.func @aggregate.backward(
// CHECK-SAME: %[[G:[^:]*]]: !gnn.graph<graph> {gnn.name = "g"}
// CHECK-SAME: %[[X:[^:]*]]: !gnn.tensor<dense, ?x3xf32> {gnn.name = "x"}
// CHECK-SAME: %[[DY:[^:]*]]: !gnn.tensor<dense, ?x3xf32> {gnn.name = "cotangent"}
// CHECK-SAME: -> (!gnn.tensor<dense, ?x3xf32> {gnn.grad_of = "x"})
// CHECK-SAME: attributes {gnn.backward_of = @aggregate}
// collect^T = attach (to the same side)
// CHECK: %[[D:.*]] = gnn.attach %[[G]], %[[DY]] : <graph>, <dense, ?x3xf32> -> <dst, 3xf32>
// scatter sum by dst^T = gather from dst
// CHECK-NEXT: %[[E:.*]] = gnn.gather %[[G]], %[[D]] : <graph>, <dst, 3xf32> -> <edge, 3xf32>
// gather from src^T = scatter sum by src
// CHECK-NEXT: %[[S:.*]] = gnn.scatter sum %[[G]], %[[E]] : <graph>, <edge, 3xf32> -> <src, 3xf32>
// attach^T = collect
// CHECK-NEXT: %[[DX:.*]] = gnn.collect %[[G]], %[[S]] : <graph>, <src, 3xf32> -> <dense, ?x3xf32>
// CHECK-NEXT: return %[[DX]]
func.func @aggregate(%g: !gnn.graph<graph> {gnn.name = "g"}, %x: !gnn.tensor<dense, ?x3xf32> {gnn.name = "x"}) -> !gnn.tensor<dense, ?x3xf32> {
  %a = gnn.attach %g, %x : !gnn.graph<graph>, !gnn.tensor<dense, ?x3xf32> -> !gnn.tensor<src, 3xf32>
  %e = gnn.gather %g, %a : !gnn.graph<graph>, !gnn.tensor<src, 3xf32> -> !gnn.tensor<edge, 3xf32>
  %s = gnn.scatter sum %g, %e : !gnn.graph<graph>, !gnn.tensor<edge, 3xf32> -> !gnn.tensor<dst, 3xf32>
  %r = gnn.collect %g, %s : !gnn.graph<graph>, !gnn.tensor<dst, 3xf32> -> !gnn.tensor<dense, ?x3xf32>
  return %r : !gnn.tensor<dense, ?x3xf32>
}

// Out-edges: gathered from the destination, grouped by source; the mean
// divides each edge's share by its group's size (out-degree) per edge.
// CHECK-LABEL: func.func @out_mean.backward(
// CHECK-SAME: %[[G:[^:]*]]: !gnn.graph<graph>
// CHECK: %[[D:.*]] = gnn.attach %[[G]], %{{.*}} : <graph>, <dense, ?x3xf32> -> <src, 3xf32>
// CHECK-NEXT: %[[E:.*]] = gnn.gather %[[G]], %[[D]] : <graph>, <src, 3xf32> -> <edge, 3xf32>
// CHECK-NEXT: %[[DEG:.*]] = gnn.out_degree %[[G]] : <graph> -> <dense, ?xf32>
// CHECK-NEXT: %[[DV:.*]] = gnn.attach %[[G]], %[[DEG]] : <graph>, <dense, ?xf32> -> <src, f32>
// CHECK-NEXT: %[[DE:.*]] = gnn.gather %[[G]], %[[DV]] : <graph>, <src, f32> -> <edge, f32>
// CHECK-NEXT: %[[Q:.*]] = gnn.binary div %[[E]], %[[DE]] : <edge, 3xf32>, <edge, f32> -> <edge, 3xf32>
// CHECK-NEXT: %[[S:.*]] = gnn.scatter sum %[[G]], %[[Q]] : <graph>, <edge, 3xf32> -> <dst, 3xf32>
// CHECK-NEXT: gnn.collect %[[G]], %[[S]] : <graph>, <dst, 3xf32> -> <dense, ?x3xf32>
func.func @out_mean(%g: !gnn.graph<graph> {gnn.name = "g"}, %x: !gnn.tensor<dense, ?x3xf32> {gnn.name = "x"}) -> !gnn.tensor<dense, ?x3xf32> {
  %a = gnn.attach %g, %x : !gnn.graph<graph>, !gnn.tensor<dense, ?x3xf32> -> !gnn.tensor<dst, 3xf32>
  %e = gnn.gather %g, %a : !gnn.graph<graph>, !gnn.tensor<dst, 3xf32> -> !gnn.tensor<edge, 3xf32>
  %s = gnn.scatter mean %g, %e : !gnn.graph<graph>, !gnn.tensor<edge, 3xf32> -> !gnn.tensor<src, 3xf32>
  %r = gnn.collect %g, %s : !gnn.graph<graph>, !gnn.tensor<src, 3xf32> -> !gnn.tensor<dense, ?x3xf32>
  return %r : !gnn.tensor<dense, ?x3xf32>
}

// An edge attribute: attach to edges^T collects the [E, ...] tensor; a
// splat's transpose sums its rows; a dense parameter added to every vertex
// row gets the vertex axis summed.
// CHECK-LABEL: func.func @edge_weights.backward(
// CHECK-SAME: %[[G:[^:]*]]: !gnn.graph<graph>
// CHECK-SAME: -> (!gnn.tensor<dense, ?xf32> {gnn.grad_of = "w"}, !gnn.tensor<dense, f32> {gnn.grad_of = "s"}, !gnn.tensor<dense, 3xf32> {gnn.grad_of = "b"})
// CHECK-DAG: gnn.collect %[[G]], %{{.*}} : <graph>, <edge, f32> -> <dense, ?xf32>
// CHECK-DAG: %[[SC:.*]] = gnn.collect %[[G]], %{{.*}} : <graph>, <dst, f32> -> <dense, ?xf32>
// CHECK-DAG: gnn.reduce sum %[[SC]] {axis = 0 : i64} : <dense, ?xf32> -> <dense, f32>
// CHECK-DAG: %[[BC:.*]] = gnn.collect %[[G]], %{{.*}} : <graph>, <dst, 3xf32> -> <dense, ?x3xf32>
// CHECK-DAG: gnn.reduce sum %[[BC]] {axis = 0 : i64} : <dense, ?x3xf32> -> <dense, 3xf32>
func.func @edge_weights(%g: !gnn.graph<graph> {gnn.name = "g"}, %w: !gnn.tensor<dense, ?xf32> {gnn.name = "w"},
                        %s: !gnn.tensor<dense, f32> {gnn.name = "s"}, %b: !gnn.tensor<dense, 3xf32> {gnn.name = "b"}) -> !gnn.tensor<dense, ?x3xf32> {
  %we = gnn.attach %g, %w : !gnn.graph<graph>, !gnn.tensor<dense, ?xf32> -> !gnn.tensor<edge, f32>
  %sum = gnn.scatter sum %g, %we : !gnn.graph<graph>, !gnn.tensor<edge, f32> -> !gnn.tensor<dst, f32>
  %sd = gnn.splat %g, %s : !gnn.graph<graph>, !gnn.tensor<dense, f32> -> !gnn.tensor<dst, f32>
  %t = gnn.binary mul %sum, %sd : !gnn.tensor<dst, f32>, !gnn.tensor<dst, f32> -> !gnn.tensor<dst, f32>
  %u = gnn.binary add %t, %b : !gnn.tensor<dst, f32>, !gnn.tensor<dense, 3xf32> -> !gnn.tensor<dst, 3xf32>
  %r = gnn.collect %g, %u : !gnn.graph<graph>, !gnn.tensor<dst, 3xf32> -> !gnn.tensor<dense, ?x3xf32>
  return %r : !gnn.tensor<dense, ?x3xf32>
}
