#pragma once
// Anytime-valid composition p-value (issue 16): the test of H0: U >= U* = floor(alpha N_sel) + 1
// for a selection of N_sel trajectories whose labels arrive one at a time, each a uniform draw
// without replacement from the selection's unlabeled trajectories.
//
// Construction: the prior-posterior-ratio (PPR) martingale of Waudby-Smith and Ramdas,
// "Confidence sequences for sampling without replacement" (NeurIPS 2020). With a beta-binomial
// prior on U (uniform on {0..N_sel} for a = b = 1) and t labels of which k unsafe,
//     PPR_t(u) = prior(u) / posterior_t(u) = m_t / L_t(u),
//     L_t(u) = [u]_k [N_sel - u]_{t-k} / [N_sel]_t   (probability of the label sequence if U = u)
//     m_t    = B(k + a, t - k + b) / B(a, b)           (its prior mixture: a Polya urn)
// and under U = u, PPR_t(u) is a nonnegative martingale with PPR_0(u) = 1, so Ville's
// inequality gives Pr[exists t: PPR_t(u) >= 1/delta] <= delta. Hence
//     p_t = 1 / max(1, max_{s <= t} min_{u >= U*} PPR_s(u))
// satisfies Pr[exists t: p_t <= delta] <= delta under every U >= U*: it is valid at any
// stopping time, however chosen, and nonincreasing in t.
//
// The minimum over u >= U* costs O(1), not O(N_sel): u -> L_t(u) is log-concave (a product of
// falling factorials), so if L_t(U* + 1) <= L_t(U*) (decided in exact integer arithmetic) the
// constrained maximum of L_t, hence the minimum of PPR_t, is at U*; otherwise it is at the
// global maximiser of L_t, where PPR_t <= 1 since m_t is an average of L_t(v) <= max L_t; such
// a step cannot raise the running maximum, which starts at 1. So only log PPR_t(U*) is
// carried, updated per label by the one-step predictive ratio
//     unsafe:  log[(k + a)/(t + a + b)] - log[(U* - k)/(N_sel - t)]
//     safe:    log[(t - k + b)/(t + a + b)] - log[(N_sel - U* - t + k)/(N_sel - t)].
// Two absorbing cases are exact: k > U* (L_t(U*) = 0 forever: p frozen) and
// t - k > N_sel - U* (no u >= U* fits the safe labels: H0 is impossible, p = 0).
//
// Rounding: each step's ratio is formed and logged in long double (a few units of 2^-64); a
// running bound on the accumulated error, |term| 2^-62 + 2^-60 per step, is subtracted before
// exponentiating, and the result is rounded up like composition_pvalue, so p_t is never below
// the value exact arithmetic gives. tests/ltt/sequential_pvalue.test.cpp checks it against the
// definition (posterior normalised over every u, minimum over u >= U*) on small selections.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>

#include <ltt/bounds.hpp>
#include <ltt/detail/check.hpp>
#include <ltt/detail/int128.hpp>
#include <ltt/pvalue.hpp>

namespace ltt {

// Beta-binomial prior on the unsafe count: U ~ BetaBin(N_sel, a, b); a = b = 1 is uniform.
struct BetaBinomialPrior {
  double a = 1.0;
  double b = 1.0;
};

class SequentialCompositionPvalue {
 public:
  // H0: U >= null_boundary in a selection of N_sel; 1 <= null_boundary <= N_sel.
  SequentialCompositionPvalue(std::int64_t N_sel, std::int64_t null_boundary,
                              BetaBinomialPrior prior = {})
      : N_(N_sel), U_(null_boundary), a_(prior.a), b_(prior.b) {
    constexpr std::string_view fn = "ltt::SequentialCompositionPvalue";
    detail::require_count(fn, "N_sel", N_sel);
    if (N_sel < 1) detail::invalid(fn, "N_sel", detail::show(N_sel), "must be at least 1");
    if (null_boundary < 1 || null_boundary > N_sel)
      detail::invalid(fn, "null_boundary", detail::show(null_boundary),
                      "must lie in [1, N_sel = " + detail::show(N_sel) + "]");
    detail::bounds::require_positive_finite(fn, "prior.a", prior.a);
    detail::bounds::require_positive_finite(fn, "prior.b", prior.b);
  }

  // The composition test's H0 at risk target alpha: U* = floor(alpha N_sel) + 1.
  static SequentialCompositionPvalue at_level(std::int64_t N_sel, double alpha,
                                              BetaBinomialPrior prior = {}) {
    return {N_sel, ltt::null_boundary(N_sel, alpha), prior};
  }

  // One more label from the selection (unsafe or not). At most N_sel labels.
  void update(bool unsafe) {
    if (t_ >= N_)
      detail::invalid("ltt::SequentialCompositionPvalue::update", "labels", detail::show(t_ + 1),
                      "must not exceed N_sel = " + detail::show(N_) +
                          " (labels are drawn without replacement)");
    const long double t = static_cast<long double>(t_), k = static_cast<long double>(k_);
    const long double left = static_cast<long double>(N_ - t_);
    const long double mixture_den = t + a_ + b_;
    if (unsafe) {
      if (!frozen_ && !impossible_) {
        if (k_ >= U_) {
          frozen_ = true;  // k + 1 > U*: L(U*) = 0 from now on
        } else {
          add((k + a_) * left / (mixture_den * static_cast<long double>(U_ - k_)));
        }
      }
      ++k_;
    } else {
      if (!frozen_ && !impossible_) {
        const std::int64_t room = N_ - U_ - (t_ - k_);  // safe trajectories left if U = U*
        if (room <= 0) {
          impossible_ = true;
        } else {
          add((t - k + b_) * left / (mixture_den * static_cast<long double>(room)));
        }
      }
    }
    ++t_;
    if (!frozen_ && !impossible_ && minimum_at_boundary())
      log_max_ = std::max(log_max_, log_ppr_ - error_);
  }

  // p_t = 1 / max(1, max_{s <= t} min_{u >= U*} PPR_s(u)), never below its exact value.
  double pvalue() const {
    if (impossible_) return 0.0;
    if (log_max_ <= 0.0L) return 1.0;
    // Below the double range the exact value is still positive: return the least one.
    const double p = detail::round_up_pvalue(static_cast<double>(std::exp(-log_max_)));
    return std::max(p, std::numeric_limits<double>::denorm_min());
  }

  // log of the running maximum of min_{u >= U*} PPR_s(u) (>= 0; +inf when H0 is impossible),
  // less the rounding bound: log(1/p) without the underflow of p.
  long double log_evidence() const {
    return impossible_ ? HUGE_VALL : log_max_;
  }

  std::int64_t N_sel() const { return N_; }
  std::int64_t null_boundary() const { return U_; }
  std::int64_t labels() const { return t_; }
  std::int64_t unsafe() const { return k_; }
  BetaBinomialPrior prior() const { return {a_, b_}; }

 private:
  void add(long double ratio) {
    const long double term = std::log(ratio);
    log_ppr_ += term;
    error_ += std::fabs(term) * 0x1p-62L + 0x1p-60L;
  }

  // L(U* + 1) <= L(U*) for the current (t, k) with k <= U*, exactly:
  // (U* + 1)(N - U* - t + k) <= (U* + 1 - k)(N - U*).
  bool minimum_at_boundary() const {
    if (U_ == N_) return true;
    const detail::int128 lhs = static_cast<detail::int128>(U_ + 1) * (N_ - U_ - t_ + k_);
    const detail::int128 rhs = static_cast<detail::int128>(U_ + 1 - k_) * (N_ - U_);
    return lhs <= rhs;
  }

  std::int64_t N_, U_;
  double a_, b_;
  std::int64_t t_ = 0, k_ = 0;
  long double log_ppr_ = 0.0L;  // log PPR_t(U*)
  long double error_ = 0.0L;    // bound on its accumulated rounding error
  long double log_max_ = 0.0L;  // running max of log min_u PPR_s(u) (at least 0: s = 0)
  bool frozen_ = false;         // k > U*: the minimum never returns to U*
  bool impossible_ = false;     // t - k > N - U*: every u >= U* is excluded
};

// The anytime p-value after the whole label sequence (0 safe, 1 unsafe) from the selection.
inline double sequential_composition_pvalue(std::span<const std::uint8_t> labels,
                                            std::int64_t N_sel, double alpha,
                                            BetaBinomialPrior prior = {}) {
  constexpr std::string_view fn = "ltt::sequential_composition_pvalue";
  detail::require_open_unit(fn, "alpha", alpha);
  detail::require_count(fn, "N_sel", N_sel);
  detail::require_at_most(fn, "labels.size()", static_cast<std::int64_t>(labels.size()), "N_sel",
                          N_sel);
  auto p = SequentialCompositionPvalue::at_level(N_sel, alpha, prior);
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] > 1)
      detail::invalid(fn, "labels[" + std::to_string(i) + "]", detail::show(std::int64_t{labels[i]}),
                      "must be 0 or 1");
    p.update(labels[i] != 0);
  }
  return p.pvalue();
}

}  // namespace ltt
