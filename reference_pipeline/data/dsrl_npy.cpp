// The .npy-directory store of dsrl.hpp: one .npy file per key, dir/<key>.npy.

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <system_error>

#include "atomic_output.hpp"
#include "dsrl_store.hpp"
#include "error.hpp"
#include "npy.hpp"
#include "world_geometry.hpp"

namespace ltt::data::detail {

namespace fs = std::filesystem;

namespace {

std::string errno_text() { return errno != 0 ? std::strerror(errno) : "unknown error"; }

class NpyDirectorySource final : public DsrlSource {
 public:
  explicit NpyDirectorySource(fs::path dir) : dir_(std::move(dir)), name_(dir_.string()) {}

  const std::string& name() const override { return name_; }
  bool has(std::string_view key) const override {
    std::error_code ec;
    return fs::is_regular_file(file(key), ec);
  }
  ColumnInfo info(std::string_view key) const override {
    const NpyHeader h = read_npy_header(file(key));
    return column_info(h.shape, h.dtype);
  }
  std::vector<double> read_double(std::string_view key) const override {
    return read_npy(file(key)).to_double();
  }
  Array read_float(std::string_view key, DType dtype) const override {
    Array a = read_npy(file(key));
    if (a.dtype == dtype) return a;
    // float64 to float32 straight from the bytes: a double copy of a 2e6 x 72 table is 1 GB.
    if (a.dtype == DType::float64 && dtype == DType::float32) {
      const std::span<const double> from = a.values<double>();
      std::vector<float> to(from.begin(), from.end());
      return make_array(std::move(to), a.shape);
    }
    const std::vector<double> x = a.to_double();
    Array b = dtype == DType::float32 ? make_array(std::vector<float>(x.begin(), x.end()), a.shape)
                                      : make_array(x, a.shape);
    return b;
  }
  // A block of rows at a time from the file, each element converted as read_double converts it
  // (Array::to_double on the block's bytes).
  void for_each_double_block(std::string_view key, std::int64_t block_rows,
                             const ColumnBlockUse& use) const override {
    auto [path, shown, in, h] = open_stream(key);
    std::int64_t rows = 1;
    for (const std::int64_t n : h.shape) rows *= n;  // (N,) or (N, 1): one value per row
    const std::size_t item = item_size(h.dtype);
    // The checks of read_npy, with its messages: a file shorter than its header says, a bool
    // byte other than 0 or 1.
    std::error_code ec;
    const auto size = static_cast<std::int64_t>(fs::file_size(path, ec));
    const std::int64_t available = ec ? 0 : std::max<std::int64_t>(0, size - h.data_offset);
    if (static_cast<std::uint64_t>(available) < static_cast<std::uint64_t>(rows) * item)
      fail(shown,
           cat("the file holds ", std::to_string(available / static_cast<std::int64_t>(item)),
               " of the ", std::to_string(rows), " elements its header announces (shape ",
               shape_text(h.shape), ")"));
    Array block;
    block.dtype = h.dtype;
    for (std::int64_t first = 0; first < rows; first += block_rows) {
      const std::int64_t n = std::min(block_rows, rows - first);
      block.shape = {n};
      block.bytes.resize(static_cast<std::size_t>(n) * item);
      in.read(reinterpret_cast<char*>(block.bytes.data()),
              static_cast<std::streamsize>(block.bytes.size()));
      if (!in)
        fail(shown,
             cat("ends before row ", std::to_string(first + n), " of ", std::to_string(rows)));
      if (h.dtype == DType::boolean)
        for (std::size_t i = 0; i < block.bytes.size(); ++i)
          if (block.bytes[i] != std::byte{0} && block.bytes[i] != std::byte{1})
            fail(shown, cat("bool element ", std::to_string(first + static_cast<std::int64_t>(i)),
                            " holds byte ", std::to_string(std::to_integer<int>(block.bytes[i])),
                            ", not 0 or 1"));
      use(first, block.to_double());
    }
  }

  // A block of rows at a time from the file: seek past the header, read, convert.
  void for_each_float32_block(std::string_view key, std::int64_t block_rows,
                              const RowBlockUse& use) const override {
    auto [path, shown, in, h] = open_stream(key);
    if ((h.dtype != DType::float32 && h.dtype != DType::float64) || h.shape.size() != 2)
      fail(shown, "is not a float32 or float64 array of rank 2");
    const std::int64_t rows = h.shape[0], width = h.shape[1];
    const auto item = static_cast<std::int64_t>(item_size(h.dtype));
    std::vector<unsigned char> raw;
    std::vector<float> block;
    for (std::int64_t first = 0; first < rows; first += block_rows) {
      const std::int64_t n = std::min(block_rows, rows - first);
      const auto count = static_cast<std::size_t>(n * width);
      raw.resize(count * static_cast<std::size_t>(item));
      in.read(reinterpret_cast<char*>(raw.data()), static_cast<std::streamsize>(raw.size()));
      if (!in)
        fail(shown,
             cat("ends before row ", std::to_string(first + n), " of ", std::to_string(rows)));
      block.resize(count);
      if (h.dtype == DType::float32) {
        std::memcpy(block.data(), raw.data(), raw.size());
      } else {
        // As read_float converts: each double rounded to the nearest float.
        for (std::size_t i = 0; i < count; ++i) {
          double v;
          std::memcpy(&v, raw.data() + i * sizeof v, sizeof v);
          block[i] = static_cast<float>(v);
        }
      }
      use(first, block);
    }
  }

 private:
  fs::path file(std::string_view key) const { return dir_ / cat(key, ".npy"); }

  // A key's file opened for reading a block at a time, positioned after its header.
  struct OpenStream {
    fs::path path;
    std::string shown;
    std::ifstream in;
    NpyHeader h;
  };
  OpenStream open_stream(std::string_view key) const {
    OpenStream o;
    o.path = file(key);
    o.shown = o.path.string();
    errno = 0;
    o.in.open(o.path, std::ios::binary);
    if (!o.in) fail(o.shown, cat("cannot open it: ", errno_text()));
    o.h = read_npy_header(o.in, o.shown);
    return o;
  }
  fs::path dir_;
  std::string name_;
};

void write_stream(const fs::path& path, std::string_view shown,
                  const std::function<void(std::ostream&)>& write) {
  errno = 0;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out)
    fail(shown,
         cat("cannot open ", in_quotes(path.filename().string()), " for writing: ", errno_text()));
  write(out);
  out.close();
  if (!out)
    fail(shown, cat("write of ", in_quotes(path.filename().string()), " failed: ", errno_text()));
}

}  // namespace

std::unique_ptr<DsrlSource> open_npy_directory(const fs::path& path) {
  return std::make_unique<NpyDirectorySource>(path);
}

void write_npy_directory(const fs::path& path, const DsrlDataset& dataset) {
  write_directory_atomically(path, [&](const fs::path& temporary) {
    for (const std::string_view key : dsrl_keys)
      write_stream(temporary / cat(key, ".npy"), path.string(),
                   [&](std::ostream& out) { write_npy(out, dataset[key]); });
    if (!dataset.world) return;
    for (const std::string_view key : world_keys) {
      const fs::path file = temporary / cat(key, ".npy");
      std::error_code ec;
      fs::create_directories(file.parent_path(), ec);
      if (ec)
        fail(path.string(), cat("cannot create ", in_quotes(file.parent_path().filename().string()),
                                ": ", ec.message()));
      write_stream(file, path.string(),
                   [&](std::ostream& out) { write_npy(out, (*dataset.world)[key]); });
    }
  });
}

// Every .npy file of `in` (and of its infos/, the world geometry's rows) whose leading
// dimension is `rows` is cut to the ranges; any other .npy file (world/'s among them) is copied
// as it is; files that
// are not .npy are left behind.
void write_npy_directory_selection(const fs::path& in, const fs::path& out, std::int64_t rows,
                                   const std::vector<RowRange>& ranges) {
  std::int64_t selected = 0;
  for (const RowRange& r : ranges) selected += r.count;
  // Sorted, so the output does not depend on listing order; the world geometry's files
  // (infos/, world/) go with the rest, one level down.
  std::map<std::string, fs::path> files;
  for (const std::string_view sub : {"", "infos", "world"}) {
    const fs::path dir = in / sub;
    std::error_code ec;
    if (!sub.empty() && (fs::is_symlink(dir, ec) || !fs::is_directory(dir, ec))) continue;
    for (const fs::directory_entry& e : fs::directory_iterator(dir))
      if (e.is_regular_file() && e.path().extension() == ".npy")
        files.emplace((fs::path(sub) / e.path().filename()).string(), e.path());
  }

  write_directory_atomically(out, [&](const fs::path& temporary) {
    for (const auto& [filename, source] : files) {
      const std::string shown = source.string();
      errno = 0;
      std::ifstream input(source, std::ios::binary);
      if (!input) fail(shown, cat("cannot open: ", errno_text()));
      const NpyHeader h = read_npy_header(input, shown);
      const fs::path target = temporary / filename;
      if (std::error_code ec; !fs::create_directories(target.parent_path(), ec) && ec)
        fail(out.string(),
             cat("cannot create ", in_quotes(target.parent_path().filename().string()), ": ",
                 ec.message()));
      if (h.shape.empty() || h.shape[0] != rows || is_per_file_world_key(filename)) {
        input.close();
        std::error_code ec;
        if (!fs::copy_file(source, target, ec)) fail(shown, cat("cannot copy: ", ec.message()));
        continue;
      }
      std::vector<std::int64_t> shape = h.shape;
      shape[0] = selected;
      std::int64_t row_bytes = static_cast<std::int64_t>(item_size(h.dtype));
      for (std::size_t i = 1; i < h.shape.size(); ++i) row_bytes *= h.shape[i];
      write_stream(target, out.string(), [&](std::ostream& output) {
        const std::string header = npy_header(h.dtype, shape);
        output.write(header.data(), static_cast<std::streamsize>(header.size()));
        if (row_bytes == 0) return;
        const std::int64_t block_rows = std::max<std::int64_t>(1, copy_block_bytes / row_bytes);
        std::vector<char> buffer;
        for (const RowRange& r : ranges) {
          input.seekg(h.data_offset + r.start * row_bytes);
          for (std::int64_t done = 0; done < r.count;) {
            const std::int64_t n = std::min(block_rows, r.count - done);
            buffer.resize(static_cast<std::size_t>(n * row_bytes));
            input.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
            if (input.gcount() != static_cast<std::streamsize>(buffer.size()))
              fail(shown, cat("the file ends before row ", std::to_string(r.start + done + n),
                              " of the ", std::to_string(rows), " its header announces"));
            output.write(buffer.data(), static_cast<std::streamsize>(buffer.size()));
            done += n;
          }
        }
      });
    }
  });
}

}  // namespace ltt::data::detail
