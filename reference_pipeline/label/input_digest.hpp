#pragma once
// What binds a labeling journal to its inputs' contents, not their names (journal_header.hpp):
// each input's size and SHA-256 (FIPS 180-4, computed by OpenSSL's libcrypto, which Debian's
// cpp-httplib already depends on). A regular file's digest is of its bytes; a directory's (a
// DSRL dataset stored as .npy files) is of its regular files in the order of their relative
// paths, each as its path, a NUL, its size in decimal, a NUL, then its bytes. Reading is
// streamed in 1 MiB blocks.

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace ltt::label {

struct InputDigest {
  std::uintmax_t size = 0;  // bytes; a directory's, summed over its files
  std::string sha256;       // 64 lower-case hex digits
};

// Throws BadInput naming `flag` when the input cannot be read.
InputDigest input_digest(std::string_view flag, const std::filesystem::path& path);

// {"flag": FLAG, "path": PATH, "size": N, "sha256": HEX}: one input as a journal header holds it.
nlohmann::json input_record(std::string_view flag, const std::filesystem::path& path);

}  // namespace ltt::label
