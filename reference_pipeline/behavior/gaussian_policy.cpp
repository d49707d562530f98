// The Gaussian policy (gaussian_policy.hpp).

#include "behavior/gaussian_policy.hpp"

#include <tasks/episode_log.hpp>

#include "behavior/check.hpp"

namespace ltt::behavior {

void check_policy(std::string_view function, std::string_view parameter,
                  const GaussianPolicy& policy) {
  const std::string mean = data::cat(parameter, ".mean");
  learning::check_shape(data::cat("ltt::behavior::", function), data::cat(mean, ".shape"),
                        policy.mean.shape);
  if (policy.mean.shape.output != learning::OutputActivation::tanh)
    detail::invalid(function, data::cat(mean, ".shape.output"), "must be tanh (a policy's mean)");
  detail::require_size(function, data::cat(mean, ".parameters"), policy.mean.parameters.size(),
                       policy.mean.shape.parameter_count(), "shape.parameter_count()");
  detail::require_size(function, data::cat(parameter, ".log_std"), policy.log_std.size(),
                       policy.action_dim(), "the mean's output width");
  for (std::size_t j = 0; j < policy.log_std.size(); ++j)
    if (!std::isfinite(policy.log_std[j]))
      detail::invalid(function, data::cat(parameter, ".log_std[", std::to_string(j), "]"),
                      detail::show(static_cast<double>(policy.log_std[j])), "must be finite");
}

namespace {

const GaussianPolicy& checked(const GaussianPolicy& policy) {
  check_policy("GaussianActor", "policy", policy);
  return policy;
}

}  // namespace

GaussianActor::GaussianActor(const GaussianPolicy& policy)
    : mean_(checked(policy).mean.shape, policy.mean.parameters),
      log_std_(policy.log_std.begin(), policy.log_std.end()) {}

void GaussianActor::means(std::span<const float> observations, std::int64_t rows,
                          std::span<float> out) {
  mean_.predict(observations, rows, out);
}

void GaussianActor::sample(std::span<const float> observations, std::int64_t rows,
                           std::mt19937_64& rng, std::span<float> actions,
                           std::span<double> log_probabilities) {
  constexpr std::string_view fn = "GaussianActor::sample";
  const std::int64_t a = action_dim();
  detail::require_size(fn, "actions", actions.size(), rows * a, "rows * action_dim");
  detail::require_size(fn, "log_probabilities", log_probabilities.size(), rows, "rows");
  means_.resize(static_cast<std::size_t>(rows * a));
  mean_.predict(observations, rows, means_);
  const auto width = static_cast<std::size_t>(a);
  for (std::size_t r = 0; r < static_cast<std::size_t>(rows); ++r)
    log_probabilities[r] = sample_around(std::span<const float>(means_).subspan(r * width, width),
                                         log_std_, rng, actions.subspan(r * width, width));
}

double sample_around(std::span<const float> mean, std::span<const double> log_std,
                     std::mt19937_64& rng, std::span<float> action) {
  for (std::size_t j = 0; j < log_std.size(); ++j)
    action[j] = static_cast<float>(static_cast<double>(mean[j]) +
                                   std::exp(log_std[j]) * tasks::standard_normal(rng));
  return log_probability<float>(action, mean, log_std);
}

}  // namespace ltt::behavior
