// Lockstep episodes of N environments (rollout.hpp).

#include "behavior/rollout.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "behavior/block_threads.hpp"
#include "behavior/check.hpp"
#include "behavior/gaussian_policy.hpp"

namespace ltt::behavior {

namespace {

// One environment's episode as it runs.
struct Episode {
  std::unique_ptr<tasks::Environment> env;
  std::vector<float> observation;  // the current s_t
  std::vector<float> action;       // a_t, drawn this step
  std::vector<double> clipped;     // clip(a_t, -1, 1), what the environment gets
  tasks::Step step;
  std::int64_t steps = 0;
  bool running = true;
  // the episode's rows
  std::vector<float> observations, actions, final_observation;
  std::vector<double> log_probabilities, rewards, costs;
  std::vector<std::uint8_t> terminals, timeouts;
};

void step_block(std::span<Episode* const> block, std::int64_t horizon) {
  for (Episode* e : block) {
    e->step = e->env->step(e->clipped);
    ++e->steps;
    e->env->observation(e->observation);  // s_{t+1}
    if (!e->step.terminal && !e->step.timeout && (e->env->done() || e->steps >= horizon))
      e->step.timeout = true;  // ended without saying why: cut, so s_{t+1} still has a value
  }
}

void check(const EnvironmentSpec& spec, std::size_t seeds, std::size_t log_std, int threads) {
  constexpr std::string_view fn = "collect_episodes";
  if (spec.observation_dim < 1)
    detail::invalid(fn, "spec.observation_dim", detail::show(spec.observation_dim), "must be >= 1");
  if (spec.action_dim < 1)
    detail::invalid(fn, "spec.action_dim", detail::show(spec.action_dim), "must be >= 1");
  if (spec.horizon < 1)
    detail::invalid(fn, "spec.horizon", detail::show(spec.horizon), "must be >= 1");
  if (seeds < 1) detail::invalid(fn, "seeds.size()", "0", "must be >= 1");
  detail::require_size(fn, "log_std", log_std, spec.action_dim, "spec.action_dim");
  if (threads < 1)
    detail::invalid(fn, "threads", detail::show(static_cast<std::int64_t>(threads)),
                    "must be >= 1");
}

}  // namespace

Rollout collect_episodes(const EnvironmentFactory& make, const EnvironmentSpec& spec,
                         std::span<const std::uint64_t> seeds, const MeanFunction& mean,
                         std::span<const double> log_std, std::mt19937_64& noise, int threads) {
  check(spec, seeds.size(), log_std.size(), threads);
  const auto obs_dim = static_cast<std::size_t>(spec.observation_dim);
  const auto act_dim = static_cast<std::size_t>(spec.action_dim);
  std::vector<Episode> episodes(seeds.size());
  for (std::size_t k = 0; k < seeds.size(); ++k) {
    Episode& e = episodes[k];
    e.env = make(seeds[k]);
    e.observation.resize(obs_dim);
    e.action.resize(act_dim);
    e.clipped.resize(act_dim);
    e.env->observation(e.observation);
    if (e.env->done())
      throw std::logic_error(data::cat("ltt::behavior::collect_episodes: the environment of seed ",
                                       std::to_string(seeds[k]), " is done before its first step"));
  }
  std::vector<Episode*> running;
  std::vector<float> batch, means;
  BlockThreads workers(std::min(static_cast<std::size_t>(threads), seeds.size()));
  for (;;) {
    running.clear();
    for (Episode& e : episodes)
      if (e.running) running.push_back(&e);
    if (running.empty()) break;
    const std::size_t n = running.size();
    batch.resize(n * obs_dim);
    means.resize(n * act_dim);
    for (std::size_t i = 0; i < n; ++i)
      std::copy(running[i]->observation.begin(), running[i]->observation.end(),
                batch.begin() + static_cast<std::ptrdiff_t>(i * obs_dim));
    mean(batch, static_cast<std::int64_t>(n), means);
    for (std::size_t i = 0; i < n; ++i) {
      Episode& e = *running[i];
      const double log_p = sample_around(
          std::span<const float>(means).subspan(i * act_dim, act_dim), log_std, noise, e.action);
      for (std::size_t j = 0; j < act_dim; ++j)
        e.clipped[j] = std::clamp(static_cast<double>(e.action[j]), -1.0, 1.0);
      e.observations.insert(e.observations.end(), e.observation.begin(), e.observation.end());
      e.actions.insert(e.actions.end(), e.action.begin(), e.action.end());
      e.log_probabilities.push_back(log_p);
    }
    // Contiguous blocks of the running environments; the calling thread steps the first.
    const std::span<Episode* const> all(running);
    const std::size_t blocks = workers.blocks();
    workers.run([&](std::size_t b) {
      step_block(all.subspan(b * n / blocks, (b + 1) * n / blocks - b * n / blocks), spec.horizon);
    });
    for (Episode* e : running) {
      e->rewards.push_back(e->step.reward);
      e->costs.push_back(e->step.cost);
      e->terminals.push_back(e->step.terminal ? 1 : 0);
      e->timeouts.push_back(e->step.terminal ? 0 : e->step.timeout ? 1 : 0);
      if (e->step.terminal || e->step.timeout) {
        e->running = false;
        e->final_observation = e->observation;
        e->env.reset();
      }
    }
  }
  Rollout r;
  r.observation_dim = spec.observation_dim;
  r.action_dim = spec.action_dim;
  r.offsets.push_back(0);
  for (Episode& e : episodes) {
    r.observations.insert(r.observations.end(), e.observations.begin(), e.observations.end());
    r.actions.insert(r.actions.end(), e.actions.begin(), e.actions.end());
    r.log_probabilities.insert(r.log_probabilities.end(), e.log_probabilities.begin(),
                               e.log_probabilities.end());
    r.rewards.insert(r.rewards.end(), e.rewards.begin(), e.rewards.end());
    r.costs.insert(r.costs.end(), e.costs.begin(), e.costs.end());
    r.terminals.insert(r.terminals.end(), e.terminals.begin(), e.terminals.end());
    r.timeouts.insert(r.timeouts.end(), e.timeouts.begin(), e.timeouts.end());
    r.final_observations.insert(r.final_observations.end(), e.final_observation.begin(),
                                e.final_observation.end());
    r.offsets.push_back(r.rows());
  }
  return r;
}

}  // namespace ltt::behavior
