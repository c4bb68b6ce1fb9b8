//===- DefineFuzzer.cpp - libFuzzer entry point for --define values -------===//
//
// Part of gnnc. Feeds arbitrary `--define` options to the lowering of
// dsl-examples/gat.gnn: each line of the input is one `NAME=VALUE` (a first
// line `@NAME` picks --entry). parseDefines and mlirGen must turn every bad
// name, number, duplicate, non-positive or overflowing size into a
// diagnostic; a crash, sanitizer report, leak or hang is a bug.
//
//===----------------------------------------------------------------------===//

#include "gnnc/Conversion/ASTToGNN/MLIRGen.h"
#include "gnnc/Frontend/Frontend.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

namespace {

/// The checked AST of the example, parsed once.
struct Program {
  llvm::SourceMgr sourceMgr;
  std::unique_ptr<gnnc::DiagnosticEngine> diags;
  gnnc::FrontendResult result;

  Program() {
    auto buffer =
        llvm::MemoryBuffer::getFile(GNNC_SOURCE_DIR "/dsl-examples/gat.gnn");
    if (!buffer) {
      llvm::errs() << "gnnc-define-fuzzer: cannot read dsl-examples/gat.gnn\n";
      std::abort();
    }
    unsigned id =
        sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
    diags = std::make_unique<gnnc::DiagnosticEngine>(sourceMgr, llvm::errs());
    result = gnnc::runFrontend(id, *diags);
    if (!result.success)
      std::abort();
  }
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static Program program;
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  llvm::SmallVector<llvm::StringRef> lines;
  text.split(lines, '\n');
  gnnc::MLIRGenOptions options;
  std::vector<std::string> defines;
  for (auto [i, line] : llvm::enumerate(lines)) {
    if (i == 0 && line.starts_with("@"))
      options.entry = line.drop_front().str();
    else if (!line.empty())
      defines.push_back(line.str());
  }
  gnnc::DiagnosticEngine diags(program.sourceMgr, llvm::nulls());
  if (!gnnc::parseDefines(defines, options, diags, "gat.gnn"))
    return 0;
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  gnnc::loadGNNDialects(context);
  // Verifier failures would print; a failed verify is a finding too, but
  // not a crash: keep it quiet and let the sanitizers judge.
  mlir::ScopedDiagnosticHandler quiet(
      &context, [](mlir::Diagnostic &) { return mlir::success(); });
  (void)gnnc::mlirGen(context, *program.result.module, diags, options);
  return 0;
}
