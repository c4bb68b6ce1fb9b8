// gnnk-map-gpu on kernel IR written by hand: the pass records the mapping
// on each kernel, leaves other functions alone and leaves a kernel no GPU
// group can run without one.
//
// RUN: gnn-opt %s --gnnk-map-gpu | FileCheck %s

// Two features: one float2 (vector = 2) is all the keys, so one thread per
// vertex; the accumulator is in its registers, all three nests run over
// its keys.
// CHECK-LABEL: func.func @sum2(
// CHECK-SAME: gnnk.gpu = {chunks = 1 : i64, keys = array<i64: 2>, lanes = 1 : i64, mapping = "thread-per-vertex", nests = ["expanded", "expanded", "expanded"], rows_per_block = 256 : i64, schedule = "descending-degree", scratch = ["lane"], shared_bytes = 0 : i64, split_above = 0 : i64, vector = 2 : i64}
func.func @sum2(%g: !gnnk.graph, %x: memref<?x2xf32>, %out: memref<?x2xf32>)
    attributes {gnnk.kernel = {num_outputs = 1 : i64}} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  gnnk.for_vertices %v in %g by dst {
    %acc = memref.alloca() : memref<2xf32>
    scf.for %i = %c0 to %c2 step %c1 {
      memref.store %zero, %acc[%i] : memref<2xf32>
    }
    gnnk.for_edges %e, %u in %g of %v by dst {
      scf.for %i = %c0 to %c2 step %c1 {
        %a = memref.load %acc[%i] : memref<2xf32>
        %b = memref.load %x[%u, %i] : memref<?x2xf32>
        %s = arith.addf %a, %b : f32
        memref.store %s, %acc[%i] : memref<2xf32>
      }
    }
    scf.for %i = %c0 to %c2 step %c1 {
      %a = memref.load %acc[%i] : memref<2xf32>
      memref.store %a, %out[%v, %i] : memref<?x2xf32>
    }
  }
  return
}

// 40 features by source (the CSC): 10 float4 chunks, so 16 lanes (the
// power of two at or above 10), one chunk per lane, 16 rows per block.
// CHECK-LABEL: func.func @copy40(
// CHECK-SAME: gnnk.gpu = {chunks = 1 : i64, keys = array<i64: 40>, lanes = 16 : i64, mapping = "group-per-vertex", nests = ["expanded"], rows_per_block = 16 : i64, schedule = "descending-degree", scratch = [], shared_bytes = 0 : i64, split_above = 0 : i64, vector = 4 : i64}
func.func @copy40(%g: !gnnk.graph, %x: memref<?x40xf32>, %out: memref<?x40xf32>)
    attributes {gnnk.kernel = {num_outputs = 1 : i64}} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c40 = arith.constant 40 : index
  gnnk.for_vertices %v in %g by src {
    scf.for %i = %c0 to %c40 step %c1 {
      %a = memref.load %x[%v, %i] : memref<?x40xf32>
      memref.store %a, %out[%v, %i] : memref<?x40xf32>
    }
  }
  return
}

// Two vertex loops: no group runs this kernel, so it gets no mapping.
// CHECK-LABEL: func.func @two_loops(
// CHECK-NOT: gnnk.gpu
// CHECK-SAME: attributes {gnnk.kernel = {num_outputs = 1 : i64}}
func.func @two_loops(%g: !gnnk.graph, %out: memref<?xf32>)
    attributes {gnnk.kernel = {num_outputs = 1 : i64}} {
  %zero = arith.constant 0.0 : f32
  gnnk.for_vertices %v in %g by dst {
    memref.store %zero, %out[%v] : memref<?xf32>
  }
  gnnk.for_vertices %v in %g by src {
    memref.store %zero, %out[%v] : memref<?xf32>
  }
  return
}

// Not a kernel: untouched.
// CHECK-LABEL: func.func @host(
// CHECK-NOT: gnnk.gpu
// CHECK: return
func.func @host(%x: f32) -> f32 {
  return %x : f32
}
