//===- Frontend.cpp - One-call entry point to the .gnn front end ----------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnnc/Frontend/Frontend.h"
#include "gnnc/Frontend/Lexer.h"
#include "gnnc/Frontend/Parser.h"
#include "gnnc/Frontend/Sema.h"

#include "llvm/Support/MemoryBuffer.h"

using namespace gnnc;

FrontendResult gnnc::runFrontend(unsigned bufferID, DiagnosticEngine &diags,
                                 FrontendStage stopAfter) {
  FrontendResult result;
  Lexer lexer(bufferID, diags);
  result.tokens = lexer.lex();
  if (lexer.isUnreadable() || stopAfter == FrontendStage::Lex) {
    result.success = !diags.hadError();
    return result;
  }
  llvm::StringRef name =
      diags.getSourceMgr().getMemoryBuffer(bufferID)->getBufferIdentifier();
  Parser parser(result.tokens, diags, name);
  std::unique_ptr<Module> module = parser.parseModule();
  // Semantic analysis of a module with syntax errors would mostly report
  // their echoes, so it runs only on a clean parse.
  if (diags.hadError())
    return result;
  if (stopAfter == FrontendStage::Check && !checkModule(*module, diags))
    return result;
  result.module = std::move(module);
  result.success = true;
  return result;
}

bool gnnc::checkSource(llvm::StringRef text, llvm::StringRef bufferName,
                       llvm::raw_ostream &diagOS) {
  llvm::SourceMgr sourceMgr;
  unsigned id = sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, bufferName), llvm::SMLoc());
  DiagnosticEngine diags(sourceMgr, diagOS);
  return runFrontend(id, diags).success;
}
