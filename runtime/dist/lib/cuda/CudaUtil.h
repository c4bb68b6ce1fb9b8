//===- CudaUtil.h - What the CUDA parts of gnnc_dist share ------*- C++ -*-===//
//
// Part of gnnc. Internal to gnnc_dist_cuda.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_DIST_CUDA_CUDAUTIL_H
#define GNNC_DIST_CUDA_CUDAUTIL_H

#include <cuda_runtime.h>

namespace gnnc::dist::detail {

/// Makes `device` current for a scope (a call may come from a thread whose
/// current device is another one) and restores the previous one.
class DeviceGuard {
public:
  explicit DeviceGuard(int device) {
    if (cudaGetDevice(&Previous) != cudaSuccess || Previous == device) {
      Previous = -1;
      return;
    }
    if (cudaSetDevice(device) != cudaSuccess)
      Previous = -1;
  }
  DeviceGuard(const DeviceGuard &) = delete;
  DeviceGuard &operator=(const DeviceGuard &) = delete;
  ~DeviceGuard() {
    if (Previous >= 0)
      cudaSetDevice(Previous);
  }

private:
  int Previous = -1;
};

} // namespace gnnc::dist::detail

#endif // GNNC_DIST_CUDA_CUDAUTIL_H
