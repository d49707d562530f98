// `ltt draw --sequential`: the sequential walk's label order (curation::draw_label_order), the
// whole pool by default, its prefix with --n; ids as the pool spells them.

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
  const Result all = run_ltt("draw --pool '" + pool + "' --sequential --seed 21");
  REQUIRE(all.code == 0);
  const std::vector<std::int64_t> order = ltt::curation::draw_label_order(40, 40, 21);
  std::ostringstream want;
  for (const std::int64_t p : order) want << "t" << p << "\n";
  CHECK(all.out == want.str());

  const Result prefix = run_ltt("draw --pool '" + pool + "' --sequential --seed 21 --n 5");
  REQUIRE(prefix.code == 0);
  CHECK(all.out.starts_with(prefix.out));
  CHECK(lines(prefix.out) == 5);
  const auto json =
      json_object(run_ltt("draw --pool '" + pool + "' --sequential --seed 21 --n 2 --json").out);
  CHECK(json.at("sequential") == "true");
  CHECK(json.at("ids") ==
        "[\"t" + std::to_string(order[0]) + "\", \"t" + std::to_string(order[1]) + "\"]");

  const Result no_n = run_ltt("draw --pool '" + pool + "' --seed 21");
  CHECK(no_n.code == 2);
  CHECK(no_n.err.find("missing required flag --n") != std::string::npos);
}
