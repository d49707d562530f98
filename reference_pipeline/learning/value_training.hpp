#pragma once
// The safety value (paper, section 4.1): an ensemble of K state-only value networks, each
// trained from its own seeded initialization on preference pairs of segments by the
// Bradley-Terry loss over segment sums (equation "bt"), and the trajectory scores that feed the
// curation layer (section 4.2: g(tau) = mean over the trajectory of V-bar, V-bar the ensemble
// mean; the other aggregators of curation/score_aggregation.hpp work too).
//
// States are float32 rows of obs_dim values, row-major, stored back to back (the DSRL layout:
// trajectory i owns rows [offsets[i], offsets[i + 1])). A segment is H consecutive rows named
// by its first row. Appendix "Hyperparameters" gives the defaults: K = 3, two hidden layers of
// 256, 300 epochs, batch 512 pairs, Adam 3e-4.
//
// Randomness: member k draws from its own std::mt19937_64 seeded stream_seed(seed, k): first
// its initial weights (initial_weights), then one Fisher-Yates shuffle of the pairs per epoch
// (portable draws). Epoch e's minibatches are consecutive slices of batch_pairs pairs of that
// order, the last one possibly smaller. Members never share state, so training them on
// `threads` threads gives the same bytes as training them one after another.

#include "learning/backend.hpp"
#include "learning/mlp.hpp"
#include "learning/progress.hpp"

#include <curation/preference_pairs.hpp>
#include <curation/score_aggregation.hpp>

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace ltt::learning {

struct SegmentPairs {
  std::int64_t segment_length = 30;     // H
  std::vector<std::int64_t> preferred;  // first row of each preferred (safer) segment
  std::vector<std::int64_t> rejected;   // first row of the segment it is preferred to
};

// The pairs drawn by curation::sample_preference_pairs on trajectories laid out by `offsets`,
// as rows of the same back-to-back states, the labeled-safer segment first.
SegmentPairs segment_pairs(const curation::PreferencePairs& pairs,
                           std::span<const std::int64_t> offsets, std::int64_t segment_length);

struct ValueTrainingOptions {
  std::vector<std::int64_t> hidden{256, 256};
  std::int64_t members = 3;  // K
  std::int64_t epochs = 300;
  std::int64_t batch_pairs = 512;
  AdamOptions adam{};
  std::uint64_t seed = 0;
  std::int64_t threads = 1;  // members trained at once; the result does not depend on it
  Progress progress = Progress::automatic;
};

struct ValueEnsemble {
  std::vector<MlpWeights> members;
};

struct ValueTrainingResult {
  ValueEnsemble ensemble;
  // [member][epoch]: mean Bradley-Terry loss over the epoch's minibatches, each taken before its
  // Adam step and weighted by its number of pairs
  std::vector<std::vector<double>> epoch_loss;
};

ValueTrainingResult train_value_ensemble(std::span<const float> states, std::int64_t obs_dim,
                                         const SegmentPairs& pairs,
                                         const ValueTrainingOptions& options = {},
                                         const Backend& backend = eigen_backend());

struct StateValues {
  std::int64_t members = 0;
  std::int64_t rows = 0;
  std::vector<double> mean;        // V-bar(s_i), i in [0, rows)
  std::vector<double> per_member;  // V_k(s_i) at per_member[k * rows + i]: member disagreement

  std::span<const double> member(std::int64_t k) const {
    return std::span<const double>(per_member)
        .subspan(static_cast<std::size_t>(k * rows), static_cast<std::size_t>(rows));
  }
};

// Rows per forward call of state_values: large enough that the GEMMs run at full speed, small
// enough that the float output and the hidden activations (rows x 256 floats per layer) stay in
// a few MB. The chunks start at row 0 of `states`, so state_values on consecutive blocks of a
// table whose sizes are multiples of this gives the bytes of one call on the whole table (the
// same forward calls on the same rows): what `ltt score` streams in bounded memory.
inline constexpr std::int64_t state_values_chunk = std::int64_t{1} << 16;

// Every member's value and their mean at every row of states (forward only), on `threads`
// threads over members and fixed chunks of rows: the result does not depend on `threads`.
StateValues state_values(const ValueEnsemble& ensemble, std::span<const float> states,
                         std::int64_t obs_dim, const Backend& backend = eigen_backend(),
                         std::int64_t threads = 1);

// g(tau) for every trajectory: curation::trajectory_scores of V-bar with `aggregator` (the mean
// by default, the paper's score).
std::vector<double> trajectory_scores(const ValueEnsemble& ensemble, std::span<const float> states,
                                      std::int64_t obs_dim, std::span<const std::int64_t> offsets,
                                      const curation::Aggregator& aggregator = {},
                                      const Backend& backend = eigen_backend());

// The ensemble mean V-bar on preference pairs: mean Bradley-Terry loss and the fraction of pairs
// whose preferred segment has the larger summed V-bar (ties count half). For held-out pairs.
struct PairEvaluation {
  double loss = 0.0;
  double accuracy = 0.0;
};
PairEvaluation evaluate_pairs(const ValueEnsemble& ensemble, std::span<const float> states,
                              std::int64_t obs_dim, const SegmentPairs& pairs,
                              const Backend& backend = eigen_backend());

namespace detail {
// Throws std::invalid_argument (for `fn`) unless the pairs are well formed against a table of
// `rows` states: equal counts, at least one pair, every segment inside the table.
void check_pairs(std::string_view fn, const SegmentPairs& pairs, std::int64_t rows);
}  // namespace detail

}  // namespace ltt::learning
