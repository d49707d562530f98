#pragma once
// Saddle-point pieces of Loader (2000), "Fast and accurate computation of binomial
// probabilities", as used by R's nmath (stirlerr.c, bd0.c). They let a probability mass be
// written as exp(-deviance) times a square-root prefactor, so that no two large logarithms
// of factorials are ever subtracted.

#include <array>
#include <cmath>
#include <cstdint>

namespace ltt::detail {

// stirlerr(x) = log(x!) - log(sqrt(2 pi x) (x/e)^x) for integer x >= 1; 0 at x = 0 by
// convention (callers treat empty cells separately). Exact values for x <= 15 (computed with
// 50-digit decimal arithmetic); above, the Stirling series in 1/x, truncated where the next
// term is below 1.2e-16 in absolute value (the error that matters: it enters an exponent).
inline double stirlerr(double x) {
  static constexpr std::array<double, 16> exact = {0.0,
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
  constexpr double s0 = 1.0 / 12, s1 = 1.0 / 360, s2 = 1.0 / 1260, s3 = 1.0 / 1680, s4 = 1.0 / 1188;
  if (x <= 15.0) return exact[static_cast<std::size_t>(x)];
  const double r = 1.0 / x, r2 = r * r;
  if (x > 500.0) return (s0 - s1 * r2) * r;
  if (x > 80.0) return (s0 - (s1 - s2 * r2) * r2) * r;
  if (x > 35.0) return (s0 - (s1 - (s2 - s3 * r2) * r2) * r2) * r;
  return (s0 - (s1 - (s2 - (s3 - s4 * r2) * r2) * r2) * r2) * r;
}

// Reciprocals 1/(2j+1) for the deviance series, rounded once at compile time in T.
template <class T>
inline constexpr auto odd_reciprocals = [] {
  std::array<T, 48> r{};
  for (std::size_t j = 0; j < r.size(); ++j) r[j] = T(1) / T(2 * j + 1);
  return r;
}();

// Deviance bd0(x, E) = x log(x/E) + E - x >= 0 of a count x from its expectation E, given the
// difference diff = x - E computed exactly upstream (never as the difference of two rounded
// numbers: that cancellation is what costs R's bd0 its accuracy far in the tails).
//  - |v| <= 1/3 with v = (x-E)/(x+E): Loader's series (x-E) v + 2x sum_{j>=1} v^(2j+1)/(2j+1),
//    whose correction terms are at most 2/27 of the leading one, so nothing cancels;
//  - otherwise x log(x/E) - (x - E), where the two terms cancel by at most a factor 3.6.
// The relative error is a few units of T's rounding, so the absolute error is a few units
// times the deviance itself; callers switch to long double when the deviance is large.
template <class T>
inline T deviance(T x, T expected, T diff) {
  using std::log, std::log1p;
  const T v = diff / (x + expected);
  if (v <= T(1) / 3 && v >= -T(1) / 3) {
    const T v2 = v * v;
    T sum = diff * v;
    T power = 2 * x * v;  // 2x v^(2j+1) after the update below
    for (std::size_t j = 1; j < odd_reciprocals<T>.size(); ++j) {
      power *= v2;
      const T next = sum + power * odd_reciprocals<T>[j];
      if (next == sum) break;
      sum = next;
    }
    return sum;
  }
  if (x == 0) return expected;
  const T t = diff / expected;
  const T log_ratio = t > 1 ? log(x / expected) : log1p(t);
  return x * log_ratio - diff;
}

}  // namespace ltt::detail
