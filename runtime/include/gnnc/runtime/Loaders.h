//===- Loaders.h - Graphs and datasets from common file formats -*- C++ -*-===//
//
// Part of gnnc (library gnnc_loaders). Reads graphs and datasets in the
// formats they are published in:
//
//   * SNAP edge lists (loadSnapEdgeList): one edge `src dst` per line,
//     '#' (or '%') comment lines;
//   * Matrix Market coordinate files (loadMatrixMarket): pattern, real and
//     integer entries, general and symmetric matrices;
//   * the raw layout of an OGB node property prediction dataset as the ogb
//     package downloads it (loadOgbNodeDataset): raw/edge.csv,
//     raw/node-feat.csv, raw/node-label.csv, raw/num-node-list.csv,
//     raw/num-edge-list.csv and split/<name>/{train,valid,test}.csv.
//
// Any file may be gzip-compressed: a file that starts with the gzip magic
// bytes is decompressed while it is read, whatever its name.
//
// After a successful parse the result is written, converted, to a binary
// cache beside the source (`<file>.gnnc-cache`, or `<root>/gnnc-cache.bin`
// for an OGB dataset), atomically (a temporary file renamed over it). The
// next load uses the cache instead of parsing when it is up to date: it
// records the format version, the loader's options and each source file's
// size, modification time (nanoseconds) and inode, and a checksum of its own
// content. Anything else (a source edited or touched, other options, a
// truncated or corrupt cache, another version) makes the load parse the
// sources again and rewrite the cache; a bad cache is never an error. A
// folder that cannot be written only means no cache (LoadInfo says why).
//
// Every function returns a Status and writes `out` only on success. A
// malformed file gives an error naming the file, the 1-based line and the
// problem, e.g. `graph.mtx:7: row index 9 is outside [1, 5]`.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_RUNTIME_LOADERS_H
#define GNNC_RUNTIME_LOADERS_H

#include "gnnc/runtime/Dataset.h"
#include "gnnc/runtime/Graph.h"
#include "gnnc/runtime/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace gnnc::rt {

/// Whether a load may read and may write the converted binary cache.
struct CacheOptions {
  bool Read = true;
  bool Write = true;
};

/// Where a load's result came from.
enum class LoadSource {
  /// The source files were parsed.
  Parsed,
  /// The converted binary cache was read.
  Cache,
};

/// What a load did with the cache. Filled in by every load that is given
/// one, on success and on failure.
struct LoadInfo {
  LoadSource Source = LoadSource::Parsed;
  /// The cache file consulted or written; empty when the cache is off both
  /// ways.
  std::string CachePath;
  /// Why a cache file that exists was not used (e.g. `stale: edge.csv.gz
  /// has changed`, `corrupt: checksum mismatch`); empty when it was used or
  /// there was none.
  std::string CacheRejected;
  /// Whether this load wrote the cache file.
  bool CacheWritten = false;
  /// Why the cache was not written although CacheOptions::Write was set
  /// (e.g. the folder is not writable); empty otherwise.
  std::string CacheNotWritten;
};

/// A graph read from an edge list or a sparse matrix.
struct LoadedGraph {
  /// The graph; edge ids follow the order of the file.
  Graph G;
  /// The weight of each edge id (Matrix Market real and integer matrices);
  /// empty for unweighted graphs.
  std::vector<float> Weights;
  /// With SnapOptions::Relabel: the id in the file of each vertex (-1 for
  /// the isolated vertices a larger SnapOptions::NumVertices adds); else
  /// empty.
  std::vector<int64_t> OriginalIds;
};

//===----------------------------------------------------------------------===//
// SNAP edge lists
//===----------------------------------------------------------------------===//

struct SnapOptions {
  /// The number of vertices; every id must be below it. -1: 1 + the largest
  /// id (with Relabel: the number of distinct ids).
  int64_t NumVertices = -1;
  /// Number the vertices 0 .. n-1 in the order their ids first appear
  /// (source before destination on each line), for files with sparse ids;
  /// the file's ids are returned in LoadedGraph::OriginalIds. With
  /// NumVertices, there may be at most that many distinct ids; the vertices
  /// after them are isolated.
  bool Relabel = false;
  /// Also add the reverse of every edge, right after it (a self-loop once),
  /// for files that list each undirected edge once.
  bool AddReverseEdges = false;
  /// The most vertices the graph may have (at most kMaxVertices); more is an
  /// error before anything that size is allocated.
  int64_t MaxVertices = kMaxVertices;
  CacheOptions Cache;
};

/// Loads a SNAP edge list: one edge per line, two non-negative integer ids
/// separated by spaces or tabs; blank lines and lines starting with '#' or
/// '%' are skipped. Edge e of the graph is the e-th edge line. An empty
/// file is an error; a file of comments only is a graph without edges.
Status loadSnapEdgeList(const std::string &path, LoadedGraph &out,
                        const SnapOptions &options = {},
                        LoadInfo *info = nullptr);

//===----------------------------------------------------------------------===//
// Matrix Market
//===----------------------------------------------------------------------===//

struct MatrixMarketOptions {
  /// Accept NaN and infinite values (real matrices).
  bool AllowNonFinite = false;
  /// The most rows (sources) or columns (destinations) the matrix may have
  /// (at most kMaxVertices).
  int64_t MaxVertices = kMaxVertices;
  CacheOptions Cache;
};

/// Loads a Matrix Market file `%%MatrixMarket matrix coordinate
/// {pattern|real|integer} {general|symmetric}`: entry (i, j) is the edge
/// i-1 -> j-1 from rows (sources) to columns (destinations), a bipartite
/// graph when the matrix is not square. In a symmetric matrix every
/// off-diagonal entry also stands for (j, i), the edge right after it; a
/// diagonal entry is one edge. Real and integer values become the weights
/// (rounded to float32). The number of entry lines must equal the size
/// line's count.
Status loadMatrixMarket(const std::string &path, LoadedGraph &out,
                        const MatrixMarketOptions &options = {},
                        LoadInfo *info = nullptr);

//===----------------------------------------------------------------------===//
// OGB node property prediction datasets
//===----------------------------------------------------------------------===//

struct OgbOptions {
  /// The folder under `<root>/split/` to take the masks from (e.g. "time"
  /// for ogbn-arxiv, "sales_history" for ogbn-products); empty: the only
  /// folder there (an error when there are several).
  std::string Split;
  /// Add the reverse of every edge right after it, as the ogb package does
  /// for datasets whose add_inverse_edge is True (ogbn-products,
  /// ogbn-proteins).
  bool AddInverseEdges = false;
  /// Accept NaN and infinite features.
  bool AllowNonFinite = false;
  /// Accept unlabeled nodes (an empty or NaN label line): their label is
  /// -1, and they may be in no split. By default the first one is an error.
  bool AllowUnlabeled = false;
  CacheOptions Cache;
};

/// Loads the OGB dataset folder `root` (e.g. `dataset/ogbn_arxiv`). Each
/// file is read as `<name>.csv.gz` when that exists, else as `<name>.csv`:
///
///   raw/num-node-list.csv  one line: N (a single graph);
///   raw/num-edge-list.csv  one line: E;
///   raw/edge.csv           E lines `src,dst`, ids in [0, N);
///   raw/node-label.csv     N lines, one integer label each (`4` or `4.0`;
///                          see AllowUnlabeled);
///   raw/node-feat.csv      N lines of F comma-separated floats (F is the
///                          length of the first line); optional: without
///                          it the dataset has no features;
///   split/<name>/{train,valid,test}.csv   node ids, one per line.
///
/// The masks hold the split's nodes; NumClasses is 1 + the largest label.
/// Blank lines are skipped except in node-label.csv, where they are
/// unlabeled nodes, and in node-feat.csv, where they are errors.
Status loadOgbNodeDataset(const std::string &root, Dataset &out,
                          const OgbOptions &options = {},
                          LoadInfo *info = nullptr);

} // namespace gnnc::rt

#endif // GNNC_RUNTIME_LOADERS_H
