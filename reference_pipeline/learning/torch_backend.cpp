// The LibTorch backend (torch_backend.hpp): the Network interface on torch::nn::Linear layers,
// autograd and torch::optim::Adam. The losses follow losses.hpp term for term, with the segment
// sums, margins and squared errors formed in double as the Eigen backend forms them, so the two
// backends differ only in the float32 rounding of the layers.

#include "learning/torch_backend.hpp"

#include "learning/detail/data.hpp"

#include <torch/cuda.h>
#include <torch/nn/modules/linear.h>
#include <torch/optim/adam.h>
#include <torch/utils.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace ltt::learning {

namespace {

using detail::invalid;
using detail::show;

// The same size checks as the Eigen backend: from_blob would read past a short span.
using detail::require_size;

torch::Device pick_device() {
  return torch::cuda::is_available() ? torch::Device(torch::kCUDA) : torch::Device(torch::kCPU);
}

// rows x width float32 rows, read in place on the CPU (never written) and copied to the device.
torch::Tensor rows_tensor(std::span<const float> data, std::int64_t rows, std::int64_t width,
                          const torch::Device& device) {
  // from_blob takes a mutable pointer; the tensor is only read
  auto cpu = torch::from_blob(const_cast<float*>(data.data()), {rows, width}, torch::kFloat32);
  return device.is_cpu() ? cpu : cpu.to(device);
}

class TorchNetwork final : public Network {
 public:
  TorchNetwork(const MlpWeights& start, const AdamOptions& adam, const torch::Device& device)
      : shape_(start.shape), device_(device) {
    constexpr const char* fn = "ltt::learning::TorchNetwork";
    check_shape(fn, "start.shape", shape_);
    require_size(fn, "start.parameters", start.parameters.size(), shape_.parameter_count(),
                 "start.shape.parameter_count()");
    std::vector<torch::Tensor> parameters;
    for (std::int64_t l = 0; l < shape_.layers(); ++l) {
      const std::int64_t in = shape_.widths[static_cast<std::size_t>(l)];
      const std::int64_t out = shape_.widths[static_cast<std::size_t>(l + 1)];
      torch::nn::Linear linear(torch::nn::LinearOptions(in, out));
      linear->to(device_);
      {
        const torch::NoGradGuard no_grad;
        const float* p = start.parameters.data() + shape_.weight_offset(l);
        linear->weight.copy_(
            rows_tensor({p, static_cast<std::size_t>(out * in)}, out, in, device_));
        linear->bias.copy_(
            rows_tensor({p + out * in, static_cast<std::size_t>(out)}, 1, out, device_)
                .view({out}));
      }
      parameters.push_back(linear->weight);
      parameters.push_back(linear->bias);
      layers_.push_back(std::move(linear));
    }
    optimizer_ = std::make_unique<torch::optim::Adam>(parameters,
                                                      torch::optim::AdamOptions(adam.learning_rate)
                                                          .betas({adam.beta1, adam.beta2})
                                                          .eps(adam.epsilon)
                                                          .weight_decay(0.0)
                                                          .amsgrad(false));
  }

  const MlpShape& shape() const override { return shape_; }

  double bradley_terry_step(std::span<const float> batch, std::int64_t pairs,
                            std::int64_t H) override {
    constexpr const char* fn = "ltt::learning::TorchNetwork::bradley_terry_step";
    if (shape_.output_width() != 1)
      invalid(fn, "shape().output_width()", show(shape_.output_width()), "must be 1");
    if (pairs < 1) invalid(fn, "pairs", show(pairs), "must be at least 1");
    if (H < 1) invalid(fn, "H", show(H), "must be at least 1");
    require_size(fn, "batch", batch.size(), 2 * H * pairs * shape_.input(),
                 "2 H pairs * input width");
    const auto values = forward(rows_tensor(batch, 2 * H * pairs, shape_.input(), device_));
    // x_p = sum V(s+) - sum V(s-); loss = mean log(1 + exp(-x)), as log1p_exp in losses.hpp
    const auto sums = values.to(torch::kFloat64).view({pairs, 2, H}).sum(2);
    const auto z = sums.select(1, 1) - sums.select(1, 0);
    const auto loss = (torch::clamp_min(z, 0.0) + torch::log1p(torch::exp(-torch::abs(z)))).mean();
    return step(loss);
  }

  double squared_error_step(std::span<const float> inputs, std::span<const float> targets,
                            std::span<const float> weights, std::int64_t rows) override {
    constexpr const char* fn = "ltt::learning::TorchNetwork::squared_error_step";
    const std::int64_t A = shape_.output_width();
    if (rows < 1) invalid(fn, "rows", show(rows), "must be at least 1");
    require_size(fn, "inputs", inputs.size(), rows * shape_.input(), "rows * input width");
    require_size(fn, "targets", targets.size(), rows * A, "rows * output width");
    if (!weights.empty()) require_size(fn, "weights", weights.size(), rows, "rows (or empty)");
    const auto y = forward(rows_tensor(inputs, rows, shape_.input(), device_)).to(torch::kFloat64);
    const auto t = rows_tensor(targets, rows, A, device_).to(torch::kFloat64);
    auto per_row = (y - t).square().mean(1);
    if (!weights.empty())
      per_row = per_row * rows_tensor(weights, rows, 1, device_).view({rows}).to(torch::kFloat64);
    return step(per_row.mean());
  }

  void predict(std::span<const float> inputs, std::int64_t rows,
               std::span<float> outputs) override {
    constexpr const char* fn = "ltt::learning::TorchNetwork::predict";
    require_size(fn, "inputs", inputs.size(), rows * shape_.input(), "rows * input width");
    require_size(fn, "outputs", outputs.size(), rows * shape_.output_width(),
                 "rows * output width");
    if (rows == 0) return;
    const torch::NoGradGuard no_grad;
    const auto y =
        forward(rows_tensor(inputs, rows, shape_.input(), device_)).to(torch::kCPU).contiguous();
    std::memcpy(outputs.data(), y.data_ptr<float>(),
                sizeof(float) * static_cast<std::size_t>(y.numel()));
  }

  MlpWeights weights() const override {
    MlpWeights out{shape_, std::vector<float>(static_cast<std::size_t>(shape_.parameter_count()))};
    const torch::NoGradGuard no_grad;
    for (std::int64_t l = 0; l < shape_.layers(); ++l) {
      const auto& linear = layers_[static_cast<std::size_t>(l)];
      const auto w = linear->weight.to(torch::kCPU).contiguous();  // out x in, row-major
      const auto b = linear->bias.to(torch::kCPU).contiguous();
      float* p = out.parameters.data() + shape_.weight_offset(l);
      std::memcpy(p, w.data_ptr<float>(), sizeof(float) * static_cast<std::size_t>(w.numel()));
      std::memcpy(p + w.numel(), b.data_ptr<float>(),
                  sizeof(float) * static_cast<std::size_t>(b.numel()));
    }
    return out;
  }

 private:
  torch::Tensor forward(torch::Tensor a) {
    const auto last = layers_.size() - 1;
    for (std::size_t l = 0; l < layers_.size(); ++l) {
      a = layers_[l]->forward(a);
      if (l < last)
        a = torch::relu(a);
      else if (shape_.output == OutputActivation::tanh)
        a = torch::tanh(a);
    }
    return a;
  }

  // One Adam step on `loss`; returns its value before the step.
  double step(const torch::Tensor& loss) {
    optimizer_->zero_grad();
    loss.backward();
    optimizer_->step();
    return loss.item<double>();
  }

  MlpShape shape_;
  torch::Device device_;
  std::vector<torch::nn::Linear> layers_;
  std::unique_ptr<torch::optim::Adam> optimizer_;
};

class TorchBackend final : public Backend {
 public:
  TorchBackend() : device_(pick_device()) {
    // One intra-op thread per network, as the Eigen backend (torch_backend.hpp).
    if (device_.is_cpu()) torch::set_num_threads(1);
  }

  std::string name() const override { return device_.is_cuda() ? "torch-cuda" : "torch-cpu"; }

  std::unique_ptr<Network> network(const MlpWeights& start,
                                   const AdamOptions& adam) const override {
    check_adam("ltt::learning::TorchBackend::network", adam);
    return std::make_unique<TorchNetwork>(start, adam, device_);
  }

 private:
  torch::Device device_;
};

}  // namespace

const Backend& torch_backend() {
  static const TorchBackend backend;
  return backend;
}

}  // namespace ltt::learning
