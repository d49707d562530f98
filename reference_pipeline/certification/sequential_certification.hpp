#pragma once
// `ltt certify --sequential`: the sequential walk of <curation/sequential_selection.hpp> on a
// user's pool, the labels bought one at a time in the seeded label order (--order, --seed;
// docs/sequential.md, "Interfaces"), as steps run_certify calls in turn:
//
//   SequentialRequest       the walk's settings (--seed, --stop, --n, --order, ...: read by
//                           read_walk_flags of cli/certification_flags.hpp, also for `ltt
//                           label budget`)
//   SequentialRun           the walk fed label by label until a stop rule fires; which id to
//                           label next while none has, and the next few if the depth stays.
//                           The labels of --labels FILE (any row order) wait until the walk
//                           asks for their trajectory: it reads labels only in its own seeded
//                           order, so which trajectories the user labeled, and in what order,
//                           never enters a decision before its turn
//   run_interactive         the same from standard input, one label (0 or 1) per line, each
//                           asked for and answered on standard error
//   write_sequential_json   the certificate (curation::StoppedCertificate's fields) with the
//                           next id, the outputs and the inputs
//   sequential_result       the certificate where the walk stands, its selection and its JSON
//                           text: what write_outputs writes (also for `ltt label budget`)
//   write_sequential_summary  the same for a human reader
//
// The certificate is valid whenever the labeling stops (every stop rule is a stopping time),
// so a run before any rule fires reports the certificate so far; its selection is S(lambda)
// of the deepest certified step, or while nothing is certified the uncertified fallback's top
// K (curation::sequential_fallback: K from an anytime bound, valid at any stopping time).

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <istream>
#include <optional>
#include <ostream>
#include <sstream>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include <curation/fields.hpp>
#include <curation/sequential_selection.hpp>

#include <data/dsrl.hpp>

#include "bad_input.hpp"
#include "certificate_summary.hpp"
#include "certification.hpp"
#include "format.hpp"
#include "inputs.hpp"
#include "pool_file.hpp"
#include "table_reader.hpp"

namespace ltt::certification {

// What --sequential asks for beyond the certification inputs.
struct SequentialRequest {
  cur::SequentialSelectionOptions options;
  std::string stop = "auto";
  bool interactive = false;
};

// The cap, once the pool is read: the walk draws without replacement.
inline void check_label_cap(const SequentialRequest& request, const PoolFile& pool) {
  if (request.options.label_cap > pool.size())
    throw BadInput(cat("--n: ", std::to_string(request.options.label_cap),
                       " must not exceed the pool size ", std::to_string(pool.size()), " (",
                       pool.name, ")"));
}

// The walk fed label by label in the seeded label order until a stop rule fires. Labels the
// user already has (--labels) wait in `known` until the walk asks for their trajectory.
class SequentialRun {
 public:
  SequentialRun(std::span<const double> scores, const cur::SequentialSelectionOptions& options,
                std::int64_t seed)
      : walk_(scores, options, static_cast<std::uint64_t>(seed)) {}

  std::optional<cur::StoppingReason> reason() const { return walk_.stopping_reason(); }
  bool stopped() const { return reason().has_value(); }
  std::int64_t labels_used() const { return walk_.labels_used(); }
  // The pool position to label next; none once a rule has fired.
  std::optional<std::int64_t> next() const {
    if (stopped()) return std::nullopt;
    return walk_.next_position();
  }
  // The next `count` positions if the certified depth stays; none once a rule has fired.
  std::vector<std::int64_t> planned(std::int64_t count) const {
    if (stopped()) return {};
    return walk_.planned(count);
  }

  void add(bool unsafe) {
    const std::int64_t position = *next();
    walk_.add_label(position, unsafe);
    used_.push_back({position, unsafe});
  }

  // Labels the user has, by pool position; each is used when the walk asks for it.
  void add_known(const std::vector<LabelRow>& rows) {
    for (const LabelRow& row : rows) known_.emplace(row.position, row.unsafe);
    use_known();
  }
  // Feeds the walk the known labels it asks for next, in its order, until it asks for one
  // that is not known or stops.
  void use_known() {
    for (auto next_position = next(); next_position; next_position = next()) {
      const auto it = known_.find(*next_position);
      if (it == known_.end()) return;
      const bool unsafe = it->second;
      known_.erase(it);
      add(unsafe);
    }
  }
  // Known labels the walk has not asked for (yet).
  std::int64_t unused() const { return static_cast<std::int64_t>(known_.size()); }

  // Every label: those the walk used, in its order, then the unused ones by pool position.
  std::vector<LabelRow> labels() const {
    std::vector<LabelRow> rows = used_;
    const auto first_unused = static_cast<std::ptrdiff_t>(rows.size());
    for (const auto& [position, unsafe] : known_) rows.push_back({position, unsafe});
    std::sort(rows.begin() + first_unused, rows.end(),
              [](const LabelRow& a, const LabelRow& b) { return a.position < b.position; });
    return rows;
  }

  cur::SequentialCertificate certificate() const {
    return walk_.certificate(reason().value_or(cur::StoppingReason::label_cap));
  }

 private:
  cur::SequentialWalk walk_;
  std::unordered_map<std::int64_t, bool> known_;
  std::vector<LabelRow> used_;
};

// --record: the labels as a CSV id,unsafe that --labels reads back.
inline std::string record_csv(const SequentialRun& run, const PoolFile& pool) {
  std::string text = "id,unsafe\n";
  for (const LabelRow& row : run.labels())
    text += cat(csv_field(pool.id_of(row.position)), row.unsafe ? ",1\n" : ",0\n");
  return text;
}

// How many ids `ltt certify --sequential` lists as the next to label (next_ids).
inline constexpr std::int64_t planned_ids = 10;

// "after 37 labels (2 unsafe): 3 of 12 steps certified, p_4 = 0.31"
inline std::string walk_state(const cur::SequentialCertificate& c) {
  const std::int64_t depth = c.certified ? *c.certified_step + 1 : 0;
  std::string text = cat("after ", std::to_string(c.labels_used), " labels (",
                         std::to_string(c.unsafe_labels), " unsafe): ", std::to_string(depth),
                         " of ", std::to_string(c.grid_size), " steps certified");
  if (c.depth_upper) {  // the fixed walk: what its sample can still certify
    if (*c.depth_upper > depth) text += cat(", at most ", std::to_string(*c.depth_upper));
    return text;
  }
  if (depth < c.grid_size)
    text += cat(", p_", std::to_string(depth + 1), " = ",
                brief(c.steps[static_cast<std::size_t>(depth)].p));
  return text;
}

// Standard input, one label per line: asks for each on `err`, says the state after it, and
// stops when a rule fires or the input ends. A line other than 0 or 1 (blanks around it
// allowed) is asked again at a terminal and refused from a pipe (exit 2, nothing written).
inline void run_interactive(SequentialRun& run, const PoolFile& pool, std::istream& in,
                            std::ostream& err, bool terminal) {
  std::int64_t line_number = 0;
  run.use_known();
  while (const auto position = run.next()) {
    err << "label " << pool.id_of(*position) << " (label " << run.labels_used() + 1
        << "; 0 safe, 1 unsafe): " << std::flush;
    std::string line;
    if (!std::getline(in, line)) {
      err << "\n";
      return;
    }
    ++line_number;
    const std::size_t first = line.find_first_not_of(" \t\r");
    const std::string_view bit =
        first == std::string::npos
            ? std::string_view{}
            : std::string_view(line).substr(first, line.find_last_not_of(" \t\r") - first + 1);
    if (bit != "0" && bit != "1") {
      if (!terminal)
        throw BadInput(cat("standard input line ", std::to_string(line_number), ": ",
                           in_quotes(bit), " is not a label (0 safe or 1 unsafe)"));
      err << "type 0 (safe) or 1 (unsafe)\n";
      continue;
    }
    run.add(bit == "1");
    run.use_known();
    err << walk_state(run.certificate()) << "\n";
  }
  err << "stopped: " << cur::stopping_reason_name(*run.reason()) << "\n";
}

// The selection the certificate describes: S(lambda) of the deepest certified step, or the
// uncertified fallback's S(threshold), pool positions ascending.
inline std::vector<std::int64_t> sequential_selected(std::span<const double> scores,
                                                     const cur::SequentialCertificate& c) {
  return cur::selection_at(scores, c.threshold);
}

// An id as `ltt draw --json` writes it: a number when every id of the pool is an integer.
inline void write_id_json(JsonWriter& json, const PoolFile& pool, std::int64_t position) {
  if (pool.integer_ids())
    json.value(*PoolFile::integer_id(pool.id_of(position)));
  else
    json.value(pool.id_of(position));
}

// The object of `ltt certify --sequential --json` (and --certificate): the certificate, the
// next id to label (null once stopped), the outputs, the inputs.
inline void write_sequential_json(JsonWriter& json, const SequentialRun& run,
                                  const cur::SequentialCertificate& c, const PoolFile& pool,
                                  const Inputs& in, const SequentialRequest& request,
                                  const std::vector<std::int64_t>& written,
                                  const data::DsrlPool* dataset) {
  json.begin_object();
  fields(cur::StoppedCertificate{&c, request.stop, run.reason()}, JsonFields{json});
  json.key("next_id");
  if (const auto next = run.next())
    write_id_json(json, pool, *next);
  else
    json.null();
  json.key("next_ids").begin_array();
  for (const std::int64_t position : run.planned(planned_ids)) write_id_json(json, pool, position);
  json.end_array();
  json.field("unused_labels", run.unused());
  write_output_json(json, in, static_cast<std::int64_t>(written.size()),
                    dataset ? std::optional(written_rows(*dataset, written)) : std::nullopt);
  json.key("inputs").begin_object();
  write_source_json(json, in, dataset);
  json.field("labels", in.labels_file)
      .field("interactive", request.interactive)
      .field("seed", in.seed)
      .field("n", request.options.label_cap)
      .field("min_selection", request.options.minimum_selection);
  JsonFields{json}("grid", request.options.quantiles);
  json.end_object().end_object();
}

// The certificate where the walk stands, the selection it describes, and the JSON text that
// --json prints and --certificate holds: everything write_outputs writes but the labels.
struct SequentialResult {
  cur::SequentialCertificate certificate;
  GateResult selection;
  std::string json_text;
};

inline SequentialResult sequential_result(const SequentialRun& run, const PoolFile& pool,
                                          const Inputs& in, const SequentialRequest& request,
                                          const data::DsrlPool* dataset) {
  SequentialResult r{run.certificate(), {}, {}};
  r.selection.written = sequential_selected(pool.pool.score, r.certificate);
  std::ostringstream json_text;
  {
    JsonWriter json(json_text);
    write_sequential_json(json, run, r.certificate, pool, in, request, r.selection.written,
                          dataset);
    json_text << '\n';
  }
  r.json_text = std::move(json_text).str();
  return r;
}

// The fixed walk's rows: n_j of its sample in S_j, the labels bought there, and p_j with the
// unbought ones counted unsafe.
inline void write_fixed_walk_steps(std::ostream& out, const cur::SequentialCertificate& c) {
  out << cell("step", 4) << cell("quantile", 10) << cell("lambda", 14) << cell("N", 12)
      << cell("U*", 12) << cell("n", 7) << cell("m", 7) << cell("k", 7) << cell("p", 14)
      << "  certified after\n";
  for (std::size_t j = 0; j < c.steps.size(); ++j) {
    const cur::SequentialStep& s = c.steps[j];
    out << cell(std::to_string(j + 1), 4) << cell(shortest(s.quantile), 10)
        << cell(brief(s.lambda), 14) << cell(std::to_string(s.N), 12)
        << cell(std::to_string(s.null_boundary), 12) << cell(std::to_string(s.sample.value_or(0)), 7)
        << cell(std::to_string(s.m), 7) << cell(std::to_string(s.k), 7) << cell(brief(s.p), 14)
        << "  "
        << (s.certified_after ? cat(std::to_string(*s.certified_after), " labels")
                              : std::string("not rejected"))
        << "\n";
  }
  out << "\n";
}

// One row per grid step: every number needed to recompute p_j from the label order.
inline void write_sequential_steps(std::ostream& out, const cur::SequentialCertificate& c) {
  if (c.fixed_walk) return write_fixed_walk_steps(out, c);
  out << cell("step", 4) << cell("quantile", 10) << cell("lambda", 14) << cell("N", 12)
      << cell("U*", 12) << cell("m", 7) << cell("k", 7) << cell("p_anytime", 14)
      << cell("p_cap", 14) << cell("p_tail", 14) << cell("p", 14) << "  certified after\n";
  for (std::size_t j = 0; j < c.steps.size(); ++j) {
    const cur::SequentialStep& s = c.steps[j];
    out << cell(std::to_string(j + 1), 4) << cell(shortest(s.quantile), 10)
        << cell(brief(s.lambda), 14) << cell(std::to_string(s.N), 12)
        << cell(std::to_string(s.null_boundary), 12) << cell(std::to_string(s.m), 7)
        << cell(std::to_string(s.k), 7) << cell(brief(s.p_anytime), 14)
        << cell(s.p_cap ? brief(*s.p_cap) : std::string("-"), 14)
        << cell(s.p_tail ? brief(*s.p_tail) : std::string("-"), 14) << cell(brief(s.p), 14) << "  "
        << (s.certified_after ? cat(std::to_string(*s.certified_after), " labels")
                              : std::string("not rejected"))
        << "\n";
  }
  out << "\n";
}

// "7, 12, 3, ..." : the next planned_ids ids, comma-separated.
inline std::string planned_list(const SequentialRun& run, const PoolFile& pool) {
  std::string text;
  for (const std::int64_t position : run.planned(planned_ids))
    text += cat(text.empty() ? "" : ", ", pool.id_of(position));
  return text;
}

// Refused so far: the uncertified fallback and the bound it rests on.
inline void write_sequential_fallback(std::ostream& out, const cur::SequentialCertificate& c) {
  const cur::SequentialFallback& f = *c.fallback_record;
  out << "nothing certified (p_1 = " << brief(c.steps.front().p)
      << " > delta = " << shortest(c.delta) << ")\n"
      << "uncertified fallback: the top K = " << f.count << " of " << c.pool_size << " by score ("
      << c.selection_size << " with ties at threshold " << brief(c.threshold) << ")\n"
      << "  K = max(min(" << f.minimum_selection << ", N), " << f.population << " - "
      << f.unsafe_upper << "): " << f.unsafe_upper << " bounds the unsafe count of the "
      << f.population
      << (c.order == cur::LabelOrder::stratified || c.fixed_walk ? " trajectories of S_1"
                                                                 : " of the pool")
      << " at level delta, at any stopping time (anytime bound; " << f.safe_labels << " of "
      << f.labels << " labels safe)\n";
}

inline void write_sequential_summary(std::ostream& out, const SequentialRun& run,
                                     const cur::SequentialCertificate& c, const PoolFile& pool,
                                     const Inputs& in, const SequentialRequest& request,
                                     const GateResult& selection, const data::DsrlPool* dataset) {
  out << "sequential certification of " << pool.name << ": " << c.pool_size << " trajectories, "
      << cur::label_order_name(c.order) << " label order of --seed " << in.seed << ", cap "
      << c.label_cap << ", --stop " << request.stop << "\n"
      << "alpha = " << shortest(c.alpha) << ", delta = " << shortest(c.delta) << "; grid of "
      << request.options.quantiles.size() << " quantiles, " << c.grid_size
      << " distinct thresholds\n"
      << walk_state(c) << "\n\n";
  write_sequential_steps(out, c);
  if (c.fixed_walk)
    out << "fixed walk: its sample is the first " << c.label_cap
        << " positions of the permutation (n of them in S_j), tested as the fixed-n walk tests "
           "a draw of "
        << c.label_cap
        << "; only the labels that can still change the certified depth are asked for, and p "
           "counts the unbought ones unsafe\n";
  if (c.tail_from)
    out << "fixed tail from label " << *c.tail_from + 1 << ": " << c.tail_size
        << " labels drawn uniformly from the unlabeled part of the grid's largest selection, "
           "each uncertified step tested at the tail's end (p_tail)\n";
  if (const auto reason = run.reason())
    out << "stopped by " << cur::stopping_reason_name(*reason) << " after " << c.labels_used
        << " labels\n";
  else
    out << "not stopped: label " << pool.id_of(*run.next()) << " next (label " << c.labels_used + 1
        << " of at most " << c.label_cap
        << "); what is certified below stays valid if the labeling stops here\n"
        << "  the next ids while the certified depth stays: " << planned_list(run, pool) << "\n";
  if (run.unused() > 0)
    out << run.unused() << " labels of --labels not used"
        << (run.stopped() ? "" : " yet: the walk has not asked for them (they wait their turn)")
        << "\n";
  if (c.certified)
    out << "certified: threshold lambda = " << brief(c.threshold) << " at quantile "
        << shortest(c.quantile) << ", step " << *c.certified_step + 1 << "; S(lambda) holds "
        << c.selection_size << " trajectories\n"
        << "  guarantee, at any stopping time of the labeling: Pr[certified and more than "
           "alpha = "
        << shortest(c.alpha) << " of S(lambda) unsafe] <= delta = " << shortest(c.delta) << "\n";
  else
    write_sequential_fallback(out, c);
  write_files_summary(out, in, selection, static_cast<std::int64_t>(selection.written.size()),
                      dataset);
  if (in.record_file)
    out << "wrote " << run.labels().size() << " labels to " << *in.record_file
        << " (pass it as --labels to go on)\n";
}

}  // namespace ltt::certification
