#pragma once
// Little-endian fields of the project's binary files (the model file, model_file.hpp; the
// behavior checkpoint, behavior/checkpoint.hpp), whatever the host: writers append to a
// std::string, and a reader takes the fields in order and throws Error("SOURCE: truncated:
// WHAT needs N bytes at offset O, the file has L left (T bytes in all)") when they run out.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace ltt::learning {

inline void put_u32(std::string& out, std::uint32_t x) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((x >> (8 * i)) & 0xffu));
}

inline void put_u64(std::string& out, std::uint64_t x) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((x >> (8 * i)) & 0xffu));
}

// Error: an exception type constructible from a std::string.
template <class Error>
class FieldReader {
 public:
  FieldReader(std::string_view bytes, std::string_view source) : bytes_(bytes), source_(source) {}

  std::size_t position() const { return position_; }
  std::size_t left() const { return bytes_.size() - position_; }

  void need(std::size_t n, std::string_view what) const {
    if (left() < n)
      throw Error(std::string(source_) + ": truncated: " + std::string(what) + " needs " +
                  std::to_string(n) + " bytes at offset " + std::to_string(position_) +
                  ", the file has " + std::to_string(left()) + " left (" +
                  std::to_string(bytes_.size()) + " bytes in all)");
  }

  std::uint64_t unsigned_le(std::size_t n, std::string_view what) {
    need(n, what);
    std::uint64_t x = 0;
    for (std::size_t i = 0; i < n; ++i)
      x |= static_cast<std::uint64_t>(static_cast<unsigned char>(bytes_[position_ + i])) << (8 * i);
    position_ += n;
    return x;
  }

  std::uint32_t u32(std::string_view what) {
    return static_cast<std::uint32_t>(unsigned_le(4, what));
  }
  std::uint64_t u64(std::string_view what) { return unsigned_le(8, what); }

  std::string_view take(std::size_t n, std::string_view what) {
    need(n, what);
    const auto s = bytes_.substr(position_, n);
    position_ += n;
    return s;
  }

 private:
  std::string_view bytes_;
  std::string_view source_;
  std::size_t position_ = 0;
};

}  // namespace ltt::learning
