// Tests for the switch rules of the fixed tail (<curation/detail/tail_forecast.hpp>,
// TailSwitch in <curation/sequential_options.hpp>, `--stop forecast` and `--stop labels`) and
// for the random pool family they are judged on (tests/support/pool_family.hpp):
//  - the family realises its drawn S_1 margin and covers its five shapes;
//  - the forecast prefers the anytime test where the purity is flat and the tail where it
//    falls with depth;
//  - false certification at most delta under `--stop forecast` on boundary pools where the tail
//    acts (Monte Carlo, 99.9% Clopper-Pearson lower bound against delta);
//  - `--stop depth` and `auto` (the default) name the fixed walk (its tests:
//    tests/curation/sequential_fixed_walk.test.cpp).

#include <curation/calibrated_selection.hpp>
#include <curation/calibration.hpp>
#include <curation/detail/tail_forecast.hpp>
#include <curation/sequential_selection.hpp>
#include <curation/threshold_grid.hpp>
#include <ltt/bounds.hpp>
#include <ltt/pvalue.hpp>

#include <doctest/doctest.h>

#include "../support/graded_pool.hpp"
#include "../support/monte_carlo.hpp"
#include "../support/pool_family.hpp"
#include "../support/throws.hpp"

#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace {

namespace cur = ltt::curation;
namespace sq = ltt::curation::detail::sequential;

// The unsafe fraction of S_1 of a pool ranked by score.
double s1_unsafe_fraction(const ltt_test::GradedPool& pool) {
  const auto N = static_cast<std::int64_t>(pool.scores.size());
  const std::int64_t N1 = N - cur::quantile_rank(0.85, N);
  std::int64_t U = 0;
  for (std::int64_t i = 0; i < N1; ++i) U += pool.unsafe[static_cast<std::size_t>(i)];
  return static_cast<double>(U) / static_cast<double>(N1);
}

}  // namespace

TEST_CASE("pool_family: each pool holds its drawn S_1 margin; the five shapes all occur") {
  std::set<ltt_test::PurityShape> shapes;
  for (std::uint64_t i = 0; i < 40; ++i) {
    const ltt_test::FamilyPool f =
        ltt_test::draw_family_pool(ltt_test::pool_family_design_seed(i));
    const std::int64_t N1 = f.N - cur::quantile_rank(0.85, f.N);
    CHECK(f.N >= 500);
    CHECK(f.N <= 20000);
    CHECK(f.margin >= 0.02);
    CHECK(f.margin <= 0.30);
    CHECK(static_cast<std::int64_t>(f.pool.unsafe.size()) == f.N);
    // realised within one trajectory (rounding) plus the bisection's tolerance
    CHECK(std::abs(0.25 - s1_unsafe_fraction(f.pool) - f.margin) <=
          1.0 / static_cast<double>(N1) + 1e-9);
    CHECK(f.curve.u_top <= f.curve.u_bottom);
    shapes.insert(f.curve.shape);
    // a pure function of its seed
    const ltt_test::FamilyPool again =
        ltt_test::draw_family_pool(ltt_test::pool_family_design_seed(i));
    CHECK(again.pool.unsafe == f.pool.unsafe);
  }
  CHECK(shapes.size() == 5);
  CHECK(ltt_test::pool_family_design_seed(1000) < ltt_test::pool_family_evaluation_seed(0));
}

namespace {

// A state of the stratified walk: the paper's grid on N = 2000, one step certified, the first
// two strata labeled at the given unsafe rates.
sq::TailForecastInput forecast_state(double rate0, double rate1, std::int64_t t0,
                                     std::int64_t t1, double tail_share) {
  const ltt_test::GradedPool pool = ltt_test::ranked_pool(2000);
  const cur::ThresholdGrid grid = cur::threshold_grid(pool.scores);
  sq::TailForecastInput in;
  for (std::int64_t j = 0; j < grid.size(); ++j) {
    const std::int64_t size = grid.selection_size[static_cast<std::size_t>(j)];
    in.stratum_size.push_back(
        size - (j == 0 ? 0 : grid.selection_size[static_cast<std::size_t>(j - 1)]));
    in.null_boundary.push_back(ltt::null_boundary(size, 0.25));
  }
  in.stratum_labels.assign(in.stratum_size.size(), 0);
  in.stratum_unsafe.assign(in.stratum_size.size(), 0);
  in.stratum_labels[0] = t0;
  in.stratum_unsafe[0] = std::llround(rate0 * static_cast<double>(t0));
  in.stratum_labels[1] = t1;
  in.stratum_unsafe[1] = std::llround(rate1 * static_cast<double>(t1));
  in.depth = 1;
  in.labels_left = 200 - t0 - t1;
  in.tail_share = tail_share;
  return in;
}

}  // namespace

TEST_CASE("tail_forecast: the anytime test where purity is flat, the tail where it falls") {
  // flat and clean: the anytime test certifies every step well within the cap
  const sq::TailForecast flat = sq::tail_forecast(forecast_state(0.02, 0.02, 30, 10, 0.5));
  MESSAGE("flat: switch now " << flat.switch_now << ", go on " << flat.go_on);
  CHECK(flat.go_on >= 11.5);
  CHECK(flat.switch_now <= flat.go_on);
  // falling fast: the second stratum at alpha, so the deeper steps sit near it (the share of
  // `--stop forecast`)
  const sq::TailForecast falling =
      sq::tail_forecast(forecast_state(0.05, 0.25, 60, 40, cur::forecast_tail_share));
  MESSAGE("falling: switch now " << falling.switch_now << ", go on " << falling.go_on);
  CHECK(falling.switch_now > falling.go_on);
  // both plans end no shallower than the depth already certified, at most at the grid's end
  for (const sq::TailForecast& f : {flat, falling}) {
    CHECK(f.switch_now >= 1.0);
    CHECK(f.go_on >= 1.0);
    CHECK(f.switch_now <= 12.0);
    CHECK(f.go_on <= 12.0);
  }
  // no label left: nothing to gain by either plan
  sq::TailForecastInput none = forecast_state(0.05, 0.25, 60, 40, 0.5);
  none.labels_left = 0;
  CHECK(sq::tail_forecast(none).switch_now == 1.0);
}

TEST_CASE("sequential_selection: --stop forecast and labels set the switch rule and the share") {
  cur::SequentialSelectionOptions o;
  cur::apply_stop_rule("forecast", o);
  CHECK(o.fixed_tail);
  CHECK_FALSE(o.fixed_walk);
  CHECK(o.early_refusal);
  CHECK(o.stall_labels == cur::auto_stall_labels);
  CHECK(o.tail_switch == cur::TailSwitch::forecast);
  CHECK(o.tail_share == cur::forecast_tail_share);
  CHECK(o.switch_margin == 0.0);
  CHECK(o.order == cur::LabelOrder::stratified);  // left as it was
  cur::apply_stop_rule("labels", o);
  CHECK(o.tail_switch == cur::TailSwitch::stall);
  CHECK(o.tail_share == 0.5);
  cur::SequentialSelectionOptions nan_margin;
  nan_margin.switch_margin = std::nan("");
  const ltt_test::GradedPool pool = ltt_test::make_graded_pool(300, 0.0, 0.1);
  ltt_test::check_throws_naming(
      [&] { (void)cur::sequential_selection(pool.scores, pool.unsafe, 1, nan_margin); },
      "switch_margin");
  // the default is the depth end: the fixed walk, which reads the uniform order
  cur::SequentialSelectionOptions a, d;
  cur::apply_stop_rule("auto", a);
  cur::apply_stop_rule("depth", d);
  for (const cur::SequentialSelectionOptions& x : {a, d}) {
    CHECK(x.fixed_walk);
    CHECK_FALSE(x.fixed_tail);
    CHECK_FALSE(x.early_refusal);
    CHECK_FALSE(x.stall_labels);
    CHECK(x.order == cur::LabelOrder::uniform);
  }
  cur::apply_stop_rule("labels", d);
  CHECK_FALSE(d.fixed_walk);
  // the fixed walk in the stratified order is refused, naming the order
  d.fixed_walk = true;
  d.order = cur::LabelOrder::stratified;
  ltt_test::check_throws_naming(
      [&] { (void)cur::sequential_selection(pool.scores, pool.unsafe, 1, d); }, "order");
}

TEST_CASE(
    "sequential_selection: false certification <= delta past clean steps under --stop labels "
    "(Monte Carlo)") {
  // make_boundary_pool: the first `clean` grid selections u_top unsafe, every deeper S_j on its
  // boundary U*_j, so H_clean is the first true null. `--stop labels` (the stall switch, tail
  // share 0.5); `forecast` (the forecast switch, share 0.9) is the case "false
  // certification <= delta past clean steps, the defaults' fixed tail" of
  // sequential_selection.test.cpp. 2000 runs per pool, seeds 1000003 * (3100 + i) + r; the
  // test fails if the 99.9% lower bound exceeds delta.
  struct Case {
    std::int64_t clean;
    double u_top;
  };
  constexpr std::int64_t reps = ltt_test::monte_carlo_draws(2000);
  const Case cases[] = {{2, 0.10}, {5, 0.16}};
  for (std::size_t i = 0; i < std::size(cases); ++i) {
    const ltt_test::GradedPool pool =
        ltt_test::make_boundary_pool(1000, cases[i].clean, cases[i].u_top, 0.0, 0.25);
    const cur::ThresholdGrid grid = cur::threshold_grid(pool.scores);
    const std::vector<std::int64_t> U = ltt_test::grid_unsafe_counts(pool, grid);
    for (std::size_t j = 0; j < U.size(); ++j)
      REQUIRE((U[j] >= ltt::null_boundary(grid.selection_size[j], 0.25)) ==
              (static_cast<std::int64_t>(j) >= cases[i].clean));
    cur::SequentialSelectionOptions options;
    cur::apply_stop_rule("labels", options);
    std::int64_t false_certified = 0, switched = 0;
    for (std::int64_t r = 0; r < reps; ++r) {
      const auto c = cur::sequential_selection(
          pool.scores, pool.unsafe, 1000003 * (3100 + i) + static_cast<std::uint64_t>(r),
          options);
      false_certified += c.certified_step.has_value() && *c.certified_step >= cases[i].clean;
      switched += c.tail_from.has_value();
    }
    const double lower = ltt::clopper_pearson_lower(false_certified, reps, 1e-3);
    MESSAGE(cases[i].clean << " clean steps, then every S_j on its boundary, --stop labels: false "
                           << false_certified << "/" << reps << " [95%: "
                           << ltt::clopper_pearson_lower(false_certified, reps, 0.05) << ", "
                           << ltt::clopper_pearson_upper(false_certified, reps, 0.05)
                           << "], switched to the tail in " << switched);
    CHECK(lower <= 0.1);
    CHECK(switched > reps / 2);  // the tail is exercised
  }
}
