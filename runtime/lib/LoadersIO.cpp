//===- LoadersIO.cpp - Text reading and the cache of the loaders ----------===//
//
// Part of gnnc. The cache file (all numbers little-endian):
//
//   offset  size
//   0       8     magic "GNNCLDCH"
//   8       4     format version (kCacheVersion)
//   12      4     loader kind (CacheKind)
//   16      8     header size H: the offset of the payload
//   24      8     payload size P
//   32      4+n   the loader's options: length, then the text
//           4     the number of source files, then for each: name length
//                 (4), name, size (8), modification time in ns (8), inode
//                 (8)
//   H       P     the payload (the converted graph or dataset)
//   H+P     8     checksum: a 64-bit hash of the payload seeded with the
//                 hash of the header
//
// The file must be exactly H + P + 8 bytes. The hash is XXH64's
// construction (four lanes of multiply-rotate rounds over 32-byte stripes),
// fast enough that checking a cache costs little next to reading it.
//
//===----------------------------------------------------------------------===//

#include "LoadersIO.h"

#include "FileUtil.h"

#include <fmt/format.h>

#include <zlib.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <ctime>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "gnnc_loaders assumes a little-endian host"
#endif

using namespace gnnc::rt;
using namespace gnnc::rt::detail;

namespace {

constexpr size_t kInitialBuffer = size_t{1} << 20;
constexpr size_t kMaxLine = size_t{1} << 28;
constexpr unsigned kGzipBuffer = 1u << 18;

constexpr unsigned char kCacheMagic[8] = {'G', 'N', 'N', 'C',
                                          'L', 'D', 'C', 'H'};
constexpr uint32_t kCacheVersion = 1;
/// A source modified less than this long before a cache of it would be
/// written is not cached: an edit within the same timestamp tick (up to 2 s
/// on some file systems) could leave its stamp unchanged.
constexpr int64_t kSettleNs = 2'000'000'000;

//===----------------------------------------------------------------------===//
// Hashing
//===----------------------------------------------------------------------===//

constexpr uint64_t kP1 = 0x9E3779B185EBCA87ull;
constexpr uint64_t kP2 = 0xC2B2AE3D27D4EB4Full;
constexpr uint64_t kP3 = 0x165667B19E3779F9ull;
constexpr uint64_t kP4 = 0x85EBCA77C2B2AE63ull;
constexpr uint64_t kP5 = 0x27D4EB2F165667C5ull;

inline uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
inline uint64_t load64(const unsigned char *p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline uint32_t load32(const unsigned char *p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline uint64_t round64(uint64_t acc, uint64_t input) {
  acc += input * kP2;
  acc = rotl(acc, 31);
  return acc * kP1;
}
inline uint64_t mergeRound(uint64_t acc, uint64_t value) {
  acc ^= round64(0, value);
  return acc * kP1 + kP4;
}

uint64_t hash64(const unsigned char *p, size_t size, uint64_t seed) {
  const unsigned char *end = p + size;
  uint64_t h;
  if (size >= 32) {
    uint64_t v1 = seed + kP1 + kP2, v2 = seed + kP2, v3 = seed, v4 = seed - kP1;
    const unsigned char *limit = end - 32;
    do {
      v1 = round64(v1, load64(p));
      v2 = round64(v2, load64(p + 8));
      v3 = round64(v3, load64(p + 16));
      v4 = round64(v4, load64(p + 24));
      p += 32;
    } while (p <= limit);
    h = rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18);
    h = mergeRound(h, v1);
    h = mergeRound(h, v2);
    h = mergeRound(h, v3);
    h = mergeRound(h, v4);
  } else {
    h = seed + kP5;
  }
  h += static_cast<uint64_t>(size);
  for (; p + 8 <= end; p += 8)
    h = rotl(h ^ round64(0, load64(p)), 27) * kP1 + kP4;
  if (p + 4 <= end) {
    h = rotl(h ^ (static_cast<uint64_t>(load32(p)) * kP1), 23) * kP2 + kP3;
    p += 4;
  }
  for (; p < end; ++p)
    h = rotl(h ^ (*p * kP5), 11) * kP1;
  h ^= h >> 33;
  h *= kP2;
  h ^= h >> 29;
  h *= kP3;
  h ^= h >> 32;
  return h;
}

/// gzerror's text without the "<fd:N>: " that gzdopen'ed files get.
std::string zlibMessage(const char *text) {
  std::string_view message = text && *text ? text : "zlib error";
  if (message.substr(0, 4) == "<fd:") {
    size_t colon = message.find(": ");
    if (colon != std::string_view::npos)
      message.remove_prefix(colon + 2);
  }
  return std::string(message);
}

int64_t nowNs() {
  struct timespec ts;
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

} // namespace

Status gnnc::rt::detail::lineError(const std::string &path, int64_t line,
                                   const std::string &message) {
  return Status::error(fmt::format("{}:{}: {}", path, line, message));
}

//===----------------------------------------------------------------------===//
// LineReader
//===----------------------------------------------------------------------===//

LineReader::LineReader() = default;
LineReader::~LineReader() { close(); }

void LineReader::close() {
  if (Gz)
    ::gzclose(Gz);
  else if (Fd >= 0)
    ::close(Fd);
  Gz = nullptr;
  Fd = -1;
}

Status LineReader::open(const std::string &path) {
  close();
  Path = path;
  Pos = End = 0;
  Eof = false;
  TotalBytes = 0;
  Line = 0;
  Error = Status::success();
  // Checked before opening, so that a FIFO never blocks in open().
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return fileError(path, "cannot open file: " + errnoText(errno));
  if (!S_ISREG(st.st_mode))
    return fileError(path, "not a regular file");
  FileSize = static_cast<uint64_t>(st.st_size);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return fileError(path, "cannot open file: " + errnoText(errno));
  unsigned char magic[2] = {0, 0};
  ssize_t n;
  do
    n = ::pread(fd, magic, sizeof(magic), 0);
  while (n < 0 && errno == EINTR);
  if (n < 0) {
    int err = errno;
    ::close(fd);
    return fileError(path, "read error: " + errnoText(err));
  }
  if (n == 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
    Gz = ::gzdopen(fd, "rb");
    if (!Gz) {
      ::close(fd);
      return fileError(path, "out of memory opening the compressed file");
    }
    ::gzbuffer(Gz, kGzipBuffer);
  } else {
    Fd = fd;
  }
  try {
    // A small plain file needs no more than its size (the buffer grows for
    // long lines).
    Buf.resize(Gz ? kInitialBuffer / 4
                  : static_cast<size_t>(std::clamp<uint64_t>(FileSize + 1, 4096,
                                                             kInitialBuffer)));
  } catch (const std::bad_alloc &) {
    close();
    return fileError(path, "out of memory");
  }
  return Status::success();
}

bool LineReader::fill() {
  if (Eof || !Error.ok())
    return false;
  if (Pos > 0) {
    std::memmove(Buf.data(), Buf.data() + Pos, End - Pos);
    End -= Pos;
    Pos = 0;
  }
  if (End == Buf.size()) {
    if (Buf.size() >= kMaxLine) {
      Error = detail::lineError(Path, Line + 1, "line is longer than 256 MiB");
      return false;
    }
    try {
      Buf.resize(Buf.size() * 2);
    } catch (const std::bad_alloc &) {
      Error = detail::lineError(Path, Line + 1, "out of memory reading line");
      return false;
    }
  }
  size_t room = Buf.size() - End;
  if (Gz) {
    int n = ::gzread(Gz, Buf.data() + End,
                     static_cast<unsigned>(std::min<size_t>(room, INT_MAX)));
    int err = Z_OK;
    const char *text = ::gzerror(Gz, &err);
    if (n < 0 || (err != Z_OK && err != Z_BUF_ERROR)) {
      if (err == Z_ERRNO)
        Error = fileError(Path, "read error: " + errnoText(errno));
      else if (err == Z_MEM_ERROR)
        Error = fileError(Path, "out of memory decompressing");
      else
        Error = fileError(Path, fmt::format("corrupt compressed data ({})",
                                            zlibMessage(text)));
      return false;
    }
    if (n == 0) {
      if (err == Z_BUF_ERROR) {
        Error = fileError(Path, "unexpected end of compressed data (the "
                                "file is truncated)");
        return false;
      }
      Eof = true;
      return false;
    }
    End += static_cast<size_t>(n);
    TotalBytes += static_cast<uint64_t>(n);
    return true;
  }
  ssize_t n;
  do
    n = ::read(Fd, Buf.data() + End, room);
  while (n < 0 && errno == EINTR);
  if (n < 0) {
    Error = fileError(Path, "read error: " + errnoText(errno));
    return false;
  }
  if (n == 0) {
    Eof = true;
    return false;
  }
  End += static_cast<size_t>(n);
  TotalBytes += static_cast<uint64_t>(n);
  return true;
}

bool LineReader::next(std::string_view &line) {
  for (;;) {
    const char *begin = Buf.data() + Pos;
    const void *newline =
        End > Pos ? std::memchr(begin, '\n', End - Pos) : nullptr;
    size_t length;
    if (newline) {
      length = static_cast<size_t>(static_cast<const char *>(newline) - begin);
      Pos += length + 1;
    } else if (fill()) {
      continue;
    } else if (Error.ok() && Pos < End) {
      // The last line, without a newline.
      begin = Buf.data() + Pos;
      length = End - Pos;
      Pos = End;
    } else {
      return false;
    }
    ++Line;
    if (length > 0 && begin[length - 1] == '\r')
      --length;
    line = std::string_view(begin, length);
    return true;
  }
}

//===----------------------------------------------------------------------===//
// Numbers
//===----------------------------------------------------------------------===//

NumberError gnnc::rt::detail::parseFloat(std::string_view text, float &value) {
  const char *begin = text.data(), *end = begin + text.size();
  if (begin != end && *begin == '+') {
    ++begin;
    if (begin != end && (*begin == '+' || *begin == '-'))
      return NumberError::Invalid;
  }
  if (begin == end)
    return NumberError::Invalid;
  float f;
  auto result = std::from_chars(begin, end, f);
  if (result.ptr != end)
    return NumberError::Invalid;
  if (result.ec == std::errc()) {
    value = f;
    return NumberError::None;
  }
  if (result.ec != std::errc::result_out_of_range)
    return NumberError::Invalid;
  // Too large or too small for float32: tell the two apart in double.
  std::string copy(begin, end);
  errno = 0;
  double d = std::strtod(copy.c_str(), nullptr);
  if (std::isinf(d) || std::fabs(d) >= 0x1.ffffffp+127)
    return NumberError::Overflow;
  value = static_cast<float>(d);
  return NumberError::None;
}

std::string gnnc::rt::detail::quoted(std::string_view text) {
  constexpr size_t kMax = 40;
  std::string out = "'";
  for (size_t i = 0; i < text.size() && i < kMax; ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\')
      out += static_cast<char>(c);
    else
      out += fmt::format("\\x{:02x}", c);
  }
  if (text.size() > kMax)
    out += "...";
  return out + "'";
}

//===----------------------------------------------------------------------===//
// The cache
//===----------------------------------------------------------------------===//

Status gnnc::rt::detail::stampSource(const std::string &path,
                                     const std::string &name,
                                     SourceStamp &out) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0)
    return fileError(path, "cannot open file: " + errnoText(errno));
  if (!S_ISREG(st.st_mode))
    return fileError(path, "not a regular file");
  out.Name = name;
  out.Size = static_cast<uint64_t>(st.st_size);
  out.MtimeNs = static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 +
                st.st_mtim.tv_nsec;
  out.Inode = static_cast<uint64_t>(st.st_ino);
  return Status::success();
}

ByteReader CacheContent::payload() const {
  return ByteReader(Bytes.data() + Offset, Size);
}

namespace {

/// The header of a cache for `key` with a payload of `payloadSize` bytes.
std::vector<unsigned char> cacheHeader(const CacheKey &key,
                                       uint64_t payloadSize) {
  ByteWriter w;
  w.putArray(kCacheMagic, sizeof(kCacheMagic));
  w.put<uint32_t>(kCacheVersion);
  w.put<uint32_t>(key.Kind);
  w.put<uint64_t>(0); // header size, patched below
  w.put<uint64_t>(payloadSize);
  w.put<uint32_t>(static_cast<uint32_t>(key.Options.size()));
  w.putArray(key.Options.data(), key.Options.size());
  w.put<uint32_t>(static_cast<uint32_t>(key.Sources.size()));
  for (const SourceStamp &s : key.Sources) {
    w.put<uint32_t>(static_cast<uint32_t>(s.Name.size()));
    w.putArray(s.Name.data(), s.Name.size());
    w.put<uint64_t>(s.Size);
    w.put<int64_t>(s.MtimeNs);
    w.put<uint64_t>(s.Inode);
  }
  std::vector<unsigned char> bytes = std::move(w.bytes());
  uint64_t size = bytes.size();
  std::memcpy(bytes.data() + 16, &size, sizeof(size));
  return bytes;
}

/// Reads exactly `size` bytes at `offset`.
bool readAt(int fd, uint64_t offset, unsigned char *out, size_t size) {
  while (size > 0) {
    ssize_t n = ::pread(fd, out, size, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    out += n;
    offset += static_cast<uint64_t>(n);
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool writeAll(int fd, const unsigned char *data, size_t size) {
  while (size > 0) {
    ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

/// Compares the header of a cache file (`h`, the first `size` bytes) with
/// what `key` expects; false with `why` when they differ.
bool checkHeader(const unsigned char *h, size_t size, uint64_t fileSize,
                 const CacheKey &key, uint64_t &headerSize,
                 uint64_t &payloadSize, std::string &why) {
  ByteReader r(h, size);
  unsigned char magic[8];
  uint32_t version = 0, kind = 0;
  if (!r.getArray(magic, 8) ||
      std::memcmp(magic, kCacheMagic, sizeof(magic)) != 0) {
    why = "corrupt: not a gnnc cache file";
    return false;
  }
  if (!r.get(version) || !r.get(kind) || !r.get(headerSize) ||
      !r.get(payloadSize)) {
    why = "corrupt: truncated header";
    return false;
  }
  if (version != kCacheVersion) {
    why = fmt::format("stale: format version {} (this library writes {})",
                      version, kCacheVersion);
    return false;
  }
  if (kind != key.Kind) {
    why = "stale: written by another loader";
    return false;
  }
  if (headerSize > fileSize || payloadSize > fileSize - headerSize ||
      fileSize - headerSize - payloadSize != 8) {
    why = fmt::format("corrupt: {} bytes, but the header announces {} + {} "
                      "+ 8",
                      fileSize, headerSize, payloadSize);
    return false;
  }
  uint32_t length = 0;
  std::string options;
  if (!r.get(length) || length > r.remaining()) {
    why = "corrupt: truncated header";
    return false;
  }
  options.resize(length);
  r.getArray(options.data(), length);
  if (options != key.Options) {
    why = "stale: written with other options";
    return false;
  }
  uint32_t count = 0;
  if (!r.get(count)) {
    why = "corrupt: truncated header";
    return false;
  }
  if (count != key.Sources.size()) {
    why = "stale: made from other source files";
    return false;
  }
  for (const SourceStamp &want : key.Sources) {
    SourceStamp got;
    if (!r.get(length) || length > r.remaining()) {
      why = "corrupt: truncated header";
      return false;
    }
    got.Name.resize(length);
    r.getArray(got.Name.data(), length);
    if (!r.get(got.Size) || !r.get(got.MtimeNs) || !r.get(got.Inode)) {
      why = "corrupt: truncated header";
      return false;
    }
    if (got.Name != want.Name) {
      why = "stale: made from other source files";
      return false;
    }
    if (got.Size != want.Size || got.MtimeNs != want.MtimeNs ||
        got.Inode != want.Inode) {
      why = fmt::format("stale: {} has changed", want.Name);
      return false;
    }
  }
  if (size - r.remaining() != headerSize) {
    why = "corrupt: header size mismatch";
    return false;
  }
  return true;
}

} // namespace

bool gnnc::rt::detail::readCache(const std::string &path, const CacheKey &key,
                                 CacheContent &out, std::string &why) {
  why.clear();
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno != ENOENT)
      why = "cannot open: " + errnoText(errno);
    return false;
  }
  if (!S_ISREG(st.st_mode)) {
    why = "not a regular file";
    return false;
  }
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    why = "cannot open: " + errnoText(errno);
    return false;
  }
  struct Closer {
    int Fd;
    ~Closer() { ::close(Fd); }
  } closer{fd};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    why = "not a regular file";
    return false;
  }
  uint64_t fileSize = static_cast<uint64_t>(st.st_size);
  std::vector<unsigned char> expected = cacheHeader(key, 0);
  // The header is as long as the one `key` gives, unless it is stale.
  size_t first =
      static_cast<size_t>(std::min<uint64_t>(fileSize, expected.size() + 4096));
  std::vector<unsigned char> head(first);
  if (!readAt(fd, 0, head.data(), first)) {
    why = "corrupt: read error or truncated";
    return false;
  }
  uint64_t headerSize = 0, payloadSize = 0;
  if (!checkHeader(head.data(), first, fileSize, key, headerSize, payloadSize,
                   why))
    return false;
  if (fileSize > SIZE_MAX / 2) {
    why = "too large";
    return false;
  }
  std::vector<unsigned char> bytes;
  try {
    bytes.resize(static_cast<size_t>(fileSize));
  } catch (const std::bad_alloc &) {
    why = "out of memory reading it";
    return false;
  }
  if (!readAt(fd, 0, bytes.data(), bytes.size())) {
    why = "corrupt: read error or truncated";
    return false;
  }
  size_t h = static_cast<size_t>(headerSize),
         p = static_cast<size_t>(payloadSize);
  uint64_t stored;
  std::memcpy(&stored, bytes.data() + h + p, sizeof(stored));
  uint64_t computed = hash64(bytes.data() + h, p, hash64(bytes.data(), h, 0));
  if (stored != computed) {
    why = "corrupt: checksum mismatch";
    return false;
  }
  out.Bytes = std::move(bytes);
  out.Offset = h;
  out.Size = p;
  return true;
}

bool gnnc::rt::detail::sourcesSettled(const CacheKey &key, std::string &why) {
  int64_t now = nowNs();
  for (const SourceStamp &s : key.Sources) {
    if (now - s.MtimeNs < kSettleNs) {
      why = fmt::format("{} was modified less than 2 seconds ago, too "
                        "recently for its timestamp to reveal a later change",
                        s.Name);
      return false;
    }
  }
  return true;
}

bool gnnc::rt::detail::writeCache(const std::string &path, const CacheKey &key,
                                  const std::vector<unsigned char> &payload,
                                  std::string &why) {
  static std::atomic<uint64_t> counter{0};
  std::vector<unsigned char> header = cacheHeader(key, payload.size());
  uint64_t checksum = hash64(payload.data(), payload.size(),
                             hash64(header.data(), header.size(), 0));
  std::string temp;
  int fd = -1;
  for (int attempt = 0; attempt < 8 && fd < 0; ++attempt) {
    temp = fmt::format("{}.tmp.{}.{}", path, ::getpid(), counter++);
    fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST)
      break;
  }
  if (fd < 0) {
    why = fmt::format("cannot create {}: {}", temp, errnoText(errno));
    return false;
  }
  bool ok = writeAll(fd, header.data(), header.size()) &&
            writeAll(fd, payload.data(), payload.size()) &&
            writeAll(fd, reinterpret_cast<const unsigned char *>(&checksum),
                     sizeof(checksum));
  int err = errno;
  if (::close(fd) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (ok && ::rename(temp.c_str(), path.c_str()) != 0) {
    why =
        fmt::format("cannot rename {} to {}: {}", temp, path, errnoText(errno));
    ::unlink(temp.c_str());
    return false;
  }
  if (!ok) {
    why = fmt::format("cannot write {}: {}", temp, errnoText(err));
    ::unlink(temp.c_str());
    return false;
  }
  return true;
}
