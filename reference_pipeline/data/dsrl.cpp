#include "dsrl.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <exception>
#include <iterator>
#include <memory>
#include <string>
#include <system_error>

#include <ltt/detail/check.hpp>
#include <ltt/detail/compensated_sum.hpp>

#include "dsrl_store.hpp"
#include "error.hpp"

namespace ltt::data {

namespace fs = std::filesystem;
using detail::cat;
using detail::column_info;
using detail::ColumnInfo;
using detail::DsrlSource;
using detail::ElementKind;
using detail::in_quotes;
using detail::check_world_column;
using detail::check_world_values;
using detail::read_world;

bool hdf5_available() { return LTT_DATA_WITH_HDF5 != 0; }

DsrlStore store_for(const fs::path& path) {
  std::string ext = path.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext == ".hdf5" || ext == ".h5" ? DsrlStore::hdf5 : DsrlStore::npy_directory;
}

fs::path default_dsrl_path(const fs::path& directory, std::string_view stem) {
  return hdf5_available() ? directory / cat(stem, ".hdf5") : directory / std::string(stem);
}

namespace {

template <class Dataset>
auto& column(Dataset& d, std::string_view key) {
  if (key == "observations") return d.observations;
  if (key == "next_observations") return d.next_observations;
  if (key == "actions") return d.actions;
  if (key == "rewards") return d.rewards;
  if (key == "costs") return d.costs;
  if (key == "terminals") return d.terminals;
  if (key == "timeouts") return d.timeouts;
  throw DataError(cat("DsrlDataset: ", in_quotes(key), " is not a DSRL key"));
}

}  // namespace

const Array& DsrlDataset::operator[](std::string_view key) const { return column(*this, key); }
Array& DsrlDataset::operator[](std::string_view key) { return column(*this, key); }

namespace {

bool is_per_row_key(std::string_view key) {
  return key == "rewards" || key == "costs" || key == "terminals" || key == "timeouts";
}
bool is_flag_key(std::string_view key) { return key == "terminals" || key == "timeouts"; }

struct Layout {
  std::int64_t rows = 0, observation_dim = 0, action_dim = 0;
  std::vector<ColumnInfo> info;  // in the order of dsrl_keys
};

// Presence, rank, element kind and row count of the seven keys: what DSRL's get_dataset
// asserts, with messages that name the file and the key.
Layout check_layout(const DsrlSource& s) {
  const std::string& name = s.name();
  std::vector<std::string> missing;
  for (const std::string_view key : dsrl_keys)
    if (!s.has(key)) missing.push_back(in_quotes(key));
  if (!missing.empty()) {
    std::string list;
    for (std::size_t i = 0; i < missing.size(); ++i) list += cat(i > 0 ? ", " : "", missing[i]);
    detail::fail(
        name,
        cat(missing.size() == 1 ? "key " : "keys ", list, missing.size() == 1 ? " is" : " are",
            " missing; a DSRL dataset holds observations, next_observations, actions, "
            "rewards, costs, terminals and timeouts"));
  }
  Layout layout;
  for (const std::string_view key : dsrl_keys) {
    ColumnInfo info = s.info(key);
    const auto refuse = [&](std::string_view what, std::string_view expected) {
      detail::fail(name, cat("key ", in_quotes(key), " ", what, "; expected ", expected));
    };
    if (is_per_row_key(key)) {
      const bool column_vector = info.shape.size() == 2 && info.shape[1] == 1;
      if (info.shape.size() != 1 && !column_vector)
        refuse(cat("has shape ", shape_text(info.shape)),
               "(N,) or (N, 1), one value per transition");
    } else if (info.shape.size() != 2) {
      refuse(
          cat("has shape ", shape_text(info.shape), ", rank ", std::to_string(info.shape.size())),
          key == "actions" ? "rank 2, (N, act_dim)" : "rank 2, (N, obs_dim)");
    }
    const bool numeric = info.kind == ElementKind::floating || info.kind == ElementKind::integer;
    if (is_flag_key(key)) {
      if (!numeric && info.kind != ElementKind::enumeration)
        refuse(cat("holds ", info.type_text),
               "flags: bool, an integer type or a float type holding 0 and 1");
    } else if (is_per_row_key(key)) {
      if (!numeric) refuse(cat("holds ", info.type_text), "float32 or float64");
    } else if (info.kind != ElementKind::floating) {
      refuse(cat("holds ", info.type_text), "float32 or float64");
    }
    layout.info.push_back(std::move(info));
  }
  const std::vector<std::int64_t>& obs = layout.info[0].shape;
  layout.rows = obs[0];
  layout.observation_dim = obs[1];
  layout.action_dim = layout.info[2].shape[1];
  for (std::size_t k = 1; k < std::size(dsrl_keys); ++k)
    if (layout.info[k].shape[0] != layout.rows)
      detail::fail(name,
                   cat("key ", in_quotes(dsrl_keys[k]), " has ",
                       std::to_string(layout.info[k].shape[0]), " rows but 'observations' has ",
                       std::to_string(layout.rows), "; every key holds one row per transition"));
  if (layout.info[1].shape != obs)
    detail::fail(name, cat("key 'next_observations' has shape ", shape_text(layout.info[1].shape),
                           " but 'observations' has ", shape_text(obs)));
  return layout;
}

std::vector<double> read_finite(const DsrlSource& s, std::string_view key) {
  std::vector<double> x = s.read_double(key);
  for (std::size_t i = 0; i < x.size(); ++i)
    if (!std::isfinite(x[i]))
      detail::fail(s.name(), cat("key ", in_quotes(key), " row ", std::to_string(i), " is ",
                                 std::isnan(x[i]) ? "nan" : (x[i] > 0 ? "inf" : "-inf"),
                                 ", not a finite number"));
  return x;
}

std::vector<std::uint8_t> read_flags(const DsrlSource& s, std::string_view key) {
  const std::vector<double> x = s.read_double(key);
  std::vector<std::uint8_t> flags(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (x[i] != 0.0 && x[i] != 1.0)
      detail::fail(s.name(),
                   cat("key ", in_quotes(key), " row ", std::to_string(i), " holds ",
                       ltt::detail::show(x[i]), "; a flag must be 0 or 1 (false or true)"));
    flags[i] = x[i] == 1.0 ? 1 : 0;
  }
  return flags;
}

std::unique_ptr<DsrlSource> open_source(const fs::path& path) {
  const std::string name = path.string();
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  if (!fs::exists(status)) detail::fail(name, "no such file or directory");
  if (fs::is_directory(status)) return detail::open_npy_directory(path);
  if (path.extension() == ".npy")
    detail::fail(name,
                 "is a single .npy file; a DSRL dataset stored as .npy is a directory holding "
                 "one file per key (observations.npy, next_observations.npy, ...)");
  if (!hdf5_available())
    detail::fail(name,
                 "this build of ltt reads no HDF5 (it was configured with LTT_WITH_HDF5=OFF or "
                 "without libhdf5-dev); rebuild with HDF5, or convert the file to a directory of "
                 ".npy files as docs/dsrl.md shows");
  return detail::open_hdf5(path);
}

// The rows [start, start + length) of each episode in the order given, adjacent runs merged.
std::vector<detail::RowRange> row_ranges(const DsrlPool& pool,
                                         std::span<const std::int64_t> indices) {
  std::vector<detail::RowRange> ranges;
  for (const std::int64_t i : indices) {
    const Episode& e = pool.episodes[static_cast<std::size_t>(i)];
    if (!ranges.empty() && ranges.back().start + ranges.back().count == e.start)
      ranges.back().count += e.length;
    else
      ranges.push_back({e.start, e.length});
  }
  return ranges;
}

// A DsrlDataset seen through the DsrlSource questions, so write_dsrl checks what it writes
// with the same code that checks what is read.
class MemorySource final : public DsrlSource {
 public:
  MemorySource(const DsrlDataset& d, std::string name) : d_(d), name_(std::move(name)) {}
  const std::string& name() const override { return name_; }
  bool has(std::string_view) const override { return true; }
  ColumnInfo info(std::string_view key) const override {
    const Array& a = d_[key];
    return column_info(a.shape, a.dtype);
  }
  std::vector<double> read_double(std::string_view key) const override {
    return d_[key].to_double();
  }
  Array read_float(std::string_view key, DType) const override { return d_[key]; }

 private:
  const DsrlDataset& d_;
  std::string name_;
};

}  // namespace

namespace detail {

void check_indices(const DsrlPool& pool, std::span<const std::int64_t> indices,
                   std::string_view function) {
  for (std::size_t i = 0; i < indices.size(); ++i)
    if (indices[i] < 0 || indices[i] >= pool.size())
      throw DataError(cat(function, ": episode index ", std::to_string(indices[i]), " (position ",
                          std::to_string(i), " of the selection) is outside [0, ",
                          std::to_string(pool.size()), "): ", in_quotes(pool.file), " holds ",
                          std::to_string(pool.size()), " episodes"));
}

DsrlPool load_dsrl_pool_in_blocks(const fs::path& path, std::int64_t block_rows) {
  const std::unique_ptr<DsrlSource> s = open_source(path);
  const Layout layout = check_layout(*s);
  EpisodeSplit split = split_episodes_in_blocks(*s, layout.rows, block_rows);
  if (split.episodes.empty())
    detail::fail(s->name(),
                 cat("none of its ", std::to_string(layout.rows),
                     " rows has terminals or timeouts set, so it holds no complete episode"));
  DsrlPool pool;
  pool.file = s->name();
  pool.store = fs::is_directory(path) ? DsrlStore::npy_directory : DsrlStore::hdf5;
  pool.transitions = layout.rows;
  pool.observation_dim = layout.observation_dim;
  pool.action_dim = layout.action_dim;
  pool.episodes = std::move(split.episodes);
  pool.dropped_tail = split.dropped_tail;
  fs::path shown = fs::path(pool.file).lexically_normal();
  if (!shown.has_filename()) shown = shown.parent_path();  // "d/": a .npy directory
  pool.parts.push_back({pool.file, shown.filename().string(), pool.store, 0, pool.transitions, 0,
                        pool.size(), pool.dropped_tail});
  return pool;
}

}  // namespace detail

DsrlPool load_dsrl_pool(const fs::path& path) {
  return detail::load_dsrl_pool_in_blocks(path, detail::pool_block_rows);
}

Array read_dsrl_float32(const fs::path& path, std::string_view key) {
  const std::unique_ptr<DsrlSource> s = open_source(path);
  const Layout layout = check_layout(*s);
  const auto k = static_cast<std::size_t>(
      std::find(std::begin(dsrl_keys), std::end(dsrl_keys), key) - std::begin(dsrl_keys));
  if (k == std::size(dsrl_keys) || is_per_row_key(key))
    throw DataError(cat("read_dsrl_float32: ", in_quotes(key),
                        " is not one of observations, next_observations, actions"));
  return s->read_float(key, DType::float32);
}

void for_each_dsrl_float32_block(const fs::path& path, std::string_view key,
                                 std::int64_t block_rows, const RowBlockUse& use) {
  if (block_rows < 1)
    throw DataError(cat("for_each_dsrl_float32_block: block_rows ", std::to_string(block_rows),
                        " must be at least 1"));
  const std::unique_ptr<DsrlSource> s = open_source(path);
  check_layout(*s);
  if (key != "observations" && key != "next_observations" && key != "actions")
    throw DataError(cat("for_each_dsrl_float32_block: ", in_quotes(key),
                        " is not one of observations, next_observations, actions"));
  s->for_each_float32_block(key, block_rows, use);
}

std::vector<double> read_dsrl_costs(const fs::path& path) {
  const std::unique_ptr<DsrlSource> s = open_source(path);
  check_layout(*s);
  return read_finite(*s, "costs");
}

std::vector<double> read_dsrl_rewards(const fs::path& path) {
  const std::unique_ptr<DsrlSource> s = open_source(path);
  check_layout(*s);
  return read_finite(*s, "rewards");
}

std::optional<WorldGeometry> read_world_geometry(const fs::path& path, const DsrlPool& pool) {
  const std::unique_ptr<DsrlSource> s = open_source(path);
  return read_world(*s, pool);
}

curation::TrajectoryPool to_trajectory_pool(const DsrlPool& pool, std::span<const double> scores) {
  if (static_cast<std::int64_t>(scores.size()) != pool.size())
    throw DataError(cat("to_trajectory_pool: ", std::to_string(scores.size()), " scores for the ",
                        std::to_string(pool.size()), " episodes of ", in_quotes(pool.file),
                        "; one score per episode, in episode order"));
  curation::TrajectoryPool t = episode_pool(pool);
  t.score.assign(scores.begin(), scores.end());
  curation::validate_pool(t);
  return t;
}

curation::TrajectoryPool episode_pool(const DsrlPool& pool) {
  curation::TrajectoryPool t;
  for (const Episode& e : pool.episodes) {
    t.id.push_back(e.index);
    t.length.push_back(e.length);
    t.episodic_return.push_back(e.episodic_return);
    t.episodic_cost.push_back(e.episodic_cost);
  }
  return t;
}

DsrlDataset read_dsrl(const fs::path& path) {
  const std::unique_ptr<DsrlSource> s = open_source(path);
  const Layout layout = check_layout(*s);
  DsrlDataset d;
  for (std::size_t k = 0; k < std::size(dsrl_keys); ++k) {
    const std::string_view key = dsrl_keys[k];
    const ColumnInfo& info = layout.info[k];
    Array& a = d[key];
    // Per-row keys come out as (N,): (N, 1) is squeezed, as DSRL's get_dataset does.
    if (is_flag_key(key)) {
      a = make_array(read_flags(*s, key), true);
    } else if (is_per_row_key(key)) {
      const std::vector<double> x = read_finite(*s, key);
      if (info.type_text == "float32")
        a = make_array(std::vector<float>(x.begin(), x.end()));  // exact: the values were float32
      else
        a = make_array(x);
    } else {
      a = s->read_float(key, info.type_text == "float64" ? DType::float64 : DType::float32);
    }
  }
  if (s->has("world/arena")) {
    DsrlPool pool;
    pool.transitions = layout.rows;
    pool.episodes = split_episodes(d.rewards.to_double(), d.costs.to_double(),
                                   read_flags(*s, "terminals"), read_flags(*s, "timeouts"))
                        .episodes;
    d.world = read_world(*s, pool);
  }
  return d;
}

void write_dsrl(const fs::path& path, const DsrlDataset& dataset) {
  const MemorySource source(dataset, cat("cannot write ", in_quotes(path.string())));
  check_layout(source);
  const DsrlDataset* out = &dataset;
  DsrlDataset converted;
  for (const std::string_view key : {std::string_view("terminals"), std::string_view("timeouts")}) {
    const std::vector<std::uint8_t> flags = read_flags(source, key);
    if (dataset[key].dtype != DType::boolean) {
      if (out == &dataset) {
        converted = dataset;
        out = &converted;
      }
      converted[key] = make_array(flags, dataset[key].shape, true);
    }
  }
  if (dataset.world) {
    const std::int64_t rows = dataset.observations.shape[0];
    for (const std::string_view key : world_keys) {
      const Array& a = (*dataset.world)[key];
      check_world_column(source.name(), key, column_info(a.shape, a.dtype), rows);
      if (a.dtype != DType::float32)
        detail::fail(source.name(), cat("world geometry: key ", in_quotes(key),
                                        " is written as float32; it holds ", dtype_name(a.dtype)));
    }
    check_world_values(
        source.name(), *dataset.world,
        split_episodes(read_finite(source, "rewards"), read_finite(source, "costs"),
                       read_flags(source, "terminals"), read_flags(source, "timeouts"))
            .episodes);
  }
  if (store_for(path) == DsrlStore::hdf5) {
    if (!hdf5_available())
      detail::fail(source.name(),
                   "this build of ltt writes no HDF5 (LTT_WITH_HDF5 is OFF); name a directory "
                   "instead of a .hdf5 file to write .npy files");
    detail::write_hdf5(path, *out);
  } else {
    detail::write_npy_directory(path, *out);
  }
}

void write_dsrl_selection(const fs::path& in, const fs::path& out,
                          std::span<const std::int64_t> episode_indices) {
  const DsrlPool pool = load_dsrl_pool(in);
  if (episode_indices.empty())
    detail::fail(out.string(),
                 cat("the selection from ", in_quotes(pool.file), " is empty; nothing to write"));
  detail::check_indices(pool, episode_indices, "write_dsrl_selection");
  if (pool.store == DsrlStore::hdf5 && store_for(out) != DsrlStore::hdf5)
    detail::fail(out.string(), cat("the input ", in_quotes(pool.file),
                                   " is an HDF5 file, so the selection is "
                                   "written as HDF5: name the output .hdf5 or .h5"));
  if (pool.store == DsrlStore::npy_directory && store_for(out) == DsrlStore::hdf5)
    detail::fail(out.string(),
                 cat("the input ", in_quotes(pool.file),
                     " is a directory of .npy files, so the "
                     "selection is written as one too: name the output without .hdf5 or .h5"));
  const std::vector<detail::RowRange> ranges = row_ranges(pool, episode_indices);
  if (pool.store == DsrlStore::hdf5)
    detail::write_hdf5_selection(in, out, pool.transitions, ranges);
  else
    detail::write_npy_directory_selection(in, out, pool.transitions, ranges);
}

Array selection_indices(const DsrlPool& pool, std::span<const std::int64_t> episode_indices) {
  detail::check_indices(pool, episode_indices, "selection_indices");
  return make_array(std::vector<std::int64_t>(episode_indices.begin(), episode_indices.end()));
}

Array selection_episode_mask(const DsrlPool& pool, std::span<const std::int64_t> episode_indices) {
  detail::check_indices(pool, episode_indices, "selection_episode_mask");
  std::vector<std::uint8_t> mask(static_cast<std::size_t>(pool.size()), 0);
  for (const std::int64_t i : episode_indices) mask[static_cast<std::size_t>(i)] = 1;
  return make_array(mask, true);
}

Array selection_transition_mask(const DsrlPool& pool,
                                std::span<const std::int64_t> episode_indices) {
  detail::check_indices(pool, episode_indices, "selection_transition_mask");
  std::vector<std::uint8_t> mask(static_cast<std::size_t>(pool.transitions), 0);
  for (const std::int64_t i : episode_indices) {
    const Episode& e = pool.episodes[static_cast<std::size_t>(i)];
    std::fill_n(mask.begin() + e.start, e.length, std::uint8_t{1});
  }
  return make_array(mask, true);
}

}  // namespace ltt::data
