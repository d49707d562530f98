#pragma once
// Behavior data collected as DSRL collected it (docs/behavior.md, "Collecting a dataset"): the
// episodes of a constrained-RL training run, each drawn from the stochastic policy of its epoch,
// offered in training order to FSRL's trajectory buffer (tasks/trajectory_buffer.hpp), and the
// buffer's content at the end written in the DSRL layout. DSRL's velocity runs offered the
// buffer two test episodes per epoch over 3000 epochs (scripts/train_trpol_expert.py:
// collect_in_train False, testing_num 2), about 2.4 per episode its files hold
// (SafetyHalfCheetahVelocityGymnasium-v1-250-2495: 2495 episodes); here a run's saved
// checkpoints stand for its epochs: checkpoint k, in training order, runs
// `offered_per_kept * episodes / K` episodes (at least one) from seeds drawn in order.
//
// Every episode knows its checkpoint (tasks::EpisodeRecord::checkpoint: its position in
// `checkpoints`), and the pool's BehaviorCheckpoints run a checkpoint on fresh episodes, for the
// pipeline's policy-level data cost.
//
// Determinism: the episode seeds and each checkpoint's action-noise engine come from one
// std::mt19937_64(seed) in order, then the buffer's draws; environment stepping may use several
// threads (rollout.hpp: the thread count cannot change a bit).
#include <cstdint>
#include <functional>
#include <span>
#include <string_view>

#include <tasks/episode_log.hpp>
#include <tasks/trajectory_buffer.hpp>

#include "behavior/checkpoint.hpp"
#include "behavior/rollout.hpp"

namespace ltt::behavior {

struct CollectionOptions {
  double offered_per_kept = 2.4;  // episodes offered to the buffer per episode it keeps
  double return_floor = 0;        // DSRL's rmin for the velocity tasks
  double cost_ceiling = 250;      // DSRL's cmax (swimmer: 200)
  double filter_interval = 1.5;   // FSRL's default
  int threads = 2;                // environment stepping (rollout.hpp)
  // Called after each checkpoint's episodes with (checkpoints done, checkpoints); may be empty.
  std::function<void(std::int64_t done, std::int64_t total)> progress;
};

// DSRL's buffer settings for a task's data (scripts/train_trpol_expert.py): the velocity tasks'
// configs (rmin 0; cmax 250, swimmer 200), and TrainCfg's defaults for any other task (rmin
// -9999, cmax 300).
CollectionOptions dsrl_collection(std::string_view task);

// `episodes` episodes of the task collected from `checkpoints` (a run's, in training order; each
// of the task's observation and action widths). Throws std::invalid_argument naming the
// parameter, and std::runtime_error when the buffer accepts fewer episodes than asked for (too
// many over the cost ceiling or under the return floor).
tasks::TaskPool collect_dataset(const EnvironmentFactory& make, const EnvironmentSpec& spec,
                                std::span<const PolicyCheckpoint> checkpoints,
                                std::int64_t episodes, std::uint64_t seed,
                                const CollectionOptions& options = {});

}  // namespace ltt::behavior
