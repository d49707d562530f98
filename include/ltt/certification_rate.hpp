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
// Algorithm (no fresh CDF per m): k_max(m) is non-decreasing and moves by at most one per
// step in m (p(k, m+1) <= p(k, m) <= p(k+1, m+1)), so both the null CDF at k_max + 1, which
// decides the next step, and the true CDF at k_max, which is c(m), are carried along the
// lattice path by the one-more-draw recurrences
//     F_{m+1}(k) = F_m(k) - P_m(k) (K - k) / (N_1 - m),   F_m(k+1) = F_m(k) + P_m(k+1),
// with the masses moved by their exact ratios, and re-anchored from the saddle point every
// 128 steps. A decision whose carried p-value lies within 1e-9 of delta is taken by
// composition_pvalue itself, so k_max is exactly the walk's. The sum over m runs over the
// window of Hyp(N, N_1, n) outside which the mass is provably below 1e-16 (geometric tail
// bounds, as in the hypergeometric tails). Absolute error below 1e-12 (tests against exact
// rationals). The window is O(sqrt(min(n, N1))) wide (the variance of m is at most
// min(n, N1)); memory is O(window), time the window's steps plus one anchor every 128 of them.
//
// label_budget returns the scan's smallest n with rate(n) >= target without visiting every
// n: an envelope E[max_{m'<=m} c(m') at M_n], non-decreasing in n, is bisected to jump over
// plateaus, then one-sided Lipschitz bounds on rate(n+1) - rate(n) (from M_{n+1} = M_n + B)
// skip every n they prove below the target; within 2.2e-12 of it the search steps by one.
// Work grows with the answer's m-range (N1 at worst), not with N. See
// docs/certification_rate.md.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include <ltt/detail/check.hpp>
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

// (m, k, P_m(k), F_m(k)) for X_m ~ Hyp(population, K, m), moved along a lattice path with
// m and k non-decreasing. k = -1 means "no count": F = 0.
class LatticeCursor {
 public:
  LatticeCursor(std::int64_t population, std::int64_t K, std::int64_t m, std::int64_t k)
      : N_(population), K_(K), m_(m), k_(k) {
    anchor();
  }

  std::int64_t m() const { return m_; }
  std::int64_t k() const { return k_; }
  double cdf() const { return cdf_; }

  // m -> m + 1 at fixed k: one more draw is a success with probability (K - k)/(N - m) given
  // X_m = k, which is the only way {X <= k} is left.
  void advance_m() {
    if (k_ >= 0) {
      const double N = static_cast<double>(N_), K = static_cast<double>(K_);
      const double m = static_cast<double>(m_), k = static_cast<double>(k_);
      cdf_ = std::clamp(cdf_ - pmf_ * (K - k) / (N - m), 0.0, 1.0);
      pmf_ *= ((N - K - m + k) * (m + 1)) / ((m + 1 - k) * (N - m));
    }
    ++m_;
    if (++since_anchor_ == anchor_interval) anchor();
  }

  // k -> k + 1 at fixed m (k + 1 <= m).
  void advance_k() {
    if (k_ < 0 || pmf_ == 0.0) {  // start of the path, or a mass lost to underflow
      ++k_;
      anchor();
      return;
    }
    const double N = static_cast<double>(N_), K = static_cast<double>(K_);
    const double m = static_cast<double>(m_), k = static_cast<double>(k_);
    pmf_ *= ((K - k) * (m - k)) / ((k + 1) * (N - K - m + k + 1));
    cdf_ = std::min(1.0, cdf_ + pmf_);
    ++k_;
  }

  // Rounding in the carried CDF grows by a few units per step (the subtraction loses at most
  // a factor 1/(1 - K/N) per step): 128 steps keep it below 1e-13 absolute.
  static constexpr int anchor_interval = 128;

  void anchor() {
    since_anchor_ = 0;
    if (k_ < 0) {
      pmf_ = cdf_ = 0.0;
      return;
    }
    pmf_ = hypergeometric_pmf(k_, N_, K_, m_);
    cdf_ = hypergeometric_cdf(k_, N_, K_, m_);
  }

 private:
  std::int64_t N_, K_, m_, k_;
  double pmf_ = 0.0, cdf_ = 0.0;
  int since_anchor_ = 0;
};

// One step of c(m) along a known path: m -> m + 1, then up to the new critical count.
inline void follow(LatticeCursor& cursor, std::int64_t k_max_next) {
  cursor.advance_m();
  if (cursor.k() < k_max_next) cursor.advance_k();
}

// The walk's first decision at (k, m), read from a carried null CDF when it is clearly on one
// side of delta, else from composition_pvalue itself (which rounds p up by 1 + 2^-45).
inline bool rejects(double carried_cdf, std::int64_t k, std::int64_t m, std::int64_t N1,
                    double alpha, double delta) {
  const double p = carried_cdf * (1.0 + 0x1p-45);
  if (std::abs(p - delta) > 1e-9 * delta + 1e-12) return p <= delta;
  return composition_pvalue(k, m, N1, alpha) <= delta;
}

// Critical counts k_max(m) and conditional rates c(m) for m in [m_first, m_last], extended on
// demand. U1 < 0 computes the critical counts only.
class CriticalPath {
 public:
  CriticalPath(std::int64_t N1, std::int64_t U1, double alpha, double delta, std::int64_t m_first)
      : N1_(N1), U1_(U1), alpha_(alpha), delta_(delta), m_first_(m_first),
        U_star_(floor_decimal_product(alpha, N1) + 1) {
    // k_max(m_first) by bisection on the non-decreasing p(k, m): the largest k with p <= delta.
    std::int64_t lo = -1, hi = std::min(m_first, U_star_) - 1;  // p(k) = 1 for k >= min(m, U*)
    while (lo < hi) {
      const std::int64_t mid = lo + (hi - lo + 1) / 2;
      if (composition_pvalue(mid, m_first, N1, alpha) <= delta) lo = mid;
      else hi = mid - 1;
    }
    null_.emplace(N1, std::min(U_star_, N1), m_first, lo + 1);
    if (U1 >= 0) true_.emplace(N1, U1, m_first, lo);
    record(lo);
  }

  std::int64_t m_first() const { return m_first_; }
  std::int64_t m_last() const { return m_first_ + static_cast<std::int64_t>(k_max_.size()) - 1; }
  std::int64_t k_max(std::int64_t m) const { return k_max_[static_cast<std::size_t>(m - m_first_)]; }
  double c(std::int64_t m) const { return c_[static_cast<std::size_t>(m - m_first_)]; }

  void extend_to(std::int64_t m_last_wanted) {
    while (m_last() < m_last_wanted) {
      std::int64_t k = k_max_.back();
      null_->advance_m();
      const std::int64_t m = null_->m();
      // At most one more count becomes rejected per step; p(k) = 1 for k >= min(m, U*).
      if (k + 1 < std::min(m, U_star_) &&
          rejects(null_->cdf(), k + 1, m, N1_, alpha_, delta_)) {
        ++k;
        null_->advance_k();
      }
      if (true_) follow(*true_, k);
      record(k);
    }
  }

 private:
  void record(std::int64_t k) {
    k_max_.push_back(k);
    c_.push_back(true_ && k >= 0 ? true_->cdf() : 0.0);
  }

  std::int64_t N1_, U1_;
  double alpha_, delta_;
  std::int64_t m_first_, U_star_;
  std::optional<LatticeCursor> null_, true_;
  std::vector<std::int64_t> k_max_;
  std::vector<double> c_;
};

// The masses of Hyp(N, N1, n) over [m_lo, m_lo + size) outside which the total mass is at most
// `dropped` (rigorous: log-concavity makes the ratios fall monotonically away from the mode).
struct MassWindow {
  std::int64_t m_lo = 0;
  std::vector<double> mass;
  double dropped = 0.0;
  std::int64_t m_hi() const { return m_lo + static_cast<std::int64_t>(mass.size()) - 1; }
};

inline MassWindow mass_window(std::int64_t N, std::int64_t N1, std::int64_t n) {
  const Hypergeometric h(N, N1, n);
  MassWindow w;
  if (h.lo == h.hi) {
    w.m_lo = h.lo;
    w.mass = {1.0};
    return w;
  }
  constexpr double tolerance = 1e-17;
  const std::int64_t mode = std::clamp<std::int64_t>(
      static_cast<std::int64_t>(static_cast<int128>(n + 1) * (N1 + 1) / (N + 2)), h.lo, h.hi);
  const double head = point_mass<true>(h, mode).value;
  std::vector<double> down;  // masses at mode - 1, mode - 2, ...
  {
    double t = head, j = static_cast<double>(mode), d = static_cast<double>(N - N1 - n + mode);
    double b1 = static_cast<double>(N1 - mode + 1), c1 = static_cast<double>(n - mode + 1);
    for (std::int64_t m = mode; m > h.lo; --m) {
      const double r = (j * d) / (b1 * c1);
      t *= r;
      if (r < 1.0 && t / (1.0 - r) <= tolerance) {  // this term and all below it
        w.dropped += t / (1.0 - r);
        break;
      }
      down.push_back(t);
      j -= 1.0, d -= 1.0, b1 += 1.0, c1 += 1.0;
    }
  }
  w.m_lo = mode - static_cast<std::int64_t>(down.size());
  w.mass.assign(down.rbegin(), down.rend());
  w.mass.push_back(head);
  {
    double t = head, b = static_cast<double>(N1 - mode), c = static_cast<double>(n - mode);
    double j1 = static_cast<double>(mode + 1), d1 = static_cast<double>(N - N1 - n + mode + 1);
    for (std::int64_t m = mode; m < h.hi; ++m) {
      const double r = (b * c) / (j1 * d1);
      t *= r;
      if (r < 1.0 && t / (1.0 - r) <= tolerance) {
        w.dropped += t / (1.0 - r);
        break;
      }
      w.mass.push_back(t);
      b -= 1.0, c -= 1.0, j1 += 1.0, d1 += 1.0;
    }
  }
  return w;
}

inline double weighted_sum(const MassWindow& w, const CriticalPath& path) {
  long double sum = 0.0L;
  for (std::size_t i = 0; i < w.mass.size(); ++i)
    sum += static_cast<long double>(w.mass[i]) * path.c(w.m_lo + static_cast<std::int64_t>(i));
  return std::clamp(static_cast<double>(sum), 0.0, 1.0);
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

namespace detail {

// rate(n) for n = 0, 1, ... in order, sharing one critical path (c(m) does not depend on n).
class RateScan {
 public:
  RateScan(std::int64_t N, std::int64_t N1, std::int64_t U1, double alpha, double delta)
      : N_(N), N1_(N1), path_(N1, U1, alpha, delta, 0) {}
  double rate(std::int64_t n) {
    const MassWindow w = mass_window(N_, N1_, n);
    path_.extend_to(w.m_hi());
    return weighted_sum(w, path_);
  }

 private:
  std::int64_t N_, N1_;
  CriticalPath path_;
};

}  // namespace detail

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
                                                        std::int64_t U1, double alpha,
                                                        double delta, double target_rate) {
  check_budget("label_budget_by_scan", N, N1, U1, alpha, delta, target_rate);
  if (target_rate == 0.0) return 0;
  if (U1 >= null_boundary(N1, alpha) && target_rate > delta) return std::nullopt;
  RateScan scan(N, N1, U1, alpha, delta);
  for (std::int64_t n = 0; n <= N; ++n)
    if (scan.rate(n) >= target_rate) return n;
  return std::nullopt;
}

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
      anywhere, (2.0 * static_cast<double>(weighted) + 2.0 * static_cast<double>(N1) * outside) /
                    remaining);
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
    std::int64_t step = any > static_cast<double>(remaining) ? remaining + 1
                                                             : static_cast<std::int64_t>(any);
    if (step <= remaining && half > step)
      step = near >= static_cast<double>(half) ? half
                                               : std::max(step, static_cast<std::int64_t>(near));
    if (step < 2) return 1;
    if (rising.complete()) return step;  // w(N1) = 0: nothing lies beyond the path
    // The mean of M moves by N1/N per n: a first guess at the skip whose window still fits.
    const double room = static_cast<double>(rising.m_last() - 1 - w.m_hi()) *
                        static_cast<double>(N) / static_cast<double>(N1);
    if (room < static_cast<double>(step)) step = room < 1.0 ? 1 : static_cast<std::int64_t>(room) + 1;
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
      sum += static_cast<long double>(w.mass[i]) * rising.top(w.m_lo + static_cast<std::int64_t>(i));
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
