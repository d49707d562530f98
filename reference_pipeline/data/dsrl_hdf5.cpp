// Reading the HDF5 store of dsrl.hpp, on the HDF5 C API (1.10 and later); dsrl_hdf5_write.cpp
// writes it. Compiled only when the library is built with HDF5 (LTT_WITH_HDF5);
// dsrl_no_hdf5.cpp stands in otherwise.
//
// Reading converts on the fly (H5Dread into native double or float). libhdf5 touches an input
// only inside run_in_child, through the checked access of hdf5_file.hpp (docs/dsrl.md,
// "Corrupted files"): the parent learns a file's layout from one child (the survey in
// Hdf5Source) and reads each column through another.

#include <hdf5.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "child_process.hpp"
#include "dsrl_store.hpp"
#include "error.hpp"
#include "hdf5_file.hpp"

namespace ltt::data::detail {

namespace fs = std::filesystem;
using namespace hdf5;

namespace {

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

// What the parent knows of one of the surveyed keys: absent, refused (error names why), or its
// column.
struct KeySurvey {
  bool present = false;
  std::string error;
  ColumnInfo info;
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
    case 1:
      return load(std::int8_t{}, std::uint8_t{});
    case 2:
      return load(std::int16_t{}, std::uint16_t{});
    case 4:
      return load(std::int32_t{}, std::uint32_t{});
    default:
      return load(std::int64_t{}, std::uint64_t{});
  }
}

// Reads all of d as doubles, a block at a time: floats and integers by value, enums by the
// integer value of each member.
void for_each_double_block_of(const Dataset& d, std::string_view file, std::string_view key,
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

class Hdf5Source final : public DsrlSource {
 public:
  // One child surveys the seven keys; every key's values are read by a child of its own, whole
  // (read_double, read_float) or a block of rows at a time (for_each_*_block), so no column
  // need be held whole to split a file of any size into episodes.
  explicit Hdf5Source(fs::path path)
      : path_(std::move(path)), name_(path_.string()), keys_(survey_keys(dsrl_keys)) {}

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
    std::vector<double> x(elements(column));
    read(key, column, {reinterpret_cast<unsigned char*>(x.data()), x.size() * sizeof(double)},
         [&](const Dataset& d, ChildOutput& out) {
           for_each_double_block_of(d, name_, key, [&](const double* p, std::size_t n) {
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
  // One child streams the key as float32 (HDF5 converts a float64 key as it reads, as
  // read_float does); the parent gathers whole blocks of rows (stream_blocks).
  void for_each_float32_block(std::string_view key, std::int64_t block_rows,
                              const RowBlockUse& use) const override {
    const ColumnInfo column = info(key);
    if (column.shape.size() != 2) fail(name_, cat(key_text(key), " is not of rank 2"));
    stream_blocks<float>(
        key, column, block_rows, column.shape[1], use, [&](const Dataset& d, ChildOutput& out) {
          for_each_block(
              d, H5T_NATIVE_FLOAT, sizeof(float),
              [&](const unsigned char* p, std::size_t n) { out.send(p, n * sizeof(float)); }, name_,
              key);
        });
  }

  // The same for a column of one value per row, as read_double converts it.
  void for_each_double_block(std::string_view key, std::int64_t block_rows,
                             const ColumnBlockUse& use) const override {
    const ColumnInfo column = info(key);
    stream_blocks<double>(key, column, block_rows, 1, use, [&](const Dataset& d, ChildOutput& out) {
      for_each_double_block_of(
          d, name_, key, [&](const double* p, std::size_t n) { out.send(p, n * sizeof(double)); });
    });
  }

 private:
  // Runs `send` on the key's dataset in a reader child (the file opened there, the key's shape
  // checked against the survey's: a file changed since is refused), its pieces going to
  // `receive` in the parent as they arrive.
  void read_in_child(std::string_view key, const ColumnInfo& column,
                     const std::function<void(const Dataset&, ChildOutput&)>& send,
                     const ChildReceiver& receive) const {
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
        receive);
  }

  // Reads `key` in a child that sends its elements as T (`send`); the parent gathers blocks of
  // block_rows rows of `width` values and hands each to `use` before it reads on, so the pipe's
  // back-pressure holds the child to one block of its own ahead.
  template <class T, class Use>
  void stream_blocks(std::string_view key, const ColumnInfo& column, std::int64_t block_rows,
                     std::int64_t width, const Use& use,
                     const std::function<void(const Dataset&, ChildOutput&)>& send) const {
    const std::int64_t rows = column.shape.at(0);
    if (width == 0) return;
    std::vector<T> block;
    std::int64_t first = 0;
    std::size_t filled = 0;  // bytes of the block received
    const auto start_block = [&] {
      block.resize(static_cast<std::size_t>(std::min(block_rows, rows - first) * width));
      filled = 0;
    };
    start_block();
    const auto receive = [&](std::span<const unsigned char> piece) {
      while (!piece.empty()) {
        const std::size_t capacity = block.size() * sizeof(T);
        if (first >= rows) throw std::runtime_error("the HDF5 reader sent more than the key holds");
        const std::size_t n = std::min(piece.size(), capacity - filled);
        std::memcpy(reinterpret_cast<unsigned char*>(block.data()) + filled, piece.data(), n);
        filled += n;
        piece = piece.subspan(n);
        if (filled == capacity) {
          use(first, std::span<const T>(block));
          first += static_cast<std::int64_t>(block.size()) / width;
          if (first < rows) start_block();
        }
      }
    };
    read_in_child(key, column, send, receive);
    if (first != rows) fail(name_, cat(key_text(key), " changed while being read"));
  }

  // Surveys `keys` in one child: each absent, refused, or its column, with the values of a
  // column of one value per row.
  std::vector<KeySurvey> survey_keys(std::span<const std::string_view> keys) const {
    H5open();  // once here rather than in every child
    const std::vector<unsigned char> bytes = run_in_child(name_, libhdf5, [&](ChildOutput& out) {
      const QuietErrors quiet;
      out.step("opening it");
      const Input in = open_input(path_, name_);
      std::vector<unsigned char> survey;
      for (std::size_t k = 0; k < keys.size(); ++k) {
        const std::string_view key = keys[k];
        const std::string name(key);
        out.step(cat("opening ", key_text(key)));
        // A key in a group exists only if its group does: libhdf5 1.10 fails, not says no,
        // on a path whose group is missing.
        const std::size_t slash = name.find('/');
        htri_t exists = 1;
        if (slash != std::string::npos)
          exists = H5Lexists(in.file.get(), name.substr(0, slash).c_str(), H5P_DEFAULT);
        if (exists > 0) exists = H5Lexists(in.file.get(), name.c_str(), H5P_DEFAULT);
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
        } catch (const DataError& e) {
          put(survey, e.what());
        }
      }
      out.send(survey.data(), survey.size());
    });
    Unpack in(bytes);
    std::vector<KeySurvey> surveyed(keys.size());
    for (KeySurvey& s : surveyed) {
      s.present = in.number() != 0;
      if (!s.present) continue;
      s.error = in.text();
      if (!s.error.empty()) continue;
      s.info.kind = static_cast<ElementKind>(in.number());
      s.info.type_text = in.text();
      s.info.shape.resize(static_cast<std::size_t>(in.number()));
      for (std::int64_t& n : s.info.shape) n = in.number();
    }
    return surveyed;
  }

  // The seven keys were surveyed on opening; the world geometry's keys are surveyed the first
  // time one is asked for, in a child of their own, so a file is read as it was before they
  // existed by every caller that does not ask (a damaged extra key never stops load_dsrl_pool).
  const KeySurvey& survey(std::string_view key) const {
    const auto position = [&](std::span<const std::string_view> keys) {
      return static_cast<std::size_t>(std::find(keys.begin(), keys.end(), key) - keys.begin());
    };
    if (const std::size_t k = position(dsrl_keys); k < std::size(dsrl_keys)) return keys_[k];
    const std::size_t w = position(world_keys);
    if (w == std::size(world_keys))
      throw std::logic_error(cat("Hdf5Source: ", in_quotes(key), " is not a DSRL key"));
    if (!world_) world_ = survey_keys(world_keys);
    return (*world_)[w];
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
    read_in_child(key, column, send, std::ref(fill));
    if (fill.filled != into.size()) fail(name_, cat(key_text(key), " changed while being read"));
  }

  fs::path path_;
  std::string name_;
  std::vector<KeySurvey> keys_;                          // of dsrl_keys
  mutable std::optional<std::vector<KeySurvey>> world_;  // of world_keys, once asked for
};

}  // namespace

std::unique_ptr<DsrlSource> open_hdf5(const fs::path& path) {
  return std::make_unique<Hdf5Source>(path);
}

}  // namespace ltt::data::detail
