//===- Passes.h - Conversions between gnnc's dialects -----------*- C++ -*-===//
//
// Part of gnnc. Every conversion pass (Passes.td), and their registration
// for gnn-opt. The conversions produce the gnnk kernel dialect, so they
// live in its namespace.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_CONVERSION_PASSES_H
#define GNNC_CONVERSION_PASSES_H

#include "gnnc/Conversion/GNNToGNNK/GNNToGNNK.h"

namespace gnnc::gnnk {

#define GEN_PASS_REGISTRATION
#include "gnnc/Conversion/Passes.h.inc"

} // namespace gnnc::gnnk

#endif // GNNC_CONVERSION_PASSES_H
