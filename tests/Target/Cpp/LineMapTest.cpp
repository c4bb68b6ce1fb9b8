//===- LineMapTest.cpp - The line maps of the generated modules -----------===//
//
// Part of gnnc. Every module compiled for the tests comes with
// <stem>.gnnmap.json. Every line of every kernel must map to a .gnn line
// that exists; the two directions of the map must agree with each other
// and with the files on disk.
//
//===----------------------------------------------------------------------===//

#include "Modules.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace {

std::string pathOf(const CompiledModule &m, llvm::StringRef file) {
  llvm::SmallString<256> out(m.dir);
  llvm::sys::path::append(out, file);
  return std::string(out);
}

/// The number of lines of a file (0 when it cannot be read).
unsigned numLines(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!buffer)
    return 0;
  llvm::StringRef text = (*buffer)->getBuffer();
  unsigned n = static_cast<unsigned>(text.count('\n'));
  if (!text.empty() && !text.ends_with("\n"))
    ++n;
  return n;
}

class LineMap : public ::testing::TestWithParam<const CompiledModule *> {};

TEST_P(LineMap, KernelLinesMapToSourceLines) {
  const CompiledModule &m = *GetParam();
  auto buffer = llvm::MemoryBuffer::getFile(
      pathOf(m, std::string(m.stem) + ".gnnmap.json"));
  ASSERT_TRUE(bool(buffer)) << "no line map";
  llvm::Expected<llvm::json::Value> parsed =
      llvm::json::parse((*buffer)->getBuffer());
  ASSERT_TRUE(bool(parsed)) << llvm::toString(parsed.takeError());
  const llvm::json::Object *root = parsed->getAsObject();
  ASSERT_TRUE(root);
  EXPECT_EQ(root->getInteger("version"), 1);
  const llvm::json::Object *back = root->getObject("generated_to_source");
  const llvm::json::Object *forward = root->getObject("source_to_generated");
  const llvm::json::Object *kernels = root->getObject("kernels");
  ASSERT_TRUE(back && forward && kernels);

  std::map<std::string, unsigned> sourceLines;
  auto sourceSize = [&](const std::string &file) {
    auto it = sourceLines.find(file);
    if (it == sourceLines.end())
      it = sourceLines.insert({file, numLines(file)}).first;
    return it->second;
  };

  // Every kernel line maps to an existing .gnn line.
  unsigned kernelLines = 0;
  for (const auto &[file, ranges] : *kernels) {
    const llvm::json::Object *lines = back->getObject(file);
    ASSERT_TRUE(lines) << file.str();
    unsigned generated = numLines(pathOf(m, file));
    for (const llvm::json::Value &range : *ranges.getAsArray()) {
      const llvm::json::Array *pair = range.getAsArray();
      ASSERT_TRUE(pair && pair->size() == 2);
      int64_t first = *(*pair)[0].getAsInteger();
      int64_t last = *(*pair)[1].getAsInteger();
      ASSERT_LE(first, last);
      ASSERT_LE(last, static_cast<int64_t>(generated));
      for (int64_t line = first; line <= last; ++line) {
        ++kernelLines;
        const llvm::json::Object *source =
            lines->getObject(std::to_string(line));
        ASSERT_TRUE(source) << file.str() << ":" << line
                            << " (in a kernel) maps to no .gnn line";
        std::string gnn = source->getString("file")->str();
        int64_t at = *source->getInteger("line");
        EXPECT_GE(at, 1);
        EXPECT_LE(at, static_cast<int64_t>(sourceSize(gnn)))
            << file.str() << ":" << line << " maps to " << gnn << ":" << at
            << ", which does not exist";
      }
    }
  }
  // Modules without aggregations (graph-less layers) have no kernels.
  (void)kernelLines;

  // The two directions agree.
  for (const auto &[gnn, lines] : *forward) {
    for (const auto &[line, ranges] : *lines.getAsObject()) {
      for (const llvm::json::Value &range : *ranges.getAsArray()) {
        const llvm::json::Object *r = range.getAsObject();
        std::string file = r->getString("file")->str();
        const llvm::json::Array *span = r->getArray("lines");
        int64_t first = *(*span)[0].getAsInteger();
        int64_t last = *(*span)[1].getAsInteger();
        for (int64_t g = first; g <= last; ++g) {
          const llvm::json::Object *s =
              back->getObject(file)->getObject(std::to_string(g));
          ASSERT_TRUE(s) << file << ":" << g;
          EXPECT_EQ(s->getString("file")->str(), gnn.str());
          EXPECT_EQ(std::to_string(*s->getInteger("line")), line.str());
        }
      }
    }
  }
}

std::vector<const CompiledModule *> allModules() {
  std::vector<const CompiledModule *> out;
  for (size_t i = 0; i < kNumCompiledModules; ++i)
    out.push_back(&kCompiledModules[i]);
  return out;
}

INSTANTIATE_TEST_SUITE_P(Modules, LineMap, ::testing::ValuesIn(allModules()),
                         [](const auto &info) {
                           return std::string(info.param->id);
                         });

/// Every example has kernels, and every aggregation of the models as
/// written is one.
TEST(LineMapSet, ExamplesHaveKernels) {
  for (size_t i = 0; i < kNumCompiledModules; ++i) {
    const CompiledModule &m = kCompiledModules[i];
    if (!llvm::StringRef(m.id).starts_with("ex_"))
      continue;
    auto buffer = llvm::MemoryBuffer::getFile(
        pathOf(m, std::string(m.stem) + ".gnnmap.json"));
    ASSERT_TRUE(bool(buffer)) << m.id;
    llvm::Expected<llvm::json::Value> parsed =
        llvm::json::parse((*buffer)->getBuffer());
    ASSERT_TRUE(bool(parsed));
    const llvm::json::Array *ranges =
        parsed->getAsObject()->getObject("kernels")->getArray(
            std::string(m.stem) + ".cpp");
    ASSERT_TRUE(ranges) << m.id;
    EXPECT_FALSE(ranges->empty()) << m.id << " has no kernel";
  }
}

} // namespace
