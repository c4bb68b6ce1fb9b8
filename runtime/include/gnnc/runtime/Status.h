//===- Status.h - Error reporting for the gnnc runtime ----------*- C++ -*-===//
//
// Part of gnnc. The runtime API throws no exceptions: every call that can
// fail returns a Status and hands its results back through reference
// parameters, which are only written on success. A failed Status carries one
// lower-case message that names the file (or object) and the problem, e.g.
// `cora/edge_index.npy: expected dtype int64, got float32`. GNNC_TRY(expr)
// returns a failed Status from the enclosing function.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_RUNTIME_STATUS_H
#define GNNC_RUNTIME_STATUS_H

#include <string>
#include <utility>

namespace gnnc::rt {

/// The outcome of a fallible runtime call: success, or an error message.
class [[nodiscard]] Status {
public:
  /// A successful status.
  Status() = default;

  static Status success() { return Status(); }
  static Status error(std::string message) {
    Status s;
    s.Failed = true;
    s.Message = std::move(message);
    return s;
  }

  bool ok() const { return !Failed; }
  /// The error message; empty on success.
  const std::string &message() const { return Message; }

  /// Returns this error with `prefix: ` in front of its message (a success
  /// stays a success).
  Status withPrefix(const std::string &prefix) const {
    if (ok())
      return *this;
    return error(prefix + ": " + Message);
  }

private:
  bool Failed = false;
  std::string Message;
};

} // namespace gnnc::rt

/// Evaluates an expression of type gnnc::rt::Status and returns it from the
/// enclosing function when it is an error.
#define GNNC_TRY(expr)                                                         \
  do {                                                                         \
    ::gnnc::rt::Status gnnc_status_ = (expr);                                  \
    if (!gnnc_status_.ok())                                                    \
      return gnnc_status_;                                                     \
  } while (0)

#endif // GNNC_RUNTIME_STATUS_H
