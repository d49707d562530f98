// `ltt label`: the labeling server, driven by label_session.py (see its docstring; the browser
// cases are in label_browser.py, the damage and abuse cases in label_robustness.py, the cost
// bands of --budgets in label_bands.py) in headless Chromium and over plain HTTP, and its flags
// refused before anything is written.

#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include "run_program.hpp"

namespace {

using ltt_cli_test::Result;
using ltt_cli_test::run_ltt;
using ltt_cli_test::scratch_dir;
using ltt_cli_test::shell;

// The inputs of every case (make_label_data.py), written once per test process.
std::filesystem::path label_data() {
  static const std::filesystem::path dir = [] {
    const auto d = scratch_dir() / "data";
    const Result r = shell(std::string("'") + LTT_PYTHON3 + "' '" LTT_LABEL_TEST_SCRIPTS
                           "/make_label_data.py' '" + d.string() + "'");
    REQUIRE_MESSAGE(r.code == 0, r.err);
    return d;
  }();
  return dir;
}

// label_session.py CASE: 0 when every check held; 77 when the browser is missing.
Result session(const std::string& name) {
  const auto work = scratch_dir() / "work";
  std::filesystem::create_directories(work);
  return shell(std::string("LTT_FAULT_SHIM='" LTT_FAULT_SHIM "' timeout 120 '") + LTT_PYTHON3 + "' '" LTT_LABEL_TEST_SCRIPTS
               "/label_session.py' " + name + " '" LTT_PROGRAM "' '" + label_data().string() +
               "' '" + work.string() + "' '" LTT_LABEL_SCREENSHOTS "'");
}

// A browser case runs wherever chromium, chromedriver and python3-selenium are installed
// (scripts/setup installs them); elsewhere it says it was skipped instead of passing quietly.
void browser_case(const std::string& name) {
  const Result r = session(name);
  if (r.code == 77) {
    MESSAGE("skipped, no browser to drive: " << r.out);
    return;
  }
  INFO(r.out);
  INFO(r.err);
  CHECK(r.code == 0);
}

}  // namespace

TEST_SUITE("label") {
  TEST_CASE("label budget in a browser: 36 answers and an undo, certificate equal to certify's") {
    browser_case("budget-browser");
  }

  TEST_CASE("label compare in a browser: pairs.csv trains ltt score --pairs-file") {
    browser_case("compare-browser");
  }

  TEST_CASE("label budget in a browser: an answer lost to SIGKILL is said not recorded") {
    browser_case("reconnect-browser");
  }

  TEST_CASE("label on a point-goal pool in a browser: the world drawn from its geometry") {
    if (!LTT_TEST_HDF5) {
      MESSAGE("skipped: the pipeline writes its pool as HDF5 only in a build with HDF5");
      return;
    }
    browser_case("world-browser");
  }

  TEST_CASE("label budget --budgets in a browser: band keys, no cost shown, certify's certificate") {
    browser_case("bands-browser");
  }

  TEST_CASE("label budget --budgets: 40 bands over HTTP and an undo; certify's files; resumed") {
    const Result r = session("bands-session");
    INFO(r.err);
    CHECK(r.code == 0);
  }

  TEST_CASE("label budget: SIGKILL after 10 answers, resumed where the walk was") {
    const Result r = session("kill-resume");
    INFO(r.err);
    CHECK(r.code == 0);
  }

  TEST_CASE("label: a journal edited by hand is refused naming the line and the field") {
    const Result r = session("journal-edits");
    INFO(r.err);
    CHECK(r.code == 0);
  }

  TEST_CASE("label: an input replaced at the same path, or a setting changed, is refused") {
    const Result r = session("replaced-inputs");
    INFO(r.err);
    CHECK(r.code == 0);
  }

  TEST_CASE("label: a failed write or fsync leaves a journal that replays; cut or edited files refused") {
    const Result r = session("journal-faults");
    INFO(r.err);
    CHECK(r.code == 0);
  }

  TEST_CASE("label: the token file is 0600; one others can read is refused; --new-token") {
    const Result r = session("token-file");
    INFO(r.err);
    CHECK(r.code == 0);
  }

  TEST_CASE("label: after the files are written, an undo of an answer they hold is refused") {
    const Result r = session("undo-after-write");
    INFO(r.err);
    CHECK(r.code == 0);
  }

  TEST_CASE("label: 40 stalled connections delay neither an answer nor SIGTERM; one range") {
    const Result r = session("stall");
    INFO(r.err);
    CHECK(r.code == 0);
  }

  TEST_CASE("label: 3000 seeded random requests: no 5xx, and the journal replays to the state") {
    const Result r = session("fuzz");
    INFO(r.err);
    CHECK(r.code == 0);
  }

  TEST_CASE("label: token, Host, traversal, body size, unasked episodes, bind address") {
    const Result r = session("security");
    INFO(r.err);
    CHECK(r.code == 0);
  }

  TEST_CASE("label: bad flags exit 2 naming the flag, and write nothing") {
    const std::string data = label_data().string();
    const std::string pool = " --pool '" + data + "/pool.csv'";
    const std::string out = (scratch_dir() / "never").string();
    struct Bad {
      std::string args, flag;
    };
    const Bad cases[] = {
        {"label", "budget or compare"},
        {"label tally", "budget or compare"},
        {"label budget" + pool, "--out"},
        {"label budget --out '" + out + "'", "--pool"},
        {"label budget --dataset '" + data + "/data.hdf5' --out '" + out + "'", "--scores"},
        {"label budget" + pool + " --out '" + out + "' --stop never", "--stop"},
        {"label budget" + pool + " --out '" + out + "' --n 1000", "--n"},
        {"label budget" + pool + " --out '" + out + "' --show 0", "--show"},
        {"label budget" + pool + " --out '" + out + "' --port 70000", "--port"},
        {"label budget" + pool + " --out '" + out + "' --media '" + data + "/pool.csv'",
         "--media"},
        {"label budget" + pool + " --out '" + data + "/pool.csv'", "--out"},
        {"label compare --dataset '" + data + "/data.hdf5' --out '" + out + "' --show 9",
         "--show"},
        {"label compare --dataset '" + data + "/data.hdf5' --out '" + out + "' --segment 500",
         "--segment"},
        {"label budget --dataset '" + data + "/bad_world.hdf5' --scores '" + data +
             "/scores.csv' --n 36 --out '" + out + "'",
         "world geometry: key 'infos/position' has shape"},
        {"label compare --dataset '" + data + "/bad_world.hdf5' --out '" + out + "'",
         "world geometry: key 'infos/position' has shape"},
    };
    for (const Bad& bad : cases) {
      CAPTURE(bad.args);
      const Result r = run_ltt(bad.args);
      CHECK(r.code == 2);
      CHECK(r.err.find(bad.flag) != std::string::npos);
      CHECK(r.err.find('\n') == r.err.size() - 1);
      CHECK_FALSE(std::filesystem::exists(out));
    }
  }
}
