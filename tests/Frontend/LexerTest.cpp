//===- LexerTest.cpp - Unit tests for the .gnn lexer ----------------------===//
//
// Part of gnnc. Token kinds are compared by their enumerator names (what
// --emit=tokens prints), so a failure shows the whole stream.
//
//===----------------------------------------------------------------------===//

#include "FrontendTestUtil.h"

#include "gtest/gtest.h"

#include <string>
#include <vector>

using namespace gnnc;
using gnnc::test::SourceFixture;

namespace {

std::vector<std::string> kinds(const std::vector<Token> &tokens) {
  std::vector<std::string> out;
  for (const Token &t : tokens)
    out.push_back(getTokenName(t.kind).str());
  return out;
}

std::vector<std::string> lexKinds(llvm::StringRef src) {
  SourceFixture f(src);
  std::vector<Token> tokens = f.lex();
  EXPECT_EQ(f.numErrors(), 0u) << f.messages();
  return kinds(tokens);
}

using Kinds = std::vector<std::string>;

TEST(LexerTest, EmptyAndBlankInput) {
  EXPECT_EQ(lexKinds(""), Kinds({"eof"}));
  EXPECT_EQ(lexKinds("\n\n   \n# only a comment\n"), Kinds({"eof"}));
}

TEST(LexerTest, IndentDedentNested) {
  // Two blocks closed by one dedent each, then two closed at once by the
  // next definition, then the last one closed at the end of the file.
  const char *src = "layer L():\n"
                    "    def forward():\n"
                    "        pass\n"
                    "    pass\n"
                    "model M():\n"
                    "    for x in y:\n"
                    "        pass\n";
  Kinds expected = {
      "kw_layer",   "identifier", "l_paren", "r_paren",    "colon",
      "newline",    "indent",     "kw_def",  "identifier", "l_paren",
      "r_paren",    "colon",      "newline", "indent",     "kw_pass",
      "newline",    "dedent",     "kw_pass", "newline",    "dedent",
      "kw_model",   "identifier", "l_paren", "r_paren",    "colon",
      "newline",    "indent",     "kw_for",  "identifier", "kw_in",
      "identifier", "colon",      "newline", "indent",     "kw_pass",
      "newline",    "dedent",     "dedent",  "eof"};
  EXPECT_EQ(lexKinds(src), expected);
}

TEST(LexerTest, DedentSeveralLevelsAtOnce) {
  const char *src = "a\n"
                    " b\n"
                    "   c\n"
                    "       d\n"
                    "e\n";
  Kinds expected = {
      "identifier", "newline", "indent",     "identifier", "newline", "indent",
      "identifier", "newline", "indent",     "identifier", "newline", "dedent",
      "dedent",     "dedent",  "identifier", "newline",    "eof"};
  EXPECT_EQ(lexKinds(src), expected);
}

TEST(LexerTest, IndentTokenLocations) {
  SourceFixture f("layer L():\n    pass\n");
  std::vector<Token> t = f.lex();
  ASSERT_EQ(kinds(t), Kinds({"kw_layer", "identifier", "l_paren", "r_paren",
                             "colon", "newline", "indent", "kw_pass", "newline",
                             "dedent", "eof"}));
  EXPECT_EQ(f.pos(t[0].loc), "1:1");
  EXPECT_EQ(t[0].text, "layer");
  EXPECT_EQ(f.pos(t[1].loc), "1:7");
  EXPECT_EQ(t[1].text, "L");
  EXPECT_EQ(f.pos(t[4].loc), "1:10");
  // NEWLINE sits on the line break; INDENT covers the leading spaces.
  EXPECT_EQ(f.pos(t[5].loc), "1:11");
  EXPECT_EQ(f.pos(t[6].loc), "2:1");
  EXPECT_EQ(t[6].text, "    ");
  EXPECT_EQ(f.pos(t[7].loc), "2:5");
  EXPECT_EQ(t[9].text, "");
  EXPECT_EQ(t[10].text, "");
}

TEST(LexerTest, CommentsAndBlankLinesDoNotIndent) {
  // Comment-only and blank lines, whatever their indentation, produce no
  // tokens and do not open or close blocks.
  const char *src = "layer L():  # trailing comment\n"
                    "\n"
                    "      # deeper comment\n"
                    "# comment at column 1\n"
                    "    pass # another\n"
                    "  \n"
                    "    pass\n";
  Kinds expected = {"kw_layer", "identifier", "l_paren", "r_paren", "colon",
                    "newline",  "indent",     "kw_pass", "newline", "kw_pass",
                    "newline",  "dedent",     "eof"};
  EXPECT_EQ(lexKinds(src), expected);
}

TEST(LexerTest, ImplicitJoiningInsideBrackets) {
  // Inside (), [] and {} line breaks and indentation are ignored, comments
  // included; only the closing line ends the logical line.
  const char *src = "x = f(a,   # first\n"
                    "          [b,\n"
                    "   c],\n"
                    "  {\"k\":\n"
                    "d})\n"
                    "y\n";
  Kinds expected = {"identifier", "equal",      "identifier", "l_paren",
                    "identifier", "comma",      "l_square",   "identifier",
                    "comma",      "identifier", "r_square",   "comma",
                    "l_brace",    "string",     "colon",      "identifier",
                    "r_brace",    "r_paren",    "newline",    "identifier",
                    "newline",    "eof"};
  EXPECT_EQ(lexKinds(src), expected);
}

TEST(LexerTest, BackslashJoining) {
  SourceFixture f("x = a + \\\n        b\ny\n");
  std::vector<Token> t = f.lex();
  EXPECT_EQ(f.numErrors(), 0u) << f.messages();
  EXPECT_EQ(kinds(t),
            Kinds({"identifier", "equal", "identifier", "plus", "identifier",
                   "newline", "identifier", "newline", "eof"}));
  // b keeps its real position on line 2.
  EXPECT_EQ(f.pos(t[4].loc), "2:9");
  // Works with CRLF line ends too.
  EXPECT_EQ(lexKinds("x = a + \\\r\n  b\r\n"),
            Kinds({"identifier", "equal", "identifier", "plus", "identifier",
                   "newline", "eof"}));
}

TEST(LexerTest, StrayBackslash) {
  SourceFixture f("x = a \\ b\n");
  f.lex();
  EXPECT_EQ(f.numErrors(), 1u);
  EXPECT_NE(f.messages().find(
                "test.gnn:1:7: error: a backslash must be the last character "
                "of the line"),
            std::string::npos)
      << f.messages();
}

TEST(LexerTest, CRLFLineEnds) {
  EXPECT_EQ(lexKinds("layer L():\r\n    pass\r\n"),
            lexKinds("layer L():\n    pass\n"));
}

TEST(LexerTest, MissingFinalNewline) {
  // The last logical line gets its NEWLINE, and open blocks their DEDENTs.
  EXPECT_EQ(
      lexKinds("layer L():\n    pass"),
      Kinds({"kw_layer", "identifier", "l_paren", "r_paren", "colon", "newline",
             "indent", "kw_pass", "newline", "dedent", "eof"}));
}

TEST(LexerTest, Keywords) {
  EXPECT_EQ(lexKinds("layer model param def return for in pass True False"),
            Kinds({"kw_layer", "kw_model", "kw_param", "kw_def", "kw_return",
                   "kw_for", "kw_in", "kw_pass", "kw_True", "kw_False",
                   "newline", "eof"}));
  // Type names, builtins and words that merely start with a keyword are
  // identifiers.
  EXPECT_EQ(lexKinds("int float f32 Graph range layers passing true _ x_1"),
            Kinds({"identifier", "identifier", "identifier", "identifier",
                   "identifier", "identifier", "identifier", "identifier",
                   "identifier", "identifier", "newline", "eof"}));
}

TEST(LexerTest, Operators) {
  SourceFixture f("+ - * / // @ ** ( ) [ ] { } , : . = ->");
  std::vector<Token> t = f.lex();
  EXPECT_EQ(f.numErrors(), 0u) << f.messages();
  EXPECT_EQ(kinds(t),
            Kinds({"plus",     "minus",    "star",    "slash",   "slashslash",
                   "at",       "starstar", "l_paren", "r_paren", "l_square",
                   "r_square", "l_brace",  "r_brace", "comma",   "colon",
                   "dot",      "equal",    "arrow",   "newline", "eof"}));
  EXPECT_EQ(t[4].text, "//");
  EXPECT_EQ(f.pos(t[4].loc), "1:9");
  EXPECT_EQ(t[17].text, "->");
  EXPECT_EQ(f.pos(t[17].loc), "1:37");
  // Longest match without spaces: a**-b//c->d
  EXPECT_EQ(
      lexKinds("a**-b//c->d"),
      Kinds({"identifier", "starstar", "minus", "identifier", "slashslash",
             "identifier", "arrow", "identifier", "newline", "eof"}));
}

TEST(LexerTest, AttributeAccessIsNotANumber) {
  // `v.h` is identifier dot identifier; `.5` alone is a float.
  EXPECT_EQ(lexKinds("v.h x.y5 .5"),
            Kinds({"identifier", "dot", "identifier", "identifier", "dot",
                   "identifier", "floating", "newline", "eof"}));
}

TEST(LexerTest, Numbers) {
  SourceFixture f("123 0 1.0 .5 1. 1e-3 2.5E+4 1.e5 7e2 9223372036854775807");
  std::vector<Token> t = f.lex();
  EXPECT_EQ(f.numErrors(), 0u) << f.messages();
  ASSERT_EQ(kinds(t), Kinds({"integer", "integer", "floating", "floating",
                             "floating", "floating", "floating", "floating",
                             "floating", "integer", "newline", "eof"}));
  EXPECT_EQ(t[0].intValue, 123);
  EXPECT_EQ(t[1].intValue, 0);
  EXPECT_DOUBLE_EQ(t[2].floatValue, 1.0);
  EXPECT_DOUBLE_EQ(t[3].floatValue, 0.5);
  EXPECT_DOUBLE_EQ(t[4].floatValue, 1.0);
  EXPECT_DOUBLE_EQ(t[5].floatValue, 0.001);
  EXPECT_DOUBLE_EQ(t[6].floatValue, 25000.0);
  EXPECT_DOUBLE_EQ(t[7].floatValue, 100000.0);
  EXPECT_DOUBLE_EQ(t[8].floatValue, 700.0);
  EXPECT_EQ(t[9].intValue, INT64_MAX);
  EXPECT_EQ(t[6].text, "2.5E+4");
  EXPECT_EQ(f.pos(t[6].loc), "1:22");
}

TEST(LexerTest, ExponentNeedsDigits) {
  // `2e` and `1e+` are not floats: the letters run into the number.
  SourceFixture f("2e\n");
  f.lex();
  EXPECT_EQ(f.numErrors(), 1u);
  EXPECT_NE(f.messages().find("1:1: error: invalid number literal '2e'"),
            std::string::npos)
      << f.messages();
}

TEST(LexerTest, NumberErrors) {
  SourceFixture f("x = 12abc + 9223372036854775808 + 1e999\n");
  std::vector<Token> t = f.lex();
  EXPECT_EQ(f.numErrors(), 3u) << f.messages();
  const std::string &m = f.messages();
  EXPECT_NE(m.find("1:5: error: invalid number literal '12abc'"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("1:13: error: integer literal '9223372036854775808' does "
                   "not fit in 64 bits"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("1:35: error: float literal '1e999' is out of range"),
            std::string::npos)
      << m;
  // The stream stays well formed, and the bad tokens are marked so that
  // the parser does not report them again.
  ASSERT_EQ(kinds(t), Kinds({"identifier", "equal", "integer", "plus",
                             "integer", "plus", "floating", "newline", "eof"}));
  EXPECT_TRUE(t[2].reported);
  EXPECT_TRUE(t[4].reported);
  EXPECT_TRUE(t[6].reported);
  EXPECT_FALSE(t[0].reported);
}

TEST(LexerTest, StringsAndEscapes) {
  SourceFixture f(R"('a\'b' "c\"d" "\n\t\\" 'x"y' "h")");
  std::vector<Token> t = f.lex();
  EXPECT_EQ(f.numErrors(), 0u) << f.messages();
  ASSERT_EQ(kinds(t), Kinds({"string", "string", "string", "string", "string",
                             "newline", "eof"}));
  EXPECT_EQ(t[0].stringValue, "a'b");
  EXPECT_EQ(t[1].stringValue, "c\"d");
  EXPECT_EQ(t[2].stringValue, "\n\t\\");
  EXPECT_EQ(t[3].stringValue, "x\"y");
  EXPECT_EQ(t[4].stringValue, "h");
  // The token text keeps the quotes and escapes as written.
  EXPECT_EQ(t[0].text, R"('a\'b')");
  EXPECT_EQ(f.pos(t[1].loc), "1:8");
}

TEST(LexerTest, NonAsciiInStringsAndComments) {
  SourceFixture f("\"h\xC3\xA9\" # \xCF\x80 r\xC3\xA9sum\xC3\xA9\n");
  std::vector<Token> t = f.lex();
  EXPECT_EQ(f.numErrors(), 0u) << f.messages();
  ASSERT_EQ(kinds(t), Kinds({"string", "newline", "eof"}));
  EXPECT_EQ(t[0].stringValue, "h\xC3\xA9");
}

TEST(LexerTest, StringErrors) {
  SourceFixture f("x = \"a\\qb\"\ny = 'open\nz\n");
  std::vector<Token> t = f.lex();
  EXPECT_EQ(f.numErrors(), 2u) << f.messages();
  const std::string &m = f.messages();
  EXPECT_NE(m.find("1:7: error: unknown escape sequence '\\q'"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("2:5: error: string literal is not terminated before the "
                   "end of the line"),
            std::string::npos)
      << m;
  // The unterminated string stops at the end of its line; z is lexed.
  EXPECT_EQ(kinds(t), Kinds({"identifier", "equal", "string", "newline",
                             "identifier", "equal", "string", "newline",
                             "identifier", "newline", "eof"}));
}

TEST(LexerTest, TabIndentation) {
  // Tabs alone are fine; a tab counts to the next multiple of 8.
  EXPECT_EQ(lexKinds("a:\n\tb\n\t\tc\nd\n"),
            Kinds({"identifier", "colon", "newline", "indent", "identifier",
                   "newline", "indent", "identifier", "newline", "dedent",
                   "dedent", "identifier", "newline", "eof"}));
}

TEST(LexerTest, MixedTabsAndSpacesOnOneLine) {
  SourceFixture f("a:\n \tb\n");
  f.lex();
  EXPECT_EQ(f.numErrors(), 1u);
  EXPECT_NE(f.messages().find(
                "test.gnn:2:1: error: indentation mixes tabs and spaces"),
            std::string::npos)
      << f.messages();
}

TEST(LexerTest, MixedTabsAndSpacesInFile) {
  // Spaces first, tabs later: the error names both and a note points at the
  // first indented line.
  SourceFixture f("a:\n    b\nc:\n\td\n");
  f.lex();
  EXPECT_EQ(f.numErrors(), 1u);
  EXPECT_EQ(f.countPrinted("note:"), 1u);
  const std::string &m = f.messages();
  EXPECT_NE(m.find("test.gnn:4:1: error: indentation uses tabs here but "
                   "spaces earlier in the file"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("test.gnn:2:1: note: first indented with spaces here"),
            std::string::npos)
      << m;
  // And the other way round.
  SourceFixture g("a:\n\tb\nc:\n  d\n");
  g.lex();
  EXPECT_NE(g.messages().find("test.gnn:4:1: error: indentation uses spaces "
                              "here but tabs earlier in the file"),
            std::string::npos)
      << g.messages();
}

TEST(LexerTest, DedentMismatch) {
  SourceFixture f("a:\n    b\n  c\n");
  std::vector<Token> t = f.lex();
  EXPECT_EQ(f.numErrors(), 1u);
  EXPECT_NE(f.messages().find("test.gnn:3:3: error: unindent does not match "
                              "any outer indentation level"),
            std::string::npos)
      << f.messages();
  // The stream is still balanced: one INDENT, one DEDENT.
  unsigned indents = 0, dedents = 0;
  for (const Token &tok : t) {
    indents += tok.is(TokenKind::indent);
    dedents += tok.is(TokenKind::dedent);
  }
  EXPECT_EQ(indents, dedents);
}

TEST(LexerTest, UnsupportedPythonWords) {
  const char *words[] = {
      "if",     "elif",     "else",   "while",   "import", "from",     "class",
      "lambda", "try",      "except", "finally", "with",   "yield",    "del",
      "global", "nonlocal", "assert", "raise",   "break",  "continue", "async",
      "await",  "is",       "not",    "and",     "or",     "None"};
  for (const char *word : words) {
    SourceFixture f(std::string("x = ") + word + "\n");
    std::vector<Token> t = f.lex();
    EXPECT_EQ(f.numErrors(), 1u) << word;
    EXPECT_NE(f.messages().find(std::string("test.gnn:1:5: error: unsupported "
                                            "Python construct '") +
                                word + "'"),
              std::string::npos)
        << f.messages();
    // The word stays an identifier token, marked as reported.
    ASSERT_GE(t.size(), 3u);
    EXPECT_TRUE(t[2].is(TokenKind::identifier)) << word;
    EXPECT_TRUE(t[2].reported) << word;
  }
  // Longer identifiers that contain such a word are ordinary names.
  EXPECT_EQ(lexKinds("iffy note android None_ is_ org"),
            Kinds({"identifier", "identifier", "identifier", "identifier",
                   "identifier", "identifier", "newline", "eof"}));
}

TEST(LexerTest, Comparisons) {
  EXPECT_EQ(lexKinds("a < b <= c > d >= e == f != g = h\n"),
            Kinds({"identifier", "less", "identifier", "lessequal",
                   "identifier", "greater", "identifier", "greaterequal",
                   "identifier", "equalequal", "identifier", "exclaimequal",
                   "identifier", "equal", "identifier", "newline", "eof"}));
}

TEST(LexerTest, UnsupportedOperatorsAndCharacters) {
  SourceFixture f("a << b ! c % d ; e $ f ? g\n");
  std::vector<Token> t = f.lex();
  const std::string &m = f.messages();
  EXPECT_EQ(f.numErrors(), 6u) << m;
  EXPECT_NE(m.find("1:3: error: operator '<<' is not part of the language"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("1:8: error: operator '!' is not part of the language"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("1:12: error: operator '%' is not part of the language"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("1:16: error: ';' is not supported; write one statement "
                   "per line"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("1:20: error: unexpected character '$'"), std::string::npos)
      << m;
  EXPECT_NE(m.find("1:24: error: unexpected character '?'"), std::string::npos)
      << m;
  // The offending characters produce no tokens.
  EXPECT_EQ(kinds(t), Kinds({"identifier", "identifier", "identifier",
                             "identifier", "identifier", "identifier",
                             "identifier", "newline", "eof"}));
}

TEST(LexerTest, AugmentedAssignmentBecomesEqual) {
  SourceFixture f("x //= 2\n");
  std::vector<Token> t = f.lex();
  EXPECT_EQ(f.numErrors(), 1u);
  EXPECT_NE(f.messages().find("1:3: error: augmented assignment '//=' is not "
                              "supported; write 'x = x // y'"),
            std::string::npos)
      << f.messages();
  ASSERT_EQ(kinds(t),
            Kinds({"identifier", "equal", "integer", "newline", "eof"}));
  EXPECT_TRUE(t[1].reported);
}

TEST(LexerTest, BracketErrors) {
  SourceFixture f("a = (b]\nc = d)\ne = [f\n");
  f.lex();
  const std::string &m = f.messages();
  EXPECT_NE(m.find("1:7: error: ']' does not match the open '('"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("1:5: note: bracket opened here"), std::string::npos) << m;
  EXPECT_NE(m.find("2:6: error: ')' does not close any bracket"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("3:5: error: '[' is never closed"), std::string::npos) << m;
  EXPECT_EQ(f.numErrors(), 3u) << m;
}

TEST(LexerTest, ControlAndNonAsciiCharacters) {
  SourceFixture f("a \x01 b\nc \xC3\xA9 d\n");
  f.lex();
  const std::string &m = f.messages();
  EXPECT_EQ(f.numErrors(), 2u) << m;
  EXPECT_NE(m.find("1:3: error: unexpected control character (code 1)"),
            std::string::npos)
      << m;
  EXPECT_NE(m.find("2:3: error: non-ASCII characters are allowed only in "
                   "comments and strings"),
            std::string::npos)
      << m;
}

TEST(LexerTest, BinaryInputYieldsOnlyEof) {
  SourceFixture f(llvm::StringRef("layer\0x", 7));
  Lexer lexer(f.bufferID, *f.diags);
  std::vector<Token> t = lexer.lex();
  EXPECT_TRUE(lexer.isUnreadable());
  EXPECT_EQ(kinds(t), Kinds({"eof"}));
  EXPECT_EQ(f.numErrors(), 1u);
  EXPECT_NE(f.messages().find("test.gnn: error: file is not UTF-8 text (bad "
                              "byte at offset 5); is it a binary file?"),
            std::string::npos)
      << f.messages();
  // Invalid UTF-8: a lone continuation byte at offset 2.
  SourceFixture g("# \x80\n");
  Lexer lexer2(g.bufferID, *g.diags);
  lexer2.lex();
  EXPECT_TRUE(lexer2.isUnreadable());
  EXPECT_NE(g.messages().find("bad byte at offset 2"), std::string::npos)
      << g.messages();
}

TEST(LexerTest, LimitsReportOnce) {
  // 70 open brackets: one error, at the 65th.
  SourceFixture f("x = " + std::string(70, '(') + std::string(70, ')') + "\n");
  f.lex();
  EXPECT_EQ(f.numErrors(), 1u) << f.messages();
  EXPECT_NE(f.messages().find("1:69: error: brackets are nested more than 64 "
                              "levels deep"),
            std::string::npos)
      << f.messages();
  // A line of 4097 characters.
  SourceFixture g("a\n" + std::string(4097, 'x') + "\n");
  g.lex();
  EXPECT_EQ(g.numErrors(), 1u);
  EXPECT_NE(g.messages().find("2:4097: error: line is longer than 4096 "
                              "columns"),
            std::string::npos);
  SourceFixture h(std::string(4096, 'x') + "\n");
  h.lex();
  EXPECT_EQ(h.numErrors(), 0u);
}

} // namespace
