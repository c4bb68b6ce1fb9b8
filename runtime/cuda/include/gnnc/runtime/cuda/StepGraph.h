//===- StepGraph.h - A training step captured as a CUDA graph ---*- C++ -*-===//
//
// Part of gnnc. With fixed-size mini-batches (every batch padded to the same
// vertex and edge counts per block), a training step of generated CUDA has
// the same shapes and the same device pointers every time, so it can be
// captured once with stream capture and replayed as a CUDA graph, each new
// batch having been copied into the same device memory first
// (DeviceGraph::assign, DeviceTensor::assign):
//
//   rt::cuda::StepGraph step;
//   GNNC_TRY(step.capture(stream, [&](cudaStream_t s) -> rt::Status {
//     GNNC_TRY(Model_train(g1, g2, x, params, out, saved, ws, true, seed, s));
//     GNNC_TRY(lossGradient(out, labels, cotangent, s));
//     GNNC_TRY(Model_backward(g1, g2, x, saved, cotangent, params, gradX,
//                             grads, wsBackward, true, seed, s));
//     return sgd(params, grads, s);
//   }));
//   for (each batch) {
//     GNNC_TRY(g1.assign(batch.g1, stream)); // same sizes as at the capture
//     GNNC_TRY(g2.assign(batch.g2, stream));
//     GNNC_TRY(x.assign(batch.x.data(), x.shape(), stream));
//     GNNC_TRY(step.replay(stream));
//   }
//
// Capturing records the step's work instead of running it. What holds for
// the step: it queues its work on the stream it is given (or on streams
// joined back into it), allocates nothing and does not synchronise (the
// workspaces, the saved buffer, outputs and gradients are allocated before
// the capture), and takes everything that changes between steps from device
// memory: host values given to the step (a dropout seed, a learning rate)
// are those of the capture in every replay.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_RUNTIME_CUDA_STEPGRAPH_H
#define GNNC_RUNTIME_CUDA_STEPGRAPH_H

#include "gnnc/runtime/Status.h"

#include <cuda_runtime_api.h>

#include <functional>

namespace gnnc::rt::cuda {

/// Makes what the device operations (DeviceOps.h) need to be captured on
/// `stream` from this thread on the current device, which they cannot make
/// during a capture: the thread's cuBLAS handle, and the cuBLAS workspace of
/// `stream` (4 MiB, 32 MiB from compute capability 9.0, the size of
/// cuBLAS's default one; a matmul on a stream that is not captured makes it
/// itself), which every later matmul on `stream` from this thread uses,
/// captured or not. StepGraph's capture calls it; a step
/// captured another way calls it first. The graphs captured on one stream
/// share its workspace: replay them one at a time.
Status prepareCapture(cudaStream_t stream);

/// A step captured once as a CUDA graph and replayed. Owns the graph and its
/// instantiation (freed by the destructor); movable, not copyable.
class StepGraph {
public:
  StepGraph() = default;
  StepGraph(StepGraph &&other) noexcept;
  StepGraph &operator=(StepGraph &&other) noexcept;
  StepGraph(const StepGraph &) = delete;
  StepGraph &operator=(const StepGraph &) = delete;
  ~StepGraph();

  /// Calls prepareCapture(stream), then `step(stream)` between
  /// cudaStreamBeginCapture and cudaStreamEndCapture, and instantiates the
  /// graph. `stream` is one of the caller's (cudaStreamCreate): the legacy
  /// default stream cannot be captured. Fails when the step fails, or when
  /// it did something a capture cannot record (an allocation, a synchronous
  /// copy, a synchronisation: the CUDA error says which), or when capturing
  /// or instantiating fails; the error names the CUDA error. On success it
  /// replaces what was captured before; on failure it keeps it. `mode` is
  /// the capture mode: thread-local by default, so that other threads (a
  /// loader) may allocate while this one captures.
  Status capture(cudaStream_t stream,
                 const std::function<Status(cudaStream_t)> &step,
                 cudaStreamCaptureMode mode = cudaStreamCaptureModeThreadLocal);

  /// Queues the captured step on `stream` (cudaGraphLaunch), without
  /// waiting for it.
  Status replay(cudaStream_t stream) const;

  /// Whether a step has been captured.
  bool captured() const { return Exec != nullptr; }
  /// Frees the captured step.
  void reset();

private:
  cudaGraph_t Graph = nullptr;
  cudaGraphExec_t Exec = nullptr;
};

} // namespace gnnc::rt::cuda

#endif // GNNC_RUNTIME_CUDA_STEPGRAPH_H
