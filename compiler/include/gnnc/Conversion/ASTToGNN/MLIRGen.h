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

struct MLIRGenOptions {
  /// Values for hyper-parameters of the top-level definitions, by name
  /// (`--define in_dim=1433`); they override defaults.
  std::map<std::string, double> defines;
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
/// malformed one (naming `fileName`) and returns false.
bool parseDefines(llvm::ArrayRef<std::string> defines, MLIRGenOptions &options,
                  DiagnosticEngine &diags, llvm::StringRef fileName);

/// Loads the dialects MLIRGen produces into `context`.
void loadGNNDialects(mlir::MLIRContext &context);

} // namespace gnnc

#endif // GNNC_CONVERSION_ASTTOGNN_MLIRGEN_H
