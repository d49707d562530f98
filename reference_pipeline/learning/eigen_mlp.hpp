#pragma once
// The Eigen backend's network: forward and backward written by hand over a minibatch, Adam,
// for S = float (training) or S = double (the gradient checks run the same code in double).
//
// Layout. Parameters live in one flat vector in the MlpWeights order (per layer: weight out x in
// row-major, then bias), so import and export are copies and Adam is one vectorised pass; the
// gradient and Adam's two moments have the same layout. A minibatch of n rows of `in` floats is
// read in place as an in x n column-major matrix X (one column per state), so every layer is one
// GEMM, Z = W X, with W row-major and X, Z column-major; Eigen packs either order into its
// kernels. Backward uses the same GEMM for the weight gradient (dW += dZ A^T) and the input
// gradient (dA = W^T dZ, skipped for the first layer).
//
// Speed. The bias is written into Z before the GEMM accumulates into it (Eigen's product would
// zero the destination otherwise), so bias costs no extra pass, and ReLU is one pass over Z.
// A layer of one output (a value network's last) takes its input gradient as a masked outer
// product, not a GEMM of depth 1, with the same bits (eigen_mlp.cpp, masked_outer_product).
// A minibatch is processed in chunks of about chunk_rows rows (whole preference pairs for the
// Bradley-Terry loss, whose gradient needs only the pair's own 2H outputs): forward, loss and
// backward of a chunk run while its activations are still in cache, and the weight gradients
// add up over chunks. No allocation happens after construction unless a larger chunk is asked for.
//
// Determinism. Single-threaded (the target defines EIGEN_DONT_PARALLELIZE); the chunking depends
// only on chunk_rows and the minibatch, and the product blocking Eigen would size from the CPU's
// caches is fixed (fix_eigen_blocking in eigen_mlp.cpp), so a seed gives the same bytes on every
// run of the same build on the same CPU model. (Across CPU vendors Adam's float sqrt() still
// differs: under EIGEN_FAST_MATH it is RSQRTPS plus a Newton step; docs/learning.md.)

#include "learning/adam.hpp"
#include "learning/mlp.hpp"

#include <Eigen/Core>

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace ltt::learning {

// Adam's state for one flat parameter vector (adam.hpp gives the update): the two moments and
// the step count. EigenMlp keeps one for its parameters; a trainer with parameters outside a
// network (a Gaussian policy's log standard deviations) keeps one for those. The update is the
// one vectorised pass over Eigen arrays that EigenMlp has always applied (eigen_mlp.cpp).
template <class S>
class AdamState {
 public:
  using Vector = Eigen::Matrix<S, Eigen::Dynamic, 1>;

  AdamState(std::int64_t size, const AdamOptions& adam);

  // One update of `parameters` with `gradient` (both size() entries).
  void step(std::span<S> parameters, std::span<const S> gradient);

  std::int64_t size() const { return static_cast<std::int64_t>(m_.size()); }
  std::int64_t steps() const { return step_; }
  const AdamOptions& options() const { return adam_; }

 private:
  AdamOptions adam_;
  Vector m_, v_;
  std::int64_t step_ = 0;
};

template <class S>
class EigenMlp {
 public:
  using Matrix = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>;
  using Vector = Eigen::Matrix<S, Eigen::Dynamic, 1>;

  // parameters: shape.parameter_count() values in the MlpWeights layout
  EigenMlp(const MlpShape& shape, std::span<const S> parameters, const AdamOptions& adam = {},
           std::int64_t chunk_rows = default_chunk_rows);

  static constexpr std::int64_t default_chunk_rows =
      512;  // bench/learning.bench.cpp: 240 to 960 are best

  const MlpShape& shape() const { return shape_; }
  std::span<S> parameters() { return {params_.data(), static_cast<std::size_t>(params_.size())}; }
  std::span<const S> parameters() const {
    return {params_.data(), static_cast<std::size_t>(params_.size())};
  }
  // dL/dparameters from the last *_gradient call
  std::span<const S> gradient() const {
    return {grad_.data(), static_cast<std::size_t>(grad_.size())};
  }
  std::int64_t adam_steps() const { return adam_state_.steps(); }

  // outputs (rows x output width, row after row) = network(inputs), forward only
  void predict(std::span<const S> inputs, std::int64_t rows, std::span<S> outputs);

  // Sets gradient() to dL/dparameters of the mean Bradley-Terry loss over `pairs` pairs of
  // segments of H states (batch: pair after pair, the H preferred states then the H others, each
  // `input` values) and returns that loss.
  double bradley_terry_gradient(std::span<const S> batch, std::int64_t pairs, std::int64_t H);

  // Sets gradient() for the mean weighted squared error of `rows` rows (losses.hpp); weights
  // empty or `rows` entries. Returns the loss.
  double squared_error_gradient(std::span<const S> inputs, std::span<const S> targets,
                                std::span<const S> weights, std::int64_t rows);

  // Sets gradient() to dL/dparameters of a loss the caller computes from the outputs, and
  // returns L: a policy gradient's surrogate, whose dL/dy comes from the action distribution.
  // The rows go through in chunks as for the losses above: per chunk, forward, then
  // loss(outputs, first, n, d_outputs) with the outputs of rows first .. first + n - 1 (n x
  // output width, row after row) fills d_outputs (the same layout) with dL/dy of those rows and
  // returns their part of L; then backward, adding into the gradient.
  using OutputLoss = std::function<double(std::span<const S> outputs, std::int64_t first,
                                          std::int64_t n, std::span<S> d_outputs)>;
  double output_loss_gradient(std::span<const S> inputs, std::int64_t rows,
                              const OutputLoss& loss);

  // Sets gradient() to the sum over rows and outputs of d_outputs[r, j] dy[r, j]/dparameters:
  // forward, then backward from the given dL/dy (rows x output width, row after row).
  void output_gradient(std::span<const S> inputs, std::span<const S> d_outputs,
                       std::int64_t rows);

  // The Euclidean norm of gradient(), its squares summed in double; and gradient() *= factor.
  // Together: clipping by a global norm over several networks (torch.nn.utils.clip_grad_norm_).
  double gradient_norm() const;
  void scale_gradient(S factor);

  // One Adam update of the parameters with gradient().
  void adam_step();

 private:
  void reserve(std::int64_t rows);
  void forward(const S* x, Eigen::Index n);
  void backward(const S* x, Eigen::Index n);  // from d_output_, adds into grad_
  const S* output() const { return activations_.back().data(); }

  MlpShape shape_;
  std::int64_t chunk_rows_;
  Vector params_, grad_;
  AdamState<S> adam_state_;
  std::vector<std::int64_t> offsets_;  // weight offset of each layer
  std::vector<Matrix> activations_;    // per layer: width x capacity, post-activation
  Matrix delta_a_, delta_b_;           // max width x capacity, dL/dZ ping-pong
  Eigen::Index capacity_ = 0;
};

extern template class AdamState<float>;
extern template class AdamState<double>;
extern template class EigenMlp<float>;
extern template class EigenMlp<double>;

}  // namespace ltt::learning
