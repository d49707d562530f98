// The sequential walk's stop rules against the fixed-n walk on random pools
// (tests/support/pool_family.hpp): per pool, the certification rate, the mean certified depth
// (0 when refused) and the labels used of each rule, and of the fixed walk at n = cap; then per
// rule, the distribution of depth differences over the pools. docs/sequential.md, "The default
// on random pools", reports its output.
//
//   sequential_pools [--set design|evaluation] [--pools P] [--draws R] [--cap n]
//                    [--stop RULE]... [--graded] [--per-pool] [--only I,J,...]
//
// Defaults: the evaluation set, 200 pools, 200 draws per pool and procedure, cap 200, the
// rules depth, forecast and labels. --graded adds the graded pool of N = 2000 with S_1 5% unsafe
// (margin +0.20) and the rest 10%. Draw r of a pool is seeded 5000 + r (fixed walk) and
// 7000 + r (sequential), as the measurement cases of tests/curation/sequential_selection.
// Monte Carlo error: each depth difference comes with its standard error; a pool counts as
// "below the bar" where the difference is under -0.25, and "significantly below" where its
// 95% upper limit (difference + 1.96 se) is.
// --only runs the listed pools of the set (their indices) instead of the first P, e.g. to
// measure again at more draws the pools a first run found below the bar.
// A small size for CI: --pools 4 --draws 20.

#include <curation/calibrated_selection.hpp>
#include <curation/calibration.hpp>
#include <curation/sequential_selection.hpp>
#include <ltt/bounds.hpp>

#include "../tests/support/graded_pool.hpp"
#include "../tests/support/pool_family.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

namespace cur = ltt::curation;

struct Measure {
  std::int64_t runs = 0, certified = 0;
  double depth = 0.0, depth2 = 0.0, labels = 0.0;
  void add(std::optional<std::int64_t> step, std::int64_t labels_used) {
    const double d = step ? static_cast<double>(*step + 1) : 0.0;
    ++runs;
    certified += step.has_value();
    depth += d;
    depth2 += d * d;
    labels += static_cast<double>(labels_used);
  }
  double rate() const { return static_cast<double>(certified) / static_cast<double>(runs); }
  double mean_depth() const { return depth / static_cast<double>(runs); }
  double depth_variance() const {
    const double m = mean_depth();
    return std::max(0.0, depth2 / static_cast<double>(runs) - m * m);
  }
  double mean_labels() const { return labels / static_cast<double>(runs); }
};

Measure measure_fixed(const ltt_test::GradedPool& pool, std::int64_t draws, std::int64_t n) {
  Measure m;
  const auto N = static_cast<std::int64_t>(pool.scores.size());
  for (std::int64_t r = 0; r < draws; ++r) {
    const auto cal = cur::label_calibration(
        cur::draw_calibration(N, n, 5000 + static_cast<std::uint64_t>(r)), pool.unsafe);
    m.add(cur::calibrated_selection(pool.scores, cal, {}).certificate.certified_step, n);
  }
  return m;
}

Measure measure_sequential(const ltt_test::GradedPool& pool, std::int64_t draws,
                           const cur::SequentialSelectionOptions& options) {
  Measure m;
  for (std::int64_t r = 0; r < draws; ++r) {
    const auto c = cur::sequential_selection(pool.scores, pool.unsafe,
                                             7000 + static_cast<std::uint64_t>(r), options);
    m.add(c.certified_step, c.labels_used);
  }
  return m;
}

struct RuleSummary {
  std::string rule;
  std::vector<double> diff, se;
  std::int64_t rate_short = 0;  // pools where the rate is below the fixed walk's - 0.02
  double labels = 0.0, rate = 0.0, depth = 0.0;
};

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const auto i = static_cast<std::size_t>(
      std::min<double>(static_cast<double>(v.size() - 1), std::floor(q * static_cast<double>(v.size()))));
  return v[i];
}

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr, "sequential_pools: %s\n", why);
  std::exit(2);
}

// A rule: a `--stop` name, then optional /-separated settings for the trade-off curve:
// f (forecast switch), e<m> (its switch_margin), c (switch at the first certificate),
// s (the stall thresholds' switch), w<share> (tail_share), L<labels> (stall_labels).
cur::SequentialSelectionOptions rule_options(const std::string& rule) {
  cur::SequentialSelectionOptions o;
  std::size_t at = rule.find('/');
  cur::apply_stop_rule(rule.substr(0, at), o);
  while (at != std::string::npos) {
    const std::size_t next = rule.find('/', at + 1);
    const std::string part = rule.substr(at + 1, next == std::string::npos ? next : next - at - 1);
    at = next;
    if (part == "f") o.tail_switch = cur::TailSwitch::forecast;
    else if (part == "c") o.tail_switch = cur::TailSwitch::first_certificate;
    else if (part == "s") o.tail_switch = cur::TailSwitch::stall;
    else if (part[0] == 'e') o.switch_margin = std::atof(part.c_str() + 1);
    else if (part[0] == 'w') o.tail_share = std::atof(part.c_str() + 1);
    else if (part[0] == 'L') o.stall_labels = std::atoll(part.c_str() + 1);
    else usage("unknown rule setting");
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  std::string set = "evaluation";
  std::int64_t pools = 200, draws = 200, cap = 200;
  std::vector<std::string> rules;
  bool graded = false, per_pool = false;
  std::vector<std::int64_t> only;
  for (int i = 1; i < argc; ++i) {
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage("a flag lacks its value");
      return argv[++i];
    };
    if (!std::strcmp(argv[i], "--set")) set = value();
    else if (!std::strcmp(argv[i], "--pools")) pools = std::atoll(value().c_str());
    else if (!std::strcmp(argv[i], "--draws")) draws = std::atoll(value().c_str());
    else if (!std::strcmp(argv[i], "--cap")) cap = std::atoll(value().c_str());
    else if (!std::strcmp(argv[i], "--stop")) rules.push_back(value());
    else if (!std::strcmp(argv[i], "--graded")) graded = true;
    else if (!std::strcmp(argv[i], "--per-pool")) per_pool = true;
    else if (!std::strcmp(argv[i], "--only")) {
      const std::string list = value();
      for (std::size_t at = 0; at < list.size();) {
        const std::size_t comma = std::min(list.find(',', at), list.size());
        only.push_back(std::atoll(list.substr(at, comma - at).c_str()));
        at = comma + 1;
      }
    }
    else usage("unknown flag");
  }
  if (set != "design" && set != "evaluation") usage("--set must be design or evaluation");
  if (pools < 1 || draws < 2 || cap < 1) usage("--pools, --draws and --cap must be positive");
  if (rules.empty()) rules = {"depth", "forecast", "labels"};
  if (!only.empty()) pools = static_cast<std::int64_t>(only.size());

  std::vector<RuleSummary> summary;
  for (const std::string& r : rules) summary.push_back({r, {}, {}, 0, 0.0, 0.0, 0.0});
  std::vector<cur::SequentialSelectionOptions> options(rules.size());
  for (std::size_t k = 0; k < rules.size(); ++k) {
    options[k] = rule_options(rules[k]);
    options[k].label_cap = cap;
  }
  if (per_pool)
    std::printf("pool,seed,shape,parameter,N,margin,u_top,u_bottom,rule,fixed_rate,fixed_depth,"
                "rate,depth,depth_diff,se,labels\n");
  double fixed_rate_sum = 0.0, fixed_depth_sum = 0.0;
  for (std::int64_t i = 0; i < pools; ++i) {
    const auto u = static_cast<std::uint64_t>(only.empty() ? i : only[static_cast<std::size_t>(i)]);
    const ltt_test::FamilyPool f = ltt_test::draw_family_pool(
        set == "design" ? ltt_test::pool_family_design_seed(u)
                        : ltt_test::pool_family_evaluation_seed(u));
    const std::int64_t n = std::min(cap, f.N);
    const Measure fixed = measure_fixed(f.pool, draws, n);
    fixed_rate_sum += fixed.rate();
    fixed_depth_sum += fixed.mean_depth();
    for (std::size_t k = 0; k < rules.size(); ++k) {
      cur::SequentialSelectionOptions o = options[k];
      o.label_cap = n;
      const Measure s = measure_sequential(f.pool, draws, o);
      const double diff = s.mean_depth() - fixed.mean_depth();
      const double se = std::sqrt((s.depth_variance() + fixed.depth_variance()) /
                                  static_cast<double>(draws - 1));
      RuleSummary& sum = summary[k];
      sum.diff.push_back(diff);
      sum.se.push_back(se);
      sum.rate_short += s.rate() < fixed.rate() - 0.02;
      sum.labels += s.mean_labels();
      sum.rate += s.rate();
      sum.depth += s.mean_depth();
      if (per_pool)
        std::printf("%lld,%llu,%s,%.3f,%lld,%.3f,%.4f,%.4f,%s,%.3f,%.3f,%.3f,%.3f,%.3f,%.3f,%.1f\n",
                    static_cast<long long>(u), static_cast<unsigned long long>(f.seed),
                    std::string(ltt_test::purity_shape_name(f.curve.shape)).c_str(),
                    f.curve.parameter, static_cast<long long>(f.N), f.margin, f.curve.u_top,
                    f.curve.u_bottom, rules[k].c_str(), fixed.rate(), fixed.mean_depth(),
                    s.rate(), s.mean_depth(), diff, se, s.mean_labels());
    }
    std::fflush(stdout);
  }
  const auto P = static_cast<double>(pools);
  std::printf("# %s set, %lld pools, %lld draws per pool and procedure, cap %lld\n", set.c_str(),
              static_cast<long long>(pools), static_cast<long long>(draws),
              static_cast<long long>(cap));
  std::printf("# fixed n: mean rate %.3f, mean depth %.3f\n", fixed_rate_sum / P,
              fixed_depth_sum / P);
  std::printf("# rule | pools with depth diff >= -0.25 | significantly below -0.25 | rate short "
              "by > 0.02 | diff mean / 5%% / median / 95%% / min | mean rate / depth / labels\n");
  for (const RuleSummary& s : summary) {
    std::int64_t within = 0, below = 0;
    double mean = 0.0;
    for (std::size_t i = 0; i < s.diff.size(); ++i) {
      within += s.diff[i] >= -0.25;
      below += s.diff[i] + 1.96 * s.se[i] < -0.25;
      mean += s.diff[i];
    }
    std::printf("# %s | %.3f (%lld) | %lld | %lld | %+.3f / %+.3f / %+.3f / %+.3f / %+.3f | %.3f / "
                "%.3f / %.1f\n",
                s.rule.c_str(), static_cast<double>(within) / P, static_cast<long long>(within),
                static_cast<long long>(below), static_cast<long long>(s.rate_short), mean / P,
                quantile(s.diff, 0.05), quantile(s.diff, 0.5), quantile(s.diff, 0.95),
                *std::min_element(s.diff.begin(), s.diff.end()), s.rate / P, s.depth / P,
                s.labels / P);
  }
  if (graded) {
    const ltt_test::GradedPool pool = ltt_test::make_graded_pool(2000, 0.05, 0.10);
    const Measure fixed = measure_fixed(pool, draws, cap);
    std::printf("# graded (S_1 margin +0.20, rest 10%%): fixed rate %.3f depth %.3f\n",
                fixed.rate(), fixed.mean_depth());
    for (std::size_t k = 0; k < rules.size(); ++k) {
      const Measure s = measure_sequential(pool, draws, options[k]);
      std::printf("#   %s: rate %.3f depth %.3f labels %.1f\n", rules[k].c_str(), s.rate(),
                  s.mean_depth(), s.mean_labels());
    }
  }
}
