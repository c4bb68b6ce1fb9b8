//===- StepGraph.cpp - A training step captured as a CUDA graph -----------===//
//
// Part of gnnc. Stream capture around a step, instantiation and replay
// (StepGraph.h). Plain C++ against the CUDA runtime API (also compiled, by
// the tests, against its host emulation).
//
//===----------------------------------------------------------------------===//

#include "gnnc/runtime/cuda/StepGraph.h"

#include "gnnc/runtime/cuda/Device.h"

#include <string>
#include <utility>

using namespace gnnc::rt;
using namespace gnnc::rt::cuda;

namespace {

constexpr const char *kWhatCaptures =
    "a captured step allocates nothing, copies nothing synchronously and "
    "does not synchronise; it queues its work on the stream it is given "
    "(docs/abi.md, \"CUDA graphs of a training step\")";

} // namespace

StepGraph::StepGraph(StepGraph &&other) noexcept
    : Graph(std::exchange(other.Graph, nullptr)),
      Exec(std::exchange(other.Exec, nullptr)) {}

StepGraph &StepGraph::operator=(StepGraph &&other) noexcept {
  if (this != &other) {
    reset();
    Graph = std::exchange(other.Graph, nullptr);
    Exec = std::exchange(other.Exec, nullptr);
  }
  return *this;
}

StepGraph::~StepGraph() { reset(); }

void StepGraph::reset() {
  if (Exec)
    (void)cudaGraphExecDestroy(Exec);
  if (Graph)
    (void)cudaGraphDestroy(Graph);
  Exec = nullptr;
  Graph = nullptr;
}

Status StepGraph::capture(cudaStream_t stream,
                          const std::function<Status(cudaStream_t)> &step,
                          cudaStreamCaptureMode mode) {
  if (!stream)
    return Status::error("StepGraph::capture: the default stream cannot be "
                         "captured; capture on a stream of your own "
                         "(cudaStreamCreate)");
  GNNC_TRY(prepareCapture(stream));
  GNNC_CUDA_CHECK(cudaStreamBeginCapture(stream, mode));
  Status stepStatus = step(stream);
  // The capture ends whatever the step did, so that the stream is usable
  // again.
  cudaGraph_t graph = nullptr;
  cudaError_t ended = cudaStreamEndCapture(stream, &graph);
  if (!stepStatus.ok() || ended != cudaSuccess) {
    if (graph)
      (void)cudaGraphDestroy(graph);
    std::string message = "StepGraph::capture: ";
    if (!stepStatus.ok())
      message += "the step failed: " + stepStatus.message();
    if (ended != cudaSuccess) {
      if (!stepStatus.ok())
        message += "; ";
      message +=
          toStatus(ended, "cudaStreamEndCapture", __FILE__, __LINE__).message();
    }
    // The last error of this thread is the capture's: clear it.
    (void)cudaGetLastError();
    if (ended != cudaSuccess)
      message += std::string(" (") + kWhatCaptures + ")";
    return Status::error(message);
  }
  cudaGraphExec_t exec = nullptr;
  if (cudaError_t err = cudaGraphInstantiate(&exec, graph, 0);
      err != cudaSuccess) {
    (void)cudaGraphDestroy(graph);
    return toStatus(err, "StepGraph::capture: cudaGraphInstantiate", __FILE__,
                    __LINE__);
  }
  reset();
  Graph = graph;
  Exec = exec;
  return Status::success();
}

Status StepGraph::replay(cudaStream_t stream) const {
  if (!Exec)
    return Status::error("StepGraph::replay: no step has been captured");
  GNNC_CUDA_CHECK(cudaGraphLaunch(Exec, stream));
  return Status::success();
}
