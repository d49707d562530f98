// ltt pipeline end to end on small settings: exit code, the report folder checked by an
// independent reader (check_pipeline_report.py: json, scipy's hypergeometric cdf, xml.etree),
// and bad input that exits 2 with one line and writes nothing.

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "run_program.hpp"

using namespace ltt_cli_test;

TEST_CASE("ltt pipeline --preset tiny on every task: a report an independent reader accepts") {
  for (const std::string task :
       {"point-goal", "car-run", "point-goal-reckless", "hopper-velocity"}) {
    CAPTURE(task);
    const auto out = scratch_dir() / ("pipeline-" + task);
    const Result r =
        run_ltt("pipeline --task " + task + " --preset tiny --seeds 2 --out " + out.string());
    REQUIRE_MESSAGE(r.code == 0, r.err);
    CHECK(r.out.find("| BC-All |") != std::string::npos);
    CHECK(r.err.find("value ensemble") != std::string::npos);  // progress on stderr
    const Result check = shell(report_checker() + out.string() + " " + task);
    CHECK_MESSAGE(check.code == 0, check.out << check.err);
    // --json: exactly one object, the file's bytes
    const Result j =
        run_ltt("pipeline --task " + task + " --preset tiny --json --out " + out.string());
    REQUIRE(j.code == 0);
    CHECK(json_object(j.out).count("methods") == 1);
    CHECK(j.out == slurp(out / "report.json"));
  }
}

TEST_CASE("ltt pipeline --raw-observations: the report says raw") {
  const auto out = scratch_dir() / "pipeline-raw";
  const Result r =
      run_ltt("pipeline --task point-goal --preset tiny --raw-observations --out " + out.string());
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(slurp(out / "report.json").find("\"observations\":\"raw\"") != std::string::npos);
  CHECK(slurp(out / "report.md").find("raw (--raw-observations") != std::string::npos);
}

TEST_CASE("ltt pipeline: the seed artifacts hand the selection on to ltt certify") {
  const auto out = scratch_dir() / "pipeline-artifacts";
  const Result r =
      run_ltt("pipeline --task point-goal --preset tiny --keep-pool --out " + out.string());
  REQUIRE_MESSAGE(r.code == 0, r.err);
  const Result check = shell(report_checker() + out.string() + " point-goal");
  CHECK_MESSAGE(check.code == 0, check.out << check.err);
  // the same pool, scores and labels give the same certificate and selection
  const auto seed = out / "seed-1";
  const auto selection = scratch_dir() / "pipeline-artifacts-selection.npy";
  std::filesystem::path pool;  // HDF5, or a directory of .npy without HDF5
  for (const auto& entry : std::filesystem::directory_iterator(out))
    if (entry.path().filename().string().starts_with("point-goal-pool-1")) pool = entry.path();
  REQUIRE_FALSE(pool.empty());
  const Result c =
      run_ltt("certify --dataset " + pool.string() + " --scores " + (seed / "scores.npy").string() +
              " --labels " + (seed / "labels.csv").string() + " --selection " + selection.string() +
              " --json");
  REQUIRE_MESSAGE(c.code == 0, c.err);
  CHECK(slurp(selection) == slurp(seed / "selection.npy"));
  const Result same = shell(std::string(LTT_PYTHON3) +
                            " -c \"import json,sys; "
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
  const Result check = shell(report_checker() + out.string() + " corridor");
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
      std::string("'") + LTT_PYTHON3 +
      "' -c 'import numpy as np, os, sys; d = sys.argv[1]; "
      "os.makedirs(d, exist_ok=True); n = 36; t = np.zeros(n, np.bool_); t[11::12] = True; "
      "[np.save(os.path.join(d, k + \".npy\"), v) for k, v in dict(observations=np.zeros((n, 34), "
      "np.float32), next_observations=np.zeros((n, 34), np.float32), actions=np.zeros((n, 2), "
      "np.float32), rewards=np.zeros(n, np.float32), costs=np.zeros(n, np.float32), "
      "terminals=np.zeros(n, np.bool_), timeouts=t).items()]' '" +
      short_episodes.string() + "'");
  REQUIRE_MESSAGE(made.code == 0, made.err);
  bad("--task point-goal --preset tiny --dataset " + short_episodes.string() + " --out " +
          out.string(),
      "--segment: 30 leaves fewer than 2 episodes of at least that many steps");
  const auto file = scratch_dir() / "a-file";
  { std::ofstream(file) << "x"; }
  bad("--task point-goal --preset tiny --out " + file.string(), "--out");
  bad("--task point-goal --preset tiny --out " + (file / "x").string(), "--out");
}

// --config replays a report: the same options, so the same seed artifacts, byte for byte.
TEST_CASE("ltt pipeline --config report.json: the same run again, flags given override it") {
  const auto first = scratch_dir() / "pipeline-config-first";
  const Result r = run_ltt("pipeline --task point-goal --preset tiny --out " + first.string());
  REQUIRE_MESSAGE(r.code == 0, r.err);
  const auto again = scratch_dir() / "pipeline-config-again";
  const Result replay =
      run_ltt("pipeline --config " + (first / "report.json").string() + " --out " + again.string());
  REQUIRE_MESSAGE(replay.code == 0, replay.err);
  for (const char* name : {"model.ltt", "scores.npy", "selection.npy", "labels.csv"}) {
    CAPTURE(name);
    const std::string bytes = slurp(again / "seed-1" / name);
    CHECK_FALSE(bytes.empty());
    CHECK(bytes == slurp(first / "seed-1" / name));
  }
  const auto settings = [](const std::filesystem::path& report) {
    return shell(std::string(LTT_PYTHON3) +
                 " -c \"import json,sys; d=json.load(open(sys.argv[1])); "
                 "print(json.dumps([d['task'], d['preset'], d['pool'], d['settings'], "
                 "len(d['seeds'])], sort_keys=True))\" " +
                 report.string())
        .out;
  };
  CHECK(settings(again / "report.json") == settings(first / "report.json"));

  // A flag on the command line wins over the report; the rest still comes from it.
  const auto changed = scratch_dir() / "pipeline-config-changed";
  const Result over = run_ltt("pipeline --config " + (first / "report.json").string() +
                              " --alpha 0.3 --value-epochs 3 --out " + changed.string());
  REQUIRE_MESSAGE(over.code == 0, over.err);
  const std::string query =
      std::string(LTT_PYTHON3) +
      " -c \"import json,sys; a=json.load(open(sys.argv[1]))['settings']; "
      "b=json.load(open(sys.argv[2]))['settings']; "
      "print(b['alpha'], b['value_epochs'], sorted(k for k in a if a[k] != b[k]))\" ";
  CHECK(shell(query + (first / "report.json").string() + " " + (changed / "report.json").string())
            .out == "0.3 3 ['alpha', 'value_epochs']\n");
}

TEST_CASE(
    "ltt pipeline --config: unknown keys, wrong types and hostile files exit 2 naming the key") {
  const auto out = scratch_dir() / "pipeline-config-bad";
  std::filesystem::remove_all(out);
  const auto config = scratch_dir() / "config.json";
  const auto refused = [&](const std::string& text, const std::string& args,
                           const std::string& named) {
    CAPTURE(text.substr(0, 200));
    std::ofstream(config, std::ios::binary | std::ios::trunc) << text;
    const Result r =
        run_ltt("pipeline --config " + config.string() + " " + args + " --out " + out.string());
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK(lines(r.err) == 1);
    CHECK_MESSAGE(r.err.find(named) != std::string::npos, r.err);
    CHECK_FALSE(std::filesystem::exists(out));
  };
  const std::string task = R"("task": "point-goal", "preset": "tiny")";
  refused("{" + task + R"(, "settings": {"alfa": 0.25}})", "",
          "settings.alfa: not an option a pipeline report records");
  refused("{" + task + R"(, "colour": "blue"})", "", "colour: not an option");
  refused("{" + task + R"(, "pool": {"pool_seed": 1, "size": 3}})", "", "pool.size: not an option");
  refused("{" + task + R"(, "settings": {"alpha": "0.25"}})", "",
          "settings.alpha: a string where a number is due");
  refused("{" + task + R"(, "settings": {"backend": 1}})", "",
          "settings.backend: a number where a string is due");
  refused("{" + task + R"(, "settings": {"normalize_observations": 0}})", "",
          "settings.normalize_observations: a number where a boolean is due");
  refused("{" + task + R"(, "settings": [1]})", "", "settings: an array where an object is due");
  refused(R"({"task": 7})", "", "task: a number where a string is due");
  refused("[]", "", "the top level: an array where an object is due");
  refused("{" + task + R"(, "settings": {"alpha": 1.5}})", "",
          "settings.alpha: --alpha: 1.5 must lie in (0, 1)");
  refused("{" + task + R"(, "settings": {"pairs": 2.5}})", "",
          "settings.pairs: --pairs: '2.5' is not a whole number");
  refused("{" + task + R"(, "settings": {"members": 65}})", "",
          "settings.members: --members: 65 exceeds the maximum 64");
  refused("{" + task + R"(, "settings": {"value_hidden": [16, 100000]}})", "",
          "settings.value_hidden: 100000 is not a width in [1, 4096]");
  refused("{" + task + R"(, "settings": {"normalize_observations": true, "observations": "raw"}})",
          "", "settings.observations: 'raw' contradicts normalize_observations = true");
  refused("{" + task + R"(, "seeds": [{"seed": 1}, {"seed": 3}]})", "",
          "seeds[1].seed: 3 where 2 is due");
  refused("{" + task + R"(, "seeds": []})", "", "seeds: an empty list");
  refused(R"({"task": "corridor", "trajectories": 100})", "--task point-goal",
          "--task: point-goal cannot replay --config");
  refused(R"({"task": "corridor", "pairs": 100})", "",
          "pairs: not an option a corridor report records");
  refused(R"({"preset": "tiny"})", "", "missing required flag --task");
  // Not JSON, or JSON no report is: refused with the line and column, before any work
  // (nlohmann-json's: the column of the last byte it read, here the end of "0.1").
  refused("{" + task + ",}", "",
          ":1:41: syntax error while parsing object key - unexpected '}'; expected string literal");
  refused("{" + task + ",\n  \"settings\": {\"alpha\": 0.25,\n    \"delta\" 0.1}}", "",
          ":3:15: syntax error while parsing object separator - unexpected number literal");
  refused("{" + task + R"(, "preset": "demo"})", "", "the key \"preset\" appears twice");
  refused("{" + task + R"(, "settings": {"alpha": 0.2, "alpha": 0.3}})", "",
          "settings: the key \"alpha\" appears twice");
  refused("{" + task + R"(, "settings": {"alpha": 1e400}})", "", "number overflow parsing '1e400'");
  refused(std::string(1000000, '[') + std::string(1000000, ']'), "",
          "arrays and objects nested more than 64 deep");
  refused(std::string(5 << 20, ' ') + "{}", "", "more than 4194304 bytes");
  refused("{\"task\": \"point-goal\xff\"}", "", ":1:21: syntax error while parsing value - "
          "invalid string: ill-formed UTF-8 byte; last read: '\"point-goal?'");
  std::filesystem::remove(config);
  const Result missing = run_ltt("pipeline --config " + config.string() + " --out " + out.string());
  CHECK(missing.code == 2);
  CHECK(missing.err.find("cannot read") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(out));
}
