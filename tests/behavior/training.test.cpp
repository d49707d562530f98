// Tests for rollouts and the PPO-Lagrangian trainer (behavior/rollout.hpp, ppo_lagrangian.hpp):
// lockstep episodes on a tiny environment with terminals, timeouts and a horizon cut; the
// per-epoch cost limit along the schedule; byte-determinism of short runs on car-run (twice,
// and with 1, 2 and 3 threads stepping the environments and computing the networks' gradients:
// the checkpoint's bytes and run.csv but its seconds column); argument checks; and, in suite
// "training", that PPO-Lagrangian learns car-run: the return rises, the multiplier rises while the
// cost is over the limit, and the cost comes down to the limit.

#include <behavior/checkpoint.hpp>
#include <behavior/ppo_lagrangian.hpp>
#include <behavior/rollout.hpp>
#include <behavior/run_log.hpp>
#include <behavior/training_tasks.hpp>

#include <doctest/doctest.h>

#include "../support/throws.hpp"

#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace training_test {

namespace bhv = ltt::behavior;
namespace tsk = ltt::tasks;
using ltt_test::check_throws_naming;

// A point on a line: observation (x, t / 10); the action moves it by 0.2 a (clipped), reward
// the move, cost 1 when a > 0.5; terminal when x reaches 1, timeout at 10 steps. The start x
// is the seed's last digit / 10, so the episodes differ.
class Line final : public tsk::Environment {
 public:
  explicit Line(std::uint64_t seed) : x_(static_cast<double>(seed % 10) / 10.0) {}
  void observation(std::span<float> out) const override {
    out[0] = static_cast<float>(x_);
    out[1] = static_cast<float>(t_) / 10.0f;
  }
  tsk::Step step(std::span<const double> action) override {
    const double a = action[0];
    CHECK(a >= -1.0);
    CHECK(a <= 1.0);
    x_ += 0.2 * a;
    ++t_;
    tsk::Step s;
    s.reward = 0.2 * a;
    s.cost = a > 0.5 ? 1 : 0;
    s.terminal = x_ >= 1.0;
    s.timeout = !s.terminal && t_ >= 10;
    return s;
  }
  bool done() const override { return x_ >= 1.0 || t_ >= 10; }

 private:
  double x_ = 0;
  int t_ = 0;
};

bhv::EnvironmentFactory line() {
  return [](std::uint64_t seed) -> std::unique_ptr<tsk::Environment> {
    return std::make_unique<Line>(seed);
  };
}

TEST_CASE("rollout: lockstep episodes with terminals, timeouts and the horizon's cut") {
  const std::vector<std::uint64_t> seeds{9, 0, 5};
  const std::vector<double> log_std{-0.5};
  // The mean pushes right hard: x = 0.9 reaches 1 at once, x = 0.5 in a few steps.
  const bhv::MeanFunction push = [](std::span<const float>, std::int64_t rows, std::span<float> m) {
    for (std::int64_t i = 0; i < rows; ++i) m[static_cast<std::size_t>(i)] = 0.9f;
  };
  for (const int threads : {1, 2}) {
    CAPTURE(threads);
    std::mt19937_64 noise(11);
    const bhv::Rollout r =
        bhv::collect_episodes(line(), {2, 1, 10}, seeds, push, log_std, noise, threads);
    REQUIRE(r.episodes() == 3);
    CHECK(r.offsets.front() == 0);
    CHECK(r.offsets.back() == r.rows());
    for (std::int64_t e = 0; e < 3; ++e) {
      const auto last = static_cast<std::size_t>(r.offsets[static_cast<std::size_t>(e) + 1] - 1);
      CHECK((r.terminals[last] == 1) != (r.timeouts[last] == 1));
      for (auto t = static_cast<std::size_t>(r.offsets[static_cast<std::size_t>(e)]); t < last; ++t)
        CHECK((r.terminals[t] == 0 && r.timeouts[t] == 0));
    }
    // seed 9 starts at 0.9: ends by a terminal on its first step unless the draw pulls left
    CHECK(r.observations[0] == doctest::Approx(0.9f));
    // the final observation of episode 0 is after its last step
    CHECK(r.final_observations[1] == doctest::Approx(static_cast<float>(r.offsets[1]) / 10.0f));
    // log-probabilities are of the unclipped actions around the mean 0.9
    for (std::int64_t t = 0; t < r.rows(); ++t) {
      const float a = r.actions[static_cast<std::size_t>(t)];
      const float m = 0.9f;
      CHECK(r.log_probabilities[static_cast<std::size_t>(t)] ==
            doctest::Approx(
                bhv::log_probability<float>(std::span(&a, 1), std::span(&m, 1), log_std)));
    }
  }
  // A horizon below the environment's own limit cuts the episode as a timeout.
  std::mt19937_64 noise(12);
  const bhv::MeanFunction still = [](std::span<const float>, std::int64_t rows,
                                     std::span<float> m) {
    for (std::int64_t i = 0; i < rows; ++i) m[static_cast<std::size_t>(i)] = -0.9f;
  };
  const bhv::Rollout cut = bhv::collect_episodes(line(), {2, 1, 4}, std::vector<std::uint64_t>{0},
                                                 still, log_std, noise, 1);
  CHECK(cut.rows() == 4);
  CHECK(cut.timeouts.back() == 1);
  check_throws_naming(
      [&] {
        bhv::collect_episodes(line(), {2, 1, 4}, std::vector<std::uint64_t>{}, still, log_std,
                              noise, 1);
      },
      "seeds.size()");
  check_throws_naming(
      [&] {
        bhv::collect_episodes(line(), {2, 1, 4}, seeds, still, log_std, noise, 0);
      },
      "threads");
}

// A short car-run run: its final checkpoint's bytes and run.csv without the seconds column.
struct RunBytes {
  std::string checkpoint, csv;
  std::vector<bhv::EpochRecord> records;
};

RunBytes short_run(std::uint64_t seed, int threads, std::int64_t epochs = 3) {
  const bhv::TrainingTask& task = bhv::training_task("car-run");
  bhv::PpoLagrangianOptions o = bhv::task_options(task);
  o.hidden = {16, 16};
  o.epochs = epochs;
  o.episodes_per_epoch = 4;
  o.batch = 128;
  o.seed = seed;
  o.threads = threads;
  bhv::PpoLagrangian trainer(task.make, task.spec, o);
  RunBytes out;
  for (std::int64_t e = 0; e < epochs; ++e) {
    bhv::EpochRecord r = trainer.run_epoch();
    out.records.push_back(r);
    const std::string row = bhv::run_csv_row(r);
    out.csv += row.substr(0, row.rfind(','));  // the seconds are the last column
  }
  out.checkpoint = bhv::encode_checkpoint({std::string(task.name), trainer.epochs_done(),
                                           trainer.environment_steps(), trainer.cost_limit(),
                                           trainer.multiplier(), trainer.policy()});
  return out;
}

TEST_CASE("training: the same bytes twice and with 1, 2 and 3 threads; seeds differ") {
  const RunBytes a = short_run(5, 1), b = short_run(5, 1), c = short_run(5, 2), t = short_run(5, 3),
                 d = short_run(6, 1);
  CHECK(a.checkpoint == b.checkpoint);
  CHECK(a.csv == b.csv);
  CHECK(a.checkpoint == c.checkpoint);
  CHECK(a.csv == c.csv);
  CHECK(a.checkpoint == t.checkpoint);
  CHECK(a.csv == t.csv);
  CHECK(a.checkpoint != d.checkpoint);
  REQUIRE(a.records.size() == 3);
  CHECK(a.records[2].environment_steps == 3 * 4 * 200);
  CHECK(a.records[0].episodes == 4);
  CHECK(a.records[0].mean_length == 200);
  CHECK(a.records[0].passes >= 1);
  CHECK(a.records[0].passes <= 4);
  // The header names as many columns as a row has.
  const std::string header = bhv::run_csv_header(), row = bhv::run_csv_row(a.records[0]);
  CHECK(std::count(header.begin(), header.end(), ',') == std::count(row.begin(), row.end(), ','));
}

TEST_CASE("training: the velocity tasks, as DSRL configured them, train and repeat their bytes") {
  struct Expected {
    const char* name;
    double start, end, hold_until, reach_at;
  };
  // DSRL scripts/train_trpol_expert.py: cost 250 -> 10 over epochs 800 -> 2800 of 3000
  // (half-cheetah), 250 -> 10 over 800 -> 2500 (hopper), 200 -> 10 over 800 -> 2500 (swimmer).
  for (const Expected& e : {Expected{"half-cheetah-velocity", 250, 10, 800, 2800},
                            Expected{"hopper-velocity", 250, 10, 800, 2500},
                            Expected{"swimmer-velocity", 200, 10, 800, 2500}}) {
    CAPTURE(e.name);
    const bhv::TrainingTask& t = bhv::training_task(e.name);
    CHECK(t.spec.horizon == 1000);
    CHECK(t.budget == 20);
    CHECK(t.cost_limit.start == e.start);
    CHECK(t.cost_limit.end == e.end);
    CHECK(t.cost_limit.hold_until == e.hold_until / 3000);
    CHECK(t.cost_limit.reach_at == e.reach_at / 3000);
    CHECK(t.epochs == 3000);
    CHECK(t.episodes_per_epoch == 10);
    CHECK(t.gamma == 0.995);
  }
  // Two epochs of two half-cheetah episodes with small networks: the same bytes on 1 and 2
  // threads, every episode 1000 steps long (no terminal on this task).
  const bhv::TrainingTask& cheetah = bhv::training_task("half-cheetah-velocity");
  std::string bytes[2];
  for (const int threads : {1, 2}) {
    bhv::PpoLagrangianOptions o = bhv::task_options(cheetah);
    o.hidden = {16, 16};
    o.epochs = 2;
    o.episodes_per_epoch = 2;
    o.threads = threads;
    bhv::PpoLagrangian trainer(cheetah.make, cheetah.spec, o);
    for (int e = 0; e < 2; ++e) {
      const bhv::EpochRecord r = trainer.run_epoch();
      CHECK(r.mean_length == 1000);
      const std::string row = bhv::run_csv_row(r);
      bytes[threads - 1] += row.substr(0, row.rfind(','));
    }
    bytes[threads - 1] +=
        bhv::encode_checkpoint({std::string(cheetah.name), 2, trainer.environment_steps(),
                                trainer.cost_limit(), trainer.multiplier(), trainer.policy()});
  }
  CHECK(bytes[0] == bytes[1]);
}

TEST_CASE("training: the cost limit follows the schedule epoch by epoch") {
  // 6 epochs, 10 -> 4 between fractions 1/3 and 2/3: epoch e runs at at((e - 1) / 6).
  bhv::PpoLagrangianOptions o;
  o.hidden = {4};
  o.epochs = 6;
  o.episodes_per_epoch = 2;
  o.batch = 8;
  o.cost_limit = {10, 4, 1.0 / 3.0, 2.0 / 3.0};
  bhv::PpoLagrangian trainer(line(), {2, 1, 10}, o);
  const double expected[] = {10, 10, 10, 7, 4, 4};
  for (const double limit : expected) {
    const bhv::EpochRecord r = trainer.run_epoch();
    CAPTURE(r.epoch);
    CHECK(r.cost_limit == doctest::Approx(limit).epsilon(1e-14));
    CHECK(trainer.cost_limit() == r.cost_limit);
  }
  // With observation normalization the checkpoint's policy takes raw observations: its mean
  // network (the map folded into the first layer) gives what the trainer's actor gives on the
  // z-scored ones, up to float rounding.
  o.observation_normalization = true;
  bhv::PpoLagrangian normalized(line(), {2, 1, 10}, o);
  normalized.run_epoch();
  normalized.run_epoch();
  bhv::GaussianActor folded(normalized.policy());
  CHECK(folded.observation_dim() == 2);
  CHECK(folded.action_dim() == 1);
  const std::vector<float> raw{0.0f, 0.0f, 0.3f, 0.5f, 0.9f, 1.0f, -0.4f, 0.2f};
  std::vector<float> inside(4), outside(4);
  normalized.means(raw, 4, inside);
  folded.means(raw, 4, outside);
  for (std::size_t i = 0; i < 4; ++i) CHECK(outside[i] == doctest::Approx(inside[i]).epsilon(1e-5));
}

TEST_CASE("training: argument checks") {
  bhv::PpoLagrangianOptions o;
  o.epochs = 0;
  check_throws_naming([&] { bhv::PpoLagrangian(line(), {2, 1, 10}, o); }, "options.epochs");
  o = {};
  o.gamma = 1.5;
  check_throws_naming([&] { bhv::PpoLagrangian(line(), {2, 1, 10}, o); }, "options.gamma");
  o = {};
  o.cost_limit.reach_at = 0.1;
  check_throws_naming(
      [&] {
        bhv::PpoLagrangian(line(), {2, 1, 10}, o);
      },
      "options.cost_limit.reach_at");
  o = {};
  o.hidden = {8, 0};
  check_throws_naming([&] { bhv::PpoLagrangian(line(), {2, 1, 10}, o); }, "options.hidden[1]");
  check_throws_naming([&] { bhv::PpoLagrangian(line(), {0, 1, 10}, {}); }, "spec.observation_dim");
  check_throws_naming([] { bhv::training_task("cheetah"); }, "task");
}

TEST_CASE("PPO-Lagrangian learns car-run: return up, multiplier up while over, cost to the limit" *
          doctest::test_suite("training")) {
  // A fixed limit of 5 (the task's budget), DSRL's PPO-Lagrangian settings with the task's
  // 64 x 64 networks, 10 episodes (2,000 steps) per epoch, 60 epochs: about a second in Release.
  const bhv::TrainingTask& task = bhv::training_task("car-run");
  bhv::PpoLagrangianOptions o = bhv::task_options(task);
  o.epochs = 60;
  o.cost_limit = {5, 5, 0, 1};
  o.seed = 1;
  bhv::PpoLagrangian trainer(task.make, task.spec, o);
  std::vector<bhv::EpochRecord> r;
  for (int e = 0; e < 60; ++e) r.push_back(trainer.run_epoch());
  const auto mean_of = [&](int from, int to, double bhv::EpochRecord::*field) {
    double sum = 0;
    for (int e = from; e < to; ++e) sum += r[static_cast<std::size_t>(e)].*field;
    return sum / (to - from);
  };
  const double early_cost = mean_of(0, 5, &bhv::EpochRecord::mean_cost);
  const double late_cost = mean_of(50, 60, &bhv::EpochRecord::mean_cost);
  const double early_return = mean_of(0, 5, &bhv::EpochRecord::mean_return);
  const double late_return = mean_of(50, 60, &bhv::EpochRecord::mean_return);
  MESSAGE("cost " << early_cost << " -> " << late_cost << ", return " << early_return << " -> "
                  << late_return);
  CHECK(early_cost > 20);                                            // the initial policy speeds
  CHECK(std::abs(late_cost - 5) < 0.25 * std::abs(early_cost - 5));  // nearer the limit
  // and it drives on: the policy that cruises just under the speed limit returns about 23
  CHECK(late_return > early_return + 5);
  CHECK(late_return > 20);
  for (const bhv::EpochRecord& e : r)
    if (e.mean_cost > e.cost_limit) CHECK(e.multiplier > 0);
  CHECK(r[0].multiplier > 1);  // a cost far over the limit raises lambda at once
}

}  // namespace training_test
