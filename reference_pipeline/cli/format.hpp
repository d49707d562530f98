#pragma once
// Number formatting for the program's output. std::to_chars, so the output never depends on
// the locale (printf's %g would write a decimal comma under some of them).
//
//   shortest(x)  the decimal with the fewest digits that reads back as the same double: every
//                number in JSON and CSV output, and inputs as the user typed them (0.1 is 0.1)
//   brief(x)     6 significant digits, for human summaries (never "1" for x < 1)
//   cat(a, b, ...)   concatenation of strings, string_views and literals
//   in_quotes(text)  'text'

#include <charconv>
#include <cmath>
#include <string>
#include <string_view>

#include <data/text.hpp>

namespace ltt::cli {

namespace detail {
inline std::string to_chars_or_null(double x, int precision) {
  if (std::isnan(x)) return "nan";
  char buf[64];
  const auto result =
      precision > 0 ? std::to_chars(buf, buf + sizeof buf, x, std::chars_format::general, precision)
                    : std::to_chars(buf, buf + sizeof buf, x);
  return std::string(buf, result.ptr);
}
}  // namespace detail

// Message text shared with the data layer (data/text.hpp).
using data::cat;
using data::in_quotes;

// From 1e16 up a double is a whole number, and the fixed form would spell out every digit of its
// exact value (2^70 as 1180591620717411303424): there the scientific form has the fewest
// digits (1.1805916207174113e+21), as Python's repr writes it.
inline std::string shortest(double x) {
  if (!(std::fabs(x) >= 1e16)) return detail::to_chars_or_null(x, 0);
  char buf[64];
  const auto result = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::scientific);
  return std::string(buf, result.ptr);
}
// A value just below 1 (a rate of 0.9999996) is never shown as "1": it gets all its digits.
inline std::string brief(double x) {
  std::string text = detail::to_chars_or_null(x, 6);
  return text == "1" && x != 1.0 ? shortest(x) : text;
}

}  // namespace ltt::cli
