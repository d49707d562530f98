#pragma once
// NumPy's .npy format (numpy.lib.format, versions 1.0 to 3.0), for one-dimensional arrays
// only: what `numpy.save("scores.npy", x)` writes for a float64 vector x, and the masks and
// counts the program writes back.
//
// Layout: the magic "\x93NUMPY", a major and a minor version byte, the header length (2 bytes
// little-endian in version 1, 4 bytes in versions 2 and 3), then a Python dict literal such as
//   {'descr': '<f8', 'fortran_order': False, 'shape': (1000,), }
// padded with spaces and ended by '\n' so the data starts at a multiple of 64 bytes; then the
// raw elements.

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "bad_input.hpp"
#include "format.hpp"

namespace ltt::cli {

static_assert(std::endian::native == std::endian::little,
              "the .npy reader and writer assume a little-endian machine");

struct NpyVector {
  std::string descr;        // e.g. "<f8"
  std::int64_t length = 0;  // shape (length,)
  std::string_view data;    // length * item size bytes, inside the text given to parse_npy
};

namespace detail {

// The quoted value after 'key': in the header dict, or the bare text up to the next ',' or
// '}' (False, (1000,)); empty when the key is absent.
inline std::string_view npy_header_value(std::string_view header, std::string_view key) {
  const std::string quoted_key = cat("'", key, "'");
  std::size_t at = header.find(quoted_key);
  if (at == std::string_view::npos) return {};
  at = header.find(':', at + quoted_key.size());
  if (at == std::string_view::npos) return {};
  ++at;
  while (at < header.size() && header[at] == ' ') ++at;
  if (at >= header.size()) return {};
  if (header[at] == '\'' || header[at] == '"') {
    const std::size_t end = header.find(header[at], at + 1);
    return end == std::string_view::npos ? std::string_view{} : header.substr(at + 1, end - at - 1);
  }
  if (header[at] == '(') {
    const std::size_t end = header.find(')', at);
    return end == std::string_view::npos ? std::string_view{} : header.substr(at, end - at + 1);
  }
  std::size_t end = at;
  while (end < header.size() && header[end] != ',' && header[end] != '}') ++end;
  return header.substr(at, end - at);
}

[[noreturn]] inline void npy_fail(std::string_view name, std::string_view message) {
  throw BadInput(cat(name, ": ", message));
}

// The element size in bytes of a descr such as "<f8" or "|u1"; 0 when it is not of that form.
inline std::size_t npy_item_size(std::string_view descr) {
  if (descr.size() < 3 || descr.size() > 4) return 0;
  std::size_t size = 0;
  for (const char c : descr.substr(2)) {
    if (c < '0' || c > '9') return 0;
    size = size * 10 + static_cast<std::size_t>(c - '0');
  }
  return size;
}

}  // namespace detail

// Parses a one-dimensional array out of the bytes of a .npy file. name is the file as the
// user typed it, for messages. The element type is not checked here (see descr).
inline NpyVector parse_npy(std::string_view name, std::string_view bytes) {
  const auto fail = [&](std::string_view message) { detail::npy_fail(name, message); };
  if (!bytes.starts_with("\x93NUMPY") || bytes.size() < 10)
    fail("not a .npy file (no \\x93NUMPY magic at the start)");
  const auto major = static_cast<unsigned char>(bytes[6]);
  std::size_t header_length = 0, offset = 0;
  if (major == 1) {
    header_length = static_cast<unsigned char>(bytes[8]) |
                    static_cast<std::size_t>(static_cast<unsigned char>(bytes[9])) << 8;
    offset = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) fail("the .npy header is cut short");
    for (int i = 3; i >= 0; --i)
      header_length =
          header_length << 8 | static_cast<unsigned char>(bytes[8 + static_cast<std::size_t>(i)]);
    offset = 12;
  } else {
    fail(cat(".npy format version ", std::to_string(major), " is not supported (1 to 3 are)"));
  }
  if (bytes.size() < offset + header_length) fail("the .npy header is cut short");
  const std::string_view header = bytes.substr(offset, header_length);

  NpyVector v;
  v.descr = std::string(detail::npy_header_value(header, "descr"));
  if (v.descr.empty()) fail("the .npy header has no 'descr'");
  const std::string_view shape = detail::npy_header_value(header, "shape");
  if (shape.size() < 2 || shape.front() != '(' || shape.back() != ')')
    fail("the .npy header has no 'shape'");
  // "(1000,)" or "(1000, )": one dimension. "()" (a scalar) and "(10, 3)" are refused.
  std::string_view dims = shape.substr(1, shape.size() - 2);
  while (!dims.empty() && (dims.back() == ' ' || dims.back() == ',')) dims.remove_suffix(1);
  if (dims.empty() || dims.find(',') != std::string_view::npos)
    fail(cat("the array has shape ", shape, "; a one-dimensional array is expected"));
  std::int64_t length = 0;
  for (const char c : dims) {
    if (c < '0' || c > '9' || length > (std::int64_t{1} << 53))
      fail(cat("the .npy shape ", shape, " is not readable"));
    length = length * 10 + (c - '0');
  }
  v.length = length;
  // fortran_order is not read: in one dimension C and Fortran order are the same layout.

  const std::size_t data_offset = offset + header_length;
  const std::size_t item = detail::npy_item_size(v.descr);
  if (item != 0) {
    const std::size_t want = static_cast<std::size_t>(length) * item;
    if (bytes.size() - data_offset < want)
      fail(cat("the file holds ", std::to_string((bytes.size() - data_offset) / item), " of the ",
               std::to_string(length), " elements its header announces"));
    v.data = bytes.substr(data_offset, want);
  }
  return v;
}

// A one-dimensional float64 array, element for element.
inline std::vector<double> npy_float64_vector(std::string_view name, std::string_view bytes) {
  const NpyVector v = parse_npy(name, bytes);
  if (v.descr != "<f8")
    throw BadInput(cat(name, ": element type ", in_quotes(v.descr),
                       " is not supported: a one-dimensional float64 array ('<f8') is expected"));
  std::vector<double> x(static_cast<std::size_t>(v.length));
  if (!x.empty()) std::memcpy(x.data(), v.data.data(), x.size() * sizeof(double));
  return x;
}

// Writes a one-dimensional array in .npy version 1.0. descr is the element type ("|u1" for
// uint8, "<u4" for uint32), sized to match T.
template <class T>
void write_npy_vector(std::ostream& out, std::string_view descr, const std::vector<T>& x) {
  std::string header = cat("{'descr': '", descr, "', 'fortran_order': False, 'shape': (",
                           std::to_string(x.size()), ",), }");
  // 10 bytes of preamble + header + '\n' must be a multiple of 64.
  const std::size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  const std::size_t length = header.size();
  const char preamble[10] = {'\x93',
                             'N',
                             'U',
                             'M',
                             'P',
                             'Y',
                             '\x01',
                             '\x00',
                             static_cast<char>(length & 0xff),
                             static_cast<char>(length >> 8)};
  out.write(preamble, sizeof preamble);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  if (!x.empty())
    out.write(reinterpret_cast<const char*>(x.data()),
              static_cast<std::streamsize>(x.size() * sizeof(T)));
}

}  // namespace ltt::cli
