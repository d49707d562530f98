// The labeling server (server.hpp): cpp-httplib with a guard in front of every route.

#include "server.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <cstring>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include <httplib.h>

#include <certification/bad_input.hpp>
#include <certification/format.hpp>

#include "guarded_server.hpp"
#include "journal.hpp"
#include "page_assets.hpp"

namespace ltt::label {

namespace {

using certification::BadInput;
using certification::cat;
using certification::in_quotes;

// 192 random bits as hex: more than the 128 Jupyter's convention asks for.
std::string new_token() {
  std::ifstream random("/dev/urandom", std::ios::binary);
  unsigned char bytes[24];
  if (!random.read(reinterpret_cast<char*>(bytes), sizeof bytes))
    throw std::runtime_error("cannot read /dev/urandom for the session token");
  static constexpr char hex[] = "0123456789abcdef";
  std::string token;
  for (const unsigned char b : bytes) {
    token += hex[b >> 4];
    token += hex[b & 15];
  }
  return token;
}

// A new token in DIR/token: written to a temporary made 0600, synced, renamed over the old.
std::string replace_token(const std::filesystem::path& file) {
  const std::string token = new_token();
  const std::filesystem::path temporary = file.string() + ".new";
  ::unlink(temporary.c_str());
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    throw BadInput(cat("--out: cannot write ", in_quotes(temporary.string()), ": ",
                       std::strerror(errno)));
  const std::string line = token + "\n";
  const bool written = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()) &&
                       ::fsync(fd) == 0;
  ::close(fd);
  if (!written || ::rename(temporary.c_str(), file.c_str()) != 0) {
    ::unlink(temporary.c_str());
    throw BadInput(cat("--out: cannot write ", in_quotes(file.string())));
  }
  return token;
}

// The session's token: DIR/token when a previous run left one, else (or with --new-token) a
// new one written there. An existing file must be a regular file of this user that nobody else
// may read or write (0600, as it is created): the token is the only key to the session.
std::string session_token(const std::filesystem::path& file, bool rotate) {
  if (rotate) return replace_token(file);
  const int fd = ::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) return replace_token(file);
  if (fd < 0)
    throw BadInput(cat("--out: cannot read ", in_quotes(file.string()), ": ", std::strerror(errno),
                       errno == ELOOP ? " (a symbolic link)" : "",
                       "; remove it, or give --new-token to replace it"));
  struct stat st {};
  std::string problem;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
    problem = "is not a regular file";
  else if (st.st_uid != ::geteuid())
    problem = cat("is owned by user ", std::to_string(st.st_uid), ", not by this one");
  else if ((st.st_mode & 0077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    problem = cat("has mode ", mode, ": others may read or change the session's key (it is made 0600)");
  }
  std::string token(49, '\0');
  const ssize_t n = problem.empty() ? ::read(fd, token.data(), token.size()) : 0;
  ::close(fd);
  if (!problem.empty())
    throw BadInput(cat("--out: ", in_quotes(file.string()), " ", problem,
                       "; give --new-token to replace it (the old URL stops working)"));
  token.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  if (!token.empty() && token.back() == '\n') token.pop_back();
  if (token.size() == 48 && token.find_first_not_of("0123456789abcdef") == std::string::npos)
    return token;
  return replace_token(file);
}

// Compares in time independent of where the strings first differ.
bool same_secret(std::string_view given, std::string_view secret) {
  unsigned char diff = given.size() == secret.size() ? 0 : 1;
  for (std::size_t i = 0; i < secret.size(); ++i)
    diff |= static_cast<unsigned char>(secret[i] ^ (i < given.size() ? given[i] : 0));
  return diff == 0;
}

std::string url_host(const std::string& host) {
  return host.find(':') != std::string::npos ? cat("[", host, "]") : host;
}

// Every response: nothing cached (the token is in the URL), no referrer, and a policy that
// lets the page load only from this server.
void secure_headers(httplib::Response& res) {
  res.set_header("Cache-Control", "no-store");
  res.set_header("Referrer-Policy", "no-referrer");
  res.set_header("X-Content-Type-Options", "nosniff");
  res.set_header("X-Frame-Options", "DENY");
  res.set_header("Content-Security-Policy",
                 "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
                 "media-src 'self'; connect-src 'self'; frame-ancestors 'none'");
}

void send_json(httplib::Response& res, const Reply& reply) {
  res.status = reply.status;
  res.set_content(reply.body.dump(), "application/json");
}

// The --media file for a name: DIR/<name>.png, .mp4 or .webm, a regular file that (links
// resolved) lies inside DIR.
std::optional<std::filesystem::path> media_file(const std::filesystem::path& dir,
                                                const std::string& name) {
  namespace fs = std::filesystem;
  if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..")
    return std::nullopt;
  std::error_code ec;
  const fs::path root = fs::canonical(dir, ec);
  if (ec) return std::nullopt;
  for (const char* ext : {".png", ".mp4", ".webm"}) {
    const fs::path candidate = dir / (name + ext);
    const fs::path real = fs::canonical(candidate, ec);
    if (ec) continue;
    if (real.parent_path() != root || !fs::is_regular_file(real, ec)) continue;
    return real;
  }
  return std::nullopt;
}

std::string media_type(const std::filesystem::path& file) {
  const std::string ext = file.extension().string();
  return ext == ".png" ? "image/png" : ext == ".mp4" ? "video/mp4" : "video/webm";
}

// Stops the server on SIGINT or SIGTERM. The handler only raises a flag, which a thread of its
// own polls, since a handler may not call Server::stop. A handler, not a blocked mask waited
// on with sigtimedwait: a mask reaches only the threads created after it, and a library may
// start threads before main (OpenBLAS, loaded with LibTorch in an LTT_WITH_TORCH build, does),
// where the default action would kill the process with the signal.
std::atomic<int> stop_signal{0};
static_assert(std::atomic<int>::is_always_lock_free);  // so the handler may store to it

extern "C" void raise_stop_flag(int signal) { stop_signal.store(signal); }

class SignalStop {
 public:
  explicit SignalStop(httplib::Server& server) {
    stop_signal.store(0);
    struct sigaction action {};
    action.sa_handler = raise_stop_flag;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGINT, &action, &previous_int_);
    ::sigaction(SIGTERM, &action, &previous_term_);
    waiter_ = std::thread([this, &server] {
      while (!done_) {
        if (stop_signal.load() != 0) {
          stopped_by_signal_ = true;
          // Server::stop does nothing before the accept loop runs: a signal that comes
          // between the bind and the loop waits for it.
          while (!server.is_running() && !done_)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
          server.stop();
          return;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    });
  }
  ~SignalStop() {
    done_ = true;
    waiter_.join();
    ::sigaction(SIGINT, &previous_int_, nullptr);
    ::sigaction(SIGTERM, &previous_term_, nullptr);
  }
  bool stopped_by_signal() const { return stopped_by_signal_; }

 private:
  struct sigaction previous_int_ {}, previous_term_ {};
  std::atomic<bool> done_{false}, stopped_by_signal_{false};
  std::thread waiter_;
};

}  // namespace

bool is_loopback(std::string_view host) {
  if (host == "localhost" || host == "::1") return true;
  in_addr v4{};
  const std::string text(host);
  return ::inet_pton(AF_INET, text.c_str(), &v4) == 1 && (ntohl(v4.s_addr) >> 24) == 127;
}

void serve(Session& session, const ServerOptions& options, std::ostream& out, std::ostream& err) {
  const std::string token = session_token(options.token_file, options.new_token);
  GuardedServer server;
  server.set_payload_max_length(body_limit);
  SignalStop signal_stop(server);

  int port = options.port;
  if (port == 0)
    port = server.bind_to_any_port(options.host);
  else if (!server.bind_to_port(options.host, port))
    port = -1;
  if (port < 0)
    throw BadInput(cat("--host/--port: cannot listen on ", url_host(options.host), ":",
                       std::to_string(options.port), " (address in use or not this machine's)"));
  server.widen_backlog();

  // The Host header a browser sends for the URL printed below (and its localhost spelling).
  std::vector<std::string> hosts{cat(url_host(options.host), ":", std::to_string(port))};
  if (is_loopback(options.host)) hosts.push_back(cat("localhost:", std::to_string(port)));
  for (const std::string& name : options.allow_hosts)
    hosts.push_back(cat(name, ":", std::to_string(port)));

  std::mutex lock;
  server.set_pre_routing_handler([&](const httplib::Request& req, httplib::Response& res) {
    secure_headers(res);
    // A Range header means something for --media only: the library would cut any reply to it
    // (an answer's JSON to its last bytes, with status 200). The request is the library's own
    // non-const object, handed here as const.
    if (!req.path.starts_with("/media/")) const_cast<httplib::Request&>(req).ranges.clear();
    const std::string host = req.get_header_value("Host");
    if (std::find(hosts.begin(), hosts.end(), host) == hosts.end()) {
      send_json(res, refuse(403, cat("Host ", in_quotes(host), " is not this server's")));
      return httplib::Server::HandlerResponse::Handled;
    }
    const bool api = req.path.starts_with("/api/");
    const std::string given =
        api ? req.get_header_value("X-LTT-Token") : req.get_param_value("token");
    if (!same_secret(given, token)) {
      send_json(res, refuse(403, api ? "missing or wrong X-LTT-Token header"
                                     : "missing or wrong ?token= (use the URL ltt printed)"));
      return httplib::Server::HandlerResponse::Handled;
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });

  // The page names its script and style with the token (@TOKEN@), which every request needs.
  for (const PageAsset& asset : page_assets())
    server.Get(std::string(asset.path), [&asset, &token](const httplib::Request&,
                                                          httplib::Response& res) {
      std::string text(asset.text);
      for (std::size_t at; (at = text.find("@TOKEN@")) != std::string::npos;)
        text.replace(at, 7, token);
      res.set_content(text, cat(asset.type, "; charset=utf-8"));
    });

  const auto state = [&] {
    nlohmann::json s = session.state();
    nlohmann::json media = nlohmann::json::array();
    for (const std::string& name : session.media_names()) {
      const auto file = options.media ? media_file(*options.media, name) : std::nullopt;
      media.push_back(file ? nlohmann::json(media_type(*file)) : nlohmann::json(nullptr));
    }
    s["media"] = media;
    return s;
  };
  server.Get("/api/state", [&](const httplib::Request&, httplib::Response& res) {
    const std::lock_guard guard(lock);
    send_json(res, {200, state()});
  });
  // A session's act, its reply with the new state when accepted; 503 when the journal could not
  // take the record (the session is as it was, journal.hpp).
  const auto recorded = [&](const auto& act) {
    Reply reply;
    try {
      reply = act();
    } catch (const NotRecorded& e) {
      return refuse(503, e.what());
    }
    if (reply.status == 200) reply.body["state"] = state();
    return reply;
  };
  // The POST routes: a JSON object in, the reply and (when accepted) the new state out.
  const auto post = [&](const char* path, Reply (Session::*act)(const nlohmann::json&)) {
    server.Post(path, [&, act](const httplib::Request& req, httplib::Response& res) {
      const nlohmann::json body = nlohmann::json::parse(req.body, nullptr, false);
      if (body.is_discarded() || !body.is_object())
        return send_json(res, refuse(400, "the body is not a JSON object"));
      const std::lock_guard guard(lock);
      send_json(res, recorded([&] { return (session.*act)(body); }));
    });
  };
  post("/api/answer", &Session::answer);
  post("/api/undo", &Session::undo);
  server.Post("/api/finish", [&](const httplib::Request&, httplib::Response& res) {
    const std::lock_guard guard(lock);
    send_json(res, recorded([&] { return session.finish(); }));
  });
  server.Get(R"(/media/(\d))", [&](const httplib::Request& req, httplib::Response& res) {
    std::optional<std::filesystem::path> file;
    {
      const std::lock_guard guard(lock);
      const std::vector<std::string> names = session.media_names();
      const std::size_t panel = static_cast<std::size_t>(req.matches[1].str()[0] - '0');
      if (options.media && panel < names.size()) file = media_file(*options.media, names[panel]);
    }
    if (!file) return send_json(res, refuse(404, "no --media file for this panel"));
    // One range at most: the library would build a multipart body holding every range asked
    // for, so many overlapping ranges would multiply the file in memory.
    if (req.ranges.size() > 1)
      return send_json(res, refuse(416, "one byte range at most"));
    std::ifstream in(*file, std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    res.set_content(bytes.str(), media_type(*file));
  });
  server.set_exception_handler([](const httplib::Request&, httplib::Response& res,
                                  std::exception_ptr e) {
    std::string what = "internal error";
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& x) {
      what = x.what();
    } catch (...) {
    }
    secure_headers(res);
    send_json(res, refuse(500, what));
  });

  if (!is_loopback(options.host))
    err << "ltt label: warning: --host " << options.host
        << " is not a loopback address: other machines can reach the page, and the token "
           "travels in plain HTTP (anyone who watches the network can answer)\n";
  const std::string shown =
      options.allow_hosts.empty() ? url_host(options.host) : options.allow_hosts.front();
  out << "http://" << shown << ":" << port << "/?token=" << token << std::endl;
  err << "ltt label: " << options.what << " at the URL above; Ctrl-C (or SIGTERM) stops, "
      << "every answer is already on disk" << std::endl;
  server.listen_after_bind();
  err << "ltt label: stopped" << (signal_stop.stopped_by_signal() ? " (signal)" : "") << "\n";
}

}  // namespace ltt::label
