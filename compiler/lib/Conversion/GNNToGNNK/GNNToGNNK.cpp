//===- GNNToGNNK.cpp - gnn.aggregate to gnnk kernels ----------------------===//
//
// Part of gnnc.
//
// Every `gnn.aggregate` becomes a kernel function and a `gnnk.launch` of it.
// The kernel follows the reference interpreter (Evaluator::aggregate)
// operation by operation, so that a backend printing it computes the same
// floats:
//
//   func.func @f.aggregate0(%g: !gnnk.graph, inputs..., outputs...) {
//     gnnk.for_vertices %v in %g by dst {
//       scratch rows, accumulators     (memref.alloca, private to %v)
//       accumulators = 0, first = true
//       gnnk.for_edges %e, %u in %g of %v by dst {
//         body ops, element by element  (scf.for nests into scratch rows)
//         reductions updated            (softmax_sum online)
//         first = false
//       }
//       finalise (mean, softmax_sum; nothing for an empty neighbourhood)
//       store the accumulators to row %v of the outputs
//     }
//   }
//
// A row value of the body is a `Row`: a buffer read with leading indices
// (row %u of a src input, row %e of an edge input, a whole dense input or
// scratch row) or a scalar broadcast to a shape (a constant). Ops write
// fresh scratch rows; a reshape of a whole buffer is a
// `memref.reinterpret_cast` (rows are row-major and contiguous), of an input
// row a copy first. Feature loops are `scf.for` without iteration arguments:
// running values (a matmul's dot product, a softmax's maximum) live in
// memory, which keeps the IR simple for the printers; loops over an axis of
// size 1 are omitted (index 0).
//
//===----------------------------------------------------------------------===//

#include "gnnc/Conversion/GNNToGNNK/GNNToGNNK.h"

#include "gnnc/Dialect/GNN/IR/GNN.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <limits>

namespace gnnc::gnnk {
#define GEN_PASS_DEF_GNNLOWERTOKERNELS
#include "gnnc/Conversion/Passes.h.inc"
} // namespace gnnc::gnnk

using namespace mlir;
using namespace gnnc;
using namespace gnnc::gnnk;
using gnn::Domain;
using gnn::DomainTensorType;

namespace {

int64_t numElements(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

/// Row-major strides of a static shape.
SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

/// Kernel values (aggregate inputs, results and body values) must be gnn
/// tensors of floats with a static row shape; reports on `op` otherwise.
LogicalResult checkKernelType(Operation *op, Type type) {
  auto tensor = dyn_cast<DomainTensorType>(type);
  if (!tensor)
    return op->emitOpError("cannot be lowered to a kernel: ")
           << type << " is not a gnn tensor";
  if (!isa<FloatType>(tensor.getElementType()))
    return op->emitOpError("cannot be lowered to a kernel: only float "
                           "tensors are supported, got ")
           << type;
  if (llvm::any_of(tensor.getShape(), ShapedType::isDynamic))
    return op->emitOpError("cannot be lowered to a kernel: the row shape of ")
           << type << " is not static";
  return success();
}

/// A row inside a kernel: `buffer[prefix..., i...]`, or `scalar` at every
/// index. `shape` is the row shape.
struct Row {
  Value buffer;
  SmallVector<Value, 1> prefix;
  Value scalar;
  SmallVector<int64_t, 4> shape;
  Type elementType;
};

/// One reduction of the aggregate and its per-vertex state.
struct Reduction {
  StringRef kind;
  Value output;        // the kernel's output memref
  Row acc;             // accumulator of the result row shape
  Value yield, logits; // the body values it folds (softmax_sum: both)
  // softmax_sum only: running maximum and sum per logit element, and this
  // edge's rescaling factor and weight.
  Row runMax, runSum, scale, weight;
  double dropout = 0;
  int64_t seed = 0;
  // logsumexp only: the softmax_sum of the same logits whose running maximum
  // and sum it reads instead of folding its own (-1: none).
  int sharedWith = -1;
};

class KernelBuilder {
public:
  KernelBuilder(gnn::AggregateOp aggregate, func::FuncOp kernel)
      : aggregate(aggregate), kernel(kernel), b(kernel.getContext()),
        loc(aggregate.getLoc()) {}

  LogicalResult build();

private:
  // Constants are created once, at the top of the kernel (before the vertex
  // loop), with the location of the op that first needs them.
  Value constant(TypedAttr attr) {
    auto it = constants.find(attr);
    if (it != constants.end())
      return it->second;
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(vertexLoop);
    Value c = b.create<arith::ConstantOp>(loc, attr);
    constants[attr] = c;
    return c;
  }
  Value index(int64_t value) { return constant(b.getIndexAttr(value)); }
  Value floatConst(Type type, double value) {
    return constant(b.getFloatAttr(type, value));
  }
  Value boolConst(bool value) { return constant(b.getBoolAttr(value)); }
  /// Whether `x` is a NaN: unordered with itself.
  Value isNaN(Value x) {
    return b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNO, x, x);
  }

  /// A scratch buffer of `shape`, allocated at the top of the vertex loop.
  Value allocBuffer(ArrayRef<int64_t> shape, Type elementType) {
    OpBuilder::InsertionGuard guard(b);
    if (lastAlloca)
      b.setInsertionPointAfter(lastAlloca);
    else
      b.setInsertionPointToStart(vertexBody);
    auto alloca =
        b.create<memref::AllocaOp>(loc, MemRefType::get(shape, elementType));
    lastAlloca = alloca;
    return alloca;
  }
  Row allocRow(ArrayRef<int64_t> shape, Type elementType) {
    Row row;
    row.buffer = allocBuffer(shape, elementType);
    row.shape.assign(shape.begin(), shape.end());
    row.elementType = elementType;
    return row;
  }

  /// The row of a body value (operands are lowered before their users).
  Row row(Value value) const {
    auto it = rows.find(value);
    assert(it != rows.end() && "body value lowered before its users");
    return it->second;
  }

  Value load(const Row &row, ArrayRef<Value> indices) {
    if (row.scalar)
      return row.scalar;
    SmallVector<Value> all(row.prefix.begin(), row.prefix.end());
    all.append(indices.begin(), indices.end());
    return b.create<memref::LoadOp>(loc, row.buffer, all);
  }
  void store(Value value, const Row &row, ArrayRef<Value> indices) {
    SmallVector<Value> all(row.prefix.begin(), row.prefix.end());
    all.append(indices.begin(), indices.end());
    b.create<memref::StoreOp>(loc, value, row.buffer, all);
  }

  /// Runs `body` at every index of `shape`, in row-major order, inside a nest
  /// of scf.for (none for an axis of size 1).
  void forEach(ArrayRef<int64_t> shape,
               function_ref<void(ArrayRef<Value>)> body) {
    if (llvm::is_contained(shape, 0))
      return;
    OpBuilder::InsertionGuard guard(b);
    SmallVector<Value> ivs;
    for (int64_t n : shape) {
      if (n == 1) {
        ivs.push_back(index(0));
        continue;
      }
      Value lower = index(0), upper = index(n), step = index(1);
      auto loop = b.create<scf::ForOp>(loc, lower, upper, step);
      b.setInsertionPointToStart(loop.getBody());
      ivs.push_back(loop.getInductionVar());
    }
    body(ivs);
  }
  /// A sequential loop over [from, to).
  void forRange(int64_t from, int64_t to, function_ref<void(Value)> body) {
    if (from >= to)
      return;
    OpBuilder::InsertionGuard guard(b);
    if (to - from == 1) {
      body(index(from));
      return;
    }
    Value lower = index(from), upper = index(to), step = index(1);
    auto loop = b.create<scf::ForOp>(loc, lower, upper, step);
    b.setInsertionPointToStart(loop.getBody());
    body(loop.getInductionVar());
  }

  /// The indices of an operand of shape `from` read at result index `ivs`
  /// under NumPy broadcasting (right-aligned; axes of size 1 read index 0).
  SmallVector<Value> broadcast(ArrayRef<int64_t> from, ArrayRef<Value> ivs) {
    SmallVector<Value> out;
    size_t offset = ivs.size() - from.size();
    for (size_t d = 0; d < from.size(); ++d)
      out.push_back(from[d] == 1 ? index(0) : ivs[offset + d]);
    return out;
  }
  /// Row-major flat index of `ivs` in `shape`.
  Value flatIndex(ArrayRef<int64_t> shape, ArrayRef<Value> ivs) {
    SmallVector<int64_t> strides = stridesOf(shape);
    Value flat;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (shape[d] == 1)
        continue;
      Value term = ivs[d];
      if (strides[d] != 1)
        term = b.create<arith::MulIOp>(loc, term, index(strides[d]));
      flat = flat ? b.create<arith::AddIOp>(loc, flat, term).getResult() : term;
    }
    return flat ? flat : index(0);
  }
  /// The dropout multiplier of element `flat` of the current edge's row of
  /// `rowSize` elements: gnnk.dropout_keep(seed, edge * rowSize + flat, p).
  Value dropoutKeep(int64_t seed, double p, int64_t rowSize, Value flat,
                    Type type) {
    Value base = b.create<arith::MulIOp>(loc, edge, index(rowSize));
    Value at = b.create<arith::AddIOp>(loc, base, flat);
    Value seedValue = constant(b.getI64IntegerAttr(seed));
    return b.create<DropoutKeepOp>(loc, type, seedValue, at,
                                   b.getF64FloatAttr(p));
  }

  Value unary(gnn::UnaryFn fn, Value x, double alpha);
  Value binary(gnn::BinaryFn fn, Value x, Value y);
  Value compare(arith::CmpFPredicate predicate, Value x, Value y);

  LogicalResult checkType(Operation *op, Type type, Type &elementType,
                          SmallVectorImpl<int64_t> &shape);
  LogicalResult lowerBodyOp(Operation *op);
  LogicalResult lowerUnary(gnn::UnaryOp op);
  LogicalResult lowerBinary(gnn::BinaryOp op);
  LogicalResult lowerReduce(gnn::ReduceOp op);
  LogicalResult lowerMatmul(gnn::MatmulOp op);
  LogicalResult lowerReshape(gnn::ReshapeOp op);
  LogicalResult lowerDropout(gnn::DropoutOp op);
  LogicalResult lowerSoftmax(gnn::SoftmaxOp op);
  LogicalResult lowerConcat(gnn::ConcatOp op);
  LogicalResult lowerTranspose(gnn::TransposeOp op);

  void initReduction(Reduction &r);
  std::pair<Value, Value> foldOnline(Reduction &r, Value l, ArrayRef<Value> idx,
                                     Value first);
  void updateReduction(Reduction &r, Value first);
  void finalizeReduction(Reduction &r, Value degree);

  gnn::AggregateOp aggregate;
  func::FuncOp kernel;
  OpBuilder b;
  Location loc;
  Value graph, vertex, edge, neighbour;
  Block *vertexBody = nullptr;
  Operation *lastAlloca = nullptr;
  Operation *vertexLoop = nullptr;
  DenseMap<Attribute, Value> constants;
  DenseMap<Value, Row> rows;
};

//===----------------------------------------------------------------------===//
// Scalar maths, as the interpreter writes it
//===----------------------------------------------------------------------===//

Value KernelBuilder::unary(gnn::UnaryFn fn, Value x, double alpha) {
  using gnn::UnaryFn;
  Type t = x.getType();
  auto positive = [&]() -> Value {
    return b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGT, x,
                                   floatConst(t, 0.0));
  };
  switch (fn) {
  case UnaryFn::neg:
    return b.create<arith::NegFOp>(loc, x);
  case UnaryFn::exp:
    return b.create<math::ExpOp>(loc, x);
  case UnaryFn::log:
    return b.create<math::LogOp>(loc, x);
  case UnaryFn::sqrt:
    return b.create<math::SqrtOp>(loc, x);
  case UnaryFn::rsqrt: // 1 / sqrt(x), rounded twice as the interpreter does
  {
    Value one = floatConst(t, 1.0);
    Value root = b.create<math::SqrtOp>(loc, x);
    return b.create<arith::DivFOp>(loc, one, root);
  }
  case UnaryFn::abs:
    return b.create<math::AbsFOp>(loc, x);
  case UnaryFn::relu: // x <= 0 ? 0 : x, so a NaN passes through
  {
    Value notPositive = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLE,
                                                x, floatConst(t, 0.0));
    return b.create<arith::SelectOp>(loc, notPositive, floatConst(t, 0.0), x);
  }
  case UnaryFn::sigmoid: { // 1 / (1 + exp(-x))
    Value e = b.create<math::ExpOp>(loc, b.create<arith::NegFOp>(loc, x));
    Value one = floatConst(t, 1.0);
    Value denominator = b.create<arith::AddFOp>(loc, one, e);
    return b.create<arith::DivFOp>(loc, one, denominator);
  }
  case UnaryFn::tanh:
    return b.create<math::TanhOp>(loc, x);
  case UnaryFn::gelu: { // 0.5 * x * (1 + erf(x / sqrt(2)))
    double sqrt2 =
        t.isF32() ? static_cast<double>(std::sqrt(2.0f)) : std::sqrt(2.0);
    Value half = b.create<arith::MulFOp>(loc, floatConst(t, 0.5), x);
    Value erf = b.create<math::ErfOp>(
        loc, b.create<arith::DivFOp>(loc, x, floatConst(t, sqrt2)));
    return b.create<arith::MulFOp>(
        loc, half, b.create<arith::AddFOp>(loc, floatConst(t, 1.0), erf));
  }
  // elu and leaky_relu: a NaN takes the second branch and stays a NaN.
  case UnaryFn::elu: { // x > 0 ? x : alpha * (exp(x) - 1)
    Value em1 = b.create<arith::SubFOp>(loc, b.create<math::ExpOp>(loc, x),
                                        floatConst(t, 1.0));
    Value neg = b.create<arith::MulFOp>(loc, floatConst(t, alpha), em1);
    return b.create<arith::SelectOp>(loc, positive(), x, neg);
  }
  case UnaryFn::leaky_relu: { // x > 0 ? x : alpha * x
    Value neg = b.create<arith::MulFOp>(loc, floatConst(t, alpha), x);
    return b.create<arith::SelectOp>(loc, positive(), x, neg);
  }
  case UnaryFn::erf:
    return b.create<math::ErfOp>(loc, x);
  case UnaryFn::sin:
    return b.create<math::SinOp>(loc, x);
  case UnaryFn::cos:
    return b.create<math::CosOp>(loc, x);
  }
  llvm_unreachable("unknown unary function");
}

Value KernelBuilder::compare(arith::CmpFPredicate predicate, Value x, Value y) {
  Type t = x.getType();
  Value holds = b.create<arith::CmpFOp>(loc, predicate, x, y);
  return b.create<arith::SelectOp>(loc, holds, floatConst(t, 1.0),
                                   floatConst(t, 0.0));
}

Value KernelBuilder::binary(gnn::BinaryFn fn, Value x, Value y) {
  using gnn::BinaryFn;
  switch (fn) {
  case BinaryFn::add:
    return b.create<arith::AddFOp>(loc, x, y);
  case BinaryFn::sub:
    return b.create<arith::SubFOp>(loc, x, y);
  case BinaryFn::mul:
    return b.create<arith::MulFOp>(loc, x, y);
  case BinaryFn::div:
    return b.create<arith::DivFOp>(loc, x, y);
  // torch.maximum / torch.minimum: a NaN on either side gives a NaN,
  // otherwise std::max / std::min (x on a tie).
  case BinaryFn::max: { // x < y || isnan(y) ? y : x
    Value lt = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLT, x, y);
    Value takeY = b.create<arith::OrIOp>(loc, lt, isNaN(y));
    return b.create<arith::SelectOp>(loc, takeY, y, x);
  }
  case BinaryFn::min: { // y < x || isnan(y) ? y : x
    Value lt = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLT, y, x);
    Value takeY = b.create<arith::OrIOp>(loc, lt, isNaN(y));
    return b.create<arith::SelectOp>(loc, takeY, y, x);
  }
  case BinaryFn::pow:
    return b.create<math::PowFOp>(loc, x, y);
  // Comparisons: 1 or 0 (ordered predicates: false with a NaN, except !=).
  case BinaryFn::gt:
    return compare(arith::CmpFPredicate::OGT, x, y);
  case BinaryFn::ge:
    return compare(arith::CmpFPredicate::OGE, x, y);
  case BinaryFn::eq:
    return compare(arith::CmpFPredicate::OEQ, x, y);
  case BinaryFn::ne:
    return compare(arith::CmpFPredicate::UNE, x, y);
  case BinaryFn::mask: { // x != 0 ? y : 0
    Type t = x.getType();
    Value nonzero = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::UNE, x,
                                            floatConst(t, 0.0));
    return b.create<arith::SelectOp>(loc, nonzero, y, floatConst(t, 0.0));
  }
  }
  llvm_unreachable("unknown binary function");
}

//===----------------------------------------------------------------------===//
// Body ops
//===----------------------------------------------------------------------===//

/// Body values must be gnn tensors with a static shape of floats.
LogicalResult KernelBuilder::checkType(Operation *op, Type type,
                                       Type &elementType,
                                       SmallVectorImpl<int64_t> &shape) {
  if (failed(checkKernelType(op, type)))
    return failure();
  auto tensor = cast<DomainTensorType>(type);
  elementType = tensor.getElementType();
  shape.assign(tensor.getShape().begin(), tensor.getShape().end());
  return success();
}

LogicalResult KernelBuilder::lowerBodyOp(Operation *op) {
  loc = op->getLoc();
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case<gnn::ConstantOp>([&](gnn::ConstantOp c) {
        auto type = cast<DomainTensorType>(c.getType());
        Row splat;
        splat.scalar =
            floatConst(type.getElementType(), c.getValue().convertToDouble());
        splat.shape.assign(type.getShape().begin(), type.getShape().end());
        splat.elementType = type.getElementType();
        rows[c.getResult()] = splat;
        return success();
      })
      .Case<gnn::UnaryOp>([&](auto u) { return lowerUnary(u); })
      .Case<gnn::BinaryOp>([&](auto u) { return lowerBinary(u); })
      .Case<gnn::ReduceOp>([&](auto u) { return lowerReduce(u); })
      .Case<gnn::MatmulOp>([&](auto u) { return lowerMatmul(u); })
      .Case<gnn::ReshapeOp>([&](auto u) { return lowerReshape(u); })
      .Case<gnn::DropoutOp>([&](auto u) { return lowerDropout(u); })
      .Case<gnn::SoftmaxOp>([&](auto u) { return lowerSoftmax(u); })
      .Case<gnn::ConcatOp>([&](auto u) { return lowerConcat(u); })
      .Case<gnn::TransposeOp>([&](auto u) { return lowerTranspose(u); })
      .Default([&](Operation *other) {
        return other->emitOpError(
            "cannot be lowered to a kernel: not an op of an aggregate body");
      });
}

LogicalResult KernelBuilder::lowerUnary(gnn::UnaryOp op) {
  Row in = row(op.getInput());
  Row out = allocRow(in.shape, in.elementType);
  double alpha = op.getAlpha() ? op.getAlpha()->convertToDouble() : 0.0;
  forEach(out.shape, [&](ArrayRef<Value> ivs) {
    store(unary(op.getFn(), load(in, ivs), alpha), out, ivs);
  });
  rows[op.getResult()] = out;
  return success();
}

LogicalResult KernelBuilder::lowerBinary(gnn::BinaryOp op) {
  Row x = row(op.getLhs());
  Row y = row(op.getRhs());
  auto type = cast<DomainTensorType>(op.getResult().getType());
  Row out = allocRow(type.getShape(), type.getElementType());
  forEach(out.shape, [&](ArrayRef<Value> ivs) {
    Value a = load(x, broadcast(x.shape, ivs));
    Value c = load(y, broadcast(y.shape, ivs));
    store(binary(op.getFn(), a, c), out, ivs);
  });
  rows[op.getResult()] = out;
  return success();
}

/// One axis or all axes. Sums start from 0 and add in row-major order;
/// max and min start from the first element; mean divides by the count.
LogicalResult KernelBuilder::lowerReduce(gnn::ReduceOp op) {
  Row in = row(op.getInput());
  auto type = cast<DomainTensorType>(op.getResult().getType());
  Row out = allocRow(type.getShape(), type.getElementType());
  size_t rank = in.shape.size();
  SmallVector<bool> reduced(rank, !op.getAxisAttr());
  if (auto axis = op.getAxisAttr()) {
    if (axis.getInt() < 0 || axis.getInt() >= static_cast<int64_t>(rank))
      return op.emitOpError("cannot be lowered to a kernel: axis ")
             << axis.getInt() << " is out of range";
    reduced[axis.getInt()] = true;
  }
  SmallVector<int64_t> kept(in.shape.begin(), in.shape.end());
  int64_t count = 1;
  for (size_t d = 0; d < rank; ++d)
    if (reduced[d]) {
      count *= kept[d];
      kept[d] = 1;
    }
  bool keepdims = op.getKeepdims();
  auto outIndex = [&](ArrayRef<Value> ivs) {
    SmallVector<Value> idx;
    for (size_t d = 0; d < rank; ++d) {
      if (!reduced[d])
        idx.push_back(ivs[d]);
      else if (keepdims)
        idx.push_back(index(0));
    }
    return idx;
  };
  gnn::ReduceFn fn = op.getFn();
  bool extremum = fn == gnn::ReduceFn::max || fn == gnn::ReduceFn::min;
  Type t = in.elementType;
  // Start: 0, or the first element of the reduced axes for max / min (it is
  // visited again below, which leaves it unchanged).
  forEach(kept, [&](ArrayRef<Value> ivs) {
    Value init = extremum && count > 0 ? load(in, ivs) : floatConst(t, 0.0);
    store(init, out, outIndex(ivs));
  });
  if (count > 0)
    forEach(in.shape, [&](ArrayRef<Value> ivs) {
      SmallVector<Value> o = outIndex(ivs);
      Value x = load(in, ivs);
      Value acc = load(out, o);
      Value next;
      if (!extremum) {
        next = b.create<arith::AddFOp>(loc, acc, x);
      } else {
        // x > acc ? x : acc (max); x < acc ? x : acc (min).
        auto pred = fn == gnn::ReduceFn::max ? arith::CmpFPredicate::OGT
                                             : arith::CmpFPredicate::OLT;
        Value better = b.create<arith::CmpFOp>(loc, pred, x, acc);
        next = b.create<arith::SelectOp>(loc, better, x, acc);
      }
      store(next, out, o);
    });
  if (fn == gnn::ReduceFn::mean && count > 0)
    forEach(kept, [&](ArrayRef<Value> ivs) {
      SmallVector<Value> o = outIndex(ivs);
      Value acc = load(out, o);
      store(b.create<arith::DivFOp>(loc, acc,
                                    floatConst(t, static_cast<double>(count))),
            out, o);
    });
  rows[op.getResult()] = out;
  return success();
}

/// `[..., k] x [k, n]`: each output element starts at 0 and adds
/// `lhs[..., p] * rhs[p, j]` for p = 0, 1, ...
LogicalResult KernelBuilder::lowerMatmul(gnn::MatmulOp op) {
  Row lhs = row(op.getLhs());
  Row rhs = row(op.getRhs());
  if (rhs.shape.size() != 2 || lhs.shape.empty() ||
      lhs.shape.back() != rhs.shape[0])
    return op.emitOpError("cannot be lowered to a kernel: expected "
                          "[..., k] x [k, n]");
  auto type = cast<DomainTensorType>(op.getResult().getType());
  Row out = allocRow(type.getShape(), type.getElementType());
  int64_t k = rhs.shape[0];
  forEach(out.shape, [&](ArrayRef<Value> ivs) {
    store(floatConst(out.elementType, 0.0), out, ivs);
    forRange(0, k, [&](Value p) {
      SmallVector<Value> a(ivs.drop_back());
      a.push_back(p);
      Value x = load(lhs, a);
      Value w = load(rhs, {p, ivs.back()});
      Value acc = load(out, ivs);
      store(
          b.create<arith::AddFOp>(loc, acc, b.create<arith::MulFOp>(loc, x, w)),
          out, ivs);
    });
  });
  rows[op.getResult()] = out;
  return success();
}

/// A whole buffer is reinterpreted in place (rows are row-major); an input
/// row (a buffer with leading indices) is copied to a scratch row first.
LogicalResult KernelBuilder::lowerReshape(gnn::ReshapeOp op) {
  Row in = row(op.getInput());
  auto type = cast<DomainTensorType>(op.getResult().getType());
  if (in.scalar) {
    in.shape.assign(type.getShape().begin(), type.getShape().end());
    rows[op.getResult()] = in;
    return success();
  }
  if (!in.prefix.empty()) {
    Row copy = allocRow(in.shape, in.elementType);
    forEach(in.shape,
            [&](ArrayRef<Value> ivs) { store(load(in, ivs), copy, ivs); });
    in = copy;
  }
  Row out;
  out.shape.assign(type.getShape().begin(), type.getShape().end());
  out.elementType = in.elementType;
  out.buffer = b.create<memref::ReinterpretCastOp>(
      loc, MemRefType::get(out.shape, out.elementType), in.buffer,
      /*offset=*/0, out.shape, stridesOf(out.shape));
  rows[op.getResult()] = out;
  return success();
}

/// Element i of the row of edge e is kept by the mask at e * rowSize + i,
/// as the unfused op on the [E, ...] tensor keeps it.
LogicalResult KernelBuilder::lowerDropout(gnn::DropoutOp op) {
  Row in = row(op.getInput());
  double p = op.getP().convertToDouble();
  if (p <= 0) {
    rows[op.getResult()] = in;
    return success();
  }
  Row out = allocRow(in.shape, in.elementType);
  int64_t size = numElements(in.shape);
  forEach(in.shape, [&](ArrayRef<Value> ivs) {
    Value keep = dropoutKeep(op.getSeed(), p, size, flatIndex(in.shape, ivs),
                             in.elementType);
    Value x = load(in, ivs);
    // kept ? x * scale : 0
    Value kept = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OGT, keep,
                                         floatConst(in.elementType, 0.0));
    Value scaled = b.create<arith::MulFOp>(loc, x, keep);
    store(b.create<arith::SelectOp>(loc, kept, scaled,
                                    floatConst(in.elementType, 0.0)),
          out, ivs);
  });
  rows[op.getResult()] = out;
  return success();
}

/// Over one axis: max, sum of exp(x - max), then exp(x - max) / sum or
/// x - max - log(sum). The running max and sum are scalars in memory.
LogicalResult KernelBuilder::lowerSoftmax(gnn::SoftmaxOp op) {
  Row in = row(op.getInput());
  int64_t axis = op.getAxis();
  if (axis < 0 || axis >= static_cast<int64_t>(in.shape.size()))
    return op.emitOpError("cannot be lowered to a kernel: axis ")
           << axis << " is out of range";
  Row out = allocRow(in.shape, in.elementType);
  Type t = in.elementType;
  Row mx = allocRow({}, t), sum = allocRow({}, t);
  int64_t len = in.shape[axis];
  SmallVector<int64_t> lanes(in.shape.begin(), in.shape.end());
  lanes[axis] = 1;
  forEach(lanes, [&](ArrayRef<Value> ivs) {
    auto at = [&](Value j) {
      SmallVector<Value> idx(ivs.begin(), ivs.end());
      idx[axis] = j;
      return idx;
    };
    store(load(in, at(index(0))), mx, {});
    forRange(1, len, [&](Value j) { // mx = mx < x ? x : mx
      Value x = load(in, at(j));
      Value m = load(mx, {});
      Value lt = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLT, m, x);
      store(b.create<arith::SelectOp>(loc, lt, x, m), mx, {});
    });
    store(floatConst(t, 0.0), sum, {});
    forRange(0, len, [&](Value j) {
      Value x = load(in, at(j));
      Value m = load(mx, {});
      Value d = b.create<arith::SubFOp>(loc, x, m);
      Value s = load(sum, {});
      store(b.create<arith::AddFOp>(loc, s, b.create<math::ExpOp>(loc, d)), sum,
            {});
    });
    forRange(0, len, [&](Value j) {
      Value x = load(in, at(j));
      Value m = load(mx, {});
      Value d = b.create<arith::SubFOp>(loc, x, m);
      Value s = load(sum, {});
      Value y;
      if (op.getLog())
        y = b.create<arith::SubFOp>(loc, d, b.create<math::LogOp>(loc, s));
      else
        y = b.create<arith::DivFOp>(loc, b.create<math::ExpOp>(loc, d), s);
      store(y, out, at(j));
    });
  });
  rows[op.getResult()] = out;
  return success();
}

LogicalResult KernelBuilder::lowerConcat(gnn::ConcatOp op) {
  auto type = cast<DomainTensorType>(op.getResult().getType());
  Row out = allocRow(type.getShape(), type.getElementType());
  int64_t axis = op.getAxis();
  if (axis < 0 || axis >= static_cast<int64_t>(out.shape.size()))
    return op.emitOpError("cannot be lowered to a kernel: axis ")
           << axis << " is out of range";
  int64_t offset = 0;
  for (Value input : op.getInputs()) {
    Row in = row(input);
    if (in.shape.size() != out.shape.size())
      return op.emitOpError("cannot be lowered to a kernel: inputs must "
                            "have the rank of the result");
    forEach(in.shape, [&](ArrayRef<Value> ivs) {
      SmallVector<Value> o(ivs.begin(), ivs.end());
      if (offset)
        o[axis] = b.create<arith::AddIOp>(loc, ivs[axis], index(offset));
      store(load(in, ivs), out, o);
    });
    offset += in.shape[axis];
  }
  rows[op.getResult()] = out;
  return success();
}

LogicalResult KernelBuilder::lowerTranspose(gnn::TransposeOp op) {
  Row in = row(op.getInput());
  if (in.shape.size() != 2)
    return op.emitOpError("cannot be lowered to a kernel: expected a matrix");
  auto type = cast<DomainTensorType>(op.getResult().getType());
  Row out = allocRow(type.getShape(), type.getElementType());
  forEach(out.shape, [&](ArrayRef<Value> ivs) {
    store(load(in, {ivs[1], ivs[0]}), out, ivs);
  });
  rows[op.getResult()] = out;
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

void KernelBuilder::initReduction(Reduction &r) {
  Type t = r.acc.elementType;
  forEach(r.acc.shape,
          [&](ArrayRef<Value> ivs) { store(floatConst(t, 0.0), r.acc, ivs); });
  if (r.kind == "softmax_sum" || (r.kind == "logsumexp" && r.sharedWith < 0))
    forEach(r.runMax.shape, [&](ArrayRef<Value> ivs) {
      store(floatConst(t, 0.0), r.runMax, ivs);
      store(floatConst(t, 0.0), r.runSum, ivs);
    });
}

/// One step of the online maximum and rescaled sum of softmax_sum and
/// logsumexp, for logit `l` at `idx` of the running rows:
///   newMax = first ? l : max(runMax, l)
///   ref    = newMax == -inf ? 0 : newMax
///   scale  = exp((first ? -inf : runMax) - ref)
///   p      = exp(l - ref)
///   runSum = runSum * scale + p;  runMax = newMax
/// Returns {scale, p}. On the first edge the scale is exp(-inf) = 0, the
/// interpreter's `first ? 0 : ...`; selecting the operand rather than the
/// exponential keeps the maths out of a branch, which lets compilers
/// vectorise the loop without -ffast-math. `ref` keeps -inf logits finite:
/// while every logit so far is -inf, each p is exp(-inf) = 0 (not
/// exp(-inf - -inf) = NaN), so a row whose first logits are -inf gives the
/// softmax of its finite ones, and a row of -inf only a sum of 0
/// (finalizeReduction). A +inf or NaN logit makes the sum NaN.
std::pair<Value, Value> KernelBuilder::foldOnline(Reduction &r, Value l,
                                                  ArrayRef<Value> idx,
                                                  Value first) {
  Type t = r.acc.elementType;
  Value old = load(r.runMax, idx);
  Value lt = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OLT, old, l);
  Value larger = b.create<arith::SelectOp>(loc, lt, l, old);
  Value newMax = b.create<arith::SelectOp>(loc, first, l, larger);
  Value negInf = floatConst(t, -std::numeric_limits<double>::infinity());
  Value from = b.create<arith::SelectOp>(loc, first, negInf, old);
  Value allNegInf =
      b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OEQ, newMax, negInf);
  Value ref =
      b.create<arith::SelectOp>(loc, allNegInf, floatConst(t, 0.0), newMax);
  Value scale =
      b.create<math::ExpOp>(loc, b.create<arith::SubFOp>(loc, from, ref));
  Value p = b.create<math::ExpOp>(loc, b.create<arith::SubFOp>(loc, l, ref));
  Value sum = load(r.runSum, idx);
  store(
      b.create<arith::AddFOp>(loc, b.create<arith::MulFOp>(loc, sum, scale), p),
      r.runSum, idx);
  store(newMax, r.runMax, idx);
  return {scale, p};
}

/// Folds this edge's yields into the accumulators, as
/// Evaluator::aggregate does. `first` is true on the vertex's first edge.
void KernelBuilder::updateReduction(Reduction &r, Value first) {
  Type t = r.acc.elementType;
  Row x = row(r.yield);
  if (r.kind == "sum" || r.kind == "mean") {
    forEach(r.acc.shape, [&](ArrayRef<Value> ivs) {
      Value acc = load(r.acc, ivs);
      store(b.create<arith::AddFOp>(loc, acc, load(x, ivs)), r.acc, ivs);
    });
    return;
  }
  if (r.kind == "max" || r.kind == "min") {
    // first || x > acc ? x : acc (max; x < acc for min)
    auto pred =
        r.kind == "max" ? arith::CmpFPredicate::OGT : arith::CmpFPredicate::OLT;
    forEach(r.acc.shape, [&](ArrayRef<Value> ivs) {
      Value value = load(x, ivs);
      Value acc = load(r.acc, ivs);
      Value better = b.create<arith::CmpFOp>(loc, pred, value, acc);
      Value take = b.create<arith::OrIOp>(loc, first, better);
      store(b.create<arith::SelectOp>(loc, take, value, acc), r.acc, ivs);
    });
    return;
  }
  if (r.kind == "logsumexp") {
    // The statistics of a softmax_sum of the same logits are this one's.
    if (r.sharedWith >= 0)
      return;
    // Online, per element: the running maximum and the sum rescaled to it.
    forEach(r.acc.shape, [&](ArrayRef<Value> ivs) {
      foldOnline(r, load(x, ivs), ivs, first);
    });
    return;
  }
  // softmax_sum, online: per logit element
  //   newMax = first ? l : max(runMax, l)
  //   scale  = first ? 0 : exp(runMax - newMax)
  //   p      = exp(l - newMax)
  //   runSum = runSum * scale + p;  runMax = newMax
  //   weight = p * keep (attention dropout) or p
  // then per value element j (logit li broadcast to j)
  //   acc[j] = acc[j] * scale[li] + weight[li] * value[j]
  Row logits = row(r.logits);
  int64_t logitSize = numElements(logits.shape);
  forEach(logits.shape, [&](ArrayRef<Value> li) {
    auto [scale, p] = foldOnline(r, load(logits, li), li, first);
    Value weight = p;
    if (r.dropout > 0) {
      Value keep = dropoutKeep(r.seed, r.dropout, logitSize,
                               flatIndex(logits.shape, li), t);
      weight = b.create<arith::MulFOp>(loc, p, keep);
    }
    store(scale, r.scale, li);
    store(weight, r.weight, li);
  });
  forEach(r.acc.shape, [&](ArrayRef<Value> ivs) {
    SmallVector<Value> li = broadcast(logits.shape, ivs);
    Value acc = load(r.acc, ivs);
    Value rescaled = b.create<arith::MulFOp>(loc, acc, load(r.scale, li));
    Value weight = load(r.weight, li);
    Value value = load(x, ivs);
    Value term = b.create<arith::MulFOp>(loc, weight, value);
    store(b.create<arith::AddFOp>(loc, rescaled, term), r.acc, ivs);
  });
}

/// Inside `if (degree != 0)`: mean divides by the degree, softmax_sum by the
/// running sum (unless it is 0: every logit was -inf, every weight 0, and the
/// accumulator is kept, 0 as for an empty neighbourhood), logsumexp is the
/// running maximum plus the log of the sum (-inf for a row of -inf). (An
/// empty neighbourhood keeps the zeros of the start.)
void KernelBuilder::finalizeReduction(Reduction &r, Value degree) {
  if (r.kind == "mean") {
    Value asInt = b.create<arith::IndexCastOp>(loc, b.getI64Type(), degree);
    Value count = b.create<arith::SIToFPOp>(loc, r.acc.elementType, asInt);
    forEach(r.acc.shape, [&](ArrayRef<Value> ivs) {
      Value acc = load(r.acc, ivs);
      store(b.create<arith::DivFOp>(loc, acc, count), r.acc, ivs);
    });
  } else if (r.kind == "logsumexp") {
    forEach(r.acc.shape, [&](ArrayRef<Value> ivs) {
      Value sum = load(r.runSum, ivs);
      Value log = b.create<math::LogOp>(loc, sum);
      store(b.create<arith::AddFOp>(loc, load(r.runMax, ivs), log), r.acc, ivs);
    });
  } else if (r.kind == "softmax_sum") {
    Row logits = row(r.logits);
    forEach(r.acc.shape, [&](ArrayRef<Value> ivs) {
      Value acc = load(r.acc, ivs);
      Value sum = load(r.runSum, broadcast(logits.shape, ivs));
      Value none = b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OEQ, sum,
                                           floatConst(sum.getType(), 0.0));
      Value mean = b.create<arith::DivFOp>(loc, acc, sum);
      store(b.create<arith::SelectOp>(loc, none, acc, mean), r.acc, ivs);
    });
  }
}

//===----------------------------------------------------------------------===//
// The kernel
//===----------------------------------------------------------------------===//

LogicalResult KernelBuilder::build() {
  Side side = aggregate.getBy() == Domain::dst ? Side::dst : Side::src;
  Block *entry = kernel.addEntryBlock();
  // Arguments point at what they hold: the graph, the inputs, the results.
  entry->getArgument(0).setLoc(aggregate.getGraph().getLoc());
  unsigned numInputs = aggregate.getInputs().size();
  for (auto [i, input] : llvm::enumerate(aggregate.getInputs()))
    entry->getArgument(1 + i).setLoc(input.getLoc());
  for (unsigned i = 0; i < aggregate.getNumResults(); ++i)
    entry->getArgument(1 + numInputs + i).setLoc(aggregate.getLoc());
  b.setInsertionPointToStart(entry);
  loc = aggregate.getLoc();
  graph = entry->getArgument(0);
  auto forVertices = b.create<ForVerticesOp>(loc, graph, side);
  b.create<func::ReturnOp>(loc);
  vertexLoop = forVertices;
  vertex = forVertices.getVertex();
  vertexBody = forVertices.getBodyBlock();
  b.setInsertionPoint(vertexBody->getTerminator());

  Block &body = aggregate.getBlock();
  auto yield = cast<gnn::YieldOp>(body.getTerminator());

  // A logsumexp of the logits of a softmax_sum (the statistic a training
  // forward saves for the backward) is that softmax_sum's running maximum
  // plus the log of its running sum: it shares them instead of folding the
  // same values a second time. The softmax_sum whose logits each logsumexp
  // yields, by result index:
  SmallVector<int> partner(aggregate.getNumResults(), -1);
  {
    SmallVector<unsigned> firstYield;
    unsigned at = 0;
    for (unsigned i = 0; i < aggregate.getNumResults(); ++i) {
      firstYield.push_back(at);
      at += aggregate.getNumYields(i);
    }
    for (unsigned i = 0; i < aggregate.getNumResults(); ++i) {
      if (aggregate.getKind(i) != "logsumexp")
        continue;
      Value logits = yield.getValues()[firstYield[i]];
      auto result =
          dyn_cast<DomainTensorType>(aggregate.getResult(i).getType());
      auto logitType = dyn_cast<DomainTensorType>(logits.getType());
      if (!result || !logitType || result.getShape() != logitType.getShape() ||
          result.getElementType() != logitType.getElementType())
        continue;
      for (unsigned j = 0; j < aggregate.getNumResults(); ++j)
        if (aggregate.getKind(j) == "softmax_sum" &&
            yield.getValues()[firstYield[j]] == logits) {
          partner[i] = static_cast<int>(j);
          break;
        }
    }
  }

  // Reductions: accumulators and state, set to their start.
  SmallVector<Reduction, 2> reductions;
  bool needFirst = false;
  unsigned next = 0;
  for (unsigned i = 0; i < aggregate.getNumResults(); ++i) {
    Reduction r;
    r.kind = aggregate.getKind(i);
    r.output = entry->getArgument(1 + numInputs + i);
    Type elementType;
    SmallVector<int64_t> shape;
    if (failed(checkType(aggregate, aggregate.getResult(i).getType(),
                         elementType, shape)))
      return failure();
    r.acc = allocRow(shape, elementType);
    if (r.kind == "softmax_sum") {
      r.logits = yield.getValues()[next];
      r.yield = yield.getValues()[next + 1];
      Type logitElement;
      SmallVector<int64_t> logitShape;
      if (failed(checkType(aggregate, r.logits.getType(), logitElement,
                           logitShape)))
        return failure();
      if (logitShape.size() > shape.size())
        return aggregate.emitOpError("cannot be lowered to a kernel: the "
                                     "logits of reduction ")
               << i << " have a higher rank than its values";
      r.runMax = allocRow(logitShape, elementType);
      r.runSum = allocRow(logitShape, elementType);
      r.scale = allocRow(logitShape, elementType);
      r.weight = allocRow(logitShape, elementType);
      auto dict = cast<DictionaryAttr>(aggregate.getReductions()[i]);
      if (auto p = dict.getAs<FloatAttr>("dropout"))
        r.dropout = p.getValueAsDouble();
      if (auto seed = dict.getAs<IntegerAttr>("seed"))
        r.seed = seed.getInt();
    } else {
      r.yield = yield.getValues()[next];
      r.sharedWith = partner[i];
      if (r.kind == "logsumexp" && r.sharedWith < 0) {
        r.runMax = allocRow(shape, elementType);
        r.runSum = allocRow(shape, elementType);
      }
    }
    if (r.kind != "sum" && r.kind != "mean")
      needFirst = true;
    next += aggregate.getNumYields(i);
    initReduction(r);
    reductions.push_back(std::move(r));
  }
  // What each accumulator holds (gnnk.fold), for printers that merge the
  // states of parts of a row.
  auto tag = [&](const Row &row, StringRef kind, int64_t reduction) {
    row.buffer.getDefiningOp()->setAttr(
        kFoldAttrName,
        b.getDictionaryAttr(
            {b.getNamedAttr("kind", b.getStringAttr(kind)),
             b.getNamedAttr("reduction", b.getI64IntegerAttr(reduction))}));
  };
  for (auto [i, r] : llvm::enumerate(reductions)) {
    if (r.kind == "sum" || r.kind == "mean")
      tag(r.acc, "sum", i);
    else if (r.kind == "max" || r.kind == "min")
      tag(r.acc, r.kind, i);
    else if (r.kind == "softmax_sum")
      tag(r.acc, "online_acc", i);
    if (r.kind == "softmax_sum" ||
        (r.kind == "logsumexp" && r.sharedWith < 0)) {
      tag(r.runMax, "online_max", i);
      tag(r.runSum, "online_sum", i);
    }
  }
  for (Reduction &r : reductions)
    if (r.sharedWith >= 0) {
      r.runMax = reductions[r.sharedWith].runMax;
      r.runSum = reductions[r.sharedWith].runSum;
    }
  Row firstFlag;
  if (needFirst) {
    firstFlag = allocRow({}, b.getI1Type());
    tag(firstFlag, "first", -1);
    store(boolConst(true), firstFlag, {});
  }

  // The edge loop: inputs are rows of the vertex, the neighbour or the edge.
  auto forEdges = b.create<ForEdgesOp>(loc, graph, vertex, side);
  edge = forEdges.getEdge();
  neighbour = forEdges.getNeighbour();
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(forEdges.getBodyBlock()->getTerminator());
    for (auto [i, input] : llvm::enumerate(aggregate.getInputs())) {
      auto type = cast<DomainTensorType>(input.getType());
      Row in;
      in.buffer = entry->getArgument(1 + i);
      in.shape.assign(type.getShape().begin(), type.getShape().end());
      in.elementType = type.getElementType();
      switch (type.getDomain()) {
      case Domain::src:
        in.prefix.push_back(side == Side::dst ? neighbour : vertex);
        break;
      case Domain::dst:
        in.prefix.push_back(side == Side::dst ? vertex : neighbour);
        break;
      case Domain::edge:
        in.prefix.push_back(edge);
        break;
      case Domain::dense:
        break;
      }
      rows[body.getArgument(i)] = in;
    }
    for (Operation &op : body.without_terminator())
      if (failed(lowerBodyOp(&op)))
        return failure();
    loc = aggregate.getLoc();
    Value first = needFirst ? load(firstFlag, {}) : Value();
    for (Reduction &r : reductions)
      updateReduction(r, first);
    if (needFirst)
      store(boolConst(false), firstFlag, {});
  }

  // Finalise where the vertex has edges, then store its rows.
  bool needFinal = llvm::any_of(reductions, [](const Reduction &r) {
    return r.kind == "mean" || r.kind == "softmax_sum" || r.kind == "logsumexp";
  });
  if (needFinal) {
    Value degree =
        b.create<DegreeOp>(loc, b.getIndexType(), graph, vertex, side);
    Value nonEmpty = b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne,
                                             degree, index(0));
    auto ifOp = b.create<scf::IfOp>(loc, nonEmpty, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
    for (Reduction &r : reductions)
      finalizeReduction(r, degree);
  }
  for (Reduction &r : reductions) {
    Row out;
    out.buffer = r.output;
    out.prefix.push_back(vertex);
    out.shape = r.acc.shape;
    forEach(r.acc.shape,
            [&](ArrayRef<Value> ivs) { store(load(r.acc, ivs), out, ivs); });
  }
  return success();
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

/// Whether `aggregate` can become a kernel: float tensors with static row
/// shapes everywhere (inputs, results, body values). Reports the first
/// offender.
LogicalResult checkLowerable(gnn::AggregateOp aggregate) {
  for (Value input : aggregate.getInputs())
    if (failed(checkKernelType(aggregate, input.getType())))
      return failure();
  for (Type type : aggregate.getResultTypes())
    if (failed(checkKernelType(aggregate, type)))
      return failure();
  for (Operation &op : aggregate.getBlock().without_terminator())
    for (Type type : op.getResultTypes())
      if (failed(checkKernelType(&op, type)))
        return failure();
  return success();
}

struct LowerToKernelsPass
    : public gnnc::gnnk::impl::GNNLowerToKernelsBase<LowerToKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<func::FuncOp> functions;
    for (auto func : module.getOps<func::FuncOp>())
      if (getNumKernelOutputs(func) < 0)
        functions.push_back(func);
    for (func::FuncOp func : functions)
      if (failed(lower(func, symbols)))
        return signalPassFailure();
  }

  LogicalResult lower(func::FuncOp func, SymbolTable &symbols) {
    SmallVector<gnn::AggregateOp> aggregates;
    func.walk([&](gnn::AggregateOp op) { aggregates.push_back(op); });
    Operation *after = func;
    for (auto [k, aggregate] : llvm::enumerate(aggregates)) {
      if (failed(checkLowerable(aggregate)))
        return failure();
      MLIRContext *context = func.getContext();
      // Kernel signature: graph, inputs, outputs.
      SmallVector<Type> argTypes{GraphType::get(context)};
      for (Value input : aggregate.getInputs())
        argTypes.push_back(kernelTypeOf(input.getType()));
      for (Type result : aggregate.getResultTypes())
        argTypes.push_back(kernelTypeOf(result));
      if (llvm::is_contained(argTypes, Type()))
        return aggregate.emitOpError("cannot be lowered to a kernel: its "
                                     "operands must be gnn tensors");
      std::string name = (func.getName() + ".aggregate" + llvm::Twine(k)).str();
      auto kernel = func::FuncOp::create(
          aggregate.getLoc(), name, FunctionType::get(context, argTypes, {}));
      OpBuilder attrs(context);
      kernel->setAttr(GNNKDialect::getKernelAttrName(),
                      attrs.getDictionaryAttr(attrs.getNamedAttr(
                          kNumOutputsName,
                          attrs.getI64IntegerAttr(aggregate.getNumResults()))));
      StringAttr symbol =
          symbols.insert(kernel, std::next(Block::iterator(after)));
      after = kernel;
      KernelBuilder builder(aggregate, kernel);
      if (failed(builder.build()))
        return failure();

      // The host side: a launch in place of the aggregate.
      OpBuilder host(aggregate);
      SmallVector<Value> operands{aggregate.getGraph()};
      operands.append(aggregate.getInputs().begin(),
                      aggregate.getInputs().end());
      auto launch =
          host.create<LaunchOp>(aggregate.getLoc(), aggregate.getResultTypes(),
                                FlatSymbolRefAttr::get(symbol), operands);
      aggregate->replaceAllUsesWith(launch->getResults());
      aggregate->erase();
    }
    return success();
  }
};

} // namespace
