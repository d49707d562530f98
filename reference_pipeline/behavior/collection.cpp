// Behavior data collected from a training run's checkpoints (collection.hpp).

#include "behavior/collection.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <tasks/episode_log.hpp>

#include "behavior/check.hpp"
#include "behavior/gaussian_policy.hpp"

namespace ltt::behavior {

namespace {

constexpr std::string_view collect_fn = "collect_dataset";

// The episodes of one checkpoint from `seeds`, its action noise from `noise`.
Rollout run_checkpoint(const EnvironmentFactory& make, const EnvironmentSpec& spec,
                       const PolicyCheckpoint& checkpoint, std::span<const std::uint64_t> seeds,
                       std::mt19937_64& noise, int threads) {
  GaussianActor actor(checkpoint.policy);
  const MeanFunction mean = [&actor](std::span<const float> observations, std::int64_t rows,
                                     std::span<float> out) { actor.means(observations, rows, out); };
  return collect_episodes(make, spec, seeds, mean, actor.log_std(), noise, threads);
}

// An episode's (return, cost) as a reader of the stored float32 rewards and costs sums them,
// which is what FSRL's buffer sees of it (episode_log.hpp stores them so).
tasks::EpisodeMetrics metrics_of(const Rollout& r, std::int64_t e) {
  tasks::EpisodeMetrics m;
  for (std::int64_t t = r.offsets[static_cast<std::size_t>(e)];
       t < r.offsets[static_cast<std::size_t>(e) + 1]; ++t) {
    m.episodic_return += static_cast<float>(r.rewards[static_cast<std::size_t>(t)]);
    m.episodic_cost += static_cast<float>(r.costs[static_cast<std::size_t>(t)]);
  }
  return m;
}

// Episode e of `r` into the log: the action the environment got (clipped to [-1, 1]), and the
// next observation, which for the last row is the observation the episode ended in.
void log_episode(const Rollout& r, std::int64_t e, tasks::EpisodeLog& log) {
  const auto od = static_cast<std::size_t>(r.observation_dim);
  const auto ad = static_cast<std::size_t>(r.action_dim);
  const auto first = static_cast<std::size_t>(r.offsets[static_cast<std::size_t>(e)]);
  const auto last = static_cast<std::size_t>(r.offsets[static_cast<std::size_t>(e) + 1]);
  const std::span<const float> observations(r.observations);
  std::vector<float> action(ad);
  for (std::size_t t = first; t < last; ++t) {
    for (std::size_t j = 0; j < ad; ++j)
      action[j] = std::clamp(r.actions[t * ad + j], -1.0f, 1.0f);
    const std::span<const float> next =
        t + 1 < last ? observations.subspan((t + 1) * od, od)
                     : std::span<const float>(r.final_observations)
                           .subspan(static_cast<std::size_t>(e) * od, od);
    log.add(observations.subspan(t * od, od), action, r.rewards[t], r.costs[t], next,
            r.terminals[t] != 0, r.timeouts[t] != 0);
  }
}

void check(const EnvironmentSpec& spec, std::span<const PolicyCheckpoint> checkpoints,
           std::int64_t episodes, const CollectionOptions& o) {
  if (checkpoints.empty()) detail::invalid(collect_fn, "checkpoints.size()", "0", "must be >= 1");
  for (std::size_t k = 0; k < checkpoints.size(); ++k) {
    const GaussianPolicy& p = checkpoints[k].policy;
    if (p.observation_dim() != spec.observation_dim || p.action_dim() != spec.action_dim)
      detail::invalid(collect_fn, data::cat("checkpoints[", std::to_string(k), "]"),
                      data::cat(checkpoints[k].task, " epoch ", std::to_string(checkpoints[k].epoch)),
                      data::cat("must take ", detail::show(spec.observation_dim),
                                " observations and give ", detail::show(spec.action_dim),
                                " actions; it takes ", detail::show(p.observation_dim()), " and gives ",
                                detail::show(p.action_dim())));
  }
  if (episodes < 1) detail::invalid(collect_fn, "episodes", detail::show(episodes), "must be >= 1");
  if (!(o.offered_per_kept >= 1 && std::isfinite(o.offered_per_kept)))
    detail::invalid(collect_fn, "options.offered_per_kept", detail::show(o.offered_per_kept),
                    "must be finite and >= 1");
  if (!(o.filter_interval > 1 && std::isfinite(o.filter_interval)))
    detail::invalid(collect_fn, "options.filter_interval", detail::show(o.filter_interval),
                    "must be finite and > 1");
  if (!std::isfinite(o.return_floor))
    detail::invalid(collect_fn, "options.return_floor", detail::show(o.return_floor),
                    "must be finite");
  if (!(o.cost_ceiling > 0 && std::isfinite(o.cost_ceiling)))
    detail::invalid(collect_fn, "options.cost_ceiling", detail::show(o.cost_ceiling),
                    "must be finite and > 0");
  if (o.threads < 1)
    detail::invalid(collect_fn, "options.threads", detail::show(static_cast<std::int64_t>(o.threads)),
                    "must be >= 1");
}

}  // namespace

CollectionOptions dsrl_collection(std::string_view task) {
  CollectionOptions o;
  if (task == "half-cheetah-velocity" || task == "hopper-velocity") {
    o.return_floor = 0;
    o.cost_ceiling = 250;
  } else if (task == "swimmer-velocity") {
    o.return_floor = 0;
    o.cost_ceiling = 200;
  } else {
    o.return_floor = -9999;
    o.cost_ceiling = 300;
  }
  return o;
}

tasks::TaskPool collect_dataset(const EnvironmentFactory& make, const EnvironmentSpec& spec,
                                std::span<const PolicyCheckpoint> checkpoints,
                                std::int64_t episodes, std::uint64_t seed,
                                const CollectionOptions& options) {
  check(spec, checkpoints, episodes, options);
  const auto K = static_cast<std::int64_t>(checkpoints.size());
  const std::int64_t offered =
      std::max<std::int64_t>(K, std::llround(options.offered_per_kept * static_cast<double>(episodes)));
  std::mt19937_64 rng(seed);
  std::vector<Rollout> rollouts;
  std::vector<tasks::EpisodeMetrics> metrics;
  std::vector<std::pair<std::int64_t, std::int64_t>> origin;  // (checkpoint, episode in its rollout)
  for (std::int64_t k = 0; k < K; ++k) {
    // The offered episodes spread over the checkpoints as evenly as whole numbers allow.
    const std::int64_t count = (k + 1) * offered / K - k * offered / K;
    std::vector<std::uint64_t> seeds(static_cast<std::size_t>(count));
    for (std::uint64_t& s : seeds) s = rng();
    std::mt19937_64 noise(rng());
    rollouts.push_back(run_checkpoint(make, spec, checkpoints[static_cast<std::size_t>(k)], seeds,
                                      noise, options.threads));
    for (std::int64_t e = 0; e < rollouts.back().episodes(); ++e) {
      metrics.push_back(metrics_of(rollouts.back(), e));
      origin.emplace_back(k, e);
    }
    if (options.progress) options.progress(k + 1, K);
  }
  tasks::TrajectoryBufferOptions buffer;
  buffer.capacity = episodes;
  buffer.filter_interval = options.filter_interval;
  buffer.return_floor = options.return_floor;
  buffer.cost_ceiling = options.cost_ceiling;
  std::int64_t accepted = 0;
  for (const tasks::EpisodeMetrics& m : metrics)
    accepted += m.episodic_return >= buffer.return_floor && m.episodic_cost <= buffer.cost_ceiling;
  if (accepted < episodes)
    throw std::runtime_error(data::cat(
        "ltt::behavior::collect_dataset: the buffer accepted ", detail::show(accepted), " of the ",
        detail::show(static_cast<std::int64_t>(metrics.size())), " episodes offered (return >= ",
        detail::show(buffer.return_floor), ", cost <= ", detail::show(buffer.cost_ceiling),
        "), fewer than the ", detail::show(episodes), " asked for"));
  // The buffer as it is just after a thinning: exactly `episodes` held (settle_last = 0).
  const std::vector<std::int64_t> kept = tasks::trajectory_buffer(metrics, buffer, 0, rng);
  tasks::EpisodeLog log(spec.observation_dim, spec.action_dim);
  for (const std::int64_t i : kept) {
    const auto [k, e] = origin[static_cast<std::size_t>(i)];
    log_episode(rollouts[static_cast<std::size_t>(k)], e, log);
  }
  tasks::TaskPool pool = log.pool();
  for (std::size_t j = 0; j < kept.size(); ++j)
    pool.episodes[j].checkpoint = origin[static_cast<std::size_t>(kept[j])].first;
  pool.behavior.count = K;
  pool.behavior.mean_cost = [make, spec, checkpoints = std::vector<PolicyCheckpoint>(
                                             checkpoints.begin(), checkpoints.end())](
                                std::int64_t k, std::int64_t fresh, std::uint64_t fresh_seed) {
    constexpr std::string_view fn = "BehaviorCheckpoints::mean_cost";
    if (k < 0 || k >= static_cast<std::int64_t>(checkpoints.size()))
      detail::invalid(fn, "k", detail::show(k),
                      data::cat("must lie in [0, ", detail::show(checkpoints.size()), ")"));
    if (fresh < 1) detail::invalid(fn, "episodes", detail::show(fresh), "must be >= 1");
    std::mt19937_64 draws(fresh_seed);
    std::vector<std::uint64_t> seeds(static_cast<std::size_t>(fresh));
    for (std::uint64_t& s : seeds) s = draws();
    std::mt19937_64 noise(draws());
    // One thread: the pipeline runs several checkpoints at once.
    const Rollout r = run_checkpoint(make, spec, checkpoints[static_cast<std::size_t>(k)], seeds,
                                     noise, 1);
    double cost = 0;
    for (std::int64_t e = 0; e < r.episodes(); ++e) cost += metrics_of(r, e).episodic_cost;
    return cost / static_cast<double>(fresh);
  };
  return pool;
}

}  // namespace ltt::behavior
