// Every op, type and attribute of the gnnk dialect survives printing and
// parsing: the custom form is printed, parsed back and printed again, and the
// generic form (--mlir-print-op-generic) parses back to the same custom form.
//
// RUN: gnn-opt %s | gnn-opt | FileCheck %s
// RUN: gnn-opt %s --mlir-print-op-generic | gnn-opt | FileCheck %s
// RUN: gnn-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// A GCN-style sum over in-edges and a GAT-style online softmax over
// out-edges, written by hand.

// CHECK-LABEL: func.func @sum_kernel
// CHECK-SAME: (%[[G:.*]]: !gnnk.graph, %[[X:.*]]: memref<?x16xf32>, %[[W:.*]]: memref<?xf32>, %[[OUT:.*]]: memref<?x16xf32>)
// CHECK-SAME: attributes {gnnk.kernel = {num_outputs = 1 : i64}}
// CHECK: gnnk.for_vertices %[[V:.*]] in %[[G]] by dst {
// CHECK: memref.alloca() : memref<16xf32>
// CHECK: gnnk.for_edges %[[E:.*]], %[[U:.*]] in %[[G]] of %[[V]] by dst {
// CHECK: memref.load %[[W]][%[[E]]] : memref<?xf32>
// CHECK: memref.load %[[X]][%[[U]], %{{.*}}] : memref<?x16xf32>
// CHECK: gnnk.dropout_keep %{{.*}}, %{{.*}}, 5.000000e-01 : f32
// CHECK-NOT: gnnk.yield
// CHECK: }
// CHECK: gnnk.degree %[[G]] of %[[V]] by dst
// CHECK: memref.store %{{.*}}, %[[OUT]][%[[V]], %{{.*}}] : memref<?x16xf32>
// CHECK: return

// GENERIC-LABEL: sym_name = "sum_kernel"
// GENERIC: "gnnk.for_vertices"(%{{.*}}) <{by = #gnnk<side dst>}> ({
// GENERIC: ^bb0(%{{.*}}: index):
// GENERIC: "gnnk.for_edges"(%{{.*}}, %{{.*}}) <{by = #gnnk<side dst>}> ({
// GENERIC: ^bb0(%{{.*}}: index, %{{.*}}: index):
// GENERIC: "gnnk.dropout_keep"(%{{.*}}, %{{.*}}) <{p = 5.000000e-01 : f64}> : (i64, index) -> f32
// GENERIC: "gnnk.yield"() : () -> ()
// GENERIC: "gnnk.degree"(%{{.*}}, %{{.*}}) <{by = #gnnk<side dst>}> : (!gnnk.graph, index) -> index
func.func @sum_kernel(%g: !gnnk.graph, %x: memref<?x16xf32>, %w: memref<?xf32>,
                      %out: memref<?x16xf32>)
    attributes {gnnk.kernel = {num_outputs = 1 : i64}} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  %seed = arith.constant 7 : i64
  gnnk.for_vertices %v in %g by dst {
    %acc = memref.alloca() : memref<16xf32>
    scf.for %i = %c0 to %c16 step %c1 {
      memref.store %zero, %acc[%i] : memref<16xf32>
    }
    gnnk.for_edges %e, %u in %g of %v by dst {
      %we = memref.load %w[%e] : memref<?xf32>
      scf.for %i = %c0 to %c16 step %c1 {
        %xu = memref.load %x[%u, %i] : memref<?x16xf32>
        %base = arith.muli %e, %c16 : index
        %at = arith.addi %base, %i : index
        %keep = gnnk.dropout_keep %seed, %at, 5.000000e-01 : f32
        %m = arith.mulf %we, %xu : f32
        %d = arith.mulf %m, %keep : f32
        %a = memref.load %acc[%i] : memref<16xf32>
        %s = arith.addf %a, %d : f32
        memref.store %s, %acc[%i] : memref<16xf32>
      }
    }
    %n = gnnk.degree %g of %v by dst
    scf.for %i = %c0 to %c16 step %c1 {
      %a = memref.load %acc[%i] : memref<16xf32>
      memref.store %a, %out[%v, %i] : memref<?x16xf32>
    }
  }
  return
}

// CHECK-LABEL: func.func @softmax_kernel
// CHECK: gnnk.for_vertices %[[V:.*]] in %{{.*}} by src attributes {note = "out-edges"} {
// CHECK: gnnk.for_edges %{{.*}}, %{{.*}} in %{{.*}} of %[[V]] by src attributes {note = "CSC"} {
// CHECK: math.exp
// CHECK: gnnk.degree %{{.*}} of %[[V]] by src
func.func @softmax_kernel(%g: !gnnk.graph, %l: memref<?xf32>, %m: memref<?x4xf32>,
                          %out: memref<?x4xf32>)
    attributes {gnnk.kernel = {num_outputs = 1 : i64}} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant 0.0 : f32
  %true = arith.constant true
  %false = arith.constant false
  gnnk.for_vertices %v in %g by src attributes {note = "out-edges"} {
    %acc = memref.alloca() : memref<4xf32>
    %mx = memref.alloca() : memref<f32>
    %sum = memref.alloca() : memref<f32>
    %first = memref.alloca() : memref<i1>
    memref.store %zero, %mx[] : memref<f32>
    memref.store %zero, %sum[] : memref<f32>
    memref.store %true, %first[] : memref<i1>
    scf.for %i = %c0 to %c4 step %c1 {
      memref.store %zero, %acc[%i] : memref<4xf32>
    }
    gnnk.for_edges %e, %u in %g of %v by src attributes {note = "CSC"} {
      %f = memref.load %first[] : memref<i1>
      %le = memref.load %l[%e] : memref<?xf32>
      %old = memref.load %mx[] : memref<f32>
      %lt = arith.cmpf olt, %old, %le : f32
      %larger = arith.select %lt, %le, %old : f32
      %new = arith.select %f, %le, %larger : f32
      %d = arith.subf %old, %new : f32
      %r = math.exp %d : f32
      %scale = arith.select %f, %zero, %r : f32
      %dl = arith.subf %le, %new : f32
      %p = math.exp %dl : f32
      %s = memref.load %sum[] : memref<f32>
      %ss = arith.mulf %s, %scale : f32
      %s2 = arith.addf %ss, %p : f32
      memref.store %s2, %sum[] : memref<f32>
      memref.store %new, %mx[] : memref<f32>
      scf.for %i = %c0 to %c4 step %c1 {
        %a = memref.load %acc[%i] : memref<4xf32>
        %x = memref.load %m[%u, %i] : memref<?x4xf32>
        %as = arith.mulf %a, %scale : f32
        %px = arith.mulf %p, %x : f32
        %a2 = arith.addf %as, %px : f32
        memref.store %a2, %acc[%i] : memref<4xf32>
      }
      memref.store %false, %first[] : memref<i1>
    }
    %n = gnnk.degree %g of %v by src
    %nonempty = arith.cmpi ne, %n, %c0 : index
    scf.if %nonempty {
      %s = memref.load %sum[] : memref<f32>
      scf.for %i = %c0 to %c4 step %c1 {
        %a = memref.load %acc[%i] : memref<4xf32>
        %q = arith.divf %a, %s : f32
        memref.store %q, %acc[%i] : memref<4xf32>
      }
    }
    scf.for %i = %c0 to %c4 step %c1 {
      %a = memref.load %acc[%i] : memref<4xf32>
      memref.store %a, %out[%v, %i] : memref<?x4xf32>
    }
  }
  return
}

// A kernel declaration: no body, two outputs.
// CHECK-LABEL: func.func private @declared
// CHECK-SAME: attributes {gnnk.kernel = {num_outputs = 2 : i64}}
func.func private @declared(!gnnk.graph, memref<?x8xf32>, memref<?x8xf32>, memref<?x8xf32>)
    attributes {gnnk.kernel = {num_outputs = 2 : i64}}

// The host side: launches with gnn values, and with kernel values.
// CHECK-LABEL: func.func @host
// CHECK: %[[R:.*]] = gnnk.launch @sum_kernel(%{{.*}}, %{{.*}}, %{{.*}}) : (!gnn.graph<graph>, !gnn.tensor<src, 16xf32>, !gnn.tensor<edge, f32>) -> !gnn.tensor<dst, 16xf32>
// CHECK: gnnk.launch @declared(%{{.*}}, %{{.*}}) : (!gnn.graph<block>, !gnn.tensor<dst, 8xf32>) -> (!gnn.tensor<src, 8xf32>, !gnn.tensor<src, 8xf32>)
// CHECK: gnnk.launch @softmax_kernel(%{{.*}}, %{{.*}}, %{{.*}}) : (!gnnk.graph, memref<?xf32>, memref<?x4xf32>) -> memref<?x4xf32>
// GENERIC-LABEL: sym_name = "host"
// GENERIC: "gnnk.launch"(%{{.*}}, %{{.*}}, %{{.*}}) <{kernel = @sum_kernel}>
func.func @host(%g: !gnn.graph<graph>, %x: !gnn.tensor<src, 16xf32>,
                %w: !gnn.tensor<edge, f32>, %b: !gnn.graph<block>,
                %y: !gnn.tensor<dst, 8xf32>, %kg: !gnnk.graph,
                %l: memref<?xf32>, %m: memref<?x4xf32>) -> !gnn.tensor<dst, 16xf32> {
  %r = gnnk.launch @sum_kernel(%g, %x, %w)
         : (!gnn.graph<graph>, !gnn.tensor<src, 16xf32>, !gnn.tensor<edge, f32>) -> !gnn.tensor<dst, 16xf32>
  %s:2 = gnnk.launch @declared(%b, %y)
         : (!gnn.graph<block>, !gnn.tensor<dst, 8xf32>) -> (!gnn.tensor<src, 8xf32>, !gnn.tensor<src, 8xf32>)
  %t = gnnk.launch @softmax_kernel(%kg, %l, %m)
         : (!gnnk.graph, memref<?xf32>, memref<?x4xf32>) -> memref<?x4xf32>
  return %r : !gnn.tensor<dst, 16xf32>
}
