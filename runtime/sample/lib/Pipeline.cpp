//===- Pipeline.cpp - Feature fetch and the prefetching pipeline ----------===//
//
// Part of gnnc. Worker threads claim steps in order, at most Prefetch ahead
// of the consumer, and prepare them (seeds, blocks, local features, runtime
// graphs) into slots keyed by step; a collective feature source is fetched
// by one more thread in step order. The consumer takes the slots in step
// order, so what it sees does not depend on the number of workers or on
// their timing. An error is stored in its step's slot and returned when the
// consumer reaches that step.
//
//===----------------------------------------------------------------------===//

#include "gnnc/sample/Pipeline.h"

#include "gnnc/dist/DistTensor.h"
#include "gnnc/dist/Embedding.h"

#include <fmt/format.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

namespace gnnc::sample {

namespace {
using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}
} // namespace

FeatureSource::~FeatureSource() = default;
SeedSource::~SeedSource() = default;

//===----------------------------------------------------------------------===//
// Feature sources
//===----------------------------------------------------------------------===//

namespace {
/// Rows a gather loads ahead of the one it copies: the rows are scattered
/// over a table much larger than the caches.
constexpr int64_t kRowsAhead = 4;

/// Copies rows ids[0..n) (checked) of the row-major `data` with `dim`
/// columns into `out`, loading the cache lines of later rows early.
void copyRows(const float *data, int64_t dim, const int64_t *ids, int64_t n,
              float *out) {
  size_t bytes = static_cast<size_t>(dim) * sizeof(float);
  for (int64_t i = 0; i < n; ++i) {
    if (i + kRowsAhead < n) {
      const char *row =
          reinterpret_cast<const char *>(data + ids[i + kRowsAhead] * dim);
      for (size_t b = 0; b < bytes; b += 64)
        __builtin_prefetch(row + b);
    }
    std::memcpy(out + i * dim, data + ids[i] * dim, bytes);
  }
}

Status outOfRange(int64_t id, int64_t position, int64_t rows) {
  return Status::error(fmt::format(
      "feature fetch: vertex {} at position {} is outside [0, {})", id,
      position, rows));
}

class LocalFeatures final : public FeatureSource {
public:
  LocalFeatures(const float *data, int64_t rows, int64_t dim)
      : Data(data), Rows(rows), Dim(dim) {}
  int64_t numRows() const override { return Rows; }
  int64_t dim() const override { return Dim; }
  Status gather(const int64_t *ids, int64_t n, float *out) override {
    for (int64_t i = 0; i < n; ++i)
      if (ids[i] < 0 || ids[i] >= Rows)
        return outOfRange(ids[i], i, Rows);
    copyRows(Data, Dim, ids, n, out);
    return Status::success();
  }

private:
  const float *Data;
  int64_t Rows, Dim;
};

/// Rows of a float32 DistTensor. A continuous tensor is read through its
/// mapping; otherwise this rank's own rows are copied from its local data,
/// the others looked up in the cache, and the misses gathered in one
/// collective call per fetch (made even when there are none, so that every
/// rank takes part). An out-of-range id goes to the collective too, which
/// reports it on every rank.
class DistFeatures final : public FeatureSource {
public:
  DistFeatures(dist::DistTensor &t, std::unique_ptr<dist::RowCache> cache)
      : T(t), Cache(std::move(cache)) {}
  int64_t numRows() const override { return T.rows(); }
  int64_t dim() const override { return T.cols(); }
  bool collective() const override { return T.globalData() == nullptr; }
  int64_t cacheLookups() const override {
    return Cache ? Cache->stats().Lookups : 0;
  }
  int64_t cacheHits() const override { return Cache ? Cache->stats().Hits : 0; }

  Status gather(const int64_t *ids, int64_t n, float *out) override {
    int64_t dim = T.cols(), rows = T.rows();
    size_t bytes = static_cast<size_t>(dim) * sizeof(float);
    if (const auto *all = static_cast<const float *>(T.globalData())) {
      for (int64_t i = 0; i < n; ++i)
        if (ids[i] < 0 || ids[i] >= rows)
          return outOfRange(ids[i], i, rows);
      copyRows(all, dim, ids, n, out);
      return Status::success();
    }
    int64_t first = T.localRowBegin(), count = T.localRows();
    const auto *mine = static_cast<const float *>(T.localData());
    Misses.clear();
    MissAt.clear();
    for (int64_t i = 0; i < n; ++i) {
      int64_t id = ids[i];
      if (id >= first && id < first + count) {
        std::memcpy(out + i * dim, mine + (id - first) * dim, bytes);
      } else if (!(Cache && id >= 0 && id < rows &&
                   Cache->lookup(id, out + i * dim))) {
        Misses.push_back(id);
        MissAt.push_back(i);
      }
    }
    Buffer.resize(Misses.size() * dim);
    GNNC_TRY(T.gather(Misses.data(), Misses.size(), Buffer.data()));
    for (size_t m = 0; m < Misses.size(); ++m) {
      std::memcpy(out + MissAt[m] * dim, Buffer.data() + m * dim, bytes);
      if (Cache)
        Cache->insert(Misses[m], Buffer.data() + m * dim);
    }
    return Status::success();
  }

private:
  dist::DistTensor &T;
  std::unique_ptr<dist::RowCache> Cache;
  std::vector<int64_t> Misses, MissAt;
  std::vector<float> Buffer;
};
} // namespace

std::unique_ptr<FeatureSource> localFeatures(const float *data, int64_t rows,
                                             int64_t dim) {
  return std::make_unique<LocalFeatures>(data, rows, dim);
}

Status distFeatures(dist::DistTensor &tensor, const FeatureCacheOptions &cache,
                    std::unique_ptr<FeatureSource> &out) {
  std::string what = "feature fetch: " + tensor.name();
  if (tensor.dtype() != rt::DType::Float32 || tensor.dims() != 2)
    return Status::error(what + ": needs a 2-D float32 tensor");
  if (tensor.location() != dist::MemoryLocation::Host)
    return Status::error(what + ": needs a host tensor");
  if (cache.Capacity < 0)
    return Status::error(fmt::format("{}: cache capacity {} is negative", what,
                                     cache.Capacity));
  std::unique_ptr<dist::RowCache> rowCache;
  if (cache.Capacity > 0) {
    dist::CachePolicy policy;
    if (cache.Policy == "sieve")
      policy = dist::CachePolicy::Sieve;
    else if (cache.Policy == "lfu")
      policy = dist::CachePolicy::Lfu;
    else
      return Status::error(fmt::format(
          "{}: unknown cache policy '{}' (sieve or lfu)", what, cache.Policy));
    rowCache = dist::createRowCache(policy, cache.Capacity, tensor.rowBytes());
  }
  out = std::make_unique<DistFeatures>(tensor, std::move(rowCache));
  return Status::success();
}

Status distGraphView(dist::DistTensor &inPtr, dist::DistTensor &inSrc,
                     GraphView &out) {
  for (dist::DistTensor *t : {&inPtr, &inSrc}) {
    std::string what = "sampling graph: " + t->name();
    if (t->dtype() != rt::DType::Int64 || t->dims() != 1)
      return Status::error(what + ": needs a 1-D int64 tensor");
    if (t->location() != dist::MemoryLocation::Host || !t->globalData())
      return Status::error(fmt::format(
          "{}: needs the continuous memory type on the host, so that every "
          "rank reads every row (it is {} on the {})",
          what, dist::memoryTypeName(t->type()),
          dist::memoryLocationName(t->location())));
  }
  if (inPtr.rows() < 1)
    return Status::error("sampling graph: " + inPtr.name() +
                         ": needs at least one offset");
  GraphView v;
  v.NumVertices = inPtr.rows() - 1;
  v.InPtr = static_cast<const int64_t *>(inPtr.globalData());
  v.InSrc = static_cast<const int64_t *>(inSrc.globalData());
  if (v.InPtr[v.NumVertices] != inSrc.rows())
    return Status::error(fmt::format(
        "sampling graph: the last offset of {} is {}, but {} has {} rows",
        inPtr.name(), v.InPtr[v.NumVertices], inSrc.name(), inSrc.rows()));
  GNNC_TRY(v.check());
  out = v;
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Seed sources
//===----------------------------------------------------------------------===//

namespace {
template <typename Sampler> class SeedsOf final : public SeedSource {
public:
  explicit SeedsOf(const Sampler &s) : S(s) {}
  int64_t numBatches() const override { return S.numBatches(); }
  Status batch(uint64_t epoch, int64_t step,
               std::vector<int64_t> &out) const override {
    return S.batch(epoch, step, out);
  }

private:
  const Sampler &S;
};
} // namespace

std::unique_ptr<SeedSource> seedsOf(const ItemSampler &sampler) {
  return std::make_unique<SeedsOf<ItemSampler>>(sampler);
}
std::unique_ptr<SeedSource> seedsOf(const DistributedItemSampler &sampler) {
  return std::make_unique<SeedsOf<DistributedItemSampler>>(sampler);
}

//===----------------------------------------------------------------------===//
// Report
//===----------------------------------------------------------------------===//

std::string PipelineReport::summary() const {
  double wall = WallSeconds > 0 ? WallSeconds : 1e-300;
  std::string s = fmt::format(
      "{} batches in {:.3f} s: {:.1f} batches/s, {:.3g} sampled edges/s; "
      "sample {:.3f} s, fetch {:.3f} s, graphs {:.3f} s (worker seconds), "
      "compute {:.3f} s, wait {:.3f} s",
      Batches, WallSeconds, Batches / wall, SampledEdges / wall,
      ItemSeconds + SampleSeconds, FetchSeconds, GraphSeconds, ComputeSeconds,
      WaitSeconds);
  if (CacheLookups > 0)
    s += fmt::format(", cache hit rate {:.3f}",
                     static_cast<double>(CacheHits) / CacheLookups);
  if (PaddedVertices > 0 || SkippedBatches > 0) {
    auto share = [](int64_t real, int64_t padded) {
      return padded > 0 ? static_cast<double>(real) / padded : 0.0;
    };
    s += fmt::format(
        "; fixed size: pad {:.3f} s, {} skipped, {} trimmed ({} edges), "
        "real/padded vertices {}/{} ({:.3f}), edges {}/{} ({:.3f})",
        PadSeconds, SkippedBatches, TrimmedBatches, TrimmedEdges, RealVertices,
        PaddedVertices, share(RealVertices, PaddedVertices), RealEdges,
        PaddedEdges, share(RealEdges, PaddedEdges));
  }
  return s;
}

//===----------------------------------------------------------------------===//
// Pipeline
//===----------------------------------------------------------------------===//

struct Pipeline::Impl {
  const SeedSource *Seeds = nullptr;
  const NeighborSampler *Sampler = nullptr;
  FeatureSource *Features = nullptr;
  const int64_t *Labels = nullptr;
  PipelineOptions Options;
  bool CollectiveFetch = false;

  struct Slot {
    bool Sampled = false; ///< prepared by a worker
    bool Ready = false;   ///< and fetched
    Status Error;
    PreparedBatch Batch;
    /// What padding did (PipelineOptions::FixedSize).
    PadOutcome Outcome;
  };

  std::mutex M;
  std::condition_variable Changed;
  uint64_t Epoch = 0;
  bool Running = false, Stopping = false;
  int64_t NumSteps = 0, NextClaim = 0, NextConsume = 0, NextFetch = 0;
  std::map<int64_t, Slot> Slots;
  /// Batches handed back by recycle(), whose storage the next ones reuse.
  std::vector<PreparedBatch> Spare;
  std::vector<std::thread> Threads;
  SamplerScratch InlineScratch;
  Padder InlinePadder;

  PipelineReport Report;
  /// Whether next() was called in this epoch; the wall time of earlier
  /// epochs; when this epoch's first next() came; the last return.
  bool Started = false;
  double EarlierWall = 0;
  Clock::time_point FirstCall, LastReturn;

  /// A recycled batch, or a new one (M held).
  PreparedBatch takeSpare() {
    if (Spare.empty())
      return PreparedBatch();
    PreparedBatch pb = std::move(Spare.back());
    Spare.pop_back();
    return pb;
  }

  int64_t vertexLimit() const {
    if (Sampler)
      return Sampler->graph().NumVertices;
    if (Features)
      return Features->numRows();
    return INT64_MAX;
  }

  /// Hands a batch's storage back for later batches (M held).
  void keepSpare(PreparedBatch &&pb) {
    // Enough for every batch that can be in preparation or waiting.
    size_t keep = static_cast<size_t>(Options.Prefetch + Options.Workers) + 1;
    if (Spare.size() < keep)
      Spare.push_back(std::move(pb));
  }

  /// Seeds, blocks and, unless `fetchLater`, features, padding and graphs
  /// of `step` (with `fetchLater`, the graphs too when there is no
  /// padding, which must follow the fetch); the stage times are added to
  /// `r`.
  Status prepare(int64_t step, SamplerScratch &scratch, Padder &padder,
                 bool fetchLater, PreparedBatch &pb, PipelineReport &r,
                 PadOutcome &outcome) {
    MiniBatch &b = pb.Batch;
    auto t = Clock::now();
    GNNC_TRY(Seeds->batch(Epoch, step, b.Seeds));
    r.ItemSeconds += secondsSince(t);
    if (Options.Sample && Sampler) {
      t = Clock::now();
      std::vector<int64_t> seeds = std::move(b.Seeds);
      // The sampler empties the features; keep a recycled batch's storage
      // for the fetch below.
      std::vector<float> features = std::move(b.Features);
      GNNC_TRY(Sampler->sample(seeds, Epoch, step, scratch, b));
      b.Features = std::move(features);
      // A recycled batch may have been padded; its masks' storage is kept
      // for the padding below.
      b.Padded = false;
      r.SampleSeconds += secondsSince(t);
    } else {
      b.Epoch = Epoch;
      b.Step = step;
      b.Blocks.clear();
      int64_t limit = vertexLimit();
      for (size_t i = 0; i < b.Seeds.size(); ++i)
        if (b.Seeds[i] < 0 || b.Seeds[i] >= limit)
          return Status::error(fmt::format(
              "pipeline: seed {} at position {} is outside [0, {})",
              b.Seeds[i], i, limit));
    }
    if (fetchLater)
      return Options.FixedSize ? Status::success() : buildGraphs(pb, r);
    GNNC_TRY(fetch(b, r));
    return finish(pb, padder, r, outcome);
  }

  /// Pads a fetched batch (PipelineOptions::FixedSize) and builds its
  /// graphs, unless padding skips it.
  Status finish(PreparedBatch &pb, Padder &padder, PipelineReport &r,
                PadOutcome &outcome) {
    if (Options.FixedSize) {
      auto t = Clock::now();
      const FixedSizeOptions &fs = *Options.FixedSize;
      Status st = padder.pad(pb.Batch, fs.Caps, fs.Policy, outcome);
      r.PadSeconds += secondsSince(t);
      GNNC_TRY(st);
      if (outcome.Result == PadResult::Skipped)
        return Status::success();
    }
    return buildGraphs(pb, r);
  }

  Status buildGraphs(PreparedBatch &pb, PipelineReport &r) {
    if (!Options.BuildGraphs)
      return Status::success();
    auto t = Clock::now();
    const std::vector<Block> &blocks = pb.Batch.Blocks;
    pb.Graphs.resize(blocks.size());
    for (size_t i = 0; i < blocks.size(); ++i)
      GNNC_TRY(blocks[i].toGraph(pb.Graphs[i]));
    r.GraphSeconds += secondsSince(t);
    return Status::success();
  }

  Status fetch(MiniBatch &b, PipelineReport &r) {
    if (!Options.Fetch) {
      b.Features.clear();
      b.Labels.clear();
      b.FeatureDim = 0;
      return Status::success();
    }
    auto t = Clock::now();
    if (Features) {
      const std::vector<int64_t> &ids = b.inputIds();
      b.FeatureDim = Features->dim();
      b.Features.resize(ids.size() * b.FeatureDim);
      GNNC_TRY(Features->gather(ids.data(), static_cast<int64_t>(ids.size()),
                                b.Features.data()));
    }
    if (Labels) {
      b.Labels.resize(b.Seeds.size());
      for (size_t i = 0; i < b.Seeds.size(); ++i)
        b.Labels[i] = Labels[b.Seeds[i]];
    }
    r.FetchSeconds += secondsSince(t);
    return Status::success();
  }

  void addStages(const PipelineReport &r) {
    Report.ItemSeconds += r.ItemSeconds;
    Report.SampleSeconds += r.SampleSeconds;
    Report.FetchSeconds += r.FetchSeconds;
    Report.GraphSeconds += r.GraphSeconds;
    Report.PadSeconds += r.PadSeconds;
  }

  /// Adds a delivered batch to the report.
  void account(const MiniBatch &b, const PadOutcome &outcome) {
    Report.Batches += 1;
    Report.Seeds += static_cast<int64_t>(b.Seeds.size());
    if (Options.FixedSize) {
      Report.TrimmedBatches += outcome.Result == PadResult::Trimmed;
      Report.TrimmedEdges += outcome.TrimmedEdges;
      Report.RealVertices += outcome.realVertices();
      Report.PaddedVertices += outcome.paddedVertices();
      Report.RealEdges += outcome.realEdges();
      Report.PaddedEdges += outcome.paddedEdges();
      Report.SampledEdges += outcome.realEdges();
      Report.InputVertices += outcome.RealVertices.front();
    } else {
      Report.SampledEdges += b.numSampledEdges();
      Report.InputVertices += static_cast<int64_t>(b.inputIds().size());
    }
  }

  void worker() {
    SamplerScratch scratch;
    Padder padder;
    std::unique_lock<std::mutex> lock(M);
    while (true) {
      Changed.wait(lock, [&] {
        return Stopping ||
               (NextClaim < NumSteps && NextClaim < NextConsume + Options.Prefetch);
      });
      if (Stopping)
        return;
      int64_t step = NextClaim++;
      PreparedBatch pb = takeSpare();
      lock.unlock();
      PipelineReport r;
      PadOutcome outcome;
      Status st =
          prepare(step, scratch, padder, CollectiveFetch, pb, r, outcome);
      lock.lock();
      addStages(r);
      Slot &slot = Slots[step];
      slot.Sampled = true;
      slot.Ready = !CollectiveFetch || !st.ok() || !Options.Fetch;
      slot.Error = st;
      slot.Batch = std::move(pb);
      slot.Outcome = std::move(outcome);
      Changed.notify_all();
    }
  }

  /// Fetches a collective source in step order. It stops at the first
  /// failed step: the consumer ends the epoch there.
  void fetcher() {
    Padder padder;
    std::unique_lock<std::mutex> lock(M);
    while (true) {
      Changed.wait(lock, [&] {
        if (Stopping || NextFetch >= NumSteps)
          return true;
        auto it = Slots.find(NextFetch);
        return it != Slots.end() && it->second.Sampled;
      });
      if (Stopping || NextFetch >= NumSteps)
        return;
      Slot &slot = Slots[NextFetch];
      if (!slot.Error.ok())
        return;
      lock.unlock();
      PipelineReport r;
      Status st = fetch(slot.Batch.Batch, r);
      if (st.ok() && Options.FixedSize)
        st = finish(slot.Batch, padder, r, slot.Outcome);
      lock.lock();
      addStages(r);
      slot.Error = st;
      slot.Ready = true;
      ++NextFetch;
      Changed.notify_all();
      if (!st.ok())
        return;
    }
  }

  void stop() {
    {
      std::lock_guard<std::mutex> lock(M);
      Stopping = true;
    }
    Changed.notify_all();
    for (std::thread &t : Threads)
      t.join();
    Threads.clear();
    Slots.clear();
    Running = false;
  }
};

Pipeline::Pipeline() : P(std::make_unique<Impl>()) {}
Pipeline::~Pipeline() { P->stop(); }

Status Pipeline::create(const SeedSource &seeds, const NeighborSampler *sampler,
                        FeatureSource *features, const int64_t *labels,
                        const PipelineOptions &options,
                        std::unique_ptr<Pipeline> &out) {
  if (options.Workers < 0)
    return Status::error(fmt::format(
        "pipeline: {} workers; use 0 (no threads) or more", options.Workers));
  if (options.Prefetch < 1)
    return Status::error(fmt::format(
        "pipeline: prefetch depth {} must be at least 1", options.Prefetch));
  if (options.FixedSize) {
    const Capacities &caps = options.FixedSize->Caps;
    if (Status st = caps.check(); !st.ok())
      return Status::error("pipeline: fixed size: " + st.message());
    if (!options.Sample || !sampler)
      return Status::error(
          "pipeline: fixed-size batches need the sampling stage and a "
          "sampler");
    if (sampler->numHops() != caps.numHops())
      return Status::error(fmt::format(
          "pipeline: fixed size: the sampler has {} hops, the capacities {}",
          sampler->numHops(), caps.numHops()));
  }
  if (sampler && features &&
      features->numRows() != sampler->graph().NumVertices)
    return Status::error(fmt::format(
        "pipeline: the features have {} rows but the graph has {} vertices",
        features->numRows(), sampler->graph().NumVertices));
  std::unique_ptr<Pipeline> p(new Pipeline());
  Impl &i = *p->P;
  i.Seeds = &seeds;
  i.Sampler = sampler;
  i.Features = features;
  i.Labels = labels;
  i.Options = options;
  i.CollectiveFetch = features && features->collective() && options.Fetch &&
                      options.Workers > 0;
  out = std::move(p);
  return Status::success();
}

Status Pipeline::startEpoch(uint64_t epoch) {
  Impl &i = *P;
  i.stop();
  i.Epoch = epoch;
  i.NumSteps = i.Seeds->numBatches();
  i.NextClaim = i.NextConsume = i.NextFetch = 0;
  i.Stopping = false;
  i.Running = true;
  // What the consumer does between epochs (evaluation, say) is neither
  // compute nor wall time of the pipeline.
  if (i.Started)
    i.EarlierWall = i.Report.WallSeconds;
  i.Started = false;
  for (int w = 0; w < i.Options.Workers; ++w)
    i.Threads.emplace_back([&i] { i.worker(); });
  if (i.CollectiveFetch)
    i.Threads.emplace_back([&i] { i.fetcher(); });
  return Status::success();
}

Status Pipeline::next(PreparedBatch &out, bool &done) {
  Impl &i = *P;
  auto enter = Clock::now();
  if (!i.Started) {
    i.Started = true;
    i.FirstCall = enter;
  } else {
    i.Report.ComputeSeconds +=
        std::chrono::duration<double>(enter - i.LastReturn).count();
  }
  auto leave = [&](Status st) {
    i.LastReturn = Clock::now();
    i.Report.WallSeconds =
        i.EarlierWall +
        std::chrono::duration<double>(i.LastReturn - i.FirstCall).count();
    return st;
  };
  done = false;
  if (!i.Running)
    return leave(Status::error("pipeline: next() before startEpoch()"));
  // Batches that padding skips are not delivered: take the next one.
  PadOutcome outcome;
  while (true) {
    if (i.NextConsume >= i.NumSteps) {
      done = true;
      return leave(Status::success());
    }
    int64_t step = i.NextConsume;
    PreparedBatch pb;
    if (i.Options.Workers == 0) {
      {
        std::lock_guard<std::mutex> lock(i.M);
        pb = i.takeSpare();
      }
      PipelineReport r;
      Status st = i.prepare(step, i.InlineScratch, i.InlinePadder, false, pb, r,
                            outcome);
      i.addStages(r);
      if (!st.ok()) {
        i.Running = false;
        return leave(st);
      }
      ++i.NextConsume;
    } else {
      std::unique_lock<std::mutex> lock(i.M);
      auto waitFrom = Clock::now();
      i.Changed.wait(lock, [&] {
        auto it = i.Slots.find(step);
        return it != i.Slots.end() && it->second.Ready;
      });
      i.Report.WaitSeconds += secondsSince(waitFrom);
      auto it = i.Slots.find(step);
      Status st = it->second.Error;
      pb = std::move(it->second.Batch);
      outcome = std::move(it->second.Outcome);
      i.Slots.erase(it);
      ++i.NextConsume;
      lock.unlock();
      i.Changed.notify_all();
      if (!st.ok()) {
        i.stop();
        return leave(st);
      }
    }
    if (i.Options.FixedSize && outcome.Result == PadResult::Skipped) {
      std::lock_guard<std::mutex> lock(i.M);
      i.Report.SkippedBatches += 1;
      i.keepSpare(std::move(pb));
      continue;
    }
    out = std::move(pb);
    break;
  }
  i.account(out.Batch, outcome);
  if (i.Features) {
    i.Report.CacheLookups = i.Features->cacheLookups();
    i.Report.CacheHits = i.Features->cacheHits();
  }
  return leave(Status::success());
}

void Pipeline::stop() { P->stop(); }

void Pipeline::recycle(PreparedBatch &&batch) {
  std::lock_guard<std::mutex> lock(P->M);
  P->keepSpare(std::move(batch));
}

PipelineReport Pipeline::report() const {
  std::lock_guard<std::mutex> lock(P->M);
  return P->Report;
}

void Pipeline::resetReport() {
  std::lock_guard<std::mutex> lock(P->M);
  P->Report = PipelineReport();
  P->Started = false;
  P->EarlierWall = 0;
}

} // namespace gnnc::sample
