#pragma once
// Segment preference pairs for learning the safety value (paper, section 4.1 and appendix
// "Hyperparameters"): parents are drawn from the bottom and the top quartile of episodic cost,
// a segment of H = 30 consecutive steps is cut from each at a uniformly random offset, and the
// pair is labeled by the two segments' own summed per-step costs, the lower sum preferred
// (safer). Pairs whose segment costs are equal are skipped and redrawn. Two optional labeler
// models from the paper's robustness controls (appendix "What the supervision buys"):
//  - a Boltzmann labeler, P(prefer the safer segment) = logistic(cost gap / T);
//  - label-flip noise, each label flipped with probability flip_probability (after the
//    Boltzmann labeler when both are on).
//
// Rules:
//  - Only trajectories with at least H steps can be parents. Among them, ranked by episodic
//    cost (the sum of their step costs) with ties broken by position, the bottom quartile is
//    the first max(1, floor(E / 4)) and the top quartile the last as many, E the number of
//    eligible trajectories (at least 2).
//  - One pair takes, in this order: a bottom parent, a top parent, the bottom offset, the top
//    offset (each uniform), a fair coin for which of the two is `first`, then one uniform per
//    enabled labeler model. All draws go through the seeded std::mt19937_64 with portable
//    uniform draws: a seed gives the same pairs on every platform.
//  - Sampling stops after max_attempts draws even if fewer pairs were found (a pool where
//    every segment costs the same yields none); the result says how many were tried.

#include <curation/detail/check.hpp>
#include <curation/detail/random.hpp>
#include <curation/detail/sum.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

namespace ltt::curation {

struct PreferencePairOptions {
  std::int64_t pairs = 1000;
  std::int64_t segment_length = 30;             // H
  double flip_probability = 0.0;                // label-flip noise
  std::optional<double> boltzmann_temperature;  // T_lab > 0; exact labels when empty
  std::uint64_t seed = 0;
  std::int64_t max_attempts = 0;  // 0: 100 * pairs + 1000
};

// A segment: steps [offset, offset + H) of trajectory `trajectory` (a pool position).
struct Segment {
  std::int64_t trajectory = 0;
  std::int64_t offset = 0;
  double cost = 0.0;  // summed per-step cost over the segment
};

struct PreferencePair {
  Segment first;
  Segment second;
  bool first_preferred = false;  // the label: first is the segment labeled safer
  bool label_error = false;      // the label disagrees with the cost order (Boltzmann or flip)
};

struct PreferencePairs {
  std::vector<PreferencePair> pairs;
  std::int64_t attempts = 0;       // pairs of segments drawn
  std::int64_t ties_skipped = 0;   // drawn with equal segment costs
  std::int64_t label_errors = 0;   // labels against the cost order
  std::int64_t eligible = 0;       // trajectories with at least H steps
  std::int64_t quartile_size = 0;  // parents in each of the bottom and top quartiles
};

// step_costs holds the per-step costs of N trajectories back to back; trajectory i owns
// step_costs[offsets[i], offsets[i + 1]).
inline PreferencePairs sample_preference_pairs(std::span<const double> step_costs,
                                               std::span<const std::int64_t> offsets,
                                               const PreferencePairOptions& options = {}) {
  constexpr std::string_view fn = "ltt::curation::sample_preference_pairs";
  ltt::detail::require_count(fn, "pairs", options.pairs);
  detail::require_positive(fn, "segment_length", options.segment_length);
  detail::require_closed_unit(fn, "flip_probability", options.flip_probability);
  if (options.boltzmann_temperature &&
      !(std::isfinite(*options.boltzmann_temperature) && *options.boltzmann_temperature > 0.0))
    detail::invalid(fn, "boltzmann_temperature", detail::show(*options.boltzmann_temperature),
                    "must be finite and > 0");
  ltt::detail::require_count(fn, "max_attempts", options.max_attempts);
  detail::require_offsets(fn, offsets, step_costs.size());
  detail::require_finite(fn, "step_costs", step_costs);
  const std::int64_t H = options.segment_length;

  PreferencePairs out;
  std::vector<std::pair<double, std::int64_t>> ranked;  // (episodic cost, position)
  for (std::size_t i = 0; i + 1 < offsets.size(); ++i) {
    const std::int64_t length = offsets[i + 1] - offsets[i];
    if (length < H) continue;
    ranked.emplace_back(
        detail::compensated_sum(step_costs.subspan(static_cast<std::size_t>(offsets[i]),
                                                   static_cast<std::size_t>(length))),
        detail::ssize(i));
  }
  out.eligible = detail::ssize(ranked.size());
  if (out.eligible < 2)
    detail::invalid(fn, "offsets", detail::show(out.eligible) + " trajectories with >= H steps",
                    "must hold at least 2 trajectories of at least segment_length = " +
                        detail::show(H) + " steps");
  std::sort(ranked.begin(), ranked.end());
  out.quartile_size = std::max<std::int64_t>(1, out.eligible / 4);
  const std::int64_t q = out.quartile_size;

  auto segment = [&](std::int64_t trajectory, std::int64_t offset) {
    const auto first =
        static_cast<std::size_t>(offsets[static_cast<std::size_t>(trajectory)] + offset);
    return Segment{trajectory, offset,
                   detail::compensated_sum(step_costs.subspan(first, static_cast<std::size_t>(H)))};
  };
  auto length_of = [&](std::int64_t t) {
    return offsets[static_cast<std::size_t>(t) + 1] - offsets[static_cast<std::size_t>(t)];
  };

  std::mt19937_64 rng(options.seed);
  const std::int64_t max_attempts =
      options.max_attempts > 0 ? options.max_attempts : 100 * options.pairs + 1000;
  out.pairs.reserve(static_cast<std::size_t>(options.pairs));
  while (detail::ssize(out.pairs.size()) < options.pairs && out.attempts < max_attempts) {
    ++out.attempts;
    const std::int64_t low = ranked[static_cast<std::size_t>(detail::uniform_below(rng, q))].second;
    const std::int64_t high =
        ranked[static_cast<std::size_t>(out.eligible - q + detail::uniform_below(rng, q))].second;
    const std::int64_t low_offset = detail::uniform_below(rng, length_of(low) - H + 1);
    const std::int64_t high_offset = detail::uniform_below(rng, length_of(high) - H + 1);
    PreferencePair pair;
    pair.first = segment(low, low_offset);
    pair.second = segment(high, high_offset);
    if (detail::uniform_below(rng, std::int64_t{2}) == 1) std::swap(pair.first, pair.second);
    if (pair.first.cost == pair.second.cost) {
      ++out.ties_skipped;
      continue;
    }
    const bool first_safer = pair.first.cost < pair.second.cost;
    bool prefer_safer = true;
    if (options.boltzmann_temperature) {
      const double gap = std::abs(pair.first.cost - pair.second.cost);
      const double p_safer = 1.0 / (1.0 + std::exp(-gap / *options.boltzmann_temperature));
      prefer_safer = detail::uniform_unit(rng) < p_safer;
    }
    if (options.flip_probability > 0.0 && detail::uniform_unit(rng) < options.flip_probability)
      prefer_safer = !prefer_safer;
    pair.first_preferred = prefer_safer ? first_safer : !first_safer;
    pair.label_error = !prefer_safer;
    out.label_errors += pair.label_error;
    out.pairs.push_back(pair);
  }
  return out;
}

}  // namespace ltt::curation
