// Tests for reference_pipeline/behavior/collection.hpp: a dataset collected from a run's
// checkpoints through FSRL's trajectory buffer, each episode naming its checkpoint, and the
// checkpoints' fresh episodes for the policy-level cost.

#include <behavior/collection.hpp>

#include <behavior/orthogonal_init.hpp>
#include <data/dsrl.hpp>
#include <learning/mlp.hpp>
#include <tasks/car_run.hpp>
#include <tasks/environment.hpp>

#include <doctest/doctest.h>

#include "../support/throws.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

namespace bhv = ltt::behavior;
namespace tasks = ltt::tasks;

namespace {

const bhv::EnvironmentSpec car{tasks::CarRun::observation_dim, tasks::CarRun::action_dim,
                               tasks::CarRun::horizon};

std::unique_ptr<tasks::Environment> make_car(std::uint64_t seed) {
  return std::make_unique<tasks::EnvironmentAdapter<tasks::CarRun>>(seed);
}

// Three checkpoints of a small policy that differ in their networks and noise: a run in
// miniature. The last drives fastest (its mean's bias pushes the throttle), so it costs most.
std::vector<bhv::PolicyCheckpoint> run() {
  std::vector<bhv::PolicyCheckpoint> out;
  std::mt19937_64 rng(5);
  for (int k = 0; k < 3; ++k) {
    bhv::PolicyCheckpoint c;
    c.task = "car-run";
    c.epoch = 10 * (k + 1);
    c.policy.mean = bhv::orthogonal_weights(
        ltt::learning::policy_shape(car.observation_dim, std::vector<std::int64_t>{8, 8},
                                    car.action_dim),
        rng);
    c.policy.mean.parameters.back() = 0.5f * static_cast<float>(k);  // the throttle's bias
    c.policy.log_std = {-1.0f - 0.5f * static_cast<float>(k), -1.0f};
    out.push_back(c);
  }
  return out;
}

std::uint64_t bytes_hash(const ltt::data::Array& a) {
  std::uint64_t h = 1469598103934665603ull;
  for (const std::byte b : a.bytes) h = (h ^ static_cast<std::uint8_t>(b)) * 1099511628211ull;
  return h;
}

}  // namespace

TEST_CASE("collect_dataset: the buffer's episodes, each naming its checkpoint, seeded") {
  const std::vector<bhv::PolicyCheckpoint> checkpoints = run();
  bhv::CollectionOptions o;
  o.cost_ceiling = 1000;
  o.threads = 1;
  const tasks::TaskPool pool = bhv::collect_dataset(make_car, car, checkpoints, 40, 7, o);
  REQUIRE(pool.episodes.size() == 40);
  REQUIRE(pool.behavior.count == 3);
  // Arrival order is training order, and the buffer keeps arrival order.
  for (std::size_t i = 0; i < pool.episodes.size(); ++i) {
    CHECK(pool.episodes[i].checkpoint >= 0);
    CHECK(pool.episodes[i].checkpoint < 3);
    if (i > 0) CHECK(pool.episodes[i].checkpoint >= pool.episodes[i - 1].checkpoint);
  }
  // The DSRL layout splits back into exactly these episodes.
  const ltt::data::DsrlDataset& d = pool.dataset;
  const std::vector<double> rewards = d.rewards.to_double(), costs = d.costs.to_double();
  std::vector<std::uint8_t> terminals, timeouts;
  for (const double f : d.terminals.to_double()) terminals.push_back(f != 0);
  for (const double f : d.timeouts.to_double()) timeouts.push_back(f != 0);
  const ltt::data::EpisodeSplit split =
      ltt::data::split_episodes(rewards, costs, terminals, timeouts);
  REQUIRE(split.episodes.size() == 40);
  CHECK(split.dropped_tail == 0);
  for (std::size_t i = 0; i < 40; ++i) {
    CHECK(split.episodes[i].length == pool.episodes[i].length);
    CHECK(split.episodes[i].episodic_cost == pool.episodes[i].episodic_cost);
  }
  // Actions as the environment got them, clipped to [-1, 1].
  for (const double a : d.actions.to_double()) CHECK(std::abs(a) <= 1.0);
  // The same seed, the same bytes, whatever the threads; another seed, others.
  o.threads = 2;
  const tasks::TaskPool again = bhv::collect_dataset(make_car, car, checkpoints, 40, 7, o);
  for (const char* key : {"observations", "next_observations", "actions", "rewards", "costs",
                          "terminals", "timeouts"}) {
    CAPTURE(key);
    CHECK(bytes_hash(again.dataset[key]) == bytes_hash(pool.dataset[key]));
  }
  const tasks::TaskPool other = bhv::collect_dataset(make_car, car, checkpoints, 40, 8, o);
  CHECK(bytes_hash(other.dataset["observations"]) != bytes_hash(pool.dataset["observations"]));
}

TEST_CASE("collect_dataset: a checkpoint's fresh episodes give its policy-level cost") {
  const std::vector<bhv::PolicyCheckpoint> checkpoints = run();
  bhv::CollectionOptions o;
  o.cost_ceiling = 1000;
  const tasks::TaskPool pool = bhv::collect_dataset(make_car, car, checkpoints, 30, 3, o);
  REQUIRE(pool.behavior.mean_cost);
  // Seeded: the same value again, and the mean of the same episodes taken one at a time is not
  // what it is (other seeds), but over many episodes the fast checkpoint costs more.
  CHECK(pool.behavior.mean_cost(2, 6, 11) == pool.behavior.mean_cost(2, 6, 11));
  CHECK(pool.behavior.mean_cost(2, 40, 1) > pool.behavior.mean_cost(0, 40, 1));
  ltt_test::check_throws_naming([&] { (void)pool.behavior.mean_cost(3, 1, 1); }, "k");
  ltt_test::check_throws_naming([&] { (void)pool.behavior.mean_cost(0, 0, 1); }, "episodes");
}

TEST_CASE("collect_dataset: bad input is refused, naming it") {
  const std::vector<bhv::PolicyCheckpoint> checkpoints = run();
  ltt_test::check_throws_naming(
      [&] { (void)bhv::collect_dataset(make_car, car, {}, 10, 1); }, "checkpoints.size()");
  ltt_test::check_throws_naming(
      [&] { (void)bhv::collect_dataset(make_car, car, checkpoints, 0, 1); }, "episodes");
  bhv::EnvironmentSpec wide = car;
  wide.observation_dim += 1;
  ltt_test::check_throws_naming(
      [&] { (void)bhv::collect_dataset(make_car, wide, checkpoints, 10, 1); }, "checkpoints[0]");
  bhv::CollectionOptions o;
  o.offered_per_kept = 0.5;
  ltt_test::check_throws_naming(
      [&] { (void)bhv::collect_dataset(make_car, car, checkpoints, 10, 1, o); },
      "options.offered_per_kept");
  // A ceiling no episode is under: the buffer cannot fill the dataset.
  o = {};
  o.cost_ceiling = 1e-9;
  o.return_floor = 1e9;
  CHECK_THROWS_AS((void)bhv::collect_dataset(make_car, car, checkpoints, 10, 1, o),
                  std::runtime_error);
}
