//===- RowCacheTest.cpp - Tests of the SIEVE and LFU row caches -----------===//
//
// Part of gnnc. Eviction orders are checked against sequences worked out by
// hand (in the comments) and, on long random streams of lookups, inserts,
// refreshes and invalidations, against small reference models written here
// with plain vectors and linear scans. Hit rates on a power-law stream are
// compared with FIFO and random eviction simulated in the test.
//
//===----------------------------------------------------------------------===//

#include "gnnc/dist/Embedding.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <deque>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

using namespace gnnc::dist;

namespace {

/// Rows hold one int64 payload: 1000 * row + version.
constexpr size_t kRowBytes = sizeof(int64_t);

int64_t payload(int64_t row, int64_t version = 0) {
  return 1000 * row + version;
}

void put(RowCache &cache, int64_t row, int64_t version = 0) {
  int64_t value = payload(row, version);
  cache.insert(row, &value);
}

bool has(RowCache &cache, int64_t row) {
  int64_t value = -1;
  return cache.lookup(row, &value);
}

/// The rows of `candidates` the cache holds. Lookups never evict, so the
/// probe sees exactly the resident set (it changes the policy's state, so it
/// ends a scenario).
std::set<int64_t> resident(RowCache &cache,
                           const std::vector<int64_t> &candidates) {
  std::set<int64_t> out;
  for (int64_t row : candidates)
    if (has(cache, row))
      out.insert(row);
  return out;
}

/// One step of a scripted scenario: insert or look up a row.
struct Op {
  bool Insert;
  int64_t Row;
};

/// Runs `ops` on a fresh cache and returns, for each insert that evicted,
/// the row that left (found by replaying the prefix in a fresh cache and
/// probing the rows it held before the insert).
std::vector<int64_t> evictionOrder(CachePolicy policy, int64_t capacity,
                                   const std::vector<Op> &ops,
                                   const std::vector<int64_t> &rows) {
  std::vector<int64_t> order;
  for (size_t k = 0; k < ops.size(); ++k) {
    if (!ops[k].Insert)
      continue;
    auto before = createRowCache(policy, capacity, kRowBytes);
    auto after = createRowCache(policy, capacity, kRowBytes);
    for (size_t j = 0; j < k; ++j)
      for (RowCache *c : {before.get(), after.get()})
        ops[j].Insert ? put(*c, ops[j].Row) : (void)has(*c, ops[j].Row);
    put(*after, ops[k].Row);
    if (after->stats().Evictions == before->stats().Evictions)
      continue;
    std::set<int64_t> was = resident(*before, rows);
    std::set<int64_t> is = resident(*after, rows);
    for (int64_t row : was)
      if (!is.count(row))
        order.push_back(row);
  }
  return order;
}

enum : int64_t { A = 1, B, C, D, E, F, G, H };

TEST(RowCache, SieveHandWorkedEvictionOrder) {
  // Capacity 3, queue written tail -> head.
  //   insert A B C            [A B C]        hand: none
  //   lookup A B C            all visited
  //   insert D   hand starts at the tail: A, B, C visited -> cleared; wraps
  //              to A, now clear -> evict A; hand -> B       [B C D]
  //   insert E   B clear -> evict B; hand -> C              [C D E]
  //   lookup D   D visited (no move)
  //   insert F   C clear -> evict C; hand -> D              [D E F]
  //   insert G   D visited -> cleared, E clear -> evict E; hand -> F
  //                                                         [D F G]
  // FIFO would evict A, B, C, D and keep E; SIEVE keeps the visited D.
  std::vector<Op> ops = {{true, A},  {true, B},  {true, C}, {false, A},
                         {false, B}, {false, C}, {true, D}, {true, E},
                         {false, D}, {true, F},  {true, G}};
  std::vector<int64_t> rows = {A, B, C, D, E, F, G, H};
  EXPECT_EQ(evictionOrder(CachePolicy::Sieve, 3, ops, rows),
            (std::vector<int64_t>{A, B, C, E}));

  auto cache = createRowCache(CachePolicy::Sieve, 3, kRowBytes);
  for (const Op &op : ops)
    op.Insert ? put(*cache, op.Row) : (void)has(*cache, op.Row);
  EXPECT_EQ(cache->size(), 3);
  const CacheStats &s = cache->stats();
  EXPECT_EQ(s.Lookups, 4u);
  EXPECT_EQ(s.Hits, 4u);
  EXPECT_EQ(s.Inserts, 7u);
  EXPECT_EQ(s.Evictions, 4u);
  EXPECT_EQ(s.Invalidations, 0u);
  EXPECT_EQ(resident(*cache, rows), (std::set<int64_t>{D, F, G}));
}

TEST(RowCache, SieveQuickDemotionKeepsHotRows) {
  // Capacity 4: A and C are hot; every new row passes through without
  // pushing them out, as long as they are hit once per lap of the hand.
  //   insert A B C D          [A B C D]
  //   lookup A C              A, C visited
  //   insert E   A visited -> cleared, B clear -> evict B; hand -> C
  //   insert F   C visited -> cleared, D clear -> evict D; hand -> E
  //   insert G   E clear -> evict E; hand -> F
  //   insert H   F clear -> evict F; hand -> G                [A C G H]
  std::vector<Op> ops = {{true, A},  {true, B},  {true, C}, {true, D},
                         {false, A}, {false, C}, {true, E}, {true, F},
                         {true, G},  {true, H}};
  std::vector<int64_t> rows = {A, B, C, D, E, F, G, H};
  EXPECT_EQ(evictionOrder(CachePolicy::Sieve, 4, ops, rows),
            (std::vector<int64_t>{B, D, E, F}));
}

TEST(RowCache, LfuHandWorkedEvictionOrder) {
  // Capacity 3; counts start at 1 on insert, +1 per hit; ties go to the
  // oldest insert.
  //   insert A B C; lookup A A C       A:3 B:1 C:2
  //   insert D   evict B (1)           A:3 C:2 D:1
  //   insert E   evict D (1)           A:3 C:2 E:1
  //   lookup E                          A:3 C:2 E:2
  //   insert F   C and E tie at 2; C is older -> evict C
  //   insert G   evict F (1)           A:3 E:2 G:1
  std::vector<Op> ops = {{true, A},  {true, B},  {true, C}, {false, A},
                         {false, A}, {false, C}, {true, D}, {true, E},
                         {false, E}, {true, F},  {true, G}};
  std::vector<int64_t> rows = {A, B, C, D, E, F, G, H};
  EXPECT_EQ(evictionOrder(CachePolicy::Lfu, 3, ops, rows),
            (std::vector<int64_t>{B, D, C, F}));
  auto cache = createRowCache(CachePolicy::Lfu, 3, kRowBytes);
  for (const Op &op : ops)
    op.Insert ? put(*cache, op.Row) : (void)has(*cache, op.Row);
  EXPECT_EQ(cache->stats().Evictions, 4u);
  EXPECT_EQ(cache->stats().Inserts, 7u);
  EXPECT_EQ(cache->stats().Hits, 4u);
  EXPECT_EQ(resident(*cache, rows), (std::set<int64_t>{A, E, G}));
}

TEST(RowCache, LookupCopiesTheStoredRowAndRefreshReplacesIt) {
  for (CachePolicy policy : {CachePolicy::Sieve, CachePolicy::Lfu}) {
    SCOPED_TRACE(cachePolicyName(policy));
    auto cache = createRowCache(policy, 4, 3 * sizeof(float));
    float row[3] = {1.5f, -2.0f, 3.25f};
    cache->insert(7, row);
    row[0] = 99.0f; // the cache holds its own copy
    float out[3] = {0, 0, 0};
    ASSERT_TRUE(cache->lookup(7, out));
    EXPECT_EQ(out[0], 1.5f);
    EXPECT_EQ(out[1], -2.0f);
    EXPECT_EQ(out[2], 3.25f);
    cache->insert(7, row); // refresh: new bytes, no new row
    ASSERT_TRUE(cache->lookup(7, out));
    EXPECT_EQ(out[0], 99.0f);
    EXPECT_EQ(cache->size(), 1);
    EXPECT_EQ(cache->stats().Inserts, 1u);
    float untouched[3] = {-1, -1, -1};
    EXPECT_FALSE(cache->lookup(8, untouched));
    EXPECT_EQ(untouched[0], -1.0f); // a miss writes nothing
    EXPECT_EQ(cache->stats().Lookups, 3u);
    EXPECT_EQ(cache->stats().Hits, 2u);
    EXPECT_DOUBLE_EQ(cache->stats().hitRate(), 2.0 / 3.0);
    cache->resetStats();
    EXPECT_EQ(cache->stats().Lookups, 0u);
    EXPECT_EQ(cache->stats().hitRate(), 0.0);
    EXPECT_EQ(cache->size(), 1);
  }
}

TEST(RowCache, InvalidateDropsRowsAndCountsOnlyCachedOnes) {
  for (CachePolicy policy : {CachePolicy::Sieve, CachePolicy::Lfu}) {
    SCOPED_TRACE(cachePolicyName(policy));
    auto cache = createRowCache(policy, 3, kRowBytes);
    put(*cache, A);
    put(*cache, B);
    put(*cache, C);
    cache->invalidate(B);
    cache->invalidate(B);
    cache->invalidate(H);
    EXPECT_EQ(cache->size(), 2);
    EXPECT_EQ(cache->stats().Invalidations, 1u);
    // The freed slot takes the next row without an eviction.
    put(*cache, D, 5);
    EXPECT_EQ(cache->stats().Evictions, 0u);
    int64_t value = 0;
    ASSERT_TRUE(cache->lookup(D, &value));
    EXPECT_EQ(value, payload(D, 5));
    EXPECT_FALSE(has(*cache, B));
    EXPECT_EQ(resident(*cache, {A, B, C, D}), (std::set<int64_t>{A, C, D}));
  }
}

TEST(RowCache, CapacityZeroHoldsNothing) {
  for (CachePolicy policy : {CachePolicy::Sieve, CachePolicy::Lfu}) {
    SCOPED_TRACE(cachePolicyName(policy));
    for (int64_t capacity : {int64_t{0}, int64_t{-3}}) {
      auto cache = createRowCache(policy, capacity, kRowBytes);
      EXPECT_EQ(cache->capacity(), 0);
      put(*cache, A);
      EXPECT_EQ(cache->size(), 0);
      EXPECT_FALSE(has(*cache, A));
      cache->invalidate(A);
      EXPECT_EQ(cache->stats().Lookups, 1u);
      EXPECT_EQ(cache->stats().Hits, 0u);
      EXPECT_EQ(cache->stats().Inserts, 0u);
      EXPECT_EQ(cache->stats().Evictions, 0u);
      EXPECT_EQ(cache->stats().Invalidations, 0u);
    }
  }
}

TEST(RowCache, CapacityOneKeepsTheLatestRow) {
  for (CachePolicy policy : {CachePolicy::Sieve, CachePolicy::Lfu}) {
    SCOPED_TRACE(cachePolicyName(policy));
    auto cache = createRowCache(policy, 1, kRowBytes);
    put(*cache, A);
    EXPECT_TRUE(has(*cache, A)); // A visited / used twice
    put(*cache, B);              // the only candidate is A
    EXPECT_EQ(cache->size(), 1);
    EXPECT_EQ(cache->stats().Evictions, 1u);
    int64_t value = 0;
    EXPECT_TRUE(cache->lookup(B, &value));
    EXPECT_EQ(value, payload(B));
    EXPECT_FALSE(has(*cache, A));
    cache->invalidate(B);
    EXPECT_EQ(cache->size(), 0);
    put(*cache, C);
    EXPECT_EQ(cache->stats().Evictions, 1u);
    EXPECT_TRUE(has(*cache, C));
  }
}

//===----------------------------------------------------------------------===//
// Reference models
//===----------------------------------------------------------------------===//

/// SIEVE on a vector: index 0 is the tail (oldest), the back the head.
class SieveModel {
public:
  explicit SieveModel(size_t capacity) : Capacity(capacity) {}
  bool lookup(int64_t row) {
    for (Entry &e : Queue)
      if (e.Row == row)
        return e.Visited = true;
    return false;
  }
  bool contains(int64_t row) const {
    return std::any_of(Queue.begin(), Queue.end(),
                       [&](const Entry &e) { return e.Row == row; });
  }
  void insert(int64_t row) {
    if (Capacity == 0 || contains(row))
      return;
    if (Queue.size() == Capacity) {
      size_t i = Hand >= 0 ? static_cast<size_t>(Hand) : 0;
      while (Queue[i].Visited) {
        Queue[i].Visited = false;
        i = i + 1 < Queue.size() ? i + 1 : 0;
      }
      // The hand rests on the entry newer than the victim (none: the tail).
      Queue.erase(Queue.begin() + static_cast<std::ptrdiff_t>(i));
      Hand = i < Queue.size() ? static_cast<int64_t>(i) : -1;
    }
    Queue.push_back({row, false});
  }
  void invalidate(int64_t row) {
    for (size_t i = 0; i < Queue.size(); ++i) {
      if (Queue[i].Row != row)
        continue;
      // A hand on or past the entry keeps pointing at the same newer one.
      Queue.erase(Queue.begin() + static_cast<std::ptrdiff_t>(i));
      if (Hand > static_cast<int64_t>(i))
        --Hand;
      else if (Hand == static_cast<int64_t>(i) && i == Queue.size())
        Hand = -1;
      return;
    }
  }
  size_t size() const { return Queue.size(); }

private:
  struct Entry {
    int64_t Row;
    bool Visited;
  };
  size_t Capacity;
  std::vector<Entry> Queue;
  int64_t Hand = -1;
};

/// LFU by a linear scan for the smallest (count, insert number).
class LfuModel {
public:
  explicit LfuModel(size_t capacity) : Capacity(capacity) {}
  bool lookup(int64_t row) {
    for (Entry &e : Entries)
      if (e.Row == row) {
        ++e.Count;
        return true;
      }
    return false;
  }
  bool contains(int64_t row) const {
    return std::any_of(Entries.begin(), Entries.end(),
                       [&](const Entry &e) { return e.Row == row; });
  }
  void insert(int64_t row) {
    if (Capacity == 0 || contains(row))
      return;
    if (Entries.size() == Capacity) {
      size_t victim = 0;
      for (size_t i = 1; i < Entries.size(); ++i)
        if (std::make_pair(Entries[i].Count, Entries[i].Seq) <
            std::make_pair(Entries[victim].Count, Entries[victim].Seq))
          victim = i;
      Entries.erase(Entries.begin() + static_cast<std::ptrdiff_t>(victim));
    }
    Entries.push_back({row, 1, NextSeq++});
  }
  void invalidate(int64_t row) {
    for (size_t i = 0; i < Entries.size(); ++i)
      if (Entries[i].Row == row) {
        Entries.erase(Entries.begin() + static_cast<std::ptrdiff_t>(i));
        return;
      }
  }
  size_t size() const { return Entries.size(); }

private:
  struct Entry {
    int64_t Row;
    uint64_t Count, Seq;
  };
  size_t Capacity;
  std::vector<Entry> Entries;
  uint64_t NextSeq = 0;
};

template <class Model>
void compareWithModel(CachePolicy policy, size_t capacity, uint64_t seed) {
  SCOPED_TRACE(std::string(cachePolicyName(policy)) + " capacity " +
               std::to_string(capacity));
  auto cache =
      createRowCache(policy, static_cast<int64_t>(capacity), kRowBytes);
  Model model(capacity);
  std::mt19937_64 rng(seed);
  std::unordered_map<int64_t, int64_t> version; // what a hit must return
  uint64_t lookups = 0, hits = 0, invalidations = 0;
  for (int step = 0; step < 20000; ++step) {
    // Rows 0..39, skewed towards small ones so that some stay hot.
    int64_t row = static_cast<int64_t>(rng() % 40);
    if (rng() % 2)
      row = row % 8;
    uint64_t kind = rng() % 10;
    if (kind < 7) { // a read: lookup, insert on a miss
      int64_t got = -1;
      bool hit = cache->lookup(row, &got);
      ++lookups;
      ASSERT_EQ(hit, model.lookup(row)) << "step " << step << " row " << row;
      if (hit) {
        ++hits;
        ASSERT_EQ(got, payload(row, version[row]));
      } else {
        version[row] = step;
        put(*cache, row, step);
        model.insert(row);
      }
    } else if (kind < 9) { // an invalidation
      bool cached = model.contains(row);
      cache->invalidate(row);
      model.invalidate(row);
      invalidations += cached;
    } else { // a refresh (or an insert without a lookup)
      version[row] = step;
      put(*cache, row, step);
      model.insert(row);
    }
    ASSERT_EQ(cache->size(), static_cast<int64_t>(model.size()));
  }
  EXPECT_EQ(cache->stats().Lookups, lookups);
  EXPECT_EQ(cache->stats().Hits, hits);
  EXPECT_EQ(cache->stats().Invalidations, invalidations);
  EXPECT_GT(hits, 0u);
  EXPECT_GT(cache->stats().Evictions, 0u);
}

TEST(RowCache, SieveMatchesReferenceModelOnRandomStreams) {
  for (size_t capacity : {1, 2, 5, 8, 16})
    compareWithModel<SieveModel>(CachePolicy::Sieve, capacity, 11 + capacity);
}

TEST(RowCache, LfuMatchesReferenceModelOnRandomStreams) {
  for (size_t capacity : {1, 2, 5, 8, 16})
    compareWithModel<LfuModel>(CachePolicy::Lfu, capacity, 23 + capacity);
}

//===----------------------------------------------------------------------===//
// Hit rates
//===----------------------------------------------------------------------===//

/// A stream of `n` requests over `objects` objects: Zipf with exponent
/// `alpha` (object k drawn with probability proportional to 1 / (k+1)^alpha),
/// or uniform for alpha = 0. Object ids are scrambled so that popularity
/// does not follow the id.
std::vector<int64_t> requestStream(size_t objects, double alpha, size_t n,
                                   uint64_t seed) {
  std::vector<double> cdf(objects);
  double sum = 0;
  for (size_t k = 0; k < objects; ++k)
    cdf[k] = sum += std::pow(static_cast<double>(k + 1), -alpha);
  std::mt19937_64 rng(seed);
  std::vector<int64_t> ids(objects);
  for (size_t k = 0; k < objects; ++k)
    ids[k] = static_cast<int64_t>(k);
  std::shuffle(ids.begin(), ids.end(), rng);
  std::vector<int64_t> out(n);
  for (size_t i = 0; i < n; ++i) {
    double u = static_cast<double>(rng() >> 11) * 0x1.0p-53 * sum;
    size_t k = static_cast<size_t>(std::upper_bound(cdf.begin(), cdf.end(), u) -
                                   cdf.begin());
    out[i] = ids[std::min(k, objects - 1)];
  }
  return out;
}

double cacheHitRate(CachePolicy policy, size_t capacity,
                    const std::vector<int64_t> &stream) {
  auto cache =
      createRowCache(policy, static_cast<int64_t>(capacity), kRowBytes);
  for (int64_t row : stream)
    if (!has(*cache, row))
      put(*cache, row);
  return cache->stats().hitRate();
}

double fifoHitRate(size_t capacity, const std::vector<int64_t> &stream) {
  std::deque<int64_t> queue;
  std::unordered_set<int64_t> held;
  size_t hits = 0;
  for (int64_t row : stream) {
    if (held.count(row)) {
      ++hits;
      continue;
    }
    if (queue.size() == capacity) {
      held.erase(queue.front());
      queue.pop_front();
    }
    queue.push_back(row);
    held.insert(row);
  }
  return static_cast<double>(hits) / static_cast<double>(stream.size());
}

double randomHitRate(size_t capacity, const std::vector<int64_t> &stream) {
  std::vector<int64_t> slots;
  std::unordered_map<int64_t, size_t> where;
  std::mt19937_64 rng(5);
  size_t hits = 0;
  for (int64_t row : stream) {
    if (where.count(row)) {
      ++hits;
      continue;
    }
    if (slots.size() == capacity) {
      size_t victim = rng() % capacity;
      where.erase(slots[victim]);
      slots[victim] = row;
      where[row] = victim;
    } else {
      where[row] = slots.size();
      slots.push_back(row);
    }
  }
  return static_cast<double>(hits) / static_cast<double>(stream.size());
}

TEST(RowCache, SieveBeatsFifoAndRandomOnPowerLawStream) {
  const size_t objects = 10000, capacity = 500, n = 200000;
  std::vector<int64_t> skewed = requestStream(objects, 1.0, n, 42);
  double sieve = cacheHitRate(CachePolicy::Sieve, capacity, skewed);
  double lfu = cacheHitRate(CachePolicy::Lfu, capacity, skewed);
  double fifo = fifoHitRate(capacity, skewed);
  double random = randomHitRate(capacity, skewed);
  RecordProperty("sieve", std::to_string(sieve));
  RecordProperty("lfu", std::to_string(lfu));
  RecordProperty("fifo", std::to_string(fifo));
  RecordProperty("random", std::to_string(random));
  // The static Zipf stream: keeping the popular rows is what pays, so both
  // real policies clearly beat the ones that ignore hits.
  EXPECT_GT(sieve, fifo + 0.05) << "sieve " << sieve << " fifo " << fifo;
  EXPECT_GT(sieve, random + 0.05) << "sieve " << sieve << " random " << random;
  EXPECT_GT(lfu, fifo + 0.05) << "lfu " << lfu << " fifo " << fifo;

  // On a uniform stream no policy can do better than capacity / objects
  // (0.05) in expectation, and all land near it.
  std::vector<int64_t> uniform = requestStream(objects, 0.0, n, 43);
  for (double rate :
       {cacheHitRate(CachePolicy::Sieve, capacity, uniform),
        cacheHitRate(CachePolicy::Lfu, capacity, uniform),
        fifoHitRate(capacity, uniform), randomHitRate(capacity, uniform)})
    EXPECT_NEAR(rate, 0.05, 0.005);
}

} // namespace
