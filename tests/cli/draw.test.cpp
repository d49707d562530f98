// `ltt draw --sequential`: the sequential walk's label order (<curation/label_order.hpp>): the
// default fixed walk's sample members of the grid's largest selection, the stratified order's
// first ids, or the seeded permutation of the whole pool (an anytime rule in the uniform
// order), its prefix with --n; ids as the pool spells them.

#include <doctest/doctest.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <curation/sequential_selection.hpp>
#include <curation/threshold_grid.hpp>

#include "run_program.hpp"

using namespace ltt_cli_test;

TEST_CASE("ltt draw --sequential: the walk's label order, whole or a prefix") {
  const std::string pool = (scratch_dir() / "draw_sequential.csv").string();
  {
    std::ofstream out(pool);
    out << "id,score\n";
    for (int i = 0; i < 40; ++i) out << "t" << i << "," << 40 - i << "\n";
  }
  // an anytime rule in the uniform order: the seeded permutation of the whole pool
  const std::string uniform = "' --sequential --stop labels --order uniform --seed 21";
  const Result all = run_ltt("draw --pool '" + pool + uniform);
  REQUIRE(all.code == 0);
  const std::vector<std::int64_t> order = ltt::curation::draw_label_order(40, 40, 21);
  std::ostringstream want;
  for (const std::int64_t p : order) want << "t" << p << "\n";
  CHECK(all.out == want.str());

  const Result prefix = run_ltt("draw --pool '" + pool + uniform + " --n 5");
  REQUIRE(prefix.code == 0);
  CHECK(all.out.starts_with(prefix.out));
  CHECK(lines(prefix.out) == 5);
  const auto json = json_object(run_ltt("draw --pool '" + pool + uniform + " --n 2 --json").out);
  CHECK(json.at("sequential") == "true");
  CHECK(json.at("order") == "\"uniform\"");
  CHECK(json.at("ids") ==
        "[\"t" + std::to_string(order[0]) + "\", \"t" + std::to_string(order[1]) + "\"]");

  // the stratified order (an anytime rule's default): the permutation's members of S_1 (the
  // top 40 - 33 = 7), which the walk asks for while nothing is certified
  const Result first = run_ltt("draw --pool '" + pool + "' --sequential --stop labels --seed 21");
  REQUIRE(first.code == 0);
  std::ostringstream top;
  for (const std::int64_t p : order)
    if (p < 7) top << "t" << p << "\n";
  CHECK(first.out == top.str());

  // the default, the fixed walk (its cap 200 cut to the pool's 40): the permutation's members
  // of the grid's largest selection (scores 40..1: its top N_K positions)
  std::vector<double> scores;
  for (int i = 0; i < 40; ++i) scores.push_back(40 - i);
  const std::int64_t largest = ltt::curation::threshold_grid(scores).selection_size.back();
  const Result fixed = run_ltt("draw --pool '" + pool + "' --sequential --seed 21");
  REQUIRE(fixed.code == 0);
  std::ostringstream sample;
  for (const std::int64_t p : order)
    if (p < largest) sample << "t" << p << "\n";
  CHECK(fixed.out == sample.str());
  CHECK(lines(fixed.out) == largest);
  // with --cap 20 its draw holds too few of S_1's 7 to certify it whatever their labels: the
  // walk is decided before any label and asks for none
  const Result small_cap = run_ltt("draw --pool '" + pool + "' --sequential --seed 21 --cap 20");
  REQUIRE(small_cap.code == 0);
  CHECK(small_cap.out.empty());
  const auto fixed_json =
      json_object(run_ltt("draw --pool '" + pool + "' --sequential --seed 21 --json").out);
  CHECK(fixed_json.at("order") == "\"uniform\"");
  const Result stratified_depth =
      run_ltt("draw --pool '" + pool + "' --sequential --stop depth --order stratified");
  CHECK(stratified_depth.code == 2);
  CHECK(stratified_depth.err.find("--order: 'stratified' does not go with --stop depth") !=
        std::string::npos);
  const Result cap_alone = run_ltt("draw --pool '" + pool + "' --cap 20 --n 3");
  CHECK(cap_alone.code == 2);
  CHECK(cap_alone.err.find("--cap needs --sequential") != std::string::npos);

  const Result dataset_no_scores = run_ltt("draw --dataset missing.hdf5 --sequential");
  CHECK(dataset_no_scores.code == 2);
  CHECK(dataset_no_scores.err.find("this walk orders its labels by the episodes' scores") !=
        std::string::npos);
  const Result pool_scores = run_ltt("draw --pool '" + pool + "' --sequential --scores s.npy");
  CHECK(pool_scores.code == 2);
  CHECK(pool_scores.err.find("--scores: applies to --dataset") != std::string::npos);

  const Result no_n = run_ltt("draw --pool '" + pool + "' --seed 21");
  CHECK(no_n.code == 2);
  CHECK(no_n.err.find("missing required flag --n") != std::string::npos);
}
