// Tests for reference_pipeline/pipeline/corridor_study.hpp: the corridor figure's numbers
// against the closed forms of the paper's Proposition "corridor".
//
// Three sources of each row are compared, with tolerances of known false-alarm probability:
//   simulated vs fitted clone   the rollouts are Bin(M, clone_exact): clone_exact must lie in
//                               the Clopper-Pearson interval of the simulation, two-sided at
//                               alpha = 1e-3 over all rows together (Bonferroni: alpha / (2
//                               rows) per side and row)
//   fitted clone vs closed form the clone is prod_t f(p_t) with p_t the pool's safe frequency
//                               at t, the closed form f(p̄)^T: the delta method on log (below),
//                               at 5 standard deviations plus the second-order bias
//   selection                   exactly safe whenever the selection is nonempty

#include <pipeline/corridor_study.hpp>

#include <data/text.hpp>
#include <ltt/bounds.hpp>
#include <tasks/corridor.hpp>

#include <doctest/doctest.h>

#include "test_text.hpp"

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

using ltt_pipeline_test::count;
using ltt_pipeline_test::error_of;

namespace {

namespace pl = ltt::pipeline;

const char* const method_names[] = {"unweighted", "clip 20", "clip 400", "trajectory selection"};

// Tolerance on |log clone_exact - log closed_form| for weight ratio W. With f(p) = pW / (pW + 1
// - p), log prod_t f(p_t) - T log f(p̄) ~ g sum_t (p_t - p̄), g = (log f)'(p̄) = 1 / (p̄ (p̄ W + 1 -
// p̄)). Each trajectory adds its T safe indicators to the sum; their variance is p̄(1 - p̄) and
// their covariance across steps c = q + (1 - q) p_s^2 - p̄^2 (the expert mixture), so
// Var sum_t p_t = (T p̄(1 - p̄) + T(T - 1) c) / N. The second-order term adds a bias of at most
// T |(log f)''(p̄)| p̄(1 - p̄) / (2 N), with (log f)'' = -(2 p̄ (W - 1) + 1) g^2.
double log_tolerance(const pl::CorridorStudyOptions& o, std::int64_t horizon, double w) {
  const double q = o.expert_mass, ps = o.safe_probability, p = q + (1 - q) * ps;
  const double t = static_cast<double>(horizon), n = static_cast<double>(o.trajectories);
  const double c = q + (1 - q) * ps * ps - p * p;
  const double g = 1 / (p * (p * w + 1 - p));
  const double sd = g * std::sqrt((t * p * (1 - p) + t * (t - 1) * c) / n);
  const double bias = t * (2 * p * (w - 1) + 1) * g * g * p * (1 - p) / (2 * n);
  return 5 * sd + bias;
}

// Every invariant of a study; alpha is the false-alarm probability of the simulation check
// over all rows together.
void check_study(const pl::CorridorStudy& s, double alpha) {
  const pl::CorridorStudyOptions& o = s.options;
  const std::size_t horizons = o.horizons.size();
  REQUIRE(s.rows.size() == 4 * horizons);
  REQUIRE(s.pool_unsafe_fraction.size() == horizons);
  const double delta = alpha / (2.0 * static_cast<double>(s.rows.size()));
  for (std::size_t h = 0; h < horizons; ++h) {
    const std::int64_t horizon = o.horizons[h];
    const ltt::tasks::CorridorSpec spec{horizon, o.expert_mass, o.safe_probability};
    for (std::size_t k = 0; k < 4; ++k) {
      const pl::CorridorRow& r = s.rows[4 * h + k];
      INFO("T = " << horizon << ", " << r.method << ": closed form " << r.closed_form << ", clone "
                  << r.clone_exact << ", simulated " << r.simulated << " [" << r.low << ", "
                  << r.high << "], selected " << r.selected);
      CHECK(r.horizon == horizon);
      CHECK(r.method == method_names[k]);
      CHECK(r.episodes == o.episodes);
      CHECK(r.simulated == static_cast<double>(r.all_safe) / static_cast<double>(r.episodes));
      CHECK(r.low == ltt::clopper_pearson_lower(r.all_safe, r.episodes, (1 - o.confidence) / 2));
      CHECK(r.high == ltt::clopper_pearson_upper(r.all_safe, r.episodes, (1 - o.confidence) / 2));
      CHECK(r.low <= r.simulated);
      CHECK(r.simulated <= r.high);
      // The simulation rolls out the fitted clone.
      CHECK(ltt::clopper_pearson_lower(r.all_safe, r.episodes, delta) <= r.clone_exact);
      CHECK(r.clone_exact <= ltt::clopper_pearson_upper(r.all_safe, r.episodes, delta));
      // E[cost] = sum_t (1 - p_t) and all-safe = prod_t p_t <= (mean p_t)^T (AM-GM).
      CHECK(r.expected_cost >= 0);
      CHECK(r.expected_cost <= static_cast<double>(horizon));
      CHECK(r.clone_exact <= std::pow(1 - r.expected_cost / static_cast<double>(horizon),
                                      static_cast<double>(horizon)) *
                                 (1 + 1e-12));
      if (k < 3) {
        const double w = k == 0 ? 1 : (k == 1 ? 20 : 400);
        CHECK(r.weight_ratio == w);
        CHECK(r.selected == -1);
        CHECK(r.closed_form == ltt::tasks::corridor_cloned_all_safe_probability(spec, w));
        CHECK(std::abs(std::log(r.clone_exact) - std::log(r.closed_form)) <=
              log_tolerance(o, horizon, w));
      } else {
        CHECK(std::isnan(r.weight_ratio));
        CHECK(r.closed_form ==
              ltt::tasks::corridor_selection_safe_probability(spec, o.trajectories));
        // The zero-cost count is Bin(N, P0), P0 = q + (1 - q) p_s^T; the pool's unsafe episodes
        // are the others.
        const double n = static_cast<double>(o.trajectories);
        const double p0 =
            o.expert_mass +
            (1 - o.expert_mass) * std::pow(o.safe_probability, static_cast<double>(horizon));
        CHECK(std::abs(static_cast<double>(r.selected) - n * p0) <=
              5 * std::sqrt(n * p0 * (1 - p0)) + 1e-9);
        CHECK(s.pool_unsafe_fraction[h] ==
              doctest::Approx(1 - static_cast<double>(r.selected) / n).epsilon(1e-15));
        if (r.closed_form > 1 - 1e-9) CHECK(r.selected > 0);
        if (r.selected > 0) {
          // Case (iii): cloning the zero-cost trajectories gives the exactly safe policy.
          CHECK(r.clone_exact == 1.0);
          CHECK(r.expected_cost == 0.0);
          CHECK(r.all_safe == r.episodes);
        } else {
          CHECK(r.clone_exact == doctest::Approx(std::pow(0.5, static_cast<double>(horizon))));
        }
      }
    }
    // Cases (i)-(iii): a larger weight ratio is safer, selection safest of all.
    const pl::CorridorRow* r = &s.rows[4 * h];
    CHECK(r[0].closed_form < r[1].closed_form);
    CHECK(r[1].closed_form < r[2].closed_form);
    CHECK(r[2].closed_form <= r[3].closed_form);
  }
}

bool same_rows(const pl::CorridorRow& a, const pl::CorridorRow& b) {
  const auto same = [](double x, double y) { return x == y || (std::isnan(x) && std::isnan(y)); };
  return a.horizon == b.horizon && a.method == b.method && same(a.weight_ratio, b.weight_ratio) &&
         a.closed_form == b.closed_form && a.clone_exact == b.clone_exact &&
         a.all_safe == b.all_safe && a.episodes == b.episodes && a.low == b.low &&
         a.high == b.high && a.expected_cost == b.expected_cost && a.selected == b.selected;
}

pl::CorridorStudyOptions small_options() {
  pl::CorridorStudyOptions o;
  o.horizons = {10, 50, 200};
  o.trajectories = 500;
  o.episodes = 3000;
  o.seed = 3;
  return o;
}

}  // namespace

TEST_CASE("corridor_study: simulation, fitted clone and closed forms agree (small setting)") {
  const pl::CorridorStudyOptions o = small_options();
  std::vector<std::string> lines;
  const pl::CorridorStudy s =
      pl::run_corridor_study(o, [&](std::string_view line) { lines.emplace_back(line); });
  check_study(s, 1e-3);
  REQUIRE(lines.size() == 3);
  CHECK(lines[0].find("T = 10") != std::string::npos);
  CHECK(lines[2].find("T = 200") != std::string::npos);

  // Seeded; a horizon's rows do not depend on the other horizons.
  const pl::CorridorStudy again = pl::run_corridor_study(o);
  for (std::size_t i = 0; i < s.rows.size(); ++i) CHECK(same_rows(s.rows[i], again.rows[i]));
  pl::CorridorStudyOptions alone = o;
  alone.horizons = {50};
  const pl::CorridorStudy one = pl::run_corridor_study(alone);
  for (std::size_t k = 0; k < 4; ++k) CHECK(same_rows(one.rows[k], s.rows[4 + k]));
  CHECK(one.pool_unsafe_fraction[0] == s.pool_unsafe_fraction[1]);
  pl::CorridorStudyOptions other = o;
  other.seed = 4;
  const pl::CorridorStudy reseeded = pl::run_corridor_study(other);
  bool differs = false;
  for (std::size_t i = 0; i < s.rows.size(); ++i)
    differs = differs || !same_rows(s.rows[i], reseeded.rows[i]);
  CHECK(differs);

  // The table: a header, a rule and one line per row.
  const std::string table = pl::corridor_markdown(s);
  CHECK(count(table, "\n") == 2 + s.rows.size());
  CHECK(table.rfind("| T | method | closed form | fitted clone (exact) | simulated [CI] |\n", 0) ==
        0);
  CHECK(table.find("| 10 | unweighted | ") != std::string::npos);
  CHECK(table.find("| 200 | trajectory selection | 1 | 1 | 1 [") != std::string::npos);

  // The figure: an SVG document with a legend entry per method and the simulation key.
  const std::string svg = pl::corridor_figure_svg(s);
  CHECK(svg.rfind("<?xml", 0) == 0);
  CHECK(count(svg, "<svg") == count(svg, "</svg>"));
  for (const char* name : method_names)
    CHECK(svg.find(ltt::data::cat("class=\"legend\">", name, "</text>")) != std::string::npos);
  CHECK(svg.find("class=\"legend\">simulated, 95% CI</text>") != std::string::npos);
  CHECK(count(svg, "<circle") == s.rows.size() + 1);
  CHECK(pl::corridor_figure_svg(s) == svg);
}

TEST_CASE("corridor_study: an empty selection clones the uniform policy") {
  // q = 0 and p_s^T tiny: no zero-cost trajectory among a few, so selection falls back to
  // pi = 1/2 at every t (tasks::clone_corridor) and is all-safe with probability 2^-T.
  pl::CorridorStudyOptions o;
  o.horizons = {20};
  o.expert_mass = 0;
  o.safe_probability = 0.3;
  o.trajectories = 5;
  o.episodes = 2000;
  const pl::CorridorStudy s = pl::run_corridor_study(o);
  const pl::CorridorRow& selection = s.rows[3];
  CHECK(selection.selected == 0);
  CHECK(selection.clone_exact == doctest::Approx(std::pow(0.5, 20)));
  CHECK(selection.expected_cost == doctest::Approx(10));
  CHECK(s.pool_unsafe_fraction[0] == 1.0);
  CHECK(selection.closed_form < 1e-9);
}

TEST_CASE("corridor_study: options out of range name the field") {
  const auto error = [](auto&& edit) {
    pl::CorridorStudyOptions o = small_options();
    edit(o);
    return error_of([&] { pl::run_corridor_study(o); });
  };
  using O = pl::CorridorStudyOptions;
  CHECK(error([](O& o) { o.horizons.clear(); }).find("'horizons'") != std::string::npos);
  CHECK(error([](O& o) { o.horizons = {10, 301}; }).find("'horizons'") != std::string::npos);
  CHECK(error([](O& o) { o.horizons = {0}; }).find("'horizons'") != std::string::npos);
  CHECK(error([](O& o) { o.expert_mass = 1; }).find("'expert_mass'") != std::string::npos);
  CHECK(error([](O& o) { o.expert_mass = -0.1; }).find("'expert_mass'") != std::string::npos);
  CHECK(error([](O& o) { o.safe_probability = 0; }).find("'safe_probability'") !=
        std::string::npos);
  CHECK(error([](O& o) { o.safe_probability = std::nan(""); }).find("'safe_probability'") !=
        std::string::npos);
  CHECK(error([](O& o) { o.trajectories = 0; }).find("'trajectories'") != std::string::npos);
  CHECK(error([](O& o) { o.episodes = -1; }).find("'episodes'") != std::string::npos);
  CHECK(error([](O& o) { o.confidence = 1; }).find("'confidence'") != std::string::npos);
}

TEST_SUITE("slow") {
  TEST_CASE("corridor_study: the default study (the paper's figure)") {
    const pl::CorridorStudy s = pl::run_corridor_study();
    check_study(s, 1e-3);
    CHECK(s.rows.size() == 24);
    // The figure's story (paper, after the proposition): unweighted cloning has collapsed by
    // T = 20, the clip of 20 by T = 300, the clip of 400 bends, selection holds at one.
    for (const pl::CorridorRow& r : s.rows) {
      if (r.method == "unweighted" && r.horizon >= 20) CHECK(r.simulated < 0.01);
      if (r.method == "clip 20" && r.horizon == 300) CHECK(r.simulated < 0.05);
      if (r.method == "clip 400" && r.horizon == 300) CHECK(r.simulated > 0.7);
      if (r.method == "trajectory selection") CHECK(r.simulated == 1.0);
    }
  }
}
