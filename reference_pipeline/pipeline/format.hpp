#pragma once
// The reports' number format: x with a fixed number of decimals ("n/a" when not finite),
// locale-free.
#include <charconv>
#include <cmath>
#include <string>

namespace ltt::pipeline {

inline std::string fixed(double x, int digits = 3) {
  if (!std::isfinite(x)) return "n/a";
  char buffer[400];  // 1e308 with its decimals fits
  const auto r = std::to_chars(buffer, buffer + sizeof buffer, x, std::chars_format::fixed, digits);
  return std::string(buffer, r.ptr);
}

}  // namespace ltt::pipeline
