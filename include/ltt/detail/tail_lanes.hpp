#pragma once
// Many independent tail sums at once, one per SIMD lane: the loop of outward_tail
// (<ltt/detail/hypergeometric_tail.hpp>) stepped for W recurrences together, W = 8 doubles where
// the build targets AVX-512, 4 with AVX (the default x86-64-v3 build), 2 otherwise.
//
// Each lane performs exactly the scalar loop's operations in the scalar loop's order (one
// rounding per +, -, *, /, all IEEE-exact in a vector as in a register of one), and a lane that
// has stopped keeps its sum: so every lane's sum is the scalar sum to the bit, and
// composition_pvalues equals composition_pvalue element by element
// (tests/ltt/composition_pvalues.test.cpp checks this on every reference row and on random
// workloads).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>

#include <ltt/detail/hypergeometric_tail.hpp>
#include <ltt/detail/lanes.hpp>

namespace ltt::detail {

// sums[i] = the sum, relative to the head mass, of the tail whose ratio recurrence starts at
// starts[i]: 1 + r1 + r1 r2 + ..., stopped by outward_tail's rule (tail_tolerance) or at the end
// of the support. The recurrences run W at a time until all W have stopped, taken in the order
// of their steps to the support end (a counting sort, capped at 48), so the lanes of a group
// stop close together: one unpredictable branch per group, not per recurrence (refilling a
// lane as soon as it stopped was 45% slower on bench_pvalue's dsrl workload). A lane past its
// support end steps on with ratio 0 exactly (one of the cells x, y is then 0), which leaves its
// sum as it is, bit for bit.
inline void relative_tail_sums(std::span<const RatioStart> starts, std::span<double> sums) {
  constexpr std::size_t slice = 1024;
  if (starts.size() > slice) {
    for (std::size_t i = 0; i < starts.size(); i += slice) {
      const std::size_t n = std::min(slice, starts.size() - i);
      relative_tail_sums(starts.subspan(i, n), sums.subspan(i, n));
    }
    return;
  }
  constexpr int W = lane_count;
  constexpr std::int64_t cap = 48;
  const std::size_t count = starts.size();
  std::uint16_t order[slice];
  std::uint16_t bucket_end[cap + 1] = {};
  for (const RatioStart& s : starts) ++bucket_end[std::min(s.remaining, cap)];
  for (std::int64_t b = 1; b <= cap; ++b) bucket_end[b] += bucket_end[b - 1];
  for (std::size_t i = count; i-- > 0;)
    order[--bucket_end[std::min(starts[i].remaining, cap)]] = static_cast<std::uint16_t>(i);
  const Lanes zero{}, one = zero + 1.0, tolerance = zero + tail_tolerance;
  std::size_t g = 0;
  // Recurrences with no step (start at the support end) sum to 1, the head alone.
  while (g < count && starts[order[g]].remaining == 0) sums[order[g++]] = 1.0;
  for (; g < count; g += W) {
    Lanes x, y, u, v;
    for (int l = 0; l < W; ++l) {
      const RatioStart& s = starts[order[std::min(g + l, count - 1)]];
      x[l] = s.x, y[l] = s.y, u[l] = s.u, v[l] = s.v;
    }
    Lanes term = one, sum = one;
    LaneMask active = zero == zero;
    do {
      const Lanes r = (x * y) / (u * v);
      x -= one, y -= one, u += one, v += one;
      const Lanes stepped_term = term * r;
      const Lanes stepped_sum = sum + stepped_term;
      term = active ? stepped_term : term;
      sum = active ? stepped_sum : sum;
      active &= stepped_term * r > tolerance * stepped_sum * (one - r);
    } while (active_lanes(active) > 0);
    for (int l = 0; l < W && g + l < count; ++l) sums[order[g + l]] = sum[l];
  }
}

}  // namespace ltt::detail
