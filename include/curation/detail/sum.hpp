#pragma once
// Neumaier-compensated summation: the error does not grow with the number of terms, which
// matters for means over thousand-step trajectories and for cost sums compared for equality.

#include <cmath>
#include <span>

namespace ltt::curation::detail {

inline double compensated_sum(std::span<const double> x) {
  double sum = 0.0, carry = 0.0;
  for (const double v : x) {
    const double t = sum + v;
    carry += std::abs(sum) >= std::abs(v) ? (sum - t) + v : (v - t) + sum;
    sum = t;
  }
  return sum + carry;
}

// x must be non-empty.
inline double compensated_mean(std::span<const double> x) {
  return compensated_sum(x) / static_cast<double>(x.size());
}

}  // namespace ltt::curation::detail
