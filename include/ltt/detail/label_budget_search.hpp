#pragma once
// The search of label_budget (<ltt/certification_rate.hpp>): the smallest n with rate(n) >=
// target without visiting every n. An envelope E[max_{m'<=m} c(m') at M_n], non-decreasing in
// n, is bisected to jump over plateaus (envelope_start), then one-sided Lipschitz bounds on
// rate(n+1) - rate(n) (from M_{n+1} = M_n + B; step_bounds) skip every n they prove below the
// target (safe_skip); within 2.2e-12 of it the search steps by one. Work grows with the
// answer's m-range (N1 at worst), not with N. See docs/certification_rate.md ("The label
// budget").

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include <ltt/detail/critical_path.hpp>

namespace ltt::detail {

// The critical path from m = 0 (so c(m) is bit for bit the scan's) with, for label_budget,
//   top(m)  = max over m' <= m of c(m'): the non-decreasing envelope of c from above;
//   rise(m) = max over m <= m' < m_last of (c(m' + 1) - c(m'))^+: the largest step up of c at
//             or after m within the computed path (0 from m_last on).
class RisingPath {
 public:
  RisingPath(std::int64_t N1, std::int64_t U1, double alpha, double delta)
      : N1_(N1), path_(N1, U1, alpha, delta, 0) {
    top_.push_back(path_.c(0));
  }

  const CriticalPath& path() const { return path_; }
  std::int64_t m_last() const { return path_.m_last(); }
  bool complete() const { return path_.m_last() == N1_; }
  double top(std::int64_t m) const { return top_[static_cast<std::size_t>(m)]; }
  double rise(std::int64_t m) const {
    return m < m_last() ? rise_[static_cast<std::size_t>(m)] : 0.0;
  }

  // Extends to at least m (doubling, so the suffix maxima cost O(m_last) in all).
  void extend_to(std::int64_t m) {
    if (m <= m_last()) return;
    const std::int64_t from = m_last();
    path_.extend_to(std::min(N1_, std::max({m, 2 * m_last(), std::int64_t{64}})));
    for (std::int64_t j = from + 1; j <= m_last(); ++j)
      top_.push_back(std::max(top_.back(), path_.c(j)));
    rise_.assign(static_cast<std::size_t>(m_last()), 0.0);
    double r = 0.0;
    for (std::int64_t j = m_last() - 1; j >= 0; --j) {
      r = std::max(r, path_.c(j + 1) - path_.c(j));
      rise_[static_cast<std::size_t>(j)] = r;
    }
  }

 private:
  std::int64_t N1_;
  CriticalPath path_;
  std::vector<double> top_, rise_;
};

// Upper bounds on rate(n + i + 1) - rate(n + i) for the skips of label_budget (see there).
// g(m) = rising.rise(m) is non-increasing, and so is (N1 - m) g(m): both expectations only fall
// as M_n grows stochastically with n, so the window of n bounds every later step.
struct StepBounds {
  double anywhere;  // for every i: min(E[g(M_n)], (N1/N) g(m_lo)) + the tails
  double near;      // for i < (N - n)/2: also 2 E[(N1 - M_n) g(M_n)] / (N - n)
};

inline StepBounds step_bounds(const RisingPath& rising, std::int64_t N, std::int64_t N1,
                              std::int64_t n, const MassWindow& w) {
  // Mass of M_n below the window, and of M_{n_last} at or past the path's end: each <= 2e-17
  // (the window tails), where Delta c^+ is bounded by 1 and the weight w(M) by N1/(N - n - i).
  constexpr double outside = 4e-17;
  long double g_mean = 0.0L, weighted = 0.0L;
  for (std::size_t i = 0; i < w.mass.size(); ++i) {
    const std::int64_t m = w.m_lo + static_cast<std::int64_t>(i);
    const long double pg = static_cast<long double>(w.mass[i]) * rising.rise(m);
    g_mean += pg;
    weighted += pg * static_cast<long double>(N1 - m);
  }
  const double share = static_cast<double>(N1) / static_cast<double>(N);
  const double remaining = static_cast<double>(N - n);
  const double anywhere =
      std::min(static_cast<double>(g_mean), share * rising.rise(w.m_lo)) + outside;
  const double near = std::min(
      anywhere,
      (2.0 * static_cast<double>(weighted) + 2.0 * static_cast<double>(N1) * outside) / remaining);
  return {anywhere * (1.0 + 0x1p-40), near * (1.0 + 0x1p-40)};  // round the bounds up
}

// The longest skip from n (window w, rate below the target by more than gap) that the bounds
// prove safe: every n + i, 0 < i < step, has rate < target. Keeps the window of
// n_last = n + step - 1 inside the computed path (extended, by doubling, only when even a skip
// of two does not fit), so the path grows with the answer, not with N1.
inline std::int64_t safe_skip(RisingPath& rising, std::int64_t N, std::int64_t N1, std::int64_t n,
                              const MassWindow& w, double gap) {
  const std::int64_t remaining = N - n, half = remaining / 2;
  for (;;) {
    const StepBounds bound = step_bounds(rising, N, N1, n, w);
    // Skips of j - 1 values: j * bound < gap keeps every skipped rate below the target.
    const double any = std::ceil(gap / bound.anywhere), near = std::ceil(gap / bound.near);
    std::int64_t step =
        any > static_cast<double>(remaining) ? remaining + 1 : static_cast<std::int64_t>(any);
    if (step <= remaining && half > step)
      step = near >= static_cast<double>(half) ? half
                                               : std::max(step, static_cast<std::int64_t>(near));
    if (step < 2) return 1;
    if (rising.complete()) return step;  // w(N1) = 0: nothing lies beyond the path
    // The mean of M moves by N1/N per n: a first guess at the skip whose window still fits.
    const double room = static_cast<double>(rising.m_last() - 1 - w.m_hi()) *
                        static_cast<double>(N) / static_cast<double>(N1);
    if (room < static_cast<double>(step))
      step = room < 1.0 ? 1 : static_cast<std::int64_t>(room) + 1;
    while (step >= 2 && mass_window(N, N1, std::min(n + step - 1, N)).m_hi() >= rising.m_last())
      step /= 2;
    if (step >= 2) return step;
    rising.extend_to(rising.m_last() + 1);  // g may grow: propose again
  }
}

// E[top(M_n)] >= rate(n), non-decreasing in n (top is non-decreasing and M_n stochastically
// non-decreasing). Returns the smallest n whose envelope is not below `level` (N + 1 if none),
// by doubling then bisection: one envelope below the level at n - 1 puts every rate before n
// below it too, so the plateaus where even the running maximum of c misses are never scanned.
inline std::int64_t envelope_start(RisingPath& rising, std::int64_t N, std::int64_t N1,
                                   double level) {
  const auto below = [&](std::int64_t n) {
    const MassWindow w = mass_window(N, N1, n);
    rising.extend_to(w.m_hi());
    long double sum = 0.0L;
    for (std::size_t i = 0; i < w.mass.size(); ++i)
      sum +=
          static_cast<long double>(w.mass[i]) * rising.top(w.m_lo + static_cast<std::int64_t>(i));
    return static_cast<double>(sum) < level;
  };
  if (!below(0)) return 0;
  std::int64_t lo = 0, hi = 1;  // below(lo); hi unknown
  while (hi < N && below(hi)) lo = hi, hi = std::min(N, 2 * hi);
  if (hi >= N) {
    if (below(N)) return N + 1;
    hi = N;
  }
  while (hi - lo > 1) {  // below(lo), !below(hi)
    const std::int64_t mid = lo + (hi - lo) / 2;
    (below(mid) ? lo : hi) = mid;
  }
  return hi;
}

}  // namespace ltt::detail
