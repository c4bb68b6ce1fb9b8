//===- Dataset.cpp - Node-classification datasets -------------------------===//
//
// Part of gnnc. The bundle reader loads the whole file, checks its framing
// (magic, version, sizes) and its FNV-1a checksum, and only then decodes the
// sections, bounds-checking every read and every index against the header,
// so a damaged or hostile file yields an error, never a crash. Every size the
// header declares is checked against the file's size before anything is
// allocated. The format is specified in docs/runtime.md.
//
//===----------------------------------------------------------------------===//

#include "gnnc/runtime/Dataset.h"

#include "FileUtil.h"

#include "gnnc/runtime/Npy.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include <sys/stat.h>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "gnnc_runtime assumes a little-endian host"
#endif

#ifndef GNNC_DEFAULT_DATA_DIR
#define GNNC_DEFAULT_DATA_DIR ""
#endif

using namespace gnnc::rt;

namespace {

constexpr unsigned char kMagic[8] = {'G', 'N', 'N', 'C', 'D', 'A', 'T', 'A'};
constexpr uint32_t kVersion = 1;
constexpr size_t kHeaderSize = 48;
constexpr size_t kChecksumSize = 8;
constexpr uint64_t kMaxClasses = 256;
/// The dense features of a bundle (N x F float32) may take at most this many
/// times the size of the file. A node without features costs one byte, so
/// this bounds F; Cora expands 146 times, Citeseer 270 times.
constexpr uint64_t kMaxFeatureExpansion = 1 << 16;
constexpr const char *kBundleSuffix = ".gnnd";
constexpr const char *kMaskNames[3] = {"train", "val", "test"};

using detail::errnoText;
using detail::fileError;

std::string joinPath(const std::string &dir, const std::string &name) {
  if (dir.empty())
    return name;
  if (dir.back() == '/')
    return dir + name;
  return dir + "/" + name;
}

std::string hex64(uint64_t value) { return fmt::format("{:#018x}", value); }

uint64_t fnv1a64(const unsigned char *data, size_t size) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < size; ++i) {
    hash ^= data[i];
    hash *= 0x100000001b3ull;
  }
  return hash;
}

uint32_t loadU32(const unsigned char *p) {
  uint32_t value;
  std::memcpy(&value, p, sizeof(value));
  return value;
}

uint64_t loadU64(const unsigned char *p) {
  uint64_t value;
  std::memcpy(&value, p, sizeof(value));
  return value;
}

/// Reads all of `path` (a regular file) into `bytes`.
Status readWholeFile(const std::string &path,
                     std::vector<unsigned char> &bytes) {
  std::FILE *file = std::fopen(path.c_str(), "rb");
  if (!file)
    return fileError(path, "cannot open file: " + errnoText(errno));
  struct Closer {
    std::FILE *F;
    ~Closer() { std::fclose(F); }
  } closer{file};
  struct stat st;
  if (::fstat(::fileno(file), &st) != 0)
    return fileError(path, "cannot stat file: " + errnoText(errno));
  if (!S_ISREG(st.st_mode))
    return fileError(path, "not a regular file");
  uint64_t size = static_cast<uint64_t>(st.st_size);
  if (size > bytes.max_size())
    return fileError(path, "file is too large for this machine");
  try {
    bytes.assign(static_cast<size_t>(size), 0);
  } catch (const std::bad_alloc &) {
    return fileError(path, fmt::format("out of memory reading {} bytes", size));
  }
  if (size > 0 && std::fread(bytes.data(), 1, bytes.size(), file) != size) {
    if (std::ferror(file))
      return fileError(path, "read error: " + errnoText(errno));
    return fileError(path, "file is truncated: it shrank while reading");
  }
  return Status::success();
}

/// Decodes one bundle held in memory.
class BundleReader {
public:
  BundleReader(const std::string &path, const std::vector<unsigned char> &bytes)
      : Path(path), Bytes(bytes) {}

  Status read(Dataset &out) {
    if (Status s = checkFraming(); !s.ok())
      return s;
    Dataset ds;
    try {
      if (Status s = decode(ds); !s.ok())
        return s;
    } catch (const std::bad_alloc &) {
      return error(fmt::format(
          "out of memory loading {} nodes, {} features and {} edges", N, F, E));
    }
    out = std::move(ds);
    return Status::success();
  }

private:
  Status error(const std::string &message) const {
    return fileError(Path, message);
  }

  /// Magic, version, sizes and checksum; reads the header fields.
  Status checkFraming() {
    size_t size = Bytes.size();
    if (size > 0 &&
        std::memcmp(Bytes.data(), kMagic, std::min(size, sizeof(kMagic))) != 0)
      return error("not a gnnc dataset bundle (bad magic string)");
    size_t minSize = kHeaderSize + kChecksumSize;
    if (size < minSize)
      return error(fmt::format("file is truncated: {} bytes, but a dataset "
                               "bundle has at least {}",
                               size, minSize));
    const unsigned char *h = Bytes.data();
    uint32_t version = loadU32(h + 8);
    if (version != kVersion)
      return error(fmt::format(
          "unsupported bundle version {} (this runtime reads version {})",
          version, kVersion));
    uint32_t flags = loadU32(h + 12);
    if (flags != 0)
      return error(fmt::format("unsupported flags {} (version {} defines none)",
                               hex64(flags), kVersion));
    N = loadU32(h + 16);
    F = loadU32(h + 20);
    E = loadU32(h + 24);
    C = loadU32(h + 28);
    NNZ = loadU64(h + 32);
    PayloadSize = loadU64(h + 40);
    uint64_t after = size - kHeaderSize;
    uint64_t needed = PayloadSize + kChecksumSize;
    if (PayloadSize > after || needed > after)
      return error(fmt::format(
          "file is truncated: the header announces {} payload bytes and an "
          "8-byte checksum, but only {} bytes follow the header",
          PayloadSize, after));
    if (needed < after)
      return error(fmt::format(
          "trailing data: the header announces {} payload bytes and an "
          "8-byte checksum, but {} bytes follow the header",
          PayloadSize, after));
    size_t covered = kHeaderSize + static_cast<size_t>(PayloadSize);
    uint64_t stored = loadU64(h + covered);
    uint64_t computed = fnv1a64(h, covered);
    if (stored != computed)
      return error(fmt::format(
          "checksum mismatch (stored {}, computed {}): the file is corrupt",
          hex64(stored), hex64(computed)));

    // The sizes the header implies must fit in the payload.
    if (C == 0 && N > 0)
      return error(fmt::format("the header says 0 classes for {} nodes", N));
    if (C > kMaxClasses)
      return error(fmt::format("the header says {} classes; a bundle holds at "
                               "most {} (labels are stored in one byte)",
                               C, kMaxClasses));
    IndexWidth = N <= 65536 ? 2 : 4;
    MaskBytes = (N + 7) / 8;
    uint64_t fixed = 2 * E * IndexWidth + N + 3 * MaskBytes;
    if (fixed > PayloadSize)
      return error(fmt::format("payload of {} bytes is too small for {} edges "
                               "and {} nodes (they need {} bytes)",
                               PayloadSize, E, N, fixed));
    FeatureBytes = PayloadSize - fixed;
    if (NNZ > FeatureBytes)
      return error(fmt::format("the header says {} nonzero features, but the "
                               "feature section has only {} bytes",
                               NNZ, FeatureBytes));
    uint64_t elements;
    if (__builtin_mul_overflow(N, F, &elements) ||
        elements > std::vector<float>().max_size())
      return error(fmt::format("{}x{} features do not fit in memory", N, F));
    // N and F are below 2^32, so this does not overflow; nor does the limit
    // for files below 2^48 bytes.
    uint64_t denseBytes = elements * sizeof(float);
    if (size < (uint64_t{1} << 48) && denseBytes > size * kMaxFeatureExpansion)
      return error(fmt::format(
          "the header says {}x{} features ({} bytes as float32), more than {} "
          "times the size of the {}-byte file",
          N, F, denseBytes, kMaxFeatureExpansion, size));
    return Status::success();
  }

  /// Reads an unsigned LEB128 number below 2^32 at `Pos`, not past `end`.
  bool readVarint(size_t end, uint64_t &value) {
    value = 0;
    for (unsigned shift = 0; shift < 35; shift += 7) {
      if (Pos >= end)
        return false;
      unsigned char byte = Bytes[Pos++];
      value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if (!(byte & 0x80))
        return value <= 0xffffffffull;
    }
    return false;
  }

  uint64_t readIndex() {
    uint64_t value = IndexWidth == 2
                         ? static_cast<uint64_t>(Bytes[Pos]) |
                               static_cast<uint64_t>(Bytes[Pos + 1]) << 8
                         : loadU32(&Bytes[Pos]);
    Pos += IndexWidth;
    return value;
  }

  Status decode(Dataset &ds) {
    ds.NumNodes = static_cast<int64_t>(N);
    ds.NumFeatures = static_cast<int64_t>(F);
    ds.NumClasses = static_cast<int64_t>(C);
    size_t numNodes = static_cast<size_t>(N);
    size_t numFeatures = static_cast<size_t>(F);

    // Features.
    Pos = kHeaderSize;
    size_t featureEnd = Pos + static_cast<size_t>(FeatureBytes);
    ds.X.assign(numNodes * numFeatures, 0.0f);
    uint64_t total = 0;
    for (size_t row = 0; row < numNodes; ++row) {
      auto rowError = [&](const std::string &message) {
        return error(fmt::format("feature row {}: {}", row, message));
      };
      uint64_t count;
      if (!readVarint(featureEnd, count))
        return rowError("malformed or truncated column count");
      if (count > F)
        return rowError(fmt::format(
            "{} nonzero columns, but there are only {} features", count, F));
      total += count;
      if (total > NNZ)
        return rowError(fmt::format(
            "more nonzero features than the {} the header announces", NNZ));
      uint64_t next = 0; // The smallest column the next entry may have.
      for (uint64_t i = 0; i < count; ++i) {
        uint64_t gap;
        if (!readVarint(featureEnd, gap))
          return rowError("malformed or truncated column gap");
        uint64_t col = next + gap;
        if (col >= F)
          return rowError(fmt::format("column {} is outside [0, {})", col, F));
        ds.X[row * numFeatures + static_cast<size_t>(col)] = 1.0f;
        next = col + 1;
      }
    }
    if (total != NNZ)
      return error(fmt::format("the feature section holds {} nonzero features, "
                               "but the header announces {}",
                               total, NNZ));
    if (Pos != featureEnd)
      return error(fmt::format("the feature section has {} unused bytes",
                               featureEnd - Pos));

    // Edges: all sources, then all destinations.
    size_t numEdges = static_cast<size_t>(E);
    ds.EdgeSrc.resize(numEdges);
    ds.EdgeDst.resize(numEdges);
    for (int side = 0; side < 2; ++side) {
      std::vector<int64_t> &ends = side == 0 ? ds.EdgeSrc : ds.EdgeDst;
      for (size_t e = 0; e < numEdges; ++e) {
        uint64_t v = readIndex();
        if (v >= N)
          return error(fmt::format("edge {}: {} {} is outside [0, {})", e,
                                   side == 0 ? "source" : "destination", v, N));
        ends[e] = static_cast<int64_t>(v);
      }
    }

    // Labels.
    ds.Y.resize(numNodes);
    for (size_t v = 0; v < numNodes; ++v) {
      uint64_t label = Bytes[Pos++];
      if (label >= C)
        return error(
            fmt::format("node {}: label {} is outside [0, {})", v, label, C));
      ds.Y[v] = static_cast<int64_t>(label);
    }

    // Masks, LSB first; the bits past the last node must be zero.
    std::vector<uint8_t> *masks[3] = {&ds.TrainMask, &ds.ValMask, &ds.TestMask};
    for (int m = 0; m < 3; ++m) {
      const unsigned char *bits = &Bytes[Pos];
      masks[m]->resize(numNodes);
      for (size_t v = 0; v < numNodes; ++v)
        (*masks[m])[v] = (bits[v / 8] >> (v % 8)) & 1;
      if (N % 8 != 0 && (bits[numNodes / 8] >> (N % 8)) != 0)
        return error(std::string(kMaskNames[m]) +
                     " mask: the padding bits after the last node are not "
                     "zero");
      Pos += static_cast<size_t>(MaskBytes);
    }
    return Status::success();
  }

  const std::string &Path;
  const std::vector<unsigned char> &Bytes;
  uint64_t N = 0, F = 0, E = 0, C = 0, NNZ = 0, PayloadSize = 0;
  uint64_t IndexWidth = 2, MaskBytes = 0, FeatureBytes = 0;
  size_t Pos = 0;
};

Status loadBundle(const std::string &path, Dataset &out) {
  std::vector<unsigned char> bytes;
  if (Status s = readWholeFile(path, bytes); !s.ok())
    return s;
  return BundleReader(path, bytes).read(out);
}

/// Copies a bool .npy mask into `out`.
void copyMask(const NpyArray &array, std::vector<uint8_t> &out) {
  out.assign(array.bytes.begin(), array.bytes.end());
}

Status loadNpyDir(const std::string &dir, Dataset &out,
                  const DatasetOptions &options) {
  std::string featPath = joinPath(dir, "x.npy");
  std::string edgePath = joinPath(dir, "edge_index.npy");
  std::string labelPath = joinPath(dir, "y.npy");

  NpyArray x, edges, y, masks[3];
  FloatReadOptions featureOptions;
  featureOptions.AllowNonFinite = options.AllowNonFinite;
  featureOptions.Shape = std::vector<int64_t>{-1, -1};
  if (Status s = readNpyAsFloat32(featPath, x, featureOptions); !s.ok())
    return s;
  int64_t n = x.shape[0];
  if (Status s = readNpyExpect(edgePath, DType::Int64, {2, -1}, edges); !s.ok())
    return s;
  if (Status s = readNpyExpect(labelPath, DType::Int64, {n}, y); !s.ok())
    return s;
  for (int m = 0; m < 3; ++m) {
    std::string path = joinPath(dir, std::string(kMaskNames[m]) + "_mask.npy");
    if (Status s = readNpyExpect(path, DType::Bool, {n}, masks[m]); !s.ok())
      return s;
  }

  int64_t numEdges = edges.shape[1];
  const int64_t *src = edges.data<int64_t>();
  const int64_t *dst = src ? src + numEdges : nullptr;
  for (int64_t e = 0; e < numEdges; ++e) {
    if (src[e] < 0 || src[e] >= n)
      return fileError(
          edgePath,
          fmt::format("edge {}: source {} is outside [0, {})", e, src[e], n));
    if (dst[e] < 0 || dst[e] >= n)
      return fileError(edgePath,
                       fmt::format("edge {}: destination {} is outside [0, {})",
                                   e, dst[e], n));
  }
  const int64_t *labels = y.data<int64_t>();
  int64_t maxLabel = -1;
  for (int64_t v = 0; v < n; ++v) {
    if (labels[v] < 0)
      return fileError(labelPath,
                       fmt::format("node {}: negative label {}", v, labels[v]));
    maxLabel = std::max(maxLabel, labels[v]);
  }

  Dataset ds;
  try {
    ds.NumNodes = n;
    ds.NumFeatures = x.shape[1];
    ds.NumClasses = maxLabel + 1;
    ds.EdgeSrc.assign(src, src + numEdges);
    ds.EdgeDst.assign(dst, dst + numEdges);
    const float *features = x.data<float>();
    ds.X.assign(features, features + (features ? x.numElements() : 0));
    ds.Y.assign(labels, labels + n);
    copyMask(masks[0], ds.TrainMask);
    copyMask(masks[1], ds.ValMask);
    copyMask(masks[2], ds.TestMask);
  } catch (const std::bad_alloc &) {
    return fileError(dir, "out of memory loading the dataset");
  }
  out = std::move(ds);
  return Status::success();
}

bool isValidName(std::string_view name) {
  if (name.empty() || name.front() == '.')
    return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' ||
          c == '.'))
      return false;
  return true;
}

} // namespace

Status gnnc::rt::loadDataset(const std::string &path, Dataset &out,
                             const DatasetOptions &options) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return fileError(path, "cannot open: " + errnoText(errno));
  if (S_ISDIR(st.st_mode))
    return loadNpyDir(path, out, options);
  // Checked here too, so that a FIFO never blocks in fopen.
  if (!S_ISREG(st.st_mode))
    return fileError(path, "not a regular file or directory");
  return loadBundle(path, out);
}

std::string gnnc::rt::defaultDataDir() { return GNNC_DEFAULT_DATA_DIR; }

std::string gnnc::rt::dataDir() {
  const char *env = std::getenv("GNNC_DATA_DIR");
  if (env && *env)
    return env;
  return defaultDataDir();
}

Status gnnc::rt::findDataset(std::string_view name, Dataset &out,
                             const DatasetOptions &options) {
  if (!isValidName(name))
    return Status::error(
        fmt::format("invalid dataset name '{}' (use letters, digits, '_', '-' "
                    "and '.', not starting with '.')",
                    name));
  const char *env = std::getenv("GNNC_DATA_DIR");
  bool fromEnv = env && *env;
  std::string dir = dataDir();
  if (dir.empty())
    return Status::error(fmt::format(
        "dataset '{}': no dataset folder (set GNNC_DATA_DIR)", name));
  std::string bundle = joinPath(dir, std::string(name) + kBundleSuffix);
  std::string npyDir = joinPath(dir, std::string(name));
  struct stat st;
  if (::stat(bundle.c_str(), &st) == 0)
    return loadDataset(bundle, out, options);
  if (::stat(npyDir.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
    return loadDataset(npyDir, out, options);
  return Status::error(fmt::format(
      "dataset '{}' not found: neither {} nor the directory {} exists (the "
      "dataset folder {})",
      name, bundle, npyDir,
      fromEnv ? "comes from GNNC_DATA_DIR"
              : "is the built-in one; set GNNC_DATA_DIR to use another"));
}
