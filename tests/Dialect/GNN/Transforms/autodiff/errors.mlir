// What gnn-autodiff cannot differentiate, and says so.
//
// RUN: gnn-opt %s --split-input-file --gnn-autodiff --verify-diagnostics

// A caller of a fused function: the callee has no backward.
func.func @fused(%g: !gnn.graph<graph>, %h: !gnn.tensor<dense, ?x2xf32>) -> !gnn.tensor<dense, ?x2xf32> {
  %hs = gnn.attach %g, %h : !gnn.graph<graph>, !gnn.tensor<dense, ?x2xf32> -> !gnn.tensor<src, 2xf32>
  %s = gnn.aggregate %g(%hs : !gnn.tensor<src, 2xf32>) by dst reductions [{kind = "sum"}] : !gnn.graph<graph> -> !gnn.tensor<dst, 2xf32> {
  ^bb0(%r: !gnn.tensor<dense, 2xf32>):
    gnn.yield %r : !gnn.tensor<dense, 2xf32>
  }
  %o = gnn.collect %g, %s : !gnn.graph<graph>, !gnn.tensor<dst, 2xf32> -> !gnn.tensor<dense, ?x2xf32>
  return %o : !gnn.tensor<dense, ?x2xf32>
}

func.func @caller(%g: !gnn.graph<graph>, %h: !gnn.tensor<dense, ?x2xf32>) -> !gnn.tensor<dense, ?x2xf32> {
  // expected-error@+1 {{'func.call' op gnn-autodiff: @fused has no backward function (it was fused, or it could not be differentiated); run gnn-autodiff before gnn-fuse}}
  %o = call @fused(%g, %h) : (!gnn.graph<graph>, !gnn.tensor<dense, ?x2xf32>) -> !gnn.tensor<dense, ?x2xf32>
  return %o : !gnn.tensor<dense, ?x2xf32>
}

// -----

// Concatenation along a run-time-sized axis: the slices of the derivative
// would need run-time offsets.
func.func @concat_vertices(%a: !gnn.tensor<dense, ?x2xf32>, %b: !gnn.tensor<dense, ?x2xf32>) -> !gnn.tensor<dense, ?x2xf32> {
  // expected-error@+1 {{'gnn.concat' op gnn-autodiff: no derivative for a concatenation along an axis of run-time size}}
  %c = gnn.concat %a, %b {axis = 0 : i64} : !gnn.tensor<dense, ?x2xf32>, !gnn.tensor<dense, ?x2xf32> -> !gnn.tensor<dense, ?x2xf32>
  return %c : !gnn.tensor<dense, ?x2xf32>
}

// -----

// A symbol named like the backward function that is not one.
// expected-error@+1 {{'func.func' op gnn-autodiff: @f.backward exists but is not marked gnn.backward_of}}
func.func @f(%x: !gnn.tensor<dense, 2xf32>) -> !gnn.tensor<dense, 2xf32> {
  return %x : !gnn.tensor<dense, 2xf32>
}

func.func @f.backward(%x: !gnn.tensor<dense, 2xf32>) -> !gnn.tensor<dense, 2xf32> {
  return %x : !gnn.tensor<dense, 2xf32>
}

// -----

// Two results.
// expected-error@+1 {{'func.func' op gnn-autodiff: needs one block and one tensor result}}
func.func @pair(%x: !gnn.tensor<dense, 2xf32>) -> (!gnn.tensor<dense, 2xf32>, !gnn.tensor<dense, 2xf32>) {
  return %x, %x : !gnn.tensor<dense, 2xf32>, !gnn.tensor<dense, 2xf32>
}

// -----

// Differentiating through a backward function (second order) is not
// supported: its call has several results.
func.func @g(%x: !gnn.tensor<dense, 2xf32> {gnn.name = "x"}) -> !gnn.tensor<dense, 2xf32> {
  %y = gnn.binary mul %x, %x : !gnn.tensor<dense, 2xf32>, !gnn.tensor<dense, 2xf32> -> !gnn.tensor<dense, 2xf32>
  return %y : !gnn.tensor<dense, 2xf32>
}

func.func @g.backward(%x: !gnn.tensor<dense, 2xf32>, %dy: !gnn.tensor<dense, 2xf32>) -> (!gnn.tensor<dense, 2xf32>, !gnn.tensor<dense, 2xf32>) attributes {gnn.backward_of = @g} {
  return %dy, %x : !gnn.tensor<dense, 2xf32>, !gnn.tensor<dense, 2xf32>
}

func.func @second(%x: !gnn.tensor<dense, 2xf32> {gnn.name = "x"}) -> !gnn.tensor<dense, 2xf32> {
  // expected-error@+1 {{'func.call' op gnn-autodiff: no derivative for an op with 2 results}}
  %d:2 = call @g.backward(%x, %x) : (!gnn.tensor<dense, 2xf32>, !gnn.tensor<dense, 2xf32>) -> (!gnn.tensor<dense, 2xf32>, !gnn.tensor<dense, 2xf32>)
  return %d#0 : !gnn.tensor<dense, 2xf32>
}
