#pragma once
// Argument checks shared by every public function of ltt: each failure throws
// std::invalid_argument whose message names the parameter and the value it got,
// so a user can act on it without reading our source.

#include <charconv>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>

namespace ltt::detail {

[[noreturn]] inline void invalid(std::string_view function, std::string_view parameter,
                                 const std::string& value, std::string_view requirement) {
  std::string msg;
  msg.reserve(96);
  msg.append(function).append(": parameter '").append(parameter).append("' = ").append(value);
  msg.append(" ").append(requirement);
  throw std::invalid_argument(msg);
}

// The shortest decimal that reads back as x (std::to_chars): a user who typed 0.1 reads 0.1,
// not 0.10000000000000001, and two different doubles never print alike.
inline std::string show(double x) {
  if (std::isnan(x)) return "nan";
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, x);
  return ec == std::errc{} ? std::string(buf, end) : std::string("?");
}
inline std::string show(std::int64_t x) { return std::to_string(x); }

// Counts are non-negative integers; 2^53 is the largest population we promise, since
// beyond it a count is no longer exactly representable as a double.
inline constexpr std::int64_t max_count = std::int64_t{1} << 53;

// The failures build their messages out of line, so that the checks themselves stay a compare
// and a branch that the compiler inlines: called, the five checks of a composition_pvalue were
// 5% of a call on bench_pvalue's large workload.
[[noreturn]] __attribute__((noinline, cold)) inline void invalid_count(
    std::string_view function, std::string_view parameter, std::int64_t x) {
  invalid(function, parameter, show(x), "must be a count in [0, 2^53]");
}

[[noreturn]] __attribute__((noinline, cold)) inline void invalid_at_most(
    std::string_view function, std::string_view parameter, std::int64_t x,
    std::string_view bound_name, std::int64_t bound) {
  invalid(function, parameter, show(x),
          "must not exceed " + std::string(bound_name) + " = " + show(bound));
}

inline void require_count(std::string_view function, std::string_view parameter, std::int64_t x) {
  if (x < 0 || x > max_count) invalid_count(function, parameter, x);
}

inline void require_at_most(std::string_view function, std::string_view parameter, std::int64_t x,
                            std::string_view bound_name, std::int64_t bound) {
  if (x > bound) invalid_at_most(function, parameter, x, bound_name, bound);
}

// Levels and risk targets live in the open interval (0, 1); NaN fails this test too.
[[noreturn]] __attribute__((noinline, cold)) inline void invalid_open_unit(
    std::string_view function, std::string_view parameter, double x) {
  invalid(function, parameter, show(x), "must lie in (0, 1)");
}

inline void require_open_unit(std::string_view function, std::string_view parameter, double x) {
  if (!(x > 0.0 && x < 1.0)) invalid_open_unit(function, parameter, x);
}

}  // namespace ltt::detail
