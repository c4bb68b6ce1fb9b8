//===- SharedMemory.h - POSIX shared memory for host tensors ----*- C++ -*-===//
//
// Part of gnnc. Internal to gnnc_dist: the POSIX shared-memory segments
// behind continuous and chunked host tensors, and the collective error
// agreement the tensor sources share.
//
// A segment is named "/gnnc-<creator pid>-<counter>-<random>". Its creator
// unlinks it as soon as every rank has mapped it, so only a process killed
// between creating and unlinking can leave one behind; each creation first
// sweeps /dev/shm for gnnc-<pid>-* segments whose creator no longer exists.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_DIST_LIB_SHAREDMEMORY_H
#define GNNC_DIST_LIB_SHAREDMEMORY_H

#include "gnnc/dist/Communicator.h"

#include <cstddef>
#include <functional>
#include <string>

namespace gnnc::dist::detail {

/// A mapping of a shared-memory segment, unmapped on destruction.
class ShmMapping {
public:
  ShmMapping() = default;
  ShmMapping(const ShmMapping &) = delete;
  ShmMapping &operator=(const ShmMapping &) = delete;
  ShmMapping(ShmMapping &&other) noexcept { *this = std::move(other); }
  ShmMapping &operator=(ShmMapping &&other) noexcept;
  ~ShmMapping() { reset(); }

  void *data() const { return Data; }
  size_t size() const { return Size; }
  void reset();

private:
  friend Status createSegment(size_t, std::string &, ShmMapping &);
  friend Status openSegment(const std::string &, size_t, ShmMapping &);
  void *Data = nullptr;
  size_t Size = 0;
};

/// The longest segment name, with its '/'.
constexpr size_t kMaxSegmentName = 63;

/// Creates a zeroed segment of `bytes` bytes (at least one page is mapped
/// for zero bytes), reserves its memory (so a full /dev/shm is an error
/// here, not a SIGBUS later) and maps it; `name` receives its name. Sweeps
/// stale segments first.
Status createSegment(size_t bytes, std::string &name, ShmMapping &out);
/// Maps the existing segment `name`, which must hold at least `bytes`.
Status openSegment(const std::string &name, size_t bytes, ShmMapping &out);
/// Removes the name of a segment (mappings stay valid).
Status unlinkSegment(const std::string &name);
/// Unlinks every /dev/shm/gnnc-<pid>-* whose process no longer exists;
/// returns how many it removed.
int sweepStaleSegments();

/// A hook called by the creator of a segment right after creating it, in
/// the window before it is unlinked (a test stops or kills the process
/// there). Null: none. Not thread-safe; set it before creating tensors.
void setSegmentCreatedHook(std::function<void(const std::string &name)> hook);
/// Calls the hook, if any.
void segmentCreated(const std::string &name);

} // namespace gnnc::dist::detail

#endif // GNNC_DIST_LIB_SHAREDMEMORY_H
