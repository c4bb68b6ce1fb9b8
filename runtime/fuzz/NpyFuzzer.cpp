//===- NpyFuzzer.cpp - libFuzzer harness for the .npy reader --------------===//
//
// Part of gnnc. The input is a .npy file. Every reader must return an error
// or a consistent array, never crash, and they must agree with each other:
//
//   * readNpy: the data holds exactly numElements() * dtypeSize() bytes;
//   * readNpyHeader and readNpyExpect (with the shape read) give the same
//     dtype, shape and data;
//   * writeNpy of the array, read back, gives the array again (the writer's
//     C-order output of what may have been a Fortran-order file);
//   * readNpyAsFloat32 and readNpyAsFloat64 succeed on a float array exactly
//     when its values allow it, and then hold the values converted.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"

#include "gnnc/runtime/Npy.h"

#include <cmath>
#include <cstring>

using namespace gnnc::rt;
using gnnc::rt::fuzz::require;

namespace {

/// What readNpyAsFloat* must make of element `i` of a float array: its value
/// as a double, or an error (NaN or infinity without `allowNonFinite`, or a
/// finite value too large for float32 when `toFloat32`).
bool convertible(const NpyArray &a, int64_t i, bool toFloat32,
                 bool allowNonFinite, double &value) {
  value = a.dtype == DType::Float32 ? a.data<float>()[i] : a.data<double>()[i];
  if (!std::isfinite(value))
    return allowNonFinite;
  return !(toFloat32 && std::fabs(value) >= 0x1.ffffffp+127);
}

/// Checks readNpyAsFloat32 and readNpyAsFloat64 on `path`, which readNpy
/// read as `*array` (or rejected: null).
void checkFloatReaders(const std::string &path, const NpyArray *array) {
  bool isFloat = array && (array->dtype == DType::Float32 ||
                           array->dtype == DType::Float64);
  int64_t count = array ? array->numElements() : 0;
  for (bool toFloat32 : {true, false})
    for (bool allow : {false, true}) {
      FloatReadOptions options;
      options.AllowNonFinite = allow;
      NpyArray converted;
      Status s = toFloat32 ? readNpyAsFloat32(path, converted, options)
                           : readNpyAsFloat64(path, converted, options);
      bool expectOk = isFloat;
      for (int64_t i = 0; expectOk && i < count; ++i) {
        double value;
        expectOk = convertible(*array, i, toFloat32, allow, value);
      }
      require(s.ok() == expectOk,
              "readNpyAsFloat" + std::string(toFloat32 ? "32" : "64") +
                  (s.ok() ? " accepted" : " rejected: " + s.message()));
      if (!s.ok())
        continue;
      require(converted.shape == array->shape, "converted shape");
      require(converted.dtype == (toFloat32 ? DType::Float32 : DType::Float64),
              "converted dtype");
      require(converted.bytes.size() ==
                  static_cast<size_t>(count) * (toFloat32 ? 4 : 8),
              "converted size");
      for (int64_t i = 0; i < count; ++i) {
        double value;
        convertible(*array, i, toFloat32, allow, value);
        double got = toFloat32 ? converted.data<float>()[i]
                               : converted.data<double>()[i];
        double want = toFloat32 ? static_cast<float>(value) : value;
        require(std::isnan(want) ? std::isnan(got)
                                 : std::memcmp(&got, &want, 8) == 0,
                "converted value of element " + std::to_string(i));
      }
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string path = fuzz::tempPath("input.npy");
  fuzz::writeBytes(path, data, size);

  NpyArray array;
  Status s = readNpy(path, array);
  DType dtype;
  std::vector<int64_t> shape;
  Status header = readNpyHeader(path, dtype, shape);
  // The header reader checks everything but the data's values.
  require(!s.ok() ? true : header.ok(), "readNpyHeader failed on a valid file");
  if (!s.ok()) {
    require(!s.message().empty(), "an error without a message");
    checkFloatReaders(path, nullptr);
    return 0;
  }
  int64_t count = array.numElements();
  require(count >= 0, "negative element count");
  require(array.bytes.size() ==
              static_cast<size_t>(count) * dtypeSize(array.dtype),
          "data size");
  require(dtype == array.dtype && shape == array.shape, "header disagrees");
  if (array.dtype == DType::Bool)
    for (unsigned char b : array.bytes)
      require(b <= 1, "bool byte above 1");

  NpyArray expected;
  s = readNpyExpect(path, array.dtype, array.shape, expected);
  require(s.ok(), "readNpyExpect rejected its own shape: " + s.message());
  require(expected.bytes == array.bytes, "readNpyExpect data differs");

  // Written in C order and read back, the array is unchanged.
  std::string copy = fuzz::tempPath("copy.npy");
  s = writeNpy(copy, array);
  require(s.ok(), "writeNpy failed: " + s.message());
  NpyArray back;
  s = readNpy(copy, back);
  require(s.ok(), "reading the written copy failed: " + s.message());
  require(back.dtype == array.dtype && back.shape == array.shape &&
              back.bytes == array.bytes,
          "the written copy differs");

  checkFloatReaders(path, &array);
  return 0;
}
