// ltt draw: the trajectories to label by hand, exactly those `ltt certify --draw N --seed S`
// and `ltt curate --draw N --seed S` label from the costs (curation::draw_calibration on the
// pool's positions: uniform without replacement). A person labels them, and --labels takes
// the labels back; the certificate is then the one --draw would give. With --sequential it
// prints the label order of the sequential walk instead (<curation/label_order.hpp>), for
// the walk of `ltt certify --sequential` with the same --stop, --order, --seed, --grid and cap:
// the ids it asks for if its certified depth stays what it is before the first label (the
// default fixed walk: its sample's members of the grid's largest selection; the stratified
// order: the seeded permutation's members of S_1), or, for a walk in the uniform order that
// reads no scores, the seeded permutation itself (every prefix a uniform draw). Label from the
// top for as long as the walk asks (docs/sequential.md).

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <curation/calibration.hpp>
#include <curation/sequential_selection.hpp>
#include <data/atomic_output.hpp>
#include <data/dataset_files.hpp>
#include <data/dsrl.hpp>

#include <certification/dataset_file.hpp>
#include <certification/format.hpp>
#include <certification/output_paths.hpp>
#include <certification/pool_file.hpp>

#include "curation_flags.hpp"
#include "subcommand.hpp"

namespace ltt::cli {

namespace draw_subcommand {

constexpr Flag draw_flags[] = {
    {"pool", FlagKind::text, "CSV with an id column (or a .npy pool: id = row)"},
    {"dataset", FlagKind::paths,
     "instead of --pool: a DSRL dataset, id = episode index; or several (files, a directory of "
     "them, a glob), id = FILE:EPISODE"},
    {"n", FlagKind::count,
     "trajectories to draw (with --sequential: default every id of the order)"},
    {"seed", FlagKind::count, "seed of the draw (certify's and curate's --seed)", "0"},
    {"out", FlagKind::text, "write the ids as CSV with header id here instead of printing them"},
    {"json", FlagKind::boolean, "print one JSON object"},
    {"sequential", FlagKind::boolean,
     "the label order of the sequential walk (ltt certify --sequential): label from the top"},
    {"stop", FlagKind::text,
     "--sequential: the walk's stopping rule, as certify's (auto = depth: the fixed walk)", "auto"},
    {"cap", FlagKind::count, "--sequential: the walk's label cap (certify --sequential's --n)",
     "200"},
    label_order_flag,
    {"scores", FlagKind::text,
     "--sequential with --dataset: one score per episode (.npy, or CSV id,score), as certify's"},
    {"grid", FlagKind::text, "--sequential: score quantiles of the thresholds (certify's --grid)",
     paper_grid_text},
};

// The walk's first `count` ids if its depth stays (SequentialWalk::planned), the cap at most
// the pool's size.
std::vector<std::int64_t> walk_plan(const PoolFile& pool,
                                    curation::SequentialSelectionOptions options,
                                    std::uint64_t seed, std::int64_t count) {
  options.label_cap = std::min(options.label_cap, pool.size());
  return curation::SequentialWalk(pool.pool.score, options, seed).planned(count);
}

// The walk reads the pool's scores to order its labels: the stratified order, and the fixed
// walk (it asks only for the members of the grid's selections).
bool reads_scores(const curation::SequentialSelectionOptions& options) {
  return options.order == curation::LabelOrder::stratified || options.fixed_walk;
}

constexpr Command draw_command{
    "draw",
    "The ids of the n trajectories to label, drawn uniformly without replacement with --seed:\n"
    "the draw `ltt certify --draw n --seed S` and `ltt curate --draw n --seed S` make. Label\n"
    "them (unsafe 0 or 1) into a CSV id,unsafe and pass it as --labels. With --sequential:\n"
    "the label order of `ltt certify --sequential` with the same --stop, --order, --seed and\n"
    "cap (--n cuts it): the ids it asks for before anything is certified, from the pool's\n"
    "scores or --scores (the default fixed walk: its sample's members of the grid's largest\n"
    "selection); `ltt certify --sequential` names the next ones as the walk goes. A walk in\n"
    "the uniform order other than the fixed walk (--stop labels --order uniform) lists the\n"
    "seeded permutation of the whole pool, every prefix a uniform draw. Label from the top and\n"
    "stop when the walk says so.",
    draw_flags};

}  // namespace draw_subcommand

int run_draw(const Invocation& call) {
  using namespace draw_subcommand;
  const auto args = parse_or_help(draw_command, call);
  if (!args) return 0;
  if (args->has("pool") == args->has("dataset"))
    throw BadInput(args->has("pool") ? "--pool and --dataset exclude each other"
                                     : "missing --pool (or --dataset)");
  const bool sequential = args->flag("sequential");
  if (!sequential && !args->has("n")) throw BadInput("missing required flag --n");
  for (const std::string_view flag : {"order", "grid", "scores", "stop", "cap"})
    if (args->given(flag) && !sequential) throw BadInput(cat("--", flag, " needs --sequential"));
  curation::SequentialSelectionOptions walk;
  if (sequential) {
    read_stop_and_order(*args, walk);
    walk.quantiles = grid_quantiles(args->text("grid"));
    walk.label_cap = args->count("cap");
    if (walk.label_cap < 1) throw BadInput("--cap: 0 must be at least 1");
  }
  const curation::LabelOrder order = sequential ? walk.order : curation::LabelOrder::uniform;
  const bool scored = sequential && reads_scores(walk);
  if (args->has("scores") && !(scored && args->has("dataset")))
    throw BadInput(
        "--scores: applies to --dataset when the walk reads scores (the default fixed walk, the "
        "stratified order; a pool file holds its scores)");
  if (scored && args->has("dataset") && !args->has("scores"))
    throw BadInput(
        "--sequential: this walk orders its labels by the episodes' scores: --scores FILE (as "
        "certify's), or --stop labels --order uniform");
  const std::optional<std::int64_t> n_given = args->optional_count("n");
  if (n_given && *n_given < 1) throw BadInput("--n: 0 must be at least 1");
  const auto seed = static_cast<std::uint64_t>(args->count("seed"));
  std::optional<std::string> out;
  if (args->has("out")) {
    out = args->text("out");
  }
  std::optional<DatasetNames> names;
  if (args->has("dataset")) names = dataset_names(args->texts("dataset"));
  if (out) {
    NamedPaths inputs;
    if (args->has("pool")) inputs.emplace_back("pool", args->text("pool"));
    if (names)
      for (const std::filesystem::path& file : names->files) inputs.emplace_back("dataset", file);
    if (args->has("scores")) inputs.emplace_back("scores", args->text("scores"));
    check_output("out", *out, Destination::file, inputs, {});
  }

  PoolFile pool;
  if (args->has("pool")) {
    pool = read_pool(args->text("pool"), scored);
  } else {
    const data::DsrlPool dataset = data::load_dsrl_pool(names->files);
    pool = dataset_pool(dataset, names->shown);
    if (args->has("scores"))
      pool.pool.score = read_episode_scores(args->text("scores"), pool, dataset);
  }
  if (n_given && *n_given > pool.size())
    throw BadInput(cat("--n: ", std::to_string(*n_given), " must not exceed the pool size ",
                       std::to_string(pool.size()), " (", pool.name, ")"));
  const std::vector<std::int64_t> drawn =
      scored       ? walk_plan(pool, walk, seed, n_given.value_or(pool.size()))
      : sequential ? curation::draw_label_order(pool.size(), n_given.value_or(pool.size()), seed)
                   : curation::draw_calibration(pool.size(), *n_given, seed);
  const auto n = static_cast<std::int64_t>(drawn.size());

  // The ids exactly as the pool spells them (CSV fields, quoted if they must be).
  std::ostringstream lines;
  for (const std::int64_t p : drawn) lines << csv_field(pool.id_of(p)) << '\n';
  if (out)
    data::write_stream_atomically(*out, [&](std::ostream& o) { o << "id\n" << lines.str(); });
  if (args->flag("json")) {
    JsonWriter json(call.out);
    json.begin_object().field("pool", pool.name).field("pool_size", pool.size()).field("n", n);
    json.field("seed", static_cast<std::int64_t>(seed)).field("out", out);
    if (sequential)
      json.field("sequential", true).field("order", curation::label_order_name(order));
    // Numbers when every id of the pool is an integer, strings otherwise: one type per array.
    const bool numbers = pool.integer_ids();
    json.key("ids").begin_array();
    for (const std::int64_t p : drawn) {
      if (numbers)
        json.value(*PoolFile::integer_id(pool.id_of(p)));
      else
        json.value(pool.id_of(p));
    }
    json.end_array().end_object();
    call.out << '\n';
  } else if (out) {
    call.out << "wrote " << n << " ids of " << pool.size()
             << (sequential ? cat(" in the ", curation::label_order_name(order),
                                  " label order of seed ", std::to_string(seed))
                            : cat(" drawn with seed ", std::to_string(seed)))
             << " to " << *out << " (label each: id,unsafe)\n";
  } else {
    call.out << lines.str();
  }
  return 0;
}

}  // namespace ltt::cli
