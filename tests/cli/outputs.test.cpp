// Outputs that cannot destroy anything (docs/cli.md, "Outputs"): every flag that names an
// output refuses, with exit 2 and one line before any work, a device (copies of /dev/null and
// /dev/full made with mknod, never the real ones), a FIFO, a socket, a directory where a file
// goes, a symbolic link (whatever it points to), any input however it is named (./, absolute,
// "..", a hard link, a file inside a dataset stored as a directory), and another output of
// the same run. Each refusal leaves the directory exactly as it was: no file created,
// replaced or removed, no temporary left. A link in a directory component is followed as
// usual. A write that fails (a file size limit, standing in for a full disk) exits non-zero
// and leaves nothing, the outputs it had written already included.

#include <doctest/doctest.h>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <data/text.hpp>

#include "../support/unix_socket.hpp"
#include "run_program.hpp"

using namespace ltt_cli_test;
using ltt::data::cat;  // GCC 12 warns falsely on some chains of string + (bug 105329)
namespace fs = std::filesystem;

namespace {

void write_text(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

using ltt_test::make_socket;

// The special files every case aims at, in special/ of the working directory.
struct Special {
  std::string name;    // relative to the working directory
  std::string reason;  // what the refusal says
};

// The working directory, made once: a pool and its labels, the DSRL dataset of
// make_certify_dataset.py (d.hdf5 with HDF5, and the .npy directory d) with its scores, and
// special/ holding the nodes outputs must never replace.
struct Work {
  fs::path dir;
  std::vector<Special> specials;  // each with a .npy name, so every flag accepts it
  bool devices = false;           // mknod worked (root)

  Work() {
    dir = scratch_dir() / "outputs";
    fs::create_directories(dir / "special");
    const Result r =
        shell(cat("'", LTT_PYTHON3, "' '", LTT_CLI_TEST_SCRIPTS, "/make_certify_dataset.py' '",
                  dir.string(), "'", with_hdf5 ? "" : " --no-hdf5"));
    if (r.code != 0) throw std::runtime_error("make_certify_dataset.py failed: " + r.err);
    std::string pool = "id,score,return,cost,length\n", labels = "id,unsafe\n";
    for (int i = 1; i <= 30; ++i) {
      pool += cat(std::to_string(i), ",", std::to_string(i / 30.0), ",", std::to_string(i), ",",
                  i <= 10 ? "30" : "0", ",10\n");
      if (i % 2 == 1) labels += cat(std::to_string(i), ",", i <= 10 ? "1" : "0", "\n");
    }
    write_text(dir / "pool.csv", pool);
    write_text(dir / "p_labels.csv", labels);
    fs::create_hard_link(dir / "p_labels.csv", dir / "hard.csv");

    const fs::path s = dir / "special";
    write_text(s / "old.npy", "old\n");
    if (::mkfifo((s / "fifo.npy").c_str(), 0666) != 0) throw std::runtime_error("mkfifo failed");
    if (::mkfifo((s / "fifo").c_str(), 0666) != 0) throw std::runtime_error("mkfifo failed");
    fs::create_directory(s / "dir.npy");
    fs::create_directory(s / "real");
    fs::create_directory_symlink("real", s / "linkdir");
    fs::create_symlink("old.npy", s / "link.npy");
    fs::create_symlink("nowhere.npy", s / "dangling.npy");
    fs::create_symlink("fifo.npy", s / "link_fifo.npy");
    specials = {{"special/fifo.npy", "it is a FIFO (named pipe)"},
                {"special/dir.npy", "it is a directory"},
                {"special/link.npy", "it is a symbolic link"},
                {"special/dangling.npy", "it is a symbolic link"},
                {"special/link_fifo.npy", "it is a symbolic link"}};
    if (make_socket(s / "sock.npy")) specials.push_back({"special/sock.npy", "it is a socket"});
    // Copies of /dev/null (1, 3) and /dev/full (1, 7): the real ones are never named.
    devices = ::mknod((s / "null.npy").c_str(), S_IFCHR | 0666, ::makedev(1, 3)) == 0 &&
              ::mknod((s / "full.npy").c_str(), S_IFCHR | 0666, ::makedev(1, 7)) == 0;
    if (devices) {
      fs::create_symlink("null.npy", s / "link_null.npy");
      specials.push_back({"special/null.npy", "it is a character device"});
      specials.push_back({"special/full.npy", "it is a character device"});
      specials.push_back({"special/link_null.npy", "it is a symbolic link"});
    }
  }
};

const Work& work() {
  static const Work w;
  return w;
}

// Every entry below the working directory, links not followed: its type, inode and size, a
// regular file's bytes, a link's target.
std::map<std::string, std::string> snapshot() {
  std::map<std::string, std::string> entries;
  for (const fs::directory_entry& e : fs::recursive_directory_iterator(work().dir)) {
    struct stat st {};
    REQUIRE(::lstat(e.path().c_str(), &st) == 0);
    std::string what = cat(std::to_string(st.st_mode & S_IFMT), " ", std::to_string(st.st_ino));
    if (S_ISREG(st.st_mode)) what += cat(" ", slurp(e.path()));
    if (S_ISLNK(st.st_mode)) what += cat(" -> ", fs::read_symlink(e.path()).string());
    entries[fs::relative(e.path(), work().dir).string()] = what;
  }
  return entries;
}

// What differs between two snapshots, by name.
std::string changes(const std::map<std::string, std::string>& before,
                    const std::map<std::string, std::string>& after) {
  std::string text;
  for (const auto& [name, what] : before)
    if (!after.contains(name))
      text += cat("removed ", name, "; ");
    else if (after.at(name) != what)
      text += cat("replaced ", name, "; ");
  for (const auto& [name, what] : after)
    if (!before.contains(name)) text += cat("created ", name, "; ");
  return text;
}

// `ltt <args>` in the working directory, after the shell commands in `prefix`; a timeout in
// case a FIFO were opened.
Result run_here(const std::string& args, const std::string& prefix = {}) {
  return shell(
      cat(prefix, "cd '", work().dir.string(), "' && timeout 120 '", LTT_PROGRAM, "' ", args));
}

// Exit 2, one line naming `named`, nothing on stdout, and nothing below the working directory
// created, replaced or removed.
void refused(const std::string& args, const std::string& named, const std::string& prefix = {}) {
  CAPTURE(args);
  const auto before = snapshot();
  const Result r = run_here(args, prefix);
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(lines(r.err) == 1);
  CHECK_MESSAGE(r.err.find(named) != std::string::npos, r.err);
  const std::string changed = changes(before, snapshot());
  CHECK_MESSAGE(changed.empty(), changed);
}

const std::string pool_run = "certify --pool pool.csv --labels p_labels.csv";
std::string dataset() { return with_hdf5 ? "d.hdf5" : "d"; }
std::string dataset_run() {
  return cat("certify --dataset ", dataset(), " --scores scores.npy --labels labels.csv");
}

}  // namespace

TEST_CASE("outputs: a device, a FIFO, a socket, a directory or a link is refused, left as it was") {
  const Work& w = work();
  if (!w.devices) MESSAGE("mknod failed (not root?): the device cases are skipped");
  for (const Special& s : w.specials) {
    for (const char* flag : {"selection", "certificate"})
      refused(cat(pool_run, " --", flag, " ", s.name),
              cat("--", flag, ": cannot write '", s.name, "': ", s.reason));
    for (const char* flag : {"selection", "transition-mask", "certificate"})
      refused(cat(dataset_run(), " --", flag, " ", s.name),
              cat("--", flag, ": cannot write '", s.name, "': ", s.reason));
    refused(cat("draw --pool pool.csv --n 3 --out ", s.name),
            cat("--out: cannot write '", s.name, "': ", s.reason));
    refused(
        cat("curate --dataset ", dataset(), " --out c --draw 10 --budget 10 --selection ", s.name),
        cat("--selection: cannot write '", s.name, "': ", s.reason));
  }
  // A selection written as a directory of .npy files: a FIFO or a link in its place.
  refused("certify --dataset d --scores scores.npy --labels labels.csv --selection special/fifo",
          "--selection: cannot write 'special/fifo': it is a FIFO (named pipe), not a directory");
  refused("certify --dataset d --scores scores.npy --labels labels.csv --selection special/linkdir",
          "--selection: cannot write 'special/linkdir': it is a symbolic link");
}

TEST_CASE("outputs: an --out DIR that is a special file, or holds one where a file goes") {
  const Work& w = work();
  for (const char* command : {"score --dataset d", "pipeline --task point-goal --preset tiny"}) {
    refused(cat(command, " --out special/fifo.npy"), "--out: 'special/fifo.npy' exists and is not");
    refused(cat(command, " --out special/dangling.npy"), "is a symbolic link to nothing");
    if (w.devices)
      refused(cat(command, " --out special/null.npy"),
              "--out: 'special/null.npy' exists and is not");
  }
  // An existing DIR with a FIFO or a link where the run writes a file: refused before the work.
  fs::create_directories(w.dir / "o" / "seed-1");
  REQUIRE(::mkfifo((w.dir / "o" / "score.json").c_str(), 0666) == 0);
  REQUIRE(::mkfifo((w.dir / "o" / "report.md").c_str(), 0666) == 0);
  fs::create_symlink("../../special/old.npy", w.dir / "o" / "seed-1" / "model.ltt");
  refused("score --dataset d --out o", "--out: cannot write 'o/score.json': it is a FIFO");
  refused("curate --dataset d --out o --draw 10 --budget 10",
          "--out: cannot write 'o/score.json': it is a FIFO");
  refused("pipeline --task point-goal --preset tiny --out o",
          "--out: cannot write 'o/report.md': it is a FIFO");
  fs::remove(w.dir / "o" / "report.md");
  refused("pipeline --task point-goal --preset tiny --out o",
          "--out: cannot write 'o/seed-1/model.ltt': it is a symbolic link");
  fs::remove_all(w.dir / "o");
  // A new --model path is an output too.
  refused("score --dataset d --out o --model special/dangling.npy",
          "--model: cannot write 'special/dangling.npy': it is a symbolic link");
}

TEST_CASE("outputs: an output that is an input is refused, however it is named") {
  const Work& w = work();
  const std::string abs = w.dir.string();
  refused(cat(pool_run, " --selection pool.csv"), "--selection: 'pool.csv' is the --pool input");
  refused(cat(pool_run, " --selection ./pool.csv"), "is the --pool input itself");
  refused(cat(pool_run, " --selection ", abs, "/pool.csv"), "is the --pool input itself");
  refused(cat(pool_run, " --certificate special/../p_labels.csv"), "is the --labels input itself");
  refused(cat(pool_run, " --certificate special/linkdir/../../p_labels.csv"),
          "is the --labels input itself");
  refused(cat(pool_run, " --certificate hard.csv"),  // a hard link: the same inode
          "--certificate: 'hard.csv' is the --labels input itself");
  refused("certify --pool scores.npy --labels labels.csv --selection ./scores.npy",
          "is the --pool input itself");
  refused(cat(pool_run, " --state-values values_id.csv --certificate values_id.csv"),
          "is the --state-values input itself");

  refused(cat(dataset_run(), " --transition-mask scores.npy"),
          "--transition-mask: 'scores.npy' is the --scores input itself");
  refused(cat(dataset_run(), " --certificate labels.csv"), "is the --labels input itself");
  refused(cat(dataset_run(), " --selection ", dataset()), "is the --dataset input itself");
  refused(cat(dataset_run(), " --certificate ", abs, "/", dataset()),
          "is the --dataset input itself");
  refused(
      "certify --dataset d --state-values values.npy --labels labels.csv --certificate "
      "values.npy",
      "is the --state-values input itself");
  // Inside a dataset stored as a directory, or a directory output that holds an input.
  refused(
      "certify --dataset d --scores scores.npy --labels labels.csv --transition-mask "
      "d/costs.npy",
      "--transition-mask: 'd/costs.npy' is inside the --dataset input 'd'");
  fs::create_directories(w.dir / "holder");
  fs::copy_file(w.dir / "labels.csv", w.dir / "holder" / "labels.npy",
                fs::copy_options::overwrite_existing);
  refused("certify --dataset d --scores scores.npy --labels holder/labels.npy --selection holder",
          "--selection: 'holder' holds the --labels input 'holder/labels.npy'");

  refused("draw --pool pool.csv --n 3 --out ./pool.csv", "--out: './pool.csv' is the --pool input");
  refused(cat("draw --dataset ", dataset(), " --n 3 --out ", dataset()),
          "is the --dataset input itself");
  refused("score --dataset d --out d", "--out: 'd' is the --dataset input itself");
  refused("score --dataset d --out d/scores", "--out: 'd/scores' is inside the --dataset input");
  refused(cat("curate --dataset ", dataset(), " --out c --labels holder/labels.npy --selection ",
              "./holder/labels.npy"),
          "--selection: './holder/labels.npy' is the --labels input itself");
}

TEST_CASE("outputs: two outputs of one run are never the same file") {
  refused(cat(pool_run, " --selection x.txt --certificate ./x.txt"),
          "--selection and --certificate name the same file './x.txt'");
  refused(cat(pool_run, " --selection x.npy --certificate special/../x.npy"),
          "--selection and --certificate name the same file");
  refused(cat(dataset_run(), " --selection s.npy --transition-mask s.npy --certificate c.json"),
          "--selection and --transition-mask name the same file");
  refused(cat("curate --dataset ", dataset(), " --out c --draw 10 --budget 10 --transition-mask ",
              "c/scores.npy"),
          "--out and --transition-mask name the same file 'c/scores.npy'");
  refused("curate --dataset d --out c --draw 10 --budget 10 --transition-mask c/selection/m.npy",
          "--transition-mask: 'c/selection/m.npy' is inside the --out output 'c/selection'");
}

TEST_CASE("outputs: a link in a directory component is followed; a regular file is replaced") {
  const Work& w = work();
  const fs::path real = w.dir / "special" / "real";
  const Result r = run_here(cat(pool_run, " --selection special/linkdir/sel.txt --certificate ",
                                "special/linkdir/cert.json"));
  REQUIRE_MESSAGE(r.code == 0, r.err);
  CHECK(fs::is_regular_file(fs::symlink_status(real / "sel.txt")));
  CHECK(fs::is_regular_file(fs::symlink_status(real / "cert.json")));
  CHECK(fs::is_symlink(w.dir / "special" / "linkdir"));
  write_text(real / "sel.txt", "old\n");
  REQUIRE(run_here(cat(pool_run, " --selection special/real/sel.txt")).code == 0);
  CHECK(slurp(real / "sel.txt") != "old\n");
  fs::remove(real / "sel.txt");
  fs::remove(real / "cert.json");
}

// A file size limit (ulimit -f, in 512-byte blocks, SIGXFSZ ignored) makes write(2) fail with
// EFBIG, as a full disk makes it fail with ENOSPC. The selection (under 512 bytes) is written,
// the certificate (several kB) fails: the run exits 2 and removes the selection it created.
TEST_CASE("outputs: a write that fails exits 2 and leaves nothing behind") {
  const std::string limit = "trap '' XFSZ; ulimit -f 1; ";
  refused(cat(pool_run, " --selection new.txt --certificate new.json"), "File too large", limit);
  write_text(work().dir / "old.json", "old certificate\n");
  refused(cat(pool_run, " --selection new.txt --certificate old.json"), "File too large", limit);
  CHECK(slurp(work().dir / "old.json") == "old certificate\n");
  fs::remove(work().dir / "old.json");
}
