//===- CodeWriter.cpp - Indented source text with line tracking -----------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnnc/Target/CodeWriter.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cctype>

using namespace gnnc::target;

void CodeWriter::line(const llvm::Twine &text) {
  Line l;
  l.indent = depth;
  l.text = text.str();
  l.source = current;
  l.kernelMark = pendingMark;
  pendingMark = 0;
  lines.push_back(std::move(l));
}

void CodeWriter::directive(const llvm::Twine &text) {
  line(text);
  lines.back().column0 = true;
}

void CodeWriter::blank() {
  Line l;
  l.kernelMark = pendingMark;
  pendingMark = 0;
  lines.push_back(std::move(l));
}

void CodeWriter::append(const CodeWriter &other) {
  for (const Line &l : other.lines) {
    Line copy = l;
    if (!copy.column0 && !copy.text.empty())
      copy.indent += depth;
    if (pendingMark && !copy.kernelMark) {
      copy.kernelMark = pendingMark;
      pendingMark = 0;
    }
    lines.push_back(std::move(copy));
  }
  if (other.pendingMark)
    pendingMark = other.pendingMark;
}

void CodeWriter::beginKernel() { pendingMark = 1; }
void CodeWriter::endKernel() { pendingMark = -1; }

namespace {

/// The name of a .gnn file in `#line`: absolute, so that debuggers find it
/// from wherever the generated code is compiled.
std::string directiveFile(llvm::StringRef file) {
  llvm::SmallString<256> path(file);
  if (llvm::sys::fs::exists(path))
    llvm::sys::fs::make_absolute(path);
  llvm::sys::path::remove_dots(path, /*remove_dot_dot=*/true);
  return std::string(path);
}

std::string quoted(llvm::StringRef s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out + "\"";
}

} // namespace

GeneratedFile CodeWriter::render(llvm::StringRef name,
                                 bool lineDirectives) const {
  GeneratedFile file;
  file.name = name.str();
  llvm::raw_string_ostream os(file.contents);
  unsigned physical = 0; // lines written so far
  // Whether the compiler currently numbers lines after a .gnn file, and the
  // .gnn line it would give the next physical line.
  bool inSource = false;
  SourceLine expected;
  unsigned kernelStart = 0;
  auto emit = [&](llvm::StringRef text, const SourceLine &source) {
    os << text << "\n";
    ++physical;
    file.lineSources.push_back(source);
  };
  for (const Line &l : lines) {
    if (l.kernelMark == 1)
      kernelStart = physical + 1;
    if (l.kernelMark == -1 && kernelStart) {
      file.kernelRanges.push_back({kernelStart, physical});
      kernelStart = 0;
    }
    if (l.text.empty()) {
      emit("", SourceLine());
      if (inSource)
        ++expected.line;
      continue;
    }
    // Comments and preprocessor lines produce no code: they need no
    // directive of their own.
    llvm::StringRef trimmed = llvm::StringRef(l.text).ltrim();
    bool noCode = trimmed.starts_with("//") || trimmed.starts_with("#");
    if (lineDirectives && !(noCode && l.source)) {
      if (l.source && (!inSource || expected != l.source)) {
        emit("#line " + std::to_string(l.source.line) + " " +
                 quoted(directiveFile(l.source.file)),
             SourceLine());
        inSource = true;
        expected = l.source;
      } else if (!l.source && inSource) {
        // The next physical line is physical + 2.
        emit("#line " + std::to_string(physical + 2) + " " + quoted(name),
             SourceLine());
        inSource = false;
      }
    }
    std::string text =
        l.column0 ? l.text : std::string(2 * l.indent, ' ') + l.text;
    emit(text, l.source);
    if (inSource)
      ++expected.line;
  }
  if (pendingMark == -1 && kernelStart)
    file.kernelRanges.push_back({kernelStart, physical});
  os.flush();
  return file;
}

std::string gnnc::target::cIdentifier(llvm::StringRef name) {
  std::string out;
  for (char c : name)
    out += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0])))
    out = "_" + out;
  return out;
}

bool gnnc::target::isCppKeyword(llvm::StringRef name) {
  static const llvm::StringSet<> keywords = {
      "alignas", "alignof", "and", "and_eq", "asm", "auto", "bitand", "bitor",
      "bool", "break", "case", "catch", "char", "char8_t", "char16_t",
      "char32_t", "class", "compl", "concept", "const", "consteval",
      "constexpr", "constinit", "const_cast", "continue", "co_await",
      "co_return", "co_yield", "decltype", "default", "delete", "do", "double",
      "dynamic_cast", "else", "enum", "explicit", "export", "extern", "false",
      "float", "for", "friend", "goto", "if", "inline", "int", "long",
      "mutable", "namespace", "new", "noexcept", "not", "not_eq", "nullptr",
      "operator", "or", "or_eq", "private", "protected", "public", "register",
      "reinterpret_cast", "requires", "return", "short", "signed", "sizeof",
      "static", "static_assert", "static_cast", "struct", "switch", "template",
      "this", "thread_local", "throw", "true", "try", "typedef", "typeid",
      "typename", "union", "unsigned", "using", "virtual", "void", "volatile",
      "wchar_t", "while", "xor", "xor_eq"};
  return keywords.contains(name);
}

static bool isImplementationReserved(llvm::StringRef name) {
  return name.contains("__") ||
         (name.size() > 1 && name[0] == '_' &&
          std::isupper(static_cast<unsigned char>(name[1])));
}

bool gnnc::target::isReservedName(llvm::StringRef name) {
  // Names generated code refers to.
  static const llvm::StringSet<> generated = {
      "std",       "rt",       "gnnc",   "int64_t", "uint64_t", "size_t",
      "memcpy",    "main",     "NULL",   "workspace", "training", "seed",
      "params",    "grads",    "layout", "ws",      "status",   "s",
      "a",         "dims",     "at",     "total"};
  return isCppKeyword(name) || generated.contains(name) ||
         name.starts_with("__") ||
         (name.size() > 1 && name[0] == '_' &&
          std::isupper(static_cast<unsigned char>(name[1])));
}

std::string gnnc::target::checkCppNamespace(llvm::StringRef name) {
  if (name.empty())
    return "it is empty";
  llvm::SmallVector<llvm::StringRef> parts;
  name.split(parts, "::");
  for (llvm::StringRef part : parts) {
    bool identifier =
        !part.empty() &&
        (std::isalpha(static_cast<unsigned char>(part[0])) || part[0] == '_') &&
        llvm::all_of(part, [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
        });
    if (!identifier)
      return "it must be C++ identifiers separated by '::' (letters, digits "
             "and '_', not starting with a digit)";
    if (isCppKeyword(part))
      return "'" + part.str() + "' is a C++ keyword";
    if (isImplementationReserved(part))
      return "'" + part.str() +
             "' is reserved to the C++ implementation (it contains '__' or "
             "starts with '_' and a capital)";
  }
  if (parts.front() == "std")
    return "the namespace 'std' belongs to the C++ standard library";
  return "";
}

std::string Namer::unique(llvm::StringRef base, llvm::StringRef hint) {
  std::string name = cIdentifier(base);
  auto free = [&](const std::string &n) {
    return !isTaken(n) && !isReservedName(n);
  };
  std::string candidate = name;
  if (!hint.empty() && !free(candidate))
    candidate = name + "_" + hint.str();
  for (unsigned k = hint.empty() ? 1 : 2; !free(candidate); ++k)
    candidate = (hint.empty() ? name : name + "_" + hint.str()) + "_" +
                std::to_string(k);
  reserve(candidate);
  return candidate;
}
