// libFuzzer target: `ltt pipeline --config FILE` (reference_pipeline/cli/pipeline_config.hpp),
// the report read back as options: nlohmann-json's parse with the reader's callback (duplicate
// keys, nesting), then every key checked against `ltt pipeline`'s flag table. Parsing only:
// no pipeline runs.
//
// Input: the bytes of a config file. A config that is accepted must hand `ltt pipeline` flags
// its own parser accepts, each at most once, and hidden widths within the limits.

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "arguments.hpp"
#include "fuzz_support.hpp"
#include "pipeline_config.hpp"
#include "pipeline_flags.hpp"

namespace {

using namespace ltt::cli;
using ltt::fuzz::accepted;
using ltt::fuzz::check;

constexpr Command pipeline_command{"pipeline", "", pipeline_flags};

void check_widths(const std::optional<std::vector<std::int64_t>>& hidden) {
  if (!hidden) return;
  check(!hidden->empty() && hidden->size() <= max_config_layers, "1 to 8 hidden layers");
  for (const std::int64_t w : *hidden)
    check(w >= 1 && w <= max_config_width, "a width in [1, 4096]");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > max_config_bytes) return 0;  // read_whole_file refuses it before the parser
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto config =
      accepted([&] { return parse_pipeline_config(text, "fuzz.json", pipeline_flags); });
  if (!config) return 0;
  std::set<std::string> names;
  for (const auto& [name, value] : config->flags)
    check(names.insert(name).second, "each flag set once by a config");
  const std::string_view out[] = {"--out", "o"};
  const Arguments typed = parse(pipeline_command, out);
  const std::vector<std::string> tokens = config->missing_flags(typed);
  std::vector<std::string_view> line(tokens.begin(), tokens.end());
  line.insert(line.end(), {"--out", "o"});
  check(accepted([&] { return parse(pipeline_command, line); }).has_value(),
        "the flags a config sets parse as `ltt pipeline` flags");
  check_widths(config->value_hidden);
  check_widths(config->policy_hidden);
  return 0;
}
