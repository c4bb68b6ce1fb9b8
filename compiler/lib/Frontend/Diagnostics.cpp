//===- Diagnostics.cpp - Located diagnostics for the front end ------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnnc/Frontend/Diagnostics.h"

#include "llvm/Support/WithColor.h"

#include <algorithm>

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
      print(loc, llvm::SourceMgr::DK_Note, message);
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
    print(
        loc, llvm::SourceMgr::DK_Error,
        llvm::formatv(getDiagFormat(DiagID::too_many_errors).data(), maxErrors)
            .str());
    return;
  }
  lastErrorPrinted = true;
  print(loc, llvm::SourceMgr::DK_Error, message);
}

void DiagnosticEngine::print(llvm::SMLoc loc, llvm::SourceMgr::DiagKind kind,
                             const std::string &message) {
  llvm::SMDiagnostic diag = sourceMgr.GetMessage(loc, kind, message);
  llvm::StringRef line = diag.getLineContents();
  int column = diag.getColumnNo();
  if (line.size() <= maxShownColumns || column < 0 ||
      static_cast<size_t>(column) > line.size()) {
    diag.print(nullptr, os);
    return;
  }
  // A window of maxShownColumns bytes around the caret, its ends moved off
  // UTF-8 continuation bytes so that no character is cut in two.
  auto isContinuation = [&](size_t i) {
    return i < line.size() &&
           (static_cast<unsigned char>(line[i]) & 0xC0) == 0x80;
  };
  size_t width = maxShownColumns;
  size_t begin =
      static_cast<size_t>(column) > width / 2 ? column - width / 2 : 0;
  size_t end = std::min(line.size(), begin + width);
  begin = end > width ? end - width : 0;
  while (begin > 0 && isContinuation(begin))
    --begin;
  while (isContinuation(end))
    ++end;
  std::string shown = (begin > 0 ? "..." : "") + line.slice(begin, end).str() +
                      (end < line.size() ? "..." : "");
  std::replace(shown.begin(), shown.end(), '\t', ' ');
  size_t caret = column - begin + (begin > 0 ? 3 : 0);

  {
    llvm::WithColor bold(os, llvm::raw_ostream::SAVEDCOLOR, /*Bold=*/true);
    bold << diag.getFilename() << ":" << diag.getLineNo() << ":" << column + 1
         << ": ";
  }
  llvm::WithColor(os, kind == llvm::SourceMgr::DK_Error
                          ? llvm::HighlightColor::Error
                          : llvm::HighlightColor::Note)
      << (kind == llvm::SourceMgr::DK_Error ? "error: " : "note: ");
  llvm::WithColor(os, llvm::raw_ostream::SAVEDCOLOR, /*Bold=*/true)
      << message << "\n";
  os << shown << "\n";
  llvm::WithColor(os, llvm::raw_ostream::GREEN, /*Bold=*/true)
      << std::string(caret, ' ') << "^\n";
}

bool DiagnosticEngine::hasErrorOnLine(llvm::SMLoc loc) const {
  unsigned buffer = sourceMgr.FindBufferContainingLoc(loc);
  return buffer &&
         errorLines.count({buffer, sourceMgr.FindLineNumber(loc, buffer)});
}

void DiagnosticEngine::emitFile(llvm::StringRef fileName, DiagID id,
                                const std::string &message) {
  if (getDiagKind(id) == DiagKind::Note) {
    if (lastErrorPrinted)
      llvm::SMDiagnostic(fileName, llvm::SourceMgr::DK_Note, message)
          .print(nullptr, os);
    return;
  }
  ++numErrors;
  stopped = true;
  lastErrorPrinted = true;
  llvm::SMDiagnostic(fileName, llvm::SourceMgr::DK_Error, message)
      .print(nullptr, os);
}
