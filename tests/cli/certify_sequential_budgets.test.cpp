// `ltt certify --sequential --budgets` (docs/several-budgets.md, "Sequential: several
// budgets"): the program's certificate equals the library's walk
// (curation::several_budgets_sequential on the same pool, bands and seed) to the bit under both
// procedures; cost and band labels give the same certificate; one budget is `ltt certify
// --sequential --order uniform`'s walk; labels are read in the walk's order and a prefix names
// the next id; --record reads back; every bad input exits 2 with one line and writes nothing.

#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <curation/cost_bands.hpp>
#include <curation/several_budgets_sequential.hpp>

#include "certify_checks.hpp"
#include "run_program.hpp"

using namespace ltt_cli_test;

// Named, not anonymous: cli_tests is a unity build.
namespace certify_sequential_budgets_test {

namespace cur = ltt::curation;

constexpr std::int64_t pool_N = 1200;
constexpr std::int64_t seed = 3;
const std::vector<double> budgets{20.0, 40.0, 80.0};

// Pool of 1200: cost (i * 7919 mod 1000) / 10, score (noise - cost) / 10 with the noise
// (i * 104729 mod 300) (both exact as the CSV writes them); label files with every
// trajectory's cost, band (against 20, 40, 80) and bit at 20, rows from the bottom up.
struct SequentialBudgetFiles {
  std::filesystem::path pool, costs, bands, bits20;
  std::vector<double> score;
  std::vector<std::uint8_t> band;
  std::vector<std::uint8_t> bit20;
};

const SequentialBudgetFiles& files() {
  static const SequentialBudgetFiles f = [] {
    const auto dir = scratch_dir();
    SequentialBudgetFiles s{dir / "sbpool.csv",
                            dir / "sbcost.csv",
                            dir / "sbband.csv",
                            dir / "sbbit20.csv",
                            {},
                            {},
                            {}};
    std::ofstream pool(s.pool), costs(s.costs), bands(s.bands), bits(s.bits20);
    pool << "id,score,return,cost\n";
    costs << "id,cost\n";
    bands << "id,band\n";
    bits << "id,unsafe\n";
    for (std::int64_t i = 0; i < pool_N; ++i) {
      const std::int64_t c = (i * 7919) % 1000, noise = (i * 104729) % 300;
      const double cost = static_cast<double>(c) / 10.0;
      s.score.push_back(static_cast<double>(noise - c) / 10.0);
      pool << "t" << i << ',' << s.score.back() << ',' << 100 - cost << ',' << cost << '\n';
      s.band.push_back(cur::cost_band(cost, budgets));
      s.bit20.push_back(cost > 20.0 ? 1 : 0);
    }
    for (std::int64_t i = pool_N - 1; i >= 0; --i) {
      const auto at = static_cast<std::size_t>(i);
      costs << "t" << i << ',' << static_cast<double>((i * 7919) % 1000) / 10.0 << '\n';
      bands << "t" << i << ',' << int{s.band[at]} << '\n';
      bits << "t" << i << ',' << int{s.bit20[at]} << '\n';
    }
    return s;
  }();
  return f;
}

std::string certify_args(const std::filesystem::path& labels, const std::string& flags) {
  return "certify --pool " + q(files().pool) + " --sequential --seed " + std::to_string(seed) +
         " --labels " + q(labels) + " " + flags;
}

cur::SeveralBudgetsSequentialCertificate library_walk(ltt::BudgetProcedure procedure,
                                                      std::vector<double> alphas,
                                                      std::int64_t cap) {
  cur::SeveralBudgetsSequentialOptions o;
  o.alphas = std::move(alphas);
  o.procedure = procedure;
  o.label_cap = cap;
  return cur::several_budgets_sequential(files().score, files().band, seed, o);
}

void refused(const std::string& args, const std::string& named,
             const std::filesystem::path& certificate) {
  CAPTURE(args);
  const Result r = run_ltt(args + " --certificate " + q(certificate));
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(lines(r.err) == 1);
  CHECK_MESSAGE(r.err.find(named) != std::string::npos, r.err);
  CHECK_FALSE(std::filesystem::exists(certificate));
}


TEST_CASE("ltt certify --sequential --budgets: the library's walk to the bit, both procedures") {
  const SequentialBudgetFiles& f = files();
  const std::vector<double> alphas{0.3, 0.2, 0.1};
  for (const auto& [name, procedure] :
       {std::pair{"one-threshold", ltt::BudgetProcedure::one_threshold},
        std::pair{"per-budget", ltt::BudgetProcedure::one_threshold_per_budget}}) {
    CAPTURE(name);
    const auto want = library_walk(procedure, alphas, 300);
    const Result r = run_ltt(certify_args(
        f.costs,
        std::string("--budgets 20,40,80 --alphas 0.3,0.2,0.1 --n 300 --json --procedure ") + name));
    REQUIRE_MESSAGE(r.code == 0, r.err);
    const auto json = json_object(r.out);
    CHECK(json.at("labels_used") == std::to_string(want.labels_used));
    CHECK(json.at("certified") == (want.certified ? "true" : "false"));
    CHECK(json.at("stopped") == "true");
    CHECK(json.at("reason") == "\"" + std::string(cur::stopping_reason_name(want.reason)) + "\"");
    CHECK(json.at("unused_labels") == std::to_string(pool_N - want.labels_used));
    std::vector<double> bands;
    for (const std::int64_t b : want.band_labels) bands.push_back(static_cast<double>(b));
    CHECK(numbers(json.at("band_labels")) == bands);
    if (procedure == ltt::BudgetProcedure::one_threshold)
      CHECK(numbers(json.at("joint_pvalues")) == want.joint_pvalues);
    else
      CHECK(json.at("joint_pvalues") == "null");
    CHECK(numbers(json.at("levels")) == want.levels);
    for (std::size_t k = 0; k < want.budgets.size(); ++k) {
      const cur::SequentialCertificate& b = want.budgets[k];
      const std::string at = "d['budgets'][" + std::to_string(k) + "]";
      const std::string p =
          json_query(r.out,
                     "' '.join('%r,%r,%d,%d,%s' % (s['p'], s['p_anytime'], s['m'], s['k'], "
                     "s['certified_after']) for s in " +
                         at + "['steps'])");
      std::istringstream words(p);
      for (const cur::SequentialStep& s : b.steps) {
        std::string word;
        REQUIRE(static_cast<bool>(words >> word));
        std::istringstream parts(word);
        std::string pv, pa, m, kk, after;
        std::getline(parts, pv, ',');
        std::getline(parts, pa, ',');
        std::getline(parts, m, ',');
        std::getline(parts, kk, ',');
        std::getline(parts, after, ',');
        CHECK(number(pv) == s.p);
        CHECK(number(pa) == s.p_anytime);
        CHECK(m == std::to_string(s.m));
        CHECK(kk == std::to_string(s.k));
        CHECK(after == (s.certified_after ? std::to_string(*s.certified_after) : "None"));
      }
      CHECK(json_query(r.out, "repr(" + at + "['certified_step'])") ==
            (b.certified_step ? std::to_string(*b.certified_step) : "None"));
      CHECK(json_query(r.out, at + "['selection_size']") == std::to_string(b.selection_size));
      CHECK(number(json_query(r.out, "repr(" + at + "['threshold'])")) == b.threshold);
      CHECK(number(json_query(r.out, "repr(" + at + "['alpha'])")) == alphas[k]);
      CHECK(json_query(r.out, "' '.join(map(str, " + at + "['depth_trace']))") == [&] {
        std::string t;
        for (const std::int64_t d : b.depth_trace) t += (t.empty() ? "" : " ") + std::to_string(d);
        return t;
      }());
    }
  }
}

TEST_CASE(
    "ltt certify --sequential --budgets: cost and band labels agree; one budget is the "
    "single-budget uniform walk") {
  const SequentialBudgetFiles& f = files();
  const std::string flags = "--budgets 20,40,80 --n 250 --json";
  const Result by_cost = run_ltt(certify_args(f.costs, flags));
  const Result by_band = run_ltt(certify_args(f.bands, flags));
  REQUIRE_MESSAGE(by_cost.code == 0, by_cost.err);
  REQUIRE_MESSAGE(by_band.code == 0, by_band.err);
  CHECK(json_query(by_cost.out, "d['budgets']") == json_query(by_band.out, "d['budgets']"));

  const Result one = run_ltt(certify_args(f.bits20, "--budgets 20 --n 250 --json"));
  const Result single =
      run_ltt(certify_args(f.bits20, "--order uniform --stop cap --n 250 --json"));
  REQUIRE_MESSAGE(one.code == 0, one.err);
  REQUIRE_MESSAGE(single.code == 0, single.err);
  for (const std::string key : {"steps", "certified", "certified_step", "threshold",
                                "selection_size", "depth_trace", "fallback_record"})
    CHECK(json_query(one.out, "json.dumps(d['budgets'][0]['" + key + "'])") ==
          json_query(single.out, "json.dumps(d['" + key + "'])"));
}

TEST_CASE("ltt certify --sequential --budgets: a prefix names the next id; --record reads back") {
  const SequentialBudgetFiles& f = files();
  cur::SeveralBudgetsSequentialOptions o;
  o.alphas = {0.25, 0.25, 0.25};
  const cur::SeveralBudgetsSequentialWalk walk(f.score, o, seed);
  const std::vector<std::int64_t> order = walk.planned(8);
  const auto dir = scratch_dir();
  const auto prefix = dir / "sbprefix.csv";
  {
    std::ofstream out(prefix);
    out << "id,cost\n";
    for (std::size_t t = 5; t-- > 0;)  // the first five, in reverse
      out << "t" << order[t] << "," << static_cast<double>((order[t] * 7919) % 1000) / 10.0 << "\n";
  }
  const auto record = dir / "sbrecord.csv";
  std::filesystem::remove(record);
  const Result r = run_ltt(certify_args(prefix, "--budgets 20,40,80 --json --record " + q(record)));
  REQUIRE_MESSAGE(r.code == 0, r.err);
  const auto json = json_object(r.out);
  CHECK(json.at("labels_used") == "5");
  CHECK(json.at("stopped") == "false");
  CHECK(json.at("next_id") == "\"t" + std::to_string(order[5]) + "\"");
  CHECK(json_query(r.out, "' '.join(d['next_ids'][:3])") == "t" + std::to_string(order[5]) + " t" +
                                                                std::to_string(order[6]) + " t" +
                                                                std::to_string(order[7]));
  std::string want = "id,band\n";
  for (std::size_t t = 0; t < 5; ++t)
    want += "t" + std::to_string(order[t]) + "," +
            std::to_string(f.band[static_cast<std::size_t>(order[t])]) + "\n";
  CHECK(slurp(record) == want);
  const Result again = run_ltt(certify_args(record, "--budgets 20,40,80 --json"));
  REQUIRE(again.code == 0);
  CHECK(json_query(again.out, "d['budgets']") == json_query(r.out, "d['budgets']"));
  const Result text = run_ltt(certify_args(prefix, "--budgets 20,40,80"));
  REQUIRE(text.code == 0);
  CHECK(text.out.find("after 5 labels (bands ") != std::string::npos);
  CHECK(text.out.find("not stopped: label t" + std::to_string(order[5]) + " next (label 6") !=
        std::string::npos);
  CHECK(text.out.find("  budget 80 (alpha 0.25, level 0.1, ") != std::string::npos);
}

TEST_CASE("ltt certify --sequential --budgets: the selection written is the tightest budget's") {
  const SequentialBudgetFiles& f = files();
  const auto selection = scratch_dir() / "sbsel.txt";
  std::filesystem::remove(selection);
  const Result r = run_ltt(
      certify_args(f.costs, "--budgets 20,40,80 --n 400 --json --selection " + q(selection)));
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(std::to_string(lines(slurp(selection))) ==
        json_query(r.out, "d['budgets'][0]['selection_size']"));
}

TEST_CASE("ltt certify --sequential --budgets: bad input exits 2 with one line, nothing written") {
  const SequentialBudgetFiles& f = files();
  const auto cert = scratch_dir() / "sbrefused.json";
  std::filesystem::remove(cert);
  const std::string base = "certify --pool " + q(f.pool) + " --sequential --budgets 20,40,80 ";
  const std::string costs = "--labels " + q(f.costs) + " ";
  refused(base + costs + "--stop auto", "--stop", cert);
  refused(base + costs + "--stop stall:20", "--stop", cert);
  refused(base + costs + "--stop target:x", "--stop", cert);
  refused(base + costs + "--stop target:99", "target_step", cert);
  refused(base + costs + "--order stratified", "--order", cert);
  refused(base + costs + "--interactive", "--interactive", cert);
  refused(base + costs + "--refusal-rate 0.1", "--refusal-rate", cert);
  refused(base + "--draw 100", "--draw", cert);
  refused(base, "--labels", cert);
  refused(base + costs + "--n 0", "--n", cert);
  refused(base + costs + "--n 1201", "--n", cert);
  refused(base + costs + "--alphas 0.2,0.1", "--alphas", cert);
  refused(base + costs + "--procedure per-budget --selection " + q(scratch_dir() / "sbx.txt"),
          "--selection", cert);
  refused(base + "--labels " + q(f.bits20), "unsafe", cert);
  const auto bad_band = scratch_dir() / "sbbadband.csv";
  std::ofstream(bad_band) << "id,band\nt1,0\nt2,4\n";
  refused(base + "--labels " + q(bad_band), "sbbadband.csv:3: band 4 must lie in [0, 3]", cert);
}

}  // namespace certify_sequential_budgets_test
