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

// A probability for a table: 4 decimals, two significant digits in scientific form below 1e-4
// (p-values of 1e-12 and all-safe probabilities of 1e-36 stay readable), exact 0 and 1 as such.
inline std::string probability(double p) {
  if (p == 0 || p == 1) return p == 0 ? "0" : "1";
  if (!(p >= 1e-4)) {
    if (!std::isfinite(p)) return "n/a";
    char buffer[64];
    const auto r = std::to_chars(buffer, buffer + sizeof buffer, p, std::chars_format::scientific, 1);
    return std::string(buffer, r.ptr);
  }
  return fixed(p, 4);
}

}  // namespace ltt::pipeline
