#pragma once
// The safety value of a dataset, as `ltt score`, `ltt curate`, the pipeline and the Python
// module learn it (paper, section 4.1; docs/learning.md, "The safety value of a dataset"):
//
//   preference pairs (segments of H rows, the safer one first)
//   -> a seeded held-out share of the pairs kept aside (their accuracy is reported, never trained
//   on)
//   -> observation normalization: each column z-scored over every row of the dataset
//   -> the Bradley-Terry ensemble (train_value_ensemble) on the normalized rows
//   -> the normalization folded into each member's first layer (fold_input_normalization)
//
// so the ensemble returned takes raw observation rows: a model file saved from it scores any
// dataset of the same observation width, with no statistics to carry along. The paper does not
// state a normalization; z-scoring is standard practice for MLP inputs and matters when columns
// differ in scale by orders of magnitude (a DSRL lidar in [0, 1] next to velocities of 10s).
// normalize_observations = false trains on the raw rows.
//
// Only the rows of the pairs' segments are copied (2 H per pair, normalized), never the whole
// table: a 2e6-row dataset costs its own observations plus a few MB. The copy holds exactly the
// minibatch rows train_value_ensemble would gather from the full normalized table, so the
// result does not depend on which rows the dataset holds besides them (beyond the statistics).
//
// Randomness: the held-out split shuffles the pair indices with its own stream
// stream_seed(options.value.seed, held_out_stream); members draw as train_value_ensemble says.

#include "learning/backend.hpp"
#include "learning/normalization.hpp"
#include "learning/value_training.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace ltt::learning {

struct SafetyValueOptions {
  ValueTrainingOptions value{};    // K 3, 256x256, 300 epochs, batch 512, Adam 3e-4, seed, threads
  double held_out_fraction = 0.1;  // floor(f P) of the P pairs kept aside, in [0, 1)
  bool normalize_observations = true;
};

// The stream of the held-out split (kept clear of the members' streams 0 .. K - 1).
inline constexpr std::uint64_t held_out_stream = std::uint64_t{1} << 32;

struct SafetyValue {
  ValueEnsemble ensemble;  // takes raw observation rows (normalization folded in)
  std::int64_t observation_dim = 0;
  ObservationNormalization normalization;  // what was folded in; empty when off
  std::int64_t train_pairs = 0, held_out_pairs = 0;
  PairEvaluation train;     // V-bar on the pairs it was trained on
  PairEvaluation held_out;  // on the pairs kept aside (zeros when none)
  // [member][epoch]: mean Bradley-Terry loss (train_value_ensemble)
  std::vector<std::vector<double>> epoch_loss;
};

// The seeds of one run from a user's single seed (`ltt score --seed`, `ltt.train_value(seed=)`,
// a pipeline seed): the preference pairs draw from stream_seed(seed, 1), the ensemble and the
// held-out split from stream_seed(seed, 2), so the command line, Python and the pipeline agree.
struct SafetyValueSeeds {
  std::uint64_t pairs = 0;
  std::uint64_t value = 0;
};
SafetyValueSeeds safety_value_seeds(std::uint64_t seed);

// The paper's synthesized pairs on a dataset: curation::sample_preference_pairs on the per-step
// costs (trajectory i owns rows [offsets[i], offsets[i + 1])), as rows (segment_pairs). The
// sampler's own account (attempts, ties skipped, label errors, eligible parents) goes to
// `drawn` when given.
SegmentPairs synthesized_pairs(std::span<const double> step_costs,
                               std::span<const std::int64_t> offsets,
                               const curation::PreferencePairOptions& options,
                               curation::PreferencePairs* drawn = nullptr);

// Trains the safety value on `pairs` (first rows of segments of `observations`). Throws
// std::invalid_argument naming the parameter: a bad table or pair, a held-out fraction outside
// [0, 1), or one that leaves no pair to train on.
SafetyValue train_safety_value(std::span<const float> observations, std::int64_t obs_dim,
                               const SegmentPairs& pairs, const SafetyValueOptions& options = {},
                               const Backend& backend = eigen_backend());

}  // namespace ltt::learning
