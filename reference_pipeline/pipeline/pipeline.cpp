#include "pipeline/pipeline.hpp"

#include "pipeline/format.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <thread>

#include <curation/calibration.hpp>
#include <curation/score_aggregation.hpp>
#include <curation/selection.hpp>
#include <curation/threshold_grid.hpp>
#include <data/dsrl.hpp>
#include <ltt/certification_rate.hpp>
#include <tasks/episode_log.hpp>

namespace ltt::pipeline {
namespace {

// The seed streams of one pipeline seed (learning::stream_seed(seed, stream)).
// Streams 1 (preference pairs) and 2 (the ensemble) are learning::safety_value_seeds'.
enum Stream : std::uint64_t {
  calibration_stream = 3,
  random_selection_stream = 4,
  evaluation_stream = 5,
  validation_stream = 6,
  labels_only_stream = 7,
  return_weighted_stream = 8,
  policy_stream = 16,  // + method index
};

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

void require(bool ok, std::string_view name, const std::string& what) {
  if (!ok) throw std::invalid_argument("ltt::pipeline: '" + std::string(name) + "' " + what);
}

void check_options(const PipelineOptions& o) {
  require(o.episodes >= 2, "episodes", "must be >= 2");
  require(!o.seeds.empty(), "seeds", "must name at least one seed");
  require(o.calibration_size >= 1, "calibration_size", "must be >= 1");
  require(o.eval_episodes >= 2, "eval_episodes", "must be >= 2");
  require(o.reward_fraction > 0 && o.reward_fraction <= 1, "reward_fraction", "must lie in (0, 1]");
  require(o.certificate_delta > 0 && o.certificate_delta < 1, "certificate_delta",
          "must lie in (0, 1)");
  require(std::isfinite(o.return_weight_kappa) && o.return_weight_kappa >= 0,
          "return_weight_kappa", "must be finite and >= 0");
  require(o.threads >= 1, "threads", "must be >= 1");
  require(o.rate_curve_max >= 1, "rate_curve_max", "must be >= 1");
  require(o.validation_draws >= 1, "validation_draws", "must be >= 1");
  require(o.backend != nullptr, "backend", "must be set");
}

// Average ranks (ties share the mean rank), for Spearman's correlation.
std::vector<double> ranks(std::span<const double> x) {
  std::vector<std::size_t> order(x.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return x[a] < x[b]; });
  std::vector<double> r(x.size());
  for (std::size_t i = 0; i < order.size();) {
    std::size_t j = i;
    while (j + 1 < order.size() && x[order[j + 1]] == x[order[i]]) ++j;
    const double mean_rank = 0.5 * static_cast<double>(i + j);
    for (std::size_t k = i; k <= j; ++k) r[order[k]] = mean_rank;
    i = j + 1;
  }
  return r;
}

double spearman(std::span<const double> a, std::span<const double> b) {
  const std::vector<double> ra = ranks(a), rb = ranks(b);
  const double n = static_cast<double>(a.size());
  const double mean = (n - 1) / 2;
  double sab = 0, saa = 0, sbb = 0;
  for (std::size_t i = 0; i < ra.size(); ++i) {
    sab += (ra[i] - mean) * (rb[i] - mean);
    saa += (ra[i] - mean) * (ra[i] - mean);
    sbb += (rb[i] - mean) * (rb[i] - mean);
  }
  return saa > 0 && sbb > 0 ? sab / std::sqrt(saa * sbb) : 0.0;
}

enum class ReturnEnd { top, bottom };

// The K trajectories of largest (top) or smallest (bottom) return, ties broken by position,
// ascending positions.
std::vector<std::int64_t> by_return(std::span<const double> returns, std::int64_t K,
                                    ReturnEnd end) {
  std::vector<std::int64_t> order(returns.size());
  std::iota(order.begin(), order.end(), std::int64_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
    const double ra = returns[static_cast<std::size_t>(a)], rb = returns[static_cast<std::size_t>(b)];
    return end == ReturnEnd::top ? ra > rb : ra < rb;
  });
  order.resize(static_cast<std::size_t>(K));
  std::sort(order.begin(), order.end());
  return order;
}

double mean_cost(std::span<const double> episodic_cost, std::span<const std::int64_t> selected) {
  double total = 0;
  for (const std::int64_t i : selected) total += episodic_cost[static_cast<std::size_t>(i)];
  return selected.empty() ? 0.0 : total / static_cast<double>(selected.size());
}

}  // namespace

LabelsOnlyFilter labels_only_filter(std::span<const float> observations, std::int64_t obs_dim,
                                    std::span<const std::int64_t> offsets,
                                    const curation::Calibration& calibration,
                                    const learning::PolicyTrainingOptions& classifier,
                                    const learning::Backend& backend) {
  const auto N = static_cast<std::int64_t>(offsets.size()) - 1;
  require(N >= 1, "offsets", "must bound at least one trajectory");
  require(calibration.index.size() == calibration.unsafe.size() && !calibration.index.empty(),
          "calibration", "must hold as many labels as positions, at least one");
  const auto d = static_cast<std::size_t>(obs_dim);
  std::vector<float> states, targets;
  for (std::size_t i = 0; i < calibration.index.size(); ++i) {
    const std::int64_t t = calibration.index[i];
    require(t >= 0 && t < N, "calibration", "holds a position outside the pool");
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
  out.scores = curation::trajectory_scores(std::vector<double>(output.begin(), output.end()), offsets);
  out.selection = curation::v_filter(out.scores, calibration);
  return out;
}

std::vector<std::string> method_names() {
  return {method_list.begin(), method_list.end()};
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
    // Smaller networks and fewer epochs, the paper's data sizes (1000 pairs, n = 200, 100
    // evaluation episodes), sized so that scripts/demo (three seeds of point-goal and one of its
    // refusal variant, ten methods cloned per seed) stays under four minutes on two cores of the
    // portable build: cloning costs about 1.5 CPU-s per epoch over the ten methods at 128x128
    // on a 200 000-row pool, the value, evaluation and checks about 20 CPU-s per seed.
    o.episodes = 1000;
    o.value.hidden = {128, 128};
    o.value.epochs = 100;
    o.policy.hidden = {128, 128};
    o.policy.epochs = 40;
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
  } else {
    throw std::invalid_argument("preset_options: 'preset' = \"" + std::string(preset) +
                                "\" is not a preset (demo, paper, tiny)");
  }
  return o;
}

BehaviorPool load_behavior_pool(const Task& task, const PipelineOptions& options) {
  check_options(options);
  std::filesystem::path path;
  if (options.dataset) {
    path = *options.dataset;
  } else {
    const tasks::TaskPool generated = task.generate(options.episodes, options.pool_seed);
    std::filesystem::create_directories(options.scratch);
    path = tasks::write_pool(options.scratch,
                             task.name + "-pool-" + std::to_string(options.pool_seed),
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
    throw std::invalid_argument(
        "load_behavior_pool: 'dataset' " + pool.source + " has observations of " +
        std::to_string(pool.observation_dim) + " and actions of " +
        std::to_string(pool.action_dim) + " dims; task " + task.name + " needs " +
        std::to_string(task.observation_dim) + " and " + std::to_string(task.action_dim));
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
    throw std::invalid_argument("load_behavior_pool: 'dataset' " + pool.source +
                                " holds fewer than 2 complete episodes");
  for (const data::Episode& e : split.episodes) {
    pool.offsets.push_back(e.start);
    pool.episodic_return.push_back(e.episodic_return);
    pool.episodic_cost.push_back(e.episodic_cost);
  }
  pool.offsets.push_back(split.episodes.back().start + split.episodes.back().length);
  pool.unsafe = curation::unsafe_bits(pool.episodic_cost, task.budget);
  pool.unsafe_count = std::count(pool.unsafe.begin(), pool.unsafe.end(), std::uint8_t{1});
  return pool;
}

SeedResult run_seed(const Task& task, const BehaviorPool& pool, const PipelineOptions& options,
                    std::uint64_t seed, const ProgressLine& progress) {
  check_options(options);
  const auto say = [&](const std::string& line) {
    if (progress) progress(line);
  };
  const learning::Backend& backend = *options.backend;
  const std::int64_t N = pool.episodes();
  const std::int64_t od = pool.observation_dim;
  SeedResult r;
  r.seed = seed;
  auto stage = Clock::now();
  const auto lap = [&](std::string name) {
    r.seconds.emplace_back(std::move(name), seconds_since(stage));
    stage = Clock::now();
  };

  // Preferences and the value (section 4.1), through the path `ltt score` takes: every pair
  // trains (no held-out share), the pairs and the ensemble seeded as safety_value_seeds says.
  const learning::SafetyValueSeeds seeds = learning::safety_value_seeds(seed);
  curation::PreferencePairOptions pair_options = options.pairs;
  pair_options.seed = seeds.pairs;
  curation::PreferencePairs drawn;
  const learning::SegmentPairs segments =
      learning::synthesized_pairs(pool.step_costs, pool.offsets, pair_options, &drawn);
  r.pairs = static_cast<std::int64_t>(drawn.pairs.size());
  r.pair_attempts = drawn.attempts;
  r.pair_ties = drawn.ties_skipped;
  if (r.pairs == 0)
    throw std::invalid_argument("pipeline: no preference pair could be drawn (every segment pair "
                                "tied in cost); the pool has no cost contrast");
  learning::SafetyValueOptions value_options;
  value_options.value = options.value;
  value_options.value.seed = seeds.value;
  value_options.value.threads = options.threads;
  value_options.held_out_fraction = 0;
  value_options.normalize_observations = options.normalize_observations;
  say("value ensemble: " + std::to_string(value_options.value.members) + " members, " +
      std::to_string(value_options.value.epochs) + " epochs on " + std::to_string(r.pairs) +
      " preference pairs (H = " + std::to_string(pair_options.segment_length) + ")");
  const learning::SafetyValue value =
      learning::train_safety_value(pool.observations, od, segments, value_options, backend);
  for (const auto& losses : value.epoch_loss)
    r.value_final_loss.push_back(losses.empty() ? 0.0 : losses.back());
  r.pair_accuracy = value.train.accuracy;
  r.scores = learning::trajectory_scores(value.ensemble, pool.observations, od, pool.offsets, {},
                                         backend);
  r.score_cost_spearman = spearman(r.scores, pool.episodic_cost);
  r.value = value.ensemble;
  lap("value");

  // Calibration and selection (sections 4.2-4.4).
  require(options.calibration_size <= N, "calibration_size",
          "= " + std::to_string(options.calibration_size) + " must not exceed the pool's " +
              std::to_string(N) + " episodes (labels are drawn without replacement)");
  const std::int64_t n = options.calibration_size;
  r.calibration = curation::label_calibration(
      curation::draw_calibration(N, n, learning::stream_seed(seed, calibration_stream)),
      pool.unsafe);
  r.calibrated = curation::calibrated_selection(r.scores, r.calibration, options.calibration);
  r.gated = curation::top_return_subselection(r.calibrated, pool.episodic_return,
                                              options.reward_fraction);
  r.v_filter = curation::v_filter(r.scores, r.calibration);
  r.return_weighted = curation::return_weighted_resample(
      r.calibrated, pool.episodic_return, options.return_weight_kappa,
      learning::stream_seed(seed, return_weighted_stream));
  r.realized_unsafe_fraction = curation::unsafe_fraction(pool.unsafe, r.calibrated.selected);
  {
    std::vector<std::int64_t> unsafe_members;
    for (const std::int64_t i : r.calibrated.selected)
      if (pool.unsafe[static_cast<std::size_t>(i)] != 0) unsafe_members.push_back(i);
    if (!unsafe_members.empty()) r.unsafe_member_cost = mean_cost(pool.episodic_cost, unsafe_members);
  }
  {
    const double alpha = options.calibration.alpha, delta = options.calibration.delta;
    const curation::ThresholdGrid grid =
        curation::threshold_grid(r.scores, options.calibration.quantiles);
    double least = 1;
    for (std::size_t j = 0; j < grid.lambda.size(); ++j) {
      GridOracle g{grid.quantile[j], grid.selection_size[j], 0};
      for (std::int64_t i = 0; i < N; ++i)
        g.unsafe += r.scores[static_cast<std::size_t>(i)] >= grid.lambda[j] &&
                    pool.unsafe[static_cast<std::size_t>(i)] != 0;
      least = std::min(least, static_cast<double>(g.unsafe) / static_cast<double>(g.N));
      r.grid.push_back(g);
    }
    r.purity_margin = alpha - least;
    const GridOracle& first = r.grid.front();
    r.first_step_rate = ltt::certification_rate(N, first.N, first.unsafe, n, alpha, delta);
    r.rate_curve = ltt::certification_rate_curve(N, first.N, first.unsafe, alpha, delta,
                                                 std::min(options.rate_curve_max, N));
    curation::ValidationOptions check;
    check.alpha = alpha;
    check.delta = delta;
    check.calibration_size = n;
    check.draws = options.validation_draws;
    check.seed = learning::stream_seed(seed, validation_stream);
    check.quantiles = options.calibration.quantiles;
    check.certificate_triple = false;
    check.threads = options.threads;
    const curation::GuaranteeValidation v = curation::validate_guarantee(r.scores, pool.unsafe, check);
    r.resampled_certification = v.certification;
    r.resampled_false_certification = v.false_certification;
  }
  lap("calibration");
  say(r.calibrated.certificate.certified
          ? "certified at quantile " + fixed(r.calibrated.certificate.quantile, 2) + ": " +
                std::to_string(r.calibrated.selected.size()) + " trajectories"
          : "refused: uncertified fallback of " + std::to_string(r.calibrated.selected.size()) +
                " trajectories");

  // The labels-only control: a classifier on the n labels, cut at the V-filter's fraction.
  {
    learning::PolicyTrainingOptions classifier = options.policy;
    classifier.hidden = options.value.hidden;
    classifier.seed = learning::stream_seed(seed, labels_only_stream);
    classifier.progress = learning::Progress::quiet;
    classifier.normalize_observations = options.normalize_observations;
    say("labels-only classifier: " + std::to_string(n) + " labeled trajectories, " +
        std::to_string(classifier.epochs) + " epochs");
    r.labels_only = labels_only_filter(pool.observations, od, pool.offsets, r.calibration,
                                       classifier, backend);
  }
  lap("labels-only");

  // The selections each method clones.
  std::vector<std::int64_t> all(static_cast<std::size_t>(N)), safe;
  std::iota(all.begin(), all.end(), std::int64_t{0});
  for (std::int64_t i = 0; i < N; ++i)
    if (pool.unsafe[static_cast<std::size_t>(i)] == 0) safe.push_back(i);
  const auto matched = static_cast<std::int64_t>(safe.size());
  std::vector<std::vector<std::int64_t>> selections(method_list.size());
  const auto select = [&](Method m) -> std::vector<std::int64_t>& {
    return selections[static_cast<std::size_t>(m)];
  };
  select(Method::bc_all) = all;
  select(Method::bc_safe) = safe;
  select(Method::v_filter) = r.v_filter.selected;
  select(Method::calibrated) = r.gated.selected;
  select(Method::calibrated_ungated) = r.calibrated.selected;
  select(Method::random) =
      curation::draw_calibration(N, matched, learning::stream_seed(seed, random_selection_stream));
  const bool resampled = r.return_weighted.outcome != curation::GateOutcome::refused;
  if (resampled) select(Method::return_weighted) = r.return_weighted.resampled;
  select(Method::labels_only) = r.labels_only.selection.selected;
  select(Method::top_return) = by_return(pool.episodic_return, matched, ReturnEnd::top);
  select(Method::bottom_return) = by_return(pool.episodic_return, matched, ReturnEnd::bottom);

  // Behavior cloning and evaluation, `threads` policies at a time. Each policy has its own seed,
  // so the results do not depend on the thread count.
  r.methods.resize(selections.size());
  const std::uint64_t evaluation_seed = learning::stream_seed(seed, evaluation_stream);
  std::atomic<std::size_t> next{0};
  std::mutex report;
  std::exception_ptr failure;
  const auto worker = [&] {
    for (;;) {
      const std::size_t m = next++;
      if (m >= selections.size()) return;
      try {
        MethodResult& out = r.methods[m];
        const std::vector<std::int64_t>& selected = selections[m];
        out.name = std::string(method_list[m]);
        out.selection_size = static_cast<std::int64_t>(selected.size());
        out.selection_unsafe_fraction = curation::unsafe_fraction(pool.unsafe, selected);
        out.data_cost = mean_cost(pool.episodic_cost, selected);
        out.refused = m == static_cast<std::size_t>(Method::return_weighted) && !resampled;
        if (m > 0 && selected == selections[m - 1]) continue;  // copied below
        if (selected.empty()) continue;
        std::vector<float> obs, act;
        const auto ad = static_cast<std::size_t>(pool.action_dim);
        for (const std::int64_t t : selected) {
          const auto lo = static_cast<std::size_t>(pool.offsets[static_cast<std::size_t>(t)]);
          const auto hi = static_cast<std::size_t>(pool.offsets[static_cast<std::size_t>(t) + 1]);
          obs.insert(obs.end(), pool.observations.begin() + static_cast<std::ptrdiff_t>(lo * od),
                     pool.observations.begin() + static_cast<std::ptrdiff_t>(hi * od));
          act.insert(act.end(), pool.actions.begin() + static_cast<std::ptrdiff_t>(lo * ad),
                     pool.actions.begin() + static_cast<std::ptrdiff_t>(hi * ad));
        }
        out.transitions = static_cast<std::int64_t>(act.size() / ad);
        learning::PolicyTrainingOptions policy_options = options.policy;
        policy_options.seed = learning::stream_seed(seed, policy_stream + m);
        policy_options.progress = learning::Progress::quiet;
        policy_options.normalize_observations = options.normalize_observations;
        const learning::BehaviorData data{obs, od, act, pool.action_dim, {}};
        const learning::PolicyTrainingResult trained =
            learning::train_policy(data, policy_options, backend);
        out.final_loss = trained.epoch_loss.empty() ? 0.0 : trained.epoch_loss.back();
        out.evaluation = evaluate_policy(task, trained.policy, options.eval_episodes,
                                         evaluation_seed, options.certificate_delta, backend);
        out.cloning_gap = out.evaluation.mean_cost - out.data_cost;
        const std::lock_guard lock(report);
        char line[160];
        std::snprintf(line, sizeof line, "%-18s %5lld trajectories -> reward %8.3f, cost %7.3f",
                      out.name.c_str(), static_cast<long long>(out.selection_size),
                      out.evaluation.mean_return, out.evaluation.mean_cost);
        say(line);
      } catch (...) {
        const std::lock_guard lock(report);
        if (!failure) failure = std::current_exception();
        return;
      }
    }
  };
  say("behavior cloning and evaluation of " + std::to_string(selections.size()) + " methods (" +
      std::to_string(options.policy.epochs) + " epochs, " + std::to_string(options.eval_episodes) +
      " episodes each)");
  {
    std::vector<std::jthread> pool_threads;
    for (std::int64_t t = 0; t < options.threads; ++t) pool_threads.emplace_back(worker);
  }
  if (failure) std::rethrow_exception(failure);
  for (std::size_t m = 1; m < selections.size(); ++m)
    if (selections[m] == selections[m - 1] && !selections[m].empty()) {
      const std::string name = r.methods[m].name;
      const bool refused = r.methods[m].refused;
      r.methods[m] = r.methods[m - 1];
      r.methods[m].name = name;
      r.methods[m].refused = refused;
      r.methods[m].same_as_previous = true;
    }
  lap("cloning");
  return r;
}

PipelineResult run_pipeline(const PipelineOptions& options, const ProgressLine& progress) {
  check_options(options);
  const auto started = Clock::now();
  PipelineResult out;
  out.options = options;
  out.task = task_named(options.task);
  if (progress)
    progress(options.dataset ? "reading " + options.dataset->string()
                             : "generating " + std::to_string(options.episodes) + " " +
                                   out.task.name + " episodes (pool seed " +
                                   std::to_string(options.pool_seed) + ")");
  const BehaviorPool pool = load_behavior_pool(out.task, options);
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
    progress(std::to_string(pool.episodes()) + " episodes, " + std::to_string(pool.transitions) +
             " transitions, " + std::to_string(pool.unsafe_count) + " over the budget " +
             fixed(out.task.budget, 0));
  for (std::size_t i = 0; i < options.seeds.size(); ++i) {
    const std::string prefix = "seed " + std::to_string(options.seeds[i]) + " (" +
                               std::to_string(i + 1) + "/" +
                               std::to_string(options.seeds.size()) + "): ";
    const ProgressLine seeded = [&](std::string_view line) {
      if (progress) progress(prefix + std::string(line));
    };
    out.seeds.push_back(run_seed(out.task, pool, options, options.seeds[i], seeded));
    out.certified_seeds += out.seeds.back().calibrated.certificate.certified;
  }
  for (std::size_t m = 0; m < method_list.size(); ++m) {
    std::vector<double> reward, cost, size, data_cost, gap, pooled_returns, pooled_costs;
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
      summary.within_budget = summary.cost.mean <= out.task.budget;
      summary.pooled = summarize_episodes(std::move(pooled_returns), std::move(pooled_costs),
                                          out.task.budget, out.task.cost_range,
                                          options.certificate_delta);
    }
    out.summary.push_back(summary);
  }
  out.seconds = seconds_since(started);
  return out;
}

}  // namespace ltt::pipeline
