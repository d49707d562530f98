#pragma once
// Argument conversion for the Python module: numpy arrays in, checked, and plain records out.
//
// The dtype rule (docs/python.md, "Dtypes"): a count takes integers only, any numpy integer
// dtype or Python int, never a float, even a whole one, and never a bool; a probability or a
// score takes any real dtype (float or integer), never bool, complex or object. Nothing is
// rounded or wrapped: a float count is a TypeError, an unsigned value beyond int64 a
// ValueError. Shapes: the vectorized functions broadcast like numpy ufuncs; everything else
// takes 1-D arrays and says so.

#include <curation/score_aggregation.hpp>
#include <ltt/fixed_sequence.hpp>
#include <ltt/several_budgets.hpp>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ltt::python {

namespace py = pybind11;

// The dict subclasses defined in module.cpp (Record: keys read as attributes; Certificate:
// a Record with a .selection array). Set once at import and never released.
struct RecordTypes {
  py::object record;
  py::object certificate;
};
RecordTypes& record_types();

inline py::object make_record(const py::dict& fields) { return record_types().record(fields); }

inline std::string prefix(std::string_view fn, std::string_view name) {
  return std::string(fn) + ": parameter '" + std::string(name) + "'";
}

inline py::array as_numpy(py::handle obj) {
  return py::module_::import("numpy").attr("asarray")(obj).cast<py::array>();
}

// a itself when it already has the dtype (any strides), else a converted copy.
template <class T>
py::array_t<T> as_dtype(const py::array& a, const char* dtype) {
  return a.attr("astype")(dtype, py::arg("copy") = false).template cast<py::array_t<T>>();
}

inline std::string dtype_name(const py::array& a) { return py::str(a.dtype()).cast<std::string>(); }

// Any numpy integer dtype or Python int, as int64; the TypeError names what came instead.
inline py::array_t<std::int64_t> count_array(py::handle obj, std::string_view fn,
                                             std::string_view name) {
  const py::array a = as_numpy(obj);
  const char kind = a.dtype().kind();
  if (kind == 'u' && a.dtype().itemsize() == 8 && a.size() > 0) {
    const py::int_ largest(a.attr("max")());
    if (largest > py::int_(std::numeric_limits<std::int64_t>::max()))
      throw py::value_error(prefix(fn, name) + " holds " +
                            py::str(py::handle(largest)).cast<std::string>() +
                            ", beyond the int64 range of counts");
  }
  if (kind == 'i' || kind == 'u') return as_dtype<std::int64_t>(a, "int64");
  std::string msg = prefix(fn, name) + " must hold integers (a count), got dtype " + dtype_name(a);
  if (kind == 'f')
    msg +=
        "; counts are never rounded: convert whole numbers yourself, e.g. np.asarray(x, "
        "dtype=np.int64) after checking np.all(x == np.round(x))";
  else if (kind == 'b')
    msg += "; a bool is not a count";
  else if (kind == 'O')
    msg += " (an integer beyond int64, or mixed types)";
  throw py::type_error(msg);
}

// Any real dtype (float or integer) as float64.
inline py::array_t<double> real_array(py::handle obj, std::string_view fn, std::string_view name) {
  const py::array a = as_numpy(obj);
  const char kind = a.dtype().kind();
  if (kind == 'f' || kind == 'i' || kind == 'u') return as_dtype<double>(a, "float64");
  throw py::type_error(prefix(fn, name) + " must hold real numbers, got dtype " + dtype_name(a));
}

// 0/1 labels: integers or bools (the values themselves are checked by the library).
inline py::array_t<std::int64_t> label_array(py::handle obj, std::string_view fn,
                                             std::string_view name) {
  const py::array a = as_numpy(obj);
  if (a.dtype().kind() == 'b') return as_dtype<std::int64_t>(a, "int64");
  const char kind = a.dtype().kind();
  if (kind != 'i' && kind != 'u')
    throw py::type_error(prefix(fn, name) +
                         " must hold 0/1 labels as integers or bools, got dtype " + dtype_name(a));
  return count_array(a, fn, name);
}

template <class T>
std::vector<T> one_dimensional(const py::array_t<T>& a, std::string_view fn,
                               std::string_view name) {
  if (a.ndim() != 1)
    throw py::value_error(prefix(fn, name) + " must be a 1-D array, got " +
                          std::to_string(a.ndim()) + " dimensions");
  std::vector<T> v(static_cast<std::size_t>(a.shape(0)));
  const auto r = a.template unchecked<1>();
  for (py::ssize_t i = 0; i < a.shape(0); ++i) v[static_cast<std::size_t>(i)] = r(i);
  return v;
}

inline std::vector<std::int64_t> count_vector(py::handle obj, std::string_view fn,
                                              std::string_view name) {
  return one_dimensional(count_array(obj, fn, name), fn, name);
}
inline std::vector<double> real_vector(py::handle obj, std::string_view fn, std::string_view name) {
  return one_dimensional(real_array(obj, fn, name), fn, name);
}
inline std::vector<std::int64_t> label_vector(py::handle obj, std::string_view fn,
                                              std::string_view name) {
  return one_dimensional(label_array(obj, fn, name), fn, name);
}

// Copies out to numpy; the arrays own their memory.
template <class T>
py::array_t<T> to_numpy(const std::vector<T>& v) {
  return py::array_t<T>(static_cast<py::ssize_t>(v.size()), v.data());
}

template <class T>
py::object optional_value(const std::optional<T>& x) {
  return x ? py::cast(*x) : py::none();
}

// "fixed_sequence", "bonferroni" or "holm", the names ltt::procedure_name gives.
inline ltt::Procedure procedure_from_name(const std::string& name, std::string_view fn) {
  for (ltt::Procedure p :
       {ltt::Procedure::fixed_sequence, ltt::Procedure::bonferroni, ltt::Procedure::holm})
    if (name == ltt::procedure_name(p)) return p;
  throw py::value_error(prefix(fn, "procedure") + " = '" + name +
                        "' must be 'fixed_sequence', 'bonferroni' or 'holm'");
}

// "one_threshold" or "one_threshold_per_budget", the names ltt::budget_procedure_name gives.
inline ltt::BudgetProcedure budget_procedure_from_name(const std::string& name,
                                                       std::string_view fn) {
  for (ltt::BudgetProcedure p :
       {ltt::BudgetProcedure::one_threshold, ltt::BudgetProcedure::one_threshold_per_budget})
    if (name == ltt::budget_procedure_name(p)) return p;
  throw py::value_error(prefix(fn, "procedure") + " = '" + name +
                        "' must be 'one_threshold' or 'one_threshold_per_budget'");
}

// 'mean', 'minimum' or 'percentile' (curation/score_aggregation.hpp), with the percentile in
// percent; the library checks its range.
inline ltt::curation::Aggregator aggregator_from_name(const std::string& name, double percentile,
                                                      std::string_view fn) {
  namespace cur = ltt::curation;
  const std::optional<cur::Aggregation> kind = cur::aggregation_named(name);
  if (!kind)
    throw py::value_error(prefix(fn, "aggregation") + " = '" + name +
                          "' must be 'mean', 'minimum' or 'percentile'");
  cur::Aggregator a;
  a.kind = *kind;
  a.percentile = percentile;
  return a;
}

// ---- broadcasting ---------------------------------------------------------------------------

inline std::string shape_string(const std::vector<py::ssize_t>& shape) {
  std::string s = "(";
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (d > 0) s += ", ";
    s += std::to_string(shape[d]);
  }
  return s + (shape.size() == 1 ? ",)" : ")");
}

// numpy's rule: align trailing axes; each pair of extents is equal or one of them is 1.
template <std::size_t A>
std::vector<py::ssize_t> broadcast_shape(std::string_view fn, const std::array<py::array, A>& in,
                                         const std::array<std::string_view, A>& names) {
  py::ssize_t ndim = 0;
  for (const py::array& a : in) ndim = std::max(ndim, a.ndim());
  std::vector<py::ssize_t> shape(static_cast<std::size_t>(ndim), 1);
  for (const py::array& a : in)
    for (py::ssize_t d = 0; d < a.ndim(); ++d) {
      py::ssize_t& s = shape[static_cast<std::size_t>(ndim - a.ndim() + d)];
      const py::ssize_t e = a.shape(d);
      if (e == s || e == 1) continue;
      if (s == 1) {
        s = e;
        continue;
      }
      std::string shapes;
      for (std::size_t i = 0; i < A; ++i) {
        std::vector<py::ssize_t> si(in[i].shape(), in[i].shape() + in[i].ndim());
        shapes += (i ? ", " : "") + std::string(names[i]) + " " + shape_string(si);
      }
      throw py::value_error(std::string(fn) + ": arguments do not broadcast together: " + shapes);
    }
  return shape;
}

// Byte strides of a viewed with the broadcast shape: 0 along broadcast and missing axes.
inline std::vector<py::ssize_t> broadcast_strides(const py::array& a,
                                                  const std::vector<py::ssize_t>& shape) {
  const auto ndim = static_cast<py::ssize_t>(shape.size());
  std::vector<py::ssize_t> strides(shape.size(), 0);
  for (py::ssize_t d = 0; d < a.ndim(); ++d)
    if (a.shape(d) != 1) strides[static_cast<std::size_t>(ndim - a.ndim() + d)] = a.strides(d);
  return strides;
}

template <class T>
T load(const char* p) {
  T x;
  std::memcpy(&x, p, sizeof x);
  return x;
}

// The multi-index of the flat (C order) position flat in shape, for messages.
inline std::vector<py::ssize_t> unravel(py::ssize_t flat, const std::vector<py::ssize_t>& shape) {
  std::vector<py::ssize_t> index(shape.size(), 0);
  for (std::size_t d = shape.size(); d-- > 0;) {
    index[d] = flat % shape[d];
    flat /= shape[d];
  }
  return index;
}

// visit(flat, values...) for every element of the broadcast of args, in C order (last axis
// fastest). The last axis is a plain strided loop; the multi-index moves once per row. The
// caller holds or releases the GIL as it needs.
template <class... T, class Visit>
void for_each_broadcast(const std::vector<py::ssize_t>& shape,
                        const std::array<py::array, sizeof...(T)>& in, Visit&& visit) {
  constexpr std::size_t A = sizeof...(T);
  std::array<std::vector<py::ssize_t>, A> strides;
  std::array<const char*, A> base{};
  for (std::size_t i = 0; i < A; ++i) {
    strides[i] = broadcast_strides(in[i], shape);
    base[i] = static_cast<const char*>(in[i].data());
  }
  py::ssize_t total = 1;
  for (py::ssize_t e : shape) total *= e;
  if (total == 0) return;
  const std::size_t ndim = shape.size();
  const py::ssize_t row = ndim == 0 ? 1 : shape[ndim - 1];
  std::array<py::ssize_t, A> step{};
  if (ndim > 0)
    for (std::size_t i = 0; i < A; ++i) step[i] = strides[i][ndim - 1];
  std::vector<py::ssize_t> index(ndim, 0);
  std::array<py::ssize_t, A> offset{};
  for (py::ssize_t flat = 0; flat < total; flat += row) {
    for (py::ssize_t j = 0; j < row; ++j)
      [&]<std::size_t... I>(std::index_sequence<I...>) {
        visit(flat + j, load<T>(base[I] + offset[I] + j * step[I])...);
      }
      (std::index_sequence_for<T...>{});
    for (std::size_t d = ndim > 0 ? ndim - 1 : 0; d-- > 0;) {  // next row: all axes but the last
      for (std::size_t i = 0; i < A; ++i) offset[i] += strides[i][d];
      if (++index[d] < shape[d]) break;
      for (std::size_t i = 0; i < A; ++i) offset[i] -= strides[i][d] * shape[d];
      index[d] = 0;
    }
  }
}

// out[i] = f(args[i]...) over the broadcast shape, without the GIL. A Python float when every
// argument is a scalar (as numpy ufuncs do), else a float64 array. A library error names the
// element: "... (at index (1, 2) of the broadcast arguments)".
template <class... T, class F>
py::object map_broadcast(std::string_view fn,
                         const std::array<std::string_view, sizeof...(T)>& names, F&& f,
                         const py::array_t<T>&... args) {
  constexpr std::size_t A = sizeof...(T);
  const std::array<py::array, A> in{args...};
  const std::vector<py::ssize_t> shape = broadcast_shape<A>(fn, in, names);
  py::array_t<double> out(shape);
  double* o = out.mutable_data();
  {
    py::gil_scoped_release release;
    for_each_broadcast<T...>(shape, in, [&](py::ssize_t flat, T... x) {
      try {
        o[flat] = f(x...);
      } catch (const std::invalid_argument& e) {
        if (shape.empty()) throw;
        throw std::invalid_argument(std::string(e.what()) + " (at index " +
                                    shape_string(unravel(flat, shape)) +
                                    " of the broadcast arguments)");
      }
    });
  }
  if (shape.empty()) return py::float_(o[0]);
  return out;
}

}  // namespace ltt::python
