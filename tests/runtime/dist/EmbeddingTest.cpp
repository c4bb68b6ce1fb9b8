//===- EmbeddingTest.cpp - Tests of trainable distributed embeddings ------===//
//
// Part of gnnc. checkEmbeddings (every optimizer x memory type x cache
// policy against the dense formulas) at 1, 2, 3, 4 and 7 thread ranks, with
// digests that must agree across rank counts; the same general float
// gradients through 1 to 4 ranks; each optimizer on a two-row example worked
// out by hand; the cache's statistics and invalidation on the gather path;
// and the errors for bad hyper-parameters, indices and gradients, which
// every rank must report alike.
//
//===----------------------------------------------------------------------===//

#include "gnnc/dist/Embedding.h"

#include "checks/DistChecks.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <mutex>
#include <random>
#include <string>
#include <vector>

using namespace gnnc::dist;

namespace {

/// Runs `body` on `ranks` thread ranks and fails the test when any rank
/// returns an error.
template <class F> void onRanks(int ranks, F body) {
  Status status = runThreads(
      ranks, [&](Communicator &comm) -> Status { return body(comm); });
  EXPECT_TRUE(status.ok()) << ranks << " ranks: " << status.message();
}

/// Every row of a tensor, gathered collectively.
template <class T> Status gatherAll(DistTensor &tensor, std::vector<T> &out) {
  std::vector<int64_t> all(static_cast<size_t>(tensor.rows()));
  for (int64_t r = 0; r < tensor.rows(); ++r)
    all[r] = r;
  out.assign(static_cast<size_t>(tensor.rows() * tensor.cols()), T());
  return tensor.gather(all.data(), all.size(), out.data());
}

TEST(Embedding, NamesRoundTrip) {
  for (OptimizerKind kind : {OptimizerKind::Sgd, OptimizerKind::Adam,
                             OptimizerKind::AdaGrad, OptimizerKind::RmsProp}) {
    OptimizerKind parsed = OptimizerKind::Sgd;
    ASSERT_TRUE(parseOptimizer(optimizerName(kind), parsed));
    EXPECT_EQ(parsed, kind);
  }
  OptimizerKind parsed = OptimizerKind::Adam;
  EXPECT_FALSE(parseOptimizer("Adam", parsed));
  EXPECT_FALSE(parseOptimizer("", parsed));
  EXPECT_EQ(parsed, OptimizerKind::Adam);
  EXPECT_STREQ(optimizerName(OptimizerKind::AdaGrad), "adagrad");
  EXPECT_STREQ(cachePolicyName(CachePolicy::Sieve), "sieve");
  EXPECT_STREQ(cachePolicyName(CachePolicy::Lfu), "lfu");
}

//===----------------------------------------------------------------------===//
// checkEmbeddings
//===----------------------------------------------------------------------===//

TEST(EmbeddingChecks, ThreadRanksAgreeWithDenseFormulas) {
  std::vector<uint64_t> digests;
  for (int ranks : {1, 2, 3, 4, 7}) {
    std::vector<uint64_t> perRank(ranks, 0);
    onRanks(ranks, [&](Communicator &comm) {
      checks::CheckContext ctx(comm, ::testing::TempDir());
      Status status = checks::checkEmbeddings(ctx);
      perRank[comm.rank()] = ctx.Digest;
      return status;
    });
    for (int r = 1; r < ranks; ++r)
      EXPECT_EQ(perRank[r], perRank[0]) << ranks << " ranks, rank " << r;
    digests.push_back(perRank[0]);
  }
  // The check's gradients sum exactly in float64, so the trained tables are
  // bit-identical for every rank count.
  for (size_t i = 1; i < digests.size(); ++i)
    EXPECT_EQ(digests[i], digests[0]) << "rank count #" << i;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx",
                static_cast<unsigned long long>(digests[0]));
  RecordProperty("digest", hex);
  // Something was mixed in (the FNV-1a offset basis is the empty digest).
  EXPECT_NE(digests[0], 14695981039346656037ull);
}

//===----------------------------------------------------------------------===//
// Rank-count independence with general gradients
//===----------------------------------------------------------------------===//

/// Trains `kind` for three steps on 61 x 5 rows with float gradients drawn
/// from N(0, 1) (sums not exact in float64), entry k on rank k % ranks, and
/// returns the final table and first state.
void trainGeneral(int ranks, OptimizerKind kind, MemoryType type,
                  std::vector<float> &table, std::vector<float> &state) {
  const int64_t rows = 61, dim = 5;
  std::mt19937_64 rng(7);
  std::normal_distribution<float> normal;
  std::vector<std::vector<int64_t>> stepRows(3);
  std::vector<std::vector<float>> stepGrads(3);
  for (int step = 0; step < 3; ++step) {
    for (int k = 0; k < 200; ++k) {
      // A third of the entries on rows 0-4 (many duplicates), the rest on
      // rows 0-39; rows 40-60 are never trained.
      uint64_t h = rng();
      stepRows[step].push_back(
          static_cast<int64_t>(k % 3 == 0 ? h % 5 : h % 40));
      for (int64_t c = 0; c < dim; ++c)
        stepGrads[step].push_back(normal(rng));
    }
  }
  std::mutex mu;
  onRanks(ranks, [&](Communicator &comm) -> Status {
    TensorOptions tensor;
    tensor.Type = type;
    OptimizerOptions opt;
    opt.Kind = kind;
    opt.WeightDecay = 0.001f;
    CacheOptions cache{8, CachePolicy::Sieve};
    std::unique_ptr<Embedding> emb;
    GNNC_TRY(Embedding::create(comm, rows, dim, tensor, opt, cache, emb));
    GNNC_TRY(emb->initUniform(-1, 1, 3));
    for (int step = 0; step < 3; ++step) {
      std::vector<int64_t> idx;
      std::vector<float> g;
      for (size_t k = 0; k < stepRows[step].size(); ++k) {
        if (static_cast<int>(k % ranks) != comm.rank())
          continue;
        idx.push_back(stepRows[step][k]);
        g.insert(g.end(), &stepGrads[step][k * dim],
                 &stepGrads[step][(k + 1) * dim]);
      }
      GNNC_TRY(emb->applyGradients(idx.data(), idx.size(), g.data()));
    }
    std::vector<float> t, s;
    GNNC_TRY(gatherAll(emb->table(), t));
    if (emb->numStates() > 0)
      GNNC_TRY(gatherAll(emb->state(0), s));
    if (comm.rank() == 0) {
      std::lock_guard<std::mutex> lock(mu);
      table = t;
      state = s;
    }
    return Status::success();
  });
}

TEST(Embedding, SameGradientsGiveSameTableOnOneToFourRanks) {
  // The only rank-count dependence is the grouping of each row's float64
  // gradient sum (per rank, then over ranks). Its rounding, ~1e-16
  // relative, is far below a float32 ulp, so we allow 1e-6 relative and
  // report whether the tables were in fact bit-identical.
  for (OptimizerKind kind : {OptimizerKind::Sgd, OptimizerKind::Adam,
                             OptimizerKind::AdaGrad, OptimizerKind::RmsProp}) {
    SCOPED_TRACE(optimizerName(kind));
    std::vector<float> table1, state1;
    trainGeneral(1, kind, MemoryType::Distributed, table1, state1);
    ASSERT_EQ(table1.size(), 61u * 5u);
    int identical = 0;
    for (int ranks : {2, 3, 4}) {
      std::vector<float> table, state;
      trainGeneral(ranks, kind,
                   ranks == 3 ? MemoryType::Chunked : MemoryType::Distributed,
                   table, state);
      ASSERT_EQ(table.size(), table1.size());
      for (size_t i = 0; i < table.size(); ++i)
        EXPECT_NEAR(table[i], table1[i],
                    1e-6 * std::max(1.0f, std::fabs(table1[i])))
            << ranks << " ranks, element " << i;
      ASSERT_EQ(state.size(), state1.size());
      for (size_t i = 0; i < state.size(); ++i)
        EXPECT_NEAR(state[i], state1[i], 1e-6 * std::fabs(state1[i]) + 1e-12)
            << ranks << " ranks, state element " << i;
      bool same =
          std::memcmp(table.data(), table1.data(),
                      table.size() * sizeof(float)) == 0 &&
          (state.empty() || std::memcmp(state.data(), state1.data(),
                                        state.size() * sizeof(float)) == 0);
      identical += same;
    }
    RecordProperty(std::string(optimizerName(kind)) + "_bit_identical",
                   std::to_string(identical) + "/3");
    std::printf("%s: tables of 2, 3, 4 ranks bit-identical to 1 rank: %d/3\n",
                optimizerName(kind), identical);
  }
}

//===----------------------------------------------------------------------===//
// Two rows by hand
//===----------------------------------------------------------------------===//

/// One step on a zeroed 2 x 2 table: `steps[s]` lists the (row, gradient)
/// entries of step s, spread over the ranks round robin. Returns the table
/// and the states after every step (rank 0's gather).
struct HandResult {
  std::vector<std::vector<float>> Table, M, V, S;
  std::vector<std::vector<int64_t>> Step;
};

struct HandEntry {
  int64_t Row;
  float G0, G1;
};

HandResult trainByHand(int ranks, const OptimizerOptions &opt,
                       const std::vector<std::vector<HandEntry>> &steps) {
  HandResult result;
  std::mutex mu;
  onRanks(ranks, [&](Communicator &comm) -> Status {
    std::unique_ptr<Embedding> emb;
    GNNC_TRY(Embedding::create(comm, 2, 2, TensorOptions(), opt, CacheOptions(),
                               emb));
    for (const auto &entries : steps) {
      std::vector<int64_t> idx;
      std::vector<float> g;
      for (size_t k = 0; k < entries.size(); ++k) {
        if (static_cast<int>(k % ranks) != comm.rank())
          continue;
        idx.push_back(entries[k].Row);
        g.push_back(entries[k].G0);
        g.push_back(entries[k].G1);
      }
      GNNC_TRY(emb->applyGradients(idx.data(), idx.size(), g.data()));
      std::vector<float> t, m, v, s;
      std::vector<int64_t> st;
      GNNC_TRY(gatherAll(emb->table(), t));
      if (opt.Kind == OptimizerKind::Adam) {
        GNNC_TRY(gatherAll(emb->state(0), m));
        GNNC_TRY(gatherAll(emb->state(1), v));
        GNNC_TRY(gatherAll(emb->state(2), st));
      } else if (opt.Kind != OptimizerKind::Sgd) {
        GNNC_TRY(gatherAll(emb->state(0), s));
      }
      if (comm.rank() == 0) {
        std::lock_guard<std::mutex> lock(mu);
        result.Table.push_back(t);
        result.M.push_back(m);
        result.V.push_back(v);
        result.S.push_back(s);
        result.Step.push_back(st);
      }
    }
    return Status::success();
  });
  return result;
}

/// Row 0 gets the gradient (1, -2) twice (summed: g = (2, -4)).
const std::vector<HandEntry> kTwice = {{0, 1.0f, -2.0f}, {0, 1.0f, -2.0f}};

void expectRow(const std::vector<float> &table, int64_t row, double w0,
               double w1, double tol = 1e-6) {
  ASSERT_EQ(table.size(), 4u);
  EXPECT_NEAR(table[row * 2], w0, tol) << "row " << row;
  EXPECT_NEAR(table[row * 2 + 1], w1, tol) << "row " << row;
}

TEST(Embedding, SgdByHand) {
  OptimizerOptions opt;
  opt.Kind = OptimizerKind::Sgd;
  opt.LearningRate = 0.5f;
  opt.WeightDecay = 0.1f;
  for (int ranks : {1, 2}) {
    HandResult r = trainByHand(ranks, opt, {kTwice, kTwice});
    ASSERT_EQ(r.Table.size(), 2u);
    // Step 1: w = 0 - 0.5 * (2, -4) = (-1, 2) (decay of a zero row is 0).
    expectRow(r.Table[0], 0, -1.0, 2.0);
    // Step 2: g = (2, -4) + 0.1 * (-1, 2) = (1.9, -3.8);
    //         w = (-1, 2) - 0.5 * g = (-1.95, 3.9).
    expectRow(r.Table[1], 0, -1.95, 3.9);
    expectRow(r.Table[1], 1, 0.0, 0.0, 0.0);
  }
}

TEST(Embedding, AdamByHandIsLazy) {
  OptimizerOptions opt;
  opt.Kind = OptimizerKind::Adam;
  opt.LearningRate = 0.1f;
  opt.Beta1 = 0.5f; // exact in float32, so every value below is exact
  opt.Beta2 = 0.75f;
  for (int ranks : {1, 2}) {
    HandResult r = trainByHand(ranks, opt, {kTwice, kTwice, {{1, 1.0f, 1.0f}}});
    ASSERT_EQ(r.Table.size(), 3u);
    // Step 1 (t = 1): m = 0.5 g = (1, -2); v = 0.25 g^2 = (1, 4);
    // m^ = m / 0.5 = g, v^ = v / 0.25 = g^2, so
    // w = -0.1 g / (|g| + 1e-8) = (-0.1, 0.1).
    expectRow(r.Table[0], 0, -0.1, 0.1);
    expectRow(r.M[0], 0, 1.0, -2.0, 0.0);
    expectRow(r.V[0], 0, 1.0, 4.0, 0.0);
    EXPECT_EQ(r.Step[0], (std::vector<int64_t>{1, 0}));
    // Step 2 (t = 2): m = 0.5 m + 0.5 g = (1.5, -3), m^ = m / 0.75 = g;
    // v = 0.75 v + 0.25 g^2 = (1.75, 7), v^ = v / 0.4375 = g^2: the same
    // step again, w = (-0.2, 0.2).
    expectRow(r.Table[1], 0, -0.2, 0.2);
    expectRow(r.M[1], 0, 1.5, -3.0, 0.0);
    expectRow(r.V[1], 0, 1.75, 7.0, 0.0);
    EXPECT_EQ(r.Step[1], (std::vector<int64_t>{2, 0}));
    // Untouched row 1 kept m = v = 0 and step 0 for two steps.
    expectRow(r.Table[1], 1, 0.0, 0.0, 0.0);
    expectRow(r.M[1], 1, 0.0, 0.0, 0.0);
    expectRow(r.V[1], 1, 0.0, 0.0, 0.0);
    // Step 3 trains only row 1 (t = 1 there): row 0 keeps its m, v and step
    // bit for bit, row 1 moves by -0.1 * sign(g).
    EXPECT_EQ(r.Step[2], (std::vector<int64_t>{2, 1}));
    for (int c = 0; c < 2; ++c) {
      EXPECT_EQ(r.M[2][c], r.M[1][c]);
      EXPECT_EQ(r.V[2][c], r.V[1][c]);
      EXPECT_EQ(r.Table[2][c], r.Table[1][c]);
    }
    expectRow(r.Table[2], 1, -0.1, -0.1);
  }
}

TEST(Embedding, AdaGradByHand) {
  OptimizerOptions opt;
  opt.Kind = OptimizerKind::AdaGrad;
  opt.LearningRate = 0.5f;
  opt.InitialAccumulator = 5.0f;
  for (int ranks : {1, 2}) {
    HandResult r = trainByHand(ranks, opt, {kTwice});
    ASSERT_EQ(r.Table.size(), 1u);
    // s = 5 + g^2 = (9, 21); w = -0.5 g / sqrt(s) = (-1/3, 2/sqrt(21)).
    expectRow(r.S[0], 0, 9.0, 21.0);
    expectRow(r.Table[0], 0, -1.0 / 3.0, 0.43643578047);
    expectRow(r.S[0], 1, 5.0, 5.0, 0.0);
  }
}

TEST(Embedding, RmsPropByHand) {
  OptimizerOptions opt;
  opt.Kind = OptimizerKind::RmsProp;
  opt.LearningRate = 0.01f;
  opt.Alpha = 0.75f;
  for (int ranks : {1, 2}) {
    HandResult r = trainByHand(ranks, opt, {kTwice});
    ASSERT_EQ(r.Table.size(), 1u);
    // s = 0.25 g^2 = (1, 4); w = -0.01 g / sqrt(s) = (-0.02, 0.02).
    expectRow(r.S[0], 0, 1.0, 4.0);
    expectRow(r.Table[0], 0, -0.02, 0.02);
    expectRow(r.S[0], 1, 0.0, 0.0, 0.0);
  }
}

//===----------------------------------------------------------------------===//
// Cache on the gather path
//===----------------------------------------------------------------------===//

TEST(Embedding, RepeatedGatherHitsTheCache) {
  // Two ranks, 10 rows in blocks: rank 0 owns 0-4, rank 1 owns 5-9.
  for (CachePolicy policy : {CachePolicy::Sieve, CachePolicy::Lfu}) {
    SCOPED_TRACE(cachePolicyName(policy));
    onRanks(2, [&](Communicator &comm) -> Status {
      std::unique_ptr<Embedding> emb;
      GNNC_TRY(Embedding::create(comm, 10, 3, TensorOptions(),
                                 OptimizerOptions(), CacheOptions{8, policy},
                                 emb));
      GNNC_TRY(emb->initUniform(-1, 1, 11));
      std::vector<float> table;
      GNNC_TRY(gatherAll(emb->table(), table));
      std::vector<int64_t> idx = comm.rank() == 0
                                     ? std::vector<int64_t>{5, 6, 7, 5, 0, 1}
                                     : std::vector<int64_t>{0, 1, 9, 1};
      const uint64_t remote = comm.rank() == 0 ? 3 : 2; // distinct
      for (int round = 1; round <= 2; ++round) {
        std::vector<float> out(idx.size() * 3);
        GNNC_TRY(emb->gather(idx.data(), idx.size(), out.data()));
        for (size_t k = 0; k < idx.size(); ++k)
          for (int c = 0; c < 3; ++c)
            EXPECT_EQ(out[k * 3 + c], table[idx[k] * 3 + c]);
        const CacheStats &st = emb->cache()->stats();
        EXPECT_EQ(st.Lookups, remote * round);
        EXPECT_EQ(st.Hits, remote * (round - 1));
        EXPECT_EQ(st.Inserts, remote);
        EXPECT_EQ(st.Evictions, 0u);
        EXPECT_DOUBLE_EQ(st.hitRate(), (round - 1) / 2.0);
      }
      EXPECT_EQ(emb->cache()->size(), static_cast<int64_t>(remote));
      return Status::success();
    });
  }
}

TEST(Embedding, CacheOffGathersEverything) {
  onRanks(3, [&](Communicator &comm) -> Status {
    std::unique_ptr<Embedding> emb;
    GNNC_TRY(Embedding::create(comm, 7, 2, TensorOptions(), OptimizerOptions(),
                               CacheOptions(), emb));
    EXPECT_EQ(emb->cache(), nullptr);
    GNNC_TRY(emb->initUniform(0, 1, 5));
    std::vector<float> table;
    GNNC_TRY(gatherAll(emb->table(), table));
    std::vector<int64_t> idx = {6, 0, 6, 3};
    std::vector<float> out(idx.size() * 2);
    // An empty gather on one rank still takes part.
    size_t n = comm.rank() == 1 ? 0 : idx.size();
    GNNC_TRY(emb->gather(idx.data(), n, out.data()));
    for (size_t k = 0; k < n; ++k)
      for (int c = 0; c < 2; ++c)
        EXPECT_EQ(out[k * 2 + c], table[idx[k] * 2 + c]);
    return Status::success();
  });
}

TEST(Embedding, TrainingInvalidatesCachedRows) {
  onRanks(2, [&](Communicator &comm) -> Status {
    std::unique_ptr<Embedding> emb;
    OptimizerOptions opt;
    opt.LearningRate = 0.5f;
    GNNC_TRY(Embedding::create(comm, 10, 2, TensorOptions(), opt,
                               CacheOptions{4, CachePolicy::Sieve}, emb));
    GNNC_TRY(emb->initUniform(-1, 1, 2));
    std::vector<int64_t> idx = {5, 6, 7};
    std::vector<float> out(6);
    size_t n = comm.rank() == 0 ? idx.size() : 0;
    GNNC_TRY(emb->gather(idx.data(), n, out.data()));
    // Rank 0 trains its cached remote row 7, rank 1 its own row 6 (which
    // rank 0 holds a copy of) and row 2.
    std::vector<int64_t> train =
        comm.rank() == 0 ? std::vector<int64_t>{7} : std::vector<int64_t>{6, 2};
    std::vector<float> grads(train.size() * 2, 1.0f);
    GNNC_TRY(emb->applyGradients(train.data(), train.size(), grads.data()));
    const CacheStats &st = emb->cache()->stats();
    if (comm.rank() == 0) {
      EXPECT_EQ(st.Invalidations, 2u); // 6 and 7; 2 is rank 0's own
      EXPECT_EQ(emb->cache()->size(), 1);
    } else {
      EXPECT_EQ(st.Invalidations, 0u);
    }
    std::vector<float> table;
    GNNC_TRY(gatherAll(emb->table(), table));
    GNNC_TRY(emb->gather(idx.data(), n, out.data()));
    if (comm.rank() == 0) {
      EXPECT_EQ(st.Hits, 1u); // row 5; 6 and 7 are fetched again
      EXPECT_EQ(st.Lookups, 6u);
      for (size_t k = 0; k < idx.size(); ++k)
        for (int c = 0; c < 2; ++c)
          EXPECT_EQ(out[k * 2 + c], table[idx[k] * 2 + c]) << "row " << idx[k];
    }
    // initUniform rewrites every row: nothing cached survives it.
    GNNC_TRY(emb->initUniform(-1, 1, 3));
    EXPECT_EQ(emb->cache()->size(), 0);
    GNNC_TRY(gatherAll(emb->table(), table));
    GNNC_TRY(emb->gather(idx.data(), n, out.data()));
    for (size_t k = 0; k < n; ++k)
      for (int c = 0; c < 2; ++c)
        EXPECT_EQ(out[k * 2 + c], table[idx[k] * 2 + c]) << "row " << idx[k];
    return Status::success();
  });
}

TEST(Embedding, InitUniformIsTheSameForAnyRankCount) {
  std::vector<std::vector<float>> tables;
  for (int ranks : {1, 3}) {
    std::mutex mu;
    onRanks(ranks, [&](Communicator &comm) -> Status {
      TensorOptions tensor;
      tensor.Type = ranks == 3 ? MemoryType::Continuous : MemoryType::Chunked;
      std::unique_ptr<Embedding> emb;
      GNNC_TRY(Embedding::create(comm, 100, 8, tensor, OptimizerOptions(),
                                 CacheOptions(), emb));
      GNNC_TRY(emb->initUniform(-1, 1, 77));
      std::vector<float> t;
      GNNC_TRY(gatherAll(emb->table(), t));
      if (comm.rank() == 0) {
        std::lock_guard<std::mutex> lock(mu);
        tables.push_back(t);
      }
      Status bad = emb->initUniform(1, 1, 0);
      EXPECT_FALSE(bad.ok());
      EXPECT_NE(bad.message().find("[1, 1)"), std::string::npos)
          << bad.message();
      return Status::success();
    });
  }
  ASSERT_EQ(tables.size(), 2u);
  EXPECT_EQ(tables[0], tables[1]);
  double sum = 0;
  for (float x : tables[0]) {
    EXPECT_GE(x, -1.0f);
    EXPECT_LT(x, 1.0f);
    sum += x;
  }
  // 800 values of U(-1, 1): the mean's standard deviation is 0.02.
  EXPECT_LT(std::fabs(sum / tables[0].size()), 0.1);
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

void expectCreateError(int64_t rows, int64_t dim, const OptimizerOptions &opt,
                       const std::string &needle,
                       const TensorOptions &tensor = TensorOptions(),
                       const CacheOptions &cache = CacheOptions()) {
  onRanks(1, [&](Communicator &comm) -> Status {
    std::unique_ptr<Embedding> emb;
    Status status = Embedding::create(comm, rows, dim, tensor, opt, cache, emb);
    EXPECT_FALSE(status.ok()) << needle;
    EXPECT_NE(status.message().find(needle), std::string::npos)
        << status.message();
    EXPECT_EQ(emb, nullptr);
    return Status::success();
  });
}

TEST(Embedding, BadHyperParametersAreErrors) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  auto with = [](OptimizerKind kind, auto set) {
    OptimizerOptions opt;
    opt.Kind = kind;
    set(opt);
    return opt;
  };
  using O = OptimizerOptions;
  expectCreateError(0, 4, O(), "row count 0");
  expectCreateError(4, -2, O(), "dimension -2");
  expectCreateError(4, 4,
                    with(OptimizerKind::Sgd, [](O &o) { o.LearningRate = 0; }),
                    "learning rate 0 must be positive");
  expectCreateError(4, 4,
                    with(OptimizerKind::Sgd, [](O &o) { o.LearningRate = -1; }),
                    "learning rate -1");
  expectCreateError(
      4, 4, with(OptimizerKind::Adam, [&](O &o) { o.LearningRate = nan; }),
      "learning rate nan");
  expectCreateError(
      4, 4, with(OptimizerKind::Sgd, [&](O &o) { o.LearningRate = inf; }),
      "learning rate inf");
  expectCreateError(
      4, 4, with(OptimizerKind::Sgd, [](O &o) { o.WeightDecay = -0.5f; }),
      "weight decay -0.5");
  expectCreateError(4, 4, with(OptimizerKind::Adam, [](O &o) { o.Beta1 = 1; }),
                    "beta1 1 must be in [0, 1)");
  expectCreateError(4, 4,
                    with(OptimizerKind::Adam, [](O &o) { o.Beta2 = -0.25f; }),
                    "beta2 -0.25");
  expectCreateError(4, 4, with(OptimizerKind::Adam, [](O &o) { o.Eps = 0; }),
                    "eps 0");
  expectCreateError(4, 4,
                    with(OptimizerKind::RmsProp, [](O &o) { o.Alpha = 1.5f; }),
                    "alpha 1.5");
  expectCreateError(
      4, 4, with(OptimizerKind::AdaGrad, [](O &o) { o.Eps = -1; }), "eps -1");
  expectCreateError(
      4, 4,
      with(OptimizerKind::AdaGrad, [](O &o) { o.InitialAccumulator = -1; }),
      "initial accumulator -1");
  expectCreateError(4, 4, O(), "cache capacity -1", TensorOptions(),
                    CacheOptions{-1, CachePolicy::Sieve});
  TensorOptions device;
  device.Location = MemoryLocation::Device;
  expectCreateError(4, 4, O(), "device memory", device);
  // Parameters an optimizer does not use are not checked.
  onRanks(1, [&](Communicator &comm) -> Status {
    std::unique_ptr<Embedding> emb;
    OptimizerOptions opt;
    opt.Beta1 = 7;
    return Embedding::create(comm, 4, 4, TensorOptions(), opt, CacheOptions(),
                             emb);
  });
}

TEST(Embedding, BadIndicesAndGradientsFailOnEveryRank) {
  const int ranks = 3;
  std::vector<std::string> messages(ranks * 4);
  onRanks(ranks, [&](Communicator &comm) -> Status {
    std::unique_ptr<Embedding> emb;
    GNNC_TRY(Embedding::create(comm, 10, 2, TensorOptions(), OptimizerOptions(),
                               CacheOptions{4}, emb));
    GNNC_TRY(emb->initUniform(-1, 1, 1));
    std::vector<float> before;
    GNNC_TRY(gatherAll(emb->table(), before));
    const int r = comm.rank();
    std::vector<float> out(4);
    // Rank 1 passes row 10 at position 1, rank 2 row -1: the lowest rank's
    // problem is reported everywhere.
    std::vector<int64_t> idx = r == 1   ? std::vector<int64_t>{3, 10}
                               : r == 2 ? std::vector<int64_t>{-1, 0}
                                        : std::vector<int64_t>{1, 2};
    messages[r * 4 + 0] = emb->gather(idx.data(), 2, out.data()).message();
    std::vector<float> g(4, 0.5f);
    messages[r * 4 + 1] =
        emb->applyGradients(idx.data(), 2, g.data()).message();
    // A NaN on rank 0, row 4 at position 1, column 0; rank 2 an infinity.
    std::vector<int64_t> ok = {2, 4};
    std::vector<float> bad = {0, 0, 0, 0};
    if (r == 0)
      bad[2] = std::numeric_limits<float>::quiet_NaN();
    if (r == 2)
      bad[1] = std::numeric_limits<float>::infinity();
    messages[r * 4 + 2] =
        emb->applyGradients(ok.data(), 2, bad.data()).message();
    // Nothing was applied, and the communicator still works.
    std::vector<float> after;
    GNNC_TRY(gatherAll(emb->table(), after));
    EXPECT_EQ(before, after);
    std::vector<float> fine(4, 0.25f);
    messages[r * 4 + 3] =
        emb->applyGradients(ok.data(), 2, fine.data()).message();
    return Status::success();
  });
  for (int r = 0; r < ranks; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    EXPECT_EQ(messages[r * 4 + 0],
              "tensor: gather: index 10 at position 1 on rank 1 is out of "
              "range [0, 10)");
    EXPECT_EQ(messages[r * 4 + 1],
              "tensor: apply gradients: index 10 at position 1 on rank 1 is "
              "out of range [0, 10)");
    EXPECT_EQ(messages[r * 4 + 2],
              "tensor: apply gradients: gradient of row 4 (position 1 on "
              "rank 0, column 0) is not finite (nan)");
    EXPECT_EQ(messages[r * 4 + 3], "");
  }
}

} // namespace
