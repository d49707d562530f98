#pragma once
// Guarantee validation of the sequential walk (<curation/sequential_selection.hpp>):
// the harness of <curation/validation.hpp> with one random label order per draw instead of one
// calibration sample, walked until its stopping rule fires. Per draw d, the label order (of
// walk.order) is seeded by validation_draw_seed(seed, d), so any run replays through
// sequential_selection(scores, unsafe, that seed, options). Reported: certification, false
// certification Pr[certified and violated] (at most delta, docs/sequential.md), the
// conditional violation, the returned-step histogram, the labels used per run (mean, median,
// 90th percentile, max) and the runs each stopping reason ended. Same determinism and threads
// as validate_guarantee.

#include <curation/detail/check.hpp>
#include <curation/sequential_selection.hpp>
#include <curation/threshold_grid.hpp>
#include <curation/true_composition.hpp>
#include <curation/validation.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

namespace ltt::curation {

// Labels bought per run by the sequential procedure: mean, median (the mean of the two middle
// runs for an even count), 90th percentile (nearest rank: the ceil(0.9 draws)-th smallest)
// and maximum.
struct LabelsUsed {
  double mean = 0.0;
  double median = 0.0;
  std::int64_t p90 = 0;
  std::int64_t max = 0;
  bool operator==(const LabelsUsed&) const = default;
};

struct SequentialValidationDraw {
  std::uint64_t seed = 0;  // validation_draw_seed(options.seed, d): the label order
  std::int64_t labels_used = 0;
  StoppingReason reason = StoppingReason::label_cap;
  std::optional<std::int64_t> returned;  // deepest certified step; none: refused
  bool violated = false;                 // certified and steps[*returned].true_null
  bool operator==(const SequentialValidationDraw&) const = default;
};

// The guarantee validation of the sequential walk (<curation/sequential_selection.hpp>): per
// draw, one label order seeded by validation_draw_seed(seed, d), walked until its stopping
// rule fires. Same quantities as GuaranteeValidation (no closed form, no triple:
// both price the fixed-n walk), plus the labels used and how often each rule stopped a run.
struct SequentialValidation {
  std::int64_t pool_size = 0;
  std::int64_t pool_unsafe = 0;
  std::int64_t label_cap = 0;  // options.calibration_size
  LabelOrder order = LabelOrder::stratified;
  std::int64_t draws = 0;
  std::uint64_t seed = 0;
  double alpha = 0.0, delta = 0.0, confidence = 0.0;

  std::vector<ValidationStep> steps;
  std::vector<double> merged_quantiles;
  std::int64_t returned_none = 0;
  double purity_margin = 0.0;

  ProportionEstimate certification;
  ProportionEstimate false_certification;
  ProportionEstimate conditional_violation;
  LabelsUsed labels_used;
  std::vector<std::int64_t> stopped_by;  // runs per StoppingReason, in enum order

  std::vector<SequentialValidationDraw> outcomes;
  bool operator==(const SequentialValidation&) const = default;
};

namespace detail::validation {

inline LabelsUsed labels_used(std::span<const SequentialValidationDraw> outcomes) {
  std::vector<std::int64_t> used;
  long double total = 0.0L;
  for (const SequentialValidationDraw& o : outcomes) {
    used.push_back(o.labels_used);
    total += static_cast<long double>(o.labels_used);
  }
  std::sort(used.begin(), used.end());
  const std::size_t n = used.size();
  LabelsUsed l;
  l.mean = static_cast<double>(total / static_cast<long double>(n));
  l.median = 0.5 * static_cast<double>(used[(n - 1) / 2] + used[n / 2]);
  l.p90 = used[(9 * n + 9) / 10 - 1];
  l.max = used.back();
  return l;
}

}  // namespace detail::validation

// Validation of the sequential walk on a pool with known unsafe bits. options.calibration_size
// is the label cap; alpha, delta, quantiles, draws, seed, confidence and threads are read from
// `options` (procedure, certificate_triple and triple_options do not apply), and the stopping
// rule, prior and cap test from `walk` (its alpha, delta, quantiles and label_cap are replaced).
inline SequentialValidation validate_sequential(std::span<const double> scores,
                                                std::span<const std::uint8_t> unsafe,
                                                const ValidationOptions& options,
                                                SequentialSelectionOptions walk = {}) {
  namespace dv = detail::validation;
  constexpr std::string_view fn = "ltt::curation::validate_sequential";
  dv::check_pool(fn, scores, unsafe);
  const std::int64_t N = detail::ssize(scores.size());
  dv::check_options(fn, N, options);
  walk.alpha = options.alpha;
  walk.delta = options.delta;
  walk.quantiles = options.quantiles;
  walk.label_cap = options.calibration_size;
  const ThresholdGrid grid = threshold_grid(scores, options.quantiles);

  SequentialValidation v;
  v.pool_size = N;
  v.label_cap = options.calibration_size;
  v.order = walk.order;
  v.draws = options.draws;
  v.seed = options.seed;
  v.alpha = options.alpha;
  v.delta = options.delta;
  v.confidence = options.confidence;
  v.merged_quantiles = grid.merged_quantiles;
  TrueComposition truth = true_composition(grid, scores, unsafe, options.alpha);
  v.steps = std::move(truth.steps);
  v.pool_unsafe = truth.pool_unsafe;
  v.purity_margin = truth.purity_margin;

  v.outcomes.resize(static_cast<std::size_t>(options.draws));
  dv::parallel_for(options.draws, dv::thread_count(options), [&](std::int64_t d) {
    SequentialValidationDraw& o = v.outcomes[static_cast<std::size_t>(d)];
    o.seed = validation_draw_seed(options.seed, d);
    const SequentialCertificate c = sequential_selection(scores, unsafe, o.seed, walk);
    o.labels_used = c.labels_used;
    o.reason = c.reason;
    o.returned = c.certified_step;
    o.violated = o.returned && v.steps[static_cast<std::size_t>(*o.returned)].true_null;
    if (options.progress) options.progress->draws_done.fetch_add(1, std::memory_order_relaxed);
  });

  dv::count_outcomes(v, options.confidence);
  v.stopped_by.assign(std::size(stopping_reasons), 0);
  for (const SequentialValidationDraw& o : v.outcomes)
    ++v.stopped_by[static_cast<std::size_t>(o.reason)];
  v.labels_used = dv::labels_used(v.outcomes);
  return v;
}

}  // namespace ltt::curation
