#pragma once
// Neumaier-compensated summation (Neumaier 1974): the rounding error of the sum does not grow
// with the number of terms. Shared by the bounds (means of costs) and the curation layer
// (trajectory means over thousand-step episodes, segment cost sums compared for equality).

#include <cmath>
#include <span>

namespace ltt::detail {

class CompensatedSum {
 public:
  void add(double v) {
    const double t = sum_ + v;
    carry_ += std::abs(sum_) >= std::abs(v) ? (sum_ - t) + v : (v - t) + sum_;
    sum_ = t;
  }
  double value() const { return sum_ + carry_; }

 private:
  double sum_ = 0.0, carry_ = 0.0;
};

inline double compensated_sum(std::span<const double> x) {
  CompensatedSum s;
  for (const double v : x) s.add(v);
  return s.value();
}

// x must be non-empty. The mean of finite values is finite even where their sum overflows
// (three state values of 1.7e308): then the terms are scaled by 2^-e, 2^e >= |x|, before they
// are summed (exact, but for terms below 2^-1022 + e, far under the sum's last bit) and the
// mean is scaled back. Sums that do not overflow take the first path, unchanged.
inline double compensated_mean(std::span<const double> x) {
  const double n = static_cast<double>(x.size());
  const double sum = compensated_sum(x);
  if (std::isfinite(sum)) return sum / n;
  for (const double v : x)
    if (!std::isfinite(v)) return sum / n;  // an infinite or NaN term: nothing to rescue
  const int e = std::ilogb(n) + 1;
  CompensatedSum scaled;
  for (const double v : x) scaled.add(std::ldexp(v, -e));
  return std::ldexp(scaled.value() / n, e);
}

}  // namespace ltt::detail
