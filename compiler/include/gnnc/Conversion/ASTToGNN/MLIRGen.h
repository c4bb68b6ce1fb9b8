//===- MLIRGen.h - Lower the checked AST to the gnn dialect -----*- C++ -*-===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_CONVERSION_ASTTOGNN_MLIRGEN_H
#define GNNC_CONVERSION_ASTTOGNN_MLIRGEN_H

#include "gnnc/Frontend/AST.h"
#include "gnnc/Frontend/Diagnostics.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <map>
#include <string>

namespace gnnc {

/// The value of one `--define NAME=VALUE`: an integer (exact, 64-bit) or a
/// floating-point number.
struct DefineValue {
  DefineValue() = default;
  /// A value given in code: an integer when `value` is one that fits.
  DefineValue(double value);
  bool isInteger = false;
  int64_t integer = 0;
  double number = 0;
  /// As written (`in_dim=1433`), for diagnostics.
  std::string text;
};

struct MLIRGenOptions {
  /// Values for hyper-parameters of the top-level definitions, by name
  /// (`--define in_dim=1433`); they override defaults. Every name must be a
  /// hyper-parameter of a definition that is emitted, an int one must get
  /// an integer, and every dimension they make must be positive.
  std::map<std::string, DefineValue> defines;
  /// When set, only this definition (and what it instantiates) is emitted.
  std::string entry;
};

/// Lowers a checked module. Each top-level layer or model whose
/// hyper-parameters all have values becomes a `func.func` named after it;
/// each sub-layer instance becomes a function `Parent.instance`. Every op
/// carries the `.gnn` location it came from. Returns null after reporting
/// an error.
mlir::OwningOpRef<mlir::ModuleOp> mlirGen(mlir::MLIRContext &context,
                                          const Module &module,
                                          DiagnosticEngine &diags,
                                          const MLIRGenOptions &options);

/// Parses `--define NAME=VALUE` options into `options.defines`; reports a
/// malformed, out-of-range, non-finite or repeated one (naming `fileName`)
/// and returns false.
bool parseDefines(llvm::ArrayRef<std::string> defines, MLIRGenOptions &options,
                  DiagnosticEngine &diags, llvm::StringRef fileName);

/// Loads the dialects MLIRGen produces into `context`.
void loadGNNDialects(mlir::MLIRContext &context);

} // namespace gnnc

#endif // GNNC_CONVERSION_ASTTOGNN_MLIRGEN_H
