#pragma once
// A result struct's fields (<ltt/fields.hpp>, <curation/fields.hpp>) as a Record: the same
// names, in the same order, as the program's JSON of the same struct. A nested struct is a
// Record, a vector of structs a list of them, an empty optional None. A vector of numbers is a
// list (Arrays::list, as in JSON) or an array (Arrays::numpy, for per-trajectory columns).

#include <curation/fields.hpp>
#include <ltt/fields.hpp>

#include <pybind11/pybind11.h>

#include <optional>
#include <string_view>
#include <type_traits>
#include <vector>

#include "convert.hpp"

namespace ltt::python {

enum class Arrays { list, numpy };

class RecordFields {
 public:
  RecordFields(py::dict& d, Arrays arrays) : d_(d), arrays_(arrays) {}

  template <class T>
  void operator()(std::string_view name, const T& x) {
    d_[py::str(name.data(), name.size())] = value(x);
  }

 private:
  template <class T>
  py::object value(const T& x) const {
    if constexpr (HasFields<T>) {
      py::dict d;
      fields(x, RecordFields(d, arrays_));
      return make_record(d);
    } else if constexpr (is_optional_field<T>) {
      return x ? value(*x) : py::none();
    } else if constexpr (is_list_field<T>) {
      if constexpr (std::is_arithmetic_v<typename T::value_type>)
        if (arrays_ == Arrays::numpy) return to_numpy(x);
      py::list out;
      for (const auto& e : x) out.append(value(e));
      return out;
    } else if constexpr (std::is_convertible_v<T, std::string_view>) {
      const std::string_view s = x;
      return py::str(s.data(), s.size());
    } else {
      return py::cast(x);
    }
  }

  py::dict& d_;
  Arrays arrays_;
};

// x's fields as a dict, for a caller that adds its own before making the Record.
template <class T>
py::dict field_dict(const T& x, Arrays arrays = Arrays::list) {
  py::dict d;
  fields(x, RecordFields(d, arrays));
  return d;
}

template <class T>
py::object record(const T& x, Arrays arrays = Arrays::list) {
  return make_record(field_dict(x, arrays));
}

}  // namespace ltt::python
