//===- LoadersFuzzer.cpp - libFuzzer harness for the text loaders ---------===//
//
// Part of gnnc. The input is one flag byte and the text of the files:
//
//   bits 0-1  the format: 0 SNAP edge list, 1 Matrix Market, 2 OGB dataset
//             folder (3 is SNAP too);
//   bit 2     gzip-compress each file in the harness;
//   bit 3     with bit 2, cut a third off each compressed file;
//   bit 4     SnapOptions::Relabel, MatrixMarketOptions::AllowNonFinite,
//             OgbOptions::AddInverseEdges;
//   bit 5     SnapOptions::AddReverseEdges, OgbOptions::AllowUnlabeled and
//             AllowNonFinite;
//   bit 6     damage the cache before the third load (flip one byte).
//
// For OGB the text holds up to eight files separated by kSeparator:
// num-node-list, num-edge-list, edge, node-label, node-feat, and train,
// valid, test of split/s (a file past the last part is absent).
//
// Every load must fail with a message or give a result that satisfies its
// invariants. The files get a new modification time each run, so the first
// load finds the previous run's cache stale and parses; when it wrote a
// cache, a second load must come from it with the same result, and after
// damage to it a third load must parse again, with the same result.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "gnnc/runtime/Loaders.h"

#include <zlib.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>

using namespace gnnc::rt;
using gnnc::rt::fuzz::require;

namespace {

constexpr std::string_view kSeparator = "@@csv@@";
constexpr const char *kOgbFiles[] = {
    "raw/num-node-list", "raw/num-edge-list", "raw/edge",      "raw/node-label",
    "raw/node-feat",     "split/s/train",     "split/s/valid", "split/s/test"};
/// Keeps the graphs (and what they allocate) small.
constexpr int64_t kFuzzMaxVertices = 1 << 16;

/// gzip-compresses `text`.
std::string gzip(std::string_view text) {
  z_stream z{};
  require(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) ==
              Z_OK,
          "deflateInit2");
  std::string out(deflateBound(&z, text.size()) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef *>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  require(deflate(&z, Z_FINISH) == Z_STREAM_END, "deflate");
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

/// Writes one source file with a modification time no other run uses (and
/// old enough for its cache to be written).
void writeSource(const std::string &path, std::string_view text,
                 uint8_t flags) {
  static int64_t run = 0;
  std::string bytes(text);
  if (flags & 4) {
    bytes = gzip(text);
    if (flags & 8)
      bytes.resize(bytes.size() - bytes.size() / 3);
  }
  fuzz::writeBytes(path, reinterpret_cast<const uint8_t *>(bytes.data()),
                   bytes.size());
  struct timespec times[2];
  times[0].tv_sec = 1'000'000'000 + run / 1'000'000'000;
  times[0].tv_nsec = static_cast<long>(run % 1'000'000'000);
  times[1] = times[0];
  ++run;
  require(::utimensat(AT_FDCWD, path.c_str(), times, 0) == 0, "utimensat");
}

bool sameFloats(const std::vector<float> &a, const std::vector<float> &b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * 4) == 0);
}

void checkGraph(const LoadedGraph &g, bool allowNonFinite, bool relabel) {
  const Graph &graph = g.G;
  require(graph.numSrc() >= 0 && graph.numSrc() <= kFuzzMaxVertices &&
              graph.numDst() >= 0 && graph.numDst() <= kFuzzMaxVertices,
          "vertex counts");
  for (int64_t e = 0; e < graph.numEdges(); ++e)
    require(graph.edgeSrc()[e] >= 0 && graph.edgeSrc()[e] < graph.numSrc() &&
                graph.edgeDst()[e] >= 0 && graph.edgeDst()[e] < graph.numDst(),
            "edge end out of range");
  require(g.Weights.empty() ||
              g.Weights.size() == static_cast<size_t>(graph.numEdges()),
          "weight count");
  if (!allowNonFinite)
    for (float w : g.Weights)
      require(std::isfinite(w), "a non-finite weight was accepted");
  require(relabel ? g.OriginalIds.size() == static_cast<size_t>(graph.numSrc())
                  : g.OriginalIds.empty(),
          "original id count");
}

bool sameGraph(const LoadedGraph &a, const LoadedGraph &b) {
  return a.G.numSrc() == b.G.numSrc() && a.G.numDst() == b.G.numDst() &&
         a.G.edgeSrc() == b.G.edgeSrc() && a.G.edgeDst() == b.G.edgeDst() &&
         a.G.inPtr() == b.G.inPtr() && a.G.outPtr() == b.G.outPtr() &&
         sameFloats(a.Weights, b.Weights) && a.OriginalIds == b.OriginalIds;
}

void checkDataset(const Dataset &ds, const OgbOptions &o) {
  int64_t n = ds.NumNodes, f = ds.NumFeatures;
  require(n >= 0 && f >= 0, "negative sizes");
  require(ds.X.size() == static_cast<size_t>(n * f), "feature count");
  if (!o.AllowNonFinite)
    for (float x : ds.X)
      require(std::isfinite(x), "a non-finite feature was accepted");
  require(ds.EdgeSrc.size() == ds.EdgeDst.size(), "edge arrays differ");
  for (const std::vector<int64_t> *ends : {&ds.EdgeSrc, &ds.EdgeDst})
    for (int64_t v : *ends)
      require(v >= 0 && v < n, "edge end out of range");
  require(ds.Y.size() == static_cast<size_t>(n), "label count");
  int64_t maxLabel = -1;
  for (int64_t y : ds.Y) {
    require(y >= (o.AllowUnlabeled ? -1 : 0), "negative label");
    maxLabel = std::max(maxLabel, y);
  }
  require(ds.NumClasses == maxLabel + 1, "class count");
  for (const std::vector<uint8_t> *mask :
       {&ds.TrainMask, &ds.ValMask, &ds.TestMask}) {
    require(mask->size() == static_cast<size_t>(n), "mask size");
    for (int64_t v = 0; v < n; ++v)
      require((*mask)[v] <= 1 && !((*mask)[v] && ds.Y[v] < 0),
              "bad mask entry");
  }
}

bool sameDataset(const Dataset &a, const Dataset &b) {
  return a.NumNodes == b.NumNodes && a.NumFeatures == b.NumFeatures &&
         a.NumClasses == b.NumClasses && a.EdgeSrc == b.EdgeSrc &&
         a.EdgeDst == b.EdgeDst && sameFloats(a.X, b.X) && a.Y == b.Y &&
         a.TrainMask == b.TrainMask && a.ValMask == b.ValMask &&
         a.TestMask == b.TestMask;
}

/// Flips one byte of the cache file `path`, chosen by `seed`.
void damage(const std::string &path, size_t seed) {
  std::error_code ec;
  uintmax_t size = std::filesystem::file_size(path, ec);
  require(!ec && size > 0, "cache file size");
  std::FILE *file = std::fopen(path.c_str(), "r+b");
  require(file != nullptr, "open cache");
  long at = static_cast<long>(seed % size);
  int c = (std::fseek(file, at, SEEK_SET), std::fgetc(file));
  std::fseek(file, at, SEEK_SET);
  std::fputc(c ^ 0x20, file);
  std::fclose(file);
}

/// Loads three times as the file comment describes; `load(result, info)`
/// loads, `check` checks a result, `same` compares two.
template <class T, class Load, class Check, class Same>
void loadThrice(const std::string &cache, uint8_t flags, size_t seed, Load load,
                Check check, Same same) {
  T first;
  LoadInfo info;
  Status s = load(first, info);
  require(info.Source == LoadSource::Parsed, "the first load used the cache");
  if (!s.ok()) {
    require(!s.message().empty(), "an error without a message");
    return;
  }
  check(first);
  if (!info.CacheWritten)
    return;
  T second;
  s = load(second, info);
  require(s.ok(), "loading from the cache failed: " + s.message());
  require(info.Source == LoadSource::Cache,
          "the cache was not used: " + info.CacheRejected);
  require(same(first, second), "the cache gave another result");
  if (!(flags & 64))
    return;
  damage(cache, seed);
  T third;
  s = load(third, info);
  require(s.ok(), "loading after damage failed: " + s.message());
  require(info.Source == LoadSource::Parsed, "a damaged cache was used");
  require(same(first, third), "parsing again gave another result");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0)
    return 0;
  uint8_t flags = data[0];
  std::string_view text(reinterpret_cast<const char *>(data + 1), size - 1);
  size_t seed = std::hash<std::string_view>()(text);
  int format = flags & 3;

  if (format != 2 && format != 1) {
    std::string path = fuzz::tempPath("g.txt");
    writeSource(path, text, flags);
    SnapOptions o;
    o.Relabel = flags & 16;
    o.AddReverseEdges = flags & 32;
    o.MaxVertices = kFuzzMaxVertices;
    loadThrice<LoadedGraph>(
        path + ".gnnc-cache", flags, seed,
        [&](LoadedGraph &g, LoadInfo &info) {
          return loadSnapEdgeList(path, g, o, &info);
        },
        [&](const LoadedGraph &g) { checkGraph(g, false, o.Relabel); },
        sameGraph);
    return 0;
  }

  if (format == 1) {
    std::string path = fuzz::tempPath("m.mtx");
    writeSource(path, text, flags);
    MatrixMarketOptions o;
    o.AllowNonFinite = flags & 16;
    o.MaxVertices = kFuzzMaxVertices;
    loadThrice<LoadedGraph>(
        path + ".gnnc-cache", flags, seed,
        [&](LoadedGraph &g, LoadInfo &info) {
          return loadMatrixMarket(path, g, o, &info);
        },
        [&](const LoadedGraph &g) { checkGraph(g, o.AllowNonFinite, false); },
        sameGraph);
    return 0;
  }

  const std::string &root = fuzz::tempDir();
  std::filesystem::create_directories(root + "/raw");
  std::filesystem::create_directories(root + "/split/s");
  bool more = true;
  for (const char *stem : kOgbFiles) {
    std::string base = root + "/" + stem;
    std::remove((base + ".csv").c_str());
    std::remove((base + ".csv.gz").c_str());
    if (!more)
      continue;
    size_t end = text.find(kSeparator);
    writeSource(base + ((flags & 4) ? ".csv.gz" : ".csv"), text.substr(0, end),
                flags);
    more = end != std::string_view::npos;
    if (more)
      text.remove_prefix(end + kSeparator.size());
  }
  OgbOptions o;
  o.AddInverseEdges = flags & 16;
  o.AllowUnlabeled = flags & 32;
  o.AllowNonFinite = flags & 32;
  loadThrice<Dataset>(
      root + "/gnnc-cache.bin", flags, seed,
      [&](Dataset &ds, LoadInfo &info) {
        return loadOgbNodeDataset(root, ds, o, &info);
      },
      [&](const Dataset &ds) { checkDataset(ds, o); }, sameDataset);
  return 0;
}
