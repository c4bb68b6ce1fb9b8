//===- Npy.cpp - Reading and writing NumPy .npy files ---------------------===//
//
// Part of gnnc. The reader never trusts the file: every length is checked
// against the real file size before anything is allocated or read, and the
// header dict is parsed as the small Python literal it is
// (`{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }`). A
// Fortran-order array is transposed into C order after it is read.
//
//===----------------------------------------------------------------------===//

#include "gnnc/runtime/Npy.h"

#include "FileUtil.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <new>
#include <optional>
#include <stdexcept>
#include <string_view>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "gnnc_runtime assumes a little-endian host"
#endif

using namespace gnnc::rt;

namespace {

constexpr unsigned char kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
/// NumPy aligns the start of the data to this many bytes.
constexpr size_t kArrayAlign = 64;
/// NumPy leaves room in the header so that the first (C order) dimension can
/// grow to this many digits in place.
constexpr size_t kGrowthAxisMaxDigits = 21;
/// More dimensions than any real file has (NumPy allows 64).
constexpr size_t kMaxRank = 64;

using detail::errnoText;
using detail::fileError;

/// Multiplies two non-negative values; nullopt on int64 overflow.
std::optional<int64_t> checkedMul(int64_t a, int64_t b) {
  int64_t result;
  if (__builtin_mul_overflow(a, b, &result))
    return std::nullopt;
  return result;
}

/// Number of elements of a shape with non-negative entries; nullopt on
/// overflow. A zero dimension makes the product zero whatever the others are.
std::optional<int64_t> elementCount(const std::vector<int64_t> &shape) {
  for (int64_t dim : shape)
    if (dim == 0)
      return 0;
  int64_t count = 1;
  for (int64_t dim : shape) {
    std::optional<int64_t> next = checkedMul(count, dim);
    if (!next)
      return std::nullopt;
    count = *next;
  }
  return count;
}

/// "2708x1433 float32 (15522256 bytes)".
std::string describeData(const std::vector<int64_t> &shape, DType dtype,
                         int64_t numBytes) {
  return fmt::format("{} {} ({} bytes)", formatShape(shape), dtypeName(dtype),
                     numBytes);
}

//===----------------------------------------------------------------------===//
// Header dict parser
//===----------------------------------------------------------------------===//

/// What the header dict says.
struct Header {
  DType dtype = DType::Float32;
  std::vector<int64_t> shape;
  /// The data is in Fortran order (column-major: the first index varies
  /// fastest).
  bool fortranOrder = false;
};

/// Parses the Python dict literal of a .npy header. Errors are returned as
/// messages without the file name.
class HeaderParser {
public:
  explicit HeaderParser(std::string_view text) : Text(text) {}

  Status parse(Header &out) {
    bool sawDescr = false, sawOrder = false, sawShape = false;
    std::string descr;
    skipSpace();
    if (!consume('{'))
      return malformed("expected '{'");
    while (true) {
      skipSpace();
      if (consume('}'))
        break;
      std::string key;
      if (Status s = parseString(key, "a key"); !s.ok())
        return s;
      skipSpace();
      if (!consume(':'))
        return malformed(fmt::format("expected ':' after key '{}'", key));
      skipSpace();
      bool *seen = key == "descr"           ? &sawDescr
                   : key == "fortran_order" ? &sawOrder
                   : key == "shape"         ? &sawShape
                                            : nullptr;
      if (!seen)
        return Status::error(
            fmt::format("malformed header: unexpected key '{}' (expected "
                        "'descr', 'fortran_order' and 'shape')",
                        key));
      if (*seen)
        return Status::error(
            fmt::format("malformed header: duplicate key '{}'", key));
      *seen = true;
      Status s = seen == &sawDescr   ? parseDescr(descr)
                 : seen == &sawOrder ? parseBool(out.fortranOrder, key)
                                     : parseShape(out.shape);
      if (!s.ok())
        return s;
      skipSpace();
      if (consume(','))
        continue;
      skipSpace();
      if (consume('}'))
        break;
      return malformed(
          fmt::format("expected ',' or '}}' after the value of '{}'", key));
    }
    skipSpace();
    if (Pos != Text.size())
      return malformed("unexpected text after '}'");
    for (auto [seen, name] :
         {std::pair{sawDescr, "descr"}, std::pair{sawOrder, "fortran_order"},
          std::pair{sawShape, "shape"}})
      if (!seen)
        return Status::error(
            fmt::format("malformed header: missing key '{}'", name));

    return checkDescr(descr, out.dtype);
  }

private:
  Status malformed(const std::string &what) const {
    return Status::error(
        fmt::format("malformed header: {} at offset {}", what, Pos));
  }

  bool atEnd() const { return Pos >= Text.size(); }
  char peek() const { return atEnd() ? '\0' : Text[Pos]; }
  bool consume(char c) {
    if (atEnd() || Text[Pos] != c)
      return false;
    ++Pos;
    return true;
  }
  void skipSpace() {
    while (!atEnd() && (Text[Pos] == ' ' || Text[Pos] == '\t' ||
                        Text[Pos] == '\n' || Text[Pos] == '\r'))
      ++Pos;
  }

  /// A Python string literal in single or double quotes, without escapes.
  Status parseString(std::string &out, const char *what) {
    char quote = peek();
    if (quote != '\'' && quote != '"')
      return malformed(fmt::format("expected {} in quotes", what));
    size_t start = ++Pos;
    while (!atEnd() && Text[Pos] != quote) {
      unsigned char c = static_cast<unsigned char>(Text[Pos]);
      if (c == '\\')
        return malformed("escape sequences in strings are not supported");
      if (c < 0x20 || c >= 0x7f)
        return malformed("unexpected character in string");
      ++Pos;
    }
    if (atEnd())
      return malformed("unterminated string");
    out = std::string(Text.substr(start, Pos - start));
    ++Pos;
    return Status::success();
  }

  Status parseDescr(std::string &out) {
    if (peek() == '[' || peek() == '{')
      return Status::error(
          "structured dtypes are not supported (descr is not a string)");
    return parseString(out, "the 'descr' string");
  }

  /// True or False.
  Status parseBool(bool &out, const std::string &key) {
    std::string_view rest = Text.substr(Pos);
    auto isWord = [&](std::string_view word) {
      if (rest.substr(0, word.size()) != word)
        return false;
      if (rest.size() > word.size()) {
        unsigned char next = static_cast<unsigned char>(rest[word.size()]);
        if (std::isalnum(next) || next == '_')
          return false;
      }
      return true;
    };
    if (isWord("True")) {
      out = true;
      Pos += 4;
      return Status::success();
    }
    if (isWord("False")) {
      out = false;
      Pos += 5;
      return Status::success();
    }
    return malformed(fmt::format("expected True or False for '{}'", key));
  }

  /// A non-negative decimal integer, with an optional Python 2 'L' suffix.
  Status parseDim(int64_t &out) {
    if (peek() == '-') {
      size_t start = Pos++;
      while (std::isdigit(static_cast<unsigned char>(peek())))
        ++Pos;
      return Status::error(fmt::format("negative dimension {} in shape",
                                       Text.substr(start, Pos - start)));
    }
    if (!std::isdigit(static_cast<unsigned char>(peek())))
      return malformed("expected an integer in 'shape'");
    int64_t value = 0;
    size_t start = Pos;
    while (std::isdigit(static_cast<unsigned char>(peek()))) {
      int digit = Text[Pos] - '0';
      if (value > (std::numeric_limits<int64_t>::max() - digit) / 10) {
        while (std::isdigit(static_cast<unsigned char>(peek())))
          ++Pos;
        return Status::error(
            fmt::format("dimension {} in shape does not fit in 64 bits",
                        Text.substr(start, Pos - start)));
      }
      value = value * 10 + digit;
      ++Pos;
    }
    if (peek() == 'L')
      ++Pos;
    if (std::isalnum(static_cast<unsigned char>(peek())) || peek() == '_' ||
        peek() == '.')
      return malformed("expected an integer in 'shape'");
    out = value;
    return Status::success();
  }

  /// A tuple of integers: (), (n,), (a, b) or (a, b,).
  Status parseShape(std::vector<int64_t> &out) {
    if (!consume('('))
      return malformed("expected a tuple for 'shape'");
    out.clear();
    bool sawComma = false;
    while (true) {
      skipSpace();
      if (consume(')'))
        break;
      if (out.size() >= kMaxRank)
        return Status::error(
            fmt::format("shape has more than {} dimensions", kMaxRank));
      int64_t dim;
      if (Status s = parseDim(dim); !s.ok())
        return s;
      out.push_back(dim);
      skipSpace();
      if (consume(',')) {
        sawComma = true;
        continue;
      }
      if (consume(')'))
        break;
      return malformed("expected ',' or ')' in 'shape'");
    }
    // `(5)` is a parenthesised integer in Python, not a tuple.
    if (out.size() == 1 && !sawComma)
      return Status::error("malformed header: 'shape' is not a tuple (a 1-d "
                           "shape is written (n,))");
    return Status::success();
  }

  static Status checkDescr(const std::string &descr, DType &out) {
    static const std::pair<const char *, DType> supported[] = {
        {"<f4", DType::Float32}, {"<f8", DType::Float64}, {"<i4", DType::Int32},
        {"<i8", DType::Int64},   {"|b1", DType::Bool},
    };
    for (const auto &[name, dtype] : supported) {
      if (descr == name) {
        out = dtype;
        return Status::success();
      }
    }
    if (!descr.empty() && descr[0] == '>')
      return Status::error(fmt::format(
          "big-endian dtype '{}' is not supported; save a little-endian array",
          descr));
    return Status::error(fmt::format(
        "unsupported dtype '{}' (supported: '<f4', '<f8', '<i4', '<i8', '|b1')",
        descr));
  }

  std::string_view Text;
  size_t Pos = 0;
};

//===----------------------------------------------------------------------===//
// Reading
//===----------------------------------------------------------------------===//

/// Copies the `count` elements of a Fortran-order array of `shape` (every
/// dimension at least 1) from `in` to `out` in C order; Size is the size of
/// an element in bytes.
template <size_t Size>
void fortranToC(const std::vector<int64_t> &shape, int64_t count,
                const unsigned char *in, unsigned char *out) {
  size_t rank = shape.size();
  // Strides of the Fortran layout, in elements: the first axis is
  // contiguous. They are at most `count`, so they cannot overflow.
  std::vector<int64_t> stride(rank), index(rank, 0);
  int64_t step = 1;
  for (size_t d = 0; d < rank; ++d) {
    stride[d] = step;
    step *= shape[d];
  }
  int64_t from = 0;
  for (int64_t i = 0; i < count; ++i) {
    std::memcpy(out + i * Size, in + from * Size, Size);
    // The next index in C order: the last axis varies fastest.
    for (size_t d = rank; d-- > 0;) {
      if (++index[d] < shape[d]) {
        from += stride[d];
        break;
      }
      index[d] = 0;
      from -= stride[d] * (shape[d] - 1);
    }
  }
}

/// An open .npy file whose header has been read and validated.
class NpyReader {
public:
  ~NpyReader() {
    if (File)
      std::fclose(File);
  }

  /// Opens `path` and validates everything up to and including the data
  /// size; leaves the stream positioned at the first data byte.
  Status open(const std::string &path) {
    Path = path;
    File = std::fopen(path.c_str(), "rb");
    if (!File)
      return fileError(path, "cannot open file: " + errnoText(errno));
    struct stat st;
    if (::fstat(::fileno(File), &st) != 0)
      return fileError(path, "cannot stat file: " + errnoText(errno));
    if (!S_ISREG(st.st_mode))
      return fileError(path, "not a regular file");
    int64_t fileSize = static_cast<int64_t>(st.st_size);

    // Magic string and version.
    unsigned char preamble[12];
    size_t preambleRead =
        static_cast<size_t>(std::min<int64_t>(fileSize, sizeof(preamble)));
    if (Status s = readExactly(preamble, preambleRead); !s.ok())
      return s;
    if (std::memcmp(preamble, kMagic, std::min<size_t>(preambleRead, 6)) != 0)
      return fileError(path, "not a .npy file (bad magic string)");
    if (preambleRead < 8)
      return fileError(
          path, fmt::format("file is too short to be a .npy file ({} bytes)",
                            fileSize));
    unsigned major = preamble[6], minor = preamble[7];
    if (!((major == 1 || major == 2 || major == 3) && minor == 0))
      return fileError(path, fmt::format("unsupported .npy format version "
                                         "{}.{} (expected 1.0, 2.0 or 3.0)",
                                         major, minor));

    // Header length: 2 bytes in version 1.0, 4 bytes after.
    size_t lengthSize = major == 1 ? 2 : 4;
    size_t headerStart = 8 + lengthSize;
    if (preambleRead < headerStart)
      return fileError(path, fmt::format("file is truncated: no room for the "
                                         "header length ({} bytes)",
                                         fileSize));
    int64_t headerLen = 0;
    for (size_t i = 0; i < lengthSize; ++i)
      headerLen |= static_cast<int64_t>(preamble[8 + i]) << (8 * i);
    int64_t afterPreamble = fileSize - static_cast<int64_t>(headerStart);
    if (headerLen > afterPreamble)
      return fileError(path, fmt::format("file is truncated: header length is "
                                         "{} bytes but only {} bytes follow",
                                         headerLen, afterPreamble));

    // The header dict. Part of it may already be in `preamble`.
    std::string headerText(static_cast<size_t>(headerLen), '\0');
    size_t inPreamble =
        std::min<size_t>(preambleRead - headerStart, headerText.size());
    std::memcpy(headerText.data(), preamble + headerStart, inPreamble);
    if (Status s = readExactly(headerText.data() + inPreamble,
                               headerText.size() - inPreamble);
        !s.ok())
      return s;
    if (preambleRead > headerStart + headerText.size()) {
      // The header was shorter than the preamble buffer: rewind to the data.
      if (std::fseek(File, static_cast<long>(headerStart + headerText.size()),
                     SEEK_SET) != 0)
        return fileError(path, "cannot seek: " + errnoText(errno));
    }
    if (Status s = HeaderParser(headerText).parse(Hdr); !s.ok())
      return s.withPrefix(path);

    // Data size, exactly.
    std::optional<int64_t> count = elementCount(Hdr.shape);
    std::optional<int64_t> numBytes;
    if (count)
      numBytes = checkedMul(*count, static_cast<int64_t>(dtypeSize(Hdr.dtype)));
    if (!numBytes)
      return fileError(
          path, fmt::format("shape {} {} is too large (its size overflows 64 "
                            "bits)",
                            formatShape(Hdr.shape), dtypeName(Hdr.dtype)));
    DataBytes = *numBytes;
    DataOffset = static_cast<int64_t>(headerStart) + headerLen;
    int64_t available = afterPreamble - headerLen;
    if (available < DataBytes)
      return fileError(
          path, fmt::format("file is truncated: header says {} but only {} "
                            "bytes follow",
                            describeData(Hdr.shape, Hdr.dtype, DataBytes),
                            available));
    if (available > DataBytes)
      return fileError(
          path, fmt::format("trailing data: header says {} but {} bytes follow",
                            describeData(Hdr.shape, Hdr.dtype, DataBytes),
                            available));
    return Status::success();
  }

  /// Reads and validates the data after a successful open().
  Status readData(std::vector<unsigned char> &bytes) {
    // DataBytes was checked against the file size, so this allocation is
    // bounded by what is on disk.
    if (static_cast<uint64_t>(DataBytes) > bytes.max_size())
      return fileError(Path, "array is too large for this machine");
    try {
      bytes.assign(static_cast<size_t>(DataBytes), 0);
    } catch (const std::bad_alloc &) {
      return outOfMemory();
    }
    if (Status s = readExactly(bytes.data(), bytes.size()); !s.ok())
      return s;
    if (Hdr.fortranOrder)
      if (Status s = toCOrder(bytes); !s.ok())
        return s;
    if (Hdr.dtype == DType::Bool) {
      for (size_t i = 0; i < bytes.size(); ++i)
        if (bytes[i] > 1)
          return fileError(Path,
                           fmt::format("invalid bool value {} at element {} "
                                       "(expected 0 or 1)",
                                       static_cast<int>(bytes[i]), i));
    }
    return Status::success();
  }

  const Header &header() const { return Hdr; }
  /// The file offset of the first data byte.
  int64_t dataOffset() const { return DataOffset; }

  /// Reads `size` bytes at file offset `offset` (without moving the stream).
  Status readAt(int64_t offset, void *dst, size_t size) const {
    auto *p = static_cast<unsigned char *>(dst);
    while (size > 0) {
      ssize_t n = ::pread(::fileno(File), p, size, static_cast<off_t>(offset));
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return fileError(Path, "read error: " + errnoText(errno));
      if (n == 0)
        return fileError(Path, "file is truncated: it shrank while reading");
      p += n;
      offset += n;
      size -= static_cast<size_t>(n);
    }
    return Status::success();
  }

private:
  Status outOfMemory() const {
    return fileError(
        Path, fmt::format("out of memory reading {}",
                          describeData(Hdr.shape, Hdr.dtype, DataBytes)));
  }

  /// Rearranges the Fortran-order data in `bytes` into C order. Arrays with
  /// at most one dimension above 1 are laid out alike in both orders.
  Status toCOrder(std::vector<unsigned char> &bytes) const {
    int64_t count = elementCount(Hdr.shape).value_or(0);
    if (std::count_if(Hdr.shape.begin(), Hdr.shape.end(),
                      [](int64_t dim) { return dim > 1; }) < 2)
      return Status::success();
    std::vector<unsigned char> ordered;
    try {
      ordered.resize(bytes.size());
    } catch (const std::bad_alloc &) {
      return outOfMemory();
    }
    switch (dtypeSize(Hdr.dtype)) {
    case 1:
      fortranToC<1>(Hdr.shape, count, bytes.data(), ordered.data());
      break;
    case 4:
      fortranToC<4>(Hdr.shape, count, bytes.data(), ordered.data());
      break;
    default:
      fortranToC<8>(Hdr.shape, count, bytes.data(), ordered.data());
      break;
    }
    bytes.swap(ordered);
    return Status::success();
  }

  Status readExactly(void *dst, size_t size) {
    if (size == 0)
      return Status::success();
    if (std::fread(dst, 1, size, File) != size) {
      if (std::ferror(File))
        return fileError(Path, "read error: " + errnoText(errno));
      return fileError(Path, "file is truncated: it shrank while reading");
    }
    return Status::success();
  }

  std::string Path;
  std::FILE *File = nullptr;
  Header Hdr;
  int64_t DataBytes = 0;
  int64_t DataOffset = 0;
};

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

/// The full preamble + header of a format 1.0 (or, for absurdly long
/// headers, 2.0) file, as NumPy's _write_array_header builds it.
std::string buildHeader(DType dtype, const std::vector<int64_t> &shape) {
  std::string dict = "{'descr': '";
  dict += dtypeDescr(dtype);
  dict += "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      dict += ", ";
    dict += std::to_string(shape[i]);
  }
  if (shape.size() == 1)
    dict += ",";
  dict += "), }";
  if (!shape.empty()) {
    size_t digits = std::to_string(shape[0]).size();
    if (digits < kGrowthAxisMaxDigits)
      dict.append(kGrowthAxisMaxDigits - digits, ' ');
  }

  // Pad with spaces and a final newline so the data starts on a 64-byte
  // boundary; NumPy always pads by 1 to 64 bytes.
  size_t textLen = dict.size() + 1;
  bool version1 = true;
  size_t lengthSize = 2;
  size_t padLen = kArrayAlign - (8 + lengthSize + textLen) % kArrayAlign;
  if (textLen + padLen > 0xffff) {
    version1 = false;
    lengthSize = 4;
    padLen = kArrayAlign - (8 + lengthSize + textLen) % kArrayAlign;
  }
  size_t headerLen = textLen + padLen;

  std::string out(reinterpret_cast<const char *>(kMagic), sizeof(kMagic));
  out += static_cast<char>(version1 ? 1 : 2);
  out += static_cast<char>(0);
  for (size_t i = 0; i < lengthSize; ++i)
    out += static_cast<char>((headerLen >> (8 * i)) & 0xff);
  out += dict;
  out.append(padLen, ' ');
  out += '\n';
  return out;
}

/// Checks `shape` against `expected` as readNpyExpect does.
Status checkShape(const std::string &path, const std::vector<int64_t> &shape,
                  const std::vector<int64_t> &expected) {
  bool shapeOk = shape.size() == expected.size();
  for (size_t i = 0; shapeOk && i < shape.size(); ++i)
    shapeOk = expected[i] == -1 || expected[i] == shape[i];
  if (!shapeOk)
    return fileError(path,
                     fmt::format("expected shape {}, got {}",
                                 formatShape(expected), formatShape(shape)));
  return Status::success();
}

/// "element [1, 2]" for flat element 5 of a 2x3 array; "the value" of a
/// scalar.
std::string describeElement(const std::vector<int64_t> &shape, int64_t flat) {
  if (shape.empty())
    return "the value";
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  std::string out = "element [";
  for (size_t d = 0; d < index.size(); ++d)
    out += (d ? ", " : "") + std::to_string(index[d]);
  return out + "]";
}

/// The error for the non-finite element `flat`.
Status nonFiniteError(const std::string &path,
                      const std::vector<int64_t> &shape, int64_t flat,
                      double value) {
  const char *text = std::isnan(value) ? "nan" : value > 0 ? "inf" : "-inf";
  return fileError(path,
                   fmt::format("{} is {} (non-finite values are rejected)",
                               describeElement(shape, flat), text));
}

/// Converts `count` elements of type From at `in` to To at `out` (which may
/// alias `in` when the types are equal), checking NaN, infinities and the
/// float32 range as readNpyAsFloat32 documents.
template <typename From, typename To>
Status convertFloats(const std::string &path, const std::vector<int64_t> &shape,
                     const unsigned char *in, unsigned char *out, int64_t count,
                     const FloatReadOptions &options) {
  // The smallest magnitude that rounds to infinity in float32: FLT_MAX plus
  // half an ulp (ties round to even, which is 2^128 here).
  constexpr double kFloatOverflow = 0x1.ffffffp+127;
  for (int64_t i = 0; i < count; ++i) {
    From value;
    std::memcpy(&value, in + i * sizeof(From), sizeof(From));
    if (!std::isfinite(value)) {
      if (!options.AllowNonFinite)
        return nonFiniteError(path, shape, i, static_cast<double>(value));
    } else if (sizeof(To) < sizeof(From) &&
               std::fabs(static_cast<double>(value)) >= kFloatOverflow) {
      // The shortest text that reads back as the same double.
      char text[32];
      auto printed =
          std::to_chars(text, text + sizeof(text), static_cast<double>(value));
      return fileError(
          path,
          fmt::format(
              "{} = {} is too large for float32", describeElement(shape, i),
              std::string_view(text, static_cast<size_t>(printed.ptr - text))));
    }
    To converted = static_cast<To>(value);
    std::memcpy(out + i * sizeof(To), &converted, sizeof(To));
  }
  return Status::success();
}

/// readNpyAsFloat32 (To = float) and readNpyAsFloat64 (To = double).
template <typename To>
Status readAsFloat(const std::string &path, NpyArray &out,
                   const FloatReadOptions &options) {
  NpyReader reader;
  if (Status s = reader.open(path); !s.ok())
    return s;
  const Header &hdr = reader.header();
  if (hdr.dtype != DType::Float32 && hdr.dtype != DType::Float64)
    return fileError(path,
                     fmt::format("expected dtype float32 or float64, got {}",
                                 dtypeName(hdr.dtype)));
  if (options.Shape)
    if (Status s = checkShape(path, hdr.shape, *options.Shape); !s.ok())
      return s;
  std::vector<unsigned char> raw;
  if (Status s = reader.readData(raw); !s.ok())
    return s;
  int64_t count = elementCount(hdr.shape).value_or(0);
  NpyArray result;
  result.dtype = DTypeOf<To>::value;
  result.shape = hdr.shape;
  Status converted;
  if (hdr.dtype == result.dtype) {
    result.bytes = std::move(raw);
    converted = convertFloats<To, To>(path, hdr.shape, result.bytes.data(),
                                      result.bytes.data(), count, options);
  } else {
    try {
      result.bytes.resize(static_cast<size_t>(count) * sizeof(To));
    } catch (const std::bad_alloc &) {
      return fileError(path,
                       fmt::format("out of memory converting {} {} to {}",
                                   formatShape(hdr.shape), dtypeName(hdr.dtype),
                                   dtypeName(result.dtype)));
    }
    converted =
        hdr.dtype == DType::Float32
            ? convertFloats<float, To>(path, hdr.shape, raw.data(),
                                       result.bytes.data(), count, options)
            : convertFloats<double, To>(path, hdr.shape, raw.data(),
                                        result.bytes.data(), count, options);
  }
  if (!converted.ok())
    return converted;
  out = std::move(result);
  return Status::success();
}

/// Writes all of `data` to `fd`, retrying on short writes and EINTR.
bool writeAll(int fd, const void *data, size_t size) {
  const char *p = static_cast<const char *>(data);
  while (size > 0) {
    ssize_t n = ::write(fd, p, size);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return false;
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

} // namespace

//===----------------------------------------------------------------------===//
// Public API
//===----------------------------------------------------------------------===//

size_t gnnc::rt::dtypeSize(DType dtype) {
  switch (dtype) {
  case DType::Bool:
    return 1;
  case DType::Int32:
  case DType::Float32:
    return 4;
  case DType::Int64:
  case DType::Float64:
    return 8;
  }
  return 0;
}

const char *gnnc::rt::dtypeName(DType dtype) {
  switch (dtype) {
  case DType::Bool:
    return "bool";
  case DType::Int32:
    return "int32";
  case DType::Int64:
    return "int64";
  case DType::Float32:
    return "float32";
  case DType::Float64:
    return "float64";
  }
  return "unknown";
}

const char *gnnc::rt::dtypeDescr(DType dtype) {
  switch (dtype) {
  case DType::Bool:
    return "|b1";
  case DType::Int32:
    return "<i4";
  case DType::Int64:
    return "<i8";
  case DType::Float32:
    return "<f4";
  case DType::Float64:
    return "<f8";
  }
  return "?";
}

std::string gnnc::rt::formatShape(const std::vector<int64_t> &shape) {
  if (shape.empty())
    return "scalar";
  std::string out;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      out += 'x';
    out += shape[i] == -1 ? std::string("*") : std::to_string(shape[i]);
  }
  return out;
}

int64_t NpyArray::numElements() const {
  for (int64_t dim : shape)
    if (dim < 0)
      return -1;
  return elementCount(shape).value_or(-1);
}

Status gnnc::rt::readNpyHeader(const std::string &path, DType &dtype,
                               std::vector<int64_t> &shape) {
  NpyReader reader;
  if (Status s = reader.open(path); !s.ok())
    return s;
  dtype = reader.header().dtype;
  shape = reader.header().shape;
  return Status::success();
}

Status gnnc::rt::readNpy(const std::string &path, NpyArray &out) {
  NpyReader reader;
  if (Status s = reader.open(path); !s.ok())
    return s;
  NpyArray result;
  if (Status s = reader.readData(result.bytes); !s.ok())
    return s;
  result.dtype = reader.header().dtype;
  result.shape = reader.header().shape;
  out = std::move(result);
  return Status::success();
}

/// Opens `path` and checks its dtype and shape as readNpyExpect does.
static Status openExpecting(NpyReader &reader, const std::string &path,
                            DType dtype,
                            const std::vector<int64_t> &expectedShape) {
  GNNC_TRY(reader.open(path));
  const Header &hdr = reader.header();
  if (hdr.dtype != dtype)
    return fileError(path, fmt::format("expected dtype {}, got {}",
                                       dtypeName(dtype), dtypeName(hdr.dtype)));
  return checkShape(path, hdr.shape, expectedShape);
}

Status gnnc::rt::readNpyExpect(const std::string &path, DType dtype,
                               const std::vector<int64_t> &expectedShape,
                               NpyArray &out) {
  NpyReader reader;
  GNNC_TRY(openExpecting(reader, path, dtype, expectedShape));
  const Header &hdr = reader.header();
  NpyArray result;
  if (Status s = reader.readData(result.bytes); !s.ok())
    return s;
  result.dtype = hdr.dtype;
  result.shape = hdr.shape;
  out = std::move(result);
  return Status::success();
}

Status gnnc::rt::readNpyAsFloat32(const std::string &path, NpyArray &out,
                                  const FloatReadOptions &options) {
  return readAsFloat<float>(path, out, options);
}

Status gnnc::rt::readNpyAsFloat64(const std::string &path, NpyArray &out,
                                  const FloatReadOptions &options) {
  return readAsFloat<double>(path, out, options);
}

Status gnnc::rt::writeNpy(const std::string &path, const NpyArray &array) {
  // Validate the array so that we never write a file readNpy rejects.
  switch (array.dtype) {
  case DType::Bool:
  case DType::Int32:
  case DType::Int64:
  case DType::Float32:
  case DType::Float64:
    break;
  default:
    return fileError(path, "cannot write: invalid dtype");
  }
  if (array.shape.size() > kMaxRank)
    return fileError(path, fmt::format("cannot write: shape has more than {} "
                                       "dimensions",
                                       kMaxRank));
  for (int64_t dim : array.shape)
    if (dim < 0)
      return fileError(path,
                       fmt::format("cannot write: negative dimension {} in "
                                   "shape {}",
                                   dim, formatShape(array.shape)));
  std::optional<int64_t> count = elementCount(array.shape);
  std::optional<int64_t> numBytes;
  if (count)
    numBytes = checkedMul(*count, static_cast<int64_t>(dtypeSize(array.dtype)));
  if (!numBytes || static_cast<uint64_t>(*numBytes) != array.bytes.size())
    return fileError(
        path, fmt::format("cannot write: shape {} {} needs {} bytes but the "
                          "array holds {}",
                          formatShape(array.shape), dtypeName(array.dtype),
                          numBytes ? std::to_string(*numBytes) : "too many",
                          array.bytes.size()));
  if (array.dtype == DType::Bool)
    for (size_t i = 0; i < array.bytes.size(); ++i)
      if (array.bytes[i] > 1)
        return fileError(path,
                         fmt::format("cannot write: invalid bool value {} at "
                                     "element {}",
                                     static_cast<int>(array.bytes[i]), i));

  std::string header = buildHeader(array.dtype, array.shape);

  // Create a fresh temporary file next to the target (O_EXCL, so concurrent
  // writers never share one); the umask applies as for any new file.
  static std::atomic<unsigned> counter{0};
  std::string tmpPath;
  int fd = -1;
  for (int attempt = 0; attempt < 100 && fd < 0; ++attempt) {
    tmpPath = path + ".tmp." + std::to_string(::getpid()) + "." +
              std::to_string(counter.fetch_add(1, std::memory_order_relaxed));
    fd = ::open(tmpPath.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST)
      break;
  }
  if (fd < 0)
    return fileError(path, "cannot create temporary file: " + errnoText(errno));

  auto fail = [&](const std::string &what) {
    int err = errno;
    if (fd >= 0)
      ::close(fd);
    ::unlink(tmpPath.c_str());
    return fileError(path, what + ": " + errnoText(err));
  };
  if (!writeAll(fd, header.data(), header.size()) ||
      !writeAll(fd, array.bytes.data(), array.bytes.size()))
    return fail("write error");
  int closeResult = ::close(fd);
  fd = -1;
  if (closeResult != 0)
    return fail("write error");
  if (::rename(tmpPath.c_str(), path.c_str()) != 0)
    return fail("cannot rename temporary file into place");
  return Status::success();
}

std::string gnnc::rt::npyHeader(DType dtype,
                                const std::vector<int64_t> &shape) {
  return buildHeader(dtype, shape);
}

Status gnnc::rt::readNpyRows(const std::string &path, DType dtype,
                             const std::vector<int64_t> &expectedShape,
                             int64_t rowBegin, int64_t rowCount, void *out,
                             std::vector<int64_t> *shape) {
  NpyReader reader;
  GNNC_TRY(openExpecting(reader, path, dtype, expectedShape));
  const Header &hdr = reader.header();
  if (hdr.shape.empty())
    return fileError(path, "a scalar has no rows to read");
  int64_t rows = hdr.shape[0];
  if (rowBegin < 0 || rowCount < 0 || rowBegin > rows ||
      rowCount > rows - rowBegin)
    return fileError(path, fmt::format("rows [{}, {}) are outside the {} rows "
                                       "of shape {}",
                                       rowBegin, rowBegin + rowCount, rows,
                                       formatShape(hdr.shape)));
  // The whole array's size was checked against the file, so the sizes of a
  // row and of the slice cannot overflow.
  std::vector<int64_t> rest(hdr.shape.begin() + 1, hdr.shape.end());
  int64_t rowElements = elementCount(rest).value_or(0);
  size_t elemSize = dtypeSize(hdr.dtype);
  size_t sliceBytes = static_cast<size_t>(rowCount * rowElements) * elemSize;
  auto *dst = static_cast<unsigned char *>(out);
  if (sliceBytes > 0) {
    bool contiguous =
        !hdr.fortranOrder || std::count_if(hdr.shape.begin(), hdr.shape.end(),
                                           [](int64_t d) { return d > 1; }) < 2;
    if (contiguous) {
      if (Status s = reader.readAt(reader.dataOffset() +
                                       rowBegin * rowElements *
                                           static_cast<int64_t>(elemSize),
                                   dst, sliceBytes);
          !s.ok())
        return s;
    } else if (hdr.shape.size() == 2) {
      // Fortran order: column c holds rows [0, rows) contiguously. Read the
      // slice of every column and interleave it into C order.
      std::vector<unsigned char> column;
      try {
        column.resize(static_cast<size_t>(rowCount) * elemSize);
      } catch (const std::bad_alloc &) {
        return fileError(path, "out of memory reading a column");
      }
      for (int64_t c = 0; c < rowElements; ++c) {
        int64_t offset = reader.dataOffset() +
                         (c * rows + rowBegin) * static_cast<int64_t>(elemSize);
        if (Status s = reader.readAt(offset, column.data(), column.size());
            !s.ok())
          return s;
        for (int64_t r = 0; r < rowCount; ++r)
          std::memcpy(dst + static_cast<size_t>(r * rowElements + c) * elemSize,
                      column.data() + static_cast<size_t>(r) * elemSize,
                      elemSize);
      }
    } else {
      return fileError(path,
                       fmt::format("reading rows of a Fortran-order array of "
                                   "{} dimensions is not supported (at most "
                                   "2; save it in C order)",
                                   hdr.shape.size()));
    }
  }
  if (hdr.dtype == DType::Bool)
    for (size_t i = 0; i < sliceBytes; ++i)
      if (dst[i] > 1)
        return fileError(
            path,
            fmt::format("invalid bool value {} at element {} (expected "
                        "0 or 1)",
                        static_cast<int>(dst[i]),
                        rowBegin * rowElements + static_cast<int64_t>(i)));
  if (shape)
    *shape = hdr.shape;
  return Status::success();
}
