#include "svg_chart.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>
#include <utility>

#include <data/text.hpp>

namespace ltt::pipeline {
namespace {

using data::cat;
using data::in_quotes;

// Okabe & Ito (2008), "Color Universal Design": distinguishable under the common colour-vision
// deficiencies. Yellow last: it has little contrast on white.
constexpr std::array<std::string_view, 8> palette{"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                                  "#E69F00", "#56B4E9", "#000000", "#F0E442"};

std::string color_or_palette(const std::string& color, std::size_t index) {
  return color.empty() ? std::string(palette[index % palette.size()]) : color;
}

// Text width estimates for layout: about 0.6 em per character of a sans-serif font.
constexpr double tick_font = 11, label_font = 12, title_font = 14;
double text_width(std::string_view text, double font_size) {
  std::size_t chars = 0;
  for (const char c : text) chars += (static_cast<unsigned char>(c) & 0xC0) != 0x80;  // UTF-8
  return 0.6 * font_size * static_cast<double>(chars);
}

// XML character data and attribute values: the five predefined entities; control characters
// other than tab, newline and carriage return are not allowed in XML 1.0 and are dropped.
std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        if (static_cast<unsigned char>(c) >= 0x20 || c == '\t' || c == '\n' || c == '\r') out += c;
    }
  }
  return out;
}

// A pixel coordinate: at most 2 decimals, trailing zeros trimmed, never "-0". Values far off
// the canvas (data outside an explicit range) are clamped; they lie in the clipped region.
std::string px(double v) {
  v = std::clamp(v, -1e6, 1e6);
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, v, std::chars_format::fixed, 2);
  std::string s(buffer, result.ptr);
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  if (s == "-0") s = "0";
  return s;
}

// n * 10^k written exactly: plain decimals for magnitudes 1e-4 .. 1e7, else d.ddde±x.
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

struct Tick {
  double value;
  std::string label;
};

double pow10(int k) { return k >= 0 ? std::pow(10.0, k) : 1.0 / std::pow(10.0, -k); }

// Ticks at multiples of the smallest step m * 10^k (m in {1, 2, 5}) that puts at most `target`
// of them in [lo, hi]. Tick i is the integer i * m times 10^k, so labels are exact decimals.
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

// Log10 axis: powers of ten (every d-th decade when there are many); when fewer than three
// fall in the range, 2 and 5 times them too; and when even that gives fewer than two, linear
// ticks placed on the log scale.
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

void require_finite(std::string_view where, std::string_view field, double v) {
  if (!std::isfinite(v))
    throw std::invalid_argument(cat(where, ": ", in_quotes(field), " must be finite"));
}

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

Axis resolve_axis(std::string_view where, std::string_view axis, std::span<const double> values,
                  bool log, std::optional<double> fixed_lo, std::optional<double> fixed_hi,
                  double pad = 0.05) {
  const std::string lo_name = cat(axis, "_min"), hi_name = cat(axis, "_max");
  for (const auto& [bound, name] : {std::pair{fixed_lo, lo_name}, std::pair{fixed_hi, hi_name}})
    if (bound) {
      require_finite(where, name, *bound);
      if (log && *bound <= 0)
        throw std::invalid_argument(
            cat(where, ": ", in_quotes(name), " must be > 0 on a log axis"));
    }
  if (fixed_lo && fixed_hi && !(*fixed_lo < *fixed_hi))
    throw std::invalid_argument(
        cat(where, ": ", in_quotes(lo_name), " must be below ", in_quotes(hi_name)));
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
    throw std::invalid_argument(
        cat(where, ": the ", in_quotes(axis), " values are too large to plot"));
  return result;
}

// Plot area in pixels.
struct Frame {
  double left, top, right, bottom;
  double x(const Axis& a, double v) const { return left + a.fraction(v) * (right - left); }
  double y(const Axis& a, double v) const { return bottom - a.fraction(v) * (bottom - top); }
};

std::string document_start(int width, int height) {
  return cat("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n",
             "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"",
             std::to_string(width), "\" height=\"", std::to_string(height), "\" viewBox=\"0 0 ",
             std::to_string(width), " ", std::to_string(height),
             "\" font-family=\"sans-serif\" font-size=\"12\">\n");
}

void check_size(std::string_view where, int width, int height) {
  if (width < 1 || width > 100000)
    throw std::invalid_argument(
        cat(where, ": 'width' must be in 1 .. 100000 pixels, got ", std::to_string(width)));
  if (height < 1 || height > 100000)
    throw std::invalid_argument(
        cat(where, ": 'height' must be in 1 .. 100000 pixels, got ", std::to_string(height)));
}

void check_plot_area(std::string_view where, const Frame& f) {
  if (f.right - f.left < 40)
    throw std::invalid_argument(cat(where, ": 'width' leaves no room for the plot area"));
  if (f.bottom - f.top < 40)
    throw std::invalid_argument(cat(where, ": 'height' leaves no room for the plot area"));
}

void check_line(std::string_view where, const ReferenceLine& line, std::size_t i) {
  if (!(line.width >= 0) || !std::isfinite(line.width))
    throw std::invalid_argument(
        cat(where, ": lines[", std::to_string(i), "]: 'width' must be finite and >= 0"));
}

std::string dash_attribute(bool dashed) { return dashed ? " stroke-dasharray=\"6 4\"" : ""; }

std::string text_element(double x, double y, std::string_view anchor, std::string_view css_class,
                         std::string_view text, std::string_view extra = {}) {
  return cat("<text x=\"", px(x), "\" y=\"", px(y), "\" text-anchor=\"", anchor, "\" class=\"",
             css_class, "\"", extra, ">", escape(text), "</text>\n");
}

// Title, frame, grid, ticks and axis labels around the plot area. Grid lines go first so the
// data is drawn over them; the frame is drawn last by the caller.
std::string title_and_background(std::string_view title, int width, int height) {
  std::string out;
  if (!title.empty()) out += cat("<title>", escape(title), "</title>\n");
  out += cat("<rect x=\"0\" y=\"0\" width=\"", std::to_string(width), "\" height=\"",
             std::to_string(height), "\" fill=\"#ffffff\"/>\n");
  if (!title.empty())
    out += text_element(width / 2.0, 22, "middle", "title", title,
                        " font-size=\"14\" font-weight=\"bold\"");
  return out;
}

std::string y_grid_and_ticks(const Frame& f, const Axis& y, const std::vector<Tick>& ticks) {
  std::string grid, marks, labels;
  for (const Tick& t : ticks) {
    const std::string py = px(f.y(y, t.value));
    grid += cat("M", px(f.left), " ", py, "H", px(f.right));
    marks += cat("M", px(f.left - 5), " ", py, "H", px(f.left));
    labels += text_element(f.left - 8, f.y(y, t.value) + 4, "end", "y-tick", t.label,
                           " font-size=\"11\"");
  }
  if (ticks.empty()) return {};
  return cat("<path d=\"", grid, "\" stroke=\"#e5e5e5\"/>\n<path d=\"", marks,
             "\" stroke=\"#333333\"/>\n", labels);
}

std::string frame_rect(const Frame& f) {
  return cat("<rect x=\"", px(f.left), "\" y=\"", px(f.top), "\" width=\"", px(f.right - f.left),
             "\" height=\"", px(f.bottom - f.top), "\" fill=\"none\" stroke=\"#333333\"/>\n");
}

// The data layer: a nested viewport over the plot area clips whatever falls outside the range
// (SVG 1.1: an inner <svg> clips to its viewport), without the document-wide id a clipPath needs.
std::string clip_start(const Frame& f) {
  const std::string x = px(f.left), y = px(f.top), w = px(f.right - f.left),
                    h = px(f.bottom - f.top);
  return cat("<svg x=\"", x, "\" y=\"", y, "\" width=\"", w, "\" height=\"", h, "\" viewBox=\"", x,
             " ", y, " ", w, " ", h, "\" overflow=\"hidden\">\n");
}

std::string y_label_element(const Frame& f, std::string_view label) {
  if (label.empty()) return {};
  const double cy = (f.top + f.bottom) / 2;
  return text_element(16, cy, "middle", "y-label", label,
                      cat(" transform=\"rotate(-90 16 ", px(cy), ")\""));
}

std::string reference_lines(const Frame& f, const Axis& x, const Axis& y,
                            std::span<const ReferenceLine> lines) {
  std::string out;
  for (const ReferenceLine& l : lines) {
    const bool vertical = l.axis == ReferenceLine::Axis::x;
    const Axis& a = vertical ? x : y;
    if (!a.usable(l.value)) continue;
    const std::string d = vertical
                              ? cat("M", px(f.x(a, l.value)), " ", px(f.top), "V", px(f.bottom))
                              : cat("M", px(f.left), " ", px(f.y(a, l.value)), "H", px(f.right));
    out += cat("<path d=\"", d, "\" stroke=\"", escape(l.color), "\" stroke-width=\"", px(l.width),
               "\" fill=\"none\"", dash_attribute(l.dashed), "/>\n");
  }
  return out;
}

std::string reference_labels(const Frame& f, const Axis& x, const Axis& y,
                             std::span<const ReferenceLine> lines) {
  std::string out;
  for (const ReferenceLine& l : lines) {
    if (l.label.empty()) continue;
    const std::string fill = cat(" fill=\"", escape(l.color), "\" font-size=\"11\"");
    if (l.axis == ReferenceLine::Axis::x) {
      if (x.contains(l.value)) {
        // Right of the line, or left of it where the label would run past the plot's edge.
        const double at = f.x(x, l.value);
        const bool fits = at + 4 + text_width(l.label, 11) <= f.right;
        out += text_element(fits ? at + 4 : at - 4, f.top + 12, fits ? "start" : "end",
                            "line-label", l.label, fill);
      }
    } else if (y.contains(l.value)) {
      out += text_element(f.right - 4, f.y(y, l.value) - 4, "end", "line-label", l.label, fill);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------

void check_chart(const Chart& c) {
  constexpr std::string_view where = "render_svg (chart)";
  check_size(where, c.width, c.height);
  for (std::size_t i = 0; i < c.series.size(); ++i) {
    const Series& s = c.series[i];
    const std::string name = cat(where, ": series ", std::to_string(i),
                                 s.label.empty() ? "" : cat(" (", in_quotes(s.label), ")"));
    if (s.x.size() != s.y.size())
      throw std::invalid_argument(cat(name, ": 'x' has ", std::to_string(s.x.size()),
                                      " values and 'y' has ", std::to_string(s.y.size())));
    if (!s.y_low.empty() && s.y_low.size() != s.y.size())
      throw std::invalid_argument(cat(name, ": 'y_low' has ", std::to_string(s.y_low.size()),
                                      " values, one per 'y' value (", std::to_string(s.y.size()),
                                      ") or none is needed"));
    if (!s.y_high.empty() && s.y_high.size() != s.y.size())
      throw std::invalid_argument(cat(name, ": 'y_high' has ", std::to_string(s.y_high.size()),
                                      " values, one per 'y' value (", std::to_string(s.y.size()),
                                      ") or none is needed"));
    if (!(s.radius >= 0) || !std::isfinite(s.radius))
      throw std::invalid_argument(cat(name, ": 'radius' must be finite and >= 0"));
  }
  for (std::size_t i = 0; i < c.lines.size(); ++i) check_line(where, c.lines[i], i);
}

std::string legend(const Frame& f, const std::vector<Series>& series) {
  std::string out;
  double y = f.top + 10;
  for (std::size_t i = 0; i < series.size(); ++i) {
    const Series& s = series[i];
    if (s.label.empty()) continue;
    const std::string color = escape(color_or_palette(s.color, i));
    const double x = f.right + 14;
    if (s.kind == Series::Kind::line)
      out += cat("<path d=\"M", px(x), " ", px(y), "H", px(x + 24), "\" stroke=\"", color,
                 "\" stroke-width=\"2\" fill=\"none\"", dash_attribute(s.dashed), "/>\n");
    else
      out += cat("<circle cx=\"", px(x + 12), "\" cy=\"", px(y), "\" r=\"",
                 px(std::min(s.radius, 5.0)), "\" fill=\"", color, "\"/>\n");
    out += text_element(x + 30, y + 4, "start", "legend", s.label);
    y += 18;
  }
  return out;
}

std::string series_elements(const Frame& f, const Axis& x, const Axis& y, const Series& s,
                            std::size_t index) {
  const std::string color = escape(color_or_palette(s.color, index));
  std::string out;
  // Error bars with caps, one path per series.
  std::string bars;
  if (!s.y_low.empty() || !s.y_high.empty())
    for (std::size_t i = 0; i < s.x.size(); ++i) {
      if (!x.usable(s.x[i]) || !std::isfinite(s.y[i])) continue;
      const double lo = s.y_low.empty() ? s.y[i] : s.y_low[i];
      const double hi = s.y_high.empty() ? s.y[i] : s.y_high[i];
      if (!std::isfinite(lo) || !std::isfinite(hi)) continue;
      const double px_x = f.x(x, s.x[i]), y_lo = f.y(y, lo), y_hi = f.y(y, hi);
      bars += cat("M", px(px_x), " ", px(y_lo), "V", px(y_hi), "M", px(px_x - 3), " ", px(y_lo),
                  "H", px(px_x + 3), "M", px(px_x - 3), " ", px(y_hi), "H", px(px_x + 3));
    }
  if (!bars.empty())
    out +=
        cat("<path d=\"", bars, "\" stroke=\"", color, "\" stroke-width=\"1\" fill=\"none\"/>\n");
  if (s.kind == Series::Kind::line) {
    // A skipped value breaks the line: the next usable point starts a new subpath.
    std::string d;
    bool open = false;
    for (std::size_t i = 0; i < s.x.size(); ++i) {
      if (!x.usable(s.x[i]) || !std::isfinite(s.y[i])) {
        open = false;
        continue;
      }
      d += cat(open ? "L" : "M", px(f.x(x, s.x[i])), " ", px(f.y(y, s.y[i])));
      open = true;
    }
    if (!d.empty())
      out += cat("<path d=\"", d, "\" stroke=\"", color, "\" stroke-width=\"1.8\" fill=\"none\"",
                 dash_attribute(s.dashed), "/>\n");
  } else if (s.radius > 0) {
    std::string circles;
    for (std::size_t i = 0; i < s.x.size(); ++i)
      if (x.usable(s.x[i]) && std::isfinite(s.y[i]))
        circles += cat("<circle cx=\"", px(f.x(x, s.x[i])), "\" cy=\"", px(f.y(y, s.y[i])),
                       "\" r=\"", px(s.radius), "\"/>\n");
    if (!circles.empty()) out += cat("<g fill=\"", color, "\">\n", circles, "</g>\n");
  }
  return out;
}

int tick_target(double pixels, double per_tick) {
  return std::clamp(static_cast<int>(pixels / per_tick), 3, 10);
}

// ---------------------------------------------------------------------------------------------

void check_bar_chart(const BarChart& c) {
  constexpr std::string_view where = "render_svg (bar chart)";
  check_size(where, c.width, c.height);
  const std::size_t n = c.categories.size();
  const auto mismatch = [&](std::string_view field, std::size_t size, bool optional) {
    throw std::invalid_argument(cat(where, ": ", in_quotes(field), " has ", std::to_string(size),
                                    " entries, one per entry of 'categories' (", std::to_string(n),
                                    ")", optional ? " or none" : "", " is needed"));
  };
  if (c.value.size() != n) mismatch("value", c.value.size(), false);
  if (!c.low.empty() && c.low.size() != n) mismatch("low", c.low.size(), true);
  if (!c.high.empty() && c.high.size() != n) mismatch("high", c.high.size(), true);
  if (!c.color.empty() && c.color.size() != n) mismatch("color", c.color.size(), true);
  for (std::size_t i = 0; i < c.lines.size(); ++i) {
    check_line(where, c.lines[i], i);
    if (c.lines[i].axis != ReferenceLine::Axis::y)
      throw std::invalid_argument(cat(where,
                                      ": 'lines' of a bar chart are horizontal (Axis::y); lines[",
                                      std::to_string(i), "] is vertical"));
  }
}

}  // namespace

std::string render_svg(const Chart& chart) {
  check_chart(chart);
  constexpr std::string_view where = "render_svg (chart)";
  std::vector<double> xs, ys;
  for (const Series& s : chart.series) {
    // Only points that are drawn count toward the ranges.
    for (std::size_t i = 0; i < s.y.size(); ++i) {
      if (!std::isfinite(s.x[i]) || (chart.log_x && !(s.x[i] > 0)) || !std::isfinite(s.y[i]))
        continue;
      xs.push_back(s.x[i]);
      ys.push_back(s.y[i]);
      if (!s.y_low.empty()) ys.push_back(s.y_low[i]);
      if (!s.y_high.empty()) ys.push_back(s.y_high[i]);
    }
  }
  for (const ReferenceLine& l : chart.lines)
    (l.axis == ReferenceLine::Axis::x ? xs : ys).push_back(l.value);
  const Axis x = resolve_axis(where, "x", xs, chart.log_x, chart.x_min, chart.x_max);
  const Axis y = resolve_axis(where, "y", ys, false, chart.y_min, chart.y_max);

  // Layout: vertical margins first (they fix the y ticks), then the y tick labels fix the left
  // margin, and the legend the right one.
  Frame f{};
  f.top = chart.title.empty() ? 14 : 36;
  f.bottom = chart.height - (8 + 16 + (chart.x_label.empty() ? 0 : 20) + 6);
  const std::vector<Tick> y_ticks = linear_ticks(y.lo, y.hi, tick_target(f.bottom - f.top, 45));
  double y_tick_width = 0;
  for (const Tick& t : y_ticks)
    y_tick_width = std::max(y_tick_width, text_width(t.label, tick_font));
  f.left = 8 + (chart.y_label.empty() ? 0 : 20) + y_tick_width + 10;
  double legend_width = 0;
  for (const Series& s : chart.series)
    if (!s.label.empty())
      legend_width = std::max(legend_width, 44 + text_width(s.label, label_font));
  legend_width = std::min(legend_width, 0.4 * chart.width);
  f.right = chart.width - 16 - legend_width;
  check_plot_area(where, f);
  const int x_target = tick_target(f.right - f.left, 80);
  const std::vector<Tick> x_ticks =
      x.log ? log_ticks(x.lo, x.hi, x_target) : linear_ticks(x.lo, x.hi, x_target);

  std::string out = document_start(chart.width, chart.height);
  out += title_and_background(chart.title, chart.width, chart.height);
  // Grid, then the x ticks.
  std::string grid, marks, x_labels;
  for (const Tick& t : x_ticks) {
    const std::string px_x = px(f.x(x, t.value));
    grid += cat("M", px_x, " ", px(f.top), "V", px(f.bottom));
    marks += cat("M", px_x, " ", px(f.bottom), "V", px(f.bottom + 5));
    x_labels += text_element(f.x(x, t.value), f.bottom + 18, "middle", "x-tick", t.label,
                             " font-size=\"11\"");
  }
  if (!grid.empty()) out += cat("<path d=\"", grid, "\" stroke=\"#e5e5e5\"/>\n");
  out += y_grid_and_ticks(f, y, y_ticks);
  if (!marks.empty()) out += cat("<path d=\"", marks, "\" stroke=\"#333333\"/>\n", x_labels);
  // Data, clipped to the plot area.
  out += clip_start(f);
  out += reference_lines(f, x, y, chart.lines);
  for (std::size_t i = 0; i < chart.series.size(); ++i)
    out += series_elements(f, x, y, chart.series[i], i);
  out += "</svg>\n";
  out += frame_rect(f);
  out += reference_labels(f, x, y, chart.lines);
  if (!chart.x_label.empty())
    out +=
        text_element((f.left + f.right) / 2, chart.height - 10, "middle", "x-label", chart.x_label);
  out += y_label_element(f, chart.y_label);
  out += legend(f, chart.series);
  out += "</svg>\n";
  return out;
}

std::string render_svg(const BarChart& chart) {
  check_bar_chart(chart);
  constexpr std::string_view where = "render_svg (bar chart)";
  const std::size_t n = chart.categories.size();
  std::vector<double> ys{0.0};  // bars start at 0
  ys.insert(ys.end(), chart.value.begin(), chart.value.end());
  ys.insert(ys.end(), chart.low.begin(), chart.low.end());
  ys.insert(ys.end(), chart.high.begin(), chart.high.end());
  for (const ReferenceLine& l : chart.lines) ys.push_back(l.value);
  // Padding on the data sides only: a bar chart of positive values starts at exactly 0.
  Axis y = resolve_axis(where, "y", ys, false, chart.y_min, chart.y_max, 0.0);
  {
    const double span = y.hi - y.lo;
    if (!chart.y_max && y.hi > 0) y.hi += 0.05 * span;
    if (!chart.y_min && y.lo < 0) y.lo -= 0.05 * span;
  }

  Frame f{};
  f.top = chart.title.empty() ? 14 : 36;
  f.right = chart.width - 16;
  // The left margin needs the y tick labels, which need the plot height, which needs the
  // category labels' rotation, which needs the bar width: estimate the left margin from a
  // first pass of y ticks at the full height.
  const double bottom_plain = chart.height - (8 + 18 + 6);
  std::vector<Tick> y_ticks = linear_ticks(y.lo, y.hi, tick_target(bottom_plain - f.top, 45));
  double y_tick_width = 0;
  for (const Tick& t : y_ticks)
    y_tick_width = std::max(y_tick_width, text_width(t.label, tick_font));
  f.left = 8 + (chart.y_label.empty() ? 0 : 20) + y_tick_width + 10;
  const double slot = (f.right - f.left) / static_cast<double>(std::max<std::size_t>(n, 1));
  double label_width = 0;
  for (const std::string& c : chart.categories)
    label_width = std::max(label_width, text_width(c, tick_font));
  // Long labels are rotated by 40 degrees; the margin grows with them, up to 40% of the height.
  const bool rotate = label_width > slot - 4;
  const double label_height =
      rotate ? std::min(label_width * std::sin(0.698) + 12, 0.4 * chart.height) : 16;
  f.bottom = chart.height - (8 + label_height + 6);
  check_plot_area(where, f);
  y_ticks = linear_ticks(y.lo, y.hi, tick_target(f.bottom - f.top, 45));

  std::string out = document_start(chart.width, chart.height);
  out += title_and_background(chart.title, chart.width, chart.height);
  out += y_grid_and_ticks(f, y, y_ticks);
  out += clip_start(f);
  const double base = f.y(y, std::clamp(0.0, y.lo, y.hi));
  const double bar = std::min(0.7 * slot, 80.0);
  std::string whiskers;
  for (std::size_t i = 0; i < n; ++i) {
    const double cx = f.left + (static_cast<double>(i) + 0.5) * slot;
    if (std::isfinite(chart.value[i])) {
      const double top = f.y(y, chart.value[i]);
      const std::string color = escape(
          chart.color.empty() || chart.color[i].empty() ? color_or_palette({}, i) : chart.color[i]);
      out += cat("<rect x=\"", px(cx - bar / 2), "\" y=\"", px(std::min(top, base)), "\" width=\"",
                 px(bar), "\" height=\"", px(std::abs(base - top)), "\" fill=\"", color, "\"/>\n");
    }
    if (!chart.low.empty() || !chart.high.empty()) {
      const double lo = chart.low.empty() ? chart.value[i] : chart.low[i];
      const double hi = chart.high.empty() ? chart.value[i] : chart.high[i];
      if (std::isfinite(lo) && std::isfinite(hi)) {
        const double y_lo = f.y(y, lo), y_hi = f.y(y, hi), cap = std::min(bar / 4, 6.0);
        whiskers += cat("M", px(cx), " ", px(y_lo), "V", px(y_hi), "M", px(cx - cap), " ", px(y_lo),
                        "H", px(cx + cap), "M", px(cx - cap), " ", px(y_hi), "H", px(cx + cap));
      }
    }
  }
  if (!whiskers.empty())
    out +=
        cat("<path d=\"", whiskers, "\" stroke=\"#222222\" stroke-width=\"1.2\" fill=\"none\"/>\n");
  const Axis x{0, 1, false};
  out += reference_lines(f, x, y, chart.lines);
  out += "</svg>\n";
  out += frame_rect(f);
  out += reference_labels(f, x, y, chart.lines);
  for (std::size_t i = 0; i < n; ++i) {
    const double cx = f.left + (static_cast<double>(i) + 0.5) * slot;
    if (rotate) {
      const double ty = f.bottom + 14;
      out += text_element(
          cx + 4, ty, "end", "category", chart.categories[i],
          cat(" font-size=\"11\" transform=\"rotate(-40 ", px(cx + 4), " ", px(ty), ")\""));
    } else {
      out += text_element(cx, f.bottom + 16, "middle", "category", chart.categories[i],
                          " font-size=\"11\"");
    }
  }
  out += y_label_element(f, chart.y_label);
  out += "</svg>\n";
  return out;
}

// ---------------------------------------------------------------------------------------------

namespace {

struct Attribute {
  std::string name, value;
  char quote;
};

// The root element's start tag of an SVG document: where it starts and ends, and its
// attributes (values kept as written, escaped as they are).
struct RootTag {
  std::size_t begin = 0, end = 0;
  std::vector<Attribute> attributes;
};

RootTag root_tag(std::string_view doc, std::size_t index) {
  const auto fail = [index](std::string_view why) {
    return std::invalid_argument(cat("side_by_side: svgs[", std::to_string(index), "] ", why));
  };
  const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  std::size_t i = 0;
  // Prolog: XML declaration, processing instructions, comments, a doctype.
  for (;;) {
    while (i < doc.size() && is_space(doc[i])) ++i;
    std::string_view close;
    if (doc.substr(i, 4) == "<!--")
      close = "-->";
    else if (doc.substr(i, 2) == "<?")
      close = "?>";
    else if (doc.substr(i, 2) == "<!")
      close = ">";
    else
      break;
    const std::size_t j = doc.find(close, i + 2);
    if (j == std::string_view::npos) throw fail("has an unterminated prolog");
    i = j + close.size();
  }
  if (doc.substr(i, 4) != "<svg" || i + 4 >= doc.size() ||
      !(is_space(doc[i + 4]) || doc[i + 4] == '>' || doc[i + 4] == '/'))
    throw fail("does not start with an <svg> element");
  RootTag tag;
  tag.begin = i;
  i += 4;
  for (;;) {
    while (i < doc.size() && is_space(doc[i])) ++i;
    if (i >= doc.size()) throw fail("has an unterminated <svg> start tag");
    if (doc[i] == '>') break;
    if (doc[i] == '/') throw fail("is an empty <svg/> element");
    const std::size_t name_begin = i;
    while (i < doc.size() && doc[i] != '=' && !is_space(doc[i]) && doc[i] != '>') ++i;
    Attribute a{std::string(doc.substr(name_begin, i - name_begin)), {}, '"'};
    while (i < doc.size() && is_space(doc[i])) ++i;
    if (i >= doc.size() || doc[i] != '=')
      throw fail(cat("has attribute ", in_quotes(a.name), " without a value"));
    ++i;
    while (i < doc.size() && is_space(doc[i])) ++i;
    if (i >= doc.size() || (doc[i] != '"' && doc[i] != '\''))
      throw fail("has an unquoted attribute value");
    a.quote = doc[i++];
    const std::size_t value_end = doc.find(a.quote, i);
    if (value_end == std::string_view::npos) throw fail("has an unterminated attribute value");
    a.value = std::string(doc.substr(i, value_end - i));
    i = value_end + 1;
    tag.attributes.push_back(std::move(a));
  }
  tag.end = i + 1;
  return tag;
}

// A length in user units ("640", "640px"); nullopt for percentages and other units.
std::optional<double> pixels(std::string_view text) {
  double v = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (r.ec != std::errc{}) return std::nullopt;
  const std::string_view unit = text.substr(static_cast<std::size_t>(r.ptr - text.data()));
  if (!(unit.empty() || unit == "px") || !(v > 0) || !std::isfinite(v)) return std::nullopt;
  return v;
}

std::optional<double> view_box_size(std::string_view text, int which) {  // 2: width, 3: height
  std::vector<double> numbers;
  const char* p = text.data();
  const char* end = p + text.size();
  while (p < end) {
    while (p < end && (*p == ' ' || *p == ',' || *p == '\t' || *p == '\n' || *p == '\r')) ++p;
    if (p == end) break;
    double v = 0;
    const auto r = std::from_chars(p, end, v);
    if (r.ec != std::errc{}) return std::nullopt;
    numbers.push_back(v);
    p = r.ptr;
  }
  if (numbers.size() != 4 || !(numbers[static_cast<std::size_t>(which)] > 0)) return std::nullopt;
  return numbers[static_cast<std::size_t>(which)];
}

}  // namespace

std::string side_by_side(std::span<const std::string> svgs) {
  struct Placed {
    std::string start_tag;
    std::string_view rest;  // after the root start tag, through the document's last '>'
    double width, height;
  };
  std::vector<Placed> placed;
  for (std::size_t k = 0; k < svgs.size(); ++k) {
    const std::string_view doc = svgs[k];
    const RootTag tag = root_tag(doc, k);
    std::optional<double> w, h;
    std::string_view view_box;
    for (const Attribute& a : tag.attributes) {
      if (a.name == "width") w = pixels(a.value);
      if (a.name == "height") h = pixels(a.value);
      if (a.name == "viewBox") view_box = a.value;
    }
    if (!w) w = view_box_size(view_box, 2);
    if (!h) h = view_box_size(view_box, 3);
    if (!w || !h)
      throw std::invalid_argument(cat("side_by_side: svgs[", std::to_string(k),
                                      "] has no width and height in pixels (nor a viewBox)"));
    const std::size_t last = doc.rfind('>');
    const std::string_view rest = doc.substr(tag.end, last + 1 - tag.end);
    if (rest.size() < 6 || rest.substr(rest.size() - 6) != "</svg>")
      throw std::invalid_argument(
          cat("side_by_side: svgs[", std::to_string(k), "] does not end with </svg>"));
    placed.push_back({{}, rest, *w, *h});
    // The nested root keeps its attributes except the position, which it gets from us, and
    // gets an explicit size (a nested <svg> without one would fill the parent).
    std::string start = "<svg";
    for (const Attribute& a : tag.attributes)
      if (a.name != "x" && a.name != "y" && a.name != "width" && a.name != "height")
        start += cat(" ", a.name, "=", std::string(1, a.quote), a.value, std::string(1, a.quote));
    placed.back().start_tag = std::move(start);
  }
  double width = 0, height = 0;
  for (const Placed& p : placed) {
    width += p.width;
    height = std::max(height, p.height);
  }
  std::string out =
      cat("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n",
          "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"", px(width),
          "\" height=\"", px(height), "\" viewBox=\"0 0 ", px(width), " ", px(height), "\">\n");
  double x = 0;
  for (const Placed& p : placed) {
    out += cat(p.start_tag, " x=\"", px(x), "\" y=\"0\" width=\"", px(p.width), "\" height=\"",
               px(p.height), "\">", p.rest, "\n");
    x += p.width;
  }
  out += "</svg>\n";
  return out;
}

}  // namespace ltt::pipeline
