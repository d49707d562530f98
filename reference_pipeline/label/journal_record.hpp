#pragma once
// One record of a labeling journal (journal.hpp), read strictly: a record means exactly what
// the page's request meant when it was appended, or the journal is refused. Three kinds, and
// nothing else:
//   {"answer": WORD, "item": ID}   WORD one of the session's words (over/within; a/b/tie)
//   {"undo": ID}                    takes back the last answer, whose item is ID
//   {"written": N}                  the session's files written after N answers
// A record of another shape, a word that differs in any byte ("Over", "unsafe", 1), a missing
// or non-string item: a BadInput naming the file, the line and the field. Never a default: a
// lenient reader once replayed a hand-edited "Over" as within, the unsafe direction for a
// certificate.

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <certification/bad_input.hpp>
#include <certification/format.hpp>

namespace ltt::label {

enum class RecordKind { answer, undo, written };

struct JournalRecord {
  RecordKind kind = RecordKind::answer;
  std::size_t line = 0;  // 1 is the header
  std::string item;      // answer, undo
  std::string word;      // answer
  std::int64_t written = 0;
};

// "FILE line N: ", the start of every message about a record.
inline std::string record_place(const std::filesystem::path& file, std::size_t line) {
  return certification::cat("--out: ", file.string(), " line ", std::to_string(line), ": ");
}

// A record as a message shows it: its JSON, cut at 80 characters.
inline std::string shown(const nlohmann::json& value) {
  const std::string text = value.dump();
  return text.size() <= 80 ? text : text.substr(0, 77) + "...";
}

inline JournalRecord read_record(const std::filesystem::path& file, std::size_t line,
                                 const nlohmann::json& value,
                                 const std::vector<std::string>& words) {
  using certification::BadInput;
  using certification::cat;
  const std::string at = record_place(file, line);
  if (!value.is_object())
    throw BadInput(cat(at, "not a JSON object: ", shown(value)));
  const auto only = [&](std::initializer_list<const char*> keys) {
    for (const char* key : keys)
      if (!value.contains(key))
        throw BadInput(cat(at, "field '", key, "' is missing: ", shown(value)));
    if (value.size() != keys.size())
      throw BadInput(cat(at, "a record with fields other than those of its kind: ", shown(value)));
  };
  const auto text = [&](const char* key) {
    const nlohmann::json& v = value.at(key);
    if (!v.is_string())
      throw BadInput(cat(at, "field '", key, "' = ", shown(v), " is not a string"));
    return v.get<std::string>();
  };
  JournalRecord r;
  r.line = line;
  if (value.contains("answer")) {
    only({"answer", "item"});
    r.kind = RecordKind::answer;
    r.item = text("item");
    const nlohmann::json& word = value.at("answer");
    if (!word.is_string() || std::find(words.begin(), words.end(), word.get<std::string>()) ==
                                 words.end()) {
      std::string allowed;
      for (const std::string& w : words) allowed += (allowed.empty() ? "\"" : ", \"") + w + "\"";
      throw BadInput(cat(at, "field 'answer' = ", shown(word), " is not one of ", allowed));
    }
    r.word = word.get<std::string>();
  } else if (value.contains("undo")) {
    only({"undo"});
    r.kind = RecordKind::undo;
    r.item = text("undo");
  } else if (value.contains("written")) {
    only({"written"});
    r.kind = RecordKind::written;
    const nlohmann::json& n = value.at("written");
    if (!n.is_number_integer() || n.get<std::int64_t>() < 0)
      throw BadInput(cat(at, "field 'written' = ", shown(n), " is not a count of answers"));
    r.written = n.get<std::int64_t>();
  } else {
    throw BadInput(cat(at, "not an answer, an undo or a written record: ", shown(value)));
  }
  return r;
}

}  // namespace ltt::label
