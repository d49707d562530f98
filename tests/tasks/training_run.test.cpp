// Tests for reference_pipeline/tasks/training_run.hpp (DSRL's collection as a simulated run): the
// threshold schedule, the checkpoints' competence and noise against their formulas, the Lagrangian
// driving a toy task's cost to the threshold, the dataset's size and order, determinism, and the
// argument checks; everything on a toy EpisodeRunner whose cost is a known function of caution.

#include <tasks/training_run.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>

namespace {

namespace tasks = ltt::tasks;

// A toy task of budget 10: cost 4 (1 - c) exactly, return 10 (1 - c / 2) q; no transitions. Its
// cost moves 0.4 budgets over the whole range of caution, so the multiplier's loop is stable
// (the proportional gain 1.25 times the slope stays below 1) and the cost settles.
tasks::EpisodeMetrics toy(std::uint64_t, const tasks::Checkpoint& c, tasks::EpisodeLog*) {
  return {10 * (1 - c.caution / 2) * c.competence, 4 * (1 - c.caution)};
}

}  // namespace

TEST_CASE("training run: the threshold schedule holds, falls linearly, holds") {
  const tasks::ThresholdSchedule
      s{};  // DSRL PointGoal1: 3.2 B until 200/1800, 0.2 B from 1500/1800
  CHECK(s.at(0) == 3.2);
  CHECK(s.at(200.0 / 1800) == 3.2);
  CHECK(s.at(850.0 / 1800) == doctest::Approx(1.7).epsilon(1e-12));  // half way
  CHECK(s.at(1500.0 / 1800) == 0.2);
  CHECK(s.at(1) == 0.2);
  const tasks::ThresholdSchedule up{0.2, 4, 0.1, 0.5};
  CHECK(up.at(0.3) == doctest::Approx(2.1).epsilon(1e-12));
}

TEST_CASE(
    "training run: checkpoints follow their formulas and the Lagrangian tracks the threshold") {
  tasks::TrainingRunOptions o;
  const tasks::TrainingRun run = tasks::simulate_training_run(500, 9, 10.0, o, toy);
  // Epochs: 12 raw episodes per slot of a buffer of capacity 500 (capacity_per_episode 1),
  // 10 episodes an epoch.
  const std::int64_t epochs = 600;
  REQUIRE(run.episodes.size() == static_cast<std::size_t>(epochs * 10));
  const auto first_of = [&](std::int64_t e) -> const tasks::RunEpisode& {
    return run.episodes[static_cast<std::size_t>(10 * e)];
  };
  for (std::int64_t e = 0; e < epochs; ++e) {
    const tasks::RunEpisode& r = first_of(e);
    const double t = (static_cast<double>(e) + 0.5) / static_cast<double>(epochs);
    CHECK(r.training_fraction == doctest::Approx(t).epsilon(1e-12));
    const double q = 1 - std::exp(-t / o.competence_time);
    CHECK(r.checkpoint.competence == doctest::Approx(q).epsilon(1e-12));
    CHECK(r.checkpoint.noise ==
          doctest::Approx(o.initial_noise + (o.final_noise - o.initial_noise) * q).epsilon(1e-12));
    // Every episode of an epoch runs the same checkpoint.
    for (int k = 1; k < 10; ++k)
      CHECK(run.episodes[static_cast<std::size_t>(10 * e + k)].checkpoint.caution ==
            r.checkpoint.caution);
    // While the threshold (in cost: 10 x 3.2 falling to 10 x 0.2) is above the toy's
    // unconstrained cost 4, nothing binds: no caution.
    if (o.threshold.at(t) * 10 > 4 + 1e-9) CHECK(r.checkpoint.caution == 0);
  }
  // Once it binds the multiplier grows and the cost comes down toward the final threshold 2
  // from above, monotonely over the last hundred epochs.
  for (std::int64_t e = epochs - 100; e < epochs; ++e) {
    CHECK(first_of(e).metrics.episodic_cost >= 2);
    CHECK(first_of(e).metrics.episodic_cost <= first_of(e - 1).metrics.episodic_cost);
  }
  CHECK(first_of(epochs - 1).metrics.episodic_cost <= 2.3);
  // The dataset: 500 positions, ascending, all in the run.
  CHECK(run.dataset.size() == 500);
  CHECK(std::is_sorted(run.dataset.begin(), run.dataset.end()));
  CHECK(run.dataset.back() < static_cast<std::int64_t>(run.episodes.size()));
  // Seeded.
  const tasks::TrainingRun again = tasks::simulate_training_run(500, 9, 10.0, o, toy);
  CHECK(again.dataset == run.dataset);
  CHECK(again.episodes.front().seed == run.episodes.front().seed);
  CHECK(tasks::simulate_training_run(500, 10, 10.0, o, toy).episodes.front().seed !=
        run.episodes.front().seed);
}

TEST_CASE("training run: the last arrivals and bad options") {
  tasks::TrainingRunOptions o;
  o.capacity_per_episode = 0.8;  // a buffer of 80 for a dataset of 100: the last 20 unthinned
  const tasks::TrainingRun run = tasks::simulate_training_run(100, 2, 10.0, o, toy);
  REQUIRE(run.dataset.size() == 100);
  const auto n = static_cast<std::int64_t>(run.episodes.size());
  for (std::int64_t k = 0; k < 20; ++k)
    CHECK(run.dataset[static_cast<std::size_t>(80 + k)] == n - 20 + k);

  const auto throws = [&](auto change) {
    tasks::TrainingRunOptions bad = o;
    change(bad);
    CHECK_THROWS_AS(tasks::simulate_training_run(100, 2, 10.0, bad, toy), std::invalid_argument);
  };
  throws([](auto& b) { b.threshold.reach_at = b.threshold.hold_until; });
  throws([](auto& b) { b.episodes_per_epoch = 0; });
  throws([](auto& b) { b.capacity_per_episode = 0; });
  throws([](auto& b) { b.competence_time = 0; });
  throws([](auto& b) { b.integral_gain = -1; });
  CHECK_THROWS_AS(tasks::simulate_training_run(0, 2, 1.0, o, toy), std::invalid_argument);
  CHECK_THROWS_AS(tasks::simulate_training_run(100, 2, 0, o, toy), std::invalid_argument);
  // A ceiling below every cost: the buffer accepts nothing.
  tasks::TrainingRunOptions strict = o;
  strict.cost_ceiling = 1e-3;  // in budgets: 0.01, below the toy's smallest cost
  CHECK_THROWS_AS(tasks::simulate_training_run(100, 2, 10.0, strict, toy), std::runtime_error);
}
