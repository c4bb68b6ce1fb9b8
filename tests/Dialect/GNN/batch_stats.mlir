// The verifiers of gnn.training and gnn.update_batch_stats.
// RUN: gnn-opt %s -split-input-file -verify-diagnostics

func.func @not_a_buffer(%x: !gnn.tensor<dense, ?x4xf32>, %m: !gnn.tensor<dense, 4xf32> {gnn.param = "m"}, %v: !gnn.tensor<dense, 4xf32> {gnn.buffer, gnn.param = "v"}) {
  // expected-error @+1 {{running statistics must be buffer arguments of the function (gnn.buffer)}}
  gnn.update_batch_stats %m, %v, %x {momentum = 0.1 : f64} : !gnn.tensor<dense, 4xf32>, !gnn.tensor<dense, 4xf32>, !gnn.tensor<dense, ?x4xf32>
  return
}

// -----

func.func @shape(%x: !gnn.tensor<dense, ?x4xf32>, %m: !gnn.tensor<dense, 3xf32> {gnn.buffer, gnn.param = "m"}, %v: !gnn.tensor<dense, 4xf32> {gnn.buffer, gnn.param = "v"}) {
  // expected-error @+1 {{running statistics must be dense [4] tensors of the input's element type}}
  gnn.update_batch_stats %m, %v, %x {momentum = 0.1 : f64} : !gnn.tensor<dense, 3xf32>, !gnn.tensor<dense, 4xf32>, !gnn.tensor<dense, ?x4xf32>
  return
}

// -----

func.func @rows(%x: !gnn.tensor<dst, 4xf32>, %m: !gnn.tensor<dense, 4xf32> {gnn.buffer, gnn.param = "m"}, %v: !gnn.tensor<dense, 4xf32> {gnn.buffer, gnn.param = "v"}) {
  // expected-error @+1 {{input must be a dense [rows, features] tensor}}
  gnn.update_batch_stats %m, %v, %x {momentum = 0.1 : f64} : !gnn.tensor<dense, 4xf32>, !gnn.tensor<dense, 4xf32>, !gnn.tensor<dst, 4xf32>
  return
}

// -----

func.func @momentum(%x: !gnn.tensor<dense, ?x4xf32>, %m: !gnn.tensor<dense, 4xf32> {gnn.buffer, gnn.param = "m"}, %v: !gnn.tensor<dense, 4xf32> {gnn.buffer, gnn.param = "v"}) {
  // expected-error @+1 {{momentum must be in [0, 1], got -5.000000e-01}}
  gnn.update_batch_stats %m, %v, %x {momentum = -0.5 : f64} : !gnn.tensor<dense, 4xf32>, !gnn.tensor<dense, 4xf32>, !gnn.tensor<dense, ?x4xf32>
  return
}

// -----

func.func @flag() -> !gnn.tensor<dense, 2xf32> {
  // expected-error @+1 {{result must be a dense scalar}}
  %t = gnn.training : !gnn.tensor<dense, 2xf32>
  return %t : !gnn.tensor<dense, 2xf32>
}
