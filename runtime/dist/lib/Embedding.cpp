//===- Embedding.cpp - Trainable distributed embeddings -------------------===//
//
// Part of gnnc. The table and the optimizer state are DistTensors of one
// partition and memory type; every row is updated by the rank that owns it,
// in its local rows, so the update is the same code for every memory type.
//
// A step (applyGradients) runs in four collective phases:
//   1. every rank checks its indices and gradients, and the ranks agree on
//      the first problem (by rank, then position), so every rank fails with
//      the same message;
//   2. every rank sums its gradient rows per distinct index in float64, in
//      the order of its positions;
//   3. an all-to-all-v routes (row, float64 sum) pairs to the owners, which
//      add the contributions of a row in rank order, apply the optimizer to
//      the row and its state, and write the result to their local rows;
//   4. an all-gather-v of the trained rows lets every rank drop its cached
//      copies; it is also the point after which every rank sees the new
//      rows of a shared (continuous or chunked) table.
//
// The gather path reads owned rows in place, looks remote rows up in the
// cache (each distinct remote row of a call is one lookup), fetches the
// misses with one collective DistTensor::gather (every rank takes part,
// possibly with no rows) and inserts what it fetched. An out-of-range index
// on any rank fails the call on every rank, as in applyGradients.
//
// initUniform rewrites every row, so it drops every cached row (counted as
// invalidations).
//
//===----------------------------------------------------------------------===//

#include "gnnc/dist/Embedding.h"

#include "gnnc/runtime/Random.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <unordered_map>

using namespace gnnc::dist;

const char *gnnc::dist::optimizerName(OptimizerKind kind) {
  switch (kind) {
  case OptimizerKind::Sgd:
    return "sgd";
  case OptimizerKind::Adam:
    return "adam";
  case OptimizerKind::AdaGrad:
    return "adagrad";
  case OptimizerKind::RmsProp:
    return "rmsprop";
  }
  return "unknown";
}

bool gnnc::dist::parseOptimizer(std::string_view name, OptimizerKind &out) {
  for (OptimizerKind kind : {OptimizerKind::Sgd, OptimizerKind::Adam,
                             OptimizerKind::AdaGrad, OptimizerKind::RmsProp}) {
    if (name == optimizerName(kind)) {
      out = kind;
      return true;
    }
  }
  return false;
}

const char *gnnc::dist::cachePolicyName(CachePolicy policy) {
  switch (policy) {
  case CachePolicy::Sieve:
    return "sieve";
  case CachePolicy::Lfu:
    return "lfu";
  }
  return "unknown";
}

namespace {

/// A problem one rank found in its own arguments of a collective call.
struct Problem {
  enum Kind : int64_t {
    None = 0,
    NullBuffer, ///< n > 0 with a null pointer
    OutOfRange, ///< Index at Position is outside [0, rows)
    NotFinite,  ///< gradient of row Index at Position, Column is Value
  };
  int64_t What = None;
  int64_t Index = 0, Position = 0, Column = 0;
  double Value = 0;
};

/// Makes every rank hold the problem of the lowest rank that found one;
/// `rank` becomes that rank, or -1 when no rank found any. Costs one
/// all-reduce, and a broadcast when there is a problem.
Status agreeOnProblem(Communicator &comm, Problem &problem, int &rank) {
  int64_t mine = problem.What != Problem::None ? comm.rank() : comm.size();
  int64_t first = 0;
  GNNC_TRY(comm.allReduce(&mine, &first, 1, DType::Int64, ReduceOp::Min));
  if (first >= comm.size()) {
    rank = -1;
    return Status::success();
  }
  int64_t packed[5] = {problem.What, problem.Index, problem.Position,
                       problem.Column, 0};
  std::memcpy(&packed[4], &problem.Value, sizeof(double));
  GNNC_TRY(comm.broadcast(packed, 5, DType::Int64, static_cast<int>(first)));
  problem.What = packed[0];
  problem.Index = packed[1];
  problem.Position = packed[2];
  problem.Column = packed[3];
  std::memcpy(&problem.Value, &packed[4], sizeof(double));
  rank = static_cast<int>(first);
  return Status::success();
}

/// The message of an agreed problem, the same on every rank.
Status problemError(const std::string &name, const char *what,
                    const Problem &problem, int rank, int64_t rows) {
  std::string message;
  switch (problem.What) {
  case Problem::NullBuffer:
    message = fmt::format("rank {} passes {} rows with a null buffer", rank,
                          problem.Index);
    break;
  case Problem::OutOfRange:
    message = fmt::format("index {} at position {} on rank {} is out of range "
                          "[0, {})",
                          problem.Index, problem.Position, rank, rows);
    break;
  default:
    message = fmt::format("gradient of row {} (position {} on rank {}, "
                          "column {}) is not finite ({})",
                          problem.Index, problem.Position, rank, problem.Column,
                          problem.Value);
    break;
  }
  return Status::error(fmt::format("{}: {}: {}", name, what, message));
}

/// The first out-of-range index of `indices[0..n)`, or a null buffer.
Problem findBadIndex(const int64_t *indices, size_t n, bool buffersPresent,
                     int64_t rows) {
  Problem problem;
  if (n > 0 && !buffersPresent) {
    problem.What = Problem::NullBuffer;
    problem.Index = static_cast<int64_t>(n);
    return problem;
  }
  for (size_t i = 0; i < n; ++i) {
    if (indices[i] < 0 || indices[i] >= rows) {
      problem.What = Problem::OutOfRange;
      problem.Index = indices[i];
      problem.Position = static_cast<int64_t>(i);
      return problem;
    }
  }
  return problem;
}

/// The uniform [0, 1) number behind element (row, col) of initUniform: the
/// top 24 bits of a splitmix64 mix keyed by the seed, the row and the
/// column, so every element is a float in [0, 1) without rounding.
double uniformAt(uint64_t seed, int64_t row, int64_t col) {
  uint64_t h = gnnc::rt::splitMix64Mix(gnnc::rt::fmix64(seed) +
                                       static_cast<uint64_t>(row) *
                                           gnnc::rt::kSplitMixGamma);
  h = gnnc::rt::splitMix64Mix(h + (static_cast<uint64_t>(col) + 1) *
                                      gnnc::rt::kSplitMixGamma);
  return static_cast<double>(h >> 40) * 0x1.0p-24;
}

Status checkPositive(const char *what, float value) {
  if (std::isfinite(value) && value > 0)
    return Status::success();
  return Status::error(
      fmt::format("{} {} must be positive and finite", what, value));
}

Status checkNonNegative(const char *what, float value) {
  if (std::isfinite(value) && value >= 0)
    return Status::success();
  return Status::error(
      fmt::format("{} {} must be non-negative and finite", what, value));
}

Status checkUnitInterval(const char *what, float value) {
  if (value >= 0 && value < 1)
    return Status::success();
  return Status::error(fmt::format("{} {} must be in [0, 1)", what, value));
}

Status checkOptimizer(const OptimizerOptions &opt) {
  switch (opt.Kind) {
  case OptimizerKind::Sgd:
  case OptimizerKind::Adam:
  case OptimizerKind::AdaGrad:
  case OptimizerKind::RmsProp:
    break;
  default:
    return Status::error(
        fmt::format("unknown optimizer kind {}", static_cast<int>(opt.Kind)));
  }
  GNNC_TRY(checkPositive("learning rate", opt.LearningRate));
  GNNC_TRY(checkNonNegative("weight decay", opt.WeightDecay));
  if (opt.Kind == OptimizerKind::Adam) {
    GNNC_TRY(checkUnitInterval("beta1", opt.Beta1));
    GNNC_TRY(checkUnitInterval("beta2", opt.Beta2));
  }
  if (opt.Kind == OptimizerKind::RmsProp)
    GNNC_TRY(checkUnitInterval("alpha", opt.Alpha));
  if (opt.Kind != OptimizerKind::Sgd)
    GNNC_TRY(checkPositive("eps", opt.Eps));
  if (opt.Kind == OptimizerKind::AdaGrad)
    GNNC_TRY(checkNonNegative("initial accumulator", opt.InitialAccumulator));
  return Status::success();
}

} // namespace

Embedding::~Embedding() = default;

int64_t Embedding::rows() const { return Table->rows(); }
int64_t Embedding::dim() const { return Table->cols(); }

Status Embedding::create(Communicator &comm, int64_t rows, int64_t dim,
                         const TensorOptions &tensor,
                         const OptimizerOptions &optimizer,
                         const CacheOptions &cache,
                         std::unique_ptr<Embedding> &out) {
  const std::string &name = tensor.Name;
  auto fail = [&](const std::string &message) {
    return Status::error(fmt::format("{}: create: {}", name, message));
  };
  if (rows <= 0)
    return fail(fmt::format("row count {} must be positive", rows));
  if (dim <= 0)
    return fail(fmt::format("dimension {} must be positive", dim));
  if (tensor.Location != MemoryLocation::Host)
    return fail(fmt::format("{} memory is not supported; embeddings live in "
                            "host memory",
                            memoryLocationName(tensor.Location)));
  Status valid = checkOptimizer(optimizer);
  if (!valid.ok())
    return fail(
        fmt::format("{}: {}", optimizerName(optimizer.Kind), valid.message()));
  if (cache.CapacityRows < 0)
    return fail(fmt::format("cache capacity {} must be non-negative",
                            cache.CapacityRows));
  if (cache.Policy != CachePolicy::Sieve && cache.Policy != CachePolicy::Lfu)
    return fail(
        fmt::format("unknown cache policy {}", static_cast<int>(cache.Policy)));

  std::unique_ptr<Embedding> e(new Embedding());
  e->Optimizer = optimizer;
  GNNC_TRY(createTensor(comm, rows, dim, DType::Float32, tensor, e->Table));
  auto addState = [&](const char *suffix, int64_t cols, DType dtype) {
    TensorOptions options = tensor;
    options.Name = name + "." + suffix;
    std::unique_ptr<DistTensor> state;
    Status status = createTensor(comm, rows, cols, dtype, options, state);
    if (status.ok())
      e->States.push_back(std::move(state));
    return status;
  };
  switch (optimizer.Kind) {
  case OptimizerKind::Sgd:
    break;
  case OptimizerKind::Adam:
    GNNC_TRY(addState("m", dim, DType::Float32));
    GNNC_TRY(addState("v", dim, DType::Float32));
    GNNC_TRY(addState("step", 0, DType::Int64));
    break;
  case OptimizerKind::AdaGrad:
  case OptimizerKind::RmsProp:
    GNNC_TRY(addState("s", dim, DType::Float32));
    break;
  }
  if (optimizer.Kind == OptimizerKind::AdaGrad &&
      optimizer.InitialAccumulator != 0 && e->States[0]->localRows() > 0) {
    DistTensor &s = *e->States[0];
    float *data = static_cast<float *>(s.localData());
    std::fill(data, data + s.localRows() * dim, optimizer.InitialAccumulator);
  }
  // Every rank's state is initialised before any rank reads a shared row.
  GNNC_TRY(comm.barrier());
  if (cache.CapacityRows > 0)
    e->Cache = createRowCache(cache.Policy, cache.CapacityRows,
                              static_cast<size_t>(dim) * sizeof(float));
  out = std::move(e);
  return Status::success();
}

Status Embedding::initUniform(float low, float high, uint64_t seed) {
  if (!(std::isfinite(low) && std::isfinite(high) && low < high))
    return Status::error(
        fmt::format("{}: init uniform: range [{}, {}) must be finite and "
                    "non-empty",
                    Table->name(), low, high));
  const int64_t d = dim(), begin = Table->localRowBegin();
  float *data = static_cast<float *>(Table->localData());
  const double width = static_cast<double>(high) - low;
  const float below = std::nextafter(high, low);
  for (int64_t r = 0; r < Table->localRows(); ++r) {
    for (int64_t c = 0; c < d; ++c) {
      float v = static_cast<float>(low + width * uniformAt(seed, begin + r, c));
      data[r * d + c] = v < high ? v : below;
    }
  }
  // Cached rows are stale now: drop them all.
  if (Cache) {
    for (int64_t row = 0; row < rows() && Cache->size() > 0; ++row)
      Cache->invalidate(row);
  }
  return Table->comm().barrier();
}

Status Embedding::gather(const int64_t *indices, size_t n, float *out) {
  Communicator &comm = Table->comm();
  Problem problem = findBadIndex(indices, n, indices && out, Table->rows());
  int badRank = -1;
  GNNC_TRY(agreeOnProblem(comm, problem, badRank));
  if (badRank >= 0)
    return problemError(Table->name(), "gather", problem, badRank, rows());

  const int64_t d = dim();
  const size_t rowFloats = static_cast<size_t>(d);
  const int64_t begin = Table->localRowBegin();
  const int64_t end = begin + Table->localRows();
  const float *local = static_cast<const float *>(Table->localData());

  // Remote rows seen in this call: >= 0, the position whose output already
  // holds the row (a cache hit); < 0, -(k + 1) for fetch[k].
  std::unordered_map<int64_t, int64_t> seen;
  std::vector<int64_t> fetch;
  std::vector<std::pair<size_t, size_t>> fills; ///< (position, fetch slot)
  for (size_t i = 0; i < n; ++i) {
    int64_t row = indices[i];
    float *dst = out + i * rowFloats;
    if (row >= begin && row < end) {
      std::memcpy(dst, local + (row - begin) * d, rowFloats * sizeof(float));
      continue;
    }
    auto [it, first] = seen.emplace(row, 0);
    if (first) {
      if (Cache && Cache->lookup(row, dst)) {
        it->second = static_cast<int64_t>(i);
        continue;
      }
      it->second = -static_cast<int64_t>(fetch.size()) - 1;
      fills.emplace_back(i, fetch.size());
      fetch.push_back(row);
    } else if (it->second >= 0) {
      std::memcpy(dst, out + static_cast<size_t>(it->second) * rowFloats,
                  rowFloats * sizeof(float));
    } else {
      fills.emplace_back(i, static_cast<size_t>(-it->second - 1));
    }
  }

  // Every index was checked on every rank above.
  std::vector<float> fetched(fetch.size() * rowFloats);
  GNNC_TRY(Table->gatherChecked(fetch.data(), fetch.size(), fetched.data()));
  for (auto [position, slot] : fills)
    std::memcpy(out + position * rowFloats, fetched.data() + slot * rowFloats,
                rowFloats * sizeof(float));
  if (Cache)
    for (size_t k = 0; k < fetch.size(); ++k)
      Cache->insert(fetch[k], fetched.data() + k * rowFloats);
  return Status::success();
}

Status Embedding::applyGradients(const int64_t *indices, size_t n,
                                 const float *grads) {
  Communicator &comm = Table->comm();
  const int64_t d = dim();
  const size_t rowFloats = static_cast<size_t>(d);
  const int ranks = comm.size();

  // 1. Check, and agree on the first problem.
  Problem problem = findBadIndex(indices, n, indices && grads, rows());
  for (size_t i = 0; problem.What == Problem::None && i < n; ++i) {
    for (int64_t c = 0; c < d; ++c) {
      float g = grads[i * rowFloats + c];
      if (!std::isfinite(g)) {
        problem.What = Problem::NotFinite;
        problem.Index = indices[i];
        problem.Position = static_cast<int64_t>(i);
        problem.Column = c;
        problem.Value = g;
        break;
      }
    }
  }
  int badRank = -1;
  GNNC_TRY(agreeOnProblem(comm, problem, badRank));
  if (badRank >= 0)
    return problemError(Table->name(), "apply gradients", problem, badRank,
                        rows());

  // 2. Sum duplicates locally, in position order, into rows sorted by index
  // (and so grouped by owner, in rank order).
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return indices[a] < indices[b]; });
  std::vector<int64_t> sendRows;
  std::vector<double> sendSums;
  std::vector<int64_t> sendCounts(ranks, 0);
  const RowPartition &partition = Table->partition();
  for (size_t k = 0; k < n;) {
    int64_t row = indices[order[k]];
    size_t base = sendSums.size();
    sendSums.resize(base + rowFloats, 0.0);
    for (; k < n && indices[order[k]] == row; ++k) {
      const float *g = grads + order[k] * rowFloats;
      for (size_t c = 0; c < rowFloats; ++c)
        sendSums[base + c] += g[c];
    }
    sendRows.push_back(row);
    ++sendCounts[partition.owner(row)];
  }

  // 3. Route the sums to the owners.
  std::vector<int64_t> recvCounts(ranks, 0);
  GNNC_TRY(
      comm.allToAll(sendCounts.data(), recvCounts.data(), 1, DType::Int64));
  std::vector<size_t> sendRowCounts(ranks), recvRowCounts(ranks);
  std::vector<size_t> sendSumCounts(ranks), recvSumCounts(ranks);
  size_t received = 0;
  for (int r = 0; r < ranks; ++r) {
    sendRowCounts[r] = static_cast<size_t>(sendCounts[r]);
    recvRowCounts[r] = static_cast<size_t>(recvCounts[r]);
    sendSumCounts[r] = sendRowCounts[r] * rowFloats;
    recvSumCounts[r] = recvRowCounts[r] * rowFloats;
    received += recvRowCounts[r];
  }
  std::vector<int64_t> recvRows(std::max<size_t>(received, 1));
  std::vector<double> recvSums(std::max<size_t>(received, 1) * rowFloats);
  int64_t noRow = 0;
  double noSum = 0;
  GNNC_TRY(comm.allToAllV(sendRows.empty() ? &noRow : sendRows.data(),
                          sendRowCounts.data(), recvRows.data(),
                          recvRowCounts.data(), DType::Int64));
  GNNC_TRY(comm.allToAllV(sendSums.empty() ? &noSum : sendSums.data(),
                          sendSumCounts.data(), recvSums.data(),
                          recvSumCounts.data(), DType::Float64));

  // Contributions arrive in rank order; a stable sort by row keeps that
  // order within a row, so the float64 sum is taken in rank order.
  std::vector<size_t> arrival(received);
  std::iota(arrival.begin(), arrival.end(), size_t{0});
  std::stable_sort(arrival.begin(), arrival.end(), [&](size_t a, size_t b) {
    return recvRows[a] < recvRows[b];
  });

  const int64_t begin = Table->localRowBegin();
  float *w = static_cast<float *>(Table->localData());
  float *m = nullptr, *v = nullptr, *s = nullptr;
  int64_t *step = nullptr;
  if (Optimizer.Kind == OptimizerKind::Adam) {
    m = static_cast<float *>(States[0]->localData());
    v = static_cast<float *>(States[1]->localData());
    step = static_cast<int64_t *>(States[2]->localData());
  } else if (Optimizer.Kind != OptimizerKind::Sgd) {
    s = static_cast<float *>(States[0]->localData());
  }
  const double lr = Optimizer.LearningRate, wd = Optimizer.WeightDecay;
  const double b1 = Optimizer.Beta1, b2 = Optimizer.Beta2;
  const double alpha = Optimizer.Alpha, eps = Optimizer.Eps;

  std::vector<int64_t> trained;
  std::vector<double> g(rowFloats);
  for (size_t k = 0; k < received;) {
    int64_t row = recvRows[arrival[k]];
    std::fill(g.begin(), g.end(), 0.0);
    for (; k < received && recvRows[arrival[k]] == row; ++k) {
      const double *part = recvSums.data() + arrival[k] * rowFloats;
      for (size_t c = 0; c < rowFloats; ++c)
        g[c] += part[c];
    }
    trained.push_back(row);
    const size_t off = static_cast<size_t>(row - begin) * rowFloats;
    float *wr = w + off;
    if (wd != 0)
      for (size_t c = 0; c < rowFloats; ++c)
        g[c] += wd * wr[c];
    switch (Optimizer.Kind) {
    case OptimizerKind::Sgd:
      for (size_t c = 0; c < rowFloats; ++c)
        wr[c] = static_cast<float>(wr[c] - lr * g[c]);
      break;
    case OptimizerKind::Adam: {
      int64_t t = ++step[row - begin];
      const double c1 = 1 - std::pow(b1, static_cast<double>(t));
      const double c2 = 1 - std::pow(b2, static_cast<double>(t));
      float *mr = m + off, *vr = v + off;
      for (size_t c = 0; c < rowFloats; ++c) {
        double mc = b1 * mr[c] + (1 - b1) * g[c];
        double vc = b2 * vr[c] + (1 - b2) * g[c] * g[c];
        wr[c] = static_cast<float>(wr[c] -
                                   lr * (mc / c1) / (std::sqrt(vc / c2) + eps));
        mr[c] = static_cast<float>(mc);
        vr[c] = static_cast<float>(vc);
      }
      break;
    }
    case OptimizerKind::AdaGrad: {
      float *sr = s + off;
      for (size_t c = 0; c < rowFloats; ++c) {
        double sc = sr[c] + g[c] * g[c];
        wr[c] = static_cast<float>(wr[c] - lr * g[c] / (std::sqrt(sc) + eps));
        sr[c] = static_cast<float>(sc);
      }
      break;
    }
    case OptimizerKind::RmsProp: {
      float *sr = s + off;
      for (size_t c = 0; c < rowFloats; ++c) {
        double sc = alpha * sr[c] + (1 - alpha) * g[c] * g[c];
        wr[c] = static_cast<float>(wr[c] - lr * g[c] / (std::sqrt(sc) + eps));
        sr[c] = static_cast<float>(sc);
      }
      break;
    }
    }
  }

  // 4. Every rank learns the trained rows and drops its cached copies.
  int64_t mine = static_cast<int64_t>(trained.size());
  std::vector<int64_t> counts(ranks, 0);
  GNNC_TRY(comm.allGather(&mine, counts.data(), 1, DType::Int64));
  std::vector<size_t> gatherCounts(ranks);
  size_t total = 0;
  for (int r = 0; r < ranks; ++r) {
    gatherCounts[r] = static_cast<size_t>(counts[r]);
    total += gatherCounts[r];
  }
  std::vector<int64_t> allTrained(std::max<size_t>(total, 1));
  GNNC_TRY(comm.allGatherV(trained.empty() ? &noRow : trained.data(),
                           allTrained.data(), gatherCounts.data(),
                           DType::Int64));
  if (Cache)
    for (size_t k = 0; k < total; ++k)
      Cache->invalidate(allTrained[k]);
  return Status::success();
}
