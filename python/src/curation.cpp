// Bindings for include/curation/: the calibrated selection (ltt.certify), the grid and the
// calibration draw, the V-filter, the gated reward-aware operators, the mean-cost certificate
// and the guarantee validation harness (several budgets: several_budgets.cpp). Results are
// Records (dicts whose keys read as attributes); index arrays are int64 numpy arrays of
// ascending pool positions.

#include <curation/curation.hpp>
#include <curation/validation.hpp>
#include <ltt/certificate_triple.hpp>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <limits>
#include <numeric>
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

// The gate needs the certificate's decision, alpha and pool size, and the selection: read them
// back from the object ltt.certify returned.
cur::CalibratedSelection from_certificate(py::handle cert, std::string_view fn) {
  if (!py::isinstance(cert, record_types().certificate))
    throw py::type_error(prefix(fn, "certificate") +
                         " must be the object ltt.certify returned (an ltt.Certificate)");
  cur::CalibratedSelection s;
  s.certificate.certified = cert["certified"].cast<bool>();
  s.certificate.alpha = cert["alpha"].cast<double>();
  s.certificate.pool_size = cert["pool_size"].cast<std::int64_t>();
  s.selected = count_vector(cert.attr("selection"), fn, "certificate.selection");
  return s;
}

cur::GateOverride gate(bool allow_uncertified) {
  return allow_uncertified ? cur::GateOverride::allow_uncertified : cur::GateOverride::none;
}

// GuaranteeValidation's fields (<curation/fields.hpp>), then the outcomes, per draw, as columns.
py::object validation_record(const cur::GuaranteeValidation& v) {
  py::dict d = field_dict(v);
  // Per draw, as columns: returned is -1 where nothing was certified; the triple's columns are
  // NaN where no triple was computed.
  const std::size_t D = v.outcomes.size();
  std::vector<std::uint64_t> seed(D);
  std::vector<std::int64_t> m1(D), k1(D), returned(D);
  std::vector<std::uint8_t> violated(D);
  std::vector<double> r_hat(D), r_lo(D), bound(D);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (std::size_t i = 0; i < D; ++i) {
    const cur::ValidationDraw& o = v.outcomes[i];
    seed[i] = o.seed;
    m1[i] = o.m1;
    k1[i] = o.k1;
    returned[i] = o.returned.value_or(-1);
    violated[i] = o.violated;
    r_hat[i] = o.triple ? o.triple->r_hat : nan;
    r_lo[i] = o.triple ? o.triple->r_lo : nan;
    bound[i] = o.triple ? o.triple->conditional_bound : nan;
  }
  py::dict outcomes;
  outcomes["seed"] = to_numpy(seed);
  outcomes["m1"] = to_numpy(m1);
  outcomes["k1"] = to_numpy(k1);
  outcomes["returned"] = to_numpy(returned);
  outcomes["violated"] = to_numpy(violated).attr("astype")("bool");
  outcomes["r_hat"] = to_numpy(r_hat);
  outcomes["r_lo"] = to_numpy(r_lo);
  outcomes["conditional_bound"] = to_numpy(bound);
  d["outcomes"] = make_record(outcomes);
  return make_record(d);
}

void bind_certify(py::module_& m) {
  m.attr("paper_grid_quantiles") =
      py::make_tuple(0.85, 0.80, 0.75, 0.70, 0.65, 0.60, 0.55, 0.50, 0.45, 0.40, 0.35, 0.30);

  m.def(
      "certify",
      [](py::handle scores, py::handle calib_ids, py::handle calib_unsafe, double alpha,
         double delta, py::object grid, std::int64_t min_selection, bool drop_unsafe_calibration,
         py::object ids, bool triple) {
        constexpr std::string_view fn = "certify";
        const std::vector<double> g = real_vector(scores, fn, "scores");
        const std::vector<std::int64_t> pool = pool_ids(ids, g.size(), fn);
        const cur::Calibration cal = calibration(pool, calib_ids, calib_unsafe, fn);
        cur::CalibratedSelectionOptions o;
        o.alpha = alpha;
        o.delta = delta;
        o.quantiles = grid_quantiles(grid, fn);
        o.minimum_selection = min_selection;
        o.drop_unsafe_calibration = drop_unsafe_calibration;
        cur::CalibratedSelection r;
        std::optional<ltt::CertificateTriple> t;
        {
          py::gil_scoped_release release;
          r = cur::calibrated_selection(g, cal, o);
          if (triple && r.certificate.certified) {
            // Priced on the first selection S_1, as `ltt certify` does.
            const cur::CertificateStep& s1 = r.certificate.steps.front();
            t = ltt::certificate_triple(r.certificate.pool_size, s1.N, s1.m, s1.k,
                                        r.certificate.calibration_size, alpha, delta);
          }
        }
        return certificate_object(r, t);
      },
      py::arg("scores"), py::arg("calib_ids"), py::arg("calib_unsafe"), py::arg("alpha") = 0.25,
      py::arg("delta") = 0.1, py::arg("grid") = py::none(), py::arg("min_selection") = 50,
      py::arg("drop_unsafe_calibration") = false, py::kw_only(), py::arg("ids") = py::none(),
      py::arg("triple") = true,
      "certify(scores, calib_ids, calib_unsafe, alpha=0.25, delta=0.1, grid=None, "
      "min_selection=50, drop_unsafe_calibration=False, *, ids=None, triple=True)\n\n"
      "The calibrated selection: walk the score-quantile grid (the paper's 0.85..0.30 when "
      "grid is None) with the strict fixed-sequence test and certify the deepest threshold "
      "whose selection holds at most alpha unsafe with probability >= 1 - delta, or refuse "
      "and return the uncertified fallback.\n\n"
      "scores: 1-D real array, one per trajectory. calib_ids: the labeled trajectories, as "
      "pool positions 0..N-1 or, when ids is given, as entries of ids. calib_unsafe: their "
      "0/1 labels (ints or bools). Returns an ltt.Certificate: a dict with the fields of "
      "`ltt certify --json` (certified, threshold, quantile, selection_size, fallback, steps, "
      "triple, ...), whose keys also read as attributes, and .selection, the int64 array of "
      "selected pool positions, ascending. The triple is priced on the first selection when "
      "a threshold is certified (None on a refusal, or with triple=False).");
}

// The grid, the calibration draw, selections and scores, and the V-filter baseline.
void bind_selection(py::module_& m) {
  m.def(
      "threshold_grid",
      [](py::handle scores, py::object quantiles) {
        constexpr std::string_view fn = "threshold_grid";
        const std::vector<double> g = real_vector(scores, fn, "scores");
        const std::vector<double> q = grid_quantiles(quantiles, fn);
        return record(cur::threshold_grid(g, q), Arrays::numpy);
      },
      py::arg("scores"), py::arg("quantiles") = py::none(),
      "The threshold grid over scores at the given quantiles (the paper's when None): per "
      "step quantile, lambda, rank and selection_size (ties at lambda kept), plus "
      "merged_quantiles.");

  m.def(
      "draw_calibration",
      [](std::int64_t pool_size, std::int64_t n, std::uint64_t seed) {
        return to_numpy(cur::draw_calibration(pool_size, n, seed));
      },
      py::arg("pool_size"), py::arg("n"), py::arg("seed"),
      "n distinct pool positions drawn uniformly without replacement, ascending; the same "
      "positions for the same seed on every platform.");

  m.def(
      "selection_at",
      [](py::handle scores, double lambda) {
        return to_numpy(cur::selection_at(real_vector(scores, "selection_at", "scores"), lambda));
      },
      py::arg("scores"), py::arg("threshold"), "Positions with score >= threshold, ascending.");

  m.def(
      "trajectory_scores",
      [](py::handle state_values, py::handle offsets, const std::string& aggregation,
         double percentile) {
        constexpr std::string_view fn = "trajectory_scores";
        const cur::Aggregator a = aggregator_from_name(aggregation, percentile, fn);
        return to_numpy(cur::trajectory_scores(real_vector(state_values, fn, "state_values"),
                                               count_vector(offsets, fn, "offsets"), a));
      },
      py::arg("state_values"), py::arg("offsets"), py::arg("aggregation") = "mean",
      py::arg("percentile") = cur::Aggregator{}.percentile,
      "Trajectory scores from per-state values stored back to back: trajectory i owns "
      "state_values[offsets[i]:offsets[i+1]]. aggregation: 'mean', 'minimum' or 'percentile' "
      "(numpy's default interpolation).");

  m.def(
      "v_filter",
      [](py::handle scores, py::handle calib_ids, py::handle calib_unsafe, py::object ids) {
        constexpr std::string_view fn = "v_filter";
        const std::vector<double> g = real_vector(scores, fn, "scores");
        const cur::Calibration cal =
            calibration(pool_ids(ids, g.size(), fn), calib_ids, calib_unsafe, fn);
        return record(cur::v_filter(g, cal), Arrays::numpy);
      },
      py::arg("scores"), py::arg("calib_ids"), py::arg("calib_unsafe"), py::kw_only(),
      py::arg("ids") = py::none(),
      "The V-filter baseline (never a certificate): the top floor(safe N / n) by score.");
}

// The gated reward-aware operators behind a certificate.
void bind_gates(py::module_& m) {
  m.def(
      "top_return_subselection",
      [](py::handle certificate, py::handle episodic_return, double fraction,
         bool allow_uncertified) {
        constexpr std::string_view fn = "top_return_subselection";
        const cur::CalibratedSelection s = from_certificate(certificate, fn);
        return record(
            cur::top_return_subselection(s, real_vector(episodic_return, fn, "episodic_return"),
                                         fraction, gate(allow_uncertified)),
            Arrays::numpy);
      },
      py::arg("certificate"), py::arg("episodic_return"), py::arg("fraction") = 0.5, py::kw_only(),
      py::arg("allow_uncertified") = false,
      "Keep the top fraction of the certified selection by episodic return (one return per "
      "pool trajectory). Gated: on an uncertified selection the outcome is 'refused' and the "
      "selection comes back unchanged, unless allow_uncertified=True ('overridden').");

  m.def(
      "return_weighted_resample",
      [](py::handle certificate, py::handle episodic_return, double kappa, std::uint64_t seed,
         bool allow_uncertified) {
        constexpr std::string_view fn = "return_weighted_resample";
        const cur::CalibratedSelection s = from_certificate(certificate, fn);
        return record(
            cur::return_weighted_resample(s, real_vector(episodic_return, fn, "episodic_return"),
                                          kappa, seed, gate(allow_uncertified)),
            Arrays::numpy);
      },
      py::arg("certificate"), py::arg("episodic_return"), py::arg("kappa"), py::arg("seed"),
      py::kw_only(), py::arg("allow_uncertified") = false,
      "|S| draws with replacement from the certified selection, with probability proportional "
      "to exp(clip(z(return), -kappa, kappa)); seeded. Certified: unsafe_mass_bound = "
      "resampled_unsafe_bound(alpha, kappa). Gated like top_return_subselection.");

  m.def(
      "return_weights",
      [](py::handle returns, double kappa) {
        return to_numpy(
            cur::return_weights(real_vector(returns, "return_weights", "returns"), kappa));
      },
      py::arg("returns"), py::arg("kappa"),
      "Draw probabilities proportional to exp(clip(z, -kappa, kappa)).");
}

void bind_mean_cost(py::module_& m) {
  m.def(
      "mean_cost_certificate",
      [](py::handle scores, py::handle calibration_index, py::handle calibration_cost,
         double budget, double range, double delta, py::object grid, const std::string& bound,
         std::uint64_t order_seed) {
        constexpr std::string_view fn = "mean_cost_certificate";
        const std::vector<double> g = real_vector(scores, fn, "scores");
        const std::vector<std::int64_t> index =
            count_vector(calibration_index, fn, "calibration_index");
        const std::vector<double> cost = real_vector(calibration_cost, fn, "calibration_cost");
        const cur::ThresholdGrid tg = cur::threshold_grid(g, grid_quantiles(grid, fn));
        return record(cur::mean_cost_certificate(tg, g, index, cost, budget, range, delta,
                                                 {cur::parse_mean_cost_bound(bound), order_seed}));
      },
      py::arg("scores"), py::arg("calibration_index"), py::arg("calibration_cost"),
      py::arg("budget"), py::arg("range"), py::arg("delta") = 0.1, py::arg("grid") = py::none(),
      py::kw_only(), py::arg("bound") = "hoeffding_serfling", py::arg("order_seed") = 0,
      "The mean-cost certificate on the same grid and walk; every step records the "
      "Hoeffding-Serfling and the betting p-value, and the walk tests the one `bound` names "
      "('hoeffding_serfling' or 'betting'). calibration_index: pool positions of the calibration "
      "trajectories; calibration_cost: their episodic costs in [0, range]; order_seed: the "
      "seeded draw order the betting p-value reads.");
}

void bind_validation(py::module_& m) {
  m.def(
      "validate_guarantee",
      [](py::handle scores, py::handle unsafe, double alpha, double delta,
         std::int64_t calibration_size, std::int64_t draws, std::uint64_t seed, py::object grid,
         const std::string& procedure, double confidence, bool certificate_triple,
         std::int64_t threads) {
        constexpr std::string_view fn = "validate_guarantee";
        const std::vector<double> g = real_vector(scores, fn, "scores");
        const std::vector<std::int64_t> u64 = label_vector(unsafe, fn, "unsafe");
        std::vector<std::uint8_t> u(u64.size());
        for (std::size_t i = 0; i < u.size(); ++i) {
          if (u64[i] != 0 && u64[i] != 1)
            throw py::value_error(prefix(fn, "unsafe[" + std::to_string(i) + "]") + " = " +
                                  std::to_string(u64[i]) + " must be 0 or 1");
          u[i] = static_cast<std::uint8_t>(u64[i]);
        }
        cur::ValidationOptions o;
        o.alpha = alpha;
        o.delta = delta;
        o.calibration_size = calibration_size;
        o.draws = draws;
        o.seed = seed;
        o.quantiles = grid_quantiles(grid, fn);
        o.procedure = procedure_from_name(procedure, fn);
        o.confidence = confidence;
        o.certificate_triple = certificate_triple;
        o.threads = threads;
        cur::GuaranteeValidation v;
        {
          py::gil_scoped_release release;
          v = cur::validate_guarantee(g, u, o);
        }
        return validation_record(v);
      },
      py::arg("scores"), py::arg("unsafe"), py::kw_only(), py::arg("alpha") = 0.25,
      py::arg("delta") = 0.1, py::arg("calibration_size") = 200, py::arg("draws") = 2000,
      py::arg("seed") = 0, py::arg("grid") = py::none(), py::arg("procedure") = "fixed_sequence",
      py::arg("confidence") = 0.95, py::arg("certificate_triple") = true, py::arg("threads") = 0,
      "Guarantee validation on a pool with known unsafe bits: redraw the calibration sample "
      "`draws` times and report the certification rate, the false-certification rate "
      "Pr[certified and violated] (bounded by delta), the conditional violation rate, the "
      "closed-form rate and the triple's coverage, with Clopper-Pearson intervals. Per-draw "
      "results are columns in .outcomes (returned = -1: nothing certified). Same numbers for "
      "the same seed whatever the thread count.");
}

}  // namespace

void bind_curation(py::module_& m) {
  bind_certify(m);
  bind_selection(m);
  bind_gates(m);
  bind_mean_cost(m);
  bind_validation(m);
}

}  // namespace ltt::python
