// What gnn-lower-to-kernels rejects, with the diagnostic it gives.
//
// RUN: gnn-opt %s --gnn-lower-to-kernels --split-input-file --verify-diagnostics

// Kernels compute in floating point: integer rows are not lowered.
func.func @integer_rows(%g: !gnn.graph<graph>, %x: !gnn.tensor<src, 4xi64>) -> !gnn.tensor<dst, 4xi64> {
  // expected-error@+1 {{'gnn.aggregate' op cannot be lowered to a kernel: only float tensors are supported, got '!gnn.tensor<src, 4xi64>'}}
  %r = gnn.aggregate %g(%x : !gnn.tensor<src, 4xi64>) by dst reductions [{kind = "sum"}] : !gnn.graph<graph> -> !gnn.tensor<dst, 4xi64> {
  ^bb0(%a: !gnn.tensor<dense, 4xi64>):
    gnn.yield %a : !gnn.tensor<dense, 4xi64>
  }
  return %r : !gnn.tensor<dst, 4xi64>
}

// -----

func.func @integer_body(%g: !gnn.graph<graph>, %x: !gnn.tensor<src, 4xf32>) -> !gnn.tensor<dst, 4xf32> {
  %r = gnn.aggregate %g(%x : !gnn.tensor<src, 4xf32>) by dst reductions [{kind = "sum"}] : !gnn.graph<graph> -> !gnn.tensor<dst, 4xf32> {
  ^bb0(%a: !gnn.tensor<dense, 4xf32>):
    // expected-error@+1 {{'gnn.constant' op cannot be lowered to a kernel: only float tensors are supported, got '!gnn.tensor<dense, i64>'}}
    %c = gnn.constant 2.0 : !gnn.tensor<dense, i64>
    gnn.yield %a : !gnn.tensor<dense, 4xf32>
  }
  return %r : !gnn.tensor<dst, 4xf32>
}
