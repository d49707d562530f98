#pragma once
// The HDF5 store's access to a file it does not trust (internal to ltt_data; the C API of HDF5
// 1.10 and later). dsrl_hdf5.cpp reads through it and dsrl_hdf5_write.cpp copies a selection
// through it, both inside run_in_child (child_process.hpp), so that a crash or a stall of
// libhdf5 on a corrupted file is a DataError naming the file (docs/dsrl.md, "Corrupted files").
// Every object is checked before its data is trusted (hdf5_validation.cpp): its element type
// is well formed (type_problem), its filters can be decoded, and the bytes it claims are in
// the file (check_storage); open_dataset runs both.

#include <hdf5.h>

#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "dsrl_store.hpp"

namespace ltt::data::detail::hdf5 {

// The worker run_in_child names when libhdf5 crashes or stalls.
constexpr std::string_view libhdf5 = "corrupted HDF5: libhdf5";

// Owns one HDF5 identifier and closes it with the matching H5?close.
class Handle {
 public:
  using Closer = herr_t (*)(hid_t);
  Handle() = default;
  Handle(hid_t id, Closer closer) : id_(id), close_(closer) {}
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  Handle(Handle&& other) noexcept
      : id_(std::exchange(other.id_, H5I_INVALID_HID)), close_(other.close_) {}
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) {
      reset();
      id_ = std::exchange(other.id_, H5I_INVALID_HID);
      close_ = other.close_;
    }
    return *this;
  }
  ~Handle() { reset(); }
  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  // Closes now and reports whether the close succeeded (a file's close flushes it).
  bool close() {
    const bool ok = !valid() || close_(id_) >= 0;
    id_ = H5I_INVALID_HID;
    return ok;
  }

 private:
  void reset() {
    if (valid()) close_(id_);
    id_ = H5I_INVALID_HID;
  }
  hid_t id_ = H5I_INVALID_HID;
  Closer close_ = nullptr;
};

// HDF5 prints its error stack to stderr by default; the data layer reports through
// exceptions instead. Restores the previous handler when it goes out of scope.
class QuietErrors {
 public:
  QuietErrors() {
    H5Eget_auto2(H5E_DEFAULT, &function_, &data_);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  QuietErrors(const QuietErrors&) = delete;
  QuietErrors& operator=(const QuietErrors&) = delete;
  ~QuietErrors() { H5Eset_auto2(H5E_DEFAULT, function_, data_); }

 private:
  H5E_auto2_t function_ = nullptr;
  void* data_ = nullptr;
};

// A name read from the file, fit for a one-line message: bytes outside printable ASCII as
// \xNN (a flipped bit can put a newline into a link name).
std::string printable(std::string_view name);

// "key 'name'", printable.
std::string key_text(std::string_view key);

// The innermost message on HDF5's error stack ("unable to open file", ...), or "".
std::string hdf5_error();

// A DataError for `file` saying `what`, with HDF5's own reason where it gave one.
[[noreturn]] void fail_hdf5(std::string_view file, std::string_view what);

// The identifier as a Handle, or fail_hdf5 where it is invalid.
Handle check(hid_t id, Handle::Closer close, std::string_view file, std::string_view what);
// fail_hdf5 where the status is an error.
void check(herr_t status, std::string_view file, std::string_view what);

// "float32", "int16", "enum of int8", "string", ...: a datatype for messages.
std::string type_text(hid_t type);

// Why a datatype's description cannot be right, or "" when it can.
std::string type_problem(hid_t type, int depth = 0);

// Refuses a dataset whose storage, dimensions or filters claim more than the file can hold.
void check_storage(hid_t d, hid_t type, const std::vector<hsize_t>& dims, hsize_t file_size,
                   std::string_view file, std::string_view key);

// An input file opened inside a child process, with its size in bytes.
struct Input {
  Handle file;
  hsize_t size = 0;
};

// The chunk cache of every dataset of a file opened or created with this access list. HDF5's
// default (1 MiB) is smaller than one chunk of a large compressed key (h5py gives a 1M x 72
// float32 key chunks of several MiB), and a chunk that does not fit is decompressed again for
// every row range read from it, and read back, decompressed and recompressed for every range
// written into it: a selection of short episodes then costs minutes instead of seconds. 64 MiB
// holds a row stripe of such chunks; w0 = 1 evicts a chunk once it has been read or written
// whole. The memory is taken only as chunks are cached.
inline constexpr std::size_t chunk_cache_bytes = std::size_t{64} << 20;
inline constexpr std::size_t chunk_cache_slots = 12421;  // a prime, ~100 x the chunks it holds
Handle chunk_cache_access(std::string_view file);

Input open_input(const std::filesystem::path& path, std::string_view name);

// One dataset of an input, opened and checked (type_problem, check_storage).
struct Dataset {
  Handle d, type, space;
  std::vector<hsize_t> dims;
};

Dataset open_dataset(const Input& in, const std::string& key, std::string_view file);

ColumnInfo column_info(const Dataset& d);

// Reads rows [start, start + count) of d, converted to `memory`, into buffer.
void read_rows(const Dataset& d, hid_t memory, hsize_t start, hsize_t count, void* buffer,
               std::string_view file, std::string_view key);

// Reads all of d converted to `memory` (elements of element_bytes), whole rows at a time
// within copy_block_bytes, and hands each block to `use` with its element count.
void for_each_block(const Dataset& d, hid_t memory, std::size_t element_bytes,
                    const std::function<void(const unsigned char*, std::size_t)>& use,
                    std::string_view file, std::string_view key);

}  // namespace ltt::data::detail::hdf5
