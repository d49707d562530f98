#pragma once
// The calibrated selection (paper, section 4.3 and appendix A, step 4): walk the threshold
// grid from the shallowest threshold with the strict fixed-sequence procedure, testing at each
// step H_j: "S(lambda_j) holds more than alpha N_j unsafe trajectories" with the composition
// p-value p_j = F_hyp(k_j; N_j, floor(alpha N_j) + 1, m_j) at level delta; return the last
// rejected threshold. Proposition "guarantee": with probability at least 1 - delta over the
// uniform calibration draw, it is not the case that a threshold is certified and the returned
// selection's unsafe fraction exceeds alpha.
//
// When the first test fails nothing is certified, and the procedure returns the explicitly
// uncertified fallback: the top floor(L N) of the pool by score, where L is the one-sided
// Clopper-Pearson lower bound at level delta on the pool's safe mass from all n calibration
// labels, and never fewer than min(minimum_selection, N) (appendix "Hyperparameters": 50).
//
// Option drop_unsafe_calibration removes from the returned selection the calibration
// trajectories whose labels show them unsafe (the remark after the proof of Proposition
// "guarantee"). The certificate still describes S(lambda): if it holds U <= alpha N unsafe
// and k of them are removed, the rest holds (U - k) / (N - k) <= U / N <= alpha, so the drop
// can only improve the composition. It is off by default, as in the paper's results.
//
// Data flow, each arrow a function here: grid (threshold_grid.hpp) -> calibration_counts ->
// composition_walk (p-values computed lazily, only for steps the walk reaches) ->
// Certificate -> selection. calibrated_selection does all of it.

#include <curation/calibration.hpp>
#include <curation/detail/check.hpp>
#include <curation/detail/grid_walk.hpp>
#include <curation/selection.hpp>
#include <curation/threshold_grid.hpp>
#include <ltt/bounds.hpp>
#include <ltt/fixed_sequence.hpp>
#include <ltt/pvalue.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

namespace ltt::curation {

// m_j and k_j for every step of the grid.
struct CalibrationCounts {
  std::vector<std::int64_t> m;  // calibration trajectories in S(lambda_j)
  std::vector<std::int64_t> k;  // of those, labeled unsafe
};

// One grid step the walk reached: everything needed to recompute p_j and the decision by hand.
struct CertificateStep {
  double quantile = 0.0;           // q_j
  double lambda = 0.0;             // lambda_j, the order statistic at q_j
  std::int64_t N = 0;              // N_j = |S(lambda_j)|
  std::int64_t m = 0;              // m_j, calibration trajectories in S(lambda_j)
  std::int64_t k = 0;              // k_j, of those labeled unsafe
  std::int64_t null_boundary = 0;  // U*_j = floor(alpha N_j) + 1
  double p = 1.0;                  // p_j = F_hyp(k_j; N_j, U*_j, m_j)
  bool rejected = false;           // p_j <= delta: H_j rejected, S(lambda_j) certified
};

// The uncertified fallback's arithmetic.
struct FallbackRecord {
  std::int64_t labels = 0;             // n
  std::int64_t safe_labels = 0;        // n - (unsafe labels)
  double safe_mass_lower = 0.0;        // L = clopper_pearson_lower(safe_labels, n, delta)
  std::int64_t minimum_selection = 0;  // as requested
  std::int64_t count = 0;              // K = max(min(minimum_selection, N), floor(L N))
};

struct Certificate {
  double alpha = 0.0;
  double delta = 0.0;
  std::int64_t pool_size = 0;            // N
  std::int64_t calibration_size = 0;     // n
  std::int64_t calibration_unsafe = 0;   // unsafe labels among the n
  std::int64_t grid_size = 0;            // J, distinct thresholds on the grid
  std::vector<double> merged_quantiles;  // grid quantiles whose lambda repeated the one before
  std::vector<CertificateStep> steps;    // the steps the walk reached, in order

  bool certified = false;
  std::optional<std::int64_t> certified_step;  // index into steps of the returned threshold
  bool fallback = false;                       // == !certified
  std::optional<FallbackRecord> fallback_record;

  double threshold = 0.0;  // returned lambda: certified lambda_j, or the fallback's K-th score
  double quantile = 0.0;   // certified: q_j; fallback: 1 - K / N
  std::int64_t threshold_set_size = 0;  // |S(threshold)|, ties included
  bool drop_unsafe_calibration = false;
  std::int64_t dropped = 0;         // calibration trajectories removed as labeled unsafe
  std::int64_t selection_size = 0;  // threshold_set_size - dropped
};

struct CalibratedSelection {
  Certificate certificate;
  std::vector<std::int64_t> selected;  // ascending pool positions
};

struct CalibratedSelectionOptions {
  double alpha = 0.25;  // risk target on the selection's unsafe fraction
  double delta = 0.1;   // error level of the certificate
  std::vector<double> quantiles{paper_grid_quantiles.begin(), paper_grid_quantiles.end()};
  std::int64_t minimum_selection = 50;  // fallback floor, capped at the pool size
  bool drop_unsafe_calibration = false;
};

// m_j = |C intersect S(lambda_j)| and k_j = its unsafe count, for every step. The calibration
// sample is sorted by score once (O(n log n)); each S(lambda_j) then holds a prefix of it.
inline CalibrationCounts calibration_counts(const ThresholdGrid& grid,
                                            std::span<const double> scores,
                                            const Calibration& calibration) {
  constexpr std::string_view fn = "ltt::curation::calibration_counts";
  if (detail::ssize(scores.size()) != grid.pool_size)
    detail::invalid(fn, "scores.size()", detail::show(detail::ssize(scores.size())),
                    "must equal the grid's pool size " + detail::show(grid.pool_size));
  detail::check_calibration(fn, calibration, grid.pool_size);
  const std::vector<std::size_t> order = detail::by_descending_score(scores, calibration.index);
  CalibrationCounts counts;
  counts.m.resize(grid.lambda.size());
  counts.k.resize(grid.lambda.size());
  std::size_t next = 0;
  std::int64_t unsafe = 0;
  for (std::size_t j = 0; j < grid.lambda.size(); ++j) {
    while (next < order.size() &&
           scores[static_cast<std::size_t>(calibration.index[order[next]])] >= grid.lambda[j])
      unsafe += calibration.unsafe[order[next++]];
    counts.m[j] = detail::ssize(next);
    counts.k[j] = unsafe;
  }
  return counts;
}

// The strict fixed-sequence walk (ltt::fixed_sequence, lazy form) over the grid: p_j is
// computed only when step j is reached. Returns the steps reached; the last rejected one,
// if any, is the certified threshold.
inline std::vector<CertificateStep> composition_walk(const ThresholdGrid& grid,
                                                     const CalibrationCounts& counts, double alpha,
                                                     double delta) {
  constexpr std::string_view fn = "ltt::curation::composition_walk";
  ltt::detail::require_open_unit(fn, "alpha", alpha);
  ltt::detail::require_open_unit(fn, "delta", delta);
  detail::require_same_size(fn, "counts.m", counts.m.size(), "grid.lambda", grid.lambda.size());
  detail::require_same_size(fn, "counts.k", counts.k.size(), "grid.lambda", grid.lambda.size());
  return detail::grid_walk<CertificateStep>(
             grid, delta,
             [&](std::size_t s, CertificateStep& step) {
               step.m = counts.m[s];
               step.k = counts.k[s];
               step.null_boundary = ltt::null_boundary(step.N, alpha);
               step.p = ltt::composition_pvalue(step.k, step.m, step.N, alpha);
             })
      .steps;
}

// K = max(min(minimum_selection, N), floor(L N)), L the one-sided Clopper-Pearson lower bound
// at level delta on the pool's safe mass from safe_labels of labels.
inline FallbackRecord uncertified_fallback(std::int64_t pool_size, std::int64_t safe_labels,
                                           std::int64_t labels, double delta,
                                           std::int64_t minimum_selection) {
  constexpr std::string_view fn = "ltt::curation::uncertified_fallback";
  ltt::detail::require_count(fn, "pool_size", pool_size);
  ltt::detail::require_count(fn, "minimum_selection", minimum_selection);
  FallbackRecord f;
  f.labels = labels;
  f.safe_labels = safe_labels;
  f.safe_mass_lower = ltt::clopper_pearson_lower(safe_labels, labels, delta);
  f.minimum_selection = minimum_selection;
  const auto N = static_cast<double>(pool_size);
  double kept = std::floor(f.safe_mass_lower * N);
  if (std::fma(f.safe_mass_lower, N, -kept) < 0.0) kept -= 1.0;  // L N rounded up onto an integer
  f.count = std::max(std::min(minimum_selection, pool_size), static_cast<std::int64_t>(kept));
  return f;
}

// selection minus the calibration trajectories labeled unsafe; both in ascending order.
inline std::vector<std::int64_t> drop_unsafe_calibration(std::span<const std::int64_t> selection,
                                                         const Calibration& calibration) {
  std::vector<std::int64_t> known_unsafe;
  for (std::size_t i = 0; i < calibration.index.size(); ++i)
    if (calibration.unsafe[i] != 0) known_unsafe.push_back(calibration.index[i]);
  std::sort(known_unsafe.begin(), known_unsafe.end());
  std::vector<std::int64_t> kept;
  kept.reserve(selection.size());
  std::set_difference(selection.begin(), selection.end(), known_unsafe.begin(), known_unsafe.end(),
                      std::back_inserter(kept));
  return kept;
}

// The certificate around the steps a walk reached (composition_walk, or a walk whose decisions
// another procedure made, several_budgets.hpp): the last rejected step is the certified
// threshold; with none, the uncertified fallback. Then the selection at that threshold.
inline CalibratedSelection selection_from_walk(std::span<const double> scores,
                                               const ThresholdGrid& grid,
                                               const Calibration& calibration,
                                               std::vector<CertificateStep> steps,
                                               const CalibratedSelectionOptions& options) {
  const std::int64_t N = detail::ssize(scores.size());
  CalibratedSelection result;
  Certificate& c = result.certificate;
  c.alpha = options.alpha;
  c.delta = options.delta;
  c.pool_size = N;
  c.calibration_size = calibration.size();
  c.calibration_unsafe = calibration.unsafe_count();
  c.grid_size = grid.size();
  c.merged_quantiles = grid.merged_quantiles;
  c.steps = std::move(steps);
  for (std::size_t s = 0; s < c.steps.size() && c.steps[s].rejected; ++s)
    c.certified_step = detail::ssize(s);
  c.certified = c.certified_step.has_value();
  c.fallback = !c.certified;

  if (c.certified) {
    const CertificateStep& step = c.steps[static_cast<std::size_t>(*c.certified_step)];
    c.threshold = step.lambda;
    c.quantile = step.quantile;
  } else {
    c.fallback_record =
        uncertified_fallback(N, c.calibration_size - c.calibration_unsafe, c.calibration_size,
                             options.delta, options.minimum_selection);
    c.threshold = top_count_threshold(scores, c.fallback_record->count);
    c.quantile = 1.0 - static_cast<double>(c.fallback_record->count) / static_cast<double>(N);
  }
  result.selected = selection_at(scores, c.threshold);
  c.threshold_set_size = detail::ssize(result.selected.size());
  c.drop_unsafe_calibration = options.drop_unsafe_calibration;
  if (options.drop_unsafe_calibration) {
    result.selected = drop_unsafe_calibration(result.selected, calibration);
    c.dropped = c.threshold_set_size - detail::ssize(result.selected.size());
  }
  c.selection_size = detail::ssize(result.selected.size());
  return result;
}

namespace detail {

inline void check_selection_inputs(std::string_view fn, std::span<const double> scores,
                                   const Calibration& calibration,
                                   const CalibratedSelectionOptions& options) {
  ltt::detail::require_open_unit(fn, "alpha", options.alpha);
  ltt::detail::require_open_unit(fn, "delta", options.delta);
  ltt::detail::require_count(fn, "minimum_selection", options.minimum_selection);
  require_nonempty(fn, "scores", scores.size());
  require_finite(fn, "scores", scores);
  check_calibration(fn, calibration, ssize(scores.size()));
}

}  // namespace detail

// The whole procedure on finite scores and a calibration sample from the same pool.
inline CalibratedSelection calibrated_selection(std::span<const double> scores,
                                                const Calibration& calibration,
                                                const CalibratedSelectionOptions& options = {}) {
  detail::check_selection_inputs("ltt::curation::calibrated_selection", scores, calibration,
                                 options);
  const ThresholdGrid grid = threshold_grid(scores, options.quantiles);
  const CalibrationCounts counts = calibration_counts(grid, scores, calibration);
  return selection_from_walk(scores, grid, calibration,
                             composition_walk(grid, counts, options.alpha, options.delta), options);
}

}  // namespace ltt::curation
