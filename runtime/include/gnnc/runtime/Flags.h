//===- Flags.h - Numeric command-line values, checked -----------*- C++ -*-===//
//
// Part of gnnc. The numeric flags of gnnc's runtime-side programs
// (gnnc-train, gnnc-gen-sbm): the whole text must be the number, NaN is not
// one, and a value outside its range is an error that names the flag, the
// text and the range:
//
//   --epochs: 0 is out of range (expected an integer in [1, 1000000])
//   --noise: 'nan' is not a number
//
// Header-only, so that programs built against the installed package use it
// without another library.
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_RUNTIME_FLAGS_H
#define GNNC_RUNTIME_FLAGS_H

#include <fmt/core.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <system_error>

namespace gnnc::rt {

/// The whole of `text` as a decimal number in [lo, hi] (`range` describes
/// the range in the error); false with `error` set otherwise.
inline bool parseFlagNumber(const std::string &flag, const std::string &text,
                            double lo, double hi, const char *range,
                            double &out, std::string &error) {
  const char *end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, out);
  if (text.empty() || ptr != end || ec == std::errc::invalid_argument ||
      std::isnan(out)) {
    error = fmt::format("{}: '{}' is not a number", flag, text);
    return false;
  }
  if (ec == std::errc::result_out_of_range || !(out >= lo && out <= hi)) {
    error =
        fmt::format("{}: {} is out of range (expected {})", flag, text, range);
    return false;
  }
  return true;
}

/// The whole of `text` as a decimal integer in [lo, hi]; false with `error`
/// set otherwise ("-0" is 0; any other negative number is out of range).
inline bool parseFlagInteger(const std::string &flag, const std::string &text,
                             uint64_t lo, uint64_t hi, uint64_t &out,
                             std::string &error) {
  bool negative = !text.empty() && text[0] == '-';
  const char *begin = text.data() + (negative ? 1 : 0);
  const char *end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(begin, end, out);
  if (begin == end || ptr != end || ec == std::errc::invalid_argument) {
    error = fmt::format("{}: '{}' is not an integer", flag, text);
    return false;
  }
  if (ec == std::errc::result_out_of_range || (negative && out != 0) ||
      out < lo || out > hi) {
    error =
        fmt::format("{}: {} is out of range (expected an integer in [{}, {}])",
                    flag, text, lo, hi);
    return false;
  }
  return true;
}

} // namespace gnnc::rt

#endif // GNNC_RUNTIME_FLAGS_H
