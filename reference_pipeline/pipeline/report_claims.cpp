// The claims of the paper's main table that a run can check (report.hpp, "Claim"): each with
// its verdict and the evidence, judged on the bootstrap interval over seeds.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <data/text.hpp>

#include "pipeline/report.hpp"

namespace ltt::pipeline {

namespace {

using data::cat;

const MethodSummary* find(const PipelineResult& r, std::string_view name) {
  for (const MethodSummary& m : r.summary)
    if (m.name == name) return &m;
  return nullptr;
}

}  // namespace

std::string_view verdict_text(Verdict v) {
  switch (v) {
    case Verdict::holds:
      return "holds";
    case Verdict::fails:
      return "does not hold";
    case Verdict::undetermined:
      return "undetermined at this number of seeds";
  }
  return "undetermined at this number of seeds";
}

namespace {

Verdict verdict(bool held) { return held ? Verdict::holds : Verdict::fails; }

// Where a clone's mean cost over seeds stands against the budget, on its bootstrap interval.
enum class Standing { over, within, undetermined };

Standing standing(const MethodSummary* m, double budget) {
  if (!m || m->cost.samples < 2) return Standing::undetermined;
  if (m->cost.low > budget) return Standing::over;
  if (m->cost.high <= budget) return Standing::within;
  return Standing::undetermined;
}

Verdict verdict_if(Standing s, Standing wanted) {
  if (s == Standing::undetermined) return Verdict::undetermined;
  return verdict(s == wanted);
}

// "mean cost 12.10, 95% interval [10.20, 14.00] over 3 seeds" or why there is no interval.
std::string cost_evidence(const MethodSummary* m) {
  if (!m || m->cost.samples == 0) return "not cloned on any seed";
  if (m->cost.samples == 1)
    return cat("mean cost ", fixed(m->cost.mean, 2), " on one seed (no interval)");
  return cat("mean cost ", fixed(m->cost.mean, 2), ", 95% interval [", fixed(m->cost.low, 2), ", ",
             fixed(m->cost.high, 2), "] over ", std::to_string(m->cost.samples), " seeds");
}

}  // namespace

std::vector<Claim> check_claims(const PipelineResult& r) {
  std::vector<Claim> claims;
  const double b = r.task.budget;
  const MethodSummary* all = find(r, "BC-All");
  const MethodSummary* cal = find(r, "Calibrated");
  const MethodSummary* safe = find(r, "BC-Safe");
  const std::string against = cat(", against budget ", fixed(b, 0));
  if (all)
    claims.push_back({"BC-All exceeds the budget", verdict_if(standing(all, b), Standing::over),
                      cat(cost_evidence(all), against)});
  if (cal)
    claims.push_back({"the calibrated clone is within the budget",
                      verdict_if(standing(cal, b), Standing::within),
                      cat(cost_evidence(cal), against)});
  if (safe && cal) {
    const Standing s = standing(safe, b), c = standing(cal, b);
    claims.push_back(
        {"the calibrated clone is within budget exactly when BC-Safe (full labels) is",
         s == Standing::undetermined || c == Standing::undetermined ? Verdict::undetermined
                                                                    : verdict(s == c),
         cat("BC-Safe ", cost_evidence(safe), "; Calibrated ", cost_evidence(cal), against)});
  }
  // The gate's premise (section 4.4): on a certified, hence clean, selection the top half by
  // return stays clean. Checked on the oracle composition of each certified seed's sub-selection.
  if (r.certified_seeds > 0) {
    double worst = 0;
    for (const SeedResult& s : r.seeds)
      if (s.calibrated.certificate.certified)
        for (const MethodResult& m : s.methods)
          if (m.name == "Calibrated") worst = std::max(worst, m.selection_unsafe_fraction);
    claims.push_back(
        {"the gated top-half-by-return sub-selection of a certified selection stays "
         "at most alpha unsafe",
         verdict(worst <= r.options.calibration.alpha),
         cat("worst realized unsafe fraction ", fixed(worst, 3), " (oracle) against alpha ",
             fixed(r.options.calibration.alpha, 2))});
  }
  // Proposition "guarantee" on this pool and score: resampled false certification at most
  // delta, up to the Monte Carlo interval (its lower end above delta would refute it).
  {
    double worst = 0, worst_lower = 0;
    std::int64_t draws = 0;
    for (const SeedResult& s : r.seeds) {
      const curation::ProportionEstimate& f = s.resampled_false_certification;
      draws = f.trials;
      if (f.rate && *f.rate >= worst) {
        worst = *f.rate;
        worst_lower = f.lower;
      }
    }
    if (draws > 0)
      claims.push_back({"false certification is at most delta (resampled calibration draws)",
                        verdict(worst_lower <= r.options.calibration.delta),
                        cat("worst rate ", fixed(worst, 4), " over ", std::to_string(draws),
                            " fresh draws per seed, 95% interval from ", fixed(worst_lower, 4),
                            ", against delta ", fixed(r.options.calibration.delta, 2))});
  }
  std::int64_t negative = 0;
  for (const SeedResult& s : r.seeds) negative += s.purity_margin < 0;
  const auto S = static_cast<std::int64_t>(r.seeds.size());
  double rate = 0;
  for (const SeedResult& s : r.seeds) rate += s.first_step_rate / static_cast<double>(S);
  const std::string evidence =
      cat("certified on ", std::to_string(r.certified_seeds), " of ", std::to_string(S),
          S == 1 ? " seed" : " seeds", S == 1 ? "; " : "; mean ",
          "closed-form certification rate at n = ", std::to_string(r.options.calibration_size),
          ": ", fixed(rate, 3));
  if (negative == S)
    claims.push_back({"negative purity margin: the procedure refuses",
                      verdict(r.certified_seeds == 0),
                      cat(evidence, "; a refusal returns the Clopper-Pearson fallback, flagged")});
  else if (negative == 0)
    claims.push_back({"positive purity margin: the procedure certifies",
                      verdict(r.certified_seeds > 0), evidence});
  return claims;
}

}  // namespace ltt::pipeline
