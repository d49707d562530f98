// DSRL files compressed through HDF5 filter plugins (docs/dsrl.md, "Compressed files"): h5py
// writes one file per filter (make_compressed_dsrl.py: lzf, lz4, blosc, bitshuffle, decoded by
// the Debian plugins scripts/setup installs). `ltt certify --dataset` certifies each as it does
// the unfiltered file, writes a selection that keeps the filter, and `ltt score` gives each row
// the same value. Without the plugin (HDF5_PLUGIN_PATH on an empty folder) and with a key that
// claims more than its filter can unpack from what is stored, each is refused in one line.

#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <data/npy.hpp>
#include <data/text.hpp>

#include "run_program.hpp"

using namespace ltt_cli_test;
using ltt::data::cat;  // GCC 12 warns falsely on some chains of string + (bug 105329)
namespace fs = std::filesystem;

// Named, not anonymous: cli_tests is a unity build, and corrupted_hdf5.test.cpp has a work_dir.
namespace compressed_dsrl_test {

struct Filter {
  std::string name;  // make_compressed_dsrl.py's file name
  std::string id;    // the registered filter id
  std::string package;
};

const std::vector<Filter> filters = {{"lzf", "32000", "hdf5-plugin-lzf"},
                                     {"lz4", "32004", "hdf5-filter-plugin"},
                                     {"blosc", "32001", "hdf5-filter-plugin-blosc-serial"},
                                     {"bitshuffle", "32008", "bitshuffle"}};

const fs::path& work_dir() {
  static const fs::path dir = [] {
    const fs::path d = scratch_dir() / "compressed";
    const Result r = shell(
        cat("'", LTT_PYTHON3, "' '", LTT_CLI_TEST_SCRIPTS, "/make_compressed_dsrl.py' ", q(d)));
    if (r.code != 0) throw std::runtime_error(cat("make_compressed_dsrl.py failed: ", r.err));
    fs::create_directories(d / "out");
    fs::create_directories(d / "selections");
    fs::create_directories(d / "no-plugins");
    return d;
  }();
  return dir;
}

const std::string draw =
    " --scores scores.npy --draw 16 --budget 5 --delta 0.2 --seed 4 --grid 0.7,0.5,0.3";

Result in_work_dir(const std::string& line) {
  return shell(cat("cd ", q(work_dir()), " && ", line));
}

Result ltt_in_work_dir(const std::string& args) {
  return in_work_dir(cat("'", LTT_PROGRAM, "' ", args));
}

// Exit 2, one line naming the file and holding every part, nothing on stdout or in out/.
void check_refused(const Result& r, const std::string& file,
                   std::initializer_list<std::string> parts) {
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK_MESSAGE(lines(r.err) == 1, r.err);
  CHECK_MESSAGE(r.err.find(file) != std::string::npos, r.err);
  for (const std::string& part : parts)
    CHECK_MESSAGE(r.err.find(part) != std::string::npos, "'", part, "' not in ", r.err);
  CHECK(fs::is_empty(work_dir() / "out"));
}

TEST_CASE(
    "ltt certify --dataset and ltt score read files compressed by lzf, lz4, blosc, bitshuffle") {
  if (!with_hdf5) return;
  // The unfiltered file: its certificate, its selection's episode indices, a model, its values.
  const Result plain = ltt_in_work_dir(
      cat("certify --dataset plain.hdf5", draw, " --selection plain-selected.npy --json"));
  REQUIRE_MESSAGE(plain.code == 0, plain.err);
  auto expected = json_object(plain.out);
  REQUIRE(expected.at("certified") == "true");
  expected.erase("inputs");  // the file names differ
  expected.erase("output");
  std::string indices;
  const ltt::data::Array selected = ltt::data::read_npy(work_dir() / "plain-selected.npy");
  for (const std::int64_t i : selected.values<std::int64_t>())
    indices += cat(" ", std::to_string(i));
  const Result trained = ltt_in_work_dir(
      "score --dataset plain.hdf5 --out plain-scored --segment 3 --hidden 16,16 --epochs 5 "
      "--pairs 100 --quiet");
  REQUIRE_MESSAGE(trained.code == 0, trained.err);

  for (const Filter& f : filters) {
    CAPTURE(f.name);
    const std::string file = f.name + ".hdf5", selection = cat("selections/", f.name, ".hdf5");
    const Result r = ltt_in_work_dir(
        cat("certify --dataset ", file, draw, " --selection ", selection, " --json"));
    REQUIRE_MESSAGE(r.code == 0, r.err);
    auto got = json_object(r.out);
    got.erase("inputs");
    got.erase("output");
    CHECK(got == expected);
    // The selection read back by h5py holds exactly the certified episodes, every key with its
    // dtype.
    const Result check = in_work_dir(cat("'", LTT_PYTHON3, "' '", LTT_DSRL_SELECTION_CHECK, "' ",
                                         file, " ", selection, indices));
    CHECK_MESSAGE(check.code == 0, check.err);

    const fs::path scored = work_dir() / cat(f.name, "-scored");
    const Result s = ltt_in_work_dir(cat("score --dataset ", file, " --out ", q(scored),
                                         " --model plain-scored/model.ltt --quiet"));
    REQUIRE_MESSAGE(s.code == 0, s.err);
    CHECK(slurp(scored / "state_values.npy") ==
          slurp(work_dir() / "plain-scored" / "state_values.npy"));
  }
  // Each selection is compressed by its input's filter, with as many options, the user's last
  // two the same (the plugin fills the first ones in from the chunk and element sizes).
  const Result same_filters = in_work_dir(cat(
      "'", LTT_PYTHON3, "' -c 'import h5py\n",
      "opts = lambda p: {k: (len(v or ()), tuple(v or ())[-2:])",
      " for k, v in h5py.File(p)[\"observations\"]._filters.items()}\n", "for n in [",
      [] {
        std::string names;
        for (const Filter& f : filters) names += cat("\"", f.name, "\", ");
        return names;
      }(),
      "]:\n", "    assert opts(n + \".hdf5\") == opts(\"selections/\" + n + \".hdf5\"), n'"));
  CHECK_MESSAGE(same_filters.code == 0, same_filters.err);
}

TEST_CASE(
    "a DSRL file whose filter has no plugin, or that claims too much, is refused in one line") {
  if (!with_hdf5) return;
  for (const Filter& f : filters) {
    CAPTURE(f.name);
    const std::string file = f.name + ".hdf5";
    // HDF5_PLUGIN_PATH replaces libhdf5's default plugin folder, here with an empty one.
    const std::string no_plugins = cat("env HDF5_PLUGIN_PATH=no-plugins '", LTT_PROGRAM, "' ");
    check_refused(
        in_work_dir(cat(no_plugins, "certify --dataset ", file, draw, " --selection out/s.hdf5")),
        file,
        {"ltt certify: ", "key 'observations' is stored through HDF5 filter " + f.id,
         "cannot decode", "Debian's package " + f.package + ";"});
    check_refused(in_work_dir(cat(no_plugins, "score --dataset ", file, " --out out/scored")), file,
                  {"ltt score: ", "filter " + f.id, "Debian's package " + f.package + ";"});
    // 'observations' claims 10^7 rows; a few chunks of them are stored.
    const std::string claims = f.name + "-claims.hdf5";
    check_refused(
        ltt_in_work_dir(cat("certify --dataset ", claims, draw, " --selection out/s.hdf5")), claims,
        {"key 'observations' claims 120000000 bytes, more than its filters (" + f.name + ") unpack",
         "the file is corrupted"});
  }
}

}  // namespace compressed_dsrl_test
