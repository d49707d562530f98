#pragma once
// The calibrated selection at several budgets b_1 < ... < b_K from one cost-banded calibration
// sample (cost_bands.hpp), by either procedure of <ltt/several_budgets.hpp>:
//
//  - one threshold for all budgets: the strict fixed-sequence walk on p_j = max_k p_jk at the
//    full delta. Every budget's entry carries its own p-values and counts; the decisions are
//    the joint walk's, so every budget certifies the same step. With probability >= 1 - delta
//    it is not the case that a threshold is certified and some budget is violated at it.
//  - one threshold per budget: budget k's entry is calibrated_selection at level
//    delta_k = budget_levels(...)[k] on its one-bit labels (band > k). With probability
//    >= 1 - delta no budget is certified while violated at its own threshold.
//
// Where a budget is not certified its entry is that budget's uncertified fallback (the
// Clopper-Pearson floor on its own safe mass, at its level): the fallbacks are nested, the
// tightest budget's the smallest, and it is the one selection that suits every budget.
//
// With one budget both procedures are calibrated_selection itself: levels {delta}, the same
// p-values, the same decisions, the same Certificate.
//
// Data flow: grid -> budget_calibration_counts (per budget) -> one_threshold_walk or a
// composition_walk per budget -> selection_from_walk per budget.

#include <curation/calibrated_selection.hpp>
#include <curation/cost_bands.hpp>
#include <curation/detail/check.hpp>
#include <curation/threshold_grid.hpp>
#include <ltt/fixed_sequence.hpp>
#include <ltt/pvalue.hpp>
#include <ltt/several_budgets.hpp>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ltt::curation {

struct SeveralBudgetsOptions {
  std::vector<double> alphas;  // alpha_k, one per budget (tightest budget first)
  double delta = 0.1;
  ltt::BudgetProcedure procedure = ltt::BudgetProcedure::one_threshold;
  std::vector<double> quantiles{paper_grid_quantiles.begin(), paper_grid_quantiles.end()};
  std::int64_t minimum_selection = 50;
  bool drop_unsafe_calibration = false;
};

struct SeveralBudgetsSelection {
  ltt::BudgetProcedure procedure = ltt::BudgetProcedure::one_threshold;
  double delta = 0.0;
  std::vector<double> levels;                 // delta_k each budget's walk ran at
  std::vector<double> joint_pvalues;          // one threshold: max_k p_jk over the steps reached
  std::vector<CalibratedSelection> budgets;   // one entry per budget, tightest first
};

// One CalibrationCounts per budget: m_j is shared, k_jk counts the draws over budget k.
inline std::vector<CalibrationCounts> budget_calibration_counts(const ThresholdGrid& grid,
                                                                std::span<const double> scores,
                                                                const BandedCalibration& banded) {
  std::vector<CalibrationCounts> counts;
  for (std::int64_t k = 0; k < banded.budgets; ++k)
    counts.push_back(calibration_counts(grid, scores, calibration_for_budget(banded, k)));
  return counts;
}

struct OneThresholdWalk {
  std::vector<std::vector<CertificateStep>> steps;  // per budget, the steps reached
  std::vector<double> joint_pvalues;                // p_j = max_k p_jk for those steps
};

// The fixed-sequence walk on p_j = max_k p_jk at level delta (ltt::fixed_sequence, lazy form):
// step j is computed for every budget only when the walk reaches it, and every budget's step
// carries the joint decision.
inline OneThresholdWalk one_threshold_walk(const ThresholdGrid& grid,
                                           std::span<const CalibrationCounts> counts,
                                           std::span<const double> alphas, double delta) {
  constexpr std::string_view fn = "ltt::curation::one_threshold_walk";
  ltt::detail::require_open_unit(fn, "delta", delta);
  detail::require_nonempty(fn, "counts", counts.size());
  detail::require_same_size(fn, "alphas", alphas.size(), "counts", counts.size());
  for (std::size_t k = 0; k < alphas.size(); ++k) {
    ltt::detail::require_open_unit(fn, detail::at("alphas", k), alphas[k]);
    detail::require_same_size(fn, detail::at("counts", k) + ".m", counts[k].m.size(),
                              "grid.lambda", grid.lambda.size());
    detail::require_same_size(fn, detail::at("counts", k) + ".k", counts[k].k.size(),
                              "grid.lambda", grid.lambda.size());
  }
  OneThresholdWalk w;
  w.steps.resize(counts.size());
  std::vector<double> p(counts.size());
  const ltt::FixedSequenceResult walk = ltt::fixed_sequence(
      grid.size(),
      [&](std::int64_t j) {
        const auto s = static_cast<std::size_t>(j);
        for (std::size_t k = 0; k < counts.size(); ++k) {
          CertificateStep step;
          step.quantile = grid.quantile[s];
          step.lambda = grid.lambda[s];
          step.N = grid.selection_size[s];
          step.m = counts[k].m[s];
          step.k = counts[k].k[s];
          step.null_boundary = ltt::null_boundary(step.N, alphas[k]);
          step.p = ltt::composition_pvalue(step.k, step.m, step.N, alphas[k]);
          p[k] = step.p;
          w.steps[k].push_back(step);
        }
        w.joint_pvalues.push_back(ltt::intersection_union_pvalue(p));
        return w.joint_pvalues.back();
      },
      delta);
  if (walk.last_rejected)
    for (auto& steps : w.steps)
      for (std::int64_t j = 0; j <= *walk.last_rejected; ++j)
        steps[static_cast<std::size_t>(j)].rejected = true;
  return w;
}

// The whole procedure on finite scores and a cost-banded calibration sample from the pool.
inline SeveralBudgetsSelection several_budgets_selection(std::span<const double> scores,
                                                         const BandedCalibration& banded,
                                                         const SeveralBudgetsOptions& options) {
  constexpr std::string_view fn = "ltt::curation::several_budgets_selection";
  if (banded.budgets < 1 || banded.budgets > max_budgets)
    detail::invalid(fn, "banded.budgets", detail::show(banded.budgets),
                    "must lie in [1, " + detail::show(max_budgets) + "]");
  detail::require_same_size(fn, "banded.band", banded.band.size(), "banded.index",
                            banded.index.size());
  for (std::size_t i = 0; i < banded.band.size(); ++i)
    if (banded.band[i] > banded.budgets)
      detail::invalid(fn, detail::at("banded.band", i), detail::show(std::int64_t{banded.band[i]}),
                      "must lie in [0, budgets = " + detail::show(banded.budgets) + "]");
  if (detail::ssize(options.alphas.size()) != banded.budgets)
    detail::invalid(fn, "alphas.size()", detail::show(detail::ssize(options.alphas.size())),
                    "must equal the number of budgets " + detail::show(banded.budgets) +
                        " (one alpha per budget)");
  const std::size_t K = options.alphas.size();
  std::vector<Calibration> calibrations;
  std::vector<CalibratedSelectionOptions> per_budget(K);
  SeveralBudgetsSelection result;
  result.procedure = options.procedure;
  result.delta = options.delta;
  ltt::detail::require_open_unit(fn, "delta", options.delta);
  result.levels = ltt::budget_levels(options.procedure, options.delta, banded.budgets);
  for (std::size_t k = 0; k < K; ++k) {
    calibrations.push_back(calibration_for_budget(banded, detail::ssize(k)));
    per_budget[k].alpha = options.alphas[k];
    per_budget[k].delta = result.levels[k];
    per_budget[k].quantiles = options.quantiles;
    per_budget[k].minimum_selection = options.minimum_selection;
    per_budget[k].drop_unsafe_calibration = options.drop_unsafe_calibration;
    detail::check_selection_inputs(fn, scores, calibrations[k], per_budget[k]);
  }

  const ThresholdGrid grid = threshold_grid(scores, options.quantiles);
  const std::vector<CalibrationCounts> counts = budget_calibration_counts(grid, scores, banded);

  if (options.procedure == ltt::BudgetProcedure::one_threshold) {
    OneThresholdWalk walk = one_threshold_walk(grid, counts, options.alphas, options.delta);
    result.joint_pvalues = std::move(walk.joint_pvalues);
    for (std::size_t k = 0; k < K; ++k)
      result.budgets.push_back(selection_from_walk(scores, grid, calibrations[k],
                                                   std::move(walk.steps[k]), per_budget[k]));
  } else {
    for (std::size_t k = 0; k < K; ++k)
      result.budgets.push_back(selection_from_walk(
          scores, grid, calibrations[k],
          composition_walk(grid, counts[k], per_budget[k].alpha, per_budget[k].delta),
          per_budget[k]));
  }
  return result;
}

}  // namespace ltt::curation
