//===- LineMap.cpp - Generated lines and the .gnn lines they come from ----===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnnc/Target/LineMap.h"

#include "gnnc/Target/SourceInfo.h"
#include "gnnc/Target/Target.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"

#include <map>
#include <set>

using namespace gnnc::target;

std::vector<std::string> LineMap::sources() const {
  std::set<std::string> names;
  for (const File &f : files)
    for (const SourceLine &s : f.lines)
      if (s)
        names.insert(s.file);
  return {names.begin(), names.end()};
}

std::map<unsigned, std::vector<LineMap::Range>>
LineMap::rangesOf(llvm::StringRef source) const {
  std::map<unsigned, std::vector<Range>> out;
  for (const File &f : files) {
    for (unsigned i = 0; i < f.lines.size();) {
      const SourceLine &s = f.lines[i];
      if (!s || s.file != source) {
        ++i;
        continue;
      }
      unsigned j = i + 1;
      while (j < f.lines.size() && f.lines[j] == s)
        ++j;
      out[s.line].push_back(Range{f.name, i + 1, j});
      i = j;
    }
  }
  return out;
}

namespace {

/// Calls `visit(n)` for n = 1 .. count in the order of their decimal
/// strings ("1", "10", "100", "11", ...), the order of a JSON object's keys.
template <typename Visit> void forEachInKeyOrder(size_t count, Visit visit) {
  size_t n = 1;
  for (size_t i = 0; i < count; ++i) {
    visit(n);
    if (n * 10 <= count) {
      n *= 10;
      continue;
    }
    if (n >= count)
      n /= 10;
    ++n;
    while (n % 10 == 0)
      n /= 10;
  }
}

/// A string as a JSON object key (invalid UTF-8 replaced, as llvm::json
/// does).
std::string keyOf(llvm::StringRef s) {
  return llvm::json::isUTF8(s) ? s.str() : llvm::json::fixUTF8(s);
}

} // namespace

void LineMap::printJSON(llvm::raw_ostream &os) const {
  // Objects are written with their keys in sorted order; a later file of
  // the same name replaces an earlier one.
  std::map<std::string, const File *> byName;
  for (const File &f : files)
    byName[keyOf(f.name)] = &f;
  std::vector<std::string> names = sources();
  llvm::json::OStream j(os, 2);
  j.object([&] {
    j.attributeObject("generated_to_source", [&] {
      for (const auto &[name, f] : byName)
        j.attributeObject(name, [&, f = f] {
          forEachInKeyOrder(f->lines.size(), [&](size_t n) {
            const SourceLine &s = f->lines[n - 1];
            if (!s)
              return;
            j.attributeObject(std::to_string(n), [&] {
              j.attribute("file", s.file);
              j.attribute("line", s.line);
            });
          });
        });
    });
    j.attributeObject("kernels", [&] {
      for (const auto &[name, f] : byName)
        j.attributeArray(name, [&, f = f] {
          for (auto [first, last] : f->kernels)
            j.array([&, first = first, last = last] {
              j.value(first);
              j.value(last);
            });
        });
    });
    j.attributeObject("source_to_generated", [&] {
      std::map<std::string, std::string> byKey;
      for (const std::string &source : names)
        byKey[keyOf(source)] = source;
      for (const auto &[key, source] : byKey)
        j.attributeObject(key, [&, &source = source] {
          std::vector<std::pair<std::string, std::vector<Range>>> lines;
          for (auto &[line, ranges] : rangesOf(source))
            lines.emplace_back(std::to_string(line), std::move(ranges));
          llvm::sort(lines, [](const auto &a, const auto &b) {
            return a.first < b.first;
          });
          for (const auto &[line, ranges] : lines)
            j.attributeArray(line, [&, &ranges = ranges] {
              for (const Range &r : ranges)
                j.object([&] {
                  j.attribute("file", r.file);
                  j.attributeArray("lines", [&] {
                    j.value(r.first);
                    j.value(r.last);
                  });
                });
            });
        });
    });
    j.attributeArray("sources", [&] {
      for (const std::string &s : names)
        j.value(s);
    });
    j.attribute("version", 1);
  });
}

namespace {

/// `text` cut or padded to exactly `width` columns (tabs as one space).
std::string fit(llvm::StringRef text, unsigned width) {
  std::string out;
  for (char c : text) {
    if (out.size() >= width)
      break;
    out += c == '\t' ? ' ' : c;
  }
  if (text.size() > width && width > 0)
    out.back() = '>';
  out.resize(width, ' ');
  return out;
}

} // namespace

void LineMap::printSideBySide(
    SourceFiles &sourceFiles,
    const std::map<std::string, std::string> &generated, unsigned width,
    llvm::raw_ostream &os) const {
  width = std::max(width, 40u);
  unsigned left = (width - 3) / 2;
  unsigned right = width - 3 - left;
  std::map<std::string, std::vector<llvm::StringRef>> genLines;
  for (const auto &[name, text] : generated) {
    llvm::SmallVector<llvm::StringRef> lines;
    llvm::StringRef(text).split(lines, '\n');
    genLines[name].assign(lines.begin(), lines.end());
  }
  for (const std::string &source : sources()) {
    std::map<unsigned, std::vector<Range>> ranges = rangesOf(source);
    unsigned numLines = sourceFiles.numLines(source);
    unsigned lineWidth = std::to_string(std::max(numLines, 1u)).size();
    std::string title = "== " + baseName(source).str() + " ";
    std::string generated = "== generated ";
    title.resize(std::max<size_t>(title.size(), left), '=');
    generated.resize(std::max<size_t>(generated.size(), right), '=');
    os << title.substr(0, left) << " | " << generated.substr(0, right) << "\n";
    for (unsigned line = 1; line <= numLines; ++line) {
      std::string number = std::to_string(line);
      std::string leftText = std::string(lineWidth - number.size(), ' ') +
                             number + "  " +
                             sourceFiles.line(source, line).str();
      std::vector<std::string> rightTexts;
      auto it = ranges.find(line);
      if (it != ranges.end())
        for (const Range &r : it->second) {
          const std::vector<llvm::StringRef> &lines = genLines[r.file];
          for (unsigned g = r.first; g <= r.last; ++g)
            rightTexts.push_back(
                r.file + ":" + std::to_string(g) + "  " +
                (g <= lines.size() ? lines[g - 1].str() : std::string()));
        }
      if (rightTexts.empty())
        rightTexts.push_back("");
      for (size_t k = 0; k < rightTexts.size(); ++k) {
        std::string row = fit(k == 0 ? leftText : "", left) + " | " +
                          fit(rightTexts[k], right);
        os << llvm::StringRef(row).rtrim() << "\n";
      }
    }
  }
}

LineMap gnnc::target::buildLineMap(const std::vector<GeneratedFile> &files) {
  LineMap map;
  for (const GeneratedFile &f : files) {
    LineMap::File file;
    file.name = f.name;
    file.lines = f.lineSources;
    file.kernels = f.kernelRanges;
    map.files.push_back(std::move(file));
  }
  return map;
}
