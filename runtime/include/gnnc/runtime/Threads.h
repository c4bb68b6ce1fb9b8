//===- Threads.h - How many threads gnnc's loops run on ---------*- C++ -*-===//
//
// Part of gnnc. The OpenMP loops of generated C++ and of the runtime's
// operations end at a barrier, where every thread waits for the last. When
// another process holds one of the cores, the thread that shares that core
// runs part of the time, and every loop waits for it: a training step on
// 2 cores beside one busy process took 3 times as long as alone, where one
// thread on the free core takes 1.8 times as long. So gnnc's loops run on
// as many threads as there are cores nobody else is using (teamSize), read
// from the kernel's CPU accounting a few times a second.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_RUNTIME_THREADS_H
#define GNNC_RUNTIME_THREADS_H

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace gnnc::rt {

/// The number of threads gnnc's parallel loops use (forVertices, and the
/// runtime's operations): OpenMP's omp_get_max_threads(), or fewer when
/// other processes keep the cores busy (teamSizeFor): the cores this
/// process may run on less those taken, as measured over the last 200 ms
/// or more from the CPU time the kernel accounts busy on those cores
/// (/proc/stat), less this process's own. The cores it may run on are
/// those of its affinity mask, and no more than the CPU limit of its
/// cgroup (cgroupCpuLimitOf /sys/fs/cgroup, read once; rounded to the
/// nearest whole core, at least 1), which OpenMP's default ignores. 1
/// without OpenMP.
///
/// Results do not depend on it: every loop computes each element in the
/// same order on any number of threads. GNNC_ADAPTIVE_THREADS=0 in the
/// environment turns the measurement off (always omp_get_max_threads());
/// any value other than 0 or 1 is reported on stderr once and ignored.
/// Safe to call from several threads; the measurement is taken by one of
/// them at a time, the others use the last one.
int teamSize();

/// Calls row(v) for every v in [0, n): generated vertex loops
/// (`rt::forVertices(g.numDst(), [&](int64_t v) { ... });`). On teamSize()
/// OpenMP threads, in chunks of 64 rows taken in turn (degrees are skewed,
/// and a thread that runs only part of the time takes fewer chunks); on
/// this thread, without a parallel region, when that is 1: libgomp
/// allocates and frees a team for every region of one thread, and a
/// training step with static shapes allocates nothing.
template <typename Row> inline void forVertices(int64_t n, Row &&row) {
#ifdef _OPENMP
  int team = teamSize();
  if (team > 1) {
#pragma omp parallel for schedule(dynamic, 64) num_threads(team)
    for (int64_t v = 0; v < n; ++v)
      row(v);
    return;
  }
#endif
  for (int64_t v = 0; v < n; ++v)
    row(v);
}

/// The rule teamSize applies: the `cpus` cores this process may run on,
/// less one for every core that other processes took beyond the first 0.4
/// of one (so a light background load costs nothing, and a process that
/// kept a core busy, which shows as about half a core while it shares that
/// core with one of ours, costs one); at most `maxThreads`, at least 1.
/// So on 2 cores beside one busy process, 1 thread; on a 64-core machine
/// whose other users keep 60 cores busy, up to 4.
int teamSizeFor(int maxThreads, int cpus, double otherCores);

/// The CPU limit that the text of a cgroup v2 `cpu.max` file sets ("$MAX
/// $PERIOD": MAX / PERIOD cores, as `docker run --cpus` or a Kubernetes CPU
/// limit writes it); none for "max" (no limit) or a malformed text.
std::optional<double> cgroupCpuLimit(std::string_view cpuMax);

/// The smallest CPU limit of the cgroup v2 `cgroup` (a path such as
/// /proc/self/cgroup's "0::" line names, below the mount point `root`) and
/// of every cgroup above it up to `root`: the cpu.max files of those
/// folders that exist. None when none of them limits.
std::optional<double> cgroupCpuLimitOf(const char *root,
                                       std::string_view cgroup);

/// The busy time, in seconds, that the text of /proc/stat accounts to the
/// CPUs numbered in `cpus` (user, nice, system, irq, softirq and steal
/// columns of their `cpuN` lines; guest time is part of user), with
/// `ticksPerSecond` clock ticks a second (sysconf(_SC_CLK_TCK)). None when
/// a line of one of `cpus` is missing or malformed.
std::optional<double> busyCpuSeconds(std::string_view procStat,
                                     const std::vector<int> &cpus,
                                     long ticksPerSecond);

/// The same, read from the file at `path` (teamSize reads /proc/stat so,
/// through a buffer on the stack, up to the first line that is not a
/// CPU's). None also when the file cannot be read, and off Linux.
std::optional<double> busyCpuSecondsOfFile(const char *path,
                                           const std::vector<int> &cpus,
                                           long ticksPerSecond);

} // namespace gnnc::rt

#endif // GNNC_RUNTIME_THREADS_H
