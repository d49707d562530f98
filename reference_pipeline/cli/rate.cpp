// ltt rate: the exact certification rate of the strict fixed-sequence walk for a pool of N
// whose first selection holds N1 trajectories, U1 of them unsafe, with n calibration labels
// (paper, Proposition "certification rate"; ltt::certification_rate). With --budgets, the
// rate of certifying several budgets from the same labels (ltt::several_budgets_rate,
// docs/several-budgets.md): --U1 then gives the count over each budget.

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <ltt/certification_rate.hpp>
#include <ltt/joint_certification_rate.hpp>
#include <ltt/several_budgets.hpp>

#include <certification/format.hpp>

#include "first_selection.hpp"
#include "subcommand.hpp"

namespace ltt::cli {

namespace rate_subcommand {

const Command& rate_command() {
  static const std::vector<Flag> flags = first_selection_flags(
      {}, {},
      {"n", FlagKind::count, "calibration labels, drawn uniformly without replacement", {}, true},
      {budgets_flag, alphas_flag, procedure_flag});
  static const Command command{
      "rate",
      "The probability that the strict fixed-sequence walk certifies its first selection S_1\n"
      "(N1 of the pool's N trajectories, U1 of them unsafe) with n calibration labels, in\n"
      "closed form. Also prints the null boundary U* = floor(alpha N1) + 1 and the purity\n"
      "margin alpha - U1/N1.\n"
      "--budgets b1,b2,...: the rate of certifying every budget from the same labels, with\n"
      "--U1 u1,u2,... the trajectories of S_1 over each budget (non-increasing), --alphas one\n"
      "alpha per budget, --procedure one-threshold or per-budget; also each budget's own rate.",
      flags};
  return command;
}

void write_rate_json(std::ostream& out, const FirstSelectionQuestion& q, std::int64_t n,
                     double rate, const FirstSelection& s) {
  JsonWriter json(out);
  json.begin_object()
      .field("N", q.N)
      .field("N1", q.N1)
      .field("U1", q.U1)
      .field("n", n)
      .field("alpha", q.alpha)
      .field("delta", q.delta)
      .field("rate", rate);
  write_json(json, s);
  json.end_object();
  out << '\n';
}

// --budgets: the joint rate, and each budget's own rate at its level.
int run_several_budgets(const Invocation& call, const Arguments& args, std::int64_t n) {
  const BudgetsQuestion q = read_budgets_question(args);
  const std::int64_t N = q.N, N1 = q.N1;
  const double delta = q.delta;
  const std::vector<double>& budgets = q.budgets;
  const std::vector<double>& alphas = q.alphas;
  const std::vector<double>& levels = q.levels;
  const std::vector<std::int64_t>& U1 = q.U1;
  const ltt::BudgetProcedure procedure = q.procedure;
  const double rate = ltt::joint_certification_rate(N, N1, U1, n, alphas, levels);
  std::vector<double> own;
  std::vector<FirstSelection> first;
  for (std::size_t k = 0; k < budgets.size(); ++k) {
    own.push_back(ltt::certification_rate(N, N1, U1[k], n, alphas[k], levels[k]));
    first.push_back(first_selection(N1, U1[k], alphas[k]));
  }
  if (args.flag("json")) {
    JsonWriter json(call.out);
    json.begin_object()
        .field("N", N)
        .field("N1", N1)
        .field("n", n)
        .field("delta", delta)
        .field("procedure", procedure_flag_name(procedure))
        .field("rate", rate);
    json.key("budgets").begin_array();
    for (std::size_t k = 0; k < budgets.size(); ++k) {
      json.begin_object()
          .field("budget", budgets[k])
          .field("U1", U1[k])
          .field("alpha", alphas[k])
          .field("level", levels[k])
          .field("rate", own[k]);
      write_json(json, first[k]);
      json.end_object();
    }
    json.end_array().end_object();
    call.out << '\n';
    return 0;
  }
  call.out << (procedure == ltt::BudgetProcedure::one_threshold
                   ? "certification rate of one threshold for all "
                   : "rate of certifying every one of the ")
           << budgets.size() << " budgets " << brief(rate) << " with n = " << n << " labels\n"
           << "  pool N = " << N << ", first selection N1 = " << N1 << ", delta = "
           << shortest(delta) << " (" << procedure_flag_name(procedure) << ")\n";
  for (std::size_t k = 0; k < budgets.size(); ++k)
    call.out << "  budget " << shortest(budgets[k]) << ": U1 = " << U1[k]
             << ", alpha = " << shortest(alphas[k]) << ", level " << shortest(levels[k])
             << ", U* = " << first[k].null_boundary << ", alone " << brief(own[k]) << "\n";
  return 0;
}

}  // namespace rate_subcommand

int run_rate(const Invocation& call) {
  using namespace rate_subcommand;
  const auto args = parse_or_help(rate_command(), call);
  if (!args) return 0;
  if (args->has("budgets")) return run_several_budgets(call, *args, args->count("n"));
  refuse_budget_flags_without_budgets(*args);
  const FirstSelectionQuestion q = read_first_selection(*args);
  require_not_above(*args, "n", "N");
  const std::int64_t n = args->count("n");
  if (n > max_rate_labels && q.N1 > max_first_selection)
    throw BadInput(cat("--n: ", std::to_string(n), " exceeds the maximum ",
                       std::to_string(max_rate_labels), " when --N1 exceeds ",
                       std::to_string(max_first_selection),
                       " (the work grows with the spread of m ~ Hyp(N, N1, n))"));

  const double rate = ltt::certification_rate(q.N, q.N1, q.U1, n, q.alpha, q.delta);
  const FirstSelection s = first_selection(q.N1, q.U1, q.alpha);

  if (args->flag("json")) {
    write_rate_json(call.out, q, n, rate, s);
    return 0;
  }
  call.out << "certification rate " << brief(rate) << " with n = " << n << " labels\n";
  write_first_selection_summary(call.out, q, s);
  return 0;
}

}  // namespace ltt::cli
