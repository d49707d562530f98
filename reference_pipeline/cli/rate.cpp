// ltt rate: the exact certification rate of the strict fixed-sequence walk for a pool of N
// whose first selection holds N1 trajectories, U1 of them unsafe, with n calibration labels
// (paper, Proposition "certification rate"; ltt::certification_rate).

#include <cstdint>
#include <ostream>
#include <string>

#include <ltt/certification_rate.hpp>

#include "first_selection.hpp"
#include "format.hpp"
#include "json_writer.hpp"
#include "subcommand.hpp"

namespace ltt::cli {

namespace {

constexpr Flag rate_flags[] = {
    {"N", FlagKind::count, "trajectories in the pool", {}, true},
    {"N1", FlagKind::count, "trajectories in the first selection S_1", {}, true},
    {"U1", FlagKind::count, "unsafe trajectories in S_1", {}, true},
    {"n", FlagKind::count, "calibration labels, drawn uniformly without replacement", {}, true},
    {"alpha", FlagKind::open_unit, "target unsafe fraction", "0.25"},
    {"delta", FlagKind::open_unit, "risk level", "0.1"},
    {"json", FlagKind::boolean, "print one JSON object instead of the summary"},
};

constexpr Command rate_command{
    "rate",
    "The probability that the strict fixed-sequence walk certifies its first selection S_1\n"
    "(N1 of the pool's N trajectories, U1 of them unsafe) with n calibration labels, in\n"
    "closed form. Also prints the null boundary U* = floor(alpha N1) + 1 and the purity\n"
    "margin alpha - U1/N1.",
    rate_flags};

}  // namespace

int run_rate(const Invocation& call) {
  const auto args = parse_or_help(rate_command, call);
  if (!args) return 0;
  require_not_above(*args, "N1", "N");
  require_not_above(*args, "U1", "N1");
  require_not_above(*args, "n", "N");
  const std::int64_t N = args->count("N"), N1 = args->count("N1"), U1 = args->count("U1"),
                     n = args->count("n");
  if (n > max_rate_labels && N1 > max_first_selection)
    throw BadInput(cat("--n: ", std::to_string(n), " exceeds the maximum ",
                       std::to_string(max_rate_labels), " when --N1 exceeds ",
                       std::to_string(max_first_selection),
                       " (the work grows with the spread of m ~ Hyp(N, N1, n))"));
  const double alpha = args->real("alpha"), delta = args->real("delta");

  const double rate = ltt::certification_rate(N, N1, U1, n, alpha, delta);
  const FirstSelection s = first_selection(N1, U1, alpha);

  if (args->flag("json")) {
    JsonWriter json(call.out);
    json.begin_object()
        .field("N", N)
        .field("N1", N1)
        .field("U1", U1)
        .field("n", n)
        .field("alpha", alpha)
        .field("delta", delta)
        .field("rate", rate);
    write_json(json, s);
    json.end_object();
    call.out << '\n';
    return 0;
  }
  call.out << "certification rate " << brief(rate) << " with n = " << n << " labels\n"
           << "  pool N = " << N << ", first selection N1 = " << N1 << " with U1 = " << U1
           << " unsafe\n"
           << "  alpha = " << shortest(alpha) << ", delta = " << shortest(delta) << "\n"
           << "  null boundary U* = " << s.null_boundary
           << ", purity margin alpha - U1/N1 = " << describe_margin(s) << "\n"
           << "  " << interpretation(s) << "\n";
  return 0;
}

}  // namespace ltt::cli
