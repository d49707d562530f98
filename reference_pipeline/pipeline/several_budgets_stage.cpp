// Stage `several_budgets` of a pipeline seed (pipeline.hpp): the seed's calibration draws,
// banded against B, 2B and 4B, certified by one threshold for all budgets, by one threshold per
// budget, and by each budget alone (docs/several-budgets.md, "Choosing between them").
#include "pipeline/pipeline.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <curation/calibrated_selection.hpp>
#include <curation/cost_bands.hpp>
#include <curation/several_budgets_selection.hpp>
#include <curation/trajectory_pool.hpp>
#include <ltt/several_budgets.hpp>

namespace ltt::pipeline {
namespace {

BudgetCertificate entry(const curation::CalibratedSelection& s, double budget,
                        std::span<const double> cost) {
  const curation::Certificate& c = s.certificate;
  BudgetCertificate e{budget, c.delta, c.certified, c.quantile, c.selection_size};
  // oracle: the pool's costs against this budget
  e.realized_unsafe_fraction =
      curation::unsafe_fraction(curation::unsafe_bits(cost, budget), s.selected);
  return e;
}

}  // namespace

SeveralBudgetsStage several_budgets(const BehaviorPool& pool, std::span<const double> scores,
                                    const CertifyStage& certified, const Task& task,
                                    const PipelineOptions& options) {
  SeveralBudgetsStage out;
  for (const double multiple : several_budget_multiples)
    out.budgets.push_back(multiple * task.budget);
  const curation::BandedCalibration banded = curation::label_banded_calibration(
      certified.calibration.index, pool.episodic_cost, out.budgets);
  const curation::CalibratedSelectionOptions& one = options.calibration;
  curation::SeveralBudgetsOptions o;
  o.alphas.assign(out.budgets.size(), one.alpha);
  o.delta = one.delta;
  o.quantiles = one.quantiles;
  o.minimum_selection = one.minimum_selection;
  o.drop_unsafe_calibration = one.drop_unsafe_calibration;
  for (const ltt::BudgetProcedure procedure :
       {ltt::BudgetProcedure::one_threshold, ltt::BudgetProcedure::one_threshold_per_budget}) {
    o.procedure = procedure;
    const curation::SeveralBudgetsSelection r =
        curation::several_budgets_selection(scores, banded, o);
    std::vector<BudgetCertificate>& to =
        procedure == ltt::BudgetProcedure::one_threshold ? out.one_threshold : out.per_budget;
    for (std::size_t k = 0; k < r.budgets.size(); ++k)
      to.push_back(entry(r.budgets[k], out.budgets[k], pool.episodic_cost));
  }
  for (std::size_t k = 0; k < out.budgets.size(); ++k)
    out.alone.push_back(entry(
        curation::calibrated_selection(
            scores, curation::calibration_for_budget(banded, static_cast<std::int64_t>(k)), one),
        out.budgets[k], pool.episodic_cost));
  return out;
}

}  // namespace ltt::pipeline
