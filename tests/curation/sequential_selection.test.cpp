// Tests for include/curation/sequential_selection.hpp: the walk's structure against the
// fixed-n walk's grid and counts (threshold_grid, calibration_counts, ltt::fixed_sequence);
// the stopping rules; Monte Carlo false certification on pools with purity margin in
// [-0.02, 0) under each stopping rule (fixed seeds, Clopper-Pearson tolerance); labels saved
// on a comfortable-margin pool against the fixed-n walk at n = 200; argument checking.

#include <curation/calibrated_selection.hpp>
#include <curation/calibration.hpp>
#include <curation/sequential_selection.hpp>
#include <curation/threshold_grid.hpp>
#include <ltt/bounds.hpp>
#include <ltt/certification_rate.hpp>
#include <ltt/fixed_sequence.hpp>
#include <ltt/hypergeometric.hpp>
#include <ltt/sequential_pvalue.hpp>
#include <ltt/stratified_sequential_pvalue.hpp>

#include <doctest/doctest.h>

#include "../support/graded_pool.hpp"
#include "../support/monte_carlo.hpp"
#include "../support/throws.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace cur = ltt::curation;
using ltt_test::check_throws_naming;

using ltt_test::make_pool;
using ltt_test::Pool;

// ltt::purity_margin of the pool's grid: alpha minus the smallest unsafe fraction U_j / N_j.
double purity_margin(const Pool& pool, double alpha) {
  const cur::ThresholdGrid grid = cur::threshold_grid(pool.scores);
  const std::vector<std::int64_t> U = ltt_test::grid_unsafe_counts(pool, grid);
  std::vector<double> fractions;
  for (std::size_t j = 0; j < U.size(); ++j)
    fractions.push_back(static_cast<double>(U[j]) / static_cast<double>(grid.selection_size[j]));
  return ltt::purity_margin(alpha, fractions);
}

// Every H_j true: U_j >= U*_j on every grid step.
bool every_null_true(const Pool& pool, double alpha) {
  const cur::ThresholdGrid grid = cur::threshold_grid(pool.scores);
  const std::vector<std::int64_t> U = ltt_test::grid_unsafe_counts(pool, grid);
  for (std::size_t j = 0; j < U.size(); ++j)
    if (U[j] < ltt::null_boundary(grid.selection_size[j], alpha)) return false;
  return true;
}

}  // namespace

TEST_CASE(
    "sequential_selection: uniform order: grid, counts and decisions are the fixed-n walk's") {
  // ties in the scores (three per value) so the grid merges and N_j counts ties
  Pool pool = make_pool(300, 0.0, 0.1);
  for (std::size_t i = 0; i < pool.scores.size(); ++i)
    pool.scores[i] = std::floor(pool.scores[i] / 3.0);
  cur::SequentialSelectionOptions options;
  options.order = cur::LabelOrder::uniform;
  options.label_cap = 250;
  options.early_refusal = false;
  const cur::SequentialCertificate c =
      cur::sequential_selection(pool.scores, pool.unsafe, 11, options);
  CHECK(c.reason == cur::StoppingReason::label_cap);
  CHECK(c.labels_used == 250);

  const cur::ThresholdGrid grid = cur::threshold_grid(pool.scores);
  REQUIRE(c.grid_size == grid.size());
  REQUIRE(c.steps.size() == grid.lambda.size());
  CHECK(c.merged_quantiles == grid.merged_quantiles);

  // the labeled set as a Calibration: the fixed-n counting must agree with the walk's
  const std::vector<std::int64_t> order = cur::draw_label_order(300, 250, 11);
  std::vector<std::int64_t> sorted(order);
  std::sort(sorted.begin(), sorted.end());
  CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end());
  const cur::Calibration cal = cur::label_calibration(sorted, pool.unsafe);
  const cur::CalibrationCounts counts = cur::calibration_counts(grid, pool.scores, cal);
  CHECK(c.unsafe_labels == cal.unsafe_count());

  std::vector<double> pvalues;
  for (std::size_t j = 0; j < c.steps.size(); ++j) {
    const cur::SequentialStep& s = c.steps[j];
    CHECK(s.quantile == grid.quantile[j]);
    CHECK(s.lambda == grid.lambda[j]);
    CHECK(s.N == grid.selection_size[j]);
    CHECK(s.null_boundary == ltt::null_boundary(s.N, options.alpha));
    CHECK(s.m == counts.m[j]);
    CHECK(s.k == counts.k[j]);
    // p_j from the labels that landed in S_j, in arrival order
    std::vector<std::uint8_t> in_selection;
    for (const std::int64_t pos : order)
      if (pool.scores[static_cast<std::size_t>(pos)] >= s.lambda)
        in_selection.push_back(pool.unsafe[static_cast<std::size_t>(pos)]);
    CHECK(s.p_anytime ==
          ltt::sequential_composition_pvalue(in_selection, s.N, options.alpha,
                                             ltt::sequential_default_prior(options.alpha)));
    // at the cap, the exact test of the cap's labels at delta w joins (w = 0.2); the anytime
    // test keeps the double below 0.8, since fl(0.8) + fl(0.2) exceeds 1 exactly
    REQUIRE(s.p_cap.has_value());
    CHECK(*s.p_cap == ltt::composition_pvalue(s.k, s.m, s.N, options.alpha));
    const double anytime_share = std::nextafter(0.8, 0.0);
    CHECK(s.p ==
          std::min(
              {1.0,
               s.p_anytime == 0.0 ? 0.0 : ltt::detail::round_up_pvalue(s.p_anytime / anytime_share),
               ltt::detail::round_up_pvalue(*s.p_cap / 0.2)}));
    pvalues.push_back(s.p);
  }
  const ltt::FixedSequenceResult walk = ltt::fixed_sequence(pvalues, options.delta);
  CHECK(c.certified == walk.last_rejected.has_value());
  CHECK(c.certified_step == walk.last_rejected);
  REQUIRE(c.certified);  // a clean top at alpha = 0.25 certifies within 250 labels
  for (std::size_t j = 0; j < c.steps.size(); ++j)
    CHECK(c.steps[j].rejected ==
          (walk.last_rejected && static_cast<std::int64_t>(j) <= *walk.last_rejected));
  CHECK(std::is_sorted(c.depth_trace.begin(), c.depth_trace.end()));
  CHECK(c.depth_trace.back() == (c.certified_step ? *c.certified_step + 1 : 0));
  const auto& deepest = c.steps[static_cast<std::size_t>(*c.certified_step)];
  CHECK(c.threshold == deepest.lambda);
  CHECK(c.selection_size == deepest.N);
  // certified_after is the first label count at which the trace reaches past the step
  for (std::size_t j = 0; j < c.steps.size(); ++j)
    if (c.steps[j].certified_after) {
      const auto t = static_cast<std::size_t>(*c.steps[j].certified_after);
      CHECK(c.depth_trace[t - 1] > static_cast<std::int64_t>(j));
      if (t >= 2) CHECK(c.depth_trace[t - 2] <= static_cast<std::int64_t>(j));
    }

  // same seed, same certificate
  const cur::SequentialCertificate again =
      cur::sequential_selection(pool.scores, pool.unsafe, 11, options);
  CHECK(again.depth_trace == c.depth_trace);
  CHECK(again.certified_step == c.certified_step);
}

TEST_CASE("sequential_selection: stratified order: where labels go and what H_j is tested on") {
  // a clean top over a rest 8% unsafe: the walk certifies step after step
  const Pool pool = make_pool(1200, 0.0, 0.08);
  cur::SequentialSelectionOptions options;  // the defaults: stratified, auto
  options.label_cap = 300;
  cur::SequentialWalk walk(pool.scores, options, 17);
  const cur::ThresholdGrid grid = cur::threshold_grid(pool.scores);
  const std::int64_t J = grid.size();
  std::vector<std::int64_t> size(static_cast<std::size_t>(J)), taken(size.size(), 0);
  for (std::int64_t j = 0; j < J; ++j)
    size[static_cast<std::size_t>(j)] =
        grid.selection_size[static_cast<std::size_t>(j)] -
        (j == 0 ? 0 : grid.selection_size[static_cast<std::size_t>(j - 1)]);
  const auto stratum = [&](std::int64_t position) {
    std::int64_t k = 0;
    while (k < J && pool.scores[static_cast<std::size_t>(position)] <
                        grid.lambda[static_cast<std::size_t>(k)])
      ++k;
    return k;
  };
  // the permutation's members of each stratum, in order
  std::vector<std::vector<std::int64_t>> members(size.size());
  for (const std::int64_t position : walk.permutation())
    if (stratum(position) < J)
      members[static_cast<std::size_t>(stratum(position))].push_back(position);
  ltt::StratifiedCompositionEvidence evidence(size, ltt::sequential_default_prior(0.25));
  std::vector<long double> running(size.size(), 0.0L);
  std::int64_t depth = 0;
  while (!walk.stopping_reason()) {
    const std::int64_t position = *walk.next_position();
    CHECK(walk.planned(3).front() == position);
    const std::int64_t k = stratum(position);
    // the least-labeled stratum of S_depth in proportion, its next member in the permutation
    REQUIRE(k <= std::min(depth, J - 1));
    for (std::int64_t q = 0; q <= std::min(depth, J - 1); ++q) {
      const auto qs = static_cast<std::size_t>(q), ks = static_cast<std::size_t>(k);
      if (taken[qs] == size[qs]) continue;
      CHECK(taken[ks] * size[qs] <= taken[qs] * size[ks]);
      if (q < k) CHECK(taken[ks] * size[qs] < taken[qs] * size[ks]);
    }
    CHECK(members[static_cast<std::size_t>(k)]
                 [static_cast<std::size_t>(taken[static_cast<std::size_t>(k)])] == position);
    ++taken[static_cast<std::size_t>(k)];
    const bool unsafe = pool.unsafe[static_cast<std::size_t>(position)] != 0;
    walk.add_label(position, unsafe);
    evidence.update(static_cast<std::size_t>(k), unsafe);
    // H_j for j >= 1 (0-based) is evaluated across strata 0..j while it is first uncertified
    const cur::SequentialCertificate c = walk.certificate();
    while (depth < J) {
      const auto d = static_cast<std::size_t>(depth);
      if (depth > 0) {
        running[d] = std::max(running[d], evidence.log_evidence(d + 1, c.steps[d].null_boundary));
        CHECK(c.steps[d].p_anytime == ltt::anytime_pvalue(running[d]));
        CHECK(c.steps[d].p == c.steps[d].p_anytime);
      }
      if (c.steps[d].p > options.delta) break;
      CHECK(c.steps[d].rejected);
      ++depth;
    }
    CHECK(c.depth_trace.back() == depth);
  }
  const cur::SequentialCertificate c = walk.certificate(*walk.stopping_reason());
  CHECK(c.order == cur::LabelOrder::stratified);
  REQUIRE(c.certified);
  MESSAGE("clean top over an 8%-unsafe rest, stratified order: depth "
          << *c.certified_step + 1 << " of " << J << " after " << c.labels_used << " labels ("
          << cur::stopping_reason_name(c.reason) << ")");
  // H_1 alone: the one-selection p-value of the labels in S_1 (all of stratum 0), at delta 0.8
  std::vector<std::uint8_t> in_first;
  for (std::int64_t i = 0; i < taken[0]; ++i)
    in_first.push_back(
        pool.unsafe[static_cast<std::size_t>(members[0][static_cast<std::size_t>(i)])]);
  CHECK(c.steps[0].p_anytime ==
        ltt::sequential_composition_pvalue(in_first, c.steps[0].N, 0.25,
                                           ltt::sequential_default_prior(0.25)));
  // same seed, same walk
  const auto again = cur::sequential_selection(pool.scores, pool.unsafe, 17, options);
  CHECK(again.depth_trace == c.depth_trace);
}

TEST_CASE("sequential_selection: stopping rules") {
  for (const cur::LabelOrder order : {cur::LabelOrder::stratified, cur::LabelOrder::uniform}) {
    CAPTURE(cur::label_order_name(order));
    const Pool clean = make_pool(1000, 0.05, 0.1);
    cur::SequentialSelectionOptions options;
    options.order = order;
    options.target_step = 0;
    const auto first = cur::sequential_selection(clean.scores, clean.unsafe, 3, options);
    CHECK(first.reason == cur::StoppingReason::target_certified);
    CHECK(first.certified_step == 0);
    CHECK(first.labels_used < 200);
    CHECK(first.depth_trace.size() == static_cast<std::size_t>(first.labels_used));

    // a pool whose top is half unsafe: refused long before the cap
    const Pool bad = make_pool(1000, 0.5, 0.5);
    options.target_step.reset();
    const auto refused = cur::sequential_selection(bad.scores, bad.unsafe, 3, options);
    CHECK(refused.reason == cur::StoppingReason::early_refusal);
    CHECK_FALSE(refused.certified);
    CHECK(refused.labels_used < 200);
    MESSAGE(cur::label_order_name(order)
            << " order, half-unsafe top: early refusal after " << refused.labels_used << " labels");
    options.early_refusal = false;
    const auto capped = cur::sequential_selection(bad.scores, bad.unsafe, 3, options);
    CHECK_FALSE(capped.certified);
    if (order == cur::LabelOrder::uniform) {
      CHECK(capped.reason == cur::StoppingReason::label_cap);
      CHECK(capped.labels_used == 200);
    } else {
      // every label goes to S_1 (151 trajectories): labeled in full, H_1 is decided
      CHECK(capped.reason == cur::StoppingReason::decided);
      CHECK(capped.labels_used == 151);
    }
  }
}

namespace {

// Monte Carlo false certification under each stop rule on a pool just over target: pool 0 has
// S_1 at the boundary U_1 = U*_1 = 38 of 151 (margin -0.0017), pool 1 every S_j 1-2 points
// over. One test case per pool and label order, so ctest runs them side by side; the seeds are
// those of one loop over pools, rules and orders (stratified first), 1600 onward.
void check_false_certification_just_over_target(std::size_t pool_index, cur::LabelOrder order) {
  constexpr double alpha = 0.25, delta = 0.1;
  constexpr std::int64_t reps = ltt_test::monte_carlo_draws(5000);
  struct PoolCase {
    double u1, u_rest;
  };
  const PoolCase pools[] = {{38.0 / 151.0, 0.26}, {0.265, 0.27}};
  const std::string rules[] = {"cap", "target:0", "target:11", "early-refusal", "stall:20", "forecast"};
  const PoolCase& pc = pools[pool_index];
  const Pool pool = make_pool(1000, pc.u1, pc.u_rest);
  const double margin = purity_margin(pool, alpha);
  REQUIRE(margin < 0.0);
  REQUIRE(margin >= -0.02);
  REQUIRE(every_null_true(pool, alpha));
  for (std::size_t rule_index = 0; rule_index < std::size(rules); ++rule_index) {
    const std::string& rule = rules[rule_index];
    const std::uint64_t seed = 1600 + 2 * (pool_index * std::size(rules) + rule_index) +
                               (order == cur::LabelOrder::uniform ? 1 : 0);
    cur::SequentialSelectionOptions options;
    options.order = order;
    options.alpha = alpha;
    options.delta = delta;
    cur::apply_stop_rule(rule, options);
    std::int64_t certified = 0, labels = 0;
    for (std::int64_t r = 0; r < reps; ++r) {
      const auto c = cur::sequential_selection(
          pool.scores, pool.unsafe, seed * 1000003 + static_cast<std::uint64_t>(r), options);
      certified += c.certified;
      labels += c.labels_used;
    }
    const double lower = ltt::clopper_pearson_lower(certified, reps, 1e-3);
    MESSAGE("margin " << margin << ", --stop " << rule << ", " << cur::label_order_name(order)
                      << " order: false certification " << certified << "/" << reps << " = "
                      << static_cast<double>(certified) / reps << " (99.9% lower bound " << lower
                      << "), mean labels " << static_cast<double>(labels) / reps);
    CHECK(lower <= delta);
  }
}

}  // namespace

TEST_CASE(
    "sequential_selection: false certification <= delta on pools just over target, S_1 on its "
    "boundary, stratified order (Monte Carlo)") {
  check_false_certification_just_over_target(0, cur::LabelOrder::stratified);
}

TEST_CASE(
    "sequential_selection: false certification <= delta on pools just over target, S_1 on its "
    "boundary, uniform order (Monte Carlo)") {
  check_false_certification_just_over_target(0, cur::LabelOrder::uniform);
}

TEST_CASE(
    "sequential_selection: false certification <= delta on pools just over target, every S_j "
    "1-2 points over, stratified order (Monte Carlo)") {
  check_false_certification_just_over_target(1, cur::LabelOrder::stratified);
}

TEST_CASE(
    "sequential_selection: false certification <= delta on pools just over target, every S_j "
    "1-2 points over, uniform order (Monte Carlo)") {
  check_false_certification_just_over_target(1, cur::LabelOrder::uniform);
}

namespace {

// Monte Carlo false certification where the fixed tail can act (issue 24): pools of 1000 whose
// first grid steps are clean and whose every S_j from step `clean` on sits on its boundary
// (U_j = U*_j, margin about -0.003) or 1-1.5 points over, so the walk certifies the clean
// steps, stalls on the first true null and may switch to the tail. Returns the false
// certifications; counts the runs that switched and those a tail test certified.
struct TailCell {
  std::int64_t certified = 0, labels = 0, switched = 0, by_tail = 0;
};

struct BoundaryCase {
  std::int64_t clean;
  double u_top, over;
};
inline constexpr BoundaryCase boundary_pools[] = {
    {2, 0.10, 0.0}, {5, 0.16, 0.0}, {2, 0.10, 0.015}, {5, 0.16, 0.01}};

// The pool of boundary_pools[i], with its nulls checked: H_j false before `clean`, true after.
Pool boundary_pool(const BoundaryCase& b) {
  const Pool pool = ltt_test::make_boundary_pool(1000, b.clean, b.u_top, b.over, 0.25);
  const cur::ThresholdGrid grid = cur::threshold_grid(pool.scores);
  const std::vector<std::int64_t> U = ltt_test::grid_unsafe_counts(pool, grid);
  for (std::size_t j = 0; j < U.size(); ++j) {
    const bool true_null = U[j] >= ltt::null_boundary(grid.selection_size[j], 0.25);
    REQUIRE(true_null == (static_cast<std::int64_t>(j) >= b.clean));
  }
  return pool;
}

TailCell false_certification_past_clean_steps(const Pool& pool, std::int64_t clean,
                                              const std::string& rule, cur::LabelOrder order,
                                              std::int64_t reps, std::uint64_t seed) {
  cur::SequentialSelectionOptions options;
  options.order = order;
  cur::apply_stop_rule(rule, options);
  TailCell cell;
  for (std::int64_t r = 0; r < reps; ++r) {
    const auto c = cur::sequential_selection(
        pool.scores, pool.unsafe, seed * 1000003 + static_cast<std::uint64_t>(r), options);
    cell.certified += c.certified_step.has_value() && *c.certified_step >= clean;
    cell.labels += c.labels_used;
    cell.switched += c.tail_from.has_value();
    bool tail_certified = false;
    for (const cur::SequentialStep& s : c.steps)
      tail_certified = tail_certified || (s.rejected && s.p_tail && *s.p_tail <= options.delta);
    cell.by_tail += tail_certified;
  }
  return cell;
}

}  // namespace

TEST_CASE(
    "sequential_selection: false certification <= delta past clean steps, the defaults' fixed "
    "tail (Monte Carlo)") {
  // the two on-the-boundary pools, `auto` in the stratified order (the only place the tail
  // acts), 5000 runs each, seeds 2424 + i; the test fails if the 99.9% lower bound exceeds delta
  constexpr std::int64_t reps = ltt_test::monte_carlo_draws(5000);
  for (std::size_t i = 0; i < 2; ++i) {
    const BoundaryCase& b = boundary_pools[i];
    const TailCell cell = false_certification_past_clean_steps(
        boundary_pool(b), b.clean, "forecast", cur::LabelOrder::stratified, reps, 2424 + i);
    const double lower = ltt::clopper_pearson_lower(cell.certified, reps, 1e-3);
    MESSAGE(b.clean << " clean steps, then every S_j on its boundary: false certification "
                    << cell.certified << "/" << reps << " (99.9% lower bound " << lower
                    << "), switched to the tail in " << cell.switched << ", certified by it in "
                    << cell.by_tail << ", mean labels " << static_cast<double>(cell.labels) / reps);
    CHECK(lower <= 0.1);
    CHECK(cell.switched > 0);  // the tail is exercised
  }
}

// The tables of docs/sequential.md, "The fixed tail" (not in the suite: run with --no-skip):
// every stop rule and both orders on the four boundary pools, 5000 runs per cell.
TEST_CASE("sequential_selection: measure false certification past clean steps" * doctest::skip()) {
  const std::string rules[] = {"cap", "target:0", "target:11", "early-refusal", "stall:20", "forecast"};
  for (std::size_t i = 0; i < std::size(boundary_pools); ++i) {
    const BoundaryCase& b = boundary_pools[i];
    const Pool pool = boundary_pool(b);
    MESSAGE("pool " << i << ": " << b.clean << " clean steps at " << b.u_top
                    << ", then every S_j at U*_j + floor(" << b.over << " N_j)");
    for (std::size_t r = 0; r < std::size(rules); ++r)
      for (const cur::LabelOrder order : {cur::LabelOrder::stratified, cur::LabelOrder::uniform}) {
        const TailCell cell = false_certification_past_clean_steps(
            pool, b.clean, rules[r], order, 5000,
            2500 + 20 * i + 2 * r + (order == cur::LabelOrder::uniform));
        MESSAGE("  " << rules[r] << ", " << cur::label_order_name(order) << ": false "
                     << cell.certified << "/5000 = " << static_cast<double>(cell.certified) / 5000
                     << " [" << ltt::clopper_pearson_lower(cell.certified, 5000, 0.05) << ", "
                     << ltt::clopper_pearson_upper(cell.certified, 5000, 0.05) << "], switched "
                     << cell.switched << ", by the tail " << cell.by_tail << ", mean labels "
                     << static_cast<double>(cell.labels) / 5000);
      }
  }
}

TEST_CASE("sequential_selection: labels saved on comfortable-margin pools, against fixed n = 200") {
  // The paper's grid on 2000 trajectories: S_1 is the top 301, so about 15% of the labels land
  // in it. Sequential runs stop at the first certificate (target step 0) or at the cap n = 200;
  // the fixed-n walk draws n = 200 at once (calibrated_selection).
  constexpr double alpha = 0.25, delta = 0.1;
  constexpr std::int64_t full_reps = 500, reps = ltt_test::monte_carlo_draws(full_reps), n = 200;
  struct PoolCase {
    double u1, u_rest;
  };
  const PoolCase pools[] = {{0.02, 0.07}, {0.05, 0.10}, {0.10, 0.15}};
  struct Construction {
    std::string name;
    cur::LabelOrder order;
    std::string stop;
    ltt::BetaMixturePrior prior;
    double cap_test_share;
  };
  const auto uniform = cur::LabelOrder::uniform, stratified = cur::LabelOrder::stratified;
  const auto mixture = ltt::sequential_default_prior(alpha);
  const Construction constructions[] = {
      {"uniform order, prior Beta(1, 1), anytime only", uniform, "target:0",
       ltt::BetaBinomialPrior{1.0, 1.0}, 0.0},
      {"uniform order, prior Beta(1, 9), anytime only", uniform, "target:0",
       ltt::BetaBinomialPrior{1.0, 9.0}, 0.0},
      {"uniform order, default mixture prior, anytime only", uniform, "target:0", mixture, 0.0},
      {"uniform order, default mixture prior, cap test w = 0.2", uniform, "target:0", mixture, 0.2},
      {"uniform order, default mixture prior, cap test w = 0.5", uniform, "target:0", mixture, 0.5},
      {"uniform order, --stop auto", uniform, "forecast", mixture, 0.2},
      {"stratified order, target:0", stratified, "target:0", mixture, 0.2},
      {"stratified order, --stop labels (the savings)", stratified, "labels", mixture, 0.2},
      {"stratified order, --stop auto (the defaults: depth)", stratified, "forecast", mixture, 0.2}};
  for (const PoolCase& pc : pools) {
    const Pool pool = make_pool(2000, pc.u1, pc.u_rest);
    const double margin = purity_margin(pool, alpha);
    std::int64_t fixed_certified = 0, fixed_depth = 0;
    for (std::int64_t r = 0; r < reps; ++r) {
      const auto cal = cur::label_calibration(
          cur::draw_calibration(2000, n, 5000 + static_cast<std::uint64_t>(r)), pool.unsafe);
      cur::CalibratedSelectionOptions o;
      o.alpha = alpha;
      o.delta = delta;
      const auto sel = cur::calibrated_selection(pool.scores, cal, o);
      fixed_certified += sel.certificate.certified;
      if (sel.certificate.certified_step) fixed_depth += *sel.certificate.certified_step + 1;
    }
    const double fixed_rate = static_cast<double>(fixed_certified) / reps;
    MESSAGE("u1 = " << pc.u1 << " (margin " << margin << "), fixed n = " << n
                    << ": certification rate " << fixed_rate << ", mean certified depth "
                    << static_cast<double>(fixed_depth) / reps);
    for (const Construction& con : constructions) {
      cur::SequentialSelectionOptions options;
      options.alpha = alpha;
      options.delta = delta;
      options.label_cap = n;
      options.order = con.order;
      cur::apply_stop_rule(con.stop, options);
      options.prior = con.prior;
      options.cap_test_share = con.cap_test_share;
      std::int64_t certified = 0, labels = 0, refused_early = 0, depth = 0;
      for (std::int64_t r = 0; r < reps; ++r) {
        const auto c = cur::sequential_selection(pool.scores, pool.unsafe,
                                                 7000 + static_cast<std::uint64_t>(r), options);
        certified += c.certified;
        labels += c.labels_used;
        refused_early += c.reason == cur::StoppingReason::early_refusal;
        if (c.certified_step) depth += *c.certified_step + 1;
      }
      const double mean_labels = static_cast<double>(labels) / reps;
      const double rate = static_cast<double>(certified) / reps;
      MESSAGE("u1 = " << pc.u1 << ", sequential, " << con.name << ": certification rate " << rate
                      << " [" << ltt::clopper_pearson_lower(certified, reps, 0.05) << ", "
                      << ltt::clopper_pearson_upper(certified, reps, 0.05) << "], mean labels "
                      << mean_labels << " of " << n << ", mean certified depth "
                      << static_cast<double>(depth) / reps << ", early refusals " << refused_early);
      // margin >= +0.20: `--stop labels` certifies as often as the fixed walk with at most half
      // its labels; the defaults (`depth`) as often, and spend the cap on depth
      if (margin >= 0.20 && con.stop == "labels")
        CHECK(ltt_test::mean_at_most(mean_labels, reps, full_reps, n, 0.5 * n));
      if (margin >= 0.20 && con.order == stratified && (con.stop == "labels" || con.stop == "forecast"))
        CHECK(ltt_test::rate_not_below(certified, fixed_certified, reps, full_reps, 0.02));
    }
  }
}

TEST_CASE("sequential_selection: stop rules stall:L and auto, and apply_stop_rule") {
  cur::SequentialSelectionOptions o;
  cur::apply_stop_rule("forecast", o);
  CHECK(o.early_refusal);
  CHECK(o.stall_labels == cur::auto_stall_labels);
  CHECK(o.fixed_tail);
  CHECK_FALSE(o.target_step);
  cur::apply_stop_rule("target:3", o);
  CHECK(o.target_step == 3);
  CHECK_FALSE(o.early_refusal);
  CHECK_FALSE(o.stall_labels);
  CHECK_FALSE(o.fixed_tail);
  cur::apply_stop_rule("stall:7", o);
  CHECK(o.stall_labels == 7);
  CHECK_FALSE(o.target_step);
  CHECK_FALSE(o.fixed_tail);
  cur::apply_stop_rule("cap", o);
  CHECK_FALSE(o.stall_labels);
  CHECK_FALSE(o.early_refusal);
  for (const char* bad : {"target:", "target:x", "stall:-1", "stall:3x", "sometimes", ""})
    check_throws_naming([&] { cur::apply_stop_rule(bad, o); }, "stop");

  // a clean pool certifies every step well before the cap: stall stops there at once
  const Pool clean = make_pool(2000, 0.0, 0.0);
  o.label_cap = 1000;
  cur::apply_stop_rule("stall:20", o);
  const auto all = cur::sequential_selection(clean.scores, clean.unsafe, 5, o);
  CHECK(all.reason == cur::StoppingReason::stalled);
  CHECK(all.certified_step == all.grid_size - 1);
  CHECK(all.labels_used < 1000);
  CHECK(all.labels_used == *all.steps.back().certified_after);

  // a clean top over an all-unsafe rest at alpha = 0.15: S_1 certifies, S_2 (a quarter
  // unsafe) cannot; the stall rule stops L labels after the last growth once the forecast
  // says the next step is lost
  const Pool split = make_pool(2000, 0.0, 1.0);
  o.alpha = 0.15;
  o.label_cap = 400;
  const auto stalled = cur::sequential_selection(split.scores, split.unsafe, 5, o);
  REQUIRE(stalled.certified);
  CHECK(stalled.reason == cur::StoppingReason::stalled);
  const auto grown =
      *stalled.steps[static_cast<std::size_t>(*stalled.certified_step)].certified_after;
  CHECK(stalled.labels_used >= grown + 20);
  CHECK(stalled.labels_used < 400);
  cur::apply_stop_rule("cap", o);
  const auto capped = cur::sequential_selection(split.scores, split.unsafe, 5, o);
  CHECK(capped.labels_used == 400);
  CHECK(capped.certified_step == stalled.certified_step);  // the stall gave nothing up here
  MESSAGE("clean top over an all-unsafe rest: stall:20 stops after "
          << stalled.labels_used << " labels at depth " << *stalled.certified_step + 1
          << " (cap 400: depth " << *capped.certified_step + 1 << ")");
}

TEST_CASE("sequential_selection: early refusal on pools with margin <= -0.10 (Monte Carlo)") {
  // N = 2000, S_1 the top 301; issue 16 asks refusal with mean labels <= 60% of the cap.
  constexpr double alpha = 0.25;
  constexpr std::int64_t full_reps = 1000, reps = ltt_test::monte_carlo_draws(full_reps),
                         n = 200;  // seeds 9000 + r
  const double u1s[] = {0.36, 0.45, 0.55};
  for (const double u1 : u1s) {
    const Pool pool = make_pool(2000, u1, u1 + 0.05);
    const double margin = purity_margin(pool, alpha);
    REQUIRE(margin <= -0.10);
    for (const std::string rule : {"early-refusal", "forecast"})
      for (const cur::LabelOrder order : {cur::LabelOrder::stratified, cur::LabelOrder::uniform}) {
        cur::SequentialSelectionOptions options;
        options.order = order;
        options.label_cap = n;
        cur::apply_stop_rule(rule, options);
        // the fallback's bound, at the stopping time, on the unsafe count of what the labels
        // were drawn from: S_1 (stratified) or the pool (uniform)
        const std::int64_t N1 = cur::threshold_grid(pool.scores).selection_size[0];
        const std::int64_t population_unsafe = std::count(
            pool.unsafe.begin(),
            order == cur::LabelOrder::stratified ? pool.unsafe.begin() + N1 : pool.unsafe.end(),
            std::uint8_t{1});
        std::int64_t labels = 0, certified = 0, refused = 0, uncovered = 0;
        for (std::int64_t r = 0; r < reps; ++r) {
          const auto c = cur::sequential_selection(pool.scores, pool.unsafe,
                                                   9000 + static_cast<std::uint64_t>(r), options);
          labels += c.labels_used;
          certified += c.certified;
          if (c.certified) continue;
          ++refused;
          uncovered += population_unsafe > c.fallback_record->unsafe_upper;
        }
        const double mean = static_cast<double>(labels) / reps;
        MESSAGE("margin " << margin << ", --stop " << rule << ", " << cur::label_order_name(order)
                          << " order: mean labels " << mean << " of " << n << ", certified "
                          << certified << "/" << reps << "; fallback bound below the truth in "
                          << uncovered << "/" << refused << " refusals");
        CHECK(ltt::clopper_pearson_lower(certified, reps, 1e-3) <= 0.1);  // false, all of them
        CHECK(ltt_test::mean_at_most(mean, reps, full_reps, n, 0.6 * n));
        CHECK(ltt::clopper_pearson_lower(uncovered, refused, 1e-3) <= 0.1);
      }
  }
}

TEST_CASE("sequential_selection: the fixed tail: where its labels come from and its test") {
  // issue 24's held-out pool: purity falls with depth, so `auto` switches to the tail
  const Pool pool = ltt_test::make_degrading_pool(2000, 0.05, 0.35, 0.50);
  const std::int64_t N = 2000;
  const cur::ThresholdGrid grid = cur::threshold_grid(pool.scores);
  const std::int64_t G = grid.selection_size.back();  // the grid's largest selection: the top G
  cur::SequentialSelectionOptions options;
  cur::apply_stop_rule("forecast", options);
  std::int64_t switched = 0;
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    CAPTURE(seed);
    std::vector<std::int64_t> order;  // the positions in the order the walk asked for them
    const auto c = cur::sequential_selection(
        pool.scores, seed,
        [&](std::int64_t position) {
          order.push_back(position);
          return pool.unsafe[static_cast<std::size_t>(position)] != 0;
        },
        options);
    if (!c.tail_from) continue;
    ++switched;
    const std::int64_t T = *c.tail_from;
    REQUIRE(T >= 1);
    CHECK(c.tail_size == options.label_cap - T);  // G is far larger than the cap
    CHECK(c.labels_used == T + c.tail_size);
    // the tail: the second permutation's members of the top G not labeled before, in order
    std::vector<std::uint8_t> before(static_cast<std::size_t>(N), 0);
    for (std::int64_t i = 0; i < T; ++i) before[static_cast<std::size_t>(order[i])] = 1;
    std::vector<std::int64_t> tail;
    for (const std::int64_t position : cur::draw_label_order(N, N, cur::tail_seed(seed)))
      if (position < G && before[static_cast<std::size_t>(position)] == 0 &&
          static_cast<std::int64_t>(tail.size()) < c.tail_size)
        tail.push_back(position);
    CHECK(std::vector<std::int64_t>(order.begin() + T, order.end()) == tail);
    // each step uncertified at the switch: its tail test recomputed from the counts
    for (const cur::SequentialStep& s : c.steps) {
      const bool open_at_switch = !s.certified_after || *s.certified_after > T;
      REQUIRE(s.known_m.has_value() == open_at_switch);
      if (!open_at_switch) continue;
      REQUIRE(s.p_tail);
      const std::int64_t bad = s.null_boundary - *s.known_k, left = s.N - *s.known_m;
      const double exact =
          bad <= 0     ? 1.0
          : bad > left ? 0.0
                       : ltt::hypergeometric_cdf(s.k - *s.known_k, left, bad, s.m - *s.known_m);
      const double w = options.tail_share;  // the default's (`depth`): 0.9
      const double want = std::min(1.0, exact / (w + (1.0 - w) * *s.switch_evidence));
      CHECK(*s.p_tail >= want);
      CHECK(*s.p_tail <= want * (1 + 1e-12));
      CHECK(s.rejected == (s.p <= options.delta));
      if (s.certified_after) CHECK(*s.certified_after == c.labels_used);  // only at the end
    }
  }
  CHECK(switched >= 3);
  // without the tail (stall:20, or the uniform order) no run switches
  cur::apply_stop_rule("stall:20", options);
  CHECK_FALSE(cur::sequential_selection(pool.scores, pool.unsafe, 1, options).tail_from);
  cur::apply_stop_rule("forecast", options);
  options.order = cur::LabelOrder::uniform;
  CHECK_FALSE(cur::sequential_selection(pool.scores, pool.unsafe, 1, options).tail_from);
}

TEST_CASE("sequential_selection: a refusal returns the uncertified fallback and its bound") {
  // S_1 45% unsafe: refused under early refusal in both orders
  const Pool pool = make_pool(2000, 0.45, 0.5);
  const std::int64_t N = 2000, N1 = cur::threshold_grid(pool.scores).selection_size[0];
  for (const cur::LabelOrder order : {cur::LabelOrder::stratified, cur::LabelOrder::uniform}) {
    cur::SequentialSelectionOptions options;
    options.order = order;
    cur::apply_stop_rule("early-refusal", options);
    options.minimum_selection = 40;
    const cur::SequentialCertificate c =
        cur::sequential_selection(pool.scores, pool.unsafe, 5, options);
    REQUIRE_FALSE(c.certified);
    CHECK(c.reason == cur::StoppingReason::early_refusal);
    REQUIRE(c.fallback);
    REQUIRE(c.fallback_record);
    const cur::SequentialFallback& f = *c.fallback_record;
    // the labels the walk read, recomputed from the seeded permutation: S_1's members in
    // order (stratified, nothing certified) or the permutation from the top (uniform)
    std::vector<std::uint8_t> labels;
    for (const std::int64_t position : cur::draw_label_order(N, N, 5)) {
      if (static_cast<std::int64_t>(labels.size()) == c.labels_used) break;
      if (order == cur::LabelOrder::stratified && position >= N1) continue;  // scores N - i
      labels.push_back(pool.unsafe[static_cast<std::size_t>(position)]);
    }
    const std::int64_t population = order == cur::LabelOrder::stratified ? N1 : N;
    CHECK(f.population == population);
    CHECK(f.labels == c.labels_used);
    CHECK(f.safe_labels == c.labels_used - c.unsafe_labels);
    CHECK(f.unsafe_upper == ltt::anytime_unsafe_upper_bound(labels, population, options.delta));
    CHECK(f.unsafe_upper >= c.unsafe_labels);
    CHECK(f.safe_lower == population - f.unsafe_upper);
    CHECK(f.minimum_selection == 40);
    CHECK(f.count == std::max<std::int64_t>(40, f.safe_lower));
    // the top K by score (all scores distinct): threshold the K-th largest
    CHECK(c.threshold == static_cast<double>(N - f.count + 1));
    CHECK(c.selection_size == f.count);
    CHECK(c.quantile == doctest::Approx(1.0 - static_cast<double>(f.count) / N));
    MESSAGE(cur::label_order_name(order)
            << ": refused after " << c.labels_used << " labels (" << c.unsafe_labels
            << " unsafe); unsafe count of the " << population << " at most " << f.unsafe_upper
            << ", K = " << f.count);
  }
  // certified: no fallback
  cur::SequentialSelectionOptions options;
  const cur::SequentialCertificate c = cur::sequential_selection(
      make_pool(2000, 0.0, 0.05).scores, make_pool(2000, 0.0, 0.05).unsafe, 5, options);
  CHECK(c.certified);
  CHECK_FALSE(c.fallback);
  CHECK_FALSE(c.fallback_record);
}

TEST_CASE("sequential_selection: argument checking names the parameter") {
  const Pool pool = make_pool(100, 0.1, 0.1);
  cur::SequentialSelectionOptions o;
  o.label_cap = 0;
  check_throws_naming([&] { cur::sequential_selection(pool.scores, pool.unsafe, 1, o); },
                      "label_cap");
  o.label_cap = 101;
  check_throws_naming([&] { cur::sequential_selection(pool.scores, pool.unsafe, 1, o); },
                      "label_cap");
  o.label_cap = 50;
  o.target_step = 12;
  check_throws_naming([&] { cur::sequential_selection(pool.scores, pool.unsafe, 1, o); },
                      "target_step");
  o.target_step.reset();
  o.alpha = 0.0;
  check_throws_naming([&] { cur::sequential_selection(pool.scores, pool.unsafe, 1, o); }, "alpha");
  o.alpha = 0.25;
  o.cap_test_share = 1.0;
  check_throws_naming([&] { cur::sequential_selection(pool.scores, pool.unsafe, 1, o); },
                      "cap_test_share");
  o.cap_test_share = 0.2;
  o.refusal_rate = -0.1;
  check_throws_naming([&] { cur::sequential_selection(pool.scores, pool.unsafe, 1, o); },
                      "refusal_rate");
  o.refusal_rate = 0.05;
  o.stall_labels = 0;
  check_throws_naming([&] { cur::sequential_selection(pool.scores, pool.unsafe, 1, o); },
                      "stall_labels");
  o.stall_labels.reset();
  const std::vector<std::uint8_t> short_labels(99, 0);
  check_throws_naming([&] { cur::sequential_selection(pool.scores, short_labels, 1, o); },
                      "pool_unsafe.size()");
  cur::SequentialWalk walk(pool.scores, o, 1);
  const std::int64_t next = *walk.next_position();
  check_throws_naming([&] { walk.add_label(next == 0 ? 1 : 0, false); }, "position");
  walk.add_label(next, false);
  check_throws_naming([&] { walk.add_label(next, false); }, "position");
  check_throws_naming([] { (void)cur::parse_label_order("sorted"); }, "order");
  check_throws_naming([] { cur::draw_label_order(10, 11, 1); }, "count");
}

namespace {

// One measured procedure on one pool: certification rate, mean certified depth (0 when
// refused), labels used and the returned step's distribution (index 0: refused).
struct DepthMeasure {
  std::int64_t runs = 0, certified = 0, depth = 0, labels = 0;
  std::vector<std::int64_t> used, returned;

  void add(std::optional<std::int64_t> step, std::int64_t labels_used, std::int64_t grid) {
    if (returned.empty()) returned.assign(static_cast<std::size_t>(grid + 1), 0);
    ++runs;
    certified += step.has_value();
    depth += step ? *step + 1 : 0;
    labels += labels_used;
    used.push_back(labels_used);
    ++returned[static_cast<std::size_t>(step ? *step + 1 : 0)];
  }
  double rate() const { return static_cast<double>(certified) / static_cast<double>(runs); }
  double mean_depth() const { return static_cast<double>(depth) / static_cast<double>(runs); }
  double mean_labels() const { return static_cast<double>(labels) / static_cast<double>(runs); }
  std::string text() const {
    std::vector<std::int64_t> sorted = used;
    std::sort(sorted.begin(), sorted.end());
    std::ostringstream out;
    out << "rate " << rate() << " [" << ltt::clopper_pearson_lower(certified, runs, 0.05) << ", "
        << ltt::clopper_pearson_upper(certified, runs, 0.05) << "], depth " << mean_depth()
        << ", labels mean " << mean_labels() << " median " << sorted[sorted.size() / 2] << " p90 "
        << sorted[(9 * sorted.size() + 9) / 10 - 1] << "; steps (refused, 1..J)";
    for (const std::int64_t count : returned) out << " " << count;
    return out.str();
  }
};

DepthMeasure measure_fixed(const Pool& pool, std::int64_t runs, std::int64_t n,
                           std::uint64_t seed) {
  DepthMeasure m;
  const std::int64_t N = static_cast<std::int64_t>(pool.scores.size());
  for (std::int64_t r = 0; r < runs; ++r) {
    const auto cal = cur::label_calibration(
        cur::draw_calibration(N, n, seed + static_cast<std::uint64_t>(r)), pool.unsafe);
    const auto sel = cur::calibrated_selection(pool.scores, cal, {});
    m.add(sel.certificate.certified_step, n, sel.certificate.grid_size);
  }
  return m;
}

DepthMeasure measure_sequential(const Pool& pool, std::int64_t runs,
                                const cur::SequentialSelectionOptions& options,
                                std::uint64_t seed) {
  DepthMeasure m;
  for (std::int64_t r = 0; r < runs; ++r) {
    const auto c = cur::sequential_selection(pool.scores, pool.unsafe,
                                             seed + static_cast<std::uint64_t>(r), options);
    m.add(c.certified_step, c.labels_used, c.grid_size);
  }
  return m;
}

}  // namespace

// The tables of docs/sequential.md, "Degrading pools" (not part of the suite: run with
// `build/bin/unit_tests -tc="*measure degrading*" --no-skip -s`; LTT_MEASURE_RUNS sets the runs
// per cell, 500 by default; LTT_MEASURE_GRADED=1 measures issue 16's graded pools instead).
// Fixed n = 200 on seeds 5000 + r, sequential on 7000 + r.
TEST_CASE("sequential_selection: measure degrading pools" * doctest::skip()) {
  const char* env = std::getenv("LTT_MEASURE_RUNS");
  const std::int64_t runs = env ? std::atoll(env) : 500;
  struct Config {
    std::string name;
    cur::LabelOrder order;
    std::string stop;
    bool tail = true;
  };
  const auto stratified = cur::LabelOrder::stratified, uniform = cur::LabelOrder::uniform;
  const Config configs[] = {
      {"stratified, auto (the defaults: with the fixed tail)", stratified, "forecast"},
      {"stratified, auto without the tail (issue 16's defaults)", stratified, "forecast", false},
      {"stratified, stall:20", stratified, "stall:20"},
      {"stratified, cap", stratified, "cap"},
      {"stratified, target:0", stratified, "target:0"},
      {"uniform, auto", uniform, "forecast"},
      {"uniform, cap", uniform, "cap"}};
  std::vector<std::pair<std::string, Pool>> pools;
  if (std::getenv("LTT_MEASURE_GRADED")) {
    for (const double u1 : {0.0, 0.02, 0.05, 0.10})
      pools.emplace_back("graded u1 " + std::to_string(u1), make_pool(2000, u1, u1 + 0.05));
  } else {
    for (const ltt_test::DegradingCase& d : ltt_test::degrading_family)
      pools.emplace_back("degrading u_top " + std::to_string(d.u_top) + ", top " +
                             std::to_string(d.top_share) + ", rest " + std::to_string(d.u_rest),
                         ltt_test::make_degrading_pool(2000, d.u_top, d.top_share, d.u_rest));
  }
  for (const auto& [name, pool] : pools) {
    MESSAGE(name << ": fixed n = 200: " << measure_fixed(pool, runs, 200, 5000).text());
    for (const Config& config : configs) {
      cur::SequentialSelectionOptions options;
      options.order = config.order;
      cur::apply_stop_rule(config.stop, options);
      options.fixed_tail = options.fixed_tail && config.tail;
      MESSAGE("  " << config.name << ": " << measure_sequential(pool, runs, options, 7000).text());
    }
  }
}
