//===- Invoke.cpp - Generic calls of generated entry points ---------------===//
//
// Part of gnnc. The flavour-independent part of rt::BasicInvocation, and
// host memory.
//
//===----------------------------------------------------------------------===//

#include "gnnc/runtime/Invoke.h"

#include <fmt/format.h>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <utility>

using namespace gnnc::rt;
using gnnc::rt::detail::InvocationBase;

namespace {

const char *kindName(GraphKind kind) {
  switch (kind) {
  case GraphKind::Graph:
    return "graph";
  case GraphKind::Block:
    return "block";
  case GraphKind::Batched:
    return "batched";
  case GraphKind::Hetero:
    return "hetero";
  }
  return "unknown";
}

} // namespace

//===----------------------------------------------------------------------===//
// InvocationBase
//===----------------------------------------------------------------------===//

Status InvocationBase::bindGraphs(const EntryView &entry, const void *graph,
                                  const void *batched, const void *hetero,
                                  std::vector<int64_t> sizes) {
  *this = InvocationBase();
  if (entry.numSizes != static_cast<int>(sizes.size()))
    return Status::error(fmt::format("{}: takes {} explicit sizes, got {}",
                                     entry.name, entry.numSizes, sizes.size()));
  std::vector<const void *> graphs;
  for (int i = 0; i < entry.numGraphs; ++i) {
    GraphKind kind = entry.graphKinds[i];
    const void *g = kind == GraphKind::Batched  ? batched
                    : kind == GraphKind::Hetero ? hetero
                                                : graph;
    if (!g)
      return Status::error(
          fmt::format("{}: graph argument {} is of kind {}, and no graph of "
                      "that kind was given",
                      entry.name, i, kindName(kind)));
    graphs.push_back(g);
  }
  Entry = entry;
  Graphs = std::move(graphs);
  Sizes = std::move(sizes);
  return Status::success();
}

std::size_t InvocationBase::numDims(const EntryView &entry) {
  std::size_t total = 1;
  for (int i = 0; i < entry.numArgs; ++i)
    total += static_cast<std::size_t>(entry.args[i].rank);
  for (int i = 0; i < entry.numResults; ++i)
    total += static_cast<std::size_t>(entry.results[i].rank);
  return total;
}

Status InvocationBase::takeShapes(const EntryView &entry,
                                  const std::vector<int64_t> &dims,
                                  std::size_t workspaceBytes) {
  if (workspaceBytes % kWorkspaceAlign != 0)
    return Status::error(
        fmt::format("{}: workspace size {} is not a multiple of {}", entry.name,
                    workspaceBytes, kWorkspaceAlign));
  std::size_t at = 0;
  auto take = [&](const TensorInfo &t,
                  std::vector<std::vector<int64_t>> &shapes,
                  std::vector<int64_t> &elements) {
    std::vector<int64_t> shape(dims.begin() + static_cast<std::ptrdiff_t>(at),
                               dims.begin() +
                                   static_cast<std::ptrdiff_t>(at + t.rank));
    at += static_cast<std::size_t>(t.rank);
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    shapes.push_back(std::move(shape));
    elements.push_back(n);
  };
  for (int i = 0; i < entry.numArgs; ++i)
    take(entry.args[i], ArgShapes, ArgElements);
  for (int i = 0; i < entry.numResults; ++i)
    take(entry.results[i], ResultShapes, ResultElements);
  Inputs.assign(static_cast<std::size_t>(entry.numArgs), nullptr);
  Outputs.assign(static_cast<std::size_t>(entry.numResults), nullptr);
  WorkspaceBytes = workspaceBytes;
  Workspace = nullptr;
  Bound = true;
  return Status::success();
}

Status InvocationBase::checkCall() const {
  if (!Bound)
    return Status::error("invocation: no entry point is bound");
  for (int i = 0; i < Entry.numArgs; ++i)
    if (!Inputs[i] && ArgElements[i] > 0)
      return Status::error(fmt::format("{}: argument '{}' is not bound",
                                       Entry.name, Entry.args[i].name));
  if (WorkspaceBytes > 0 && !Workspace)
    return Status::error(fmt::format("{}: no workspace ({} bytes needed)",
                                     Entry.name, WorkspaceBytes));
  if (reinterpret_cast<std::uintptr_t>(Workspace) % kWorkspaceAlign != 0)
    return Status::error(fmt::format("{}: the workspace is not {}-byte aligned",
                                     Entry.name, kWorkspaceAlign));
  return Status::success();
}

//===----------------------------------------------------------------------===//
// HostBuffer
//===----------------------------------------------------------------------===//

HostBuffer::HostBuffer(HostBuffer &&other) noexcept
    : Data(std::exchange(other.Data, nullptr)),
      Bytes(std::exchange(other.Bytes, 0)) {}

HostBuffer &HostBuffer::operator=(HostBuffer &&other) noexcept {
  if (this != &other) {
    std::free(Data);
    Data = std::exchange(other.Data, nullptr);
    Bytes = std::exchange(other.Bytes, 0);
  }
  return *this;
}

HostBuffer::~HostBuffer() { std::free(Data); }

namespace {
/// Buffers of at least this many bytes start on a 2 MiB boundary and ask
/// for transparent huge pages: the kernels gather rows of them at random
/// (a row per edge), and with 4 KiB pages nearly every such gather of a
/// buffer far larger than the TLB's reach also walks the page table.
constexpr std::size_t kHugePageFrom = std::size_t{8} << 20;
constexpr std::size_t kHugePage = std::size_t{2} << 20;

/// GNNC_HUGE_PAGES: false for 0. Read at every large allocation (a
/// getenv beside zeroing 8 MiB); any other value than 0 or 1 is reported on
/// stderr once and ignored.
bool hugePagesWanted() {
  const char *v = std::getenv("GNNC_HUGE_PAGES");
  if (!v || std::strcmp(v, "1") == 0)
    return true;
  if (std::strcmp(v, "0") == 0)
    return false;
  static std::once_flag warned;
  std::call_once(warned, [v] {
    std::fprintf(stderr,
                 "gnnc: warning: GNNC_HUGE_PAGES is '%s'; it must be 0 or 1 "
                 "(ignored: large buffers ask for huge pages)\n",
                 v);
  });
  return true;
}
} // namespace

Status HostBuffer::allocate(std::size_t bytes, HostBuffer &out) {
  HostBuffer b;
  if (bytes > 0) {
    std::size_t align = bytes >= kHugePageFrom && hugePagesWanted()
                            ? kHugePage
                            : kWorkspaceAlign;
    // aligned_alloc wants a multiple of the alignment.
    std::size_t rounded = (bytes + align - 1) / align * align;
    if (rounded < bytes)
      return Status::error(
          fmt::format("cannot allocate {} bytes of host memory", bytes));
    b.Data = std::aligned_alloc(align, rounded);
    if (!b.Data)
      return Status::error(
          fmt::format("cannot allocate {} bytes of host memory", bytes));
#ifdef MADV_HUGEPAGE
    // Before the memory is first touched, so that the faults below map huge
    // pages where the system has them to give ("madvise" mode of
    // /sys/kernel/mm/transparent_hugepage/enabled; in "always" mode this
    // changes nothing, in "never" it fails and is ignored).
    if (align == kHugePage)
      (void)madvise(b.Data, rounded, MADV_HUGEPAGE);
#endif
    std::memset(b.Data, 0, rounded);
    b.Bytes = bytes;
  }
  out = std::move(b);
  return Status::success();
}
