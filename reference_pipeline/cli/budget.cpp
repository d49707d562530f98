// ltt budget: the label budget, the smallest n whose certification rate reaches a target
// (ltt::label_budget), and with --curve the whole rate curve rate(n), n = 0..n_max
// (ltt::certification_rate_curve). With --budgets, the smallest n at which every budget is
// certified with the target rate (ltt::joint_label_budget, docs/several-budgets.md).

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <ltt/certification_rate.hpp>
#include <ltt/joint_certification_rate.hpp>

#include <certification/format.hpp>

#include "first_selection.hpp"
#include "subcommand.hpp"

namespace ltt::cli {

namespace budget_subcommand {

const Command& budget_command() {
  static const std::vector<Flag> flags = first_selection_flags(
      {max_budget_pool, "the search's steps in n shrink with N/N1 near the target"},
      {max_first_selection, "the critical path is walked up to N1 and kept in memory"},
      {"target", FlagKind::unit, "certification rate to reach (at most 0.999999999)", {}, true},
      {{"curve", FlagKind::boolean, "print rate(n) for n = 0..n-max as CSV (n,rate)"},
       {"n-max",
        FlagKind::count,
        "last n of the curve (default N); needs --curve",
        {},
        false,
        max_curve_points,
        "the curve evaluates the rate at every n"},
       budgets_flag,
       alphas_flag,
       procedure_flag});
  static const Command command{
      "budget",
      "The label budget: the smallest number n of calibration labels whose certification\n"
      "rate reaches --target, the same n a scan of every n finds (the rate is a sawtooth in n,\n"
      "so a larger n can fall below the target again), found by skipping the n that provably\n"
      "miss (docs/certification_rate.md). With --curve, prints the rate curve\n"
      "rate(n), n = 0..n-max, as CSV with header n,rate instead of the summary; with --curve\n"
      "--json, the summary's JSON object with the curve added as the array \"curve\"\n"
      "(curve[n] = rate(n)).\n"
      "--budgets b1,b2,... with --U1 u1,u2,...: the smallest n at which every budget is\n"
      "certified from the same labels with probability >= --target (--procedure, --alphas as\n"
      "for ltt rate), found by evaluating the joint rate at every n from the largest of the\n"
      "budgets' own label budgets up to the answer; --curve gives the joint rate at every n.",
      flags};
  return command;
}

// Parse and validate: the question, --target, and the curve's extent.
struct Request {
  FirstSelectionQuestion q;
  double target = 0;
  bool curve = false;
  std::int64_t n_max = 0;
};

// --curve and --n-max: the curve's last n (default N), checked against N and the maximum.
std::int64_t read_curve_extent(const Arguments& args, std::int64_t N, bool curve) {
  if (args.given("n-max") && !curve) throw BadInput("--n-max needs --curve");
  if (args.given("n-max")) require_not_above(args, "n-max", "N");
  if (curve && !args.given("n-max") && N > max_curve_points)
    throw BadInput(cat("--n-max: the curve runs to N = ", std::to_string(N),
                       " by default, above the maximum ", std::to_string(max_curve_points),
                       "; give --n-max"));
  return args.optional_count("n-max").value_or(N);
}

Request read_request(const Arguments& args) {
  Request r;
  r.q = read_first_selection(args);
  r.curve = args.flag("curve");
  r.n_max = read_curve_extent(args, r.q.N, r.curve);
  r.target = args.real("target");
  if (r.target > max_budget_target)
    throw BadInput(cat("--target: ", shortest(r.target), " exceeds the maximum ",
                       shortest(max_budget_target),
                       " (nearer to 1 the budget is set by the rates' last bits and is searched"
                       " one n at a time)"));
  return r;
}

// Compute: the budget and the rate it reaches, or why there is none; the curve if asked.
struct Budget {
  std::optional<std::int64_t> n;
  std::optional<double> rate_at_budget;
  std::string reason;  // when there is no budget
  FirstSelection s;
  std::vector<double> curve;
};

Budget find_budget(const Invocation& call, const Request& r) {
  const FirstSelectionQuestion& q = r.q;
  Budget b;
  b.n = with_status(call, cat("searching n = 0..", std::to_string(q.N), " for the budget"),
                    [&] { return ltt::label_budget(q.N, q.N1, q.U1, q.alpha, q.delta, r.target); });
  b.s = first_selection(q.N1, q.U1, q.alpha);
  if (b.n) {
    b.rate_at_budget = ltt::certification_rate(q.N, q.N1, q.U1, *b.n, q.alpha, q.delta);
  } else if (b.s.true_null && r.target > q.delta) {
    b.reason = cat("the first selection is a true null (U1 = ", std::to_string(q.U1),
                   " >= U* = ", std::to_string(b.s.null_boundary),
                   "), so rate(n) <= delta = ", shortest(q.delta), " < target at every n");
  } else {
    b.reason =
        cat("rate(n) stays below the target for every n up to N = ", std::to_string(q.N),
            " (rate(N) = ", brief(ltt::certification_rate(q.N, q.N1, q.U1, q.N, q.alpha, q.delta)),
            ")");
  }
  if (r.curve)
    b.curve = with_status(call, cat("computing rate(n) for n = 0..", std::to_string(r.n_max)), [&] {
      return ltt::certification_rate_curve(q.N, q.N1, q.U1, q.alpha, q.delta, r.n_max);
    });
  return b;
}

void write_budget_json(std::ostream& out, const Request& r, const Budget& b) {
  JsonWriter json(out);
  json.begin_object()
      .field("N", r.q.N)
      .field("N1", r.q.N1)
      .field("U1", r.q.U1)
      .field("alpha", r.q.alpha)
      .field("delta", r.q.delta)
      .field("target", r.target)
      .field("budget", b.n)
      .field("rate_at_budget", b.rate_at_budget)
      .field("reason", b.n ? std::nullopt : std::optional<std::string>(b.reason));
  write_json(json, b.s);
  if (r.curve) {
    json.field("n_max", r.n_max).key("curve").begin_array();
    for (const double rate : b.curve) json.value(rate);
    json.end_array();
  }
  json.end_object();
  out << '\n';
}

void write_budget_summary(std::ostream& out, const Request& r, const Budget& b) {
  if (b.n)
    out << "label budget n = " << *b.n << ": the smallest n with rate(n) >= " << shortest(r.target)
        << " (rate(" << *b.n << ") = " << brief(*b.rate_at_budget) << ")\n";
  else
    out << "label budget: none: " << b.reason << "\n";
  write_first_selection_summary(out, r.q, b.s);
  if (b.n && *b.n < r.q.N)
    out << "  rate(n) is a sawtooth in n: a larger n can fall below the target again"
           " (see --curve)\n";
}

// --budgets: the joint label budget by a scan of every n, so N is capped.
inline constexpr std::int64_t max_budgets_pool = std::int64_t{1} << 20;

int run_several_budgets(const Invocation& call, const Arguments& args) {
  const BudgetsQuestion q = read_budgets_question(args);
  if (q.N > max_budgets_pool)
    throw BadInput(cat("--N: ", std::to_string(q.N), " exceeds the maximum ",
                       std::to_string(max_budgets_pool),
                       " with --budgets (the search evaluates the joint rate at every n)"));
  const bool curve = args.flag("curve");
  const std::int64_t n_max = read_curve_extent(args, q.N, curve);
  const double target = args.real("target");
  if (target > max_budget_target)
    throw BadInput(
        cat("--target: ", shortest(target), " exceeds the maximum ", shortest(max_budget_target)));
  const std::optional<std::int64_t> n = with_status(
      call, cat("searching n = 0..", std::to_string(q.N), " for the budget"),
      [&] { return ltt::joint_label_budget(q.N, q.N1, q.U1, q.alphas, q.levels, target); });
  // The joint rate at every n of the curve: one joint_certification_rate each.
  std::vector<double> joint_curve;
  if (curve)
    joint_curve =
        with_status(call, cat("computing rate(n) for n = 0..", std::to_string(n_max)), [&] {
          std::vector<double> c;
          for (std::int64_t m = 0; m <= n_max; ++m)
            c.push_back(ltt::joint_certification_rate(q.N, q.N1, q.U1, m, q.alphas, q.levels));
          return c;
        });
  std::optional<double> rate;
  std::vector<double> own;
  if (n) {
    rate = ltt::joint_certification_rate(q.N, q.N1, q.U1, *n, q.alphas, q.levels);
    for (std::size_t k = 0; k < q.U1.size(); ++k)
      own.push_back(ltt::certification_rate(q.N, q.N1, q.U1[k], *n, q.alphas[k], q.levels[k]));
  }
  if (args.flag("json")) {
    JsonWriter json(call.out);
    json.begin_object()
        .field("N", q.N)
        .field("N1", q.N1)
        .field("delta", q.delta)
        .field("procedure", procedure_flag_name(q.procedure))
        .field("target", target)
        .field("budget", n)
        .field("rate_at_budget", rate);
    json.key("budgets").begin_array();
    for (std::size_t k = 0; k < q.budgets.size(); ++k)
      json.begin_object()
          .field("budget", q.budgets[k])
          .field("U1", q.U1[k])
          .field("alpha", q.alphas[k])
          .field("level", q.levels[k])
          .field("null_boundary", ltt::null_boundary(q.N1, q.alphas[k]))
          .field("rate_at_budget", n ? std::optional(own[k]) : std::nullopt)
          .end_object();
    json.end_array();
    if (curve) {
      json.field("n_max", n_max).key("curve").begin_array();
      for (const double r : joint_curve) json.value(r);
      json.end_array();
    }
    json.end_object();
    call.out << '\n';
    return 0;
  }
  if (curve) {
    call.out << "n,rate\n";
    for (std::size_t m = 0; m < joint_curve.size(); ++m)
      call.out << m << ',' << shortest(joint_curve[m]) << '\n';
    return 0;
  }
  if (n)
    call.out << "label budget n = " << *n << ": the smallest n at which every one of the "
             << q.budgets.size() << " budgets is certified with rate >= " << shortest(target)
             << " (rate(" << *n << ") = " << brief(*rate) << ", "
             << procedure_flag_name(q.procedure) << ")\n";
  else
    call.out << "label budget: none: some budget's first selection is a true null, so the "
                "rate stays at or below its level\n";
  for (std::size_t k = 0; k < q.budgets.size(); ++k) {
    call.out << "  budget " << shortest(q.budgets[k]) << ": U1 = " << q.U1[k]
             << ", alpha = " << shortest(q.alphas[k]) << ", level " << shortest(q.levels[k]);
    if (n) call.out << ", alone " << brief(own[k]);
    call.out << "\n";
  }
  return 0;
}

}  // namespace budget_subcommand

int run_budget(const Invocation& call) {
  using namespace budget_subcommand;
  const auto args = parse_or_help(budget_command(), call);
  if (!args) return 0;
  if (args->has("budgets")) return run_several_budgets(call, *args);
  refuse_budget_flags_without_budgets(*args);
  const Request r = read_request(*args);
  const Budget b = find_budget(call, r);
  if (args->flag("json")) {
    write_budget_json(call.out, r, b);
  } else if (r.curve) {
    call.out << "n,rate\n";
    for (std::size_t n = 0; n < b.curve.size(); ++n)
      call.out << n << ',' << shortest(b.curve[n]) << '\n';
  } else {
    write_budget_summary(call.out, r, b);
  }
  return 0;
}

}  // namespace ltt::cli
