// ltt validate: the guarantee validation of the paper (section "Guarantee validation",
// appendix "Properties of the certificate") on a pool whose unsafe labels are all known.
// Redraws the calibration sample --draws times, runs the multiple-testing procedure on each,
// and reports the certification rate, the false-certification rate Proposition "guarantee"
// bounds by delta, the conditional violation rate it does not bound, the returned-threshold
// histogram, the closed-form rate, and the certificate triple's coverage
// (ltt::curation::validate_guarantee, docs/validation.md).

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <future>
#include <iterator>
#include <optional>
#include <ostream>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <curation/sequential_validation.hpp>
#include <curation/trajectory_pool.hpp>
#include <curation/validation.hpp>
#include <ltt/fixed_sequence.hpp>

#include <certification/format.hpp>
#include <certification/pool_file.hpp>
#include <certification/table_reader.hpp>

#include "budget_flags.hpp"
#include "curation_flags.hpp"
#include "subcommand.hpp"
#include "validation_tables.hpp"

namespace ltt::cli {

namespace validate_subcommand {

constexpr Flag validate_flags[] = {
    {"pool",
     FlagKind::text,
     "pool CSV: id,score,unsafe (or id,score,cost with --budget)",
     {},
     true},
    {"budget", FlagKind::text, "cost budget: unsafe = cost > budget, from the cost column"},
    {"alpha", FlagKind::open_unit, "target unsafe fraction", "0.25"},
    {"delta", FlagKind::open_unit, "risk level", "0.1"},
    {"n", FlagKind::count, "calibration labels per draw, uniformly without replacement", "200"},
    {"draws", FlagKind::count, "calibration draws", "2000", false, std::int64_t{1} << 20,
     "each draw keeps an 80-byte result and takes about 25 us at n = 200"},
    {"seed", FlagKind::count, "seed; draw d uses SplitMix64 output d of it", "0"},
    {"grid", FlagKind::text, "score quantiles of the thresholds, shallow to deep", paper_grid_text},
    {"procedure", FlagKind::text,
     "fixed-sequence, bonferroni, holm, or sequential (labels one at a time; --n is the cap); "
     "with --budgets one-threshold (the default there) or per-budget",
     "fixed-sequence"},
    {"budgets", FlagKind::text,
     "several cost budgets, ascending and comma-separated (20,40,80): validate certifying every "
     "one from the same labels, against the pool's cost column (docs/several-budgets.md)"},
    alphas_flag,
    {"stop", FlagKind::text,
     "stopping rule of --procedure sequential: cap, target:J, stall:L, early-refusal, labels, "
     "forecast, depth or auto (= depth: the fixed walk label by label)",
     "auto"},
    label_order_flag,
    refusal_rate_flag,
    {"threads",
     FlagKind::count,
     "worker threads (default: one per hardware thread)",
     {},
     false,
     256,
     "one operating-system thread each"},
    {"json", FlagKind::boolean, "print one JSON object instead of the summary"},
};

constexpr Command validate_command{
    "validate",
    "Guarantee validation on a pool with known labels: redraw n calibration labels --draws\n"
    "times, run the procedure on each draw, and report the certification rate, the\n"
    "false-certification rate Pr[certified and violated] (at most delta by Proposition\n"
    "\"guarantee\"), the conditional rate Pr[violated | certified], the returned-threshold\n"
    "histogram, the closed-form rate (fixed sequence), and the certificate triple's coverage\n"
    "(fixed sequence). Intervals are two-sided 95% Clopper-Pearson. The output is the same\n"
    "for a seed whatever the thread count. --procedure sequential validates the sequential\n"
    "walk instead (docs/sequential.md): one random label order per draw, walked until --stop\n"
    "fires or --n labels are used, and reports the labels used. --budgets validates the\n"
    "certificate at several budgets (one threshold for all, or one per budget) on the pool's\n"
    "costs: every budget certified against its closed form, and the simultaneous false\n"
    "certification Pr[some budget certified and violated], at most delta.",
    validate_flags};

constexpr std::string_view procedure_flags[] = {"fixed-sequence", "bonferroni", "holm"};
constexpr ltt::Procedure procedures[] = {ltt::Procedure::fixed_sequence, ltt::Procedure::bonferroni,
                                         ltt::Procedure::holm};

std::string_view flag_name(ltt::Procedure p) {
  for (std::size_t i = 0; i < std::size(procedures); ++i)
    if (procedures[i] == p) return procedure_flags[i];
  return "unknown";
}

ltt::Procedure read_procedure(std::string_view text) {
  for (std::size_t i = 0; i < std::size(procedures); ++i)
    if (procedure_flags[i] == text) return procedures[i];
  throw BadInput(cat("--procedure: ", in_quotes(text),
                     " is not one of fixed-sequence, bonferroni, holm, sequential"));
}

// The pool (pool_file.hpp: id and score checked, ids unique, any column order) and its unsafe
// bits: the unsafe column (0 or 1), or cost > budget from the cost column.
struct LabeledPool {
  std::vector<double> score;
  std::vector<std::uint8_t> unsafe;
};

// by_cost: unsafe = cost > budget (a flag and a plain double rather than std::optional,
// which GCC 12 -O3 reports as maybe-uninitialized once inlined).
LabeledPool read_labeled_pool(const std::string& path, bool by_cost, double budget) {
  if (path.ends_with(".npy"))
    throw BadInput(cat(in_quotes(path),
                       ": a .npy pool holds scores only; ltt validate needs "
                       "a CSV pool with an unsafe or a cost column"));
  PoolFile file = read_pool(path);
  LabeledPool labeled;
  if (by_cost) {
    if (file.pool.episodic_cost.empty())
      (void)CsvFile::read(path).column("cost",
                                       " (--budget derives unsafe = cost > budget from it)");
    labeled.unsafe = curation::unsafe_bits(file.pool.episodic_cost, budget);
  } else {
    CsvFile csv = CsvFile::read(path);
    const std::size_t column = csv.column("unsafe", " (or give --budget and a cost column)");
    labeled.unsafe.reserve(file.pool.score.size());
    for (CsvRecord row; csv.next(row);) {
      const std::string_view bit = row.fields[column];
      if (bit != "0" && bit != "1")
        csv.fail(row.line, bit.empty() ? std::string("unsafe is missing (0 or 1)")
                                       : cat("unsafe ", in_quotes(bit), " must be 0 or 1"));
      labeled.unsafe.push_back(bit == "1" ? 1 : 0);
    }
  }
  labeled.score = std::move(file.pool.score);
  return labeled;
}

// Runs the harness; when standard error is a terminal, shows the draws and triples done
// there, updated five times a second and erased at the end.
ltt::curation::GuaranteeValidation run_with_progress(const Invocation& call,
                                                     const LabeledPool& pool,
                                                     ltt::curation::ValidationOptions options) {
  if (::isatty(STDERR_FILENO) != 1)
    return ltt::curation::validate_guarantee(pool.score, pool.unsafe, options);
  ltt::curation::ValidationProgress progress;
  options.progress = &progress;
  auto result = std::async(std::launch::async, [&] {
    return ltt::curation::validate_guarantee(pool.score, pool.unsafe, options);
  });
  bool shown = false;
  while (result.wait_for(std::chrono::milliseconds(200)) != std::future_status::ready) {
    const std::int64_t triples = progress.triples_total.load();
    call.err << "\rltt validate: draw " << progress.draws_done.load() << " / " << options.draws;
    if (triples > 0)
      call.err << ", certificate triple " << progress.triples_done.load() << " / " << triples;
    call.err << std::flush;
    shown = true;
  }
  if (shown) call.err << "\r\033[K" << std::flush;
  return result.get();
}

// The keys every validation object opens with, through the three proportions (`stop` and
// `order` only for the sequential procedure).
template <class Validation>
void write_opening_json(JsonWriter& json, const Validation& v, const std::string& path,
                        std::optional<double> budget, std::int64_t n, std::string_view procedure,
                        std::optional<std::string_view> stop, std::span<const double> grid,
                        std::optional<std::string_view> order = std::nullopt) {
  json.begin_object()
      .field("pool", path)
      .field("N", v.pool_size)
      .field("pool_unsafe", v.pool_unsafe)
      .field("budget", budget)
      .field("n", n)
      .field("draws", v.draws)
      .field("seed", static_cast<std::int64_t>(v.seed))
      .field("alpha", v.alpha)
      .field("delta", v.delta)
      .field("procedure", procedure);
  if (stop) json.field("stop", *stop);
  if (order) json.field("order", *order);
  json.field("confidence", v.confidence);
  JsonFields put(json);
  put("grid", std::vector<double>(grid.begin(), grid.end()));
  put("certification", v.certification);
  put("false_certification", v.false_certification);
  put("conditional_violation", v.conditional_violation);
}

// The first selection and the purity margin, a line of both summaries.
template <class Validation>
void write_first_selection(std::ostream& out, const Validation& v) {
  const auto& s1 = v.steps.front();
  out << "  first selection N1 = " << s1.N << " with U1 = " << s1.U
      << " unsafe (U* = " << s1.null_boundary
      << "); purity margin alpha - min_j u_j = " << brief(v.purity_margin) << "\n\n";
}

// The grid with the pool's true composition and the returned-step histogram.
template <class Validation>
void write_steps_json(JsonWriter& json, const Validation& v) {
  JsonFields put(json);
  put("steps", v.steps);
  put("returned_none", v.returned_none);
  put("merged_quantiles", v.merged_quantiles);
}

// The --json object: the run's settings under the program's names (N, n, the procedure's flag
// name), then the result's own field lists (<curation/fields.hpp>, shared with Python).
void write_validation_json(std::ostream& os, const ltt::curation::GuaranteeValidation& v,
                           const std::string& path, std::optional<double> budget,
                           std::span<const double> grid) {
  const bool above_delta = v.false_certification.lower > v.delta;
  JsonWriter json(os);
  write_opening_json(json, v, path, budget, v.calibration_size, flag_name(v.procedure), {}, grid);
  json.field("false_certification_above_delta", above_delta)
      .field("closed_form_rate", v.closed_form_rate)
      .field("purity_margin", v.purity_margin);
  write_steps_json(json, v);
  JsonFields{json}("triple", v.triple);
  json.end_object();
  os << '\n';
}

// The summary tables and the reading.
void write_validation_text(std::ostream& out, const ltt::curation::GuaranteeValidation& v,
                           const std::string& path, std::optional<double> budget) {
  const bool walk = v.procedure == ltt::Procedure::fixed_sequence;
  const bool above_delta = v.false_certification.lower > v.delta;
  out << "guarantee validation: " << v.draws << " calibration draws of n = " << v.calibration_size
      << " from " << path << "\n"
      << "  pool N = " << v.pool_size << " (" << v.pool_unsafe << " unsafe";
  if (budget) out << ": cost > " << shortest(*budget);
  out << "), procedure " << flag_name(v.procedure) << ", alpha = " << shortest(v.alpha)
      << ", delta = " << shortest(v.delta) << ", seed " << v.seed << "\n";
  write_first_selection(out, v);
  out << "| quantity | estimate | draws | 95% Clopper-Pearson |\n"
      << "|---|---|---|---|\n"
      << "| certification rate | " << show_row(v.certification) << " |\n"
      << "| closed form (Proposition \"certification rate\") | "
      << (walk ? brief(*v.closed_form_rate)
               : std::string("does not apply: it prices the fixed-sequence walk"))
      << " | | |\n"
      << "| false certification Pr[certified and violated] | " << show_row(v.false_certification)
      << " |\n"
      << "| conditional violation Pr[violated \\| certified] | "
      << show_row(v.conditional_violation) << " |\n\n";
  if (above_delta)
    out << "guarantee: the interval on false certification lies above delta = " << shortest(v.delta)
        << ": Pr[certified and violated] <= delta looks broken\n\n";
  else
    out << "guarantee: false certification " << show_rate(v.false_certification.rate)
        << " is consistent with Pr[certified and violated] <= delta = " << shortest(v.delta)
        << " (interval lower end " << brief(v.false_certification.lower) << ")\n\n";

  if (v.triple) {
    const auto& t = *v.triple;
    out << "certificate triple from each draw's (m1, k1) (" << t.distinct_counts
        << " distinct):\n\n"
        << "| quantity | value |\n"
        << "|---|---|\n"
        << "| mean r_hat, all draws | " << brief(t.mean_r_hat) << " (realized rate "
        << show_rate(v.certification.rate) << ", closed form " << brief(*v.closed_form_rate)
        << ") |\n"
        << "| mean r_hat, certified draws | " << show_rate(t.mean_r_hat_certified) << " |\n"
        << "| mean r_lo, all draws | " << brief(t.mean_r_lo) << " |\n"
        << "| mean bound min(1, delta / r_lo), certified draws | "
        << show_rate(t.mean_bound_certified) << " against realized Pr[violated \\| certified] "
        << show_rate(v.conditional_violation.rate);
    if (t.mean_bound_covers) out << (*t.mean_bound_covers ? ": covers" : ": does not cover");
    out << " |\n"
        << "| certified draws whose bound covers the realized rate | " << t.covered << " / "
        << v.certification.count << " |\n\n";
  } else {
    out << "certificate triple: not computed (it prices the fixed-sequence walk's rate)\n\n";
  }

  write_steps_text(out, v.steps, v.returned_none, v.merged_quantiles);
  out << "\nreading: the certification rate is the trust signal. Proposition \"guarantee\" "
         "bounds\nPr[certified and violated] by delta, not Pr[violated | certified]: where "
         "certification\nis rare the few certificates that fire come from optimistic draws, "
         "and the conditional\nrate can exceed delta (docs/validation.md).\n";
}

// --procedure sequential, --json: the keys of write_validation_json where they apply (no
// closed form, no triple: both null), plus the stop rule, labels_used and stopped_by.
void write_sequential_json(std::ostream& os, const ltt::curation::SequentialValidation& v,
                           const std::string& path, std::optional<double> budget,
                           std::span<const double> grid, std::string_view stop) {
  JsonWriter json(os);
  write_opening_json(json, v, path, budget, v.label_cap, "sequential", stop, grid,
                     ltt::curation::label_order_name(v.order));
  json.field("false_certification_above_delta", v.false_certification.lower > v.delta)
      .field("closed_form_rate", std::optional<double>{})
      .field("purity_margin", v.purity_margin);
  write_steps_json(json, v);
  json.key("triple").null();
  JsonFields{json}("labels_used", v.labels_used);
  json.key("stopped_by").begin_object();
  for (const auto reason : ltt::curation::stopping_reasons)
    json.field(ltt::curation::stopping_reason_name(reason),
               v.stopped_by[static_cast<std::size_t>(reason)]);
  json.end_object().end_object();
  os << '\n';
}

void write_sequential_text(std::ostream& out, const ltt::curation::SequentialValidation& v,
                           const std::string& path, std::optional<double> budget,
                           std::string_view stop) {
  out << "guarantee validation of the sequential walk: " << v.draws << " random "
      << ltt::curation::label_order_name(v.order) << " label orders, cap n = " << v.label_cap
      << ", --stop " << stop << ", from " << path << "\n"
      << "  pool N = " << v.pool_size << " (" << v.pool_unsafe << " unsafe";
  if (budget) out << ": cost > " << shortest(*budget);
  out << "), alpha = " << shortest(v.alpha) << ", delta = " << shortest(v.delta) << ", seed "
      << v.seed << "\n";
  write_first_selection(out, v);
  out << "| quantity | estimate | draws | 95% Clopper-Pearson |\n"
      << "|---|---|---|---|\n"
      << "| certification rate | " << show_row(v.certification) << " |\n"
      << "| false certification Pr[certified and violated] | " << show_row(v.false_certification)
      << " |\n"
      << "| conditional violation Pr[violated \\| certified] | "
      << show_row(v.conditional_violation) << " |\n\n"
      << "labels used per run: mean " << brief(v.labels_used.mean) << ", median "
      << shortest(v.labels_used.median) << ", 90th percentile " << v.labels_used.p90 << ", max "
      << v.labels_used.max << " (cap " << v.label_cap << ")\nstopped by:";
  for (const auto reason : ltt::curation::stopping_reasons)
    out << " " << ltt::curation::stopping_reason_name(reason) << " "
        << v.stopped_by[static_cast<std::size_t>(reason)];
  out << "\n\n";
  if (v.false_certification.lower > v.delta)
    out << "guarantee: the interval on false certification lies above delta = " << shortest(v.delta)
        << ": Pr[certified and violated] <= delta looks broken\n\n";
  write_steps_text(out, v.steps, v.returned_none, v.merged_quantiles);
}

}  // namespace validate_subcommand

// validate_budgets.cpp
int run_validate_budgets(const Invocation& call, const Arguments& args);

int run_validate(const Invocation& call) {
  using namespace validate_subcommand;
  const auto args = parse_or_help(validate_command, call);
  if (!args) return 0;
  if (args->has("budgets")) return run_validate_budgets(call, *args);
  if (args->given("alphas")) throw BadInput("--alphas needs --budgets");
  const std::string& path = args->text("pool");
  const bool by_cost = args->given("budget");
  const double budget = by_cost ? finite_real("budget", args->text("budget")) : 0.0;
  ltt::curation::ValidationOptions options;
  options.alpha = args->real("alpha");
  options.delta = args->real("delta");
  options.calibration_size = args->count("n");
  options.draws = args->count("draws");
  options.seed = static_cast<std::uint64_t>(args->count("seed"));
  options.quantiles = grid_quantiles(args->text("grid"));
  const bool sequential = args->text("procedure") == "sequential";
  if (!sequential) options.procedure = read_procedure(args->text("procedure"));
  for (const std::string_view flag : {"stop", "order", "refusal-rate"})
    if (args->given(flag) && !sequential)
      throw BadInput(cat("--", flag, ": applies to --procedure sequential only"));
  ltt::curation::SequentialSelectionOptions walk;
  walk.refusal_rate = args->real("refusal-rate");
  read_stop_and_order(*args, walk);
  if (options.calibration_size < 1) throw BadInput("--n: 0 must be at least 1");
  if (options.draws < 1) throw BadInput("--draws: 0 must be at least 1");
  if (const auto threads = args->optional_count("threads")) {
    if (*threads < 1) throw BadInput("--threads: 0 must be at least 1");
    options.threads = *threads;
  }

  const LabeledPool pool = read_labeled_pool(path, by_cost, budget);
  const auto N = static_cast<std::int64_t>(pool.score.size());
  if (options.calibration_size > N)
    throw BadInput(cat("--n: ", std::to_string(options.calibration_size),
                       " must not exceed the pool size ", std::to_string(N), " of ",
                       in_quotes(path)));

  const std::optional<double> shown_budget = by_cost ? std::optional(budget) : std::nullopt;
  if (sequential) {
    const auto v = ltt::curation::validate_sequential(pool.score, pool.unsafe, options, walk);
    if (args->flag("json"))
      write_sequential_json(call.out, v, path, shown_budget, options.quantiles, args->text("stop"));
    else
      write_sequential_text(call.out, v, path, shown_budget, args->text("stop"));
    return 0;
  }
  const ltt::curation::GuaranteeValidation v = run_with_progress(call, pool, options);

  if (args->flag("json")) {
    write_validation_json(call.out, v, path, shown_budget, options.quantiles);
  } else {
    write_validation_text(call.out, v, path, shown_budget);
  }
  return 0;
}

}  // namespace ltt::cli
