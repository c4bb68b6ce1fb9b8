//===- FuzzSupport.h - What the runtime's fuzz harnesses share --*- C++ -*-===//
//
// Part of gnnc. The runtime reads files by path, so each harness writes its
// input to files in a private temporary directory (under $TMPDIR, /tmp by
// default), removed when the process exits. An invariant that does not hold
// is reported and aborts, which libFuzzer records as a crash.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_RUNTIME_FUZZ_FUZZSUPPORT_H
#define GNNC_RUNTIME_FUZZ_FUZZSUPPORT_H

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

namespace gnnc::rt::fuzz {

/// The harness's temporary directory, created on first use and removed with
/// its contents at exit.
inline const std::string &tempDir() {
  struct Owner {
    std::string Path;
    Owner() {
      const char *base = std::getenv("TMPDIR");
      Path = std::string(base && *base ? base : "/tmp") + "/gnnc-fuzz-XXXXXX";
      if (!::mkdtemp(Path.data())) {
        std::perror("gnnc fuzz harness: mkdtemp");
        std::abort();
      }
    }
    ~Owner() {
      std::error_code ec;
      std::filesystem::remove_all(Path, ec);
    }
  };
  static const Owner dir;
  return dir.Path;
}

/// `tempDir()/name`.
inline std::string tempPath(const std::string &name) {
  return tempDir() + "/" + name;
}

/// Writes `size` bytes to `path`, replacing the file.
inline void writeBytes(const std::string &path, const uint8_t *data,
                       size_t size) {
  std::FILE *file = std::fopen(path.c_str(), "wb");
  if (!file || (size && std::fwrite(data, 1, size, file) != size) ||
      std::fclose(file) != 0) {
    std::perror(("gnnc fuzz harness: cannot write " + path).c_str());
    std::abort();
  }
}

/// Aborts with `what` unless `condition` holds.
inline void require(bool condition, const std::string &what) {
  if (condition)
    return;
  std::fprintf(stderr, "gnnc fuzz harness: invariant broken: %s\n",
               what.c_str());
  std::abort();
}

} // namespace gnnc::rt::fuzz

#endif // GNNC_RUNTIME_FUZZ_FUZZSUPPORT_H
