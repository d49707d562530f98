#pragma once
// The paper's corridor figure (Proposition "corridor", figure "corridor"): the all-safe
// probability of the cloned policy against the horizon T, for unweighted cloning (W = 1),
// per-transition weight clips W = 20 and W = 400, and trajectory selection (the zero-cost
// episodes, cloned unweighted), simulated against the closed forms. Built from
// <tasks/corridor.hpp>: for each T one behavior pool of N trajectories, the four clones of that
// pool, the exact all-safe probability of each clone and seeded rollouts of it.
//
// Closed forms (tasks::corridor_*), with p̄ = q + (1 - q) p_s:
//   weight ratio W   p'_s^T, p'_s = p̄ W / (p̄ W + 1 - p̄)
//   selection        1 - (1 - P0)^N, P0 = q + (1 - q) p_s^T: the probability that the
//                    selection is nonempty, whereupon its clone is exactly safe (the paper
//                    bounds it below by 1 - (1 - q)^N)
// The closed forms are population values; the fitted clone replaces p̄ by the pool's own
// per-step safe frequency, so it differs from the closed form by the pool's sampling error.
// docs/corridor.md.

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace ltt::pipeline {

struct CorridorStudyOptions {
  std::vector<std::int64_t> horizons{10, 20, 50, 100, 200, 300};
  double expert_mass = 0.2;          // q
  double safe_probability = 0.7;     // p_s
  std::int64_t trajectories = 1000;  // behavior pool size per horizon
  std::int64_t episodes = 10000;     // rollouts of each cloned policy
  double confidence = 0.95;          // two-sided Clopper-Pearson interval on the simulated
                                     // all-safe probability
  std::uint64_t seed = 1;
};

struct CorridorRow {
  std::int64_t horizon = 0;
  std::string method;       // "unweighted", "clip 20", "clip 400", "trajectory selection"
  double weight_ratio = 1;  // W (1, 20, 400); NaN for trajectory selection
  // The proposition's all-safe probability (population p̄; for selection: the probability that
  // the selection is nonempty, 1 - (1 - P0)^N, as corridor_selection_safe_probability).
  double closed_form = 0;
  double clone_exact = 0;  // prod_t pi(safe|t) of the clone actually fitted on this pool
  std::int64_t all_safe = 0, episodes = 0;  // simulated
  double simulated = 0, low = 0, high = 0;  // all_safe / episodes and its CP interval
  // Exact E[episodic cost] of the fitted clone, sum_t (1 - pi(safe|t)); also its expected
  // reward (reward = cost = action).
  double expected_cost = 0;
  std::int64_t selected = -1;  // trajectories kept (selection only), else -1
};

struct CorridorStudy {
  CorridorStudyOptions options;
  std::vector<double> pool_unsafe_fraction;  // per horizon
  std::vector<CorridorRow> rows;             // horizon-major, the four methods in the order above
};

// Seeds: the pool of horizon T draws from stream 8 T of options.seed, the rollouts of method k
// (0 .. 3, in the order above) from stream 8 T + 1 + k (learning::stream_seed, SplitMix64), so
// a horizon's rows do not depend on which other horizons are run. Throws std::invalid_argument
// naming the option ('horizons', 'expert_mass', 'safe_probability', 'trajectories',
// 'episodes', 'confidence') when one is out of range. `progress` gets a short line per horizon.
CorridorStudy run_corridor_study(const CorridorStudyOptions& options = {},
                                 const std::function<void(std::string_view)>& progress = {});

// All-safe probability (y, 0 .. 1) against T (x, log10): the closed forms as lines over every
// integer T of the study's range (dashed for the weight ratios, solid for selection), the
// simulated values as points with their Clopper-Pearson bars, one colour per method.
std::string corridor_figure_svg(const CorridorStudy& study);

// A Markdown table: T | method | closed form | fitted clone (exact) | simulated [CI].
std::string corridor_markdown(const CorridorStudy& study);

// The corridor study's report.md: the setting, the table and the link to corridor.svg.
std::string corridor_report_markdown(const CorridorStudy& study);

// The corridor study's report.json (report_json.cpp): the setting, the four cloning rules at the
// longest horizon as `methods`, and every row; `seconds` is the study's wall time.
std::string corridor_json(const CorridorStudy& study, double seconds);

}  // namespace ltt::pipeline
