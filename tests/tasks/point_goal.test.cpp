// Tests for reference_pipeline/tasks/point_goal.hpp: the environment's observation, reward and
// cost, determinism, the behavior pool's properties (docs/tasks.md) and its DSRL round trip.

#include <tasks/point_goal.hpp>

#include <doctest/doctest.h>

#include "pool_checks.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <numbers>

namespace {

namespace tasks = ltt::tasks;
using tasks::PointGoal;

double distance(PointGoal::Vec a, PointGoal::Vec b) { return std::hypot(a.x - b.x, a.y - b.y); }

}  // namespace

TEST_CASE("point-goal: observation, reward and cost of a step") {
  PointGoal env(5);
  CHECK(env.position().x == 0);
  CHECK(distance(env.goal(), {}) >= 2.5);
  CHECK(distance(env.goal(), {}) <= 3.5);
  const auto o = env.observation();
  CHECK(o[0] == 0);
  CHECK(o[2] == static_cast<float>(env.goal().x));
  CHECK(o[3] == static_cast<float>(env.goal().y));
  // The lidar bin of each hazard's direction reads at least 1 - distance / range.
  for (const PointGoal::Vec h : env.hazards()) {
    double a = std::atan2(h.y, h.x);
    if (a < 0) a += 2 * std::numbers::pi;
    const auto bin = static_cast<std::size_t>(a / (2 * std::numbers::pi) * PointGoal::lidar_bins);
    CHECK(o[4 + bin] >= static_cast<float>(std::max(0.0, 1 - distance(h, {}) / PointGoal::lidar_range)) - 1e-6f);
  }
  for (std::size_t k = 4; k < o.size(); ++k) CHECK((o[k] >= 0 && o[k] <= 1));

  // Full acceleration toward the goal: reward is the progress, cost marks hazard steps, and a
  // reached goal is replaced by a new one.
  while (!env.done()) {
    const PointGoal::Vec g = env.goal(), p = env.position();
    const double d = distance(g, p);
    const std::int64_t goals = env.goals_reached();
    const std::array<double, 2> a{(g.x - p.x) / d, (g.y - p.y) / d};
    const tasks::Step s = env.step(a);
    CHECK(s.reward == doctest::Approx(d - distance(g, env.position())).epsilon(1e-12));
    bool inside = false;
    for (const PointGoal::Vec h : env.hazards())
      inside = inside || distance(env.position(), h) < PointGoal::hazard_radius;
    CHECK(s.cost == (inside ? 1.0 : 0.0));
    CHECK_FALSE(s.terminal);
    CHECK(s.timeout == (env.steps() == PointGoal::horizon));
    if (env.goals_reached() > goals) {
      CHECK(distance(g, env.position()) < PointGoal::goal_radius);
      CHECK(distance(env.goal(), env.position()) >= 2.5);
    }
  }
  CHECK(env.goals_reached() >= 2);
  CHECK(env.steps() <= PointGoal::horizon);
  CHECK_THROWS_AS(env.step(std::array<double, 2>{0, 0}), std::logic_error);
}

TEST_CASE("point-goal: the behavior pool is seeded, 30-70% over budget, safe ones move") {
  const std::int64_t episodes = 400;
  const tasks::TaskPool pool = tasks::generate_point_goal(episodes, 1);
  CHECK(tasks::generate_point_goal(episodes, 1).dataset.observations.bytes ==
        pool.dataset.observations.bytes);
  CHECK(tasks::generate_point_goal(episodes, 2).dataset.observations.bytes !=
        pool.dataset.observations.bytes);
  CHECK(pool.dataset.observations.shape[1] == PointGoal::observation_dim);
  CHECK(pool.dataset.actions.shape[1] == PointGoal::action_dim);

  // Not a stopped robot: a safe episode still makes a goal's worth of progress (2.5 or more).
  std::int64_t unsafe = 0, safe_moving = 0;
  for (const tasks::EpisodeRecord& e : pool.episodes) {
    CHECK(e.length == PointGoal::horizon);
    if (e.episodic_cost > PointGoal::budget)
      ++unsafe;
    else if (e.episodic_return >= 2.5)
      ++safe_moving;
  }
  const double unsafe_fraction = static_cast<double>(unsafe) / episodes;
  const double safe_moving_fraction = static_cast<double>(safe_moving) / (episodes - unsafe);
  MESSAGE("point-goal pool: unsafe fraction " << unsafe_fraction
          << ", safe episodes with return >= 2.5: " << safe_moving_fraction);
  CHECK(unsafe_fraction >= 0.3);
  CHECK(unsafe_fraction <= 0.7);
  CHECK(safe_moving_fraction >= 0.9);
  ltt_test::check_dsrl_round_trip(pool, "point-goal");
}
