#pragma once
// Betting p-value for H0: "the mean cost of a population of N items, each in [0, range], is at
// least budget", from a sample drawn uniformly without replacement, read in draw order. It is
// the capital process of Waudby-Smith & Ramdas ("Estimating means of bounded random variables
// by betting", JRSS-B 2024; "Confidence sequences for sampling without replacement", NeurIPS
// 2020) for the one-sided null, with a bet chosen so that it rejects whenever the
// Hoeffding-Serfling p-value (bounds.hpp) rejects at the same level. docs/bounds.md has the
// derivation and the measured label saving (bench/betting_mean_bound.bench.cpp).
//
// Work on x = cost / range in [0, 1], b = budget / range. Under the boundary null (mean = b),
// after draws x_1..x_{i-1} with sum S_{i-1}, the N - i + 1 items left have mean
//   mu_i = (N b - S_{i-1}) / (N - i + 1),
// and that is the conditional mean of draw i; under any population with mean >= b it is at
// least mu_i. So with a predictable bet lambda_i >= 0 that keeps 1 - lambda_i (x - mu_i) >= 0
// on [0, 1], the capital K_t = prod_{i<=t} (1 - lambda_i (x_i - mu_i)) has
// E[K_t | past] <= K_{t-1}: a nonnegative supermartingale for every population in H0, and by
// Ville's inequality P[max_t K_t >= 1/delta] <= delta. p = min(1, 1 / max_t K_t) is therefore
// a p-value at every stopping time (anytime-valid), whatever the sample size turns out to be.
//
// The bet. For s_i > 0, with a_i = 1 - e^{-s_i}, draw i multiplies the capital by
//   (1 - a_i x_i) / (1 - a_i mu_i),          i.e. lambda_i = a_i / (1 - a_i mu_i),
// which is positive on [0, 1] (it is e^{-s_i} / (1 - a_i mu_i) at x = 1). 1 - a x is the chord
// of the convex e^{-s x} over [0, 1], so it is >= e^{-s x} there, and Hoeffding's lemma for the
// Bernoulli(mu) extreme case reads e^{s mu} (1 - a mu) <= e^{s^2 / 8}; together
//   log factor_i >= s_i (mu_i - x_i) - s_i^2 / 8.                                   (1)
// Take s_i = s / (N - i) for i < N. Z_k = (S_k - k b) / (N - k) has increments
// (x_k - mu_k) / (N - k) (Serfling's martingale), so summing (1) over i <= n < N telescopes:
//   log K_n >= s W - s^2 v_n / 8,   W = (n b - S_n) / (N - n),   v_n = sum_{i<=n} 1/(N - i)^2.
// The Hoeffding-Serfling p-value exp(-2 n t^2 / (1 - (n - 1)/N)), t = b - S_n / n, is
// exp(-2 W^2 / V_n) with V_n = n (N - n + 1) / (N (N - n)^2), and v_n <= V_n (equality at
// n = 1; V_n - V_{n-1} - 1/(N - n)^2 = (n - 1) / (N (N - n) (N - n + 1)^2) >= 0). With the
// horizon h = n and s = sqrt(8 ln(1/delta) / v_n), the bound (1) gives log K_n >= ln(1/delta)
// whenever W >= sqrt(ln(1/delta) v_n / 2), which Hoeffding-Serfling's rejection
// W >= sqrt(ln(1/delta) V_n / 2) implies: at level delta this test rejects every sample that
// Hoeffding-Serfling rejects, up to rounding. Beyond that it gains on samples of small
// variance: log(1 - a x) exceeds -s x by about s^2 x (1 - x) / 2, which (1) throws away.
// (A step that bets nothing, below, satisfies (1) too when mu_i <= 0.) s depends only on delta
// and the planned sample size h, and lambda_i on the past draws through mu_i, so the bet is
// predictable; a run that stops before or after h is still valid, only tuned for h.
//
// Certain outcomes. Once S_t + (N - t) < N b (even items all of cost range cannot lift the
// mean to the budget) H0 is impossible and p = 0; this covers budget > range and the full
// census (n = N) with mean below budget. A step with mu_i <= 0 (H0 already certain) or
// mu_i >= 1 (only reachable by rounding next to an impossibility) bets nothing.

#include <ltt/bounds.hpp>
#include <ltt/detail/check.hpp>
#include <ltt/detail/compensated_sum.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace ltt {

// sample_costs: x_1..x_n in draw order (the order must be uniformly random given the items,
// e.g. the labeling order of a uniform draw); population: N; horizon: the sample size the bet
// is tuned for, 0 meaning sample_costs.size() (the setting under which the comparison with
// hoeffding_serfling_pvalue above holds). Returns min(1, 1 / max_{t<=n} K_t), or 0 once H0 is
// impossible.
inline double betting_mean_pvalue(std::span<const double> sample_costs, std::int64_t population,
                                  double budget, double range, double delta,
                                  std::int64_t horizon = 0) {
  constexpr std::string_view fn = "betting_mean_pvalue";
  detail::require_count(fn, "population", population);
  if (sample_costs.empty()) detail::invalid(fn, "sample_costs.size()", "0", "must be at least 1");
  const auto n = static_cast<std::int64_t>(sample_costs.size());
  if (n > population)
    detail::invalid(fn, "sample_costs.size()", detail::show(n),
                    "must not exceed population = " + detail::show(population) +
                        " (the sample is drawn without replacement)");
  if (!std::isfinite(budget)) detail::invalid(fn, "budget", detail::show(budget), "must be finite");
  detail::bounds::require_positive_finite(fn, "range", range);
  detail::require_open_unit(fn, "delta", delta);
  detail::require_count(fn, "horizon", horizon);
  detail::require_at_most(fn, "horizon", horizon, "population", population);
  detail::bounds::require_in_range(fn, "sample_costs", sample_costs, range);

  const auto N = static_cast<double>(population);
  const double b = budget / range;
  if (!(b > 0.0)) return 1.0;  // every population with costs >= 0 has mean >= b
  // The bet is tuned on s_i = s / (N - i), i <= h < N; a full census leaves nothing to tune.
  const std::int64_t h = std::min(horizon == 0 ? n : horizon, population - 1);
  double s = 0.0;
  if (h > 0) {
    detail::CompensatedSum v;
    for (std::int64_t i = h; i >= 1; --i) {  // small terms first
      const auto left = static_cast<double>(population - i);
      v.add(1.0 / (left * left));
    }
    s = std::sqrt(8.0 * std::log(1.0 / delta) / v.value());
  }
  const double target = N * b;  // N b, what the whole population sums to on the boundary
  // H0 is declared impossible only with this much to spare: a relative 1e-12 of the total
  // scale, far above the rounding of the compensated sums, so p = 0 is never an artefact.
  const double guard = 1e-12 * (N + target);
  if (N < target - guard) return 0.0;  // budget above range: no population reaches it

  detail::CompensatedSum sum;  // S_{i-1}
  double log_capital = 0.0, best = 0.0;
  for (std::int64_t i = 1; i <= n; ++i) {
    const double x = sample_costs[static_cast<std::size_t>(i - 1)] / range;
    const double left = static_cast<double>(population - i + 1);
    const double mu = (target - sum.value()) / left;
    if (s > 0.0 && i < population && mu > 0.0 && mu < 1.0) {
      // log(1 - a y) = log((1 - y) + y e^{-s_i}): log1p while a is small, the second form once
      // a nears 1 (s_i grows like N / (N - i)), where a rounds to 1 and log1p(-a) to -inf.
      const double s_i = s / static_cast<double>(population - i);
      const double a = -std::expm1(-s_i), e = std::exp(-s_i);
      const auto log_chord = [a, e](double y) {
        return a < 0.5 ? std::log1p(-a * y) : std::log((1.0 - y) + y * e);
      };
      log_capital += log_chord(x) - log_chord(mu);
      best = std::max(best, log_capital);
    }
    sum.add(x);
    if (sum.value() + static_cast<double>(population - i) < target - guard) return 0.0;
  }
  return std::min(1.0, std::exp(-best));
}

}  // namespace ltt
