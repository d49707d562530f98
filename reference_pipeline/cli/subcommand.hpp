#pragma once
// What every subcommand of the `ltt` program sees, and the table main() dispatches on.
//
// Adding `ltt NAME`: write reference_pipeline/cli/NAME.cpp defining
//     int ltt::cli::run_NAME(const Invocation& call);
// and add one line X(NAME, "one-line summary") to LTT_CLI_SUBCOMMANDS below; CMake picks the
// new file up by itself. The file's own pieces go in namespace ltt::cli::NAME_subcommand, not
// an anonymous one, since the program is compiled as one unity file (each subcommand's Request
// would meet the others'); run_NAME opens it with a using-directive. The function parses call.args with parse_or_help, computes
// everything, then writes its human summary or its one JSON object to call.out. It throws
// BadInput (or lets the libraries' std::invalid_argument through) for input a user can fix;
// main() turns either into exit 2 with a one-line message, and writes nothing of call.out.

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <future>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include <certification/bad_input.hpp>
#include <certification/format.hpp>

#include "arguments.hpp"

namespace ltt::cli {

struct Invocation {
  std::string_view name;                   // the subcommand, for messages
  std::span<const std::string_view> args;  // everything after the subcommand
  std::ostream& out;  // standard output, buffered: it reaches stdout only on success
  std::ostream& err;  // standard error, unbuffered: warnings and progress
};

// The table: X(name, summary), one line per subcommand, in the order `ltt --help` lists them.
#define LTT_CLI_SUBCOMMANDS(X)                                                                     \
  X(rate, "certification rate of the first selection (closed form)")                               \
  X(certify, "calibrated selection from a pool and labels: certificate or refusal")                \
  X(validate, "resample calibration draws on a labeled pool: false certification, rate, triple")   \
  X(budget, "label budget for a target certification rate; --curve prints rate(n)")                \
  X(pipeline, "the reference pipeline end to end on a built-in task, with its report")             \
  X(score,                                                                                         \
    "learn the safety value on a DSRL dataset; write per-row values, episode scores, model")       \
  X(curate, "score a DSRL dataset, certify a threshold, write the selected episodes: one command") \
  X(draw, "the episode ids to label: the uniform draw of --draw N --seed S")                     \
  X(label, "a local page for budget labels (live certificate) or segment comparisons")           \
  X(behavior, "train a behavior policy by PPO-Lagrangian; collect a DSRL dataset from its run")

#define LTT_CLI_DECLARE(name, summary) int run_##name(const Invocation& call);
LTT_CLI_SUBCOMMANDS(LTT_CLI_DECLARE)
#undef LTT_CLI_DECLARE

// Parses the arguments; on --help prints the usage to call.out and returns nullopt.
inline std::optional<Arguments> parse_or_help(const Command& command, const Invocation& call) {
  Arguments args = parse(command, call.args);
  if (args.help()) {
    call.out << usage(command);
    return std::nullopt;
  }
  return args;
}

// A relation between two count flags that the table alone cannot express (N1 <= N).
inline void require_not_above(const Arguments& args, std::string_view flag,
                              std::string_view bound) {
  if (args.count(flag) > args.count(bound))
    throw BadInput(cat("--", flag, ": ", std::to_string(args.count(flag)), " must not exceed --",
                       bound, " = ", std::to_string(args.count(bound))));
}

// Runs work() and returns what it returns (exceptions pass through). When standard error is
// a terminal and the work outlasts a second, shows `ltt <name>: <what> (12 s)` there, updated
// each second and erased at the end; pipes and logs never see it. The libraries' long loops
// (a rate curve over a million n) offer no progress hook, so the line counts elapsed time.
template <class Work>
auto with_status(const Invocation& call, std::string_view what, Work work) {
  if (::isatty(STDERR_FILENO) != 1) return work();
  auto result = std::async(std::launch::async, std::move(work));
  int seconds = 0;
  bool shown = false;
  while (result.wait_for(std::chrono::seconds(1)) != std::future_status::ready) {
    call.err << "\rltt " << call.name << ": " << what << " (" << ++seconds << " s)" << std::flush;
    shown = true;
  }
  if (shown) call.err << "\r\033[K" << std::flush;
  return result.get();
}

}  // namespace ltt::cli
