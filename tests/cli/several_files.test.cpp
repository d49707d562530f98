// A dataset of several DSRL files through the program (docs/dsrl.md, "Several files"): `ltt
// certify`, `ltt draw` and `ltt curate` on three files give what they give on the one file the
// three make end to end (written here), with ids FILE:EPISODE and the selection written per
// file; `ltt score` on files with dropped tails gives each file's scores and values as if it
// were scored alone, end to end; bad input exits 2 with one line.

#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <curation/score_aggregation.hpp>
#include <data/dataset_files.hpp>
#include <data/dsrl.hpp>
#include <data/npy.hpp>

#include "run_program.hpp"

using namespace ltt_cli_test;
using ltt::data::detail::cat;  // GCC 12 warns falsely on some chains of string + (bug 105329)
namespace fs = std::filesystem;

namespace several_files_test {

constexpr double budget = 12.0;
const std::string tiny_net = " --hidden 16,16 --quiet --epochs 5 --pairs 100";

fs::path dir() { return scratch_dir() / "several"; }

// make_curate_example.py's dataset at `name` in dir() (once).
fs::path generated(const std::string& name, const std::string& flags) {
  return curate_example_at(dir() / name, flags);
}

std::string ext() { return with_hdf5 ? ".hdf5" : ""; }

// Appends the rows of `one` to `all`, key by key (the first call copies).
void append(ltt::data::DsrlDataset& all, const ltt::data::DsrlDataset& one) {
  for (const std::string_view key : ltt::data::dsrl_keys) {
    ltt::data::Array& a = all[key];
    if (a.shape.empty()) {
      a = one[key];
    } else {
      a.bytes.insert(a.bytes.end(), one[key].bytes.begin(), one[key].bytes.end());
      a.shape[0] += one[key].shape[0];
    }
  }
}

// Three files in parts/ (the second always a directory of .npy files), no dropped tail but the
// last file's: put end to end they are one file, whole.hdf5 (or whole/).
struct Parts {
  std::vector<fs::path> files;
  fs::path whole;
};

const Parts& parts() {
  static const Parts p = [] {
    Parts r;
    r.files = {generated(cat("parts/p1", ext()), "--episodes 40 --length 60 --seed 1 --tail 0"),
               generated("parts/p2", "--episodes 30 --length 60 --seed 2 --tail 0"),
               generated(cat("parts/p3", ext()), "--episodes 50 --length 60 --seed 3 --tail 7")};
    r.whole = dir() / cat("whole", ext());
    if (!fs::exists(r.whole)) {
      ltt::data::DsrlDataset all;
      for (const fs::path& f : r.files) append(all, ltt::data::read_dsrl(f));
      ltt::data::write_dsrl(r.whole, all);
    }
    return r;
  }();
  return p;
}

std::string files_text(const std::vector<fs::path>& files) {
  std::string text;
  for (const fs::path& f : files) text += cat(" ", q(f));
  return text;
}

// One score per episode of the whole: minus the cost, jittered apart (so the certificate has
// a ranking to certify), in dir()/scores.npy and as CSV by FILE:EPISODE id, rows reversed.
void write_scores() {
  const ltt::data::DsrlPool all = ltt::data::load_dsrl_pool(parts().files);
  std::vector<double> s;
  std::string csv = "id,score\n";
  for (const ltt::data::Episode& e : all.episodes)
    s.push_back(-e.episodic_cost + 1e-3 * static_cast<double>(e.index % 17));
  for (std::int64_t i = all.size() - 1; i >= 0; --i)
    csv += cat(ltt::data::episode_id(all, i), ",",
               ltt::data::shortest(s[static_cast<std::size_t>(i)]), "\n");
  ltt::data::write_npy(dir() / "scores.npy", ltt::data::make_array(s));
  std::ofstream(dir() / "scores.csv") << csv;
}

Result ltt_in_dir(const std::string& args) {
  return shell("cd " + q(dir()) + " && '" + std::string(LTT_PROGRAM) + "' " + args);
}

// The keys of a certificate that do not name files or ids: what the whole and the parts share.
std::map<std::string, std::string> shared_keys(const std::string& json) {
  std::map<std::string, std::string> m = json_object(json);
  for (const char* key : {"inputs", "output", "selection_ids", "calibration_ids"}) m.erase(key);
  return m;
}

// The datasets in `selection` (a directory of the parts' selections), read and put end to end.
ltt::data::DsrlDataset concatenated_selection(const fs::path& selection) {
  ltt::data::DsrlDataset all;
  for (const fs::path& f : parts().files) {
    const fs::path written = selection / f.filename();
    if (!fs::exists(written)) continue;
    append(all, ltt::data::read_dsrl(written));
  }
  return all;
}

void check_one_line_refusal(const Result& r, const std::string& command, const std::string& named) {
  CHECK(r.code == 2);
  CHECK(lines(r.err) == 1);
  CHECK(r.err.starts_with("ltt " + command + ": "));
  CHECK_MESSAGE(r.err.find(named) != std::string::npos, r.err);
}

}  // namespace several_files_test

using namespace several_files_test;

TEST_CASE("ltt certify --dataset FILES: the certificate of the files end to end, per file out") {
  write_scores();
  const std::string several = files_text(parts().files);
  for (const char* name : {"sel", "sel_whole", "tm.npy", "tm_whole.npy"})
    fs::remove_all(dir() / name);
  const std::string flags = cat(" --scores scores.npy --draw 60 --budget ",
                                ltt::data::shortest(budget), " --seed 3 --json");
  const Result w =
      ltt_in_dir("certify --dataset " + q(parts().whole) + flags + " --selection " +
                 q(dir() / cat("sel_whole", ext())) + " --transition-mask tm_whole.npy");
  REQUIRE_MESSAGE(w.code == 0, w.err);
  const Result r = ltt_in_dir("certify --dataset" + several + flags + " --selection sel" +
                              " --transition-mask tm.npy --certificate cert.json");
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(r.err.empty());
  const auto json = json_object(r.out);
  REQUIRE(json.at("certified") == "true");  // the scores are built to certify
  CHECK(shared_keys(r.out) == shared_keys(w.out));
  CHECK(slurp(dir() / "cert.json") == r.out);

  // "inputs.dataset" lists the files; "output" says the selection is a directory per file.
  const auto inputs = json_object(json.at("inputs") + "\n");
  const auto dataset = json_object(inputs.at("dataset") + "\n");
  CHECK(number(dataset.at("episodes")) == 120);
  CHECK(dataset.at("files").find("\"name\": \"p2\"") != std::string::npos);
  const auto output = json_object(json.at("output") + "\n");
  CHECK(output.at("selection_format") == "\"dsrl-directory-per-file\"");

  // The selection per file, in each file's store: end to end, the whole file's selection.
  const ltt::data::DsrlDataset joined = concatenated_selection(dir() / "sel");
  const ltt::data::DsrlDataset whole = ltt::data::read_dsrl(dir() / cat("sel_whole", ext()));
  for (const std::string_view key : ltt::data::dsrl_keys) {
    CAPTURE(key);
    CHECK(joined[key].dtype == whole[key].dtype);
    CHECK(joined[key].shape == whole[key].shape);
    CHECK(joined[key].bytes == whole[key].bytes);
  }
  CHECK(fs::is_directory(dir() / "sel" / "p2"));
  // The transition mask counts every row of the files (the last file's tail too).
  CHECK(slurp(dir() / "tm.npy") == slurp(dir() / "tm_whole.npy"));

  // Scores by FILE:EPISODE id in a CSV: the same certificate.
  const Result c = ltt_in_dir("certify --dataset" + several + " --scores scores.csv --draw 60" +
                              " --budget " + ltt::data::shortest(budget) + " --seed 3 --json");
  REQUIRE_MESSAGE(c.code == 0, c.err);
  CHECK(shared_keys(c.out) == shared_keys(r.out));
}

TEST_CASE("ltt draw and certify --labels on several files: FILE:EPISODE ids, a directory, a glob") {
  write_scores();
  const ltt::data::DsrlPool all = ltt::data::load_dsrl_pool(parts().files);
  // The directory and a quoted pattern name the same three files, in name order.
  const Result by_dir = ltt_in_dir("draw --dataset parts --n 60 --seed 3 --out ids.csv");
  REQUIRE_MESSAGE(by_dir.code == 0, by_dir.err);
  const Result by_glob = ltt_in_dir("draw --dataset 'parts/p*' --n 60 --seed 3");
  REQUIRE_MESSAGE(by_glob.code == 0, by_glob.err);
  CHECK("id\n" + by_glob.out == slurp(dir() / "ids.csv"));
  const Result whole = ltt_in_dir("draw --dataset " + q(parts().whole) + " --n 60 --seed 3");
  REQUIRE_MESSAGE(whole.code == 0, whole.err);
  // The same draw, episode for episode: the whole's index i is the parts' id of episode i.
  std::istringstream a(by_glob.out), b(whole.out);
  std::string labels = "id,unsafe\n";
  int n = 0;
  for (std::string id, index; std::getline(a, id) && std::getline(b, index); ++n) {
    const auto e = static_cast<std::size_t>(std::stoll(index));
    CHECK(id == ltt::data::episode_id(all, static_cast<std::int64_t>(e)));
    CHECK(id.starts_with(ltt::data::part_of_episode(all, static_cast<std::int64_t>(e)).name + ":"));
    labels += cat(id, ",", all.episodes[e].episodic_cost > budget ? "1" : "0", "\n");
  }
  CHECK(n == 60);
  std::ofstream(dir() / "labels.csv") << labels;

  // Labels by FILE:EPISODE give the certificate --draw gives.
  const Result drawn =
      ltt_in_dir("certify --dataset parts --scores scores.npy --draw 60 --budget " +
                 ltt::data::shortest(budget) + " --seed 3 --json");
  const Result labeled =
      ltt_in_dir("certify --dataset parts --scores scores.npy --labels labels.csv --json");
  REQUIRE_MESSAGE(drawn.code == 0, drawn.err);
  REQUIRE_MESSAGE(labeled.code == 0, labeled.err);
  CHECK(json_object(drawn.out).at("threshold") == json_object(labeled.out).at("threshold"));
  CHECK(json_object(drawn.out).at("certified") == json_object(labeled.out).at("certified"));
  CHECK(json_object(drawn.out).at("steps") == json_object(labeled.out).at("steps"));

  // A bare index names no episode of several files; the message says what ids look like.
  std::ofstream(dir() / "bare.csv") << "id,unsafe\n3,0\n";
  check_one_line_refusal(
      ltt_in_dir("certify --dataset parts --scores scores.npy --labels bare.csv"), "certify",
      "bare.csv:2: id 3 is not an episode of parts (ids FILE:EPISODE, FILE one of p1");
}

TEST_CASE("ltt score --dataset FILES: each file scored as alone, end to end") {
  // Dropped tails in the first and last files, a .npy directory between.
  const std::vector<fs::path> files = {
      generated(cat("tailed/t1", ext()), "--episodes 30 --length 80 --seed 4 --tail 13"),
      generated("tailed/t2", "--episodes 20 --length 80 --seed 5 --tail 0"),
      generated(cat("tailed/t3", ext()), "--episodes 25 --length 80 --seed 6 --tail 4")};
  const fs::path trained = dir() / "t_model";
  fs::remove_all(trained);
  // Trained on the three files: pairs drawn from every file's episodes.
  const Result t = run_ltt("score --dataset" + files_text(files) + " --out " + q(trained) +
                           tiny_net + " --segment 20 --json");
  REQUIRE_MESSAGE(t.code == 0, t.err);
  const auto score_json = json_object(t.out);
  const auto dataset = json_object(score_json.at("dataset") + "\n");
  CHECK(number(dataset.at("episodes")) == 75);
  CHECK(number(dataset.at("dropped_tail")) == 17);
  CHECK(dataset.at("files").find("\"name\": \"t3" + ext() + "\"") != std::string::npos);
  const std::string model = " --model " + q(trained / "model.ltt") + " --quiet";

  std::string values, scores;  // each file alone, end to end (the .npy payloads)
  std::int64_t rows = 0, episodes = 0;
  for (const fs::path& f : files) {
    const fs::path out = dir() / cat("alone_", f.stem().string());
    fs::remove_all(out);
    const Result r = run_ltt("score --dataset " + q(f) + " --out " + q(out) + model);
    REQUIRE_MESSAGE(r.code == 0, r.err);
    const std::vector<double> v = ltt::data::read_npy_vector(out / "state_values.npy");
    const std::vector<double> s = ltt::data::read_npy_vector(out / "scores.npy");
    const std::string vb = slurp(out / "state_values.npy"), sb = slurp(out / "scores.npy");
    values += vb.substr(vb.size() - v.size() * 4);
    scores += sb.substr(sb.size() - s.size() * 8);
    rows += static_cast<std::int64_t>(v.size());
    episodes += static_cast<std::int64_t>(s.size());
  }
  for (const int threads : {1, 2}) {
    CAPTURE(threads);
    const fs::path out = dir() / "together";
    fs::remove_all(out);
    const Result r = run_ltt("score --dataset" + files_text(files) + " --out " + q(out) + model +
                             " --threads " + std::to_string(threads));
    REQUIRE_MESSAGE(r.code == 0, r.err);
    CHECK(r.out.find("3 files, 75 episodes in " + std::to_string(rows) + " rows") !=
          std::string::npos);
    const std::string vb = slurp(out / "state_values.npy"), sb = slurp(out / "scores.npy");
    CHECK(vb.size() >= values.size());
    CHECK(vb.substr(vb.size() - values.size()) == values);
    CHECK(sb.substr(sb.size() - scores.size()) == scores);
    CHECK(static_cast<std::int64_t>(ltt::data::read_npy_vector(out / "scores.npy").size()) ==
          episodes);
  }
  // certify --state-values on the rows of all three files (tails included): each episode's
  // score is the mean of its own rows' float32 values, found here from each file alone.
  const fs::path out = dir() / "together";
  const std::vector<double> v = ltt::data::read_npy_vector(out / "state_values.npy");
  REQUIRE(static_cast<std::int64_t>(v.size()) == rows);
  std::vector<double> expected;
  std::int64_t base = 0;
  for (const fs::path& f : files) {
    const ltt::data::DsrlPool alone = ltt::data::load_dsrl_pool(f);
    for (const ltt::data::Episode& e : alone.episodes) {
      const auto first = v.begin() + base + e.start;
      const std::vector<double> rows_of_e(first, first + e.length);
      const std::vector<std::int64_t> one{0, e.length};
      expected.push_back(ltt::curation::trajectory_scores(rows_of_e, one).front());
    }
    base += alone.transitions;
  }
  ltt::data::write_npy(dir() / "expected.npy", ltt::data::make_array(expected));
  const std::string common = " --draw 30 --budget 20 --seed 1 --json";
  const Result by_values = run_ltt("certify --dataset" + files_text(files) + " --state-values " +
                                   q(out / "state_values.npy") + common);
  const Result by_scores = run_ltt("certify --dataset" + files_text(files) + " --scores " +
                                   q(dir() / "expected.npy") + common);
  REQUIRE_MESSAGE(by_values.code == 0, by_values.err);
  REQUIRE_MESSAGE(by_scores.code == 0, by_scores.err);
  CHECK(shared_keys(by_values.out) == shared_keys(by_scores.out));
}

TEST_CASE("ltt curate --dataset DIR: the selection per file in DIR/selection") {
  parts();  // the files in parts/
  const fs::path out = dir() / "curated";
  fs::remove_all(out);
  const Result r =
      ltt_in_dir("curate --dataset parts --out " + q(out) + tiny_net +
                 " --segment 20 --draw 60 --budget " + ltt::data::shortest(budget) + " --seed 2");
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(r.out.find("dataset parts: 3 files, 120 episodes") != std::string::npos);
  const auto cert = json_object(slurp(out / "certificate.json"));
  if (cert.at("certified") == "true") {
    CHECK(fs::is_directory(out / "selection"));
    std::int64_t written = 0;
    for (const fs::path& f : parts().files)
      if (fs::exists(out / "selection" / f.filename()))
        written += ltt::data::load_dsrl_pool(out / "selection" / f.filename()).size();
    CHECK(written == static_cast<std::int64_t>(number(cert.at("written_size"))));
  }
  const auto dataset = json_object(json_object(cert.at("inputs") + "\n").at("dataset") + "\n");
  CHECK(dataset.at("files").find("\"name\": \"p3" + ext() + "\"") != std::string::npos);
}

TEST_CASE("several files: bad input exits 2 with one line and writes nothing") {
  write_scores();
  const std::string several = files_text(parts().files);
  // A selection of several files is a directory, not one HDF5 file.
  if (with_hdf5) {
    fs::remove(dir() / "one.hdf5");
    check_one_line_refusal(
        ltt_in_dir("certify --dataset" + several +
                   " --scores scores.npy --draw 60 --budget 12 --selection one.hdf5"),
        "certify", "the dataset has 3 files, so its selection is a directory");
    CHECK(!fs::exists(dir() / "one.hdf5"));
  }
  // The same file twice; files of different widths; an empty directory; a pattern with no match.
  check_one_line_refusal(ltt_in_dir("draw --n 3 --dataset parts " + q(parts().files[0])), "draw",
                         "names this file twice");
  const fs::path wide = generated("wide", "--episodes 20 --length 30 --dim 5 --tail 0");
  check_one_line_refusal(ltt_in_dir("draw --n 3 --dataset " + q(parts().files[0]) + " " + q(wide)),
                         "draw", "share their shapes");
  fs::create_directories(dir() / "nothing");
  check_one_line_refusal(ltt_in_dir("draw --n 3 --dataset nothing"), "draw",
                         "--dataset: 'nothing': the directory holds no dataset");
  check_one_line_refusal(ltt_in_dir("draw --n 3 --dataset 'parts/zz*'"), "draw",
                         "the pattern matches no file");
  // The labeling page reads one file.
  check_one_line_refusal(ltt_in_dir("label budget --dataset parts --scores scores.npy --out lb"),
                         "label", "the labeling page shows one file's episodes");
  CHECK(!fs::exists(dir() / "lb"));
}
