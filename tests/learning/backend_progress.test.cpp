// Tests for reference_pipeline/learning/backend.hpp and progress.hpp: the Eigen backend behind
// the interface computes what EigenMlp computes, the registry names its backends and refuses
// others, and progress goes to stderr only when asked (automatic means a terminal: a test's
// stderr is captured into a file, so automatic must stay silent).

#include <learning/backend.hpp>
#include <learning/eigen_mlp.hpp>
#include <learning/progress.hpp>
#include <learning/value_training.hpp>

#include <doctest/doctest.h>

#include "../support/throws.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace lrn = ltt::learning;
using ltt_test::check_throws_naming;

// What f writes to file descriptor 2.
std::string stderr_of(const std::function<void()>& f) {
  std::fflush(stderr);
  std::FILE* capture = std::tmpfile();
  REQUIRE(capture != nullptr);
  const int saved = dup(2);
  dup2(fileno(capture), 2);
  f();
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  std::rewind(capture);
  std::string text;
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, capture)) > 0;)
    text.append(buffer, n);
  std::fclose(capture);
  return text;
}

lrn::ValueTrainingResult train(lrn::Progress progress) {
  std::vector<float> states(40 * 3);
  for (std::size_t i = 0; i < states.size(); ++i) states[i] = static_cast<float>(i % 7) * 0.1f;
  lrn::SegmentPairs pairs;
  pairs.segment_length = 4;
  pairs.preferred = {0, 10, 20};
  pairs.rejected = {30, 5, 15};
  lrn::ValueTrainingOptions o;
  o.hidden = {8};
  o.members = 2;
  o.epochs = 3;
  o.progress = progress;
  return lrn::train_value_ensemble(states, 3, pairs, o);
}

}  // namespace

TEST_CASE("Eigen backend: the interface runs EigenMlp<float>") {
  const std::vector<std::int64_t> hidden{16, 16};
  const auto start = lrn::initial_weights(lrn::value_shape(3, hidden), 5);
  const auto& backend = lrn::backend_named("eigen");
  CHECK(backend.name() == "eigen");
  CHECK(&backend == &lrn::eigen_backend());
  const auto net = backend.network(start);
  lrn::EigenMlp<float> mlp(start.shape, start.parameters);
  CHECK(net->shape() == start.shape);
  std::vector<float> batch(2 * 2 * 4 * 3);
  for (std::size_t i = 0; i < batch.size(); ++i)
    batch[i] = static_cast<float>((i * 37) % 11) * 0.2f - 1.0f;
  const double loss = net->bradley_terry_step(batch, 2, 4);
  CHECK(loss == mlp.bradley_terry_gradient(batch, 2, 4));
  mlp.adam_step();
  const auto after = net->weights();
  CHECK(std::memcmp(after.parameters.data(), mlp.parameters().data(),
                    4 * after.parameters.size()) == 0);
  std::vector<float> a(16), b(16);
  net->predict(batch, 16, a);
  mlp.predict(batch, 16, b);
  CHECK(a == b);
}

TEST_CASE("backend registry refuses unknown backends by name") {
  const auto names = lrn::backend_names();
  CHECK(std::find(names.begin(), names.end(), "eigen") != names.end());
  check_throws_naming([] { lrn::backend_named("tensorflow"); }, "backend");
}

TEST_CASE("progress: silent unless asked when stderr is not a terminal") {
  lrn::ValueTrainingResult quiet, automatic, always;
  CHECK(stderr_of([&] { quiet = train(lrn::Progress::quiet); }).empty());
  CHECK(stderr_of([&] { automatic = train(lrn::Progress::automatic); }).empty());
  const std::string text = stderr_of([&] { always = train(lrn::Progress::always); });
  CHECK(text.find("value ensemble member 1/2: epoch 1/3 loss ") != std::string::npos);
  CHECK(text.find("value ensemble member 2/2: epoch 3/3 loss ") != std::string::npos);
  CHECK(text.find(" states/s ETA ") != std::string::npos);
  CHECK(text.find(" ETA 0 s\n") != std::string::npos);       // the last member-epoch leaves nothing
  CHECK(text.find('\r') == std::string::npos);               // no in-place rewriting in a file
  CHECK(quiet.ensemble.members == always.ensemble.members);  // reporting changes nothing else
}
