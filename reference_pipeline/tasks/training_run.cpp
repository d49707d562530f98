#include "training_run.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string_view>

#include "check.hpp"

namespace ltt::tasks {

double ThresholdSchedule::at(double fraction) const {
  if (fraction <= hold_until) return start;
  if (fraction >= reach_at) return end;
  return start + (end - start) * (fraction - hold_until) / (reach_at - hold_until);
}

namespace {

void check_options(const TrainingRunOptions& o) {
  constexpr std::string_view function = "simulate_training_run";
  const auto positive = [&](std::string_view name, double x) {
    if (!(x > 0 && std::isfinite(x)))
      detail::invalid(function, name, detail::show(x), "must be finite and > 0");
  };
  const auto non_negative = [&](std::string_view name, double x) {
    if (!(x >= 0 && std::isfinite(x)))
      detail::invalid(function, name, detail::show(x), "must be finite and >= 0");
  };
  const ThresholdSchedule& t = o.threshold;
  non_negative("options.threshold.start", t.start);
  non_negative("options.threshold.end", t.end);
  if (!(t.hold_until >= 0 && t.hold_until < t.reach_at && t.reach_at <= 1))
    detail::invalid(function, "options.threshold.reach_at", detail::show(t.reach_at),
                    data::cat("must satisfy 0 <= hold_until (", detail::show(t.hold_until),
                              ") < reach_at <= 1"));
  if (o.episodes_per_epoch < 1)
    detail::invalid(function, "options.episodes_per_epoch", detail::show(o.episodes_per_epoch),
                    "must be >= 1");
  if (!(o.episodes_per_slot >= 1 && std::isfinite(o.episodes_per_slot)))
    detail::invalid(function, "options.episodes_per_slot", detail::show(o.episodes_per_slot),
                    "must be finite and >= 1");
  if (!(o.capacity_per_episode > 0 && o.capacity_per_episode <= 1))
    detail::invalid(function, "options.capacity_per_episode", detail::show(o.capacity_per_episode),
                    "must lie in (0, 1]");
  positive("options.cost_ceiling", o.cost_ceiling);
  if (!std::isfinite(o.return_floor))
    detail::invalid(function, "options.return_floor", detail::show(o.return_floor),
                    "must be finite");
  non_negative("options.proportional_gain", o.proportional_gain);
  non_negative("options.integral_gain", o.integral_gain);
  positive("options.competence_time", o.competence_time);
  non_negative("options.initial_noise", o.initial_noise);
  non_negative("options.final_noise", o.final_noise);
}

}  // namespace

TrainingRun simulate_training_run(std::int64_t dataset_episodes, std::uint64_t seed, double budget,
                                  const TrainingRunOptions& options, const EpisodeRunner& run) {
  constexpr std::string_view function = "simulate_training_run";
  if (dataset_episodes < 1)
    detail::invalid(function, "dataset_episodes", detail::show(dataset_episodes), "must be >= 1");
  if (!(budget > 0 && std::isfinite(budget)))
    detail::invalid(function, "budget", detail::show(budget), "must be finite and > 0");
  check_options(options);
  TrajectoryBufferOptions buffer;
  buffer.capacity = std::max<std::int64_t>(
      1, std::llround(options.capacity_per_episode * static_cast<double>(dataset_episodes)));
  buffer.filter_interval = options.filter_interval;
  buffer.return_floor = options.return_floor;
  buffer.cost_ceiling = options.cost_ceiling * budget;
  const std::int64_t epochs = std::max<std::int64_t>(
      1, std::llround(options.episodes_per_slot * static_cast<double>(buffer.capacity) /
                      static_cast<double>(options.episodes_per_epoch)));

  std::mt19937_64 rng(seed);
  TrainingRun out;
  double integral = 0, lambda = 0;
  for (std::int64_t e = 0; e < epochs; ++e) {
    const double t = (static_cast<double>(e) + 0.5) / static_cast<double>(epochs);
    const double q = 1 - std::exp(-t / options.competence_time);
    const Checkpoint checkpoint{
        q, lambda / (1 + lambda),
        options.initial_noise + (options.final_noise - options.initial_noise) * q};
    out.checkpoints.push_back(checkpoint);
    double cost = 0;
    for (std::int64_t k = 0; k < options.episodes_per_epoch; ++k) {
      const std::uint64_t episode_seed = rng();
      const EpisodeMetrics m = run(episode_seed, checkpoint, nullptr);
      cost += m.episodic_cost;
      out.episodes.push_back({episode_seed, e, t, checkpoint, m});
    }
    const double excess = (cost / static_cast<double>(options.episodes_per_epoch) -
                           options.threshold.at(t) * budget) /
                          budget;
    integral = std::max(0.0, integral + options.integral_gain * excess);
    lambda = std::max(0.0, integral + options.proportional_gain * excess);
  }

  std::vector<EpisodeMetrics> metrics;
  for (const RunEpisode& r : out.episodes) metrics.push_back(r.metrics);
  std::int64_t accepted = 0;
  for (const EpisodeMetrics& m : metrics)
    accepted += m.episodic_return >= buffer.return_floor && m.episodic_cost <= buffer.cost_ceiling;
  const std::int64_t settle = dataset_episodes - buffer.capacity;
  if (accepted < dataset_episodes)
    throw std::runtime_error(data::cat("ltt::tasks::simulate_training_run: the buffer accepted ",
                                       detail::show(accepted), " of the run's ",
                                       detail::show(metrics.size()), " episodes, fewer than the ",
                                       detail::show(dataset_episodes), " the dataset needs"));
  out.dataset = trajectory_buffer(metrics, buffer, settle, rng);
  if (static_cast<std::int64_t>(out.dataset.size()) != dataset_episodes)
    throw std::runtime_error(data::cat("ltt::tasks::simulate_training_run: the buffer ended with ",
                                       detail::show(out.dataset.size()), " episodes, not the ",
                                       detail::show(dataset_episodes), " asked for"));
  return out;
}

TaskPool dataset_of(const TrainingRun& run, std::int64_t observation_dim, std::int64_t action_dim,
                    const EpisodeRunner& replay) {
  EpisodeLog log(observation_dim, action_dim);
  for (const std::int64_t i : run.dataset) {
    const RunEpisode& r = run.episodes.at(static_cast<std::size_t>(i));
    replay(r.seed, r.checkpoint, &log);
  }
  TaskPool pool = log.pool();
  for (std::size_t j = 0; j < run.dataset.size(); ++j)
    pool.episodes.at(j).checkpoint =
        run.episodes.at(static_cast<std::size_t>(run.dataset[j])).epoch;
  pool.behavior.count = static_cast<std::int64_t>(run.checkpoints.size());
  pool.behavior.mean_cost = [checkpoints = run.checkpoints, replay](
                                std::int64_t k, std::int64_t episodes, std::uint64_t seed) {
    constexpr std::string_view function = "BehaviorCheckpoints::mean_cost";
    if (k < 0 || k >= static_cast<std::int64_t>(checkpoints.size()))
      detail::invalid(function, "k", detail::show(k),
                      data::cat("must lie in [0, ", detail::show(checkpoints.size()), ")"));
    if (episodes < 1) detail::invalid(function, "episodes", detail::show(episodes), "must be >= 1");
    std::mt19937_64 rng(seed);
    double cost = 0;
    for (std::int64_t e = 0; e < episodes; ++e)
      cost += replay(rng(), checkpoints[static_cast<std::size_t>(k)], nullptr).episodic_cost;
    return cost / static_cast<double>(episodes);
  };
  return pool;
}

}  // namespace ltt::tasks
