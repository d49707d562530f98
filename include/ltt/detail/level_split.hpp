#pragma once
// Splitting the level delta into shares that sum to at most delta in exact arithmetic. A
// union bound over tests at levels t_1 .. t_r controls the error at t_1 + ... + t_r, and
// shares computed by rounding to nearest (delta / J, 1 - w) can land one ulp above their exact
// value, so the sum can exceed delta by a few units in the last place. Every share here is
// rounded toward validity instead: down, and checked exactly.

#include <cmath>
#include <cstdint>

namespace ltt::detail {

// Largest double t with t * count <= delta in exact arithmetic: count levels of size t (Bonferroni,
// Holm) sum to at most delta. fma gives the sign of t * count - delta exactly (count <= 2^53 is
// exact as a double).
inline double level_share(double delta, std::int64_t count) {
  const double c = static_cast<double>(count);
  double t = delta / c;
  while (std::fma(t, c, -delta) > 0.0) t = std::nextafter(t, 0.0);
  return t;
}

}  // namespace ltt::detail
