#pragma once
// Observation normalization for the networks (docs/learning.md): each column z-scored,
// x -> (x - mean) / scale, with the column's mean and population standard deviation over the
// rows given (scale 1 for a constant column). Trainers train on the z-scores and then fold the
// map into the first layer (fold_input_normalization, behavior_cloning.hpp), so the networks
// they return take raw observations.

#include <cstdint>
#include <span>
#include <vector>

namespace ltt::learning {

struct ObservationNormalization {
  std::vector<double> mean;
  std::vector<double> scale;
};

// Two passes in double (the second about the mean, so no cancellation). Throws
// std::invalid_argument naming 'obs_dim' (< 1) or 'observations.size()' (no rows, or not a
// multiple of obs_dim).
ObservationNormalization observation_normalization(std::span<const float> observations,
                                                   std::int64_t obs_dim);

// The rows z-scored, as float32: (x - mean) / scale column by column (widths as above).
std::vector<float> normalized_rows(std::span<const float> observations,
                                   const ObservationNormalization& z);

}  // namespace ltt::learning
