// Every op and type of the gnn dialect survives printing and parsing: the
// custom form is printed, parsed back and printed again, and the generic form
// (--mlir-print-op-generic) parses back to the same custom form.
//
// RUN: gnn-opt %s | gnn-opt | FileCheck %s
// RUN: gnn-opt %s --mlir-print-op-generic | gnn-opt | FileCheck %s
// RUN: gnn-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @types
// CHECK-SAME: !gnn.graph<graph>
// CHECK-SAME: !gnn.graph<block>
// CHECK-SAME: !gnn.graph<batched>
// CHECK-SAME: !gnn.graph<hetero>
// CHECK-SAME: !gnn.tensor<dense, f32>
// CHECK-SAME: !gnn.tensor<dense, i64>
// CHECK-SAME: !gnn.tensor<dense, ?x4xf64>
// CHECK-SAME: !gnn.tensor<dense, 2x?x?xf32>
// CHECK-SAME: !gnn.tensor<edge, f32>
// CHECK-SAME: !gnn.tensor<dst, 2x1xbf16>
// CHECK-SAME: !gnn.tensor<src, 3xi32>
// CHECK-SAME: !gnn.tensor<edge, 1x1x1xi1>
// CHECK-SAME: !gnn.tensor<src, f16>
func.func @types(%g: !gnn.graph<graph>, %b: !gnn.graph<block>,
                 %bg: !gnn.graph<batched>, %h: !gnn.graph<hetero>,
                 %s: !gnn.tensor<dense, f32>, %i: !gnn.tensor<dense, i64>,
                 %d: !gnn.tensor<dense, ?x4xf64>,
                 %d2: !gnn.tensor<dense, 2x?x?xf32>,
                 %e: !gnn.tensor<edge, f32>, %v: !gnn.tensor<dst, 2x1xbf16>,
                 %w: !gnn.tensor<src, 3xi32>, %x: !gnn.tensor<edge, 1x1x1xi1>,
                 %y: !gnn.tensor<src, f16>) {
  return
}

// The domain keyword may also be written as a string.
// CHECK-LABEL: func.func @quoted_domain
// CHECK-SAME: !gnn.tensor<dst, 4xf32>
func.func @quoted_domain(%x: !gnn.tensor<"dst", 4xf32>) {
  return
}

//===----------------------------------------------------------------------===//
// Graph facts
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @graph_facts
func.func @graph_facts(%g: !gnn.graph<graph>, %b: !gnn.graph<block>,
                       %h: !gnn.graph<hetero>) {
  // CHECK: gnn.in_degree %{{.*}} : <graph> -> <dense, ?xf32>
  %0 = gnn.in_degree %g : !gnn.graph<graph> -> !gnn.tensor<dense, ?xf32>
  // CHECK: gnn.out_degree %{{.*}} : <block> -> <dense, ?xf64>
  %1 = gnn.out_degree %b : !gnn.graph<block> -> !gnn.tensor<dense, ?xf64>
  // CHECK: gnn.num_vertices %{{.*}} : <block> -> <dense, i64>
  %2 = gnn.num_vertices %b : !gnn.graph<block> -> !gnn.tensor<dense, i64>
  // CHECK: gnn.num_edges %{{.*}} : <graph> -> <dense, i64>
  %3 = gnn.num_edges %g : !gnn.graph<graph> -> !gnn.tensor<dense, i64>
  // CHECK: %[[R:.*]] = gnn.relation %{{.*}} "cites" : <hetero> -> <graph>
  %r = gnn.relation %h "cites" : !gnn.graph<hetero> -> !gnn.graph<graph>
  // CHECK: gnn.in_degree %[[R]] : <graph> -> <dense, ?xf32>
  %4 = gnn.in_degree %r : !gnn.graph<graph> -> !gnn.tensor<dense, ?xf32>
  // CHECK: gnn.relation %{{.*}} "a \22quoted\22 name" : <hetero> -> <graph>
  %5 = gnn.relation %h "a \"quoted\" name" : !gnn.graph<hetero> -> !gnn.graph<graph>
  // The graph facts work on every graph kind but a whole hetero graph.
  // CHECK: gnn.num_vertices %{{.*}} : <hetero> -> <dense, i64>
  %6 = gnn.num_vertices %h : !gnn.graph<hetero> -> !gnn.tensor<dense, i64>
  return
}

//===----------------------------------------------------------------------===//
// Moving between domains
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @domains
func.func @domains(%g: !gnn.graph<graph>, %x: !gnn.tensor<dense, ?x16xf32>,
                   %w: !gnn.tensor<dense, ?xf32>, %bias: !gnn.tensor<dense, 16xf32>,
                   %s: !gnn.tensor<dense, f32>) -> !gnn.tensor<dense, ?x16xf32> {
  // CHECK: %[[HS:.*]] = gnn.attach %{{.*}}, %{{.*}} : <graph>, <dense, ?x16xf32> -> <src, 16xf32>
  %hs = gnn.attach %g, %x : !gnn.graph<graph>, !gnn.tensor<dense, ?x16xf32> -> !gnn.tensor<src, 16xf32>
  // CHECK: %[[HD:.*]] = gnn.attach %{{.*}}, %{{.*}} : <graph>, <dense, ?x16xf32> -> <dst, 16xf32>
  %hd = gnn.attach %g, %x : !gnn.graph<graph>, !gnn.tensor<dense, ?x16xf32> -> !gnn.tensor<dst, 16xf32>
  // A rank-1 dense tensor attaches as a scalar row.
  // CHECK: gnn.attach %{{.*}}, %{{.*}} : <graph>, <dense, ?xf32> -> <edge, f32>
  %ew = gnn.attach %g, %w : !gnn.graph<graph>, !gnn.tensor<dense, ?xf32> -> !gnn.tensor<edge, f32>
  // CHECK: gnn.gather %{{.*}}, %[[HS]] : <graph>, <src, 16xf32> -> <edge, 16xf32>
  %ms = gnn.gather %g, %hs : !gnn.graph<graph>, !gnn.tensor<src, 16xf32> -> !gnn.tensor<edge, 16xf32>
  // CHECK: gnn.gather %{{.*}}, %[[HD]] : <graph>, <dst, 16xf32> -> <edge, 16xf32>
  %md = gnn.gather %g, %hd : !gnn.graph<graph>, !gnn.tensor<dst, 16xf32> -> !gnn.tensor<edge, 16xf32>
  // CHECK: gnn.splat %{{.*}}, %{{.*}} : <graph>, <dense, 16xf32> -> <dst, 16xf32>
  %bd = gnn.splat %g, %bias : !gnn.graph<graph>, !gnn.tensor<dense, 16xf32> -> !gnn.tensor<dst, 16xf32>
  // CHECK: gnn.splat %{{.*}}, %{{.*}} : <graph>, <dense, f32> -> <edge, f32>
  %se = gnn.splat %g, %s : !gnn.graph<graph>, !gnn.tensor<dense, f32> -> !gnn.tensor<edge, f32>
  // CHECK: gnn.splat %{{.*}}, %{{.*}} : <graph>, <dense, f32> -> <src, f32>
  %ss = gnn.splat %g, %s : !gnn.graph<graph>, !gnn.tensor<dense, f32> -> !gnn.tensor<src, f32>
  // CHECK: %[[SUM:.*]] = gnn.scatter sum %{{.*}}, %{{.*}} : <graph>, <edge, 16xf32> -> <dst, 16xf32>
  %sum = gnn.scatter sum %g, %ms : !gnn.graph<graph>, !gnn.tensor<edge, 16xf32> -> !gnn.tensor<dst, 16xf32>
  // CHECK: gnn.scatter mean %{{.*}}, %{{.*}} : <graph>, <edge, 16xf32> -> <dst, 16xf32>
  %mean = gnn.scatter mean %g, %ms : !gnn.graph<graph>, !gnn.tensor<edge, 16xf32> -> !gnn.tensor<dst, 16xf32>
  // CHECK: gnn.scatter max %{{.*}}, %{{.*}} : <graph>, <edge, 16xf32> -> <dst, 16xf32>
  %max = gnn.scatter max %g, %ms : !gnn.graph<graph>, !gnn.tensor<edge, 16xf32> -> !gnn.tensor<dst, 16xf32>
  // Out-edge aggregation: the result is per source.
  // CHECK: gnn.scatter min %{{.*}}, %{{.*}} : <graph>, <edge, 16xf32> -> <src, 16xf32>
  %min = gnn.scatter min %g, %md : !gnn.graph<graph>, !gnn.tensor<edge, 16xf32> -> !gnn.tensor<src, 16xf32>
  // CHECK: gnn.collect %{{.*}}, %[[SUM]] : <graph>, <dst, 16xf32> -> <dense, ?x16xf32>
  %out = gnn.collect %g, %sum : !gnn.graph<graph>, !gnn.tensor<dst, 16xf32> -> !gnn.tensor<dense, ?x16xf32>
  // CHECK: gnn.collect %{{.*}}, %{{.*}} : <graph>, <src, 16xf32> -> <dense, ?x16xf32>
  %out2 = gnn.collect %g, %min : !gnn.graph<graph>, !gnn.tensor<src, 16xf32> -> !gnn.tensor<dense, ?x16xf32>
  // A static vertex axis is allowed too.
  // CHECK: gnn.collect %{{.*}}, %{{.*}} : <graph>, <src, f32> -> <dense, 5xf32>
  %out3 = gnn.collect %g, %ss : !gnn.graph<graph>, !gnn.tensor<src, f32> -> !gnn.tensor<dense, 5xf32>
  return %out : !gnn.tensor<dense, ?x16xf32>
}

// CHECK-LABEL: func.func @block_domains
func.func @block_domains(%b: !gnn.graph<block>, %xs: !gnn.tensor<dense, ?x4xf32>) -> !gnn.tensor<dense, ?x4xf32> {
  // CHECK: gnn.attach %{{.*}}, %{{.*}} : <block>, <dense, ?x4xf32> -> <src, 4xf32>
  %hs = gnn.attach %b, %xs : !gnn.graph<block>, !gnn.tensor<dense, ?x4xf32> -> !gnn.tensor<src, 4xf32>
  // CHECK: gnn.gather %{{.*}}, %{{.*}} : <block>, <src, 4xf32> -> <edge, 4xf32>
  %m = gnn.gather %b, %hs : !gnn.graph<block>, !gnn.tensor<src, 4xf32> -> !gnn.tensor<edge, 4xf32>
  // CHECK: gnn.scatter mean %{{.*}}, %{{.*}} : <block>, <edge, 4xf32> -> <dst, 4xf32>
  %a = gnn.scatter mean %b, %m : !gnn.graph<block>, !gnn.tensor<edge, 4xf32> -> !gnn.tensor<dst, 4xf32>
  // CHECK: gnn.collect %{{.*}}, %{{.*}} : <block>, <dst, 4xf32> -> <dense, ?x4xf32>
  %o = gnn.collect %b, %a : !gnn.graph<block>, !gnn.tensor<dst, 4xf32> -> !gnn.tensor<dense, ?x4xf32>
  return %o : !gnn.tensor<dense, ?x4xf32>
}

// Integer tensors may be summed but not averaged.
// CHECK-LABEL: func.func @integer_scatter
// CHECK: gnn.scatter sum %{{.*}}, %{{.*}} : <graph>, <edge, 2xi32> -> <dst, 2xi32>
func.func @integer_scatter(%g: !gnn.graph<graph>, %e: !gnn.tensor<edge, 2xi32>) {
  %0 = gnn.scatter sum %g, %e : !gnn.graph<graph>, !gnn.tensor<edge, 2xi32> -> !gnn.tensor<dst, 2xi32>
  return
}

// CHECK-LABEL: func.func @edge_softmax
func.func @edge_softmax(%g: !gnn.graph<graph>, %e: !gnn.tensor<edge, 8x1xf32>) {
  // CHECK: gnn.edge_softmax %{{.*}}, %{{.*}} {by = #gnn<domain dst>} : <graph>, <edge, 8x1xf32> -> <edge, 8x1xf32>
  %0 = gnn.edge_softmax %g, %e {by = #gnn<domain dst>} : !gnn.graph<graph>, !gnn.tensor<edge, 8x1xf32> -> !gnn.tensor<edge, 8x1xf32>
  // CHECK: gnn.edge_softmax %{{.*}}, %{{.*}} {by = #gnn<domain src>} : <graph>, <edge, 8x1xf32> -> <edge, 8x1xf32>
  %1 = gnn.edge_softmax %g, %e {by = #gnn<domain src>} : !gnn.graph<graph>, !gnn.tensor<edge, 8x1xf32> -> !gnn.tensor<edge, 8x1xf32>
  return
}

// CHECK-LABEL: func.func @readout
func.func @readout(%g: !gnn.graph<batched>, %x: !gnn.tensor<dense, ?x16xf32>) {
  // CHECK: gnn.readout sum %{{.*}}, %{{.*}} : <batched>, <dense, ?x16xf32> -> <dense, ?x16xf32>
  %0 = gnn.readout sum %g, %x : !gnn.graph<batched>, !gnn.tensor<dense, ?x16xf32> -> !gnn.tensor<dense, ?x16xf32>
  // CHECK: gnn.readout mean %{{.*}}, %{{.*}} : <batched>, <dense, ?x16xf32> -> <dense, ?x16xf32>
  %1 = gnn.readout mean %g, %x : !gnn.graph<batched>, !gnn.tensor<dense, ?x16xf32> -> !gnn.tensor<dense, ?x16xf32>
  // CHECK: gnn.readout max %{{.*}}, %{{.*}} : <batched>, <dense, ?x16xf32> -> <dense, 3x16xf32>
  %2 = gnn.readout max %g, %x : !gnn.graph<batched>, !gnn.tensor<dense, ?x16xf32> -> !gnn.tensor<dense, 3x16xf32>
  // CHECK: gnn.readout min %{{.*}}, %{{.*}} : <batched>, <dense, ?x16xf32> -> <dense, ?x16xf32>
  %3 = gnn.readout min %g, %x : !gnn.graph<batched>, !gnn.tensor<dense, ?x16xf32> -> !gnn.tensor<dense, ?x16xf32>
  return
}

//===----------------------------------------------------------------------===//
// Elementwise maths
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @elementwise
func.func @elementwise(%x: !gnn.tensor<edge, 8x1xf32>, %m: !gnn.tensor<edge, 8x8xf32>,
                       %i: !gnn.tensor<dst, 4xi64>, %d: !gnn.tensor<dense, 8xf32>) {
  // CHECK: gnn.constant 1.000000e+00 : <dense, f32>
  %c = gnn.constant 1.0 : !gnn.tensor<dense, f32>
  // CHECK: gnn.constant -2.500000e-01 : <dense, f64>
  %c2 = gnn.constant -0.25 : !gnn.tensor<dense, f64>
  // CHECK: gnn.constant 3.000000e+00 : <dense, i64>
  %c3 = gnn.constant 3.0 : !gnn.tensor<dense, i64>
  // CHECK: gnn.unary neg %{{.*}} : <edge, 8x1xf32>
  %u0 = gnn.unary neg %x : !gnn.tensor<edge, 8x1xf32>
  // CHECK: gnn.unary exp %{{.*}} : <edge, 8x1xf32>
  %u1 = gnn.unary exp %x : !gnn.tensor<edge, 8x1xf32>
  // CHECK: gnn.unary log %{{.*}} : <edge, 8x1xf32>
  %u2 = gnn.unary log %x : !gnn.tensor<edge, 8x1xf32>
  // CHECK: gnn.unary sqrt %{{.*}} : <edge, 8x1xf32>
  %u3 = gnn.unary sqrt %x : !gnn.tensor<edge, 8x1xf32>
  // CHECK: gnn.unary rsqrt %{{.*}} : <edge, 8x1xf32>
  %u4 = gnn.unary rsqrt %x : !gnn.tensor<edge, 8x1xf32>
  // CHECK: gnn.unary abs %{{.*}} : <edge, 8x1xf32>
  %u5 = gnn.unary abs %x : !gnn.tensor<edge, 8x1xf32>
  // CHECK: gnn.unary relu %{{.*}} : <edge, 8x1xf32>
  %u6 = gnn.unary relu %x : !gnn.tensor<edge, 8x1xf32>
  // CHECK: gnn.unary sigmoid %{{.*}} : <edge, 8x1xf32>
  %u7 = gnn.unary sigmoid %x : !gnn.tensor<edge, 8x1xf32>
  // CHECK: gnn.unary tanh %{{.*}} : <edge, 8x1xf32>
  %u8 = gnn.unary tanh %x : !gnn.tensor<edge, 8x1xf32>
  // CHECK: gnn.unary gelu %{{.*}} : <edge, 8x1xf32>
  %u9 = gnn.unary gelu %x : !gnn.tensor<edge, 8x1xf32>
  // CHECK: gnn.unary elu %{{.*}} {alpha = 1.000000e+00 : f64} : <edge, 8x1xf32>
  %u10 = gnn.unary elu %x {alpha = 1.0 : f64} : !gnn.tensor<edge, 8x1xf32>
  // CHECK: gnn.unary leaky_relu %{{.*}} {alpha = 2.000000e-01 : f64} : <edge, 8x1xf32>
  %u11 = gnn.unary leaky_relu %x {alpha = 0.2 : f64} : !gnn.tensor<edge, 8x1xf32>
  // neg, abs and relu also take integers.
  // CHECK: gnn.unary neg %{{.*}} : <dst, 4xi64>
  %u12 = gnn.unary neg %i : !gnn.tensor<dst, 4xi64>
  // CHECK: gnn.unary abs %{{.*}} : <dst, 4xi64>
  %u13 = gnn.unary abs %i : !gnn.tensor<dst, 4xi64>
  // CHECK: gnn.unary relu %{{.*}} : <dst, 4xi64>
  %u14 = gnn.unary relu %i : !gnn.tensor<dst, 4xi64>

  // CHECK: gnn.binary add %{{.*}}, %{{.*}} : <edge, 8x1xf32>, <edge, 8x8xf32> -> <edge, 8x8xf32>
  %b0 = gnn.binary add %x, %m : !gnn.tensor<edge, 8x1xf32>, !gnn.tensor<edge, 8x8xf32> -> !gnn.tensor<edge, 8x8xf32>
  // CHECK: gnn.binary sub %{{.*}}, %{{.*}} : <edge, 8x8xf32>, <edge, 8x1xf32> -> <edge, 8x8xf32>
  %b1 = gnn.binary sub %m, %x : !gnn.tensor<edge, 8x8xf32>, !gnn.tensor<edge, 8x1xf32> -> !gnn.tensor<edge, 8x8xf32>
  // CHECK: gnn.binary mul %{{.*}}, %{{.*}} : <edge, 8x1xf32>, <dense, f32> -> <edge, 8x1xf32>
  %b2 = gnn.binary mul %x, %c : !gnn.tensor<edge, 8x1xf32>, !gnn.tensor<dense, f32> -> !gnn.tensor<edge, 8x1xf32>
  // CHECK: gnn.binary div %{{.*}}, %{{.*}} : <dense, f32>, <edge, 8x1xf32> -> <edge, 8x1xf32>
  %b3 = gnn.binary div %c, %x : !gnn.tensor<dense, f32>, !gnn.tensor<edge, 8x1xf32> -> !gnn.tensor<edge, 8x1xf32>
  // CHECK: gnn.binary max %{{.*}}, %{{.*}} : <edge, 8x8xf32>, <dense, 8xf32> -> <edge, 8x8xf32>
  %b4 = gnn.binary max %m, %d : !gnn.tensor<edge, 8x8xf32>, !gnn.tensor<dense, 8xf32> -> !gnn.tensor<edge, 8x8xf32>
  // CHECK: gnn.binary min %{{.*}}, %{{.*}} : <dense, 8xf32>, <dense, f32> -> <dense, 8xf32>
  %b5 = gnn.binary min %d, %c : !gnn.tensor<dense, 8xf32>, !gnn.tensor<dense, f32> -> !gnn.tensor<dense, 8xf32>
  // CHECK: gnn.binary pow %{{.*}}, %{{.*}} : <edge, 8x1xf32>, <dense, f32> -> <edge, 8x1xf32>
  %b6 = gnn.binary pow %x, %c : !gnn.tensor<edge, 8x1xf32>, !gnn.tensor<dense, f32> -> !gnn.tensor<edge, 8x1xf32>
  return
}

//===----------------------------------------------------------------------===//
// Dense operations
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @dense_ops
func.func @dense_ops(%x: !gnn.tensor<dense, ?x64xf32>, %w: !gnn.tensor<dense, 64x16xf32>,
                     %e: !gnn.tensor<edge, 64xf32>, %a: !gnn.tensor<dense, 4x8xf32>,
                     %t: !gnn.tensor<dst, 2x3xf32>) {
  // CHECK: gnn.matmul %{{.*}}, %{{.*}} : <dense, ?x64xf32>, <dense, 64x16xf32> -> <dense, ?x16xf32>
  %0 = gnn.matmul %x, %w : !gnn.tensor<dense, ?x64xf32>, !gnn.tensor<dense, 64x16xf32> -> !gnn.tensor<dense, ?x16xf32>
  // A row per edge times a dense matrix.
  // CHECK: gnn.matmul %{{.*}}, %{{.*}} : <edge, 64xf32>, <dense, 64x16xf32> -> <edge, 16xf32>
  %1 = gnn.matmul %e, %w : !gnn.tensor<edge, 64xf32>, !gnn.tensor<dense, 64x16xf32> -> !gnn.tensor<edge, 16xf32>
  // CHECK: %[[R:.*]] = gnn.reshape %{{.*}} : <dense, ?x64xf32> -> <dense, ?x8x8xf32>
  %2 = gnn.reshape %x : !gnn.tensor<dense, ?x64xf32> -> !gnn.tensor<dense, ?x8x8xf32>
  // CHECK: gnn.reshape %{{.*}} : <edge, 64xf32> -> <edge, 8x8xf32>
  %3 = gnn.reshape %e : !gnn.tensor<edge, 64xf32> -> !gnn.tensor<edge, 8x8xf32>
  // CHECK: gnn.reduce sum %[[R]] {axis = 2 : i64, keepdims} : <dense, ?x8x8xf32> -> <dense, ?x8x1xf32>
  %4 = gnn.reduce sum %2 {axis = 2 : i64, keepdims} : !gnn.tensor<dense, ?x8x8xf32> -> !gnn.tensor<dense, ?x8x1xf32>
  // CHECK: gnn.reduce mean %[[R]] {axis = 1 : i64} : <dense, ?x8x8xf32> -> <dense, ?x8xf32>
  %5 = gnn.reduce mean %2 {axis = 1 : i64} : !gnn.tensor<dense, ?x8x8xf32> -> !gnn.tensor<dense, ?x8xf32>
  // Without an axis: over every axis (of the row shape for a vertex tensor).
  // CHECK: gnn.reduce max %{{.*}} : <dense, 4x8xf32> -> <dense, f32>
  %6 = gnn.reduce max %a : !gnn.tensor<dense, 4x8xf32> -> !gnn.tensor<dense, f32>
  // CHECK: gnn.reduce min %{{.*}} {keepdims} : <dense, 4x8xf32> -> <dense, 1x1xf32>
  %7 = gnn.reduce min %a {keepdims} : !gnn.tensor<dense, 4x8xf32> -> !gnn.tensor<dense, 1x1xf32>
  // CHECK: gnn.reduce sum %{{.*}} : <dst, 2x3xf32> -> <dst, f32>
  %8 = gnn.reduce sum %t : !gnn.tensor<dst, 2x3xf32> -> !gnn.tensor<dst, f32>
  // CHECK: gnn.softmax %{{.*}} {axis = 1 : i64} : <dense, ?x64xf32>
  %9 = gnn.softmax %x {axis = 1 : i64} : !gnn.tensor<dense, ?x64xf32>
  // CHECK: gnn.softmax %{{.*}} {axis = 1 : i64, log} : <dense, ?x64xf32>
  %10 = gnn.softmax %x {axis = 1 : i64, log} : !gnn.tensor<dense, ?x64xf32>
  // CHECK: gnn.softmax %{{.*}} {axis = 0 : i64, log} : <dst, 2x3xf32>
  %11 = gnn.softmax %t {axis = 0 : i64, log} : !gnn.tensor<dst, 2x3xf32>
  // Variadic operand types print with their dialect prefix.
  // CHECK: gnn.concat %{{.*}}, %{{.*}} {axis = 1 : i64} : !gnn.tensor<dense, ?x64xf32>, !gnn.tensor<dense, ?x64xf32> -> <dense, ?x128xf32>
  %12 = gnn.concat %x, %x {axis = 1 : i64} : !gnn.tensor<dense, ?x64xf32>, !gnn.tensor<dense, ?x64xf32> -> !gnn.tensor<dense, ?x128xf32>
  // CHECK: gnn.concat %{{.*}}, %{{.*}}, %{{.*}} {axis = 0 : i64} : !gnn.tensor<dense, 4x8xf32>, !gnn.tensor<dense, 4x8xf32>, !gnn.tensor<dense, 4x8xf32> -> <dense, 12x8xf32>
  %13 = gnn.concat %a, %a, %a {axis = 0 : i64} : !gnn.tensor<dense, 4x8xf32>, !gnn.tensor<dense, 4x8xf32>, !gnn.tensor<dense, 4x8xf32> -> !gnn.tensor<dense, 12x8xf32>
  // CHECK: gnn.concat %{{.*}} {axis = 0 : i64} : !gnn.tensor<dense, 4x8xf32> -> <dense, 4x8xf32>
  %14 = gnn.concat %a {axis = 0 : i64} : !gnn.tensor<dense, 4x8xf32> -> !gnn.tensor<dense, 4x8xf32>
  // CHECK: gnn.transpose %{{.*}} : <dense, 4x8xf32> -> <dense, 8x4xf32>
  %15 = gnn.transpose %a : !gnn.tensor<dense, 4x8xf32> -> !gnn.tensor<dense, 8x4xf32>
  // CHECK: gnn.transpose %{{.*}} : <dst, 2x3xf32> -> <dst, 3x2xf32>
  %16 = gnn.transpose %t : !gnn.tensor<dst, 2x3xf32> -> !gnn.tensor<dst, 3x2xf32>
  // CHECK: gnn.dropout %{{.*}} {p = 5.000000e-01 : f64, seed = 7 : i64} : <dense, ?x64xf32>
  %17 = gnn.dropout %x {p = 0.5 : f64, seed = 7 : i64} : !gnn.tensor<dense, ?x64xf32>
  // CHECK: gnn.dropout %{{.*}} {p = 0.000000e+00 : f64, seed = -3 : i64} : <edge, 64xf32>
  %18 = gnn.dropout %e {p = 0.0 : f64, seed = -3 : i64} : !gnn.tensor<edge, 64xf32>
  return
}

//===----------------------------------------------------------------------===//
// Layers as functions: parameters, calls and locations
//===----------------------------------------------------------------------===//

//===----------------------------------------------------------------------===//
// Ops the derivatives use (gnn-autodiff)
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @derivative_ops
func.func @derivative_ops(%g: !gnn.graph<graph>, %bg: !gnn.graph<batched>,
                          %e: !gnn.tensor<edge, 2x3xf32>,
                          %x: !gnn.tensor<dense, ?x16xf32>,
                          %y: !gnn.tensor<dense, ?x16xf32>,
                          %c: !gnn.tensor<dense, f32>,
                          %d: !gnn.tensor<dst, 4x1xf32>) {
  // CHECK: gnn.scatter_select max %{{.*}}, %{{.*}} {by = #gnn<domain dst>} : <graph>, <edge, 2x3xf32> -> <edge, 2x3xf32>
  %0 = gnn.scatter_select max %g, %e {by = #gnn<domain dst>} : !gnn.graph<graph>, !gnn.tensor<edge, 2x3xf32> -> !gnn.tensor<edge, 2x3xf32>
  // CHECK: gnn.scatter_select min %{{.*}}, %{{.*}} {by = #gnn<domain src>} : <graph>, <edge, 2x3xf32> -> <edge, 2x3xf32>
  %1 = gnn.scatter_select min %g, %e {by = #gnn<domain src>} : !gnn.graph<graph>, !gnn.tensor<edge, 2x3xf32> -> !gnn.tensor<edge, 2x3xf32>
  // CHECK: gnn.graph_sizes %{{.*}} : <batched> -> <dense, ?xf32>
  %2 = gnn.graph_sizes %bg : !gnn.graph<batched> -> !gnn.tensor<dense, ?xf32>
  // CHECK: gnn.broadcast_graphs %{{.*}}, %{{.*}} : <batched>, <dense, ?x16xf32> -> <dense, ?x16xf32>
  %3 = gnn.broadcast_graphs %bg, %y : !gnn.graph<batched>, !gnn.tensor<dense, ?x16xf32> -> !gnn.tensor<dense, ?x16xf32>
  // CHECK: gnn.readout_select max %{{.*}}, %{{.*}} : <batched>, <dense, ?x16xf32> -> <dense, ?x16xf32>
  %4 = gnn.readout_select max %bg, %x : !gnn.graph<batched>, !gnn.tensor<dense, ?x16xf32> -> !gnn.tensor<dense, ?x16xf32>
  // CHECK: gnn.reduce_select min %{{.*}} {axis = 1 : i64} : <dense, ?x16xf32>
  %5 = gnn.reduce_select min %x {axis = 1 : i64} : !gnn.tensor<dense, ?x16xf32>
  // CHECK: gnn.reduce_select max %{{.*}} : <edge, 2x3xf32>
  %6 = gnn.reduce_select max %e : !gnn.tensor<edge, 2x3xf32>
  // CHECK: gnn.slice %{{.*}} {axis = 1 : i64, size = 8 : i64, start = 4 : i64} : <dense, ?x16xf32> -> <dense, ?x8xf32>
  %7 = gnn.slice %x {axis = 1 : i64, start = 4 : i64, size = 8 : i64} : !gnn.tensor<dense, ?x16xf32> -> !gnn.tensor<dense, ?x8xf32>
  // CHECK: gnn.slice %{{.*}} {axis = 0 : i64, size = 1 : i64, start = 1 : i64} : <edge, 2x3xf32> -> <edge, 1x3xf32>
  %8 = gnn.slice %e {axis = 0 : i64, start = 1 : i64, size = 1 : i64} : !gnn.tensor<edge, 2x3xf32> -> !gnn.tensor<edge, 1x3xf32>
  // CHECK: gnn.broadcast_like %{{.*}}, %{{.*}} : <dense, f32>, <dst, 4x1xf32>
  %9 = gnn.broadcast_like %c, %d : !gnn.tensor<dense, f32>, !gnn.tensor<dst, 4x1xf32>
  // CHECK: gnn.unary erf %{{.*}} : <dense, ?x16xf32>
  %10 = gnn.unary erf %x : !gnn.tensor<dense, ?x16xf32>
  // CHECK: gnn.binary gt %{{.*}}, %{{.*}} : <dense, ?x16xf32>, <dense, f32> -> <dense, ?x16xf32>
  %11 = gnn.binary gt %x, %c : !gnn.tensor<dense, ?x16xf32>, !gnn.tensor<dense, f32> -> !gnn.tensor<dense, ?x16xf32>
  // Edge rows collect into an [E, ...] tensor.
  // CHECK: gnn.collect %{{.*}}, %{{.*}} : <graph>, <edge, 2x3xf32> -> <dense, ?x2x3xf32>
  %12 = gnn.collect %g, %e : !gnn.graph<graph>, !gnn.tensor<edge, 2x3xf32> -> !gnn.tensor<dense, ?x2x3xf32>
  return
}

// Backward functions are ordinary functions with attributes.
// CHECK-LABEL: func.func @f.backward
// CHECK-SAME: {gnn.grad_of = "x"}
// CHECK-SAME: attributes {gnn.backward_of = @f}
func.func @f.backward(%x: !gnn.tensor<dense, 4xf32> {gnn.name = "x"},
                      %dy: !gnn.tensor<dense, 4xf32> {gnn.name = "cotangent"})
    -> (!gnn.tensor<dense, 4xf32> {gnn.grad_of = "x"}) attributes {gnn.backward_of = @f} {
  return %dy : !gnn.tensor<dense, 4xf32>
}

// CHECK-LABEL: func.func @Model.conv
// CHECK-SAME: {gnn.name = "g"}
// CHECK-SAME: {gnn.init = "glorot", gnn.param = "W"}
// CHECK-SAME: attributes {gnn.kind = "layer"}
func.func @Model.conv(%g: !gnn.graph<graph> {gnn.name = "g"},
                      %x: !gnn.tensor<dense, ?x4xf32> {gnn.name = "x"},
                      %W: !gnn.tensor<dense, 4x2xf32> {gnn.init = "glorot", gnn.param = "W"})
    -> !gnn.tensor<dense, ?x2xf32> attributes {gnn.kind = "layer"} {
  %0 = gnn.matmul %x, %W : !gnn.tensor<dense, ?x4xf32>, !gnn.tensor<dense, 4x2xf32> -> !gnn.tensor<dense, ?x2xf32>
  return %0 : !gnn.tensor<dense, ?x2xf32>
}

// CHECK-LABEL: func.func @Model(
// CHECK-SAME: {gnn.init = "glorot", gnn.param = "conv.W"}
// CHECK: call @Model.conv(%{{.*}}, %{{.*}}, %{{.*}}) : (!gnn.graph<graph>, !gnn.tensor<dense, ?x4xf32>, !gnn.tensor<dense, 4x2xf32>) -> !gnn.tensor<dense, ?x2xf32>
func.func @Model(%g: !gnn.graph<graph> {gnn.name = "g"},
                 %x: !gnn.tensor<dense, ?x4xf32> {gnn.name = "x"},
                 %W: !gnn.tensor<dense, 4x2xf32> {gnn.init = "glorot", gnn.param = "conv.W"})
    -> !gnn.tensor<dense, ?x2xf32> attributes {gnn.kind = "model"} {
  %0 = call @Model.conv(%g, %x, %W) : (!gnn.graph<graph>, !gnn.tensor<dense, ?x4xf32>, !gnn.tensor<dense, 4x2xf32>) -> !gnn.tensor<dense, ?x2xf32>
  return %0 : !gnn.tensor<dense, ?x2xf32>
}

// The generic form spells out the properties; the function enums are i32
// case numbers (sum = 0, neg = 0, leaky_relu = 11, add = 0, max = 2).
// GENERIC-LABEL: "func.func"() <{{{.*}}sym_name = "graph_facts"
// GENERIC: "gnn.in_degree"(%{{.*}}) : (!gnn.graph<graph>) -> !gnn.tensor<dense, ?xf32>
// GENERIC: "gnn.relation"(%{{.*}}) <{name = "cites"}> : (!gnn.graph<hetero>) -> !gnn.graph<graph>
// GENERIC-LABEL: sym_name = "domains"
// GENERIC: "gnn.scatter"(%{{.*}}, %{{.*}}) <{fn = 0 : i32}> : (!gnn.graph<graph>, !gnn.tensor<edge, 16xf32>) -> !gnn.tensor<dst, 16xf32>
// GENERIC-LABEL: sym_name = "edge_softmax"
// GENERIC: "gnn.edge_softmax"(%{{.*}}, %{{.*}}) <{by = #gnn<domain dst>}>
// GENERIC-LABEL: sym_name = "elementwise"
// GENERIC: "gnn.constant"() <{value = 1.000000e+00 : f64}> : () -> !gnn.tensor<dense, f32>
// GENERIC: "gnn.unary"(%{{.*}}) <{fn = 0 : i32}> : (!gnn.tensor<edge, 8x1xf32>) -> !gnn.tensor<edge, 8x1xf32>
// GENERIC: "gnn.unary"(%{{.*}}) <{alpha = 2.000000e-01 : f64, fn = 11 : i32}>
// GENERIC: "gnn.binary"(%{{.*}}, %{{.*}}) <{fn = 0 : i32}>
// GENERIC-LABEL: sym_name = "dense_ops"
// GENERIC: "gnn.reduce"(%{{.*}}) <{axis = 2 : i64, fn = 0 : i32, keepdims}>
// GENERIC: "gnn.reduce"(%{{.*}}) <{fn = 2 : i32}>
// GENERIC: "gnn.softmax"(%{{.*}}) <{axis = 1 : i64, log}>
// GENERIC: "gnn.concat"(%{{.*}}, %{{.*}}) <{axis = 1 : i64}>
// GENERIC: "gnn.dropout"(%{{.*}}) <{p = 5.000000e-01 : f64, seed = 7 : i64}>
// GENERIC-LABEL: sym_name = "derivative_ops"
// GENERIC: "gnn.scatter_select"(%{{.*}}, %{{.*}}) <{by = #gnn<domain dst>, fn = 2 : i32}>
// GENERIC: "gnn.slice"(%{{.*}}) <{axis = 1 : i64, size = 8 : i64, start = 4 : i64}>
// GENERIC: "gnn.unary"(%{{.*}}) <{fn = 12 : i32}>
// GENERIC: "gnn.binary"(%{{.*}}, %{{.*}}) <{fn = 7 : i32}>

// The destinations' rows of a block's sources, and the transpose.
// CHECK-LABEL: func.func @dst_rows
func.func @dst_rows(%g: !gnn.graph<block>, %x: !gnn.tensor<dense, ?x4x2xf32>) -> !gnn.tensor<dense, ?x4x2xf32> {
  // CHECK: %[[D:.*]] = gnn.dst_rows %{{.*}}, %{{.*}} : <block>, <dense, ?x4x2xf32> -> <dense, ?x4x2xf32>
  %0 = gnn.dst_rows %g, %x : !gnn.graph<block>, !gnn.tensor<dense, ?x4x2xf32> -> !gnn.tensor<dense, ?x4x2xf32>
  // CHECK: gnn.pad_dst_rows %{{.*}}, %[[D]] : <block>, <dense, ?x4x2xf32> -> <dense, ?x4x2xf32>
  %1 = gnn.pad_dst_rows %g, %0 : !gnn.graph<block>, !gnn.tensor<dense, ?x4x2xf32> -> !gnn.tensor<dense, ?x4x2xf32>
  return %1 : !gnn.tensor<dense, ?x4x2xf32>
}
