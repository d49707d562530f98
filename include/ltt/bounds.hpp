#pragma once
// Finite-sample bounds used around the composition certificate: the Clopper-Pearson limits
// behind the uncertified fallback and the deployment certificate on Pr[cost > budget], the
// Maurer-Pontil bound on E[cost] (paper, appendix "policycert"), the Hoeffding-Serfling
// p-value of the mean-cost certificate, and the resampling corollary that carries a certified
// unsafe fraction through return-weighted resampling (paper, after Proposition "guarantee").
// The math, conditions and measured accuracy are in docs/bounds.md.

#include <ltt/detail/check.hpp>
#include <ltt/detail/compensated_sum.hpp>

#include <boost/math/policies/policy.hpp>
#include <boost/math/special_functions/beta.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace ltt {

// Internals of this header only; kept out of ltt::detail proper so they cannot collide with
// the shared checks in detail/check.hpp.
namespace detail::bounds {

// Arguments are validated before Boost is called, so a Boost error could only mean a failed
// root search; we never let one escape as a non-std::invalid_argument exception or set errno.
// Double promotion stays on: the root search runs in long double, which is what gives the
// accuracy measured against the exact table (docs/bounds.md).
using policy = boost::math::policies::policy<
    boost::math::policies::domain_error<boost::math::policies::ignore_error>,
    boost::math::policies::pole_error<boost::math::policies::ignore_error>,
    boost::math::policies::overflow_error<boost::math::policies::ignore_error>,
    boost::math::policies::underflow_error<boost::math::policies::ignore_error>,
    boost::math::policies::denorm_error<boost::math::policies::ignore_error>,
    boost::math::policies::evaluation_error<boost::math::policies::ignore_error>,
    boost::math::policies::rounding_error<boost::math::policies::ignore_error>,
    boost::math::policies::indeterminate_result_error<boost::math::policies::ignore_error>>;

inline void require_binomial(std::string_view function, std::int64_t successes, std::int64_t trials,
                             double delta) {
  require_count(function, "successes", successes);
  require_count(function, "trials", trials);
  require_at_most(function, "successes", successes, "trials", trials);
  require_open_unit(function, "delta", delta);
}

// Values are checked one by one so the message can name the offending index.
inline void require_in_range(std::string_view function, std::string_view parameter,
                             std::span<const double> x, double range) {
  for (std::size_t i = 0; i < x.size(); ++i)
    if (!(x[i] >= 0.0 && x[i] <= range))
      invalid(function, std::string(parameter) + "[" + std::to_string(i) + "]", show(x[i]),
              "must lie in [0, range = " + show(range) + "]");
}

inline void require_positive_finite(std::string_view function, std::string_view parameter,
                                    double x) {
  if (!(std::isfinite(x) && x > 0.0))
    invalid(function, parameter, show(x), "must be finite and > 0");
}

// Mean and unbiased variance of y = x / range in [0, 1]: Neumaier-compensated mean, then the
// corrected two-pass sum of squares (Chan, Golub & LeVeque 1983), which does not cancel the
// way E[y^2] - E[y]^2 does.
struct mean_variance {
  double mean;
  double variance;
};

inline mean_variance scaled_moments(std::span<const double> x, double range) {
  const auto n = static_cast<double>(x.size());
  CompensatedSum sum;
  for (double v : x) sum.add(v / range);
  const double mean = sum.value() / n;
  if (x.size() < 2) return {mean, 0.0};
  double ss = 0.0, s = 0.0;
  for (double v : x) {
    const double d = v / range - mean;
    ss += d * d;
    s += d;
  }
  return {mean, std::max(0.0, (ss - s * s / n) / (n - 1.0))};
}

}  // namespace detail::bounds

// One-sided lower confidence limit at level 1 - delta on a binomial proportion: the p with
// P[Bin(trials, p) >= successes] = delta. That tail equals I_p(x, n - x + 1), so p is the
// regularized-incomplete-beta inverse at delta, asked for directly as a lower beta tail.
// Returns 0 when successes == 0 (no p > 0 is excluded), and also for trials == 0.
inline double clopper_pearson_lower(std::int64_t successes, std::int64_t trials, double delta) {
  detail::bounds::require_binomial("clopper_pearson_lower", successes, trials, delta);
  if (successes == 0) return 0.0;
  const auto x = static_cast<double>(successes);
  const auto n = static_cast<double>(trials);
  const double p = boost::math::ibeta_inv(x, n - x + 1.0, delta, detail::bounds::policy());
  return std::clamp(p, 0.0, 1.0);
}

// One-sided upper confidence limit at level 1 - delta: the p with P[Bin(trials, p) <= successes]
// = delta. That tail is 1 - I_p(x + 1, n - x), so p solves the *complement* equation; ibetac_inv
// returns p itself, where 1 - ibeta_inv(n - x, x + 1, delta) would lose every digit of a small p
// to cancellation. Returns 1 when successes == trials, and for trials == 0.
inline double clopper_pearson_upper(std::int64_t successes, std::int64_t trials, double delta) {
  detail::bounds::require_binomial("clopper_pearson_upper", successes, trials, delta);
  if (successes == trials) return 1.0;
  const auto x = static_cast<double>(successes);
  const auto n = static_cast<double>(trials);
  const double p = boost::math::ibetac_inv(x + 1.0, n - x, delta, detail::bounds::policy());
  return std::clamp(p, 0.0, 1.0);
}

// Empirical-Bernstein upper confidence bound at level 1 - delta on the mean of i.i.d. values in
// [0, range], range fixed before seeing the data (Maurer & Pontil 2009, Theorem 4, rescaled
// from [0, 1]):
//   mean + sqrt(2 V ln(2/delta) / n) + 7 range ln(2/delta) / (3 (n - 1)),
// V the unbiased sample variance. ln(2/delta), not ln(1/delta): the theorem spends delta/2 on
// Bernstein's inequality and delta/2 on bounding the true variance by V. Work is done on x / range
// in [0, 1], so nothing overflows for any finite range. The result is clipped to range: the mean of
// values in [0, range] cannot exceed it, so the clip only replaces a vacuous bound by the trivial
// one and never weakens coverage.
inline double maurer_pontil_upper(std::span<const double> x, double range, double delta) {
  constexpr std::string_view fn = "maurer_pontil_upper";
  if (x.size() < 2)
    detail::invalid(fn, "x.size()", std::to_string(x.size()),
                    "must be at least 2 (the bound needs a sample variance)");
  detail::bounds::require_positive_finite(fn, "range", range);
  detail::require_open_unit(fn, "delta", delta);
  detail::bounds::require_in_range(fn, "x", x, range);

  const auto n = static_cast<double>(x.size());
  const auto [mean, variance] = detail::bounds::scaled_moments(x, range);
  const double log_term = std::log(2.0 / delta);
  const double bound =
      mean + std::sqrt(2.0 * variance * log_term / n) + 7.0 * log_term / (3.0 * (n - 1.0));
  return range * std::min(bound, 1.0);
}

// p-value for H0: "the selection's mean cost exceeds budget", from costs of n items drawn
// uniformly without replacement out of the population of the selection, each cost in
// [0, range]. Serfling (1974, Ann. Statist. 2(1), Corollary 1.1) bounds the lower deviation of
// the sample mean by
//   P[mu - mean >= t] <= exp(-2 n t^2 / ((1 - (n - 1)/population) range^2)),
// so with t = budget - mean the bound is a super-uniform p-value whenever mu >= budget; t <= 0
// gives p = 1. The factor 1 - (n - 1)/N is the finite-population correction; it reaches 1/N
// at n = N, never 0.
inline double hoeffding_serfling_pvalue(std::span<const double> sample_costs,
                                        std::int64_t population, double budget, double range) {
  constexpr std::string_view fn = "hoeffding_serfling_pvalue";
  detail::require_count(fn, "population", population);
  if (sample_costs.empty()) detail::invalid(fn, "sample_costs.size()", "0", "must be at least 1");
  const auto n_count = static_cast<std::int64_t>(sample_costs.size());
  if (n_count > population)
    detail::invalid(fn, "sample_costs.size()", detail::show(n_count),
                    "must not exceed population = " + detail::show(population) +
                        " (the sample is drawn without replacement)");
  if (!std::isfinite(budget)) detail::invalid(fn, "budget", detail::show(budget), "must be finite");
  detail::bounds::require_positive_finite(fn, "range", range);
  detail::bounds::require_in_range(fn, "sample_costs", sample_costs, range);

  const auto n = static_cast<double>(n_count);
  const double mean = detail::bounds::scaled_moments(sample_costs, range).mean;
  const double t = budget / range - mean;  // deviation in units of range; may be +inf, never NaN
  if (!(t > 0.0)) return 1.0;
  const double correction = 1.0 - (n - 1.0) / static_cast<double>(population);
  return std::exp(-2.0 * n * t * t / correction);
}

// Corollary to Proposition "guarantee": resampling a selection whose unsafe fraction is at most
// alpha with weights in [e^-kappa, e^kappa] multiplies the unsafe-to-safe odds by at most
// e^{2 kappa}, so the unsafe mass of the resampling distribution is at most
//   e^{2 kappa} alpha / (e^{2 kappa} alpha + 1 - alpha)
//     = alpha / (alpha + (1 - alpha) e^{-2 kappa}).
// The second form never overflows; for large kappa it rounds to 1, the correctly rounded
// value of a bound that is then 1 - O(e^{-2 kappa}).
inline double resampled_unsafe_bound(double alpha, double kappa) {
  constexpr std::string_view fn = "resampled_unsafe_bound";
  if (!(alpha >= 0.0 && alpha <= 1.0))
    detail::invalid(fn, "alpha", detail::show(alpha), "must lie in [0, 1]");
  if (!(std::isfinite(kappa) && kappa >= 0.0))
    detail::invalid(fn, "kappa", detail::show(kappa), "must be finite and >= 0");
  if (alpha == 0.0) return 0.0;  // 0 / 0 once e^{-2 kappa} underflows
  return alpha / (alpha + (1.0 - alpha) * std::exp(-2.0 * kappa));
}

}  // namespace ltt
