//===- TrainTest.cpp - Tests of the training helpers ----------------------===//
//
// Part of gnnc. Expected values come from hand-computed constants or from
// short, independent reimplementations of the documented formulas.
//
//===----------------------------------------------------------------------===//

#include "gnnc/runtime/Train.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdint>
#include <set>
#include <vector>

using namespace gnnc::rt;

namespace {

//===----------------------------------------------------------------------===//
// Loss and accuracy
//===----------------------------------------------------------------------===//

TEST(SoftmaxCrossEntropy, HandComputed) {
  // Row 2 is masked out, and its label is out of range: it must be ignored.
  std::vector<float> logits = {1, 2, 3, 1, 1, 1, 0, 0, 10};
  std::vector<int64_t> labels = {2, 0, 99};
  std::vector<uint8_t> mask = {1, 1, 0};
  std::vector<float> grad(9, -7.0f);
  double loss = -1;
  Status s = softmaxCrossEntropy(logits.data(), 3, 3, labels.data(),
                                 mask.data(), loss, grad.data());
  ASSERT_TRUE(s.ok()) << s.message();
  double z0 = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
  double expected = ((std::log(z0) - 3.0) + std::log(3.0)) / 2.0;
  EXPECT_NEAR(loss, expected, 1e-12);
  // (softmax - onehot) / 2 on the two selected rows, 0 on the third.
  std::vector<double> want = {std::exp(1.0) / z0 / 2,
                              std::exp(2.0) / z0 / 2,
                              (std::exp(3.0) / z0 - 1) / 2,
                              (1.0 / 3 - 1) / 2,
                              1.0 / 3 / 2,
                              1.0 / 3 / 2,
                              0,
                              0,
                              0};
  for (size_t i = 0; i < 9; ++i)
    EXPECT_NEAR(grad[i], want[i], 1e-7) << "element " << i;
  EXPECT_EQ(grad[6], 0.0f);
  EXPECT_EQ(grad[8], 0.0f);
}

TEST(SoftmaxCrossEntropy, StableForLargeLogits) {
  std::vector<float> big = {1000, 1001, 1002, -1000, -1001, -1002};
  std::vector<float> small = {0, 1, 2, 0, -1, -2};
  std::vector<int64_t> labels = {0, 2};
  double lossBig, lossSmall;
  std::vector<float> gradBig(6), gradSmall(6);
  ASSERT_TRUE(softmaxCrossEntropy(big.data(), 2, 3, labels.data(), nullptr,
                                  lossBig, gradBig.data())
                  .ok());
  ASSERT_TRUE(softmaxCrossEntropy(small.data(), 2, 3, labels.data(), nullptr,
                                  lossSmall, gradSmall.data())
                  .ok());
  ASSERT_TRUE(std::isfinite(lossBig));
  EXPECT_NEAR(lossBig, lossSmall, 1e-9);
  for (size_t i = 0; i < 6; ++i)
    EXPECT_NEAR(gradBig[i], gradSmall[i], 1e-7);
}

TEST(SoftmaxCrossEntropy, GradientMatchesFiniteDifferences) {
  const int64_t rows = 5, classes = 4;
  std::vector<float> logits(rows * classes);
  for (size_t i = 0; i < logits.size(); ++i)
    logits[i] = static_cast<float>(std::sin(1.7 * static_cast<double>(i)) * 3);
  std::vector<int64_t> labels = {3, 0, 1, 2, 1};
  std::vector<uint8_t> mask = {1, 0, 1, 1, 0};
  double loss;
  std::vector<float> grad(logits.size());
  ASSERT_TRUE(softmaxCrossEntropy(logits.data(), rows, classes, labels.data(),
                                  mask.data(), loss, grad.data())
                  .ok());
  for (size_t i = 0; i < logits.size(); ++i) {
    const float h = 1.0f / 64; // exact in float, so x +- h is exact too
    std::vector<float> plus = logits, minus = logits;
    plus[i] += h;
    minus[i] -= h;
    double lp, lm;
    ASSERT_TRUE(softmaxCrossEntropy(plus.data(), rows, classes, labels.data(),
                                    mask.data(), lp)
                    .ok());
    ASSERT_TRUE(softmaxCrossEntropy(minus.data(), rows, classes, labels.data(),
                                    mask.data(), lm)
                    .ok());
    EXPECT_NEAR(grad[i], (lp - lm) / (2 * h), 1e-4) << "element " << i;
  }
}

TEST(SoftmaxCrossEntropy, Errors) {
  std::vector<float> logits = {1, 2, 3, 4};
  std::vector<int64_t> labels = {0, 2};
  std::vector<uint8_t> mask = {1, 1};
  std::vector<float> grad(4, 5.0f);
  double loss = 42;
  Status s = softmaxCrossEntropy(logits.data(), 2, 2, labels.data(),
                                 mask.data(), loss, grad.data());
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(),
            "softmaxCrossEntropy: row 1: label 2 is outside [0, 2)");
  EXPECT_EQ(loss, 42);
  EXPECT_EQ(grad, std::vector<float>(4, 5.0f));

  std::vector<uint8_t> none = {0, 0};
  s = softmaxCrossEntropy(logits.data(), 2, 2, labels.data(), none.data(),
                          loss);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "softmaxCrossEntropy: the mask selects no row (of 2)");

  s = softmaxCrossEntropy(logits.data(), 2, 0, labels.data(), nullptr, loss);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("number of classes must be positive"),
            std::string::npos);
  s = softmaxCrossEntropy(logits.data(), -1, 2, labels.data(), nullptr, loss);
  EXPECT_FALSE(s.ok());
  s = softmaxCrossEntropy(nullptr, 2, 2, labels.data(), nullptr, loss);
  EXPECT_FALSE(s.ok());
  std::vector<int64_t> negative = {-1, 0};
  s = maskedAccuracy(logits.data(), 2, 2, negative.data(), nullptr, loss);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "maskedAccuracy: row 0: label -1 is outside [0, 2)");
}

TEST(MaskedAccuracy, ArgmaxTakesTheFirstMaximum) {
  // Row 0 ties classes 0 and 1: the argmax is 0.
  std::vector<float> logits = {1, 1, 0, 0, 2, 1, 5, 0, 0, 3, 3, 3};
  std::vector<int64_t> labels = {0, 1, 1, 2};
  double acc = -1;
  ASSERT_TRUE(
      maskedAccuracy(logits.data(), 4, 3, labels.data(), nullptr, acc).ok());
  EXPECT_DOUBLE_EQ(acc, 0.5); // rows 0 and 1 right, 2 and 3 wrong
  std::vector<uint8_t> mask = {0, 1, 1, 0};
  ASSERT_TRUE(
      maskedAccuracy(logits.data(), 4, 3, labels.data(), mask.data(), acc)
          .ok());
  EXPECT_DOUBLE_EQ(acc, 0.5);
  std::vector<int64_t> tieSecond = {1, 1, 0, 0};
  ASSERT_TRUE(
      maskedAccuracy(logits.data(), 4, 3, tieSecond.data(), nullptr, acc).ok());
  EXPECT_DOUBLE_EQ(acc, 0.75); // row 0 wrong (argmax 0), row 3 right
}

//===----------------------------------------------------------------------===//
// Adam
//===----------------------------------------------------------------------===//

/// torch.optim.Adam, written out once more in double for the tests.
struct RefAdam {
  double Lr, B1, B2, Eps, Wd;
  std::vector<double> M, V;
  int T = 0;
  void step(std::vector<double> &p, const std::vector<double> &g) {
    if (M.empty())
      M.assign(p.size(), 0), V.assign(p.size(), 0);
    ++T;
    for (size_t i = 0; i < p.size(); ++i) {
      double gi = g[i] + Wd * p[i];
      M[i] = B1 * M[i] + (1 - B1) * gi;
      V[i] = B2 * V[i] + (1 - B2) * gi * gi;
      double mHat = M[i] / (1 - std::pow(B1, T));
      double vHat = V[i] / (1 - std::pow(B2, T));
      p[i] -= Lr * mHat / (std::sqrt(vHat) + Eps);
    }
  }
};

TEST(Adam, OneStepHandComputed) {
  // After one step m_hat = g' and v_hat = g'^2 with g' = g + wd * p, so each
  // element moves by lr * g' / (|g'| + eps): almost exactly lr * sign(g').
  AdamOptions o;
  o.LearningRate = 0.1;
  o.WeightDecay = 0.01;
  Adam adam(o);
  std::vector<float> p = {1.0f, -2.0f, 0.5f};
  std::vector<float> g = {0.5f, 0.1f, -0.005f};
  ASSERT_TRUE(adam.addParam(p.data(), 3).ok());
  ASSERT_TRUE(adam.step({g.data()}).ok());
  EXPECT_EQ(adam.numSteps(), 1);
  // g' = 0.51, 0.08, 0 (exactly -0.005 + 0.005 in real arithmetic).
  EXPECT_NEAR(p[0], 0.9f, 1e-7);
  EXPECT_NEAR(p[1], -2.1f, 1e-7);
  EXPECT_NEAR(p[2], 0.5f, 2e-3); // |g'| ~ eps: a tiny, ill-defined step
  // m = 0.1 g', v = 0.001 g'^2.
  EXPECT_NEAR(adam.firstMoment(0)[0], 0.051f, 1e-8);
  EXPECT_NEAR(adam.secondMoment(0)[1], 0.001 * 0.08 * 0.08, 1e-12);
}

TEST(Adam, SeveralStepsMatchTheFormula) {
  AdamOptions o;
  o.LearningRate = 0.01;
  o.Beta1 = 0.8;
  o.Beta2 = 0.95;
  o.Eps = 1e-6;
  o.WeightDecay = 5e-4;
  Adam adam(o);
  std::vector<float> a = {0.3f, -0.7f, 1.5f, 0.0f};
  std::vector<float> b = {2.0f};
  ASSERT_TRUE(adam.addParam(a.data(), 4).ok());
  ASSERT_TRUE(adam.addParam(b.data(), 1).ok());
  ASSERT_TRUE(adam.addParam(nullptr, 0).ok());
  RefAdam refA{o.LearningRate, o.Beta1, o.Beta2, o.Eps, o.WeightDecay, {}, {}};
  RefAdam refB = refA;
  std::vector<double> pa(a.begin(), a.end()), pb(b.begin(), b.end());
  for (int t = 0; t < 20; ++t) {
    std::vector<float> ga(4), gb(1);
    for (size_t i = 0; i < 4; ++i)
      ga[i] = static_cast<float>(std::cos(0.9 * t + static_cast<double>(i)));
    gb[0] = static_cast<float>(0.1 * (t % 3) - 0.1);
    ASSERT_TRUE(adam.step({ga.data(), gb.data(), nullptr}).ok());
    refA.step(pa, std::vector<double>(ga.begin(), ga.end()));
    refB.step(pb, std::vector<double>(gb.begin(), gb.end()));
    for (size_t i = 0; i < 4; ++i)
      EXPECT_NEAR(a[i], pa[i], 1e-5) << "step " << t << " element " << i;
    EXPECT_NEAR(b[0], pb[0], 1e-5) << "step " << t;
  }
  EXPECT_EQ(adam.numSteps(), 20);

  adam.reset();
  EXPECT_EQ(adam.numSteps(), 0);
  EXPECT_EQ(adam.firstMoment(0), std::vector<float>(4, 0.0f));
  EXPECT_EQ(adam.secondMoment(1), std::vector<float>(1, 0.0f));
}

// A checkpoint: an optimiser restored from another's moments, step count and
// parameters continues exactly as the other does (bit for bit).
TEST(Adam, RestoreContinuesTheSavedRun) {
  AdamOptions o;
  o.LearningRate = 0.05;
  o.WeightDecay = 1e-3;
  std::vector<float> a = {0.3f, -0.7f, 1.5f}, b = a;
  Adam first(o), second(o);
  ASSERT_TRUE(first.addParam(a.data(), 3).ok());
  ASSERT_TRUE(second.addParam(b.data(), 3).ok());
  auto grad = [](int t) {
    return std::vector<float>{static_cast<float>(std::sin(t)), 0.25f,
                              static_cast<float>(-0.1 * t)};
  };
  for (int t = 0; t < 5; ++t) {
    std::vector<float> g = grad(t);
    ASSERT_TRUE(first.step({g.data()}).ok());
  }
  // The second optimiser took no step; it takes the first one's state.
  b = a;
  std::vector<float> m = first.firstMoment(0), v = first.secondMoment(0);
  ASSERT_TRUE(second.restore({m.data()}, {v.data()}, first.numSteps()).ok());
  EXPECT_EQ(second.numSteps(), 5);
  for (int t = 5; t < 10; ++t) {
    std::vector<float> g = grad(t);
    ASSERT_TRUE(first.step({g.data()}).ok());
    ASSERT_TRUE(second.step({g.data()}).ok());
    EXPECT_EQ(a, b) << "step " << t;
  }
  // Without the step count, the bias correction differs.
  Adam third(o);
  std::vector<float> c = a;
  ASSERT_TRUE(third.addParam(c.data(), 3).ok());
  m = first.firstMoment(0);
  v = first.secondMoment(0);
  ASSERT_TRUE(third.restore({m.data()}, {v.data()}, 0).ok());
  std::vector<float> g = grad(10);
  ASSERT_TRUE(first.step({g.data()}).ok());
  ASSERT_TRUE(third.step({g.data()}).ok());
  EXPECT_NE(a, c);

  EXPECT_FALSE(third.restore({}, {}, 1).ok());
  EXPECT_FALSE(third.restore({m.data()}, {v.data()}, -1).ok());
  EXPECT_FALSE(third.restore({nullptr}, {v.data()}, 1).ok());
}

TEST(Adam, ZeroGradientWithoutDecayLeavesParameters) {
  Adam adam;
  std::vector<float> p = {1, 2, 3};
  std::vector<float> g(3, 0.0f);
  ASSERT_TRUE(adam.addParam(p.data(), 3).ok());
  for (int t = 0; t < 3; ++t)
    ASSERT_TRUE(adam.step({g.data()}).ok());
  EXPECT_EQ(p, (std::vector<float>{1, 2, 3}));
}

TEST(Adam, ErrorsChangeNothing) {
  AdamOptions o;
  Adam adam(o);
  std::vector<float> p = {1, 2};
  std::vector<float> g = {1, 1};
  EXPECT_FALSE(adam.addParam(nullptr, 2).ok());
  EXPECT_FALSE(adam.addParam(p.data(), -1).ok());
  ASSERT_TRUE(adam.addParam(p.data(), 2).ok());

  Status s = adam.step({});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "adam: 0 gradients for 1 parameters");
  s = adam.step({nullptr});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "adam: null gradient for parameter 0");
  adam.setLearningRate(-1);
  s = adam.step({g.data()});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("invalid learning rate"), std::string::npos);
  adam.setLearningRate(NAN);
  EXPECT_FALSE(adam.step({g.data()}).ok());
  EXPECT_EQ(p, (std::vector<float>{1, 2}));
  EXPECT_EQ(adam.numSteps(), 0);

  for (double beta : {-0.1, 1.0}) {
    AdamOptions bad;
    bad.Beta2 = beta;
    Adam other(bad);
    ASSERT_TRUE(other.addParam(p.data(), 2).ok());
    EXPECT_FALSE(other.step({g.data()}).ok());
  }
  AdamOptions badDecay;
  badDecay.WeightDecay = -1;
  Adam other(badDecay);
  EXPECT_FALSE(other.step({}).ok());
  EXPECT_EQ(p, (std::vector<float>{1, 2}));
}

//===----------------------------------------------------------------------===//
// Random numbers and dropout
//===----------------------------------------------------------------------===//

TEST(SplitMix64, ReferenceVectors) {
  // Outputs of Vigna's splitmix64.c seeded with 0.
  SplitMix64 rng(0);
  EXPECT_EQ(rng.next(), 0xE220A8397B1DCDAFull);
  EXPECT_EQ(rng.next(), 0x6E789E6AA1B965F4ull);
  EXPECT_EQ(rng.next(), 0x06C45D188009454Full);
  EXPECT_EQ(rng.state(), 3 * 0x9E3779B97F4A7C15ull);
  SplitMix64 half(0);
  EXPECT_EQ(half.nextDouble(),
            static_cast<double>(0xE220A8397B1DCDAFull >> 11) /
                9007199254740992.0);
}

/// The interpreter's dropoutKeeps, copied independently.
bool refKeeps(int64_t seed, uint64_t index, double p) {
  uint64_t z = static_cast<uint64_t>(seed) * 0x9E3779B97F4A7C15ull + index;
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  double u = static_cast<double>(z >> 11) * 0x1.0p-53;
  return u >= p;
}

TEST(Dropout, MatchesTheCompilersMask) {
  // Seed 0, index 0 hashes to 0xE220A8397B1DCDAF: u = 0.88331...
  double u0 = static_cast<double>(0xE220A8397B1DCDAFull >> 11) * 0x1.0p-53;
  EXPECT_NEAR(u0, 0.8833, 1e-4);
  EXPECT_TRUE(dropoutKeeps(0, 0, u0));
  EXPECT_FALSE(dropoutKeeps(0, 0, std::nextafter(u0, 1.0)));
  EXPECT_TRUE(dropoutKeeps(0, 0, 0.5));
  EXPECT_FALSE(dropoutKeeps(0, 0, 0.9));

  for (int64_t seed : {int64_t(0), int64_t(1), int64_t(42), int64_t(-3),
                       int64_t(0x7FFFFFFFFFFFFFFF)})
    for (uint64_t index = 0; index < 2000; ++index)
      for (double p : {0.0, 0.1, 0.5, 0.6, 0.9, 1.0})
        ASSERT_EQ(dropoutKeeps(static_cast<uint64_t>(seed), index, p),
                  refKeeps(seed, index, p))
            << "seed " << seed << " index " << index << " p " << p;

  // About 1 - p of the elements survive.
  int kept = 0;
  for (uint64_t index = 0; index < 100000; ++index)
    kept += dropoutKeeps(7, index, 0.6);
  EXPECT_NEAR(kept / 100000.0, 0.4, 0.01);
}

TEST(Dropout, Scale) {
  EXPECT_EQ(dropoutScale(0.0), 1.0f);
  EXPECT_EQ(dropoutScale(0.5), 2.0f);
  EXPECT_EQ(dropoutScale(0.6), static_cast<float>(1.0 / (1.0 - 0.6)));
  EXPECT_EQ(dropoutScale(0.1), static_cast<float>(1.0 / 0.9));
  EXPECT_TRUE(std::isinf(dropoutScale(1.0)));
}

//===----------------------------------------------------------------------===//
// Initialisers
//===----------------------------------------------------------------------===//

struct Moments {
  double Mean = 0, Var = 0, MaxAbs = 0;
};

Moments momentsOf(const std::vector<float> &v) {
  Moments m;
  for (float x : v) {
    m.Mean += x;
    m.MaxAbs = std::max(m.MaxAbs, std::fabs(static_cast<double>(x)));
  }
  m.Mean /= static_cast<double>(v.size());
  for (float x : v)
    m.Var += (x - m.Mean) * (x - m.Mean);
  m.Var /= static_cast<double>(v.size());
  return m;
}

std::vector<float> init(const char *name, double arg,
                        std::vector<int64_t> shape, uint64_t seed = 1) {
  int64_t count = 1;
  for (int64_t d : shape)
    count *= d;
  std::vector<float> out(static_cast<size_t>(count), -123.0f);
  Status s = initParam(name, arg, shape.data(), shape.size(), out.data(), seed);
  EXPECT_TRUE(s.ok()) << s.message();
  return out;
}

TEST(InitParam, Constants) {
  EXPECT_EQ(init("zeros", 0, {3, 4}), std::vector<float>(12, 0.0f));
  EXPECT_EQ(init("ones", 0, {5}), std::vector<float>(5, 1.0f));
  EXPECT_EQ(init("ones", 0, {}), std::vector<float>(1, 1.0f));
}

TEST(InitParam, UniformFamiliesRespectTheirBounds) {
  struct Case {
    const char *Name;
    double Arg;
    std::vector<int64_t> Shape;
    double Bound;
  };
  std::vector<Case> cases = {
      {"glorot", 0, {400, 250}, std::sqrt(6.0 / 650)},
      {"glorot", 0, {1000}, std::sqrt(6.0 / 2000)},
      {"glorot", 0, {4, 30, 20}, std::sqrt(6.0 / 50)},
      {"glorot", 0, {}, std::sqrt(3.0)},
      {"kaiming", 0, {400, 250}, std::sqrt(6.0 / 400)},
      {"kaiming", 0, {1000}, std::sqrt(6.0 / 1000)},
      {"kaiming", 0, {3, 64, 7}, std::sqrt(6.0 / 64)},
      {"uniform", 0.05, {100000}, 0.05},
  };
  for (const Case &c : cases) {
    std::vector<float> v = init(c.Name, c.Arg, c.Shape);
    Moments m = momentsOf(v);
    float bound = static_cast<float>(c.Bound);
    for (float x : v)
      ASSERT_LE(std::fabs(x), bound) << c.Name;
    if (v.size() < 100000)
      continue;
    // U(-s, s) has mean 0 and variance s^2 / 3; the sample reaches s. With
    // 100k samples the standard errors are 0.0018 s and 0.28% of s^2 / 3.
    EXPECT_NEAR(m.Mean, 0.0, 0.01 * c.Bound) << c.Name;
    EXPECT_NEAR(m.Var, c.Bound * c.Bound / 3, 0.02 * c.Bound * c.Bound / 3)
        << c.Name;
    EXPECT_GT(m.MaxAbs, 0.99 * c.Bound) << c.Name;
  }
}

TEST(InitParam, NormalHasTheRequestedMoments) {
  std::vector<float> v = init("normal", 0.1, {100001}, 5);
  Moments m = momentsOf(v);
  EXPECT_NEAR(m.Mean, 0.0, 0.002);
  EXPECT_NEAR(std::sqrt(m.Var), 0.1, 0.0015);
  // About 68.3% within one standard deviation.
  size_t within = 0;
  for (float x : v)
    within += std::fabs(x) <= 0.1f;
  EXPECT_NEAR(static_cast<double>(within) / v.size(), 0.6827, 0.01);
  EXPECT_NE(v.back(), -123.0f); // the odd last element is written too
  EXPECT_EQ(init("normal", 0.0, {7}), std::vector<float>(7, 0.0f));
}

TEST(InitParam, SeedsAreReproducible) {
  for (const char *name : {"glorot", "kaiming", "normal", "uniform"}) {
    std::vector<float> a = init(name, 0.5, {16, 8}, 11);
    std::vector<float> b = init(name, 0.5, {16, 8}, 11);
    std::vector<float> c = init(name, 0.5, {16, 8}, 12);
    EXPECT_EQ(a, b) << name;
    EXPECT_NE(a, c) << name;
    EXPECT_EQ(std::set<float>(a.begin(), a.end()).size(), a.size()) << name;
  }
  // The uniform draws are exactly (2u - 1) * s for u from SplitMix64(seed).
  std::vector<float> v = init("uniform", 0.25, {3}, 99);
  SplitMix64 rng(99);
  for (float x : v)
    EXPECT_EQ(x, static_cast<float>((2.0 * rng.nextDouble() - 1.0) * 0.25));

  EXPECT_NE(paramSeed(1, "conv1.W"), paramSeed(1, "conv2.W"));
  EXPECT_NE(paramSeed(1, "conv1.W"), paramSeed(2, "conv1.W"));
  EXPECT_EQ(paramSeed(1, "conv1.W"), paramSeed(1, "conv1.W"));
}

TEST(InitParam, Errors) {
  std::vector<int64_t> shape = {2, 3};
  std::vector<float> data(6, 9.0f);
  Status s = initParam("xavier", 0, shape.data(), 2, data.data(), 0);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "initParam: unknown initialiser 'xavier' (expected "
                         "glorot, kaiming, zeros, ones, normal or uniform)");
  s = initParam("normal", -0.1, shape.data(), 2, data.data(), 0);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("standard deviation must be finite and >= 0"),
            std::string::npos);
  s = initParam("uniform", INFINITY, shape.data(), 2, data.data(), 0);
  EXPECT_FALSE(s.ok());
  std::vector<int64_t> negative = {2, -3};
  s = initParam("zeros", 0, negative.data(), 2, data.data(), 0);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "initParam: negative dimension -3");
  EXPECT_FALSE(initParam("ones", 0, shape.data(), 2, nullptr, 0).ok());
  EXPECT_FALSE(initParam("ones", 0, nullptr, 2, data.data(), 0).ok());
  EXPECT_EQ(data, std::vector<float>(6, 9.0f));
  // An empty tensor needs no data.
  std::vector<int64_t> empty = {0, 5};
  EXPECT_TRUE(initParam("glorot", 0, empty.data(), 2, nullptr, 0).ok());
}

//===----------------------------------------------------------------------===//
// Feature preprocessing
//===----------------------------------------------------------------------===//

TEST(NormalizeRows, DividesByTheRowSum) {
  std::vector<float> x = {1, 0, 1, 1, 0, 0, 0, 0, 2, 2, 0, 0, 0.5f, 0, 0, 0};
  ASSERT_TRUE(normalizeRows(x.data(), 4, 4).ok());
  float third = static_cast<float>(1.0 / 3.0);
  EXPECT_EQ(x, (std::vector<float>{third, 0, third, third, 0, 0, 0, 0, 0.5f,
                                   0.5f, 0, 0, 1, 0, 0, 0}));
  EXPECT_TRUE(normalizeRows(nullptr, 0, 5).ok());
  EXPECT_FALSE(normalizeRows(nullptr, 2, 5).ok());
  EXPECT_FALSE(normalizeRows(x.data(), -1, 4).ok());
}

} // namespace
