#pragma once
// A pool whose grid has a chosen purity, for the validation and sequential tests: N trajectories
// ranked by score (score N - i for rank i, all distinct). The first grid selection S_1 (the top
// N_1 = N - floor(0.85 (N - 1))) holds round(u1 N_1) unsafe, the rest of the pool a fraction
// u_rest, each spread evenly over its ranks (Bresenham), so the unsafe fraction of S(lambda_j)
// moves monotonically from u1 toward u_rest along the grid.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <curation/threshold_grid.hpp>
#include <ltt/pvalue.hpp>

namespace ltt_test {

struct GradedPool {
  std::vector<double> scores;
  std::vector<std::uint8_t> unsafe;
};

// `bad` unsafe among unsafe[from, from + count), evenly spread.
inline void spread(std::vector<std::uint8_t>& unsafe, std::int64_t from, std::int64_t count,
                   std::int64_t bad) {
  for (std::int64_t i = 0; i < count; ++i)
    unsafe[static_cast<std::size_t>(from + i)] = (i + 1) * bad / count > i * bad / count;
}

// N trajectories ranked by score (score N - i for rank i), none unsafe yet.
inline GradedPool ranked_pool(std::int64_t N) {
  GradedPool p;
  p.scores.resize(static_cast<std::size_t>(N));
  p.unsafe.assign(static_cast<std::size_t>(N), 0);
  for (std::int64_t i = 0; i < N; ++i)
    p.scores[static_cast<std::size_t>(i)] = static_cast<double>(N - i);
  return p;
}

inline GradedPool make_graded_pool(std::int64_t N, double u1, double u_rest) {
  const std::int64_t N1 = N - ltt::curation::quantile_rank(0.85, N);
  GradedPool p = ranked_pool(N);
  spread(p.unsafe, 0, N1, std::llround(u1 * static_cast<double>(N1)));
  spread(p.unsafe, N1, N - N1, std::llround(u_rest * static_cast<double>(N - N1)));
  return p;
}

// A pool whose purity falls with depth, as a scored pool's does (issue 24): the top
// round(top_share N) ranks hold round(u_top * that) unsafe, the rest a fraction u_rest, each
// spread evenly. S(lambda_j) at top share s > top_share is (top_share u_top + (s - top_share)
// u_rest) / s unsafe, crossing alpha at s = top_share (u_rest - u_top) / (u_rest - alpha).
inline GradedPool make_degrading_pool(std::int64_t N, double u_top, double top_share,
                                      double u_rest) {
  const std::int64_t top = std::llround(top_share * static_cast<double>(N));
  GradedPool p = ranked_pool(N);
  spread(p.unsafe, 0, top, std::llround(u_top * static_cast<double>(top)));
  spread(p.unsafe, top, N - top, std::llround(u_rest * static_cast<double>(N - top)));
  return p;
}

// The degrading family of docs/sequential.md (N = 2000, alpha = 0.25): margins at S_1 from
// +0.25 to +0.05, the unsafe fraction crossing alpha between the 3rd and the 11th grid step.
struct DegradingCase {
  double u_top, top_share, u_rest;
};
inline constexpr DegradingCase degrading_family[] = {
    // S_1 margin; the first grid step over alpha (1-based); the selections' unsafe fractions
    {0.05, 0.35, 0.50},  // +0.20; 11; 0.05 x5, 0.11 0.15 0.19 0.21 0.24 0.26 0.28 (issue 24's)
    {0.00, 0.20, 0.50},  // +0.25; 7;  0 0 0.10 0.17 0.21 0.250 (one unsafe short of U*) 0.28 ..
    {0.10, 0.15, 0.50},  // +0.15; 3;  0.10 0.20 0.26 0.30 ..
    {0.10, 0.25, 0.45},  // +0.15; 7;  0.10 x3, 0.16 0.20 0.23 0.255 ..
    {0.15, 0.30, 0.40},  // +0.10; 9;  0.15 x4, 0.19 0.21 0.23 0.250 (one short) 0.26 ..
    {0.20, 0.20, 0.35},  // +0.05; 5;  0.20 0.20 0.23 0.250 (one short) 0.26 ..
    {0.02, 0.15, 0.40},  // +0.23; 6;  0.02 0.12 0.17 0.21 0.24 0.26 ..
    {0.08, 0.40, 0.60},  // +0.17; 10; 0.08 x6, 0.14 0.18 0.22 0.25 (0.253) ..
};

// A pool that tempts the fixed tail of the sequential walk (issue 24): the first `clean` grid
// selections (S_0 .. S_{clean-1}) u_top unsafe, and from step `clean` on every S_j exactly
// U*_j + extra_j unsafe, extra_j = floor(over N_j) (over = 0: on the boundary), so H_clean is
// the first true null and every deeper one is true too; the rest of the pool half unsafe.
// Each stratum's count spread evenly. Feasible when each stratum can hold its count.
inline GradedPool make_boundary_pool(std::int64_t N, std::int64_t clean, double u_top, double over,
                                     double alpha) {
  GradedPool p = ranked_pool(N);
  const ltt::curation::ThresholdGrid grid = ltt::curation::threshold_grid(p.scores);
  const auto size = [&](std::int64_t j) {
    return grid.selection_size[static_cast<std::size_t>(j)];
  };
  const std::int64_t top = size(clean - 1);
  std::int64_t unsafe = std::llround(u_top * static_cast<double>(top));
  spread(p.unsafe, 0, top, unsafe);
  for (std::int64_t j = clean; j < grid.size(); ++j) {
    const std::int64_t want = ltt::null_boundary(size(j), alpha) +
                              static_cast<std::int64_t>(over * static_cast<double>(size(j)));
    spread(p.unsafe, size(j - 1), size(j) - size(j - 1), want - unsafe);
    unsafe = want;
  }
  const std::int64_t last = size(grid.size() - 1);
  spread(p.unsafe, last, N - last, (N - last) / 2);
  return p;
}

// The short names of the validation and sequential tests.
using Pool = GradedPool;
inline constexpr auto make_pool = make_graded_pool;

// The true unsafe count U_j of every grid selection S(lambda_j) (the oracle the tests judge by).
inline std::vector<std::int64_t> grid_unsafe_counts(const GradedPool& pool,
                                                    const ltt::curation::ThresholdGrid& grid) {
  std::vector<std::int64_t> counts;
  for (const double lambda : grid.lambda) {
    std::int64_t U = 0;
    for (std::size_t i = 0; i < pool.scores.size(); ++i)
      U += pool.scores[i] >= lambda ? pool.unsafe[i] : 0;
    counts.push_back(U);
  }
  return counts;
}

}  // namespace ltt_test
