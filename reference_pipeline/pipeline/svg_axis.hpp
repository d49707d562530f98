#pragma once
// Axis and tick arithmetic of the SVG charts (svg_chart.hpp): an axis's range from its data and
// fixed bounds, and "nice" ticks with exact decimal labels. Internal to the charts.
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ltt::pipeline::svg {

struct Tick {
  double value;
  std::string label;
};

// n * 10^k written exactly: plain decimals for magnitudes 1e-4 .. 1e7, else d.ddde±x.
std::string decimal_label(std::int64_t n, int k);

// Ticks at multiples of the smallest step m * 10^k (m in {1, 2, 5}) that puts at most `target`
// of them in [lo, hi]. Tick i is the integer i * m times 10^k, so labels are exact decimals.
std::vector<Tick> linear_ticks(double lo, double hi, int target);

// Log10 axis: powers of ten (every d-th decade when there are many); when fewer than three
// fall in the range, 2 and 5 times them too; and when even that gives fewer than two, linear
// ticks placed on the log scale.
std::vector<Tick> log_ticks(double lo, double hi, int target);

// About one tick per `per_tick` pixels, 3 to 10 of them.
int tick_target(double pixels, double per_tick);

// The checks of this layer throw std::invalid_argument naming render_svg and the chart's field
// ("ltt::pipeline::render_svg: parameter 'x_min' = 0 must be > 0 on a log axis").
inline constexpr std::string_view checked_function = "render_svg";

// Throws for NaN and infinities.
void require_finite(std::string_view field, double v);

// One axis: the data range, widened when empty or degenerate, padded 5% on the sides that are
// not fixed by the options; a log axis does all of this in log10 units.
struct Axis {
  double lo = 0, hi = 1;
  bool log = false;

  double fraction(double v) const {
    return log ? (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo))
               : (v - lo) / (hi - lo);
  }
  bool usable(double v) const { return std::isfinite(v) && (!log || v > 0); }
  bool contains(double v) const {
    return usable(v) && v >= lo - 1e-9 * (hi - lo) && v <= hi + 1e-9 * (hi - lo);
  }
};

Axis resolve_axis(std::string_view axis, std::span<const double> values, bool log,
                  std::optional<double> fixed_lo, std::optional<double> fixed_hi,
                  double pad = 0.05);

}  // namespace ltt::pipeline::svg
