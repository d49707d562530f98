// Tests for include/ltt/sequential_pvalue.hpp: the PPR anytime p-value against its definition
// (posterior normalised over every u, minimum over u >= U*, running maximum) computed directly
// in long double on small selections; anytime validity by Monte Carlo under the boundary null
// U = U* (fixed seeds, a Clopper-Pearson tolerance, so the test fails if the guarantee breaks);
// power on clean selections; the rounding bound after 200,000 labels against a __float128
// reference; argument checking.

#include <ltt/bounds.hpp>
#include <ltt/pvalue.hpp>
#include <ltt/sequential_pvalue.hpp>
#include <ltt/stratified_sequential_pvalue.hpp>

#include <curation/detail/random.hpp>

#include <doctest/doctest.h>

#include "../support/log_binomial.hpp"
#include "../support/monte_carlo.hpp"
#include "../support/throws.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include <quadmath.h>

namespace {

using ltt_test::check_throws_naming;
using ltt_test::log_choose;

// p after the first t labels, straight from the definition: for each s <= t, the posterior
// over u in {0..N} under the beta-binomial prior, PPR_s(u) = prior(u) / posterior_s(u),
// its minimum over u >= U* (infinite where the posterior is 0), and the running maximum.
std::vector<long double> brute_force_pvalues(std::int64_t N, std::int64_t U_star,
                                             const std::vector<int>& labels,
                                             const ltt::BetaMixturePrior& prior) {
  std::vector<long double> log_prior(static_cast<std::size_t>(N + 1));
  for (std::int64_t u = 0; u <= N; ++u) {
    const long double mass = ltt_test::prior_mass(N, u, prior);
    log_prior[static_cast<std::size_t>(u)] = std::log(mass);
  }
  std::vector<long double> out;
  long double running = 1.0L;  // s = 0: PPR_0 = 1
  std::int64_t k = 0;
  for (std::size_t s = 1; s <= labels.size(); ++s) {
    k += labels[s - 1];
    const auto t = static_cast<std::int64_t>(s);
    std::vector<long double> post(static_cast<std::size_t>(N + 1), 0.0L);
    long double z = 0.0L;
    for (std::int64_t u = 0; u <= N; ++u) {
      if (u < k || N - u < t - k) continue;
      const long double w = std::exp(log_prior[static_cast<std::size_t>(u)] + log_choose(u, k) +
                                     log_choose(N - u, t - k));
      post[static_cast<std::size_t>(u)] = w;
      z += w;
    }
    long double minimum = std::numeric_limits<long double>::infinity();
    for (std::int64_t u = U_star; u <= N; ++u) {
      const long double q = post[static_cast<std::size_t>(u)] / z;
      if (q > 0.0L)
        minimum = std::min(minimum, std::exp(log_prior[static_cast<std::size_t>(u)]) / q);
    }
    running = std::max(running, minimum);
    out.push_back(1.0L / running);
  }
  return out;
}

}  // namespace

TEST_CASE("sequential_pvalue: agrees with the definition on small selections") {
  std::mt19937_64 rng(20260416);
  const ltt::BetaMixturePrior priors[] = {
      ltt::BetaBinomialPrior{1.0, 1.0},
      ltt::BetaBinomialPrior{0.5, 0.5},
      ltt::BetaBinomialPrior{2.0, 5.0},
      ltt::BetaBinomialPrior{1.0, 3.0},
      ltt::sequential_default_prior(0.25),
      ltt::BetaMixturePrior({{1.0, 1.0}, {1.0, 19.0}, {3.0, 2.0}}, {1.0, 2.0, 0.5})};
  double worst = 0.0;
  int failures = 0;
  for (std::int64_t N = 1; N <= 30; ++N)
    for (std::int64_t U_star = 1; U_star <= N; ++U_star)
      for (const auto& prior : priors)
        for (std::int64_t U = 0; U <= N; U += std::max<std::int64_t>(1, N / 4)) {
          // a uniform order of a selection holding U unsafe
          std::vector<int> labels(static_cast<std::size_t>(N), 0);
          std::fill(labels.begin(), labels.begin() + U, 1);
          for (std::int64_t i = N - 1; i > 0; --i)
            std::swap(
                labels[static_cast<std::size_t>(i)],
                labels[static_cast<std::size_t>(ltt::curation::detail::uniform_below(rng, i + 1))]);
          const auto exact = brute_force_pvalues(N, U_star, labels, prior);
          ltt::SequentialCompositionPvalue p(N, U_star, prior);
          for (std::size_t t = 0; t < labels.size(); ++t) {
            p.update(labels[t] != 0);
            const double got = p.pvalue();
            const long double want = exact[t];
            const double rel = want == 0.0L ? (got == 0.0 ? 0.0 : 1.0)
                                            : static_cast<double>(std::fabs(got - want) / want);
            worst = std::max(worst, rel);
            // never below the definition (beyond the reference's own long-double rounding)
            const bool ok = rel <= 1e-12 && got >= static_cast<double>(want * (1.0L - 1e-15L));
            if (!ok && ++failures <= 5)
              FAIL_CHECK("N=" << N << " U*=" << U_star << " a=" << prior.components[0].a
                              << " components=" << prior.components.size() << " t=" << t + 1
                              << " p=" << got << " exact=" << static_cast<double>(want));
          }
        }
  MESSAGE("worst relative error against the definition: " << worst);
  CHECK(failures == 0);
}

TEST_CASE("sequential_pvalue: anytime validity under the boundary null (Monte Carlo)") {
  struct Case {
    std::int64_t N, U_star;
    double delta;
  };
  const Case cases[] = {
      {50, 13, 0.1}, {200, 51, 0.1}, {200, 11, 0.05}, {400, 101, 0.2}, {120, 60, 0.1}};
  constexpr std::int64_t reps = ltt_test::monte_carlo_draws(20000);
  std::uint64_t seed = 16;
  for (const Case& c : cases) {
    std::mt19937_64 rng(seed++);
    std::vector<int> labels(static_cast<std::size_t>(c.N), 0);
    std::fill(labels.begin(), labels.begin() + c.U_star, 1);
    std::int64_t crossed = 0;
    for (std::int64_t r = 0; r < reps; ++r) {
      for (std::int64_t i = c.N - 1; i > 0; --i)
        std::swap(
            labels[static_cast<std::size_t>(i)],
            labels[static_cast<std::size_t>(ltt::curation::detail::uniform_below(rng, i + 1))]);
      ltt::SequentialCompositionPvalue p(c.N, c.U_star);
      double previous = 1.0;
      bool monotone = true;
      for (const int x : labels) {
        p.update(x != 0);
        monotone = monotone && p.pvalue() <= previous;
        previous = p.pvalue();
      }
      REQUIRE(monotone);
      // p is a running minimum, so min_t p(t) <= delta iff the final p is
      crossed += previous <= c.delta;
    }
    const double rate = static_cast<double>(crossed) / reps;
    const double lower = ltt::clopper_pearson_lower(crossed, reps, 1e-3);
    MESSAGE("N=" << c.N << " U*=" << c.U_star << " delta=" << c.delta
                 << ": Pr[exists t: p_t <= delta] = " << rate << " (" << crossed << "/" << reps
                 << ", 99.9% lower bound " << lower << ")");
    CHECK(lower <= c.delta);
  }
}

TEST_CASE("sequential_pvalue: a clean selection certifies within a few labels") {
  // 500 trajectories, alpha = 0.25 (U* = 126), none unsafe: the PPR at U* grows like
  // (4/3)^t / (t + 1), above 1/delta = 10 after 22 safe labels.
  auto p = ltt::SequentialCompositionPvalue::at_level(500, 0.25);
  CHECK(p.null_boundary() == 126);
  std::int64_t t = 0;
  while (p.pvalue() > 0.1) {
    p.update(false);
    ++t;
  }
  MESSAGE("all-safe selection of 500 at alpha = 0.25: p <= 0.1 after " << t << " labels");
  CHECK(t <= 25);

  // 10% unsafe in a random order: p <= 0.1 well before 200 labels on every one of 200 orders.
  std::mt19937_64 rng(7);
  std::vector<int> labels(500, 0);
  std::fill(labels.begin(), labels.begin() + 50, 1);
  std::int64_t worst = 0, total = 0;
  for (int r = 0; r < 200; ++r) {
    for (std::int64_t i = 499; i > 0; --i)
      std::swap(labels[static_cast<std::size_t>(i)],
                labels[static_cast<std::size_t>(ltt::curation::detail::uniform_below(rng, i + 1))]);
    auto q = ltt::SequentialCompositionPvalue::at_level(500, 0.25);
    std::int64_t used = 0;
    while (q.pvalue() > 0.1 && used < 500) q.update(labels[static_cast<std::size_t>(used++)] != 0);
    worst = std::max(worst, used);
    total += used;
  }
  MESSAGE("10% unsafe, 500 at alpha = 0.25: labels to p <= 0.1, mean " << total / 200.0 << ", max "
                                                                       << worst);
  CHECK(worst <= 200);
}

TEST_CASE("sequential_pvalue: absorbing cases and the exact boundary") {
  // U* = N: only u = N is in H0, and one safe label rules it out.
  ltt::SequentialCompositionPvalue all(10, 10);
  all.update(false);
  CHECK(all.pvalue() == 0.0);
  // more unsafe than U*: the evidence stops growing, p stays where it was
  ltt::SequentialCompositionPvalue p(20, 2);
  p.update(true);
  p.update(true);
  const double before = p.pvalue();
  p.update(true);
  for (int i = 0; i < 17; ++i) p.update(false);
  CHECK(p.pvalue() == before);
  // N - U* + 1 safe labels exclude every u >= U*
  ltt::SequentialCompositionPvalue q(20, 15);
  for (int i = 0; i < 5; ++i) q.update(false);
  CHECK(q.pvalue() > 0.0);
  q.update(false);
  CHECK(q.pvalue() == 0.0);
  const std::vector<std::uint8_t> seq{0, 0, 1, 0, 0, 0};
  CHECK(ltt::sequential_composition_pvalue(seq, 40, 0.25) == [&] {
    auto r = ltt::SequentialCompositionPvalue::at_level(40, 0.25);
    for (auto x : seq) r.update(x != 0);
    return r.pvalue();
  }());
}

// issue 24: the rounding error of a running sum grows with the sum, and 200,000 labels give
// |log L_t(U*)| near 6e4. The reference carries every log and sum in __float128 (113-bit
// significand: its error is below 1e-25 here), and the minimum over u >= U* is at U* whenever
// the exact integer comparison says so; the computed evidence must never exceed it, and the
// bound must not cost more than 1e-7 in log evidence.
TEST_CASE("sequential_pvalue: rounding bound holds after 200,000 labels (__float128 reference)") {
  const std::int64_t N = 4'000'000, t_max = 200'000;
  const double alpha = 0.25;
  const ltt::BetaMixturePrior prior = ltt::sequential_default_prior(alpha);
  const std::int64_t U = ltt::null_boundary(N, alpha);
  long double worst_excess = -1.0L, worst_gap = 0.0L;
  for (const double rate : {0.05, 0.2}) {
    std::mt19937_64 rng(24);
    std::bernoulli_distribution unsafe_draw(rate);
    auto p = ltt::SequentialCompositionPvalue::at_level(N, alpha, prior);
    ltt::StratifiedCompositionEvidence strata({N}, prior);
    std::vector<__float128> log_m;
    for (const double w : prior.weights) log_m.push_back(logq(static_cast<__float128>(w)));
    __float128 log_L = 0, running = 0, last = 0;
    std::int64_t t = 0, k = 0;
    bool final_at_boundary = false;
    while (t < t_max) {
      const bool unsafe = unsafe_draw(rng);
      const __float128 left = static_cast<__float128>(N - t);
      log_L += logq(static_cast<__float128>(unsafe ? U - k : N - U - (t - k)) / left);
      for (std::size_t i = 0; i < log_m.size(); ++i) {
        const __float128 a = prior.components[i].a, b = prior.components[i].b;
        const __float128 tq = static_cast<__float128>(t), kq = static_cast<__float128>(k);
        log_m[i] += logq((unsafe ? kq + a : tq - kq + b) / (tq + a + b));
      }
      p.update(unsafe);
      strata.update(0, unsafe);
      ++t;
      k += unsafe;
      // L(U* + 1) <= L(U*): the minimum over u >= U* is at U* (exact, 128-bit)
      const bool at_boundary = static_cast<ltt::detail::int128>(U + 1) * (N - U - t + k) <=
                               static_cast<ltt::detail::int128>(U + 1 - k) * (N - U);
      const __float128 top = std::max(log_m[0], log_m[1]);
      last = top + logq(expq(log_m[0] - top) + expq(log_m[1] - top)) - log_L;
      if (at_boundary) running = std::max(running, last);
      final_at_boundary = at_boundary;
    }
    const auto check = [&](long double computed, __float128 exact) {
      const auto excess = static_cast<long double>(static_cast<__float128>(computed) - exact);
      worst_excess = std::max(worst_excess, excess);
      worst_gap = std::max(worst_gap, -excess);
    };
    check(p.log_evidence(), running);
    REQUIRE(final_at_boundary);  // every rate here is below alpha by a margin t_max resolves
    check(strata.log_evidence(1, U), std::max<__float128>(0, last));
    MESSAGE("unsafe rate " << rate << ": log evidence " << static_cast<double>(running)
                           << ", worst computed - exact so far "
                           << static_cast<double>(worst_excess));
  }
  MESSAGE("worst computed - exact: " << static_cast<double>(worst_excess)
                                     << " (must be <= 0), worst gap "
                                     << static_cast<double>(worst_gap));
  CHECK(worst_excess <= 0.0L);
  CHECK(worst_gap <= 1e-7L);
}

// The bound against its definition: b - 1 for the smallest b above the unsafe labels whose
// anytime p-value (brute force, uniform prior) is at most delta. Near-ties at delta are
// allowed to go either way by a relative 1e-9.
TEST_CASE("sequential_pvalue: anytime_unsafe_upper_bound agrees with the definition") {
  const ltt::BetaMixturePrior uniform{ltt::BetaBinomialPrior{1.0, 1.0}};
  std::mt19937_64 rng(2401);
  std::int64_t compared = 0;
  for (const std::int64_t N : {1, 7, 18, 25}) {
    for (int order = 0; order < 6; ++order) {
      const std::int64_t U = ltt::curation::detail::uniform_below(rng, N + 1);
      std::vector<int> population(static_cast<std::size_t>(N), 0);
      std::fill(population.begin(), population.begin() + U, 1);
      std::shuffle(population.begin(), population.end(), rng);
      for (const std::int64_t t : {std::int64_t{0}, N / 3, N}) {
        const std::vector<int> seen(population.begin(), population.begin() + t);
        const std::vector<std::uint8_t> labels(seen.begin(), seen.end());
        const std::int64_t k = std::count(seen.begin(), seen.end(), 1);
        for (const double delta : {0.05, 0.2}) {
          const auto smallest = [&](double level) {
            for (std::int64_t b = k + 1; b <= N; ++b)
              if (!seen.empty() && brute_force_pvalues(N, b, seen, uniform).back() <= level)
                return b - 1;
            return N;
          };
          const std::int64_t bound = ltt::anytime_unsafe_upper_bound(labels, N, delta, uniform);
          CHECK(bound >= smallest(delta * (1.0 - 1e-9)));  // never tighter than the definition
          CHECK(bound <= smallest(delta * (1.0 + 1e-9)));
          CHECK(bound >= k);
          ++compared;
        }
      }
    }
  }
  CHECK(compared == 4 * 6 * 3 * 2);
}

// Pr[exists t: U > bound_t] <= delta: the bound after every label of complete
// without-replacement orders (seed 2402), the test failing if the 99.9% Clopper-Pearson lower
// bound of the crossing rate exceeds delta.
TEST_CASE("sequential_pvalue: anytime_unsafe_upper_bound covers at every t (Monte Carlo)") {
  const std::int64_t N = 60, orders = ltt_test::monte_carlo_draws(400);
  const double delta = 0.1;
  std::mt19937_64 rng(2402);
  for (const std::int64_t U : {6, 30}) {
    std::vector<std::uint8_t> population(static_cast<std::size_t>(N), 0);
    std::fill(population.begin(), population.begin() + U, std::uint8_t{1});
    std::int64_t crossed = 0;
    for (std::int64_t r = 0; r < orders; ++r) {
      std::shuffle(population.begin(), population.end(), rng);
      for (std::int64_t t = 1; t <= N; ++t)
        if (ltt::anytime_unsafe_upper_bound(
                std::span(population).first(static_cast<std::size_t>(t)), N, delta) < U) {
          ++crossed;
          break;
        }
    }
    MESSAGE("N = " << N << ", U = " << U << ": bound below U at some t in " << crossed << " of "
                   << orders);
    CHECK(ltt::clopper_pearson_lower(crossed, orders, 1e-3) <= delta);
  }
}

TEST_CASE("sequential_pvalue: argument checking names the parameter") {
  check_throws_naming([] { ltt::SequentialCompositionPvalue(0, 1); }, "N_sel");
  check_throws_naming([] { ltt::SequentialCompositionPvalue(10, 0); }, "null_boundary");
  check_throws_naming([] { ltt::SequentialCompositionPvalue(10, 11); }, "null_boundary");
  check_throws_naming([] { ltt::SequentialCompositionPvalue(10, 3, {0.0, 1.0}); }, "prior.a");
  check_throws_naming([] { ltt::SequentialCompositionPvalue(10, 3, {1.0, NAN}); }, "prior.b");
  check_throws_naming([] { ltt::BetaMixturePrior({{1.0, 1.0}}, {1.0, 1.0}); }, "weights.size()");
  check_throws_naming(
      [] {
        ltt::BetaMixturePrior({{1.0, 1.0}, {1.0, 2.0}}, {1.0, 0.0});
      },
      "weights");
  check_throws_naming([] { ltt::BetaMixturePrior({}, {}); }, "components");
  check_throws_naming([] { ltt::SequentialCompositionPvalue::at_level(10, 1.5); }, "alpha");
  check_throws_naming(
      [] {
        ltt::SequentialCompositionPvalue p(2, 1);
        p.update(false);
        p.update(true);
        p.update(false);
      },
      "labels");
  const std::vector<std::uint8_t> bad{0, 2};
  check_throws_naming([&] { ltt::sequential_composition_pvalue(bad, 10, 0.25); }, "labels[1]");
  check_throws_naming([&] { ltt::sequential_composition_pvalue(bad, 1, 0.25); }, "labels.size()");
}
