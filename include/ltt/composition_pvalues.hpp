#pragma once
// Many composition p-values at once: composition_pvalues(cases, out) sets out[i] to
// composition_pvalue(cases[i].k, cases[i].m, cases[i].N_sel, cases[i].alpha), the same double to
// the bit, for independent cases that share nothing (a table of selections, a Monte Carlo
// draw's grid, a numpy array).
//
// Where the speed comes from: on DSRL-sized selections (N_sel <= 4096, masses from the table of
// log n!) a call's cost is an exp and a tail sum, a chain of ratios of consecutive masses
// (<ltt/detail/hypergeometric_tail.hpp>), each a few dozen cycles with a hard-to-predict end.
// Here a chunk of cases is first reduced to its tails' starts with the scalar call's own
// functions (null boundary, support, side, log of the head mass); the head masses' exp is then
// taken a SIMD vector at a time (exp_kernel, the scalar call's exp), and the tail sums of many
// cases are stepped together, one case per lane (<ltt/detail/tail_lanes.hpp>), every lane doing
// the scalar loop's operations in its order; last each p-value is finished as the scalar call
// finishes it. Laws above the table (N_sel > 4096) take the scalar call itself, whose cost is
// the saddle point's logarithms, not the sum. docs/performance.md gives the measured rates.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <string>

#include <ltt/detail/check.hpp>
#include <ltt/detail/exp_kernel.hpp>
#include <ltt/detail/hypergeometric_tail.hpp>
#include <ltt/detail/lanes.hpp>
#include <ltt/detail/tail_lanes.hpp>
#include <ltt/pvalue.hpp>

namespace ltt {

// One composition test: k unsafe among m calibration draws in a selection of N_sel, level
// alpha (the arguments of composition_pvalue, in its order).
struct CompositionCase {
  std::int64_t k, m, N_sel;
  double alpha;
};

namespace detail {

// The cases [first, first + size) of composition_pvalues, size <= composition_chunk: the buffers
// live on the stack, so a call allocates nothing and a chunk's state stays in the L1 cache.
inline constexpr std::size_t composition_chunk = 256;

// The tails of one chunk waiting for their sums: per tail, where its p-value goes, k, which
// side it sums, its head mass (log split hi + lo as point_mass_by_table forms it, and value)
// and its ratio recurrence's start.
struct PendingTails {
  std::size_t size = 0;
  std::size_t index[composition_chunk];
  std::int64_t k[composition_chunk];
  bool lower[composition_chunk];
  alignas(64) double hi[composition_chunk + lane_count];
  double lo[composition_chunk];
  alignas(64) double head[composition_chunk + lane_count];
  double sum[composition_chunk];
  RatioStart start[composition_chunk];

  void add(const Hypergeometric& h, std::size_t at, std::int64_t kk, bool sums_lower) {
    const std::int64_t from = sums_lower ? kk : kk + 1;
    const SplitLog l = table_log_mass(h, from);
    index[size] = at, k[size] = kk, lower[size] = sums_lower;
    hi[size] = l.hi, lo[size] = l.lo;
    start[size] = ratio_start(h, from, sums_lower ? Direction::down : Direction::up);
    ++size;
  }

  // head = point_mass_by_table's value, lanes at a time: exp_kernel gives every lane the scalar
  // bits; a lane below exp_kernel_min (a subnormal mass) takes std::exp, as table_exp does.
  void head_masses() {
    for (std::size_t j = size; j % lane_count != 0; ++j) hi[j] = 0.0;
    for (std::size_t j = 0; j < size; j += lane_count) {
      Lanes x;
      std::memcpy(&x, hi + j, sizeof x);
      const Lanes e = exp_kernel(x);
      std::memcpy(head + j, &e, sizeof e);
      if (active_lanes(x < exp_kernel_min) > 0)
        for (int l = 0; l < lane_count; ++l) head[j + l] = table_exp(hi[j + l]);
    }
    for (std::size_t j = 0; j < size; ++j) head[j] = std::fma(head[j], lo[j], head[j]);
    relative_tail_sums({start, size}, {sum, size});
  }

  // outward_tail's value: head times relative sum, rebuilt from logs below DBL_MIN.
  double value(std::size_t j) const {
    if (head[j] < std::numeric_limits<double>::min()) {
      const long double log_head = static_cast<long double>(hi[j]) + static_cast<long double>(lo[j]);
      return static_cast<double>(std::exp(TailSum{log_head, sum[j], 0.0}.log()));
    }
    return head[j] * sum[j];
  }
};

inline void composition_pvalue_chunk(std::span<const CompositionCase> cases, std::size_t first,
                                     std::span<double> out) {
  constexpr std::string_view fn = "composition_pvalues";
  PendingTails direct, other;
  // Pass 1: each case to its answer, or to the tail on the side of k away from the mean.
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const CompositionCase& c = cases[i];
    if (!(c.k >= 0 && c.k <= c.m && c.m <= c.N_sel && c.N_sel <= max_count && c.alpha > 0.0 &&
          c.alpha < 1.0)) {
      const std::string where =
          std::string(fn) + " (case " + show(static_cast<std::int64_t>(first + i)) + ")";
      check_composition(where, c.k, c.m, c.N_sel, c.alpha);
    }
    const std::int64_t U = floor_decimal_product(c.alpha, c.N_sel) + 1;
    if (U > c.N_sel) {  // N_sel = 0
      out[i] = 1.0;
      continue;
    }
    const Hypergeometric h(c.N_sel, U, c.m);
    if (c.k < h.lo || c.k >= h.hi) {
      out[i] = c.k < h.lo ? 0.0 : 1.0;
      continue;
    }
    if (h.N > log_factorial_limit) {
      out[i] = round_up_pvalue(tail_probability<false>(h, c.k, Tail::lower));
      continue;
    }
    direct.add(h, i, c.k, h.below_mean(c.k));
  }
  direct.head_masses();

  // Pass 2: a direct tail of at most one half gives the p-value (itself or its complement);
  // above, the other side is summed, as tail_probability does.
  for (std::size_t j = 0; j < direct.size; ++j) {
    const double s = direct.value(j);
    if (s <= 0.5) {
      out[direct.index[j]] = round_up_pvalue(direct.lower[j] ? s : 1.0 - s);
      continue;
    }
    const CompositionCase& c = cases[direct.index[j]];
    const Hypergeometric h(c.N_sel, floor_decimal_product(c.alpha, c.N_sel) + 1, c.m);
    other.add(h, direct.index[j], direct.k[j], !direct.lower[j]);
  }
  other.head_masses();
  for (std::size_t j = 0; j < other.size; ++j) {
    const double t = other.value(j);
    out[other.index[j]] = round_up_pvalue(other.lower[j] ? t : 1.0 - t);
  }
}

}  // namespace detail

// out[i] = composition_pvalue(cases[i]...) for every i, bit for bit. out must have the size of
// cases. An impossible case throws std::invalid_argument naming the parameter and the case's
// index; out is then unspecified.
inline void composition_pvalues(std::span<const CompositionCase> cases, std::span<double> out) {
  if (out.size() != cases.size())
    detail::invalid("composition_pvalues", "out",
                    "of size " + detail::show(static_cast<std::int64_t>(out.size())),
                    "must have the size of cases (" +
                        detail::show(static_cast<std::int64_t>(cases.size())) + ")");
  for (std::size_t first = 0; first < cases.size(); first += detail::composition_chunk) {
    const std::size_t size = std::min(detail::composition_chunk, cases.size() - first);
    detail::composition_pvalue_chunk(cases.subspan(first, size), first, out.subspan(first, size));
  }
}

}  // namespace ltt
