// Tests for reference_pipeline/pipeline/score_quality.hpp: the purity curve and margin of a
// pool worked by hand (ties at a threshold, a merged quantile), the pairs' disagreement with
// the episode-level cost order on constructed pairs, the stage attribution's four cases, and
// on tiny pipeline runs the preference scorer's numbers equal, bit for bit, the seed's own
// oracle diagnostics (the same code path), and a pool built to refuse is the data's.

#include <pipeline/pipeline.hpp>
#include <pipeline/report.hpp>
#include <pipeline/score_quality.hpp>

#include <doctest/doctest.h>

#include <ltt/certification_rate.hpp>

#include "../support/throws.hpp"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace pl = ltt::pipeline;
namespace cur = ltt::curation;
using Bits = std::vector<std::uint8_t>;

namespace {

// Ten trajectories; three tie at 0.7, the first grid step's threshold.
const std::vector<double> hand_scores{0.9, 0.8, 0.7, 0.7, 0.7, 0.5, 0.4, 0.3, 0.2, 0.1};
const Bits hand_unsafe{0, 1, 0, 1, 0, 1, 0, 1, 1, 0};

pl::ScoreQualityOptions hand_options() {
  pl::ScoreQualityOptions o;
  o.alpha = 0.45;
  o.delta = 0.1;
  o.quantiles = {0.8, 0.75, 0.5, 0.2};
  o.calibration_size = 4;
  return o;
}

}  // namespace

TEST_CASE("purity_curve: by hand, ties at a threshold kept and a merged quantile tested once") {
  const pl::ScoreQualityOptions o = hand_options();
  // Ranks r = floor(q (N - 1)) = floor(9 q): 7, 6, 4, 1 -> lambda 0.7, 0.7, 0.5, 0.2. q = 0.75
  // repeats 0.7 and is merged. S(0.7) holds the three tied 0.7s: N_1 = 5 (not 10 - 7 = 3),
  // U_1 = 2; S(0.5): 6, 3; S(0.2): 9, 5.
  const pl::PurityCurve c = pl::purity_curve(hand_scores, hand_unsafe, o.alpha, o.quantiles);
  REQUIRE(c.steps.size() == 3);
  const std::vector<double> q{0.8, 0.5, 0.2};
  const std::vector<std::int64_t> N{5, 6, 9}, U{2, 3, 5};
  for (std::size_t j = 0; j < 3; ++j) {
    CAPTURE(j);
    CHECK(c.steps[j].quantile == q[j]);
    CHECK(c.steps[j].N == N[j]);
    CHECK(c.steps[j].U == U[j]);
    CHECK(c.steps[j].unsafe_fraction == static_cast<double>(U[j]) / static_cast<double>(N[j]));
  }
  // min_j U_j / N_j = 2/5 (the first step); margin alpha - 2/5.
  CHECK(c.purity_margin == 0.45 - 2.0 / 5.0);
  CHECK(c.first_step_unsafe_fraction == 2.0 / 5.0);
  ltt_test::check_throws_naming(
      [&] {
        (void)pl::purity_curve(hand_scores, Bits{0, 1}, o.alpha, o.quantiles);
      },
      "unsafe.size()");
}

TEST_CASE("scorer_quality: the closed-form rate on the first step, the V-filter's cut by hand") {
  const pl::ScoreQualityOptions o = hand_options();
  const pl::ScorerQuality q =
      pl::scorer_quality(pl::Scorer::labels_only, hand_scores, hand_unsafe, 4, o);
  CHECK(q.scorer == pl::Scorer::labels_only);
  CHECK(q.certification_rate == ltt::certification_rate(10, 5, 2, 4, 0.45, 0.1));
  // K = 4: the 4th largest score is 0.7, and its ties are kept: {0.9, 0.8, 0.7, 0.7, 0.7},
  // 2 unsafe of 5.
  REQUIRE(q.unsafe_fraction_at_v_filter_fraction.has_value());
  CHECK(*q.unsafe_fraction_at_v_filter_fraction == 2.0 / 5.0);
  // K = 2: {0.9, 0.8}, 1 of 2; K = 0: the V-filter keeps nothing.
  CHECK(pl::scorer_quality(pl::Scorer::labels_only, hand_scores, hand_unsafe, 2, o)
            .unsafe_fraction_at_v_filter_fraction == 0.5);
  CHECK_FALSE(pl::scorer_quality(pl::Scorer::labels_only, hand_scores, hand_unsafe, 0, o)
                  .unsafe_fraction_at_v_filter_fraction.has_value());
}

TEST_CASE("pair_statistics: disagreements with the parents' cost order, tied parents left out") {
  const std::vector<double> episodic_cost{1, 5, 5, 9};
  const auto pair = [](std::int64_t a, std::int64_t b, bool first_preferred) {
    cur::PreferencePair p;
    p.first.trajectory = a;
    p.second.trajectory = b;
    p.first_preferred = first_preferred;
    return p;
  };
  cur::PreferencePairs pairs;
  pairs.attempts = 8;
  pairs.ties_skipped = 3;
  pairs.pairs = {
      pair(0, 3, true),   // the cheaper parent's segment preferred: agrees
      pair(3, 0, true),   // the costlier parent's preferred: disagrees
      pair(1, 2, true),   // parents of equal cost (5, 5): left out
      pair(2, 0, false),  // prefers trajectory 0, the cheaper: agrees
      pair(1, 3, false),  // prefers trajectory 3 (9) over 1 (5): disagrees
  };
  const pl::PairStatistics s = pl::pair_statistics(pairs, episodic_cost);
  CHECK(s.attempts == 8);
  CHECK(s.ties == 3);
  CHECK(s.tie_fraction == 3.0 / 8.0);
  CHECK(s.labeled == 5);
  CHECK(s.parents_tied == 1);
  CHECK(s.disagreements == 2);
  CHECK(s.disagreement_fraction == 2.0 / 4.0);
  // Only tied parents: no fraction; a parent outside the pool is refused.
  cur::PreferencePairs tied;
  tied.pairs = {pair(1, 2, true)};
  CHECK_FALSE(pl::pair_statistics(tied, episodic_cost).disagreement_fraction.has_value());
  CHECK_FALSE(pl::pair_statistics(tied, episodic_cost).tie_fraction.has_value());
  tied.pairs = {pair(1, 4, true)};
  ltt_test::check_throws_naming([&] { (void)pl::pair_statistics(tied, episodic_cost); }, "pairs");
}

namespace {

// Five scorers whose only differences are their margins; the first step N_1 = 100 of
// N = 1000 with U_1 = 10 (enough for a label budget).
std::vector<pl::ScorerQuality> scorers(double preference, double labels_only, double oracle) {
  std::vector<pl::ScorerQuality> out;
  const double margins[] = {preference, labels_only, oracle, -0.3, -0.3};
  for (std::size_t s = 0; s < pl::scorer_count; ++s) {
    pl::ScorerQuality q;
    q.scorer = static_cast<pl::Scorer>(s);
    q.curve.steps = {{0.85, 100, 10, 0.1}};
    q.curve.purity_margin = margins[s];
    q.curve.first_step_unsafe_fraction = 0.1;
    q.certification_rate = 0.25;
    out.push_back(q);
  }
  return out;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("attribute_stage: the data's, the scorer's, the certificate's, or certified") {
  const pl::ScoreQualityOptions o;  // alpha 0.25, delta 0.1, n = 200
  using S = pl::RefusalStage;

  const pl::StageAttribution certified = pl::attribute_stage(scorers(0.1, 0.2, 0.3), true, 1000, o);
  CHECK(certified.stage == S::certified);
  CHECK(pl::refusal_stage_name(certified.stage) == "certified");
  CHECK_MESSAGE(has(certified.text, "purity margin is +0.100"), certified.text);
  CHECK(certified.label_budgets.empty());

  // The preference score reaches alpha; the draw did not certify: a power limit.
  const pl::StageAttribution power = pl::attribute_stage(scorers(0.1, -0.2, 0.3), false, 1000, o);
  CHECK(power.stage == S::certificate);
  CHECK_MESSAGE(has(power.text, "power limit"), power.text);
  CHECK_MESSAGE(has(power.text, "rate 0.250 at n = 200"), power.text);
  REQUIRE(power.label_budgets.size() == 2);
  CHECK(power.label_budgets[0].target_rate == 0.5);
  CHECK(power.label_budgets[0].n == ltt::label_budget(1000, 100, 10, 0.25, 0.1, 0.5));
  CHECK(power.label_budgets[1].n == ltt::label_budget(1000, 100, 10, 0.25, 0.1, 0.8));
  CHECK(power.label_budgets[0].n.has_value());
  CHECK_MESSAGE(has(power.text, "rate 0.5 needs n = " + std::to_string(*power.label_budgets[0].n)),
                power.text);

  // The oracle reaches alpha, the preference score does not: the scorer's.
  const pl::StageAttribution scorer =
      pl::attribute_stage(scorers(-0.02, -0.1, 0.2), false, 1000, o);
  CHECK(scorer.stage == S::scorer);
  CHECK_MESSAGE(has(scorer.text, "the oracle reaches alpha"), scorer.text);
  CHECK_MESSAGE(has(scorer.text, "preference score does not (-0.020)"), scorer.text);
  // ...or labels-only alone, or both (a margin of exactly 0 does not reach alpha).
  CHECK(has(pl::attribute_stage(scorers(0, 0.05, -0.1), false, 1000, o).text,
            "the labels-only reaches alpha"));
  CHECK(has(pl::attribute_stage(scorers(0, 0.05, 0.1), false, 1000, o).text,
            "the oracle and labels-only reach alpha"));

  // No scorer reaches alpha: the data's.
  const pl::StageAttribution data = pl::attribute_stage(scorers(-0.02, -0.3, 0), false, 1000, o);
  CHECK(data.stage == S::data);
  CHECK_MESSAGE(has(data.text, "no scorer reaches alpha on this pool"), data.text);

  std::vector<pl::ScorerQuality> four = scorers(0, 0, 0);
  four.pop_back();
  ltt_test::check_throws_naming([&] { (void)pl::attribute_stage(four, false, 1000, o); },
                                "scorers");
}

TEST_CASE("score_quality: the five scorers of a constructed pool, and the Spearman lines") {
  // Cost rises with position and return falls with it, so the return ranks as the oracle does;
  // budget 4.5: trajectories 5..9 are unsafe.
  const std::vector<double> cost{0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  const std::vector<double> ret{9, 8, 7, 6, 5, 4, 3, 2, 1, 0};
  const Bits unsafe{0, 0, 0, 0, 0, 1, 1, 1, 1, 1};
  const std::vector<double> g{1, 2, 3, 4, 5, 6, 7, 8, 9, 10};  // ranks the unsafe first
  cur::PreferencePairs pairs;
  pl::ScoreQualityInputs in;
  in.preference_scores = g;
  in.labels_only_scores = ret;
  in.episodic_cost = cost;
  in.episodic_return = ret;
  in.unsafe = unsafe;
  in.pairs = &pairs;
  in.v_filter_fraction = 0.5;
  in.v_filter_count = 5;
  pl::ScoreQualityOptions o;
  o.quantiles = {0.5};
  o.calibration_size = 4;
  const pl::ScoreQuality q = pl::score_quality(in, o);
  CHECK(q.spearman_score_cost == 1.0);
  CHECK(q.spearman_score_return == -1.0);
  CHECK(q.spearman_cost_return == -1.0);
  REQUIRE(q.scorers.size() == pl::scorer_count);
  // q = 0.5: r = 4, the top 6 of each ranking.
  const auto first = [&](pl::Scorer s) {
    return q.scorers[static_cast<std::size_t>(s)].curve.steps[0];
  };
  CHECK(first(pl::Scorer::preference).U == 5);  // g's top 6: positions 4..9
  CHECK(first(pl::Scorer::oracle).U == 1);      // -cost's top 6: positions 0..5
  CHECK(first(pl::Scorer::labels_only).U == 1);
  CHECK(first(pl::Scorer::minus_return).U == 5);
  CHECK(first(pl::Scorer::episodic_return).U == 1);
  CHECK(q.scorers[static_cast<std::size_t>(pl::Scorer::oracle)]
            .unsafe_fraction_at_v_filter_fraction == 0.0);
  // Nothing certified, the preference margin negative, the oracle's positive: the scorer's.
  CHECK(q.stage.stage == pl::RefusalStage::scorer);
  in.certified = true;
  CHECK(pl::score_quality(in, o).stage.stage == pl::RefusalStage::certified);
  const std::vector<double> short_cost{1, 2};
  in.episodic_cost = short_cost;
  ltt_test::check_throws_naming([&] { (void)pl::score_quality(in, o); }, "inputs.episodic_cost");
}

namespace {

pl::PipelineOptions tiny_score_quality(const std::string& task) {
  pl::PipelineOptions o = pl::preset_options("tiny", task);
  o.scratch = std::filesystem::path(LTT_PIPELINE_SCRATCH) / ("score-quality-" + task);
  o.seeds = {1, 2};
  return o;
}

}  // namespace

TEST_CASE("run_pipeline: the preference scorer is the seed's oracle diagnostics, bit for bit") {
  const pl::PipelineResult r = pl::run_pipeline(tiny_score_quality("point-goal"));
  for (const pl::SeedResult& s : r.seeds) {
    CAPTURE(s.seed);
    const pl::ScoreQuality& q = s.score_quality;
    REQUIRE(q.scorers.size() == pl::scorer_count);
    const pl::ScorerQuality& pref = q.scorers[static_cast<std::size_t>(pl::Scorer::preference)];
    REQUIRE(pref.curve.steps.size() == s.grid.size());
    for (std::size_t j = 0; j < s.grid.size(); ++j) {
      CHECK(pref.curve.steps[j].quantile == s.grid[j].quantile);
      CHECK(pref.curve.steps[j].N == s.grid[j].N);
      CHECK(pref.curve.steps[j].U == s.grid[j].U);
      CHECK(pref.curve.steps[j].unsafe_fraction == s.grid[j].unsafe_fraction);
    }
    CHECK(pref.curve.purity_margin == s.purity_margin);
    CHECK(pref.certification_rate == s.first_step_rate);
    CHECK(q.spearman_score_cost == s.score_cost_spearman);
    // The V-filter and Labels-only methods are these cuts.
    const auto method = [&](pl::Method m) { return s.methods[static_cast<std::size_t>(m)]; };
    CHECK(q.v_filter_count == s.v_filter.count);
    CHECK(q.v_filter_fraction == s.v_filter.safe_fraction);
    if (s.v_filter.count > 0) {
      CHECK(pref.unsafe_fraction_at_v_filter_fraction ==
            method(pl::Method::v_filter).selection_unsafe_fraction);
      CHECK(q.scorers[static_cast<std::size_t>(pl::Scorer::labels_only)]
                .unsafe_fraction_at_v_filter_fraction ==
            method(pl::Method::labels_only).selection_unsafe_fraction);
    }
    CHECK(q.pairs.attempts == s.pair_attempts);
    CHECK(q.pairs.ties == s.pair_ties);
    CHECK(q.pairs.labeled == s.pairs);
    CHECK((q.stage.stage == pl::RefusalStage::certified) == s.calibrated.certificate.certified);
    CHECK_FALSE(q.stage.text.empty());
  }
  CHECK(r.seeds[0].score_quality.spearman_cost_return ==
        r.seeds[1].score_quality.spearman_cost_return);  // the pool's, not the seed's
  CHECK(pl::report_json(r).find("\"score_quality\":{\"spearman_score_cost\":") !=
        std::string::npos);
  const std::string md = pl::report_markdown(r);
  CHECK(md.find("## Score quality: which stage a refusal is") != std::string::npos);
  CHECK(md.find("![purity curves](purity_curves.svg)") != std::string::npos);
  for (const pl::SeedResult& s : r.seeds)
    CHECK(md.find(s.score_quality.stage.text) != std::string::npos);
  const std::string svg = pl::purity_curves_svg(r);
  for (std::size_t k = 0; k < pl::scorer_count; ++k)
    CHECK(svg.find(std::string(pl::scorer_name(static_cast<pl::Scorer>(k)))) != std::string::npos);
  CHECK(svg.find("alpha = 0.25") != std::string::npos);
}

TEST_CASE("run_pipeline on point-goal-reckless: a refusal is the data's") {
  // Built with almost no safe trajectory (docs/pipeline.md): even the oracle's top selection is
  // more than alpha unsafe.
  pl::PipelineOptions o = tiny_score_quality("point-goal-reckless");
  o.seeds = {1};
  const pl::PipelineResult r = pl::run_pipeline(o);
  const pl::SeedResult& s = r.seeds.front();
  REQUIRE_FALSE(s.calibrated.certificate.certified);
  CHECK(s.score_quality.scorers[static_cast<std::size_t>(pl::Scorer::oracle)].curve.purity_margin <
        0);
  CHECK(s.score_quality.stage.stage == pl::RefusalStage::data);
}
