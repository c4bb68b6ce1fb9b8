//===- ItemSampler.h - Seed batches for mini-batch training -----*- C++ -*-===//
//
// Part of gnnc. An item sampler turns a set of items (the training vertices)
// into the seed batches of one epoch: fixed batch size, an optional shuffle
// and an optional drop of the last, partial batch.
//
// Every batch is a pure function of (items, options, epoch, step): the
// shuffle of an epoch is a permutation drawn from a counter-based generator
// keyed by (seed, epoch), so batches can be produced out of order, by
// several threads, or again after a restart, and are always the same.
//
// The distributed item sampler gives each rank of a world its share. Two
// ways to share are offered:
//
//   * SplitItems (GraphBolt's DistributedItemSampler): the items are split
//     into contiguous per-rank ranges first (the first `items % ranks` ranks
//     get one more), then each rank shuffles and batches its own range. With
//     dropUnevenInputs every rank yields the same number of batches, the
//     smallest any rank has, so that no rank waits in a collective for a
//     peer that has run out.
//   * SplitBatches: the epoch's global batches of `batchSize * ranks` items
//     are made as a single-process sampler would make them, and each rank
//     takes its contiguous part of each. Step s of every rank together is
//     exactly global batch s: a data-parallel run sees the same seeds as a
//     single process with the global batch size. Every rank has the same
//     number of steps (a rank whose part of the last batch is empty gets an
//     empty batch).
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_SAMPLE_ITEMSAMPLER_H
#define GNNC_SAMPLE_ITEMSAMPLER_H

#include "gnnc/runtime/Status.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace gnnc::sample {

using rt::Status;

/// Options of an item sampler.
struct ItemSamplerOptions {
  /// Items per batch (> 0).
  int64_t BatchSize = 1;
  /// Shuffle the items anew every epoch.
  bool Shuffle = false;
  /// Drop the last batch when it is not full.
  bool DropLast = false;
  /// Key of the shuffle (with the epoch).
  uint64_t Seed = 0;
};

/// Batches of a list of items (vertex ids), one epoch at a time.
class ItemSampler {
public:
  /// Checks the options (batch size > 0). `items` is copied.
  static Status create(std::vector<int64_t> items,
                       const ItemSamplerOptions &options, ItemSampler &out);

  /// The items whose mask byte is non-zero, in increasing order (e.g. a
  /// dataset's TrainMask).
  static std::vector<int64_t> itemsOfMask(const std::vector<uint8_t> &mask);

  int64_t numItems() const { return static_cast<int64_t>(Items.size()); }
  const ItemSamplerOptions &options() const { return Options; }

  /// Number of batches of every epoch.
  int64_t numBatches() const;

  /// Writes batch `step` (0 <= step < numBatches()) of `epoch` into `out`.
  /// Thread-safe: concurrent calls for different steps of the same epoch
  /// share the epoch's permutation.
  Status batch(uint64_t epoch, int64_t step, std::vector<int64_t> &out) const;

private:
  friend class DistributedItemSampler;
  /// The items in the order of `epoch` (shuffled or not).
  std::shared_ptr<const std::vector<int64_t>> order(uint64_t epoch) const;

  std::vector<int64_t> Items;
  ItemSamplerOptions Options;
  struct EpochCache;
  std::shared_ptr<EpochCache> Cache;
};

/// How a distributed item sampler shares the items among ranks.
enum class ItemSplit { SplitItems, SplitBatches };

struct DistributedItemSamplerOptions : ItemSamplerOptions {
  ItemSplit Split = ItemSplit::SplitItems;
  /// SplitItems only: every rank yields the smallest number of batches any
  /// rank has (after DropLast).
  bool DropUnevenInputs = false;
};

/// The share of rank `rank` of `ranks` of an item sampler. It needs no
/// communication: every rank computes every rank's counts from the item count
/// alone.
class DistributedItemSampler {
public:
  static Status create(std::vector<int64_t> items,
                       const DistributedItemSamplerOptions &options,
                       int rank, int ranks, DistributedItemSampler &out);

  int rank() const { return Rank; }
  int ranks() const { return Ranks; }
  /// Number of batches this rank yields every epoch.
  int64_t numBatches() const { return NumBatches; }
  /// This rank's batch `step` of `epoch`.
  Status batch(uint64_t epoch, int64_t step, std::vector<int64_t> &out) const;

private:
  DistributedItemSamplerOptions Options;
  int Rank = 0, Ranks = 1;
  int64_t NumBatches = 0;
  /// SplitItems: the sampler over this rank's range; SplitBatches: the
  /// single-process sampler with the global batch size.
  ItemSampler Local;
};

} // namespace gnnc::sample

#endif // GNNC_SAMPLE_ITEMSAMPLER_H
