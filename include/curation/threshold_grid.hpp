#pragma once
// The threshold grid (paper, section 4.3): thresholds lambda_1 > lambda_2 > ... at decreasing
// score quantiles, {0.85, 0.80, ..., 0.30} by default, and the selections
// S(lambda) = {tau : g(tau) >= lambda}.
//
// Rules, fixed before any calibration label is seen:
//  - Quantile q of N scores g_(0) <= ... <= g_(N-1) is the order statistic g_(r) with
//    r = floor(q (N - 1)) (NumPy's `method="lower"`). q is read as the decimal it prints as
//    (0.85 is 85/100, as alpha is in <ltt/pvalue.hpp>), and the product is floored exactly,
//    so 0.85 with N - 1 = 20 gives r = 17, not 16.
//  - Ties at lambda are all kept: S(lambda) = {g >= lambda} holds every trajectory scored
//    exactly lambda, so N_j = |S(lambda_j)| is N - r when scores are distinct and can exceed
//    it when g_(r) is tied with lower-ranked scores.
//  - The tested thresholds are strictly decreasing. When two grid quantiles give the same
//    lambda (ties, or a pool too small to separate them), the selection is the same set and
//    is tested once, at the shallower quantile; the deeper quantile is listed in
//    merged_quantiles and is not a step.
//
// Cost: one copy of the scores, a multi-selection that places the grid's order statistics
// (O(N log J) for J quantiles, no full sort), and one pass counting ties below each of them.

#include <curation/detail/check.hpp>
#include <ltt/pvalue.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace ltt::curation {

// The paper's grid (appendix "Hyperparameters").
inline constexpr std::array<double, 12> paper_grid_quantiles{0.85, 0.80, 0.75, 0.70, 0.65, 0.60,
                                                             0.55, 0.50, 0.45, 0.40, 0.35, 0.30};

struct ThresholdGrid {
  std::int64_t pool_size = 0;                // N
  std::vector<double> quantile;              // q_j of each step, strictly decreasing
  std::vector<double> lambda;                // lambda_j = g_(r_j), strictly decreasing
  std::vector<std::int64_t> rank;            // r_j = floor(q_j (N - 1)), ascending order rank
  std::vector<std::int64_t> selection_size;  // N_j = |{g >= lambda_j}|, increasing
  std::vector<double> merged_quantiles;      // quantiles whose lambda repeated the previous one

  std::int64_t size() const { return static_cast<std::int64_t>(lambda.size()); }
};

// r = floor(q (N - 1)) with q read as its shortest decimal, for q in [0, 1] and N >= 1.
inline std::int64_t quantile_rank(double q, std::int64_t N) {
  constexpr std::string_view fn = "ltt::curation::quantile_rank";
  detail::require_closed_unit(fn, "q", q);
  detail::require_positive(fn, "N", N);
  ltt::detail::require_count(fn, "N", N);
  if (q == 0.0) return 0;
  if (q == 1.0) return N - 1;
  return ltt::detail::floor_decimal_product(q, N - 1);
}

namespace detail {

// Places the order statistics at the ascending, distinct ranks [r_first, r_last), all inside
// [lo, hi), as std::nth_element would for each one; v[lo, hi) must hold exactly the order
// statistics lo .. hi-1 as a set. Splitting at the middle rank gives depth log2 J.
inline void multiselect(std::vector<double>& v, std::int64_t lo, std::int64_t hi,
                        const std::int64_t* r_first, const std::int64_t* r_last) {
  while (r_first != r_last) {
    const std::int64_t* mid = r_first + (r_last - r_first) / 2;
    std::nth_element(v.begin() + lo, v.begin() + *mid, v.begin() + hi);
    multiselect(v, lo, *mid, r_first, mid);
    lo = *mid + 1;
    r_first = mid + 1;
  }
}

}  // namespace detail

// Grid over finite scores (at least one) at quantiles in [0, 1], strictly decreasing.
inline ThresholdGrid threshold_grid(std::span<const double> scores,
                                    std::span<const double> quantiles = paper_grid_quantiles) {
  constexpr std::string_view fn = "ltt::curation::threshold_grid";
  detail::require_nonempty(fn, "scores", scores.size());
  ltt::detail::require_count(fn, "scores.size()", detail::ssize(scores.size()));
  detail::require_finite(fn, "scores", scores);
  detail::require_nonempty(fn, "quantiles", quantiles.size());
  for (std::size_t j = 0; j < quantiles.size(); ++j) {
    detail::require_closed_unit(fn, detail::at("quantiles", j), quantiles[j]);
    if (j > 0 && !(quantiles[j] < quantiles[j - 1]))
      detail::invalid(fn, detail::at("quantiles", j), detail::show(quantiles[j]),
                      "must be below quantiles[" + std::to_string(j - 1) + "] = " +
                          detail::show(quantiles[j - 1]) + " (the grid runs from shallow to deep)");
  }
  const std::int64_t N = detail::ssize(scores.size());

  std::vector<std::int64_t> ranks(quantiles.size());
  for (std::size_t j = 0; j < quantiles.size(); ++j) ranks[j] = quantile_rank(quantiles[j], N);
  std::vector<std::int64_t> distinct(ranks);
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());

  std::vector<double> v(scores.begin(), scores.end());
  detail::multiselect(v, 0, N, distinct.data(), distinct.data() + distinct.size());

  // |{g >= g_(r)}| = (N - r) + #{i < r : v[i] == g_(r)}. After the multi-selection, the block
  // between two consecutive selected ranks lies between their values, so ties with g_(r) below
  // r sit in the block just under r, or further down only when the rank below has the same value.
  std::vector<std::int64_t> size_at(distinct.size());
  std::int64_t block_start = 0, ties_below_previous = 0;
  for (std::size_t d = 0; d < distinct.size(); ++d) {
    const std::int64_t r = distinct[d];
    const double value = v[static_cast<std::size_t>(r)];
    std::int64_t ties = std::count(v.begin() + block_start, v.begin() + r, value);
    if (d > 0 && v[static_cast<std::size_t>(distinct[d - 1])] == value)
      ties += 1 + ties_below_previous;
    size_at[d] = N - r + ties;
    ties_below_previous = ties;
    block_start = r + 1;
  }

  ThresholdGrid grid;
  grid.pool_size = N;
  for (std::size_t j = 0; j < quantiles.size(); ++j) {
    const auto d = static_cast<std::size_t>(
        std::lower_bound(distinct.begin(), distinct.end(), ranks[j]) - distinct.begin());
    const double lambda = v[static_cast<std::size_t>(ranks[j])];
    if (!grid.lambda.empty() && lambda == grid.lambda.back()) {
      grid.merged_quantiles.push_back(quantiles[j]);
      continue;
    }
    grid.quantile.push_back(quantiles[j]);
    grid.lambda.push_back(lambda);
    grid.rank.push_back(ranks[j]);
    grid.selection_size.push_back(size_at[d]);
  }
  return grid;
}

}  // namespace ltt::curation
