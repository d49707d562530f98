// `ltt certify --dataset` end to end on DSRL-layout files that h5py and numpy write at test
// time (make_certify_dataset.py): the certificate against the curation library on the same
// episode scores and costs, the scores in each accepted form (per episode, per row, CSV and
// .npy), and the written selection read back by h5py and numpy
// (tests/data/check_dsrl_selection.py): exactly the selected episodes, every key and dtype.
// Bad inputs exit 2 with one line naming the file and key or line, and leave no output.

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <span>
#include <string>
#include <vector>

#include <curation/curation.hpp>
#include <data/npy.hpp>

#include "certify_checks.hpp"
#include "run_program.hpp"

using namespace ltt_cli_test;
using ltt::data::detail::cat;  // GCC 12 warns falsely on some chains of string + (bug 105329)
namespace cur = ltt::curation;
namespace fs = std::filesystem;

namespace {

constexpr double dataset_budget = 10.0;  // make_certify_dataset.py: costs are far from it

// The generated files, written once per test process.
fs::path dataset_dir() {
  static const fs::path dir = [] {
    const fs::path d = scratch_dir() / "dataset";
    fs::create_directories(d);
    const Result r =
        shell(std::string("'") + LTT_PYTHON3 + "' '" + LTT_CLI_TEST_SCRIPTS +
              "/make_certify_dataset.py' '" + d.string() + "'" + (with_hdf5 ? "" : " --no-hdf5"));
    if (r.code != 0) throw std::runtime_error("make_certify_dataset.py failed: " + r.err);
    return d;
  }();
  return dir;
}

// The dataset in the store this build reads: d.hdf5, or the .npy directory d.
std::string dataset_name() { return with_hdf5 ? "d.hdf5" : "d"; }
std::string selection_name() { return with_hdf5 ? "sel.hdf5" : "sel"; }

Result certify_dataset_run(const std::string& args) {
  return shell("cd '" + dataset_dir().string() + "' && '" + std::string(LTT_PROGRAM) +
               "' certify " + args);
}

// What Python computed: per episode (start, length, return, cost), and the scores g.
struct Truth {
  std::vector<std::int64_t> start, length;
  std::vector<double> episodic_return, episodic_cost, score;
  std::int64_t rows = 0;

  std::int64_t episodes() const { return static_cast<std::int64_t>(score.size()); }
};

const Truth& truth() {
  static const Truth truth = [] {
    Truth t;
    const ltt::data::Array e = ltt::data::read_npy(dataset_dir() / "episodes.npy");
    const auto x = e.values<double>();
    for (std::int64_t i = 0; i < e.rows(); ++i) {
      const auto r = static_cast<std::size_t>(4 * i);
      t.start.push_back(static_cast<std::int64_t>(x[r]));
      t.length.push_back(static_cast<std::int64_t>(x[r + 1]));
      t.episodic_return.push_back(x[r + 2]);
      t.episodic_cost.push_back(x[r + 3]);
    }
    t.score = ltt::data::read_npy_vector(dataset_dir() / "scores.npy");
    t.rows =
        static_cast<std::int64_t>(ltt::data::read_npy_vector(dataset_dir() / "values.npy").size());
    return t;
  }();
  return truth;
}

cur::Calibration drawn(std::int64_t n, std::uint64_t seed) {
  const Truth& t = truth();
  return cur::label_calibration(cur::draw_calibration(t.episodes(), n, seed),
                                cur::unsafe_bits(t.episodic_cost, dataset_budget));
}

std::string indices_text(const std::vector<std::int64_t>& indices) {
  std::string text;
  for (const std::int64_t i : indices) text += cat(" ", std::to_string(i));
  return text;
}

// h5py (or numpy for a .npy directory) reads `out` and finds exactly the rows of `indices`
// of the dataset, key by key, with the dataset's dtypes and attributes.
void check_selection_file(const std::string& out, const std::vector<std::int64_t>& indices) {
  const Result r =
      shell("cd '" + dataset_dir().string() + "' && '" + LTT_PYTHON3 + "' '" +
            LTT_DSRL_SELECTION_CHECK + "' " + dataset_name() + " " + out + indices_text(indices));
  CHECK_MESSAGE(r.code == 0, r.err);
}

std::vector<std::int64_t> npy_int64(const std::string& name) {
  const ltt::data::Array a = ltt::data::read_npy(dataset_dir() / name);
  REQUIRE(a.dtype == ltt::data::DType::int64);
  REQUIRE(a.rank() == 1);
  const auto v = a.values<std::int64_t>();
  return {v.begin(), v.end()};
}

void remove_dataset_outputs() {
  for (const char* name : {"sel.hdf5", "sel.npy", "tm.npy", "cert.json"})
    fs::remove(dataset_dir() / name);
  fs::remove_all(dataset_dir() / "sel");
}

}  // namespace

TEST_CASE("ltt certify --dataset: the library's certificate, the selection back in DSRL layout") {
  remove_dataset_outputs();
  const Result r =
      certify_dataset_run("--dataset " + dataset_name() +
                          " --scores scores.npy --draw 120 --budget 10 --seed 3 --json "
                          "--selection " +
                          selection_name() + " --transition-mask tm.npy --certificate cert.json");
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(r.err.empty());
  const Truth& t = truth();
  const cur::CalibratedSelection lib = cur::calibrated_selection(t.score, drawn(120, 3));
  const cur::Certificate& c = lib.certificate;
  REQUIRE(c.certified);  // the dataset is built to certify
  const auto json = json_object(r.out);
  CHECK(json.at("certified") == "true");
  CHECK(number(json.at("threshold")) == c.threshold);
  CHECK(json.at("pool_size") == std::to_string(t.episodes()));
  CHECK(json.at("selection_size") == std::to_string(c.selection_size));
  CHECK(json.at("calibration_unsafe") == std::to_string(c.calibration_unsafe));
  CHECK(step_lines(r.out) == expected_step_lines(c));
  CHECK(json_query(r.out, "d['inputs']['dataset']['episodes']") == std::to_string(t.episodes()));
  CHECK(json_query(r.out, "d['inputs']['dataset']['transitions']") == std::to_string(t.rows));
  CHECK(json_query(r.out, "d['inputs']['dataset']['dropped_tail']") == "3");
  CHECK(json_query(r.out, "d['output']['selection_format']") ==
        (with_hdf5 ? "dsrl-hdf5" : "dsrl-npy-directory"));
  std::int64_t rows = 0;
  for (const std::int64_t e : lib.selected) rows += t.length[static_cast<std::size_t>(e)];
  CHECK(json_query(r.out, "d['output']['written_rows']") == std::to_string(rows));

  check_selection_file(selection_name(), lib.selected);
  // The transition mask: bool, one per row, true exactly on the selected episodes' rows.
  const ltt::data::Array mask = ltt::data::read_npy(dataset_dir() / "tm.npy");
  REQUIRE(mask.dtype == ltt::data::DType::boolean);
  REQUIRE(mask.shape == std::vector<std::int64_t>{t.rows});
  std::vector<std::uint8_t> expected(static_cast<std::size_t>(t.rows), 0);
  for (const std::int64_t e : lib.selected)
    for (std::int64_t r0 = 0; r0 < t.length[static_cast<std::size_t>(e)]; ++r0)
      expected[static_cast<std::size_t>(t.start[static_cast<std::size_t>(e)] + r0)] = 1;
  const auto got = mask.values<std::uint8_t>();
  CHECK(std::vector<std::uint8_t>(got.begin(), got.end()) == expected);
  CHECK(slurp(dataset_dir() / "cert.json") == r.out);

  // The same selection as episode indices.
  const Result n =
      certify_dataset_run("--dataset " + dataset_name() +
                          " --scores scores.npy --draw 120 --budget 10 --seed 3 --selection "
                          "sel.npy --json");
  REQUIRE_MESSAGE(n.code == 0, n.err);
  CHECK(json_query(n.out, "d['output']['selection_format']") == "npy-episode-indices-int64");
  CHECK(npy_int64("sel.npy") == lib.selected);
}

TEST_CASE("ltt certify --dataset --sequential: the walk on a DSRL file, the selection back") {
  remove_dataset_outputs();
  const Truth& t = truth();
  const std::vector<std::uint8_t> unsafe = cur::unsafe_bits(t.episodic_cost, dataset_budget);
  // the labels the walk asks for (seed 3, the defaults), by episode index, in its order
  cur::SequentialSelectionOptions o;
  o.label_cap = std::min<std::int64_t>(200, t.episodes());
  cur::apply_stop_rule("auto", o);
  cur::SequentialWalk walk(t.score, o, 3);
  // ltt draw --sequential lists the walk's first ids from the episodes' scores
  const Result draw = shell("cd '" + dataset_dir().string() + "' && '" + std::string(LTT_PROGRAM) +
                            "' draw --dataset " + dataset_name() +
                            " --scores scores.npy --sequential --seed 3 --n 5");
  REQUIRE_MESSAGE(draw.code == 0, draw.err);
  std::string first_five;
  for (const std::int64_t e : walk.planned(5)) first_five += std::to_string(e) + "\n";
  CHECK(draw.out == first_five);
  std::ofstream labels(dataset_dir() / "seq_labels.csv");
  labels << "id,unsafe\n";
  while (!walk.stopping_reason()) {
    const std::int64_t e = *walk.next_position();
    labels << e << "," << int{unsafe[static_cast<std::size_t>(e)]} << "\n";
    walk.add_label(e, unsafe[static_cast<std::size_t>(e)] != 0);
  }
  labels.close();
  const cur::SequentialCertificate want = walk.certificate(*walk.stopping_reason());
  const Result r =
      certify_dataset_run("--dataset " + dataset_name() + " --scores scores.npy --sequential " +
                          "--seed 3 --n " + std::to_string(o.label_cap) +
                          " --labels seq_labels.csv --json --selection " + selection_name());
  REQUIRE_MESSAGE(r.code == 0, r.err);
  const auto json = json_object(r.out);
  CHECK(json.at("labels_used") == std::to_string(want.labels_used));
  CHECK(json.at("reason") == "\"" + std::string(cur::stopping_reason_name(want.reason)) + "\"");
  CHECK(json.at("certified_step") ==
        (want.certified_step ? std::to_string(*want.certified_step) : "null"));
  REQUIRE(want.certified);  // the dataset is built to certify
  std::vector<std::int64_t> selected;
  for (std::int64_t e = 0; e < t.episodes(); ++e)
    if (t.score[static_cast<std::size_t>(e)] >= want.threshold) selected.push_back(e);
  CHECK(json.at("selection_size") == std::to_string(selected.size()));
  check_selection_file(selection_name(), selected);
  MESSAGE("DSRL file, " << t.episodes() << " episodes: certified step " << *want.certified_step + 1
                        << " after " << want.labels_used << " labels ("
                        << cur::stopping_reason_name(want.reason) << ")");
}

TEST_CASE("ltt certify --dataset: every form of the scores gives the same certificate") {
  // make_certify_dataset.py makes each episode's state values average exactly to its score.
  const std::string base =
      "--dataset " + dataset_name() + " --draw 120 --budget 10 --seed 3 --json ";
  const Result reference = certify_dataset_run(base + "--scores scores.npy");
  REQUIRE_MESSAGE(reference.code == 0, reference.err);
  const std::vector<std::string> steps = step_lines(reference.out);
  for (const std::string form : {"--scores scores.csv", "--state-values values.npy",
                                 "--state-values values.csv", "--state-values values_id.csv"}) {
    CAPTURE(form);
    const Result r = certify_dataset_run(base + form);
    REQUIRE_MESSAGE(r.code == 0, r.err);
    CHECK(step_lines(r.out) == steps);
    CHECK(json_query(r.out, "d['selection_size']") ==
          json_query(reference.out, "d['selection_size']"));
  }

  // Another aggregation: the library on the per-row values grouped by DSRL's episodes.
  const Truth& t = truth();
  const std::vector<double> values = ltt::data::read_npy_vector(dataset_dir() / "values.npy");
  std::vector<std::int64_t> offsets{0};
  for (std::size_t e = 0; e < t.length.size(); ++e) offsets.push_back(t.start[e] + t.length[e]);
  const std::vector<double> g = cur::trajectory_scores(
      std::span<const double>(values).first(static_cast<std::size_t>(offsets.back())), offsets,
      cur::Aggregator{cur::Aggregation::percentile, 10});
  const Result p = certify_dataset_run(base + "--state-values values.npy --aggregation percentile");
  REQUIRE_MESSAGE(p.code == 0, p.err);
  CHECK(step_lines(p.out) ==
        expected_step_lines(cur::calibrated_selection(g, drawn(120, 3)).certificate));
}

TEST_CASE("ltt certify --dataset: labels by episode index, a .npy directory, the summary") {
  remove_dataset_outputs();
  // labels.csv: id,unsafe for 150 episodes (id = episode index).
  const Truth& t = truth();
  std::vector<std::int64_t> ids, bits;
  {
    std::ifstream in(dataset_dir() / "labels.csv");
    std::string line;
    std::getline(in, line);
    while (std::getline(in, line)) {
      const auto comma = line.find(',');
      ids.push_back(std::stoll(line.substr(0, comma)));
      bits.push_back(std::stoll(line.substr(comma + 1)));
    }
  }
  std::vector<std::int64_t> episode_ids(t.score.size());
  for (std::size_t i = 0; i < episode_ids.size(); ++i)
    episode_ids[i] = static_cast<std::int64_t>(i);
  const cur::CalibratedSelection lib =
      cur::calibrated_selection(t.score, cur::calibration_from_labels(episode_ids, ids, bits));

  const Result r =
      certify_dataset_run("--dataset d --scores scores.npy --labels labels.csv --selection sel");
  REQUIRE_MESSAGE(r.code == 0, r.err);
  const std::string first_line =
      cat("dataset d (.npy directory): ", std::to_string(t.episodes()), " episodes in ",
          std::to_string(t.rows), " rows (the last 3 rows, a truncated episode, are in none)\n");
  CHECK(r.out.starts_with(first_line));
  CHECK(r.out.find("\nscores: scores.npy, one per episode\n") != std::string::npos);
  CHECK(r.out.find("calibration labels.csv: 150 labels") != std::string::npos);
  CHECK(r.out.find(cat("wrote ", std::to_string(lib.selected.size()), " episodes, ")) !=
        std::string::npos);
  CHECK(fs::is_directory(dataset_dir() / "sel"));
  CHECK(fs::exists(dataset_dir() / "sel" / "infos_step.npy"));  // other keys come along
  // DSRL's own reading of the directory: np.load of each key.
  const Result check = shell("cd '" + dataset_dir().string() + "' && '" + LTT_PYTHON3 + "' '" +
                             LTT_DSRL_SELECTION_CHECK + "' d sel" + indices_text(lib.selected));
  CHECK_MESSAGE(check.code == 0, check.err);
}

TEST_CASE("ltt certify --dataset --gate resample: the draws, repeats written again") {
  remove_dataset_outputs();
  const std::string args = "--dataset " + dataset_name() +
                           " --scores scores.npy --draw 120 --budget 10 --seed 5 --gate resample "
                           "--kappa 1 --json --selection ";
  const Result r = certify_dataset_run(args + selection_name());
  REQUIRE_MESSAGE(r.code == 0, r.err);
  const Truth& t = truth();
  const cur::CalibratedSelection lib = cur::calibrated_selection(t.score, drawn(120, 5));
  REQUIRE(lib.certificate.certified);
  const cur::ReturnWeightedResample rs =
      cur::return_weighted_resample(lib, std::span<const double>(t.episodic_return), 1.0, 5);
  std::int64_t repeats = 0;
  for (std::size_t i = 1; i < rs.resampled.size(); ++i)
    repeats += rs.resampled[i] == rs.resampled[i - 1];
  CHECK(repeats > 0);
  check_selection_file(selection_name(), rs.resampled);
  const Result n = certify_dataset_run(args + "sel.npy");
  REQUIRE_MESSAGE(n.code == 0, n.err);
  CHECK(npy_int64("sel.npy") == rs.resampled);
}

namespace {

// Exit 2, nothing on stdout, one line on stderr holding `named`, and no file created in the
// directory (no output, no temporary).
void check_dataset_refused(const std::string& args, const std::string& named) {
  CAPTURE(args);
  remove_dataset_outputs();
  const auto before =
      std::distance(fs::directory_iterator(dataset_dir()), fs::directory_iterator());
  const Result r = certify_dataset_run(args);
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(lines(r.err) == 1);
  CHECK(r.err.starts_with("ltt certify: "));
  CHECK_MESSAGE(r.err.find(named) != std::string::npos, r.err);
  CHECK(std::distance(fs::directory_iterator(dataset_dir()), fs::directory_iterator()) == before);
}

void write_dataset_text(const std::string& name, const std::string& text) {
  std::ofstream(dataset_dir() / name, std::ios::binary) << text;
}

}  // namespace

TEST_CASE("ltt certify --dataset: bad input names the file and key or line, writes nothing") {
  const Truth& t = truth();
  const std::string E = std::to_string(t.episodes()), N = std::to_string(t.rows);
  const std::string d = dataset_name();
  const std::string outputs =
      " --selection " + selection_name() + " --transition-mask tm.npy --certificate cert.json";
  const std::string draw = " --draw 120 --budget 10" + outputs;

  check_dataset_refused(
      "--dataset missing_costs --scores scores.npy --draw 120 --budget 10 "
      "--selection sel --transition-mask tm.npy --certificate cert.json",
      "missing_costs: key 'costs' is missing");
  if (with_hdf5)
    check_dataset_refused("--dataset missing_costs.hdf5 --scores scores.npy" + draw,
                          "missing_costs.hdf5: key 'costs' is missing");
  check_dataset_refused("--dataset absent.hdf5 --scores scores.npy" + draw, "absent.hdf5");

  // Scores of the wrong count, per-row values given as per-episode scores and back.
  std::vector<double> short_scores(t.score.begin(), t.score.end() - 1);
  ltt::data::write_npy(dataset_dir() / "short.npy", ltt::data::make_array(short_scores));
  check_dataset_refused("--dataset " + d + " --scores short.npy" + draw,
                        cat("short.npy: ", std::to_string(t.episodes() - 1), " scores for the ", E,
                            " episodes of ", d));
  check_dataset_refused("--dataset " + d + " --scores values.npy" + draw,
                        "values.npy: " + N + " scores for the " + E + " episodes of " + d +
                            "; one score per episode, in episode order (one per transition row is "
                            "--state-values)");
  check_dataset_refused(
      "--dataset " + d + " --state-values scores.npy" + draw,
      "scores.npy: " + E + " state values for the " + N + " transition rows of " + d);
  write_dataset_text("v_short.csv", "value\n0.5\n0.25\n");
  check_dataset_refused("--dataset " + d + " --state-values v_short.csv" + draw,
                        "v_short.csv: 2 state values for the " + N + " transition rows");
  write_dataset_text("v_nan.csv", "value\n0.5\nnan\n");
  check_dataset_refused("--dataset " + d + " --state-values v_nan.csv" + draw,
                        "v_nan.csv:3: value 'nan' is not a finite number");
  ltt::data::write_npy(dataset_dir() / "v_u1.npy",
                       ltt::data::make_array(std::vector<std::uint8_t>{1, 2}));
  check_dataset_refused("--dataset " + d + " --state-values v_u1.npy" + draw,
                        "v_u1.npy: holds uint8 elements");

  // Per-episode score CSVs: unknown, repeated and missing episodes.
  write_dataset_text("s_range.csv", "id,score\n0,0.5\n" + E + ",0.1\n");
  check_dataset_refused("--dataset " + d + " --scores s_range.csv" + draw,
                        cat("s_range.csv:3: id ", E, " is not an episode of ", d, " (", E,
                            " episodes, 0 to ", std::to_string(t.episodes() - 1), ")"));
  write_dataset_text("s_dup.csv", "id,score\n3,0.5\n4,0.1\n3,0.2\n");
  check_dataset_refused("--dataset " + d + " --scores s_dup.csv" + draw,
                        "s_dup.csv:4: episode 3 is scored twice (also on line 2)");
  write_dataset_text("s_few.csv", "id,score\n0,0.5\n");
  check_dataset_refused("--dataset " + d + " --scores s_few.csv" + draw,
                        "s_few.csv: no score for episode 1 of " + d);
  write_dataset_text("s_nocol.csv", "episode,score\n0,0.5\n");
  check_dataset_refused("--dataset " + d + " --scores s_nocol.csv" + draw,
                        "s_nocol.csv:1: the header has no 'id' column (the episode index)");
  write_dataset_text("l_bad.csv", "id,unsafe\n999,1\n");
  check_dataset_refused("--dataset " + d + " --scores scores.npy --labels l_bad.csv" + outputs,
                        "l_bad.csv:2: id 999 is not an episode of " + d);
  check_dataset_refused("--dataset " + d + " --scores scores.npy --draw 401 --budget 10" + outputs,
                        "--draw: 401 must not exceed the pool size " + E + " (" + d + ")");

  // Flags that contradict each other, and outputs that cannot be what they are named.
  const std::string scored = "--dataset " + d + " --scores scores.npy --draw 120 --budget 10";
  check_dataset_refused("--dataset " + d + " --draw 120 --budget 10", "--dataset needs --scores");
  check_dataset_refused(scored + " --state-values values.npy",
                        "--scores and --state-values exclude each other");
  check_dataset_refused("--pool scores.npy --scores scores.npy --draw 1 --budget 1",
                        "--scores needs --dataset");
  check_dataset_refused("--pool scores.npy --labels labels.csv --transition-mask tm.npy",
                        "--transition-mask needs --dataset");
  check_dataset_refused(scored + " --pool scores.npy", "--pool and --dataset exclude each other");
  check_dataset_refused(scored + " --transition-mask tm.csv",
                        "--transition-mask: 'tm.csv' is written as a .npy file");
  check_dataset_refused(scored + " --selection sel.npy --transition-mask ./sel.npy",
                        "--selection and --transition-mask name the same file");
  check_dataset_refused(scored + " --selection " + d,
                        "--selection: '" + d + "' is the --dataset input itself");
  check_dataset_refused(
      scored + " --selection no/such/dir/" + selection_name(),
      "--selection: cannot write 'no/such/dir/" + selection_name() + "': no directory");
  if (with_hdf5) {
    check_dataset_refused(
        scored + " --selection sel.txt",
        "--selection: 'sel.txt': the dataset 'd.hdf5' is HDF5, so its selection is "
        "written as HDF5");
    check_dataset_refused(
        "--dataset d --scores scores.npy --draw 120 --budget 10 --selection sel.hdf5",
        "the dataset 'd' is a directory of .npy files");
    write_dataset_text("notes.hdf5", "id,score\n1,0.5\n");
    check_dataset_refused("--dataset notes.hdf5 --scores scores.npy" + draw,
                          "notes.hdf5: not an HDF5 file");
  }
}
