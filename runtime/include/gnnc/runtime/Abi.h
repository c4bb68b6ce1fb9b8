//===- Abi.h - Reflection tables of generated modules -----------*- C++ -*-===//
//
// Part of gnnc. The declarations of the ABI of generated code (docs/abi.md)
// that do not depend on a device: its version, the largest tensor rank, the
// workspace alignment and layout helpers, the shape and side arguments of
// the host and device operations, and the reflection tables
// (ModuleInfo, EntryInfo, TensorInfo, CallArgs) through which a program can
// call any generated entry point generically (gnnc/runtime/Invoke.h does
// it).
//
// Generated C++ uses rt::ModuleInfo, rt::EntryInfo and rt::CallArgs;
// generated CUDA uses the same tables over its own call arguments,
// rt::cuda::CallArgs (an rt::CallArgs with a stream;
// gnnc/runtime/cuda/DeviceOps.h). Header-only (the gnnc_abi target).
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_RUNTIME_ABI_H
#define GNNC_RUNTIME_ABI_H

#include "gnnc/runtime/Status.h"

#include <cstddef>
#include <cstdint>
#include <initializer_list>

namespace gnnc::rt {

/// The version of the ABI of generated code that this runtime implements
/// (docs/abi.md); generated headers define GNNC_ABI_VERSION and check it.
inline constexpr int kAbiVersion = 2;

/// Largest rank of a tensor in generated code.
inline constexpr int kMaxRank = 8;

//===----------------------------------------------------------------------===//
// Workspaces
//===----------------------------------------------------------------------===//

/// Alignment of every buffer generated code carves out of a workspace.
inline constexpr std::size_t kWorkspaceAlign = 64;

/// `bytes` rounded up to kWorkspaceAlign (0 for a negative count).
inline constexpr std::size_t alignUp(int64_t bytes) {
  return bytes <= 0 ? 0
                    : (static_cast<std::size_t>(bytes) + kWorkspaceAlign - 1) /
                          kWorkspaceAlign * kWorkspaceAlign;
}

/// Places the buffers of one workspace: each buffer is live between two
/// ops (positions in the function's body), and takes the lowest offset
/// where it overlaps no buffer placed before it that is live at the same
/// time (first fit, in the order of placement). Generated layouts run it
/// in their constructor, so the sizes may depend on the graph.
template <int Capacity> class WorkspacePlan {
public:
  /// The offset of a buffer of `bytes` (a multiple of kWorkspaceAlign) live
  /// from op `first` to op `last`.
  std::size_t place(std::size_t bytes, unsigned first, unsigned last) {
    std::size_t at = 0;
    // Candidates: 0 and the end of every buffer live at the same time, in
    // increasing order; the first that collides with nothing wins.
    for (bool moved = true; moved;) {
      moved = false;
      for (int i = 0; i < count; ++i) {
        bool sameTime = First[i] <= last && first <= Last[i];
        bool overlap = at < Offset[i] + Size[i] && Offset[i] < at + bytes;
        if (sameTime && overlap && bytes > 0 && Size[i] > 0) {
          at = Offset[i] + Size[i];
          moved = true;
        }
      }
    }
    if (count < Capacity) {
      Offset[count] = at;
      Size[count] = bytes;
      First[count] = first;
      Last[count] = last;
      ++count;
    }
    if (at + bytes > Total)
      Total = at + bytes;
    return at;
  }
  /// The bytes the workspace needs.
  std::size_t total() const { return Total; }

private:
  std::size_t Offset[Capacity] = {}, Size[Capacity] = {};
  unsigned First[Capacity] = {}, Last[Capacity] = {};
  int count = 0;
  std::size_t Total = 0;
};

/// The buffer at byte `offset` of `workspace`.
inline void *wsBytes(void *workspace, std::size_t offset) {
  return static_cast<char *>(workspace) + offset;
}
inline float *wsFloats(void *workspace, std::size_t offset) {
  return static_cast<float *>(wsBytes(workspace, offset));
}
inline int64_t *wsInt64s(void *workspace, std::size_t offset) {
  return static_cast<int64_t *>(wsBytes(workspace, offset));
}

//===----------------------------------------------------------------------===//
// Arguments of the operations (Ops.h, cuda/DeviceOps.h)
//===----------------------------------------------------------------------===//

/// A full tensor shape (vertex or edge axis first for row tensors), passed by
/// value to the broadcasting operations.
struct Shape {
  int rank = 0;
  int64_t dims[kMaxRank] = {};

  Shape() = default;
  Shape(std::initializer_list<int64_t> list) {
    for (int64_t d : list)
      if (rank < kMaxRank)
        dims[rank++] = d;
  }
  int64_t numElements() const {
    int64_t n = 1;
    for (int i = 0; i < rank; ++i)
      n *= dims[i];
    return n;
  }
};

/// Which end groups the edges: destinations (CSR, in-edges) or sources
/// (CSC, out-edges).
enum class Side { Dst, Src };

//===----------------------------------------------------------------------===//
// Reflection (docs/abi.md)
//===----------------------------------------------------------------------===//

/// The kind of a function's graph arguments.
enum class GraphKind { Graph, Block, Batched, Hetero };

/// A tensor argument or result of an entry point.
struct TensorInfo {
  /// The argument's name or parameter path ("conv1.W"); for results, the
  /// result's name ("out"), or for a gradient the name or path of the
  /// argument it is the gradient of (gnn.grad_of), for a saved value its
  /// name (gnn.saved).
  const char *name;
  /// "input", "param", "buffer" (a parameter that is not trained, which a
  /// training forward updates in place: batch_norm's running statistics),
  /// "output", "grad" or "saved".
  const char *role;
  /// The initialiser of a parameter or buffer ("glorot", ...); "" otherwise.
  const char *init;
  int rank;
  /// The dimensions: a number, or a size symbol (N, N_src, N_dst, E, B,
  /// E_<relation>, an explicit size), possibly times a number ("8*N").
  const char *dims[kMaxRank];
};

/// Arguments of a generic call of a C++ entry point: `graphs[i]` points to
/// a Graph, BatchedGraph or HeteroGraph (EntryInfo::graphKinds[i]); `sizes`
/// are the explicit sizes (EntryInfo::sizeNames); `inputs` every tensor
/// argument (inputs and parameters) in argument order; `outputs` every
/// result. A CUDA entry point takes rt::cuda::CallArgs: these fields, with
/// device graphs and device memory, and a stream.
struct CallArgs {
  const void *const *graphs;
  const int64_t *sizes;
  const float *const *inputs;
  float *const *outputs;
  void *workspace;
  bool training;
  uint64_t seed;
};

/// One entry point of a generated module, called with `Args` (CallArgs for
/// generated C++, rt::cuda::CallArgs for generated CUDA).
template <typename Args> struct BasicEntryInfo {
  /// The call arguments of this flavour.
  using CallArgs = Args;

  /// The function's name in the IR ("GCN.conv1") and in C++ ("GCN_conv1").
  const char *name;
  const char *symbol;
  /// "layer", "model", "backward", "train" or "".
  const char *kind;
  int numGraphs;
  const GraphKind *graphKinds;
  int numSizes;
  const char *const *sizeNames;
  int numArgs;
  const TensorInfo *args;
  int numResults;
  const TensorInfo *results;
  /// Calls the entry point.
  Status (*call)(const Args &args);
  /// Its workspace size (reads graphs and sizes only).
  std::size_t (*workspaceBytes)(const Args &args);
  /// The dimensions of every argument, then of every result, one after the
  /// other (reads graphs and sizes only).
  void (*shapes)(const Args &args, int64_t *dims);
};

/// A generated module: what it was compiled from, and its entry points.
template <typename Entry> struct BasicModuleInfo {
  int abiVersion;
  /// The .gnn file, the --entry (or ""), the -D definitions ("name=value"),
  /// and whether it was compiled with --training.
  const char *source;
  const char *entry;
  int numDefines;
  const char *const *defines;
  bool training;
  int numEntries;
  const Entry *entries;
};

/// The reflection tables of generated C++.
using EntryInfo = BasicEntryInfo<CallArgs>;
using ModuleInfo = BasicModuleInfo<EntryInfo>;

} // namespace gnnc::rt

#endif // GNNC_RUNTIME_ABI_H
