#pragma once
// The policy and value update of one epoch of PPO-Lagrangian, as FSRL's PPOLagrangian.learn
// does it (fsrl/policy/ppo_lag.py): `repeat` passes (repeat_per_collect) over the epoch's rows,
// each in minibatches of a fresh shuffle (tianshou's Batch.split with shuffle and merge_last:
// minibatch_bounds); per minibatch, the advantages normalized over the minibatch, the policy
// loss of surrogate.hpp plus value_coefficient times the two critics' mean squared errors,
// one gradient over all of it, clipped to a global norm of max_grad_norm
// (torch.nn.utils.clip_grad_norm_ over the actor, its log standard deviations and both
// critics: FSRL's ActorCritic under one optimizer), and one Adam step of every parameter. After
// each pass, the mean approximate KL divergence of its minibatches (their sum over count +
// 1e-7, as FSRL writes it) stops the update when it exceeds 1.5 target_kl. With threads > 1 the
// actor's and the two critics' gradients are computed at once, each network on one thread:
// the same bits as in turn.

#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include <learning/eigen_mlp.hpp>

namespace ltt::behavior {

// The networks trained together. The actor and both critics take the observations as the
// trainer feeds them (normalized or not); log_std has one entry per action dimension.
struct ActorCritic {
  learning::EigenMlp<float> actor;
  std::vector<float> log_std;
  learning::AdamState<float> log_std_adam;
  learning::EigenMlp<float> reward_critic, cost_critic;
};

// One epoch's rows.
struct UpdateBatch {
  std::span<const float> observations;  // rows x observation width
  std::span<const float> actions;       // rows x action_dim, the unclipped draws
  std::span<const double> old_log_probabilities;
  std::span<const double> reward_advantages, cost_advantages;  // as GAE gave them
  std::span<const float> reward_targets, cost_targets;         // the critics' targets
};

struct UpdateSettings {
  std::int64_t batch = 512, repeat = 4;
  double clip = 0.2, target_kl = 0.02, value_coefficient = 0.25, max_grad_norm = 0.5;
  double multiplier = 0;  // lambda of this epoch
  int threads = 1;        // the actor's and the critics' gradients at once (1 to 3 used)
};

struct UpdateStatistics {
  std::int64_t passes = 0;       // passes done (at most repeat)
  std::int64_t minibatches = 0;  // gradient steps taken
  double approx_kl = 0;          // the last pass's mean approximate KL
  // means over every minibatch of the update, each taken before its step
  double actor_loss = 0, reward_critic_loss = 0, cost_critic_loss = 0;
  double gradient_norm = 0;  // the global norm before clipping
};

// The end of each minibatch in a shuffled order of `rows` rows cut into minibatches of `size`,
// as tianshou's Batch.split(size, shuffle=True, merge_last=True): when size does not divide rows,
// the last short minibatch is merged into the one before it (rows = 10000, size = 512: 18 of
// 512 and one of 784; rows < 2 size: one minibatch of all).
std::vector<std::int64_t> minibatch_bounds(std::int64_t rows, std::int64_t size);

// The update. Each pass draws its shuffle from `shuffle` (Fisher-Yates with the portable
// bounded draw). Throws std::invalid_argument naming the setting or batch field that is out of
// range or of the wrong size.
UpdateStatistics ppo_update(ActorCritic& networks, const UpdateBatch& batch,
                            const UpdateSettings& settings, std::mt19937_64& shuffle);

}  // namespace ltt::behavior
