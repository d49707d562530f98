#pragma once
// Spearman's rank correlation, the paper's measure of how a score orders trajectories against
// their cost or return (table "scorecorr"): Pearson's correlation of the two samples' ranks,
// tied values given the mean of the ranks they span (average ranks), so that a score with
// ties is neither rewarded nor penalized for the order a sort happens to leave them in.
//
// Average ranks of 0 .. n-1 always sum to n(n-1)/2, so both rank vectors have mean (n-1)/2
// exactly and the centring needs no summation. A constant sample has no order to correlate:
// the correlation is then 0 (not NaN), the value a report can print and compare.

#include <curation/detail/check.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>
#include <span>
#include <string_view>
#include <vector>

namespace ltt::curation {

// The average rank of each value, from 0: tied values share the mean of the positions they
// span in ascending order.
inline std::vector<double> average_ranks(std::span<const double> x) {
  detail::require_finite("ltt::curation::average_ranks", "x", x);
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

// Spearman's rho of two samples of the same size (finite values); 0 when either is constant
// or has fewer than two values.
inline double spearman(std::span<const double> a, std::span<const double> b) {
  constexpr std::string_view fn = "ltt::curation::spearman";
  detail::require_same_size(fn, "b", b.size(), "a", a.size());
  detail::require_finite(fn, "a", a);
  detail::require_finite(fn, "b", b);
  const std::vector<double> ra = average_ranks(a), rb = average_ranks(b);
  const double mean = (static_cast<double>(a.size()) - 1) / 2;
  double sab = 0, saa = 0, sbb = 0;
  for (std::size_t i = 0; i < ra.size(); ++i) {
    sab += (ra[i] - mean) * (rb[i] - mean);
    saa += (ra[i] - mean) * (ra[i] - mean);
    sbb += (rb[i] - mean) * (rb[i] - mean);
  }
  return saa > 0 && sbb > 0 ? sab / std::sqrt(saa * sbb) : 0.0;
}

}  // namespace ltt::curation
