//===- PrinterSupport.h - Text helpers every printer uses -------*- C++ -*-===//
//
// Part of gnnc. Small pieces of C++ text that the C++ and CUDA printers
// spell alike: literals, names taken from the .gnn source, `// file.gnn:N:`
// comments, C types of scalars, expressions with their precedence and the
// expressions of the scalar ops of kernels.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_TARGET_PRINTERSUPPORT_H
#define GNNC_TARGET_PRINTERSUPPORT_H

#include "gnnc/Target/SourceInfo.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Types.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringRef.h"

#include <functional>
#include <string>
#include <utility>

namespace gnnc::target {

class CodeWriter;

//===----------------------------------------------------------------------===//
// Literals
//===----------------------------------------------------------------------===//

/// How a floating-point literal spells infinities and NaN.
enum class NonFiniteSpelling {
  /// `std::numeric_limits<float>::infinity()` (host C++, needs <limits>).
  NumericLimits,
  /// `INFINITY` and `NAN` from <cmath>, which device code may use too.
  CMathMacros,
};

/// The shortest decimal form of `value` that reads back exactly, as a C++
/// literal of type float (`isFloat`) or double; infinities and NaN as
/// `spelling` says.
std::string
floatLiteral(double value, bool isFloat,
             NonFiniteSpelling spelling = NonFiniteSpelling::NumericLimits);

/// `s` as a C string literal (quotes, backslashes and line breaks escaped).
std::string cString(llvm::StringRef s);

//===----------------------------------------------------------------------===//
// Names from the .gnn source
//===----------------------------------------------------------------------===//

/// The variable a statement assigns: "h = ..." -> "h", "v.h = ..." -> "h"
/// ("" for anything else).
std::string assignedName(llvm::StringRef line);

/// What starts at column `col` (1-based): an attribute read `u.h` gives
/// ("h", true); a call `relu(` or a name gives ("relu", false).
std::pair<std::string, bool> nameAt(llvm::StringRef line, unsigned col);

/// The name of the scratch row `alloca` of `kernel`: "first" for the
/// first-edge flag, "acc" for the accumulator of the kernel's own .gnn
/// expression, else the name its .gnn line has at its column, else "row".
std::string scratchRowName(mlir::memref::AllocaOp alloca,
                           mlir::func::FuncOp kernel, SourceFiles &sources);

/// The .gnn comment of a location: one `// file.gnn:N: text` per line.
void writeLocationComment(CodeWriter &w, SourceFiles &sources,
                          llvm::ArrayRef<SourceLoc> locs);

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

/// The C type of a scalar of the kernel IR: float, double, bool or int64_t
/// (index and other integers).
std::string cTypeOf(mlir::Type t);

/// A C++ expression and its precedence (0: primary; larger binds looser).
struct Expr {
  std::string text;
  int prec = 0;
};

/// The precedences of Expr (those of C++'s operators).
enum Prec {
  kPrimary = 0,
  kUnary = 3,
  kMul = 5,
  kAdd = 6,
  kRel = 9,
  kEq = 10,
  kAnd = 14,
  kOr = 15,
  kCond = 16,
};

/// The text of `e`, parenthesised when it binds looser than `maxPrec`.
std::string wrap(const Expr &e, int maxPrec);

/// How a printer spells the scalar ops of the arith and math dialects.
struct ScalarSyntax {
  /// The printer in diagnostics ("the C++ printer").
  std::string printer;
  /// How float constants spell infinities and NaN.
  NonFiniteSpelling nonFinite = NonFiniteSpelling::NumericLimits;
  /// The C++ function that computes the maths function `name` (one of exp,
  /// log, sqrt, fabs, tanh, erf, pow, sin, cos, floor, ceil, fmod) of f32
  /// values (`isF32`) or of f64 values.
  std::function<std::string(llvm::StringRef name, bool isF32)> mathFunction;
};

/// The flat index of `indices` into `memref` (row-major, static strides
/// behind a leading `?`), counting from index `from` (the offset inside a
/// row when `from` is 1), where `expr` gives the expressions of the indices.
std::string flatIndex(mlir::Value memref, mlir::ValueRange indices,
                      llvm::function_ref<Expr(mlir::Value)> expr,
                      unsigned from = 0);

/// Whether `op`'s single result can be written into its user's expression:
/// one use, in the same block, with no write to memory in between.
bool isInlinable(mlir::Operation *op);

/// Whether `op` belongs to the arith or math dialect (printScalarOp's ops).
bool isScalarOp(mlir::Operation *op);

/// The C++ expression of `op`, an op of the arith or math dialect, where
/// `expr` gives the expressions of its operands. Reports an error on `op`
/// when it cannot be printed.
mlir::FailureOr<Expr> printScalarOp(mlir::Operation *op,
                                    llvm::function_ref<Expr(mlir::Value)> expr,
                                    const ScalarSyntax &syntax);

} // namespace gnnc::target

#endif // GNNC_TARGET_PRINTERSUPPORT_H
