// Certification rate (Proposition "certification rate"), ltt against a per-m evaluation with
// Boost.Math 1.74 in the same run.
//
// The peer sums over every m of the support of Hyp(N, N1, n):
//   h(m)     = pdf(hypergeometric_distribution(N1, n, N), m),
//   k_max(m) = the largest k with cdf(hypergeometric_distribution(U*, m, N1), k) <= delta,
//              scanned upward from k_max(m - 1) (it is non-decreasing in m, which spares the
//              peer a scan from zero),
//   c(m)     = cdf(hypergeometric_distribution(U1, m, N1), k_max(m)),
// with Boost's out-of-support std::domain_error answered exactly by a guard (cdf is 0 below the
// support and 1 at or above its top). Boost's parameters are 32-bit unsigned, so N < 2^31.
//
// Workloads:
//   dsrl       N = 2000, N1 = 300, U1 = 50, n = 200, alpha = 0.25, delta = 0.1
//   large      N = 1e6, N1 = 1.5e5, U1 = 3e4, n = 1e4 (Boost: a few iterations only)
//   curve      certification_rate_curve through n = 400 on the dsrl pool, against 401 calls
//   budget     label_budget(N = 1e6, N1 = 1.5e5, U1 = 3e4, 0.25, 0.1, target 0.9), against the
//              scan of every n it replaced (detail::label_budget_by_scan) in the same run
//   budget_2^32  label_budget(N = 2^32, N1 = 300, U1 = 50, 0.25, 0.1, target 0.9): the scan
//              would visit 1.5e9 values of n (not run)
// items_per_second is rates per second; the counter `rate` shows the value each side computed.

#include <benchmark/benchmark.h>

#include <boost/math/distributions/hypergeometric.hpp>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include <ltt/certification_rate.hpp>
#include <ltt/pvalue.hpp>

namespace {

struct Pool {
  std::int64_t N, N1, U1, n;
  double alpha, delta;
};

constexpr Pool dsrl{2000, 300, 50, 200, 0.25, 0.1};
constexpr Pool large{1000000, 150000, 30000, 10000, 0.25, 0.1};

// P[X <= k] for X ~ Hyp(population, successes, draws) through Boost, guarded to its support.
double boost_cdf(std::int64_t k, std::int64_t population, std::int64_t successes,
                 std::int64_t draws) {
  const std::int64_t lo = std::max<std::int64_t>(0, draws - (population - successes));
  const std::int64_t hi = std::min(draws, successes);
  if (k < lo) return 0.0;
  if (k >= hi) return 1.0;
  const boost::math::hypergeometric_distribution<double> d(static_cast<unsigned>(successes),
                                                           static_cast<unsigned>(draws),
                                                           static_cast<unsigned>(population));
  return boost::math::cdf(d, static_cast<unsigned>(k));
}

double boost_rate(const Pool& p) {
  const std::int64_t U = ltt::null_boundary(p.N1, p.alpha);
  const boost::math::hypergeometric_distribution<double> h(
      static_cast<unsigned>(p.N1), static_cast<unsigned>(p.n), static_cast<unsigned>(p.N));
  const std::int64_t m_lo = std::max<std::int64_t>(0, p.n - (p.N - p.N1));
  const std::int64_t m_hi = std::min(p.n, p.N1);
  double rate = 0.0;
  std::int64_t k = -1;  // k_max(m), non-decreasing in m
  for (std::int64_t m = m_lo; m <= m_hi; ++m) {
    while (k + 1 < std::min(m, U) && boost_cdf(k + 1, p.N1, U, m) <= p.delta) ++k;
    if (k < 0) continue;
    rate += boost::math::pdf(h, static_cast<unsigned>(m)) * boost_cdf(k, p.N1, p.U1, m);
  }
  return rate;
}

void BM_rate_ltt(benchmark::State& state, Pool p) {
  double r = 0.0;
  for (auto _ : state) {
    r = ltt::certification_rate(p.N, p.N1, p.U1, p.n, p.alpha, p.delta);
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["rate"] = r;
}

void BM_rate_boost(benchmark::State& state, Pool p) {
  double r = 0.0;
  for (auto _ : state) {
    r = boost_rate(p);
    benchmark::DoNotOptimize(r);
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["rate"] = r;
  state.counters["diff_vs_ltt"] =
      r - ltt::certification_rate(p.N, p.N1, p.U1, p.n, p.alpha, p.delta);
}

void BM_curve_ltt(benchmark::State& state) {
  const std::int64_t n_max = state.range(0);
  for (auto _ : state) {
    const auto curve =
        ltt::certification_rate_curve(dsrl.N, dsrl.N1, dsrl.U1, dsrl.alpha, dsrl.delta, n_max);
    benchmark::DoNotOptimize(curve.data());
  }
  state.SetItemsProcessed(state.iterations() * (n_max + 1));
}

void BM_curve_by_calls_ltt(benchmark::State& state) {
  const std::int64_t n_max = state.range(0);
  std::vector<double> curve(static_cast<std::size_t>(n_max + 1));
  for (auto _ : state) {
    for (std::int64_t n = 0; n <= n_max; ++n)
      curve[static_cast<std::size_t>(n)] =
          ltt::certification_rate(dsrl.N, dsrl.N1, dsrl.U1, n, dsrl.alpha, dsrl.delta);
    benchmark::DoNotOptimize(curve.data());
  }
  state.SetItemsProcessed(state.iterations() * (n_max + 1));
}

using BudgetFunction = std::optional<std::int64_t> (*)(std::int64_t, std::int64_t, std::int64_t,
                                                       double, double, double);

void BM_budget(benchmark::State& state, BudgetFunction budget, Pool p) {
  std::optional<std::int64_t> n;
  for (auto _ : state) {
    n = budget(p.N, p.N1, p.U1, p.alpha, p.delta, 0.9);
    benchmark::DoNotOptimize(n);
  }
  state.counters["n"] = static_cast<double>(n.value_or(-1));
}

constexpr Pool huge{std::int64_t{1} << 32, 300, 50, 0, 0.25, 0.1};

}  // namespace

BENCHMARK_CAPTURE(BM_rate_ltt, dsrl, dsrl)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_rate_boost, dsrl, dsrl)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_rate_ltt, large, large)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_rate_boost, large, large)->Unit(benchmark::kMillisecond)->Iterations(2);
BENCHMARK(BM_curve_ltt)->Arg(400)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_curve_by_calls_ltt)->Arg(400)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_budget, ltt, &ltt::label_budget, large)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_budget, scan, &ltt::detail::label_budget_by_scan, large)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_budget, ltt_2e32, &ltt::label_budget, huge)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
