// The checks of hdf5_file.hpp that stand between a corrupted file and libhdf5 (docs/dsrl.md,
// "Corrupted files"). libhdf5 1.10 trusts parts of what it decodes: an enum whose base type
// claims a gigabyte makes H5Oopen copy past the object header, a float whose bits lie past its
// size makes a conversion write past its buffer, and the process dies by SIGSEGV; a corrupted
// global heap makes it loop forever. Hence run_in_child around every use of libhdf5 on an
// input, and inside it these checks before any data is trusted: the element type is well
// formed (type_problem), its filters can be decoded, and the bytes it claims are in the file
// (check_storage).

#include <hdf5.h>

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "error.hpp"
#include "hdf5_file.hpp"

namespace ltt::data::detail::hdf5 {

namespace {

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

// Elements of a type whose bytes are all in the dataset's own storage (no variable-length
// parts kept in the global heap), so the storage must hold elements times size.
bool fixed_size(hid_t type) {
  return H5Tdetect_class(type, H5T_VLEN) == 0 && H5Tis_variable_str(type) == 0 &&
         H5Tget_class(type) != H5T_REFERENCE;
}

// What ltt knows of a filter: a short name, the Debian 12 package that installs its plugin into
// libhdf5's default plugin folder (scripts/setup installs them all), and at most how many bytes
// one stored byte decodes to, from its format: zlib's technical details give deflate's 1032; an
// LZF back reference of up to 264 bytes takes 3 bytes (liblzf's lzf_c.c); an LZ4 sequence adds
// 255 match bytes per length byte (the LZ4 block format); shuffle permutes and Fletcher32
// appends a checksum. Blosc, Bitshuffle, BZip2 and the rest have no useful bound (Blosc and
// Bitshuffle may carry zstd, whose RLE blocks unpack 128 KiB from 4 bytes), so theirs is 0:
// one chunk per stored byte, since every chunk a key claims must be stored, in a byte at least.
struct FilterFacts {
  std::string_view name, package;
  hsize_t ratio = 0;
};

FilterFacts filter_facts(H5Z_filter_t filter) {
  switch (filter) {
    case H5Z_FILTER_DEFLATE:
      return {"deflate", {}, 1032};
    case H5Z_FILTER_SHUFFLE:
      return {"shuffle", {}, 1};
    case H5Z_FILTER_FLETCHER32:
      return {"fletcher32", {}, 1};
    case 307:
      return {"bzip2", "hdf5-filter-plugin", 0};
    case 32000:
      return {"lzf", "hdf5-plugin-lzf", 88};
    case 32001:
      return {"blosc", "hdf5-filter-plugin-blosc-serial", 0};
    case 32004:
      return {"lz4", "hdf5-filter-plugin", 255};
    case 32008:
      return {"bitshuffle", "bitshuffle", 0};
    default:
      return {};
  }
}

}  // namespace

std::string type_text(hid_t type) {
  const std::size_t bits = H5Tget_size(type) * 8;
  switch (H5Tget_class(type)) {
    case H5T_FLOAT:
      return cat("float", std::to_string(bits));
    case H5T_INTEGER:
      return cat(H5Tget_sign(type) == H5T_SGN_NONE ? "uint" : "int", std::to_string(bits));
    case H5T_ENUM: {
      Handle base(H5Tget_super(type), H5Tclose);
      return cat("enum of ", base.valid() ? type_text(base.get()) : "?");
    }
    case H5T_STRING:
      return "string";
    case H5T_COMPOUND:
      return "a compound type";
    case H5T_BITFIELD:
      return "a bitfield";
    case H5T_OPAQUE:
      return "an opaque type";
    case H5T_REFERENCE:
      return "references";
    case H5T_VLEN:
      return "variable-length sequences";
    case H5T_ARRAY:
      return "an array type";
    default:
      return "an unknown type";
  }
}

namespace {

// A float whose sign, exponent and mantissa lie within its precision and do not overlap.
std::string float_fields_problem(hid_t type, std::size_t precision) {
  std::size_t sign = 0, exponent = 0, exponent_bits = 0, mantissa = 0, mantissa_bits = 0;
  if (H5Tget_fields(type, &sign, &exponent, &exponent_bits, &mantissa, &mantissa_bits) < 0)
    return "a float whose fields cannot be read";
  const auto outside = [](std::size_t bit, std::size_t from, std::size_t bits) {
    return bit < from || bit >= from + bits;
  };
  const bool fits = exponent_bits > 0 && mantissa_bits > 0 && sign < precision &&
                    exponent + exponent_bits <= precision && mantissa + mantissa_bits <= precision;
  const bool apart =
      (mantissa + mantissa_bits <= exponent || exponent + exponent_bits <= mantissa) &&
      outside(sign, exponent, exponent_bits) && outside(sign, mantissa, mantissa_bits);
  if (fits && apart) return {};
  return cat("a float of ", std::to_string(precision), " bits with its sign at bit ",
             std::to_string(sign), ", exponent at ", std::to_string(exponent), " (",
             std::to_string(exponent_bits), " bits), mantissa at ", std::to_string(mantissa), " (",
             std::to_string(mantissa_bits), " bits)");
}

}  // namespace

// Why a datatype's description cannot be right, or "" when it can: what libhdf5 1.10 does not
// check when it decodes a type and what its conversions then trust. A float whose significant
// bits lie past its size sent H5T__conv_f_f writing past its buffer (crash-on-write.hdf5 in
// tests/data/hdf5-crash/, its 'rewards' at bit offset 32256 of 4 bytes).
std::string type_problem(hid_t type, int depth) {
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
      return float_fields_problem(type, precision);
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
    case H5T_TIME:
      return {};
    default:
      return "an unknown type class";
  }
}

// What a dataset claims against what the file holds, so that a corrupted dimension, address
// or filter is refused before a read trusts it: the storage is within the file; unfiltered
// data is stored whole (contiguous: from its address to no further than the file's end);
// filters can be decoded (a missing plugin is named with the Debian package that has it), and
// are asked to unpack no more than the product of their bounds (filter_ratio_bound, at most one
// chunk per stored byte); data in other files (external storage, virtual datasets) is refused.
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
    case H5D_COMPACT:
      stored_whole();
      return;
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
      chunk.resize(dims.size());
      const hsize_t chunk_bytes =
          bytes_of(chunk, H5Tget_size(type)).value_or(static_cast<hsize_t>(-1));
      const int filters = H5Pget_nfilters(creation.get());
      if (filters < 0) fail_hdf5(file, cat("cannot read the filters of ", key_text(key)));
      hsize_t ratio = 1;
      std::string names;
      for (int i = 0; i < filters; ++i) {
        unsigned flags = 0, config = 0;
        std::size_t values = 0;
        char name[64] = {};
        const H5Z_filter_t filter = H5Pget_filter2(creation.get(), static_cast<unsigned>(i), &flags,
                                                   &values, nullptr, sizeof name, name, nullptr);
        if (filter < 0) fail_hdf5(file, cat("cannot read the filters of ", key_text(key)));
        const FilterFacts facts = filter_facts(filter);
        const std::string label = !facts.name.empty() ? std::string(facts.name)
                                  : name[0] != '\0'   ? printable(name)
                                                      : std::to_string(filter);
        if (H5Zfilter_avail(filter) <= 0 || H5Zget_filter_info(filter, &config) < 0 ||
            (config & H5Z_FILTER_CONFIG_DECODE_ENABLED) == 0) {
          H5Eclear2(H5E_DEFAULT);
          refuse(cat("is stored through HDF5 filter ", std::to_string(filter), " (", label,
                     "), which this build of libhdf5 cannot decode",
                     facts.package.empty()
                         ? std::string()
                         : cat(" (its plugin is in Debian's package ", facts.package,
                               "; HDF5_PLUGIN_PATH names other plugin folders)")));
        }
        const hsize_t bound = facts.ratio != 0 ? facts.ratio : std::max<hsize_t>(chunk_bytes, 1);
        ratio = ratio > static_cast<hsize_t>(-1) / bound ? static_cast<hsize_t>(-1) : ratio * bound;
        names = cat(names, names.empty() ? "" : ", ", label);
      }
      ratio = std::min(ratio, std::max<hsize_t>(chunk_bytes, 1));
      if (filters == 0) {
        stored_whole();
      } else if (fixed_size(type) && *claimed / ratio > stored) {
        refuse(cat(claim, ", more than its filters (", names, ") unpack from the ",
                   std::to_string(stored), " bytes stored (at most ", std::to_string(ratio),
                   " to 1); the file is corrupted"));
      }
      return;
    }
    case H5D_VIRTUAL:
      refuse("is a virtual dataset; ltt reads only data stored in the file itself");
      return;
    default:
      refuse("has a storage layout this libhdf5 does not know; the file is corrupted");
  }
}

}  // namespace ltt::data::detail::hdf5
