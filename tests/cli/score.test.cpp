// `ltt score` on DSRL files whose per-step cost is a known function of the observation
// (docs/make_curate_example.py): the outputs and their shapes, scores that rank episodes by
// cost, the same bytes on any thread count, a model reused on another file of the same width,
// human pairs from a CSV, bad input refused with one line before anything is written, and with
// --budget the scores' Spearman correlations and purity checked by an independent recomputation
// (check_pipeline_report.py --score).
// Tiny settings (a few epochs of 16x16 networks) keep each case to a second or two.

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include <curation/rank_correlation.hpp>
#include <data/dsrl.hpp>
#include <data/npy.hpp>

#include "run_program.hpp"

using namespace ltt_cli_test;
using ltt::curation::spearman;
namespace fs = std::filesystem;

namespace {

const std::string net = " --hidden 16,16 --quiet";
const std::string tiny = net + " --epochs 5 --pairs 100";

// Writes a dataset with make_curate_example.py into the scratch directory once per name.
fs::path example(const std::string& name, const std::string& flags = "") {
  return curate_example_at(scratch_dir() / "score" / name, flags);
}

// The dataset in the store this build reads.
fs::path main_example() {
  return example(with_hdf5 ? "ex.hdf5" : "ex", "--episodes 120 --length 100");
}

Result score(const std::string& args) { return run_ltt("score " + args); }

fs::path fresh_out(const std::string& name) {
  const fs::path out = scratch_dir() / "score" / name;
  fs::remove_all(out);
  return out;
}

std::vector<double> episodic_costs(const fs::path& dataset) {
  std::vector<double> c;
  for (const auto& e : ltt::data::load_dsrl_pool(dataset).episodes) c.push_back(e.episodic_cost);
  return c;
}

void check_refused(const std::string& args, const std::string& named, const fs::path& out) {
  CAPTURE(args);
  const Result r = score(args);
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(lines(r.err) == 1);
  CHECK(r.err.starts_with("ltt score: "));
  CHECK_MESSAGE(r.err.find(named) != std::string::npos, r.err);
  CHECK(!fs::exists(out));
  // No staging directory is left next to it either.
  for (const auto& entry : fs::directory_iterator(out.parent_path()))
    CHECK(entry.path().filename().string().find(".ltt-") == std::string::npos);
}

}  // namespace

TEST_CASE("ltt score: outputs, shapes, and scores that rank episodes by their cost") {
  const fs::path d = main_example();
  const fs::path out = fresh_out("out1");
  const Result r =
      score("--dataset " + q(d) + " --out " + q(out) + net + " --pairs 100 --epochs 30 --json");
  REQUIRE_MESSAGE(r.code == 0, r.err);
  const auto j = json_object(r.out);
  CHECK(j.at("trained") == "true");
  CHECK(r.out == slurp(out / "score.json"));
  const auto pool = ltt::data::load_dsrl_pool(d);
  const std::vector<double> values = ltt::data::read_npy_vector(out / "state_values.npy");
  const std::vector<double> scores = ltt::data::read_npy_vector(out / "scores.npy");
  CHECK(static_cast<std::int64_t>(values.size()) == pool.transitions);  // the tail included
  CHECK(static_cast<std::int64_t>(scores.size()) == pool.size());
  CHECK(ltt::data::read_npy(out / "state_values.npy").dtype == ltt::data::DType::float32);
  CHECK(ltt::data::read_npy(out / "scores.npy").dtype == ltt::data::DType::float64);
  const auto training = json_object(j.at("training") + "\n");
  CHECK(number(training.at("held_out_pairs")) == 10);
  CHECK(number(training.at("train_pairs")) == 90);
  CHECK(number(training.at("held_out_accuracy")) >= 0.8);
  const double rho = spearman(scores, episodic_costs(d));
  MESSAGE("Spearman(score, episodic cost) = " << rho);
  CHECK(rho <= -0.8);

  // `ltt certify --state-values` aggregates the written values to the same scores.
  const Result c = run_ltt("certify --dataset " + q(d) + " --state-values " +
                           q(out / "state_values.npy") + " --draw 40 --budget 20 --json");
  REQUIRE_MESSAGE(c.code == 0, c.err);
}

TEST_CASE("ltt score: the same bytes on 1 and 2 threads; a model reused on another file") {
  const fs::path d = main_example();
  const fs::path one = fresh_out("t1"), two = fresh_out("t2");
  REQUIRE(score("--dataset " + q(d) + " --out " + q(one) + tiny + " --threads 1").code == 0);
  REQUIRE(score("--dataset " + q(d) + " --out " + q(two) + tiny + " --threads 2").code == 0);
  for (const char* f : {"state_values.npy", "scores.npy", "model.ltt"}) {
    CAPTURE(f);
    CHECK(slurp(one / f) == slurp(two / f));
  }
  // The model trained on d scores d again without training, to the same values...
  const fs::path again = fresh_out("again");
  const Result r = score("--dataset " + q(d) + " --out " + q(again) + " --model " +
                         q(one / "model.ltt") + " --json --quiet");
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(json_object(r.out).at("trained") == "false");
  CHECK(slurp(again / "state_values.npy") == slurp(one / "state_values.npy"));
  // ...and a float64 .npy directory of the same width (no next_observations read at all).
  const fs::path other = example("other_npy", "--episodes 30 --length 60 --dtype float64");
  fs::remove(other / "next_observations.npy");
  fs::copy_file(other / "observations.npy", other / "next_observations.npy");
  const fs::path scored = fresh_out("other_scored");
  const Result o = score("--dataset " + q(other) + " --out " + q(scored) + " --model " +
                         q(one / "model.ltt") + " --quiet");
  REQUIRE_MESSAGE(o.code == 0, o.err);
  CHECK(r.out.size() > 0);
  CHECK(ltt::data::read_npy_vector(scored / "scores.npy").size() == 30);
  // A new --model path receives the model too.
  const fs::path saved = scratch_dir() / "score" / "saved.ltt";
  fs::remove(saved);
  const fs::path three = fresh_out("t3");
  REQUIRE(score("--dataset " + q(d) + " --out " + q(three) + tiny + " --model " + q(saved)).code ==
          0);
  CHECK(slurp(saved) == slurp(one / "model.ltt"));
}

TEST_CASE("ltt score --memory: the same bytes whatever the block of rows and the threads") {
  // About 190,000 rows and a dropped tail of 5,000: blocks of 65536, 131072 and 196608 rows
  // end inside episodes and inside the tail; one block of the whole file is the reference.
  const fs::path d =
      example(with_hdf5 ? "long.hdf5" : "long", "--episodes 700 --length 300 --tail 5000");
  const std::int64_t rows = ltt::data::load_dsrl_pool(d).transitions;
  REQUIRE(rows > 2 * 65536);
  REQUIRE(rows < 3 * 65536);
  const fs::path trained = fresh_out("long_model");
  REQUIRE(score("--dataset " + q(d) + " --out " + q(trained) + tiny + " --no-state-values").code ==
          0);
  const std::string model = " --model " + q(trained / "model.ltt") + " --quiet";
  const fs::path whole = fresh_out("long_whole");
  const Result w = score("--dataset " + q(d) + " --out " + q(whole) + model + " --json");
  REQUIRE_MESSAGE(w.code == 0, w.err);
  const auto streaming = json_object(json_object(w.out).at("streaming") + "\n");
  CHECK(number(streaming.at("blocks")) == 1);
  const auto per_row = static_cast<std::int64_t>(number(streaming.at("bytes_per_row")));
  const std::string values = slurp(whole / "state_values.npy"),
                    scores = slurp(whole / "scores.npy");
  CHECK(static_cast<std::int64_t>(ltt::data::read_npy_vector(whole / "state_values.npy").size()) ==
        rows);
  for (const std::int64_t chunks : {1, 2, 3}) {
    for (const int threads : {1, 2}) {
      CAPTURE(chunks);
      CAPTURE(threads);
      const fs::path out = fresh_out("long_blocks");
      const Result r = score("--dataset " + q(d) + " --out " + q(out) + model + " --json" +
                             " --threads " + std::to_string(threads) + " --memory " +
                             std::to_string(chunks * 65536 * per_row + per_row - 1));
      REQUIRE_MESSAGE(r.code == 0, r.err);
      const auto s = json_object(json_object(r.out).at("streaming") + "\n");
      CHECK(number(s.at("block_rows")) == chunks * 65536);
      CHECK(number(s.at("blocks")) == (rows + chunks * 65536 - 1) / (chunks * 65536));
      CHECK(slurp(out / "state_values.npy") == values);
      CHECK(slurp(out / "scores.npy") == scores);
    }
  }
  // --no-state-values: the same scores, no state_values.npy, and score.json does not list it.
  const fs::path lean = fresh_out("long_lean");
  const Result l = score("--dataset " + q(d) + " --out " + q(lean) + model + " --no-state-values");
  REQUIRE_MESSAGE(l.code == 0, l.err);
  CHECK(l.out.find("wrote " + (lean / "scores.npy").string() + ", model.ltt, score.json\n") !=
        std::string::npos);
  CHECK(!fs::exists(lean / "state_values.npy"));
  CHECK(slurp(lean / "scores.npy") == scores);
  CHECK(slurp(lean / "score.json").find("state_values.npy") == std::string::npos);
  // Nothing staged is left next to the outputs.
  for (const auto& entry : fs::directory_iterator(lean.parent_path()))
    CHECK(entry.path().filename().string().find(".ltt-") == std::string::npos);
  // An --out whose parent does not exist yet: state_values.npy is staged there all the same.
  const fs::path nested = scratch_dir() / "score" / "new_parent" / "deeper" / "out";
  fs::remove_all(scratch_dir() / "score" / "new_parent");
  const Result n = score("--dataset " + q(d) + " --out " + q(nested) + model);
  REQUIRE_MESSAGE(n.code == 0, n.err);
  CHECK(slurp(nested / "state_values.npy") == values);
  // Progress lines on stderr with --progress: rows done, rows/s, time left.
  const Result p =
      score("--dataset " + q(d) + " --out " + q(fresh_out("long_progress")) + " --model " +
            q(trained / "model.ltt") + " --progress --memory " + std::to_string(65536 * per_row));
  REQUIRE_MESSAGE(p.code == 0, p.err);
  const std::string of_rows = " of " + std::to_string(rows) + " rows, ";
  CHECK(p.err.find("scoring: 65536" + of_rows) != std::string::npos);
  CHECK(p.err.find("scoring: " + std::to_string(rows) + of_rows) != std::string::npos);
  CHECK(p.err.find(" s left") != std::string::npos);
  // Units are powers of 1024, written as people write sizes (arguments.test.cpp has the table).
  const fs::path suffixed = fresh_out("long_suffix");
  const Result m = score("--dataset " + q(d) + " --out " + q(suffixed) + model +
                         " --no-state-values --json --memory 64MiB");
  REQUIRE_MESSAGE(m.code == 0, m.err);
  CHECK(number(json_object(json_object(m.out).at("streaming") + "\n").at("memory")) ==
        64.0 * 1024 * 1024);
  CHECK(slurp(suffixed / "scores.npy") == scores);
  // A budget that holds no whole chunk of rows is refused before any work.
  check_refused("--dataset " + q(d) + " --out " + q(fresh_out("long_small")) + model +
                    " --memory " + std::to_string(65536 * per_row - 1),
                "--memory: " + std::to_string(65536 * per_row - 1) + " bytes hold fewer than 65536",
                scratch_dir() / "score" / "long_small");
  check_refused(
      "--dataset " + q(d) + " --out " + q(fresh_out("long_small")) + model + " --memory 12X",
      "--memory: '12X' is not a size in bytes", scratch_dir() / "score" / "long_small");
}

TEST_CASE("ltt score --pairs-file: human comparisons by episode and start") {
  const fs::path d = main_example();
  const auto pool = ltt::data::load_dsrl_pool(d);
  // Prefer the cheaper of two long episodes' first segments, as a person would.
  std::ofstream pairs(scratch_dir() / "score" / "pairs.csv");
  pairs << "episode_a,start_a,episode_b,start_b,preferred\n";
  int written = 0;
  for (std::size_t a = 0; a + 1 < pool.episodes.size() && written < 60; a += 2) {
    const auto& ea = pool.episodes[a];
    const auto& eb = pool.episodes[a + 1];
    if (ea.length < 30 || eb.length < 30 || ea.episodic_cost == eb.episodic_cost) continue;
    pairs << a << ",0," << a + 1 << ",5," << (ea.episodic_cost < eb.episodic_cost ? "a" : "b")
          << "\n";
    ++written;
  }
  pairs.close();
  const fs::path out = fresh_out("pairs_out");
  const Result r = score("--dataset " + q(d) + " --out " + q(out) +
                         " --epochs 5 --hidden 16,16 "
                         "--quiet --json --pairs-file " +
                         q(scratch_dir() / "score" / "pairs.csv"));
  REQUIRE_MESSAGE(r.code == 0, r.err);
  const auto p = json_object(json_object(r.out).at("pairs") + "\n");
  CHECK(p.at("source") == "\"file\"");
  CHECK(number(p.at("count")) == written);
}

TEST_CASE("ltt score: bad input is refused with one line, before work, leaving nothing") {
  const fs::path d = main_example();
  const fs::path out = fresh_out("refused");
  const std::string base = "--dataset " + q(d) + " --out " + q(out) + tiny;

  // A file without costs.
  const fs::path no_costs = example("no_costs", "--episodes 20 --length 50");
  fs::remove(no_costs / "costs.npy");
  check_refused("--dataset " + q(no_costs) + " --out " + q(out) + tiny, "key 'costs' is missing",
                out);
  // A model of another observation width.
  const fs::path narrow = example("narrow_npy", "--episodes 40 --length 60 --dim 3");
  const fs::path narrow_out = fresh_out("narrow_out");
  REQUIRE(score("--dataset " + q(narrow) + " --out " + q(narrow_out) + tiny).code == 0);
  check_refused(base + " --model " + q(narrow_out / "model.ltt"),
                "takes observations of 3 values but", out);
  // Networks and work beyond the documented maxima, refused at parse time.
  const std::string plain = "--dataset " + q(d) + " --out " + q(out) + " --quiet";
  check_refused(plain + " --hidden 16,100000", "--hidden: 100000 exceeds the maximum width 8192",
                out);
  check_refused(plain + " --hidden 1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1", "more than 16 hidden layers",
                out);
  check_refused(plain + " --members 65", "--members: 65 exceeds the maximum 64", out);
  check_refused(plain + " --epochs 100001", "--epochs: 100001 exceeds the maximum 100000", out);
  check_refused(plain + " --pairs 1048577", "--pairs: 1048577 exceeds the maximum 1048576", out);
  // --segment longer than every episode; too few episodes for the sampler.
  check_refused(base + " --segment 5000", "--segment: 5000 is longer than every episode", out);
  const fs::path single = example("single_npy", "--episodes 1 --length 40");
  check_refused("--dataset " + q(single) + " --out " + q(out) + tiny + " --segment 10",
                "only 1 episode has at least --segment 10 rows", out);
  // Pairs files naming an episode that does not exist, a start past the end, a bad label.
  const fs::path csv = scratch_dir() / "score" / "bad_pairs.csv";
  const auto pairs_file = [&](const std::string& row) {
    std::ofstream(csv) << "episode_a,start_a,episode_b,start_b,preferred\n0,0,1,0,a\n" << row;
    return "--dataset " + q(d) + " --out " + q(out) + net + " --pairs-file " + q(csv);
  };
  check_refused(pairs_file("0,0,100000,0,b\n"), "episode_b 100000 does not exist", out);
  check_refused(pairs_file("0,0,1,95,b\n"), "start_b 95: a segment of H = 30 rows", out);
  check_refused(pairs_file("0,0,1,0,c\n"), "preferred 'c' is not a or b", out);
  // Outputs never replace an input: the dataset's own directory, or a model inside --out.
  const fs::path npy = example("self_npy", "--episodes 20 --length 50");
  check_refused("--dataset " + q(npy) + " --out " + q(npy) + tiny, "is the --dataset input itself",
                fresh_out("never"));
  const fs::path has_model = fresh_out("has_model");
  REQUIRE(score("--dataset " + q(d) + " --out " + q(has_model) + tiny).code == 0);
  const Result r = score("--dataset " + q(d) + " --out " + q(has_model) + " --model " +
                         q(has_model / "model.ltt"));
  CHECK(r.code == 2);
  CHECK(r.err.find("is the --model input itself") != std::string::npos);
}

TEST_CASE("ltt score --budget: the scores against the file's costs, recomputed independently") {
  const fs::path d = main_example();
  const fs::path out = fresh_out("purity");
  // A grid with a quantile the tied scores may merge, and a non-default alpha.
  const std::string grid = "0.9,0.85,0.7,0.5,0.3";
  const Result r = score("--dataset " + q(d) + " --out " + q(out) + tiny +
                         " --budget 20 --alpha 0.2 --grid " + grid + " --json");
  REQUIRE_MESSAGE(r.code == 0, r.err);
  const auto j = json_object(r.out);
  for (const char* key : {"spearman_score_cost", "spearman_score_return", "spearman_cost_return"}) {
    CAPTURE(key);
    CHECK(number(j.at(key)) >= -1);
    CHECK(number(j.at(key)) <= 1);
  }
  const auto p = json_object(j.at("score_quality") + "\n");
  CHECK(number(p.at("budget")) == 20);
  CHECK(number(p.at("alpha")) == 0.2);
  // scores.npy and the dataset, read by Python (numpy, h5py, scipy's spearmanr): the three
  // correlations, the unsafe count, every grid step's N and U, the margin, the first step.
  const Result check = shell(report_checker() + "--score " + q(out) + " " + q(d) + " " + grid);
  CHECK_MESSAGE(check.code == 0, check.out << check.err);
  // The summary says the same in two lines.
  const fs::path human = fresh_out("purity_human");
  const Result h = score("--dataset " + q(d) + " --out " + q(human) + tiny + " --budget 20");
  REQUIRE_MESSAGE(h.code == 0, h.err);
  CHECK(h.out.find("against the file's costs: Spearman(score, episodic cost) ") !=
        std::string::npos);
  CHECK(h.out.find("purity at budget 20 (") != std::string::npos);
  // Without --budget: the correlations, no purity (null), and a checker that agrees.
  const fs::path plain = fresh_out("purity_plain");
  const Result n = score("--dataset " + q(d) + " --out " + q(plain) + tiny + " --json");
  REQUIRE_MESSAGE(n.code == 0, n.err);
  CHECK(json_object(n.out).at("score_quality") == "null");
  CHECK(json_object(n.out).at("spearman_score_cost") == j.at("spearman_score_cost"));
  CHECK(n.out.find("\"purity\"") == std::string::npos);
  const Result plain_check =
      shell(report_checker() + "--score " + q(plain) + " " + q(d) + " " + grid);
  CHECK_MESSAGE(plain_check.code == 0, plain_check.out << plain_check.err);
  // --alpha and --grid mean nothing without --budget; a budget must be a number.
  const fs::path refused = fresh_out("purity_refused");
  const std::string base = "--dataset " + q(d) + " --out " + q(refused) + tiny;
  check_refused(base + " --alpha 0.2", "--alpha needs --budget", refused);
  check_refused(base + " --grid 0.8,0.5", "--grid needs --budget", refused);
  check_refused(base + " --budget twenty", "--budget: 'twenty' is not a number", refused);
  check_refused(base + " --budget 20 --grid 0.5,0.8", "--grid: 0.8 is not below 0.5", refused);
}
