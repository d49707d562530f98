#pragma once
// A pool's true composition on a threshold grid (paper, section "Guarantee validation" and
// Proposition "certification dichotomy"): with every trajectory's unsafe bit known, the unsafe
// count U_j of each grid selection S(lambda_j) = {g >= lambda_j}, its fraction U_j / N_j, the
// null boundary U*_j = floor(alpha N_j) + 1 and whether H_j is a true null (U_j >= U*_j), and
// the purity margin alpha - min_j U_j / N_j. It reads every label, so it is an oracle: the
// guarantee check (validation.hpp, sequential_validation.hpp) and the pipeline's score-quality
// diagnostics use it, never the procedure.
//
// The selections are the grid's own (threshold_grid.hpp: ties at lambda_j kept, merged
// quantiles tested once), so U_j counts exactly the trajectories the walk's step j would
// select. Cost: one binary search over the J thresholds per trajectory, O(N log J).

#include <curation/detail/check.hpp>
#include <curation/threshold_grid.hpp>
#include <ltt/certification_rate.hpp>
#include <ltt/pvalue.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace ltt::curation {

// One step of the threshold grid with the pool's true composition.
struct ValidationStep {
  double quantile = 0.0;           // q_j
  double lambda = 0.0;             // lambda_j
  std::int64_t N = 0;              // N_j = |S(lambda_j)|
  std::int64_t U = 0;              // unsafe trajectories in S(lambda_j)
  std::int64_t null_boundary = 0;  // U*_j = floor(alpha N_j) + 1
  double unsafe_fraction = 0.0;    // U_j / N_j
  bool true_null = false;          // U_j >= U*_j: certifying this step is a violation
  std::int64_t returned = 0;       // draws whose returned threshold is this step
  bool operator==(const ValidationStep&) const = default;
};

struct TrueComposition {
  std::vector<ValidationStep> steps;  // one per grid step (returned = 0)
  std::int64_t pool_unsafe = 0;       // unsafe trajectories in the whole pool
  double purity_margin = 0.0;         // alpha - min_j U_j / N_j
};

// The grid must be threshold_grid(scores, ...) of these scores; unsafe holds 0 or 1 per
// trajectory. Each trajectory lands in the shallowest S_j that holds it (lambdas decrease), and
// U_j is a prefix sum over steps.
inline TrueComposition true_composition(const ThresholdGrid& grid, std::span<const double> scores,
                                        std::span<const std::uint8_t> unsafe, double alpha) {
  constexpr std::string_view fn = "ltt::curation::true_composition";
  detail::require_same_size(fn, "unsafe", unsafe.size(), "scores", scores.size());
  if (grid.pool_size != detail::ssize(scores.size()))
    detail::invalid(fn, "grid.pool_size", detail::show(grid.pool_size),
                    "must equal scores.size() = " + detail::show(detail::ssize(scores.size())) +
                        " (the grid of these scores)");
  ltt::detail::require_open_unit(fn, "alpha", alpha);
  TrueComposition t;
  std::vector<std::int64_t> unsafe_at_step(grid.lambda.size() + 1, 0);
  for (std::size_t i = 0; i < scores.size(); ++i) {
    const auto first = std::partition_point(grid.lambda.begin(), grid.lambda.end(),
                                            [&](double lambda) { return scores[i] < lambda; });
    unsafe_at_step[static_cast<std::size_t>(first - grid.lambda.begin())] += unsafe[i];
    t.pool_unsafe += unsafe[i];
  }
  std::vector<double> fractions;
  std::int64_t U = 0;
  for (std::size_t j = 0; j < grid.lambda.size(); ++j) {
    ValidationStep s;
    s.quantile = grid.quantile[j];
    s.lambda = grid.lambda[j];
    s.N = grid.selection_size[j];
    s.U = U += unsafe_at_step[j];
    s.null_boundary = ltt::null_boundary(s.N, alpha);
    s.unsafe_fraction = static_cast<double>(s.U) / static_cast<double>(s.N);
    s.true_null = s.U >= s.null_boundary;
    t.steps.push_back(s);
    fractions.push_back(s.unsafe_fraction);
  }
  t.purity_margin = ltt::purity_margin(alpha, fractions);
  return t;
}

}  // namespace ltt::curation
