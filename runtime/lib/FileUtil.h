//===- FileUtil.h - Error text shared by the runtime's readers -*- C++ -*-===//
//
// Part of gnnc. Internal to runtime/lib: how Npy.cpp and Dataset.cpp word
// errors about files.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_RUNTIME_LIB_FILEUTIL_H
#define GNNC_RUNTIME_LIB_FILEUTIL_H

#include "gnnc/runtime/Status.h"

#include <cctype>
#include <cstring>
#include <string>

namespace gnnc::rt::detail {

/// strerror(err) with a lower-case first letter.
inline std::string errnoText(int err) {
  std::string text = std::strerror(err);
  if (!text.empty())
    text[0] =
        static_cast<char>(std::tolower(static_cast<unsigned char>(text[0])));
  return text;
}

/// `path: message`.
inline Status fileError(const std::string &path, const std::string &message) {
  return Status::error(path + ": " + message);
}

} // namespace gnnc::rt::detail

#endif // GNNC_RUNTIME_LIB_FILEUTIL_H
