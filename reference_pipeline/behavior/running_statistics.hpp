#pragma once
// A running mean and variance per column over every batch seen so far (tianshou's
// RunningMeanStd, tianshou/utils/statistics.py, which FSRL uses for its value normalization):
// starting from mean 0, variance 1 and count 0, a batch of m rows with column means mu_b and
// population variances var_b merges as Chan et al.'s parallel update,
//
//   delta = mu_b - mu,  n' = n + m,  mu' = mu + delta m / n',
//   var' = (var n + var_b m + delta^2 n m / n') / n',
//
// so the first batch sets both to its own. In double.

#include <cstdint>
#include <span>
#include <vector>

namespace ltt::behavior {

class RunningStatistics {
 public:
  explicit RunningStatistics(std::int64_t columns = 1);

  // rows x columns values, row after row (at least one row).
  void update(std::span<const double> values);
  void update(std::span<const float> values);

  std::span<const double> mean() const { return mean_; }
  std::span<const double> variance() const { return variance_; }
  std::int64_t count() const { return count_; }

 private:
  template <class T>
  void merge(std::span<const T> values);

  std::vector<double> mean_, variance_;
  std::int64_t count_ = 0;
};

}  // namespace ltt::behavior
