#include "pipeline/evaluation.hpp"

#include "pipeline/check.hpp"

#include <memory>
#include <stdexcept>
#include <string>

#include <data/text.hpp>
#include <learning/behavior_cloning.hpp>
#include <ltt/bounds.hpp>

namespace ltt::pipeline {

Evaluation summarize_episodes(std::vector<double> returns, std::vector<double> costs, double budget,
                              double cost_range, double delta) {
  Evaluation e;
  e.delta = delta;
  const auto n = static_cast<std::int64_t>(costs.size());
  double r = 0, c = 0;
  for (std::size_t i = 0; i < costs.size(); ++i) {
    r += returns[i];
    c += costs[i];
    e.over_budget += costs[i] > budget;
  }
  e.mean_return = r / static_cast<double>(n);
  e.mean_cost = c / static_cast<double>(n);
  e.over_budget_upper = clopper_pearson_upper(e.over_budget, n, delta);
  e.cost_upper = maurer_pontil_upper(costs, cost_range, delta);
  e.returns = std::move(returns);
  e.costs = std::move(costs);
  return e;
}

Evaluation evaluate_policy(const Task& task, const learning::MlpWeights& policy,
                           std::int64_t episodes, std::uint64_t seed, double delta,
                           const learning::Backend& backend) {
  if (episodes < 2)
    detail::invalid("evaluate_policy", "episodes", detail::show(episodes), "must be >= 2");
  if (!(delta > 0 && delta < 1))
    detail::invalid("evaluate_policy", "delta", detail::show(delta), "must lie in (0, 1)");
  const auto& widths = policy.shape.widths;
  if (widths.size() < 2 || widths.front() != task.observation_dim ||
      widths.back() != task.action_dim)
    detail::invalid("evaluate_policy", "policy",
                    data::cat("must map ", detail::show(task.observation_dim), " observations to ",
                              detail::show(task.action_dim), " actions for task ", task.name));
  const auto E = static_cast<std::size_t>(episodes);
  const auto od = static_cast<std::size_t>(task.observation_dim);
  const auto ad = static_cast<std::size_t>(task.action_dim);
  std::vector<std::unique_ptr<Environment>> envs(E);
  for (std::size_t e = 0; e < E; ++e) envs[e] = task.environment(learning::stream_seed(seed, e));
  std::vector<double> returns(E, 0.0), costs(E, 0.0);
  std::vector<std::size_t> live(E);
  for (std::size_t e = 0; e < E; ++e) live[e] = e;
  std::vector<float> obs;
  std::vector<double> action(ad);
  while (!live.empty()) {
    obs.resize(live.size() * od);
    for (std::size_t i = 0; i < live.size(); ++i)
      envs[live[i]]->observation(std::span<float>(obs).subspan(i * od, od));
    const std::vector<float> act = learning::policy_actions(policy, obs, backend);
    std::size_t kept = 0;
    for (std::size_t i = 0; i < live.size(); ++i) {
      const std::size_t e = live[i];
      for (std::size_t j = 0; j < ad; ++j) action[j] = act[i * ad + j];
      const tasks::Step s = envs[e]->step(action);
      returns[e] += s.reward;
      costs[e] += s.cost;
      if (!(s.terminal || s.timeout || envs[e]->done())) live[kept++] = e;
    }
    live.resize(kept);
  }
  return summarize_episodes(std::move(returns), std::move(costs), task.budget, task.cost_range,
                            delta);
}

}  // namespace ltt::pipeline
