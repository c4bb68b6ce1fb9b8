//===- OpsTest.cpp - NaN, infinities and signed zeros in the host ops -----===//
//
// Part of gnnc. The elementwise operations of gnnc/runtime/Ops.h on the
// values where implementations differ: a NaN must come out of every one of
// them as a NaN (PyTorch's torch.relu, leaky_relu, elu, maximum and minimum
// propagate it), and the ordinary values around it keep their results
// (relu(-0) is +0, max and min return their first operand on a tie).
//
//===----------------------------------------------------------------------===//

#include "gnnc/runtime/Ops.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

using namespace gnnc;

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

/// Bit patterns agree, or both are NaNs (of any payload or sign).
bool sameValue(float got, float want) {
  if (std::isnan(want))
    return std::isnan(got);
  return std::memcmp(&got, &want, sizeof(float)) == 0;
}

void expectValues(const std::vector<float> &got, const std::vector<float> &want,
                  const char *what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_TRUE(sameValue(got[i], want[i]))
        << what << " element " << i << ": got " << got[i] << " (sign "
        << std::signbit(got[i]) << "), want " << want[i] << " (sign "
        << std::signbit(want[i]) << ")";
}

// The inputs of the unary tests, and what each function gives for them.
const std::vector<float> kX = {kNaN, -kNaN, -2.0f, -0.0f,
                               0.0f, 3.0f,  kInf,  -kInf};

using UnaryFn = void (*)(const float *, float *, int64_t);

std::vector<float> apply(UnaryFn fn, const std::vector<float> &x) {
  std::vector<float> y(x.size(), 12345.0f);
  fn(x.data(), y.data(), static_cast<int64_t>(x.size()));
  return y;
}

TEST(OpsNaN, Relu) {
  // x <= 0 gives +0; a NaN is not <= 0.
  expectValues(apply(rt::relu, kX),
               {kNaN, kNaN, 0.0f, 0.0f, 0.0f, 3.0f, kInf, 0.0f}, "relu");
}

TEST(OpsNaN, LeakyReluAndElu) {
  std::vector<float> y(kX.size());
  rt::leakyRelu(kX.data(), y.data(), static_cast<int64_t>(kX.size()), 0.5f);
  // 0.5 * -0 is -0; 0.5 * -inf is -inf.
  expectValues(y, {kNaN, kNaN, -1.0f, -0.0f, 0.0f, 3.0f, kInf, -kInf},
               "leaky_relu");
  rt::elu(kX.data(), y.data(), static_cast<int64_t>(kX.size()), 2.0f);
  // alpha (e^x - 1): e^-2 - 1 = -0.8646647; e^0 - 1 = 0 for both zeros;
  // e^-inf - 1 = -1.
  float em2 = 2.0f * (std::exp(-2.0f) - 1.0f);
  ASSERT_TRUE(std::isnan(y[0]) && std::isnan(y[1])) << y[0] << " " << y[1];
  EXPECT_NEAR(y[2], em2, 1e-6f);
  EXPECT_EQ(y[3], 0.0f);
  EXPECT_EQ(y[4], 0.0f);
  EXPECT_EQ(y[5], 3.0f);
  EXPECT_EQ(y[6], kInf);
  EXPECT_EQ(y[7], -2.0f);
  // The vectorised chunks of elu start every 2^14 elements: a NaN far from
  // the first one is handled alike.
  std::vector<float> big(40000, -1.0f), out(big.size());
  big[16384 + 5] = kNaN;
  rt::elu(big.data(), out.data(), static_cast<int64_t>(big.size()), 1.0f);
  EXPECT_TRUE(std::isnan(out[16384 + 5]));
  EXPECT_NEAR(out[16384 + 6], std::exp(-1.0f) - 1.0f, 1e-6f);
}

TEST(OpsNaN, OtherUnaryFunctionsKeepNaN) {
  for (UnaryFn fn :
       {rt::neg, rt::exp, rt::log, rt::sqrt, rt::rsqrt, rt::abs, rt::sigmoid,
        rt::tanh, rt::gelu, rt::erf, rt::sin, rt::cos}) {
    std::vector<float> y = apply(fn, {kNaN, -kNaN});
    EXPECT_TRUE(std::isnan(y[0]) && std::isnan(y[1]));
  }
}

/// `fn(a, b)` on two vectors of one shape.
std::vector<float> apply2(decltype(&rt::max) fn, const std::vector<float> &a,
                          const std::vector<float> &b) {
  rt::Shape shape;
  shape.rank = 1;
  shape.dims[0] = static_cast<int64_t>(a.size());
  std::vector<float> out(a.size(), 12345.0f);
  fn(a.data(), shape, b.data(), shape, out.data(), shape);
  return out;
}

TEST(OpsNaN, MaxAndMinPropagateNaNFromEitherSide) {
  const std::vector<float> a = {kNaN, 1.0f, kNaN, -0.0f, 0.0f, 2.0f, -kInf};
  const std::vector<float> b = {1.0f, kNaN, kNaN, 0.0f, -0.0f, -3.0f, kNaN};
  // Ties return the first operand: max(-0, +0) is -0, max(+0, -0) is +0.
  expectValues(apply2(rt::max, a, b),
               {kNaN, kNaN, kNaN, -0.0f, 0.0f, 2.0f, kNaN}, "max");
  expectValues(apply2(rt::min, a, b),
               {kNaN, kNaN, kNaN, -0.0f, 0.0f, -3.0f, kNaN}, "min");
  // gt is false against a NaN, as torch.gt.
  expectValues(apply2(rt::gt, a, b), {0, 0, 0, 0, 0, 1, 0}, "gt");
  // ge and eq are false against a NaN too, ne is true; -0 == +0.
  expectValues(apply2(rt::ge, a, b), {0, 0, 0, 1, 1, 1, 0}, "ge");
  expectValues(apply2(rt::eq, a, b), {0, 0, 0, 1, 1, 0, 0}, "eq");
  expectValues(apply2(rt::ne, a, b), {1, 1, 1, 0, 0, 1, 1}, "ne");
}

TEST(OpsNaN, MaskKeepsOnlyWhatItPicks) {
  // mask(a, b) = a != 0 ? b : 0. A NaN condition is not 0, so it picks; an
  // infinite or NaN value that is not picked leaves no trace.
  const std::vector<float> a = {1.0f, 0.0f, -0.0f, kNaN, 2.0f, 0.0f, -1.0f};
  const std::vector<float> b = {5.0f, kInf, kNaN, 3.0f, -kInf, -7.0f, kNaN};
  expectValues(apply2(rt::mask, a, b), {5.0f, 0, 0, 3.0f, -kInf, 0, kNaN},
               "mask");
}

TEST(OpsNaN, MaxWithABroadcastScalar) {
  // The vectorised paths where one operand is a broadcast scalar.
  rt::Shape row, one;
  row.rank = one.rank = 1;
  row.dims[0] = 4;
  one.dims[0] = 1;
  const std::vector<float> x = {kNaN, -1.0f, 0.5f, 2.0f};
  const float half = 0.5f, nan = kNaN;
  std::vector<float> out(4);
  rt::max(x.data(), row, &half, one, out.data(), row);
  expectValues(out, {kNaN, 0.5f, 0.5f, 2.0f}, "max(x, 0.5)");
  rt::max(&half, one, x.data(), row, out.data(), row);
  expectValues(out, {kNaN, 0.5f, 0.5f, 2.0f}, "max(0.5, x)");
  rt::min(x.data(), row, &nan, one, out.data(), row);
  expectValues(out, {kNaN, kNaN, kNaN, kNaN}, "min(x, nan)");
}

/// batch_norm's running statistics, by hand: columns [1, 2, 6] and
/// [0, 4, 2] have means 3 and 2 and unbiased variances 7 and 4.
TEST(OpsBatchStats, BlendsMeanAndUnbiasedVariance) {
  const std::vector<float> x = {1, 0, 2, 4, 6, 2};
  std::vector<float> mean = {1, -1}, var = {2, 0.75f};
  ASSERT_TRUE(rt::updateBatchStats(x.data(), 3, 2, mean.data(), var.data(),
                                   0.25, /*training=*/true)
                  .ok());
  // 0.75 * old + 0.25 * batch.
  EXPECT_FLOAT_EQ(mean[0], 1.5f);
  EXPECT_FLOAT_EQ(mean[1], -0.25f);
  EXPECT_FLOAT_EQ(var[0], 3.25f);
  EXPECT_FLOAT_EQ(var[1], 1.5625f);
  // Not training: nothing moves, whatever the rows.
  std::vector<float> before = mean;
  ASSERT_TRUE(rt::updateBatchStats(x.data(), 1, 2, mean.data(), var.data(),
                                   0.25, /*training=*/false)
                  .ok());
  EXPECT_EQ(mean, before);
  // One row in training: no variance, an error, and nothing written.
  rt::Status s = rt::updateBatchStats(x.data(), 1, 2, mean.data(), var.data(),
                                      0.25, /*training=*/true);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("at least 2 rows"), std::string::npos);
  EXPECT_EQ(mean, before);
}

//===----------------------------------------------------------------------===//
// Products split over OpenMP's threads
//===----------------------------------------------------------------------===//

/// op(a) @ op(w) in double, from the operands as stored (a: [rows, k] or,
/// transposed, [k, rows]; w: [k, n] or, transposed, [n, k]).
std::vector<double> referenceProduct(const std::vector<float> &a, bool transA,
                                     const std::vector<float> &w, bool transW,
                                     int64_t rows, int64_t k, int64_t n) {
  std::vector<double> out(rows * n, 0.0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < n; ++c) {
      double acc = 0.0;
      for (int64_t j = 0; j < k; ++j)
        acc += double(transA ? a[j * rows + r] : a[r * k + j]) *
               double(transW ? w[c * k + j] : w[j * n + c]);
      out[r * n + c] = acc;
    }
  return out;
}

/// Large enough to be split (blocks of rows for [300, 40] @ [40, 30], of
/// columns for [8, 10] @ [10, 4000], which has too few rows) or not
/// ([5, 3] @ [3, 7]), every transposition, against the product in double.
TEST(OpsMatmul, SplitProductsMatchTheReference) {
  struct Size {
    int64_t rows, k, n;
  };
  for (Size s : {Size{300, 40, 30}, Size{8, 10, 4000}, Size{5, 3, 7}})
    for (bool transA : {false, true})
      for (bool transW : {false, true}) {
        std::vector<float> a(s.rows * s.k), w(s.k * s.n);
        for (size_t i = 0; i < a.size(); ++i)
          a[i] = float((i * 37 % 101) - 50) / 50.0f;
        for (size_t i = 0; i < w.size(); ++i)
          w[i] = float((i * 53 % 97) - 48) / 48.0f;
        std::vector<float> out(s.rows * s.n, std::nanf(""));
        rt::matmulT(a.data(), transA, w.data(), transW, out.data(), s.rows, s.k,
                    s.n);
        std::vector<double> want =
            referenceProduct(a, transA, w, transW, s.rows, s.k, s.n);
        for (size_t i = 0; i < out.size(); ++i)
          ASSERT_NEAR(out[i], want[i], 1e-4 * (1.0 + std::fabs(want[i])))
              << s.rows << "x" << s.k << "x" << s.n << " transA " << transA
              << " transW " << transW << " at " << i;
      }
}

} // namespace

//===----------------------------------------------------------------------===//
// dropoutMatmul: a dropout fused into the product that reads it
//===----------------------------------------------------------------------===//

namespace {

/// x[rows, k] with the rows in `denseRows` full of values and the others
/// holding about one value in 60 (a bag-of-words row), at positions and
/// with values from a fixed generator.
std::vector<float> featureRows(int64_t rows, int64_t k,
                               const std::vector<bool> &denseRows) {
  std::vector<float> x(rows * k, 0.0f);
  uint32_t state = 12345;
  auto next = [&] {
    state = state * 1664525u + 1013904223u;
    return state >> 8;
  };
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t c = 0; c < k; ++c)
      if (denseRows[i] || next() % 60 == 0)
        x[i * k + c] = float(next() % 1000) / 500.0f - 1.0f;
  return x;
}

/// The fused products against rt::dropout's tensor multiplied in double:
/// the same mask, and the products to rounding.
void checkDropoutProducts(int64_t rows, int64_t k, int64_t n,
                          const std::vector<bool> &denseRows, double p,
                          bool training) {
  std::vector<float> x = featureRows(rows, k, denseRows);
  std::vector<float> w(k * n), dy(rows * n);
  for (size_t i = 0; i < w.size(); ++i)
    w[i] = float(int64_t(i * 53 % 97) - 48) / 48.0f;
  for (size_t i = 0; i < dy.size(); ++i)
    dy[i] = float(int64_t(i * 29 % 89) - 44) / 44.0f;
  const uint64_t seed = rt::mixSeed(7, 1234);
  std::vector<float> dropped(x.size());
  rt::dropout(x.data(), dropped.data(), rows * k, p, seed, training);

  std::vector<float> out(rows * n, std::nanf(""));
  rt::dropoutMatmul(x.data(), w.data(), out.data(), rows, k, n, p, seed,
                    training);
  std::vector<double> want =
      referenceProduct(dropped, false, w, false, rows, k, n);
  for (size_t i = 0; i < out.size(); ++i)
    ASSERT_NEAR(out[i], want[i], 1e-4 * (1.0 + std::fabs(want[i])))
        << rows << "x" << k << "x" << n << " p " << p << " training "
        << training << " at " << i;

  std::vector<float> grad(k * n, std::nanf(""));
  rt::dropoutTransposeMatmul(x.data(), dy.data(), grad.data(), rows, k, n, p,
                             seed, training);
  std::vector<double> wantGrad =
      referenceProduct(dropped, true, dy, false, k, rows, n);
  for (size_t i = 0; i < grad.size(); ++i)
    ASSERT_NEAR(grad[i], wantGrad[i], 1e-4 * (1.0 + std::fabs(wantGrad[i])))
        << "transposed " << rows << "x" << k << "x" << n << " p " << p
        << " training " << training << " at " << i;
}

} // namespace

/// Sparse rows (summed over their kept elements), dense rows (a dropped
/// copy through cblas_sgemm) and both in one call, with sizes that are not
/// multiples of the tiles or of the 16-element zero blocks, in training, in
/// inference, and with p = 0 and p = 1.
TEST(OpsDropoutMatmul, MatchesDropoutThenMatmul) {
  struct Case {
    int64_t rows, k, n;
    int denseEvery; // every denseEvery-th row is dense; 0: none
  };
  for (Case c :
       {Case{100, 300, 16, 0}, Case{70, 600, 5, 1}, Case{300, 1433, 16, 3},
        Case{45, 37, 9, 0}, Case{200, 130, 64, 7}})
    for (auto [p, training] : {std::pair{0.5, true}, std::pair{0.5, false},
                               std::pair{0.0, true}, std::pair{1.0, true}}) {
      std::vector<bool> dense(c.rows, false);
      for (int64_t i = 0; c.denseEvery && i < c.rows; i += c.denseEvery)
        dense[i] = true;
      checkDropoutProducts(c.rows, c.k, c.n, dense, p, training);
    }
}

/// Hand-computed: x = [[2, 0], [0, 3]], w = [[1, 10], [100, 1000]], no
/// dropout: x @ w = [[2, 20], [300, 3000]]; transpose(x) @ w (w as dy) =
/// [[2, 20], [300, 3000]] too, and with dy = [[1, 2], [3, 4]]:
/// [[2, 4], [9, 12]].
TEST(OpsDropoutMatmul, HandComputed) {
  const float x[] = {2, 0, 0, 3};
  const float w[] = {1, 10, 100, 1000};
  const float dy[] = {1, 2, 3, 4};
  float out[4], grad[4];
  rt::dropoutMatmul(x, w, out, 2, 2, 2, 0.5, 1, /*training=*/false);
  EXPECT_EQ(std::vector<float>(out, out + 4),
            (std::vector<float>{2, 20, 300, 3000}));
  rt::dropoutTransposeMatmul(x, dy, grad, 2, 2, 2, 0.5, 1, false);
  EXPECT_EQ(std::vector<float>(grad, grad + 4),
            (std::vector<float>{2, 4, 9, 12}));
}

//===----------------------------------------------------------------------===//
// mulReduceSum: reduceSum of a broadcast product without the product
//===----------------------------------------------------------------------===//

namespace {

/// Element `flat` of `a` (shape `sa`) broadcast to `so`, by its index on
/// every axis: the definition, not the runtime's merged walk.
float broadcastAt(const std::vector<float> &a, const rt::Shape &sa,
                  const rt::Shape &so, int64_t flat) {
  int64_t offset = 0, stride = 1;
  for (int d = so.rank - 1; d >= 0; --d) {
    int64_t index = flat % so.dims[d];
    flat /= so.dims[d];
    if (sa.dims[d] != 1)
      offset += index * stride;
    stride *= sa.dims[d];
  }
  return a[offset];
}

std::vector<float> randomValues(int64_t n, uint32_t seed) {
  std::vector<float> v(n);
  uint32_t state = seed;
  for (float &x : v) {
    state = state * 1664525u + 1013904223u;
    x = static_cast<float>(state >> 8) / static_cast<float>(1u << 24) - 0.5f;
  }
  return v;
}

struct MulReduceCase {
  rt::Shape sa, sb, so;
  int axis;
};

} // namespace

TEST(OpsMulReduce, MatchesMulThenReduceSumBitForBit) {
  // Row dots of attention scores ([N, H, F] * [1, H, F] over F), parameter
  // gradients ([N, H, 1] broadcast times [N, H, F] over N), both operands
  // broadcast, long axes past the runtime's block of 1,024 (rows and
  // columns), sizes past the parallel threshold, an axis of 1 and an
  // empty axis.
  const MulReduceCase cases[] = {
      {{5, 8, 8}, {1, 8, 8}, {5, 8, 8}, 2},
      {{1, 8, 8}, {5, 8, 8}, {5, 8, 8}, 2},
      {{700, 8, 1}, {700, 8, 8}, {700, 8, 8}, 0},
      {{700, 8, 1}, {1, 8, 8}, {700, 8, 8}, 2},
      {{3, 1, 7}, {1, 4, 1}, {3, 4, 7}, 1},
      {{3, 2500}, {1, 2500}, {3, 2500}, 1},
      {{2, 3, 1500}, {2, 3, 1500}, {2, 3, 1500}, 1},
      {{9000, 7}, {9000, 7}, {9000, 7}, 0},
      {{9000, 7}, {1, 7}, {9000, 7}, 1},
      {{40000, 1}, {40000, 3}, {40000, 3}, 0},
      {{6, 1, 5}, {6, 1, 5}, {6, 1, 5}, 1},
      {{4, 0, 3}, {1, 0, 3}, {4, 0, 3}, 1},
      {{1}, {1}, {1}, 0},
  };
  uint32_t seed = 1;
  for (const MulReduceCase &c : cases) {
    std::vector<float> a = randomValues(c.sa.numElements(), seed++);
    std::vector<float> b = randomValues(c.sb.numElements(), seed++);
    int64_t outer = 1, len = c.so.dims[c.axis], inner = 1;
    for (int d = 0; d < c.axis; ++d)
      outer *= c.so.dims[d];
    for (int d = c.axis + 1; d < c.so.rank; ++d)
      inner *= c.so.dims[d];
    std::string what = "axis " + std::to_string(c.axis) + " of [" +
                       std::to_string(outer) + ", " + std::to_string(len) +
                       ", " + std::to_string(inner) + "]";
    // The unfused runtime: mul, then reduceSum.
    std::vector<float> product(c.so.numElements());
    rt::mul(a.data(), c.sa, b.data(), c.sb, product.data(), c.so);
    std::vector<float> want(outer * inner, 7.0f);
    rt::reduceSum(product.data(), want.data(), outer, len, inner);
    // The definition: every product rounded, then summed in index order.
    std::vector<float> defined(outer * inner);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        float acc = 0.0f;
        for (int64_t j = 0; j < len; ++j) {
          int64_t flat = (o * len + j) * inner + i;
          volatile float p = broadcastAt(a, c.sa, c.so, flat) *
                             broadcastAt(b, c.sb, c.so, flat);
          acc += p;
        }
        defined[o * inner + i] = acc;
      }
    expectValues(want, defined, ("mul then reduceSum, " + what).c_str());
    std::vector<float> got(outer * inner, 7.0f);
    rt::mulReduceSum(a.data(), c.sa, b.data(), c.sb, c.so, got.data(), outer,
                     len, inner);
    expectValues(got, want, ("mulReduceSum, " + what).c_str());
  }
}

TEST(OpsMulReduce, HandComputed) {
  // [2, 3] * [1, 3] summed over the last axis: the dot of each row with
  // (1, 2, 3); and over the first axis: the column sums scaled by it.
  const std::vector<float> a = {1, 2, 3, 4, 5, 6}, w = {1, 2, 3};
  std::vector<float> rows(2), cols(3);
  rt::mulReduceSum(a.data(), {2, 3}, w.data(), {1, 3}, {2, 3}, rows.data(), 2,
                   3, 1);
  rt::mulReduceSum(a.data(), {2, 3}, w.data(), {1, 3}, {2, 3}, cols.data(), 1,
                   2, 3);
  expectValues(rows, {14.0f, 32.0f}, "row dots");
  expectValues(cols, {5.0f, 14.0f, 27.0f}, "column sums");
}

TEST(OpsAddMul, MatchesMulThenAddBitForBit) {
  // A gradient accumulated from a broadcast product (GAT's h + ed * a_dst
  // over [N, 8, 8]), every operand broadcast, sizes past the block of
  // 1,024 and the parallel threshold, and an empty tensor.
  struct Case {
    rt::Shape sx, sy, sz, so;
  };
  const Case cases[] = {
      {{300, 8, 8}, {300, 8, 1}, {1, 8, 8}, {300, 8, 8}},
      {{1, 1, 7}, {5000, 1, 7}, {5000, 3, 1}, {5000, 3, 7}},
      {{40000, 2}, {40000, 2}, {40000, 2}, {40000, 2}},
      {{1}, {1}, {1}, {1}},
      {{0, 4}, {0, 4}, {1, 4}, {0, 4}},
  };
  uint32_t seed = 100;
  for (const Case &c : cases) {
    std::vector<float> x = randomValues(c.sx.numElements(), seed++);
    std::vector<float> y = randomValues(c.sy.numElements(), seed++);
    std::vector<float> z = randomValues(c.sz.numElements(), seed++);
    const int64_t n = c.so.numElements();
    std::vector<float> product(n), want(n), got(n, 7.0f), defined(n);
    rt::mul(y.data(), c.sy, z.data(), c.sz, product.data(), c.so);
    rt::add(x.data(), c.sx, product.data(), c.so, want.data(), c.so);
    for (int64_t i = 0; i < n; ++i) {
      volatile float p =
          broadcastAt(y, c.sy, c.so, i) * broadcastAt(z, c.sz, c.so, i);
      defined[i] = broadcastAt(x, c.sx, c.so, i) + p;
    }
    expectValues(want, defined, "mul then add");
    rt::addMul(x.data(), c.sx, y.data(), c.sy, z.data(), c.sz, got.data(),
               c.so);
    expectValues(got, want, "addMul");
  }
}

TEST(OpsInPlace, ElementwiseOutputOverAnInputGivesTheSameBits) {
  // Generated code writes an elementwise result over an operand of its
  // shape that nothing reads afterwards: the same bits as into a fresh
  // buffer, over both operands of a binary op (the other one broadcast or
  // not), every operand of addMul, unary ops, and a dropout, at sizes past
  // the parallel threshold and the blocks of the runtime's loops.
  const rt::Shape full{3000, 8, 8}, row{1, 8, 8}, column{3000, 8, 1};
  const int64_t n = full.numElements();
  std::vector<float> a = randomValues(n, 1), b = randomValues(n, 2);
  std::vector<float> r = randomValues(row.numElements(), 3);
  std::vector<float> c = randomValues(column.numElements(), 4);
  using Binary = void (*)(const float *, const rt::Shape &, const float *,
                          const rt::Shape &, float *, const rt::Shape &);
  for (Binary fn : {Binary(rt::sub), Binary(rt::mul), Binary(rt::max)}) {
    for (const auto &[other, shape] :
         {std::pair{&b, full}, std::pair{&r, row}, std::pair{&c, column}}) {
      std::vector<float> want(n), lhs = a, rhs = a;
      fn(a.data(), full, other->data(), shape, want.data(), full);
      fn(lhs.data(), full, other->data(), shape, lhs.data(), full);
      expectValues(lhs, want, "binary over its left operand");
      fn(other->data(), shape, a.data(), full, want.data(), full);
      fn(other->data(), shape, rhs.data(), full, rhs.data(), full);
      expectValues(rhs, want, "binary over its right operand");
    }
  }
  for (int over = 0; over < 3; ++over) {
    std::vector<float> x = a, y = b, z = randomValues(n, 5), want(n);
    rt::addMul(x.data(), full, y.data(), full, z.data(), full, want.data(),
               full);
    float *out = over == 0 ? x.data() : over == 1 ? y.data() : z.data();
    rt::addMul(x.data(), full, y.data(), full, z.data(), full, out, full);
    expectValues(over == 0 ? x : over == 1 ? y : z, want, "addMul in place");
  }
  std::vector<float> want(n), x = a;
  rt::elu(a.data(), want.data(), n, 1.0f);
  rt::elu(x.data(), x.data(), n, 1.0f);
  expectValues(x, want, "elu in place");
  x = a;
  rt::relu(a.data(), want.data(), n);
  rt::relu(x.data(), x.data(), n);
  expectValues(x, want, "relu in place");
  // Dropout: a tensor with blocks of zeros (skipped) and of values.
  x = a;
  for (int64_t i = 0; i < n; i += 40)
    std::fill(x.begin() + i, x.begin() + std::min<int64_t>(n, i + 20), 0.0f);
  std::vector<float> in = x;
  rt::dropout(in.data(), want.data(), n, 0.4, 77, true);
  rt::dropout(x.data(), x.data(), n, 0.4, 77, true);
  expectValues(x, want, "dropout in place");
}
