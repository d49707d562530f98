// ltt behavior collect: a dataset in the DSRL layout, collected from a training run's
// checkpoints as DSRL collected its velocity datasets (reference_pipeline/behavior/collection.hpp,
// docs/behavior.md): the committed run of a velocity task, or the checkpoints `ltt behavior
// train` wrote into a directory.
//
//   ltt behavior collect --task half-cheetah-velocity --episodes 1000 --out cheetah.hdf5
//   ltt behavior collect --task car-run --run runs/car-run --episodes 500 --out car.hdf5

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <numeric>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <behavior/collection.hpp>
#include <behavior/committed_runs.hpp>
#include <behavior/training_tasks.hpp>
#include <certification/output_paths.hpp>
#include <data/dsrl.hpp>

#include "curation_flags.hpp"
#include "subcommand.hpp"

namespace ltt::cli {

namespace behavior_collect_subcommand {

using namespace certification;
namespace fs = std::filesystem;
namespace bhv = ltt::behavior;

const Command& collect_command() {
  static const std::string task_help = cat("task of the run: ", bhv::training_task_names());
  static const std::vector<Flag> flags = {
      {"task", FlagKind::text, task_help, {}, true},
      {"out", FlagKind::text,
       "the dataset written: FILE.hdf5 (or .h5), else a directory of .npy files", {}, true},
      {"run", FlagKind::text,
       "a directory of checkpoint-EEEE.ltt files from ltt behavior train (default: the task's "
       "committed run)"},
      {"episodes", FlagKind::count, "episodes the dataset keeps", "1000", false, 10000000,
       "each runs up to the task's horizon, 2.4 times over with the default"},
      {"seed", FlagKind::count, "seed of the episodes' starts, the action noise and the buffer",
       "0"},
      {"offered-per-kept", FlagKind::text,
       "episodes offered to the buffer per episode it keeps (DSRL's velocity runs: 2.4)", "2.4"},
      {"return-floor", FlagKind::text, "episodes below this return are dropped (default: the task's rmin)"},
      {"cost-ceiling", FlagKind::text, "episodes above this cost are dropped (default: the task's cmax)"},
      {"threads", FlagKind::count, "threads stepping the environments (the same bytes for any)",
       "2", false, 64, "one per core at most pays"},
      {"quiet", FlagKind::boolean, "no progress lines on stderr"},
      {"json", FlagKind::boolean, "print one JSON object instead of the summary"},
  };
  static const Command command{
      "behavior collect",
      "Collects a dataset in the DSRL layout from a training run's checkpoints, as DSRL\n"
      "collected its velocity datasets: each checkpoint, in training order, runs its share of\n"
      "episodes with its stochastic policy, FSRL's trajectory buffer keeps --episodes of them\n"
      "(dropping those below the return floor or above the cost ceiling, thinning the dense\n"
      "regions of the (return, cost) plane), and the kept episodes are written to --out. The\n"
      "same seed gives the same bytes, whatever --threads.",
      flags};
  return command;
}

// The checkpoints of `run` (checkpoint-*.ltt), of `task`, in training order.
std::vector<bhv::PolicyCheckpoint> run_checkpoints(const fs::path& run, std::string_view task) {
  std::error_code ec;
  if (!fs::is_directory(run, ec))
    throw BadInput(cat("--run: ", in_quotes(run.string()), " is not a directory"));
  std::vector<fs::path> files;
  for (const fs::directory_entry& e : fs::directory_iterator(run, ec)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with("checkpoint-") && name.ends_with(".ltt")) files.push_back(e.path());
  }
  if (ec) throw BadInput(cat("--run: cannot read ", in_quotes(run.string()), ": ", ec.message()));
  if (files.empty())
    throw BadInput(cat("--run: ", in_quotes(run.string()), " holds no checkpoint-*.ltt"));
  std::vector<bhv::PolicyCheckpoint> out;
  for (const fs::path& f : files) {
    bhv::PolicyCheckpoint c;
    try {
      c = bhv::load_checkpoint(f);
    } catch (const std::exception& e) {
      throw BadInput(cat("--run: ", e.what()));
    }
    if (c.task != task)
      throw BadInput(cat("--run: ", in_quotes(f.string()), " is a checkpoint of ", c.task,
                         ", not of --task ", task));
    out.push_back(std::move(c));
  }
  std::sort(out.begin(), out.end(), [](const bhv::PolicyCheckpoint& a, const bhv::PolicyCheckpoint& b) {
    return a.epoch < b.epoch;
  });
  return out;
}

double real_flag(const Arguments& args, std::string_view flag) {
  return finite_real(flag, args.text(flag));
}

int run_collect(const Invocation& call, const Arguments& args) {
  const std::string& name = args.text("task");
  const bhv::TrainingTask* task = nullptr;
  try {
    task = &bhv::training_task(name);
  } catch (const std::invalid_argument&) {
    throw BadInput(cat("--task: ", in_quotes(name), " is not a task the trainer knows (",
                       bhv::training_task_names(), ")"));
  }
  bhv::CollectionOptions options = bhv::dsrl_collection(task->name);
  options.offered_per_kept = real_flag(args, "offered-per-kept");
  if (!(options.offered_per_kept >= 1))
    throw BadInput(cat("--offered-per-kept: ", args.text("offered-per-kept"), " must be >= 1"));
  if (args.has("return-floor")) options.return_floor = real_flag(args, "return-floor");
  if (args.has("cost-ceiling")) {
    options.cost_ceiling = real_flag(args, "cost-ceiling");
    if (!(options.cost_ceiling > 0))
      throw BadInput(cat("--cost-ceiling: ", args.text("cost-ceiling"), " must be > 0"));
  }
  options.threads = static_cast<int>(args.count("threads"));
  if (options.threads < 1) throw BadInput("--threads: 0 must be at least 1");
  const std::int64_t episodes = args.count("episodes");
  if (episodes < 1) throw BadInput("--episodes: 0 must be at least 1");
  const auto seed = static_cast<std::uint64_t>(args.count("seed"));

  std::vector<bhv::PolicyCheckpoint> from_run;
  std::span<const bhv::PolicyCheckpoint> checkpoints;
  NamedPaths inputs;
  std::string source;
  if (args.has("run")) {
    const fs::path run = args.text("run");
    from_run = run_checkpoints(run, task->name);
    checkpoints = from_run;
    inputs.emplace_back("run", run);
    source = run.string();
  } else {
    checkpoints = bhv::committed_run(task->name);
    if (checkpoints.empty())
      throw BadInput(cat("--task: ", task->name,
                         " has no committed run; give --run DIR (ltt behavior train's output)"));
    source = cat("the committed run of ", task->name);
  }
  const fs::path out = args.text("out");
  const Destination kind = data::store_for(out) == data::DsrlStore::hdf5 ? Destination::file
                                                                          : Destination::directory;
  check_output("out", out, kind, inputs, {});

  if (!args.flag("quiet") && ::isatty(STDERR_FILENO))
    options.progress = [&](std::int64_t done, std::int64_t total) {
      std::fprintf(stderr, "\rltt behavior collect: %s, checkpoint %lld of %lld\033[K",
                   std::string(task->name).c_str(), static_cast<long long>(done),
                   static_cast<long long>(total));
      if (done == total) std::fputc('\n', stderr);
    };
  tasks::TaskPool pool;
  try {
    pool = bhv::collect_dataset(task->make, task->spec, checkpoints, episodes, seed, options);
  } catch (const std::runtime_error& e) {
    throw BadInput(cat("--episodes: ", e.what()));
  }
  data::write_dsrl(out, pool.dataset);

  std::int64_t transitions = 0, unsafe = 0;
  double returns = 0, costs = 0;
  for (const tasks::EpisodeRecord& e : pool.episodes) {
    transitions += e.length;
    unsafe += e.episodic_cost > task->budget;
    returns += e.episodic_return;
    costs += e.episodic_cost;
  }
  const double n = static_cast<double>(pool.episodes.size());
  if (args.flag("json")) {
    JsonWriter json(call.out);
    json.begin_object()
        .field("task", task->name)
        .field("out", out.string())
        .field("source", source)
        .field("checkpoints", static_cast<std::int64_t>(checkpoints.size()))
        .field("episodes", static_cast<std::int64_t>(pool.episodes.size()))
        .field("transitions", transitions)
        .field("budget", task->budget)
        .field("over_budget", unsafe)
        .field("mean_return", returns / n)
        .field("mean_cost", costs / n)
        .field("seed", static_cast<std::int64_t>(seed))
        .end_object();
    call.out << "\n";
  } else {
    call.out << "ltt behavior collect: " << pool.episodes.size() << " episodes (" << transitions
             << " transitions) of " << task->name << " from " << checkpoints.size()
             << " checkpoints of " << source << "\n"
             << unsafe << " over the budget " << brief(task->budget) << "; mean return "
             << brief(returns / n) << ", mean cost " << brief(costs / n) << "\n"
             << "wrote " << out.string() << "\n";
  }
  return 0;
}

}  // namespace behavior_collect_subcommand

int run_behavior_collect(const Invocation& call) {
  using namespace behavior_collect_subcommand;
  const auto args = parse_or_help(collect_command(), call);
  if (!args) return 0;
  return run_collect(call, *args);
}

}  // namespace ltt::cli
