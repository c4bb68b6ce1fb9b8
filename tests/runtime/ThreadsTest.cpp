//===- ThreadsTest.cpp - The thread count of gnnc's parallel loops --------===//
//
// Part of gnnc. gnnc/runtime/Threads.h: the rule that turns the cores other
// processes took into a thread count, the reading of /proc/stat (on texts
// written here, and on the machine's own), and teamSize while spinning
// child processes hold every core this process may use.
//
//===----------------------------------------------------------------------===//

#include "gnnc/runtime/Threads.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#ifdef __linux__
#include <csignal>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

#ifdef _OPENMP
#include <omp.h>
#endif

using namespace gnnc;

namespace {

TEST(Threads, OneThreadLessForEveryCoreOthersTook) {
  // A quiet machine, and light background work, cost no thread.
  EXPECT_EQ(rt::teamSizeFor(2, 2, 0.0), 2);
  EXPECT_EQ(rt::teamSizeFor(2, 2, 0.3), 2);
  EXPECT_EQ(rt::teamSizeFor(2, 2, 0.4), 2);
  // A busy process sharing a core with one of 2 threads shows as half a
  // core; alone on a core beside 1 thread, as a whole one.
  EXPECT_EQ(rt::teamSizeFor(2, 2, 0.5), 1);
  EXPECT_EQ(rt::teamSizeFor(2, 2, 1.0), 1);
  EXPECT_EQ(rt::teamSizeFor(16, 16, 0.5), 15);
  EXPECT_EQ(rt::teamSizeFor(16, 16, 1.4), 15);
  EXPECT_EQ(rt::teamSizeFor(16, 16, 1.5), 14);
  EXPECT_EQ(rt::teamSizeFor(16, 16, 3.0), 13);
  // Fewer threads asked for than cores: only the free cores count.
  EXPECT_EQ(rt::teamSizeFor(2, 64, 60.0), 2);
  EXPECT_EQ(rt::teamSizeFor(8, 64, 60.0), 4);
  EXPECT_EQ(rt::teamSizeFor(8, 64, 58.5), 5);
  EXPECT_EQ(rt::teamSizeFor(4, 16, 0.5), 4);
  // Never fewer than one, never more than asked for.
  EXPECT_EQ(rt::teamSizeFor(16, 16, 40.0), 1);
  EXPECT_EQ(rt::teamSizeFor(1, 2, 0.0), 1);
  EXPECT_EQ(rt::teamSizeFor(0, 2, 0.0), 1);
  EXPECT_EQ(rt::teamSizeFor(4, 0, 0.0), 1);
  EXPECT_EQ(rt::teamSizeFor(4, 4, -1.0), 4);
  EXPECT_EQ(rt::teamSizeFor(4, 4, std::numeric_limits<double>::quiet_NaN()), 4);
  EXPECT_EQ(rt::teamSizeFor(4, 4, std::numeric_limits<double>::infinity()), 1);
}

// Columns: user nice system idle iowait irq softirq steal guest guest_nice.
constexpr const char *kProcStat = "cpu  1000 20 300 9000 50 7 11 5 0 0\n"
                                  "cpu0 400 10 100 4000 20 3 5 2 0 0\n"
                                  "cpu1 300 0 150 3000 10 2 4 1 0 0\n"
                                  "cpu2 300 10 50 2000 20 2 2 2 0 0\n"
                                  "intr 123456 1 2 3\n"
                                  "ctxt 99\n"
                                  "cpu7 1 1 1 1 1 1 1 1 0 0\n";

TEST(Threads, BusyTimeOfTheCpusAskedFor) {
  // cpu0: 400 + 10 + 100 + 3 + 5 + 2 = 520 ticks; cpu2: 300 + 10 + 50 + 2
  // + 2 + 2 = 366; idle and iowait are not busy, guest is part of user.
  std::optional<double> s = rt::busyCpuSeconds(kProcStat, {0}, 100);
  ASSERT_TRUE(s);
  EXPECT_DOUBLE_EQ(*s, 5.20);
  s = rt::busyCpuSeconds(kProcStat, {2, 0}, 100);
  ASSERT_TRUE(s);
  EXPECT_DOUBLE_EQ(*s, 8.86);
  s = rt::busyCpuSeconds(kProcStat, {1}, 1000);
  ASSERT_TRUE(s);
  EXPECT_DOUBLE_EQ(*s, 0.457);
  // Lines before steal was accounted (7 columns).
  s = rt::busyCpuSeconds("cpu 1 2 3 4 5 6 7\ncpu0 10 20 30 40 50 60 70\n", {0},
                         10);
  ASSERT_TRUE(s);
  EXPECT_DOUBLE_EQ(*s, 19.0);
}

TEST(Threads, MissingOrMalformedLinesGiveNothing) {
  // cpu7 comes after the first line of another kind: /proc/stat lists its
  // CPUs first, so it is not read.
  EXPECT_FALSE(rt::busyCpuSeconds(kProcStat, {7}, 100));
  EXPECT_FALSE(rt::busyCpuSeconds(kProcStat, {3}, 100));
  EXPECT_FALSE(rt::busyCpuSeconds(kProcStat, {0}, 0));
  EXPECT_FALSE(rt::busyCpuSeconds("cpu0 1 2 3 4 5 6\n", {0}, 100));
  EXPECT_FALSE(rt::busyCpuSeconds("cpu0 1 2 x 4 5 6 7\n", {0}, 100));
  EXPECT_FALSE(rt::busyCpuSeconds("cpu0 1 2 3 4 5 6 -7\n", {0}, 100));
  EXPECT_FALSE(rt::busyCpuSeconds("", {0}, 100));
  EXPECT_TRUE(rt::busyCpuSeconds("", {}, 100));
}

#ifdef __linux__
std::vector<int> allowedCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set))
        cpus.push_back(c);
  return cpus;
}

std::optional<double> busyNow(const std::vector<int> &cpus) {
  return rt::busyCpuSecondsOfFile("/proc/stat", cpus, sysconf(_SC_CLK_TCK));
}

TEST(Threads, FilesAreReadUpToTheFirstLineThatIsNotACpus) {
  // 300 CPUs' lines (more than the reader's buffer of 8 KiB), then a line
  // of interrupt counts of over 100 KB, as on machines with many
  // interrupts.
  std::string text = "cpu  1 2 3 4 5 6 7 8 0 0\n";
  std::vector<int> cpus;
  for (int c = 0; c < 300; ++c) {
    text += "cpu" + std::to_string(c) + " " + std::to_string(1000 + c) + " 5 " +
            std::to_string(300 + 2 * c) + " 999999 77 3 4 " +
            std::to_string(c % 7) + " 0 0\n";
    if (c % 3 == 0)
      cpus.push_back(c);
  }
  text += "intr 123";
  for (int i = 0; i < 20000; ++i)
    text += " " + std::to_string(i);
  text += "\nctxt 5\n";
  std::string path =
      ::testing::TempDir() + "gnnc_threads_stat_" + std::to_string(getpid());
  {
    std::ofstream out(path, std::ios::binary);
    out << text;
  }
  std::optional<double> want = rt::busyCpuSeconds(text, cpus, 100);
  std::optional<double> got = rt::busyCpuSecondsOfFile(path.c_str(), cpus, 100);
  ASSERT_TRUE(want);
  ASSERT_TRUE(got) << "the long line of interrupt counts stopped the reading";
  EXPECT_EQ(*got, *want);
  // By hand: CPU c (c a multiple of 3) is busy for (1000 + c) + 5 +
  // (300 + 2c) + 3 + 4 + (c % 7) ticks.
  double ticks = 0;
  for (int c : cpus)
    ticks += 1312 + 3 * c + c % 7;
  EXPECT_DOUBLE_EQ(*got, ticks / 100);
  EXPECT_FALSE(rt::busyCpuSecondsOfFile(path.c_str(), {300}, 100));
  std::remove(path.c_str());
  EXPECT_FALSE(rt::busyCpuSecondsOfFile(path.c_str(), {0}, 100));
}

TEST(Threads, CgroupCpuMaxTexts) {
  EXPECT_EQ(rt::cgroupCpuLimit("150000 100000\n"), 1.5);
  EXPECT_EQ(rt::cgroupCpuLimit("50000 100000"), 0.5);
  EXPECT_EQ(rt::cgroupCpuLimit("400000 100000\n"), 4.0);
  EXPECT_FALSE(rt::cgroupCpuLimit("max 100000\n")); // no limit
  for (const char *bad : {"", "\n", "150000", "150000 0", "0 100000",
                          "-5 100000", "1.5 1", "150000 100000 7", "x 1"})
    EXPECT_FALSE(rt::cgroupCpuLimit(bad)) << "'" << bad << "'";
}

#ifdef __linux__
/// The smallest limit on the way from the process's cgroup up to the root
/// counts; folders without cpu.max and "max" limit nothing.
TEST(Threads, CgroupLimitIsTheSmallestOnThePathToTheRoot) {
  std::string root =
      ::testing::TempDir() + "gnnc_cgroup_" + std::to_string(getpid());
  auto write = [&](const std::string &folder, const std::string &text) {
    std::ofstream(root + folder + "/cpu.max") << text;
  };
  ASSERT_EQ(mkdir(root.c_str(), 0700), 0);
  ASSERT_EQ(mkdir((root + "/a").c_str(), 0700), 0);
  ASSERT_EQ(mkdir((root + "/a/b").c_str(), 0700), 0);
  ASSERT_EQ(mkdir((root + "/a/b/c").c_str(), 0700), 0);
  EXPECT_FALSE(rt::cgroupCpuLimitOf(root.c_str(), "/a/b/c"));
  write("/a/b/c", "max 100000\n");
  EXPECT_FALSE(rt::cgroupCpuLimitOf(root.c_str(), "/a/b/c"));
  write("/a", "300000 100000\n");
  EXPECT_EQ(rt::cgroupCpuLimitOf(root.c_str(), "/a/b/c"), 3.0);
  write("/a/b", "120000 100000\n");
  EXPECT_EQ(rt::cgroupCpuLimitOf(root.c_str(), "/a/b/c"), 1.2);
  EXPECT_EQ(rt::cgroupCpuLimitOf(root.c_str(), "/a"), 3.0);
  EXPECT_FALSE(rt::cgroupCpuLimitOf(root.c_str(), ""));
  for (const char *f : {"/a/b/c", "/a/b", "/a"}) {
    std::remove((root + f + "/cpu.max").c_str());
    rmdir((root + f).c_str());
  }
  rmdir(root.c_str());
}
#endif

TEST(Threads, TheMachinesAccountingGrowsWithThisThreadsWork) {
  std::vector<int> cpus = allowedCpus();
  ASSERT_FALSE(cpus.empty());
  std::optional<double> before = busyNow(cpus);
  ASSERT_TRUE(before) << "/proc/stat has no line for a CPU of this process";
  // Half a second of work on this thread: the busy time of the CPUs it may
  // run on grows by at least that much, less the accounting's tick.
  auto start = std::chrono::steady_clock::now();
  volatile double sink = 0;
  while (std::chrono::steady_clock::now() - start <
         std::chrono::milliseconds(500))
    sink = sink + 1.0;
  std::optional<double> after = busyNow(cpus);
  ASSERT_TRUE(after);
  EXPECT_GE(*after - *before, 0.4);
}

TEST(Threads, TeamShrinksWhileOtherProcessesHoldTheCores) {
#ifndef _OPENMP
  GTEST_SKIP() << "built without OpenMP";
#else
  int maxThreads = omp_get_max_threads();
  if (maxThreads < 2)
    GTEST_SKIP() << "one OpenMP thread";
  if (const char *v = std::getenv("GNNC_ADAPTIVE_THREADS"))
    if (std::string(v) == "0")
      GTEST_SKIP() << "GNNC_ADAPTIVE_THREADS=0";
  // One spinning child on each CPU this process may use; each dies with
  // this process.
  std::vector<pid_t> children;
  for (int cpu : allowedCpus()) {
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(cpu, &one);
      sched_setaffinity(0, sizeof one, &one);
      for (volatile unsigned long i = 0;; i = i + 1) {
      }
    }
    children.push_back(pid);
  }
  // Two measurements at least 200 ms apart, then the team of 1.
  int size = maxThreads;
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < until &&
         (size = rt::teamSize()) > 1)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  for (pid_t pid : children) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
  EXPECT_EQ(size, 1) << "with every core held by another process";
#endif
}
#endif

} // namespace
