#pragma once
// The fields of each result struct, named and in order: fields(x, visit) calls
// visit(name, value) once per field. One list per struct, so every serializer (the program's
// JSON in reference_pipeline/data/json_fields.hpp, the Python module's records in
// python/src/record.hpp) writes the same names in the same order and none can drift from
// another. A value is a number, a bool, a std::string_view, a std::optional of one (absent:
// JSON null, Python None), a std::vector of them, or another struct that has fields(). Enums
// are visited as their names. Nothing here knows JSON or Python: the visitor is a template.
//
//   struct Print { template <class T> void operator()(std::string_view name, const T& v); };
//   fields(ltt::certificate_triple(...), Print{});
//
// Curation's structs: <curation/fields.hpp>.

#include <ltt/certificate_triple.hpp>
#include <ltt/certification_rate.hpp>
#include <ltt/fixed_sequence.hpp>

#include <concepts>
#include <optional>
#include <string_view>
#include <type_traits>
#include <vector>

namespace ltt {

namespace detail {
struct IgnoreField {
  template <class T>
  void operator()(std::string_view, const T&) const {}
};
}  // namespace detail

// A struct with a field list, found by argument-dependent lookup.
template <class T>
concept HasFields = requires(const T& x, detail::IgnoreField& visit) {
  fields(x, visit);
};

// The two containers a value may come in.
template <class T>
inline constexpr bool is_optional_field = false;
template <class T>
inline constexpr bool is_optional_field<std::optional<T>> = true;
template <class T>
inline constexpr bool is_list_field = false;
template <class T>
inline constexpr bool is_list_field<std::vector<T>> = true;

template <class Visit>
void fields(const CertificateTriple& t, Visit&& visit) {
  visit("N", t.N);
  visit("N1", t.N1);
  visit("m1", t.m1);
  visit("k1", t.k1);
  visit("n", t.n);
  visit("alpha", t.alpha);
  visit("delta", t.delta);
  visit("posterior_a", t.posterior_a);
  visit("posterior_b", t.posterior_b);
  visit("r_hat", t.r_hat);
  visit("r_lo", t.r_lo);
  visit("conditional_bound", t.conditional_bound);
  visit("U1_upper_decile", t.U1_upper_decile);
  visit("r_hat_lower", t.r_hat_lower);
  visit("r_hat_upper", t.r_hat_upper);
  visit("error_bound", t.error_bound);
  visit("window_lo", t.window_lo);
  visit("window_hi", t.window_hi);
  visit("tail_mass", t.tail_mass);
  visit("rate_evaluations", t.rate_evaluations);
  visit("exhaustive", t.exhaustive);
}

// The triple as a certificate carries it: the three numbers, the counts they come from, and
// the accuracy of r_hat.
struct TripleSummary {
  const CertificateTriple* triple;
};

template <class Visit>
void fields(const TripleSummary& s, Visit&& visit) {
  const CertificateTriple& t = *s.triple;
  visit("r_hat", t.r_hat);
  visit("r_lo", t.r_lo);
  visit("conditional_bound", t.conditional_bound);
  visit("N1", t.N1);
  visit("m1", t.m1);
  visit("k1", t.k1);
  visit("U1_upper_decile", t.U1_upper_decile);
  visit("r_hat_error_bound", t.error_bound);
}

template <class Visit>
void fields(const FixedSequenceResult& r, Visit&& visit) {
  visit("tested", r.tested);
  visit("last_rejected", r.last_rejected);
  visit("pvalues", r.pvalues);
}

template <class Visit>
void fields(const MultipleTestingResult& r, Visit&& visit) {
  visit("procedure", procedure_name(r.procedure));
  visit("hypotheses", r.hypotheses);
  visit("tested", r.tested);
  visit("rejected", r.rejected);
  visit("deepest_rejected", r.deepest_rejected);
}

template <class Visit>
void fields(const CertificationDichotomy& c, Visit&& visit) {
  visit("purity_margin", c.purity_margin);
  visit("rate_at_most_delta", c.rate_at_most_delta);
  visit("rate_tends_to_one", c.rate_tends_to_one);
}

}  // namespace ltt
