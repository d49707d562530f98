// Tests for reference_pipeline/tasks/point_goal_rim.hpp: the environment's goal-frame observation
// (including the side of the straight path a hazard lies on), action frame, reward and graded
// cost, determinism, the behavior pool's properties (docs/tasks.md) and its DSRL round trip.

#include <tasks/point_goal_rim.hpp>

#include <doctest/doctest.h>

#include "pool_checks.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <numbers>
#include <vector>

namespace {

namespace tasks = ltt::tasks;
using ltt_test::bearing;
using ltt_test::distance;
using ltt_test::two_pi;
using tasks::PointGoalRim;

}  // namespace

TEST_CASE("point-goal-rim: the observation is robot-centred and turned toward the goal") {
  PointGoalRim env(5);
  CHECK(env.position().x == 0);
  CHECK(distance(env.goal(), {}) >= 2.5);
  CHECK(distance(env.goal(), {}) <= 3.5);
  const auto o = env.observation();
  CHECK(o[0] == 0);
  CHECK(o[1] == 0);
  CHECK(o[2] == doctest::Approx(distance(env.goal(), {}) / PointGoalRim::goal_scale).epsilon(1e-6));
  // Each hazard in range is seen in the bin of its bearing from the goal direction.
  for (const PointGoalRim::Vec h : env.hazards()) {
    const double d = distance(h, {});
    if (d >= PointGoalRim::lidar_range) continue;
    const auto bin = static_cast<std::size_t>(bearing(env, h) / two_pi * PointGoalRim::lidar_bins);
    CHECK(o[3 + bin] >= static_cast<float>(1 - d / PointGoalRim::lidar_range) - 1e-6f);
  }
  for (std::size_t k = 3; k < o.size(); ++k) CHECK((o[k] >= 0 && o[k] <= 1));

  // The action is an acceleration in the same frame: a = (0, 1) from rest moves the robot to
  // the left of the goal direction, and the observation then reads a purely lateral velocity.
  const PointGoalRim::Vec g = env.goal();
  const double dg = distance(g, {});
  env.step(std::array<double, 2>{0, 1});
  const PointGoalRim::Vec v = env.velocity();
  CHECK(v.x == doctest::Approx(-2 * PointGoalRim::dt * g.y / dg).epsilon(1e-12));
  CHECK(v.y == doctest::Approx(2 * PointGoalRim::dt * g.x / dg).epsilon(1e-12));
  const auto o1 = env.observation();
  CHECK(o1[1] > 0.19f);
  CHECK(std::abs(o1[0]) < 0.02f);  // the frame turned slightly as the robot moved
}

TEST_CASE("point-goal-rim: the lidar tells which side of the straight path a hazard lies on") {
  // Hazard 0 of every layout sits at 35% of the way to the first goal, up to 0.2 to the side:
  // left of the path it reads in the left half of the bins (bearings in (0, pi)), right of it
  // in the right half, so a policy of the observation can know the side it must pass on.
  std::int64_t left = 0, right = 0;
  for (std::uint64_t seed = 1; seed <= 40; ++seed) {
    const PointGoalRim env(seed);
    const PointGoalRim::Vec g = env.goal(), h = env.hazards()[0];
    const double side = g.x * h.y - g.y * h.x;  // > 0: left of the start -> goal line
    const auto o = env.observation();
    float left_reading = 0, right_reading = 0;
    for (std::int64_t k = 0; k < PointGoalRim::lidar_bins; ++k) {
      float& reading = k < PointGoalRim::lidar_bins / 2 ? left_reading : right_reading;
      reading = std::max(reading, o[static_cast<std::size_t>(3 + k)]);
    }
    const float expected = static_cast<float>(1 - distance(h, {}) / PointGoalRim::lidar_range);
    CAPTURE(seed);
    if (side > 0) {
      ++left;
      CHECK(left_reading >= expected - 1e-6f);
      // the bins next to the goal direction on the left: 0 or 1 (|bearing| < 13 degrees)
      CHECK(std::max(o[3], o[4]) >= expected - 1e-6f);
    } else {
      ++right;
      CHECK(right_reading >= expected - 1e-6f);
      CHECK(std::max(o[3 + 31], o[3 + 30]) >= expected - 1e-6f);
    }
  }
  CHECK(left > 5);
  CHECK(right > 5);
}

TEST_CASE("point-goal-rim: reward is progress, cost is the graded penetration depth") {
  PointGoalRim env(5);
  // Full acceleration toward the goal (a = (1, 0) in the goal frame): reward is the progress,
  // cost the depth max(0, 1 - d / r) of the step's end position, a reached goal is replaced.
  std::int64_t graded = 0;
  while (!env.done()) {
    const PointGoalRim::Vec g = env.goal(), p = env.position();
    const double d = distance(g, p);
    const std::int64_t goals = env.goals_reached();
    const tasks::Step s = env.step(std::array<double, 2>{1, 0});
    CHECK(s.reward == doctest::Approx(d - distance(g, env.position())).epsilon(1e-12));
    double depth = 0;
    for (const PointGoalRim::Vec h : env.hazards())
      depth = std::max(depth, 1 - distance(env.position(), h) / PointGoalRim::hazard_radius);
    CHECK(s.cost == doctest::Approx(depth).epsilon(1e-12));
    CHECK(s.cost >= 0);
    CHECK(s.cost <= 1);
    graded += s.cost > 0 && s.cost < 1;
    CHECK_FALSE(s.terminal);
    CHECK(s.timeout == (env.steps() == PointGoalRim::horizon));
    if (env.goals_reached() > goals) {
      CHECK(distance(g, env.position()) < PointGoalRim::goal_radius);
      CHECK(distance(env.goal(), env.position()) >= 2.5);
    }
  }
  CHECK(graded > 0);  // the straight path crosses the hazards laid across it
  CHECK(env.goals_reached() >= 2);
  CHECK(env.steps() == PointGoalRim::horizon);
  CHECK(env.penetration(env.hazards()[0]) == 1);
  CHECK_THROWS_AS(env.step(std::array<double, 2>{0, 0}), std::logic_error);
}

TEST_CASE("point-goal-rim: the behavior pool is seeded and its costs spread around the budget") {
  // Bars of docs/tasks.md (the data bars), measured at 1000 episodes on seeds 1-3:
  // unsafe 0.61 .. 0.65, share of costs in [B/2, 2B] 0.53 .. 0.56, 95% quantile 15.4 .. 15.7
  // (about 3B). At 400 episodes a fraction's standard deviation is at most 0.025: the share and
  // quantile bars sit 4 or more of them away, but the unsafe fraction only about 2 below its
  // upper bar 0.7 (0.68 on these 400 episodes). The bars are the issue's, not tuned to the pool.
  const std::int64_t episodes = 400;
  const tasks::TaskPool pool = tasks::generate_point_goal_rim(episodes, 1);
  CHECK(tasks::generate_point_goal_rim(episodes, 1).dataset.observations.bytes ==
        pool.dataset.observations.bytes);
  CHECK(tasks::generate_point_goal_rim(episodes, 2).dataset.observations.bytes !=
        pool.dataset.observations.bytes);
  CHECK(pool.dataset.observations.shape[1] == PointGoalRim::observation_dim);
  CHECK(pool.dataset.actions.shape[1] == PointGoalRim::action_dim);
  const double b = PointGoalRim::budget;
  std::int64_t unsafe = 0, near_budget = 0, safe_moving = 0;
  std::vector<double> costs;
  for (const tasks::EpisodeRecord& e : pool.episodes) {
    CHECK(e.length == PointGoalRim::horizon);
    costs.push_back(e.episodic_cost);
    near_budget += e.episodic_cost >= b / 2 && e.episodic_cost <= 2 * b;
    if (e.episodic_cost > b)
      ++unsafe;
    else
      safe_moving += e.episodic_return >= 2.5;  // a goal's worth of progress: not a stopped robot
  }
  std::sort(costs.begin(), costs.end());
  const double n = static_cast<double>(episodes);
  const double unsafe_fraction = static_cast<double>(unsafe) / n;
  const double near_fraction = static_cast<double>(near_budget) / n;
  const double q95 = costs[static_cast<std::size_t>(0.95 * (n - 1))];
  MESSAGE("point-goal pool: unsafe " << unsafe_fraction << ", in [B/2, 2B] " << near_fraction
                                     << ", 95% cost quantile " << q95);
  CHECK(unsafe_fraction >= 0.3);
  CHECK(unsafe_fraction <= 0.7);
  CHECK(near_fraction >= 0.2);
  CHECK(q95 >= 2.5 * b);
  CHECK(static_cast<double>(safe_moving) / static_cast<double>(episodes - unsafe) >= 0.9);
  ltt_test::check_dsrl_round_trip(pool, "point-goal-rim");
  // The graded cost of a step: the deepest penetration of its end position into a hazard.
  ltt_test::check_world_against_costs(
      pool, PointGoalRim::hazard_count, 1e-4,
      [](tasks::PlaneVector p, const std::vector<tasks::PlaneVector>& hazards) {
        double cost = 0;
        for (const tasks::PlaneVector h : hazards)
          cost = std::max(cost, 1 - ltt_test::distance(p, h) / PointGoalRim::hazard_radius);
        return cost;
      });
}

TEST_CASE("point-goal-rim: the threshold orders the cost, and bad thresholds name the parameter") {
  // A narrow threshold range at either end: thresholds at or above 2B give the unconstrained
  // controller, almost all over budget; thresholds below 0.4B almost all within it.
  const double b = PointGoalRim::budget;
  const auto unsafe_share = [](const tasks::PointGoalRimThresholds& t) {
    const tasks::TaskPool pool = tasks::generate_point_goal_rim(100, 3, t);
    std::int64_t unsafe = 0;
    for (const tasks::EpisodeRecord& e : pool.episodes)
      unsafe += e.episodic_cost > PointGoalRim::budget;
    return static_cast<double>(unsafe) / 100;
  };
  CHECK(unsafe_share({2 * b, 3 * b}) >= 0.9);
  CHECK(unsafe_share({0, 0.4 * b}) <= 0.1);
  CHECK_THROWS_AS(tasks::generate_point_goal_rim(10, 1, {-0.1, 1}), std::invalid_argument);
  CHECK_THROWS_AS(tasks::generate_point_goal_rim(10, 1, {5, 4}), std::invalid_argument);
  CHECK_THROWS_AS(tasks::generate_point_goal_rim(0, 1), std::invalid_argument);
  CHECK_THROWS_AS(tasks::generate_point_goal_rim_at_caution(10, 1, 1.1), std::invalid_argument);
  CHECK_THROWS_AS(tasks::point_goal_rim_caution(-1), std::invalid_argument);
}

TEST_CASE("point-goal-rim: c(kappa) inverts the calibration table monotonely") {
  const auto table = tasks::point_goal_rim_calibration();
  REQUIRE(table.size() == 21);
  for (std::size_t i = 0; i < table.size(); ++i) {
    CHECK(table[i].caution == doctest::Approx(0.05 * static_cast<double>(i)));
    CHECK(table[i].standard_error > 0);
    if (i > 0) CHECK(table[i].mean_cost <= table[i - 1].mean_cost);
  }
  // A threshold the least cautious member meets in expectation binds nothing.
  CHECK(tasks::point_goal_rim_caution(table.front().mean_cost) == 0);
  CHECK(tasks::point_goal_rim_caution(3 * PointGoalRim::budget) == 0);
  // Each strictly decreasing row's cost maps back to its caution, and c falls as kappa grows.
  for (std::size_t i = 1; i < table.size(); ++i)
    if (table[i].mean_cost < table[i - 1].mean_cost)
      CHECK(tasks::point_goal_rim_caution(table[i].mean_cost) == doctest::Approx(table[i].caution));
  double previous = 1;
  for (double kappa = 0; kappa <= 3 * PointGoalRim::budget; kappa += 0.01) {
    const double c = tasks::point_goal_rim_caution(kappa);
    CHECK(c <= previous);
    CHECK(c >= 0);
    previous = c;
  }
}

namespace {

struct Measured {
  double mean = 0, standard_error = 0;
};

// The mean episodic cost of the controller of caution c and its standard error sd / sqrt(n).
Measured measure_mean_cost(double caution, std::int64_t episodes, std::uint64_t seed) {
  const tasks::TaskPool pool = tasks::generate_point_goal_rim_at_caution(episodes, seed, caution);
  double sum = 0, squares = 0;
  for (const tasks::EpisodeRecord& e : pool.episodes) sum += e.episodic_cost;
  const double n = static_cast<double>(episodes), mean = sum / n;
  for (const tasks::EpisodeRecord& e : pool.episodes)
    squares += (e.episodic_cost - mean) * (e.episodic_cost - mean);
  return {mean, std::sqrt(squares / (n - 1) / n)};
}

}  // namespace

TEST_SUITE("monte_carlo") {
  TEST_CASE("point-goal-rim: the calibration table's rows re-measure within their intervals") {
    // Rows across the table's range, re-measured on a seed independent of the calibration's:
    // the difference of two independent means has standard error sqrt(se_table^2 + se_new^2);
    // 4 of them leaves a 6e-5 chance per row of failing a correct table (normal means over
    // 1000 episodes), while a row off by a few standard errors fails.
    const auto table = tasks::point_goal_rim_calibration();
    for (const std::size_t i : {0, 4, 8, 10, 12, 14, 20}) {
      const tasks::PointGoalRimCalibration& row = table[i];
      const Measured m =
          measure_mean_cost(row.caution, tasks::point_goal_rim_calibration_episodes, 13);
      const double tolerance = 4 * std::sqrt(row.standard_error * row.standard_error +
                                             m.standard_error * m.standard_error);
      MESSAGE("c = " << row.caution << ": table " << row.mean_cost << " +- " << row.standard_error
                     << ", seed 13 " << m.mean << " +- " << m.standard_error);
      CHECK(std::abs(m.mean - row.mean_cost) <= tolerance);
    }
  }

  // Prints the calibration table in point_goal.cpp's format, measured as its comment says
  // (before making it monotone), and checks the stored rows against it. Skipped by default:
  // run with --no-skip.
  TEST_CASE("point-goal-rim: calibration table (regenerate)" * doctest::skip()) {
    const auto table = tasks::point_goal_rim_calibration();
    for (const tasks::PointGoalRimCalibration& row : table) {
      const Measured m = measure_mean_cost(row.caution, tasks::point_goal_rim_calibration_episodes,
                                           tasks::point_goal_rim_calibration_seed);
      std::printf("    {%.2f, %.4f, %.4f},\n", row.caution, m.mean, m.standard_error);
      CHECK(row.standard_error == doctest::Approx(m.standard_error).epsilon(1e-3));
    }
  }
}

// Prints docs/tasks.md's pool properties table for point-goal (1000 episodes, seeds 1-3).
// Skipped by default: run with --no-skip.
TEST_CASE("point-goal-rim: pool properties (docs/tasks.md table)" * doctest::skip()) {
  const double b = PointGoalRim::budget;
  for (const std::uint64_t seed : {1, 2, 3}) {
    const tasks::TaskPool pool = tasks::generate_point_goal_rim(1000, seed);
    std::vector<double> costs;
    double unsafe = 0, near = 0, zero = 0, sum = 0, safe_return = 0, unsafe_return = 0;
    for (const tasks::EpisodeRecord& e : pool.episodes) {
      const double c = e.episodic_cost;
      costs.push_back(c);
      sum += c;
      near += c >= b / 2 && c <= 2 * b;
      zero += c == 0;
      (c > b ? unsafe_return : safe_return) += e.episodic_return;
      unsafe += c > b;
    }
    std::sort(costs.begin(), costs.end());
    const auto q = [&](double p) { return costs[static_cast<std::size_t>(p * 999)]; };
    std::printf(
        "seed %d: unsafe %.3f | in [B/2, 2B] %.3f | zero %.3f | mean %.2f | "
        "q50/75/90/95 %.1f / %.1f / %.1f / %.1f | max %.1f | return %.1f / %.1f\n",
        static_cast<int>(seed), unsafe / 1000, near / 1000, zero / 1000, sum / 1000, q(0.5),
        q(0.75), q(0.9), q(0.95), costs.back(), safe_return / (1000 - unsafe),
        unsafe_return / unsafe);
  }
}
