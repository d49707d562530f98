// Throughput of composition p-values, ltt against R's phyper (libRmath), GSL and Boost.Math
// in the same run. R and GSL are optional: bench/CMakeLists.txt defines LTT_BENCH_RMATH and
// LTT_BENCH_GSL when it finds them (Debian: r-mathlib, libgsl-dev; scripts/setup installs both).
//
// Workloads (issue "statistics core", speed bar):
//  - dsrl:  N_sel uniform in [150, 750], m in [5, 60], k in [0, m], alpha = 0.25;
//  - large: N log-uniform in [1e5, 1e12], m log-uniform in [100, 1e4], k uniform over the lower
//           tail [lo, floor(mean)], alpha = 0.25 (Boost runs the subset with N < 2^31 only:
//           its parameters are 32-bit unsigned and its support check casts them to int);
//  - table: every p-value of one selection size at once (CompositionPvalueTable).
// The *_ltt_batch rows evaluate the workload's 4096 queries by one composition_pvalues call
// (the same doubles as the per-call rows).
// GSL's gsl_cdf_hypergeometric_P takes unsigned int parameters: it runs dsrl and large32.
// Every peer gets U* from ltt::null_boundary, as composition_pvalue computes it, so each row
// times the same question; the cdf_* rows time the bare lower tail P[X <= k] of Hyp(N, U*, m)
// with U* precomputed (ltt::hypergeometric_cdf against phyper), the per-call path of a harness
// that calls one tail at a time.
// Items per second is the figure of merit; docs/performance.md records the ratios.

#include <benchmark/benchmark.h>

#include <boost/math/distributions/hypergeometric.hpp>

#ifdef LTT_BENCH_RMATH
#include <Rmath.h>
#endif
#ifdef LTT_BENCH_GSL
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_errno.h>
#endif

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include <ltt/composition_pvalues.hpp>
#include <ltt/hypergeometric.hpp>
#include <ltt/pvalue.hpp>

namespace {

struct Query {
  std::int64_t k, m, N;
};

// The same query with U* = null_boundary(N, alpha) precomputed, for the bare-tail rows.
struct TailQuery {
  std::int64_t k, N, K, n;
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

std::vector<TailQuery> with_boundary(const std::vector<Query>& q) {
  std::vector<TailQuery> t(q.size());
  for (std::size_t i = 0; i < q.size(); ++i)
    t[i] = {q[i].k, q[i].N, ltt::null_boundary(q[i].N, alpha), q[i].m};
  return t;
}

#ifdef LTT_BENCH_RMATH
// R's peer: phyper(k, NR = U*, NB = N - U*, n = m, lower_tail, log_p) answers every k itself.
double r_pvalue(const Query& x) {
  const std::int64_t U = ltt::null_boundary(x.N, alpha);
  return phyper(static_cast<double>(x.k), static_cast<double>(U), static_cast<double>(x.N - U),
                static_cast<double>(x.m), 1, 0);
}
double r_cdf(const TailQuery& x) {
  return phyper(static_cast<double>(x.k), static_cast<double>(x.K), static_cast<double>(x.N - x.K),
                static_cast<double>(x.n), 1, 0);
}
#endif

#ifdef LTT_BENCH_GSL
// GSL's peer: gsl_cdf_hypergeometric_P(k, n1 = U*, n2 = N - U*, t = m), unsigned int counts.
double gsl_pvalue(const Query& x) {
  const std::int64_t U = ltt::null_boundary(x.N, alpha);
  return gsl_cdf_hypergeometric_P(static_cast<unsigned>(x.k), static_cast<unsigned>(U),
                                  static_cast<unsigned>(x.N - U), static_cast<unsigned>(x.m));
}
#endif

// The peer's largest relative distance from ltt over the queries where ltt's p-value is a
// normal double (reported as a counter, so a fast peer that answers another question shows up
// in the same table). Below DBL_MIN no library promises relative accuracy: R's phyper, for
// one, returns 0 for some subnormal tails of the large workload.
template <class F>
double max_relative_difference(const std::vector<Query>& q, F f) {
  double worst = 0.0;
  for (const Query& x : q) {
    const double ours = ltt::composition_pvalue(x.k, x.m, x.N, alpha);
    if (ours >= std::numeric_limits<double>::min())
      worst = std::max(worst, std::abs(f(x) - ours) / ours);
  }
  return worst;
}

template <class Q, class F>
void run(benchmark::State& state, const std::vector<Q>& q, F f) {
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
  static const double diff = max_relative_difference(q, boost_pvalue);
  s.counters["max_rel_diff"] = diff;
}
void BM_dsrl_cdf_ltt(benchmark::State& s) {
  static const auto q = with_boundary(dsrl_queries());
  run(s, q, [](const TailQuery& x) { return ltt::hypergeometric_cdf(x.k, x.N, x.K, x.n); });
}
#ifdef LTT_BENCH_RMATH
void BM_dsrl_R(benchmark::State& s) {
  static const auto q = dsrl_queries();
  run(s, q, r_pvalue);
  static const double diff = max_relative_difference(q, r_pvalue);
  s.counters["max_rel_diff"] = diff;
}
void BM_dsrl_cdf_R(benchmark::State& s) {
  static const auto q = with_boundary(dsrl_queries());
  run(s, q, r_cdf);
}
void BM_large_R(benchmark::State& s) {
  static const auto q = large_queries(1e12);
  run(s, q, r_pvalue);
  static const double diff = max_relative_difference(q, r_pvalue);
  s.counters["max_rel_diff"] = diff;
}
void BM_large32_R(benchmark::State& s) {
  static const auto q = large_queries(2.0e9);
  run(s, q, r_pvalue);
  static const double diff = max_relative_difference(q, r_pvalue);
  s.counters["max_rel_diff"] = diff;
}
#endif
#ifdef LTT_BENCH_GSL
void BM_dsrl_gsl(benchmark::State& s) {
  gsl_set_error_handler_off();  // report, never abort, like the other peers
  static const auto q = dsrl_queries();
  run(s, q, gsl_pvalue);
  static const double diff = max_relative_difference(q, gsl_pvalue);
  s.counters["max_rel_diff"] = diff;
}
void BM_large32_gsl(benchmark::State& s) {
  gsl_set_error_handler_off();  // report, never abort, like the other peers
  static const auto q = large_queries(2.0e9);
  run(s, q, gsl_pvalue);
  static const double diff = max_relative_difference(q, gsl_pvalue);
  s.counters["max_rel_diff"] = diff;
}
#endif
// composition_pvalues over the whole workload per iteration: the same p-values, bit for bit.
void run_batch(benchmark::State& state, const std::vector<Query>& q) {
  std::vector<ltt::CompositionCase> cases(q.size());
  for (std::size_t i = 0; i < q.size(); ++i) cases[i] = {q[i].k, q[i].m, q[i].N, alpha};
  std::vector<double> out(q.size());
  for (auto _ : state) {
    ltt::composition_pvalues(cases, out);
    benchmark::DoNotOptimize(out.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(q.size()));
}
void BM_dsrl_ltt_batch(benchmark::State& s) { run_batch(s, dsrl_queries()); }
void BM_large_ltt_batch(benchmark::State& s) { run_batch(s, large_queries(1e12)); }
void BM_large32_ltt_batch(benchmark::State& s) { run_batch(s, large_queries(2.0e9)); }

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
  static const double diff = max_relative_difference(q, boost_pvalue);
  s.counters["max_rel_diff"] = diff;
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
BENCHMARK(BM_dsrl_ltt_batch);
#ifdef LTT_BENCH_RMATH
BENCHMARK(BM_dsrl_R);
#endif
#ifdef LTT_BENCH_GSL
BENCHMARK(BM_dsrl_gsl);
#endif
BENCHMARK(BM_dsrl_boost);
BENCHMARK(BM_dsrl_cdf_ltt);
#ifdef LTT_BENCH_RMATH
BENCHMARK(BM_dsrl_cdf_R);
#endif
BENCHMARK(BM_large_ltt);
BENCHMARK(BM_large_ltt_batch);
#ifdef LTT_BENCH_RMATH
BENCHMARK(BM_large_R);
#endif
BENCHMARK(BM_large32_ltt);
BENCHMARK(BM_large32_ltt_batch);
#ifdef LTT_BENCH_RMATH
BENCHMARK(BM_large32_R);
#endif
#ifdef LTT_BENCH_GSL
BENCHMARK(BM_large32_gsl);
#endif
BENCHMARK(BM_large32_boost);
BENCHMARK(BM_table_ltt)->Args({500, 60})->Args({2000, 400})->Args({5000, 2000});
BENCHMARK(BM_table_by_calls_ltt)->Args({500, 60})->Args({2000, 400});

BENCHMARK_MAIN();
