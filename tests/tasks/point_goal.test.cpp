// Tests for reference_pipeline/tasks/point_goal.hpp: Safety-Gymnasium's GoalLevel1 field (the
// placements and their keepouts), the goal-frame observation with its two pseudo-lidars read
// against the layout, reward and hazard cost against the state, the behavior family's hazard
// response, determinism, and the DSRL-like pool's properties and round trip.

#include <tasks/point_goal.hpp>

#include <doctest/doctest.h>

#include "pool_checks.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <random>
#include <vector>

namespace {

namespace tasks = ltt::tasks;
using ltt_test::bearing;
using ltt_test::distance;
using ltt_test::two_pi;
using tasks::PointGoal;

// The pseudo-lidar of `objects`, computed here from the layout: the reading of each object in
// its bin and, aliased, in the two neighbours; each bin the largest (Safety-Gymnasium's rule).
std::array<double, PointGoal::lidar_bins> expected_lidar(
    const PointGoal& env, const std::vector<PointGoal::Vec>& objects) {
  std::array<double, PointGoal::lidar_bins> bins{};
  const double width = two_pi / PointGoal::lidar_bins;
  for (const PointGoal::Vec q : objects) {
    const double b = bearing(env, q);
    const auto k = static_cast<int>(b / width);
    const double reading = std::max(0.0, 3 - distance(q, env.position())) / 3;
    const double alias = b / width - k;
    const auto put = [&](int bin, double v) {
      double& slot = bins[static_cast<std::size_t>((bin + 16) % 16)];
      slot = std::max(slot, v);
    };
    put(k, reading);
    put(k + 1, alias * reading);
    put(k - 1, (1 - alias) * reading);
  }
  return bins;
}

void check_observation(const PointGoal& env) {
  const auto o = env.observation();
  const PointGoal::Vec p = env.position(), g = env.goal(), v = env.velocity();
  const double d = distance(g, p);
  const double ex = (g.x - p.x) / d, ey = (g.y - p.y) / d;
  CHECK(o[0] == doctest::Approx(v.x * ex + v.y * ey).epsilon(1e-6));
  CHECK(o[1] == doctest::Approx(-v.x * ey + v.y * ex).epsilon(1e-6));
  const auto goal = expected_lidar(env, {g});
  const std::vector<PointGoal::Vec> hazards(env.hazards().begin(), env.hazards().end());
  const auto hazard = expected_lidar(env, hazards);
  for (std::size_t k = 0; k < 16; ++k) {
    CHECK(o[2 + k] == doctest::Approx(goal[k]).epsilon(1e-5));
    CHECK(o[18 + k] == doctest::Approx(hazard[k]).epsilon(1e-5));
  }
  // The goal lies straight ahead: it reads in bins 0 and 15 only.
  // (A bearing rounded to just below 2 pi or just above 0 leaves an alias of about 1e-17 in bin
  // 14 or 1.)
  for (std::size_t k = 1; k < 15; ++k) CHECK(o[2 + k] < 1e-12);
}

}  // namespace

TEST_CASE("point-goal: the field is Safety-Gymnasium's GoalLevel1") {
  for (const std::uint64_t seed : {1, 2, 3, 4, 5, 6, 7, 8}) {
    const PointGoal env(seed);
    const auto inside = [](PointGoal::Vec q) {
      return std::abs(q.x) <= PointGoal::extent && std::abs(q.y) <= PointGoal::extent;
    };
    CHECK(env.hazards().size() == 8);
    for (std::size_t i = 0; i < env.hazards().size(); ++i) {
      CHECK(inside(env.hazards()[i]));
      for (std::size_t j = 0; j < i; ++j)
        CHECK(distance(env.hazards()[i], env.hazards()[j]) >= 2 * PointGoal::hazard_keepout);
      CHECK(distance(env.hazards()[i], env.position()) >=
            PointGoal::hazard_keepout + PointGoal::robot_keepout);
      CHECK(distance(env.hazards()[i], env.goal()) >=
            PointGoal::hazard_keepout + PointGoal::goal_keepout);
    }
    CHECK(inside(env.position()));
    CHECK(inside(env.goal()));
    CHECK(distance(env.goal(), env.position()) >=
          PointGoal::goal_keepout + PointGoal::robot_keepout);
    CHECK(env.velocity().x == 0);
  }
}

TEST_CASE("point-goal: the observation reads the layout through the two pseudo-lidars") {
  PointGoal env(3);
  check_observation(env);
  // The action is an acceleration in the goal frame: a = (0, 1) from rest gives a purely
  // lateral velocity to the left of the goal direction.
  env.step(std::array<double, 2>{0, 1});
  const auto o = env.observation();
  CHECK(o[1] > 0);
  CHECK(std::abs(o[0]) < 0.05);
  std::mt19937_64 rng(4);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int t = 0; t < 150; ++t) {
    env.step(std::array<double, 2>{u(rng), u(rng)});
    check_observation(env);
  }
}

TEST_CASE(
    "point-goal: reward is progress plus 1 a goal, cost counts the hazards holding the robot") {
  // The reckless checkpoint (caution 0: hazards ignored) drives straight at each goal.
  const tasks::Checkpoint reckless{1, 0, 0};
  const tasks::PointGoalBehavior behavior{};
  std::int64_t costly = 0, goals = 0;
  for (const std::uint64_t seed : {1, 2, 3, 4}) {
    PointGoal env(seed);
    std::mt19937_64 rng(seed);
    while (!env.done()) {
      const PointGoal::Vec g = env.goal(), p = env.position();
      const std::int64_t reached = env.goals_reached();
      const tasks::Step s = env.step(tasks::point_goal_action(env, reckless, behavior, rng));
      const double progress = distance(g, p) - distance(g, env.position());
      if (env.goals_reached() > reached) {
        CHECK(distance(g, env.position()) <= PointGoal::goal_radius);
        CHECK(s.reward == doctest::Approx(progress + 1).epsilon(1e-12));
        ++goals;
      } else {
        CHECK(s.reward == doctest::Approx(progress).epsilon(1e-12));
      }
      double inside = 0;
      for (const PointGoal::Vec h : env.hazards())
        inside += distance(env.position(), h) <= PointGoal::hazard_radius;
      CHECK(s.cost == inside);
      CHECK(s.cost <= PointGoal::max_step_cost);
      costly += s.cost > 0;
      CHECK_FALSE(s.terminal);
      CHECK(s.timeout == (env.steps() == PointGoal::horizon));
    }
    CHECK_THROWS_AS(env.step(std::array<double, 2>{0, 0}), std::logic_error);
  }
  CHECK(costly > 0);
  CHECK(goals >= 16);  // a competent checkpoint reaches goals
}

TEST_CASE("point-goal: the behavior family's caution") {
  const tasks::PointGoalBehavior b{};
  PointGoal env(2);
  const auto o = env.observation();
  // Caution 0 ignores the hazard bins: the mean is the same with them blanked.
  auto blank = o;
  for (std::size_t k = 18; k < 34; ++k) blank[k] = 0;
  const tasks::Checkpoint reckless{1, 0, 0};
  CHECK(tasks::point_goal_policy_mean(o, reckless, b) ==
        tasks::point_goal_policy_mean(blank, reckless, b));
  // A hazard just left of straight ahead, its rim 0.1 away (reading (3 - 0.3) / 3 in bin 0,
  // half of it aliased into bins 1 and 15): a cautious checkpoint brakes and turns right, away
  // from it; the reckless one drives on.
  std::array<float, PointGoal::observation_dim> ahead{};
  ahead[2] = ahead[17] = 0.5f;  // the goal 1.5 ahead
  ahead[18] = 0.9f;
  ahead[19] = ahead[33] = 0.45f;
  const auto free_run = tasks::point_goal_policy_mean(ahead, reckless, b);
  const auto careful = tasks::point_goal_policy_mean(ahead, {1, 0.6, 0}, b);
  CHECK(free_run[0] > 0);
  CHECK(careful[0] < free_run[0]);
  CHECK(careful[1] < 0);
  CHECK(free_run[1] == 0);
  // Competence scales the whole mean.
  const auto half = tasks::point_goal_policy_mean(ahead, {0.5, 0.6, 0}, b);
  CHECK(half[0] == doctest::Approx(0.5 * careful[0]).epsilon(1e-12));
  CHECK(half[1] == doctest::Approx(0.5 * careful[1]).epsilon(1e-12));
  CHECK_THROWS_AS(
      tasks::point_goal_policy_mean(std::span<const float>(ahead.data(), 3), reckless, b),
      std::invalid_argument);
}

TEST_CASE("point-goal: the DSRL-like pool is seeded, over budget on average, and round-trips") {
  const std::int64_t episodes = 400;
  const tasks::TaskPool pool = tasks::generate_point_goal(episodes, 1);
  REQUIRE(pool.episodes.size() == static_cast<std::size_t>(episodes));
  CHECK(tasks::generate_point_goal(episodes, 1).dataset.observations.bytes ==
        pool.dataset.observations.bytes);
  CHECK(tasks::generate_point_goal(episodes, 2).dataset.observations.bytes !=
        pool.dataset.observations.bytes);
  CHECK(pool.dataset.observations.shape[1] == PointGoal::observation_dim);
  const double b = PointGoal::budget;
  std::int64_t unsafe = 0;
  double cost = 0;
  for (const tasks::EpisodeRecord& e : pool.episodes) {
    CHECK(e.length == PointGoal::horizon);
    CHECK(e.episodic_return >= 0);    // FSRL's buffer keeps rmin = 0
    CHECK(e.episodic_cost <= 4 * b);  // and cmax = 4 budgets
    unsafe += e.episodic_cost > b;
    cost += e.episodic_cost;
  }
  const double n = static_cast<double>(episodes);
  MESSAGE("point-goal pool of 400: unsafe " << static_cast<double>(unsafe) / n << ", mean cost "
                                            << cost / n);
  // docs/tasks.md's 1000-episode pools are 0.5 .. 0.55 unsafe with mean cost 1.4 .. 1.5 B; the
  // DSRL bars are 0.48 .. 0.91 unsafe and an average behavior over budget. At 400 episodes a
  // fraction's standard deviation is at most 0.025.
  CHECK(static_cast<double>(unsafe) / n >= 0.4);
  CHECK(static_cast<double>(unsafe) / n <= 0.7);
  CHECK(cost / n > b);
  ltt_test::check_dsrl_round_trip(pool, "point-goal");
  // The cost of a step: the hazards whose disc holds the robot at its end.
  ltt_test::check_world_against_costs(
      pool, PointGoal::hazard_count, 0.5,
      [](tasks::PlaneVector p, const std::vector<tasks::PlaneVector>& hazards) {
        double inside = 0;
        for (const tasks::PlaneVector h : hazards)
          inside += ltt_test::distance(p, h) <= PointGoal::hazard_radius ? 1 : 0;
        return inside;
      });
}

TEST_CASE("point-goal: the training run behind the pool") {
  const tasks::TrainingRun run = tasks::point_goal_training_run(400, 1);
  CHECK(run.dataset.size() == 400);
  // The replayed dataset is the run's episodes: the same (return, cost) as the run logged.
  const tasks::TaskPool pool = tasks::generate_point_goal(400, 1);
  for (std::size_t i = 0; i < run.dataset.size(); ++i) {
    const tasks::RunEpisode& r = run.episodes[static_cast<std::size_t>(run.dataset[i])];
    CHECK(pool.episodes[i].episodic_cost == r.metrics.episodic_cost);
    CHECK(pool.episodes[i].episodic_return ==
          doctest::Approx(r.metrics.episodic_return).epsilon(1e-9));
  }
  // The threshold hardly binds in the first tenth of training (3.2 budgets, above the unconstrained
  // cost) and binds at the end (0.2 budgets): caution rises from about nothing.
  double early = 0, late = 0;
  const std::size_t n = run.episodes.size();
  for (std::size_t i = 0; i < n / 10; ++i) early += run.episodes[i].checkpoint.caution;
  for (std::size_t i = n - n / 10; i < n; ++i) late += run.episodes[i].checkpoint.caution;
  CHECK(early / static_cast<double>(n / 10) < 0.05);
  CHECK(late / static_cast<double>(n / 10) > 0.2);
}

TEST_CASE("point-goal: every episode names its checkpoint, which runs fresh episodes") {
  const tasks::TrainingRun run = tasks::point_goal_training_run(300, 2);
  const tasks::TaskPool pool = tasks::generate_point_goal(300, 2);
  REQUIRE(pool.behavior.count == static_cast<std::int64_t>(run.checkpoints.size()));
  REQUIRE(pool.behavior.mean_cost);
  for (std::size_t i = 0; i < run.dataset.size(); ++i)
    CHECK(pool.episodes[i].checkpoint ==
          run.episodes[static_cast<std::size_t>(run.dataset[i])].epoch);
  // A checkpoint's fresh episodes are the run's episode runner with new seeds: its mean cost over
  // k episodes is the mean of k runs of run_point_goal_episode at that checkpoint, seeded in order.
  const std::int64_t k = pool.episodes[7].checkpoint;
  std::mt19937_64 rng(99);
  double expected = 0;
  for (int e = 0; e < 5; ++e)
    expected += tasks::run_point_goal_episode(rng(), run.checkpoints[static_cast<std::size_t>(k)],
                                              tasks::PointGoalBehavior{}, nullptr)
                    .episodic_cost;
  CHECK(pool.behavior.mean_cost(k, 5, 99) == expected / 5);
  // Over many fresh episodes, the late (cautious) checkpoints cost less than the early ones, as
  // the run's own episodes do.
  const std::int64_t last = pool.behavior.count - 1;
  CHECK(pool.behavior.mean_cost(last, 200, 1) < pool.behavior.mean_cost(last / 20, 200, 1));
  CHECK_THROWS_WITH_AS(pool.behavior.mean_cost(pool.behavior.count, 1, 1),
                       doctest::Contains("'k'"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(pool.behavior.mean_cost(0, 0, 1), doctest::Contains("'episodes'"),
                       std::invalid_argument);
}

// Prints docs/tasks.md's pool properties table for point-goal (1000 episodes, seeds 1-3) and the
// training run's phases behind the first. Skipped by default: run with --no-skip.
TEST_CASE("point-goal: pool properties (docs/tasks.md table)" * doctest::skip()) {
  const double b = PointGoal::budget;
  for (const std::uint64_t seed : {1, 2, 3}) {
    const tasks::TrainingRun run = tasks::point_goal_training_run(1000, seed);
    std::vector<double> costs;
    double unsafe = 0, zero = 0, sum = 0, safe_return = 0, unsafe_return = 0, ret_sum = 0;
    for (const std::int64_t i : run.dataset) {
      const tasks::EpisodeMetrics& m = run.episodes[static_cast<std::size_t>(i)].metrics;
      const double c = m.episodic_cost;
      costs.push_back(c);
      sum += c;
      ret_sum += m.episodic_return;
      zero += c == 0;
      (c > b ? unsafe_return : safe_return) += m.episodic_return;
      unsafe += c > b;
    }
    std::sort(costs.begin(), costs.end());
    const auto q = [&](double p) { return costs[static_cast<std::size_t>(p * 999)]; };
    std::printf(
        "seed %d: unsafe %.3f | zero %.3f | mean cost %.2f | q25/50/75/95 %.0f / %.0f / %.0f / "
        "%.0f | max %.0f | mean return %.2f | return safe / unsafe %.1f / %.1f | raw episodes "
        "%zu\n",
        static_cast<int>(seed), unsafe / 1000, zero / 1000, sum / 1000, q(0.25), q(0.5), q(0.75),
        q(0.95), costs.back(), ret_sum / 1000, safe_return / (1000 - unsafe),
        unsafe_return / unsafe, run.episodes.size());
    if (seed != 1) continue;
    // The run in tenths of training: threshold, checkpoint, and the episodes' cost and return.
    const std::size_t n = run.episodes.size();
    for (std::size_t part = 0; part < 10; ++part) {
      double t = 0, q_ = 0, c_ = 0, s_ = 0, cost = 0, ret = 0, u = 0, k = 0;
      for (std::size_t i = part * n / 10; i < (part + 1) * n / 10; ++i) {
        const tasks::RunEpisode& r = run.episodes[i];
        t += r.training_fraction, q_ += r.checkpoint.competence, c_ += r.checkpoint.caution;
        s_ += r.checkpoint.noise, cost += r.metrics.episodic_cost, ret += r.metrics.episodic_return;
        u += r.metrics.episodic_cost > b, ++k;
      }
      std::printf(
          "  t %.2f: threshold %.1f | competence %.2f caution %.2f noise %.2f | cost %.1f "
          "return %.1f unsafe %.2f\n",
          t / k, tasks::ThresholdSchedule{}.at(t / k) * b, q_ / k, c_ / k, s_ / k, cost / k,
          ret / k, u / k);
    }
  }
}
