// The stages of one pipeline seed (pipeline.hpp): score -> certify -> curate -> diagnose ->
// the labels-only control -> score_quality -> clone_and_evaluate, and the table of methods
// whose selections the last stage clones.
#include "pipeline/pipeline.hpp"

#include "pipeline/check.hpp"
#include "pipeline/format.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <mutex>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <thread>

#include <curation/calibration.hpp>
#include <curation/rank_correlation.hpp>
#include <curation/score_aggregation.hpp>
#include <curation/selection.hpp>
#include <data/text.hpp>
#include <ltt/certification_rate.hpp>

namespace ltt::pipeline {
namespace {

using data::cat;
using detail::invalid;
using detail::show;

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

void say(const ProgressLine& progress, const std::string& line) {
  if (progress) progress(line);
}

double mean_cost(std::span<const double> episodic_cost, std::span<const std::int64_t> selected) {
  double total = 0;
  for (const std::int64_t i : selected) total += episodic_cost[static_cast<std::size_t>(i)];
  return selected.empty() ? 0.0 : total / static_cast<double>(selected.size());
}

}  // namespace

ScoreStage score(const BehaviorPool& pool, const PipelineOptions& options, std::uint64_t seed,
                 const ProgressLine& progress) {
  // Through the path `ltt score` takes: every pair trains (no held-out share), the pairs and
  // the ensemble seeded as safety_value_seeds says.
  const learning::SafetyValueSeeds seeds = learning::safety_value_seeds(seed);
  curation::PreferencePairOptions pair_options = options.pairs;
  pair_options.seed = seeds.pairs;
  curation::PreferencePairs drawn;
  const learning::SegmentPairs segments =
      learning::synthesized_pairs(pool.step_costs, pool.offsets, pair_options, &drawn);
  ScoreStage r;
  r.pairs = static_cast<std::int64_t>(drawn.pairs.size());
  r.pair_attempts = drawn.attempts;
  r.pair_ties = drawn.ties_skipped;
  if (r.pairs == 0)
    invalid("score", "pool",
            "has no cost contrast: no preference pair could be drawn (every segment pair tied in "
            "cost)");
  learning::SafetyValueOptions value_options;
  value_options.value = options.value;
  value_options.value.seed = seeds.value;
  value_options.value.threads = options.threads;
  value_options.held_out_fraction = 0;
  value_options.normalize_observations = options.normalize_observations;
  say(progress,
      cat("value ensemble: ", std::to_string(value_options.value.members), " members, ",
          std::to_string(value_options.value.epochs), " epochs on ", std::to_string(r.pairs),
          " preference pairs (H = ", std::to_string(pair_options.segment_length), ")"));
  const learning::Backend& backend = *options.backend;
  const std::int64_t od = pool.observation_dim;
  learning::SafetyValue value =
      learning::train_safety_value(pool.observations, od, segments, value_options, backend);
  for (const auto& losses : value.epoch_loss)
    r.value_final_loss.push_back(losses.empty() ? 0.0 : losses.back());
  r.pair_accuracy = value.train.accuracy;
  r.scores =
      learning::trajectory_scores(value.ensemble, pool.observations, od, pool.offsets, {}, backend);
  r.score_cost_spearman = curation::spearman(r.scores, pool.episodic_cost);
  r.value = std::move(value.ensemble);
  r.drawn_pairs = std::move(drawn);
  return r;
}

CertifyStage certify(const BehaviorPool& pool, std::span<const double> scores,
                     const PipelineOptions& options, std::uint64_t seed) {
  const std::int64_t N = pool.episodes();
  if (options.calibration_size > N)
    invalid("certify", "calibration_size", show(options.calibration_size),
            cat("must not exceed the pool's ", show(N),
                " episodes (labels are drawn without replacement)"));
  CertifyStage c;
  c.calibration = curation::label_calibration(
      curation::draw_calibration(N, options.calibration_size,
                                 learning::stream_seed(seed, calibration_stream)),
      pool.unsafe);
  c.calibrated = curation::calibrated_selection(scores, c.calibration, options.calibration);
  return c;
}

CurateStage curate(const BehaviorPool& pool, std::span<const double> scores,
                   const CertifyStage& certified, const PipelineOptions& options,
                   std::uint64_t seed) {
  CurateStage c;
  c.gated = curation::top_return_subselection(certified.calibrated, pool.episodic_return,
                                              options.reward_fraction);
  c.v_filter = curation::v_filter(scores, certified.calibration);
  c.return_weighted = curation::return_weighted_resample(
      certified.calibrated, pool.episodic_return, options.return_weight_kappa,
      learning::stream_seed(seed, return_weighted_stream));
  return c;
}

Diagnostics diagnose(const BehaviorPool& pool, std::span<const double> scores,
                     const curation::CalibratedSelection& calibrated,
                     const PipelineOptions& options, std::uint64_t seed) {
  Diagnostics d;
  d.realized_unsafe_fraction = curation::unsafe_fraction(pool.unsafe, calibrated.selected);
  std::vector<std::int64_t> unsafe_members;
  for (const std::int64_t i : calibrated.selected)
    if (pool.unsafe[static_cast<std::size_t>(i)] != 0) unsafe_members.push_back(i);
  if (!unsafe_members.empty()) d.unsafe_member_cost = mean_cost(pool.episodic_cost, unsafe_members);

  curation::ValidationOptions check;
  check.alpha = options.calibration.alpha;
  check.delta = options.calibration.delta;
  check.calibration_size = options.calibration_size;
  check.draws = options.validation_draws;
  check.seed = learning::stream_seed(seed, validation_stream);
  check.quantiles = options.calibration.quantiles;
  check.certificate_triple = false;
  check.threads = options.threads;
  const curation::GuaranteeValidation v = curation::validate_guarantee(scores, pool.unsafe, check);
  d.grid = v.steps;
  d.purity_margin = v.purity_margin;
  d.first_step_rate = v.closed_form_rate.value();  // the strict walk (fixed sequence): always set
  const curation::ValidationStep& first = v.steps.front();
  const std::int64_t N = pool.episodes();
  d.rate_curve = ltt::certification_rate_curve(N, first.N, first.U, check.alpha, check.delta,
                                               std::min(options.rate_curve_max, N));
  d.resampled_certification = v.certification;
  d.resampled_false_certification = v.false_certification;
  return d;
}

// The labels-only control: a classifier on the n labels, cut at the V-filter's fraction.
LabelsOnlyFilter labels_only_control(const BehaviorPool& pool,
                                     const curation::Calibration& calibration,
                                     const PipelineOptions& options, std::uint64_t seed,
                                     const ProgressLine& progress) {
  learning::PolicyTrainingOptions classifier = options.policy;
  classifier.hidden = options.value.hidden;
  classifier.seed = learning::stream_seed(seed, labels_only_stream);
  classifier.progress = learning::Progress::quiet;
  classifier.normalize_observations = options.normalize_observations;
  say(progress, cat("labels-only classifier: ", std::to_string(options.calibration_size),
                    " labeled trajectories, ", std::to_string(classifier.epochs), " epochs"));
  return labels_only_filter(pool.observations, pool.observation_dim, pool.offsets, calibration,
                            classifier, *options.backend);
}

ScoreQuality diagnose_scores(const BehaviorPool& pool, const SeedResult& seed,
                             const PipelineOptions& options) {
  ScoreQualityInputs in;
  in.preference_scores = seed.scores;
  in.labels_only_scores = seed.labels_only.scores;
  in.episodic_cost = pool.episodic_cost;
  in.episodic_return = pool.episodic_return;
  in.unsafe = pool.unsafe;
  in.pairs = &seed.drawn_pairs;
  in.v_filter_fraction = seed.v_filter.safe_fraction;
  in.v_filter_count = seed.v_filter.count;
  in.certified = seed.calibrated.certificate.certified;
  ScoreQualityOptions o;
  o.alpha = options.calibration.alpha;
  o.delta = options.calibration.delta;
  o.quantiles = options.calibration.quantiles;
  o.calibration_size = options.calibration_size;
  return score_quality(in, o);
}

namespace {

enum class ReturnEnd { top, bottom };

// The K trajectories of largest (top) or smallest (bottom) return, ties broken by position,
// ascending positions.
std::vector<std::int64_t> by_return(std::span<const double> returns, std::int64_t K,
                                    ReturnEnd end) {
  std::vector<std::int64_t> order(returns.size());
  std::iota(order.begin(), order.end(), std::int64_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) {
    const double ra = returns[static_cast<std::size_t>(a)],
                 rb = returns[static_cast<std::size_t>(b)];
    return end == ReturnEnd::top ? ra > rb : ra < rb;
  });
  order.resize(static_cast<std::size_t>(K));
  std::sort(order.begin(), order.end());
  return order;
}

std::vector<std::int64_t> safe_trajectories(const BehaviorPool& pool) {
  std::vector<std::int64_t> safe;
  for (std::int64_t i = 0; i < pool.episodes(); ++i)
    if (pool.unsafe[static_cast<std::size_t>(i)] == 0) safe.push_back(i);
  return safe;
}

// Random, Return and Bottom-return select as many trajectories as BC-Safe.
std::int64_t matched_size(const BehaviorPool& pool) {
  return static_cast<std::int64_t>(safe_trajectories(pool).size());
}

// What a method clones on one seed; none: refused on this seed.
using Selected = std::optional<std::vector<std::int64_t>>;
using Selector = Selected (*)(const BehaviorPool&, const SeedResult&);

struct MethodRow {
  Method method;  // its position in the table
  std::string_view name;
  Selector select;
};

// The methods in table order (pipeline.hpp says what each one is).
constexpr MethodRow method_table[] = {
    {Method::bc_all, "BC-All",
     [](const BehaviorPool& pool, const SeedResult&) -> Selected {
       std::vector<std::int64_t> all(static_cast<std::size_t>(pool.episodes()));
       std::iota(all.begin(), all.end(), std::int64_t{0});
       return all;
     }},
    {Method::bc_safe, "BC-Safe",
     [](const BehaviorPool& pool, const SeedResult&) -> Selected {
       return safe_trajectories(pool);
     }},
    {Method::v_filter, "V-filter",
     [](const BehaviorPool&, const SeedResult& s) -> Selected { return s.v_filter.selected; }},
    {Method::calibrated, "Calibrated",
     [](const BehaviorPool&, const SeedResult& s) -> Selected { return s.gated.selected; }},
    {Method::calibrated_ungated, "Calibrated-ungated",
     [](const BehaviorPool&, const SeedResult& s) -> Selected { return s.calibrated.selected; }},
    {Method::return_weighted, "Return-weighted",
     [](const BehaviorPool&, const SeedResult& s) -> Selected {
       if (s.return_weighted.outcome == curation::GateOutcome::refused) return std::nullopt;
       return s.return_weighted.resampled;
     }},
    {Method::labels_only, "Labels-only",
     [](const BehaviorPool&, const SeedResult& s) -> Selected {
       return s.labels_only.selection.selected;
     }},
    {Method::random, "Random",
     [](const BehaviorPool& pool, const SeedResult& s) -> Selected {
       return curation::draw_calibration(pool.episodes(), matched_size(pool),
                                         learning::stream_seed(s.seed, random_selection_stream));
     }},
    {Method::top_return, "Return",
     [](const BehaviorPool& pool, const SeedResult&) -> Selected {
       return by_return(pool.episodic_return, matched_size(pool), ReturnEnd::top);
     }},
    {Method::bottom_return, "Bottom-return",
     [](const BehaviorPool& pool, const SeedResult&) -> Selected {
       return by_return(pool.episodic_return, matched_size(pool), ReturnEnd::bottom);
     }},
};

constexpr std::array<std::string_view, method_count> table_names() {
  std::array<std::string_view, method_count> names{};
  for (std::size_t m = 0; m < method_count; ++m) names[m] = method_table[m].name;
  return names;
}

constexpr bool rows_in_enum_order() {
  for (std::size_t m = 0; m < method_count; ++m)
    if (method_table[m].method != static_cast<Method>(m)) return false;
  return true;
}
static_assert(std::size(method_table) == method_count && rows_in_enum_order(),
              "method_table: one row per Method, in the enum's order");

// The data's side of a method: what it selects, before any cloning.
MethodResult describe(const BehaviorPool& pool, std::string_view name,
                      const MethodSelection& selection) {
  MethodResult out;
  out.name = std::string(name);
  out.selection_size = static_cast<std::int64_t>(selection.selected.size());
  out.selection_unsafe_fraction = curation::unsafe_fraction(pool.unsafe, selection.selected);
  out.data_cost = mean_cost(pool.episodic_cost, selection.selected);
  if (pool.has_behavior_cost() && !selection.selected.empty()) {
    double sum = 0;
    for (const std::int64_t t : selection.selected)
      sum += pool.checkpoint_cost.at(static_cast<std::size_t>(
          pool.episode_checkpoint.at(static_cast<std::size_t>(t))));
    out.policy_data_cost = sum / static_cast<double>(selection.selected.size());
  }
  out.refused = selection.refused;
  return out;
}

// Behavior cloning on the selected trajectories' rows, then evaluation of the clone.
void clone_and_evaluate_one(MethodResult& out, const Task& task, const BehaviorPool& pool,
                            std::span<const std::int64_t> selected, std::size_t m,
                            const PipelineOptions& options, std::uint64_t seed) {
  const auto od = static_cast<std::size_t>(pool.observation_dim);
  const auto ad = static_cast<std::size_t>(pool.action_dim);
  std::vector<float> obs, act;
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
  const learning::BehaviorData data{obs, pool.observation_dim, act, pool.action_dim, {}};
  const learning::PolicyTrainingResult trained =
      learning::train_policy(data, policy_options, *options.backend);
  out.final_loss = trained.epoch_loss.empty() ? 0.0 : trained.epoch_loss.back();
  out.evaluation = evaluate_policy(task, trained.policy, options.eval_episodes,
                                   learning::stream_seed(seed, evaluation_stream),
                                   options.certificate_delta, *options.backend);
  out.cloning_gap = out.evaluation.mean_cost - out.data_cost;
}

bool same_as_previous(std::span<const MethodSelection> selections, std::size_t m) {
  return m > 0 && selections[m].selected == selections[m - 1].selected;
}

}  // namespace

constexpr std::array<std::string_view, method_count> method_list = table_names();

std::vector<std::string> method_names() { return {method_list.begin(), method_list.end()}; }

std::vector<MethodSelection> method_selections(const BehaviorPool& pool, const SeedResult& seed) {
  std::vector<MethodSelection> out;
  for (const MethodRow& row : method_table) {
    Selected selected = row.select(pool, seed);
    out.push_back({selected ? std::move(*selected) : std::vector<std::int64_t>{}, !selected});
  }
  return out;
}

std::vector<MethodResult> clone_and_evaluate(const Task& task, const BehaviorPool& pool,
                                             std::span<const MethodSelection> selections,
                                             const PipelineOptions& options, std::uint64_t seed,
                                             const ProgressLine& progress) {
  if (selections.size() != method_count)
    invalid("clone_and_evaluate", "selections",
            cat("must hold one selection per method (", show(method_count), "); it holds ",
                show(selections.size())));
  std::vector<MethodResult> out;
  for (std::size_t m = 0; m < selections.size(); ++m)
    out.push_back(describe(pool, method_list[m], selections[m]));
  // `threads` policies at a time. Each policy has its own seed, so the results do not depend on
  // the thread count.
  std::atomic<std::size_t> next{0};
  std::mutex report;
  std::exception_ptr failure;
  const auto worker = [&] {
    for (;;) {
      const std::size_t m = next++;
      if (m >= selections.size()) return;
      if (same_as_previous(selections, m) || selections[m].selected.empty()) continue;
      try {
        clone_and_evaluate_one(out[m], task, pool, selections[m].selected, m, options, seed);
        const std::lock_guard lock(report);
        char line[160];
        std::snprintf(line, sizeof line, "%-18s %5lld trajectories -> reward %8.3f, cost %7.3f",
                      out[m].name.c_str(), static_cast<long long>(out[m].selection_size),
                      out[m].evaluation.mean_return, out[m].evaluation.mean_cost);
        say(progress, line);
      } catch (...) {
        const std::lock_guard lock(report);
        if (!failure) failure = std::current_exception();
        return;
      }
    }
  };
  say(progress, cat("behavior cloning and evaluation of ", std::to_string(selections.size()),
                    " methods (", std::to_string(options.policy.epochs), " epochs, ",
                    std::to_string(options.eval_episodes), " episodes each)"));
  {
    std::vector<std::jthread> threads;
    for (std::int64_t t = 0; t < options.threads; ++t) threads.emplace_back(worker);
  }
  if (failure) std::rethrow_exception(failure);
  for (std::size_t m = 1; m < selections.size(); ++m)
    if (same_as_previous(selections, m) && !selections[m].selected.empty()) {
      const MethodResult own = out[m];
      out[m] = out[m - 1];
      out[m].name = own.name;
      out[m].refused = own.refused;
      out[m].same_as_previous = true;
    }
  return out;
}

}  // namespace ltt::pipeline
