// The Eigen backend behind the Backend interface, and the backend registry (backend.hpp).

#include "learning/backend.hpp"

#include "learning/eigen_mlp.hpp"
#ifdef LTT_LEARNING_WITH_TORCH
#include "learning/torch_backend.hpp"
#endif

#include "learning/detail/check.hpp"

#include <string>

namespace ltt::learning {

namespace {

class EigenNetwork final : public Network {
 public:
  EigenNetwork(const MlpWeights& start, const AdamOptions& adam)
      : mlp_(start.shape, start.parameters, adam) {}

  const MlpShape& shape() const override { return mlp_.shape(); }

  double bradley_terry_step(std::span<const float> batch, std::int64_t pairs,
                            std::int64_t H) override {
    const double loss = mlp_.bradley_terry_gradient(batch, pairs, H);
    mlp_.adam_step();
    return loss;
  }

  double squared_error_step(std::span<const float> inputs, std::span<const float> targets,
                            std::span<const float> weights, std::int64_t rows) override {
    const double loss = mlp_.squared_error_gradient(inputs, targets, weights, rows);
    mlp_.adam_step();
    return loss;
  }

  void predict(std::span<const float> inputs, std::int64_t rows,
               std::span<float> outputs) override {
    mlp_.predict(inputs, rows, outputs);
  }

  MlpWeights weights() const override {
    const auto p = mlp_.parameters();
    return {mlp_.shape(), std::vector<float>(p.begin(), p.end())};
  }

 private:
  EigenMlp<float> mlp_;
};

class EigenBackend final : public Backend {
 public:
  std::string name() const override { return "eigen"; }
  std::unique_ptr<Network> network(const MlpWeights& start,
                                   const AdamOptions& adam) const override {
    return std::make_unique<EigenNetwork>(start, adam);
  }
};

}  // namespace

const Backend& eigen_backend() {
  static const EigenBackend backend;
  return backend;
}

std::vector<std::string> backend_names() {
#ifdef LTT_LEARNING_WITH_TORCH
  return {"eigen", "torch"};
#else
  return {"eigen"};
#endif
}

const Backend& backend_named(std::string_view name) {
  if (name == "eigen") return eigen_backend();
#ifdef LTT_LEARNING_WITH_TORCH
  if (name == "torch") return torch_backend();
#endif
  std::string known;
  for (const auto& n : backend_names()) known += (known.empty() ? "" : ", ") + n;
  detail::invalid("ltt::learning::backend_named", "backend", std::string(name),
                  "is not a backend built into this program (built in: " + known +
#ifdef LTT_LEARNING_WITH_TORCH
                      ")");
#else
                      "; LibTorch needs the CMake option LTT_WITH_TORCH)");
#endif
}

}  // namespace ltt::learning
