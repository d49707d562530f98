#pragma once
// A small streaming JSON writer, for the program's output and the pipeline's report.json:
// objects, arrays, numbers, strings, booleans and null, written compactly in one pass (no
// spaces: `{"delta":0.1}`). A number is the shortest decimal that reads back as the same double
// (shortest() in data/text.hpp: 0.1, not 0.10000000000000001); NaN and infinities, which JSON
// cannot represent, are written as null. Strings are escaped per RFC 8259 (quote, backslash and
// control characters; UTF-8 passes through).
//
//   JsonWriter json(out);
//   json.begin_object().field("rate", 0.5).field("budget", std::optional<std::int64_t>{});
//   json.key("curve").begin_array().value(0.0).value(0.25).end_array();
//   json.end_object();   // complete() is now true
//
// Misuse (a value where a key is due, an unbalanced end, a second top-level value) is a bug in
// the caller and throws std::logic_error.

#include <cmath>
#include <concepts>
#include <cstdint>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "data/text.hpp"

namespace ltt::data {

class JsonWriter {
 public:
  explicit JsonWriter(std::ostream& out) : out_(out) {}

  JsonWriter& begin_object() {
    before_value();
    out_ << '{';
    stack_.push_back({Scope::object, true, false});
    return *this;
  }
  JsonWriter& end_object() { return end(Scope::object, '}'); }
  JsonWriter& begin_array() {
    before_value();
    out_ << '[';
    stack_.push_back({Scope::array, true, false});
    return *this;
  }
  JsonWriter& end_array() { return end(Scope::array, ']'); }

  JsonWriter& key(std::string_view name) {
    if (stack_.empty() || stack_.back().scope != Scope::object || stack_.back().key_written)
      throw std::logic_error("JsonWriter: key outside an object or after another key");
    Level& level = stack_.back();
    if (!level.first) out_ << ',';
    level.first = false;
    level.key_written = true;
    write_string(name);
    out_ << ':';
    return *this;
  }

  JsonWriter& value(double x) {
    before_value();
    if (std::isfinite(x))
      out_ << shortest(x);
    else
      out_ << "null";
    return *this;
  }
  template <std::integral I>
  requires(!std::same_as<I, bool>) JsonWriter& value(I x) {
    before_value();
    out_ << x;
    return *this;
  }
  JsonWriter& value(bool b) {
    before_value();
    out_ << (b ? "true" : "false");
    return *this;
  }
  JsonWriter& value(std::string_view s) {
    before_value();
    write_string(s);
    return *this;
  }
  JsonWriter& value(const char* s) { return value(std::string_view(s)); }
  template <class T>
  JsonWriter& value(const std::optional<T>& x) {
    return x ? value(*x) : null();
  }
  JsonWriter& null() {
    before_value();
    out_ << "null";
    return *this;
  }

  template <class T>
  JsonWriter& field(std::string_view name, const T& x) {
    key(name);
    return value(x);
  }

  // True once exactly one top-level value has been written and closed.
  bool complete() const { return done_ && stack_.empty(); }

 private:
  enum class Scope { object, array };
  struct Level {
    Scope scope;
    bool first;
    bool key_written;
  };

  void before_value() {
    if (stack_.empty()) {
      if (done_) throw std::logic_error("JsonWriter: a second top-level value");
      done_ = true;
      return;
    }
    Level& level = stack_.back();
    if (level.scope == Scope::object) {
      if (!level.key_written) throw std::logic_error("JsonWriter: value without a key");
      level.key_written = false;
    } else {
      if (!level.first) out_ << ',';
      level.first = false;
    }
  }

  JsonWriter& end(Scope scope, char close) {
    if (stack_.empty() || stack_.back().scope != scope || stack_.back().key_written)
      throw std::logic_error("JsonWriter: unbalanced end of object or array");
    stack_.pop_back();
    out_ << close;
    return *this;
  }

  void write_string(std::string_view s) {
    static constexpr char hex[] = "0123456789abcdef";
    out_ << '"';
    for (const char c : s) {
      const auto u = static_cast<unsigned char>(c);
      switch (c) {
        case '"':
          out_ << "\\\"";
          break;
        case '\\':
          out_ << "\\\\";
          break;
        case '\b':
          out_ << "\\b";
          break;
        case '\f':
          out_ << "\\f";
          break;
        case '\n':
          out_ << "\\n";
          break;
        case '\r':
          out_ << "\\r";
          break;
        case '\t':
          out_ << "\\t";
          break;
        default:
          if (u < 0x20)
            out_ << "\\u00" << hex[u >> 4] << hex[u & 0xf];
          else
            out_ << c;
      }
    }
    out_ << '"';
  }

  std::ostream& out_;
  std::vector<Level> stack_;
  bool done_ = false;
};

}  // namespace ltt::data
