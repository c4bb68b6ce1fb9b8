//===- LoadersOgb.cpp - OGB node property prediction datasets -------------===//
//
// Part of gnnc. Reads the CSV files of an OGB dataset folder in the order
// num-node-list, num-edge-list, edge, node-label, node-feat, then the split,
// so that every later file is checked against the counts before it. The
// cache payload of a dataset:
//
//   int64 N, F, C, E; uint32 flags (0), uint32 0; uint32 src[E];
//   uint32 dst[E]; float X[N * F]; int64 Y[N]; uint8 train[N], val[N],
//   test[N].
//
//===----------------------------------------------------------------------===//

#include "gnnc/runtime/Loaders.h"

#include "FileUtil.h"
#include "LoadersIO.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <new>

#include <dirent.h>
#include <sys/stat.h>

using namespace gnnc::rt;
using namespace gnnc::rt::detail;

namespace {

constexpr const char *kSplitFiles[3] = {"train", "valid", "test"};
/// The most floats reserved up front for the features.
constexpr uint64_t kMaxFeatureReserve = uint64_t{1} << 26;

std::string joinPath(const std::string &dir, const std::string &name) {
  if (dir.empty())
    return name;
  if (dir.back() == '/')
    return dir + name;
  return dir + "/" + name;
}

bool isBlankLine(std::string_view line) { return trim(line).empty(); }

/// Whether `text` is "nan" in any case.
bool isNan(std::string_view text) {
  return text.size() == 3 && (text[0] | 0x20) == 'n' &&
         (text[1] | 0x20) == 'a' && (text[2] | 0x20) == 'n';
}

/// One CSV file of the dataset: where it is and how messages name it.
struct OgbFile {
  std::string Path;
  /// Relative to the dataset folder, e.g. raw/edge.csv.gz.
  std::string Name;
};

/// Finds `<root>/<stem>.csv.gz`, else `<root>/<stem>.csv`. `found` is false
/// when neither exists (an error when `required`).
Status findCsv(const std::string &root, const std::string &stem, bool required,
               OgbFile &out, bool &found) {
  found = false;
  for (const char *suffix : {".csv.gz", ".csv"}) {
    std::string name = stem + suffix;
    std::string path = joinPath(root, name);
    struct stat st;
    if (::stat(path.c_str(), &st) != 0)
      continue;
    if (!S_ISREG(st.st_mode))
      return fileError(path, "not a regular file");
    out.Path = path;
    out.Name = name;
    found = true;
    return Status::success();
  }
  if (!required)
    return Status::success();
  size_t slash = stem.find_last_of('/');
  std::string dir = joinPath(root, stem.substr(0, slash));
  std::string base = stem.substr(slash + 1);
  return fileError(
      dir, fmt::format("neither {}.csv.gz nor {}.csv exists", base, base));
}

/// The split folder to read: `wanted`, or the only one under
/// `<root>/split`.
Status findSplit(const std::string &root, const std::string &wanted,
                 std::string &out) {
  std::string dir = joinPath(root, "split");
  DIR *d = ::opendir(dir.c_str());
  if (!d)
    return fileError(
        dir, fmt::format("cannot open the split folder: {}", errnoText(errno)));
  std::vector<std::string> names;
  while (struct dirent *entry = ::readdir(d)) {
    std::string name = entry->d_name;
    if (name == "." || name == "..")
      continue;
    struct stat st;
    if (::stat(joinPath(dir, name).c_str(), &st) == 0 && S_ISDIR(st.st_mode))
      names.push_back(name);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  std::string list;
  for (const std::string &name : names)
    list += (list.empty() ? "" : ", ") + name;
  if (!wanted.empty()) {
    if (std::find(names.begin(), names.end(), wanted) == names.end())
      return fileError(dir, fmt::format("no split '{}' (the splits here: {})",
                                        wanted, list.empty() ? "none" : list));
    out = wanted;
    return Status::success();
  }
  if (names.empty())
    return fileError(dir, "no split folder in it");
  if (names.size() > 1)
    return fileError(dir, fmt::format("several splits ({}): choose one with "
                                      "OgbOptions::Split",
                                      list));
  out = names.front();
  return Status::success();
}

/// The error for a node id field that is not a valid id below `n`.
Status checkNodeId(const LineReader &r, std::string_view field, int64_t n,
                   const std::string &countFile, int64_t &id) {
  switch (parseInt64(field, id)) {
  case NumberError::None:
    if (id >= n)
      return r.lineError(fmt::format("node {} is outside [0, {}) ({} says "
                                     "{} nodes)",
                                     id, n, countFile, n));
    return Status::success();
  case NumberError::Negative:
    return r.lineError(fmt::format("negative node id {}", id));
  case NumberError::Overflow:
    return r.lineError(
        fmt::format("node id {} overflows int64", quoted(field)));
  case NumberError::Invalid:
    break;
  }
  return r.lineError(fmt::format(
      "{} is not a node id (expected a non-negative integer)", quoted(field)));
}

/// Reads a file of one count (num-node-list, num-edge-list).
Status readCount(const OgbFile &file, const char *what, int64_t &value) {
  LineReader r;
  GNNC_TRY(r.open(file.Path));
  bool have = false;
  std::string_view line;
  while (r.next(line)) {
    if (isBlankLine(line))
      continue;
    if (have)
      return r.lineError(fmt::format("a second {} count: only datasets of "
                                     "a single graph are read",
                                     what));
    std::string_view field = trim(line);
    switch (parseInt64(field, value)) {
    case NumberError::None:
      break;
    case NumberError::Negative:
      return r.lineError(fmt::format("negative {} count {}", what, value));
    case NumberError::Overflow:
      return r.lineError(
          fmt::format("{} count {} overflows int64", what, quoted(field)));
    case NumberError::Invalid:
      return r.lineError(
          fmt::format("{} is not a {} count", quoted(field), what));
    }
    have = true;
  }
  GNNC_TRY(r.status());
  if (r.empty())
    return fileError(file.Path, "empty file");
  if (!have)
    return fileError(file.Path, fmt::format("no {} count in it", what));
  return Status::success();
}

/// The error when `file` ends after `rows` of the `want` rows that
/// `countFile` announces.
Status tooFewRows(const LineReader &r, int64_t rows, int64_t want,
                  const char *what, const std::string &countFile) {
  if (r.empty())
    return fileError(r.path(), fmt::format("empty file, but {} says {} {}",
                                           countFile, want, what));
  return r.lineError(fmt::format("the file ends after {} {}, but {} says {}",
                                 rows, what, countFile, want));
}

class OgbReader {
public:
  OgbReader(const std::string &root, const OgbOptions &options)
      : Root(root), O(options) {}

  /// Finds the files and stamps them into `key`.
  Status locate(CacheKey &key) {
    struct stat st;
    if (::stat(Root.c_str(), &st) != 0)
      return fileError(Root, "cannot open: " + errnoText(errno));
    if (!S_ISDIR(st.st_mode))
      return fileError(Root, "not a directory (expected an OGB dataset "
                             "folder with raw/ and split/)");
    bool found;
    GNNC_TRY(findCsv(Root, "raw/num-node-list", true, NumNodesFile, found));
    GNNC_TRY(findCsv(Root, "raw/num-edge-list", true, NumEdgesFile, found));
    GNNC_TRY(findCsv(Root, "raw/edge", true, EdgeFile, found));
    GNNC_TRY(findCsv(Root, "raw/node-label", true, LabelFile, found));
    GNNC_TRY(findCsv(Root, "raw/node-feat", false, FeatFile, HasFeatures));
    GNNC_TRY(findSplit(Root, O.Split, SplitName));
    for (int m = 0; m < 3; ++m)
      GNNC_TRY(findCsv(Root, "split/" + SplitName + "/" + kSplitFiles[m], true,
                       SplitFile[m], found));
    std::vector<const OgbFile *> files = {&NumNodesFile, &NumEdgesFile,
                                          &EdgeFile, &LabelFile};
    if (HasFeatures)
      files.push_back(&FeatFile);
    for (const OgbFile &f : SplitFile)
      files.push_back(&f);
    for (const OgbFile *f : files) {
      key.Sources.emplace_back();
      GNNC_TRY(stampSource(f->Path, f->Name, key.Sources.back()));
    }
    key.Kind = kCacheOgbNode;
    key.Options = fmt::format("ogb split={} inverse={} nonfinite={} "
                              "unlabeled={}",
                              SplitName, O.AddInverseEdges, O.AllowNonFinite,
                              O.AllowUnlabeled);
    return Status::success();
  }

  Status parse(Dataset &out) {
    Dataset ds;
    GNNC_TRY(readCount(NumNodesFile, "node", N));
    GNNC_TRY(readCount(NumEdgesFile, "edge", E));
    if (N > kMaxVertices)
      return fileError(
          NumNodesFile.Path,
          fmt::format("{} nodes: a graph has at most {}", N, kMaxVertices));
    GNNC_TRY(readEdges(ds));
    GNNC_TRY(readLabels(ds));
    GNNC_TRY(readFeatures(ds));
    for (int m = 0; m < 3; ++m)
      GNNC_TRY(readSplit(m, ds));
    ds.NumNodes = N;
    int64_t maxLabel = -1;
    for (int64_t y : ds.Y)
      maxLabel = std::max(maxLabel, y);
    ds.NumClasses = maxLabel + 1;
    out = std::move(ds);
    return Status::success();
  }

private:
  Status readEdges(Dataset &ds) {
    LineReader r;
    GNNC_TRY(r.open(EdgeFile.Path));
    // An edge line takes 4 bytes or more; compressed, the file size bounds
    // the guess.
    uint64_t bound =
        r.compressed() ? r.fileSize() * 2 + 4096 : r.fileSize() / 4;
    size_t reserve = static_cast<size_t>(
        std::min<uint64_t>(static_cast<uint64_t>(E), bound) *
        (O.AddInverseEdges ? 2 : 1));
    ds.EdgeSrc.reserve(reserve);
    ds.EdgeDst.reserve(reserve);
    int64_t rows = 0;
    std::string_view line;
    while (r.next(line)) {
      if (isBlankLine(line))
        continue;
      if (rows == E)
        return r.lineError(fmt::format("more edges than the {} that {} "
                                       "announces",
                                       E, NumEdgesFile.Name));
      bool more;
      std::string_view rest = line;
      std::string_view a = nextCsvField(rest, more);
      if (!more)
        return r.lineError("expected 'source,destination', found one field");
      std::string_view b = nextCsvField(rest, more);
      if (more)
        return r.lineError("expected 'source,destination', found more than "
                           "two fields");
      int64_t u, v;
      GNNC_TRY(checkNodeId(r, a, N, NumNodesFile.Name, u));
      GNNC_TRY(checkNodeId(r, b, N, NumNodesFile.Name, v));
      ds.EdgeSrc.push_back(u);
      ds.EdgeDst.push_back(v);
      if (O.AddInverseEdges) {
        ds.EdgeSrc.push_back(v);
        ds.EdgeDst.push_back(u);
      }
      ++rows;
    }
    GNNC_TRY(r.status());
    if (rows < E)
      return tooFewRows(r, rows, E, "edges", NumEdgesFile.Name);
    return Status::success();
  }

  Status readLabels(Dataset &ds) {
    LineReader r;
    GNNC_TRY(r.open(LabelFile.Path));
    ds.Y.reserve(static_cast<size_t>(std::min<int64_t>(N, int64_t{1} << 20)));
    std::string_view line;
    while (r.next(line)) {
      int64_t v = static_cast<int64_t>(ds.Y.size());
      if (v == N)
        return r.lineError(fmt::format("more labels than the {} nodes that "
                                       "{} announces",
                                       N, NumNodesFile.Name));
      std::string_view field = trim(line);
      if (field.empty() || isNan(field)) {
        if (!O.AllowUnlabeled)
          return r.lineError(fmt::format(
              "node {} has no label (an empty or NaN line; set "
              "OgbOptions::AllowUnlabeled to accept unlabeled nodes)",
              v));
        ds.Y.push_back(-1);
        continue;
      }
      if (field.find(',') != std::string_view::npos)
        return r.lineError(fmt::format(
            "expected one label, found {} values (multi-label datasets are "
            "not read)",
            std::count(field.begin(), field.end(), ',') + 1));
      int64_t label;
      switch (parseInt64(field, label)) {
      case NumberError::None:
        break;
      case NumberError::Negative:
        return r.lineError(fmt::format("negative label {}", label));
      case NumberError::Overflow:
        return r.lineError(
            fmt::format("label {} overflows int64", quoted(field)));
      case NumberError::Invalid: {
        // pandas writes the labels of a column with NaN as floats: "4.0".
        float value;
        if (parseFloat(field, value) != NumberError::None ||
            !std::isfinite(value) || value != std::floor(value) ||
            value >= 0x1p24f)
          return r.lineError(
              fmt::format("label {} is not an integer", quoted(field)));
        if (value < 0)
          return r.lineError(fmt::format("negative label {}", quoted(field)));
        label = static_cast<int64_t>(value);
        break;
      }
      }
      ds.Y.push_back(label);
    }
    GNNC_TRY(r.status());
    int64_t rows = static_cast<int64_t>(ds.Y.size());
    if (rows < N)
      return tooFewRows(r, rows, N, "labels", NumNodesFile.Name);
    return Status::success();
  }

  Status readFeatures(Dataset &ds) {
    if (!HasFeatures) {
      ds.NumFeatures = 0;
      return Status::success();
    }
    LineReader r;
    GNNC_TRY(r.open(FeatFile.Path));
    int64_t f = -1, firstLine = 0, rows = 0;
    std::string_view line;
    while (r.next(line)) {
      if (rows == N)
        return r.lineError(fmt::format("more feature rows than the {} nodes "
                                       "that {} announces",
                                       N, NumNodesFile.Name));
      if (isBlankLine(line))
        return r.lineError(
            f < 0 ? std::string("empty line (expected comma-separated "
                                "feature values)")
                  : fmt::format("empty line (expected {} comma-separated "
                                "feature values)",
                                f));
      std::string_view rest = line;
      int64_t column = 0;
      bool more = true;
      while (more) {
        std::string_view field = nextCsvField(rest, more);
        ++column;
        if (f >= 0 && column > f)
          return r.lineError(fmt::format("expected {} values (as on line "
                                         "{}), found more",
                                         f, firstLine));
        float value;
        NumberError e = parseFloat(field, value);
        if (e == NumberError::Invalid)
          return r.lineError(fmt::format("column {}: {} is not a number",
                                         column, quoted(field)));
        if (e == NumberError::Overflow)
          return r.lineError(fmt::format("column {}: {} is too large for "
                                         "float32",
                                         column, quoted(field)));
        if (!std::isfinite(value) && !O.AllowNonFinite)
          return r.lineError(fmt::format(
              "column {} is {} (non-finite values are rejected)", column,
              std::isnan(value) ? "nan"
              : value > 0       ? "inf"
                                : "-inf"));
        ds.X.push_back(value);
      }
      if (f < 0) {
        f = column;
        firstLine = r.line();
        // A value takes 2 bytes or more; compressed, the file size bounds
        // the guess.
        uint64_t bound = std::min(kMaxFeatureReserve,
                                  r.compressed() ? r.fileSize() * 4 + 4096
                                                 : r.fileSize() / 2 + 1);
        ds.X.reserve(static_cast<size_t>(std::min<uint64_t>(
            static_cast<uint64_t>(N) * static_cast<uint64_t>(f), bound)));
      } else if (column != f) {
        return r.lineError(fmt::format("expected {} values (as on line {}), "
                                       "found {}",
                                       f, firstLine, column));
      }
      ++rows;
    }
    GNNC_TRY(r.status());
    if (rows < N)
      return tooFewRows(r, rows, N, "feature rows", NumNodesFile.Name);
    ds.NumFeatures = std::max<int64_t>(f, 0);
    return Status::success();
  }

  Status readSplit(int m, Dataset &ds) {
    std::vector<uint8_t> &mask = m == 0   ? ds.TrainMask
                                 : m == 1 ? ds.ValMask
                                          : ds.TestMask;
    mask.assign(static_cast<size_t>(N), 0);
    LineReader r;
    GNNC_TRY(r.open(SplitFile[m].Path));
    std::string_view line;
    while (r.next(line)) {
      if (isBlankLine(line))
        continue;
      int64_t v;
      GNNC_TRY(checkNodeId(r, trim(line), N, NumNodesFile.Name, v));
      if (ds.Y[static_cast<size_t>(v)] < 0)
        return r.lineError(fmt::format("node {} is unlabeled ({} line {})", v,
                                       LabelFile.Name, v + 1));
      mask[static_cast<size_t>(v)] = 1;
    }
    return r.status();
  }

  std::string Root;
  const OgbOptions &O;
  OgbFile NumNodesFile, NumEdgesFile, EdgeFile, LabelFile, FeatFile;
  OgbFile SplitFile[3];
  bool HasFeatures = false;
  std::string SplitName;
  int64_t N = 0, E = 0;
};

//===----------------------------------------------------------------------===//
// The cache payload of a dataset
//===----------------------------------------------------------------------===//

void encodeDataset(const Dataset &ds, ByteWriter &w) {
  size_t n = static_cast<size_t>(ds.NumNodes);
  size_t e = static_cast<size_t>(ds.numEdges());
  w.reserve(48 + 8 * e + 4 * ds.X.size() + 11 * n);
  w.put<int64_t>(ds.NumNodes);
  w.put<int64_t>(ds.NumFeatures);
  w.put<int64_t>(ds.NumClasses);
  w.put<int64_t>(ds.numEdges());
  w.put<uint32_t>(0);
  w.put<uint32_t>(0);
  putIds32(w, ds.EdgeSrc.data(), e);
  putIds32(w, ds.EdgeDst.data(), e);
  w.putArray(ds.X.data(), ds.X.size());
  w.putArray(ds.Y.data(), ds.Y.size());
  w.putArray(ds.TrainMask.data(), n);
  w.putArray(ds.ValMask.data(), n);
  w.putArray(ds.TestMask.data(), n);
}

bool decodeDataset(ByteReader &r, Dataset &out) {
  int64_t n, f, c, e;
  uint32_t flags, zero;
  if (!r.get(n) || !r.get(f) || !r.get(c) || !r.get(e) || !r.get(flags) ||
      !r.get(zero) || flags != 0 || zero != 0)
    return false;
  uint64_t left = r.remaining();
  if (n < 0 || n > kMaxVertices || f < 0 || c < 0 || e < 0 ||
      static_cast<uint64_t>(e) > left / 8 ||
      static_cast<uint64_t>(n) > left / 11 ||
      (n > 0 && static_cast<uint64_t>(f) > left / 4 / static_cast<uint64_t>(n)))
    return false;
  size_t numNodes = static_cast<size_t>(n), edges = static_cast<size_t>(e);
  size_t features = numNodes * static_cast<size_t>(f);
  Dataset ds;
  ds.NumNodes = n;
  ds.NumFeatures = f;
  ds.NumClasses = c;
  if (!getIds32(r, edges, ds.EdgeSrc) || !getIds32(r, edges, ds.EdgeDst))
    return false;
  for (size_t i = 0; i < edges; ++i)
    if (ds.EdgeSrc[i] >= n || ds.EdgeDst[i] >= n)
      return false;
  ds.X.resize(features);
  ds.Y.resize(numNodes);
  ds.TrainMask.resize(numNodes);
  ds.ValMask.resize(numNodes);
  ds.TestMask.resize(numNodes);
  if (!r.getArray(ds.X.data(), features) ||
      !r.getArray(ds.Y.data(), numNodes) ||
      !r.getArray(ds.TrainMask.data(), numNodes) ||
      !r.getArray(ds.ValMask.data(), numNodes) ||
      !r.getArray(ds.TestMask.data(), numNodes) || r.remaining() != 0)
    return false;
  for (int64_t y : ds.Y)
    if (y < -1 || y >= c)
      return false;
  for (const std::vector<uint8_t> *mask :
       {&ds.TrainMask, &ds.ValMask, &ds.TestMask})
    for (size_t v = 0; v < numNodes; ++v)
      if ((*mask)[v] > 1 || ((*mask)[v] && ds.Y[v] < 0))
        return false;
  out = std::move(ds);
  return true;
}

} // namespace

Status gnnc::rt::loadOgbNodeDataset(const std::string &root, Dataset &out,
                                    const OgbOptions &options, LoadInfo *info) {
  if (info)
    *info = LoadInfo();
  OgbReader reader(root, options);
  CacheKey key;
  GNNC_TRY(reader.locate(key));
  Dataset ds;
  try {
    GNNC_TRY(loadThroughCache(
        joinPath(root, "gnnc-cache.bin"), options.Cache, key, info, ds,
        [&](Dataset &d) { return reader.parse(d); }, decodeDataset,
        encodeDataset));
  } catch (const std::bad_alloc &) {
    return fileError(root, "out of memory loading the dataset");
  }
  out = std::move(ds);
  return Status::success();
}
