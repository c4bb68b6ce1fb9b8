// Part of gnnc. What bridge.cpp and bridge_cuda.cpp share: errors as C
// strings, and objects made with a Status-returning builder.

#ifndef GNNC_TORCH_BRIDGE_UTIL_H
#define GNNC_TORCH_BRIDGE_UTIL_H

#include "gnnc/runtime/Status.h"

#include <cstring>
#include <new>
#include <string>

namespace gnnc_torch {

/// Copies `message` into `err` (truncated, terminated); returns 1.
inline int fail(const std::string &message, char *err, size_t errLen) {
  if (errLen > 0) {
    std::strncpy(err, message.c_str(), errLen - 1);
    err[errLen - 1] = '\0';
  }
  return 1;
}

/// A new T filled by `build(T &)`, or null with the message in `err`.
template <typename T, typename Build>
T *makeOrFail(Build build, char *err, size_t errLen) {
  auto *out = new (std::nothrow) T();
  if (!out) {
    fail("out of memory", err, errLen);
    return nullptr;
  }
  gnnc::rt::Status st = build(*out);
  if (!st.ok()) {
    delete out;
    fail(st.message(), err, errLen);
    return nullptr;
  }
  return out;
}

} // namespace gnnc_torch

#endif // GNNC_TORCH_BRIDGE_UTIL_H
