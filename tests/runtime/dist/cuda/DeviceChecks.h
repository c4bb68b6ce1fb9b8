//===- DeviceChecks.h - Device tensor checks on any communicator -*- C++
//-*-===//
//
// Part of gnnc's tests. Collective checks of device tensors, run by every
// rank of a communicator (threads, MPI or NCCL), each result compared with
// a reference table computed locally. A mismatch does not end a check
// early: the collectives of every rank stay in step, and the first
// mismatch is returned at the end.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_TESTS_DIST_CUDA_DEVICECHECKS_H
#define GNNC_TESTS_DIST_CUDA_DEVICECHECKS_H

#include "gnnc/dist/DistTensor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace gnnc::dist::devtest {

/// What one check creates.
struct DeviceCase {
  MemoryType Type = MemoryType::Distributed;
  int64_t Rows = 10;
  /// 0: a 1-D tensor.
  int64_t Cols = 3;
  /// Empty: blocks.
  std::vector<int64_t> RowsPerRank;
};

/// On a float32 (2-D) or int64 (1-D) device tensor: zeroed creation,
/// scatter of every rank's share, gather with duplicates and an empty
/// gather, scatter with duplicate indices (the last occurrence wins), the
/// local view and, for continuous tensors, the global range, localBytes,
/// out-of-range indices in gather and scatter (every rank fails, the
/// message names the index and its position) and, when `tempDir` is not
/// empty (a folder every rank can write), loadNpy and storeNpy.
Status checkDeviceTensor(Communicator &comm, const DeviceCase &c,
                         const std::string &tempDir);

/// Collectives of a NCCL communicator of one rank on device buffers and on
/// host buffers, and its split.
Status checkNcclWorldOfOne(Communicator &nccl);

} // namespace gnnc::dist::devtest

#endif // GNNC_TESTS_DIST_CUDA_DEVICECHECKS_H
