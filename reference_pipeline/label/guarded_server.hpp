#pragma once
// cpp-httplib's server with a deadline on each request, so that a local process cannot stall
// `ltt label` (docs/label.md, "Nobody else in"). Debian's cpp-httplib 0.11.4 bounds each read
// (set_read_timeout), not a request: a client that sends part of a request's head and waits
// holds a worker for the read timeout, a client that trickles a byte at a time holds it for
// as long as it likes, and its pool has max(8, cores - 1) workers. Measured on a 2-core AMD
// EPYC with 40 connections that sent part of a head and waited: /api/state answered after
// 47.8 s, SIGTERM took 4.8 s.
//
// Here each connection is served by GuardedServer::process_and_close_socket (the library's
// virtual, overridden) on a DeadlineStream: a request's head and body must arrive within
// request_deadline of its first byte, an idle keep-alive connection is closed after
// idle_deadline, and every wait polls in slices of `slice`, so a stop (SIGTERM) ends them all
// at once. With a pool of `workers` threads, stalled connections delay others by at most
// request_deadline per `workers` of them (tests/label, case "stall").

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>

#include <httplib.h>

namespace ltt::label {

using Clock = std::chrono::steady_clock;

inline constexpr auto request_deadline = std::chrono::seconds(2);
inline constexpr auto idle_deadline = std::chrono::seconds(5);
inline constexpr auto write_deadline = std::chrono::seconds(5);  // per write, not per response
inline constexpr auto slice = std::chrono::milliseconds(50);
inline constexpr std::size_t workers = 64;
inline constexpr std::size_t requests_per_connection = 100;

// Waits until `sock` is ready for `events` (POLLIN, POLLOUT); false at `until`, on an error,
// or once `stopping` says so.
template <typename Stopping>
bool wait_until(int sock, short events, Clock::time_point until, const Stopping& stopping) {
  for (;;) {
    if (stopping()) return false;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
    if (left.count() <= 0) return false;
    pollfd p{sock, events, 0};
    const int n = ::poll(&p, 1, static_cast<int>(std::min(left, slice).count()));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n > 0) return (p.revents & (events | POLLHUP | POLLERR)) != 0;
  }
}

inline void socket_address(int sock, bool peer, std::string& ip, int& port) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  auto* a = reinterpret_cast<sockaddr*>(&address);
  if ((peer ? ::getpeername(sock, a, &length) : ::getsockname(sock, a, &length)) != 0) return;
  char text[INET6_ADDRSTRLEN] = {};
  if (address.ss_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(&address);
    ::inet_ntop(AF_INET, &v4->sin_addr, text, sizeof text);
    port = ntohs(v4->sin_port);
  } else if (address.ss_family == AF_INET6) {
    const auto* v6 = reinterpret_cast<const sockaddr_in6*>(&address);
    ::inet_ntop(AF_INET6, &v6->sin6_addr, text, sizeof text);
    port = ntohs(v6->sin6_port);
  }
  ip = text;
}

// A connection's stream for one request: reads end at the request's deadline, writes when one
// makes no progress for write_deadline. Reads are buffered (httplib reads a head by the byte).
template <typename Stopping>
class DeadlineStream final : public httplib::Stream {
 public:
  DeadlineStream(int sock, Clock::time_point deadline, const Stopping& stopping)
      : sock_(sock), deadline_(deadline), stopping_(stopping) {}

  bool is_readable() const override {
    return begin_ < end_ || wait_until(sock_, POLLIN, deadline_, stopping_);
  }
  bool is_writable() const override {
    return wait_until(sock_, POLLOUT, Clock::now() + write_deadline, stopping_);
  }
  ssize_t read(char* ptr, std::size_t size) override {
    if (begin_ == end_) {
      if (!wait_until(sock_, POLLIN, deadline_, stopping_)) {
        expired_ = true;
        return -1;
      }
      ssize_t n;
      do n = ::recv(sock_, buffer_, sizeof buffer_, 0);
      while (n < 0 && errno == EINTR);
      if (n <= 0) return n;
      begin_ = 0;
      end_ = static_cast<std::size_t>(n);
    }
    const std::size_t n = std::min(size, end_ - begin_);
    std::memcpy(ptr, buffer_ + begin_, n);
    begin_ += n;
    return static_cast<ssize_t>(n);
  }
  ssize_t write(const char* ptr, std::size_t size) override {
    if (!is_writable()) return -1;
    ssize_t n;
    do n = ::send(sock_, ptr, size, MSG_NOSIGNAL);
    while (n < 0 && errno == EINTR);
    return n;
  }
  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    socket_address(sock_, true, ip, port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    socket_address(sock_, false, ip, port);
  }
  socket_t socket() const override { return sock_; }
  // A read ran into the deadline: the library answers 400 for a head cut short and would wait
  // for the next request on this connection; it is closed instead.
  bool expired() const { return expired_; }

 private:
  int sock_;
  Clock::time_point deadline_;
  const Stopping& stopping_;
  char buffer_[4096];
  std::size_t begin_ = 0, end_ = 0;
  bool expired_ = false;
};

class GuardedServer final : public httplib::Server {
 public:
  GuardedServer() {
    new_task_queue = [] { return new httplib::ThreadPool(workers); };
    // What the Keep-Alive response header announces; the loop below keeps it.
    set_keep_alive_max_count(requests_per_connection);
    set_keep_alive_timeout(idle_deadline.count());
  }

  // The library listens with a backlog of 5: a burst of connections (a browser opens six, a
  // stalling process forty) overflows it and each connection past it waits for the client's
  // SYN to be sent again, a second later. Called after the bind, listen() again widens it.
  void widen_backlog() { ::listen(svr_sock_.load(), SOMAXCONN); }

 private:
  bool process_and_close_socket(socket_t sock) override {
    const auto stopping = [this] { return svr_sock_.load() == INVALID_SOCKET; };
    bool ok = true;
    for (std::size_t count = requests_per_connection; ok && count > 0; --count) {
      // The next request's first byte, on a connection kept alive.
      if (!wait_until(sock, POLLIN, Clock::now() + idle_deadline, stopping)) break;
      DeadlineStream stream(sock, Clock::now() + request_deadline, stopping);
      bool closed = false;
      ok = process_request(stream, count == 1, closed, nullptr) && !closed && !stream.expired();
    }
    ::shutdown(sock, SHUT_RDWR);
    ::close(sock);
    return true;
  }
};

}  // namespace ltt::label
