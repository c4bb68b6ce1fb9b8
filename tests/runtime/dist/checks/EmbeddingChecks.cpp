//===- EmbeddingChecks.cpp - Embeddings against their dense formulas ------===//
//
// Part of gnnc's tests. For every memory type, optimizer and cache policy an
// embedding trains for a few steps on a global list of (row, gradient row)
// entries, the same on every rank and split over the ranks differently in
// every step (all on one rank, round robin, hashed, contiguous chunks), with
// duplicate rows and rows that are never touched. After every step each rank
// gathers the whole table and state and compares them with a reference
// computed here without communication: the dense formulas of Embedding.h in
// double, applied to exactly the rows of the step with their gradients
// summed over duplicates.
//
//   * trained rows: |got - want| <= 1e-5 * max(1, |want|) for the table and
//     1e-5 * |want| + 1e-12 for the moments and accumulators (the library
//     rounds table and state to float32 after every step, the reference
//     keeps double); adam's step counts exactly;
//   * rows not trained in the step: table and state bit-identical to what
//     they were before it;
//   * gathers through the cache (SIEVE or LFU, a capacity small enough to
//     evict) bit-identical to the table, before and after training, which
//     checks the write-back rule.
//
// The gradients are multiples of 2^-8 in [-1, 1], so every partial sum of a
// row's gradients is exact in float64 and the trained table does not depend
// on how the entries were spread over the ranks: the final tables are mixed
// into the digest bit for bit.
//
//===----------------------------------------------------------------------===//

#include "DistChecks.h"

#include "gnnc/dist/Embedding.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <vector>

namespace gnnc::dist::checks {
namespace {

constexpr int64_t kRows = 29;
constexpr int64_t kDim = 3;
constexpr int kSteps = 4;
constexpr size_t kEntries = 24;
/// Rows kTouchable..kRows-1 are never trained.
constexpr int64_t kTouchable = kRows - 6;
constexpr float kLow = -0.5f, kHigh = 0.5f;
constexpr uint64_t kSeed = 1234;

uint64_t hash64(uint64_t a, uint64_t b) {
  uint64_t z = a * 0x9E3779B97F4A7C15ull + b + 0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

struct Entry {
  int64_t Row;
  float Grad[kDim];
};

/// The global entries of a step: a third of them on row 2 (duplicates),
/// the rest spread over the touchable rows.
std::vector<Entry> stepEntries(int step) {
  std::vector<Entry> out(kEntries);
  for (size_t k = 0; k < kEntries; ++k) {
    uint64_t h = hash64(static_cast<uint64_t>(step) + 1, k);
    out[k].Row = h % 3 == 0 ? 2 : static_cast<int64_t>((h >> 8) % kTouchable);
    for (int64_t c = 0; c < kDim; ++c) {
      uint64_t g = hash64(h, static_cast<uint64_t>(c)) % 513;
      out[k].Grad[c] = static_cast<float>(static_cast<int64_t>(g) - 256) / 256;
    }
  }
  return out;
}

/// The rank that passes entry k in `step`.
int entryRank(int step, size_t k, int ranks) {
  switch (step % 4) {
  case 0:
    return ranks - 1; // every entry on one rank, the others pass none
  case 1:
    return static_cast<int>(k % ranks);
  case 2:
    return static_cast<int>(hash64(99, k) % ranks);
  default:
    return static_cast<int>(k * ranks / kEntries);
  }
}

/// Rank 0 owns one row, rank 1 none, the others share the rest in blocks.
std::vector<int64_t> unevenCounts(int ranks) {
  if (ranks == 1)
    return {kRows};
  std::vector<int64_t> counts(ranks, 0);
  if (ranks == 2) {
    counts[0] = kRows;
    return counts;
  }
  counts[0] = 1;
  int64_t rest = kRows - 1, others = ranks - 2;
  for (int r = 2; r < ranks; ++r)
    counts[r] = rest / others + (r - 2 < rest % others ? 1 : 0);
  return counts;
}

/// The dense formulas of Embedding.h in double.
struct Reference {
  OptimizerOptions Opt;
  std::vector<double> W, M, V, S;
  std::vector<int64_t> Step;

  void init(const std::vector<float> &table) {
    W.assign(table.begin(), table.end());
    M.assign(W.size(), 0.0);
    V.assign(W.size(), 0.0);
    S.assign(W.size(), Opt.Kind == OptimizerKind::AdaGrad
                           ? static_cast<double>(Opt.InitialAccumulator)
                           : 0.0);
    Step.assign(kRows, 0);
  }

  void apply(const std::vector<Entry> &entries, std::vector<bool> &touched) {
    std::vector<double> sum(kRows * kDim, 0.0);
    touched.assign(kRows, false);
    for (const Entry &e : entries) {
      touched[e.Row] = true;
      for (int64_t c = 0; c < kDim; ++c)
        sum[e.Row * kDim + c] += e.Grad[c];
    }
    const double lr = Opt.LearningRate, wd = Opt.WeightDecay;
    const double b1 = Opt.Beta1, b2 = Opt.Beta2, alpha = Opt.Alpha;
    const double eps = Opt.Eps;
    for (int64_t r = 0; r < kRows; ++r) {
      if (!touched[r])
        continue;
      int64_t t = ++Step[r];
      for (int64_t c = 0; c < kDim; ++c) {
        size_t i = static_cast<size_t>(r * kDim + c);
        double g = sum[i] + wd * W[i];
        switch (Opt.Kind) {
        case OptimizerKind::Sgd:
          W[i] -= lr * g;
          break;
        case OptimizerKind::Adam: {
          M[i] = b1 * M[i] + (1 - b1) * g;
          V[i] = b2 * V[i] + (1 - b2) * g * g;
          double mHat = M[i] / (1 - std::pow(b1, static_cast<double>(t)));
          double vHat = V[i] / (1 - std::pow(b2, static_cast<double>(t)));
          W[i] -= lr * mHat / (std::sqrt(vHat) + eps);
          break;
        }
        case OptimizerKind::AdaGrad:
          S[i] += g * g;
          W[i] -= lr * g / (std::sqrt(S[i]) + eps);
          break;
        case OptimizerKind::RmsProp:
          S[i] = alpha * S[i] + (1 - alpha) * g * g;
          W[i] -= lr * g / (std::sqrt(S[i]) + eps);
          break;
        }
      }
    }
  }
};

/// Every rank fails when one does, with the message of the lowest failing
/// rank.
Status agree(Communicator &comm, const Status &local) {
  int64_t mine = local.ok() ? comm.size() : comm.rank(), first = 0;
  GNNC_TRY(comm.allReduce(&mine, &first, 1, DType::Int64, ReduceOp::Min));
  if (first >= comm.size())
    return Status::success();
  const int root = static_cast<int>(first);
  int64_t length = static_cast<int64_t>(local.message().size());
  GNNC_TRY(comm.broadcast(&length, 1, DType::Int64, root));
  std::vector<int64_t> words(static_cast<size_t>(length + 7) / 8 + 1, 0);
  if (comm.rank() == root)
    std::memcpy(words.data(), local.message().data(), local.message().size());
  GNNC_TRY(comm.broadcast(words.data(), words.size(), DType::Int64, root));
  if (!local.ok())
    return local;
  return Status::error(std::string(reinterpret_cast<const char *>(words.data()),
                                   static_cast<size_t>(length)));
}

template <class T> Status gatherAll(DistTensor &tensor, std::vector<T> &out) {
  std::vector<int64_t> all(static_cast<size_t>(tensor.rows()));
  for (int64_t r = 0; r < tensor.rows(); ++r)
    all[r] = r;
  out.assign(static_cast<size_t>(tensor.rows() * tensor.cols()), T());
  return tensor.gather(all.data(), all.size(), out.data());
}

bool sameBits(const void *a, const void *b, size_t bytes) {
  return std::memcmp(a, b, bytes) == 0;
}

/// Compares a float32 tensor with the reference: trained rows within the
/// tolerance, the others bit-identical to `before`.
Status compareRows(const std::string &what, const std::vector<float> &got,
                   const std::vector<double> &want,
                   const std::vector<float> &before,
                   const std::vector<bool> &touched, bool table) {
  for (int64_t r = 0; r < kRows; ++r) {
    for (int64_t c = 0; c < kDim; ++c) {
      size_t i = static_cast<size_t>(r * kDim + c);
      if (!touched[r]) {
        if (!sameBits(&got[i], &before[i], sizeof(float)))
          return Status::error(fmt::format(
              "{}: row {} column {} was not trained but changed from {} to {}",
              what, r, c, before[i], got[i]));
        continue;
      }
      double tol = table ? 1e-5 * std::max(1.0, std::fabs(want[i]))
                         : 1e-5 * std::fabs(want[i]) + 1e-12;
      if (!(std::fabs(got[i] - want[i]) <= tol))
        return Status::error(fmt::format(
            "{}: row {} column {}: {} but the dense formula gives {}", what, r,
            c, got[i], want[i]));
    }
  }
  return Status::success();
}

struct Case {
  MemoryType Type;
  OptimizerKind Kind;
  CachePolicy Policy;
};

OptimizerOptions optionsFor(OptimizerKind kind) {
  OptimizerOptions opt;
  opt.Kind = kind;
  switch (kind) {
  case OptimizerKind::Sgd:
    opt.LearningRate = 0.1f;
    opt.WeightDecay = 0.01f;
    break;
  case OptimizerKind::Adam:
    opt.LearningRate = 0.05f;
    opt.WeightDecay = 0.01f;
    break;
  case OptimizerKind::AdaGrad:
    opt.LearningRate = 0.1f;
    opt.InitialAccumulator = 0.1f;
    opt.Eps = 1e-6f;
    break;
  case OptimizerKind::RmsProp:
    opt.LearningRate = 0.01f;
    opt.Alpha = 0.9f;
    opt.Eps = 1e-6f;
    break;
  }
  return opt;
}

Status runCase(CheckContext &ctx, Communicator &comm, const Case &cs,
               std::vector<float> &firstInit) {
  const std::string name =
      fmt::format("emb-{}-{}-{}", memoryTypeName(cs.Type),
                  optimizerName(cs.Kind), cachePolicyName(cs.Policy));
  auto fail = [&](int step, const std::string &message) {
    std::string when = step < 0 ? "setup" : fmt::format("step {}", step);
    return Status::error(fmt::format("embedding check {} (rank {} of {}): "
                                     "{}: {}",
                                     name, comm.rank(), comm.size(), when,
                                     message));
  };
  TensorOptions tensor;
  tensor.Type = cs.Type;
  tensor.Name = name;
  if (cs.Type != MemoryType::Continuous)
    tensor.RowsPerRank = unevenCounts(comm.size());
  Reference ref;
  ref.Opt = optionsFor(cs.Kind);
  CacheOptions cache;
  cache.CapacityRows = 4;
  cache.Policy = cs.Policy;

  std::unique_ptr<Embedding> emb;
  GNNC_TRY(Embedding::create(comm, kRows, kDim, tensor, ref.Opt, cache, emb));
  int wantStates = cs.Kind == OptimizerKind::Sgd    ? 0
                   : cs.Kind == OptimizerKind::Adam ? 3
                                                    : 1;
  if (emb->numStates() != wantStates || !emb->cache() || emb->rows() != kRows ||
      emb->dim() != kDim)
    return fail(-1,
                fmt::format("{} states, {} x {}, cache {}", emb->numStates(),
                            emb->rows(), emb->dim(), emb->cache() != nullptr));
  GNNC_TRY(emb->initUniform(kLow, kHigh, kSeed));

  std::vector<float> table;
  GNNC_TRY(gatherAll(emb->table(), table));
  for (size_t i = 0; i < table.size(); ++i)
    if (!(table[i] >= kLow && table[i] < kHigh))
      return fail(-1, fmt::format("initial value {} at {} outside [{}, {})",
                                  table[i], i, kLow, kHigh));
  if (firstInit.empty())
    firstInit = table;
  else if (!sameBits(firstInit.data(), table.data(),
                     table.size() * sizeof(float)))
    return fail(-1, "initUniform differs from the first case's table");
  ref.init(table);

  // The state tensors as gathered after the last step.
  std::vector<float> m, v, s;
  std::vector<int64_t> steps(kRows, 0);
  if (cs.Kind == OptimizerKind::Adam) {
    m.assign(table.size(), 0.0f);
    v.assign(table.size(), 0.0f);
  } else if (cs.Kind != OptimizerKind::Sgd) {
    GNNC_TRY(gatherAll(emb->state(0), s));
    for (float x : s)
      if (x != static_cast<float>(ref.S[0]))
        return fail(
            -1, fmt::format("accumulator starts at {}, not {}", x, ref.S[0]));
  }

  for (int step = 0; step < kSteps; ++step) {
    std::vector<Entry> entries = stepEntries(step);
    std::vector<int64_t> indices;
    std::vector<float> grads;
    for (size_t k = 0; k < entries.size(); ++k) {
      if (entryRank(step, k, comm.size()) != comm.rank())
        continue;
      indices.push_back(entries[k].Row);
      grads.insert(grads.end(), entries[k].Grad, entries[k].Grad + kDim);
    }

    // The forward gather of this rank's rows, through the cache.
    std::vector<float> rows(indices.size() * kDim);
    GNNC_TRY(emb->gather(indices.data(), indices.size(), rows.data()));
    Status local;
    for (size_t k = 0; k < indices.size() && local.ok(); ++k)
      if (!sameBits(&rows[k * kDim], &table[indices[k] * kDim],
                    kDim * sizeof(float)))
        local = fail(step, fmt::format("gather of row {} before training "
                                       "differs from the table",
                                       indices[k]));
    GNNC_TRY(agree(comm, local));

    GNNC_TRY(emb->applyGradients(indices.data(), indices.size(), grads.data()));
    std::vector<bool> touched;
    ref.apply(entries, touched);

    std::vector<float> before = table;
    GNNC_TRY(gatherAll(emb->table(), table));
    Status cmp = compareRows("table", table, ref.W, before, touched, true);
    if (!cmp.ok())
      return fail(step, cmp.message());
    if (cs.Kind == OptimizerKind::Adam) {
      std::vector<float> m0 = m, v0 = v;
      std::vector<int64_t> steps0 = steps;
      GNNC_TRY(gatherAll(emb->state(0), m));
      GNNC_TRY(gatherAll(emb->state(1), v));
      GNNC_TRY(gatherAll(emb->state(2), steps));
      for (const Status &st :
           {compareRows("adam m", m, ref.M, m0, touched, false),
            compareRows("adam v", v, ref.V, v0, touched, false)})
        if (!st.ok())
          return fail(step, st.message());
      for (int64_t r = 0; r < kRows; ++r)
        if (steps[r] != ref.Step[r] || (!touched[r] && steps[r] != steps0[r]))
          return fail(step, fmt::format("adam step of row {} is {}, not {}", r,
                                        steps[r], ref.Step[r]));
    } else if (cs.Kind != OptimizerKind::Sgd) {
      std::vector<float> s0 = s;
      GNNC_TRY(gatherAll(emb->state(0), s));
      Status st = compareRows("accumulator", s, ref.S, s0, touched, false);
      if (!st.ok())
        return fail(step, st.message());
    }

    // Every row, in a rank-dependent order with duplicates, through the
    // cache: trained rows must not come from stale cached copies.
    std::vector<int64_t> all;
    for (int64_t r = 0; r < kRows; ++r)
      all.push_back((r * 7 + comm.rank()) % kRows);
    all.insert(all.end(), indices.begin(), indices.end());
    std::vector<float> got(all.size() * kDim);
    GNNC_TRY(emb->gather(all.data(), all.size(), got.data()));
    for (size_t k = 0; k < all.size() && local.ok(); ++k)
      if (!sameBits(&got[k * kDim], &table[all[k] * kDim],
                    kDim * sizeof(float)))
        local = fail(step, fmt::format("gather of row {} after training "
                                       "differs from the table",
                                       all[k]));
    const CacheStats &st = emb->cache()->stats();
    if (local.ok() &&
        static_cast<int64_t>(st.Inserts - st.Evictions - st.Invalidations) !=
            emb->cache()->size())
      local = fail(step, fmt::format("cache holds {} rows after {} inserts, "
                                     "{} evictions, {} invalidations",
                                     emb->cache()->size(), st.Inserts,
                                     st.Evictions, st.Invalidations));
    if (local.ok() && emb->table().localRows() < kRows &&
        (st.Lookups == 0 || st.Hits > st.Lookups ||
         emb->cache()->size() > cache.CapacityRows))
      local =
          fail(step, fmt::format("cache statistics: {} lookups, {} hits, "
                                 "{} rows",
                                 st.Lookups, st.Hits, emb->cache()->size()));
    GNNC_TRY(agree(comm, local));
  }
  ctx.mix(table.data(), table.size() * sizeof(float));
  return Status::success();
}

} // namespace

Status checkEmbeddings(CheckContext &ctx) {
  Communicator &world = ctx.Comm;
  // Continuous and chunked tables need one node: across nodes they run on
  // each node's communicator (every node trains the same table).
  std::unique_ptr<Communicator> node;
  if (world.numNodes() > 1)
    GNNC_TRY(world.splitByNode(node));
  std::vector<float> firstInit;
  for (MemoryType type :
       {MemoryType::Continuous, MemoryType::Chunked, MemoryType::Distributed}) {
    Communicator &comm =
        type != MemoryType::Distributed && node ? *node : world;
    for (OptimizerKind kind : {OptimizerKind::Sgd, OptimizerKind::Adam,
                               OptimizerKind::AdaGrad, OptimizerKind::RmsProp})
      for (CachePolicy policy : {CachePolicy::Sieve, CachePolicy::Lfu})
        GNNC_TRY(runCase(ctx, comm, {type, kind, policy}, firstInit));
  }
  return Status::success();
}

} // namespace gnnc::dist::checks
