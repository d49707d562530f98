#include "npy.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <streambuf>
#include <string>

#include "atomic_output.hpp"
#include "error.hpp"

namespace ltt::data {

namespace fs = std::filesystem;
using detail::cat;
using detail::in_quotes;

namespace {

constexpr std::string_view magic = "\x93NUMPY";
// numpy refuses headers longer than this by default (numpy.lib.format, _MAX_HEADER_SIZE).
constexpr std::size_t max_header_length = 10000;

// The header dict of a .npy file: a Python literal with string keys and values that are
// strings, True/False, or tuples of integers. A small recursive-descent reader; anything
// else is refused with the text it stopped at.
class HeaderParser {
 public:
  HeaderParser(std::string_view text, std::string_view file) : text_(text), file_(file) {}

  void parse() {
    skip_space();
    expect('{');
    for (;;) {
      skip_space();
      if (peek() == '}') break;
      const std::string key = string_literal();
      skip_space();
      expect(':');
      skip_space();
      if (key == "descr") {
        descr = string_literal();
        has_descr = true;
      } else if (key == "fortran_order") {
        fortran_order = boolean_literal();
        has_fortran_order = true;
      } else if (key == "shape") {
        shape = int_tuple();
        has_shape = true;
      } else {
        fail(cat("unexpected key ", in_quotes(key), " in the .npy header"));
      }
      skip_space();
      if (peek() == ',') {
        ++at_;
        continue;
      }
      skip_space();
      if (peek() != '}')
        fail(cat("the .npy header is not a dict literal near ", in_quotes(rest())));
    }
    if (!has_descr) fail("the .npy header has no 'descr'");
    if (!has_fortran_order) fail("the .npy header has no 'fortran_order'");
    if (!has_shape) fail("the .npy header has no 'shape'");
  }

  std::string descr;
  bool fortran_order = false;
  std::vector<std::int64_t> shape;

 private:
  bool has_descr = false, has_fortran_order = false, has_shape = false;

  [[noreturn]] void fail(std::string_view message) const { detail::fail(file_, message); }
  char peek() const { return at_ < text_.size() ? text_[at_] : '\0'; }
  std::string_view rest() const { return text_.substr(at_, 20); }
  void skip_space() {
    while (at_ < text_.size() &&
           (text_[at_] == ' ' || text_[at_] == '\t' || text_[at_] == '\n' || text_[at_] == '\r'))
      ++at_;
  }
  void expect(char c) {
    if (peek() != c)
      fail(cat("the .npy header is not a dict literal: expected '", std::string(1, c), "' near ",
               in_quotes(rest())));
    ++at_;
  }
  std::string string_literal() {
    const char q = peek();
    if (q != '\'' && q != '"')
      fail(cat("the .npy header holds a non-string where a string belongs, near ",
               in_quotes(rest())));
    const std::size_t end = text_.find(q, at_ + 1);
    if (end == std::string_view::npos) fail("the .npy header has an unterminated string");
    std::string s(text_.substr(at_ + 1, end - at_ - 1));
    at_ = end + 1;
    return s;
  }
  bool boolean_literal() {
    if (text_.substr(at_).starts_with("True")) {
      at_ += 4;
      return true;
    }
    if (text_.substr(at_).starts_with("False")) {
      at_ += 5;
      return false;
    }
    fail(cat("'fortran_order' must be True or False, near ", in_quotes(rest())));
  }
  std::vector<std::int64_t> int_tuple() {
    expect('(');
    std::vector<std::int64_t> dims;
    for (;;) {
      skip_space();
      if (peek() == ')') {
        ++at_;
        break;
      }
      std::int64_t d = 0;
      const std::size_t begin = at_;
      while (peek() >= '0' && peek() <= '9') {
        if (d > (std::numeric_limits<std::int64_t>::max() - 9) / 10)
          fail("a .npy dimension is too large");
        d = d * 10 + (text_[at_] - '0');
        ++at_;
      }
      if (at_ == begin)
        fail(cat("the .npy shape is not a tuple of integers, near ", in_quotes(rest())));
      if (peek() == 'L') ++at_;  // Python 2's long literal
      dims.push_back(d);
      skip_space();
      if (peek() == ',') {
        ++at_;
        continue;
      }
      if (peek() != ')')
        fail(cat("the .npy shape is not a tuple of integers, near ", in_quotes(rest())));
    }
    return dims;
  }

  std::string_view text_;
  std::string_view file_;
  std::size_t at_ = 0;
};

DType dtype_from_descr(std::string_view descr, std::string_view file) {
  const auto unsupported = [&](std::string_view why) {
    return DataError(
        cat(file, ": element type ", in_quotes(descr), " ", why,
            "; supported: float32 '<f4', float64 '<f8', int64 '<i8', uint8 '|u1', bool '|b1'"));
  };
  if (descr.size() != 3) throw unsupported("is not supported");
  const char order = descr[0];
  const std::string_view kind = descr.substr(1);
  if (order == '>')
    throw unsupported("is big-endian (save with x.astype(x.dtype.newbyteorder('<')))");
  if (order != '<' && order != '|' && order != '=') throw unsupported("is not supported");
  if (kind == "f4") return DType::float32;
  if (kind == "f8") return DType::float64;
  if (kind == "i8") return DType::int64;
  if (kind == "u1") return DType::uint8;
  if (kind == "b1") return DType::boolean;
  throw unsupported("is not supported");
}

std::string_view descr_of(DType t) {
  switch (t) {
    case DType::float32:
      return "<f4";
    case DType::float64:
      return "<f8";
    case DType::int64:
      return "<i8";
    case DType::uint8:
      return "|u1";
    case DType::boolean:
      return "|b1";
  }
  return "?";
}

std::int64_t element_count(const std::vector<std::int64_t>& shape, std::string_view file) {
  std::int64_t n = 1;
  for (const std::int64_t d : shape) {
    if (d != 0 && n > std::numeric_limits<std::int64_t>::max() / 8 / d)
      detail::fail(file, cat("the .npy shape ", shape_text(shape), " is too large"));
    n *= d;
  }
  return n;
}

}  // namespace

NpyHeader read_npy_header(std::istream& in, std::string_view name) {
  char preamble[12];
  in.read(preamble, 8);
  if (in.gcount() < 8 || std::string_view(preamble, 6) != magic)
    detail::fail(name, "not a .npy file (no \\x93NUMPY magic at the start)");
  const auto major = static_cast<unsigned char>(preamble[6]);
  std::size_t header_length = 0;
  std::int64_t offset = 0;
  if (major == 1) {
    in.read(preamble + 8, 2);
    if (in.gcount() < 2) detail::fail(name, "the .npy header is cut short");
    header_length = static_cast<unsigned char>(preamble[8]) |
                    static_cast<std::size_t>(static_cast<unsigned char>(preamble[9])) << 8;
    offset = 10;
  } else if (major == 2 || major == 3) {
    in.read(preamble + 8, 4);
    if (in.gcount() < 4) detail::fail(name, "the .npy header is cut short");
    for (int i = 3; i >= 0; --i)
      header_length = header_length << 8 | static_cast<unsigned char>(preamble[8 + i]);
    offset = 12;
  } else {
    detail::fail(name, cat(".npy format version ", std::to_string(major),
                           " is not supported (1.0 to 3.0 are)"));
  }
  if (header_length > max_header_length)
    detail::fail(name, cat("the .npy header announces ", std::to_string(header_length),
                           " bytes, more than numpy writes"));
  std::string header(header_length, '\0');
  in.read(header.data(), static_cast<std::streamsize>(header_length));
  if (static_cast<std::size_t>(in.gcount()) < header_length)
    detail::fail(name, "the .npy header is cut short");

  HeaderParser parser(header, name);
  parser.parse();
  NpyHeader h;
  h.dtype = dtype_from_descr(parser.descr, name);
  h.shape = std::move(parser.shape);
  h.data_offset = offset + static_cast<std::int64_t>(header_length);
  if (parser.fortran_order) {
    int long_dims = 0;
    for (const std::int64_t d : h.shape) long_dims += d > 1;
    if (long_dims > 1)
      detail::fail(name,
                   cat("the array of shape ", shape_text(h.shape),
                       " is stored in Fortran order; save it in C order (np.ascontiguousarray)"));
  }
  element_count(h.shape, name);
  return h;
}

namespace {

std::ifstream open_npy(const fs::path& path) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) detail::fail(path.string(), "is a directory, not a .npy file");
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in)
    detail::fail(path.string(),
                 cat("cannot open: ", errno != 0 ? std::strerror(errno) : "unknown error"));
  return in;
}

}  // namespace

NpyHeader read_npy_header(const fs::path& path) {
  std::ifstream in = open_npy(path);
  return read_npy_header(in, path.string());
}

namespace {

// An istream over bytes already in memory, without copying them.
struct ViewBuffer : std::streambuf {
  explicit ViewBuffer(std::string_view bytes) {
    char* begin = const_cast<char*>(bytes.data());
    setg(begin, begin, begin + bytes.size());
  }
};

// The elements after the header; `in` stands at the first one and `available` bytes follow,
// which are checked before anything is allocated for what the header announces.
Array read_npy_body(std::istream& in, const NpyHeader& h, std::uint64_t available,
                    std::string_view name) {
  Array a;
  a.dtype = h.dtype;
  a.shape = h.shape;
  const std::int64_t n = element_count(a.shape, name);
  const std::size_t item = item_size(a.dtype);
  const auto want = static_cast<std::uint64_t>(n) * item;
  const auto short_by = [&](std::uint64_t have) {
    detail::fail(name,
                 cat("the file holds ", std::to_string(have / item), " of the ", std::to_string(n),
                     " elements its header announces (shape ", shape_text(a.shape), ")"));
  };
  if (available < want) short_by(available);
  a.bytes.resize(static_cast<std::size_t>(want));
  in.read(reinterpret_cast<char*>(a.bytes.data()), static_cast<std::streamsize>(a.bytes.size()));
  if (static_cast<std::uint64_t>(in.gcount()) < want)
    short_by(static_cast<std::uint64_t>(in.gcount()));
  if (a.dtype == DType::boolean)
    for (std::size_t i = 0; i < a.bytes.size(); ++i)
      if (a.bytes[i] != std::byte{0} && a.bytes[i] != std::byte{1})
        detail::fail(name, cat("bool element ", std::to_string(i), " holds byte ",
                               std::to_string(std::to_integer<int>(a.bytes[i])), ", not 0 or 1"));
  return a;
}

}  // namespace

Array parse_npy(std::string_view bytes, std::string_view name) {
  ViewBuffer buffer(bytes);
  std::istream in(&buffer);
  const NpyHeader h = read_npy_header(in, name);
  return read_npy_body(in, h, bytes.size() - static_cast<std::uint64_t>(h.data_offset), name);
}

Array read_npy(const fs::path& path) {
  std::ifstream in = open_npy(path);
  const NpyHeader h = read_npy_header(in, path.string());
  std::error_code ec;
  const std::uintmax_t size = fs::file_size(path, ec);
  const std::uint64_t available = ec || size < static_cast<std::uintmax_t>(h.data_offset)
                                      ? 0
                                      : size - static_cast<std::uint64_t>(h.data_offset);
  return read_npy_body(in, h, available, path.string());
}

std::string npy_header(DType dtype, const std::vector<std::int64_t>& shape) {
  std::string dict = cat("{'descr': '", descr_of(dtype),
                         "', 'fortran_order': False, 'shape': ", shape_text(shape), ", }");
  // preamble + dict + '\n' is padded with spaces to a multiple of 64 bytes (numpy >= 1.23
  // aligns to 64; older versions to 16, which 64 also satisfies).
  std::size_t preamble = 10;
  std::size_t total = preamble + dict.size() + 1;
  if ((total + 63) / 64 * 64 - preamble > 65535) {
    preamble = 12;
    total = preamble + dict.size() + 1;
  }
  dict.append((64 - total % 64) % 64, ' ');
  dict.push_back('\n');
  const std::size_t length = dict.size();
  std::string out(magic);
  if (preamble == 10) {
    out += '\x01';
    out += '\x00';
    out += static_cast<char>(length & 0xff);
    out += static_cast<char>(length >> 8);
  } else {
    out += '\x02';
    out += '\x00';
    for (int i = 0; i < 4; ++i) out += static_cast<char>((length >> (8 * i)) & 0xff);
  }
  return out + dict;
}

void write_npy(std::ostream& out, const Array& a) {
  for (const std::int64_t d : a.shape)
    if (d < 0)
      throw DataError(cat("write_npy: shape holds a negative dimension ", std::to_string(d)));
  if (a.bytes.size() != static_cast<std::size_t>(a.size()) * item_size(a.dtype))
    throw DataError(
        cat("write_npy: the array holds ", std::to_string(a.bytes.size()), " bytes, not the ",
            std::to_string(static_cast<std::size_t>(a.size()) * item_size(a.dtype)), " its shape ",
            shape_text(a.shape), " and dtype ", dtype_name(a.dtype), " need"));
  const std::string header = npy_header(a.dtype, a.shape);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  if (!a.bytes.empty())
    out.write(reinterpret_cast<const char*>(a.bytes.data()),
              static_cast<std::streamsize>(a.bytes.size()));
}

void write_npy(const fs::path& path, const Array& a) {
  write_stream_atomically(path, [&](std::ostream& out) { write_npy(out, a); });
}

std::vector<double> read_npy_vector(const fs::path& path) {
  const Array a = read_npy(path);
  if (a.dtype != DType::float64 && a.dtype != DType::float32)
    detail::fail(path.string(),
                 cat("holds ", dtype_name(a.dtype),
                     " elements; a one-dimensional float64 or float32 array is expected"));
  if (a.rank() != 1)
    detail::fail(path.string(),
                 cat("has shape ", shape_text(a.shape),
                     "; a one-dimensional array is expected (np.save(path, x.reshape(-1)))"));
  return a.to_double();
}

}  // namespace ltt::data
