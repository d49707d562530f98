#pragma once
// A Unix-domain socket file, one of the special files an output must never replace
// (tests/cli/outputs.test.cpp, tests/data/atomic_output.test.cpp).

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

namespace ltt_test {

// A socket bound at `p` (the file stays after the descriptor is closed); false when the path is
// too long for sockaddr_un or the bind fails.
inline bool make_socket(const std::filesystem::path& p) {
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (p.string().size() >= sizeof address.sun_path) return false;
  std::strcpy(address.sun_path, p.c_str());
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  if (fd < 0) return false;
  const bool bound = ::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0;
  ::close(fd);
  return bound;
}

}  // namespace ltt_test
