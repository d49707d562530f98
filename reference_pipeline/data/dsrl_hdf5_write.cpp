// Writing the HDF5 store of dsrl.hpp: a whole dataset (write_hdf5), and a selection of the
// rows of an input (write_hdf5_selection). A selection copies each per-row dataset with its own
// file datatype, so an h5py bool (an enum of int8 with members FALSE = 0, TRUE = 1) stays an
// enum and h5py reads it back as numpy bool. It is written by a child process (run_in_child,
// with the checked access of hdf5_file.hpp) into the temporary that write_file_atomically
// removes when the child fails, so nothing is left.

#include <hdf5.h>

#include <algorithm>
#include <array>
#include <string>
#include <utility>
#include <vector>

#include "atomic_output.hpp"
#include "child_process.hpp"
#include "dsrl_store.hpp"
#include "error.hpp"
#include "hdf5_file.hpp"
#include "world_geometry.hpp"

namespace ltt::data::detail {

namespace fs = std::filesystem;
using namespace hdf5;

namespace {

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
    case DType::float32:
      return {copy(H5T_IEEE_F32LE), copy(H5T_NATIVE_FLOAT)};
    case DType::float64:
      return {copy(H5T_IEEE_F64LE), copy(H5T_NATIVE_DOUBLE)};
    case DType::int64:
      return {copy(H5T_STD_I64LE), copy(H5T_NATIVE_INT64)};
    case DType::uint8:
      return {copy(H5T_STD_U8LE), copy(H5T_NATIVE_UINT8)};
    case DType::boolean:
      return {h5py_bool_type(file), h5py_bool_type(file)};
  }
  fail(file, "unknown element type");
}

// An object creation property list (file, group or dataset) that records no times: HDF5 stamps
// each object header with its creation and modification times by default, so two selections
// of the same rows written a second apart would differ in those bytes alone.
Handle untimed(Handle list, std::string_view file) {
  check(H5Pset_obj_track_times(list.get(), 0), file, "cannot set a property");
  return list;
}

Handle untimed_list(hid_t kind, std::string_view file) {
  return untimed(check(H5Pcreate(kind), H5Pclose, file, "cannot create a property list"), file);
}

// Bitshuffle's plugin (filter 32008) puts three values of its own (its version and the element
// size) before the user's block size and compression when a dataset is created; a stored list
// already holds them, so created again from it the user's values would move to slots 6 and 7
// and the copy would lose its LZ4 compression. Other filters overwrite their slots in place.
void unbitshuffled_parameters(hid_t list, std::string_view file) {
  constexpr H5Z_filter_t bitshuffle = 32008;
  unsigned flags = 0;
  std::size_t count = 16;
  std::array<unsigned, 16> values{};
  const herr_t found =
      H5Pget_filter_by_id2(list, bitshuffle, &flags, &count, values.data(), 0, nullptr, nullptr);
  if (found < 0) {
    H5Eclear2(H5E_DEFAULT);  // no bitshuffle in this key's pipeline
    return;
  }
  if (count < 3 || count > values.size()) return;
  check(H5Pmodify_filter(list, bitshuffle, flags, count - 3, values.data() + 3), file,
        "cannot set the bitshuffle filter's parameters");
}

// Creation property list for the sliced copy of a dataset: the source's own (chunking,
// compression, fill value) with chunks no longer than the new extent; a fresh contiguous one
// where the source's cannot serve (virtual or external storage). Neither records times.
Handle creation_list(hid_t source, const std::vector<hsize_t>& out_dims, std::string_view file) {
  Handle list = check(H5Dget_create_plist(source), H5Pclose, file,
                      "cannot read a dataset's creation properties");
  const H5D_layout_t layout = H5Pget_layout(list.get());
  if (layout == H5D_VIRTUAL || H5Pget_external_count(list.get()) > 0 || layout == H5D_COMPACT)
    return untimed_list(H5P_DATASET_CREATE, file);
  if (layout == H5D_CHUNKED) {
    std::vector<hsize_t> chunk(out_dims.size());
    const int rank = H5Pget_chunk(list.get(), static_cast<int>(chunk.size()), chunk.data());
    if (rank != static_cast<int>(chunk.size()))
      fail_hdf5(file, "cannot read a dataset's chunk shape");
    for (std::size_t i = 0; i < chunk.size(); ++i)
      chunk[i] = std::max<hsize_t>(1, std::min(chunk[i], out_dims[i]));
    check(H5Pset_chunk(list.get(), rank, chunk.data()), file, "cannot set a chunk shape");
    unbitshuffled_parameters(list.get(), file);
  }
  return untimed(std::move(list), file);
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

  const Handle access = chunk_cache_access(out_name);
  const Handle creation = untimed_list(H5P_FILE_CREATE, out_name);
  Handle output = check(H5Fcreate(temporary.c_str(), H5F_ACC_TRUNC, creation.get(), access.get()),
                        H5Fclose, out_name, "cannot create the file");
  const Handle group_creation = untimed_list(H5P_GROUP_CREATE, out_name);
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
          check(H5Gcreate2(output.get(), name, intermediate.get(), group_creation.get(),
                           H5P_DEFAULT),
                H5Gclose, out_name, cat("cannot create the group ", shown));
      copy_attributes(object.get(), group.get(), input.size, in_name, cat("the group ", shown));
      continue;
    }
    if (kind == H5I_DATASET) {
      object.close();
      const Dataset d = open_dataset(input, link.name, in_name);
      if (!d.dims.empty() && d.dims[0] == static_cast<hsize_t>(rows) &&
          !is_per_file_world_key(link.name)) {
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

void write_hdf5(const fs::path& path, const DsrlDataset& dataset) {
  const std::string shown = path.string();
  const QuietErrors quiet;
  write_file_atomically(path, [&](const fs::path& temporary) {
    Handle file = check(H5Fcreate(temporary.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT),
                        H5Fclose, shown, "cannot create the file");
    std::vector<std::pair<std::string_view, const Array*>> keys;
    for (const std::string_view key : dsrl_keys) keys.emplace_back(key, &dataset[key]);
    if (dataset.world) {
      // The world geometry's keys sit in two groups, which record no times, as a selection's.
      const Handle group_creation = untimed_list(H5P_GROUP_CREATE, shown);
      for (const char* group : {"infos", "world"})
        const Handle g = check(H5Gcreate2(file.get(), group, H5P_DEFAULT, group_creation.get(), H5P_DEFAULT),
              H5Gclose, shown, cat("cannot create the group ", in_quotes(group)));
      for (const std::string_view key : world_keys) keys.emplace_back(key, &(*dataset.world)[key]);
    }
    for (const auto& [key, array] : keys) {
      const Array& a = *array;
      const std::string k(key);
      const bool world = key.find('/') != std::string_view::npos;
      std::vector<hsize_t> dims;
      for (const std::int64_t d : a.shape) dims.push_back(static_cast<hsize_t>(d));
      const Handle space =
          check(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose,
                shown, "cannot create a dataspace");
      const auto [file_type, memory_type] = types_for(a.dtype, shown);
      const Handle creation = untimed_list(H5P_DATASET_CREATE, shown);
      const Handle d = check(H5Dcreate2(file.get(), k.c_str(), file_type.get(), space.get(),
                                        H5P_DEFAULT, world ? creation.get() : H5P_DEFAULT,
                                        H5P_DEFAULT),
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
