//===- Loaders.cpp - SNAP edge lists and Matrix Market files --------------===//
//
// Part of gnnc. Both readers stream the file line by line (LoadersIO.h),
// check every field as they go and build the graph once at the end. The
// cache payload of a graph:
//
//   int64 numSrc, numDst, numEdges; uint32 flags (1: weights, 2: original
//   ids), uint32 0; uint32 src[numEdges]; uint32 dst[numEdges]; then
//   float weights[numEdges] and int64 originalIds[numSrc] when flagged.
//
//===----------------------------------------------------------------------===//

#include "gnnc/runtime/Loaders.h"

#include "FileUtil.h"
#include "LoadersIO.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <new>

using namespace gnnc::rt;
using namespace gnnc::rt::detail;

namespace {

constexpr uint32_t kHasWeights = 1;
constexpr uint32_t kHasIds = 2;
/// The most entries reserved up front from a count a header announces.
constexpr int64_t kMaxReserve = int64_t{1} << 22;

/// Whether `line` is blank or a comment starting with one of `marks`.
bool skippable(std::string_view line, const char *marks) {
  for (char c : line) {
    if (isBlank(c))
      continue;
    return std::strchr(marks, c) != nullptr;
  }
  return true;
}

/// Open addressing from the ids of a file to 0 .. n-1 (SnapOptions::Relabel).
class IdMap {
public:
  IdMap() : Slots(1024), Mask(1023) {}

  /// The number of `id`, given `Count` (the next number) when it is new.
  int64_t lookup(int64_t id, bool &inserted) {
    if (static_cast<size_t>(2 * (Count + 1)) > Slots.size())
      grow();
    size_t i = slotOf(id);
    for (;;) {
      Slot &slot = Slots[i];
      if (slot.Id == id) {
        inserted = false;
        return slot.Number;
      }
      if (slot.Id < 0) {
        slot.Id = id;
        slot.Number = Count++;
        inserted = true;
        return slot.Number;
      }
      i = (i + 1) & Mask;
    }
  }
  int64_t size() const { return Count; }

private:
  struct Slot {
    int64_t Id = -1;
    int64_t Number = 0;
  };
  size_t slotOf(int64_t id) const {
    return static_cast<size_t>(
               (static_cast<uint64_t>(id) * 0x9E3779B97F4A7C15ull) >> 32) &
           Mask;
  }
  void grow() {
    std::vector<Slot> old(Slots.size() * 2);
    old.swap(Slots);
    Mask = Slots.size() - 1;
    for (const Slot &slot : old) {
      if (slot.Id < 0)
        continue;
      size_t i = slotOf(slot.Id);
      while (Slots[i].Id >= 0)
        i = (i + 1) & Mask;
      Slots[i] = slot;
    }
  }

  std::vector<Slot> Slots;
  size_t Mask;
  int64_t Count = 0;
};

//===----------------------------------------------------------------------===//
// The cache payload of a graph
//===----------------------------------------------------------------------===//

void encodeGraph(const LoadedGraph &g, ByteWriter &w) {
  const Graph &graph = g.G;
  size_t edges = static_cast<size_t>(graph.numEdges());
  uint32_t flags = (g.Weights.empty() ? 0 : kHasWeights) |
                   (g.OriginalIds.empty() ? 0 : kHasIds);
  w.reserve(40 + edges * 12 + g.OriginalIds.size() * 8);
  w.put<int64_t>(graph.numSrc());
  w.put<int64_t>(graph.numDst());
  w.put<int64_t>(graph.numEdges());
  w.put<uint32_t>(flags);
  w.put<uint32_t>(0);
  putIds32(w, graph.edgeSrc().data(), edges);
  putIds32(w, graph.edgeDst().data(), edges);
  w.putArray(g.Weights.data(), g.Weights.size());
  w.putArray(g.OriginalIds.data(), g.OriginalIds.size());
}

bool decodeGraph(ByteReader &r, LoadedGraph &out) {
  int64_t numSrc, numDst, numEdges;
  uint32_t flags, zero;
  if (!r.get(numSrc) || !r.get(numDst) || !r.get(numEdges) || !r.get(flags) ||
      !r.get(zero) || zero != 0 || (flags & ~(kHasWeights | kHasIds)) != 0)
    return false;
  if (numSrc < 0 || numSrc > kMaxVertices || numDst < 0 ||
      numDst > kMaxVertices || numEdges < 0 ||
      static_cast<uint64_t>(numEdges) > r.remaining() / 8)
    return false;
  size_t edges = static_cast<size_t>(numEdges);
  std::vector<int64_t> src, dst;
  LoadedGraph g;
  if (!getIds32(r, edges, src) || !getIds32(r, edges, dst))
    return false;
  if (flags & kHasWeights) {
    if (edges > r.remaining() / sizeof(float))
      return false;
    g.Weights.resize(edges);
    r.getArray(g.Weights.data(), edges);
  }
  if (flags & kHasIds) {
    size_t n = static_cast<size_t>(numSrc);
    if (n > r.remaining() / sizeof(int64_t))
      return false;
    g.OriginalIds.resize(n);
    r.getArray(g.OriginalIds.data(), n);
  }
  if (r.remaining() != 0)
    return false;
  if (!Graph::fromEdgeIndex(src.data(), dst.data(), numEdges, numSrc, numDst,
                            g.G)
           .ok())
    return false;
  out = std::move(g);
  return true;
}

//===----------------------------------------------------------------------===//
// SNAP
//===----------------------------------------------------------------------===//

/// Parses one vertex id field of a SNAP line.
Status parseVertexId(const LineReader &r, std::string_view field, int64_t &id) {
  switch (parseInt64(field, id)) {
  case NumberError::None:
    return Status::success();
  case NumberError::Negative:
    return r.lineError(fmt::format("negative vertex id {}", id));
  case NumberError::Overflow:
    return r.lineError(
        fmt::format("vertex id {} overflows int64", quoted(field)));
  case NumberError::Invalid:
    break;
  }
  return r.lineError(
      fmt::format("{} is not a vertex id (expected a non-negative integer)",
                  quoted(field)));
}

Status parseSnap(const std::string &path, const SnapOptions &o,
                 LoadedGraph &out) {
  LineReader r;
  GNNC_TRY(r.open(path));
  bool given = o.NumVertices >= 0;
  // Ids (or, with Relabel, distinct ids) must stay below this.
  int64_t limit = given ? o.NumVertices : o.MaxVertices;
  std::string limitText =
      given
          ? "the given vertex count"
          : fmt::format("a graph here has at most {} vertices", o.MaxVertices);
  std::vector<int64_t> src, dst, ids;
  // Lines of a plain file take 8 bytes or more, but for the smallest ids;
  // a smaller guess only costs one reallocation.
  size_t guess = static_cast<size_t>(
      std::min<uint64_t>(r.compressed() ? r.fileSize() / 2 : r.fileSize() / 8,
                         kMaxReserve * 8) *
      (o.AddReverseEdges ? 2 : 1));
  src.reserve(guess);
  dst.reserve(guess);
  IdMap map;
  int64_t maxId = -1;
  std::string_view line;
  while (r.next(line)) {
    if (skippable(line, "#%"))
      continue;
    std::string_view rest = line;
    std::string_view a = nextField(rest), b = nextField(rest),
                     c = nextField(rest);
    if (b.empty())
      return r.lineError("expected two vertex ids separated by spaces or "
                         "tabs, found one field");
    if (!c.empty())
      return r.lineError(fmt::format(
          "expected two vertex ids, found a third field {}", quoted(c)));
    int64_t u, v;
    GNNC_TRY(parseVertexId(r, a, u));
    GNNC_TRY(parseVertexId(r, b, v));
    if (o.Relabel) {
      for (int64_t *id : {&u, &v}) {
        bool inserted;
        int64_t number = map.lookup(*id, inserted);
        if (inserted) {
          if (number >= limit)
            return r.lineError(fmt::format(
                "more than {} distinct vertex ids ({})", limit, limitText));
          ids.push_back(*id);
        }
        *id = number;
      }
    } else {
      for (int64_t id : {u, v})
        if (id >= limit)
          return r.lineError(
              given ? fmt::format("vertex id {} is outside [0, {}) (the "
                                  "given vertex count)",
                                  id, limit)
                    : fmt::format("vertex id {} is too large: {} (use "
                                  "Relabel for sparse ids)",
                                  id, limitText));
      maxId = std::max({maxId, u, v});
    }
    src.push_back(u);
    dst.push_back(v);
    if (o.AddReverseEdges && u != v) {
      src.push_back(v);
      dst.push_back(u);
    }
  }
  GNNC_TRY(r.status());
  if (r.empty())
    return fileError(path, "empty file");
  int64_t n = given ? o.NumVertices : o.Relabel ? map.size() : maxId + 1;
  LoadedGraph g;
  if (Status s = Graph::fromEdgeIndex(
          src.data(), dst.data(), static_cast<int64_t>(src.size()), n, n, g.G);
      !s.ok())
    return s.withPrefix(path);
  if (o.Relabel) {
    ids.resize(static_cast<size_t>(n), -1);
    g.OriginalIds = std::move(ids);
  }
  out = std::move(g);
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Matrix Market
//===----------------------------------------------------------------------===//

std::string lower(std::string_view text) {
  std::string out(text);
  for (char &c : out)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

enum class Field { Pattern, Real, Integer };

/// Parses a size-line count.
Status parseCount(const LineReader &r, std::string_view field, const char *what,
                  int64_t &value) {
  switch (parseInt64(field, value)) {
  case NumberError::None:
    return Status::success();
  case NumberError::Negative:
    return r.lineError(fmt::format("negative {} {}", what, value));
  case NumberError::Overflow:
    return r.lineError(
        fmt::format("{} {} overflows int64", what, quoted(field)));
  case NumberError::Invalid:
    break;
  }
  return r.lineError(fmt::format("malformed size line: {} is not a count "
                                 "(expected 'rows columns entries')",
                                 quoted(field)));
}

/// Parses a 1-based row or column index in [1, size].
Status parseIndex(const LineReader &r, std::string_view field, const char *what,
                  int64_t size, int64_t &index) {
  NumberError e = parseInt64(field, index);
  if (e == NumberError::Invalid)
    return r.lineError(fmt::format("malformed entry: {} index {} is not an "
                                   "integer",
                                   what, quoted(field)));
  if (e == NumberError::Overflow)
    return r.lineError(
        fmt::format("{} index {} overflows int64", what, quoted(field)));
  if (index < 1 || index > size)
    return r.lineError(
        fmt::format("{} index {} is outside [1, {}]", what, index, size));
  return Status::success();
}

Status parseMatrixMarket(const std::string &path, const MatrixMarketOptions &o,
                         LoadedGraph &out) {
  LineReader r;
  GNNC_TRY(r.open(path));
  std::string_view line;
  if (!r.next(line)) {
    GNNC_TRY(r.status());
    return fileError(path, "empty file");
  }

  // The banner.
  std::string_view rest = line;
  std::string banner = lower(nextField(rest));
  if (banner != "%%matrixmarket")
    return r.lineError("not a Matrix Market file (the first line must start "
                       "with '%%MatrixMarket')");
  std::string object = lower(nextField(rest)), format = lower(nextField(rest)),
              field = lower(nextField(rest)), symmetry = lower(nextField(rest));
  if (symmetry.empty() || !nextField(rest).empty())
    return r.lineError("malformed header: expected '%%MatrixMarket matrix "
                       "coordinate <field> <symmetry>'");
  if (object != "matrix")
    return r.lineError(fmt::format(
        "unsupported object {} (only 'matrix' is read)", quoted(object)));
  if (format != "coordinate")
    return r.lineError(fmt::format("unsupported format {} (only sparse "
                                   "'coordinate' matrices are read)",
                                   quoted(format)));
  Field kind;
  if (field == "pattern")
    kind = Field::Pattern;
  else if (field == "real" || field == "double")
    kind = Field::Real;
  else if (field == "integer")
    kind = Field::Integer;
  else
    return r.lineError(fmt::format("unsupported field {} (expected "
                                   "'pattern', 'real' or 'integer')",
                                   quoted(field)));
  bool symmetric;
  if (symmetry == "general")
    symmetric = false;
  else if (symmetry == "symmetric")
    symmetric = true;
  else
    return r.lineError(fmt::format("unsupported symmetry {} (expected "
                                   "'general' or 'symmetric')",
                                   quoted(symmetry)));

  // The size line, after comments.
  do {
    if (!r.next(line)) {
      GNNC_TRY(r.status());
      return lineError(path, r.line(), "the file ends before the size line");
    }
  } while (skippable(line, "%"));
  rest = line;
  std::string_view f1 = nextField(rest), f2 = nextField(rest),
                   f3 = nextField(rest);
  if (f3.empty() || !nextField(rest).empty())
    return r.lineError("malformed size line: expected 'rows columns "
                       "entries'");
  int64_t rows, cols, nnz;
  GNNC_TRY(parseCount(r, f1, "row count", rows));
  GNNC_TRY(parseCount(r, f2, "column count", cols));
  GNNC_TRY(parseCount(r, f3, "entry count", nnz));
  int64_t maxVertices = std::min(o.MaxVertices, kMaxVertices);
  if (rows > maxVertices || cols > maxVertices)
    return r.lineError(fmt::format("a {} x {} matrix: a graph here has at "
                                   "most {} vertices on each side",
                                   rows, cols, maxVertices));
  if (symmetric && rows != cols)
    return r.lineError(fmt::format("a symmetric matrix must be square, but "
                                   "the size line says {} x {}",
                                   rows, cols));
  int64_t sizeLine = r.line();

  // The entries.
  std::vector<int64_t> src, dst;
  std::vector<float> weights;
  // An entry line takes 4 bytes or more; compressed, the file size bounds
  // the guess.
  uint64_t bound = r.compressed() ? r.fileSize() * 2 + 4096 : r.fileSize() / 4;
  size_t reserve = static_cast<size_t>(
      std::min<uint64_t>(static_cast<uint64_t>(nnz), bound) *
      (symmetric ? 2 : 1));
  src.reserve(reserve);
  dst.reserve(reserve);
  if (kind != Field::Pattern)
    weights.reserve(reserve);
  size_t expectFields = kind == Field::Pattern ? 2 : 3;
  const char *layout =
      kind == Field::Pattern ? "'row column'" : "'row column value'";
  int64_t count = 0;
  while (r.next(line)) {
    if (skippable(line, "%"))
      continue;
    if (count == nnz)
      return r.lineError(fmt::format("more entries than the {} the size "
                                     "line (line {}) announces",
                                     nnz, sizeLine));
    rest = line;
    std::string_view fields[4];
    size_t found = 0;
    while (found < 4 && !(fields[found] = nextField(rest)).empty())
      ++found;
    if (found != expectFields)
      return r.lineError(
          fmt::format("malformed entry: expected {} ({} "
                      "fields), found {} field{}",
                      layout, expectFields,
                      found == 4 ? "4 or more" : std::to_string(found),
                      found == 1 ? "" : "s"));
    int64_t i, j;
    GNNC_TRY(parseIndex(r, fields[0], "row", rows, i));
    GNNC_TRY(parseIndex(r, fields[1], "column", cols, j));
    float w = 1.0f;
    if (kind == Field::Integer) {
      int64_t value;
      NumberError e = parseInt64(fields[2], value);
      if (e == NumberError::Invalid)
        return r.lineError(fmt::format("value {} is not an integer (the "
                                       "matrix is 'integer')",
                                       quoted(fields[2])));
      if (e == NumberError::Overflow)
        return r.lineError(
            fmt::format("value {} overflows int64", quoted(fields[2])));
      w = static_cast<float>(value);
    } else if (kind == Field::Real) {
      NumberError e = parseFloat(fields[2], w);
      if (e == NumberError::Invalid)
        return r.lineError(
            fmt::format("value {} is not a number", quoted(fields[2])));
      if (e == NumberError::Overflow)
        return r.lineError(fmt::format("value {} is too large for float32",
                                       quoted(fields[2])));
      if (!std::isfinite(w) && !o.AllowNonFinite)
        return r.lineError(fmt::format("value {} is not finite (non-finite "
                                       "values are rejected)",
                                       quoted(fields[2])));
    }
    src.push_back(i - 1);
    dst.push_back(j - 1);
    if (kind != Field::Pattern)
      weights.push_back(w);
    if (symmetric && i != j) {
      src.push_back(j - 1);
      dst.push_back(i - 1);
      if (kind != Field::Pattern)
        weights.push_back(w);
    }
    ++count;
  }
  GNNC_TRY(r.status());
  if (count < nnz)
    return lineError(path, r.line(),
                     fmt::format("the file ends after {} of the {} entries "
                                 "the size line (line {}) announces",
                                 count, nnz, sizeLine));
  LoadedGraph g;
  if (Status s = Graph::fromEdgeIndex(src.data(), dst.data(),
                                      static_cast<int64_t>(src.size()), rows,
                                      cols, g.G);
      !s.ok())
    return s.withPrefix(path);
  g.Weights = std::move(weights);
  out = std::move(g);
  return Status::success();
}

/// Runs `parse` through the cache `<path>.gnnc-cache`.
template <class Parse>
Status loadGraphFile(const std::string &path, uint32_t kind,
                     std::string options, const CacheOptions &cache,
                     LoadInfo *info, LoadedGraph &out, Parse parse) {
  if (info)
    *info = LoadInfo();
  CacheKey key;
  key.Kind = kind;
  key.Options = std::move(options);
  key.Sources.emplace_back();
  std::string name = path.substr(path.find_last_of('/') + 1);
  GNNC_TRY(stampSource(path, name, key.Sources.back()));
  LoadedGraph g;
  try {
    GNNC_TRY(loadThroughCache(path + ".gnnc-cache", cache, key, info, g, parse,
                              decodeGraph, encodeGraph));
  } catch (const std::bad_alloc &) {
    return fileError(path, "out of memory");
  }
  out = std::move(g);
  return Status::success();
}

} // namespace

Status gnnc::rt::loadSnapEdgeList(const std::string &path, LoadedGraph &out,
                                  const SnapOptions &options, LoadInfo *info) {
  SnapOptions o = options;
  o.MaxVertices = std::min(o.MaxVertices, kMaxVertices);
  if (o.NumVertices < -1)
    return fileError(path,
                     fmt::format("invalid vertex count {}", o.NumVertices));
  if (o.NumVertices > o.MaxVertices)
    return fileError(path,
                     fmt::format("{} vertices: a graph here has at most {}",
                                 o.NumVertices, o.MaxVertices));
  std::string key =
      fmt::format("snap n={} relabel={} reverse={} max={}", o.NumVertices,
                  o.Relabel, o.AddReverseEdges, o.MaxVertices);
  return loadGraphFile(path, kCacheSnap, std::move(key), o.Cache, info, out,
                       [&](LoadedGraph &g) { return parseSnap(path, o, g); });
}

Status gnnc::rt::loadMatrixMarket(const std::string &path, LoadedGraph &out,
                                  const MatrixMarketOptions &options,
                                  LoadInfo *info) {
  std::string key =
      fmt::format("mm nonfinite={} max={}", options.AllowNonFinite,
                  std::min(options.MaxVertices, kMaxVertices));
  return loadGraphFile(
      path, kCacheMatrixMarket, std::move(key), options.Cache, info, out,
      [&](LoadedGraph &g) { return parseMatrixMarket(path, options, g); });
}
