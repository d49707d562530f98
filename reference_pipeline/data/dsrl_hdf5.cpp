// The HDF5 store of dsrl.hpp, on the HDF5 C API (1.10 and later). Compiled only when the
// library is built with HDF5 (LTT_WITH_HDF5); dsrl_no_hdf5.cpp stands in otherwise.
//
// Reading converts on the fly (H5Dread into native double or float). Writing a selection
// copies each per-row dataset with its own file datatype, so an h5py bool (an enum of int8
// with members FALSE = 0, TRUE = 1) stays an enum and h5py reads it back as numpy bool.

#include <hdf5.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "atomic_output.hpp"
#include "dsrl_store.hpp"
#include "error.hpp"

namespace ltt::data::detail {

namespace fs = std::filesystem;

namespace {

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
  return text;
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

std::vector<hsize_t> dimensions(hid_t space) {
  const int rank = H5Sget_simple_extent_ndims(space);
  std::vector<hsize_t> dims(static_cast<std::size_t>(std::max(rank, 0)));
  if (rank > 0) H5Sget_simple_extent_dims(space, dims.data(), nullptr);
  return dims;
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

class Hdf5Source final : public DsrlSource {
 public:
  explicit Hdf5Source(const fs::path& path) : name_(path.string()) {
    const QuietErrors quiet;
    const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    if (file < 0) {
      std::ifstream in(path, std::ios::binary);
      if (!in) fail(name_, "cannot read it");
      char signature[8] = {};
      in.read(signature, 8);  // a file shorter than the signature is simply not HDF5
      if (in.gcount() < 8 ||
          std::string_view(signature, 8) != std::string_view("\x89HDF\r\n\x1a\n", 8))
        fail(name_, "not an HDF5 file (no HDF5 signature at its start)");
      fail_hdf5(name_, "cannot open it as HDF5");
    }
    file_ = Handle(file, H5Fclose);
  }

  const std::string& name() const override { return name_; }

  bool has(std::string_view key) const override {
    const QuietErrors quiet;
    const std::string k(key);
    return H5Lexists(file_.get(), k.c_str(), H5P_DEFAULT) > 0;
  }

  ColumnInfo info(std::string_view key) const override {
    const QuietErrors quiet;
    const Handle d = open(key);
    const Handle space =
        check(H5Dget_space(d.get()), H5Sclose, name_, where(key, "cannot read the shape of"));
    const Handle type =
        check(H5Dget_type(d.get()), H5Tclose, name_, where(key, "cannot read the type of"));
    ColumnInfo info;
    for (const hsize_t n : dimensions(space.get()))
      info.shape.push_back(static_cast<std::int64_t>(n));
    info.type_text = type_text(type.get());
    switch (H5Tget_class(type.get())) {
      case H5T_FLOAT: info.kind = ElementKind::floating; break;
      case H5T_INTEGER: info.kind = ElementKind::integer; break;
      case H5T_ENUM: {
        const Handle base(H5Tget_super(type.get()), H5Tclose);
        info.kind = base.valid() && H5Tget_class(base.get()) == H5T_INTEGER
                        ? ElementKind::enumeration
                        : ElementKind::other;
        break;
      }
      default: info.kind = ElementKind::other;
    }
    return info;
  }

  std::vector<double> read_double(std::string_view key) const override {
    const QuietErrors quiet;
    const Handle d = open(key);
    const Handle type =
        check(H5Dget_type(d.get()), H5Tclose, name_, where(key, "cannot read the type of"));
    const std::size_t n = elements(d, key);
    std::vector<double> x(n);
    if (H5Tget_class(type.get()) != H5T_ENUM) {
      if (n > 0)
        check(H5Dread(d.get(), H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, x.data()), name_,
              where(key, "cannot read"));
      return x;
    }
    // HDF5 converts an enum only to another enum, so the values are read as the native form
    // of the file's enum and taken by the integer value of each member.
    const Handle native = check(H5Tget_native_type(type.get(), H5T_DIR_ASCEND), H5Tclose, name_,
                                where(key, "cannot convert the type of"));
    const Handle base =
        check(H5Tget_super(native.get()), H5Tclose, name_, where(key, "cannot read the type of"));
    const std::size_t size = H5Tget_size(base.get());
    const bool is_signed = H5Tget_sign(base.get()) != H5T_SGN_NONE;
    std::vector<unsigned char> raw(n * size);
    if (n > 0)
      check(H5Dread(d.get(), native.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, raw.data()), name_,
            where(key, "cannot read"));
    for (std::size_t i = 0; i < n; ++i) {
      const unsigned char* p = raw.data() + i * size;
      switch (size) {
        case 1: x[i] = is_signed ? static_cast<double>(static_cast<signed char>(*p)) : *p; break;
        case 2: x[i] = load<std::int16_t, std::uint16_t>(p, is_signed); break;
        case 4: x[i] = load<std::int32_t, std::uint32_t>(p, is_signed); break;
        case 8: x[i] = load<std::int64_t, std::uint64_t>(p, is_signed); break;
        default:
          fail(name_, cat("key ", in_quotes(key), " is an enum of ", std::to_string(size),
                          "-byte integers"));
      }
    }
    return x;
  }

  Array read_float(std::string_view key, DType dtype) const override {
    const QuietErrors quiet;
    const Handle d = open(key);
    const Handle space =
        check(H5Dget_space(d.get()), H5Sclose, name_, where(key, "cannot read the shape of"));
    Array a;
    a.dtype = dtype;
    for (const hsize_t n : dimensions(space.get())) a.shape.push_back(static_cast<std::int64_t>(n));
    a.bytes.resize(static_cast<std::size_t>(a.size()) * item_size(dtype));
    if (!a.bytes.empty())
      check(H5Dread(d.get(), dtype == DType::float32 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE,
                    H5S_ALL, H5S_ALL, H5P_DEFAULT, a.bytes.data()),
            name_, where(key, "cannot read"));
    return a;
  }

 private:
  template <class S, class U>
  static double load(const unsigned char* p, bool is_signed) {
    if (is_signed) {
      S v;
      std::memcpy(&v, p, sizeof v);
      return static_cast<double>(v);
    }
    U v;
    std::memcpy(&v, p, sizeof v);
    return static_cast<double>(v);
  }

  static std::string where(std::string_view key, std::string_view what) {
    return cat(what, " key ", in_quotes(key));
  }

  Handle open(std::string_view key) const {
    const std::string k(key);
    const Handle object = check(H5Oopen(file_.get(), k.c_str(), H5P_DEFAULT), H5Oclose, name_,
                                where(key, "cannot open"));
    if (H5Iget_type(object.get()) != H5I_DATASET)
      fail(name_, cat("key ", in_quotes(key), " is a group, not a dataset"));
    return check(H5Dopen2(file_.get(), k.c_str(), H5P_DEFAULT), H5Dclose, name_,
                 where(key, "cannot open"));
  }

  std::size_t elements(const Handle& d, std::string_view key) const {
    const Handle space =
        check(H5Dget_space(d.get()), H5Sclose, name_, where(key, "cannot read the shape of"));
    const hssize_t n = H5Sget_simple_extent_npoints(space.get());
    if (n < 0) fail_hdf5(name_, where(key, "cannot read the shape of"));
    return static_cast<std::size_t>(n);
  }

  std::string name_;
  Handle file_;
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

// Copies every attribute of one object onto another, each with its own type.
void copy_attributes(hid_t from, hid_t to, std::string_view file) {
  struct Context {
    hid_t to;
    std::string_view file;
  } context{to, file};
  const herr_t status = H5Aiterate2(
      from, H5_INDEX_NAME, H5_ITER_NATIVE, nullptr,
      [](hid_t object, const char* name, const H5A_info_t*, void* data) -> herr_t {
        const auto& c = *static_cast<Context*>(data);
        Handle a(H5Aopen(object, name, H5P_DEFAULT), H5Aclose);
        if (!a.valid()) return -1;
        Handle type(H5Aget_type(a.get()), H5Tclose);
        Handle space(H5Aget_space(a.get()), H5Sclose);
        if (!type.valid() || !space.valid()) return -1;
        Handle memory(H5Tget_native_type(type.get(), H5T_DIR_ASCEND), H5Tclose);
        if (!memory.valid()) return -1;
        const hssize_t n = H5Sget_select_npoints(space.get());
        std::vector<unsigned char> buffer(static_cast<std::size_t>(std::max<hssize_t>(n, 1)) *
                                          H5Tget_size(memory.get()));
        if (H5Aread(a.get(), memory.get(), buffer.data()) < 0) return -1;
        Handle copy(H5Acreate2(c.to, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT),
                    H5Aclose);
        const bool ok = copy.valid() && H5Awrite(copy.get(), memory.get(), buffer.data()) >= 0;
        if (H5Tdetect_class(memory.get(), H5T_VLEN) > 0 || H5Tis_variable_str(memory.get()) > 0)
          H5Dvlen_reclaim(memory.get(), space.get(), H5P_DEFAULT, buffer.data());
        return ok ? 0 : -1;
      },
      &context);
  check(status, file, "cannot copy the attributes");
}

// Copies the rows of `ranges` of dataset `name`, one range after another, into a new
// dataset of the same name, type and trailing shape in `out`.
void copy_rows(hid_t in, hid_t out, const std::string& name, const std::vector<RowRange>& ranges,
               std::int64_t selected, std::string_view file) {
  const auto what = [&](std::string_view verb) { return cat(verb, " key ", in_quotes(name)); };
  const Handle source =
      check(H5Dopen2(in, name.c_str(), H5P_DEFAULT), H5Dclose, file, what("cannot open"));
  const Handle file_type =
      check(H5Dget_type(source.get()), H5Tclose, file, what("cannot read the type of"));
  const Handle type =
      check(H5Tcopy(file_type.get()), H5Tclose, file, what("cannot copy the type of"));
  const Handle memory = check(H5Tget_native_type(type.get(), H5T_DIR_ASCEND), H5Tclose, file,
                              what("cannot convert the type of"));
  const Handle source_space =
      check(H5Dget_space(source.get()), H5Sclose, file, what("cannot read the shape of"));
  const std::vector<hsize_t> dims = dimensions(source_space.get());
  if (dims.empty()) fail(file, what("cannot slice the scalar"));
  std::vector<hsize_t> out_dims = dims;
  out_dims[0] = static_cast<hsize_t>(selected);

  const Handle out_space =
      check(H5Screate_simple(static_cast<int>(out_dims.size()), out_dims.data(), nullptr), H5Sclose,
            file, "cannot create a dataspace");
  const Handle links =
      check(H5Pcreate(H5P_LINK_CREATE), H5Pclose, file, "cannot create a property list");
  check(H5Pset_create_intermediate_group(links.get(), 1), file, "cannot set a property");
  const Handle creation = creation_list(source.get(), out_dims, file);
  const Handle target = check(H5Dcreate2(out, name.c_str(), type.get(), out_space.get(),
                                         links.get(), creation.get(), H5P_DEFAULT),
                              H5Dclose, file, what("cannot create"));
  copy_attributes(source.get(), target.get(), file);

  hsize_t row_elements = 1;
  for (std::size_t i = 1; i < dims.size(); ++i) row_elements *= dims[i];
  const auto row_bytes = static_cast<std::int64_t>(row_elements * H5Tget_size(memory.get()));
  if (row_bytes == 0) return;
  const bool variable =
      H5Tdetect_class(memory.get(), H5T_VLEN) > 0 || H5Tis_variable_str(memory.get()) > 0;
  const std::int64_t block_rows = std::max<std::int64_t>(1, copy_block_bytes / row_bytes);
  std::vector<unsigned char> buffer;
  std::vector<hsize_t> at(dims.size(), 0), count = dims, to(dims.size(), 0);
  std::int64_t written = 0;
  for (const RowRange& r : ranges) {
    for (std::int64_t done = 0; done < r.count;) {
      const std::int64_t n = std::min(block_rows, r.count - done);
      at[0] = static_cast<hsize_t>(r.start + done);
      to[0] = static_cast<hsize_t>(written);
      count[0] = static_cast<hsize_t>(n);
      buffer.resize(static_cast<std::size_t>(n * row_bytes));
      const Handle memory_space =
          check(H5Screate_simple(static_cast<int>(count.size()), count.data(), nullptr), H5Sclose,
                file, "cannot create a dataspace");
      check(H5Sselect_hyperslab(source_space.get(), H5S_SELECT_SET, at.data(), nullptr,
                                count.data(), nullptr),
            file, what("cannot select rows of"));
      check(H5Sselect_hyperslab(out_space.get(), H5S_SELECT_SET, to.data(), nullptr, count.data(),
                                nullptr),
            file, what("cannot select rows of"));
      check(H5Dread(source.get(), memory.get(), memory_space.get(), source_space.get(), H5P_DEFAULT,
                    buffer.data()),
            file, what("cannot read"));
      const herr_t wrote = H5Dwrite(target.get(), memory.get(), memory_space.get(), out_space.get(),
                                    H5P_DEFAULT, buffer.data());
      if (variable) H5Dvlen_reclaim(memory.get(), memory_space.get(), H5P_DEFAULT, buffer.data());
      check(wrote, file, what("cannot write"));
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
  const std::string in_name = in.string(), out_name = out.string();
  const QuietErrors quiet;
  std::int64_t selected = 0;
  for (const RowRange& r : ranges) selected += r.count;
  const Handle input = check(H5Fopen(in.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose, in_name,
                             "cannot open it as HDF5");
  const std::vector<Link> links = all_links(input.get(), in_name);

  write_file_atomically(out, [&](const fs::path& temporary) {
    Handle output = check(H5Fcreate(temporary.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT),
                          H5Fclose, out_name, "cannot create the file");
    copy_attributes(input.get(), output.get(), in_name);
    const Handle intermediate =
        check(H5Pcreate(H5P_LINK_CREATE), H5Pclose, out_name, "cannot create a property list");
    check(H5Pset_create_intermediate_group(intermediate.get(), 1), out_name,
          "cannot set a property");
    for (const Link& link : links) {
      const char* name = link.name.c_str();
      if (link.type != H5L_TYPE_HARD) {  // soft and external links are copied as links
        check(H5Lcopy(input.get(), name, output.get(), name, intermediate.get(), H5P_DEFAULT),
              out_name, cat("cannot copy the link ", in_quotes(link.name)));
        continue;
      }
      const Handle object = check(H5Oopen(input.get(), name, H5P_DEFAULT), H5Oclose, in_name,
                                  cat("cannot open ", in_quotes(link.name)));
      const H5I_type_t kind = H5Iget_type(object.get());
      if (kind == H5I_GROUP) {
        const Handle group =
            check(H5Gcreate2(output.get(), name, intermediate.get(), H5P_DEFAULT, H5P_DEFAULT),
                  H5Gclose, out_name, cat("cannot create the group ", in_quotes(link.name)));
        copy_attributes(object.get(), group.get(), in_name);
        continue;
      }
      if (kind == H5I_DATASET) {
        const Handle space = check(H5Dget_space(object.get()), H5Sclose, in_name,
                                   cat("cannot read the shape of key ", in_quotes(link.name)));
        const std::vector<hsize_t> dims = dimensions(space.get());
        if (!dims.empty() && dims[0] == static_cast<hsize_t>(rows)) {
          copy_rows(input.get(), output.get(), link.name, ranges, selected, out_name);
          continue;
        }
      }
      // Datasets without one row per transition and named datatypes are copied whole.
      check(H5Ocopy(input.get(), name, output.get(), name, H5P_DEFAULT, intermediate.get()),
            out_name, cat("cannot copy ", in_quotes(link.name)));
    }
    if (!output.close()) fail_hdf5(out_name, "cannot close the file");
  });
}

}  // namespace ltt::data::detail
