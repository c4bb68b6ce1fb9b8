//===- NeighborSampler.cpp - Sampled blocks, one per hop ------------------===//
//
// Part of gnnc. One hop, from destinations D to a Block, runs in two passes:
//
//   1. for each destination, draw its in-edges (positions of the graph's
//      CSR by destination) and note each edge's source and edge id;
//   2. relabel: D takes local ids 0..|D|-1, every other source the next id
//      at its first appearance, through an open-addressing table that a
//      per-thread scratch keeps from batch to batch (cleared in O(1) by a
//      stamp).
//
//===----------------------------------------------------------------------===//

#include "gnnc/sample/NeighborSampler.h"

#include "Counter.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace gnnc::sample {

using namespace detail;

/// How far ahead the loops load what they will need: a destination's
/// offsets, its row, a relabelling slot; and how many destinations behind
/// the drawing a drawn position is resolved to its source.
static constexpr int64_t kPtrAhead = 16, kRowAhead = 8, kSlotAhead = 12,
                         kResolveBehind = 4;

//===----------------------------------------------------------------------===//
// GraphView, Block, MiniBatch
//===----------------------------------------------------------------------===//

GraphView GraphView::of(const rt::Graph &g) {
  GraphView v;
  v.NumVertices = g.numDst();
  v.InPtr = g.inPtr().data();
  v.InSrc = g.inSrc().data();
  v.InEdge = g.inEdge().data();
  return v;
}

Status GraphView::check() const {
  if (NumVertices < 0 || NumVertices > rt::kMaxVertices)
    return Status::error(fmt::format(
        "sampling graph: {} vertices is outside [0, {}]", NumVertices,
        rt::kMaxVertices));
  if (NumVertices == 0)
    return Status::success();
  if (!InPtr || (!InSrc && InPtr[NumVertices] != 0))
    return Status::error("sampling graph: missing offsets or sources");
  if (InPtr[0] != 0)
    return Status::error(fmt::format(
        "sampling graph: the first offset is {}, not 0", InPtr[0]));
  for (int64_t v = 0; v < NumVertices; ++v)
    if (InPtr[v + 1] < InPtr[v])
      return Status::error(fmt::format(
          "sampling graph: offsets decrease at vertex {} ({} then {})", v,
          InPtr[v], InPtr[v + 1]));
  int64_t e = InPtr[NumVertices];
  for (int64_t p = 0; p < e; ++p)
    if (InSrc[p] < 0 || InSrc[p] >= NumVertices)
      return Status::error(fmt::format(
          "sampling graph: edge position {}: source {} is outside [0, {})", p,
          InSrc[p], NumVertices));
  if (Weight)
    for (int64_t p = 0; p < e; ++p)
      if (!std::isfinite(Weight[p]) || Weight[p] < 0)
        return Status::error(fmt::format(
            "sampling graph: edge position {}: weight {} is not a finite "
            "number >= 0",
            p, Weight[p]));
  return Status::success();
}

Status Block::toGraph(rt::Graph &out) const {
  std::vector<int64_t> dst(Src.size());
  for (int64_t j = 0; j < NumDst; ++j)
    std::fill(dst.begin() + Ptr[j], dst.begin() + Ptr[j + 1], j);
  return rt::Graph::fromEdgeIndex(Src.data(), dst.data(), numEdges(), NumSrc,
                                  NumDst, out);
}

int64_t MiniBatch::numSampledEdges() const {
  int64_t n = 0;
  for (const Block &b : Blocks)
    n += b.numEdges();
  return n;
}

//===----------------------------------------------------------------------===//
// Scratch
//===----------------------------------------------------------------------===//

namespace {
/// Vertex id -> local id, open addressing with linear probing over 8-byte
/// slots (vertex ids and local ids are below 2^31). The table is sized for
/// what one hop is expected to hold and doubles when it is half full; a
/// small table stays in cache, which matters more than anything else here.
class IdTable {
public:
  /// Empties the table, sized for `expected` keys at load <= 1/2.
  void reset(int64_t expected) {
    uint64_t cap = 64;
    while (cap < static_cast<uint64_t>(expected) * 2)
      cap *= 2;
    resize(cap);
  }

  /// Starts loading the slot where `key` would be looked up first.
  void prefetch(int64_t key) const {
    __builtin_prefetch(&Slots[slotOf(key)], 1);
  }

  /// The local id of `key`, inserting `next` when it is new (then
  /// `inserted` is set).
  int64_t findOrInsert(int64_t key, int64_t next, bool &inserted) {
    uint64_t i = slotOf(key);
    auto k = static_cast<int32_t>(key);
    while (true) {
      Slot &s = Slots[i];
      if (s.Key == kEmpty) {
        inserted = true;
        s.Key = k;
        s.Value = static_cast<uint32_t>(next);
        if (++Size * 2 > static_cast<int64_t>(Cap))
          grow();
        return next;
      }
      if (s.Key == k) {
        inserted = false;
        return s.Value;
      }
      i = (i + 1) & Mask;
    }
  }

private:
  struct Slot {
    int32_t Key;
    uint32_t Value;
  };
  static constexpr int32_t kEmpty = -1;

  /// Fibonacci hashing: the top bits of key * 2^64 / golden ratio.
  uint64_t slotOf(int64_t key) const {
    return (static_cast<uint64_t>(key) * rt::kSplitMixGamma) >> Shift;
  }

  void resize(uint64_t cap) {
    if (Slots.size() < cap)
      Slots.resize(cap);
    Cap = cap;
    Mask = cap - 1;
    Shift = 64 - static_cast<unsigned>(__builtin_ctzll(cap));
    Size = 0;
    std::fill(Slots.begin(), Slots.begin() + cap, Slot{kEmpty, 0});
  }

  /// Doubles the capacity and inserts the keys again.
  void grow() {
    Old.assign(Slots.begin(), Slots.begin() + Cap);
    resize(Cap * 2);
    for (const Slot &o : Old) {
      if (o.Key == kEmpty)
        continue;
      uint64_t i = slotOf(o.Key);
      while (Slots[i].Key != kEmpty)
        i = (i + 1) & Mask;
      Slots[i] = o;
      ++Size;
    }
  }

  std::vector<Slot> Slots, Old;
  uint64_t Cap = 0, Mask = 0;
  unsigned Shift = 64;
  int64_t Size = 0;
};
} // namespace

struct SamplerScratch::Impl {
  IdTable Table;
  std::vector<int64_t> Offsets;   // chosen offsets within one row
  std::vector<int64_t> Eligible;  // eligible offsets of one row
  std::vector<double> Weights;    // their weights, or their sort keys
  std::vector<int64_t> Tmp;       // a partial shuffle's offsets
};

SamplerScratch::SamplerScratch() : P(std::make_unique<Impl>()) {}
SamplerScratch::~SamplerScratch() = default;
SamplerScratch::SamplerScratch(SamplerScratch &&) noexcept = default;
SamplerScratch &SamplerScratch::operator=(SamplerScratch &&) noexcept = default;

//===----------------------------------------------------------------------===//
// Drawing the in-edges of one destination
//===----------------------------------------------------------------------===//

namespace {
/// Chooses k distinct offsets of [0, n) (k < n) into `out`, in the order
/// drawn.
void chooseDistinct(uint64_t key, int64_t n, int64_t k,
                    std::vector<int64_t> &out, std::vector<int64_t> &tmp) {
  out.clear();
  if (k <= 64) {
    // Floyd's algorithm: one draw per chosen element.
    for (int64_t t = n - k; t < n; ++t) {
      int64_t r = static_cast<int64_t>(
          below(draw(key, static_cast<uint64_t>(t)), static_cast<uint64_t>(t + 1)));
      bool seen = std::find(out.begin(), out.end(), r) != out.end();
      out.push_back(seen ? t : r);
    }
  } else {
    // A partial Fisher-Yates shuffle of the n offsets.
    tmp.resize(n);
    std::iota(tmp.begin(), tmp.end(), int64_t{0});
    for (int64_t i = 0; i < k; ++i) {
      int64_t j = i + static_cast<int64_t>(below(
                          draw(key, static_cast<uint64_t>(i)),
                          static_cast<uint64_t>(n - i)));
      std::swap(tmp[i], tmp[j]);
    }
    out.assign(tmp.begin(), tmp.begin() + k);
  }
}
} // namespace

Status NeighborSampler::create(const GraphView &graph,
                               const NeighborSamplerOptions &options,
                               NeighborSampler &out) {
  if (options.Fanouts.empty())
    return Status::error("neighbour sampler: no fanouts (one per hop)");
  for (size_t i = 0; i < options.Fanouts.size(); ++i)
    if (options.Fanouts[i] != -1 && options.Fanouts[i] <= 0)
      return Status::error(fmt::format(
          "neighbour sampler: fanout {} of hop {} must be positive or -1 "
          "(all neighbours)",
          options.Fanouts[i], i));
  if (options.Replace && options.Kind == SamplerKind::Labor)
    return Status::error("neighbour sampler: LABOR samples without "
                         "replacement; Replace is for the neighbour sampler");
  GNNC_TRY(graph.check());
  out.Graph = graph;
  out.Options = options;
  return Status::success();
}

namespace {
/// Appends the sampled in-edges of destination v to the block (sources as
/// original ids for now). `vkey` keys the destination's draws, `laborKey`
/// the hop's per-source variates.
struct HopContext {
  const GraphView &G;
  const NeighborSamplerOptions &O;
  int64_t Fanout;
  uint64_t HopKey;
  SamplerScratch::Impl &S;
  Block &B;

  /// Records edge position `pos`; `resolve` turns positions into sources
  /// (and edge ids) later, once their cache lines have arrived.
  void emit(int64_t pos) {
    __builtin_prefetch(G.InSrc + pos);
    B.Src.push_back(pos);
  }

  /// Replaces the positions in B.Src[from, to) by their sources, and
  /// records their edge ids.
  void resolve(int64_t from, int64_t to) {
    int64_t *src = B.Src.data();
    for (int64_t e = from; e < to; ++e) {
      int64_t pos = src[e];
      if (O.KeepEdgeIds)
        B.EdgeId.push_back(G.InEdge ? G.InEdge[pos] : pos);
      src[e] = G.InSrc[pos];
    }
  }

  void sampleRow(int64_t v) {
    int64_t begin = G.InPtr[v], end = G.InPtr[v + 1], deg = end - begin;
    if (deg == 0)
      return;
    uint64_t vkey = mixKey(HopKey, static_cast<uint64_t>(v));
    if (!G.Weight && !G.Mask) {
      if (O.Kind == SamplerKind::Labor) {
        laborRow(begin, end, deg, nullptr);
        return;
      }
      if (Fanout == -1 || (!O.Replace && deg <= Fanout)) {
        for (int64_t p = begin; p < end; ++p)
          emit(p);
        return;
      }
      if (O.Replace) {
        for (int64_t i = 0; i < Fanout; ++i)
          emit(begin + static_cast<int64_t>(
                           below(draw(vkey, static_cast<uint64_t>(i)),
                                 static_cast<uint64_t>(deg))));
        return;
      }
      chooseDistinct(vkey, deg, Fanout, S.Offsets, S.Tmp);
      for (int64_t off : S.Offsets)
        emit(begin + off);
      return;
    }
    // Masked or weighted: gather the eligible positions first.
    S.Eligible.clear();
    S.Weights.clear();
    double total = 0;
    for (int64_t p = begin; p < end; ++p) {
      if (G.Mask && !G.Mask[p])
        continue;
      double w = G.Weight ? G.Weight[p] : 1.0;
      if (w <= 0)
        continue;
      S.Eligible.push_back(p);
      S.Weights.push_back(w);
      total += w;
    }
    int64_t n = static_cast<int64_t>(S.Eligible.size());
    if (n == 0)
      return;
    if (O.Kind == SamplerKind::Labor) {
      laborRow(0, n, n, G.Weight ? &total : nullptr);
      return;
    }
    if (Fanout == -1 || (!O.Replace && n <= Fanout)) {
      for (int64_t p : S.Eligible)
        emit(p);
      return;
    }
    if (!G.Weight) {
      if (O.Replace) {
        for (int64_t i = 0; i < Fanout; ++i)
          emit(S.Eligible[below(draw(vkey, static_cast<uint64_t>(i)),
                                static_cast<uint64_t>(n))]);
        return;
      }
      chooseDistinct(vkey, n, Fanout, S.Offsets, S.Tmp);
      for (int64_t off : S.Offsets)
        emit(S.Eligible[off]);
      return;
    }
    if (O.Replace) {
      // Inverse transform on the running sums of the weights.
      std::vector<double> &cum = S.Weights;
      for (int64_t i = 1; i < n; ++i)
        cum[i] += cum[i - 1];
      for (int64_t i = 0; i < Fanout; ++i) {
        double x = unit(draw(vkey, static_cast<uint64_t>(i))) * cum[n - 1];
        int64_t at = std::upper_bound(cum.begin(), cum.end(), x) - cum.begin();
        emit(S.Eligible[std::min(at, n - 1)]);
      }
      return;
    }
    // Without replacement, weighted: Efraimidis and Spirakis' keys
    // log(u) / w, the Fanout largest win. The draw of an edge is indexed by
    // its offset in the row, so it does not depend on the mask.
    S.Offsets.resize(n);
    std::iota(S.Offsets.begin(), S.Offsets.end(), int64_t{0});
    for (int64_t i = 0; i < n; ++i) {
      double u = unit(draw(vkey, static_cast<uint64_t>(S.Eligible[i] - begin)));
      S.Weights[i] = std::log(std::max(u, 0x1.0p-60)) / S.Weights[i];
    }
    std::nth_element(S.Offsets.begin(), S.Offsets.begin() + Fanout,
                     S.Offsets.end(), [&](int64_t a, int64_t b) {
                       return S.Weights[a] > S.Weights[b];
                     });
    S.Offsets.resize(Fanout);
    std::sort(S.Offsets.begin(), S.Offsets.end());
    for (int64_t off : S.Offsets)
      emit(S.Eligible[off]);
  }

  /// LABOR-0 over positions [first, last) of the row (begin..end of the
  /// graph, or indices into S.Eligible when `total` or a mask is in play):
  /// edge (u, v) is kept when r_u < pi, pi = fanout / n, or fanout * w / W
  /// for weighted edges (capped at 1).
  void laborRow(int64_t first, int64_t last, int64_t n, const double *total) {
    bool viaEligible = G.Weight || G.Mask;
    if (Fanout == -1 || n <= Fanout) {
      for (int64_t i = first; i < last; ++i)
        emit(viaEligible ? S.Eligible[i] : i);
      return;
    }
    double base = static_cast<double>(Fanout) / static_cast<double>(n);
    for (int64_t i = first; i < last; ++i) {
      int64_t p = viaEligible ? S.Eligible[i] : i;
      double pi = total ? std::min(1.0, Fanout * S.Weights[i] / *total) : base;
      uint64_t ukey = mixKey(HopKey ^ kLaborDomain, static_cast<uint64_t>(G.InSrc[p]));
      if (unit(draw(ukey, 0)) < pi)
        emit(p);
    }
  }
};
} // namespace

Status NeighborSampler::sample(const std::vector<int64_t> &seeds,
                               uint64_t epoch, int64_t step,
                               SamplerScratch &scratch, MiniBatch &out) const {
  SamplerScratch::Impl &s = scratch.impl();
  int hops = numHops();
  out.Epoch = epoch;
  out.Step = step;
  out.Seeds = seeds;
  out.Blocks.resize(hops);
  out.Features.clear();
  out.Labels.clear();

  // The seeds must be distinct vertices of the graph.
  int64_t n = static_cast<int64_t>(seeds.size());
  s.Table.reset(n);
  for (int64_t i = 0; i < n; ++i) {
    int64_t v = seeds[i];
    if (v < 0 || v >= Graph.NumVertices)
      return Status::error(fmt::format(
          "neighbour sampler: seed {} at position {} is outside [0, {})", v, i,
          Graph.NumVertices));
    bool inserted;
    int64_t first = s.Table.findOrInsert(v, i, inserted);
    if (!inserted)
      return Status::error(fmt::format(
          "neighbour sampler: seed {} appears twice (positions {} and {})", v,
          first, i));
  }

  uint64_t runKey = mixKey(
      mixKey(mixKey(mixKey(kNeighborDomain, Options.Seed), epoch),
             static_cast<uint64_t>(step)),
      static_cast<uint64_t>(Options.Kind));
  const std::vector<int64_t> *dst = &seeds;
  for (int h = hops - 1; h >= 0; --h) {
    Block &b = out.Blocks[h];
    b.DstIds = *dst;
    b.NumDst = static_cast<int64_t>(b.DstIds.size());
    b.Ptr.assign(1, 0);
    b.Ptr.reserve(b.NumDst + 1);
    b.Src.clear();
    b.EdgeId.clear();
    if (int64_t f = Options.Fanouts[h]; f > 0) {
      // At most f edges per destination (exactly f with replacement).
      b.Src.reserve(b.NumDst * f);
      if (Options.KeepEdgeIds)
        b.EdgeId.reserve(b.NumDst * f);
    }
    HopContext ctx{Graph,
                   Options,
                   Options.Fanouts[h],
                   mixKey(runKey, static_cast<uint64_t>(h)),
                   s,
                   b};
    // Pass 1: draw the edges, sources as original ids. The offsets of the
    // destinations a little ahead, and their rows, are loaded early: the
    // rows are scattered over the graph. A drawn edge is first recorded as
    // its position, whose source is loaded ahead, and resolved to the
    // source kResolveBehind destinations later, when it has arrived.
    const int64_t *d = b.DstIds.data();
    for (int64_t j = 0; j < b.NumDst; ++j) {
      if (j + kPtrAhead < b.NumDst)
        __builtin_prefetch(Graph.InPtr + d[j + kPtrAhead]);
      if (j + kRowAhead < b.NumDst) {
        int64_t row = Graph.InPtr[d[j + kRowAhead]];
        __builtin_prefetch(Graph.InSrc + row);
        if (Graph.InEdge && Options.KeepEdgeIds)
          __builtin_prefetch(Graph.InEdge + row);
      }
      ctx.sampleRow(d[j]);
      b.Ptr.push_back(static_cast<int64_t>(b.Src.size()));
      if (j >= kResolveBehind)
        ctx.resolve(b.Ptr[j - kResolveBehind], b.Ptr[j - kResolveBehind + 1]);
    }
    ctx.resolve(b.Ptr[std::max<int64_t>(b.NumDst - kResolveBehind, 0)],
                b.numEdges());
    // Pass 2: relabel, destinations first, with the table's slots loaded a
    // few keys ahead. Sampled sources repeat (neighbourhoods overlap), so
    // the table starts smaller than the edge count and grows if it must.
    s.Table.reset(b.NumDst + b.numEdges() / 4);
    b.SrcIds = b.DstIds;
    bool inserted;
    for (int64_t j = 0; j < b.NumDst; ++j) {
      if (j + kSlotAhead < b.NumDst)
        s.Table.prefetch(d[j + kSlotAhead]);
      s.Table.findOrInsert(d[j], j, inserted);
    }
    int64_t *src = b.Src.data(), edges = b.numEdges();
    for (int64_t e = 0; e < edges; ++e) {
      if (e + kSlotAhead < edges)
        s.Table.prefetch(src[e + kSlotAhead]);
      int64_t u = src[e];
      int64_t next = static_cast<int64_t>(b.SrcIds.size());
      int64_t local = s.Table.findOrInsert(u, next, inserted);
      if (inserted)
        b.SrcIds.push_back(u);
      src[e] = local;
    }
    b.NumSrc = static_cast<int64_t>(b.SrcIds.size());
    dst = &b.SrcIds;
  }
  return Status::success();
}

} // namespace gnnc::sample
