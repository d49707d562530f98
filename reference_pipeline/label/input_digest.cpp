// The inputs' digests of a labeling journal (input_digest.hpp), on OpenSSL's EVP interface.

#include "input_digest.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <vector>

#include <certification/bad_input.hpp>
#include <certification/format.hpp>

namespace ltt::label {

namespace {

using certification::BadInput;
using certification::cat;
using certification::in_quotes;

class Sha256 {
 public:
  Sha256() : context_(EVP_MD_CTX_new(), EVP_MD_CTX_free) {
    if (!context_ || EVP_DigestInit_ex(context_.get(), EVP_sha256(), nullptr) != 1)
      throw std::runtime_error("OpenSSL: cannot start a SHA-256 digest");
  }
  void add(const char* data, std::size_t size) {
    if (EVP_DigestUpdate(context_.get(), data, size) != 1)
      throw std::runtime_error("OpenSSL: SHA-256 update failed");
  }
  void add(std::string_view text) { add(text.data(), text.size()); }
  std::string hex() {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    if (EVP_DigestFinal_ex(context_.get(), digest, &length) != 1)
      throw std::runtime_error("OpenSSL: SHA-256 final failed");
    static constexpr char digits[] = "0123456789abcdef";
    std::string text;
    for (unsigned int i = 0; i < length; ++i) {
      text += digits[digest[i] >> 4];
      text += digits[digest[i] & 15];
    }
    return text;
  }

 private:
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> context_;
};

// Adds a regular file's bytes; returns their count.
std::uintmax_t add_file(Sha256& sha, std::string_view flag, const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in)
    throw BadInput(cat("--", flag, ": cannot read ", in_quotes(file.string()), ": ",
                       std::strerror(errno)));
  std::vector<char> block(std::size_t{1} << 20);
  std::uintmax_t size = 0;
  while (in) {
    in.read(block.data(), static_cast<std::streamsize>(block.size()));
    const auto got = static_cast<std::size_t>(in.gcount());
    sha.add(block.data(), got);
    size += got;
  }
  if (in.bad())
    throw BadInput(cat("--", flag, ": cannot read ", in_quotes(file.string())));
  return size;
}

}  // namespace

InputDigest input_digest(std::string_view flag, const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  Sha256 sha;
  InputDigest d;
  std::error_code ec;
  if (!fs::is_directory(path, ec)) {
    d.size = add_file(sha, flag, path);
    d.sha256 = sha.hex();
    return d;
  }
  std::vector<fs::path> files;
  for (fs::recursive_directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_regular_file(ec)) files.push_back(fs::relative(it->path(), path, ec));
  if (ec)
    throw BadInput(cat("--", flag, ": cannot list ", in_quotes(path.string()), ": ",
                       ec.message()));
  std::sort(files.begin(), files.end());
  for (const fs::path& name : files) {
    const std::uintmax_t bytes = fs::file_size(path / name, ec);
    sha.add(name.generic_string());
    sha.add(std::string_view("\0", 1));
    sha.add(std::to_string(bytes));
    sha.add(std::string_view("\0", 1));
    d.size += add_file(sha, flag, path / name);
  }
  d.sha256 = sha.hex();
  return d;
}

nlohmann::json input_record(std::string_view flag, const std::filesystem::path& path) {
  const InputDigest d = input_digest(flag, path);
  return {{"flag", cat("--", flag)}, {"path", path.string()}, {"size", d.size}, {"sha256", d.sha256}};
}

}  // namespace ltt::label
