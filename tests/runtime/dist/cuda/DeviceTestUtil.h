//===- DeviceTestUtil.h - Helpers of the gnnc_dist CUDA tests ---*- C++ -*-===//
//
// Part of gnnc's tests. Device arrays, the reference values of the device
// tensor tests and comparisons that return a Status naming the first
// mismatch (so that a rank never leaves a collective early).
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_TESTS_DIST_CUDA_DEVICETESTUTIL_H
#define GNNC_TESTS_DIST_CUDA_DEVICETESTUTIL_H

#include "gnnc/dist/DistTensor.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace gnnc::dist::devtest {

/// Whether a CUDA device can be used here.
inline bool haveDevice() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return count > 0;
}

/// A device copy of a host vector, freed on destruction.
template <class T> class DeviceArray {
public:
  DeviceArray() = default;
  DeviceArray(const DeviceArray &) = delete;
  DeviceArray &operator=(const DeviceArray &) = delete;
  ~DeviceArray() {
    if (Ptr)
      cudaFree(Ptr);
  }

  /// `n` elements, uninitialised.
  Status allocate(size_t n) {
    Size = n;
    if (n == 0)
      return Status();
    cudaError_t err =
        cudaMalloc(reinterpret_cast<void **>(&Ptr), n * sizeof(T));
    if (err != cudaSuccess) {
      Ptr = nullptr;
      return Status::error(
          fmt::format("cudaMalloc: {}", cudaGetErrorString(err)));
    }
    return Status();
  }
  Status upload(const std::vector<T> &host) {
    GNNC_TRY(allocate(host.size()));
    if (host.empty())
      return Status();
    cudaError_t err = cudaMemcpy(Ptr, host.data(), host.size() * sizeof(T),
                                 cudaMemcpyHostToDevice);
    if (err != cudaSuccess)
      return Status::error(
          fmt::format("cudaMemcpy: {}", cudaGetErrorString(err)));
    return Status();
  }
  Status download(std::vector<T> &host) const {
    host.assign(Size, T());
    return copyToHost(Ptr, Size, host.data());
  }

  /// Copies `n` elements at device address `from` to `to`.
  static Status copyToHost(const void *from, size_t n, T *to) {
    if (n == 0)
      return Status();
    cudaError_t err =
        cudaMemcpy(to, from, n * sizeof(T), cudaMemcpyDeviceToHost);
    if (err != cudaSuccess)
      return Status::error(
          fmt::format("cudaMemcpy: {}", cudaGetErrorString(err)));
    return Status();
  }

  T *get() const { return Ptr; }
  size_t size() const { return Size; }

private:
  T *Ptr = nullptr;
  size_t Size = 0;
};

/// The reference value of element (row, col) after `version` rewrites.
template <class T> T referenceValue(int64_t row, int64_t col, int version) {
  return static_cast<T>(row * 100 + col * 3 + version * 10000) +
         static_cast<T>(std::is_floating_point<T>::value ? 0.25 : 0);
}

/// Rows `indices` of a host table (`cols` elements per row).
template <class T>
std::vector<T> pickRows(const std::vector<T> &table, int64_t cols,
                        const std::vector<int64_t> &indices) {
  std::vector<T> out;
  for (int64_t i : indices)
    out.insert(out.end(), table.begin() + i * cols,
               table.begin() + (i + 1) * cols);
  return out;
}

/// An error naming the first element where `got` and `want` differ.
template <class T>
Status compareValues(const std::string &what, const std::vector<T> &got,
                     const std::vector<T> &want) {
  if (got.size() != want.size())
    return Status::error(fmt::format("{}: {} elements, expected {}", what,
                                     got.size(), want.size()));
  for (size_t i = 0; i < got.size(); ++i)
    if (std::memcmp(&got[i], &want[i], sizeof(T)) != 0)
      return Status::error(fmt::format("{}: element {} is {}, expected {}",
                                       what, i, got[i], want[i]));
  return Status();
}

} // namespace gnnc::dist::devtest

#endif // GNNC_TESTS_DIST_CUDA_DEVICETESTUTIL_H
