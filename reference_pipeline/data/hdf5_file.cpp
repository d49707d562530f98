// Handles, errors, and the checked opening and reading of datasets of hdf5_file.hpp.

#include "hdf5_file.hpp"

#include <hdf5.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "error.hpp"

namespace ltt::data::detail::hdf5 {

namespace {

std::vector<hsize_t> dimensions(hid_t space, std::string_view file, std::string_view what) {
  const int rank = H5Sget_simple_extent_ndims(space);
  if (rank < 0) fail_hdf5(file, what);
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  if (rank > 0 && H5Sget_simple_extent_dims(space, dims.data(), nullptr) != rank)
    fail_hdf5(file, what);
  return dims;
}

}  // namespace

std::string printable(std::string_view name) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string text;
  for (const char c : name) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f) {
      text.push_back(c);
    } else {
      text.append("\\x");
      text.push_back(hex[u >> 4]);
      text.push_back(hex[u & 15]);
    }
  }
  return text;
}

std::string key_text(std::string_view key) { return cat("key ", in_quotes(printable(key))); }

std::string hdf5_error() {
  std::string text;
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_UPWARD,
      [](unsigned n, const H5E_error2_t* e, void* out) -> herr_t {
        if (n == 0 && e->desc != nullptr) *static_cast<std::string*>(out) = e->desc;
        return 0;
      },
      &text);
  H5Eclear2(H5E_DEFAULT);
  return printable(text);
}

[[noreturn]] void fail_hdf5(std::string_view file, std::string_view what) {
  const std::string why = hdf5_error();
  fail(file, why.empty() ? std::string(what) : cat(what, " (HDF5: ", why, ")"));
}

Handle check(hid_t id, Handle::Closer close, std::string_view file, std::string_view what) {
  if (id < 0) fail_hdf5(file, what);
  return Handle(id, close);
}

void check(herr_t status, std::string_view file, std::string_view what) {
  if (status < 0) fail_hdf5(file, what);
}

Handle chunk_cache_access(std::string_view file) {
  Handle list = check(H5Pcreate(H5P_FILE_ACCESS), H5Pclose, file, "cannot create a property list");
  check(H5Pset_cache(list.get(), 0, chunk_cache_slots, chunk_cache_bytes, 1.0), file,
        "cannot set the chunk cache");
  return list;
}

Input open_input(const std::filesystem::path& path, std::string_view name) {
  const Handle access = chunk_cache_access(name);
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, access.get());
  if (file < 0) {
    std::ifstream in(path, std::ios::binary);
    if (!in) fail(name, "cannot read it");
    char signature[8] = {};
    in.read(signature, 8);  // a file shorter than the signature is simply not HDF5
    if (in.gcount() < 8 ||
        std::string_view(signature, 8) != std::string_view("\x89HDF\r\n\x1a\n", 8))
      fail(name, "not an HDF5 file (no HDF5 signature at its start)");
    fail_hdf5(name, "cannot open it as HDF5");
  }
  Input in{Handle(file, H5Fclose)};
  check(H5Fget_filesize(file, &in.size), name, "cannot read its size");
  return in;
}

Dataset open_dataset(const Input& in, const std::string& key, std::string_view file) {
  const auto what = [&](std::string_view verb) { return cat(verb, " ", key_text(key)); };
  Handle object =
      check(H5Oopen(in.file.get(), key.c_str(), H5P_DEFAULT), H5Oclose, file, what("cannot open"));
  const H5I_type_t kind = H5Iget_type(object.get());
  if (kind != H5I_DATASET)
    fail(file, cat(key_text(key), kind == H5I_GROUP ? " is a group" : " is a named datatype",
                   ", not a dataset"));
  Dataset d;
  d.d = std::move(object);
  d.type = check(H5Dget_type(d.d.get()), H5Tclose, file, what("cannot read the type of"));
  if (const std::string why = type_problem(d.type.get()); !why.empty())
    fail(file,
         cat(key_text(key), " has a malformed element type (", why, "); the file is corrupted"));
  d.space = check(H5Dget_space(d.d.get()), H5Sclose, file, what("cannot read the shape of"));
  d.dims = dimensions(d.space.get(), file, what("cannot read the shape of"));
  check_storage(d.d.get(), d.type.get(), d.dims, in.size, file, key);
  return d;
}

ColumnInfo column_info(const Dataset& d) {
  ColumnInfo info;
  for (const hsize_t n : d.dims) info.shape.push_back(static_cast<std::int64_t>(n));
  info.type_text = type_text(d.type.get());
  switch (H5Tget_class(d.type.get())) {
    case H5T_FLOAT:
      info.kind = ElementKind::floating;
      break;
    case H5T_INTEGER:
      info.kind = ElementKind::integer;
      break;
    case H5T_ENUM:
      info.kind = ElementKind::enumeration;
      break;  // over an integer: type_problem
    default:
      info.kind = ElementKind::other;
  }
  return info;
}

void read_rows(const Dataset& d, hid_t memory, hsize_t start, hsize_t count, void* buffer,
               std::string_view file, std::string_view key) {
  std::vector<hsize_t> at(d.dims.size(), 0), shape = d.dims;
  at[0] = start;
  shape[0] = count;
  const Handle memory_space =
      check(H5Screate_simple(static_cast<int>(shape.size()), shape.data(), nullptr), H5Sclose, file,
            "cannot create a dataspace");
  check(
      H5Sselect_hyperslab(d.space.get(), H5S_SELECT_SET, at.data(), nullptr, shape.data(), nullptr),
      file, cat("cannot select rows of ", key_text(key)));
  check(H5Dread(d.d.get(), memory, memory_space.get(), d.space.get(), H5P_DEFAULT, buffer), file,
        cat("cannot read ", key_text(key)));
}

void for_each_block(const Dataset& d, hid_t memory, std::size_t element_bytes,
                    const std::function<void(const unsigned char*, std::size_t)>& use,
                    std::string_view file, std::string_view key) {
  std::vector<unsigned char> buffer;
  if (d.dims.empty()) {  // a scalar
    buffer.resize(element_bytes);
    check(H5Dread(d.d.get(), memory, H5S_ALL, H5S_ALL, H5P_DEFAULT, buffer.data()), file,
          cat("cannot read ", key_text(key)));
    use(buffer.data(), 1);
    return;
  }
  hsize_t row_elements = 1;
  for (std::size_t i = 1; i < d.dims.size(); ++i) row_elements *= d.dims[i];
  if (row_elements == 0 || d.dims[0] == 0) return;
  const hsize_t row_bytes = row_elements * element_bytes;
  const hsize_t block_rows =
      std::max<hsize_t>(1, static_cast<hsize_t>(copy_block_bytes) / row_bytes);
  for (hsize_t start = 0; start < d.dims[0]; start += block_rows) {
    const hsize_t rows = std::min(block_rows, d.dims[0] - start);
    buffer.resize(static_cast<std::size_t>(rows * row_bytes));
    read_rows(d, memory, start, rows, buffer.data(), file, key);
    use(buffer.data(), static_cast<std::size_t>(rows * row_elements));
  }
}

}  // namespace ltt::data::detail::hdf5
