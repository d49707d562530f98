#pragma once
// What the labeling server (server.hpp) asks of a session, whichever judgments it collects:
// budget labels for the sequential walk (budget_session.hpp) or segment comparisons
// (compare_session.hpp). The server owns the HTTP side (token, Host, assets, media, body
// limits); a session owns the state, the journal, and the files it writes. Calls come one at a
// time (the server holds a lock around them).

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

class Session {
 public:
  virtual ~Session() = default;
  // Everything the page shows now: the item to judge, the state after the last answer.
  virtual nlohmann::json state() const = 0;
  // {"item": ID, "answer": ...}: recorded (journal first) when ID is the item the session
  // asks for now; 409 for any other item, 400 for a malformed answer.
  virtual Reply answer(const nlohmann::json& request) = 0;
  // {"item": ID}: takes back the last answer when ID names its item; 409 otherwise.
  virtual Reply undo(const nlohmann::json& request) = 0;
  // Writes the session's files into DIR when it may (409 while it may not).
  virtual Reply finish() = 0;
  // The --media names of what the page shows now, one per panel (an episode id, or
  // id_start for a segment); a file DIR/<name>.png|.mp4|.webm is shown instead of the plots.
  virtual std::vector<std::string> media_names() const = 0;
};

}  // namespace ltt::label
