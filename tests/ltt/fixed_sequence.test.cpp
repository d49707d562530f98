// Fixed-sequence, Bonferroni and Holm: hand-checked examples, argument checks, and a Monte
// Carlo check of the false-certification bound of Proposition "guarantee" on finite pools,
// including pools whose unsafe fraction is not monotone along the grid.

#include <ltt/bounds.hpp>
#include <ltt/fixed_sequence.hpp>
#include <ltt/hypergeometric.hpp>
#include <ltt/pvalue.hpp>

#include <doctest/doctest.h>

#include "../support/monte_carlo.hpp"
#include "../support/throws.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace {

using Indices = std::vector<std::int64_t>;
using ltt_test::not_a_number;

}  // namespace

TEST_CASE("fixed_sequence: stops at the first failure to reject") {
  const std::vector<double> p{0.01, 0.04, 0.2, 0.01, 0.0};
  const auto r = ltt::fixed_sequence(p, 0.05);
  CHECK(r.tested == 3);
  REQUIRE(r.last_rejected.has_value());
  CHECK(*r.last_rejected == 1);
  // The p-value at index 3 would be rejected on its own; the strict walk never reaches it.
  CHECK(r.pvalues == std::vector<double>{0.01, 0.04, 0.2});
}

TEST_CASE("fixed_sequence: first failure means no certificate") {
  const std::vector<double> p{0.3, 0.001, 0.001};
  const auto r = ltt::fixed_sequence(p, 0.1);
  CHECK(r.tested == 1);
  CHECK_FALSE(r.last_rejected.has_value());
  CHECK(r.pvalues == std::vector<double>{0.3});
}

TEST_CASE("fixed_sequence: all rejected, and p == delta rejects") {
  const std::vector<double> p{0.0, 0.1, 0.05, 0.1};
  const auto r = ltt::fixed_sequence(p, 0.1);
  CHECK(r.tested == 4);
  REQUIRE(r.last_rejected.has_value());
  CHECK(*r.last_rejected == 3);
  CHECK(r.pvalues == p);

  const std::vector<double> just_above{std::nextafter(0.1, 1.0)};
  CHECK_FALSE(ltt::fixed_sequence(just_above, 0.1).last_rejected.has_value());
}

TEST_CASE("fixed_sequence: empty grid") {
  const auto r = ltt::fixed_sequence(std::span<const double>{}, 0.1);
  CHECK(r.tested == 0);
  CHECK_FALSE(r.last_rejected.has_value());
  CHECK(r.pvalues.empty());
  CHECK_FALSE(ltt::bonferroni({}, 0.1).deepest_rejected.has_value());
  CHECK_FALSE(ltt::holm({}, 0.1).deepest_rejected.has_value());
}

TEST_CASE("fixed_sequence: the lazy form computes p-values only where the walk reaches") {
  const std::vector<double> p{0.01, 0.02, 0.5, 0.0, 0.0, 0.0};
  Indices calls;
  const auto r = ltt::fixed_sequence(
      static_cast<std::int64_t>(p.size()),
      [&](std::int64_t j) {
        calls.push_back(j);
        return p[static_cast<std::size_t>(j)];
      },
      0.05);
  CHECK(calls == Indices{0, 1, 2});
  CHECK(r.tested == 3);
  REQUIRE(r.last_rejected.has_value());
  CHECK(*r.last_rejected == 1);
  CHECK(r.pvalues == std::vector<double>{0.01, 0.02, 0.5});

  calls.clear();
  const auto none = ltt::fixed_sequence(
      1000,
      [&](std::int64_t j) {
        calls.push_back(j);
        return 0.9;
      },
      0.05);
  CHECK(calls == Indices{0});
  CHECK_FALSE(none.last_rejected.has_value());

  calls.clear();
  const auto all = ltt::fixed_sequence(
      4,
      [&](std::int64_t j) {
        calls.push_back(j);
        return 0.0f;  // anything convertible to double
      },
      0.05);
  CHECK(calls == Indices{0, 1, 2, 3});
  CHECK(all.last_rejected == std::optional<std::int64_t>{3});

  calls.clear();
  const auto empty = ltt::fixed_sequence(
      0,
      [&](std::int64_t j) {
        calls.push_back(j);
        return 0.0;
      },
      0.05);
  CHECK_FALSE(empty.last_rejected.has_value());
  CHECK(calls.empty());
}

TEST_CASE("bonferroni and holm: textbook example (Holm 1979 style, J = 4, delta = 0.05)") {
  // Levels: Bonferroni 0.05 / 4 = 0.0125 for every hypothesis. Holm on the sorted p-values
  // 0.005 (index 3) <= 0.05/4, 0.01 (index 0) <= 0.05/3, 0.03 (index 2) > 0.05/2: stop.
  const std::vector<double> p{0.01, 0.04, 0.03, 0.005};
  const auto b = ltt::bonferroni(p, 0.05);
  CHECK(b.procedure == ltt::Procedure::bonferroni);
  CHECK(b.hypotheses == 4);
  CHECK(b.tested == 4);
  CHECK(b.rejected == Indices{0, 3});
  CHECK(b.deepest_rejected == std::optional<std::int64_t>{3});
  const auto h = ltt::holm(p, 0.05);
  CHECK(h.procedure == ltt::Procedure::holm);
  CHECK(h.rejected == Indices{0, 3});
  CHECK(h.deepest_rejected == std::optional<std::int64_t>{3});
  // Every p-value is <= 0.05, so the full-level walk rejects all four.
  const auto f = ltt::fixed_sequence(p, 0.05);
  CHECK(f.last_rejected == std::optional<std::int64_t>{3});
}

TEST_CASE("bonferroni and holm: holm rejects more than bonferroni") {
  // Bonferroni level 0.05/4 = 0.0125 rejects only 0.01. Holm: 0.01 <= 0.0125, 0.015 <=
  // 0.01667, 0.03 > 0.025: stop, so {0, 1}. The full-level walk rejects all four.
  const std::vector<double> p{0.01, 0.015, 0.03, 0.04};
  CHECK(ltt::bonferroni(p, 0.05).rejected == Indices{0});
  CHECK(ltt::holm(p, 0.05).rejected == Indices{0, 1});
  CHECK(ltt::holm(p, 0.05).deepest_rejected == std::optional<std::int64_t>{1});
  CHECK(ltt::fixed_sequence(p, 0.05).last_rejected == std::optional<std::int64_t>{3});

  // Holm can reject everything: 0.01 <= 0.05/3, 0.02 <= 0.05/2, 0.04 <= 0.05.
  const std::vector<double> q{0.04, 0.01, 0.02};
  CHECK(ltt::holm(q, 0.05).rejected == Indices{0, 1, 2});
  CHECK(ltt::bonferroni(q, 0.05).rejected == Indices{1});
}

TEST_CASE("bonferroni and holm: deep rejections past a shallow failure") {
  // The comparison the paper's appendix makes: Bonferroni and Holm may certify a deep
  // threshold without passing the shallow ones; the strict walk cannot.
  const std::vector<double> p{0.3, 0.001, 0.002};
  CHECK(ltt::bonferroni(p, 0.05).rejected == Indices{1, 2});
  CHECK(ltt::bonferroni(p, 0.05).deepest_rejected == std::optional<std::int64_t>{2});
  CHECK(ltt::holm(p, 0.05).rejected == Indices{1, 2});
  CHECK_FALSE(ltt::fixed_sequence(p, 0.05).last_rejected.has_value());

  // A non-monotone pattern: index 1 fails, index 2 is rejected; deepest is 2, not 0.
  const std::vector<double> r{0.001, 0.9, 0.001};
  CHECK(ltt::holm(r, 0.05).rejected == Indices{0, 2});
  CHECK(ltt::holm(r, 0.05).deepest_rejected == std::optional<std::int64_t>{2});
  CHECK(ltt::fixed_sequence(r, 0.05).last_rejected == std::optional<std::int64_t>{0});
}

TEST_CASE("bonferroni and holm: ties and boundaries") {
  // Tied p-values under growing Holm levels are kept or rejected together.
  CHECK(ltt::holm(std::vector<double>{0.02, 0.02}, 0.05).rejected == Indices{0, 1});
  CHECK(ltt::holm(std::vector<double>{0.03, 0.03}, 0.05).rejected.empty());
  CHECK(ltt::bonferroni(std::vector<double>{0.025, 0.03}, 0.05).rejected == Indices{0});
  // J = 1: all three procedures coincide with the single test at delta.
  for (const double p : {0.0, 0.1, std::nextafter(0.1, 1.0), 1.0}) {
    const std::vector<double> one{p};
    const bool reject = p <= 0.1;
    CHECK(ltt::fixed_sequence(one, 0.1).last_rejected.has_value() == reject);
    CHECK(ltt::bonferroni(one, 0.1).deepest_rejected.has_value() == reject);
    CHECK(ltt::holm(one, 0.1).deepest_rejected.has_value() == reject);
  }
}

TEST_CASE("bonferroni: the per-test level never sums past delta") {
  // J levels of size t must satisfy J * t <= delta exactly; check t is the largest such
  // double. long double holds t * J exactly here (53 + 10 bits <= 64).
  for (const double delta : {0.1, 0.05, 0.01, 0.2, 0.3, 0.7, 1.0 / 3.0, 0.123456789}) {
    for (std::int64_t J = 1; J <= 1000; ++J) {
      const double t = ltt::detail::level_share(delta, J);
      const long double L = static_cast<long double>(J);
      CHECK(static_cast<long double>(t) * L <= static_cast<long double>(delta));
      CHECK(static_cast<long double>(std::nextafter(t, 1.0)) * L > static_cast<long double>(delta));
    }
  }
}

TEST_CASE("test_hypotheses: dispatches to each procedure") {
  // Holm: 0.001 <= 0.05/4, 0.004 <= 0.05/3, 0.02 <= 0.05/2, 0.2 > 0.05: {0, 1, 3}.
  // Bonferroni at 0.0125: {0, 3}. The walk: 0.004, 0.02 rejected, stops at 0.2.
  const std::vector<double> p{0.004, 0.02, 0.2, 0.001};
  const auto f = ltt::test_hypotheses(ltt::Procedure::fixed_sequence, p, 0.05);
  CHECK(f.procedure == ltt::Procedure::fixed_sequence);
  CHECK(f.hypotheses == 4);
  CHECK(f.tested == 3);
  CHECK(f.rejected == Indices{0, 1});
  CHECK(f.deepest_rejected == std::optional<std::int64_t>{1});

  const auto b = ltt::test_hypotheses(ltt::Procedure::bonferroni, p, 0.05);
  CHECK(b.rejected == ltt::bonferroni(p, 0.05).rejected);
  CHECK(b.rejected == Indices{0, 3});
  const auto h = ltt::test_hypotheses(ltt::Procedure::holm, p, 0.05);
  CHECK(h.rejected == ltt::holm(p, 0.05).rejected);
  CHECK(h.rejected == Indices{0, 1, 3});
  CHECK(h.deepest_rejected == std::optional<std::int64_t>{3});

  const auto none =
      ltt::test_hypotheses(ltt::Procedure::fixed_sequence, std::vector<double>{0.5, 0.0}, 0.05);
  CHECK(none.rejected.empty());
  CHECK_FALSE(none.deepest_rejected.has_value());

  CHECK(ltt::procedure_name(ltt::Procedure::fixed_sequence) == "fixed_sequence");
  CHECK(ltt::procedure_name(ltt::Procedure::bonferroni) == "bonferroni");
  CHECK(ltt::procedure_name(ltt::Procedure::holm) == "holm");
}

TEST_CASE("multiple testing: invalid arguments name the parameter") {
  const std::vector<double> ok{0.01, 0.5};
  for (const double delta : {0.0, 1.0, -0.1, 1.5, not_a_number}) {
    CHECK_THROWS_WITH_AS(ltt::fixed_sequence(ok, delta), doctest::Contains("'delta'"),
                         std::invalid_argument);
    CHECK_THROWS_WITH_AS(ltt::fixed_sequence(
                             2, [](std::int64_t) { return 0.0; }, delta),
                         doctest::Contains("'delta'"), std::invalid_argument);
    for (const auto procedure :
         {ltt::Procedure::fixed_sequence, ltt::Procedure::bonferroni, ltt::Procedure::holm})
      CHECK_THROWS_WITH_AS(ltt::test_hypotheses(procedure, ok, delta), doctest::Contains("'delta'"),
                           std::invalid_argument);
  }

  // A bad p-value is reported with its index, even past the point the walk would stop.
  const std::vector<double> bad_nan{0.5, 0.01, not_a_number};
  const std::vector<double> bad_high{0.01, 1.5};
  const std::vector<double> bad_low{-1e-300};
  for (const auto procedure :
       {ltt::Procedure::fixed_sequence, ltt::Procedure::bonferroni, ltt::Procedure::holm}) {
    CHECK_THROWS_WITH_AS(ltt::test_hypotheses(procedure, bad_nan, 0.05),
                         doctest::Contains("'pvalues[2]' = nan"), std::invalid_argument);
    CHECK_THROWS_WITH_AS(ltt::test_hypotheses(procedure, bad_high, 0.05),
                         doctest::Contains("'pvalues[1]' = 1.5"), std::invalid_argument);
    CHECK_THROWS_WITH_AS(ltt::test_hypotheses(procedure, bad_low, 0.05),
                         doctest::Contains("'pvalues[0]'"), std::invalid_argument);
  }
  CHECK_THROWS_WITH_AS(ltt::fixed_sequence(bad_nan, 0.05), doctest::Contains("pvalues[2]"),
                       std::invalid_argument);

  // The lazy form checks each p-value as it is computed.
  const auto at = [](std::int64_t j) { return j == 1 ? not_a_number : 0.0; };
  CHECK_THROWS_WITH_AS(ltt::fixed_sequence(3, at, 0.05), doctest::Contains("'p_value_at(1)'"),
                       std::invalid_argument);
  const auto stops_first = [](std::int64_t j) { return j == 0 ? 0.9 : not_a_number; };
  CHECK_NOTHROW(ltt::fixed_sequence(3, stops_first, 0.05));
  CHECK_THROWS_WITH_AS(ltt::fixed_sequence(
                           -1, [](std::int64_t) { return 0.0; }, 0.05),
                       doctest::Contains("'count' = -1"), std::invalid_argument);
}

// ---------------------------------------------------------------------------------------
// Monte Carlo check of Proposition "guarantee": Pr[certify and unsafe(S(lambda_hat)) > alpha]
// <= delta over the uniform calibration draw, for each procedure.

namespace {

constexpr double mc_alpha = 0.25;  // dyadic, so U > alpha * N is decided exactly in doubles
constexpr double mc_delta = 0.1;
constexpr double cp_level = 1e-3;  // the test fails only if the rate is significantly > delta

// A finite pool seen through its score ranking: unsafe[r] is the label of the trajectory of
// rank r (0 = highest score), and sizes[j] = N_j = |S(lambda_j)| for the decreasing grid,
// so S_j is the top sizes[j] ranks (nested, growing with j).
struct RankedPool {
  std::vector<unsigned char> unsafe;
  std::vector<std::int64_t> sizes;
};

std::int64_t pool_size(const RankedPool& pool) {
  return static_cast<std::int64_t>(pool.unsafe.size());
}

// U_j for every grid step, from the labels of the whole pool.
std::vector<std::int64_t> unsafe_counts(const RankedPool& pool) {
  std::vector<std::int64_t> U;
  for (const std::int64_t N_j : pool.sizes)
    U.push_back(std::accumulate(pool.unsafe.begin(), pool.unsafe.begin() + N_j, std::int64_t{0}));
  return U;
}

std::vector<bool> true_nulls(const RankedPool& pool) {
  const auto U = unsafe_counts(pool);
  std::vector<bool> nulls;
  for (std::size_t j = 0; j < U.size(); ++j)
    nulls.push_back(static_cast<double>(U[j]) > mc_alpha * static_cast<double>(pool.sizes[j]));
  return nulls;
}

// Grid selection sizes from score quantiles 0.85, 0.80, ..., 0.30 (the paper's grid), as a
// threshold at the q-quantile of continuous scores keeps the top round((1 - q) N).
std::vector<std::int64_t> quantile_grid_sizes(std::int64_t N) {
  std::vector<std::int64_t> sizes;
  for (int step = 0; step < 12; ++step) {
    const double q = 0.85 - 0.05 * step;
    sizes.push_back(std::llround((1.0 - q) * static_cast<double>(N)));
  }
  return sizes;
}

// Random pool: i.i.d. uniform scores, each trajectory unsafe with a probability that is a
// piecewise-constant function of its score with random levels, so the unsafe fraction along
// the grid can rise and fall. Ranking by score gives the pool's view through the grid.
RankedPool random_pool(std::mt19937_64& rng, std::int64_t N) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<double> breaks(5);
  for (double& b : breaks) b = unit(rng);
  std::sort(breaks.begin(), breaks.end());
  std::vector<double> level(breaks.size() + 1);
  for (double& l : level) l = 0.5 * unit(rng);
  std::vector<std::pair<double, unsigned char>> scored(static_cast<std::size_t>(N));
  for (auto& [score, bad] : scored) {
    score = unit(rng);
    const auto piece = std::upper_bound(breaks.begin(), breaks.end(), score) - breaks.begin();
    bad = unit(rng) < level[static_cast<std::size_t>(piece)] ? 1 : 0;
  }
  std::sort(scored.begin(), scored.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  RankedPool pool;
  for (const auto& [score, bad] : scored) pool.unsafe.push_back(bad);
  pool.sizes = quantile_grid_sizes(N);
  return pool;
}

// Pool built band by band: exactly bad[b] unsafe trajectories placed at random ranks inside
// the band of ranks [edges[b], edges[b+1]).
RankedPool banded_pool(std::mt19937_64& rng, const std::vector<std::int64_t>& edges,
                       const std::vector<std::int64_t>& bad, std::vector<std::int64_t> sizes) {
  RankedPool pool;
  for (std::size_t b = 0; b < bad.size(); ++b) {
    std::vector<unsigned char> band(static_cast<std::size_t>(edges[b + 1] - edges[b]), 0);
    std::fill(band.begin(), band.begin() + bad[b], 1);
    std::shuffle(band.begin(), band.end(), rng);
    pool.unsafe.insert(pool.unsafe.end(), band.begin(), band.end());
  }
  pool.sizes = std::move(sizes);
  return pool;
}

struct FalseCertificationCounts {
  std::int64_t draws = 0;
  std::int64_t false_certifications[3] = {0, 0, 0};  // indexed by Procedure
  std::int64_t certifications[3] = {0, 0, 0};
  std::int64_t lazy_mismatches = 0;  // draws where the lazy walk disagreed with the eager one
};

constexpr ltt::Procedure procedures[] = {ltt::Procedure::fixed_sequence, ltt::Procedure::bonferroni,
                                         ltt::Procedure::holm};

// Resample calibration draws of size n uniformly without replacement; for each, compute
// (m_j, k_j), the composition p-values, and run every procedure.
FalseCertificationCounts simulate(const RankedPool& pool, std::int64_t n, std::int64_t draws,
                                  std::uint64_t seed) {
  const std::int64_t N = pool_size(pool);
  const std::size_t J = pool.sizes.size();
  const auto nulls = true_nulls(pool);
  // first_step[r]: the shallowest grid step whose selection holds rank r (J if none).
  std::vector<std::size_t> first_step(static_cast<std::size_t>(N), J);
  for (std::size_t j = J; j-- > 0;)
    for (std::int64_t r = 0; r < pool.sizes[j]; ++r) first_step[static_cast<std::size_t>(r)] = j;

  std::mt19937_64 rng(seed);
  std::vector<std::int64_t> ranks(static_cast<std::size_t>(N));
  std::iota(ranks.begin(), ranks.end(), std::int64_t{0});
  std::vector<std::int64_t> m(J + 1), k(J + 1);
  std::vector<double> p(J);
  FalseCertificationCounts counts;
  counts.draws = draws;
  for (std::int64_t d = 0; d < draws; ++d) {
    std::fill(m.begin(), m.end(), 0);
    std::fill(k.begin(), k.end(), 0);
    for (std::int64_t i = 0; i < n; ++i) {  // partial Fisher-Yates: a uniform n-subset
      std::uniform_int_distribution<std::int64_t> pick(i, N - 1);
      std::swap(ranks[static_cast<std::size_t>(i)], ranks[static_cast<std::size_t>(pick(rng))]);
      const auto r = static_cast<std::size_t>(ranks[static_cast<std::size_t>(i)]);
      ++m[first_step[r]];
      k[first_step[r]] += pool.unsafe[r];
    }
    for (std::size_t j = 1; j < J; ++j) {  // nested selections: cumulative counts
      m[j] += m[j - 1];
      k[j] += k[j - 1];
    }
    for (std::size_t j = 0; j < J; ++j)
      p[j] = ltt::composition_pvalue(k[j], m[j], pool.sizes[j], mc_alpha);
    // The walk as deployed: p-values computed only for the steps it reaches.
    const auto lazy = ltt::fixed_sequence(
        static_cast<std::int64_t>(J),
        [&](std::int64_t j) {
          const auto i = static_cast<std::size_t>(j);
          return ltt::composition_pvalue(k[i], m[i], pool.sizes[i], mc_alpha);
        },
        mc_delta);
    if (lazy.last_rejected != ltt::fixed_sequence(p, mc_delta).last_rejected)
      ++counts.lazy_mismatches;
    for (const auto procedure : procedures) {
      const auto result = ltt::test_hypotheses(procedure, p, mc_delta);
      const auto slot = static_cast<std::size_t>(procedure);
      if (!result.deepest_rejected) continue;
      ++counts.certifications[slot];
      if (nulls[static_cast<std::size_t>(*result.deepest_rejected)])
        ++counts.false_certifications[slot];
    }
  }
  return counts;
}

void check_false_certification(const FalseCertificationCounts& counts,
                               const std::string& pool_name) {
  CHECK(counts.lazy_mismatches == 0);
  for (const auto procedure : procedures) {
    const auto slot = static_cast<std::size_t>(procedure);
    const std::int64_t bad = counts.false_certifications[slot];
    const double rate = static_cast<double>(bad) / static_cast<double>(counts.draws);
    const double lower = ltt::clopper_pearson_lower(bad, counts.draws, cp_level);
    INFO(pool_name, " ", ltt::procedure_name(procedure), ": false certifications ", bad, " / ",
         counts.draws, " = ", rate, " (certified ", counts.certifications[slot],
         "), Clopper-Pearson lower ", lower, " vs delta ", mc_delta);
    CHECK(lower <= mc_delta);
  }
}

}  // namespace

TEST_CASE("fixed_sequence: near-worst-case pool, false certification close to delta") {
  // Every selection is a true null and the first sits on the boundary, U_0 = floor(alpha
  // N_0) + 1: the walk falsely certifies exactly when it rejects H_0, with probability
  // Pr[p_0 <= delta], computed here exactly; Bonferroni and Holm certify only falsely too.
  // n = 800 of N = 3000 puts about 120 draws in S_0, where the hypergeometric is fine-grained
  // enough that this probability comes within 0.02 of delta (at n = 200 it is 0.062).
  std::mt19937_64 rng(20240611);
  const std::int64_t N = 3000, n = 800;
  const auto sizes = quantile_grid_sizes(N);
  const std::int64_t N0 = sizes[0];
  const std::int64_t U0 = ltt::null_boundary(N0, mc_alpha);
  REQUIRE(N0 == 450);
  REQUIRE(U0 == 113);
  const auto pool = banded_pool(rng, {0, N0, N}, {U0, (N - N0) / 2}, sizes);
  for (const bool is_null : true_nulls(pool)) REQUIRE(is_null);

  double exact = 0.0;  // sum over m of Pr[m_0 = m] * Pr[p_0 <= delta | m]
  for (std::int64_t m0 = 0; m0 <= std::min(n, N0); ++m0) {
    double reject = 0.0;
    for (std::int64_t k0 = 0; k0 <= std::min(m0, U0); ++k0)
      if (ltt::composition_pvalue(k0, m0, N0, mc_alpha) <= mc_delta)
        reject += ltt::hypergeometric_pmf(k0, N0, U0, m0);
    exact += ltt::hypergeometric_pmf(m0, N, N0, n) * reject;
  }
  CHECK(exact <= mc_delta);
  CHECK(exact > 0.75 * mc_delta);  // close to worst case, so the check below has power

  const auto counts = simulate(pool, n, ltt_test::monte_carlo_draws(100000), 7);
  check_false_certification(counts, "near-worst-case");
  const auto walk = static_cast<std::size_t>(ltt::Procedure::fixed_sequence);
  const std::int64_t bad = counts.false_certifications[walk];
  // The simulated rate agrees with the exact one (two-sided, 1e-3 each side): the draw is
  // uniform and the counts m_j, k_j are what the lemma "conditional distribution" says.
  INFO("walk: simulated ", static_cast<double>(bad) / static_cast<double>(counts.draws), " exact ",
       exact);
  CHECK(ltt::clopper_pearson_lower(bad, counts.draws, cp_level) <= exact);
  CHECK(ltt::clopper_pearson_upper(bad, counts.draws, cp_level) >= exact);
  CHECK(counts.certifications[walk] == bad);
}

TEST_CASE("multiple testing: every selection on its null boundary") {
  // U_j = floor(alpha N_j) + 1 at every grid step: each hypothesis is a least-favorable true
  // null, the worst case for Bonferroni and Holm, whose union bound is spent over all J.
  std::mt19937_64 rng(4242);
  const std::int64_t N = 2000, n = 200;
  const auto sizes = quantile_grid_sizes(N);
  std::vector<std::int64_t> edges{0}, bad;
  std::int64_t previous = 0;
  for (const std::int64_t N_j : sizes) {
    const std::int64_t U_j = ltt::null_boundary(N_j, mc_alpha);
    edges.push_back(N_j);
    bad.push_back(U_j - previous);
    previous = U_j;
  }
  edges.push_back(N);
  bad.push_back((N - sizes.back()) / 2);
  const auto pool = banded_pool(rng, edges, bad, sizes);
  const auto U = unsafe_counts(pool);
  for (std::size_t j = 0; j < sizes.size(); ++j)
    REQUIRE(U[j] == ltt::null_boundary(sizes[j], mc_alpha));
  check_false_certification(simulate(pool, n, ltt_test::monte_carlo_draws(40000), 11),
                            "all-boundary");
}

TEST_CASE("fixed_sequence: boundary null reached after a certifiable first step") {
  // S_0 is clean (5 percent unsafe), S_1 sits on the boundary, everything deeper is null:
  // the walk reaches the boundary null whenever it rejects H_0, which it usually does.
  std::mt19937_64 rng(99);
  const std::int64_t N = 2000, n = 200;
  const auto sizes = quantile_grid_sizes(N);
  const std::int64_t U1 = ltt::null_boundary(sizes[1], mc_alpha);
  const auto pool =
      banded_pool(rng, {0, sizes[0], sizes[1], N}, {15, U1 - 15, (N - sizes[1]) / 2}, sizes);
  const auto nulls = true_nulls(pool);
  REQUIRE_FALSE(nulls[0]);
  for (std::size_t j = 1; j < nulls.size(); ++j) REQUIRE(nulls[j]);
  check_false_certification(simulate(pool, n, ltt_test::monte_carlo_draws(20000), 8),
                            "boundary-after-clean");
}

TEST_CASE("fixed_sequence: non-monotone unsafe fraction along the grid") {
  // Unsafe fraction per band of ranks: 0.10 on the top 300, 0.60 on the next 300, 0.04 on
  // ranks 600 to 1400, 0.5 below the grid. Along the grid the selection's fraction rises
  // above alpha and falls back below it: S_0 safe, S_2 .. S_4 null whatever the placement,
  // S_7 onward safe again (with this seed S_1 is safe and S_5, S_6 are null, S_6 exactly on
  // its boundary 226 / 900).
  std::mt19937_64 rng(123);
  const std::int64_t N = 2000, n = 200;
  const auto sizes = quantile_grid_sizes(N);
  const auto pool = banded_pool(rng, {0, 300, 600, 1400, N}, {30, 180, 32, 300}, sizes);
  const auto nulls = true_nulls(pool);
  CHECK_FALSE(nulls[0]);
  for (std::size_t j = 2; j <= 4; ++j) CHECK(nulls[j]);
  for (std::size_t j = 7; j < nulls.size(); ++j) CHECK_FALSE(nulls[j]);
  check_false_certification(simulate(pool, n, ltt_test::monte_carlo_draws(20000), 9),
                            "non-monotone");
}

TEST_CASE("fixed_sequence: random pools with random, non-monotone unsafe profiles") {
  std::mt19937_64 rng(31337);
  int tested_pools = 0;
  int non_monotone_pools = 0;
  while (tested_pools < 6) {
    const std::int64_t N = 1000 + static_cast<std::int64_t>(rng() % 2001);
    const auto pool = random_pool(rng, N);
    const auto nulls = true_nulls(pool);
    // Keep pools where the walk can get going (S_0 safe) and then meet a true null; in the
    // others nothing can be certified falsely, or hardly anything is certified at all.
    const bool has_null = std::find(nulls.begin(), nulls.end(), true) != nulls.end();
    if (nulls.front() || !has_null) continue;
    const auto U = unsafe_counts(pool);
    bool monotone = true;
    for (std::size_t j = 1; j < U.size(); ++j)
      monotone = monotone && U[j] * pool.sizes[j - 1] >= U[j - 1] * pool.sizes[j];
    non_monotone_pools += monotone ? 0 : 1;
    const std::string name =
        "random pool " + std::to_string(tested_pools) + " (N = " + std::to_string(N) + ")";
    const auto seed = 1000 + static_cast<std::uint64_t>(tested_pools);
    check_false_certification(simulate(pool, 200, ltt_test::monte_carlo_draws(10000), seed), name);
    ++tested_pools;
  }
  CHECK(non_monotone_pools >= 2);
}
