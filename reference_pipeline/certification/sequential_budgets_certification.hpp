#pragma once
// `ltt certify --sequential --budgets b1,b2,...`: the sequential walk at several budgets of
// <curation/several_budgets_sequential.hpp> on a user's pool (docs/several-budgets.md,
// "Sequential: several budgets"), as steps run_certify calls in turn:
//
//   SequentialBudgetsRequest  the walk's settings (--budgets, --alphas, --procedure, --seed,
//                             --stop cap or target:J, --n, --grid, --min-selection)
//   SequentialBudgetsRun      the walk fed band by band in its uniform label order until a stop
//                             rule fires; the bands of --labels (id,cost, id,band or, for one
//                             budget, id,unsafe; any row order) wait until the walk asks for
//                             their trajectory, as `ltt certify --sequential` reads id,unsafe
//   budgets_walk_state        one line: labels, bands, certified steps, the next p-value
//   sequential_budgets_result the certificate where the walk stands, its selection and its JSON
//                             text (one entry per budget): what write_outputs writes
//   write_sequential_budgets_summary  the same for a human reader
//
// The certificate is valid whenever the labeling stops (every stop rule is a stopping time).
// The written selection is the tightest budget's: under one threshold the common certified
// selection, or the smallest fallback, which suits every budget.

#include <algorithm>
#include <cstdint>
#include <optional>
#include <ostream>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <curation/cost_bands.hpp>
#include <curation/fields.hpp>
#include <curation/several_budgets_sequential.hpp>
#include <ltt/several_budgets.hpp>

#include <data/dsrl.hpp>

#include "certificate_summary.hpp"
#include "certification.hpp"
#include "format.hpp"
#include "inputs.hpp"
#include "pool_file.hpp"
#include "sequential_certification.hpp"
#include "several_budgets_certification.hpp"

namespace ltt::certification {

struct SequentialBudgetsRequest {
  std::vector<double> budgets;  // ascending
  cur::SeveralBudgetsSequentialOptions options;
  std::string stop = "cap";
};

// A label of the walk: a pool position and its band (0..K).
struct BandRow {
  std::int64_t position = 0;
  std::int64_t band = 0;
};

// The walk fed band by band in the seeded uniform order until a stop rule fires.
class SequentialBudgetsRun {
 public:
  SequentialBudgetsRun(std::span<const double> scores,
                       const cur::SeveralBudgetsSequentialOptions& options, std::int64_t seed)
      : walk_(scores, options, static_cast<std::uint64_t>(seed)) {}

  std::optional<cur::StoppingReason> reason() const { return walk_.stopping_reason(); }
  bool stopped() const { return reason().has_value(); }
  std::int64_t labels_used() const { return walk_.labels_used(); }
  std::int64_t budgets() const { return walk_.budgets(); }
  const cur::SeveralBudgetsSequentialWalk& walk() const { return walk_; }
  // The pool position to label next; none once a rule has fired.
  std::optional<std::int64_t> next() const {
    if (stopped()) return std::nullopt;
    return walk_.next_position();
  }
  std::vector<std::int64_t> planned(std::int64_t count) const {
    if (stopped()) return {};
    return walk_.planned(count);
  }

  void add(std::int64_t band) {
    const std::int64_t position = *next();
    walk_.add_label(position, band);
    used_.push_back({position, band});
  }

  // Bands the user has, by pool position; each is used when the walk asks for it.
  void add_known(const cur::BandedCalibration& labels) {
    for (std::size_t i = 0; i < labels.index.size(); ++i)
      known_.emplace(labels.index[i], labels.band[i]);
    use_known();
  }
  void use_known() {
    for (auto position = next(); position; position = next()) {
      const auto it = known_.find(*position);
      if (it == known_.end()) return;
      const std::int64_t band = it->second;
      known_.erase(it);
      add(band);
    }
  }
  std::int64_t unused() const { return static_cast<std::int64_t>(known_.size()); }

  // Every label: those the walk used, in its order, then the unused ones by pool position.
  std::vector<BandRow> labels() const {
    std::vector<BandRow> rows = used_;
    const auto first_unused = static_cast<std::ptrdiff_t>(rows.size());
    for (const auto& [position, band] : known_) rows.push_back({position, band});
    std::sort(rows.begin() + first_unused, rows.end(),
              [](const BandRow& a, const BandRow& b) { return a.position < b.position; });
    return rows;
  }

  cur::SeveralBudgetsSequentialCertificate certificate() const {
    return walk_.certificate(reason().value_or(cur::StoppingReason::label_cap));
  }

 private:
  cur::SeveralBudgetsSequentialWalk walk_;
  std::unordered_map<std::int64_t, std::int64_t> known_;
  std::vector<BandRow> used_;
};

// --record: the labels as a CSV id,band that --labels reads back.
inline std::string band_record_csv(const SequentialBudgetsRun& run, const PoolFile& pool) {
  std::string text = "id,band\n";
  for (const BandRow& row : run.labels())
    text += cat(csv_field(pool.id_of(row.position)), ",", std::to_string(row.band), "\n");
  return text;
}

// "after 37 labels (bands 30, 5, 2): 3 of 12 steps certified, p_4 = max_k p_4k = 0.31" (one
// threshold); per budget "budget 1: 3 of 12 steps (p_4 = 0.31); budget 2: ...".
inline std::string budgets_walk_state(const cur::SeveralBudgetsSequentialCertificate& c) {
  std::string bands;
  for (const std::int64_t count : c.band_labels)
    bands += cat(bands.empty() ? "" : ", ", std::to_string(count));
  std::string text = cat("after ", std::to_string(c.labels_used), " labels (bands ", bands, "): ");
  const auto depth_of = [](const cur::SequentialCertificate& b) {
    return b.certified ? *b.certified_step + 1 : std::int64_t{0};
  };
  const std::int64_t J = c.budgets.front().grid_size;
  if (c.procedure == ltt::BudgetProcedure::one_threshold) {
    const std::int64_t depth = depth_of(c.budgets.front());
    text += cat(std::to_string(depth), " of ", std::to_string(J), " steps certified");
    if (depth < J)
      text += cat(", p_", std::to_string(depth + 1), " = max_k p_", std::to_string(depth + 1),
                  "k = ", brief(c.joint_pvalues[static_cast<std::size_t>(depth)]));
    return text;
  }
  for (std::size_t k = 0; k < c.budgets.size(); ++k) {
    const std::int64_t depth = depth_of(c.budgets[k]);
    text += cat(k == 0 ? "" : "; ", "budget ", std::to_string(k + 1), ": ", std::to_string(depth),
                " of ", std::to_string(J), " steps");
    if (depth < J)
      text += cat(" (p_", std::to_string(depth + 1), " = ",
                  brief(c.budgets[k].steps[static_cast<std::size_t>(depth)].p), ")");
  }
  return text;
}

// The object of `ltt certify --sequential --budgets --json` (and --certificate).
inline void write_sequential_budgets_json(JsonWriter& json, const SequentialBudgetsRun& run,
                                          const cur::SeveralBudgetsSequentialCertificate& c,
                                          const PoolFile& pool, const Inputs& in,
                                          const SequentialBudgetsRequest& request,
                                          const std::vector<std::int64_t>& written,
                                          const data::DsrlPool* dataset) {
  json.begin_object()
      .field("procedure", ltt::budget_procedure_name(c.procedure))
      .field("delta", c.delta);
  JsonFields{json}("levels", c.levels);
  if (c.procedure == ltt::BudgetProcedure::one_threshold)
    JsonFields{json}("joint_pvalues", c.joint_pvalues);
  else
    json.field("joint_pvalues", std::optional<double>{});
  json.field("certified", c.certified).field("labels_used", c.labels_used);
  JsonFields{json}("band_labels", c.band_labels);
  json.field("stop", request.stop).field("stopped", run.reason().has_value());
  json.field("reason",
             run.reason() ? std::optional(cur::stopping_reason_name(*run.reason())) : std::nullopt);
  json.key("next_id");
  if (const auto next = run.next())
    write_id_json(json, pool, *next);
  else
    json.null();
  json.key("next_ids").begin_array();
  for (const std::int64_t position : run.planned(planned_ids)) write_id_json(json, pool, position);
  json.end_array();
  json.field("unused_labels", run.unused());
  json.key("budgets").begin_array();
  for (std::size_t k = 0; k < c.budgets.size(); ++k) {
    json.begin_object().field("budget", request.budgets[k]).field("level", c.levels[k]);
    fields(cur::StoppedCertificate{&c.budgets[k], request.stop, run.reason()}, JsonFields{json});
    json.end_object();
  }
  json.end_array();
  write_output_json(json, in, static_cast<std::int64_t>(written.size()),
                    dataset ? std::optional(written_rows(*dataset, written)) : std::nullopt);
  json.key("inputs").begin_object();
  write_source_json(json, in, dataset);
  json.field("labels", in.labels_file).field("seed", in.seed);
  json.field("n", request.options.label_cap).field("target_step", request.options.target_step);
  JsonFields{json}("budgets", request.budgets);
  JsonFields{json}("alphas", request.options.alphas);
  JsonFields{json}("grid", request.options.quantiles);
  json.field("min_selection", request.options.minimum_selection);
  json.end_object().end_object();
}

struct SequentialBudgetsResult {
  cur::SeveralBudgetsSequentialCertificate certificate;
  GateResult selection;
  std::string json_text;
};

inline SequentialBudgetsResult sequential_budgets_result(const SequentialBudgetsRun& run,
                                                         const PoolFile& pool, const Inputs& in,
                                                         const SequentialBudgetsRequest& request,
                                                         const data::DsrlPool* dataset) {
  SequentialBudgetsResult r{run.certificate(), {}, {}};
  r.selection.written = sequential_selected(pool.pool.score, r.certificate.budgets.front());
  std::ostringstream json_text;
  {
    JsonWriter json(json_text);
    write_sequential_budgets_json(json, run, r.certificate, pool, in, request, r.selection.written,
                                  dataset);
    json_text << '\n';
  }
  r.json_text = std::move(json_text).str();
  return r;
}

// One row per grid step: N, m, and per budget k_jk and p_jk; the joint p-value under one
// threshold; where the step was certified.
inline void write_budgets_steps(std::ostream& out,
                                const cur::SeveralBudgetsSequentialCertificate& c) {
  const bool joint = c.procedure == ltt::BudgetProcedure::one_threshold;
  out << cell("step", 4) << cell("quantile", 10) << cell("lambda", 14) << cell("N", 10)
      << cell("m", 7);
  for (std::size_t k = 0; k < c.budgets.size(); ++k)
    out << cell(cat("k_", std::to_string(k + 1)), 7) << cell(cat("p_", std::to_string(k + 1)), 12);
  if (joint) out << cell("max_k p", 12);
  out << "  certified after\n";
  for (std::size_t j = 0; j < c.budgets.front().steps.size(); ++j) {
    const cur::SequentialStep& s = c.budgets.front().steps[j];
    out << cell(std::to_string(j + 1), 4) << cell(shortest(s.quantile), 10)
        << cell(brief(s.lambda), 14) << cell(std::to_string(s.N), 10)
        << cell(std::to_string(s.m), 7);
    std::string after;
    for (std::size_t k = 0; k < c.budgets.size(); ++k) {
      const cur::SequentialStep& b = c.budgets[k].steps[j];
      out << cell(std::to_string(b.k), 7) << cell(brief(b.p), 12);
      if (!joint && b.certified_after)
        after += cat(after.empty() ? "" : ", ", "budget ", std::to_string(k + 1), " at ",
                     std::to_string(*b.certified_after));
    }
    if (joint) {
      out << cell(brief(c.joint_pvalues[j]), 12);
      if (s.certified_after) after = cat(std::to_string(*s.certified_after), " labels");
    }
    out << "  " << (after.empty() ? std::string("not rejected") : after) << "\n";
  }
  out << "\n";
}

inline void write_sequential_budgets_summary(std::ostream& out, const SequentialBudgetsRun& run,
                                             const cur::SeveralBudgetsSequentialCertificate& c,
                                             const PoolFile& pool, const Inputs& in,
                                             const SequentialBudgetsRequest& request,
                                             const GateResult& selection,
                                             const data::DsrlPool* dataset) {
  const cur::SequentialCertificate& first = c.budgets.front();
  std::string budgets;
  for (const double b : request.budgets) budgets += cat(budgets.empty() ? "" : ",", shortest(b));
  out << "sequential certification of " << pool.name << " at budgets " << budgets << ": "
      << first.pool_size << " trajectories, uniform label order of --seed " << in.seed << ", cap "
      << first.label_cap << ", --stop " << request.stop << "\n"
      << procedure_label(c.procedure) << ", delta = " << shortest(c.delta) << "; grid of "
      << request.options.quantiles.size() << " quantiles, " << first.grid_size
      << " distinct thresholds\n"
      << budgets_walk_state(c) << "\n\n";
  write_budgets_steps(out, c);
  if (const auto reason = run.reason())
    out << "stopped by " << cur::stopping_reason_name(*reason) << " after " << c.labels_used
        << " labels\n";
  else
    out << "not stopped: label " << pool.id_of(*run.next()) << " next (label " << c.labels_used + 1
        << " of at most " << first.label_cap
        << "); what is certified below stays valid if the labeling stops here\n"
        << "  the next ids: " <<
        [&] {
          std::string text;
          for (const std::int64_t position : run.planned(planned_ids))
            text += cat(text.empty() ? "" : ", ", pool.id_of(position));
          return text;
        }()
        << "\n";
  if (run.unused() > 0)
    out << run.unused() << " labels of --labels not used"
        << (run.stopped() ? "" : " yet: the walk has not asked for them (they wait their turn)")
        << "\n";
  out << (c.certified ? "every budget certified" : "not every budget certified") << "\n";
  for (std::size_t k = 0; k < c.budgets.size(); ++k) {
    const cur::SequentialCertificate& b = c.budgets[k];
    out << "  budget " << shortest(request.budgets[k]) << " (alpha " << shortest(b.alpha)
        << ", level " << shortest(c.levels[k]) << ", " << b.unsafe_labels << " labels over it): ";
    if (b.certified)
      out << "certified at quantile " << shortest(b.quantile) << ", threshold "
          << brief(b.threshold) << ", " << b.selection_size << " selected\n";
    else
      out << "not certified; uncertified fallback of " << b.selection_size
          << " (top K = " << b.fallback_record->count << ", " << b.fallback_record->unsafe_upper
          << " bounds the pool's trajectories over it at any stopping time)\n";
  }
  out << "  guarantee, at any stopping time of the labeling: Pr[some budget certified at a "
         "threshold where more than its alpha is over it] <= delta = "
      << shortest(c.delta) << "\n";
  write_files_summary(out, in, selection, static_cast<std::int64_t>(selection.written.size()),
                      dataset);
  if (in.record_file)
    out << "wrote " << run.labels().size() << " labels to " << *in.record_file
        << " (pass it as --labels to go on)\n";
}

}  // namespace ltt::certification
