// The .npy reader against files numpy wrote (np.save, np.lib.format.write_array), and the
// writer against numpy's bytes: for every supported dtype and shape, write_npy gives the same
// file as np.save.

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include <data/npy.hpp>

#include "data_test.hpp"

using namespace ltt_data_test;
using ltt::data::Array;
using ltt::data::DType;

namespace {

// Element i of every generated array: make_dsrl_fixtures.py value_at().
double value_at(DType t, std::int64_t i) {
  switch (t) {
    case DType::float32:
    case DType::float64:
      return static_cast<double>(i - 5) * 0.25;
    case DType::int64:
      return static_cast<double>((i - 5) * 1000000007);
    case DType::uint8:
      return static_cast<double>((i * 37) % 256);
    case DType::boolean:
      return i % 3 == 0 ? 1.0 : 0.0;
  }
  return 0;
}

struct Case {
  DType dtype;
  std::vector<std::int64_t> shape;
  std::string file;
};

std::vector<Case> generated_cases() {
  std::vector<Case> cases;
  const std::vector<std::vector<std::int64_t>> shapes = {{7}, {3, 4}, {2, 3, 2}, {0}, {0, 3}};
  for (const DType t : {DType::float32, DType::float64, DType::int64, DType::uint8, DType::boolean})
    for (const auto& shape : shapes) {
      std::string name(ltt::data::dtype_name(t));
      for (std::size_t i = 0; i < shape.size(); ++i)
        name.append(i == 0 ? "_" : "x").append(std::to_string(shape[i]));
      cases.push_back({t, shape, cat(name, ".npy")});
    }
  return cases;
}

std::string file_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("read_npy: every dtype and shape np.save writes, element for element") {
  for (const Case& c : generated_cases()) {
    CAPTURE(c.file);
    const Array a = ltt::data::read_npy(fixture(cat("npy/", c.file)));
    CHECK(a.dtype == c.dtype);
    CHECK(a.shape == c.shape);
    const std::vector<double> x = a.to_double();
    REQUIRE(static_cast<std::int64_t>(x.size()) == a.size());
    for (std::size_t i = 0; i < x.size(); ++i)
      CHECK(x[i] == value_at(c.dtype, static_cast<std::int64_t>(i)));
  }
  const Array f = ltt::data::read_npy(fixture("npy/float32_3x4.npy"));
  CHECK(f.values<float>()[11] == 1.5f);
  CHECK(f.rows() == 3);
  CHECK(f.row_size() == 4);
}

TEST_CASE("write_npy: the same bytes np.save writes") {
  const fs::path dir = scratch("npy_write");
  for (const Case& c : generated_cases()) {
    CAPTURE(c.file);
    const Array a = ltt::data::read_npy(fixture(cat("npy/", c.file)));
    ltt::data::write_npy(dir / c.file, a);
    CHECK(file_bytes(dir / c.file) == file_bytes(fixture(cat("npy/", c.file))));
  }
  const Array scalar = ltt::data::read_npy(fixture("npy/scalar.npy"));
  ltt::data::write_npy(dir / "scalar.npy", scalar);
  CHECK(file_bytes(dir / "scalar.npy") == file_bytes(fixture("npy/scalar.npy")));
  CHECK(no_temporaries(dir));
}

TEST_CASE("read_npy: a scalar, special values, format versions 2.0 and 3.0") {
  const Array s = ltt::data::read_npy(fixture("npy/scalar.npy"));
  CHECK(s.shape.empty());
  CHECK(s.size() == 1);
  CHECK(s.values<double>()[0] == 2.5);

  const Array special = ltt::data::read_npy(fixture("npy/special.npy"));
  const auto x = special.values<double>();
  REQUIRE(x.size() == 7);
  CHECK(x[0] == 0.0);
  CHECK(!std::signbit(x[0]));
  CHECK(std::signbit(x[1]));
  CHECK(x[2] == INFINITY);
  CHECK(x[3] == -INFINITY);
  CHECK(std::isnan(x[4]));
  CHECK(x[5] == 5e-324);
  CHECK(x[6] == 1.7976931348623157e308);

  const Array v1 = ltt::data::read_npy(fixture("npy/float64_3x4.npy"));
  for (const char* name : {"npy/version2.npy", "npy/version3.npy"}) {
    CAPTURE(name);
    const Array v = ltt::data::read_npy(fixture(name));
    CHECK(v.shape == v1.shape);
    CHECK(v.bytes == v1.bytes);
  }
}

TEST_CASE("read_npy: Fortran order is read only where it is the C layout") {
  check_data_error([] { ltt::data::read_npy(fixture("npy/fortran.npy")); },
                   {"fortran.npy", "Fortran order", "(3, 4)", "np.ascontiguousarray"});
  const Array column = ltt::data::read_npy(fixture("npy/fortran_column.npy"));
  CHECK(column.shape == std::vector<std::int64_t>{5, 1});
  CHECK(column.values<double>()[4] == value_at(DType::float64, 4));
}

TEST_CASE("read_npy: refusals name the file and say why") {
  check_data_error([] { ltt::data::read_npy(fixture("npy/big_endian.npy")); },
                   {"big_endian.npy", "'>f8'", "big-endian"});
  check_data_error([] { ltt::data::read_npy(fixture("npy/int32.npy")); },
                   {"int32.npy", "'<i4'", "not supported", "float64 '<f8'"});
  check_data_error([] { ltt::data::read_npy(fixture("npy/truncated.npy")); },
                   {"truncated.npy", "8 of the 10 elements"});
  check_data_error([] { ltt::data::read_npy(fixture("npy/not_npy.npy")); },
                   {"not_npy.npy", "not a .npy file"});
  check_data_error([] { ltt::data::read_npy(fixture("npy/absent.npy")); },
                   {"absent.npy", "cannot open"});
  check_data_error([] { ltt::data::read_npy(fixture("npy")); }, {"is a directory"});
  check_data_error(
      [] {
        ltt::data::parse_npy(std::string("\x93NUMPY\x01\x00\x10\x00{'descr': '<f8'}\n", 26),
                             "x.npy");
      },
      {"x.npy", "no 'fortran_order'"});
  check_data_error([] { ltt::data::parse_npy(std::string("\x93NUMPY\x07\x00", 8), "x.npy"); },
                   {"x.npy", "version 7"});
  // A header that announces far more than the file holds is refused before any allocation.
  const std::string huge =
      ltt::data::npy_header(DType::float64, {std::int64_t{1} << 50}) + "12345678";
  check_data_error([&] { ltt::data::parse_npy(huge, "huge.npy"); },
                   {"huge.npy", "holds 1 of the 1125899906842624 elements"});
}

TEST_CASE("read_npy_vector: one-dimensional float64 or float32 as doubles, anything else named") {
  const std::vector<double> d = ltt::data::read_npy_vector(fixture("npy/float64_7.npy"));
  const std::vector<double> f = ltt::data::read_npy_vector(fixture("npy/float32_7.npy"));
  REQUIRE(d.size() == 7);
  CHECK(f == d);
  for (std::size_t i = 0; i < d.size(); ++i)
    CHECK(d[i] == value_at(DType::float64, static_cast<std::int64_t>(i)));
  CHECK(ltt::data::read_npy_vector(fixture("npy/float64_0.npy")).empty());
  check_data_error([] { ltt::data::read_npy_vector(fixture("npy/uint8_7.npy")); },
                   {"uint8_7.npy", "holds uint8 elements", "one-dimensional float64 or float32"});
  check_data_error([] { ltt::data::read_npy_vector(fixture("npy/float64_3x4.npy")); },
                   {"float64_3x4.npy", "shape (3, 4)", "reshape(-1)"});
  check_data_error([] { ltt::data::read_npy_vector(fixture("npy/scalar.npy")); },
                   {"scalar.npy", "shape ()"});
}

TEST_CASE("bool arrays hold only 0 and 1") {
  const Array b = ltt::data::make_array(std::vector<std::uint8_t>{0, 1, 1}, true);
  std::ostringstream out;
  ltt::data::write_npy(out, b);
  std::string bytes = out.str();
  CHECK(ltt::data::parse_npy(bytes, "b.npy").bytes == b.bytes);
  bytes.back() = '\x02';
  check_data_error([&] { ltt::data::parse_npy(bytes, "b.npy"); },
                   {"b.npy", "bool element 2", "byte 2"});
}

TEST_CASE("Array: typed views check the dtype; make_array checks the shape") {
  const Array a = ltt::data::make_array(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});
  CHECK(a.values<float>()[5] == 6.0f);
  check_data_error([&] { (void)a.values<double>(); }, {"float32", "not float64"});
  check_data_error(
      [] {
        ltt::data::make_array(std::vector<double>{1, 2, 3}, {2, 2});
      },
      {"3 values", "4 elements"});
  check_data_error(
      [] {
        ltt::data::write_npy(fs::path(LTT_DATA_SCRATCH) / "no" / "such" / "dir.npy",
                             ltt::data::make_array(std::vector<double>{1}));
      },
      {"dir.npy", "cannot create a file in"});
}
