// The report's section on several budgets (report.hpp): each seed's labels certified at B, 2B
// and 4B by one threshold for all budgets, one threshold per budget, and each budget alone,
// summarized over seeds.
#include "pipeline/report.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include <data/text.hpp>

namespace ltt::pipeline {

namespace {

using data::cat;

// One row: the budget's entries under one procedure, over the seeds.
std::string budget_row(const PipelineResult& r, std::size_t k, std::string_view procedure,
                       std::vector<BudgetCertificate> SeveralBudgetsStage::*entries) {
  std::int64_t certified = 0;
  double quantile = 0, size = 0, worst = 0;
  for (const SeedResult& s : r.seeds) {
    const BudgetCertificate& c = (s.several_budgets.*entries)[k];
    if (!c.certified) continue;
    ++certified;
    quantile += c.quantile;
    size += static_cast<double>(c.selection_size);
    worst = std::max(worst, c.realized_unsafe_fraction);
  }
  const BudgetCertificate& first = (r.seeds.front().several_budgets.*entries)[k];
  const auto mean = [&](double sum, int digits) {
    return certified ? fixed(sum / static_cast<double>(certified), digits) : std::string("-");
  };
  return cat("| ", fixed(first.budget, 0), " | ", std::string(procedure), " | ",
             fixed(first.level, 4), " | ", std::to_string(certified), " / ",
             std::to_string(r.seeds.size()), " | ", mean(quantile, 2), " | ", mean(size, 0), " | ",
             certified ? fixed(worst, 3) : std::string("-"), " |\n");
}

}  // namespace

std::string several_budgets_section(const PipelineResult& r) {
  const SeveralBudgetsStage& first = r.seeds.front().several_budgets;
  const curation::CalibratedSelectionOptions& o = r.options.calibration;
  std::ostringstream md;
  md << "## Several budgets from the same labels\n\n"
     << "Each seed's " << r.options.calibration_size
     << " labels banded at B = " << fixed(first.budgets[0], 0)
     << ", 2B = " << fixed(first.budgets[1], 0) << " and 4B = " << fixed(first.budgets[2], 0)
     << " (alpha " << fixed(o.alpha, 2) << " each, delta " << fixed(o.delta, 2)
     << "), certified by one threshold for all budgets (one walk on the largest p-value, at "
        "delta), by one threshold per budget (each walk at delta / 3), and by each budget alone "
        "at delta (no simultaneous guarantee), docs/several-budgets.md. Quantile and selection "
        "size: mean over the seeds that certified; over budget: the largest share of a certified "
        "selection over its budget (oracle). The methods above clone the selection at B.\n\n"
     << "| budget | procedure | level | certified seeds | quantile | selection size | over "
        "budget (max) |\n"
     << "|---|---|---|---|---|---|---|\n";
  for (std::size_t k = 0; k < first.budgets.size(); ++k) {
    md << budget_row(r, k, "one threshold", &SeveralBudgetsStage::one_threshold)
       << budget_row(r, k, "per budget", &SeveralBudgetsStage::per_budget)
       << budget_row(r, k, "alone", &SeveralBudgetsStage::alone);
  }
  md << "\n";
  return md.str();
}

}  // namespace ltt::pipeline
