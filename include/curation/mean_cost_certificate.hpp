#pragma once
// The mean-cost certificate (paper, appendix "Properties of the certificate", paragraph "Mean-cost
// certificate"): the same grid and strict fixed-sequence walk, with the risk of S(lambda_j)
// taken as its mean episodic cost instead of its unsafe fraction. H_j: "the mean cost of
// S(lambda_j) exceeds the budget", tested on the costs of the m_j calibration trajectories in
// S(lambda_j), a uniform without-replacement sample of it given m_j (Lemma "conditional
// distribution"), with population N_j. Every cost in the pool must lie in [0, range], with
// range fixed before the labels are seen; only the calibration costs can be checked here.
// A step with m_j = 0 has no evidence and gets p_j = 1.
//
// Each step carries two p-values and the walk tests the one options.bound names:
//  - ltt::hoeffding_serfling_pvalue (bounds.hpp), the default, which depends on the sample
//    only through its mean, so the certificates it gives are those of earlier releases;
//  - ltt::betting_mean_pvalue (betting_mean_bound.hpp), tuned for m_j at the walk's delta,
//    which rejects whenever Hoeffding-Serfling does and needs fewer labels when the costs vary
//    less than a two-point split of the range (docs/bounds.md has the measured saving). It
//    reads the sample in draw order, which must be uniformly random given the m_j items: the
//    calibration is put in one order by a Fisher-Yates shuffle seeded with options.order_seed,
//    and step j reads its m_j costs in that order. The guarantee counts the shuffle's
//    randomness as it counts the calibration draw's: pick the seed at random, before the labels
//    are seen. (Whatever the order, the betting walk rejects every step Hoeffding-Serfling
//    rejects; only its further rejections lean on the order being random.)
//
// A rejection certifies, with the same reading as Proposition "guarantee": with probability
// at least 1 - delta it is not the case that a threshold is certified and the returned
// selection's mean cost exceeds the budget. The paper finds this variant strictly more
// conservative than the unsafe-fraction certificate; it has no fallback of its own.

#include <curation/calibration.hpp>
#include <curation/detail/check.hpp>
#include <curation/detail/grid_walk.hpp>
#include <curation/detail/random.hpp>
#include <curation/detail/sum.hpp>
#include <curation/threshold_grid.hpp>
#include <ltt/betting_mean_bound.hpp>
#include <ltt/bounds.hpp>
#include <ltt/fixed_sequence.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ltt::curation {

// Which p-value the walk tests; both are computed and recorded at every step it reaches.
enum class MeanCostBound { hoeffding_serfling, betting };

constexpr std::string_view mean_cost_bound_name(MeanCostBound bound) {
  return bound == MeanCostBound::betting ? "betting" : "hoeffding_serfling";
}

inline MeanCostBound parse_mean_cost_bound(std::string_view name) {
  if (name == "hoeffding_serfling") return MeanCostBound::hoeffding_serfling;
  if (name == "betting") return MeanCostBound::betting;
  detail::invalid("ltt::curation::parse_mean_cost_bound", "bound", std::string(name),
                  "must be hoeffding_serfling or betting");
}

struct MeanCostOptions {
  MeanCostBound bound = MeanCostBound::hoeffding_serfling;
  std::uint64_t order_seed = 0;  // the draw order the betting p-value reads
};

struct MeanCostStep {
  double quantile = 0.0;          // q_j
  double lambda = 0.0;            // lambda_j
  std::int64_t N = 0;             // N_j = |S(lambda_j)|
  std::int64_t m = 0;             // calibration trajectories in S(lambda_j)
  double sample_mean_cost = 0.0;  // their mean episodic cost (0 when m = 0)
  // exp(-2 m t^2 / (1 - (m - 1)/N_j)), t = (budget - mean)/range > 0
  double p_hoeffding_serfling = 1.0;
  double p_betting = 1.0;  // betting_mean_pvalue(costs in draw order, N_j, ..., delta)
  double p = 1.0;          // the one the walk tests (MeanCostCertificate::bound)
  bool rejected = false;
};

struct MeanCostCertificate {
  double budget = 0.0;
  double range = 0.0;
  double delta = 0.0;
  MeanCostBound bound = MeanCostBound::hoeffding_serfling;
  std::uint64_t order_seed = 0;
  std::int64_t pool_size = 0;
  std::int64_t calibration_size = 0;
  std::int64_t grid_size = 0;
  std::vector<MeanCostStep> steps;  // the steps the walk reached
  bool certified = false;
  std::optional<std::int64_t> certified_step;
  std::optional<double> threshold;  // certified lambda; nullopt when refused
  std::int64_t selection_size = 0;  // N_j of the certified step, 0 when refused
};

// calibration_index: pool positions of the calibration trajectories (distinct);
// calibration_cost: their episodic costs, aligned, each in [0, range].
inline MeanCostCertificate mean_cost_certificate(const ThresholdGrid& grid,
                                                 std::span<const double> scores,
                                                 std::span<const std::int64_t> calibration_index,
                                                 std::span<const double> calibration_cost,
                                                 double budget, double range, double delta,
                                                 const MeanCostOptions& options = {}) {
  constexpr std::string_view fn = "ltt::curation::mean_cost_certificate";
  ltt::detail::require_open_unit(fn, "delta", delta);
  detail::require_finite(fn, "budget", budget);
  if (!(std::isfinite(range) && range > 0.0))
    detail::invalid(fn, "range", detail::show(range), "must be finite and > 0");
  if (options.bound != MeanCostBound::hoeffding_serfling && options.bound != MeanCostBound::betting)
    detail::invalid(fn, "options.bound", detail::show(static_cast<std::int64_t>(options.bound)),
                    "must be hoeffding_serfling or betting");
  if (detail::ssize(scores.size()) != grid.pool_size)
    detail::invalid(fn, "scores.size()", detail::show(detail::ssize(scores.size())),
                    "must equal the grid's pool size " + detail::show(grid.pool_size));
  detail::require_same_size(fn, "calibration_cost", calibration_cost.size(), "calibration_index",
                            calibration_index.size());
  for (std::size_t i = 0; i < calibration_cost.size(); ++i)
    if (!(calibration_cost[i] >= 0.0 && calibration_cost[i] <= range))
      detail::invalid(fn, detail::at("calibration_cost", i), detail::show(calibration_cost[i]),
                      "must lie in [0, range = " + detail::show(range) + "]");
  // Same checks as an unsafe-bit calibration; the bits themselves are not used.
  Calibration positions{
      std::vector<std::int64_t>(calibration_index.begin(), calibration_index.end()),
      std::vector<std::uint8_t>(calibration_index.size(), 0)};
  detail::check_calibration(fn, positions, grid.pool_size);

  const std::vector<std::size_t> order = detail::by_descending_score(scores, calibration_index);
  std::vector<double> sorted_cost(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) sorted_cost[i] = calibration_cost[order[i]];
  std::vector<std::int64_t> m(grid.lambda.size());
  std::size_t next = 0;
  for (std::size_t j = 0; j < m.size(); ++j) {
    while (next < order.size() &&
           scores[static_cast<std::size_t>(calibration_index[order[next]])] >= grid.lambda[j])
      ++next;
    m[j] = detail::ssize(next);
  }

  // The betting p-value's draw order: one uniformly random order of the calibration, seeded;
  // step j reads the costs of its m_j trajectories in it.
  std::vector<std::size_t> drawn(calibration_index.size());
  for (std::size_t i = 0; i < drawn.size(); ++i) drawn[i] = i;
  std::mt19937_64 rng(options.order_seed);
  for (std::size_t i = drawn.size(); i > 1; --i)
    std::swap(drawn[i - 1], drawn[detail::uniform_below(rng, std::uint64_t{i})]);
  std::vector<double> in_order;
  in_order.reserve(drawn.size());

  MeanCostCertificate c;
  c.budget = budget;
  c.range = range;
  c.delta = delta;
  c.bound = options.bound;
  c.order_seed = options.order_seed;
  c.pool_size = grid.pool_size;
  c.calibration_size = detail::ssize(calibration_index.size());
  c.grid_size = grid.size();
  detail::GridWalk<MeanCostStep> walk =
      detail::grid_walk<MeanCostStep>(grid, delta, [&](std::size_t s, MeanCostStep& step) {
        step.m = m[s];
        if (step.m > 0) {
          const std::span<const double> sample(sorted_cost.data(),
                                               static_cast<std::size_t>(step.m));
          step.sample_mean_cost = detail::compensated_mean(sample);
          step.p_hoeffding_serfling = ltt::hoeffding_serfling_pvalue(sample, step.N, budget, range);
          in_order.clear();
          for (const std::size_t i : drawn)
            if (scores[static_cast<std::size_t>(calibration_index[i])] >= grid.lambda[s])
              in_order.push_back(calibration_cost[i]);
          step.p_betting = ltt::betting_mean_pvalue(in_order, step.N, budget, range, delta);
        }
        step.p =
            options.bound == MeanCostBound::betting ? step.p_betting : step.p_hoeffding_serfling;
      });
  c.steps = std::move(walk.steps);
  if (walk.last_rejected) {
    c.certified = true;
    c.certified_step = walk.last_rejected;
    const MeanCostStep& s = c.steps[static_cast<std::size_t>(*walk.last_rejected)];
    c.threshold = s.lambda;
    c.selection_size = s.N;
  }
  return c;
}

}  // namespace ltt::curation
