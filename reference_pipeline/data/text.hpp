#pragma once
// Message text for the reference pipeline's errors and reports, shared by the data layer and
// the `ltt` program.
//
//   cat(a, b, ...)   concatenation of strings, string_views and literals, by append: GCC 12 at
//                    -O3 reports a false -Wrestrict inside operator+(const char*, std::string&&)
//                    (GCC bug 105329), which -Werror turns into a build failure
//   in_quotes(text)  'text'

#include <string>
#include <string_view>

namespace ltt::data {

template <class... Parts>
std::string cat(const Parts&... parts) {
  std::string text;
  (text.append(std::string_view(parts)), ...);
  return text;
}

inline std::string in_quotes(std::string_view text) { return cat("'", text, "'"); }

}  // namespace ltt::data
