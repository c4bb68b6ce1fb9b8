//===- cuda_runtime_api.h - Host emulation of the runtime API -*- C++ -*-===//
//
// Part of gnnc's tests. The subset of the CUDA runtime API that gnnc's CUDA
// runtime (runtime/cuda) and generated CUDA code use, implemented on the
// host (tests/Target/Exec/emu/Emulation.cpp): device memory is host memory,
// streams are immediate, there is one "device". It lets the tests compile
// and run generated `.cu` files as C++ on machines without a GPU; nothing of
// it is part of gnnc.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_TESTS_CUDA_EMU_CUDA_RUNTIME_API_H
#define GNNC_TESTS_CUDA_EMU_CUDA_RUNTIME_API_H

#include <cstddef>

#ifndef GNNC_CUDA_EMULATION
#define GNNC_CUDA_EMULATION 1
#endif

enum cudaError_t {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorNoDevice = 100,
  cudaErrorInsufficientDriver = 35,
};

enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4,
};

struct CUstream_st;
typedef CUstream_st *cudaStream_t;

cudaError_t cudaGetDeviceCount(int *count);
cudaError_t cudaGetDevice(int *device);
cudaError_t cudaMalloc(void **ptr, std::size_t bytes);
cudaError_t cudaFree(void *ptr);
cudaError_t cudaMemcpy(void *dst, const void *src, std::size_t bytes,
                       cudaMemcpyKind kind);
cudaError_t cudaMemcpyAsync(void *dst, const void *src, std::size_t bytes,
                            cudaMemcpyKind kind, cudaStream_t stream = 0);
cudaError_t cudaMemcpy2DAsync(void *dst, std::size_t dpitch, const void *src,
                              std::size_t spitch, std::size_t width,
                              std::size_t height, cudaMemcpyKind kind,
                              cudaStream_t stream = 0);
cudaError_t cudaMemset(void *ptr, int value, std::size_t bytes);
cudaError_t cudaMemsetAsync(void *ptr, int value, std::size_t bytes,
                            cudaStream_t stream = 0);
cudaError_t cudaStreamCreate(cudaStream_t *stream);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaDeviceSynchronize();
cudaError_t cudaGetLastError();
const char *cudaGetErrorName(cudaError_t error);
const char *cudaGetErrorString(cudaError_t error);

#endif // GNNC_TESTS_CUDA_EMU_CUDA_RUNTIME_API_H
