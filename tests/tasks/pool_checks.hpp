#pragma once
// Checks shared by the task tests: a generated pool written through ltt::data in the DSRL
// layout reads back as the same dataset and splits into exactly the generated episodes; and the
// plane geometry of the two point-goal tests.

#include <tasks/episode_log.hpp>
#include <tasks/goal_frame_point.hpp>

#include <data/dsrl.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <numbers>
#include <span>
#include <string>
#include <vector>

namespace ltt_test {

inline constexpr double two_pi = 2 * std::numbers::pi;

inline double distance(ltt::tasks::PlaneVector a, ltt::tasks::PlaneVector b) {
  return std::hypot(a.x - b.x, a.y - b.y);
}

// Bearing of q seen from a point task's robot, counter-clockwise from its goal direction, in
// [0, 2 pi): the angle its lidar bins are laid out in.
template <class PointTask>
double bearing(const PointTask& env, ltt::tasks::PlaneVector q) {
  const ltt::tasks::PlaneVector p = env.position(), g = env.goal();
  double a = std::atan2(q.y - p.y, q.x - p.x) - std::atan2(g.y - p.y, g.x - p.x);
  a = std::fmod(a, two_pi);
  return a < 0 ? a + two_pi : a;
}

inline void check_dsrl_round_trip(const ltt::tasks::TaskPool& pool, const std::string& name) {
  namespace data = ltt::data;
  const std::filesystem::path dir = LTT_TASKS_SCRATCH;
  std::filesystem::create_directories(dir);
  const std::filesystem::path path = ltt::tasks::write_pool(dir, name, pool.dataset);
  CHECK(path == data::default_dsrl_path(dir, name));

  const data::DsrlDataset back = data::read_dsrl(path);
  for (const std::string_view key : data::dsrl_keys) {
    INFO("key " << key);
    CHECK(back[key].dtype == pool.dataset[key].dtype);
    CHECK(back[key].shape == pool.dataset[key].shape);
    CHECK(back[key].bytes == pool.dataset[key].bytes);
  }

  CHECK(back.world.has_value() == pool.dataset.world.has_value());
  if (back.world && pool.dataset.world)
    for (const std::string_view key : data::world_keys) {
      INFO("key " << key);
      CHECK(back.world->operator[](key).shape == pool.dataset.world->operator[](key).shape);
      CHECK(back.world->operator[](key).bytes == pool.dataset.world->operator[](key).bytes);
    }

  const data::DsrlPool episodes = data::load_dsrl_pool(path);
  CHECK(episodes.dropped_tail == 0);
  REQUIRE(episodes.size() == static_cast<std::int64_t>(pool.episodes.size()));
  std::int64_t start = 0;
  for (std::size_t i = 0; i < pool.episodes.size(); ++i) {
    const data::Episode& e = episodes.episodes[i];
    const ltt::tasks::EpisodeRecord& r = pool.episodes[i];
    INFO("episode " << i);
    CHECK(e.start == start);
    CHECK(e.length == r.length);
    CHECK(e.terminal == r.terminal);
    CHECK(e.episodic_cost == r.episodic_cost);  // integer sums, exact
    CHECK(std::abs(e.episodic_return - r.episodic_return) <=
          1e-9 * (1 + std::abs(r.episodic_return)));
    start += r.length;
  }
  CHECK(episodes.transitions == start);
}

// A point task's world geometry (data/world_geometry.hpp) read against its costs: a step's cost
// is cost_at(the position the next row of the episode starts at, the row's hazards), so the
// geometry must be the world the costs were computed in. float32 positions may put a point on
// the other side of a rim, so one row in a thousand may differ by more than `tolerance`.
template <class CostAt>
void check_world_against_costs(const ltt::tasks::TaskPool& pool, std::int64_t hazard_count,
                               double tolerance, CostAt cost_at) {
  REQUIRE(pool.dataset.world.has_value());
  const ltt::data::WorldGeometry& w = *pool.dataset.world;
  const std::int64_t n = pool.dataset.rewards.shape[0];
  CHECK(w.position.shape == std::vector<std::int64_t>{n, 2});
  CHECK(w.goal.shape == std::vector<std::int64_t>{n, 2});
  REQUIRE(w.hazards.shape == std::vector<std::int64_t>{n, hazard_count, 2});
  const auto position = w.position.values<float>();
  const auto hazards = w.hazards.values<float>();
  const auto costs = pool.dataset.costs.values<float>();
  std::int64_t row = 0, compared = 0, differ = 0;
  for (const ltt::tasks::EpisodeRecord& e : pool.episodes) {
    for (std::int64_t r = row; r + 1 < row + e.length; ++r) {
      const auto at = [&](std::span<const float> v, std::int64_t i) {
        return ltt::tasks::PlaneVector{v[static_cast<std::size_t>(2 * i)],
                                       v[static_cast<std::size_t>(2 * i + 1)]};
      };
      std::vector<ltt::tasks::PlaneVector> h;
      for (std::int64_t k = 0; k < hazard_count; ++k) h.push_back(at(hazards, r * hazard_count + k));
      ++compared;
      differ += std::abs(cost_at(at(position, r + 1), h) - costs[static_cast<std::size_t>(r)]) >
                tolerance;
    }
    row += e.length;
  }
  INFO(differ << " of " << compared << " steps' costs differ from the geometry's");
  CHECK(compared > 0);
  CHECK(differ * 1000 <= compared);
}

}  // namespace ltt_test
