//===- Random.h - Counter-based random numbers and dropout masks -*- C++
//-*-===//
//
// Part of gnnc. The one definition of the dropout mask that the reference
// interpreter (interp::dropoutKeeps), the host operations and generated C++
// (Ops.h), the CUDA runtime and generated kernels (Kernel.cuh) and the
// training helpers (Train.h) all draw: element `index` of a tensor dropped
// with probability `p` and seed `seed` is kept exactly when the top 53 bits
// of splitmix64(seed * 0x9E3779B97F4A7C15 + index), read as a double in
// [0, 1), are >= p. The generator is counter-based, so recomputing a mask
// never needs the mask itself, and the backward of a dropout redraws the
// forward's mask from its seed.
//
// Header-only and dependency-free (the gnnc_abi target): host C++ and, when
// compiled by nvcc, device code (every function is __host__ __device__
// there).
//
//===----------------------------------------------------------------------===//

#ifndef GNNC_RUNTIME_RANDOM_H
#define GNNC_RUNTIME_RANDOM_H

#include <cstdint>

/// Marks a function callable from host and device code under nvcc, and
/// always inlined there; plain `inline` for a host compiler.
#if defined(__CUDACC__)
#define GNNC_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define GNNC_HOST_DEVICE inline
#endif

namespace gnnc::rt {

/// The increment of the splitmix64 state, 2^64 / golden ratio.
inline constexpr uint64_t kSplitMixGamma = 0x9E3779B97F4A7C15ull;

/// splitmix64's output mix of a state `z` (Steele, Lea and Flood, OOPSLA
/// 2014; Vigna's reference code): the value next() returns once the state
/// has been advanced to `z`.
GNNC_HOST_DEVICE constexpr uint64_t splitMix64Mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// MurmurHash3's 64-bit finaliser fmix64: a bijection with fmix64(0) = 0.
GNNC_HOST_DEVICE constexpr uint64_t fmix64(uint64_t k) {
  k ^= k >> 33;
  k *= 0xFF51AFD7ED558CCDull;
  k ^= k >> 33;
  k *= 0xC4CEB9FE1A85EC53ull;
  k ^= k >> 33;
  return k;
}

/// The seed a dropout op with seed `opSeed` in the IR uses when the entry
/// point is called with `stepSeed`: opSeed itself for stepSeed 0 (the mask of
/// the reference interpreter), else opSeed XOR fmix64(stepSeed), so that
/// every training step draws new masks and different ops keep different
/// masks.
GNNC_HOST_DEVICE constexpr uint64_t mixSeed(int64_t opSeed, uint64_t stepSeed) {
  return static_cast<uint64_t>(opSeed) ^ fmix64(stepSeed);
}

/// The top 53 bits of splitmix64(seed * 0x9E3779B97F4A7C15 + index): the
/// random number behind element `index` of a dropout mask, u = bits * 2^-53
/// in [0, 1).
GNNC_HOST_DEVICE constexpr uint64_t dropoutBits(uint64_t seed, uint64_t index) {
  return splitMix64Mix(seed * kSplitMixGamma + index + kSplitMixGamma) >> 11;
}

/// The integer form of the test u >= p: an element is kept exactly when
/// dropoutBits(seed, index) >= dropoutThreshold(p), ceil(p * 2^53) (0 for
/// p <= 0: always kept; 2^53 for p >= 1 or NaN: never kept). u and p * 2^53
/// are exact in double and the bits are an integer, so the two tests agree
/// for every p.
GNNC_HOST_DEVICE constexpr uint64_t dropoutThreshold(double p) {
  if (p <= 0)
    return 0;
  if (!(p < 1))
    return uint64_t{1} << 53;
  double scaled = p * 0x1.0p53;
  uint64_t floor = static_cast<uint64_t>(scaled);
  return static_cast<double>(floor) < scaled ? floor + 1 : floor;
}

/// Whether element `index` of the mask of `seed` is kept, for the threshold
/// dropoutThreshold(p). Both sides are at most 2^53: the signed compare is
/// the unsigned one, and vectorises on targets without unsigned 64-bit
/// compares.
GNNC_HOST_DEVICE constexpr bool dropoutKept(uint64_t seed, uint64_t index,
                                            uint64_t threshold) {
  return static_cast<int64_t>(dropoutBits(seed, index)) >=
         static_cast<int64_t>(threshold);
}

/// Whether element `index` of a tensor dropped with probability `p` and
/// seed `seed` is kept (the mask of gnn.dropout and gnnk.dropout_keep).
GNNC_HOST_DEVICE constexpr bool dropoutKeeps(uint64_t seed, uint64_t index,
                                             double p) {
  return dropoutKept(seed, index, dropoutThreshold(p));
}

/// The multiplier of a kept element, 1 / (1 - p) computed in double and
/// rounded to float (infinite for p = 1, where nothing is kept).
GNNC_HOST_DEVICE float dropoutScale(double p) {
  return static_cast<float>(1.0 / (1.0 - p));
}

/// The multiplier of element `index` of a tensor dropped with probability
/// `p` and (mixed) seed `seed`: in training dropoutScale(p) when the element
/// is kept and 0 when it is dropped; 1 in inference. Everything but the hash
/// depends on `p` only, so a loop with a constant `p` computes the threshold
/// and the scale once, and vectorises (the hash is 64-bit integer
/// arithmetic).
GNNC_HOST_DEVICE float dropoutKeep(bool training, uint64_t seed, uint64_t index,
                                   double p) {
  if (!training)
    return 1.0f;
  return dropoutKeeps(seed, index, p) ? dropoutScale(p) : 0.0f;
}

/// dropoutKeep without double arithmetic, for device code: `threshold` is
/// dropoutThreshold(p) and `scale` dropoutScale(p), both computed once (by
/// the CUDA printer, as constants).
GNNC_HOST_DEVICE float dropoutKeep(bool training, uint64_t seed, uint64_t index,
                                   uint64_t threshold, float scale) {
  if (!training)
    return 1.0f;
  return dropoutKept(seed, index, threshold) ? scale : 0.0f;
}

} // namespace gnnc::rt

#endif // GNNC_RUNTIME_RANDOM_H
