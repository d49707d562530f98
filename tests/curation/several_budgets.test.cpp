// Several budgets from one cost-banded calibration sample (curation/cost_bands.hpp,
// curation/several_budgets_selection.hpp, ltt/several_budgets.hpp): bands and their files,
// the one-budget certificate identical to calibrated_selection's field by field (every double
// compared with ==), the joint walk on max_k p_jk, and the per-budget walks at their shares.
// The Monte Carlo validity checks are in several_budgets_validity.test.cpp.

#include <doctest/doctest.h>

#include <cstdint>
#include <random>
#include <vector>

#include <curation/calibrated_selection.hpp>
#include <curation/calibration.hpp>
#include <curation/cost_bands.hpp>
#include <curation/several_budgets_selection.hpp>
#include <ltt/detail/level_split.hpp>
#include <ltt/several_budgets.hpp>

#include "../support/throws.hpp"

namespace cur = ltt::curation;

// Named, not anonymous: unit_tests is a unity build (batches of 8 files).
namespace several_budgets_test {

void check_same_step(const cur::CertificateStep& a, const cur::CertificateStep& b) {
  CHECK(a.quantile == b.quantile);
  CHECK(a.lambda == b.lambda);
  CHECK(a.N == b.N);
  CHECK(a.m == b.m);
  CHECK(a.k == b.k);
  CHECK(a.null_boundary == b.null_boundary);
  CHECK(a.p == b.p);
  CHECK(a.rejected == b.rejected);
}

// Every field of the two selections, doubles compared exactly.
void check_same_selection(const cur::CalibratedSelection& a, const cur::CalibratedSelection& b) {
  const cur::Certificate &x = a.certificate, &y = b.certificate;
  CHECK(x.alpha == y.alpha);
  CHECK(x.delta == y.delta);
  CHECK(x.pool_size == y.pool_size);
  CHECK(x.calibration_size == y.calibration_size);
  CHECK(x.calibration_unsafe == y.calibration_unsafe);
  CHECK(x.grid_size == y.grid_size);
  CHECK(x.merged_quantiles == y.merged_quantiles);
  REQUIRE(x.steps.size() == y.steps.size());
  for (std::size_t s = 0; s < x.steps.size(); ++s) check_same_step(x.steps[s], y.steps[s]);
  CHECK(x.certified == y.certified);
  CHECK(x.certified_step == y.certified_step);
  CHECK(x.fallback == y.fallback);
  REQUIRE(x.fallback_record.has_value() == y.fallback_record.has_value());
  if (x.fallback_record) {
    CHECK(x.fallback_record->labels == y.fallback_record->labels);
    CHECK(x.fallback_record->safe_labels == y.fallback_record->safe_labels);
    CHECK(x.fallback_record->safe_mass_lower == y.fallback_record->safe_mass_lower);
    CHECK(x.fallback_record->count == y.fallback_record->count);
  }
  CHECK(x.threshold == y.threshold);
  CHECK(x.quantile == y.quantile);
  CHECK(x.threshold_set_size == y.threshold_set_size);
  CHECK(x.drop_unsafe_calibration == y.drop_unsafe_calibration);
  CHECK(x.dropped == y.dropped);
  CHECK(x.selection_size == y.selection_size);
  CHECK(a.selected == b.selected);
}

// A pool whose costs fall with the score plus noise, so that selections are cleaner at the top.
struct CostPool {
  std::vector<double> scores, costs;
};

CostPool noisy_pool(std::int64_t N, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  CostPool p;
  for (std::int64_t i = 0; i < N; ++i) {
    const double cost = 100.0 * cur::detail::uniform_unit(rng);
    p.costs.push_back(cost);
    p.scores.push_back(-cost + 60.0 * cur::detail::uniform_unit(rng));
  }
  return p;
}


TEST_CASE("cost_bands: bands, the one-bit calibration of each budget, and label files") {
  const std::vector<double> budgets{20.0, 40.0, 80.0};
  CHECK(cur::cost_band(0.0, budgets) == 0);
  CHECK(cur::cost_band(20.0, budgets) == 0);  // a cost equal to the budget is within it
  CHECK(cur::cost_band(20.5, budgets) == 1);
  CHECK(cur::cost_band(40.0, budgets) == 1);
  CHECK(cur::cost_band(79.0, budgets) == 2);
  CHECK(cur::cost_band(1e9, budgets) == 3);

  const std::vector<std::int64_t> pool_ids{100, 101, 102, 103, 104, 105};
  const std::vector<std::int64_t> label_ids{105, 101, 103};
  const std::vector<double> costs{90.0, 10.0, 45.0};
  const cur::BandedCalibration b =
      cur::banded_calibration_from_costs(pool_ids, label_ids, costs, budgets);
  CHECK(b.budgets == 3);
  CHECK(b.index == std::vector<std::int64_t>{1, 3, 5});
  CHECK(b.band == std::vector<std::uint8_t>{0, 2, 3});
  const cur::BandedCalibration same = cur::banded_calibration_from_bands(
      pool_ids, label_ids, std::vector<std::int64_t>{3, 0, 2}, 3);
  CHECK(same.index == b.index);
  CHECK(same.band == b.band);
  CHECK(cur::calibration_for_budget(b, 0).unsafe == std::vector<std::uint8_t>{0, 1, 1});
  CHECK(cur::calibration_for_budget(b, 1).unsafe == std::vector<std::uint8_t>{0, 1, 1});
  CHECK(cur::calibration_for_budget(b, 2).unsafe == std::vector<std::uint8_t>{0, 0, 1});

  // One budget: the band is the one-bit label, and the one-bit mapping's own result.
  const std::vector<std::int64_t> bits{1, 0, 1};
  const cur::Calibration one_bit = cur::calibration_from_labels(pool_ids, label_ids, bits);
  const cur::BandedCalibration one = cur::banded_calibration_from_bands(pool_ids, label_ids, bits, 1);
  const cur::Calibration back = cur::calibration_for_budget(one, 0);
  CHECK(back.index == one_bit.index);
  CHECK(back.unsafe == one_bit.unsafe);

  using ltt_test::check_throws_naming;
  check_throws_naming([&] { cur::check_budgets("f", std::vector<double>{}); }, "budgets.size()");
  check_throws_naming([&] { cur::check_budgets("f", std::vector<double>{20, 20}); }, "budgets[1]");
  check_throws_naming([&] { cur::check_budgets("f", std::vector<double>{40, 20}); }, "budgets[1]");
  check_throws_naming(
      [&] { cur::check_budgets("f", std::vector<double>{20, ltt_test::not_a_number}); },
      "budgets[1]");
  check_throws_naming(
      [&] {
        cur::banded_calibration_from_bands(pool_ids, label_ids, std::vector<std::int64_t>{0, 4, 1},
                                           3);
      },
      "label_bands[1]");
  check_throws_naming(
      [&] {
        cur::banded_calibration_from_bands(pool_ids, label_ids,
                                           std::vector<std::int64_t>{0, -1, 1}, 3);
      },
      "label_bands[1]");
  check_throws_naming(
      [&] {
        cur::banded_calibration_from_costs(pool_ids, label_ids,
                                           std::vector<double>{1.0, ltt_test::not_a_number, 2.0},
                                           budgets);
      },
      "label_costs[1]");
  check_throws_naming(
      [&] {
        cur::banded_calibration_from_costs(pool_ids, std::vector<std::int64_t>{105, 999},
                                           std::vector<double>{1.0, 2.0}, budgets);
      },
      "label_ids[1]");
  check_throws_naming([&] { cur::calibration_for_budget(b, 3); }, "k");
}

TEST_CASE("several_budgets: one budget gives calibrated_selection's certificate exactly") {
  // Thirty pools and draws, both procedures, with and without the drop: certified and
  // fallback cases both occur (checked), and every field is the single-budget one.
  int certified = 0, fallback = 0;
  for (std::uint64_t seed = 0; seed < 30; ++seed) {
    const std::int64_t N = 300 + static_cast<std::int64_t>(seed) * 37;
    const CostPool pool = noisy_pool(N, seed);
    const std::vector<double> budget{4.0 + 3.0 * static_cast<double>(seed % 10)};
    const auto index = cur::draw_calibration(N, 60 + static_cast<std::int64_t>(seed) * 5, seed);
    const cur::BandedCalibration banded = cur::label_banded_calibration(index, pool.costs, budget);
    std::vector<std::uint8_t> unsafe(pool.costs.size());
    for (std::size_t i = 0; i < unsafe.size(); ++i) unsafe[i] = pool.costs[i] > budget[0];
    const cur::Calibration bits = cur::label_calibration(index, unsafe);

    cur::CalibratedSelectionOptions single;
    single.alpha = seed % 2 ? 0.25 : 0.3;
    single.delta = seed % 3 ? 0.1 : 0.05;
    single.drop_unsafe_calibration = seed % 4 == 1;
    const cur::CalibratedSelection expected = cur::calibrated_selection(pool.scores, bits, single);
    (expected.certificate.certified ? certified : fallback) += 1;
    for (const auto procedure :
         {ltt::BudgetProcedure::one_threshold, ltt::BudgetProcedure::one_threshold_per_budget}) {
      cur::SeveralBudgetsOptions options;
      options.alphas = {single.alpha};
      options.delta = single.delta;
      options.procedure = procedure;
      options.drop_unsafe_calibration = single.drop_unsafe_calibration;
      const cur::SeveralBudgetsSelection got =
          cur::several_budgets_selection(pool.scores, banded, options);
      CAPTURE(seed);
      REQUIRE(got.budgets.size() == 1);
      CHECK(got.levels == std::vector<double>{single.delta});
      check_same_selection(got.budgets[0], expected);
    }
  }
  CHECK(certified >= 5);
  CHECK(fallback >= 5);
}

TEST_CASE("several_budgets: one threshold walks on max_k p_jk; one per budget at delta / K") {
  const std::int64_t N = 2000;
  const CostPool pool = noisy_pool(N, 77);
  const std::vector<double> budgets{30.0, 45.0, 60.0};
  const std::vector<double> alphas{0.3, 0.25, 0.2};
  const auto index = cur::draw_calibration(N, 300, 5);
  const cur::BandedCalibration banded = cur::label_banded_calibration(index, pool.costs, budgets);
  cur::SeveralBudgetsOptions options;
  options.alphas = alphas;
  options.delta = 0.1;

  const cur::SeveralBudgetsSelection joint =
      cur::several_budgets_selection(pool.scores, banded, options);
  REQUIRE(joint.budgets.size() == 3);
  CHECK(joint.levels == std::vector<double>{0.1, 0.1, 0.1});
  const std::size_t reached = joint.joint_pvalues.size();
  for (std::size_t j = 0; j < reached; ++j) {
    double max_p = 0.0;
    for (std::size_t k = 0; k < 3; ++k) {
      const auto& step = joint.budgets[k].certificate.steps.at(j);
      // each budget's p-value is the single-budget one from its own counts
      CHECK(step.p == ltt::composition_pvalue(step.k, step.m, step.N, alphas[k]));
      max_p = std::max(max_p, step.p);
      CHECK(step.rejected == (joint.budgets[0].certificate.steps[j].rejected));
    }
    CHECK(joint.joint_pvalues[j] == max_p);
    CHECK(joint.budgets[0].certificate.steps[j].rejected == (max_p <= 0.1));
  }
  // the counts are nested: a draw over a loose budget is over every tighter one
  for (std::size_t j = 0; j < reached; ++j)
    CHECK(joint.budgets[0].certificate.steps[j].k >= joint.budgets[2].certificate.steps[j].k);
  REQUIRE(joint.budgets[0].certificate.certified);  // the pool is chosen so the walk certifies
  for (const auto& b : joint.budgets) CHECK(b.certificate.threshold == joint.budgets[0].certificate.threshold);

  options.procedure = ltt::BudgetProcedure::one_threshold_per_budget;
  const cur::SeveralBudgetsSelection each =
      cur::several_budgets_selection(pool.scores, banded, options);
  const double share = ltt::detail::level_share(0.1, 3);
  CHECK(each.levels == std::vector<double>{share, share, share});
  CHECK(each.joint_pvalues.empty());
  for (std::size_t k = 0; k < 3; ++k) {
    cur::CalibratedSelectionOptions single;
    single.alpha = alphas[k];
    single.delta = share;
    check_same_selection(
        each.budgets[k],
        cur::calibrated_selection(pool.scores,
                                  cur::calibration_for_budget(banded, static_cast<std::int64_t>(k)),
                                  single));
  }

  using ltt_test::check_throws_naming;
  options.alphas = {0.25, 0.25};
  check_throws_naming([&] { cur::several_budgets_selection(pool.scores, banded, options); },
                      "alphas.size()");
  options.alphas = {0.25, 1.0, 0.25};
  check_throws_naming([&] { cur::several_budgets_selection(pool.scores, banded, options); },
                      "alpha");
  options.alphas = alphas;
  options.delta = 0.0;
  check_throws_naming([&] { cur::several_budgets_selection(pool.scores, banded, options); },
                      "delta");
  check_throws_naming([&] { ltt::intersection_union_pvalue(std::vector<double>{0.1, 1.5}); },
                      "pvalues[1]");
  check_throws_naming([&] { ltt::budget_levels(ltt::BudgetProcedure::one_threshold, 0.1, 0); },
                      "budgets");
}

}  // namespace several_budgets_test
