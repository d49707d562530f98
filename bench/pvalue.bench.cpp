// Throughput of composition p-values, ltt against Boost.Math 1.74 in the same run.
//
// Workloads (issue "statistics core", speed bar):
//  - dsrl:  N_sel uniform in [150, 750], m in [5, 60], k in [0, m], alpha = 0.25;
//  - large: N log-uniform in [1e5, 1e12], m log-uniform in [100, 1e4], k uniform over the lower
//           tail [lo, floor(mean)], alpha = 0.25 (Boost runs the subset with N < 2^31 only:
//           its parameters are 32-bit unsigned and its support check casts them to int);
//  - table: every p-value of one selection size at once (CompositionPvalueTable).
// Items per second is the figure of merit; docs/performance.md records the ratios.

#include <benchmark/benchmark.h>

#include <boost/math/distributions/hypergeometric.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include <ltt/pvalue.hpp>

namespace {

struct Query {
  std::int64_t k, m, N;
};

constexpr double alpha = 0.25;

std::vector<Query> dsrl_queries() {
  std::mt19937_64 rng(20261125);
  std::vector<Query> q(4096);
  for (auto& x : q) {
    x.N = std::uniform_int_distribution<std::int64_t>(150, 750)(rng);
    x.m = std::uniform_int_distribution<std::int64_t>(5, 60)(rng);
    x.k = std::uniform_int_distribution<std::int64_t>(0, x.m)(rng);
  }
  return q;
}

std::vector<Query> large_queries(double max_N) {
  std::mt19937_64 rng(7);
  std::vector<Query> q(4096);
  std::uniform_real_distribution<double> logN(std::log(1e5), std::log(max_N));
  std::uniform_real_distribution<double> logm(std::log(100.0), std::log(1e4));
  for (auto& x : q) {
    x.N = static_cast<std::int64_t>(std::exp(logN(rng)));
    x.m = static_cast<std::int64_t>(std::exp(logm(rng)));
    const std::int64_t U = ltt::null_boundary(x.N, alpha);
    const std::int64_t lo = std::max<std::int64_t>(0, x.m - (x.N - U));
    const auto mean = static_cast<std::int64_t>(static_cast<double>(x.m) * static_cast<double>(U) /
                                                static_cast<double>(x.N));
    x.k = std::uniform_int_distribution<std::int64_t>(lo, std::max(lo, mean))(rng);
  }
  return q;
}

// Boost.Math's peer of composition_pvalue: cdf of hypergeometric_distribution(r, n, N) with
// r = U* successes; it throws for k outside the support, which the guard answers exactly.
double boost_pvalue(const Query& x) {
  const std::int64_t U = ltt::null_boundary(x.N, alpha);
  const std::int64_t lo = std::max<std::int64_t>(0, x.m - (x.N - U)), hi = std::min(x.m, U);
  if (x.k < lo) return 0.0;
  if (x.k >= hi) return 1.0;
  const boost::math::hypergeometric_distribution<double> d(
      static_cast<unsigned>(U), static_cast<unsigned>(x.m), static_cast<unsigned>(x.N));
  return boost::math::cdf(d, static_cast<unsigned>(x.k));
}

template <class F>
void run(benchmark::State& state, const std::vector<Query>& q, F f) {
  std::size_t i = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(f(q[i]));
    i = (i + 1) & (q.size() - 1);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_dsrl_ltt(benchmark::State& s) {
  static const auto q = dsrl_queries();
  run(s, q, [](const Query& x) { return ltt::composition_pvalue(x.k, x.m, x.N, alpha); });
}
void BM_dsrl_boost(benchmark::State& s) {
  static const auto q = dsrl_queries();
  run(s, q, boost_pvalue);
}
void BM_large_ltt(benchmark::State& s) {
  static const auto q = large_queries(1e12);
  run(s, q, [](const Query& x) { return ltt::composition_pvalue(x.k, x.m, x.N, alpha); });
}
void BM_large32_ltt(benchmark::State& s) {
  static const auto q = large_queries(2.0e9);
  run(s, q, [](const Query& x) { return ltt::composition_pvalue(x.k, x.m, x.N, alpha); });
}
void BM_large32_boost(benchmark::State& s) {
  static const auto q = large_queries(2.0e9);
  run(s, q, boost_pvalue);
}

void BM_table_ltt(benchmark::State& s) {
  const std::int64_t N_sel = s.range(0), m_max = s.range(1);
  for (auto _ : s) {
    ltt::CompositionPvalueTable t(N_sel, alpha, m_max);
    benchmark::DoNotOptimize(t.row(m_max).data());
  }
  s.SetItemsProcessed(s.iterations() * (m_max + 1) * (m_max + 2) / 2);
}
// The same table by one call per entry, for the ratio.
void BM_table_by_calls_ltt(benchmark::State& s) {
  const std::int64_t N_sel = s.range(0), m_max = s.range(1);
  std::vector<double> out(static_cast<std::size_t>((m_max + 1) * (m_max + 2) / 2));
  for (auto _ : s) {
    std::size_t i = 0;
    for (std::int64_t m = 0; m <= m_max; ++m)
      for (std::int64_t k = 0; k <= m; ++k) out[i++] = ltt::composition_pvalue(k, m, N_sel, alpha);
    benchmark::DoNotOptimize(out.data());
  }
  s.SetItemsProcessed(s.iterations() * (m_max + 1) * (m_max + 2) / 2);
}

}  // namespace

BENCHMARK(BM_dsrl_ltt);
BENCHMARK(BM_dsrl_boost);
BENCHMARK(BM_large_ltt);
BENCHMARK(BM_large32_ltt);
BENCHMARK(BM_large32_boost);
BENCHMARK(BM_table_ltt)->Args({500, 60})->Args({2000, 400})->Args({5000, 2000});
BENCHMARK(BM_table_by_calls_ltt)->Args({500, 60})->Args({2000, 400});

BENCHMARK_MAIN();
