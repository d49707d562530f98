// Uses the installed ltt::data, ltt::learning and ltt::tasks: writes a .npy and reads it back,
// trains a tiny value network on it with the Eigen backend, saves the model file and loads it
// back, and runs an episode of a velocity task (MuJoCo, linked through ltt::tasks).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <vector>

#include <data/npy.hpp>
#include <learning/eigen_mlp.hpp>
#include <learning/model_file.hpp>
#include <tasks/velocity.hpp>

namespace data = ltt::data;
namespace learning = ltt::learning;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: consumer WORK_DIR\n");
    return 2;
  }
  const std::filesystem::path dir = argv[1];

  // 64 rows of (x0, x1) with target x0 - x1.
  const std::int64_t rows = 64;
  std::vector<float> inputs, targets;
  for (std::int64_t i = 0; i < rows; ++i) {
    const float x0 = static_cast<float>(i % 8) / 8.0f, x1 = static_cast<float>(i / 8) / 8.0f;
    inputs.insert(inputs.end(), {x0, x1});
    targets.push_back(x0 - x1);
  }
  data::write_npy(dir / "inputs.npy", data::make_array(inputs, {rows, 2}));
  const data::Array read = data::read_npy(dir / "inputs.npy");
  const auto values = read.values<float>();
  if (read.shape != std::vector<std::int64_t>{rows, 2} ||
      !std::equal(values.begin(), values.end(), inputs.begin(), inputs.end())) {
    std::fprintf(stderr, "inputs.npy did not read back as written\n");
    return 1;
  }

  const std::int64_t hidden[] = {16};
  const learning::MlpWeights initial =
      learning::initial_weights(learning::value_shape(2, hidden), 7);
  learning::EigenMlp<float> net(initial.shape, initial.parameters, {.learning_rate = 1e-2});
  const double first = net.squared_error_gradient(values, targets, {}, rows);
  double loss = first;
  for (int step = 0; step < 200; ++step) {
    net.adam_step();
    loss = net.squared_error_gradient(values, targets, {}, rows);
  }
  std::printf("squared error: %.6g before, %.6g after 200 Adam steps\n", first, loss);
  if (!(loss < 0.1 * first)) return 1;

  const auto trained = net.parameters();
  const learning::MlpWeights weights{initial.shape, {trained.begin(), trained.end()}};
  learning::save_model(dir / "model.ltt", weights);
  if (!(learning::load_model(dir / "model.ltt") == weights)) {
    std::fprintf(stderr, "model.ltt did not load back as saved\n");
    return 1;
  }

  // The swimmer's model comes from inside the library: nothing is read from disk.
  ltt::tasks::VelocityEnvironment swimmer(ltt::tasks::velocity_task("swimmer-velocity"), 1);
  const std::vector<double> action{0.5, -0.5};
  double episode_return = 0;
  while (!swimmer.done()) episode_return += swimmer.step(action).reward;
  std::printf("swimmer-velocity: %lld steps, return %.6g\n",
              static_cast<long long>(swimmer.steps()), episode_return);
  if (swimmer.steps() != 1000 || !std::isfinite(episode_return)) return 1;
  return 0;
}
