//===- Threads.cpp - How many threads gnnc's loops run on -----------------===//
//
// Part of gnnc. See Threads.h. Nothing here allocates: teamSize runs inside
// training steps that allocate nothing (tests/Target/FixedSize/NoAllocTest).
//
//===----------------------------------------------------------------------===//

#include "gnnc/runtime/Threads.h"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <limits>
#include <mutex>

#ifdef __linux__
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>
#endif

#ifdef _OPENMP
#include <omp.h>
#endif

using namespace gnnc;

int rt::teamSizeFor(int maxThreads, int cpus, double otherCores) {
  // Taken cores beyond the first 0.4 of one, rounded up (NaN: none).
  double taken = otherCores > 0.4 ? std::ceil(otherCores - 0.4) : 0.0;
  double freeCores = static_cast<double>(cpus) - taken;
  if (!(freeCores > 1.0) || maxThreads <= 1)
    return 1;
  return freeCores < maxThreads ? static_cast<int>(freeCores) : maxThreads;
}

namespace {

/// Adds the busy ticks of one line of /proc/stat to `ticks` when it is the
/// `cpuN` line of a CPU `wanted(N)` accepts, counting it in `seen`. False
/// for a malformed line.
template <typename Wanted>
bool addBusyTicks(std::string_view line, Wanted &&wanted, uint64_t &ticks,
                  int &seen) {
  line.remove_prefix(3); // "cpu"
  if (line.empty() || line[0] < '0' || line[0] > '9')
    return true; // the line of all CPUs together
  const char *p = line.data(), *end = line.data() + line.size();
  int cpu = 0;
  auto [afterCpu, cpuErr] = std::from_chars(p, end, cpu);
  if (cpuErr != std::errc())
    return false;
  p = afterCpu;
  if (!wanted(cpu))
    return true;
  // user nice system idle iowait irq softirq [steal ...]
  uint64_t fields[8] = {};
  int count = 0;
  while (count < 8) {
    while (p < end && *p == ' ')
      ++p;
    if (p == end)
      break;
    auto [next, err] = std::from_chars(p, end, fields[count]);
    if (err != std::errc())
      return false;
    p = next;
    ++count;
  }
  if (count < 7)
    return false;
  ticks += fields[0] + fields[1] + fields[2] + fields[5] + fields[6] +
           (count > 7 ? fields[7] : 0);
  ++seen;
  return true;
}

/// Feeds the `cpu` lines at the start of `text` to addBusyTicks; false for
/// a malformed one. Stops at the first line of another kind.
template <typename Wanted>
bool addBusyTicksOfText(std::string_view text, Wanted &&wanted, uint64_t &ticks,
                        int &seen, bool &done) {
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    if (line.substr(0, 3) != "cpu") {
      done = true;
      return true;
    }
    if (!addBusyTicks(line, wanted, ticks, seen))
      return false;
    if (nl == std::string_view::npos)
      break;
    text.remove_prefix(nl + 1);
  }
  return true;
}

#ifdef __linux__
/// Adds the busy ticks of the CPUs `wanted` accepts, read from `path`
/// (/proc/stat) through a buffer on the stack, counting their lines in
/// `seen`. Reading stops at the first line that is not a CPU's (the
/// interrupt counts that follow can be longer than the buffer). False when
/// the file cannot be read or a CPU's line is malformed.
template <typename Wanted>
bool addBusyTicksOfFile(const char *path, Wanted &&wanted, uint64_t &ticks,
                        int &seen) {
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  char buf[8192];
  size_t have = 0;
  bool done = false, ok = true;
  while (ok && !done) {
    ssize_t got = ::read(fd, buf + have, sizeof buf - have);
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0) { // the end: what is left is the last line
      ok = got == 0 &&
           addBusyTicksOfText({buf, have}, wanted, ticks, seen, done);
      break;
    }
    have += static_cast<size_t>(got);
    // Whole lines only; keep the partial last one for the next read.
    std::string_view text(buf, have);
    size_t lastNl = text.rfind('\n');
    if (lastNl == std::string_view::npos) {
      if (text.size() >= 3 && text.substr(0, 3) != "cpu")
        break;                // past the CPUs' lines
      ok = have < sizeof buf; // a CPU's line longer than the buffer
      continue;
    }
    ok = addBusyTicksOfText(text.substr(0, lastNl + 1), wanted, ticks, seen,
                            done);
    have -= lastNl + 1;
    std::memmove(buf, buf + lastNl + 1, have);
  }
  ::close(fd);
  return ok;
}
#endif

/// The busy seconds of `cpus`, from `add(wanted, ticks, seen)`, which adds
/// the ticks of the CPUs `wanted` accepts and counts their lines: none when
/// it fails or a CPU of `cpus` has no line.
template <typename Add>
std::optional<double> busySecondsOf(const std::vector<int> &cpus,
                                    long ticksPerSecond, Add &&add) {
  if (ticksPerSecond <= 0)
    return std::nullopt;
  auto wanted = [&](int cpu) {
    return std::find(cpus.begin(), cpus.end(), cpu) != cpus.end();
  };
  uint64_t ticks = 0;
  int seen = 0;
  if (!add(wanted, ticks, seen) || seen != static_cast<int>(cpus.size()))
    return std::nullopt;
  return static_cast<double>(ticks) / static_cast<double>(ticksPerSecond);
}

} // namespace

std::optional<double> rt::busyCpuSeconds(std::string_view procStat,
                                         const std::vector<int> &cpus,
                                         long ticksPerSecond) {
  return busySecondsOf(
      cpus, ticksPerSecond, [&](auto &wanted, uint64_t &ticks, int &seen) {
        bool done = false;
        return addBusyTicksOfText(procStat, wanted, ticks, seen, done);
      });
}

std::optional<double> rt::busyCpuSecondsOfFile(const char *path,
                                               const std::vector<int> &cpus,
                                               long ticksPerSecond) {
#ifdef __linux__
  return busySecondsOf(cpus, ticksPerSecond,
                       [&](auto &wanted, uint64_t &ticks, int &seen) {
                         return addBusyTicksOfFile(path, wanted, ticks, seen);
                       });
#else
  (void)path, (void)cpus, (void)ticksPerSecond;
  return std::nullopt;
#endif
}

std::optional<double> rt::cgroupCpuLimit(std::string_view cpuMax) {
  while (!cpuMax.empty() &&
         std::isspace(static_cast<unsigned char>(cpuMax.back())))
    cpuMax.remove_suffix(1);
  size_t space = cpuMax.find(' ');
  if (space == std::string_view::npos)
    return std::nullopt;
  std::string_view quota = cpuMax.substr(0, space);
  std::string_view period = cpuMax.substr(space + 1);
  uint64_t q = 0, p = 0;
  auto parse = [](std::string_view text, uint64_t &out) {
    auto [end, err] =
        std::from_chars(text.data(), text.data() + text.size(), out);
    return err == std::errc() && end == text.data() + text.size();
  };
  if (quota == "max" || !parse(quota, q) || !parse(period, p) || q == 0 ||
      p == 0)
    return std::nullopt;
  return static_cast<double>(q) / static_cast<double>(p);
}

std::optional<double> rt::cgroupCpuLimitOf(const char *root,
                                           std::string_view cgroup) {
#ifdef __linux__
  // On the stack: teamSize reads it, and nothing here allocates.
  char path[4096];
  std::optional<double> limit;
  while (true) {
    int n = std::snprintf(path, sizeof path, "%s%.*s/cpu.max", root,
                          static_cast<int>(cgroup.size()), cgroup.data());
    if (n > 0 && static_cast<size_t>(n) < sizeof path) {
      int fd = ::open(path, O_RDONLY | O_CLOEXEC);
      if (fd >= 0) {
        char text[128];
        ssize_t got = ::read(fd, text, sizeof text - 1);
        ::close(fd);
        std::optional<double> here =
            got > 0 ? cgroupCpuLimit({text, static_cast<size_t>(got)})
                    : std::nullopt;
        if (here && (!limit || *here < *limit))
          limit = here;
      }
    }
    size_t slash = cgroup.rfind('/');
    if (cgroup.empty() || slash == std::string_view::npos)
      break;
    cgroup = cgroup.substr(0, slash);
  }
  return limit;
#else
  (void)root, (void)cgroup;
  return std::nullopt;
#endif
}

#if defined(_OPENMP) && defined(__linux__)
namespace {

constexpr int64_t kWindowNs = 200'000'000;

/// The CPU limit of this process's cgroup v2 (cgroupCpuLimitOf), in whole
/// cores (at least 1); 0 for none.
int cgroupCores() {
  char text[4096];
  int fd = ::open("/proc/self/cgroup", O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  ssize_t got = ::read(fd, text, sizeof text);
  ::close(fd);
  if (got <= 0)
    return 0;
  std::string_view lines(text, static_cast<size_t>(got));
  // The unified hierarchy's line: "0::/path".
  size_t at = lines.rfind("0::/");
  if (at == std::string_view::npos || (at > 0 && lines[at - 1] != '\n'))
    return 0;
  std::string_view cgroup = lines.substr(at + 3);
  cgroup = cgroup.substr(0, cgroup.find('\n'));
  if (cgroup == "/")
    cgroup = "";
  std::optional<double> limit = rt::cgroupCpuLimitOf("/sys/fs/cgroup", cgroup);
  return limit ? std::max(1, static_cast<int>(std::lround(*limit))) : 0;
}

/// cgroupCores(), read once.
int quotaCores() {
  static const int cores = cgroupCores();
  return cores;
}

int64_t nanoseconds(clockid_t clock) {
  timespec t{};
  clock_gettime(clock, &t);
  return static_cast<int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

/// GNNC_ADAPTIVE_THREADS, read once: false for 0.
bool adaptive() {
  static const bool on = [] {
    const char *v = std::getenv("GNNC_ADAPTIVE_THREADS");
    if (!v || std::strcmp(v, "1") == 0)
      return true;
    if (std::strcmp(v, "0") == 0)
      return false;
    std::fprintf(stderr,
                 "gnnc: warning: GNNC_ADAPTIVE_THREADS is '%s'; it must be 0 "
                 "or 1 (ignored: the thread count adapts to the load)\n",
                 v);
    return true;
  }();
  return on;
}

struct Measurement {
  std::mutex mutex;            ///< held by the thread that measures
  std::atomic<int64_t> due{0}; ///< when the next measurement is due (ns)
  std::atomic<double> otherCores{0.0};
  std::atomic<int> cpus{0}; ///< how many cores this process may run on
  // The previous reading, under `mutex`.
  bool havePrevious = false;
  double busy = 0, own = 0;
  int64_t wall = 0;
};

Measurement &measurement() {
  static Measurement m;
  return m;
}

void measure(Measurement &m, int64_t now) {
  static const long ticksPerSecond = sysconf(_SC_CLK_TCK);
  cpu_set_t set;
  CPU_ZERO(&set);
  auto wanted = [&](int cpu) {
    return cpu >= 0 && cpu < CPU_SETSIZE && CPU_ISSET(cpu, &set);
  };
  uint64_t ticks = 0;
  int seen = 0;
  if (ticksPerSecond <= 0 || sched_getaffinity(0, sizeof set, &set) != 0 ||
      !addBusyTicksOfFile("/proc/stat", wanted, ticks, seen) ||
      seen != CPU_COUNT(&set)) { // no accounting: the full team from now on
    m.cpus.store(0, std::memory_order_relaxed);
    m.due.store(std::numeric_limits<int64_t>::max());
    return;
  }
  double busy = static_cast<double>(ticks) / ticksPerSecond;
  double own = nanoseconds(CLOCK_PROCESS_CPUTIME_ID) * 1e-9;
  if (m.havePrevious && now > m.wall) {
    double seconds = (now - m.wall) * 1e-9;
    double others = ((busy - m.busy) - (own - m.own)) / seconds;
    m.otherCores.store(std::max(0.0, others), std::memory_order_relaxed);
    int quota = quotaCores(), cpus = CPU_COUNT(&set);
    m.cpus.store(quota > 0 ? std::min(cpus, quota) : cpus,
                 std::memory_order_relaxed);
  }
  m.havePrevious = true;
  m.busy = busy;
  m.own = own;
  m.wall = now;
  m.due.store(now + kWindowNs);
}

} // namespace
#endif

int rt::teamSize() {
#ifdef _OPENMP
  int maxThreads = omp_get_max_threads();
#if defined(__linux__)
  if (maxThreads <= 1 || !adaptive())
    return maxThreads;
  Measurement &m = measurement();
  int64_t now = nanoseconds(CLOCK_MONOTONIC);
  if (now >= m.due.load(std::memory_order_relaxed)) {
    std::unique_lock<std::mutex> lock(m.mutex, std::try_to_lock);
    if (lock.owns_lock() && now >= m.due.load())
      measure(m, now);
  }
  int cpus = m.cpus.load(std::memory_order_relaxed);
  if (cpus <= 0) { // not measured (yet): the cgroup's limit still holds
    int quota = quotaCores();
    return quota > 0 && quota < maxThreads ? quota : maxThreads;
  }
  return teamSizeFor(maxThreads, cpus,
                     m.otherCores.load(std::memory_order_relaxed));
#else
  return maxThreads;
#endif
#else
  return 1;
#endif
}
