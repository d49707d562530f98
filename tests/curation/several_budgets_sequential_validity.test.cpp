// Monte Carlo: simultaneous false certification of the sequential walk at several budgets
// (curation/several_budgets_sequential.hpp) at most delta, under both procedures.
//
// A run is a false certification when, at its stop, some budget is certified at a grid step
// where that budget is violated (U_jk >= U*_jk = floor(alpha_k N_j) + 1 in the pool's true
// bands). The pools (N = 1000, the paper grid, alphas 0.4, 0.25, 0.1 for budgets tightest
// first) are built stratum by stratum (D_j = S_j \ S_{j-1}) so that each S_j holds an exact
// count over each budget:
//   every_boundary   every budget on its null boundary at every step at once, U_jk = U*_jk:
//                    any certification is false, and every p_jk sits at its null's edge;
//   loosest_boundary the loosest budget (alpha 0.1) on its boundary at every step and the
//                    tighter ones far within theirs (every trajectory over one budget is over
//                    all three: about 0.1 of each S_j against alphas 0.4 and 0.25), so the union
//                    null of every step rests on one budget, the case max_k p_jk is tight on.
// Label caps 200 and 600 (at 600 some 90 labels land in S_1 of 151: there the single-budget
// uniform walk itself errs at about 0.07, the anytime test near its delta (1 - w) = 0.08, and
// the cell runs 4000 draws so that its upper limit can show the rate below delta).
// Verdicts: the one-sided Clopper-Pearson upper limit at level 1e-3 on each rate must not
// exceed delta (tests/support/monte_carlo.hpp rate_at_most; in the sanitizers' reduced cells,
// the lower limit).

#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <curation/several_budgets_sequential.hpp>
#include <curation/threshold_grid.hpp>
#include <ltt/bounds.hpp>
#include <ltt/pvalue.hpp>
#include <ltt/several_budgets.hpp>

#include "../support/monte_carlo.hpp"

namespace cur = ltt::curation;

// Named, not anonymous: unit_tests is a unity build (batches of 8 files).
namespace several_budgets_sequential_validity_test {

constexpr double delta = 0.1;
constexpr std::int64_t N = 1000;
const std::vector<double> alphas{0.4, 0.25, 0.1};

struct BandPool {
  std::vector<double> scores;
  std::vector<std::uint8_t> band;
  std::vector<std::vector<bool>> violated;  // [j][k]
};

// count[j][k]: the trajectories over budget k in S_j. Stratum D_j's first count[j][K-1] -
// count[j-1][K-1] ranks get band K, the next ones band K-1, ..., so that S_j holds exactly
// count[j][k] of band > k; REQUIREs the counts feasible (each stratum's increments fit and are
// nonincreasing in k, as nested unsafe sets must be).
BandPool stratum_pool(const std::vector<std::vector<std::int64_t>>& count) {
  BandPool p;
  for (std::int64_t i = 0; i < N; ++i) p.scores.push_back(static_cast<double>(N - i));
  const cur::ThresholdGrid grid = cur::threshold_grid(p.scores);
  p.band.assign(static_cast<std::size_t>(N), 0);
  const std::size_t K = alphas.size();
  std::int64_t from = 0;
  for (std::size_t j = 0; j < grid.lambda.size(); ++j) {
    const std::int64_t size = grid.selection_size[j] - from;
    std::int64_t previous = size;  // increments nonincreasing in k
    for (std::size_t k = 0; k < K; ++k) {
      const std::int64_t inc = count[j][k] - (j == 0 ? 0 : count[j - 1][k]);
      REQUIRE(inc >= 0);
      REQUIRE(inc <= previous);
      for (std::int64_t r = 0; r < inc; ++r) p.band[static_cast<std::size_t>(from + r)] += 1;
      previous = inc;
    }
    from = grid.selection_size[j];
  }
  for (std::size_t j = 0; j < grid.lambda.size(); ++j) {
    std::vector<bool> v;
    for (std::size_t k = 0; k < K; ++k) {
      std::int64_t U = 0;
      for (std::int64_t i = 0; i < grid.selection_size[j]; ++i)
        U += p.band[static_cast<std::size_t>(i)] > k;
      REQUIRE(U == count[j][k]);
      v.push_back(U >= ltt::null_boundary(grid.selection_size[j], alphas[k]));
    }
    p.violated.push_back(v);
  }
  return p;
}

// Every budget at U*_jk at every step.
BandPool every_boundary_pool() {
  std::vector<std::vector<std::int64_t>> count;
  std::vector<double> scores;
  for (std::int64_t i = 0; i < N; ++i) scores.push_back(static_cast<double>(N - i));
  for (const std::int64_t Nj : cur::threshold_grid(scores).selection_size) {
    std::vector<std::int64_t> c;
    for (const double a : alphas) c.push_back(ltt::null_boundary(Nj, a));
    count.push_back(c);
  }
  const BandPool p = stratum_pool(count);
  for (const auto& v : p.violated)
    for (const bool b : v) REQUIRE(b);
  return p;
}

// The loosest budget at U*_jK at every step; every trajectory over a budget is over all.
BandPool loosest_boundary_pool() {
  std::vector<std::vector<std::int64_t>> count;
  std::vector<double> scores;
  for (std::int64_t i = 0; i < N; ++i) scores.push_back(static_cast<double>(N - i));
  for (const std::int64_t Nj : cur::threshold_grid(scores).selection_size)
    count.push_back(
        std::vector<std::int64_t>(alphas.size(), ltt::null_boundary(Nj, alphas.back())));
  const BandPool p = stratum_pool(count);
  for (const auto& v : p.violated) {
    REQUIRE_FALSE(v[0]);
    REQUIRE_FALSE(v[1]);
    REQUIRE(v[2]);
  }
  return p;
}

// Runs of the walk on `pool`; the simultaneous false certifications, checked against delta.
void check_cell(const BandPool& pool, const std::string& name, ltt::BudgetProcedure procedure,
                std::int64_t cap, std::int64_t full, std::uint64_t seed) {
  const std::int64_t draws = ltt_test::monte_carlo_draws(full);
  cur::SeveralBudgetsSequentialOptions options;
  options.alphas = alphas;
  options.delta = delta;
  options.procedure = procedure;
  options.label_cap = cap;
  std::int64_t false_certified = 0, certified_any = 0, labels = 0;
  for (std::int64_t r = 0; r < draws; ++r) {
    const auto c = cur::several_budgets_sequential(
        pool.scores, pool.band, seed * 1000003 + static_cast<std::uint64_t>(r), options);
    bool wrong = false, any = false;
    for (std::size_t k = 0; k < c.budgets.size(); ++k) {
      const cur::SequentialCertificate& b = c.budgets[k];
      any = any || b.certified;
      wrong =
          wrong || (b.certified && pool.violated[static_cast<std::size_t>(*b.certified_step)][k]);
    }
    false_certified += wrong;
    certified_any += any;
    labels += c.labels_used;
  }
  const double upper = ltt::clopper_pearson_upper(false_certified, draws, 1e-3);
  MESSAGE(name << ", " << ltt::budget_procedure_name(procedure) << ", cap " << cap
               << ": simultaneous false certification " << false_certified << "/" << draws << " = "
               << static_cast<double>(false_certified) / static_cast<double>(draws)
               << " (99.9% upper limit " << upper << "; 95% interval ["
               << ltt::clopper_pearson_lower(false_certified, draws, 0.025) << ", "
               << ltt::clopper_pearson_upper(false_certified, draws, 0.025)
               << "]), some budget certified in " << certified_any << ", mean labels "
               << static_cast<double>(labels) / static_cast<double>(draws));
  CHECK(ltt_test::rate_at_most(false_certified, draws, full, delta, 1e-3));
}


TEST_CASE(
    "several_budgets_sequential: simultaneous false certification <= delta, every budget on "
    "its boundary at every step (Monte Carlo)") {
  const BandPool pool = every_boundary_pool();
  check_cell(pool, "every_boundary", ltt::BudgetProcedure::one_threshold, 200, 2000, 61);
  check_cell(pool, "every_boundary", ltt::BudgetProcedure::one_threshold, 600, 1000, 62);
  check_cell(pool, "every_boundary", ltt::BudgetProcedure::one_threshold_per_budget, 200, 2000, 63);
}

TEST_CASE(
    "several_budgets_sequential: simultaneous false certification <= delta, the loosest budget "
    "on its boundary, the others within theirs (Monte Carlo)") {
  const BandPool pool = loosest_boundary_pool();
  check_cell(pool, "loosest_boundary", ltt::BudgetProcedure::one_threshold, 200, 2000, 64);
  check_cell(pool, "loosest_boundary", ltt::BudgetProcedure::one_threshold, 600, 4000, 65);
  check_cell(pool, "loosest_boundary", ltt::BudgetProcedure::one_threshold_per_budget, 200, 2000,
             66);
}

}  // namespace several_budgets_sequential_validity_test
