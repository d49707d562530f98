// Tests for include/curation/mean_cost_certificate.hpp: a walk by hand with the
// Hoeffding-Serfling p-values recomputed here, a step without evidence, the betting option
// (its p-values, its walk, and that it certifies at least as deep as Hoeffding-Serfling), a
// Monte Carlo check of false certification under both bounds on a pool with known costs, and
// argument checking.

#include <curation/calibration.hpp>
#include <curation/mean_cost_certificate.hpp>
#include <curation/selection.hpp>
#include <curation/threshold_grid.hpp>
#include <ltt/betting_mean_bound.hpp>
#include <ltt/bounds.hpp>

#include <doctest/doctest.h>

#include "../support/monte_carlo.hpp"
#include "../support/throws.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

namespace cur = ltt::curation;
using Positions = std::vector<std::int64_t>;

using ltt_test::check_throws_naming;

// exp(-2 m t^2 / (1 - (m - 1) / N)), t = (budget - mean) / range.
double serfling(double m, double N, double mean, double budget, double range) {
  const double t = (budget - mean) / range;
  return t <= 0 ? 1.0 : std::exp(-2 * m * t * t / (1 - (m - 1) / N));
}

std::vector<double> ramp(std::size_t N) {
  std::vector<double> g(N);
  std::iota(g.begin(), g.end(), 0.0);
  return g;
}

}  // namespace

// Scores 0..9; quantiles 0.8, 0.5, 0.1 -> ranks 7, 4, 0 -> S = {7..9}, {4..9}, everything.
// Calibration positions 9, 8, 5, 2 with costs 1, 2, 3, 10; budget 5, range 10.
//   step 0: N 3,  m 2 (costs 1, 2),        mean 1.5, t 0.35, p = exp(-2*2*0.1225/(2/3)) = 0.4795
//   step 1: N 6,  m 3 (costs 1, 2, 3),     mean 2,   t 0.30, p = exp(-2*3*0.09/(4/6))    = 0.4449
//   step 2: N 10, m 4 (costs 1, 2, 3, 10), mean 4,   t 0.10, p = exp(-2*4*0.01/(7/10))   = 0.8920
// At delta = 0.5: steps 0 and 1 rejected, stop at 2; certified lambda = 4, 6 trajectories.
TEST_CASE("mean_cost_certificate: a walk by hand") {
  const auto g = ramp(10);
  const auto grid = cur::threshold_grid(g, std::vector<double>{0.8, 0.5, 0.1});
  const auto c = cur::mean_cost_certificate(grid, g, Positions{9, 8, 5, 2},
                                            std::vector<double>{1, 2, 3, 10}, 5.0, 10.0, 0.5);
  REQUIRE(c.steps.size() == 3);
  const std::vector<std::int64_t> N{3, 6, 10}, m{2, 3, 4};
  const std::vector<double> mean{1.5, 2, 4};
  for (std::size_t j = 0; j < 3; ++j) {
    CAPTURE(j);
    CHECK(c.steps[j].N == N[j]);
    CHECK(c.steps[j].m == m[j]);
    CHECK(c.steps[j].sample_mean_cost == doctest::Approx(mean[j]));
    CHECK(c.steps[j].p == doctest::Approx(serfling(static_cast<double>(m[j]),
                                                   static_cast<double>(N[j]), mean[j], 5, 10)));
    CHECK(c.steps[j].p_hoeffding_serfling == c.steps[j].p);  // the default bound
    CHECK(c.steps[j].rejected == (j < 2));
  }
  CHECK(c.steps[0].p == doctest::Approx(0.4795).epsilon(1e-3));
  CHECK(c.certified);
  CHECK(*c.certified_step == 1);
  CHECK(*c.threshold == 4.0);
  CHECK(c.selection_size == 6);
  CHECK(c.calibration_size == 4);
  CHECK(c.grid_size == 3);
  CHECK(c.bound == cur::MeanCostBound::hoeffding_serfling);
}

TEST_CASE("mean_cost_certificate: the betting bound's p-values and walk") {
  // Equal costs inside each step make the draw order immaterial, so each p_betting can be
  // recomputed here: scores 0..9, calibration 9, 8, 7 with cost 1 and 2 with cost 6 (range 10,
  // budget 5); step 0 (S = {7..9}) holds three costs of 1, step 1 (S = {4..9}) the same three,
  // step 2 (everything) adds the 6.
  const auto g = ramp(10);
  const auto grid = cur::threshold_grid(g, std::vector<double>{0.8, 0.5, 0.1});
  const Positions idx{9, 8, 7, 2};
  const std::vector<double> cost{1, 1, 1, 6};
  const double delta = 0.3;
  const auto hs = cur::mean_cost_certificate(grid, g, idx, cost, 5.0, 10.0, delta,
                                             {cur::MeanCostBound::hoeffding_serfling, 11});
  const auto bet = cur::mean_cost_certificate(grid, g, idx, cost, 5.0, 10.0, delta,
                                              {cur::MeanCostBound::betting, 11});
  REQUIRE(bet.steps.size() >= 2);
  const std::vector<double> ones{1, 1, 1};
  CHECK(bet.steps[0].p_betting == ltt::betting_mean_pvalue(ones, 3, 5.0, 10.0, delta));
  CHECK(bet.steps[1].p_betting == ltt::betting_mean_pvalue(ones, 6, 5.0, 10.0, delta));
  CHECK(bet.bound == cur::MeanCostBound::betting);
  CHECK(bet.order_seed == 11);
  for (std::size_t j = 0; j < bet.steps.size(); ++j) {
    CAPTURE(j);
    CHECK(bet.steps[j].p == bet.steps[j].p_betting);
    CHECK(bet.steps[j].rejected == (bet.steps[j].p_betting <= delta));
    if (j < hs.steps.size()) {
      CHECK(bet.steps[j].p_hoeffding_serfling == hs.steps[j].p);
      CHECK(bet.steps[j].p_betting == hs.steps[j].p_betting);  // recorded under either bound
    }
  }
  // Step 0 (three costs of 1 out of 3) is a census below the budget: p_betting = 0, where
  // Hoeffding-Serfling gives exp(-2 * 3 * 0.16 / (1/3)) = 0.056.
  CHECK(bet.steps[0].N == 3);
  CHECK(bet.steps[0].p_betting == 0.0);
  CHECK(hs.steps[0].p == doctest::Approx(std::exp(-2.0 * 3 * 0.16 * 3)));
}

TEST_CASE("mean_cost_certificate: betting certifies at least as deep as Hoeffding-Serfling") {
  // At every step the betting p-value (tuned for m_j at delta) rejects whenever
  // Hoeffding-Serfling does, so its walk goes at least as far. Random pools of costs whose
  // spread is below that of a two-point split, where it should also certify more often.
  constexpr std::int64_t N = 400, n = 120;
  const auto g = ramp(N);
  const auto grid = cur::threshold_grid(g);
  const double range = 10.0, budget = 5.0, delta = 0.1;
  std::mt19937_64 rng(31);
  std::int64_t hs_certified = 0, betting_certified = 0;
  const int draws = 200;
  for (int d = 0; d < draws; ++d) {
    std::vector<double> cost(N);
    for (std::int64_t i = 0; i < N; ++i)  // mean about 3 at the top score, 5 at the bottom
      cost[static_cast<std::size_t>(i)] = std::uniform_real_distribution<double>(1.0, 7.0)(rng) +
                                          2.0 * static_cast<double>(N - i) / N - 1.0;
    const auto index = cur::draw_calibration(N, n, static_cast<std::uint64_t>(d) + 100);
    std::vector<double> sample;
    for (const auto i : index) sample.push_back(cost[static_cast<std::size_t>(i)]);
    const auto hs = cur::mean_cost_certificate(grid, g, index, sample, budget, range, delta);
    const auto bet = cur::mean_cost_certificate(grid, g, index, sample, budget, range, delta,
                                                {cur::MeanCostBound::betting, 5});
    for (const auto& step : bet.steps)
      if (step.p_hoeffding_serfling <= delta) CHECK(step.p_betting <= delta);
    if (hs.certified) {
      REQUIRE(bet.certified);
      CHECK(*bet.certified_step >= *hs.certified_step);
    }
    hs_certified += hs.certified;
    betting_certified += bet.certified;
  }
  MESSAGE("certified: Hoeffding-Serfling " << hs_certified << ", betting " << betting_certified
                                           << " of " << draws);
  CHECK(betting_certified > hs_certified);
}

TEST_CASE("mean_cost_certificate: a step no calibration trajectory reaches has p = 1") {
  const auto g = ramp(10);
  const auto grid = cur::threshold_grid(g, std::vector<double>{0.95, 0.5});
  const auto c = cur::mean_cost_certificate(grid, g, Positions{0, 1}, std::vector<double>{0, 0},
                                            5.0, 10.0, 0.5);
  REQUIRE(c.steps.size() == 1);
  CHECK(c.steps[0].m == 0);
  CHECK(c.steps[0].p == 1.0);
  CHECK_FALSE(c.certified);
  CHECK_FALSE(c.threshold.has_value());
  CHECK(c.selection_size == 0);
}

TEST_CASE("mean_cost_certificate: false certification at most delta (Monte Carlo)") {
  // Pool of 600, scores 0..599, cost 10 on every third trajectory and 0 elsewhere: every
  // selection on the grid has mean cost between 3.29 and 3.34, above the budget 3.2, so every
  // step is a true null and any certification is false.
  constexpr std::int64_t N = 600, n = 150, full = 3000, draws = ltt_test::monte_carlo_draws(full);
  const auto g = ramp(N);
  std::vector<double> cost(N);
  for (std::int64_t i = 0; i < N; ++i)
    cost[static_cast<std::size_t>(i)] = (i % 3 == 0) ? 10.0 : 0.0;  // mean 1/3 of 10 everywhere
  const double budget = 3.2, range = 10.0, delta = 0.1;
  const auto grid = cur::threshold_grid(g);
  std::int64_t certified = 0, false_certified = 0;
  for (std::int64_t d = 0; d < draws; ++d) {
    const auto index = cur::draw_calibration(N, n, static_cast<std::uint64_t>(d) + 5);
    std::vector<double> sample;
    for (const auto i : index) sample.push_back(cost[static_cast<std::size_t>(i)]);
    const auto c = cur::mean_cost_certificate(grid, g, index, sample, budget, range, delta);
    if (!c.certified) continue;
    ++certified;
    double total = 0;
    for (const auto i : cur::selection_at(g, *c.threshold))
      total += cost[static_cast<std::size_t>(i)];
    false_certified += total / static_cast<double>(c.selection_size) > budget;
    CHECK(total / static_cast<double>(c.selection_size) > budget);
  }
  MESSAGE("mean-cost: certified " << certified << " of " << draws << ", false " << false_certified);
  CHECK(ltt::clopper_pearson_lower(false_certified, draws, 1e-3) <= delta);
}

TEST_CASE("mean_cost_certificate: betting bound, false certification at most delta (Monte Carlo)") {
  // The pool above with the budget a hair under the smallest selection mean (every step a
  // true null); the calibration order is reseeded per draw. Betting is less conservative than
  // Hoeffding-Serfling, so its false-certification rate is held to the Clopper-Pearson upper
  // limit, not the lower one (at full size; a reduced cell under the sanitizers is held to its
  // lower limit, tests/support/monte_carlo.hpp).
  constexpr std::int64_t N = 600, n = 150, full = 3000, draws = ltt_test::monte_carlo_draws(full);
  const auto g = ramp(N);
  std::vector<double> cost(N);
  for (std::int64_t i = 0; i < N; ++i)
    cost[static_cast<std::size_t>(i)] = (i % 3 == 0) ? 10.0 : 0.0;
  const double budget = 3.28, range = 10.0, delta = 0.1;
  const auto grid = cur::threshold_grid(g);
  std::int64_t certified = 0;
  for (std::int64_t d = 0; d < draws; ++d) {
    const auto index = cur::draw_calibration(N, n, static_cast<std::uint64_t>(d) + 5);
    std::vector<double> sample;
    for (const auto i : index) sample.push_back(cost[static_cast<std::size_t>(i)]);
    const auto c = cur::mean_cost_certificate(
        grid, g, index, sample, budget, range, delta,
        {cur::MeanCostBound::betting, static_cast<std::uint64_t>(d) + 9000});
    certified += c.certified;
  }
  MESSAGE("mean-cost betting: certified (all false) " << certified << " of " << draws);
  CHECK(ltt_test::rate_at_most(certified, draws, full, delta, 1e-6));
}

TEST_CASE("mean_cost_certificate: invalid input names the parameter") {
  const auto g = ramp(10);
  const auto grid = cur::threshold_grid(g);
  const Positions idx{1, 2};
  const std::vector<double> cost{1, 2};
  check_throws_naming([&] { cur::mean_cost_certificate(grid, g, idx, cost, 5, 10, 0.0); }, "delta");
  check_throws_naming([&] { cur::mean_cost_certificate(grid, g, idx, cost, 5, 0.0, 0.1); },
                      "range");
  check_throws_naming(
      [&] {
        cur::mean_cost_certificate(grid, g, idx, cost, std::numeric_limits<double>::quiet_NaN(), 10,
                                   0.1);
      },
      "budget");
  check_throws_naming(
      [&] {
        cur::mean_cost_certificate(grid, g, idx, std::vector<double>{1, 11}, 5, 10, 0.1);
      },
      "calibration_cost[1]");
  check_throws_naming(
      [&] {
        cur::mean_cost_certificate(grid, g, idx, std::vector<double>{-1, 1}, 5, 10, 0.1);
      },
      "calibration_cost[0]");
  check_throws_naming(
      [&] { cur::mean_cost_certificate(grid, g, idx, std::vector<double>{1}, 5, 10, 0.1); },
      "calibration_cost.size()");
  check_throws_naming(
      [&] {
        cur::mean_cost_certificate(grid, g, Positions{1, 1}, cost, 5, 10, 0.1);
      },
      "calibration.index");
  check_throws_naming([&] { cur::mean_cost_certificate(grid, ramp(9), idx, cost, 5, 10, 0.1); },
                      "scores.size()");
  check_throws_naming(
      [&] {
        cur::mean_cost_certificate(grid, g, idx, cost, 5, 10, 0.1,
                                   {static_cast<cur::MeanCostBound>(7), 0});
      },
      "options.bound");
}
