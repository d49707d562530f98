#pragma once
// The certification rate (paper, Proposition "certification rate"), the label budget it
// prices, and the dichotomy and Hoeffding relaxation around it.
//
// The strict fixed-sequence walk certifies iff it rejects its first hypothesis, so only the
// first selection S_1 matters: N_1 trajectories of the pool's N, U_1 of them unsafe. With n
// calibration draws, m ~ Hyp(N, N_1, n) land in S_1 and k | m ~ Hyp(N_1, U_1, m) of those are
// unsafe; the walk rejects iff composition_pvalue(k, m, N_1, alpha) <= delta, i.e. iff
// k <= k_max(m). Hence
//     rate(n) = sum_m P[m] c(m),   c(m) = P[Hyp(N_1, U_1, m) <= k_max(m)],
// where the critical count k_max(m) depends on neither U_1 nor n, and c(m) not on n.
//
// Algorithm: k_max(m) and c(m) are carried along one lattice path in m by one-more-draw
// recurrences instead of a fresh CDF per m, and the sum over m runs over the window of
// Hyp(N, N1, n) outside which the mass is provably below 1e-16 (<ltt/detail/critical_path.hpp>).
// Absolute error below 1e-12 (tests against exact rationals); time and memory O(window), the
// window O(sqrt(min(n, N1))) wide.
//
// label_budget returns the scan's smallest n with rate(n) >= target without visiting every n
// (an envelope bisected over plateaus, then skips that one-sided Lipschitz bounds prove safe;
// <ltt/detail/label_budget_search.hpp>). Work grows with the answer's m-range (N1 at worst),
// not with N. See docs/certification_rate.md.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include <ltt/detail/check.hpp>
#include <ltt/detail/critical_path.hpp>
#include <ltt/detail/label_budget_search.hpp>
#include <ltt/hypergeometric.hpp>
#include <ltt/pvalue.hpp>

namespace ltt {

namespace detail {

inline void check_level_pair(std::string_view fn, double alpha, double delta) {
  require_open_unit(fn, "alpha", alpha);
  require_open_unit(fn, "delta", delta);
}

inline void check_pool(std::string_view fn, std::int64_t N, std::int64_t N1, std::int64_t U1) {
  require_count(fn, "N", N);
  require_count(fn, "N1", N1);
  require_at_most(fn, "N1", N1, "N", N);
  require_count(fn, "U1", U1);
  require_at_most(fn, "U1", U1, "N1", N1);
}

}  // namespace detail

inline std::vector<std::int64_t> critical_counts(std::int64_t N1, double alpha, double delta,
                                                 std::int64_t m_max) {
  constexpr std::string_view fn = "critical_counts";
  detail::require_count(fn, "N1", N1);
  detail::require_count(fn, "m_max", m_max);
  detail::require_at_most(fn, "m_max", m_max, "N1", N1);
  detail::check_level_pair(fn, alpha, delta);
  detail::CriticalPath path(N1, -1, alpha, delta, 0);
  path.extend_to(m_max);
  std::vector<std::int64_t> out(static_cast<std::size_t>(m_max + 1));
  for (std::int64_t m = 0; m <= m_max; ++m) out[static_cast<std::size_t>(m)] = path.k_max(m);
  return out;
}

inline std::vector<double> conditional_certification_rates(std::int64_t N1, std::int64_t U1,
                                                           double alpha, double delta,
                                                           std::int64_t m_max) {
  constexpr std::string_view fn = "conditional_certification_rates";
  detail::require_count(fn, "N1", N1);
  detail::require_count(fn, "U1", U1);
  detail::require_at_most(fn, "U1", U1, "N1", N1);
  detail::require_count(fn, "m_max", m_max);
  detail::require_at_most(fn, "m_max", m_max, "N1", N1);
  detail::check_level_pair(fn, alpha, delta);
  detail::CriticalPath path(N1, U1, alpha, delta, 0);
  path.extend_to(m_max);
  std::vector<double> out(static_cast<std::size_t>(m_max + 1));
  for (std::int64_t m = 0; m <= m_max; ++m) out[static_cast<std::size_t>(m)] = path.c(m);
  return out;
}

// Everything that does not depend on U1, for a fixed pool (N, N1), budget n and (alpha, delta):
// the window of m ~ Hyp(N, N1, n) and the critical counts over it. rate(U1) is then one pass
// over the window: use this to evaluate the rate for many U1 (a posterior over U1, a sweep).
class CertificationRateModel {
 public:
  CertificationRateModel(std::int64_t N, std::int64_t N1, std::int64_t n, double alpha,
                         double delta)
      : N_(N), N1_(N1), n_(n), alpha_(alpha), delta_(delta) {
    constexpr std::string_view fn = "CertificationRateModel";
    detail::check_pool(fn, N, N1, 0);
    detail::require_count(fn, "n", n);
    detail::require_at_most(fn, "n", n, "N", N);
    detail::check_level_pair(fn, alpha, delta);
    window_ = detail::mass_window(N, N1, n);
    detail::CriticalPath path(N1, -1, alpha, delta, window_.m_lo);
    path.extend_to(window_.m_hi());
    for (std::int64_t m = window_.m_lo; m <= window_.m_hi(); ++m) k_max_.push_back(path.k_max(m));
  }

  // One pass of the true CDF along the stored critical path: O(window), no p-values.
  double rate(std::int64_t U1) const {
    detail::require_count("CertificationRateModel::rate", "U1", U1);
    detail::require_at_most("CertificationRateModel::rate", "U1", U1, "N1", N1_);
    detail::LatticeCursor cursor(N1_, U1, window_.m_lo, k_max_.front());
    long double sum = 0.0L;
    for (std::size_t i = 0; i < k_max_.size(); ++i) {
      if (i > 0) detail::follow(cursor, k_max_[i]);
      if (k_max_[i] >= 0) sum += static_cast<long double>(window_.mass[i]) * cursor.cdf();
    }
    return std::clamp(static_cast<double>(sum), 0.0, 1.0);
  }

  std::int64_t N() const { return N_; }
  std::int64_t N1() const { return N1_; }
  std::int64_t n() const { return n_; }
  // Mass of m ~ Hyp(N, N1, n) left out of the sum: a bound on the truncation error.
  double truncated_mass() const { return window_.dropped; }

 private:
  std::int64_t N_, N1_, n_;
  double alpha_, delta_;
  detail::MassWindow window_;
  std::vector<std::int64_t> k_max_;  // critical counts over the window
};

inline double certification_rate(std::int64_t N, std::int64_t N1, std::int64_t U1, std::int64_t n,
                                 double alpha, double delta) {
  constexpr std::string_view fn = "certification_rate";
  detail::check_pool(fn, N, N1, U1);
  detail::require_count(fn, "n", n);
  detail::require_at_most(fn, "n", n, "N", N);
  detail::check_level_pair(fn, alpha, delta);
  return CertificationRateModel(N, N1, n, alpha, delta).rate(U1);
}

inline std::vector<double> certification_rate_curve(std::int64_t N, std::int64_t N1,
                                                    std::int64_t U1, double alpha, double delta,
                                                    std::int64_t n_max) {
  constexpr std::string_view fn = "certification_rate_curve";
  detail::check_pool(fn, N, N1, U1);
  detail::require_count(fn, "n_max", n_max);
  detail::require_at_most(fn, "n_max", n_max, "N", N);
  detail::check_level_pair(fn, alpha, delta);
  detail::RateScan scan(N, N1, U1, alpha, delta);
  std::vector<double> out(static_cast<std::size_t>(n_max + 1));
  for (std::int64_t n = 0; n <= n_max; ++n) out[static_cast<std::size_t>(n)] = scan.rate(n);
  return out;
}

namespace detail {

inline void check_budget(std::string_view fn, std::int64_t N, std::int64_t N1, std::int64_t U1,
                         double alpha, double delta, double target_rate) {
  check_pool(fn, N, N1, U1);
  check_level_pair(fn, alpha, delta);
  if (!(target_rate >= 0.0 && target_rate <= 1.0))
    invalid(fn, "target_rate", show(target_rate), "must lie in [0, 1]");
}

// The label budget by visiting every n = 0, 1, 2, ...: the definition, O(N * window). Kept as
// the reference label_budget is tested and benchmarked against.
inline std::optional<std::int64_t> label_budget_by_scan(std::int64_t N, std::int64_t N1,
                                                        std::int64_t U1, double alpha, double delta,
                                                        double target_rate) {
  check_budget("label_budget_by_scan", N, N1, U1, alpha, delta, target_rate);
  if (target_rate == 0.0) return 0;
  if (U1 >= null_boundary(N1, alpha) && target_rate > delta) return std::nullopt;
  RateScan scan(N, N1, U1, alpha, delta);
  for (std::int64_t n = 0; n <= N; ++n)
    if (scan.rate(n) >= target_rate) return n;
  return std::nullopt;
}

}  // namespace detail

// The smallest n with rate(n) >= target_rate, the same n as the scan of every n
// (detail::label_budget_by_scan), found without visiting every n. The rate is a sawtooth in n,
// so there is no bisection on it; the search rests on the coupling M_{n+1} = M_n + B,
// P[B = 1 | M_n] = (N1 - M_n)/(N - n), under which M_n ~ Hyp(N, N1, n) grows stochastically
// with n and
//     rate(n + 1) - rate(n) = E[w(M_n) (c(M_n + 1) - c(M_n))],  w(m) = (N1 - m)/(N - n) in [0, 1],
// with E[w(M_n)] = N1/N exactly. Two phases, each skipping only n proved below the target:
//  1. envelope_start: E[max_{m' <= m} c(m') at M_n] >= rate(n) is non-decreasing in n, so the
//     first n where it reaches target - margin is found by bisection;
//  2. from each n evaluated, safe_skip jumps over every n + i that step_bounds' one-sided
//     bounds on the increments keep below target - margin.
// The margin (2.2e-12) covers the difference between a computed rate and the rate of the
// computed c(m): within it nothing is proved and the search steps by one n, the one case whose
// cost grows with N/N1 (targets near 1). See docs/certification_rate.md ("The label budget").
inline std::optional<std::int64_t> label_budget(std::int64_t N, std::int64_t N1, std::int64_t U1,
                                                double alpha, double delta, double target_rate) {
  detail::check_budget("label_budget", N, N1, U1, alpha, delta, target_rate);
  if (target_rate == 0.0) return 0;
  // A true first null (U1 >= U*) certifies with probability at most delta at every n.
  if (U1 >= null_boundary(N1, alpha) && target_rate > delta) return std::nullopt;
  constexpr double margin = 2.2e-12;  // 2 x the rates' 1e-12 accuracy, + c(m)'s 1e-13 x 2
  detail::RisingPath rising(N1, U1, alpha, delta);
  std::int64_t n = detail::envelope_start(rising, N, N1, target_rate - margin);
  if (n > N) return std::nullopt;
  for (;;) {
    const detail::MassWindow w = detail::mass_window(N, N1, n);
    rising.extend_to(w.m_hi());
    const double rate = detail::weighted_sum(w, rising.path());
    if (rate >= target_rate) return n;
    if (n == N) return std::nullopt;
    const double gap = target_rate - rate - margin;
    const std::int64_t step = gap > 0.0 ? detail::safe_skip(rising, N, N1, n, w, gap) : 1;
    if (step > N - n) return std::nullopt;
    n += step;
  }
}

// Purity margin: alpha minus the smallest unsafe fraction any grid selection achieves.
inline double purity_margin(double alpha, std::span<const double> unsafe_fractions) {
  constexpr std::string_view fn = "purity_margin";
  detail::require_open_unit(fn, "alpha", alpha);
  if (unsafe_fractions.empty()) detail::invalid(fn, "unsafe_fractions.size()", "0", "must be >= 1");
  double u_min = 1.0;
  for (std::size_t j = 0; j < unsafe_fractions.size(); ++j) {
    const double u = unsafe_fractions[j];
    if (!(u >= 0.0 && u <= 1.0))
      detail::invalid(fn, "unsafe_fractions[" + std::to_string(j) + "]", detail::show(u),
                      "must lie in [0, 1]");
    u_min = std::min(u_min, u);
  }
  return alpha - u_min;
}

// Proposition "certification dichotomy" over a grid's unsafe fractions u_1, u_2, ... in grid
// order: u_min > alpha means the rate is at most delta at every n (a certificate would be
// false, and false certification has probability <= delta); u_1 < alpha means the rate tends
// to one as n -> N (at n = N the first p-value is exactly 0).
struct CertificationDichotomy {
  double purity_margin;     // alpha - u_min
  bool rate_at_most_delta;  // u_min > alpha
  bool rate_tends_to_one;   // u_1 < alpha
};

inline CertificationDichotomy certification_dichotomy(double alpha,
                                                      std::span<const double> unsafe_fractions) {
  const double margin = purity_margin(alpha, unsafe_fractions);
  return {margin, margin < 0.0, unsafe_fractions.front() < alpha};
}

// Hoeffding relaxation (paper, appendix B): with margin eps = alpha - u_1 > 0 and
// m >= 2 ln(1/delta) / eps^2 draws in S_1, P[certify | m] >= 1 - exp(-m eps^2 / 2).
// hoeffding_min_draws is that condition's smallest m; hoeffding_rate_bound is 0 (vacuous)
// below it. Checked against the exact c(m) in tests/ltt/certification_rate.test.cpp.
inline std::int64_t hoeffding_min_draws(double margin, double delta) {
  constexpr std::string_view fn = "hoeffding_min_draws";
  if (!(margin > 0.0 && margin <= 1.0))
    detail::invalid(fn, "margin", detail::show(margin), "must lie in (0, 1]");
  detail::require_open_unit(fn, "delta", delta);
  return static_cast<std::int64_t>(std::ceil(2.0 * std::log(1.0 / delta) / (margin * margin)));
}

inline double hoeffding_rate_bound(std::int64_t m, double margin, double delta) {
  detail::require_count("hoeffding_rate_bound", "m", m);
  if (m < hoeffding_min_draws(margin, delta)) return 0.0;
  return -std::expm1(-static_cast<double>(m) * margin * margin / 2.0);
}

}  // namespace ltt
