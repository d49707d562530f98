#pragma once
// Random pools from a parametric family of purity curves, for judging the sequential walk's
// default on pools no rule was tuned on (docs/sequential.md, "The default on random pools").
//
// A pool of N trajectories ranked by score (score N - i for rank i). The unsafe density at
// relative rank x = (i + 0.5) / N is u(x) = u_top + (u_bottom - u_top) g(x), g nondecreasing
// from 0 to 1, of one of five shapes:
//   linear   g = x
//   convex   g = x^p, p in [1.5, 4]       (clean for long, dirty at the bottom)
//   concave  g = x^p, p in [0.25, 0.67]   (dirt rises quickly, then levels off)
//   knee     g = max(0, (x - x0) / (1 - x0)), x0 in [0.1, 0.6]   (clean to the knee)
//   plateau  g = 1{x >= x0}, x0 in [0.15, 0.7]                    (two flat levels)
// The draw: N log-uniform on [500, 20000], the S_1 margin (alpha minus the unsafe fraction of
// the top N_1 = N - quantile_rank(0.85, N)) uniform on [0.02, 0.30], u_bottom uniform on
// [alpha - margin, 0.7]; u_top then solves "S_1 holds the margin" by bisection (when even
// u_top = 0 leaves S_1 too dirty, the draw is repeated). The unsafe labels follow the
// cumulative density, rounded (Bresenham), so the curve is realised exactly up to one label.
// Pools are a pure function of (seed): the evaluation's seeds are reserved, never used to
// design a rule (pool_family_design_seed / pool_family_evaluation_seed).

#include "graded_pool.hpp"

#include <curation/threshold_grid.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>

namespace ltt_test {

enum class PurityShape { linear, convex, concave, knee, plateau };

constexpr std::string_view purity_shape_name(PurityShape s) {
  switch (s) {
    case PurityShape::linear:
      return "linear";
    case PurityShape::convex:
      return "convex";
    case PurityShape::concave:
      return "concave";
    case PurityShape::knee:
      return "knee";
    case PurityShape::plateau:
      return "plateau";
  }
  return "unknown";
}

struct PurityCurve {
  PurityShape shape = PurityShape::linear;
  double parameter = 0.0;  // p (convex, concave) or x0 (knee, plateau); unused for linear
  double u_top = 0.0, u_bottom = 0.0;

  double g(double x) const {
    switch (shape) {
      case PurityShape::linear:
        return x;
      case PurityShape::convex:
      case PurityShape::concave:
        return std::pow(x, parameter);
      case PurityShape::knee:
        return std::max(0.0, (x - parameter) / (1.0 - parameter));
      case PurityShape::plateau:
        return x >= parameter ? 1.0 : 0.0;
    }
    return x;
  }
  double unsafe_density(double x) const { return u_top + (u_bottom - u_top) * g(x); }
};

struct FamilyPool {
  std::uint64_t seed = 0;
  std::int64_t N = 0;
  double margin = 0.0;  // the drawn S_1 margin (the realised one differs by at most 1 / N_1)
  PurityCurve curve;
  GradedPool pool;
};

// The unsafe fraction of the top `count` ranks under `curve` (midpoint rule over ranks).
inline double top_unsafe_fraction(const PurityCurve& curve, std::int64_t N, std::int64_t count) {
  double sum = 0.0;
  for (std::int64_t i = 0; i < count; ++i)
    sum += curve.unsafe_density((static_cast<double>(i) + 0.5) / static_cast<double>(N));
  return sum / static_cast<double>(count);
}

// Rank i is unsafe where the rounded cumulative density steps up.
inline GradedPool realise_curve(const PurityCurve& curve, std::int64_t N) {
  GradedPool p = ranked_pool(N);
  double cumulative = 0.0;
  std::int64_t placed = 0;
  for (std::int64_t i = 0; i < N; ++i) {
    cumulative += std::clamp(
        curve.unsafe_density((static_cast<double>(i) + 0.5) / static_cast<double>(N)), 0.0, 1.0);
    const auto want = static_cast<std::int64_t>(std::llround(cumulative));
    p.unsafe[static_cast<std::size_t>(i)] = want > placed;
    placed += want > placed;
  }
  return p;
}

inline FamilyPool draw_family_pool(std::uint64_t seed, double alpha = 0.25) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  FamilyPool f;
  f.seed = seed;
  for (;;) {
    f.N = std::llround(std::exp(std::log(500.0) + unit(rng) * std::log(20000.0 / 500.0)));
    f.margin = 0.02 + 0.28 * unit(rng);
    PurityCurve c;
    c.shape = static_cast<PurityShape>(std::uniform_int_distribution<int>(0, 4)(rng));
    const double v = unit(rng);
    switch (c.shape) {
      case PurityShape::linear:
        break;
      case PurityShape::convex:
        c.parameter = 1.5 + 2.5 * v;
        break;
      case PurityShape::concave:
        c.parameter = 0.25 + 0.42 * v;
        break;
      case PurityShape::knee:
        c.parameter = 0.1 + 0.5 * v;
        break;
      case PurityShape::plateau:
        c.parameter = 0.15 + 0.55 * v;
        break;
    }
    const double s1 = alpha - f.margin;
    c.u_bottom = s1 + (0.7 - s1) * unit(rng);
    const std::int64_t N1 = f.N - ltt::curation::quantile_rank(0.85, f.N);
    c.u_top = 0.0;
    if (top_unsafe_fraction(c, f.N, N1) > s1) continue;  // S_1 too dirty even at u_top = 0
    double lo = 0.0, hi = s1;
    for (int it = 0; it < 50; ++it) {
      c.u_top = 0.5 * (lo + hi);
      (top_unsafe_fraction(c, f.N, N1) > s1 ? hi : lo) = c.u_top;
    }
    c.u_top = lo;
    f.curve = c;
    f.pool = realise_curve(c, f.N);
    return f;
  }
}

// Pool i of the design set and of the evaluation set: disjoint seed ranges. A rule is designed
// on the first only; the second is reserved for judging it.
constexpr std::uint64_t pool_family_design_seed(std::uint64_t i) { return 100000 + i; }
constexpr std::uint64_t pool_family_evaluation_seed(std::uint64_t i) { return 900000 + i; }

}  // namespace ltt_test
