#pragma once
// training.svg of `ltt behavior train`: three charts side by side over the epochs, the mean
// episodic return, the mean episodic cost with the cost limit of each epoch (and the task's
// budget), and the Lagrange multiplier (pipeline/svg_chart.hpp draws them).

#include <string>
#include <string_view>
#include <vector>

#include <behavior/ppo_lagrangian.hpp>
#include <pipeline/svg_chart.hpp>

#include <data/text.hpp>

namespace ltt::cli {

inline std::string training_svg(std::string_view task, double budget,
                                const std::vector<behavior::EpochRecord>& records) {
  using pipeline::Chart;
  using pipeline::ReferenceLine;
  using pipeline::Series;
  const auto over_epochs = [&](std::string label, std::string color,
                               double behavior::EpochRecord::*field) {
    Series s;
    s.label = std::move(label);
    s.color = std::move(color);
    for (const behavior::EpochRecord& r : records) {
      s.x.push_back(static_cast<double>(r.epoch));
      s.y.push_back(r.*field);
    }
    return s;
  };
  const auto chart = [&](std::string title, std::string y_label) {
    Chart c;
    c.title = data::cat(task, ": ", title);
    c.x_label = "epoch";
    c.y_label = std::move(y_label);
    c.width = 440;
    c.height = 340;
    return c;
  };
  Chart reward = chart("return", "mean episodic return");
  reward.series.push_back(over_epochs("", "#1f77b4", &behavior::EpochRecord::mean_return));
  Chart cost = chart("cost and its limit", "mean episodic cost");
  cost.series.push_back(over_epochs("cost", "#d62728", &behavior::EpochRecord::mean_cost));
  Series limit = over_epochs("cost limit", "#555555", &behavior::EpochRecord::cost_limit);
  limit.dashed = true;
  cost.series.push_back(std::move(limit));
  ReferenceLine b;
  b.value = budget;
  b.label = data::cat("budget ", data::shortest(budget));
  b.color = "#2ca02c";
  cost.lines.push_back(b);
  cost.y_min = 0.0;
  Chart lambda = chart("Lagrange multiplier", "multiplier after the epoch's update");
  lambda.series.push_back(over_epochs("", "#9467bd", &behavior::EpochRecord::multiplier));
  lambda.y_min = 0.0;
  const std::vector<pipeline::SvgFigure> figures{pipeline::figure(reward), pipeline::figure(cost),
                                                 pipeline::figure(lambda)};
  return pipeline::side_by_side(figures);
}

}  // namespace ltt::cli
