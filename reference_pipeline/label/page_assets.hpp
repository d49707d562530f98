#pragma once
// The page of `ltt label`: plain HTML, CSS and JavaScript in label/page/, embedded in the
// program at build time (embed_page.cmake writes them as string literals), so the page loads
// nothing from the network and there is no build step but the C++ one.

#include <span>
#include <string_view>

namespace ltt::label {

struct PageAsset {
  std::string_view path;  // the URL path it is served at
  std::string_view type;  // its media type (served as UTF-8)
  std::string_view text;
};

std::span<const PageAsset> page_assets();

}  // namespace ltt::label
