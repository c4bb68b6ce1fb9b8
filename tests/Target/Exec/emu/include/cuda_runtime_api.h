//===- cuda_runtime_api.h - Host emulation of the runtime API -*- C++ -*-===//
//
// Part of gnnc's tests. The subset of the CUDA runtime API that gnnc's CUDA
// runtime (runtime/cuda) and generated CUDA code use, implemented on the
// host (tests/Target/Exec/emu/Emulation.cpp): device memory is host memory,
// streams are immediate, there is one "device". It lets the tests compile
// and run generated `.cu` files as C++ on machines without a GPU; nothing of
// it is part of gnnc.
//
// Stream capture and CUDA graphs: while a stream captures, the work queued
// on it (launches, asynchronous copies and memsets, graph launches, event
// records) is recorded instead of run, and a launch of the instantiated
// graph runs the recorded work in order. As on a GPU, what a capture cannot
// record fails and invalidates the capture (cudaStreamEndCapture then
// fails with cudaErrorStreamCaptureInvalidated): cudaMalloc, cudaFree,
// cudaMallocHost, cudaFreeHost and cudaDeviceSynchronize, and
// cudaStreamSynchronize of the capturing stream, with
// cudaErrorStreamCaptureUnsupported (not in the relaxed mode; in the
// thread-local mode only from the capturing thread); work on the legacy
// default stream (cudaMemcpy, cudaMemset, a null stream) while a blocking
// stream captures, with cudaErrorStreamCaptureImplicit.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_TESTS_CUDA_EMU_CUDA_RUNTIME_API_H
#define GNNC_TESTS_CUDA_EMU_CUDA_RUNTIME_API_H

#include <cstddef>
#include <functional>

#ifndef GNNC_CUDA_EMULATION
#define GNNC_CUDA_EMULATION 1
#endif

enum cudaError_t {
  cudaSuccess = 0,
  cudaErrorInvalidValue = 1,
  cudaErrorMemoryAllocation = 2,
  cudaErrorNoDevice = 100,
  cudaErrorInsufficientDriver = 35,
  cudaErrorInvalidResourceHandle = 400,
  cudaErrorIllegalState = 401,
  cudaErrorStreamCaptureUnsupported = 900,
  cudaErrorStreamCaptureInvalidated = 901,
  cudaErrorStreamCaptureImplicit = 906,
};

enum cudaStreamCaptureMode {
  cudaStreamCaptureModeGlobal = 0,
  cudaStreamCaptureModeThreadLocal = 1,
  cudaStreamCaptureModeRelaxed = 2,
};

enum cudaStreamCaptureStatus {
  cudaStreamCaptureStatusNone = 0,
  cudaStreamCaptureStatusActive = 1,
  cudaStreamCaptureStatusInvalidated = 2,
};

#define cudaStreamDefault 0x00
#define cudaStreamNonBlocking 0x01
#define cudaEventDefault 0x00
#define cudaEventDisableTiming 0x02

enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4,
};

struct CUstream_st;
typedef CUstream_st *cudaStream_t;
struct CUevent_st;
typedef CUevent_st *cudaEvent_t;
struct CUgraph_st;
typedef CUgraph_st *cudaGraph_t;
struct CUgraphExec_st;
typedef CUgraphExec_st *cudaGraphExec_t;

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
cudaError_t cudaMallocHost(void **ptr, std::size_t bytes);
cudaError_t cudaFreeHost(void *ptr);
cudaError_t cudaStreamCreate(cudaStream_t *stream);
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned flags);
cudaError_t cudaStreamDestroy(cudaStream_t stream);
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaDeviceSynchronize();
cudaError_t cudaEventCreate(cudaEvent_t *event);
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned flags);
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream = 0);
cudaError_t cudaEventSynchronize(cudaEvent_t event);
cudaError_t cudaEventDestroy(cudaEvent_t event);
cudaError_t cudaStreamBeginCapture(cudaStream_t stream,
                                   cudaStreamCaptureMode mode);
cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *graph);
cudaError_t cudaStreamIsCapturing(cudaStream_t stream,
                                  cudaStreamCaptureStatus *status);
cudaError_t cudaGraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t graph,
                                 unsigned long long flags = 0);
cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream);
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec);
cudaError_t cudaGraphDestroy(cudaGraph_t graph);
cudaError_t cudaGetLastError();
const char *cudaGetErrorName(cudaError_t error);
const char *cudaGetErrorString(cudaError_t error);

/// Work queued on `stream` by the emulated device (launches, the host side
/// of tests/Target/Exec/emu/EmuDevice.cpp): run now, or recorded when
/// `stream` captures. Fails as an asynchronous copy on `stream` would.
cudaError_t gnnc_emu_enqueue(cudaStream_t stream, std::function<void()> work);

#endif // GNNC_TESTS_CUDA_EMU_CUDA_RUNTIME_API_H
