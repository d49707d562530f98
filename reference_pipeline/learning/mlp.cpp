// Shapes, the flat parameter layout and PyTorch's default initialization (mlp.hpp).

#include "learning/mlp.hpp"

#include "learning/detail/check.hpp"

#include <curation/detail/random.hpp>

#include <cmath>
#include <random>
#include <string>

namespace ltt::learning {

std::int64_t MlpShape::parameter_count() const { return weight_offset(layers()); }

std::int64_t MlpShape::weight_offset(std::int64_t l) const {
  std::int64_t offset = 0;
  for (std::int64_t i = 0; i < l; ++i) {
    const auto in = widths[static_cast<std::size_t>(i)];
    const auto out = widths[static_cast<std::size_t>(i) + 1];
    offset += out * in + out;
  }
  return offset;
}

namespace {

// input, hidden[i] and the output width named as the caller passed them
void check_widths(std::string_view function, std::int64_t input,
                  std::span<const std::int64_t> hidden, std::string_view output_name,
                  std::int64_t output) {
  auto check = [&](const std::string& name, std::int64_t w) {
    if (w < 1 || w > max_width)
      detail::invalid(function, name, detail::show(w), "must lie in [1, 2^24]");
  };
  check("input", input);
  for (std::size_t i = 0; i < hidden.size(); ++i)
    check("hidden[" + std::to_string(i) + "]", hidden[i]);
  check(std::string(output_name), output);
}

}  // namespace

MlpShape value_shape(std::int64_t input, std::span<const std::int64_t> hidden) {
  check_widths("ltt::learning::value_shape", input, hidden, "output", 1);
  MlpShape shape;
  shape.widths.push_back(input);
  shape.widths.insert(shape.widths.end(), hidden.begin(), hidden.end());
  shape.widths.push_back(1);
  shape.output = OutputActivation::identity;
  return shape;
}

MlpShape policy_shape(std::int64_t input, std::span<const std::int64_t> hidden,
                      std::int64_t actions) {
  check_widths("ltt::learning::policy_shape", input, hidden, "actions", actions);
  MlpShape shape;
  shape.widths.push_back(input);
  shape.widths.insert(shape.widths.end(), hidden.begin(), hidden.end());
  shape.widths.push_back(actions);
  shape.output = OutputActivation::tanh;
  return shape;
}

void check_shape(std::string_view function, std::string_view parameter, const MlpShape& shape) {
  if (shape.widths.size() < 2)
    detail::invalid(function, std::string(parameter) + ".widths.size()",
                    std::to_string(shape.widths.size()),
                    "must be at least 2 (input and output width)");
  for (std::size_t i = 0; i < shape.widths.size(); ++i)
    if (shape.widths[i] < 1 || shape.widths[i] > max_width)
      detail::invalid(function, std::string(parameter) + ".widths[" + std::to_string(i) + "]",
                      detail::show(shape.widths[i]), "must lie in [1, 2^24]");
  if (shape.output != OutputActivation::identity && shape.output != OutputActivation::tanh)
    detail::invalid(function, std::string(parameter) + ".output",
                    std::to_string(static_cast<std::uint32_t>(shape.output)),
                    "is not a known OutputActivation (0 identity, 1 tanh)");
}

MlpWeights initial_weights(const MlpShape& shape, std::uint64_t seed) {
  check_shape("ltt::learning::initial_weights", "shape", shape);
  MlpWeights w{shape, std::vector<float>(static_cast<std::size_t>(shape.parameter_count()))};
  std::mt19937_64 rng(seed);
  std::size_t k = 0;
  for (std::int64_t l = 0; l < shape.layers(); ++l) {
    const auto in = shape.widths[static_cast<std::size_t>(l)];
    const auto out = shape.widths[static_cast<std::size_t>(l) + 1];
    const double bound = 1.0 / std::sqrt(static_cast<double>(in));
    for (std::int64_t i = 0; i < out * in + out; ++i)
      w.parameters[k++] =
          static_cast<float>(bound * (2.0 * curation::detail::uniform_unit(rng) - 1.0));
  }
  return w;
}

std::uint64_t stream_seed(std::uint64_t seed, std::uint64_t stream) {
  std::uint64_t z = seed + (stream + 1) * 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

}  // namespace ltt::learning
