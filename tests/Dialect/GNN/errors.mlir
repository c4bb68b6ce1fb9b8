// One case per verifier rule of the gnn dialect (types and ops), each with
// the diagnostic it must produce.
//
// RUN: gnn-opt %s --split-input-file --verify-diagnostics

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

// expected-error@+1 {{unknown domain 'vertex'; expected dense, src, dst or edge}}
func.func @unknown_domain(%x: !gnn.tensor<vertex, 4xf32>)

// -----

// expected-error@+2 {{expected ::gnnc::gnn::GraphKind to be one of: graph, block, batched, hetero}}
// expected-error@+1 {{failed to parse GNN_GraphType parameter 'kind'}}
func.func @unknown_graph_kind(%g: !gnn.graph<tree>)

// -----

// expected-error@+1 {{the row shape of a src tensor must be static}}
func.func @dynamic_row_src(%x: !gnn.tensor<src, ?x4xf32>)

// -----

// expected-error@+1 {{the row shape of a dst tensor must be static}}
func.func @dynamic_row_dst(%x: !gnn.tensor<dst, 4x?xf32>)

// -----

// expected-error@+1 {{the row shape of a edge tensor must be static}}
func.func @dynamic_row_edge(%x: !gnn.tensor<edge, ?xf32>)

// -----

// expected-error@+1 {{dimensions must be positive, got 0}}
func.func @zero_dim(%x: !gnn.tensor<dense, 0x4xf32>)

// -----

// expected-error@+1 {{element type must be an integer or float, got 'index'}}
func.func @index_element(%x: !gnn.tensor<dense, 4xindex>)

// -----

// expected-error@+1 {{element type must be an integer or float, got 'complex<f32>'}}
func.func @complex_element(%x: !gnn.tensor<dense, complex<f32>>)

// -----

//===----------------------------------------------------------------------===//
// Operand kinds (ODS constraints)
//===----------------------------------------------------------------------===//

func.func @tensor_as_graph(%x: !gnn.tensor<dense, 4xf32>) {
  // expected-error@+1 {{'gnn.in_degree' op operand #0 must be gnn graph, but got '!gnn.tensor<dense, 4xf32>'}}
  %0 = "gnn.in_degree"(%x) : (!gnn.tensor<dense, 4xf32>) -> !gnn.tensor<dense, ?xf32>
  return
}

// -----

func.func @builtin_tensor_operand(%g: !gnn.graph<graph>, %x: tensor<4xf32>) {
  // expected-error@+1 {{'gnn.attach' op operand #1 must be gnn tensor, but got 'tensor<4xf32>'}}
  %0 = "gnn.attach"(%g, %x) : (!gnn.graph<graph>, tensor<4xf32>) -> !gnn.tensor<src, f32>
  return
}

// -----

func.func @unary_type_changes(%x: !gnn.tensor<dense, 4xf32>) {
  // expected-error@+1 {{'gnn.unary' op requires the same type for all operands and results}}
  %0 = "gnn.unary"(%x) {fn = 1 : i32} : (!gnn.tensor<dense, 4xf32>) -> !gnn.tensor<dense, 4xf64>
  return
}

// -----

func.func @dropout_needs_seed(%x: !gnn.tensor<dense, 4xf32>) {
  // expected-error@+1 {{'gnn.dropout' op requires attribute 'seed'}}
  %0 = gnn.dropout %x {p = 0.5 : f64} : !gnn.tensor<dense, 4xf32>
  return
}

// -----

func.func @unknown_unary_fn(%x: !gnn.tensor<dense, 4xf32>) {
  // expected-error@+1 {{custom op 'gnn.unary' expected string or keyword containing one of the following enum values for attribute 'fn' [neg, exp, log, sqrt, rsqrt, abs, relu, sigmoid, tanh, gelu, elu, leaky_relu, erf, sin, cos]}}
  %0 = gnn.unary softplus %x : !gnn.tensor<dense, 4xf32>
  return
}

// -----

func.func @unknown_reduce_fn(%g: !gnn.graph<graph>, %e: !gnn.tensor<edge, 4xf32>) {
  // expected-error@+1 {{custom op 'gnn.scatter' expected string or keyword containing one of the following enum values for attribute 'fn' [sum, mean, max, min, logsumexp]}}
  %0 = gnn.scatter prod %g, %e : !gnn.graph<graph>, !gnn.tensor<edge, 4xf32> -> !gnn.tensor<dst, 4xf32>
  return
}

// -----

func.func @unary_fn_out_of_range(%x: !gnn.tensor<dense, 4xf32>) {
  // expected-error@+1 {{'gnn.unary' op attribute 'fn' failed to satisfy constraint: elementwise unary function}}
  %0 = "gnn.unary"(%x) {fn = 42 : i32} : (!gnn.tensor<dense, 4xf32>) -> !gnn.tensor<dense, 4xf32>
  return
}

// -----

func.func @unknown_binary_fn(%a: !gnn.tensor<dense, 4xf32>) {
  // expected-error@+1 {{custom op 'gnn.binary' expected string or keyword containing one of the following enum values for attribute 'fn' [add, sub, mul, div, max, min, pow, gt, ge, eq, ne, mask]}}
  %0 = gnn.binary mod %a, %a : !gnn.tensor<dense, 4xf32>, !gnn.tensor<dense, 4xf32> -> !gnn.tensor<dense, 4xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Graph facts
//===----------------------------------------------------------------------===//

func.func @in_degree_hetero(%g: !gnn.graph<hetero>) {
  // expected-error@+1 {{'gnn.in_degree' op needs one relation of a hetero graph}}
  %0 = gnn.in_degree %g : !gnn.graph<hetero> -> !gnn.tensor<dense, ?xf32>
  return
}

// -----

func.func @out_degree_hetero(%g: !gnn.graph<hetero>) {
  // expected-error@+1 {{'gnn.out_degree' op needs one relation of a hetero graph}}
  %0 = gnn.out_degree %g : !gnn.graph<hetero> -> !gnn.tensor<dense, ?xf32>
  return
}

// -----

func.func @in_degree_integer(%g: !gnn.graph<graph>) {
  // expected-error@+1 {{'gnn.in_degree' op result must be a dense rank-1 float tensor}}
  %0 = gnn.in_degree %g : !gnn.graph<graph> -> !gnn.tensor<dense, ?xi64>
  return
}

// -----

func.func @out_degree_rank2(%g: !gnn.graph<graph>) {
  // expected-error@+1 {{'gnn.out_degree' op result must be a dense rank-1 float tensor}}
  %0 = gnn.out_degree %g : !gnn.graph<graph> -> !gnn.tensor<dense, ?x1xf32>
  return
}

// -----

func.func @in_degree_not_dense(%g: !gnn.graph<graph>) {
  // expected-error@+1 {{'gnn.in_degree' op result must be a dense rank-1 float tensor}}
  %0 = gnn.in_degree %g : !gnn.graph<graph> -> !gnn.tensor<dst, 1xf32>
  return
}

// -----

func.func @num_vertices_vector(%g: !gnn.graph<graph>) {
  // expected-error@+1 {{'gnn.num_vertices' op result must be a dense scalar}}
  %0 = gnn.num_vertices %g : !gnn.graph<graph> -> !gnn.tensor<dense, 2xf32>
  return
}

// -----

func.func @num_edges_rank1(%g: !gnn.graph<graph>) {
  // expected-error@+1 {{'gnn.num_edges' op result must be a dense scalar}}
  %0 = gnn.num_edges %g : !gnn.graph<graph> -> !gnn.tensor<dense, 1xi64>
  return
}

// -----

func.func @relation_of_graph(%g: !gnn.graph<graph>) {
  // expected-error@+1 {{'gnn.relation' op operand must be a hetero graph}}
  %0 = gnn.relation %g "cites" : !gnn.graph<graph> -> !gnn.graph<graph>
  return
}

// -----

func.func @relation_to_block(%g: !gnn.graph<hetero>) {
  // expected-error@+1 {{'gnn.relation' op result must be a homogeneous graph}}
  %0 = gnn.relation %g "cites" : !gnn.graph<hetero> -> !gnn.graph<block>
  return
}

// -----

//===----------------------------------------------------------------------===//
// attach, collect, splat
//===----------------------------------------------------------------------===//

func.func @attach_wrong_rows(%g: !gnn.graph<graph>, %x: !gnn.tensor<dense, ?x16xf32>) {
  // expected-error@+1 {{'gnn.attach' op result rows [8] must be the input shape [?, 16] without its leading axis}}
  %0 = gnn.attach %g, %x : !gnn.graph<graph>, !gnn.tensor<dense, ?x16xf32> -> !gnn.tensor<src, 8xf32>
  return
}

// -----

func.func @attach_scalar(%g: !gnn.graph<graph>, %x: !gnn.tensor<dense, f32>) {
  // expected-error@+1 {{'gnn.attach' op result rows [] must be the input shape [] without its leading axis}}
  %0 = gnn.attach %g, %x : !gnn.graph<graph>, !gnn.tensor<dense, f32> -> !gnn.tensor<src, f32>
  return
}

// -----

func.func @attach_from_vertex(%g: !gnn.graph<graph>, %x: !gnn.tensor<src, 16xf32>) {
  // expected-error@+1 {{'gnn.attach' op input must be in domain dense, got src}}
  %0 = gnn.attach %g, %x : !gnn.graph<graph>, !gnn.tensor<src, 16xf32> -> !gnn.tensor<dst, 16xf32>
  return
}

// -----

func.func @attach_to_dense(%g: !gnn.graph<graph>, %x: !gnn.tensor<dense, ?x16xf32>) {
  // expected-error@+1 {{'gnn.attach' op result must be in domain src or dst or edge, got dense}}
  %0 = gnn.attach %g, %x : !gnn.graph<graph>, !gnn.tensor<dense, ?x16xf32> -> !gnn.tensor<dense, 16xf32>
  return
}

// -----

func.func @attach_element_type(%g: !gnn.graph<graph>, %x: !gnn.tensor<dense, ?x16xf32>) {
  // expected-error@+1 {{'gnn.attach' op element types differ: 'f32' vs 'f64'}}
  %0 = gnn.attach %g, %x : !gnn.graph<graph>, !gnn.tensor<dense, ?x16xf32> -> !gnn.tensor<src, 16xf64>
  return
}

// -----

func.func @collect_dense(%g: !gnn.graph<graph>, %x: !gnn.tensor<dense, 16xf32>) {
  // expected-error@+1 {{'gnn.collect' op input must be in domain src or dst or edge, got dense}}
  %0 = gnn.collect %g, %x : !gnn.graph<graph>, !gnn.tensor<dense, 16xf32> -> !gnn.tensor<dense, ?x16xf32>
  return
}

// -----

func.func @collect_to_vertex(%g: !gnn.graph<graph>, %x: !gnn.tensor<dst, 16xf32>) {
  // expected-error@+1 {{'gnn.collect' op result must be in domain dense, got src}}
  %0 = gnn.collect %g, %x : !gnn.graph<graph>, !gnn.tensor<dst, 16xf32> -> !gnn.tensor<src, 16xf32>
  return
}

// -----

func.func @collect_no_vertex_axis(%g: !gnn.graph<graph>, %x: !gnn.tensor<dst, 16xf32>) {
  // expected-error@+1 {{'gnn.collect' op result shape [16] must be a vertex axis followed by the rows [16]}}
  %0 = gnn.collect %g, %x : !gnn.graph<graph>, !gnn.tensor<dst, 16xf32> -> !gnn.tensor<dense, 16xf32>
  return
}

// -----

func.func @collect_element_type(%g: !gnn.graph<graph>, %x: !gnn.tensor<dst, 16xf32>) {
  // expected-error@+1 {{'gnn.collect' op element types differ: 'f32' vs 'f16'}}
  %0 = gnn.collect %g, %x : !gnn.graph<graph>, !gnn.tensor<dst, 16xf32> -> !gnn.tensor<dense, ?x16xf16>
  return
}

// -----

func.func @splat_from_vertex(%g: !gnn.graph<graph>, %x: !gnn.tensor<src, 16xf32>) {
  // expected-error@+1 {{'gnn.splat' op input must be in domain dense, got src}}
  %0 = gnn.splat %g, %x : !gnn.graph<graph>, !gnn.tensor<src, 16xf32> -> !gnn.tensor<dst, 16xf32>
  return
}

// -----

func.func @splat_to_dense(%g: !gnn.graph<graph>, %x: !gnn.tensor<dense, 16xf32>) {
  // expected-error@+1 {{'gnn.splat' op result must be in domain src or dst or edge, got dense}}
  %0 = gnn.splat %g, %x : !gnn.graph<graph>, !gnn.tensor<dense, 16xf32> -> !gnn.tensor<dense, 16xf32>
  return
}

// -----

func.func @splat_rows(%g: !gnn.graph<graph>, %x: !gnn.tensor<dense, 16xf32>) {
  // expected-error@+1 {{'gnn.splat' op result rows must be the input tensor}}
  %0 = gnn.splat %g, %x : !gnn.graph<graph>, !gnn.tensor<dense, 16xf32> -> !gnn.tensor<edge, 1x16xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// gather, scatter, edge_softmax, readout
//===----------------------------------------------------------------------===//

func.func @gather_from_edge(%g: !gnn.graph<graph>, %x: !gnn.tensor<edge, 16xf32>) {
  // expected-error@+1 {{'gnn.gather' op input must be in domain src or dst, got edge}}
  %0 = gnn.gather %g, %x : !gnn.graph<graph>, !gnn.tensor<edge, 16xf32> -> !gnn.tensor<edge, 16xf32>
  return
}

// -----

func.func @gather_from_dense(%g: !gnn.graph<graph>, %x: !gnn.tensor<dense, ?x16xf32>) {
  // expected-error@+1 {{'gnn.gather' op input must be in domain src or dst, got dense}}
  %0 = gnn.gather %g, %x : !gnn.graph<graph>, !gnn.tensor<dense, ?x16xf32> -> !gnn.tensor<edge, 16xf32>
  return
}

// -----

func.func @gather_to_vertex(%g: !gnn.graph<graph>, %x: !gnn.tensor<src, 16xf32>) {
  // expected-error@+1 {{'gnn.gather' op result must be in domain edge, got dst}}
  %0 = gnn.gather %g, %x : !gnn.graph<graph>, !gnn.tensor<src, 16xf32> -> !gnn.tensor<dst, 16xf32>
  return
}

// -----

func.func @gather_rows(%g: !gnn.graph<graph>, %x: !gnn.tensor<src, 16xf32>) {
  // expected-error@+1 {{'gnn.gather' op result must have the input's rows and element type}}
  %0 = gnn.gather %g, %x : !gnn.graph<graph>, !gnn.tensor<src, 16xf32> -> !gnn.tensor<edge, 8xf32>
  return
}

// -----

func.func @scatter_to_dense(%g: !gnn.graph<graph>, %x: !gnn.tensor<edge, 16xf32>) {
  // expected-error@+1 {{'gnn.scatter' op result must be in domain src or dst, got dense}}
  %0 = gnn.scatter sum %g, %x : !gnn.graph<graph>, !gnn.tensor<edge, 16xf32> -> !gnn.tensor<dense, 16xf32>
  return
}

// -----

func.func @scatter_from_vertex(%g: !gnn.graph<graph>, %x: !gnn.tensor<src, 16xf32>) {
  // expected-error@+1 {{'gnn.scatter' op input must be in domain edge, got src}}
  %0 = gnn.scatter sum %g, %x : !gnn.graph<graph>, !gnn.tensor<src, 16xf32> -> !gnn.tensor<dst, 16xf32>
  return
}

// -----

func.func @scatter_rows(%g: !gnn.graph<graph>, %x: !gnn.tensor<edge, 16xf32>) {
  // expected-error@+1 {{'gnn.scatter' op result must have the input's rows and element type}}
  %0 = gnn.scatter max %g, %x : !gnn.graph<graph>, !gnn.tensor<edge, 16xf32> -> !gnn.tensor<dst, 16xf64>
  return
}

// -----

func.func @scatter_mean_integer(%g: !gnn.graph<graph>, %x: !gnn.tensor<edge, 16xi32>) {
  // expected-error@+1 {{'gnn.scatter' op needs a floating-point tensor, got 'i32'}}
  %0 = gnn.scatter mean %g, %x : !gnn.graph<graph>, !gnn.tensor<edge, 16xi32> -> !gnn.tensor<dst, 16xi32>
  return
}

// -----

func.func @edge_softmax_by_edge(%g: !gnn.graph<graph>, %x: !gnn.tensor<edge, 8x1xf32>) {
  // expected-error@+1 {{'gnn.edge_softmax' op 'by' must be src or dst}}
  %0 = gnn.edge_softmax %g, %x {by = #gnn<domain edge>} : !gnn.graph<graph>, !gnn.tensor<edge, 8x1xf32> -> !gnn.tensor<edge, 8x1xf32>
  return
}

// -----

func.func @edge_softmax_by_dense(%g: !gnn.graph<graph>, %x: !gnn.tensor<edge, 8x1xf32>) {
  // expected-error@+1 {{'gnn.edge_softmax' op 'by' must be src or dst}}
  %0 = gnn.edge_softmax %g, %x {by = #gnn<domain dense>} : !gnn.graph<graph>, !gnn.tensor<edge, 8x1xf32> -> !gnn.tensor<edge, 8x1xf32>
  return
}

// -----

func.func @edge_softmax_of_vertex(%g: !gnn.graph<graph>, %x: !gnn.tensor<dst, 8x1xf32>) {
  // expected-error@+1 {{'gnn.edge_softmax' op input must be in domain edge, got dst}}
  %0 = gnn.edge_softmax %g, %x {by = #gnn<domain dst>} : !gnn.graph<graph>, !gnn.tensor<dst, 8x1xf32> -> !gnn.tensor<dst, 8x1xf32>
  return
}

// -----

func.func @edge_softmax_integer(%g: !gnn.graph<graph>, %x: !gnn.tensor<edge, 8xi64>) {
  // expected-error@+1 {{'gnn.edge_softmax' op needs a floating-point tensor, got 'i64'}}
  %0 = gnn.edge_softmax %g, %x {by = #gnn<domain dst>} : !gnn.graph<graph>, !gnn.tensor<edge, 8xi64> -> !gnn.tensor<edge, 8xi64>
  return
}

// -----

func.func @edge_softmax_result(%g: !gnn.graph<graph>, %x: !gnn.tensor<edge, 8x1xf32>) {
  // expected-error@+1 {{'gnn.edge_softmax' op result type must equal the input type}}
  %0 = gnn.edge_softmax %g, %x {by = #gnn<domain src>} : !gnn.graph<graph>, !gnn.tensor<edge, 8x1xf32> -> !gnn.tensor<edge, 8xf32>
  return
}

// -----

func.func @edge_softmax_needs_by(%g: !gnn.graph<graph>, %x: !gnn.tensor<edge, 8x1xf32>) {
  // expected-error@+1 {{'gnn.edge_softmax' op requires attribute 'by'}}
  %0 = gnn.edge_softmax %g, %x : !gnn.graph<graph>, !gnn.tensor<edge, 8x1xf32> -> !gnn.tensor<edge, 8x1xf32>
  return
}

// -----

func.func @readout_not_batched(%g: !gnn.graph<graph>, %x: !gnn.tensor<dense, ?x16xf32>) {
  // expected-error@+1 {{'gnn.readout' op needs a batched graph}}
  %0 = gnn.readout sum %g, %x : !gnn.graph<graph>, !gnn.tensor<dense, ?x16xf32> -> !gnn.tensor<dense, ?x16xf32>
  return
}

// -----

func.func @readout_vertex_input(%g: !gnn.graph<batched>, %x: !gnn.tensor<dst, 16xf32>) {
  // expected-error@+1 {{'gnn.readout' op input must be in domain dense, got dst}}
  %0 = gnn.readout sum %g, %x : !gnn.graph<batched>, !gnn.tensor<dst, 16xf32> -> !gnn.tensor<dense, ?x16xf32>
  return
}

// -----

func.func @readout_shape(%g: !gnn.graph<batched>, %x: !gnn.tensor<dense, ?x16xf32>) {
  // expected-error@+1 {{'gnn.readout' op result must be the input with its vertex axis replaced by a graph axis}}
  %0 = gnn.readout max %g, %x : !gnn.graph<batched>, !gnn.tensor<dense, ?x16xf32> -> !gnn.tensor<dense, 16xf32>
  return
}

// -----

func.func @readout_element_type(%g: !gnn.graph<batched>, %x: !gnn.tensor<dense, ?x16xf32>) {
  // expected-error@+1 {{'gnn.readout' op element types differ: 'f32' vs 'f64'}}
  %0 = gnn.readout mean %g, %x : !gnn.graph<batched>, !gnn.tensor<dense, ?x16xf32> -> !gnn.tensor<dense, ?x16xf64>
  return
}

// -----

//===----------------------------------------------------------------------===//
// constant, unary, binary
//===----------------------------------------------------------------------===//

func.func @constant_not_scalar() {
  // expected-error@+1 {{'gnn.constant' op result must be a dense scalar}}
  %0 = gnn.constant 1.0 : !gnn.tensor<dense, 4xf32>
  return
}

// -----

func.func @constant_per_vertex() {
  // expected-error@+1 {{'gnn.constant' op result must be a dense scalar}}
  %0 = gnn.constant 1.0 : !gnn.tensor<dst, f32>
  return
}

// -----

func.func @elu_needs_alpha(%x: !gnn.tensor<dense, 4xf32>) {
  // expected-error@+1 {{'gnn.unary' op 'elu' needs an alpha}}
  %0 = gnn.unary elu %x : !gnn.tensor<dense, 4xf32>
  return
}

// -----

func.func @leaky_relu_needs_alpha(%x: !gnn.tensor<dense, 4xf32>) {
  // expected-error@+1 {{'gnn.unary' op 'leaky_relu' needs an alpha}}
  %0 = gnn.unary leaky_relu %x : !gnn.tensor<dense, 4xf32>
  return
}

// -----

func.func @relu_takes_no_alpha(%x: !gnn.tensor<dense, 4xf32>) {
  // expected-error@+1 {{'gnn.unary' op 'relu' takes no alpha}}
  %0 = gnn.unary relu %x {alpha = 0.1 : f64} : !gnn.tensor<dense, 4xf32>
  return
}

// -----

func.func @exp_of_integer(%x: !gnn.tensor<dense, 4xi32>) {
  // expected-error@+1 {{'gnn.unary' op needs a floating-point tensor, got 'i32'}}
  %0 = gnn.unary exp %x : !gnn.tensor<dense, 4xi32>
  return
}

// -----

func.func @binary_src_dst(%a: !gnn.tensor<src, 4xf32>, %b: !gnn.tensor<dst, 4xf32>) {
  // expected-error@+1 {{'gnn.binary' op cannot combine a src tensor with a dst tensor; gather or scatter first}}
  %0 = gnn.binary add %a, %b : !gnn.tensor<src, 4xf32>, !gnn.tensor<dst, 4xf32> -> !gnn.tensor<edge, 4xf32>
  return
}

// -----

func.func @binary_edge_dst(%a: !gnn.tensor<edge, 4xf32>, %b: !gnn.tensor<dst, 4xf32>) {
  // expected-error@+1 {{'gnn.binary' op cannot combine a edge tensor with a dst tensor; gather or scatter first}}
  %0 = gnn.binary mul %a, %b : !gnn.tensor<edge, 4xf32>, !gnn.tensor<dst, 4xf32> -> !gnn.tensor<edge, 4xf32>
  return
}

// -----

func.func @binary_result_domain(%a: !gnn.tensor<dense, 4xf32>, %b: !gnn.tensor<dst, 4xf32>) {
  // expected-error@+1 {{'gnn.binary' op result domain must be dst}}
  %0 = gnn.binary add %a, %b : !gnn.tensor<dense, 4xf32>, !gnn.tensor<dst, 4xf32> -> !gnn.tensor<dense, 4xf32>
  return
}

// -----

func.func @binary_element_types(%a: !gnn.tensor<dense, 4xf32>, %b: !gnn.tensor<dense, 4xf64>) {
  // expected-error@+1 {{'gnn.binary' op operands and result must share an element type}}
  %0 = gnn.binary add %a, %b : !gnn.tensor<dense, 4xf32>, !gnn.tensor<dense, 4xf64> -> !gnn.tensor<dense, 4xf32>
  return
}

// -----

func.func @binary_no_broadcast(%a: !gnn.tensor<edge, 8x4xf32>, %b: !gnn.tensor<edge, 8xf32>) {
  // expected-error@+1 {{'gnn.binary' op shapes [8, 4] and [8] do not broadcast}}
  %0 = gnn.binary mul %a, %b : !gnn.tensor<edge, 8x4xf32>, !gnn.tensor<edge, 8xf32> -> !gnn.tensor<edge, 8x4xf32>
  return
}

// -----

func.func @binary_result_shape(%a: !gnn.tensor<edge, 8x1xf32>, %b: !gnn.tensor<edge, 8x4xf32>) {
  // expected-error@+1 {{'gnn.binary' op result shape must be [8, 4]}}
  %0 = gnn.binary mul %a, %b : !gnn.tensor<edge, 8x1xf32>, !gnn.tensor<edge, 8x4xf32> -> !gnn.tensor<edge, 8x1xf32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Dense operations
//===----------------------------------------------------------------------===//

func.func @matmul_rhs_vector(%x: !gnn.tensor<dense, ?x4xf32>, %w: !gnn.tensor<dense, 4xf32>) {
  // expected-error@+1 {{'gnn.matmul' op right operand must be a dense matrix}}
  %0 = gnn.matmul %x, %w : !gnn.tensor<dense, ?x4xf32>, !gnn.tensor<dense, 4xf32> -> !gnn.tensor<dense, ?xf32>
  return
}

// -----

func.func @matmul_rhs_per_vertex(%x: !gnn.tensor<dst, 4xf32>, %w: !gnn.tensor<src, 4x2xf32>) {
  // expected-error@+1 {{'gnn.matmul' op right operand must be a dense matrix}}
  %0 = gnn.matmul %x, %w : !gnn.tensor<dst, 4xf32>, !gnn.tensor<src, 4x2xf32> -> !gnn.tensor<dst, 2xf32>
  return
}

// -----

func.func @matmul_lhs_scalar(%x: !gnn.tensor<dense, f32>, %w: !gnn.tensor<dense, 4x2xf32>) {
  // expected-error@+1 {{'gnn.matmul' op left operand must have rank 1 or more}}
  %0 = gnn.matmul %x, %w : !gnn.tensor<dense, f32>, !gnn.tensor<dense, 4x2xf32> -> !gnn.tensor<dense, 2xf32>
  return
}

// -----

func.func @matmul_inner_dim(%x: !gnn.tensor<dense, ?x4xf32>, %w: !gnn.tensor<dense, 5x2xf32>) {
  // expected-error@+1 {{'gnn.matmul' op inner dimensions differ: [?, 4] x [5, 2]}}
  %0 = gnn.matmul %x, %w : !gnn.tensor<dense, ?x4xf32>, !gnn.tensor<dense, 5x2xf32> -> !gnn.tensor<dense, ?x2xf32>
  return
}

// -----

func.func @matmul_result(%x: !gnn.tensor<edge, 4xf32>, %w: !gnn.tensor<dense, 4x2xf32>) {
  // expected-error@+1 {{'gnn.matmul' op result must be edge [2]}}
  %0 = gnn.matmul %x, %w : !gnn.tensor<edge, 4xf32>, !gnn.tensor<dense, 4x2xf32> -> !gnn.tensor<dst, 2xf32>
  return
}

// -----

func.func @matmul_element_types(%x: !gnn.tensor<dense, ?x4xf32>, %w: !gnn.tensor<dense, 4x2xf64>) {
  // expected-error@+1 {{'gnn.matmul' op element types differ: 'f32' vs 'f64'}}
  %0 = gnn.matmul %x, %w : !gnn.tensor<dense, ?x4xf32>, !gnn.tensor<dense, 4x2xf64> -> !gnn.tensor<dense, ?x2xf32>
  return
}

// -----

func.func @matmul_integer(%x: !gnn.tensor<dense, ?x4xi32>, %w: !gnn.tensor<dense, 4x2xi32>) {
  // expected-error@+1 {{'gnn.matmul' op needs a floating-point tensor, got 'i32'}}
  %0 = gnn.matmul %x, %w : !gnn.tensor<dense, ?x4xi32>, !gnn.tensor<dense, 4x2xi32> -> !gnn.tensor<dense, ?x2xi32>
  return
}

// -----

func.func @reshape_count(%x: !gnn.tensor<dense, 5x64xf32>) {
  // expected-error@+1 {{'gnn.reshape' op element counts differ: [5, 64] -> [5, 8, 4]}}
  %0 = gnn.reshape %x : !gnn.tensor<dense, 5x64xf32> -> !gnn.tensor<dense, 5x8x4xf32>
  return
}

// -----

func.func @reshape_count_static(%x: !gnn.tensor<edge, 6xf32>) {
  // expected-error@+1 {{'gnn.reshape' op element counts differ: [6] -> [2, 2]}}
  %0 = gnn.reshape %x : !gnn.tensor<edge, 6xf32> -> !gnn.tensor<edge, 2x2xf32>
  return
}

// -----

func.func @reshape_domain(%x: !gnn.tensor<src, 4xf32>) {
  // expected-error@+1 {{'gnn.reshape' op reshape keeps the domain and element type}}
  %0 = gnn.reshape %x : !gnn.tensor<src, 4xf32> -> !gnn.tensor<dst, 2x2xf32>
  return
}

// -----

func.func @reshape_element_type(%x: !gnn.tensor<dense, 4xf32>) {
  // The element-type check reports twice: once with the types, once with
  // the rule.
  // expected-error@+2 {{'gnn.reshape' op element types differ: 'f32' vs 'f64'}}
  // expected-error@+1 {{'gnn.reshape' op reshape keeps the domain and element type}}
  %0 = gnn.reshape %x : !gnn.tensor<dense, 4xf32> -> !gnn.tensor<dense, 2x2xf64>
  return
}

// -----

func.func @reshape_dynamic_appears(%x: !gnn.tensor<dense, 4x4xf32>) {
  // expected-error@+1 {{'gnn.reshape' op a run-time size cannot appear or vanish}}
  %0 = gnn.reshape %x : !gnn.tensor<dense, 4x4xf32> -> !gnn.tensor<dense, ?x4xf32>
  return
}

// -----

func.func @reduce_axis_out_of_range(%x: !gnn.tensor<dense, ?x8x8xf32>) {
  // expected-error@+1 {{'gnn.reduce' op axis 3 is out of range}}
  %0 = gnn.reduce sum %x {axis = 3 : i64} : !gnn.tensor<dense, ?x8x8xf32> -> !gnn.tensor<dense, ?x8xf32>
  return
}

// -----

func.func @reduce_negative_axis(%x: !gnn.tensor<edge, 8x8xf32>) {
  // expected-error@+1 {{'gnn.reduce' op axis -1 is out of range}}
  %0 = gnn.reduce sum %x {axis = -1 : i64} : !gnn.tensor<edge, 8x8xf32> -> !gnn.tensor<edge, 8xf32>
  return
}

// -----

func.func @reduce_result_shape(%x: !gnn.tensor<dense, ?x8x8xf32>) {
  // expected-error@+1 {{'gnn.reduce' op result shape must be [?, 8, 1]}}
  %0 = gnn.reduce sum %x {axis = 2 : i64, keepdims} : !gnn.tensor<dense, ?x8x8xf32> -> !gnn.tensor<dense, ?x8xf32>
  return
}

// -----

func.func @reduce_all_result(%x: !gnn.tensor<dense, 4x8xf32>) {
  // expected-error@+1 {{'gnn.reduce' op result shape must be []}}
  %0 = gnn.reduce max %x : !gnn.tensor<dense, 4x8xf32> -> !gnn.tensor<dense, 1xf32>
  return
}

// -----

func.func @reduce_domain(%x: !gnn.tensor<edge, 8xf32>) {
  // expected-error@+1 {{'gnn.reduce' op reduce keeps the domain and element type}}
  %0 = gnn.reduce sum %x {axis = 0 : i64} : !gnn.tensor<edge, 8xf32> -> !gnn.tensor<dst, f32>
  return
}

// -----

func.func @reduce_mean_integer(%x: !gnn.tensor<dense, 8xi64>) {
  // expected-error@+1 {{'gnn.reduce' op needs a floating-point tensor, got 'i64'}}
  %0 = gnn.reduce mean %x {axis = 0 : i64} : !gnn.tensor<dense, 8xi64> -> !gnn.tensor<dense, i64>
  return
}

// -----

func.func @softmax_axis(%x: !gnn.tensor<dense, ?x7xf32>) {
  // expected-error@+1 {{'gnn.softmax' op axis 2 is out of range}}
  %0 = gnn.softmax %x {axis = 2 : i64} : !gnn.tensor<dense, ?x7xf32>
  return
}

// -----

func.func @softmax_integer(%x: !gnn.tensor<dense, ?x7xi32>) {
  // expected-error@+1 {{'gnn.softmax' op needs a floating-point tensor, got 'i32'}}
  %0 = gnn.softmax %x {axis = 1 : i64, log} : !gnn.tensor<dense, ?x7xi32>
  return
}

// -----

func.func @concat_nothing() {
  // expected-error@+1 {{'gnn.concat' op needs at least one operand}}
  %0 = "gnn.concat"() {axis = 0 : i64} : () -> !gnn.tensor<dense, 4xf32>
  return
}

// -----

func.func @concat_axis(%a: !gnn.tensor<dense, ?x8xf32>) {
  // expected-error@+1 {{'gnn.concat' op axis 2 is out of range}}
  %0 = gnn.concat %a, %a {axis = 2 : i64} : !gnn.tensor<dense, ?x8xf32>, !gnn.tensor<dense, ?x8xf32> -> !gnn.tensor<dense, ?x16xf32>
  return
}

// -----

func.func @concat_domains(%a: !gnn.tensor<src, 8xf32>, %b: !gnn.tensor<dst, 8xf32>) {
  // expected-error@+1 {{'gnn.concat' op operands must share domain, element type and rank}}
  %0 = gnn.concat %a, %b {axis = 0 : i64} : !gnn.tensor<src, 8xf32>, !gnn.tensor<dst, 8xf32> -> !gnn.tensor<src, 16xf32>
  return
}

// -----

func.func @concat_off_axis(%a: !gnn.tensor<dense, 4x8xf32>, %b: !gnn.tensor<dense, 4x9xf32>) {
  // expected-error@+1 {{'gnn.concat' op operands differ outside the axis}}
  %0 = gnn.concat %a, %b {axis = 0 : i64} : !gnn.tensor<dense, 4x8xf32>, !gnn.tensor<dense, 4x9xf32> -> !gnn.tensor<dense, 8x8xf32>
  return
}

// -----

func.func @concat_result(%a: !gnn.tensor<dense, 4x8xf32>) {
  // expected-error@+1 {{'gnn.concat' op result must be dense [4, 16] of 'f32'}}
  %0 = gnn.concat %a, %a {axis = 1 : i64} : !gnn.tensor<dense, 4x8xf32>, !gnn.tensor<dense, 4x8xf32> -> !gnn.tensor<dense, 4x8xf32>
  return
}

// -----

func.func @transpose_vector(%a: !gnn.tensor<dense, 8xf32>) {
  // expected-error@+1 {{'gnn.transpose' op needs a matrix}}
  %0 = gnn.transpose %a : !gnn.tensor<dense, 8xf32> -> !gnn.tensor<dense, 8xf32>
  return
}

// -----

func.func @transpose_result(%a: !gnn.tensor<dense, 4x8xf32>) {
  // expected-error@+1 {{'gnn.transpose' op result must be the transposed input}}
  %0 = gnn.transpose %a : !gnn.tensor<dense, 4x8xf32> -> !gnn.tensor<dense, 4x8xf32>
  return
}

// -----

func.func @dropout_p_one(%x: !gnn.tensor<dense, ?x16xf32>) {
  // expected-error@+1 {{'gnn.dropout' op probability must be in [0, 1), got 1}}
  %0 = gnn.dropout %x {p = 1.0 : f64, seed = 1 : i64} : !gnn.tensor<dense, ?x16xf32>
  return
}

// -----

func.func @dropout_p_negative(%x: !gnn.tensor<dense, ?x16xf32>) {
  // expected-error@+1 {{'gnn.dropout' op probability must be in [0, 1), got -5.000000e-01}}
  %0 = gnn.dropout %x {p = -0.5 : f64, seed = 1 : i64} : !gnn.tensor<dense, ?x16xf32>
  return
}

// -----

func.func @dropout_p_nan(%x: !gnn.tensor<dense, ?x16xf32>) {
  // expected-error@+1 {{'gnn.dropout' op probability must be in [0, 1), got nan}}
  %0 = gnn.dropout %x {p = 0x7FF8000000000000 : f64, seed = 1 : i64} : !gnn.tensor<dense, ?x16xf32>
  return
}

// -----

func.func @dropout_integer(%x: !gnn.tensor<dense, ?x16xi32>) {
  // expected-error@+1 {{'gnn.dropout' op needs a floating-point tensor, got 'i32'}}
  %0 = gnn.dropout %x {p = 0.5 : f64, seed = 1 : i64} : !gnn.tensor<dense, ?x16xi32>
  return
}

// -----

//===----------------------------------------------------------------------===//
// Ops the derivatives use
//===----------------------------------------------------------------------===//

func.func @scatter_select_sum(%g: !gnn.graph<graph>, %e: !gnn.tensor<edge, 4xf32>) {
  // expected-error@+1 {{'gnn.scatter_select' op selects for max or min only, got sum}}
  %0 = gnn.scatter_select sum %g, %e {by = #gnn<domain dst>} : !gnn.graph<graph>, !gnn.tensor<edge, 4xf32> -> !gnn.tensor<edge, 4xf32>
  return
}

// -----

func.func @scatter_select_by_edge(%g: !gnn.graph<graph>, %e: !gnn.tensor<edge, 4xf32>) {
  // expected-error@+1 {{'gnn.scatter_select' op 'by' must be src or dst}}
  %0 = gnn.scatter_select max %g, %e {by = #gnn<domain edge>} : !gnn.graph<graph>, !gnn.tensor<edge, 4xf32> -> !gnn.tensor<edge, 4xf32>
  return
}

// -----

func.func @scatter_select_vertex_input(%g: !gnn.graph<graph>, %e: !gnn.tensor<dst, 4xf32>) {
  // expected-error@+1 {{'gnn.scatter_select' op input must be in domain edge, got dst}}
  %0 = gnn.scatter_select max %g, %e {by = #gnn<domain dst>} : !gnn.graph<graph>, !gnn.tensor<dst, 4xf32> -> !gnn.tensor<dst, 4xf32>
  return
}

// -----

func.func @scatter_select_hetero(%g: !gnn.graph<hetero>, %e: !gnn.tensor<edge, 4xf32>) {
  // expected-error@+1 {{'gnn.scatter_select' op needs one relation of a hetero graph (gnn.relation), not the hetero graph}}
  %0 = gnn.scatter_select max %g, %e {by = #gnn<domain dst>} : !gnn.graph<hetero>, !gnn.tensor<edge, 4xf32> -> !gnn.tensor<edge, 4xf32>
  return
}

// -----

func.func @graph_sizes_not_batched(%g: !gnn.graph<graph>) {
  // expected-error@+1 {{'gnn.graph_sizes' op needs a batched graph}}
  %0 = gnn.graph_sizes %g : !gnn.graph<graph> -> !gnn.tensor<dense, ?xf32>
  return
}

// -----

func.func @graph_sizes_integer(%g: !gnn.graph<batched>) {
  // expected-error@+1 {{'gnn.graph_sizes' op result must be a dense rank-1 float tensor}}
  %0 = gnn.graph_sizes %g : !gnn.graph<batched> -> !gnn.tensor<dense, ?xi64>
  return
}

// -----

func.func @broadcast_graphs_rows(%g: !gnn.graph<batched>, %y: !gnn.tensor<dense, ?x4xf32>) {
  // expected-error@+1 {{'gnn.broadcast_graphs' op result must be the input with its graph axis replaced by a vertex axis}}
  %0 = gnn.broadcast_graphs %g, %y : !gnn.graph<batched>, !gnn.tensor<dense, ?x4xf32> -> !gnn.tensor<dense, ?x5xf32>
  return
}

// -----

func.func @broadcast_graphs_not_batched(%g: !gnn.graph<graph>, %y: !gnn.tensor<dense, ?x4xf32>) {
  // expected-error@+1 {{'gnn.broadcast_graphs' op needs a batched graph}}
  %0 = gnn.broadcast_graphs %g, %y : !gnn.graph<graph>, !gnn.tensor<dense, ?x4xf32> -> !gnn.tensor<dense, ?x4xf32>
  return
}

// -----

func.func @readout_select_mean(%g: !gnn.graph<batched>, %x: !gnn.tensor<dense, ?x4xf32>) {
  // expected-error@+1 {{'gnn.readout_select' op selects for max or min only, got mean}}
  %0 = gnn.readout_select mean %g, %x : !gnn.graph<batched>, !gnn.tensor<dense, ?x4xf32> -> !gnn.tensor<dense, ?x4xf32>
  return
}

// -----

func.func @readout_select_type(%g: !gnn.graph<batched>, %x: !gnn.tensor<dense, ?x4xf32>) {
  // expected-error@+1 {{'gnn.readout_select' op result type must equal the input type}}
  %0 = gnn.readout_select max %g, %x : !gnn.graph<batched>, !gnn.tensor<dense, ?x4xf32> -> !gnn.tensor<dense, ?x4xf64>
  return
}

// -----

func.func @reduce_select_axis(%x: !gnn.tensor<dense, ?x4xf32>) {
  // expected-error@+1 {{'gnn.reduce_select' op axis 2 is out of range}}
  %0 = gnn.reduce_select max %x {axis = 2 : i64} : !gnn.tensor<dense, ?x4xf32>
  return
}

// -----

func.func @reduce_select_sum(%x: !gnn.tensor<dense, ?x4xf32>) {
  // expected-error@+1 {{'gnn.reduce_select' op selects for max or min only, got sum}}
  %0 = gnn.reduce_select sum %x : !gnn.tensor<dense, ?x4xf32>
  return
}

// -----

func.func @slice_out_of_bounds(%x: !gnn.tensor<dense, ?x4xf32>) {
  // expected-error@+1 {{'gnn.slice' op elements 3 to 4 are outside axis 1 of size 4}}
  %0 = gnn.slice %x {axis = 1 : i64, start = 3 : i64, size = 2 : i64} : !gnn.tensor<dense, ?x4xf32> -> !gnn.tensor<dense, ?x2xf32>
  return
}

// -----

func.func @slice_result_shape(%x: !gnn.tensor<dense, ?x4xf32>) {
  // expected-error@+1 {{'gnn.slice' op result shape must be [?, 2]}}
  %0 = gnn.slice %x {axis = 1 : i64, start = 1 : i64, size = 2 : i64} : !gnn.tensor<dense, ?x4xf32> -> !gnn.tensor<dense, ?x3xf32>
  return
}

// -----

func.func @slice_empty(%x: !gnn.tensor<dense, ?x4xf32>) {
  // expected-error@+1 {{'gnn.slice' op needs start >= 0 and size >= 1, got start 1 and size 0}}
  %0 = gnn.slice %x {axis = 1 : i64, start = 1 : i64, size = 0 : i64} : !gnn.tensor<dense, ?x4xf32> -> !gnn.tensor<dense, ?x4xf32>
  return
}

// -----

func.func @slice_axis(%x: !gnn.tensor<edge, 4xf32>) {
  // expected-error@+1 {{'gnn.slice' op axis 1 is out of range}}
  %0 = gnn.slice %x {axis = 1 : i64, start = 0 : i64, size = 1 : i64} : !gnn.tensor<edge, 4xf32> -> !gnn.tensor<edge, 4xf32>
  return
}

// -----

func.func @broadcast_like_shrinks(%x: !gnn.tensor<dense, ?x4xf32>, %l: !gnn.tensor<dense, ?x2xf32>) {
  // expected-error@+1 {{'gnn.broadcast_like' op shape [?, 4] does not broadcast to [?, 2]}}
  %0 = gnn.broadcast_like %x, %l : !gnn.tensor<dense, ?x4xf32>, !gnn.tensor<dense, ?x2xf32>
  return
}

// -----

func.func @broadcast_like_domains(%x: !gnn.tensor<src, 4xf32>, %l: !gnn.tensor<dst, 4xf32>) {
  // expected-error@+1 {{'gnn.broadcast_like' op cannot broadcast a src tensor to a dst tensor}}
  %0 = gnn.broadcast_like %x, %l : !gnn.tensor<src, 4xf32>, !gnn.tensor<dst, 4xf32>
  return
}

// -----

func.func @erf_integer(%x: !gnn.tensor<dense, 4xi32>) {
  // expected-error@+1 {{'gnn.unary' op needs a floating-point tensor, got 'i32'}}
  %0 = gnn.unary erf %x : !gnn.tensor<dense, 4xi32>
  return
}

// -----

func.func @dst_rows_domain(%g: !gnn.graph<block>, %x: !gnn.tensor<src, 4xf32>) {
  // expected-error@+1 {{'gnn.dst_rows' op needs dense tensors}}
  %0 = gnn.dst_rows %g, %x : !gnn.graph<block>, !gnn.tensor<src, 4xf32> -> !gnn.tensor<dense, ?x4xf32>
  return
}

// -----

func.func @dst_rows_static_rows(%g: !gnn.graph<block>, %x: !gnn.tensor<dense, 3x4xf32>) {
  // expected-error@+1 {{'gnn.dst_rows' op needs a first axis of vertices ('?')}}
  %0 = gnn.dst_rows %g, %x : !gnn.graph<block>, !gnn.tensor<dense, 3x4xf32> -> !gnn.tensor<dense, ?x4xf32>
  return
}

// -----

func.func @pad_dst_rows_row_shape(%g: !gnn.graph<block>, %x: !gnn.tensor<dense, ?x4xf32>) {
  // expected-error@+1 {{'gnn.pad_dst_rows' op keeps every axis but the first}}
  %0 = gnn.pad_dst_rows %g, %x : !gnn.graph<block>, !gnn.tensor<dense, ?x4xf32> -> !gnn.tensor<dense, ?x5xf32>
  return
}

// -----

func.func @dst_rows_rank(%g: !gnn.graph<block>, %x: !gnn.tensor<dense, f32>) {
  // expected-error@+1 {{'gnn.dst_rows' op needs tensors of the same rank, at least 1}}
  %0 = gnn.dst_rows %g, %x : !gnn.graph<block>, !gnn.tensor<dense, f32> -> !gnn.tensor<dense, f32>
  return
}
