//===- Embedding.h - Trainable distributed node embeddings ------*- C++ -*-===//
//
// Part of gnnc. A float32 table of `rows` x `dim` trainable embeddings
// (what featureless graphs learn instead of input features), stored in a
// DistTensor and updated sparsely: a training step gathers the rows of the
// vertices it touches, and applyGradients hands back one gradient row per
// index; the optimizer then updates only those rows, with its state
// (moments, accumulators, per-row step counts) kept in DistTensors of the
// same partition beside the table.
//
// Sparse optimizers (g: the row's gradient summed over duplicate indices and
// ranks, wd: weight decay added as g += wd * w; all element-wise):
//
//   sgd       w -= lr * g
//   adam      lazy, as WholeGraph: t = ++step[row]; m = b1 m + (1-b1) g;
//             v = b2 v + (1-b2) g^2; w -= lr * (m / (1-b1^t)) /
//             (sqrt(v / (1-b2^t)) + eps). Rows not touched keep m, v, t.
//   adagrad   s += g^2; w -= lr * g / (sqrt(s) + eps)
//   rmsprop   s = alpha s + (1-alpha) g^2; w -= lr * g / (sqrt(s) + eps)
//
// Gradient rows for the same index from several ranks (or one rank) are
// summed in float64 before the update, so the table after a step does not
// depend on how the indices were spread over ranks, up to the float64
// rounding of that sum.
//
// The cache keeps rows this rank does not own (a distributed table's remote
// rows) on the gather path, with SIEVE eviction (Zhang et al., NSDI'24, as
// in GraphBolt) or LFU (as in WholeGraph), and counts hits. Write-back
// rule: trained rows are written through to their owner within
// applyGradients, and every rank drops its cached copies of the rows
// trained in that step, so the next gather reads the new values.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_DIST_EMBEDDING_H
#define GNNC_DIST_EMBEDDING_H

#include "gnnc/dist/DistTensor.h"

#include <cstdint>
#include <memory>
#include <string_view>

namespace gnnc::dist {

enum class OptimizerKind { Sgd, Adam, AdaGrad, RmsProp };
/// "sgd", "adam", "adagrad", "rmsprop".
const char *optimizerName(OptimizerKind kind);
bool parseOptimizer(std::string_view name, OptimizerKind &out);

struct OptimizerOptions {
  OptimizerKind Kind = OptimizerKind::Sgd;
  float LearningRate = 0.01f;
  float WeightDecay = 0.0f;
  float Beta1 = 0.9f, Beta2 = 0.999f; ///< adam
  float Alpha = 0.99f;                ///< rmsprop
  float Eps = 1e-8f;                  ///< adam, adagrad, rmsprop
  float InitialAccumulator = 0.0f;    ///< adagrad: s starts here
};

enum class CachePolicy { Sieve, Lfu };
const char *cachePolicyName(CachePolicy policy);

struct CacheOptions {
  /// Rows the cache holds on each rank; 0 turns the cache off.
  int64_t CapacityRows = 0;
  CachePolicy Policy = CachePolicy::Sieve;
};

/// What the cache saw since creation (or resetStats).
struct CacheStats {
  uint64_t Lookups = 0;       ///< rows asked for that this rank does not own
  uint64_t Hits = 0;          ///< of those, found in the cache
  uint64_t Inserts = 0;       ///< rows put in the cache
  uint64_t Evictions = 0;     ///< rows the policy pushed out
  uint64_t Invalidations = 0; ///< cached rows dropped because they trained
  double hitRate() const {
    return Lookups == 0 ? 0.0 : static_cast<double>(Hits) / Lookups;
  }
};

/// A row cache with a fixed capacity and an eviction policy, keyed by global
/// row. Used by Embedding; usable on its own (features).
class RowCache {
public:
  virtual ~RowCache();
  /// Copies the cached row into `out` and marks it used; false on a miss.
  /// Counts a lookup.
  virtual bool lookup(int64_t row, void *out) = 0;
  /// Inserts (or refreshes) a row, evicting one when full.
  virtual void insert(int64_t row, const void *data) = 0;
  /// Drops a row if cached.
  virtual void invalidate(int64_t row) = 0;
  virtual int64_t size() const = 0;
  int64_t capacity() const { return Capacity; }
  const CacheStats &stats() const { return Stats; }
  void resetStats() { Stats = {}; }

protected:
  RowCache(int64_t capacity, size_t rowBytes)
      : Capacity(capacity), RowBytes(rowBytes) {}
  int64_t Capacity;
  size_t RowBytes;
  CacheStats Stats;
};

/// A cache of `capacity` rows of `rowBytes` bytes each.
std::unique_ptr<RowCache> createRowCache(CachePolicy policy, int64_t capacity,
                                         size_t rowBytes);

class Embedding {
public:
  /// A zeroed rows x dim float32 table in `tensor` layout with the state
  /// `optimizer` needs. Collective.
  static Status create(Communicator &comm, int64_t rows, int64_t dim,
                       const TensorOptions &tensor,
                       const OptimizerOptions &optimizer,
                       const CacheOptions &cache,
                       std::unique_ptr<Embedding> &out);
  ~Embedding();

  int64_t rows() const;
  int64_t dim() const;
  DistTensor &table() { return *Table; }
  const OptimizerOptions &optimizer() const { return Optimizer; }

  /// Fills the table with values uniform in [low, high) drawn from a
  /// counter-based generator keyed by (seed, row, column), so the table is
  /// the same for any number of ranks. Collective.
  Status initUniform(float low, float high, uint64_t seed);

  /// Rows `indices[0..n)` into out (n * dim floats), through the cache.
  /// Collective.
  Status gather(const int64_t *indices, size_t n, float *out);
  /// One optimizer step on the rows in `indices` with gradient rows `grads`
  /// (n * dim floats; duplicates are summed). Collective.
  Status applyGradients(const int64_t *indices, size_t n, const float *grads);

  /// The optimizer state beside the table: adam: m, v (rows x dim) and
  /// step (rows, int64); adagrad and rmsprop: s; sgd: none.
  int numStates() const { return static_cast<int>(States.size()); }
  DistTensor &state(int i) { return *States[i]; }

  /// This rank's cache; null when the cache is off.
  RowCache *cache() { return Cache.get(); }

private:
  Embedding() = default;
  std::unique_ptr<DistTensor> Table;
  std::vector<std::unique_ptr<DistTensor>> States;
  OptimizerOptions Optimizer;
  std::unique_ptr<RowCache> Cache;
};

} // namespace gnnc::dist

#endif // GNNC_DIST_EMBEDDING_H
