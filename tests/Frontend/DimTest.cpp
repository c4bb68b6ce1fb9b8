//===- DimTest.cpp - Unit tests for gnnc::Dim -----------------------------===//
//
// Part of gnnc. Dimensions are integer polynomials; every expected value
// below is worked out by hand (or built from constants and symbols along a
// different path than the one under test), not copied from the output.
//
//===----------------------------------------------------------------------===//

#include "FrontendTestUtil.h"
#include "gnnc/Frontend/Types.h"

#include "gtest/gtest.h"

#include <cstdint>
#include <limits>
#include <map>
#include <string>

using gnnc::Dim;

namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

Dim c(int64_t v) { return Dim::constant(v); }
Dim s(const char *name) { return Dim::symbol(name); }

/// Unwraps a result that must exist.
Dim ok(std::optional<Dim> d) {
  EXPECT_TRUE(d.has_value());
  return d ? *d : Dim();
}

/// a*b, built by repeated addition where a is a small constant, so the
/// expected values do not go through Dim::mul.
Dim times(int64_t k, const Dim &d) {
  Dim sum;
  bool negative = k < 0;
  for (int64_t i = 0; i < (negative ? -k : k); ++i)
    sum = ok(sum.add(d));
  return negative ? ok(Dim().sub(sum)) : sum;
}

TEST(DimTest, ConstantsAndZero) {
  EXPECT_EQ(Dim(), c(0));
  EXPECT_EQ(Dim().str(), "0");
  EXPECT_EQ(c(0).getConstant(), 0);
  EXPECT_TRUE(Dim().isConstant());
  EXPECT_EQ(c(42).getConstant(), 42);
  EXPECT_EQ(c(-7).getConstant(), -7);
  EXPECT_EQ(c(42).str(), "42");
  EXPECT_EQ(c(-7).str(), "-7");
  EXPECT_NE(c(1), c(2));
  EXPECT_EQ(c(kMax).str(), "9223372036854775807");
  EXPECT_EQ(c(kMin).str(), "-9223372036854775808");
}

TEST(DimTest, Symbols) {
  Dim n = s("N");
  EXPECT_FALSE(n.isConstant());
  EXPECT_EQ(n.getConstant(), std::nullopt);
  EXPECT_TRUE(n.mentions("N"));
  EXPECT_FALSE(n.mentions("E"));
  EXPECT_EQ(n.str(), "N");
  EXPECT_NE(s("a"), s("b"));
  EXPECT_EQ(s("a"), s("a"));
  EXPECT_TRUE(gnnc::mentionsGraphSize(ok(s("N_src").mul(s("heads")))));
  EXPECT_FALSE(gnnc::mentionsGraphSize(ok(s("heads").add(c(1)))));
  EXPECT_FALSE(gnnc::mentionsGraphSize(s("Nodes")));
}

TEST(DimTest, AddAndSubtract) {
  EXPECT_EQ(ok(c(2).add(c(3))), c(5));
  EXPECT_EQ(ok(c(2).sub(c(3))), c(-1));
  // Addition is commutative and associative.
  Dim ab = ok(s("a").add(s("b")));
  EXPECT_EQ(ab, ok(s("b").add(s("a"))));
  EXPECT_EQ(ok(ab.add(c(1))), ok(s("a").add(ok(s("b").add(c(1))))));
  // Terms that cancel disappear: (a + b) - b == a, a - a == 0.
  EXPECT_EQ(ok(ab.sub(s("b"))), s("a"));
  EXPECT_EQ(ok(s("a").sub(s("a"))), Dim());
  EXPECT_EQ(ok(s("a").sub(s("a"))).getConstant(), 0);
  EXPECT_TRUE(ok(s("a").sub(s("a"))).isConstant());
  // N + N == 2*N, and it is no longer equal to N.
  Dim twoN = ok(s("N").add(s("N")));
  EXPECT_EQ(twoN.str(), "2*N");
  EXPECT_NE(twoN, s("N"));
}

TEST(DimTest, MultiplyIsPolynomial) {
  Dim heads = s("heads"), out = s("out_dim");
  // heads * out_dim == out_dim * heads.
  EXPECT_EQ(ok(heads.mul(out)), ok(out.mul(heads)));
  EXPECT_EQ(ok(heads.mul(out)).str(), "heads*out_dim");
  // 2 * (a + 3) == 2*a + 6, built by addition.
  Dim a = s("a");
  EXPECT_EQ(ok(c(2).mul(ok(a.add(c(3))))), ok(ok(a.add(a)).add(c(6))));
  // (a + 1) * (a - 1) == a*a - 1.
  Dim lhs = ok(ok(a.add(c(1))).mul(ok(a.sub(c(1)))));
  Dim aa = ok(a.mul(a));
  EXPECT_EQ(lhs, ok(aa.sub(c(1))));
  EXPECT_EQ(lhs.str(), "a*a - 1");
  // (a + b)^2 == a*a + 2*a*b + b*b.
  Dim b = s("b");
  Dim sq = ok(ok(a.add(b)).mul(ok(a.add(b))));
  Dim expected = ok(ok(aa.add(times(2, ok(a.mul(b))))).add(ok(b.mul(b))));
  EXPECT_EQ(sq, expected);
  // Multiplying by zero gives zero; by one gives the same polynomial.
  EXPECT_EQ(ok(sq.mul(Dim())), Dim());
  EXPECT_EQ(ok(sq.mul(c(1))), sq);
  // (a + 1) * (a - 1) - a*a == -1: the a*a terms cancel exactly.
  EXPECT_EQ(ok(lhs.sub(aa)).getConstant(), -1);
}

TEST(DimTest, Str) {
  Dim n = s("N");
  EXPECT_EQ(ok(times(2, n).add(c(1))).str(), "2*N + 1");
  EXPECT_EQ(ok(times(2, n).sub(c(1))).str(), "2*N - 1");
  EXPECT_EQ(ok(Dim().sub(n)).str(), "-N");
  EXPECT_EQ(times(-3, n).str(), "-3*N");
  // Highest degree first: N*N + N + 1 (a constant comes last).
  Dim poly = ok(ok(ok(n.mul(n)).add(n)).add(c(1)));
  EXPECT_EQ(poly.str(), "N*N + N + 1");
  EXPECT_EQ(ok(c(1).sub(n)).str(), "-N + 1");
}

TEST(DimTest, OverflowGivesNullopt) {
  EXPECT_EQ(c(kMax).add(c(1)), std::nullopt);
  EXPECT_EQ(c(kMin).sub(c(1)), std::nullopt);
  EXPECT_EQ(c(kMax).mul(c(2)), std::nullopt);
  EXPECT_EQ(c(kMin).mul(c(-1)), std::nullopt);
  // Negating INT64_MIN overflows.
  EXPECT_EQ(Dim().sub(c(kMin)), std::nullopt);
  // Symbolic coefficients overflow the same way: kMax*N + N.
  Dim bigN = ok(c(kMax).mul(s("N")));
  EXPECT_EQ(bigN.add(s("N")), std::nullopt);
  EXPECT_EQ(bigN.mul(c(2)), std::nullopt);
  // The largest values that do fit are fine.
  EXPECT_EQ(ok(c(kMax - 1).add(c(1))), c(kMax));
  EXPECT_EQ(ok(c(kMin + 1).sub(c(1))), c(kMin));
  EXPECT_EQ(ok(c(int64_t(1) << 31).mul(c(int64_t(1) << 31))),
            c(int64_t(1) << 62));
  EXPECT_EQ(c(int64_t(1) << 32).mul(c(int64_t(1) << 31)), std::nullopt);
}

TEST(DimTest, DegreeAndTermLimits) {
  // Eight symbols multiply (maxDegree == 8); a ninth is too many.
  Dim product = c(1);
  for (int i = 0; i < 8; ++i)
    product = ok(product.mul(s("a")));
  EXPECT_EQ(product.str(), "a*a*a*a*a*a*a*a");
  EXPECT_EQ(product.mul(s("b")), std::nullopt);
  // 64 distinct terms are allowed (maxTerms == 64); a 65th is too many.
  Dim sum;
  for (int i = 0; i < 64; ++i)
    sum = ok(sum.add(s(("s" + std::to_string(i)).c_str())));
  EXPECT_EQ(sum.add(s("t")), std::nullopt);
  // Adding an existing term does not grow the polynomial.
  EXPECT_TRUE(sum.add(s("s0")).has_value());
  // A product whose expansion has more than 64 terms fails:
  // (x0 + ... + x8)^2 has 9*10/2 = 45 terms, (x0 + ... + x11)^2 has 78.
  Dim small, large;
  for (int i = 0; i < 9; ++i)
    small = ok(small.add(s(("x" + std::to_string(i)).c_str())));
  for (int i = 0; i < 12; ++i)
    large = ok(large.add(s(("x" + std::to_string(i)).c_str())));
  EXPECT_TRUE(small.mul(small).has_value());
  EXPECT_EQ(large.mul(large), std::nullopt);
}

TEST(DimTest, DivExact) {
  Dim a = s("a"), b = s("b");
  Dim ab = ok(a.mul(b));
  // 6*a*b / (2*a) == 3*b.
  EXPECT_EQ(ok(times(6, ab).divExact(times(2, a))), times(3, b));
  // (6*a*b + 4*a) / (2*a) == 3*b + 2.
  Dim num = ok(times(6, ab).add(times(4, a)));
  EXPECT_EQ(ok(num.divExact(times(2, a))), ok(times(3, b).add(c(2))));
  // N*heads*d / heads == N*d (the shape arithmetic of reshape with -1).
  Dim nhd = ok(ok(s("N").mul(s("heads"))).mul(s("d")));
  EXPECT_EQ(ok(nhd.divExact(s("heads"))), ok(s("d").mul(s("N"))));
  // Constants: 12 / -4 == -3; 12 / 12 == 1; 0 / a == 0.
  EXPECT_EQ(ok(c(12).divExact(c(-4))), c(-3));
  EXPECT_EQ(ok(c(12).divExact(c(12))), c(1));
  EXPECT_EQ(ok(Dim().divExact(a)), Dim());
  // a*a / a == a (one factor removed, not both).
  EXPECT_EQ(ok(ok(a.mul(a)).divExact(a)), a);
  // Not exact: (a + 1) / a, 6*a / 4, a / b, 7 / 2.
  EXPECT_EQ(ok(a.add(c(1))).divExact(a), std::nullopt);
  EXPECT_EQ(times(6, a).divExact(c(4)), std::nullopt);
  EXPECT_EQ(a.divExact(b), std::nullopt);
  EXPECT_EQ(c(7).divExact(c(2)), std::nullopt);
  // Only a single monomial divides; zero does not.
  EXPECT_EQ(ab.divExact(ok(a.add(b))), std::nullopt);
  EXPECT_EQ(a.divExact(Dim()), std::nullopt);
}

// INT64_MIN / -1 does not fit in int64: the quotient must be nullopt like
// every other overflow. (This currently raises SIGFPE in Dim::divExact; it
// is kept in a test of its own so that it does not hide the others.)
TEST(DimTest, DivExactOverflowGivesNullopt) {
  EXPECT_EQ(c(kMin).divExact(c(-1)), std::nullopt);
  Dim minA = ok(c(kMin).mul(s("a")));
  EXPECT_EQ(minA.divExact(ok(c(-1).mul(s("a")))), std::nullopt);
}

TEST(DimTest, Substitute) {
  Dim a = s("a"), b = s("b"), x = s("x");
  // (a*b + 2)[a := 3, b := x + 1] == 3*x + 5.
  Dim poly = ok(ok(a.mul(b)).add(c(2)));
  std::map<std::string, Dim> map{{"a", c(3)}, {"b", ok(x.add(c(1)))}};
  EXPECT_EQ(ok(poly.substitute(map)), ok(times(3, x).add(c(5))));
  // Symbols without a binding stay: (a + b)[a := 2] == b + 2.
  EXPECT_EQ(ok(ok(a.add(b)).substitute({{"a", c(2)}})), ok(b.add(c(2))));
  // Substituting can cancel terms: (a - b)[a := b] == 0.
  EXPECT_EQ(ok(ok(a.sub(b)).substitute({{"a", b}})), Dim());
  // A symbol that appears twice is replaced twice: (a*a)[a := x + 1] ==
  // x*x + 2*x + 1.
  Dim expected = ok(ok(ok(x.mul(x)).add(times(2, x))).add(c(1)));
  EXPECT_EQ(ok(ok(a.mul(a)).substitute({{"a", ok(x.add(c(1)))}})), expected);
  // Substitution is simultaneous, not repeated: a[a := a + 1] == a + 1.
  EXPECT_EQ(ok(a.substitute({{"a", ok(a.add(c(1)))}})), ok(a.add(c(1))));
  // The empty map is the identity.
  EXPECT_EQ(ok(poly.substitute({})), poly);
  // Overflow: (a*a)[a := 2^32] == 2^64 does not fit.
  EXPECT_EQ(ok(a.mul(a)).substitute({{"a", c(int64_t(1) << 32)}}),
            std::nullopt);
  // Degree limit: a^8 [a := x*y] has degree 16.
  Dim a8 = c(1);
  for (int i = 0; i < 8; ++i)
    a8 = ok(a8.mul(a));
  EXPECT_EQ(a8.substitute({{"a", ok(x.mul(s("y")))}}), std::nullopt);
}

} // namespace
