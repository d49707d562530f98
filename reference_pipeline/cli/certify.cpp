// ltt certify: the calibrated selection on a user's files (paper, section 4.3 and appendix A).
// Scores of a pool (a CSV or .npy pool, or the episodes of a DSRL dataset with a score file)
// and calibration labels in; a certificate (or a refusal with the uncertified fallback) and
// the selection out: ids or a .npy for a pool, a DSRL-layout dataset of only the selected
// episodes or their indices for a dataset. Everything is read and computed before anything
// is written: a failure leaves no output behind, and outputs this run created are removed
// again if a later one (the certificate that describes them) cannot be written.
// The steps live in certification.hpp, shared with `ltt curate`; run_certify reads as
// parse/validate -> inputs -> compute -> outputs -> report.

#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

#include <data/dsrl.hpp>

#include <certification/certificate_summary.hpp>
#include <certification/certification.hpp>
#include <certification/dataset_file.hpp>
#include <certification/format.hpp>
#include <certification/pool_file.hpp>
#include <certification/pool_inputs.hpp>
#include <certification/sequential_budgets_certification.hpp>
#include <certification/sequential_certification.hpp>
#include <certification/several_budgets_certification.hpp>

#include "budget_flags.hpp"
#include "certification_flags.hpp"
#include "subcommand.hpp"

namespace ltt::cli {

namespace certify_subcommand {

using namespace certification;

constexpr Command certify_command{
    "certify",
    "The calibrated selection: walk the grid of score thresholds (highest first) with exact\n"
    "composition tests on the calibration labels, certify the last threshold rejected at\n"
    "(alpha, delta), or refuse and return the uncertified fallback (the top of the pool by\n"
    "score, sized by a Clopper-Pearson lower bound on its safe mass). Prints the certificate\n"
    "step by step; writes it with --certificate and the selection with --selection.\n"
    "Calibration labels come from --labels, or with --draw from the pool's cost column.\n"
    "--dataset reads a DSRL dataset instead of a pool (one trajectory per episode, with its\n"
    "return and cost) and --selection writes the selected episodes back in its layout.\n"
    "--sequential: the labels one at a time in the order `ltt draw --sequential --seed S`\n"
    "prints (--labels holds the first ones, --interactive asks for more on the terminal)\n"
    "until --stop fires or --n are used; says the certificate so far and the id to label\n"
    "next, or after how many labels the walk stopped and with what certificate.\n"
    "--budgets b1,b2,...: every budget certified from the same labels (CSV id,cost or id,band,\n"
    "or --draw from the pool's cost column), with --procedure one-threshold (one selection,\n"
    "each test at delta) or per-budget (a threshold per budget, each walk at delta / K);\n"
    "the certificate has one entry per budget (docs/several-budgets.md). With --sequential\n"
    "the labels are bands (or costs) read one at a time in the uniform label order until\n"
    "--stop (cap or target:J) fires, every budget tested at every step.",
    certify_flags};

// Parse and validate: the flags, the relations between them, and every output, before any
// file is read.
struct Request {
  Inputs in;
  cur::CalibratedSelectionOptions options;
  std::optional<SequentialRequest> sequential;
};

// Outputs: what each is, none an input or another output, each a regular file or a new name.
void read_output_flags(const Arguments& args, Inputs& in) {
  if (args.has("certificate")) in.certificate_file = args.text("certificate");
  if (args.has("record")) in.record_file = args.text("record");
  if (args.has("selection")) in.selection_file = args.text("selection");
  if (args.has("transition-mask")) {
    if (!in.dataset_file)
      throw BadInput("--transition-mask needs --dataset (a mask has one entry per transition row)");
    read_transition_mask(args, in);
  }
  check_outputs(in, input_files(in));
}

// --sequential: what it takes instead of --draw and --gate, and its own flags.
SequentialRequest read_sequential_flags(const Arguments& args, Inputs& in) {
  for (const std::string_view flag :
       {"draw", "budget", "gate", "kappa", "override-gate", "drop-unsafe-calibration"})
    if (args.given(flag))
      throw BadInput(cat("--", flag,
                         " does not apply to --sequential (labels in the order of "
                         "`ltt draw --sequential`; no gate)"));
  const bool interactive = args.flag("interactive");
  if (args.has("labels")) in.labels_file = args.text("labels");
  if (!in.labels_file && !interactive)
    throw BadInput("--sequential needs --labels (the first labels of the order) or --interactive");
  SequentialRequest r = read_walk_flags(args, in);
  r.interactive = interactive;
  return r;
}

Request read_request(const Arguments& args) {
  Request r;
  Inputs& in = r.in;
  read_pool_flags(args, in);
  if (args.flag("sequential")) {
    read_state_value_flags(args, in);
    r.sequential = read_sequential_flags(args, in);
    read_output_flags(args, in);
    return r;
  }
  for (const std::string_view flag :
       {"stop", "n", "interactive", "order", "record", "refusal-rate"})
    if (args.given(flag)) throw BadInput(cat("--", flag, " needs --sequential"));
  read_label_flags(args, in);
  read_state_value_flags(args, in);
  r.options = read_selection_flags(args, in);
  read_output_flags(args, in);
  return r;
}

// --sequential: the walk on the labels of --labels (then standard input with --interactive),
// the certificate (and selection) it gives, reported as for the fixed-n walk.
int run_sequential(const Invocation& call, const Arguments& args, const Request& request,
                   const PoolInputs& inputs) {
  const Inputs& in = request.in;
  const SequentialRequest& sr = *request.sequential;
  const PoolFile& pool = inputs.pool;
  check_label_cap(sr, pool);
  SequentialRun run(pool.pool.score, sr.options, in.seed);
  if (in.labels_file) run.add_known(read_label_rows(*in.labels_file, pool));
  if (sr.interactive) run_interactive(run, pool, std::cin, call.err, ::isatty(STDIN_FILENO) == 1);
  const SequentialResult result = sequential_result(run, pool, in, sr, inputs.dsrl());
  write_outputs(in, pool, inputs.dsrl(), result.selection, result.json_text,
                record_csv(run, pool));
  if (args.flag("json"))
    call.out << result.json_text;
  else
    write_sequential_summary(call.out, run, result.certificate, pool, in, sr, result.selection,
                             inputs.dsrl());
  return 0;
}

// --budgets: the request, every flag it does not take refused first.
BudgetsRequest read_budgets_request(const Arguments& args, Inputs& in) {
  for (const std::string_view flag : {"stop", "n", "order", "record"})
    if (args.given(flag)) throw BadInput(cat("--", flag, " needs --sequential"));
  for (const std::string_view flag :
       {"interactive", "refusal-rate", "gate", "kappa", "override-gate"})
    if (args.given(flag)) throw BadInput(cat("--", flag, " does not apply to --budgets"));
  read_pool_flags(args, in);
  read_state_value_flags(args, in);
  BudgetsRequest r = read_budgets_labels_and_options(args, in);
  const cur::SeveralBudgetsOptions& o = r.options;
  if (o.procedure == ltt::BudgetProcedure::one_threshold_per_budget &&
      (args.has("selection") || args.has("transition-mask")))
    throw BadInput(cat("--", args.has("selection") ? "selection" : "transition-mask",
                       " with --procedure per-budget: each budget has its own selection (the "
                       "certificate gives each one's threshold and size)"));
  read_output_flags(args, in);
  return r;
}

// --sequential --budgets: the request, every flag it does not take refused first.
SequentialBudgetsRequest read_sequential_budgets_request(const Arguments& args, Inputs& in) {
  for (const std::string_view flag : {"draw", "budget", "gate", "kappa", "override-gate",
                                      "drop-unsafe-calibration", "refusal-rate"})
    if (args.given(flag))
      throw BadInput(cat("--", flag, " does not apply to --sequential --budgets"));
  if (args.given("interactive"))
    throw BadInput(
        "--interactive does not apply to --budgets (label bands with `ltt label budget "
        "--budgets`, or pass them in --labels)");
  read_pool_flags(args, in);
  read_state_value_flags(args, in);
  if (!args.has("labels"))
    throw BadInput(
        "--sequential --budgets needs --labels (id,cost or id,band: the first labels of the "
        "order)");
  in.labels_file = args.text("labels");
  SequentialBudgetsRequest r = read_budgets_walk_flags(args, in);
  const cur::SeveralBudgetsSequentialOptions& o = r.options;
  if (o.procedure == ltt::BudgetProcedure::one_threshold_per_budget &&
      (args.has("selection") || args.has("transition-mask")))
    throw BadInput(cat("--", args.has("selection") ? "selection" : "transition-mask",
                       " with --procedure per-budget: each budget has its own selection (the "
                       "certificate gives each one's threshold and size)"));
  read_output_flags(args, in);
  return r;
}

// --sequential --budgets: the walk on the bands of --labels, read in its order; the
// certificate (one entry per budget) and the selection, reported as for one budget.
int run_sequential_budgets(const Invocation& call, const Arguments& args) {
  Inputs in;
  const SequentialBudgetsRequest request = read_sequential_budgets_request(args, in);
  const PoolInputs inputs = read_inputs(in, true);  // the labels are banded here
  const PoolFile& pool = inputs.pool;
  if (request.options.label_cap > pool.size())
    throw BadInput(cat("--n: ", std::to_string(request.options.label_cap),
                       " must not exceed the pool size ", std::to_string(pool.size()), " (",
                       pool.name, ")"));
  SequentialBudgetsRun run(pool.pool.score, request.options, in.seed);
  run.add_known(read_banded_labels(*in.labels_file, pool, request.budgets));
  const SequentialBudgetsResult result =
      sequential_budgets_result(run, pool, in, request, inputs.dsrl());
  write_outputs(in, pool, inputs.dsrl(), result.selection, result.json_text,
                band_record_csv(run, pool));
  if (args.flag("json"))
    call.out << result.json_text;
  else
    write_sequential_budgets_summary(call.out, run, result.certificate, pool, in, request,
                                     result.selection, inputs.dsrl());
  return 0;
}

int run_budgets(const Invocation& call, const Arguments& args) {
  Inputs in;
  const BudgetsRequest request = read_budgets_request(args, in);
  const PoolInputs inputs = read_inputs(in, true);  // the pool; the labels are banded here
  const cur::BandedCalibration banded =
      in.labels_file ? read_banded_labels(*in.labels_file, inputs.pool, request.budgets)
                     : draw_banded(inputs.pool, in, request.budgets);
  const BudgetsCertification b = certify_budgets(inputs.pool, banded, request);
  std::ostringstream json_text;
  {
    JsonWriter json(json_text);
    write_budgets_json(json, b, request, in, inputs.dsrl(),
                       static_cast<std::int64_t>(b.written.size()));
    json_text << '\n';
  }
  GateResult written;
  written.written = b.written;
  write_outputs(in, inputs.pool, inputs.dsrl(), written, json_text.str());
  if (args.flag("json"))
    call.out << json_text.str();
  else
    write_budgets_summary(call.out, b, request, in);
  return 0;
}

}  // namespace certify_subcommand

int run_certify(const Invocation& call) {
  using namespace certify_subcommand;
  const auto args = parse_or_help(certify_command, call);
  if (!args) return 0;
  if (args->has("budgets"))
    return args->flag("sequential") ? run_sequential_budgets(call, *args)
                                    : run_budgets(call, *args);
  refuse_budget_flags_without_budgets(*args);
  const Request request = read_request(*args);
  const Inputs& in = request.in;
  const PoolInputs inputs = read_inputs(in, request.sequential.has_value());
  if (request.sequential) return run_sequential(call, *args, request, inputs);

  // Compute: the calibrated selection, its triple and the gate.
  const Certification result = certify_pool(inputs.pool, inputs.calibration, in, request.options);
  const cur::Certificate& c = result.result.certificate;

  // Outputs: the certificate text first, as the certificate file holds it.
  std::ostringstream json_text;
  {
    JsonWriter json(json_text);
    write_json(json, c, result.triple, result.gate, in, request.options, result.written_size,
               inputs.dsrl());
    json_text << '\n';
  }
  write_outputs(in, inputs.pool, inputs.dsrl(), result.gate, json_text.str());

  // Report.
  if (args->flag("json"))
    call.out << json_text.str();
  else
    write_summary(call.out, inputs.pool, c, result.triple, result.gate, in, request.options,
                  result.written_size, inputs.dsrl());
  return 0;
}

}  // namespace ltt::cli
