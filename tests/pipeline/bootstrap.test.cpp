// Tests for reference_pipeline/pipeline/bootstrap.hpp.

#include <pipeline/bootstrap.hpp>

#include <doctest/doctest.h>

#include "../support/throws.hpp"

#include <cmath>
#include <limits>
#include <vector>

namespace pl = ltt::pipeline;

TEST_CASE("bootstrap_mean: one value has no interval; equal values give a point") {
  const std::vector<double> one{3.5};
  const pl::Interval a = pl::bootstrap_mean(one);
  CHECK(a.mean == 3.5);
  CHECK(a.low == 3.5);
  CHECK(a.high == 3.5);
  CHECK(a.samples == 1);
  const std::vector<double> same{2, 2, 2, 2};
  const pl::Interval b = pl::bootstrap_mean(same);
  CHECK(b.low == 2);
  CHECK(b.high == 2);
}

TEST_CASE("bootstrap_mean: two values, the exact resampling distribution") {
  // Resampled means of {a, b} are a, (a + b) / 2, b with probabilities 1/4, 1/2, 1/4, so the
  // 2.5% and 97.5% percentiles of 10000 resamples are a and b except with probability about
  // 2 (3/4)^250 (the 250 lowest resamples would all have to miss a).
  const std::vector<double> v{1.0, 4.0};
  const pl::Interval i = pl::bootstrap_mean(v, 0.95, 10000, 7);
  CHECK(i.mean == 2.5);
  CHECK(i.low == 1.0);
  CHECK(i.high == 4.0);
  // a 40% interval lies inside the middle mass (the middle value holds half of it)
  const pl::Interval narrow = pl::bootstrap_mean(v, 0.4, 10000, 7);
  CHECK(narrow.low == 2.5);
  CHECK(narrow.high == 2.5);
}

TEST_CASE("bootstrap_mean: deterministic for a seed, inside the data's range") {
  const std::vector<double> v{0.3, 1.7, 2.2, 5.0, 0.9};
  const pl::Interval a = pl::bootstrap_mean(v, 0.95, 2000, 3);
  const pl::Interval b = pl::bootstrap_mean(v, 0.95, 2000, 3);
  CHECK(a.low == b.low);
  CHECK(a.high == b.high);
  CHECK(a.low >= 0.3);
  CHECK(a.high <= 5.0);
  CHECK(a.low <= a.mean);
  CHECK(a.mean <= a.high);
}

TEST_CASE("bootstrap_mean: bad input names the parameter") {
  const std::vector<double> empty, nan{1.0, std::nan("")}, ok{1.0, 2.0};
  ltt_test::check_throws_naming([&] { (void)pl::bootstrap_mean(empty); }, "values");
  ltt_test::check_throws_naming([&] { (void)pl::bootstrap_mean(nan); }, "values");
  ltt_test::check_throws_naming([&] { (void)pl::bootstrap_mean(ok, 1.0); }, "confidence");
  ltt_test::check_throws_naming([&] { (void)pl::bootstrap_mean(ok, 0.95, 0); }, "resamples");
}
