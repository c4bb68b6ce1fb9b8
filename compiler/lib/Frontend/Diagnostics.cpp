//===- Diagnostics.cpp - Located diagnostics for the front end ------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnnc/Frontend/Diagnostics.h"

using namespace gnnc;

namespace {
struct DiagInfo {
  const char *name;
  DiagKind kind;
  const char *format;
};
} // namespace

static const DiagInfo diagTable[] = {
#define DIAG(ID, KIND, FORMAT) {#ID, DiagKind::KIND, FORMAT},
#include "gnnc/Frontend/Diagnostics.def"
};

llvm::StringRef gnnc::getDiagFormat(DiagID id) {
  return diagTable[static_cast<unsigned>(id)].format;
}
DiagKind gnnc::getDiagKind(DiagID id) {
  return diagTable[static_cast<unsigned>(id)].kind;
}
llvm::StringRef gnnc::getDiagName(DiagID id) {
  return diagTable[static_cast<unsigned>(id)].name;
}
unsigned gnnc::getNumDiags() {
  return sizeof(diagTable) / sizeof(diagTable[0]);
}

void DiagnosticEngine::emit(llvm::SMLoc loc, DiagID id,
                            const std::string &message) {
  if (getDiagKind(id) == DiagKind::Note) {
    if (lastErrorPrinted)
      sourceMgr.PrintMessage(os, loc, llvm::SourceMgr::DK_Note, message);
    return;
  }
  lastErrorPrinted = false;
  ++numErrors;
  if (unsigned buffer = sourceMgr.FindBufferContainingLoc(loc))
    errorLines.insert({buffer, sourceMgr.FindLineNumber(loc, buffer)});
  if (stopped)
    return;
  if (numErrors > maxErrors) {
    stopped = true;
    sourceMgr.PrintMessage(
        os, loc, llvm::SourceMgr::DK_Error,
        llvm::formatv(getDiagFormat(DiagID::too_many_errors).data(), maxErrors)
            .str());
    return;
  }
  lastErrorPrinted = true;
  sourceMgr.PrintMessage(os, loc, llvm::SourceMgr::DK_Error, message);
}

bool DiagnosticEngine::hasErrorOnLine(llvm::SMLoc loc) const {
  unsigned buffer = sourceMgr.FindBufferContainingLoc(loc);
  return buffer &&
         errorLines.count({buffer, sourceMgr.FindLineNumber(loc, buffer)});
}

void DiagnosticEngine::reportFile(llvm::StringRef fileName, DiagID id,
                                  llvm::StringRef arg) {
  ++numErrors;
  stopped = true;
  llvm::SMDiagnostic diag(fileName, llvm::SourceMgr::DK_Error,
                          llvm::formatv(getDiagFormat(id).data(), arg).str());
  diag.print(nullptr, os);
}
