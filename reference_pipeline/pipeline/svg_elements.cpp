#include "pipeline/svg_elements.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <stdexcept>

#include <data/text.hpp>

#include "pipeline/check.hpp"
#include "pipeline/svg_axis.hpp"

namespace ltt::pipeline::svg {

using data::cat;
using detail::invalid;
using detail::show;

// Okabe & Ito (2008), "Color Universal Design": distinguishable under the common colour-vision
// deficiencies. Yellow last: it has little contrast on white.
namespace {

constexpr std::array<std::string_view, 8> palette{"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                                  "#E69F00", "#56B4E9", "#000000", "#F0E442"};

}  // namespace

std::string color_or_palette(const std::string& color, std::size_t index) {
  return color.empty() ? std::string(palette[index % palette.size()]) : color;
}

double text_width(std::string_view text, double font_size) {
  std::size_t chars = 0;
  for (const char c : text) chars += (static_cast<unsigned char>(c) & 0xC0) != 0x80;  // UTF-8
  return 0.6 * font_size * static_cast<double>(chars);
}

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

std::string px(double v) {
  v = std::clamp(v, -1e6, 1e6);
  std::string s = data::number(v, std::chars_format::fixed, 2);
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  if (s == "-0") s = "0";
  return s;
}

std::string document_start(int width, int height) {
  return cat("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n",
             "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"",
             std::to_string(width), "\" height=\"", std::to_string(height), "\" viewBox=\"0 0 ",
             std::to_string(width), " ", std::to_string(height),
             "\" font-family=\"sans-serif\" font-size=\"12\">\n");
}

std::string nested_start(int width, int height, double x) {
  const std::string w = std::to_string(width), h = std::to_string(height);
  return cat("<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" viewBox=\"0 0 ", w, " ", h,
             "\" font-family=\"sans-serif\" font-size=\"12\" x=\"", px(x), "\" y=\"0\" width=\"",
             px(width), "\" height=\"", px(height), "\">\n");
}

void check_size(int width, int height) {
  if (width < 1 || width > 100000)
    invalid(checked_function, "width", show(width), "must be in 1 .. 100000 pixels");
  if (height < 1 || height > 100000)
    invalid(checked_function, "height", show(height), "must be in 1 .. 100000 pixels");
}

void check_plot_area(const Frame& f) {
  if (f.right - f.left < 40) invalid(checked_function, "width", "leaves no room for the plot area");
  if (f.bottom - f.top < 40)
    invalid(checked_function, "height", "leaves no room for the plot area");
}

void check_line(const ReferenceLine& line, std::size_t i) {
  if (!(line.width >= 0) || !std::isfinite(line.width))
    invalid(
        checked_function, "lines",
        cat("must have finite widths >= 0 (lines[", show(i), "].width = ", show(line.width), ")"));
}

std::string dash_attribute(bool dashed) { return dashed ? " stroke-dasharray=\"6 4\"" : ""; }

std::string text_element(double x, double y, std::string_view anchor, std::string_view css_class,
                         std::string_view text, std::string_view extra) {
  return cat("<text x=\"", px(x), "\" y=\"", px(y), "\" text-anchor=\"", anchor, "\" class=\"",
             css_class, "\"", extra, ">", escape(text), "</text>\n");
}

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

}  // namespace ltt::pipeline::svg
