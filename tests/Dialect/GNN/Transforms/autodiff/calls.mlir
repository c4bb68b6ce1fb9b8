// Layer calls: the backward of a caller calls the callee's backward with the
// call's operands and the cotangent of its result, and adds the returned
// gradients to those of the operands (here both calls share W). Backward
// functions are made callee-first, whatever the order in the module. A
// function with a gnn.aggregate (already fused) gets no backward.
//
// RUN: gnn-opt %s --gnn-autodiff | FileCheck %s
// Running the pass again adds nothing.
// RUN: gnn-opt %s --gnn-autodiff --gnn-autodiff | FileCheck %s

// CHECK-LABEL: func.func @model(
// CHECK-LABEL: func.func @model.backward(
// CHECK-SAME: %[[G:[^:]*]]: !gnn.graph<graph>
// CHECK-SAME: %[[X:[^:]*]]: !gnn.tensor<dense, ?x3xf32>
// CHECK-SAME: %[[W:[^:]*]]: !gnn.tensor<dense, 3x3xf32>
// CHECK-SAME: %[[DY:[^:]*]]: !gnn.tensor<dense, ?x3xf32>
// CHECK-SAME: -> (!gnn.tensor<dense, ?x3xf32> {gnn.grad_of = "x"}, !gnn.tensor<dense, 3x3xf32> {gnn.grad_of = "conv.W"})
// CHECK-SAME: attributes {gnn.backward_of = @model}
// The forward call is recomputed: the second call's operand needs it.
// CHECK: %[[H:.*]] = call @model.conv(%[[G]], %[[X]], %[[W]])
// CHECK: %[[T:.*]] = gnn.unary tanh %[[H]]
// CHECK: %[[B2:.*]]:2 = call @model.conv.backward(%[[G]], %[[T]], %[[W]], %[[DY]]) : (!gnn.graph<graph>, !gnn.tensor<dense, ?x3xf32>, !gnn.tensor<dense, 3x3xf32>, !gnn.tensor<dense, ?x3xf32>) -> (!gnn.tensor<dense, ?x3xf32>, !gnn.tensor<dense, 3x3xf32>)
// CHECK: %[[B1:.*]]:2 = call @model.conv.backward(%[[G]], %[[X]], %[[W]], %{{.*}})
// CHECK: %[[DW:.*]] = gnn.binary add %[[B2]]#1, %[[B1]]#1 : <dense, 3x3xf32>, <dense, 3x3xf32> -> <dense, 3x3xf32>
// CHECK: return %[[B1]]#0, %[[DW]]
func.func @model(%g: !gnn.graph<graph> {gnn.name = "g"}, %x: !gnn.tensor<dense, ?x3xf32> {gnn.name = "x"},
                 %w: !gnn.tensor<dense, 3x3xf32> {gnn.param = "conv.W"}) -> !gnn.tensor<dense, ?x3xf32> {
  %h = call @model.conv(%g, %x, %w) : (!gnn.graph<graph>, !gnn.tensor<dense, ?x3xf32>, !gnn.tensor<dense, 3x3xf32>) -> !gnn.tensor<dense, ?x3xf32>
  %t = gnn.unary tanh %h : !gnn.tensor<dense, ?x3xf32>
  %o = call @model.conv(%g, %t, %w) : (!gnn.graph<graph>, !gnn.tensor<dense, ?x3xf32>, !gnn.tensor<dense, 3x3xf32>) -> !gnn.tensor<dense, ?x3xf32>
  return %o : !gnn.tensor<dense, ?x3xf32>
}

// CHECK-LABEL: func.func @model.conv(
// CHECK-LABEL: func.func @model.conv.backward(
// CHECK-SAME: -> (!gnn.tensor<dense, ?x3xf32> {gnn.grad_of = "x"}, !gnn.tensor<dense, 3x3xf32> {gnn.grad_of = "W"})
func.func @model.conv(%g: !gnn.graph<graph> {gnn.name = "g"}, %x: !gnn.tensor<dense, ?x3xf32> {gnn.name = "x"},
                      %w: !gnn.tensor<dense, 3x3xf32> {gnn.param = "W"}) -> !gnn.tensor<dense, ?x3xf32> {
  %h = gnn.matmul %x, %w : !gnn.tensor<dense, ?x3xf32>, !gnn.tensor<dense, 3x3xf32> -> !gnn.tensor<dense, ?x3xf32>
  return %h : !gnn.tensor<dense, ?x3xf32>
}

// CHECK-LABEL: func.func @fused(
// CHECK-NOT: @fused.backward
func.func @fused(%g: !gnn.graph<graph>, %h: !gnn.tensor<dense, ?x2xf32>) -> !gnn.tensor<dense, ?x2xf32> {
  %hs = gnn.attach %g, %h : !gnn.graph<graph>, !gnn.tensor<dense, ?x2xf32> -> !gnn.tensor<src, 2xf32>
  %s = gnn.aggregate %g(%hs : !gnn.tensor<src, 2xf32>) by dst reductions [{kind = "sum"}] : !gnn.graph<graph> -> !gnn.tensor<dst, 2xf32> {
  ^bb0(%r: !gnn.tensor<dense, 2xf32>):
    gnn.yield %r : !gnn.tensor<dense, 2xf32>
  }
  %o = gnn.collect %g, %s : !gnn.graph<graph>, !gnn.tensor<dst, 2xf32> -> !gnn.tensor<dense, ?x2xf32>
  return %o : !gnn.tensor<dense, ?x2xf32>
}

// An argument that does not reach the result gets zeros of its type and
// run-time shape; an integer argument too.
// CHECK-LABEL: func.func @unused.backward(
// CHECK-SAME: %[[A:[^:]*]]: !gnn.tensor<dense, ?x2xf32>
// CHECK-SAME: %[[N:[^:]*]]: !gnn.tensor<dense, i64>
// CHECK-SAME: %[[B:[^:]*]]: !gnn.tensor<dense, 2xf32>
// CHECK-SAME: %[[DY:[^:]*]]: !gnn.tensor<dense, 2xf32>
// CHECK: %[[Z:.*]] = gnn.constant 0.000000e+00 : <dense, f32>
// CHECK-NEXT: %[[ZA:.*]] = gnn.broadcast_like %[[Z]], %[[A]] : <dense, f32>, <dense, ?x2xf32>
// CHECK-NEXT: %[[ZI:.*]] = gnn.constant 0.000000e+00 : <dense, i64>
// CHECK-NEXT: %[[ZN:.*]] = gnn.broadcast_like %[[ZI]], %[[N]] : <dense, i64>, <dense, i64>
// CHECK-NEXT: return %[[ZA]], %[[ZN]], %[[DY]]
func.func @unused(%a: !gnn.tensor<dense, ?x2xf32>, %n: !gnn.tensor<dense, i64>, %b: !gnn.tensor<dense, 2xf32>) -> !gnn.tensor<dense, 2xf32> {
  return %b : !gnn.tensor<dense, 2xf32>
}
