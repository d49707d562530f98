#pragma once
// Anytime-valid composition p-value: the test of H0: U >= U* = floor(alpha N_sel) + 1
// for a selection of N_sel trajectories whose labels arrive one at a time, each a uniform draw
// without replacement from the selection's unlabeled trajectories.
//
// Construction: the prior-posterior-ratio (PPR) process of Waudby-Smith and Ramdas,
// "Confidence sequences for sampling without replacement" (NeurIPS 2020). With a prior pi on U
// and t labels of which k unsafe,
//     PPR_t(u) = pi(u) / posterior_t(u) = m_t / L_t(u),
//     L_t(u) = [u]_k [N_sel - u]_{t-k} / [N_sel]_t   (probability of the label sequence if U = u)
//     m_t    = sum_v pi(v) L_t(v)                     (its prior mixture)
// and under U = u, PPR_t(u) is a test supermartingale (nonnegative, PPR_0(u) = 1): a label
// multiplies it by m_{t+1}/m_t over L_{t+1}(u)/L_t(u), whose conditional mean is the mixture's
// predictive mass on the outcomes possible under u, 1 while both are, less once u leaves no
// unsafe (or no safe) trajectory unlabeled that the mixture still weights. So Ville's
// inequality gives Pr[exists t: PPR_t(u) >= 1/delta] <= delta. Hence
//     p_t = 1 / max(1, max_{s <= t} min_{u >= U*} PPR_s(u))
// satisfies Pr[exists t: p_t <= delta] <= delta under every U >= U*: it is valid at any
// stopping time, however chosen, and nonincreasing in t. The prior is a finite mixture of
// beta-binomials, sum_i w_i BetaBin(N_sel, a_i, b_i), whose m_t is the same mixture of Polya-urn
// probabilities B(k + a_i, t - k + b_i) / B(a_i, b_i); a mixture of priors is a prior, so
// nothing in the argument changes (BetaMixturePrior; sequential_default_prior is the
// mixture the sequential walk uses).
//
// The minimum over u >= U* costs O(1), not O(N_sel): u -> L_t(u) is log-concave (a product of
// falling factorials), so if L_t(U* + 1) <= L_t(U*) (decided in exact integer arithmetic) the
// constrained maximum of L_t, hence the minimum of PPR_t, is at U*; otherwise it is at the
// global maximiser of L_t, where PPR_t <= 1 since m_t is an average of L_t(v) <= max L_t; such
// a step cannot raise the running maximum, which starts at 1. So only log L_t(U*) and each
// component's log Polya-urn probability are carried, updated per label by the one-step
// predictive ratios
//     unsafe:  log[(k + a_i)/(t + a_i + b_i)],    log[(U* - k)/(N_sel - t)]
//     safe:    log[(t - k + b_i)/(t + a_i + b_i)], log[(N_sel - U* - t + k)/(N_sel - t)].
// Two absorbing cases are exact: k > U* (L_t(U*) = 0 forever: p frozen) and
// t - k > N_sel - U* (no u >= U* fits the safe labels: H0 is impossible, p = 0).
//
// Rounding: each step's ratio is formed and logged in long double (a few units of 2^-64); a
// running bound on the accumulated error, |term| 2^-62 + 2^-60 per step and term for the log,
// 2^-63 of the new sum's magnitude for each addition (a sum of 6e4 errs by 3e-15 per addition,
// whatever the term), plus 2^-58 for the mixture's log-sum-exp, is subtracted before
// exponentiating, and the result is rounded up like composition_pvalue, so p_t is never below
// the value exact arithmetic gives, at any label count. tests/ltt/sequential_pvalue.test.cpp
// checks it against the definition (posterior normalised over every u, minimum over u >= U*) on
// small selections, and against a __float128 reference after 200,000 labels from a selection
// of 4,000,000.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

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

// A finite mixture sum_i weights[i] BetaBin(N_sel, components[i]); weights positive, summing
// to 1 (normalised on construction). A single beta-binomial converts to a one-term mixture.
struct BetaMixturePrior {
  std::vector<BetaBinomialPrior> components{BetaBinomialPrior{}};
  std::vector<double> weights{1.0};

  BetaMixturePrior() = default;
  BetaMixturePrior(BetaBinomialPrior single) : components{single} {}  // NOLINT: implicit on purpose
  BetaMixturePrior(std::vector<BetaBinomialPrior> c, std::vector<double> w)
      : components(std::move(c)), weights(std::move(w)) {
    constexpr std::string_view fn = "ltt::BetaMixturePrior";
    if (components.empty()) detail::invalid(fn, "components", "{}", "must not be empty");
    if (weights.size() != components.size())
      detail::invalid(fn, "weights.size()", detail::show(static_cast<std::int64_t>(weights.size())),
                      "must equal components.size() = " +
                          detail::show(static_cast<std::int64_t>(components.size())));
    double total = 0.0;
    for (const double w_i : weights) {
      detail::bounds::require_positive_finite(fn, "weights", w_i);
      total += w_i;
    }
    for (double& w_i : weights) w_i /= total;
  }
};

// The sequential walk's default prior at risk target alpha: an equal mixture of Beta(1, b) on
// the unsafe fraction with means 0.4 alpha and 0.08 alpha (Beta(1, 9) and Beta(1, 49) at
// alpha = 0.25). Mass well below alpha is where a certifiable selection lives; two scales keep
// the power when the unsafe fraction is near zero and when it is a fair part of alpha. Chosen
// by Monte Carlo on the graded pools of docs/sequential.md, before any label: validity does not
// depend on it.
inline BetaMixturePrior sequential_default_prior(double alpha) {
  detail::require_open_unit("ltt::sequential_default_prior", "alpha", alpha);
  const auto beta_with_mean = [](double mean) { return BetaBinomialPrior{1.0, 1.0 / mean - 1.0}; };
  return {{beta_with_mean(0.4 * alpha), beta_with_mean(0.08 * alpha)}, {0.5, 0.5}};
}

namespace detail {

// sum += term in long double with a bound on the addition's rounding added to `error`: round
// to nearest errs by at most 2^-64 |exact sum|, bounded here by 2^-63 of the rounded one. The
// error of a running sum grows with its magnitude, not with the term's (200,000
// labels give |log L| near 6e4, where one addition errs by up to 3e-15).
inline void add_rounded(long double& sum, long double& error, long double term) {
  sum += term;
  error += std::fabs(sum) * 0x1p-63L;
}

// log_value += log(ratio), the ratio formed and logged in long double (|term| 2^-62 + 2^-60),
// the addition bounded by add_rounded (the sequential and stratified evidence share it).
inline void add_log_ratio(long double& log_value, long double& error, long double ratio) {
  const long double term = std::log(ratio);
  error += std::fabs(term) * 0x1p-62L + 0x1p-60L;
  add_rounded(log_value, error, term);
}

// The prior mixture's log marginal, log sum_i exp(log_m[i]) (log_m[i] = log w_i + log of component
// i's Polya-urn probability), in pieces: the largest term, the largest of the terms' rounding
// bounds, and log sum_i exp(log_m[i] - top). Its own rounding is the 2^-58 that the callers add.
// The largest term's exp(0) is exactly 1 and is not evaluated (half the exp calls of a
// two-component prior).
struct MixtureLog {
  long double top = -HUGE_VALL, bound = 0.0L, log_sum = 0.0L;
};

inline MixtureLog mixture_log(std::span<const long double> log_m,
                              std::span<const long double> error_m) {
  MixtureLog m;
  for (std::size_t i = 0; i < log_m.size(); ++i) {
    m.top = std::max(m.top, log_m[i]);
    m.bound = std::max(m.bound, error_m[i]);
  }
  long double sum = 0.0L;
  for (const long double l : log_m) sum += l == m.top ? 1.0L : std::exp(l - m.top);
  m.log_sum = std::log(sum);
  return m;
}

// One label's step of each component's log Polya-urn probability (t labels before it, k of them
// unsafe): log m_i += log[(k + a_i)/(t + a_i + b_i)] if unsafe, log[(t - k + b_i)/(t + a_i +
// b_i)] if safe.
inline void advance_mixture(const BetaMixturePrior& prior, std::int64_t t_labels,
                            std::int64_t k_unsafe, bool unsafe, std::span<long double> log_m,
                            std::span<long double> error_m) {
  const long double t = static_cast<long double>(t_labels), k = static_cast<long double>(k_unsafe);
  for (std::size_t i = 0; i < log_m.size(); ++i) {
    const long double a = prior.components[i].a, b = prior.components[i].b;
    add_log_ratio(log_m[i], error_m[i], (unsafe ? k + a : t - k + b) / (t + a + b));
  }
}

// The mixture's pieces after each prefix of a label sequence (entry t: after t labels), for
// tests of several null boundaries on the same labels: the mixture does not depend on the
// boundary, so anytime_unsafe_upper_bound's binary search computes it once.
inline std::vector<MixtureLog> mixture_path(const BetaMixturePrior& prior,
                                            std::span<const std::uint8_t> labels) {
  std::vector<long double> log_m, error_m(prior.weights.size(), 0.0L);
  for (const double w : prior.weights) log_m.push_back(std::log(static_cast<long double>(w)));
  std::vector<MixtureLog> path;
  path.reserve(labels.size() + 1);
  path.push_back(mixture_log(log_m, error_m));
  std::int64_t k = 0;
  for (std::size_t t = 0; t < labels.size(); ++t) {
    advance_mixture(prior, static_cast<std::int64_t>(t), k, labels[t] != 0, log_m, error_m);
    k += labels[t] != 0;
    path.push_back(mixture_log(log_m, error_m));
  }
  return path;
}

// value less its rounding bound, the subtraction's own rounding included: never above the
// exact value that `value` approximates to within `error`.
inline long double less_bound(long double value, long double error) {
  return value - (error + std::fabs(value) * 0x1p-62L);
}

}  // namespace detail

// The anytime p-value 1 / max(1, E) from log E, a running maximum of evidence (>= 0, less its
// rounding bound; +infinity when H0 is impossible), rounded up; never below its exact value.
inline double anytime_pvalue(long double log_evidence) {
  if (log_evidence == HUGE_VALL) return 0.0;
  if (log_evidence <= 0.0L) return 1.0;
  // Below the double range the exact value is still positive: return the least one.
  const double p = detail::round_up_pvalue(static_cast<double>(std::exp(-log_evidence)));
  return std::max(p, std::numeric_limits<double>::denorm_min());
}

class SequentialCompositionPvalue {
 public:
  // H0: U >= null_boundary in a selection of N_sel; 1 <= null_boundary <= N_sel.
  SequentialCompositionPvalue(std::int64_t N_sel, std::int64_t null_boundary,
                              BetaMixturePrior prior = {})
      : N_(N_sel), U_(null_boundary), prior_(std::move(prior)) {
    constexpr std::string_view fn = "ltt::SequentialCompositionPvalue";
    detail::require_count(fn, "N_sel", N_sel);
    if (N_sel < 1) detail::invalid(fn, "N_sel", detail::show(N_sel), "must be at least 1");
    if (null_boundary < 1 || null_boundary > N_sel)
      detail::invalid(fn, "null_boundary", detail::show(null_boundary),
                      "must lie in [1, N_sel = " + detail::show(N_sel) + "]");
    for (const BetaBinomialPrior& c : prior_.components) {
      detail::bounds::require_positive_finite(fn, "prior.a", c.a);
      detail::bounds::require_positive_finite(fn, "prior.b", c.b);
    }
    for (const double w : prior_.weights) log_m_.push_back(std::log(static_cast<long double>(w)));
    error_m_.assign(log_m_.size(), 0.0L);
  }

  SequentialCompositionPvalue(std::int64_t N_sel, std::int64_t null_boundary,
                              BetaBinomialPrior prior)
      : SequentialCompositionPvalue(N_sel, null_boundary, BetaMixturePrior(prior)) {}

  // The composition test's H0 at risk target alpha: U* = floor(alpha N_sel) + 1.
  static SequentialCompositionPvalue at_level(std::int64_t N_sel, double alpha,
                                              BetaMixturePrior prior = {}) {
    return {N_sel, ltt::null_boundary(N_sel, alpha), std::move(prior)};
  }

  // One more label from the selection (unsafe or not). At most N_sel labels.
  void update(bool unsafe) {
    if (t_ >= N_)
      detail::invalid("ltt::SequentialCompositionPvalue::update", "labels", detail::show(t_ + 1),
                      "must not exceed N_sel = " + detail::show(N_) +
                          " (labels are drawn without replacement)");
    if (!frozen_ && !impossible_) {
      if (unsafe && k_ >= U_) {
        frozen_ = true;  // k + 1 > U*: L(U*) = 0 from now on
      } else if (!unsafe && N_ - U_ - (t_ - k_) <= 0) {
        impossible_ = true;  // no safe trajectory left if U = U*
      } else {
        advance(unsafe);
      }
    }
    ++t_;
    k_ += unsafe;
    if (!frozen_ && !impossible_ && minimum_at_boundary())
      log_max_ = std::max(log_max_, log_ppr_at_boundary());
  }

  // p_t = 1 / max(1, max_{s <= t} min_{u >= U*} PPR_s(u)), never below its exact value.
  double pvalue() const { return anytime_pvalue(log_evidence()); }

  // log of the running maximum of min_{u >= U*} PPR_s(u) (>= 0; +inf when H0 is impossible),
  // less the rounding bound: log(1/p) without the underflow of p.
  long double log_evidence() const { return impossible_ ? HUGE_VALL : log_max_; }

  std::int64_t N_sel() const { return N_; }
  std::int64_t null_boundary() const { return U_; }
  std::int64_t labels() const { return t_; }
  std::int64_t unsafe() const { return k_; }
  const BetaMixturePrior& prior() const { return prior_; }

 private:
  // The one-step predictive ratios of L_t(U*) and of each component's Polya urn.
  void advance(bool unsafe) {
    const long double left = static_cast<long double>(N_ - t_);
    const long double boundary_count =
        static_cast<long double>(unsafe ? U_ - k_ : N_ - U_ - (t_ - k_));
    detail::add_log_ratio(log_L_, error_L_, boundary_count / left);
    if (!replay_) detail::advance_mixture(prior_, t_, k_, unsafe, log_m_, error_m_);
  }

  // log PPR_t(U*) = log sum_i w_i m_{t,i} - log L_t(U*), less its rounding bound. While the
  // test is live (not frozen, not impossible) the mixture has taken every label so far, so a
  // replayed path's entry t is the same value bit for bit.
  long double log_ppr_at_boundary() const {
    const detail::MixtureLog m =
        replay_ ? (*replay_)[static_cast<std::size_t>(t_)] : detail::mixture_log(log_m_, error_m_);
    long double error = m.bound;
    error += error_L_ + 0x1p-58L;
    long double value = m.top;
    detail::add_rounded(value, error, m.log_sum);
    detail::add_rounded(value, error, -log_L_);
    return detail::less_bound(value, error);
  }

  // L(U* + 1) <= L(U*) for the current (t, k) with k <= U*, exactly:
  // (U* + 1)(N - U* - t + k) <= (U* + 1 - k)(N - U*).
  bool minimum_at_boundary() const {
    if (U_ == N_) return true;
    const detail::int128 lhs = static_cast<detail::int128>(U_ + 1) * (N_ - U_ - t_ + k_);
    const detail::int128 rhs = static_cast<detail::int128>(U_ + 1 - k_) * (N_ - U_);
    return lhs <= rhs;
  }

  friend std::int64_t anytime_unsafe_upper_bound(std::span<const std::uint8_t>, std::int64_t,
                                                 double, BetaMixturePrior);

  // The test of one boundary on labels whose mixture path (detail::mixture_path, prior
  // `prior`) was computed beforehand: only L_t(U*) is updated per label.
  SequentialCompositionPvalue(std::int64_t N_sel, std::int64_t null_boundary,
                              BetaMixturePrior prior, const std::vector<detail::MixtureLog>* replay)
      : SequentialCompositionPvalue(N_sel, null_boundary, std::move(prior)) {
    replay_ = replay;
  }

  std::int64_t N_, U_;
  BetaMixturePrior prior_;
  const std::vector<detail::MixtureLog>* replay_ = nullptr;  // the mixture precomputed, or none
  std::int64_t t_ = 0, k_ = 0;
  long double log_L_ = 0.0L;          // log L_t(U*)
  long double error_L_ = 0.0L;        // bound on its accumulated rounding error
  std::vector<long double> log_m_;    // log(w_i) + log of component i's Polya-urn probability
  std::vector<long double> error_m_;  // their rounding bounds
  long double log_max_ = 0.0L;        // running max of log min_u PPR_s(u) (at least 0: s = 0)
  bool frozen_ = false;               // k > U*: the minimum never returns to U*
  bool impossible_ = false;           // t - k > N - U*: every u >= U* is excluded
};

// The anytime p-value after the whole label sequence (0 safe, 1 unsafe) from the selection.
inline double sequential_composition_pvalue(std::span<const std::uint8_t> labels,
                                            std::int64_t N_sel, double alpha,
                                            BetaMixturePrior prior = {}) {
  constexpr std::string_view fn = "ltt::sequential_composition_pvalue";
  detail::require_open_unit(fn, "alpha", alpha);
  detail::require_count(fn, "N_sel", N_sel);
  detail::require_at_most(fn, "labels.size()", static_cast<std::int64_t>(labels.size()), "N_sel",
                          N_sel);
  auto p = SequentialCompositionPvalue::at_level(N_sel, alpha, std::move(prior));
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] > 1)
      detail::invalid(fn, "labels[" + std::to_string(i) + "]",
                      detail::show(std::int64_t{labels[i]}), "must be 0 or 1");
    p.update(labels[i] != 0);
  }
  return p.pvalue();
}

// The anytime upper confidence bound on the unsafe count U of a selection of N_sel from its
// labels in draw order (0 safe, 1 unsafe; each a uniform draw without replacement): b - 1 for
// the smallest b above the unsafe labels at which H0: U >= b is rejected at level delta by the
// anytime p-value above (prior `prior`), found by binary search; N_sel if none is. Pr[exists t: U >
// bound_t] <= delta under every U, so the bound holds at any stopping time: U > bound_t needs some
// b <= U rejected, and min_{u >= b} PPR_s(u) <= PPR_s(U), whose crossing of 1/delta has probability
// at most delta (Ville). That holds for whichever rejected b is reported, so the binary search over
// b (the exact p-value is nonincreasing in b) needs no exact monotonicity of the rounded one. O(t
// log N_sel), the prior's mixture (which does not depend on b) computed once.
inline std::int64_t anytime_unsafe_upper_bound(std::span<const std::uint8_t> labels,
                                               std::int64_t N_sel, double delta,
                                               BetaMixturePrior prior = {}) {
  constexpr std::string_view fn = "ltt::anytime_unsafe_upper_bound";
  detail::require_open_unit(fn, "delta", delta);
  detail::require_count(fn, "N_sel", N_sel);
  if (N_sel < 1) detail::invalid(fn, "N_sel", detail::show(N_sel), "must be at least 1");
  detail::require_at_most(fn, "labels.size()", static_cast<std::int64_t>(labels.size()), "N_sel",
                          N_sel);
  std::int64_t unsafe = 0;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] > 1)
      detail::invalid(fn, "labels[" + std::to_string(i) + "]",
                      detail::show(std::int64_t{labels[i]}), "must be 0 or 1");
    unsafe += labels[i];
  }
  const std::vector<detail::MixtureLog> mixture = detail::mixture_path(prior, labels);
  const auto rejected = [&](std::int64_t b) {
    SequentialCompositionPvalue p(N_sel, b, prior, &mixture);
    for (const std::uint8_t x : labels) p.update(x != 0);
    return p.pvalue() <= delta;
  };
  // H0: U >= b with b <= unsafe is true of the labels themselves: never rejected.
  std::int64_t lo = unsafe, hi = N_sel + 1;  // b = lo not rejected; b = hi stands for "none"
  if (unsafe == N_sel || !rejected(N_sel)) return N_sel;
  hi = N_sel;
  while (hi - lo > 1) {
    const std::int64_t mid = lo + (hi - lo) / 2;
    (rejected(mid) ? hi : lo) = mid;
  }
  return hi - 1;
}

}  // namespace ltt
