#include "corridor.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>

#include <curation/detail/random.hpp>

#include "check.hpp"
#include "episode_log.hpp"

namespace ltt::tasks {
namespace {

using detail::invalid;
using detail::show;

void check(std::string_view function, const CorridorSpec& s) {
  if (s.horizon < 1 || s.horizon > 300)
    invalid(function, "horizon", show(s.horizon), "must be in 1 .. 300");
  if (!(s.expert_mass >= 0 && s.expert_mass < 1))
    invalid(function, "expert_mass", show(s.expert_mass), "must be in [0, 1)");
  if (!(s.safe_probability > 0 && s.safe_probability < 1))
    invalid(function, "safe_probability", show(s.safe_probability), "must be in (0, 1)");
}

void check_count(std::string_view function, std::string_view name, std::int64_t n) {
  if (n < 1) invalid(function, name, show(n), "must be >= 1");
}

void check_weight_ratio(std::string_view function, double w) {
  if (!(w > 0) || std::isinf(w))
    invalid(function, "weight_ratio", show(w), "must be positive and finite");
}

struct Rows {
  std::vector<double> time, action;
};

Rows rows_of(std::string_view function, const data::DsrlDataset& pool) {
  if (pool.observations.rank() != 2 || pool.observations.shape[1] != 1 ||
      pool.actions.rank() != 2 || pool.actions.shape[1] != 1)
    invalid(function, "pool",
            "must be a corridor pool: 1-dimensional observations (t) and actions (0/1)");
  Rows r{pool.observations.to_double(), pool.actions.to_double()};
  for (std::size_t i = 0; i < r.time.size(); ++i)
    if (!(r.time[i] >= 0 && r.time[i] < 300 && r.time[i] == std::floor(r.time[i])) ||
        !(r.action[i] == 0 || r.action[i] == 1))
      invalid(function, "pool",
              data::cat("must hold corridor transitions (observation a time index in 0 .. 299, "
                        "action 0 or 1); row ",
                        show(i), " is not one"));
  return r;
}

}  // namespace

double corridor_marginal_safe_probability(const CorridorSpec& spec) {
  check("corridor_marginal_safe_probability", spec);
  return spec.expert_mass + (1 - spec.expert_mass) * spec.safe_probability;
}

double corridor_cloned_safe_probability(double p, double w) {
  if (!(p > 0 && p < 1))
    invalid("corridor_cloned_safe_probability", "marginal_safe_probability", show(p),
            "must be in (0, 1)");
  check_weight_ratio("corridor_cloned_safe_probability", w);
  return p * w / (p * w + (1 - p));
}

double corridor_cloned_all_safe_probability(const CorridorSpec& spec, double w) {
  const double ps = corridor_cloned_safe_probability(corridor_marginal_safe_probability(spec), w);
  return std::exp(static_cast<double>(spec.horizon) * std::log(ps));
}

double corridor_selection_safe_probability(const CorridorSpec& spec, std::int64_t n) {
  check("corridor_selection_safe_probability", spec);
  check_count("corridor_selection_safe_probability", "trajectories", n);
  const double q = spec.expert_mass;
  const double p0 =
      q + (1 - q) * std::exp(static_cast<double>(spec.horizon) * std::log(spec.safe_probability));
  // 1 - (1 - P0)^N without cancellation: -expm1(N log1p(-P0)).
  return -std::expm1(static_cast<double>(n) * std::log1p(-p0));
}

double corridor_selection_safe_lower_bound(const CorridorSpec& spec, std::int64_t n) {
  check("corridor_selection_safe_lower_bound", spec);
  check_count("corridor_selection_safe_lower_bound", "trajectories", n);
  return -std::expm1(static_cast<double>(n) * std::log1p(-spec.expert_mass));
}

TaskPool generate_corridor(const CorridorSpec& spec, std::int64_t trajectories,
                           std::uint64_t seed) {
  check("generate_corridor", spec);
  check_count("generate_corridor", "trajectories", trajectories);
  std::mt19937_64 rng(seed);
  EpisodeLog log(1, 1);
  for (std::int64_t i = 0; i < trajectories; ++i) {
    const bool expert = curation::detail::uniform_unit(rng) < spec.expert_mass;
    for (std::int64_t t = 0; t < spec.horizon; ++t) {
      const bool safe = expert || curation::detail::uniform_unit(rng) < spec.safe_probability;
      const float a = safe ? 0.0f : 1.0f;
      const float s = static_cast<float>(t), s1 = static_cast<float>(t + 1);
      log.add({&s, 1}, {&a, 1}, a, a, {&s1, 1}, false, t + 1 == spec.horizon);
    }
  }
  return log.pool();
}

std::vector<double> corridor_ratio_weights(const data::DsrlDataset& pool, double w) {
  check_weight_ratio("corridor_ratio_weights", w);
  const Rows r = rows_of("corridor_ratio_weights", pool);
  std::vector<double> weights(r.action.size());
  for (std::size_t i = 0; i < weights.size(); ++i) weights[i] = r.action[i] == 0 ? w : 1.0;
  return weights;
}

std::vector<double> corridor_selection_weights(const data::DsrlDataset& pool) {
  const std::vector<double> rewards = pool.rewards.to_double(), costs = pool.costs.to_double();
  const std::vector<double> term = pool.terminals.to_double(), tout = pool.timeouts.to_double();
  std::vector<std::uint8_t> terminals(term.size()), timeouts(tout.size());
  for (std::size_t i = 0; i < term.size(); ++i) terminals[i] = term[i] != 0;
  for (std::size_t i = 0; i < tout.size(); ++i) timeouts[i] = tout[i] != 0;
  const data::EpisodeSplit split = data::split_episodes(rewards, costs, terminals, timeouts);
  std::vector<double> weights(rewards.size(), 0.0);
  for (const data::Episode& e : split.episodes)
    if (e.episodic_cost == 0)
      for (std::int64_t i = e.start; i < e.start + e.length; ++i)
        weights[static_cast<std::size_t>(i)] = 1;
  return weights;
}

CorridorPolicy clone_corridor(const data::DsrlDataset& pool, std::span<const double> row_weights) {
  const Rows r = rows_of("clone_corridor", pool);
  if (row_weights.size() != r.action.size())
    invalid("clone_corridor", "row_weights",
            data::cat("must hold one weight per row of the pool (", show(r.action.size()),
                      "); it holds ", show(row_weights.size())));
  std::size_t horizon = 0;
  for (const double t : r.time) horizon = std::max(horizon, static_cast<std::size_t>(t) + 1);
  std::vector<double> safe(horizon, 0.0), total(horizon, 0.0);
  for (std::size_t i = 0; i < r.action.size(); ++i) {
    const auto t = static_cast<std::size_t>(r.time[i]);
    total[t] += row_weights[i];
    if (r.action[i] == 0) safe[t] += row_weights[i];
  }
  CorridorPolicy policy;
  policy.safe_probability.resize(horizon);
  for (std::size_t t = 0; t < horizon; ++t)
    policy.safe_probability[t] = total[t] > 0 ? safe[t] / total[t] : 0.5;
  return policy;
}

double corridor_all_safe_probability(const CorridorPolicy& policy) {
  double log_p = 0;
  for (const double p : policy.safe_probability) log_p += std::log(p);
  return std::exp(log_p);
}

std::int64_t simulate_corridor_all_safe(const CorridorPolicy& policy, std::int64_t episodes,
                                        std::uint64_t seed) {
  check_count("simulate_corridor_all_safe", "episodes", episodes);
  std::mt19937_64 rng(seed);
  std::int64_t all_safe = 0;
  for (std::int64_t e = 0; e < episodes; ++e) {
    bool safe = true;
    for (const double p : policy.safe_probability)
      safe = (curation::detail::uniform_unit(rng) < p) && safe;  // draw every step
    all_safe += safe ? 1 : 0;
  }
  return all_safe;
}

}  // namespace ltt::tasks
