#pragma once
// The certificate as a triple (paper, appendix "Properties of the certificate", paragraph "The
// certificate as a triple"). The strict walk certifies iff it rejects at lambda_1, so its rate
// is a function rate(U_1) of the unsafe count of the first selection S_1 alone (Proposition
// "certification rate"). The counts (m1, k1) that fell in S_1 give U_1 a Jeffreys posterior;
// the triple is
//   r_hat = E[rate(U_1) | m1, k1],
//   r_lo  = the lower decile of rate(U_1) under that posterior,
//   min(1, delta / r_lo), a bound on Pr[out of spec | certified], from
//                         Pr[certified and out of spec] <= delta (Proposition "guarantee").
// Everything is deterministic: a sum over U_1 instead of the paper's 200 posterior draws.
// The math, the discretization rule and the accuracy statement are in
// docs/certificate_triple.md.

#include <ltt/certification_rate.hpp>
#include <ltt/detail/check.hpp>

#include <boost/math/special_functions/beta.hpp>

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <queue>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ltt {

// Posterior of the unsafe count U_1 of S_1 after k1 unsafe among the m1 calibration draws
// that landed in S_1: u_1 = U_1 / N_1 ~ Beta(k1 + 1/2, m1 - k1 + 1/2) (Jeffreys prior
// Beta(1/2, 1/2)), and U_1 = u is the event that u_1 rounds to u / N_1:
//     u_1 in [(u - 1/2) / N_1, (u + 1/2) / N_1)  intersected with [0, 1],
// so the end cells u = 0 and u = N_1 are half cells and the N_1 + 1 masses sum to one.
// Masses are differences of the Beta CDF at cell boundaries, each boundary's CDF taken from
// the smaller tail (I_x(a, b) below the posterior mean, I_{1-x}(b, a) above it), so no mass is
// the difference of two numbers close to one.
class UnsafeCountPosterior {
 public:
  UnsafeCountPosterior(std::int64_t N1, std::int64_t m1, std::int64_t k1)
      : N1_(N1), a_(static_cast<double>(k1) + 0.5), b_(static_cast<double>(m1 - k1) + 0.5) {
    constexpr std::string_view fn = "UnsafeCountPosterior";
    detail::require_count(fn, "N1", N1);
    if (N1 < 1) detail::invalid(fn, "N1", detail::show(N1), "must be at least 1");
    detail::require_count(fn, "m1", m1);
    detail::require_at_most(fn, "m1", m1, "N1", N1);
    detail::require_count(fn, "k1", k1);
    detail::require_at_most(fn, "k1", k1, "m1", m1);
    mean_ = a_ / (a_ + b_);
  }

  std::int64_t N1() const { return N1_; }
  double a() const { return a_; }  // k1 + 1/2
  double b() const { return b_; }  // m1 - k1 + 1/2

  // P[U1 <= u] and P[U1 > u], the smaller one computed and the other its complement (absolute
  // error about 1e-16, docs/certificate_triple.md); u outside [0, N1] gives 0 or 1.
  double cdf(std::int64_t u) const { return boundary(u).lower; }
  double sf(std::int64_t u) const { return boundary(u).upper; }
  // P[U1 = u] and P[lo <= U1 <= hi] (0 when lo > hi).
  double pmf(std::int64_t u) const { return mass(u, u); }
  double mass(std::int64_t lo, std::int64_t hi) const {
    if (lo > hi) return 0.0;
    return between(boundary(lo - 1), boundary(hi));
  }
  // The smallest u with P[U1 > u] <= level, level in (0, 1): the upper (1 - level)-quantile
  // asked for through the upper tail.
  std::int64_t upper_quantile(double level) const {
    detail::require_open_unit("UnsafeCountPosterior::upper_quantile", "level", level);
    const double x = boost::math::ibetac_inv(a_, b_, level);
    std::int64_t u = clamp_count(std::ceil(x * static_cast<double>(N1_) - 0.5));
    while (u > 0 && sf(u - 1) <= level) --u;
    while (u < N1_ && sf(u) > level) ++u;
    return u;
  }
  // The largest u with P[U1 < u] <= level, level in (0, 1).
  std::int64_t lower_quantile(double level) const {
    detail::require_open_unit("UnsafeCountPosterior::lower_quantile", "level", level);
    const double x = boost::math::ibeta_inv(a_, b_, level);
    std::int64_t u = clamp_count(std::floor(x * static_cast<double>(N1_) + 0.5));
    while (u > 0 && cdf(u - 1) > level) --u;
    while (u < N1_ && cdf(u) <= level) ++u;
    return u;
  }

  // The Beta CDF at the boundary between cells j and j + 1, x = (j + 1/2) / N1, with the
  // smaller tail computed and the other one as its complement.
  struct Boundary {
    double lower;       // P[U1 <= j]
    double upper;       // P[U1 > j]
    bool lower_direct;  // lower was computed (x below the posterior mean), upper = 1 - lower
  };
  Boundary boundary(std::int64_t j) const {
    if (j < 0) return {0.0, 1.0, true};
    if (j >= N1_) return {1.0, 0.0, false};
    // x and 1 - x are each formed from integers and rounded once, and Boost is handed the
    // one below 1/2 (I_x(a, b) = 1 - I_{1-x}(b, a)): the rounding of an argument near 1 is a
    // large relative error in its distance to 1, which the Beta density can amplify
    // (measured: 3e-12 relative in P[U1 > N1 - 1] at N1 = 1e5, 3e-15 absolute in a mass).
    const double x = (static_cast<double>(j) + 0.5) / static_cast<double>(N1_);
    const double y = (static_cast<double>(N1_ - j) - 0.5) / static_cast<double>(N1_);
    const bool small_x = x <= 0.5;
    if (x < mean_) {
      const double lower = small_x ? boost::math::ibeta(a_, b_, x) : boost::math::ibetac(b_, a_, y);
      return {lower, 1.0 - lower, true};
    }
    const double upper = small_x ? boost::math::ibetac(a_, b_, x) : boost::math::ibeta(b_, a_, y);
    return {1.0 - upper, upper, false};
  }
  // Posterior mass between two boundaries, left before right: a difference of two lower
  // tails, of two upper tails, or one minus one of each, whichever avoids cancellation.
  static double between(const Boundary& left, const Boundary& right) {
    double mass;
    if (right.lower_direct)
      mass = right.lower - left.lower;
    else if (!left.lower_direct)
      mass = left.upper - right.upper;
    else
      mass = (1.0 - left.lower) - right.upper;
    return std::max(0.0, mass);
  }

 private:
  std::int64_t clamp_count(double u) const {
    if (!(u > 0.0)) return 0;  // also NaN
    return u >= static_cast<double>(N1_) ? N1_ : static_cast<std::int64_t>(u);
  }

  std::int64_t N1_;
  double a_, b_, mean_;
};

struct CertificateTripleOptions {
  // Bracket mode: stop refining once the bracket on r_hat is narrower than this. 0 refines
  // until every run left has equal rates at both ends (exact up to the tails).
  double tolerance = 1e-9;
  // Posterior mass of U1 left outside the evaluated window, split evenly between the two
  // tails. Those tails are bracketed, not dropped: they add at most tail_mass / 2 to the
  // error bound.
  double tail_mass = 1e-12;
  // r_lo is the largest r with P[rate(U1) >= r] >= 1 - lower_level (the paper's decile: 0.1).
  double lower_level = 0.1;
  // How r_hat is summed: the rate at every u of the window (exhaustive), or a bracket refined
  // to the tolerance. automatic is exhaustive for windows of at most exhaustive_window values
  // of u, where one Beta CDF per u costs less than the bracket's two per evaluated u.
  enum class Sum { automatic, exhaustive, bracket };
  Sum sum = Sum::automatic;
  std::int64_t exhaustive_window = 1024;
};

struct CertificateTriple {
  // inputs
  std::int64_t N = 0, N1 = 0, m1 = 0, k1 = 0, n = 0;
  double alpha = 0.0, delta = 0.0;
  // Jeffreys posterior u1 = U1 / N1 ~ Beta(posterior_a, posterior_b)
  double posterior_a = 0.0, posterior_b = 0.0;
  // the triple (with the certified threshold, which the walk supplies)
  double r_hat = 0.0;              // posterior mean of rate(U1)
  double r_lo = 0.0;               // lower decile of rate(U1), = rate(U1_upper_decile)
  double conditional_bound = 1.0;  // min(1, delta / r_lo); 1 when r_lo = 0
  // r_lo = rate(U1_upper_decile), U1_upper_decile the smallest u with P[U1 > u] <= lower_level
  std::int64_t U1_upper_decile = 0;
  // accuracy of r_hat: the exact posterior mean lies in [r_hat_lower, r_hat_upper] (given the
  // rate values; see docs/certificate_triple.md), r_hat is the midpoint, and
  // error_bound = (r_hat_upper - r_hat_lower) / 2 covers tail truncation and bracketing.
  double r_hat_lower = 0.0, r_hat_upper = 0.0, error_bound = 0.0;
  // the rate was evaluated inside [window_lo, window_hi]; tail_mass = P[U1 outside it]
  std::int64_t window_lo = 0, window_hi = 0;
  double tail_mass = 0.0;
  std::int64_t rate_evaluations = 0;
  bool exhaustive = false;  // every u of the window was evaluated
  bool operator==(const CertificateTriple&) const = default;
};

namespace detail::certificate_triple {

struct Point {
  std::int64_t u;
  double rate;
  double mass;                           // P[U1 = u]
  UnsafeCountPosterior::Boundary left;   // boundary u - 1 | u
  UnsafeCountPosterior::Boundary right;  // boundary u | u + 1
};

// The unevaluated u strictly between two evaluated points. rate is non-increasing in U1, so
// on it rate lies between the endpoint rates (taken as min / max, which stays a valid
// bracket if rounding makes neighbouring rates tie the wrong way).
struct Cell {
  Point lo, hi;
  double interior;  // P[lo.u < U1 < hi.u]
  double width;     // interior * |rate(lo) - rate(hi)|, the cell's share of the bracket
};

inline Cell make_cell(const Point& lo, const Point& hi) {
  const double interior = UnsafeCountPosterior::between(lo.right, hi.left);
  return {lo, hi, interior, interior * std::abs(lo.rate - hi.rate)};
}

struct WiderFirst {
  bool operator()(const Cell& x, const Cell& y) const { return x.width < y.width; }
};

// The posterior mass outside the window [window_lo, window_hi] and the rates at its ends: the
// tails' contribution to the bracket, rate in [rate(window_lo), 1] below, [0, rate(window_hi)]
// above.
struct Tails {
  double below = 0.0, above = 0.0;
  double rate_at_lo = 0.0, rate_at_hi = 0.0;
};

using OpenRuns = std::priority_queue<Cell, std::vector<Cell>, WiderFirst>;

// The first points: the window ends, the decile point, and an even grid (every u when
// exhaustive, which leaves nothing to refine); sorted and distinct. Sets t.exhaustive.
inline std::vector<std::int64_t> initial_points(CertificateTriple& t,
                                                const CertificateTripleOptions& options) {
  std::vector<std::int64_t> us{t.window_lo, t.window_hi, t.U1_upper_decile};
  using Sum = CertificateTripleOptions::Sum;
  const std::int64_t span = t.window_hi - t.window_lo;
  t.exhaustive = options.sum == Sum::exhaustive ||
                 (options.sum == Sum::automatic && span < options.exhaustive_window);
  const std::int64_t grid = t.exhaustive ? span : std::min<std::int64_t>(span, 32);
  for (std::int64_t i = 1; i < grid; ++i) us.push_back(t.window_lo + span * i / grid);
  std::sort(us.begin(), us.end());
  us.erase(std::unique(us.begin(), us.end()), us.end());
  return us;
}

// Refinement: bisect the run that contributes most to the bracket until the bracket is
// narrower than the tolerance. A run whose endpoint rates are equal is exact already; the
// widest open run being such means every open run is, and only the tails remain. Returns the
// runs still open; the evaluated midpoints are appended to points.
template <class Evaluate>
OpenRuns refine(std::vector<Point>& points, const Tails& tails, double tolerance_option,
                Evaluate&& evaluate_at) {
  long double width = static_cast<long double>(tails.below) * (1.0 - tails.rate_at_lo) +
                      static_cast<long double>(tails.above) * tails.rate_at_hi;
  OpenRuns open;
  for (std::size_t i = 0; i + 1 < points.size(); ++i) {
    if (points[i + 1].u - points[i].u < 2) continue;
    const Cell c = make_cell(points[i], points[i + 1]);
    width += c.width;
    open.push(c);
  }
  const auto tolerance = static_cast<long double>(tolerance_option);
  while (!open.empty() && width > 0.0L && width >= tolerance && open.top().width > 0.0) {
    const Cell c = open.top();
    open.pop();
    const std::int64_t s = c.lo.u + (c.hi.u - c.lo.u) / 2;
    const Point mid = evaluate_at(s);
    points.push_back(mid);
    width -= c.width;
    for (const Cell& half : {make_cell(c.lo, mid), make_cell(mid, c.hi)}) {
      if (half.hi.u - half.lo.u < 2) continue;
      width += half.width;
      open.push(half);
    }
  }
  return open;
}

// The sum proper, in long double: evaluated points exactly, open runs and tails as brackets.
inline std::pair<long double, long double> bracket(const std::vector<Point>& points, OpenRuns& open,
                                                   const Tails& tails) {
  long double lower = 0.0L, upper = 0.0L;
  for (const auto& p : points) {
    lower += static_cast<long double>(p.mass) * p.rate;
    upper += static_cast<long double>(p.mass) * p.rate;
  }
  for (; !open.empty(); open.pop()) {
    const Cell& c = open.top();
    lower += static_cast<long double>(c.interior) * std::min(c.lo.rate, c.hi.rate);
    upper += static_cast<long double>(c.interior) * std::max(c.lo.rate, c.hi.rate);
  }
  lower += static_cast<long double>(tails.below) * tails.rate_at_lo;
  upper += static_cast<long double>(tails.below) +
           static_cast<long double>(tails.above) * tails.rate_at_hi;
  return {lower, upper};
}

inline void check_arguments(std::string_view fn, std::int64_t N, std::int64_t N1, std::int64_t m1,
                            std::int64_t k1, std::int64_t n, double alpha, double delta,
                            const CertificateTripleOptions& o) {
  require_count(fn, "N", N);
  require_count(fn, "N1", N1);
  require_at_most(fn, "N1", N1, "N", N);
  if (N1 < 1) invalid(fn, "N1", show(N1), "must be at least 1 (S_1 cannot be empty)");
  require_count(fn, "n", n);
  require_at_most(fn, "n", n, "N", N);
  require_count(fn, "m1", m1);
  require_at_most(fn, "m1", m1, "N1", N1);
  require_at_most(fn, "m1", m1, "n", n);
  if (n - m1 > N - N1)
    invalid(fn, "m1", show(m1),
            "must be at least n - (N - N1) = " + show(n - (N - N1)) +
                " (the draws outside S_1 cannot outnumber the trajectories there)");
  require_count(fn, "k1", k1);
  require_at_most(fn, "k1", k1, "m1", m1);
  require_open_unit(fn, "alpha", alpha);
  require_open_unit(fn, "delta", delta);
  if (!(o.tolerance >= 0.0 && std::isfinite(o.tolerance)))
    invalid(fn, "options.tolerance", show(o.tolerance), "must be finite and >= 0");
  if (!(o.tail_mass > 0.0 && o.tail_mass <= 1e-3))
    invalid(fn, "options.tail_mass", show(o.tail_mass), "must lie in (0, 1e-3]");
  require_open_unit(fn, "options.lower_level", o.lower_level);
}

}  // namespace detail::certificate_triple

// The triple for the first selection S_1 (N1 of the pool's N trajectories) after n
// calibration draws of which m1 landed in S_1, k1 of those unsafe, with rate(U1) =
// certification_rate(N, N1, U1, n, alpha, delta). The rate is non-increasing in U1 (more
// unsafe trajectories in S_1 shift k | m upward stochastically; k_max(m) does not move),
// which gives
//  - r_lo exactly, from one rate evaluation: the largest r with P[rate(U1) >= r] >= 0.9 is
//    rate(q), q the smallest u with P[U1 > u] <= 0.1;
//  - r_hat inside a bracket: evaluated points contribute P[U1 = u] rate(u) exactly, each run
//    of unevaluated u between two evaluated ones lies between their rates, and the run that
//    contributes most to the bracket is bisected until the bracket is narrower than
//    options.tolerance (or no run is left). The posterior tails beyond the window (mass
//    options.tail_mass) are bracketed too, with rate in [rate(window_lo), 1] below and
//    [0, rate(window_hi)] above. r_hat is the bracket's midpoint.
//
// rate_of_U1 is any callable with rate_of_U1(u) == certification_rate(N, N1, u, n, alpha,
// delta) for u in [0, N1]: a CertificationRateModel, or a lookup in a table filled once per
// pool when many triples are wanted for one pool (a validation harness). Values are clipped
// to [0, 1]; one more than 1e-12 outside it, or NaN, throws std::invalid_argument naming u.
template <class RateOfU1>
requires std::invocable<RateOfU1&, std::int64_t> CertificateTriple certificate_triple(
    std::int64_t N, std::int64_t N1, std::int64_t m1, std::int64_t k1, std::int64_t n, double alpha,
    double delta, RateOfU1&& rate_of_U1, const CertificateTripleOptions& options = {}) {
  namespace ct = detail::certificate_triple;
  constexpr std::string_view fn = "certificate_triple";
  ct::check_arguments(fn, N, N1, m1, k1, n, alpha, delta, options);
  const UnsafeCountPosterior posterior(N1, m1, k1);

  CertificateTriple t;
  t.N = N, t.N1 = N1, t.m1 = m1, t.k1 = k1, t.n = n, t.alpha = alpha, t.delta = delta;
  t.posterior_a = posterior.a();
  t.posterior_b = posterior.b();

  const double half_tail = options.tail_mass / 2.0;
  t.window_lo = posterior.lower_quantile(half_tail);
  t.window_hi = posterior.upper_quantile(half_tail);
  t.U1_upper_decile = posterior.upper_quantile(options.lower_level);
  const double below = posterior.cdf(t.window_lo - 1);
  const double above = posterior.sf(t.window_hi);
  t.tail_mass = below + above;

  auto evaluate = [&](std::int64_t u, const UnsafeCountPosterior::Boundary& left) {
    ++t.rate_evaluations;
    // A rate may miss [0, 1] by its own rounding (<= 1e-12); anything else is a broken input.
    const double raw = rate_of_U1(u);
    if (!(raw >= -1e-12 && raw <= 1.0 + 1e-12))
      detail::invalid(fn, "rate_of_U1(" + detail::show(u) + ")", detail::show(raw),
                      "must lie in [0, 1]");
    const double r = std::clamp(raw, 0.0, 1.0);
    const auto right = posterior.boundary(u);
    return ct::Point{u, r, UnsafeCountPosterior::between(left, right), left, right};
  };

  const std::vector<std::int64_t> us = ct::initial_points(t, options);
  std::vector<ct::Point> points;
  points.reserve(us.size());
  for (std::int64_t u : us) {
    // Adjacent points share a boundary: reuse it rather than call ibeta twice.
    const bool adjacent = !points.empty() && points.back().u == u - 1;
    points.push_back(evaluate(u, adjacent ? points.back().right : posterior.boundary(u - 1)));
    if (u == t.U1_upper_decile) t.r_lo = points.back().rate;
  }
  const ct::Tails tails{below, above, points.front().rate, points.back().rate};
  ct::OpenRuns open = ct::refine(points, tails, options.tolerance, [&](std::int64_t s) {
    return evaluate(s, posterior.boundary(s - 1));
  });
  const auto [lower, upper] = ct::bracket(points, open, tails);

  t.r_hat_lower = static_cast<double>(lower);
  t.r_hat_upper = static_cast<double>(upper);
  t.r_hat = static_cast<double>((lower + upper) / 2.0L);
  t.error_bound = static_cast<double>((upper - lower) / 2.0L);
  t.conditional_bound = t.r_lo > delta ? delta / t.r_lo : 1.0;
  return t;
}

// The same with the closed-form rate: one CertificationRateModel for the pool, evaluated at
// the u the bracket needs.
inline CertificateTriple certificate_triple(std::int64_t N, std::int64_t N1, std::int64_t m1,
                                            std::int64_t k1, std::int64_t n, double alpha,
                                            double delta,
                                            const CertificateTripleOptions& options = {}) {
  detail::certificate_triple::check_arguments("certificate_triple", N, N1, m1, k1, n, alpha, delta,
                                              options);
  const CertificationRateModel model(N, N1, n, alpha, delta);
  return certificate_triple(
      N, N1, m1, k1, n, alpha, delta, [&model](std::int64_t u) { return model.rate(u); }, options);
}

}  // namespace ltt
