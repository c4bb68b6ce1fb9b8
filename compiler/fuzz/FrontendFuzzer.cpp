//===- FrontendFuzzer.cpp - libFuzzer entry point for the front end -------===//
//
// Part of gnnc. Feeds arbitrary bytes to gnnc::checkSource. Any crash,
// sanitizer report, leak or hang is a front-end bug: checkSource must turn
// every problem into a diagnostic.
//
// Note: the buffer libFuzzer hands us is not NUL-terminated, and neither is a
// StringRef in general; the front end must never read text.end().
//
//===----------------------------------------------------------------------===//

#include "gnnc/Frontend/Frontend.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  (void)gnnc::checkSource(text, "fuzz-input.gnn", llvm::nulls());
  return 0;
}
