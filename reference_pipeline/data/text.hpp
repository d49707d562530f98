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
//
// Numbers go through std::to_chars, so no output depends on the locale (printf's %g would write
// a decimal comma under some of them). shortest and significant write any NaN as "nan".
//
// Message prefixes, by layer (the program prints each after "ltt SUB: " on stderr). Messages
// are promised output (tests and users match them), so the forms below are kept as they are:
//   statistics, curation, learning  "ltt::NS::function: parameter 'name' = value requirement"
//                                   (ltt::detail::invalid, learning/detail/check.hpp)
//   data                            "FILE: what is wrong" (DataError, data/error.hpp)
//   tasks                           "function: 'name' requirement, got value"
//   pipeline                        options: "ltt::pipeline: 'name' requirement"
//                                   (pipeline/check.hpp); its functions: "function: 'name' ..."
//   program                         "--flag: value requirement" or "FILE: ..." (BadInput)

#include <charconv>
#include <cmath>
#include <string>
#include <string_view>

namespace ltt::data {

template <class... Parts>
std::string cat(const Parts&... parts) {
  std::string text;
  (text.append(std::string_view(parts)), ...);
  return text;
}

inline std::string in_quotes(std::string_view text) { return cat("'", text, "'"); }

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

}  // namespace ltt::data
