#pragma once
// Behavior cloning (paper, section 4.2 and appendix "Hyperparameters"): a deterministic policy
// obs -> 256 -> 256 -> tanh -> action fitted to the selection's transitions by the mean squared
// error, Adam 3e-4, 100 epochs, minibatches of 512. An optional weight per transition turns the
// same trainer into weighted regression: the advantage-weighted baseline passes
// advantage_weights(A, beta, clip) = min(exp(A / beta), clip) (the paper: beta = 0.1, clip 20).
//
// Observations and actions are float32 rows, row-major; actions must lie in [-1, 1], the range
// of the tanh output (rescale a task's action box first). Randomness as in the value trainer:
// one std::mt19937_64 seeded stream_seed(seed, 0) draws the initial weights, then one
// Fisher-Yates shuffle of the transitions per epoch.

#include "learning/backend.hpp"
#include "learning/mlp.hpp"
#include "learning/progress.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace ltt::learning {

struct BehaviorData {
  std::span<const float> observations;  // rows x obs_dim
  std::int64_t obs_dim = 0;
  std::span<const float> actions;  // rows x action_dim, each in [-1, 1]
  std::int64_t action_dim = 0;
  std::span<const float> weights;  // empty (all 1) or rows entries, finite and >= 0
};

struct PolicyTrainingOptions {
  std::vector<std::int64_t> hidden{256, 256};
  std::int64_t epochs = 100;
  std::int64_t batch = 512;
  AdamOptions adam{};
  std::uint64_t seed = 0;
  Progress progress = Progress::automatic;
  // Train on observations z-scored per dimension (mean and standard deviation of the rows
  // given; a constant dimension keeps scale 1), then fold the map into the first layer
  // (fold_input_normalization), so the returned policy still takes raw observations. Off by
  // default: the paper's protocol does not mention it.
  bool normalize_observations = false;
};

struct PolicyTrainingResult {
  MlpWeights policy;
  // per epoch: mean weighted squared error over the epoch's minibatches, each taken before its
  // Adam step and weighted by its number of rows
  std::vector<double> epoch_loss;
};

PolicyTrainingResult train_policy(const BehaviorData& data,
                                  const PolicyTrainingOptions& options = {},
                                  const Backend& backend = eigen_backend());

// Rewrites the first layer so that the network applied to x gives what it gave before applied
// to (x - mean) / scale: W <- W diag(1 / scale), b <- b - W diag(1 / scale) mean. Throws
// std::invalid_argument naming 'mean' or 'scale' (size other than the input width, a scale
// not finite and > 0, a mean not finite).
void fold_input_normalization(MlpWeights& network, std::span<const double> mean,
                              std::span<const double> scale);

// The policy's actions (rows x action width) at each observation row, forward only.
std::vector<float> policy_actions(const MlpWeights& policy, std::span<const float> observations,
                                  const Backend& backend = eigen_backend());

// min(exp(A / beta), clip) per advantage, evaluated without overflow: A / beta >= log(clip)
// gives clip exactly. beta > 0, clip >= 1 (finite); advantages finite.
std::vector<float> advantage_weights(std::span<const double> advantages, double beta = 0.1,
                                     double clip = 20.0);

}  // namespace ltt::learning
