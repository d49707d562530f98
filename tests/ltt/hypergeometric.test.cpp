// ltt::hypergeometric_* against tests/reference/hypergeometric.csv: exact values, written to 21
// significant digits by tests/reference/hypergeometric_reference.py (see the README there).
//
// Bars, per row of the table:
//   pmf, cdf, sf        relative error <= 1e-13 where the reference is a normal double; below
//                       DBL_MIN the result lies in [0, DBL_MIN (1 + 1e-13)]; exact 0 and 1 exact.
//   log_pmf/cdf/sf      relative error <= 1e-13 wherever finite and non-zero, also for logs
//                       tiny in magnitude (a value of 1 - 1e-30); exact 0 and -inf exact; a
//                       log below DBL_MIN in magnitude (a value of 1 - 1e-400) must lie in
//                       [-DBL_MIN, 0], since no double is closer.
//   cdf + sf            within 2 ulps of 1; no NaN anywhere.
// Like Boost.Math's table tests, each family reports its worst error per function in units of
// DBL_EPSILON and the row where it occurs.

#include <ltt/hypergeometric.hpp>

#include "../support/reference_csv.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

constexpr long double tolerance = 1e-13L;

// One reference value: the number, and whether the table states it exactly (0, 1, -inf)
// rather than rounded to 21 digits ("1.00000000000000000000e0" is 1 - something tiny).
struct Value {
  long double x;
  std::string text;
  bool exact;
};

struct Row {
  std::string family;
  std::int64_t k, N, K, n;
  Value pmf, cdf, sf, log_pmf, log_cdf, log_sf;
};

Value value(const ltt_test::ReferenceRow& r, const std::string& column) {
  const std::string& s = r.text(column);
  return {r.number(column), s, s == "0" || s == "1" || s == "-inf"};
}

std::vector<Row> load() {
  std::vector<Row> rows;
  for (const auto& r : ltt_test::read_reference("hypergeometric.csv"))
    rows.push_back({r.text("family"), r.integer("k"), r.integer("N"), r.integer("K"),
                    r.integer("n"), value(r, "pmf"), value(r, "cdf"), value(r, "sf"),
                    value(r, "log_pmf"), value(r, "log_cdf"), value(r, "log_sf")});
  return rows;
}

const std::vector<Row>& table() {
  static const std::vector<Row> rows = load();
  return rows;
}

using Function = double (*)(std::int64_t, std::int64_t, std::int64_t, std::int64_t);

struct Checked {
  const char* name;
  Function f;
  bool log;
  Value Row::*reference;
};

const Checked functions[] = {
    {"pmf", ltt::hypergeometric_pmf, false, &Row::pmf},
    {"cdf", ltt::hypergeometric_cdf, false, &Row::cdf},
    {"sf", ltt::hypergeometric_sf, false, &Row::sf},
    {"log_pmf", ltt::hypergeometric_log_pmf, true, &Row::log_pmf},
    {"log_cdf", ltt::hypergeometric_log_cdf, true, &Row::log_cdf},
    {"log_sf", ltt::hypergeometric_log_sf, true, &Row::log_sf},
};

std::string where(const Row& r) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "(k=%lld, N=%lld, K=%lld, n=%lld)", static_cast<long long>(r.k),
                static_cast<long long>(r.N), static_cast<long long>(r.K),
                static_cast<long long>(r.n));
  return buf;
}

std::string mismatch(const Row& r, const char* name, double got, const Value& want,
                     const char* why) {
  char buf[320];
  std::snprintf(buf, sizeof buf, "%s %s%s: got %.17g, reference %.17Lg (%s): %s", r.family.c_str(),
                name, where(r).c_str(), got, want.x, want.text.c_str(), why);
  return buf;
}

// Worst relative error of one function over one family, in units of DBL_EPSILON.
struct WorstUlps {
  long double eps = 0;
  std::string row = "none";
  int measured = 0;
  int failures = 0;
};

constexpr int shown_failures = 10;

void fail(WorstUlps& w, const std::string& message) {
  if (++w.failures <= shown_failures) FAIL_CHECK(message);
}

// Checks one result against its reference; returns nothing, records into w.
void check_value(const Row& r, const Checked& c, double got, WorstUlps& w) {
  const Value& want = r.*c.reference;
  if (std::isnan(got)) return fail(w, mismatch(r, c.name, got, want, "NaN"));
  if (want.exact) {
    if (static_cast<long double>(got) != want.x)
      fail(w, mismatch(r, c.name, got, want, "an exact value must come out exactly"));
    return;
  }
  if (std::fabs(want.x) < static_cast<long double>(DBL_MIN)) {
    // Below the normal range (a value, or a log of a value within 1e-308 of 1) only the
    // absence of a wrong normal number is required; its sign must be right.
    const long double limit = DBL_MIN * (1 + tolerance);
    const long double g = c.log ? -static_cast<long double>(got) : got;
    if (!(g >= 0 && g <= limit))
      fail(w, mismatch(r, c.name, got, want,
                       c.log ? "must lie in [-DBL_MIN, 0]" : "must lie in [0, DBL_MIN]"));
    return;
  }
  const long double err = std::fabs(static_cast<long double>(got) - want.x) / std::fabs(want.x);
  ++w.measured;
  if (!(err / DBL_EPSILON <= w.eps)) {  // also catches an infinite result
    w.eps = err / DBL_EPSILON;
    w.row = where(r);
  }
  if (!(err <= tolerance)) {
    char why[64];
    std::snprintf(why, sizeof why, "relative error %.3Lg > 1e-13", err);
    fail(w, mismatch(r, c.name, got, want, why));
  }
}

void check_family(const std::string& family) {
  std::map<std::string, WorstUlps> worst;
  WorstUlps sum;  // cdf + sf - 1, in ulps of 1 (DBL_EPSILON)
  int rows = 0;
  for (const Row& r : table()) {
    if (r.family != family) continue;
    ++rows;
    double got[std::size(functions)];
    for (std::size_t i = 0; i < std::size(functions); ++i) {
      const Checked& c = functions[i];
      got[i] = c.f(r.k, r.N, r.K, r.n);
      check_value(r, c, got[i], worst[c.name]);
    }
    const long double total = static_cast<long double>(got[1]) + got[2];
    const long double ulps = std::fabs(total - 1) / DBL_EPSILON;
    ++sum.measured;
    if (!(ulps <= sum.eps)) {
      sum.eps = ulps;
      sum.row = where(r);
    }
    if (!(ulps <= 2)) {
      char why[160];
      std::snprintf(why, sizeof why, "%s cdf + sf%s = 1 %+.3Lg ulps (cdf %.17g, sf %.17g)",
                    family.c_str(), where(r).c_str(), ulps, got[1], got[2]);
      fail(sum, why);
    }
  }
  REQUIRE_MESSAGE(rows > 0, "no rows of family " << family << " in the table");
  for (const Checked& c : functions) {
    const WorstUlps& w = worst[c.name];
    char line[256];
    std::snprintf(line, sizeof line, "%-8s %-8s worst %9.3Lg eps over %4d values at %s%s",
                  family.c_str(), c.name, w.eps, w.measured, w.row.c_str(),
                  w.failures > shown_failures ? " (more failures than shown)" : "");
    MESSAGE(line);
  }
  char line[256];
  std::snprintf(line, sizeof line, "%-8s cdf+sf-1 worst %9.3Lg eps over %4d rows at %s",
                family.c_str(), sum.eps, sum.measured, sum.row.c_str());
  MESSAGE(line);
}

}  // namespace

TEST_CASE("hypergeometric reference table is complete") {
  std::map<std::string, int> count;
  for (const Row& r : table()) ++count[r.family];
  for (const char* family : {"small", "dsrl", "large", "extreme", "huge", "edge"})
    CHECK_MESSAGE(count[family] >= 50, "family " << family << " has " << count[family] << " rows");
  CHECK(table().size() >= 1500);
}

TEST_CASE("hypergeometric against the exact table: small (N <= 100)") { check_family("small"); }
TEST_CASE("hypergeometric against the exact table: dsrl (composition p-values)") {
  check_family("dsrl");
}
TEST_CASE("hypergeometric against the exact table: large (N up to 1e12)") { check_family("large"); }
TEST_CASE("hypergeometric against the exact table: extreme (tails below 1e-300)") {
  check_family("extreme");
}
TEST_CASE("hypergeometric against the exact table: huge (N = 2^53)") { check_family("huge"); }
TEST_CASE("hypergeometric against the exact table: edge (support ends, degenerate laws)") {
  check_family("edge");
}

TEST_CASE("hypergeometric rejects invalid parameters, naming the parameter") {
  constexpr std::int64_t big = std::numeric_limits<std::int64_t>::max();
  constexpr std::int64_t two53 = std::int64_t{1} << 53;
  struct Bad {
    std::int64_t N, K, n;
    const char* parameter;
  };
  const Bad bad[] = {
      {-1, 0, 0, "N"},
      {-5, 2, 1, "N"},
      {two53 + 1, 5, 5, "N"},
      {big, 5, 5, "N"},
      {10, -1, 5, "K"},
      {10, 11, 5, "K"},
      {two53, two53 + 1, 5, "K"},
      {10, 5, -1, "n"},
      {10, 5, 11, "n"},
      {two53, 5, two53 + 1, "n"},
  };
  for (const Bad& b : bad) {
    for (const Checked& c : functions) {
      for (std::int64_t k : {std::int64_t{-1}, std::int64_t{0}, std::int64_t{3}}) {
        CAPTURE(c.name);
        CAPTURE(k);
        CAPTURE(b.N);
        CAPTURE(b.K);
        CAPTURE(b.n);
        // The library's messages quote the parameter: "... parameter 'K' = 11 must not ..."
        const std::string quoted = std::string("'") + b.parameter + "'";
        bool thrown = false;
        try {
          static_cast<void>(c.f(k, b.N, b.K, b.n));
        } catch (const std::invalid_argument& e) {
          thrown = true;
          CHECK_MESSAGE(std::string(e.what()).find(quoted) != std::string::npos,
                        "message does not name " << quoted << ": " << e.what());
        }
        CHECK_MESSAGE(thrown, "no std::invalid_argument for " << quoted);
      }
    }
  }
}

TEST_CASE("hypergeometric: k outside the support is not an error") {
  constexpr double inf = std::numeric_limits<double>::infinity();
  constexpr std::int64_t lowest = std::numeric_limits<std::int64_t>::min();
  constexpr std::int64_t highest = std::numeric_limits<std::int64_t>::max();
  struct Law {
    std::int64_t N, K, n;
  };
  // Supports [0, 5], [3, 6] (n + K > N), [0, 2] (K < n), and a population of 2^53.
  for (const Law& d : {Law{10, 5, 5}, Law{10, 7, 6}, Law{10, 2, 6},
                       Law{std::int64_t{1} << 53, std::int64_t{1} << 52, 50}}) {
    const std::int64_t lo = d.n + d.K > d.N ? d.n + d.K - d.N : 0;
    const std::int64_t hi = d.n < d.K ? d.n : d.K;
    CAPTURE(d.N);
    CAPTURE(d.K);
    CAPTURE(d.n);
    for (std::int64_t k : {lowest, std::int64_t{-1000}, std::int64_t{-1}, lo - 1}) {
      if (k >= lo) continue;
      CAPTURE(k);
      CHECK(ltt::hypergeometric_pmf(k, d.N, d.K, d.n) == 0.0);
      CHECK(ltt::hypergeometric_cdf(k, d.N, d.K, d.n) == 0.0);
      CHECK(ltt::hypergeometric_sf(k, d.N, d.K, d.n) == 1.0);
      CHECK(ltt::hypergeometric_log_pmf(k, d.N, d.K, d.n) == -inf);
      CHECK(ltt::hypergeometric_log_cdf(k, d.N, d.K, d.n) == -inf);
      CHECK(ltt::hypergeometric_log_sf(k, d.N, d.K, d.n) == 0.0);
    }
    for (std::int64_t k : {hi + 1, d.n + 1, std::int64_t{1} << 60, highest}) {
      CAPTURE(k);
      CHECK(ltt::hypergeometric_pmf(k, d.N, d.K, d.n) == 0.0);
      CHECK(ltt::hypergeometric_cdf(k, d.N, d.K, d.n) == 1.0);
      CHECK(ltt::hypergeometric_sf(k, d.N, d.K, d.n) == 0.0);
      CHECK(ltt::hypergeometric_log_pmf(k, d.N, d.K, d.n) == -inf);
      CHECK(ltt::hypergeometric_log_cdf(k, d.N, d.K, d.n) == 0.0);
      CHECK(ltt::hypergeometric_log_sf(k, d.N, d.K, d.n) == -inf);
    }
  }
}

// The table of log(n!) behind the point mass for N <= log_factorial_limit
// (<ltt/detail/log_factorial_table.hpp>): each hi a multiple of 2^-32, each |lo| <= 2^-33, and
// every step hi + lo of n against n - 1 equal to log n. The his differ exactly and the los to
// about 2^-86, so a step is checked to the accuracy of logl (about 1e-18 here): one wrong entry
// anywhere breaks two steps.
TEST_CASE("hypergeometric: the log-factorial table is log(n!) split exactly") {
  const auto& t = ltt::detail::log_factorial_table;
  REQUIRE(std::size(t) == static_cast<std::size_t>(ltt::detail::log_factorial_limit) + 1);
  CHECK(t[0].hi == 0.0);
  CHECK(t[0].lo == 0.0);
  CHECK(t[1].hi == 0.0);
  CHECK(t[1].lo == 0.0);
  int failures = 0;
  long double worst = 0.0L;
  for (std::size_t n = 0; n < std::size(t); ++n) {
    const double scaled = std::ldexp(t[n].hi, 32);
    const bool on_grid = scaled == std::floor(scaled) && t[n].hi < 0x1p15;
    const bool small_lo = std::fabs(t[n].lo) <= 0x1p-33;
    long double step_error = 0.0L;
    if (n >= 2) {
      const long double step = static_cast<long double>(t[n].hi - t[n - 1].hi) +
                               (static_cast<long double>(t[n].lo) - t[n - 1].lo);
      step_error = std::fabs(step - std::log(static_cast<long double>(n)));
      worst = std::max(worst, step_error);
    }
    if ((!on_grid || !small_lo || step_error > 1e-17L) && ++failures <= 5)
      FAIL_CHECK("entry " << n << ": hi = " << t[n].hi << ", lo = " << t[n].lo
                          << ", step error " << static_cast<double>(step_error));
  }
  CHECK(failures == 0);
  MESSAGE("log-factorial table: worst step error " << static_cast<double>(worst));
}

// The two ways to one mass, against each other where both apply (N <= log_factorial_limit):
// the table (exact log, a few eps measured) and the saddle point (at most 40 eps measured on
// the exact references), on every k of laws spanning the table's range, its last entry
// included. Values agree within 64 eps where they are normal doubles, logs within
// 64 eps relative everywhere, so neither path can drift from the other unseen.
TEST_CASE("hypergeometric: the log-factorial table and the saddle point agree") {
  using ltt::detail::Hypergeometric;
  constexpr long double bar = 64 * static_cast<long double>(DBL_EPSILON);
  const std::int64_t limit = ltt::detail::log_factorial_limit;
  long double worst_value = 0.0L, worst_log = 0.0L;
  int failures = 0, compared = 0;
  for (const std::int64_t N : {std::int64_t{2}, std::int64_t{37}, std::int64_t{150},
                               std::int64_t{751}, std::int64_t{2000}, limit - 1, limit}) {
    for (const double fK : {0.01, 0.25, 0.5, 0.9}) {
      for (const double fn : {0.02, 0.3, 0.5, 0.97}) {
        const auto K = std::max<std::int64_t>(1, static_cast<std::int64_t>(fK * N));
        const auto n = std::max<std::int64_t>(1, static_cast<std::int64_t>(fn * N));
        const Hypergeometric h(N, K, n);
        if (h.lo == h.hi) continue;
        for (std::int64_t k = h.lo; k <= h.hi; ++k) {
          const auto table = ltt::detail::point_mass_by_table(h, k);
          const auto saddle = ltt::detail::point_mass_by_saddle_point<true>(h, k);
          ++compared;
          const long double log_error =
              std::fabs(table.log - saddle.log) / std::max(1.0L, std::fabs(saddle.log));
          long double value_error = 0.0L;
          if (saddle.value >= DBL_MIN)
            value_error = std::fabs(static_cast<long double>(table.value) - saddle.value) /
                          saddle.value;
          worst_log = std::max(worst_log, log_error);
          worst_value = std::max(worst_value, value_error);
          if ((log_error > bar || value_error > bar) && ++failures <= 5)
            FAIL_CHECK("k=" << k << " N=" << N << " K=" << K << " n=" << n << ": table "
                            << table.value << " (log " << static_cast<double>(table.log)
                            << "), saddle point " << saddle.value << " (log "
                            << static_cast<double>(saddle.log) << ")");
        }
      }
    }
  }
  CHECK(failures == 0);
  CHECK(compared > 10000);
  MESSAGE("table against saddle point over " << compared << " masses: worst "
          << static_cast<double>(worst_value / DBL_EPSILON) << " eps in the value, "
          << static_cast<double>(worst_log / DBL_EPSILON) << " eps in the log");
}
