// ltt draw: the trajectories to label by hand, exactly those `ltt certify --draw N --seed S`
// and `ltt curate --draw N --seed S` label from the costs (curation::draw_calibration on the
// pool's positions: uniform without replacement). A person labels them, and --labels takes
// the labels back; the certificate is then the one --draw would give. With --sequential it
// prints the label order of the sequential walk instead (curation::draw_label_order: a
// uniform permutation of the pool, every prefix a uniform draw), to be labeled from the top
// for as long as the walk asks (docs/sequential.md).

#include <charconv>
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <curation/calibration.hpp>
#include <curation/sequential_selection.hpp>
#include <data/atomic_output.hpp>
#include <data/dsrl.hpp>

#include "dataset_file.hpp"
#include "format.hpp"
#include "output_paths.hpp"
#include "pool_file.hpp"
#include "subcommand.hpp"

namespace ltt::cli {

namespace {

constexpr Flag draw_flags[] = {
    {"pool", FlagKind::text, "CSV with an id column (or a .npy pool: id = row)"},
    {"dataset", FlagKind::text, "instead of --pool: a DSRL dataset, id = episode index"},
    {"n", FlagKind::count, "trajectories to draw (with --sequential: default the whole pool)"},
    {"seed", FlagKind::count, "seed of the draw (certify's and curate's --seed)", "0"},
    {"out", FlagKind::text, "write the ids as CSV with header id here instead of printing them"},
    {"json", FlagKind::boolean, "print one JSON object"},
    {"sequential", FlagKind::boolean,
     "the label order of the sequential walk: a seeded uniform permutation, label from the top"},
};

constexpr Command draw_command{
    "draw",
    "The ids of the n trajectories to label, drawn uniformly without replacement with --seed:\n"
    "the draw `ltt certify --draw n --seed S` and `ltt curate --draw n --seed S` make. Label\n"
    "them (unsafe 0 or 1) into a CSV id,unsafe and pass it as --labels. With --sequential:\n"
    "the sequential walk's label order for --seed, the whole pool unless --n cuts it; every\n"
    "prefix is a uniform draw, so label from the top and stop when the walk says so.",
    draw_flags};

}  // namespace

int run_draw(const Invocation& call) {
  const auto args = parse_or_help(draw_command, call);
  if (!args) return 0;
  if (args->has("pool") == args->has("dataset"))
    throw BadInput(args->has("pool") ? "--pool and --dataset exclude each other"
                                     : "missing --pool (or --dataset)");
  const bool sequential = args->flag("sequential");
  if (!sequential && !args->has("n")) throw BadInput("missing required flag --n");
  const std::optional<std::int64_t> n_given = args->optional_count("n");
  if (n_given && *n_given < 1) throw BadInput("--n: 0 must be at least 1");
  const auto seed = static_cast<std::uint64_t>(args->count("seed"));
  std::optional<std::string> out;
  if (args->has("out")) {
    out = args->text("out");
    const std::string_view input = args->has("pool") ? "pool" : "dataset";
    check_output("out", *out, Destination::file, {{input, args->text(input)}}, {});
  }

  PoolFile pool;
  if (args->has("pool")) {
    pool = read_pool(args->text("pool"), false);
  } else {
    pool = dataset_pool(data::load_dsrl_pool(args->text("dataset")), args->text("dataset"));
  }
  const std::int64_t n = n_given.value_or(pool.size());
  if (n > pool.size())
    throw BadInput(cat("--n: ", std::to_string(n), " must not exceed the pool size ",
                       std::to_string(pool.size()), " (", pool.name, ")"));
  const std::vector<std::int64_t> drawn = sequential
                                              ? curation::draw_label_order(pool.size(), n, seed)
                                              : curation::draw_calibration(pool.size(), n, seed);

  // The ids exactly as the pool spells them (CSV fields, quoted if they must be).
  std::ostringstream lines;
  for (const std::int64_t p : drawn) lines << csv_field(pool.id_of(p)) << '\n';
  if (out)
    data::write_stream_atomically(*out, [&](std::ostream& o) { o << "id\n" << lines.str(); });
  if (args->flag("json")) {
    JsonWriter json(call.out);
    json.begin_object().field("pool", pool.name).field("pool_size", pool.size()).field("n", n);
    json.field("seed", static_cast<std::int64_t>(seed)).field("out", out);
    if (sequential) json.field("sequential", true);
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
    call.out << "wrote " << n << " ids of " << pool.size() << " drawn with seed " << seed << " to "
             << *out << " (label each: id,unsafe)\n";
  } else {
    call.out << lines.str();
  }
  return 0;
}

}  // namespace ltt::cli
