// `ltt certify` end to end: the program's certificate and selection against the curation
// library called directly on the same pool and labels; every input file format (CSV with
// columns in any order and extra or quoted columns, .npy scores and masks, state values);
// --draw, --gate, --drop-unsafe-calibration; each bad input exits 2 with one line naming the
// file and line and leaves no output file; and a small Monte Carlo of Proposition "guarantee"
// through the program itself. The CSV reader is also tested directly.

#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <curation/curation.hpp>
#include <ltt/bounds.hpp>
#include <ltt/certificate_triple.hpp>

#include <data/npy.hpp>

#include <certification/table_reader.hpp>

#include "certify_checks.hpp"
#include "run_program.hpp"

using namespace ltt_cli_test;
namespace cur = ltt::curation;
namespace fs = std::filesystem;

namespace {

fs::path certify_dir() {
  const fs::path dir = scratch_dir() / "certify";
  fs::create_directories(dir);
  return dir;
}

void write_text(const std::string& name, const std::string& text) {
  std::ofstream(certify_dir() / name, std::ios::binary) << text;
}

std::string decimal(double x) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

// `ltt certify <args>` run inside the scratch directory, so file names in messages are short.
Result certify(const std::string& args) {
  return shell("cd '" + certify_dir().string() + "' && '" + std::string(LTT_PROGRAM) +
               "' certify " + args);
}

// A synthetic pool: scores uniform, trajectory unsafe with probability 1.6 (1 - g)^2, costs
// above the budget 25 exactly for the unsafe ones, returns higher for them. Ids are not
// positions (5000 + 3 i), so a mix-up of the two shows.
struct TestPool {
  std::vector<std::int64_t> id;
  std::vector<double> score, episodic_return, episodic_cost;
  std::vector<std::uint8_t> unsafe;
  std::vector<std::int64_t> label_ids, label_bits;  // a uniform draw of n, in shuffled order

  TestPool(std::int64_t N, std::int64_t n, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    for (std::int64_t i = 0; i < N; ++i) {
      id.push_back(5000 + 3 * i);
      const double g = unit(rng);
      score.push_back(g);
      const bool u = unit(rng) < 1.6 * (1 - g) * (1 - g);
      unsafe.push_back(u ? 1 : 0);
      episodic_cost.push_back(u ? 30 + 40 * unit(rng) : 20 * unit(rng));
      episodic_return.push_back(100 * unit(rng) + 50 * u);
    }
    std::vector<std::int64_t> drawn = cur::draw_calibration(N, n, seed + 1);
    std::shuffle(drawn.begin(), drawn.end(), rng);
    for (const std::int64_t p : drawn) {
      label_ids.push_back(id[static_cast<std::size_t>(p)]);
      label_bits.push_back(unsafe[static_cast<std::size_t>(p)]);
    }
  }

  std::int64_t size() const { return static_cast<std::int64_t>(id.size()); }

  std::string csv() const {
    std::string t = "id,score,return,cost,length\n";
    for (std::size_t i = 0; i < id.size(); ++i)
      t += std::to_string(id[i]) + "," + decimal(score[i]) + "," + decimal(episodic_return[i]) +
           "," + decimal(episodic_cost[i]) + ",100\n";
    return t;
  }
  std::string labels_csv() const {
    std::string t = "id,unsafe\n";
    for (std::size_t i = 0; i < label_ids.size(); ++i)
      t += std::to_string(label_ids[i]) + "," + std::to_string(label_bits[i]) + "\n";
    return t;
  }
  cur::Calibration calibration() const {
    return cur::calibration_from_labels(id, label_ids, label_bits);
  }

  std::string ids_text(const std::vector<std::int64_t>& positions) const {
    std::string t;
    for (const std::int64_t p : positions)
      t += std::to_string(id[static_cast<std::size_t>(p)]) + "\n";
    return t;
  }
};

const TestPool& pool() {
  static const TestPool p(2000, 200, 11);
  return p;
}

void write_pool_files() {
  write_text("pool.csv", pool().csv());
  write_text("labels.csv", pool().labels_csv());
}

// The library's own answer for the test pool.
cur::CalibratedSelection library(const cur::CalibratedSelectionOptions& options = {}) {
  return cur::calibrated_selection(pool().score, pool().calibration(), options);
}

void remove_outputs() {
  for (const char* name : {"sel.txt", "cert.json", "sel.npy"}) fs::remove(certify_dir() / name);
}

}  // namespace

// The bar: 0.1 prints as 0.1. Every number of the certificate is the shortest decimal
// of the library's double, and Python's json module reads each back to the same bits.
TEST_CASE("ltt certify --json: \"delta\":0.1, and every number read back bit for bit") {
  write_pool_files();
  const Result r = certify("--pool pool.csv --labels labels.csv --grid 0.85,0.7,0.55 --json");
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(r.out.find("\"alpha\":0.25,\"delta\":0.1,") != std::string::npos);
  CHECK(r.out.find("\"grid\":[0.85,0.7,0.55]") != std::string::npos);
  CHECK(r.out.find("0000000000") == std::string::npos);
  CHECK(r.out.find("9999999999") == std::string::npos);
  cur::CalibratedSelectionOptions options;
  options.quantiles = {0.85, 0.7, 0.55};
  const cur::Certificate c = library(options).certificate;
  const ltt::CertificateTriple t = ltt::certificate_triple(
      2000, c.steps.front().N, c.steps.front().m, c.steps.front().k, 200, c.alpha, c.delta);
  std::vector<double> expected = {c.threshold, c.quantile,         c.alpha, c.delta, t.r_hat,
                                  t.r_lo,      t.conditional_bound};
  for (const cur::CertificateStep& s : c.steps) {
    expected.push_back(s.quantile);
    expected.push_back(s.lambda);
    expected.push_back(s.p);
  }
  std::string bits;
  char hex[24];
  for (const double x : expected) {
    std::snprintf(hex, sizeof hex, "%016llx ",
                  static_cast<unsigned long long>(std::bit_cast<std::uint64_t>(x)));
    bits += hex;
  }
  bits.pop_back();
  CHECK(json_query(r.out,
                   "' '.join(__import__('struct').pack('>d', x).hex() for x in "
                   "[d['threshold'], d['quantile'], d['alpha'], d['delta'], d['triple']['r_hat'], "
                   "d['triple']['r_lo'], d['triple']['conditional_bound']] + "
                   "[x for s in d['steps'] for x in (s['quantile'], s['lambda'], s['p'])])") ==
        bits);
}

TEST_CASE("ltt certify --json: the library's certificate and selection, both files written") {
  write_pool_files();
  remove_outputs();
  const Result r = certify(
      "--pool pool.csv --labels labels.csv --json --selection sel.txt "
      "--certificate cert.json");
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(r.err.empty());
  const auto json = json_object(r.out);
  const cur::CalibratedSelection lib = library();
  const cur::Certificate& c = lib.certificate;
  REQUIRE(c.certified);  // the pool is built to certify at the defaults
  CHECK(json.at("certified") == "true");
  CHECK(json.at("fallback") == "false");
  CHECK(number(json.at("threshold")) == c.threshold);
  CHECK(number(json.at("quantile")) == c.quantile);
  CHECK(json.at("selection_size") == std::to_string(c.selection_size));
  CHECK(json.at("pool_size") == "2000");
  CHECK(json.at("calibration_size") == "200");
  CHECK(json.at("calibration_unsafe") == std::to_string(c.calibration_unsafe));
  CHECK(json.at("certified_step") == std::to_string(*c.certified_step));
  CHECK(json.at("fallback_record") == "null");
  CHECK(step_lines(r.out) == expected_step_lines(c));

  // The triple, from the first step's (N1, m1, k1).
  const cur::CertificateStep& first = c.steps.front();
  const ltt::CertificateTriple t =
      ltt::certificate_triple(2000, first.N, first.m, first.k, 200, c.alpha, c.delta);
  CHECK(number(json_query(r.out, "repr(d['triple']['r_hat'])")) == t.r_hat);
  CHECK(number(json_query(r.out, "repr(d['triple']['r_lo'])")) == t.r_lo);
  CHECK(number(json_query(r.out, "repr(d['triple']['conditional_bound'])")) == t.conditional_bound);
  CHECK(json_query(r.out, "d['triple']['m1']") == std::to_string(first.m));

  CHECK(json.at("inputs").find("\"labels\": \"labels.csv\"") != std::string::npos);
  CHECK(slurp(certify_dir() / "sel.txt") == pool().ids_text(lib.selected));
  CHECK(slurp(certify_dir() / "cert.json") == r.out);
}

TEST_CASE("ltt certify: the summary shows every step and the outcome") {
  write_pool_files();
  const Result r = certify("--pool pool.csv --labels labels.csv");
  REQUIRE_MESSAGE(r.code == 0, r.err);
  const cur::Certificate c = library().certificate;
  CHECK(r.out.starts_with("pool pool.csv: 2000 trajectories\n"));
  CHECK(r.out.find("calibration labels.csv: 200 labels, " + std::to_string(c.calibration_unsafe) +
                   " unsafe") != std::string::npos);
  CHECK(r.out.find("decision") != std::string::npos);
  std::size_t rejected = 0, pos = 0;
  while ((pos = r.out.find("  rejected\n", pos)) != std::string::npos) ++rejected, ++pos;
  CHECK(rejected == static_cast<std::size_t>(*c.certified_step + 1));
  CHECK(r.out.find("certified: threshold lambda = ") != std::string::npos);
  CHECK(r.out.find("certificate triple: r_hat = ") != std::string::npos);
  CHECK(r.out.find("selection: " + std::to_string(c.selection_size) + " trajectories") !=
        std::string::npos);
}

TEST_CASE("ltt certify: the summary of a walk that stops at the last threshold of the grid") {
  // Scores 0..99; 40 labels in the top half, all safe, and 40 in the bottom half, all unsafe:
  // step 1 (the top 50) is rejected, step 2 (all 100, 40 of 80 labels unsafe) is not.
  std::string pool_text = "id,score\n", labels_text = "id,unsafe\n";
  for (int i = 0; i < 100; ++i) pool_text += std::to_string(i) + "," + std::to_string(i) + "\n";
  for (int i = 0; i < 40; ++i)
    labels_text += std::to_string(99 - i) + ",0\n" + std::to_string(i) + ",1\n";
  write_text("last_pool.csv", pool_text);
  write_text("last_labels.csv", labels_text);
  const Result r = certify("--pool last_pool.csv --labels last_labels.csv --grid 0.5,0");
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(r.out.find("not rejected: the walk stops") != std::string::npos);
  CHECK(r.out.find("certified: threshold lambda = 49 at quantile 0.5, step 1") !=
        std::string::npos);
  CHECK(r.out.find("every threshold of the grid rejected") == std::string::npos);
  CHECK(r.out.find("not reached") == std::string::npos);
}

TEST_CASE("ltt certify: refusal and the uncertified fallback") {
  write_pool_files();
  remove_outputs();
  const Result r = certify(
      "--pool pool.csv --labels labels.csv --alpha 0.02 --min-selection 70 "
      "--json --selection sel.txt");
  REQUIRE_MESSAGE(r.code == 0, r.err);
  cur::CalibratedSelectionOptions options;
  options.alpha = 0.02;
  options.minimum_selection = 70;
  const cur::CalibratedSelection lib = library(options);
  REQUIRE_FALSE(lib.certificate.certified);
  const auto json = json_object(r.out);
  CHECK(json.at("certified") == "false");
  CHECK(json.at("fallback") == "true");
  CHECK(json.at("triple") == "null");
  CHECK(json.at("certified_step") == "null");
  CHECK(number(json.at("threshold")) == lib.certificate.threshold);
  CHECK(json_query(r.out, "d['fallback_record']['count']") ==
        std::to_string(lib.certificate.fallback_record->count));
  CHECK(step_lines(r.out) == expected_step_lines(lib.certificate));
  CHECK(slurp(certify_dir() / "sel.txt") == pool().ids_text(lib.selected));

  const Result summary = certify("--pool pool.csv --labels labels.csv --alpha 0.02");
  REQUIRE(summary.code == 0);
  CHECK(summary.out.find("refused: nothing is certified") != std::string::npos);
  CHECK(summary.out.find("uncertified fallback: the top K = ") != std::string::npos);
}

TEST_CASE("ltt certify: grid, delta and --drop-unsafe-calibration reach the library") {
  write_pool_files();
  remove_outputs();
  const Result r = certify(
      "--pool pool.csv --labels labels.csv --grid 0.9,0.7,0.5,0.3 --delta 0.2 "
      "--alpha 0.3 --drop-unsafe-calibration --json --selection sel.txt");
  REQUIRE_MESSAGE(r.code == 0, r.err);
  cur::CalibratedSelectionOptions options;
  options.quantiles = {0.9, 0.7, 0.5, 0.3};
  options.delta = 0.2;
  options.alpha = 0.3;
  options.drop_unsafe_calibration = true;
  const cur::CalibratedSelection lib = library(options);
  const auto json = json_object(r.out);
  CHECK(json.at("dropped") == std::to_string(lib.certificate.dropped));
  CHECK(lib.certificate.dropped > 0);
  CHECK(json.at("selection_size") == std::to_string(lib.certificate.selection_size));
  CHECK(step_lines(r.out) == expected_step_lines(lib.certificate));
  CHECK(slurp(certify_dir() / "sel.txt") == pool().ids_text(lib.selected));
}

TEST_CASE("ltt certify: columns in any order, extra and quoted columns, CRLF, blank lines") {
  const TestPool& p = pool();
  std::string text = "name,cost,\"score\",extra,id\r\n";
  for (std::size_t i = 0; i < p.id.size(); ++i) {
    text += "\"traj, \"\"" + std::to_string(i) + "\"\"\"," + decimal(p.episodic_cost[i]) + "," +
            decimal(p.score[i]) + ",x," + std::to_string(p.id[i]) + "\r\n";
    if (i == 10) text += "\r\n";
  }
  write_text("pool_reordered.csv", text);
  write_text("labels_extra.csv", [&] {
    std::string t = "note,unsafe,id\n";
    for (std::size_t i = 0; i < p.label_ids.size(); ++i)
      t += "\"a\nb\"," + std::to_string(p.label_bits[i]) + "," + std::to_string(p.label_ids[i]) +
           "\n";
    return t;
  }());
  remove_outputs();
  const Result r =
      certify("--pool pool_reordered.csv --labels labels_extra.csv --selection sel.txt");
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(slurp(certify_dir() / "sel.txt") == p.ids_text(library().selected));
}

TEST_CASE("ltt certify and draw: ids are names, matched byte for byte and written as read") {
  // The test pool renamed: names of several shapes (one with a comma and quotes, one with a
  // leading space, which only a quoted field keeps), labels matched by name in another order.
  const TestPool& p = pool();
  const auto name = [&](std::size_t i) -> std::string {
    if (i % 7 == 3) return "ep, \"" + std::to_string(i) + "\"";
    if (i % 7 == 5) return " traj" + std::to_string(i);
    return (i % 2 ? "traj" : "ep-") + std::string(5 - std::to_string(i).size(), '0') +
           std::to_string(i);
  };
  const auto field = [](const std::string& text) { return ltt::certification::csv_field(text); };
  std::string pool_text = "id,score\n";
  for (std::size_t i = 0; i < p.id.size(); ++i)
    pool_text += field(name(i)) + "," + decimal(p.score[i]) + "\n";
  write_text("pool_names.csv", pool_text);
  std::string labels = "id,unsafe\n";
  for (std::size_t i = 0; i < p.label_ids.size(); ++i)
    labels += field(name(static_cast<std::size_t>((p.label_ids[i] - 5000) / 3))) + "," +
              std::to_string(p.label_bits[i]) + "\n";
  write_text("labels_names.csv", labels);
  remove_outputs();
  const Result r = certify("--pool pool_names.csv --labels labels_names.csv --selection sel.txt");
  REQUIRE_MESSAGE(r.code == 0, r.err);
  std::string expected;
  for (const std::int64_t s : library().selected)
    expected += field(name(static_cast<std::size_t>(s))) + "\n";
  CHECK(slurp(certify_dir() / "sel.txt") == expected);
  // The selection file reads back, field by field, as the names themselves.
  ltt::certification::CsvFile back("sel.csv", "id\n" + expected);
  std::size_t k = 0;
  for (ltt::certification::CsvRecord row; back.next(row); ++k)
    CHECK(row.fields[0] == name(static_cast<std::size_t>(library().selected[k])));
  CHECK(k == library().selected.size());

  // A label naming no trajectory, and a name differing only in case, are not in the pool.
  write_text("labels_unknown.csv", "id,unsafe\nEP-00000,1\n");
  const Result unknown = certify("--pool pool_names.csv --labels labels_unknown.csv");
  CHECK(unknown.code == 2);
  CHECK(unknown.err.find("labels_unknown.csv:2: id EP-00000 is not in the pool pool_names.csv") !=
        std::string::npos);

  // ltt draw prints the drawn trajectories' names as CSV fields; JSON gives them as strings.
  const auto draw = [&](const std::string& flags) {
    return shell("cd '" + certify_dir().string() + "' && '" + std::string(LTT_PROGRAM) +
                 "' draw --pool pool_names.csv --n 5 " + flags);
  };
  const Result lines = draw(""), json = draw("--json");
  REQUIRE_MESSAGE(lines.code == 0, lines.err);
  REQUIRE_MESSAGE(json.code == 0, json.err);
  std::string drawn_lines;
  for (const std::int64_t d : cur::draw_calibration(p.size(), 5, 0)) {
    const std::string n = name(static_cast<std::size_t>(d));
    drawn_lines += field(n) + "\n";
    std::string escaped;
    for (const char c : n) escaped += c == '"' ? std::string("\\\"") : std::string(1, c);
    CHECK_MESSAGE(json.out.find("\"" + escaped + "\"") != std::string::npos, json.out);
  }
  CHECK(lines.out == drawn_lines);
}

TEST_CASE("ltt certify: a .npy pool of scores (id = row) and a .npy mask") {
  const TestPool& p = pool();
  ltt::data::write_npy(certify_dir() / "scores.npy", ltt::data::make_array(p.score));
  std::string labels = "id,unsafe\n";
  for (std::size_t i = 0; i < p.label_ids.size(); ++i)
    labels +=
        std::to_string((p.label_ids[i] - 5000) / 3) + "," + std::to_string(p.label_bits[i]) + "\n";
  write_text("labels_rows.csv", labels);
  remove_outputs();
  const Result r = certify("--pool scores.npy --labels labels_rows.csv --selection sel.npy --json");
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(json_object(r.out).at("inputs").find("\"pool_format\": \"npy\"") != std::string::npos);
  const ltt::data::Array mask = ltt::data::read_npy(certify_dir() / "sel.npy");
  CHECK(mask.dtype == ltt::data::DType::uint8);
  REQUIRE(mask.shape == std::vector<std::int64_t>{p.size()});
  const std::vector<std::int64_t> selected = library().selected;
  std::vector<std::int64_t> marked;
  const auto bits = mask.values<std::uint8_t>();
  for (std::size_t i = 0; i < bits.size(); ++i) {
    CHECK(bits[i] <= 1);
    if (bits[i] != 0) marked.push_back(static_cast<std::int64_t>(i));
  }
  CHECK(marked == selected);
  // numpy reads it as a uint8 mask of the pool's rows.
  const Result numpy = shell(std::string("'") + LTT_PYTHON3 +
                             "' -c 'import numpy as np, sys; m = np.load(sys.argv[1]); "
                             "print(m.dtype, m.shape, int(m.sum()))' '" +
                             (certify_dir() / "sel.npy").string() + "'");
  CHECK(numpy.out ==
        "uint8 (" + std::to_string(p.size()) + ",) " + std::to_string(selected.size()) + "\n");
}

TEST_CASE("ltt certify --draw: the library's seeded draw, labels from cost > budget") {
  write_pool_files();
  remove_outputs();
  const Result r =
      certify("--pool pool.csv --draw 150 --budget 25 --seed 9 --json --selection sel.txt");
  REQUIRE_MESSAGE(r.code == 0, r.err);
  const TestPool& p = pool();
  const cur::Calibration c = cur::label_calibration(cur::draw_calibration(p.size(), 150, 9),
                                                    cur::unsafe_bits(p.episodic_cost, 25.0));
  const cur::CalibratedSelection lib = cur::calibrated_selection(p.score, c);
  const auto json = json_object(r.out);
  CHECK(json.at("calibration_size") == "150");
  CHECK(json.at("calibration_unsafe") == std::to_string(c.unsafe_count()));
  CHECK(step_lines(r.out) == expected_step_lines(lib.certificate));
  CHECK(slurp(certify_dir() / "sel.txt") == p.ids_text(lib.selected));
}

TEST_CASE("ltt certify --gate: top half and resampling behind the certificate") {
  write_pool_files();
  const TestPool& p = pool();
  const cur::CalibratedSelection certified = library();
  REQUIRE(certified.certificate.certified);

  SUBCASE("top-half on a certified selection runs") {
    remove_outputs();
    const Result r =
        certify("--pool pool.csv --labels labels.csv --gate top-half --json --selection sel.txt");
    REQUIRE_MESSAGE(r.code == 0, r.err);
    const auto top = cur::top_return_subselection(certified, p.episodic_return);
    CHECK(json_query(r.out, "d['gate']['outcome']") == "certified");
    CHECK(slurp(certify_dir() / "sel.txt") == p.ids_text(top.selected));
  }
  SUBCASE("resample, with repeats one per line and counts in a .npy") {
    remove_outputs();
    const Result r = certify(
        "--pool pool.csv --labels labels.csv --gate resample --kappa 1.5 --seed 4 "
        "--json --selection sel.txt");
    REQUIRE_MESSAGE(r.code == 0, r.err);
    const auto rs = cur::return_weighted_resample(certified, p.episodic_return, 1.5, 4);
    CHECK(slurp(certify_dir() / "sel.txt") == p.ids_text(rs.resampled));
    CHECK(number(json_query(r.out, "repr(d['gate']['unsafe_mass_bound'])")) ==
          *rs.unsafe_mass_bound);
    const Result n = certify(
        "--pool pool.csv --labels labels.csv --gate resample --kappa 1.5 --seed 4 "
        "--selection sel.npy");
    REQUIRE(n.code == 0);
    const ltt::data::Array counts = ltt::data::read_npy(certify_dir() / "sel.npy");
    REQUIRE(counts.dtype == ltt::data::DType::int64);
    std::vector<std::int64_t> expected(static_cast<std::size_t>(p.size()), 0);
    for (const std::int64_t i : rs.resampled) ++expected[static_cast<std::size_t>(i)];
    const auto got = counts.values<std::int64_t>();
    CHECK(std::vector<std::int64_t>(got.begin(), got.end()) == expected);
  }
  SUBCASE("on an uncertified selection: refused unless overridden") {
    remove_outputs();
    const Result refused = certify(
        "--pool pool.csv --labels labels.csv --alpha 0.02 --gate top-half "
        "--json --selection sel.txt");
    REQUIRE(refused.code == 0);
    cur::CalibratedSelectionOptions options;
    options.alpha = 0.02;
    const cur::CalibratedSelection lib = library(options);
    CHECK(json_query(refused.out, "d['gate']['outcome']") == "refused");
    CHECK(slurp(certify_dir() / "sel.txt") == p.ids_text(lib.selected));
    const Result overridden = certify(
        "--pool pool.csv --labels labels.csv --alpha 0.02 --gate top-half "
        "--override-gate --json --selection sel.txt");
    REQUIRE(overridden.code == 0);
    CHECK(json_query(overridden.out, "d['gate']['outcome']") == "overridden");
    const auto top = cur::top_return_subselection(lib, p.episodic_return, 0.5,
                                                  cur::GateOverride::allow_uncertified);
    CHECK(slurp(certify_dir() / "sel.txt") == p.ids_text(top.selected));
  }
}

TEST_CASE("ltt certify --state-values: scores aggregated from per-state values") {
  const TestPool& p = pool();
  // Five states per trajectory, written interleaved (state t of every trajectory, then t + 1).
  std::vector<double> values;
  std::vector<std::int64_t> offsets{0};
  std::string text = "value,id\n";
  std::vector<std::vector<double>> per(p.id.size());
  for (std::size_t i = 0; i < p.id.size(); ++i)
    for (int t = 0; t < 5; ++t)
      per[i].push_back(p.score[i] + 0.03 * ((t * 7 + static_cast<int>(i)) % 5 - 2));
  for (int t = 0; t < 5; ++t)
    for (std::size_t i = 0; i < p.id.size(); ++i)
      text += decimal(per[i][static_cast<std::size_t>(t)]) + "," + std::to_string(p.id[i]) + "\n";
  for (const auto& v : per) {
    values.insert(values.end(), v.begin(), v.end());
    offsets.push_back(static_cast<std::int64_t>(values.size()));
  }
  write_text("states.csv", text);
  write_text("pool_ids.csv", [&] {
    std::string t = "id\n";
    for (const std::int64_t i : p.id) t += std::to_string(i) + "\n";
    return t;
  }());
  write_pool_files();
  for (const auto& [flags, aggregator] :
       {std::pair{std::string(""), cur::Aggregator{}},
        std::pair{std::string("--aggregation minimum"),
                  cur::Aggregator{cur::Aggregation::minimum, 10}},
        std::pair{std::string("--aggregation percentile --percentile 25"),
                  cur::Aggregator{cur::Aggregation::percentile, 25}}}) {
    CAPTURE(flags);
    remove_outputs();
    const Result r = certify("--pool pool_ids.csv --labels labels.csv --state-values states.csv " +
                             flags + " --selection sel.txt --json");
    REQUIRE_MESSAGE(r.code == 0, r.err);
    const std::vector<double> g = cur::trajectory_scores(values, offsets, aggregator);
    const cur::CalibratedSelection lib = cur::calibrated_selection(g, p.calibration());
    CHECK(step_lines(r.out) == expected_step_lines(lib.certificate));
    CHECK(slurp(certify_dir() / "sel.txt") == p.ids_text(lib.selected));
  }
}

namespace {

// Exit 2, nothing on stdout, one line on stderr holding `named`, and no output file left:
// neither the two outputs nor a temporary file in the directory.
void check_refused(const std::string& args, const std::string& named) {
  CAPTURE(args);
  remove_outputs();
  const auto before =
      std::distance(fs::directory_iterator(certify_dir()), fs::directory_iterator());
  const Result r = certify(args + " --selection sel.txt --certificate cert.json");
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(lines(r.err) == 1);
  CHECK(r.err.starts_with("ltt certify: "));
  CHECK_MESSAGE(r.err.find(named) != std::string::npos, r.err);
  CHECK_FALSE(fs::exists(certify_dir() / "sel.txt"));
  CHECK_FALSE(fs::exists(certify_dir() / "cert.json"));
  CHECK(std::distance(fs::directory_iterator(certify_dir()), fs::directory_iterator()) == before);
}

}  // namespace

TEST_CASE("ltt certify: bad pool files name the file and line") {
  write_text("l.csv", "id,unsafe\n1,0\n2,1\n");
  const auto pool_with = [](const std::string& name, const std::string& text) {
    write_text(name, text);
    return "--pool " + name + " --labels l.csv";
  };
  check_refused(pool_with("p_nan.csv", "id,score\n1,0.5\n2,0.25\n3,nan\n"),
                "p_nan.csv:4: score 'nan' is not a finite number");
  check_refused(pool_with("p_inf.csv", "id,score\n1,0.5\n2,-inf\n"),
                "p_inf.csv:3: score '-inf' is not a finite number");
  check_refused(pool_with("p_huge.csv", "id,score\n1,0.5\n2,1e999\n"),
                "p_huge.csv:3: score '1e999' is not a finite number");
  check_refused(pool_with("p_missing.csv", "id,score\n1,0.5\n2,\n"),
                "p_missing.csv:3: score is missing");
  check_refused(pool_with("p_text.csv", "id,score\n1,0.5\n2,high\n"),
                "p_text.csv:3: score 'high' is not a number");
  check_refused(pool_with("p_nocol.csv", "id,value\n1,0.5\n"),
                "p_nocol.csv:1: the header has no 'score' column");
  check_refused(pool_with("p_dup.csv", "id,score\n1,0.5\n2,0.5\n3,0.1\n2,0.7\n"),
                "p_dup.csv:5: id 2 repeats the id of line 3");
  check_refused(pool_with("p_dup_unsorted.csv", "id,score\n9,0.5\n4,0.5\n9,0.1\n4,0.7\n"),
                "p_dup_unsorted.csv:4: id 9 repeats the id of line 2");
  check_refused(pool_with("p_empty.csv", "id,score\n"),
                "p_empty.csv:1: no trajectories after the header");
  check_refused(pool_with("p_void.csv", ""), "p_void.csv: the file is empty");
  check_refused(pool_with("p_fields.csv", "id,score\n1,0.5\n2,0.5,7\n"),
                "p_fields.csv:3: 3 fields where the header has 2");
  check_refused(pool_with("p_id.csv", "id,score\n1,0.5\n,0.5\n"), "p_id.csv:3: id is missing");
  check_refused(pool_with("p_name_dup.csv", "id,score\nep-1,0.5\nep-2,0.5\nep-1,0.1\n"),
                "p_name_dup.csv:4: id ep-1 repeats the id of line 2");
  check_refused(pool_with("p_int_dup.csv", "id,score\n7,0.5\n007,0.5\n"),
                "p_int_dup.csv:3: id 007 repeats the id of line 2");
  check_refused(pool_with("p_quote.csv", "id,score\n1,0.5\n2,\"0.5\n"),
                "p_quote.csv:3: a quoted field is not closed");
  check_refused(pool_with("p_cost.csv", "id,score,cost\n1,0.5,1\n2,0.5,nan\n"),
                "p_cost.csv:3: cost 'nan' is not a finite number");
  check_refused(pool_with("p_length.csv", "id,score,length\n1,0.5,-3\n"),
                "p_length.csv:2: length -3 must not be negative");
  check_refused("--pool absent.csv --labels l.csv", "cannot read 'absent.csv'");

  const std::vector<double> scores{0.5, 0.25, std::nan(""), 0.1};
  ltt::data::write_npy(certify_dir() / "p_nan.npy", ltt::data::make_array(scores));
  check_refused("--pool p_nan.npy --labels l.csv",
                "p_nan.npy, row 2: score nan is not a finite number");
  ltt::data::write_npy(certify_dir() / "p_u1.npy",
                       ltt::data::make_array(std::vector<std::uint8_t>{1, 2, 3}));
  check_refused("--pool p_u1.npy --labels l.csv",
                "p_u1.npy: holds uint8 elements; a one-dimensional float64 or float32 array");
  ltt::data::write_npy(certify_dir() / "p_2d.npy",
                       ltt::data::make_array(std::vector<double>{1, 2, 3, 4}, {2, 2}));
  check_refused("--pool p_2d.npy --labels l.csv", "p_2d.npy: has shape (2, 2)");
  write_text("p_not.npy", "id,score\n1,0.5\n");
  check_refused("--pool p_not.npy --labels l.csv", "p_not.npy: not a .npy file");
}

TEST_CASE("ltt certify: bad labels name the file and line") {
  write_text("p.csv", "id,score,cost\n1,0.9,1\n2,0.8,1\n3,0.7,9\n");
  const auto labels_with = [](const std::string& name, const std::string& text) {
    write_text(name, text);
    return "--pool p.csv --labels " + name;
  };
  check_refused(labels_with("l_unknown.csv", "id,unsafe\n1,0\n7,1\n"),
                "l_unknown.csv:3: id 7 is not in the pool p.csv");
  check_refused(labels_with("l_two.csv", "id,unsafe\n1,2\n"),
                "l_two.csv:2: unsafe '2' must be 0 or 1");
  check_refused(labels_with("l_word.csv", "id,unsafe\n1,yes\n"),
                "l_word.csv:2: unsafe 'yes' must be 0 or 1");
  check_refused(labels_with("l_blank.csv", "id,unsafe\n1,\n"), "l_blank.csv:2: unsafe is missing");
  check_refused(labels_with("l_dup.csv", "id,unsafe\n1,0\n2,1\n1,1\n"),
                "l_dup.csv:4: id 1 is labeled twice (also on line 2)");
  check_refused(labels_with("l_many.csv", "id,unsafe\n1,0\n2,1\n3,1\n4,0\n"),
                "l_many.csv:5: more labels than the 3 trajectories of the pool p.csv");
  check_refused(labels_with("l_none.csv", "id,unsafe\n"),
                "l_none.csv:1: no labels after the header");
  check_refused(labels_with("l_nocol.csv", "id,label\n1,0\n"),
                "l_nocol.csv:1: the header has no 'unsafe' column");

  write_text("s.csv", "id,value\n1,0.5\n2,0.5\n4,0.1\n");
  check_refused("--pool p.csv --labels l_two.csv --state-values s.csv",
                "s.csv:4: id 4 is not in the pool p.csv");
  write_text("s2.csv", "id,value\n1,0.5\n2,0.5\n");
  write_text("l_ok.csv", "id,unsafe\n1,0\n");
  check_refused("--pool p.csv --labels l_ok.csv --state-values s2.csv",
                "s2.csv: no state values for id 3 (p.csv:4)");
}

TEST_CASE("ltt certify: bad flags, named") {
  write_text("p.csv", "id,score,cost\n1,0.9,1\n2,0.8,1\n3,0.7,9\n");
  write_text("l.csv", "id,unsafe\n1,0\n");
  const std::string base = "--pool p.csv --labels l.csv ";
  check_refused(base + "--alpha 1.5", "--alpha: 1.5 must lie in (0, 1)");
  check_refused(base + "--delta 0", "--delta: 0 must lie in (0, 1)");
  check_refused(base + "--grid 0.5,0.6", "--grid: 0.6 is not below 0.5");
  check_refused(base + "--grid 0.5,x", "--grid: 'x' is not a number");
  check_refused(base + "--grid 1.5", "--grid: quantile 1.5 must lie in [0, 1]");
  check_refused(base + "--min-selection 2.5", "--min-selection: '2.5' is not a whole number");
  check_refused(base + "--gate best", "--gate: 'best' is not one of none, top-half, resample");
  check_refused(base + "--gate resample --kappa -1", "--kappa: -1 must be finite and >= 0");
  check_refused(base + "--kappa 1", "--kappa needs --gate resample");
  check_refused(base + "--override-gate", "--override-gate needs --gate");
  check_refused(base + "--gate top-half", "p.csv: --gate top-half needs a 'return' column");
  check_refused(base + "--aggregation minimum", "--aggregation needs --state-values");
  check_refused(base + "--state-values s.csv --aggregation median",
                "--aggregation: 'median' is not one of");
  check_refused(base + "--state-values s.csv --percentile 20",
                "--percentile needs --aggregation percentile");
  check_refused(base + "--draw 2 --budget 5", "--labels and --draw exclude each other");
  check_refused(base + "--budget 5", "--budget needs --draw");
  check_refused("--pool p.csv", "missing --labels");
  check_refused("--pool p.csv --draw 2", "--draw needs --budget");
  check_refused("--pool p.csv --draw 4 --budget 5",
                "--draw: 4 must not exceed the pool size 3 (p.csv)");
  check_refused("--pool p.csv --draw 2 --budget cheap", "--budget: 'cheap' is not a number");
  write_text("nocost.csv", "id,score\n1,0.9\n");
  check_refused("--pool nocost.csv --draw 1 --budget 5",
                "nocost.csv: --draw needs a 'cost' column");
  check_refused(base + "--bogus 1", "unknown flag --bogus");
}

TEST_CASE("ltt certify: unwritable outputs fail before any work, and leave files as they were") {
  write_pool_files();
  remove_outputs();
  const Result r = certify(
      "--pool pool.csv --labels labels.csv --selection no/such/dir/sel.txt "
      "--certificate cert.json");
  CHECK(r.code == 2);
  CHECK(r.err.find("--selection: cannot write 'no/such/dir/sel.txt': no directory") !=
        std::string::npos);
  CHECK_FALSE(fs::exists(certify_dir() / "cert.json"));
  const Result same =
      certify("--pool pool.csv --labels labels.csv --selection x.json --certificate ./x.json");
  CHECK(same.code == 2);
  CHECK(same.err.find("name the same file") != std::string::npos);

  // An earlier run's outputs survive a failed run untouched.
  write_text("sel.txt", "old selection\n");
  write_text("cert.json", "old certificate\n");
  const Result bad = certify(
      "--pool pool.csv --labels labels.csv --alpha 7 --selection sel.txt --certificate cert.json");
  CHECK(bad.code == 2);
  write_text("l_bad.csv", "id,unsafe\n5000,3\n");
  const Result bad_labels =
      certify("--pool pool.csv --labels l_bad.csv --selection sel.txt --certificate cert.json");
  CHECK(bad_labels.code == 2);
  CHECK(slurp(certify_dir() / "sel.txt") == "old selection\n");
  CHECK(slurp(certify_dir() / "cert.json") == "old certificate\n");
}

// Proposition "guarantee" through the program: a pool of 200 where every grid selection holds
// exactly U*_j = floor(alpha N_j) + 1 unsafe trajectories, so every null is true and every
// certificate is a false one. Over 300 seeds of `ltt certify --draw 60`, the Clopper-Pearson
// lower limit (level 1e-3) on the false-certification rate must not exceed delta: the test
// fails when the program certifies too often.
TEST_CASE(
    "ltt certify --draw: false certification at most delta (Monte Carlo through the program)") {
  constexpr std::int64_t N = 200;
  std::vector<double> score(N);
  for (std::int64_t i = 0; i < N; ++i) score[static_cast<std::size_t>(i)] = static_cast<double>(i);
  const cur::ThresholdGrid grid = cur::threshold_grid(score);
  // Rank from the top: unsafe so that the top N_j hold exactly U*_j, the first ones of each block.
  std::vector<std::uint8_t> unsafe_from_top(N, 0);
  std::int64_t placed = 0, start = 0;
  for (std::int64_t j = 0; j < grid.size(); ++j) {
    const std::int64_t Nj = grid.selection_size[static_cast<std::size_t>(j)];
    const std::int64_t U = ltt::null_boundary(Nj, 0.25);
    REQUIRE(U - placed <= Nj - start);
    for (std::int64_t r = start; placed < U; ++r, ++placed)
      unsafe_from_top[static_cast<std::size_t>(r)] = 1;
    start = Nj;
  }
  std::string text = "id,score,cost\n";
  for (std::int64_t i = 0; i < N; ++i)
    text += std::to_string(i) + "," + std::to_string(i) + "," +
            (unsafe_from_top[static_cast<std::size_t>(N - 1 - i)] ? "2" : "0") + "\n";
  write_text("null_pool.csv", text);

  // One shell loop, one process per seed; each prints its JSON on one line.
  const Result r =
      shell("cd '" + certify_dir().string() + "' && for s in $(seq 1 300); do '" +
            std::string(LTT_PROGRAM) +
            "' certify --pool null_pool.csv --draw 60 --budget 1 --seed $s --json || exit 1; done");
  REQUIRE_MESSAGE(r.code == 0, r.err);
  REQUIRE(lines(r.out) == 300);
  std::int64_t certified = 0;
  const std::string needle = "{\"certified\":true";
  for (std::size_t at = r.out.find(needle); at != std::string::npos;
       at = r.out.find(needle, at + 1))
    ++certified;
  MESSAGE("false certifications: " << certified << " of 300");
  CHECK(ltt::clopper_pearson_lower(certified, 300, 1e-3) <= 0.1);
}

TEST_CASE("CsvFile: fields, quotes, line numbers") {
  ltt::certification::CsvFile csv(
      "t.csv", "\xEF\xBB\xBF a , b ,c\n\n1,\"x, \"\"y\"\"\",  3 \r\n\"multi\nline\",2,3\n");
  CHECK(csv.columns().size() == 3);
  CHECK(csv.columns()[0] == "a");
  CHECK(csv.columns()[1] == "b");
  ltt::certification::CsvRecord row;
  REQUIRE(csv.next(row));
  CHECK(row.line == 3);
  CHECK(row.fields[1] == "x, \"y\"");
  CHECK(row.fields[2] == "3");
  REQUIRE(csv.next(row));
  CHECK(row.line == 4);
  CHECK(row.fields[0] == "multi\nline");
  CHECK_FALSE(csv.next(row));
  CHECK(ltt::certification::finite_field(
            csv,
            [] {
              ltt::certification::CsvRecord r;
              r.fields = {"+1.5e3"};
              return r;
            }(),
            0, "x") == 1500.0);
}
