#pragma once
// The SVG elements both charts draw (svg_chart.hpp): pixel numbers, escaped text, the frame of
// the plot area with its grid, ticks and reference lines, and the root element of a figure.
// Internal to the charts.
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pipeline/svg_axis.hpp"
#include "pipeline/svg_chart.hpp"

namespace ltt::pipeline::svg {

// Text width estimates for layout: about 0.6 em per character of a sans-serif font.
inline constexpr double tick_font = 11, label_font = 12, title_font = 14;
double text_width(std::string_view text, double font_size);

// `color`, or the palette's colour for series `index` when it is empty.
std::string color_or_palette(const std::string& color, std::size_t index);

// XML character data and attribute values: the five predefined entities; control characters
// other than tab, newline and carriage return are not allowed in XML 1.0 and are dropped.
std::string escape(std::string_view text);

// A pixel coordinate: at most 2 decimals, trailing zeros trimmed, never "-0". Values far off
// the canvas (data outside an explicit range) are clamped; they lie in the clipped region.
std::string px(double v);

// Plot area in pixels.
struct Frame {
  double left, top, right, bottom;
  double x(const Axis& a, double v) const { return left + a.fraction(v) * (right - left); }
  double y(const Axis& a, double v) const { return bottom - a.fraction(v) * (bottom - top); }
};

// The root <svg> start tag of a figure, ending its line: as a document's root (with the XML
// declaration) or nested at (x, 0) in a row of figures.
std::string document_start(int width, int height);
std::string nested_start(int width, int height, double x);

void check_size(int width, int height);
void check_plot_area(const Frame& f);
void check_line(const ReferenceLine& line, std::size_t i);

std::string dash_attribute(bool dashed);
std::string text_element(double x, double y, std::string_view anchor, std::string_view css_class,
                         std::string_view text, std::string_view extra = {});

// Title, frame, grid, ticks and axis labels around the plot area. Grid lines go first so the
// data is drawn over them; the frame is drawn last by the caller.
std::string title_and_background(std::string_view title, int width, int height);
std::string y_grid_and_ticks(const Frame& f, const Axis& y, const std::vector<Tick>& ticks);
std::string frame_rect(const Frame& f);
// The data layer: a nested viewport over the plot area clips whatever falls outside the range
// (SVG 1.1: an inner <svg> clips to its viewport), without the document-wide id a clipPath needs.
std::string clip_start(const Frame& f);
std::string y_label_element(const Frame& f, std::string_view label);
std::string reference_lines(const Frame& f, const Axis& x, const Axis& y,
                            std::span<const ReferenceLine> lines);
std::string reference_labels(const Frame& f, const Axis& x, const Axis& y,
                             std::span<const ReferenceLine> lines);

}  // namespace ltt::pipeline::svg
