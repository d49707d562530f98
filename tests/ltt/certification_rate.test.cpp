// Certification rate (paper, Propositions "certification rate" and "certification dichotomy",
// and the Hoeffding relaxation of appendix B): critical counts, conditional rates, the rate,
// its curve and the label budget against the exact rational tables
// tests/reference/certification_rate.csv and certification_rate_conditional.csv
// (certification_rate_reference.py), against brute force with composition_pvalue, and against
// a Monte Carlo simulation of the walk itself.
//
// Near ties: where an exact p-value lies within 1e-12 below delta the library's rounded-up
// composition_pvalue may refuse where exact arithmetic rejects (the tables show three, all
// p-values that equal a decimal delta exactly, such as 1/10 against the double 0.1). The walk's
// decisions are composition_pvalue's, so those rows are compared with the tables' conservative
// columns, which decide the tied counts the way the library does.

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <iomanip>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include <ltt/bounds.hpp>
#include <ltt/certification_rate.hpp>
#include <ltt/hypergeometric.hpp>
#include <ltt/pvalue.hpp>

#include "../support/monte_carlo.hpp"
#include "../support/reference_csv.hpp"
#include "../support/throws.hpp"

namespace {

constexpr double rate_tolerance = 1e-12;  // absolute, on rates
using ltt_test::not_a_number;

// The largest k with composition_pvalue(k, m, N1, alpha) <= delta, -1 if none, by a plain scan.
std::int64_t brute_force_critical_count(std::int64_t N1, double alpha, double delta,
                                        std::int64_t m) {
  std::int64_t k = -1;
  while (k + 1 <= m && ltt::composition_pvalue(k + 1, m, N1, alpha) <= delta) ++k;
  return k;
}

// The value the walk's decisions imply: the conservative column where the row has near ties.
long double reference_rate(const ltt_test::ReferenceRow& r) {
  return r.integer("near_ties") == 0 ? r.number("rate") : r.number("rate_conservative");
}

struct Worst {
  long double error = 0;
  std::string where;
  void add(long double e, const std::string& w) {
    if (e > error) error = e, where = w;
  }
};

long double absolute_error(double computed, long double exact) {
  return std::fabs(static_cast<long double>(computed) - exact);
}

// One pool of the exhaustive family: every n = 0..N.
using PoolKey = std::tuple<std::int64_t, std::int64_t, std::int64_t, std::string, std::string>;

std::map<PoolKey, std::vector<long double>> exhaustive_pools(
    const std::vector<ltt_test::ReferenceRow>& rows, const std::string& family) {
  std::map<PoolKey, std::vector<long double>> pools;
  for (const auto& r : rows) {
    if (r.text("family") != family) continue;
    auto& v =
        pools[{r.integer("N"), r.integer("N1"), r.integer("U1"), r.text("alpha"), r.text("delta")}];
    REQUIRE(r.integer("n") == static_cast<long long>(v.size()));
    v.push_back(reference_rate(r));
  }
  return pools;
}

}  // namespace

TEST_CASE("critical counts: exact rationals and brute force with composition_pvalue") {
  const auto rows = ltt_test::read_reference("certification_rate_conditional.csv");
  REQUIRE(rows.size() > 3000);
  std::map<std::tuple<std::int64_t, std::string, std::string>, std::int64_t> m_max;
  for (const auto& r : rows) {
    auto& mm = m_max[{r.integer("N1"), r.text("alpha"), r.text("delta")}];
    mm = std::max<std::int64_t>(mm, r.integer("m"));
  }
  std::map<std::tuple<std::int64_t, std::string, std::string>, std::vector<std::int64_t>> counts;
  for (const auto& [key, mm] : m_max)
    counts[key] = ltt::critical_counts(std::get<0>(key), std::stod(std::get<1>(key)),
                                       std::stod(std::get<2>(key)), mm);
  int ties = 0;
  for (const auto& r : rows) {
    const std::int64_t N1 = r.integer("N1"), m = r.integer("m");
    const double alpha = std::stod(r.text("alpha")), delta = std::stod(r.text("delta"));
    REQUIRE(ltt::null_boundary(N1, alpha) == r.integer("U_star"));
    const auto& k = counts[{N1, r.text("alpha"), r.text("delta")}];
    const std::int64_t got = k[static_cast<std::size_t>(m)];
    if (r.integer("k_max") != r.integer("k_max_conservative")) ++ties;
    CHECK_MESSAGE(got == r.integer("k_max_conservative"), "N1=" << N1 << " m=" << m);
    CHECK_MESSAGE(got == brute_force_critical_count(N1, alpha, delta, m),
                  "N1=" << N1 << " m=" << m);
  }
  MESSAGE("conditional table rows with a near tie (library refuses, exact rejects): " << ties);

  // Brute force over every m of small selections and far into large ones.
  for (double alpha : {0.05, 0.1, 0.25, 0.3, 0.4, 0.5, 0.9})
    for (double delta : {0.01, 0.05, 0.1, 0.2, 0.3}) {
      for (std::int64_t N1 = 0; N1 <= 60; ++N1) {
        const auto k = ltt::critical_counts(N1, alpha, delta, N1);
        REQUIRE(k.size() == static_cast<std::size_t>(N1 + 1));
        for (std::int64_t m = 0; m <= N1; ++m)
          CHECK_MESSAGE(
              k[static_cast<std::size_t>(m)] == brute_force_critical_count(N1, alpha, delta, m),
              "N1=" << N1 << " m=" << m << " alpha=" << alpha << " delta=" << delta);
      }
      for (std::int64_t N1 : {400, 4321, 1000000, 1000000007}) {
        const std::int64_t mm = 300;
        const auto k = ltt::critical_counts(N1, alpha, delta, mm);
        for (std::int64_t m = 0; m <= mm; m += (m < 60 ? 1 : 7)) {
          const std::int64_t b = brute_force_critical_count(N1, alpha, delta, m);
          CHECK_MESSAGE(k[static_cast<std::size_t>(m)] == b,
                        "N1=" << N1 << " m=" << m << " alpha=" << alpha << " delta=" << delta);
        }
        for (std::size_t m = 1; m < k.size(); ++m) {  // non-decreasing by at most one
          CHECK(k[m] >= k[m - 1]);
          CHECK(k[m] <= k[m - 1] + 1);
        }
      }
    }
}

TEST_CASE("conditional certification rates match exact rationals") {
  const auto rows = ltt_test::read_reference("certification_rate_conditional.csv");
  std::map<std::tuple<std::int64_t, std::int64_t, std::string, std::string>, std::int64_t> m_max;
  for (const auto& r : rows) {
    auto& mm = m_max[{r.integer("N1"), r.integer("U1"), r.text("alpha"), r.text("delta")}];
    mm = std::max<std::int64_t>(mm, r.integer("m"));
  }
  std::map<std::tuple<std::int64_t, std::int64_t, std::string, std::string>, std::vector<double>> c;
  for (const auto& [key, mm] : m_max)
    c[key] = ltt::conditional_certification_rates(std::get<0>(key), std::get<1>(key),
                                                  std::stod(std::get<2>(key)),
                                                  std::stod(std::get<3>(key)), mm);
  Worst worst;
  for (const auto& r : rows) {
    const std::int64_t N1 = r.integer("N1"), U1 = r.integer("U1"), m = r.integer("m");
    const auto& v = c[{N1, U1, r.text("alpha"), r.text("delta")}];
    const double got = v[static_cast<std::size_t>(m)];
    const long double e = absolute_error(got, r.number("c_conservative"));
    const std::string where = "N1=" + r.text("N1") + " U1=" + r.text("U1") + " m=" + r.text("m") +
                              " alpha=" + r.text("alpha") + " delta=" + r.text("delta");
    worst.add(e, where);
    CHECK_MESSAGE(e <= rate_tolerance, where << " c=" << got);
    CHECK(got >= 0.0);
    CHECK(got <= 1.0);
  }
  MESSAGE("conditional_certification_rates worst absolute error: "
          << static_cast<double>(worst.error) << " at " << worst.where);
}

TEST_CASE("certification_rate matches exact rationals") {
  const auto rows = ltt_test::read_reference("certification_rate.csv");
  REQUIRE(rows.size() > 20000);
  std::map<std::string, Worst> worst;
  int tie_rows = 0;
  for (const auto& r : rows) {
    const std::int64_t N = r.integer("N"), N1 = r.integer("N1"), U1 = r.integer("U1"),
                       n = r.integer("n");
    const double alpha = std::stod(r.text("alpha")), delta = std::stod(r.text("delta"));
    REQUIRE(ltt::null_boundary(N1, alpha) == r.integer("U_star"));
    if (r.integer("near_ties") != 0) ++tie_rows;
    const double got = ltt::certification_rate(N, N1, U1, n, alpha, delta);
    const long double e = absolute_error(got, reference_rate(r));
    const std::string where = r.text("family") + " N=" + r.text("N") + " N1=" + r.text("N1") +
                              " U1=" + r.text("U1") + " n=" + r.text("n") +
                              " alpha=" + r.text("alpha") + " delta=" + r.text("delta");
    worst[r.text("family")].add(e, where);
    CHECK_MESSAGE(e <= rate_tolerance, where << " rate=" << got);
  }
  for (const auto& [family, w] : worst)
    MESSAGE("certification_rate worst absolute error, "
            << family << ": " << static_cast<double>(w.error) << " at " << w.where);
  MESSAGE("rate rows with a near tie (compared with rate_conservative): " << tie_rows);
}

TEST_CASE("certification_rate_curve equals certification_rate and the exact table") {
  const auto rows = ltt_test::read_reference("certification_rate.csv");
  Worst vs_table, vs_single;
  for (const std::string family : {"small", "curve"}) {
    const auto pools = exhaustive_pools(rows, family);
    REQUIRE(!pools.empty());
    for (const auto& [key, exact] : pools) {
      const auto& [N, N1, U1, a, d] = key;
      const double alpha = std::stod(a), delta = std::stod(d);
      const auto curve = ltt::certification_rate_curve(N, N1, U1, alpha, delta, N);
      REQUIRE(curve.size() == exact.size());
      const std::int64_t stride = family == "small" ? 1 : 37;
      for (std::int64_t n = 0; n <= N; ++n) {
        const std::string where = family + " N=" + std::to_string(N) + " N1=" + std::to_string(N1) +
                                  " U1=" + std::to_string(U1) + " n=" + std::to_string(n) +
                                  " alpha=" + a + " delta=" + d;
        const double got = curve[static_cast<std::size_t>(n)];
        const long double e = absolute_error(got, exact[static_cast<std::size_t>(n)]);
        vs_table.add(e, where);
        CHECK_MESSAGE(e <= rate_tolerance, where << " curve=" << got);
        if (n % stride == 0 || n == N) {
          const double single = ltt::certification_rate(N, N1, U1, n, alpha, delta);
          const long double s = std::fabs(static_cast<long double>(single) - got);
          vs_single.add(s, where);
          CHECK_MESSAGE(s <= rate_tolerance, where);
        }
      }
    }
  }
  // DSRL pools: the curve through n = 400 against the rows at n = 50, 100, 200, 400.
  std::map<PoolKey, std::vector<double>> curves;
  for (const auto& r : rows) {
    if (r.text("family") != "pool") continue;
    const PoolKey key{r.integer("N"), r.integer("N1"), r.integer("U1"), r.text("alpha"),
                      r.text("delta")};
    auto& curve = curves[key];
    if (curve.empty())
      curve = ltt::certification_rate_curve(r.integer("N"), r.integer("N1"), r.integer("U1"),
                                            std::stod(r.text("alpha")), std::stod(r.text("delta")),
                                            400);
    const double got = curve[static_cast<std::size_t>(r.integer("n"))];
    const long double e = absolute_error(got, reference_rate(r));
    vs_table.add(e, "pool N=" + r.text("N") + " N1=" + r.text("N1") + " U1=" + r.text("U1") +
                        " n=" + r.text("n"));
    CHECK_MESSAGE(e <= rate_tolerance, "pool N=" << r.text("N") << " N1=" << r.text("N1")
                                                 << " U1=" << r.text("U1") << " n=" << r.text("n"));
  }
  MESSAGE("certification_rate_curve worst absolute error against the table: "
          << static_cast<double>(vs_table.error) << " at " << vs_table.where);
  MESSAGE("certification_rate_curve worst difference from certification_rate: "
          << static_cast<double>(vs_single.error) << " at " << vs_single.where);
}

TEST_CASE("label_budget is the smallest n reaching the target (exact tables)") {
  const auto rows = ltt_test::read_reference("certification_rate.csv");
  int checked = 0, skipped = 0, none = 0;
  for (const std::string family : {"small", "curve"}) {
    for (const auto& [key, exact] : exhaustive_pools(rows, family)) {
      const auto& [N, N1, U1, a, d] = key;
      const double alpha = std::stod(a), delta = std::stod(d);
      for (double target : {0.01, 0.05, 0.1, 0.2, 0.3, 0.37, 0.5, 0.61, 0.9, 0.99, 0.999}) {
        // A target within the rates' accuracy of an exact rate has no well-defined answer.
        bool ambiguous = false;
        std::optional<std::int64_t> expected;
        for (std::size_t n = 0; n < exact.size(); ++n) {
          if (std::fabs(exact[n] - static_cast<long double>(target)) <= 2 * rate_tolerance)
            ambiguous = true;
          if (!expected && exact[n] >= static_cast<long double>(target))
            expected = static_cast<std::int64_t>(n);
        }
        if (ambiguous) {
          ++skipped;
          continue;
        }
        ++checked;
        if (!expected) ++none;
        const auto got = ltt::label_budget(N, N1, U1, alpha, delta, target);
        CHECK_MESSAGE(got == expected, family << " N=" << N << " N1=" << N1 << " U1=" << U1
                                              << " alpha=" << a << " delta=" << d
                                              << " target=" << target);
      }
    }
  }
  MESSAGE("label_budget: " << checked << " checked (" << none << " nullopt), " << skipped
                           << " skipped as ties");
  CHECK(checked > 10000);
}

TEST_CASE("label_budget: true nulls, n = N, and trivial targets") {
  for (double alpha : {0.1, 0.25, 0.4})
    for (double delta : {0.05, 0.1}) {
      for (std::int64_t N : {40, 1000, 5000}) {
        const std::int64_t N1 = N * 3 / 20, U = ltt::null_boundary(N1, alpha);
        // A true first null never certifies more often than delta: nullopt at once.
        for (std::int64_t U1 : {U, U + 1, N1})
          for (double target : {std::nextafter(delta, 1.0), 0.5, 0.9, 1.0})
            CHECK(!ltt::label_budget(N, N1, U1, alpha, delta, target).has_value());
        // A false first null reaches any target below one, at n = N at the latest.
        for (double target : {0.5, 0.9, 0.999, 1.0 - 1e-9}) {
          const auto n = ltt::label_budget(N, N1, U - 1, alpha, delta, target);
          REQUIRE(n.has_value());
          CHECK(*n <= N);
          CHECK(ltt::certification_rate(N, N1, U - 1, *n, alpha, delta) >= target);
          if (*n > 0) CHECK(ltt::certification_rate(N, N1, U - 1, *n - 1, alpha, delta) < target);
        }
        CHECK(ltt::label_budget(N, N1, U - 1, alpha, delta, 0.0) == 0);
      }
    }
  // The paper's DSRL scale and a million-trajectory pool.
  const auto n = ltt::label_budget(1000000, 150000, 30000, 0.25, 0.1, 0.9);
  REQUIRE(n.has_value());
  CHECK(ltt::certification_rate(1000000, 150000, 30000, *n, 0.25, 0.1) >= 0.9);
  CHECK(ltt::certification_rate(1000000, 150000, 30000, *n - 1, 0.25, 0.1) < 0.9);
  MESSAGE("label_budget(N=1e6, N1=1.5e5, U1=3e4, alpha .25, delta .1, target .9) = " << *n);
}

// label_budget skips the n its bounds prove below the target (docs/certification_rate.md); the
// scan of every n (detail::label_budget_by_scan, the old algorithm) is the definition. They
// must agree exactly: on random pools with the paper's targets, on targets equal to a rate of
// the curve and one ulp either side (ties, where the margin decides), on sawtooth pools, and on
// nullopt cases (true nulls with a target at most delta, which the shortcut does not catch).
TEST_CASE("label_budget equals the scan of every n") {
  std::mt19937_64 rng(20260213);
  int checked = 0, none = 0, ties = 0;
  const auto compare = [&](std::int64_t N, std::int64_t N1, std::int64_t U1, double alpha,
                           double delta, double target) {
    const auto expected = ltt::detail::label_budget_by_scan(N, N1, U1, alpha, delta, target);
    const auto got = ltt::label_budget(N, N1, U1, alpha, delta, target);
    ++checked;
    if (!expected) ++none;
    CHECK_MESSAGE(got == expected, "N=" << N << " N1=" << N1 << " U1=" << U1 << " alpha=" << alpha
                                        << " delta=" << delta << " target=" << std::setprecision(17)
                                        << target << " got=" << (got ? *got : -1)
                                        << " scan=" << (expected ? *expected : -1));
  };
  const double alphas[] = {0.05, 0.1, 0.25, 0.4}, deltas[] = {0.05, 0.1, 0.2, 0.5};
  // 240 random pools in Release; a twentieth (at least 24) under the sanitizers, where a memory
  // error shows in a few (tests/support/monte_carlo.hpp).
  const std::int64_t pools = ltt_test::monte_carlo_draws(240, 24);
  for (std::int64_t pool = 0; pool < pools; ++pool) {
    // Small pools, mid pools, and pools much larger than S_1 (where n moves M by N1/N).
    const std::int64_t N_cap = pool % 3 == 0 ? 60 : pool % 3 == 1 ? 600 : 4000;
    const std::int64_t N = 1 + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(N_cap));
    std::int64_t N1 = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(N + 1));
    if (pool % 7 == 0) N1 = N;
    if (pool % 11 == 0) N1 = std::min<std::int64_t>(N, 1 + N1 / 20);
    const double alpha = alphas[rng() % 4], delta = deltas[rng() % 4];
    const std::int64_t U = ltt::null_boundary(N1, alpha);
    const std::int64_t U1 = std::min<std::int64_t>(
        N1, static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(U + 2)));
    for (double target : {0.01, 0.05, 0.1, 0.3, 0.5, 0.61, 0.9, 0.99, 0.999, 1.0 - 1e-9, 1.0})
      compare(N, N1, U1, alpha, delta, target);
    // Targets on the curve itself: the first n reaching rate(n0) exactly, or one ulp above it.
    const auto curve = ltt::certification_rate_curve(N, N1, U1, alpha, delta, N);
    for (int i = 0; i < 4; ++i) {
      const double r = curve[static_cast<std::size_t>(rng() % curve.size())];
      for (double target : {r, std::nextafter(r, 2.0), std::nextafter(r, -1.0)})
        if (target > 0.0 && target <= 1.0) {
          compare(N, N1, U1, alpha, delta, target);
          ++ties;
        }
    }
  }
  // Sawtooth pools (the rate falls after a jump of k_max) and true nulls below delta.
  for (const auto& [N, N1, U1] :
       std::initializer_list<std::tuple<std::int64_t, std::int64_t, std::int64_t>>{
           {2000, 300, 50},
           {2000, 300, 75},
           {2000, 300, 76},
           {5000, 40, 9},
           {3000, 3000, 700},
           {40, 6, 1},
           {4000, 17, 4}})
    for (double target : {0.02, 0.05, 0.08, 0.0999, 0.1, 0.25, 0.5, 0.9})
      compare(N, N1, U1, 0.25, 0.1, target);
  MESSAGE("label_budget against the scan: " << checked << " cases (" << none << " nullopt, " << ties
                                            << " targets on the curve)");
}

// Pools far larger than S_1: the old scan visited every n (about 1.5e9 here); the answer must
// still be the first n whose rate reaches the target, checked at the answer and before it
// with certification_rate (whose path starts at the window, not at m = 0: equal to 1e-12).
TEST_CASE("label_budget at N = 2^32 and 2^53") {
  for (const std::int64_t N : {std::int64_t{1} << 32, std::int64_t{1} << 53})
    for (const double target : {0.5, 0.9, 0.999999}) {
      // At N/N1 = 3e13 the rate climbs by about 1e-20 per n near 0.999999: the band within
      // the margin below the target alone holds about 1e8 n (docs/certification_rate.md).
      if (N == std::int64_t{1} << 53 && target > 0.9) continue;
      const auto n = ltt::label_budget(N, 300, 50, 0.25, 0.1, target);
      REQUIRE(n.has_value());
      CHECK(ltt::certification_rate(N, 300, 50, *n, 0.25, 0.1) >= target - rate_tolerance);
      CHECK(ltt::certification_rate(N, 300, 50, *n - 1, 0.25, 0.1) < target + rate_tolerance);
    }
  CHECK(!ltt::label_budget(std::int64_t{1} << 32, 300, 76, 0.25, 0.1, 0.099).has_value());
}

TEST_CASE("dichotomy (i): a true first null certifies at most delta at every n") {
  double closest = 0.0;  // the largest rate / delta seen
  std::string where;
  int curves = 0;
  for (std::int64_t N : {12, 50, 137, 400, 1000})
    for (std::int64_t percent : {10, 15, 50, 100})
      for (double alpha : {0.1, 0.25, 0.4})
        for (double delta : {0.05, 0.1, 0.3}) {
          const std::int64_t N1 = std::max<std::int64_t>(1, N * percent / 100);
          const std::int64_t U = ltt::null_boundary(N1, alpha);
          for (std::int64_t U1 : {U, U + 1, U + 3, (U + N1) / 2, N1}) {
            if (U1 > N1) continue;
            const auto curve = ltt::certification_rate_curve(N, N1, U1, alpha, delta, N);
            ++curves;
            for (std::size_t n = 0; n < curve.size(); ++n) {
              CHECK_MESSAGE(curve[n] <= delta + rate_tolerance,
                            "N=" << N << " N1=" << N1 << " U1=" << U1 << " n=" << n << " alpha="
                                 << alpha << " delta=" << delta << " rate=" << curve[n]);
              if (curve[n] / delta > closest) {
                closest = curve[n] / delta;
                where = "N=" + std::to_string(N) + " N1=" + std::to_string(N1) +
                        " U1=" + std::to_string(U1) + " n=" + std::to_string(n);
              }
            }
          }
        }
  MESSAGE("dichotomy (i): " << curves << " curves, largest rate/delta " << closest << " at "
                            << where);
  // The exact tables: every true-null row is at most delta (the generator checks this exactly
  // too), and so is the library's value.
  const auto rows = ltt_test::read_reference("certification_rate.csv");
  for (const auto& r : rows) {
    if (r.integer("N1") == 0 || r.integer("U1") < r.integer("U_star")) continue;
    const double delta = std::stod(r.text("delta"));
    CHECK(r.number("rate") <= static_cast<long double>(delta));
  }
}

TEST_CASE("dichotomy (ii): a false first null certifies surely at n = N, rising to it") {
  int curves = 0;
  for (std::int64_t N : {12, 50, 137, 400, 1000})
    for (std::int64_t percent : {10, 15, 50, 100})
      for (double alpha : {0.1, 0.25, 0.4})
        for (double delta : {0.05, 0.1, 0.3}) {
          const std::int64_t N1 = std::max<std::int64_t>(1, N * percent / 100);
          const std::int64_t U = ltt::null_boundary(N1, alpha);
          for (std::int64_t U1 : {U - 1, (U - 1) / 2, std::int64_t{0}}) {
            const auto curve = ltt::certification_rate_curve(N, N1, U1, alpha, delta, N);
            ++curves;
            const std::string where = "N=" + std::to_string(N) + " N1=" + std::to_string(N1) +
                                      " U1=" + std::to_string(U1) +
                                      " alpha=" + std::to_string(alpha) +
                                      " delta=" + std::to_string(delta);
            CHECK_MESSAGE(curve.front() == 0.0, where);
            CHECK_MESSAGE(curve.back() >= 1.0 - rate_tolerance, where);
            CHECK_MESSAGE(curve.back() <= 1.0, where);
            // The proof's lower bound: the draw holding all of S_1 certifies.
            double lower_half = 0, upper_half = 0;
            for (std::int64_t n = 0; n <= N; ++n) {
              const double r = curve[static_cast<std::size_t>(n)];
              CHECK_MESSAGE(r >= ltt::hypergeometric_pmf(N1, N, N1, n) - rate_tolerance,
                            where << " n=" << n);
              (2 * n <= N ? lower_half : upper_half) += r;
            }
            // Rising: the upper half of the budgets certifies more than the lower half.
            CHECK_MESSAGE(upper_half > lower_half, where);
          }
        }
  MESSAGE("dichotomy (ii): " << curves << " curves");
  // The exact tables at n = N.
  const auto rows = ltt_test::read_reference("certification_rate.csv");
  int at_N = 0;
  for (const auto& r : rows) {
    if (r.integer("N1") == 0 || r.integer("U1") >= r.integer("U_star") ||
        r.integer("n") != r.integer("N"))
      continue;
    ++at_N;
    CHECK(r.text("rate") == "1");
    CHECK(ltt::certification_rate(r.integer("N"), r.integer("N1"), r.integer("U1"), r.integer("n"),
                                  std::stod(r.text("alpha")), std::stod(r.text("delta"))) == 1.0);
  }
  CHECK(at_N > 500);
  // The dichotomy summary over a grid's unsafe fractions.
  const std::vector<double> clean{0.1, 0.2, 0.3}, dirty{0.3, 0.26, 0.4}, mixed{0.3, 0.1};
  const auto a = ltt::certification_dichotomy(0.25, clean);
  CHECK(a.purity_margin == doctest::Approx(0.15));
  CHECK(!a.rate_at_most_delta);
  CHECK(a.rate_tends_to_one);
  const auto b = ltt::certification_dichotomy(0.25, dirty);
  CHECK(b.purity_margin == doctest::Approx(-0.01));
  CHECK(b.rate_at_most_delta);
  CHECK(!b.rate_tends_to_one);
  const auto c = ltt::certification_dichotomy(0.25, mixed);  // a deep selection is clean only
  CHECK(!c.rate_at_most_delta);
  CHECK(!c.rate_tends_to_one);
  CHECK(ltt::purity_margin(0.25, clean) == doctest::Approx(0.15));
}

TEST_CASE("Hoeffding relaxation: c(m) >= 1 - exp(-m eps^2 / 2) past the minimum draws") {
  // The paper's claim (appendix B, "three Hoeffding steps"), against the library's c(m), which
  // matches the exact rationals to 1e-15 above. A failure is a counterexample to report, not a
  // tolerance to widen.
  double closest = 0.0;  // largest (1 - c(m)) / exp(-m eps^2 / 2): how near the bound comes
  std::string where, first_failure;
  long checked = 0, failures = 0;
  for (std::int64_t N1 : {50, 100, 200, 500, 1000, 3000, 100000})
    for (double alpha : {0.1, 0.25, 0.4, 0.6})
      for (double delta : {0.01, 0.05, 0.1, 0.3}) {
        const std::int64_t U = ltt::null_boundary(N1, alpha);
        std::vector<std::int64_t> unsafe_counts;  // about 40 values of U1 < U*, U* - 1 included
        for (std::int64_t U1 = 0; U1 < U - 1; U1 += std::max<std::int64_t>(1, U / 40))
          unsafe_counts.push_back(U1);
        unsafe_counts.push_back(U - 1);
        for (const std::int64_t U1 : unsafe_counts) {
          const double eps = alpha - static_cast<double>(U1) / static_cast<double>(N1);
          if (eps <= 0.0) continue;  // U1 = alpha N1 exactly: a false null, but no margin
          const std::int64_t m_min = ltt::hoeffding_min_draws(eps, delta);
          CHECK(m_min ==
                static_cast<std::int64_t>(std::ceil(2 * std::log(1 / delta) / (eps * eps))));
          if (m_min > 1) CHECK(ltt::hoeffding_rate_bound(m_min - 1, eps, delta) == 0.0);
          const std::int64_t m_max = std::min<std::int64_t>(N1, 10000);
          if (m_min > m_max) continue;
          CHECK(ltt::hoeffding_rate_bound(m_min, eps, delta) ==
                doctest::Approx(1.0 - std::exp(-static_cast<double>(m_min) * eps * eps / 2.0))
                    .epsilon(1e-12));
          const auto c = ltt::conditional_certification_rates(N1, U1, alpha, delta, m_max);
          for (std::int64_t m = m_min; m <= m_max; m += (N1 > 10000 ? 3 : 1)) {
            const double tail = std::exp(-static_cast<double>(m) * eps * eps / 2.0);
            const double cm = c[static_cast<std::size_t>(m)];
            ++checked;
            const bool failed = cm < 1.0 - tail - rate_tolerance;
            if ((1.0 - cm) / tail <= closest && !failed) continue;
            const std::string here = "N1=" + std::to_string(N1) + " U1=" + std::to_string(U1) +
                                     " m=" + std::to_string(m) + " alpha=" + std::to_string(alpha) +
                                     " delta=" + std::to_string(delta);
            if ((1.0 - cm) / tail > closest) closest = (1.0 - cm) / tail, where = here;
            if (failed && failures++ == 0)
              first_failure =
                  here + " c=" + std::to_string(cm) + " bound=" + std::to_string(1.0 - tail);
          }
        }
      }
  MESSAGE("Hoeffding relaxation: " << checked << " (N1, U1, m) checked, largest "
                                   << "(1 - c(m)) / exp(-m eps^2 / 2) " << closest << " at "
                                   << where);
  CHECK_MESSAGE(failures == 0,
                "HOEFFDING RELAXATION FAILS at " << failures << " points, first " << first_failure);
  CHECK(checked > 100000);
}

TEST_CASE("CertificationRateModel: one window for many U1") {
  using Shape = std::tuple<std::int64_t, std::int64_t, std::int64_t>;  // N, N1, n
  for (const auto& [N, N1, n] : {Shape{2000, 300, 200}, Shape{1000000, 150000, 10000},
                                 Shape{50, 50, 20}, Shape{100, 0, 30}}) {
    const ltt::CertificationRateModel model(N, N1, n, 0.25, 0.1);
    CHECK(model.truncated_mass() <= 1e-16);
    for (std::int64_t U1 = 0; U1 <= N1; U1 += std::max<std::int64_t>(1, N1 / 23))
      CHECK_MESSAGE(model.rate(U1) == ltt::certification_rate(N, N1, U1, n, 0.25, 0.1),
                    "N=" << N << " N1=" << N1 << " U1=" << U1 << " n=" << n);
  }
}

TEST_CASE("the rate matches a Monte Carlo simulation of the walk") {
  // Draw n of the pool's N without replacement (partial Fisher-Yates); items [0, N1) form
  // S_1 and items [0, U1) are its unsafe ones. Certify iff the first p-value is <= delta.
  struct Pool {
    std::int64_t N, N1, U1, n;
    double alpha, delta;
  };
  constexpr std::int64_t draws = ltt_test::monte_carlo_draws(100000);
  constexpr double level = 1e-6;  // each side: a false failure has probability 2e-6 per pool
  std::mt19937_64 rng(20261126);
  for (const Pool& p :
       {Pool{2000, 300, 50, 200, 0.25, 0.1}, Pool{1000, 150, 37, 400, 0.25, 0.1},
        Pool{1000, 150, 38, 500, 0.25, 0.1}, Pool{5000, 750, 120, 400, 0.2, 0.05}}) {
    std::vector<std::int64_t> items(static_cast<std::size_t>(p.N));
    for (std::int64_t i = 0; i < p.N; ++i) items[static_cast<std::size_t>(i)] = i;
    std::int64_t certified = 0;
    for (int t = 0; t < draws; ++t) {
      std::int64_t m = 0, k = 0;
      for (std::int64_t i = 0; i < p.n; ++i) {
        const auto j = std::uniform_int_distribution<std::int64_t>(i, p.N - 1)(rng);
        std::swap(items[static_cast<std::size_t>(i)], items[static_cast<std::size_t>(j)]);
        const std::int64_t x = items[static_cast<std::size_t>(i)];
        m += x < p.N1;
        k += x < p.U1;
      }
      certified += ltt::composition_pvalue(k, m, p.N1, p.alpha) <= p.delta;
    }
    const double rate = ltt::certification_rate(p.N, p.N1, p.U1, p.n, p.alpha, p.delta);
    const double lo = ltt::clopper_pearson_lower(certified, draws, level);
    const double hi = ltt::clopper_pearson_upper(certified, draws, level);
    MESSAGE("N=" << p.N << " N1=" << p.N1 << " U1=" << p.U1 << " n=" << p.n << ": rate " << rate
                 << ", simulated " << static_cast<double>(certified) / draws << " [" << lo << ", "
                 << hi << "]");
    CHECK(rate >= lo);
    CHECK(rate <= hi);
  }
}

TEST_CASE("certification rate functions reject invalid arguments, naming them") {
  ltt_test::check_throws_naming([] { ltt::critical_counts(-1, 0.25, 0.1, 0); }, "N1");
  ltt_test::check_throws_naming([] { ltt::critical_counts(100, 0.25, 0.1, -1); }, "m_max");
  ltt_test::check_throws_naming([] { ltt::critical_counts(100, 0.25, 0.1, 101); }, "m_max");
  ltt_test::check_throws_naming([] { ltt::critical_counts(100, 0.0, 0.1, 10); }, "alpha");
  ltt_test::check_throws_naming([] { ltt::critical_counts(100, 1.0, 0.1, 10); }, "alpha");
  ltt_test::check_throws_naming([] { ltt::critical_counts(100, not_a_number, 0.1, 10); }, "alpha");
  ltt_test::check_throws_naming([] { ltt::critical_counts(100, 0.25, 0.0, 10); }, "delta");
  ltt_test::check_throws_naming([] { ltt::critical_counts(100, 0.25, not_a_number, 10); }, "delta");

  ltt_test::check_throws_naming([] { ltt::conditional_certification_rates(-1, 0, 0.25, 0.1, 0); },
                                "N1");
  ltt_test::check_throws_naming(
      [] { ltt::conditional_certification_rates(100, -1, 0.25, 0.1, 10); }, "U1");
  ltt_test::check_throws_naming(
      [] { ltt::conditional_certification_rates(100, 101, 0.25, 0.1, 10); }, "U1");
  ltt_test::check_throws_naming(
      [] { ltt::conditional_certification_rates(100, 10, 0.25, 0.1, 101); }, "m_max");
  ltt_test::check_throws_naming(
      [] { ltt::conditional_certification_rates(100, 10, 0.25, 0.1, -1); }, "m_max");
  ltt_test::check_throws_naming([] { ltt::conditional_certification_rates(100, 10, 1.5, 0.1, 10); },
                                "alpha");
  ltt_test::check_throws_naming(
      [] { ltt::conditional_certification_rates(100, 10, 0.25, 1.0, 10); }, "delta");

  ltt_test::check_throws_naming([] { ltt::certification_rate(-1, 0, 0, 0, 0.25, 0.1); }, "N");
  ltt_test::check_throws_naming([] { ltt::certification_rate(100, 101, 0, 10, 0.25, 0.1); }, "N1");
  ltt_test::check_throws_naming([] { ltt::certification_rate(100, -1, 0, 10, 0.25, 0.1); }, "N1");
  ltt_test::check_throws_naming([] { ltt::certification_rate(100, 20, 21, 10, 0.25, 0.1); }, "U1");
  ltt_test::check_throws_naming([] { ltt::certification_rate(100, 20, -1, 10, 0.25, 0.1); }, "U1");
  ltt_test::check_throws_naming([] { ltt::certification_rate(100, 20, 5, 101, 0.25, 0.1); }, "n");
  ltt_test::check_throws_naming([] { ltt::certification_rate(100, 20, 5, -1, 0.25, 0.1); }, "n");
  ltt_test::check_throws_naming([] { ltt::certification_rate(100, 20, 5, 10, -0.25, 0.1); },
                                "alpha");
  ltt_test::check_throws_naming([] { ltt::certification_rate(100, 20, 5, 10, 0.25, 2.0); },
                                "delta");

  ltt_test::check_throws_naming([] { ltt::certification_rate_curve(100, 20, 5, 0.25, 0.1, 101); },
                                "n_max");
  ltt_test::check_throws_naming([] { ltt::certification_rate_curve(100, 20, 5, 0.25, 0.1, -1); },
                                "n_max");
  ltt_test::check_throws_naming([] { ltt::certification_rate_curve(100, 120, 5, 0.25, 0.1, 10); },
                                "N1");
  ltt_test::check_throws_naming(
      [] { ltt::certification_rate_curve(100, 20, 5, 0.25, not_a_number, 10); }, "delta");

  ltt_test::check_throws_naming([] { ltt::label_budget(100, 20, 5, 0.25, 0.1, -0.1); },
                                "target_rate");
  ltt_test::check_throws_naming([] { ltt::label_budget(100, 20, 5, 0.25, 0.1, 1.5); },
                                "target_rate");
  ltt_test::check_throws_naming([] { ltt::label_budget(100, 20, 5, 0.25, 0.1, not_a_number); },
                                "target_rate");
  ltt_test::check_throws_naming([] { ltt::label_budget(100, 20, 25, 0.25, 0.1, 0.5); }, "U1");
  ltt_test::check_throws_naming([] { ltt::label_budget(-100, 20, 5, 0.25, 0.1, 0.5); }, "N");
  ltt_test::check_throws_naming([] { ltt::label_budget(100, 20, 5, 0.0, 0.1, 0.5); }, "alpha");

  ltt_test::check_throws_naming([] { ltt::hoeffding_min_draws(0.0, 0.1); }, "margin");
  ltt_test::check_throws_naming([] { ltt::hoeffding_min_draws(-0.1, 0.1); }, "margin");
  ltt_test::check_throws_naming([] { ltt::hoeffding_min_draws(not_a_number, 0.1); }, "margin");
  ltt_test::check_throws_naming([] { ltt::hoeffding_min_draws(0.1, 1.0); }, "delta");
  ltt_test::check_throws_naming([] { ltt::hoeffding_rate_bound(-1, 0.1, 0.1); }, "m");
  ltt_test::check_throws_naming([] { ltt::purity_margin(0.25, std::vector<double>{}); },
                                "unsafe_fractions.size()");
  ltt_test::check_throws_naming(
      [] {
        ltt::purity_margin(0.25, std::vector<double>{0.1, 1.5});
      },
      "unsafe_fractions[1]");
}
