#pragma once
// Portable draws from std::mt19937_64. The engine's output sequence is fixed by the standard,
// but std::uniform_int_distribution and std::uniform_real_distribution are not: libstdc++ and
// libc++ map the same engine output to different values. Everything random in the curation
// layer goes through these two functions, so a seed gives the same bytes on every platform.

#include <cstdint>
#include <random>

namespace ltt::curation::detail {

// Uniform on {0, ..., bound - 1}, bound >= 1: reject the 2^64 mod bound smallest outputs so the
// rest split evenly into bound classes, then reduce.
inline std::uint64_t uniform_below(std::mt19937_64& rng, std::uint64_t bound) {
  const std::uint64_t rejected = (0 - bound) % bound;  // 2^64 mod bound
  for (;;) {
    const std::uint64_t x = rng();
    if (x >= rejected) return x % bound;
  }
}

inline std::int64_t uniform_below(std::mt19937_64& rng, std::int64_t bound) {
  return static_cast<std::int64_t>(uniform_below(rng, static_cast<std::uint64_t>(bound)));
}

// Uniform on [0, 1) with 53 random bits: k / 2^53 for k uniform on {0, ..., 2^53 - 1}.
inline double uniform_unit(std::mt19937_64& rng) {
  return static_cast<double>(rng() >> 11) * 0x1p-53;
}

}  // namespace ltt::curation::detail
