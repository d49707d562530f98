// Tests for reference_pipeline/pipeline/task.hpp: the registry, the environments behind it, and
// the refusal variant's construction (docs/pipeline.md, "Tasks").

#include <pipeline/task.hpp>

#include <doctest/doctest.h>

#include <curation/threshold_grid.hpp>

#include "../support/throws.hpp"

#include <algorithm>
#include <array>
#include <vector>

namespace pl = ltt::pipeline;

TEST_CASE("task registry: names, shapes, and an error naming 'task'") {
  CHECK(pl::task_named("point-goal").observation_dim == 34);
  CHECK(pl::task_named("point-goal-rim").observation_dim == 35);
  CHECK(pl::task_named("car-run").observation_dim == 6);
  CHECK(pl::task_named("point-goal-reckless").budget == 5);
  // Two of point-goal's hazards can hold the robot at once (Safety-Gymnasium counts each).
  CHECK(pl::task_named("point-goal").cost_range == 400);
  for (const pl::Task& t : pl::builtin_tasks()) {
    if (t.name != "point-goal") CHECK(t.cost_range == static_cast<double>(t.horizon));
    CHECK(pl::task_names().find(t.name) != std::string::npos);
  }
  ltt_test::check_throws_naming([] { (void)pl::task_named("pointgoal"); }, "task");
}

TEST_CASE("task environments: an episode lasts the horizon or ends on a terminal, and matches the generator's layout") {
  for (const pl::Task& t : pl::builtin_tasks()) {
    CAPTURE(t.name);
    auto env = t.environment(7);
    std::vector<float> obs(static_cast<std::size_t>(t.observation_dim));
    const std::vector<double> action(static_cast<std::size_t>(t.action_dim), 0.0);
    std::int64_t steps = 0;
    double cost = 0;
    bool terminal = false;
    while (!env->done()) {
      env->observation(obs);
      const auto s = env->step(action);
      cost += s.cost;
      ++steps;
      terminal = s.terminal;
      CHECK(s.cost >= 0);
      CHECK(s.cost <= t.cost_range / static_cast<double>(t.horizon));
    }
    // An episode ends at the horizon, or earlier on a terminal state (the hopper falls when it
    // does not act).
    if (terminal)
      CHECK(steps < t.horizon);
    else
      CHECK(steps == t.horizon);
    CHECK(cost <= t.cost_range);
    // the generator's pools have the registry's shapes
    const auto pool = t.generate(3, 11);
    CHECK(pool.dataset.observations.row_size() == t.observation_dim);
    CHECK(pool.dataset.actions.row_size() == t.action_dim);
    CHECK(pool.episodes.size() == 3);
  }
}

TEST_CASE("point-goal-reckless: no grid selection can be at most alpha = 0.25 unsafe") {
  // With S safe trajectories in the pool, S(lambda_j) of N_j trajectories holds at least
  // N_j - S unsafe ones whatever the score: the purity margin is negative for every scorer
  // when (N_j - S) / N_j > alpha at every grid step. The smallest step (q = 0.85) binds.
  const pl::Task& t = pl::task_named("point-goal-reckless");
  for (const std::uint64_t seed : {1, 2, 3}) {
    const std::int64_t N = 1000;
    const auto pool = t.generate(N, seed);
    std::int64_t safe = 0;
    for (const auto& e : pool.episodes) safe += e.episodic_cost <= t.budget;
    const std::int64_t N1 = N - ltt::curation::quantile_rank(0.85, N);  // no ties: the top rank
    const double least_unsafe = static_cast<double>(N1 - safe) / static_cast<double>(N1);
    MESSAGE("point-goal-reckless seed " << seed << ": " << safe << " safe of " << N
                                        << ", top-15% selection at least " << least_unsafe
                                        << " unsafe");
    CHECK(least_unsafe > 0.25);
  }
  // and point-goal-rim's default threshold range is the one docs/tasks.md describes: 30-70% unsafe
  const auto pool = pl::task_named("point-goal-rim").generate(500, 1);
  std::int64_t unsafe = 0;
  for (const auto& e : pool.episodes) unsafe += e.episodic_cost > 5;
  CHECK(unsafe >= 150);
  CHECK(unsafe <= 350);
}
