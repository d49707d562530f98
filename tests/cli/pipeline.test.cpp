// ltt pipeline end to end on small settings: exit code, the report folder checked by an
// independent reader (check_pipeline_report.py: json, scipy's hypergeometric cdf, xml.etree),
// and bad input that exits 2 with one line and writes nothing.

#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "run_program.hpp"

using namespace ltt_cli_test;

namespace {

std::string checker() {
  return std::string(LTT_PYTHON3) + " " + LTT_CLI_TEST_SCRIPTS + "/check_pipeline_report.py ";
}

}  // namespace

TEST_CASE("ltt pipeline --preset tiny on every task: a report an independent reader accepts") {
  for (const std::string task : {"point-goal", "car-run", "point-goal-reckless"}) {
    CAPTURE(task);
    const auto out = scratch_dir() / ("pipeline-" + task);
    const Result r = run_ltt("pipeline --task " + task + " --preset tiny --seeds 2 --out " +
                             out.string());
    REQUIRE_MESSAGE(r.code == 0, r.err);
    CHECK(r.out.find("| BC-All |") != std::string::npos);
    CHECK(r.err.find("value ensemble") != std::string::npos);  // progress on stderr
    const Result check = shell(checker() + out.string() + " " + task);
    CHECK_MESSAGE(check.code == 0, check.out << check.err);
    // --json: exactly one object, the file's bytes
    const Result j = run_ltt("pipeline --task " + task + " --preset tiny --json --out " +
                             out.string());
    REQUIRE(j.code == 0);
    CHECK(json_object(j.out).count("methods") == 1);
    CHECK(j.out == slurp(out / "report.json"));
  }
}

TEST_CASE("ltt pipeline --raw-observations: the report says raw") {
  const auto out = scratch_dir() / "pipeline-raw";
  const Result r = run_ltt("pipeline --task point-goal --preset tiny --raw-observations --out " +
                           out.string());
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(slurp(out / "report.json").find("\"observations\":\"raw\"") != std::string::npos);
  CHECK(slurp(out / "report.md").find("raw (--raw-observations") != std::string::npos);
}

TEST_CASE("ltt pipeline: the seed artifacts hand the selection on to ltt certify") {
  const auto out = scratch_dir() / "pipeline-artifacts";
  const Result r =
      run_ltt("pipeline --task point-goal --preset tiny --keep-pool --out " + out.string());
  REQUIRE_MESSAGE(r.code == 0, r.err);
  const Result check = shell(checker() + out.string() + " point-goal");
  CHECK_MESSAGE(check.code == 0, check.out << check.err);
  // the same pool, scores and labels give the same certificate and selection
  const auto seed = out / "seed-1";
  const auto selection = scratch_dir() / "pipeline-artifacts-selection.npy";
  std::filesystem::path pool;  // HDF5, or a directory of .npy without HDF5
  for (const auto& entry : std::filesystem::directory_iterator(out))
    if (entry.path().filename().string().starts_with("point-goal-pool-1")) pool = entry.path();
  REQUIRE_FALSE(pool.empty());
  const Result c = run_ltt("certify --dataset " + pool.string() +
                           " --scores " + (seed / "scores.npy").string() + " --labels " +
                           (seed / "labels.csv").string() + " --selection " +
                           selection.string() + " --json");
  REQUIRE_MESSAGE(c.code == 0, c.err);
  CHECK(slurp(selection) == slurp(seed / "selection.npy"));
  const Result same = shell(std::string(LTT_PYTHON3) + " -c \"import json,sys; "
                            "a=json.load(open(sys.argv[1]))['seeds'][0]['certificate']; "
                            "b=json.load(sys.stdin); "
                            "sys.exit(any(a[k]!=b[k] for k in a))\" " +
                            (out / "report.json").string() + " <<'EOF'\n" + c.out + "EOF\n");
  CHECK_MESSAGE(same.code == 0, same.out << same.err);
}

TEST_CASE("ltt pipeline --task corridor: the corridor study's report") {
  const auto out = scratch_dir() / "pipeline-corridor";
  const Result r =
      run_ltt("pipeline --task corridor --episodes 200 --eval-episodes 500 --out " + out.string());
  REQUIRE_MESSAGE(r.code == 0, r.err);
  const Result check = shell(checker() + out.string() + " corridor");
  CHECK_MESSAGE(check.code == 0, check.out << check.err);
}

TEST_CASE("ltt pipeline: bad input exits 2 with one line and writes nothing") {
  const auto out = scratch_dir() / "pipeline-bad";
  std::filesystem::remove_all(out);
  const auto bad = [&](const std::string& args, const std::string& named) {
    CAPTURE(args);
    const Result r = run_ltt("pipeline " + args);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK(lines(r.err) == 1);
    CHECK_MESSAGE(r.err.find(named) != std::string::npos, r.err);
    CHECK_FALSE(std::filesystem::exists(out));  // not even the directory
  };
  bad("--task point-goal", "--out");
  bad("--task pointgoal --out " + out.string(), "'task'");
  bad("--task point-goal --preset fast --out " + out.string(), "'preset'");
  bad("--task point-goal --preset tiny --backend cuda --out " + out.string(), "'backend'");
  bad("--task point-goal --preset tiny --eval-episodes 1 --out " + out.string(), "--eval-episodes");
  bad("--task point-goal --preset tiny --seeds 0 --out " + out.string(), "--seeds");
  bad("--task point-goal --preset tiny --episodes 50 --out " + out.string(), "--n");
  bad("--task point-goal --preset tiny --dataset /nonexistent.hdf5 --out " + out.string(),
      "nonexistent");
  // Work that would not end or fit: refused at parse time, naming the flag and its maximum.
  bad("--task point-goal --segment 100000 --out " + out.string(),
      "--segment: 100000 exceeds the task's horizon 200");
  bad("--task point-goal --episodes 4294967296 --out " + out.string(),
      "--episodes: 4294967296 exceeds the maximum 100000");
  bad("--task point-goal --pairs 9007199254740992 --out " + out.string(), "--pairs");
  bad("--task point-goal --members 65 --out " + out.string(), "--members");
  bad("--task point-goal --seeds 1001 --out " + out.string(), "--seeds");
  bad("--task corridor --episodes 0 --out " + out.string(), "--episodes");
  // A dataset of the task's widths whose episodes (12 steps) are shorter than the segment.
  const auto short_episodes = scratch_dir() / "short-episodes";
  const Result made = shell(
      std::string("'") + LTT_PYTHON3 + "' -c 'import numpy as np, os, sys; d = sys.argv[1]; "
      "os.makedirs(d, exist_ok=True); n = 36; t = np.zeros(n, np.bool_); t[11::12] = True; "
      "[np.save(os.path.join(d, k + \".npy\"), v) for k, v in dict(observations=np.zeros((n, 35), "
      "np.float32), next_observations=np.zeros((n, 35), np.float32), actions=np.zeros((n, 2), "
      "np.float32), rewards=np.zeros(n, np.float32), costs=np.zeros(n, np.float32), "
      "terminals=np.zeros(n, np.bool_), timeouts=t).items()]' '" + short_episodes.string() + "'");
  REQUIRE_MESSAGE(made.code == 0, made.err);
  bad("--task point-goal --preset tiny --dataset " + short_episodes.string() + " --out " +
          out.string(),
      "--segment: 30 leaves fewer than 2 episodes of at least that many steps");
  const auto file = scratch_dir() / "a-file";
  { std::ofstream(file) << "x"; }
  bad("--task point-goal --preset tiny --out " + file.string(), "--out");
  bad("--task point-goal --preset tiny --out " + (file / "x").string(), "--out");
}
