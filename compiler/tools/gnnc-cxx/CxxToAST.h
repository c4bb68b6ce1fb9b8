//===- CxxToAST.h - Node-centric C++ to the .gnn AST ------------*- C++ -*-===//
//
// Part of gnnc. Translates a function written against gnnc/cxx/NodeCentric.h
// (annotated GNNC_LAYER) into a .gnn layer definition, whose every node
// keeps the C++ location it comes from: the rest of gnnc (semantic
// analysis, MLIRGen, fusion, autodiff, the printers and the line map) then
// works on C++ input as on .gnn input.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_TOOLS_GNNC_CXX_CXXTOAST_H
#define GNNC_TOOLS_GNNC_CXX_CXXTOAST_H

#include "gnnc/Frontend/AST.h"

#include "clang/AST/Decl.h"

#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <string>
#include <vector>

namespace gnnc::cxx {

/// How a tensor argument of a layer function is passed.
struct LayerArg {
  enum class Kind { Graph, Input, EdgeInput, Weight, Output };
  Kind kind;
  std::string name;
  /// Whether the argument is a const reference or a value (inputs).
  bool byConstRef = false;
};

/// A translated layer: the .gnn definition and what the rewrite of its
/// body needs.
struct TranslatedLayer {
  std::unique_ptr<Definition> definition;
  std::vector<LayerArg> args;
  const clang::FunctionDecl *function = nullptr;
};

/// Translates `function`'s signature and body. `buffer` holds the text of
/// the file the function is in, as the llvm::SourceMgr of gnnc's
/// diagnostics has it: every node's SMLoc points into it. Constructs
/// outside the node-centric subset are reported through the ASTContext's
/// diagnostics at their C++ location; returns null after an error.
std::unique_ptr<TranslatedLayer>
translateLayer(const clang::FunctionDecl &function,
               const llvm::MemoryBuffer &buffer);

} // namespace gnnc::cxx

#endif // GNNC_TOOLS_GNNC_CXX_CXXTOAST_H
