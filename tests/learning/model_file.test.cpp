// Tests for reference_pipeline/learning/model_file.hpp: bit-exact round trips (bytes, weights,
// predictions), the documented byte layout, and a clear ModelFileError for every way a file can
// be wrong: every truncation, every single-byte change, trailing bytes, a newer version, a file
// that is not a model, a missing file.

#include <learning/backend.hpp>
#include <learning/model_file.hpp>

#include <doctest/doctest.h>

#include "../support/throws.hpp"

#include <unistd.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

namespace {

namespace lrn = ltt::learning;
namespace fs = std::filesystem;
using ltt_test::check_throws_naming;

std::vector<lrn::MlpWeights> two_networks() {
  const std::vector<std::int64_t> hidden{4, 3};
  return {lrn::initial_weights(lrn::value_shape(3, hidden), 1),
          lrn::initial_weights(lrn::policy_shape(2, hidden, 2), 2)};
}

std::string error_of(std::string_view bytes) {
  try {
    lrn::decode_models(bytes, "test.mlp");
  } catch (const lrn::ModelFileError& e) {
    return e.what();
  }
  return "";
}

fs::path temp_path(const char* name) {
  return fs::temp_directory_path() /
         (std::string("ltt_learning_test_") + std::to_string(::getpid()) + "_" + name);
}

}  // namespace

TEST_CASE("model file: documented layout") {
  const auto nets = two_networks();
  const std::string bytes = lrn::encode_models(nets);
  CHECK(bytes.substr(0, 8) == std::string("ltt.mlp\n"));
  auto u32 = [&](std::size_t at) {
    std::uint32_t x = 0;
    for (std::size_t i = 0; i < 4; ++i)
      x |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at + i])) << (8 * i);
    return x;
  };
  CHECK(u32(8) == 1);   // version
  CHECK(u32(12) == 2);  // networks
  CHECK(u32(16) == 0);  // identity
  CHECK(u32(20) == 3);  // layers
  CHECK(u32(24) == 3);  // widths 3, 4, 3, 1
  CHECK(u32(36) == 1);
  CHECK(u32(40) ==
        std::bit_cast<std::uint32_t>(nets[0].parameters[0]));  // first weight, little-endian
  const std::size_t p0 = static_cast<std::size_t>(nets[0].shape.parameter_count());
  const std::size_t p1 = static_cast<std::size_t>(nets[1].shape.parameter_count());
  CHECK(bytes.size() == 16 + (8 + 16 + 4 * p0) + (8 + 16 + 4 * p1) + 8);
  CHECK(u32(40 + 4 * p0) == 1);  // second network: tanh
}

TEST_CASE("model file: round trip is bit-exact, through memory and through a file") {
  const auto nets = two_networks();
  const auto decoded = lrn::decode_models(lrn::encode_models(nets));
  REQUIRE(decoded.size() == 2);
  for (std::size_t k = 0; k < 2; ++k) {
    CHECK(decoded[k].shape == nets[k].shape);
    CHECK(std::memcmp(decoded[k].parameters.data(), nets[k].parameters.data(),
                      4 * nets[k].parameters.size()) == 0);
  }
  const auto path = temp_path("round_trip.mlp");
  lrn::save_model(path, nets[1]);
  const auto loaded = lrn::load_model(path);
  CHECK(loaded == nets[1]);
  const std::vector<float> obs{0.3f, -1.2f, 2.0f, 0.5f};
  std::vector<float> a(4), b(4);
  lrn::eigen_backend().network(nets[1])->predict(obs, 2, a);
  lrn::eigen_backend().network(loaded)->predict(obs, 2, b);
  CHECK(std::memcmp(a.data(), b.data(), sizeof(float) * 4) == 0);
  CHECK(lrn::encode_models(lrn::load_models(path)) == lrn::encode_models(std::vector{nets[1]}));
  lrn::save_models(path, nets);
  std::string what;
  try {
    lrn::load_model(path);
  } catch (const lrn::ModelFileError& e) {
    what = e.what();
  }
  CHECK(what.find("holds 2 networks") != std::string::npos);
  fs::remove(path);
}

TEST_CASE("model file: every truncation and every single-byte change is an error") {
  const std::string bytes = lrn::encode_models(two_networks());
  for (std::size_t n = 0; n < bytes.size(); ++n) {
    const std::string what = error_of(bytes.substr(0, n));
    CHECK_MESSAGE(what.rfind("test.mlp: ", 0) == 0, "prefix of " << n << " bytes: " << what);
  }
  CHECK(error_of(bytes.substr(0, 100)).find("truncated") != std::string::npos);
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    std::string changed = bytes;
    changed[i] = static_cast<char>(changed[i] ^ 0x10);
    CHECK_MESSAGE(!error_of(changed).empty(), "byte " << i << " changed, no error");
  }
  std::string flipped = bytes;
  flipped[60] = static_cast<char>(flipped[60] ^ 0x01);  // a parameter's lowest bit
  CHECK(error_of(flipped).find("corrupt") != std::string::npos);
  CHECK(error_of(bytes + '\0').find("trailing") != std::string::npos);
  std::string newer = bytes;
  newer[8] = 2;
  CHECK(error_of(newer).find("version 2") != std::string::npos);
  CHECK(error_of("id,score\n1,0.5\n").find("not an ltt model file") != std::string::npos);
}

TEST_CASE("model file: unreadable and unwritable paths, bad networks") {
  std::string what;
  try {
    lrn::load_models(temp_path("does_not_exist.mlp"));
  } catch (const lrn::ModelFileError& e) {
    what = e.what();
  }
  CHECK(what.find("does_not_exist.mlp: cannot open") != std::string::npos);
  CHECK_THROWS_AS(lrn::save_model(temp_path("no_such_dir") / "x.mlp", two_networks()[0]),
                  lrn::ModelFileError);
  auto nets = two_networks();
  nets[1].parameters[2] = std::numeric_limits<float>::infinity();
  check_throws_naming([&] { lrn::encode_models(nets); }, "networks[1].parameters[2]");
  nets[1].parameters.pop_back();
  check_throws_naming([&] { lrn::encode_models(nets); }, "networks[1].parameters.size()");
  check_throws_naming([&] { lrn::encode_models({}); }, "networks.size()");
}
