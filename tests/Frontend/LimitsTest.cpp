//===- LimitsTest.cpp - The documented limits are the compiler's ----------===//
//
// Part of gnnc. docs/language.md, section "Limits", lists the bounds the
// front end enforces; each row must name the number in FrontendLimits.
//
//===----------------------------------------------------------------------===//

#include "gnnc/Frontend/Lexer.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/MemoryBuffer.h"

#include "gtest/gtest.h"

#include <map>
#include <string>

using namespace gnnc;

namespace {

/// The rows of the "Limits" table: first cell -> second cell.
std::map<std::string, std::string> documentedLimits() {
  std::map<std::string, std::string> rows;
  auto buffer =
      llvm::MemoryBuffer::getFile(GNNC_SOURCE_DIR "/docs/language.md");
  if (!buffer)
    return rows;
  llvm::StringRef text = (*buffer)->getBuffer();
  size_t start = text.find("### 2.8 Limits");
  if (start == llvm::StringRef::npos)
    return rows;
  text = text.drop_front(start);
  text = text.take_front(text.find("\n---"));
  llvm::SmallVector<llvm::StringRef> lines;
  text.split(lines, '\n');
  for (llvm::StringRef line : lines) {
    if (!line.starts_with("|") || line.starts_with("|---"))
      continue;
    llvm::SmallVector<llvm::StringRef> cells;
    line.trim().trim('|').split(cells, '|');
    if (cells.size() == 2)
      rows[cells[0].trim().str()] = cells[1].trim().str();
  }
  return rows;
}

/// The first number in `cell` ("1 MiB" -> 1, "4096 columns" -> 4096).
unsigned long long leadingNumber(llvm::StringRef cell) {
  unsigned long long value = 0;
  llvm::StringRef digits = cell.take_while(llvm::isDigit);
  if (digits.getAsInteger(10, value))
    return 0;
  return value;
}

TEST(Limits, DocsNameTheCompilersNumbers) {
  std::map<std::string, std::string> rows = documentedLimits();
  ASSERT_FALSE(rows.empty()) << "no Limits table in docs/language.md";
  auto row = [&](llvm::StringRef prefix) -> std::string {
    for (const auto &[what, limit] : rows)
      if (llvm::StringRef(what).starts_with(prefix))
        return limit;
    ADD_FAILURE() << "no row starting with '" << prefix.str() << "'";
    return "";
  };
  EXPECT_EQ(row("file size"), "1 MiB");
  EXPECT_EQ(FrontendLimits::maxFileBytes, size_t(1) << 20);
  EXPECT_EQ(leadingNumber(row("line length")), FrontendLimits::maxLineColumns);
  EXPECT_EQ(leadingNumber(row("indentation depth")),
            FrontendLimits::maxIndentLevels);
  EXPECT_EQ(leadingNumber(row("bracket nesting")),
            FrontendLimits::maxBracketDepth);
  EXPECT_EQ(leadingNumber(row("expression nesting")),
            FrontendLimits::maxExprHeight);
  EXPECT_EQ(leadingNumber(row("layers instantiating layers")),
            FrontendLimits::maxInstanceNesting);
  EXPECT_EQ(leadingNumber(row("iterations of an unrolled")),
            FrontendLimits::maxUnroll);
}

} // namespace
