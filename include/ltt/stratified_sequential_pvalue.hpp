#pragma once
// Anytime-valid composition test from stratified labels (the stratified label order
// of <curation/sequential_selection.hpp>). A selection S = D_0 u ... u D_{s-1} is cut into
// disjoint strata; labels arrive one at a time, each from a stratum the labeler picks from the
// labels so far (a predictable choice), and within that stratum as a uniform draw without
// replacement from its unlabeled trajectories. H0: U = U_0 + ... + U_{s-1} >= U*.
//
// Per stratum k (N_k trajectories, t_k labels, x_k unsafe), L_k(u) and PPR_k(u) = m_k / L_k(u)
// are those of <ltt/sequential_pvalue.hpp> with the prior's Polya-urn mixture m_k. Under the
// true counts (U_0, ..., U_{s-1}) the product prod_k PPR_k(U_k) is a test supermartingale
// (nonnegative, starting at 1): each label multiplies one factor by a one-step ratio whose
// conditional mean given the past is at most 1 (1 while both outcomes are possible in that
// stratum), whichever stratum the past chose. Under H0 the true
// counts are one of the allocations u with sum_k u_k >= U*, so
//     E_t = min_{u: sum_k u_k >= U*, 0 <= u_k <= N_k} prod_k PPR_k(u_k) <= prod_k PPR_k(U_k),
// and by Ville's inequality Pr[exists t: E_t >= 1/delta] <= delta. p_t = 1 / max(1, max_s E_s)
// is valid at any stopping time; taking the maximum over only some times s (the walk evaluates
// a hypothesis while it is the first uncertified one) can only raise p_t.
//
// The minimum: log PPR_k(u) = log m_k - log L_k(u), and -log L_k is convex in u (L_k is
// log-concave), so a separable convex function is minimised under sum_k u_k >= U* greedily.
// Each stratum starts at its maximiser u^_k = floor(x_k (N_k + 1) / t_k) of L_k (clamped to
// [x_k, N_k - t_k + x_k]; exact integer arithmetic), where PPR_k <= 1. If sum_k u^_k >= U* the
// minimum has every PPR_k <= 1: no evidence (E_t <= 1). Otherwise the u_k are raised one unit
// at a time where log L_k falls least, the decrements
//     D_k(u) = log L_k(u) - log L_k(u + 1) = log[(u + 1 - x_k)(N_k - u)] - log[(u + 1)(N_k - u -
//     t_k + x_k)]
// growing with u, until the sum is U*. A stratum without labels has L_k = 1 (every D_k = 0)
// and takes what it can for free; if even u_k = N_k - t_k + x_k everywhere stays below U*, no
// allocation fits the labels: H0 is impossible (E_t = infinity). Cost O(sum_k t_k + s U*).
//
// Rounding: log L_k(u^_k) is summed from the one-step ratios of its labels and every decrement
// is the log of a ratio of exact integers, each term formed in long double with the rounding
// bound of <ltt/sequential_pvalue.hpp> (|term| 2^-62 + 2^-60, and 2^-63 of the new sum's
// magnitude for every addition, so the bound grows with the sum as its error does), and m_k's
// bound is the Polya urn's; the total bound is subtracted, so E_t is never above its exact
// value at any label count.
// tests/ltt/stratified_sequential_pvalue.test.cpp checks it against the definition (posteriors
// normalised over every u, minimum over every allocation) on small strata.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <ltt/detail/check.hpp>
#include <ltt/detail/int128.hpp>
#include <ltt/sequential_pvalue.hpp>

namespace ltt {

class StratifiedCompositionEvidence {
 public:
  // One stratum per entry of stratum_sizes (each >= 1), every one with the same prior.
  explicit StratifiedCompositionEvidence(std::vector<std::int64_t> stratum_sizes,
                                         BetaMixturePrior prior = {})
      : prior_(std::move(prior)) {
    constexpr std::string_view fn = "ltt::StratifiedCompositionEvidence";
    if (stratum_sizes.empty()) detail::invalid(fn, "stratum_sizes", "{}", "must not be empty");
    for (std::size_t k = 0; k < stratum_sizes.size(); ++k)
      if (stratum_sizes[k] < 1)
        detail::invalid(fn, "stratum_sizes[" + std::to_string(k) + "]",
                        detail::show(stratum_sizes[k]), "must be at least 1");
    for (const BetaBinomialPrior& c : prior_.components) {
      detail::bounds::require_positive_finite(fn, "prior.a", c.a);
      detail::bounds::require_positive_finite(fn, "prior.b", c.b);
    }
    for (const std::int64_t N : stratum_sizes) strata_.push_back(Stratum{N, 0, 0, {}, {}, {}});
    for (Stratum& s : strata_)
      for (const double w : prior_.weights) {
        s.log_m.push_back(std::log(static_cast<long double>(w)));
        s.error_m.push_back(0.0L);
      }
  }

  // One more label from stratum `k` (at most N_k per stratum).
  void update(std::size_t k, bool unsafe) {
    constexpr std::string_view fn = "ltt::StratifiedCompositionEvidence::update";
    if (k >= strata_.size())
      detail::invalid(fn, "stratum", detail::show(static_cast<std::int64_t>(k)),
                      "must be below the number of strata " +
                          detail::show(static_cast<std::int64_t>(strata_.size())));
    Stratum& s = strata_[k];
    if (s.t >= s.N)
      detail::invalid(fn, "labels", detail::show(s.t + 1),
                      "must not exceed the stratum's size " + detail::show(s.N) +
                          " (labels are drawn without replacement)");
    const long double t = static_cast<long double>(s.t), x = static_cast<long double>(s.x);
    for (std::size_t i = 0; i < s.log_m.size(); ++i) {
      const long double a = prior_.components[i].a, b = prior_.components[i].b;
      detail::add_log_ratio(s.log_m[i], s.error_m[i], (unsafe ? x + a : t - x + b) / (t + a + b));
    }
    s.sequence.push_back(unsafe);
    s.t += 1;
    s.x += unsafe;
  }

  // log E_t over the first `strata` strata for H0: sum U_k >= null_boundary, less its rounding
  // bound; at most 0 when some allocation has every PPR_k <= 1, +infinity when none fits.
  long double log_evidence(std::size_t strata, std::int64_t null_boundary) const {
    return minimum("ltt::StratifiedCompositionEvidence::log_evidence", strata, null_boundary, true);
  }

  // The same minimum without the floor at 0: log min_u prod_k PPR_k(u_k), less its rounding
  // bound, negative when some allocation has every PPR_k below 1 (an evidence below 1, which
  // the fixed tail of <curation/sequential_selection.hpp> needs as it is). +infinity when no
  // allocation fits.
  long double log_minimum(std::size_t strata, std::int64_t null_boundary) const {
    return minimum("ltt::StratifiedCompositionEvidence::log_minimum", strata, null_boundary, false);
  }

  std::size_t strata() const { return strata_.size(); }
  std::int64_t size(std::size_t k) const { return strata_.at(k).N; }
  std::int64_t labels(std::size_t k) const { return strata_.at(k).t; }
  std::int64_t unsafe(std::size_t k) const { return strata_.at(k).x; }

 private:
  // Where every stratum sits at its maximiser u^_k and the sum already reaches the boundary,
  // that allocation is the minimum: each PPR_k is at its own least there.
  long double minimum(std::string_view fn, std::size_t strata, std::int64_t null_boundary,
                      bool floor_at_zero) const {
    if (strata < 1 || strata > strata_.size())
      detail::invalid(
          fn, "strata", detail::show(static_cast<std::int64_t>(strata)),
          "must lie in [1, " + detail::show(static_cast<std::int64_t>(strata_.size())) + "]");
    if (null_boundary < 1)
      detail::invalid(fn, "null_boundary", detail::show(null_boundary), "must be at least 1");
    std::vector<std::int64_t> u(strata);
    std::int64_t total = 0, most = 0;
    for (std::size_t k = 0; k < strata; ++k) {
      u[k] = maximiser(strata_[k]);
      total += u[k];
      most += strata_[k].N - (strata_[k].t - strata_[k].x);
    }
    if (most < null_boundary) return HUGE_VALL;
    if (floor_at_zero && total >= null_boundary) return 0.0L;
    long double log_value = 0.0L, error = 0.0L;
    for (std::size_t k = 0; k < strata; ++k) {
      const Stratum& s = strata_[k];
      if (s.t == 0) continue;  // L_k = 1 and m_k = 1 at u^_k: a factor 1
      detail::add_rounded(log_value, error, log_mixture(s, error));
      detail::add_rounded(log_value, error, -log_likelihood(s, u[k], error));
    }
    if (total < null_boundary)
      raise_to_boundary(strata, null_boundary - total, u, log_value, error);
    const long double value = detail::less_bound(log_value, error);
    return floor_at_zero ? std::max(0.0L, value) : value;
  }

  struct Stratum {
    std::int64_t N, t, x;
    std::vector<long double> log_m, error_m;  // log(w_i) + log Polya-urn probability, bounds
    std::vector<bool> sequence;               // the labels in order (for log L_k)
  };

  // The maximiser of L_k: L(u + 1) >= L(u) iff (u + 1)(t - x) <= x (N - u), i.e.
  // u <= x (N + 1) / t - 1; clamped to the u the labels allow. No labels: 0 (L = 1 throughout).
  static std::int64_t maximiser(const Stratum& s) {
    if (s.t == 0) return 0;
    const auto top = static_cast<std::int64_t>(static_cast<detail::int128>(s.x) * (s.N + 1) / s.t);
    return std::clamp(top, s.x, s.N - (s.t - s.x));
  }

  // log sum_i w_i m_{t,i} with its bound added to `error`.
  static long double log_mixture(const Stratum& s, long double& error) {
    const detail::MixtureLog m = detail::mixture_log(s.log_m, s.error_m);
    error += m.bound + 0x1p-58L;
    long double value = m.top;
    detail::add_rounded(value, error, m.log_sum);
    return value;
  }

  // log L_k(u) = sum over the labels of the one-step ratios (u - unsafe so far)/(N - so far)
  // or (N - u - safe so far)/(N - so far); x <= u <= N - t + x.
  static long double log_likelihood(const Stratum& s, std::int64_t u, long double& error) {
    long double log_value = 0.0L;
    std::int64_t seen = 0, bad = 0;
    for (const bool unsafe : s.sequence) {
      const std::int64_t count = unsafe ? u - bad : s.N - u - (seen - bad);
      detail::add_log_ratio(log_value, error,
                            static_cast<long double>(count) / static_cast<long double>(s.N - seen));
      ++seen;
      bad += unsafe;
    }
    return log_value;
  }

  // D_k(u) = log L_k(u) - log L_k(u + 1) >= 0 for u >= u^_k (u + 1 <= N - t + x), exactly from
  // the integer products.
  static long double decrement(const Stratum& s, std::int64_t u, long double& error) {
    const detail::int128 up = static_cast<detail::int128>(u + 1 - s.x) * (s.N - u);
    const detail::int128 down = static_cast<detail::int128>(u + 1) * (s.N - u - s.t + s.x);
    long double d = 0.0L;
    detail::add_log_ratio(d, error, static_cast<long double>(up) / static_cast<long double>(down));
    return d;
  }

  // Raise sum u_k by `need` where log L falls least: free units of unlabeled strata first,
  // then the smallest next decrement each time (they grow with u within a stratum).
  void raise_to_boundary(std::size_t strata, std::int64_t need, std::vector<std::int64_t>& u,
                         long double& log_value, long double& error) const {
    for (std::size_t k = 0; k < strata && need > 0; ++k)
      if (strata_[k].t == 0) {
        const std::int64_t free = std::min(need, strata_[k].N - u[k]);
        u[k] += free;
        need -= free;
      }
    std::vector<long double> next(strata, HUGE_VALL), next_error(strata, 0.0L);
    const auto refresh = [&](std::size_t k) {
      const Stratum& s = strata_[k];
      next_error[k] = 0.0L;
      next[k] =
          s.t > 0 && u[k] + 1 <= s.N - (s.t - s.x) ? decrement(s, u[k], next_error[k]) : HUGE_VALL;
    };
    for (std::size_t k = 0; k < strata; ++k) refresh(k);
    for (; need > 0; --need) {
      const auto k =
          static_cast<std::size_t>(std::min_element(next.begin(), next.end()) - next.begin());
      error += next_error[k];
      detail::add_rounded(log_value, error, next[k]);
      u[k] += 1;
      refresh(k);
    }
  }

  BetaMixturePrior prior_;
  std::vector<Stratum> strata_;
};

}  // namespace ltt
