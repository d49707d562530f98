#pragma once
// What the curation bindings (curation.cpp, several_budgets.cpp) read from their arguments in
// the same way: the grid's quantiles, the pool's ids, one-bit calibration labels, and the
// certificate object ltt.certify returns.

#include <curation/calibrated_selection.hpp>
#include <curation/calibration.hpp>
#include <curation/fields.hpp>
#include <ltt/certificate_triple.hpp>

#include <pybind11/pybind11.h>

#include <cstddef>
#include <cstdint>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "convert.hpp"
#include "record.hpp"

namespace ltt::python {

inline std::vector<double> grid_quantiles(const py::object& grid, std::string_view fn) {
  if (grid.is_none())
    return {ltt::curation::paper_grid_quantiles.begin(), ltt::curation::paper_grid_quantiles.end()};
  return real_vector(grid, fn, "grid");
}

// Pool positions 0..N-1 when ids is None; else the user's ids, one per score.
inline std::vector<std::int64_t> pool_ids(const py::object& ids, std::size_t N,
                                          std::string_view fn) {
  if (ids.is_none()) {
    std::vector<std::int64_t> positions(N);
    std::iota(positions.begin(), positions.end(), std::int64_t{0});
    return positions;
  }
  std::vector<std::int64_t> v = count_vector(ids, fn, "ids");
  if (v.size() != N)
    throw py::value_error(prefix(fn, "ids") + " has " + std::to_string(v.size()) +
                          " entries; it must have one per score (" + std::to_string(N) + ")");
  return v;
}

inline ltt::curation::Calibration calibration(const std::vector<std::int64_t>& ids,
                                              py::handle calib_ids, py::handle calib_unsafe,
                                              std::string_view fn) {
  const std::vector<std::int64_t> label_ids = count_vector(calib_ids, fn, "calib_ids");
  const std::vector<std::int64_t> labels = label_vector(calib_unsafe, fn, "calib_unsafe");
  return ltt::curation::calibration_from_labels(ids, label_ids, labels);
}

// The certificate with the fields of `ltt certify --json` (curation::PricedCertificate), in
// its order, without the program's own `gate`, `output` and `inputs`; plus .selection.
inline py::object certificate_object(const ltt::curation::CalibratedSelection& r,
                                     const std::optional<ltt::CertificateTriple>& triple) {
  py::object cert = record_types().certificate(
      field_dict(ltt::curation::PricedCertificate{&r.certificate, &triple}));
  cert.attr("selection") = to_numpy(r.selected);
  return cert;
}

}  // namespace ltt::python
