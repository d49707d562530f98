// Bindings for several budgets from one labeled sample (docs/several-budgets.md): the
// certificate at every budget (ltt.certify_budgets) and its guarantee validation
// (ltt.validate_budgets). The rate and label budget are with the statistics
// (statistics.cpp).

#include <curation/cost_bands.hpp>
#include <curation/fields.hpp>
#include <curation/several_budgets_selection.hpp>
#include <curation/several_budgets_validation.hpp>
#include <ltt/certificate_triple.hpp>
#include <ltt/several_budgets.hpp>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "convert.hpp"
#include "curation_inputs.hpp"
#include "record.hpp"

namespace ltt::python {

namespace {

namespace cur = ltt::curation;

// Several budgets from one cost-banded sample (docs/several-budgets.md): the fields of
// `ltt certify --budgets --json` without the program's output and inputs, each budget's entry an
// ltt.Certificate with its .selection.
void bind_budgets(py::module_& m) {
  m.def(
      "certify_budgets",
      [](py::handle scores, py::handle calib_ids, py::handle budgets, py::object calib_costs,
         py::object calib_bands, py::object alphas, double alpha, double delta,
         const std::string& procedure, py::object grid, std::int64_t min_selection,
         bool drop_unsafe_calibration, py::object ids, bool triple) {
        constexpr std::string_view fn = "certify_budgets";
        const std::vector<double> g = real_vector(scores, fn, "scores");
        const std::vector<std::int64_t> pool = pool_ids(ids, g.size(), fn);
        const std::vector<std::int64_t> label_ids = count_vector(calib_ids, fn, "calib_ids");
        const std::vector<double> b = real_vector(budgets, fn, "budgets");
        if (calib_costs.is_none() == calib_bands.is_none())
          throw py::value_error(prefix(fn, "calib_costs") +
                                " and calib_bands: give exactly one (the labeled episodes' "
                                "costs, or their bands: how many budgets each cost exceeds)");
        cur::SeveralBudgetsOptions o;
        o.alphas = alphas.is_none() ? std::vector<double>(b.size(), alpha)
                                    : real_vector(alphas, fn, "alphas");
        o.delta = delta;
        o.procedure = budget_procedure_from_name(procedure, fn);
        o.quantiles = grid_quantiles(grid, fn);
        o.minimum_selection = min_selection;
        o.drop_unsafe_calibration = drop_unsafe_calibration;
        cur::check_budgets(fn, b);
        const cur::BandedCalibration banded =
            calib_costs.is_none()
                ? cur::banded_calibration_from_bands(pool, label_ids,
                                                     count_vector(calib_bands, fn, "calib_bands"),
                                                     static_cast<std::int64_t>(b.size()))
                : cur::banded_calibration_from_costs(
                      pool, label_ids, real_vector(calib_costs, fn, "calib_costs"), b);
        cur::SeveralBudgetsSelection r;
        std::vector<std::optional<ltt::CertificateTriple>> triples;
        {
          py::gil_scoped_release release;
          r = cur::several_budgets_selection(g, banded, o);
          for (const cur::CalibratedSelection& s : r.budgets) {
            const cur::Certificate& c = s.certificate;
            std::optional<ltt::CertificateTriple> t;
            if (triple && c.certified) {
              // Priced on the first selection S_1 at the budget's alpha and level, as
              // `ltt certify --budgets` does.
              const cur::CertificateStep& s1 = c.steps.front();
              t = ltt::certificate_triple(c.pool_size, s1.N, s1.m, s1.k, c.calibration_size,
                                          c.alpha, c.delta);
            }
            triples.push_back(t);
          }
        }
        py::dict d;
        d["procedure"] = std::string(ltt::budget_procedure_name(r.procedure));
        d["delta"] = r.delta;
        d["levels"] = r.levels;
        d["joint_pvalues"] = r.procedure == ltt::BudgetProcedure::one_threshold
                                 ? py::object(py::cast(r.joint_pvalues))
                                 : py::object(py::none());
        bool all = true;
        py::list entries;
        for (std::size_t k = 0; k < r.budgets.size(); ++k) {
          all = all && r.budgets[k].certificate.certified;
          // The budget and its level first, then the certificate's fields, as the program
          // writes each entry.
          const py::object fields = certificate_object(r.budgets[k], triples[k]);
          py::dict e;
          e["budget"] = b[k];
          e["level"] = r.levels[k];
          for (const auto item : py::reinterpret_borrow<py::dict>(fields))
            e[item.first] = item.second;
          py::object cert = record_types().certificate(e);
          cert.attr("selection") = fields.attr("selection");
          entries.append(cert);
        }
        d["certified"] = all;
        d["budgets"] = entries;
        return make_record(d);
      },
      py::arg("scores"), py::arg("calib_ids"), py::arg("budgets"), py::kw_only(),
      py::arg("calib_costs") = py::none(), py::arg("calib_bands") = py::none(),
      py::arg("alphas") = py::none(), py::arg("alpha") = 0.25, py::arg("delta") = 0.1,
      py::arg("procedure") = "one_threshold", py::arg("grid") = py::none(),
      py::arg("min_selection") = 50, py::arg("drop_unsafe_calibration") = false,
      py::arg("ids") = py::none(), py::arg("triple") = true,
      "certify_budgets(scores, calib_ids, budgets, *, calib_costs=None, calib_bands=None, "
      "alphas=None, alpha=0.25, delta=0.1, procedure='one_threshold', grid=None, "
      "min_selection=50, drop_unsafe_calibration=False, ids=None, triple=True)\n\n"
      "The calibrated selection at several budgets b_1 < ... < b_K from one labeled sample "
      "(docs/several-budgets.md). Give the labeled episodes' costs (calib_costs) or their bands "
      "(calib_bands: how many budgets each cost exceeds, 0..K). alphas: one per budget (default "
      "alpha for all). procedure: 'one_threshold' (one threshold certified for every budget at "
      "once, at the full delta) or 'one_threshold_per_budget' (each budget its own threshold, "
      "delta split across the budgets). Returns a Record with the fields of "
      "`ltt certify --budgets --json` (procedure, delta, levels, joint_pvalues, certified: every "
      "budget certified, budgets): budgets[k] is an ltt.Certificate for b_k with its budget, "
      "level and .selection. With one budget it is ltt.certify's certificate.");
  m.def(
      "validate_budgets",
      [](py::handle scores, py::handle costs, py::handle budgets, py::object alphas, double alpha,
         double delta, const std::string& procedure, std::int64_t calibration_size,
         std::int64_t draws, std::uint64_t seed, py::object grid, double confidence,
         std::int64_t threads) {
        constexpr std::string_view fn = "validate_budgets";
        const std::vector<double> g = real_vector(scores, fn, "scores");
        const std::vector<double> c = real_vector(costs, fn, "costs");
        const std::vector<double> b = real_vector(budgets, fn, "budgets");
        cur::SeveralBudgetsValidationOptions o;
        o.alphas = alphas.is_none() ? std::vector<double>(b.size(), alpha)
                                    : real_vector(alphas, fn, "alphas");
        o.delta = delta;
        o.procedure = budget_procedure_from_name(procedure, fn);
        o.calibration_size = calibration_size;
        o.draws = draws;
        o.seed = seed;
        o.quantiles = grid_quantiles(grid, fn);
        o.confidence = confidence;
        o.threads = threads;
        cur::SeveralBudgetsValidation v;
        {
          py::gil_scoped_release release;
          v = cur::validate_several_budgets(g, c, b, o);
        }
        // Per draw, as columns: returned[d, k] is -1 where budget k was not certified.
        const std::size_t D = v.outcomes.size(), K = b.size();
        std::vector<std::uint64_t> seeds(D);
        std::vector<std::uint8_t> violated(D);
        py::array_t<std::int64_t> returned(
            {static_cast<py::ssize_t>(D), static_cast<py::ssize_t>(K)});
        auto r = returned.mutable_unchecked<2>();
        for (std::size_t d = 0; d < D; ++d) {
          seeds[d] = v.outcomes[d].seed;
          violated[d] = v.outcomes[d].violated;
          for (std::size_t k = 0; k < K; ++k)
            r(static_cast<py::ssize_t>(d), static_cast<py::ssize_t>(k)) =
                v.outcomes[d].returned[k].value_or(-1);
        }
        py::dict outcomes;
        outcomes["seed"] = to_numpy(seeds);
        outcomes["returned"] = returned;
        outcomes["violated"] = to_numpy(violated).attr("astype")("bool");
        py::dict d = field_dict(v);
        d["outcomes"] = make_record(outcomes);
        return make_record(d);
      },
      py::arg("scores"), py::arg("costs"), py::arg("budgets"), py::kw_only(),
      py::arg("alphas") = py::none(), py::arg("alpha") = 0.25, py::arg("delta") = 0.1,
      py::arg("procedure") = "one_threshold", py::arg("calibration_size") = 200,
      py::arg("draws") = 2000, py::arg("seed") = 0, py::arg("grid") = py::none(),
      py::arg("confidence") = 0.95, py::arg("threads") = 0,
      "The guarantee validation at several budgets on a pool of known costs "
      "(docs/several-budgets.md): redraw the calibration sample `draws` times, band it against "
      "the budgets, run the procedure, and report the rate of certifying every budget against "
      "its closed form, the simultaneous false certification Pr[some budget certified and "
      "violated] (at most delta), and per budget its rates and returned-step histogram, with "
      "Clopper-Pearson intervals. Per draw, as columns in .outcomes: seed, returned (draws x K, "
      "-1: not certified), violated. `ltt validate --budgets` gives the same numbers.");
}

}  // namespace

void bind_several_budgets(py::module_& m) { bind_budgets(m); }

}  // namespace ltt::python
