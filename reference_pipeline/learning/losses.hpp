#pragma once
// The two training losses, on network outputs, with their gradients (docs/learning.md).
// Both return a sum over the rows they were given and write the gradient already divided by
// the number of rows in the whole minibatch (`batch`), so a backend can feed a minibatch in
// chunks and add up.
//
// Bradley-Terry over segment sums (paper, equation "bt"). A pair holds 2H values, the H of the
// preferred (safer) segment then the H of the other; with x = sum V(s+) - sum V(s-),
//   loss = -log logistic(x) = log(1 + exp(-x)),   d loss / d x = -logistic(-x),
// so every preferred state receives -logistic(-x) / batch and every other +logistic(-x) / batch.
// log(1 + exp(z)) is evaluated as max(z, 0) + log1p(exp(-|z|)): no overflow for large |x| and
// full relative accuracy for large positive x, where the loss is exp(-x).
//
// Weighted squared error for behavior cloning: per row i with weight w_i (1 when none given),
//   loss_i = w_i / A * sum_j (y_ij - t_ij)^2,   d loss_i / d y_ij = 2 w_i / A * (y_ij - t_ij),
// A the output width: with unit weights the minibatch mean is PyTorch's mse_loss(y, t), and
// with weights it is (w * mse_loss(y, t, reduction='none').mean(-1)).mean().
// Sums and the margin x are accumulated in double whatever S is.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>

namespace ltt::learning {

// log(1 + exp(z)) without overflow or cancellation
inline double log1p_exp(double z) {
  return (z > 0.0 ? z : 0.0) + std::log1p(std::exp(-std::abs(z)));
}

// logistic(z) = 1 / (1 + exp(-z)) without overflow
inline double logistic(double z) {
  if (z >= 0.0) return 1.0 / (1.0 + std::exp(-z));
  const double e = std::exp(z);
  return e / (1.0 + e);
}

// values: `pairs` pairs of 2H values as above; d_values (same size) receives dL/dV, L the mean
// over `batch` pairs. Returns the summed loss over these pairs.
template <class S>
double bradley_terry_loss(std::span<const S> values, std::int64_t pairs, std::int64_t H,
                          std::int64_t batch, std::span<S> d_values) {
  const auto h = static_cast<std::size_t>(H);
  const double inv_batch = 1.0 / static_cast<double>(batch);
  double loss = 0.0;
  for (std::size_t p = 0; p < static_cast<std::size_t>(pairs); ++p) {
    const S* v = values.data() + 2 * h * p;
    double preferred = 0.0, rejected = 0.0;
    for (std::size_t t = 0; t < h; ++t) preferred += static_cast<double>(v[t]);
    for (std::size_t t = 0; t < h; ++t) rejected += static_cast<double>(v[h + t]);
    const double x = preferred - rejected;
    loss += log1p_exp(-x);
    const auto g = static_cast<S>(logistic(-x) * inv_batch);
    S* d = d_values.data() + 2 * h * p;
    for (std::size_t t = 0; t < h; ++t) d[t] = -g;
    for (std::size_t t = 0; t < h; ++t) d[h + t] = g;
  }
  return loss;
}

// Fraction of pairs whose preferred segment has the larger summed value (ties count half):
// the held-out accuracy of a value on preference pairs laid out as above.
template <class S>
double bradley_terry_accuracy(std::span<const S> values, std::int64_t pairs, std::int64_t H) {
  const auto h = static_cast<std::size_t>(H);
  double correct = 0.0;
  for (std::size_t p = 0; p < static_cast<std::size_t>(pairs); ++p) {
    const S* v = values.data() + 2 * h * p;
    double x = 0.0;
    for (std::size_t t = 0; t < h; ++t)
      x += static_cast<double>(v[t]) - static_cast<double>(v[h + t]);
    correct += x > 0.0 ? 1.0 : x == 0.0 ? 0.5 : 0.0;
  }
  return pairs > 0 ? correct / static_cast<double>(pairs) : 0.0;
}

// outputs, targets: `rows` rows of A values, row after row; weights empty (all 1) or `rows`
// entries. d_outputs receives dL/dy, L the mean over `batch` rows. Returns the summed loss.
template <class S>
double squared_error_loss(std::span<const S> outputs, std::span<const S> targets,
                          std::span<const S> weights, std::int64_t rows, std::int64_t A,
                          std::int64_t batch, std::span<S> d_outputs) {
  const auto a = static_cast<std::size_t>(A);
  const double inv_a = 1.0 / static_cast<double>(A);
  const double inv_batch = 1.0 / static_cast<double>(batch);
  double loss = 0.0;
  for (std::size_t i = 0; i < static_cast<std::size_t>(rows); ++i) {
    const double w = weights.empty() ? 1.0 : static_cast<double>(weights[i]);
    double row = 0.0;
    for (std::size_t j = 0; j < a; ++j) {
      const double r =
          static_cast<double>(outputs[i * a + j]) - static_cast<double>(targets[i * a + j]);
      row += r * r;
      d_outputs[i * a + j] = static_cast<S>(2.0 * w * inv_a * inv_batch * r);
    }
    loss += w * inv_a * row;
  }
  return loss;
}

}  // namespace ltt::learning
