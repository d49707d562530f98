#pragma once
// An n-dimensional array of one of the element types the data layer reads and writes: the
// columns of a DSRL dataset, pools, masks and index lists. Elements are stored little-endian
// in C (row-major) order, as numpy and h5py hold them in memory on this machine, so an Array
// goes to a .npy file or an HDF5 dataset without reordering.
//
//   Array a = make_array(std::vector<float>{...}, {1000, 72});   // observations
//   std::span<const float> x = a.values<float>();                  // throws on another dtype
//   std::vector<double> r = a.to_double();                         // any dtype, converted

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "error.hpp"

namespace ltt::data {

static_assert(std::endian::native == std::endian::little,
              "the data layer stores arrays little-endian, as this machine does");

// bool is one byte holding 0 or 1 (numpy's '|b1', h5py's FALSE/TRUE enum); it is read and
// written through std::uint8_t.
enum class DType { float32, float64, int64, uint8, boolean };

inline std::size_t item_size(DType t) {
  switch (t) {
    case DType::float32:
      return 4;
    case DType::float64:
      return 8;
    case DType::int64:
      return 8;
    case DType::uint8:
      return 1;
    case DType::boolean:
      return 1;
  }
  return 0;
}

// numpy's names: float32, float64, int64, uint8, bool.
inline std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::float32:
      return "float32";
    case DType::float64:
      return "float64";
    case DType::int64:
      return "int64";
    case DType::uint8:
      return "uint8";
    case DType::boolean:
      return "bool";
  }
  return "?";
}

// A shape as Python writes a tuple: (), (7,), (3, 4). For messages and .npy headers.
inline std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) s.append(", ");
    s.append(std::to_string(shape[i]));
  }
  if (shape.size() == 1) s.append(",");
  return s.append(")");
}

template <class T>
constexpr bool holds(DType t) {
  if constexpr (std::is_same_v<T, float>) return t == DType::float32;
  if constexpr (std::is_same_v<T, double>) return t == DType::float64;
  if constexpr (std::is_same_v<T, std::int64_t>) return t == DType::int64;
  if constexpr (std::is_same_v<T, std::uint8_t>) return t == DType::uint8 || t == DType::boolean;
  return false;
}

template <class T>
constexpr DType dtype_of() {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double> ||
                    std::is_same_v<T, std::int64_t> || std::is_same_v<T, std::uint8_t>,
                "an Array holds float, double, std::int64_t or std::uint8_t");
  if constexpr (std::is_same_v<T, float>) return DType::float32;
  if constexpr (std::is_same_v<T, double>) return DType::float64;
  if constexpr (std::is_same_v<T, std::int64_t>) return DType::int64;
  return DType::uint8;
}

struct Array {
  DType dtype = DType::float64;
  std::vector<std::int64_t> shape;  // empty for a scalar
  std::vector<std::byte> bytes;     // size() * item_size(dtype) bytes, C order

  std::int64_t size() const {
    std::int64_t n = 1;
    for (const std::int64_t d : shape) n *= d;
    return n;
  }
  int rank() const { return static_cast<int>(shape.size()); }
  // The leading dimension (rows of a per-transition column); 1 for a scalar.
  std::int64_t rows() const { return shape.empty() ? 1 : shape.front(); }
  // Elements per row: the product of the trailing dimensions.
  std::int64_t row_size() const {
    std::int64_t n = 1;
    for (std::size_t i = 1; i < shape.size(); ++i) n *= shape[i];
    return n;
  }

  // The elements as T, which must be the stored type (std::uint8_t for uint8 and bool).
  template <class T>
  std::span<const T> values() const& {
    if (!holds<T>(dtype))
      throw DataError(detail::cat("Array::values: the array holds ", dtype_name(dtype), ", not ",
                                  dtype_name(dtype_of<T>())));
    return {reinterpret_cast<const T*>(bytes.data()), static_cast<std::size_t>(size())};
  }
  template <class T>
  std::span<T> values() & {
    if (!holds<T>(dtype))
      throw DataError(detail::cat("Array::values: the array holds ", dtype_name(dtype), ", not ",
                                  dtype_name(dtype_of<T>())));
    return {reinterpret_cast<T*>(bytes.data()), static_cast<std::size_t>(size())};
  }
  // A view into a temporary would dangle: keep the Array in a variable first.
  template <class T>
  std::span<const T> values() const&& = delete;

  // Every element as a double, whatever the dtype (int64 beyond 2^53 rounds).
  std::vector<double> to_double() const {
    std::vector<double> x(static_cast<std::size_t>(size()));
    const auto convert = [&](auto tag) {
      using T = decltype(tag);
      for (std::size_t i = 0; i < x.size(); ++i) {
        T v;
        std::memcpy(&v, bytes.data() + i * sizeof(T), sizeof(T));
        x[i] = static_cast<double>(v);
      }
    };
    switch (dtype) {
      case DType::float32:
        convert(float{});
        break;
      case DType::float64:
        convert(double{});
        break;
      case DType::int64:
        convert(std::int64_t{});
        break;
      case DType::uint8:
      case DType::boolean:
        convert(std::uint8_t{});
        break;
    }
    return x;
  }
};

// An Array of the given shape holding values (values.size() must equal the product of shape;
// an empty shape is a scalar). boolean = true stores std::uint8_t values as dtype bool.
template <class T>
Array make_array(const std::vector<T>& values, std::vector<std::int64_t> shape,
                 bool boolean = false) {
  Array a;
  a.dtype = boolean ? DType::boolean : dtype_of<T>();
  if (boolean && !std::is_same_v<T, std::uint8_t>)
    throw DataError("make_array: a bool array is made from std::uint8_t values");
  a.shape = std::move(shape);
  for (const std::int64_t d : a.shape)
    if (d < 0)
      throw DataError(
          detail::cat("make_array: shape holds a negative dimension ", std::to_string(d)));
  if (a.size() != static_cast<std::int64_t>(values.size()))
    throw DataError(detail::cat("make_array: ", std::to_string(values.size()),
                                " values do not fill a shape of ", std::to_string(a.size()),
                                " elements"));
  a.bytes.resize(values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(a.bytes.data(), values.data(), a.bytes.size());
  return a;
}

// A one-dimensional Array.
template <class T>
Array make_array(const std::vector<T>& values, bool boolean = false) {
  return make_array(values, {static_cast<std::int64_t>(values.size())}, boolean);
}

}  // namespace ltt::data
