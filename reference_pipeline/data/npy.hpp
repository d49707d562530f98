#pragma once
// NumPy's .npy format (numpy.lib.format): the magic "\x93NUMPY", a major and minor version
// byte, the header length (2 bytes little-endian in version 1.0, 4 bytes in 2.0 and 3.0), then
// a Python dict literal such as
//   {'descr': '<f8', 'fortran_order': False, 'shape': (1000, 72), }
// padded with spaces and ended by '\n' so the data starts at a multiple of 64 bytes; then the
// raw elements.
//
// Read: versions 1.0, 2.0 and 3.0; element types float32 '<f4', float64 '<f8', int64 '<i8',
// uint8 '|u1' and bool '|b1', little-endian; any rank; Fortran order only where it is the same
// layout as C order (rank <= 1, or at most one dimension longer than 1). Written: version 1.0
// (2.0 when the header would not fit), C order, what np.save writes for the same array.

#include <cstdint>
#include <filesystem>
#include <istream>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "array.hpp"

namespace ltt::data {

struct NpyHeader {
  DType dtype = DType::float64;
  std::vector<std::int64_t> shape;
  std::int64_t data_offset = 0;  // bytes from the start of the file to the first element
};

// Reads the header from the start of `in` and leaves `in` at the first element. name is the
// file as the user gave it, for messages.
NpyHeader read_npy_header(std::istream& in, std::string_view name);
NpyHeader read_npy_header(const std::filesystem::path& path);

Array read_npy(const std::filesystem::path& path);
// The same from the bytes of a whole .npy file.
Array parse_npy(std::string_view bytes, std::string_view name);

// A one-dimensional float64 or float32 array (scores, per-state values) as doubles, exactly.
// Throws DataError naming the file on another element type or rank.
std::vector<double> read_npy_vector(const std::filesystem::path& path);

// The header np.save would write for this dtype and shape (preamble included).
std::string npy_header(DType dtype, const std::vector<std::int64_t>& shape);
void write_npy(std::ostream& out, const Array& a);
// Atomic: the file appears whole or not at all.
void write_npy(const std::filesystem::path& path, const Array& a);

}  // namespace ltt::data
