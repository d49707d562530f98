#pragma once
// The reports' number formats, on the shared ones of data/text.hpp: x with a fixed number of
// decimals ("n/a" when not finite), the same signed, and a probability for a table.
#include <charconv>
#include <cmath>
#include <string>

#include <data/text.hpp>

namespace ltt::pipeline {

inline std::string fixed(double x, int digits = 3) {
  return std::isfinite(x) ? data::number(x, std::chars_format::fixed, digits) : "n/a";
}

// "+0.031" / "-0.015": a margin or a correlation, whose sign is the point.
inline std::string signed_fixed(double x, int digits = 3) {
  return x > 0 ? data::cat("+", fixed(x, digits)) : fixed(x, digits);
}

// A probability for a table: 4 decimals, two significant digits in scientific form below 1e-4
// (p-values of 1e-12 and all-safe probabilities of 1e-36 stay readable), exact 0 and 1 as such.
inline std::string probability(double p) {
  if (p == 0 || p == 1) return p == 0 ? "0" : "1";
  if (!(p >= 1e-4)) {
    if (!std::isfinite(p)) return "n/a";
    return data::number(p, std::chars_format::scientific, 1);
  }
  return fixed(p, 4);
}

}  // namespace ltt::pipeline
