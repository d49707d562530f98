// ltt budget: the label budget, the smallest n whose certification rate reaches a target
// (ltt::label_budget), and with --curve the whole rate curve rate(n), n = 0..n_max
// (ltt::certification_rate_curve).

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <ltt/certification_rate.hpp>

#include "first_selection.hpp"
#include "format.hpp"
#include "json_writer.hpp"
#include "subcommand.hpp"

namespace ltt::cli {

namespace {

constexpr Flag budget_flags[] = {
    {"N", FlagKind::count, "trajectories in the pool", {}, true, max_budget_pool,
     "the search's steps in n shrink with N/N1 near the target"},
    {"N1", FlagKind::count, "trajectories in the first selection S_1", {}, true,
     max_first_selection, "the critical path is walked up to N1 and kept in memory"},
    {"U1", FlagKind::count, "unsafe trajectories in S_1", {}, true},
    {"target", FlagKind::unit, "certification rate to reach (at most 0.999999999)", {}, true},
    {"alpha", FlagKind::open_unit, "target unsafe fraction", "0.25"},
    {"delta", FlagKind::open_unit, "risk level", "0.1"},
    {"json", FlagKind::boolean, "print one JSON object instead of the summary"},
    {"curve", FlagKind::boolean, "print rate(n) for n = 0..n-max as CSV (n,rate)"},
    {"n-max", FlagKind::count, "last n of the curve (default N); needs --curve", {}, false,
     max_curve_points, "the curve evaluates the rate at every n"},
};

constexpr Command budget_command{
    "budget",
    "The label budget: the smallest number n of calibration labels whose certification\n"
    "rate reaches --target, the same n a scan of every n finds (the rate is a sawtooth in n,\n"
    "so a larger n can fall below the target again), found by skipping the n that provably\n"
    "miss (docs/certification_rate.md). With --curve, prints the rate curve\n"
    "rate(n), n = 0..n-max, as CSV with header n,rate instead of the summary; with --curve\n"
    "--json, the summary's JSON object with the curve added as the array \"curve\"\n"
    "(curve[n] = rate(n)).",
    budget_flags};

}  // namespace

int run_budget(const Invocation& call) {
  const auto args = parse_or_help(budget_command, call);
  if (!args) return 0;
  require_not_above(*args, "N1", "N");
  require_not_above(*args, "U1", "N1");
  const bool curve_wanted = args->flag("curve");
  if (args->given("n-max") && !curve_wanted) throw BadInput("--n-max needs --curve");
  if (args->given("n-max")) require_not_above(*args, "n-max", "N");
  if (curve_wanted && !args->given("n-max") && args->count("N") > max_curve_points)
    throw BadInput(cat("--n-max: the curve runs to N = ", std::to_string(args->count("N")),
                       " by default, above the maximum ", std::to_string(max_curve_points),
                       "; give --n-max"));
  const std::int64_t N = args->count("N"), N1 = args->count("N1"), U1 = args->count("U1");
  const double alpha = args->real("alpha"), delta = args->real("delta"),
               target = args->real("target");
  const std::int64_t n_max = args->optional_count("n-max").value_or(N);
  if (target > max_budget_target)
    throw BadInput(cat("--target: ", shortest(target), " exceeds the maximum ",
                       shortest(max_budget_target),
                       " (nearer to 1 the budget is set by the rates' last bits and is searched"
                       " one n at a time)"));

  const std::optional<std::int64_t> budget =
      with_status(call, cat("searching n = 0..", std::to_string(N), " for the budget"),
                  [&] { return ltt::label_budget(N, N1, U1, alpha, delta, target); });
  const FirstSelection s = first_selection(N1, U1, alpha);
  std::optional<double> rate_at_budget;
  std::string reason;
  if (budget) {
    rate_at_budget = ltt::certification_rate(N, N1, U1, *budget, alpha, delta);
  } else if (s.true_null && target > delta) {
    reason = cat("the first selection is a true null (U1 = ", std::to_string(U1),
                 " >= U* = ", std::to_string(s.null_boundary),
                 "), so rate(n) <= delta = ", shortest(delta), " < target at every n");
  } else {
    reason = cat("rate(n) stays below the target for every n up to N = ", std::to_string(N),
                 " (rate(N) = ", brief(ltt::certification_rate(N, N1, U1, N, alpha, delta)), ")");
  }

  std::vector<double> curve;
  if (curve_wanted)
    curve = with_status(call, cat("computing rate(n) for n = 0..", std::to_string(n_max)), [&] {
      return ltt::certification_rate_curve(N, N1, U1, alpha, delta, n_max);
    });

  if (args->flag("json")) {
    JsonWriter json(call.out);
    json.begin_object()
        .field("N", N)
        .field("N1", N1)
        .field("U1", U1)
        .field("alpha", alpha)
        .field("delta", delta)
        .field("target", target)
        .field("budget", budget)
        .field("rate_at_budget", rate_at_budget)
        .field("reason", budget ? std::nullopt : std::optional<std::string>(reason));
    write_json(json, s);
    if (curve_wanted) {
      json.field("n_max", n_max).key("curve").begin_array();
      for (const double r : curve) json.value(r);
      json.end_array();
    }
    json.end_object();
    call.out << '\n';
    return 0;
  }
  if (curve_wanted) {
    call.out << "n,rate\n";
    for (std::size_t n = 0; n < curve.size(); ++n) call.out << n << ',' << shortest(curve[n]) << '\n';
    return 0;
  }
  if (budget)
    call.out << "label budget n = " << *budget
             << ": the smallest n with rate(n) >= " << shortest(target) << " (rate(" << *budget
             << ") = " << brief(*rate_at_budget) << ")\n";
  else
    call.out << "label budget: none: " << reason << "\n";
  call.out << "  pool N = " << N << ", first selection N1 = " << N1 << " with U1 = " << U1
           << " unsafe\n"
           << "  alpha = " << shortest(alpha) << ", delta = " << shortest(delta) << "\n"
           << "  null boundary U* = " << s.null_boundary
           << ", purity margin alpha - U1/N1 = " << describe_margin(s) << "\n"
           << "  " << interpretation(s) << "\n";
  if (budget && *budget < N)
    call.out << "  rate(n) is a sawtooth in n: a larger n can fall below the target again"
                " (see --curve)\n";
  return 0;
}

}  // namespace ltt::cli
