#pragma once
// Small text helpers shared by the pipeline tests that read rendered reports and messages.

#include <stdexcept>
#include <string>
#include <string_view>

namespace ltt_pipeline_test {

// How often `what` occurs in `text` (overlapping occurrences count).
inline std::size_t count(const std::string& text, std::string_view what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The message of the std::invalid_argument f() throws, or a marker when it throws none.
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no std::invalid_argument)";
}

}  // namespace ltt_pipeline_test
