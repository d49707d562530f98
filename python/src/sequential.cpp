// ltt.SequentialCertifier: the sequential walk of <curation/sequential_selection.hpp> for a
// person labeling one trajectory at a time (docs/sequential.md). The label order reads the
// seeded permutation of the pool that `ltt draw --sequential --seed S` prints, in the
// stratified or uniform order (<curation/label_order.hpp>); the certifier asks for the next
// position, takes its label, and says when a stop rule fires.
// The certificate is a Record with the fields of curation::StoppedCertificate
// (<curation/fields.hpp>), the object `ltt certify --sequential --json` opens with.

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <curation/sequential_selection.hpp>

#include "convert.hpp"
#include "record.hpp"

namespace ltt::python {

namespace {

namespace cur = ltt::curation;

class SequentialCertifier {
 public:
  SequentialCertifier(py::handle scores, double alpha, double delta, std::int64_t label_cap,
                      std::uint64_t seed, const std::string& stop, const py::object& grid,
                      double cap_test_share, const std::optional<std::string>& order,
                      double refusal_rate,
                      std::int64_t min_selection)
      : stop_(stop) {
    constexpr std::string_view fn = "SequentialCertifier";
    const std::vector<double> s = real_vector(scores, fn, "scores");
    cur::SequentialSelectionOptions o;
    o.alpha = alpha;
    o.delta = delta;
    o.label_cap = label_cap;
    o.cap_test_share = cap_test_share;
    if (!grid.is_none()) o.quantiles = real_vector(grid, fn, "grid");
    o.refusal_rate = refusal_rate;
    o.minimum_selection = min_selection;
    cur::apply_stop_rule(stop, o);  // `depth` and `auto` (the fixed walk) set the uniform order
    if (order) o.order = cur::parse_label_order(*order);
    walk_.emplace(s, o, seed);
  }

  // The pool position to label next; None once a stop rule has fired.
  py::object next_id() const {
    if (should_stop()) return py::none();
    return py::int_(*walk_->next_position());
  }

  // The next `count` positions if the certified depth stays; empty once stopped.
  py::object planned(std::int64_t count) const {
    if (should_stop()) return to_numpy(std::vector<std::int64_t>{});
    return to_numpy(walk_->planned(count));
  }

  void add_label(std::int64_t id, bool unsafe) {
    if (should_stop())
      throw std::invalid_argument("SequentialCertifier.add_label: the walk has stopped (" +
                                  std::string(cur::stopping_reason_name(*reason())) +
                                  "); no more labels are needed");
    const std::int64_t next = *walk_->next_position();
    if (id != next)
      throw std::invalid_argument("SequentialCertifier.add_label: id = " + std::to_string(id) +
                                  " is not the next in the label order (" + std::to_string(next) +
                                  "); labels must follow next_id() for the guarantee");
    walk_->add_label(id, unsafe);
  }

  std::optional<cur::StoppingReason> reason() const { return walk_->stopping_reason(); }
  bool should_stop() const { return reason().has_value(); }

  // The shared field list of <curation/fields.hpp> (`ltt certify --sequential --json`'s),
  // with the depth trace as an array.
  py::object certificate() const {
    const auto r = reason();
    const cur::SequentialCertificate c =
        walk_->certificate(r.value_or(cur::StoppingReason::label_cap));
    py::dict d = field_dict(cur::StoppedCertificate{&c, stop_, r});
    d["depth_trace"] = to_numpy(c.depth_trace);
    return make_record(d);
  }

  std::int64_t labels_used() const { return walk_->labels_used(); }
  // The seeded permutation of the pool the label order reads (`ltt draw --sequential`).
  py::object permutation() const {
    const auto p = walk_->permutation();
    return to_numpy(std::vector<std::int64_t>(p.begin(), p.end()));
  }

 private:
  std::string stop_;
  std::optional<cur::SequentialWalk> walk_;
};

}  // namespace

void bind_sequential(py::module_& m) {
  py::class_<SequentialCertifier>(
      m, "SequentialCertifier",
      "Label on demand: the sequential walk over a pool's scores (docs/sequential.md).\n\n"
      "next_id() is the pool position to label next (None once stopped); planned(k) the next k\n"
      "if the certified depth stays; add_label(id, unsafe) records its label; should_stop()\n"
      "says whether a stop rule fired; certificate is the certificate now, valid at whatever\n"
      "point the labeling stops. stop: 'auto' = 'depth' (the fixed walk label by label: the\n"
      "fixed-n certificate of the first label_cap positions of the permutation, with fewer\n"
      "labels), 'forecast', 'labels', ... (`ltt certify --stop`). order: 'stratified' (labels\n"
      "from the first uncertified selection) or 'uniform' (the seeded permutation from the top);\n"
      "None: uniform under 'depth' and 'auto', stratified otherwise. min_selection: the fewest\n"
      "trajectories a refusal's fallback keeps (`--min-selection`).")
      .def(py::init<py::handle, double, double, std::int64_t, std::uint64_t, const std::string&,
                    const py::object&, double, const std::optional<std::string>&, double,
                    std::int64_t>(),
           py::arg("scores"), py::kw_only(), py::arg("alpha") = 0.25, py::arg("delta") = 0.1,
           py::arg("label_cap") = 200, py::arg("seed") = 0, py::arg("stop") = "auto",
           py::arg("grid") = py::none(), py::arg("cap_test_share") = 0.2,
           py::arg("order") = py::none(), py::arg("refusal_rate") = 0.05,
           py::arg("min_selection") = cur::SequentialSelectionOptions{}.minimum_selection)
      .def("next_id", &SequentialCertifier::next_id)
      .def("planned", &SequentialCertifier::planned, py::arg("count"))
      .def("add_label", &SequentialCertifier::add_label, py::arg("id"), py::arg("unsafe"))
      .def("should_stop", &SequentialCertifier::should_stop)
      .def_property_readonly("certificate", &SequentialCertifier::certificate)
      .def_property_readonly("labels_used", &SequentialCertifier::labels_used)
      .def_property_readonly("permutation", &SequentialCertifier::permutation);
}

}  // namespace ltt::python
