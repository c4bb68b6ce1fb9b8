//===- Counter.h - Counter-based random numbers of the samplers -*- C++ -*-===//
//
// Part of gnnc. Every random number of the samplers is a pure function of a
// key built from (seed, epoch, step, block, vertex) and of a draw index, so
// the samples never depend on the thread, the rank or the order in which
// they are made. The mixing is splitmix64's and MurmurHash3's finaliser
// (gnnc/runtime/Random.h).
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_SAMPLE_LIB_COUNTER_H
#define GNNC_SAMPLE_LIB_COUNTER_H

#include "gnnc/runtime/Random.h"

#include <cstdint>

namespace gnnc::sample::detail {

/// Folds `value` into `key`.
inline uint64_t mixKey(uint64_t key, uint64_t value) {
  return rt::splitMix64Mix(key ^ rt::fmix64(value + rt::kSplitMixGamma));
}

/// Draw `index` of the stream `key`: 64 random bits.
inline uint64_t draw(uint64_t key, uint64_t index) {
  return rt::splitMix64Mix(key + (index + 1) * rt::kSplitMixGamma);
}

/// Maps 64 random bits to [0, n) by Lemire's multiply-shift; the bias is at
/// most n / 2^64.
inline uint64_t below(uint64_t bits, uint64_t n) {
  return static_cast<uint64_t>(
      (static_cast<unsigned __int128>(bits) * n) >> 64);
}

/// Maps 64 random bits to a double in [0, 1) (the top 53 bits).
inline double unit(uint64_t bits) {
  return static_cast<double>(bits >> 11) * 0x1.0p-53;
}

/// Domain tags keep the streams of different uses apart.
enum : uint64_t {
  kShuffleDomain = 0x53485546464c45ull,  // item shuffles
  kNeighborDomain = 0x4e45494748424full, // per-destination draws
  kLaborDomain = 0x4c41424f52ull,        // per-source LABOR variates
};

} // namespace gnnc::sample::detail

#endif // GNNC_SAMPLE_LIB_COUNTER_H
