//===- Kernel.cuh - Device helpers of generated CUDA kernels ---*- CUDA -*-===//
//
// Part of gnnc. Included by the `.cu` files that `gnnc --emit=cuda` prints
// (and by the runtime's own kernels): lane groups, the dropout mask on the
// device, vector loads, and the launch of a kernel with its errors as a
// Status.
//
// A generated kernel runs each vertex on a group of `lanes` consecutive
// threads of a warp (a power of two, at most 32): the group's mask names
// those threads for __syncwarp and __shfl_sync, which lets the groups of a
// warp diverge (each vertex has its own degree).
//
// The tests also compile generated code as C++ on the host, with a small
// emulation of the CUDA built-ins (tests/Target/Exec/emu); GNNC_CUDA_EMULATION
// marks that build.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_RUNTIME_CUDA_KERNEL_CUH
#define GNNC_RUNTIME_CUDA_KERNEL_CUH

#include "gnnc/runtime/Random.h"
#include "gnnc/runtime/cuda/DeviceOps.h"

#include <cuda_runtime.h>

#include <cstdint>

/// How many iterations of an edge loop a generated kernel unrolls
/// (`#pragma unroll rt::cuda::kEdgeUnroll`), so that the gathers of that
/// many edges are in flight at once; the edges are still summed in their
/// order. 1 waits for each edge's row before asking for the next one's.
/// Compile with -DGNNC_EDGE_UNROLL=N to change it.
#ifndef GNNC_EDGE_UNROLL
#define GNNC_EDGE_UNROLL 4
#endif

/// Whether the kernels that can (gnnk.gpu's split_above) run each long row
/// on a block of its own, its edges shared by the block's groups
/// (docs/architecture.md, "Long rows"). Compile with -DGNNC_SPLIT_ROWS=0 for
/// one group per row, to compare.
#ifndef GNNC_SPLIT_ROWS
#define GNNC_SPLIT_ROWS 1
#endif

namespace gnnc::rt::cuda {

static_assert(GNNC_EDGE_UNROLL >= 1, "GNNC_EDGE_UNROLL must be at least 1");
inline constexpr int kEdgeUnroll = GNNC_EDGE_UNROLL;
inline constexpr bool kSplitRows = GNNC_SPLIT_ROWS != 0;

/// The rows of `g` that a kernel splitting rows of more than 2^log2Edges
/// edges runs on a block each: the first splitRows(g, k) rows of g.order.
inline int64_t splitRows(const KernelGraph &g, int log2Edges) {
  return kSplitRows ? g.rowsLongerThan(log2Edges) : 0;
}

/// Threads per block of the generated kernels (fewer when a kernel's
/// shared scratch rows allow fewer vertex groups per block).
inline constexpr int kBlockThreads = 256;

/// The threads of the calling thread's group of `lanes` (a power of two
/// <= 32) consecutive threads of its warp.
__device__ __forceinline__ unsigned groupMask(int lanes) {
  if (lanes >= 32)
    return 0xffffffffu;
  unsigned first = (threadIdx.x % 32u) / static_cast<unsigned>(lanes) *
                   static_cast<unsigned>(lanes);
  return ((1u << lanes) - 1u) << first;
}

/// The dropout mask on the host and the device (gnnc/runtime/Random.h):
/// generated kernels call rt::cuda::mixSeed and the threshold form of
/// rt::cuda::dropoutKeep, whose two constants the printer computes.
using rt::dropoutKeep;
using rt::mixSeed;

/// Four (two) consecutive floats at a 16-byte (8-byte) aligned address, in
/// one vector access.
__device__ __forceinline__ void load4(float *dst, const float *src) {
  const float4 t = *reinterpret_cast<const float4 *>(src);
  dst[0] = t.x;
  dst[1] = t.y;
  dst[2] = t.z;
  dst[3] = t.w;
}
__device__ __forceinline__ void store4(float *dst, const float *src) {
  *reinterpret_cast<float4 *>(dst) =
      make_float4(src[0], src[1], src[2], src[3]);
}
__device__ __forceinline__ void load2(float *dst, const float *src) {
  const float2 t = *reinterpret_cast<const float2 *>(src);
  dst[0] = t.x;
  dst[1] = t.y;
}
__device__ __forceinline__ void store2(float *dst, const float *src) {
  *reinterpret_cast<float2 *>(dst) = make_float2(src[0], src[1]);
}

/// The blocks of a launch over `rows` rows, `rowsPerBlock` per block.
inline int64_t blocksFor(int64_t rows, int rowsPerBlock) {
  return rows <= 0 ? 0 : (rows + rowsPerBlock - 1) / rowsPerBlock;
}

/// Launches `kernel` on `stream` with `blocks` blocks of `threads` threads
/// (nothing for 0 blocks, which CUDA would reject), and reports a failed
/// launch as an error naming `name`.
template <typename... Params, typename... Args>
Status launch(const char *name, void (*kernel)(Params...), int64_t blocks,
              int threads, cudaStream_t stream, Args... args) {
  if (blocks <= 0)
    return Status::success();
  if (blocks > 0x7fffffff)
    return Status::error(std::string(name) + ": " + std::to_string(blocks) +
                         " blocks are more than one launch can have");
#ifdef GNNC_CUDA_EMULATION
  // The arguments by value, as a launch takes them: a launch on a capturing
  // stream runs when the graph is replayed.
  gnnc_emu_note_launch(name, blocks);
  return toStatus(gnnc_emu_launch(static_cast<unsigned>(blocks),
                                  static_cast<unsigned>(threads), stream,
                                  [kernel, args...] { kernel(args...); }),
                  name, __FILE__, __LINE__);
#else
  kernel<<<static_cast<unsigned>(blocks), static_cast<unsigned>(threads), 0,
           stream>>>(args...);
  return toStatus(cudaGetLastError(), name, __FILE__, __LINE__);
#endif
}

} // namespace gnnc::rt::cuda

#endif // GNNC_RUNTIME_CUDA_KERNEL_CUH
