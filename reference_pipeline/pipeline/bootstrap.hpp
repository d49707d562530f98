#pragma once
// Percentile-bootstrap intervals for the mean over seeds (the paper's tables: mean and 95%
// bootstrap CI over five seeds). Resamples are drawn with the portable uniform of
// curation/detail/random.hpp, so a seed gives the same interval on every platform.
#include <cstdint>
#include <span>

namespace ltt::pipeline {

struct Interval {
  double mean = 0;
  double low = 0;            // lower percentile of the resampled means
  double high = 0;           // upper percentile
  std::int64_t samples = 0;  // values the mean is over (1: no interval, low = high = mean)
};

// The mean of `values` and the (1 - confidence)/2 and (1 + confidence)/2 percentiles of
// `resamples` bootstrap means (each a mean of values.size() draws with replacement). Throws
// std::invalid_argument naming 'values' (empty or non-finite), 'confidence' (outside (0, 1)) or
// 'resamples' (< 1).
Interval bootstrap_mean(std::span<const double> values, double confidence = 0.95,
                        std::int64_t resamples = 10000, std::uint64_t seed = 0);

}  // namespace ltt::pipeline
