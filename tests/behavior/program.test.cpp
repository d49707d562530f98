// `ltt behavior train` (reference_pipeline/cli/behavior.cpp): a short run's files (checkpoints
// every --save-every epochs and after the last, run.csv, run.json, training.svg, the summary and
// --json), the same bytes again with 2 stepping threads, and the refusals of bad input (exit 2,
// one line naming the flag, nothing written).

#include <behavior/checkpoint.hpp>
#include <data/dsrl.hpp>

#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "run_program.hpp"

namespace behavior_program_test {

using namespace ltt_cli_test;
namespace fs = std::filesystem;

const std::string small = "--task car-run --epochs 3 --steps-per-epoch 800 --hidden 16,16 ";

// run.csv without its last column (the seconds).
std::string without_seconds(const std::string& csv) {
  std::string out;
  std::size_t begin = 0;
  while (begin < csv.size()) {
    const std::size_t end = csv.find('\n', begin);
    const std::string line = csv.substr(begin, end - begin);
    out += line.substr(0, line.rfind(',')) + "\n";
    begin = end + 1;
  }
  return out;
}

TEST_CASE("ltt behavior train: checkpoints, run.csv, run.json, training.svg; same bytes again") {
  const fs::path out = scratch_dir() / "behavior-run";
  const Result r = run_ltt("behavior train " + small + "--save-every 2 --seed 5 --out " + q(out));
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(r.out.find("3 epochs, 2400 steps") != std::string::npos);
  for (const char* name :
       {"checkpoint-0002.ltt", "checkpoint-0003.ltt", "run.csv", "run.json", "training.svg"}) {
    CAPTURE(name);
    CHECK(fs::is_regular_file(out / name));
  }
  CHECK(!fs::exists(out / "checkpoint-0001.ltt"));
  const ltt::behavior::PolicyCheckpoint c =
      ltt::behavior::load_checkpoint(out / "checkpoint-0003.ltt");
  CHECK(c.task == "car-run");
  CHECK(c.epoch == 3);
  CHECK(c.environment_steps == 2400);
  CHECK(c.policy.observation_dim() == 6);
  CHECK(c.policy.action_dim() == 2);
  CHECK(c.policy.mean.shape.widths == std::vector<std::int64_t>{6, 16, 16, 2});
  // the task's schedule, 50 -> 2 over fractions 800/3000 -> 2800/3000, at epoch 3 of 3 (2/3):
  // 50 - 48 (2000 - 800) / 2000
  CHECK(c.cost_limit == doctest::Approx(21.2).epsilon(1e-14));
  const std::string csv = slurp(out / "run.csv");
  CHECK(lines(csv) == 4);
  CHECK(csv.starts_with("epoch,environment_steps,cost_limit,multiplier,"));
  CHECK(slurp(out / "training.svg").starts_with("<?xml"));
  const auto run = json_object(slurp(out / "run.json"));
  CHECK(run.at("task") == "\"car-run\"");
  CHECK(run.at("seed") == "5");
  CHECK(run.at("build").find("build: ") != std::string::npos);
  CHECK(run.at("command_line").find("\"behavior\", \"train\", \"--task\", \"car-run\"") !=
        std::string::npos);
  CHECK(run.at("settings").find("\"episodes_per_epoch\": 4") != std::string::npos);

  // 2 stepping threads, --json: the same checkpoint bytes and run.csv but the seconds.
  const fs::path again = scratch_dir() / "behavior-run-2";
  const Result r2 = run_ltt("behavior train " + small +
                            "--save-every 2 --seed 5 --threads 2 --json --out " + q(again));
  REQUIRE_MESSAGE(r2.code == 0, r2.err);
  const auto summary = json_object(r2.out);
  CHECK(summary.at("epochs") == "3");
  CHECK(summary.at("checkpoints") == "[\"checkpoint-0002.ltt\", \"checkpoint-0003.ltt\"]");
  CHECK(slurp(again / "checkpoint-0003.ltt") == slurp(out / "checkpoint-0003.ltt"));
  CHECK(slurp(again / "checkpoint-0002.ltt") == slurp(out / "checkpoint-0002.ltt"));
  CHECK(without_seconds(slurp(again / "run.csv")) == without_seconds(csv));
}

TEST_CASE("ltt behavior train --stop-after: the first epochs of a longer run, byte for byte") {
  const fs::path whole = scratch_dir() / "behavior-whole";
  const fs::path piece = scratch_dir() / "behavior-piece";
  const std::string six = "--task car-run --epochs 6 --steps-per-epoch 800 --hidden 16,16 ";
  REQUIRE(run_ltt("behavior train " + six + "--seed 3 --quiet --out " + q(whole)).code == 0);
  const Result r = run_ltt("behavior train " + six +
                           "--stop-after 4 --save-every 2 --seed 3 --quiet --out " + q(piece));
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(r.out.find("4 epochs") != std::string::npos);
  // the piece's rows are the whole run's first rows (the schedule is the 6-epoch run's)
  const std::string rows = without_seconds(slurp(piece / "run.csv"));
  CHECK(lines(rows) == 5);
  CHECK(without_seconds(slurp(whole / "run.csv")).starts_with(rows));
  CHECK(ltt::behavior::load_checkpoint(piece / "checkpoint-0004.ltt").epoch == 4);
  CHECK(!fs::exists(piece / "checkpoint-0006.ltt"));
}

// The committed run of a velocity task reproduces from the command its run.json records: its
// first two epochs again (about 20,000 steps of MuJoCo), the same rows of run.csv, every number
// written to the last bit (shortest round-trip form), so any change of a network's bytes shows.
TEST_CASE("the committed half-cheetah-velocity run: its first epochs again, the same bytes") {
  const fs::path committed =
      fs::path(LTT_SOURCE_DIR) / "reference_pipeline/behavior/runs/half-cheetah-velocity";
  REQUIRE(fs::is_regular_file(committed / "run.csv"));
  const fs::path piece = scratch_dir() / "behavior-committed-piece";
  const Result r = run_ltt("behavior train --task half-cheetah-velocity --seed 0 --threads 2 "
                           "--stop-after 2 --quiet --out " +
                           q(piece));
  REQUIRE_MESSAGE(r.code == 0, r.err);
  const std::string rows = without_seconds(slurp(piece / "run.csv"));
  CHECK(lines(rows) == 3);
  CHECK(without_seconds(slurp(committed / "run.csv")).starts_with(rows));
}

TEST_CASE("ltt behavior collect: a DSRL dataset from a run's checkpoints, seeded") {
  const fs::path run = scratch_dir() / "behavior-collect-run";
  REQUIRE(run_ltt("behavior train " + small + "--save-every 1 --seed 2 --quiet --out " + q(run))
              .code == 0);
  const fs::path out = scratch_dir() / (LTT_TEST_HDF5 ? "collected.hdf5" : "collected");
  const Result r = run_ltt("behavior collect --task car-run --run " + q(run) +
                           " --episodes 12 --seed 4 --threads 1 --json --out " + q(out));
  REQUIRE_MESSAGE(r.code == 0, r.err);
  const auto summary = json_object(r.out);
  CHECK(summary.at("checkpoints") == "3");
  CHECK(summary.at("episodes") == "12");
  const ltt::data::DsrlPool pool = ltt::data::load_dsrl_pool(out);
  CHECK(pool.size() == 12);
  CHECK(pool.dropped_tail == 0);
  CHECK(pool.observation_dim == 6);
  // the same bytes on 2 threads; another seed, other bytes
  const fs::path again = scratch_dir() / (LTT_TEST_HDF5 ? "collected-2.hdf5" : "collected-2");
  REQUIRE(run_ltt("behavior collect --task car-run --run " + q(run) +
                  " --episodes 12 --seed 4 --threads 2 --out " + q(again))
              .code == 0);
  CHECK(ltt::data::read_dsrl(again)["observations"].bytes ==
        ltt::data::read_dsrl(out)["observations"].bytes);
  const fs::path other = scratch_dir() / (LTT_TEST_HDF5 ? "collected-3.hdf5" : "collected-3");
  REQUIRE(run_ltt("behavior collect --task car-run --run " + q(run) +
                  " --episodes 12 --seed 5 --out " + q(other))
              .code == 0);
  CHECK(ltt::data::read_dsrl(other)["observations"].bytes !=
        ltt::data::read_dsrl(out)["observations"].bytes);
  // refusals: one line, exit 2, nothing written
  const fs::path none = scratch_dir() / "collected-none.hdf5";
  const fs::path empty = scratch_dir() / "behavior-collect-empty";
  fs::create_directories(empty);
  struct Case {
    std::string args, message;
  };
  const Case cases[] = {
      {"--task car-run --run " + q(empty) + " --out " + q(none), "holds no checkpoint-*.ltt"},
      {"--task hopper-velocity --run " + q(run) + " --out " + q(none),
       "is a checkpoint of car-run, not of --task hopper-velocity"},
      {"--task car-run --run " + q(run) + " --out " + q(run / "checkpoint-0001.ltt"),
       "inside the --run input"},
      {"--task car-run --run " + q(run) + " --episodes 0 --out " + q(none),
       "--episodes: 0 must be at least 1"},
      {"--task car-run --run " + q(run) + " --offered-per-kept 0.5 --out " + q(none),
       "--offered-per-kept: 0.5 must be >= 1"},
      {"--task car-run --run " + q(run) + " --return-floor 1e9 --out " + q(none),
       "the buffer accepted 0"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.args);
    const Result bad = run_ltt("behavior collect " + c.args);
    CHECK(bad.code == 2);
    CHECK(lines(bad.err) == 1);
    CHECK_MESSAGE(bad.err.find(c.message) != std::string::npos, bad.err);
    CHECK(!fs::exists(none));
  }
  CHECK(run_ltt("behavior collect --help").out.find("--offered-per-kept") != std::string::npos);
}

TEST_CASE("ltt behavior train: bad input exits 2 with one line, nothing written") {
  const fs::path dir = scratch_dir() / "behavior-refusals";
  fs::create_directories(dir);
  const fs::path file = dir / "a-file";
  std::ofstream(file) << "x";
  const fs::path earlier = dir / "earlier-run";
  fs::create_directories(earlier);
  std::ofstream(earlier / "run.json") << "{}";
  const fs::path out = dir / "new";
  struct Case {
    std::string args, message;
  };
  const Case cases[] = {
      {"--task cheetah --out " + q(out),
       "--task: 'cheetah' is not a task the trainer knows (car-run"},
      {"--task car-run --epochs 0 --out " + q(out), "--epochs: 0 must be at least 1"},
      {"--task car-run --epochs abc --out " + q(out), "--epochs: 'abc' is not a number"},
      {"--task car-run --epochs 2.5 --out " + q(out), "is not a whole number"},
      {"--task car-run --steps-per-epoch 150 --out " + q(out),
       "--steps-per-epoch: 150 must be a positive multiple of car-run's horizon 200"},
      {"--task car-run --hidden 64,x --out " + q(out), "--hidden: 'x' is not a width"},
      {"--task car-run --lr -1 --out " + q(out), "--lr: -1 must be > 0"},
      {"--task car-run --gamma 2 --out " + q(out), "--gamma: 2 must lie in [0, 1]"},
      {"--task car-run --cost-end nan --out " + q(out), "--cost-end: 'nan' is not a number"},
      {"--task car-run --hold-until 0.9 --reach-at 0.5 --out " + q(out),
       "--reach-at: 0.5 must not be below --hold-until 0.9"},
      {"--task car-run --threads 0 --out " + q(out), "--threads: 0 must be at least 1"},
      {"--task car-run --epochs 5 --stop-after 6 --out " + q(out),
       "--stop-after: 6 must lie in [1, 5] (the run's epochs)"},
      {"--task car-run --normalize-observations yes --out " + q(out),
       "--normalize-observations: 'yes' is not on or off"},
      {"--task car-run --out " + q(file), "exists and is not a directory"},
      {"--task car-run --out " + q(earlier), "already holds a training run (run.json)"},
      {"--out " + q(out), "missing required flag --task"},
      {"--task car-run", "missing required flag --out"},
      {"--task car-run --out " + q(out) + " --quiet --progress", "exclude each other"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.args);
    const Result r = run_ltt("behavior train " + c.args);
    CHECK(r.code == 2);
    CHECK(lines(r.err) == 1);
    CHECK_MESSAGE(r.err.find(c.message) != std::string::npos, r.err);
    CHECK(!fs::exists(out));
  }
  CHECK(slurp(earlier / "run.json") == "{}");
  const Result none = run_ltt("behavior");
  CHECK(none.code == 2);
  CHECK(none.err.find("missing train or collect") != std::string::npos);
  const Result other = run_ltt("behavior fit");
  CHECK(other.code == 2);
  CHECK(other.err.find("'fit' is not train or collect") != std::string::npos);
  const Result help = run_ltt("behavior train --help");
  CHECK(help.code == 0);
  CHECK(help.out.find("--save-every") != std::string::npos);
  CHECK(run_ltt("--help").out.find("behavior") != std::string::npos);
}

}  // namespace behavior_program_test
