#pragma once
// PPO-Lagrangian (docs/behavior.md): the constrained-RL trainer whose agents DSRL logged as its
// behavior data, after FSRL's PPOLagrangian (fsrl/policy/ppo_lag.py) run by its OnpolicyTrainer
// with DSRL's schedule of the cost limit (scripts/train_ppol_v1.py, train_trpol_expert.py).
//
// An epoch, in order:
//   1. the cost limit d = cost_limit.at((epoch - 1) / epochs) (DSRL's cost_limit_scheduler in
//      fractions of the run: the limit set after epoch e - 1 rules epoch e);
//   2. episodes_per_epoch episodes on as many environments in lockstep (rollout.hpp), each from
//      its own seed;
//   3. the multiplier's PID update on the epoch's mean episodic cost against d
//      (pid_lagrangian.hpp: FSRL's pre_update_fn runs before the policy update);
//   4. the critics' values of every row and of each episode's last state, GAE for reward and
//      cost (advantages.hpp), the critics' targets (value normalization below);
//   5. the update (ppo_update.hpp).
//
// Networks (tianshou's ActorProb and Critic over its Net, as FSRL's agent builds them): the
// actor's mean obs -> hidden (ReLU) -> action_dim (tanh), the log standard deviations starting at
// initial_log_std (FSRL: -0.5), two critics obs -> hidden (ReLU) -> 1; every linear layer
// orthogonal with zero bias (orthogonal_init.hpp); one Adam (learning_rate) over all of them.
//
// Value normalization (value_normalization; DSRL's train_ppol_v1.py turns FSRL's
// reward_normalization on): each critic learns its returns divided by sqrt(var + 1e-8), var a
// running variance of the returns (running_statistics.hpp) updated after each epoch's targets
// are set, and its outputs are scaled back by the same factor before GAE (FSRL's
// compute_gae_returns; it updates the statistics with the returns as normalized, tianshou's
// PPOPolicy with them as they are: here, as they are). It keeps the critics' gradients of the
// order of the actor's under the one global clipping norm whatever the task's scale of return.
//
// Observation normalization (observation_normalization, off by default; not in FSRL): the
// networks see (s - mean) / sqrt(var + 1e-8) with a running mean and variance of every
// observation of the epochs before, updated after each epoch's update; policy() folds it into
// the actor's first layer, so a checkpoint takes raw observations.
//
// Randomness: four std::mt19937_64 streams of `seed` (learning::stream_seed): 0 the initial
// networks (actor, reward critic, cost critic in that order), 1 the episodes' seeds, 2 the
// policy's normal draws, 3 the minibatch shuffles. The same seed gives the same bytes whatever
// `threads` (environment stepping, rollout.hpp; the three networks' gradients, ppo_update.hpp).

#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include <tasks/training_run.hpp>

#include "behavior/gaussian_policy.hpp"
#include "behavior/pid_lagrangian.hpp"
#include "behavior/rollout.hpp"

namespace ltt::behavior {

struct PpoLagrangianOptions {
  std::vector<std::int64_t> hidden{128, 128};  // DSRL train_ppol_v1.py hidden_sizes
  double initial_log_std = -0.5;               // FSRL ppo_lag_agent.py: sigma_param = -0.5
  std::int64_t epochs = 100;
  std::int64_t episodes_per_epoch = 10;  // DSRL's velocity runs: episode_per_collect 10
  std::int64_t batch = 512;              // DSRL train_ppol_v1.py batch_size
  std::int64_t repeat = 4;               // repeat_per_collect
  double learning_rate = 1e-3;           // lr
  double gamma = 0.99;                   // DSRL's velocity configs: 0.995
  double gae_lambda = 0.95;
  double clip = 0.2;  // eps_clip
  double target_kl = 0.02;
  double value_coefficient = 0.25;  // vf_coef
  double max_grad_norm = 0.5;       // 0: no clipping
  bool value_normalization = true;
  bool observation_normalization = false;
  PidGains pid{};  // lagrangian_pid (0.05, 0.0005, 0.1)
  // raw episodic cost, over fractions of the run (DSRL HalfCheetah: 250 -> 10 over epochs
  // 800 -> 2800 of 3000)
  tasks::ThresholdSchedule cost_limit{250.0, 10.0, 800.0 / 3000.0, 2800.0 / 3000.0};
  std::uint64_t seed = 0;
  // environment stepping, and the networks' gradients in the update (up to 3: the actor and
  // the two critics); the same bytes for any
  int threads = 1;
};

// What an epoch did; run.csv's row (run_log.hpp).
struct EpochRecord {
  std::int64_t epoch = 0;              // from 1
  std::int64_t environment_steps = 0;  // every step so far, this epoch's included
  double cost_limit = 0;               // d of this epoch
  double multiplier = 0;               // lambda after this epoch's update of it
  double mean_return = 0, mean_cost = 0, mean_length = 0;  // over the epoch's episodes
  std::int64_t episodes = 0;
  double approx_kl = 0;  // of the update's last pass
  std::int64_t passes = 0;
  double mean_std = 0;  // mean over action dimensions of exp(log_std), after the update
  double actor_loss = 0, reward_critic_loss = 0, cost_critic_loss = 0;
  double seconds = 0;  // wall time of the epoch
};

class PpoLagrangian {
 public:
  // Throws std::invalid_argument naming 'options.<field>' or 'spec.<field>' for a setting out
  // of range.
  PpoLagrangian(EnvironmentFactory make, const EnvironmentSpec& spec,
                const PpoLagrangianOptions& options);
  ~PpoLagrangian();
  PpoLagrangian(const PpoLagrangian&) = delete;
  PpoLagrangian& operator=(const PpoLagrangian&) = delete;

  // Runs epoch epochs_done() + 1 (it may run past options.epochs: the schedule then holds its
  // end).
  EpochRecord run_epoch();

  std::int64_t epochs_done() const;
  std::int64_t environment_steps() const;
  double multiplier() const;
  // The cost limit of the last epoch run (of epoch 1 before any).
  double cost_limit() const;
  const PpoLagrangianOptions& options() const;

  // The policy now, taking raw observations (observation normalization folded in).
  GaussianPolicy policy() const;
  // The actor's means (rows x action_dim) at raw observations (rows x observation_dim), as the
  // next epoch's rollouts compute them (normalizing first when asked).
  void means(std::span<const float> observations, std::int64_t rows, std::span<float> out);

 private:
  struct State;
  std::unique_ptr<State> s_;
};

// Throws std::invalid_argument naming 'options.<field>' for a setting out of range.
void check_options(const PpoLagrangianOptions& options);

}  // namespace ltt::behavior
