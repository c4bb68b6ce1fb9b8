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

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <new>
#include <thread>
#include <utility>
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
  bool atBlockBarrier = false; // waits at __syncthreads
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

/// Releases the block's barrier (__syncthreads) when every thread that
/// has not returned waits at it.
void tryReleaseBlock() {
  std::vector<Fiber> &fibers = *active->fibers;
  bool waiting = false;
  for (Fiber &f : fibers) {
    if (f.done)
      continue;
    if (!f.atBlockBarrier)
      return;
    waiting = true;
  }
  if (!waiting)
    return;
  for (Fiber &f : fibers)
    if (!f.done) {
      f.atBlockBarrier = false;
      f.runnable = true;
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
    if (!fibers[t].done && !fibers[t].runnable && !fibers[t].atBlockBarrier)
      tryRelease(base, fibers[t].waitingMask);
  tryReleaseBlock();
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
  f.atBlockBarrier = false;
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

void syncthreads() {
  Fiber &f = current();
  f.runnable = false;
  f.atBlockBarrier = true;
  tryReleaseBlock();
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
            std::fprintf(stderr, "  thread %u waits at %s 0x%08x\n", t,
                         fibers[t].atBlockBarrier ? "__syncthreads, mask"
                                                  : "mask",
                         fibers[t].waitingMask);
        std::abort();
      }
    }
  }
  active = nullptr;
  for (unsigned t = 0; t < threads; ++t)
    fiberPool[t].stack.swap(fibers[t].stack);
}

namespace {
std::mutex launchNamesLock;
std::vector<std::string> launchNames;
std::map<std::string, int64_t> lastBlocks;
} // namespace

void gnnc_emu_note_launch(const char *name, int64_t blocks) {
  std::lock_guard<std::mutex> guard(launchNamesLock);
  launchNames.emplace_back(name);
  lastBlocks[name] = blocks;
}

int64_t gnnc_emu_last_blocks(const std::string &name) {
  std::lock_guard<std::mutex> guard(launchNamesLock);
  auto it = lastBlocks.find(name);
  return it == lastBlocks.end() ? -1 : it->second;
}

std::vector<std::string> gnnc_emu_take_launches() {
  std::lock_guard<std::mutex> guard(launchNamesLock);
  return std::exchange(launchNames, {});
}

cudaError_t gnnc_emu_launch(unsigned blocks, unsigned threads,
                            cudaStream_t stream, std::function<void()> kernel) {
  return gnnc_emu_enqueue(stream,
                          [blocks, threads, kernel = std::move(kernel)] {
                            gnnc_emu_launch(blocks, threads, kernel);
                          });
}

//===----------------------------------------------------------------------===//
// The runtime API: one device whose memory is the host's
//===----------------------------------------------------------------------===//

/// A stream: while it captures, the work queued on it.
struct CUstream_st {
  bool nonBlocking = false;
  bool capturing = false;
  bool invalidated = false;
  cudaStreamCaptureMode mode = cudaStreamCaptureModeGlobal;
  std::thread::id thread;
  std::vector<std::function<void()>> recorded;
};
struct CUevent_st {};
struct CUgraph_st {
  std::vector<std::function<void()>> work;
};
struct CUgraphExec_st {
  std::vector<std::function<void()>> work;
};

namespace {
cudaError_t lastError = cudaSuccess;
cudaError_t fail(cudaError_t e) {
  lastError = e;
  return e;
}

/// The streams that capture now.
std::vector<CUstream_st *> capturing;

/// Invalidates the captures `affected` selects; the error `e` when there
/// was one, else success.
template <typename Pred> cudaError_t invalidate(cudaError_t e, Pred affected) {
  bool any = false;
  for (CUstream_st *s : capturing)
    if (affected(*s)) {
      s->invalidated = true;
      any = true;
    }
  return any ? fail(e) : cudaSuccess;
}

/// A call a capture cannot record (an allocation, a synchronisation):
/// invalidates the captures it concerns (those of this thread in the
/// thread-local mode, all in the global mode, none in the relaxed one).
cudaError_t unsafeDuringCapture() {
  std::thread::id self = std::this_thread::get_id();
  return invalidate(
      cudaErrorStreamCaptureUnsupported, [&](const CUstream_st &s) {
        return s.mode == cudaStreamCaptureModeGlobal ||
               (s.mode == cudaStreamCaptureModeThreadLocal && s.thread == self);
      });
}

/// Work on the legacy default stream, which waits for every blocking
/// stream: not while one of them captures.
cudaError_t legacyDuringCapture() {
  return invalidate(cudaErrorStreamCaptureImplicit,
                    [](const CUstream_st &s) { return !s.nonBlocking; });
}

void runAll(const std::vector<std::function<void()>> &work) {
  for (const std::function<void()> &w : work)
    w();
}
} // namespace

cudaError_t gnnc_emu_enqueue(cudaStream_t stream, std::function<void()> work) {
  if (stream && stream->capturing) {
    if (stream->invalidated)
      return fail(cudaErrorStreamCaptureInvalidated);
    stream->recorded.push_back(std::move(work));
    return cudaSuccess;
  }
  if (!stream)
    if (cudaError_t e = legacyDuringCapture(); e != cudaSuccess)
      return e;
  work();
  return cudaSuccess;
}

cudaError_t cudaGetDeviceCount(int *count) {
  *count = 1;
  return cudaSuccess;
}
cudaError_t cudaGetDevice(int *device) {
  *device = 0;
  return cudaSuccess;
}
cudaError_t cudaMalloc(void **ptr, std::size_t bytes) {
  if (cudaError_t e = unsafeDuringCapture(); e != cudaSuccess)
    return e;
  std::size_t rounded = (bytes + 255) / 256 * 256;
  *ptr = rounded ? std::aligned_alloc(256, rounded) : nullptr;
  if (rounded && !*ptr)
    return fail(cudaErrorMemoryAllocation);
  return cudaSuccess;
}
cudaError_t cudaFree(void *ptr) {
  if (cudaError_t e = unsafeDuringCapture(); e != cudaSuccess)
    return e;
  std::free(ptr);
  return cudaSuccess;
}
cudaError_t cudaMallocHost(void **ptr, std::size_t bytes) {
  if (cudaError_t e = unsafeDuringCapture(); e != cudaSuccess)
    return e;
  *ptr = bytes ? std::malloc(bytes) : nullptr;
  if (bytes && !*ptr)
    return fail(cudaErrorMemoryAllocation);
  return cudaSuccess;
}
cudaError_t cudaFreeHost(void *ptr) {
  if (cudaError_t e = unsafeDuringCapture(); e != cudaSuccess)
    return e;
  std::free(ptr);
  return cudaSuccess;
}
cudaError_t cudaMemcpy(void *dst, const void *src, std::size_t bytes,
                       cudaMemcpyKind kind) {
  return cudaMemcpyAsync(dst, src, bytes, kind, nullptr);
}
cudaError_t cudaMemcpyAsync(void *dst, const void *src, std::size_t bytes,
                            cudaMemcpyKind, cudaStream_t stream) {
  return gnnc_emu_enqueue(stream, [dst, src, bytes] {
    if (bytes)
      std::memmove(dst, src, bytes);
  });
}
cudaError_t cudaMemcpy2DAsync(void *dst, std::size_t dpitch, const void *src,
                              std::size_t spitch, std::size_t width,
                              std::size_t height, cudaMemcpyKind,
                              cudaStream_t stream) {
  if (width > dpitch || width > spitch)
    return fail(cudaErrorInvalidValue);
  return gnnc_emu_enqueue(stream, [=] {
    for (std::size_t r = 0; r < height; ++r)
      std::memmove(static_cast<char *>(dst) + r * dpitch,
                   static_cast<const char *>(src) + r * spitch, width);
  });
}
cudaError_t cudaMemset(void *ptr, int value, std::size_t bytes) {
  return cudaMemsetAsync(ptr, value, bytes, nullptr);
}
cudaError_t cudaMemsetAsync(void *ptr, int value, std::size_t bytes,
                            cudaStream_t stream) {
  return gnnc_emu_enqueue(stream, [ptr, value, bytes] {
    if (bytes)
      std::memset(ptr, value, bytes);
  });
}
cudaError_t cudaStreamCreate(cudaStream_t *stream) {
  return cudaStreamCreateWithFlags(stream, cudaStreamDefault);
}
cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned flags) {
  *stream = new CUstream_st;
  (*stream)->nonBlocking = (flags & cudaStreamNonBlocking) != 0;
  return cudaSuccess;
}
cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  if (!stream)
    return fail(cudaErrorInvalidResourceHandle);
  capturing.erase(std::remove(capturing.begin(), capturing.end(), stream),
                  capturing.end());
  delete stream;
  return cudaSuccess;
}
cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  if (!stream)
    return legacyDuringCapture();
  if (stream->capturing) {
    stream->invalidated = true;
    return fail(cudaErrorStreamCaptureUnsupported);
  }
  return cudaSuccess;
}
cudaError_t cudaDeviceSynchronize() {
  return invalidate(cudaErrorStreamCaptureUnsupported,
                    [](const CUstream_st &s) {
                      return s.mode != cudaStreamCaptureModeRelaxed;
                    });
}
cudaError_t cudaEventCreate(cudaEvent_t *event) {
  return cudaEventCreateWithFlags(event, cudaEventDefault);
}
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned) {
  *event = new CUevent_st;
  return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  if (!event)
    return fail(cudaErrorInvalidResourceHandle);
  return gnnc_emu_enqueue(stream, [] {});
}
cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  return event ? cudaSuccess : fail(cudaErrorInvalidResourceHandle);
}
cudaError_t cudaEventDestroy(cudaEvent_t event) {
  if (!event)
    return fail(cudaErrorInvalidResourceHandle);
  delete event;
  return cudaSuccess;
}

cudaError_t cudaStreamBeginCapture(cudaStream_t stream,
                                   cudaStreamCaptureMode mode) {
  if (!stream)
    return fail(cudaErrorStreamCaptureUnsupported);
  if (stream->capturing)
    return fail(cudaErrorIllegalState);
  stream->capturing = true;
  stream->invalidated = false;
  stream->mode = mode;
  stream->thread = std::this_thread::get_id();
  stream->recorded.clear();
  capturing.push_back(stream);
  return cudaSuccess;
}
cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *graph) {
  *graph = nullptr;
  if (!stream || !stream->capturing)
    return fail(cudaErrorIllegalState);
  stream->capturing = false;
  capturing.erase(std::remove(capturing.begin(), capturing.end(), stream),
                  capturing.end());
  std::vector<std::function<void()>> work;
  work.swap(stream->recorded);
  if (stream->invalidated) {
    stream->invalidated = false;
    return fail(cudaErrorStreamCaptureInvalidated);
  }
  *graph = new CUgraph_st{std::move(work)};
  return cudaSuccess;
}
cudaError_t cudaStreamIsCapturing(cudaStream_t stream,
                                  cudaStreamCaptureStatus *status) {
  *status = cudaStreamCaptureStatusNone;
  if (!stream) {
    // The legacy stream cannot be asked while a blocking stream captures
    // (which the question does not invalidate).
    for (const CUstream_st *s : capturing)
      if (!s->nonBlocking)
        return fail(cudaErrorStreamCaptureImplicit);
    return cudaSuccess;
  }
  if (stream->capturing)
    *status = stream->invalidated ? cudaStreamCaptureStatusInvalidated
                                  : cudaStreamCaptureStatusActive;
  return cudaSuccess;
}
cudaError_t cudaGraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t graph,
                                 unsigned long long) {
  if (!graph)
    return fail(cudaErrorInvalidValue);
  *exec = new CUgraphExec_st{graph->work};
  return cudaSuccess;
}
cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream) {
  if (!exec)
    return fail(cudaErrorInvalidValue);
  if (stream && stream->capturing)
    return gnnc_emu_enqueue(stream, [work = exec->work] { runAll(work); });
  return gnnc_emu_enqueue(stream, [exec] { runAll(exec->work); });
}
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
  if (!exec)
    return fail(cudaErrorInvalidValue);
  delete exec;
  return cudaSuccess;
}
cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  if (!graph)
    return fail(cudaErrorInvalidValue);
  delete graph;
  return cudaSuccess;
}
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
  case cudaErrorInvalidResourceHandle:
    return "cudaErrorInvalidResourceHandle";
  case cudaErrorIllegalState:
    return "cudaErrorIllegalState";
  case cudaErrorStreamCaptureUnsupported:
    return "cudaErrorStreamCaptureUnsupported";
  case cudaErrorStreamCaptureInvalidated:
    return "cudaErrorStreamCaptureInvalidated";
  case cudaErrorStreamCaptureImplicit:
    return "cudaErrorStreamCaptureImplicit";
  }
  return "cudaErrorUnknown";
}
const char *cudaGetErrorString(cudaError_t error) {
  // The descriptions of the CUDA runtime for the capture errors.
  switch (error) {
  case cudaErrorStreamCaptureUnsupported:
    return "operation not permitted when stream is capturing";
  case cudaErrorStreamCaptureInvalidated:
    return "operation failed due to a previous error during capture";
  case cudaErrorStreamCaptureImplicit:
    return "operation would make the legacy stream depend on a capturing "
           "blocking stream";
  default:
    return cudaGetErrorName(error);
  }
}
