// The `ltt` program end to end: exit codes, one-line messages naming the flag, --json output
// that Python parses as exactly one object, and numbers equal to the library's.

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <ltt/certification_rate.hpp>

#include "run_program.hpp"

using namespace ltt_cli_test;

namespace {

void check_bad_input(const std::string& args, const std::string& named) {
  CAPTURE(args);
  const Result r = run_ltt(args);
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(lines(r.err) == 1);
  CHECK(r.err.starts_with("ltt"));
  CHECK_MESSAGE(r.err.find(named) != std::string::npos, r.err);
}

}  // namespace

TEST_CASE("ltt rate --json: one JSON object, the library's rate to the last bit") {
  const Result r =
      run_ltt("rate --N 2000 --N1 300 --U1 50 --n 200 --alpha 0.25 --delta 0.1 --json");
  REQUIRE(r.code == 0);
  CHECK(r.err.empty());
  const auto json = json_object(r.out);
  CHECK(json.at("N") == "2000");
  CHECK(json.at("N1") == "300");
  CHECK(json.at("U1") == "50");
  CHECK(json.at("n") == "200");
  CHECK(number(json.at("alpha")) == 0.25);
  CHECK(number(json.at("delta")) == 0.1);
  CHECK(r.out.find("\"alpha\":0.25,\"delta\":0.1,") !=
        std::string::npos);  // not 0.10000000000000001
  CHECK(number(json.at("rate")) == ltt::certification_rate(2000, 300, 50, 200, 0.25, 0.1));
  CHECK(json.at("null_boundary") == "76");  // floor(0.25 * 300) + 1
  CHECK(number(json.at("purity_margin")) == doctest::Approx(0.25 - 50.0 / 300).epsilon(1e-15));
  CHECK(json.at("true_null") == "false");
  CHECK(json.at("interpretation").find("tends to 1") != std::string::npos);
}

// A pool of N = 4 whose first selection holds N1 = 2 safe trajectories (U1 = 0), n = 2
// labels, alpha = 0.25. Then U* = floor(0.5) + 1 = 1 and m ~ Hyp(4, 2, 2):
//   P[m = 0] = C(2,0) C(2,2) / C(4,2) = 1/6,  P[m = 1] = 4/6,  P[m = 2] = 1/6.
// k = 0 always, and p(0, m) = P[Hyp(2, 1, m) <= 0] = 1, 1/2, 0 for m = 0, 1, 2. The walk
// certifies iff p <= delta:
//   delta = 0.6: m = 1 and m = 2 certify, rate = 5/6;
//   delta = 0.4: only m = 2 certifies,   rate = 1/6.
// At delta = 0.5 the exact p-value 1/2 ties delta. composition_pvalue rounds every p-value up
// by a factor 1 + 2^-45 (docs/pvalue.md, "Rounding up"), so the walk does not reject at m = 1
// and its rate is 1/6; the exact-arithmetic walk would give 5/6.
TEST_CASE("ltt rate on a pool of four, by hand") {
  const auto rate = [](const char* delta) {
    const Result r =
        run_ltt(std::string("rate --N 4 --N1 2 --U1 0 --n 2 --alpha 0.25 --json --delta ") + delta);
    REQUIRE(r.code == 0);
    return number(json_object(r.out).at("rate"));
  };
  CHECK(std::abs(rate("0.6") - 5.0 / 6) <= 1e-12);
  CHECK(std::abs(rate("0.4") - 1.0 / 6) <= 1e-12);
  CHECK(std::abs(rate("0.5") - 1.0 / 6) <= 1e-12);
}

TEST_CASE("ltt rate: summary, defaults, --name=value, the true-null side") {
  const Result summary = run_ltt("rate --N 2000 --N1 300 --U1 50 --n 200");
  REQUIRE(summary.code == 0);
  CHECK(summary.err.empty());
  CHECK(summary.out.starts_with("certification rate "));
  CHECK(summary.out.find("U* = 76") != std::string::npos);
  CHECK(summary.out.find("alpha = 0.25, delta = 0.1") != std::string::npos);

  const Result equals = run_ltt("rate --N=2000 --N1=300 --U1=50 --n=200 --json");
  const Result spaced =
      run_ltt("rate --json --n 200 --U1 50 --N1 300 --N 2000 --alpha 0.25 --delta 0.1");
  REQUIRE(equals.code == 0);
  CHECK(equals.out == spaced.out);

  // Counts may be written 2e3 when they are whole.
  CHECK(run_ltt("rate --N 2e3 --N1 300 --U1 50 --n 200 --json").out == spaced.out);

  const Result null = run_ltt("rate --N 2000 --N1 300 --U1 76 --n 200 --json");
  REQUIRE(null.code == 0);
  const auto json = json_object(null.out);
  CHECK(json.at("true_null") == "true");
  CHECK(number(json.at("rate")) <= 0.1);
  CHECK(json.at("interpretation").find("rate <= delta at every n") != std::string::npos);
}

TEST_CASE("bad input: exit 2, nothing on stdout, one line on stderr naming the flag") {
  const std::string pool = "--N 2000 --N1 300 --U1 50";
  check_bad_input("rate " + pool + " --n 200 --bogus 1", "--bogus");
  check_bad_input("rate " + pool + " --n", "--n needs a value");
  check_bad_input("rate --N --N1 300 --U1 50 --n 200", "--N needs a value");
  check_bad_input("rate " + pool + " --n=", "--n needs a value");
  check_bad_input("rate " + pool + " --n abc", "--n: 'abc' is not a number");
  check_bad_input("rate " + pool + " --n 2.5", "--n: '2.5' is not a whole number");
  check_bad_input("rate " + pool + " --n -3", "--n");
  check_bad_input("rate " + pool + " --n 1e300", "--n");
  check_bad_input("rate " + pool + " --n 99999999999999999999", "--n");
  check_bad_input("rate " + pool + " --n 200 --alpha 1.5", "--alpha");
  check_bad_input("rate " + pool + " --n 200 --alpha 0", "--alpha");
  check_bad_input("rate " + pool + " --n 200 --delta nan", "--delta");
  check_bad_input("rate " + pool + " --n 200 --delta inf", "--delta");
  check_bad_input("rate " + pool + " --n 200 --delta 0.1x", "--delta");
  check_bad_input("rate --N 2000 --N1 300 --n 200", "--U1");
  check_bad_input("rate " + pool + " --n 200 --N 10", "--N given twice");
  check_bad_input("rate " + pool + " --n 200 --json=1", "--json");
  check_bad_input("rate " + pool + " --n 200 extra", "'extra'");
  check_bad_input("rate --N 2000 --N1 300 --U1 301 --n 200", "--U1");
  check_bad_input("rate --N 2000 --N1 3000 --U1 50 --n 200", "--N1");
  check_bad_input("rate " + pool + " --n 2001", "--n");
  check_bad_input("budget " + pool + " --target 1.5", "--target");
  check_bad_input("budget " + pool, "--target");
  check_bad_input("budget " + pool + " --target 0.9 --n-max 10", "--n-max");
  check_bad_input("budget " + pool + " --target 0.9 --curve --n-max 2001", "--n-max");
  check_bad_input("frobnicate --N 1", "frobnicate");
  check_bad_input("", "subcommand");
}

// Bounded work (docs/cli.md, "ltt rate" and "ltt budget"): a count the command cannot serve
// in reasonable time and memory is refused at parse time with one line naming the flag and its
// maximum; below the caps the reviewers' reproducers answer.
TEST_CASE("ltt rate and ltt budget: counts above their maximum exit 2 before any work") {
  check_bad_input("rate --N 9007199254740992 --N1 4503599627370496 --U1 0 --n 4503599627370496",
                  "--n: 4503599627370496 exceeds the maximum 67108864 when --N1 exceeds 1048576");
  check_bad_input("budget --N 8589934592 --N1 300 --U1 50 --target 0.9",
                  "--N: 8589934592 exceeds the maximum 4294967296");
  check_bad_input("budget --N 4294967296 --N1 2000000 --U1 50 --target 0.9",
                  "--N1: 2000000 exceeds the maximum 1048576");
  check_bad_input("budget --N 1e6 --N1 300 --U1 50 --target 0.9 --curve --n-max 16385",
                  "--n-max: 16385 exceeds the maximum 16384");
  check_bad_input("budget --N 1e6 --N1 300 --U1 50 --target 0.9 --curve",
                  "--n-max: the curve runs to N = 1000000 by default, above the maximum 16384");
  check_bad_input("budget --N 2000 --N1 300 --U1 50 --target 1",
                  "--target: 1 exceeds the maximum 0.999999999");
  const Result help = run_ltt("budget --help");
  CHECK(help.out.find("(at most 1048576)") != std::string::npos);
}

TEST_CASE("ltt budget at N = 2^32 and ltt rate at N = 2^53 answer (the old scans ran for hours)") {
  const Result r = run_ltt("budget --N 4294967296 --N1 300 --U1 50 --target 0.9 --json");
  REQUIRE(r.code == 0);
  const auto json = json_object(r.out);
  const auto budget = ltt::label_budget(std::int64_t{1} << 32, 300, 50, 0.25, 0.1, 0.9);
  REQUIRE(budget.has_value());
  CHECK(json.at("budget") == std::to_string(*budget));

  const Result curve = run_ltt("budget --curve --n-max 5 --N 1e9 --N1 300 --U1 50 --target 0.9");
  REQUIRE(curve.code == 0);
  CHECK(lines(curve.out) == 7);  // header and n = 0..5

  const Result rate =
      run_ltt("rate --N 9007199254740992 --N1 300 --U1 50 --n 4503599627370496 --json");
  REQUIRE(rate.code == 0);
  CHECK(number(json_object(rate.out).at("rate")) ==
        ltt::certification_rate(std::int64_t{1} << 53, 300, 50, std::int64_t{1} << 52, 0.25, 0.1));
}

TEST_CASE("--help: usage on stdout, exit 0") {
  const Result top = run_ltt("--help");
  CHECK(top.code == 0);
  CHECK(top.out.find("rate") != std::string::npos);
  CHECK(top.out.find("budget") != std::string::npos);
  for (const std::string sub : {"rate", "budget"}) {
    // --help wins over anything else on the line, even bad input.
    const Result r = run_ltt(sub + " --N abc --help");
    CHECK(r.code == 0);
    CHECK(r.err.empty());
    CHECK(r.out.starts_with(std::string("usage: ltt ") + sub + " --N <count>"));
  }
}

TEST_CASE("ltt --version and -V: the version, then the build (CPU target, compiler)") {
  for (const std::string flag : {"--version", "-V"}) {
    CAPTURE(flag);
    const Result r = run_ltt(flag);
    CHECK(r.code == 0);
    CHECK(r.err.empty());
    REQUIRE(lines(r.out) == 2);
    CHECK(r.out.starts_with(std::string("ltt ") + LTT_EXPECTED_VERSION + "\nbuild: "));
#if LTT_EXPECTED_NATIVE
    CHECK(r.out.find("build: native (-march=native), ") != std::string::npos);
#elif defined(__x86_64__)
    CHECK(r.out.find("build: portable x86-64-v" + std::to_string(LTT_CPU_LEVEL) + ", ") !=
          std::string::npos);
#endif
#if defined(__clang__)
    CHECK(r.out.find(", Clang ") != std::string::npos);
#elif defined(__GNUC__)
    CHECK(r.out.find(std::string(", GCC ") + __VERSION__ + ",") != std::string::npos);
#endif
  }
  CHECK(run_ltt("--help").out.find("`ltt --version` (or -V)") != std::string::npos);
}

TEST_CASE("ltt budget --json: the library's label budget") {
  const Result r = run_ltt("budget --N 2000 --N1 300 --U1 50 --target 0.9 --json");
  REQUIRE(r.code == 0);
  CHECK(r.err.empty());
  const auto json = json_object(r.out);
  const auto budget = ltt::label_budget(2000, 300, 50, 0.25, 0.1, 0.9);
  REQUIRE(budget.has_value());
  CHECK(json.at("budget") == std::to_string(*budget));
  CHECK(number(json.at("rate_at_budget")) ==
        ltt::certification_rate(2000, 300, 50, *budget, 0.25, 0.1));
  CHECK(number(json.at("rate_at_budget")) >= 0.9);
  CHECK(json.at("reason") == "null");
  CHECK(number(json.at("target")) == 0.9);
  CHECK(json.count("curve") == 0);

  const Result summary = run_ltt("budget --N 2000 --N1 300 --U1 50 --target 0.9");
  REQUIRE(summary.code == 0);
  CHECK(summary.out.starts_with(std::string("label budget n = ") + std::to_string(*budget)));
}

TEST_CASE("ltt budget: none, with the reason, is an answer (exit 0)") {
  const Result r = run_ltt("budget --N 2000 --N1 300 --U1 80 --target 0.9 --json");
  REQUIRE(r.code == 0);
  const auto json = json_object(r.out);
  CHECK(json.at("budget") == "null");
  CHECK(json.at("rate_at_budget") == "null");
  CHECK(json.at("reason").find("true null") != std::string::npos);
  CHECK(json.at("true_null") == "true");

  const Result summary = run_ltt("budget --N 2000 --N1 300 --U1 80 --target 0.9");
  REQUIRE(summary.code == 0);
  CHECK(summary.out.starts_with("label budget: none: the first selection is a true null"));
}

TEST_CASE("ltt budget --curve: CSV n,rate equal to the library's curve") {
  const std::vector<double> expected = ltt::certification_rate_curve(2000, 300, 50, 0.25, 0.1, 60);
  const Result csv = run_ltt("budget --N 2000 --N1 300 --U1 50 --target 0.9 --curve --n-max 60");
  REQUIRE(csv.code == 0);
  CHECK(csv.err.empty());
  std::istringstream rows(csv.out);
  std::string row;
  REQUIRE(std::getline(rows, row));
  CHECK(row == "n,rate");
  std::size_t n = 0;
  for (; std::getline(rows, row); ++n) {
    CAPTURE(row);
    REQUIRE(n < expected.size());
    const auto comma = row.find(',');
    CHECK(row.substr(0, comma) == std::to_string(n));
    CHECK(number(row.substr(comma + 1)) == expected[n]);
  }
  CHECK(n == expected.size());

  const Result json =
      run_ltt("budget --N 2000 --N1 300 --U1 50 --target 0.9 --curve --n-max 60 --json");
  REQUIRE(json.code == 0);
  const auto fields = json_object(json.out);
  CHECK(fields.at("n_max") == "60");
  CHECK(numbers(fields.at("curve")) == expected);
  CHECK(fields.count("budget") == 1);

  // Without --n-max the curve runs to n = N.
  const Result whole = run_ltt("budget --N 40 --N1 10 --U1 1 --target 0.5 --curve");
  REQUIRE(whole.code == 0);
  CHECK(lines(whole.out) == 1 + 41);
}

TEST_CASE("standard output that cannot be written: exit 1, one line") {
  if (!std::filesystem::exists("/dev/full")) return;
  const Result r =
      shell(std::string("'") + LTT_PROGRAM + "' rate --N 2000 --N1 300 --U1 50 --n 200 --json",
            "/dev/full");
  CHECK(r.code == 1);
  CHECK(lines(r.err) == 1);
}

TEST_CASE("a CPU without AVX2, FMA and BMI2 (qemu's Nehalem): exit 2 and one line, not SIGILL") {
  if (std::string(LTT_QEMU_X86_64).empty() || !LTT_CPU_CHECKED) {
    MESSAGE(
        "not run: needs qemu-x86_64 (qemu-user) and an x86-64-v3 or -v4 build without "
        "sanitizers");
    return;
  }
  const Result r = shell(std::string("'") + LTT_QEMU_X86_64 + "' -cpu Nehalem '" + LTT_PROGRAM +
                         "' rate --N 2000 --N1 300 --U1 50 --n 200");
  CHECK(r.code == 2);
  CHECK(r.out.empty());
#if LTT_CPU_LEVEL == 4
  CHECK(r.err ==
        "ltt: this build targets x86-64-v4 (AVX2, FMA, BMI2, AVX-512 F/BW/CD/DQ/VL) and this CPU "
        "lacks avx2, fma, bmi2, avx512f, avx512bw, avx512cd, avx512dq, avx512vl; rebuild on this "
        "machine with cmake -DLTT_NATIVE=ON\n");
#else
  CHECK(r.err ==
        "ltt: this build targets x86-64-v3 (AVX2, FMA, BMI2) and this CPU lacks avx2, fma, bmi2; "
        "rebuild on this machine with cmake -DLTT_NATIVE=ON\n");
#endif
}

TEST_CASE("an x86-64-v4 build on a CPU without AVX-512 (qemu's Haswell): exit 2 and one line") {
  if (std::string(LTT_QEMU_X86_64).empty() || !LTT_CPU_CHECKED || LTT_CPU_LEVEL != 4) {
    MESSAGE("not run: needs qemu-x86_64 (qemu-user) and an x86-64-v4 build without sanitizers");
    return;
  }
  const Result r = shell(std::string("'") + LTT_QEMU_X86_64 + "' -cpu Haswell '" + LTT_PROGRAM +
                         "' rate --N 2000 --N1 300 --U1 50 --n 200");
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  // qemu warns first, on stderr, about the Haswell features its TCG lacks (pcid, hle, ...): the
  // program's one line is the last.
  CHECK(r.err.ends_with(
      "\nltt: this build targets x86-64-v4 (AVX2, FMA, BMI2, AVX-512 F/BW/CD/DQ/VL) and this CPU "
      "lacks avx512f, avx512bw, avx512cd, avx512dq, avx512vl; rebuild on this machine with cmake "
      "-DLTT_NATIVE=ON\n"));
  CHECK(r.err.find("ltt: ") == r.err.rfind("ltt: "));
}
