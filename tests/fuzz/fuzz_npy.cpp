// libFuzzer target: the .npy reader (reference_pipeline/data/npy.hpp), on the bytes of a whole
// file through parse_npy, the in-memory twin of read_npy. What it accepts must hold as many
// bytes as its shape and dtype say, convert to doubles, and come back the same array when
// written with write_npy and read again; the header read alone (read_npy_header, what the
// DSRL reader checks layouts with) must agree with the whole read.

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>

#include <data/array.hpp>
#include <data/npy.hpp>

#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace ltt;
  using fuzz::accepted;
  using fuzz::check;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);

  const auto header = accepted([&] {
    std::istringstream in{std::string(bytes)};
    return data::read_npy_header(in, "fuzz.npy");
  });
  const auto array = accepted([&] { return data::parse_npy(bytes, "fuzz.npy"); });
  if (!array) return 0;
  const data::Array& a = *array;

  check(header.has_value(), "a file parse_npy accepts has a header read_npy_header accepts");
  check(header->dtype == a.dtype && header->shape == a.shape, "header and array agree");
  check(header->data_offset >= 10 &&
            static_cast<std::size_t>(header->data_offset) + a.bytes.size() <= bytes.size(),
        "the elements lie inside the file");
  for (const std::int64_t d : a.shape) check(d >= 0, "dimensions are not negative");
  check(a.bytes.size() == static_cast<std::size_t>(a.size()) * data::item_size(a.dtype),
        "size() * item_size bytes");
  check(a.to_double().size() == static_cast<std::size_t>(a.size()), "one double per element");

  std::ostringstream out;
  data::write_npy(out, a);
  const auto again = accepted([&] { return data::parse_npy(out.str(), "again.npy"); });
  check(again && again->dtype == a.dtype && again->shape == a.shape && again->bytes == a.bytes,
        "write_npy then parse_npy gives the same array");
  return 0;
}
