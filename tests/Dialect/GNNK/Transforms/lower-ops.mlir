// gnn-lower-to-kernels on hand-written aggregates: every reduction kind,
// both sides, every input domain and every op a fused body can hold.
// tests/Conversion/GNNToGNNK/KernelExecTest.cpp runs this file's aggregates as
// compiled kernels and compares them with the reference interpreter.
//
// RUN: gnn-opt %s --gnn-lower-to-kernels | FileCheck %s
// RUN: gnn-opt %s --gnn-lower-to-kernels | gnn-opt | FileCheck %s
// RUN: gnn-opt %s --gnn-lower-to-kernels --mlir-print-debuginfo --mlir-print-local-scope \
// RUN:   | FileCheck %s --check-prefix=LOC

//===----------------------------------------------------------------------===//
// Four reductions in one pass over the in-edges. Edge rows are read at the
// edge, src rows at the neighbour, dst rows at the vertex.
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @multi(
// CHECK: %{{.*}}:4 = gnnk.launch @multi.aggregate0(%arg0, %arg1, %arg2, %arg3) : (!gnn.graph<graph>, !gnn.tensor<edge, f32>, !gnn.tensor<src, 4xf32>, !gnn.tensor<dst, 4xf32>) -> (!gnn.tensor<dst, 4xf32>, !gnn.tensor<dst, 4xf32>, !gnn.tensor<dst, 4xf32>, !gnn.tensor<dst, 4xf32>)
// CHECK-NOT: gnn.aggregate
// CHECK-LABEL: func.func @multi.aggregate0(
// CHECK-SAME: %[[G:[^:]*]]: !gnnk.graph, %[[W:[^:]*]]: memref<?xf32>, %[[X:[^:]*]]: memref<?x4xf32>, %[[Y:[^:]*]]: memref<?x4xf32>,
// CHECK-SAME: %[[O0:[^:]*]]: memref<?x4xf32>, %[[O1:[^:]*]]: memref<?x4xf32>, %[[O2:[^:]*]]: memref<?x4xf32>, %[[O3:[^:]*]]: memref<?x4xf32>)
// CHECK-SAME: attributes {gnnk.kernel = {num_outputs = 4 : i64}}
// CHECK: gnnk.for_vertices %[[V:.*]] in %[[G]] by dst {
// Accumulators, the first-edge flag, then scratch rows.
// CHECK-COUNT-4: memref.alloca() {gnnk.fold = {kind = "{{sum|max|min}}", reduction = {{[0-3]}} : i64}} : memref<4xf32>
// CHECK: %[[FIRST:.*]] = memref.alloca() {gnnk.fold = {kind = "first", reduction = -1 : i64}} : memref<i1>
// CHECK: memref.store %true, %[[FIRST]][]
// CHECK: gnnk.for_edges %[[E:.*]], %[[U:.*]] in %[[G]] of %[[V]] by dst {
// CHECK: memref.load %[[W]][%[[E]]] : memref<?xf32>
// CHECK: memref.load %[[X]][%[[U]], %{{.*}}] : memref<?x4xf32>
// CHECK: memref.load %[[Y]][%[[V]], %{{.*}}] : memref<?x4xf32>
// max: first || x > acc ? x : acc; min the same with <.
// CHECK: %[[F:.*]] = memref.load %[[FIRST]][] : memref<i1>
// CHECK: arith.cmpf ogt
// CHECK-NEXT: arith.ori %[[F]],
// CHECK-NEXT: arith.select
// CHECK: arith.cmpf olt
// CHECK-NEXT: arith.ori %[[F]],
// CHECK-NEXT: arith.select
// CHECK: memref.store %false, %[[FIRST]][]
// CHECK-NEXT: }
// mean divides by the degree, only where there are edges.
// CHECK: %[[DEG:.*]] = gnnk.degree %[[G]] of %[[V]] by dst
// CHECK: %[[NONEMPTY:.*]] = arith.cmpi ne, %[[DEG]], %c0 : index
// CHECK: scf.if %[[NONEMPTY]] {
// CHECK: arith.index_cast %[[DEG]] : index to i64
// CHECK: arith.sitofp
// CHECK: arith.divf
// CHECK: memref.store %{{.*}}, %[[O0]][%[[V]], %{{.*}}]
// CHECK: memref.store %{{.*}}, %[[O1]][%[[V]], %{{.*}}]
// CHECK: memref.store %{{.*}}, %[[O2]][%[[V]], %{{.*}}]
// CHECK: memref.store %{{.*}}, %[[O3]][%[[V]], %{{.*}}]
// CHECK: return

// Every generated op carries the location of the gnn op it comes from.
// LOC-LABEL: func.func @multi.aggregate0(
// LOC-NOT: loc(unknown)
// LOC: gnnk.for_edges
// LOC-NOT: loc(unknown)
// LOC: arith.subf {{.*}} loc("{{.*}}lower-ops.mlir":[[@LINE+7]]:10)
// LOC-NOT: loc(unknown)
// LOC: return
func.func @multi(%g: !gnn.graph<graph>, %w: !gnn.tensor<edge, f32>, %x: !gnn.tensor<src, 4xf32>, %y: !gnn.tensor<dst, 4xf32>) -> !gnn.tensor<dst, 4xf32> {
  %r:4 = gnn.aggregate %g(%w, %x, %y : !gnn.tensor<edge, f32>, !gnn.tensor<src, 4xf32>, !gnn.tensor<dst, 4xf32>) by dst reductions [{kind = "sum"}, {kind = "mean"}, {kind = "max"}, {kind = "min"}] : !gnn.graph<graph> -> !gnn.tensor<dst, 4xf32>, !gnn.tensor<dst, 4xf32>, !gnn.tensor<dst, 4xf32>, !gnn.tensor<dst, 4xf32> {
  ^bb0(%a: !gnn.tensor<dense, f32>, %b: !gnn.tensor<dense, 4xf32>, %c: !gnn.tensor<dense, 4xf32>):
    %m = gnn.binary mul %a, %b : !gnn.tensor<dense, f32>, !gnn.tensor<dense, 4xf32> -> !gnn.tensor<dense, 4xf32>
    %d = gnn.binary sub %b, %c : !gnn.tensor<dense, 4xf32>, !gnn.tensor<dense, 4xf32> -> !gnn.tensor<dense, 4xf32>
    gnn.yield %m, %b, %d, %c : !gnn.tensor<dense, 4xf32>, !gnn.tensor<dense, 4xf32>, !gnn.tensor<dense, 4xf32>, !gnn.tensor<dense, 4xf32>
  }
  return %r#0 : !gnn.tensor<dst, 4xf32>
}

//===----------------------------------------------------------------------===//
// Every op of an aggregate body, each into its own scratch row.
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @ops.aggregate0(
// CHECK-SAME: %[[G:[^:]*]]: !gnnk.graph, %[[A:[^:]*]]: memref<?x2x3xf32>, %[[B:[^:]*]]: memref<?x3xf32>, %[[M:[^:]*]]: memref<3x4xf32>,
// CHECK-SAME: attributes {gnnk.kernel = {num_outputs = 8 : i64}}
// Constants come first, once each: elu's and leaky_relu's alpha, the
// body's constant.
// CHECK-DAG: arith.constant 1.500000e+00 : f32
// CHECK-DAG: arith.constant 2.000000e-01 : f32
// CHECK-DAG: arith.constant 2.500000e-01 : f32
// CHECK: gnnk.for_vertices %[[V:.*]] in %[[G]] by dst {
// No allocation inside the edge loop: scratch rows belong to the vertex.
// CHECK: gnnk.for_edges %[[E:.*]], %[[U:.*]] in %[[G]] of %[[V]] by dst {
// CHECK-NOT: memref.alloca
// Unary functions, as the interpreter writes them.
// CHECK: math.absf
// CHECK: arith.negf
// CHECK: math.exp
// CHECK: math.log
// CHECK: math.sqrt
// rsqrt is 1 / sqrt(x)
// CHECK: %[[SQ:.*]] = math.sqrt
// CHECK-NEXT: arith.divf %cst{{.*}}, %[[SQ]]
// relu is x <= 0 ? 0 : x, so that a NaN passes through
// CHECK: %[[NPOS:.*]] = arith.cmpf ole, %[[RX:.*]], %[[ZERO:.*]] : f32
// CHECK-NEXT: arith.select %[[NPOS]], %[[ZERO]], %[[RX]] : f32
// sigmoid is 1 / (1 + exp(-x))
// CHECK: arith.negf
// CHECK-NEXT: math.exp
// CHECK-NEXT: arith.addf
// CHECK-NEXT: arith.divf
// CHECK: math.tanh
// gelu is 0.5 * x * (1 + erf(x / sqrt(2)))
// CHECK: arith.mulf
// CHECK-NEXT: arith.divf
// CHECK-NEXT: math.erf
// CHECK-NEXT: arith.addf
// CHECK-NEXT: arith.mulf
// Broadcasting a row [3] against [2, 3]: the row is read at the last index.
// CHECK: scf.for %[[I:.*]] = %c0 to %c2 step %c1 {
// CHECK-NEXT: scf.for %[[J:.*]] = %c0 to %c3 step %c1 {
// CHECK: memref.load %[[B]][%[[V]], %[[J]]] : memref<?x3xf32>
// CHECK-NEXT: arith.subf
// max(x, y) is x < y || isnan(y) ? y : x, so that a NaN on either side
// gives a NaN
// CHECK: %[[LT:.*]] = arith.cmpf olt, %[[MX:.*]], %[[MY:.*]] : f32
// CHECK-NEXT: %[[NAN:.*]] = arith.cmpf uno, %[[MY]], %[[MY]] : f32
// CHECK-NEXT: %[[TAKE:.*]] = arith.ori %[[LT]], %[[NAN]] : i1
// CHECK-NEXT: arith.select %[[TAKE]], %[[MY]], %[[MX]] : f32
// CHECK: math.powf
// Reductions: the sum over the last axis starts from 0.
// CHECK: memref.store %cst, %[[RS:.*]][%{{.*}}, %c0] : memref<2x1xf32>
// CHECK: memref.load %[[RS]]
// CHECK-NEXT: arith.addf
// The matmul accumulates row . column from 0.
// CHECK: memref.store %cst, %[[MM:.*]][%[[MI:.*]], %[[MJ:.*]]] : memref<2x4xf32>
// CHECK-NEXT: scf.for %[[P:.*]] = %c0 to %c3 step %c1 {
// CHECK-NEXT: memref.load %[[A]][%[[U]], %[[MI]], %[[P]]] : memref<?x2x3xf32>
// CHECK-NEXT: memref.load %[[M]][%[[P]], %[[MJ]]] : memref<3x4xf32>
// CHECK-NEXT: memref.load %[[MM]][%[[MI]], %[[MJ]]]
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: arith.addf
// A reshape of an input row copies it first; of a scratch row it is a view.
// CHECK: memref.load %[[A]][%[[U]],
// CHECK-NEXT: memref.store %{{.*}}, %[[COPY:.*]][
// CHECK: memref.reinterpret_cast %[[COPY]] to offset: [0], sizes: [6], strides: [1] : memref<2x3xf32> to memref<6xf32>
// CHECK-NEXT: memref.reinterpret_cast %{{.*}} to offset: [0], sizes: [6], strides: [1] : memref<2x3xf32> to memref<6xf32>
// Dropout keyed by edge * 6 + element, as on the [E, 2, 3] tensor.
// CHECK: %[[BASE:.*]] = arith.muli %[[E]], %c6 : index
// CHECK-NEXT: %[[AT:.*]] = arith.addi %[[BASE]], %{{.*}} : index
// CHECK-NEXT: %[[KEEP:.*]] = gnnk.dropout_keep %c5_i64, %[[AT]], 3.000000e-01 : f32
// CHECK: %[[KEPT:.*]] = arith.cmpf ogt, %[[KEEP]], %cst : f32
// CHECK-NEXT: %[[SCALED:.*]] = arith.mulf %{{.*}}, %[[KEEP]] : f32
// CHECK-NEXT: arith.select %[[KEPT]], %[[SCALED]], %cst : f32
// Softmax over an axis: the running maximum from element 1, the sum, then
// exp(x - max) / sum; log-softmax subtracts log(sum).
// CHECK: scf.for %{{.*}} = %c1 to %c3 step %c1 {
// CHECK: math.exp
// CHECK: math.exp
// CHECK-NEXT: arith.divf
// CHECK: math.log
// CHECK-NEXT: arith.subf
// Concatenation writes the second input at an offset.
// CHECK: arith.addi %{{.*}}, %c3 : index
// CHECK: memref.store {{.*}} : memref<2x6xf32>
// Transposition swaps the indices.
// CHECK: scf.for %[[TI:.*]] = %c0 to %c3 step %c1 {
// CHECK-NEXT: scf.for %[[TJ:.*]] = %c0 to %c2 step %c1 {
// CHECK-NEXT: memref.load %{{.*}}[%[[TJ]], %[[TI]]] : memref<2x3xf32>
// CHECK-NEXT: memref.store %{{.*}}, %{{.*}}[%[[TI]], %[[TJ]]] : memref<3x2xf32>
// The reshaped scalar constant is used directly.
// CHECK: arith.addf %{{.*}}, %cst_{{[0-9]+}} : f32
// CHECK: }
// CHECK: return
func.func @ops(%g: !gnn.graph<graph>, %x: !gnn.tensor<src, 2x3xf32>, %y: !gnn.tensor<dst, 3xf32>, %w: !gnn.tensor<dense, 3x4xf32>) -> !gnn.tensor<dst, 2x3xf32> {
  %r:8 = gnn.aggregate %g(%x, %y, %w : !gnn.tensor<src, 2x3xf32>, !gnn.tensor<dst, 3xf32>, !gnn.tensor<dense, 3x4xf32>) by dst reductions [{kind = "sum"}, {kind = "sum"}, {kind = "sum"}, {kind = "sum"}, {kind = "sum"}, {kind = "sum"}, {kind = "sum"}, {kind = "sum"}] : !gnn.graph<graph> -> !gnn.tensor<dst, 2x3xf32>, !gnn.tensor<dst, 2x3xf32>, !gnn.tensor<dst, 2x4xf32>, !gnn.tensor<dst, 6xf32>, !gnn.tensor<dst, 2x3xf32>, !gnn.tensor<dst, 2x6xf32>, !gnn.tensor<dst, 3x2xf32>, !gnn.tensor<dst, 4xf32> {
  ^bb0(%a: !gnn.tensor<dense, 2x3xf32>, %b: !gnn.tensor<dense, 3xf32>, %m: !gnn.tensor<dense, 3x4xf32>):
    // Unary functions.
    %abs = gnn.unary abs %a : !gnn.tensor<dense, 2x3xf32>
    %neg = gnn.unary neg %a : !gnn.tensor<dense, 2x3xf32>
    %exp = gnn.unary exp %neg : !gnn.tensor<dense, 2x3xf32>
    %log = gnn.unary log %abs : !gnn.tensor<dense, 2x3xf32>
    %sqrt = gnn.unary sqrt %abs : !gnn.tensor<dense, 2x3xf32>
    %rsqrt = gnn.unary rsqrt %abs : !gnn.tensor<dense, 2x3xf32>
    %relu = gnn.unary relu %a : !gnn.tensor<dense, 2x3xf32>
    %sig = gnn.unary sigmoid %a : !gnn.tensor<dense, 2x3xf32>
    %tanh = gnn.unary tanh %a : !gnn.tensor<dense, 2x3xf32>
    %gelu = gnn.unary gelu %a : !gnn.tensor<dense, 2x3xf32>
    %elu = gnn.unary elu %a {alpha = 1.500000e+00 : f64} : !gnn.tensor<dense, 2x3xf32>
    %lrelu = gnn.unary leaky_relu %a {alpha = 2.000000e-01 : f64} : !gnn.tensor<dense, 2x3xf32>
    // Binary functions, with broadcasting of a row [3] and of a constant.
    %c = gnn.constant 2.500000e-01 : !gnn.tensor<dense, f32>
    %add = gnn.binary add %exp, %log : !gnn.tensor<dense, 2x3xf32>, !gnn.tensor<dense, 2x3xf32> -> !gnn.tensor<dense, 2x3xf32>
    %sub = gnn.binary sub %add, %b : !gnn.tensor<dense, 2x3xf32>, !gnn.tensor<dense, 3xf32> -> !gnn.tensor<dense, 2x3xf32>
    %mul = gnn.binary mul %sub, %c : !gnn.tensor<dense, 2x3xf32>, !gnn.tensor<dense, f32> -> !gnn.tensor<dense, 2x3xf32>
    %div = gnn.binary div %sqrt, %rsqrt : !gnn.tensor<dense, 2x3xf32>, !gnn.tensor<dense, 2x3xf32> -> !gnn.tensor<dense, 2x3xf32>
    %max = gnn.binary max %relu, %sig : !gnn.tensor<dense, 2x3xf32>, !gnn.tensor<dense, 2x3xf32> -> !gnn.tensor<dense, 2x3xf32>
    %min = gnn.binary min %tanh, %gelu : !gnn.tensor<dense, 2x3xf32>, !gnn.tensor<dense, 2x3xf32> -> !gnn.tensor<dense, 2x3xf32>
    %pow = gnn.binary pow %abs, %c : !gnn.tensor<dense, 2x3xf32>, !gnn.tensor<dense, f32> -> !gnn.tensor<dense, 2x3xf32>
    %s1 = gnn.binary add %mul, %div : !gnn.tensor<dense, 2x3xf32>, !gnn.tensor<dense, 2x3xf32> -> !gnn.tensor<dense, 2x3xf32>
    %s2 = gnn.binary add %max, %min : !gnn.tensor<dense, 2x3xf32>, !gnn.tensor<dense, 2x3xf32> -> !gnn.tensor<dense, 2x3xf32>
    %s3 = gnn.binary add %elu, %lrelu : !gnn.tensor<dense, 2x3xf32>, !gnn.tensor<dense, 2x3xf32> -> !gnn.tensor<dense, 2x3xf32>
    %s4 = gnn.binary add %s1, %s2 : !gnn.tensor<dense, 2x3xf32>, !gnn.tensor<dense, 2x3xf32> -> !gnn.tensor<dense, 2x3xf32>
    %s5 = gnn.binary add %s3, %pow : !gnn.tensor<dense, 2x3xf32>, !gnn.tensor<dense, 2x3xf32> -> !gnn.tensor<dense, 2x3xf32>
    // Reductions of a row: one axis (kept or not), all axes.
    %rs = gnn.reduce sum %a {axis = 1 : i64, keepdims} : !gnn.tensor<dense, 2x3xf32> -> !gnn.tensor<dense, 2x1xf32>
    %rm = gnn.reduce mean %a {axis = 0 : i64} : !gnn.tensor<dense, 2x3xf32> -> !gnn.tensor<dense, 3xf32>
    %rx = gnn.reduce max %a : !gnn.tensor<dense, 2x3xf32> -> !gnn.tensor<dense, f32>
    %rn = gnn.reduce min %a {keepdims} : !gnn.tensor<dense, 2x3xf32> -> !gnn.tensor<dense, 1x1xf32>
    %t1 = gnn.binary mul %rs, %rm : !gnn.tensor<dense, 2x1xf32>, !gnn.tensor<dense, 3xf32> -> !gnn.tensor<dense, 2x3xf32>
    %t2 = gnn.binary sub %rx, %rn : !gnn.tensor<dense, f32>, !gnn.tensor<dense, 1x1xf32> -> !gnn.tensor<dense, 1x1xf32>
    %t3 = gnn.binary add %t1, %t2 : !gnn.tensor<dense, 2x3xf32>, !gnn.tensor<dense, 1x1xf32> -> !gnn.tensor<dense, 2x3xf32>
    // A row times a dense matrix.
    %mm = gnn.matmul %a, %m : !gnn.tensor<dense, 2x3xf32>, !gnn.tensor<dense, 3x4xf32> -> !gnn.tensor<dense, 2x4xf32>
    // Reshapes: of an input row (copied) and of a scratch row (in place).
    %ri = gnn.reshape %a : !gnn.tensor<dense, 2x3xf32> -> !gnn.tensor<dense, 6xf32>
    %rt = gnn.reshape %t3 : !gnn.tensor<dense, 2x3xf32> -> !gnn.tensor<dense, 6xf32>
    %rr = gnn.binary add %ri, %rt : !gnn.tensor<dense, 6xf32>, !gnn.tensor<dense, 6xf32> -> !gnn.tensor<dense, 6xf32>
    // Dropout keyed by (seed, edge, element); softmax and log-softmax.
    %dr = gnn.dropout %a {p = 3.000000e-01 : f64, seed = 5 : i64} : !gnn.tensor<dense, 2x3xf32>
    %sm = gnn.softmax %a {axis = 1 : i64} : !gnn.tensor<dense, 2x3xf32>
    %ls = gnn.softmax %a {axis = 0 : i64, log} : !gnn.tensor<dense, 2x3xf32>
    %so = gnn.binary add %sm, %ls : !gnn.tensor<dense, 2x3xf32>, !gnn.tensor<dense, 2x3xf32> -> !gnn.tensor<dense, 2x3xf32>
    // Concatenation and transposition.
    %cc = gnn.concat %a, %dr {axis = 1 : i64} : !gnn.tensor<dense, 2x3xf32>, !gnn.tensor<dense, 2x3xf32> -> !gnn.tensor<dense, 2x6xf32>
    %tr = gnn.transpose %so : !gnn.tensor<dense, 2x3xf32> -> !gnn.tensor<dense, 3x2xf32>
    // A scalar constant reshaped, then broadcast.
    %c4 = gnn.reshape %c : !gnn.tensor<dense, f32> -> !gnn.tensor<dense, 1xf32>
    %sl = gnn.reduce sum %mm {axis = 0 : i64} : !gnn.tensor<dense, 2x4xf32> -> !gnn.tensor<dense, 4xf32>
    %v4 = gnn.binary add %sl, %c4 : !gnn.tensor<dense, 4xf32>, !gnn.tensor<dense, 1xf32> -> !gnn.tensor<dense, 4xf32>
    gnn.yield %s4, %s5, %mm, %rr, %t3, %cc, %tr, %v4 : !gnn.tensor<dense, 2x3xf32>, !gnn.tensor<dense, 2x3xf32>, !gnn.tensor<dense, 2x4xf32>, !gnn.tensor<dense, 6xf32>, !gnn.tensor<dense, 2x3xf32>, !gnn.tensor<dense, 2x6xf32>, !gnn.tensor<dense, 3x2xf32>, !gnn.tensor<dense, 4xf32>
  }
  return %r#0 : !gnn.tensor<dst, 2x3xf32>
}

//===----------------------------------------------------------------------===//
// Attention over out-edges of a block: softmax_sum with per-head logits
// broadcast to the values and attention dropout, softmax_sum with a scalar
// logit, and a sum. By source, src rows are the vertex's, dst rows the
// neighbour's.
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @attention(
// CHECK: gnnk.launch @attention.aggregate0(%arg0, %arg1, %arg2, %arg3, %arg4) : (!gnn.graph<block>, !gnn.tensor<src, 2x1xf32>, !gnn.tensor<dst, 2x1xf32>, !gnn.tensor<dst, 2x3xf32>, !gnn.tensor<edge, f32>) -> (!gnn.tensor<src, 2x3xf32>, !gnn.tensor<src, 3xf32>, !gnn.tensor<src, 2x1xf32>)
// CHECK-LABEL: func.func @attention.aggregate0(
// CHECK-SAME: %[[G:[^:]*]]: !gnnk.graph, %[[LS:[^:]*]]: memref<?x2x1xf32>, %[[LD:[^:]*]]: memref<?x2x1xf32>, %[[H:[^:]*]]: memref<?x2x3xf32>, %[[W:[^:]*]]: memref<?xf32>,
// CHECK: %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: gnnk.for_vertices %[[V:.*]] in %[[G]] by src {
// The accumulator, running maximum and sum, this edge's scale and weight.
// CHECK-NEXT: %[[ACC:.*]] = memref.alloca() {gnnk.fold = {kind = "online_acc", reduction = 0 : i64}} : memref<2x3xf32>
// CHECK-NEXT: %[[MAX:.*]] = memref.alloca() {gnnk.fold = {kind = "online_max", reduction = 0 : i64}} : memref<2x1xf32>
// CHECK-NEXT: %[[SUM:.*]] = memref.alloca() {gnnk.fold = {kind = "online_sum", reduction = 0 : i64}} : memref<2x1xf32>
// CHECK-NEXT: %[[SCALE:.*]] = memref.alloca() : memref<2x1xf32>
// CHECK-NEXT: %[[WEIGHT:.*]] = memref.alloca() : memref<2x1xf32>
// CHECK: %[[FIRST:.*]] = memref.alloca() {gnnk.fold = {kind = "first", reduction = -1 : i64}} : memref<i1>
// CHECK: gnnk.for_edges %[[E:.*]], %[[U:.*]] in %[[G]] of %[[V]] by src {
// CHECK: memref.load %[[LS]][%[[V]],
// CHECK: memref.load %[[LD]][%[[U]],
// CHECK: memref.load %[[W]][%[[E]]]
// CHECK: memref.load %[[H]][%[[U]],
// The online softmax update, per logit element.
// CHECK: %[[F:.*]] = memref.load %[[FIRST]][] : memref<i1>
// CHECK-NEXT: scf.for %[[H0:.*]] = %c0 to %c2 step %c1 {
// CHECK-NEXT: %[[L:.*]] = memref.load %[[LOGIT:.*]][%[[H0]], %c0] : memref<2x1xf32>
// CHECK-NEXT: %[[OLD:.*]] = memref.load %[[MAX]][%[[H0]], %c0] : memref<2x1xf32>
// CHECK-NEXT: %[[LT:.*]] = arith.cmpf olt, %[[OLD]], %[[L]] : f32
// CHECK-NEXT: %[[LARGER:.*]] = arith.select %[[LT]], %[[L]], %[[OLD]] : f32
// CHECK-NEXT: %[[NEW:.*]] = arith.select %[[F]], %[[L]], %[[LARGER]] : f32
// CHECK-NEXT: %[[FROM:.*]] = arith.select %[[F]], %[[NEGINF]], %[[OLD]] : f32
// CHECK-NEXT: %[[NONE:.*]] = arith.cmpf oeq, %[[NEW]], %[[NEGINF]] : f32
// CHECK-NEXT: %[[REF:.*]] = arith.select %[[NONE]], %{{.*}}, %[[NEW]] : f32
// CHECK-NEXT: %[[D:.*]] = arith.subf %[[FROM]], %[[REF]] : f32
// CHECK-NEXT: %[[SC:.*]] = math.exp %[[D]] : f32
// CHECK-NEXT: %[[DL:.*]] = arith.subf %[[L]], %[[REF]] : f32
// CHECK-NEXT: %[[P:.*]] = math.exp %[[DL]] : f32
// CHECK-NEXT: %[[S:.*]] = memref.load %[[SUM]][%[[H0]], %c0] : memref<2x1xf32>
// CHECK-NEXT: %[[SS:.*]] = arith.mulf %[[S]], %[[SC]] : f32
// CHECK-NEXT: %[[S2:.*]] = arith.addf %[[SS]], %[[P]] : f32
// CHECK-NEXT: memref.store %[[S2]], %[[SUM]][%[[H0]], %c0] : memref<2x1xf32>
// CHECK-NEXT: memref.store %[[NEW]], %[[MAX]][%[[H0]], %c0] : memref<2x1xf32>
// Attention dropout on the [E, 2, 1] weights: edge * 2 + head.
// CHECK-NEXT: %[[BASE:.*]] = arith.muli %[[E]], %c2 : index
// CHECK-NEXT: %[[AT:.*]] = arith.addi %[[BASE]], %[[H0]] : index
// CHECK-NEXT: %[[KEEP:.*]] = gnnk.dropout_keep %c9_i64, %[[AT]], 5.000000e-01 : f32
// CHECK-NEXT: %[[WT:.*]] = arith.mulf %[[P]], %[[KEEP]] : f32
// CHECK-NEXT: memref.store %[[SC]], %[[SCALE]][%[[H0]], %c0] : memref<2x1xf32>
// CHECK-NEXT: memref.store %[[WT]], %[[WEIGHT]][%[[H0]], %c0] : memref<2x1xf32>
// CHECK-NEXT: }
// Per value element: acc = acc * scale + weight * value, the logit of the
// head broadcast over the 3 features.
// CHECK-NEXT: scf.for %[[I:.*]] = %c0 to %c2 step %c1 {
// CHECK-NEXT: scf.for %[[J:.*]] = %c0 to %c3 step %c1 {
// CHECK-NEXT: %[[A:.*]] = memref.load %[[ACC]][%[[I]], %[[J]]] : memref<2x3xf32>
// CHECK-NEXT: %[[C:.*]] = memref.load %[[SCALE]][%[[I]], %c0] : memref<2x1xf32>
// CHECK-NEXT: %[[AC:.*]] = arith.mulf %[[A]], %[[C]] : f32
// CHECK-NEXT: %[[WW:.*]] = memref.load %[[WEIGHT]][%[[I]], %c0] : memref<2x1xf32>
// CHECK-NEXT: %[[X:.*]] = memref.load %[[H]][%[[U]], %[[I]], %[[J]]] : memref<?x2x3xf32>
// CHECK-NEXT: %[[WX:.*]] = arith.mulf %[[WW]], %[[X]] : f32
// CHECK-NEXT: %[[NA:.*]] = arith.addf %[[AC]], %[[WX]] : f32
// CHECK-NEXT: memref.store %[[NA]], %[[ACC]][%[[I]], %[[J]]] : memref<2x3xf32>
// The scalar-logit softmax_sum has no dropout.
// CHECK-NOT: gnnk.dropout_keep
// CHECK: gnnk.degree %[[G]] of %[[V]] by src
// The final division by the running sum of the head (none when the sum is
// 0: scores of -inf only).
// CHECK: scf.if
// CHECK: memref.load %[[ACC]]
// CHECK-NEXT: memref.load %[[SUM]][%{{.*}}, %c0] : memref<2x1xf32>
// CHECK-NEXT: arith.cmpf oeq
// CHECK-NEXT: arith.divf
// CHECK-NEXT: arith.select
// CHECK: return
func.func @attention(%g: !gnn.graph<block>, %ls: !gnn.tensor<src, 2x1xf32>, %ld: !gnn.tensor<dst, 2x1xf32>, %h: !gnn.tensor<dst, 2x3xf32>, %w: !gnn.tensor<edge, f32>) -> !gnn.tensor<src, 2x3xf32> {
  %r:3 = gnn.aggregate %g(%ls, %ld, %h, %w : !gnn.tensor<src, 2x1xf32>, !gnn.tensor<dst, 2x1xf32>, !gnn.tensor<dst, 2x3xf32>, !gnn.tensor<edge, f32>) by src reductions [{dropout = 5.000000e-01 : f64, kind = "softmax_sum", seed = 9 : i64}, {kind = "softmax_sum"}, {kind = "sum"}] : !gnn.graph<block> -> !gnn.tensor<src, 2x3xf32>, !gnn.tensor<src, 3xf32>, !gnn.tensor<src, 2x1xf32> {
  ^bb0(%a: !gnn.tensor<dense, 2x1xf32>, %b: !gnn.tensor<dense, 2x1xf32>, %m: !gnn.tensor<dense, 2x3xf32>, %e: !gnn.tensor<dense, f32>):
    %l = gnn.binary add %a, %b : !gnn.tensor<dense, 2x1xf32>, !gnn.tensor<dense, 2x1xf32> -> !gnn.tensor<dense, 2x1xf32>
    %s = gnn.binary mul %e, %m : !gnn.tensor<dense, f32>, !gnn.tensor<dense, 2x3xf32> -> !gnn.tensor<dense, 2x3xf32>
    %v = gnn.reduce sum %s {axis = 0 : i64} : !gnn.tensor<dense, 2x3xf32> -> !gnn.tensor<dense, 3xf32>
    gnn.yield %l, %m, %e, %v, %a : !gnn.tensor<dense, 2x1xf32>, !gnn.tensor<dense, 2x3xf32>, !gnn.tensor<dense, f32>, !gnn.tensor<dense, 3xf32>, !gnn.tensor<dense, 2x1xf32>
  }
  return %r#0 : !gnn.tensor<src, 2x3xf32>
}

//===----------------------------------------------------------------------===//
// Several aggregates in one function: one kernel each, numbered in order.
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @two(
// CHECK: %[[A:.*]] = gnnk.launch @two.aggregate0(%arg0, %arg1)
// CHECK: %[[C:.*]] = gnn.collect %arg0, %[[A]]
// CHECK: %[[S:.*]] = gnn.attach %arg0, %[[C]]
// CHECK: gnnk.launch @two.aggregate1(%arg0, %[[S]])
// CHECK-LABEL: func.func @two.aggregate0(
// CHECK-LABEL: func.func @two.aggregate1(
func.func @two(%g: !gnn.graph<graph>, %x: !gnn.tensor<src, 4xf32>) -> !gnn.tensor<dst, 4xf32> {
  %a = gnn.aggregate %g(%x : !gnn.tensor<src, 4xf32>) by dst reductions [{kind = "sum"}] : !gnn.graph<graph> -> !gnn.tensor<dst, 4xf32> {
  ^bb0(%u: !gnn.tensor<dense, 4xf32>):
    gnn.yield %u : !gnn.tensor<dense, 4xf32>
  }
  %c = gnn.collect %g, %a : !gnn.graph<graph>, !gnn.tensor<dst, 4xf32> -> !gnn.tensor<dense, ?x4xf32>
  %s = gnn.attach %g, %c : !gnn.graph<graph>, !gnn.tensor<dense, ?x4xf32> -> !gnn.tensor<src, 4xf32>
  %b = gnn.aggregate %g(%s : !gnn.tensor<src, 4xf32>) by dst reductions [{kind = "max"}] : !gnn.graph<graph> -> !gnn.tensor<dst, 4xf32> {
  ^bb0(%u: !gnn.tensor<dense, 4xf32>):
    gnn.yield %u : !gnn.tensor<dense, 4xf32>
  }
  return %b : !gnn.tensor<dst, 4xf32>
}

//===----------------------------------------------------------------------===//
// The functions gnn-autodiff adds for derivatives: erf (gelu's derivative)
// and gt (relu's, max's), a 1 or 0 of the element type.
//===----------------------------------------------------------------------===//

// CHECK-LABEL: func.func @derivative_fns.aggregate0(
// CHECK: gnnk.for_edges
// CHECK: math.erf
// CHECK: %[[GT:.*]] = arith.cmpf ogt, %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: arith.select %[[GT]], %cst{{.*}}, %cst{{.*}} : f32
func.func @derivative_fns(%g: !gnn.graph<graph>, %x: !gnn.tensor<src, 3xf32>, %y: !gnn.tensor<dst, 3xf32>) -> !gnn.tensor<dst, 3xf32> {
  %r = gnn.aggregate %g(%x, %y : !gnn.tensor<src, 3xf32>, !gnn.tensor<dst, 3xf32>) by dst reductions [{kind = "sum"}] : !gnn.graph<graph> -> !gnn.tensor<dst, 3xf32> {
  ^bb0(%a: !gnn.tensor<dense, 3xf32>, %b: !gnn.tensor<dense, 3xf32>):
    %e = gnn.unary erf %a : !gnn.tensor<dense, 3xf32>
    %m = gnn.binary gt %a, %b : !gnn.tensor<dense, 3xf32>, !gnn.tensor<dense, 3xf32> -> !gnn.tensor<dense, 3xf32>
    %s = gnn.binary add %e, %m : !gnn.tensor<dense, 3xf32>, !gnn.tensor<dense, 3xf32> -> !gnn.tensor<dense, 3xf32>
    gnn.yield %s : !gnn.tensor<dense, 3xf32>
  }
  return %r : !gnn.tensor<dst, 3xf32>
}
