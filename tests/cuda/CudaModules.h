//===- CudaModules.h - The modules compiled to CUDA ----------*- C++ -*-===//
//
// Part of gnnc. tests/cuda/CMakeLists.txt compiles the examples to CUDA at
// build time and writes CudaModules.cpp, the table of them.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_TESTS_CUDA_CUDAMODULES_H
#define GNNC_TESTS_CUDA_CUDAMODULES_H

#include "gnnc/runtime/cuda/DeviceOps.h"

#include <cstddef>

struct CudaModule {
  /// The module's id and namespace ("small_gcn_GCNConv").
  const char *id;
  /// The directory of <stem>.h, <stem>.cu and <stem>.gnnmap.json.
  const char *dir;
  const char *stem;
  const gnnc::rt::cuda::ModuleInfo *info;
};

extern const CudaModule kCudaModules[];
extern const size_t kNumCudaModules;

#endif // GNNC_TESTS_CUDA_CUDAMODULES_H
