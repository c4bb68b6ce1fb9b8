//===- ItemSampler.cpp - Seed batches for mini-batch training -------------===//
//
// Part of gnnc.
//
//===----------------------------------------------------------------------===//

#include "gnnc/sample/ItemSampler.h"

#include "Counter.h"

#include <fmt/format.h>

#include <algorithm>
#include <mutex>

namespace gnnc::sample {

/// The permutation of the last epoch asked for, shared by the copies of a
/// sampler and by the threads that ask for batches of that epoch.
struct ItemSampler::EpochCache {
  std::mutex Mutex;
  bool Valid = false;
  uint64_t Epoch = 0;
  std::shared_ptr<const std::vector<int64_t>> Order;
};

static Status checkOptions(const ItemSamplerOptions &options) {
  if (options.BatchSize <= 0)
    return Status::error(fmt::format(
        "item sampler: the batch size must be positive, got {}",
        options.BatchSize));
  return Status::success();
}

Status ItemSampler::create(std::vector<int64_t> items,
                           const ItemSamplerOptions &options,
                           ItemSampler &out) {
  GNNC_TRY(checkOptions(options));
  ItemSampler s;
  s.Items = std::move(items);
  s.Options = options;
  s.Cache = std::make_shared<EpochCache>();
  out = std::move(s);
  return Status::success();
}

std::vector<int64_t> ItemSampler::itemsOfMask(const std::vector<uint8_t> &mask) {
  std::vector<int64_t> items;
  for (size_t i = 0; i < mask.size(); ++i)
    if (mask[i])
      items.push_back(static_cast<int64_t>(i));
  return items;
}

int64_t ItemSampler::numBatches() const {
  int64_t n = numItems(), b = Options.BatchSize;
  return Options.DropLast ? n / b : (n + b - 1) / b;
}

std::shared_ptr<const std::vector<int64_t>>
ItemSampler::order(uint64_t epoch) const {
  std::lock_guard<std::mutex> lock(Cache->Mutex);
  if (Cache->Valid && Cache->Epoch == epoch)
    return Cache->Order;
  auto order = std::make_shared<std::vector<int64_t>>(Items);
  if (Options.Shuffle) {
    // Fisher-Yates from the back; swap i with a uniform j in [0, i].
    uint64_t key = detail::mixKey(
        detail::mixKey(detail::kShuffleDomain, Options.Seed), epoch);
    for (size_t i = order->size(); i > 1; --i) {
      uint64_t j = detail::below(detail::draw(key, i - 1), i);
      std::swap((*order)[i - 1], (*order)[j]);
    }
  }
  Cache->Valid = true;
  Cache->Epoch = epoch;
  Cache->Order = order;
  return order;
}

Status ItemSampler::batch(uint64_t epoch, int64_t step,
                          std::vector<int64_t> &out) const {
  if (!Cache)
    return Status::error("item sampler: used before create()");
  int64_t count = numBatches();
  if (step < 0 || step >= count)
    return Status::error(fmt::format(
        "item sampler: step {} is outside the epoch's {} batches", step,
        count));
  std::shared_ptr<const std::vector<int64_t>> items = order(epoch);
  int64_t begin = step * Options.BatchSize;
  int64_t end = std::min<int64_t>(begin + Options.BatchSize, numItems());
  out.assign(items->begin() + begin, items->begin() + end);
  return Status::success();
}

//===----------------------------------------------------------------------===//
// DistributedItemSampler
//===----------------------------------------------------------------------===//

/// The contiguous part of `total` items that rank `rank` of `ranks` gets:
/// the first total % ranks ranks get one more.
static void shareOf(int64_t total, int rank, int ranks, int64_t &begin,
                    int64_t &count) {
  int64_t base = total / ranks, extra = total % ranks;
  count = base + (rank < extra ? 1 : 0);
  begin = rank * base + std::min<int64_t>(rank, extra);
}

static int64_t batchesOf(int64_t items, const ItemSamplerOptions &options) {
  int64_t b = options.BatchSize;
  return options.DropLast ? items / b : (items + b - 1) / b;
}

Status DistributedItemSampler::create(
    std::vector<int64_t> items, const DistributedItemSamplerOptions &options,
    int rank, int ranks, DistributedItemSampler &out) {
  GNNC_TRY(checkOptions(options));
  if (ranks <= 0 || rank < 0 || rank >= ranks)
    return Status::error(fmt::format(
        "distributed item sampler: rank {} is outside a world of {} ranks",
        rank, ranks));
  DistributedItemSampler s;
  s.Options = options;
  s.Rank = rank;
  s.Ranks = ranks;
  int64_t total = static_cast<int64_t>(items.size());
  if (options.Split == ItemSplit::SplitItems) {
    int64_t begin, count;
    shareOf(total, rank, ranks, begin, count);
    ItemSamplerOptions local = options;
    // Each rank shuffles its own range with its own stream.
    local.Seed = detail::mixKey(options.Seed, static_cast<uint64_t>(rank));
    std::vector<int64_t> mine(items.begin() + begin,
                              items.begin() + begin + count);
    GNNC_TRY(ItemSampler::create(std::move(mine), local, s.Local));
    s.NumBatches = s.Local.numBatches();
    if (options.DropUnevenInputs) {
      // Every rank computes every rank's batch count from the item count
      // alone and keeps the smallest, so all stop at the same step.
      for (int r = 0; r < ranks; ++r) {
        int64_t b, c;
        shareOf(total, r, ranks, b, c);
        s.NumBatches = std::min(s.NumBatches, batchesOf(c, options));
      }
    }
  } else {
    ItemSamplerOptions global = options;
    if (options.BatchSize > INT64_MAX / ranks)
      return Status::error("distributed item sampler: the global batch size "
                           "overflows");
    global.BatchSize = options.BatchSize * ranks;
    GNNC_TRY(ItemSampler::create(std::move(items), global, s.Local));
    s.NumBatches = s.Local.numBatches();
  }
  out = std::move(s);
  return Status::success();
}

Status DistributedItemSampler::batch(uint64_t epoch, int64_t step,
                                     std::vector<int64_t> &out) const {
  if (step < 0 || step >= NumBatches)
    return Status::error(fmt::format(
        "distributed item sampler: step {} is outside the epoch's {} batches "
        "on rank {}",
        step, NumBatches, Rank));
  if (Options.Split == ItemSplit::SplitItems)
    return Local.batch(epoch, step, out);
  std::vector<int64_t> global;
  GNNC_TRY(Local.batch(epoch, step, global));
  int64_t begin, count;
  shareOf(static_cast<int64_t>(global.size()), Rank, Ranks, begin, count);
  out.assign(global.begin() + begin, global.begin() + begin + count);
  return Status::success();
}

} // namespace gnnc::sample
