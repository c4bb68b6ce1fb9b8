//===- RowCache.cpp - Row caches with SIEVE and LFU eviction --------------===//
//
// Part of gnnc. Both policies keep the cached rows in one contiguous store
// of fixed-size slots, with a hash map from global row to slot; a slot freed
// by an eviction or an invalidation is reused by the next insert. The store
// grows slot by slot up to the capacity, so a large capacity costs memory
// only as rows arrive.
//
//   SIEVE (Zhang et al., "SIEVE is Simpler than LRU", NSDI'24): a FIFO queue
//   of slots (new rows enter at the head) with one visited bit per slot. A
//   hit sets the bit and moves nothing. To evict, a hand walks from where it
//   stopped last (the tail at first) towards the head, clearing set bits,
//   and evicts the first slot whose bit is clear; at the head it wraps to
//   the tail. The hand then rests on the slot newer than the evicted one.
//
//   LFU: every slot counts its accesses (1 when inserted, +1 per hit); the
//   victim is the slot with the fewest, ties broken by the oldest insert.
//   An ordered set keyed by (count, insert number) gives O(log n) per
//   operation.
//
// Refreshing a cached row (insert of a row already there) replaces its bytes
// and leaves the policy's state and the statistics as they were.
//
//===----------------------------------------------------------------------===//

#include "gnnc/dist/Embedding.h"

#include <cstring>
#include <set>
#include <tuple>
#include <unordered_map>
#include <vector>

using namespace gnnc::dist;

RowCache::~RowCache() = default;

namespace {

/// The slot store and row map shared by the policies; the policy decides
/// which slot to evict through the hooks.
class SlotCache : public RowCache {
public:
  SlotCache(int64_t capacity, size_t rowBytes) : RowCache(capacity, rowBytes) {}

  bool lookup(int64_t row, void *out) final {
    ++Stats.Lookups;
    auto it = Slots.find(row);
    if (it == Slots.end())
      return false;
    ++Stats.Hits;
    if (RowBytes)
      std::memcpy(out, slotData(it->second), RowBytes);
    onHit(it->second);
    return true;
  }

  void insert(int64_t row, const void *data) final {
    if (Capacity <= 0)
      return;
    auto it = Slots.find(row);
    if (it != Slots.end()) {
      if (RowBytes)
        std::memcpy(slotData(it->second), data, RowBytes);
      return;
    }
    if (static_cast<int64_t>(Slots.size()) >= Capacity) {
      int64_t victim = chooseVictim();
      drop(victim);
      ++Stats.Evictions;
    }
    int64_t slot = allocateSlot();
    SlotRow[slot] = row;
    if (RowBytes)
      std::memcpy(slotData(slot), data, RowBytes);
    Slots.emplace(row, slot);
    onInsert(slot);
    ++Stats.Inserts;
  }

  void invalidate(int64_t row) final {
    auto it = Slots.find(row);
    if (it == Slots.end())
      return;
    drop(it->second);
    ++Stats.Invalidations;
  }

  int64_t size() const final { return static_cast<int64_t>(Slots.size()); }

protected:
  /// Slots ever allocated (the size of the per-slot arrays).
  int64_t numSlots() const { return static_cast<int64_t>(SlotRow.size()); }

  /// A new slot was allocated: the policy grows its per-slot arrays.
  virtual void onGrow(int64_t slots) = 0;
  virtual void onInsert(int64_t slot) = 0;
  virtual void onHit(int64_t slot) = 0;
  /// The slot leaves the cache (eviction or invalidation).
  virtual void onRemove(int64_t slot) = 0;
  /// The slot to evict; called only when the cache is full.
  virtual int64_t chooseVictim() = 0;

private:
  unsigned char *slotData(int64_t slot) {
    return Data.data() + static_cast<size_t>(slot) * RowBytes;
  }

  int64_t allocateSlot() {
    if (!FreeSlots.empty()) {
      int64_t slot = FreeSlots.back();
      FreeSlots.pop_back();
      return slot;
    }
    int64_t slot = numSlots();
    SlotRow.push_back(-1);
    Data.resize(Data.size() + RowBytes);
    onGrow(slot + 1);
    return slot;
  }

  void drop(int64_t slot) {
    onRemove(slot);
    Slots.erase(SlotRow[slot]);
    SlotRow[slot] = -1;
    FreeSlots.push_back(slot);
  }

  std::unordered_map<int64_t, int64_t> Slots; ///< row -> slot
  std::vector<int64_t> SlotRow;               ///< slot -> row, -1 when free
  std::vector<int64_t> FreeSlots;
  std::vector<unsigned char> Data; ///< numSlots() * RowBytes
};

class SieveCache final : public SlotCache {
public:
  using SlotCache::SlotCache;

private:
  void onGrow(int64_t slots) override {
    Newer.resize(slots, -1);
    Older.resize(slots, -1);
    Visited.resize(slots, 0);
  }

  void onInsert(int64_t slot) override {
    Visited[slot] = 0;
    Newer[slot] = -1;
    Older[slot] = Head;
    if (Head >= 0)
      Newer[Head] = slot;
    Head = slot;
    if (Tail < 0)
      Tail = slot;
  }

  void onHit(int64_t slot) override { Visited[slot] = 1; }

  void onRemove(int64_t slot) override {
    if (Hand == slot)
      Hand = Newer[slot];
    if (Newer[slot] >= 0)
      Older[Newer[slot]] = Older[slot];
    else
      Head = Older[slot];
    if (Older[slot] >= 0)
      Newer[Older[slot]] = Newer[slot];
    else
      Tail = Newer[slot];
    Newer[slot] = Older[slot] = -1;
    Visited[slot] = 0;
  }

  int64_t chooseVictim() override {
    // The queue is non-empty (the cache is full and its capacity positive),
    // and a full lap clears every bit, so the walk ends.
    int64_t slot = Hand >= 0 ? Hand : Tail;
    while (Visited[slot]) {
      Visited[slot] = 0;
      slot = Newer[slot] >= 0 ? Newer[slot] : Tail;
    }
    Hand = Newer[slot];
    return slot;
  }

  std::vector<int64_t> Newer, Older; ///< towards the head / the tail
  std::vector<unsigned char> Visited;
  int64_t Head = -1, Tail = -1, Hand = -1;
};

class LfuCache final : public SlotCache {
public:
  using SlotCache::SlotCache;

private:
  using Key = std::tuple<uint64_t, uint64_t, int64_t>; ///< count, seq, slot

  void onGrow(int64_t slots) override {
    Count.resize(slots, 0);
    Seq.resize(slots, 0);
  }

  void onInsert(int64_t slot) override {
    Count[slot] = 1;
    Seq[slot] = NextSeq++;
    Order.emplace(Count[slot], Seq[slot], slot);
  }

  void onHit(int64_t slot) override {
    Order.erase(Key(Count[slot], Seq[slot], slot));
    ++Count[slot];
    Order.emplace(Count[slot], Seq[slot], slot);
  }

  void onRemove(int64_t slot) override {
    Order.erase(Key(Count[slot], Seq[slot], slot));
  }

  int64_t chooseVictim() override { return std::get<2>(*Order.begin()); }

  std::vector<uint64_t> Count, Seq;
  std::set<Key> Order;
  uint64_t NextSeq = 0;
};

} // namespace

std::unique_ptr<RowCache> gnnc::dist::createRowCache(CachePolicy policy,
                                                     int64_t capacity,
                                                     size_t rowBytes) {
  if (capacity < 0)
    capacity = 0;
  if (policy == CachePolicy::Lfu)
    return std::make_unique<LfuCache>(capacity, rowBytes);
  return std::make_unique<SieveCache>(capacity, rowBytes);
}
