// Behavior cloning and advantage weights (behavior_cloning.hpp).

#include "learning/behavior_cloning.hpp"

#include "learning/detail/data.hpp"
#include "learning/normalization.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <random>
#include <string>

namespace ltt::learning {

using detail::invalid;
using detail::show;

namespace {

// The rows of data, after checking that actions and weights match them and lie in range.
std::int64_t checked_rows(std::string_view fn, const BehaviorData& data) {
  const std::int64_t rows =
      detail::table_rows(fn, "data.observations", data.observations, "data.obs_dim", data.obs_dim);
  detail::require_at_least(fn, "rows of data.observations", rows, 1);
  const std::int64_t action_rows =
      detail::table_rows(fn, "data.actions", data.actions, "data.action_dim", data.action_dim);
  if (action_rows != rows)
    invalid(fn, "data.actions", show(action_rows) + " rows",
            "must have one row per observation (" + show(rows) + ")");
  for (std::size_t i = 0; i < data.actions.size(); ++i)
    if (!(std::abs(data.actions[i]) <= 1.0f))
      invalid(fn,
              "data.actions[" + std::to_string(i / static_cast<std::size_t>(data.action_dim)) +
                  "][" + std::to_string(i % static_cast<std::size_t>(data.action_dim)) + "]",
              show(static_cast<double>(data.actions[i])),
              "must lie in [-1, 1], the range of the policy's tanh output (rescale the actions)");
  if (!data.weights.empty()) {
    if (detail::ssize(data.weights.size()) != rows)
      invalid(fn, "data.weights.size()", show(detail::ssize(data.weights.size())),
              "must be 0 or the number of rows = " + show(rows));
    for (std::size_t i = 0; i < data.weights.size(); ++i)
      if (!(std::isfinite(data.weights[i]) && data.weights[i] >= 0.0f))
        invalid(fn, "data.weights[" + std::to_string(i) + "]",
                show(static_cast<double>(data.weights[i])), "must be finite and >= 0");
  }
  return rows;
}

}  // namespace

PolicyTrainingResult train_policy(const BehaviorData& data, const PolicyTrainingOptions& options,
                                  const Backend& backend) {
  constexpr std::string_view fn = "ltt::learning::train_policy";
  const std::int64_t rows = checked_rows(fn, data);
  detail::require_at_least(fn, "options.epochs", options.epochs, 0);
  detail::require_at_least(fn, "options.batch", options.batch, 1);
  check_adam(fn, options.adam);
  detail::check_hidden(fn, options.hidden);
  const MlpShape shape = policy_shape(data.obs_dim, options.hidden, data.action_dim);

  // The rows the network sees: the observations, or their z-scores (folded back at the end).
  std::span<const float> observations = data.observations;
  std::vector<float> normalized;
  ObservationNormalization z;
  if (options.normalize_observations) {
    z = observation_normalization(data.observations, data.obs_dim);
    normalized = normalized_rows(data.observations, z);
    observations = normalized;
  }

  std::mt19937_64 rng(stream_seed(options.seed, 0));
  const auto net = backend.network(initial_weights(shape, rng()), options.adam);
  std::vector<std::int64_t> order(static_cast<std::size_t>(rows));
  for (std::int64_t i = 0; i < rows; ++i) order[static_cast<std::size_t>(i)] = i;
  const auto obs_dim = static_cast<std::size_t>(data.obs_dim);
  const auto action_dim = static_cast<std::size_t>(data.action_dim);
  const auto batch_rows = static_cast<std::size_t>(std::min(options.batch, rows));
  std::vector<float> inputs(batch_rows * obs_dim), targets(batch_rows * action_dim);
  std::vector<float> weights(data.weights.empty() ? 0 : batch_rows);

  PolicyTrainingResult result;
  ProgressReporter progress(options.progress, "behavior cloning", "samples", 1, options.epochs);
  for (std::int64_t epoch = 0; epoch < options.epochs; ++epoch) {
    const auto start = std::chrono::steady_clock::now();
    detail::shuffle(order, rng);
    double loss = 0.0;
    for (std::int64_t first = 0; first < rows; first += options.batch) {
      const auto n = static_cast<std::size_t>(std::min(options.batch, rows - first));
      for (std::size_t j = 0; j < n; ++j) {
        const auto r = static_cast<std::size_t>(order[static_cast<std::size_t>(first) + j]);
        std::memcpy(&inputs[j * obs_dim], &observations[r * obs_dim], obs_dim * sizeof(float));
        std::memcpy(&targets[j * action_dim], &data.actions[r * action_dim],
                    action_dim * sizeof(float));
        if (!weights.empty()) weights[j] = data.weights[r];
      }
      loss +=
          net->squared_error_step(std::span<const float>(inputs).first(n * obs_dim),
                                  std::span<const float>(targets).first(n * action_dim),
                                  std::span<const float>(weights).first(weights.empty() ? 0 : n),
                                  static_cast<std::int64_t>(n)) *
          static_cast<double>(n);
    }
    result.epoch_loss.push_back(loss / static_cast<double>(rows));
    const std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - start;
    progress.epoch_done(0, epoch, result.epoch_loss.back(),
                        static_cast<double>(rows) / std::max(seconds.count(), 1e-9));
  }
  result.policy = net->weights();
  if (options.normalize_observations) fold_input_normalization(result.policy, z.mean, z.scale);
  return result;
}

void fold_input_normalization(MlpWeights& network, std::span<const double> mean,
                              std::span<const double> scale) {
  constexpr std::string_view fn = "ltt::learning::fold_input_normalization";
  check_shape(fn, "network.shape", network.shape);
  const std::int64_t in = network.shape.input(), out = network.shape.widths[1];
  if (detail::ssize(mean.size()) != in)
    invalid(fn, "mean.size()", show(detail::ssize(mean.size())),
            "must equal the input width " + show(in));
  if (detail::ssize(scale.size()) != in)
    invalid(fn, "scale.size()", show(detail::ssize(scale.size())),
            "must equal the input width " + show(in));
  for (std::size_t j = 0; j < mean.size(); ++j) {
    if (!std::isfinite(mean[j]))
      invalid(fn, "mean[" + std::to_string(j) + "]", show(mean[j]), "must be finite");
    if (!(std::isfinite(scale[j]) && scale[j] > 0.0))
      invalid(fn, "scale[" + std::to_string(j) + "]", show(scale[j]), "must be finite and > 0");
  }
  // Layer 0 is stored row-major out x in, its bias right after (mlp.hpp).
  float* W = network.parameters.data() + network.shape.weight_offset(0);
  float* b = W + out * in;
  for (std::int64_t o = 0; o < out; ++o) {
    double shift = 0.0;
    for (std::int64_t j = 0; j < in; ++j) {
      const double w = W[o * in + j] / scale[static_cast<std::size_t>(j)];
      W[o * in + j] = static_cast<float>(w);
      shift += w * mean[static_cast<std::size_t>(j)];
    }
    b[o] = static_cast<float>(b[o] - shift);
  }
}

std::vector<float> policy_actions(const MlpWeights& policy, std::span<const float> observations,
                                  const Backend& backend) {
  constexpr std::string_view fn = "ltt::learning::policy_actions";
  check_shape(fn, "policy.shape", policy.shape);
  const std::int64_t rows = detail::table_rows(fn, "observations", observations,
                                               "policy input width", policy.shape.input());
  std::vector<float> actions(static_cast<std::size_t>(rows * policy.shape.output_width()));
  if (rows == 0) return actions;
  backend.network(policy)->predict(observations, rows, actions);
  return actions;
}

std::vector<float> advantage_weights(std::span<const double> advantages, double beta, double clip) {
  constexpr std::string_view fn = "ltt::learning::advantage_weights";
  if (!(std::isfinite(beta) && beta > 0.0))
    invalid(fn, "beta", show(beta), "must be finite and > 0");
  if (!(std::isfinite(clip) && clip >= 1.0))
    invalid(fn, "clip", show(clip), "must be finite and >= 1");
  const double log_clip = std::log(clip);
  std::vector<float> w(advantages.size());
  for (std::size_t i = 0; i < advantages.size(); ++i) {
    if (!std::isfinite(advantages[i]))
      invalid(fn, "advantages[" + std::to_string(i) + "]", show(advantages[i]),
              "must be a finite number");
    const double z = advantages[i] / beta;
    w[i] = static_cast<float>(z >= log_clip ? clip : std::exp(z));
  }
  return w;
}

}  // namespace ltt::learning
