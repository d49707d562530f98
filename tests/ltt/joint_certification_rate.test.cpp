// The certification rate at several budgets (ltt/joint_certification_rate.hpp):
//  - exact rationals: on pools of up to 16 trajectories every calibration draw of every size n
//    is enumerated, the first step's decisions taken with composition_pvalue as the walk takes
//    them, and the count of certifying draws over C(N, n) compared with the closed form (1 to
//    4 budgets, equal and unequal alphas, both procedures' levels);
//  - one budget: the closed form equals certification_rate (a different summation) to 1e-12;
//  - resampling: on a pool of 2000 the rate of the whole procedure
//    (curation::several_budgets_selection's walks) over seeded calibration draws lies within
//    its Clopper-Pearson interval of the closed form, for both procedures.

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <curation/calibration.hpp>
#include <curation/cost_bands.hpp>
#include <curation/several_budgets_selection.hpp>
#include <ltt/bounds.hpp>
#include <ltt/certification_rate.hpp>
#include <ltt/joint_certification_rate.hpp>
#include <ltt/pvalue.hpp>
#include <ltt/several_budgets.hpp>

#include "../support/monte_carlo.hpp"
#include "../support/throws.hpp"

// Named, not anonymous: unit_tests is a unity build (batches of 8 files).
namespace joint_certification_rate_test {

// The pool: N trajectories, the first N1 the first selection, band[i] of each.
struct SmallPool {
  std::int64_t N, N1;
  std::vector<int> band;  // 0..K, by position
  std::vector<double> alphas, levels;
};

// The exact rate: certifying draws counted over every n-subset (Gosper's next-subset), as a
// long double ratio of two exact integers below 2^16 choose 8.
long double enumerated_rate(const SmallPool& p, std::int64_t n) {
  const std::size_t K = p.alphas.size();
  if (n == 0) {
    bool all = true;  // m = 0: p = 1 for every budget
    for (std::size_t k = 0; k < K; ++k) all = all && 1.0 <= p.levels[k];
    return all ? 1.0L : 0.0L;
  }
  std::uint64_t certifying = 0, total = 0;
  const std::uint32_t limit = 1u << p.N;
  for (std::uint32_t s = (1u << n) - 1; s < limit;) {
    ++total;
    std::int64_t m = 0;
    std::vector<std::int64_t> over(K, 0);
    for (std::int64_t i = 0; i < p.N1; ++i)
      if (s >> i & 1u) {
        ++m;
        for (std::size_t k = 0; k < K; ++k) over[k] += p.band[static_cast<std::size_t>(i)] > int(k);
      }
    bool all = true;
    for (std::size_t k = 0; k < K && all; ++k)
      all = ltt::composition_pvalue(over[k], m, p.N1, p.alphas[k]) <= p.levels[k];
    certifying += all;
    const std::uint32_t c = s & (0u - s), r = s + c;  // Gosper's hack
    s = (((r ^ s) >> 2) / c) | r;
  }
  return static_cast<long double>(certifying) / static_cast<long double>(total);
}

std::vector<std::int64_t> first_step_counts(const SmallPool& p) {
  std::vector<std::int64_t> U(p.alphas.size(), 0);
  for (std::int64_t i = 0; i < p.N1; ++i)
    for (std::size_t k = 0; k < U.size(); ++k) U[k] += p.band[static_cast<std::size_t>(i)] > int(k);
  return U;
}


TEST_CASE("joint_certification_rate: exact rationals by enumerating every draw") {
  // Bands of the first selection and the rest; alphas and levels per budget. Levels up to 0.5
  // so that small pools certify at all.
  std::vector<SmallPool> pools{
      {14, 10, {0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 1, 0, 1}, {0.25}, {0.3}},
      {14, 10, {0, 0, 0, 0, 0, 0, 0, 2, 1, 0, 1, 2, 0, 1}, {0.25, 0.25}, {0.3, 0.3}},
      {15, 12, {0, 0, 0, 3, 0, 0, 1, 0, 2, 0, 0, 0, 1, 3, 2}, {0.3, 0.2, 0.1}, {0.4, 0.4, 0.4}},
      {15, 12, {0, 0, 0, 3, 0, 0, 1, 0, 2, 0, 0, 0, 1, 3, 2}, {0.3, 0.2, 0.1}, {0.15, 0.15, 0.15}},
      {16, 11, {0, 4, 0, 0, 1, 0, 2, 0, 0, 3, 0, 1, 2, 3, 4, 0}, {0.4, 0.3, 0.25, 0.2},
       {0.5, 0.5, 0.5, 0.5}},
      {16, 11, {0, 4, 0, 0, 1, 0, 2, 0, 0, 3, 0, 1, 2, 3, 4, 0}, {0.4, 0.3, 0.25, 0.2},
       {0.125, 0.125, 0.125, 0.125}},
      {16, 16, {0, 0, 2, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 0, 1, 0}, {0.25, 0.25}, {0.2, 0.2}},
      {13, 6, {0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1}, {0.2}, {0.45}},
  };
  long double worst = 0.0L;
  std::string where;
  int nontrivial = 0;
  for (std::size_t i = 0; i < pools.size(); ++i) {
    const SmallPool& p = pools[i];
    const std::vector<std::int64_t> U = first_step_counts(p);
    for (std::int64_t n = 0; n <= p.N; ++n) {
      const long double exact = enumerated_rate(p, n);
      const double closed = ltt::joint_certification_rate(p.N, p.N1, U, n, p.alphas, p.levels);
      const long double e = std::fabs(static_cast<long double>(closed) - exact);
      if (e > worst) worst = e, where = "pool " + std::to_string(i) + ", n " + std::to_string(n);
      nontrivial += exact > 0.0L && exact < 1.0L;
    }
  }
  MESSAGE("worst absolute error " << static_cast<double>(worst) << " at " << where << "; "
                                  << nontrivial << " rates strictly between 0 and 1");
  CHECK(worst <= 1e-12L);
  CHECK(nontrivial >= 40);
}

TEST_CASE("joint_certification_rate: one budget is certification_rate") {
  for (const std::int64_t N : {600, 2000, 20000})
    for (const double u : {0.05, 0.15, 0.24, 0.3})
      for (const std::int64_t n : {50, 200, 400}) {
        const std::int64_t N1 = N / 7;
        const std::vector<std::int64_t> U{std::llround(u * double(N1))};
        const std::vector<double> alpha{0.25}, level{0.1};
        CAPTURE(N);
        CAPTURE(u);
        CAPTURE(n);
        CHECK(std::fabs(ltt::joint_certification_rate(N, N1, U, n, alpha, level) -
                        ltt::certification_rate(N, N1, U[0], n, 0.25, 0.1)) <= 1e-12);
      }
}

TEST_CASE("joint_certification_rate: against resampling the procedures (Monte Carlo)") {
  namespace cur = ltt::curation;
  constexpr std::int64_t N = 2000, n = 400, full_draws = 3000;
  constexpr std::int64_t draws = ltt_test::monte_carlo_draws(full_draws);
  // Rank i has score N - i; within the first selection the bands follow a fixed pattern so
  // that U1 = (24, 12, 4) of N1 = 301 (alphas 0.2, 0.12, 0.06: every budget near its margin).
  std::vector<double> scores(N);
  std::vector<std::uint8_t> band(N, 0);
  for (std::int64_t i = 0; i < N; ++i) scores[static_cast<std::size_t>(i)] = double(N - i);
  const cur::ThresholdGrid grid = cur::threshold_grid(scores);
  const std::int64_t N1 = grid.selection_size[0];
  REQUIRE(N1 == 301);
  for (std::int64_t i = 0; i < N1; ++i) {
    const std::int64_t r = (i * 37) % N1;  // a permutation of the first selection
    band[static_cast<std::size_t>(i)] = r < 4 ? 3 : r < 12 ? 2 : r < 24 ? 1 : 0;
  }
  for (std::int64_t i = N1; i < N; ++i) band[static_cast<std::size_t>(i)] = (i % 3 == 0) ? 2 : 0;
  const std::vector<std::int64_t> U1{24, 12, 4};
  const std::vector<double> alphas{0.2, 0.12, 0.06};
  for (const auto procedure :
       {ltt::BudgetProcedure::one_threshold, ltt::BudgetProcedure::one_threshold_per_budget}) {
    const double closed = ltt::several_budgets_rate(procedure, N, N1, U1, n, alphas, 0.1);
    const std::vector<double> levels = ltt::budget_levels(procedure, 0.1, 3);
    std::int64_t certified = 0;
    for (std::int64_t d = 0; d < draws; ++d) {
      cur::BandedCalibration b;
      b.budgets = 3;
      b.index = cur::draw_calibration(N, n, 31337 + static_cast<std::uint64_t>(d));
      for (const std::int64_t i : b.index) b.band.push_back(band[static_cast<std::size_t>(i)]);
      const auto counts = cur::budget_calibration_counts(grid, scores, b);
      bool all = true;
      for (std::size_t k = 0; k < 3; ++k) {
        const auto steps = cur::composition_walk(grid, counts[k], alphas[k], levels[k]);
        all = all && steps[0].rejected;
      }
      certified += all;
    }
    const double lower = ltt::clopper_pearson_lower(certified, draws, 5e-4);
    const double upper = ltt::clopper_pearson_upper(certified, draws, 5e-4);
    MESSAGE(ltt::budget_procedure_name(procedure)
            << ": closed form " << closed << ", resampled " << double(certified) / double(draws)
            << " [" << lower << ", " << upper << "] (99.9%)");
    CHECK(closed > 0.2);  // the pool is priced away from 0 and 1, where the check means something
    CHECK(closed < 0.95);
    CHECK(lower <= closed);
    CHECK(closed <= upper);
  }
}

TEST_CASE("joint_label_budget: one budget is label_budget; several, the first n of the scan") {
  // One budget: the same n as the single-budget search (a different algorithm).
  for (const std::int64_t U1 : {0, 20, 40, 60, 75, 76})
    for (const double target : {0.05, 0.5, 0.9, 0.99}) {
      const std::vector<std::int64_t> U{U1};
      const std::vector<double> alpha{0.25}, level{0.1};
      CAPTURE(U1);
      CAPTURE(target);
      CHECK(ltt::joint_label_budget(2000, 300, U, alpha, level, target) ==
            ltt::label_budget(2000, 300, U1, 0.25, 0.1, target));
    }
  // Three budgets: the answer reaches the target and n - 1 does not (the scan's first n);
  // a true null refuses a target above its level.
  const std::vector<std::int64_t> U{40, 20, 5};
  const std::vector<double> alphas{0.25, 0.15, 0.05}, levels(3, 0.1);
  const auto n = ltt::joint_label_budget(2000, 300, U, alphas, levels, 0.8);
  REQUIRE(n.has_value());
  CHECK(ltt::joint_certification_rate(2000, 300, U, *n, alphas, levels) >= 0.8);
  for (std::int64_t m = 0; m < *n; ++m)
    CHECK(ltt::joint_certification_rate(2000, 300, U, m, alphas, levels) < 0.8);
  const std::vector<std::int64_t> null_U{40, 20, 16};  // 16 >= floor(0.05 * 300) + 1
  CHECK_FALSE(ltt::joint_label_budget(2000, 300, null_U, alphas, levels, 0.2).has_value());
  ltt_test::check_throws_naming(
      [&] { ltt::joint_label_budget(2000, 300, U, alphas, levels, 1.5); }, "target_rate");
}

TEST_CASE("joint_certification_rate: refusals name the parameter") {
  using ltt_test::check_throws_naming;
  const std::vector<double> a2{0.25, 0.25}, l2{0.1, 0.1};
  check_throws_naming(
      [&] { ltt::joint_certification_rate(100, 20, std::vector<std::int64_t>{3, 5}, 10, a2, l2); },
      "U1[1]");
  check_throws_naming(
      [&] { ltt::joint_certification_rate(100, 20, std::vector<std::int64_t>{30, 5}, 10, a2, l2); },
      "U1[0]");
  check_throws_naming(
      [&] {
        ltt::joint_certification_rate(100, 20, std::vector<std::int64_t>{5}, 10, a2, l2);
      },
      "alphas.size()");
  check_throws_naming(
      [&] {
        ltt::joint_certification_rate(100, 20, std::vector<std::int64_t>{5, 3}, 10, a2,
                                      std::vector<double>{0.1, 1.0});
      },
      "levels[1]");
  check_throws_naming(
      [&] { ltt::joint_certification_rate(100, 20, std::vector<std::int64_t>{5, 3}, 101, a2, l2); },
      "n");
}

}  // namespace joint_certification_rate_test
