// Tests for include/curation/threshold_grid.hpp: the quantile rule (exact decimal floor), the
// tie rule and merged steps against a brute-force sort on pools with heavy ties, and argument
// checking.

#include <curation/threshold_grid.hpp>

#include <doctest/doctest.h>

#include "../support/throws.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

namespace cur = ltt::curation;

using ltt_test::check_throws_naming;

}  // namespace

TEST_CASE("paper_grid_quantiles: 0.85 down to 0.30 in steps of 0.05") {
  REQUIRE(cur::paper_grid_quantiles.size() == 12);
  for (std::size_t j = 0; j < 12; ++j)
    CHECK(cur::paper_grid_quantiles[j] == doctest::Approx(0.85 - 0.05 * static_cast<double>(j)));
  CHECK(cur::paper_grid_quantiles.front() == 0.85);
  CHECK(cur::paper_grid_quantiles.back() == 0.30);
}

TEST_CASE("quantile_rank: floor(q (N - 1)) with q read as its decimal") {
  CHECK(cur::quantile_rank(0.85, 21) == 17);  // 0.85 * 20 = 17 exactly, as a decimal
  CHECK(cur::quantile_rank(0.3, 11) == 3);    // binary 0.3 * 10 = 2.9999999999999996
  CHECK(cur::quantile_rank(0.85, 30) == 24);  // 24.65
  CHECK(cur::quantile_rank(0.85, 2000) == 1699);
  CHECK(cur::quantile_rank(0.0, 7) == 0);
  CHECK(cur::quantile_rank(1.0, 7) == 6);
  CHECK(cur::quantile_rank(0.5, 1) == 0);
  check_throws_naming([] { cur::quantile_rank(1.5, 10); }, "q");
  check_throws_naming([] { cur::quantile_rank(0.5, 0); }, "N");
}

TEST_CASE("threshold_grid: distinct scores, by hand") {
  // Scores 10, 20, ..., 100 in scrambled order; N - 1 = 9.
  const std::vector<double> g{70, 10, 100, 40, 30, 90, 20, 60, 50, 80};
  const std::vector<double> q{0.85, 0.5, 0.3};
  const auto grid = cur::threshold_grid(g, q);
  // ranks floor(7.65) = 7, floor(4.5) = 4, floor(2.7) = 2 -> scores 80, 50, 30.
  CHECK(grid.pool_size == 10);
  CHECK(grid.quantile == q);
  CHECK(grid.rank == std::vector<std::int64_t>{7, 4, 2});
  CHECK(grid.lambda == std::vector<double>{80, 50, 30});
  CHECK(grid.selection_size == std::vector<std::int64_t>{3, 6, 8});
  CHECK(grid.merged_quantiles.empty());
}

TEST_CASE("threshold_grid: ties at lambda are kept, equal thresholds are merged") {
  // Sorted: 1 2 2 2 2 5 5 7 8 9 (N - 1 = 9)
  const std::vector<double> g{5, 2, 9, 2, 1, 7, 2, 8, 5, 2};
  const std::vector<double> q{0.7, 0.6, 0.5, 0.4, 0.2, 0.1};
  // ranks 6, 5, 4, 3, 1, 0 -> values 5, 5, 2, 2, 2, 1.
  const auto grid = cur::threshold_grid(g, q);
  CHECK(grid.quantile == std::vector<double>{0.7, 0.5, 0.1});
  CHECK(grid.lambda == std::vector<double>{5, 2, 1});
  CHECK(grid.rank == std::vector<std::int64_t>{6, 4, 0});
  // {g >= 5} = 5 5 7 8 9 (rank 5 ties with rank 6); {g >= 2} = 9; {g >= 1} = 10.
  CHECK(grid.selection_size == std::vector<std::int64_t>{5, 9, 10});
  CHECK(grid.merged_quantiles == std::vector<double>{0.6, 0.4, 0.2});
}

TEST_CASE("threshold_grid: one trajectory, and a constant pool") {
  const auto one = cur::threshold_grid(std::vector<double>{3.5});
  CHECK(one.size() == 1);
  CHECK(one.lambda[0] == 3.5);
  CHECK(one.selection_size[0] == 1);
  CHECK(one.merged_quantiles.size() == 11);
  const auto flat = cur::threshold_grid(std::vector<double>(50, -1.0));
  CHECK(flat.size() == 1);
  CHECK(flat.selection_size[0] == 50);
}

TEST_CASE("threshold_grid: matches a full sort on random pools with heavy ties") {
  std::mt19937_64 rng(20261125);
  for (int trial = 0; trial < 300; ++trial) {
    const auto N = static_cast<std::size_t>(1 + rng() % 400);
    const auto levels = 1 + rng() % (trial % 3 == 0 ? 5 : 1000);
    std::vector<double> g(N);
    for (double& x : g) x = static_cast<double>(rng() % levels) * 0.25 - 3.0;
    std::vector<double> q;
    for (std::int64_t k = 100; k >= 0; k -= static_cast<std::int64_t>(1 + rng() % 20))
      q.push_back(static_cast<double>(k) / 100.0);
    std::vector<double> sorted(g);
    std::sort(sorted.begin(), sorted.end());
    const auto grid = cur::threshold_grid(g, q);
    CAPTURE(trial);
    std::size_t step = 0;
    std::vector<double> merged;
    for (std::size_t j = 0; j < q.size(); ++j) {
      const auto r =
          static_cast<std::size_t>(cur::quantile_rank(q[j], static_cast<std::int64_t>(N)));
      const double lambda = sorted[r];
      if (j > 0 && step > 0 && lambda == grid.lambda[step - 1]) {
        merged.push_back(q[j]);
        continue;
      }
      REQUIRE(step < grid.lambda.size());
      CHECK(grid.quantile[step] == q[j]);
      CHECK(grid.lambda[step] == lambda);
      CHECK(grid.selection_size[step] ==
            static_cast<std::int64_t>(
                std::count_if(g.begin(), g.end(), [&](double x) { return x >= lambda; })));
      if (step > 0) CHECK(grid.lambda[step] < grid.lambda[step - 1]);
      ++step;
    }
    CHECK(step == grid.lambda.size());
    CHECK(merged == grid.merged_quantiles);
  }
}

TEST_CASE("threshold_grid: invalid input names the parameter") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  check_throws_naming([] { cur::threshold_grid(std::vector<double>{}); }, "scores.size()");
  check_throws_naming([&] { cur::threshold_grid(std::vector<double>{1, nan, 2}); }, "scores[1]");
  check_throws_naming(
      [] {
        cur::threshold_grid(std::vector<double>{1, std::numeric_limits<double>::infinity()});
      },
      "scores[1]");
  const std::vector<double> g{1, 2, 3};
  check_throws_naming([&] { cur::threshold_grid(g, std::vector<double>{}); }, "quantiles.size()");
  check_throws_naming(
      [&] {
        cur::threshold_grid(g, std::vector<double>{0.8, 0.8});
      },
      "quantiles[1]");
  check_throws_naming(
      [&] {
        cur::threshold_grid(g, std::vector<double>{0.3, 0.5});
      },
      "quantiles[1]");
  check_throws_naming([&] { cur::threshold_grid(g, std::vector<double>{1.2}); }, "quantiles[0]");
  check_throws_naming(
      [&] {
        cur::threshold_grid(g, std::vector<double>{0.5, nan});
      },
      "quantiles[1]");
}
