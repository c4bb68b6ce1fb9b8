//===- DatasetDirFuzzer.cpp - libFuzzer harness for .npy dataset folders --===//
//
// Part of gnnc. The input is one flag byte and up to six files separated by
// the marker kSeparator, written as x.npy, edge_index.npy, y.npy,
// train_mask.npy, val_mask.npy and test_mask.npy of a fresh directory (a
// file past the last part is absent). Flag bit 0 allows NaN and infinite
// features. The harness loads the directory as a dataset (loadDataset) and
// as a graph (loadGraphDir, the node count from x.npy); each must fail with
// a message or give a result that satisfies its invariants, and the two
// must agree on the graph when both succeed.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "gnnc/runtime/Dataset.h"
#include "gnnc/runtime/Graph.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string_view>

using namespace gnnc::rt;
using gnnc::rt::fuzz::require;

namespace {

constexpr std::string_view kSeparator = "@@npy@@";
constexpr const char *kFiles[] = {"x.npy",        "edge_index.npy",
                                  "y.npy",        "train_mask.npy",
                                  "val_mask.npy", "test_mask.npy"};

void checkDataset(const Dataset &ds, bool allowNonFinite) {
  int64_t n = ds.NumNodes, f = ds.NumFeatures;
  require(n >= 0 && f >= 0, "negative sizes");
  require(ds.X.size() == static_cast<size_t>(n * f), "feature count");
  if (!allowNonFinite)
    for (float x : ds.X)
      require(std::isfinite(x), "a non-finite feature was accepted");
  require(ds.EdgeSrc.size() == ds.EdgeDst.size(), "edge arrays differ");
  for (const std::vector<int64_t> *ends : {&ds.EdgeSrc, &ds.EdgeDst})
    for (int64_t v : *ends)
      require(v >= 0 && v < n, "edge end out of range");
  require(ds.Y.size() == static_cast<size_t>(n), "label count");
  int64_t maxLabel = -1;
  for (int64_t y : ds.Y) {
    require(y >= 0, "negative label");
    maxLabel = std::max(maxLabel, y);
  }
  require(ds.NumClasses == maxLabel + 1, "class count");
  for (const std::vector<uint8_t> *mask :
       {&ds.TrainMask, &ds.ValMask, &ds.TestMask}) {
    require(mask->size() == static_cast<size_t>(n), "mask size");
    for (uint8_t m : *mask)
      require(m <= 1, "mask value above 1");
  }
}

void checkGraph(const Graph &g) {
  require(g.numSrc() == g.numDst() && g.numSrc() >= 0, "vertex counts");
  require(g.inPtr().size() == static_cast<size_t>(g.numDst() + 1) &&
              g.outPtr().size() == static_cast<size_t>(g.numSrc() + 1),
          "offset arrays");
  require(g.inPtr().back() == g.numEdges() && g.outPtr().back() == g.numEdges(),
          "offsets do not end at the edge count");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  bool allowNonFinite = data[0] & 1;
  std::string_view rest(reinterpret_cast<const char *>(data + 1), size - 1);
  bool more = true;
  for (const char *name : kFiles) {
    std::string path = fuzz::tempPath(name);
    if (!more) {
      std::remove(path.c_str());
      continue;
    }
    size_t end = rest.find(kSeparator);
    std::string_view part = rest.substr(0, end);
    fuzz::writeBytes(path, reinterpret_cast<const uint8_t *>(part.data()),
                     part.size());
    more = end != std::string_view::npos;
    if (more)
      rest.remove_prefix(end + kSeparator.size());
  }

  const std::string &dir = fuzz::tempDir();
  DatasetOptions options;
  options.AllowNonFinite = allowNonFinite;
  Dataset ds;
  Status s = loadDataset(dir, ds, options);
  if (s.ok())
    checkDataset(ds, allowNonFinite);
  else
    require(!s.message().empty(), "an error without a message");

  Graph g;
  Status sg = loadGraphDir(dir, g);
  if (sg.ok())
    checkGraph(g);
  else
    require(!sg.message().empty(), "an error without a message");

  // A dataset with features fixes the graph: its x.npy gives N.
  if (s.ok() && ds.NumFeatures > 0) {
    require(sg.ok(), "loadGraphDir rejected a valid dataset: " + sg.message());
    require(g.numDst() == ds.NumNodes && g.edgeSrc() == ds.EdgeSrc &&
                g.edgeDst() == ds.EdgeDst,
            "loadGraphDir and loadDataset disagree");
  }
  return 0;
}
