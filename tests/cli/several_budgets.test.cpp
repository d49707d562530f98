// `ltt rate --budgets`, `ltt certify --budgets` and `ltt validate --budgets`
// (docs/several-budgets.md): the numbers equal the library's to the last bit, one JSON object
// with an entry per budget, and every bad input exits 2 with one line naming the flag.

#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <curation/several_budgets_validation.hpp>
#include <ltt/certification_rate.hpp>
#include <ltt/joint_certification_rate.hpp>
#include <ltt/several_budgets.hpp>

#include "run_program.hpp"

using namespace ltt_cli_test;

namespace {

void refused_budgets_input(const std::string& args, const std::string& named) {
  CAPTURE(args);
  const Result r = run_ltt(args);
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(lines(r.err) == 1);
  CHECK_MESSAGE(r.err.find(named) != std::string::npos, r.err);
}

// The values at Python subscripts of the JSON text ("['budgets'][1]['rate']"), each re-encoded
// by json.dumps, from one run of the reader.
std::vector<std::string> budgets_json_values(const std::string& text,
                                             const std::vector<std::string>& paths) {
  const auto file = scratch_dir() / "budgets.json";
  std::ofstream(file, std::ios::binary) << text;
  const auto script_file = scratch_dir() / "json_at.py";
  std::ofstream script(script_file, std::ios::binary);
  script << "import json, sys\nd = json.load(open(sys.argv[1]))\n";
  for (const std::string& path : paths) script << "print(json.dumps(d" << path << "))\n";
  script.close();
  const Result r = shell(std::string("'") + LTT_PYTHON3 + "' '" + script_file.string() + "' '" +
                         file.string() + "'");
  REQUIRE_MESSAGE(r.code == 0, r.err);
  std::vector<std::string> values;
  std::istringstream lines_of(r.out);
  for (std::string line; std::getline(lines_of, line);) values.push_back(line);
  REQUIRE(values.size() == paths.size());
  return values;
}

std::string budgets_json_at(const std::string& text, const std::string& path) {
  return budgets_json_values(text, {path}).front();
}

}  // namespace

TEST_CASE("ltt rate --budgets: the joint rate and each budget's own, the library's to the bit") {
  const std::vector<std::int64_t> U1{60, 30, 10};
  const std::vector<double> alphas{0.3, 0.2, 0.1};
  for (const auto& [name, procedure] :
       {std::pair{"one-threshold", ltt::BudgetProcedure::one_threshold},
        std::pair{"per-budget", ltt::BudgetProcedure::one_threshold_per_budget}}) {
    const Result r = run_ltt(std::string("rate --N 5000 --N1 750 --U1 60,30,10 --n 400 ") +
                             "--budgets 20,40,80 --alphas 0.3,0.2,0.1 --json --procedure " + name);
    REQUIRE(r.code == 0);
    CHECK(r.err.empty());
    const auto json = json_object(r.out);  // one object on one line
    const std::vector<double> levels = ltt::budget_levels(procedure, 0.1, 3);
    CHECK(number(json.at("rate")) ==
          ltt::joint_certification_rate(5000, 750, U1, 400, alphas, levels));
    CHECK(json.at("procedure") == std::string("\"") + name + "\"");
    for (std::size_t k = 0; k < 3; ++k) {
      const std::string at = "['budgets'][" + std::to_string(k) + "]";
      CHECK(number(budgets_json_at(r.out, at + "['rate']")) ==
            ltt::certification_rate(5000, 750, U1[k], 400, alphas[k], levels[k]));
      CHECK(number(budgets_json_at(r.out, at + "['level']")) == levels[k]);
      CHECK(budgets_json_at(r.out, at + "['U1']") == std::to_string(U1[k]));
    }
  }
  const Result summary = run_ltt("rate --N 5000 --N1 750 --U1 60,30,10 --n 400 --budgets 20,40,80");
  REQUIRE(summary.code == 0);
  CHECK(summary.out.find("budget 80: U1 = 10") != std::string::npos);
}

TEST_CASE("ltt rate --budgets: bad input exits 2 with one line naming the flag") {
  const std::string base = "rate --N 5000 --N1 750 --n 400 ";
  refused_budgets_input(base + "--U1 60,30 --budgets 20,40,80", "--U1");
  refused_budgets_input(base + "--U1 30,60 --budgets 20,40", "--U1");
  refused_budgets_input(base + "--U1 60,800 --budgets 20,40", "--U1");
  refused_budgets_input(base + "--U1 60,x --budgets 20,40", "--U1");
  refused_budgets_input(base + "--U1 60,30 --budgets 40,20", "--budgets");
  refused_budgets_input(base + "--U1 60,30 --budgets 20,20", "--budgets");
  refused_budgets_input(base + "--U1 60,30 --budgets 20,,40", "--budgets");
  refused_budgets_input(base + "--U1 60,30 --budgets 20,inf", "--budgets");
  refused_budgets_input(base + "--U1 60,30 --budgets 20,40 --alphas 0.2", "--alphas");
  refused_budgets_input(base + "--U1 60,30 --budgets 20,40 --alphas 0.2,1.5", "--alphas");
  refused_budgets_input(base + "--U1 60,30 --budgets 20,40 --alphas 0.2,0.1 --alpha 0.3",
                        "--alpha");
  refused_budgets_input(base + "--U1 60,30 --budgets 20,40 --procedure both", "--procedure");
  refused_budgets_input(base + "--U1 60 --alphas 0.2", "--alphas");
  refused_budgets_input(base + "--U1 60 --procedure per-budget", "--procedure");
  refused_budgets_input(base + "--U1 60,30", "--U1");
}

namespace {

// A pool of 1200 with id,score,return,cost (costs 0..99.9 spread by a fixed permutation, the
// score falling with the cost plus a second permutation's noise) and three label files for the
// same 300 trajectories (every fourth): id,cost; id,band against 20,40,80; id,unsafe at 20.
struct BudgetFilesForCli {
  std::filesystem::path pool, costs, bands, bits20, bits40;
};

BudgetFilesForCli budget_files() {
  const auto dir = scratch_dir();
  BudgetFilesForCli f{dir / "bpool.csv", dir / "bcost.csv", dir / "bband.csv", dir / "bbit20.csv",
                      dir / "bbit40.csv"};
  std::ofstream pool(f.pool), costs(f.costs), bands(f.bands), bits20(f.bits20), bits40(f.bits40);
  pool << "id,score,return,cost\n";
  costs << "id,cost\n";
  bands << "id,band\n";
  bits20 << "id,unsafe\n";
  bits40 << "id,unsafe\n";
  for (int i = 0; i < 1200; ++i) {
    const double cost = static_cast<double>((i * 7919) % 1000) / 10.0;
    const double score = -cost + static_cast<double>((i * 104729) % 600) / 10.0;
    pool << "t" << i << ',' << score << ',' << 100 - cost << ',' << cost << '\n';
    if (i % 4 != 0) continue;
    costs << "t" << i << ',' << cost << '\n';
    bands << "t" << i << ',' << (cost > 20) + (cost > 40) + (cost > 80) << '\n';
    bits20 << "t" << i << ',' << (cost > 20) << '\n';
    bits40 << "t" << i << ',' << (cost > 40) << '\n';
  }
  return f;
}

}  // namespace

TEST_CASE("ltt certify --budgets: one budget is ltt certify; cost and band labels agree") {
  const BudgetFilesForCli f = budget_files();
  const std::string pool = "certify --pool " + q(f.pool) + " --json ";
  const Result single = run_ltt(pool + "--labels " + q(f.bits20));
  REQUIRE(single.code == 0);
  const auto one = json_object(single.out);
  for (const std::string& labels : {q(f.bits20), q(f.costs)}) {
    const Result r = run_ltt(pool + "--labels " + labels + " --budgets 20");
    REQUIRE_MESSAGE(r.code == 0, r.err);
    for (const std::string key :
         {"steps", "threshold", "quantile", "certified", "selection_size", "triple", "fallback"})
      CHECK(budgets_json_at(r.out, "['budgets'][0]['" + key + "']") == one.at(key));
  }
  const Result by_cost = run_ltt(pool + "--labels " + q(f.costs) + " --budgets 20,40,80");
  const Result by_band = run_ltt(pool + "--labels " + q(f.bands) + " --budgets 20,40,80");
  REQUIRE(by_cost.code == 0);
  REQUIRE(by_band.code == 0);
  CHECK(budgets_json_at(by_cost.out, "['budgets']") == budgets_json_at(by_band.out, "['budgets']"));
  CHECK(budgets_json_at(by_cost.out, "['joint_pvalues']") ==
        budgets_json_at(by_band.out, "['joint_pvalues']"));
}

TEST_CASE("ltt certify --budgets --procedure per-budget: each budget is ltt certify at delta / K") {
  const BudgetFilesForCli f = budget_files();
  const Result r = run_ltt("certify --pool " + q(f.pool) + " --labels " + q(f.costs) +
                           " --budgets 20,40 --procedure per-budget --json");
  REQUIRE_MESSAGE(r.code == 0, r.err);
  const double level =
      ltt::budget_levels(ltt::BudgetProcedure::one_threshold_per_budget, 0.1, 2)[0];
  CHECK(number(budgets_json_at(r.out, "['levels'][1]")) == level);
  const std::string level_text = budgets_json_at(r.out, "['levels'][0]");  // shortest round trip
  for (const auto& [k, bits] : {std::pair{0, f.bits20}, std::pair{1, f.bits40}}) {
    const Result alone = run_ltt("certify --pool " + q(f.pool) + " --labels " + q(bits) +
                                 " --json --delta " + level_text);
    REQUIRE(alone.code == 0);
    const auto one = json_object(alone.out);
    for (const std::string key : {"steps", "threshold", "certified", "selection_size"})
      CHECK(budgets_json_at(r.out, "['budgets'][" + std::to_string(k) + "]['" + key + "']") ==
            one.at(key));
  }
}

TEST_CASE("ltt certify --budgets: the selection and the certificate written") {
  const BudgetFilesForCli f = budget_files();
  const auto dir = scratch_dir();
  const auto selection = dir / "bsel.txt", certificate = dir / "bcert.json";
  std::filesystem::remove(selection);
  std::filesystem::remove(certificate);
  const Result r = run_ltt("certify --pool " + q(f.pool) + " --labels " + q(f.costs) +
                           " --budgets 20,40,80 --selection " + q(selection) + " --certificate " +
                           q(certificate) + " --json");
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(slurp(certificate) == r.out);
  CHECK(std::to_string(lines(slurp(selection))) ==
        budgets_json_at(r.out, "['budgets'][0]['selection_size']"));
  CHECK(budgets_json_at(r.out, "['output']['written_size']") ==
        budgets_json_at(r.out, "['budgets'][0]['selection_size']"));
}

TEST_CASE("ltt certify --budgets: bad input exits 2 with one line naming what is wrong") {
  const BudgetFilesForCli f = budget_files();
  const auto dir = scratch_dir();
  const auto both = dir / "bboth.csv", wide = dir / "bwide.csv";
  std::ofstream(both) << "id,cost,band\nt0,3,0\n";
  std::ofstream(wide) << "id,band\nt0,4\n";
  const std::string base = "certify --pool " + q(f.pool) + " ";
  const std::string costs = "--labels " + q(f.costs) + " ";
  refused_budgets_input(base + costs + "--budgets 20,40 --gate top-half", "--gate");
  refused_budgets_input(base + costs + "--budgets 20,40 --stop cap", "--stop needs --sequential");
  refused_budgets_input(base + costs + "--budgets 20,40 --sequential --gate top-half", "--gate");
  refused_budgets_input(base + "--draw 100 --budget 20 --budgets 20,40", "--budget");
  refused_budgets_input(base + costs + "--budgets 20,40 --alphas 0.2,0.2,0.2", "--alphas");
  refused_budgets_input(base + costs + "--budgets 40,20", "--budgets");
  refused_budgets_input(base + "--labels " + q(both) + " --budgets 20,40", "more than one");
  refused_budgets_input(base + "--labels " + q(wide) + " --budgets 20,40,80", "band 4");
  refused_budgets_input(base + "--labels " + q(f.bits20) + " --budgets 20,40", "'unsafe'");
  refused_budgets_input(
      base + costs + "--budgets 20,40 --procedure per-budget --selection " + q(dir / "never.txt"),
      "--selection");
  refused_budgets_input(base + costs + "--alphas 0.2,0.2", "--alphas");
  refused_budgets_input(base + "--budgets 20,40", "--labels");
}

namespace several_budgets_cli_budget_test {

TEST_CASE("ltt budget --budgets: the library's joint label budget, refusals in one line") {
  const std::vector<std::int64_t> U1{70, 30, 8};
  const std::vector<double> alphas(3, 0.25);
  for (const auto& [name, procedure] :
       {std::pair{"one-threshold", ltt::BudgetProcedure::one_threshold},
        std::pair{"per-budget", ltt::BudgetProcedure::one_threshold_per_budget}}) {
    const Result r = run_ltt(std::string("budget --N 3000 --N1 451 --U1 70,30,8 --target 0.8 ") +
                             "--budgets 20,40,80 --json --procedure " + name);
    REQUIRE(r.code == 0);
    const auto json = json_object(r.out);
    const std::vector<double> levels = ltt::budget_levels(procedure, 0.1, 3);
    const auto n = ltt::joint_label_budget(3000, 451, U1, alphas, levels, 0.8);
    REQUIRE(n.has_value());
    CHECK(json.at("budget") == std::to_string(*n));
    CHECK(number(json.at("rate_at_budget")) ==
          ltt::joint_certification_rate(3000, 451, U1, *n, alphas, levels));
  }
  const Result none = run_ltt(
      "budget --N 3000 --N1 451 --U1 120,30,8 --target 0.8 --budgets "
      "20,40,80 --json");
  REQUIRE(none.code == 0);
  CHECK(json_object(none.out).at("budget") == "null");
  const std::string base = "budget --N 3000 --N1 451 --target 0.8 ";
  refused_budgets_input(base + "--U1 70,30,8 --budgets 20,40,80 --n-max 9", "--n-max");
  refused_budgets_input(
      "budget --N 20000 --N1 451 --target 0.8 --U1 70,30,8 --budgets 20,40,80 "
      "--curve",
      "--n-max");
  refused_budgets_input(base + "--U1 70,30 --budgets 20,40,80", "--U1");
  refused_budgets_input(base + "--U1 70,80,8 --budgets 20,40,80", "--U1");
  refused_budgets_input("budget --N 2000000 --N1 451 --target 0.8 --U1 70,30 --budgets 20,40",
                        "--N");
  refused_budgets_input(base + "--U1 70 --procedure per-budget", "--procedure");
}

TEST_CASE("ltt budget --budgets --curve: the joint rate at every n, the library's to the bit") {
  const std::vector<std::int64_t> U1{70, 30, 8};
  const std::vector<double> alphas{0.25, 0.2, 0.1};
  const std::vector<double> levels =
      ltt::budget_levels(ltt::BudgetProcedure::one_threshold_per_budget, 0.1, 3);
  const Result r = run_ltt(
      "budget --N 3000 --N1 451 --U1 70,30,8 --target 0.5 --budgets 20,40,80 --alphas "
      "0.25,0.2,0.1 --procedure per-budget --curve --n-max 400");
  REQUIRE(r.code == 0);
  std::istringstream csv(r.out);
  std::string line;
  REQUIRE(std::getline(csv, line));
  CHECK(line == "n,rate");
  std::int64_t n = 0, between = 0;
  for (; std::getline(csv, line); ++n) {
    CAPTURE(line);
    REQUIRE(line.starts_with(std::to_string(n) + ","));
    const double rate = ltt::joint_certification_rate(3000, 451, U1, n, alphas, levels);
    CHECK(number(line.substr(line.find(',') + 1)) == rate);
    between += rate > 0.0 && rate < 1.0;
  }
  CHECK(n == 401);
  CHECK(between > 100);  // the curve rises through (0, 1) inside the range shown
  const Result json = run_ltt(
      "budget --N 3000 --N1 451 --U1 70,30,8 --target 0.5 --budgets 20,40,80 --alphas "
      "0.25,0.2,0.1 --procedure per-budget --curve --n-max 400 --json");
  REQUIRE(json.code == 0);
  const auto fields = json_object(json.out);
  CHECK(fields.at("n_max") == "400");
  CHECK(numbers(fields.at("curve")).size() == 401);
}

}  // namespace several_budgets_cli_budget_test

TEST_CASE("ltt validate --budgets: the library's validation; one budget is ltt validate --budget") {
  const BudgetFilesForCli f = budget_files();
  std::vector<double> scores, costs;
  for (int i = 0; i < 1200; ++i) {  // the pool of budget_files(), as the program reads it
    const double cost = static_cast<double>((i * 7919) % 1000) / 10.0;
    costs.push_back(cost);
    scores.push_back(-cost + static_cast<double>((i * 104729) % 600) / 10.0);
  }
  const std::vector<double> budgets{20, 40, 80};
  for (const auto& [name, procedure] :
       {std::pair{"one-threshold", ltt::BudgetProcedure::one_threshold},
        std::pair{"per-budget", ltt::BudgetProcedure::one_threshold_per_budget}}) {
    CAPTURE(name);
    const Result r = run_ltt("validate --pool " + q(f.pool) +
                             " --budgets 20,40,80 --alphas 0.3,0.2,0.1 --n 150 --draws 300 "
                             "--seed 4 --json --procedure " +
                             name);
    REQUIRE(r.code == 0);
    CHECK(r.err.empty());
    ltt::curation::SeveralBudgetsValidationOptions o;
    o.alphas = {0.3, 0.2, 0.1};
    o.procedure = procedure;
    o.calibration_size = 150;
    o.draws = 300;
    o.seed = 4;
    const auto v = ltt::curation::validate_several_budgets(scores, costs, budgets, o);
    std::vector<std::string> paths{"['every_certified']['count']",
                                   "['simultaneous_false_certification']['count']",
                                   "['closed_form_rate']"};
    for (std::size_t k = 0; k < 3; ++k)
      for (const char* key : {"['certification']['count']", "['level']", "['pool_unsafe']"})
        paths.push_back("['budgets'][" + std::to_string(k) + "]" + key);
    const std::vector<std::string> got = budgets_json_values(r.out, paths);
    std::vector<double> expected{static_cast<double>(v.every_certified.count),
                                 static_cast<double>(v.simultaneous_false_certification.count),
                                 v.closed_form_rate};
    for (const auto& b : v.budgets) {
      expected.push_back(static_cast<double>(b.certification.count));
      expected.push_back(b.level);
      expected.push_back(static_cast<double>(b.pool_unsafe));
    }
    for (std::size_t i = 0; i < paths.size(); ++i) {
      CAPTURE(paths[i]);
      CHECK(number(got[i]) == expected[i]);
    }
    // The summary names the guarantee's verdict and a row per budget.
    const Result text = run_ltt("validate --pool " + q(f.pool) +
                                " --budgets 20,40,80 --n 150 --draws 100 --procedure " + name);
    REQUIRE(text.code == 0);
    CHECK(text.out.find("| every budget certified |") != std::string::npos);
    CHECK(text.out.find("guarantee: simultaneous false certification") != std::string::npos);
    CHECK(text.out.find("\n| 80 | 0.25 |") != std::string::npos);
  }
  // One budget: the counts of ltt validate --budget, for either procedure.
  const Result single =
      run_ltt("validate --pool " + q(f.pool) + " --budget 40 --n 150 --draws 300 --seed 4 --json");
  REQUIRE(single.code == 0);
  for (const char* name : {"one-threshold", "per-budget"}) {
    const Result one =
        run_ltt("validate --pool " + q(f.pool) +
                " --budgets 40 --n 150 --draws 300 --seed 4 --json --procedure " + name);
    REQUIRE(one.code == 0);
    CHECK(
        budgets_json_values(one.out, {"['every_certified']", "['simultaneous_false_certification']",
                                      "['budgets'][0]['steps']"}) ==
        budgets_json_values(single.out,
                            {"['certification']", "['false_certification']", "['steps']"}));
  }
}

TEST_CASE("ltt validate --budgets: bad input exits 2 with one line naming the flag") {
  const BudgetFilesForCli f = budget_files();
  const std::string base = "validate --pool " + q(f.pool) + " ";
  refused_budgets_input(base + "--budgets 20,40 --budget 20", "--budget");
  refused_budgets_input(base + "--budgets 20,40 --stop auto", "--stop");
  refused_budgets_input(base + "--budgets 20,40 --procedure holm", "--procedure");
  refused_budgets_input(base + "--alphas 0.1,0.2", "--alphas");
  refused_budgets_input(base + "--budgets 40,20", "--budgets");
  refused_budgets_input(base + "--budgets 20,40 --alphas 0.1", "--alphas");
  refused_budgets_input(base + "--budgets 20,40 --alpha 0.1 --alphas 0.1,0.2", "--alpha");
  refused_budgets_input(base + "--budgets 20,40 --n 1201", "--n");
  const auto no_cost = scratch_dir() / "no_cost_pool.csv";
  std::ofstream(no_cost) << "id,score,unsafe\na,0.5,0\nb,0.2,1\n";
  refused_budgets_input("validate --pool " + q(no_cost) + " --n 1 --budgets 20,40", "cost");
}
