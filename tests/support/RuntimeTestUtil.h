//===- RuntimeTestUtil.h - Helpers for the runtime unit tests ---*- C++ -*-===//
//
// Part of gnnc. A self-deleting temporary directory and whole-file I/O.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_TESTS_SUPPORT_RUNTIMETESTUTIL_H
#define GNNC_TESTS_SUPPORT_RUNTIMETESTUTIL_H

#include "gtest/gtest.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

namespace gnnc::rt::testing {

/// Where the shared Cora dataset lives (tests skip when it is absent).
inline std::string coraDir() { return "/work/shared/datasets/cora"; }

/// A fresh directory under $TMPDIR (or /tmp), removed with its contents.
class TempDir {
public:
  TempDir() {
    const char *base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") +
                       "/gnnc-runtime-test-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    if (::mkdtemp(buf.data()))
      Dir = buf.data();
    else
      ADD_FAILURE() << "mkdtemp failed for " << tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    if (!Dir.empty())
      std::filesystem::remove_all(Dir, ec);
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;

  /// The directory.
  const std::string &dir() const { return Dir; }
  /// `dir/name`.
  std::string path(const std::string &name) const { return Dir + "/" + name; }

  /// Names of the entries directly in the directory, sorted.
  std::vector<std::string> listing() const {
    std::vector<std::string> names;
    std::error_code ec;
    for (const auto &entry : std::filesystem::directory_iterator(Dir, ec))
      names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

private:
  std::string Dir;
};

inline void writeFile(const std::string &path, const std::string &contents) {
  // Replace rather than truncate: truncating a just-written file makes ext4
  // flush it on close, which slows the many-files tests down a hundredfold.
  std::error_code ec;
  std::filesystem::remove(path, ec);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  ASSERT_TRUE(out.good()) << "cannot write " << path;
}

inline std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in),
                     std::istreambuf_iterator<char>());
}

inline bool fileExists(const std::string &path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec);
}

} // namespace gnnc::rt::testing

#endif // GNNC_TESTS_SUPPORT_RUNTIMETESTUTIL_H
