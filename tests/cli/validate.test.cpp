// `ltt validate` end to end: --json is exactly one JSON object (parsed by Python) whose numbers
// are the library's (ltt::curation::validate_guarantee on the same pool, to the last bit); the
// output bytes do not depend on --threads; unsafe from a cost column and --budget; Bonferroni
// and Holm without the closed form and the triple; bad input exits 2 naming the file:line or
// the flag.

#include <doctest/doctest.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include <curation/sequential_validation.hpp>
#include <curation/validation.hpp>

#include "run_program.hpp"

using namespace ltt_cli_test;

namespace {

// A pool of N trajectories, scores descending with the row; the top 15% hold a fraction u1
// unsafe, the rest u_rest, spread evenly. Columns in an unusual order, with an extra one and a
// cost that is over the budget 25 exactly when unsafe.
struct Pool {
  std::vector<double> scores;
  std::vector<std::uint8_t> unsafe;
  std::string file;
};

Pool write_pool(const std::string& name, std::int64_t N, double u1, double u_rest) {
  Pool p;
  const std::int64_t N1 = N - (85 * (N - 1)) / 100;
  const auto spread = [&](std::int64_t from, std::int64_t count, double fraction) {
    const auto bad = static_cast<std::int64_t>(fraction * static_cast<double>(count) + 0.5);
    for (std::int64_t i = 0; i < count; ++i)
      p.unsafe[static_cast<std::size_t>(from + i)] = (i + 1) * bad / count > i * bad / count;
  };
  p.unsafe.assign(static_cast<std::size_t>(N), 0);
  spread(0, N1, u1);
  spread(N1, N - N1, u_rest);
  p.file = (scratch_dir() / name).string();
  std::ofstream out(p.file);
  out << "score,note,unsafe,cost,id\n";
  for (std::int64_t i = 0; i < N; ++i) {
    const double score = static_cast<double>(N - i) / 8.0;  // exact in decimal and binary
    p.scores.push_back(score);
    const std::uint8_t u = p.unsafe[static_cast<std::size_t>(i)];
    out << score << ",row" << i << "," << int{u} << "," << (u ? 30 + i % 7 : 25 - i % 5) << ","
        << 1000 + i << "\n";
  }
  return p;
}

void check_bad_validate_input(const std::string& args, const std::string& named) {
  CAPTURE(args);
  const Result r = run_ltt("validate " + args);
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(lines(r.err) == 1);
  CHECK(r.err.starts_with("ltt validate: "));
  CHECK_MESSAGE(r.err.find(named) != std::string::npos, r.err);
}

// The raw text of `key`'s value in a flat JSON object's text.
std::string field(const std::string& object, const std::string& key) {
  const auto at = object.find("\"" + key + "\": ");
  REQUIRE(at != std::string::npos);
  const auto start = at + key.size() + 4;
  return object.substr(start, object.find_first_of(",}", start) - start);
}

std::string write_file(const std::string& name, const std::string& text) {
  const std::string path = (scratch_dir() / name).string();
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

}  // namespace

TEST_CASE("ltt validate --json: one JSON object with the library's numbers") {
  const Pool pool = write_pool("pool.csv", 1000, 0.1, 0.4);
  const Result r =
      run_ltt("validate --pool '" + pool.file + "' --n 100 --draws 300 --seed 11 --json");
  REQUIRE(r.code == 0);
  CHECK(r.err.empty());
  const auto json = json_object(r.out);

  ltt::curation::ValidationOptions o;
  o.calibration_size = 100;
  o.draws = 300;
  o.seed = 11;
  const auto v = ltt::curation::validate_guarantee(pool.scores, pool.unsafe, o);
  CHECK(json.at("N") == "1000");
  CHECK(json.at("pool_unsafe") == std::to_string(v.pool_unsafe));
  CHECK(json.at("n") == "100");
  CHECK(json.at("draws") == "300");
  CHECK(json.at("seed") == "11");
  CHECK(json.at("procedure") == "\"fixed-sequence\"");
  CHECK(json.at("budget") == "null");
  CHECK(field(json.at("certification"), "count") == std::to_string(v.certification.count));
  CHECK(number(field(json.at("certification"), "rate")) == *v.certification.rate);
  CHECK(number(field(json.at("certification"), "lower")) == v.certification.lower);
  CHECK(field(json.at("false_certification"), "count") ==
        std::to_string(v.false_certification.count));
  CHECK(field(json.at("conditional_violation"), "trials") == std::to_string(v.certification.count));
  CHECK(number(json.at("closed_form_rate")) == *v.closed_form_rate);
  CHECK(number(json.at("purity_margin")) == v.purity_margin);
  CHECK(json.at("returned_none") == std::to_string(v.returned_none));
  CHECK(number(field(json.at("triple"), "mean_r_hat")) == v.triple->mean_r_hat);
  CHECK(field(json.at("triple"), "covered") == std::to_string(v.triple->covered));
  CHECK(json.at("false_certification_above_delta") == "false");
  // One object per grid step, the histogram summing to the draws.
  const std::string steps = json.at("steps");
  std::int64_t objects = 0;
  for (const char c : steps) objects += c == '{';
  CHECK(objects == static_cast<std::int64_t>(v.steps.size()));
}

TEST_CASE("ltt validate: the same bytes whatever --threads; the summary") {
  const Pool pool = write_pool("pool_threads.csv", 800, 0.15, 0.35);
  const std::string base = "validate --pool '" + pool.file + "' --n 80 --draws 200 --seed 3";
  for (const std::string extra : {" --json", "", " --procedure holm --json"}) {
    const Result one = run_ltt(base + extra + " --threads 1");
    const Result two = run_ltt(base + extra + " --threads 2");
    const Result automatic = run_ltt(base + extra);
    REQUIRE(one.code == 0);
    CHECK(one.out == two.out);
    CHECK(one.out == automatic.out);
  }
  const Result summary = run_ltt(base);
  REQUIRE(summary.code == 0);
  CHECK(summary.err.empty());  // no progress line when stderr is not a terminal
  CHECK(summary.out.starts_with("guarantee validation: 200 calibration draws of n = 80"));
  CHECK(summary.out.find("| certification rate | ") != std::string::npos);
  CHECK(summary.out.find("| closed form (Proposition \"certification rate\") | ") !=
        std::string::npos);
  CHECK(summary.out.find("| false certification Pr[certified and violated] | ") !=
        std::string::npos);
  CHECK(summary.out.find("certificate triple from each draw's (m1, k1)") != std::string::npos);
  CHECK(summary.out.find("| none | ") != std::string::npos);
  CHECK(summary.out.find("trust signal") != std::string::npos);
}

TEST_CASE("ltt validate --budget: unsafe = cost > budget from the cost column") {
  const Pool pool = write_pool("pool_cost.csv", 600, 0.1, 0.5);
  const std::string base = "validate --pool '" + pool.file + "' --n 60 --draws 100 --json";
  const Result by_label = run_ltt(base);
  const Result by_cost = run_ltt(base + " --budget 25");
  REQUIRE(by_label.code == 0);
  REQUIRE(by_cost.code == 0);
  auto label = json_object(by_label.out), cost = json_object(by_cost.out);
  CHECK(cost.at("budget") == "25");
  label.erase("budget");
  cost.erase("budget");
  CHECK(label == cost);
  // A lower budget makes more trajectories unsafe.
  const auto lower = json_object(run_ltt(base + " --budget 22.5").out);
  CHECK(std::stoll(lower.at("pool_unsafe")) > std::stoll(label.at("pool_unsafe")));
}

TEST_CASE("ltt validate: Bonferroni and Holm have no closed form and no triple") {
  const Pool pool = write_pool("pool_holm.csv", 600, 0.1, 0.3);
  for (const std::string procedure : {"bonferroni", "holm"}) {
    const Result r = run_ltt("validate --pool '" + pool.file + "' --n 60 --draws 100 --procedure " +
                             procedure + " --json");
    REQUIRE(r.code == 0);
    const auto json = json_object(r.out);
    CHECK(json.at("procedure") == "\"" + procedure + "\"");
    CHECK(json.at("closed_form_rate") == "null");
    CHECK(json.at("triple") == "null");
    const Result summary =
        run_ltt("validate --pool '" + pool.file + "' --n 60 --draws 100 --procedure " + procedure);
    REQUIRE(summary.code == 0);
    CHECK(summary.out.find("does not apply") != std::string::npos);
    CHECK(summary.out.find("certificate triple: not computed") != std::string::npos);
  }
}

TEST_CASE("ltt validate: a custom grid; --help") {
  const Pool pool = write_pool("pool_grid.csv", 500, 0.1, 0.3);
  const Result r =
      run_ltt("validate --pool '" + pool.file + "' --n 50 --draws 50 --grid 0.9,0.5 --json");
  REQUIRE(r.code == 0);
  const auto json = json_object(r.out);
  CHECK(json.at("grid") == "[0.9, 0.5]");
  const Result help = run_ltt("validate --help");
  CHECK(help.code == 0);
  CHECK(help.out.starts_with("usage: ltt validate --pool <value>"));
  CHECK(run_ltt("--help").out.find("validate") != std::string::npos);
}

TEST_CASE("ltt validate: bad input exits 2 naming the file:line or the flag") {
  const Pool pool = write_pool("pool_bad.csv", 200, 0.1, 0.3);
  const std::string p = "--pool '" + pool.file + "'";
  check_bad_validate_input("--n 20", "missing required flag --pool");
  check_bad_validate_input("--pool /nonexistent/pool.csv", "/nonexistent/pool.csv");
  check_bad_validate_input(p + " --n 201", "--n: 201 must not exceed the pool size 200");
  check_bad_validate_input(p + " --n 0", "--n");
  check_bad_validate_input(p + " --draws 0", "--draws");
  check_bad_validate_input(p + " --draws 9007199254740992",
                           "--draws: 9007199254740992 exceeds the maximum 1048576");
  check_bad_validate_input(p + " --threads 257", "--threads: 257 exceeds the maximum 256");
  check_bad_validate_input(p + " --threads 0", "--threads");
  check_bad_validate_input(p + " --procedure sidak", "--procedure: 'sidak'");
  check_bad_validate_input(p + " --grid 0.5,0.6", "--grid: 0.6 is not below 0.5");
  check_bad_validate_input(p + " --grid 0.9,abc", "--grid: 'abc'");
  check_bad_validate_input(p + " --grid 1.5", "--grid");
  check_bad_validate_input(p + " --budget abc", "--budget: 'abc'");
  check_bad_validate_input(p + " --alpha 1", "--alpha");
  check_bad_validate_input(p + " --stop cap", "--stop: applies to --procedure sequential only");
  check_bad_validate_input(p + " --procedure sequential --stop stall:x", "--stop: 'stall:x'");

  const std::string no_unsafe = write_file("no_unsafe.csv", "id,score\n1,0.5\n2,0.4\n");
  check_bad_validate_input("--pool '" + no_unsafe + "' --n 1",
                           "no_unsafe.csv:1: the header has no 'unsafe' column");
  check_bad_validate_input("--pool '" + no_unsafe + "' --n 1 --budget 3",
                           "no_unsafe.csv:1: the header has no 'cost' column");
  const std::string bad_bit = write_file("bad_bit.csv", "id,score,unsafe\n1,0.5,0\n2,0.4,2\n");
  check_bad_validate_input("--pool '" + bad_bit + "' --n 1",
                           "bad_bit.csv:3: unsafe '2' must be 0 or 1");
  const std::string bad_score = write_file("bad_score.csv", "id,score,unsafe\n1,nan,0\n");
  check_bad_validate_input("--pool '" + bad_score + "' --n 1", "bad_score.csv:2: score 'nan'");
  const std::string repeated = write_file("repeated.csv", "id,score,unsafe\n1,0.5,0\n1,0.4,1\n");
  check_bad_validate_input("--pool '" + repeated + "' --n 1", "repeated.csv:3: id 1 repeats");
  const std::string short_row = write_file("short_row.csv", "id,score,unsafe\n1,0.5\n");
  check_bad_validate_input("--pool '" + short_row + "' --n 1", "short_row.csv:2:");
  const std::string empty = write_file("empty.csv", "id,score,unsafe\n");
  check_bad_validate_input("--pool '" + empty + "' --n 1", "empty.csv:1: no trajectories");
  check_bad_validate_input("--pool scores.npy --n 1", "a .npy pool holds scores only");
}

TEST_CASE(
    "ltt validate --procedure sequential: today's keys plus labels_used, the library's numbers") {
  const Pool pool = write_pool("pool_sequential.csv", 1000, 0.05, 0.2);
  for (const std::string stop : {"auto", "early-refusal", "target:0", "cap"}) {
    CAPTURE(stop);
    const Result r = run_ltt("validate --pool '" + pool.file + "' --procedure sequential --stop " +
                             stop + " --n 150 --draws 200 --seed 5 --threads 1 --json");
    REQUIRE(r.code == 0);
    CHECK(r.err.empty());
    const auto json = json_object(r.out);
    ltt::curation::ValidationOptions o;
    o.calibration_size = 150;
    o.draws = 200;
    o.seed = 5;
    ltt::curation::SequentialSelectionOptions walk;
    ltt::curation::apply_stop_rule(stop, walk);
    const auto v = ltt::curation::validate_sequential(pool.scores, pool.unsafe, o, walk);
    CHECK(json.at("procedure") == "\"sequential\"");
    CHECK(json.at("stop") == "\"" + stop + "\"");
    CHECK(json.at("n") == "150");
    CHECK(field(json.at("certification"), "count") == std::to_string(v.certification.count));
    CHECK(number(field(json.at("certification"), "rate")) == *v.certification.rate);
    CHECK(number(field(json.at("false_certification"), "upper")) == v.false_certification.upper);
    CHECK(json.contains("conditional_violation"));
    CHECK(json.at("closed_form_rate") == "null");
    CHECK(json.at("triple") == "null");
    CHECK(number(field(json.at("labels_used"), "mean")) == v.labels_used.mean);
    CHECK(number(field(json.at("labels_used"), "median")) == v.labels_used.median);
    CHECK(field(json.at("labels_used"), "p90") == std::to_string(v.labels_used.p90));
    CHECK(field(json.at("labels_used"), "max") == std::to_string(v.labels_used.max));
    CHECK(json.at("order") == (stop == "auto" ? "\"uniform\"" : "\"stratified\""));  // the fixed walk's
    // the stratified order also ends a run when no label can change it (decided)
    if (stop == "cap") CHECK(v.stopped_by[0] + v.stopped_by[4] == 200);
    CHECK(field(json.at("stopped_by"), "label_cap") == std::to_string(v.stopped_by[0]));
    CHECK(field(json.at("stopped_by"), "decided") == std::to_string(v.stopped_by[4]));
  }
  // the uniform order runs to the cap under --stop cap
  const Result uniform =
      run_ltt("validate --pool '" + pool.file + "' --procedure sequential --order uniform " +
              "--stop cap --n 150 --draws 50 --json");
  REQUIRE(uniform.code == 0);
  CHECK(json_object(uniform.out).at("order") == "\"uniform\"");
  CHECK(number(field(json_object(uniform.out).at("labels_used"), "mean")) == 150.0);
  // --refusal-rate: the user's threshold of early refusal, the library's numbers
  const Pool bad = write_pool("pool_refusing.csv", 1000, 0.45, 0.5);
  double previous_mean = 1e9;
  for (const double rate : {0.01, 0.05, 0.3}) {
    const Result r = run_ltt("validate --pool '" + bad.file + "' --procedure sequential " +
                             "--stop early-refusal --refusal-rate " + std::to_string(rate) +
                             " --n 150 --draws 100 --seed 2 --json");
    REQUIRE(r.code == 0);
    ltt::curation::ValidationOptions o;
    o.calibration_size = 150;
    o.draws = 100;
    o.seed = 2;
    ltt::curation::SequentialSelectionOptions walk;
    ltt::curation::apply_stop_rule("early-refusal", walk);
    walk.refusal_rate = rate;
    const auto v = ltt::curation::validate_sequential(bad.scores, bad.unsafe, o, walk);
    const double mean = number(field(json_object(r.out).at("labels_used"), "mean"));
    CHECK(mean == v.labels_used.mean);
    CHECK(mean <= previous_mean);  // a higher threshold refuses no later
    previous_mean = mean;
  }
  const Result misplaced = run_ltt("validate --pool '" + pool.file + "' --order uniform --n 10");
  CHECK(misplaced.code == 2);
  CHECK(misplaced.err.find("--order: applies to --procedure sequential only") != std::string::npos);
  const Result text =
      run_ltt("validate --pool '" + pool.file + "' --procedure sequential --n 150 --draws 100");
  REQUIRE(text.code == 0);
  CHECK(text.out.find("labels used per run: mean") != std::string::npos);
  CHECK(text.out.find("--stop auto") != std::string::npos);
}
