#pragma once
// Guarantee validation at several budgets (docs/several-budgets.md, "Validation by Monte
// Carlo"; the one-budget harness is validation.hpp): on a pool whose episodic costs are all
// known, redraw the calibration sample many times and count what either procedure of
// several_budgets_selection.hpp does. Per draw d:
//   1. n of the N trajectories uniformly without replacement (draw_calibration, seeded with
//      validation_draw_seed(seed, d), as validate_guarantee draws), banded against the budgets
//      (label_banded_calibration);
//   2. the counts per budget on the threshold grid (budget_calibration_counts) and the walk:
//      one threshold for all budgets (one_threshold_walk, the walk on max_k p_jk at delta) or
//      one threshold per budget (composition_walk per budget at delta_k);
//   3. budget k is certified iff its walk rejected a step; its returned step is the deepest one
//      rejected; it is violated iff certified and that step is a true null for budget k
//      (U_jk >= floor(alpha_k N_j) + 1, the pool's costs over b_k counted by true_composition).
// Over the draws: every budget certified; the simultaneous false certification
// Pr[some budget certified and violated], which both procedures bound by delta (the
// intersection-union and union-bound arguments of the docs page); per budget its own
// certification and false-certification rates and returned-step histogram; and the closed-form
// joint rate (ltt::several_budgets_rate) against the realized "every budget certified".
//
// With one budget this is validate_guarantee's fixed-sequence run, draw for draw: the same
// samples, the same returned steps, the same counts (tests/curation/several_budgets_validation
// .test.cpp). Determinism as there: draw d depends only on (seed, d); results are reduced in
// draw order, so the output is the same whatever the thread count.

#include <curation/calibration.hpp>
#include <curation/cost_bands.hpp>
#include <curation/detail/check.hpp>
#include <curation/several_budgets_selection.hpp>
#include <curation/threshold_grid.hpp>
#include <curation/trajectory_pool.hpp>
#include <curation/true_composition.hpp>
#include <curation/validation.hpp>
#include <ltt/joint_certification_rate.hpp>
#include <ltt/several_budgets.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace ltt::curation {

struct SeveralBudgetsValidationOptions {
  std::vector<double> alphas;  // alpha_k, one per budget (tightest budget first)
  double delta = 0.1;
  ltt::BudgetProcedure procedure = ltt::BudgetProcedure::one_threshold;
  std::int64_t calibration_size = 200;  // n, labels per draw
  std::int64_t draws = 2000;
  std::uint64_t seed = 0;
  std::vector<double> quantiles{paper_grid_quantiles.begin(), paper_grid_quantiles.end()};
  double confidence = 0.95;  // two-sided Clopper-Pearson intervals at this level
  std::int64_t threads = 0;  // 0: std::thread::hardware_concurrency(), at least 1
  ValidationProgress* progress = nullptr;
};

// One budget's part of the validation.
struct BudgetValidation {
  double budget = 0.0;
  double alpha = 0.0;
  double level = 0.0;                 // delta_k its walk ran at (delta under one threshold)
  std::int64_t pool_unsafe = 0;       // trajectories of the pool with cost > budget
  double purity_margin = 0.0;         // alpha_k - min_j U_jk / N_j
  std::vector<ValidationStep> steps;  // the grid with this budget's truth and histogram
  std::int64_t returned_none = 0;
  ProportionEstimate certification;        // this budget certified / draws
  ProportionEstimate false_certification;  // this budget certified and violated / draws
  // Pr[this budget certified]: its own walk's certification_rate(N, N1, U1_k, n, alpha_k,
  // level_k) under one threshold per budget; the joint rate under one threshold, whose one walk
  // certifies every budget or none.
  double closed_form_rate = 0.0;
  bool operator==(const BudgetValidation&) const = default;
};

struct SeveralBudgetsDraw {
  std::uint64_t seed = 0;                             // validation_draw_seed(options.seed, d)
  std::vector<std::optional<std::int64_t>> returned;  // per budget; none: not certified
  bool violated = false;  // some budget certified at a step that is a true null for it
  bool operator==(const SeveralBudgetsDraw&) const = default;
};

struct SeveralBudgetsValidation {
  std::int64_t pool_size = 0;         // N
  std::int64_t calibration_size = 0;  // n
  std::int64_t draws = 0;
  std::uint64_t seed = 0;
  double delta = 0.0, confidence = 0.0;
  ltt::BudgetProcedure procedure = ltt::BudgetProcedure::one_threshold;
  std::vector<double> merged_quantiles;
  std::vector<BudgetValidation> budgets;  // tightest first

  ProportionEstimate every_certified;                   // draws certifying every budget / draws
  ProportionEstimate simultaneous_false_certification;  // draws with some violation / draws
  double closed_form_rate = 0.0;  // several_budgets_rate: Pr[every budget certified]

  std::vector<SeveralBudgetsDraw> outcomes;  // per draw, in draw order
  bool operator==(const SeveralBudgetsValidation&) const = default;
};

namespace detail::validation {

inline void check_several_budgets(std::string_view fn, std::span<const double> scores,
                                  std::span<const double> costs, std::span<const double> budgets,
                                  const SeveralBudgetsValidationOptions& options) {
  detail::require_nonempty(fn, "scores", scores.size());
  detail::require_finite(fn, "scores", scores);
  detail::require_same_size(fn, "costs", costs.size(), "scores", scores.size());
  detail::require_finite(fn, "costs", costs);
  check_budgets(fn, budgets);
  detail::require_same_size(fn, "options.alphas", options.alphas.size(), "budgets", budgets.size());
  for (std::size_t k = 0; k < options.alphas.size(); ++k)
    ltt::detail::require_open_unit(fn, detail::at("options.alphas", k), options.alphas[k]);
  ValidationOptions one;  // the checks shared with the one-budget harness
  one.delta = options.delta;
  one.confidence = options.confidence;
  one.calibration_size = options.calibration_size;
  one.draws = options.draws;
  one.threads = options.threads;
  check_options(fn, detail::ssize(scores.size()), one);
}

// The deepest rejected step of a strict walk's reached steps; none when the first failed.
inline std::optional<std::int64_t> deepest_rejected(std::span<const CertificateStep> steps) {
  std::optional<std::int64_t> last;
  for (std::size_t j = 0; j < steps.size() && steps[j].rejected; ++j) last = detail::ssize(j);
  return last;
}

}  // namespace detail::validation

// Validation on a pool of finite scores and finite episodic costs, one per trajectory, at the
// budgets b_1 < ... < b_K (ascending, the tightest first; options.alphas one per budget).
inline SeveralBudgetsValidation validate_several_budgets(
    std::span<const double> scores, std::span<const double> costs, std::span<const double> budgets,
    const SeveralBudgetsValidationOptions& options) {
  namespace dv = detail::validation;
  constexpr std::string_view fn = "ltt::curation::validate_several_budgets";
  dv::check_several_budgets(fn, scores, costs, budgets, options);
  const std::int64_t N = detail::ssize(scores.size());
  const std::size_t K = budgets.size();
  const std::int64_t n = options.calibration_size, draws = options.draws;
  ValidationOptions threads_of;
  threads_of.draws = draws;
  threads_of.threads = options.threads;
  const std::int64_t threads = dv::thread_count(threads_of);
  const ThresholdGrid grid = threshold_grid(scores, options.quantiles);

  SeveralBudgetsValidation v;
  v.pool_size = N;
  v.calibration_size = n;
  v.draws = draws;
  v.seed = options.seed;
  v.delta = options.delta;
  v.confidence = options.confidence;
  v.procedure = options.procedure;
  v.merged_quantiles = grid.merged_quantiles;
  const std::vector<double> levels =
      ltt::budget_levels(options.procedure, options.delta, detail::ssize(K));
  std::vector<std::int64_t> U1(K);
  for (std::size_t k = 0; k < K; ++k) {
    TrueComposition truth =
        true_composition(grid, scores, unsafe_bits(costs, budgets[k]), options.alphas[k]);
    BudgetValidation& b = v.budgets.emplace_back();
    b.budget = budgets[k];
    b.alpha = options.alphas[k];
    b.level = levels[k];
    b.pool_unsafe = truth.pool_unsafe;
    b.purity_margin = truth.purity_margin;
    b.steps = std::move(truth.steps);
    U1[k] = b.steps.front().U;
  }
  v.closed_form_rate = ltt::several_budgets_rate(options.procedure, N, grid.selection_size.front(),
                                                 U1, n, options.alphas, options.delta);
  for (std::size_t k = 0; k < K; ++k) {
    BudgetValidation& b = v.budgets[k];
    b.closed_form_rate =
        options.procedure == ltt::BudgetProcedure::one_threshold
            ? v.closed_form_rate  // one walk: every budget certifies when it does
            : ltt::certification_rate(N, b.steps.front().N, U1[k], n, b.alpha, b.level);
  }

  v.outcomes.resize(static_cast<std::size_t>(draws));
  dv::parallel_for(draws, threads, [&](std::int64_t d) {
    SeveralBudgetsDraw& o = v.outcomes[static_cast<std::size_t>(d)];
    o.seed = validation_draw_seed(options.seed, d);
    const BandedCalibration banded =
        label_banded_calibration(draw_calibration(N, n, o.seed), costs, budgets);
    const std::vector<CalibrationCounts> counts = budget_calibration_counts(grid, scores, banded);
    o.returned.resize(K);
    if (options.procedure == ltt::BudgetProcedure::one_threshold) {
      const OneThresholdWalk walk = one_threshold_walk(grid, counts, options.alphas, options.delta);
      for (std::size_t k = 0; k < K; ++k) o.returned[k] = dv::deepest_rejected(walk.steps[k]);
    } else {
      for (std::size_t k = 0; k < K; ++k)
        o.returned[k] =
            dv::deepest_rejected(composition_walk(grid, counts[k], options.alphas[k], levels[k]));
    }
    for (std::size_t k = 0; k < K; ++k)
      if (o.returned[k] && v.budgets[k].steps[static_cast<std::size_t>(*o.returned[k])].true_null)
        o.violated = true;
    if (options.progress) options.progress->draws_done.fetch_add(1, std::memory_order_relaxed);
  });

  // The reductions, in draw order.
  std::int64_t every = 0, violated = 0;
  std::vector<std::int64_t> certified_k(K, 0), violated_k(K, 0);
  for (const SeveralBudgetsDraw& o : v.outcomes) {
    bool all = true;
    for (std::size_t k = 0; k < K; ++k) {
      BudgetValidation& b = v.budgets[k];
      if (o.returned[k]) {
        ++certified_k[k];
        ValidationStep& s = b.steps[static_cast<std::size_t>(*o.returned[k])];
        ++s.returned;
        violated_k[k] += s.true_null;
      } else {
        ++b.returned_none;
        all = false;
      }
    }
    every += all;
    violated += o.violated;
  }
  for (std::size_t k = 0; k < K; ++k) {
    v.budgets[k].certification = dv::proportion(certified_k[k], draws, options.confidence);
    v.budgets[k].false_certification = dv::proportion(violated_k[k], draws, options.confidence);
  }
  v.every_certified = dv::proportion(every, draws, options.confidence);
  v.simultaneous_false_certification = dv::proportion(violated, draws, options.confidence);
  return v;
}

}  // namespace ltt::curation
