// ltt label: a local page where a person gives the judgments the method runs on (docs/label.md):
//   ltt label budget   budget labels for the sequential walk, the walk's state after each, and
//                      when the stop rule fires the files `ltt certify --sequential` writes
//   ltt label compare  segment comparisons, written as the pairs file `ltt score` reads
// This file parses the flags, checks every output and reads the inputs before the server
// starts; the sessions and the server live in reference_pipeline/label/.

#include <filesystem>
#include <iostream>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include <curation/preference_pairs.hpp>
#include <learning/safety_value.hpp>

#include <data/dsrl.hpp>

#include <certification/dataset_file.hpp>
#include <certification/output_directory.hpp>
#include <certification/pool_inputs.hpp>
#include <certification/sequential_certification.hpp>

#include "budget_bands_session.hpp"
#include "budget_session.hpp"
#include "certification_flags.hpp"
#include "compare_session.hpp"
#include "episode_view.hpp"
#include "input_digest.hpp"
#include "journal.hpp"
#include "scoring_settings.hpp"
#include "server.hpp"
#include "subcommand.hpp"

namespace ltt::cli {

namespace label_subcommand {

namespace fs = std::filesystem;
using namespace certification;

// The flags of both pages: where the answers go, where the server listens, what it shows.
const std::vector<Flag>& page_flags() {
  static const std::vector<Flag> flags = {
      {"out", FlagKind::text,
       "directory of the session: its journal (resumed when it exists) and the files written",
       {}, true},
      {"host", FlagKind::text,
       "address to listen on; anything but loopback needs --allow-host (other machines get in, "
       "the token travels in plain HTTP)",
       "127.0.0.1"},
      {"allow-host", FlagKind::paths,
       "names the other browsers use in the URL (a host name, an address): the Host headers "
       "accepted besides the bound address; the URL printed uses the first"},
      {"port", FlagKind::count, "port to listen on; 0 picks a free one (the URL says which)", "0",
       false, 65535, "a TCP port"},
      {"new-token", FlagKind::boolean,
       "replace DIR/token by a new one (a token that leaked, or a token file others can read); "
       "a page open on the old URL stops working"},
      {"media", FlagKind::text,
       "directory of the team's own renderings, shown instead of the plots: <id>.png|.mp4|.webm "
       "(segments <id>_<start>.*)"},
      {"show", FlagKind::text,
       "observation columns plotted over time, comma-separated (default the first three)"},
      {"plane", FlagKind::text,
       "two observation columns X,Y drawn top-down as the path, coloured by time"},
      {"show-cost", FlagKind::boolean,
       "plot the per-step cost too (an audit: the labeler could read the answer off it)"},
  };
  return flags;
}

const Flag* certify_flag(std::string_view name) {
  for (const Flag& flag : certify_flags)
    if (flag.name == name) return &flag;
  return nullptr;
}

const Command& budget_command() {
  static const std::vector<Flag> flags = [] {
    std::vector<Flag> f;
    // certify's flags, less the "--sequential: " that opens some of their help texts.
    constexpr std::string_view sequential_only = "--sequential: ";
    for (const std::string_view name : {"pool", "dataset", "alpha", "delta", "grid", "stop", "n", "min-selection"}) {
      Flag flag = *certify_flag(name);
      if (flag.help.starts_with(sequential_only)) flag.help.remove_prefix(sequential_only.size());
      f.push_back(flag);
    }
    f.push_back({"scores", FlagKind::text, "--dataset: one score per episode, CSV id,score or .npy"});
    f.push_back({"seed", FlagKind::count, "seed of the label order (`ltt draw --sequential`)", "0"});
    f.push_back(label_order_flag);
    f.push_back(refusal_rate_flag);
    f.push_back(budgets_flag);
    f.push_back(alphas_flag);
    f.push_back(procedure_flag);
    for (const Flag& flag : page_flags()) f.push_back(flag);
    return f;
  }();
  static const Command command{
      "label budget",
      "A local page for budget labels: it shows the episode the sequential walk asks for next\n"
      "(the order of `ltt certify --sequential`), takes over / within the budget (keys o, w;\n"
      "u undoes), and after every answer the walk's state and the stop rule's verdict. When the\n"
      "rule fires it writes into --out DIR labels.csv, certificate.json and (a dataset's)\n"
      "selection: what `ltt certify --sequential --labels DIR/labels.csv` writes. Every answer\n"
      "is in DIR/journal.jsonl before the page shows it; the same DIR resumes the session.\n"
      "--budgets b1,b2,...: one key per cost band (0 for cost <= b1, 1 for b1 < cost <= b2,\n"
      "...) instead of over / within, and the walk at several budgets (uniform order; --stop\n"
      "cap or target:J): what `ltt certify --sequential --budgets` writes.",
      flags};
  return command;
}

const Command& compare_command() {
  static const std::vector<Flag> flags = [] {
    std::vector<Flag> f = {
        {"dataset", FlagKind::text, "the DSRL dataset (.hdf5/.h5, or a directory of .npy)", {},
         true},
        {"pairs", FlagKind::count, "pairs of segments to compare", "20", false, 100000,
         "a person answers each"}};
    for (const Flag& flag : scoring_flags())
      if (flag.name == "segment" || flag.name == "seed") f.push_back(flag);
    for (const Flag& flag : page_flags()) f.push_back(flag);
    return f;
  }();
  static const Command command{
      "label compare",
      "A local page for segment comparisons: two segments of --segment rows side by side, drawn\n"
      "as `ltt score` draws its synthesized pairs (same --seed), answered A safer / B safer /\n"
      "cannot tell (keys a, b, t; u undoes). Writes --out DIR/pairs.csv for\n"
      "`ltt score --pairs-file DIR/pairs.csv --segment H`. Every answer is in\n"
      "DIR/journal.jsonl before the page shows it; the same DIR resumes the session.",
      flags};
  return command;
}

// "0,1,5" -> {0, 1, 5}, each a column of the observations.
std::vector<std::int64_t> column_list(std::string_view flag, std::string_view text,
                                      std::int64_t width) {
  std::vector<std::int64_t> columns;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    const std::size_t end = std::min(text.find(',', begin), text.size());
    const std::string_view item = text.substr(begin, end - begin);
    std::int64_t column = -1;
    const auto [last, ec] = std::from_chars(item.data(), item.data() + item.size(), column);
    if (item.empty() || ec != std::errc{} || last != item.data() + item.size() || column < 0 ||
        column >= width)
      throw BadInput(cat("--", flag, ": ", in_quotes(item), " is not an observation column (0 to ",
                         std::to_string(width - 1), ")"));
    columns.push_back(column);
    begin = end + 1;
  }
  return columns;
}

label::ViewOptions view_options(const Arguments& args, const data::DsrlPool& dataset) {
  label::ViewOptions v;
  const std::int64_t width = dataset.observation_dim;
  if (args.has("show"))
    v.columns = column_list("show", args.text("show"), width);
  else
    for (std::int64_t c = 0; c < std::min<std::int64_t>(3, width); ++c) v.columns.push_back(c);
  if (args.has("plane")) {
    const std::vector<std::int64_t> xy = column_list("plane", args.text("plane"), width);
    if (xy.size() != 2) throw BadInput("--plane: give two columns, X,Y");
    v.plane = std::pair(xy[0], xy[1]);
  }
  v.show_cost = args.flag("show-cost");
  return v;
}

// --host, --port, --media, and DIR/token.
label::ServerOptions server_options(const Arguments& args, const fs::path& out,
                                    std::string what) {
  label::ServerOptions s;
  s.host = args.text("host");
  s.port = static_cast<int>(args.count("port"));
  if (args.has("allow-host"))
    for (const std::string& name : args.texts("allow-host")) {
      const bool v6 = name.size() > 2 && name.front() == '[' && name.back() == ']' &&
                      name.find_first_not_of("0123456789abcdefABCDEF:.", 1) == name.size() - 1;
      if (!v6 && (name.empty() || name.find_first_not_of("abcdefghijklmnopqrstuvwxyz"
                                                         "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-") !=
                                      std::string::npos))
        throw BadInput(cat("--allow-host: ", in_quotes(name),
                           " is not a host name or address (an IPv6 address in brackets)"));
      s.allow_hosts.push_back(name);
    }
  if (!label::is_loopback(s.host) && s.allow_hosts.empty())
    throw BadInput(cat("--host: ", in_quotes(s.host),
                       " is not a loopback address: give --allow-host NAME, the name the other "
                       "browsers use in the URL (the token then travels in plain HTTP)"));
  if (args.has("media")) {
    s.media = args.text("media");
    std::error_code ec;
    if (!fs::is_directory(*s.media, ec))
      throw BadInput(cat("--media: ", in_quotes(s.media->string()), " is not a directory"));
  }
  s.token_file = out / "token";
  s.new_token = args.flag("new-token");
  s.what = std::move(what);
  return s;
}

// --out, once the inputs are read: created now, since the journal lives there from the first
// answer on.
void create_session_directory(const fs::path& out) {
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec) throw BadInput(cat("--out: cannot create ", in_quotes(out.string()), ": ", ec.message()));
}

int run_budget(const Invocation& call, const Arguments& args) {
  Inputs in;
  read_pool_flags(args, in);
  if (in.dataset_file && !in.scores_file)
    throw BadInput("--dataset needs --scores (one per episode, e.g. `ltt score`'s scores.npy)");
  if (in.dataset_files.size() > 1)
    throw BadInput(cat("--dataset: ", std::to_string(in.dataset_files.size()),
                       " files; the labeling page shows one file's episodes (label each file's "
                       "walk apart, or `ltt draw` the ids and label them in a CSV)"));
  if (in.pool_file)
    for (const std::string_view flag : {"show", "plane", "show-cost"})
      if (args.given(flag))
        throw BadInput(cat("--", flag, " needs --dataset (a pool file has no steps to show)"));
  // --budgets: bands for the walk at several budgets; otherwise over / within for one budget.
  std::optional<SequentialRequest> request;
  std::optional<SequentialBudgetsRequest> banded;
  if (args.has("budgets")) {
    if (args.given("refusal-rate"))
      throw BadInput("--refusal-rate does not apply to --budgets (the walk at several budgets "
                     "has no early refusal)");
    banded = read_budgets_walk_flags(args, in);
  } else {
    refuse_budget_flags_without_budgets(args);
    request = read_walk_flags(args, in);
  }
  const bool one_selection =
      !banded || banded->options.procedure == ltt::BudgetProcedure::one_threshold;
  const fs::path out = args.text("out");
  // The files of DIR, named as `ltt certify --sequential` is given them.
  in.labels_file = (out / "labels.csv").string();
  in.certificate_file = (out / "certificate.json").string();
  std::vector<OutputName> names{{"journal.jsonl"}, {"journal.jsonl.new"}, {"token"}, {"token.new"}, {"labels.csv"},
                                {"certificate.json"}};
  if (!one_selection) {
    // per budget: no one selection (the certificate gives each budget's threshold and size)
  } else if (in.dataset_file && in.dataset_store == data::DsrlStore::hdf5) {
    in.selection_file = (out / "selection.hdf5").string();
    names.push_back({"selection.hdf5"});
  } else if (in.dataset_file) {
    in.selection_file = (out / "selection").string();
    names.push_back({"selection", Destination::directory});
  } else {
    in.selection_file = (out / "selection.txt").string();
    names.push_back({"selection.txt"});
  }
  Inputs read = in;
  read.labels_file.reset();  // DIR/labels.csv is written here, not read
  check_output_directory(out, names, input_files(read));
  choose_selection_format(in);
  const label::ServerOptions server = server_options(args, out, "budget labels");

  const PoolInputs inputs = with_status(call, "reading the pool", [&] { return read_inputs(in, true); });
  if (request) check_label_cap(*request, inputs.pool);
  if (banded && banded->options.label_cap > inputs.pool.size())
    throw BadInput(cat("--n: ", std::to_string(banded->options.label_cap),
                       " must not exceed the pool size ", std::to_string(inputs.pool.size()), " (",
                       inputs.pool.name, ")"));
  std::optional<label::EpisodeView> view;
  if (inputs.dsrl()) {
    const label::ViewOptions shown = view_options(args, *inputs.dsrl());
    with_status(call, "reading the columns shown", [&] {
      view.emplace(*in.dataset_file, *inputs.dsrl(), shown);
      return 0;
    });
  }

  create_session_directory(out);
  // The inputs (by content) and settings that fix the walk's order: a journal of others is not
  // resumed.
  nlohmann::json files = nlohmann::json::array();
  with_status(call, "hashing the inputs", [&] {
    for (const auto& [flag, file] : input_files(read)) files.push_back(label::input_record(flag, file));
    return 0;
  });
  const auto serve_session = [&](auto& session, const label::Journal& journal) {
    if (!journal.replayed().empty())
      call.err << "ltt label budget: resumed " << out.string() << " after "
               << session.labels_used() << " labels\n";
    label::serve(session, server, std::cout, call.err);
    call.out << "ltt label budget: " << session.labels_used() << " labels in "
             << (out / "journal.jsonl").string() << "\n";
  };
  if (banded) {
    const cur::SeveralBudgetsSequentialOptions& o = banded->options;
    const nlohmann::json header{
        {"ltt_label", "budget"},
        {"inputs", files},
        {"settings",
         {{"seed", in.seed},
          {"stop", banded->stop},
          {"n", o.label_cap},
          {"order", "uniform"},
          {"budgets", banded->budgets},
          {"alphas", o.alphas},
          {"procedure", procedure_flag_name(o.procedure)},
          {"delta", o.delta},
          {"grid", o.quantiles},
          {"min_selection", o.minimum_selection}}}};
    label::Journal journal(out / "journal.jsonl", header,
                           label::band_words(static_cast<std::int64_t>(banded->budgets.size())));
    label::BudgetBandsSession session(inputs, in, *banded, view ? &*view : nullptr, journal);
    serve_session(session, journal);
    return 0;
  }
  const nlohmann::json header{
      {"ltt_label", "budget"},
      {"inputs", files},
      {"settings",
       {{"seed", in.seed},
        {"stop", request->stop},
        {"n", request->options.label_cap},
        {"order", curation::label_order_name(request->options.order)},
        {"alpha", request->options.alpha},
        {"delta", request->options.delta},
        {"grid", request->options.quantiles},
        {"refusal_rate", request->options.refusal_rate},
        {"min_selection", request->options.minimum_selection}}}};
  label::Journal journal(out / "journal.jsonl", header, {"over", "within"});
  label::BudgetSession session(inputs, in, *request, view ? &*view : nullptr, journal);
  serve_session(session, journal);
  return 0;
}

int run_compare(const Invocation& call, const Arguments& args) {
  const std::string dataset_file = args.text("dataset");
  const fs::path out = args.text("out");
  const std::int64_t count = args.count("pairs"), H = args.count("segment");
  if (count < 1) throw BadInput("--pairs: 0 must be at least 1");
  if (H < 1) throw BadInput("--segment: 0 must be at least 1");
  check_output_directory(out, {{"journal.jsonl"}, {"journal.jsonl.new"}, {"token"}, {"token.new"}, {"pairs.csv"}},
                         {{"dataset", dataset_file}});
  const label::ServerOptions server = server_options(args, out, "segment comparisons");

  const data::DsrlPool dataset =
      with_status(call, "reading the dataset", [&] { return data::load_dsrl_pool(dataset_file); });
  std::int64_t eligible = 0;
  for (const data::Episode& e : dataset.episodes) eligible += e.length >= H;
  if (eligible < 2)
    throw BadInput(cat(dataset_file, ": ", std::to_string(eligible),
                       " episodes have at least --segment ", std::to_string(H),
                       " rows; the pair sampler needs two"));
  // The pairs `ltt score --seed S --pairs N --segment H` synthesizes (scoring_settings.hpp).
  curation::PreferencePairOptions options;
  options.pairs = count;
  options.segment_length = H;
  options.seed = learning::safety_value_seeds(static_cast<std::uint64_t>(args.count("seed"))).pairs;
  const std::vector<std::int64_t> offsets = data::episode_offsets(dataset);
  const std::vector<double> costs = data::read_dsrl_costs(dataset_file);
  const curation::PreferencePairs drawn = curation::sample_preference_pairs(
      std::span<const double>(costs).first(static_cast<std::size_t>(offsets.back())), offsets,
      options);
  if (static_cast<std::int64_t>(drawn.pairs.size()) < count)
    throw BadInput(cat(dataset_file, ": the sampler found ", std::to_string(drawn.pairs.size()),
                       " of --pairs ", std::to_string(count), " pairs (",
                       std::to_string(drawn.ties_skipped), " tied segment costs skipped)"));
  // The coin that orders each pair's sides: its own stream, apart from the sampler's.
  constexpr std::uint64_t side_stream = 0x6c6162656c736964;  // "labelsid"
  const label::ViewOptions shown = view_options(args, dataset);
  const label::EpisodeView view = with_status(call, "reading the columns shown", [&] {
    return label::EpisodeView(dataset_file, dataset, shown);
  });

  create_session_directory(out);
  const nlohmann::json header{
      {"ltt_label", "compare"},
      {"inputs", nlohmann::json::array({with_status(call, "hashing the dataset", [&] {
         return label::input_record("dataset", dataset_file);
       })})},
      {"settings", {{"pairs", count}, {"segment", H}, {"seed", args.count("seed")}}}};
  label::Journal journal(out / "journal.jsonl", header, {"a", "b", "tie"});
  label::CompareSession session(dataset, label::shown_pairs(drawn, options.seed ^ side_stream), H,
                                view, out, journal);
  label::serve(session, server, std::cout, call.err);
  call.out << "ltt label compare: journal " << (out / "journal.jsonl").string() << "\n";
  return 0;
}

}  // namespace label_subcommand

int run_label(const Invocation& call) {
  using namespace label_subcommand;
  const std::string_view mode = call.args.empty() ? std::string_view{} : call.args.front();
  const Invocation rest{call.name, call.args.empty() ? call.args : call.args.subspan(1), call.out,
                        call.err};
  if (mode == "budget" || mode == "compare") {
    const auto args = parse_or_help(mode == "budget" ? budget_command() : compare_command(), rest);
    if (!args) return 0;
    return mode == "budget" ? run_budget(call, *args) : run_compare(call, *args);
  }
  if (mode == "--help" || mode == "-h") {
    call.out << "usage: ltt label budget|compare [flags]\n\n"
                "  budget   budget labels for the sequential walk, with its live certificate\n"
                "  compare  segment comparisons, written as a pairs file for `ltt score`\n\n"
                "`ltt label budget --help` and `ltt label compare --help` list their flags.\n";
    return 0;
  }
  throw BadInput(mode.empty() ? "missing budget or compare (ltt label budget|compare ...)"
                              : cat(in_quotes(mode), " is not budget or compare"));
}

}  // namespace ltt::cli
