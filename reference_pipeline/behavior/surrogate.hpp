#pragma once
// The policy loss of PPO-Lagrangian as FSRL computes it on a minibatch (fsrl/policy/ppo_lag.py,
// PPOLagrangian.policy_loss, with LagrangianPolicy.safety_loss of lagrangian_base.py and its
// "rescaling", Stooke et al. 2020, Algorithm 1). Per row i of a minibatch of n, with the ratio
// r_i = exp(log pi(a_i | s_i) - log pi_old(a_i | s_i)), the reward and cost advantages A_i, C_i
// (each normalized over the minibatch beforehand, normalized_advantages) and the multiplier
// lambda:
//
//   L = ( -1/n sum_i min(r_i A_i, clip(r_i, 1 - eps, 1 + eps) A_i)  +  lambda/n sum_i r_i C_i )
//       / (1 + lambda).
//
// The reward term is PPO's clipped surrogate (Schulman et al. 2017); the cost term is not clipped
// (FSRL multiplies the plain ratio into the cost advantage). The 1 / (1 + lambda) keeps the step
// size from growing with the multiplier. Its gradient through log pi:
//
//   dL/dlog pi_i = r_i (-[r_i A_i <= clip(r_i) A_i] A_i + lambda C_i) / (n (1 + lambda)),
//
// where the bracket is 1 when the unclipped term is the minimum (r inside the clip range counts
// as unclipped, as torch's min and clamp give it there), 0 when the clipped one is. The approximate
// KL divergence of the early stop is the mean of log pi_old - log pi (ppo_lag.py).

#include <cstdint>
#include <span>

namespace ltt::behavior {

struct SurrogateTerms {
  double loss = 0;         // L, summed over the rows given (a part of the minibatch's mean)
  double reward_loss = 0;  // -1/n sum min(...)
  double cost_loss = 0;    // 1/n sum r C (before lambda and the rescaling)
  double kl = 0;           // 1/n sum (log pi_old - log pi)
};

struct SurrogateRows {
  std::span<const double> old_log_probabilities;  // rows
  std::span<const double> reward_advantages;      // rows, normalized
  std::span<const double> cost_advantages;        // rows, normalized
};

// The loss of `rows` rows of a minibatch of n rows (means and actions rows x A, row after row).
// d_means (rows x A) receives dL/dmu; dL/ds is added into d_log_std (A). S: float in training,
// double in the gradient checks.
template <class S>
SurrogateTerms clipped_surrogate(std::span<const S> means, std::span<const S> actions,
                                 std::span<const double> log_std, const SurrogateRows& data,
                                 std::int64_t n, double clip, double multiplier,
                                 std::span<S> d_means, std::span<double> d_log_std);

// FSRL's per-minibatch advantage normalization (ppo_lag.py): (x - mean) / std with the unbiased
// standard deviation (torch.Tensor.std), in place. A minibatch of one row, or one whose values
// are all equal, is only centred: FSRL would divide by zero there.
void normalize_advantages(std::span<double> advantages);

extern template SurrogateTerms clipped_surrogate<float>(
    std::span<const float>, std::span<const float>, std::span<const double>, const SurrogateRows&,
    std::int64_t, double, double, std::span<float>, std::span<double>);
extern template SurrogateTerms clipped_surrogate<double>(
    std::span<const double>, std::span<const double>, std::span<const double>, const SurrogateRows&,
    std::int64_t, double, double, std::span<double>, std::span<double>);

}  // namespace ltt::behavior
