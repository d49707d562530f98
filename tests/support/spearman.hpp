#pragma once
// Spearman's rank correlation for the tests that check a score ranks trajectories by cost:
// Pearson's correlation of the ranks, ties given their mean rank.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numeric>
#include <vector>

namespace ltt_test {

inline std::vector<double> ranks(const std::vector<double>& x) {
  std::vector<std::size_t> idx(x.size());
  std::iota(idx.begin(), idx.end(), 0);
  std::sort(idx.begin(), idx.end(), [&](auto a, auto b) { return x[a] < x[b]; });
  std::vector<double> r(x.size());
  for (std::size_t i = 0; i < idx.size();) {
    std::size_t j = i;
    while (j + 1 < idx.size() && x[idx[j + 1]] == x[idx[i]]) ++j;
    for (std::size_t k = i; k <= j; ++k) r[idx[k]] = 0.5 * static_cast<double>(i + j);
    i = j + 1;
  }
  return r;
}

inline double spearman(const std::vector<double>& x, const std::vector<double>& y) {
  const auto rx = ranks(x), ry = ranks(y);
  const double mx = std::accumulate(rx.begin(), rx.end(), 0.0) / static_cast<double>(rx.size());
  const double my = std::accumulate(ry.begin(), ry.end(), 0.0) / static_cast<double>(ry.size());
  double sxy = 0, sxx = 0, syy = 0;
  for (std::size_t i = 0; i < rx.size(); ++i) {
    sxy += (rx[i] - mx) * (ry[i] - my);
    sxx += (rx[i] - mx) * (rx[i] - mx);
    syy += (ry[i] - my) * (ry[i] - my);
  }
  return sxy / std::sqrt(sxx * syy);
}

}  // namespace ltt_test
