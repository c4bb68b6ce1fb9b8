//===- Pipeline.h - Feature fetch and the prefetching pipeline --*- C++ -*-===//
//
// Part of gnnc. The mini-batch pipeline runs, for every step of an epoch:
//
//   item sampler -> neighbour sampler -> feature fetch -> (queue) -> model
//
// Sampling and fetching run ahead of the model on worker threads, into a
// bounded queue of prepared batches. Batches come out in step order and
// with the same content whatever the number of workers: every stage is a
// function of (epoch, step) (see ItemSampler.h and NeighborSampler.h).
//
// A feature source whose gather is a collective (a distributed tensor of
// the `distributed` memory type, where every rank must call gather in the
// same order) is fetched by one thread in step order; a local one is
// fetched by the worker that sampled the batch.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_SAMPLE_PIPELINE_H
#define GNNC_SAMPLE_PIPELINE_H

#include "gnnc/sample/FixedSize.h"
#include "gnnc/sample/ItemSampler.h"
#include "gnnc/sample/NeighborSampler.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace gnnc::dist {
class DistTensor;
class RowCache;
} // namespace gnnc::dist

namespace gnnc::sample {

/// Rows of float32 features by vertex id.
class FeatureSource {
public:
  virtual ~FeatureSource();
  virtual int64_t numRows() const = 0;
  virtual int64_t dim() const = 0;
  /// Writes rows ids[0..n) into out (n * dim() floats). Ids out of range
  /// are an error naming the first one.
  virtual Status gather(const int64_t *ids, int64_t n, float *out) = 0;
  /// Whether gather is a collective that every rank must call in the same
  /// order (the pipeline then fetches on one thread, in step order).
  virtual bool collective() const { return false; }
  /// Lookups and hits of the source's cache, if it has one.
  virtual int64_t cacheLookups() const { return 0; }
  virtual int64_t cacheHits() const { return 0; }
};

/// A borrowed row-major rows x dim float array.
std::unique_ptr<FeatureSource> localFeatures(const float *data, int64_t rows,
                                             int64_t dim);

/// Options of distFeatures' cache of rows owned by other ranks.
struct FeatureCacheOptions {
  /// Rows to cache (0: no cache).
  int64_t Capacity = 0;
  /// "sieve" or "lfu" (gnnc_dist's RowCache policies).
  std::string Policy = "sieve";
};

/// The rows of a float32 2-D distributed tensor (gnnc_dist), with an
/// optional cache of rows owned by other ranks (read-only features: a
/// cached row never goes stale). Gathers through the tensor are collective
/// for the distributed memory type; continuous and chunked tensors are read
/// directly through their mapping, which needs no communication.
Status distFeatures(dist::DistTensor &tensor, const FeatureCacheOptions &cache,
                    std::unique_ptr<FeatureSource> &out);

/// The sampling view of a graph held in two 1-D int64 distributed tensors
/// of the continuous memory type, which every rank of a node maps whole:
/// `inPtr` (V + 1 offsets) and `inSrc` (E sources), the graph's CSR by
/// destination. Other memory types are an error: a rank of those maps only
/// its own rows, and the sampler reads any vertex's row.
Status distGraphView(dist::DistTensor &inPtr, dist::DistTensor &inSrc,
                     GraphView &out);

/// Where a pipeline's time went (seconds, summed over its threads where
/// several run a stage at once) and what it produced.
struct PipelineReport {
  int64_t Batches = 0;
  int64_t Seeds = 0;
  int64_t SampledEdges = 0;
  int64_t InputVertices = 0;
  double ItemSeconds = 0;   ///< item sampling
  double SampleSeconds = 0; ///< neighbour sampling (blocks)
  double FetchSeconds = 0;  ///< feature (and label) fetch
  double GraphSeconds = 0;  ///< building the rt::Graph of each block
  double PadSeconds = 0;    ///< padding to fixed sizes (and trimming)
  /// The consumer's time between next() calls of one epoch.
  double ComputeSeconds = 0;
  double WaitSeconds = 0; ///< the consumer waiting inside next()
  /// Per epoch from the first next() to the last, summed over epochs.
  double WallSeconds = 0;
  int64_t CacheLookups = 0, CacheHits = 0;
  /// Fixed-size batches (PipelineOptions::FixedSize): batches skipped
  /// (Oversize::Skip, not delivered and not counted in Batches), batches
  /// trimmed and the sampled edges trimming dropped; and, summed over the
  /// delivered batches and their levels (blocks), the real vertices (edges)
  /// and their padded counts. With padding, SampledEdges and InputVertices
  /// count real edges and real input vertices.
  int64_t SkippedBatches = 0, TrimmedBatches = 0, TrimmedEdges = 0;
  int64_t RealVertices = 0, PaddedVertices = 0;
  int64_t RealEdges = 0, PaddedEdges = 0;

  /// One line: batches/s, sampled edges/s and the split of the time.
  std::string summary() const;
};

struct PipelineOptions {
  /// Worker threads that sample (and fetch local features). 0 runs every
  /// stage on the consumer's thread inside next(), with nothing ahead.
  int Workers = 1;
  /// Prepared batches that may wait in the queue (>= 1).
  int Prefetch = 4;
  /// Stages that can be turned off for measurement: without Sample, a batch
  /// holds its seeds only; without Fetch, no features or labels.
  bool Sample = true;
  bool Fetch = true;
  /// Also build each block's rt::Graph (MiniBatch::Graphs) on the workers.
  bool BuildGraphs = false;
  /// Pad every batch to fixed capacities (FixedSize.h), after sampling and
  /// the feature fetch and before the graphs are built. Needs Sample and a
  /// sampler with as many hops as the capacities. Batches skipped by
  /// Oversize::Skip are not delivered: next() returns the following one.
  std::optional<FixedSizeOptions> FixedSize;
};

/// A prepared batch: the mini-batch, and its blocks as runtime graphs when
/// PipelineOptions::BuildGraphs is set.
struct PreparedBatch {
  MiniBatch Batch;
  std::vector<rt::Graph> Graphs;
};

/// Where a pipeline takes its seeds from: a single-process or a
/// distributed item sampler.
class SeedSource {
public:
  virtual ~SeedSource();
  virtual int64_t numBatches() const = 0;
  virtual Status batch(uint64_t epoch, int64_t step,
                       std::vector<int64_t> &out) const = 0;
};
std::unique_ptr<SeedSource> seedsOf(const ItemSampler &sampler);
std::unique_ptr<SeedSource> seedsOf(const DistributedItemSampler &sampler);

class Pipeline {
public:
  /// `seeds`, `sampler`, `features` (may be null) and `labels` (may be
  /// null: NumRows int64 labels) are borrowed for the pipeline's lifetime.
  static Status create(const SeedSource &seeds, const NeighborSampler *sampler,
                       FeatureSource *features, const int64_t *labels,
                       const PipelineOptions &options,
                       std::unique_ptr<Pipeline> &out);
  ~Pipeline();

  /// Starts an epoch: workers begin preparing its batches. An epoch still
  /// running is stopped first.
  Status startEpoch(uint64_t epoch);
  /// The next batch of the epoch in step order; `done` is set (and `out`
  /// left alone) after the last one. The first error of any stage is
  /// returned here, once, and ends the epoch.
  Status next(PreparedBatch &out, bool &done);
  /// Stops the epoch's workers (also done by the destructor).
  void stop();
  /// Hands a batch that the consumer is done with back to the pipeline,
  /// which prepares a later batch in its storage: no allocation, page
  /// faults or zero-filling of the feature rows once batches stop growing.
  /// Optional.
  void recycle(PreparedBatch &&batch);

  /// A copy of the report so far (safe while workers run).
  PipelineReport report() const;
  void resetReport();

  struct Impl;

private:
  Pipeline();
  std::unique_ptr<Impl> P;
};

} // namespace gnnc::sample

#endif // GNNC_SAMPLE_PIPELINE_H
