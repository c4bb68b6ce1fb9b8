//===- SimdMathTest.cpp - rt::simdExp and the dropout threshold -----------===//
//
// Part of gnnc. The inline functions of gnnc/runtime/SimdMath.h and Ops.h
// that generated loops call element by element: rt::simdExp against
// std::exp in double, and the integer form of the dropout test against the
// double-precision one it replaces.
//
//===----------------------------------------------------------------------===//

#include "gnnc/runtime/SimdMath.h"
#include "gnnc/runtime/Ops.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>

using namespace gnnc::rt;

namespace {

float fromBits(uint32_t bits) {
  float x;
  std::memcpy(&x, &bits, sizeof(float));
  return x;
}

/// The error of `got` in units in the last place of the float nearest to
/// `exact` (subnormal results count in units of the smallest subnormal).
double ulpError(float got, double exact) {
  if (std::isnan(exact))
    return std::isnan(got) ? 0.0 : 1e30;
  if (std::isinf(static_cast<float>(exact)))
    return got == static_cast<float>(exact) ? 0.0 : 1e30;
  int exponent = 0;
  std::frexp(exact, &exponent);
  double ulp = std::ldexp(1.0, std::max(exponent - 24, -149));
  return std::abs(static_cast<double>(got) - exact) / ulp;
}

/// The largest error of simdExp over the floats in [lo, hi] whose bit
/// patterns are `stride` apart.
double maxErrorOver(float lo, float hi, uint32_t stride, float &worstX) {
  double worst = 0;
  for (int sign = 0; sign < 2; ++sign)
    for (uint64_t m = 0; m < 0x7F800000u; m += stride) {
      float x = fromBits(static_cast<uint32_t>(m) | (sign ? 0x80000000u : 0u));
      if (x < lo || x > hi)
        continue;
      double e = ulpError(simdExp(x), std::exp(static_cast<double>(x)));
      if (e > worst) {
        worst = e;
        worstX = x;
      }
    }
  return worst;
}

} // namespace

// Every 97th float of the range where e^x is a finite non-zero float (and a
// little beyond), and a million random ones: within 1 ulp (an exhaustive run
// over all floats in [-104, 89] measured 0.98 ulp at most).
TEST(SimdExp, WithinOneUlpOfTheExactValue) {
  float worstX = 0;
  double worst = maxErrorOver(-104.0f, 89.0f, 97, worstX);
  EXPECT_LE(worst, 1.0) << "at x = " << worstX;

  std::mt19937_64 rng(42);
  std::uniform_real_distribution<float> wide(-110.0f, 95.0f);
  std::uniform_real_distribution<float> narrow(-1.0f, 1.0f);
  for (int i = 0; i < 500000; ++i) {
    float x = wide(rng);
    ASSERT_LE(ulpError(simdExp(x), std::exp(static_cast<double>(x))), 1.0)
        << "x = " << x;
    x = narrow(rng);
    ASSERT_LE(ulpError(simdExp(x), std::exp(static_cast<double>(x))), 1.0)
        << "x = " << x;
  }
}

TEST(SimdExp, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(simdExp(0.0f), 1.0f);
  EXPECT_EQ(simdExp(-0.0f), 1.0f);
  EXPECT_EQ(simdExp(inf), inf);
  EXPECT_EQ(simdExp(-inf), 0.0f);
  EXPECT_TRUE(std::isnan(simdExp(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_TRUE(std::isnan(simdExp(-std::numeric_limits<float>::quiet_NaN())));
  // Overflow: e^88.72284 is above FLT_MAX, e^88.72283 below.
  EXPECT_EQ(simdExp(88.72284f), inf);
  EXPECT_EQ(simdExp(89.0f), inf);
  EXPECT_EQ(simdExp(1000.0f), inf);
  EXPECT_EQ(simdExp(std::numeric_limits<float>::max()), inf);
  EXPECT_LT(simdExp(88.72283f), inf);
  // Underflow through the subnormals to 0.
  EXPECT_EQ(simdExp(-103.0f), std::numeric_limits<float>::denorm_min());
  EXPECT_EQ(simdExp(-104.0f), 0.0f);
  EXPECT_EQ(simdExp(-1000.0f), 0.0f);
  EXPECT_EQ(simdExp(-std::numeric_limits<float>::max()), 0.0f);
  EXPECT_EQ(simdExp(std::numeric_limits<float>::denorm_min()), 1.0f);
  // Exact powers of e are within an ulp; e^1 rounds to float's e.
  EXPECT_EQ(simdExp(1.0f), static_cast<float>(std::exp(1.0)));
}

// The integer test (bits >= ceil(p * 2^53)) keeps exactly what the double
// test (bits * 2^-53 >= p) keeps, for random p and at the p that fall
// exactly on a drawn value and just around it.
TEST(DropoutThreshold, AgreesWithTheDoubleTest) {
  auto doubleKeeps = [](uint64_t bits, double p) {
    return static_cast<double>(bits) * 0x1.0p-53 >= p;
  };
  auto intKeeps = [](uint64_t bits, double p) {
    return bits >= dropoutThreshold(p);
  };
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int i = 0; i < 200000; ++i) {
    uint64_t bits = dropoutBits(rng(), rng());
    double u = static_cast<double>(bits) * 0x1.0p-53;
    for (double p : {unit(rng), u, std::nextafter(u, 0.0),
                     std::nextafter(u, 1.0), 0.5, 0.6, 0.1})
      ASSERT_EQ(intKeeps(bits, p), doubleKeeps(bits, p))
          << "bits " << bits << " p " << p;
  }
  EXPECT_EQ(dropoutThreshold(0.0), 0u);
  EXPECT_EQ(dropoutThreshold(-1.0), 0u);
  EXPECT_EQ(dropoutThreshold(0.5), uint64_t{1} << 52);
  EXPECT_EQ(dropoutThreshold(1.0), uint64_t{1} << 53);
  EXPECT_EQ(dropoutThreshold(std::nan("")), uint64_t{1} << 53);
  // The largest value drawn, 1 - 2^-53, is kept at p = 1 - 2^-53 only.
  uint64_t largest = (uint64_t{1} << 53) - 1;
  EXPECT_TRUE(intKeeps(largest, std::nextafter(1.0, 0.0)));
  EXPECT_FALSE(intKeeps(largest, 1.0));
}

// rt::dropoutKeep, which generated kernels call per element, is the mask of
// the reference interpreter (bits * 2^-53 >= p) and its scale.
TEST(DropoutThreshold, DropoutKeepIsTheInterpretersMask) {
  for (uint64_t seed : {uint64_t{0}, uint64_t{1}, mixSeed(3, 17)})
    for (uint64_t index = 0; index < 5000; ++index)
      for (double p : {0.0, 0.1, 0.5, 0.6, 0.9, 1.0}) {
        double u = static_cast<double>(dropoutBits(seed, index)) * 0x1.0p-53;
        float want = u >= p ? static_cast<float>(1.0 / (1.0 - p)) : 0.0f;
        ASSERT_EQ(dropoutKeep(true, seed, index, p), want)
            << "seed " << seed << " index " << index << " p " << p;
      }
  EXPECT_EQ(dropoutKeep(false, 1, 2, 0.5), 1.0f);
}
