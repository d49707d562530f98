// Tests for include/curation/validation.hpp: the harness against the closed-form rate and the
// guarantee on constructed pools across purity margins (Monte Carlo, fixed seeds, tolerances
// from Clopper-Pearson intervals), for fixed sequence, Bonferroni and Holm; identical results
// with one and two threads; each draw replayed through calibrated_selection; a census, where
// every draw is the same; the triple of each draw against ltt::certificate_triple; argument
// checking; the draw seeds (SplitMix64 reference outputs).

#include <curation/calibrated_selection.hpp>
#include <curation/calibration.hpp>
#include <curation/sequential_validation.hpp>
#include <curation/validation.hpp>
#include <ltt/bounds.hpp>
#include <ltt/certificate_triple.hpp>
#include <ltt/certification_rate.hpp>
#include <ltt/fixed_sequence.hpp>

#include <doctest/doctest.h>

#include "../support/graded_pool.hpp"
#include "../support/monte_carlo.hpp"
#include "../support/throws.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace cur = ltt::curation;
using ltt_test::check_throws_naming;

using ltt_test::make_pool;
using ltt_test::Pool;

bool same_bits(double a, double b) {
  return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
}

void check_same_bits(const cur::ProportionEstimate& a, const cur::ProportionEstimate& b) {
  CHECK(a.count == b.count);
  CHECK(a.trials == b.trials);
  CHECK(a.rate.has_value() == b.rate.has_value());
  if (a.rate && b.rate) CHECK(same_bits(*a.rate, *b.rate));
  CHECK(same_bits(a.lower, b.lower));
  CHECK(same_bits(a.upper, b.upper));
}

}  // namespace

TEST_CASE("validation_draw_seed: the outputs of SplitMix64") {
  // Reference outputs of SplitMix64 seeded with 0 (Vigna's splitmix64.c).
  CHECK(cur::validation_draw_seed(0, 0) == 0xe220a8397b1dcdafULL);
  CHECK(cur::validation_draw_seed(0, 1) == 0x6e789e6aa1b965f4ULL);
  CHECK(cur::validation_draw_seed(0, 2) == 0x06c45d188009454fULL);
  CHECK(cur::validation_draw_seed(20261125, 1999) == 0x7d974ef865359f4fULL);
}

// Proposition "certification rate" and Proposition "guarantee" by simulation. alpha = 0.35 so
// that purity margins alpha - u1 from -0.3 to +0.3 are all attainable (u1 from 0.65 down to
// 0.05); the rest of the pool sits 0.15 above max(u1, alpha), so the margin is alpha - u1 and,
// for positive margins, the deeper grid steps cross into true nulls (the walk, Bonferroni and
// Holm can all err there). For each margin and procedure, 2000 draws (fixed seed):
//  - fixed sequence: the closed-form rate lies in the two-sided Clopper-Pearson interval at
//    level 1e-3 around the simulated rate (a correct harness fails this with probability at
//    most 1e-3 per pool);
//  - every procedure: the one-sided Clopper-Pearson lower bound at level 1e-3 on the
//    false-certification rate is at most delta (a true rate of 0.15 would fail it).
TEST_CASE("simulated rate matches the closed form; false certification within delta") {
  const std::int64_t N = 2000;
  const double alpha = 0.35, delta = 0.1, level = 1e-3;
  const std::vector<double> margins{-0.3, -0.2, -0.1, -0.05, -0.02, 0.0, 0.02, 0.05, 0.1, 0.2, 0.3};
  const ltt::Procedure procedures[] = {ltt::Procedure::fixed_sequence, ltt::Procedure::bonferroni,
                                       ltt::Procedure::holm};
  double worst_fwer[3] = {0.0, 0.0, 0.0};
  std::uint64_t seed = 7100;
  for (const double margin : margins) {
    const double u1 = alpha - margin;
    const Pool pool = make_pool(N, u1, std::max(u1, alpha) + 0.15);
    std::ostringstream line;
    for (std::size_t i = 0; i < 3; ++i) {
      cur::ValidationOptions o;
      o.alpha = alpha;
      o.delta = delta;
      o.calibration_size = 200;
      o.draws = ltt_test::monte_carlo_draws(2000);
      o.seed = seed++;
      o.procedure = procedures[i];
      o.certificate_triple = false;
      const cur::GuaranteeValidation v = cur::validate_guarantee(pool.scores, pool.unsafe, o);
      CAPTURE(margin);
      CAPTURE(ltt::procedure_name(procedures[i]));
      const cur::ValidationStep& s1 = v.steps.front();
      if (i == 0) {
        REQUIRE(v.closed_form_rate);
        const double closed = *v.closed_form_rate;
        CHECK(closed == ltt::certification_rate(N, s1.N, s1.U, 200, alpha, delta));
        const double lo = ltt::clopper_pearson_lower(v.certification.count, o.draws, level / 2);
        const double hi = ltt::clopper_pearson_upper(v.certification.count, o.draws, level / 2);
        CHECK(lo <= closed);
        CHECK(closed <= hi);
        line << "margin " << margin << " (purity margin " << v.purity_margin << ", N1 " << s1.N
             << ", U1 " << s1.U << "): closed form " << closed << ", simulated "
             << *v.certification.rate << " [" << lo << ", " << hi << "]";
      } else {
        CHECK_FALSE(v.closed_form_rate);
        line << "; " << ltt::procedure_name(procedures[i]) << " rate " << *v.certification.rate;
      }
      CHECK_FALSE(v.triple);
      const double fwer_lower =
          ltt::clopper_pearson_lower(v.false_certification.count, o.draws, level);
      CHECK(fwer_lower <= delta);
      worst_fwer[i] = std::max(worst_fwer[i], *v.false_certification.rate);
      line << ", false cert " << *v.false_certification.rate;
      // With every selection on the grid out of spec, every certificate is false.
      if (margin < 0.0) CHECK(v.false_certification.count == v.certification.count);
      CHECK(v.certification.count + v.returned_none == o.draws);
    }
    MESSAGE(line.str());
  }
  MESSAGE("worst false-certification rate over the margins: fixed sequence "
          << worst_fwer[0] << ", Bonferroni " << worst_fwer[1] << ", Holm " << worst_fwer[2]
          << " (delta = " << delta << ")");
}

// Negative control: the check above can fail. A walk run at level 0.3 on a pool just out of
// spec (margin -0.02) certifies falsely far more often than 0.1, and the same one-sided
// Clopper-Pearson check against 0.1 catches it.
TEST_CASE("the false-certification check fails a procedure run above its level") {
  const double alpha = 0.35;
  const Pool pool = make_pool(2000, alpha + 0.02, alpha + 0.17);
  cur::ValidationOptions o;
  o.alpha = alpha;
  o.delta = 0.3;
  o.draws = 2000;
  o.seed = 8100;
  o.certificate_triple = false;
  const cur::GuaranteeValidation v = cur::validate_guarantee(pool.scores, pool.unsafe, o);
  CHECK(v.false_certification.count == v.certification.count);
  CHECK(ltt::clopper_pearson_lower(v.false_certification.count, o.draws, 1e-3) > 0.1);
  CHECK(ltt::clopper_pearson_lower(v.false_certification.count, o.draws, 1e-3) <= o.delta);
  MESSAGE("at level 0.3 on margin -0.02: false certification " << *v.false_certification.rate);
}

// The paper's setting (alpha = 0.25, delta = 0.1, n = 200, paper grid) on a pool of 2000.
TEST_CASE("the paper's setting: rate against the closed form, guarantee, triple coverage") {
  const Pool pool = make_pool(2000, 0.15, 0.35);
  cur::ValidationOptions o;
  o.draws = 2000;
  o.seed = 42;
  cur::ValidationProgress progress;
  o.progress = &progress;
  const cur::GuaranteeValidation v = cur::validate_guarantee(pool.scores, pool.unsafe, o);
  REQUIRE(v.closed_form_rate);
  CHECK(ltt::clopper_pearson_lower(v.certification.count, o.draws, 5e-4) <= *v.closed_form_rate);
  CHECK(*v.closed_form_rate <= ltt::clopper_pearson_upper(v.certification.count, o.draws, 5e-4));
  CHECK(ltt::clopper_pearson_lower(v.false_certification.count, o.draws, 1e-3) <= o.delta);
  CHECK(progress.draws_done.load() == o.draws);

  REQUIRE(v.triple);
  const cur::TripleCoverage& t = *v.triple;
  CHECK(progress.triples_total.load() == t.distinct_counts);
  CHECK(progress.triples_done.load() == t.distinct_counts);
  CHECK(t.mean_r_hat >= 0.0);
  CHECK(t.mean_r_hat <= 1.0);
  CHECK(t.covered <= v.certification.count);
  CHECK(t.max_error_bound <= 1e-9);
  // Every draw's triple is the library's triple for its (m1, k1); the cached rate table gives
  // the same bits as the closed form evaluated afresh.
  const std::int64_t N1 = v.steps.front().N;
  for (std::size_t d = 0; d < 20; ++d) {
    const cur::ValidationDraw& draw = v.outcomes[d];
    REQUIRE(draw.triple);
    const ltt::CertificateTriple direct =
        ltt::certificate_triple(v.pool_size, N1, draw.m1, draw.k1, 200, o.alpha, o.delta);
    CHECK(same_bits(draw.triple->r_hat, direct.r_hat));
    CHECK(same_bits(draw.triple->r_lo, direct.r_lo));
    CHECK(same_bits(draw.triple->conditional_bound, direct.conditional_bound));
  }
  // The definitions, recomputed from the draws.
  std::int64_t certified = 0, violated = 0, covered = 0;
  double sum_bound = 0.0;
  for (const cur::ValidationDraw& d : v.outcomes)
    if (d.returned) {
      ++certified;
      violated += d.violated;
      sum_bound += d.triple->conditional_bound;
    }
  const double realized = static_cast<double>(violated) / static_cast<double>(certified);
  for (const cur::ValidationDraw& d : v.outcomes)
    if (d.returned) covered += d.triple->conditional_bound >= realized;
  CHECK(certified == v.certification.count);
  CHECK(violated == v.false_certification.count);
  CHECK(covered == t.covered);
  CHECK(*t.mean_bound_certified == doctest::Approx(sum_bound / static_cast<double>(certified)));
  CHECK(*t.mean_bound_covers == (*t.mean_bound_certified >= realized));
  MESSAGE("paper setting, N = 2000, N1 = "
          << N1 << ", U1 = " << v.steps.front().U << ": closed form " << *v.closed_form_rate
          << ", simulated " << *v.certification.rate << ", false cert "
          << *v.false_certification.rate << ", Pr[viol | cert] " << realized << "; mean r_hat "
          << t.mean_r_hat << " (certified draws " << *t.mean_r_hat_certified << "), mean bound "
          << *t.mean_bound_certified << ", covered " << t.covered << " / " << certified << ", "
          << t.distinct_counts << " distinct (m1, k1)");
}

TEST_CASE("the same results, bit for bit, with one and two threads") {
  const Pool pool = make_pool(1500, 0.2, 0.4);
  for (const ltt::Procedure procedure : {ltt::Procedure::fixed_sequence, ltt::Procedure::holm}) {
    cur::ValidationOptions o;
    o.draws = 600;
    o.calibration_size = 150;
    o.seed = 99;
    o.procedure = procedure;
    o.threads = 1;
    const cur::GuaranteeValidation one = cur::validate_guarantee(pool.scores, pool.unsafe, o);
    o.threads = 2;
    const cur::GuaranteeValidation two = cur::validate_guarantee(pool.scores, pool.unsafe, o);
    o.threads = 5;  // more threads than cores
    const cur::GuaranteeValidation five = cur::validate_guarantee(pool.scores, pool.unsafe, o);
    CHECK(one == two);
    CHECK(one == five);
    check_same_bits(one.certification, two.certification);
    check_same_bits(one.false_certification, two.false_certification);
    check_same_bits(one.conditional_violation, two.conditional_violation);
    CHECK(one.closed_form_rate.has_value() == (procedure == ltt::Procedure::fixed_sequence));
    CHECK(one.triple.has_value() == (procedure == ltt::Procedure::fixed_sequence));
    if (one.triple && two.triple) {
      CHECK(same_bits(one.triple->mean_r_hat, two.triple->mean_r_hat));
      CHECK(same_bits(one.triple->mean_r_lo, two.triple->mean_r_lo));
      CHECK(same_bits(*one.triple->mean_bound_certified, *two.triple->mean_bound_certified));
    }
    // A different seed gives different draws.
    o.seed = 100;
    CHECK_FALSE(cur::validate_guarantee(pool.scores, pool.unsafe, o).outcomes == one.outcomes);
  }
}

// Each draw is the library's procedure on draw_calibration(N, n, draw.seed): the harness and
// calibrated_selection agree on the certified step, the counts in S_1 and the violation.
TEST_CASE("every draw replays through calibrated_selection") {
  const Pool pool = make_pool(1000, 0.1, 0.45);
  cur::ValidationOptions o;
  o.draws = 200;
  o.calibration_size = 120;
  o.seed = 5;
  o.certificate_triple = false;
  const cur::GuaranteeValidation v = cur::validate_guarantee(pool.scores, pool.unsafe, o);
  std::int64_t certified = 0, violated = 0;
  for (std::size_t d = 0; d < v.outcomes.size(); ++d) {
    const cur::ValidationDraw& draw = v.outcomes[d];
    CHECK(draw.seed == cur::validation_draw_seed(o.seed, static_cast<std::int64_t>(d)));
    const cur::Calibration c =
        cur::label_calibration(cur::draw_calibration(1000, 120, draw.seed), pool.unsafe);
    cur::CalibratedSelectionOptions so;
    so.alpha = o.alpha;
    so.delta = o.delta;
    const cur::CalibratedSelection r = cur::calibrated_selection(pool.scores, c, so);
    CHECK(draw.returned == r.certificate.certified_step);
    CHECK(draw.m1 == r.certificate.steps.front().m);
    CHECK(draw.k1 == r.certificate.steps.front().k);
    if (r.certificate.certified) {
      ++certified;
      std::int64_t bad = 0;
      for (const std::int64_t i : r.selected) bad += pool.unsafe[static_cast<std::size_t>(i)];
      const auto size = static_cast<std::int64_t>(r.selected.size());
      const bool out_of_spec = bad >= ltt::null_boundary(size, o.alpha);
      CHECK(draw.violated == out_of_spec);
      violated += out_of_spec;
    }
  }
  CHECK(certified == v.certification.count);
  CHECK(violated == v.false_certification.count);
  CHECK(certified > 0);
  CHECK(violated > 0);  // the pool's deep steps are out of spec, and the walk reaches them
}

// n = N labels every trajectory: every draw sees m_j = N_j and k_j = U_j, so p_j is 0 for an
// in-spec selection and 1 for a true null, and the walk returns the step before the first
// true null. The closed form is 1 (U_1 < U*_1).
TEST_CASE("a census certifies the same step on every draw") {
  const Pool pool = make_pool(200, 0.1, 0.45);
  cur::ValidationOptions o;
  o.calibration_size = 200;
  o.draws = 50;
  const cur::GuaranteeValidation v = cur::validate_guarantee(pool.scores, pool.unsafe, o);
  std::int64_t expected = -1;
  while (expected + 1 < static_cast<std::int64_t>(v.steps.size()) &&
         !v.steps[static_cast<std::size_t>(expected + 1)].true_null)
    ++expected;
  REQUIRE(expected >= 0);
  REQUIRE(expected + 1 <
          static_cast<std::int64_t>(v.steps.size()));  // some deep step is a true null
  CHECK(v.steps[static_cast<std::size_t>(expected)].returned == o.draws);
  CHECK(v.certification.count == o.draws);
  CHECK(v.false_certification.count == 0);
  CHECK(*v.closed_form_rate == 1.0);
  CHECK(*v.conditional_violation.rate == 0.0);
  CHECK(v.triple->covered == o.draws);
  for (const cur::ValidationDraw& d : v.outcomes) {
    CHECK(d.m1 == v.steps.front().N);
    CHECK(d.k1 == v.steps.front().U);
  }
  // Holm at delta / J still rejects p = 0: the deepest in-spec step, possibly past a true null.
  o.procedure = ltt::Procedure::holm;
  const cur::GuaranteeValidation h = cur::validate_guarantee(pool.scores, pool.unsafe, o);
  CHECK(h.certification.count == o.draws);
  CHECK(h.false_certification.count == 0);
}

TEST_CASE("a pool that never certifies: rates 0, conditional quantities undefined") {
  const Pool pool = make_pool(1000, 0.9, 0.95);
  cur::ValidationOptions o;
  o.draws = 100;
  const cur::GuaranteeValidation v = cur::validate_guarantee(pool.scores, pool.unsafe, o);
  CHECK(v.certification.count == 0);
  CHECK(v.returned_none == o.draws);
  CHECK(v.conditional_violation.trials == 0);
  CHECK_FALSE(v.conditional_violation.rate);
  CHECK(v.conditional_violation.lower == 0.0);
  CHECK(v.conditional_violation.upper == 1.0);
  REQUIRE(v.triple);
  CHECK_FALSE(v.triple->mean_r_hat_certified);
  CHECK_FALSE(v.triple->mean_bound_certified);
  CHECK_FALSE(v.triple->mean_bound_covers);
  CHECK_FALSE(v.triple->covered_fraction);
  CHECK(v.purity_margin < 0.0);
}

TEST_CASE("validate_guarantee: invalid arguments name the parameter") {
  const Pool pool = make_pool(100, 0.1, 0.3);
  const std::vector<double> scores = pool.scores;
  const std::vector<std::uint8_t> unsafe = pool.unsafe;
  const auto with = [&](auto change) {
    return [&, change] {
      cur::ValidationOptions o;
      o.calibration_size = 20;
      o.draws = 5;
      change(o);
      (void)cur::validate_guarantee(scores, unsafe, o);
    };
  };
  check_throws_naming([] { (void)cur::validate_guarantee({}, {}); }, "scores.size()");
  check_throws_naming(
      [&] {
        std::vector<double> s = scores;
        s[3] = std::numeric_limits<double>::quiet_NaN();
        (void)cur::validate_guarantee(s, unsafe);
      },
      "scores[3]");
  check_throws_naming([&] { (void)cur::validate_guarantee(scores, std::span(unsafe).first(99)); },
                      "unsafe.size()");
  check_throws_naming(
      [&] {
        std::vector<std::uint8_t> u = unsafe;
        u[7] = 2;
        (void)cur::validate_guarantee(scores, u);
      },
      "unsafe[7]");
  check_throws_naming(with([](cur::ValidationOptions& o) { o.alpha = 0.0; }), "options.alpha");
  check_throws_naming(with([](cur::ValidationOptions& o) { o.alpha = std::nan(""); }),
                      "options.alpha");
  check_throws_naming(with([](cur::ValidationOptions& o) { o.delta = 1.0; }), "options.delta");
  check_throws_naming(with([](cur::ValidationOptions& o) { o.confidence = 1.0; }),
                      "options.confidence");
  check_throws_naming(with([](cur::ValidationOptions& o) { o.calibration_size = 0; }),
                      "options.calibration_size");
  check_throws_naming(with([](cur::ValidationOptions& o) { o.calibration_size = 101; }),
                      "options.calibration_size");
  check_throws_naming(with([](cur::ValidationOptions& o) { o.draws = 0; }), "options.draws");
  check_throws_naming(with([](cur::ValidationOptions& o) { o.threads = -1; }), "options.threads");
  check_throws_naming(
      with([](cur::ValidationOptions& o) { o.procedure = static_cast<ltt::Procedure>(7); }),
      "options.procedure");
  check_throws_naming(with([](cur::ValidationOptions& o) {
                        o.quantiles = {0.5, 0.6};
                      }),
                      "quantiles[1]");
  check_throws_naming(with([](cur::ValidationOptions& o) { o.quantiles = {}; }),
                      "quantiles.size()");
}

TEST_CASE("validate_sequential: false certification <= delta under each stop rule, labels used") {
  // every selection 1-2 points over target (margin in [-0.02, 0)): every certificate is false
  const Pool pool = make_pool(1000, 0.265, 0.27);
  cur::ValidationOptions options;
  options.draws = ltt_test::monte_carlo_draws(1500);
  options.seed = 16;
  options.threads = 1;
  for (const char* rule : {"cap", "target:0", "early-refusal", "stall:20", "forecast"}) {
    cur::SequentialSelectionOptions walk;
    cur::apply_stop_rule(rule, walk);
    const cur::SequentialValidation v =
        cur::validate_sequential(pool.scores, pool.unsafe, options, walk);
    REQUIRE(v.purity_margin < 0.0);
    REQUIRE(v.purity_margin >= -0.02);
    CHECK(v.false_certification.count == v.certification.count);
    CHECK(v.false_certification.lower <= options.delta);  // 95% two-sided interval
    MESSAGE("--stop " << std::string(rule) << ": false certification "
                      << *v.false_certification.rate << " [" << v.false_certification.lower << ", "
                      << v.false_certification.upper << "], labels mean " << v.labels_used.mean
                      << ", median " << v.labels_used.median << ", p90 " << v.labels_used.p90
                      << ", max " << v.labels_used.max);
    // the statistics from the outcomes, and each run replayed alone
    std::vector<std::int64_t> used;
    std::int64_t stopped = 0;
    for (const auto& o : v.outcomes) used.push_back(o.labels_used);
    for (const std::int64_t n : v.stopped_by) stopped += n;
    CHECK(stopped == options.draws);
    std::sort(used.begin(), used.end());
    CHECK(v.labels_used.max == used.back());
    // an even count of draws (1500, or 100 under the sanitizers): the median is the mean of the
    // two middle runs, p90 the ceil(0.9 draws)-th smallest (1500: used[749], used[750], used[1349])
    const auto draws = static_cast<std::size_t>(options.draws);
    REQUIRE(draws % 2 == 0);
    CHECK(v.labels_used.median == 0.5 * static_cast<double>(used[draws / 2 - 1] + used[draws / 2]));
    CHECK(v.labels_used.p90 == used[(9 * draws + 9) / 10 - 1]);
    CHECK(v.labels_used.max <= options.calibration_size);
    walk.label_cap = options.calibration_size;
    const auto replay =
        cur::sequential_selection(pool.scores, pool.unsafe, v.outcomes[7].seed, walk);
    CHECK(replay.labels_used == v.outcomes[7].labels_used);
    CHECK(replay.certified_step == v.outcomes[7].returned);
  }
  // the same numbers whatever the thread count
  options.draws = 200;
  const auto one = cur::validate_sequential(pool.scores, pool.unsafe, options);
  options.threads = 2;
  CHECK(cur::validate_sequential(pool.scores, pool.unsafe, options) == one);
  options.calibration_size = 1001;
  check_throws_naming([&] { cur::validate_sequential(pool.scores, pool.unsafe, options); },
                      "options.calibration_size");
}
