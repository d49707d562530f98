// Tests for the fixed walk bought label by label (SequentialSelectionOptions::fixed_walk,
// `--stop depth`, the default; docs/sequential.md, "The fixed walk, label by label"):
//  - on every pool and seed it certifies exactly the step that the fixed-n walk
//    (calibrated_selection) certifies on its sample, the first label_cap positions of the
//    permutation, with at most the sample's members of the grid's largest selection as labels;
//  - the depth it reports after every label is at most that final depth, and its upper depth
//    at least (so a stop at any label keeps the fixed walk's guarantee);
//  - its p-values bound the full sample's from above, and a refusal's fallback reads S_1;
//  - false certification at most delta on boundary pools (Monte Carlo).

#include <curation/calibrated_selection.hpp>
#include <curation/calibration.hpp>
#include <curation/label_order.hpp>
#include <curation/sequential_selection.hpp>
#include <curation/sequential_walk.hpp>
#include <curation/threshold_grid.hpp>
#include <ltt/bounds.hpp>
#include <ltt/pvalue.hpp>

#include <doctest/doctest.h>

#include "../support/graded_pool.hpp"
#include "../support/monte_carlo.hpp"
#include "../support/pool_family.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

namespace {

namespace cur = ltt::curation;

cur::SequentialSelectionOptions depth_options(std::int64_t cap) {
  cur::SequentialSelectionOptions o;
  o.label_cap = cap;
  cur::apply_stop_rule("depth", o);
  return o;
}

// The fixed-n walk on the fixed walk's sample: the first `cap` positions of the permutation.
cur::CalibratedSelection fixed_n_on_sample(const ltt_test::GradedPool& pool, std::uint64_t seed,
                                           const cur::SequentialSelectionOptions& o) {
  const auto N = static_cast<std::int64_t>(pool.scores.size());
  std::vector<std::int64_t> sample = cur::draw_label_order(N, N, seed);
  sample.resize(static_cast<std::size_t>(o.label_cap));
  std::sort(sample.begin(), sample.end());
  cur::CalibratedSelectionOptions fixed;
  fixed.alpha = o.alpha;
  fixed.delta = o.delta;
  fixed.quantiles = o.quantiles;
  return cur::calibrated_selection(pool.scores, cur::label_calibration(sample, pool.unsafe),
                                   fixed);
}

// The sample's members of the grid's largest selection.
std::int64_t sample_in_last_selection(const ltt_test::GradedPool& pool, std::uint64_t seed,
                                      std::int64_t cap) {
  const auto N = static_cast<std::int64_t>(pool.scores.size());
  const cur::ThresholdGrid grid = cur::threshold_grid(pool.scores);
  const std::vector<std::int64_t> perm = cur::draw_label_order(N, cap, seed);
  return std::count_if(perm.begin(), perm.end(), [&](std::int64_t p) {
    return pool.scores[static_cast<std::size_t>(p)] >= grid.lambda.back();
  });
}

struct Walked {
  cur::SequentialCertificate certificate;
  bool bounds_hold = true;  // lower <= final depth <= upper after every label
};

// The walk label by label, checking its depth bounds against the fixed-n walk's depth.
Walked walk_checking_bounds(const ltt_test::GradedPool& pool, std::uint64_t seed,
                            const cur::SequentialSelectionOptions& o, std::int64_t final_depth) {
  cur::SequentialWalk walk(pool.scores, o, seed);
  Walked w;
  for (;;) {
    if (const auto reason = walk.stopping_reason()) {
      w.certificate = walk.certificate(*reason);
      return w;
    }
    const std::int64_t position = *walk.next_position();
    walk.add_label(position, pool.unsafe[static_cast<std::size_t>(position)] != 0);
    const std::int64_t lower = walk.certificate().certified_step.value_or(-1) + 1;
    w.bounds_hold = w.bounds_hold && lower <= final_depth && final_depth <= walk.upper_depth();
  }
}

}  // namespace

TEST_CASE("fixed walk: the fixed-n walk's certificate on the same sample, with fewer labels") {
  std::int64_t runs = 0, same = 0, bounds = 0, within = 0, saved = 0, certified = 0;
  std::int64_t labels = 0, members = 0;
  const auto check_pool = [&](const ltt_test::GradedPool& pool, std::int64_t cap,
                              std::uint64_t seed) {
    const cur::SequentialSelectionOptions o = depth_options(cap);
    const cur::CalibratedSelection fixed = fixed_n_on_sample(pool, seed, o);
    const std::int64_t final_depth =
        fixed.certificate.certified ? *fixed.certificate.certified_step + 1 : 0;
    const Walked w = walk_checking_bounds(pool, seed, o, final_depth);
    const cur::SequentialCertificate& c = w.certificate;
    const std::int64_t in_last = sample_in_last_selection(pool, seed, cap);
    ++runs;
    same += c.certified == fixed.certificate.certified &&
            c.certified_step == fixed.certificate.certified_step &&
            (!c.certified || c.threshold == fixed.certificate.threshold);
    bounds += w.bounds_hold;
    within += c.labels_used <= in_last;
    saved += c.labels_used < in_last;
    certified += c.certified;
    labels += c.labels_used;
    members += in_last;
    CHECK(c.reason == cur::StoppingReason::decided);
    // each step's p-value counts the unbought labels unsafe: at least the full sample's (the
    // fixed-n walk evaluates the steps up to its first refusal)
    for (std::size_t j = 0; j < c.steps.size(); ++j) {
      REQUIRE(c.steps[j].sample);
      CHECK(c.steps[j].rejected == (static_cast<std::int64_t>(j) < final_depth));
      if (j >= fixed.certificate.steps.size()) continue;
      CHECK(*c.steps[j].sample == fixed.certificate.steps[j].m);
      CHECK(c.steps[j].p >= fixed.certificate.steps[j].p);
    }
  };
  for (std::uint64_t i = 0; i < 24; ++i) {
    const ltt_test::FamilyPool f =
        ltt_test::draw_family_pool(ltt_test::pool_family_design_seed(i));
    for (std::uint64_t r = 0; r < 4; ++r) check_pool(f.pool, 200, 91000 + 10 * i + r);
  }
  // other caps: small, and a pool smaller than 200 labeled in full
  const ltt_test::GradedPool graded = ltt_test::make_graded_pool(2000, 0.05, 0.10);
  for (std::uint64_t r = 0; r < 20; ++r) check_pool(graded, 60, 92000 + r);
  const ltt_test::GradedPool small = ltt_test::make_graded_pool(150, 0.0, 0.15);
  for (std::uint64_t r = 0; r < 10; ++r) check_pool(small, 150, 93000 + r);
  MESSAGE("fixed walk against the fixed-n walk on its sample: the same certificate in "
          << same << "/" << runs << " runs, depth bounds held in " << bounds << ", certified "
          << certified << ", labels " << labels << " of the sample's " << members
          << " members of the largest selection (fewer in " << saved << " runs)");
  CHECK(same == runs);
  CHECK(bounds == runs);
  CHECK(within == runs);
  CHECK(saved > runs / 2);  // the stop when decided saves labels, not only the skipped rest
  CHECK(certified > 0);
  CHECK(certified < runs);  // refusals are exercised too
}

TEST_CASE("fixed walk: a refusal's fallback reads the labels of S_1") {
  // S_1 40% unsafe: refused, and decided long before the cap
  const ltt_test::GradedPool pool = ltt_test::make_graded_pool(2000, 0.40, 0.40);
  const cur::SequentialCertificate c =
      cur::sequential_selection(pool.scores, pool.unsafe, 5, depth_options(200));
  REQUIRE_FALSE(c.certified);
  REQUIRE(c.fallback_record);
  CHECK(c.fallback_record->population == c.steps[0].N);
  CHECK(c.fallback_record->labels == c.steps[0].m);
  CHECK(c.reason == cur::StoppingReason::decided);
  CHECK(c.labels_used < 60);
}

TEST_CASE("fixed walk: no label needed when the sample holds no member of S_1") {
  // cap 1 on a pool whose S_1 is 15%: some seed's one position lies outside S_1, and the walk
  // is decided (refused) before any label
  const ltt_test::GradedPool pool = ltt_test::make_graded_pool(200, 0.0, 0.0);
  const cur::ThresholdGrid grid = cur::threshold_grid(pool.scores);
  std::uint64_t seed = 0;
  while (pool.scores[static_cast<std::size_t>(cur::draw_label_order(200, 1, seed)[0])] >=
         grid.lambda[0])
    ++seed;
  const cur::SequentialWalk walk(pool.scores, depth_options(1), seed);
  CHECK(walk.stopping_reason() == cur::StoppingReason::decided);
  CHECK_FALSE(walk.next_position());
  CHECK_FALSE(walk.certificate(cur::StoppingReason::decided).certified);
}

TEST_CASE("fixed walk: false certification <= delta past clean steps (Monte Carlo)") {
  // make_boundary_pool: the first `clean` grid selections u_top unsafe, every deeper S_j on its
  // boundary U*_j. 4000 runs per pool, seeds 1000003 * (3300 + i) + r; the 95% upper limit
  // (full size) must be at most delta.
  struct Case {
    std::int64_t clean;
    double u_top;
  };
  constexpr std::int64_t full = 4000;
  constexpr std::int64_t reps = ltt_test::monte_carlo_draws(full);
  const Case cases[] = {{1, 0.10}, {3, 0.12}, {6, 0.15}};
  for (std::size_t i = 0; i < std::size(cases); ++i) {
    const ltt_test::GradedPool pool =
        ltt_test::make_boundary_pool(2000, cases[i].clean, cases[i].u_top, 0.0, 0.25);
    const cur::SequentialSelectionOptions o = depth_options(200);
    std::int64_t false_certified = 0, labels = 0;
    for (std::int64_t r = 0; r < reps; ++r) {
      const auto c = cur::sequential_selection(
          pool.scores, pool.unsafe, 1000003 * (3300 + i) + static_cast<std::uint64_t>(r), o);
      false_certified += c.certified_step.has_value() && *c.certified_step >= cases[i].clean;
      labels += c.labels_used;
    }
    MESSAGE(cases[i].clean << " clean steps, then every S_j on its boundary, --stop depth: false "
                           << false_certified << "/" << reps << " [95%: "
                           << ltt::clopper_pearson_lower(false_certified, reps, 0.05) << ", "
                           << ltt::clopper_pearson_upper(false_certified, reps, 0.05)
                           << "], mean labels "
                           << static_cast<double>(labels) / static_cast<double>(reps));
    CHECK(ltt_test::rate_at_most(false_certified, reps, full, 0.1, 0.05));
  }
}
