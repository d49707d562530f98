#pragma once
// FNV-1a, 64-bit (Fowler, Noll and Vo; offset basis 0xcbf29ce484222325, prime 0x100000001b3):
// a hash of a byte sequence that every platform computes alike, for integrity trailers (the
// model file, learning/model_file.hpp) and for the checksums that make a change of generated
// data visible (tests/tasks/pool_checksum.test.cpp). Not a cryptographic hash.
//
// Hashing several pieces in turn, each call continuing from the previous value, gives the hash
// of their concatenation.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace ltt::data {

inline constexpr std::uint64_t fnv1a_offset_basis = 0xcbf29ce484222325ULL;

inline std::uint64_t fnv1a(std::span<const std::byte> bytes, std::uint64_t h = fnv1a_offset_basis) {
  for (const std::byte c : bytes) {
    h ^= static_cast<std::uint64_t>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

inline std::uint64_t fnv1a(std::string_view bytes, std::uint64_t h = fnv1a_offset_basis) {
  return fnv1a(std::as_bytes(std::span(bytes.data(), bytes.size())), h);
}

}  // namespace ltt::data
