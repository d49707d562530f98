// The Eigen backend's network (eigen_mlp.hpp): forward, backward, losses by chunk, Adam.

#include "learning/eigen_mlp.hpp"

#include "learning/detail/data.hpp"
#include "learning/losses.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

namespace ltt::learning {

namespace {

using detail::invalid;
using detail::show;

template <class S>
using RowMatrix = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

using detail::require_size;

void require_rows(const char* function, const char* parameter, std::int64_t rows) {
  if (rows < 1) invalid(function, parameter, show(rows), "must be at least 1");
}

// Eigen sizes the blocks of a matrix product from the cache sizes it reads off the CPU, and the
// block along the inner dimension decides how partial sums are added: two CPUs with the same
// instruction set would round differently. Fixed sizes make the blocking, hence every bit of
// training and inference, the same on any CPU the build runs on. The values are what Eigen
// 3.4 reads on the project's AMD EPYC VM (48 KiB, 1 MiB, 384 MiB), so numbers measured there
// before this was fixed are unchanged.
void fix_eigen_blocking() {
  static const bool fixed = [] {
    Eigen::setCpuCacheSizes(std::ptrdiff_t{48} << 10, std::ptrdiff_t{1} << 20,
                            std::ptrdiff_t{384} << 20);
    return true;
  }();
  (void)fixed;
}

// dA = ReLU'(A) * (w dz^T) for a layer of one output (a value network's last layer), in one
// pass. Eigen's dA = W^T dZ would zero dA, run a matrix product of depth 1, and mask in a second
// pass. The bits are the same: with depth 1 that product leaves 0 + fl(w_i dz_s) in every entry
// (its accumulator starts at +0 and is added to the zeroed destination), which is what
// w_i * dz_s + 0 gives whether or not the compiler fuses it into one FMA; the + 0 turns a -0
// product into +0 as the product does (tests/learning/gradients.test.cpp compares the bytes).
template <class S>
void masked_outer_product(const S* w, const S* dz, const S* a, Eigen::Index in, Eigen::Index n,
                          S* da) {
  for (Eigen::Index s = 0; s < n; ++s) {
    const S d = dz[s];
    const S* as = a + s * in;
    S* out = da + s * in;
    // Two loops over the column (in L1): GCC will not speculate a float multiply under a
    // condition, so one loop would branch on the sign of every activation; these vectorize.
    for (Eigen::Index i = 0; i < in; ++i) out[i] = w[i] * d + S(0);
    for (Eigen::Index i = 0; i < in; ++i) out[i] = as[i] > S(0) ? out[i] : S(0);
  }
}

// The constructor's arguments, checked (in this order) before the members sized from them
// are built.
const MlpShape& checked_shape(const MlpShape& shape) {
  check_shape("ltt::learning::EigenMlp", "shape", shape);
  return shape;
}

const AdamOptions& checked_adam(const AdamOptions& adam) {
  check_adam("ltt::learning::EigenMlp", adam);
  return adam;
}

}  // namespace

template <class S>
AdamState<S>::AdamState(std::int64_t size, const AdamOptions& adam) : adam_(adam) {
  check_adam("ltt::learning::AdamState", adam);
  if (size < 0) invalid("ltt::learning::AdamState", "size", show(size), "must be at least 0");
  m_ = Vector::Zero(static_cast<Eigen::Index>(size));
  v_ = m_;
}

// torch.optim.Adam's update (adam.hpp). The parameters and the gradient are mapped unaligned;
// Eigen peels by the runtime address, so an EigenMlp's own (aligned) vectors take exactly the
// packets and scalar tail they took when this pass was written on them directly.
template <class S>
void AdamState<S>::step(std::span<S> parameters, std::span<const S> gradient) {
  constexpr const char* fn = "ltt::learning::AdamState::step";
  require_size(fn, "parameters", parameters.size(), size(), "size()");
  require_size(fn, "gradient", gradient.size(), size(), "size()");
  const auto n = static_cast<Eigen::Index>(size());
  Eigen::Map<Vector> params(parameters.data(), n);
  const Eigen::Map<const Vector> grad(gradient.data(), n);
  ++step_;
  const double t = static_cast<double>(step_);
  const double bias1 = 1.0 - std::pow(adam_.beta1, t);
  const double bias2 = 1.0 - std::pow(adam_.beta2, t);
  const auto step_size = static_cast<S>(adam_.learning_rate / bias1);
  const auto bias2_sqrt = static_cast<S>(std::sqrt(bias2));
  const auto b1 = static_cast<S>(adam_.beta1), c1 = static_cast<S>(1.0 - adam_.beta1);
  const auto b2 = static_cast<S>(adam_.beta2), c2 = static_cast<S>(1.0 - adam_.beta2);
  const auto eps = static_cast<S>(adam_.epsilon);
  m_.array() = b1 * m_.array() + c1 * grad.array();
  v_.array() = b2 * v_.array() + c2 * grad.array().square();
  params.array() -= step_size * m_.array() / (v_.array().sqrt() / bias2_sqrt + eps);
}

template <class S>
EigenMlp<S>::EigenMlp(const MlpShape& shape, std::span<const S> parameters, const AdamOptions& adam,
                      std::int64_t chunk_rows)
    : shape_(checked_shape(shape)),
      chunk_rows_(chunk_rows),
      adam_state_(shape_.parameter_count(), checked_adam(adam)) {
  constexpr const char* fn = "ltt::learning::EigenMlp";
  fix_eigen_blocking();
  require_rows(fn, "chunk_rows", chunk_rows);
  const std::int64_t count = shape.parameter_count();
  require_size(fn, "parameters", parameters.size(), count, "shape.parameter_count()");
  params_ = Eigen::Map<const Vector>(parameters.data(), static_cast<Eigen::Index>(count));
  grad_ = Vector::Zero(static_cast<Eigen::Index>(count));
  for (std::int64_t l = 0; l < shape.layers(); ++l) offsets_.push_back(shape.weight_offset(l));
  activations_.resize(static_cast<std::size_t>(shape.layers()));
  reserve(std::min<std::int64_t>(chunk_rows, 64));
}

template <class S>
void EigenMlp<S>::reserve(std::int64_t rows) {
  const auto n = static_cast<Eigen::Index>(rows);
  if (n <= capacity_) return;
  Eigen::Index widest = 0;
  for (std::size_t l = 0; l < activations_.size(); ++l) {
    const auto out = static_cast<Eigen::Index>(shape_.widths[l + 1]);
    activations_[l].resize(out, n);
    widest = std::max(widest, out);
  }
  delta_a_.resize(widest, n);
  delta_b_.resize(widest, n);
  capacity_ = n;
}

template <class S>
void EigenMlp<S>::forward(const S* x, Eigen::Index n) {
  const auto layers = activations_.size();
  for (std::size_t l = 0; l < layers; ++l) {
    const auto in = static_cast<Eigen::Index>(shape_.widths[l]);
    const auto out = static_cast<Eigen::Index>(shape_.widths[l + 1]);
    const S* w = params_.data() + offsets_[l];
    const Eigen::Map<const RowMatrix<S>> W(w, out, in);
    const Eigen::Map<const Vector> b(w + out * in, out);
    const Eigen::Map<const Matrix> A(l == 0 ? x : activations_[l - 1].data(), in, n);
    Eigen::Map<Matrix> Z(activations_[l].data(), out, n);
    Z.colwise() = b;
    Z.noalias() += W * A;
    if (l + 1 < layers)
      Z = Z.cwiseMax(S(0));
    else if (shape_.output == OutputActivation::tanh)
      Z = Z.array().tanh().matrix();
  }
}

template <class S>
void EigenMlp<S>::backward(const S* x, Eigen::Index n) {
  const auto layers = activations_.size();
  S* current = delta_a_.data();
  S* other = delta_b_.data();
  if (shape_.output == OutputActivation::tanh) {
    const auto out = static_cast<Eigen::Index>(shape_.output_width());
    Eigen::Map<Matrix> dZ(current, out, n);
    const Eigen::Map<const Matrix> Y(activations_.back().data(), out, n);
    dZ.array() *= S(1) - Y.array().square();
  }
  for (std::size_t l = layers; l-- > 0;) {
    const auto in = static_cast<Eigen::Index>(shape_.widths[l]);
    const auto out = static_cast<Eigen::Index>(shape_.widths[l + 1]);
    const S* w = params_.data() + offsets_[l];
    S* g = grad_.data() + offsets_[l];
    const Eigen::Map<const RowMatrix<S>> W(w, out, in);
    Eigen::Map<RowMatrix<S>> gW(g, out, in);
    Eigen::Map<Vector> gb(g + out * in, out);
    const Eigen::Map<const Matrix> A(l == 0 ? x : activations_[l - 1].data(), in, n);
    const Eigen::Map<const Matrix> dZ(current, out, n);
    gW.noalias() += dZ * A.transpose();
    gb.noalias() += dZ.rowwise().sum();
    if (l == 0) break;
    Eigen::Map<Matrix> dA(other, in, n);
    if (out == 1) {
      masked_outer_product<S>(w, current, A.data(), in, n, dA.data());
    } else {
      dA.noalias() = W.transpose() * dZ;
      dA = (A.array() > S(0)).select(dA, S(0));  // ReLU: A > 0 exactly where Z > 0
    }
    std::swap(current, other);
  }
}

template <class S>
void EigenMlp<S>::predict(std::span<const S> inputs, std::int64_t rows, std::span<S> outputs) {
  constexpr const char* fn = "ltt::learning::EigenMlp::predict";
  require_size(fn, "inputs", inputs.size(), rows * shape_.input(), "rows * input width");
  require_size(fn, "outputs", outputs.size(), rows * shape_.output_width(), "rows * output width");
  const std::int64_t in = shape_.input();
  const std::int64_t out = shape_.output_width();
  reserve(std::min(rows, chunk_rows_));
  for (std::int64_t first = 0; first < rows; first += chunk_rows_) {
    const std::int64_t n = std::min(chunk_rows_, rows - first);
    forward(inputs.data() + first * in, static_cast<Eigen::Index>(n));
    std::copy_n(output(), n * out, outputs.data() + first * out);
  }
}

template <class S>
double EigenMlp<S>::bradley_terry_gradient(std::span<const S> batch, std::int64_t pairs,
                                           std::int64_t H) {
  constexpr const char* fn = "ltt::learning::EigenMlp::bradley_terry_gradient";
  require_rows(fn, "pairs", pairs);
  require_rows(fn, "H", H);
  if (shape_.output_width() != 1)
    invalid(fn, "shape.widths.back()", show(shape_.output_width()),
            "must be 1 for a value network");
  const std::int64_t rows_per_pair = 2 * H;
  require_size(fn, "batch", batch.size(), pairs * rows_per_pair * shape_.input(),
               "pairs * 2H * input width");
  const std::int64_t chunk_pairs = std::max<std::int64_t>(1, chunk_rows_ / rows_per_pair);
  reserve(std::min(pairs, chunk_pairs) * rows_per_pair);
  grad_.setZero();
  double loss = 0.0;
  for (std::int64_t first = 0; first < pairs; first += chunk_pairs) {
    const std::int64_t np = std::min(chunk_pairs, pairs - first);
    const auto n = static_cast<std::size_t>(np * rows_per_pair);
    const S* x = batch.data() + first * rows_per_pair * shape_.input();
    forward(x, static_cast<Eigen::Index>(n));
    loss += bradley_terry_loss<S>({output(), n}, np, H, pairs, {delta_a_.data(), n});
    backward(x, static_cast<Eigen::Index>(n));
  }
  return loss / static_cast<double>(pairs);
}

template <class S>
double EigenMlp<S>::squared_error_gradient(std::span<const S> inputs, std::span<const S> targets,
                                           std::span<const S> weights, std::int64_t rows) {
  constexpr const char* fn = "ltt::learning::EigenMlp::squared_error_gradient";
  require_rows(fn, "rows", rows);
  const std::int64_t in = shape_.input();
  const std::int64_t out = shape_.output_width();
  require_size(fn, "inputs", inputs.size(), rows * in, "rows * input width");
  require_size(fn, "targets", targets.size(), rows * out, "rows * output width");
  if (!weights.empty()) require_size(fn, "weights", weights.size(), rows, "rows (or empty)");
  reserve(std::min(rows, chunk_rows_));
  grad_.setZero();
  double loss = 0.0;
  for (std::int64_t first = 0; first < rows; first += chunk_rows_) {
    const std::int64_t n = std::min(chunk_rows_, rows - first);
    const auto values = static_cast<std::size_t>(n * out);
    const S* x = inputs.data() + first * in;
    forward(x, static_cast<Eigen::Index>(n));
    loss += squared_error_loss<S>(
        {output(), values}, targets.subspan(static_cast<std::size_t>(first * out), values),
        weights.empty()
            ? weights
            : weights.subspan(static_cast<std::size_t>(first), static_cast<std::size_t>(n)),
        n, out, rows, {delta_a_.data(), values});
    backward(x, static_cast<Eigen::Index>(n));
  }
  return loss / static_cast<double>(rows);
}

template <class S>
double EigenMlp<S>::output_loss_gradient(std::span<const S> inputs, std::int64_t rows,
                                         const OutputLoss& loss) {
  constexpr const char* fn = "ltt::learning::EigenMlp::output_loss_gradient";
  require_rows(fn, "rows", rows);
  const std::int64_t in = shape_.input();
  const std::int64_t out = shape_.output_width();
  require_size(fn, "inputs", inputs.size(), rows * in, "rows * input width");
  reserve(std::min(rows, chunk_rows_));
  grad_.setZero();
  double total = 0.0;
  for (std::int64_t first = 0; first < rows; first += chunk_rows_) {
    const std::int64_t n = std::min(chunk_rows_, rows - first);
    const auto values = static_cast<std::size_t>(n * out);
    const S* x = inputs.data() + first * in;
    forward(x, static_cast<Eigen::Index>(n));
    total += loss({output(), values}, first, n, {delta_a_.data(), values});
    backward(x, static_cast<Eigen::Index>(n));
  }
  return total;
}

template <class S>
void EigenMlp<S>::output_gradient(std::span<const S> inputs, std::span<const S> d_outputs,
                                  std::int64_t rows) {
  constexpr const char* fn = "ltt::learning::EigenMlp::output_gradient";
  require_rows(fn, "rows", rows);
  const std::int64_t out = shape_.output_width();
  require_size(fn, "d_outputs", d_outputs.size(), rows * out, "rows * output width");
  output_loss_gradient(inputs, rows,
                       [&](std::span<const S>, std::int64_t first, std::int64_t n, std::span<S> d) {
                         std::copy_n(d_outputs.data() + first * out, n * out, d.data());
                         return 0.0;
                       });
}

template <class S>
double EigenMlp<S>::gradient_norm() const {
  double sum = 0.0;
  for (const S g : gradient()) sum += static_cast<double>(g) * static_cast<double>(g);
  return std::sqrt(sum);
}

template <class S>
void EigenMlp<S>::scale_gradient(S factor) {
  grad_ *= factor;
}

template <class S>
void EigenMlp<S>::adam_step() {
  adam_state_.step(parameters(), gradient());
}

template class AdamState<float>;
template class AdamState<double>;
template class EigenMlp<float>;
template class EigenMlp<double>;

}  // namespace ltt::learning
