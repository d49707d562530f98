#pragma once
// The engine of <ltt/certification_rate.hpp>: the critical counts k_max(m) and the conditional
// rates c(m) along one lattice path, and the window of m ~ Hyp(N, N1, n) that the rate sums
// over (paper, Proposition "certification rate").
//
// Algorithm (no fresh CDF per m): k_max(m) is non-decreasing and moves by at most one per
// step in m (p(k, m+1) <= p(k, m) <= p(k+1, m+1)), so both the null CDF at k_max + 1, which
// decides the next step, and the true CDF at k_max, which is c(m), are carried along the
// lattice path by the one-more-draw recurrences
//     F_{m+1}(k) = F_m(k) - P_m(k) (K - k) / (N_1 - m),   F_m(k+1) = F_m(k) + P_m(k+1),
// with the masses moved by their exact ratios, and re-anchored from the saddle point every
// 128 steps. A decision whose carried p-value lies within 1e-9 of delta is taken by
// composition_pvalue itself, so k_max is exactly the walk's. The sum over m runs over the
// window of Hyp(N, N1, n) outside which the mass is provably below 1e-16 (geometric tail
// bounds, as in the hypergeometric tails). Absolute error below 1e-12 (tests against exact
// rationals). The window is O(sqrt(min(n, N1))) wide (the variance of m is at most
// min(n, N1)); memory is O(window), time the window's steps plus one anchor every 128 of them.
// See docs/certification_rate.md.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include <ltt/detail/hypergeometric_tail.hpp>
#include <ltt/hypergeometric.hpp>
#include <ltt/pvalue.hpp>

namespace ltt::detail {

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
    pmf_ *= MassRatios<Direction::up>(Hypergeometric(N_, K_, m_), k_).next();
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
      : N1_(N1),
        U1_(U1),
        alpha_(alpha),
        delta_(delta),
        m_first_(m_first),
        U_star_(floor_decimal_product(alpha, N1) + 1) {
    // k_max(m_first) by bisection on the non-decreasing p(k, m): the largest k with p <= delta.
    std::int64_t lo = -1, hi = std::min(m_first, U_star_) - 1;  // p(k) = 1 for k >= min(m, U*)
    while (lo < hi) {
      const std::int64_t mid = lo + (hi - lo + 1) / 2;
      if (composition_pvalue(mid, m_first, N1, alpha) <= delta)
        lo = mid;
      else
        hi = mid - 1;
    }
    null_.emplace(N1, std::min(U_star_, N1), m_first, lo + 1);
    if (U1 >= 0) true_.emplace(N1, U1, m_first, lo);
    record(lo);
  }

  std::int64_t m_first() const { return m_first_; }
  std::int64_t m_last() const { return m_first_ + static_cast<std::int64_t>(k_max_.size()) - 1; }
  std::int64_t k_max(std::int64_t m) const {
    return k_max_[static_cast<std::size_t>(m - m_first_)];
  }
  double c(std::int64_t m) const { return c_[static_cast<std::size_t>(m - m_first_)]; }

  void extend_to(std::int64_t m_last_wanted) {
    while (m_last() < m_last_wanted) {
      std::int64_t k = k_max_.back();
      null_->advance_m();
      const std::int64_t m = null_->m();
      // At most one more count becomes rejected per step; p(k) = 1 for k >= min(m, U*).
      if (k + 1 < std::min(m, U_star_) && rejects(null_->cdf(), k + 1, m, N1_, alpha_, delta_)) {
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

// Appends to `out` the masses outward from k, whose mass is `head`, until this one and all
// beyond it are provably at most `tolerance`; returns that bound, 0 where the support ends first.
template <Direction D>
inline double outward_masses(const Hypergeometric& h, std::int64_t k, double head, double tolerance,
                             std::vector<double>& out) {
  double t = head;
  for (MassRatios<D> ratios(h, k); ratios.more();) {
    const double r = ratios.next();
    t *= r;
    if (r < 1.0 && t / (1.0 - r) <= tolerance) return t / (1.0 - r);  // this term and beyond
    out.push_back(t);
  }
  return 0.0;
}

inline MassWindow mass_window(std::int64_t N, std::int64_t N1, std::int64_t n) {
  const Hypergeometric h(N, N1, n);
  MassWindow w;
  if (h.lo == h.hi) {
    w.m_lo = h.lo;
    w.mass = {1.0};
    return w;
  }
  constexpr double tolerance = 1e-17;
  const std::int64_t mode = h.mode();
  const double head = point_mass<true>(h, mode).value;
  std::vector<double> down;  // masses at mode - 1, mode - 2, ...
  w.dropped += outward_masses<Direction::down>(h, mode, head, tolerance, down);
  w.m_lo = mode - static_cast<std::int64_t>(down.size());
  w.mass.assign(down.rbegin(), down.rend());
  w.mass.push_back(head);
  w.dropped += outward_masses<Direction::up>(h, mode, head, tolerance, w.mass);
  return w;
}

inline double weighted_sum(const MassWindow& w, const CriticalPath& path) {
  long double sum = 0.0L;
  for (std::size_t i = 0; i < w.mass.size(); ++i)
    sum += static_cast<long double>(w.mass[i]) * path.c(w.m_lo + static_cast<std::int64_t>(i));
  return std::clamp(static_cast<double>(sum), 0.0, 1.0);
}

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

}  // namespace ltt::detail
