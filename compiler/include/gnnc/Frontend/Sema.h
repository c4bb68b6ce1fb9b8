//===- Sema.h - Semantic analysis of .gnn modules ---------------*- C++ -*-===//
//
// Part of gnnc. Resolves names, evaluates hyper-parameters symbolically,
// infers shapes (with broadcasting) and value domains, and checks the rules
// of the vertex-centric model. Annotates every expression with its type.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_FRONTEND_SEMA_H
#define GNNC_FRONTEND_SEMA_H

#include "gnnc/Frontend/AST.h"
#include "gnnc/Frontend/Diagnostics.h"

namespace gnnc {

/// Checks a parsed module. Returns true when it has no errors. Layers are
/// checked generically: their int hyper-parameters are symbols, so a layer
/// is valid for every value of them; instances bind them.
bool checkModule(Module &module, DiagnosticEngine &diags);

} // namespace gnnc

#endif // GNNC_FRONTEND_SEMA_H
