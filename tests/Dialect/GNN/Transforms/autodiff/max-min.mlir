// gnn-autodiff on max and min: the gradient goes only where the forward op
// took its value. For a max or min aggregation that is the edge
// gnn.scatter_select marks (the first extreme edge in CSR order by
// destination, CSC order by source, as gnn.scatter keeps it); for readout
// the vertex gnn.readout_select marks; for reduce the element
// gnn.reduce_select marks; for gnn.binary max/min the left operand on a tie.
//
// RUN: gnn-opt %s --gnn-autodiff | FileCheck %s

// CHECK-LABEL: func.func @pool.backward(
// CHECK-SAME: %[[G:[^:]*]]: !gnn.graph<graph>
// CHECK: %[[E:.*]] = gnn.gather %[[G]], %{{.*}} : <graph>, <src, 4xf32> -> <edge, 4xf32>
// The cotangent, read at each edge's destination...
// CHECK: %[[DYE:.*]] = gnn.gather %[[G]], %{{.*}} : <graph>, <dst, 4xf32> -> <edge, 4xf32>
// ...masked by the edge the max chose...
// CHECK-NEXT: %[[M:.*]] = gnn.scatter_select max %[[G]], %[[E]] {by = #gnn<domain dst>} : <graph>, <edge, 4xf32> -> <edge, 4xf32>
// CHECK-NEXT: %[[DE:.*]] = gnn.binary mul %[[DYE]], %[[M]] : <edge, 4xf32>, <edge, 4xf32> -> <edge, 4xf32>
// ...goes back to the sources.
// CHECK-NEXT: gnn.scatter sum %[[G]], %[[DE]] : <graph>, <edge, 4xf32> -> <src, 4xf32>
func.func @pool(%g: !gnn.graph<graph> {gnn.name = "g"}, %x: !gnn.tensor<dense, ?x4xf32> {gnn.name = "x"}) -> !gnn.tensor<dense, ?x4xf32> {
  %a = gnn.attach %g, %x : !gnn.graph<graph>, !gnn.tensor<dense, ?x4xf32> -> !gnn.tensor<src, 4xf32>
  %e = gnn.gather %g, %a : !gnn.graph<graph>, !gnn.tensor<src, 4xf32> -> !gnn.tensor<edge, 4xf32>
  %s = gnn.scatter max %g, %e : !gnn.graph<graph>, !gnn.tensor<edge, 4xf32> -> !gnn.tensor<dst, 4xf32>
  %r = gnn.collect %g, %s : !gnn.graph<graph>, !gnn.tensor<dst, 4xf32> -> !gnn.tensor<dense, ?x4xf32>
  return %r : !gnn.tensor<dense, ?x4xf32>
}

// Min over out-edges selects by source.
// CHECK-LABEL: func.func @out_min.backward(
// CHECK: gnn.scatter_select min %{{.*}}, %{{.*}} {by = #gnn<domain src>} : <graph>, <edge, 4xf32> -> <edge, 4xf32>
func.func @out_min(%g: !gnn.graph<graph> {gnn.name = "g"}, %x: !gnn.tensor<dense, ?x4xf32> {gnn.name = "x"}) -> !gnn.tensor<dense, ?x4xf32> {
  %a = gnn.attach %g, %x : !gnn.graph<graph>, !gnn.tensor<dense, ?x4xf32> -> !gnn.tensor<dst, 4xf32>
  %e = gnn.gather %g, %a : !gnn.graph<graph>, !gnn.tensor<dst, 4xf32> -> !gnn.tensor<edge, 4xf32>
  %s = gnn.scatter min %g, %e : !gnn.graph<graph>, !gnn.tensor<edge, 4xf32> -> !gnn.tensor<src, 4xf32>
  %r = gnn.collect %g, %s : !gnn.graph<graph>, !gnn.tensor<src, 4xf32> -> !gnn.tensor<dense, ?x4xf32>
  return %r : !gnn.tensor<dense, ?x4xf32>
}

// Readout max: the cotangent of each graph's row spread to its vertices,
// masked by the vertex each element came from.
// CHECK-LABEL: func.func @readout_max.backward(
// CHECK-SAME: %[[G:[^:]*]]: !gnn.graph<batched>
// CHECK-SAME: %[[X:[^:]*]]: !gnn.tensor<dense, ?x4xf32>
// CHECK-SAME: %[[DY:[^:]*]]: !gnn.tensor<dense, ?x4xf32>
// CHECK: %[[B:.*]] = gnn.broadcast_graphs %[[G]], %[[DY]] : <batched>, <dense, ?x4xf32> -> <dense, ?x4xf32>
// CHECK-NEXT: %[[M:.*]] = gnn.readout_select max %[[G]], %[[X]] : <batched>, <dense, ?x4xf32> -> <dense, ?x4xf32>
// CHECK-NEXT: gnn.binary mul %[[B]], %[[M]]
func.func @readout_max(%g: !gnn.graph<batched> {gnn.name = "g"}, %x: !gnn.tensor<dense, ?x4xf32> {gnn.name = "x"}) -> !gnn.tensor<dense, ?x4xf32> {
  %r = gnn.readout max %g, %x : !gnn.graph<batched>, !gnn.tensor<dense, ?x4xf32> -> !gnn.tensor<dense, ?x4xf32>
  return %r : !gnn.tensor<dense, ?x4xf32>
}

// Readout mean divides by each vertex's graph size (never 0 for a vertex).
// CHECK-LABEL: func.func @readout_mean.backward(
// CHECK: %[[B:.*]] = gnn.broadcast_graphs
// CHECK-NEXT: %[[N:.*]] = gnn.graph_sizes %{{.*}} : <batched> -> <dense, ?xf32>
// CHECK-NEXT: %[[N2:.*]] = gnn.reshape %[[N]] : <dense, ?xf32> -> <dense, ?x1xf32>
// CHECK-NEXT: %[[NV:.*]] = gnn.broadcast_graphs %{{.*}}, %[[N2]] : <batched>, <dense, ?x1xf32> -> <dense, ?x1xf32>
// CHECK-NEXT: gnn.binary div %[[B]], %[[NV]] : <dense, ?x4xf32>, <dense, ?x1xf32> -> <dense, ?x4xf32>
func.func @readout_mean(%g: !gnn.graph<batched> {gnn.name = "g"}, %x: !gnn.tensor<dense, ?x4xf32> {gnn.name = "x"}) -> !gnn.tensor<dense, ?x4xf32> {
  %r = gnn.readout mean %g, %x : !gnn.graph<batched>, !gnn.tensor<dense, ?x4xf32> -> !gnn.tensor<dense, ?x4xf32>
  return %r : !gnn.tensor<dense, ?x4xf32>
}

// Reduce max over one axis: the cotangent is spread back over the axis and
// masked by the chosen element.
// CHECK-LABEL: func.func @reduce_max.backward(
// CHECK-SAME: %[[X:[^:]*]]: !gnn.tensor<dense, ?x4xf32>
// CHECK-SAME: %[[DY:[^:]*]]: !gnn.tensor<dense, ?xf32>
// CHECK: %[[K:.*]] = gnn.reshape %[[DY]] : <dense, ?xf32> -> <dense, ?x1xf32>
// CHECK-NEXT: %[[M:.*]] = gnn.reduce_select max %[[X]] {axis = 1 : i64} : <dense, ?x4xf32>
// CHECK-NEXT: %[[B:.*]] = gnn.broadcast_like %[[K]], %[[X]] : <dense, ?x1xf32>, <dense, ?x4xf32>
// CHECK-NEXT: gnn.binary mul %[[B]], %[[M]]
func.func @reduce_max(%x: !gnn.tensor<dense, ?x4xf32> {gnn.name = "x"}) -> !gnn.tensor<dense, ?xf32> {
  %r = gnn.reduce max %x {axis = 1 : i64} : !gnn.tensor<dense, ?x4xf32> -> !gnn.tensor<dense, ?xf32>
  return %r : !gnn.tensor<dense, ?xf32>
}

// Binary max: the right operand gets the gradient where it is strictly
// larger (gt), the left one elsewhere, ties included.
// CHECK-LABEL: func.func @binary_max.backward(
// CHECK-SAME: %[[A:[^:]*]]: !gnn.tensor<dense, ?x4xf32>
// CHECK-SAME: %[[B:[^:]*]]: !gnn.tensor<dense, ?x4xf32>
// CHECK-SAME: %[[DY:[^:]*]]: !gnn.tensor<dense, ?x4xf32>
// CHECK: %[[R:.*]] = gnn.binary gt %[[B]], %[[A]]
// CHECK-NEXT: %[[ONE:.*]] = gnn.constant 1.000000e+00
// CHECK-NEXT: %[[L:.*]] = gnn.binary sub %[[ONE]], %[[R]]
// CHECK-NEXT: %[[DA:.*]] = gnn.binary mul %[[DY]], %[[L]]
// CHECK-NEXT: %[[DB:.*]] = gnn.binary mul %[[DY]], %[[R]]
// CHECK-NEXT: return %[[DA]], %[[DB]]
func.func @binary_max(%a: !gnn.tensor<dense, ?x4xf32> {gnn.name = "a"}, %b: !gnn.tensor<dense, ?x4xf32> {gnn.name = "b"}) -> !gnn.tensor<dense, ?x4xf32> {
  %r = gnn.binary max %a, %b : !gnn.tensor<dense, ?x4xf32>, !gnn.tensor<dense, ?x4xf32> -> !gnn.tensor<dense, ?x4xf32>
  return %r : !gnn.tensor<dense, ?x4xf32>
}
