#pragma once
// 128-bit integers for exact products of two counts below 2^53 (GCC and Clang extension;
// __extension__ keeps -Wpedantic quiet about it).

namespace ltt::detail {
__extension__ using int128 = __int128;
__extension__ using uint128 = unsigned __int128;
}  // namespace ltt::detail
