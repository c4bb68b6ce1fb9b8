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

/// The rows of a layout by descending degree (stable: equal degrees by
/// increasing id), as DeviceGraph::upload sorts them on the device.
std::vector<int32_t> degreeOrder(const std::vector<int64_t> &ptr);

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
