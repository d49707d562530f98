#pragma once
// The one exception of the data layer. Every failure a user can fix (a missing file or key, a
// wrong shape, an unsupported element type, an unwritable output) throws DataError whose
// message names the file and, where there is one, the key: "pool.hdf5: key 'costs' ...".
// It is a std::invalid_argument, so the `ltt` program reports it as bad input (exit code 2)
// without knowing this header.

#include <stdexcept>
#include <string>
#include <string_view>

#include "data/text.hpp"

namespace ltt::data {

class DataError : public std::invalid_argument {
 public:
  explicit DataError(const std::string& message) : std::invalid_argument(message) {}
};

namespace detail {

using data::cat;
using data::in_quotes;

[[noreturn]] inline void fail(std::string_view file, std::string_view message) {
  throw DataError(cat(file, ": ", message));
}

}  // namespace detail
}  // namespace ltt::data
