// The program's JSON reader (json_reader.hpp): what the writer writes comes back, RFC 8259's
// examples read, and a table of malformed and hostile inputs is refused with the line and
// column of the fault.

#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <string_view>

#include "format.hpp"
#include "json_reader.hpp"

using ltt::cli::JsonError;
using ltt::cli::JsonLimits;
using ltt::cli::JsonValue;
using ltt::cli::parse_json;
using Kind = JsonValue::Kind;

TEST_CASE("parse_json: every kind of value, members in file order") {
  const JsonValue v = parse_json(
      " {\"a\": [1, -2.5e3, true, false, null, \"x\"],\n \"b\": {}, \"c\": [], \"\": 0}\r\n");
  REQUIRE(v.kind == Kind::object);
  REQUIRE(v.members.size() == 4);
  CHECK(v.members[0].key == "a");
  CHECK(v.members[3].key == "");
  const JsonValue& a = *v.find("a");
  REQUIRE(a.items.size() == 6);
  CHECK(a.items[0].number == 1);
  CHECK(a.items[0].text == "1");
  CHECK(a.items[1].number == -2500);
  CHECK(a.items[1].text == "-2.5e3");
  CHECK(a.items[2].kind == Kind::boolean);
  CHECK(a.items[2].boolean);
  CHECK_FALSE(a.items[3].boolean);
  CHECK(a.items[4].kind == Kind::null);
  CHECK(a.items[5].text == "x");
  CHECK(v.find("b")->kind == Kind::object);
  CHECK(v.find("c")->kind == Kind::array);
  CHECK(v.find("missing") == nullptr);
  CHECK(parse_json("3").number == 3);  // any value may stand at the top
  CHECK(parse_json("\"s\"").text == "s");
}

TEST_CASE("parse_json: strings with every escape, surrogate pairs and raw UTF-8") {
  const JsonValue v = parse_json(R"("q\" b\\ s\/ \b\f\n\r\t \u0041\u00e9\u20ac\ud83d\ude00 é€😀")");
  CHECK(v.text ==
        "q\" b\\ s/ \b\f\n\r\t A\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80 "
        "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80");
  CHECK(parse_json(R"("\u0000")").text == std::string(1, '\0'));
}

TEST_CASE("parse_json reads back what JsonWriter writes, numbers bit for bit") {
  const double values[] = {0.1,  1.0 / 3, 5e-324,          std::numeric_limits<double>::max(),
                           -0.0, 1e21,    0.85 - 0.05 * 3, 1.0867527815732558e-05};
  std::ostringstream out;
  ltt::cli::JsonWriter json(out);
  json.begin_object().field("text", "tab\t quote\" \x01 \xc3\xa9").key("x").begin_array();
  for (const double x : values) json.value(x);
  json.end_array().field("n", std::int64_t{1} << 53).field("ok", false).end_object();
  const JsonValue v = parse_json(out.str());
  CHECK(v.find("text")->text == "tab\t quote\" \x01 \xc3\xa9");
  const JsonValue& x = *v.find("x");
  REQUIRE(x.items.size() == std::size(values));
  for (std::size_t i = 0; i < x.items.size(); ++i) {
    CAPTURE(x.items[i].text);
    CHECK(std::bit_cast<std::uint64_t>(x.items[i].number) ==
          std::bit_cast<std::uint64_t>(values[i]));
  }
  CHECK(v.find("n")->text == "9007199254740992");
  CHECK_FALSE(v.find("ok")->boolean);
}

TEST_CASE("parse_json: numbers at the edges of a double") {
  CHECK(parse_json("1e-400").number == 0);  // underflow reads as zero, as Python reads it
  CHECK(std::signbit(parse_json("-1e-400").number));
  CHECK(parse_json("1.7976931348623157e308").number == std::numeric_limits<double>::max());
  CHECK(parse_json("-0").number == 0);
  CHECK(std::signbit(parse_json("-0").number));
  CHECK(parse_json("0E+2").number == 0);
}

namespace {

// The message of the JsonError that parse_json throws on text, or "" when it reads it.
std::string refusal(std::string_view text, JsonLimits limits = {}) {
  try {
    (void)parse_json(text, limits);
  } catch (const JsonError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("parse_json: malformed input is refused at its line and column") {
  const struct {
    std::string_view text, message;
  } cases[] = {
      {"", "1:1: the text ends where a value is due"},
      {"   ", "1:4: the text ends where a value is due"},
      {"{\"a\": 1,}", "1:9: expected a key in quotes"},
      {"[1, 2,]", "1:7: expected a JSON value"},
      {"[1 2]", "1:4: expected ',' or ']'"},
      {"{\"a\" 1}", "1:6: expected ':' after the key"},
      {"{\"a\": 1 \"b\": 2}", "1:9: expected ',' or '}'"},
      {"{'a': 1}", "1:2: expected a key in quotes"},
      {"{\"a\": 1, \"a\": 2}", "1:10: the key \"a\" appears twice"},
      {"[1]\n// comment", "2:1: unexpected text after the value"},
      {"{} {}", "1:4: unexpected text after the value"},
      {"[NaN]", "1:2: expected a JSON value"},
      {"[Infinity]", "1:2: expected a JSON value"},
      {"-Infinity", "1:1: expected digits after '-'"},
      {"tru", "1:1: expected a JSON value"},
      {"nul", "1:1: expected a JSON value"},
      {"01", "1:1: a number with a leading zero"},
      {"-01", "1:1: a number with a leading zero"},
      {"+1", "1:1: expected a JSON value"},
      {".5", "1:1: expected a JSON value"},
      {"1.", "1:3: expected digits after the decimal point"},
      {"1.e5", "1:3: expected digits after the decimal point"},
      {"1e", "1:3: expected digits in the exponent"},
      {"1e+", "1:4: expected digits in the exponent"},
      {"-", "1:1: expected digits after '-'"},
      {"0x10", "1:2: unexpected text after the value"},
      {"1e400", "1:1: the number 1e400 is too large for a double"},
      {"-1e309", "1:1: the number -1e309 is too large for a double"},
      {"\"abc", "1:1: a string without its closing quote"},
      {"\"a\tb\"", "1:3: a control character in a string (write it as \\u00XX)"},
      {"\"a\nb\"", "1:3: a control character in a string (write it as \\u00XX)"},
      {"\"\\x41\"", "1:2: an unknown escape in a string"},
      {"\"\\u12\"", "1:4: expected four hex digits after \\u"},
      {"\"\\u12G4\"", "1:6: expected four hex digits after \\u"},
      {"\"\\ud83d\"", "1:2: a high surrogate without its low half"},
      {"\"\\ud83d\\u0041\"", "1:2: a high surrogate without its low half"},
      {"\"\\ude00\"", "1:2: a lone low surrogate \\u escape"},
      {"\"\xff\"", "1:2: a string that is not valid UTF-8"},
      {"\"\xc3\"", "1:2: a string that is not valid UTF-8"},
      {"\"\xc0\xaf\"", "1:2: a string that is not valid UTF-8"},          // overlong '/'
      {"\"\xed\xa0\x80\"", "1:2: a string that is not valid UTF-8"},      // a UTF-16 surrogate
      {"\"\xf4\x90\x80\x80\"", "1:2: a string that is not valid UTF-8"},  // above U+10FFFF
      {"\xef\xbb\xbf{}", "1:1: expected a JSON value"},                   // RFC 8259: no BOM
      {std::string_view("[1,\0 2]", 7), "1:4: expected a JSON value"},
      {"{\n  \"a\": [1,\n        2,,\n  ]}", "3:11: expected a JSON value"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.text);
    CHECK(refusal(c.text) == c.message);
  }
}

TEST_CASE("parse_json: limits on nesting and size refuse hostile input cleanly") {
  const auto nested = [](int depth) {
    return std::string(static_cast<std::size_t>(depth), '[') +
           std::string(static_cast<std::size_t>(depth), ']');
  };
  CHECK(refusal(nested(64)).empty());
  CHECK(refusal(nested(65)) == "1:65: arrays and objects nested more than 64 deep");
  // a million brackets: refused at the limit, long before the stack is at risk
  CHECK(refusal(nested(1000000)) == "1:65: arrays and objects nested more than 64 deep");
  CHECK(refusal("{\"a\":{\"b\":[{}]}}", {1 << 20, 3}) ==
        "1:12: arrays and objects nested more than 3 deep");
  CHECK(refusal("[1, 2, 3]", {8, 64}) ==
        "1:1: the text is 9 bytes, more than the 8 a JSON input may have");
  CHECK(refusal("[1, 2, 3]", {9, 64}).empty());
}
