// The program's JSON writer: structure, escaping, shortest round-trip numbers (read back by
// Python bit for bit), and misuse caught.

#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <limits>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <certification/format.hpp>

#include "run_program.hpp"

using ltt::certification::JsonWriter;

TEST_CASE("JsonWriter: nested objects and arrays, commas in the right places") {
  std::ostringstream out;
  JsonWriter json(out);
  json.begin_object()
      .field("a", 1)
      .field("b", std::int64_t{-2})
      .field("ok", true)
      .field("none", std::optional<double>{})
      .field("some", std::optional<std::int64_t>{3});
  json.key("list").begin_array().value(0.5).value("x").begin_object().end_object().end_array();
  json.key("empty").begin_array().end_array();
  json.end_object();
  CHECK(json.complete());
  CHECK(out.str() ==
        R"({"a":1,"b":-2,"ok":true,"none":null,"some":3,"list":[0.5,"x",{}],"empty":[]})");
}

TEST_CASE("JsonWriter: numbers are the shortest decimal; NaN and infinities become null") {
  std::ostringstream out;
  JsonWriter json(out);
  const double third = 1.0 / 3, tiny = 4.9406564584124654e-324, big = 1.7976931348623157e308;
  json.begin_array()
      .value(0.1)
      .value(third)
      .value(tiny)
      .value(big)
      .value(-0.0)
      .value(std::nan(""))
      .value(std::numeric_limits<double>::infinity())
      .value(std::int64_t{1} << 53)
      .end_array();
  CHECK(out.str() ==
        "[0.1,0.3333333333333333,5e-324,1.7976931348623157e+308,-0,null,null,9007199254740992]");
  const auto values =
      ltt_cli_test::numbers("[0.1, 0.3333333333333333, 5e-324, 1.7976931348623157e+308]");
  CHECK(values[0] == 0.1);
  CHECK(values[1] == third);
  CHECK(values[2] == tiny);
  CHECK(values[3] == big);
}

// Python's json module is the independent reader: each number must come back as the same
// double, bit for bit, and carry exactly as many significant digits as Python's repr, the
// shortest decimal that round-trips (David Gay's algorithm, another implementation than
// std::to_chars). The doubles: the edges of the format, the decimals the program prints most
// (alpha, delta, grid quantiles, p-values), and random bit patterns over every exponent. (Not
// -0.0: Python reads the token "-0" as the integer 0, as it reads "25" as an integer.)
TEST_CASE("JsonWriter: every number is the shortest decimal, read back by Python bit for bit") {
  std::vector<double> x = {0.1,
                           0.25,
                           0.85,
                           0.7,
                           0.55,
                           0.3,
                           0.9,
                           0.30000000000000004,
                           1.0 / 3,
                           2.0 / 3,
                           1e-5,
                           1.5e-7,
                           1e16,
                           1e21,
                           1e22,
                           123456789012345680.0,
                           0.0,
                           1.0,
                           -2.5,
                           9007199254740993.0,
                           4503599627370497.5,
                           std::numeric_limits<double>::min(),
                           std::numeric_limits<double>::denorm_min(),
                           std::nextafter(std::numeric_limits<double>::min(), 0.0),
                           std::numeric_limits<double>::max(),
                           std::numeric_limits<double>::epsilon(),
                           1 - 0x1p-53,
                           1 + 0x1p-52};
  for (int j = 0; j <= 20; ++j) x.push_back(0.85 - 0.05 * j);  // a grid as a loop makes it
  std::mt19937_64 bits(20261126);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  while (x.size() < 4000) {
    const double r = std::bit_cast<double>(bits());
    if (std::isfinite(r)) x.push_back(r);
    x.push_back(unit(bits));
  }
  std::ostringstream out;
  ltt::certification::JsonWriter json(out);
  json.begin_array();
  for (const double v : x) json.value(v);
  json.end_array();
  const auto dir = ltt_cli_test::scratch_dir();
  std::ofstream(dir / "numbers.json", std::ios::binary) << out.str();
  {
    std::ofstream expected(dir / "numbers.bits");
    char hex[24];
    for (const double v : x) {
      std::snprintf(hex, sizeof hex, "%016llx\n",
                    static_cast<unsigned long long>(std::bit_cast<std::uint64_t>(v)));
      expected << hex;
    }
  }
  std::ofstream(dir / "numbers.py", std::ios::binary)
      << "import json, re, struct, sys\n"
         "text = open(sys.argv[1]).read()\n"
         "values = json.loads(text)\n"
         "tokens = text[1:-1].split(',')\n"
         "bits = open(sys.argv[2]).read().split()\n"
         "def digits(t):\n"
         "    m = re.sub(r'[eE].*$', '', t.lstrip('-')).replace('.', '')\n"
         "    return m.strip('0')\n"
         "bad = [(t, b) for t, v, b in zip(tokens, values, bits)\n"
         "       if struct.pack('>d', float(v)).hex() != b or digits(t) != "
         "digits(repr(float(v)))]\n"
         "print(len(values), len(bad), bad[:5])\n";
  const ltt_cli_test::Result r = ltt_cli_test::shell(
      std::string("'") + LTT_PYTHON3 + "' '" + (dir / "numbers.py").string() + "' '" +
      (dir / "numbers.json").string() + "' '" + (dir / "numbers.bits").string() + "'");
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(r.out == std::to_string(x.size()) + " 0 []\n");
}

TEST_CASE("JsonWriter: strings are escaped, and Python reads them back") {
  const std::string nasty = std::string("quote \" backslash \\ newline \n tab \t bell \a nul ") +
                            '\0' + " unicode \xc3\xa9";
  std::ostringstream out;
  JsonWriter json(out);
  json.begin_object().field("s", nasty).end_object();
  CHECK(out.str() ==
        "{\"s\":\"quote \\\" backslash \\\\ newline \\n tab \\t bell \\u0007 nul \\u0000 "
        "unicode \xc3\xa9\"}");
  const auto fields = ltt_cli_test::json_object(out.str() + "\n");
  // json.dumps re-escapes with ensure_ascii: e-acute comes back as \u00e9.
  CHECK(fields.at("s") ==
        "\"quote \\\" backslash \\\\ newline \\n tab \\t bell \\u0007 nul \\u0000 unicode "
        "\\u00e9\"");
}

TEST_CASE("JsonWriter: misuse is a logic error") {
  std::ostringstream out;
  {
    JsonWriter json(out);
    json.begin_object();
    CHECK_THROWS_AS(json.value(1), std::logic_error);  // value without a key
    json.key("k");
    CHECK_THROWS_AS(json.key("again"), std::logic_error);
    CHECK_THROWS_AS(json.end_object(), std::logic_error);  // key left without value
    json.value(1);
    CHECK_THROWS_AS(json.end_array(), std::logic_error);
    json.end_object();
    CHECK(json.complete());
    CHECK_THROWS_AS(json.begin_object(), std::logic_error);  // a second top-level value
  }
  JsonWriter open(out);
  open.begin_array();
  CHECK_FALSE(open.complete());
  CHECK_THROWS_AS(open.key("k"), std::logic_error);
}
