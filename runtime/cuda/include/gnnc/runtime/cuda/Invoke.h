//===- Invoke.h - Generic calls of generated CUDA entry points --*- C++ -*-===//
//
// Part of gnnc. rt::BasicInvocation (gnnc/runtime/Invoke.h) for modules
// printed by `gnnc --emit=cuda`: the graphs are device graphs, the tensors
// and the workspace device memory, and call() queues the entry point on a
// stream:
//
//   rt::cuda::Invocation call;
//   rt::cuda::GraphArgs graphs;
//   graphs.graph = &deviceGraph;
//   GNNC_TRY(call.bind(entry, graphs));
//   ... call.setInput(i, devicePointer), call.setOutput(i, devicePointer)
//   GNNC_TRY(call.allocateWorkspace()); // or setWorkspace(yours)
//   GNNC_TRY(call.call(training, seed, stream));
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_RUNTIME_CUDA_INVOKE_H
#define GNNC_RUNTIME_CUDA_INVOKE_H

#include "gnnc/runtime/Invoke.h"
#include "gnnc/runtime/cuda/Abi.h"
#include "gnnc/runtime/cuda/Device.h"

#include <cuda_runtime_api.h>

#include <cstddef>

namespace gnnc::rt::cuda {

/// The flavour of generated CUDA: device graphs, device memory, a stream.
struct CudaFlavour {
  using EntryInfo = cuda::EntryInfo;
  using GraphArgs =
      rt::BasicGraphArgs<DeviceGraph, DeviceBatchedGraph, DeviceHeteroGraph>;
  using Stream = cudaStream_t;
  using Buffer = DeviceBuffer;
  static void setStream(CallArgs &args, cudaStream_t stream) {
    args.stream = stream;
  }
  /// `bytes` of device memory (cudaMalloc: 256-byte aligned), zero-filled.
  static Status allocateWorkspace(std::size_t bytes, DeviceBuffer &out);
};

/// The graphs and the invocation of generated CUDA.
using GraphArgs = CudaFlavour::GraphArgs;
using Invocation = rt::BasicInvocation<CudaFlavour>;

} // namespace gnnc::rt::cuda

#endif // GNNC_RUNTIME_CUDA_INVOKE_H
