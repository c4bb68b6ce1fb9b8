//===- FixedSize.cpp - Fixed-size (padded) mini-batches -------------------===//
//
// Part of gnnc. Capacities (worst-case bound, measured fit), the fit test,
// trimming from the seeds outwards, and the padded layout written in place
// into the batch's own vectors from scratch copies of the sampled arrays.
//
//===----------------------------------------------------------------------===//

#include "gnnc/sample/FixedSize.h"

#include "gnnc/sample/Pipeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

namespace gnnc::sample {

namespace {
constexpr int64_t kMax = INT64_MAX;

/// a + b and a * b for a, b >= 0, saturating at INT64_MAX.
int64_t satAdd(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? kMax : r;
}
int64_t satMul(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_mul_overflow(a, b, &r) ? kMax : r;
}

/// The most new sources one hop can add to n destinations, over n in
/// [0, r]: max of min(v - n, n f). The minimum grows with n up to
/// v / (f + 1) and falls after, so the maximum is at the floor or the
/// ceiling of that point (or at r before it).
int64_t maxNewSources(int64_t v, int64_t r, int64_t f) {
  if (f <= 0 || r <= 0 || v <= 0)
    return 0;
  auto newAt = [&](int64_t n) { return std::min(v - n, satMul(n, f)); };
  int64_t c = v / satAdd(f, 1);
  return std::max(newAt(std::min(r, c)), newAt(std::min(r, c + 1)));
}

std::string joined(const std::vector<int64_t> &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

std::string batchName(const MiniBatch &b) {
  return fmt::format("batch (epoch {}, step {})", b.Epoch, b.Step);
}

/// Real counts of a sampled (unpadded) batch: n[l] per level, e[b] per
/// block.
void realCounts(const MiniBatch &b, std::vector<int64_t> &n,
                std::vector<int64_t> &e) {
  size_t h = b.Blocks.size();
  n.resize(h + 1);
  e.resize(h);
  n[h] = b.Blocks[h - 1].NumDst;
  for (size_t i = 0; i < h; ++i) {
    n[i] = b.Blocks[i].NumSrc;
    e[i] = b.Blocks[i].numEdges();
  }
}

/// Why block `b` with `dst` destinations, `other` sources besides them and
/// `edges` edges does not fit (empty when it fits).
std::string blockOverflow(const Capacities &c, int b, int64_t other,
                          int64_t edges) {
  if (edges > c.Edges[b])
    return fmt::format("block {} has {} sampled edges, capacity {}", b, edges,
                       c.Edges[b]);
  int64_t cap = c.Vertices[b] - c.Vertices[b + 1];
  if (other > cap)
    return fmt::format(
        "block {} has {} source vertices besides its destinations, "
        "capacity {}",
        b, other, cap);
  return std::string();
}

std::string seedOverflow(const Capacities &c, int64_t seeds) {
  int h = c.numHops();
  if (seeds + 1 > c.Vertices[h])
    return fmt::format("block {} has {} destination vertices (the seeds), "
                       "capacity {} (and one padding vertex)",
                       h - 1, seeds, c.Vertices[h] - 1);
  return std::string();
}

/// Why a sampled batch with real counts n, e does not fit `c` (empty when
/// it fits); the innermost block is looked at first.
std::string overflow(const Capacities &c, const std::vector<int64_t> &n,
                     const std::vector<int64_t> &e) {
  int h = c.numHops();
  std::string why = seedOverflow(c, n[h]);
  for (int b = h - 1; b >= 0 && why.empty(); --b)
    why = blockOverflow(c, b, n[b] - n[b + 1], e[b]);
  return why;
}

/// The nearest-rank quantile q of `v` (sorted in place).
int64_t quantile(std::vector<int64_t> &v, double q) {
  std::sort(v.begin(), v.end());
  auto n = static_cast<double>(v.size());
  auto rank = static_cast<int64_t>(std::ceil(q * n - 1e-9));
  rank = std::clamp<int64_t>(rank, 1, static_cast<int64_t>(v.size()));
  return v[rank - 1];
}

/// ceil(x * (1 + margin)), where a product within rounding of an integer
/// is that integer (100 * 1.1 is 110).
int64_t withMargin(int64_t x, double margin) {
  double r = static_cast<double>(x) * (1.0 + margin);
  if (r >= 9.0e18)
    return kMax;
  double nearest = std::round(r);
  if (std::fabs(r - nearest) <= 1e-9 * std::max(1.0, r))
    return static_cast<int64_t>(nearest);
  return static_cast<int64_t>(std::ceil(r));
}
} // namespace

//===----------------------------------------------------------------------===//
// Capacities
//===----------------------------------------------------------------------===//

Status Capacities::check() const {
  if (Edges.empty())
    return Status::error(
        "capacities: need at least one hop (one edge capacity)");
  if (Vertices.size() != Edges.size() + 1)
    return Status::error(fmt::format(
        "capacities: {} hops need {} vertex capacities (levels 0..{}), not {}",
        Edges.size(), Edges.size() + 1, Edges.size(), Vertices.size()));
  for (size_t l = 0; l < Vertices.size(); ++l)
    if (Vertices[l] <= 0)
      return Status::error(fmt::format(
          "capacities: vertex capacity {} of level {} must be positive",
          Vertices[l], l));
  for (size_t b = 0; b < Edges.size(); ++b)
    if (Edges[b] <= 0)
      return Status::error(fmt::format(
          "capacities: edge capacity {} of block {} must be positive", Edges[b],
          b));
  for (size_t b = 0; b < Edges.size(); ++b)
    if (Vertices[b] < Vertices[b + 1])
      return Status::error(fmt::format(
          "capacities: level {} has {} vertices, fewer than level {} ({}); "
          "a block's sources include its destinations",
          b, Vertices[b], b + 1, Vertices[b + 1]));
  if (Vertices.back() < 2)
    return Status::error(fmt::format(
        "capacities: the seed level has {} vertex; it needs room for a seed "
        "and the padding vertex",
        Vertices.back()));
  return Status::success();
}

std::string Capacities::str() const {
  return fmt::format("vertices {}, edges {}", joined(Vertices), joined(Edges));
}

Status boundCapacities(const NeighborSamplerOptions &options,
                       const GraphView &graph, int64_t batchSize,
                       Capacities &out) {
  int h = static_cast<int>(options.Fanouts.size());
  if (h == 0)
    return Status::error("bound capacities: the sampler has no hops");
  if (batchSize <= 0)
    return Status::error(fmt::format(
        "bound capacities: batch size {} must be positive", batchSize));
  for (int b = 0; b < h; ++b)
    if (options.Fanouts[b] != -1 && options.Fanouts[b] <= 0)
      return Status::error(
          fmt::format("bound capacities: fanout {} of hop {} must be "
                      "positive or -1",
                      options.Fanouts[b], b));
  int64_t v = graph.NumVertices, e = graph.numEdges(), maxDeg = 0;
  for (int64_t i = 0; i < v; ++i)
    maxDeg = std::max(maxDeg, graph.InPtr[i + 1] - graph.InPtr[i]);
  Capacities c;
  c.Vertices.assign(h + 1, 0);
  c.Edges.assign(h, 0);
  // The most real vertices level l can have.
  int64_t real = std::min(batchSize, v);
  c.Vertices[h] = real + 1;
  for (int b = h - 1; b >= 0; --b) {
    int64_t f = options.Fanouts[b];
    bool all = f == -1;
    int64_t fe = all ? maxDeg : f;
    bool dupes =
        options.Replace && !all && options.Kind == SamplerKind::Neighbor;
    int64_t edges = satMul(real, fe);
    if (!dupes)
      edges = std::min(edges, e);
    int64_t other = std::min(maxNewSources(v, real, fe), edges);
    c.Edges[b] = std::max<int64_t>(1, edges);
    c.Vertices[b] = satAdd(c.Vertices[b + 1], other);
    real = std::min(v, satAdd(real, other));
  }
  out = std::move(c);
  return Status::success();
}

Status fitCapacities(const NeighborSampler &sampler, const SeedSource &seeds,
                     int64_t batchSize, const FitOptions &options,
                     Capacities &out) {
  if (!(options.Quantile > 0 && options.Quantile <= 1))
    return Status::error(fmt::format(
        "fit capacities: quantile {} is outside (0, 1]", options.Quantile));
  if (!(options.Margin >= 0) || !std::isfinite(options.Margin))
    return Status::error(fmt::format(
        "fit capacities: margin {} must be finite and >= 0", options.Margin));
  if (options.Batches < 1)
    return Status::error(fmt::format(
        "fit capacities: {} batches; measure at least one", options.Batches));
  int64_t perEpoch = seeds.numBatches();
  if (perEpoch < 1)
    return Status::error("fit capacities: the seed source has no batches");
  Capacities bound;
  GNNC_TRY(
      boundCapacities(sampler.options(), sampler.graph(), batchSize, bound));
  int h = sampler.numHops();
  // Per batch: the seeds, every level's vertices besides the level above,
  // every level's vertices and every block's edges.
  std::vector<int64_t> seedCounts;
  std::vector<std::vector<int64_t>> other(h), level(h + 1), edges(h);
  SamplerScratch scratch;
  MiniBatch mb;
  std::vector<int64_t> s, n, e;
  for (int64_t k = 0; k < options.Batches; ++k) {
    uint64_t epoch = options.FirstEpoch + static_cast<uint64_t>(k / perEpoch);
    int64_t step = k % perEpoch;
    GNNC_TRY(seeds.batch(epoch, step, s));
    if (static_cast<int64_t>(s.size()) > batchSize)
      return Status::error(fmt::format(
          "fit capacities: batch (epoch {}, step {}) has {} seeds, more than "
          "the batch size {}",
          epoch, step, s.size(), batchSize));
    GNNC_TRY(sampler.sample(s, epoch, step, scratch, mb));
    realCounts(mb, n, e);
    seedCounts.push_back(n[h]);
    for (int l = 0; l <= h; ++l)
      level[l].push_back(n[l]);
    for (int b = 0; b < h; ++b) {
      other[b].push_back(n[b] - n[b + 1]);
      edges[b].push_back(e[b]);
    }
  }
  double q = options.Quantile, m = options.Margin;
  Capacities c;
  c.Vertices.assign(h + 1, 0);
  c.Edges.assign(h, 0);
  c.Vertices[h] = std::min(
      bound.Vertices[h],
      std::max<int64_t>(2, satAdd(withMargin(quantile(seedCounts, q), m), 1)));
  for (int b = h - 1; b >= 0; --b) {
    int64_t chained =
        satAdd(c.Vertices[b + 1], withMargin(quantile(other[b], q), m));
    int64_t own = satAdd(withMargin(quantile(level[b], q), m), b >= 1);
    c.Vertices[b] = std::min(bound.Vertices[b], std::max(chained, own));
    c.Edges[b] =
        std::min(bound.Edges[b],
                 std::max<int64_t>(1, withMargin(quantile(edges[b], q), m)));
  }
  GNNC_TRY(c.check());
  out = std::move(c);
  return Status::success();
}

Status fitCapacities(const NeighborSampler &sampler, const ItemSampler &items,
                     const FitOptions &options, Capacities &out) {
  std::unique_ptr<SeedSource> seeds = seedsOf(items);
  return fitCapacities(sampler, *seeds, items.options().BatchSize, options,
                       out);
}

//===----------------------------------------------------------------------===//
// Padding
//===----------------------------------------------------------------------===//

namespace {
int64_t sum(const std::vector<int64_t> &v) {
  return std::accumulate(v.begin(), v.end(), int64_t{0});
}
} // namespace

int64_t PadOutcome::realVertices() const { return sum(RealVertices); }
int64_t PadOutcome::paddedVertices() const { return sum(PaddedVertices); }
int64_t PadOutcome::realEdges() const { return sum(RealEdges); }
int64_t PadOutcome::paddedEdges() const { return sum(PaddedEdges); }

namespace {
/// Checks that `b` is a sampled batch with `hops` chained blocks, not
/// padded yet, with features of its input vertices (or none) and labels of
/// its seeds (or none).
Status checkSampled(const MiniBatch &b, int hops) {
  if (static_cast<int>(b.Blocks.size()) != hops)
    return Status::error(fmt::format("{}: {} blocks, but the capacities have "
                                     "{} hops",
                                     batchName(b), b.Blocks.size(), hops));
  const Block &last = b.Blocks.back();
  if (!last.DstIds.empty() && last.DstIds.back() == -1)
    return Status::error(batchName(b) + ": is padded already");
  for (int i = 0; i < hops; ++i) {
    const Block &k = b.Blocks[i];
    bool ok = k.NumDst >= 0 && k.NumDst <= k.NumSrc &&
              static_cast<int64_t>(k.Ptr.size()) == k.NumDst + 1 &&
              k.Ptr.front() == 0 && k.Ptr.back() == k.numEdges() &&
              static_cast<int64_t>(k.SrcIds.size()) == k.NumSrc &&
              static_cast<int64_t>(k.DstIds.size()) == k.NumDst &&
              (k.EdgeId.empty() || k.EdgeId.size() == k.Src.size());
    if (ok && i + 1 < hops)
      ok = k.NumDst == b.Blocks[i + 1].NumSrc;
    if (!ok)
      return Status::error(
          fmt::format("{}: block {} is not a sampled block chained to the next",
                      batchName(b), i));
  }
  int64_t inputs = b.Blocks.front().NumSrc;
  if (!b.Features.empty() &&
      (b.FeatureDim <= 0 ||
       static_cast<int64_t>(b.Features.size()) != inputs * b.FeatureDim))
    return Status::error(
        fmt::format("{}: {} feature values are not {} input rows of width {}",
                    batchName(b), b.Features.size(), inputs, b.FeatureDim));
  if (!b.Labels.empty() && static_cast<int64_t>(b.Labels.size()) != last.NumDst)
    return Status::error(fmt::format("{}: {} labels for {} seeds", batchName(b),
                                     b.Labels.size(), last.NumDst));
  return Status::success();
}
} // namespace

Status Padder::pad(MiniBatch &batch, const Capacities &caps, Oversize policy,
                   PadOutcome &outcome) {
  GNNC_TRY(caps.check());
  GNNC_TRY(checkSampled(batch, caps.numHops()));
  outcome.Result = PadResult::Fitted;
  outcome.TrimmedEdges = 0;
  outcome.RealVertices.clear();
  outcome.PaddedVertices.clear();
  outcome.RealEdges.clear();
  outcome.PaddedEdges.clear();
  realCounts(batch, Counts, EdgeCounts);
  std::string why = overflow(caps, Counts, EdgeCounts);
  if (!why.empty()) {
    switch (policy) {
    case Oversize::Error:
      return Status::error(batchName(batch) + " does not fit: " + why);
    case Oversize::Skip:
      outcome.Result = PadResult::Skipped;
      return Status::success();
    case Oversize::Trim:
      GNNC_TRY(trim(batch, caps, outcome));
      outcome.Result = PadResult::Trimmed;
      break;
    }
  }
  layout(batch, caps, outcome);
  return Status::success();
}

Status Padder::trim(MiniBatch &batch, const Capacities &caps,
                    PadOutcome &outcome) {
  int h = caps.numHops();
  Levels.resize(h + 1);
  int64_t seeds = batch.Blocks.back().NumDst;
  if (std::string why = seedOverflow(caps, seeds); !why.empty())
    return Status::error(
        batchName(batch) +
        " does not fit, and trimming could not fit it: " + why);
  std::vector<int64_t> &top = Levels[h].Kept;
  top.resize(seeds);
  std::iota(top.begin(), top.end(), 0);
  // Decide every block first, so that the batch is left alone on failure.
  // Flags of a block's old sources: 1 = kept destination, 2 = source of a
  // kept edge.
  std::vector<uint32_t> &flag = Mark;
  for (int b = h - 1; b >= 0; --b) {
    const Block &k = batch.Blocks[b];
    const std::vector<int64_t> &dst = Levels[b + 1].Kept;
    int64_t edgeCap = caps.Edges[b];
    int64_t otherCap = caps.Vertices[b] - caps.Vertices[b + 1];
    flag.assign(k.NumSrc, 0);
    int64_t maxDeg = 0;
    for (int64_t j : dst) {
      flag[j] = 1;
      maxDeg = std::max(maxDeg, k.Ptr[j + 1] - k.Ptr[j]);
    }
    // Edges and other sources when every kept destination keeps its first
    // t in-edges (marking the sources with 2).
    auto take = [&](int64_t t, int64_t &edges, int64_t &other) {
      for (uint32_t &f : flag)
        f &= 1;
      edges = other = 0;
      for (int64_t j : dst) {
        int64_t lo = k.Ptr[j], hi = std::min(k.Ptr[j + 1], lo + t);
        edges += hi - lo;
        for (int64_t p = lo; p < hi; ++p)
          if (!flag[k.Src[p]]) {
            flag[k.Src[p]] = 2;
            ++other;
          }
      }
    };
    int64_t edges, other;
    take(1, edges, other);
    if (std::string why = blockOverflow(caps, b, other, edges); !why.empty())
      return Status::error(
          batchName(batch) +
          " does not fit, and trimming could not fit it: with one in-edge "
          "per destination, " +
          why);
    // The largest t in [1, maxDeg] that fits (fitting is monotone in t).
    int64_t lo = 1, hi = std::max<int64_t>(1, maxDeg);
    while (lo < hi) {
      int64_t mid = lo + (hi - lo + 1) / 2;
      take(mid, edges, other);
      if (edges <= edgeCap && other <= otherCap)
        lo = mid;
      else
        hi = mid - 1;
    }
    int64_t t = lo;
    take(t, edges, other);
    std::vector<uint8_t> &keep = Levels[b].Edges;
    keep.assign(k.Src.size(), 0);
    for (int64_t j : dst) {
      int64_t first = k.Ptr[j], end = k.Ptr[j + 1];
      for (int64_t p = first; p < std::min(end, first + t); ++p)
        keep[p] = 1;
      // Further in-edges, in order, wherever they still fit.
      for (int64_t p = first + t; p < end; ++p) {
        int64_t isNew = flag[k.Src[p]] ? 0 : 1;
        if (edges + 1 <= edgeCap && other + isNew <= otherCap) {
          keep[p] = 1;
          ++edges;
          other += isNew;
          if (isNew)
            flag[k.Src[p]] = 2;
        }
      }
    }
    outcome.TrimmedEdges += k.numEdges() - edges;
    std::vector<int64_t> &kept = Levels[b].Kept;
    kept.assign(dst.begin(), dst.end());
    for (int64_t i = 0; i < k.NumSrc; ++i)
      if (flag[i] == 2)
        kept.push_back(i);
  }

  // Rewrite the blocks with the kept vertices and edges.
  for (int b = h - 1; b >= 0; --b) {
    Block &k = batch.Blocks[b];
    const std::vector<int64_t> &dst = Levels[b + 1].Kept;
    const std::vector<int64_t> &src = Levels[b].Kept;
    const std::vector<uint8_t> &keep = Levels[b].Edges;
    NewId.assign(k.NumSrc, -1);
    for (size_t i = 0; i < src.size(); ++i)
      NewId[src[i]] = static_cast<int64_t>(i);
    OldPtr.assign(k.Ptr.begin(), k.Ptr.end());
    OldSrc.assign(k.Src.begin(), k.Src.end());
    OldEdge.assign(k.EdgeId.begin(), k.EdgeId.end());
    OldIds.assign(k.SrcIds.begin(), k.SrcIds.end());
    bool ids = !OldEdge.empty();
    int64_t w = 0;
    k.Ptr.resize(dst.size() + 1);
    for (size_t i = 0; i < dst.size(); ++i) {
      k.Ptr[i] = w;
      for (int64_t p = OldPtr[dst[i]]; p < OldPtr[dst[i] + 1]; ++p)
        if (keep[p]) {
          k.Src[w] = NewId[OldSrc[p]];
          if (ids)
            k.EdgeId[w] = OldEdge[p];
          ++w;
        }
    }
    k.Ptr[dst.size()] = w;
    k.Src.resize(w);
    if (ids)
      k.EdgeId.resize(w);
    k.NumSrc = static_cast<int64_t>(src.size());
    k.NumDst = static_cast<int64_t>(dst.size());
    k.SrcIds.resize(src.size());
    for (size_t i = 0; i < src.size(); ++i)
      k.SrcIds[i] = OldIds[src[i]];
    k.DstIds.assign(k.SrcIds.begin(), k.SrcIds.begin() + k.NumDst);
  }
  if (!batch.Features.empty()) {
    const std::vector<int64_t> &rows = Levels[0].Kept;
    size_t dim = static_cast<size_t>(batch.FeatureDim);
    Rows.assign(batch.Features.begin(), batch.Features.end());
    batch.Features.resize(rows.size() * dim);
    for (size_t i = 0; i < rows.size(); ++i)
      std::memcpy(batch.Features.data() + i * dim,
                  Rows.data() + static_cast<size_t>(rows[i]) * dim,
                  dim * sizeof(float));
  }
  return Status::success();
}

void Padder::layout(MiniBatch &batch, const Capacities &caps,
                    PadOutcome &outcome) {
  int h = caps.numHops();
  const std::vector<int64_t> &cv = caps.Vertices;
  std::vector<int64_t> &n = Counts;
  realCounts(batch, n, outcome.RealEdges);
  outcome.RealVertices.assign(n.begin(), n.end());
  outcome.PaddedVertices.assign(cv.begin(), cv.end());
  outcome.PaddedEdges.assign(caps.Edges.begin(), caps.Edges.end());
  // The scratch copies hold at most a capacity: sized once for any batch.
  int64_t maxV = cv[0];
  int64_t maxE = *std::max_element(caps.Edges.begin(), caps.Edges.end());
  OldIds.reserve(maxV);
  OldPtr.reserve(maxV + 1);
  Inv.reserve(maxV);
  OldSrc.reserve(maxE);
  OldEdge.reserve(maxE);

  // Padded positions of the real vertices, and the masks.
  batch.RealPos.resize(h + 1);
  batch.VertexMask.resize(h + 1);
  batch.EdgeMask.resize(h);
  for (int l = 0; l <= h; ++l)
    batch.RealPos[l].reserve(cv[l]);
  batch.RealPos[h].resize(n[h]);
  std::iota(batch.RealPos[h].begin(), batch.RealPos[h].end(), 0);
  for (int b = h - 1; b >= 0; --b) {
    std::vector<int64_t> &pos = batch.RealPos[b];
    const std::vector<int64_t> &above = batch.RealPos[b + 1];
    pos.resize(n[b]);
    std::copy(above.begin(), above.end(), pos.begin());
    for (int64_t i = n[b + 1]; i < n[b]; ++i)
      pos[i] = cv[b + 1] + (i - n[b + 1]);
  }
  for (int l = 0; l <= h; ++l) {
    batch.VertexMask[l].assign(cv[l], 0);
    for (int64_t p : batch.RealPos[l])
      batch.VertexMask[l][p] = 1;
  }

  bool anyIds = false;
  int64_t anyEdges = 0;
  for (const Block &k : batch.Blocks) {
    anyIds = anyIds || !k.EdgeId.empty();
    anyEdges += k.numEdges();
  }
  bool ids = anyIds || anyEdges == 0;

  for (int b = h - 1; b >= 0; --b) {
    Block &k = batch.Blocks[b];
    const std::vector<int64_t> &srcPos = batch.RealPos[b];
    const std::vector<int64_t> &dstPos = batch.RealPos[b + 1];
    int64_t vs = cv[b], vd = cv[b + 1], ne = caps.Edges[b];
    // Vertex ids: padding -1.
    OldIds.assign(k.SrcIds.begin(), k.SrcIds.end());
    k.SrcIds.assign(vs, -1);
    for (int64_t i = 0; i < n[b]; ++i)
      k.SrcIds[srcPos[i]] = OldIds[i];
    if (b == h - 1) {
      k.DstIds.resize(vd, -1);
    } else {
      const std::vector<int64_t> &above = batch.Blocks[b + 1].SrcIds;
      k.DstIds.assign(above.begin(), above.end());
    }
    // Edges: each padded destination in order, real ones with their real
    // edges, padding ones with their round-robin share of self-loops.
    OldPtr.assign(k.Ptr.begin(), k.Ptr.end());
    OldSrc.assign(k.Src.begin(), k.Src.end());
    OldEdge.assign(k.EdgeId.begin(), k.EdgeId.end());
    bool hadIds = !OldEdge.empty();
    Inv.assign(vd, -1);
    for (int64_t j = 0; j < n[b + 1]; ++j)
      Inv[dstPos[j]] = j;
    int64_t padEdges = ne - k.numEdges(), padDst = vd - n[b + 1];
    int64_t each = padEdges / padDst, extra = padEdges % padDst;
    k.Ptr.resize(vd + 1);
    k.Src.resize(ne);
    k.EdgeId.resize(ids ? ne : 0);
    std::vector<uint8_t> &mask = batch.EdgeMask[b];
    mask.assign(ne, 0);
    int64_t w = 0, padding = 0;
    for (int64_t p = 0; p < vd; ++p) {
      k.Ptr[p] = w;
      if (int64_t j = Inv[p]; j >= 0) {
        for (int64_t q = OldPtr[j]; q < OldPtr[j + 1]; ++q, ++w) {
          k.Src[w] = srcPos[OldSrc[q]];
          if (ids)
            k.EdgeId[w] = hadIds ? OldEdge[q] : -1;
          mask[w] = 1;
        }
      } else {
        int64_t count = each + (padding < extra ? 1 : 0);
        ++padding;
        for (int64_t c = 0; c < count; ++c, ++w) {
          k.Src[w] = p;
          if (ids)
            k.EdgeId[w] = -1;
        }
      }
    }
    k.Ptr[vd] = w;
    k.NumSrc = vs;
    k.NumDst = vd;
  }

  // Features: real rows to their padded positions, from the last (every
  // position is at or after its row, so no row is overwritten before it
  // moves), then the padding rows zeroed.
  if (!batch.Features.empty()) {
    size_t dim = static_cast<size_t>(batch.FeatureDim);
    const std::vector<int64_t> &pos = batch.RealPos[0];
    batch.Features.resize(static_cast<size_t>(cv[0]) * dim);
    float *f = batch.Features.data();
    for (int64_t i = n[0] - 1; i >= 0; --i)
      if (pos[i] != i)
        std::memcpy(f + pos[i] * dim, f + i * dim, dim * sizeof(float));
    const std::vector<uint8_t> &real = batch.VertexMask[0];
    for (int64_t p = 0; p < cv[0]; ++p)
      if (!real[p])
        std::memset(f + p * dim, 0, dim * sizeof(float));
  }
  if (!batch.Labels.empty())
    batch.Labels.resize(cv[h], -1);
  batch.Padded = true;
}

Status padBatch(MiniBatch &batch, const Capacities &caps, Oversize policy,
                PadOutcome &outcome) {
  thread_local Padder padder;
  return padder.pad(batch, caps, policy, outcome);
}

} // namespace gnnc::sample
