// libFuzzer target: the program's flag parser (reference_pipeline/cli/arguments.hpp), the
// parse() every subcommand runs through parse_or_help, followed by the flag readers that
// `ltt certify` calls before any file is opened. Parsing only: nothing here reads a data file,
// writes one, or starts work.
//
// Input: the command line after `ltt`, as tokens. When the input holds a NUL byte the tokens
// are split on NUL alone (a token may then hold spaces or be empty); otherwise on whitespace,
// so a seed reads like a shell line. The first token picks the flag table:
//   certify   `ltt certify`'s table (certify_flags), then its flag readers
//   score     `ltt score`'s table (scoring_flags()); not read_score_settings, which needs
//             ltt_learning (its Eigen kernels would double the fuzz build's time in CI)
//   other     a table with a flag of every kind, default, maximum and requirement the
//             subcommands use, read back through every accessor

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "arguments.hpp"
#include "certification_flags.hpp"
#include "curation_flags.hpp"
#include "fuzz_support.hpp"
#include "safety_scoring.hpp"

namespace {

using namespace ltt::cli;
using ltt::fuzz::accepted;
using ltt::fuzz::check;

constexpr Flag every_kind_flags[] = {
    {"N", FlagKind::count, "a required count", {}, true},
    {"draws", FlagKind::count, "a count with a default and a maximum", "1000", false, 1 << 20,
     "one result is kept per draw"},
    {"n-max", FlagKind::count, "an optional count"},
    {"alpha", FlagKind::open_unit, "in (0, 1)", "0.25"},
    {"target", FlagKind::unit, "in [0, 1]"},
    {"json", FlagKind::boolean, "a switch"},
    {"out", FlagKind::text, "a file name"},
    {"grid", FlagKind::text, "a list of quantiles", "0.85,0.8,0.75"},
    {"dataset", FlagKind::paths, "one or more file names"},
};
constexpr Command every_kind{"every-kind", "Flags of every kind.", every_kind_flags};

std::vector<std::string_view> tokens(std::string_view bytes) {
  std::vector<std::string_view> t;
  if (bytes.find('\0') != std::string_view::npos) {
    for (;;) {
      const std::size_t end = bytes.find('\0');
      t.push_back(bytes.substr(0, end));
      if (end == std::string_view::npos) break;
      bytes.remove_prefix(end + 1);
    }
    return t;
  }
  constexpr std::string_view space = " \t\n\r\v\f";
  for (std::size_t at = bytes.find_first_not_of(space); at != std::string_view::npos;) {
    const std::size_t end = bytes.find_first_of(space, at);
    t.push_back(bytes.substr(at, end - at));
    at = end == std::string_view::npos ? end : bytes.find_first_not_of(space, end);
  }
  return t;
}

// What the table promises about parse()'s result: every flag reads back as its kind, a
// required one has a value, a count stays within its maximum, a real within its interval.
void read_back(const Command& command, const Arguments& args) {
  for (const Flag& f : command.flags) {
    const bool has = args.has(f.name);
    check(!args.given(f.name) || has || f.kind == FlagKind::boolean,
          "a flag given with a value has it");
    check(!f.required || has, "a required flag has a value");
    check(f.default_value.empty() || f.kind == FlagKind::boolean || has,
          "a flag with a default has a value");
    switch (f.kind) {
      case FlagKind::count:
        if (has) {
          const std::int64_t n = args.count(f.name);
          check(n >= 0 && n <= f.maximum, "a count lies in [0, maximum]");
          check(args.optional_count(f.name) == n, "optional_count agrees with count");
        }
        break;
      case FlagKind::open_unit:
        if (has) check(args.real(f.name) > 0.0 && args.real(f.name) < 1.0, "in (0, 1)");
        break;
      case FlagKind::unit:
        if (has) check(args.real(f.name) >= 0.0 && args.real(f.name) <= 1.0, "in [0, 1]");
        break;
      case FlagKind::boolean:
        check(args.flag(f.name) == args.given(f.name), "a switch");
        break;
      case FlagKind::text:
        if (has) static_cast<void>(args.text(f.name));
        break;
      case FlagKind::paths:
        if (has) {
          check(!args.texts(f.name).empty(), "a paths flag with a value has one at least");
          for (const std::string& name : args.texts(f.name))
            check(!name.empty(), "a path is never empty");
        }
        break;
    }
  }
}

// The flag readers `ltt certify` calls before reading any file (certify.cpp, certification.hpp).
void certify_readers(const Arguments& args) {
  Inputs in;
  static_cast<void>(accepted([&] {
    read_label_flags(args, in);
    return true;
  }));
  static_cast<void>(accepted([&] { return read_aggregator(args, in.aggregation_name); }));
  if (const auto options =
          accepted([&] { return read_selection_flags(args, in); })) {
    check(!options->quantiles.empty(), "--grid: at least one quantile");
    for (std::size_t j = 0; j < options->quantiles.size(); ++j)
      check(options->quantiles[j] >= 0.0 && options->quantiles[j] <= 1.0 &&
                (j == 0 || options->quantiles[j] < options->quantiles[j - 1]),
            "--grid: quantiles in [0, 1], strictly decreasing");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::vector<std::string_view> t =
      tokens(std::string_view(reinterpret_cast<const char*>(data), size));
  const std::string_view name = t.empty() ? std::string_view() : t.front();

  const Command certify{"certify", "`ltt certify`", certify_flags};
  const Command score{"score", "`ltt score`", scoring_flags()};
  const Command& command = name == "certify" ? certify : name == "score" ? score : every_kind;
  // After a subcommand's name come its flags; every token is a flag of the other table.
  const std::span<const std::string_view> args =
      &command == &every_kind ? std::span<const std::string_view>(t)
                              : std::span<const std::string_view>(t).subspan(1);

  const auto parsed = accepted([&] { return parse(command, args); });
  if (!parsed) return 0;
  if (parsed->help()) {
    check(!usage(command).empty(), "--help prints a usage");
    return 0;
  }
  read_back(command, *parsed);
  if (&command == &certify) certify_readers(*parsed);
  return 0;
}
