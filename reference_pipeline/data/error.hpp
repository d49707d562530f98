#pragma once
// The one exception of the data layer. Every failure a user can fix (a missing file or key, a
// wrong shape, an unsupported element type, an unwritable output) throws DataError whose
// message names the file and, where there is one, the key: "pool.hdf5: key 'costs' ...".
// It is a std::invalid_argument, so the `ltt` program reports it as bad input (exit code 2)
// without knowing this header.

#include <stdexcept>
#include <string>
#include <string_view>

namespace ltt::data {

class DataError : public std::invalid_argument {
 public:
  explicit DataError(const std::string& message) : std::invalid_argument(message) {}
};

namespace detail {

// Concatenation by append: GCC 12 reports a false -Wrestrict in chains of operator+ on
// temporaries at -O3 (GCC bug 105329).
template <class... Parts>
std::string cat(const Parts&... parts) {
  std::string text;
  (text.append(std::string_view(parts)), ...);
  return text;
}

inline std::string in_quotes(std::string_view text) { return cat("'", text, "'"); }

[[noreturn]] inline void fail(std::string_view file, std::string_view message) {
  throw DataError(cat(file, ": ", message));
}

}  // namespace detail
}  // namespace ltt::data
