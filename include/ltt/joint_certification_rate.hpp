#pragma once
// The certification rate at several budgets b_1 < ... < b_K (paper, Proposition "certification
// rate", extended to the procedures of <ltt/several_budgets.hpp>): the probability, over the
// uniform calibration draw, that the first grid step rejects every budget's hypothesis,
//     p_1k = composition_pvalue(k_1k, m, N1, alpha_k) <= level_k   for every k.
// Under one threshold for all budgets (level_k = delta) that is the certification rate itself:
// the strict walk on max_k p_jk certifies iff its first step rejects. Under one threshold per
// budget (level_k = delta_k) it is the rate at which every budget is certified; one budget's
// own rate is certification_rate(N, N1, U1_k, n, alpha_k, delta_k).
//
// The first selection S_1 holds N1 trajectories, U1_k of them over b_k; the unsafe sets are
// nested, so U1_1 >= U1_2 >= ... >= U1_K, and S_1 splits into bands of sizes
//     V_0 = N1 - U1_1,  V_b = U1_b - U1_{b+1} (0 < b < K),  V_K = U1_K.
// m ~ Hyp(N, N1, n) draws land in S_1; given m their band counts are multivariate
// hypergeometric, and k_1k = Y_k, the draws in bands k..K. The multivariate law is a chain of
// univariate ones from the loosest band down:
//     X_K ~ Hyp(N1, V_K, m),  X_b | X_{b+1..K} ~ Hyp(N1 - V_{b+1} - ... - V_K, V_b, m - Y_{b+1}),
// and Y_k = Y_{k+1} + X_k. So
//     rate = sum_m P[m] c(m),  c(m) = P[Y_k <= a_k(m) for every k | m],
// with a_k(m) the critical count of budget k (critical_counts: it depends on neither the U1
// nor n), computed by carrying the distribution of Y over y <= a_k(m) from the loosest budget
// to the tightest: O(sum_k a_k(m) a_{k+1}(m)) masses per m, every K, no truncation beyond the
// window of m (mass below 1e-16, as certification_rate's). The masses of each univariate row
// come from one hypergeometric_pmf and the ratio of consecutive masses, in long double.
// Exact rationals on small pools (exhaustive enumeration of every calibration draw) and the
// single-budget rate agree to 1e-12: tests/ltt/joint_certification_rate.test.cpp.

#include <ltt/detail/check.hpp>
#include <ltt/certification_rate.hpp>
#include <ltt/detail/critical_path.hpp>
#include <ltt/hypergeometric.hpp>
#include <ltt/pvalue.hpp>
#include <ltt/several_budgets.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ltt {

namespace detail {

// P[Hyp(N, K, d) = x] for x = 0..x_max into out[0..x_max] (zero off the support): the mass at
// the mode clamped into the support and [0, x_max], then outward by
//     P(x+1) / P(x) = (K - x)(d - x) / ((x + 1)(N - K - d + x + 1)).
// Each step adds a few long-double roundings, so a row of x_max masses carries a relative
// error of order x_max 2^-64, far below the rate's 1e-12.
inline void hypergeometric_row(std::int64_t N, std::int64_t K, std::int64_t d, std::int64_t x_max,
                               std::vector<long double>& out) {
  out.assign(static_cast<std::size_t>(x_max + 1), 0.0L);
  const Hypergeometric h(N, K, d);
  const std::int64_t lo = h.lo, hi = std::min(h.hi, x_max);
  if (lo > hi) return;
  const std::int64_t anchor = std::clamp(h.mode(), lo, hi);
  out[static_cast<std::size_t>(anchor)] = hypergeometric_pmf(anchor, N, K, d);
  using L = long double;  // factors below 2^53 each; their products formed in long double
  for (std::int64_t x = anchor; x < hi; ++x)
    out[static_cast<std::size_t>(x + 1)] = out[static_cast<std::size_t>(x)] * (L(K - x) * L(d - x)) /
                                           (L(x + 1) * L(N - K - d + x + 1));
  for (std::int64_t x = anchor; x > lo; --x)
    out[static_cast<std::size_t>(x - 1)] = out[static_cast<std::size_t>(x)] * (L(x) * L(N - K - d + x)) /
                                           (L(K - x + 1) * L(d - x + 1));
}

// c(m) = P[Y_k <= a[k] for every k | m], the bands of S_1 given as V[0..K].
inline long double joint_first_step(std::span<const std::int64_t> V, std::int64_t m,
                                    std::span<const std::int64_t> a) {
  const std::size_t K = a.size();
  for (const std::int64_t x : a)
    if (x < 0) return 0.0L;
  std::int64_t population = 0;
  for (const std::int64_t v : V) population += v;
  std::vector<long double> dist, next, row;
  // Y_K = X_K, the draws over the loosest budget.
  hypergeometric_row(population, V[K], m, std::min(a[K - 1], m), dist);
  population -= V[K];
  for (std::size_t k = K - 1; k-- > 0;) {  // budget k: Y_k = Y_{k+1} + X_{k+1}
    const std::int64_t top = std::min(a[k], m);
    next.assign(static_cast<std::size_t>(top + 1), 0.0L);
    const auto band = V[k + 1];
    for (std::int64_t y = 0; y < static_cast<std::int64_t>(dist.size()) && y <= top; ++y) {
      const long double w = dist[static_cast<std::size_t>(y)];
      if (w == 0.0L) continue;
      hypergeometric_row(population, band, m - y, top - y, row);
      for (std::int64_t x = 0; x <= top - y; ++x)
        next[static_cast<std::size_t>(y + x)] += w * row[static_cast<std::size_t>(x)];
    }
    population -= band;
    dist.swap(next);
  }
  long double c = 0.0L;
  for (const long double p : dist) c += p;
  return c;
}

}  // namespace detail

// The probability that the first step rejects budget k at level levels[k] for every k.
// U1[k] = trajectories of S_1 over budget k, tightest budget first (non-increasing).
inline double joint_certification_rate(std::int64_t N, std::int64_t N1,
                                       std::span<const std::int64_t> U1, std::int64_t n,
                                       std::span<const double> alphas,
                                       std::span<const double> levels) {
  constexpr std::string_view fn = "ltt::joint_certification_rate";
  detail::require_count(fn, "N", N);
  detail::require_count(fn, "N1", N1);
  detail::require_at_most(fn, "N1", N1, "N", N);
  detail::require_count(fn, "n", n);
  detail::require_at_most(fn, "n", n, "N", N);
  if (U1.empty()) detail::invalid(fn, "U1.size()", "0", "must be >= 1 (one count per budget)");
  const auto size_text = [](std::size_t s) { return detail::show(static_cast<std::int64_t>(s)); };
  if (alphas.size() != U1.size())
    detail::invalid(fn, "alphas.size()", size_text(alphas.size()),
                    "must equal U1.size() = " + size_text(U1.size()) + " (one per budget)");
  if (levels.size() != U1.size())
    detail::invalid(fn, "levels.size()", size_text(levels.size()),
                    "must equal U1.size() = " + size_text(U1.size()) + " (one per budget)");
  for (std::size_t k = 0; k < U1.size(); ++k) {
    const std::string name = "U1[" + std::to_string(k) + "]";
    detail::require_count(fn, name, U1[k]);
    detail::require_at_most(fn, name, U1[k], "N1", N1);
    if (k > 0 && U1[k] > U1[k - 1])
      detail::invalid(fn, name, detail::show(U1[k]),
                      "must not exceed U1[" + std::to_string(k - 1) + "] = " +
                          detail::show(U1[k - 1]) +
                          " (a trajectory over a looser budget is over every tighter one)");
    detail::require_open_unit(fn, "alphas[" + std::to_string(k) + "]", alphas[k]);
    detail::require_open_unit(fn, "levels[" + std::to_string(k) + "]", levels[k]);
  }
  const std::size_t K = U1.size();
  std::vector<std::int64_t> V(K + 1);
  V[0] = N1 - U1[0];
  for (std::size_t b = 1; b < K; ++b) V[b] = U1[b - 1] - U1[b];
  V[K] = U1[K - 1];

  const detail::MassWindow window = detail::mass_window(N, N1, n);
  std::vector<detail::CriticalPath> paths;
  for (std::size_t k = 0; k < K; ++k) {
    paths.emplace_back(N1, -1, alphas[k], levels[k], window.m_lo);
    paths.back().extend_to(window.m_hi());
  }
  std::vector<std::int64_t> a(K);
  long double sum = 0.0L;
  for (std::size_t i = 0; i < window.mass.size(); ++i) {
    const std::int64_t m = window.m_lo + static_cast<std::int64_t>(i);
    for (std::size_t k = 0; k < K; ++k) a[k] = paths[k].k_max(m);
    sum += static_cast<long double>(window.mass[i]) * detail::joint_first_step(V, m, a);
  }
  return std::clamp(static_cast<double>(sum), 0.0, 1.0);
}

// The label budget at several budgets: the smallest n with joint_certification_rate >= target,
// by evaluating every n up from a proved start (the rate is a sawtooth in n, as with one
// budget, so a bisection could step over the first n that reaches the target). The joint event
// is contained in each budget's own, so below any budget's own label budget (label_budget at
// its alpha and level) the joint rate misses the target: the scan starts at the largest of
// them, and with equal alphas under one threshold that is the answer (up to the rates' last
// bits: the joint event is then the tightest budget's own). It stops:
// when no budget's first selection is a true null the rate is 1 at n = N (every p_1k is 0),
// so the scan ends by N; when one is (U1_k >= floor(alpha_k N1) + 1), the joint rate is at
// most that budget's own, at most levels[k], and a target above it is refused at once
// (std::nullopt) as label_budget refuses it. Work: K label budgets, then one rate per n from
// the start to the answer.
inline std::optional<std::int64_t> joint_label_budget(std::int64_t N, std::int64_t N1,
                                                      std::span<const std::int64_t> U1,
                                                      std::span<const double> alphas,
                                                      std::span<const double> levels,
                                                      double target_rate) {
  constexpr std::string_view fn = "ltt::joint_label_budget";
  if (!(target_rate >= 0.0 && target_rate <= 1.0))
    detail::invalid(fn, "target_rate", detail::show(target_rate), "must lie in [0, 1]");
  (void)joint_certification_rate(N, N1, U1, 0, alphas, levels);  // checks every argument
  if (target_rate == 0.0) return 0;
  for (std::size_t k = 0; k < U1.size(); ++k)
    if (U1[k] >= null_boundary(N1, alphas[k]) && target_rate > levels[k]) return std::nullopt;
  std::int64_t start = 0;
  for (std::size_t k = 0; k < U1.size(); ++k) {
    const std::optional<std::int64_t> own =
        label_budget(N, N1, U1[k], alphas[k], levels[k], target_rate);
    if (!own) return std::nullopt;  // that budget alone never reaches the target
    start = std::max(start, *own);
  }
  for (std::int64_t n = start; n <= N; ++n)
    if (joint_certification_rate(N, N1, U1, n, alphas, levels) >= target_rate) return n;
  return std::nullopt;
}

// The rate of a procedure: one threshold certifies (every budget at once); one threshold per
// budget certifies every budget. The levels are budget_levels(procedure, delta, K).
inline double several_budgets_rate(BudgetProcedure procedure, std::int64_t N, std::int64_t N1,
                                   std::span<const std::int64_t> U1, std::int64_t n,
                                   std::span<const double> alphas, double delta) {
  const std::vector<double> levels =
      budget_levels(procedure, delta, static_cast<std::int64_t>(U1.size()));
  return joint_certification_rate(N, N1, U1, n, alphas, levels);
}

}  // namespace ltt
