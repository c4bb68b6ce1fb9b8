//===- GNNToGNNK.h - gnn.aggregate to gnnk kernels --------------*- C++ -*-===//
//
// Part of gnnc. The lowering of the fused gnn dialect to the gnnk kernel
// dialect: every `gnn.aggregate` becomes a kernel function and a
// `gnnk.launch` of it (`gnn-lower-to-kernels`).
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_CONVERSION_GNNTOGNNK_GNNTOGNNK_H
#define GNNC_CONVERSION_GNNTOGNNK_GNNTOGNNK_H

#include "gnnc/Dialect/GNNK/IR/GNNK.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace gnnc::gnnk {

#define GEN_PASS_DECL_GNNLOWERTOKERNELS
#include "gnnc/Conversion/Passes.h.inc"

} // namespace gnnc::gnnk

#endif // GNNC_CONVERSION_GNNTOGNNK_GNNTOGNNK_H
