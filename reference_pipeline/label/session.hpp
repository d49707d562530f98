#pragma once
// What the labeling server (server.hpp) asks of a session, whichever judgments it collects:
// budget labels for the sequential walk (budget_session.hpp) or segment comparisons
// (compare_session.hpp). The server owns the HTTP side (token, Host, assets, media, body
// limits); a session owns the state, the journal, and the files it writes. Calls come one at a
// time (the server holds a lock around them).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ltt::label {

// An HTTP status and the JSON object that goes with it.
struct Reply {
  int status = 200;
  nlohmann::json body;
};

inline Reply refuse(int status, const std::string& message) {
  return {status, nlohmann::json{{"error", message}}};
}

// An answer as the page posts it: {"item": ID, "answer": WORD}; nullopt for anything else (the
// session refuses it with 400, as it does a WORD it does not know).
struct Answer {
  std::string item, word;
};

inline std::optional<Answer> read_answer(const nlohmann::json& request) {
  if (!request.contains("item") || !request["item"].is_string() || !request.contains("answer") ||
      !request["answer"].is_string())
    return std::nullopt;
  return Answer{request["item"].get<std::string>(), request["answer"].get<std::string>()};
}

// The item of an undo, {"item": ID}; nullopt for anything else.
inline std::optional<std::string> read_item(const nlohmann::json& request) {
  if (!request.contains("item") || !request["item"].is_string()) return std::nullopt;
  return request["item"].get<std::string>();
}

// Why an undo is refused once the session's files are written: they hold the answer it would
// take back, and would then describe an answer the journal says was undone (docs/label.md,
// "Nothing lost"). Answers given after the files were written can be undone.
inline std::string undo_after_writing(std::int64_t written) {
  return "the files written hold the answers up to " + std::to_string(written) +
         ": an undo would leave them describing an answer taken back (begin another --out to "
         "change them)";
}

class Session {
 public:
  virtual ~Session() = default;
  // Everything the page shows now: the item to judge, the state after the last answer.
  virtual nlohmann::json state() const = 0;
  // {"item": ID, "answer": ...}: recorded (journal first) when ID is the item the session
  // asks for now; 409 for any other item, 400 for a malformed answer.
  virtual Reply answer(const nlohmann::json& request) = 0;
  // {"item": ID}: takes back the last answer when ID names its item and the files written do
  // not hold it; 409 otherwise.
  virtual Reply undo(const nlohmann::json& request) = 0;
  // Writes the session's files into DIR when it may (409 while it may not).
  virtual Reply finish() = 0;
  // The --media names of what the page shows now, one per panel (an episode id, or
  // id_start for a segment); a file DIR/<name>.png|.mp4|.webm is shown instead of the plots.
  virtual std::vector<std::string> media_names() const = 0;
};

}  // namespace ltt::label
