// Part of gnnc. The C interface between gnnc.torch's PyTorch extension
// (torch_glue.cpp) and gnnc's CUDA runtime: device graphs, and the calls of
// CUDA modules (what `gnnc --target=cuda --emit=cuda` prints, compiled by
// nvcc) on PyTorch's current stream.
//
// Compiled like the runtime (see bridge.cpp for why nothing with a
// std::string crosses to the extension), with the CUDA toolkit's headers,
// and linked with gnnc's CUDA runtime, the CUDA runtime library and cuBLAS.
// The extension, built without CUDA, passes streams as `void *` and the
// entry points of CUDA modules as the `const void *` this file casts back
// to rt::cuda::EntryInfo.

#include "bridge_util.h"

#include "gnnc/runtime/Graph.h"
#include "gnnc/runtime/cuda/Abi.h"
#include "gnnc/runtime/cuda/Device.h"

#include <cstdint>
#include <cstring>
#include <new>
#include <string>

namespace rt = gnnc::rt;
namespace cuda = gnnc::rt::cuda;

using gnnc_torch::fail;

namespace {
/// The CUDA call arguments: the extension's rt::CallArgs and the stream.
cuda::CallArgs withStream(const rt::CallArgs *args, void *stream) {
  cuda::CallArgs a;
  static_cast<rt::CallArgs &>(a) = *args;
  a.stream = static_cast<cudaStream_t>(stream);
  return a;
}

const cuda::EntryInfo &entryOf(const void *entry) {
  return *static_cast<const cuda::EntryInfo *>(entry);
}
} // namespace

extern "C" {

/// Uploads the host graph `graph` (an rt::Graph built by bridge.cpp's
/// gnnc_bridge_graph_new, compiled alike) to the current device on
/// `stream`, and waits for it; null with the message in `err`.
void *gnnc_cuda_bridge_graph_upload(const void *graph, void *stream, char *err,
                                    size_t errLen) {
  return gnnc_torch::makeOrFail<cuda::DeviceGraph>(
      [&](cuda::DeviceGraph &d) {
        return cuda::DeviceGraph::upload(*static_cast<const rt::Graph *>(graph),
                                         static_cast<cudaStream_t>(stream), d);
      },
      err, errLen);
}

void gnnc_cuda_bridge_graph_free(void *graph) {
  delete static_cast<cuda::DeviceGraph *>(graph);
}

/// The dimensions of every argument and result of `entry` (a
/// cuda::EntryInfo) for the graphs and sizes of `args`.
void gnnc_cuda_bridge_shapes(const void *entry, const rt::CallArgs *args,
                             int64_t *dims) {
  entryOf(entry).shapes(withStream(args, nullptr), dims);
}

size_t gnnc_cuda_bridge_workspace_bytes(const void *entry,
                                        const rt::CallArgs *args) {
  return entryOf(entry).workspaceBytes(withStream(args, nullptr));
}

/// Calls `entry` on `stream` (queued, not waited for).
int gnnc_cuda_bridge_call(const void *entry, const rt::CallArgs *args,
                          void *stream, char *err, size_t errLen) {
  rt::Status st = entryOf(entry).call(withStream(args, stream));
  return st.ok() ? 0 : fail(st.message(), err, errLen);
}

int gnnc_cuda_bridge_abi_version() { return rt::kAbiVersion; }

} // extern "C"
