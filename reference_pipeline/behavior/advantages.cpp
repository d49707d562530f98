// Generalized advantage estimation (advantages.hpp).

#include "behavior/advantages.hpp"

#include "behavior/check.hpp"

namespace ltt::behavior {

std::vector<double> generalized_advantages(std::span<const double> rewards,
                                           std::span<const double> values,
                                           std::span<const double> next_values,
                                           std::span<const std::uint8_t> terminal,
                                           std::span<const std::uint8_t> timeout, double gamma,
                                           double lambda) {
  constexpr std::string_view fn = "generalized_advantages";
  const auto rows = static_cast<std::int64_t>(rewards.size());
  detail::require_size(fn, "values", values.size(), rows, "rewards.size()");
  detail::require_size(fn, "next_values", next_values.size(), rows, "rewards.size()");
  detail::require_size(fn, "terminal", terminal.size(), rows, "rewards.size()");
  detail::require_size(fn, "timeout", timeout.size(), rows, "rewards.size()");
  if (!(gamma >= 0.0 && gamma <= 1.0))
    detail::invalid(fn, "gamma", detail::show(gamma), "must lie in [0, 1]");
  if (!(lambda >= 0.0 && lambda <= 1.0))
    detail::invalid(fn, "lambda", detail::show(lambda), "must lie in [0, 1]");
  if (rows > 0 && !terminal.back() && !timeout.back())
    detail::invalid(fn, "terminal", "must end an episode at the last row (or timeout must)");
  std::vector<double> advantages(rewards.size());
  double next = 0.0;
  for (std::size_t t = rewards.size(); t-- > 0;) {
    const double bootstrap = terminal[t] ? 0.0 : gamma * next_values[t];
    const double delta = rewards[t] + bootstrap - values[t];
    const bool end = terminal[t] || timeout[t];
    next = delta + (end ? 0.0 : gamma * lambda * next);
    advantages[t] = next;
  }
  return advantages;
}

}  // namespace ltt::behavior
