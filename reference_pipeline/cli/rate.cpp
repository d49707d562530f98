// ltt rate: the exact certification rate of the strict fixed-sequence walk for a pool of N
// whose first selection holds N1 trajectories, U1 of them unsafe, with n calibration labels
// (paper, Proposition "certification rate"; ltt::certification_rate).

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <ltt/certification_rate.hpp>

#include <certification/format.hpp>

#include "first_selection.hpp"
#include "subcommand.hpp"

namespace ltt::cli {

namespace rate_subcommand {

const Command& rate_command() {
  static const std::vector<Flag> flags = first_selection_flags(
      {}, {},
      {"n", FlagKind::count, "calibration labels, drawn uniformly without replacement", {}, true});
  static const Command command{
      "rate",
      "The probability that the strict fixed-sequence walk certifies its first selection S_1\n"
      "(N1 of the pool's N trajectories, U1 of them unsafe) with n calibration labels, in\n"
      "closed form. Also prints the null boundary U* = floor(alpha N1) + 1 and the purity\n"
      "margin alpha - U1/N1.",
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

}  // namespace rate_subcommand

int run_rate(const Invocation& call) {
  using namespace rate_subcommand;
  const auto args = parse_or_help(rate_command(), call);
  if (!args) return 0;
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
