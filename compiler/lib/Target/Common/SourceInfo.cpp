//===- SourceInfo.cpp - .gnn locations and source text --------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnnc/Target/SourceInfo.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;
using namespace gnnc::target;

namespace {

void collect(Location loc, SmallVectorImpl<SourceLoc> &out) {
  if (auto file = dyn_cast<FileLineColLoc>(loc)) {
    SourceLoc s{file.getFilename().str(), file.getLine(), file.getColumn()};
    for (const SourceLoc &seen : out)
      if (seen.file == s.file && seen.line == s.line && seen.column == s.column)
        return;
    out.push_back(std::move(s));
    return;
  }
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    for (Location inner : fused.getLocations())
      collect(inner, out);
    return;
  }
  if (auto name = dyn_cast<NameLoc>(loc)) {
    collect(name.getChildLoc(), out);
    return;
  }
  if (auto site = dyn_cast<CallSiteLoc>(loc)) {
    collect(site.getCallee(), out);
    return;
  }
  if (auto opaque = dyn_cast<OpaqueLoc>(loc))
    collect(opaque.getFallbackLocation(), out);
}

/// The first file position in `loc`, in the order of collect.
FileLineColLoc first(Location loc) {
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return file;
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    for (Location inner : fused.getLocations())
      if (FileLineColLoc file = first(inner))
        return file;
    return {};
  }
  if (auto name = dyn_cast<NameLoc>(loc))
    return first(name.getChildLoc());
  if (auto site = dyn_cast<CallSiteLoc>(loc))
    return first(site.getCallee());
  if (auto opaque = dyn_cast<OpaqueLoc>(loc))
    return first(opaque.getFallbackLocation());
  return {};
}

} // namespace

SourceLoc gnnc::target::primaryLoc(Location loc) {
  FileLineColLoc file = first(loc);
  if (!file)
    return SourceLoc();
  return SourceLoc{file.getFilename().str(), file.getLine(), file.getColumn()};
}

SmallVector<SourceLoc, 4> gnnc::target::allLocs(Location loc) {
  SmallVector<SourceLoc, 4> all;
  collect(loc, all);
  return all;
}

StringRef gnnc::target::baseName(StringRef file) {
  return llvm::sys::path::filename(file);
}

SourceFiles::SourceFiles(const llvm::SourceMgr *sourceMgr)
    : sourceMgr(sourceMgr) {}

SourceFiles::~SourceFiles() = default;

const std::vector<StringRef> &SourceFiles::linesOf(StringRef file) {
  auto it = cache.find(file);
  if (it != cache.end())
    return it->second;
  StringRef text;
  bool found = false;
  if (sourceMgr)
    for (unsigned i = 1; i <= sourceMgr->getNumBuffers(); ++i) {
      const llvm::MemoryBuffer *buffer = sourceMgr->getMemoryBuffer(i);
      if (buffer->getBufferIdentifier() == file) {
        text = buffer->getBuffer();
        found = true;
        break;
      }
    }
  if (!found) {
    auto buffer = llvm::MemoryBuffer::getFile(file, /*IsText=*/true);
    if (buffer) {
      text = (*buffer)->getBuffer();
      owned.push_back(std::move(*buffer));
    }
  }
  std::vector<StringRef> lines;
  while (!text.empty()) {
    auto [line, rest] = text.split('\n');
    lines.push_back(line.rtrim("\r"));
    text = rest;
  }
  return cache.insert({file, std::move(lines)}).first->second;
}

StringRef SourceFiles::line(StringRef file, unsigned line) {
  const std::vector<StringRef> &lines = linesOf(file);
  if (line == 0 || line > lines.size())
    return "";
  return lines[line - 1];
}

unsigned SourceFiles::numLines(StringRef file) {
  return static_cast<unsigned>(linesOf(file).size());
}
