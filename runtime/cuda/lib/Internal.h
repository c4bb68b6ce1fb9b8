//===- Internal.h - Shared pieces of the CUDA runtime's implementations -===//
//
// Part of gnnc. Host-side helpers of runtime/cuda used by the CUDA
// implementation (Device.cu, DeviceOps.cu) and by the host emulation of the
// tests (tests/Target/Exec/emu), so that both check and lay out graphs alike.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_RUNTIME_CUDA_LIB_INTERNAL_H
#define GNNC_RUNTIME_CUDA_LIB_INTERNAL_H

#include "gnnc/runtime/cuda/Device.h"

#include <cstdint>
#include <vector>

namespace gnnc::rt::cuda::detail {

/// The host arrays of a DeviceGraph: both layouts and the edge list with
/// 32-bit ids, after checking the host graph's layouts and the 32-bit
/// limits.
struct HostLayout {
  std::vector<int64_t> inPtr, outPtr;
  std::vector<int32_t> inSrc, inEdge, outDst, outEdge, edgeSrc, edgeDst;
};
Status layoutForDevice(const Graph &g, HostLayout &out);

/// Checks what layoutForDevice checks (both host layouts, the 32-bit
/// limits) without building anything.
Status checkForDevice(const Graph &g);
/// Writes the 32-bit ids of `in` to `out` (in.size() entries).
void narrowInto(const std::vector<int64_t> &in, int32_t *out);

/// The rows of a layout by descending degree (stable: equal degrees by
/// increasing id), as DeviceGraph::upload sorts them on the device.
std::vector<int32_t> degreeOrder(const std::vector<int64_t> &ptr);
/// The same order written to `order` (ptr.size() - 1 entries).
void degreeOrderInto(const std::vector<int64_t> &ptr, int32_t *order);
/// KernelGraph::rowsOver of a layout: out[k] is the number of rows with
/// more than 2^k edges (KernelGraph::kRowsOverSize entries).
void rowsOverInto(const std::vector<int64_t> &ptr, int64_t *out);

/// What DeviceGraph::assign checks before it changes anything: `stream` is
/// not capturing, `g` has the sizes of `d`, and `g` passes checkForDevice.
Status checkAssign(const DeviceGraph &d, const Graph &g, cudaStream_t stream);
/// An error when `stream` is capturing (`what` is not captured: it is
/// called before a replay).
Status checkNotCapturing(const char *what, cudaStream_t stream);

/// Sets the private fields of a DeviceGraph.
struct DeviceGraphBuilder {
  static void set(DeviceGraph &g, std::shared_ptr<void> storage, int64_t numSrc,
                  int64_t numDst, int64_t numEdges, const KernelGraph &in,
                  const KernelGraph &out, const int32_t *edgeSrc,
                  const int32_t *edgeDst);
  static const std::shared_ptr<void> &storage(const DeviceGraph &g);
};

/// Checks a host batch against the DeviceGraph it is uploaded with.
Status checkBatchForDevice(const BatchedGraph &g, const DeviceGraph &graph);

} // namespace gnnc::rt::cuda::detail

#endif // GNNC_RUNTIME_CUDA_LIB_INTERNAL_H
