//===- Abi.h - Reflection tables of generated CUDA modules ------*- C++ -*-===//
//
// Part of gnnc. The reflection tables of modules printed by `gnnc
// --emit=cuda` (docs/abi.md, "CUDA"): rt::EntryInfo and rt::ModuleInfo
// (gnnc/runtime/Abi.h) over CUDA call arguments, which are those of
// generated C++ with device graphs (DeviceGraph, DeviceBatchedGraph,
// DeviceHeteroGraph), device memory, and a stream.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_RUNTIME_CUDA_ABI_H
#define GNNC_RUNTIME_CUDA_ABI_H

#include "gnnc/runtime/Abi.h"

#include <cuda_runtime_api.h>

namespace gnnc::rt::cuda {

/// Arguments of a generic call of a CUDA entry point: the fields of
/// rt::CallArgs, where `graphs[i]` points to a DeviceGraph,
/// DeviceBatchedGraph or DeviceHeteroGraph (EntryInfo::graphKinds[i]) and
/// the tensors and the workspace are in device memory, and the stream the
/// call queues its work on.
struct CallArgs : rt::CallArgs {
  cudaStream_t stream;
};

/// One entry point of a generated CUDA module, and the module.
using EntryInfo = rt::BasicEntryInfo<CallArgs>;
using ModuleInfo = rt::BasicModuleInfo<EntryInfo>;

} // namespace gnnc::rt::cuda

#endif // GNNC_RUNTIME_CUDA_ABI_H
