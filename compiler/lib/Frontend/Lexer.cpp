//===- Lexer.cpp - Tokenizer for .gnn source ------------------------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnnc/Frontend/Lexer.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/ConvertUTF.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

using namespace gnnc;

static const char *const tokenSpellings[] = {
#define TOKEN(NAME, SPELLING) SPELLING,
#include "gnnc/Frontend/TokenKinds.def"
};
static const char *const tokenNames[] = {
#define TOKEN(NAME, SPELLING) #NAME,
#include "gnnc/Frontend/TokenKinds.def"
};

llvm::StringRef gnnc::getTokenSpelling(TokenKind kind) {
  return tokenSpellings[static_cast<unsigned>(kind)];
}
llvm::StringRef gnnc::getTokenName(TokenKind kind) {
  return tokenNames[static_cast<unsigned>(kind)];
}

/// Python words that have no meaning in .gnn. Using one is reported as an
/// unsupported construct rather than as a puzzling syntax error.
static bool isUnsupportedPythonWord(llvm::StringRef word) {
  return llvm::StringSwitch<bool>(word)
      .Cases("if", "elif", "else", "while", "import", "from", "class", true)
      .Cases("lambda", "try", "except", "finally", "with", "yield", "del", true)
      .Cases("global", "nonlocal", "assert", "raise", "break", "continue", true)
      .Cases("async", "await", "is", "not", "and", "or", "None", true)
      .Default(false);
}

Lexer::Lexer(unsigned bufferID, DiagnosticEngine &diags) : diags(diags) {
  const llvm::MemoryBuffer *mb = diags.getSourceMgr().getMemoryBuffer(bufferID);
  buffer = mb->getBuffer();
  bufferName = mb->getBufferIdentifier();
  cur = buffer.begin();
  end = buffer.end();
}

void Lexer::checkWholeBuffer() {
  if (buffer.size() > FrontendLimits::maxFileBytes) {
    diags.reportFile(bufferName, DiagID::err_file_too_large,
                     std::to_string(FrontendLimits::maxFileBytes));
    unreadable = true;
    return;
  }
  size_t nul = buffer.find('\0');
  if (nul != llvm::StringRef::npos) {
    diags.reportFile(bufferName, DiagID::err_binary_file, std::to_string(nul));
    unreadable = true;
    return;
  }
  const llvm::UTF8 *p = reinterpret_cast<const llvm::UTF8 *>(buffer.begin());
  const llvm::UTF8 *e = reinterpret_cast<const llvm::UTF8 *>(buffer.end());
  if (!llvm::isLegalUTF8String(&p, e)) {
    diags.reportFile(
        bufferName, DiagID::err_binary_file,
        std::to_string(reinterpret_cast<const char *>(p) - buffer.begin()));
    unreadable = true;
  }
}

void Lexer::push(TokenKind kind, const char *start, const char *stop) {
  Token tok;
  tok.kind = kind;
  tok.text = llvm::StringRef(start, stop - start);
  tok.loc = locAt(start);
  tokens.push_back(std::move(tok));
}

void Lexer::checkLineLength(const char *lineStart) {
  const char *p = lineStart;
  while (p != end && *p != '\n')
    ++p;
  if (static_cast<size_t>(p - lineStart) > FrontendLimits::maxLineColumns)
    diags.report(locAt(lineStart + FrontendLimits::maxLineColumns),
                 DiagID::err_line_too_long, FrontendLimits::maxLineColumns);
}

std::vector<Token> Lexer::lex() {
  checkWholeBuffer();
  if (!unreadable) {
    if (cur != end)
      checkLineLength(cur);
    while (cur != end && !diags.shouldStop()) {
      if (atLineStart && brackets.empty()) {
        lexLineStart();
        continue;
      }
      lexToken();
    }
    for (auto &[ch, where] : brackets)
      if (!diags.shouldStop())
        diags.report(locAt(where), DiagID::err_unclosed_bracket,
                     llvm::StringRef(&ch, 1));
    if (!tokens.empty() && !tokens.back().is(TokenKind::newline) &&
        !tokens.back().is(TokenKind::dedent))
      push(TokenKind::newline, end, end);
  }
  while (indentStack.size() > 1) {
    indentStack.pop_back();
    push(TokenKind::dedent, end, end);
  }
  push(TokenKind::eof, end, end);
  return std::move(tokens);
}

/// Measures the indentation of a new logical line and emits INDENT or
/// DEDENT tokens. Blank and comment-only lines are skipped whole.
void Lexer::lexLineStart() {
  const char *lineStart = cur;
  bool sawSpace = false, sawTab = false;
  while (cur != end && (*cur == ' ' || *cur == '\t' || *cur == '\f')) {
    sawSpace |= *cur == ' ';
    sawTab |= *cur == '\t';
    ++cur;
  }
  if (cur == end || *cur == '\n' || *cur == '\r' || *cur == '#') {
    while (cur != end && *cur != '\n')
      ++cur;
    if (cur != end) {
      ++cur;
      checkLineLength(cur);
    }
    return;
  }
  atLineStart = false;
  if (sawSpace && sawTab) {
    diags.report(locAt(lineStart), DiagID::err_mixed_tabs_spaces_line);
  } else if (sawSpace || sawTab) {
    char ch = sawTab ? '\t' : ' ';
    if (!indentChar) {
      indentChar = ch;
      indentCharLoc = lineStart;
    } else if (indentChar != ch) {
      diags.report(locAt(lineStart), DiagID::err_mixed_tabs_spaces_file,
                   sawTab ? "tabs" : "spaces", sawTab ? "spaces" : "tabs");
      diags.report(locAt(indentCharLoc), DiagID::note_first_indent,
                   indentChar == '\t' ? "tabs" : "spaces");
    }
  }
  // Tabs advance to the next multiple of 8 columns, as in Python 2, so a
  // file that mixes the two still gets sensible blocks after the error.
  unsigned width = 0;
  for (const char *p = lineStart; p != cur; ++p)
    width = *p == '\t' ? (width / 8 + 1) * 8 : width + 1;
  if (width > indentStack.back()) {
    if (indentStack.size() > FrontendLimits::maxIndentLevels) {
      diags.report(locAt(cur), DiagID::err_indent_too_deep,
                   FrontendLimits::maxIndentLevels);
      return;
    }
    indentStack.push_back(width);
    push(TokenKind::indent, lineStart, cur);
    return;
  }
  while (width < indentStack.back()) {
    indentStack.pop_back();
    push(TokenKind::dedent, cur, cur);
  }
  if (width != indentStack.back()) {
    diags.report(locAt(cur), DiagID::err_dedent_mismatch);
    tokens.back().reported = true;
  }
}

void Lexer::lexToken() {
  const char *start = cur;
  char c = *cur;
  switch (c) {
  case ' ':
  case '\t':
  case '\f':
  case '\v':
    ++cur;
    return;
  case '#':
    while (cur != end && *cur != '\n')
      ++cur;
    return;
  case '\r':
    ++cur;
    if (cur != end && *cur == '\n')
      return;
    [[fallthrough]];
  case '\n':
    if (c == '\n')
      ++cur;
    if (brackets.empty()) {
      push(TokenKind::newline, start, start);
      atLineStart = true;
    }
    if (cur != end)
      checkLineLength(cur);
    return;
  case '\\': {
    const char *p = cur + 1;
    if (p != end && *p == '\r')
      ++p;
    if (p != end && *p == '\n') {
      cur = p + 1;
      if (cur != end)
        checkLineLength(cur);
      return;
    }
    ++cur;
    diags.report(locAt(start), DiagID::err_stray_backslash);
    return;
  }
  case '"':
  case '\'':
    lexString();
    return;
  case '(':
  case '[':
  case '{': {
    ++cur;
    if (brackets.size() >= FrontendLimits::maxBracketDepth) {
      if (!reportedDeepBrackets)
        diags.report(locAt(start), DiagID::err_brackets_too_deep,
                     FrontendLimits::maxBracketDepth);
      reportedDeepBrackets = true;
    }
    brackets.push_back({c, start});
    push(c == '('   ? TokenKind::l_paren
         : c == '[' ? TokenKind::l_square
                    : TokenKind::l_brace,
         start, cur);
    return;
  }
  case ')':
  case ']':
  case '}': {
    ++cur;
    char open = c == ')' ? '(' : c == ']' ? '[' : '{';
    if (brackets.empty()) {
      diags.report(locAt(start), DiagID::err_unmatched_bracket,
                   llvm::StringRef(start, 1));
      return;
    }
    if (brackets.back().first != open) {
      diags.report(locAt(start), DiagID::err_mismatched_bracket,
                   llvm::StringRef(start, 1),
                   llvm::StringRef(&brackets.back().first, 1));
      diags.report(locAt(brackets.back().second), DiagID::note_opened_here);
    }
    brackets.pop_back();
    push(c == ')'   ? TokenKind::r_paren
         : c == ']' ? TokenKind::r_square
                    : TokenKind::r_brace,
         start, cur);
    return;
  }
  default:
    break;
  }

  if (llvm::isAlpha(c) || c == '_') {
    lexIdentifier();
    return;
  }
  if (llvm::isDigit(c) ||
      (c == '.' && cur + 1 != end && llvm::isDigit(cur[1]))) {
    lexNumber();
    return;
  }

  auto next = [&](char n) { return cur + 1 != end && cur[1] == n; };
  // Augmented assignments are a common Python habit; say so plainly and
  // continue as if `=` had been written.
  static const char *const augmented[] = {
      "//=", "**=", "+=", "-=", "*=", "/=", "@="};
  for (const char *aug : augmented) {
    llvm::StringRef spelling(aug);
    if (llvm::StringRef(cur, end - cur).starts_with(spelling)) {
      cur += spelling.size();
      diags.report(locAt(start), DiagID::err_augmented_assignment, spelling,
                   spelling.drop_back());
      push(TokenKind::equal, start, cur);
      tokens.back().reported = true;
      return;
    }
  }

  TokenKind kind;
  unsigned len = 1;
  switch (c) {
  case '+':
    kind = TokenKind::plus;
    break;
  case '-':
    if (next('>')) {
      kind = TokenKind::arrow;
      len = 2;
    } else {
      kind = TokenKind::minus;
    }
    break;
  case '*':
    if (next('*')) {
      kind = TokenKind::starstar;
      len = 2;
    } else {
      kind = TokenKind::star;
    }
    break;
  case '/':
    if (next('/')) {
      kind = TokenKind::slashslash;
      len = 2;
    } else {
      kind = TokenKind::slash;
    }
    break;
  case '@':
    kind = TokenKind::at;
    break;
  case ',':
    kind = TokenKind::comma;
    break;
  case ':':
    kind = TokenKind::colon;
    break;
  case '.':
    kind = TokenKind::dot;
    break;
  case '=':
    if (next('=')) {
      kind = TokenKind::equalequal;
      len = 2;
    } else {
      kind = TokenKind::equal;
    }
    break;
  case '<':
  case '>':
    // `<<` and `>>` are shifts, not part of the language (below).
    if (next(c))
      goto unsupported;
    if (next('=')) {
      kind = c == '<' ? TokenKind::lessequal : TokenKind::greaterequal;
      len = 2;
    } else {
      kind = c == '<' ? TokenKind::less : TokenKind::greater;
    }
    break;
  case '!':
    if (!next('='))
      goto unsupported;
    kind = TokenKind::exclaimequal;
    len = 2;
    break;
  case ';':
    ++cur;
    diags.report(locAt(start), DiagID::err_semicolon);
    return;
  case '%':
  case '&':
  case '|':
  case '^':
  case '~':
  unsupported : {
    cur += next('=') || next(c) ? 2 : 1;
    diags.report(locAt(start), DiagID::err_unsupported_operator,
                 llvm::StringRef(start, cur - start));
    return;
  }
  default: {
    // Skip one whole UTF-8 sequence so the caret lands on the character.
    unsigned seqLen = llvm::getNumBytesForUTF8(static_cast<unsigned char>(c));
    if (seqLen == 0 || cur + seqLen > end)
      seqLen = 1;
    cur += seqLen;
    if (static_cast<unsigned char>(c) >= 0x80)
      diags.report(locAt(start), DiagID::err_non_ascii);
    else if (llvm::isPrint(c))
      diags.report(locAt(start), DiagID::err_unexpected_character,
                   llvm::StringRef(start, 1));
    else
      diags.report(locAt(start), DiagID::err_control_character,
                   static_cast<unsigned>(static_cast<unsigned char>(c)));
    return;
  }
  }
  cur += len;
  push(kind, start, cur);
}

void Lexer::lexIdentifier() {
  const char *start = cur;
  while (cur != end && (llvm::isAlnum(*cur) || *cur == '_'))
    ++cur;
  llvm::StringRef word(start, cur - start);
  TokenKind kind = llvm::StringSwitch<TokenKind>(word)
                       .Case("layer", TokenKind::kw_layer)
                       .Case("model", TokenKind::kw_model)
                       .Case("param", TokenKind::kw_param)
                       .Case("def", TokenKind::kw_def)
                       .Case("return", TokenKind::kw_return)
                       .Case("for", TokenKind::kw_for)
                       .Case("in", TokenKind::kw_in)
                       .Case("pass", TokenKind::kw_pass)
                       .Case("True", TokenKind::kw_True)
                       .Case("False", TokenKind::kw_False)
                       .Default(TokenKind::identifier);
  push(kind, start, cur);
  if (kind == TokenKind::identifier && isUnsupportedPythonWord(word)) {
    diags.report(locAt(start), DiagID::err_unsupported_python, word);
    tokens.back().reported = true;
  }
}

void Lexer::lexNumber() {
  const char *start = cur;
  bool isFloat = false;
  while (cur != end && llvm::isDigit(*cur))
    ++cur;
  if (cur != end && *cur == '.') {
    isFloat = true;
    ++cur;
    while (cur != end && llvm::isDigit(*cur))
      ++cur;
  }
  if (cur != end && (*cur == 'e' || *cur == 'E')) {
    const char *p = cur + 1;
    if (p != end && (*p == '+' || *p == '-'))
      ++p;
    if (p != end && llvm::isDigit(*p)) {
      isFloat = true;
      cur = p;
      while (cur != end && llvm::isDigit(*cur))
        ++cur;
    }
  }
  if (cur != end && (llvm::isAlpha(*cur) || *cur == '_')) {
    while (cur != end && (llvm::isAlnum(*cur) || *cur == '_'))
      ++cur;
    diags.report(locAt(start), DiagID::err_bad_number,
                 llvm::StringRef(start, cur - start));
    push(TokenKind::integer, start, cur);
    tokens.back().reported = true;
    return;
  }
  llvm::StringRef text(start, cur - start);
  push(isFloat ? TokenKind::floating : TokenKind::integer, start, cur);
  Token &tok = tokens.back();
  if (isFloat) {
    std::string copy = text.str();
    errno = 0;
    tok.floatValue = std::strtod(copy.c_str(), nullptr);
    if (errno == ERANGE && std::isinf(tok.floatValue)) {
      diags.report(tok.loc, DiagID::err_float_out_of_range, text);
      tok.reported = true;
    }
    return;
  }
  unsigned long long value;
  if (text.getAsInteger(10, value) ||
      value > static_cast<unsigned long long>(INT64_MAX)) {
    diags.report(tok.loc, DiagID::err_integer_too_large, text);
    tok.reported = true;
    return;
  }
  tok.intValue = static_cast<int64_t>(value);
}

void Lexer::lexString() {
  const char *start = cur;
  char quote = *cur++;
  std::string value;
  while (true) {
    if (cur == end || *cur == '\n' || *cur == '\r') {
      diags.report(locAt(start), DiagID::err_unterminated_string);
      push(TokenKind::string, start, cur);
      tokens.back().reported = true;
      return;
    }
    char c = *cur;
    if (c == quote) {
      ++cur;
      break;
    }
    if (c == '\\') {
      const char *escLoc = cur;
      ++cur;
      if (cur == end || *cur == '\n' || *cur == '\r')
        continue;
      char e = *cur++;
      switch (e) {
      case '\\':
      case '"':
      case '\'':
        value.push_back(e);
        break;
      case 'n':
        value.push_back('\n');
        break;
      case 't':
        value.push_back('\t');
        break;
      default:
        diags.report(locAt(escLoc), DiagID::err_bad_escape,
                     llvm::StringRef(escLoc, 2));
        break;
      }
      continue;
    }
    value.push_back(c);
    ++cur;
  }
  push(TokenKind::string, start, cur);
  tokens.back().stringValue = std::move(value);
}
