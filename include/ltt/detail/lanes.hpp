#pragma once
// A vector of doubles as wide as the build's SIMD registers (8 where it targets AVX-512, 4 with
// AVX, as the default x86-64-v3 build does, 2 otherwise), through the GCC/Clang vector
// extensions: +, -, *, / act lane by lane with one IEEE rounding each, exactly as on a double,
// and comparisons give a mask of 0 or -1 per lane. The kernels written on it (exp_kernel.hpp,
// tail_lanes.hpp) give each lane the scalar result to the bit.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#if defined(__AVX__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

namespace ltt::detail {

#if defined(__AVX512F__)
inline constexpr int lane_count = 8;
#elif defined(__AVX__)
inline constexpr int lane_count = 4;
#else
inline constexpr int lane_count = 2;
#endif

using Lanes = double __attribute__((vector_size(8 * lane_count)));
using LaneMask = std::int64_t __attribute__((vector_size(8 * lane_count)));

// a b + c rounded once, on a double or lane by lane.
template <class T>
inline T fused_multiply_add(T a, T b, T c) {
  if constexpr (std::is_same_v<T, double>) {
    return std::fma(a, b, c);
  } else {
#if defined(__AVX512F__)
    return reinterpret_cast<T>(_mm512_fmadd_pd(reinterpret_cast<__m512d>(a),
                                               reinterpret_cast<__m512d>(b),
                                               reinterpret_cast<__m512d>(c)));
#elif defined(__AVX__) && defined(__FMA__)
    return reinterpret_cast<T>(_mm256_fmadd_pd(reinterpret_cast<__m256d>(a),
                                               reinterpret_cast<__m256d>(b),
                                               reinterpret_cast<__m256d>(c)));
#else
    T r = a;
    for (int l = 0; l < lane_count; ++l) r[l] = std::fma(a[l], b[l], c[l]);
    return r;
#endif
  }
}

// The number of lanes whose mask is set.
inline int active_lanes(LaneMask m) {
#if defined(__AVX512F__)
  return __builtin_popcount(
      _mm512_test_epi64_mask(reinterpret_cast<__m512i>(m), reinterpret_cast<__m512i>(m)));
#elif defined(__AVX__)
  return __builtin_popcount(
      static_cast<unsigned>(_mm256_movemask_pd(reinterpret_cast<__m256d>(m))));
#else
  int n = 0;
  for (int l = 0; l < lane_count; ++l) n += m[l] != 0;
  return n;
#endif
}

}  // namespace ltt::detail
