// Running mean and variance (running_statistics.hpp).

#include "behavior/running_statistics.hpp"

#include "behavior/check.hpp"

namespace ltt::behavior {

RunningStatistics::RunningStatistics(std::int64_t columns) {
  if (columns < 1)
    detail::invalid("RunningStatistics", "columns", detail::show(columns), "must be >= 1");
  mean_.assign(static_cast<std::size_t>(columns), 0.0);
  variance_.assign(static_cast<std::size_t>(columns), 1.0);
}

template <class T>
void RunningStatistics::merge(std::span<const T> values) {
  const std::size_t columns = mean_.size();
  if (values.empty() || values.size() % columns != 0)
    detail::invalid(
        "RunningStatistics::update", "values.size()",
        detail::show(static_cast<std::int64_t>(values.size())),
        data::cat("must be a positive multiple of the ", std::to_string(columns), " columns"));
  const std::size_t rows = values.size() / columns;
  const double m = static_cast<double>(rows), n = static_cast<double>(count_), total = n + m;
  for (std::size_t c = 0; c < columns; ++c) {
    double batch_mean = 0.0;
    for (std::size_t r = 0; r < rows; ++r)
      batch_mean += static_cast<double>(values[r * columns + c]);
    batch_mean /= m;
    double batch_variance = 0.0;
    for (std::size_t r = 0; r < rows; ++r) {
      const double d = static_cast<double>(values[r * columns + c]) - batch_mean;
      batch_variance += d * d;
    }
    batch_variance /= m;
    const double delta = batch_mean - mean_[c];
    mean_[c] += delta * m / total;
    variance_[c] = (variance_[c] * n + batch_variance * m + delta * delta * n * m / total) / total;
  }
  count_ += static_cast<std::int64_t>(rows);
}

void RunningStatistics::update(std::span<const double> values) { merge(values); }
void RunningStatistics::update(std::span<const float> values) { merge(values); }

}  // namespace ltt::behavior
