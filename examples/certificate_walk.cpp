// Walk one certificate by hand: a scored pool, 200 calibration labels, the composition
// p-value at each grid threshold, and the strict fixed-sequence decision (paper, section 4.3).
//
//   certificate_walk [seed] [alpha] [delta]
//
// The pool is synthetic: 2000 trajectories whose chance of exceeding the cost budget falls
// with the score, as a learned safety value would make it. Everything printed can be
// re-checked by hand from the columns N, m and k.

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include <curation/calibration.hpp>
#include <ltt/ltt.hpp>

int main(int argc, char** argv) {
  const std::uint64_t seed = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1;
  const double alpha = argc > 2 ? std::atof(argv[2]) : 0.25;
  const double delta = argc > 3 ? std::atof(argv[3]) : 0.1;
  if (!(alpha > 0 && alpha < 1 && delta > 0 && delta < 1)) {
    std::fprintf(stderr, "certificate_walk: alpha and delta must lie in (0, 1)\n");
    return 2;
  }
  constexpr std::int64_t N = 2000, n = 200;

  // Pool: score g ~ U(0, 1); unsafe with probability min(1, 2 (1 - g)^2), about half overall,
  // so the unsafe fraction of S(lambda) crosses alpha = 0.25 near the 0.40 quantile.
  std::mt19937_64 rng(seed);
  // Uniform [0, 1) from the engine's top 53 bits: std::uniform_real_distribution maps the same
  // engine output differently across standard libraries, and a seed should print the same table
  // everywhere.
  auto unit = [&rng] { return static_cast<double>(rng() >> 11) * 0x1p-53; };
  std::vector<double> score(N);
  std::vector<bool> unsafe(N);
  for (std::int64_t i = 0; i < N; ++i) {
    score[i] = unit();
    unsafe[i] = unit() < std::min(1.0, 2 * (1 - score[i]) * (1 - score[i]));
  }

  // Calibration: n trajectories uniformly without replacement, seeded (the curation layer's draw).
  const std::vector<std::int64_t> calibration = ltt::curation::draw_calibration(N, n, seed + 1);

  // Grid: score quantiles 0.85, 0.80, ..., 0.30; S(lambda) = {g >= lambda}.
  std::vector<double> sorted = score;
  std::sort(sorted.begin(), sorted.end());
  std::vector<double> quantiles, lambdas;
  for (int q = 85; q >= 30; q -= 5) {
    quantiles.push_back(q / 100.0);
    lambdas.push_back(sorted[static_cast<std::size_t>(q * (N - 1) / 100)]);
  }

  std::printf("pool N = %lld, calibration n = %lld, alpha = %g, delta = %g, seed = %llu\n\n",
              static_cast<long long>(N), static_cast<long long>(n), alpha, delta,
              static_cast<unsigned long long>(seed));
  std::printf("%4s %8s %8s %6s %4s %4s %6s %12s  %s\n", "step", "quantile", "lambda", "N_j", "m_j",
              "k_j", "U*_j", "p_j", "decision");

  struct Step {
    std::int64_t N_j, m_j, k_j;
  };
  std::vector<Step> steps;
  // The lazy walk computes a p-value only for thresholds it reaches.
  const ltt::FixedSequenceResult walk = ltt::fixed_sequence(
      static_cast<std::int64_t>(lambdas.size()),
      [&](std::int64_t j) {
        const double lambda = lambdas[static_cast<std::size_t>(j)];
        Step s{0, 0, 0};
        for (std::int64_t i = 0; i < N; ++i) s.N_j += score[i] >= lambda;
        for (std::int64_t i : calibration)
          if (score[i] >= lambda) ++s.m_j, s.k_j += unsafe[i];
        steps.push_back(s);
        return ltt::composition_pvalue(s.k_j, s.m_j, s.N_j, alpha);
      },
      delta);

  for (std::size_t j = 0; j < steps.size(); ++j) {
    const Step& s = steps[j];
    const double p = walk.pvalues[j];
    std::printf("%4zu %8.2f %8.4f %6lld %4lld %4lld %6lld %12.4e  %s\n", j + 1, quantiles[j],
                lambdas[j], static_cast<long long>(s.N_j), static_cast<long long>(s.m_j),
                static_cast<long long>(s.k_j),
                static_cast<long long>(ltt::null_boundary(s.N_j, alpha)), p,
                p <= delta ? "reject H_j (certified)" : "fail to reject: stop");
  }

  std::printf("\n");
  if (walk.last_rejected) {
    const auto j = static_cast<std::size_t>(*walk.last_rejected);
    std::int64_t bad = 0;
    for (std::int64_t i = 0; i < N; ++i) bad += score[i] >= lambdas[j] && unsafe[i];
    std::printf(
        "certified: threshold lambda = %.4f (quantile %.2f), %lld trajectories kept;\n"
        "  with probability >= %g over the calibration draw, at most %g of them are unsafe.\n"
        "  (The synthetic pool's true unsafe fraction there: %.3f.)\n",
        lambdas[j], quantiles[j], static_cast<long long>(steps[j].N_j), 1 - delta, alpha,
        static_cast<double>(bad) / static_cast<double>(steps[j].N_j));
  } else {
    std::int64_t safe = 0;
    for (std::int64_t i : calibration) safe += !unsafe[i];
    const double fraction = ltt::clopper_pearson_lower(safe, n, delta);
    std::printf(
        "refused: no threshold certifies. Uncertified fallback: keep the top %.3f of the\n"
        "  pool (one-sided Clopper-Pearson lower bound on safe mass, %lld of %lld labels safe).\n",
        fraction, static_cast<long long>(safe), static_cast<long long>(n));
  }
  return 0;
}
