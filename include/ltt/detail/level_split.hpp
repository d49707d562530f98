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

// Whether a + b > 1 in exact arithmetic (a, b >= 0, finite): the rounded sum and its exact
// rounding error (Knuth's TwoSum) decide it.
inline bool sum_exceeds_one(double a, double b) {
  const double s = a + b;
  const double bb = s - a;
  const double error = (a - (s - bb)) + (b - bb);
  return s > 1.0 || (s == 1.0 && error > 0.0);
}

// Largest double c with c + w <= 1 in exact arithmetic (0 <= w <= 1): the share 1 - w left
// to a second test when one test takes the share w. fl(1 - 0.2) is 0.8, above 1 - fl(0.2) by
// 5.6e-17, so the two levels delta (1 - w) and delta w would sum past delta.
inline double complement_share(double w) {
  double c = 1.0 - w;
  while (c > 0.0 && sum_exceeds_one(c, w)) c = std::nextafter(c, 0.0);
  return c;
}

// A double at most w + c * e in exact arithmetic (all three >= 0, finite): the product and
// the sum are each stepped down one ulp where rounding to nearest took them up (fma gives the
// product's error exactly, TwoSum the sum's).
inline double share_sum_down(double w, double c, double e) {
  double product = c * e;
  if (std::fma(c, e, -product) < 0.0) product = std::nextafter(product, 0.0);
  const double s = w + product;
  const double back = s - w;
  const double error = (w - (s - back)) + (product - back);
  return error < 0.0 ? std::nextafter(s, 0.0) : s;
}

}  // namespace ltt::detail
