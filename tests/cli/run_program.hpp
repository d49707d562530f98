#pragma once
// Runs the built `ltt` program (LTT_PROGRAM) through the shell and collects its exit code,
// standard output and standard error; parses JSON with Python's json module (LTT_PYTHON3),
// an independent parser, so "exactly one JSON object" is checked by someone else's reader.

#include <sys/wait.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include <data/text.hpp>

namespace ltt_cli_test {

struct Result {
  int code = -1;
  std::string out;
  std::string err;
};

// A private directory for this test process, removed when it exits.
inline std::filesystem::path scratch_dir() {
  struct Scratch {
    std::filesystem::path dir;
    Scratch() {
      std::string pattern =
          (std::filesystem::temp_directory_path() / "ltt-cli-test-XXXXXX").string();
      if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
      dir = pattern;
    }
    ~Scratch() {
      std::error_code ignored;
      std::filesystem::remove_all(dir, ignored);
    }
  };
  static const Scratch scratch;
  return scratch.dir;
}

inline std::string slurp(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Runs a shell command line with stdout and stderr captured to files; stdout_file, when
// given, receives standard output instead (and Result::out stays empty).
inline Result shell(const std::string& command_line, const std::string& stdout_file = {}) {
  const auto out = scratch_dir() / "stdout", err = scratch_dir() / "stderr";
  std::filesystem::remove(out);
  const std::string line = command_line + " >'" +
                           (stdout_file.empty() ? out.string() : stdout_file) + "' 2>'" +
                           err.string() + "' </dev/null";
  const int status = std::system(line.c_str());
  Result r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

// `ltt <args>`; args is a shell word list, e.g. "rate --N 10 --N1 4 --U1 0 --n 3".
inline Result run_ltt(const std::string& args) {
  return shell(std::string("'") + LTT_PROGRAM + "' " + args);
}

// Parses text as JSON with Python and returns each top-level key with its value re-encoded by
// json.dumps (floats as their shortest round-trip decimal). Throws unless the text is exactly
// one JSON object on one line (no NaN or Infinity, no trailing data).
inline std::map<std::string, std::string> json_object(const std::string& text) {
  const auto file = scratch_dir() / "json";
  std::ofstream(file, std::ios::binary) << text;
  const std::string script =
      "import json, sys\n"
      "def refuse(c): sys.exit('not JSON: ' + c)\n"
      "s = open(sys.argv[1]).read()\n"
      "d = json.loads(s, parse_constant=refuse)\n"
      "if not isinstance(d, dict): sys.exit('not an object')\n"
      "if not s.endswith('\\n') or s.count('\\n') != 1: sys.exit('not one line')\n"
      "for k, v in d.items(): print(k + '\\t' + json.dumps(v))\n";
  const auto script_file = scratch_dir() / "check_json.py";
  std::ofstream(script_file, std::ios::binary) << script;
  const Result r = shell(std::string("'") + LTT_PYTHON3 + "' '" + script_file.string() + "' '" +
                         file.string() + "'");
  if (r.code != 0)
    throw std::runtime_error(std::string("not one JSON object: ") + r.err + " in: " + text);
  std::map<std::string, std::string> fields;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    const auto tab = line.find('\t');
    fields[line.substr(0, tab)] = line.substr(tab + 1);
  }
  return fields;
}

// The double a decimal reads as (from_chars: exact rounding, subnormals included).
inline double number(const std::string& text) {
  double x = 0.0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), x);
  if (ec != std::errc{} || end != text.data() + text.size())
    throw std::runtime_error(std::string("not a number: ") + text);
  return x;
}

// "[0.0, 0.5, 1.0]" -> {0, 0.5, 1}
inline std::vector<double> numbers(std::string text) {
  if (text.size() < 2 || text.front() != '[' || text.back() != ']')
    throw std::runtime_error(std::string("not an array: ") + text);
  std::vector<double> values;
  std::istringstream items(text.substr(1, text.size() - 2));
  for (std::string item; std::getline(items, item, ',');)
    values.push_back(number(item.substr(item.find_first_not_of(' '))));
  return values;
}

// check_pipeline_report.py (this folder) as the start of a command line: its arguments follow.
inline std::string report_checker() {
  return std::string(LTT_PYTHON3) + " " + LTT_CLI_TEST_SCRIPTS + "/check_pipeline_report.py ";
}

inline int lines(const std::string& text) {
  int count = 0;
  for (const char c : text) count += c == '\n';
  return count;
}

// Whether this build has HDF5 (LTT_TEST_HDF5): datasets are .hdf5 files, else .npy directories.
inline constexpr bool with_hdf5 = LTT_TEST_HDF5;

// A path as one shell word (GCC 12 warns falsely on "'" + string + "'": bug 105329).
inline std::string q(const std::filesystem::path& p) {
  return ltt::data::cat("'", p.string(), "'");
}

#ifdef LTT_CURATE_EXAMPLE
// docs/make_curate_example.py's dataset written at `path` with `flags`, once: a path that
// exists is kept (the scratch directory lives as long as the test process).
inline std::filesystem::path curate_example_at(const std::filesystem::path& path,
                                               const std::string& flags) {
  if (!std::filesystem::exists(path)) {
    std::filesystem::create_directories(path.parent_path());
    const Result r = shell(ltt::data::cat("'", LTT_PYTHON3, "' '", LTT_CURATE_EXAMPLE, "' '",
                                          path.string(), "' ", flags));
    if (r.code != 0) throw std::runtime_error("make_curate_example.py failed: " + r.err);
  }
  return path;
}
#endif

}  // namespace ltt_cli_test
