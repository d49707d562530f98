#include "pipeline/bootstrap.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

#include <curation/detail/random.hpp>

#include "pipeline/check.hpp"

namespace ltt::pipeline {

Interval bootstrap_mean(std::span<const double> values, double confidence, std::int64_t resamples,
                        std::uint64_t seed) {
  using detail::invalid, detail::show;
  constexpr std::string_view function = "bootstrap_mean";
  detail::require(!values.empty(), function, "values", "must not be empty");
  for (std::size_t i = 0; i < values.size(); ++i)
    if (!std::isfinite(values[i]))
      invalid(function, "values",
              data::cat("must be finite (values[", show(i), "] = ", show(values[i]), ")"));
  if (!(confidence > 0 && confidence < 1))
    invalid(function, "confidence", show(confidence), "must lie in (0, 1)");
  if (resamples < 1) invalid(function, "resamples", show(resamples), "must be >= 1");
  const auto n = static_cast<std::int64_t>(values.size());
  Interval out;
  out.samples = n;
  double sum = 0;
  for (const double v : values) sum += v;
  out.mean = sum / static_cast<double>(n);
  if (n == 1) {
    out.low = out.high = out.mean;
    return out;
  }
  std::mt19937_64 rng(seed);
  std::vector<double> means(static_cast<std::size_t>(resamples));
  for (double& m : means) {
    double s = 0;
    for (std::int64_t i = 0; i < n; ++i)
      s += values[static_cast<std::size_t>(curation::detail::uniform_below(rng, n))];
    m = s / static_cast<double>(n);
  }
  std::sort(means.begin(), means.end());
  // Percentile by the nearest rank, so the interval is made of attained resample means.
  const auto at = [&](double q) {
    const auto r = static_cast<std::int64_t>(std::ceil(q * static_cast<double>(resamples))) - 1;
    return means[static_cast<std::size_t>(std::clamp<std::int64_t>(r, 0, resamples - 1))];
  };
  out.low = at((1 - confidence) / 2);
  out.high = at((1 + confidence) / 2);
  return out;
}

}  // namespace ltt::pipeline
