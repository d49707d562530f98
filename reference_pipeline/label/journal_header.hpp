#pragma once
// The first line of a labeling journal: what fixes the meaning of its answers.
//   {"ltt_label": "budget"|"compare",
//    "inputs": [{"flag": "--dataset", "path": P, "size": N, "sha256": HEX}, ...],
//    "settings": {"seed": S, ...}}
// The inputs are bound by content (input_digest.hpp), not by name: a file replaced at the same
// path would map the recorded answers onto other episodes or pairs. A restart whose header
// differs is refused with one line naming the first difference: the mode, an input (its flag
// and file), or a setting.

#include <algorithm>
#include <string>

#include <nlohmann/json.hpp>

#include <certification/format.hpp>

namespace ltt::label {

// Why a journal begun with `stored` cannot be resumed with `now`; empty when they are equal.
inline std::string header_difference(const nlohmann::json& stored, const nlohmann::json& now) {
  using certification::cat;
  using certification::in_quotes;
  if (stored == now) return {};
  if (!stored.is_object() || !stored.contains("inputs") || !stored.contains("settings") ||
      stored.value("ltt_label", nlohmann::json()) != now["ltt_label"])
    return "the journal of another kind of session, or of an older ltt";
  const nlohmann::json& before = stored["inputs"];
  for (const nlohmann::json& input : now["inputs"]) {
    const std::string flag = input["flag"];
    const auto was = std::find_if(before.begin(), before.end(), [&](const nlohmann::json& b) {
      return b.is_object() && b.value("flag", "") == flag;
    });
    if (was == before.end()) return cat(flag, ": the journal's session was begun without it");
    if ((*was)["path"] != input["path"])
      return cat(flag, ": the journal's session read ", in_quotes((*was)["path"].is_string() ? (*was)["path"].get<std::string>() : (*was)["path"].dump()),
                 ", not ", in_quotes(input["path"].get<std::string>()));
    if ((*was)["size"] != input["size"] || (*was)["sha256"] != input["sha256"])
      return cat(flag, ": ", in_quotes(input["path"].get<std::string>()),
                 " changed since the journal was begun (", (*was)["size"].dump(),
                 " bytes, sha256 ", (*was)["sha256"].dump().substr(1, 12), "...; now ",
                 input["size"].dump(), " bytes, sha256 ",
                 input["sha256"].get<std::string>().substr(0, 12), "...)");
  }
  if (before.size() != now["inputs"].size())
    return "the journal's session read other inputs";
  for (const auto& [key, value] : now["settings"].items())
    if (!stored["settings"].contains(key) || stored["settings"][key] != value)
      return cat("setting '", key, "' = ", value.dump(), ", the journal's session had ",
                 stored["settings"].value(key, nlohmann::json()).dump());
  return "the journal's session had other settings";
}

}  // namespace ltt::label
