#pragma once
// The short seeded rollout behind the velocity tasks' checksum (velocity_checksum.test.cpp and
// the program velocity_rollout.cpp, which the test runs under qemu's Haswell): per task, three
// episodes from seeds 1, 2, 3, each at most 200 steps, under actions drawn from
// std::mt19937_64(100 + seed) with tasks::uniform on [-1.25, 1.25] (so some are clipped). FNV-1a
// 64 over, in order: every observation's float32 bytes (the first, then one per step), and per
// step the reward and cost (double bytes) and the terminal and timeout flags (one byte each).
#include <tasks/velocity.hpp>

#include <data/fnv1a.hpp>

#include <cstddef>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

namespace ltt_test {

inline std::uint64_t velocity_rollout_checksum(const ltt::tasks::VelocityTaskSpec& task) {
  namespace tasks = ltt::tasks;
  std::uint64_t h = ltt::data::fnv1a_offset_basis;
  const auto hash = [&h](const auto& value) {
    h = ltt::data::fnv1a(std::as_bytes(std::span(&value, 1)), h);
  };
  std::vector<float> o(static_cast<std::size_t>(task.observation_dim));
  std::vector<double> a(static_cast<std::size_t>(task.action_dim));
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    tasks::VelocityEnvironment env(task, seed);
    std::mt19937_64 rng(100 + seed);
    env.observation(o);
    h = ltt::data::fnv1a(std::as_bytes(std::span(o)), h);
    for (int t = 0; t < 200 && !env.done(); ++t) {
      for (double& x : a) x = tasks::uniform(rng, -1.25, 1.25);
      const tasks::Step s = env.step(a);
      env.observation(o);
      h = ltt::data::fnv1a(std::as_bytes(std::span(o)), h);
      hash(s.reward);
      hash(s.cost);
      hash(static_cast<std::uint8_t>(s.terminal));
      hash(static_cast<std::uint8_t>(s.timeout));
    }
  }
  return h;
}

}  // namespace ltt_test
