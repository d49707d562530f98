// `ltt curate` and `ltt draw` on DSRL files whose per-step cost is a known function of the
// observation (docs/make_curate_example.py): curate is `ltt score` then `ltt certify --dataset`
// (the same certificate as the two run by hand), the draw a person labels gives back the
// certificate of --draw, the certified selection holds at most alpha unsafe episodes on at least
// 9 of 10 seeds, and bad input is refused with one line before any training.

#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <data/dsrl.hpp>
#include <data/npy.hpp>

#include "run_program.hpp"

using namespace ltt_cli_test;
using ltt::data::cat;
namespace fs = std::filesystem;

namespace {

// Small enough for seconds, enough Adam steps (40 epochs of one minibatch) to learn the value.
const std::string curate_net = " --hidden 16,16 --epochs 40 --pairs 300 --quiet";
constexpr double curate_budget =
    40;  // make_curate_example.py --length 100: about 45% of episodes over it

fs::path dir() {
  static const fs::path d = [] {
    const fs::path p = scratch_dir() / "curate";
    fs::create_directories(p);
    return p;
  }();
  return d;
}

fs::path curate_example(const std::string& name, const std::string& flags) {
  return curate_example_at(dir() / name, flags);
}

fs::path curate_dataset() {
  return curate_example(with_hdf5 ? "ex.hdf5" : "ex", "--episodes 300 --length 100 --seed 4");
}

fs::path fresh(const std::string& name) {
  fs::remove_all(dir() / name);
  return dir() / name;
}

// The certificate's own numbers: every field but the file names and the scoring account.
std::string certificate_core(const std::string& json) {
  const auto j = json_object(json);
  return cat(j.at("certified"), j.at("threshold"), j.at("quantile"), j.at("selection_size"),
             j.at("steps"), j.at("triple"));
}

std::vector<double> episode_costs(const fs::path& file) {
  std::vector<double> c;
  for (const auto& e : ltt::data::load_dsrl_pool(file).episodes) c.push_back(e.episodic_cost);
  return c;
}

}  // namespace

TEST_CASE("ltt curate: score then certify, the same certificate as the two run by hand") {
  const fs::path d = curate_dataset();
  const fs::path out = fresh("c1");
  const Result r = run_ltt(cat("curate --dataset ", q(d), " --out ", q(out), curate_net,
                               " --draw 100 --budget 40 --seed 5 --json"));
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(r.out == slurp(out / "certificate.json"));
  const auto j = json_object(r.out);
  CHECK(j.count("scoring") == 1);
  for (const char* f : {"state_values.npy", "scores.npy", "model.ltt", "score.json"})
    CHECK(fs::exists(out / f));
  const fs::path selection = out / (with_hdf5 ? "selection.hdf5" : "selection");
  REQUIRE(fs::exists(selection));
  CHECK(static_cast<double>(ltt::data::load_dsrl_pool(selection).size()) ==
        number(j.at("selection_size")));

  // By hand: ltt score with the same seed, then ltt certify --dataset on its scores.
  const fs::path scored = fresh("s1");
  REQUIRE(
      run_ltt(cat("score --dataset ", q(d), " --out ", q(scored), curate_net, " --seed 5")).code ==
      0);
  CHECK(slurp(scored / "scores.npy") == slurp(out / "scores.npy"));
  const Result c = run_ltt(cat("certify --dataset ", q(d), " --scores ", q(scored / "scores.npy"),
                               " --draw 100 --budget 40 --seed 5 --json"));
  REQUIRE_MESSAGE(c.code == 0, c.err);
  CHECK(certificate_core(c.out) == certificate_core(r.out));
  // The scoring object is score.json's, and --draw's budget gives it the purity curve that
  // `ltt score --budget 40` writes (the walk's alpha and grid, the defaults here).
  const auto scoring = json_object(j.at("scoring") + "\n");
  CHECK(scoring.at("score_quality") == json_object(slurp(out / "score.json")).at("score_quality"));
  const fs::path budgeted = fresh("s1b");
  const Result b = run_ltt(
      cat("score --dataset ", q(d), " --out ", q(budgeted), curate_net, " --seed 5 --budget 40"));
  REQUIRE_MESSAGE(b.code == 0, b.err);
  const auto scored_json = json_object(slurp(budgeted / "score.json"));
  CHECK(scoring.at("score_quality") == scored_json.at("score_quality"));
  CHECK(scoring.at("spearman_score_cost") == scored_json.at("spearman_score_cost"));
  CHECK(json_object(scoring.at("score_quality") + "\n").at("budget") == "40");
}

TEST_CASE("ltt draw: the ids --draw labels; labeled by hand they give the same certificate") {
  const fs::path d = curate_dataset();
  const fs::path scored = fresh("s2");
  REQUIRE(run_ltt(cat("score --dataset ", q(d), " --out ", q(scored), curate_net)).code == 0);
  const fs::path ids = dir() / "ids.csv";
  const Result r = run_ltt(cat("draw --dataset ", q(d), " --n 90 --seed 11 --out ", q(ids)));
  REQUIRE_MESSAGE(r.code == 0, r.err);
  // A person labels each drawn episode: unsafe when its cost exceeds the budget.
  const std::vector<double> cost = episode_costs(d);
  std::ifstream in(ids);
  std::string line;
  std::getline(in, line);
  CHECK(line == "id");
  std::ofstream labels(dir() / "labels.csv");
  labels << "id,unsafe\n";
  int count = 0;
  while (std::getline(in, line)) {
    const auto id = static_cast<std::size_t>(std::stoll(line));
    labels << id << ',' << (cost[id] > curate_budget ? 1 : 0) << '\n';
    ++count;
  }
  labels.close();
  CHECK(count == 90);
  const std::string scores = cat(" --dataset ", q(d), " --scores ", q(scored / "scores.npy"));
  const Result by_draw = run_ltt(cat("certify", scores, " --draw 90 --budget 40 --seed 11 --json"));
  const Result by_labels =
      run_ltt(cat("certify", scores, " --labels ", q(dir() / "labels.csv"), " --json"));
  REQUIRE_MESSAGE(by_draw.code == 0, by_draw.err);
  REQUIRE_MESSAGE(by_labels.code == 0, by_labels.err);
  CHECK(certificate_core(by_draw.out) == certificate_core(by_labels.out));
  // Printed, and as JSON: the same ids.
  const Result printed = run_ltt(cat("draw --dataset ", q(d), " --n 90 --seed 11"));
  CHECK(cat("id\n", printed.out) == slurp(ids));
  const auto j = json_object(run_ltt(cat("draw --dataset ", q(d), " --n 3 --seed 11 --json")).out);
  CHECK(numbers(j.at("ids")).size() == 3);
  // curate --labels with these labels certifies as curate --draw does.
  const Result cd = run_ltt(cat("curate --dataset ", q(d), " --out ", q(fresh("c2")), curate_net,
                                " --seed 11 --draw 90 --budget 40 --json"));
  const Result cl = run_ltt(cat("curate --dataset ", q(d), " --out ", q(fresh("c3")), curate_net,
                                " --seed 11 --labels ", q(dir() / "labels.csv"), " --json"));
  REQUIRE_MESSAGE(cd.code == 0, cd.err);
  REQUIRE_MESSAGE(cl.code == 0, cl.err);
  CHECK(certificate_core(cd.out) == certificate_core(cl.out));
}

TEST_CASE("ltt curate: the certified selection holds at most alpha unsafe on >= 9 of 10 seeds") {
  const fs::path d = curate_dataset();
  int within = 0;
  for (int seed = 1; seed <= 10; ++seed) {
    const fs::path out = fresh("seed" + std::to_string(seed));
    const Result r =
        run_ltt(cat("curate --dataset ", q(d), " --out ", q(out), curate_net, " --seed ",
                    std::to_string(seed), " --draw 100 --budget 40 --json"));
    REQUIRE_MESSAGE(r.code == 0, r.err);
    const auto j = json_object(r.out);
    std::int64_t unsafe = 0;
    const std::vector<double> cost =
        episode_costs(out / (with_hdf5 ? "selection.hdf5" : "selection"));
    for (const double c : cost) unsafe += c > curate_budget;
    const double fraction = static_cast<double>(unsafe) / static_cast<double>(cost.size());
    MESSAGE("seed " << seed << ": certified " << j.at("certified") << ", " << cost.size()
                    << " selected, unsafe fraction " << fraction);
    within += j.at("certified") == "true" && fraction <= 0.25;
    fs::remove_all(out);
  }
  CHECK(within >= 9);
}

TEST_CASE("ltt curate and ltt draw: bad input refused with one line, before training") {
  const fs::path d = curate_dataset();
  const fs::path out = fresh("refused");
  const auto refused = [&](const std::string& args, const std::string& named) {
    CAPTURE(args);
    const Result r = run_ltt(args);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK(lines(r.err) == 1);
    CHECK_MESSAGE(r.err.find(named) != std::string::npos, r.err);
    CHECK(!fs::exists(out));
    CHECK(r.err.find("epoch") == std::string::npos);  // nothing was trained
  };
  const std::string base = cat("curate --dataset ", q(d), " --out ", q(out), curate_net);
  std::ofstream(dir() / "bad_labels.csv") << "id,unsafe\n0,1\n100000,0\n";
  refused(cat(base, " --labels ", q(dir() / "bad_labels.csv")), "id 100000 is not an episode");
  refused(cat(base, " --draw 100000 --budget 40"), "--draw: 100000 must not exceed the pool size");
  refused(cat(base, " --draw 10"), "--draw needs --budget");
  refused(cat(base, " --draw 10 --budget 40 --selection ", q(d)), "is the --dataset input itself");
  refused(cat(base, " --draw 10 --budget 40 --selection ", q(out / "scores.npy")),
          "--out and --selection name the same file");
  refused(cat(base, " --draw 10 --budget 40 --segment 5000"), "longer than every episode");
  refused(cat("draw --dataset ", q(d), " --n 100000"), "must not exceed the pool size 300");
  refused(cat("draw --dataset ", q(d), " --n 3 --out ", q(d)),
          cat("--out: ", q(d), " is the --dataset input itself"));

  // A selection placed by the user outside --out; a .npy directory's default selection/.
  const fs::path npy = curate_example("ex_npy", "--episodes 60 --length 100 --seed 2");
  const fs::path placed = dir() / "placed.npy";
  fs::remove(placed);
  const fs::path out2 = fresh("c4");
  const Result r = run_ltt(cat("curate --dataset ", q(npy), " --out ", q(out2), curate_net,
                               " --draw 30 --budget 40 --selection ", q(placed)));
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(fs::exists(placed));
  CHECK(!fs::exists(out2 / "selection"));
  const fs::path out3 = fresh("c5");
  REQUIRE(run_ltt(cat("curate --dataset ", q(npy), " --out ", q(out3), curate_net,
                      " --draw 30 --budget 40"))
              .code == 0);
  CHECK(fs::is_directory(out3 / "selection"));
  CHECK(fs::exists(out3 / "selection" / "observations.npy"));
}

TEST_CASE("ltt curate: a new --model is saved, and outputs may lie in the --out it creates") {
  const fs::path d = curate_dataset();
  const fs::path out = fresh("c-model");
  const fs::path model = fresh("c-model.ltt");
  const std::string selection = with_hdf5 ? "picked.hdf5" : "picked";
  // --selection inside an --out that does not exist yet: the run creates DIR first.
  const Result r =
      run_ltt(cat("curate --dataset ", q(d), " --out ", q(out), curate_net,
                  " --draw 100 --budget 40 --seed 5 --model ", q(model), " --selection ",
                  q(out / selection), " --transition-mask ", q(out / "mask.npy")));
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(r.out.find("saved the model to ") != std::string::npos);
  REQUIRE(fs::exists(model));
  CHECK(slurp(model) == slurp(out / "model.ltt"));
  CHECK(fs::exists(out / selection));
  CHECK(fs::exists(out / "mask.npy"));
  CHECK_FALSE(fs::exists(out / (with_hdf5 ? "selection.hdf5" : "selection")));

  // The saved model scores the file as the run did.
  const fs::path again = fresh("c-model-again");
  const Result s = run_ltt(
      cat("score --dataset ", q(d), " --out ", q(again), " --model ", q(model), " --quiet"));
  REQUIRE_MESSAGE(s.code == 0, s.err);
  CHECK(slurp(again / "scores.npy") == slurp(out / "scores.npy"));

  // A selection in a directory that is neither there nor DIR is refused before training: no
  // model, no DIR.
  const fs::path out2 = fresh("c-model-2");
  const fs::path model2 = fresh("c-model-2.ltt");
  const Result bad = run_ltt(cat("curate --dataset ", q(d), " --out ", q(out2), curate_net,
                                 " --draw 100 --budget 40 --model ", q(model2), " --selection ",
                                 q(out2 / "no-such-dir" / selection)));
  CHECK(bad.code == 2);
  CHECK_FALSE(fs::exists(model2));
  CHECK_FALSE(fs::exists(out2));
}

TEST_CASE("ltt curate --budgets: score then ltt certify --budgets, one selection for every budget") {
  const fs::path d = curate_dataset();
  const fs::path out = fresh("cb");
  const Result r = run_ltt(cat("curate --dataset ", q(d), " --out ", q(out), curate_net,
                               " --draw 100 --budgets 40,80 --seed 5 --json"));
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(r.out == slurp(out / "certificate.json"));
  const auto j = json_object(r.out);
  CHECK(j.count("scoring") == 1);
  CHECK(j.at("procedure") == "\"one_threshold\"");
  // By hand: ltt certify --budgets on the scores curate wrote.
  const Result c = run_ltt(cat("certify --dataset ", q(d), " --scores ", q(out / "scores.npy"),
                               " --draw 100 --budgets 40,80 --seed 5 --json"));
  REQUIRE_MESSAGE(c.code == 0, c.err);
  const auto by_hand = json_object(c.out);
  for (const char* key : {"budgets", "joint_pvalues", "levels", "certified"})
    CHECK(by_hand.at(key) == j.at(key));
  const fs::path selection = out / (with_hdf5 ? "selection.hdf5" : "selection");
  REQUIRE(fs::exists(selection));
  CHECK(std::to_string(ltt::data::load_dsrl_pool(selection).size()) ==
        json_object(j.at("output") + "\n").at("written_size"));
  for (const std::string& bad :
       {std::string(" --draw 100 --budgets 40,80 --procedure per-budget"),
        std::string(" --draw 100 --budgets 40,80 --gate top-half"),
        std::string(" --draw 100 --budget 40 --budgets 40,80"),
        std::string(" --draw 100 --budget 40 --alphas 0.2")}) {
    const Result e = run_ltt(cat("curate --dataset ", q(d), " --out ", q(fresh("cb-bad")),
                                 curate_net, bad));
    CAPTURE(bad);
    CHECK(e.code == 2);
    CHECK(lines(e.err) == 1);
    CHECK_FALSE(fs::exists(dir() / "cb-bad"));
  }
}
