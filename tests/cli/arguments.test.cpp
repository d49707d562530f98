// The program's argument parser, without the program: kinds, forms, defaults, messages.

#include <doctest/doctest.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "arguments.hpp"
#include "curation_flags.hpp"

using namespace ltt::cli;

namespace {

constexpr Flag test_flags[] = {
    {"N", FlagKind::count, "pool size", {}, true}, {"alpha", FlagKind::open_unit, "level", "0.25"},
    {"target", FlagKind::unit, "target"},          {"json", FlagKind::boolean, "json"},
    {"pool", FlagKind::text, "pool file"},         {"dataset", FlagKind::paths, "files"},
};
constexpr Command command{"test", "A command for the tests.", test_flags};

Arguments parse_words(std::vector<std::string_view> words) { return parse(command, words); }

std::string message(std::vector<std::string_view> words) {
  try {
    parse_words(words);
  } catch (const BadInput& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("parse: both forms, defaults, booleans, text") {
  const Arguments a = parse_words({"--N", "2000", "--pool=a=b.csv", "--json"});
  CHECK(a.count("N") == 2000);
  CHECK(a.real("alpha") == 0.25);
  CHECK(a.has("alpha"));
  CHECK_FALSE(a.given("alpha"));
  CHECK_FALSE(a.has("target"));
  CHECK(a.flag("json"));
  CHECK(a.text("pool") == "a=b.csv");  // only the first '=' splits

  const Arguments b = parse_words({"--N=1e6", "--alpha", "0.3", "--target", "1"});
  CHECK(b.count("N") == 1000000);
  CHECK(b.real("alpha") == 0.3);
  CHECK(b.given("alpha"));
  CHECK(b.real("target") == 1.0);
  CHECK_FALSE(b.flag("json"));
  CHECK(parse_words({"--N", "+7"}).count("N") == 7);
  CHECK(parse_words({"--N", "9007199254740992"}).count("N") == (std::int64_t{1} << 53));
}

TEST_CASE("parse: a paths flag takes every value up to the next flag, and may repeat") {
  const Arguments a = parse_words({"--dataset", "a.hdf5", "b.hdf5", "-c", "--N", "3"});
  CHECK(a.texts("dataset") == std::vector<std::string>{"a.hdf5", "b.hdf5", "-c"});
  CHECK(a.count("N") == 3);
  const Arguments b = parse_words({"--N", "3", "--dataset=x", "--dataset", "y", "z"});
  CHECK(b.texts("dataset") == std::vector<std::string>{"x", "y", "z"});
  CHECK_FALSE(parse_words({"--N", "3"}).has("dataset"));
  CHECK(message({"--N", "3", "--dataset"}) == "--dataset needs a value");
  CHECK(message({"--N", "3", "--dataset", "--json"}) == "--dataset needs a value");
  CHECK(message({"--N", "3", "--dataset", "a", ""}) == "--dataset: an empty name");
  CHECK(message({"--N", "3", "--dataset=", "a"}) == "--dataset needs a value");
  // Other flags still take one value: a second token is an error, not a value.
  CHECK(message({"--N", "3", "--pool", "a", "b"}) ==
        "unexpected argument 'b' (flags start with --)");
  CHECK(message({"--N", "3", "--pool", "a", "--pool", "b"}) == "--pool given twice");
  CHECK(usage(command).find("--dataset <path>...") != std::string::npos);
}

TEST_CASE("parse: each malformed input names its flag") {
  CHECK(message({}) == "missing required flag --N");
  CHECK(message({"--N"}) == "--N needs a value");
  CHECK(message({"--N", "--json"}) == "--N needs a value");
  CHECK(message({"--N", "x1"}) == "--N: 'x1' is not a number");
  CHECK(message({"--N", "1.5"}) == "--N: '1.5' is not a whole number");
  CHECK(message({"--N", "-1"}) == "--N: -1 must be a count in [0, 2^53]");
  CHECK(message({"--N", "9007199254740993"}) ==
        "--N: 9007199254740993 must be a count in [0, 2^53]");
  CHECK(message({"--N", "1e999"}) == "--N: 1e999 must be a count in [0, 2^53]");
  CHECK(message({"--N", "nan"}) == "--N: 'nan' is not a number");
  CHECK(message({"--N", "1", "--alpha", "1"}) == "--alpha: 1 must lie in (0, 1)");
  CHECK(message({"--N", "1", "--alpha", "-inf"}) == "--alpha: -inf must lie in (0, 1)");
  CHECK(message({"--N", "1", "--target", "1.0001"}) == "--target: 1.0001 must lie in [0, 1]");
  CHECK(message({"--N", "1", "--json=yes"}) == "--json takes no value");
  CHECK(message({"--N", "1", "--N", "2"}) == "--N given twice");
  CHECK(message({"--N", "1", "--nope"}) == "unknown flag --nope (see ltt test --help)");
  CHECK(message({"--N", "1", "-x"}) == "unexpected argument '-x' (flags start with --)");
  CHECK(message({"--N", "1", "--"}) == "unexpected argument '--' (flags start with --)");
}

TEST_CASE("parse: --help skips every other check; usage lists the table") {
  CHECK(parse_words({"--N", "abc", "--help"}).help());
  CHECK(parse_words({"-h"}).help());
  const std::string text = usage(command);
  CHECK(text.starts_with(
      "usage: ltt test --N <count> [--alpha <p>] [--target <p>] [--json] [--pool <value>] "
      "[--dataset <path>...]\n"));
  CHECK(text.find("(default 0.25)") != std::string::npos);
  CHECK(text.find("(required)") != std::string::npos);
  CHECK(text.find("--help") != std::string::npos);
}

TEST_CASE("Arguments: reading a flag the table lacks, or as the wrong kind, is a logic error") {
  const Arguments a = parse_words({"--N", "1"});
  CHECK_THROWS_AS(a.count("M"), std::logic_error);
  CHECK_THROWS_AS(a.real("N"), std::logic_error);
  CHECK_THROWS_AS(a.count("alpha"), std::logic_error);
  CHECK_THROWS_AS(a.real("target"), std::logic_error);  // no value, no default
}

TEST_CASE("--grid's default text is the paper's grid") {
  const std::vector<double> parsed = ltt::cli::grid_quantiles(ltt::cli::paper_grid_text);
  CHECK(parsed == std::vector<double>(ltt::curation::paper_grid_quantiles.begin(),
                                      ltt::curation::paper_grid_quantiles.end()));
}

TEST_CASE("--memory: a count of bytes with a unit as people write it, powers of 1024") {
  constexpr std::int64_t Ki = 1024, Mi = Ki * Ki, Gi = Mi * Ki, Ti = Gi * Ki;
  const std::pair<std::string_view, std::int64_t> accepted[] = {
      {"300000", 300000}, {"300000B", 300000}, {"1b", 1},          {"64K", 64 * Ki},
      {"64kb", 64 * Ki},  {"64KiB", 64 * Ki},  {"512M", 512 * Mi}, {"64m", 64 * Mi},
      {"64MB", 64 * Mi},  {"64MiB", 64 * Mi},  {"64mib", 64 * Mi}, {"1G", Gi},
      {"1GB", Gi},        {"1GiB", Gi},        {"2T", 2 * Ti},     {"2TB", 2 * Ti},
      {"2TiB", 2 * Ti},   {"1024T", 1024 * Ti}};
  for (const auto& [text, bytes] : accepted) {
    CAPTURE(text);
    CHECK(memory_bytes(text) == bytes);
  }
  const std::string_view refused[] = {"",     "0",   "0M",  "-1",   "1.5G", "64 M", "M",
                                      "64Mi", "64X", "64P", "64MBB", "64iB", "1025T", "+64M"};
  for (const std::string_view text : refused) {
    CAPTURE(text);
    try {
      memory_bytes(text);
      FAIL("accepted");
    } catch (const BadInput& e) {
      CHECK(std::string(e.what()).starts_with("--memory: '" + std::string(text) +
                                              "' is not a size in bytes"));
    }
  }
}
