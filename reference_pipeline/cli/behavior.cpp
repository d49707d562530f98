// ltt behavior train: a behavior policy trained by constrained RL (PPO-Lagrangian,
// reference_pipeline/behavior/, docs/behavior.md) on a built-in task, its checkpoints, run log
// and figure written into --out DIR as the run goes.

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <behavior/checkpoint.hpp>
#include <behavior/ppo_lagrangian.hpp>
#include <behavior/run_log.hpp>
#include <behavior/training_tasks.hpp>
#include <certification/output_directory.hpp>
#include <data/atomic_output.hpp>
#include <learning/progress.hpp>

#include "curation_flags.hpp"
#include "subcommand.hpp"
#include "training_figure.hpp"
#include "version.hpp"

namespace ltt::cli {

namespace behavior_subcommand {

namespace fs = std::filesystem;
namespace bhv = ltt::behavior;

const Command& train_command() {
  static const std::string task_help = cat("task to train on: ", bhv::training_task_names());
  static const std::vector<Flag> flags = {
      {"task", FlagKind::text, task_help, {}, true},
      {"out",
       FlagKind::text,
       "directory of the run (new, or without an earlier run): checkpoints, run.csv, run.json, "
       "training.svg",
       {},
       true},
      {"seed", FlagKind::count, "seed of the run (networks, episodes, draws, shuffles)", "0"},
      {"epochs",
       FlagKind::count,
       "epochs of the run (default: the task's)",
       {},
       false,
       10000000,
       "one row of run.csv each"},
      {"steps-per-epoch",
       FlagKind::count,
       "environment steps per epoch, a multiple of the task's horizon: that many steps of whole "
       "episodes (default: the task's)",
       {},
       false,
       100000000,
       "an epoch's rows are kept in memory"},
      {"save-every", FlagKind::count, "a checkpoint every this many epochs, and after the last",
       "50"},
      {"stop-after",
       FlagKind::count,
       "run only the first this many epochs of the --epochs schedule: the same bytes as that "
       "longer run's first epochs (a piece of it, to check a run against its files)",
       {},
       false,
       10000000,
       "one row of run.csv each"},
      {"threads", FlagKind::count, "threads stepping the environments (the same bytes for any)",
       "1", false, 64, "one per core at most pays"},
      {"hidden", FlagKind::text,
       "hidden widths of the actor and both critics, e.g. 128,128 (default: the task's)"},
      {"lr", FlagKind::text, "Adam's learning rate", "1e-3"},
      {"gamma", FlagKind::unit, "discount (default: the task's)"},
      {"cost-start", FlagKind::text, "cost limit of the first epochs (default: the task's)"},
      {"cost-end", FlagKind::text, "cost limit at the end (default: the task's)"},
      {"hold-until", FlagKind::unit,
       "fraction of the run until which the limit stays at --cost-start (default: the task's)"},
      {"reach-at", FlagKind::unit,
       "fraction of the run at which it reaches --cost-end, linearly (default: the task's)"},
      {"normalize-observations", FlagKind::text,
       "on or off: z-score the networks' inputs by running statistics, folded into each "
       "checkpoint (default: the task's)"},
      {"quiet", FlagKind::boolean, "no progress lines on stderr"},
      {"progress", FlagKind::boolean, "progress lines on stderr even when it is not a terminal"},
      {"json", FlagKind::boolean, "print one JSON object instead of the summary"},
  };
  static const Command command{
      "behavior train",
      "Trains a behavior policy on a built-in task by PPO-Lagrangian (FSRL's, with DSRL's\n"
      "schedule of the cost limit: docs/behavior.md), as DSRL's behavior agents were trained.\n"
      "Writes into --out DIR, as the run goes: checkpoint-EEEE.ltt every --save-every epochs and\n"
      "after the last (the Gaussian policy, raw observations in), run.csv (one row per epoch:\n"
      "steps, cost limit, multiplier, return, cost, KL, losses, seconds) and training.svg at\n"
      "each checkpoint, and run.json (every setting, the command line, the build) at the start.\n"
      "The same seed gives the same bytes (run.csv but its seconds) whatever --threads.",
      flags};
  return command;
}

struct TrainRequest {
  const bhv::TrainingTask* task = nullptr;
  bhv::PpoLagrangianOptions options;
  fs::path out;
  std::int64_t save_every = 50;
  std::int64_t last_epoch = 0;  // the run stops after this epoch (--stop-after; else --epochs)
  learning::Progress progress = learning::Progress::automatic;
  bool json = false;
  std::vector<std::string> command_line;
};

std::vector<std::int64_t> hidden_widths(std::string_view text) {
  std::vector<std::int64_t> widths;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    const std::size_t end = std::min(text.find(',', begin), text.size());
    const std::string_view item = text.substr(begin, end - begin);
    const std::optional<std::int64_t> w = data::parse_integer(item);
    if (!w || *w < 1 || *w > 4096)
      throw BadInput(cat("--hidden: ", in_quotes(item),
                         " is not a width in [1, 4096] (give "
                         "widths like 128,128)"));
    widths.push_back(*w);
    begin = end + 1;
  }
  return widths;
}

double non_negative(std::string_view flag, const std::string& text) {
  const double x = finite_real(flag, text);
  if (x < 0) throw BadInput(cat("--", flag, ": ", text, " must be >= 0"));
  return x;
}

TrainRequest read_train_flags(const Arguments& args, const Invocation& call) {
  TrainRequest r;
  const std::string& name = args.text("task");
  try {
    r.task = &bhv::training_task(name);
  } catch (const std::invalid_argument&) {
    throw BadInput(cat("--task: ", in_quotes(name), " is not a task the trainer knows (",
                       bhv::training_task_names(), ")"));
  }
  bhv::PpoLagrangianOptions& o = r.options = bhv::task_options(*r.task);
  o.seed = static_cast<std::uint64_t>(args.count("seed"));
  if (const auto epochs = args.optional_count("epochs")) {
    if (*epochs < 1) throw BadInput("--epochs: 0 must be at least 1");
    o.epochs = *epochs;
  }
  const std::int64_t horizon = r.task->spec.horizon;
  if (const auto steps = args.optional_count("steps-per-epoch")) {
    if (*steps < horizon || *steps % horizon != 0)
      throw BadInput(cat("--steps-per-epoch: ", std::to_string(*steps),
                         " must be a positive multiple of ", r.task->name, "'s horizon ",
                         std::to_string(horizon), " (an epoch runs whole episodes)"));
    o.episodes_per_epoch = *steps / horizon;
  }
  r.last_epoch = o.epochs;
  if (const auto stop = args.optional_count("stop-after")) {
    if (*stop < 1 || *stop > o.epochs)
      throw BadInput(cat("--stop-after: ", std::to_string(*stop), " must lie in [1, ",
                         std::to_string(o.epochs), "] (the run's epochs)"));
    r.last_epoch = *stop;
  }
  r.save_every = args.count("save-every");
  if (r.save_every < 1) throw BadInput("--save-every: 0 must be at least 1");
  o.threads = static_cast<int>(args.count("threads"));
  if (o.threads < 1) throw BadInput("--threads: 0 must be at least 1");
  if (args.has("hidden")) o.hidden = hidden_widths(args.text("hidden"));
  o.learning_rate = finite_real("lr", args.text("lr"));
  if (!(o.learning_rate > 0)) throw BadInput(cat("--lr: ", args.text("lr"), " must be > 0"));
  if (args.has("gamma")) o.gamma = args.real("gamma");
  if (args.has("cost-start"))
    o.cost_limit.start = non_negative("cost-start", args.text("cost-start"));
  if (args.has("cost-end")) o.cost_limit.end = non_negative("cost-end", args.text("cost-end"));
  if (args.has("hold-until")) o.cost_limit.hold_until = args.real("hold-until");
  if (args.has("reach-at")) o.cost_limit.reach_at = args.real("reach-at");
  if (o.cost_limit.reach_at < o.cost_limit.hold_until)
    throw BadInput(cat("--reach-at: ", shortest(o.cost_limit.reach_at),
                       " must not be below --hold-until ", shortest(o.cost_limit.hold_until)));
  if (args.has("normalize-observations")) {
    const std::string& on = args.text("normalize-observations");
    if (on != "on" && on != "off")
      throw BadInput(cat("--normalize-observations: ", in_quotes(on), " is not on or off"));
    o.observation_normalization = on == "on";
  }
  if (args.flag("quiet") && args.flag("progress"))
    throw BadInput("--quiet and --progress exclude each other");
  r.progress = args.flag("quiet")      ? learning::Progress::quiet
               : args.flag("progress") ? learning::Progress::always
                                       : learning::Progress::automatic;
  r.json = args.flag("json");
  r.out = args.text("out");
  r.command_line = {"ltt", std::string(call.name)};
  for (const std::string_view a : call.args) r.command_line.emplace_back(a);
  bhv::check_options(o);
  return r;
}

// The run's files are named in --out DIR; an earlier run there (its run.json, run.csv or a
// checkpoint) is refused rather than mixed with this one's.
void check_run_directory(const fs::path& out) {
  check_output_directory(out, {{"run.json"}, {"run.csv"}, {"training.svg"}}, {});
  std::error_code ec;
  if (!fs::is_directory(out, ec)) return;
  for (const fs::directory_entry& e : fs::directory_iterator(out, ec)) {
    const std::string name = e.path().filename().string();
    if (name == "run.json" || name == "run.csv" ||
        (name.starts_with("checkpoint-") && name.ends_with(".ltt")))
      throw BadInput(cat("--out: ", in_quotes(out.string()), " already holds a training run (",
                         name, "); give a new directory"));
  }
  if (ec) throw BadInput(cat("--out: cannot list ", in_quotes(out.string()), ": ", ec.message()));
}

std::string checkpoint_name(std::int64_t epoch) {
  char name[40];
  std::snprintf(name, sizeof name, "checkpoint-%04lld.ltt", static_cast<long long>(epoch));
  return name;
}

std::string run_json_text(const TrainRequest& r) {
  const bhv::PpoLagrangianOptions& o = r.options;
  std::ostringstream text;
  JsonWriter json(text);
  json.begin_object();
  json.key("command_line").begin_array();
  for (const std::string& a : r.command_line) json.value(a);
  json.end_array();
  json.field("build", version_text());
  json.field("task", r.task->name).field("seed", o.seed);
  json.key("task_spec").begin_object();
  json.field("observation_dim", r.task->spec.observation_dim)
      .field("action_dim", r.task->spec.action_dim)
      .field("horizon", r.task->spec.horizon)
      .field("budget", r.task->budget)
      .field("defaults_from", r.task->defaults_from);
  json.end_object();
  json.key("settings").begin_object();
  json.field("epochs", o.epochs)
      .field("episodes_per_epoch", o.episodes_per_epoch)
      .field("steps_per_epoch", o.episodes_per_epoch * r.task->spec.horizon)
      .field("save_every", r.save_every)
      .field("stop_after", r.last_epoch)
      .field("threads", o.threads);
  json.key("hidden").begin_array();
  for (const std::int64_t w : o.hidden) json.value(w);
  json.end_array();
  json.field("initial_log_std", o.initial_log_std)
      .field("learning_rate", o.learning_rate)
      .field("batch", o.batch)
      .field("repeat", o.repeat)
      .field("gamma", o.gamma)
      .field("gae_lambda", o.gae_lambda)
      .field("clip", o.clip)
      .field("target_kl", o.target_kl)
      .field("value_coefficient", o.value_coefficient)
      .field("max_grad_norm", o.max_grad_norm)
      .field("value_normalization", o.value_normalization)
      .field("observation_normalization", o.observation_normalization);
  json.key("pid").begin_object();
  json.field("proportional", o.pid.proportional)
      .field("integral", o.pid.integral)
      .field("derivative", o.pid.derivative);
  json.end_object();
  json.key("cost_limit").begin_object();
  json.field("start", o.cost_limit.start)
      .field("end", o.cost_limit.end)
      .field("hold_until", o.cost_limit.hold_until)
      .field("reach_at", o.cost_limit.reach_at);
  json.end_object();
  json.end_object();
  json.end_object();
  text << "\n";
  return std::move(text).str();
}

void write_text(const fs::path& path, const std::string& text) {
  data::write_stream_atomically(path, [&](std::ostream& out) { out << text; });
}

// One progress line per epoch on stderr (learning/progress.hpp's modes): rewritten in place on
// a terminal (at most ten times a second), one line each otherwise.
class TrainingProgress {
 public:
  TrainingProgress(learning::Progress mode, std::string task, std::int64_t epochs)
      : task_(std::move(task)), epochs_(epochs) {
    const bool terminal = ::isatty(STDERR_FILENO) == 1;
    enabled_ =
        mode == learning::Progress::always || (mode == learning::Progress::automatic && terminal);
    in_place_ = enabled_ && terminal;
  }
  ~TrainingProgress() {
    if (open_) std::fputc('\n', stderr);
  }
  TrainingProgress(const TrainingProgress&) = delete;
  TrainingProgress& operator=(const TrainingProgress&) = delete;

  void epoch_done(const bhv::EpochRecord& r, double seconds_so_far) {
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    const bool last = r.epoch == epochs_;
    if (in_place_ && !last && now - shown_ < std::chrono::milliseconds(100)) return;
    shown_ = now;
    const double eta =
        seconds_so_far / static_cast<double>(r.epoch) * static_cast<double>(epochs_ - r.epoch);
    const std::string line =
        cat("ltt behavior train: ", task_, " epoch ", std::to_string(r.epoch), "/",
            std::to_string(epochs_), " return ", brief(r.mean_return), " cost ", brief(r.mean_cost),
            " (limit ", brief(r.cost_limit), ") lambda ", brief(r.multiplier), " ",
            brief(static_cast<double>(r.environment_steps) / seconds_so_far), " steps/s ETA ",
            std::to_string(static_cast<long long>(eta + 0.5)), " s");
    if (in_place_) {
      std::fprintf(stderr, "\r%s\033[K", line.c_str());
      open_ = !last;
      if (last) std::fputc('\n', stderr);
    } else {
      std::fprintf(stderr, "%s\n", line.c_str());
    }
    std::fflush(stderr);
  }

 private:
  std::string task_;
  std::int64_t epochs_;
  bool enabled_ = false, in_place_ = false, open_ = false;
  std::chrono::steady_clock::time_point shown_{};
};

int run_train(const Invocation& call, const Arguments& args) {
  const TrainRequest r = read_train_flags(args, call);
  check_run_directory(r.out);
  std::error_code ec;
  fs::create_directories(r.out, ec);
  if (ec)
    throw BadInput(cat("--out: cannot create ", in_quotes(r.out.string()), ": ", ec.message()));
  write_text(r.out / "run.json", run_json_text(r));

  bhv::PpoLagrangian trainer(r.task->make, r.task->spec, r.options);
  TrainingProgress progress(r.progress, std::string(r.task->name), r.last_epoch);
  std::vector<bhv::EpochRecord> records;
  std::string csv = bhv::run_csv_header();
  std::vector<std::string> checkpoints;
  const auto start = std::chrono::steady_clock::now();
  for (std::int64_t e = 1; e <= r.last_epoch; ++e) {
    records.push_back(trainer.run_epoch());
    csv += bhv::run_csv_row(records.back());
    progress.epoch_done(
        records.back(),
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (e % r.save_every != 0 && e != r.last_epoch) continue;
    checkpoints.push_back(checkpoint_name(e));
    bhv::save_checkpoint(r.out / checkpoints.back(),
                         {std::string(r.task->name), e, trainer.environment_steps(),
                          trainer.cost_limit(), trainer.multiplier(), trainer.policy()});
    write_text(r.out / "run.csv", csv);
    write_text(r.out / "training.svg", training_svg(r.task->name, r.task->budget, records));
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const bhv::EpochRecord& last = records.back();
  if (r.json) {
    JsonWriter json(call.out);
    json.begin_object();
    json.field("task", r.task->name)
        .field("out", r.out.string())
        .field("epochs", last.epoch)
        .field("environment_steps", last.environment_steps)
        .field("seconds", seconds)
        .field("steps_per_second", static_cast<double>(last.environment_steps) / seconds)
        .field("mean_return", last.mean_return)
        .field("mean_cost", last.mean_cost)
        .field("cost_limit", last.cost_limit)
        .field("multiplier", last.multiplier);
    json.key("checkpoints").begin_array();
    for (const std::string& c : checkpoints) json.value(c);
    json.end_array();
    json.end_object();
    call.out << "\n";
  } else {
    call.out << "ltt behavior train: " << r.task->name << ", " << last.epoch << " epochs, "
             << last.environment_steps << " steps in " << brief(seconds) << " s ("
             << brief(static_cast<double>(last.environment_steps) / seconds) << " steps/s)\n"
             << "last epoch: return " << brief(last.mean_return) << ", cost "
             << brief(last.mean_cost) << " (limit " << brief(last.cost_limit) << "), multiplier "
             << brief(last.multiplier) << "\n"
             << "wrote " << (r.out / checkpoints.back()).string() << " (" << checkpoints.size()
             << (checkpoints.size() == 1 ? " checkpoint" : " checkpoints")
             << "), run.csv, run.json, training.svg\n";
  }
  return 0;
}

}  // namespace behavior_subcommand

int run_behavior_collect(const Invocation& call);  // behavior_collect.cpp

int run_behavior(const Invocation& call) {
  using namespace behavior_subcommand;
  const std::string_view mode = call.args.empty() ? std::string_view{} : call.args.front();
  const Invocation rest{call.name, call.args.empty() ? call.args : call.args.subspan(1), call.out,
                        call.err};
  if (mode == "train") {
    const auto args = parse_or_help(train_command(), rest);
    if (!args) return 0;
    return run_train(call, *args);
  }
  if (mode == "collect") return run_behavior_collect(rest);
  if (mode == "--help" || mode == "-h") {
    call.out << "usage: ltt behavior train|collect [flags]\n\n"
                "  train     a behavior policy by PPO-Lagrangian on a built-in task: checkpoints,\n"
                "            run log and figure\n"
                "  collect   a dataset in the DSRL layout from a run's checkpoints, as DSRL\n"
                "            collected its velocity datasets\n\n"
                "`ltt behavior train --help` and `ltt behavior collect --help` list their flags.\n";
    return 0;
  }
  throw BadInput(mode.empty() ? "missing train or collect (ltt behavior train ...)"
                              : cat(in_quotes(mode), " is not train or collect"));
}

}  // namespace ltt::cli
