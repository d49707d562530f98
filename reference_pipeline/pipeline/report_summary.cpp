// What `ltt pipeline` prints (report.hpp, run_summary): the methods table, one line per seed on
// its certificate, and the claims.
#include <sstream>
#include <string>

#include <data/text.hpp>

#include "pipeline/report.hpp"

#include <algorithm>

namespace ltt::pipeline {

namespace {

using data::cat;

std::string with_ci(const Interval& i, int digits = 2) {
  if (i.samples == 0) return "not run";
  if (i.samples == 1) return fixed(i.mean, digits);
  return cat(fixed(i.mean, digits), " [", fixed(i.low, digits), ", ", fixed(i.high, digits), "]");
}

}  // namespace

std::string summary_table(const PipelineResult& r) {
  std::ostringstream md;
  md << "| method | trajectories | reward | cost | data cost | cloning gap | budget | within "
        "budget |\n"
     << "|---|---:|---:|---:|---:|---:|---:|:---:|\n";
  for (const MethodSummary& m : r.summary) {
    std::string size = m.selection_size.samples ? fixed(m.selection_size.mean, 0) : "0";
    if (m.refused_seeds > 0)
      size = m.cost.samples == 0 ? "refused"
                                 : cat(size, " (refused on ", std::to_string(m.refused_seeds),
                                       m.refused_seeds == 1 ? " seed)" : " seeds)");
    md << "| " << m.name << " | " << size << " | " << with_ci(m.reward) << " | " << with_ci(m.cost)
       << " | " << with_ci(m.data_cost) << " | " << with_ci(m.cloning_gap) << " | "
       << fixed(r.task.budget, 0) << " | "
       << (m.cost.samples == 0 ? "n/a"
           : m.within_budget   ? "**yes**"
                               : "no")
       << " |\n";
  }
  return md.str();
}

std::string cost_split_table(const PipelineResult& r) {
  const bool known = std::any_of(r.summary.begin(), r.summary.end(),
                                 [](const MethodSummary& m) { return m.policy_data_cost.has_value(); });
  if (!known) return {};
  std::ostringstream md;
  md << "| method | clone cost | data cost | policy data cost | selection luck | cloner share |\n"
     << "|---|---:|---:|---:|---:|---:|\n";
  for (const MethodSummary& m : r.summary) {
    if (!m.policy_data_cost) continue;  // never cloned
    md << "| " << m.name << " | " << with_ci(m.cost) << " | " << with_ci(m.data_cost) << " | "
       << with_ci(*m.policy_data_cost) << " | " << with_ci(*m.selection_luck) << " | "
       << with_ci(*m.cloner_share) << " |\n";
  }
  return md.str();
}

// "certified at quantile 0.45: 551 of 1000 trajectories (p = 0.0201 at m = 115, k = 20)".
std::string certificate_line(const SeedResult& s) {
  const curation::Certificate& c = s.calibrated.certificate;
  if (!c.certified)
    return cat("refused: no threshold certified (p = ", fixed(c.steps.front().p, 4),
               " > delta at the first step); uncertified fallback of ",
               std::to_string(c.selection_size), " trajectories");
  const curation::CertificateStep& st = c.steps[static_cast<std::size_t>(*c.certified_step)];
  return cat("certified at quantile ", fixed(c.quantile, 2), ": ", std::to_string(c.selection_size),
             " of ", std::to_string(c.pool_size), " trajectories (p = ", fixed(st.p, 4),
             " at m = ", std::to_string(st.m), ", k = ", std::to_string(st.k),
             "); gated top half by return: ", std::to_string(s.gated.selected.size()));
}

std::string run_summary(const PipelineResult& r) {
  std::ostringstream out;
  out << r.task.name << ": " << r.pool_episodes << " episodes, " << r.pool_unsafe
      << " over the budget " << fixed(r.task.budget, 0)
      << "; alpha = " << fixed(r.options.calibration.alpha, 2)
      << ", delta = " << fixed(r.options.calibration.delta, 2)
      << ", n = " << r.options.calibration_size << "\n\n"
      << summary_table(r) << "\n";
  if (const std::string split = cost_split_table(r); !split.empty())
    out << "where each clone's cost comes from (clone cost - data cost = selection luck + cloner "
           "share):\n\n"
        << split << "\n";
  for (const SeedResult& s : r.seeds)
    out << "seed " << s.seed << ": " << certificate_line(s) << "\n";
  out << "\n";
  for (const Claim& c : check_claims(r))
    out << verdict_text(c.verdict) << ": " << c.statement << " (" << c.evidence << ")\n";
  return out.str();
}

}  // namespace ltt::pipeline
