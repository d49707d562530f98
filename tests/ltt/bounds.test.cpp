// Tests for include/ltt/bounds.hpp: Clopper-Pearson against an exact rational table, the
// coverage of Maurer-Pontil and the super-uniformity of Hoeffding-Serfling by Monte Carlo with
// fixed seeds, the resampling corollary against its closed form, and argument checking.

#include <ltt/bounds.hpp>

#include "../support/monte_carlo.hpp"
#include "../support/reference_csv.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <numeric>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

double relative_error(double got, double want) {
  if (got == want) return 0.0;
  return std::abs(got - want) / std::abs(want);
}

// Monte Carlo verdict on "the event has probability at most delta": true when the
// Clopper-Pearson upper limit at level 1 - 1e-6 on the event's probability is <= delta. It can
// fail for a valid procedure only if that procedure's true rate sits within the Monte Carlo
// interval width of delta; the bounds tested here are far more conservative than that, and a
// broken one (see "the Monte Carlo verdict can fail") is flagged.
bool rate_certified_at_most(std::int64_t events, std::int64_t trials, double delta) {
  return ltt::clopper_pearson_upper(events, trials, 1e-6) <= delta;
}

// P[Bin(n, p) = k], by logs; used only for the exact-coverage property at small n.
double binomial_pmf(std::int64_t k, std::int64_t n, double p) {
  const auto kd = static_cast<double>(k);
  const auto nd = static_cast<double>(n);
  const double log_choose =
      std::lgamma(nd + 1.0) - std::lgamma(kd + 1.0) - std::lgamma(nd - kd + 1.0);
  return std::exp(log_choose + kd * std::log(p) + (nd - kd) * std::log1p(-p));
}

void check_invalid(const std::function<void()>& call, const std::string& parameter) {
  bool threw = false;
  try {
    call();
  } catch (const std::invalid_argument& e) {
    threw = true;
    const std::string message = e.what();
    INFO("message: " << message);
    CHECK(message.find("'" + parameter) != std::string::npos);
  }
  INFO("expected std::invalid_argument naming " << parameter);
  CHECK(threw);
}

}  // namespace

TEST_CASE("clopper_pearson matches the exact rational reference table") {
  // tests/reference/clopper_pearson.csv comes from binomial_reference.py: each limit is isolated
  // by bisection on exact integer binomial tails to 1e-25 relative and written to 20 digits, so
  // its own error (<= 5e-20) is negligible here. Tolerance 1e-12 relative: Boost's ibeta_inv /
  // ibetac_inv run a Halley search in long double (double promotion), and the measured worst
  // error over the table is a few 1e-16 (docs/bounds.md); 1e-12 leaves room for other
  // platforms' long double and libm while still catching a wrong tail, a wrong shape parameter
  // (an off-by-one in x moves the limit by ~1/n relative) or cancellation in the upper limit.
  int rows = 0;
  double worst_lower = 0.0, worst_upper = 0.0;
  std::string worst_lower_row = "(none: every row exact)", worst_upper_row = worst_lower_row;
  for (const auto& r : ltt_test::read_reference("clopper_pearson.csv")) {
    const std::int64_t x = r.integer("successes");
    const std::int64_t n = r.integer("trials");
    const double delta = static_cast<double>(r.number("delta"));
    const double want_lower = static_cast<double>(r.number("lower"));
    const double want_upper = static_cast<double>(r.number("upper"));
    const std::string line = r.text("successes") + "," + r.text("trials") + "," + r.text("delta");

    const double lower = ltt::clopper_pearson_lower(x, n, delta);
    const double upper = ltt::clopper_pearson_upper(x, n, delta);
    INFO("row: " << line);
    if (x == 0) CHECK(lower == 0.0);
    if (x == n) CHECK(upper == 1.0);
    const double el = relative_error(lower, want_lower);
    const double eu = relative_error(upper, want_upper);
    CHECK(el <= 1e-12);
    CHECK(eu <= 1e-12);
    if (el > worst_lower) worst_lower = el, worst_lower_row = line;
    if (eu > worst_upper) worst_upper = eu, worst_upper_row = line;
    ++rows;
  }
  const double eps = std::numeric_limits<double>::epsilon();
  MESSAGE("clopper_pearson table: " << rows << " rows; worst relative error lower " << worst_lower
                                    << " (" << worst_lower / eps << " eps) at " << worst_lower_row
                                    << "; upper " << worst_upper << " (" << worst_upper / eps
                                    << " eps) at " << worst_upper_row);
  CHECK(rows >= 250);
}

TEST_CASE("clopper_pearson trivial and closed-form cases") {
  CHECK(ltt::clopper_pearson_lower(0, 0, 0.1) == 0.0);
  CHECK(ltt::clopper_pearson_upper(0, 0, 0.1) == 1.0);
  CHECK(ltt::clopper_pearson_lower(0, 50, 0.1) == 0.0);
  CHECK(ltt::clopper_pearson_upper(50, 50, 0.1) == 1.0);
  // x = n: P[Bin(n, p) >= n] = p^n = delta; x = 0: (1 - p)^n = delta. Well beyond the table's n.
  for (std::int64_t n : {1, 7, 200, 100000, 10000000}) {
    for (double delta : {1e-8, 0.05, 0.5}) {
      const auto nd = static_cast<double>(n);
      CHECK(relative_error(ltt::clopper_pearson_lower(n, n, delta),
                           std::exp(std::log(delta) / nd)) <= 1e-13);
      CHECK(relative_error(ltt::clopper_pearson_upper(0, n, delta),
                           -std::expm1(std::log(delta) / nd)) <= 1e-13);
    }
  }
}

TEST_CASE("clopper_pearson limits have exact coverage at least 1 - delta") {
  // For every p, P_p[upper(X) < p] <= delta and P_p[lower(X) > p] <= delta, summed exactly over
  // the support of Bin(n, p). This is the property the paper uses, independent of the table.
  for (std::int64_t n : {1, 5, 20, 60}) {
    for (double delta : {0.05, 0.1, 0.3}) {
      std::vector<double> lo, up;
      for (std::int64_t x = 0; x <= n; ++x) {
        lo.push_back(ltt::clopper_pearson_lower(x, n, delta));
        up.push_back(ltt::clopper_pearson_upper(x, n, delta));
        if (delta <= 0.5) {
          CHECK(lo.back() <= static_cast<double>(x) / static_cast<double>(n));
          CHECK(up.back() >= static_cast<double>(x) / static_cast<double>(n));
        }
      }
      double worst = 0.0;
      for (int g = 1; g < 400; ++g) {
        const double p = g / 400.0;
        double miss_up = 0.0, miss_lo = 0.0;
        for (std::int64_t x = 0; x <= n; ++x) {
          const double w = binomial_pmf(x, n, p);
          if (up[static_cast<std::size_t>(x)] < p) miss_up += w;
          if (lo[static_cast<std::size_t>(x)] > p) miss_lo += w;
        }
        worst = std::max({worst, miss_up, miss_lo});
      }
      INFO("n = " << n << ", delta = " << delta << ", worst non-coverage " << worst);
      CHECK(worst <= delta * (1.0 + 1e-9));
      // The limits are exact: somewhere on the grid non-coverage comes close to delta.
      if (n >= 20) CHECK(worst >= 0.5 * delta);
    }
  }
}

TEST_CASE("clopper_pearson is monotone in successes and delta") {
  const std::int64_t n = 200;
  for (std::int64_t x = 1; x <= n; ++x) {
    CHECK(ltt::clopper_pearson_lower(x, n, 0.1) > ltt::clopper_pearson_lower(x - 1, n, 0.1));
    CHECK(ltt::clopper_pearson_upper(x, n, 0.1) > ltt::clopper_pearson_upper(x - 1, n, 0.1));
    CHECK(ltt::clopper_pearson_lower(x, n, 0.01) < ltt::clopper_pearson_lower(x, n, 0.1));
  }
}

TEST_CASE("the Monte Carlo verdict can fail") {
  // Negative control: the plain sample mean "bounds" the mean only about half the time, and
  // the same verdict used below must reject it, so the coverage tests have power.
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const std::int64_t reps = 2000;
  std::int64_t misses = 0;
  std::vector<double> x(30);
  for (std::int64_t r = 0; r < reps; ++r) {
    for (double& v : x) v = u(rng);
    if (std::accumulate(x.begin(), x.end(), 0.0) / 30.0 < 0.5) ++misses;
  }
  CHECK_FALSE(rate_certified_at_most(misses, reps, 0.1));
  CHECK_FALSE(rate_certified_at_most(misses, reps, 0.4));
}

TEST_CASE("maurer_pontil_upper hand-computed examples") {
  // x = {2, 4, 4, 4, 5, 5, 7, 9}, range 10, delta 0.1: mean 5, unbiased variance 32/7,
  // ln(2/delta) = ln 20. Bound = 5 + sqrt(2 (32/7) ln 20 / 8) + 70 ln 20 / 21, above 10 -> 10.
  const std::vector<double> small{2, 4, 4, 4, 5, 5, 7, 9};
  CHECK(ltt::maurer_pontil_upper(small, 10.0, 0.1) == 10.0);
  // The same values repeated 100 times (n = 800): squared deviations sum to 32 per copy, so
  // V = 3200 / 799, and the bound is 5 + sqrt(2 (3200/799) ln 20 / 800) + 70 ln 20 / (3 * 799).
  std::vector<double> big;
  for (int r = 0; r < 100; ++r) big.insert(big.end(), small.begin(), small.end());
  const double l20 = std::log(20.0);
  const double want =
      5.0 + std::sqrt(2.0 * (3200.0 / 799.0) * l20 / 800.0) + 70.0 * l20 / (3.0 * 799.0);
  CHECK(relative_error(ltt::maurer_pontil_upper(big, 10.0, 0.1), want) <= 1e-14);
  // Constant sample: V = 0, only the range term remains: c + 7 R ln(2/delta) / (3 (n - 1)).
  const std::vector<double> flat(1001, 0.25);
  CHECK(relative_error(ltt::maurer_pontil_upper(flat, 2.0, 0.05),
                       0.25 + 14.0 * std::log(40.0) / 3000.0) <= 1e-14);
  // Huge range: no overflow, and the scale invariance of the theorem holds.
  std::vector<double> scaled;
  for (double v : big) scaled.push_back(v * 1e300);
  CHECK(relative_error(ltt::maurer_pontil_upper(scaled, 1e301, 0.1), want * 1e300) <= 1e-13);
  // Variance from a two-pass sum stays exact where the one-pass formula cancels.
  std::vector<double> offset;
  for (int i = 0; i < 1000; ++i) offset.push_back(1e8 + (i % 2));  // V = 0.25 * 1000 / 999
  const double v = 0.25 * 1000.0 / 999.0;
  const double want_offset =
      (1e8 + 0.5) + std::sqrt(2.0 * v * l20 / 1000.0) + 7.0 * 2e8 * l20 / (3.0 * 999.0);
  CHECK(relative_error(ltt::maurer_pontil_upper(offset, 2e8, 0.1), want_offset) <= 1e-14);
}

namespace {

// Number of the `reps` samples of size n whose Maurer-Pontil bound falls below the true mean.
template <class Draw>
std::int64_t maurer_pontil_misses(Draw draw, double mean, double range, std::size_t n, double delta,
                                  std::int64_t reps, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<double> x(n);
  std::int64_t misses = 0;
  for (std::int64_t r = 0; r < reps; ++r) {
    for (double& v : x) v = draw(rng);
    if (ltt::maurer_pontil_upper(x, range, delta) < mean) ++misses;
  }
  return misses;
}

}  // namespace

TEST_CASE("maurer_pontil_upper covers the mean (Monte Carlo)") {
  const std::int64_t reps = ltt_test::monte_carlo_draws(20000);
  struct Case {
    std::string name;
    std::function<double(std::mt19937_64&)> draw;
    double mean, range;
    std::size_t n;
    double delta;
  };
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const std::vector<Case> cases{
      {"Bernoulli(0.1), n = 50", [u](std::mt19937_64& g) mutable { return u(g) < 0.1 ? 1.0 : 0.0; },
       0.1, 1.0, 50, 0.1},
      {"Bernoulli(0.02) x 1000, n = 200",
       [u](std::mt19937_64& g) mutable { return u(g) < 0.02 ? 1000.0 : 0.0; }, 20.0, 1000.0, 200,
       0.2},
      // Rare events: 60% of samples are all zero (V = 0), so only the range term covers.
      {"Bernoulli(0.005), n = 100",
       [u](std::mt19937_64& g) mutable { return u(g) < 0.005 ? 1.0 : 0.0; }, 0.005, 1.0, 100, 0.1},
      // U^3 is Beta(1/3, 1) on [0, 1], mean 1/4, skewed toward 0.
      {"10 U^3, n = 30",
       [u](std::mt19937_64& g) mutable {
         const double v = u(g);
         return 10.0 * v * v * v;
       },
       2.5, 10.0, 30, 0.1},
      // 1 - U^3: mass piled at the top of the range.
      {"1 - U^3, n = 1000",
       [u](std::mt19937_64& g) mutable {
         const double v = u(g);
         return 1.0 - v * v * v;
       },
       0.75, 1.0, 1000, 0.05},
  };
  std::uint64_t seed = 11;
  for (const auto& c : cases) {
    const auto misses = maurer_pontil_misses(c.draw, c.mean, c.range, c.n, c.delta, reps, seed++);
    MESSAGE("maurer_pontil " << c.name << ", delta " << c.delta << ": " << misses << " misses in "
                             << reps << ", CP upper (1e-6) "
                             << ltt::clopper_pearson_upper(misses, reps, 1e-6));
    CHECK(rate_certified_at_most(misses, reps, c.delta));
  }
}

TEST_CASE("hoeffding_serfling_pvalue hand-computed example") {
  // costs {0.2, 0.4, 0.6}, population 10, budget 0.6, range 1: mean 0.4, t = 0.2,
  // correction 1 - 2/10 = 0.8, p = exp(-2 * 3 * 0.04 / 0.8) = exp(-0.3).
  const std::vector<double> s{0.2, 0.4, 0.6};
  CHECK(relative_error(ltt::hoeffding_serfling_pvalue(s, 10, 0.6, 1.0), std::exp(-0.3)) <= 1e-14);
  // Range 5 scales t: same costs, budget 1.6: t = 1.2, p = exp(-6 * 1.44 / (0.8 * 25)).
  CHECK(relative_error(ltt::hoeffding_serfling_pvalue(s, 10, 1.6, 5.0),
                       std::exp(-6.0 * 1.44 / 20.0)) <= 1e-14);
  // Mean at or above budget: no evidence, p = 1.
  CHECK(ltt::hoeffding_serfling_pvalue(s, 10, 0.4, 1.0) == 1.0);
  CHECK(ltt::hoeffding_serfling_pvalue(s, 10, -3.0, 1.0) == 1.0);
  // Full census n = N: correction 1/N.
  CHECK(relative_error(ltt::hoeffding_serfling_pvalue(s, 3, 0.6, 1.0),
                       std::exp(-2.0 * 3 * 0.04 * 3.0)) <= 1e-14);
  // Infinite population limit is Hoeffding: N = 2^53 leaves the correction at 1 - 2^-52.
  CHECK(relative_error(ltt::hoeffding_serfling_pvalue(s, std::int64_t{1} << 53, 0.6, 1.0),
                       std::exp(-0.24)) <= 1e-14);
  // Far beyond the range: p underflows to 0, never NaN.
  CHECK(ltt::hoeffding_serfling_pvalue(s, 10, 1e300, 1.0) == 0.0);
  CHECK(ltt::hoeffding_serfling_pvalue(std::vector<double>{0.0, 1e-300}, 10, 1.0, 1e-300) == 0.0);
}

TEST_CASE("hoeffding_serfling_pvalue is super-uniform under the null (Monte Carlo)") {
  // Populations whose mean is exactly the budget (the boundary of H0, the hardest case) or
  // above it; costs are multiples of 1/8 over 64 or 256 items so the mean is exact in binary.
  // P[p <= delta] must not exceed delta.
  const std::int64_t reps = ltt_test::monte_carlo_draws(20000);
  struct Case {
    std::string name;
    std::vector<double> population;
    std::size_t n;
    double budget_below_mean, range, delta;
  };
  std::vector<double> two_point(64, 0.0);
  std::fill(two_point.begin(), two_point.begin() + 16, 1.0);  // mean 0.25
  std::vector<double> graded;
  for (int i = 0; i < 256; ++i) graded.push_back((i * 37 % 81) / 8.0);  // costs in [0, 10]
  std::vector<double> rare(256, 0.0);
  std::fill(rare.begin(), rare.begin() + 4, 40.0);  // mean 0.625, range 40
  const std::vector<Case> cases{
      {"two-point N=64, n=60 (correction 0.08)", two_point, 60, 0.0, 1.0, 0.1},
      {"two-point N=64, n=20", two_point, 20, 0.0, 1.0, 0.2},
      {"graded N=256, n=200", graded, 200, 0.0, 10.0, 0.1},
      {"graded N=256, n=40, mean above budget", graded, 40, 0.25, 10.0, 0.1},
      {"rare N=256, n=100", rare, 100, 0.0, 40.0, 0.5},
  };
  std::mt19937_64 rng(2024);
  for (const auto& c : cases) {
    std::vector<double> pop = c.population;
    const double mean =
        std::accumulate(pop.begin(), pop.end(), 0.0) / static_cast<double>(pop.size());
    const double budget = mean - c.budget_below_mean;
    std::int64_t rejections = 0;
    for (std::int64_t r = 0; r < reps; ++r) {
      // Partial Fisher-Yates: the first n entries become a uniform draw without replacement.
      for (std::size_t i = 0; i < c.n; ++i) {
        std::uniform_int_distribution<std::size_t> pick(i, pop.size() - 1);
        std::swap(pop[i], pop[pick(rng)]);
      }
      const std::span<const double> sample(pop.data(), c.n);
      if (ltt::hoeffding_serfling_pvalue(sample, static_cast<std::int64_t>(pop.size()), budget,
                                         c.range) <= c.delta)
        ++rejections;
    }
    MESSAGE("hoeffding_serfling " << c.name << ", delta " << c.delta << ": " << rejections
                                  << " rejections in " << reps << ", CP upper (1e-6) "
                                  << ltt::clopper_pearson_upper(rejections, reps, 1e-6));
    CHECK(rate_certified_at_most(rejections, reps, c.delta));
  }
}

TEST_CASE("hoeffding_serfling_pvalue rejects when the mean is well below budget") {
  // Power sanity: a population at mean 0.25 tested against budget 0.6 rejects at delta 0.1
  // for every sample of 60 out of 64 (the sample mean is at most 16/60 < 0.6 - t_delta).
  std::vector<double> pop(64, 0.0);
  std::fill(pop.begin(), pop.begin() + 16, 1.0);
  const std::span<const double> sample(pop.data(), 60);
  CHECK(ltt::hoeffding_serfling_pvalue(sample, 64, 0.6, 1.0) <= 0.1);
}

TEST_CASE("resampled_unsafe_bound: the corollary to Proposition guarantee") {
  for (double alpha : {0.0, 1e-6, 0.05, 0.25, 0.5, 0.9, 1.0}) {
    double previous = -1.0;
    for (double kappa = 0.0; kappa <= 12.0; kappa += 0.25) {
      const double r = ltt::resampled_unsafe_bound(alpha, kappa);
      const double e = std::exp(2.0 * kappa);
      const double formula = alpha == 0.0 ? 0.0 : e * alpha / (e * alpha + 1.0 - alpha);
      INFO("alpha " << alpha << ", kappa " << kappa);
      CHECK(relative_error(r, formula) <= 1e-14);
      CHECK(r >= previous);
      if (alpha > 0.0 && alpha < 1.0) {
        CHECK(r > previous);
        CHECK(r < 1.0);
      }
      CHECK(r >= alpha);
      previous = r;
    }
    CHECK(relative_error(ltt::resampled_unsafe_bound(alpha, 0.0), alpha) <= 4e-16);
  }
  // The paper's remark: at alpha = 0.25 the bound already exceeds one half by kappa = 1.
  CHECK(ltt::resampled_unsafe_bound(0.25, 1.0) > 0.5);
  // Large kappa: e^{2 kappa} overflows, the bound does not; 1 is its correctly rounded value.
  for (double alpha : {0.0, 1e-300, 0.25, 1.0}) {
    const double r = ltt::resampled_unsafe_bound(alpha, 1e3);
    CHECK_FALSE(std::isnan(r));
    CHECK(r <= 1.0);
    CHECK(r == (alpha == 0.0 ? 0.0 : 1.0));
  }
  CHECK(ltt::resampled_unsafe_bound(0.25, std::numeric_limits<double>::max()) == 1.0);
}

TEST_CASE("bounds reject invalid arguments, naming the parameter") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (auto f : {&ltt::clopper_pearson_lower, &ltt::clopper_pearson_upper}) {
    check_invalid([f] { f(-1, 10, 0.1); }, "successes");
    check_invalid([f] { f(0, -1, 0.1); }, "trials");
    check_invalid([f] { f(11, 10, 0.1); }, "successes");
    check_invalid([f] { f(1, (std::int64_t{1} << 53) + 1, 0.1); }, "trials");
    for (double d : {0.0, 1.0, -0.5, 1.5, nan, inf})
      check_invalid([f, d] { f(3, 10, d); }, "delta");
  }

  const std::vector<double> ok{0.1, 0.5, 0.9};
  check_invalid([] { ltt::maurer_pontil_upper(std::vector<double>{0.5}, 1.0, 0.1); }, "x.size()");
  check_invalid([] { ltt::maurer_pontil_upper(std::vector<double>{}, 1.0, 0.1); }, "x.size()");
  for (double r : {0.0, -1.0, nan, inf})
    check_invalid([&ok, r] { ltt::maurer_pontil_upper(ok, r, 0.1); }, "range");
  for (double d : {0.0, 1.0, nan})
    check_invalid([&ok, d] { ltt::maurer_pontil_upper(ok, 1.0, d); }, "delta");
  for (double bad : {-0.1, 1.5, nan, inf}) {
    const std::vector<double> x{0.1, 0.2, bad, 0.3};
    check_invalid([x] { ltt::maurer_pontil_upper(x, 1.0, 0.1); }, "x[2]");
  }

  check_invalid([] { ltt::hoeffding_serfling_pvalue(std::vector<double>{}, 10, 0.5, 1.0); },
                "sample_costs.size()");
  check_invalid([&ok] { ltt::hoeffding_serfling_pvalue(ok, 2, 0.5, 1.0); }, "sample_costs.size()");
  check_invalid([&ok] { ltt::hoeffding_serfling_pvalue(ok, -5, 0.5, 1.0); }, "population");
  for (double b : {nan, inf, -inf})
    check_invalid([&ok, b] { ltt::hoeffding_serfling_pvalue(ok, 10, b, 1.0); }, "budget");
  for (double r : {0.0, -2.0, nan, inf})
    check_invalid([&ok, r] { ltt::hoeffding_serfling_pvalue(ok, 10, 0.5, r); }, "range");
  for (double bad : {-1e-12, 1.0000001, nan}) {
    const std::vector<double> x{0.5, bad};
    check_invalid([x] { ltt::hoeffding_serfling_pvalue(x, 10, 0.5, 1.0); }, "sample_costs[1]");
  }

  for (double a : {-0.01, 1.01, nan, inf})
    check_invalid([a] { ltt::resampled_unsafe_bound(a, 1.0); }, "alpha");
  for (double k : {-0.5, nan, inf, -inf})
    check_invalid([k] { ltt::resampled_unsafe_bound(0.25, k); }, "kappa");
}
