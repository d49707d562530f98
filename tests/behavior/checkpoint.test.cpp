// Tests for the checkpoint file (behavior/checkpoint.hpp): a bit-exact round trip through bytes
// and through a file; every truncation, every single-byte change, a foreign file's magic, a
// newer version, trailing bytes and a missing file refused with the file named; bad fields
// refused when writing. And orthogonal initialization (orthogonal_init.hpp): orthonormal
// columns or rows, zero biases, the same bytes from the same seed.

#include <behavior/checkpoint.hpp>
#include <behavior/orthogonal_init.hpp>
#include <data/fnv1a.hpp>
#include <learning/binary_fields.hpp>
#include <learning/model_file.hpp>

#include <doctest/doctest.h>

#include "../support/throws.hpp"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <system_error>

namespace checkpoint_test {

namespace bhv = ltt::behavior;
namespace lrn = ltt::learning;
namespace fs = std::filesystem;
using ltt_test::check_throws_naming;

bhv::PolicyCheckpoint example() {
  std::mt19937_64 rng(7);
  bhv::PolicyCheckpoint c;
  c.task = "car-run";
  c.epoch = 12;
  c.environment_steps = 24000;
  c.cost_limit = 41.5;
  c.multiplier = 0.3125;
  c.policy.mean =
      bhv::orthogonal_weights(lrn::policy_shape(6, std::vector<std::int64_t>{8, 8}, 2), rng);
  c.policy.log_std = {-0.5f, -0.75f};
  return c;
}

// A file in a directory of this test process's own, removed when the process exits.
fs::path scratch(const std::string& name) {
  struct Directory {
    fs::path path = fs::temp_directory_path() / ("ltt-behavior-test-" + std::to_string(::getpid()));
    Directory() { fs::create_directories(path); }
    ~Directory() {
      std::error_code ignored;
      fs::remove_all(path, ignored);
    }
  };
  static const Directory dir;
  return dir.path / name;
}

// The message of the CheckpointError that decoding `bytes` throws, or "" when it decodes.
std::string refusal(const std::string& bytes) {
  try {
    bhv::decode_checkpoint(bytes, "the-file.ltt");
  } catch (const bhv::CheckpointError& e) {
    return e.what();
  }
  return "";
}

TEST_CASE("checkpoint: round trip through bytes and a file") {
  const bhv::PolicyCheckpoint c = example();
  const std::string bytes = bhv::encode_checkpoint(c);
  CHECK(bytes.substr(0, 8) == "ltt.ckp\n");
  CHECK(bhv::decode_checkpoint(bytes) == c);
  const fs::path path = scratch("round-trip.ltt");
  bhv::save_checkpoint(path, c);
  CHECK(bhv::load_checkpoint(path) == c);
  std::ifstream in(path, std::ios::binary);
  const std::string on_disk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(on_disk == bytes);
  fs::remove(path);
}

TEST_CASE("checkpoint: truncated, changed, foreign, newer, trailing and missing files refused") {
  const std::string bytes = bhv::encode_checkpoint(example());
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    CAPTURE(n);
    const std::string why = refusal(bytes.substr(0, n));
    CHECK(why.starts_with("the-file.ltt"));
  }
  CHECK(refusal(bytes.substr(0, bytes.size() - 3)).find("truncated") != std::string::npos);
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    CAPTURE(i);
    std::string changed = bytes;
    changed[i] = static_cast<char>(changed[i] ^ 0x10);
    CHECK(refusal(changed).starts_with("the-file.ltt: "));
  }
  std::string flipped = bytes;
  flipped[40] = static_cast<char>(flipped[40] ^ 1);  // inside the fields the hash covers
  CHECK(refusal(flipped).find("corrupt") != std::string::npos);

  // A model file is not a checkpoint.
  const lrn::MlpWeights mean = example().policy.mean;
  CHECK(refusal(lrn::encode_models(std::span(&mean, 1))).find("not an ltt checkpoint") !=
        std::string::npos);
  // Version 2, with a valid hash: a newer format.
  std::string newer = bytes.substr(0, bytes.size() - 8);
  newer[8] = 2;
  lrn::put_u64(newer, ltt::data::fnv1a(newer));
  CHECK(refusal(newer).find("version 2 is not one this program reads") != std::string::npos);
  CHECK(refusal(bytes + "x").find("trailing") != std::string::npos);
  const fs::path missing = scratch("missing.ltt");
  try {
    bhv::load_checkpoint(missing);
    FAIL("no exception");
  } catch (const bhv::CheckpointError& e) {
    CHECK(std::string(e.what()).find(missing.string()) != std::string::npos);
  }
}

TEST_CASE("checkpoint: fields that cannot be written are refused") {
  bhv::PolicyCheckpoint c = example();
  c.task = "";
  check_throws_naming([&] { bhv::encode_checkpoint(c); }, "checkpoint.task");
  c = example();
  c.multiplier = std::nan("");
  check_throws_naming([&] { bhv::encode_checkpoint(c); }, "checkpoint.multiplier");
  c = example();
  c.policy.log_std.push_back(0.0f);
  check_throws_naming([&] { bhv::encode_checkpoint(c); }, "checkpoint.policy.log_std.size()");
  c = example();
  c.policy.mean.shape.output = lrn::OutputActivation::identity;
  check_throws_naming([&] { bhv::encode_checkpoint(c); }, "checkpoint.policy.mean.shape.output");
}

TEST_CASE("orthogonal initialization: orthonormal columns or rows, zero biases, seeded") {
  const auto shape = lrn::value_shape(5, std::vector<std::int64_t>{12, 3});  // tall, wide, wide
  std::mt19937_64 rng(3);
  const lrn::MlpWeights w = bhv::orthogonal_weights(shape, rng);
  for (std::int64_t l = 0; l < shape.layers(); ++l) {
    CAPTURE(l);
    const auto out = static_cast<std::size_t>(shape.widths[static_cast<std::size_t>(l) + 1]);
    const auto in = static_cast<std::size_t>(shape.widths[static_cast<std::size_t>(l)]);
    const float* W = w.parameters.data() + shape.weight_offset(l);
    // Gram matrix of the columns (out >= in) or of the rows (out < in): the identity.
    const bool tall = out >= in;
    const std::size_t k = tall ? in : out, len = tall ? out : in;
    for (std::size_t a = 0; a < k; ++a)
      for (std::size_t b = 0; b < k; ++b) {
        double dot = 0;
        for (std::size_t i = 0; i < len; ++i)
          dot += tall ? static_cast<double>(W[i * in + a]) * W[i * in + b]
                      : static_cast<double>(W[a * in + i]) * W[b * in + i];
        CHECK(dot == doctest::Approx(a == b ? 1.0 : 0.0).epsilon(1e-6).scale(1.0));
      }
    for (std::size_t i = 0; i < out; ++i) CHECK(W[out * in + i] == 0.0f);
  }
  std::mt19937_64 again(3), other(4);
  CHECK(bhv::orthogonal_weights(shape, again) == w);
  CHECK(bhv::orthogonal_weights(shape, other) != w);
}

}  // namespace checkpoint_test
