//===- Autodiff.cpp - Reverse-mode differentiation of the gnn dialect -----===//
//
// Part of gnnc.
//
// For every function @F (unfused: no gnn.aggregate) this pass writes
// @F.backward, whose arguments are F's arguments followed by the cotangent
// `dy` of F's result, and whose results are the gradients <dy, dF/da> of
// every tensor argument `a` (inputs and parameters, in argument order).
//
// The backward function is ordinary gnn IR:
//
//   1. the forward ops are cloned (recomputed: every gnn op is a pure
//      function, so recomputing is always correct; choosing what to store
//      instead is the job of a later pass);
//   2. walking the clones in reverse, each op whose result has an adjoint
//      adds the vector-Jacobian products of its operands to their adjoints
//      (contributions to one value are summed; a contribution to a
//      broadcast operand is summed back to the operand's shape, a dense
//      operand of a vertex or edge tensor over the vertex or edge axis too);
//   3. only values that depend on a floating-point tensor argument get
//      adjoints (activity analysis); degrees, counts, constants and masks
//      have none;
//   4. clones and products nobody reads are erased.
//
// Transposes: attach^T = collect, collect^T = attach, splat^T = sum over the
// rows, gather^T = scatter sum grouped by the gathered end, scatter sum^T =
// gather, scatter mean^T = gather(dy) / gather(degree), readout sum^T =
// broadcast_graphs. Non-smooth points take one subgradient, always the one
// that matches what the forward op returned: scatter, readout and reduce
// max/min give the whole gradient to the element they kept (the first
// extreme edge in CSR/CSC order, the first vertex, the first element in
// row-major order: gnn.scatter_select, gnn.readout_select,
// gnn.reduce_select); binary max/min give it to the left operand on a tie
// (the forward op returns the left one); relu, leaky_relu, elu and abs use
// the derivative of the x <= 0 side at 0 (relu'(0) = 0, abs'(0) = 0).
//
// A func.call of another layer becomes a call of that layer's backward
// function, so backward functions are made callee-first.
//
//===----------------------------------------------------------------------===//

#include "gnnc/Dialect/GNN/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"

#include <cmath>
#include <functional>

namespace gnnc::gnn {
#define GEN_PASS_DEF_GNNAUTODIFF
#include "gnnc/Dialect/GNN/Transforms/Passes.h.inc"
} // namespace gnnc::gnn

using namespace mlir;
using namespace gnnc::gnn;

namespace {

/// Ops whose results carry no gradient: graph facts, constants, and the
/// masks and comparisons the backward itself uses.
bool isNonDifferentiable(Operation *op) {
  if (isa<ConstantOp, TrainingOp, InDegreeOp, OutDegreeOp, NumVerticesOp,
          NumEdgesOp, GraphSizesOp, RelationOp, ScatterSelectOp,
          ReadoutSelectOp, ReduceSelectOp, UpdateBatchStatsOp>(op))
    return true;
  if (auto b = dyn_cast<BinaryOp>(op))
    return isComparison(b.getFn());
  return false;
}

constexpr double kSqrtHalf = 0.70710678118654752440;      // 1 / sqrt(2)
constexpr double kTwoOverSqrtPi = 1.12837916709551257390; // 2 / sqrt(pi)
constexpr double kInvSqrtTwoPi = 0.39894228040143267794;  // 1 / sqrt(2 pi)

/// `name.backward`.
std::string backwardName(StringRef name) { return (name + ".backward").str(); }

/// Writes the backward function of one forward function.
class Differentiator {
public:
  Differentiator(func::FuncOp forward, func::FuncOp backward,
                 const llvm::StringMap<func::FuncOp> &backwards)
      : forward(forward), backward(backward), backwards(backwards),
        b(backward.getContext()) {}

  LogicalResult run();

private:
  // Building blocks, inserted at the end of the backward body.
  Value constant(double value, Type elementType);
  Value unary(UnaryFn fn, Value x);
  Value binary(BinaryFn fn, Value lhs, Value rhs);
  Value binaryAs(BinaryFn fn, Value lhs, Value rhs, Type type) {
    return b.create<BinaryOp>(loc, type, fn, lhs, rhs);
  }
  Value mul(Value a, Value c) { return binary(BinaryFn::mul, a, c); }
  Value add(Value a, Value c) { return binary(BinaryFn::add, a, c); }
  Value sub(Value a, Value c) { return binary(BinaryFn::sub, a, c); }
  Value div(Value a, Value c) { return binary(BinaryFn::div, a, c); }
  Value scale(Value a, double factor) {
    return mul(a, constant(factor, tensorOf(a).getElementType()));
  }
  Value reshape(Value v, DomainTensorType type);
  Value reduceSum(Value v, int64_t axis, bool keepdims);
  Value collect(Value graph, Value v);
  Value broadcastLike(Value v, Value like);
  /// Sums a contribution computed at a broadcast shape back to `type`.
  /// `hint` is a value on the same vertex or edge set (for the graph).
  Value sumTo(Value c, DomainTensorType type, Value hint);
  /// The graph whose vertices or edges index the rows of `v`.
  Value graphOf(Value v);

  /// Adds `contribution` to the adjoint of `primal` (if it is active).
  void accumulate(Value primal, Value contribution);
  LogicalResult vjp(Operation *op);
  LogicalResult vjpUnary(UnaryOp op, Value dy);
  LogicalResult vjpBinary(BinaryOp op, Value dy);
  LogicalResult vjpReduce(ReduceOp op, Value dy);
  LogicalResult vjpMatmul(MatmulOp op, Value dy);
  LogicalResult vjpCall(func::CallOp op, Value dy);

  func::FuncOp forward, backward;
  const llvm::StringMap<func::FuncOp> &backwards;
  OpBuilder b;
  Location loc = UnknownLoc::get(backward.getContext());
  DenseSet<Value> active;
  DenseMap<Value, Value> adjoint;
  DenseMap<Value, Value> graphs;
  LogicalResult status = success();
};

Value Differentiator::constant(double value, Type elementType) {
  auto type =
      DomainTensorType::get(b.getContext(), Domain::dense, {}, elementType);
  return b.create<ConstantOp>(loc, type, b.getF64FloatAttr(value));
}

Value Differentiator::unary(UnaryFn fn, Value x) {
  return b.create<UnaryOp>(loc, x.getType(), fn, x, FloatAttr());
}

/// The result type of `gnn.binary` on these operands, broadcast as the
/// verifier does; a `?` meeting a size other than 1 stays a `?`.
static DomainTensorType broadcastType(DomainTensorType a, DomainTensorType c) {
  Domain domain =
      a.getDomain() == Domain::dense ? c.getDomain() : a.getDomain();
  size_t rank = std::max(a.getRank(), c.getRank());
  SmallVector<int64_t> shape(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t x = i < static_cast<size_t>(a.getRank())
                    ? a.getShape()[a.getRank() - 1 - i]
                    : 1;
    int64_t y = i < static_cast<size_t>(c.getRank())
                    ? c.getShape()[c.getRank() - 1 - i]
                    : 1;
    int64_t r = x;
    if (x == 1)
      r = y;
    else if (y != 1 && y != x && ShapedType::isDynamic(y))
      r = y; // a `?` stays a `?`
    shape[rank - 1 - i] = r;
  }
  return DomainTensorType::get(a.getContext(), domain, shape,
                               a.getElementType());
}

Value Differentiator::binary(BinaryFn fn, Value lhs, Value rhs) {
  DomainTensorType type = broadcastType(tensorOf(lhs), tensorOf(rhs));
  return b.create<BinaryOp>(loc, type, fn, lhs, rhs);
}

Value Differentiator::reshape(Value v, DomainTensorType type) {
  if (v.getType() == type)
    return v;
  return b.create<ReshapeOp>(loc, type, v);
}

Value Differentiator::reduceSum(Value v, int64_t axis, bool keepdims) {
  DomainTensorType t = tensorOf(v);
  SmallVector<int64_t> shape(t.getShape());
  if (keepdims)
    shape[axis] = 1;
  else
    shape.erase(shape.begin() + axis);
  return b.create<ReduceOp>(
      loc, t.withShape(shape), ReduceFnAttr::get(b.getContext(), ReduceFn::sum),
      v, b.getI64IntegerAttr(axis), keepdims ? b.getUnitAttr() : UnitAttr());
}

Value Differentiator::collect(Value graph, Value v) {
  DomainTensorType t = tensorOf(v);
  SmallVector<int64_t> shape{ShapedType::kDynamic};
  shape.append(t.getShape().begin(), t.getShape().end());
  auto type = DomainTensorType::get(b.getContext(), Domain::dense, shape,
                                    t.getElementType());
  return b.create<CollectOp>(loc, type, graph, v);
}

Value Differentiator::broadcastLike(Value v, Value like) {
  if (v.getType() == like.getType() &&
      llvm::none_of(tensorOf(v).getShape(), ShapedType::isDynamic))
    return v;
  return b.create<BroadcastLikeOp>(loc, like.getType(), v, like);
}

Value Differentiator::graphOf(Value v) {
  auto it = graphs.find(v);
  if (it != graphs.end())
    return it->second;
  Value graph;
  if (Operation *def = v.getDefiningOp()) {
    for (Value operand : def->getOperands())
      if (isa<GraphType>(operand.getType())) {
        graph = operand;
        break;
      }
    for (Value operand : def->getOperands()) {
      if (graph)
        break;
      auto t = dyn_cast<DomainTensorType>(operand.getType());
      if (t && t.getDomain() != Domain::dense)
        graph = graphOf(operand);
    }
  }
  graphs[v] = graph;
  return graph;
}

Value Differentiator::sumTo(Value c, DomainTensorType type, Value hint) {
  DomainTensorType have = tensorOf(c);
  if (have == type)
    return c;
  // A dense operand met every row of a vertex or edge tensor: sum the rows.
  if (type.getDomain() == Domain::dense && have.getDomain() != Domain::dense) {
    Value graph = graphOf(hint);
    if (!graph)
      return nullptr;
    c = reduceSum(collect(graph, c), 0, /*keepdims=*/false);
    have = tensorOf(c);
  }
  // Axes the operand had as 1 (or did not have) were broadcast: sum them.
  int64_t rank = have.getRank();
  int64_t missing = rank - type.getRank();
  for (int64_t i = 0; i < rank; ++i) {
    int64_t want = i < missing ? 1 : type.getShape()[i - missing];
    if (want == 1 && tensorOf(c).getShape()[i] != 1)
      c = reduceSum(c, i, /*keepdims=*/true);
  }
  return reshape(c, type);
}

void Differentiator::accumulate(Value primal, Value contribution) {
  if (!active.contains(primal) || !contribution)
    return;
  if (contribution.getType() != primal.getType()) {
    status = emitError(loc, "gnn-autodiff: internal error: a contribution of "
                            "type ")
             << contribution.getType() << " to a value of type "
             << primal.getType();
    return;
  }
  Value &slot = adjoint[primal];
  if (!slot) {
    slot = contribution;
    return;
  }
  slot = b.create<BinaryOp>(loc, primal.getType(), BinaryFn::add, slot,
                            contribution);
}

//===----------------------------------------------------------------------===//
// Vector-Jacobian products
//===----------------------------------------------------------------------===//

LogicalResult Differentiator::vjpUnary(UnaryOp op, Value dy) {
  Value x = op.getInput(), y = op.getResult();
  Type elem = tensorOf(x).getElementType();
  auto c = [&](double v) { return constant(v, elem); };
  double alpha = op.getAlpha() ? op.getAlpha()->convertToDouble() : 0.0;
  Value dx;
  switch (op.getFn()) {
  case UnaryFn::neg:
    dx = unary(UnaryFn::neg, dy);
    break;
  case UnaryFn::exp:
    dx = mul(dy, y);
    break;
  case UnaryFn::log:
    dx = div(dy, x);
    break;
  case UnaryFn::sqrt: // 1 / (2 sqrt(x))
    dx = mul(dy, div(c(0.5), y));
    break;
  case UnaryFn::rsqrt: // -x^(-3/2) / 2 = -y^3 / 2
    dx = mul(dy, mul(mul(y, y), scale(y, -0.5)));
    break;
  case UnaryFn::abs: // sign(x), 0 at 0
    dx = mul(dy,
             sub(binary(BinaryFn::gt, x, c(0)), binary(BinaryFn::gt, c(0), x)));
    break;
  case UnaryFn::relu: // 1 where x > 0
    dx = mul(dy, binary(BinaryFn::gt, x, c(0)));
    break;
  case UnaryFn::sigmoid: // y (1 - y)
    dx = mul(dy, mul(y, sub(c(1), y)));
    break;
  case UnaryFn::tanh: // 1 - y^2
    dx = mul(dy, sub(c(1), mul(y, y)));
    break;
  case UnaryFn::gelu: { // Phi(x) + x phi(x)
    Value phi = scale(add(c(1), unary(UnaryFn::erf, scale(x, kSqrtHalf))), 0.5);
    Value density =
        scale(unary(UnaryFn::exp, scale(mul(x, x), -0.5)), kInvSqrtTwoPi);
    dx = mul(dy, add(phi, mul(x, density)));
    break;
  }
  case UnaryFn::elu: { // 1 where x > 0, else alpha exp(x) = y + alpha
    Value m = binary(BinaryFn::gt, x, c(0));
    dx = mul(dy, add(m, mul(sub(c(1), m), add(y, c(alpha)))));
    break;
  }
  case UnaryFn::leaky_relu: { // 1 where x > 0, else alpha
    Value m = binary(BinaryFn::gt, x, c(0));
    dx = mul(dy, add(c(alpha), scale(m, 1.0 - alpha)));
    break;
  }
  case UnaryFn::erf: // 2 / sqrt(pi) exp(-x^2)
    dx = mul(dy, scale(unary(UnaryFn::exp, unary(UnaryFn::neg, mul(x, x))),
                       kTwoOverSqrtPi));
    break;
  case UnaryFn::sin: // cos(x)
    dx = mul(dy, unary(UnaryFn::cos, x));
    break;
  case UnaryFn::cos: // -sin(x)
    dx = mul(dy, unary(UnaryFn::neg, unary(UnaryFn::sin, x)));
    break;
  }
  accumulate(x, dx);
  return success();
}

LogicalResult Differentiator::vjpBinary(BinaryOp op, Value dy) {
  Value l = op.getLhs(), r = op.getRhs(), y = op.getResult();
  bool needL = active.contains(l), needR = active.contains(r);
  Type elem = tensorOf(y).getElementType();
  Type yt = y.getType();
  auto c = [&](double v) { return constant(v, elem); };
  // Everything below has the result's (broadcast) shape.
  auto at = [&](BinaryFn fn, Value p, Value q) {
    return binaryAs(fn, p, q, yt);
  };
  Value cl, cr; // contributions at the result's (broadcast) shape
  switch (op.getFn()) {
  case BinaryFn::add:
    cl = dy;
    cr = dy;
    break;
  case BinaryFn::sub:
    cl = dy;
    if (needR)
      cr = unary(UnaryFn::neg, dy);
    break;
  case BinaryFn::mul:
    if (needL)
      cl = at(BinaryFn::mul, dy, r);
    if (needR)
      cr = at(BinaryFn::mul, dy, l);
    break;
  case BinaryFn::div: // d/dr (l / r) = -y / r
    if (needL)
      cl = at(BinaryFn::div, dy, r);
    if (needR)
      cr = unary(UnaryFn::neg, at(BinaryFn::div, mul(dy, y), r));
    break;
  case BinaryFn::max:
  case BinaryFn::min: {
    // The forward op returns the left operand on a tie, so the right one
    // gets the gradient only where it is strictly better.
    Value rightWins = op.getFn() == BinaryFn::max ? at(BinaryFn::gt, r, l)
                                                  : at(BinaryFn::gt, l, r);
    if (needL)
      cl = mul(dy, sub(c(1), rightWins));
    if (needR)
      cr = mul(dy, rightWins);
    break;
  }
  case BinaryFn::pow: // r l^(r-1), and y log(l) (defined for l > 0)
    if (needL)
      cl = mul(dy, at(BinaryFn::mul, r, at(BinaryFn::pow, l, sub(r, c(1)))));
    if (needR)
      cr = mul(dy, at(BinaryFn::mul, y, unary(UnaryFn::log, l)));
    break;
  case BinaryFn::gt: // isComparison: never active (isNonDifferentiable)
  case BinaryFn::ge:
  case BinaryFn::eq:
  case BinaryFn::ne:
    return success();
  case BinaryFn::mask: // the gradient goes where the value came from
    if (needR)
      cr = at(BinaryFn::mask, l, dy);
    break;
  }
  if (needL && cl) {
    Value s = sumTo(cl, tensorOf(l), y);
    if (!s)
      return op.emitOpError("gnn-autodiff: cannot find the graph of the rows");
    accumulate(l, s);
  }
  if (needR && cr) {
    Value s = sumTo(cr, tensorOf(r), y);
    if (!s)
      return op.emitOpError("gnn-autodiff: cannot find the graph of the rows");
    accumulate(r, s);
  }
  return success();
}

LogicalResult Differentiator::vjpReduce(ReduceOp op, Value dy) {
  Value x = op.getInput();
  DomainTensorType xt = tensorOf(x);
  // The result with the reduced axes kept as 1.
  SmallVector<int64_t> kept(xt.getShape());
  SmallVector<int64_t> axes;
  if (op.getAxisAttr())
    axes.push_back(op.getAxisAttr().getInt());
  else
    for (int64_t i = 0; i < xt.getRank(); ++i)
      axes.push_back(i);
  for (int64_t a : axes)
    kept[a] = 1;
  Value dyk = reshape(dy, xt.withShape(kept));
  Value dx;
  switch (op.getFn()) {
  case ReduceFn::sum:
    dx = broadcastLike(dyk, x);
    break;
  case ReduceFn::mean: {
    int64_t count = 1;
    bool dynamic = false;
    for (int64_t a : axes) {
      dynamic |= ShapedType::isDynamic(xt.getShape()[a]);
      if (!ShapedType::isDynamic(xt.getShape()[a]))
        count *= xt.getShape()[a];
    }
    if (!dynamic) {
      dx = broadcastLike(scale(dyk, 1.0 / static_cast<double>(count)), x);
      break;
    }
    // A run-time count: sum ones over the same axes.
    Value n = broadcastLike(constant(1.0, xt.getElementType()), x);
    for (int64_t a : axes)
      n = reduceSum(n, a, /*keepdims=*/true);
    dx = broadcastLike(div(dyk, n), x);
    break;
  }
  case ReduceFn::max:
  case ReduceFn::min: {
    Value mask = b.create<ReduceSelectOp>(loc, x.getType(), op.getFnAttr(), x,
                                          op.getAxisAttr());
    dx = mul(broadcastLike(dyk, x), mask);
    break;
  }
  case ReduceFn::logsumexp:
    llvm_unreachable("gnn.reduce rejects logsumexp");
  }
  accumulate(x, dx);
  return success();
}

LogicalResult Differentiator::vjpMatmul(MatmulOp op, Value dy) {
  Value a = op.getLhs(), w = op.getRhs();
  DomainTensorType at = tensorOf(a), wt = tensorOf(w);
  if (active.contains(a)) {
    SmallVector<int64_t> shape{wt.getShape()[1], wt.getShape()[0]};
    Value wT = b.create<TransposeOp>(loc, wt.withShape(shape), w);
    accumulate(a, b.create<MatmulOp>(loc, a.getType(), dy, wT));
  }
  if (active.contains(w)) {
    // dW = A^T dY, with A flattened to [rows, k] over every leading axis
    // (the vertex or edge axis included).
    Value a2 = a, dy2 = dy;
    if (at.getDomain() != Domain::dense) {
      Value graph = graphOf(a);
      if (!graph)
        return op.emitOpError(
            "gnn-autodiff: cannot find the graph of the rows");
      a2 = collect(graph, a);
      dy2 = collect(graph, dy);
    }
    auto flatten = [&](Value v) {
      DomainTensorType t = tensorOf(v);
      int64_t rows = 1;
      for (int64_t d : t.getShape().drop_back())
        rows = ShapedType::isDynamic(d) || ShapedType::isDynamic(rows)
                   ? ShapedType::kDynamic
                   : rows * d;
      return reshape(v, t.withShape({rows, t.getShape().back()}));
    };
    a2 = flatten(a2);
    dy2 = flatten(dy2);
    DomainTensorType a2t = tensorOf(a2);
    Value aT = b.create<TransposeOp>(
        loc, a2t.withShape({a2t.getShape()[1], a2t.getShape()[0]}), a2);
    accumulate(w, b.create<MatmulOp>(loc, w.getType(), aT, dy2));
  }
  return success();
}

LogicalResult Differentiator::vjpCall(func::CallOp op, Value dy) {
  auto it = backwards.find(op.getCallee());
  if (it == backwards.end())
    return op.emitOpError("gnn-autodiff: @")
           << op.getCallee()
           << " has no backward function (it was fused, or it could not be "
              "differentiated); run gnn-autodiff before gnn-fuse";
  func::FuncOp callee = it->second;
  SmallVector<Value> operands(op.getOperands());
  operands.push_back(dy);
  auto call = b.create<func::CallOp>(loc, callee, operands);
  unsigned next = 0;
  for (Value operand : op.getOperands()) {
    if (!isa<DomainTensorType>(operand.getType()))
      continue;
    accumulate(operand, call.getResult(next++));
  }
  return success();
}

LogicalResult Differentiator::vjp(Operation *op) {
  if (op->getNumResults() != 1) {
    // Only calls of backward functions have several results.
    if (llvm::none_of(op->getResults(),
                      [&](Value r) { return adjoint.count(r); }))
      return success();
    return op->emitOpError("gnn-autodiff: no derivative for an op with ")
           << op->getNumResults() << " results";
  }
  Value y = op->getResult(0);
  Value dy = adjoint.lookup(y);
  if (!dy)
    return success();
  loc = op->getLoc();
  if (auto o = dyn_cast<AttachOp>(op)) {
    accumulate(o.getInput(), b.create<CollectOp>(loc, o.getInput().getType(),
                                                 o.getGraph(), dy));
    return success();
  }
  if (auto o = dyn_cast<CollectOp>(op)) {
    accumulate(o.getInput(), b.create<AttachOp>(loc, o.getInput().getType(),
                                                o.getGraph(), dy));
    return success();
  }
  if (auto o = dyn_cast<SplatOp>(op)) {
    Value rows = reduceSum(collect(o.getGraph(), dy), 0, /*keepdims=*/false);
    accumulate(o.getInput(), rows);
    return success();
  }
  if (auto o = dyn_cast<GatherOp>(op)) {
    accumulate(o.getInput(),
               b.create<ScatterOp>(loc, o.getInput().getType(), ReduceFn::sum,
                                   o.getGraph(), dy));
    return success();
  }
  if (auto o = dyn_cast<ScatterOp>(op)) {
    Value graph = o.getGraph();
    Value m = o.getInput();
    Value dm = b.create<GatherOp>(loc, m.getType(), graph, dy);
    switch (o.getFn()) {
    case ReduceFn::sum:
      break;
    case ReduceFn::mean: {
      // Every edge has a group of at least itself, so no division by 0.
      Domain by = tensorOf(y).getDomain();
      auto degType = DomainTensorType::get(b.getContext(), Domain::dense,
                                           {ShapedType::kDynamic},
                                           tensorOf(m).getElementType());
      Value deg = by == Domain::dst
                      ? b.create<InDegreeOp>(loc, degType, graph).getResult()
                      : b.create<OutDegreeOp>(loc, degType, graph).getResult();
      Value rows = b.create<AttachOp>(
          loc, degType.withShape(ArrayRef<int64_t>()).withDomain(by), graph,
          deg);
      Value perEdge = b.create<GatherOp>(
          loc, tensorOf(rows).withDomain(Domain::edge), graph, rows);
      dm = div(dm, perEdge);
      break;
    }
    case ReduceFn::max:
    case ReduceFn::min: {
      Value mask = b.create<ScatterSelectOp>(
          loc, m.getType(), o.getFnAttr(), graph, m,
          DomainAttr::get(b.getContext(), tensorOf(y).getDomain()));
      dm = mul(dm, mask);
      break;
    }
    case ReduceFn::logsumexp: {
      // d logsumexp / d m_e = softmax weight of e = exp(m_e - gather(y)).
      Value lse = b.create<GatherOp>(loc, m.getType(), graph, y);
      dm = mul(dm, unary(UnaryFn::exp, sub(m, lse)));
      break;
    }
    }
    accumulate(m, dm);
    return success();
  }
  if (auto o = dyn_cast<EdgeSoftmaxOp>(op)) {
    // dx = y (dy - gather(sum over the group of dy y))
    Value graph = o.getGraph();
    Value dyy = mul(dy, y);
    Value sums = b.create<ScatterOp>(loc, tensorOf(y).withDomain(o.getBy()),
                                     ReduceFn::sum, graph, dyy);
    Value back = b.create<GatherOp>(loc, y.getType(), graph, sums);
    accumulate(o.getInput(), mul(y, sub(dy, back)));
    return success();
  }
  if (auto o = dyn_cast<ReadoutOp>(op)) {
    Value x = o.getInput();
    Value graph = o.getGraph();
    Value spread = b.create<BroadcastGraphsOp>(loc, x.getType(), graph, dy);
    switch (o.getFn()) {
    case ReduceFn::sum:
      accumulate(x, spread);
      break;
    case ReduceFn::mean: {
      // Divided per vertex by its graph's size (at least 1: it holds the
      // vertex), so empty graphs never divide by 0.
      DomainTensorType xt = tensorOf(x);
      auto sizeType =
          DomainTensorType::get(b.getContext(), Domain::dense,
                                {ShapedType::kDynamic}, xt.getElementType());
      Value sizes = b.create<GraphSizesOp>(loc, sizeType, graph);
      SmallVector<int64_t> shape(xt.getRank(), 1);
      shape[0] = ShapedType::kDynamic;
      sizes = reshape(sizes, sizeType.withShape(shape));
      Value perVertex = b.create<BroadcastGraphsOp>(
          loc, tensorOf(sizes).withShape(shape), graph, sizes);
      accumulate(x, div(spread, perVertex));
      break;
    }
    case ReduceFn::max:
    case ReduceFn::min: {
      Value mask =
          b.create<ReadoutSelectOp>(loc, x.getType(), o.getFn(), graph, x);
      accumulate(x, mul(spread, mask));
      break;
    }
    case ReduceFn::logsumexp:
      llvm_unreachable("gnn.readout rejects logsumexp");
    }
    return success();
  }
  if (auto o = dyn_cast<BroadcastGraphsOp>(op)) {
    accumulate(o.getInput(),
               b.create<ReadoutOp>(loc, o.getInput().getType(), ReduceFn::sum,
                                   o.getGraph(), dy));
    return success();
  }
  if (auto o = dyn_cast<UnaryOp>(op))
    return vjpUnary(o, dy);
  if (auto o = dyn_cast<BinaryOp>(op))
    return vjpBinary(o, dy);
  if (auto o = dyn_cast<BroadcastLikeOp>(op)) {
    Value s = sumTo(dy, tensorOf(o.getInput()), o.getLike());
    if (!s)
      return op->emitOpError("gnn-autodiff: cannot find the graph of the rows");
    accumulate(o.getInput(), s);
    return success();
  }
  if (auto o = dyn_cast<MatmulOp>(op))
    return vjpMatmul(o, dy);
  if (auto o = dyn_cast<ReshapeOp>(op)) {
    accumulate(o.getInput(), reshape(dy, tensorOf(o.getInput())));
    return success();
  }
  if (auto o = dyn_cast<ReduceOp>(op))
    return vjpReduce(o, dy);
  if (auto o = dyn_cast<SoftmaxOp>(op)) {
    int64_t axis = o.getAxis();
    Value dx;
    if (o.getLog()) // dy - softmax(x) sum(dy)
      dx = sub(dy, mul(unary(UnaryFn::exp, y), reduceSum(dy, axis, true)));
    else // y (dy - sum(dy y))
      dx = mul(y, sub(dy, reduceSum(mul(dy, y), axis, true)));
    accumulate(o.getInput(), dx);
    return success();
  }
  if (auto o = dyn_cast<ConcatOp>(op)) {
    int64_t axis = o.getAxis();
    int64_t start = 0;
    for (Value input : o.getInputs()) {
      int64_t size = tensorOf(input).getShape()[axis];
      if (ShapedType::isDynamic(size) || ShapedType::isDynamic(start))
        return op->emitOpError(
            "gnn-autodiff: no derivative for a concatenation along an axis "
            "of run-time size");
      if (active.contains(input))
        accumulate(input, b.create<SliceOp>(loc, input.getType(), dy,
                                            b.getI64IntegerAttr(axis),
                                            b.getI64IntegerAttr(start),
                                            b.getI64IntegerAttr(size)));
      start += size;
    }
    return success();
  }
  if (auto o = dyn_cast<TransposeOp>(op)) {
    accumulate(o.getInput(),
               b.create<TransposeOp>(loc, o.getInput().getType(), dy));
    return success();
  }
  // The destination rows of a block's sources and their transpose: the
  // gradient of the first N_dst rows goes back to them, the other rows of
  // the sources get zeros.
  if (auto o = dyn_cast<DstRowsOp>(op)) {
    accumulate(o.getInput(), b.create<PadDstRowsOp>(loc, o.getInput().getType(),
                                                    o.getGraph(), dy));
    return success();
  }
  if (auto o = dyn_cast<PadDstRowsOp>(op)) {
    accumulate(o.getInput(), b.create<DstRowsOp>(loc, o.getInput().getType(),
                                                 o.getGraph(), dy));
    return success();
  }
  if (auto o = dyn_cast<DropoutOp>(op)) {
    // The same seed and probability draw the same mask.
    accumulate(o.getInput(),
               b.create<DropoutOp>(loc, dy.getType(), dy, o.getPAttr(),
                                   o.getSeedAttr()));
    return success();
  }
  if (auto o = dyn_cast<func::CallOp>(op))
    return vjpCall(o, dy);
  return op->emitOpError("gnn-autodiff: no derivative for this op");
}

LogicalResult Differentiator::run() {
  Block &body = forward.getBody().front();
  Block *entry = backward.addEntryBlock();
  b.setInsertionPointToEnd(entry);

  // 1. Recompute the forward function.
  IRMapping mapping;
  for (auto [from, to] : llvm::zip(body.getArguments(), entry->getArguments()))
    mapping.map(from, to);
  for (auto [from, to] : llvm::zip(body.getArguments(), entry->getArguments()))
    to.setLoc(from.getLoc());
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  SmallVector<Operation *> clones;
  for (Operation &op : body.without_terminator())
    clones.push_back(b.clone(op, mapping));
  Value result = mapping.lookup(ret.getOperand(0));
  Value cotangent = entry->getArguments().back();

  // 2. Activity: what depends on a floating-point tensor argument.
  for (BlockArgument arg : entry->getArguments().drop_back())
    if (isFloatTensor(arg))
      active.insert(arg);
  for (Operation *op : clones) {
    if (isNonDifferentiable(op))
      continue;
    if (llvm::any_of(op->getOperands(),
                     [&](Value v) { return active.contains(v); }))
      for (Value r : op->getResults())
        if (isFloatTensor(r))
          active.insert(r);
  }

  // 3. Adjoints, in reverse.
  if (active.contains(result))
    adjoint[result] = cotangent;
  for (Operation *op : llvm::reverse(clones))
    if (failed(vjp(op)) || failed(status))
      return failure();

  // 4. The gradients: zeros where an argument does not reach the result.
  loc = ret.getLoc();
  SmallVector<Value> grads;
  for (BlockArgument arg : entry->getArguments().drop_back()) {
    if (!isa<DomainTensorType>(arg.getType()))
      continue;
    Value grad = adjoint.lookup(arg);
    if (!grad)
      grad = b.create<BroadcastLikeOp>(
          loc, arg.getType(), constant(0.0, tensorOf(arg).getElementType()),
          arg);
    grads.push_back(grad);
  }
  b.create<func::ReturnOp>(loc, grads);

  // 5. Erase what nobody reads (every gnn op and every layer is pure).
  SmallVector<Operation *> ops;
  for (Operation &op : entry->without_terminator())
    ops.push_back(&op);
  for (Operation *op : llvm::reverse(ops)) // users before their operands
    if (op->use_empty() &&
        (isa<GNNDialect>(op->getDialect()) || isa<func::CallOp>(op)))
      op->erase();
  return success();
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

struct AutodiffPass : public gnnc::gnn::impl::GNNAutodiffBase<AutodiffPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::StringMap<func::FuncOp> functions;
    llvm::StringMap<func::FuncOp> backwards;
    for (auto func : module.getOps<func::FuncOp>())
      functions[func.getName()] = func;
    for (auto func : module.getOps<func::FuncOp>())
      if (auto of = func->getAttrOfType<FlatSymbolRefAttr>(kBackwardOfAttrName))
        backwards[of.getValue()] = func;

    // Callee-first order.
    SmallVector<func::FuncOp> order;
    DenseSet<Operation *> visited;
    std::function<void(func::FuncOp)> visit = [&](func::FuncOp func) {
      if (!visited.insert(func).second)
        return;
      func.walk([&](func::CallOp call) {
        auto it = functions.find(call.getCallee());
        if (it != functions.end())
          visit(it->second);
      });
      order.push_back(func);
    };
    for (auto func : module.getOps<func::FuncOp>())
      visit(func);

    for (func::FuncOp func : order) {
      if (func.isExternal() || func->hasAttr(kBackwardOfAttrName) ||
          backwards.count(func.getName()))
        continue;
      bool fused = false;
      func.walk([&](AggregateOp) { fused = true; });
      if (fused)
        continue;
      if (failed(differentiate(module, func, backwards)))
        return signalPassFailure();
    }
  }

  LogicalResult differentiate(ModuleOp module, func::FuncOp func,
                              llvm::StringMap<func::FuncOp> &backwards) {
    FunctionType type = func.getFunctionType();
    if (type.getNumResults() != 1 ||
        !isa<DomainTensorType>(type.getResult(0)) ||
        func.getBody().getBlocks().size() != 1)
      return func.emitOpError("gnn-autodiff: needs one block and one tensor "
                              "result");
    std::string name = backwardName(func.getName());
    if (module.lookupSymbol(name))
      return func.emitOpError("gnn-autodiff: @")
             << name << " exists but is not marked " << kBackwardOfAttrName;
    SmallVector<Type> inputs(type.getInputs());
    inputs.push_back(type.getResult(0));
    SmallVector<Type> results;
    SmallVector<unsigned> tensorArgs;
    for (auto [i, t] : llvm::enumerate(type.getInputs()))
      if (isa<DomainTensorType>(t)) {
        results.push_back(t);
        tensorArgs.push_back(i);
      }
    OpBuilder builder(module.getContext());
    builder.setInsertionPointAfter(func);
    auto backward = builder.create<func::FuncOp>(
        func.getLoc(), name, builder.getFunctionType(inputs, results));
    backward->setAttr(kBackwardOfAttrName,
                      FlatSymbolRefAttr::get(func.getNameAttr()));
    for (unsigned i = 0; i < type.getNumInputs(); ++i)
      if (DictionaryAttr attrs = func.getArgAttrDict(i))
        backward.setArgAttrs(i, attrs);
    backward.setArgAttr(type.getNumInputs(), kNameAttrName,
                        builder.getStringAttr("cotangent"));
    for (auto [r, i] : llvm::enumerate(tensorArgs)) {
      std::string of = "arg" + std::to_string(i);
      if (auto param = func.getArgAttrOfType<StringAttr>(i, kParamAttrName))
        of = param.getValue().str();
      else if (auto n = func.getArgAttrOfType<StringAttr>(i, kNameAttrName))
        of = n.getValue().str();
      backward.setResultAttr(r, kGradOfAttrName, builder.getStringAttr(of));
    }
    Differentiator d(func, backward, backwards);
    if (failed(d.run())) {
      backward.erase();
      return failure();
    }
    backwards[func.getName()] = backward;
    return success();
  }
};

} // namespace
