//===- Npy.h - Reading and writing NumPy .npy files -------------*- C++ -*-===//
//
// Part of gnnc. A strict reader and writer for the NumPy .npy format
// (https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html),
// restricted to what the runtime needs: little-endian arrays of bool, int32,
// int64, float32 and float64.
//
// The reader accepts format versions 1.0, 2.0 and 3.0 and validates every
// byte it relies on (magic string, version, header length, the header dict's
// syntax, dtype, order, shape and the exact data size), so it returns an
// error, never crashes, on arbitrary input. Arrays stored in Fortran order
// (what numpy.save writes for a transposed array) are transposed while
// loading, so every array it returns is in C order. The writer produces
// format 1.0 C-order files laid out exactly as numpy.save does (header
// padded to 64 bytes).
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_RUNTIME_NPY_H
#define GNNC_RUNTIME_NPY_H

#include "gnnc/runtime/Status.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gnnc::rt {

/// Element types supported in .npy files (NumPy descr in parentheses).
enum class DType {
  Bool,    ///< '|b1', one byte holding 0 or 1
  Int32,   ///< '<i4'
  Int64,   ///< '<i8'
  Float32, ///< '<f4'
  Float64, ///< '<f8'
};

/// Size of one element in bytes.
size_t dtypeSize(DType dtype);
/// Lower-case NumPy name: "bool", "int32", "int64", "float32", "float64".
const char *dtypeName(DType dtype);
/// The NumPy descr string written to headers, e.g. "<f4".
const char *dtypeDescr(DType dtype);

/// Maps a C++ element type to its DType (bool, int32_t, int64_t, float,
/// double); other types do not compile.
template <class T> struct DTypeOf;
template <> struct DTypeOf<bool> {
  static constexpr DType value = DType::Bool;
};
template <> struct DTypeOf<int32_t> {
  static constexpr DType value = DType::Int32;
};
template <> struct DTypeOf<int64_t> {
  static constexpr DType value = DType::Int64;
};
template <> struct DTypeOf<float> {
  static constexpr DType value = DType::Float32;
};
template <> struct DTypeOf<double> {
  static constexpr DType value = DType::Float64;
};

/// Formats a shape for messages: "2708x1433", "2708", "scalar"; a -1 entry
/// (a wildcard in readNpyExpect) prints as "*".
std::string formatShape(const std::vector<int64_t> &shape);

/// A dense, C-order array as stored in a .npy file. `bytes` holds exactly
/// numElements() * dtypeSize(dtype) bytes in little-endian order.
struct NpyArray {
  DType dtype = DType::Float32;
  std::vector<int64_t> shape;
  std::vector<unsigned char> bytes;

  /// Product of the shape (1 for a scalar, 0 if any dimension is 0); -1 if a
  /// dimension is negative or the product overflows.
  int64_t numElements() const;

  /// Typed view of the elements; nullptr when T does not match `dtype`
  /// (or when the array is empty).
  template <class T> const T *data() const {
    if (DTypeOf<T>::value != dtype || bytes.empty())
      return nullptr;
    return reinterpret_cast<const T *>(bytes.data());
  }
  template <class T> T *mutableData() {
    if (DTypeOf<T>::value != dtype || bytes.empty())
      return nullptr;
    return reinterpret_cast<T *>(bytes.data());
  }
};

/// Reads a whole .npy file into `out`, in C order (a Fortran-order file is
/// transposed while loading). `out` is left untouched on error.
Status readNpy(const std::string &path, NpyArray &out);

/// Reads a .npy file and checks its dtype and shape before loading the data.
/// A -1 in `expectedShape` matches any size; the rank must match exactly.
Status readNpyExpect(const std::string &path, DType dtype,
                     const std::vector<int64_t> &expectedShape, NpyArray &out);

/// Reads and validates only the header of a .npy file (including that the
/// file size matches the header), without loading the data.
Status readNpyHeader(const std::string &path, DType &dtype,
                     std::vector<int64_t> &shape);

/// What readNpyAsFloat32 and readNpyAsFloat64 accept.
struct FloatReadOptions {
  /// Accept NaN and infinite values. By default the first one (in C order)
  /// is an error that names it, e.g. `x.npy: element [3, 7] is nan
  /// (non-finite values are rejected)`.
  bool AllowNonFinite = false;
  /// When set, the shape to expect, checked as readNpyExpect checks it (-1
  /// matches any size, the rank must match) before the data is read.
  std::optional<std::vector<int64_t>> Shape;
};

/// Reads a float32 or float64 .npy file into `out` as float32, the element
/// type of generated code (out.dtype is Float32): float64 values are rounded
/// to the nearest float. A finite float64 value too large for float32 (one
/// that would round to infinity) is an error, as is any other dtype; NaN and
/// infinities are errors unless options.AllowNonFinite. `out` is only
/// written on success.
Status readNpyAsFloat32(const std::string &path, NpyArray &out,
                        const FloatReadOptions &options = {});

/// As readNpyAsFloat32, into float64 (out.dtype is Float64): float32 values
/// widen exactly.
Status readNpyAsFloat64(const std::string &path, NpyArray &out,
                        const FloatReadOptions &options = {});

/// Writes `array` as a format 1.0 .npy file, byte for byte as numpy.save
/// would. The data goes to a temporary file in the same directory that is
/// then renamed over `path`, so a failed write leaves no partial file.
Status writeNpy(const std::string &path, const NpyArray &array);

/// Reads rows [rowBegin, rowBegin + rowCount) of a .npy file (a row is one
/// index of the first dimension) into `out`, which receives rowCount times
/// the product of the other dimensions elements, in C order. The header is
/// validated as readNpyHeader does (including the file size) and the dtype
/// and shape are checked as readNpyExpect checks them; then only the slice
/// is read. A slice outside the array is an error; so is a Fortran-order
/// array of more than two dimensions (a 2-D one is read column by column).
/// Bool elements of the slice must be 0 or 1. `shape`, when given, receives
/// the file's shape. `out` may be partly written on error.
Status readNpyRows(const std::string &path, DType dtype,
                   const std::vector<int64_t> &expectedShape, int64_t rowBegin,
                   int64_t rowCount, void *out,
                   std::vector<int64_t> *shape = nullptr);

/// The preamble and header that writeNpy writes for an array of `dtype` and
/// `shape` (format 1.0, C order, padded to 64 bytes); the data starts right
/// after it.
std::string npyHeader(DType dtype, const std::vector<int64_t> &shape);

} // namespace gnnc::rt

#endif // GNNC_RUNTIME_NPY_H
