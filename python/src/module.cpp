// The compiled module ltt._ltt, whose public names the package `ltt` re-exports after its CPU
// check (python/ltt/__init__.py, docs/python.md): the two header libraries for numpy users, and
// the reference pipeline's safety value and DSRL I/O. Errors from the libraries
// (std::invalid_argument, whose message names the parameter and its value; data::DataError and
// learning::ModelFileError derive from it) arrive as ValueError with that message; wrong dtypes
// as TypeError (convert.hpp).

#include <pybind11/eval.h>
#include <pybind11/pybind11.h>

#include <stdexcept>

#include "convert.hpp"

namespace ltt::python {

void bind_statistics(py::module_& m);
void bind_curation(py::module_& m);
void bind_dsrl(py::module_& m);
void bind_value(py::module_& m);
void bind_sequential(py::module_& m);
void bind_several_budgets(py::module_& m);

RecordTypes& record_types() {
  // Created at import, never destroyed: a static py::object would be released after the
  // interpreter has shut down.
  static RecordTypes* types = new RecordTypes;
  return *types;
}

}  // namespace ltt::python

// Results are plain dicts, so they print, compare and json.dumps like the `ltt` program's JSON;
// the subclass only lets keys read as attributes.
static const char* const record_source = R"py(
class Record(dict):
    """A dict whose keys also read as attributes: r.certified is r['certified'].

    Keys that are Python keywords, such as a step's 'lambda', need the item form.
    """
    __slots__ = ()

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __dir__(self):
        return sorted(set(dir(dict)) | set(self))


class Certificate(Record):
    """The result of ltt.certify: the fields of `ltt certify --json` as dict keys, and
    .selection, the int64 array of selected pool positions (ascending), as an attribute."""
    __slots__ = ("selection",)

    def __repr__(self):
        return "Certificate(" + dict.__repr__(self) + ")"
)py";

PYBIND11_MODULE(_ltt, m) {
  namespace py = pybind11;
  m.doc() =
      "ltt: certified composition of offline-RL training sets (docs/python.md).\n\n"
      "Hypergeometric tails and composition p-values vectorized over numpy arrays, the "
      "certification rate and label budget, the bounds, the certificate triple, and the "
      "curation layer: certify, the gated reward-aware operators, the validation harness; and "
      "from the reference pipeline, the safety value (train_value, load_value) and DSRL "
      "datasets (load_dsrl, write_dsrl_selection).";
  m.attr("__version__") = LTT_VERSION;

  py::exec(record_source, m.attr("__dict__"));
  ltt::python::record_types().record = m.attr("Record");
  ltt::python::record_types().certificate = m.attr("Certificate");

  // pybind11 maps std::invalid_argument to ValueError already; registered here so the contract
  // (ValueError carrying the library's message) does not rest on a default.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const std::invalid_argument& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });

  ltt::python::bind_statistics(m);
  ltt::python::bind_curation(m);
  ltt::python::bind_dsrl(m);
  ltt::python::bind_value(m);
  ltt::python::bind_sequential(m);
  ltt::python::bind_several_budgets(m);
}
