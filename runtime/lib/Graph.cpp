//===- Graph.cpp - Compressed graph storage for the runtime ---------------===//
//
// Part of gnnc. Both layouts are built with a stable counting sort: count
// the edges of each row, prefix-sum the counts into offsets, then place the
// edges in their original order.
//
//===----------------------------------------------------------------------===//

#include "gnnc/runtime/Graph.h"

#include "gnnc/runtime/Npy.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>
#include <stdexcept>

#include <sys/stat.h>

using namespace gnnc::rt;

namespace {

/// Builds one compressed layout: rows indexed by `key`, entries holding
/// `other` and the edge id.
void buildCompressed(const int64_t *key, const int64_t *other, int64_t numEdges,
                     int64_t numRows, std::vector<int64_t> &ptr,
                     std::vector<int64_t> &col, std::vector<int64_t> &edge) {
  size_t rows = static_cast<size_t>(numRows);
  size_t edges = static_cast<size_t>(numEdges);
  ptr.assign(rows + 1, 0);
  for (size_t e = 0; e < edges; ++e)
    ++ptr[static_cast<size_t>(key[e]) + 1];
  for (size_t r = 0; r < rows; ++r)
    ptr[r + 1] += ptr[r];
  std::vector<int64_t> cursor(ptr.begin(), ptr.end() - 1);
  col.resize(edges);
  edge.resize(edges);
  for (size_t e = 0; e < edges; ++e) {
    size_t pos = static_cast<size_t>(cursor[static_cast<size_t>(key[e])]++);
    col[pos] = other[e];
    edge[pos] = static_cast<int64_t>(e);
  }
}

std::vector<float> degreesOf(const std::vector<int64_t> &ptr) {
  std::vector<float> out(ptr.size() - 1);
  for (size_t i = 0; i + 1 < ptr.size(); ++i)
    out[i] = static_cast<float>(ptr[i + 1] - ptr[i]);
  return out;
}

std::string joinPath(const std::string &dir, const char *name) {
  if (dir.empty())
    return name;
  if (dir.back() == '/')
    return dir + name;
  return dir + "/" + name;
}

} // namespace

Graph::Graph() : InPtr(1, 0), OutPtr(1, 0) {}

Status Graph::fromEdgeIndex(const int64_t *src, const int64_t *dst,
                            int64_t numEdges, int64_t numSrc, int64_t numDst,
                            Graph &out) {
  if (numSrc < 0 || numDst < 0)
    return Status::error(
        fmt::format("graph: negative vertex count ({} sources, {} "
                    "destinations)",
                    numSrc, numDst));
  if (numEdges < 0)
    return Status::error(
        fmt::format("graph: negative edge count {}", numEdges));
  if (numEdges > 0 && (!src || !dst))
    return Status::error(
        fmt::format("graph: null edge array for {} edges", numEdges));
  for (int64_t e = 0; e < numEdges; ++e) {
    if (src[e] < 0 || src[e] >= numSrc)
      return Status::error(fmt::format("edge {}: source {} is outside [0, {})",
                                       e, src[e], numSrc));
    if (dst[e] < 0 || dst[e] >= numDst)
      return Status::error(fmt::format(
          "edge {}: destination {} is outside [0, {})", e, dst[e], numDst));
  }

  // Vertex counts are caller-controlled (e.g. from a command line), so the
  // offset arrays may be absurdly large: report that instead of allocating.
  if (numSrc > kMaxVertices || numDst > kMaxVertices)
    return Status::error(
        fmt::format("graph: {} vertices are more than the limit of {}",
                    std::max(numSrc, numDst), kMaxVertices));
  Graph g;
  try {
    g.NumSrc = numSrc;
    g.NumDst = numDst;
    g.EdgeSrc.assign(src, src + numEdges);
    g.EdgeDst.assign(dst, dst + numEdges);
    buildCompressed(dst, src, numEdges, numDst, g.InPtr, g.InSrc, g.InEdge);
    buildCompressed(src, dst, numEdges, numSrc, g.OutPtr, g.OutDst, g.OutEdge);
  } catch (const std::bad_alloc &) {
    return Status::error(
        fmt::format("graph: out of memory building a graph with {} sources, "
                    "{} destinations and {} edges",
                    numSrc, numDst, numEdges));
  }
  out = std::move(g);
  return Status::success();
}

std::vector<float> Graph::inDegrees() const { return degreesOf(InPtr); }
std::vector<float> Graph::outDegrees() const { return degreesOf(OutPtr); }

Status gnnc::rt::loadGraphDir(const std::string &dir, Graph &out,
                              int64_t numNodes) {
  if (numNodes < -1)
    return Status::error(
        fmt::format("{}: invalid node count {} (pass -1 to take it from x.npy)",
                    dir, numNodes));
  std::string edgePath = joinPath(dir, "edge_index.npy");
  std::string featPath = joinPath(dir, "x.npy");

  if (numNodes == -1) {
    struct stat st;
    if (::stat(featPath.c_str(), &st) != 0 && errno == ENOENT)
      return Status::error(dir + ": number of nodes unknown: no x.npy to take "
                                 "it from and no node count given");
    DType dtype;
    std::vector<int64_t> shape;
    if (Status s = readNpyHeader(featPath, dtype, shape); !s.ok())
      return s;
    if (shape.empty())
      return Status::error(featPath + ": expected at least 1 dimension (one "
                                      "row per node), got a scalar");
    bool holdsData = std::find(shape.begin(), shape.end(), 0) == shape.end();
    if (shape[0] > 0 && !holdsData)
      return Status::error(
          fmt::format("{}: a {} array holds no data, so its {} rows cannot "
                      "give the number of nodes",
                      featPath, formatShape(shape), shape[0]));
    numNodes = shape[0];
  }
  if (numNodes > kMaxVertices)
    return Status::error(
        fmt::format("{}: {} nodes are more than the limit of {}", dir, numNodes,
                    kMaxVertices));

  NpyArray edges;
  if (Status s = readNpyExpect(edgePath, DType::Int64, {2, -1}, edges); !s.ok())
    return s;
  int64_t numEdges = edges.shape[1];
  const int64_t *data = edges.data<int64_t>();
  const int64_t *src = data;
  const int64_t *dst = data ? data + numEdges : nullptr;
  Graph g;
  if (Status s =
          Graph::fromEdgeIndex(src, dst, numEdges, numNodes, numNodes, g);
      !s.ok())
    return s.withPrefix(edgePath);
  out = std::move(g);
  return Status::success();
}

Status gnnc::rt::addSelfLoops(const Graph &in, Graph &out) {
  if (!in.isHomogeneous())
    return Status::error(
        fmt::format("addSelfLoops: needs a homogeneous graph, got {} sources "
                    "and {} destinations",
                    in.numSrc(), in.numDst()));
  std::vector<int64_t> src, dst;
  try {
    size_t total = in.edgeSrc().size() + static_cast<size_t>(in.numSrc());
    src.reserve(total);
    dst.reserve(total);
  } catch (const std::bad_alloc &) {
    return Status::error("addSelfLoops: out of memory");
  }
  src.insert(src.end(), in.edgeSrc().begin(), in.edgeSrc().end());
  dst.insert(dst.end(), in.edgeDst().begin(), in.edgeDst().end());
  for (int64_t v = 0; v < in.numSrc(); ++v) {
    src.push_back(v);
    dst.push_back(v);
  }
  return Graph::fromEdgeIndex(src.data(), dst.data(),
                              static_cast<int64_t>(src.size()), in.numSrc(),
                              in.numDst(), out);
}

//===----------------------------------------------------------------------===//
// Graph arguments of generated code
//===----------------------------------------------------------------------===//

Status gnnc::rt::checkBatch(const BatchedGraph &g) {
  if (!g.graph)
    return Status::error("batched graph: no graph");
  if (g.numGraphs < 0)
    return Status::error("batched graph: negative graph count");
  if (g.graph->numDst() > 0 && !g.graphOf)
    return Status::error("batched graph: no graphOf array");
  for (int64_t v = 0; v < g.graph->numDst(); ++v)
    if (g.graphOf[v] < 0 || g.graphOf[v] >= g.numGraphs)
      return Status::error(fmt::format(
          "batched graph: vertex {} is in graph {}, outside [0, {})", v,
          g.graphOf[v], g.numGraphs));
  return Status::success();
}

const Graph *gnnc::rt::findRelation(const HeteroGraph &g, const char *name) {
  for (int64_t i = 0; i < g.numRelations; ++i) {
    const Relation &r = g.relations[i];
    if (r.name && r.graph && std::strcmp(r.name, name) == 0)
      return r.graph->numSrc() == g.numVertices &&
                     r.graph->numDst() == g.numVertices
                 ? r.graph
                 : nullptr;
  }
  return nullptr;
}

const Graph &gnnc::rt::relationOrEmpty(const HeteroGraph &g, const char *name) {
  static const Graph empty;
  const Graph *r = findRelation(g, name);
  return r ? *r : empty;
}
