//===- LoadersIO.h - Text reading and the cache of the loaders --*- C++ -*-===//
//
// Part of gnnc. Internal to gnnc_loaders: a buffered line reader over plain
// and gzip-compressed files, the number parsers of the text formats, and the
// converted binary cache (its file format is described in LoadersIO.cpp and
// docs/runtime.md).
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_RUNTIME_LIB_LOADERSIO_H
#define GNNC_RUNTIME_LIB_LOADERSIO_H

#include "gnnc/runtime/Loaders.h"
#include "gnnc/runtime/Status.h"

#include <cstdint>
#include <cstring>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

struct gzFile_s;

namespace gnnc::rt::detail {

/// `path:line: message`.
Status lineError(const std::string &path, int64_t line,
                 const std::string &message);

//===----------------------------------------------------------------------===//
// Reading lines
//===----------------------------------------------------------------------===//

/// Reads a text file line by line through a large buffer. A file that starts
/// with the gzip magic bytes (1f 8b) is decompressed with zlib, concatenated
/// members included; any other file is read as it is.
class LineReader {
public:
  LineReader();
  ~LineReader();
  LineReader(const LineReader &) = delete;
  LineReader &operator=(const LineReader &) = delete;

  /// Opens `path`, which must be a regular file.
  Status open(const std::string &path);

  /// The next line, without its '\n' and a '\r' before it. False at the end
  /// of the file or on an error; status() tells which.
  bool next(std::string_view &line);

  /// The error that stopped next() (a read error, corrupt or truncated
  /// compressed data), or success at the end of the file.
  const Status &status() const { return Error; }
  /// The 1-based number of the line next() returned last (0 before).
  int64_t line() const { return Line; }
  /// Whether the (decompressed) file holds no byte at all; meaningful once
  /// next() has returned false.
  bool empty() const { return TotalBytes == 0; }
  /// Whether the file is gzip-compressed.
  bool compressed() const { return Gz != nullptr; }
  /// The size of the file on disk (compressed or not).
  uint64_t fileSize() const { return FileSize; }
  const std::string &path() const { return Path; }

  /// `path:line: message` for the line next() returned last.
  Status lineError(const std::string &message) const {
    return detail::lineError(Path, Line, message);
  }

private:
  /// Reads more bytes after End; false at the end of the file or on error.
  bool fill();
  void close();

  std::string Path;
  int Fd = -1;
  gzFile_s *Gz = nullptr;
  std::vector<char> Buf;
  size_t Pos = 0, End = 0;
  bool Eof = false;
  uint64_t TotalBytes = 0;
  uint64_t FileSize = 0;
  int64_t Line = 0;
  Status Error;
};

//===----------------------------------------------------------------------===//
// Fields and numbers
//===----------------------------------------------------------------------===//

/// A space, tab, '\v', '\f' or '\r'.
inline bool isBlank(char c) {
  unsigned u = static_cast<unsigned char>(c);
  return u == ' ' || (u - 9u <= 4u && u != 10u); // '\t' .. '\r'
}

/// `text` without leading and trailing blanks.
inline std::string_view trim(std::string_view text) {
  size_t begin = 0, end = text.size();
  while (begin < end && isBlank(text[begin]))
    ++begin;
  while (end > begin && isBlank(text[end - 1]))
    --end;
  return text.substr(begin, end - begin);
}

/// Removes and returns the next blank-separated field of `rest`; empty when
/// there is none.
inline std::string_view nextField(std::string_view &rest) {
  size_t i = 0, n = rest.size();
  while (i < n && isBlank(rest[i]))
    ++i;
  size_t begin = i;
  while (i < n && !isBlank(rest[i]))
    ++i;
  std::string_view field = rest.substr(begin, i - begin);
  rest.remove_prefix(i);
  return field;
}

/// Removes and returns the next comma-separated field of `rest` (blanks
/// around it trimmed); `more` says whether a comma followed it.
inline std::string_view nextCsvField(std::string_view &rest, bool &more) {
  const void *comma = std::memchr(rest.data(), ',', rest.size());
  size_t end =
      comma
          ? static_cast<size_t>(static_cast<const char *>(comma) - rest.data())
          : rest.size();
  std::string_view field = trim(rest.substr(0, end));
  more = comma != nullptr;
  rest.remove_prefix(comma ? end + 1 : end);
  return field;
}

enum class NumberError { None, Invalid, Negative, Overflow };

/// Parses all of `text` as a decimal integer (an optional sign and
/// digits). A '-' before a nonzero value gives Negative (and the value), a
/// value beyond int64 Overflow (either sign), anything else that is not
/// such a number Invalid.
inline NumberError parseInt64(std::string_view text, int64_t &value) {
  size_t i = 0, n = text.size();
  bool negative = false;
  if (n > 0 && (text[0] == '-' || text[0] == '+')) {
    negative = text[0] == '-';
    ++i;
  }
  if (i == n)
    return NumberError::Invalid;
  uint64_t v = 0;
  if (n - i <= 18) {
    // Fewer than 19 digits cannot overflow.
    for (; i < n; ++i) {
      unsigned digit = static_cast<unsigned char>(text[i]) - '0';
      if (digit > 9)
        return NumberError::Invalid;
      v = v * 10 + digit;
    }
  } else {
    uint64_t limit = negative ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
    bool overflow = false;
    for (; i < n; ++i) {
      unsigned digit = static_cast<unsigned char>(text[i]) - '0';
      if (digit > 9)
        return NumberError::Invalid;
      if (v > (limit - digit) / 10)
        overflow = true;
      else
        v = v * 10 + digit;
    }
    if (overflow)
      return NumberError::Overflow;
  }
  if (negative && v != 0) {
    value = -static_cast<int64_t>(v - 1) - 1;
    return NumberError::Negative;
  }
  value = static_cast<int64_t>(v);
  return NumberError::None;
}

/// Parses all of `text` as a float (decimal or scientific notation, an
/// optional sign, "nan", "inf"), rounded to the nearest float32; a value
/// below the smallest subnormal becomes zero. A finite value too large for
/// float32 gives Overflow, anything else that is not a number Invalid.
NumberError parseFloat(std::string_view text, float &value);

/// `'text'`, cut to 40 characters, for messages.
std::string quoted(std::string_view text);

//===----------------------------------------------------------------------===//
// The converted binary cache
//===----------------------------------------------------------------------===//

/// What the cache records of one source file.
struct SourceStamp {
  /// The file as the cache names it (relative to the cache's folder).
  std::string Name;
  uint64_t Size = 0;
  /// Modification time in nanoseconds since the epoch.
  int64_t MtimeNs = 0;
  uint64_t Inode = 0;
};

/// Stats `path` (a regular file) into `out`, recorded under `name`.
Status stampSource(const std::string &path, const std::string &name,
                   SourceStamp &out);

/// What a cache's content depends on: the loader (Kind), its options as a
/// string, and the source files.
struct CacheKey {
  uint32_t Kind = 0;
  std::string Options;
  std::vector<SourceStamp> Sources;
};

enum CacheKind : uint32_t {
  kCacheSnap = 1,
  kCacheMatrixMarket = 2,
  kCacheOgbNode = 3,
};

/// Whether every source of `key` is old enough that a later change gives it
/// another modification time (else `why`).
bool sourcesSettled(const CacheKey &key, std::string &why);

/// Writes `payload` as the cache file `path` for `key`: to a temporary file
/// beside it, renamed over `path`. False with `why` when it cannot.
bool writeCache(const std::string &path, const CacheKey &key,
                const std::vector<unsigned char> &payload, std::string &why);

/// Appends little-endian values to a byte vector.
class ByteWriter {
public:
  template <class T> void put(T value) { putArray(&value, 1); }
  template <class T> void putArray(const T *data, size_t count) {
    static_assert(std::is_trivially_copyable_v<T>);
    if (count == 0)
      return;
    size_t at = Bytes.size();
    Bytes.resize(at + count * sizeof(T));
    std::memcpy(Bytes.data() + at, data, count * sizeof(T));
  }
  /// Appends `size` bytes and returns where they start, to be written.
  unsigned char *append(size_t size) {
    size_t at = Bytes.size();
    Bytes.resize(at + size);
    return Bytes.data() + at;
  }
  void reserve(size_t size) { Bytes.reserve(size); }
  std::vector<unsigned char> &bytes() { return Bytes; }

private:
  std::vector<unsigned char> Bytes;
};

/// Reads little-endian values from a byte range; every read is checked.
class ByteReader {
public:
  ByteReader(const unsigned char *data, size_t size) : Data(data), Size(size) {}
  template <class T> bool get(T &value) { return getArray(&value, 1); }
  template <class T> bool getArray(T *out, size_t count) {
    static_assert(std::is_trivially_copyable_v<T>);
    if (count > (Size - Pos) / sizeof(T))
      return false;
    if (count > 0)
      std::memcpy(out, Data + Pos, count * sizeof(T));
    Pos += count * sizeof(T);
    return true;
  }
  /// The next `size` bytes (then skipped), or null when fewer remain.
  const unsigned char *take(size_t size) {
    if (size > Size - Pos)
      return nullptr;
    const unsigned char *p = Data + Pos;
    Pos += size;
    return p;
  }
  size_t remaining() const { return Size - Pos; }

private:
  const unsigned char *Data;
  size_t Size;
  size_t Pos = 0;
};

/// Appends `count` vertex ids, each below 2^32, as uint32.
inline void putIds32(ByteWriter &w, const int64_t *ids, size_t count) {
  unsigned char *p = w.append(count * sizeof(uint32_t));
  for (size_t i = 0; i < count; ++i) {
    uint32_t v = static_cast<uint32_t>(ids[i]);
    std::memcpy(p + i * sizeof(v), &v, sizeof(v));
  }
}

/// Reads `count` uint32 ids into `out`; false when fewer bytes remain.
inline bool getIds32(ByteReader &r, size_t count, std::vector<int64_t> &out) {
  if (count > r.remaining() / sizeof(uint32_t))
    return false;
  const unsigned char *p = r.take(count * sizeof(uint32_t));
  out.resize(count);
  for (size_t i = 0; i < count; ++i) {
    uint32_t v;
    std::memcpy(&v, p + i * sizeof(v), sizeof(v));
    out[i] = v;
  }
  return true;
}

/// The content of a cache file: its bytes, of which the payload is
/// [Offset, Offset + Size).
struct CacheContent {
  std::vector<unsigned char> Bytes;
  size_t Offset = 0, Size = 0;

  ByteReader payload() const;
};

/// Reads the cache file `path` into `out` when it is a cache of this format
/// version for exactly `key`, complete and with a matching checksum. Else
/// false with `why` (empty when there is no such file).
bool readCache(const std::string &path, const CacheKey &key, CacheContent &out,
               std::string &why);

/// Runs a load through the cache: `info` is filled in; the cache at
/// `cachePath` is used when `options.Read` and it is valid for `key` and
/// `decode(payload, result)` accepts it; else `parse(result)` reads the
/// sources and, with `options.Write`, `encode(result, writer)` gives the
/// payload written to the cache.
template <class T, class Parse, class Decode, class Encode>
Status loadThroughCache(const std::string &cachePath,
                        const CacheOptions &options, const CacheKey &key,
                        LoadInfo *info, T &result, Parse parse, Decode decode,
                        Encode encode) {
  LoadInfo local;
  LoadInfo &li = info ? *info : local;
  li = LoadInfo();
  if (options.Read || options.Write)
    li.CachePath = cachePath;
  if (options.Read) {
    CacheContent content;
    std::string why;
    if (readCache(cachePath, key, content, why)) {
      bool decoded = false;
      try {
        ByteReader payload = content.payload();
        decoded = decode(payload, result);
      } catch (const std::bad_alloc &) {
        decoded = false;
      }
      if (decoded) {
        li.Source = LoadSource::Cache;
        return Status::success();
      }
      li.CacheRejected = "corrupt: its content is inconsistent";
    } else {
      li.CacheRejected = why;
    }
  }
  if (Status s = parse(result); !s.ok())
    return s;
  if (!options.Write)
    return Status::success();
  std::string why;
  if (!sourcesSettled(key, why)) {
    li.CacheNotWritten = why;
    return Status::success();
  }
  try {
    ByteWriter writer;
    encode(result, writer);
    li.CacheWritten = writeCache(cachePath, key, writer.bytes(), why);
  } catch (const std::bad_alloc &) {
    why = "out of memory encoding the cache";
  }
  if (!li.CacheWritten)
    li.CacheNotWritten = why;
  return Status::success();
}

} // namespace gnnc::rt::detail

#endif // GNNC_RUNTIME_LIB_LOADERSIO_H
