// Labels each mean-cost p-value needs to certify a selection whose mean cost sits a margin below
// the budget: ltt::hoeffding_serfling_pvalue against ltt::betting_mean_pvalue (tuned for the
// sample size in hand, as mean_cost_certificate uses it). Pools of N = 2000 costs in [0, 1],
// each cost the quantile of its distribution at (k + 1/2) / N, so a pool is the same on every
// platform and its standard deviation is at most a quarter of the range. For each seed the pool
// is put in a uniformly random draw order; a bound certifies with m labels when the first m
// draws give p <= delta. m50 (m90) is the smallest m at which at least half (90%) of the seeds
// certify: the labels a fixed-size calibration needs to certify with that probability, with a
// 95% interval from the certification rates. Prints a Markdown table with the ratios
// betting / Hoeffding-Serfling. Not a timing benchmark; run as
// `bench_betting_mean_bound [seeds]` (default 200).

#include <ltt/betting_mean_bound.hpp>
#include <ltt/bounds.hpp>

#include <boost/math/distributions/beta.hpp>
#include <boost/math/distributions/normal.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <numeric>
#include <random>
#include <span>
#include <string>
#include <vector>

namespace {

constexpr std::int64_t pool_size = 2000;

struct Shape {
  std::string name;
  std::function<double(double)> quantile;  // the cost at probability u, in [0, 1]
};

std::vector<Shape> shapes() {
  namespace bm = boost::math;
  return {
      {"Beta(2, 5)", [](double u) { return bm::quantile(bm::beta_distribution<>(2, 5), u); }},
      {"Beta(2, 2)", [](double u) { return bm::quantile(bm::beta_distribution<>(2, 2), u); }},
      {"normal(0.4, 0.25) truncated to [0, 1]",
       [](double u) {
         const bm::normal_distribution<> g(0.4, 0.25);
         const double lo = bm::cdf(g, 0.0), hi = bm::cdf(g, 1.0);
         return bm::quantile(g, lo + u * (hi - lo));
       }},
      {"uniform on [0.1, 0.9]", [](double u) { return 0.1 + 0.8 * u; }},
      {"two-point {0.25, 0.75}, p = 1/2", [](double u) { return u < 0.5 ? 0.25 : 0.75; }},
      {"two-point {0, 1}, p = 0.067 (sd 0.25)", [](double u) { return u < 0.933 ? 0.0 : 1.0; }},
  };
}

// Smallest m at which at least `share` of the seeds certify, with an interval: the smallest m
// whose certification rate's two-sided 95% Clopper-Pearson interval reaches above `share`
// (low end) and lies wholly above it (high end). 0 if none up to the cap.
struct Labels {
  std::int64_t m = 0, low = 0, high = 0;
};

Labels labels_for(const std::vector<std::vector<std::uint8_t>>& certified, double share) {
  const std::size_t cap = certified.front().size();
  const auto draws = static_cast<std::int64_t>(certified.size());
  Labels l;
  for (std::size_t m = 1; m < cap; ++m) {
    std::int64_t k = 0;
    for (const auto& seed : certified) k += seed[m];
    const auto at = static_cast<std::int64_t>(m);
    if (l.low == 0 && ltt::clopper_pearson_upper(k, draws, 0.025) >= share) l.low = at;
    if (l.m == 0 && static_cast<double>(k) >= share * static_cast<double>(draws)) l.m = at;
    if (l.high == 0 && ltt::clopper_pearson_lower(k, draws, 0.025) > share) l.high = at;
  }
  return l;
}

// 0 (not reached below the cap) prints as "-".
std::string count(std::int64_t m) { return m > 0 ? std::to_string(m) : "-"; }

std::string show(const Labels& l) {
  return count(l.m) + " [" + count(l.low) + ", " + count(l.high) + "]";
}

}  // namespace

int main(int argc, char** argv) {
  const int seeds = argc > 1 ? std::atoi(argv[1]) : 200;
  const double delta = 0.1;
  std::printf(
      "| pool (N = %lld) | sd | margin | HS m50 | betting m50 | ratio | HS m90 | "
      "betting m90 | ratio |\n",
      static_cast<long long>(pool_size));
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  double worst = 0.0;
  for (const Shape& shape : shapes()) {
    std::vector<double> pool(pool_size);
    for (std::int64_t k = 0; k < pool_size; ++k)
      pool[static_cast<std::size_t>(k)] =
          shape.quantile((static_cast<double>(k) + 0.5) / static_cast<double>(pool_size));
    const double mean = std::accumulate(pool.begin(), pool.end(), 0.0) / pool_size;
    double ss = 0.0;
    for (double c : pool) ss += (c - mean) * (c - mean);
    const double sd = std::sqrt(ss / pool_size);
    for (double margin : {0.05, 0.1, 0.2}) {
      const double budget = mean + margin;
      // Hoeffding-Serfling needs about ln(1/delta) / (2 margin^2) labels; three times that
      // leaves room for m90 of both bounds.
      const auto cap = static_cast<std::size_t>(
          std::min<double>(pool_size, 3.0 * std::log(1.0 / delta) / (2 * margin * margin)) + 1);
      std::vector<std::vector<std::uint8_t>> hs(seeds, std::vector<std::uint8_t>(cap)), bet = hs;
      for (int seed = 0; seed < seeds; ++seed) {
        std::vector<double> order = pool;
        std::mt19937_64 rng(1000 + static_cast<std::uint64_t>(seed));
        std::shuffle(order.begin(), order.end(), rng);
        for (std::size_t m = 1; m < cap; ++m) {
          const std::span<const double> s(order.data(), m);
          hs[seed][m] = ltt::hoeffding_serfling_pvalue(s, pool_size, budget, 1.0) <= delta;
          bet[seed][m] = ltt::betting_mean_pvalue(s, pool_size, budget, 1.0, delta) <= delta;
        }
      }
      const auto h50 = labels_for(hs, 0.5), b50 = labels_for(bet, 0.5);
      const auto h90 = labels_for(hs, 0.9), b90 = labels_for(bet, 0.9);
      // The ratio's interval divides the ends of the two intervals crosswise.
      const auto ratio = [](const Labels& b, const Labels& h) {
        const auto part = [](std::int64_t num, std::int64_t den) {
          if (num <= 0 || den <= 0) return std::string("-");
          char buf[16];
          std::snprintf(buf, sizeof buf, "%.2f",
                        static_cast<double>(num) / static_cast<double>(den));
          return std::string(buf);
        };
        return part(b.m, h.m) + " [" + part(b.low, h.high) + ", " + part(b.high, h.low) + "]";
      };
      worst = std::max({worst, static_cast<double>(b50.m) / static_cast<double>(h50.m),
                        static_cast<double>(b90.m) / static_cast<double>(h90.m)});
      std::printf("| %s | %.3f | %.2f | %s | %s | %s | %s | %s | %s |\n", shape.name.c_str(), sd,
                  margin, show(h50).c_str(), show(b50).c_str(), ratio(b50, h50).c_str(),
                  show(h90).c_str(), show(b90).c_str(), ratio(b90, h90).c_str());
    }
  }
  std::printf("\ndelta = %.2f, %d seeds per row; largest ratio %.2f\n", delta, seeds, worst);
  return 0;
}
