#pragma once
// The Gaussian policy that FSRL's PPO-Lagrangian trains for DSRL's behavior data: tianshou's
// ActorProb with unbounded = False over its default Net (tianshou/utils/net/continuous.py and
// common.py; FSRL's fsrl/agent/ppo_lag_agent.py builds it so). The mean is an MLP with ReLU
// hidden layers and a tanh output (learning::policy_shape); the standard deviation
// sigma_j = exp(s_j) is a trained parameter per action dimension that does not depend on the
// state (ActorProb's sigma_param). An action is drawn unbounded, a = mu + sigma z with z standard
// normal (torch.distributions.Normal.sample), and the environment gets clip(a, -1, 1) (FSRL's
// action_bound_method "clip", fsrl/policy/base_policy.py map_action); the log-probability is of
// the unclipped a, as FSRL stores it:
//
//   log pi(a | s) = sum_j  -(a_j - mu_j)^2 / (2 sigma_j^2) - s_j - log(2 pi) / 2,
//   d/dmu_j = (a_j - mu_j) / sigma_j^2,     d/ds_j = (a_j - mu_j)^2 / sigma_j^2 - 1.
//
// Everything is evaluated in double from the float32 means and actions the networks and the
// rollouts keep; the normal draws are tasks::standard_normal's (portable Box-Muller), so a seed
// gives the same actions on every platform.

#include <cmath>
#include <cstdint>
#include <numbers>
#include <random>
#include <span>
#include <string_view>
#include <vector>

#include <learning/eigen_mlp.hpp>
#include <learning/mlp.hpp>

namespace ltt::behavior {

struct GaussianPolicy {
  learning::MlpWeights mean;   // observation -> hidden (ReLU) -> action_dim, tanh output
  std::vector<float> log_std;  // s_j, one per action dimension

  std::int64_t observation_dim() const { return mean.shape.input(); }
  std::int64_t action_dim() const { return mean.shape.output_width(); }

  friend bool operator==(const GaussianPolicy&, const GaussianPolicy&) = default;
};

// Throws std::invalid_argument naming `parameter`.mean or `parameter`.log_std unless the mean is
// a valid network with a tanh output of log_std.size() values and every log_std is finite.
void check_policy(std::string_view function, std::string_view parameter,
                  const GaussianPolicy& policy);

// log(2 pi) / 2
inline constexpr double half_log_two_pi = 0.91893853320467274178;

template <class S>
double log_probability(std::span<const S> action, std::span<const S> mean,
                       std::span<const double> log_std) {
  double sum = 0.0;
  for (std::size_t j = 0; j < log_std.size(); ++j) {
    const double z =
        (static_cast<double>(action[j]) - static_cast<double>(mean[j])) / std::exp(log_std[j]);
    sum += -0.5 * z * z - log_std[j] - half_log_two_pi;
  }
  return sum;
}

// Adds the gradient of log_probability, times `weight`, into d_mean and d_log_std.
template <class S>
void add_log_probability_gradient(std::span<const S> action, std::span<const S> mean,
                                  std::span<const double> log_std, double weight,
                                  std::span<double> d_mean, std::span<double> d_log_std) {
  for (std::size_t j = 0; j < log_std.size(); ++j) {
    const double inverse_variance = std::exp(-2.0 * log_std[j]);
    const double d = static_cast<double>(action[j]) - static_cast<double>(mean[j]);
    d_mean[j] += weight * d * inverse_variance;
    d_log_std[j] += weight * (d * d * inverse_variance - 1.0);
  }
}

// The policy of a checkpoint, ready to act on raw observations: its mean network on the Eigen
// backend (forward only) and its log standard deviations.
class GaussianActor {
 public:
  explicit GaussianActor(const GaussianPolicy& policy);

  std::int64_t observation_dim() const { return mean_.shape().input(); }
  std::int64_t action_dim() const { return mean_.shape().output_width(); }
  std::span<const double> log_std() const { return log_std_; }

  // means (rows x action_dim) at the observations (rows x observation_dim), row after row
  void means(std::span<const float> observations, std::int64_t rows, std::span<float> out);

  // One action per row drawn around the means: actions (rows x action_dim, unclipped) and
  // their log-probabilities. The draws come from `rng` row after row, component after component.
  void sample(std::span<const float> observations, std::int64_t rows, std::mt19937_64& rng,
              std::span<float> actions, std::span<double> log_probabilities);

 private:
  learning::EigenMlp<float> mean_;
  std::vector<double> log_std_;
  std::vector<float> means_;
};

// Draws a = mu + exp(s) z (z from tasks::standard_normal, component after component) for one
// row, rounds it to float32 as it is stored, and returns the log-probability of the stored a.
double sample_around(std::span<const float> mean, std::span<const double> log_std,
                     std::mt19937_64& rng, std::span<float> action);

}  // namespace ltt::behavior
