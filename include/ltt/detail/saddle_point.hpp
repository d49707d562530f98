#pragma once
// Saddle-point pieces of Loader (2000), "Fast and accurate computation of binomial
// probabilities", as used by R's nmath (stirlerr.c, bd0.c). They let a probability mass be
// written as exp(-deviance) times a square-root prefactor, so that no two large logarithms
// of factorials are ever subtracted.

#include <array>
#include <cmath>
#include <cstdint>

#include <ltt/detail/double_double.hpp>

// -Wpsabi: see <ltt/detail/double_double.hpp>.
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wunknown-warning-option"
#pragma clang diagnostic ignored "-Wpsabi"
#endif

namespace ltt::detail {

// stirlerr(x) = log(x!) - log(sqrt(2 pi x) (x/e)^x) for integer x >= 1; 0 at x = 0 by
// convention (callers treat empty cells separately). Exact values for x <= 15 (computed with
// 50-digit decimal arithmetic); above, the Stirling series in 1/x, truncated where the next
// term is below 1.2e-16 in absolute value (the error that matters: it enters an exponent).
inline constexpr std::array<double, 16> stirlerr_exact = {0.0,
                                                          8.106146679532725821967e-2,
                                                          4.134069595540929409382e-2,
                                                          2.767792568499833914879e-2,
                                                          2.079067210376509311152e-2,
                                                          1.664469118982119216319e-2,
                                                          1.387612882307074799875e-2,
                                                          1.189670994589177009506e-2,
                                                          1.041126526197209649748e-2,
                                                          9.255462182712732917729e-3,
                                                          8.330563433362871256469e-3,
                                                          7.573675487951840794972e-3,
                                                          6.942840107209529865664e-3,
                                                          6.408994188004207068440e-3,
                                                          5.951370112758847735624e-3,
                                                          5.554733551962801371039e-3};

namespace stirlerr_coefficients {
constexpr double s0 = 1.0 / 12, s1 = 1.0 / 360, s2 = 1.0 / 1260, s3 = 1.0 / 1680, s4 = 1.0 / 1188;
}

inline double stirlerr(double x) {
  using namespace stirlerr_coefficients;
  if (x <= 15.0) return stirlerr_exact[static_cast<std::size_t>(x)];
  const double r = 1.0 / x, r2 = r * r;
  if (x > 500.0) return (s0 - s1 * r2) * r;
  if (x > 80.0) return (s0 - (s1 - s2 * r2) * r2) * r;
  if (x > 35.0) return (s0 - (s1 - (s2 - s3 * r2) * r2) * r2) * r;
  return (s0 - (s1 - (s2 - (s3 - s4 * r2) * r2) * r2) * r2) * r;
}

// stirlerr of four integers at once: the series with all five terms (the one stirlerr uses
// up to x = 35, and more accurate beyond), the exact values where x <= 15.
__attribute__((always_inline)) inline Four stirlerr_lanes(Four x) {
  using namespace stirlerr_coefficients;
  const Four r = 1.0 / x, r2 = r * r;
  const Four series = (s0 - (s1 - (s2 - (s3 - s4 * r2) * r2) * r2) * r2) * r;
  Four exact;  // lanes above 15 read the entry of 15 and drop it: no branch per lane
  for (int l = 0; l < 4; ++l)
    exact[l] = stirlerr_exact[static_cast<std::size_t>(x[l] < 15.0 ? x[l] : 15.0)];
  return x <= 15.0 ? exact : series;
}

// bd0(x, E) of four cells at once, one per lane, as double-doubles, from the counts x (exact
// doubles) and diff = x - E (double-doubles exact to about 2^-104 upstream), so E = x - diff.
// With v = diff / (x + E), each lane takes one of (both are formed in every lane and one kept:
// no branch, whose direction the tables of a workload make unpredictable):
//  - |v| <= 1/16 (up to the low parts): Loader's series diff v + 2x v^3/3 + 2x sum_{j>=2}
//    v^(2j+1)/(2j+1); the first two terms in double-double (the second is at most v/3 of the
//    first), the rest, at most 2^-14 of the first, in double from v.hi, truncated after v^17
//    (the omitted terms below 2^-66 of the first);
//  - otherwise x log(x/E) - diff with x/E and its log (log_double_double) in double-double;
//    the two terms cancel by at most a factor of about 16, leaving about 2^-66 relative;
//  - x = 0: bd0 = E.
// So the relative error is below about 2^-64 (2^-65 measured worst against 113-bit arithmetic
// over 2e6 cells), against a few 2^-53 for a deviance in double: the absolute error of a deviance
// of 700 (a mass e^-700) is still a small fraction of DBL_EPSILON.
// Always inlined: called out of line, it returned with the upper halves of the vector registers
// in use (its result is vectors, so GCC cannot clear them), and the libm log and exp called
// after it ran at a quarter of their speed; inlined, its caller clears them on return.
__attribute__((always_inline)) inline DoubleDouble<Four> deviance_lanes(Four x,
                                                                        DoubleDouble<Four> diff) {
  const Four zero = x - x, two_x = 2.0 * x;
  // The series.
  const DoubleDouble<Four> sum = two_sum(two_x, -diff.hi);  // x + E = 2x - diff
  const DoubleDouble<Four> w = fast_two_sum(sum.hi, sum.lo - diff.lo);
  const DoubleDouble<Four> v = divide(diff, w);
  DoubleDouble<Four> lead = two_prod(diff.hi, v.hi);  // diff v
  lead.lo += diff.hi * v.lo + diff.lo * v.hi;
  // 2x v^3 / 3: v^3 = cube.hi + cube.lo, and 2x/3 = g.hi + g.lo.
  constexpr double third_hi = 0x1.5555555555555p-2, third_lo = 0x1.5555555555555p-56;
  const DoubleDouble<Four> square = two_prod(v.hi, v.hi);
  DoubleDouble<Four> cube = two_prod(square.hi, v.hi);
  cube.lo += square.lo * v.hi + 3.0 * square.hi * v.lo;
  DoubleDouble<Four> g = two_prod(two_x, zero + third_hi);
  g.lo += two_x * third_lo;
  DoubleDouble<Four> second = two_prod(cube.hi, g.hi);
  second.lo += cube.hi * g.lo + cube.lo * g.hi;
  // 2x v^5 (1/5 + u/7 + ... + u^6/17), u = v^2, by Estrin's scheme
  const Four u = square.hi, u2 = u * u, u4 = u2 * u2;
  const Four s57 = fma_lanes(zero + 1.0 / 7, u, zero + 1.0 / 5);
  const Four s911 = fma_lanes(zero + 1.0 / 11, u, zero + 1.0 / 9);
  const Four s1315 = fma_lanes(zero + 1.0 / 15, u, zero + 1.0 / 13);
  const Four s = fma_lanes(fma_lanes(zero + 1.0 / 17, u2, s1315), u4, fma_lanes(s911, u2, s57));
  const Four rest = two_x * cube.hi * u * s;
  const DoubleDouble<Four> head = two_sum(lead.hi, second.hi);
  const DoubleDouble<Four> series = fast_two_sum(head.hi, head.lo + ((lead.lo + second.lo) + rest));
  // The logarithm: x / E = q (1 + t), q = x (1 / E.hi), t = (x - q E) / x with the remainder by
  // an FMA. Lanes that keep the series or are empty take the log of 1 instead (a valid input).
  const auto use_log = (16.0 * (diff.hi < 0 ? -diff.hi : diff.hi) > w.hi) & (x != 0);
  const DoubleDouble<Four> difference = two_sum(x, -diff.hi);  // E = x - diff
  const DoubleDouble<Four> expected = fast_two_sum(difference.hi, difference.lo - diff.lo);
  const Four one = zero + 1.0;
  const Four safe_x = use_log ? x : one, safe_e = use_log ? expected.hi : one;
  const Four q = safe_x / safe_e;
  const Four t = (fma_lanes(-q, safe_e, safe_x) - q * (use_log ? expected.lo : zero)) / safe_x;
  const DoubleDouble<Four> log_ratio = log_double_double(q, t);
  DoubleDouble<Four> term = two_prod(x, log_ratio.hi);
  term.lo += x * log_ratio.lo;
  const DoubleDouble<Four> lt = two_sum(term.hi, -diff.hi);
  const DoubleDouble<Four> logarithm = fast_two_sum(lt.hi, (lt.lo + term.lo) - diff.lo);
  const auto empty = x == 0;
  return {empty ? -diff.hi : (use_log ? logarithm.hi : series.hi),
          empty ? -diff.lo : (use_log ? logarithm.lo : series.lo)};
}

}  // namespace ltt::detail

#if defined(__clang__)
#pragma clang diagnostic pop
#endif
