//===- LineMap.cpp - Generated lines and the .gnn lines they come from ----===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnnc/Target/LineMap.h"

#include "gnnc/Target/SourceInfo.h"
#include "gnnc/Target/Target.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"

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

llvm::json::Value LineMap::toJSON() const {
  llvm::json::Object root;
  root["version"] = 1;
  llvm::json::Array sourceNames;
  for (const std::string &s : sources())
    sourceNames.push_back(s);
  root["sources"] = std::move(sourceNames);

  llvm::json::Object forward;
  for (const std::string &source : sources()) {
    llvm::json::Object lines;
    for (const auto &[line, ranges] : rangesOf(source)) {
      llvm::json::Array list;
      for (const Range &r : ranges)
        list.push_back(llvm::json::Object{
            {"file", r.file}, {"lines", llvm::json::Array{r.first, r.last}}});
      lines[std::to_string(line)] = std::move(list);
    }
    forward[source] = std::move(lines);
  }
  root["source_to_generated"] = std::move(forward);

  llvm::json::Object backward, kernels;
  for (const File &f : files) {
    llvm::json::Object lines;
    for (unsigned i = 0; i < f.lines.size(); ++i)
      if (f.lines[i])
        lines[std::to_string(i + 1)] = llvm::json::Object{
            {"file", f.lines[i].file}, {"line", f.lines[i].line}};
    backward[f.name] = std::move(lines);
    llvm::json::Array ranges;
    for (auto [first, last] : f.kernels)
      ranges.push_back(llvm::json::Array{first, last});
    kernels[f.name] = std::move(ranges);
  }
  root["generated_to_source"] = std::move(backward);
  root["kernels"] = std::move(kernels);
  return root;
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
