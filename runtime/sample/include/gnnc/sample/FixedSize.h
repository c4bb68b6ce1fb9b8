//===- FixedSize.h - Fixed-size (padded) mini-batches -----------*- C++ -*-===//
//
// Part of gnnc. An ahead-of-time compiled model runs best when its shapes
// never change. This header pads a sampled MiniBatch to static capacities:
// every level and every block gets the same number of vertices and edges in
// every batch, and the padding never changes a real result.
//
// Levels. A batch with H hops has levels 0..H: level H is the seeds
// (Blocks.back().DstIds), level b < H the sources of block b
// (Blocks[b].SrcIds; level 0 is the input vertices). Block b has the sources
// of level b and the destinations of level b+1.
//
// Capacities. Vertices[l] (H+1 entries) and Edges[b] (H entries), from
// boundCapacities (the worst case: never overflows), fitCapacities (a
// quantile of measured batches plus a margin) or by hand.
//
// Padded layout, with capacities V_l, E_b and real counts n_l:
//
//   level H:      [n_H seeds, V_H - n_H padding]
//   level b < H:  [level b+1's padded list (V_{b+1} entries),
//                  the n_b - n_{b+1} other real vertices of level b, in order,
//                  padding up to V_b]
//
// so every block's padded sources start with its padded destinations. Block
// b has exactly E_b edges in destination order: each real destination keeps
// its real edges (sources renumbered to their padded positions), and the
// E_b - (real edges) padding edges go round-robin to the padding
// destinations of level b+1, each a self-loop of its destination (a padding
// source, because destinations come first). Padding edges thus join padding
// vertices only: the in-degree, sum, mean, max and softmax of a real
// destination, and the out-degree of a real source, see real edges only.
// Padding vertices have id -1, padding edges edge id -1, padding feature
// rows are zero and padding labels -1.
//
// A batch fits when the seeds leave one padding vertex (n_H + 1 <= V_H),
// every level's other real vertices fit between the level above and the
// capacity (n_b - n_{b+1} <= V_b - V_{b+1} for b < H), and every block's
// edges fit (e_b <= E_b). One that does not fit is an error, skipped or
// trimmed (Oversize).
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_SAMPLE_FIXEDSIZE_H
#define GNNC_SAMPLE_FIXEDSIZE_H

#include "gnnc/sample/ItemSampler.h"
#include "gnnc/sample/NeighborSampler.h"

#include <cstdint>
#include <string>
#include <vector>

namespace gnnc::sample {

class SeedSource;

/// Static sizes of a padded batch with H hops.
struct Capacities {
  /// Padded vertex count of each level 0..H (H+1 entries; level H is the
  /// seeds). Non-increasing towards the seeds.
  std::vector<int64_t> Vertices;
  /// Padded edge count of each block 0..H-1 (H entries).
  std::vector<int64_t> Edges;

  int numHops() const { return static_cast<int>(Edges.size()); }
  /// Sizes consistent (H >= 1, H+1 vertex levels), every entry > 0,
  /// Vertices[b] >= Vertices[b+1], and Vertices[H] >= 2 (a seed and the
  /// padding vertex).
  Status check() const;
  /// "vertices [V_0, ..., V_H], edges [E_0, ..., E_{H-1}]".
  std::string str() const;

  bool operator==(const Capacities &o) const {
    return Vertices == o.Vertices && Edges == o.Edges;
  }
  bool operator!=(const Capacities &o) const { return !(*this == o); }
};

/// The worst-case capacities of batches of at most `batchSize` seeds drawn
/// by a sampler with `options` from `graph`: no batch ever overflows them.
/// Real seeds <= min(batchSize, V). At hop b with fanout f (f = -1: the
/// graph's largest in-degree), for any real destination count n up to the
/// bound of level b+1: new sources <= min(V - n, n f, E), edges <=
/// min(n f, E) (n f with replacement, which keeps duplicates). Every level
/// gets the largest such bound over n; Vertices[H] = seeds + 1 (the padding
/// vertex), Vertices[b] = Vertices[b+1] + new sources of hop b; every edge
/// capacity is at least 1. Saturating arithmetic: never overflows. LABOR
/// has the bound of sampling without replacement.
Status boundCapacities(const NeighborSamplerOptions &options,
                       const GraphView &graph, int64_t batchSize,
                       Capacities &out);

/// How fitCapacities measures.
struct FitOptions {
  /// Quantile of the measured counts, in (0, 1]: the ceil(Quantile * n)-th
  /// smallest of n measurements (nearest rank; 1 is the maximum).
  double Quantile = 0.99;
  /// Relative margin added to the quantile (>= 0).
  double Margin = 0.1;
  /// Batches to sample (>= 1): steps 0.. of epoch FirstEpoch, then of the
  /// next epochs, with the keys training uses.
  int64_t Batches = 100;
  uint64_t FirstEpoch = 0;
};

/// Capacities from measured batches. For the seeds and for the other real
/// vertices of each level b < H (n_b - n_{b+1}) and the edges of each block:
/// ceil(quantile * (1 + Margin)). Vertices[H] = seeds + 1, Vertices[b] =
/// Vertices[b+1] + other vertices of level b, raised if needed to the
/// level's own ceil(quantile(n_b) * (1 + Margin)) (+ 1 for b >= 1); every
/// entry is then clamped to boundCapacities(sampler, batchSize). The seed
/// batches come from `seeds` (Pipeline.h); `batchSize` is the largest batch
/// it makes.
Status fitCapacities(const NeighborSampler &sampler, const SeedSource &seeds,
                     int64_t batchSize, const FitOptions &options,
                     Capacities &out);
/// The same with the batches of an item sampler (batch size from its
/// options).
Status fitCapacities(const NeighborSampler &sampler, const ItemSampler &items,
                     const FitOptions &options, Capacities &out);

/// What to do with a batch that does not fit its capacities.
enum class Oversize {
  /// An error naming the block, what overflows and the counts.
  Error,
  /// Drop the batch (the pipeline delivers the next one).
  Skip,
  /// Drop sampled edges until it fits (see Padder::pad).
  Trim,
};

/// Capacities and oversize policy of a pipeline's fixed-size batches.
struct FixedSizeOptions {
  Capacities Caps;
  Oversize Policy = Oversize::Error;
};

enum class PadResult {
  Fitted,  ///< fitted as sampled, padded
  Trimmed, ///< trimmed, then padded
  Skipped, ///< did not fit: left as it was (Oversize::Skip)
};

/// What padding one batch did. The counts are per level (0..H) and per
/// block, after trimming; empty when the batch was skipped.
struct PadOutcome {
  PadResult Result = PadResult::Fitted;
  /// Sampled edges that trimming dropped (also those of the destinations
  /// trimming removed from outer blocks).
  int64_t TrimmedEdges = 0;
  std::vector<int64_t> RealVertices, PaddedVertices;
  std::vector<int64_t> RealEdges, PaddedEdges;

  int64_t realVertices() const;   ///< summed over levels
  int64_t paddedVertices() const; ///< summed over levels
  int64_t realEdges() const;      ///< summed over blocks
  int64_t paddedEdges() const;    ///< summed over blocks
};

/// Pads batches in place, keeping scratch between calls: once the batch's
/// vectors have reached the capacities (a recycled batch), padding a batch
/// that fits does not allocate. One Padder per thread.
class Padder {
public:
  /// Pads `batch` (as sampled: not padded yet, blocks chained, Features of
  /// the n_0 input vertices or empty, Labels of the n_H seeds or empty) to
  /// `caps`, in place, and sets batch.Padded, VertexMask, EdgeMask and
  /// RealPos. Seeds keep the real seeds. If the batch does not fit:
  ///
  ///   Error: an error "batch (epoch E, step S) does not fit: block b has
  ///     ..., capacity ..."; the batch is unchanged.
  ///   Skip: outcome.Result = Skipped; the batch is unchanged.
  ///   Trim: blocks from the innermost outwards; the kept destinations of
  ///     block b are the kept sources of block b+1 (all seeds for the
  ///     innermost). Each kept destination keeps its first t in-edges, for
  ///     the largest t >= 1 with which the block's edges and new sources
  ///     fit, then further in-edges are added in destination and edge order
  ///     wherever they still fit. Kept vertices are relabelled in order:
  ///     the kept destinations first, in their order, then the other kept
  ///     sources in their sampled order. Features and labels follow. If
  ///     even t = 1 does not fit, the Error message says trimming could not
  ///     fit it; the batch is unchanged.
  Status pad(MiniBatch &batch, const Capacities &caps, Oversize policy,
             PadOutcome &outcome);

private:
  struct LevelScratch {
    std::vector<int64_t> Kept;  ///< trimming: kept old ids, new order
    std::vector<uint8_t> Edges; ///< trimming: kept edge positions
  };
  std::vector<LevelScratch> Levels;
  std::vector<int64_t> Counts, EdgeCounts, NewId, Inv;
  std::vector<int64_t> OldPtr, OldSrc, OldEdge, OldIds;
  std::vector<uint32_t> Mark;
  std::vector<float> Rows;

  Status trim(MiniBatch &batch, const Capacities &caps, PadOutcome &outcome);
  void layout(MiniBatch &batch, const Capacities &caps, PadOutcome &outcome);
};

/// Padder::pad with a per-thread Padder.
Status padBatch(MiniBatch &batch, const Capacities &caps, Oversize policy,
                PadOutcome &outcome);

} // namespace gnnc::sample

#endif // GNNC_SAMPLE_FIXEDSIZE_H
