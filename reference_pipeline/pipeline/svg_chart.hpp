#pragma once
// Charts for the reports and the paper's figures as standalone SVG 1.1 documents: an x-y chart
// (lines, points, error bars, reference lines, optional log10 x axis) and a bar chart with
// interval whiskers. No dependencies and no state: the same chart gives the same bytes.
//
// Conventions shared by both charts:
//   - ticks are "nice" (steps of 1, 2 or 5 times a power of ten; a log axis ticks at powers of
//     ten, with 2 and 5 times them as well when fewer than three powers fall in the range);
//   - NaN and infinite values are skipped (a line breaks there), never printed;
//   - an empty or degenerate range (all values equal) is widened so the chart still renders;
//   - text is XML-escaped; pixel coordinates are printed with at most 2 decimals;
//   - a size mismatch throws std::invalid_argument naming the field ('x', 'y_low', 'value', ...).
// The document carries no ids, so side_by_side can nest several without clashes. Files:
// svg_axis.cpp (ranges and ticks), svg_elements.cpp (what both charts draw), svg_chart.cpp.

#include <optional>
#include <span>
#include <string>
#include <vector>

namespace ltt::pipeline {

struct Series {
  std::string label;  // legend entry; empty: none
  std::vector<double> x, y;
  enum class Kind { points, line } kind = Kind::line;
  std::string color;                  // CSS color; empty: palette colour by series index
  std::vector<double> y_low, y_high;  // optional error bars, same size as y; empty: none
  bool dashed = false;
  double radius = 3;  // points only
};

struct ReferenceLine {
  // x: vertical line at x = value; y: horizontal at y = value
  enum class Axis { x, y } axis = Axis::y;
  double value = 0;
  std::string label;  // drawn next to the line; empty: none
  std::string color = "#555555";
  bool dashed = true;
  double width = 1;
};

struct Chart {
  std::string title, x_label, y_label;
  std::vector<Series> series;
  std::vector<ReferenceLine> lines;
  bool log_x = false;  // log10 axis; non-positive x values are skipped
  // default: data range (series + lines) padded 5%
  std::optional<double> x_min, x_max, y_min, y_max;
  int width = 640, height = 400;
};

// A chart drawn but not yet a document: its size in pixels and the elements inside its root
// <svg>. Figures compose (side_by_side) without their text being read back.
struct SvgFigure {
  int width = 0, height = 0;
  std::string body;
};

// A labelled series with no data still gets its legend entry (a key for a marker style).
SvgFigure figure(const Chart& chart);

struct BarChart {
  std::string title, y_label;
  std::vector<std::string> categories;  // one bar each, labels under the bars (rotate if long)
  std::vector<double> value;            // bar heights, one per category
  std::vector<double> low, high;        // optional interval whiskers; empty: none
  std::vector<std::string> color;       // optional per bar; empty: palette
  std::vector<ReferenceLine> lines;     // horizontal (Axis::y) lines, e.g. the cost budget
  std::optional<double> y_min, y_max;   // default: 0 (or the minimum if negative) .. max padded
  int width = 640, height = 400;
};

SvgFigure figure(const BarChart& chart);

// The figure as a standalone document.
std::string render_svg(const Chart& chart);
std::string render_svg(const BarChart& chart);

// Figures placed side by side in one SVG document (one row, tops aligned): width the sum of
// their widths, height the largest; each nested at its own x.
std::string side_by_side(std::span<const SvgFigure> figures);

}  // namespace ltt::pipeline
