#pragma once
// Flag values the curation subcommands share (`ltt certify`, `ltt score`, `ltt curate`,
// `ltt validate`): the --grid list of quantiles, --aggregation with its --percentile (one pair
// of table entries and one parser), the sequential --order, and real numbers given through text
// flags (a cost budget, a clip kappa, a percentile), which the flag table's kinds do not cover,
// and the --memory size of `ltt score` and `ltt curate`.
// Messages name the flag.

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <curation/score_aggregation.hpp>
#include <curation/sequential_options.hpp>

#include <certification/bad_input.hpp>
#include <certification/format.hpp>

#include "arguments.hpp"

namespace ltt::cli {

// A real number in [lo, hi] (NaN refused); range says it in words for the message.
inline double real_in_range(std::string_view flag, std::string_view text, double lo, double hi,
                            std::string_view range) {
  const std::optional<double> x = detail::read_double(text);
  if (!x || std::isnan(*x))
    throw BadInput(cat("--", flag, ": ", in_quotes(text), " is not a number"));
  if (!(*x >= lo && *x <= hi)) throw BadInput(cat("--", flag, ": ", text, " must be ", range));
  return *x;
}

// A finite real number (a cost budget).
inline double finite_real(std::string_view flag, std::string_view text) {
  const std::optional<double> x = detail::read_double(text);
  if (!x || std::isnan(*x))
    throw BadInput(cat("--", flag, ": ", in_quotes(text), " is not a number"));
  if (!std::isfinite(*x)) throw BadInput(cat("--", flag, ": ", text, " must be finite"));
  return *x;
}

// "0.85,0.8,..." -> grid quantiles, each in [0, 1], strictly decreasing (spaces around items
// allowed). The flag is --grid.
inline std::vector<double> grid_quantiles(std::string_view text) {
  std::vector<double> q;
  for (;;) {
    const std::size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    const std::optional<double> x = detail::read_double(item);
    if (!x || std::isnan(*x))
      throw BadInput(cat("--grid: ", in_quotes(item),
                         " is not a number (a comma-separated list of quantiles)"));
    if (!(*x >= 0.0 && *x <= 1.0))
      throw BadInput(cat("--grid: quantile ", item, " must lie in [0, 1]"));
    if (!q.empty() && !(*x < q.back()))
      throw BadInput(cat("--grid: ", item, " is not below ", shortest(q.back()),
                         ": quantiles run from shallow to deep, strictly decreasing"));
    q.push_back(*x);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return q;
}

// --aggregation and --percentile, one pair of entries for every table that takes them;
// `help` says what is aggregated.
inline constexpr Flag aggregation_flag(std::string_view help) {
  return {"aggregation", FlagKind::text, help, "mean"};
}
inline constexpr Flag percentile_flag{"percentile", FlagKind::text,
                                      "percent for --aggregation percentile, in [0, 100]", "10"};

// --aggregation (mean, minimum or percentile of per-state values over a trajectory) and its
// --percentile; `name` receives the text given.
inline curation::Aggregator read_aggregator(const Arguments& args, std::string& name) {
  curation::Aggregator a;
  name = args.text("aggregation");
  const std::optional<curation::Aggregation> kind = curation::aggregation_named(name);
  if (!kind)
    throw BadInput(
        cat("--aggregation: ", in_quotes(name), " is not one of mean, minimum, percentile"));
  a.kind = *kind;
  if (args.given("percentile") && a.kind != curation::Aggregation::percentile)
    throw BadInput("--percentile needs --aggregation percentile");
  a.percentile = real_in_range("percentile", args.text("percentile"), 0.0, 100.0, "in [0, 100]");
  return a;
}

// The paper's grid as --grid's default text (curation::paper_grid_quantiles).
inline constexpr std::string_view paper_grid_text =
    "0.85,0.8,0.75,0.7,0.65,0.6,0.55,0.5,0.45,0.4,0.35,0.3";

// --order of the sequential walk (certify --sequential, validate --procedure sequential).
// Without it the walk's stop rule chooses: the fixed walk (`--stop depth`, the default) reads
// the uniform order, the other rules the stratified one.
inline constexpr Flag label_order_flag{
    "order", FlagKind::text,
    "sequential label order: stratified (labels from the first uncertified selection) or "
    "uniform (the seeded permutation from the top); default: uniform under --stop depth or "
    "auto, stratified under the other rules"};

// The order named by --order, or `fallback` where it is not given.
inline curation::LabelOrder read_label_order(const Arguments& args,
                                             curation::LabelOrder fallback) {
  if (!args.given("order")) return fallback;
  const std::string name = args.text("order");
  try {
    return curation::parse_label_order(name);
  } catch (const std::invalid_argument&) {
    throw BadInput(cat("--order: ", in_quotes(name), " is not one of stratified, uniform"));
  }
}

// --stop's rules, as its refusal names them.
inline constexpr std::string_view stop_rules_text =
    "cap, target:J, stall:L, early-refusal, labels, forecast, depth, auto";

// --stop, then --order where given (curation::apply_stop_rule: `depth` and `auto` set the
// uniform order of the fixed walk, the other rules leave the stratified default); the fixed
// walk in the stratified order is refused.
inline void read_stop_and_order(const Arguments& args, curation::SequentialSelectionOptions& o) {
  const std::string& stop = args.text("stop");
  o.order = curation::LabelOrder::stratified;
  try {
    curation::apply_stop_rule(stop, o);
  } catch (const std::invalid_argument&) {
    throw BadInput(cat("--stop: ", in_quotes(stop), " is not one of ", stop_rules_text));
  }
  o.order = read_label_order(args, o.order);
  if (o.fixed_walk && o.order != curation::LabelOrder::uniform)
    throw BadInput(cat("--order: ", in_quotes(args.text("order")), " does not go with --stop ",
                       stop, " (the fixed walk reads the uniform order; the stratified order "
                       "takes --stop forecast or labels)"));
}

// --refusal-rate of the sequential walk's early refusal (certify --sequential, validate
// --procedure sequential): the user's threshold on the first step's chance of certifying.
inline constexpr Flag refusal_rate_flag{
    "refusal-rate", FlagKind::unit,
    "sequential early refusal (--stop early-refusal or auto): refuse once the first step is "
    "still certified with probability at most this",
    "0.05"};

inline curation::LabelOrder read_label_order(const Arguments& args) {
  const std::string name = args.text("order");
  try {
    return curation::parse_label_order(name);
  } catch (const std::invalid_argument&) {
    throw BadInput(cat("--order: ", in_quotes(name), " is not one of stratified, uniform"));
  }
}

// --memory: a count of bytes, with an optional unit as people write sizes: K, M, G, T, each
// also as KB/KiB, MB/MiB, GB/GiB, TB/TiB (either case), and B for bytes. Every unit is a
// power of 1024 (MB as MiB: a memory budget, as `free` and docker's --memory read it):
// "1G", "512MiB", "64MB", "300000", "300000B".
inline std::int64_t memory_bytes(std::string_view text) {
  constexpr std::string_view prefixes = "kmgt";  // 1024^1 .. 1024^4
  const auto lower = [](char c) {
    return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  };
  const std::size_t digits_end = text.find_first_not_of("0123456789");
  const std::string_view digits = text.substr(0, digits_end);
  std::string unit;
  if (digits_end != std::string_view::npos)
    for (const char c : text.substr(digits_end)) unit += lower(c);
  std::int64_t scale = 1;
  bool known = unit.empty() || unit == "b";
  if (!known && prefixes.find(unit[0]) != std::string_view::npos &&
      (unit.size() == 1 || unit.substr(1) == "b" || unit.substr(1) == "ib")) {
    scale = std::int64_t{1} << (10 * (prefixes.find(unit[0]) + 1));
    known = true;
  }
  std::int64_t n = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (!known || digits.empty() || ec != std::errc{} || end != digits.data() + digits.size() ||
      n < 1 || n > (std::int64_t{1} << 50) / scale)
    throw BadInput(cat("--memory: ", in_quotes(text),
                       " is not a size in bytes (a positive count, optionally with K, M, G or T, "
                       "also written KB or KiB, ...: 512M, 64MiB, 1GB)"));
  return n * scale;
}

}  // namespace ltt::cli
