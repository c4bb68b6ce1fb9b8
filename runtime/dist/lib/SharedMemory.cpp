//===- SharedMemory.cpp - POSIX shared memory for host tensors -----------===//
//
// Part of gnnc. Segments are created with shm_open(O_CREAT | O_EXCL), sized
// with ftruncate and reserved with posix_fallocate, so a /dev/shm without
// room fails at creation instead of raising SIGBUS on a later write.
//
//===----------------------------------------------------------------------===//

#include "SharedMemory.h"

#include <fmt/format.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <random>
#include <vector>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace gnnc::dist;
using namespace gnnc::dist::detail;

namespace {

constexpr const char *kShmDir = "/dev/shm";
constexpr const char *kPrefix = "gnnc-";

std::string errnoText(int err) {
  std::string text = std::strerror(err);
  if (!text.empty() && text[0] >= 'A' && text[0] <= 'Z')
    text[0] = static_cast<char>(text[0] - 'A' + 'a');
  return text;
}

std::function<void(const std::string &)> &hookSlot() {
  static std::function<void(const std::string &)> hook;
  return hook;
}

/// The bytes to map for a segment of `bytes` (never zero).
size_t mappedSize(size_t bytes) { return bytes == 0 ? 1 : bytes; }

/// A fresh segment name for this process.
std::string newSegmentName() {
  static std::atomic<uint64_t> counter{0};
  static std::mutex mutex;
  static std::mt19937_64 random{std::random_device{}()};
  uint64_t salt;
  {
    std::lock_guard<std::mutex> lock(mutex);
    salt = random();
  }
  return fmt::format("/{}{}-{}-{:016x}", kPrefix, ::getpid(),
                     counter.fetch_add(1, std::memory_order_relaxed), salt);
}

/// Maps `fd` (at least `bytes` long) read-write into `out`.
Status mapFd(int fd, size_t bytes, const std::string &name, void *&out) {
  void *p = ::mmap(nullptr, mappedSize(bytes), PROT_READ | PROT_WRITE,
                   MAP_SHARED, fd, 0);
  if (p == MAP_FAILED)
    return Status::error(
        fmt::format("shared memory {}: cannot map {} bytes: {}", name,
                    mappedSize(bytes), errnoText(errno)));
  out = p;
  return Status::success();
}

} // namespace

ShmMapping &ShmMapping::operator=(ShmMapping &&other) noexcept {
  if (this != &other) {
    reset();
    Data = other.Data;
    Size = other.Size;
    other.Data = nullptr;
    other.Size = 0;
  }
  return *this;
}

void ShmMapping::reset() {
  if (Data)
    ::munmap(Data, mappedSize(Size));
  Data = nullptr;
  Size = 0;
}

int gnnc::dist::detail::sweepStaleSegments() {
  DIR *dir = ::opendir(kShmDir);
  if (!dir)
    return 0;
  std::vector<std::string> stale;
  while (struct dirent *entry = ::readdir(dir)) {
    const char *name = entry->d_name;
    size_t prefixLen = std::strlen(kPrefix);
    if (std::strncmp(name, kPrefix, prefixLen) != 0)
      continue;
    const char *p = name + prefixLen;
    long long pid = 0;
    bool digits = false;
    while (*p >= '0' && *p <= '9' && pid < (1ll << 40)) {
      pid = pid * 10 + (*p - '0');
      ++p;
      digits = true;
    }
    if (!digits || *p != '-' || pid <= 0 || pid > INT32_MAX)
      continue;
    if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
      stale.push_back(std::string("/") + name);
  }
  ::closedir(dir);
  int removed = 0;
  for (const std::string &name : stale)
    if (::shm_unlink(name.c_str()) == 0)
      ++removed;
  return removed;
}

Status gnnc::dist::detail::createSegment(size_t bytes, std::string &name,
                                         ShmMapping &out) {
  sweepStaleSegments();
  std::string candidate;
  int fd = -1;
  for (int attempt = 0; attempt < 16 && fd < 0; ++attempt) {
    candidate = newSegmentName();
    fd = ::shm_open(candidate.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC,
                    0600);
    if (fd < 0 && errno != EEXIST)
      break;
  }
  if (fd < 0)
    return Status::error(fmt::format("shared memory: cannot create a segment "
                                     "of {} bytes: {}",
                                     bytes, errnoText(errno)));
  auto fail = [&](const std::string &what) {
    int err = errno;
    ::close(fd);
    ::shm_unlink(candidate.c_str());
    return Status::error(fmt::format("shared memory {}: {} ({} bytes): {}",
                                     candidate, what, mappedSize(bytes),
                                     errnoText(err)));
  };
  size_t size = mappedSize(bytes);
  if (::ftruncate(fd, static_cast<off_t>(size)) != 0)
    return fail("cannot size the segment");
  if (int err = ::posix_fallocate(fd, 0, static_cast<off_t>(size)); err != 0) {
    errno = err;
    return fail("cannot reserve the segment's memory");
  }
  void *data = nullptr;
  if (Status s = mapFd(fd, bytes, candidate, data); !s.ok()) {
    ::close(fd);
    ::shm_unlink(candidate.c_str());
    return s;
  }
  ::close(fd);
  out.reset();
  out.Data = data;
  out.Size = bytes;
  name = candidate;
  return Status::success();
}

Status gnnc::dist::detail::openSegment(const std::string &name, size_t bytes,
                                       ShmMapping &out) {
  int fd = ::shm_open(name.c_str(), O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0)
    return Status::error(fmt::format("shared memory {}: cannot open: {}", name,
                                     errnoText(errno)));
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return Status::error(
        fmt::format("shared memory {}: cannot stat: {}", name, errnoText(err)));
  }
  if (static_cast<uint64_t>(st.st_size) < mappedSize(bytes)) {
    ::close(fd);
    return Status::error(fmt::format("shared memory {}: holds {} bytes, "
                                     "expected {}",
                                     name, st.st_size, mappedSize(bytes)));
  }
  void *data = nullptr;
  Status s = mapFd(fd, bytes, name, data);
  ::close(fd);
  if (!s.ok())
    return s;
  out.reset();
  out.Data = data;
  out.Size = bytes;
  return Status::success();
}

Status gnnc::dist::detail::unlinkSegment(const std::string &name) {
  if (::shm_unlink(name.c_str()) != 0)
    return Status::error(fmt::format("shared memory {}: cannot unlink: {}",
                                     name, errnoText(errno)));
  return Status::success();
}

void gnnc::dist::detail::setSegmentCreatedHook(
    std::function<void(const std::string &)> hook) {
  hookSlot() = std::move(hook);
}

void gnnc::dist::detail::segmentCreated(const std::string &name) {
  if (hookSlot())
    hookSlot()(name);
}
