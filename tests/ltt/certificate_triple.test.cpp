// The certificate triple: the discretized Jeffreys posterior on U_1 against closed forms and
// quadrature, r_hat and r_lo against brute force over every u, the bracket mode against the
// exhaustive mode, argument checks, and a coverage sanity run on constructed pools (fixed
// seeds; numbers reported, only what must hold asserted).

#include <ltt/certificate_triple.hpp>
#include <ltt/certification_rate.hpp>
#include <ltt/pvalue.hpp>

#include <doctest/doctest.h>

#include "../support/monte_carlo.hpp"
#include "../support/throws.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <numbers>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace {

using ltt_test::check_throws_naming;

struct TriplePool {
  std::int64_t N, N1, n;
  double alpha, delta;
};

std::vector<double> rates_by_u(const TriplePool& p) {
  std::vector<double> r;
  for (std::int64_t u = 0; u <= p.N1; ++u)
    r.push_back(ltt::certification_rate(p.N, p.N1, u, p.n, p.alpha, p.delta));
  return r;
}

// Brute force: every u, each rate from certification_rate, summed in long double.
long double brute_force_mean(const ltt::UnsafeCountPosterior& post, const std::vector<double>& r) {
  long double s = 0.0L;
  for (std::int64_t u = 0; u <= post.N1(); ++u)
    s += static_cast<long double>(post.pmf(u)) * r[static_cast<std::size_t>(u)];
  return s;
}

// Brute force lower decile: the largest rate value y with P[rate(U1) >= y] >= 1 - level,
// found by sorting the (rate, mass) pairs, without using monotonicity in u.
double brute_force_lower_quantile(const ltt::UnsafeCountPosterior& post,
                                  const std::vector<double>& r, double level) {
  std::vector<std::pair<double, double>> rm;  // (rate, mass)
  for (std::int64_t u = 0; u <= post.N1(); ++u)
    rm.emplace_back(r[static_cast<std::size_t>(u)], post.pmf(u));
  std::sort(rm.begin(), rm.end(), [](auto x, auto y) { return x.first > y.first; });
  long double at_least = 0.0L;
  for (std::size_t i = 0; i < rm.size(); ++i) {
    at_least += rm[i].second;
    const bool last_of_value = i + 1 == rm.size() || rm[i + 1].first < rm[i].first;
    if (last_of_value && at_least >= 1.0L - static_cast<long double>(level)) return rm[i].first;
  }
  return rm.back().first;
}

// Gauss-Legendre nodes and weights on [-1, 1] by Newton's method on P_n, in long double.
std::vector<std::pair<long double, long double>> gauss_legendre(int n) {
  std::vector<std::pair<long double, long double>> nw;
  for (int i = 1; i <= n; ++i) {
    long double x = std::cos(std::numbers::pi_v<long double> * (i - 0.25L) / (n + 0.5L));
    long double dp = 0.0L;
    for (int it = 0; it < 100; ++it) {
      long double p0 = 1.0L, p1 = x;
      for (int k = 2; k <= n; ++k) {
        const long double p2 = ((2 * k - 1) * x * p1 - (k - 1) * p0) / k;
        p0 = p1;
        p1 = p2;
      }
      dp = n * (x * p1 - p0) / (x * x - 1.0L);
      const long double dx = p1 / dp;
      x -= dx;
      if (std::abs(dx) < 1e-19L) break;
    }
    nw.emplace_back(x, 2.0L / ((1.0L - x * x) * dp * dp));
  }
  return nw;
}

// P[U1 = u] by quadrature, independent of Boost: with u1 = sin^2(theta) the Beta(k + 1/2,
// j + 1/2) density becomes 2 sin^{2k} cos^{2j} / B, smooth on [0, pi/2].
long double quadrature_mass(std::int64_t N1, std::int64_t m1, std::int64_t k1, std::int64_t u) {
  static const auto nodes = gauss_legendre(24);
  const long double a = k1 + 0.5L, b = (m1 - k1) + 0.5L;
  const long double log_beta = std::lgamma(a) + std::lgamma(b) - std::lgamma(a + b);
  const long double lo = std::clamp((u - 0.5L) / N1, 0.0L, 1.0L);
  const long double hi = std::clamp((u + 0.5L) / N1, 0.0L, 1.0L);
  const long double t0 = std::asin(std::sqrt(lo)), t1 = std::asin(std::sqrt(hi));
  constexpr int panels = 16;
  long double sum = 0.0L;
  for (int p = 0; p < panels; ++p) {
    const long double x0 = t0 + (t1 - t0) * p / panels, x1 = t0 + (t1 - t0) * (p + 1) / panels;
    for (const auto& [x, w] : nodes) {
      const long double th = (x0 + x1) / 2 + (x1 - x0) / 2 * x;
      const long double s = std::sin(th), c = std::cos(th);
      const long double log_f =
          (k1 > 0 ? 2 * k1 * std::log(s) : 0.0L) + (m1 > k1 ? 2 * (m1 - k1) * std::log(c) : 0.0L);
      sum += w * (x1 - x0) / 2 * 2.0L * std::exp(log_f - log_beta);
    }
  }
  return sum;
}

}  // namespace

TEST_CASE("posterior: no draws in S_1 gives the Jeffreys prior, arcsine cells") {
  for (std::int64_t N1 : {1, 2, 7, 300, 100000}) {
    const ltt::UnsafeCountPosterior post(N1, 0, 0);
    CHECK(post.a() == 0.5);
    CHECK(post.b() == 0.5);
    double worst = 0.0;
    for (std::int64_t u = 0; u <= N1; u += std::max<std::int64_t>(1, N1 / 500)) {
      const long double lo = std::clamp((u - 0.5L) / N1, 0.0L, 1.0L);
      const long double hi = std::clamp((u + 0.5L) / N1, 0.0L, 1.0L);
      const long double exact = 2.0L / std::numbers::pi_v<long double> *
                                (std::asin(std::sqrt(hi)) - std::asin(std::sqrt(lo)));
      worst = std::max(worst, static_cast<double>(std::abs(post.pmf(u) - exact)));
    }
    CHECK(worst < 4e-16);
  }
}

TEST_CASE("posterior: cell masses against quadrature, sum to one, tails complement") {
  struct Case {
    std::int64_t N1, m1, k1;
  };
  double worst_quadrature = 0.0, worst_sum = 0.0, worst_complement = 0.0;
  for (const Case c :
       {Case{1, 1, 0}, Case{5, 3, 3}, Case{20, 20, 4}, Case{120, 40, 0}, Case{300, 30, 5},
        Case{300, 60, 15}, Case{300, 200, 199}, Case{1000, 150, 40}}) {
    const ltt::UnsafeCountPosterior post(c.N1, c.m1, c.k1);
    CHECK(post.a() == c.k1 + 0.5);
    CHECK(post.b() == c.m1 - c.k1 + 0.5);
    long double total = 0.0L;
    for (std::int64_t u = 0; u <= c.N1; ++u) {
      const double p = post.pmf(u);
      CHECK(p >= 0.0);
      total += p;
      worst_quadrature =
          std::max(worst_quadrature,
                   static_cast<double>(std::abs(p - quadrature_mass(c.N1, c.m1, c.k1, u))));
      worst_complement = std::max(worst_complement, std::abs(post.cdf(u) + post.sf(u) - 1.0));
      if (u > 0)
        CHECK(post.mass(u - 1, u) == doctest::Approx(post.pmf(u - 1) + post.pmf(u)).epsilon(1e-12));
    }
    worst_sum = std::max(worst_sum, static_cast<double>(std::abs(total - 1.0L)));
    CHECK(post.cdf(-1) == 0.0);
    CHECK(post.sf(c.N1) == 0.0);
    CHECK(post.mass(0, c.N1) == 1.0);
    CHECK(post.mass(3, 2) == 0.0);
  }
  MESSAGE("posterior cells: worst |mass - quadrature| " << worst_quadrature << ", worst |sum - 1| "
                                                        << worst_sum << ", worst |cdf + sf - 1| "
                                                        << worst_complement);
  CHECK(worst_quadrature < 1e-15);
  CHECK(worst_sum < 1e-14);
  CHECK(worst_complement < 1e-15);
}

TEST_CASE("posterior: quantiles are the smallest / largest u meeting their tail condition") {
  for (const auto& [N1, m1, k1] : std::vector<std::tuple<std::int64_t, std::int64_t, std::int64_t>>{
           {1, 0, 0}, {10, 4, 1}, {300, 30, 5}, {300, 0, 0}, {5000, 700, 690}, {5000, 700, 0}}) {
    const ltt::UnsafeCountPosterior post(N1, m1, k1);
    for (double level : {1e-13, 5e-13, 1e-6, 0.05, 0.1, 0.5, 0.9}) {
      const std::int64_t q = post.upper_quantile(level);
      CHECK(post.sf(q) <= level);
      if (q > 0) CHECK(post.sf(q - 1) > level);
      const std::int64_t l = post.lower_quantile(level);
      CHECK(post.cdf(l - 1) <= level);
      if (l < N1) CHECK(post.cdf(l) > level);
    }
  }
}

TEST_CASE("rate is non-increasing in U1 (checked, not assumed)") {
  for (const TriplePool p :
       {TriplePool{60, 20, 30, 0.25, 0.1}, TriplePool{500, 120, 100, 0.2, 0.05},
        TriplePool{2000, 300, 200, 0.25, 0.1}, TriplePool{2000, 300, 400, 0.4, 0.2}}) {
    const auto r = rates_by_u(p);
    double worst_rise = 0.0;
    for (std::size_t u = 1; u < r.size(); ++u) worst_rise = std::max(worst_rise, r[u] - r[u - 1]);
    CHECK(worst_rise <= 1e-12);
    CHECK(r.front() <= 1.0);
    CHECK(r.back() >= 0.0);
  }
}

TEST_CASE("r_hat and r_lo against brute force over every u on small pools") {
  struct Case {
    TriplePool pool;
    std::vector<std::pair<std::int64_t, std::int64_t>> counts;  // (m1, k1)
  };
  const std::vector<Case> cases{
      {{60, 20, 30, 0.25, 0.1}, {{0, 0}, {5, 0}, {10, 1}, {10, 3}, {20, 2}}},
      {{500, 120, 100, 0.2, 0.05}, {{0, 0}, {24, 0}, {24, 2}, {24, 6}, {40, 5}}},
      {{2000, 300, 200, 0.25, 0.1},
       {{0, 0}, {30, 0}, {30, 3}, {30, 5}, {30, 8}, {45, 9}, {20, 15}}},
      {{2000, 300, 400, 0.4, 0.2}, {{60, 12}, {60, 24}, {80, 20}}},
      {{300, 300, 150, 0.25, 0.1}, {{150, 10}, {150, 30}}},  // S_1 is the whole pool: m1 = n
  };
  double worst_exhaustive = 0.0, worst_bracket = 0.0, worst_lo = 0.0;
  for (const auto& c : cases) {
    const TriplePool& p = c.pool;
    const auto r = rates_by_u(p);
    for (const auto& [m1, k1] : c.counts) {
      CAPTURE(p.N);
      CAPTURE(m1);
      CAPTURE(k1);
      const ltt::UnsafeCountPosterior post(p.N1, m1, k1);
      const long double brute = brute_force_mean(post, r);
      ltt::CertificateTripleOptions exhaustive, bracket;
      exhaustive.sum = ltt::CertificateTripleOptions::Sum::exhaustive;
      bracket.sum = ltt::CertificateTripleOptions::Sum::bracket;
      const auto te = ltt::certificate_triple(p.N, p.N1, m1, k1, p.n, p.alpha, p.delta, exhaustive);
      const auto tb = ltt::certificate_triple(p.N, p.N1, m1, k1, p.n, p.alpha, p.delta, bracket);
      // Windows this small are summed exhaustively by default.
      const auto ta = ltt::certificate_triple(p.N, p.N1, m1, k1, p.n, p.alpha, p.delta);
      CHECK(ta.exhaustive);
      CHECK(ta.r_hat == te.r_hat);
      CHECK_FALSE(tb.exhaustive);
      // Exhaustive: exact up to the bracketed tails (<= 1e-12 / 2) and rounding.
      CHECK(te.error_bound <= 0.5e-12);
      CHECK(std::abs(te.r_hat - brute) <= te.error_bound + 1e-14);
      CHECK(std::abs(tb.r_hat - brute) <= tb.error_bound + 1e-14);
      CHECK(tb.error_bound <= 0.5e-9);
      CHECK(tb.r_hat_lower <= brute + 1e-14);
      CHECK(brute <= tb.r_hat_upper + 1e-14);
      worst_exhaustive =
          std::max(worst_exhaustive, static_cast<double>(std::abs(te.r_hat - brute)));
      worst_bracket = std::max(worst_bracket, static_cast<double>(std::abs(tb.r_hat - brute)));
      // r_lo: the identity rate at the upper decile of U1 == the lower decile of rate(U1).
      const double lo = brute_force_lower_quantile(post, r, 0.1);
      CHECK(te.r_lo == tb.r_lo);
      CHECK(te.U1_upper_decile == post.upper_quantile(0.1));
      worst_lo = std::max(worst_lo, std::abs(tb.r_lo - lo));
      CHECK(std::abs(tb.r_lo - lo) <= 1e-15);
      CHECK(tb.conditional_bound == (tb.r_lo > p.delta ? p.delta / tb.r_lo : 1.0));
      CHECK(tb.posterior_a == k1 + 0.5);
      CHECK(tb.posterior_b == m1 - k1 + 0.5);
      CHECK(tb.rate_evaluations <= te.rate_evaluations);
      CHECK(te.rate_evaluations == te.window_hi - te.window_lo + 1);
    }
  }
  MESSAGE("vs brute force: worst |r_hat - brute| exhaustive "
          << worst_exhaustive << ", bracket " << worst_bracket << "; worst |r_lo - brute| "
          << worst_lo);
}

TEST_CASE("r_lo identity holds for any non-increasing rate, including steps and plateaus") {
  const ltt::UnsafeCountPosterior post(200, 40, 9);
  for (std::int64_t c = 0; c <= 201; c += 7) {
    std::vector<double> r;
    for (std::int64_t u = 0; u <= 200; ++u) r.push_back(u < c ? 0.8 : (u < c + 20 ? 0.3 : 0.0));
    const auto t = ltt::certificate_triple(1000, 200, 40, 9, 200, 0.25, 0.1, [&](std::int64_t u) {
      return r[static_cast<std::size_t>(u)];
    });
    CHECK(t.r_lo == brute_force_lower_quantile(post, r, 0.1));
    CHECK(std::abs(t.r_hat - brute_force_mean(post, r)) <= t.error_bound + 1e-15);
  }
}

TEST_CASE("bracket: a synthetic step rate is summed exactly, a linear one within the bound") {
  const std::int64_t N1 = 20000;
  const ltt::UnsafeCountPosterior post(N1, 2000, 500);
  const std::int64_t step = 4960;
  ltt::CertificateTripleOptions bracket;
  bracket.sum = ltt::CertificateTripleOptions::Sum::bracket;
  const auto t = ltt::certificate_triple(
      1000000, N1, 2000, 500, 10000, 0.25, 0.1,
      [&](std::int64_t u) { return u < step ? 1.0 : 0.0; }, bracket);
  // Sum P[U1 = u] over u < step is P[U1 <= step - 1]; the bracket closes on the step.
  CHECK(std::abs(t.r_hat - post.cdf(step - 1)) <= t.error_bound + 1e-15);
  CHECK(t.error_bound <= 0.5e-12);
  CHECK(t.rate_evaluations < 200);

  std::int64_t calls = 0;
  const auto linear = [&](std::int64_t u) {
    ++calls;
    return 1.0 - static_cast<double>(u) / N1;
  };
  long double mean_u = 0.0L;
  for (std::int64_t u = 0; u <= N1; ++u) mean_u += static_cast<long double>(post.pmf(u)) * u;
  const double exact = static_cast<double>(1.0L - mean_u / N1);
  for (double tol : {1e-3, 1e-6, 1e-9}) {
    ltt::CertificateTripleOptions o = bracket;
    o.tolerance = tol;
    calls = 0;
    const auto tl = ltt::certificate_triple(1000000, N1, 2000, 500, 10000, 0.25, 0.1, linear, o);
    CHECK(calls == tl.rate_evaluations);
    CHECK(tl.error_bound <= tol / 2);
    CHECK(std::abs(tl.r_hat - exact) <= tl.error_bound + 1e-14);
  }
}

TEST_CASE("bracket mode matches the exhaustive mode within its bound on a medium pool") {
  const TriplePool p{100000, 15000, 2000, 0.25, 0.1};
  const ltt::CertificationRateModel model(p.N, p.N1, p.n, p.alpha, p.delta);
  std::vector<double> table(static_cast<std::size_t>(p.N1 + 1), -1.0);
  const auto rate = [&](std::int64_t u) {
    auto& x = table[static_cast<std::size_t>(u)];
    if (x < 0.0) x = model.rate(u);
    return x;
  };
  for (const auto& [m1, k1] : std::vector<std::pair<std::int64_t, std::int64_t>>{
           {300, 45}, {300, 66}, {300, 75}, {280, 90}, {320, 20}}) {
    CAPTURE(m1);
    CAPTURE(k1);
    ltt::CertificateTripleOptions exhaustive;
    exhaustive.sum = ltt::CertificateTripleOptions::Sum::exhaustive;
    const auto te =
        ltt::certificate_triple(p.N, p.N1, m1, k1, p.n, p.alpha, p.delta, rate, exhaustive);
    std::int64_t previous_evaluations = 0;
    for (double tol : {1e-2, 1e-5, 1e-9}) {
      ltt::CertificateTripleOptions o;
      o.sum = ltt::CertificateTripleOptions::Sum::bracket;
      o.tolerance = tol;
      const auto tb = ltt::certificate_triple(p.N, p.N1, m1, k1, p.n, p.alpha, p.delta, rate, o);
      CHECK(tb.error_bound < tol / 2);
      CHECK(std::abs(tb.r_hat - te.r_hat) <= tb.error_bound + te.error_bound + 1e-14);
      CHECK(tb.r_lo == te.r_lo);
      CHECK(tb.rate_evaluations >= previous_evaluations);
      previous_evaluations = tb.rate_evaluations;
      MESSAGE("N1 = 15000, (m1, k1) = ("
              << m1 << ", " << k1 << "), tolerance " << tol << ": r_hat " << tb.r_hat << " +- "
              << tb.error_bound << " with " << tb.rate_evaluations << " of " << te.rate_evaluations
              << " rates; exhaustive " << te.r_hat << " +- " << te.error_bound);
    }
    // The model-building overload gives the same triple as the callable one.
    const auto direct = ltt::certificate_triple(p.N, p.N1, m1, k1, p.n, p.alpha, p.delta);
    const auto via_table = ltt::certificate_triple(p.N, p.N1, m1, k1, p.n, p.alpha, p.delta, rate);
    CHECK(direct.r_hat == via_table.r_hat);
    CHECK(direct.r_lo == via_table.r_lo);
    CHECK(direct.error_bound == via_table.error_bound);
  }
}

TEST_CASE("edge cases: no draws in S_1, all unsafe, S_1 of one, census of S_1") {
  // m1 = 0: the posterior is the Jeffreys prior; r_lo is the rate at the prior's upper decile.
  const auto t0 = ltt::certificate_triple(2000, 300, 0, 0, 200, 0.25, 0.1);
  CHECK(t0.posterior_a == 0.5);
  CHECK(t0.posterior_b == 0.5);
  CHECK(t0.U1_upper_decile == ltt::UnsafeCountPosterior(300, 0, 0).upper_quantile(0.1));
  CHECK(t0.r_lo == ltt::certification_rate(2000, 300, t0.U1_upper_decile, 200, 0.25, 0.1));
  CHECK(t0.conditional_bound == 1.0);  // r_lo = 0 here: the prior puts 10% above u = 0.976

  const auto all_unsafe = ltt::certificate_triple(2000, 300, 40, 40, 200, 0.25, 0.1);
  CHECK(all_unsafe.r_lo == 0.0);
  CHECK(all_unsafe.conditional_bound == 1.0);
  CHECK(all_unsafe.r_hat < 1e-6);

  const auto one = ltt::certificate_triple(10, 1, 1, 0, 5, 0.25, 0.1);
  CHECK(one.window_lo == 0);
  CHECK(one.window_hi == 1);
  CHECK(std::abs(one.r_hat - brute_force_mean(ltt::UnsafeCountPosterior(1, 1, 0),
                                              rates_by_u({10, 1, 5, 0.25, 0.1}))) <= 1e-15);

  // n = N: every trajectory drawn; the rate is 0 or 1 at each u.
  const auto census = ltt::certificate_triple(400, 100, 100, 10, 400, 0.25, 0.1);
  CHECK(census.r_hat >= 0.0);
  CHECK(census.r_hat <= 1.0);
  CHECK(census.r_lo == 1.0);
  CHECK(census.conditional_bound == doctest::Approx(0.1));
}

TEST_CASE("argument checks name the parameter") {
  using ltt::certificate_triple;
  check_throws_naming([] { certificate_triple(-1, 300, 30, 5, 200, 0.25, 0.1); }, "N");
  check_throws_naming([] { certificate_triple(2000, 2001, 30, 5, 200, 0.25, 0.1); }, "N1");
  check_throws_naming([] { certificate_triple(2000, 0, 0, 0, 200, 0.25, 0.1); }, "N1");
  check_throws_naming([] { certificate_triple(2000, 300, 30, 5, 2001, 0.25, 0.1); }, "n");
  check_throws_naming([] { certificate_triple(2000, 300, 301, 5, 400, 0.25, 0.1); }, "m1");
  check_throws_naming([] { certificate_triple(2000, 300, 30, 5, 20, 0.25, 0.1); }, "m1");
  check_throws_naming([] { certificate_triple(2000, 300, -1, 0, 200, 0.25, 0.1); }, "m1");
  check_throws_naming([] { certificate_triple(400, 300, 10, 5, 200, 0.25, 0.1); }, "m1");
  check_throws_naming([] { certificate_triple(2000, 300, 30, 31, 200, 0.25, 0.1); }, "k1");
  check_throws_naming([] { certificate_triple(2000, 300, 30, -2, 200, 0.25, 0.1); }, "k1");
  check_throws_naming([] { certificate_triple(2000, 300, 30, 5, 200, 0.0, 0.1); }, "alpha");
  check_throws_naming([] { certificate_triple(2000, 300, 30, 5, 200, 1.0, 0.1); }, "alpha");
  check_throws_naming([] { certificate_triple(2000, 300, 30, 5, 200, 0.25, std::nan("")); },
                      "delta");
  ltt::CertificateTripleOptions o;
  o.tolerance = -1.0;
  check_throws_naming([&] { certificate_triple(2000, 300, 30, 5, 200, 0.25, 0.1, o); },
                      "options.tolerance");
  o = {};
  o.tail_mass = 0.0;
  check_throws_naming([&] { certificate_triple(2000, 300, 30, 5, 200, 0.25, 0.1, o); },
                      "options.tail_mass");
  o = {};
  o.lower_level = 1.0;
  check_throws_naming([&] { certificate_triple(2000, 300, 30, 5, 200, 0.25, 0.1, o); },
                      "options.lower_level");
  check_throws_naming(
      [] {
        certificate_triple(2000, 300, 30, 5, 200, 0.25, 0.1, [](std::int64_t) { return 1.5; });
      },
      "rate_of_U1(0)");
  check_throws_naming(
      [] {
        certificate_triple(2000, 300, 30, 5, 200, 0.25, 0.1,
                           [](std::int64_t u) { return u == 40 ? std::nan("") : 0.5; });
      },
      "rate_of_U1(40)");
  // Rounding-level excursions past [0, 1] are clipped, not errors.
  const auto clipped = certificate_triple(2000, 300, 30, 5, 200, 0.25, 0.1, [](std::int64_t u) {
    return u < 50 ? 1.0 + 1e-14 : -1e-14;
  });
  CHECK(clipped.r_hat <= 1.0);
  CHECK(clipped.r_hat >= 0.0);
  check_throws_naming([] { ltt::UnsafeCountPosterior(10, 11, 0); }, "m1");
  check_throws_naming([] { ltt::UnsafeCountPosterior(10, 5, 6); }, "k1");
  check_throws_naming([] { (void)ltt::UnsafeCountPosterior(10, 5, 2).upper_quantile(0.0); },
                      "level");
}

// Coverage sanity (paper, Table "certtriple"): constructed pools with a known U_1; per
// calibration draw the walk's first decision and the triple from that draw's (m1, k1). The
// only assertions are ones that must hold: the simulated rate agrees with the closed form
// within Monte Carlo error, and each triple is well-formed. How r_hat tracks the realized
// rate, and how often the bound covers, is reported (the paper: close where certification is
// common, biased upward where it is rare).
TEST_CASE("coverage sanity on constructed pools (fixed seed, numbers reported)") {
  const std::int64_t N = 2000, N1 = 300, n = 200, draws = ltt_test::monte_carlo_draws(400);
  const double alpha = 0.25, delta = 0.1;
  const ltt::CertificationRateModel model(N, N1, n, alpha, delta);
  std::vector<double> table;
  for (std::int64_t u = 0; u <= N1; ++u) table.push_back(model.rate(u));
  const auto rate = [&](std::int64_t u) { return table[static_cast<std::size_t>(u)]; };
  const std::int64_t boundary = ltt::null_boundary(N1, alpha);  // out of spec iff U1 >= 76

  std::uint64_t seed = 20261125;
  for (std::int64_t U1 : {15, 30, 45, 60, 75, 90}) {
    std::mt19937_64 rng(seed++);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    std::map<std::pair<std::int64_t, std::int64_t>, ltt::CertificateTriple> cache;
    std::int64_t certified = 0;
    double sum_r_hat = 0.0, sum_r_hat_certified = 0.0, sum_bound_certified = 0.0;
    std::int64_t covered = 0;
    const bool out_of_spec = U1 >= boundary;
    for (std::int64_t d = 0; d < draws; ++d) {
      // n of N without replacement (selection sampling); S_1 = ranks [0, N1), unsafe [0, U1).
      std::int64_t chosen = 0, m1 = 0, k1 = 0;
      for (std::int64_t i = 0; i < N && chosen < n; ++i)
        if (unit(rng) * static_cast<double>(N - i) < static_cast<double>(n - chosen)) {
          ++chosen;
          m1 += i < N1;
          k1 += i < U1;
        }
      auto it = cache.find({m1, k1});
      if (it == cache.end())
        it = cache
                 .emplace(std::pair{m1, k1},
                          ltt::certificate_triple(N, N1, m1, k1, n, alpha, delta, rate))
                 .first;
      const auto& t = it->second;
      CHECK(t.r_hat >= 0.0);
      CHECK(t.r_hat <= 1.0);
      CHECK(t.r_lo >= 0.0);
      CHECK(t.r_lo <= 1.0);
      CHECK(t.conditional_bound >= delta);
      CHECK(t.conditional_bound <= 1.0);
      sum_r_hat += t.r_hat;
      if (ltt::composition_pvalue(k1, m1, N1, alpha) <= delta) {
        ++certified;
        sum_r_hat_certified += t.r_hat;
        sum_bound_certified += t.conditional_bound;
        // The realized Pr[out of spec | certified] is 1 or 0 on a fixed pool.
        covered += t.conditional_bound >= (out_of_spec ? 1.0 : 0.0);
      }
    }
    const double closed = rate(U1);
    const double simulated = static_cast<double>(certified) / draws;
    // 4.5 standard errors, plus one draw for the discreteness of the count.
    const double tolerance = 4.5 * std::sqrt(closed * (1.0 - closed) / draws) + 1.0 / draws;
    CHECK(std::abs(simulated - closed) <= tolerance);
    std::ostringstream line;
    line << "U1 = " << U1 << " (u1 " << static_cast<double>(U1) / N1
         << (out_of_spec ? ", out of spec" : ", in spec") << "): rate " << closed << ", simulated "
         << simulated << "; mean r_hat " << sum_r_hat / draws;
    if (certified > 0)
      line << ", over certified draws " << sum_r_hat_certified / certified << ", mean bound "
           << sum_bound_certified / certified << ", bound covers " << covered << " of "
           << certified;
    MESSAGE(line.str());
  }
}
