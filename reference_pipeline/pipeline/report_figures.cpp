// The report's SVG figures (report.hpp): score against cost, the certification rate against n,
// reward and cost per method, the pool's cost histogram, the scorers' purity curves.
#include "pipeline/report.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include <data/text.hpp>

#include "pipeline/svg_chart.hpp"

namespace ltt::pipeline {

namespace {

using data::cat;

// One colour per method, the same in every figure.
std::string method_color(std::string_view name) {
  if (name == "BC-All") return "#7f7f7f";
  if (name == "BC-Safe") return "#2ca02c";
  if (name == "V-filter") return "#9467bd";
  if (name == "Calibrated") return "#1f77b4";
  if (name == "Calibrated-ungated") return "#17becf";
  if (name == "Return-weighted") return "#08306b";
  if (name == "Labels-only") return "#e377c2";
  if (name == "Random") return "#bcbd22";
  if (name == "Bottom-return") return "#8c564b";
  return "#ff7f0e";  // Return
}

// One colour per scorer of the score-quality figure: the preference score as Calibrated,
// labels-only as Labels-only, return as Return and minus return as Bottom-return.
std::string scorer_color(Scorer scorer) {
  switch (scorer) {
    case Scorer::preference:
      return method_color("Calibrated");
    case Scorer::labels_only:
      return method_color("Labels-only");
    case Scorer::oracle:
      return "#2ca02c";
    case Scorer::episodic_return:
      return method_color("Return");
    case Scorer::minus_return:
      return method_color("Bottom-return");
  }
  return "#000000";
}

Series series(std::string label, Series::Kind kind, std::string color) {
  Series s;
  s.label = std::move(label);
  s.kind = kind;
  s.color = std::move(color);
  return s;
}

}  // namespace

std::string score_cost_svg(const PipelineResult& r) {
  const SeedResult& s = r.seeds.front();
  Chart c;
  c.title = cat(r.task.name, ": trajectory score against episodic cost (seed ",
                std::to_string(s.seed), ")");
  c.x_label = "score g(tau) = mean of V-bar over the trajectory";
  c.y_label = "episodic cost";
  Series safe = series("within budget", Series::Kind::points, "#2ca02c");
  Series unsafe = series("over budget", Series::Kind::points, "#d62728");
  Series labeled = series("calibration label", Series::Kind::points, "#000000");
  safe.radius = unsafe.radius = 2;
  labeled.radius = 1.2;
  const double b = r.task.budget;
  for (std::size_t i = 0; i < s.scores.size(); ++i) {
    Series& into = r.pool_unsafe_bits[i] ? unsafe : safe;
    into.x.push_back(s.scores[i]);
    into.y.push_back(r.pool_cost[i]);
  }
  for (const std::int64_t i : s.calibration.index) {
    labeled.x.push_back(s.scores[static_cast<std::size_t>(i)]);
    labeled.y.push_back(r.pool_cost[static_cast<std::size_t>(i)]);
  }
  c.series = {safe, unsafe, labeled};
  c.lines.push_back({ReferenceLine::Axis::y, b, cat("budget ", fixed(b, 0)), "#d62728", true, 1});
  const curation::Certificate& cert = s.calibrated.certificate;
  for (const curation::CertificateStep& st : cert.steps)
    c.lines.push_back({ReferenceLine::Axis::x, st.lambda, "", "#bbbbbb", true, 0.8});
  c.lines.push_back({ReferenceLine::Axis::x, cert.threshold,
                     cert.certified ? cat("certified cut q = ", fixed(cert.quantile, 2))
                                    : "fallback cut (uncertified)",
                     "#1f77b4", false, 2});
  c.width = 760;
  c.height = 460;
  return render_svg(c);
}

std::string certification_rate_svg(const PipelineResult& r) {
  const SeedResult& s = r.seeds.front();
  const curation::Certificate& cert = s.calibrated.certificate;
  Chart c;
  const curation::ValidationStep& g = s.grid.front();
  c.title = cat(r.task.name, ": certification rate against n (N = ", std::to_string(cert.pool_size),
                ", N_1 = ", std::to_string(g.N), ", U_1 = ", std::to_string(g.U), ")");
  c.x_label = "calibration labels n";
  c.y_label = "Pr[the walk certifies] (closed form)";
  Series rate = series(cat("alpha = ", fixed(cert.alpha, 2), ", delta = ", fixed(cert.delta, 2)),
                       Series::Kind::line, "#1f77b4");
  for (std::size_t n = 1; n < s.rate_curve.size(); ++n) {
    rate.x.push_back(static_cast<double>(n));
    rate.y.push_back(s.rate_curve[n]);
  }
  c.series = {rate};
  c.lines.push_back({ReferenceLine::Axis::x, static_cast<double>(cert.calibration_size),
                     cat("n used = ", std::to_string(cert.calibration_size), ": rate ",
                         fixed(s.first_step_rate, 3)),
                     "#d62728", true, 1.2});
  c.lines.push_back({ReferenceLine::Axis::y, cert.delta, "delta", "#7f7f7f", true, 0.8});
  c.y_min = 0;
  c.y_max = 1;
  return render_svg(c);
}

std::string methods_svg(const PipelineResult& r) {
  BarChart reward, cost;
  reward.title = cat(r.task.name, ": reward per method");
  reward.y_label = "episodic reward";
  cost.title = cat(r.task.name, ": cost per method (budget ", fixed(r.task.budget, 0), ")");
  cost.y_label = "episodic cost";
  for (const MethodSummary& m : r.summary) {
    if (m.cost.samples == 0) continue;
    for (BarChart* b : {&reward, &cost}) {
      const Interval& i = b == &reward ? m.reward : m.cost;
      b->categories.push_back(m.name);
      b->value.push_back(i.mean);
      b->low.push_back(i.low);
      b->high.push_back(i.high);
      b->color.push_back(method_color(m.name));
    }
  }
  cost.lines.push_back({ReferenceLine::Axis::y, r.task.budget, "budget", "#d62728", true, 1.5});
  const SvgFigure both[] = {figure(reward), figure(cost)};
  return side_by_side(both);
}

std::string cost_histogram_svg(const PipelineResult& r) {
  const double b = r.task.budget;
  double top = b;
  for (const double c : r.pool_cost) top = std::max(top, c);
  // About 30 bins of (k w, (k + 1) w], cost 0 in the first; the budget falls on an edge, so a
  // bin is all within or all over the budget.
  double w = top > 0 ? top / 30 : 1;
  if (b > 0) w = b / std::ceil(b / w);
  const auto bins = static_cast<std::size_t>(std::max(1.0, std::ceil(top / w)));
  std::vector<double> count(bins, 0.0);
  for (const double c : r.pool_cost) {
    const double k = c <= 0 ? 0 : std::ceil(c / w) - 1;
    count[std::min(bins - 1, static_cast<std::size_t>(std::max(0.0, k)))] += 1;
  }
  Series within = series("within budget", Series::Kind::line, "#2ca02c");
  Series over = series("over budget", Series::Kind::line, "#d62728");
  for (std::size_t k = 0; k < bins; ++k) {
    const double lo = static_cast<double>(k) * w, hi = lo + w;
    Series& into = hi <= b + 1e-9 * std::max(1.0, b) ? within : over;
    // each bin as an outline: up its left edge, across, down its right edge
    for (const auto& [x, y] : {std::pair{lo, 0.0}, {lo, count[k]}, {hi, count[k]}, {hi, 0.0}}) {
      into.x.push_back(x);
      into.y.push_back(y);
    }
  }
  Chart c;
  c.title = cat(r.task.name, ": episodic cost of the pool (", std::to_string(r.pool_episodes),
                " episodes, ", std::to_string(r.pool_unsafe), " over the budget)");
  c.x_label = "episodic cost";
  c.y_label = cat("episodes per bin (width ", fixed(w, 2), ")");
  c.series = {within, over};
  c.lines.push_back({ReferenceLine::Axis::x, b, cat("budget ", fixed(b, 0)), "#d62728", true, 1.5});
  c.y_min = 0;
  return render_svg(c);
}

std::string purity_curves_svg(const PipelineResult& r) {
  const SeedResult& s = r.seeds.front();
  const double alpha = r.options.calibration.alpha;
  Chart c;
  c.title = cat(r.task.name, ": purity curves of five rankings of the pool (seed ",
                std::to_string(s.seed), ")");
  c.x_label = "grid quantile q_j (the selection keeps the scores at or above its threshold)";
  c.y_label = "unsafe fraction U_j / N_j (oracle)";
  for (const ScorerQuality& q : s.score_quality.scorers) {
    Series line =
        series(std::string(scorer_name(q.scorer)), Series::Kind::line, scorer_color(q.scorer));
    line.dashed = q.scorer == Scorer::minus_return;
    for (const PurityStep& step : q.curve.steps) {
      line.x.push_back(step.quantile);
      line.y.push_back(step.unsafe_fraction);
    }
    c.series.push_back(std::move(line));
  }
  c.lines.push_back(
      {ReferenceLine::Axis::y, alpha, cat("alpha = ", fixed(alpha, 2)), "#d62728", true, 1.2});
  c.y_min = 0;
  c.y_max = 1;
  return render_svg(c);
}

}  // namespace ltt::pipeline
