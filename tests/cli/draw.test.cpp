// `ltt draw --sequential`: the sequential walk's label order (<curation/label_order.hpp>): the
// stratified order's first ids, or the seeded permutation of the whole pool (--order uniform),
// its prefix with --n; ids as the pool spells them.

#include <doctest/doctest.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <curation/sequential_selection.hpp>

#include "run_program.hpp"

using namespace ltt_cli_test;

TEST_CASE("ltt draw --sequential: the walk's label order, whole or a prefix") {
  const std::string pool = (scratch_dir() / "draw_sequential.csv").string();
  {
    std::ofstream out(pool);
    out << "id,score\n";
    for (int i = 0; i < 40; ++i) out << "t" << i << "," << 40 - i << "\n";
  }
  // --order uniform: the seeded permutation of the whole pool
  const Result all = run_ltt("draw --pool '" + pool + "' --sequential --order uniform --seed 21");
  REQUIRE(all.code == 0);
  const std::vector<std::int64_t> order = ltt::curation::draw_label_order(40, 40, 21);
  std::ostringstream want;
  for (const std::int64_t p : order) want << "t" << p << "\n";
  CHECK(all.out == want.str());

  const Result prefix =
      run_ltt("draw --pool '" + pool + "' --sequential --order uniform --seed 21 --n 5");
  REQUIRE(prefix.code == 0);
  CHECK(all.out.starts_with(prefix.out));
  CHECK(lines(prefix.out) == 5);
  const auto json = json_object(
      run_ltt("draw --pool '" + pool + "' --sequential --order uniform --seed 21 --n 2 --json")
          .out);
  CHECK(json.at("sequential") == "true");
  CHECK(json.at("order") == "\"uniform\"");
  CHECK(json.at("ids") ==
        "[\"t" + std::to_string(order[0]) + "\", \"t" + std::to_string(order[1]) + "\"]");

  // the stratified order (default): the permutation's members of S_1 (the top 40 - 33 = 7),
  // which the walk asks for while nothing is certified
  const Result first = run_ltt("draw --pool '" + pool + "' --sequential --seed 21");
  REQUIRE(first.code == 0);
  std::ostringstream top;
  for (const std::int64_t p : order)
    if (p < 7) top << "t" << p << "\n";
  CHECK(first.out == top.str());
  const Result dataset_no_scores = run_ltt("draw --dataset missing.hdf5 --sequential");
  CHECK(dataset_no_scores.code == 2);
  CHECK(dataset_no_scores.err.find("the stratified order needs the episodes' scores") !=
        std::string::npos);
  const Result pool_scores = run_ltt("draw --pool '" + pool + "' --sequential --scores s.npy");
  CHECK(pool_scores.code == 2);
  CHECK(pool_scores.err.find("--scores: applies to --dataset") != std::string::npos);

  const Result no_n = run_ltt("draw --pool '" + pool + "' --seed 21");
  CHECK(no_n.code == 2);
  CHECK(no_n.err.find("missing required flag --n") != std::string::npos);
}
