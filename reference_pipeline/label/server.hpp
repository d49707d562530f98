#pragma once
// The local web server of `ltt label` (docs/label.md, "Nobody else in"): the page and its
// assets (embedded in the program, page_assets.hpp), the session's JSON API, and the files of
// --media, on cpp-httplib. Every request must carry the session's token (the page's URL as a
// query parameter; the API as the X-LTT-Token header, which a cross-site form cannot send and
// a cross-site script cannot send without a CORS preflight this server never answers), and a
// Host header naming the bound address (DNS rebinding). Nothing else is served: no static
// directory, so no path can climb out of one, and --media files are looked up by the item's
// name, never by a path from the request. Bodies are capped; a malformed one gets 400.

#include <filesystem>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "session.hpp"

namespace ltt::label {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 0;  // 0: any free port (the URL says which)
  // Host names besides the bound address that requests may name (--allow-host); the URL
  // printed uses the first. A non-loopback --host needs one (cli/label.cpp).
  std::vector<std::string> allow_hosts;
  std::optional<std::filesystem::path> media;
  // DIR/token: kept across restarts, so a page left open reconnects to a resumed session.
  std::filesystem::path token_file;
  bool new_token = false;  // replace DIR/token (a leaked token, or one others could read)
  std::string what;  // "budget labels" or "segment comparisons", for the status line
};

// The largest request body accepted (an answer is a few dozen bytes).
inline constexpr std::size_t body_limit = 4096;

// 127.0.0.0/8, ::1 and "localhost".
bool is_loopback(std::string_view host);

// Serves `session` until SIGINT or SIGTERM: prints the URL (with the token) as one line to
// `out`, warnings and the status to `err`. Throws BadInput when the address cannot be bound.
void serve(Session& session, const ServerOptions& options, std::ostream& out, std::ostream& err);

}  // namespace ltt::label
