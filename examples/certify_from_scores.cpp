// From scores and 200 labels to a certified (or refused) selection, with the curation headers.
//
//   certify_from_scores [seed] [alpha]      (try alpha = 0.05 to see a refusal)
//
// A synthetic pool of 5000 scored trajectories stands in for yours: the higher the score, the
// less likely a trajectory is over budget. 200 of them are drawn uniformly and labeled; the
// calibrated selection walks the score-quantile grid and either certifies a threshold at
// (alpha, delta) = (0.25, 0.1) or refuses and returns the uncertified fallback. Every number
// in the table is enough to recompute p_j = F_hyp(k_j; N_j, U*_j, m_j) by hand.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <vector>

#include <curation/curation.hpp>

namespace cur = ltt::curation;

int main(int argc, char** argv) {
  const std::uint64_t seed = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1;
  cur::CalibratedSelectionOptions options;  // alpha 0.25, delta 0.1, grid 0.85 .. 0.30, minimum 50
  if (argc > 2) options.alpha = std::atof(argv[2]);

  // Your pool: one score per trajectory (e.g. the mean of a learned safety value over its
  // states, cur::trajectory_scores), and here also the truth, which a real user does not have.
  constexpr std::int64_t N = 5000;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<double> score(N), episodic_return(N);
  std::vector<std::uint8_t> truth(N);
  for (std::size_t i = 0; i < score.size(); ++i) {
    score[i] = unit(rng);
    truth[i] = unit(rng) < 1.6 * (1 - score[i]) * (1 - score[i]);
    episodic_return[i] = 100 * unit(rng) + 50 * truth[i];  // unsafe trajectories earn more
  }

  // The labeler sees only the 200 drawn trajectories.
  const auto drawn = cur::draw_calibration(N, 200, seed);
  const cur::Calibration calibration = cur::label_calibration(drawn, truth);

  cur::CalibratedSelection result;
  try {
    result = cur::calibrated_selection(score, calibration, options);
  } catch (const std::invalid_argument& e) {  // e.g. alpha outside (0, 1); the message names it
    std::fprintf(stderr, "certify_from_scores: %s\n", e.what());
    return 2;
  }
  const cur::Certificate& c = result.certificate;

  std::printf("pool N = %lld, calibration n = %lld (%lld unsafe), alpha = %g, delta = %g\n\n",
              static_cast<long long>(c.pool_size), static_cast<long long>(c.calibration_size),
              static_cast<long long>(c.calibration_unsafe), c.alpha, c.delta);
  std::printf("%8s %8s %6s %4s %4s %5s %11s  %s\n", "quantile", "lambda", "N_j", "m_j", "k_j",
              "U*_j", "p_j", "decision");
  for (const cur::CertificateStep& s : c.steps)
    std::printf("%8.2f %8.4f %6lld %4lld %4lld %5lld %11.4e  %s\n", s.quantile, s.lambda,
                static_cast<long long>(s.N), static_cast<long long>(s.m),
                static_cast<long long>(s.k), static_cast<long long>(s.null_boundary), s.p,
                s.rejected ? "reject H_j" : "fail: stop");

  if (c.certified) {
    std::printf(
        "\ncertified: lambda = %.4f (quantile %.2f), %lld trajectories kept.\n"
        "With probability >= %g over the draw, at most %g of them are unsafe "
        "(truth here: %.3f).\n",
        c.threshold, c.quantile, static_cast<long long>(c.selection_size), 1 - c.delta, c.alpha,
        cur::unsafe_fraction(truth, result.selected));
  } else {
    const cur::FallbackRecord& f = *c.fallback_record;
    std::printf(
        "\nrefused: no threshold certifies. Uncertified fallback keeps the top %lld\n"
        "(Clopper-Pearson lower bound %.3f on safe mass from %lld of %lld labels safe).\n",
        static_cast<long long>(f.count), f.safe_mass_lower, static_cast<long long>(f.safe_labels),
        static_cast<long long>(f.labels));
  }

  // Reward-aware curation runs only behind the certificate.
  const auto top = cur::top_return_subselection(result, episodic_return);
  std::printf(
      "top half by return: %s, %zu kept\n",
      top.outcome == cur::GateOutcome::certified ? "ran (certified)" : "refused (uncertified)",
      top.selected.size());
  return 0;
}
