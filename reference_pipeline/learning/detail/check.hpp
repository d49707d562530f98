#pragma once
// Argument checks of the learning layer. Each failure throws std::invalid_argument whose
// message names the function, the parameter and the value it got,
//     "ltt::learning::train_value_ensemble: parameter 'options.epochs' = -1 must be at least 0",
// the form of the statistics layer's checks, so the program reports both alike (bad input,
// exit code 2) and a user can act on it without reading our source.

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "data/text.hpp"

namespace ltt::learning::detail {

[[noreturn]] inline void invalid(std::string_view function, std::string_view parameter,
                                 const std::string& value, std::string_view requirement) {
  throw std::invalid_argument(
      data::cat(function, ": parameter '", parameter, "' = ", value, " ", requirement));
}

// Values in messages: integers in full, doubles to 17 significant digits (they read back as
// the same double; not shortest(), as the statistics layer's show is: learning's messages have
// always printed 17 digits, 0.10000000000000001), NaN as "nan".
inline std::string show(double x) { return data::significant(x, 17); }
inline std::string show(std::int64_t x) { return std::to_string(x); }

inline std::int64_t ssize(std::size_t n) { return static_cast<std::int64_t>(n); }

inline void require_at_least(std::string_view function, std::string_view parameter, std::int64_t x,
                             std::int64_t least) {
  if (x < least) invalid(function, parameter, show(x), "must be at least " + show(least));
}

// A span handed to a backend must have exactly the size its shape implies (both backends
// read raw memory from it).
inline void require_size(std::string_view function, std::string_view parameter, std::size_t size,
                         std::int64_t expected, std::string_view why) {
  if (ssize(size) != expected)
    invalid(function, std::string(parameter) + ".size()", show(ssize(size)),
            "must equal " + std::string(why) + " = " + show(expected));
}

}  // namespace ltt::learning::detail
