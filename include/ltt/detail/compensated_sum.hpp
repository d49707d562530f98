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

// x must be non-empty.
inline double compensated_mean(std::span<const double> x) {
  return compensated_sum(x) / static_cast<double>(x.size());
}

}  // namespace ltt::detail
