// Tests for reference_pipeline/tasks/corridor.hpp: the closed forms of the paper's Proposition
// "corridor" against the tabular clone of generated data and against simulation of the clone.
//
// Tolerances are Clopper-Pearson intervals (ltt/bounds.hpp). The simulation compares the
// all-safe frequency of the policy cloned from a finite pool with the population closed form,
// so the pool's own sampling error adds to the Monte Carlo error; each case's pool is large
// enough that this error is at most a third of the Monte Carlo standard deviation (the
// delta-method variance of log prod_t p'_t, with the across-step correlation of the expert
// mixture, is written next to each case), and the interval is taken at 1e-4 per side.

#include <tasks/corridor.hpp>

#include <ltt/bounds.hpp>

#include <doctest/doctest.h>

#include "pool_checks.hpp"

#include <cmath>
#include <cstdint>
#include <vector>

namespace {

namespace tasks = ltt::tasks;

const tasks::CorridorSpec paper_spec(std::int64_t horizon) { return {horizon, 0.2, 0.7}; }

// Two-sided Clopper-Pearson interval for `successes` of `trials` at delta per side.
bool inside_interval(double p, std::int64_t successes, std::int64_t trials, double delta) {
  return ltt::clopper_pearson_lower(successes, trials, delta) <= p &&
         p <= ltt::clopper_pearson_upper(successes, trials, delta);
}

}  // namespace

TEST_CASE("corridor: closed forms of the proposition") {
  const tasks::CorridorSpec s = paper_spec(100);
  const double p = tasks::corridor_marginal_safe_probability(s);
  CHECK(p == doctest::Approx(0.76).epsilon(1e-15));
  CHECK(tasks::corridor_cloned_safe_probability(p, 1) == doctest::Approx(p).epsilon(1e-15));
  CHECK(tasks::corridor_cloned_safe_probability(p, 20) ==
        doctest::Approx(15.2 / 15.44).epsilon(1e-15));
  CHECK(tasks::corridor_cloned_all_safe_probability(s, 20) ==
        doctest::Approx(std::pow(15.2 / 15.44, 100)).epsilon(1e-13));
  // Case (ii): the W of the proposition's bound gives exactly all-safe probability 1 - eps.
  const double eps = 0.1, r = std::pow(1 - eps, 1.0 / 100);
  const double w = (1 - p) / p * r / (1 - r);
  CHECK(tasks::corridor_cloned_all_safe_probability(s, w) ==
        doctest::Approx(1 - eps).epsilon(1e-12));
  // Case (iii): exact nonempty-selection probability and the paper's bound 1 - (1 - q)^N.
  const double p0 = 0.2 + 0.8 * std::pow(0.7, 100);
  CHECK(tasks::corridor_selection_safe_probability(s, 10) ==
        doctest::Approx(1 - std::pow(1 - p0, 10)).epsilon(1e-14));
  CHECK(tasks::corridor_selection_safe_lower_bound(s, 10) ==
        doctest::Approx(1 - std::pow(0.8, 10)).epsilon(1e-14));
  CHECK(tasks::corridor_selection_safe_lower_bound(s, 10000) == 1.0);
  CHECK_THROWS_AS(tasks::corridor_marginal_safe_probability({0, 0.2, 0.7}), std::invalid_argument);
  CHECK_THROWS_AS(tasks::corridor_marginal_safe_probability({10, 1.0, 0.7}), std::invalid_argument);
  CHECK_THROWS_AS(tasks::corridor_marginal_safe_probability({10, 0.2, 1.0}), std::invalid_argument);
}

TEST_CASE("corridor: weighted cloning of a pool is p'_s of the pool's per-state frequency") {
  // The proposition's identity at the empirical level, exactly: with safe-to-risky ratio W the
  // clone at t is f(p_t) = p_t W / (p_t W + 1 - p_t), p_t the pool's safe frequency at t; and
  // p_t counts N independent trajectories, each safe at t with probability p̄ (binomial).
  const std::int64_t n = 2000, horizon = 40;
  const tasks::TaskPool pool = tasks::generate_corridor(paper_spec(horizon), n, 7);
  CHECK(pool.dataset.observations.shape == std::vector<std::int64_t>{n * horizon, 1});
  const tasks::CorridorPolicy plain =
      tasks::clone_corridor(pool.dataset, tasks::corridor_ratio_weights(pool.dataset, 1));
  REQUIRE(plain.safe_probability.size() == static_cast<std::size_t>(horizon));
  const double pbar = 0.76;
  for (const double w : {20.0, 400.0}) {
    const tasks::CorridorPolicy weighted =
        tasks::clone_corridor(pool.dataset, tasks::corridor_ratio_weights(pool.dataset, w));
    for (std::size_t t = 0; t < plain.safe_probability.size(); ++t) {
      const double pt = plain.safe_probability[t];
      CHECK(weighted.safe_probability[t] ==
            doctest::Approx(tasks::corridor_cloned_safe_probability(pt, w)).epsilon(1e-12));
    }
  }
  for (const double pt : plain.safe_probability) {
    const auto safe = static_cast<std::int64_t>(std::llround(pt * n));
    CHECK(inside_interval(pbar, safe, n, 1e-4 / horizon));
  }
  CHECK_THROWS_AS(tasks::clone_corridor(pool.dataset, std::vector<double>(3, 1.0)),
                  std::invalid_argument);
  ltt_test::check_dsrl_round_trip(pool, "corridor");
}

TEST_CASE("corridor: the simulator rolls out the policy it is given") {
  const tasks::CorridorPolicy policy{std::vector<double>(30, 0.97)};
  const std::int64_t m = 20000;
  const std::int64_t safe = tasks::simulate_corridor_all_safe(policy, m, 3);
  CHECK(inside_interval(tasks::corridor_all_safe_probability(policy), safe, m, 1e-6));
  CHECK(tasks::simulate_corridor_all_safe(policy, m, 3) == safe);  // seeded
}

TEST_SUITE("monte_carlo") {
  TEST_CASE("corridor: simulated all-safe probability of the clone against the closed forms") {
    struct Case {
      double weight_ratio;
      std::int64_t horizon, trajectories;
    };
    // Pool error against the 10^4-rollout Monte Carlo sd (both on the all-safe probability):
    //   W = 1,   T = 10:  p'^T = 0.064, pool sd 0.0005 (N = 1e5) vs MC sd 0.0024
    //   W = 20,  T = 50:  p'^T = 0.458, pool sd 0.0015 (N = 3e4) vs MC sd 0.0050
    //   W = 400, T = 300: p'^T = 0.789, pool sd 0.0013 (N = 1e4) vs MC sd 0.0041
    const Case cases[] = {{1, 10, 100000}, {20, 50, 30000}, {400, 300, 10000}};
    const std::int64_t rollouts = 10000;
    std::uint64_t seed = 20;  // each case its own pool and rollout streams
    for (const Case& c : cases) {
      seed += 3;
      const tasks::CorridorSpec spec = paper_spec(c.horizon);
      const tasks::TaskPool pool = tasks::generate_corridor(spec, c.trajectories, seed);
      const tasks::CorridorPolicy policy = tasks::clone_corridor(
          pool.dataset, tasks::corridor_ratio_weights(pool.dataset, c.weight_ratio));
      const std::int64_t safe = tasks::simulate_corridor_all_safe(policy, rollouts, seed + 1);
      const double theory = tasks::corridor_cloned_all_safe_probability(spec, c.weight_ratio);
      INFO("W = " << c.weight_ratio << ", T = " << c.horizon << ": simulated "
                  << static_cast<double>(safe) / rollouts << ", closed form " << theory
                  << ", the clone's exact " << tasks::corridor_all_safe_probability(policy));
      CHECK(inside_interval(theory, safe, rollouts, 1e-4));
      if (c.weight_ratio == 400) {
        // Case (iii) at the paper's scale: the zero-cost selection clones the all-safe policy.
        const tasks::CorridorPolicy selected =
            tasks::clone_corridor(pool.dataset, tasks::corridor_selection_weights(pool.dataset));
        CHECK(tasks::simulate_corridor_all_safe(selected, rollouts, seed + 2) == rollouts);
        CHECK(tasks::corridor_all_safe_probability(selected) == 1.0);
      }
    }
  }

  TEST_CASE("corridor: trajectory selection is safe exactly when the selection is nonempty") {
    // Small pools (N = 8, T = 10) so that an empty selection happens: each replicate draws a
    // pool, clones its zero-cost episodes and rolls the clone out once. An empty selection
    // clones the uniform policy, all-safe with probability 2^-T.
    const tasks::CorridorSpec spec = paper_spec(10);
    const std::int64_t n = 8, replicates = 4000;
    std::int64_t safe = 0;
    for (std::int64_t r = 0; r < replicates; ++r) {
      const tasks::TaskPool pool =
          tasks::generate_corridor(spec, n, 1000 + static_cast<std::uint64_t>(r));
      const tasks::CorridorPolicy policy =
          tasks::clone_corridor(pool.dataset, tasks::corridor_selection_weights(pool.dataset));
      safe += tasks::simulate_corridor_all_safe(policy, 1, 50000 + static_cast<std::uint64_t>(r));
    }
    const double nonempty = tasks::corridor_selection_safe_probability(spec, n);
    const double theory = nonempty + (1 - nonempty) * std::pow(0.5, 10);
    INFO("simulated " << static_cast<double>(safe) / replicates << ", closed form " << theory
                      << ", paper's bound " << tasks::corridor_selection_safe_lower_bound(spec, n));
    CHECK(inside_interval(theory, safe, replicates, 1e-4));
    CHECK(theory >= tasks::corridor_selection_safe_lower_bound(spec, n));
  }
}
