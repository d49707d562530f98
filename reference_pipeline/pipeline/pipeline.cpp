#include "pipeline/pipeline.hpp"

#include "pipeline/check.hpp"
#include "pipeline/format.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

#include <curation/calibration.hpp>
#include <curation/score_aggregation.hpp>
#include <curation/selection.hpp>
#include <data/dsrl.hpp>
#include <data/text.hpp>
#include <learning/detail/data.hpp>
#include <tasks/episode_log.hpp>

namespace ltt::pipeline {
namespace {

using data::cat;

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

using detail::invalid;
using detail::require;
using detail::show;

// `function` is the public function the options were handed to.
void check_options(std::string_view function, const PipelineOptions& o) {
  const auto at_least = [&](std::string_view name, std::int64_t x, std::int64_t least) {
    if (x < least) invalid(function, name, show(x), cat("must be >= ", show(least)));
  };
  at_least("episodes", o.episodes, 2);
  require(!o.seeds.empty(), function, "seeds", "must name at least one seed");
  at_least("calibration_size", o.calibration_size, 1);
  at_least("eval_episodes", o.eval_episodes, 2);
  if (!(o.reward_fraction > 0 && o.reward_fraction <= 1))
    invalid(function, "reward_fraction", show(o.reward_fraction), "must lie in (0, 1]");
  if (!(o.certificate_delta > 0 && o.certificate_delta < 1))
    invalid(function, "certificate_delta", show(o.certificate_delta), "must lie in (0, 1)");
  if (!(std::isfinite(o.return_weight_kappa) && o.return_weight_kappa >= 0))
    invalid(function, "return_weight_kappa", show(o.return_weight_kappa),
            "must be finite and >= 0");
  at_least("threads", o.threads, 1);
  at_least("rate_curve_max", o.rate_curve_max, 1);
  at_least("validation_draws", o.validation_draws, 1);
  at_least("behavior_cost_episodes", o.behavior_cost_episodes, 0);
  require(o.backend != nullptr, function, "backend", "must be set");
}

// "certified at quantile 0.45: 551 trajectories" or the refusal's fallback size.
std::string certificate_progress(const curation::CalibratedSelection& calibrated) {
  const std::string size = std::to_string(calibrated.selected.size());
  return calibrated.certificate.certified
             ? cat("certified at quantile ", fixed(calibrated.certificate.quantile, 2), ": ", size,
                   " trajectories")
             : cat("refused: uncertified fallback of ", size, " trajectories");
}

}  // namespace

LabelsOnlyFilter labels_only_filter(std::span<const float> observations, std::int64_t obs_dim,
                                    std::span<const std::int64_t> offsets,
                                    const curation::Calibration& calibration,
                                    const learning::PolicyTrainingOptions& classifier,
                                    const learning::Backend& backend) {
  const auto N = static_cast<std::int64_t>(offsets.size()) - 1;
  constexpr std::string_view function = "labels_only_filter";
  require(N >= 1, function, "offsets", "must bound at least one trajectory");
  require(calibration.index.size() == calibration.unsafe.size() && !calibration.index.empty(),
          function, "calibration", "must hold as many labels as positions, at least one");
  const auto d = static_cast<std::size_t>(obs_dim);
  std::vector<float> states, targets;
  for (std::size_t i = 0; i < calibration.index.size(); ++i) {
    const std::int64_t t = calibration.index[i];
    if (t < 0 || t >= N)
      invalid(function, "calibration",
              cat("must hold positions in the pool, 0 .. ", show(N - 1), " (calibration.index[",
                  show(i), "] = ", show(t), ")"));
    const auto lo = static_cast<std::size_t>(offsets[static_cast<std::size_t>(t)]);
    const auto hi = static_cast<std::size_t>(offsets[static_cast<std::size_t>(t) + 1]);
    states.insert(states.end(), observations.begin() + static_cast<std::ptrdiff_t>(lo * d),
                  observations.begin() + static_cast<std::ptrdiff_t>(hi * d));
    targets.insert(targets.end(), hi - lo, calibration.unsafe[i] ? -1.0F : 1.0F);
  }
  LabelsOnlyFilter out;
  out.training_rows = static_cast<std::int64_t>(targets.size());
  const learning::BehaviorData data{states, obs_dim, targets, 1, {}};
  learning::PolicyTrainingResult trained = learning::train_policy(data, classifier, backend);
  out.final_loss = trained.epoch_loss.empty() ? 0.0 : trained.epoch_loss.back();
  // The value's scoring rule on the classifier's output at every state of the pool.
  const std::vector<float> output = learning::policy_actions(trained.policy, observations, backend);
  out.scores =
      curation::trajectory_scores(std::vector<double>(output.begin(), output.end()), offsets);
  out.selection = curation::v_filter(out.scores, calibration);
  return out;
}

PipelineOptions preset_options(std::string_view preset, std::string_view task) {
  PipelineOptions o;
  o.task = std::string(task);
  o.preset = std::string(preset);
  if (preset == "paper") {
    // Appendix "Hyperparameters": the defaults of the option structs are the paper's.
    o.episodes = 2000;
    o.seeds = {1, 2, 3, 4, 5};
  } else if (preset == "demo") {
    // The paper's data sizes (1000 pairs of H = 30, n = 200, 100 evaluation episodes) and its
    // behavior cloning (100 epochs, minibatches of 512), with networks sized for two CPU cores:
    // the value 128 x 128 for 100 epochs, the clones 64 x 64 (the velocity tasks' behavior
    // policies are 128 x 128; docs/pipeline.md, "Presets", gives the times and why).
    o.episodes = 1000;
    o.value.hidden = {128, 128};
    o.value.epochs = 100;
    o.policy.hidden = {64, 64};
    o.policy.epochs = 100;
  } else if (preset == "tiny") {
    // Seconds: the integration tests' settings. Numbers mean little at this size.
    o.episodes = 300;
    o.pairs.pairs = 200;
    o.value.hidden = {16, 16};
    o.value.members = 2;
    o.value.epochs = 5;
    o.value.batch_pairs = 64;
    o.policy.hidden = {16, 16};
    o.policy.epochs = 1;
    o.policy.batch = 256;
    o.calibration_size = 100;
    o.eval_episodes = 10;
    o.rate_curve_max = 300;
    o.validation_draws = 200;
    // A task of long episodes (the MuJoCo velocity tasks: 1000 steps, each step physics)
    // keeps the tiny run at about as many transitions as a 200-step task's.
    for (const Task& t : builtin_tasks())
      if (t.name == task && t.horizon > 300) {
        o.episodes = 40;
        o.calibration_size = 20;
        o.eval_episodes = 4;
        o.behavior_cost_episodes = 2;
      }
  } else {
    invalid("preset_options", "preset", cat("\"", preset, "\""),
            "is not a preset (demo, paper, tiny)");
  }
  return o;
}

// The policy-level cost of every checkpoint an episode names (NaN for the others): its mean
// episodic cost over `fresh` episodes seeded from its own stream of the pool seed, so a
// checkpoint's value does not depend on which others the pool holds or on the thread count.
std::vector<double> checkpoint_costs(const tasks::TaskPool& generated, std::int64_t fresh,
                                     const PipelineOptions& options,
                                     const ProgressLine& progress) {
  const tasks::BehaviorCheckpoints& behavior = generated.behavior;
  std::vector<std::uint8_t> named(static_cast<std::size_t>(behavior.count), 0);
  for (const tasks::EpisodeRecord& e : generated.episodes)
    named.at(static_cast<std::size_t>(e.checkpoint)) = 1;
  std::vector<std::int64_t> used;
  for (std::int64_t k = 0; k < behavior.count; ++k)
    if (named[static_cast<std::size_t>(k)]) used.push_back(k);
  if (progress)
    progress(cat("policy-level cost of the ", std::to_string(used.size()),
                 " behavior checkpoints in the pool (", std::to_string(fresh),
                 " fresh episodes each)"));
  constexpr std::uint64_t behavior_cost_stream = 1;
  const std::uint64_t base = learning::stream_seed(options.pool_seed, behavior_cost_stream);
  std::vector<double> cost(static_cast<std::size_t>(behavior.count),
                           std::numeric_limits<double>::quiet_NaN());
  learning::detail::run_indexed(
      static_cast<std::int64_t>(used.size()), options.threads, [&](std::int64_t i) {
        const std::int64_t k = used[static_cast<std::size_t>(i)];
        cost[static_cast<std::size_t>(k)] =
            behavior.mean_cost(k, fresh, learning::stream_seed(base, static_cast<std::uint64_t>(k)));
      });
  return cost;
}

BehaviorPool load_behavior_pool(const Task& task, const PipelineOptions& options,
                                const ProgressLine& progress) {
  check_options("load_behavior_pool", options);
  std::filesystem::path path;
  std::vector<std::int64_t> episode_checkpoint;
  std::vector<double> checkpoint_cost;
  if (options.dataset) {
    path = *options.dataset;
  } else {
    const tasks::TaskPool generated = task.generate(options.episodes, options.pool_seed);
    if (generated.behavior.count > 0 && options.behavior_cost_episodes > 0) {
      for (const tasks::EpisodeRecord& e : generated.episodes)
        episode_checkpoint.push_back(e.checkpoint);
      checkpoint_cost =
          checkpoint_costs(generated, options.behavior_cost_episodes, options, progress);
    }
    std::filesystem::create_directories(options.scratch);
    path = tasks::write_pool(options.scratch,
                             cat(task.name, "-pool-", std::to_string(options.pool_seed)),
                             generated.dataset);
  }
  // Every pool goes through the reader a real DSRL file goes through.
  const data::DsrlDataset ds = data::read_dsrl(path);
  if (!options.dataset && !options.keep_pool) std::filesystem::remove_all(path);
  BehaviorPool pool;
  pool.source = path.string();
  const data::Array& obs = ds["observations"];
  const data::Array& act = ds["actions"];
  pool.transitions = obs.shape.empty() ? 0 : obs.shape[0];
  pool.observation_dim = obs.row_size();
  pool.action_dim = act.row_size();
  if (pool.observation_dim != task.observation_dim || pool.action_dim != task.action_dim)
    invalid("load_behavior_pool", "dataset", pool.source,
            cat("has observations of ", show(pool.observation_dim), " and actions of ",
                show(pool.action_dim), " dims; task ", task.name, " needs ",
                show(task.observation_dim), " and ", show(task.action_dim)));
  // float32, as the tasks write them, is copied as is; another type goes through double.
  if (obs.dtype == data::DType::float32) {
    const auto o = obs.values<float>();
    pool.observations.assign(o.begin(), o.end());
  } else {
    const std::vector<double> o = obs.to_double();
    pool.observations.assign(o.begin(), o.end());
  }
  const std::vector<double> a = act.to_double();
  pool.actions.resize(a.size());
  for (std::size_t i = 0; i < a.size(); ++i)
    pool.actions[i] = static_cast<float>(std::clamp(a[i], -1.0, 1.0));
  const std::vector<double> rewards = ds["rewards"].to_double();
  pool.step_costs = ds["costs"].to_double();
  const auto flags = [&](std::string_view key) {
    const std::vector<double> f = ds[key].to_double();
    return std::vector<std::uint8_t>(f.begin(), f.end());
  };
  const data::EpisodeSplit split =
      data::split_episodes(rewards, pool.step_costs, flags("terminals"), flags("timeouts"));
  if (split.episodes.size() < 2)
    invalid("load_behavior_pool", "dataset", pool.source, "holds fewer than 2 complete episodes");
  for (const data::Episode& e : split.episodes) {
    pool.offsets.push_back(e.start);
    pool.episodic_return.push_back(e.episodic_return);
    pool.episodic_cost.push_back(e.episodic_cost);
  }
  pool.offsets.push_back(split.episodes.back().start + split.episodes.back().length);
  pool.unsafe = curation::unsafe_bits(pool.episodic_cost, task.budget);
  pool.unsafe_count = std::count(pool.unsafe.begin(), pool.unsafe.end(), std::uint8_t{1});
  if (!checkpoint_cost.empty()) {
    // The file gives back the generated episodes in order (the DSRL round trip); a mismatch
    // would attach the wrong checkpoints.
    if (episode_checkpoint.size() != pool.episodic_cost.size())
      throw std::logic_error(cat("ltt::pipeline::load_behavior_pool: ", show(pool.episodes()),
                                 " episodes read back from ", show(episode_checkpoint.size()),
                                 " generated"));
    pool.episode_checkpoint = std::move(episode_checkpoint);
    pool.checkpoint_cost = std::move(checkpoint_cost);
  }
  return pool;
}

SeedResult run_seed(const Task& task, const BehaviorPool& pool, const PipelineOptions& options,
                    std::uint64_t seed, const ProgressLine& progress) {
  check_options("run_seed", options);
  SeedResult r;
  r.seed = seed;
  auto stage = Clock::now();
  const auto lap = [&](std::string name) {
    r.seconds.emplace_back(std::move(name), seconds_since(stage));
    stage = Clock::now();
  };
  static_cast<ScoreStage&>(r) = score(pool, options, seed, progress);
  lap("value");
  static_cast<CertifyStage&>(r) = certify(pool, r.scores, options, seed);
  r.several_budgets = several_budgets(pool, r.scores, r, task, options);
  static_cast<CurateStage&>(r) = curate(pool, r.scores, r, options, seed);
  static_cast<Diagnostics&>(r) = diagnose(pool, r.scores, r.calibrated, options, seed);
  lap("calibration");
  if (progress) progress(certificate_progress(r.calibrated));
  r.labels_only = labels_only_control(pool, r.calibration, options, seed, progress);
  // Timed with the labels-only control (no lap of its own: the report's stage times keep
  // their names); it trains nothing and takes milliseconds.
  r.score_quality = diagnose_scores(pool, r, options);
  lap("labels-only");
  r.methods = clone_and_evaluate(task, pool, method_selections(pool, r), options, seed, progress);
  lap("cloning");
  return r;
}

PipelineResult run_pipeline(const PipelineOptions& options, const ProgressLine& progress) {
  check_options("run_pipeline", options);
  const auto started = Clock::now();
  PipelineResult out;
  out.options = options;
  out.task = task_named(options.task);
  if (progress)
    progress(options.dataset
                 ? cat("reading ", options.dataset->string())
                 : cat("generating ", std::to_string(options.episodes), " ", out.task.name,
                       " episodes (pool seed ", std::to_string(options.pool_seed), ")"));
  const BehaviorPool pool = load_behavior_pool(out.task, options, progress);
  out.pool_source = pool.source;
  out.pool_episodes = pool.episodes();
  out.pool_transitions = pool.transitions;
  out.pool_unsafe = pool.unsafe_count;
  out.pool_cost = pool.episodic_cost;
  out.pool_unsafe_bits = pool.unsafe;
  out.pool_mean_return =
      std::accumulate(pool.episodic_return.begin(), pool.episodic_return.end(), 0.0) /
      static_cast<double>(pool.episodes());
  out.pool_mean_cost = std::accumulate(pool.episodic_cost.begin(), pool.episodic_cost.end(), 0.0) /
                       static_cast<double>(pool.episodes());
  if (progress)
    progress(cat(std::to_string(pool.episodes()), " episodes, ", std::to_string(pool.transitions),
                 " transitions, ", std::to_string(pool.unsafe_count), " over the budget ",
                 fixed(out.task.budget, 0)));
  for (std::size_t i = 0; i < options.seeds.size(); ++i) {
    const std::string prefix =
        cat("seed ", std::to_string(options.seeds[i]), " (", std::to_string(i + 1), "/",
            std::to_string(options.seeds.size()), "): ");
    const ProgressLine seeded = [&](std::string_view line) {
      if (progress) progress(cat(prefix, line));
    };
    out.seeds.push_back(run_seed(out.task, pool, options, options.seeds[i], seeded));
    out.certified_seeds += out.seeds.back().calibrated.certificate.certified;
  }
  for (std::size_t m = 0; m < method_list.size(); ++m) {
    std::vector<double> reward, cost, size, data_cost, gap, pooled_returns, pooled_costs;
    std::vector<double> policy_data_cost, luck, cloner;
    MethodSummary summary;
    summary.name = std::string(method_list[m]);
    for (const SeedResult& s : out.seeds) {
      const MethodResult& r = s.methods[m];
      summary.refused_seeds += r.refused;
      if (r.selection_size == 0) continue;
      reward.push_back(r.evaluation.mean_return);
      cost.push_back(r.evaluation.mean_cost);
      size.push_back(static_cast<double>(r.selection_size));
      data_cost.push_back(r.data_cost);
      gap.push_back(r.cloning_gap);
      if (r.policy_data_cost) {
        policy_data_cost.push_back(*r.policy_data_cost);
        luck.push_back(*r.selection_luck());
        cloner.push_back(*r.cloner_share());
      }
      pooled_returns.insert(pooled_returns.end(), r.evaluation.returns.begin(),
                            r.evaluation.returns.end());
      pooled_costs.insert(pooled_costs.end(), r.evaluation.costs.begin(), r.evaluation.costs.end());
    }
    if (!reward.empty()) {
      const std::uint64_t bootstrap_seed = learning::stream_seed(0, m);
      summary.reward = bootstrap_mean(reward, 0.95, 10000, bootstrap_seed);
      summary.cost = bootstrap_mean(cost, 0.95, 10000, bootstrap_seed);
      summary.selection_size = bootstrap_mean(size, 0.95, 10000, bootstrap_seed);
      summary.data_cost = bootstrap_mean(data_cost, 0.95, 10000, bootstrap_seed);
      summary.cloning_gap = bootstrap_mean(gap, 0.95, 10000, bootstrap_seed);
      if (policy_data_cost.size() == reward.size()) {
        summary.policy_data_cost = bootstrap_mean(policy_data_cost, 0.95, 10000, bootstrap_seed);
        summary.selection_luck = bootstrap_mean(luck, 0.95, 10000, bootstrap_seed);
        summary.cloner_share = bootstrap_mean(cloner, 0.95, 10000, bootstrap_seed);
      }
      summary.within_budget = summary.cost.mean <= out.task.budget;
      summary.pooled =
          summarize_episodes(std::move(pooled_returns), std::move(pooled_costs), out.task.budget,
                             out.task.cost_range, options.certificate_delta);
    }
    out.summary.push_back(summary);
  }
  out.seconds = seconds_since(started);
  return out;
}

}  // namespace ltt::pipeline
