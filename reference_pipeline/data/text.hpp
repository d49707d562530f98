#pragma once
// Text for every layer of the reference pipeline (data, tasks, learning, pipeline, the `ltt`
// program): message concatenation and the number formats. It lives in data/, the lowest layer,
// which every other one already links (ltt::data); a target of its own would add an installed
// component for one header. Layer-specific formats (the report's fixed decimals, the charts'
// pixel coordinates and tick labels) stay in their layer, built on these.
//
//   cat(a, b, ...)    concatenation of strings, string_views and literals, by append: GCC 12 at
//                     -O3 reports a false -Wrestrict inside operator+(const char*, std::string&&)
//                     (GCC bug 105329), which -Werror turns into a build failure
//   in_quotes(text)   'text'
//   number(x, f, p)   std::to_chars of x in format f with precision p
//   shortest(x)       the decimal with the fewest digits that reads back as the same double:
//                     every number in JSON and CSV output, and inputs as the user typed them
//   significant(x, d) d significant digits (printf's %.*g); brief(x) is 6 of them, for human
//                     summaries (never "1" for x < 1)
//   show(x)           a value in a message: an integer in full, a double as shortest(x)
//   InvalidArgument{"ltt::NS::"}(function, parameter, [value,] requirement)
//                     throws std::invalid_argument "ltt::NS::function: parameter 'name' = value
//                     requirement" (without " = value" when there is none): the bad argument
//                     of the tasks and pipeline layers
//
// Numbers go through std::to_chars, so no output depends on the locale (printf's %g would write
// a decimal comma under some of them). shortest and significant write any NaN as "nan".
//
// Message prefixes, by layer (the program prints each after "ltt SUB: " on stderr). Messages
// are promised output (tests and users match them):
//   statistics, curation, learning, tasks, pipeline
//                "ltt::NS::function: parameter 'name' = value requirement", or without
//                " = value" where no single value is at hand (ltt::detail::invalid,
//                learning/detail/check.hpp, tasks/check.hpp, pipeline/check.hpp)
//   data         "FILE: what is wrong" (DataError, data/error.hpp)
//   program      "--flag: value requirement" or "FILE: ..." (BadInput)

#include <charconv>
#include <cmath>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <type_traits>

namespace ltt::data {

template <class... Parts>
std::string cat(const Parts&... parts) {
  std::string text;
  (text.append(std::string_view(parts)), ...);
  return text;
}

inline std::string in_quotes(std::string_view text) { return cat("'", text, "'"); }

// `text` as a signed 64-bit integer ("17", "+17", "-3", "007"); nullopt when it is not one
// ("42.0" and "4.2e1" are not), and *out_of_range set when it is an integer too large.
inline std::optional<std::int64_t> parse_integer(std::string_view text,
                                                 bool* out_of_range = nullptr) {
  std::string_view body = text;
  if (body.size() > 1 && body.front() == '+' && body[1] != '-') body.remove_prefix(1);
  std::int64_t x = 0;
  const auto [end, ec] = std::from_chars(body.data(), body.data() + body.size(), x);
  if (out_of_range) *out_of_range = ec == std::errc::result_out_of_range;
  if (ec != std::errc{} || end != body.data() + body.size()) return std::nullopt;
  return x;
}

inline std::string number(double x, std::chars_format format, int precision) {
  char buffer[400];  // 1e308 in fixed form with its decimals fits
  const auto r = std::to_chars(buffer, buffer + sizeof buffer, x, format, precision);
  return std::string(buffer, r.ptr);
}

// From 1e16 up a double is a whole number, and the fixed form would spell out every digit of its
// exact value (2^70 as 1180591620717411303424): there the scientific form has the fewest
// digits (1.1805916207174113e+21), as Python's repr writes it.
inline std::string shortest(double x) {
  if (std::isnan(x)) return "nan";
  char buffer[64];
  const auto r = std::fabs(x) >= 1e16 ? std::to_chars(buffer, buffer + sizeof buffer, x,
                                                      std::chars_format::scientific)
                                      : std::to_chars(buffer, buffer + sizeof buffer, x);
  return std::string(buffer, r.ptr);
}

inline std::string significant(double x, int digits) {
  return std::isnan(x) ? "nan" : number(x, std::chars_format::general, digits);
}

// A value just below 1 (a rate of 0.9999996) is never shown as "1": it gets all its digits.
inline std::string brief(double x) {
  std::string text = significant(x, 6);
  return text == "1" && x != 1.0 ? shortest(x) : text;
}

template <class T>
std::string show(T x) {
  if constexpr (std::is_integral_v<T>)
    return std::to_string(x);
  else
    return shortest(static_cast<double>(x));
}

// A layer's `invalid` (tasks/check.hpp, pipeline/check.hpp): the layer's namespace prefixed to
// every function it names.
struct InvalidArgument {
  std::string_view prefix;  // "ltt::tasks::"
  [[noreturn]] void operator()(std::string_view function, std::string_view parameter,
                               std::string_view value, std::string_view requirement) const {
    const std::string named = cat(prefix, function, ": parameter '", parameter, "'");
    throw std::invalid_argument(value.empty() ? cat(named, " ", requirement)
                                              : cat(named, " = ", value, " ", requirement));
  }
  [[noreturn]] void operator()(std::string_view function, std::string_view parameter,
                               std::string_view requirement) const {
    (*this)(function, parameter, "", requirement);
  }
};

}  // namespace ltt::data
