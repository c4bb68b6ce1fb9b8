//===- SemaOperators.cpp - Binary operators, axes and reductions ----------===//
//
// Part of gnnc. Types binary operators, folding integer arithmetic on
// dimensions and float constants (dropout rates, slopes), and the shared
// pieces of builtins: constant arguments, axes and reductions.
//
//===----------------------------------------------------------------------===//

#include "SemaInternal.h"

using namespace gnnc;
using namespace gnnc::sema;

//===----------------------------------------------------------------------===//
// Binary operators
//===----------------------------------------------------------------------===//

ValueType Checker::checkBinary(BinaryExpr &expr) {
  std::optional<ValueType> lhs = requireTensor(*expr.lhs);
  std::optional<ValueType> rhs = requireTensor(*expr.rhs);
  if (!lhs || !rhs)
    return ValueType::error();
  SMLoc loc = expr.opLoc;
  if (isComparison(expr.op))
    return checkComparison(expr, *lhs, *rhs);

  // Compile-time integer arithmetic: dimensions and trip counts.
  if (lhs->isIntConstant() && rhs->isIntConstant()) {
    std::optional<Dim> value;
    switch (expr.op) {
    case BinaryOp::Add:
      value = lhs->intValue->add(*rhs->intValue);
      break;
    case BinaryOp::Sub:
      value = lhs->intValue->sub(*rhs->intValue);
      break;
    case BinaryOp::Mul:
      value = lhs->intValue->mul(*rhs->intValue);
      break;
    case BinaryOp::FloorDiv: {
      std::optional<int64_t> a = lhs->intValue->getConstant();
      std::optional<int64_t> b = rhs->intValue->getConstant();
      if (!a || !b || *b == 0) {
        error(loc, DiagID::err_floordiv_symbolic, lhs->intValue->str(),
              rhs->intValue->str());
        return ValueType::error();
      }
      if (*a == INT64_MIN && *b == -1) {
        error(loc, DiagID::err_dim_overflow);
        return ValueType::error();
      }
      int64_t q = *a / *b;
      if ((*a % *b != 0) && ((*a < 0) != (*b < 0)))
        --q;
      return ValueType::intConstant(Dim::constant(q));
    }
    case BinaryOp::Div: {
      std::optional<int64_t> a = lhs->intValue->getConstant();
      std::optional<int64_t> b = rhs->intValue->getConstant();
      std::optional<double> v;
      if (a && b && *b != 0)
        v = static_cast<double>(*a) / static_cast<double>(*b);
      return ValueType::floatConstant(v);
    }
    case BinaryOp::Pow:
    case BinaryOp::MatMul:
      break;
    default: // comparisons: checkComparison
      break;
    }
    if (expr.op != BinaryOp::Pow && expr.op != BinaryOp::MatMul) {
      if (!value) {
        error(loc, DiagID::err_dim_overflow);
        return ValueType::error();
      }
      return ValueType::intConstant(*value);
    }
  }

  switch (expr.op) {
  case BinaryOp::MatMul: {
    if (!requireFloat(*lhs, "@", loc) || !requireFloat(*rhs, "@", loc))
      return ValueType::error();
    if (lhs->shape.empty()) {
      error(loc, DiagID::err_matmul_rank, "a left operand of rank 1 or more",
            lhs->shapeStr());
      return ValueType::error();
    }
    if (rhs->shape.size() != 2 || rhs->domain != Domain::Dense) {
      error(loc, DiagID::err_matmul_rank, "a dense right operand of rank 2",
            rhs->str());
      return ValueType::error();
    }
    if (lhs->shape.back() != rhs->shape[0]) {
      error(loc, DiagID::err_matmul_inner, lhs->shape.back().str(),
            rhs->shape[0].str());
      return ValueType::error();
    }
    ValueType result = *lhs;
    result.shape.back() = rhs->shape[1];
    if (isWeak(result.elem))
      result.elem = rhs->elem;
    result.intValue.reset();
    result.floatValue.reset();
    result.isConstant = false;
    return result;
  }
  case BinaryOp::Pow: {
    if (!rhs->isScalar() || !(rhs->isIntConstant() || rhs->isConstant) ||
        rhs->domain != Domain::Dense) {
      error(expr.rhs->getLoc(), DiagID::err_pow_exponent, rhs->str());
      return ValueType::error();
    }
    if (!requireFloat(*lhs, "**", loc))
      return ValueType::error();
    ValueType result = *lhs;
    if (result.intValue) {
      result = ValueType::floatConstant(std::nullopt);
    } else if (result.floatValue) {
      std::optional<double> exponent =
          rhs->floatValue ? rhs->floatValue
          : rhs->intValue && rhs->intValue->getConstant()
              ? std::optional<double>(*rhs->intValue->getConstant())
              : std::nullopt;
      result.floatValue =
          exponent
              ? std::optional<double>(std::pow(*result.floatValue, *exponent))
              : std::nullopt;
    }
    return result;
  }
  case BinaryOp::FloorDiv:
    error(loc, DiagID::err_floordiv_tensor);
    return ValueType::error();
  case BinaryOp::Div:
    if (!isFloatElem(lhs->elem) && !isFloatElem(rhs->elem) &&
        !(lhs->elem == ElemType::WeakInt && rhs->elem == ElemType::WeakInt)) {
      error(loc, DiagID::err_int_division, lhs->str(), rhs->str());
      return ValueType::error();
    }
    break;
  default:
    break;
  }
  ValueType result = elementwise(*lhs, *rhs, loc);
  if (result.isError())
    return result;
  if (expr.op == BinaryOp::Div && result.elem == ElemType::WeakInt)
    result.elem = ElemType::WeakFloat;
  // Constant folding of float scalars keeps dropout rates and slopes known.
  if (isKnownNumber(*lhs) && isKnownNumber(*rhs)) {
    result.isConstant = true;
    std::optional<double> a = numberValue(*lhs), b = numberValue(*rhs);
    if (a && b) {
      switch (expr.op) {
      case BinaryOp::Add:
        result.floatValue = *a + *b;
        break;
      case BinaryOp::Sub:
        result.floatValue = *a - *b;
        break;
      case BinaryOp::Mul:
        result.floatValue = *a * *b;
        break;
      case BinaryOp::Div:
        if (*b != 0)
          result.floatValue = *a / *b;
        break;
      default:
        break;
      }
    }
  }
  return result;
}

/// `a < b` & co.: elementwise, 1 where the comparison holds and 0 where it
/// does not (a NaN compares false, except under `!=`), in the element type
/// of the operands, which must be floats or numbers. Two numbers fold to the
/// constant 1.0 or 0.0.
ValueType Checker::checkComparison(BinaryExpr &expr, const ValueType &lhs,
                                   const ValueType &rhs) {
  SMLoc loc = expr.opLoc;
  StringRef spelling = getBinaryOpSpelling(expr.op);
  if (!requireFloat(lhs, spelling, loc) || !requireFloat(rhs, spelling, loc))
    return ValueType::error();
  ValueType result = elementwise(lhs, rhs, loc);
  if (result.isError())
    return result;
  if (isKnownNumber(lhs) && isKnownNumber(rhs)) {
    std::optional<double> a = numberValue(lhs), b = numberValue(rhs);
    std::optional<double> folded;
    if (a && b)
      folded = compareNumbers(expr.op, *a, *b) ? 1.0 : 0.0;
    return ValueType::floatConstant(folded);
  }
  return runtimeFloat(std::move(result));
}

bool gnnc::sema::isKnownNumber(const ValueType &t) {
  return t.isScalar() && t.domain == Domain::Dense &&
         (t.isConstant || t.isIntConstant());
}

std::optional<double> gnnc::sema::numberValue(const ValueType &t) {
  if (t.floatValue)
    return t.floatValue;
  if (t.intValue)
    if (std::optional<int64_t> c = t.intValue->getConstant())
      return static_cast<double>(*c);
  return std::nullopt;
}

ValueType gnnc::sema::runtimeFloat(ValueType t) {
  t.intValue.reset();
  t.floatValue.reset();
  t.isConstant = false;
  if (t.elem == ElemType::WeakInt)
    t.elem = ElemType::WeakFloat;
  return t;
}

//===----------------------------------------------------------------------===//
// Constants, axes and reductions
//===----------------------------------------------------------------------===//

std::optional<double> Checker::constantNumber(Expr &expr, StringRef argName,
                                              StringRef fn) {
  ValueType t = check(expr);
  if (t.isError())
    return std::nullopt;
  if (!t.isScalar() || t.domain != Domain::Dense ||
      !(t.isConstant || t.isIntConstant()) || t.elem == ElemType::Bool) {
    error(expr.getLoc(), DiagID::err_constant_arg, argName, fn, "number",
          t.str());
    return std::nullopt;
  }
  if (t.floatValue)
    return t.floatValue;
  if (t.intValue)
    if (std::optional<int64_t> c = t.intValue->getConstant())
      return static_cast<double>(*c);
  return std::nan(""); // a constant whose value is a hyper-parameter
}

std::optional<int64_t> Checker::normalizeAxis(int64_t axis, const ValueType &x,
                                              SMLoc loc) {
  int64_t rank = static_cast<int64_t>(x.shape.size());
  if (axis < -rank || axis >= rank) {
    error(loc, DiagID::err_axis_out_of_range, std::to_string(axis),
          x.shapeStr());
    return std::nullopt;
  }
  return axis < 0 ? axis + rank : axis;
}

ValueType Checker::reduce(const ValueType &x, std::optional<int64_t> axis,
                          bool keepDims, SMLoc loc) {
  (void)loc;
  ValueType result = concretize(x);
  if (!axis) {
    result.shape.clear();
    return result;
  }
  if (keepDims)
    result.shape[*axis] = Dim::constant(1);
  else
    result.shape.erase(result.shape.begin() + *axis);
  return result;
}
