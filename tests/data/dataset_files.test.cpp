// A dataset of several DSRL files (dataset_files.hpp): which files a directory or a pattern
// names, the pool they make (every episode and row where the files put it, checked against
// each file read alone), ids that name the file, and the selection written per file and read
// back with the single-file reader.

#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <data/dataset_files.hpp>
#include <data/dsrl.hpp>

#include "data_test.hpp"

using namespace ltt_data_test;
using ltt::data::DsrlPool;

namespace {

// A small dataset: `episodes` episodes of random lengths in [3, 12], then `tail` rows without
// an end flag; observations of `dim` values, row r's first value r + base (so rows can be told
// apart after concatenation); costs 0..4.
ltt::data::DsrlDataset small_dataset(std::uint64_t seed, int episodes, std::int64_t tail,
                                     std::int64_t dim, float base) {
  std::mt19937_64 rng(seed);
  std::vector<std::uint8_t> terminals, timeouts;
  std::vector<double> rewards, costs;
  for (int e = 0; e < episodes; ++e) {
    const std::int64_t length = 3 + static_cast<std::int64_t>(rng() % 10);
    for (std::int64_t t = 0; t < length; ++t) {
      terminals.push_back(t + 1 == length && e % 2 == 0);
      timeouts.push_back(t + 1 == length && e % 2 == 1);
      rewards.push_back(static_cast<double>(rng() % 7) * 0.5);
      costs.push_back(static_cast<double>(rng() % 5));
    }
  }
  for (std::int64_t t = 0; t < tail; ++t) {
    terminals.push_back(0);
    timeouts.push_back(0);
    rewards.push_back(1.0);
    costs.push_back(2.0);
  }
  const auto n = static_cast<std::int64_t>(costs.size());
  std::vector<float> obs(static_cast<std::size_t>(n * dim), 0.25f);
  for (std::int64_t r = 0; r < n; ++r)
    obs[static_cast<std::size_t>(r * dim)] = base + static_cast<float>(r);
  ltt::data::DsrlDataset d;
  d.observations = ltt::data::make_array(obs, {n, dim});
  d.next_observations = d.observations;
  d.actions = ltt::data::make_array(std::vector<float>(static_cast<std::size_t>(n), 0.0f), {n, 1});
  d.rewards = ltt::data::make_array(rewards);
  d.costs = ltt::data::make_array(costs);
  d.terminals = ltt::data::make_array(terminals, true);
  d.timeouts = ltt::data::make_array(timeouts, true);
  return d;
}

// Three files in `dir` (HDF5 where this build has it, .npy directories otherwise; the second
// always a .npy directory so that a dataset mixes the stores), with dropped tails of 4, 0, 2.
std::vector<fs::path> three_files(const fs::path& dir) {
  const std::string ext = LTT_TEST_HDF5 ? ".hdf5" : "";
  const std::vector<fs::path> paths = {dir / cat("a", ext), dir / "b", dir / cat("c", ext)};
  ltt::data::write_dsrl(paths[0], small_dataset(1, 7, 4, 3, 0.0f));
  ltt::data::write_dsrl(paths[1], small_dataset(2, 5, 0, 3, 1000.0f));
  ltt::data::write_dsrl(paths[2], small_dataset(3, 9, 2, 3, 2000.0f));
  return paths;
}

}  // namespace

TEST_CASE("dataset_paths: files, a directory of datasets, a pattern; twice refused") {
  const fs::path dir = scratch("dataset_paths");
  const std::vector<fs::path> files = three_files(dir);
  std::ofstream(dir / "notes.txt") << "not a dataset\n";
  fs::create_directories(dir / "empty");

  // A directory: its datasets sorted by name; a .npy store is one dataset, not a directory.
  const std::vector<std::string> by_dir = {dir.string()};
  CHECK(ltt::data::dataset_paths(by_dir) == files);
  const std::vector<std::string> store = {(dir / "b").string()};
  CHECK(ltt::data::dataset_paths(store) == std::vector<fs::path>{dir / "b"});
  // Files in the order given.
  const std::vector<std::string> given = {files[2].string(), files[0].string()};
  CHECK(ltt::data::dataset_paths(given) == std::vector<fs::path>{files[2], files[0]});
  // A pattern (that does not exist as a name), sorted.
  const std::vector<std::string> pattern = {(dir / "[ac]*").string()};
  CHECK(ltt::data::dataset_paths(pattern) == std::vector<fs::path>{files[0], files[2]});

  const std::vector<std::string> twice = {files[0].string(), dir.string()};
  check_data_error([&] { ltt::data::dataset_paths(twice); }, {"names this file twice"});
  const std::vector<std::string> other_name = {files[1].string(), (dir / "." / "b").string()};
  check_data_error([&] { ltt::data::dataset_paths(other_name); }, {"twice", "also as"});
  const std::vector<std::string> empty = {(dir / "empty").string()};
  check_data_error([&] { ltt::data::dataset_paths(empty); }, {"empty", "holds no dataset"});
  const std::vector<std::string> nothing = {(dir / "zz*.hdf5").string()};
  check_data_error([&] { ltt::data::dataset_paths(nothing); }, {"zz*.hdf5", "matches no file"});
}

TEST_CASE("load_dsrl_pool of several files: episodes and rows where the files put them") {
  const fs::path dir = scratch("several_files");
  const std::vector<fs::path> files = three_files(dir);
  const DsrlPool all = ltt::data::load_dsrl_pool(files);
  REQUIRE(all.parts.size() == 3);
  CHECK(all.several_files());
  std::int64_t row = 0, episode = 0, tail = 0;
  for (std::size_t p = 0; p < files.size(); ++p) {
    CAPTURE(p);
    const DsrlPool one = ltt::data::load_dsrl_pool(files[p]);
    const ltt::data::DsrlPart& part = all.parts[p];
    CHECK(part.file == one.file);
    CHECK(part.name == files[p].filename().string());
    CHECK(part.store == one.store);
    CHECK(part.first_row == row);
    CHECK(part.rows == one.transitions);
    CHECK(part.first_episode == episode);
    CHECK(part.episodes == one.size());
    CHECK(part.dropped_tail == one.dropped_tail);
    for (const ltt::data::Episode& e : one.episodes) {
      const ltt::data::Episode& g = all.episodes[static_cast<std::size_t>(episode + e.index)];
      CHECK(g.index == episode + e.index);
      CHECK(g.start == row + e.start);
      CHECK(g.length == e.length);
      CHECK(g.episodic_cost == e.episodic_cost);
      CHECK(g.episodic_return == e.episodic_return);
      CHECK(g.terminal == e.terminal);
      CHECK(&ltt::data::part_of_episode(all, g.index) == &part);
      // Ids name the file and its own episode index, and read back.
      const std::string id = ltt::data::episode_id(all, g.index);
      CHECK(id == cat(part.name, ":", std::to_string(e.index)));
      CHECK(ltt::data::find_episode(all, id) == g.index);
    }
    row += one.transitions;
    episode += one.size();
    tail += one.dropped_tail;
  }
  CHECK(all.transitions == row);
  CHECK(all.size() == episode);
  CHECK(all.dropped_tail == tail);
  CHECK(all.dropped_tail == 6);

  // Ids that name no episode.
  for (const std::string_view id : {"3", "b:5", "b:-1", "x.hdf5:0", "b:", ":0", "b:1.0"})
    CHECK_FALSE(ltt::data::find_episode(all, id).has_value());
  CHECK(ltt::data::find_episode(all, "b:04") == all.parts[1].first_episode + 4);

  // One file in a list is that file read alone: integer ids.
  const DsrlPool single = ltt::data::load_dsrl_pool(std::span(files).first(1));
  CHECK_FALSE(single.several_files());
  CHECK(ltt::data::episode_id(single, 3) == "3");
  CHECK(ltt::data::find_episode(single, "006") == 6);
  CHECK_FALSE(ltt::data::find_episode(single, "7").has_value());
  CHECK_FALSE(ltt::data::find_episode(single, "a.hdf5:0").has_value());
}

TEST_CASE("several files: the episodes' rows, the rows back, and the per-row columns") {
  const fs::path dir = scratch("several_rows");
  const std::vector<fs::path> files = three_files(dir);
  const DsrlPool all = ltt::data::load_dsrl_pool(files);

  // Observations: the files' rows one after another (first value = base + row in the file).
  const ltt::data::Array obs = ltt::data::read_dsrl_float32(all, "observations");
  REQUIRE(obs.rows() == all.transitions);
  const auto x = obs.values<float>();
  const float bases[] = {0.0f, 1000.0f, 2000.0f};
  for (std::size_t p = 0; p < 3; ++p)
    for (std::int64_t r = 0; r < all.parts[p].rows; ++r)
      CHECK(x[static_cast<std::size_t>((all.parts[p].first_row + r) * 3)] ==
            bases[p] + static_cast<float>(r));

  // Costs likewise; the episodes' rows leave each file's tail out, in order.
  const std::vector<double> costs = ltt::data::read_dsrl_costs(all);
  REQUIRE(static_cast<std::int64_t>(costs.size()) == all.transitions);
  std::vector<double> row_number(costs.size());
  for (std::size_t r = 0; r < row_number.size(); ++r) row_number[r] = static_cast<double>(r);
  const std::vector<double> kept = ltt::data::episode_rows(all, row_number);
  const std::vector<std::int64_t> offsets = ltt::data::episode_offsets(all);
  REQUIRE(offsets.back() == static_cast<std::int64_t>(kept.size()));
  CHECK(offsets.back() == all.transitions - all.dropped_tail);
  std::vector<std::int64_t> back(kept.size());
  for (std::size_t i = 0; i < back.size(); ++i) back[i] = static_cast<std::int64_t>(i);
  ltt::data::to_pool_rows(all, back);
  for (std::size_t e = 0; e < all.episodes.size(); ++e) {
    const ltt::data::Episode& ep = all.episodes[e];
    CAPTURE(e);
    CHECK(offsets[e + 1] - offsets[e] == ep.length);
    for (std::int64_t t = 0; t < ep.length; ++t) {
      const auto k = static_cast<std::size_t>(offsets[e] + t);
      CHECK(kept[k] == static_cast<double>(ep.start + t));
      CHECK(back[k] == ep.start + t);
    }
  }
  std::vector<std::int64_t> outside = {offsets.back()};
  check_data_error([&] { ltt::data::to_pool_rows(all, outside); }, {"outside"});
  check_data_error([&] { ltt::data::episode_rows(all, std::span(row_number).first(3)); },
                   {"3 values", std::to_string(all.transitions)});
}

TEST_CASE("several files: shapes must agree") {
  const fs::path dir = scratch("several_shapes");
  const std::vector<fs::path> files = three_files(dir);
  const fs::path wide = dir / "wide";
  ltt::data::write_dsrl(wide, small_dataset(4, 3, 0, 5, 0.0f));
  const std::vector<fs::path> mixed = {files[0], wide};
  check_data_error([&] { ltt::data::load_dsrl_pool(mixed); },
                   {"wide", "observations of 5 values", "share their shapes"});
}

TEST_CASE("write_dsrl_selection of several files: one selection per file, in its store") {
  const fs::path dir = scratch("several_selection");
  const std::vector<fs::path> files = three_files(dir);
  const DsrlPool all = ltt::data::load_dsrl_pool(files);
  const std::int64_t a0 = all.parts[0].first_episode, c0 = all.parts[2].first_episode;
  // From the first and last files only, in a mixed order, with a repeat (resampling).
  const std::vector<std::int64_t> selected = {c0 + 4, a0 + 1, c0 + 0, a0 + 1, c0 + 8};
  const fs::path out = dir / "out" / "selection";
  fs::create_directories(out.parent_path());
  const std::vector<std::int64_t> counts = ltt::data::write_dsrl_selection(all, out, selected);
  CHECK(counts == std::vector<std::int64_t>{2, 0, 3});
  CHECK_FALSE(fs::exists(out / "b"));
  const std::vector<std::vector<std::int64_t>> local = {{1, 1}, {}, {4, 0, 8}};
  for (const std::size_t p : {std::size_t{0}, std::size_t{2}}) {
    CAPTURE(p);
    const fs::path written = out / all.parts[p].name;
    REQUIRE(fs::exists(written));
    // The same bytes as the file's own selection of the same episodes.
    const fs::path alone = dir / "out" / cat("alone_", all.parts[p].name);
    ltt::data::write_dsrl_selection(files[p], alone, local[p]);
    check_same_arrays(ltt::data::read_dsrl(written), ltt::data::read_dsrl(alone),
                      ltt::data::dsrl_keys);
  }
  CHECK(no_temporaries(out.parent_path()));

  // Written again over itself; a directory holding anything else is never replaced.
  CHECK(ltt::data::write_dsrl_selection(all, out,
                                        std::vector<std::int64_t>{all.parts[1].first_episode}) ==
        std::vector<std::int64_t>{0, 1, 0});
  CHECK_FALSE(fs::exists(out / all.parts[0].name));
  CHECK(fs::exists(out / "b" / "observations.npy"));
  std::ofstream(out / "keep.txt") << "mine\n";
  check_data_error([&] { ltt::data::write_dsrl_selection(all, out, std::vector<std::int64_t>{0}); },
                   {"keep.txt", "not replacing it"});
  CHECK(fs::exists(out / "keep.txt"));
  check_data_error(
      [&] { ltt::data::write_dsrl_selection(all, dir / "none", std::vector<std::int64_t>{}); },
      {"empty"});
  check_data_error(
      [&] {
        ltt::data::write_dsrl_selection(all, dir / "none", std::vector<std::int64_t>{all.size()});
      },
      {"outside"});
  CHECK_FALSE(fs::exists(dir / "none"));
}

TEST_CASE("several files in nested directories: names relative to the deepest common one") {
  const fs::path dir = scratch("several_nested");
  for (const std::string robot : {"robot1", "robot2"}) {
    fs::create_directories(dir / robot);
    ltt::data::write_dsrl(dir / robot / "log",
                          small_dataset(robot == "robot1" ? 5 : 6, 4, 1, 2, 0.0f));
  }
  const std::vector<fs::path> files = {dir / "robot1" / "log", dir / "robot2" / "log"};
  const DsrlPool all = ltt::data::load_dsrl_pool(files);
  CHECK(all.parts[0].name == "robot1/log");
  CHECK(all.parts[1].name == "robot2/log");
  CHECK(ltt::data::episode_id(all, 5) == "robot2/log:1");
  CHECK(ltt::data::find_episode(all, "robot2/log:1") == 5);
  const fs::path out = dir / "selection";
  ltt::data::write_dsrl_selection(all, out, std::vector<std::int64_t>{1, 6});
  CHECK(ltt::data::load_dsrl_pool(out / "robot1" / "log").size() == 1);
  CHECK(ltt::data::load_dsrl_pool(out / "robot2" / "log").size() == 1);
}
