#include "svg_chart.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <string_view>
#include <utility>

#include <data/text.hpp>

#include "pipeline/check.hpp"
#include "pipeline/svg_axis.hpp"
#include "pipeline/svg_elements.hpp"

namespace ltt::pipeline {
namespace {

using data::cat;
using data::in_quotes;
using detail::invalid;
using detail::show;
using namespace svg;

void check_chart(const Chart& c) {
  check_size(c.width, c.height);
  for (std::size_t i = 0; i < c.series.size(); ++i) {
    const Series& s = c.series[i];
    const std::string in_series =
        cat(" in series ", show(i), s.label.empty() ? "" : cat(" (", in_quotes(s.label), ")"));
    const auto per_y = [&](std::string_view field, std::size_t size, bool optional) {
      invalid(checked_function, field,
              cat("must hold one value per 'y' value (", show(s.y.size()), ")",
                  optional ? " or none" : "", "; it holds ", show(size), in_series));
    };
    if (s.x.size() != s.y.size()) per_y("x", s.x.size(), false);
    if (!s.y_low.empty() && s.y_low.size() != s.y.size()) per_y("y_low", s.y_low.size(), true);
    if (!s.y_high.empty() && s.y_high.size() != s.y.size()) per_y("y_high", s.y_high.size(), true);
    if (!(s.radius >= 0) || !std::isfinite(s.radius))
      invalid(checked_function, "radius", show(s.radius),
              cat("must be finite and >= 0", in_series));
  }
  for (std::size_t i = 0; i < c.lines.size(); ++i) check_line(c.lines[i], i);
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

// Both axes from what is drawn: the points of every series (error bars included) and the
// reference lines.
std::pair<Axis, Axis> chart_axes(const Chart& chart) {
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
  return {resolve_axis("x", xs, chart.log_x, chart.x_min, chart.x_max),
          resolve_axis("y", ys, false, chart.y_min, chart.y_max)};
}

struct ChartLayout {
  Axis x, y;
  Frame f;
  std::vector<Tick> x_ticks, y_ticks;
};

// Vertical margins first (they fix the y ticks), then the y tick labels fix the left margin,
// and the legend the right one.
ChartLayout chart_layout(const Chart& chart) {
  const auto [x, y] = chart_axes(chart);
  Frame f{};
  f.top = chart.title.empty() ? 14 : 36;
  f.bottom = chart.height - (8 + 16 + (chart.x_label.empty() ? 0 : 20) + 6);
  std::vector<Tick> y_ticks = linear_ticks(y.lo, y.hi, tick_target(f.bottom - f.top, 45));
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
  check_plot_area(f);
  const int x_target = tick_target(f.right - f.left, 80);
  std::vector<Tick> x_ticks =
      x.log ? log_ticks(x.lo, x.hi, x_target) : linear_ticks(x.lo, x.hi, x_target);
  return {x, y, f, std::move(x_ticks), std::move(y_ticks)};
}

// The x grid lines (drawn under the y grid), and the x tick marks with their labels.
std::pair<std::string, std::string> x_grid_and_ticks(const ChartLayout& l) {
  std::string grid, marks, labels;
  for (const Tick& t : l.x_ticks) {
    const std::string px_x = px(l.f.x(l.x, t.value));
    grid += cat("M", px_x, " ", px(l.f.top), "V", px(l.f.bottom));
    marks += cat("M", px_x, " ", px(l.f.bottom), "V", px(l.f.bottom + 5));
    labels += text_element(l.f.x(l.x, t.value), l.f.bottom + 18, "middle", "x-tick", t.label,
                           " font-size=\"11\"");
  }
  if (grid.empty()) return {};
  return {cat("<path d=\"", grid, "\" stroke=\"#e5e5e5\"/>\n"),
          cat("<path d=\"", marks, "\" stroke=\"#333333\"/>\n", labels)};
}

void check_bar_chart(const BarChart& c) {
  check_size(c.width, c.height);
  const std::size_t n = c.categories.size();
  const auto mismatch = [&](std::string_view field, std::size_t size, bool optional) {
    invalid(checked_function, field,
            cat("must hold one entry per entry of 'categories' (", show(n), ")",
                optional ? " or none" : "", "; it holds ", show(size)));
  };
  if (c.value.size() != n) mismatch("value", c.value.size(), false);
  if (!c.low.empty() && c.low.size() != n) mismatch("low", c.low.size(), true);
  if (!c.high.empty() && c.high.size() != n) mismatch("high", c.high.size(), true);
  if (!c.color.empty() && c.color.size() != n) mismatch("color", c.color.size(), true);
  for (std::size_t i = 0; i < c.lines.size(); ++i) {
    check_line(c.lines[i], i);
    if (c.lines[i].axis != ReferenceLine::Axis::y)
      invalid(checked_function, "lines",
              cat("of a bar chart must be horizontal (Axis::y); lines[", show(i), "] is vertical"));
  }
}

// The y axis of a bar chart: padded on the data sides only, so bars of positive values start at
// exactly 0.
Axis bar_axis(const BarChart& chart) {
  std::vector<double> ys{0.0};  // bars start at 0
  ys.insert(ys.end(), chart.value.begin(), chart.value.end());
  ys.insert(ys.end(), chart.low.begin(), chart.low.end());
  ys.insert(ys.end(), chart.high.begin(), chart.high.end());
  for (const ReferenceLine& l : chart.lines) ys.push_back(l.value);
  Axis y = resolve_axis("y", ys, false, chart.y_min, chart.y_max, 0.0);
  const double span = y.hi - y.lo;
  if (!chart.y_max && y.hi > 0) y.hi += 0.05 * span;
  if (!chart.y_min && y.lo < 0) y.lo -= 0.05 * span;
  return y;
}

struct BarLayout {
  Axis y;
  Frame f;
  std::vector<Tick> y_ticks;
  double slot = 0;      // width per category
  bool rotate = false;  // category labels at 40 degrees
};

// The left margin needs the y tick labels, which need the plot height, which needs the
// category labels' rotation, which needs the bar width: the left margin is estimated from a
// first pass of y ticks at the full height.
BarLayout bar_layout(const BarChart& chart) {
  BarLayout l{bar_axis(chart), {}, {}, 0, false};
  Frame& f = l.f;
  f.top = chart.title.empty() ? 14 : 36;
  f.right = chart.width - 16;
  const double bottom_plain = chart.height - (8 + 18 + 6);
  l.y_ticks = linear_ticks(l.y.lo, l.y.hi, tick_target(bottom_plain - f.top, 45));
  double y_tick_width = 0;
  for (const Tick& t : l.y_ticks)
    y_tick_width = std::max(y_tick_width, text_width(t.label, tick_font));
  f.left = 8 + (chart.y_label.empty() ? 0 : 20) + y_tick_width + 10;
  const std::size_t n = chart.categories.size();
  l.slot = (f.right - f.left) / static_cast<double>(std::max<std::size_t>(n, 1));
  double label_width = 0;
  for (const std::string& c : chart.categories)
    label_width = std::max(label_width, text_width(c, tick_font));
  // Long labels are rotated by 40 degrees; the margin grows with them, up to 40% of the height.
  l.rotate = label_width > l.slot - 4;
  const double label_height =
      l.rotate ? std::min(label_width * std::sin(0.698) + 12, 0.4 * chart.height) : 16;
  f.bottom = chart.height - (8 + label_height + 6);
  check_plot_area(f);
  l.y_ticks = linear_ticks(l.y.lo, l.y.hi, tick_target(f.bottom - f.top, 45));
  return l;
}

// The bars, then their interval whiskers in one path.
std::string bars_and_whiskers(const BarChart& chart, const BarLayout& l) {
  const Frame& f = l.f;
  const double base = f.y(l.y, std::clamp(0.0, l.y.lo, l.y.hi));
  const double bar = std::min(0.7 * l.slot, 80.0);
  std::string out, whiskers;
  for (std::size_t i = 0; i < chart.categories.size(); ++i) {
    const double cx = f.left + (static_cast<double>(i) + 0.5) * l.slot;
    if (std::isfinite(chart.value[i])) {
      const double top = f.y(l.y, chart.value[i]);
      const std::string color = escape(
          chart.color.empty() || chart.color[i].empty() ? color_or_palette({}, i) : chart.color[i]);
      out += cat("<rect x=\"", px(cx - bar / 2), "\" y=\"", px(std::min(top, base)), "\" width=\"",
                 px(bar), "\" height=\"", px(std::abs(base - top)), "\" fill=\"", color, "\"/>\n");
    }
    if (!chart.low.empty() || !chart.high.empty()) {
      const double lo = chart.low.empty() ? chart.value[i] : chart.low[i];
      const double hi = chart.high.empty() ? chart.value[i] : chart.high[i];
      if (std::isfinite(lo) && std::isfinite(hi)) {
        const double y_lo = f.y(l.y, lo), y_hi = f.y(l.y, hi), cap = std::min(bar / 4, 6.0);
        whiskers += cat("M", px(cx), " ", px(y_lo), "V", px(y_hi), "M", px(cx - cap), " ", px(y_lo),
                        "H", px(cx + cap), "M", px(cx - cap), " ", px(y_hi), "H", px(cx + cap));
      }
    }
  }
  if (!whiskers.empty())
    out +=
        cat("<path d=\"", whiskers, "\" stroke=\"#222222\" stroke-width=\"1.2\" fill=\"none\"/>\n");
  return out;
}

std::string category_labels(const BarChart& chart, const BarLayout& l) {
  std::string out;
  for (std::size_t i = 0; i < chart.categories.size(); ++i) {
    const double cx = l.f.left + (static_cast<double>(i) + 0.5) * l.slot;
    if (l.rotate) {
      const double ty = l.f.bottom + 14;
      out += text_element(
          cx + 4, ty, "end", "category", chart.categories[i],
          cat(" font-size=\"11\" transform=\"rotate(-40 ", px(cx + 4), " ", px(ty), ")\""));
    } else {
      out += text_element(cx, l.f.bottom + 16, "middle", "category", chart.categories[i],
                          " font-size=\"11\"");
    }
  }
  return out;
}

std::string document(const SvgFigure& figure) {
  return cat(document_start(figure.width, figure.height), figure.body, "</svg>\n");
}

}  // namespace

SvgFigure figure(const Chart& chart) {
  check_chart(chart);
  const ChartLayout l = chart_layout(chart);
  const Frame& f = l.f;
  const auto [x_grid, x_ticks] = x_grid_and_ticks(l);
  std::string out = title_and_background(chart.title, chart.width, chart.height);
  out += x_grid;
  out += y_grid_and_ticks(f, l.y, l.y_ticks);
  out += x_ticks;
  // Data, clipped to the plot area.
  out += clip_start(f);
  out += reference_lines(f, l.x, l.y, chart.lines);
  for (std::size_t i = 0; i < chart.series.size(); ++i)
    out += series_elements(f, l.x, l.y, chart.series[i], i);
  out += "</svg>\n";
  out += frame_rect(f);
  out += reference_labels(f, l.x, l.y, chart.lines);
  if (!chart.x_label.empty())
    out +=
        text_element((f.left + f.right) / 2, chart.height - 10, "middle", "x-label", chart.x_label);
  out += y_label_element(f, chart.y_label);
  out += legend(f, chart.series);
  return {chart.width, chart.height, std::move(out)};
}

SvgFigure figure(const BarChart& chart) {
  check_bar_chart(chart);
  const BarLayout l = bar_layout(chart);
  std::string out = title_and_background(chart.title, chart.width, chart.height);
  out += y_grid_and_ticks(l.f, l.y, l.y_ticks);
  out += clip_start(l.f);
  out += bars_and_whiskers(chart, l);
  const Axis x{0, 1, false};
  out += reference_lines(l.f, x, l.y, chart.lines);
  out += "</svg>\n";
  out += frame_rect(l.f);
  out += reference_labels(l.f, x, l.y, chart.lines);
  out += category_labels(chart, l);
  out += y_label_element(l.f, chart.y_label);
  return {chart.width, chart.height, std::move(out)};
}

std::string render_svg(const Chart& chart) { return document(figure(chart)); }

std::string render_svg(const BarChart& chart) { return document(figure(chart)); }

std::string side_by_side(std::span<const SvgFigure> figures) {
  double width = 0, height = 0;
  for (const SvgFigure& f : figures) {
    width += f.width;
    height = std::max<double>(height, f.height);
  }
  std::string out =
      cat("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n",
          "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"", px(width),
          "\" height=\"", px(height), "\" viewBox=\"0 0 ", px(width), " ", px(height), "\">\n");
  double x = 0;
  for (const SvgFigure& f : figures) {
    out += cat(nested_start(f.width, f.height, x), f.body, "</svg>\n");
    x += f.width;
  }
  out += "</svg>\n";
  return out;
}

}  // namespace ltt::pipeline
