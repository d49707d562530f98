#pragma once
// Checks shared by the `ltt certify` tests: questions to the program's JSON, asked through
// Python's json module, and the steps of a certificate as lines to compare with the library's.

#include <charconv>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <curation/calibrated_selection.hpp>

#include "run_program.hpp"

namespace ltt_cli_test {

// Evaluates a Python expression over the parsed JSON object d and returns what it prints.
inline std::string json_query(const std::string& json_text, const std::string& expression) {
  const auto file = scratch_dir() / "query.json";
  std::ofstream(file, std::ios::binary) << json_text;
  const auto script = scratch_dir() / "query.py";
  std::ofstream(script, std::ios::binary)
      << "import json, sys\nd = json.load(open(sys.argv[1]))\nprint(" << expression << ")\n";
  const Result r =
      shell(std::string("'") + LTT_PYTHON3 + "' '" + script.string() + "' '" + file.string() + "'");
  if (r.code != 0) throw std::runtime_error("query failed: " + r.err);
  return r.out.substr(0, r.out.find_last_not_of('\n') + 1);
}

// The JSON of a run's steps, one line per step: lambda quantile N m k p rejected.
inline std::vector<std::string> step_lines(const std::string& json_text) {
  const std::string text = json_query(
      json_text,
      "'\\n'.join('%r %r %d %d %d %r %s' % (s['lambda'], s['quantile'], s['N'], s['m'], s['k'], "
      "s['p'], s['rejected']) for s in d['steps'])");
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

inline std::string python_repr(double x) {
  // Python's repr is the shortest round-trip decimal; to_chars gives the same digits.
  char buf[40];
  const auto r = std::to_chars(buf, buf + sizeof buf, x);
  std::string s(buf, r.ptr);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

inline std::vector<std::string> expected_step_lines(const ltt::curation::Certificate& c) {
  std::vector<std::string> lines;
  for (const ltt::curation::CertificateStep& s : c.steps)
    lines.push_back(python_repr(s.lambda) + " " + python_repr(s.quantile) + " " +
                    std::to_string(s.N) + " " + std::to_string(s.m) + " " + std::to_string(s.k) +
                    " " + python_repr(s.p) + " " + (s.rejected ? "True" : "False"));
  return lines;
}

}  // namespace ltt_cli_test
