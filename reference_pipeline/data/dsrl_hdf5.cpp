// The HDF5 store of dsrl.hpp, on the HDF5 C API (1.10 and later). Compiled only when the
// library is built with HDF5 (LTT_WITH_HDF5); dsrl_no_hdf5.cpp stands in otherwise.
//
// Reading converts on the fly (H5Dread into native double or float). Writing a selection
// copies each per-row dataset with its own file datatype, so an h5py bool (an enum of int8
// with members FALSE = 0, TRUE = 1) stays an enum and h5py reads it back as numpy bool.
//
// Corrupted files (docs/dsrl.md, "Corrupted files"). libhdf5 1.10 trusts parts of what it
// decodes: an enum whose base type claims a gigabyte makes H5Oopen copy past the object
// header, a float whose bits lie past its size makes a conversion write past its buffer, and
// the process dies by SIGSEGV; a corrupted global heap makes it loop forever. So libhdf5
// touches an input file only inside run_in_child (child_process.hpp), and a crash or a stall
// there is a DataError that names the file and the key being read. Inside the child every
// object is checked before its data is trusted: its element type is well formed
// (type_problem), its filters can be decoded, and the bytes it claims are in the file
// (check_storage). The parent learns a file's layout from one child (the survey in
// Hdf5Source) and reads each column through another; a selection is written by a child into
// the temporary that write_file_atomically removes when the child fails, so nothing is left.

#include <hdf5.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "atomic_output.hpp"
#include "child_process.hpp"
#include "dsrl_store.hpp"
#include "error.hpp"

namespace ltt::data::detail {

namespace fs = std::filesystem;

namespace {

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

// The innermost message on HDF5's error stack ("unable to open file", ...), or "".
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

std::vector<hsize_t> dimensions(hid_t space, std::string_view file, std::string_view what) {
  const int rank = H5Sget_simple_extent_ndims(space);
  if (rank < 0) fail_hdf5(file, what);
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  if (rank > 0 && H5Sget_simple_extent_dims(space, dims.data(), nullptr) != rank)
    fail_hdf5(file, what);
  return dims;
}

// Elements times bytes each, or nothing where the product passes 2^64.
std::optional<hsize_t> bytes_of(const std::vector<hsize_t>& dims, std::size_t element_bytes) {
  hsize_t n = element_bytes;
  for (const hsize_t d : dims)
    if (d != 0 && n > static_cast<hsize_t>(-1) / d)
      return std::nullopt;
    else
      n *= d;
  return n;
}

std::string type_text(hid_t type) {
  const std::size_t bits = H5Tget_size(type) * 8;
  switch (H5Tget_class(type)) {
    case H5T_FLOAT: return cat("float", std::to_string(bits));
    case H5T_INTEGER:
      return cat(H5Tget_sign(type) == H5T_SGN_NONE ? "uint" : "int", std::to_string(bits));
    case H5T_ENUM: {
      Handle base(H5Tget_super(type), H5Tclose);
      return cat("enum of ", base.valid() ? type_text(base.get()) : "?");
    }
    case H5T_STRING: return "string";
    case H5T_COMPOUND: return "a compound type";
    case H5T_BITFIELD: return "a bitfield";
    case H5T_OPAQUE: return "an opaque type";
    case H5T_REFERENCE: return "references";
    case H5T_VLEN: return "variable-length sequences";
    case H5T_ARRAY: return "an array type";
    default: return "an unknown type";
  }
}

// Why a datatype's description cannot be right, or "" when it can: what libhdf5 1.10 does not
// check when it decodes a type and what its conversions then trust. A float whose significant
// bits lie past its size sent H5T__conv_f_f writing past its buffer (crash-on-write.hdf5 in
// tests/data/hdf5-crash/, its 'rewards' at bit offset 32256 of 4 bytes).
std::string type_problem(hid_t type, int depth = 0) {
  if (depth > 8) return "types nested more than 8 deep";
  const std::size_t size = H5Tget_size(type);
  if (size == 0) return "an element of 0 bytes";
  const H5T_class_t type_class = H5Tget_class(type);
  switch (type_class) {
    case H5T_INTEGER:
    case H5T_BITFIELD:
    case H5T_FLOAT: {
      const std::size_t precision = H5Tget_precision(type);
      const int offset = H5Tget_offset(type);
      if (precision == 0 || offset < 0 || static_cast<std::size_t>(offset) + precision > 8 * size)
        return cat(type_class == H5T_FLOAT     ? "a float"
                   : type_class == H5T_INTEGER ? "an integer"
                                               : "a bitfield",
                   " of ", std::to_string(size), " bytes whose ", std::to_string(precision),
                   " significant bits start at bit ", std::to_string(offset));
      if (type_class != H5T_FLOAT) return {};
      std::size_t sign = 0, exponent = 0, exponent_bits = 0, mantissa = 0, mantissa_bits = 0;
      if (H5Tget_fields(type, &sign, &exponent, &exponent_bits, &mantissa, &mantissa_bits) < 0)
        return "a float whose fields cannot be read";
      const auto outside = [](std::size_t bit, std::size_t from, std::size_t bits) {
        return bit < from || bit >= from + bits;
      };
      const bool fits = exponent_bits > 0 && mantissa_bits > 0 && sign < precision &&
                        exponent + exponent_bits <= precision &&
                        mantissa + mantissa_bits <= precision;
      const bool apart =
          (mantissa + mantissa_bits <= exponent || exponent + exponent_bits <= mantissa) &&
          outside(sign, exponent, exponent_bits) && outside(sign, mantissa, mantissa_bits);
      if (fits && apart) return {};
      return cat("a float of ", std::to_string(precision), " bits with its sign at bit ",
                 std::to_string(sign), ", exponent at ", std::to_string(exponent), " (",
                 std::to_string(exponent_bits), " bits), mantissa at ", std::to_string(mantissa),
                 " (", std::to_string(mantissa_bits), " bits)");
    }
    case H5T_ENUM:
    case H5T_VLEN:
    case H5T_ARRAY: {
      const Handle base(H5Tget_super(type), H5Tclose);
      if (!base.valid()) return "a base type that cannot be read";
      const std::size_t base_size = H5Tget_size(base.get());
      if (type_class == H5T_ENUM && (H5Tget_class(base.get()) != H5T_INTEGER || base_size != size))
        return cat("an enum of ", std::to_string(size), " bytes over ", type_text(base.get()),
                   " of ", std::to_string(base_size), " bytes");
      if (type_class == H5T_ARRAY) {
        const int rank = H5Tget_array_ndims(type);
        if (rank < 0) return "an array type whose shape cannot be read";
        std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
        if (rank > 0 && H5Tget_array_dims2(type, dims.data()) != rank)
          return "an array type whose shape cannot be read";
        if (bytes_of(dims, base_size) != size)
          return cat("an array type of ", std::to_string(size),
                     " bytes whose elements do not fill it");
      }
      return type_problem(base.get(), depth + 1);
    }
    case H5T_COMPOUND: {
      const int members = H5Tget_nmembers(type);
      if (members < 0) return "a compound type whose members cannot be read";
      for (int i = 0; i < members; ++i) {
        const Handle member(H5Tget_member_type(type, static_cast<unsigned>(i)), H5Tclose);
        if (!member.valid()) return "a compound type whose members cannot be read";
        const std::size_t at = H5Tget_member_offset(type, static_cast<unsigned>(i));
        const std::size_t member_size = H5Tget_size(member.get());
        if (at > size || member_size > size - at)
          return cat("a compound type of ", std::to_string(size), " bytes with a member of ",
                     std::to_string(member_size), " bytes at byte ", std::to_string(at));
        if (std::string why = type_problem(member.get(), depth + 1); !why.empty()) return why;
      }
      return {};
    }
    case H5T_STRING:
    case H5T_OPAQUE:
    case H5T_REFERENCE:
    case H5T_TIME: return {};
    default: return "an unknown type class";
  }
}

// Elements of a type whose bytes are all in the dataset's own storage (no variable-length
// parts kept in the global heap), so the storage must hold elements times size.
bool fixed_size(hid_t type) {
  return H5Tdetect_class(type, H5T_VLEN) == 0 && H5Tis_variable_str(type) == 0 &&
         H5Tget_class(type) != H5T_REFERENCE;
}

// What a dataset claims against what the file holds, so that a corrupted dimension, address
// or filter is refused before a read trusts it: the storage is within the file; unfiltered
// data is stored whole (contiguous: from its address to no further than the file's end);
// filters can be decoded; deflate is asked for no more than its 1032-to-1 limit (zlib's
// technical details); data in other files (external storage, virtual datasets) is refused.
void check_storage(hid_t d, hid_t type, const std::vector<hsize_t>& dims, hsize_t file_size,
                   std::string_view file, std::string_view key) {
  const auto refuse = [&](std::string_view what) { fail(file, cat(key_text(key), " ", what)); };
  const std::optional<hsize_t> claimed = bytes_of(dims, H5Tget_size(type));
  if (!claimed) refuse("claims more than 2^64 bytes of data; the file is corrupted");
  const std::string claim = cat("claims ", std::to_string(*claimed), " bytes");
  const hsize_t stored = H5Dget_storage_size(d);
  if (stored > file_size)
    refuse(cat("claims ", std::to_string(stored), " bytes of storage in a file of ",
               std::to_string(file_size), " bytes; the file is corrupted or truncated"));
  const Handle creation = check(H5Dget_create_plist(d), H5Pclose, file,
                                cat("cannot read the storage properties of ", key_text(key)));
  const auto stored_whole = [&] {
    if (fixed_size(type) && stored < *claimed)
      refuse(cat(claim, " but the file stores ", std::to_string(stored),
                 " bytes of it; the file is corrupted or truncated"));
  };
  switch (H5Pget_layout(creation.get())) {
    case H5D_COMPACT: stored_whole(); return;
    case H5D_CONTIGUOUS: {
      const int external = H5Pget_external_count(creation.get());
      if (external < 0)
        fail_hdf5(file, cat("cannot read the storage properties of ", key_text(key)));
      if (external > 0)
        refuse("keeps its data in external files; ltt reads only data stored in the file itself");
      if (*claimed == 0 || !fixed_size(type)) return;
      stored_whole();
      const haddr_t at = H5Dget_offset(d);
      if (at == HADDR_UNDEF || at > file_size || *claimed > file_size - at)
        refuse(cat(claim, " from byte ", at == HADDR_UNDEF ? "?" : std::to_string(at),
                   " of a file of ", std::to_string(file_size),
                   " bytes; the file is corrupted or truncated"));
      return;
    }
    case H5D_CHUNKED: {
      std::vector<hsize_t> chunk(dims.size() + 1);
      const int rank = H5Pget_chunk(creation.get(), static_cast<int>(chunk.size()), chunk.data());
      if (rank != static_cast<int>(dims.size()) ||
          std::any_of(chunk.begin(), chunk.begin() + rank, [](hsize_t c) { return c == 0; }))
        refuse("has a chunk shape that does not fit its rank; the file is corrupted");
      const int filters = H5Pget_nfilters(creation.get());
      if (filters < 0) fail_hdf5(file, cat("cannot read the filters of ", key_text(key)));
      bool deflate_only = true;
      for (int i = 0; i < filters; ++i) {
        unsigned flags = 0, config = 0;
        std::size_t values = 0;
        char name[64] = {};
        const H5Z_filter_t filter = H5Pget_filter2(creation.get(), static_cast<unsigned>(i), &flags,
                                                   &values, nullptr, sizeof name, name, nullptr);
        if (filter < 0) fail_hdf5(file, cat("cannot read the filters of ", key_text(key)));
        if (H5Zfilter_avail(filter) <= 0 || H5Zget_filter_info(filter, &config) < 0 ||
            (config & H5Z_FILTER_CONFIG_DECODE_ENABLED) == 0) {
          H5Eclear2(H5E_DEFAULT);
          refuse(cat("is stored through HDF5 filter ", std::to_string(filter),
                     name[0] != '\0' ? cat(" (", printable(name), ")") : std::string(),
                     ", which this build of libhdf5 cannot decode"));
        }
        deflate_only =
            deflate_only && (filter == H5Z_FILTER_DEFLATE || filter == H5Z_FILTER_SHUFFLE ||
                             filter == H5Z_FILTER_FLETCHER32);
      }
      if (filters == 0) {
        stored_whole();
      } else if (deflate_only && fixed_size(type) && *claimed / 1032 > stored) {
        refuse(cat(claim, ", more than deflate unpacks from the ", std::to_string(stored),
                   " bytes stored (at most 1032 to 1); the file is corrupted"));
      }
      return;
    }
    case H5D_VIRTUAL:
      refuse("is a virtual dataset; ltt reads only data stored in the file itself");
      return;
    default: refuse("has a storage layout this libhdf5 does not know; the file is corrupted");
  }
}

// An input file opened inside a child process, with its size in bytes.
struct Input {
  Handle file;
  hsize_t size = 0;
};

Input open_input(const fs::path& path, std::string_view name) {
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
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

// One dataset of an input, opened and checked (type_problem, check_storage).
struct Dataset {
  Handle d, type, space;
  std::vector<hsize_t> dims;
};

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
    case H5T_FLOAT: info.kind = ElementKind::floating; break;
    case H5T_INTEGER: info.kind = ElementKind::integer; break;
    case H5T_ENUM: info.kind = ElementKind::enumeration; break;  // over an integer: type_problem
    default: info.kind = ElementKind::other;
  }
  return info;
}

// Reads rows [start, start + count) of d, converted to `memory`, into buffer.
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

// Reads all of d converted to `memory` (elements of element_bytes), whole rows at a time
// within copy_block_bytes, and hands each block to `use` with its element count.
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

// The survey crosses from the child as bytes: int64s and length-prefixed strings.
void put(std::vector<unsigned char>& bytes, std::int64_t v) {
  const auto* p = reinterpret_cast<const unsigned char*>(&v);
  bytes.insert(bytes.end(), p, p + sizeof v);
}
void put(std::vector<unsigned char>& bytes, std::string_view text) {
  put(bytes, static_cast<std::int64_t>(text.size()));
  bytes.insert(bytes.end(), text.begin(), text.end());
}

class Unpack {
 public:
  explicit Unpack(std::span<const unsigned char> bytes) : bytes_(bytes) {}
  std::int64_t number() {
    std::int64_t v = 0;
    std::memcpy(&v, take(sizeof v), sizeof v);
    return v;
  }
  std::string text() {
    const auto n = static_cast<std::size_t>(number());
    const unsigned char* p = take(n);
    return std::string(reinterpret_cast<const char*>(p), n);
  }

 private:
  const unsigned char* take(std::size_t n) {
    if (n > bytes_.size() - at_) throw std::runtime_error("the HDF5 survey came back short");
    const unsigned char* p = bytes_.data() + at_;
    at_ += n;
    return p;
  }
  std::span<const unsigned char> bytes_;
  std::size_t at_ = 0;
};

// What the parent knows of one of the seven keys: absent, refused (error names why), or its
// column; for a column of one value per row also its values, or why they cannot be read.
struct KeySurvey {
  bool present = false;
  std::string error;
  ColumnInfo info;
  std::optional<std::vector<double>> values;
  std::string read_error;
};

// The parent's receiver that fills `into` exactly, piece by piece.
struct Fill {
  std::span<unsigned char> into;
  std::size_t filled = 0;
  void operator()(std::span<const unsigned char> piece) {
    if (piece.size() > into.size() - filled)
      throw std::runtime_error("the HDF5 reader sent more than the key holds");
    std::memcpy(into.data() + filled, piece.data(), piece.size());
    filled += piece.size();
  }
};

double integer_at(const unsigned char* p, std::size_t size, bool is_signed) {
  const auto load = [&]<class S, class U>(S, U) {
    if (is_signed) {
      S v;
      std::memcpy(&v, p, sizeof v);
      return static_cast<double>(v);
    }
    U v;
    std::memcpy(&v, p, sizeof v);
    return static_cast<double>(v);
  };
  switch (size) {
    case 1: return load(std::int8_t{}, std::uint8_t{});
    case 2: return load(std::int16_t{}, std::uint16_t{});
    case 4: return load(std::int32_t{}, std::uint32_t{});
    default: return load(std::int64_t{}, std::uint64_t{});
  }
}

// Reads all of d as doubles, a block at a time: floats and integers by value, enums by the
// integer value of each member.
void for_each_double_block(const Dataset& d, std::string_view file, std::string_view key,
                           const std::function<void(const double*, std::size_t)>& use) {
  if (H5Tget_class(d.type.get()) != H5T_ENUM) {
    for_each_block(
        d, H5T_NATIVE_DOUBLE, sizeof(double),
        [&](const unsigned char* p, std::size_t n) { use(reinterpret_cast<const double*>(p), n); },
        file, key);
    return;
  }
  // HDF5 converts an enum only to another enum, so the values are read as the native form of
  // the file's enum and taken by the integer value of each member.
  const Handle native = check(H5Tget_native_type(d.type.get(), H5T_DIR_ASCEND), H5Tclose, file,
                              cat("cannot convert the type of ", key_text(key)));
  const Handle base = check(H5Tget_super(native.get()), H5Tclose, file,
                            cat("cannot read the type of ", key_text(key)));
  const std::size_t size = H5Tget_size(base.get());
  const bool is_signed = H5Tget_sign(base.get()) != H5T_SGN_NONE;
  if (size != 1 && size != 2 && size != 4 && size != 8)
    fail(file, cat(key_text(key), " is an enum of ", std::to_string(size), "-byte integers"));
  std::vector<double> values;
  for_each_block(
      d, native.get(), size,
      [&](const unsigned char* raw, std::size_t n) {
        values.resize(n);
        for (std::size_t i = 0; i < n; ++i) values[i] = integer_at(raw + i * size, size, is_signed);
        use(values.data(), n);
      },
      file, key);
}

// A column of one value per row: (N,) or (N, 1).
bool is_column(const ColumnInfo& info) {
  return info.kind != ElementKind::other &&
         (info.shape.size() == 1 || (info.shape.size() == 2 && info.shape[1] == 1));
}

class Hdf5Source final : public DsrlSource {
 public:
  // One child surveys the seven keys and reads every numeric column of one value per row along
  // (rewards, costs, terminals, timeouts: every caller reads them, and they are small), so
  // load_dsrl_pool forks once; wider keys are read each by a child of its own.
  explicit Hdf5Source(fs::path path) : path_(std::move(path)), name_(path_.string()) {
    H5open();  // once here rather than in every child
    const std::vector<unsigned char> bytes = run_in_child(name_, libhdf5, [&](ChildOutput& out) {
      const QuietErrors quiet;
      out.step("opening it");
      const Input in = open_input(path_, name_);
      std::vector<unsigned char> survey;
      std::vector<std::optional<Dataset>> columns(std::size(dsrl_keys));
      for (std::size_t k = 0; k < std::size(dsrl_keys); ++k) {
        const std::string_view key = dsrl_keys[k];
        const std::string name(key);
        out.step(cat("opening ", key_text(key)));
        const htri_t exists = H5Lexists(in.file.get(), name.c_str(), H5P_DEFAULT);
        put(survey, std::int64_t{exists != 0});
        if (exists == 0) continue;
        try {
          if (exists < 0) fail_hdf5(name_, cat("cannot look up ", key_text(key)));
          Dataset d = open_dataset(in, name, name_);
          const ColumnInfo info = column_info(d);
          put(survey, "");
          put(survey, static_cast<std::int64_t>(info.kind));
          put(survey, info.type_text);
          put(survey, static_cast<std::int64_t>(info.shape.size()));
          for (const std::int64_t n : info.shape) put(survey, n);
          if (is_column(info)) columns[k] = std::move(d);
        } catch (const DataError& e) {
          put(survey, e.what());
        }
      }
      for (std::size_t k = 0; k < std::size(dsrl_keys); ++k) {
        put(survey, std::int64_t{columns[k].has_value()});
        if (!columns[k]) continue;
        out.step(cat("reading ", key_text(dsrl_keys[k])));
        std::vector<unsigned char> values;
        try {
          for_each_double_block(*columns[k], name_, dsrl_keys[k],
                                [&](const double* x, std::size_t n) {
                                  const auto* p = reinterpret_cast<const unsigned char*>(x);
                                  values.insert(values.end(), p, p + n * sizeof(double));
                                });
          put(survey, "");
          put(survey, static_cast<std::int64_t>(values.size()));
          survey.insert(survey.end(), values.begin(), values.end());
        } catch (const DataError& e) {
          put(survey, e.what());
        }
      }
      out.send(survey.data(), survey.size());
    });
    Unpack in(bytes);
    for (KeySurvey& s : keys_) {
      s.present = in.number() != 0;
      if (!s.present) continue;
      s.error = in.text();
      if (!s.error.empty()) continue;
      s.info.kind = static_cast<ElementKind>(in.number());
      s.info.type_text = in.text();
      s.info.shape.resize(static_cast<std::size_t>(in.number()));
      for (std::int64_t& n : s.info.shape) n = in.number();
    }
    for (KeySurvey& s : keys_) {
      if (in.number() == 0) continue;
      s.read_error = in.text();
      if (!s.read_error.empty()) continue;
      const std::string values = in.text();
      s.values.emplace(values.size() / sizeof(double));
      std::memcpy(s.values->data(), values.data(), s.values->size() * sizeof(double));
    }
  }

  const std::string& name() const override { return name_; }

  bool has(std::string_view key) const override { return survey(key).present; }

  ColumnInfo info(std::string_view key) const override {
    const KeySurvey& s = survey(key);
    if (!s.error.empty()) throw DataError(s.error);
    if (!s.present) fail(name_, cat(key_text(key), " is missing"));
    return s.info;
  }

  std::vector<double> read_double(std::string_view key) const override {
    const ColumnInfo column = info(key);
    const KeySurvey& s = survey(key);
    if (!s.read_error.empty()) throw DataError(s.read_error);
    if (s.values) return *s.values;
    std::vector<double> x(elements(column));
    read(key, column, {reinterpret_cast<unsigned char*>(x.data()), x.size() * sizeof(double)},
         [&](const Dataset& d, ChildOutput& out) {
           for_each_double_block(d, name_, key, [&](const double* p, std::size_t n) {
             out.send(p, n * sizeof(double));
           });
         });
    return x;
  }

  Array read_float(std::string_view key, DType dtype) const override {
    const ColumnInfo column = info(key);
    Array a;
    a.dtype = dtype;
    a.shape = column.shape;
    a.bytes.resize(elements(column) * item_size(dtype));
    const hid_t memory = dtype == DType::float32 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
    read(key, column, {reinterpret_cast<unsigned char*>(a.bytes.data()), a.bytes.size()},
         [&](const Dataset& d, ChildOutput& out) {
           for_each_block(
               d, memory, item_size(dtype),
               [&](const unsigned char* p, std::size_t n) { out.send(p, n * item_size(dtype)); },
               name_, key);
         });
    return a;
  }

 private:
  const KeySurvey& survey(std::string_view key) const {
    const auto k = static_cast<std::size_t>(
        std::find(std::begin(dsrl_keys), std::end(dsrl_keys), key) - std::begin(dsrl_keys));
    if (k == std::size(dsrl_keys))
      throw std::logic_error(cat("Hdf5Source: ", in_quotes(key), " is not a DSRL key"));
    return keys_[k];
  }

  static std::size_t elements(const ColumnInfo& column) {
    std::size_t n = 1;
    for (const std::int64_t d : column.shape) n *= static_cast<std::size_t>(d);
    return n;
  }

  // Reads one surveyed key in a child: `send` streams its elements, which fill `into`.
  void read(std::string_view key, const ColumnInfo& column, std::span<unsigned char> into,
            const std::function<void(const Dataset&, ChildOutput&)>& send) const {
    Fill fill{into};
    run_in_child(
        name_, libhdf5,
        [&](ChildOutput& out) {
          const QuietErrors quiet;
          out.step("opening it");
          const Input in = open_input(path_, name_);
          out.step(cat("reading ", key_text(key)));
          const Dataset d = open_dataset(in, std::string(key), name_);
          if (column_info(d).shape != column.shape)
            fail(name_, cat(key_text(key), " changed shape while being read"));
          send(d, out);
        },
        std::ref(fill));
    if (fill.filled != into.size()) fail(name_, cat(key_text(key), " changed while being read"));
  }

  fs::path path_;
  std::string name_;
  KeySurvey keys_[std::size(dsrl_keys)];
};

// h5py's bool: an enum of int8 with FALSE = 0 and TRUE = 1 (h5py/h5t.pyx, _c_bool), which
// h5py reads back as numpy bool.
Handle h5py_bool_type(std::string_view file) {
  Handle t = check(H5Tenum_create(H5T_NATIVE_INT8), H5Tclose, file, "cannot create the bool type");
  const signed char no = 0, yes = 1;
  check(H5Tenum_insert(t.get(), "FALSE", &no), file, "cannot create the bool type");
  check(H5Tenum_insert(t.get(), "TRUE", &yes), file, "cannot create the bool type");
  return t;
}

// The file type and the memory type for an Array's dtype.
std::pair<Handle, Handle> types_for(DType dtype, std::string_view file) {
  const auto copy = [&](hid_t t) {
    return check(H5Tcopy(t), H5Tclose, file, "cannot copy a type");
  };
  switch (dtype) {
    case DType::float32: return {copy(H5T_IEEE_F32LE), copy(H5T_NATIVE_FLOAT)};
    case DType::float64: return {copy(H5T_IEEE_F64LE), copy(H5T_NATIVE_DOUBLE)};
    case DType::int64: return {copy(H5T_STD_I64LE), copy(H5T_NATIVE_INT64)};
    case DType::uint8: return {copy(H5T_STD_U8LE), copy(H5T_NATIVE_UINT8)};
    case DType::boolean: return {h5py_bool_type(file), h5py_bool_type(file)};
  }
  fail(file, "unknown element type");
}

// Creation property list for the sliced copy of a dataset: the source's own (chunking,
// compression, fill value) with chunks no longer than the new extent; a fresh contiguous one
// where the source's cannot serve (virtual or external storage).
Handle creation_list(hid_t source, const std::vector<hsize_t>& out_dims, std::string_view file) {
  Handle list = check(H5Dget_create_plist(source), H5Pclose, file,
                      "cannot read a dataset's creation properties");
  const H5D_layout_t layout = H5Pget_layout(list.get());
  if (layout == H5D_VIRTUAL || H5Pget_external_count(list.get()) > 0 || layout == H5D_COMPACT)
    return check(H5Pcreate(H5P_DATASET_CREATE), H5Pclose, file, "cannot create a property list");
  if (layout == H5D_CHUNKED) {
    std::vector<hsize_t> chunk(out_dims.size());
    const int rank = H5Pget_chunk(list.get(), static_cast<int>(chunk.size()), chunk.data());
    if (rank != static_cast<int>(chunk.size()))
      fail_hdf5(file, "cannot read a dataset's chunk shape");
    for (std::size_t i = 0; i < chunk.size(); ++i)
      chunk[i] = std::max<hsize_t>(1, std::min(chunk[i], out_dims[i]));
    check(H5Pset_chunk(list.get(), rank, chunk.data()), file, "cannot set a chunk shape");
  }
  return list;
}

// Copies every attribute of one object onto another, each with its own type; each is checked
// (type_problem, and at most as many bytes as the file holds) before it is read.
void copy_attributes(hid_t from, hid_t to, hsize_t file_size, std::string_view file,
                     std::string_view owner) {
  struct Context {
    hid_t to;
    hsize_t file_size;
    std::string problem;
  } context{to, file_size, {}};
  const herr_t status = H5Aiterate2(
      from, H5_INDEX_NAME, H5_ITER_NATIVE, nullptr,
      [](hid_t object, const char* name, const H5A_info_t*, void* data) -> herr_t {
        auto& c = *static_cast<Context*>(data);
        const std::string shown = cat("the attribute ", in_quotes(printable(name)));
        const auto failed = [&](std::string_view what) {
          const std::string why = hdf5_error();
          c.problem =
              cat("cannot ", what, " ", shown, why.empty() ? "" : cat(" (HDF5: ", why, ")"));
          return -1;
        };
        Handle a(H5Aopen(object, name, H5P_DEFAULT), H5Aclose);
        if (!a.valid()) return failed("open");
        Handle type(H5Aget_type(a.get()), H5Tclose);
        Handle space(H5Aget_space(a.get()), H5Sclose);
        if (!type.valid() || !space.valid()) return failed("read the type and shape of");
        const hssize_t n = H5Sget_select_npoints(space.get());
        const std::string why = type_problem(type.get());
        if (!why.empty() || n < 0 ||
            static_cast<hsize_t>(n) >
                c.file_size / std::max<std::size_t>(1, H5Tget_size(type.get()))) {
          c.problem = cat(
              shown, " has ",
              why.empty() ? "more data than the file holds" : cat("a malformed type (", why, ")"),
              "; the file is corrupted");
          return -1;
        }
        Handle memory(H5Tget_native_type(type.get(), H5T_DIR_ASCEND), H5Tclose);
        if (!memory.valid()) return failed("convert the type of");
        std::vector<unsigned char> buffer(static_cast<std::size_t>(std::max<hssize_t>(n, 1)) *
                                          H5Tget_size(memory.get()));
        if (H5Aread(a.get(), memory.get(), buffer.data()) < 0) return failed("read");
        Handle copy(H5Acreate2(c.to, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
                    H5Aclose);
        const bool ok = copy.valid() && H5Awrite(copy.get(), memory.get(), buffer.data()) >= 0;
        if (H5Tdetect_class(memory.get(), H5T_VLEN) > 0 || H5Tis_variable_str(memory.get()) > 0)
          H5Dvlen_reclaim(memory.get(), space.get(), H5P_DEFAULT, buffer.data());
        return ok ? 0 : failed("write");
      },
      &context);
  if (!context.problem.empty()) fail(file, cat(owner, ": ", context.problem));
  check(status, file, cat("cannot copy the attributes of ", owner));
}

// Copies the rows of `ranges` of dataset `source` (checked by open_dataset), one range after
// another, into a new dataset of the same name, type and trailing shape in `out`.
void copy_rows(const Dataset& source, hid_t out, const std::string& name,
               const std::vector<RowRange>& ranges, std::int64_t selected, hsize_t file_size,
               std::string_view in_name, std::string_view out_name, ChildOutput& child) {
  const auto what = [&](std::string_view verb) { return cat(verb, " ", key_text(name)); };
  const Handle type =
      check(H5Tcopy(source.type.get()), H5Tclose, in_name, what("cannot copy the type of"));
  const Handle memory = check(H5Tget_native_type(type.get(), H5T_DIR_ASCEND), H5Tclose, in_name,
                              what("cannot convert the type of"));
  std::vector<hsize_t> out_dims = source.dims;
  out_dims[0] = static_cast<hsize_t>(selected);

  const Handle out_space =
      check(H5Screate_simple(static_cast<int>(out_dims.size()), out_dims.data(), nullptr), H5Sclose,
            out_name, "cannot create a dataspace");
  const Handle links =
      check(H5Pcreate(H5P_LINK_CREATE), H5Pclose, out_name, "cannot create a property list");
  check(H5Pset_create_intermediate_group(links.get(), 1), out_name, "cannot set a property");
  const Handle creation = creation_list(source.d.get(), out_dims, in_name);
  const Handle target = check(H5Dcreate2(out, name.c_str(), type.get(), out_space.get(),
                                         links.get(), creation.get(), H5P_DEFAULT),
                              H5Dclose, out_name, what("cannot create"));
  copy_attributes(source.d.get(), target.get(), file_size, in_name, key_text(name));

  hsize_t row_elements = 1;
  for (std::size_t i = 1; i < source.dims.size(); ++i) row_elements *= source.dims[i];
  const auto row_bytes = static_cast<std::int64_t>(row_elements * H5Tget_size(memory.get()));
  if (row_bytes == 0) return;
  const bool variable =
      H5Tdetect_class(memory.get(), H5T_VLEN) > 0 || H5Tis_variable_str(memory.get()) > 0;
  const std::int64_t block_rows = std::max<std::int64_t>(1, copy_block_bytes / row_bytes);
  std::vector<unsigned char> buffer;
  std::vector<hsize_t> to(out_dims.size(), 0), count = out_dims;
  std::int64_t written = 0;
  for (const RowRange& r : ranges) {
    for (std::int64_t done = 0; done < r.count;) {
      const std::int64_t n = std::min(block_rows, r.count - done);
      to[0] = static_cast<hsize_t>(written);
      count[0] = static_cast<hsize_t>(n);
      buffer.resize(static_cast<std::size_t>(n * row_bytes));
      const Handle memory_space =
          check(H5Screate_simple(static_cast<int>(count.size()), count.data(), nullptr), H5Sclose,
                out_name, "cannot create a dataspace");
      read_rows(source, memory.get(), static_cast<hsize_t>(r.start + done), static_cast<hsize_t>(n),
                buffer.data(), in_name, name);
      check(H5Sselect_hyperslab(out_space.get(), H5S_SELECT_SET, to.data(), nullptr, count.data(),
                                nullptr),
            out_name, what("cannot select rows of"));
      const herr_t wrote = H5Dwrite(target.get(), memory.get(), memory_space.get(), out_space.get(),
                                    H5P_DEFAULT, buffer.data());
      if (variable) H5Dvlen_reclaim(memory.get(), memory_space.get(), H5P_DEFAULT, buffer.data());
      check(wrote, out_name, what("cannot write"));
      child.tick();
      done += n;
      written += n;
    }
  }
}

struct Link {
  std::string name;
  H5L_type_t type;
};

// Every link below the root, parents before children.
std::vector<Link> all_links(hid_t file, std::string_view shown) {
  std::vector<Link> links;
  const herr_t status = H5Lvisit(
      file, H5_INDEX_NAME, H5_ITER_INC,
      [](hid_t, const char* name, const H5L_info_t* info, void* data) -> herr_t {
        static_cast<std::vector<Link>*>(data)->push_back({name, info->type});
        return 0;
      },
      &links);
  check(status, shown, "cannot list the file's contents");
  return links;
}

// The selection, written by a child process into `temporary` (see the opening comment).
void copy_selection(const fs::path& in, const fs::path& temporary, std::string_view out_name,
                    std::int64_t rows, const std::vector<RowRange>& ranges, ChildOutput& child) {
  const std::string in_name = in.string();
  const QuietErrors quiet;
  std::int64_t selected = 0;
  for (const RowRange& r : ranges) selected += r.count;
  child.step("opening it");
  const Input input = open_input(in, in_name);
  child.step("listing its contents");
  const std::vector<Link> links = all_links(input.file.get(), in_name);

  Handle output = check(H5Fcreate(temporary.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT),
                        H5Fclose, out_name, "cannot create the file");
  child.step("copying the attributes of its root");
  copy_attributes(input.file.get(), output.get(), input.size, in_name, "the root group");
  const Handle intermediate =
      check(H5Pcreate(H5P_LINK_CREATE), H5Pclose, out_name, "cannot create a property list");
  check(H5Pset_create_intermediate_group(intermediate.get(), 1), out_name, "cannot set a property");
  for (const Link& link : links) {
    const char* name = link.name.c_str();
    const std::string shown = in_quotes(printable(link.name));
    child.step(cat("copying ", shown));
    if (link.type != H5L_TYPE_HARD) {  // soft and external links are copied as links
      check(H5Lcopy(input.file.get(), name, output.get(), name, intermediate.get(), H5P_DEFAULT),
            out_name, cat("cannot copy the link ", shown));
      continue;
    }
    Handle object = check(H5Oopen(input.file.get(), name, H5P_DEFAULT), H5Oclose, in_name,
                          cat("cannot open ", shown));
    const H5I_type_t kind = H5Iget_type(object.get());
    if (kind == H5I_GROUP) {
      const Handle group =
          check(H5Gcreate2(output.get(), name, intermediate.get(), H5P_DEFAULT, H5P_DEFAULT),
                H5Gclose, out_name, cat("cannot create the group ", shown));
      copy_attributes(object.get(), group.get(), input.size, in_name, cat("the group ", shown));
      continue;
    }
    if (kind == H5I_DATASET) {
      object.close();
      const Dataset d = open_dataset(input, link.name, in_name);
      if (!d.dims.empty() && d.dims[0] == static_cast<hsize_t>(rows)) {
        copy_rows(d, output.get(), link.name, ranges, selected, input.size, in_name, out_name,
                  child);
        continue;
      }
    } else if (kind == H5I_DATATYPE) {
      if (const std::string why = type_problem(object.get()); !why.empty())
        fail(in_name,
             cat("the named type ", shown, " is malformed (", why, "); the file is corrupted"));
    }
    // Datasets without one row per transition and named datatypes are copied whole.
    check(H5Ocopy(input.file.get(), name, output.get(), name, H5P_DEFAULT, intermediate.get()),
          out_name, cat("cannot copy ", shown));
  }
  child.step("closing the selection");
  if (!output.close()) fail_hdf5(out_name, "cannot close the file");
}

}  // namespace

std::unique_ptr<DsrlSource> open_hdf5(const fs::path& path) {
  return std::make_unique<Hdf5Source>(path);
}

void write_hdf5(const fs::path& path, const DsrlDataset& dataset) {
  const std::string shown = path.string();
  const QuietErrors quiet;
  write_file_atomically(path, [&](const fs::path& temporary) {
    Handle file = check(H5Fcreate(temporary.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT),
                        H5Fclose, shown, "cannot create the file");
    for (const std::string_view key : dsrl_keys) {
      const Array& a = dataset[key];
      const std::string k(key);
      std::vector<hsize_t> dims;
      for (const std::int64_t d : a.shape) dims.push_back(static_cast<hsize_t>(d));
      const Handle space =
          check(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose,
                shown, "cannot create a dataspace");
      const auto [file_type, memory_type] = types_for(a.dtype, shown);
      const Handle d = check(H5Dcreate2(file.get(), k.c_str(), file_type.get(), space.get(),
                                        H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                             H5Dclose, shown, cat("cannot create key ", in_quotes(key)));
      if (!a.bytes.empty())
        check(H5Dwrite(d.get(), memory_type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, a.bytes.data()),
              shown, cat("cannot write key ", in_quotes(key)));
    }
    if (!file.close()) fail_hdf5(shown, "cannot close the file");
  });
}

void write_hdf5_selection(const fs::path& in, const fs::path& out, std::int64_t rows,
                          const std::vector<RowRange>& ranges) {
  const std::string out_name = out.string();
  H5open();
  write_file_atomically(out, [&](const fs::path& temporary) {
    run_in_child(in.string(), libhdf5, [&](ChildOutput& child) {
      copy_selection(in, temporary, out_name, rows, ranges, child);
    });
  });
}

}  // namespace ltt::data::detail
