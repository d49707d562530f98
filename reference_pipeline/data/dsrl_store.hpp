#pragma once
// The two stores behind dsrl.hpp (internal). A DsrlSource answers the questions the layout
// checks ask of one key; each store also writes a whole dataset and copies a selection of rows.
// dsrl.cpp holds everything the stores share: the layout checks, the episode rule, the
// choice of store.

#include <cstdint>
#include <filesystem>
#include <memory>
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

// Bytes per copy between files: large enough to stream fast, small enough to bound memory.
inline constexpr std::int64_t copy_block_bytes = std::int64_t{16} << 20;

}  // namespace ltt::data::detail
