//===- cuda_runtime.h - Host emulation of CUDA device code ---*- C++ -*-===//
//
// Part of gnnc's tests. Lets a `.cu` file that gnnc prints compile as C++
// and run on the host: the built-in variables and qualifiers, warp
// synchronisation and shuffles, vector types, and kernel launches
// (gnnc_emu_launch, which rt::cuda::launch calls in this build, on the
// launch's stream: cuda_runtime_api.h says how a capture records it). Every
// thread of a block runs as a fiber (ucontext); a fiber runs until it
// waits at __syncwarp / __shfl_sync or finishes, so a missing barrier
// shows as a wrong result, and a barrier that some lane of its mask never
// reaches as a reported deadlock. Blocks run one after the other, so
// `__shared__` variables can be `static`.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_TESTS_CUDA_EMU_CUDA_RUNTIME_H
#define GNNC_TESTS_CUDA_EMU_CUDA_RUNTIME_H

#include "cuda_runtime_api.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __restrict__ __restrict
#define __launch_bounds__(...)
#define __shared__ static

struct uint3 {
  unsigned x = 0, y = 0, z = 0;
};
struct dim3 {
  unsigned x = 1, y = 1, z = 1;
};
struct float2 {
  float x, y;
};
struct float4 {
  float x, y, z, w;
};
inline float2 make_float2(float x, float y) { return {x, y}; }
inline float4 make_float4(float x, float y, float z, float w) {
  return {x, y, z, w};
}

namespace gnnc_emu {
/// The emulated thread running now.
const uint3 &currentThreadIdx();
const uint3 &currentBlockIdx();
const dim3 &currentBlockDim();
const dim3 &currentGridDim();
/// Waits until every thread of `mask` in the calling thread's warp (that has
/// not exited) waits with the same mask.
void syncwarp(unsigned mask);
/// Waits until every thread of the block that has not exited waits here.
void syncthreads();
/// Exchanges 64 bits through the warp: every thread of `mask` publishes
/// `value` and receives the value of lane `source` of its `width`-lane
/// section.
uint64_t shuffle(unsigned mask, uint64_t value, int source, int width);
} // namespace gnnc_emu

#define threadIdx (::gnnc_emu::currentThreadIdx())
#define blockIdx (::gnnc_emu::currentBlockIdx())
#define blockDim (::gnnc_emu::currentBlockDim())
#define gridDim (::gnnc_emu::currentGridDim())

inline void __syncwarp(unsigned mask = 0xffffffffu) {
  gnnc_emu::syncwarp(mask);
}
inline void __syncthreads() { gnnc_emu::syncthreads(); }

template <typename T>
T __shfl_sync(unsigned mask, T value, int source, int width = 32) {
  static_assert(sizeof(T) <= 8, "shuffles of at most 64 bits");
  uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof(T));
  bits = gnnc_emu::shuffle(mask, bits, source, width);
  T out;
  std::memcpy(&out, &bits, sizeof(T));
  return out;
}

template <typename T> T __ldg(const T *p) { return *p; }

/// Runs `kernel` on `blocks` blocks of `threads` threads.
void gnnc_emu_launch(unsigned blocks, unsigned threads,
                     const std::function<void()> &kernel);
/// Runs `kernel` so, or records it when `stream` captures (kernel is a copy
/// of the launch's arguments).
cudaError_t gnnc_emu_launch(unsigned blocks, unsigned threads,
                            cudaStream_t stream, std::function<void()> kernel);

/// The names of the kernels rt::cuda::launch has launched (or recorded into
/// a capture) since the last call, in order; tests count passes over the
/// edges with it. Every thread's launches, under a lock.
void gnnc_emu_note_launch(const char *name, int64_t blocks);
std::vector<std::string> gnnc_emu_take_launches();
/// The blocks of the last launch of `name` (-1: none since the start).
int64_t gnnc_emu_last_blocks(const std::string &name);

#endif // GNNC_TESTS_CUDA_EMU_CUDA_RUNTIME_H
