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

#include <charconv>
#include <cmath>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

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

/// The header fields of a bundle and the section sizes they imply.
struct BundleLayout {
  uint64_t N = 0, F = 0, E = 0, C = 0, NNZ = 0, PayloadSize = 0;
  uint64_t IndexWidth = 2, MaskBytes = 0, FeatureBytes = 0;

  uint64_t edgeOffset() const { return kHeaderSize + FeatureBytes; }
  uint64_t labelOffset() const { return edgeOffset() + 2 * E * IndexWidth; }
  uint64_t maskOffset(int m) const {
    return labelOffset() + N + static_cast<uint64_t>(m) * MaskBytes;
  }
};

/// Checks the magic, the minimum size, the version and flags and that the
/// file size is exactly header + payload + checksum, and reads the header
/// fields. `h` holds the first min(size, kHeaderSize) bytes of the file.
Status checkBundleHeader(const std::string &path, const unsigned char *h,
                         uint64_t size, BundleLayout &out) {
  if (size > 0 && std::memcmp(h, kMagic,
                              static_cast<size_t>(std::min<uint64_t>(
                                  size, sizeof(kMagic)))) != 0)
    return fileError(path, "not a gnnc dataset bundle (bad magic string)");
  size_t minSize = kHeaderSize + kChecksumSize;
  if (size < minSize)
    return fileError(path, fmt::format("file is truncated: {} bytes, but a "
                                       "dataset bundle has at least {}",
                                       size, minSize));
  uint32_t version = loadU32(h + 8);
  if (version != kVersion)
    return fileError(path, fmt::format("unsupported bundle version {} (this "
                                       "runtime reads version {})",
                                       version, kVersion));
  uint32_t flags = loadU32(h + 12);
  if (flags != 0)
    return fileError(path,
                     fmt::format("unsupported flags {} (version {} defines "
                                 "none)",
                                 hex64(flags), kVersion));
  out.N = loadU32(h + 16);
  out.F = loadU32(h + 20);
  out.E = loadU32(h + 24);
  out.C = loadU32(h + 28);
  out.NNZ = loadU64(h + 32);
  out.PayloadSize = loadU64(h + 40);
  uint64_t after = size - kHeaderSize;
  uint64_t needed = out.PayloadSize + kChecksumSize;
  if (out.PayloadSize > after || needed > after)
    return fileError(
        path,
        fmt::format("file is truncated: the header announces {} payload bytes "
                    "and an 8-byte checksum, but only {} bytes follow the "
                    "header",
                    out.PayloadSize, after));
  if (needed < after)
    return fileError(
        path, fmt::format("trailing data: the header announces {} payload "
                          "bytes and an 8-byte checksum, but {} bytes follow "
                          "the header",
                          out.PayloadSize, after));
  return Status::success();
}

/// Checks that the class count and the sections the header implies fit the
/// payload and derives the section sizes.
Status checkBundleSizes(const std::string &path, uint64_t size,
                        BundleLayout &l) {
  if (l.C == 0 && l.N > 0)
    return fileError(
        path, fmt::format("the header says 0 classes for {} nodes", l.N));
  if (l.C > kMaxClasses)
    return fileError(path, fmt::format("the header says {} classes; a bundle "
                                       "holds at most {} (labels are stored "
                                       "in one byte)",
                                       l.C, kMaxClasses));
  l.IndexWidth = l.N <= 65536 ? 2 : 4;
  l.MaskBytes = (l.N + 7) / 8;
  uint64_t fixed = 2 * l.E * l.IndexWidth + l.N + 3 * l.MaskBytes;
  if (fixed > l.PayloadSize)
    return fileError(path, fmt::format("payload of {} bytes is too small for "
                                       "{} edges and {} nodes (they need {} "
                                       "bytes)",
                                       l.PayloadSize, l.E, l.N, fixed));
  l.FeatureBytes = l.PayloadSize - fixed;
  if (l.NNZ > l.FeatureBytes)
    return fileError(path, fmt::format("the header says {} nonzero features, "
                                       "but the feature section has only {} "
                                       "bytes",
                                       l.NNZ, l.FeatureBytes));
  uint64_t elements;
  if (__builtin_mul_overflow(l.N, l.F, &elements) ||
      elements > std::vector<float>().max_size())
    return fileError(
        path, fmt::format("{}x{} features do not fit in memory", l.N, l.F));
  // N and F are below 2^32, so this does not overflow; nor does the limit
  // for files below 2^48 bytes.
  uint64_t denseBytes = elements * sizeof(float);
  if (size < (uint64_t{1} << 48) && denseBytes > size * kMaxFeatureExpansion)
    return fileError(
        path, fmt::format("the header says {}x{} features ({} bytes as "
                          "float32), more than {} times the size of the "
                          "{}-byte file",
                          l.N, l.F, denseBytes, kMaxFeatureExpansion, size));
  return Status::success();
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
    if (Status s = checkBundleHeader(Path, Bytes.data(), size, L); !s.ok())
      return s;
    const unsigned char *h = Bytes.data();
    size_t covered = kHeaderSize + static_cast<size_t>(L.PayloadSize);
    uint64_t stored = loadU64(h + covered);
    uint64_t computed = fnv1a64(h, covered);
    if (stored != computed)
      return error(fmt::format(
          "checksum mismatch (stored {}, computed {}): the file is corrupt",
          hex64(stored), hex64(computed)));
    if (Status s = checkBundleSizes(Path, size, L); !s.ok())
      return s;
    N = L.N;
    F = L.F;
    E = L.E;
    C = L.C;
    NNZ = L.NNZ;
    PayloadSize = L.PayloadSize;
    IndexWidth = L.IndexWidth;
    MaskBytes = L.MaskBytes;
    FeatureBytes = L.FeatureBytes;
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
  BundleLayout L;
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

//===----------------------------------------------------------------------===//
// Reading parts of a dataset
//===----------------------------------------------------------------------===//

namespace {

/// Which array of a dataset; masks carry their index in kMaskNames.
struct ArrayRef {
  enum Kind { Features, Labels, Mask } K = Features;
  int MaskIndex = 0;
};

Status parseArrayName(const std::string &path, const std::string &name,
                      ArrayRef &out) {
  if (name == "features") {
    out.K = ArrayRef::Features;
    return Status::success();
  }
  if (name == "labels") {
    out.K = ArrayRef::Labels;
    return Status::success();
  }
  for (int m = 0; m < 3; ++m) {
    if (name == std::string(kMaskNames[m]) + "_mask") {
      out.K = ArrayRef::Mask;
      out.MaskIndex = m;
      return Status::success();
    }
  }
  return fileError(path, fmt::format("unknown dataset array '{}' (expected "
                                     "'features', 'labels', 'train_mask', "
                                     "'val_mask' or 'test_mask')",
                                     name));
}

/// The shape and dtype of an array of a dataset of N nodes and F features.
DatasetArrayInfo arrayInfo(const ArrayRef &ref, int64_t n, int64_t f) {
  DatasetArrayInfo info;
  switch (ref.K) {
  case ArrayRef::Features:
    info.Dtype = DType::Float32;
    info.Shape = {n, f};
    break;
  case ArrayRef::Labels:
    info.Dtype = DType::Int64;
    info.Shape = {n};
    break;
  case ArrayRef::Mask:
    info.Dtype = DType::Bool;
    info.Shape = {n};
    break;
  }
  return info;
}

Status checkRowRange(const std::string &path, const std::string &array,
                     int64_t rowBegin, int64_t rowCount, int64_t rows) {
  if (rowBegin < 0 || rowCount < 0 || rowBegin > rows ||
      rowCount > rows - rowBegin)
    return fileError(path,
                     fmt::format("{}: rows [{}, {}) are outside the {} "
                                 "rows of the dataset",
                                 array, rowBegin, rowBegin + rowCount, rows));
  return Status::success();
}

/// An open bundle whose header has been checked (not its checksum).
class BundleFile {
public:
  explicit BundleFile(const std::string &path) : Path(path) {}
  ~BundleFile() {
    if (Fd >= 0)
      ::close(Fd);
  }

  Status open() {
    Fd = ::open(Path.c_str(), O_RDONLY | O_CLOEXEC);
    if (Fd < 0)
      return fileError(Path, "cannot open file: " + errnoText(errno));
    struct stat st;
    if (::fstat(Fd, &st) != 0)
      return fileError(Path, "cannot stat file: " + errnoText(errno));
    if (!S_ISREG(st.st_mode))
      return fileError(Path, "not a regular file");
    Size = static_cast<uint64_t>(st.st_size);
    unsigned char header[kHeaderSize] = {};
    size_t first =
        static_cast<size_t>(std::min<uint64_t>(Size, sizeof(header)));
    if (Status s = readAt(0, header, first); !s.ok())
      return s;
    if (Status s = checkBundleHeader(Path, header, Size, Layout); !s.ok())
      return s;
    return checkBundleSizes(Path, Size, Layout);
  }

  Status readAt(uint64_t offset, void *dst, size_t size) const {
    auto *p = static_cast<unsigned char *>(dst);
    while (size > 0) {
      ssize_t n = ::pread(Fd, p, size, static_cast<off_t>(offset));
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return fileError(Path, "read error: " + errnoText(errno));
      if (n == 0)
        return fileError(Path, "file is truncated: it shrank while reading");
      p += n;
      offset += static_cast<uint64_t>(n);
      size -= static_cast<size_t>(n);
    }
    return Status::success();
  }

  /// Decodes feature rows [0, rowBegin + rowCount), writing rows from
  /// rowBegin on into `out` (rowCount * F floats).
  Status readFeatures(int64_t rowBegin, int64_t rowCount, float *out) {
    const BundleLayout &l = Layout;
    uint64_t f = l.F;
    uint64_t end = static_cast<uint64_t>(rowBegin + rowCount);
    if (rowCount > 0)
      std::fill(out, out + static_cast<size_t>(rowCount) * f, 0.0f);
    Pos = kHeaderSize;
    SectionEnd = kHeaderSize + l.FeatureBytes;
    uint64_t total = 0;
    for (uint64_t row = 0; row < end; ++row) {
      auto rowError = [&](const std::string &message) {
        return fileError(Path, fmt::format("feature row {}: {}", row, message));
      };
      uint64_t count;
      bool ok;
      if (Status s = readVarint(count, ok); !s.ok())
        return s;
      if (!ok)
        return rowError("malformed or truncated column count");
      if (count > f)
        return rowError(fmt::format(
            "{} nonzero columns, but there are only {} features", count, f));
      total += count;
      if (total > l.NNZ)
        return rowError(fmt::format(
            "more nonzero features than the {} the header announces", l.NNZ));
      uint64_t next = 0;
      for (uint64_t i = 0; i < count; ++i) {
        uint64_t gap;
        if (Status s = readVarint(gap, ok); !s.ok())
          return s;
        if (!ok)
          return rowError("malformed or truncated column gap");
        uint64_t col = next + gap;
        if (col >= f)
          return rowError(fmt::format("column {} is outside [0, {})", col, f));
        if (row >= static_cast<uint64_t>(rowBegin))
          out[(row - static_cast<uint64_t>(rowBegin)) * f + col] = 1.0f;
        next = col + 1;
      }
    }
    if (end == l.N) {
      if (total != l.NNZ)
        return fileError(Path,
                         fmt::format("the feature section holds {} nonzero "
                                     "features, but the header announces {}",
                                     total, l.NNZ));
      if (Pos != SectionEnd)
        return fileError(Path, fmt::format("the feature section has {} unused "
                                           "bytes",
                                           SectionEnd - Pos));
    }
    return Status::success();
  }

  Status readLabels(int64_t rowBegin, int64_t rowCount, int64_t *out) {
    std::vector<unsigned char> bytes(static_cast<size_t>(rowCount));
    if (Status s =
            readAt(Layout.labelOffset() + static_cast<uint64_t>(rowBegin),
                   bytes.data(), bytes.size());
        !s.ok())
      return s;
    for (size_t i = 0; i < bytes.size(); ++i) {
      if (bytes[i] >= Layout.C)
        return fileError(Path, fmt::format("node {}: label {} is outside [0, "
                                           "{})",
                                           static_cast<uint64_t>(rowBegin) + i,
                                           bytes[i], Layout.C));
      out[i] = bytes[i];
    }
    return Status::success();
  }

  Status readMask(int m, int64_t rowBegin, int64_t rowCount,
                  unsigned char *out) {
    if (rowCount == 0)
      return Status::success();
    uint64_t begin = static_cast<uint64_t>(rowBegin);
    uint64_t end = begin + static_cast<uint64_t>(rowCount);
    uint64_t firstByte = begin / 8, lastByte = (end - 1) / 8;
    std::vector<unsigned char> bits(
        static_cast<size_t>(lastByte - firstByte + 1));
    if (Status s =
            readAt(Layout.maskOffset(m) + firstByte, bits.data(), bits.size());
        !s.ok())
      return s;
    for (uint64_t v = begin; v < end; ++v)
      out[v - begin] = (bits[v / 8 - firstByte] >> (v % 8)) & 1;
    uint64_t n = Layout.N;
    if (end == n && n % 8 != 0 && (bits.back() >> (n % 8)) != 0)
      return fileError(Path, std::string(kMaskNames[m]) +
                                 " mask: the padding bits after the last "
                                 "node are not zero");
    return Status::success();
  }

  const BundleLayout &layout() const { return Layout; }

private:
  /// An unsigned LEB128 number below 2^32 at Pos, not past SectionEnd; `ok`
  /// is false when it is malformed or truncated.
  Status readVarint(uint64_t &value, bool &ok) {
    value = 0;
    ok = false;
    for (unsigned shift = 0; shift < 35; shift += 7) {
      if (Pos >= SectionEnd)
        return Status::success();
      if (Pos < BufferStart || Pos >= BufferStart + Buffer.size()) {
        size_t size = static_cast<size_t>(
            std::min<uint64_t>(SectionEnd - Pos, 64 * 1024));
        Buffer.resize(size);
        if (Status s = readAt(Pos, Buffer.data(), size); !s.ok())
          return s;
        BufferStart = Pos;
      }
      unsigned char byte = Buffer[static_cast<size_t>(Pos - BufferStart)];
      ++Pos;
      value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if (!(byte & 0x80)) {
        ok = value <= 0xffffffffull;
        return Status::success();
      }
    }
    return Status::success();
  }

  std::string Path;
  int Fd = -1;
  uint64_t Size = 0;
  BundleLayout Layout;
  std::vector<unsigned char> Buffer;
  uint64_t BufferStart = 0, Pos = 0, SectionEnd = 0;
};

/// The .npy file of an array in a dataset folder.
std::string arrayFile(const std::string &dir, const ArrayRef &ref) {
  switch (ref.K) {
  case ArrayRef::Features:
    return joinPath(dir, "x.npy");
  case ArrayRef::Labels:
    return joinPath(dir, "y.npy");
  case ArrayRef::Mask:
    break;
  }
  return joinPath(dir, std::string(kMaskNames[ref.MaskIndex]) + "_mask.npy");
}

/// The shape of x.npy in a dataset folder, which must hold float32 or
/// float64 [N, F]; `dtype` receives its dtype.
Status featureHeader(const std::string &dir, DType &dtype,
                     std::vector<int64_t> &shape) {
  std::string path = joinPath(dir, "x.npy");
  if (Status s = readNpyHeader(path, dtype, shape); !s.ok())
    return s;
  if (dtype != DType::Float32 && dtype != DType::Float64)
    return fileError(path,
                     fmt::format("expected dtype float32 or float64, got {}",
                                 dtypeName(dtype)));
  if (shape.size() != 2)
    return fileError(
        path, fmt::format("expected shape *x*, got {}", formatShape(shape)));
  return Status::success();
}

/// The error for element [row, col] of x.npy that is not finite or does not
/// fit in float32.
Status featureValueError(const std::string &path, int64_t row, int64_t col,
                         double value) {
  std::string where = fmt::format("element [{}, {}]", row, col);
  if (!std::isfinite(value)) {
    const char *text = std::isnan(value) ? "nan" : value > 0 ? "inf" : "-inf";
    return fileError(path, fmt::format("{} is {} (non-finite values are "
                                       "rejected)",
                                       where, text));
  }
  char text[32];
  auto printed = std::to_chars(text, text + sizeof(text), value);
  return fileError(
      path, fmt::format("{} = {} is too large for float32", where,
                        std::string_view(
                            text, static_cast<size_t>(printed.ptr - text))));
}

Status readFolderRows(const std::string &dir, const std::string &array,
                      const ArrayRef &ref, int64_t rowBegin, int64_t rowCount,
                      void *out, const DatasetOptions &options) {
  DType xType;
  std::vector<int64_t> xShape;
  if (Status s = featureHeader(dir, xType, xShape); !s.ok())
    return s;
  int64_t n = xShape[0], f = xShape[1];
  std::string path = arrayFile(dir, ref);
  if (Status s = checkRowRange(path, array, rowBegin, rowCount, n); !s.ok())
    return s;
  switch (ref.K) {
  case ArrayRef::Features: {
    auto *dst = static_cast<float *>(out);
    size_t count = static_cast<size_t>(rowCount * f);
    if (xType == DType::Float32) {
      if (Status s = readNpyRows(path, DType::Float32, {n, f}, rowBegin,
                                 rowCount, dst);
          !s.ok())
        return s;
      if (!options.AllowNonFinite)
        for (size_t i = 0; i < count; ++i)
          if (!std::isfinite(dst[i]))
            return featureValueError(path,
                                     rowBegin + static_cast<int64_t>(i) / f,
                                     static_cast<int64_t>(i) % f, dst[i]);
      return Status::success();
    }
    std::vector<double> wide;
    try {
      wide.resize(count);
    } catch (const std::bad_alloc &) {
      return fileError(path,
                       fmt::format("out of memory reading {} rows", rowCount));
    }
    if (Status s = readNpyRows(path, DType::Float64, {n, f}, rowBegin, rowCount,
                               wide.data());
        !s.ok())
      return s;
    constexpr double kFloatOverflow = 0x1.ffffffp+127;
    for (size_t i = 0; i < count; ++i) {
      double value = wide[i];
      bool finite = std::isfinite(value);
      if ((!finite && !options.AllowNonFinite) ||
          (finite && std::fabs(value) >= kFloatOverflow))
        return featureValueError(path, rowBegin + static_cast<int64_t>(i) / f,
                                 static_cast<int64_t>(i) % f, value);
      dst[i] = static_cast<float>(value);
    }
    return Status::success();
  }
  case ArrayRef::Labels: {
    auto *dst = static_cast<int64_t *>(out);
    if (Status s =
            readNpyRows(path, DType::Int64, {n}, rowBegin, rowCount, dst);
        !s.ok())
      return s;
    for (int64_t i = 0; i < rowCount; ++i)
      if (dst[i] < 0)
        return fileError(path, fmt::format("node {}: negative label {}",
                                           rowBegin + i, dst[i]));
    return Status::success();
  }
  case ArrayRef::Mask:
    break;
  }
  return readNpyRows(path, DType::Bool, {n}, rowBegin, rowCount, out);
}

/// Whether `path` is a folder; an error when it is neither a folder nor a
/// regular file.
Status classifyPath(const std::string &path, bool &isDir) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return fileError(path, "cannot open: " + errnoText(errno));
  isDir = S_ISDIR(st.st_mode);
  if (!isDir && !S_ISREG(st.st_mode))
    return fileError(path, "not a regular file or directory");
  return Status::success();
}

} // namespace

Status gnnc::rt::datasetArrayInfo(const std::string &path,
                                  const std::string &array,
                                  DatasetArrayInfo &out) {
  ArrayRef ref;
  if (Status s = parseArrayName(path, array, ref); !s.ok())
    return s;
  bool isDir;
  if (Status s = classifyPath(path, isDir); !s.ok())
    return s;
  if (!isDir) {
    BundleFile file(path);
    if (Status s = file.open(); !s.ok())
      return s;
    out = arrayInfo(ref, static_cast<int64_t>(file.layout().N),
                    static_cast<int64_t>(file.layout().F));
    return Status::success();
  }
  DType xType;
  std::vector<int64_t> xShape;
  if (Status s = featureHeader(path, xType, xShape); !s.ok())
    return s;
  DatasetArrayInfo info = arrayInfo(ref, xShape[0], xShape[1]);
  if (ref.K != ArrayRef::Features) {
    std::string file = arrayFile(path, ref);
    DType dtype;
    std::vector<int64_t> shape;
    if (Status s = readNpyHeader(file, dtype, shape); !s.ok())
      return s;
    if (dtype != info.Dtype)
      return fileError(file,
                       fmt::format("expected dtype {}, got {}",
                                   dtypeName(info.Dtype), dtypeName(dtype)));
    if (shape != info.Shape)
      return fileError(file, fmt::format("expected shape {}, got {}",
                                         formatShape(info.Shape),
                                         formatShape(shape)));
  }
  out = std::move(info);
  return Status::success();
}

Status gnnc::rt::readDatasetRows(const std::string &path,
                                 const std::string &array, int64_t rowBegin,
                                 int64_t rowCount, void *out,
                                 const DatasetOptions &options) {
  ArrayRef ref;
  if (Status s = parseArrayName(path, array, ref); !s.ok())
    return s;
  bool isDir;
  if (Status s = classifyPath(path, isDir); !s.ok())
    return s;
  if (isDir)
    return readFolderRows(path, array, ref, rowBegin, rowCount, out, options);
  BundleFile file(path);
  if (Status s = file.open(); !s.ok())
    return s;
  if (Status s = checkRowRange(path, array, rowBegin, rowCount,
                               static_cast<int64_t>(file.layout().N));
      !s.ok())
    return s;
  try {
    switch (ref.K) {
    case ArrayRef::Features:
      return file.readFeatures(rowBegin, rowCount, static_cast<float *>(out));
    case ArrayRef::Labels:
      return file.readLabels(rowBegin, rowCount, static_cast<int64_t *>(out));
    case ArrayRef::Mask:
      break;
    }
    return file.readMask(ref.MaskIndex, rowBegin, rowCount,
                         static_cast<unsigned char *>(out));
  } catch (const std::bad_alloc &) {
    return fileError(path, fmt::format("out of memory reading {} rows of {}",
                                       rowCount, array));
  }
}
