#pragma once
// Reads the reference tables in tests/reference/ (CSV with a header line; numbers written
// with 21 significant digits, plus "inf" and "-inf"). Shared by the table-driven tests.

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace ltt_test {

struct ReferenceRow {
  std::map<std::string, std::string> field;
  // The whole field must parse; "inf" and "-inf" are numbers.
  long double number(const std::string& name) const {
    const std::string& s = text(name);
    char* end = nullptr;
    const long double v = std::strtold(s.c_str(), &end);
    if (s.empty() || *end != '\0')
      throw std::runtime_error("bad number in column " + name + ": " + s);
    return v;
  }
  long long integer(const std::string& name) const {
    const std::string& s = text(name);
    char* end = nullptr;
    const long long v = std::strtoll(s.c_str(), &end, 10);
    if (s.empty() || *end != '\0')
      throw std::runtime_error("bad integer in column " + name + ": " + s);
    return v;
  }
  const std::string& text(const std::string& name) const {
    const auto it = field.find(name);
    if (it == field.end()) throw std::runtime_error("reference table has no column " + name);
    return it->second;
  }
};

inline std::vector<ReferenceRow> read_reference(const std::string& file) {
  const std::string path = std::string(LTT_TEST_DATA_DIR) + "/" + file;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open reference table " + path);
  auto split = [](const std::string& line) {
    std::vector<std::string> cells;
    std::stringstream ss(line);
    std::string cell;
    while (std::getline(ss, cell, ',')) cells.push_back(cell);
    return cells;
  };
  std::string line;
  std::getline(in, line);
  const std::vector<std::string> header = split(line);
  std::vector<ReferenceRow> rows;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const std::vector<std::string> cells = split(line);
    if (cells.size() != header.size())
      throw std::runtime_error("ragged row in " + path + ": " + line);
    ReferenceRow row;
    for (std::size_t i = 0; i < cells.size(); ++i) row.field[header[i]] = cells[i];
    rows.push_back(std::move(row));
  }
  return rows;
}

// |computed - exact| / |exact|, in long double so the reference keeps its extra digits.
inline long double relative_error(double computed, long double exact) {
  if (exact == 0.0L) return computed == 0.0 ? 0.0L : static_cast<long double>(INFINITY);
  long double d = static_cast<long double>(computed) - exact;
  if (d < 0) d = -d;
  return d / (exact < 0 ? -exact : exact);
}

}  // namespace ltt_test
