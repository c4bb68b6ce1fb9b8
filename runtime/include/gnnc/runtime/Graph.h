//===- Graph.h - Compressed graph storage for the runtime -------*- C++ -*-===//
//
// Part of gnnc. A Graph is a directed edge list from numSrc source vertices
// to numDst destination vertices (numSrc == numDst for an ordinary graph,
// different for a bipartite message-passing block), stored twice:
//
//   * CSR by destination: for each destination v, its in-edges at positions
//     inPtr[v] .. inPtr[v+1]-1 of inSrc (source vertex) and inEdge (original
//     edge id);
//   * CSC by source: for each source u, its out-edges at positions
//     outPtr[u] .. outPtr[u+1]-1 of outDst (destination) and outEdge.
//
// Within a row, edges keep their original order. Self-loops, multi-edges and
// isolated vertices are all allowed. The original edge list stays available
// through edgeSrc() / edgeDst(), so per-edge data indexed by edge id lines up
// with inEdge / outEdge.
//
// Also here: the other graph arguments of generated code (BatchedGraph,
// HeteroGraph) and their checks.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_RUNTIME_GRAPH_H
#define GNNC_RUNTIME_GRAPH_H

#include "gnnc/runtime/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace gnnc::rt {

/// The most vertices a graph may have on either side: 2^31 - 1. Vertex ids
/// are 32-bit on the GPU, and the offsets of a graph this large already take
/// 32 GiB on the host.
inline constexpr int64_t kMaxVertices = (int64_t{1} << 31) - 1;

class Graph {
public:
  /// An empty graph (no vertices, no edges).
  Graph();

  /// Builds a graph from edges (src[e], dst[e]), e in [0, numEdges), in
  /// O(numSrc + numDst + numEdges). Checks that numSrc, numDst and numEdges
  /// are non-negative, the vertex counts at most kMaxVertices and every
  /// index in range; the error names the first bad edge, e.g. `edge 17:
  /// source 2708 is outside [0, 2708)`. `out` is only written on success.
  /// `src` / `dst` may be null when numEdges is 0.
  static Status fromEdgeIndex(const int64_t *src, const int64_t *dst,
                              int64_t numEdges, int64_t numSrc, int64_t numDst,
                              Graph &out);

  int64_t numSrc() const { return NumSrc; }
  int64_t numDst() const { return NumDst; }
  int64_t numEdges() const { return static_cast<int64_t>(EdgeSrc.size()); }
  /// Whether sources and destinations are the same vertex set.
  bool isHomogeneous() const { return NumSrc == NumDst; }

  /// The edge list in its original order.
  const std::vector<int64_t> &edgeSrc() const { return EdgeSrc; }
  const std::vector<int64_t> &edgeDst() const { return EdgeDst; }

  /// CSR by destination: numDst + 1 offsets, then numEdges entries each.
  const std::vector<int64_t> &inPtr() const { return InPtr; }
  const std::vector<int64_t> &inSrc() const { return InSrc; }
  const std::vector<int64_t> &inEdge() const { return InEdge; }

  /// CSC by source: numSrc + 1 offsets, then numEdges entries each.
  const std::vector<int64_t> &outPtr() const { return OutPtr; }
  const std::vector<int64_t> &outDst() const { return OutDst; }
  const std::vector<int64_t> &outEdge() const { return OutEdge; }

  /// Number of in-edges of destination v (0 <= v < numDst, not checked).
  int64_t inDegree(int64_t v) const { return InPtr[v + 1] - InPtr[v]; }
  /// Number of out-edges of source u (0 <= u < numSrc, not checked).
  int64_t outDegree(int64_t u) const { return OutPtr[u + 1] - OutPtr[u]; }

  /// In-degree of every destination (numDst entries), as float.
  std::vector<float> inDegrees() const;
  /// Out-degree of every source (numSrc entries), as float.
  std::vector<float> outDegrees() const;

private:
  int64_t NumSrc = 0;
  int64_t NumDst = 0;
  std::vector<int64_t> EdgeSrc, EdgeDst;
  std::vector<int64_t> InPtr, InSrc, InEdge;
  std::vector<int64_t> OutPtr, OutDst, OutEdge;
};

/// Loads dir/edge_index.npy (int64 [2, E]: row 0 source, row 1 destination,
/// the layout of the datasets in shared/datasets) as a homogeneous graph on
/// N vertices. N is `numNodes` when it is not -1, else the first dimension
/// of dir/x.npy (only its header is read; an x.npy without elements cannot
/// give it, as nothing in the file backs its row count); without either it
/// is an error. N may be at most kMaxVertices.
Status loadGraphDir(const std::string &dir, Graph &out, int64_t numNodes = -1);

/// Returns in `out` the homogeneous graph `in` with one self-loop (v, v) per
/// vertex appended after the existing edges (edge ids numEdges + v), as
/// GCN / GAT preprocessing wants. Existing self-loops are kept. `in` and
/// `out` may be the same object.
Status addSelfLoops(const Graph &in, Graph &out);

//===----------------------------------------------------------------------===//
// Graph arguments of generated code
//===----------------------------------------------------------------------===//

/// A batch of disjoint graphs (`Graph` arguments of kind `batched`): the
/// union `graph`, and for each of its vertices the member graph it belongs
/// to (`graphOf[v]` in [0, numGraphs)).
struct BatchedGraph {
  const Graph *graph = nullptr;
  const int64_t *graphOf = nullptr;
  int64_t numGraphs = 0;
};

/// Checks a batched graph argument: graphOf set for every vertex and in
/// [0, numGraphs).
Status checkBatch(const BatchedGraph &g);

/// One named edge set of a heterogeneous graph.
struct Relation {
  const char *name = nullptr;
  const Graph *graph = nullptr;
};

/// A heterogeneous graph (`HeteroGraph` arguments): `numVertices` vertices
/// and one homogeneous graph over them per relation.
struct HeteroGraph {
  int64_t numVertices = 0;
  const Relation *relations = nullptr;
  int64_t numRelations = 0;
};

/// The relation called `name`, or null when `g` has none or it is not a
/// graph on g.numVertices vertices.
const Graph *findRelation(const HeteroGraph &g, const char *name);
/// The relation called `name`, or an empty graph (for workspace sizing).
const Graph &relationOrEmpty(const HeteroGraph &g, const char *name);

} // namespace gnnc::rt

#endif // GNNC_RUNTIME_GRAPH_H
