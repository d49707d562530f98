#pragma once
// The one exception the program itself throws for input a user can fix: an unknown or
// malformed flag, an unreadable or unwritable file. main() prints its message as the one
// line `ltt <subcommand>: <message>` and exits 2, like std::invalid_argument from the
// libraries. Anything else that escapes a subcommand is a bug and exits 1.

#include <stdexcept>
#include <string>

namespace ltt::certification {

class BadInput : public std::runtime_error {
 public:
  explicit BadInput(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace ltt::certification
