#pragma once
// The reward-aware gate behind the certificate (`--gate`, paper, appendix A): none, the top
// half of the selection by episodic return (curation::top_return_subselection), or |S| draws
// with probability proportional to exp(clip(z(R), -kappa, kappa))
// (curation::return_weighted_resample). The flag is read into a Gate once; nothing downstream
// compares its text.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <curation/calibrated_selection.hpp>
#include <curation/reward_curation.hpp>

#include "bad_input.hpp"
#include "format.hpp"

namespace ltt::certification {

enum class Gate { none, top_half, resample };

inline constexpr std::string_view gate_name(Gate gate) {
  switch (gate) {
    case Gate::none:
      return "none";
    case Gate::top_half:
      return "top-half";
    case Gate::resample:
      return "resample";
  }
  return "none";
}

// --gate's text -> Gate; anything else is refused with the three names.
inline Gate read_gate(std::string_view text) {
  for (const Gate gate : {Gate::none, Gate::top_half, Gate::resample})
    if (text == gate_name(gate)) return gate;
  throw BadInput(cat("--gate: ", in_quotes(text), " is not one of none, top-half, resample"));
}

// What --gate did, and the selection it leaves (pool positions, ascending, repeats for the
// resampled draws).
struct GateResult {
  std::optional<curation::RewardSubselection> top;
  std::optional<curation::ReturnWeightedResample> resample;
  std::vector<std::int64_t> written;
};

// The gate on a calibrated selection; `returns` are the pool's episodic returns, `seed` the
// resample's. An uncertified selection passes the gate only with `override_gate`.
inline GateResult reward_gate(Gate gate, const curation::CalibratedSelection& selection,
                              std::span<const double> returns, double kappa, std::int64_t seed,
                              bool override_gate) {
  const curation::GateOverride allow =
      override_gate ? curation::GateOverride::allow_uncertified : curation::GateOverride::none;
  GateResult out;
  switch (gate) {
    case Gate::top_half:
      out.top = curation::top_return_subselection(selection, returns, 0.5, allow);
      out.written = out.top->selected;
      break;
    case Gate::resample:
      out.resample = curation::return_weighted_resample(selection, returns, kappa,
                                                        static_cast<std::uint64_t>(seed), allow);
      out.written = out.resample->resampled;
      break;
    case Gate::none:
      out.written = selection.selected;
      break;
  }
  return out;
}

}  // namespace ltt::certification
