//===- SimdMath.h - Vectorisable maths for generated loops ------*- C++ -*-===//
//
// Part of gnnc. Elementary functions written so that a compiler vectorises a
// loop that calls them (`#pragma omp simd`) without -ffast-math: straight-line
// float and integer arithmetic, no branches, no calls, no lookup tables.
// GCC and clang only vectorise std::exp through a vector maths library, which
// they use only under -ffast-math; generated kernels and the runtime's host
// operations call these instead.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_RUNTIME_SIMDMATH_H
#define GNNC_RUNTIME_SIMDMATH_H

#include <cstdint>
#include <cstring>

namespace gnnc::rt {

/// e^x in float, within 1 ulp of the exact value over the whole float range
/// (tests/runtime/SimdMathTest.cpp measures it against std::exp in double):
/// exp(0) = 1, results below the smallest subnormal round to 0 (x < -103.97),
/// results above FLT_MAX are +inf (x > 88.73), exp(-inf) = 0, exp(+inf) = +inf
/// and a NaN stays a NaN.
///
/// x = n ln2 + r with n = round(x / ln2) and |r| <= ln2 / 2 (Cody and Waite's
/// two-part ln2, exact for the n that matter), e^r = 1 + r + r^2 P(r) with
/// Cephes' degree-5 minimax P, then times 2^n as two powers of two (2^(n/2)
/// and 2^(n - n/2)), so that subnormal results are rounded once and large
/// ones overflow to infinity. The out-of-range results are selected with
/// integer masks rather than branches, which keeps the function
/// if-convertible.
inline float simdExp(float x) {
  // round(x * log2(e)) by the 1.5 * 2^23 trick (round to nearest even).
  const float kShift = 0x1.8p23f;
  float shifted = x * 0x1.715476p+0f + kShift;
  float n = shifted - kShift;
  uint32_t shiftedBits;
  std::memcpy(&shiftedBits, &shifted, sizeof(float));
  uint32_t exponent = shiftedBits - 0x4B400000u; // n as a two's-complement int
  float r = x - n * 0x1.62e4p-1f;                // ln2, high 15 bits
  r = r - n * 0x1.7f7d1cp-20f;                   // ln2, the rest
  float p = 1.9875691500E-4f;
  p = p * r + 1.3981999507E-3f;
  p = p * r + 8.3334519073E-3f;
  p = p * r + 4.1665795894E-2f;
  p = p * r + 1.6666665459E-1f;
  p = p * r + 5.0000001201E-1f;
  float y = 1.0f + (r + p * (r * r));
  // 2^n = 2^half * 2^(n - half); arithmetic in uint32_t (no signed overflow
  // for the meaningless exponents of out-of-range or NaN arguments).
  uint32_t half = static_cast<uint32_t>(static_cast<int32_t>(exponent) >> 1);
  uint32_t scaleBits1 = (half + 127u) << 23;
  uint32_t scaleBits2 = (exponent - half + 127u) << 23;
  float scale1, scale2;
  std::memcpy(&scale1, &scaleBits1, sizeof(float));
  std::memcpy(&scale2, &scaleBits2, sizeof(float));
  y = y * scale1 * scale2;
  // Beyond the range where the scaling above is exact: +inf and 0.
  uint32_t bits;
  std::memcpy(&bits, &y, sizeof(float));
  uint32_t overflow = 0u - static_cast<uint32_t>(x > 89.0f);
  uint32_t underflow = 0u - static_cast<uint32_t>(x < -104.0f);
  bits = ((bits & ~overflow) | (0x7F800000u & overflow)) & ~underflow;
  std::memcpy(&y, &bits, sizeof(float));
  return y;
}

} // namespace gnnc::rt

#endif // GNNC_RUNTIME_SIMDMATH_H
