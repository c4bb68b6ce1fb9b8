//===- CollectiveChecks.cpp - Every collective against local values ------===//
//
// Part of gnnc's tests. checkCollectives (DistChecks.h): every rank
// computes what each collective must deliver from the rank, the size and a
// counter-based value generator, without communication, and compares the
// results bit for bit (floating-point sums included: every backend but
// NCCL sums in rank order, and so does the reference).
//
// A mismatch does not end the check at once on the rank that sees it (the
// others would wait for it in the next collective): every rank runs every
// collective, remembers its first mismatch, and at the end the ranks agree
// on the lowest failing rank. A failing collective ends the check at once.
//
// Results that do not depend on the number of ranks (a broadcast array,
// reductions over a fixed set of items spread over the ranks, a global
// array gathered from its blocks, a global permutation carried out by
// all-to-all-v) are mixed into the context's digest.
//
//===----------------------------------------------------------------------===//

#include "DistChecks.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <numeric>
#include <string>
#include <type_traits>
#include <vector>

using namespace gnnc;
using namespace gnnc::dist;
using namespace gnnc::dist::checks;

namespace {

uint64_t splitMix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// A deterministic value for (seed, index). `exact` values are small
/// multiples of 1/8, whose sums of a few dozen are exact in float32, so
/// their sum does not depend on the order; the others round.
template <class T> T valueOf(uint64_t seed, uint64_t index, bool exact) {
  uint64_t h = splitMix(splitMix(seed) ^ index);
  if constexpr (std::is_same_v<T, uint8_t>) {
    return static_cast<uint8_t>(h & 1);
  } else if constexpr (std::is_same_v<T, int32_t>) {
    return static_cast<int32_t>(h % 2000001) - 1000000;
  } else if constexpr (std::is_same_v<T, int64_t>) {
    return static_cast<int64_t>(h % (uint64_t(1) << 41)) - (int64_t(1) << 40);
  } else {
    if (exact)
      return static_cast<T>(static_cast<int>(h % 2001) - 1000) / T(8);
    // Values of varying magnitude whose sums round.
    T base = static_cast<T>(static_cast<int64_t>(h % 2000001) - 1000000) / T(3);
    return base *
           static_cast<T>(1.0 / static_cast<double>(1u << ((h >> 40) % 16)));
  }
}

template <class T> constexpr DType dtypeOf() {
  if constexpr (std::is_same_v<T, uint8_t>)
    return DType::Bool;
  else
    return rt::DTypeOf<T>::value;
}

template <class T> T reduceRef(T a, T b, ReduceOp op) {
  switch (op) {
  case ReduceOp::Sum:
    return a + b;
  case ReduceOp::Max:
    return b > a ? b : a;
  case ReduceOp::Min:
    return b < a ? b : a;
  }
  return a;
}

template <class T> T identityOf(ReduceOp op) {
  switch (op) {
  case ReduceOp::Sum:
    return T(0);
  case ReduceOp::Max:
    return std::numeric_limits<T>::lowest();
  case ReduceOp::Min:
    return std::numeric_limits<T>::max();
  }
  return T(0);
}

/// Blocks of `total` over `n` ranks: the first total % n get one more.
std::vector<size_t> blockCounts(size_t total, int n) {
  std::vector<size_t> counts(n, total / n);
  for (size_t r = 0; r < total % n; ++r)
    ++counts[r];
  return counts;
}

std::vector<size_t> offsetsOf(const std::vector<size_t> &counts) {
  std::vector<size_t> offsets(counts.size() + 1, 0);
  for (size_t r = 0; r < counts.size(); ++r)
    offsets[r + 1] = offsets[r] + counts[r];
  return offsets;
}

/// Runs the checks of one rank: remembers the first mismatch and returns
/// collective errors at once.
class Checker {
public:
  explicit Checker(CheckContext &ctx)
      : Ctx(ctx), Comm(ctx.Comm), Rank(Comm.rank()), Size(Comm.size()) {}

  Status run();

private:
  /// Records a mismatch (the first one is reported).
  void mismatch(const std::string &message) {
    if (First.empty())
      First = message;
  }
  /// Compares `n` elements bit for bit.
  template <class T>
  bool expectEqual(const T *got, const T *want, size_t n,
                   const std::string &what) {
    for (size_t i = 0; i < n; ++i)
      if (std::memcmp(&got[i], &want[i], sizeof(T)) != 0) {
        mismatch(fmt::format("{}: element {} is {}, expected {}", what, i,
                             got[i], want[i]));
        return false;
      }
    return true;
  }
  template <class T>
  bool expectEqual(const std::vector<T> &got, const std::vector<T> &want,
                   const std::string &what) {
    if (got.size() != want.size()) {
      mismatch(fmt::format("{}: {} elements, expected {}", what, got.size(),
                           want.size()));
      return false;
    }
    return expectEqual(got.data(), want.data(), got.size(), what);
  }
  template <class T> void mix(const std::vector<T> &values) {
    Ctx.mix(values.data(), values.size() * sizeof(T));
  }

  Status topology();
  template <class T> Status broadcasts(uint64_t seed);
  template <class T> Status allReduces(uint64_t seed);
  template <class T> Status allGathers(uint64_t seed);
  template <class T> Status allToAlls(uint64_t seed);
  Status permutation();
  Status splits();
  Status checkSplit(Communicator &parent, int color, int key,
                    const std::vector<int> &colors,
                    const std::vector<int> &keys, const std::string &what,
                    int depth);
  Status byNode();

  CheckContext &Ctx;
  Communicator &Comm;
  int Rank, Size;
  std::string First;
  /// Every rank's node name, from topology().
  std::vector<std::string> NodeNames;
};

//===----------------------------------------------------------------------===//
// Topology
//===----------------------------------------------------------------------===//

Status Checker::topology() {
  constexpr size_t kRecord = 256;
  std::vector<uint8_t> mine(kRecord, 0), all(kRecord * Size, 0);
  const std::string &name = Comm.nodeName();
  if (name.empty() || name.size() >= kRecord)
    mismatch(fmt::format("node name '{}' is empty or too long", name));
  std::memcpy(mine.data(), name.data(), std::min(name.size(), kRecord - 1));
  GNNC_TRY(Comm.allGather(mine.data(), all.data(), kRecord, DType::Bool));
  NodeNames.clear();
  for (int r = 0; r < Size; ++r) {
    const char *record = reinterpret_cast<const char *>(all.data()) +
                         kRecord * static_cast<size_t>(r);
    NodeNames.emplace_back(record, strnlen(record, kRecord));
  }
  // Nodes in the order of their lowest rank.
  std::vector<std::string> nodes;
  for (const std::string &n : NodeNames)
    if (std::find(nodes.begin(), nodes.end(), n) == nodes.end())
      nodes.push_back(n);
  int nodeIndex = static_cast<int>(std::find(nodes.begin(), nodes.end(), name) -
                                   nodes.begin());
  int localRank = 0, localSize = 0;
  for (int r = 0; r < Size; ++r)
    if (NodeNames[r] == name) {
      localRank += r < Rank;
      ++localSize;
    }
  auto expect = [&](const char *what, int got, int want) {
    if (got != want)
      mismatch(fmt::format("topology: {} is {}, expected {}", what, got, want));
  };
  expect("numNodes()", Comm.numNodes(), static_cast<int>(nodes.size()));
  expect("nodeIndex()", Comm.nodeIndex(), nodeIndex);
  expect("localRank()", Comm.localRank(), localRank);
  expect("localSize()", Comm.localSize(), localSize);
  if (Comm.rank() < 0 || Comm.rank() >= Comm.size())
    mismatch(fmt::format("rank {} is out of range [0, {})", Comm.rank(),
                         Comm.size()));
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Broadcast
//===----------------------------------------------------------------------===//

template <class T> Status Checker::broadcasts(uint64_t seed) {
  const char *type = rt::dtypeName(dtypeOf<T>());
  for (int root = 0; root < Size; ++root) {
    for (size_t count : {size_t(0), size_t(1), size_t(5 + root), size_t(300)}) {
      std::vector<T> want(count), data(count);
      for (size_t i = 0; i < count; ++i)
        want[i] = valueOf<T>(seed + root, i, false);
      // Every other rank starts with different values.
      for (size_t i = 0; i < count; ++i) {
        if constexpr (std::is_same_v<T, uint8_t>)
          data[i] = static_cast<uint8_t>(1 - want[i]);
        else
          data[i] = Rank == root ? want[i] : want[i] + T(1);
      }
      if (Rank == root)
        data = want;
      GNNC_TRY(Comm.broadcast(count ? data.data() : nullptr, count,
                              dtypeOf<T>(), root));
      expectEqual(
          data, want,
          fmt::format("broadcast of {} {} from root {}", count, type, root));
      if (root == 0 && count == 300)
        mix(data);
    }
  }
  return Status::success();
}

//===----------------------------------------------------------------------===//
// All-reduce
//===----------------------------------------------------------------------===//

template <class T> Status Checker::allReduces(uint64_t seed) {
  const char *type = rt::dtypeName(dtypeOf<T>());
  for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min}) {
    const char *opName = reduceOpName(op);
    uint64_t opSeed = seed * 16 + static_cast<uint64_t>(op);
    // Every rank's own values (rounding ones), reduced in rank order; counts
    // below, at, and above the number of ranks, and in place.
    for (size_t count :
         {size_t(0), size_t(1), size_t(Size + 2), size_t(1000)}) {
      for (bool inPlace : {false, true}) {
        auto input = [&](int r, size_t i) {
          return valueOf<T>(opSeed, static_cast<uint64_t>(r) * count + i,
                            false);
        };
        std::vector<T> send(count), recv(count), want(count);
        for (size_t i = 0; i < count; ++i) {
          send[i] = input(Rank, i);
          T acc = input(0, i);
          for (int q = 1; q < Size; ++q)
            acc = reduceRef(acc, input(q, i), op);
          want[i] = acc;
        }
        if (inPlace) {
          GNNC_TRY(Comm.allReduce(count ? send.data() : nullptr,
                                  count ? send.data() : nullptr, count,
                                  dtypeOf<T>(), op));
          recv = send;
        } else {
          GNNC_TRY(Comm.allReduce(count ? send.data() : nullptr,
                                  count ? recv.data() : nullptr, count,
                                  dtypeOf<T>(), op));
        }
        expectEqual(recv, want,
                    fmt::format("all-reduce {} of {} {}{}", opName, count, type,
                                inPlace ? " in place" : ""));
      }
    }
    // A fixed set of items spread round-robin over the ranks: each rank
    // first reduces its own items (the identity when it has none); the
    // result is the reduction of all items whatever the number of ranks.
    constexpr int kItems = 12;
    constexpr size_t kCount = 37;
    std::vector<T> partial(kCount, identityOf<T>(op)), total(kCount),
        want(kCount, identityOf<T>(op));
    for (int item = 0; item < kItems; ++item)
      for (size_t i = 0; i < kCount; ++i) {
        T v = valueOf<T>(opSeed + 1000,
                         static_cast<uint64_t>(item) * kCount + i, true);
        want[i] = reduceRef(want[i], v, op);
        if (item % Size == Rank)
          partial[i] = reduceRef(partial[i], v, op);
      }
    GNNC_TRY(
        Comm.allReduce(partial.data(), total.data(), kCount, dtypeOf<T>(), op));
    if (expectEqual(total, want,
                    fmt::format("all-reduce {} of {} items of {}", opName,
                                kItems, type)))
      mix(total);
  }
  return Status::success();
}

//===----------------------------------------------------------------------===//
// All-gather
//===----------------------------------------------------------------------===//

template <class T> Status Checker::allGathers(uint64_t seed) {
  const char *type = rt::dtypeName(dtypeOf<T>());
  // allGather: count elements per rank, plus in place (this rank's block of
  // the receive buffer as the send buffer).
  for (size_t count : {size_t(0), size_t(1), size_t(3), size_t(64)}) {
    auto code = [&](int r, size_t i) {
      return valueOf<T>(seed, static_cast<uint64_t>(r) * count + i, false);
    };
    std::vector<T> send(count), recv(count * Size), want(count * Size);
    for (size_t i = 0; i < count; ++i)
      send[i] = code(Rank, i);
    for (int q = 0; q < Size; ++q)
      for (size_t i = 0; i < count; ++i)
        want[q * count + i] = code(q, i);
    GNNC_TRY(Comm.allGather(count ? send.data() : nullptr,
                            count ? recv.data() : nullptr, count,
                            dtypeOf<T>()));
    expectEqual(recv, want, fmt::format("all-gather of {} {}", count, type));

    std::vector<T> inPlace(count * Size);
    std::copy(send.begin(), send.end(), inPlace.begin() + Rank * count);
    GNNC_TRY(Comm.allGather(count ? inPlace.data() + Rank * count : nullptr,
                            count ? inPlace.data() : nullptr, count,
                            dtypeOf<T>()));
    expectEqual(inPlace, want,
                fmt::format("all-gather of {} {} in place", count, type));
  }

  // allGatherV: uneven counts with zeros.
  {
    std::vector<size_t> counts(Size);
    for (int q = 0; q < Size; ++q)
      counts[q] = static_cast<size_t>(q * 7 + 3) % 5;
    std::vector<size_t> offsets = offsetsOf(counts);
    std::vector<T> send(counts[Rank]), recv(offsets.back()),
        want(offsets.back());
    for (int q = 0; q < Size; ++q)
      for (size_t i = 0; i < counts[q]; ++i)
        want[offsets[q] + i] = valueOf<T>(seed + 1, q * 100 + i, false);
    for (size_t i = 0; i < counts[Rank]; ++i)
      send[i] = want[offsets[Rank] + i];
    GNNC_TRY(Comm.allGatherV(send.empty() ? nullptr : send.data(),
                             recv.empty() ? nullptr : recv.data(),
                             counts.data(), dtypeOf<T>()));
    expectEqual(recv, want,
                fmt::format("all-gather-v of {} with uneven counts", type));
  }

  // A global array of 29 elements gathered from its blocks, from a skewed
  // partition (rank 0: 3 elements, the last rank the rest) and from one
  // where every rank but the last has none.
  constexpr size_t kGlobal = 29;
  std::vector<T> global(kGlobal);
  for (size_t i = 0; i < kGlobal; ++i)
    global[i] = valueOf<T>(seed + 2, i, false);
  std::vector<std::vector<size_t>> partitions;
  partitions.push_back(blockCounts(kGlobal, Size));
  std::vector<size_t> skewed(Size, 0);
  skewed[0] = Size > 1 ? 3 : kGlobal;
  skewed[Size - 1] += kGlobal - skewed[0];
  partitions.push_back(skewed);
  std::vector<size_t> last(Size, 0);
  last[Size - 1] = kGlobal;
  partitions.push_back(last);
  for (size_t p = 0; p < partitions.size(); ++p) {
    const std::vector<size_t> &counts = partitions[p];
    std::vector<size_t> offsets = offsetsOf(counts);
    std::vector<T> block(global.begin() + offsets[Rank],
                         global.begin() + offsets[Rank + 1]),
        full(kGlobal);
    GNNC_TRY(Comm.allGatherV(block.empty() ? nullptr : block.data(),
                             full.data(), counts.data(), dtypeOf<T>()));
    if (expectEqual(full, global,
                    fmt::format("all-gather-v of a {} array from partition "
                                "{}",
                                type, p)) &&
        p == 0)
      mix(full);
  }
  return Status::success();
}

//===----------------------------------------------------------------------===//
// All-to-all
//===----------------------------------------------------------------------===//

template <class T> Status Checker::allToAlls(uint64_t seed) {
  const char *type = rt::dtypeName(dtypeOf<T>());
  // The j-th element rank r sends to rank q.
  auto code = [&](int r, int q, size_t j) {
    return valueOf<T>(seed, (static_cast<uint64_t>(r) * Size + q) * 1000 + j,
                      false);
  };
  for (size_t count : {size_t(0), size_t(1), size_t(3)}) {
    std::vector<T> send(count * Size), recv(count * Size), want(count * Size);
    for (int q = 0; q < Size; ++q)
      for (size_t j = 0; j < count; ++j) {
        send[q * count + j] = code(Rank, q, j);
        want[q * count + j] = code(q, Rank, j);
      }
    GNNC_TRY(Comm.allToAll(count ? send.data() : nullptr,
                           count ? recv.data() : nullptr, count, dtypeOf<T>()));
    expectEqual(recv, want, fmt::format("all-to-all of {} {}", count, type));
  }

  // Uneven counts with zeros, and all zeros.
  for (int pattern = 0; pattern < 2; ++pattern) {
    auto countOf = [&](int from, int to) -> size_t {
      return pattern == 0 ? static_cast<size_t>(from + 2 * to + 1) % 4 : 0;
    };
    std::vector<size_t> sendCounts(Size), recvCounts(Size);
    for (int q = 0; q < Size; ++q) {
      sendCounts[q] = countOf(Rank, q);
      recvCounts[q] = countOf(q, Rank);
    }
    std::vector<size_t> sendOffsets = offsetsOf(sendCounts),
                        recvOffsets = offsetsOf(recvCounts);
    std::vector<T> send(sendOffsets.back()), recv(recvOffsets.back()),
        want(recvOffsets.back());
    for (int q = 0; q < Size; ++q) {
      for (size_t j = 0; j < sendCounts[q]; ++j)
        send[sendOffsets[q] + j] = code(Rank, q, j);
      for (size_t j = 0; j < recvCounts[q]; ++j)
        want[recvOffsets[q] + j] = code(q, Rank, j);
    }
    GNNC_TRY(Comm.allToAllV(
        send.empty() ? nullptr : send.data(), sendCounts.data(),
        recv.empty() ? nullptr : recv.data(), recvCounts.data(), dtypeOf<T>()));
    expectEqual(recv, want,
                fmt::format("all-to-all-v of {} with {} counts", type,
                            pattern == 0 ? "uneven" : "zero"));
  }
  return Status::success();
}

/// A global permutation carried out by all-to-all-v: element i of a
/// block-partitioned array moves to position perm(i), owned by some rank;
/// the moved blocks, gathered, are the permuted array.
Status Checker::permutation() {
  constexpr size_t kGlobal = 41;
  auto perm = [](size_t i) { return (i * 7 + 3) % kGlobal; };
  auto value = [](size_t i) { return valueOf<int64_t>(77, i, false); };
  std::vector<size_t> blocks = blockCounts(kGlobal, Size);
  std::vector<size_t> offsets = offsetsOf(blocks);
  auto owner = [&](size_t row) {
    return static_cast<int>(
        std::upper_bound(offsets.begin(), offsets.end(), row) -
        offsets.begin() - 1);
  };
  // Pairs (destination, value), grouped by the destination's owner.
  std::vector<std::vector<int64_t>> outgoing(Size);
  for (size_t i = offsets[Rank]; i < offsets[Rank + 1]; ++i) {
    size_t to = perm(i);
    outgoing[owner(to)].push_back(static_cast<int64_t>(to));
    outgoing[owner(to)].push_back(value(i));
  }
  std::vector<size_t> sendCounts(Size), recvCounts(Size, 0);
  std::vector<int64_t> send;
  for (int q = 0; q < Size; ++q) {
    sendCounts[q] = outgoing[q].size();
    send.insert(send.end(), outgoing[q].begin(), outgoing[q].end());
  }
  // What this rank receives from each rank, computed locally.
  for (size_t i = 0; i < kGlobal; ++i)
    if (owner(perm(i)) == Rank)
      recvCounts[owner(i)] += 2;
  size_t recvTotal = 0;
  for (size_t c : recvCounts)
    recvTotal += c;
  std::vector<int64_t> recv(recvTotal);
  GNNC_TRY(Comm.allToAllV(
      send.empty() ? nullptr : send.data(), sendCounts.data(),
      recv.empty() ? nullptr : recv.data(), recvCounts.data(), DType::Int64));
  std::vector<int64_t> block(blocks[Rank], 0);
  for (size_t k = 0; k + 1 < recv.size(); k += 2) {
    int64_t to = recv[k];
    if (to < static_cast<int64_t>(offsets[Rank]) ||
        to >= static_cast<int64_t>(offsets[Rank + 1])) {
      mismatch(fmt::format("permutation: received destination {} outside "
                           "this rank's rows [{}, {})",
                           to, offsets[Rank], offsets[Rank + 1]));
      continue;
    }
    block[static_cast<size_t>(to) - offsets[Rank]] = recv[k + 1];
  }
  std::vector<int64_t> permuted(kGlobal), want(kGlobal);
  for (size_t i = 0; i < kGlobal; ++i)
    want[perm(i)] = value(i);
  GNNC_TRY(Comm.allGatherV(block.empty() ? nullptr : block.data(),
                           permuted.data(), blocks.data(), DType::Int64));
  if (expectEqual(permuted, want, "permutation by all-to-all-v"))
    mix(permuted);
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Split
//===----------------------------------------------------------------------===//

/// Splits `parent` with every rank's colour and key and checks the result:
/// membership, order by (key, old rank), and collectives on it (the old
/// ranks all-gathered and summed). Splits once more, by parity of the new
/// rank, while `depth` > 0.
Status Checker::checkSplit(Communicator &parent, int color, int key,
                           const std::vector<int> &colors,
                           const std::vector<int> &keys,
                           const std::string &what, int depth) {
  std::unique_ptr<Communicator> sub;
  GNNC_TRY(parent.split(color, key, sub));
  if (color < 0) {
    if (sub)
      mismatch(fmt::format("{}: a negative colour got a communicator", what));
    return Status::success();
  }
  if (!sub) {
    mismatch(fmt::format("{}: colour {} got no communicator", what, color));
    return Status::success();
  }
  // Members: (key, old rank) of this colour, sorted.
  std::vector<std::pair<int, int>> members;
  for (int q = 0; q < parent.size(); ++q)
    if (colors[q] == color)
      members.emplace_back(keys[q], q);
  std::sort(members.begin(), members.end());
  int wantRank =
      static_cast<int>(std::find(members.begin(), members.end(),
                                 std::make_pair(key, parent.rank())) -
                       members.begin());
  if (sub->size() != static_cast<int>(members.size()) ||
      sub->rank() != wantRank) {
    mismatch(fmt::format("{}: rank {} of {}, expected {} of {}", what,
                         sub->rank(), sub->size(), wantRank, members.size()));
    return Status::success();
  }
  if (sub->nodeName() != parent.nodeName())
    mismatch(fmt::format("{}: node name '{}', expected '{}'", what,
                         sub->nodeName(), parent.nodeName()));
  if (std::string(sub->backend()) != parent.backend())
    mismatch(fmt::format("{}: backend {}, expected {}", what, sub->backend(),
                         parent.backend()));
  int64_t old = parent.rank(), sum = 0;
  std::vector<int64_t> olds(members.size());
  GNNC_TRY(sub->barrier());
  GNNC_TRY(sub->allGather(&old, olds.data(), 1, DType::Int64));
  GNNC_TRY(sub->allReduce(&old, &sum, 1, DType::Int64, ReduceOp::Sum));
  std::vector<int64_t> wantOlds;
  int64_t wantSum = 0;
  for (const auto &m : members) {
    wantOlds.push_back(m.second);
    wantSum += m.second;
  }
  expectEqual(olds, wantOlds, what + ": all-gather of the old ranks");
  if (sum != wantSum)
    mismatch(fmt::format("{}: sum of the old ranks is {}, expected {}", what,
                         sum, wantSum));
  if (depth > 0) {
    std::vector<int> subColors(sub->size()), subKeys(sub->size(), 0);
    for (int q = 0; q < sub->size(); ++q)
      subColors[q] = q % 2;
    GNNC_TRY(checkSplit(*sub, sub->rank() % 2, 0, subColors, subKeys,
                        what + ", split by parity", depth - 1));
  }
  return Status::success();
}

Status Checker::splits() {
  // Colours r % 3, except every fourth rank, which passes -1; keys that
  // reverse the order in pairs, with ties broken by the old rank.
  std::vector<int> colors(Size), keys(Size);
  for (int q = 0; q < Size; ++q) {
    colors[q] = q % 4 == 3 ? -1 : q % 3;
    keys[q] = (Size - q) / 2;
  }
  GNNC_TRY(checkSplit(Comm, colors[Rank], keys[Rank], colors, keys,
                      "split by colour", 1));
  // Everyone in one colour, ordered by a key that reverses the ranks.
  std::vector<int> one(Size, 5), reverse(Size);
  for (int q = 0; q < Size; ++q)
    reverse[q] = Size - q;
  GNNC_TRY(checkSplit(Comm, 5, reverse[Rank], one, reverse,
                      "split into one reversed group", 0));
  // Every rank alone.
  std::vector<int> alone(Size), zero(Size, 0);
  std::iota(alone.begin(), alone.end(), 0);
  GNNC_TRY(checkSplit(Comm, Rank, 0, alone, zero, "split into singletons", 0));
  return Status::success();
}

Status Checker::byNode() {
  std::unique_ptr<Communicator> node;
  GNNC_TRY(Comm.splitByNode(node));
  if (!node) {
    mismatch("splitByNode: no communicator");
    return Status::success();
  }
  std::vector<int64_t> want;
  for (int q = 0; q < Size; ++q)
    if (NodeNames[q] == Comm.nodeName())
      want.push_back(q);
  if (node->size() != Comm.localSize() || node->rank() != Comm.localRank() ||
      node->numNodes() != 1 || node->localSize() != node->size() ||
      node->nodeName() != Comm.nodeName()) {
    mismatch(fmt::format("splitByNode: rank {} of {} on {} node(s), expected "
                         "rank {} of {} on one node",
                         node->rank(), node->size(), node->numNodes(),
                         Comm.localRank(), Comm.localSize()));
    return Status::success();
  }
  int64_t old = Rank;
  std::vector<int64_t> olds(node->size());
  GNNC_TRY(node->allGather(&old, olds.data(), 1, DType::Int64));
  expectEqual(olds, want, "splitByNode: the ranks of this node");
  return Status::success();
}

Status Checker::run() {
  GNNC_TRY(topology());
  GNNC_TRY(Comm.barrier());

  GNNC_TRY(broadcasts<uint8_t>(1));
  GNNC_TRY(broadcasts<int32_t>(2));
  GNNC_TRY(broadcasts<int64_t>(3));
  GNNC_TRY(broadcasts<float>(4));
  GNNC_TRY(broadcasts<double>(5));

  GNNC_TRY(allReduces<int32_t>(10));
  GNNC_TRY(allReduces<int64_t>(11));
  GNNC_TRY(allReduces<float>(12));
  GNNC_TRY(allReduces<double>(13));

  GNNC_TRY(allGathers<uint8_t>(20));
  GNNC_TRY(allGathers<int32_t>(21));
  GNNC_TRY(allGathers<int64_t>(22));
  GNNC_TRY(allGathers<float>(23));
  GNNC_TRY(allGathers<double>(24));

  GNNC_TRY(allToAlls<uint8_t>(30));
  GNNC_TRY(allToAlls<int32_t>(31));
  GNNC_TRY(allToAlls<int64_t>(32));
  GNNC_TRY(allToAlls<float>(33));
  GNNC_TRY(allToAlls<double>(34));
  GNNC_TRY(permutation());

  GNNC_TRY(splits());
  GNNC_TRY(byNode());
  GNNC_TRY(Comm.barrier());

  // Agree on the lowest rank with a mismatch.
  int32_t mine = First.empty() ? Size : Rank, lowest = Size;
  GNNC_TRY(Comm.allReduce(&mine, &lowest, 1, DType::Int32, ReduceOp::Min));
  std::string prefix = fmt::format(
      "checkCollectives (rank {} of {}, {}): ", Rank, Size, Comm.backend());
  if (!First.empty())
    return Status::error(prefix + First);
  if (lowest < Size)
    return Status::error(
        fmt::format("{}rank {} found a mismatch", prefix, lowest));
  return Status::success();
}

} // namespace

Status gnnc::dist::checks::checkCollectives(CheckContext &ctx) {
  Checker checker(ctx);
  return checker.run();
}
