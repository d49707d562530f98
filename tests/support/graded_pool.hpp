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

inline GradedPool make_graded_pool(std::int64_t N, double u1, double u_rest) {
  const std::int64_t N1 = N - ltt::curation::quantile_rank(0.85, N);
  GradedPool p;
  p.scores.resize(static_cast<std::size_t>(N));
  p.unsafe.assign(static_cast<std::size_t>(N), 0);
  for (std::int64_t i = 0; i < N; ++i)
    p.scores[static_cast<std::size_t>(i)] = static_cast<double>(N - i);
  spread(p.unsafe, 0, N1, std::llround(u1 * static_cast<double>(N1)));
  spread(p.unsafe, N1, N - N1, std::llround(u_rest * static_cast<double>(N - N1)));
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
