#pragma once
// A small strict JSON reader (RFC 8259), the counterpart of json_writer.hpp: what the program
// writes it reads back, and it refuses everything else. Recursive descent over the whole text,
// bounded so that a hostile file is refused with a message instead of exhausting memory or
// the stack: at most `max_bytes` of text and `max_depth` nested arrays and objects.
//
//   const JsonValue report = parse_json(text);            // throws JsonError "3:17: ..."
//   if (const JsonValue* s = report.find("settings")) ...
//
// Strict means: one value and only whitespace around it; no comments, trailing commas,
// single quotes, NaN, Infinity, leading zeros or '+'; control characters in strings escaped;
// \u escapes paired where they are surrogates; strings valid UTF-8; numbers that overflow a
// double refused; a key given twice in one object refused (RFC 8259 leaves that undefined).
// A number keeps its source text, so a caller can read "25" as an integer exactly and hand
// "0.1" on as typed.

#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace ltt::cli {

// A syntax error: what() is "line:column: what was expected" (both 1-based, in bytes).
class JsonError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct JsonLimits {
  std::size_t max_bytes = std::size_t{1} << 24;  // 16 MiB: a pipeline report is tens of kB
  int max_depth = 64;                            // a report nests 6 deep
};

struct JsonMember;

struct JsonValue {
  enum class Kind { null, boolean, number, string, array, object };
  Kind kind = Kind::null;
  bool boolean = false;
  double number = 0.0;
  std::string text;                 // a string's contents (UTF-8), or a number's source text
  std::vector<JsonValue> items;     // an array's elements
  std::vector<JsonMember> members;  // an object's members, in file order

  // The member named key of an object, or nullptr (also when this is not an object).
  const JsonValue* find(std::string_view key) const;
};

struct JsonMember {
  std::string key;
  JsonValue value;
};

inline const JsonValue* JsonValue::find(std::string_view key) const {
  for (const JsonMember& m : members)
    if (m.key == key) return &m.value;
  return nullptr;
}

// "a number", "an object": for messages about a value of the wrong kind.
inline std::string_view kind_name(JsonValue::Kind kind) {
  switch (kind) {
    case JsonValue::Kind::null:
      return "null";
    case JsonValue::Kind::boolean:
      return "a boolean";
    case JsonValue::Kind::number:
      return "a number";
    case JsonValue::Kind::string:
      return "a string";
    case JsonValue::Kind::array:
      return "an array";
    case JsonValue::Kind::object:
      return "an object";
  }
  return "a value";
}

namespace detail {

class JsonParser {
 public:
  JsonParser(std::string_view text, JsonLimits limits) : s_(text), limits_(limits) {}

  JsonValue document() {
    if (s_.size() > limits_.max_bytes)
      fail(0, "the text is " + std::to_string(s_.size()) + " bytes, more than the " +
                  std::to_string(limits_.max_bytes) + " a JSON input may have");
    skip_space();
    JsonValue v = value(0);
    skip_space();
    if (i_ != s_.size()) fail(i_, "unexpected text after the value");
    return v;
  }

 private:
  [[noreturn]] void fail(std::size_t at, const std::string& what) const {
    std::size_t line = 1, column = 1;
    for (std::size_t k = 0; k < at && k < s_.size(); ++k) {
      if (s_[k] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    throw JsonError(std::to_string(line) + ":" + std::to_string(column) + ": " + what);
  }

  bool at_end() const { return i_ >= s_.size(); }
  char peek() const { return at_end() ? '\0' : s_[i_]; }

  void skip_space() {
    while (!at_end() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }

  void expect_word(std::string_view word) {
    if (s_.substr(i_, word.size()) != word) fail(i_, "expected a JSON value");
    i_ += word.size();
  }

  JsonValue value(int depth) {
    JsonValue v;
    switch (peek()) {
      case '{':
        object(v, depth + 1);
        break;
      case '[':
        array(v, depth + 1);
        break;
      case '"':
        v.kind = JsonValue::Kind::string;
        v.text = string();
        break;
      case 't':
        expect_word("true");
        v.kind = JsonValue::Kind::boolean;
        v.boolean = true;
        break;
      case 'f':
        expect_word("false");
        v.kind = JsonValue::Kind::boolean;
        break;
      case 'n':
        expect_word("null");
        break;
      default:
        if (peek() == '-' || (peek() >= '0' && peek() <= '9')) {
          number(v);
          break;
        }
        fail(i_, at_end() ? "the text ends where a value is due" : "expected a JSON value");
    }
    return v;
  }

  void enter(int depth) const {
    if (depth > limits_.max_depth)
      fail(i_,
           "arrays and objects nested more than " + std::to_string(limits_.max_depth) + " deep");
  }

  void object(JsonValue& v, int depth) {
    enter(depth);
    v.kind = JsonValue::Kind::object;
    ++i_;  // '{'
    skip_space();
    if (peek() == '}') {
      ++i_;
      return;
    }
    for (;;) {
      skip_space();
      if (peek() != '"') fail(i_, "expected a key in quotes");
      const std::size_t key_at = i_;
      std::string key = string();
      if (v.find(key) != nullptr) fail(key_at, "the key \"" + key + "\" appears twice");
      skip_space();
      if (peek() != ':') fail(i_, "expected ':' after the key");
      ++i_;
      skip_space();
      JsonValue member = value(depth);
      v.members.push_back({std::move(key), std::move(member)});
      skip_space();
      if (peek() == ',') {
        ++i_;
        continue;
      }
      if (peek() == '}') {
        ++i_;
        return;
      }
      fail(i_, "expected ',' or '}'");
    }
  }

  void array(JsonValue& v, int depth) {
    enter(depth);
    v.kind = JsonValue::Kind::array;
    ++i_;  // '['
    skip_space();
    if (peek() == ']') {
      ++i_;
      return;
    }
    for (;;) {
      skip_space();
      v.items.push_back(value(depth));
      skip_space();
      if (peek() == ',') {
        ++i_;
        continue;
      }
      if (peek() == ']') {
        ++i_;
        return;
      }
      fail(i_, "expected ',' or ']'");
    }
  }

  // -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?, then from_chars (exact rounding).
  void number(JsonValue& v) {
    const std::size_t start = i_;
    const auto digits = [&] {
      const std::size_t from = i_;
      while (!at_end() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
      return i_ - from;
    };
    if (peek() == '-') ++i_;
    if (peek() == '0') {
      ++i_;
      if (peek() >= '0' && peek() <= '9') fail(start, "a number with a leading zero");
    } else if (digits() == 0) {
      fail(start, "expected digits after '-'");
    }
    if (peek() == '.') {
      ++i_;
      if (digits() == 0) fail(i_, "expected digits after the decimal point");
    }
    if (peek() == 'e' || peek() == 'E') {
      ++i_;
      if (peek() == '+' || peek() == '-') ++i_;
      if (digits() == 0) fail(i_, "expected digits in the exponent");
    }
    v.kind = JsonValue::Kind::number;
    v.text = std::string(s_.substr(start, i_ - start));
    const auto [end, ec] = std::from_chars(v.text.data(), v.text.data() + v.text.size(), v.number);
    // from_chars reports underflow to zero as out of range too: only overflow is refused.
    if (ec == std::errc::result_out_of_range) {
      const std::size_t e = v.text.find_first_of("eE");
      const bool negative_exponent = e != std::string::npos && v.text[e + 1] == '-';
      if (!negative_exponent) fail(start, "the number " + v.text + " is too large for a double");
      v.number = v.text.front() == '-' ? -0.0 : 0.0;
    } else if (ec != std::errc{} || end != v.text.data() + v.text.size()) {
      fail(start, "a malformed number");
    }
  }

  unsigned hex4() {
    if (i_ + 4 > s_.size()) fail(i_, "expected four hex digits after \\u");
    unsigned u = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = s_[i_++];
      u <<= 4;
      if (c >= '0' && c <= '9')
        u |= static_cast<unsigned>(c - '0');
      else if (c >= 'a' && c <= 'f')
        u |= static_cast<unsigned>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        u |= static_cast<unsigned>(c - 'A' + 10);
      else
        fail(i_ - 1, "expected four hex digits after \\u");
    }
    return u;
  }

  static void append_utf8(std::string& out, unsigned cp) {
    const auto byte = [&](unsigned b) { out += static_cast<char>(b); };
    if (cp < 0x80) {
      byte(cp);
    } else if (cp < 0x800) {
      byte(0xC0 | (cp >> 6));
      byte(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      byte(0xE0 | (cp >> 12));
      byte(0x80 | ((cp >> 6) & 0x3F));
      byte(0x80 | (cp & 0x3F));
    } else {
      byte(0xF0 | (cp >> 18));
      byte(0x80 | ((cp >> 12) & 0x3F));
      byte(0x80 | ((cp >> 6) & 0x3F));
      byte(0x80 | (cp & 0x3F));
    }
  }

  // The length of the well-formed UTF-8 sequence at i_ (Unicode 15, table 3-7), or 0.
  std::size_t utf8_length() const {
    const auto at = [&](std::size_t k) {
      return i_ + k < s_.size() ? static_cast<unsigned char>(s_[i_ + k]) : 0u;
    };
    const unsigned b0 = at(0);
    const auto tail = [&](std::size_t k) { return (at(k) & 0xC0) == 0x80; };
    if (b0 >= 0xC2 && b0 <= 0xDF) return tail(1) ? 2 : 0;
    if (b0 >= 0xE0 && b0 <= 0xEF) {
      const unsigned b1 = at(1);
      const bool ok1 = b0 == 0xE0   ? (b1 >= 0xA0 && b1 <= 0xBF)
                       : b0 == 0xED ? (b1 >= 0x80 && b1 <= 0x9F)
                                    : tail(1);
      return ok1 && tail(2) ? 3 : 0;
    }
    if (b0 >= 0xF0 && b0 <= 0xF4) {
      const unsigned b1 = at(1);
      const bool ok1 = b0 == 0xF0   ? (b1 >= 0x90 && b1 <= 0xBF)
                       : b0 == 0xF4 ? (b1 >= 0x80 && b1 <= 0x8F)
                                    : tail(1);
      return ok1 && tail(2) && tail(3) ? 4 : 0;
    }
    return 0;
  }

  std::string string() {
    const std::size_t start = i_;
    ++i_;  // '"'
    std::string out;
    for (;;) {
      if (at_end()) fail(start, "a string without its closing quote");
      const auto c = static_cast<unsigned char>(s_[i_]);
      if (c == '"') {
        ++i_;
        return out;
      }
      if (c < 0x20) fail(i_, "a control character in a string (write it as \\u00XX)");
      if (c >= 0x80) {
        const std::size_t n = utf8_length();
        if (n == 0) fail(i_, "a string that is not valid UTF-8");
        out.append(s_.substr(i_, n));
        i_ += n;
        continue;
      }
      ++i_;
      if (c != '\\') {
        out += static_cast<char>(c);
        continue;
      }
      const char e = peek();
      ++i_;
      switch (e) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          const std::size_t escape_at = i_ - 2;
          unsigned cp = hex4();
          if (cp >= 0xDC00 && cp <= 0xDFFF) fail(escape_at, "a lone low surrogate \\u escape");
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (s_.substr(i_, 2) != "\\u") fail(escape_at, "a high surrogate without its low half");
            i_ += 2;
            const unsigned low = hex4();
            if (low < 0xDC00 || low > 0xDFFF)
              fail(escape_at, "a high surrogate without its low half");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          }
          append_utf8(out, cp);
          break;
        }
        default:
          fail(i_ - 2, "an unknown escape in a string");
      }
    }
  }

  std::string_view s_;
  JsonLimits limits_;
  std::size_t i_ = 0;
};

}  // namespace detail

inline JsonValue parse_json(std::string_view text, JsonLimits limits = {}) {
  return detail::JsonParser(text, limits).document();
}

}  // namespace ltt::cli
