#pragma once
// The settings of the sequential walk (<curation/sequential_selection.hpp>): the
// label order, the stopping rules and their `--stop` names, the levels, the prior and the
// share of delta spent on the exact test at the cap. docs/sequential.md explains each.

#include <curation/detail/check.hpp>
#include <curation/threshold_grid.hpp>
#include <ltt/detail/check.hpp>
#include <ltt/sequential_pvalue.hpp>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace ltt::curation {

// Why a walk stopped. `decided`: no label left to buy can change the certificate (every step
// certified, or the first uncertified selection labeled in full); the stratified order only.
enum class StoppingReason { label_cap, target_certified, early_refusal, stalled, decided };

inline constexpr StoppingReason stopping_reasons[] = {
    StoppingReason::label_cap, StoppingReason::target_certified, StoppingReason::early_refusal,
    StoppingReason::stalled, StoppingReason::decided};

constexpr std::string_view stopping_reason_name(StoppingReason reason) {
  switch (reason) {
    case StoppingReason::label_cap:
      return "label_cap";
    case StoppingReason::target_certified:
      return "target_certified";
    case StoppingReason::early_refusal:
      return "early_refusal";
    case StoppingReason::stalled:
      return "stalled";
    case StoppingReason::decided:
      return "decided";
  }
  return "unknown";
}

// Which trajectory is labeled next (docs/sequential.md, "Label orders"). Both read one seeded
// uniform permutation of the pool (draw_label_order).
//  - stratified: labels go only to the first uncertified selection S_d, cut into the strata
//    D_0 = S_0, D_k = S_k \ S_{k-1}; the next one comes from the stratum of S_d labeled least
//    in proportion to its size, as the permutation's next unlabeled member of that stratum.
//    H_j is then tested across the strata (ltt::StratifiedCompositionEvidence).
//  - uniform: the permutation from the top, so every prefix is a uniform draw from the pool
//    and the labels in each S_j a uniform draw from it; printable before any label.
enum class LabelOrder { stratified, uniform };

// When the fixed tail takes over (docs/sequential.md, "When to switch: the criterion"):
//  - stall: the depth unchanged for stall_labels labels, the next step's forecast at least
//    stall_rate, and the anytime test out of reach (thresholds, as `auto` had them first);
//  - forecast: after every label, the plug-in forecast of the certified depth at the cap
//    (<curation/detail/tail_forecast.hpp>) of switching now is at least that of going on with
//    the anytime test, plus switch_margin;
//  - first_certificate: as soon as a step is certified and not every one is.
// Each is a function of the labels so far: a stopping time, as the tail's proof asks.
enum class TailSwitch { stall, forecast, first_certificate };

constexpr std::string_view label_order_name(LabelOrder order) {
  return order == LabelOrder::stratified ? "stratified" : "uniform";
}

// The order named on the command line (`--order`) or in Python.
inline LabelOrder parse_label_order(std::string_view name) {
  if (name == "stratified") return LabelOrder::stratified;
  if (name == "uniform") return LabelOrder::uniform;
  detail::invalid("ltt::curation::parse_label_order", "order", std::string(name),
                  "must be stratified or uniform");
}

struct SequentialSelectionOptions {
  LabelOrder order = LabelOrder::stratified;
  double alpha = 0.25;
  double delta = 0.1;
  std::vector<double> quantiles{paper_grid_quantiles.begin(), paper_grid_quantiles.end()};
  std::int64_t label_cap = 200;             // n_max, at most the pool size
  std::optional<std::int64_t> target_step;  // stop once this grid step (0-based) is certified
  bool early_refusal = true;
  // Early refusal fires once the probability that H_1 is still rejected is at most this.
  double refusal_rate = 0.05;
  // stall:L: stop once the certified depth has not grown for this many labels and the
  // closed-form forecast rate of the next step at the cap is below stall_rate.
  std::optional<std::int64_t> stall_labels;
  double stall_rate = 0.5;
  // Of every p_j; unset: ltt::sequential_default_prior(alpha).
  std::optional<ltt::BetaMixturePrior> prior;
  // w: the share of delta spent on one exact composition test at the cap ("Power" in
  // <curation/sequential_selection.hpp>): of every H_j in the uniform order, of H_1 in the
  // stratified one; those anytime tests run at delta (1 - w). 0 <= w < 1; 0: anytime alone.
  double cap_test_share = 0.2;
  // The fixed tail (stratified order only; `auto`, `depth` and `labels` set it;
  // docs/sequential.md, "The fixed tail"): once a step is certified and tail_switch says so,
  // the labels left under the cap are drawn uniformly from the unlabeled part of the grid's
  // largest selection and each uncertified H_j is tested at the cap by an exact test
  // conditional on the labels before, at level
  // delta (w + (1 - w) E_j), E_j its anytime evidence at the switch. The anytime tests of
  // the deeper H_j then run at delta (1 - w) from the first label, as H_1's does.
  bool fixed_tail = false;
  // w of the fixed tail: the deeper steps' anytime tests run at delta (1 - w), the tail's test
  // at delta (w + (1 - w) E_j). 0 < w < 1. Fixed before the first label (`depth`: 0.9).
  double tail_share = 0.5;
  TailSwitch tail_switch = TailSwitch::stall;  // `depth` and `auto`: forecast
  // TailSwitch::forecast: switch when the forecast depth of the tail is at least that of going
  // on plus this many steps (negative leans to depth, positive to saving labels).
  double switch_margin = 0.0;
  // The fixed walk bought label by label (uniform order only; docs/sequential.md, "The fixed
  // walk, label by label"): the sample is the first label_cap positions of the permutation,
  // tested at the cap as the fixed-n walk tests a draw of label_cap (all of delta on the exact
  // composition test, no anytime test). The walk asks only for the sample's labels that can
  // still change the certified depth and stops as soon as none can, so it certifies exactly
  // what the fixed-n walk certifies on that sample, with fewer labels; at an earlier stop it
  // certifies the steps certified whatever the labels left.
  bool fixed_walk = false;
  // The fewest trajectories the uncertified fallback keeps (capped at the pool size), as the
  // fixed-n walk's CalibratedSelectionOptions::minimum_selection.
  std::int64_t minimum_selection = 50;
};

// `--stop auto`: the stall rule with this many labels, plus early refusal.
inline constexpr std::int64_t auto_stall_labels = 20;
// `--stop forecast`: the fixed tail's share of delta (the deeper anytime tests run at a tenth
// of delta; the forecast switch hands most runs that have a step left to the tail).
inline constexpr double forecast_tail_share = 0.9;

// The stopping rule named on the command line (`--stop RULE`) or in Python, set in `options`
// (label_cap, the rates, the prior and the levels are left as they are):
//   cap            only the label cap
//   target:J       also stop once grid step J (0-based, as certified_step) is certified
//   stall:L        also the stall rule with L labels
//   early-refusal  also early refusal
//   labels         stall:20 and early refusal, and the fixed tail (stratified order): where the
//                  stall rule looks, a walk whose next step an exact test could still certify
//                  switches to it (TailSwitch::stall, tail_share 0.5); saves labels
//   forecast       the same stop rules, the fixed tail with the forecast switch
//                  (TailSwitch::forecast, margin 0) and tail_share 0.9: the deepest rule on
//                  average on random pools and the highest certification rate
//                  (docs/sequential.md), but shallower than the fixed walk on some pools
//   depth          the fixed walk bought label by label (fixed_walk; sets the uniform order):
//                  never shallower than the fixed-n walk, on any pool, because on the same
//                  sample it certifies the same step
//   auto           the default: depth (no rule measured keeps both the fixed walk's depth and
//                  the labels saved, and the default is the end that keeps the depth)
inline void apply_stop_rule(std::string_view rule, SequentialSelectionOptions& options) {
  constexpr std::string_view fn = "ltt::curation::apply_stop_rule";
  const auto count_after = [&](std::string_view prefix) -> std::optional<std::int64_t> {
    if (!rule.starts_with(prefix)) return std::nullopt;
    const std::string_view digits = rule.substr(prefix.size());
    std::int64_t value = -1;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (digits.empty() || ec != std::errc{} || end != digits.data() + digits.size() || value < 0)
      detail::invalid(fn, "stop", std::string(rule),
                      "must give a nonnegative integer after '" + std::string(prefix) + "'");
    return value;
  };
  options.target_step.reset();
  options.stall_labels.reset();
  options.early_refusal = false;
  options.fixed_tail = false;
  options.fixed_walk = false;
  if (rule == "cap") return;
  if (rule == "early-refusal") {
    options.early_refusal = true;
  } else if (rule == "auto" || rule == "depth") {
    options.fixed_walk = true;
    options.order = LabelOrder::uniform;
  } else if (rule == "labels" || rule == "forecast") {
    options.early_refusal = true;
    options.stall_labels = auto_stall_labels;
    options.fixed_tail = true;
    options.tail_switch = TailSwitch::stall;
    options.tail_share = 0.5;
    options.switch_margin = 0.0;
    if (rule == "forecast") {
      options.tail_switch = TailSwitch::forecast;
      options.tail_share = forecast_tail_share;
    }
  } else if (const auto J = count_after("target:")) {
    options.target_step = *J;
  } else if (const auto L = count_after("stall:")) {
    options.stall_labels = *L;
  } else {
    detail::invalid(fn, "stop", std::string(rule),
                    "must be cap, target:J, stall:L, early-refusal, labels, forecast, depth or auto");
  }
}

namespace detail::sequential {

inline void check_options(std::string_view fn, std::int64_t N,
                          const SequentialSelectionOptions& o) {
  ltt::detail::require_open_unit(fn, "alpha", o.alpha);
  ltt::detail::require_open_unit(fn, "delta", o.delta);
  if (o.label_cap < 1 || o.label_cap > N)
    detail::invalid(fn, "label_cap", detail::show(o.label_cap),
                    "must lie in [1, pool size = " + detail::show(N) + "]");
  if (!(o.cap_test_share >= 0.0 && o.cap_test_share < 1.0))
    detail::invalid(fn, "cap_test_share", detail::show(o.cap_test_share), "must lie in [0, 1)");
  detail::require_closed_unit(fn, "refusal_rate", o.refusal_rate);
  detail::require_closed_unit(fn, "stall_rate", o.stall_rate);
  ltt::detail::require_count(fn, "minimum_selection", o.minimum_selection);
  if (!(o.tail_share > 0.0 && o.tail_share < 1.0))
    detail::invalid(fn, "tail_share", detail::show(o.tail_share), "must lie in (0, 1)");
  if (!std::isfinite(o.switch_margin))
    detail::invalid(fn, "switch_margin", detail::show(o.switch_margin), "must be finite");
  if (o.fixed_walk && o.order != LabelOrder::uniform)
    detail::invalid(fn, "order", std::string(label_order_name(o.order)),
                    "must be uniform for the fixed walk (fixed_walk, `--stop depth`): its sample "
                    "is the first label_cap positions of the permutation");
  if (o.stall_labels && *o.stall_labels < 1)
    detail::invalid(fn, "stall_labels", detail::show(*o.stall_labels), "must be at least 1");
}

}  // namespace detail::sequential

}  // namespace ltt::curation
