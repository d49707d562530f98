// The safety value of a dataset (safety_value.hpp).

#include "learning/safety_value.hpp"

#include "learning/behavior_cloning.hpp"
#include "learning/detail/data.hpp"

#include <cmath>
#include <cstring>
#include <random>
#include <string>

namespace ltt::learning {

using detail::invalid;
using detail::show;

SafetyValueSeeds safety_value_seeds(std::uint64_t seed) {
  return {stream_seed(seed, 1), stream_seed(seed, 2)};
}

SegmentPairs synthesized_pairs(std::span<const double> step_costs,
                               std::span<const std::int64_t> offsets,
                               const curation::PreferencePairOptions& options,
                               curation::PreferencePairs* drawn) {
  curation::PreferencePairs pairs = curation::sample_preference_pairs(step_costs, offsets, options);
  SegmentPairs rows = segment_pairs(pairs, offsets, options.segment_length);
  if (drawn) *drawn = std::move(pairs);
  return rows;
}

SafetyValue train_safety_value(std::span<const float> observations, std::int64_t obs_dim,
                               const SegmentPairs& pairs, const SafetyValueOptions& options,
                               const Backend& backend) {
  constexpr std::string_view fn = "ltt::learning::train_safety_value";
  const std::int64_t rows =
      detail::table_rows(fn, "observations", observations, "obs_dim", obs_dim);
  if (!(options.held_out_fraction >= 0.0 && options.held_out_fraction < 1.0))
    invalid(fn, "options.held_out_fraction", show(options.held_out_fraction), "must lie in [0, 1)");
  detail::check_pairs(fn, pairs, rows);
  const auto P = detail::ssize(pairs.preferred.size());
  const std::int64_t H = pairs.segment_length;

  // The held-out split: a seeded permutation, its first floor(f P) pairs kept aside.
  std::vector<std::int64_t> order(static_cast<std::size_t>(P));
  for (std::int64_t i = 0; i < P; ++i) order[static_cast<std::size_t>(i)] = i;
  std::mt19937_64 split_rng(stream_seed(options.value.seed, held_out_stream));
  detail::shuffle(order, split_rng);
  const auto held =
      static_cast<std::int64_t>(std::floor(options.held_out_fraction * static_cast<double>(P)));
  if (P - held < 1)
    invalid(fn, "pairs", show(P) + " pairs",
            "leave none to train on after holding out " + show(held) +
                " (held_out_fraction = " + show(options.held_out_fraction) + ")");
  // Both shares keep the pairs' own order.
  std::vector<std::uint8_t> held_out(static_cast<std::size_t>(P), 0);
  for (std::int64_t j = 0; j < held; ++j)
    held_out[static_cast<std::size_t>(order[static_cast<std::size_t>(j)])] = 1;
  SegmentPairs train{H, {}, {}}, kept{H, {}, {}};
  for (std::size_t i = 0; i < static_cast<std::size_t>(P); ++i) {
    SegmentPairs& to = held_out[i] ? kept : train;
    to.preferred.push_back(pairs.preferred[i]);
    to.rejected.push_back(pairs.rejected[i]);
  }

  SafetyValue out;
  out.observation_dim = obs_dim;
  out.train_pairs = detail::ssize(train.preferred.size());
  out.held_out_pairs = held;
  if (options.normalize_observations)
    out.normalization = observation_normalization(observations, obs_dim);

  // The training pairs' segments, copied (and normalized): pair i's preferred segment at row
  // 2 i H, the other at (2 i + 1) H.
  const auto d = static_cast<std::size_t>(obs_dim);
  const auto segment_floats = static_cast<std::size_t>(H) * d;
  std::vector<float> segments(2 * static_cast<std::size_t>(out.train_pairs) * segment_floats);
  SegmentPairs compact{H, {}, {}};
  for (std::size_t i = 0; i < train.preferred.size(); ++i) {
    for (int side = 0; side < 2; ++side) {
      const std::int64_t first = side == 0 ? train.preferred[i] : train.rejected[i];
      const float* from = observations.data() + static_cast<std::size_t>(first) * d;
      float* to = segments.data() + (2 * i + static_cast<std::size_t>(side)) * segment_floats;
      if (options.normalize_observations) {
        for (std::size_t k = 0; k < segment_floats; ++k)
          to[k] = static_cast<float>((from[k] - out.normalization.mean[k % d]) /
                                     out.normalization.scale[k % d]);
      } else {
        std::memcpy(to, from, segment_floats * sizeof(float));
      }
    }
    compact.preferred.push_back(static_cast<std::int64_t>(2 * i) * H);
    compact.rejected.push_back(static_cast<std::int64_t>(2 * i + 1) * H);
  }

  ValueTrainingResult trained =
      train_value_ensemble(segments, obs_dim, compact, options.value, backend);
  if (options.normalize_observations)
    for (MlpWeights& member : trained.ensemble.members)
      fold_input_normalization(member, out.normalization.mean, out.normalization.scale);
  out.ensemble = std::move(trained.ensemble);
  out.epoch_loss = std::move(trained.epoch_loss);
  out.train = evaluate_pairs(out.ensemble, observations, obs_dim, train, backend);
  if (held > 0) out.held_out = evaluate_pairs(out.ensemble, observations, obs_dim, kept, backend);
  return out;
}

}  // namespace ltt::learning
