//===- Emulation.cpp - CUDA threads and runtime calls on the host ---------===//
//
// Part of gnnc's tests (include/cuda_runtime.h says what this is for).
//
// Each thread of a block is a fiber (ucontext) with its own stack. The
// scheduler resumes, in thread order, every fiber that can run; a fiber
// runs until it waits at a warp barrier or returns. A barrier of mask m
// releases when every thread of m that has not returned waits at a barrier
// of the same mask; if no fiber can run and some have not returned, the
// kernel has a barrier that cannot complete, which aborts with the state of
// the warps. Shuffles publish a value, meet at a barrier, read the source
// lane's value and meet again.
//
//===----------------------------------------------------------------------===//

#include "cuda_runtime.h"

#include <cstdio>
#include <cstdlib>
#include <new>
#include <vector>

#include <ucontext.h>

#if defined(__SANITIZE_ADDRESS__)
#define GNNC_EMU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GNNC_EMU_ASAN 1
#endif
#endif
#ifdef GNNC_EMU_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

namespace {

constexpr std::size_t kStackBytes = 256 * 1024;

struct Fiber {
  ucontext_t context;
  std::vector<char> stack;
  uint3 thread;
  bool done = false;
  bool runnable = true;
  unsigned waitingMask = 0; // the mask of the barrier it waits at
};

struct Warp {
  uint64_t slots[32] = {};
};

struct Launch {
  dim3 grid, block;
  uint3 blockIndex;
  std::vector<Fiber> *fibers = nullptr;
  std::vector<Warp> warps;
  const std::function<void()> *kernel = nullptr;
  ucontext_t scheduler;
  Fiber *current = nullptr;
#ifdef GNNC_EMU_ASAN
  const void *mainStack = nullptr;
  std::size_t mainStackSize = 0;
#endif
};

Launch *active = nullptr;
std::vector<Fiber> fiberPool;

Fiber &current() {
  if (!active || !active->current) {
    std::fprintf(stderr, "gnnc CUDA emulation: a device built-in used "
                         "outside a kernel\n");
    std::abort();
  }
  return *active->current;
}

unsigned threadIndex(const Fiber &f) { return f.thread.x; }

/// Switches from the running fiber back to the scheduler.
void yieldToScheduler() {
  Fiber &f = current();
#ifdef GNNC_EMU_ASAN
  void *fake = nullptr;
  __sanitizer_start_switch_fiber(&fake, active->mainStack,
                                 active->mainStackSize);
#endif
  swapcontext(&f.context, &active->scheduler);
#ifdef GNNC_EMU_ASAN
  __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#endif
}

/// Releases the barrier of `mask` in the warp of thread `first` when every
/// thread of it has returned or waits at it.
void tryRelease(unsigned warpBase, unsigned mask) {
  std::vector<Fiber> &fibers = *active->fibers;
  unsigned count = static_cast<unsigned>(fibers.size());
  bool waiting = false;
  for (unsigned lane = 0; lane < 32; ++lane) {
    if (!(mask >> lane & 1u))
      continue;
    unsigned t = warpBase + lane;
    if (t >= count || fibers[t].done)
      continue;
    if (fibers[t].runnable || fibers[t].waitingMask != mask)
      return;
    waiting = true;
  }
  if (!waiting)
    return;
  for (unsigned lane = 0; lane < 32; ++lane) {
    unsigned t = warpBase + lane;
    if (!(mask >> lane & 1u) || t >= count || fibers[t].done)
      continue;
    fibers[t].runnable = true;
    fibers[t].waitingMask = 0;
  }
}

void trampoline() {
#ifdef GNNC_EMU_ASAN
  __sanitizer_finish_switch_fiber(nullptr, &active->mainStack,
                                  &active->mainStackSize);
#endif
  (*active->kernel)();
  Fiber &f = current();
  f.done = true;
  // A thread that returns no longer holds back its warp's barriers.
  unsigned base = threadIndex(f) / 32 * 32;
  std::vector<Fiber> &fibers = *active->fibers;
  for (unsigned t = base; t < base + 32 && t < fibers.size(); ++t)
    if (!fibers[t].done && !fibers[t].runnable)
      tryRelease(base, fibers[t].waitingMask);
#ifdef GNNC_EMU_ASAN
  __sanitizer_start_switch_fiber(nullptr, active->mainStack,
                                 active->mainStackSize);
#endif
  setcontext(&active->scheduler);
}

/// Makes `f` thread `t` of a block, at the start of the kernel. (Like
/// resume, a function of its own: getcontext returns twice.)
__attribute__((noinline)) void start(Fiber &f, unsigned t) {
  f.thread.x = t;
  f.done = false;
  f.runnable = true;
  f.waitingMask = 0;
  if (f.stack.size() < kStackBytes)
    f.stack.resize(kStackBytes);
  getcontext(&f.context);
  f.context.uc_stack.ss_sp = f.stack.data();
  f.context.uc_stack.ss_size = f.stack.size();
  f.context.uc_link = nullptr;
  makecontext(&f.context, trampoline, 0);
}

/// Runs fiber `f` until it waits or returns. (A function of its own: the
/// caller's locals do not live across swapcontext, which returns twice.)
__attribute__((noinline)) void resume(Launch &launch, Fiber &f) {
  launch.current = &f;
#ifdef GNNC_EMU_ASAN
  void *fake = nullptr;
  __sanitizer_start_switch_fiber(&fake, f.stack.data(), f.stack.size());
#endif
  swapcontext(&launch.scheduler, &f.context);
#ifdef GNNC_EMU_ASAN
  __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#endif
  launch.current = nullptr;
}

} // namespace

namespace gnnc_emu {

const uint3 &currentThreadIdx() { return current().thread; }
const uint3 &currentBlockIdx() {
  current();
  return active->blockIndex;
}
const dim3 &currentBlockDim() {
  current();
  return active->block;
}
const dim3 &currentGridDim() {
  current();
  return active->grid;
}

void syncwarp(unsigned mask) {
  Fiber &f = current();
  unsigned lane = threadIndex(f) % 32;
  if (!(mask >> lane & 1u)) {
    std::fprintf(stderr,
                 "gnnc CUDA emulation: thread %u calls __syncwarp(0x%08x) "
                 "without its own lane\n",
                 threadIndex(f), mask);
    std::abort();
  }
  f.runnable = false;
  f.waitingMask = mask;
  tryRelease(threadIndex(f) / 32 * 32, mask);
  if (!f.runnable)
    yieldToScheduler();
}

uint64_t shuffle(unsigned mask, uint64_t value, int source, int width) {
  Fiber &f = current();
  unsigned t = threadIndex(f);
  Warp &warp = active->warps[t / 32];
  unsigned lane = t % 32;
  warp.slots[lane] = value;
  syncwarp(mask);
  unsigned w = static_cast<unsigned>(width);
  unsigned from = lane / w * w + static_cast<unsigned>(source) % w;
  if (!(mask >> from & 1u)) {
    std::fprintf(stderr,
                 "gnnc CUDA emulation: thread %u shuffles from lane %u, "
                 "outside the mask 0x%08x\n",
                 t, from, mask);
    std::abort();
  }
  uint64_t out = warp.slots[from];
  syncwarp(mask);
  return out;
}

} // namespace gnnc_emu

void gnnc_emu_launch(unsigned blocks, unsigned threads,
                     const std::function<void()> &kernel) {
  if (active) {
    std::fprintf(stderr, "gnnc CUDA emulation: a launch inside a kernel\n");
    std::abort();
  }
  if (threads == 0 || threads > 1024) {
    std::fprintf(stderr, "gnnc CUDA emulation: %u threads per block\n",
                 threads);
    std::abort();
  }
  Launch launch;
  launch.grid.x = blocks;
  launch.block.x = threads;
  launch.kernel = &kernel;
  launch.warps.resize((threads + 31) / 32);
  if (fiberPool.size() < threads)
    fiberPool.resize(threads);
  std::vector<Fiber> fibers(threads);
  for (unsigned t = 0; t < threads; ++t)
    fibers[t].stack.swap(fiberPool[t].stack);
  launch.fibers = &fibers;
  active = &launch;
  for (unsigned b = 0; b < blocks; ++b) {
    launch.blockIndex.x = b;
    for (unsigned t = 0; t < threads; ++t)
      start(fibers[t], t);
    for (;;) {
      bool progress = false, pending = false;
      for (unsigned t = 0; t < threads; ++t) {
        Fiber &f = fibers[t];
        if (f.done)
          continue;
        pending = true;
        if (!f.runnable)
          continue;
        progress = true;
        resume(launch, f);
      }
      if (!pending)
        break;
      if (!progress) {
        std::fprintf(stderr,
                     "gnnc CUDA emulation: block %u deadlocks: a barrier some "
                     "thread of its mask never reaches\n",
                     b);
        for (unsigned t = 0; t < threads; ++t)
          if (!fibers[t].done)
            std::fprintf(stderr, "  thread %u waits at mask 0x%08x\n", t,
                         fibers[t].waitingMask);
        std::abort();
      }
    }
  }
  active = nullptr;
  for (unsigned t = 0; t < threads; ++t)
    fiberPool[t].stack.swap(fibers[t].stack);
}

//===----------------------------------------------------------------------===//
// The runtime API: one device whose memory is the host's
//===----------------------------------------------------------------------===//

namespace {
cudaError_t lastError = cudaSuccess;
cudaError_t fail(cudaError_t e) {
  lastError = e;
  return e;
}
} // namespace

cudaError_t cudaGetDeviceCount(int *count) {
  *count = 1;
  return cudaSuccess;
}
cudaError_t cudaGetDevice(int *device) {
  *device = 0;
  return cudaSuccess;
}
cudaError_t cudaMalloc(void **ptr, std::size_t bytes) {
  std::size_t rounded = (bytes + 255) / 256 * 256;
  *ptr = rounded ? std::aligned_alloc(256, rounded) : nullptr;
  if (rounded && !*ptr)
    return fail(cudaErrorMemoryAllocation);
  return cudaSuccess;
}
cudaError_t cudaFree(void *ptr) {
  std::free(ptr);
  return cudaSuccess;
}
cudaError_t cudaMemcpy(void *dst, const void *src, std::size_t bytes,
                       cudaMemcpyKind) {
  if (bytes)
    std::memmove(dst, src, bytes);
  return cudaSuccess;
}
cudaError_t cudaMemcpyAsync(void *dst, const void *src, std::size_t bytes,
                            cudaMemcpyKind kind, cudaStream_t) {
  return cudaMemcpy(dst, src, bytes, kind);
}
cudaError_t cudaMemcpy2DAsync(void *dst, std::size_t dpitch, const void *src,
                              std::size_t spitch, std::size_t width,
                              std::size_t height, cudaMemcpyKind,
                              cudaStream_t) {
  if (width > dpitch || width > spitch)
    return fail(cudaErrorInvalidValue);
  for (std::size_t r = 0; r < height; ++r)
    std::memmove(static_cast<char *>(dst) + r * dpitch,
                 static_cast<const char *>(src) + r * spitch, width);
  return cudaSuccess;
}
cudaError_t cudaMemset(void *ptr, int value, std::size_t bytes) {
  if (bytes)
    std::memset(ptr, value, bytes);
  return cudaSuccess;
}
cudaError_t cudaMemsetAsync(void *ptr, int value, std::size_t bytes,
                            cudaStream_t) {
  return cudaMemset(ptr, value, bytes);
}
cudaError_t cudaStreamCreate(cudaStream_t *stream) {
  *stream = nullptr;
  return cudaSuccess;
}
cudaError_t cudaStreamDestroy(cudaStream_t) { return cudaSuccess; }
cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }
cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }
cudaError_t cudaGetLastError() {
  cudaError_t e = lastError;
  lastError = cudaSuccess;
  return e;
}
const char *cudaGetErrorName(cudaError_t error) {
  switch (error) {
  case cudaSuccess:
    return "cudaSuccess";
  case cudaErrorInvalidValue:
    return "cudaErrorInvalidValue";
  case cudaErrorMemoryAllocation:
    return "cudaErrorMemoryAllocation";
  case cudaErrorNoDevice:
    return "cudaErrorNoDevice";
  case cudaErrorInsufficientDriver:
    return "cudaErrorInsufficientDriver";
  }
  return "cudaErrorUnknown";
}
const char *cudaGetErrorString(cudaError_t error) {
  return cudaGetErrorName(error);
}
