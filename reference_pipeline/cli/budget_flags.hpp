#pragma once
// The flags of several budgets (docs/several-budgets.md), as `ltt rate` and `ltt certify` read
// them: --budgets b1,b2,... (ascending, the tightest first), --alphas a1,a2,... (one per budget;
// default --alpha for each) and --procedure one-threshold or per-budget. Each list is
// comma-separated; every refusal is one line naming the flag and the offending item.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <curation/cost_bands.hpp>
#include <ltt/several_budgets.hpp>

#include <certification/several_budgets_certification.hpp>

#include "arguments.hpp"
#include "curation_flags.hpp"

namespace ltt::cli {

inline constexpr Flag budgets_flag{
    "budgets", FlagKind::text,
    "several cost budgets, ascending and comma-separated (20,40,80): every one certified from "
    "the same labels (docs/several-budgets.md)"};
inline constexpr Flag alphas_flag{"alphas", FlagKind::text,
                                  "--budgets: one alpha per budget, comma-separated (default "
                                  "--alpha for every budget)"};
inline constexpr Flag procedure_flag{
    "procedure", FlagKind::text,
    "--budgets: one-threshold (one selection for all budgets, each test at delta) or "
    "per-budget (a threshold per budget, each walk at delta / K)",
    "one-threshold"};

// The items of a comma-separated list, none empty.
inline std::vector<std::string_view> comma_items(std::string_view flag, std::string_view text) {
  std::vector<std::string_view> items;
  std::size_t from = 0;
  for (;;) {
    const std::size_t comma = text.find(',', from);
    const std::string_view item =
        text.substr(from, comma == std::string_view::npos ? std::string_view::npos : comma - from);
    if (item.empty())
      throw BadInput(cat("--", flag, ": ", in_quotes(text), " has an empty item (a,b,c)"));
    items.push_back(item);
    if (comma == std::string_view::npos) return items;
    from = comma + 1;
  }
}

// --budgets: finite, strictly ascending, at most curation::max_budgets.
inline std::vector<double> read_budgets(const Arguments& args) {
  std::vector<double> budgets;
  for (const std::string_view item : comma_items("budgets", args.text("budgets"))) {
    const double b = finite_real("budgets", item);
    if (!budgets.empty() && !(b > budgets.back()))
      throw BadInput(cat("--budgets: ", item, " must exceed the budget before it, ",
                         shortest(budgets.back()), " (ascending, the tightest first)"));
    budgets.push_back(b);
  }
  if (static_cast<std::int64_t>(budgets.size()) > curation::max_budgets)
    throw BadInput(cat("--budgets: ", std::to_string(budgets.size()), " budgets exceed the maximum ",
                       std::to_string(curation::max_budgets)));
  return budgets;
}

// --alphas, one per budget, each in (0, 1); without it --alpha for every budget.
inline std::vector<double> read_alphas(const Arguments& args, std::size_t budgets) {
  if (!args.has("alphas")) return std::vector<double>(budgets, args.real("alpha"));
  if (args.given("alpha"))
    throw BadInput("--alpha and --alphas exclude each other (--alphas gives one per budget)");
  std::vector<double> alphas;
  for (const std::string_view item : comma_items("alphas", args.text("alphas")))
    alphas.push_back(detail::read_real("alphas", item, FlagKind::open_unit));
  if (alphas.size() != budgets)
    throw BadInput(cat("--alphas: ", std::to_string(alphas.size()), " values for ",
                       std::to_string(budgets), " budgets (one alpha per budget of --budgets)"));
  return alphas;
}

inline ltt::BudgetProcedure read_procedure(const Arguments& args) {
  const std::string& p = args.text("procedure");
  if (p == "one-threshold") return ltt::BudgetProcedure::one_threshold;
  if (p == "per-budget") return ltt::BudgetProcedure::one_threshold_per_budget;
  throw BadInput(cat("--procedure: ", in_quotes(p), " is not one-threshold or per-budget"));
}

inline std::string_view procedure_flag_name(ltt::BudgetProcedure procedure) {
  return certification::procedure_label(procedure);
}

// --labels (id,cost, id,band or, for one budget, id,unsafe) or --draw n (labeled from the
// pool's costs against the budgets, so no --budget), --seed, and the options of the selection
// at several budgets: --budgets, --alphas, --delta, --procedure, --grid, --min-selection,
// --drop-unsafe-calibration. Shared by `ltt certify` and `ltt curate`.
inline certification::BudgetsRequest read_budgets_labels_and_options(const Arguments& args,
                                                                     certification::Inputs& in) {
  if (args.given("budget"))
    throw BadInput("--budget does not apply to --budgets (the labels are banded against them)");
  if (args.has("labels") == args.has("draw"))
    throw BadInput(args.has("labels") ? "--labels and --draw exclude each other"
                                      : "missing --labels (or --draw)");
  if (args.has("labels")) in.labels_file = args.text("labels");
  if (args.has("draw")) {
    in.draw = args.count("draw");
    if (*in.draw < 1) throw BadInput("--draw: 0 must be at least 1");
  }
  in.seed = args.count("seed");
  certification::BudgetsRequest r;
  r.budgets = read_budgets(args);
  curation::SeveralBudgetsOptions& o = r.options;
  o.alphas = read_alphas(args, r.budgets.size());
  o.delta = args.real("delta");
  o.procedure = read_procedure(args);
  o.quantiles = grid_quantiles(args.text("grid"));
  o.minimum_selection = args.count("min-selection");
  o.drop_unsafe_calibration = args.flag("drop-unsafe-calibration");
  return r;
}

// --alphas and --procedure mean nothing without --budgets.
inline void refuse_budget_flags_without_budgets(const Arguments& args) {
  for (const std::string_view flag : {"alphas", "procedure"})
    if (args.given(flag)) throw BadInput(cat("--", flag, " needs --budgets"));
}

}  // namespace ltt::cli
