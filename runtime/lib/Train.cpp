//===- Train.cpp - Helpers for training node classifiers ------------------===//
//
// Part of gnnc. Plain loops over float32 data; every check runs before any
// output is written, so a failed call leaves its outputs untouched.
//
//===----------------------------------------------------------------------===//

#include "gnnc/runtime/Train.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <new>
#include <string>

using namespace gnnc::rt;

namespace {

/// Checks the arguments shared by the loss and the accuracy and counts the
/// selected rows.
Status checkClassification(const char *what, const float *logits,
                           int64_t numRows, int64_t numClasses,
                           const int64_t *labels, const uint8_t *mask,
                           int64_t &count) {
  if (numRows < 0)
    return Status::error(
        fmt::format("{}: negative row count {}", what, numRows));
  if (numClasses <= 0)
    return Status::error(
        fmt::format("{}: the number of classes must be positive, got {}", what,
                    numClasses));
  int64_t elements;
  if (__builtin_mul_overflow(numRows, numClasses, &elements))
    return Status::error(fmt::format("{}: {}x{} logits overflow 64 bits", what,
                                     numRows, numClasses));
  if (numRows > 0 && (!logits || !labels))
    return Status::error(fmt::format("{}: null logits or labels", what));
  count = 0;
  for (int64_t i = 0; i < numRows; ++i) {
    if (mask && !mask[i])
      continue;
    if (labels[i] < 0 || labels[i] >= numClasses)
      return Status::error(
          fmt::format("{}: row {}: label {} is outside [0, {})", what, i,
                      labels[i], numClasses));
    ++count;
  }
  if (count == 0)
    return Status::error(
        fmt::format("{}: the mask selects no row (of {})", what, numRows));
  return Status::success();
}

uint64_t fnv1a64(std::string_view text) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ull;
  }
  return hash;
}

bool isFiniteNonNegative(double x) { return std::isfinite(x) && x >= 0; }

} // namespace

//===----------------------------------------------------------------------===//
// Loss and accuracy
//===----------------------------------------------------------------------===//

Status gnnc::rt::softmaxCrossEntropy(const float *logits, int64_t numRows,
                                     int64_t numClasses, const int64_t *labels,
                                     const uint8_t *mask, double &loss,
                                     float *gradLogits) {
  int64_t count;
  if (Status s = checkClassification("softmaxCrossEntropy", logits, numRows,
                                     numClasses, labels, mask, count);
      !s.ok())
    return s;
  size_t classes = static_cast<size_t>(numClasses);
  double invCount = 1.0 / static_cast<double>(count);
  double total = 0;
  for (int64_t i = 0; i < numRows; ++i) {
    const float *row = logits + static_cast<size_t>(i) * classes;
    float *grad =
        gradLogits ? gradLogits + static_cast<size_t>(i) * classes : nullptr;
    if (mask && !mask[i]) {
      if (grad)
        for (size_t j = 0; j < classes; ++j)
          grad[j] = 0.0f;
      continue;
    }
    double rowMax = row[0];
    for (size_t j = 1; j < classes; ++j)
      rowMax = std::max(rowMax, static_cast<double>(row[j]));
    double sumExp = 0;
    for (size_t j = 0; j < classes; ++j)
      sumExp += std::exp(static_cast<double>(row[j]) - rowMax);
    size_t label = static_cast<size_t>(labels[i]);
    total += rowMax + std::log(sumExp) - static_cast<double>(row[label]);
    if (grad) {
      for (size_t j = 0; j < classes; ++j) {
        double p = std::exp(static_cast<double>(row[j]) - rowMax) / sumExp;
        grad[j] = static_cast<float>((p - (j == label ? 1.0 : 0.0)) * invCount);
      }
    }
  }
  loss = total * invCount;
  return Status::success();
}

Status gnnc::rt::maskedAccuracy(const float *logits, int64_t numRows,
                                int64_t numClasses, const int64_t *labels,
                                const uint8_t *mask, double &accuracy) {
  int64_t count;
  if (Status s = checkClassification("maskedAccuracy", logits, numRows,
                                     numClasses, labels, mask, count);
      !s.ok())
    return s;
  size_t classes = static_cast<size_t>(numClasses);
  int64_t correct = 0;
  for (int64_t i = 0; i < numRows; ++i) {
    if (mask && !mask[i])
      continue;
    const float *row = logits + static_cast<size_t>(i) * classes;
    size_t best = 0;
    for (size_t j = 1; j < classes; ++j)
      if (row[j] > row[best])
        best = j;
    if (static_cast<int64_t>(best) == labels[i])
      ++correct;
  }
  accuracy = static_cast<double>(correct) / static_cast<double>(count);
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Adam
//===----------------------------------------------------------------------===//

Adam::Adam(const AdamOptions &options) : Options(options) {}

Status Adam::addParam(float *data, int64_t numElements) {
  size_t which = Params.size();
  if (numElements < 0)
    return Status::error(fmt::format("adam: parameter {}: negative size {}",
                                     which, numElements));
  if (numElements > 0 && !data)
    return Status::error(fmt::format(
        "adam: parameter {}: null data for {} elements", which, numElements));
  if (static_cast<uint64_t>(numElements) > std::vector<float>().max_size())
    return Status::error(
        fmt::format("adam: parameter {}: {} elements do not fit in memory",
                    which, numElements));
  try {
    Param p;
    p.Data = data;
    p.M.assign(static_cast<size_t>(numElements), 0.0f);
    p.V.assign(static_cast<size_t>(numElements), 0.0f);
    Params.push_back(std::move(p));
  } catch (const std::bad_alloc &) {
    return Status::error(fmt::format(
        "adam: parameter {}: out of memory for the moments of {} elements",
        which, numElements));
  }
  return Status::success();
}

Status Adam::step(const std::vector<const float *> &grads) {
  const AdamOptions &o = Options;
  if (!isFiniteNonNegative(o.LearningRate))
    return Status::error(
        fmt::format("adam: invalid learning rate {:f}", o.LearningRate));
  if (!(o.Beta1 >= 0 && o.Beta1 < 1) || !(o.Beta2 >= 0 && o.Beta2 < 1))
    return Status::error(fmt::format(
        "adam: betas must lie in [0, 1), got {:f} and {:f}", o.Beta1, o.Beta2));
  if (!isFiniteNonNegative(o.Eps))
    return Status::error(fmt::format("adam: invalid eps {:f}", o.Eps));
  if (!isFiniteNonNegative(o.WeightDecay))
    return Status::error(
        fmt::format("adam: invalid weight decay {:f}", o.WeightDecay));
  if (grads.size() != Params.size())
    return Status::error(fmt::format("adam: {} gradients for {} parameters",
                                     grads.size(), Params.size()));
  for (size_t i = 0; i < grads.size(); ++i)
    if (!grads[i] && !Params[i].M.empty())
      return Status::error(
          fmt::format("adam: null gradient for parameter {}", i));

  int64_t t = Steps + 1;
  double bias1 = 1.0 - std::pow(o.Beta1, static_cast<double>(t));
  double bias2Sqrt = std::sqrt(1.0 - std::pow(o.Beta2, static_cast<double>(t)));
  double stepSize = o.LearningRate / bias1;
  for (size_t i = 0; i < Params.size(); ++i) {
    Param &p = Params[i];
    const float *grad = grads[i];
    for (size_t k = 0; k < p.M.size(); ++k) {
      double value = p.Data[k];
      double g = static_cast<double>(grad[k]) + o.WeightDecay * value;
      double m = o.Beta1 * p.M[k] + (1.0 - o.Beta1) * g;
      double v = o.Beta2 * p.V[k] + (1.0 - o.Beta2) * g * g;
      p.M[k] = static_cast<float>(m);
      p.V[k] = static_cast<float>(v);
      double denom = std::sqrt(static_cast<double>(p.V[k])) / bias2Sqrt + o.Eps;
      p.Data[k] = static_cast<float>(
          value - stepSize * static_cast<double>(p.M[k]) / denom);
    }
  }
  Steps = t;
  return Status::success();
}

void Adam::reset() {
  for (Param &p : Params) {
    std::fill(p.M.begin(), p.M.end(), 0.0f);
    std::fill(p.V.begin(), p.V.end(), 0.0f);
  }
  Steps = 0;
}

Status Adam::restore(const std::vector<const float *> &firstMoments,
                     const std::vector<const float *> &secondMoments,
                     int64_t steps) {
  if (firstMoments.size() != Params.size() ||
      secondMoments.size() != Params.size())
    return Status::error(
        fmt::format("adam: restore: {} and {} moments for {} parameters",
                    firstMoments.size(), secondMoments.size(), Params.size()));
  if (steps < 0)
    return Status::error(
        fmt::format("adam: restore: a negative step count ({})", steps));
  for (size_t i = 0; i < Params.size(); ++i)
    if (!firstMoments[i] || !secondMoments[i])
      return Status::error(fmt::format(
          "adam: restore: the moments of parameter {} are null", i));
  for (size_t i = 0; i < Params.size(); ++i) {
    Param &p = Params[i];
    std::copy(firstMoments[i], firstMoments[i] + p.M.size(), p.M.begin());
    std::copy(secondMoments[i], secondMoments[i] + p.V.size(), p.V.begin());
  }
  Steps = steps;
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Random numbers and dropout
//===----------------------------------------------------------------------===//

uint64_t SplitMix64::next() { return splitMix64Mix(State += kSplitMixGamma); }

//===----------------------------------------------------------------------===//
// Parameter initialisers
//===----------------------------------------------------------------------===//

Status gnnc::rt::initParam(std::string_view init, double arg,
                           const int64_t *shape, size_t rank, float *data,
                           uint64_t seed) {
  std::string name(init);
  enum class Kind { Glorot, Kaiming, Zeros, Ones, Normal, Uniform } kind;
  if (init == "glorot")
    kind = Kind::Glorot;
  else if (init == "kaiming")
    kind = Kind::Kaiming;
  else if (init == "zeros")
    kind = Kind::Zeros;
  else if (init == "ones")
    kind = Kind::Ones;
  else if (init == "normal")
    kind = Kind::Normal;
  else if (init == "uniform")
    kind = Kind::Uniform;
  else
    return Status::error(
        fmt::format("initParam: unknown initialiser '{}' (expected glorot, "
                    "kaiming, zeros, ones, normal or uniform)",
                    name));
  if ((kind == Kind::Normal || kind == Kind::Uniform) &&
      !isFiniteNonNegative(arg))
    return Status::error(fmt::format(
        "initParam: {}: the {} must be finite and >= 0, got {:f}", name,
        kind == Kind::Normal ? "standard deviation" : "bound", arg));
  if (rank > 0 && !shape)
    return Status::error(fmt::format("initParam: null shape of rank {}", rank));
  bool empty = false;
  for (size_t i = 0; i < rank; ++i) {
    if (shape[i] < 0)
      return Status::error(
          fmt::format("initParam: negative dimension {}", shape[i]));
    empty |= shape[i] == 0;
  }
  if (empty)
    return Status::success();
  int64_t count = 1;
  for (size_t i = 0; i < rank; ++i)
    if (__builtin_mul_overflow(count, shape[i], &count) ||
        static_cast<uint64_t>(count) > std::vector<float>().max_size())
      return Status::error("initParam: the element count overflows");
  if (!data)
    return Status::error(
        fmt::format("initParam: null data for {} elements", count));

  size_t n = static_cast<size_t>(count);
  switch (kind) {
  case Kind::Zeros:
  case Kind::Ones: {
    float value = kind == Kind::Ones ? 1.0f : 0.0f;
    for (size_t i = 0; i < n; ++i)
      data[i] = value;
    return Status::success();
  }
  case Kind::Normal: {
    SplitMix64 rng(seed);
    const double twoPi = 6.283185307179586476925286766559;
    for (size_t i = 0; i < n; i += 2) {
      double u1 = 1.0 - rng.nextDouble();
      double u2 = rng.nextDouble();
      double r = std::sqrt(-2.0 * std::log(u1));
      data[i] = static_cast<float>(arg * r * std::cos(twoPi * u2));
      if (i + 1 < n)
        data[i + 1] = static_cast<float>(arg * r * std::sin(twoPi * u2));
    }
    return Status::success();
  }
  case Kind::Glorot:
  case Kind::Kaiming:
  case Kind::Uniform: {
    double bound = arg;
    if (kind != Kind::Uniform) {
      // count > 0, so every dimension is positive.
      double fanOut = rank == 0 ? 1.0 : static_cast<double>(shape[rank - 1]);
      double fanIn = rank == 0   ? 1.0
                     : rank == 1 ? fanOut
                                 : static_cast<double>(shape[rank - 2]);
      bound = kind == Kind::Glorot ? std::sqrt(6.0 / (fanIn + fanOut))
                                   : std::sqrt(6.0 / fanIn);
    }
    SplitMix64 rng(seed);
    for (size_t i = 0; i < n; ++i)
      data[i] = static_cast<float>((2.0 * rng.nextDouble() - 1.0) * bound);
    return Status::success();
  }
  }
  return Status::success();
}

uint64_t gnnc::rt::paramSeed(uint64_t seed, std::string_view path) {
  return SplitMix64(seed ^ fnv1a64(path)).next();
}

//===----------------------------------------------------------------------===//
// Feature preprocessing
//===----------------------------------------------------------------------===//

Status gnnc::rt::normalizeRows(float *x, int64_t numRows, int64_t numCols) {
  if (numRows < 0 || numCols < 0)
    return Status::error(
        fmt::format("normalizeRows: negative size {}x{}", numRows, numCols));
  int64_t elements;
  if (__builtin_mul_overflow(numRows, numCols, &elements))
    return Status::error(fmt::format("normalizeRows: {}x{} overflows 64 bits",
                                     numRows, numCols));
  if (elements > 0 && !x)
    return Status::error("normalizeRows: null data");
  size_t cols = static_cast<size_t>(numCols);
  for (int64_t i = 0; i < numRows; ++i) {
    float *row = x + static_cast<size_t>(i) * cols;
    double sum = 0;
    for (size_t j = 0; j < cols; ++j)
      sum += row[j];
    if (sum == 0)
      continue;
    for (size_t j = 0; j < cols; ++j)
      row[j] = static_cast<float>(static_cast<double>(row[j]) / sum);
  }
  return Status::success();
}
