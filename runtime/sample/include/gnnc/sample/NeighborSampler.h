//===- NeighborSampler.h - Sampled blocks, one per hop ----------*- C++ -*-===//
//
// Part of gnnc. A neighbour sampler turns a batch of seed vertices into the
// Blocks a multi-hop model runs on: one bipartite graph per hop, from the
// outermost hop (whose sources are the vertices whose input features are
// needed) to the innermost (whose destinations are the seeds).
//
// Hop h (counted from the seeds) takes the destinations D (the seeds, or the
// sources of hop h-1) and, for each d in D, draws in-edges of d from the
// graph: `fanout` of them, or all when the fanout is -1 or d has no more.
// The block's sources are D itself, in order, followed by the other sampled
// in-neighbours in order of first appearance (deduplicated). So source i is
// destination i for i < |D|, and the destinations' own features are the
// first |D| rows of the sources' features.
//
// Randomness is counter-based: the draws for destination d at hop h are a
// function of (seed, epoch, step, h, d) alone (and, for LABOR, the variate of
// source u of (seed, epoch, step, h, u)). They depend neither on the other
// vertices of the batch, nor on the thread or the rank that samples it, so a
// global batch split over 4 ranks draws the same edges as one rank.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_SAMPLE_NEIGHBORSAMPLER_H
#define GNNC_SAMPLE_NEIGHBORSAMPLER_H

#include "gnnc/runtime/Graph.h"
#include "gnnc/runtime/Status.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace gnnc::sample {

using rt::Status;

/// The graph a sampler draws from, by destination: the in-edges of vertex v
/// are positions inPtr[v] .. inPtr[v+1]-1, their sources inSrc[...]. The
/// arrays are borrowed (an rt::Graph's, a memory-mapped file's, or the global
/// view of a distributed tensor) and must outlive the sampler.
struct GraphView {
  int64_t NumVertices = 0;
  const int64_t *InPtr = nullptr; ///< NumVertices + 1 offsets
  const int64_t *InSrc = nullptr; ///< InPtr[NumVertices] sources
  /// Optional original edge id of each position (else the position itself).
  const int64_t *InEdge = nullptr;
  /// Optional per-position weight >= 0: edges are drawn with probability
  /// proportional to it (among a destination's eligible in-edges).
  const float *Weight = nullptr;
  /// Optional per-position mask: only positions with a non-zero byte are
  /// eligible.
  const uint8_t *Mask = nullptr;

  int64_t numEdges() const { return NumVertices ? InPtr[NumVertices] : 0; }

  /// The view of an rt::Graph's CSR by destination (with its edge ids).
  static GraphView of(const rt::Graph &g);
  /// Checks the view: offsets non-decreasing from 0, sources in range,
  /// weights finite and >= 0. O(V + E); samplers call it once.
  Status check() const;
};

/// One hop's bipartite graph, with local ids: destination j in [0, NumDst),
/// source i in [0, NumSrc). Its in-edges are positions Ptr[j] .. Ptr[j+1]-1
/// of Src (local source ids) and EdgeId (the edges' ids in the full graph).
struct Block {
  int64_t NumSrc = 0, NumDst = 0;
  std::vector<int64_t> Ptr; ///< NumDst + 1 offsets
  std::vector<int64_t> Src; ///< local source of each edge
  /// The edges' ids in the full graph (NeighborSamplerOptions::KeepEdgeIds).
  std::vector<int64_t> EdgeId;
  /// Original vertex ids: SrcIds has NumSrc entries, the first NumDst of
  /// which are DstIds.
  std::vector<int64_t> SrcIds, DstIds;

  int64_t numEdges() const { return static_cast<int64_t>(Src.size()); }
  /// The block as the runtime graph generated code takes (numSrc sources,
  /// numDst destinations, edges in destination order).
  Status toGraph(rt::Graph &out) const;
};

/// A sampled mini-batch: the seeds and one block per hop.
struct MiniBatch {
  uint64_t Epoch = 0;
  int64_t Step = 0;
  std::vector<int64_t> Seeds;
  /// Blocks[0] is the outermost hop (its SrcIds are the input vertices),
  /// Blocks.back() the innermost (its DstIds are the seeds).
  std::vector<Block> Blocks;
  /// Rows of the input vertices' features (Blocks[0].SrcIds, or the seeds
  /// when there are no blocks), filled by a feature fetch; width FeatureDim.
  std::vector<float> Features;
  int64_t FeatureDim = 0;
  /// The seeds' labels, when the pipeline has labels.
  std::vector<int64_t> Labels;

  /// Set by padding to fixed capacities (FixedSize.h): the blocks,
  /// features and labels then have the capacities' sizes, padding vertices
  /// id -1, padding edges edge id -1, padding rows zero and padding labels
  /// -1; Seeds keep the real seeds. The three vectors below are empty
  /// unless the batch is padded (NeighborSampler::sample leaves them, and
  /// Padded, alone).
  bool Padded = false;
  /// Per level (0: input vertices, ..., H: seeds), 1 for a real vertex and
  /// 0 for padding, one byte per padded vertex.
  std::vector<std::vector<uint8_t>> VertexMask;
  /// Per block, 1 for a real edge and 0 for padding, one byte per padded
  /// edge.
  std::vector<std::vector<uint8_t>> EdgeMask;
  /// Per level, the padded position of each real vertex of the level as
  /// sampled (after trimming, if the batch was trimmed).
  std::vector<std::vector<int64_t>> RealPos;

  /// The seeds' mask (VertexMask.back()): which padded labels are real.
  /// Empty unless the batch is padded.
  const std::vector<uint8_t> &labelMask() const {
    static const std::vector<uint8_t> none;
    return VertexMask.empty() ? none : VertexMask.back();
  }

  /// The vertices whose input features the model needs.
  const std::vector<int64_t> &inputIds() const {
    return Blocks.empty() ? Seeds : Blocks.front().SrcIds;
  }
  int64_t numSampledEdges() const;
};

enum class SamplerKind {
  /// Per destination, `fanout` in-edges (GraphSAGE; DGL's NeighborSampler).
  Neighbor,
  /// Layer-wise LABOR-0 (Balin and Catalyurek, NeurIPS 2023): one uniform
  /// variate r_u per source u and hop; destination d with eligible in-degree
  /// k keeps edge (u, d) when r_u <= fanout / k (all when k <= fanout), so
  /// each destination keeps `fanout` edges in expectation and neighbouring
  /// destinations share their sources.
  Labor,
};

struct NeighborSamplerOptions {
  SamplerKind Kind = SamplerKind::Neighbor;
  /// Fanout per hop, from the outermost hop inwards (DGL's order): the last
  /// entry is used for the seeds. -1 takes every eligible in-edge.
  std::vector<int64_t> Fanouts;
  /// Draw with replacement (Neighbor only): exactly `fanout` draws per
  /// destination with at least one eligible in-edge, duplicates kept.
  bool Replace = false;
  /// Key of all draws (with epoch, step, hop and vertex).
  uint64_t Seed = 0;
  /// Record each sampled edge's id in the full graph (Block::EdgeId), for
  /// edge features. Off, EdgeId stays empty and a row's edge ids are not
  /// read.
  bool KeepEdgeIds = true;
};

/// Per-thread scratch of a sampler (a relabelling table and buffers). A
/// sampler is stateless and thread-safe; each thread passes its own scratch.
class SamplerScratch {
public:
  SamplerScratch();
  ~SamplerScratch();
  SamplerScratch(SamplerScratch &&) noexcept;
  SamplerScratch &operator=(SamplerScratch &&) noexcept;

  struct Impl;
  Impl &impl() { return *P; }

private:
  std::unique_ptr<Impl> P;
};

class NeighborSampler {
public:
  /// Checks the options (at least one hop, fanouts -1 or > 0, Replace only
  /// for Neighbor) and the graph (GraphView::check).
  static Status create(const GraphView &graph,
                       const NeighborSamplerOptions &options,
                       NeighborSampler &out);

  const NeighborSamplerOptions &options() const { return Options; }
  const GraphView &graph() const { return Graph; }
  int numHops() const { return static_cast<int>(Options.Fanouts.size()); }

  /// Samples the blocks of `seeds` (distinct vertices in range, checked) for
  /// (epoch, step) into out.Blocks, and sets out.Seeds, Epoch and Step.
  Status sample(const std::vector<int64_t> &seeds, uint64_t epoch,
                int64_t step, SamplerScratch &scratch, MiniBatch &out) const;

private:
  GraphView Graph;
  NeighborSamplerOptions Options;
};

} // namespace gnnc::sample

#endif // GNNC_SAMPLE_NEIGHBORSAMPLER_H
