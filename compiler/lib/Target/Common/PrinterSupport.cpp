//===- PrinterSupport.cpp - Text helpers every printer uses ---------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnnc/Target/PrinterSupport.h"

#include "gnnc/Target/CodeWriter.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>

using namespace mlir;
using namespace gnnc::target;

namespace {

bool isIdentStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool isIdentChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

} // namespace

std::string gnnc::target::floatLiteral(double value, bool isFloat,
                                       NonFiniteSpelling spelling) {
  if (spelling == NonFiniteSpelling::CMathMacros) {
    // INFINITY and NAN (<cmath>) are float constants on the host and the
    // device alike (std::numeric_limits is not available in device code).
    if (std::isnan(value))
      return isFloat ? "NAN" : "static_cast<double>(NAN)";
    if (std::isinf(value))
      return std::string(value < 0 ? "-" : "") +
             (isFloat ? "INFINITY" : "static_cast<double>(INFINITY)");
  } else {
    const char *type = isFloat ? "float" : "double";
    if (std::isnan(value))
      return llvm::formatv("std::numeric_limits<{0}>::quiet_NaN()", type).str();
    if (std::isinf(value))
      return llvm::formatv("{0}std::numeric_limits<{1}>::infinity()",
                           value < 0 ? "-" : "", type)
          .str();
  }
  char buffer[64];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buffer, sizeof(buffer), "%.*g", precision, value);
    if (isFloat ? std::strtof(buffer, nullptr) == static_cast<float>(value)
                : std::strtod(buffer, nullptr) == value)
      break;
  }
  std::string text = buffer;
  if (text.find_first_of(".e") == std::string::npos)
    text += ".0";
  return text + (isFloat ? "f" : "");
}

std::string gnnc::target::cString(StringRef s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string gnnc::target::assignedName(StringRef line) {
  line = line.ltrim();
  size_t i = 0;
  std::string last;
  while (i < line.size() && isIdentStart(line[i])) {
    size_t start = i;
    while (i < line.size() && isIdentChar(line[i]))
      ++i;
    last = line.substr(start, i - start).str();
    if (i < line.size() && line[i] == '.') {
      ++i;
      continue;
    }
    break;
  }
  if (last.empty())
    return "";
  while (i < line.size() && line[i] == ' ')
    ++i;
  if (i + 1 < line.size() && line[i] == '=' && line[i + 1] != '=')
    return last;
  return "";
}

std::pair<std::string, bool> gnnc::target::nameAt(StringRef line,
                                                  unsigned col) {
  if (col == 0 || col > line.size())
    return {"", false};
  size_t i = col - 1;
  if (!isIdentStart(line[i]))
    return {"", false};
  // `u.h` located at its attribute name.
  if (i >= 2 && line[i - 1] == '.' && isIdentChar(line[i - 2])) {
    size_t end = i;
    while (end < line.size() && isIdentChar(line[end]))
      ++end;
    bool call = end < line.size() && line[end] == '(';
    return {line.substr(i, end - i).str(), !call};
  }
  llvm::SmallVector<std::string, 2> parts;
  while (i < line.size() && isIdentStart(line[i])) {
    size_t start = i;
    while (i < line.size() && isIdentChar(line[i]))
      ++i;
    parts.push_back(line.substr(start, i - start).str());
    if (i + 1 < line.size() && line[i] == '.' && isIdentStart(line[i + 1])) {
      ++i;
      continue;
    }
    break;
  }
  bool call = i < line.size() && line[i] == '(';
  if (parts.size() == 2 && !call)
    return {parts.back(), true};
  return {parts.back(), false};
}

std::string gnnc::target::scratchRowName(memref::AllocaOp alloca,
                                         func::FuncOp kernel,
                                         SourceFiles &sources) {
  MemRefType type = alloca.getType();
  SourceLoc loc = primaryLoc(alloca.getLoc());
  SourceLoc kernelLoc = primaryLoc(kernel.getLoc());
  std::string base;
  if (type.getRank() == 0 && type.getElementType().isInteger(1))
    base = "first";
  else if (loc.line == kernelLoc.line && loc.column == kernelLoc.column)
    base = "acc";
  else
    base = nameAt(sources.line(loc.file, loc.line), loc.column).first;
  return base.empty() ? "row" : base;
}

void gnnc::target::writeLocationComment(CodeWriter &w, SourceFiles &sources,
                                        ArrayRef<SourceLoc> locs) {
  std::set<std::pair<std::string, unsigned>> seen;
  for (const SourceLoc &loc : locs) {
    if (!seen.insert({loc.file, loc.line}).second)
      continue;
    std::string text = sources.line(loc.file, loc.line).trim().str();
    w.line("// " + baseName(loc.file).str() + ":" + std::to_string(loc.line) +
           (text.empty() ? "" : ": " + text));
  }
}

std::string gnnc::target::cTypeOf(Type t) {
  if (t.isF32())
    return "float";
  if (t.isF64())
    return "double";
  if (t.isInteger(1))
    return "bool";
  return "int64_t";
}

std::string gnnc::target::wrap(const Expr &e, int maxPrec) {
  return e.prec > maxPrec ? "(" + e.text + ")" : e.text;
}

std::string gnnc::target::flatIndex(Value memref, ValueRange indices,
                                    function_ref<Expr(Value)> expr,
                                    unsigned from) {
  auto type = cast<MemRefType>(memref.getType());
  ArrayRef<int64_t> shape = type.getShape();
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  std::string out;
  for (auto [i, idx] : llvm::enumerate(indices)) {
    if (i < from)
      continue;
    if (auto c = idx.getDefiningOp<arith::ConstantIndexOp>())
      if (c.value() == 0)
        continue;
    Expr e = expr(idx);
    std::string term = strides[i] == 1
                           ? wrap(e, kAdd)
                           : wrap(e, kMul) + " * " + std::to_string(strides[i]);
    out += (out.empty() ? "" : " + ") + term;
  }
  return out.empty() ? "0" : out;
}

bool gnnc::target::isInlinable(Operation *op) {
  if (op->getNumResults() != 1 || !op->getResult(0).hasOneUse())
    return false;
  Operation *user = *op->getResult(0).getUsers().begin();
  if (user->getBlock() != op->getBlock())
    return false;
  for (Operation *it = op->getNextNode(); it && it != user;
       it = it->getNextNode())
    if (isa<memref::StoreOp>(it) || it->getNumRegions() > 0)
      return false;
  return true;
}

bool gnnc::target::isScalarOp(Operation *op) {
  return isa<arith::ArithDialect, math::MathDialect>(op->getDialect());
}

FailureOr<Expr> gnnc::target::printScalarOp(Operation *op,
                                            function_ref<Expr(Value)> expr,
                                            const ScalarSyntax &syntax) {
  auto binary = [&](Value a, Value b, StringRef sym, int prec) -> Expr {
    return {wrap(expr(a), prec) + " " + sym.str() + " " +
                wrap(expr(b), prec - 1),
            prec};
  };
  // The maths function `name` of the operands of `o`, of o's type.
  auto math = [&](StringRef name, Operation *o) -> Expr {
    bool f32 = o->getResult(0).getType().isF32();
    std::string text = syntax.mathFunction(name, f32) + "(";
    for (auto [i, a] : llvm::enumerate(o->getOperands()))
      text += (i ? ", " : "") + wrap(expr(a), kCond);
    return {text + ")", kPrimary};
  };
  return llvm::TypeSwitch<Operation *, FailureOr<Expr>>(op)
      .Case<arith::ConstantOp>([&](arith::ConstantOp c) -> FailureOr<Expr> {
        Attribute value = c.getValue();
        if (auto f = dyn_cast<FloatAttr>(value)) {
          std::string text = floatLiteral(
              f.getValueAsDouble(), f.getType().isF32(), syntax.nonFinite);
          return Expr{text, text[0] == '-' ? kUnary : kPrimary};
        }
        if (auto i = dyn_cast<IntegerAttr>(value)) {
          if (i.getType().isInteger(1))
            return Expr{i.getValue().isZero() ? "false" : "true", kPrimary};
          int64_t v = i.getValue().getSExtValue();
          return Expr{std::to_string(v), v < 0 ? kUnary : kPrimary};
        }
        return op->emitError(syntax.printer + " cannot print this constant");
      })
      .Case<arith::AddFOp, arith::AddIOp>(
          [&](auto o) { return binary(o.getLhs(), o.getRhs(), "+", kAdd); })
      .Case<arith::SubFOp, arith::SubIOp>(
          [&](auto o) { return binary(o.getLhs(), o.getRhs(), "-", kAdd); })
      .Case<arith::MulFOp, arith::MulIOp>(
          [&](auto o) { return binary(o.getLhs(), o.getRhs(), "*", kMul); })
      .Case<arith::DivFOp, arith::DivSIOp>(
          [&](auto o) { return binary(o.getLhs(), o.getRhs(), "/", kMul); })
      .Case<arith::RemSIOp>(
          [&](auto o) { return binary(o.getLhs(), o.getRhs(), "%", kMul); })
      .Case<arith::RemFOp>([&](arith::RemFOp o) { return math("fmod", o); })
      .Case<arith::AndIOp>([&](arith::AndIOp o) {
        return o.getType().isInteger(1)
                   ? binary(o.getLhs(), o.getRhs(), "&&", kAnd)
                   : binary(o.getLhs(), o.getRhs(), "&", kAnd);
      })
      .Case<arith::OrIOp>([&](arith::OrIOp o) {
        return o.getType().isInteger(1)
                   ? binary(o.getLhs(), o.getRhs(), "||", kOr)
                   : binary(o.getLhs(), o.getRhs(), "|", kOr);
      })
      .Case<arith::XOrIOp>(
          [&](auto o) { return binary(o.getLhs(), o.getRhs(), "!=", kEq); })
      .Case<arith::NegFOp>([&](arith::NegFOp o) {
        return Expr{"-" + wrap(expr(o.getOperand()), kUnary), kUnary};
      })
      .Case<arith::CmpFOp>([&](arith::CmpFOp o) -> FailureOr<Expr> {
        using P = arith::CmpFPredicate;
        Value a = o.getLhs(), b = o.getRhs();
        switch (o.getPredicate()) {
        case P::OGT:
          return binary(a, b, ">", kRel);
        case P::OGE:
          return binary(a, b, ">=", kRel);
        case P::OLT:
          return binary(a, b, "<", kRel);
        case P::OLE:
          return binary(a, b, "<=", kRel);
        case P::OEQ:
          return binary(a, b, "==", kEq);
        case P::UNE:
          return binary(a, b, "!=", kEq);
        case P::UGT:
          return Expr{"!(" + binary(a, b, "<=", kRel).text + ")", kUnary};
        case P::UGE:
          return Expr{"!(" + binary(a, b, "<", kRel).text + ")", kUnary};
        case P::ULT:
          return Expr{"!(" + binary(a, b, ">=", kRel).text + ")", kUnary};
        case P::ULE:
          return Expr{"!(" + binary(a, b, ">", kRel).text + ")", kUnary};
        case P::UNO: // isnan(a) || isnan(b), as comparisons
          if (a == b)
            return binary(a, a, "!=", kEq);
          return Expr{binary(a, a, "!=", kEq).text + " || " +
                          binary(b, b, "!=", kEq).text,
                      kOr};
        case P::ORD: // !isnan(a) && !isnan(b)
          if (a == b)
            return binary(a, a, "==", kEq);
          return Expr{binary(a, a, "==", kEq).text + " && " +
                          binary(b, b, "==", kEq).text,
                      kAnd};
        case P::AlwaysTrue:
          return Expr{"true", kPrimary};
        case P::AlwaysFalse:
          return Expr{"false", kPrimary};
        default:
          return o.emitError(syntax.printer +
                             " does not support this comparison");
        }
      })
      .Case<arith::CmpIOp>([&](arith::CmpIOp o) -> FailureOr<Expr> {
        using P = arith::CmpIPredicate;
        Value a = o.getLhs(), b = o.getRhs();
        switch (o.getPredicate()) {
        case P::eq:
          return binary(a, b, "==", kEq);
        case P::ne:
          return binary(a, b, "!=", kEq);
        case P::slt:
        case P::ult:
          return binary(a, b, "<", kRel);
        case P::sle:
        case P::ule:
          return binary(a, b, "<=", kRel);
        case P::sgt:
        case P::ugt:
          return binary(a, b, ">", kRel);
        case P::sge:
        case P::uge:
          return binary(a, b, ">=", kRel);
        }
        return failure();
      })
      .Case<arith::SelectOp>([&](arith::SelectOp o) {
        // Nested conditionals get parentheses, for the reader.
        return Expr{wrap(expr(o.getCondition()), kOr) + " ? " +
                        wrap(expr(o.getTrueValue()), kCond - 1) + " : " +
                        wrap(expr(o.getFalseValue()), kCond - 1),
                    kCond};
      })
      .Case<arith::IndexCastOp>(
          [&](arith::IndexCastOp o) { return expr(o.getIn()); })
      .Case<arith::SIToFPOp, arith::UIToFPOp, arith::FPToSIOp, arith::ExtFOp,
            arith::TruncFOp>([&](auto o) {
        return Expr{"static_cast<" + cTypeOf(o.getType()) + ">(" +
                        wrap(expr(o.getIn()), kCond) + ")",
                    kPrimary};
      })
      .Case<math::ExpOp>([&](auto o) { return math("exp", o); })
      .Case<math::LogOp>([&](auto o) { return math("log", o); })
      .Case<math::SqrtOp>([&](auto o) { return math("sqrt", o); })
      .Case<math::RsqrtOp>([&](math::RsqrtOp o) {
        bool f32 = o.getType().isF32();
        return Expr{(f32 ? "1.0f / " : "1.0 / ") + math("sqrt", o).text, kMul};
      })
      .Case<math::AbsFOp>([&](auto o) { return math("fabs", o); })
      .Case<math::TanhOp>([&](auto o) { return math("tanh", o); })
      .Case<math::ErfOp>([&](auto o) { return math("erf", o); })
      .Case<math::PowFOp>([&](auto o) { return math("pow", o); })
      .Case<math::SinOp>([&](auto o) { return math("sin", o); })
      .Case<math::CosOp>([&](auto o) { return math("cos", o); })
      .Case<math::FloorOp>([&](auto o) { return math("floor", o); })
      .Case<math::CeilOp>([&](auto o) { return math("ceil", o); })
      .Default([&](Operation *other) -> FailureOr<Expr> {
        return other->emitError(syntax.printer + " does not support '")
               << other->getName() << "' in a kernel";
      });
}
