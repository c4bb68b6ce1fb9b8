//===- Invoke.h - Generic calls of generated entry points -------*- C++ -*-===//
//
// Part of gnnc. An Invocation calls any entry point of a generated module
// through its reflection table (Abi.h, docs/abi.md "Reflection"), without
// knowing its argument list:
//
//   rt::Invocation call;
//   rt::GraphArgs graphs;
//   graphs.graph = &g;                   // Graph and Block arguments
//   GNNC_TRY(call.bind(entry, graphs));  // shapes, workspace size
//   for (int i = 0; i < entry.numArgs; ++i)
//     call.setInput(i, ...);             // call.argElements(i) floats
//   for (int i = 0; i < entry.numResults; ++i)
//     call.setOutput(i, ...);            // call.resultElements(i) floats
//   GNNC_TRY(call.allocateWorkspace());  // or setWorkspace(yours)
//   GNNC_TRY(call.call(training, seed));
//
// bind() passes each graph argument the graph of its kind (GraphKind), asks
// the entry point for the shape of every argument and result and for its
// workspace size; call() checks that every input and the workspace are
// bound and calls the entry point. Outputs may be null where the entry
// point allows it (the gradient of an input, docs/abi.md).
//
// The same template serves generated CUDA (rt::cuda::Invocation,
// gnnc/runtime/cuda/Invoke.h): device graphs, device pointers, a device
// workspace, and a stream as call()'s last argument.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_RUNTIME_INVOKE_H
#define GNNC_RUNTIME_INVOKE_H

#include "gnnc/runtime/Abi.h"
#include "gnnc/runtime/Graph.h"
#include "gnnc/runtime/Status.h"

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace gnnc::rt {

/// The entry point called `name` of `module`, or null.
template <typename Entry>
const Entry *lookupEntry(const BasicModuleInfo<Entry> &module,
                         std::string_view name) {
  for (int i = 0; i < module.numEntries; ++i)
    if (name == module.entries[i].name)
      return &module.entries[i];
  return nullptr;
}

/// The graphs a generic call may pass, one per kind: `graph` to the Graph
/// and Block arguments, `batched` to the Batched ones, `hetero` to the
/// Hetero ones. Null where the entry point takes no argument of the kind.
/// The objects must outlive the calls.
template <typename GraphT, typename BatchedT, typename HeteroT>
struct BasicGraphArgs {
  const GraphT *graph = nullptr;
  const BatchedT *batched = nullptr;
  const HeteroT *hetero = nullptr;
};

namespace detail {

/// The part of an Invocation that does not depend on the flavour (C++ or
/// CUDA): the bound graphs, sizes, shapes and pointers, and the checks.
class InvocationBase {
public:
  /// The dimensions of every argument and every result, in the order of
  /// EntryInfo::args and EntryInfo::results.
  const std::vector<std::vector<int64_t>> &argShapes() const {
    return ArgShapes;
  }
  const std::vector<std::vector<int64_t>> &resultShapes() const {
    return ResultShapes;
  }
  /// The element counts of argument / result `i`.
  int64_t argElements(int i) const { return ArgElements[i]; }
  int64_t resultElements(int i) const { return ResultElements[i]; }
  /// The bytes of workspace a call needs (a multiple of kWorkspaceAlign).
  std::size_t workspaceBytes() const { return WorkspaceBytes; }

  /// The data of tensor argument `i` (argElements(i) floats) and of result
  /// `i` (resultElements(i) floats); unbound (null) after bind().
  void setInput(int i, const float *data) { Inputs[i] = data; }
  void setOutput(int i, float *data) { Outputs[i] = data; }
  const float *input(int i) const { return Inputs[i]; }
  float *output(int i) const { return Outputs[i]; }

  /// Uses the caller's `workspace`: at least workspaceBytes() bytes,
  /// 64-byte aligned, in the memory of the flavour, alive during the calls
  /// (one buffer can serve several entry points called one after another).
  void setWorkspace(void *workspace) { Workspace = workspace; }
  void *workspace() const { return Workspace; }

protected:
  /// The fields of an EntryInfo that do not depend on the flavour.
  struct EntryView {
    const char *name;
    int numGraphs;
    const GraphKind *graphKinds;
    int numSizes;
    int numArgs;
    const TensorInfo *args;
    int numResults;
    const TensorInfo *results;
  };
  template <typename Entry> static EntryView viewOf(const Entry &e) {
    return {e.name,    e.numGraphs, e.graphKinds, e.numSizes,
            e.numArgs, e.args,      e.numResults, e.results};
  }

  /// Resets the invocation and binds the graph arguments of `entry` and its
  /// explicit sizes.
  Status bindGraphs(const EntryView &entry, const void *graph,
                    const void *batched, const void *hetero,
                    std::vector<int64_t> sizes);
  /// The dimensions EntryInfo::shapes writes for `entry`, one more.
  static std::size_t numDims(const EntryView &entry);
  /// Takes the shapes from `dims` and the workspace size; unbinds every
  /// tensor.
  Status takeShapes(const EntryView &entry, const std::vector<int64_t> &dims,
                    std::size_t workspaceBytes);
  /// Checks that the entry point is bound, and its inputs and workspace.
  Status checkCall() const;

  EntryView Entry{};
  bool Bound = false;
  std::vector<const void *> Graphs;
  std::vector<int64_t> Sizes;
  std::vector<std::vector<int64_t>> ArgShapes, ResultShapes;
  std::vector<int64_t> ArgElements, ResultElements;
  std::vector<const float *> Inputs;
  std::vector<float *> Outputs;
  std::size_t WorkspaceBytes = 0;
  void *Workspace = nullptr;
};

} // namespace detail

/// A generic call of one entry point of a generated module. `Flavour`
/// names the reflection types and the memory (HostFlavour below, or
/// rt::cuda::CudaFlavour):
///
///   EntryInfo   BasicEntryInfo<...> of the flavour
///   GraphArgs   BasicGraphArgs<...> of the flavour's graphs
///   Stream      what call() passes in CallArgs besides the host fields
///   Buffer      owning memory with data()
///   static void setStream(EntryInfo::CallArgs &, Stream)
///   static Status allocateWorkspace(std::size_t bytes, Buffer &out)
///
/// Movable, not copyable. Not thread-safe; several invocations of one entry
/// point may run in parallel on separate workspaces.
template <typename Flavour>
class BasicInvocation : public detail::InvocationBase {
public:
  using EntryInfo = typename Flavour::EntryInfo;
  using CallArgs = typename EntryInfo::CallArgs;
  using GraphArgs = typename Flavour::GraphArgs;
  using Stream = typename Flavour::Stream;

  BasicInvocation() = default;
  BasicInvocation(BasicInvocation &&) = default;
  BasicInvocation &operator=(BasicInvocation &&) = default;
  BasicInvocation(const BasicInvocation &) = delete;
  BasicInvocation &operator=(const BasicInvocation &) = delete;

  /// Binds `entry` (which must outlive the invocation) to `graphs` and the
  /// explicit sizes `sizes` (EntryInfo::sizeNames, in order), and computes
  /// the shape of every argument and result and the workspace size. Fails
  /// when a graph argument has no graph of its kind in `graphs`, when the
  /// number of sizes differs, or when the workspace size is not a multiple
  /// of kWorkspaceAlign. Unbinds every tensor and the workspace.
  Status bind(const EntryInfo &entry, const GraphArgs &graphs,
              std::vector<int64_t> sizes = {}) {
    EntryPoint = nullptr;
    EntryView view = viewOf(entry);
    GNNC_TRY(bindGraphs(view, graphs.graph, graphs.batched, graphs.hetero,
                        std::move(sizes)));
    CallArgs args = callArgs(false, 0);
    std::vector<int64_t> dims(numDims(view), 0);
    entry.shapes(args, dims.data());
    GNNC_TRY(takeShapes(view, dims, entry.workspaceBytes(args)));
    EntryPoint = &entry;
    return Status::success();
  }

  /// The bound entry point (bind() succeeded).
  const EntryInfo &entry() const { return *EntryPoint; }

  /// Allocates a workspace of workspaceBytes() bytes, 64-byte aligned and
  /// zero-filled, in the flavour's memory, owned by the invocation.
  Status allocateWorkspace() {
    Workspace = nullptr;
    GNNC_TRY(Flavour::allocateWorkspace(WorkspaceBytes, Owned));
    Workspace = Owned.data();
    return Status::success();
  }

  /// The arguments of a call: the bound graphs, sizes, tensors and
  /// workspace, and `training`, `seed` and `stream`.
  CallArgs callArgs(bool training, uint64_t seed,
                    Stream stream = Stream()) const {
    CallArgs a{};
    a.graphs = Graphs.data();
    a.sizes = Sizes.data();
    a.inputs = Inputs.data();
    a.outputs = Outputs.data();
    a.workspace = Workspace;
    a.training = training;
    a.seed = seed;
    Flavour::setStream(a, stream);
    return a;
  }

  /// Calls the entry point (for CUDA: queues it on `stream`) after checking
  /// that it is bound, that every input with elements is bound, and that a
  /// workspace of 64-byte alignment is there when one is needed. Returns
  /// the entry point's Status.
  Status call(bool training, uint64_t seed, Stream stream = Stream()) const {
    GNNC_TRY(checkCall());
    return EntryPoint->call(callArgs(training, seed, stream));
  }

private:
  const EntryInfo *EntryPoint = nullptr;
  typename Flavour::Buffer Owned;
};

/// Host memory from std::aligned_alloc (kWorkspaceAlign), freed with the
/// object; movable.
class HostBuffer {
public:
  HostBuffer() = default;
  HostBuffer(HostBuffer &&other) noexcept;
  HostBuffer &operator=(HostBuffer &&other) noexcept;
  HostBuffer(const HostBuffer &) = delete;
  HostBuffer &operator=(const HostBuffer &) = delete;
  ~HostBuffer();

  /// `bytes` of zero-filled memory (none for 0); `out` is only written on
  /// success.
  static Status allocate(std::size_t bytes, HostBuffer &out);

  void *data() const { return Data; }
  std::size_t size() const { return Bytes; }

private:
  void *Data = nullptr;
  std::size_t Bytes = 0;
};

/// The flavour of generated C++: host graphs, host memory, no stream.
struct HostFlavour {
  using EntryInfo = rt::EntryInfo;
  using GraphArgs = BasicGraphArgs<Graph, BatchedGraph, HeteroGraph>;
  /// Generated C++ takes no stream.
  struct Stream {};
  using Buffer = HostBuffer;
  static void setStream(rt::CallArgs &, Stream) {}
  static Status allocateWorkspace(std::size_t bytes, HostBuffer &out) {
    return HostBuffer::allocate(bytes, out);
  }
};

/// The graphs and the invocation of generated C++.
using GraphArgs = HostFlavour::GraphArgs;
using Invocation = BasicInvocation<HostFlavour>;

} // namespace gnnc::rt

#endif // GNNC_RUNTIME_INVOKE_H
