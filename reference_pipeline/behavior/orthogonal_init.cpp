// Orthogonal initialization (orthogonal_init.hpp).

#include "behavior/orthogonal_init.hpp"

#include <cmath>
#include <vector>

#include <tasks/episode_log.hpp>

namespace ltt::behavior {

namespace {

// Orthonormalizes the columns of the rows x columns matrix q (column-major, rows >= columns)
// in place, by modified Gram-Schmidt applied twice per column.
void orthonormalize_columns(std::vector<double>& q, std::size_t rows, std::size_t columns) {
  for (std::size_t k = 0; k < columns; ++k) {
    double* v = q.data() + k * rows;
    for (int pass = 0; pass < 2; ++pass)
      for (std::size_t j = 0; j < k; ++j) {
        const double* u = q.data() + j * rows;
        double dot = 0.0;
        for (std::size_t i = 0; i < rows; ++i) dot += u[i] * v[i];
        for (std::size_t i = 0; i < rows; ++i) v[i] -= dot * u[i];
      }
    double norm = 0.0;
    for (std::size_t i = 0; i < rows; ++i) norm += v[i] * v[i];
    norm = std::sqrt(norm);
    for (std::size_t i = 0; i < rows; ++i) v[i] /= norm;
  }
}

}  // namespace

learning::MlpWeights orthogonal_weights(const learning::MlpShape& shape, std::mt19937_64& rng) {
  learning::check_shape("ltt::behavior::orthogonal_weights", "shape", shape);
  learning::MlpWeights w{
      shape, std::vector<float>(static_cast<std::size_t>(shape.parameter_count()), 0.0f)};
  for (std::int64_t l = 0; l < shape.layers(); ++l) {
    const auto out = static_cast<std::size_t>(shape.widths[static_cast<std::size_t>(l) + 1]);
    const auto in = static_cast<std::size_t>(shape.widths[static_cast<std::size_t>(l)]);
    std::vector<double> draws(out * in);  // out x in, row-major
    for (double& x : draws) x = tasks::standard_normal(rng);
    // The tall matrix column-major: the draws' columns when out >= in, their rows otherwise
    // (the transpose); either way the weight's entry (r, c) is read back from the same place.
    const bool tall = out >= in;
    const std::size_t rows = tall ? out : in, columns = tall ? in : out;
    std::vector<double> q(rows * columns);
    for (std::size_t r = 0; r < out; ++r)
      for (std::size_t c = 0; c < in; ++c)
        q[tall ? c * rows + r : r * rows + c] = draws[r * in + c];
    orthonormalize_columns(q, rows, columns);
    float* weight = w.parameters.data() + shape.weight_offset(l);
    for (std::size_t r = 0; r < out; ++r)
      for (std::size_t c = 0; c < in; ++c)
        weight[r * in + c] = static_cast<float>(q[tall ? c * rows + r : r * rows + c]);
  }
  return w;
}

}  // namespace ltt::behavior
