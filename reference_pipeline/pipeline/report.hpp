#pragma once
// The human side of a pipeline report (docs/pipeline.md, "The report"): report.md (report.cpp),
// the claims checked on the run (report_claims.cpp), what `ltt pipeline` prints
// (report_summary.cpp) and the SVG figures (report_figures.cpp), and its machine side,
// report.json (report_json.cpp), with each seed's hand-off files named.
//
//   report.md               the methods table (reward, cost, the cost of the data cloned and
//                           the cloning gap, budget, within budget: mean and 95% bootstrap CI
//                           over seeds), the claims the paper makes checked on this run, the
//                           fidelity section (pool costs, the selection's unsafe members, the
//                           cloning gap split into the selection's luck and the cloner's share
//                           where the behavior checkpoints are known), the score quality (five
//                           rankings of the pool on the grid, and per seed which stage a refusal
//                           is), each seed's certificate walk, the same labels certified at B, 2B
//                           and 4B, the policy certificates per seed and pooled, the oracle
//                           diagnostics, links to the figures
//   score_vs_cost.svg       g(tau) against episodic cost, the budget, the grid and the cut
//   certification_rate.svg  closed-form certification rate against n, with the n used
//   methods.svg             reward and cost per method, with the budget line
//   cost_histogram.svg      the pool's episodic costs, with the budget line
//   purity_curves.svg       U_j / N_j against the grid quantile for the five scorers, the alpha
//                           line
#include <cstdint>
#include <string>

#include "pipeline/format.hpp"
#include "pipeline/pipeline.hpp"

namespace ltt::pipeline {

std::string report_markdown(const PipelineResult& result);
// report.json: the run's options, the pool, the methods' summaries and, per seed, its
// certificate (the fields `ltt certify --json` writes), selections, oracle diagnostics, value
// and methods; one line.
std::string report_json(const PipelineResult& result);

// A seed's hand-off files, relative to the report's directory: the value's scores of every pool
// episode, the calibrated selection (certified or fallback) as episode indices, the calibration
// labels in `ltt certify --labels` form, and the value ensemble (a model file).
struct SeedArtifacts {
  std::string scores, selection, labels, model;
};
SeedArtifacts seed_artifacts(std::uint64_t seed);
// The seeds' labels certified at B, 2B and 4B (SeveralBudgetsStage), over seeds.
std::string several_budgets_section(const PipelineResult& result);
// The methods table alone.
std::string summary_table(const PipelineResult& result);
// Where each clone's cost comes from (docs/pipeline.md): per method cloned, the clone's cost, the
// data cost, the policy data cost, the selection's luck and the cloner's share, mean and 95%
// bootstrap CI over seeds. Empty when the pool does not know its behavior checkpoints.
std::string cost_split_table(const PipelineResult& result);
// What `ltt pipeline` prints: the table, one line per seed on its certificate, and the claims.
std::string run_summary(const PipelineResult& result);
std::string score_cost_svg(const PipelineResult& result);          // the first seed
std::string certification_rate_svg(const PipelineResult& result);  // the first seed
std::string methods_svg(const PipelineResult& result);
std::string cost_histogram_svg(const PipelineResult& result);
std::string purity_curves_svg(const PipelineResult& result);  // the first seed's five scorers

// Each claim of the paper's main table that a run can check, with whether it held. A claim
// about a clone's cost is judged on the 95% bootstrap interval of its mean over seeds, never on
// one seed: over the budget when the interval's lower end is above it, within when its upper
// end is at or below it, otherwise (or with fewer than two seeds) undetermined.
enum class Verdict { holds, fails, undetermined };
std::string_view verdict_text(Verdict v);  // "holds", "does not hold", "undetermined at ..."

struct Claim {
  std::string statement;
  Verdict verdict = Verdict::undetermined;
  std::string evidence;
};
std::vector<Claim> check_claims(const PipelineResult& result);

}  // namespace ltt::pipeline
