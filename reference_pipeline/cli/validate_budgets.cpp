// ltt validate --budgets: the guarantee validation at several budgets
// (ltt::curation::validate_several_budgets, docs/several-budgets.md) on a pool whose episodic
// costs are all known. Redraws the calibration sample --draws times, bands each draw's labels
// against the budgets, runs the procedure (one threshold for all budgets, or one per budget) and
// reports the rate of certifying every budget against its closed form, the simultaneous false
// certification Pr[some budget certified and violated] that both procedures bound by delta, and
// each budget's own rates and returned-step histogram.

#include <cstdint>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <curation/fields.hpp>
#include <curation/several_budgets_validation.hpp>
#include <ltt/several_budgets.hpp>

#include <certification/format.hpp>
#include <certification/pool_file.hpp>
#include <certification/several_budgets_certification.hpp>
#include <certification/table_reader.hpp>

#include "budget_flags.hpp"
#include "validation_tables.hpp"

namespace ltt::cli {

namespace validate_budgets_subcommand {

namespace cur = ltt::curation;

// The pool's scores and costs: the cost column is required.
struct CostedPool {
  std::vector<double> score;
  std::vector<double> cost;
};

CostedPool read_costed_pool(const std::string& path) {
  if (path.ends_with(".npy"))
    throw BadInput(cat(in_quotes(path),
                       ": a .npy pool holds scores only; ltt validate --budgets needs a CSV pool "
                       "with a cost column"));
  PoolFile file = read_pool(path);
  if (file.pool.episodic_cost.empty())
    (void)CsvFile::read(path).column("cost", " (--budgets bands each trajectory by its cost)");
  return {std::move(file.pool.score), std::move(file.pool.episodic_cost)};
}

void write_json(std::ostream& os, const cur::SeveralBudgetsValidation& v, const std::string& path,
                std::span<const double> grid) {
  JsonWriter json(os);
  json.begin_object()
      .field("pool", path)
      .field("N", v.pool_size)
      .field("n", v.calibration_size)
      .field("draws", v.draws)
      .field("seed", static_cast<std::int64_t>(v.seed))
      .field("delta", v.delta)
      .field("procedure", certification::procedure_label(v.procedure))
      .field("confidence", v.confidence);
  JsonFields put(json);
  put("grid", std::vector<double>(grid.begin(), grid.end()));
  put("every_certified", v.every_certified);
  put("closed_form_rate", v.closed_form_rate);
  put("simultaneous_false_certification", v.simultaneous_false_certification);
  json.field("false_certification_above_delta", v.simultaneous_false_certification.lower > v.delta);
  put("merged_quantiles", v.merged_quantiles);
  put("budgets", v.budgets);  // <curation/fields.hpp>, as Python reads them
  json.end_object();
  os << '\n';
}

void write_text(std::ostream& out, const cur::SeveralBudgetsValidation& v,
                const std::string& path) {
  const bool one = v.procedure == ltt::BudgetProcedure::one_threshold;
  out << "guarantee validation at " << v.budgets.size() << " budgets: " << v.draws
      << " calibration draws of n = " << v.calibration_size << " from " << path << "\n"
      << "  pool N = " << v.pool_size << ", procedure "
      << certification::procedure_label(v.procedure)
      << (one ? " (one walk on the largest p-value, at delta = "
              : " (a walk per budget, at delta / K = ")
      << brief(v.budgets.front().level) << "), delta = " << shortest(v.delta) << ", seed " << v.seed
      << "\n\n"
      << "| quantity | estimate | draws | 95% Clopper-Pearson |\n"
      << "|---|---|---|---|\n"
      << "| every budget certified | " << show_row(v.every_certified) << " |\n"
      << "| closed form | " << brief(v.closed_form_rate) << " | | |\n"
      << "| simultaneous false certification Pr[some budget certified and violated] | "
      << show_row(v.simultaneous_false_certification) << " |\n\n"
      << "| budget | alpha | level | over it in the pool | U1 / N1 | certified | closed form | "
         "false certification |\n"
      << "|---|---|---|---|---|---|---|---|\n";
  for (const cur::BudgetValidation& b : v.budgets)
    out << "| " << shortest(b.budget) << " | " << shortest(b.alpha) << " | " << brief(b.level)
        << " | " << b.pool_unsafe << " | " << b.steps.front().U << " / " << b.steps.front().N
        << " | " << show_rate(b.certification.rate) << " | " << brief(b.closed_form_rate) << " | "
        << show_rate(b.false_certification.rate) << " |\n";
  out << "\n";
  if (v.simultaneous_false_certification.lower > v.delta)
    out << "guarantee: the interval on simultaneous false certification lies above delta = "
        << shortest(v.delta)
        << ": Pr[some budget certified and violated] <= delta looks broken\n\n";
  else
    out << "guarantee: simultaneous false certification "
        << show_rate(v.simultaneous_false_certification.rate)
        << " is consistent with Pr[some budget certified and violated] <= delta = "
        << shortest(v.delta) << " (interval lower end "
        << brief(v.simultaneous_false_certification.lower) << ")\n";
  for (const cur::BudgetValidation& b : v.budgets) {
    out << "\nbudget " << shortest(b.budget) << " (alpha " << shortest(b.alpha)
        << "), purity margin alpha - min_j u_j = " << brief(b.purity_margin) << ":\n";
    write_steps_text(out, b.steps, b.returned_none, v.merged_quantiles);
  }
}

}  // namespace validate_budgets_subcommand

// Called by run_validate when --budgets is given; `args` already parsed with validate's flags.
int run_validate_budgets(const Invocation& call, const Arguments& args) {
  using namespace validate_budgets_subcommand;
  if (args.given("budget"))
    throw BadInput("--budget does not apply to --budgets (each trajectory is banded by its cost)");
  for (const std::string_view flag : {"stop", "order", "refusal-rate"})
    if (args.given(flag)) throw BadInput(cat("--", flag, ": does not apply to --budgets"));
  cur::SeveralBudgetsValidationOptions options;
  const std::vector<double> budgets = read_budgets(args);
  options.alphas = read_alphas(args, budgets.size());
  options.delta = args.real("delta");
  options.procedure =
      args.given("procedure") ? read_procedure(args) : ltt::BudgetProcedure::one_threshold;
  options.calibration_size = args.count("n");
  options.draws = args.count("draws");
  options.seed = static_cast<std::uint64_t>(args.count("seed"));
  options.quantiles = grid_quantiles(args.text("grid"));
  if (options.calibration_size < 1) throw BadInput("--n: 0 must be at least 1");
  if (options.draws < 1) throw BadInput("--draws: 0 must be at least 1");
  if (const auto threads = args.optional_count("threads")) {
    if (*threads < 1) throw BadInput("--threads: 0 must be at least 1");
    options.threads = *threads;
  }
  const std::string& path = args.text("pool");
  const CostedPool pool = read_costed_pool(path);
  const auto N = static_cast<std::int64_t>(pool.score.size());
  if (options.calibration_size > N)
    throw BadInput(cat("--n: ", std::to_string(options.calibration_size),
                       " must not exceed the pool size ", std::to_string(N), " of ",
                       in_quotes(path)));
  const cur::SeveralBudgetsValidation v =
      cur::validate_several_budgets(pool.score, pool.cost, budgets, options);
  if (args.flag("json"))
    write_json(call.out, v, path, options.quantiles);
  else
    write_text(call.out, v, path);
  return 0;
}

}  // namespace ltt::cli
