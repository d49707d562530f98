// The DSRL reader, the episode rule and the selection writer, on datasets h5py and numpy
// wrote (make_dsrl_fixtures.py). Episode boundaries, returns and costs are checked against
// <name>.episodes.npy, which the generator computes with DSRL's own loop; selections are read
// back with h5py by check_dsrl_selection.py as well as with this reader.

#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <data/child_process.hpp>
#include <data/dsrl.hpp>
#include <data/dsrl_store.hpp>
#include <data/npy.hpp>

#include "data_test.hpp"

using namespace ltt_data_test;
using ltt::data::Array;
using ltt::data::DsrlPool;
using ltt::data::DType;

namespace {

// The stores this build reads: "<name>.hdf5" (with HDF5) and "<name>_npy".
std::vector<fs::path> stores_of(const std::string& name) {
  std::vector<fs::path> paths;
  if (LTT_TEST_HDF5) paths.push_back(fixture(cat("dsrl/", name, ".hdf5")));
  paths.push_back(fixture(cat("dsrl/", name, "_npy")));
  return paths;
}

void check_pool_against_reference(const DsrlPool& pool, const std::string& name) {
  const Array reference = ltt::data::read_npy(fixture(cat("dsrl/", name, ".episodes.npy")));
  const auto r = reference.values<double>();
  REQUIRE(reference.shape.size() == 2);
  REQUIRE(pool.size() == reference.shape[0]);
  for (std::size_t i = 0; i < pool.episodes.size(); ++i) {
    CAPTURE(i);
    const ltt::data::Episode& e = pool.episodes[i];
    CHECK(e.index == static_cast<std::int64_t>(i));
    CHECK(e.start == static_cast<std::int64_t>(r[5 * i]));
    CHECK(e.length == static_cast<std::int64_t>(r[5 * i + 1]));
    CHECK(e.episodic_return == doctest::Approx(r[5 * i + 2]).epsilon(1e-15));
    CHECK(e.episodic_cost == r[5 * i + 3]);
    CHECK(e.terminal == (r[5 * i + 4] == 1.0));
  }
  const Array rows = ltt::data::read_npy(fixture(cat("dsrl/", name, ".rows.npy")));
  CHECK(pool.transitions == rows.values<std::int64_t>()[0]);
}

void check_same_dataset(const ltt::data::DsrlDataset& a, const ltt::data::DsrlDataset& b) {
  check_same_arrays(a, b, ltt::data::dsrl_keys);
}

// The rows of the given episodes of `full`, one after another.
ltt::data::DsrlDataset rows_of(const ltt::data::DsrlDataset& full, const DsrlPool& pool,
                               const std::vector<std::int64_t>& selection) {
  ltt::data::DsrlDataset out;
  for (const std::string_view key : ltt::data::dsrl_keys) {
    const Array& a = full[key];
    Array& o = out[key];
    o.dtype = a.dtype;
    o.shape = a.shape;
    o.shape[0] = 0;
    const std::size_t row_bytes =
        static_cast<std::size_t>(a.row_size()) * ltt::data::item_size(a.dtype);
    for (const std::int64_t i : selection) {
      const ltt::data::Episode& e = pool.episodes[static_cast<std::size_t>(i)];
      o.bytes.insert(
          o.bytes.end(),
          a.bytes.begin() +
              static_cast<std::ptrdiff_t>(static_cast<std::size_t>(e.start) * row_bytes),
          a.bytes.begin() + static_cast<std::ptrdiff_t>(
                                static_cast<std::size_t>(e.start + e.length) * row_bytes));
      o.shape[0] += e.length;
    }
  }
  return out;
}

std::string indices_text(const std::vector<std::int64_t>& s) {
  std::string t;
  for (const std::int64_t i : s) t.append(" ").append(std::to_string(i));
  return t;
}

}  // namespace

TEST_CASE(
    "split_episodes: an episode ends where terminals | timeouts; the unflagged tail is dropped") {
  const std::vector<double> rewards = {1, 2, 3, 4, 5, 6, 7, 8};
  const std::vector<double> costs = {0, 1, 0, 0, 1, 1, 0, 1};
  const std::vector<std::uint8_t> terminals = {0, 1, 0, 0, 0, 1, 0, 0};
  const std::vector<std::uint8_t> timeouts = {0, 0, 0, 1, 0, 1, 0, 0};
  const ltt::data::EpisodeSplit s = ltt::data::split_episodes(rewards, costs, terminals, timeouts);
  REQUIRE(s.episodes.size() == 3);
  CHECK(s.episodes[0].start == 0);
  CHECK(s.episodes[0].length == 2);
  CHECK(s.episodes[0].episodic_return == 3);
  CHECK(s.episodes[0].episodic_cost == 1);
  CHECK(s.episodes[0].terminal);
  CHECK(s.episodes[1].start == 2);
  CHECK(s.episodes[1].length == 2);
  CHECK(!s.episodes[1].terminal);  // a timeout alone
  CHECK(s.episodes[2].start == 4);
  CHECK(s.episodes[2].length == 2);
  CHECK(s.episodes[2].episodic_return == 11);
  CHECK(s.episodes[2].terminal);  // both flags: terminal
  CHECK(s.dropped_tail == 2);     // rows 6 and 7, a truncated final episode

  const ltt::data::EpisodeSplit none = ltt::data::split_episodes({}, {}, {}, {});
  CHECK(none.episodes.empty());
  CHECK(none.dropped_tail == 0);
  check_data_error(
      [&] { ltt::data::split_episodes(rewards, costs, terminals, std::span(timeouts).first(3)); },
      {"8, 8, 8 and 3 rows"});
}

TEST_CASE("load_dsrl_pool: episodes, returns and costs as DSRL splits them") {
  for (const std::string name : {"enum_flags", "uint8_flags"})
    for (const fs::path& path : stores_of(name)) {
      CAPTURE(path);
      const DsrlPool pool = ltt::data::load_dsrl_pool(path);
      check_pool_against_reference(pool, name);
      CHECK(pool.file == path.string());
      CHECK(pool.observation_dim == 3);
      CHECK(pool.action_dim == 2);
      CHECK(pool.store == (path.extension() == ".hdf5" ? ltt::data::DsrlStore::hdf5
                                                       : ltt::data::DsrlStore::npy_directory));
      // enum_flags ends in 3 rows with neither flag; DSRL and OSRL drop them, and so do we.
      CHECK(pool.dropped_tail == (name == "enum_flags" ? 3 : 0));
      std::int64_t covered = 0;
      for (const auto& e : pool.episodes) covered += e.length;
      CHECK(covered + pool.dropped_tail == pool.transitions);
    }
}

TEST_CASE("load_dsrl_pool in blocks: split_episodes of the whole columns, bit for bit") {
  // Random episode lengths, both flags, a dropped tail, returns over many binades: blocks of
  // 1 row, of rows that end inside episodes, and of more than the file.
  const fs::path dir = scratch("pool_blocks");
  std::mt19937_64 rng(25);
  const std::int64_t n = 3001;
  std::vector<double> rewards(n), costs(n);
  std::vector<std::uint8_t> terminals(n, 0), timeouts(n, 0);
  for (std::int64_t i = 0; i < n - 17; ++i) {
    rewards[i] =
        std::ldexp(static_cast<double>(rng() % 2001) - 1000.0, static_cast<int>(rng() % 60) - 30);
    costs[i] = static_cast<double>(rng() % 3);
    const std::uint64_t u = rng() % 100;
    terminals[i] = u < 2;
    timeouts[i] = u >= 1 && u < 4;  // row with both flags when u == 1
  }
  ltt::data::DsrlDataset d;
  const auto column = [&](const std::vector<double>& x) { return ltt::data::make_array(x); };
  d.observations = ltt::data::make_array(std::vector<float>(2 * n, 0.5f), {n, 2});
  d.next_observations = d.observations;
  d.actions = ltt::data::make_array(std::vector<float>(n, 0.0f), {n, 1});
  d.rewards = column(rewards);
  d.costs = column(costs);
  d.terminals = ltt::data::make_array(terminals, true);
  d.timeouts = ltt::data::make_array(timeouts, true);
  const ltt::data::EpisodeSplit whole =
      ltt::data::split_episodes(rewards, costs, terminals, timeouts);
  REQUIRE(whole.episodes.size() > 50);
  REQUIRE(whole.dropped_tail >= 17);
  std::vector<fs::path> targets = {dir / "pool"};
  if (LTT_TEST_HDF5) targets.push_back(dir / "pool.hdf5");
  for (const fs::path& path : targets) {
    ltt::data::write_dsrl(path, d);
    for (const std::int64_t block :
         {std::int64_t{1}, std::int64_t{37}, std::int64_t{1000}, n + 5}) {
      CAPTURE(path);
      CAPTURE(block);
      const DsrlPool pool = ltt::data::detail::load_dsrl_pool_in_blocks(path, block);
      CHECK(pool.dropped_tail == whole.dropped_tail);
      REQUIRE(pool.episodes.size() == whole.episodes.size());
      int differ = 0;
      for (std::size_t e = 0; e < whole.episodes.size(); ++e) {
        const ltt::data::Episode& a = pool.episodes[e];
        const ltt::data::Episode& b = whole.episodes[e];
        differ += a.index != b.index || a.start != b.start || a.length != b.length ||
                  a.terminal != b.terminal ||
                  std::bit_cast<std::uint64_t>(a.episodic_return) !=
                      std::bit_cast<std::uint64_t>(b.episodic_return) ||
                  std::bit_cast<std::uint64_t>(a.episodic_cost) !=
                      std::bit_cast<std::uint64_t>(b.episodic_cost);
      }
      CHECK(differ == 0);
    }
  }
  // Several faults (written over a .npy directory's files, which write_dsrl would refuse): the
  // one a whole read meets first is named, the rewards before the flags, then the flags alone.
  const fs::path broken = dir / "pool";
  std::vector<std::uint8_t> bad_flags(terminals);
  bad_flags[1500] = 2;
  ltt::data::write_npy(broken / "terminals.npy", ltt::data::make_array(bad_flags));
  for (const std::int64_t block : {std::int64_t{7}, n}) {
    CAPTURE(block);
    check_data_error([&] { ltt::data::detail::load_dsrl_pool_in_blocks(broken, block); },
                     {"key 'terminals' row 1500 holds 2"});
  }
  rewards[2000] = std::numeric_limits<double>::infinity();
  ltt::data::write_npy(broken / "rewards.npy", column(rewards));
  for (const std::int64_t block : {std::int64_t{7}, n}) {
    CAPTURE(block);
    check_data_error([&] { ltt::data::detail::load_dsrl_pool_in_blocks(broken, block); },
                     {"key 'rewards' row 2000 is inf"});
  }
}

TEST_CASE(
    "read_dsrl: h5py enums read as bool, (N, 1) squeezed, float widths kept; both stores agree") {
  for (const std::string name : {"enum_flags", "uint8_flags"}) {
    CAPTURE(name);
    const std::vector<fs::path> paths = stores_of(name);
    const ltt::data::DsrlDataset d = ltt::data::read_dsrl(paths.front());
    const DType width = name == "enum_flags" ? DType::float32 : DType::float64;
    const std::int64_t n = d.observations.rows();
    CHECK(d.observations.dtype == width);
    CHECK(d.observations.shape == std::vector<std::int64_t>{n, 3});
    CHECK(d.next_observations.shape == std::vector<std::int64_t>{n, 3});
    CHECK(d.actions.shape == std::vector<std::int64_t>{n, 2});
    CHECK(d.actions.dtype == width);
    for (const char* key : {"rewards", "costs"}) {
      CHECK(d[key].dtype == width);
      CHECK(d[key].shape == std::vector<std::int64_t>{n});
    }
    for (const char* key : {"terminals", "timeouts"}) {
      CHECK(d[key].dtype == DType::boolean);
      CHECK(d[key].shape == std::vector<std::int64_t>{n});
    }
    // next_observations[t] = observations[t + 1] in the generator.
    const std::size_t row = 3 * ltt::data::item_size(width);
    CHECK(std::equal(d.next_observations.bytes.begin(),
                     d.next_observations.bytes.end() - static_cast<std::ptrdiff_t>(row),
                     d.observations.bytes.begin() + static_cast<std::ptrdiff_t>(row)));
    for (const fs::path& other : paths) {
      CAPTURE(other);
      check_same_dataset(d, ltt::data::read_dsrl(other));
    }
  }
}

TEST_CASE("broken datasets are refused with a message naming the file and the key") {
  struct Broken {
    std::string name;
    std::vector<std::string_view> parts;
  };
  const std::vector<Broken> cases = {
      {"missing_costs", {"key 'costs' is missing", "observations, next_observations"}},
      {"missing_two", {"keys 'costs', 'timeouts' are missing"}},
      {"mismatched_rows", {"key 'costs' has 6 rows but 'observations' has 7"}},
      {"wrong_rank", {"key 'observations' has shape (7,), rank 1", "(N, obs_dim)"}},
      {"wide_rewards", {"key 'rewards' has shape (7, 2)", "(N,) or (N, 1)"}},
      {"bad_flag", {"key 'terminals' row 2 holds 2", "0 or 1"}},
      {"nan_reward", {"key 'rewards' row 2 is nan"}},
      {"no_episode", {"none of its 7 rows has terminals or timeouts set"}},
      {"next_obs_shape",
       {"key 'next_observations' has shape (7, 4) but 'observations' has (7, 3)"}},
  };
  for (const Broken& c : cases)
    for (const fs::path& path : stores_of(c.name)) {
      CAPTURE(path);
      using Load = void (*)(const fs::path&);
      std::vector<Load> loads = {[](const fs::path& p) { ltt::data::load_dsrl_pool(p); }};
      // read_dsrl reads what is there; a dataset without a complete episode is well-formed.
      if (c.name != "no_episode")
        loads.push_back([](const fs::path& p) { ltt::data::read_dsrl(p); });
      for (const Load load : loads) {
        try {
          load(path);
          FAIL("no exception for ", path);
        } catch (const ltt::data::DataError& e) {
          const std::string what = e.what();
          CHECK_MESSAGE(what.starts_with(cat(path.string(), ": ")), what);
          for (const std::string_view part : c.parts)
            CHECK_MESSAGE(what.find(part) != std::string::npos, what);
        }
      }
    }
  if (LTT_TEST_HDF5) {
    check_data_error(
        [] { ltt::data::load_dsrl_pool(fixture("dsrl/int_observations.hdf5")); },
        {"int_observations.hdf5", "key 'observations' holds int32", "float32 or float64"});
    check_data_error([] { ltt::data::load_dsrl_pool(fixture("dsrl/group_key.hdf5")); },
                     {"group_key.hdf5", "key 'costs' is a group, not a dataset"});
    check_data_error([] { ltt::data::load_dsrl_pool(fixture("dsrl/string_rewards.hdf5")); },
                     {"string_rewards.hdf5", "key 'rewards' holds string"});
    check_data_error([] { ltt::data::load_dsrl_pool(fixture("dsrl/not_hdf5.hdf5")); },
                     {"not_hdf5.hdf5", "not an HDF5 file"});
  } else {
    check_data_error([] { ltt::data::load_dsrl_pool(fixture("dsrl/not_hdf5.hdf5")); },
                     {"not_hdf5.hdf5", "LTT_WITH_HDF5=OFF", "docs/dsrl.md"});
  }
  check_data_error([] { ltt::data::load_dsrl_pool(fixture("dsrl/absent.hdf5")); },
                   {"absent.hdf5", "no such file or directory"});
  check_data_error([] { ltt::data::load_dsrl_pool(fixture("dsrl/enum_flags_npy/rewards.npy")); },
                   {"rewards.npy", "is a single .npy file", "one file per key"});
}

TEST_CASE("write_dsrl_selection: exactly the selected episodes, every key, the file's own dtypes") {
  const std::vector<std::vector<std::int64_t>> selections = {
      {4, 0, 2}, {1, 2}, {3, 3, 1}, {0, 1, 2, 3, 4}};
  const fs::path dir = scratch("selection");
  int counter = 0;
  for (const fs::path& in : stores_of("enum_flags")) {
    const bool hdf5 = in.extension() == ".hdf5";
    const DsrlPool pool = ltt::data::load_dsrl_pool(in);
    const ltt::data::DsrlDataset full = ltt::data::read_dsrl(in);
    for (const auto& selection : selections) {
      CAPTURE(in);
      CAPTURE(indices_text(selection));
      const fs::path out = dir / cat("selection", std::to_string(counter++), hdf5 ? ".hdf5" : "");
      ltt::data::write_dsrl_selection(in, out, selection);

      // Read back by h5py / numpy, against the input, key by key, attributes included.
      CHECK(run_python(cat(script("check_dsrl_selection.py"), " ", shell_quoted(in), " ",
                           shell_quoted(out), indices_text(selection))) == 0);

      // And by this reader: the selected episodes, in order, with their returns and costs.
      const DsrlPool back = ltt::data::load_dsrl_pool(out);
      REQUIRE(back.size() == static_cast<std::int64_t>(selection.size()));
      CHECK(back.dropped_tail == 0);
      for (std::size_t j = 0; j < selection.size(); ++j) {
        const auto& original = pool.episodes[static_cast<std::size_t>(selection[j])];
        CHECK(back.episodes[j].length == original.length);
        CHECK(back.episodes[j].episodic_return == original.episodic_return);
        CHECK(back.episodes[j].episodic_cost == original.episodic_cost);
        CHECK(back.episodes[j].terminal == original.terminal);
      }
      check_same_dataset(ltt::data::read_dsrl(out), rows_of(full, pool, selection));
    }
  }
  CHECK(no_temporaries(dir));
}

TEST_CASE("write_dsrl_selection: uint8 flags, (N, 1) columns and compressed chunks are kept") {
  const fs::path dir = scratch("selection_uint8");
  for (const fs::path& in : stores_of("uint8_flags")) {
    CAPTURE(in);
    const fs::path out = dir / (in.extension() == ".hdf5" ? "out.hdf5" : "out");
    ltt::data::write_dsrl_selection(in, out, std::vector<std::int64_t>{2, 1});
    CHECK(run_python(cat(script("check_dsrl_selection.py"), " ", shell_quoted(in), " ",
                         shell_quoted(out), " 2 1")) == 0);
    if (in.extension() == ".hdf5")
      CHECK(run_python(cat("-c \"import h5py, sys; f = h5py.File(sys.argv[1]); "
                           "sys.exit(0 if f['costs'].compression == 'gzip' and f['costs'].shape == "
                           "(5, 1) else 1)\" ",
                           shell_quoted(out))) == 0);
  }
}

TEST_CASE("write_dsrl_selection: writing over its own input") {
  const fs::path dir = scratch("in_place");
  for (const fs::path& source : stores_of("enum_flags")) {
    CAPTURE(source);
    const fs::path copy = dir / source.filename();
    fs::copy(source, copy, fs::copy_options::recursive);
    const DsrlPool before = ltt::data::load_dsrl_pool(copy);
    ltt::data::write_dsrl_selection(copy, copy, std::vector<std::int64_t>{3, 1});
    const DsrlPool after = ltt::data::load_dsrl_pool(copy);
    REQUIRE(after.size() == 2);
    CHECK(after.episodes[0].episodic_return == before.episodes[3].episodic_return);
    CHECK(after.episodes[1].episodic_return == before.episodes[1].episodic_return);
  }
  CHECK(no_temporaries(dir));
}

TEST_CASE("write_dsrl_selection: refusals leave no output behind") {
  const fs::path dir = scratch("selection_errors");
  for (const fs::path& in : stores_of("enum_flags")) {
    CAPTURE(in);
    const bool hdf5 = in.extension() == ".hdf5";
    const fs::path out = dir / (hdf5 ? "out.hdf5" : "out");
    check_data_error([&] { ltt::data::write_dsrl_selection(in, out, std::vector<std::int64_t>{}); },
                     {out.string(), "is empty"});
    check_data_error(
        [&] {
          ltt::data::write_dsrl_selection(in, out, std::vector<std::int64_t>{0, 5});
        },
        {"episode index 5 (position 1", "outside [0, 5)", in.string()});
    check_data_error(
        [&] { ltt::data::write_dsrl_selection(in, out, std::vector<std::int64_t>{-1}); },
        {"episode index -1"});
    const fs::path wrong = dir / (hdf5 ? "out" : "out.hdf5");
    check_data_error(
        [&] { ltt::data::write_dsrl_selection(in, wrong, std::vector<std::int64_t>{0}); },
        {wrong.string(), hdf5 ? "name the output .hdf5" : "name the output without .hdf5"});
    CHECK(!fs::exists(out));
    CHECK(!fs::exists(wrong));
  }
  CHECK(no_temporaries(dir));
}

TEST_CASE("corrupted HDF5: a crash inside libhdf5 is a DataError, and leaves no output") {
  if (!LTT_TEST_HDF5) return;
  // tests/data/hdf5-crash/README.md: files on which libhdf5 1.10 wrote or read out of bounds.
  const fs::path crash = fs::path(LTT_DATA_SCRIPTS) / "hdf5-crash";
  check_data_error(
      [&] { ltt::data::load_dsrl_pool(crash / "crash-on-open.hdf5"); },
      {"crash-on-open.hdf5: corrupted HDF5: libhdf5 crashed (", "opening key 'terminals'"});
  for (const auto& load : {+[](const fs::path& p) { ltt::data::load_dsrl_pool(p); },
                           +[](const fs::path& p) { ltt::data::read_dsrl(p); }})
    check_data_error([&] { load(crash / "crash-on-write.hdf5"); },
                     {"crash-on-write.hdf5: key 'rewards' has a malformed element type (a float "
                      "of 4 bytes whose 32 significant bits start at bit 32256)"});

  // A key besides the seven that kills libhdf5 when opened: the layout reads well, and the
  // selection's writer dies mid-copy, in its child, after writing other keys.
  const fs::path dir = scratch("corrupted_selection");
  const fs::path in = fixture("dsrl/crash_in_extra_key.hdf5");
  CHECK(ltt::data::load_dsrl_pool(in).size() == 2);
  check_data_error(
      [&] { ltt::data::write_dsrl_selection(in, dir / "out.hdf5", std::vector<std::int64_t>{1}); },
      {in.string(), ": corrupted HDF5: libhdf5 crashed (", "copying 'infos/flag'"});
  CHECK(!fs::exists(dir / "out.hdf5"));
  CHECK(no_temporaries(dir));

  // A global heap that libhdf5 parses forever: the child is stopped once it makes no progress.
  const std::chrono::seconds saved = ltt::data::detail::child_stall_limit;
  ltt::data::detail::child_stall_limit = std::chrono::seconds(2);
  const fs::path hang = crash / "hang-on-write.hdf5";
  CHECK(ltt::data::load_dsrl_pool(hang).size() == 20);
  check_data_error(
      [&] {
        ltt::data::write_dsrl_selection(hang, dir / "out.hdf5", std::vector<std::int64_t>{3});
      },
      {"hang-on-write.hdf5: corrupted HDF5: libhdf5 hung (no progress in 2 s) copying the "
       "attributes of its root"});
  ltt::data::detail::child_stall_limit = saved;
  CHECK(!fs::exists(dir / "out.hdf5"));
  CHECK(no_temporaries(dir));
}

TEST_CASE("selection as .npy: indices, episode mask, transition mask") {
  const fs::path dir = scratch("selection_npy");
  for (const fs::path& in : stores_of("enum_flags")) {
    CAPTURE(in);
    const DsrlPool pool = ltt::data::load_dsrl_pool(in);
    const std::vector<std::int64_t> selection = {4, 1, 2};
    const Array indices = ltt::data::selection_indices(pool, selection);
    CHECK(indices.dtype == DType::int64);
    CHECK(std::vector<std::int64_t>(indices.values<std::int64_t>().begin(),
                                    indices.values<std::int64_t>().end()) == selection);
    const Array episodes = ltt::data::selection_episode_mask(pool, selection);
    CHECK(episodes.dtype == DType::boolean);
    CHECK(episodes.bytes == std::vector<std::byte>{std::byte{0}, std::byte{1}, std::byte{1},
                                                   std::byte{0}, std::byte{1}});
    const Array rows = ltt::data::selection_transition_mask(pool, selection);
    CHECK(rows.shape == std::vector<std::int64_t>{pool.transitions});
    std::int64_t kept = 0;
    for (const std::byte b : rows.bytes) kept += b == std::byte{1};
    CHECK(kept == pool.episodes[4].length + pool.episodes[1].length + pool.episodes[2].length);
    check_data_error([&] { ltt::data::selection_episode_mask(pool, std::vector<std::int64_t>{9}); },
                     {"selection_episode_mask", "episode index 9"});

    // dataset[key][mask] in numpy is the selection written in file order.
    const bool hdf5 = in.extension() == ".hdf5";
    const fs::path mask = dir / (hdf5 ? "mask_h5.npy" : "mask_dir.npy");
    const fs::path out = dir / (hdf5 ? "sorted.hdf5" : "sorted");
    ltt::data::write_npy(mask, rows);
    ltt::data::write_dsrl_selection(in, out, std::vector<std::int64_t>{1, 2, 4});
    CHECK(run_python(cat("-c \"import sys, numpy as np\n"
                         "def load(p):\n"
                         "    import os\n"
                         "    if os.path.isdir(p): return {k: np.load(os.path.join(p, k + '.npy')) "
                         "for k in ('observations', 'rewards', 'terminals')}\n"
                         "    import h5py; f = h5py.File(p); return {k: f[k][()] for k in "
                         "('observations', 'rewards', 'terminals')}\n"
                         "a, b, m = load(sys.argv[1]), load(sys.argv[2]), np.load(sys.argv[3])\n"
                         "assert m.dtype == np.bool_, m.dtype\n"
                         "sys.exit(0 if all(np.array_equal(a[k][m], b[k]) for k in a) else 1)\" ",
                         shell_quoted(in), " ", shell_quoted(out), " ", shell_quoted(mask))) == 0);
  }
}

TEST_CASE("write_dsrl and read_dsrl: a dataset in memory round-trips through each store") {
  const fs::path dir = scratch("write_dsrl");
  const std::int64_t n = 5;
  ltt::data::DsrlDataset d;
  std::vector<float> obs(static_cast<std::size_t>(n * 2));
  for (std::size_t i = 0; i < obs.size(); ++i) obs[i] = 0.5f * static_cast<float>(i);
  d.observations = ltt::data::make_array(obs, {n, 2});
  d.next_observations = ltt::data::make_array(obs, {n, 2});
  d.actions = ltt::data::make_array(std::vector<double>{1, 2, 3, 4, 5}, {n, 1});
  d.rewards = ltt::data::make_array(std::vector<float>{1, 2, 3, 4, 5});
  d.costs = ltt::data::make_array(std::vector<float>{0, 1, 0, 0, 1});
  d.terminals =
      ltt::data::make_array(std::vector<std::uint8_t>{0, 1, 0, 0, 0});  // uint8: written as bool
  d.timeouts = ltt::data::make_array(std::vector<std::uint8_t>{0, 0, 0, 0, 1}, true);

  std::vector<fs::path> targets = {dir / "pool"};
  if (LTT_TEST_HDF5) targets.push_back(dir / "pool.hdf5");
  CHECK(ltt::data::default_dsrl_path(dir, "pool") ==
        (LTT_TEST_HDF5 ? dir / "pool.hdf5" : dir / "pool"));
  CHECK(ltt::data::hdf5_available() == static_cast<bool>(LTT_TEST_HDF5));
  for (const fs::path& path : targets) {
    CAPTURE(path);
    ltt::data::write_dsrl(path, d);
    ltt::data::write_dsrl(path, d);  // a second write replaces the first
    const ltt::data::DsrlDataset back = ltt::data::read_dsrl(path);
    ltt::data::DsrlDataset expected = d;
    expected.terminals.dtype = DType::boolean;
    check_same_dataset(back, expected);
    const DsrlPool pool = ltt::data::load_dsrl_pool(path);
    REQUIRE(pool.size() == 2);
    CHECK(pool.episodes[1].episodic_return == 12);
    CHECK(!pool.episodes[1].terminal);
  }
  if (LTT_TEST_HDF5)  // h5py sees numpy bool flags, as in a DSRL file
    CHECK(
        run_python(cat(
            "-c \"import h5py, sys, numpy as np; f = h5py.File(sys.argv[1]); "
            "sys.exit(0 if f['terminals'].dtype == np.bool_ and f['timeouts'].dtype == np.bool_ "
            "and f['rewards'].dtype == np.float32 and f['actions'].dtype == np.float64 else 1)\" ",
            shell_quoted(dir / "pool.hdf5"))) == 0);

  ltt::data::DsrlDataset bad = d;
  bad.costs = ltt::data::make_array(std::vector<float>{0, 1, 0, 0});
  const fs::path not_written = dir / (LTT_TEST_HDF5 ? "bad.hdf5" : "bad");
  check_data_error([&] { ltt::data::write_dsrl(not_written, bad); },
                   {"cannot write", "bad", "key 'costs' has 4 rows but 'observations' has 5"});
  bad = d;
  bad.terminals = ltt::data::make_array(std::vector<std::uint8_t>{0, 3, 0, 0, 0});
  check_data_error([&] { ltt::data::write_dsrl(not_written, bad); },
                   {"key 'terminals' row 1 holds 3"});
  CHECK(!fs::exists(not_written));

  // A directory that holds anything but .npy files is never replaced.
  const fs::path precious = dir / "precious";
  fs::create_directories(precious);
  std::ofstream(precious / "notes.txt") << "keep me\n";
  check_data_error([&] { ltt::data::write_dsrl(precious, d); },
                   {"precious", "'notes.txt'", "not replacing it"});
  CHECK(fs::exists(precious / "notes.txt"));
  CHECK(no_temporaries(dir));
}

TEST_CASE("to_trajectory_pool: one trajectory per episode, id = episode index") {
  const DsrlPool pool = ltt::data::load_dsrl_pool(stores_of("enum_flags").back());
  std::vector<double> scores(static_cast<std::size_t>(pool.size()));
  for (std::size_t i = 0; i < scores.size(); ++i) scores[i] = 0.1 * static_cast<double>(i);
  const ltt::curation::TrajectoryPool t = ltt::data::to_trajectory_pool(pool, scores);
  REQUIRE(t.size() == pool.size());
  for (std::size_t i = 0; i < scores.size(); ++i) {
    CHECK(t.id[i] == static_cast<std::int64_t>(i));
    CHECK(t.length[i] == pool.episodes[i].length);
    CHECK(t.episodic_return[i] == pool.episodes[i].episodic_return);
    CHECK(t.episodic_cost[i] == pool.episodes[i].episodic_cost);
    CHECK(t.score[i] == scores[i]);
  }
  scores.pop_back();
  check_data_error([&] { ltt::data::to_trajectory_pool(pool, scores); },
                   {"4 scores for the 5 episodes"});
}

TEST_CASE("read_dsrl_float32 and read_dsrl_costs: one key alone, float64 converted, each store") {
  const fs::path dir = scratch("read_one_key");
  const std::int64_t n = 4;
  ltt::data::DsrlDataset d;
  const std::vector<double> obs = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 1e30};
  d.observations = ltt::data::make_array(obs, {n, 2});  // float64: read back as float32
  d.next_observations = d.observations;
  d.actions = ltt::data::make_array(std::vector<float>{1, 2, 3, 4}, {n, 1});
  d.rewards = ltt::data::make_array(std::vector<float>{1, 2, 3, 4});
  d.costs = ltt::data::make_array(std::vector<float>{0, 0.5f, 2, 0});
  d.terminals = ltt::data::make_array(std::vector<std::uint8_t>{0, 1, 0, 1}, true);
  d.timeouts = ltt::data::make_array(std::vector<std::uint8_t>{0, 0, 0, 0}, true);
  std::vector<fs::path> targets = {dir / "pool"};
  if (LTT_TEST_HDF5) targets.push_back(dir / "pool.hdf5");
  for (const fs::path& path : targets) {
    CAPTURE(path);
    ltt::data::write_dsrl(path, d);
    const Array o = ltt::data::read_dsrl_float32(path, "observations");
    CHECK(o.dtype == DType::float32);
    CHECK(o.shape == std::vector<std::int64_t>{n, 2});
    const auto v = o.values<float>();
    for (std::size_t i = 0; i < obs.size(); ++i) CHECK(v[i] == static_cast<float>(obs[i]));
    CHECK(ltt::data::read_dsrl_costs(path) == std::vector<double>{0, 0.5, 2, 0});
    check_data_error([&] { ltt::data::read_dsrl_float32(path, "costs"); },
                     {"'costs' is not one of observations"});
  }
  // The layout is checked as load_dsrl_pool checks it: a missing key is named.
  const fs::path no_costs = dir / "no_costs";
  ltt::data::write_dsrl(no_costs, d);
  fs::remove(no_costs / "costs.npy");
  check_data_error([&] { ltt::data::read_dsrl_costs(no_costs); }, {"key 'costs' is missing"});
  check_data_error([&] { ltt::data::read_dsrl_float32(no_costs, "observations"); },
                   {"key 'costs' is missing"});
}

TEST_CASE("for_each_dsrl_float32_block: the blocks end to end are read_dsrl_float32's array") {
  const fs::path dir = scratch("float_blocks");
  // 2500 rows of 3 values, float32 and float64 (converted as the whole read converts), in
  // blocks of 1 row, of a number of rows that does not divide N, of N and of more than N: the
  // HDF5 reader's pipe pieces then end inside blocks and blocks inside pieces.
  const std::int64_t n = 2500, width = 3;
  std::vector<double> obs(static_cast<std::size_t>(n * width));
  for (std::size_t i = 0; i < obs.size(); ++i)
    obs[i] = std::sin(0.37 * static_cast<double>(i)) * 1e3;
  std::vector<std::uint8_t> ends(static_cast<std::size_t>(n), 0);
  for (std::size_t i = 99; i < ends.size(); i += 100) ends[i] = 1;
  for (const bool wide : {false, true}) {
    ltt::data::DsrlDataset d;
    d.observations =
        wide ? ltt::data::make_array(obs, {n, width})
             : ltt::data::make_array(std::vector<float>(obs.begin(), obs.end()), {n, width});
    d.next_observations = d.observations;
    d.actions =
        ltt::data::make_array(std::vector<float>(static_cast<std::size_t>(n), 1.0f), {n, 1});
    d.rewards = ltt::data::make_array(std::vector<float>(static_cast<std::size_t>(n), 1.0f));
    d.costs = d.rewards;
    d.terminals = ltt::data::make_array(ends, true);
    d.timeouts = ltt::data::make_array(std::vector<std::uint8_t>(ends.size(), 0), true);
    std::vector<fs::path> targets = {dir / (wide ? "pool64" : "pool32")};
    if (LTT_TEST_HDF5) targets.push_back(dir / (wide ? "pool64.hdf5" : "pool32.hdf5"));
    for (const fs::path& path : targets) {
      ltt::data::write_dsrl(path, d);
      const Array whole = ltt::data::read_dsrl_float32(path, "observations");
      const std::span<const float> expected = whole.values<float>();
      for (const std::int64_t block :
           {std::int64_t{1}, std::int64_t{7}, std::int64_t{999}, n, n + 3}) {
        CAPTURE(path);
        CAPTURE(block);
        std::vector<float> joined;
        std::int64_t next_row = 0, calls = 0;
        bool aligned = true;
        ltt::data::for_each_dsrl_float32_block(
            path, "observations", block, [&](std::int64_t first, std::span<const float> v) {
              aligned = aligned && first == next_row &&
                        static_cast<std::int64_t>(v.size()) == std::min(block, n - first) * width;
              next_row = first + static_cast<std::int64_t>(v.size()) / width;
              joined.insert(joined.end(), v.begin(), v.end());
              ++calls;
            });
        CHECK(aligned);
        CHECK(calls == (n + block - 1) / block);
        CHECK(std::equal(joined.begin(), joined.end(), expected.begin(), expected.end()));
      }
      // The reader stops at an exception from `use`, which goes on.
      CHECK_THROWS_AS(
          ltt::data::for_each_dsrl_float32_block(path, "observations", 100,
                                                 [](std::int64_t first, std::span<const float>) {
                                                   if (first == 500)
                                                     throw std::runtime_error("stop");
                                                 }),
          std::runtime_error);
      check_data_error([&] { ltt::data::for_each_dsrl_float32_block(path, "costs", 10, {}); },
                       {"'costs' is not one of observations"});
      check_data_error([&] { ltt::data::for_each_dsrl_float32_block(path, "observations", 0, {}); },
                       {"block_rows 0"});
    }
  }
}
