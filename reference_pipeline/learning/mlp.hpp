#pragma once
// The network every backend trains: a multilayer perceptron of linear layers with ReLU between
// them and an identity (value) or tanh (policy) output, stored as plain float32 parameters.
// MlpWeights is the exchange layout shared by the backends, the model file (model_file.hpp) and
// PyTorch: layer after layer, the weight as an out x in row-major matrix (nn.Linear.weight),
// then the bias (nn.Linear.bias). A network trained by one backend loads into another byte for
// byte.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ltt::learning {

enum class OutputActivation : std::uint32_t { identity = 0, tanh = 1 };

struct MlpShape {
  // input width, the hidden widths, output width: widths.size() - 1 linear layers
  std::vector<std::int64_t> widths;
  OutputActivation output = OutputActivation::identity;

  std::int64_t layers() const { return static_cast<std::int64_t>(widths.size()) - 1; }
  std::int64_t input() const { return widths.front(); }
  std::int64_t output_width() const { return widths.back(); }
  std::int64_t parameter_count() const;
  // offset of layer l's weight in the flat parameters (l in [0, layers())); its bias follows
  // the out x in weight entries
  std::int64_t weight_offset(std::int64_t l) const;

  friend bool operator==(const MlpShape&, const MlpShape&) = default;
};

// A value network: input -> hidden... -> 1, identity output (the paper: 40 -> 256 -> 256 -> 1).
// Both factories throw std::invalid_argument naming 'input', 'hidden[i]' or 'actions' for a
// width outside [1, max_width].
MlpShape value_shape(std::int64_t input, std::span<const std::int64_t> hidden);
// A deterministic policy: input -> hidden... -> actions, tanh output.
MlpShape policy_shape(std::int64_t input, std::span<const std::int64_t> hidden,
                      std::int64_t actions);

// Throws std::invalid_argument naming `parameter` unless the shape has at least one layer and
// every width lies in [1, max_width].
inline constexpr std::int64_t max_width = std::int64_t{1} << 24;
void check_shape(std::string_view function, std::string_view parameter, const MlpShape& shape);

struct MlpWeights {
  MlpShape shape;
  std::vector<float> parameters;  // shape.parameter_count() entries, layout above

  friend bool operator==(const MlpWeights&, const MlpWeights&) = default;
};

// PyTorch's default nn.Linear initialization, drawn from one seeded std::mt19937_64 with
// portable uniform draws: for each layer in order, every weight (row-major) then every bias is
// uniform on (-1/sqrt(in), 1/sqrt(in)) (kaiming_uniform_ with a = sqrt(5) for the weight, the
// fan-in bound for the bias). The same seed gives the same bytes on every platform.
MlpWeights initial_weights(const MlpShape& shape, std::uint64_t seed);

// A seed for stream `stream` of a computation seeded with `seed` (ensemble member k uses
// stream k): SplitMix64 of seed + golden-ratio increments, so neighbouring seeds and streams
// give unrelated engines.
std::uint64_t stream_seed(std::uint64_t seed, std::uint64_t stream);

}  // namespace ltt::learning
