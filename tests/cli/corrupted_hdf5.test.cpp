// Corrupted HDF5 input (docs/dsrl.md, "Corrupted files"): whatever its bytes, `ltt certify
// --dataset F ... --selection out/sel.hdf5` exits 0, or exits 2 with one line on stderr that
// names F, nothing on stdout and nothing in out/ (no temporary either); never a signal. On the
// two files that once killed ltt inside libhdf5 (tests/data/hdf5-crash/), on a small valid
// file cut at 21 offsets, and on 200 copies of it with bits flipped (a fixed seed).

#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <data/text.hpp>

#include "run_program.hpp"

using namespace ltt_cli_test;
using ltt::data::cat;  // GCC 12 warns falsely on some chains of string + (bug 105329)
namespace fs = std::filesystem;

namespace {

// small.hdf5, small_gzip.hdf5 and small_scores.npy (make_small_dsrl.py), written once.
const fs::path& work_dir() {
  static const fs::path dir = [] {
    const fs::path d = scratch_dir() / "corrupted";
    fs::create_directories(d);
    const Result r = shell(cat("'", LTT_PYTHON3, "' '", LTT_CLI_TEST_SCRIPTS,
                               "/make_small_dsrl.py' '", d.string(), "'"));
    if (r.code != 0) throw std::runtime_error(cat("make_small_dsrl.py failed: ", r.err));
    return d;
  }();
  return dir;
}

std::string read_bytes(const fs::path& file) { return slurp(file); }

void write_bytes(const fs::path& file, const std::string& bytes) {
  std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
}

struct Outcome {
  Result result;
  std::set<std::string> left;  // what is in out/ afterwards
};

// The command of tests/data/hdf5-crash/README.md on `dataset` (a path as the user types it,
// relative to work_dir()), its selection in a fresh out/.
Outcome certify_into_out(const std::string& dataset, const std::string& scores) {
  const fs::path out = work_dir() / "out";
  fs::remove_all(out);
  fs::create_directories(out);
  Outcome o;
  o.result = shell(cat("cd '", work_dir().string(), "' && '", LTT_PROGRAM, "' certify --dataset '",
                       dataset, "' --scores '", scores,
                       "' --draw 10 --budget 1 --selection out/sel.hdf5"));
  for (const fs::directory_entry& e : fs::directory_iterator(out))
    o.left.insert(e.path().filename().string());
  return o;
}

// Exit 2, one line "ltt certify: DATASET: ..." holding every part, no output.
void check_refused(const Outcome& o, const std::string& dataset,
                   std::initializer_list<std::string_view> parts = {}) {
  CHECK(o.result.code == 2);
  CHECK(o.result.out.empty());
  CHECK_MESSAGE(lines(o.result.err) == 1, o.result.err);
  CHECK_MESSAGE(o.result.err.starts_with("ltt certify: "), o.result.err);
  CHECK_MESSAGE(o.result.err.find(dataset) != std::string::npos, o.result.err);
  for (const std::string_view part : parts)
    CHECK_MESSAGE(o.result.err.find(part) != std::string::npos, "'", part, "' not in ",
                  o.result.err);
  CHECK(o.left.empty());
}

}  // namespace

TEST_CASE("corrupted HDF5: the files that crashed libhdf5 are refused by name, nothing written") {
  if (!with_hdf5) return;
  const std::string dir = cat(LTT_HDF5_CRASH_FIXTURES, "/");
  const std::string scores = cat(dir, "scores.npy");
  // The enum type of 'terminals' claims a 1 GiB base: libhdf5 dies inside H5Oopen, in the
  // child process that reads the file's layout.
  check_refused(certify_into_out(cat(dir, "crash-on-open.hdf5"), scores),
                "crash-on-open.hdf5: ", {"corrupted HDF5: libhdf5 crashed", "key 'terminals'"});
  // The float type of 'rewards' puts its bits at 32256 of 32: refused before any read.
  check_refused(certify_into_out(cat(dir, "crash-on-write.hdf5"), scores),
                "crash-on-write.hdf5: ", {"key 'rewards' has a malformed element type"});
}

TEST_CASE("corrupted HDF5: not HDF5, and a valid file cut short anywhere") {
  if (!with_hdf5) return;
  const std::string valid = read_bytes(work_dir() / "small.hdf5");
  REQUIRE(valid.size() > 4000);
  const Outcome whole = certify_into_out("small.hdf5", "small_scores.npy");
  REQUIRE_MESSAGE(whole.result.code == 0, whole.result.err);
  CHECK(whole.left == std::set<std::string>{"sel.hdf5"});

  write_bytes(work_dir() / "random.hdf5", std::string(300, '\x5a'));
  check_refused(certify_into_out("random.hdf5", "small_scores.npy"),
                "random.hdf5: ", {"not an HDF5 file"});
  write_bytes(work_dir() / "signature.hdf5", cat(valid.substr(0, 8), std::string(300, '\0')));
  check_refused(certify_into_out("signature.hdf5", "small_scores.npy"),
                "signature.hdf5: ", {"cannot open it as HDF5"});

  std::vector<std::size_t> cuts;
  for (std::size_t k = 0; k < 20; ++k) cuts.push_back(valid.size() * k / 20);
  cuts.push_back(valid.size() - 1);
  for (const std::size_t cut : cuts) {
    CAPTURE(cut);
    write_bytes(work_dir() / "cut.hdf5", valid.substr(0, cut));
    check_refused(certify_into_out("cut.hdf5", "small_scores.npy"), "cut.hdf5: ");
  }
}

TEST_CASE("corrupted HDF5: 200 bit-flipped copies of a valid file, never a crash or a leftover") {
  if (!with_hdf5) return;
  const std::string sources[] = {read_bytes(work_dir() / "small.hdf5"),
                                 read_bytes(work_dir() / "small_gzip.hdf5")};
  std::mt19937_64 random(20240613);  // the engine's output is fixed by the standard
  int certified = 0, refused = 0, contained = 0;
  for (int i = 0; i < 200; ++i) {
    std::string bytes = sources[i % 2];
    const int flips = 1 + static_cast<int>(random() % 8);
    std::string where;  // the flipped bytes, for the message of a failure
    for (int f = 0; f < flips; ++f) {
      const std::uint64_t at = random() % bytes.size();
      bytes[at] = static_cast<char>(bytes[at] ^ (1 << (random() % 8)));
      where.append(cat(" ", std::to_string(at)));
    }
    CAPTURE(i);
    CAPTURE(where);
    write_bytes(work_dir() / "flipped.hdf5", bytes);
    const Outcome o = certify_into_out("flipped.hdf5", "small_scores.npy");
    REQUIRE_MESSAGE((o.result.code == 0 || o.result.code == 2), o.result.code, " ", o.result.err);
    if (o.result.code == 0) {
      ++certified;
      CHECK(o.result.err.empty());
      CHECK(o.left == std::set<std::string>{"sel.hdf5"});
      continue;
    }
    ++refused;
    contained += o.result.err.find("libhdf5 crashed") != std::string::npos;
    check_refused(o, "flipped.hdf5");
  }
  MESSAGE(certified, " mutants certified, ", refused, " refused (", contained,
          " of them by a crash inside libhdf5, contained)");
  CHECK(refused > 0);
}
