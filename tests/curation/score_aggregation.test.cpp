// Tests for include/curation/score_aggregation.hpp: mean, minimum and the type-7 percentile by
// hand (values as numpy.percentile gives them), the back-to-back layout, and argument checks.

#include <curation/score_aggregation.hpp>

#include <doctest/doctest.h>

#include "../support/throws.hpp"

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

namespace cur = ltt::curation;

using ltt_test::check_throws_naming;

cur::Aggregator percentile(double p) { return {cur::Aggregation::percentile, p}; }

}  // namespace

TEST_CASE("aggregate_score: mean by default, compensated") {
  const std::vector<double> v{4, 1, 3, 2};
  CHECK(cur::aggregate_score(v) == 2.5);
  // Naive left-to-right summation gives 0 here.
  const std::vector<double> hard{1e16, 1.0, -1e16};
  CHECK(cur::aggregate_score(hard) == doctest::Approx(1.0 / 3));
}

TEST_CASE("aggregate_score: the mean of finite values is finite where their sum overflows") {
  const double big = std::numeric_limits<double>::max();
  const std::vector<double> top{big, big, big};
  CHECK(cur::aggregate_score(top) == big);  // exact: (3 * 2^-2 big) / 3 * 2^2
  const std::vector<double> mixed{1.5e308, 1.7e308, -0.2e308, 1.0};
  CHECK(cur::aggregate_score(mixed) == doctest::Approx(0.75e308));
  const std::vector<double> offsets_data{1.7e308, 1.7e308, 1.0, 2.0};
  const std::vector<std::int64_t> offsets{0, 2, 4};
  const std::vector<double> g = cur::trajectory_scores(offsets_data, offsets);
  CHECK(g[0] == 1.7e308);
  CHECK(g[1] == 1.5);
}

TEST_CASE("aggregate_score: minimum") {
  const std::vector<double> v{4, -1, 3, 2};
  CHECK(cur::aggregate_score(v, {cur::Aggregation::minimum}) == -1.0);
}

TEST_CASE("aggregate_score: percentile, linear interpolation (numpy default)") {
  // numpy.percentile(range(1, 11), p): 10 -> 1.9, 25 -> 3.25, 50 -> 5.5, 0 -> 1, 100 -> 10.
  const std::vector<double> v{7, 3, 10, 1, 9, 2, 8, 4, 6, 5};
  CHECK(cur::aggregate_score(v, percentile(10)) == doctest::Approx(1.9).epsilon(1e-15));
  CHECK(cur::aggregate_score(v, percentile(25)) == doctest::Approx(3.25).epsilon(1e-15));
  CHECK(cur::aggregate_score(v, percentile(50)) == doctest::Approx(5.5).epsilon(1e-15));
  CHECK(cur::aggregate_score(v, percentile(0)) == 1.0);
  CHECK(cur::aggregate_score(v, percentile(100)) == 10.0);
  // numpy.percentile([0.5, -2, 4], 10) = -2 + 0.2 * 2.5 = -1.5
  CHECK(cur::aggregate_score(std::vector<double>{0.5, -2, 4}, percentile(10)) ==
        doctest::Approx(-1.5));
  CHECK(cur::aggregate_score(std::vector<double>{3.0}, percentile(10)) == 3.0);
  // Ties: numpy.percentile([1, 1, 1, 5], 90) = 1 + 0.7 * 4 = 3.8
  CHECK(cur::aggregate_score(std::vector<double>{1, 5, 1, 1}, percentile(90)) ==
        doctest::Approx(3.8));
}

TEST_CASE("trajectory_scores: back-to-back layout") {
  const std::vector<double> values{1, 2, 3, /**/ 10, /**/ 5, 6};
  const std::vector<std::int64_t> offsets{0, 3, 4, 6};
  CHECK(cur::trajectory_scores(values, offsets) == std::vector<double>{2.0, 10.0, 5.5});
  CHECK(cur::trajectory_scores(values, offsets, {cur::Aggregation::minimum}) ==
        std::vector<double>{1.0, 10.0, 5.0});
  const auto p = cur::trajectory_scores(values, offsets, percentile(10));
  CHECK(p[0] == doctest::Approx(1.2));
  CHECK(p[1] == 10.0);
  CHECK(p[2] == doctest::Approx(5.1));
}

TEST_CASE("score aggregation: invalid input names the parameter") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  check_throws_naming([] { cur::aggregate_score(std::vector<double>{}); }, "state_values.size()");
  check_throws_naming(
      [&] {
        cur::aggregate_score(std::vector<double>{1, nan});
      },
      "state_values[1]");
  check_throws_naming([] { cur::aggregate_score(std::vector<double>{1}, percentile(101)); },
                      "aggregator.percentile");
  check_throws_naming([&] { cur::aggregate_score(std::vector<double>{1}, percentile(nan)); },
                      "aggregator.percentile");
  const std::vector<double> values{1, 2, 3};
  check_throws_naming(
      [&] {
        cur::trajectory_scores(values, std::vector<std::int64_t>{0, 1, 1, 3});
      },
      "trajectory 1");
  check_throws_naming(
      [&] {
        cur::trajectory_scores(values, std::vector<std::int64_t>{0, 2});
      },
      "offsets[1]");
  check_throws_naming(
      [&] {
        cur::trajectory_scores(values, std::vector<std::int64_t>{1, 3});
      },
      "offsets[0]");
  check_throws_naming(
      [&] {
        cur::trajectory_scores(values, std::vector<std::int64_t>{0, 2, 1, 3});
      },
      "offsets[2]");
  check_throws_naming([&] { cur::trajectory_scores(values, std::vector<std::int64_t>{0}); },
                      "offsets.size()");
}

TEST_CASE("aggregation names: every kind round-trips, other names are refused") {
  for (const cur::Aggregation kind :
       {cur::Aggregation::mean, cur::Aggregation::minimum, cur::Aggregation::percentile})
    CHECK(cur::aggregation_named(cur::aggregation_name(kind)) == kind);
  CHECK(cur::aggregation_name(cur::Aggregation::percentile) == "percentile");
  CHECK_FALSE(cur::aggregation_named("median").has_value());
  CHECK_FALSE(cur::aggregation_named("Mean").has_value());
  CHECK_FALSE(cur::aggregation_named("").has_value());
}
