// The guarantee validation at several budgets (curation/several_budgets_validation.hpp): with one
// budget it is validate_guarantee's fixed-sequence run draw for draw; each draw's returned steps
// are what several_budgets_selection certifies on that draw's labels; the realized rate of
// certifying every budget agrees with the closed form; the result does not depend on the thread
// count; bad input names the parameter.

#include <doctest/doctest.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include <curation/cost_bands.hpp>
#include <curation/several_budgets_selection.hpp>
#include <curation/several_budgets_validation.hpp>
#include <curation/trajectory_pool.hpp>
#include <curation/validation.hpp>
#include <ltt/bounds.hpp>

#include "../support/monte_carlo.hpp"

namespace cur = ltt::curation;

namespace {

struct CostPool {
  std::vector<double> scores;
  std::vector<double> costs;
};

// Higher score, lower cost: the cost is exponential with a mean that falls with the score.
CostPool cost_pool(std::int64_t N, std::uint64_t seed, double scale) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  CostPool p;
  for (std::int64_t i = 0; i < N; ++i) {
    const double g = u(rng);
    p.scores.push_back(g);
    p.costs.push_back(-std::log1p(-u(rng)) * scale * (1.2 - g));
  }
  return p;
}

}  // namespace

TEST_CASE("several budgets validation: one budget is validate_guarantee's walk, draw for draw") {
  const CostPool pool = cost_pool(1500, 3, 30.0);
  const double budget = 25.0;
  for (const ltt::BudgetProcedure procedure :
       {ltt::BudgetProcedure::one_threshold, ltt::BudgetProcedure::one_threshold_per_budget}) {
    cur::SeveralBudgetsValidationOptions o;
    o.alphas = {0.2};
    o.procedure = procedure;
    o.draws = ltt_test::monte_carlo_draws(400);
    o.seed = 17;
    const std::vector<double> budgets{budget};
    const cur::SeveralBudgetsValidation v =
        cur::validate_several_budgets(pool.scores, pool.costs, budgets, o);

    cur::ValidationOptions one;
    one.alpha = 0.2;
    one.draws = o.draws;
    one.seed = 17;
    one.certificate_triple = false;
    const cur::GuaranteeValidation g =
        cur::validate_guarantee(pool.scores, cur::unsafe_bits(pool.costs, budget), one);
    REQUIRE(v.outcomes.size() == g.outcomes.size());
    for (std::size_t d = 0; d < g.outcomes.size(); ++d) {
      CHECK(v.outcomes[d].seed == g.outcomes[d].seed);
      CHECK(v.outcomes[d].returned.front() == g.outcomes[d].returned);
      CHECK(v.outcomes[d].violated == g.outcomes[d].violated);
    }
    const cur::BudgetValidation& b = v.budgets.front();
    CHECK(b.level == 0.1);
    CHECK(b.steps == g.steps);
    CHECK(b.returned_none == g.returned_none);
    CHECK(b.certification == g.certification);
    CHECK(b.false_certification == g.false_certification);
    CHECK(v.every_certified == g.certification);
    CHECK(v.simultaneous_false_certification == g.false_certification);
    CHECK(std::abs(v.closed_form_rate - *g.closed_form_rate) <= 1e-12);
    CHECK(std::abs(b.closed_form_rate - *g.closed_form_rate) <= 1e-12);
  }
}

TEST_CASE(
    "several budgets validation: each draw returns what several_budgets_selection certifies") {
  const CostPool pool = cost_pool(1200, 5, 40.0);
  const std::vector<double> budgets{10.0, 25.0, 60.0};
  for (const ltt::BudgetProcedure procedure :
       {ltt::BudgetProcedure::one_threshold, ltt::BudgetProcedure::one_threshold_per_budget}) {
    cur::SeveralBudgetsValidationOptions o;
    o.alphas = {0.3, 0.2, 0.1};
    o.procedure = procedure;
    o.draws = 60;
    o.seed = 2;
    const cur::SeveralBudgetsValidation v =
        cur::validate_several_budgets(pool.scores, pool.costs, budgets, o);
    cur::SeveralBudgetsOptions s;
    s.alphas = o.alphas;
    s.procedure = procedure;
    std::int64_t every = 0, violated = 0;
    for (const cur::SeveralBudgetsDraw& d : v.outcomes) {
      const cur::BandedCalibration banded = cur::label_banded_calibration(
          cur::draw_calibration(v.pool_size, v.calibration_size, d.seed), pool.costs, budgets);
      const cur::SeveralBudgetsSelection r = cur::several_budgets_selection(pool.scores, banded, s);
      bool all = true, some_violated = false;
      for (std::size_t k = 0; k < budgets.size(); ++k) {
        const cur::Certificate& c = r.budgets[k].certificate;
        CHECK(d.returned[k] == c.certified_step);
        all = all && c.certified;
        if (c.certified)
          some_violated = some_violated ||
                          v.budgets[k].steps[static_cast<std::size_t>(*c.certified_step)].true_null;
      }
      CHECK(d.violated == some_violated);
      every += all;
      violated += some_violated;
    }
    CHECK(v.every_certified.count == every);
    CHECK(v.simultaneous_false_certification.count == violated);
    // The simultaneous error holds each budget's own and at most their sum.
    std::int64_t sum = 0;
    for (const cur::BudgetValidation& b : v.budgets) {
      CHECK(b.false_certification.count <= violated);
      sum += b.false_certification.count;
    }
    CHECK(violated <= sum);
  }
}

TEST_CASE("several budgets validation: realized joint rate agrees with the closed form") {
  const CostPool pool = cost_pool(2000, 9, 15.0);
  const std::vector<double> budgets{15.0, 30.0, 60.0};
  for (const ltt::BudgetProcedure procedure :
       {ltt::BudgetProcedure::one_threshold, ltt::BudgetProcedure::one_threshold_per_budget}) {
    cur::SeveralBudgetsValidationOptions o;
    o.alphas = {0.35, 0.21, 0.112};
    o.procedure = procedure;
    o.calibration_size = 150;
    o.draws = ltt_test::monte_carlo_draws(3000);
    o.seed = 11;
    const cur::SeveralBudgetsValidation v =
        cur::validate_several_budgets(pool.scores, pool.costs, budgets, o);
    INFO("procedure " << ltt::budget_procedure_name(procedure) << ": closed form "
                      << v.closed_form_rate << ", realized " << *v.every_certified.rate);
    // Not a degenerate check: the rate is strictly between 0 and 1 on this pool.
    CHECK(v.closed_form_rate > 0.05);
    CHECK(v.closed_form_rate < 0.95);
    const auto n = v.every_certified.count, D = v.every_certified.trials;
    CHECK(ltt::clopper_pearson_lower(n, D, 5e-4) <= v.closed_form_rate);
    CHECK(ltt::clopper_pearson_upper(n, D, 5e-4) >= v.closed_form_rate);
    for (const cur::BudgetValidation& b : v.budgets) {
      const auto c = b.certification.count;
      CHECK(ltt::clopper_pearson_lower(c, D, 5e-4) <= b.closed_form_rate);
      CHECK(ltt::clopper_pearson_upper(c, D, 5e-4) >= b.closed_form_rate);
      CHECK(v.every_certified.count <= c);
    }
  }
}

TEST_CASE("several budgets validation: the same result whatever the thread count") {
  const CostPool pool = cost_pool(800, 21, 30.0);
  const std::vector<double> budgets{12.0, 40.0};
  cur::SeveralBudgetsValidationOptions o;
  o.alphas = {0.25, 0.1};
  o.draws = 150;
  o.threads = 1;
  const cur::SeveralBudgetsValidation one =
      cur::validate_several_budgets(pool.scores, pool.costs, budgets, o);
  o.threads = 3;
  CHECK(cur::validate_several_budgets(pool.scores, pool.costs, budgets, o) == one);
}

TEST_CASE("several budgets validation: bad input names the parameter") {
  const CostPool pool = cost_pool(300, 1, 30.0);
  const std::vector<double> budgets{10.0, 20.0};
  cur::SeveralBudgetsValidationOptions o;
  o.alphas = {0.2, 0.2};
  const auto refused = [&](std::vector<double> scores, std::vector<double> costs,
                           std::vector<double> b, const cur::SeveralBudgetsValidationOptions& opt,
                           const char* name) {
    try {
      (void)cur::validate_several_budgets(scores, costs, b, opt);
      FAIL("accepted; expected a refusal naming " << name);
    } catch (const std::invalid_argument& e) {
      CHECK_MESSAGE(std::string(e.what()).find(name) != std::string::npos, e.what());
    }
  };
  auto one_alpha = o;
  one_alpha.alphas = {0.2};
  refused(pool.scores, pool.costs, budgets, one_alpha, "options.alphas");
  auto bad_alpha = o;
  bad_alpha.alphas = {0.2, 1.0};
  refused(pool.scores, pool.costs, budgets, bad_alpha, "options.alphas[1]");
  auto nan_costs = pool.costs;
  nan_costs[7] = std::numeric_limits<double>::quiet_NaN();
  refused(pool.scores, nan_costs, budgets, o, "costs");
  refused(pool.scores, std::vector<double>(pool.costs.begin(), pool.costs.end() - 1), budgets, o,
          "costs");
  refused(pool.scores, pool.costs, {20.0, 10.0}, o, "budgets[1]");
  auto big_n = o;
  big_n.calibration_size = 301;
  refused(pool.scores, pool.costs, budgets, big_n, "options.calibration_size");
  auto no_draws = o;
  no_draws.draws = 0;
  refused(pool.scores, pool.costs, budgets, no_draws, "options.draws");
}
