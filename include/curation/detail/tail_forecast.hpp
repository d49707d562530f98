#pragma once
// The forecast behind the switch to the fixed tail (<curation/sequential_walk.hpp>,
// TailSwitch::forecast; docs/sequential.md, "When to switch: the criterion"). The walk's
// objective is the expected certified depth at the cap; labels are saved only where that
// depth is not at stake. After every label (something certified, not everything) it compares
// two plans under its own plug-in estimate of the purity curve:
//   - switch now: the labels left under the cap go to the fixed tail, whose exact tests give
//     the depth d + sum_{j >= d} min_{d <= i <= j} pi_i (pi_i: the power of H_i's tail test at
//     level delta w; nested selections make the rejections nearly comonotone, hence the min);
//   - go on: the anytime test certifies the next steps one by one, each after the labels it
//     needs at its estimated unsafe fraction, and the walk switches after any number k >= 1
//     of them (or never): the best such plan's depth.
// It switches when the first is at least the second plus `margin` (negative: lean to depth,
// positive: to labels). The forecast decides only where labels go, never a test's level: the
// switch time is a function of the labels so far (a stopping time), which is all the tail's
// proof needs.
//
// The plug-in curve: each labeled stratum at its unsafe rate shrunk toward the pooled rate r of
// the labeled strata ((x_k + 10 r) / (t_k + 10)); the strata not labeled yet at the rate of
// the deepest labeled ones, pooled back to at least 20 labels and shrunk alike (purity falls
// with depth, so this is the optimistic end: the walk learns a stratum's rate as it reaches
// it; pooling keeps one label in a fresh stratum from swinging the forecast). The test powers use the normal approximation of the
// hypergeometric with its finite-population factor; the anytime labels needed are the
// heuristic of the stall rule: (log(1 / (delta (1 - w))) + 2) / KL(f || alpha) in S_i, spread
// over its strata in proportion to their sizes, as the stratified order spreads them.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace ltt::curation::detail::sequential {

struct TailForecastInput {
  std::vector<std::int64_t> stratum_size;    // N_k of D_0 .. D_{J-1}
  std::vector<std::int64_t> stratum_labels;  // t_k
  std::vector<std::int64_t> stratum_unsafe;  // x_k
  std::vector<std::int64_t> null_boundary;   // U*_j of S_0 .. S_{J-1}
  std::int64_t depth = 0;                    // d >= 1 certified steps
  std::int64_t labels_left = 0;              // cap - t
  double alpha = 0.25, delta = 0.1, tail_share = 0.5;
};

namespace forecast_detail {

inline double normal_cdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

// The upper quantile z with 1 - Phi(z) = p (Acklam-free: bisection, a handful of calls).
inline double normal_upper_quantile(double p) {
  double lo = -10.0, hi = 10.0;
  for (int i = 0; i < 60; ++i) {
    const double mid = 0.5 * (lo + hi);
    (1.0 - normal_cdf(mid) > p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

struct State {
  std::vector<double> t, x;  // labels and (expected) unsafe per stratum
};

// Power of the exact test of H_j on n tail labels drawn uniformly from G's unlabeled part,
// the unlabeled rest of S_j at plug-in rates r.
inline double tail_power(const TailForecastInput& in, const State& s, const std::vector<double>& r,
                         std::size_t j, double n, double z) {
  double A = 0.0, known_unsafe = 0.0, expected = 0.0, AG = 0.0;
  for (std::size_t k = 0; k < in.stratum_size.size(); ++k) {
    const double left = std::max(0.0, static_cast<double>(in.stratum_size[k]) - s.t[k]);
    AG += left;
    if (k > j) continue;
    A += left;
    known_unsafe += s.x[k];
    expected += r[k] * left;
  }
  if (A < 1.0 || AG < 1.0) return 0.0;
  const double B0 = static_cast<double>(in.null_boundary[j]) - known_unsafe;
  if (B0 <= 0.0) return 0.0;
  if (B0 > A) return 1.0;
  const double m = std::min(A, n * A / AG);
  if (m < 1.0) return 0.0;
  const double f = A > 1.0 ? std::max(0.0, (A - m) / (A - 1.0)) : 0.0;
  const double p0 = B0 / A, p1 = std::clamp(expected / A, 1e-6, 1.0 - 1e-6);
  const double c = m * p0 - z * std::sqrt(m * p0 * (1.0 - p0) * f);
  const double sd = std::sqrt(m * p1 * (1.0 - p1) * f);
  if (sd <= 0.0) return c + 0.5 >= m * p1 ? 1.0 : 0.0;
  return normal_cdf((c + 0.5 - m * p1) / sd);
}

// The depth a tail of n labels started at depth d reaches: d + sum_j min_{i <= j} pi_i.
inline double tail_depth(const TailForecastInput& in, const State& s, const std::vector<double>& r,
                         std::size_t d, double n, double z) {
  double depth = static_cast<double>(d), run = 1.0;
  if (n < 1.0) return depth;
  for (std::size_t j = d; j < in.null_boundary.size(); ++j) {
    run = std::min(run, tail_power(in, s, r, j, n, z));
    depth += run;
  }
  return depth;
}

}  // namespace forecast_detail

// The plug-in unsafe rate of every stratum.
inline constexpr double prior_labels = 10.0, recent_labels = 20.0;

inline std::vector<double> plug_in_rates(const TailForecastInput& in) {
  const std::size_t K = in.stratum_size.size();
  double t = 0.0, x = 0.0;
  std::size_t deepest = 0;
  for (std::size_t k = 0; k < K; ++k) {
    t += static_cast<double>(in.stratum_labels[k]);
    x += static_cast<double>(in.stratum_unsafe[k]);
    if (in.stratum_labels[k] > 0) deepest = k;
  }
  const double pooled = (x + 0.5) / (t + 1.0);
  const auto shrunk = [&](double unsafe, double labels) {
    return (unsafe + prior_labels * pooled) / (labels + prior_labels);
  };
  std::vector<double> r(K);
  for (std::size_t k = 0; k <= deepest; ++k)
    r[k] = shrunk(static_cast<double>(in.stratum_unsafe[k]),
                  static_cast<double>(in.stratum_labels[k]));
  // the deepest labeled strata, pooled back to at least recent_labels labels
  double rt = 0.0, rx = 0.0;
  for (std::size_t k = deepest + 1; k-- > 0 && rt < recent_labels;) {
    rt += static_cast<double>(in.stratum_labels[k]);
    rx += static_cast<double>(in.stratum_unsafe[k]);
  }
  for (std::size_t k = deepest + 1; k < K; ++k) r[k] = shrunk(rx, rt);
  return r;
}

// Forecast depth of switching now, and of the best plan that goes on with the anytime test.
struct TailForecast {
  double switch_now = 0.0, go_on = 0.0;
};

inline TailForecast tail_forecast(const TailForecastInput& in) {
  using namespace forecast_detail;
  const std::size_t J = in.null_boundary.size();
  const std::vector<double> r = plug_in_rates(in);
  State s;
  for (std::size_t k = 0; k < J; ++k) {
    s.t.push_back(static_cast<double>(in.stratum_labels[k]));
    s.x.push_back(static_cast<double>(in.stratum_unsafe[k]));
  }
  const double z = normal_upper_quantile(in.delta * in.tail_share);
  const auto d = static_cast<std::size_t>(in.depth);
  TailForecast out;
  out.switch_now = tail_depth(in, s, r, d, static_cast<double>(in.labels_left), z);
  out.go_on = -1.0;
  const double a = in.alpha;
  const double evidence = std::log(1.0 / (in.delta * (1.0 - in.tail_share))) + 2.0;
  double left = static_cast<double>(in.labels_left);
  double size = 0.0, unsafe = 0.0;
  for (std::size_t k = 0; k < d; ++k) {
    size += static_cast<double>(in.stratum_size[k]);
    unsafe += r[k] * static_cast<double>(in.stratum_size[k]);
  }
  for (std::size_t i = d; i < J; ++i) {
    size += static_cast<double>(in.stratum_size[i]);
    unsafe += r[i] * static_cast<double>(in.stratum_size[i]);
    const double f = unsafe / size;
    if (f >= a) break;
    const double kl =
        (f > 0.0 ? f * std::log(f / a) : 0.0) + (1.0 - f) * std::log((1.0 - f) / (1.0 - a));
    const double needed = evidence / kl;  // labels in S_i
    double add = 0.0;
    for (std::size_t k = 0; k <= i; ++k) {
      const double want = std::min(static_cast<double>(in.stratum_size[k]),
                                   needed * static_cast<double>(in.stratum_size[k]) / size);
      const double more = std::max(0.0, want - s.t[k]);
      add += more;
      s.t[k] += more;
      s.x[k] += more * r[k];
    }
    left -= std::max(1.0, add);
    if (left < 0.0) break;
    // step i certified by the anytime test; switch now (or never, with no labels left)
    out.go_on = std::max(out.go_on, tail_depth(in, s, r, i + 1, left, z));
  }
  if (out.go_on < 0.0) out.go_on = static_cast<double>(d);
  return out;
}

}  // namespace ltt::curation::detail::sequential
