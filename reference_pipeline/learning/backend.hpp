#pragma once
// Where the arithmetic runs. A Backend makes Networks; a Network is one MLP being trained or
// evaluated on that backend's device, float32 throughout. The trainers (value_training.hpp,
// behavior_cloning.hpp) own everything else: the data, the seeded shuffles, the minibatch
// gathering, epochs and progress. So two backends given the same data and seed see the same
// minibatches in the same order and start from the same initial bytes (initial_weights), and
// differ only in rounding inside their kernels.
//
// The Eigen backend (eigen_backend(), the default) runs on the CPU, one thread per network.
// The LibTorch backend (torch_backend.hpp, built with the CMake option LTT_WITH_TORCH) implements
// these two classes on CUDA or the CPU, copying each gathered minibatch to its device.

#include "learning/adam.hpp"
#include "learning/mlp.hpp"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ltt::learning {

class Network {
 public:
  virtual ~Network() = default;
  Network() = default;
  Network(const Network&) = delete;
  Network& operator=(const Network&) = delete;

  virtual const MlpShape& shape() const = 0;

  // One Adam step on the mean Bradley-Terry loss (paper, equation "bt") over `pairs` pairs of
  // segments of H states; batch holds pair after pair the H states of the preferred segment then
  // the H states of the other, each shape().input() floats. Needs output width 1. Returns the
  // loss at the parameters before the step.
  virtual double bradley_terry_step(std::span<const float> batch, std::int64_t pairs,
                                    std::int64_t H) = 0;

  // One Adam step on the mean weighted squared error (losses.hpp) of `rows` rows: inputs rows x
  // input width, targets rows x output width, weights empty (all 1) or `rows` entries. Returns
  // the loss at the parameters before the step.
  virtual double squared_error_step(std::span<const float> inputs, std::span<const float> targets,
                                    std::span<const float> weights, std::int64_t rows) = 0;

  // outputs (rows x output width) = network(inputs), forward only.
  virtual void predict(std::span<const float> inputs, std::int64_t rows,
                       std::span<float> outputs) = 0;

  // The current parameters in the exchange layout.
  virtual MlpWeights weights() const = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  Backend() = default;
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  // "eigen", or a name that says the device ("torch-cpu", "torch-cuda", ...)
  virtual std::string name() const = 0;

  // A network starting at `start`, trained with `adam`. Thread-safe: the value trainer may ask
  // for several networks at once and train each on its own thread.
  virtual std::unique_ptr<Network> network(const MlpWeights& start,
                                           const AdamOptions& adam = {}) const = 0;
};

// The Eigen backend: float32 on the CPU, single-threaded per network (eigen_mlp.hpp).
const Backend& eigen_backend();

// The backend called `name`: "eigen", or those compiled in (backend_names()). Throws
// std::invalid_argument naming 'backend' for any other name.
const Backend& backend_named(std::string_view name);
std::vector<std::string> backend_names();

}  // namespace ltt::learning
