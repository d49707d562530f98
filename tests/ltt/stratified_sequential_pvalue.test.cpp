// Tests for include/ltt/stratified_sequential_pvalue.hpp: the stratified evidence against its
// definition (each stratum's posterior normalised over every u, PPR_k(u) = prior/posterior,
// minimum of the product over every allocation with sum u_k >= U*) on small strata; one
// stratum against SequentialCompositionPvalue; anytime validity by Monte Carlo under the
// boundary null with a label-dependent choice of stratum (fixed seeds, a Clopper-Pearson
// tolerance); argument checking.

#include <ltt/bounds.hpp>
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

namespace {

using ltt_test::check_throws_naming;
using ltt_test::log_choose;

// PPR(u) for u = 0..N of one stratum with t labels, k unsafe, from the definition
// (infinite where the posterior is 0).
std::vector<long double> brute_ppr(std::int64_t N, std::int64_t t, std::int64_t k,
                                   const ltt::BetaMixturePrior& prior) {
  std::vector<long double> pr(static_cast<std::size_t>(N + 1)), post(pr.size(), 0.0L);
  long double z = 0.0L;
  for (std::int64_t u = 0; u <= N; ++u) {
    const long double mass = ltt_test::prior_mass(N, u, prior);
    pr[static_cast<std::size_t>(u)] = mass;
    if (u < k || N - u < t - k) continue;
    post[static_cast<std::size_t>(u)] =
        mass * std::exp(log_choose(u, k) + log_choose(N - u, t - k));
    z += post[static_cast<std::size_t>(u)];
  }
  std::vector<long double> out(pr.size(), std::numeric_limits<long double>::infinity());
  for (std::size_t u = 0; u < pr.size(); ++u)
    if (post[u] > 0.0L) out[u] = pr[u] / (post[u] / z);
  return out;
}

// min over allocations (u_0..u_{s-1}), sum >= U*, of prod_k PPR_k(u_k), by enumeration.
long double brute_evidence(const std::vector<std::vector<long double>>& ppr, std::int64_t U_star) {
  long double best = std::numeric_limits<long double>::infinity();
  std::vector<std::int64_t> u(ppr.size(), 0);
  for (;;) {
    std::int64_t total = 0;
    long double product = 1.0L;
    for (std::size_t k = 0; k < ppr.size(); ++k) {
      total += u[k];
      product *= ppr[k][static_cast<std::size_t>(u[k])];
    }
    if (total >= U_star) best = std::min(best, product);
    std::size_t k = 0;
    while (k < u.size() && ++u[k] >= static_cast<std::int64_t>(ppr[k].size())) u[k++] = 0;
    if (k == u.size()) return best;
  }
}

}  // namespace

TEST_CASE("stratified_sequential_pvalue: agrees with the definition on small strata") {
  std::mt19937_64 rng(20261126);
  const ltt::BetaMixturePrior priors[] = {ltt::BetaBinomialPrior{},
                                          ltt::sequential_default_prior(0.25),
                                          ltt::BetaBinomialPrior{0.5, 3.0}};
  const std::vector<std::vector<std::int64_t>> layouts = {{9}, {5, 7}, {6, 3, 8}, {4, 4, 4}};
  long double worst = 0.0L, worst_minimum = 0.0L;
  std::int64_t compared = 0;
  for (const auto& sizes : layouts)
    for (const auto& prior : priors)
      for (int trial = 0; trial < 12; ++trial) {
        std::int64_t total_size = 0;
        for (const std::int64_t N : sizes) total_size += N;
        // true unsafe counts, labels in a random stratum order, each stratum's in random order
        std::vector<std::vector<int>> bits(sizes.size());
        for (std::size_t k = 0; k < sizes.size(); ++k) {
          const std::int64_t U = ltt::curation::detail::uniform_below(rng, sizes[k] + 1);
          for (std::int64_t i = 0; i < sizes[k]; ++i) bits[k].push_back(i < U);
          std::shuffle(bits[k].begin(), bits[k].end(), rng);
        }
        ltt::StratifiedCompositionEvidence e(sizes, prior);
        std::vector<std::int64_t> t(sizes.size(), 0), x(sizes.size(), 0);
        for (std::int64_t step = 0; step < total_size; ++step) {
          std::size_t k;
          do
            k = static_cast<std::size_t>(
                ltt::curation::detail::uniform_below(rng, static_cast<std::int64_t>(sizes.size())));
          while (t[k] == sizes[k]);
          const bool unsafe = bits[k][static_cast<std::size_t>(t[k])] != 0;
          e.update(k, unsafe);
          ++t[k];
          x[k] += unsafe;
          for (std::size_t s = 1; s <= sizes.size(); ++s) {
            std::vector<std::vector<long double>> ppr;
            std::int64_t size = 0;
            for (std::size_t q = 0; q < s; ++q) {
              ppr.push_back(brute_ppr(sizes[q], t[q], x[q], prior));
              size += sizes[q];
            }
            for (std::int64_t U_star = 1; U_star <= size; ++U_star) {
              const long double brute = brute_evidence(ppr, U_star);
              const long double got = e.log_evidence(s, U_star);
              // the unclamped minimum, below 0 as well as above
              const long double minimum = e.log_minimum(s, U_star);
              if (std::isinf(brute)) {
                CHECK(minimum == HUGE_VALL);
              } else {
                const long double difference = std::log(brute) - minimum;
                worst_minimum = std::max(worst_minimum, std::fabs(difference));
                CHECK(difference >= -1e-16L);
                CHECK(difference <= 1e-11L);
              }
              ++compared;
              if (std::isinf(brute)) {
                CHECK(got == HUGE_VALL);
              } else if (brute <= 1.0L) {
                CHECK(got <= std::max(0.0L, std::log(brute)) + 1e-12L);
              } else {
                const long double difference = std::log(brute) - got;
                worst = std::max(worst, std::fabs(difference));
                // never above the definition, up to the reference's own lgamma rounding
                CHECK(difference >= -1e-16L);
                CHECK(difference <= 1e-11L);
              }
            }
          }
        }
      }
  MESSAGE(compared << " comparisons, worst log difference " << static_cast<double>(worst)
                   << " (log_minimum: " << static_cast<double>(worst_minimum) << ")");
}

TEST_CASE("stratified_sequential_pvalue: one stratum is the sequential p-value") {
  std::mt19937_64 rng(31);
  const std::int64_t N = 300, U_star = 76;
  ltt::StratifiedCompositionEvidence e({N}, ltt::sequential_default_prior(0.25));
  ltt::SequentialCompositionPvalue p(N, U_star, ltt::sequential_default_prior(0.25));
  long double running = 0.0L;
  for (std::int64_t i = 0; i < 120; ++i) {
    const bool unsafe = ltt::curation::detail::uniform_below(rng, std::int64_t{20}) == 0;
    e.update(0, unsafe);
    p.update(unsafe);
    running = std::max(running, e.log_evidence(1, U_star));
    CHECK(ltt::anytime_pvalue(running) == doctest::Approx(p.pvalue()).epsilon(1e-12));
  }
  CHECK(p.pvalue() < 1e-3);
}

TEST_CASE("stratified_sequential_pvalue: anytime validity under the boundary null (Monte Carlo)") {
  // Three strata holding U* unsafe in all; the next stratum is chosen from the labels so far
  // (the one with the fewest unsafe labels per label, the choice most likely to look clean),
  // labels within a stratum in uniform order. Pr[exists t: E_t >= 1/delta] must stay <= delta.
  struct Case {
    std::vector<std::int64_t> sizes, unsafe;
    double delta;
  };
  const Case cases[] = {{{60, 30, 30}, {16, 7, 8}, 0.1},
                        {{100, 40, 60}, {10, 20, 21}, 0.1},
                        {{150, 100}, {38, 25}, 0.05}};
  constexpr std::int64_t reps = ltt_test::monte_carlo_draws(4000);
  std::uint64_t seed = 40;
  for (const Case& c : cases) {
    std::mt19937_64 rng(seed++);
    std::int64_t U_star = 0;
    for (const std::int64_t u : c.unsafe) U_star += u;
    std::int64_t crossed = 0;
    for (std::int64_t r = 0; r < reps; ++r) {
      std::vector<std::vector<int>> bits(c.sizes.size());
      for (std::size_t k = 0; k < c.sizes.size(); ++k) {
        for (std::int64_t i = 0; i < c.sizes[k]; ++i) bits[k].push_back(i < c.unsafe[k]);
        std::shuffle(bits[k].begin(), bits[k].end(), rng);
      }
      ltt::StratifiedCompositionEvidence e(c.sizes, ltt::sequential_default_prior(0.25));
      bool crossed_here = false;
      for (std::int64_t step = 0; step < 120 && !crossed_here; ++step) {
        std::size_t pick = 0;
        double best = 2.0;
        for (std::size_t k = 0; k < c.sizes.size(); ++k) {
          if (e.labels(k) == c.sizes[k]) continue;
          const double rate = e.labels(k) == 0 ? -1.0
                                               : static_cast<double>(e.unsafe(k)) /
                                                     static_cast<double>(e.labels(k));
          if (rate < best) best = rate, pick = k;
        }
        e.update(pick, bits[pick][static_cast<std::size_t>(e.labels(pick))] != 0);
        crossed_here = ltt::anytime_pvalue(e.log_evidence(c.sizes.size(), U_star)) <= c.delta;
      }
      crossed += crossed_here;
    }
    const double lower = ltt::clopper_pearson_lower(crossed, reps, 1e-3);
    MESSAGE("strata " << c.sizes.size() << ", U*=" << U_star << ", delta=" << c.delta
                      << ": Pr[exists t: p_t <= delta] = " << static_cast<double>(crossed) / reps
                      << " (99.9% lower bound " << lower << ")");
    CHECK(lower <= c.delta);
  }
}

TEST_CASE("stratified_sequential_pvalue: impossible nulls, no evidence, argument checks") {
  ltt::StratifiedCompositionEvidence e({4, 3});
  CHECK(e.log_evidence(2, 1) == 0.0L);  // no labels: every allocation is free
  for (int i = 0; i < 4; ++i) e.update(0, false);
  for (int i = 0; i < 3; ++i) e.update(1, false);
  CHECK(e.log_evidence(2, 1) == HUGE_VALL);  // a census with no unsafe: U = 0 < U*
  CHECK(ltt::anytime_pvalue(e.log_evidence(2, 1)) == 0.0);
  check_throws_naming([&] { e.update(0, false); }, "labels");
  check_throws_naming([&] { e.update(2, false); }, "stratum");
  check_throws_naming([&] { (void)e.log_evidence(3, 1); }, "strata");
  check_throws_naming([&] { (void)e.log_evidence(1, 0); }, "null_boundary");
  check_throws_naming([] { ltt::StratifiedCompositionEvidence({}); }, "stratum_sizes");
  check_throws_naming([] { ltt::StratifiedCompositionEvidence({3, 0}); }, "stratum_sizes[1]");
}
