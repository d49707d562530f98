#pragma once
// exp(x) for -708 <= x <= 1 by one branch-free sequence of IEEE operations, written once for a
// double and for a vector of doubles (GCC/Clang vector extensions), so a lane of a vector gets
// the scalar result to the bit. The mass of a hypergeometric law from the table of log n!
// (point_mass_by_table) uses it, in the scalar call and across cases in composition_pvalues.
//
// Algorithm (Cody and Waite; Tang 1989): n = round(x / log 2), r = x - n log 2 formed with two
// FMAs (its error far below an ulp of r), so |r| <= 0.347; exp(r) = 1 + r + r^2 p(r) with p the Taylor
// polynomial of degree 11 (truncation below 5e-18 relative), the last addition rounded once;
// then an exact scaling by 2^n built in the exponent bits. The error is below one ulp (the
// final rounding, half an ulp, plus at most a quarter from q = r + r^2 p; measured worst 0.98
// over 4e5 points of [-708, 1] against long double expl, tests/ltt/exp_kernel.test.cpp); glibc's
// exp is within about half an ulp. It serves where one exp per case would otherwise be a
// function call per lane. Below -708 the result would be subnormal: callers take
// std::exp there (exp_kernel_min).

#include <bit>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include <ltt/detail/lanes.hpp>

namespace ltt::detail {

inline constexpr double exp_kernel_min = -708.0;

// exp(x) for exp_kernel_min <= x <= 1, T = double or Lanes.
template <class T>
inline T exp_kernel(T x) {
  using Bits = std::conditional_t<std::is_same_v<T, double>, std::int64_t, LaneMask>;
  constexpr double log2e = 0x1.71547652b82fep0, shifter = 0x1.8p52;
  constexpr double ln2_hi = 0x1.62e42fefa39efp-1, ln2_lo = 0x1.abc9e3b39803fp-56;
  const T zero = x - x;  // a T of zeros whatever T is
  const T t = fused_multiply_add(x, zero + log2e, zero + shifter);  // shifter + n in its bits
  const T n = t - shifter;
  T r = fused_multiply_add(n, zero - ln2_hi, x);
  r = fused_multiply_add(n, zero - ln2_lo, r);
  constexpr double c[] = {1.0 / 2,        1.0 / 6,         1.0 / 24,         1.0 / 120,
                          1.0 / 720,      1.0 / 5040,      1.0 / 40320,      1.0 / 362880,
                          1.0 / 3628800,  1.0 / 39916800,  1.0 / 479001600,  1.0 / 6227020800};
  T p = zero + c[11];
  for (int j = 10; j >= 0; --j) p = fused_multiply_add(p, r, zero + c[j]);
  const T r2 = r * r;
  const T e = fused_multiply_add(r2, p, r) + 1.0;  // 1 + (r + r^2 p), rounded once
  // 2^n: n + 1023 in the exponent field. t's low bits hold n (two's complement) above the
  // shifter's bit pattern.
  Bits bits;
  if constexpr (std::is_same_v<T, double>)
    bits = std::bit_cast<std::int64_t>(t);
  else
    bits = reinterpret_cast<Bits>(t);
  bits = (bits - std::bit_cast<std::int64_t>(shifter) + 1023) << 52;
  T scale;
  if constexpr (std::is_same_v<T, double>)
    scale = std::bit_cast<double>(bits);
  else
    scale = reinterpret_cast<T>(bits);
  return e * scale;
}

}  // namespace ltt::detail
