//===- BufferTest.cpp - Host buffers of generated code --------------------===//
//
// Part of gnnc. gnnc/runtime/Invoke.h: HostBuffer's memory is zeroed and
// aligned, and a large buffer starts on a 2 MiB boundary and is advised for
// transparent huge pages (its mapping's VmFlags in /proc/self/smaps carry
// "hg" wherever the kernel has transparent huge pages) unless
// GNNC_HUGE_PAGES=0.
//
//===----------------------------------------------------------------------===//

#include "gnnc/runtime/Abi.h"
#include "gnnc/runtime/Invoke.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace rt = gnnc::rt;

namespace {

bool allZero(const rt::HostBuffer &b) {
  const auto *bytes = static_cast<const unsigned char *>(b.data());
  for (std::size_t i = 0; i < b.size(); ++i)
    if (bytes[i] != 0)
      return false;
  return true;
}

/// The VmFlags line of the mapping of /proc/self/smaps that holds `at`, or
/// "" when there is none (no /proc).
std::string vmFlagsAt(const void *at) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  const auto address = reinterpret_cast<uintptr_t>(at);
  while (std::getline(smaps, line)) {
    unsigned long long from = 0, to = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> from >> dash >> to && dash == '-' &&
        line.find(':') != std::string::npos && line.find(' ') > 8) {
      inside = address >= from && address < to;
      continue;
    }
    if (inside && line.rfind("VmFlags:", 0) == 0)
      return line;
  }
  return "";
}

TEST(HostBuffer, SmallBuffersAreZeroedAndAligned) {
  for (std::size_t bytes : {std::size_t{1}, std::size_t{63}, std::size_t{64},
                            std::size_t{1000}, std::size_t{1} << 20}) {
    rt::HostBuffer b;
    ASSERT_TRUE(rt::HostBuffer::allocate(bytes, b).ok());
    EXPECT_EQ(b.size(), bytes);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % rt::kWorkspaceAlign, 0u)
        << bytes;
    EXPECT_TRUE(allZero(b)) << bytes;
  }
  rt::HostBuffer none;
  ASSERT_TRUE(rt::HostBuffer::allocate(0, none).ok());
  EXPECT_EQ(none.data(), nullptr);
}

TEST(HostBuffer, LargeBuffersStartOnAHugePage) {
  const std::size_t bytes = (std::size_t{24} << 20) + 12345;
  rt::HostBuffer b;
  ASSERT_TRUE(rt::HostBuffer::allocate(bytes, b).ok());
  EXPECT_EQ(b.size(), bytes);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(b.data()) % (std::size_t{2} << 20), 0u);
  EXPECT_TRUE(allZero(b));
#ifdef __linux__
  // MADV_HUGEPAGE succeeds, and marks the mapping, wherever the kernel was
  // built with transparent huge pages (the sysfs file exists).
  if (!std::ifstream("/sys/kernel/mm/transparent_hugepage/enabled"))
    GTEST_SKIP() << "this kernel has no transparent huge pages";
  std::string flags = vmFlagsAt(b.data());
  ASSERT_NE(flags, "") << "no mapping of /proc/self/smaps holds the buffer";
  EXPECT_NE(flags.find(" hg"), std::string::npos) << flags;
  // A small buffer is not advised.
  rt::HostBuffer small;
  ASSERT_TRUE(rt::HostBuffer::allocate(4096, small).ok());
  EXPECT_EQ(vmFlagsAt(small.data()).find(" hg"), std::string::npos);
  // Nor a large one with GNNC_HUGE_PAGES=0.
  ASSERT_EQ(setenv("GNNC_HUGE_PAGES", "0", 1), 0);
  rt::HostBuffer plain;
  rt::Status s = rt::HostBuffer::allocate(bytes, plain);
  unsetenv("GNNC_HUGE_PAGES");
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(allZero(plain));
  EXPECT_EQ(vmFlagsAt(plain.data()).find(" hg"), std::string::npos);
#endif
}

} // namespace
