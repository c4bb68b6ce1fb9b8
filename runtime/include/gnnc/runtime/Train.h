//===- Train.h - Helpers for training node classifiers ----------*- C++ -*-===//
//
// Part of gnnc. What a training loop needs around a compiled model: the
// masked softmax cross-entropy loss and its gradient, masked accuracy, the
// Adam optimiser (torch.optim.Adam semantics), the seeded dropout mask of
// the compiler, the parameter initialisers named by the language, and the
// row normalisation of features used by the GCN paper.
//
// Tensors are float32, dense and row-major, passed as a pointer and sizes;
// the caller owns them. Nothing here allocates per call beyond small
// scratch, uses threads or throws. Masks are one byte per row, nonzero for a
// selected row (the layout of Dataset::TrainMask & co.); a null mask
// selects every row.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_RUNTIME_TRAIN_H
#define GNNC_RUNTIME_TRAIN_H

#include "gnnc/runtime/Random.h"
#include "gnnc/runtime/Status.h"

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace gnnc::rt {

//===----------------------------------------------------------------------===//
// Loss and accuracy
//===----------------------------------------------------------------------===//

/// Mean softmax cross-entropy over the rows of `logits` ([numRows,
/// numClasses]) selected by `mask`, against `labels` ([numRows]; only the
/// labels of selected rows are read, and they must lie in [0, numClasses)).
/// Each row is computed stably as logsumexp(row) - row[label], in double.
/// When `gradLogits` ([numRows, numClasses], not aliasing `logits`) is not
/// null it receives dloss/dlogits: (softmax(row) - onehot(label)) / count on
/// selected rows and 0 on the others. Errors: bad sizes, a null pointer, a
/// label out of range, or a mask selecting no row. `loss` and `gradLogits`
/// are only written on success.
Status softmaxCrossEntropy(const float *logits, int64_t numRows,
                           int64_t numClasses, const int64_t *labels,
                           const uint8_t *mask, double &loss,
                           float *gradLogits = nullptr);

/// Fraction of the rows selected by `mask` whose argmax (the first maximum
/// on ties) equals the label. Same arguments and errors as
/// softmaxCrossEntropy.
Status maskedAccuracy(const float *logits, int64_t numRows, int64_t numClasses,
                      const int64_t *labels, const uint8_t *mask,
                      double &accuracy);

//===----------------------------------------------------------------------===//
// Adam
//===----------------------------------------------------------------------===//

/// Hyper-parameters of Adam; the defaults are torch.optim.Adam's.
struct AdamOptions {
  double LearningRate = 1e-3;
  double Beta1 = 0.9;
  double Beta2 = 0.999;
  double Eps = 1e-8;
  /// L2 penalty added to the gradient (g += WeightDecay * p), as in
  /// torch.optim.Adam; not decoupled (AdamW).
  double WeightDecay = 0.0;
};

/// Adam (Kingma and Ba 2015) over a list of float32 parameter tensors owned
/// by the caller, with the update of torch.optim.Adam (amsgrad off): at step
/// t, for every element,
///
///   g = grad + WeightDecay * p
///   m = Beta1 * m + (1 - Beta1) * g
///   v = Beta2 * v + (1 - Beta2) * g * g
///   p = p - LearningRate / (1 - Beta1^t) * m / (sqrt(v) / sqrt(1 - Beta2^t)
///                                               + Eps)
///
/// The moments m and v start at zero and are stored as float32; each update
/// is computed in double and rounded.
class Adam {
public:
  explicit Adam(const AdamOptions &options = AdamOptions());

  /// Registers a parameter tensor of `numElements` floats at `data` (not
  /// copied: step() updates it in place) and gives it zeroed moments.
  Status addParam(float *data, int64_t numElements);

  /// One optimisation step: `grads[i]` is the gradient of parameter i (in
  /// addParam order, same size). Checks the options, the number of
  /// gradients and that none is null before changing anything.
  Status step(const std::vector<const float *> &grads);

  const AdamOptions &options() const { return Options; }
  /// Changes the learning rate for the following steps (e.g. a schedule).
  void setLearningRate(double learningRate) {
    Options.LearningRate = learningRate;
  }
  size_t numParams() const { return Params.size(); }
  /// Number of successful step() calls since construction or reset().
  int64_t numSteps() const { return Steps; }
  /// Zeroes the moments and the step count; keeps the parameters.
  void reset();

  /// The moments of parameter `i` (i < numParams()).
  const std::vector<float> &firstMoment(size_t i) const { return Params[i].M; }
  const std::vector<float> &secondMoment(size_t i) const { return Params[i].V; }
  /// Restores a saved state (a checkpoint): the moments of every parameter
  /// (numParams() pointers each, of the registered sizes) and the step
  /// count, so the next step() continues as the saved optimiser would.
  Status restore(const std::vector<const float *> &firstMoments,
                 const std::vector<const float *> &secondMoments,
                 int64_t steps);

private:
  struct Param {
    float *Data;
    std::vector<float> M, V;
  };
  AdamOptions Options;
  std::vector<Param> Params;
  int64_t Steps = 0;
};

//===----------------------------------------------------------------------===//
// Random numbers and dropout
//===----------------------------------------------------------------------===//

/// The splitmix64 generator (Steele, Lea and Flood, OOPSLA 2014), as in
/// Vigna's reference code: each next() adds 0x9E3779B97F4A7C15 to the state
/// and returns a mix of it. From state 0 the first outputs are
/// 0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F.
class SplitMix64 {
public:
  explicit SplitMix64(uint64_t state) : State(state) {}
  uint64_t next();
  /// The top 53 bits of next() as a double in [0, 1).
  double nextDouble() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  uint64_t state() const { return State; }

private:
  uint64_t State;
};

// The dropout mask (dropoutKeeps, dropoutScale) is in Random.h: the first
// nextDouble() of SplitMix64(seed * 0x9E3779B97F4A7C15 + index) is >= p.

//===----------------------------------------------------------------------===//
// Parameter initialisers
//===----------------------------------------------------------------------===//

/// Fills the float32 tensor `data` of shape `shape[0..rank)` with the
/// initialiser `init` of the language (docs/language.md, section 8.2):
///
///   glorot      U(-s, s), s = sqrt(6 / (fan_in + fan_out))
///   kaiming     U(-s, s), s = sqrt(6 / fan_in)
///   zeros, ones the constant
///   normal      N(0, arg^2): `arg` is the standard deviation
///   uniform     U(-arg, arg): `arg` is the bound
///
/// fan_out is the last dimension and fan_in the one before it; for a 1-D
/// tensor both are its length, for a scalar both are 1. `arg` is ignored
/// except by normal and uniform, where it must be finite and >= 0.
///
/// The random initialisers draw from SplitMix64(seed), one draw per
/// element in row-major order for the uniform ones (u = nextDouble(), value
/// (2u - 1) * s in double, rounded to float) and one pair of draws per two
/// elements for normal (Box-Muller: u1 = 1 - nextDouble(), u2 =
/// nextDouble(), values r cos(2 pi u2) and r sin(2 pi u2) with r =
/// sqrt(-2 ln u1)). So the same seed gives the same values on every
/// platform with IEEE doubles and a correctly rounded sqrt (log, cos and sin
/// come from the C library). Errors: an unknown name, a bad argument, a
/// negative dimension, a null pointer with a non-empty shape.
Status initParam(std::string_view init, double arg, const int64_t *shape,
                 size_t rank, float *data, uint64_t seed);

/// A seed for one parameter derived from a model-wide seed and the
/// parameter's path ("conv1.W"), so that equal shapes still get different
/// values: the first next() of SplitMix64(seed ^ fnv1a64(path)).
uint64_t paramSeed(uint64_t seed, std::string_view path);

//===----------------------------------------------------------------------===//
// Feature preprocessing
//===----------------------------------------------------------------------===//

/// Divides each row of `x` ([numRows, numCols]) by its sum (accumulated in
/// double), as in the GCN paper's preprocessing; a row summing to 0 is left
/// unchanged.
Status normalizeRows(float *x, int64_t numRows, int64_t numCols);

} // namespace gnnc::rt

#endif // GNNC_RUNTIME_TRAIN_H
