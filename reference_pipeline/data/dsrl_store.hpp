#pragma once
// The two stores behind dsrl.hpp (internal). A DsrlSource answers the questions the layout
// checks ask of one key; each store also writes a whole dataset and copies a selection of rows.
// What the stores share: the layout checks and the choice of store (dsrl.cpp), the episode rule
// (episode_split.cpp), the world geometry's checks and reader (world_geometry.cpp).

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "array.hpp"
#include "dsrl.hpp"

namespace ltt::data::detail {

enum class ElementKind { floating, integer, enumeration, other };

struct ColumnInfo {
  std::vector<std::int64_t> shape;
  ElementKind kind = ElementKind::other;
  std::string type_text;  // for messages: "float32", "int16", "enum of int8", "string", ...
};

// The column of an array of one of our own element types (.npy files, datasets in memory).
inline ColumnInfo column_info(std::vector<std::int64_t> shape, DType dtype) {
  ColumnInfo info;
  info.shape = std::move(shape);
  info.kind = dtype == DType::float32 || dtype == DType::float64 ? ElementKind::floating
                                                                 : ElementKind::integer;
  info.type_text = dtype_name(dtype);
  return info;
}

// A block of a column of one value per row, as doubles: its first row and its values.
using ColumnBlockUse = std::function<void(std::int64_t first_row, std::span<const double> values)>;

class DsrlSource {
 public:
  virtual ~DsrlSource() = default;
  // The dataset as the user named it, for messages.
  virtual const std::string& name() const = 0;
  virtual bool has(std::string_view key) const = 0;
  virtual ColumnInfo info(std::string_view key) const = 0;
  // Every element as a double: floats and integers by value, enums by their integer value.
  virtual std::vector<double> read_double(std::string_view key) const = 0;
  // A float key in full, converted to float32 or float64.
  virtual Array read_float(std::string_view key, DType dtype) const = 0;
  // A column of one value per row ((N,) or (N, 1)) as read_double converts it, a block of
  // block_rows rows at a time (the last block shorter). This default reads the key whole; the
  // file stores override it to hold one block at a time.
  virtual void for_each_double_block(std::string_view key, std::int64_t block_rows,
                                     const ColumnBlockUse& use) const {
    const std::vector<double> x = read_double(key);
    const auto rows = static_cast<std::int64_t>(x.size());
    for (std::int64_t first = 0; first < rows; first += block_rows)
      use(first, std::span<const double>(x).subspan(
                     static_cast<std::size_t>(first),
                     static_cast<std::size_t>(std::min(block_rows, rows - first))));
  }
  // A float key of rank 2 as float32, a block of block_rows rows at a time (the last block
  // shorter), with the conversion of read_float; `use` gets each block's first row and values.
  // This default reads the key whole; the file stores override it to hold one block at a time.
  virtual void for_each_float32_block(std::string_view key, std::int64_t block_rows,
                                      const RowBlockUse& use) const {
    const Array a = read_float(key, DType::float32);
    const std::span<const float> x = a.values<float>();
    const std::int64_t rows = a.shape.at(0), width = a.shape.at(1);
    for (std::int64_t first = 0; first < rows; first += block_rows) {
      const std::int64_t n = std::min(block_rows, rows - first);
      use(first,
          x.subspan(static_cast<std::size_t>(first * width), static_cast<std::size_t>(n * width)));
    }
  }
};

// A run of rows [start, start + count) of the input, written after the previous run.
struct RowRange {
  std::int64_t start = 0;
  std::int64_t count = 0;
};

std::unique_ptr<DsrlSource> open_npy_directory(const std::filesystem::path& path);
void write_npy_directory(const std::filesystem::path& path, const DsrlDataset& dataset);
void write_npy_directory_selection(const std::filesystem::path& in,
                                   const std::filesystem::path& out, std::int64_t rows,
                                   const std::vector<RowRange>& ranges);

// Defined in dsrl_hdf5.cpp when built with HDF5, and as refusals otherwise.
std::unique_ptr<DsrlSource> open_hdf5(const std::filesystem::path& path);
void write_hdf5(const std::filesystem::path& path, const DsrlDataset& dataset);
void write_hdf5_selection(const std::filesystem::path& in, const std::filesystem::path& out,
                          std::int64_t rows, const std::vector<RowRange>& ranges);

// Rows per block when load_dsrl_pool splits a file into episodes: 8 MiB of doubles per column.
inline constexpr std::int64_t pool_block_rows = std::int64_t{1} << 20;

// load_dsrl_pool with blocks of block_rows rows (the tests' small blocks cross episodes).
DsrlPool load_dsrl_pool_in_blocks(const std::filesystem::path& path, std::int64_t block_rows);

// split_episodes on a source's four per-row columns, read block_rows rows at a time
// (episode_split.cpp): the same episodes and refusals as reading the columns whole.
EpisodeSplit split_episodes_in_blocks(const DsrlSource& s, std::int64_t rows,
                                      std::int64_t block_rows);

// The world geometry keys (world_geometry.cpp): one key's element kind and shape in a file of
// `rows` rows; the values (finite, a field of positive extent, positive radii, hazards that
// stay put within each episode); and the six keys of a source when it holds world/arena.
void check_world_column(const std::string& name, std::string_view key, const ColumnInfo& info,
                        std::int64_t rows);
void check_world_values(const std::string& name, const WorldGeometry& w,
                        std::span<const Episode> episodes);
std::optional<WorldGeometry> read_world(const DsrlSource& s, const DsrlPool& pool);

// Throws DataError naming `function` unless every index lies in [0, pool.size()).
void check_indices(const DsrlPool& pool, std::span<const std::int64_t> indices,
                   std::string_view function);

// Bytes per copy between files: large enough to stream fast, small enough to bound memory.
inline constexpr std::int64_t copy_block_bytes = std::int64_t{16} << 20;

}  // namespace ltt::data::detail
