//===- Builtins.h - The builtin functions of the language -------*- C++ -*-===//
//
// Part of gnnc. The builtin functions and the methods of graphs are listed
// once, in Builtins.def; this header gives Sema and MLIRGen tables of them by
// name.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_FRONTEND_BUILTINS_H
#define GNNC_FRONTEND_BUILTINS_H

#include "llvm/ADT/StringRef.h"

namespace gnnc {

/// The category of a builtin function: how a call is checked and lowered.
enum class BuiltinKind {
  Unary,
  Reduction,
  Extremum,
  Softmax,
  Reshape,
  Concat,
  Transpose,
  Dropout,
  Range,
  Where,
  LayerNorm,
  BatchNorm,
};

/// One entry of Builtins.def.
struct BuiltinInfo {
  llvm::StringRef name;
  BuiltinKind kind;
  /// Unary: the keyword of the constant second argument (empty when the
  /// function takes only x) and its default value.
  llvm::StringRef param;
  double paramDefault = 0.0;
  /// Reduction: whether x must be a float tensor.
  bool floatOnly = false;
  /// Softmax: whether the result is the logarithm of the softmax.
  bool log = false;
};

/// Returns the builtin function called `name`, or null when there is none.
const BuiltinInfo *lookupBuiltin(llvm::StringRef name);

/// The category of a method of a graph value.
enum class GraphMethodKind {
  Aggregation,
  EdgeSoftmax,
  Dot,
  SetAttr,
  Degree,
  Relation,
  Readout,
  DstRows,
};

/// One graph method of Builtins.def.
struct GraphMethodInfo {
  llvm::StringRef name;
  GraphMethodKind kind;
  /// Aggregation, Readout: whether the values must be a float tensor.
  bool floatOnly = false;
};

/// Returns the graph method called `name`, or null when there is none.
const GraphMethodInfo *lookupGraphMethod(llvm::StringRef name);

} // namespace gnnc

#endif // GNNC_FRONTEND_BUILTINS_H
