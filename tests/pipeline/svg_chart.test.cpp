// Tests for reference_pipeline/pipeline/svg_chart.hpp: the documents are well-formed XML (a
// tag-stack check below, with the entity and duplicate-attribute rules), text is escaped, tick
// labels are 1-2-5 steps that cover the range (powers of ten on a log axis), NaN and infinite
// values are skipped, degenerate ranges still render, size mismatches name the field, and
// side_by_side adds the widths of the figures it places.

#include <pipeline/svg_chart.hpp>

#include <data/text.hpp>

#include <doctest/doctest.h>

#include "test_text.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

using ltt_pipeline_test::count;
using ltt_pipeline_test::error_of;

namespace {

namespace pl = ltt::pipeline;
using ltt::data::cat;  // not operator+: GCC bug 105329 (data/text.hpp)

bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ':' || c == '-' ||
         c == '.';
}

// '&' at text[i] starts one of the predefined entities or a character reference.
bool entity_at(std::string_view text, std::size_t i) {
  for (const std::string_view e : {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"})
    if (text.substr(i, e.size()) == e) return true;
  if (text.substr(i, 2) != "&#") return false;
  const std::size_t end = text.find(';', i);
  return end != std::string_view::npos && end > i + 2;
}

// Empty when `xml` is a well-formed document with a single root element; else what is wrong.
// Stricter than XML where our output promises more: no raw '>' in character data.
std::string xml_problem(std::string_view xml) {
  std::vector<std::string> open;
  bool root_seen = false;
  std::size_t i = 0;
  while (i < xml.size()) {
    const char c = xml[i];
    if (c != '<') {
      if (open.empty() && !std::isspace(static_cast<unsigned char>(c)))
        return cat("character data outside the root at ", std::to_string(i));
      if (c == '&' && !entity_at(xml, i)) return cat("a bare '&' at ", std::to_string(i));
      if (c == '>') return cat("a raw '>' in character data at ", std::to_string(i));
      ++i;
      continue;
    }
    if (xml.substr(i, 2) == "<?" || xml.substr(i, 4) == "<!--") {
      const std::string_view close = xml[i + 1] == '?' ? "?>" : "-->";
      const std::size_t end = xml.find(close, i + 2);
      if (end == std::string_view::npos) return "unterminated declaration or comment";
      i = end + close.size();
      continue;
    }
    const bool closing = xml.substr(i, 2) == "</";
    i += closing ? 2 : 1;
    const std::size_t name_begin = i;
    while (i < xml.size() && is_name_char(xml[i])) ++i;
    const std::string name(xml.substr(name_begin, i - name_begin));
    if (name.empty()) return cat("a tag without a name at ", std::to_string(name_begin));
    if (closing) {
      while (i < xml.size() && std::isspace(static_cast<unsigned char>(xml[i]))) ++i;
      if (i >= xml.size() || xml[i] != '>') return cat("malformed end tag </", name);
      if (open.empty() || open.back() != name)
        return cat("</", name, "> does not close the open element");
      open.pop_back();
      ++i;
      continue;
    }
    if (open.empty() && root_seen) return cat("a second root element <", name, ">");
    root_seen = true;
    std::set<std::string> attributes;
    for (;;) {
      const std::size_t before = i;
      while (i < xml.size() && std::isspace(static_cast<unsigned char>(xml[i]))) ++i;
      if (i >= xml.size()) return cat("unterminated start tag <", name);
      if (xml.substr(i, 2) == "/>") {
        i += 2;
        break;
      }
      if (xml[i] == '>') {
        open.push_back(name);
        ++i;
        break;
      }
      if (i == before) return cat("attributes of <", name, "> not separated by space");
      const std::size_t a = i;
      while (i < xml.size() && is_name_char(xml[i])) ++i;
      const std::string attribute(xml.substr(a, i - a));
      if (attribute.empty() || i >= xml.size() || xml[i] != '=')
        return cat("malformed attribute in <", name);
      if (!attributes.insert(attribute).second)
        return cat("duplicate attribute ", attribute, " in <", name);
      ++i;
      if (i >= xml.size() || (xml[i] != '"' && xml[i] != '\''))
        return cat("unquoted attribute in <", name);
      const char quote = xml[i++];
      const std::size_t end = xml.find(quote, i);
      if (end == std::string_view::npos) return cat("unterminated attribute in <", name);
      for (std::size_t j = i; j < end; ++j) {
        if (xml[j] == '<') return cat("'<' in an attribute of <", name);
        if (xml[j] == '&' && !entity_at(xml, j))
          return cat("a bare '&' in an attribute of <", name);
      }
      i = end + 1;
    }
  }
  if (!open.empty()) return cat("<", open.back(), "> is never closed");
  if (!root_seen) return "no root element";
  return {};
}

std::string unescape(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    bool replaced = false;
    for (const auto& [entity, c] : {std::pair<std::string_view, char>{"&amp;", '&'},
                                    {"&lt;", '<'},
                                    {"&gt;", '>'},
                                    {"&quot;", '"'},
                                    {"&apos;", '\''}})
      if (text.substr(i, entity.size()) == entity) {
        out += c;
        i += entity.size() - 1;
        replaced = true;
        break;
      }
    if (!replaced) out += text[i];
  }
  return out;
}

// The text content of every <text> element with class `css_class`, unescaped, in order.
std::vector<std::string> texts(const std::string& svg, std::string_view css_class) {
  std::vector<std::string> out;
  const std::string key = cat("class=\"", css_class, "\"");
  for (std::size_t at = svg.find(key); at != std::string::npos; at = svg.find(key, at + 1)) {
    const std::size_t begin = svg.find('>', at) + 1, end = svg.find("</text>", begin);
    out.push_back(unescape(std::string_view(svg).substr(begin, end - begin)));
  }
  return out;
}

// The value of attribute `name` of each <text> element with class `css_class`.
std::vector<double> text_attribute(const std::string& svg, std::string_view css_class,
                                   std::string_view name) {
  std::vector<double> out;
  const std::string key = cat("class=\"", css_class, "\"");
  for (std::size_t at = svg.find(key); at != std::string::npos; at = svg.find(key, at + 1)) {
    const std::size_t tag = svg.rfind("<text", at);
    const std::size_t a = svg.find(cat(" ", name, "=\""), tag);
    out.push_back(std::stod(svg.substr(a + name.size() + 3)));
  }
  return out;
}

pl::Series series(std::string label, std::vector<double> x, std::vector<double> y,
                  pl::Series::Kind kind = pl::Series::Kind::line) {
  pl::Series s;
  s.label = std::move(label);
  s.x = std::move(x);
  s.y = std::move(y);
  s.kind = kind;
  return s;
}

pl::Chart example_chart() {
  pl::Chart c;
  c.title = "All-safe probability";
  c.x_label = "horizon T";
  c.y_label = "probability";
  pl::Series line = series("closed form", {10, 20, 50, 100}, {0.9, 0.8, 0.5, 0.2});
  line.dashed = true;
  pl::Series points =
      series("simulated", {10, 20, 50, 100}, {0.91, 0.79, 0.52, 0.19}, pl::Series::Kind::points);
  points.y_low = {0.88, 0.75, 0.48, 0.16};
  points.y_high = {0.94, 0.83, 0.56, 0.22};
  c.series = {line, points};
  c.lines = {{pl::ReferenceLine::Axis::y, 0.5, "half"}, {pl::ReferenceLine::Axis::x, 30, "T = 30"}};
  return c;
}

pl::BarChart example_bars() {
  pl::BarChart b;
  b.title = "Episodic cost";
  b.y_label = "cost";
  b.categories = {"BC", "selection", "CDT"};
  b.value = {30, 4, 12};
  b.low = {25, 2, 9};
  b.high = {35, 6, 15};
  b.lines = {{pl::ReferenceLine::Axis::y, 20, "budget"}};
  return b;
}

// Tick labels of one axis: at least two, equally spaced by m * 10^k with m in {1, 2, 5}, the
// first within one step of `lo` and the last within one step of `hi`.
void check_linear_ticks(const std::vector<std::string>& labels, double lo, double hi) {
  INFO("range [" << lo << ", " << hi << "]");
  REQUIRE(labels.size() >= 2);
  std::vector<double> v;
  for (const std::string& l : labels) v.push_back(std::stod(l));
  const double step = v[1] - v[0];
  REQUIRE(step > 0);
  for (std::size_t i = 1; i < v.size(); ++i)
    CHECK(v[i] - v[i - 1] == doctest::Approx(step).epsilon(1e-9));
  const double mantissa = step / std::pow(10.0, std::floor(std::log10(step) + 1e-9));
  CHECK((std::abs(mantissa - 1) < 1e-9 || std::abs(mantissa - 2) < 1e-9 ||
         std::abs(mantissa - 5) < 1e-9));
  const double pad = 0.05 * (hi - lo), slack = 1e-9 * (std::abs(lo) + std::abs(hi));
  CHECK(v.front() >= lo - pad - slack);
  CHECK(v.back() <= hi + pad + slack);
  CHECK(v.front() <= lo + step);
  CHECK(v.back() >= hi - step);
}

}  // namespace

TEST_CASE("svg_chart: charts are standalone, well-formed SVG 1.1 documents") {
  const std::string chart = pl::render_svg(example_chart());
  CHECK(xml_problem(chart).empty());
  CHECK(chart.rfind(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
            "version=\"1.1\" width=\"640\" height=\"400\" viewBox=\"0 0 640 400\"",
            0) == 0);
  CHECK(texts(chart, "title") == std::vector<std::string>{"All-safe probability"});
  CHECK(texts(chart, "x-label") == std::vector<std::string>{"horizon T"});
  CHECK(texts(chart, "y-label") == std::vector<std::string>{"probability"});
  CHECK(texts(chart, "legend") == std::vector<std::string>{"closed form", "simulated"});
  CHECK(texts(chart, "line-label") == std::vector<std::string>{"half", "T = 30"});
  CHECK(count(chart, "<circle") == 4 + 1);  // four points and the legend marker
  CHECK(count(chart, "stroke-dasharray") ==
        1 + 1 + 2);  // the line, its legend key, two reference lines
  // Pixel numbers carry at most two decimals.
  for (std::size_t at = chart.find('.'); at != std::string::npos; at = chart.find('.', at + 1)) {
    std::size_t digits = 0;
    while (at + 1 + digits < chart.size() &&
           std::isdigit(static_cast<unsigned char>(chart[at + 1 + digits])))
      ++digits;
    if (std::isdigit(static_cast<unsigned char>(chart[at - 1]))) CHECK(digits <= 2);
  }
  CHECK(pl::render_svg(example_chart()) == chart);  // deterministic

  const std::string bars = pl::render_svg(example_bars());
  CHECK(xml_problem(bars).empty());
  CHECK(texts(bars, "category") == std::vector<std::string>{"BC", "selection", "CDT"});
  CHECK(count(bars, "<rect") == 3 + 2);  // bars, background and frame
  CHECK(count(bars, "rotate(-40") == 0);
  CHECK(texts(bars, "line-label") == std::vector<std::string>{"budget"});
  CHECK(pl::render_svg(example_bars()) == bars);
  // Default range of positive bars: from exactly 0.
  CHECK(texts(bars, "y-tick").front() == "0");

  pl::BarChart long_names = example_bars();
  long_names.categories = {"behavior cloning on the whole pool", "certified selection then cloning",
                           "CDT"};
  const std::string rotated = pl::render_svg(long_names);
  CHECK(xml_problem(rotated).empty());
  CHECK(count(rotated, "rotate(-40") == 3);
}

TEST_CASE("svg_chart: text is XML-escaped everywhere") {
  const std::string nasty = "a < b & \"c\" > 'd' \x01";
  pl::Chart c = example_chart();
  c.title = c.x_label = c.y_label = nasty;
  c.series[0].label = nasty;
  c.series[0].color = "red\" onload=\"x";
  c.lines[0].label = nasty;
  const std::string svg = pl::render_svg(c);
  CHECK(xml_problem(svg).empty());
  const std::string clean = "a < b & \"c\" > 'd' ";  // the control character is dropped
  CHECK(texts(svg, "title") == std::vector<std::string>{clean});
  CHECK(texts(svg, "x-label") == std::vector<std::string>{clean});
  CHECK(texts(svg, "legend").front() == clean);
  CHECK(svg.find("a &lt; b &amp; &quot;c&quot; &gt; &apos;d&apos;") != std::string::npos);
  CHECK(svg.find("stroke=\"red&quot; onload=&quot;x\"") != std::string::npos);
  CHECK(svg.find('\x01') == std::string::npos);

  pl::BarChart b = example_bars();
  b.title = b.y_label = nasty;
  b.categories[0] = nasty;
  b.color = {"#000", "<x>", "&"};
  const std::string bars = pl::render_svg(b);
  CHECK(xml_problem(bars).empty());
  CHECK(texts(bars, "category").front() == clean);
}

TEST_CASE("svg_chart: ticks are 1-2-5 steps that cover the range") {
  struct Range {
    double lo, hi;
  };
  const Range ranges[] = {{0, 1},       {-3.7, 12.2}, {1e-5, 3e-5}, {1000, 1e6}, {0.76, 0.77},
                          {-1e3, -1e2}, {0, 300},     {2.5, 2.6},   {1e8, 5e9},  {-0.004, 0.001}};
  for (const Range& r : ranges) {
    pl::Chart c;
    c.series = {series("", {r.lo, r.hi}, {r.lo, r.hi})};
    const std::string svg = pl::render_svg(c);
    CHECK(xml_problem(svg).empty());
    check_linear_ticks(texts(svg, "x-tick"), r.lo, r.hi);
    check_linear_ticks(texts(svg, "y-tick"), r.lo, r.hi);
    // Tick positions are linear in the value.
    const std::vector<double> xs = text_attribute(svg, "x-tick", "x");
    for (std::size_t i = 2; i < xs.size(); ++i)
      CHECK(xs[i] - xs[i - 1] == doctest::Approx(xs[1] - xs[0]).epsilon(1e-3));
  }
  // Explicit bounds are used as given.
  pl::Chart fixed;
  fixed.series = {series("", {0, 1}, {0.3, 0.4})};
  fixed.y_min = 0;
  fixed.y_max = 1;
  CHECK(texts(pl::render_svg(fixed), "y-tick") ==
        std::vector<std::string>{"0.0", "0.2", "0.4", "0.6", "0.8", "1.0"});
}

TEST_CASE("svg_chart: a log10 x axis ticks at powers of ten") {
  pl::Chart c;
  c.log_x = true;
  c.series = {series("", {1, 10, 1e3, 1e5, 0, -5}, {1, 2, 3, 4, 5, 6})};  // non-positive x skipped
  const std::string svg = pl::render_svg(c);
  CHECK(xml_problem(svg).empty());
  CHECK(texts(svg, "x-tick") ==
        std::vector<std::string>{"1", "10", "100", "1000", "10000", "100000"});
  const std::vector<double> xs = text_attribute(svg, "x-tick", "x");
  for (std::size_t i = 2; i < xs.size(); ++i)
    CHECK(xs[i] - xs[i - 1] == doctest::Approx(xs[1] - xs[0]).epsilon(1e-3));  // equal per decade
  // y range from the drawn points only: 1 .. 4, not the skipped 5 and 6.
  check_linear_ticks(texts(svg, "y-tick"), 1, 4);

  // Fewer than three powers in range: 2 and 5 times them as well.
  c.series = {series("", {10, 20, 50, 100, 300}, {1, 2, 3, 4, 5})};
  const std::vector<std::string> narrow = texts(pl::render_svg(c), "x-tick");
  CHECK(narrow == std::vector<std::string>{"10", "20", "50", "100", "200"});

  c.x_min = 0;
  CHECK(error_of([&] { pl::render_svg(c); }).find("'x_min'") != std::string::npos);
}

TEST_CASE("svg_chart: NaN and infinite values are skipped, never printed") {
  const double nan = std::numeric_limits<double>::quiet_NaN(),
               inf = std::numeric_limits<double>::infinity();
  pl::Chart c;
  pl::Series points =
      series("", {1, 2, nan, 4, 5, inf}, {1, nan, 3, 4, -inf, 6}, pl::Series::Kind::points);
  points.y_low = {0.5, 1, 2, nan, 4, 5};
  points.y_high = {1.5, 3, 4, 5, 6, 7};
  pl::Series line = series("", {1, 2, 3, 4, 5, 6}, {1, 2, nan, 4, 5, 6});
  c.series = {points, line};
  c.lines = {{pl::ReferenceLine::Axis::y, nan, "nowhere"}};
  const std::string svg = pl::render_svg(c);
  CHECK(xml_problem(svg).empty());
  std::string lower = svg;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char ch) { return std::tolower(ch); });
  CHECK(lower.find("nan") == std::string::npos);
  CHECK(lower.find("inf") == std::string::npos);
  CHECK(count(svg, "<circle") == 2);  // (1, 1) and (4, 4)
  CHECK(texts(svg, "line-label").empty());
  // The line breaks at the NaN: two subpaths, M..L and M..L..L.
  const std::size_t d = svg.find("stroke-width=\"1.8\"");
  const std::size_t path = svg.rfind("<path d=\"", d);
  const std::string data = svg.substr(path, d - path);
  CHECK(count(data, "M") == 2);
  CHECK(count(data, "L") == 3);
  // The x range ignores the points with a skipped y: 1 .. 6 (x = 6 has y = 6).
  check_linear_ticks(texts(svg, "x-tick"), 1, 6);
}

TEST_CASE("svg_chart: empty and degenerate ranges still render") {
  std::vector<pl::Chart> charts(4);
  charts[1].series = {series("", {5, 5, 5}, {2, 3, 4})};                // all x equal
  charts[2].series = {series("", {0}, {0}, pl::Series::Kind::points)};  // one point at 0
  charts[3].series = {series("only a key", {}, {})};
  charts[3].log_x = true;
  for (const pl::Chart& c : charts) {
    const std::string svg = pl::render_svg(c);
    CHECK(xml_problem(svg).empty());
    CHECK(texts(svg, "x-tick").size() >= 2);
    CHECK(texts(svg, "y-tick").size() >= 2);
  }
  check_linear_ticks(texts(pl::render_svg(charts[1]), "x-tick"), 4.5, 5.5);
  CHECK(texts(pl::render_svg(charts[3]), "legend") == std::vector<std::string>{"only a key"});

  pl::BarChart empty;
  CHECK(xml_problem(pl::render_svg(empty)).empty());
  pl::BarChart zeros;
  zeros.categories = {"a", "b"};
  zeros.value = {0, 0};
  CHECK(texts(pl::render_svg(zeros), "y-tick").size() >= 2);
  pl::BarChart negative = example_bars();
  negative.value = {-3, 2, -1};
  negative.low.clear();
  negative.high.clear();
  const std::vector<std::string> ticks = texts(pl::render_svg(negative), "y-tick");
  CHECK(std::stod(ticks.front()) <= -3 + 1e-9 + (std::stod(ticks[1]) - std::stod(ticks[0])));
}

TEST_CASE("svg_chart: size mismatches and bad options name the field") {
  const auto chart_error = [](auto&& edit) {
    pl::Chart c = example_chart();
    edit(c);
    return error_of([&] { pl::render_svg(c); });
  };
  CHECK(chart_error([](pl::Chart& c) { c.series[0].x.pop_back(); }).find("'x'") !=
        std::string::npos);
  CHECK(chart_error([](pl::Chart& c) { c.series[1].y_low.pop_back(); }).find("'y_low'") !=
        std::string::npos);
  CHECK(chart_error([](pl::Chart& c) { c.series[1].y_high.push_back(1); }).find("'y_high'") !=
        std::string::npos);
  CHECK(chart_error([](pl::Chart& c) { c.series[1].radius = -1; }).find("'radius'") !=
        std::string::npos);
  CHECK(chart_error([](pl::Chart& c) {
          c.x_min = 3;
          c.x_max = 3;
        }).find("'x_min'") != std::string::npos);
  CHECK(chart_error([](pl::Chart& c) {
          c.y_max = std::numeric_limits<double>::infinity();
        }).find("'y_max'") != std::string::npos);
  CHECK(chart_error([](pl::Chart& c) {
          c.series[0].y[0] = -1.7e308;
          c.series[0].y[1] = 1.7e308;
        }).find("'y'") != std::string::npos);
  CHECK(chart_error([](pl::Chart& c) { c.width = 60; }).find("'width'") != std::string::npos);
  CHECK(chart_error([](pl::Chart& c) { c.height = 0; }).find("'height'") != std::string::npos);
  CHECK(chart_error([](pl::Chart& c) {
          c.series[0].label = "mine";
          c.series[0].y.clear();
        }).find("(\'mine\')") != std::string::npos);

  const auto bar_error = [](auto&& edit) {
    pl::BarChart b = example_bars();
    edit(b);
    return error_of([&] { pl::render_svg(b); });
  };
  CHECK(bar_error([](pl::BarChart& b) { b.value.pop_back(); }).find("'value'") !=
        std::string::npos);
  CHECK(bar_error([](pl::BarChart& b) { b.categories.pop_back(); }).find("'categories'") !=
        std::string::npos);
  CHECK(bar_error([](pl::BarChart& b) { b.low.pop_back(); }).find("'low'") != std::string::npos);
  CHECK(bar_error([](pl::BarChart& b) { b.high = {1}; }).find("'high'") != std::string::npos);
  CHECK(bar_error([](pl::BarChart& b) { b.color = {"red"}; }).find("'color'") != std::string::npos);
  CHECK(bar_error([](pl::BarChart& b) {
          b.lines[0].axis = pl::ReferenceLine::Axis::x;
        }).find("'lines'") != std::string::npos);
}

TEST_CASE("svg_chart: side_by_side places figures in one row") {
  pl::Chart narrow = example_chart();
  narrow.width = 300;
  narrow.height = 250;
  const std::vector<pl::SvgFigure> figures{pl::figure(example_chart()), pl::figure(narrow),
                                           pl::figure(example_bars())};
  const std::string row = pl::side_by_side(figures);
  CHECK(xml_problem(row).empty());
  CHECK(row.find("<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"1580\" "
                 "height=\"400\" viewBox=\"0 0 1580 400\">") != std::string::npos);
  CHECK(row.find("x=\"0\" y=\"0\" width=\"640\" height=\"400\"") != std::string::npos);
  CHECK(row.find("x=\"640\" y=\"0\" width=\"300\" height=\"250\"") != std::string::npos);
  CHECK(row.find("x=\"940\" y=\"0\" width=\"640\" height=\"400\"") != std::string::npos);
  CHECK(count(row, "<?xml") == 1);
  CHECK(texts(row, "title").size() == 3);
  CHECK(xml_problem(pl::side_by_side({})).empty());
  // A figure alone is the document render_svg writes.
  const pl::SvgFigure one = pl::figure(narrow);
  CHECK(pl::render_svg(narrow).find(one.body) != std::string::npos);
  CHECK(pl::render_svg(narrow).ends_with(one.body + "</svg>\n"));
}
