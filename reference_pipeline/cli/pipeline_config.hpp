#pragma once
// `ltt pipeline --config FILE`: the options a previous report.json records, read back so that
// the run can be replayed (docs/cli.md, "Replaying a run"). The report is the config: every
// option it records becomes the value of the flag that sets it, below the command line (a flag
// the user types wins) and above the preset and the flags' defaults. What the report records
// that no flag sets (the hidden widths, the gate's fraction, kappa; the corridor's q and p_s)
// is set on the options directly.
//
//   report key                          flag / option
//   task, preset                        --task, --preset
//   pool.source (a string: a dataset)   --dataset
//   pool.pool_seed, pool.episodes       --pool-seed, --episodes (episodes: generated pools)
//   seeds[].seed (1..S in order)        --seeds S
//   settings.pairs, segment_length, members, value_epochs, policy_epochs, calibration_size,
//            alpha, delta, eval_episodes, validation_draws, behavior_cost_episodes, backend
//                                       --pairs, --segment, --members, --value-epochs,
//                                       --policy-epochs, --n, --alpha, --delta,
//                                       --eval-episodes, --validation-draws,
//                                       --behavior-cost-episodes, --backend
//   settings.normalize_observations     false: --raw-observations
//   settings.value_hidden, policy_hidden, return_weight_kappa, reward_fraction   (options)
//   corridor: trajectories, episodes, seed    --episodes, --eval-episodes, --pool-seed
//   corridor: expert_mass, safe_probability   (options)
//
// The file is parsed by nlohmann-json (strict RFC 8259; members kept in file order): a syntax
// error is refused with its line and column, `--config r.json:3:17: syntax error while parsing
// object key - unexpected '}'; expected string literal`; a key given twice in one object, or
// arrays and objects nested more than 64 deep, with the key where it happened.
//
// The report's results (seconds, methods, certificate, the per-seed records, the pool's
// counts, the task's budget and cost range) are known keys and not read. Any other key, or a
// value of the wrong kind, is refused with BadInput naming the key: `--config r.json:
// settings.alfa: not an option a pipeline report records`. A value is checked by the flag's own
// parser, so range errors name both: `settings.alpha: --alpha: 1.5 must lie in (0, 1)`.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include <certification/bad_input.hpp>
#include <certification/format.hpp>
#include <certification/table_reader.hpp>

#include "arguments.hpp"

namespace ltt::cli {

struct PipelineConfig {
  std::string task;  // the report's task, "" when it names none
  // flag name (without "--") and its value as text ("" for a boolean flag that is set)
  std::vector<std::pair<std::string, std::string>> flags;
  std::optional<std::vector<std::int64_t>> value_hidden, policy_hidden;
  std::optional<double> return_weight_kappa, reward_fraction;
  std::optional<double> expert_mass, safe_probability;  // the corridor study's q and p_s

  // The flags to append to the command line: those the user did not type.
  std::vector<std::string> missing_flags(const Arguments& typed) const {
    std::vector<std::string> out;
    for (const auto& [name, value] : flags)
      if (!typed.given(name))
        out.push_back(value.empty() ? cat("--", name) : cat("--", name, "=", value));
    return out;
  }
};

// A pipeline report is tens of kilobytes; a config file may not exceed this.
inline constexpr std::size_t max_config_bytes = std::size_t{1} << 22;
// Hidden layers a config may ask for (a network's parameters grow with the square of the width).
inline constexpr std::int64_t max_config_width = 4096;
inline constexpr std::size_t max_config_layers = 8;

namespace detail {

using Json = nlohmann::ordered_json;

enum class JsonKind { null, boolean, number, string, array, object };

inline JsonKind kind_of(const Json& v) {
  if (v.is_boolean()) return JsonKind::boolean;
  if (v.is_number()) return JsonKind::number;
  if (v.is_string()) return JsonKind::string;
  if (v.is_array()) return JsonKind::array;
  if (v.is_object()) return JsonKind::object;
  return JsonKind::null;
}

// "a number", "an object": for messages about a value of the wrong kind.
inline std::string_view kind_name(JsonKind kind) {
  switch (kind) {
    case JsonKind::null:
      return "null";
    case JsonKind::boolean:
      return "a boolean";
    case JsonKind::number:
      return "a number";
    case JsonKind::string:
      return "a string";
    case JsonKind::array:
      return "an array";
    case JsonKind::object:
      return "an object";
  }
  return "?";
}

// A string's contents, or a number as the flag's parser reads it: an integer's digits, a
// float's shortest form that reads back to the same double ("0.1", "1e-05", "25.0").
inline std::string json_text(const Json& v) {
  return v.is_string() ? v.get<std::string>() : v.dump();
}

// The member named key of an object, or nullptr.
inline const Json* json_member(const Json& object, std::string_view key) {
  const auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

// Parses a config's text; what nlohmann-json refuses comes back as BadInput naming the file
// with the line and column ("--config r.json:3:17: ..."), bytes outside printable ASCII in its
// quote of the text as '?', so that the refusal is one line. Its parser does not recurse, and
// the callback stops a duplicate key or depth past max_depth as the parse reaches it.
inline Json parse_config_text(std::string_view text, const std::string& file, int max_depth = 64) {
  std::vector<std::vector<std::string>> keys;  // the keys of each object being read, innermost last
  std::vector<std::string> path;               // the key each open object was reached by
  std::string last_key;
  const auto where = [&] {
    std::string at;
    for (const std::string& k : path) at = at.empty() ? k : cat(at, ".", k);
    return at.empty() ? std::string("the top level") : at;
  };
  const Json::parser_callback_t check = [&](int depth, Json::parse_event_t event, Json& parsed) {
    using E = Json::parse_event_t;
    if ((event == E::object_start || event == E::array_start) && depth >= max_depth)
      throw BadInput(cat("--config ", file, ": ", where(), ": arrays and objects nested more than ",
                         std::to_string(max_depth), " deep"));
    if (event == E::object_start) {
      if (!keys.empty()) path.push_back(last_key);
      keys.emplace_back();
    } else if (event == E::object_end) {
      keys.pop_back();
      if (!path.empty() && keys.size() == path.size()) path.pop_back();
    } else if (event == E::key) {
      last_key = parsed.get<std::string>();
      std::vector<std::string>& seen = keys.back();
      if (std::find(seen.begin(), seen.end(), last_key) != seen.end())
        throw BadInput(
            cat("--config ", file, ": ", where(), ": the key \"", last_key, "\" appears twice"));
      seen.push_back(last_key);
    }
    return true;
  };
  try {
    return Json::parse(text.begin(), text.end(), check);
  } catch (const Json::parse_error& e) {
    // what(): "[json.exception.parse_error.101] parse error at line L, column C: message"
    std::string what = e.what();
    const std::size_t at = what.find(" at line ");
    const std::size_t comma = what.find(", column ", at);
    const std::size_t colon = what.find(": ", comma);
    if (at == std::string::npos || comma == std::string::npos || colon == std::string::npos)
      throw BadInput(cat("--config ", file, ": byte ", std::to_string(e.byte), ": ", what));
    for (char& c : what)
      if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
    throw BadInput(cat("--config ", file, ":", what.substr(at + 9, comma - at - 9), ":",
                       what.substr(comma + 9, colon - comma - 9), ": ", what.substr(colon + 2)));
  } catch (const Json::out_of_range& e) {  // a number past a double's range: "number overflow"
    std::string what = e.what();
    const std::size_t bracket = what.find("] ");
    throw BadInput(cat("--config ", file, ": ",
                       bracket == std::string::npos ? what : what.substr(bracket + 2)));
  }
}

// A key of the report and the flag whose value it is.
struct ConfigFlag {
  std::string_view key, flag;
};

inline constexpr ConfigFlag report_flags[] = {{"task", "task"}, {"preset", "preset"}};
inline constexpr ConfigFlag pool_flags[] = {{"pool_seed", "pool-seed"}};
inline constexpr ConfigFlag settings_flags[] = {{"pairs", "pairs"},
                                                {"segment_length", "segment"},
                                                {"members", "members"},
                                                {"value_epochs", "value-epochs"},
                                                {"policy_epochs", "policy-epochs"},
                                                {"calibration_size", "n"},
                                                {"alpha", "alpha"},
                                                {"delta", "delta"},
                                                {"eval_episodes", "eval-episodes"},
                                                {"validation_draws", "validation-draws"},
                                                {"behavior_cost_episodes",
                                                 "behavior-cost-episodes"},
                                                {"backend", "backend"}};
inline constexpr ConfigFlag corridor_flags[] = {{"task", "task"},
                                                {"trajectories", "episodes"},
                                                {"episodes", "eval-episodes"},
                                                {"seed", "pool-seed"}};

class ConfigReader {
 public:
  ConfigReader(std::string file, std::span<const Flag> table)
      : file_(std::move(file)), table_(table) {}

  PipelineConfig read(const Json& report) {
    need("the top level", report, JsonKind::object);
    if (const Json* task = json_member(report, "task")) {
      need("task", *task, JsonKind::string);
      config_.task = json_text(*task);
    }
    if (config_.task == "corridor")
      corridor(report);
    else
      pipeline(report);
    return std::move(config_);
  }

 private:
  [[noreturn]] void refuse(std::string_view key, std::string_view what) const {
    throw BadInput(cat("--config ", file_, ": ", key, ": ", what));
  }

  void need(std::string_view key, const Json& v, JsonKind kind) const {
    if (kind_of(v) != kind)
      refuse(key, cat(kind_name(kind_of(v)), " where ", kind_name(kind), " is due"));
  }

  double real(std::string_view key, const Json& v) const {
    need(key, v, JsonKind::number);
    return v.get<double>();
  }

  const Flag& flag_named(std::string_view name) const {
    for (const Flag& f : table_)
      if (f.name == name) return f;
    throw std::logic_error(cat("ConfigReader: no flag --", name));
  }

  // v as the value of --flag: a number for a numeric flag, a string for a text flag, a boolean
  // for a boolean flag (false leaves it unset).
  void set_flag(std::string_view key, const Json& v, std::string_view flag) {
    switch (flag_named(flag).kind) {
      case FlagKind::count:
      case FlagKind::open_unit:
      case FlagKind::unit:
        need(key, v, JsonKind::number);
        break;
      case FlagKind::text:
      case FlagKind::paths:  // one path in a config (the pipeline reads one file)
        need(key, v, JsonKind::string);
        break;
      case FlagKind::boolean:
        need(key, v, JsonKind::boolean);
        if (v.get<bool>()) add_flag(key, flag, "");
        return;
    }
    add_flag(key, flag, json_text(v));
  }

  // --flag=text ("" for a boolean), checked now by the flag's own parser, so that a bad value
  // is reported against the key rather than as if the user had typed it.
  void add_flag(std::string_view key, std::string_view flag, std::string text) {
    Flag alone = flag_named(flag);
    alone.required = false;
    const Command one{"pipeline", "", std::span(&alone, 1)};
    const std::string token =
        alone.kind == FlagKind::boolean ? cat("--", flag) : cat("--", flag, "=", text);
    const std::string_view args[] = {token};
    try {
      (void)parse(one, args);
    } catch (const BadInput& e) {
      refuse(key, e.what());
    }
    config_.flags.emplace_back(std::string(flag), std::move(text));
  }

  std::vector<std::int64_t> widths(std::string_view key, const Json& v) const {
    need(key, v, JsonKind::array);
    if (v.empty() || v.size() > max_config_layers)
      refuse(key,
             cat("a network needs 1 to ", std::to_string(max_config_layers), " hidden layers"));
    std::vector<std::int64_t> out;
    for (const Json& w : v) {
      need(key, w, JsonKind::number);
      const double width = w.get<double>();
      if (!(width >= 1 && width <= static_cast<double>(max_config_width)) ||
          width != static_cast<double>(static_cast<std::int64_t>(width)))
        refuse(key, cat(json_text(w), " is not a width in [1, ", std::to_string(max_config_width),
                        "] (the parameters grow with the square of the width)"));
      out.push_back(static_cast<std::int64_t>(width));
    }
    return out;
  }

  // Every member of `object` (`where.key` in messages): a key of `flags` sets its flag, a key
  // of `results` is known and not read, and any other goes to `other`, which says whether it
  // knew the key.
  template <class Other>
  void members(const Json& object, std::string_view where, std::span<const ConfigFlag> flags,
               std::initializer_list<std::string_view> results, Other other) {
    need(where.empty() ? "the top level" : where, object, JsonKind::object);
    for (auto member = object.begin(); member != object.end(); ++member) {
      // not a structured binding: clang 14 (the fuzz build) cannot capture one in a lambda
      const std::string& name = member.key();
      const Json& value = member.value();
      const std::string key = where.empty() ? name : cat(where, ".", name);
      const auto mapped = std::find_if(flags.begin(), flags.end(),
                                       [&](const ConfigFlag& f) { return f.key == name; });
      if (mapped != flags.end())
        set_flag(key, value, mapped->flag);
      else if (std::find(results.begin(), results.end(), name) == results.end() &&
               !other(key, name, value))
        refuse(key, cat("not an option a ", config_.task == "corridor" ? "corridor" : "pipeline",
                        " report records"));
    }
  }

  void pipeline(const Json& report) {
    members(report, "", report_flags,
            {"budget", "seconds", "certified_seeds", "methods", "certificate"},
            [&](const std::string& key, std::string_view name, const Json& v) {
              if (name == "pool")
                pool(key, v);
              else if (name == "settings")
                settings(key, v);
              else if (name == "seeds")
                seeds(key, v);
              else
                return false;
              return true;
            });
  }

  void pool(const std::string& where, const Json& pool) {
    // pool.source is the --dataset of the run, null for a generated pool; with a dataset the
    // episodes are the file's, recorded and not an option.
    const Json* source = pool.is_object() ? json_member(pool, "source") : nullptr;
    const bool dataset = source != nullptr && !source->is_null();
    members(pool, where, pool_flags, {"transitions", "unsafe", "mean_return", "mean_cost"},
            [&](const std::string& key, std::string_view name, const Json& v) {
              if (name == "source") {
                if (dataset) set_flag(key, v, "dataset");
              } else if (name == "episodes") {
                if (dataset)
                  need(key, v, JsonKind::number);
                else
                  set_flag(key, v, "episodes");
              } else {
                return false;
              }
              return true;
            });
  }

  void settings(const std::string& where, const Json& settings) {
    // "observations" spells normalize_observations out ("z-scored" or "raw"); either sets it.
    std::optional<bool> normalized, z_scored;
    members(settings, where, settings_flags, {"cost_range"},
            [&](const std::string& key, std::string_view name, const Json& v) {
              if (name == "normalize_observations") {
                need(key, v, JsonKind::boolean);
                normalized = v.get<bool>();
              } else if (name == "observations") {
                need(key, v, JsonKind::string);
                const std::string text = json_text(v);
                if (text != "z-scored" && text != "raw")
                  refuse(key, cat(in_quotes(text), " is neither 'z-scored' nor 'raw'"));
                z_scored = text == "z-scored";
              } else if (name == "value_hidden") {
                config_.value_hidden = widths(key, v);
              } else if (name == "policy_hidden") {
                config_.policy_hidden = widths(key, v);
              } else if (name == "return_weight_kappa") {
                config_.return_weight_kappa = real(key, v);
              } else if (name == "reward_fraction") {
                config_.reward_fraction = real(key, v);
              } else {
                return false;
              }
              return true;
            });
    if (normalized && z_scored && *normalized != *z_scored)
      refuse(cat(where, ".observations"),
             cat(*z_scored ? "'z-scored'" : "'raw'",
                 " contradicts normalize_observations = ", *normalized ? "true" : "false"));
    if (!normalized.value_or(z_scored.value_or(true)))
      add_flag(cat(where, ".normalize_observations"), "raw-observations", "");
  }

  // The report's seeds are 1..S, as --seeds S runs them; the rest of each record is results.
  void seeds(const std::string& where, const Json& seeds) {
    need(where, seeds, JsonKind::array);
    if (seeds.empty()) refuse(where, "an empty list (a run has at least one seed)");
    for (std::size_t i = 0; i < seeds.size(); ++i) {
      const std::string record = cat(where, "[", std::to_string(i), "]");
      need(record, seeds[i], JsonKind::object);
      const Json* seed = json_member(seeds[i], "seed");
      if (seed == nullptr) refuse(record, "no 'seed'");
      need(cat(record, ".seed"), *seed, JsonKind::number);
      if (seed->get<double>() != static_cast<double>(i + 1))
        refuse(cat(record, ".seed"), cat(json_text(*seed), " where ", std::to_string(i + 1),
                                         " is due (--seeds S runs seeds 1..S in order)"));
    }
    add_flag(where, "seeds", std::to_string(seeds.size()));
  }

  void corridor(const Json& report) {
    members(report, "", corridor_flags,
            {"budget", "seconds", "methods_horizon", "methods", "certificate", "certificate_note",
             "pool_unsafe_fraction", "rows"},
            [&](const std::string& key, std::string_view name, const Json& v) {
              if (name == "expert_mass")
                config_.expert_mass = real(key, v);
              else if (name == "safe_probability")
                config_.safe_probability = real(key, v);
              else
                return false;
              return true;
            });
  }

  std::string file_;
  std::span<const Flag> table_;
  PipelineConfig config_;
};

}  // namespace detail

// Reads FILE (at most max_config_bytes, strict JSON) as a pipeline report's options, each
// checked against the flag table of `ltt pipeline`. BadInput names the file and the key, or the
// line and column of a syntax error. parse_pipeline_config reads the text itself (file names it
// in messages): what tests/fuzz/fuzz_config.cpp calls.
inline PipelineConfig parse_pipeline_config(std::string_view text, const std::string& file,
                                            std::span<const Flag> table) {
  return detail::ConfigReader(file, table).read(detail::parse_config_text(text, file));
}

inline PipelineConfig read_pipeline_config(const std::string& file, std::span<const Flag> table) {
  return parse_pipeline_config(read_whole_file(file, max_config_bytes), file, table);
}

}  // namespace ltt::cli
