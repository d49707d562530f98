// Tests for include/curation/fields.hpp and include/ltt/fields.hpp: the certificate's field
// list is what `ltt certify --json` promises (docs/cli.md), in its order; nested structs,
// optionals and vectors reach the visitor as themselves; the triple a certificate carries.

#include <curation/fields.hpp>
#include <ltt/fields.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace {

namespace cur = ltt::curation;

// Field names, nested objects as "name{...}", and whether each optional was present.
struct Names {
  std::string out;
  template <class T>
  void operator()(std::string_view name, const T& x) {
    out += std::string(name);
    if constexpr (ltt::is_optional_field<T>) {
      if (!x)
        out += "=none";
      else if constexpr (ltt::HasFields<typename T::value_type>)
        nested(*x);
    } else if constexpr (ltt::HasFields<T>) {
      nested(x);
    }
    out += ' ';
  }
  template <class T>
  void nested(const T& x) {
    out += '{';
    fields(x, *this);
    out += '}';
  }
};

template <class T>
std::string names(const T& x) {
  Names n;
  fields(x, n);
  return n.out;
}

}  // namespace

TEST_CASE("fields: the certificate in the order of ltt certify --json") {
  cur::Certificate c;
  c.threshold = 0.5;
  c.fallback_record = cur::FallbackRecord{};
  CHECK(names(c) ==
        "certified threshold quantile selection_size fallback alpha delta pool_size "
        "calibration_size calibration_unsafe grid_size merged_quantiles steps "
        "certified_step=none fallback_record{labels safe_labels safe_mass_lower "
        "minimum_selection count } threshold_set_size drop_unsafe_calibration dropped ");
}

TEST_CASE("fields: an infinite threshold is none, since JSON cannot hold it") {
  cur::Certificate c;
  c.threshold = std::numeric_limits<double>::infinity();
  CHECK(names(c).find("threshold=none ") != std::string::npos);
}

TEST_CASE("fields: a priced certificate carries the triple's summary, or none") {
  const cur::Certificate c;
  const std::optional<ltt::CertificateTriple> none;
  CHECK(names(cur::PricedCertificate{&c, &none}).ends_with("dropped triple=none "));
  const std::optional<ltt::CertificateTriple> triple = ltt::CertificateTriple{};
  CHECK(names(cur::PricedCertificate{&c, &triple})
            .ends_with("dropped triple{r_hat r_lo conditional_bound N1 m1 k1 U1_upper_decile "
                       "r_hat_error_bound } "));
}

TEST_CASE("fields: the values reach the visitor unconverted") {
  cur::ProportionEstimate p;
  p.count = 3;
  p.rate = 0.25;
  std::vector<std::string> kinds;
  fields(p, [&](std::string_view name, const auto& x) {
    using T = std::remove_cvref_t<decltype(x)>;
    if (name == "count") CHECK((std::is_same_v<T, std::int64_t> && x == 3));
    if constexpr (std::is_same_v<T, std::optional<double>>) CHECK(*x == 0.25);
    kinds.emplace_back(name);
  });
  CHECK(kinds == std::vector<std::string>{"count", "trials", "rate", "lower", "upper"});
  static_assert(ltt::HasFields<cur::GuaranteeValidation>);
  static_assert(ltt::HasFields<ltt::CertificateTriple>);
  static_assert(!ltt::HasFields<double>);
  static_assert(ltt::is_list_field<std::vector<cur::CertificateStep>>);
}
