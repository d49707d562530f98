#pragma once
// A result struct's fields (<ltt/fields.hpp>, <curation/fields.hpp>) as JSON: a struct is an
// object, a vector an array, an empty optional null.
//
//   json.begin_object();
//   fields(certificate, JsonFields{json});   // the certificate's fields, into this object
//   JsonFields{json}("certification", proportion);   // "certification": {...}
//   json.end_object();

#include <curation/fields.hpp>
#include <ltt/fields.hpp>

#include <optional>
#include <string_view>
#include <vector>

#include "data/json_writer.hpp"

namespace ltt::data {

class JsonFields {
 public:
  explicit JsonFields(JsonWriter& json) : json_(json) {}

  template <class T>
  void operator()(std::string_view name, const T& x) {
    json_.key(name);
    value(x);
  }

 private:
  template <class T>
  void value(const T& x) {
    if constexpr (HasFields<T>) {
      json_.begin_object();
      fields(x, *this);
      json_.end_object();
    } else if constexpr (is_optional_field<T>) {
      if (x)
        value(*x);
      else
        json_.null();
    } else if constexpr (is_list_field<T>) {
      json_.begin_array();
      for (const auto& e : x) value(e);
      json_.end_array();
    } else {
      json_.value(x);
    }
  }

  JsonWriter& json_;
};

}  // namespace ltt::data
