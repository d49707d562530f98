// Tests for reference_pipeline/pipeline/report.hpp: the claims follow the numbers they cite,
// and the report and figures carry every method and seed.

#include <pipeline/report.hpp>

#include <doctest/doctest.h>

#include "test_text.hpp"

#include <filesystem>
#include <string>

namespace pl = ltt::pipeline;
using ltt_pipeline_test::count;

namespace {

// A method's cost over three seeds: mean and its interval [low, high].
pl::MethodSummary summary(std::string name, double cost, double low, double high,
                          std::int64_t seeds = 3) {
  pl::MethodSummary m;
  m.name = std::move(name);
  m.cost = {cost, low, high, seeds};
  m.reward = {1, 1, 1, seeds};
  m.within_budget = cost <= 5;
  return m;
}

pl::MethodSummary summary(std::string name, double cost) {
  return summary(std::move(name), cost, cost, cost);
}

const pl::Claim* claim(const std::vector<pl::Claim>& claims, std::string_view starts) {
  for (const pl::Claim& c : claims)
    if (c.statement.starts_with(starts)) return &c;
  return nullptr;
}

}  // namespace

using V = pl::Verdict;

TEST_CASE("check_claims: each claim is decided by the numbers it cites") {
  pl::PipelineResult r;
  r.task = pl::task_named("point-goal");
  r.summary = {summary("BC-All", 12), summary("BC-Safe", 4), summary("Calibrated", 6)};
  r.seeds.resize(2);
  for (pl::SeedResult& s : r.seeds) s.purity_margin = -0.1;
  std::vector<pl::Claim> claims = pl::check_claims(r);
  REQUIRE(claim(claims, "BC-All exceeds") != nullptr);
  CHECK(claim(claims, "BC-All exceeds")->verdict == V::holds);
  CHECK(claim(claims, "the calibrated clone is within the budget")->verdict == V::fails);
  CHECK(claim(claims, "the calibrated clone is within budget exactly")->verdict == V::fails);
  CHECK(claim(claims, "negative purity margin")->verdict == V::holds);  // no seed certified
  CHECK(claim(claims, "the gated") == nullptr);  // no certified seed to check it on
  r.certified_seeds = 1;
  claims = pl::check_claims(r);
  CHECK(claim(claims, "negative purity margin")->verdict == V::fails);
  r.summary = {summary("BC-All", 5), summary("BC-Safe", 4), summary("Calibrated", 5)};
  for (pl::SeedResult& s : r.seeds) s.purity_margin = 0.1;
  claims = pl::check_claims(r);
  CHECK(claim(claims, "BC-All exceeds")->verdict == V::fails);  // at the budget is within it
  CHECK(claim(claims, "the calibrated clone is within the budget")->verdict == V::holds);
  CHECK(claim(claims, "the calibrated clone is within budget exactly")->verdict == V::holds);
  CHECK(claim(claims, "positive purity margin")->verdict == V::holds);
}

TEST_CASE("check_claims: a cost claim is judged on the interval over seeds, never one seed") {
  pl::PipelineResult r;
  r.task = pl::task_named("point-goal");  // budget 5
  // the mean is over the budget but the interval straddles it: undetermined, not "exceeds"
  r.summary = {summary("BC-All", 6, 4, 8), summary("BC-Safe", 3, 2, 4),
               summary("Calibrated", 4.5, 4, 5.5)};
  std::vector<pl::Claim> claims = pl::check_claims(r);
  CHECK(claim(claims, "BC-All exceeds")->verdict == V::undetermined);
  CHECK(claim(claims, "the calibrated clone is within the budget")->verdict == V::undetermined);
  CHECK(claim(claims, "the calibrated clone is within budget exactly")->verdict == V::undetermined);
  // lower end above the budget: exceeds; upper end at the budget: within
  r.summary = {summary("BC-All", 9, 5.5, 12), summary("BC-Safe", 3, 2, 4),
               summary("Calibrated", 4, 3, 5)};
  claims = pl::check_claims(r);
  CHECK(claim(claims, "BC-All exceeds")->verdict == V::holds);
  CHECK(claim(claims, "the calibrated clone is within the budget")->verdict == V::holds);
  CHECK(claim(claims, "the calibrated clone is within budget exactly")->verdict == V::holds);
  // one seed: no interval, nothing decided about the clones' costs
  r.summary = {summary("BC-All", 30, 30, 30, 1), summary("BC-Safe", 1, 1, 1, 1),
               summary("Calibrated", 1, 1, 1, 1)};
  claims = pl::check_claims(r);
  CHECK(claim(claims, "BC-All exceeds")->verdict == V::undetermined);
  CHECK(claim(claims, "the calibrated clone is within the budget")->verdict == V::undetermined);
  CHECK(pl::verdict_text(V::undetermined) == "undetermined at this number of seeds");
}

TEST_CASE("report_markdown and the figures: every method and seed, well-formed SVG") {
  pl::PipelineOptions o = pl::preset_options("tiny", "car-run");
  o.scratch = std::filesystem::path(LTT_PIPELINE_SCRATCH) / "report";
  o.seeds = {1, 2};
  const pl::PipelineResult r = pl::run_pipeline(o);
  const std::string md = pl::report_markdown(r);
  for (const std::string& name : pl::method_names()) {
    CAPTURE(name);
    // the methods table, the first seed's policy certificates, the pooled ones
    CHECK(count(md, "| " + name + " |") == 3);
  }
  CHECK(count(md, "### Seed ") == 2);
  for (const pl::Claim& c : pl::check_claims(r)) CHECK(count(md, c.statement) == 1);
  const std::string summary = pl::run_summary(r);
  CHECK(count(summary, "seed 1: ") == 1);
  CHECK(count(summary, "seed 2: ") == 1);
  CHECK(count(md, "cost_histogram.svg") == 1);
  CHECK(count(md, "purity_curves.svg") == 1);
  // the fidelity section: each seed's calibrated selection, its unsafe members counted
  CHECK(count(md, "- seed 1: the calibrated selection") == 1);
  CHECK(count(md, "- seed 2: the calibrated selection") == 1);
  CHECK(count(md, "z-scored per column") == 1);  // the normalization used is stated
  for (const std::string& svg :
       {pl::score_cost_svg(r), pl::certification_rate_svg(r), pl::methods_svg(r),
        pl::cost_histogram_svg(r), pl::purity_curves_svg(r)}) {
    CHECK(count(svg, "<svg") == count(svg, "</svg>"));
    CHECK(count(svg, "nan") == 0);
    CHECK(count(svg, "inf") == 0);
  }
  // the score figure draws every trajectory once and every calibration label once more
  const std::string scores = pl::score_cost_svg(r);
  CHECK(count(scores, "<circle") == static_cast<std::size_t>(r.pool_episodes + o.calibration_size) +
                                        3);  // + one legend marker per series
}

TEST_CASE("cost_split_table: a row per method cloned, only where the checkpoints are known") {
  pl::PipelineResult r;
  CHECK(pl::cost_split_table(r).empty());
  pl::MethodSummary cloned = summary("BC-Safe", 6.0, 5.0, 7.0);
  cloned.data_cost = {2.0, 2.0, 2.0, 3};
  cloned.policy_data_cost = pl::Interval{3.5, 3.25, 3.75, 3};
  cloned.selection_luck = pl::Interval{1.5, 1.25, 1.75, 3};
  cloned.cloner_share = pl::Interval{2.5, 1.5, 3.5, 3};
  pl::MethodSummary unknown = summary("Return-weighted", 0);
  unknown.cost.samples = 0;
  r.summary = {unknown};
  CHECK(pl::cost_split_table(r).empty());
  r.summary = {cloned, unknown};
  const std::string table = pl::cost_split_table(r);
  CHECK(count(table, "| BC-Safe | 6.00 [5.00, 7.00] | 2.00 [2.00, 2.00] | 3.50 [3.25, 3.75] | "
                     "1.50 [1.25, 1.75] | 2.50 [1.50, 3.50] |") == 1);
  CHECK(count(table, "Return-weighted") == 0);
}

TEST_CASE("cost_histogram_svg: well-formed, with the budget line") {
  pl::PipelineResult r;
  r.task = pl::task_named("point-goal");  // budget 5
  r.pool_cost = {0, 0, 1, 5, 5, 5.5, 12, 40};
  r.pool_episodes = 8;
  r.pool_unsafe = 3;
  const std::string svg = pl::cost_histogram_svg(r);
  CHECK(count(svg, "<svg") == count(svg, "</svg>"));
  CHECK(count(svg, "budget 5") == 1);
  CHECK(count(svg, "nan") == 0);
}
