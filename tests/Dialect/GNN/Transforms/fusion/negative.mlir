// Where gnn-fuse must not fuse, or fuses only part of a chain. Each case is
// hand-written gnn IR; the comment above it says what must stay.
//
// RUN: gnn-opt %s --split-input-file --gnn-fuse | FileCheck %s
// The full pipeline (canonicalize, cse around the pass) agrees.
// RUN: gnn-opt %s --split-input-file --canonicalize --cse --gnn-fuse --canonicalize --cse | FileCheck %s --check-prefix=PIPE

// An edge softmax that feeds a max is not a softmax-weighted sum: the softmax
// stays materialised (it needs every edge of the neighbourhood first) and
// enters the max aggregation as an edge input; the gather of the messages
// still moves into the body.
// CHECK-LABEL: func.func @softmax_then_max
// CHECK-SAME: (%[[G:[^:]*]]: !gnn.graph<graph>
// CHECK: %[[LS:.*]] = gnn.attach %[[G]]
// CHECK-NEXT: %[[LE:.*]] = gnn.gather %[[G]], %[[LS]] : <graph>, <src, 2x1xf32> -> <edge, 2x1xf32>
// CHECK-NEXT: %[[A:.*]] = gnn.edge_softmax %[[G]], %[[LE]] {by = #gnn<domain dst>}
// CHECK-NEXT: %[[HS:.*]] = gnn.attach %[[G]]
// CHECK-NOT: gnn.gather
// CHECK: %[[R:.*]] = gnn.aggregate %[[G]](%[[A]], %[[HS]] : !gnn.tensor<edge, 2x1xf32>, !gnn.tensor<src, 2x3xf32>) by dst reductions [{kind = "max"}] : <graph> -> !gnn.tensor<dst, 2x3xf32> {
// CHECK-NEXT: ^bb0(%[[BA:.*]]: !gnn.tensor<dense, 2x1xf32>, %[[BH:.*]]: !gnn.tensor<dense, 2x3xf32>):
// CHECK-NEXT: %[[P:.*]] = gnn.binary mul %[[BA]], %[[BH]] : <dense, 2x1xf32>, <dense, 2x3xf32> -> <dense, 2x3xf32>
// CHECK-NEXT: gnn.yield %[[P]] : !gnn.tensor<dense, 2x3xf32>
// CHECK-NEXT: }
// CHECK-NOT: gnn.scatter
// CHECK: gnn.collect %[[G]], %[[R]]
// PIPE-LABEL: func.func @softmax_then_max
// PIPE: gnn.edge_softmax
// PIPE: gnn.aggregate {{.*}} reductions [{kind = "max"}]
// PIPE-NOT: kind = "softmax_sum"
func.func @softmax_then_max(%g: !gnn.graph<graph>, %l: !gnn.tensor<dense, ?x2x1xf32>, %h: !gnn.tensor<dense, ?x2x3xf32>) -> !gnn.tensor<dense, ?x2x3xf32> {
  %ls = gnn.attach %g, %l : !gnn.graph<graph>, !gnn.tensor<dense, ?x2x1xf32> -> !gnn.tensor<src, 2x1xf32>
  %le = gnn.gather %g, %ls : !gnn.graph<graph>, !gnn.tensor<src, 2x1xf32> -> !gnn.tensor<edge, 2x1xf32>
  %a = gnn.edge_softmax %g, %le {by = #gnn<domain dst>} : !gnn.graph<graph>, !gnn.tensor<edge, 2x1xf32> -> !gnn.tensor<edge, 2x1xf32>
  %hs = gnn.attach %g, %h : !gnn.graph<graph>, !gnn.tensor<dense, ?x2x3xf32> -> !gnn.tensor<src, 2x3xf32>
  %he = gnn.gather %g, %hs : !gnn.graph<graph>, !gnn.tensor<src, 2x3xf32> -> !gnn.tensor<edge, 2x3xf32>
  %m = gnn.binary mul %a, %he : !gnn.tensor<edge, 2x1xf32>, !gnn.tensor<edge, 2x3xf32> -> !gnn.tensor<edge, 2x3xf32>
  %s = gnn.scatter max %g, %m : !gnn.graph<graph>, !gnn.tensor<edge, 2x3xf32> -> !gnn.tensor<dst, 2x3xf32>
  %r = gnn.collect %g, %s : !gnn.graph<graph>, !gnn.tensor<dst, 2x3xf32> -> !gnn.tensor<dense, ?x2x3xf32>
  return %r : !gnn.tensor<dense, ?x2x3xf32>
}

// -----

// The same with a mean: only a weighted *sum* becomes softmax_sum.
// CHECK-LABEL: func.func @softmax_then_mean
// CHECK: %[[A:.*]] = gnn.edge_softmax
// CHECK: gnn.aggregate %{{.*}}(%[[A]], %{{.*}} : !gnn.tensor<edge, 2x1xf32>, !gnn.tensor<src, 2x3xf32>) by dst reductions [{kind = "mean"}]
// CHECK-NOT: kind = "softmax_sum"
// CHECK-NOT: gnn.scatter
func.func @softmax_then_mean(%g: !gnn.graph<graph>, %l: !gnn.tensor<dense, ?x2x1xf32>, %h: !gnn.tensor<dense, ?x2x3xf32>) -> !gnn.tensor<dense, ?x2x3xf32> {
  %ls = gnn.attach %g, %l : !gnn.graph<graph>, !gnn.tensor<dense, ?x2x1xf32> -> !gnn.tensor<src, 2x1xf32>
  %le = gnn.gather %g, %ls : !gnn.graph<graph>, !gnn.tensor<src, 2x1xf32> -> !gnn.tensor<edge, 2x1xf32>
  %a = gnn.edge_softmax %g, %le {by = #gnn<domain dst>} : !gnn.graph<graph>, !gnn.tensor<edge, 2x1xf32> -> !gnn.tensor<edge, 2x1xf32>
  %hs = gnn.attach %g, %h : !gnn.graph<graph>, !gnn.tensor<dense, ?x2x3xf32> -> !gnn.tensor<src, 2x3xf32>
  %he = gnn.gather %g, %hs : !gnn.graph<graph>, !gnn.tensor<src, 2x3xf32> -> !gnn.tensor<edge, 2x3xf32>
  %m = gnn.binary mul %a, %he : !gnn.tensor<edge, 2x1xf32>, !gnn.tensor<edge, 2x3xf32> -> !gnn.tensor<edge, 2x3xf32>
  %s = gnn.scatter mean %g, %m : !gnn.graph<graph>, !gnn.tensor<edge, 2x3xf32> -> !gnn.tensor<dst, 2x3xf32>
  %r = gnn.collect %g, %s : !gnn.graph<graph>, !gnn.tensor<dst, 2x3xf32> -> !gnn.tensor<dense, ?x2x3xf32>
  return %r : !gnn.tensor<dense, ?x2x3xf32>
}

// -----

// Softmax weights used twice (a weighted sum and a max of the weights
// themselves): folding the softmax into one reduction would lose it for the
// other, so the softmax stays and both reductions read it as an edge input.
// They are independent and over the same edges, so they share one op.
// CHECK-LABEL: func.func @weights_twice
// CHECK: %[[A:.*]] = gnn.edge_softmax
// CHECK: %[[R:.*]]:2 = gnn.aggregate %{{.*}}(%[[A]], %{{.*}} : !gnn.tensor<edge, 2x1xf32>, !gnn.tensor<src, 2x3xf32>) by dst reductions [{kind = "sum"}, {kind = "max"}] : <graph> -> !gnn.tensor<dst, 2x3xf32>, !gnn.tensor<dst, 2x1xf32> {
// CHECK-NEXT: ^bb0(%[[BA:.*]]: !gnn.tensor<dense, 2x1xf32>, %[[BH:.*]]: !gnn.tensor<dense, 2x3xf32>):
// CHECK-NEXT: %[[P:.*]] = gnn.binary mul %[[BA]], %[[BH]]
// CHECK-NEXT: gnn.yield %[[P]], %[[BA]] : !gnn.tensor<dense, 2x3xf32>, !gnn.tensor<dense, 2x1xf32>
// CHECK-NOT: kind = "softmax_sum"
// CHECK-NOT: gnn.scatter
// CHECK: gnn.collect %{{.*}}, %[[R]]#0
// CHECK: gnn.collect %{{.*}}, %[[R]]#1
func.func @weights_twice(%g: !gnn.graph<graph>, %l: !gnn.tensor<dense, ?x2x1xf32>, %h: !gnn.tensor<dense, ?x2x3xf32>) -> (!gnn.tensor<dense, ?x2x3xf32>, !gnn.tensor<dense, ?x2x1xf32>) {
  %ls = gnn.attach %g, %l : !gnn.graph<graph>, !gnn.tensor<dense, ?x2x1xf32> -> !gnn.tensor<src, 2x1xf32>
  %le = gnn.gather %g, %ls : !gnn.graph<graph>, !gnn.tensor<src, 2x1xf32> -> !gnn.tensor<edge, 2x1xf32>
  %a = gnn.edge_softmax %g, %le {by = #gnn<domain dst>} : !gnn.graph<graph>, !gnn.tensor<edge, 2x1xf32> -> !gnn.tensor<edge, 2x1xf32>
  %hs = gnn.attach %g, %h : !gnn.graph<graph>, !gnn.tensor<dense, ?x2x3xf32> -> !gnn.tensor<src, 2x3xf32>
  %he = gnn.gather %g, %hs : !gnn.graph<graph>, !gnn.tensor<src, 2x3xf32> -> !gnn.tensor<edge, 2x3xf32>
  %m = gnn.binary mul %a, %he : !gnn.tensor<edge, 2x1xf32>, !gnn.tensor<edge, 2x3xf32> -> !gnn.tensor<edge, 2x3xf32>
  %s = gnn.scatter sum %g, %m : !gnn.graph<graph>, !gnn.tensor<edge, 2x3xf32> -> !gnn.tensor<dst, 2x3xf32>
  %t = gnn.scatter max %g, %a : !gnn.graph<graph>, !gnn.tensor<edge, 2x1xf32> -> !gnn.tensor<dst, 2x1xf32>
  %r = gnn.collect %g, %s : !gnn.graph<graph>, !gnn.tensor<dst, 2x3xf32> -> !gnn.tensor<dense, ?x2x3xf32>
  %q = gnn.collect %g, %t : !gnn.graph<graph>, !gnn.tensor<dst, 2x1xf32> -> !gnn.tensor<dense, ?x2x1xf32>
  return %r, %q : !gnn.tensor<dense, ?x2x3xf32>, !gnn.tensor<dense, ?x2x1xf32>
}

// -----

// Attention dropout whose result is used twice: the dropped weights are
// needed as a tensor, so this is not an online softmax_sum either. The
// dropout is row-local: it is recomputed inside the body (same mask), the
// softmax is an edge input.
// CHECK-LABEL: func.func @dropped_weights_twice
// CHECK: %[[A:.*]] = gnn.edge_softmax
// CHECK-NOT: gnn.dropout
// CHECK: gnn.aggregate %{{.*}}(%[[A]], %{{.*}} : !gnn.tensor<edge, 2x1xf32>, !gnn.tensor<src, 2x3xf32>) by dst reductions [{kind = "sum"}, {kind = "sum"}]
// CHECK: gnn.dropout %{{.*}} {p = 5.000000e-01 : f64, seed = 7 : i64} : <dense, 2x1xf32>
// CHECK-NOT: kind = "softmax_sum"
// CHECK-NOT: gnn.scatter
func.func @dropped_weights_twice(%g: !gnn.graph<graph>, %l: !gnn.tensor<dense, ?x2x1xf32>, %h: !gnn.tensor<dense, ?x2x3xf32>) -> (!gnn.tensor<dense, ?x2x3xf32>, !gnn.tensor<dense, ?x2x1xf32>) {
  %ls = gnn.attach %g, %l : !gnn.graph<graph>, !gnn.tensor<dense, ?x2x1xf32> -> !gnn.tensor<src, 2x1xf32>
  %le = gnn.gather %g, %ls : !gnn.graph<graph>, !gnn.tensor<src, 2x1xf32> -> !gnn.tensor<edge, 2x1xf32>
  %a = gnn.edge_softmax %g, %le {by = #gnn<domain dst>} : !gnn.graph<graph>, !gnn.tensor<edge, 2x1xf32> -> !gnn.tensor<edge, 2x1xf32>
  %d = gnn.dropout %a {p = 0.5 : f64, seed = 7 : i64} : !gnn.tensor<edge, 2x1xf32>
  %hs = gnn.attach %g, %h : !gnn.graph<graph>, !gnn.tensor<dense, ?x2x3xf32> -> !gnn.tensor<src, 2x3xf32>
  %he = gnn.gather %g, %hs : !gnn.graph<graph>, !gnn.tensor<src, 2x3xf32> -> !gnn.tensor<edge, 2x3xf32>
  %m = gnn.binary mul %d, %he : !gnn.tensor<edge, 2x1xf32>, !gnn.tensor<edge, 2x3xf32> -> !gnn.tensor<edge, 2x3xf32>
  %s = gnn.scatter sum %g, %m : !gnn.graph<graph>, !gnn.tensor<edge, 2x3xf32> -> !gnn.tensor<dst, 2x3xf32>
  %t = gnn.scatter sum %g, %d : !gnn.graph<graph>, !gnn.tensor<edge, 2x1xf32> -> !gnn.tensor<dst, 2x1xf32>
  %r = gnn.collect %g, %s : !gnn.graph<graph>, !gnn.tensor<dst, 2x3xf32> -> !gnn.tensor<dense, ?x2x3xf32>
  %q = gnn.collect %g, %t : !gnn.graph<graph>, !gnn.tensor<dst, 2x1xf32> -> !gnn.tensor<dense, ?x2x1xf32>
  return %r, %q : !gnn.tensor<dense, ?x2x3xf32>, !gnn.tensor<dense, ?x2x1xf32>
}

// -----

// A softmax over the out-edges of each source (by = src) weighting a sum
// over the in-edges of each destination: different groupings, no
// softmax_sum.
// CHECK-LABEL: func.func @softmax_other_direction
// CHECK: %[[A:.*]] = gnn.edge_softmax %{{.*}}, %{{.*}} {by = #gnn<domain src>}
// CHECK: gnn.aggregate %{{.*}}(%[[A]], %{{.*}}) by dst reductions [{kind = "sum"}]
// CHECK-NOT: kind = "softmax_sum"
func.func @softmax_other_direction(%g: !gnn.graph<graph>, %l: !gnn.tensor<dense, ?x1xf32>, %h: !gnn.tensor<dense, ?x3xf32>) -> !gnn.tensor<dense, ?x3xf32> {
  %ls = gnn.attach %g, %l : !gnn.graph<graph>, !gnn.tensor<dense, ?x1xf32> -> !gnn.tensor<src, 1xf32>
  %le = gnn.gather %g, %ls : !gnn.graph<graph>, !gnn.tensor<src, 1xf32> -> !gnn.tensor<edge, 1xf32>
  %a = gnn.edge_softmax %g, %le {by = #gnn<domain src>} : !gnn.graph<graph>, !gnn.tensor<edge, 1xf32> -> !gnn.tensor<edge, 1xf32>
  %hs = gnn.attach %g, %h : !gnn.graph<graph>, !gnn.tensor<dense, ?x3xf32> -> !gnn.tensor<src, 3xf32>
  %he = gnn.gather %g, %hs : !gnn.graph<graph>, !gnn.tensor<src, 3xf32> -> !gnn.tensor<edge, 3xf32>
  %m = gnn.binary mul %a, %he : !gnn.tensor<edge, 1xf32>, !gnn.tensor<edge, 3xf32> -> !gnn.tensor<edge, 3xf32>
  %s = gnn.scatter sum %g, %m : !gnn.graph<graph>, !gnn.tensor<edge, 3xf32> -> !gnn.tensor<dst, 3xf32>
  %r = gnn.collect %g, %s : !gnn.graph<graph>, !gnn.tensor<dst, 3xf32> -> !gnn.tensor<dense, ?x3xf32>
  return %r : !gnn.tensor<dense, ?x3xf32>
}

// -----

// A softmax over another graph's edges weighting this graph's sum: no
// softmax_sum.
// CHECK-LABEL: func.func @softmax_other_graph
// CHECK-SAME: (%[[G:[^:]*]]: !gnn.graph<graph>, %[[G2:[^:]*]]: !gnn.graph<graph>
// CHECK: %[[A:.*]] = gnn.edge_softmax %[[G2]]
// CHECK: gnn.aggregate %[[G]](%[[A]], %{{.*}}) by dst reductions [{kind = "sum"}]
// CHECK-NOT: kind = "softmax_sum"
func.func @softmax_other_graph(%g: !gnn.graph<graph>, %g2: !gnn.graph<graph>, %l: !gnn.tensor<dense, ?x1xf32>, %h: !gnn.tensor<dense, ?x3xf32>) -> !gnn.tensor<dense, ?x3xf32> {
  %ls = gnn.attach %g, %l : !gnn.graph<graph>, !gnn.tensor<dense, ?x1xf32> -> !gnn.tensor<src, 1xf32>
  %le = gnn.gather %g, %ls : !gnn.graph<graph>, !gnn.tensor<src, 1xf32> -> !gnn.tensor<edge, 1xf32>
  %a = gnn.edge_softmax %g2, %le {by = #gnn<domain dst>} : !gnn.graph<graph>, !gnn.tensor<edge, 1xf32> -> !gnn.tensor<edge, 1xf32>
  %hs = gnn.attach %g, %h : !gnn.graph<graph>, !gnn.tensor<dense, ?x3xf32> -> !gnn.tensor<src, 3xf32>
  %he = gnn.gather %g, %hs : !gnn.graph<graph>, !gnn.tensor<src, 3xf32> -> !gnn.tensor<edge, 3xf32>
  %m = gnn.binary mul %a, %he : !gnn.tensor<edge, 1xf32>, !gnn.tensor<edge, 3xf32> -> !gnn.tensor<edge, 3xf32>
  %s = gnn.scatter sum %g, %m : !gnn.graph<graph>, !gnn.tensor<edge, 3xf32> -> !gnn.tensor<dst, 3xf32>
  %r = gnn.collect %g, %s : !gnn.graph<graph>, !gnn.tensor<dst, 3xf32> -> !gnn.tensor<dense, ?x3xf32>
  return %r : !gnn.tensor<dense, ?x3xf32>
}

// -----

// The hand-written softmax exp(l) / sum(exp(l)) whose exp(l) also feeds a
// third op (a max): not matched. The normalising sum and the weighted sum
// are ordinary sums; the weighted one reads the normaliser's result through
// a gather, so it depends on it and the two are not merged. The max of
// exp(l) is independent of both; its inputs are ready before the normaliser,
// so it moves up and shares the normaliser's op.
// CHECK-LABEL: func.func @exp_used_thrice
// CHECK: %[[N:.*]]:2 = gnn.aggregate {{.*}} by dst reductions [{kind = "sum"}, {kind = "max"}] : <graph> -> !gnn.tensor<dst, 1xf32>, !gnn.tensor<dst, 1xf32> {
// CHECK-NEXT: ^bb0(%[[L:.*]]: !gnn.tensor<dense, 1xf32>):
// CHECK-NEXT: %[[X:.*]] = gnn.unary exp %[[L]]
// CHECK: gnn.aggregate %{{.*}}(%{{.*}}, %[[N]]#0, %{{.*}} : !gnn.tensor<src, 1xf32>, !gnn.tensor<dst, 1xf32>, !gnn.tensor<src, 3xf32>) by dst reductions [{kind = "sum"}]
// CHECK: gnn.unary exp
// CHECK: gnn.binary div
// CHECK: gnn.binary mul
// CHECK-NOT: kind = "softmax_sum"
// CHECK-NOT: gnn.scatter
// CHECK-NOT: gnn.gather
// CHECK: return
func.func @exp_used_thrice(%g: !gnn.graph<graph>, %l: !gnn.tensor<dense, ?x1xf32>, %h: !gnn.tensor<dense, ?x3xf32>) -> (!gnn.tensor<dense, ?x3xf32>, !gnn.tensor<dense, ?x1xf32>) {
  %ls = gnn.attach %g, %l : !gnn.graph<graph>, !gnn.tensor<dense, ?x1xf32> -> !gnn.tensor<src, 1xf32>
  %le = gnn.gather %g, %ls : !gnn.graph<graph>, !gnn.tensor<src, 1xf32> -> !gnn.tensor<edge, 1xf32>
  %x = gnn.unary exp %le : !gnn.tensor<edge, 1xf32>
  %n = gnn.scatter sum %g, %x : !gnn.graph<graph>, !gnn.tensor<edge, 1xf32> -> !gnn.tensor<dst, 1xf32>
  %ne = gnn.gather %g, %n : !gnn.graph<graph>, !gnn.tensor<dst, 1xf32> -> !gnn.tensor<edge, 1xf32>
  %a = gnn.binary div %x, %ne : !gnn.tensor<edge, 1xf32>, !gnn.tensor<edge, 1xf32> -> !gnn.tensor<edge, 1xf32>
  %hs = gnn.attach %g, %h : !gnn.graph<graph>, !gnn.tensor<dense, ?x3xf32> -> !gnn.tensor<src, 3xf32>
  %he = gnn.gather %g, %hs : !gnn.graph<graph>, !gnn.tensor<src, 3xf32> -> !gnn.tensor<edge, 3xf32>
  %m = gnn.binary mul %a, %he : !gnn.tensor<edge, 1xf32>, !gnn.tensor<edge, 3xf32> -> !gnn.tensor<edge, 3xf32>
  %s = gnn.scatter sum %g, %m : !gnn.graph<graph>, !gnn.tensor<edge, 3xf32> -> !gnn.tensor<dst, 3xf32>
  %t = gnn.scatter max %g, %x : !gnn.graph<graph>, !gnn.tensor<edge, 1xf32> -> !gnn.tensor<dst, 1xf32>
  %r = gnn.collect %g, %s : !gnn.graph<graph>, !gnn.tensor<dst, 3xf32> -> !gnn.tensor<dense, ?x3xf32>
  %q = gnn.collect %g, %t : !gnn.graph<graph>, !gnn.tensor<dst, 1xf32> -> !gnn.tensor<dense, ?x1xf32>
  return %r, %q : !gnn.tensor<dense, ?x3xf32>, !gnn.tensor<dense, ?x1xf32>
}

// -----

// Aggregations over different graphs are not merged.
// CHECK-LABEL: func.func @different_graphs
// CHECK-SAME: (%[[G1:[^:]*]]: !gnn.graph<graph>, %[[G2:[^:]*]]: !gnn.graph<graph>
// CHECK: %[[A:.*]] = gnn.aggregate %[[G1]]({{.*}}) by dst reductions [{kind = "sum"}] : <graph> -> !gnn.tensor<dst, 4xf32>
// CHECK: %[[B:.*]] = gnn.aggregate %[[G2]]({{.*}}) by dst reductions [{kind = "max"}] : <graph> -> !gnn.tensor<dst, 4xf32>
// CHECK-NOT: gnn.aggregate
// CHECK-NOT: gnn.scatter
func.func @different_graphs(%g1: !gnn.graph<graph>, %g2: !gnn.graph<graph>, %x: !gnn.tensor<dense, ?x4xf32>) -> !gnn.tensor<dense, ?x4xf32> {
  %h1 = gnn.attach %g1, %x : !gnn.graph<graph>, !gnn.tensor<dense, ?x4xf32> -> !gnn.tensor<src, 4xf32>
  %m1 = gnn.gather %g1, %h1 : !gnn.graph<graph>, !gnn.tensor<src, 4xf32> -> !gnn.tensor<edge, 4xf32>
  %s1 = gnn.scatter sum %g1, %m1 : !gnn.graph<graph>, !gnn.tensor<edge, 4xf32> -> !gnn.tensor<dst, 4xf32>
  %h2 = gnn.attach %g2, %x : !gnn.graph<graph>, !gnn.tensor<dense, ?x4xf32> -> !gnn.tensor<src, 4xf32>
  %m2 = gnn.gather %g2, %h2 : !gnn.graph<graph>, !gnn.tensor<src, 4xf32> -> !gnn.tensor<edge, 4xf32>
  %s2 = gnn.scatter max %g2, %m2 : !gnn.graph<graph>, !gnn.tensor<edge, 4xf32> -> !gnn.tensor<dst, 4xf32>
  %c1 = gnn.collect %g1, %s1 : !gnn.graph<graph>, !gnn.tensor<dst, 4xf32> -> !gnn.tensor<dense, ?x4xf32>
  %c2 = gnn.collect %g2, %s2 : !gnn.graph<graph>, !gnn.tensor<dst, 4xf32> -> !gnn.tensor<dense, ?x4xf32>
  %r = gnn.binary add %c1, %c2 : !gnn.tensor<dense, ?x4xf32>, !gnn.tensor<dense, ?x4xf32> -> !gnn.tensor<dense, ?x4xf32>
  return %r : !gnn.tensor<dense, ?x4xf32>
}

// -----

// Aggregations over the same graph in different directions (in-edges of
// each destination, out-edges of each source) are not merged: they walk
// different adjacency lists.
// CHECK-LABEL: func.func @different_directions
// CHECK: gnn.aggregate %{{.*}}({{.*}} : !gnn.tensor<src, 4xf32>) by dst reductions [{kind = "sum"}] : <graph> -> !gnn.tensor<dst, 4xf32>
// CHECK: gnn.aggregate %{{.*}}({{.*}} : !gnn.tensor<dst, 4xf32>) by src reductions [{kind = "sum"}] : <graph> -> !gnn.tensor<src, 4xf32>
// CHECK-NOT: gnn.aggregate
// CHECK-NOT: gnn.scatter
func.func @different_directions(%g: !gnn.graph<graph>, %x: !gnn.tensor<dense, ?x4xf32>) -> !gnn.tensor<dense, ?x4xf32> {
  %hs = gnn.attach %g, %x : !gnn.graph<graph>, !gnn.tensor<dense, ?x4xf32> -> !gnn.tensor<src, 4xf32>
  %ms = gnn.gather %g, %hs : !gnn.graph<graph>, !gnn.tensor<src, 4xf32> -> !gnn.tensor<edge, 4xf32>
  %sd = gnn.scatter sum %g, %ms : !gnn.graph<graph>, !gnn.tensor<edge, 4xf32> -> !gnn.tensor<dst, 4xf32>
  %hd = gnn.attach %g, %x : !gnn.graph<graph>, !gnn.tensor<dense, ?x4xf32> -> !gnn.tensor<dst, 4xf32>
  %md = gnn.gather %g, %hd : !gnn.graph<graph>, !gnn.tensor<dst, 4xf32> -> !gnn.tensor<edge, 4xf32>
  %ss = gnn.scatter sum %g, %md : !gnn.graph<graph>, !gnn.tensor<edge, 4xf32> -> !gnn.tensor<src, 4xf32>
  %c1 = gnn.collect %g, %sd : !gnn.graph<graph>, !gnn.tensor<dst, 4xf32> -> !gnn.tensor<dense, ?x4xf32>
  %c2 = gnn.collect %g, %ss : !gnn.graph<graph>, !gnn.tensor<src, 4xf32> -> !gnn.tensor<dense, ?x4xf32>
  %r = gnn.binary add %c1, %c2 : !gnn.tensor<dense, ?x4xf32>, !gnn.tensor<dense, ?x4xf32> -> !gnn.tensor<dense, ?x4xf32>
  return %r : !gnn.tensor<dense, ?x4xf32>
}

// -----

// The second aggregation's input is computed from the first one's result:
// it cannot run in the same pass over the edges.
// CHECK-LABEL: func.func @dependent
// CHECK: %[[A:.*]] = gnn.aggregate %{{.*}}({{.*}}) by dst reductions [{kind = "sum"}] : <graph> -> !gnn.tensor<dst, 4xf32>
// CHECK: %[[C:.*]] = gnn.collect %{{.*}}, %[[A]]
// CHECK: %[[R:.*]] = gnn.unary relu %[[C]]
// CHECK: %[[H:.*]] = gnn.attach %{{.*}}, %[[R]]
// CHECK: gnn.aggregate %{{.*}}(%[[H]] : !gnn.tensor<src, 4xf32>) by dst reductions [{kind = "sum"}] : <graph> -> !gnn.tensor<dst, 4xf32>
// CHECK-NOT: gnn.aggregate
func.func @dependent(%g: !gnn.graph<graph>, %x: !gnn.tensor<dense, ?x4xf32>) -> !gnn.tensor<dense, ?x4xf32> {
  %h1 = gnn.attach %g, %x : !gnn.graph<graph>, !gnn.tensor<dense, ?x4xf32> -> !gnn.tensor<src, 4xf32>
  %m1 = gnn.gather %g, %h1 : !gnn.graph<graph>, !gnn.tensor<src, 4xf32> -> !gnn.tensor<edge, 4xf32>
  %s1 = gnn.scatter sum %g, %m1 : !gnn.graph<graph>, !gnn.tensor<edge, 4xf32> -> !gnn.tensor<dst, 4xf32>
  %c1 = gnn.collect %g, %s1 : !gnn.graph<graph>, !gnn.tensor<dst, 4xf32> -> !gnn.tensor<dense, ?x4xf32>
  %r1 = gnn.unary relu %c1 : !gnn.tensor<dense, ?x4xf32>
  %h2 = gnn.attach %g, %r1 : !gnn.graph<graph>, !gnn.tensor<dense, ?x4xf32> -> !gnn.tensor<src, 4xf32>
  %m2 = gnn.gather %g, %h2 : !gnn.graph<graph>, !gnn.tensor<src, 4xf32> -> !gnn.tensor<edge, 4xf32>
  %s2 = gnn.scatter sum %g, %m2 : !gnn.graph<graph>, !gnn.tensor<edge, 4xf32> -> !gnn.tensor<dst, 4xf32>
  %c2 = gnn.collect %g, %s2 : !gnn.graph<graph>, !gnn.tensor<dst, 4xf32> -> !gnn.tensor<dense, ?x4xf32>
  return %c2 : !gnn.tensor<dense, ?x4xf32>
}

// -----

// The dependence may also come through the body: the second aggregation's
// per-edge value reads the first one's result at the destination.
// CHECK-LABEL: func.func @dependent_in_body
// CHECK: %[[A:.*]] = gnn.aggregate {{.*}} reductions [{kind = "max"}]
// CHECK: gnn.aggregate %{{.*}}(%{{.*}}, %[[A]] : !gnn.tensor<src, 4xf32>, !gnn.tensor<dst, 4xf32>) by dst reductions [{kind = "sum"}]
// CHECK-NOT: gnn.aggregate
func.func @dependent_in_body(%g: !gnn.graph<graph>, %x: !gnn.tensor<dense, ?x4xf32>) -> !gnn.tensor<dense, ?x4xf32> {
  %h = gnn.attach %g, %x : !gnn.graph<graph>, !gnn.tensor<dense, ?x4xf32> -> !gnn.tensor<src, 4xf32>
  %m = gnn.gather %g, %h : !gnn.graph<graph>, !gnn.tensor<src, 4xf32> -> !gnn.tensor<edge, 4xf32>
  %mx = gnn.scatter max %g, %m : !gnn.graph<graph>, !gnn.tensor<edge, 4xf32> -> !gnn.tensor<dst, 4xf32>
  %mxe = gnn.gather %g, %mx : !gnn.graph<graph>, !gnn.tensor<dst, 4xf32> -> !gnn.tensor<edge, 4xf32>
  %d = gnn.binary sub %m, %mxe : !gnn.tensor<edge, 4xf32>, !gnn.tensor<edge, 4xf32> -> !gnn.tensor<edge, 4xf32>
  %s = gnn.scatter sum %g, %d : !gnn.graph<graph>, !gnn.tensor<edge, 4xf32> -> !gnn.tensor<dst, 4xf32>
  %c = gnn.collect %g, %s : !gnn.graph<graph>, !gnn.tensor<dst, 4xf32> -> !gnn.tensor<dense, ?x4xf32>
  return %c : !gnn.tensor<dense, ?x4xf32>
}

// -----

// The first aggregation's result is read before the second one runs by an
// op that cannot move (it updates running statistics), and the second one's
// input is made after the first: the merged op could sit at neither, so the
// two stay apart. (A pure use in between moves down instead:
// sink-users.mlir.)
// CHECK-LABEL: func.func @used_in_between
// CHECK: %[[A:.*]] = gnn.aggregate {{.*}} reductions [{kind = "sum"}]
// CHECK: %[[C:.*]] = gnn.collect %{{.*}}, %[[A]]
// CHECK-NEXT: gnn.update_batch_stats %{{.*}}, %{{.*}}, %[[C]]
// CHECK: gnn.aggregate {{.*}} reductions [{kind = "min"}]
// CHECK-NOT: gnn.aggregate
func.func @used_in_between(%g: !gnn.graph<graph>, %x: !gnn.tensor<dense, ?x4xf32>, %y: !gnn.tensor<dense, ?x4xf32>, %rm: !gnn.tensor<dense, 4xf32> {gnn.buffer, gnn.param = "rm"}, %rv: !gnn.tensor<dense, 4xf32> {gnn.buffer, gnn.param = "rv"}) -> !gnn.tensor<dense, ?x4xf32> {
  %h1 = gnn.attach %g, %x : !gnn.graph<graph>, !gnn.tensor<dense, ?x4xf32> -> !gnn.tensor<src, 4xf32>
  %m1 = gnn.gather %g, %h1 : !gnn.graph<graph>, !gnn.tensor<src, 4xf32> -> !gnn.tensor<edge, 4xf32>
  %s1 = gnn.scatter sum %g, %m1 : !gnn.graph<graph>, !gnn.tensor<edge, 4xf32> -> !gnn.tensor<dst, 4xf32>
  %c1 = gnn.collect %g, %s1 : !gnn.graph<graph>, !gnn.tensor<dst, 4xf32> -> !gnn.tensor<dense, ?x4xf32>
  gnn.update_batch_stats %rm, %rv, %c1 {momentum = 0.1 : f64} : !gnn.tensor<dense, 4xf32>, !gnn.tensor<dense, 4xf32>, !gnn.tensor<dense, ?x4xf32>
  %h2 = gnn.attach %g, %y : !gnn.graph<graph>, !gnn.tensor<dense, ?x4xf32> -> !gnn.tensor<src, 4xf32>
  %m2 = gnn.gather %g, %h2 : !gnn.graph<graph>, !gnn.tensor<src, 4xf32> -> !gnn.tensor<edge, 4xf32>
  %s2 = gnn.scatter min %g, %m2 : !gnn.graph<graph>, !gnn.tensor<edge, 4xf32> -> !gnn.tensor<dst, 4xf32>
  %c2 = gnn.collect %g, %s2 : !gnn.graph<graph>, !gnn.tensor<dst, 4xf32> -> !gnn.tensor<dense, ?x4xf32>
  %r = gnn.binary add %c1, %c2 : !gnn.tensor<dense, ?x4xf32>, !gnn.tensor<dense, ?x4xf32> -> !gnn.tensor<dense, ?x4xf32>
  return %r : !gnn.tensor<dense, ?x4xf32>
}

// -----

// A scatter over another graph than the gather that feeds it: the gather is
// not this aggregation's to fold, so it stays and its edge tensor is an
// input; the row-local op after it still moves into the body.
// CHECK-LABEL: func.func @gather_other_graph
// CHECK-SAME: (%[[G1:[^:]*]]: !gnn.graph<graph>, %[[G2:[^:]*]]: !gnn.graph<graph>
// CHECK: %[[H:.*]] = gnn.attach %[[G2]]
// CHECK-NEXT: %[[M:.*]] = gnn.gather %[[G2]], %[[H]] : <graph>, <src, 4xf32> -> <edge, 4xf32>
// CHECK-NEXT: %[[A:.*]] = gnn.aggregate %[[G1]](%[[M]] : !gnn.tensor<edge, 4xf32>) by dst reductions [{kind = "sum"}]
// CHECK-NEXT: ^bb0(%[[E:.*]]: !gnn.tensor<dense, 4xf32>):
// CHECK-NEXT: %[[R:.*]] = gnn.unary relu %[[E]] : <dense, 4xf32>
// CHECK-NEXT: gnn.yield %[[R]]
// CHECK-NOT: gnn.scatter
func.func @gather_other_graph(%g1: !gnn.graph<graph>, %g2: !gnn.graph<graph>, %x: !gnn.tensor<dense, ?x4xf32>) -> !gnn.tensor<dense, ?x4xf32> {
  %h = gnn.attach %g2, %x : !gnn.graph<graph>, !gnn.tensor<dense, ?x4xf32> -> !gnn.tensor<src, 4xf32>
  %m = gnn.gather %g2, %h : !gnn.graph<graph>, !gnn.tensor<src, 4xf32> -> !gnn.tensor<edge, 4xf32>
  %r = gnn.unary relu %m : !gnn.tensor<edge, 4xf32>
  %s = gnn.scatter sum %g1, %r : !gnn.graph<graph>, !gnn.tensor<edge, 4xf32> -> !gnn.tensor<dst, 4xf32>
  %c = gnn.collect %g1, %s : !gnn.graph<graph>, !gnn.tensor<dst, 4xf32> -> !gnn.tensor<dense, ?x4xf32>
  return %c : !gnn.tensor<dense, ?x4xf32>
}

// -----

// A per-edge value made by an op that is not row-local (here an
// edge_softmax of a gathered value, used on its own) is an edge input; the
// ops before it stay outside.
// CHECK-LABEL: func.func @softmax_reduced_alone
// CHECK: %[[A:.*]] = gnn.edge_softmax
// CHECK: gnn.aggregate %{{.*}}(%[[A]] : !gnn.tensor<edge, 2xf32>) by dst reductions [{kind = "sum"}]
// CHECK-NEXT: ^bb0(%[[E:.*]]: !gnn.tensor<dense, 2xf32>):
// CHECK-NEXT: gnn.yield %[[E]]
func.func @softmax_reduced_alone(%g: !gnn.graph<graph>, %l: !gnn.tensor<dense, ?x2xf32>) -> !gnn.tensor<dense, ?x2xf32> {
  %ls = gnn.attach %g, %l : !gnn.graph<graph>, !gnn.tensor<dense, ?x2xf32> -> !gnn.tensor<src, 2xf32>
  %le = gnn.gather %g, %ls : !gnn.graph<graph>, !gnn.tensor<src, 2xf32> -> !gnn.tensor<edge, 2xf32>
  %a = gnn.edge_softmax %g, %le {by = #gnn<domain dst>} : !gnn.graph<graph>, !gnn.tensor<edge, 2xf32> -> !gnn.tensor<edge, 2xf32>
  %s = gnn.scatter sum %g, %a : !gnn.graph<graph>, !gnn.tensor<edge, 2xf32> -> !gnn.tensor<dst, 2xf32>
  %c = gnn.collect %g, %s : !gnn.graph<graph>, !gnn.tensor<dst, 2xf32> -> !gnn.tensor<dense, ?x2xf32>
  return %c : !gnn.tensor<dense, ?x2xf32>
}
