#include "corridor_study.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <limits>
#include <sstream>
#include <stdexcept>

#include <data/text.hpp>
#include <learning/mlp.hpp>
#include <ltt/bounds.hpp>
#include <tasks/corridor.hpp>

#include "check.hpp"
#include "format.hpp"
#include "svg_chart.hpp"

namespace ltt::pipeline {
namespace {

using data::cat;

struct CorridorOperator {
  std::string_view name;
  double weight_ratio;  // NaN: trajectory selection
};

// The figure's four operators, in row order: the proposition's cases (i) W = 1, (ii) the
// deployed clip of 20 and a clip of 400, (iii) selection.
constexpr std::array<CorridorOperator, 4> methods{
    {{"unweighted", 1},
     {"clip 20", 20},
     {"clip 400", 400},
     {"trajectory selection", std::numeric_limits<double>::quiet_NaN()}}};

// One colour per method for its line and its markers (the first four of svg_chart's Okabe-Ito
// palette).
constexpr std::array<std::string_view, 4> method_colors{"#0072B2", "#D55E00", "#009E73", "#CC79A7"};

void check(const CorridorStudyOptions& o) {
  using detail::show;
  const auto fail = [](std::string_view field, const std::string& got, std::string_view rule) {
    detail::invalid("run_corridor_study", field, got, rule);
  };
  detail::require(!o.horizons.empty(), "run_corridor_study", "horizons",
                  "must name at least one horizon");
  for (std::size_t i = 0; i < o.horizons.size(); ++i)
    if (o.horizons[i] < 1 || o.horizons[i] > 300)
      detail::invalid("run_corridor_study", "horizons",
                      cat("must lie in 1 .. 300 (tasks::CorridorSpec) (horizons[", show(i),
                          "] = ", show(o.horizons[i]), ")"));
  if (!(o.expert_mass >= 0 && o.expert_mass < 1))
    fail("expert_mass", show(o.expert_mass), "must be in [0, 1)");
  if (!(o.safe_probability > 0 && o.safe_probability < 1))
    fail("safe_probability", show(o.safe_probability), "must be in (0, 1)");
  if (o.trajectories < 1) fail("trajectories", show(o.trajectories), "must be >= 1");
  if (o.episodes < 1) fail("episodes", show(o.episodes), "must be >= 1");
  if (!(o.confidence > 0 && o.confidence < 1))
    fail("confidence", show(o.confidence), "must be in (0, 1)");
}

std::uint64_t stream(const CorridorStudyOptions& o, std::int64_t horizon, std::uint64_t k) {
  return learning::stream_seed(o.seed, 8 * static_cast<std::uint64_t>(horizon) + k);
}

CorridorRow method_row(const CorridorStudyOptions& o, const tasks::CorridorSpec& spec,
                       const tasks::TaskPool& pool, std::size_t k) {
  const CorridorOperator& m = methods[k];
  const bool selection = std::isnan(m.weight_ratio);
  CorridorRow row;
  row.horizon = spec.horizon;
  row.method = m.name;
  row.weight_ratio = m.weight_ratio;
  row.closed_form = selection ? tasks::corridor_selection_safe_probability(spec, o.trajectories)
                              : tasks::corridor_cloned_all_safe_probability(spec, m.weight_ratio);
  const std::vector<double> weights =
      selection ? tasks::corridor_selection_weights(pool.dataset)
                : tasks::corridor_ratio_weights(pool.dataset, m.weight_ratio);
  const tasks::CorridorPolicy policy = tasks::clone_corridor(pool.dataset, weights);
  row.clone_exact = tasks::corridor_all_safe_probability(policy);
  row.expected_cost = 0;
  for (const double p : policy.safe_probability) row.expected_cost += 1 - p;
  row.episodes = o.episodes;
  row.all_safe =
      tasks::simulate_corridor_all_safe(policy, o.episodes, stream(o, spec.horizon, 1 + k));
  row.simulated = static_cast<double>(row.all_safe) / static_cast<double>(row.episodes);
  // Two-sided interval at level `confidence`: each one-sided limit at half the miss rate.
  const double delta = (1 - o.confidence) / 2;
  row.low = clopper_pearson_lower(row.all_safe, row.episodes, delta);
  row.high = clopper_pearson_upper(row.all_safe, row.episodes, delta);
  if (selection) {
    row.selected = 0;
    for (const tasks::EpisodeRecord& e : pool.episodes)
      row.selected += e.episodic_cost <= tasks::corridor_budget ? 1 : 0;
  }
  return row;
}

}  // namespace

CorridorStudy run_corridor_study(const CorridorStudyOptions& options,
                                 const std::function<void(std::string_view)>& progress) {
  check(options);
  CorridorStudy study;
  study.options = options;
  for (const std::int64_t horizon : options.horizons) {
    const tasks::CorridorSpec spec{horizon, options.expert_mass, options.safe_probability};
    const tasks::TaskPool pool =
        tasks::generate_corridor(spec, options.trajectories, stream(options, horizon, 0));
    std::int64_t unsafe = 0;
    for (const tasks::EpisodeRecord& e : pool.episodes)
      unsafe += e.episodic_cost > tasks::corridor_budget ? 1 : 0;
    study.pool_unsafe_fraction.push_back(static_cast<double>(unsafe) /
                                         static_cast<double>(pool.episodes.size()));
    std::string line = cat("corridor T = ", std::to_string(horizon), ": pool unsafe ",
                           fixed(study.pool_unsafe_fraction.back(), 3), "; simulated all-safe");
    for (std::size_t k = 0; k < methods.size(); ++k) {
      study.rows.push_back(method_row(options, spec, pool, k));
      line += cat(k == 0 ? " " : ", ", methods[k].name, " ", fixed(study.rows.back().simulated, 3));
    }
    if (progress) progress(line);
  }
  return study;
}

std::string corridor_figure_svg(const CorridorStudy& study) {
  const CorridorStudyOptions& o = study.options;
  Chart chart;
  chart.title =
      cat("Corridor: q = ", fixed(o.expert_mass, 2), ", p_s = ", fixed(o.safe_probability, 2),
          ", N = ", std::to_string(o.trajectories), ", ", std::to_string(o.episodes), " rollouts");
  chart.x_label = "horizon T";
  chart.y_label = "all-safe probability of the clone";
  chart.log_x = true;
  chart.y_min = -0.02;  // markers at 0 and 1 stay whole inside the plot area
  chart.y_max = 1.02;
  chart.width = 720;
  chart.height = 440;
  std::int64_t t_min = 300, t_max = 1;
  for (const CorridorRow& r : study.rows) {
    t_min = std::min(t_min, r.horizon);
    t_max = std::max(t_max, r.horizon);
  }
  // Closed forms over every integer T of the range; the paper's figure draws the weight clips
  // dashed and selection solid.
  for (std::size_t k = 0; k < methods.size() && !study.rows.empty(); ++k) {
    Series line;
    line.label = methods[k].name;
    line.dashed = !std::isnan(methods[k].weight_ratio);
    line.color = method_colors[k];
    for (std::int64_t t = t_min; t <= t_max; ++t) {
      const tasks::CorridorSpec spec{t, o.expert_mass, o.safe_probability};
      line.x.push_back(static_cast<double>(t));
      line.y.push_back(
          std::isnan(methods[k].weight_ratio)
              ? tasks::corridor_selection_safe_probability(spec, o.trajectories)
              : tasks::corridor_cloned_all_safe_probability(spec, methods[k].weight_ratio));
    }
    chart.series.push_back(std::move(line));
  }
  for (std::size_t k = 0; k < methods.size() && !study.rows.empty(); ++k) {
    Series points;
    points.kind = Series::Kind::points;
    points.color = method_colors[k];
    for (const CorridorRow& r : study.rows)
      if (r.method == methods[k].name) {
        points.x.push_back(static_cast<double>(r.horizon));
        points.y.push_back(r.simulated);
        points.y_low.push_back(r.low);
        points.y_high.push_back(r.high);
      }
    chart.series.push_back(std::move(points));
  }
  Series key;
  key.kind = Series::Kind::points;
  key.color = "#555555";
  key.label = cat("simulated, ", fixed(100 * o.confidence, 0), "% CI");
  chart.series.push_back(std::move(key));
  return render_svg(chart);
}

std::string corridor_markdown(const CorridorStudy& study) {
  std::string out =
      "| T | method | closed form | fitted clone (exact) | simulated [CI] |\n"
      "|---:|---|---:|---:|---|\n";
  for (const CorridorRow& r : study.rows)
    out += cat("| ", std::to_string(r.horizon), " | ", r.method, " | ", probability(r.closed_form),
               " | ", probability(r.clone_exact), " | ", probability(r.simulated), " [",
               probability(r.low), ", ", probability(r.high), "] |\n");
  return out;
}

std::string corridor_report_markdown(const CorridorStudy& study) {
  const CorridorStudyOptions& o = study.options;
  std::ostringstream md;
  md << "# ltt pipeline: corridor\n\n"
     << "The corridor CMDP of the paper's Proposition \"corridor\": expert mass q = "
     << fixed(o.expert_mass, 2)
     << ", per-step safe probability p_s = " << fixed(o.safe_probability, 2)
     << ", budget 0 (a trajectory is safe only if every step is). For each horizon T a pool of "
     << o.trajectories << " behavior trajectories is cloned tabularly four ways and each clone "
     << "is rolled out " << o.episodes << " times. Closed forms: weighted cloning with "
     << "safe-to-risky weight ratio W gives p'_s = p W / (p W + 1 - p) per step, so the all-safe "
     << "probability p'_s^T vanishes with T for every finite clip; trajectory selection clones "
     << "only zero-cost trajectories and is all-safe whenever the selection is nonempty.\n\n"
     << corridor_markdown(study) << "\n![all-safe probability against T](corridor.svg)\n";
  return md.str();
}

}  // namespace ltt::pipeline
