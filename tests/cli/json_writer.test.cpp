// The program's JSON writer: structure, escaping, 17-digit numbers, and misuse caught.

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>

#include "json_writer.hpp"
#include "run_program.hpp"

using ltt::cli::JsonWriter;

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

TEST_CASE("JsonWriter: numbers read back exactly; NaN and infinities become null") {
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
        "[0.10000000000000001,0.33333333333333331,4.9406564584124654e-324,"
        "1.7976931348623157e+308,-0,null,null,9007199254740992]");
  const auto values = ltt_cli_test::numbers(
      "[0.10000000000000001, 0.33333333333333331, 4.9406564584124654e-324, "
      "1.7976931348623157e+308]");
  CHECK(values[0] == 0.1);
  CHECK(values[1] == third);
  CHECK(values[2] == tiny);
  CHECK(values[3] == big);
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
