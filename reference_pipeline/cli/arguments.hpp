#pragma once
// The program's argument parser. A subcommand describes its flags once, in a table of Flag;
// the same table drives parsing, validation and the --help text.
//
//   constexpr Flag flags[] = {
//       {"N", FlagKind::count, "pool size", {}, true},
//       {"alpha", FlagKind::open_unit, "target unsafe fraction", "0.25"},
//       {"json", FlagKind::boolean, "print one JSON object"}};
//   constexpr Command command{"rate", "what it does", flags};
//   const Arguments args = parse(command, argv_tail);   // throws BadInput
//   args.count("N"); args.real("alpha"); args.flag("json");
//
// Accepted forms: `--name value`, `--name=value`, and `--name` alone for booleans; a flag of
// kind `paths` takes one or more values (`--dataset a.hdf5 b.hdf5`, what a shell glob expands
// to) and may be repeated, its values kept in order. A value may begin with a single '-' (so
// `--n -3` is read, then refused as out of range); a token beginning with "--" is never taken
// as a value. Each malformed input throws BadInput whose
// message names the flag: unknown flag, missing value, a value given to a boolean, a flag
// given twice, a missing required flag, a non-numeric, fractional or out-of-range number.
// `--help` (or `-h`) anywhere sets help() and skips every other check.

#include <charconv>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <certification/bad_input.hpp>
#include <certification/format.hpp>

namespace ltt::cli {

// The commands use the names of the certification room (reference_pipeline/certification/,
// below both cli/ and label/) unqualified: BadInput, the program's text (cat, in_quotes,
// JsonWriter, ...), tables, pool files, output rules, the certification stage.
using namespace ltt::certification;

enum class FlagKind {
  count,      // integer in [0, 2^53]; "1e6" and "2000.0" are accepted when exactly whole
  open_unit,  // real in (0, 1): alpha, delta
  unit,       // real in [0, 1]: a target rate
  boolean,    // present or not; takes no value
  text,       // any string: a file name, a task name
  paths,      // one or more strings (file names): every token up to the next flag
};

// Counts go up to 2^53, the largest population the libraries accept (ltt::detail::max_count).
inline constexpr std::int64_t max_count = std::int64_t{1} << 53;

struct Flag {
  std::string_view name;  // without the leading "--"
  FlagKind kind;
  std::string_view help;
  std::string_view default_value = {};  // read like user input; empty means no default
  bool required = false;
  // count: the largest value accepted, and why (what the command's work grows with); a larger
  // value is refused at parse time, before any work (docs/cli.md lists them per command).
  std::int64_t maximum = max_count;
  std::string_view maximum_reason = {};
};

struct Command {
  std::string_view name;
  std::string_view description;  // a few lines for --help
  std::span<const Flag> flags;
};

class Arguments {
 public:
  bool help() const { return help_; }
  // The user typed the flag (a default does not count).
  bool given(std::string_view name) const { return find(name).given; }
  // The flag has a value, typed or default.
  bool has(std::string_view name) const { return find(name).present; }

  std::int64_t count(std::string_view name) const { return get(name, FlagKind::count).count; }
  std::optional<std::int64_t> optional_count(std::string_view name) const {
    const Value& v = get_optional(name, FlagKind::count);
    return v.present ? std::optional(v.count) : std::nullopt;
  }
  double real(std::string_view name) const {
    const Value& v = find(name);
    if (v.kind != FlagKind::open_unit && v.kind != FlagKind::unit)
      throw std::logic_error(cat("Arguments: --", name, " is not a real flag"));
    if (!v.present) throw std::logic_error(cat("Arguments: --", name, " has no value"));
    return v.real;
  }
  bool flag(std::string_view name) const { return get_optional(name, FlagKind::boolean).present; }
  const std::string& text(std::string_view name) const { return get(name, FlagKind::text).text; }
  const std::vector<std::string>& texts(std::string_view name) const {
    return get(name, FlagKind::paths).texts;
  }

 private:
  struct Value {
    FlagKind kind = FlagKind::boolean;
    bool present = false;  // typed or defaulted
    bool given = false;    // typed
    std::int64_t count = 0;
    double real = 0.0;
    std::string text;
    std::vector<std::string> texts;  // paths
  };

  const Value& find(std::string_view name) const {
    const auto it = values_.find(name);
    if (it == values_.end())
      throw std::logic_error(cat("Arguments: no flag --", name, " in the table"));
    return it->second;
  }
  const Value& get_optional(std::string_view name, FlagKind kind) const {
    const Value& v = find(name);
    if (v.kind != kind)
      throw std::logic_error(cat("Arguments: --", name, " read as the wrong kind"));
    return v;
  }
  const Value& get(std::string_view name, FlagKind kind) const {
    const Value& v = get_optional(name, kind);
    if (!v.present) throw std::logic_error(cat("Arguments: --", name, " has no value"));
    return v;
  }

  bool help_ = false;
  std::map<std::string, Value, std::less<>> values_;

  friend Arguments parse(const Command& command, std::span<const std::string_view> args);
};

namespace detail {

inline std::optional<double> read_double(std::string_view text) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  double x = 0.0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), x);
  if (ec == std::errc::result_out_of_range) return std::nullopt;
  if (ec != std::errc{} || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return x;
}

inline std::int64_t read_count(std::string_view flag, std::string_view text) {
  const std::string where = cat("--", flag, ": ");
  const std::string range = cat(where, text, " must be a count in [0, 2^53]");
  std::int64_t n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec == std::errc{} && end == text.data() + text.size() && !text.empty()) {
    if (n < 0 || n > max_count) throw BadInput(range);
    return n;
  }
  // Not a plain integer: accept 1e6 or 2000.0 when the value is exactly whole.
  double x = 0.0;
  std::string_view body = text;
  if (!body.empty() && body.front() == '+') body.remove_prefix(1);
  const auto [end2, ec2] = std::from_chars(body.data(), body.data() + body.size(), x);
  const bool parsed = !body.empty() && end2 == body.data() + body.size() &&
                      (ec2 == std::errc{} || ec2 == std::errc::result_out_of_range);
  if (!parsed || std::isnan(x)) throw BadInput(cat(where, in_quotes(text), " is not a number"));
  if (ec2 == std::errc::result_out_of_range || std::isinf(x) || x < 0.0 ||
      x > static_cast<double>(max_count))
    throw BadInput(range);
  if (x != std::floor(x)) throw BadInput(cat(where, in_quotes(text), " is not a whole number"));
  return static_cast<std::int64_t>(x);
}

inline double read_real(std::string_view flag, std::string_view text, FlagKind kind) {
  const std::string where = cat("--", flag, ": ");
  const std::optional<double> x = read_double(text);
  if (!x || std::isnan(*x)) throw BadInput(cat(where, in_quotes(text), " is not a number"));
  if (kind == FlagKind::open_unit && !(*x > 0.0 && *x < 1.0))
    throw BadInput(cat(where, text, " must lie in (0, 1)"));
  if (kind == FlagKind::unit && !(*x >= 0.0 && *x <= 1.0))
    throw BadInput(cat(where, text, " must lie in [0, 1]"));
  return *x;
}

}  // namespace detail

// "--draws: 1e9 exceeds the maximum 1048576 (one result is kept per draw)"
inline std::string above_maximum(const Flag& f, std::string_view text) {
  std::string message =
      cat("--", f.name, ": ", text, " exceeds the maximum ", std::to_string(f.maximum));
  if (!f.maximum_reason.empty()) message += cat(" (", f.maximum_reason, ")");
  return message;
}

inline Arguments parse(const Command& command, std::span<const std::string_view> args) {
  Arguments result;
  for (const std::string_view a : args)
    if (a == "--help" || a == "-h") {
      result.help_ = true;
      return result;
    }

  std::map<std::string_view, const Flag*> table;
  for (const Flag& f : command.flags) {
    table[f.name] = &f;
    result.values_[std::string(f.name)].kind = f.kind;
  }

  const auto store = [&](const Flag& f, std::string_view text) {
    Arguments::Value& v = result.values_.find(f.name)->second;
    v.present = true;
    switch (f.kind) {
      case FlagKind::count:
        v.count = detail::read_count(f.name, text);
        if (v.count > f.maximum) throw BadInput(above_maximum(f, text));
        break;
      case FlagKind::open_unit:
      case FlagKind::unit:
        v.real = detail::read_real(f.name, text, f.kind);
        break;
      case FlagKind::text:
        v.text = std::string(text);
        break;
      case FlagKind::paths:
        v.texts.emplace_back(text);
        break;
      case FlagKind::boolean:
        break;
    }
  };

  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string_view token = args[i];
    if (!token.starts_with("--") || token == "--")
      throw BadInput(cat("unexpected argument ", in_quotes(token), " (flags start with --)"));
    std::string_view name = token.substr(2);
    std::optional<std::string_view> inline_value;
    if (const auto eq = name.find('='); eq != std::string_view::npos) {
      inline_value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    const auto it = table.find(name);
    if (it == table.end())
      throw BadInput(cat("unknown flag --", name, " (see ltt ", command.name, " --help)"));
    const Flag& f = *it->second;
    Arguments::Value& v = result.values_.find(f.name)->second;
    if (v.given && f.kind != FlagKind::paths) throw BadInput(cat("--", name, " given twice"));
    v.given = true;
    if (f.kind == FlagKind::boolean) {
      if (inline_value) throw BadInput(cat("--", name, " takes no value"));
      store(f, {});
      continue;
    }
    if (inline_value) {
      if (inline_value->empty()) throw BadInput(cat("--", name, " needs a value"));
      store(f, *inline_value);
    } else {
      if (i + 1 >= args.size() || args[i + 1].starts_with("--") || args[i + 1].empty())
        throw BadInput(cat("--", name, " needs a value"));
      store(f, args[++i]);
      if (f.kind == FlagKind::paths)
        while (i + 1 < args.size() && !args[i + 1].starts_with("--")) {
          if (args[i + 1].empty()) throw BadInput(cat("--", name, ": an empty name"));
          store(f, args[++i]);
        }
    }
  }

  for (const Flag& f : command.flags) {
    Arguments::Value& v = result.values_.find(f.name)->second;
    if (v.given) continue;
    if (f.required) throw BadInput(cat("missing required flag --", f.name));
    if (!f.default_value.empty()) {
      store(f, f.default_value);
      v.given = false;
    }
  }
  return result;
}

// The --help text: a usage line built from the table, the description, one line per flag.
inline std::string usage(const Command& command) {
  const auto placeholder = [](FlagKind kind) -> std::string_view {
    switch (kind) {
      case FlagKind::count:
        return " <count>";
      case FlagKind::open_unit:
      case FlagKind::unit:
        return " <p>";
      case FlagKind::text:
        return " <value>";
      case FlagKind::paths:
        return " <path>...";
      case FlagKind::boolean:
        return "";
    }
    return "";
  };
  std::string text = cat("usage: ltt ", command.name);
  for (const Flag& f : command.flags) {
    const std::string item = cat("--", f.name, placeholder(f.kind));
    text += f.required ? cat(" ", item) : cat(" [", item, "]");
  }
  text += cat("\n\n", command.description, "\n\nflags:\n");
  std::size_t width = std::string_view("--help").size();
  for (const Flag& f : command.flags)
    width = std::max(width, 2 + f.name.size() + placeholder(f.kind).size());
  const auto line = [&](std::string left, std::string_view help, std::string_view tail) {
    left.resize(width, ' ');
    text += cat("  ", left, "  ", help, tail, "\n");
  };
  for (const Flag& f : command.flags) {
    std::string tail;
    if (f.required) tail = " (required)";
    if (!f.default_value.empty()) tail = cat(" (default ", f.default_value, ")");
    if (f.kind == FlagKind::count && f.maximum < max_count)
      tail += cat(" (at most ", std::to_string(f.maximum), ")");
    line(cat("--", f.name, placeholder(f.kind)), f.help, tail);
  }
  line("--help", "print this help and exit", "");
  return text;
}

}  // namespace ltt::cli
