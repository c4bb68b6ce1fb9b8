// One case per verifier rule of the gnnk dialect, each with the diagnostic
// it must produce.
//
// RUN: gnn-opt %s --split-input-file --verify-diagnostics

//===----------------------------------------------------------------------===//
// Parsing
//===----------------------------------------------------------------------===//

func.func @bad_side(%g: !gnnk.graph) {
  // expected-error@+1 {{expected 'dst' or 'src'}}
  gnnk.for_vertices %v in %g by mid {
  }
  return
}

// -----

//===----------------------------------------------------------------------===//
// gnnk.for_vertices
//===----------------------------------------------------------------------===//

func.func @vertex_loop_two_args(%g: !gnnk.graph) {
  // expected-error@+1 {{'gnnk.for_vertices' op body must take 1 index argument (the vertex)}}
  "gnnk.for_vertices"(%g) <{by = #gnnk<side dst>}> ({
  ^bb0(%a: index, %b: index):
    "gnnk.yield"() : () -> ()
  }) : (!gnnk.graph) -> ()
  return
}

// -----

func.func @vertex_loop_f32_arg(%g: !gnnk.graph) {
  // expected-error@+1 {{'gnnk.for_vertices' op body must take 1 index argument (the vertex)}}
  "gnnk.for_vertices"(%g) <{by = #gnnk<side dst>}> ({
  ^bb0(%a: f32):
    "gnnk.yield"() : () -> ()
  }) : (!gnnk.graph) -> ()
  return
}

// -----

func.func @nested_vertex_loops(%g: !gnnk.graph) {
  gnnk.for_vertices %v in %g by dst {
    // expected-error@+1 {{'gnnk.for_vertices' op cannot be nested in another gnnk.for_vertices}}
    gnnk.for_vertices %w in %g by src {
    }
  }
  return
}

// -----

//===----------------------------------------------------------------------===//
// gnnk.for_edges
//===----------------------------------------------------------------------===//

func.func @edges_outside_vertices(%g: !gnnk.graph, %v: index) {
  // expected-error@+1 {{'gnnk.for_edges' op must be inside gnnk.for_vertices}}
  gnnk.for_edges %e, %u in %g of %v by dst {
  }
  return
}

// -----

func.func @edges_of_another_vertex(%g: !gnnk.graph, %w: index) {
  gnnk.for_vertices %v in %g by dst {
    // expected-error@+1 {{'gnnk.for_edges' op must run over the edges of the vertex of the enclosing gnnk.for_vertices}}
    gnnk.for_edges %e, %u in %g of %w by dst {
    }
  }
  return
}

// -----

func.func @edges_other_side(%g: !gnnk.graph) {
  gnnk.for_vertices %v in %g by dst {
    // expected-error@+1 {{'gnnk.for_edges' op must use the graph and side of the enclosing gnnk.for_vertices}}
    gnnk.for_edges %e, %u in %g of %v by src {
    }
  }
  return
}

// -----

func.func @edges_other_graph(%g: !gnnk.graph, %h: !gnnk.graph) {
  gnnk.for_vertices %v in %g by dst {
    // expected-error@+1 {{'gnnk.for_edges' op must use the graph and side of the enclosing gnnk.for_vertices}}
    gnnk.for_edges %e, %u in %h of %v by dst {
    }
  }
  return
}

// -----

func.func @edges_one_arg(%g: !gnnk.graph) {
  gnnk.for_vertices %v in %g by dst {
    // expected-error@+1 {{'gnnk.for_edges' op body must take 2 index arguments (the edge, the neighbour)}}
    "gnnk.for_edges"(%g, %v) <{by = #gnnk<side dst>}> ({
    ^bb0(%e: index):
      "gnnk.yield"() : () -> ()
    }) : (!gnnk.graph, index) -> ()
  }
  return
}

// -----

func.func @nested_edge_loops(%g: !gnnk.graph) {
  gnnk.for_vertices %v in %g by dst {
    gnnk.for_edges %e, %u in %g of %v by dst {
      // expected-error@+1 {{'gnnk.for_edges' op cannot be nested in another gnnk.for_edges}}
      gnnk.for_edges %e2, %u2 in %g of %v by dst {
      }
    }
  }
  return
}

// -----

func.func @alloca_in_edge_loop(%g: !gnnk.graph) {
  gnnk.for_vertices %v in %g by dst {
    gnnk.for_edges %e, %u in %g of %v by dst {
      // expected-error@+1 {{'memref.alloca' op cannot allocate inside gnnk.for_edges: scratch buffers belong to the enclosing gnnk.for_vertices}}
      %a = memref.alloca() : memref<8xf32>
    }
  }
  return
}

// -----

func.func @yield_outside_loop() {
  // expected-error@+1 {{'gnnk.yield' op expects parent op to be one of 'gnnk.for_vertices, gnnk.for_edges'}}
  gnnk.yield
}

// -----

//===----------------------------------------------------------------------===//
// gnnk.dropout_keep
//===----------------------------------------------------------------------===//

func.func @dropout_p_one(%seed: i64, %i: index) -> f32 {
  // expected-error@+1 {{'gnnk.dropout_keep' op probability must be in [0, 1), got 1.000000e+00}}
  %k = gnnk.dropout_keep %seed, %i, 1.000000e+00 : f32
  return %k : f32
}

// -----

func.func @dropout_negative_p(%seed: i64, %i: index) -> f32 {
  // expected-error@+1 {{'gnnk.dropout_keep' op probability must be in [0, 1), got -5.000000e-01}}
  %k = gnnk.dropout_keep %seed, %i, -5.000000e-01 : f32
  return %k : f32
}

// -----

func.func @dropout_int_result(%seed: i64, %i: index) -> i32 {
  // expected-error@+1 {{'gnnk.dropout_keep' op result #0 must be floating-point, but got 'i32'}}
  %k = "gnnk.dropout_keep"(%seed, %i) <{p = 5.000000e-01 : f64}> : (i64, index) -> i32
  return %k : i32
}

// -----

//===----------------------------------------------------------------------===//
// The gnnk.kernel attribute
//===----------------------------------------------------------------------===//

// expected-error@+1 {{'gnnk.kernel' marks a func.func, not builtin.module}}
module attributes {gnnk.kernel = {num_outputs = 1 : i64}} {
}

// -----

// expected-error@+1 {{'gnnk.kernel' must be a dictionary {num_outputs = N}}}
func.func private @not_a_dict(!gnnk.graph, memref<?xf32>) attributes {gnnk.kernel}

// -----

// expected-error@+1 {{'gnnk.kernel' must be a dictionary {num_outputs = N}}}
func.func private @extra_entry(!gnnk.graph, memref<?xf32>)
    attributes {gnnk.kernel = {num_outputs = 1 : i64, by = "dst"}}

// -----

// expected-error@+1 {{a kernel returns nothing: its outputs are its last memref arguments}}
func.func private @returns(!gnnk.graph, memref<?xf32>) -> f32
    attributes {gnnk.kernel = {num_outputs = 1 : i64}}

// -----

// expected-error@+1 {{the first argument of a kernel must be !gnnk.graph}}
func.func private @no_graph(memref<?xf32>, memref<?xf32>)
    attributes {gnnk.kernel = {num_outputs = 1 : i64}}

// -----

// expected-error@+1 {{kernel argument 2 must be a memref, got 'f32'}}
func.func private @scalar_arg(!gnnk.graph, memref<?xf32>, f32)
    attributes {gnnk.kernel = {num_outputs = 1 : i64}}

// -----

// expected-error@+1 {{a kernel with 2 memref arguments needs between 1 and 2 outputs, got 3}}
func.func private @too_many_outputs(!gnnk.graph, memref<?xf32>, memref<?xf32>)
    attributes {gnnk.kernel = {num_outputs = 3 : i64}}

// -----

// expected-error@+1 {{a kernel with 1 memref arguments needs between 1 and 1 outputs, got 0}}
func.func private @no_outputs(!gnnk.graph, memref<?xf32>)
    attributes {gnnk.kernel = {num_outputs = 0 : i64}}

// -----

// expected-error@+1 {{unknown gnnk attribute 'gnnk.kernal'}}
func.func private @typo(!gnnk.graph, memref<?xf32>)
    attributes {gnnk.kernal = {num_outputs = 1 : i64}}

// -----

//===----------------------------------------------------------------------===//
// gnnk.launch
//===----------------------------------------------------------------------===//

func.func @launch_unknown(%g: !gnn.graph<graph>, %x: !gnn.tensor<src, 4xf32>) {
  // expected-error@+1 {{'gnnk.launch' op '@nowhere' does not name a function}}
  %r = gnnk.launch @nowhere(%g, %x) : (!gnn.graph<graph>, !gnn.tensor<src, 4xf32>) -> !gnn.tensor<dst, 4xf32>
  return
}

// -----

func.func private @plain(!gnnk.graph, memref<?x4xf32>, memref<?x4xf32>)

func.func @launch_not_a_kernel(%g: !gnn.graph<graph>, %x: !gnn.tensor<src, 4xf32>) {
  // expected-error@+1 {{'gnnk.launch' op '@plain' is not a gnnk.kernel}}
  %r = gnnk.launch @plain(%g, %x) : (!gnn.graph<graph>, !gnn.tensor<src, 4xf32>) -> !gnn.tensor<dst, 4xf32>
  return
}

// -----

func.func private @k(!gnnk.graph, memref<?x4xf32>, memref<?x4xf32>)
    attributes {gnnk.kernel = {num_outputs = 1 : i64}}

func.func @launch_arity(%g: !gnn.graph<graph>, %x: !gnn.tensor<src, 4xf32>) {
  // expected-error@+1 {{'gnnk.launch' op '@k' takes 2 operands and has 1 outputs; the launch has 3 operands and 1 results}}
  %r = gnnk.launch @k(%g, %x, %x) : (!gnn.graph<graph>, !gnn.tensor<src, 4xf32>, !gnn.tensor<src, 4xf32>) -> !gnn.tensor<dst, 4xf32>
  return
}

// -----

func.func private @k(!gnnk.graph, memref<?x4xf32>, memref<?x4xf32>)
    attributes {gnnk.kernel = {num_outputs = 1 : i64}}

func.func @launch_row_shape(%g: !gnn.graph<graph>, %x: !gnn.tensor<src, 8xf32>) {
  // expected-error@+1 {{'gnnk.launch' op operand 1 of type '!gnn.tensor<src, 8xf32>' does not match kernel argument 'memref<?x4xf32>'}}
  %r = gnnk.launch @k(%g, %x) : (!gnn.graph<graph>, !gnn.tensor<src, 8xf32>) -> !gnn.tensor<dst, 4xf32>
  return
}

// -----

func.func private @k(!gnnk.graph, memref<4xf32>, memref<?x4xf32>)
    attributes {gnnk.kernel = {num_outputs = 1 : i64}}

func.func @launch_dense_vs_rows(%g: !gnn.graph<graph>, %x: !gnn.tensor<src, 4xf32>) {
  // expected-error@+1 {{'gnnk.launch' op operand 1 of type '!gnn.tensor<src, 4xf32>' does not match kernel argument 'memref<4xf32>'}}
  %r = gnnk.launch @k(%g, %x) : (!gnn.graph<graph>, !gnn.tensor<src, 4xf32>) -> !gnn.tensor<dst, 4xf32>
  return
}

// -----

func.func private @k(!gnnk.graph, memref<?x4xf32>, memref<?x4xf32>)
    attributes {gnnk.kernel = {num_outputs = 1 : i64}}

func.func @launch_result_type(%g: !gnn.graph<graph>, %x: !gnn.tensor<src, 4xf32>) {
  // expected-error@+1 {{'gnnk.launch' op result 0 of type '!gnn.tensor<dst, 4xf64>' does not match kernel output 'memref<?x4xf32>'}}
  %r = gnnk.launch @k(%g, %x) : (!gnn.graph<graph>, !gnn.tensor<src, 4xf32>) -> !gnn.tensor<dst, 4xf64>
  return
}

// -----

func.func @launch_no_graph(%x: !gnn.tensor<src, 4xf32>) {
  // expected-error@+1 {{'gnnk.launch' op the first operand must be the graph}}
  %r = gnnk.launch @k(%x) : (!gnn.tensor<src, 4xf32>) -> !gnn.tensor<dst, 4xf32>
  return
}

// -----

func.func @launch_hetero(%g: !gnn.graph<hetero>, %x: !gnn.tensor<src, 4xf32>) {
  // expected-error@+1 {{'gnnk.launch' op needs one edge set: launch on a gnn.relation of a heterogeneous graph}}
  %r = gnnk.launch @k(%g, %x) : (!gnn.graph<hetero>, !gnn.tensor<src, 4xf32>) -> !gnn.tensor<dst, 4xf32>
  return
}

// -----

func.func @launch_scalar_operand(%g: !gnn.graph<graph>, %s: f32) {
  // expected-error@+1 {{'gnnk.launch' op operand 1 must be a gnn tensor or a memref, got 'f32'}}
  %r = gnnk.launch @k(%g, %s) : (!gnn.graph<graph>, f32) -> !gnn.tensor<dst, 4xf32>
  return
}

// -----

func.func @launch_no_results(%g: !gnn.graph<graph>) {
  // expected-error@+1 {{'gnnk.launch' op must have at least one result}}
  gnnk.launch @k(%g) : (!gnn.graph<graph>) -> ()
  return
}

// -----

func.func @launch_graph_result(%g: !gnn.graph<graph>) {
  // expected-error@+1 {{'gnnk.launch' op result 0 must be a gnn tensor or a memref, got '!gnnk.graph'}}
  %r = gnnk.launch @k(%g) : (!gnn.graph<graph>) -> !gnnk.graph
  return
}

// -----

//===----------------------------------------------------------------------===//
// gnnk.fold
//===----------------------------------------------------------------------===//

func.func @fold_unknown_kind(%g: !gnnk.graph) {
  gnnk.for_vertices %v in %g by dst {
    // expected-error@+1 {{'gnnk.fold' must be {kind = "sum" | "max" | "min" | "first" | "online_max" | "online_sum" | "online_acc", reduction = N} on a memref.alloca}}
    %a = memref.alloca() {gnnk.fold = {kind = "product", reduction = 0 : i64}} : memref<8xf32>
  }
  return
}

// -----

func.func @fold_on_a_function() attributes {gnnk.fold = {kind = "sum", reduction = 0 : i64}} {
  // expected-error@-1 {{'gnnk.fold' must be {kind = "sum" | "max" | "min" | "first" | "online_max" | "online_sum" | "online_acc", reduction = N} on a memref.alloca}}
  return
}
