// The PPO-Lagrangian policy loss (surrogate.hpp).

#include "behavior/surrogate.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "behavior/gaussian_policy.hpp"

namespace ltt::behavior {

template <class S>
SurrogateTerms clipped_surrogate(std::span<const S> means, std::span<const S> actions,
                                 std::span<const double> log_std, const SurrogateRows& data,
                                 std::int64_t n, double clip, double multiplier,
                                 std::span<S> d_means, std::span<double> d_log_std) {
  const std::size_t a = log_std.size();
  const std::size_t rows = data.old_log_probabilities.size();
  const double inverse_n = 1.0 / static_cast<double>(n);
  const double rescaling = 1.0 / (1.0 + multiplier);
  std::vector<double> d_mean(a);
  SurrogateTerms t;
  for (std::size_t i = 0; i < rows; ++i) {
    const auto mean = means.subspan(i * a, a);
    const auto action = actions.subspan(i * a, a);
    const double log_p = log_probability<S>(action, mean, log_std);
    const double ratio = std::exp(log_p - data.old_log_probabilities[i]);
    const double A = data.reward_advantages[i], C = data.cost_advantages[i];
    const double clipped = std::clamp(ratio, 1.0 - clip, 1.0 + clip);
    const bool unclipped = ratio * A <= clipped * A;
    t.reward_loss -= std::min(ratio * A, clipped * A) * inverse_n;
    t.cost_loss += ratio * C * inverse_n;
    t.kl += (data.old_log_probabilities[i] - log_p) * inverse_n;
    const double d_log_p =
        ratio * ((unclipped ? -A : 0.0) + multiplier * C) * inverse_n * rescaling;
    std::fill(d_mean.begin(), d_mean.end(), 0.0);
    add_log_probability_gradient<S>(action, mean, log_std, d_log_p, d_mean, d_log_std);
    for (std::size_t j = 0; j < a; ++j) d_means[i * a + j] = static_cast<S>(d_mean[j]);
  }
  t.loss = (t.reward_loss + multiplier * t.cost_loss) * rescaling;
  return t;
}

void normalize_advantages(std::span<double> advantages) {
  const auto n = static_cast<double>(advantages.size());
  if (advantages.empty()) return;
  double mean = 0.0;
  for (const double x : advantages) mean += x;
  mean /= n;
  double squares = 0.0;
  for (const double x : advantages) squares += (x - mean) * (x - mean);
  const double std = advantages.size() > 1 ? std::sqrt(squares / (n - 1.0)) : 0.0;
  for (double& x : advantages) x = std > 0.0 ? (x - mean) / std : x - mean;
}

template SurrogateTerms clipped_surrogate<float>(std::span<const float>, std::span<const float>,
                                                 std::span<const double>, const SurrogateRows&,
                                                 std::int64_t, double, double, std::span<float>,
                                                 std::span<double>);
template SurrogateTerms clipped_surrogate<double>(std::span<const double>, std::span<const double>,
                                                  std::span<const double>, const SurrogateRows&,
                                                  std::int64_t, double, double, std::span<double>,
                                                  std::span<double>);

}  // namespace ltt::behavior
