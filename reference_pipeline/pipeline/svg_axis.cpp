#include "pipeline/svg_axis.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

#include <data/text.hpp>

#include "pipeline/check.hpp"

namespace ltt::pipeline::svg {

using data::cat;
using data::in_quotes;
using detail::invalid;
using detail::show;

std::string decimal_label(std::int64_t n, int k) {
  if (n == 0) return "0";
  const bool negative = n < 0;
  std::string digits = std::to_string(negative ? -n : n);
  // Move trailing zeros of the digits into the exponent.
  while (digits.size() > 1 && digits.back() == '0') {
    digits.pop_back();
    ++k;
  }
  const int magnitude = k + static_cast<int>(digits.size()) - 1;  // floor(log10 |value|)
  std::string s;
  if (magnitude >= -4 && magnitude < 7) {
    if (k >= 0) {
      s = digits + std::string(static_cast<std::size_t>(k), '0');
    } else {
      const auto decimals = static_cast<std::size_t>(-k);
      if (digits.size() <= decimals) digits.insert(0, decimals - digits.size() + 1, '0');
      s = cat(std::string_view(digits).substr(0, digits.size() - decimals), ".",
              std::string_view(digits).substr(digits.size() - decimals));
    }
  } else {
    s = digits.substr(0, 1);
    if (digits.size() > 1) s += cat(".", std::string_view(digits).substr(1));
    s += cat("e", std::to_string(magnitude));
  }
  return negative ? cat("-", s) : s;
}

namespace {

// Labels of one axis with a common number of decimals ("0.0", "0.5", "1.0").
std::string fixed_label(std::int64_t n, int k, int decimals) {
  std::string s = decimal_label(n, k);
  if (decimals <= 0 || s.find('e') != std::string::npos) return s;
  const std::size_t dot = s.find('.');
  const std::size_t have = dot == std::string::npos ? 0 : s.size() - dot - 1;
  if (dot == std::string::npos) s += '.';
  s.append(static_cast<std::size_t>(decimals) - std::min(have, static_cast<std::size_t>(decimals)),
           '0');
  return s;
}

double pow10(int k) { return k >= 0 ? std::pow(10.0, k) : 1.0 / std::pow(10.0, -k); }

}  // namespace

std::vector<Tick> linear_ticks(double lo, double hi, int target) {
  const int k0 = static_cast<int>(std::floor(std::log10((hi - lo) / target)));
  for (int k = k0 - 1; k <= k0 + 2; ++k)
    for (const int m : {1, 2, 5}) {
      const double step = m * pow10(k);
      const double first = std::ceil(lo / step - 1e-9), last = std::floor(hi / step + 1e-9);
      if (last - first + 1 > target) continue;
      const bool plain = std::max(std::abs(lo), std::abs(hi)) < 1e7 && k >= -4;
      const int decimals = plain && k < 0 ? -k : 0;
      std::vector<Tick> ticks;
      for (double i = first; i <= last; ++i) {
        const auto n = static_cast<std::int64_t>(i) * m;
        ticks.push_back({i * step, fixed_label(n, k, decimals)});
      }
      return ticks;
    }
  return {};  // not reached: at k = k0 + 1, m = 1 the step exceeds (hi - lo) / target
}

std::vector<Tick> log_ticks(double lo, double hi, int target) {
  const double a = std::log10(lo), b = std::log10(hi);
  const int first = static_cast<int>(std::ceil(a - 1e-9)),
            last = static_cast<int>(std::floor(b + 1e-9));
  std::vector<Tick> ticks;
  if (last - first + 1 >= 3) {
    const int every = std::max(1, (last - first + target) / target);
    for (int e = first; e <= last; ++e)
      if (((e % every) + every) % every == 0) ticks.push_back({pow10(e), decimal_label(1, e)});
    return ticks;
  }
  for (int e = first - 1; e <= last; ++e)
    for (const int m : {1, 2, 5}) {
      const double v = m * pow10(e);
      if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) ticks.push_back({v, decimal_label(m, e)});
    }
  if (ticks.size() >= 2) return ticks;
  return linear_ticks(lo, hi, target);
}

void require_finite(std::string_view field, double v) {
  if (!std::isfinite(v)) invalid(checked_function, field, show(v), "must be finite");
}

int tick_target(double pixels, double per_tick) {
  return std::clamp(static_cast<int>(pixels / per_tick), 3, 10);
}

Axis resolve_axis(std::string_view axis, std::span<const double> values, bool log,
                  std::optional<double> fixed_lo, std::optional<double> fixed_hi, double pad) {
  const std::string lo_name = cat(axis, "_min"), hi_name = cat(axis, "_max");
  for (const auto& [bound, name] : {std::pair{fixed_lo, lo_name}, std::pair{fixed_hi, hi_name}})
    if (bound) {
      require_finite(name, *bound);
      if (log && *bound <= 0)
        invalid(checked_function, name, show(*bound), "must be > 0 on a log axis");
    }
  if (fixed_lo && fixed_hi && !(*fixed_lo < *fixed_hi))
    invalid(checked_function, lo_name, show(*fixed_lo),
            cat("must be below ", in_quotes(hi_name), " = ", show(*fixed_hi)));
  // Work in t = v or log10 v.
  const auto to_t = [log](double v) { return log ? std::log10(v) : v; };
  const auto from_t = [log](double t) { return log ? std::pow(10.0, t) : t; };
  double lo = 0, hi = 0;
  bool any = false;
  for (const double v : values)
    if (std::isfinite(v) && (!log || v > 0)) {
      const double t = to_t(v);
      lo = any ? std::min(lo, t) : t;
      hi = any ? std::max(hi, t) : t;
      any = true;
    }
  if (!any) {
    lo = 0;
    hi = 1;
  } else if (hi - lo <= 1e-9 * std::max(std::abs(lo), std::abs(hi))) {
    // All values equal: half a decade either side on a log axis, else 10% of the value (1 at 0).
    const double half = log ? 0.5 : (lo == 0 ? 1.0 : 0.1 * std::abs(lo));
    lo -= half;
    hi += half;
  } else {
    const double margin = pad * (hi - lo);
    lo -= margin;
    hi += margin;
  }
  const double span = hi - lo;
  if (fixed_lo) lo = to_t(*fixed_lo);
  if (fixed_hi) hi = to_t(*fixed_hi);
  // Too narrow for distinct ticks (both bounds fixed that close, or one fixed with the data on
  // the wrong side of it): keep the fixed bound, give the other the data's span, or more.
  if (!(hi - lo > 1e-9 * std::max(std::abs(lo), std::abs(hi)))) {
    const double width =
        std::max({span, log ? 1.0 : 0.1 * std::max(std::abs(lo), std::abs(hi)), 1e-300});
    if (fixed_lo)
      hi = lo + width;
    else
      lo = hi - width;
  }
  const Axis result{from_t(lo), from_t(hi), log};
  if (!std::isfinite(result.lo) || !std::isfinite(result.hi) ||
      !std::isfinite(result.hi - result.lo))
    invalid(checked_function, axis, "holds values too large to plot");
  return result;
}

}  // namespace ltt::pipeline::svg
