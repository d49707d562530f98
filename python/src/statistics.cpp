// Bindings for include/ltt/: hypergeometric tails and composition p-values (vectorized with
// broadcasting), multiple testing over a grid, the bounds, the certification rate and label
// budget, and the certificate triple. Names and argument order are the C++ ones.

#include <ltt/ltt.hpp>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "convert.hpp"
#include "record.hpp"

namespace ltt::python {

namespace {

using Tail = double (*)(std::int64_t, std::int64_t, std::int64_t, std::int64_t);

void bind_hypergeometric(py::module_& m, const char* name, Tail f, const char* what) {
  const std::string doc = std::string(name) + "(k, N, K, n)\n\n" + what +
                          " for X ~ Hyp(population N, successes K, draws n).\n"
                          "Vectorized: integer arrays or ints, broadcast together like a numpy "
                          "ufunc; a float when every argument is a scalar. k outside the support "
                          "is not an error. Counts must have an integer dtype (TypeError "
                          "otherwise); impossible parameters raise ValueError.";
  m.def(
      name,
      [name, f](py::handle k, py::handle N, py::handle K, py::handle n) {
        return map_broadcast<std::int64_t, std::int64_t, std::int64_t, std::int64_t>(
            name, {"k", "N", "K", "n"}, f, count_array(k, name, "k"), count_array(N, name, "N"),
            count_array(K, name, "K"), count_array(n, name, "n"));
      },
      py::arg("k"), py::arg("N"), py::arg("K"), py::arg("n"), doc.c_str());
}

// composition_pvalue over broadcast arrays: the elements are gathered into cases and evaluated
// by ltt::composition_pvalues, equal to the scalar call element by element. Scalars, and arrays
// with an impossible element, take map_broadcast, whose message names the element's index.
py::object composition_pvalue_array(const py::array_t<std::int64_t>& k,
                                    const py::array_t<std::int64_t>& m,
                                    const py::array_t<std::int64_t>& N_sel,
                                    const py::array_t<double>& alpha) {
  constexpr const char* fn = "composition_pvalue";
  const std::array<std::string_view, 4> names = {"k", "m", "N_sel", "alpha"};
  const std::array<py::array, 4> in{k, m, N_sel, alpha};
  const std::vector<py::ssize_t> shape = broadcast_shape<4>(fn, in, names);
  auto one_by_one = [&] {
    return map_broadcast<std::int64_t, std::int64_t, std::int64_t, double>(
        fn, names, ltt::composition_pvalue, k, m, N_sel, alpha);
  };
  if (shape.empty()) return one_by_one();
  py::array_t<double> out(shape);
  double* const o = out.mutable_data();
  bool rejected = false;
  {
    py::gil_scoped_release release;
    // Chunks of cases on the stack, each evaluated as soon as it is full.
    constexpr std::size_t chunk = 1024;
    std::array<ltt::CompositionCase, chunk> cases;
    std::size_t filled = 0;
    py::ssize_t first = 0;
    auto flush = [&] {
      ltt::composition_pvalues({cases.data(), filled}, {o + first, filled});
      first += static_cast<py::ssize_t>(filled);
      filled = 0;
    };
    try {
      for_each_broadcast<std::int64_t, std::int64_t, std::int64_t, double>(
          shape, in, [&](py::ssize_t, std::int64_t kk, std::int64_t mm, std::int64_t NN, double a) {
            cases[filled++] = {kk, mm, NN, a};
            if (filled == chunk) flush();
          });
      flush();
    } catch (const std::invalid_argument&) {
      rejected = true;
    }
  }
  return rejected ? one_by_one() : py::object(out);
}

void bind_tails(py::module_& m) {
  // --- hypergeometric.hpp ---------------------------------------------------------------------
  bind_hypergeometric(m, "hypergeometric_pmf", ltt::hypergeometric_pmf, "P[X = k]");
  bind_hypergeometric(m, "hypergeometric_cdf", ltt::hypergeometric_cdf, "P[X <= k]");
  bind_hypergeometric(m, "hypergeometric_sf", ltt::hypergeometric_sf,
                      "P[X > k], computed directly (never 1 - cdf)");
  bind_hypergeometric(m, "hypergeometric_log_pmf", ltt::hypergeometric_log_pmf,
                      "log P[X = k], finite where P underflows");
  bind_hypergeometric(m, "hypergeometric_log_cdf", ltt::hypergeometric_log_cdf,
                      "log P[X <= k], finite where P underflows");
  bind_hypergeometric(m, "hypergeometric_log_sf", ltt::hypergeometric_log_sf,
                      "log P[X > k], finite where P underflows");

  // --- pvalue.hpp -----------------------------------------------------------------------------
  m.def(
      "composition_pvalue",
      [](py::handle k, py::handle m_, py::handle N_sel, py::handle alpha) {
        constexpr const char* fn = "composition_pvalue";
        const py::array_t<std::int64_t> ka = count_array(k, fn, "k"), ma = count_array(m_, fn, "m"),
                                        Na = count_array(N_sel, fn, "N_sel");
        const py::array_t<double> aa = real_array(alpha, fn, "alpha");
        return composition_pvalue_array(ka, ma, Na, aa);
      },
      py::arg("k"), py::arg("m"), py::arg("N_sel"), py::arg("alpha"),
      "composition_pvalue(k, m, N_sel, alpha)\n\n"
      "p = P[Hyp(N_sel, floor(alpha N_sel) + 1, m) <= k], rounded up (never below the exact "
      "value): k unsafe among m calibration draws in a selection of N_sel, H0 'more than "
      "alpha N_sel unsafe'. Vectorized with broadcasting like hypergeometric_cdf; alpha may be "
      "an array too. An array is evaluated by composition_pvalues (SIMD across elements), each "
      "element the same double as the scalar call.");
  m.def("null_boundary", &ltt::null_boundary, py::arg("N_sel"), py::arg("alpha"),
        "U* = floor(alpha N_sel) + 1, alpha read as the decimal it prints as.");
  m.def(
      "composition_pvalue_table",
      [](std::int64_t N_sel, double alpha, std::int64_t m_max) {
        const ltt::CompositionPvalueTable table = [&] {
          py::gil_scoped_release release;
          return ltt::CompositionPvalueTable(N_sel, alpha, m_max);
        }();
        const py::ssize_t size = static_cast<py::ssize_t>(m_max + 1);
        py::array_t<double> out({size, size});
        auto w = out.mutable_unchecked<2>();
        for (std::int64_t mm = 0; mm <= m_max; ++mm) {
          const auto row = table.row(mm);
          for (std::int64_t k = 0; k <= m_max; ++k)
            w(mm, k) = k <= mm ? row[static_cast<std::size_t>(k)]
                               : std::numeric_limits<double>::quiet_NaN();
        }
        return out;
      },
      py::arg("N_sel"), py::arg("alpha"), py::arg("m_max"),
      "composition_pvalue_table(N_sel, alpha, m_max)\n\n"
      "Every composition p-value of one selection size at once (CompositionPvalueTable): a "
      "(m_max + 1, m_max + 1) float64 array with p(k, m) at [m, k] for k <= m and NaN above "
      "the diagonal (k > m is not a possible count).");
}

void bind_multiple_testing(py::module_& m) {
  // --- fixed_sequence.hpp ---------------------------------------------------------------------
  m.def(
      "fixed_sequence",
      [](py::handle pvalues, double delta) {
        const std::vector<double> p = real_vector(pvalues, "fixed_sequence", "pvalues");
        return record(ltt::fixed_sequence(p, delta), Arrays::numpy);
      },
      py::arg("pvalues"), py::arg("delta"),
      "Strict fixed-sequence walk over p-values in grid order, each at level delta; stops at "
      "the first failure. Record: tested, last_rejected (None when the first test fails), "
      "pvalues (the ones reached).");
  m.def(
      "bonferroni",
      [](py::handle pvalues, double delta) {
        return record(ltt::bonferroni(real_vector(pvalues, "bonferroni", "pvalues"), delta),
                      Arrays::numpy);
      },
      py::arg("pvalues"), py::arg("delta"),
      "Bonferroni over the grid: every p-value at delta / J. Record: procedure, hypotheses, "
      "tested, rejected (indices), deepest_rejected (None when nothing is rejected).");
  m.def(
      "holm",
      [](py::handle pvalues, double delta) {
        return record(ltt::holm(real_vector(pvalues, "holm", "pvalues"), delta), Arrays::numpy);
      },
      py::arg("pvalues"), py::arg("delta"),
      "Holm's step-down procedure; the record of bonferroni.");
  m.def(
      "test_hypotheses",
      [](const std::string& procedure, py::handle pvalues, double delta) {
        constexpr const char* fn = "test_hypotheses";
        return record(ltt::test_hypotheses(procedure_from_name(procedure, fn),
                                           real_vector(pvalues, fn, "pvalues"), delta),
                      Arrays::numpy);
      },
      py::arg("procedure"), py::arg("pvalues"), py::arg("delta"),
      "procedure: 'fixed_sequence', 'bonferroni' or 'holm'; the record of bonferroni.");
}

void bind_bounds(py::module_& m) {
  // --- bounds.hpp -----------------------------------------------------------------------------
  m.def("clopper_pearson_lower", &ltt::clopper_pearson_lower, py::arg("successes"),
        py::arg("trials"), py::arg("delta"),
        "One-sided Clopper-Pearson lower limit at confidence 1 - delta.");
  m.def("clopper_pearson_upper", &ltt::clopper_pearson_upper, py::arg("successes"),
        py::arg("trials"), py::arg("delta"),
        "One-sided Clopper-Pearson upper limit at confidence 1 - delta.");
  m.def(
      "maurer_pontil_upper",
      [](py::handle x, double range, double delta) {
        return ltt::maurer_pontil_upper(real_vector(x, "maurer_pontil_upper", "x"), range, delta);
      },
      py::arg("x"), py::arg("range"), py::arg("delta"),
      "Empirical-Bernstein upper bound at confidence 1 - delta on the mean of values in "
      "[0, range] (Maurer & Pontil 2009).");
  m.def(
      "hoeffding_serfling_pvalue",
      [](py::handle sample_costs, std::int64_t population, double budget, double range) {
        return ltt::hoeffding_serfling_pvalue(
            real_vector(sample_costs, "hoeffding_serfling_pvalue", "sample_costs"), population,
            budget, range);
      },
      py::arg("sample_costs"), py::arg("population"), py::arg("budget"), py::arg("range"),
      "p-value for H0 'the mean cost exceeds budget' from a without-replacement sample.");
  m.def(
      "betting_mean_pvalue",
      [](py::handle sample_costs, std::int64_t population, double budget, double range,
         double delta, std::int64_t horizon) {
        return ltt::betting_mean_pvalue(
            real_vector(sample_costs, "betting_mean_pvalue", "sample_costs"), population, budget,
            range, delta, horizon);
      },
      py::arg("sample_costs"), py::arg("population"), py::arg("budget"), py::arg("range"),
      py::arg("delta"), py::arg("horizon") = 0,
      "Anytime-valid betting p-value for H0 'the mean cost is at least budget' from a "
      "without-replacement sample in draw order, tuned for level delta and `horizon` draws "
      "(0: the sample's size).");
  m.def("resampled_unsafe_bound", &ltt::resampled_unsafe_bound, py::arg("alpha"), py::arg("kappa"),
        "Unsafe mass after return-weighted resampling with weights in [e^-kappa, e^kappa].");
}

void bind_rate(py::module_& m) {
  // --- certification_rate.hpp -----------------------------------------------------------------
  m.def("certification_rate", &ltt::certification_rate, py::arg("N"), py::arg("N1"), py::arg("U1"),
        py::arg("n"), py::arg("alpha"), py::arg("delta"), py::call_guard<py::gil_scoped_release>(),
        "Probability that the strict fixed-sequence walk certifies (closed form).");
  m.def("label_budget", &ltt::label_budget, py::arg("N"), py::arg("N1"), py::arg("U1"),
        py::arg("alpha"), py::arg("delta"), py::arg("target_rate"),
        py::call_guard<py::gil_scoped_release>(),
        "Smallest n with certification_rate(...) >= target_rate, or None if even n = N misses.");
  // --- joint_certification_rate.hpp (several budgets) ----------------------------------------
  m.def(
      "several_budgets_rate",
      [](const std::string& procedure, std::int64_t N, std::int64_t N1, py::handle U1,
         std::int64_t n, py::handle alphas, double delta) {
        constexpr std::string_view fn = "several_budgets_rate";
        const ltt::BudgetProcedure p = budget_procedure_from_name(procedure, fn);
        const std::vector<std::int64_t> u = count_vector(U1, fn, "U1");
        const std::vector<double> a = real_vector(alphas, fn, "alphas");
        py::gil_scoped_release release;
        return ltt::several_budgets_rate(p, N, N1, u, n, a, delta);
      },
      py::arg("procedure"), py::arg("N"), py::arg("N1"), py::arg("U1"), py::arg("n"),
      py::arg("alphas"), py::arg("delta"),
      "Probability that n uniform labels certify every budget (closed form, "
      "docs/several-budgets.md): procedure 'one_threshold' or 'one_threshold_per_budget'; U1[k] "
      "and alphas[k] are budget k's unsafe count in the first selection (N1 of N) and its alpha, "
      "the tightest budget first.");
  m.def(
      "joint_label_budget",
      [](const std::string& procedure, std::int64_t N, std::int64_t N1, py::handle U1,
         py::handle alphas, double delta, double target_rate) {
        constexpr std::string_view fn = "joint_label_budget";
        const ltt::BudgetProcedure p = budget_procedure_from_name(procedure, fn);
        const std::vector<std::int64_t> u = count_vector(U1, fn, "U1");
        const std::vector<double> a = real_vector(alphas, fn, "alphas");
        py::gil_scoped_release release;
        const std::vector<double> levels =
            ltt::budget_levels(p, delta, static_cast<std::int64_t>(u.size()));
        return ltt::joint_label_budget(N, N1, u, a, levels, target_rate);
      },
      py::arg("procedure"), py::arg("N"), py::arg("N1"), py::arg("U1"), py::arg("alphas"),
      py::arg("delta"), py::arg("target_rate"),
      "Smallest n with several_budgets_rate(...) >= target_rate, or None if even n = N misses.");
  m.def(
      "certification_rate_curve",
      [](std::int64_t N, std::int64_t N1, std::int64_t U1, double alpha, double delta,
         std::int64_t n_max) {
        std::vector<double> curve;
        {
          py::gil_scoped_release release;
          curve = ltt::certification_rate_curve(N, N1, U1, alpha, delta, n_max);
        }
        return to_numpy(curve);
      },
      py::arg("N"), py::arg("N1"), py::arg("U1"), py::arg("alpha"), py::arg("delta"),
      py::arg("n_max"), "rate(n) for n = 0..n_max as a float64 array.");
  m.def(
      "critical_counts",
      [](std::int64_t N1, double alpha, double delta, std::int64_t m_max) {
        return to_numpy(ltt::critical_counts(N1, alpha, delta, m_max));
      },
      py::arg("N1"), py::arg("alpha"), py::arg("delta"), py::arg("m_max"),
      "k_max(m), m = 0..m_max: the largest k the first test rejects (-1: none).");
  m.def(
      "conditional_certification_rates",
      [](std::int64_t N1, std::int64_t U1, double alpha, double delta, std::int64_t m_max) {
        return to_numpy(ltt::conditional_certification_rates(N1, U1, alpha, delta, m_max));
      },
      py::arg("N1"), py::arg("U1"), py::arg("alpha"), py::arg("delta"), py::arg("m_max"),
      "c(m) = P[certify | m draws in S_1], m = 0..m_max.");
  m.def(
      "purity_margin",
      [](double alpha, py::handle unsafe_fractions) {
        return ltt::purity_margin(
            alpha, real_vector(unsafe_fractions, "purity_margin", "unsafe_fractions"));
      },
      py::arg("alpha"), py::arg("unsafe_fractions"), "alpha - min_j u_j.");
  m.def(
      "certification_dichotomy",
      [](double alpha, py::handle unsafe_fractions) {
        return record(ltt::certification_dichotomy(
            alpha, real_vector(unsafe_fractions, "certification_dichotomy", "unsafe_fractions")));
      },
      py::arg("alpha"), py::arg("unsafe_fractions"),
      "Record: purity_margin, rate_at_most_delta (u_min > alpha), rate_tends_to_one (u_1 < "
      "alpha).");
  m.def("hoeffding_min_draws", &ltt::hoeffding_min_draws, py::arg("margin"), py::arg("delta"));
  m.def("hoeffding_rate_bound", &ltt::hoeffding_rate_bound, py::arg("m"), py::arg("margin"),
        py::arg("delta"));

  py::class_<ltt::CertificationRateModel>(
      m, "CertificationRateModel",
      "Everything about rate(U1) that does not depend on U1, for a pool (N, N1), budget n and "
      "(alpha, delta): evaluate rate(U1) for many U1 at the cost of one pass each.")
      .def(py::init<std::int64_t, std::int64_t, std::int64_t, double, double>(), py::arg("N"),
           py::arg("N1"), py::arg("n"), py::arg("alpha"), py::arg("delta"),
           py::call_guard<py::gil_scoped_release>())
      .def("rate", &ltt::CertificationRateModel::rate, py::arg("U1"),
           py::call_guard<py::gil_scoped_release>())
      .def_property_readonly("N", &ltt::CertificationRateModel::N)
      .def_property_readonly("N1", &ltt::CertificationRateModel::N1)
      .def_property_readonly("n", &ltt::CertificationRateModel::n)
      .def_property_readonly("truncated_mass", &ltt::CertificationRateModel::truncated_mass);
}

void bind_triple(py::module_& m) {
  // --- certificate_triple.hpp -----------------------------------------------------------------
  m.def(
      "certificate_triple",
      [](std::int64_t N, std::int64_t N1, std::int64_t m1, std::int64_t k1, std::int64_t n,
         double alpha, double delta, double tolerance, double tail_mass, double lower_level,
         const std::string& sum) {
        ltt::CertificateTripleOptions o;
        o.tolerance = tolerance;
        o.tail_mass = tail_mass;
        o.lower_level = lower_level;
        using Sum = ltt::CertificateTripleOptions::Sum;
        if (sum == "automatic")
          o.sum = Sum::automatic;
        else if (sum == "exhaustive")
          o.sum = Sum::exhaustive;
        else if (sum == "bracket")
          o.sum = Sum::bracket;
        else
          throw py::value_error(prefix("certificate_triple", "sum") + " = '" + sum +
                                "' must be 'automatic', 'exhaustive' or 'bracket'");
        ltt::CertificateTriple t;
        {
          py::gil_scoped_release release;
          t = ltt::certificate_triple(N, N1, m1, k1, n, alpha, delta, o);
        }
        return record(t);
      },
      py::arg("N"), py::arg("N1"), py::arg("m1"), py::arg("k1"), py::arg("n"), py::arg("alpha"),
      py::arg("delta"), py::kw_only(), py::arg("tolerance") = 1e-9, py::arg("tail_mass") = 1e-12,
      py::arg("lower_level") = 0.1, py::arg("sum") = "automatic",
      "The certificate triple for the first selection S_1 (N1 of N) after n draws, m1 of them "
      "in S_1 and k1 of those unsafe: r_hat (posterior mean rate), r_lo (lower decile), "
      "conditional_bound = min(1, delta / r_lo), with the bracket and window that produced them.");
}

}  // namespace

void bind_statistics(py::module_& m) {
  bind_tails(m);
  bind_multiple_testing(m);
  bind_bounds(m);
  bind_rate(m);
  bind_triple(m);
}

}  // namespace ltt::python
