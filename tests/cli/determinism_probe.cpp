// determinism_probe: a short piece of the tiny pipeline whose bytes must not depend on the CPU
// (docs/learning.md, "Determinism"), for reproducible.test.cpp to run natively and under qemu's
// emulated Haswell (AVX2 without AVX-512, another vendor's CPU model): a seeded point-goal pool
// (the task's simulated training run, its physics and its libm calls), preference pairs on it, a
// few epochs of the value ensemble (Eigen's float products, the Bradley-Terry loss, Adam's square
// roots), the pool's scores, a behavior-cloning epoch and the clone's actions. It prints one FNV-1a
// 64 checksum per piece, so a difference names the first piece that moved. The whole tiny
// pipeline's bytes are checked against a checked-in checksum natively; under emulation this
// piece takes 2.3 s where the whole tiny pipeline takes 40 s (AMD EPYC, qemu 7.2). Then two
// episodes of half-cheetah-velocity collected from its committed run (MuJoCo, the 128 x 128
// behavior policies, FSRL's buffer).
//
//   determinism_probe   (no arguments; exit 0, one line per piece on stdout)

#include <cstdint>
#include <cstdio>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include <curation/preference_pairs.hpp>
#include <data/dsrl.hpp>
#include <data/fnv1a.hpp>
#include <learning/behavior_cloning.hpp>
#include <learning/model_file.hpp>
#include <learning/safety_value.hpp>
#include <learning/value_training.hpp>
#include <tasks/point_goal.hpp>
#include <tasks/velocity.hpp>

#include <behavior/collection.hpp>
#include <behavior/committed_runs.hpp>

namespace {

template <class T>
std::uint64_t checksum(std::span<const T> values) {
  return ltt::data::fnv1a(std::as_bytes(values));
}

void print(std::string_view piece, std::uint64_t h) {
  std::printf("%-18.*s 0x%016llx\n", static_cast<int>(piece.size()), piece.data(),
              static_cast<unsigned long long>(h));
}

}  // namespace

int main() {
  namespace data = ltt::data;
  namespace learning = ltt::learning;
  // The pool: 30 episodes of point-goal from seed 1 (360 simulated episodes of its run).
  const data::DsrlDataset pool = ltt::tasks::generate_point_goal(30, 1).dataset;
  for (const std::string_view key : data::dsrl_keys)
    print(key, data::fnv1a(std::span<const std::byte>(pool[key].bytes)));

  const std::span<const float> observations = pool.observations.values<float>();
  const std::int64_t obs_dim = pool.observations.row_size();
  const std::vector<double> costs = pool.costs.to_double();
  std::vector<std::int64_t> offsets{0};
  for (const data::Episode& e :
       data::split_episodes(pool.rewards.to_double(), costs, pool.terminals.values<std::uint8_t>(),
                            pool.timeouts.values<std::uint8_t>())
           .episodes)
    offsets.push_back(e.start + e.length);

  // The value: the pipeline's path (synthesized pairs, normalization folded in), tiny settings.
  const learning::SafetyValueSeeds seeds = learning::safety_value_seeds(1);
  ltt::curation::PreferencePairOptions pair_options;
  pair_options.pairs = 100;
  pair_options.seed = seeds.pairs;
  const learning::SegmentPairs pairs = learning::synthesized_pairs(costs, offsets, pair_options);
  print("pairs", checksum(std::span<const std::int64_t>(pairs.preferred)) ^
                     checksum(std::span<const std::int64_t>(pairs.rejected)));
  learning::SafetyValueOptions value_options;
  value_options.value.hidden = {16, 16};
  value_options.value.members = 2;
  value_options.value.epochs = 3;
  value_options.value.batch_pairs = 32;
  value_options.value.seed = seeds.value;
  value_options.value.threads = 2;
  value_options.value.progress = learning::Progress::quiet;
  value_options.held_out_fraction = 0;
  const learning::SafetyValue value =
      learning::train_safety_value(observations, obs_dim, pairs, value_options);
  print("value model", data::fnv1a(learning::encode_models(value.ensemble.members)));
  const std::vector<double> scores =
      learning::trajectory_scores(value.ensemble, observations, obs_dim, offsets);
  print("scores", checksum(std::span<const double>(scores)));

  // A behavior-cloning epoch on the pool and the clone's actions on it.
  learning::PolicyTrainingOptions policy_options;
  policy_options.hidden = {16, 16};
  policy_options.epochs = 1;
  policy_options.batch = 256;
  policy_options.seed = 16;
  policy_options.progress = learning::Progress::quiet;
  policy_options.normalize_observations = true;
  const learning::PolicyTrainingResult clone = learning::train_policy(
      {observations, obs_dim, pool.actions.values<float>(), pool.actions.row_size(), {}},
      policy_options);
  print("policy model", data::fnv1a(learning::encode_models(std::span(&clone.policy, 1))));
  print("policy actions", checksum(std::span<const float>(
                              learning::policy_actions(clone.policy, observations))));

  // A velocity task's data (docs/behavior.md, "Collecting a dataset"): MuJoCo's physics, the
  // committed run's 128 x 128 policies, their action noise and FSRL's buffer, on one episode of
  // the run's first checkpoint and one of its last.
  const std::span<const ltt::behavior::PolicyCheckpoint> run =
      ltt::behavior::committed_run("half-cheetah-velocity");
  if (!run.empty()) {
    const ltt::tasks::VelocityTaskSpec& spec = ltt::tasks::velocity_task("half-cheetah-velocity");
    const ltt::behavior::EnvironmentFactory make = [&spec](std::uint64_t seed)
        -> std::unique_ptr<ltt::tasks::Environment> {
      return std::make_unique<ltt::tasks::VelocityEnvironment>(spec, seed);
    };
    const std::vector<ltt::behavior::PolicyCheckpoint> ends{run.front(), run.back()};
    ltt::behavior::CollectionOptions collection;
    collection.offered_per_kept = 1;
    collection.threads = 1;
    const ltt::tasks::TaskPool velocity = ltt::behavior::collect_dataset(
        make, {spec.observation_dim, spec.action_dim, spec.horizon}, ends, 2, 1, collection);
    for (const std::string_view key : data::dsrl_keys)
      print(data::cat("cheetah ", key),
            data::fnv1a(std::span<const std::byte>(velocity.dataset[key].bytes)));
  }
  return 0;
}
