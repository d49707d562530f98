#pragma once
// DSRL's data collection as one simulated training run (docs/tasks.md, "How DSRL collected its
// data"). DSRL's scripts/train_trpol_expert.py trains a TRPO-Lagrangian agent (FSRL) whose cost
// threshold stays at `start` for a first stretch of training, falls linearly to `end` and stays
// there; with collect_in_train every training episode, sampled from the stochastic policy, goes
// into FSRL's TrajectoryBuffer (trajectory_buffer.hpp), and the dataset is that buffer as the run
// ended. Here the learner is replaced by a family of checkpoints a task defines, indexed by
//
//   competence q   how goal-directed the policy mean is: q(t) = 1 - exp(-t / competence_time), t
//                  the fraction of training done (the task is learned early, while the threshold
//                  is still loose);
//   caution c      what the Lagrange multiplier buys: c = lambda / (1 + lambda);
//   noise sigma    the Gaussian policy's standard deviation: FSRL's initial log-std -0.5
//                  (sigma = 0.61) moving to final_noise as the task is learned,
//                  sigma(t) = initial_noise + (final_noise - initial_noise) q(t).
//
// The multiplier follows FSRL's PID Lagrangian without its derivative term, in units of the
// budget B: after each epoch, with J the epoch's mean episodic cost and kappa(t) the threshold,
//   I <- max(0, I + integral_gain (J - kappa) / B),  lambda = max(0, I + proportional_gain (J -
//   kappa) / B).
// The policy takes the new caution at the next epoch (no policy lag), so the epoch-to-epoch noise
// of J reaches the behaviour, as the multiplier's oscillation does in a real run.
//
// Everything is drawn from one std::mt19937_64 seeded once (the episode seeds in order, then the
// buffer's grid filter), so a seed gives the same run and dataset everywhere.
#include <cstdint>
#include <functional>
#include <vector>

#include "episode_log.hpp"
#include "trajectory_buffer.hpp"

namespace ltt::tasks {

// The cost threshold over training, in budgets: `start` until training fraction `hold_until`,
// then linear down (or up) to `end` at `reach_at`, then `end`.
struct ThresholdSchedule {
  double start = 3.2, end = 0.2;  // DSRL PointGoal1: 80 -> 5 at budget 25
  double hold_until = 200.0 / 1800.0, reach_at = 1500.0 / 1800.0;  // epochs 200 and 1500 of 1800

  double at(double fraction) const;
};

struct TrainingRunOptions {
  ThresholdSchedule threshold{};
  std::int64_t episodes_per_epoch = 10;  // FSRL's episode_per_collect
  // Raw episodes per buffer slot: DSRL's PointGoal1 run, 1800 epochs of 10 episodes into a buffer
  // of 1500, offers 12.
  double episodes_per_slot = 12;
  // The buffer's capacity per dataset episode; below 1, the dataset's last (1 -
  // capacity_per_episode) share arrived after the buffer's last thinning. DSRL's PointGoal1 file
  // holds 2022 episodes from a buffer of capacity 1500 (1500 / 2022 = 0.742: 522 unthinned at the
  // end). The default, 1, is the buffer just thinned: with the unthinned end, this task's pool
  // comes out 40% unsafe with a BC-All clone within budget, against DSRL's PointGoal1
  // (docs/tasks.md, "What is not DSRL's").
  double capacity_per_episode = 1;
  double filter_interval = 1.5;          // FSRL's default
  double return_floor = 0;               // rmin (absolute)
  double cost_ceiling = 4;               // cmax, in budgets (DSRL PointGoal1: 100 at budget 25)
  double proportional_gain = 0.05 * 25;  // FSRL's K_P = 0.05 per unit of raw cost, B = 25
  double integral_gain = 0.005 * 25;     // FSRL's K_I = 0.005
  double competence_time = 0.03;         // fraction of training
  double initial_noise = 0.6065306597126334;  // exp(-0.5)
  double final_noise = 0.35;
};

// A checkpoint of the run, as a task's behavior family reads it.
struct Checkpoint {
  double competence = 1, caution = 0, noise = 0;
};

// One episode of a task run by `checkpoint` from `seed`, its transitions appended to `log` when
// it is not null; returns the episode's (return, cost) as the buffer sees them (sums of the
// float32 values a reader gets back).
using EpisodeRunner = std::function<EpisodeMetrics(std::uint64_t seed, const Checkpoint& checkpoint,
                                                   EpisodeLog* log)>;

struct RunEpisode {
  std::uint64_t seed = 0;
  std::int64_t epoch = 0;
  double training_fraction = 0;  // t at its epoch's middle
  Checkpoint checkpoint;
  EpisodeMetrics metrics;
};

struct TrainingRun {
  std::vector<Checkpoint> checkpoints;  // the policy of each epoch, in order
  std::vector<RunEpisode> episodes;     // every episode the run logged, in order
  std::vector<std::int64_t> dataset;  // positions of the dataset's episodes, in order
};

// The run that yields a dataset of `dataset_episodes` episodes of a task with budget `budget`.
// Throws std::invalid_argument naming the parameter or option, and std::runtime_error when the
// buffer accepted fewer episodes than the dataset needs.
TrainingRun simulate_training_run(std::int64_t dataset_episodes, std::uint64_t seed, double budget,
                                  const TrainingRunOptions& options, const EpisodeRunner& run);

// The dataset of a run: its episodes replayed into the DSRL layout, each record naming its epoch
// as its checkpoint; the pool's BehaviorCheckpoints are the run's epochs, a checkpoint's fresh
// episodes run by `replay` (without a log). The pool keeps a copy of `replay`: it must own what
// it uses (capture by value), since it runs after this call returns.
TaskPool dataset_of(const TrainingRun& run, std::int64_t observation_dim, std::int64_t action_dim,
                    const EpisodeRunner& replay);

}  // namespace ltt::tasks
