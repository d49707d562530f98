// The optional world geometry of a DSRL pool (data/world_geometry.hpp, docs/dsrl.md "World
// geometry"): written and read back in each store, absent from a file without it, carried by a
// selection row for row, and refused, one line naming the key, when incomplete or inconsistent.

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <vector>

#include <data/dsrl.hpp>
#include <data/npy.hpp>

#include "data_test.hpp"

namespace world_geometry_test {

namespace fs = std::filesystem;
using namespace ltt_data_test;
using ltt::data::make_array;

// Two episodes (3 and 2 rows), each with its own two hazards; the goal moves once in episode 0.
ltt::data::DsrlDataset pool_with_world() {
  const std::int64_t n = 5;
  ltt::data::DsrlDataset d;
  const std::vector<float> obs(static_cast<std::size_t>(n * 2), 0.25f);
  d.observations = make_array(obs, {n, 2});
  d.next_observations = make_array(obs, {n, 2});
  d.actions = make_array(std::vector<float>(static_cast<std::size_t>(n), 0.f), {n, 1});
  d.rewards = make_array(std::vector<float>{1, 2, 3, 4, 5});
  d.costs = make_array(std::vector<float>{0, 1, 0, 0, 1});
  d.terminals = make_array(std::vector<std::uint8_t>(5, 0), true);
  d.timeouts = make_array(std::vector<std::uint8_t>{0, 0, 1, 0, 1}, true);
  ltt::data::WorldGeometry w;
  w.position = make_array(std::vector<float>{0, 0, .1f, .1f, .2f, .3f, -1, -1, -1.1f, -1}, {n, 2});
  w.goal = make_array(std::vector<float>{1, 1, 1, 1, -1, 1, 0, 1, 0, 1}, {n, 2});
  std::vector<float> hazards;
  for (std::int64_t r = 0; r < n; ++r) {
    const float shift = r < 3 ? 0.f : 0.5f;
    for (const float v : {.5f, -.5f, -.5f, .5f}) hazards.push_back(v + shift);
  }
  w.hazards = make_array(hazards, {n, 2, 2});
  w.arena = make_array(std::vector<float>{-1.5f, -1.5f, 1.5f, 1.5f});
  w.hazard_radius = make_array(std::vector<float>{0.2f});
  w.goal_radius = make_array(std::vector<float>{0.3f});
  d.world = w;
  return d;
}

void check_same_world(const ltt::data::WorldGeometry& a, const ltt::data::WorldGeometry& b) {
  check_same_arrays(a, b, ltt::data::world_keys);
}

std::vector<fs::path> targets(const fs::path& dir, std::string_view stem) {
  std::vector<fs::path> paths = {dir / std::string(stem)};
  if (LTT_TEST_HDF5) paths.push_back(dir / cat(stem, ".hdf5"));
  return paths;
}

TEST_CASE("world geometry: written, read back, and carried by a selection row for row") {
  const fs::path dir = scratch("world_round_trip");
  const ltt::data::DsrlDataset d = pool_with_world();
  for (const fs::path& path : targets(dir, "pool")) {
    CAPTURE(path);
    ltt::data::write_dsrl(path, d);
    const ltt::data::DsrlDataset back = ltt::data::read_dsrl(path);
    REQUIRE(back.world.has_value());
    check_same_world(*back.world, *d.world);
    const auto read = ltt::data::read_world_geometry(path, ltt::data::load_dsrl_pool(path));
    REQUIRE(read.has_value());
    check_same_world(*read, *d.world);
  }
  // Episode 1 alone: its rows of every per-row key, the file's own arena and radii.
  for (const fs::path& path : targets(dir, "pool")) {
    CAPTURE(path);
    const fs::path out = dir / (path.extension() == ".hdf5" ? "one.hdf5" : "one");
    ltt::data::write_dsrl_selection(path, out, std::vector<std::int64_t>{1});
    const auto one = ltt::data::read_world_geometry(out, ltt::data::load_dsrl_pool(out));
    REQUIRE(one.has_value());
    CHECK(one->position.shape == std::vector<std::int64_t>{2, 2});
    CHECK(one->position.values<float>()[0] == -1.f);
    CHECK(one->hazards.values<float>()[0] == 1.f);
    CHECK(one->arena.bytes == d.world->arena.bytes);
  }
  if (!LTT_TEST_HDF5) return;
  // h5py sees the keys where docs/dsrl.md says they are.
  CHECK(run_python(cat("-c \"import h5py, sys; f = h5py.File(sys.argv[1]); "
                       "sys.exit(0 if f['infos/hazards'].shape == (5, 2, 2) and "
                       "f['world/arena'].shape == (4,) and f['world/goal_radius'][0] > 0.29 "
                       "else 1)\" ",
                       shell_quoted(dir / "pool.hdf5"))) == 0);
}

// The first `rows` rows of a per-row array.
ltt::data::Array first_rows(ltt::data::Array a, std::int64_t rows) {
  a.bytes.resize(a.bytes.size() / static_cast<std::size_t>(a.rows()) *
                 static_cast<std::size_t>(rows));
  a.shape[0] = rows;
  return a;
}

TEST_CASE("world geometry: a selection copies world/ whole when the pool has as many rows") {
  // Four rows, as many as world/arena's entries: episode 0 (rows 0-2) and episode 1 (row 3).
  ltt::data::DsrlDataset d = pool_with_world();
  for (const std::string_view key : ltt::data::dsrl_keys) d[key] = first_rows(d[key], 4);
  d.timeouts.bytes[3] = std::byte{1};
  for (const std::string_view key : {"infos/position", "infos/goal", "infos/hazards"})
    (*d.world)[key] = first_rows((*d.world)[key], 4);
  const fs::path dir = scratch("world_four_rows");
  for (const fs::path& path : targets(dir, "pool")) {
    CAPTURE(path);
    ltt::data::write_dsrl(path, d);
    const fs::path out = dir / (path.extension() == ".hdf5" ? "one.hdf5" : "one");
    ltt::data::write_dsrl_selection(path, out, std::vector<std::int64_t>{1});
    const auto one = ltt::data::read_world_geometry(out, ltt::data::load_dsrl_pool(out));
    REQUIRE(one.has_value());
    CHECK(one->position.shape == std::vector<std::int64_t>{1, 2});
    CHECK(one->arena.bytes == d.world->arena.bytes);
  }
}

TEST_CASE("world geometry: absent from a file without world/arena") {
  const fs::path dir = scratch("world_absent");
  ltt::data::DsrlDataset d = pool_with_world();
  d.world.reset();
  for (const fs::path& path : targets(dir, "plain")) {
    CAPTURE(path);
    ltt::data::write_dsrl(path, d);
    CHECK_FALSE(ltt::data::read_dsrl(path).world.has_value());
    CHECK_FALSE(ltt::data::read_world_geometry(path, ltt::data::load_dsrl_pool(path)).has_value());
  }
  // A DSRL file with an infos/ group of its own (infos/goal, int64) but no world/arena.
  std::vector<fs::path> with_infos = {fixture("dsrl/enum_flags_npy")};
  if (LTT_TEST_HDF5) with_infos.push_back(fixture("dsrl/enum_flags.hdf5"));
  for (const fs::path& path : with_infos) {
    CAPTURE(path);
    CHECK_FALSE(ltt::data::read_world_geometry(path, ltt::data::load_dsrl_pool(path)).has_value());
  }
}

TEST_CASE("world geometry: incomplete or inconsistent is refused, one line naming the key") {
  const fs::path dir = scratch("world_refused");
  const ltt::data::DsrlDataset good = pool_with_world();
  const fs::path not_written = dir / "never";
  ltt::data::DsrlDataset bad = good;
  {
    std::vector<float> h(bad.world->hazards.values<float>().begin(),
                         bad.world->hazards.values<float>().end());
    h[2 * 4] += 1;  // row 2 moves a hazard of episode 0
    bad.world->hazards = make_array(h, {5, 2, 2});
  }
  check_data_error([&] { ltt::data::write_dsrl(not_written, bad); },
                   {"'infos/hazards' row 2", "episode 0", "stay put"});
  bad = good;
  bad.world->position = make_array(std::vector<float>(15, 0.f), {5, 3});
  check_data_error([&] { ltt::data::write_dsrl(not_written, bad); },
                   {"'infos/position' has shape (5, 3)", "expected (5, 2)"});
  bad = good;
  bad.world->arena = make_array(std::vector<float>{1, -1, -1, 1});
  check_data_error([&] { ltt::data::write_dsrl(not_written, bad); },
                   {"'world/arena'", "positive width and height"});
  CHECK_FALSE(fs::exists(not_written));

  // Files changed after writing: a key removed, a NaN, a wrong shape.
  const fs::path base = dir / "pool";
  ltt::data::write_dsrl(base, good);
  const auto refused = [&](const fs::path& path, std::initializer_list<std::string_view> parts) {
    CAPTURE(path);
    const ltt::data::DsrlPool pool = ltt::data::load_dsrl_pool(path);
    check_data_error([&] { ltt::data::read_world_geometry(path, pool); }, parts);
    check_data_error([&] { ltt::data::read_dsrl(path); }, parts);
  };
  fs::remove(base / "infos" / "goal.npy");
  refused(base, {"'infos/goal' is missing", "world/arena"});
  ltt::data::write_dsrl(base, good);
  std::vector<float> nan_position(10, 0.f);
  nan_position[3] = std::numeric_limits<float>::quiet_NaN();
  ltt::data::write_npy(base / "infos" / "position.npy", make_array(nan_position, {5, 2}));
  refused(base, {"'infos/position' element 3 is not a finite number"});
  ltt::data::write_npy(base / "infos" / "position.npy",
                       make_array(std::vector<std::int64_t>(10, 0), {5, 2}));
  refused(base, {"'infos/position' holds int64", "float32 or float64"});
  if (!LTT_TEST_HDF5) return;
  const fs::path h5 = dir / "pool.hdf5";
  ltt::data::write_dsrl(h5, good);
  REQUIRE(run_python(cat("-c \"import h5py, sys; f = h5py.File(sys.argv[1], 'r+'); "
                         "del f['infos/hazards']; f['infos/hazards'] = [[1.0]] * 5\" ",
                         shell_quoted(h5))) == 0);
  refused(h5, {"'infos/hazards' has shape (5, 1)", "expected (5, H, 2)"});
  REQUIRE(run_python(cat("-c \"import h5py, sys; f = h5py.File(sys.argv[1], 'r+'); "
                         "del f['infos']\" ",
                         shell_quoted(h5))) == 0);
  refused(h5, {"'infos/position' is missing"});
}

TEST_CASE("world geometry: a key that kills libhdf5 is refused by its reader alone") {
  if (!LTT_TEST_HDF5) return;
  // world/arena's type makes libhdf5 die when it opens the key: the seven keys read as before
  // (the world keys are surveyed only when asked for), and the geometry is refused by name.
  const fs::path in = fixture("dsrl/crash_in_world_key.hdf5");
  const ltt::data::DsrlPool pool = ltt::data::load_dsrl_pool(in);
  CHECK(pool.size() == 2);
  check_data_error([&] { ltt::data::read_world_geometry(in, pool); },
                   {in.string(), ": corrupted HDF5: libhdf5 crashed (", "opening key 'world/arena'"});
}

}  // namespace world_geometry_test
