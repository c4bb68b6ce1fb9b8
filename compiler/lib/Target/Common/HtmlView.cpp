//===- HtmlView.cpp - The compilation as one self-contained HTML page -----===//
//
// Part of gnnc. The page is static HTML with one inline style sheet and one
// inline script: every line is a <div> carrying the .gnn line it comes from
// (`data-src="F:L"`), the highlighting is done here (spans with classes), and
// the script only toggles classes and scrolls.
//
//===----------------------------------------------------------------------===//

#include "gnnc/Target/HtmlView.h"

#include "gnnc/Dialect/GNN/IR/GNN.h"
#include "gnnc/Target/SourceInfo.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <map>
#include <set>

using namespace mlir;
using namespace gnnc::target;

namespace {

std::vector<llvm::StringRef> splitLines(llvm::StringRef text) {
  std::vector<llvm::StringRef> lines;
  while (!text.empty()) {
    auto [line, rest] = text.split('\n');
    lines.push_back(line);
    text = rest;
  }
  return lines;
}

/// Bytes of one row of a gnn tensor (0 when a size is unknown).
int64_t rowBytes(Type type) {
  auto t = dyn_cast<gnnc::gnn::DomainTensorType>(type);
  if (!t || !t.getElementType().isIntOrFloat())
    return 0;
  int64_t elements = 1;
  for (int64_t d : t.getShape()) {
    if (ShapedType::isDynamic(d))
      return 0;
    elements *= d;
  }
  return elements * ((t.getElementType().getIntOrFloatBitWidth() + 7) / 8);
}

/// "binary add", "unary leaky_relu", "dropout": an op of an aggregate body.
std::string opText(Operation *op) {
  if (auto binary = dyn_cast<gnnc::gnn::BinaryOp>(op))
    return ("binary " + gnnc::gnn::stringifyBinaryFn(binary.getFn())).str();
  if (auto unary = dyn_cast<gnnc::gnn::UnaryOp>(op))
    return ("unary " + gnnc::gnn::stringifyUnaryFn(unary.getFn())).str();
  return op->getName().stripDialect().str();
}

void addLines(Location loc, std::vector<SourceLine> &lines) {
  for (const SourceLoc &s : allLocs(loc))
    lines.push_back(s.toLine());
}

std::string escape(llvm::StringRef text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    case '\t':
      out += "    ";
      break;
    default:
      out += c;
    }
  }
  return out;
}

//===----------------------------------------------------------------------===//
// Syntax highlighting: spans with a class per token kind.
//===----------------------------------------------------------------------===//

enum class Language { Gnn, Cpp, Mlir };

bool isIdentStart(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool isIdentChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

const llvm::StringSet<> &keywordsOf(Language language) {
  static const llvm::StringSet<> gnn = {
      "for",    "in",     "if",    "else",  "elif",   "return",
      "def",    "class",  "layer", "model", "param",  "buffer",
      "import", "from",   "and",   "or",    "not",    "True",
      "False",  "None",   "with",  "as",    "lambda", "while",
      "pass",   "global", "const", "let",   "is"};
  static const llvm::StringSet<> cpp = {"alignas",
                                        "auto",
                                        "bool",
                                        "break",
                                        "case",
                                        "char",
                                        "const",
                                        "constexpr",
                                        "continue",
                                        "default",
                                        "delete",
                                        "do",
                                        "double",
                                        "else",
                                        "enum",
                                        "extern",
                                        "false",
                                        "float",
                                        "for",
                                        "if",
                                        "inline",
                                        "int",
                                        "long",
                                        "namespace",
                                        "new",
                                        "nullptr",
                                        "return",
                                        "short",
                                        "signed",
                                        "sizeof",
                                        "static",
                                        "static_cast",
                                        "struct",
                                        "switch",
                                        "template",
                                        "true",
                                        "typedef",
                                        "typename",
                                        "union",
                                        "unsigned",
                                        "using",
                                        "void",
                                        "volatile",
                                        "while",
                                        "int8_t",
                                        "int16_t",
                                        "int32_t",
                                        "int64_t",
                                        "uint8_t",
                                        "uint16_t",
                                        "uint32_t",
                                        "uint64_t",
                                        "size_t",
                                        "__global__",
                                        "__device__",
                                        "__host__",
                                        "__shared__",
                                        "__restrict__",
                                        "__forceinline__",
                                        "reinterpret_cast",
                                        "const_cast",
                                        "class",
                                        "public",
                                        "private",
                                        "noexcept",
                                        "operator",
                                        "this",
                                        "virtual"};
  static const llvm::StringSet<> mlir = {
      "func",       "return", "module",    "to",   "step", "by",
      "reductions", "in",     "iter_args", "true", "false"};
  switch (language) {
  case Language::Gnn:
    return gnn;
  case Language::Cpp:
    return cpp;
  case Language::Mlir:
    return mlir;
  }
  return gnn;
}

/// Highlights one line; `inComment` carries a C block comment across lines.
std::string highlight(llvm::StringRef line, Language language,
                      bool &inComment) {
  std::string out;
  auto span = [&](const char *cls, llvm::StringRef text) {
    out += "<span class=\"";
    out += cls;
    out += "\">";
    out += escape(text);
    out += "</span>";
  };
  const llvm::StringSet<> &keywords = keywordsOf(language);
  size_t i = 0, n = line.size();
  if (language == Language::Cpp) {
    if (inComment) {
      size_t end = line.find("*/");
      if (end == llvm::StringRef::npos) {
        span("c", line);
        return out;
      }
      span("c", line.take_front(end + 2));
      i = end + 2;
      inComment = false;
    }
    if (line.ltrim().starts_with("#")) {
      size_t comment = line.find("//", i);
      span("pp", line.slice(i, comment));
      if (comment != llvm::StringRef::npos)
        span("c", line.drop_front(comment));
      return out;
    }
  }
  while (i < n) {
    char c = line[i];
    llvm::StringRef rest = line.drop_front(i);
    bool lineComment =
        language == Language::Gnn ? c == '#' : rest.starts_with("//");
    if (lineComment) {
      span("c", rest);
      break;
    }
    if (language == Language::Cpp && rest.starts_with("/*")) {
      size_t end = rest.find("*/", 2);
      if (end == llvm::StringRef::npos) {
        span("c", rest);
        inComment = true;
        break;
      }
      span("c", rest.take_front(end + 2));
      i += end + 2;
      continue;
    }
    if (c == '"' || (c == '\'' && language != Language::Mlir)) {
      size_t j = i + 1;
      while (j < n && line[j] != c)
        j += line[j] == '\\' ? 2 : 1;
      j = std::min(j + 1, n);
      span("s", line.slice(i, j));
      i = j;
      continue;
    }
    if (language == Language::Mlir &&
        (c == '%' || c == '@' || c == '^' || c == '!' || c == '#')) {
      size_t j = i + 1;
      while (j < n && (isIdentChar(line[j]) || line[j] == '.' ||
                       line[j] == '$' || line[j] == '-'))
        ++j;
      if (j < n && c == '@' && line[j] == '"') { // @"quoted"
        j = line.find('"', j + 1);
        j = j == llvm::StringRef::npos ? n : j + 1;
      }
      span(c == '%'   ? "v"
           : c == '@' ? "sym"
           : c == '^' ? "v"
                      : "t",
           line.slice(i, j));
      i = j;
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t j = i + 1;
      while (j < n && (isIdentChar(line[j]) || line[j] == '.' ||
                       ((line[j] == '+' || line[j] == '-') &&
                        (line[j - 1] == 'e' || line[j - 1] == 'E'))))
        ++j;
      span("n", line.slice(i, j));
      i = j;
      continue;
    }
    if (isIdentStart(c)) {
      size_t j = i + 1;
      bool dotted = false;
      while (j < n &&
             (isIdentChar(line[j]) ||
              (language != Language::Gnn && line[j] == '.' && j + 1 < n &&
               isIdentStart(line[j + 1])) ||
              (language == Language::Cpp && line[j] == ':' && j + 2 < n &&
               line[j + 1] == ':' && isIdentStart(line[j + 2])))) {
        if (line[j] == '.')
          dotted = true;
        j += line[j] == ':' ? 2 : 1;
      }
      llvm::StringRef word = line.slice(i, j);
      if (keywords.contains(word))
        span("k", word);
      else if (language == Language::Mlir && dotted)
        span("op", word);
      else
        out += escape(word);
      i = j;
      continue;
    }
    out += escape(line.substr(i, 1));
    ++i;
  }
  return out;
}

Language languageOf(llvm::StringRef name) {
  if (name == "mlir")
    return Language::Mlir;
  if (name == "cpp")
    return Language::Cpp;
  return Language::Gnn;
}

//===----------------------------------------------------------------------===//
// The page's fixed parts.
//===----------------------------------------------------------------------===//

const char *const kStyle = R"css(
* { box-sizing: border-box; }
html, body { margin: 0; height: 100%; font-family: system-ui, sans-serif;
  font-size: 13px; color: #1f2328; background: #fff; }
header { padding: 6px 12px; border-bottom: 1px solid #d0d7de;
  background: #f6f8fa; display: flex; gap: 16px; align-items: baseline; }
header h1 { font-size: 15px; margin: 0; }
header .cmd { font-family: ui-monospace, monospace; color: #57606a; }
header .legend span { margin-right: 10px; }
main { display: flex; height: calc(100% - 34px); }
.col { display: flex; flex-direction: column; min-width: 0; }
#left { width: 42%; border-right: 1px solid #d0d7de; }
#right { flex: 1; }
.scroll { overflow: auto; flex: 1; }
.code { font-family: ui-monospace, SFMono-Regular, Menlo, monospace;
  font-size: 12px; line-height: 17px; }
.src-line, .gen-line { display: flex; cursor: pointer; min-height: 17px; }
.src-line .no, .gen-line .no { flex: none; width: 4.5em; padding-right: 8px;
  text-align: right; color: #8c959f; user-select: none; }
.src-line .tx, .gen-line .tx { flex: none; padding-right: 12px;
  white-space: pre; }
.gen-line:not([data-src]) { cursor: default; }
.gen-line:not([data-src]) .tx { opacity: 0.72; }
.src-line.in-kernel { border-left: 4px solid #8250df; }
.src-line.in-kernel-bw { border-left: 4px solid #bf3989; }
.src-line:not(.in-kernel):not(.in-kernel-bw) { border-left: 4px solid transparent; }
.hl { background: #fff3b0; }
.sel { background: #ffd33d !important; }
.src-line:hover, .gen-line[data-src]:hover { background: #eaeef2; }
.kernel-group { margin: 6px 8px 2px 4.5em; padding: 4px 8px;
  border: 1px solid #c297ff; border-left: 4px solid #8250df;
  border-radius: 4px; background: #fbf8ff; font-size: 12px;
  white-space: normal; }
.kernel-group.backward { border-color: #f0a3c8; border-left-color: #bf3989;
  background: #fff8fb; }
.kernel-group b { font-family: ui-monospace, monospace; font-weight: 600; }
.kernel-group .kernel { margin-top: 3px; padding-top: 3px;
  border-top: 1px dotted #d0d7de; }
.kernel-group .what { color: #57606a; }
.remat { flex: none; margin-left: 6px; padding: 0 5px; border-radius: 8px;
  font-family: system-ui, sans-serif; font-size: 11px; line-height: 15px;
  align-self: center; }
.remat.store { background: #ddf4ff; color: #0550ae; }
.remat.recompute { background: #dafbe1; color: #116329; }
.tabs { display: flex; flex-wrap: wrap; gap: 2px; padding: 4px 6px 0;
  border-bottom: 1px solid #d0d7de; background: #f6f8fa; }
.tab { border: 1px solid #d0d7de; border-bottom: none; background: #eaeef2;
  padding: 4px 10px; border-radius: 4px 4px 0 0; cursor: pointer;
  font: inherit; }
.tab.active { background: #fff; font-weight: 600; }
.pane { display: none; }
.pane.active { display: block; }
.pane-title { padding: 4px 8px; color: #57606a; border-bottom: 1px solid #eaeef2; }
.c { color: #6e7781; font-style: italic; }
.k { color: #cf222e; }
.s { color: #0a3069; }
.n { color: #0550ae; }
.pp { color: #8250df; }
.v { color: #953800; }
.sym { color: #8250df; font-weight: 600; }
.t { color: #116329; }
.op { color: #0550ae; font-weight: 600; }
.src-line .tx .k { color: #cf222e; }
)css";

const char *const kScript = R"js(
(function () {
  'use strict';
  var byKey = new Map();
  document.querySelectorAll('.gen-line[data-src]').forEach(function (el) {
    var key = el.getAttribute('data-src');
    if (!byKey.has(key)) byKey.set(key, []);
    byKey.get(key).push(el);
  });
  var pinned = null;
  function clear(cls) {
    document.querySelectorAll('.' + cls).forEach(function (el) {
      el.classList.remove(cls);
    });
  }
  function activePane() { return document.querySelector('.pane.active'); }
  function scrollPaneTo(pane, el) {
    var box = document.getElementById('right-scroll');
    if (!pane || !el || !box) return;
    box.scrollTop = el.offsetTop - box.offsetTop - box.clientHeight / 3;
  }
  function firstIn(pane, key) {
    var list = byKey.get(key) || [];
    for (var i = 0; i < list.length; ++i)
      if (pane && pane.contains(list[i])) return list[i];
    return null;
  }
  function showSource(key) {
    clear('hl');
    (byKey.get(key) || []).forEach(function (el) { el.classList.add('hl'); });
    var pane = activePane();
    scrollPaneTo(pane, firstIn(pane, key));
  }
  function sourceLine(key) {
    var parts = key.split(':');
    return document.getElementById('s' + parts[0] + '-' + parts[1]);
  }
  function pinSource(el) {
    clear('sel');
    el.classList.add('sel');
    pinned = el.getAttribute('data-file') + ':' + el.getAttribute('data-line');
    showSource(pinned);
  }
  function pinGenerated(el) {
    var key = el.getAttribute('data-src');
    if (!key) return;
    clear('sel');
    clear('hl');
    el.classList.add('sel');
    pinned = null;
    (byKey.get(key) || []).forEach(function (g) { g.classList.add('hl'); });
    var src = sourceLine(key);
    if (src) {
      src.classList.add('hl');
      var box = document.getElementById('left-scroll');
      box.scrollTop = src.offsetTop - box.offsetTop - box.clientHeight / 3;
    }
  }
  document.querySelectorAll('.src-line').forEach(function (el) {
    el.addEventListener('click', function () { pinSource(el); });
    el.addEventListener('mouseenter', function () {
      showSource(el.getAttribute('data-file') + ':' +
                 el.getAttribute('data-line'));
    });
    el.addEventListener('mouseleave', function () {
      if (pinned) showSource(pinned); else clear('hl');
    });
  });
  document.querySelectorAll('.gen-line[data-src]').forEach(function (el) {
    el.addEventListener('click', function () { pinGenerated(el); });
  });
  document.querySelectorAll('.tab').forEach(function (button) {
    button.addEventListener('click', function () {
      var id = button.getAttribute('data-tab');
      clear('active');
      button.classList.add('active');
      var pane = document.getElementById('pane-' + id);
      pane.classList.add('active');
      if (pinned) scrollPaneTo(pane, firstIn(pane, pinned));
    });
  });
})();
)js";

} // namespace

//===----------------------------------------------------------------------===//
// What the page shows.
//===----------------------------------------------------------------------===//

HtmlTab gnnc::target::printIRTab(ModuleOp module, llvm::StringRef id,
                                 llvm::StringRef title, llvm::StringRef file) {
  HtmlTab tab;
  tab.id = id.str();
  tab.title = title.str();
  tab.target = "ir";
  tab.file = file.str();
  tab.language = "mlir";
  AsmState::LocationMap where;
  AsmState state(module, OpPrintingFlags(), &where);
  llvm::raw_string_ostream os(tab.text);
  module->print(os, state);
  os << "\n";
  os.flush();
  tab.lines.resize(splitLines(tab.text).size());
  // Lines are counted from 1 in the location map; the op that starts a
  // line names it (an op and the one nested in it never share a line).
  module->walk([&](Operation *op) {
    auto it = where.find(op);
    if (it == where.end() || it->second.first == 0 ||
        it->second.first > tab.lines.size())
      return;
    SourceLoc loc = primaryLoc(op->getLoc());
    if (loc)
      tab.lines[it->second.first - 1] = loc.toLine();
  });
  return tab;
}

std::vector<FusedKernel> gnnc::target::collectFusedKernels(ModuleOp fused) {
  std::vector<FusedKernel> kernels;
  for (auto func : fused.getOps<func::FuncOp>()) {
    std::vector<gnnc::gnn::AggregateOp> aggregates;
    func.walk([&](gnnc::gnn::AggregateOp op) { aggregates.push_back(op); });
    for (auto [k, aggregate] : llvm::enumerate(aggregates)) {
      FusedKernel kernel;
      kernel.name = (func.getName() + ".aggregate" + llvm::Twine(k)).str();
      kernel.backward = func.getName().ends_with(".backward");
      addLines(aggregate.getLoc(), kernel.lines);
      Block &body = aggregate.getBlock();
      for (auto [input, arg] :
           llvm::zip(aggregate.getInputs(), body.getArguments())) {
        auto t = dyn_cast<gnnc::gnn::DomainTensorType>(input.getType());
        if (!t || !t.isVertexOrEdge())
          continue;
        std::string what = gnnc::gnn::describeType(t);
        if (Operation *def = input.getDefiningOp()) {
          addLines(def->getLoc(), kernel.lines);
          if (SourceLoc loc = primaryLoc(def->getLoc()))
            what += llvm::formatv(" (line {0})", loc.line).str();
        }
        kernel.gathers.push_back(what);
        kernel.bytesPerEdge += rowBytes(arg.getType());
      }
      for (Operation &op : body.without_terminator()) {
        addLines(op.getLoc(), kernel.lines);
        kernel.elementwise.push_back(opText(&op));
        for (Value result : op.getResults())
          kernel.bytesPerEdge += rowBytes(result.getType());
      }
      llvm::StringRef by = gnnc::gnn::stringifyDomain(aggregate.getBy());
      for (unsigned i = 0, e = aggregate.getReductions().size(); i < e; ++i)
        kernel.scatters.push_back((aggregate.getKind(i) + " by " + by).str());
      std::sort(kernel.lines.begin(), kernel.lines.end(),
                [](const SourceLine &a, const SourceLine &b) {
                  return std::tie(a.file, a.line) < std::tie(b.file, b.line);
                });
      kernel.lines.erase(std::unique(kernel.lines.begin(), kernel.lines.end()),
                         kernel.lines.end());
      kernels.push_back(std::move(kernel));
    }
  }
  return kernels;
}

std::vector<RematDecision>
gnnc::target::parseRematReport(llvm::StringRef report,
                               const std::vector<std::string> &sources) {
  std::vector<RematDecision> decisions;
  std::string function;
  for (llvm::StringRef line : splitLines(report)) {
    if (line.starts_with("@")) {
      function = line.split(':').first.str();
      continue;
    }
    llvm::StringRef rest = line.ltrim();
    llvm::StringRef decision;
    if (rest.consume_front("store"))
      decision = "store";
    else if (rest.consume_front("recompute"))
      decision = "recompute";
    else
      continue;
    rest = rest.ltrim();
    auto [where, detail] = rest.split(' ');
    // where: file:line:col, the file by its base name.
    auto [fileAndLine, column] = where.rsplit(':');
    auto [file, lineText] = fileAndLine.rsplit(':');
    unsigned number = 0;
    if (lineText.getAsInteger(10, number) || number == 0)
      continue;
    for (const std::string &source : sources) {
      if (llvm::sys::path::filename(source) != file && source != file)
        continue;
      decisions.push_back(RematDecision{SourceLine{source, number}, function,
                                        decision.str(), detail.trim().str()});
      break;
    }
  }
  return decisions;
}

//===----------------------------------------------------------------------===//
// The page.
//===----------------------------------------------------------------------===//

void gnnc::target::printHtmlPage(const HtmlPage &page, SourceFiles &sourceFiles,
                                 llvm::raw_ostream &os) {
  std::map<std::string, unsigned> sourceIndex;
  for (auto [i, name] : llvm::enumerate(page.sources))
    sourceIndex.emplace(name, static_cast<unsigned>(i));
  auto keyOf = [&](const SourceLine &line) -> std::string {
    auto it = sourceIndex.find(line.file);
    if (!line || it == sourceIndex.end())
      return "";
    return llvm::formatv("{0}:{1}", it->second, line.line).str();
  };

  // Kernels with the same source lines (instances of one layer) form one
  // group, drawn before its first line.
  struct Group {
    std::vector<SourceLine> lines;
    std::vector<const FusedKernel *> kernels;
  };
  std::vector<Group> groups;
  for (const FusedKernel &k : page.kernels) {
    if (k.lines.empty())
      continue;
    auto same = llvm::find_if(groups, [&](const Group &g) {
      return g.lines == k.lines && g.kernels.front()->backward == k.backward;
    });
    if (same == groups.end()) {
      groups.push_back(Group{k.lines, {}});
      same = std::prev(groups.end());
    }
    same->kernels.push_back(&k);
  }
  std::map<std::string, std::vector<const Group *>> groupsBefore;
  std::map<std::string, std::string> kernelClass;
  for (const Group &g : groups) {
    groupsBefore[keyOf(g.lines.front())].push_back(&g);
    for (const SourceLine &l : g.lines) {
      std::string &cls = kernelClass[keyOf(l)];
      if (cls.empty() || !g.kernels.front()->backward)
        cls = g.kernels.front()->backward ? "in-kernel-bw" : "in-kernel";
    }
  }
  std::map<std::string, std::vector<const RematDecision *>> rematOn;
  for (const RematDecision &d : page.remat)
    rematOn[keyOf(d.line)].push_back(&d);

  os << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta "
        "charset=\"utf-8\">\n"
     << "<title>gnnc: " << escape(page.sources.empty() ? "" : page.sources[0])
     << "</title>\n<style>" << kStyle << "</style>\n</head>\n<body>\n";
  os << "<header><h1>gnnc</h1><span class=\"cmd\">" << escape(page.command)
     << "</span><span class=\"legend\"><span class=\"remat store\">store"
     << "</span><span class=\"remat recompute\">recompute</span>"
     << "(rematerialisation for the backward, N = " << page.vertices
     << ", E = " << page.edges << ")</span></header>\n<main>\n";

  // The source pane.
  os << "<div class=\"col\" id=\"left\"><div class=\"scroll code\" "
        "id=\"left-scroll\">\n";
  for (auto [f, name] : llvm::enumerate(page.sources)) {
    os << "<div class=\"pane-title\">" << escape(name) << "</div>\n";
    bool inComment = false;
    for (unsigned l = 1, e = sourceFiles.numLines(name); l <= e; ++l) {
      std::string key = llvm::formatv("{0}:{1}", f, l).str();
      for (const Group *g : groupsBefore[key]) {
        const FusedKernel &first = *g->kernels.front();
        std::string names;
        for (const FusedKernel *k : g->kernels)
          names += (names.empty() ? "" : " ") + k->name;
        os << "<div class=\"kernel-group" << (first.backward ? " backward" : "")
           << "\" data-file=\"" << f << "\" data-first=\""
           << g->lines.front().line << "\" data-last=\"" << g->lines.back().line
           << "\" data-kernels=\"" << escape(names) << "\">"
           << (first.backward ? "backward " : "")
           << (g->kernels.size() == 1 ? "fused kernel" : "fused kernels")
           << " from lines " << g->lines.front().line << "-"
           << g->lines.back().line;
        // Kernels that fused the same ops (instances of one layer, the
        // forward and the saving forward) are described once.
        std::vector<std::vector<const FusedKernel *>> kinds;
        for (const FusedKernel *k : g->kernels) {
          auto same = llvm::find_if(kinds, [&](const auto &kind) {
            const FusedKernel &o = *kind.front();
            return o.gathers == k->gathers && o.elementwise == k->elementwise &&
                   o.scatters == k->scatters &&
                   o.bytesPerEdge == k->bytesPerEdge;
          });
          if (same == kinds.end())
            kinds.push_back({k});
          else
            same->push_back(k);
        }
        for (const auto &kind : kinds) {
          const FusedKernel &k = *kind.front();
          os << "<div class=\"kernel\">";
          for (const FusedKernel *named : kind)
            os << "<b>" << escape(named->name) << "</b> ";
          os << "<br><span class=\"what\">gathers:</span> "
             << escape(llvm::join(k.gathers, ", "))
             << "<br><span class=\"what\">per edge:</span> "
             << escape(k.elementwise.empty() ? std::string("(nothing)")
                                             : llvm::join(k.elementwise, ", "))
             << "<br><span class=\"what\">scatters:</span> "
             << escape(llvm::join(k.scatters, ", "))
             << "<br><span class=\"what\">edge tensors not written:</span> "
             << k.bytesPerEdge << " B per edge, " << k.bytesPerEdge * page.edges
             << " B at E = " << page.edges << "</div>";
        }
        os << "</div>\n";
      }
      auto cls = kernelClass.find(key);
      os << "<div class=\"src-line"
         << (cls != kernelClass.end() ? " " + cls->second : std::string())
         << "\" id=\"s" << f << "-" << l << "\" data-file=\"" << f
         << "\" data-line=\"" << l << "\"><span class=\"no\">" << l
         << "</span><span class=\"tx\">"
         << highlight(sourceFiles.line(name, l), Language::Gnn, inComment)
         << "</span>";
      // One badge per decision, its title listing each value.
      for (llvm::StringRef decision : {"store", "recompute"}) {
        std::string title;
        unsigned count = 0;
        for (const RematDecision *d : rematOn[key]) {
          if (d->decision != decision)
            continue;
          ++count;
          title += (title.empty() ? "" : "\n") + d->function + ": " +
                   d->decision + " " + d->detail;
        }
        if (count)
          os << "<span class=\"remat " << decision << "\" title=\""
             << escape(title) << "\">" << decision
             << (count > 1 ? llvm::formatv(" &times;{0}", count).str() : "")
             << "</span>";
      }
      os << "</div>\n";
    }
  }
  os << "</div></div>\n";

  // The generated panes.
  os << "<div class=\"col\" id=\"right\"><div class=\"tabs\">";
  for (auto [i, tab] : llvm::enumerate(page.tabs))
    os << "<button class=\"tab" << (i == 0 ? " active" : "") << "\" data-tab=\""
       << tab.id << "\">" << escape(tab.title) << "</button>";
  os << "</div>\n<div class=\"scroll code\" id=\"right-scroll\">\n";
  llvm::json::Array tabsJson;
  for (auto [i, tab] : llvm::enumerate(page.tabs)) {
    os << "<div class=\"pane" << (i == 0 ? " active" : "") << "\" id=\"pane-"
       << tab.id << "\" data-tab=\"" << tab.id << "\" data-target=\""
       << tab.target << "\" data-file=\"" << escape(tab.file) << "\">\n";
    bool inComment = false;
    Language language = languageOf(tab.language);
    llvm::json::Object toGenerated;
    for (auto [n, text] : llvm::enumerate(splitLines(tab.text))) {
      unsigned line = static_cast<unsigned>(n) + 1;
      std::string key = n < tab.lines.size() ? keyOf(tab.lines[n]) : "";
      os << "<div class=\"gen-line\" id=\"" << tab.id << "-" << line
         << "\" data-tab=\"" << tab.id << "\" data-line=\"" << line << "\"";
      if (!key.empty()) {
        os << " data-src=\"" << key << "\"";
        llvm::json::Value &lines = toGenerated[key];
        if (lines.kind() != llvm::json::Value::Array)
          lines = llvm::json::Array();
        lines.getAsArray()->push_back(line);
      }
      os << "><span class=\"no\">" << line << "</span><span class=\"tx\">"
         << highlight(text, language, inComment) << "</span></div>\n";
    }
    os << "</div>\n";
    tabsJson.push_back(
        llvm::json::Object{{"id", tab.id},
                           {"title", tab.title},
                           {"target", tab.target},
                           {"file", tab.file},
                           {"source_to_lines", std::move(toGenerated)}});
  }
  os << "</div></div>\n</main>\n";

  // The same relation as data, for tools that read the page.
  llvm::json::Array kernelsJson;
  for (const FusedKernel &k : page.kernels) {
    llvm::json::Array lines;
    for (const SourceLine &l : k.lines)
      lines.push_back(keyOf(l));
    kernelsJson.push_back(
        llvm::json::Object{{"name", k.name},
                           {"backward", k.backward},
                           {"lines", std::move(lines)},
                           {"gathers", llvm::json::Array(k.gathers)},
                           {"elementwise", llvm::json::Array(k.elementwise)},
                           {"scatters", llvm::json::Array(k.scatters)},
                           {"bytes_per_edge", k.bytesPerEdge}});
  }
  llvm::json::Array rematJson;
  for (const RematDecision &d : page.remat)
    rematJson.push_back(llvm::json::Object{{"line", keyOf(d.line)},
                                           {"function", d.function},
                                           {"decision", d.decision},
                                           {"detail", d.detail}});
  llvm::json::Value data =
      llvm::json::Object{{"version", 1},
                         {"sources", llvm::json::Array(page.sources)},
                         {"training", page.training},
                         {"vertices", page.vertices},
                         {"edges", page.edges},
                         {"tabs", std::move(tabsJson)},
                         {"kernels", std::move(kernelsJson)},
                         {"remat", std::move(rematJson)}};
  std::string json;
  llvm::raw_string_ostream js(json);
  js << data;
  js.flush();
  // "</" cannot end the script element early.
  std::string safe;
  for (size_t i = 0; i < json.size(); ++i) {
    if (json[i] == '<' && i + 1 < json.size() && json[i + 1] == '/')
      safe += "<\\";
    else
      safe += json[i];
  }
  os << "<script type=\"application/json\" id=\"gnnc-data\">" << safe
     << "</script>\n<script>" << kScript << "</script>\n</body>\n</html>\n";
}
