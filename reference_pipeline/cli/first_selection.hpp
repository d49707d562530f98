#pragma once
// What `ltt rate` and `ltt budget` both ask about the first selection S_1 (N1 of the pool's N
// trajectories, U1 unsafe) at (alpha, delta) -- one flag table and one reader for the question --
// and what both say about it before any number of labels: its null boundary U*, its purity
// margin, and which side of the certification dichotomy it is on (paper, Propositions
// "certification dichotomy" and "certification rate").

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <ltt/certification_rate.hpp>
#include <ltt/pvalue.hpp>
#include <ltt/several_budgets.hpp>

#include <certification/format.hpp>

#include "arguments.hpp"
#include "budget_flags.hpp"
#include "subcommand.hpp"

namespace ltt::cli {

// Work caps of `ltt rate` and `ltt budget` (docs/cli.md). The rate sums over about 17 standard
// deviations of m ~ Hyp(N, N1, n), whose variance is at most min(n, N1): bounded once n or N1
// is. The budget walks the critical path up to N1 at worst and skips over n in steps that
// shrink with N/N1 near the target.
inline constexpr std::int64_t max_rate_labels = std::int64_t{1} << 26;      // with N1 > 2^20
inline constexpr std::int64_t max_first_selection = std::int64_t{1} << 20;  // budget's N1
inline constexpr std::int64_t max_budget_pool = std::int64_t{1} << 32;      // budget's N
inline constexpr std::int64_t max_curve_points = std::int64_t{1} << 14;     // budget's n-max
// Within 2.2e-12 below the target the budget search steps one n at a time; nearer to 1 than
// this, that band can hold millions of n (N = 2^32, N1 = 10, target 1: seconds).
inline constexpr double max_budget_target = 0.999999999;

// The question: the pool, its first selection, and the walk's levels.
struct FirstSelectionQuestion {
  std::int64_t N = 0, N1 = 0, U1 = 0;
  double alpha = 0.25, delta = 0.1;
};

// The largest --N or --N1 a subcommand accepts, and why (arguments.hpp's Flag::maximum).
struct CountLimit {
  std::int64_t maximum = max_count;
  std::string_view reason = {};
};

// The flags of the question: --N, --N1, --U1, then `asked` (what the subcommand computes from
// them), --alpha, --delta, --json, then `more`.
inline std::vector<Flag> first_selection_flags(CountLimit N, CountLimit N1, const Flag& asked,
                                               std::initializer_list<Flag> more = {}) {
  std::vector<Flag> flags = {
      {"N", FlagKind::count, "trajectories in the pool", {}, true, N.maximum, N.reason},
      {"N1",
       FlagKind::count,
       "trajectories in the first selection S_1",
       {},
       true,
       N1.maximum,
       N1.reason},
      {"U1", FlagKind::text,
       "unsafe trajectories in S_1; with --budgets one count per budget, comma-separated "
       "(those over each budget, tightest first)",
       {},
       true},
      asked,
      {"alpha", FlagKind::open_unit, "target unsafe fraction", "0.25"},
      {"delta", FlagKind::open_unit, "risk level", "0.1"},
      {"json", FlagKind::boolean, "print one JSON object instead of the summary"}};
  flags.insert(flags.end(), more.begin(), more.end());
  return flags;
}

// --U1's counts (comma-separated with --budgets), each read as a --count flag is and at most
// --N1.
inline std::vector<std::int64_t> read_U1_counts(const Arguments& args) {
  std::vector<std::int64_t> counts;
  const std::string& text = args.text("U1");
  std::size_t from = 0;
  for (;;) {
    const std::size_t comma = text.find(',', from);
    const std::string_view item = std::string_view(text).substr(
        from, comma == std::string::npos ? std::string_view::npos : comma - from);
    const std::int64_t U1 = detail::read_count("U1", item);
    if (U1 > args.count("N1"))
      throw BadInput(cat("--U1: ", std::to_string(U1), " must not exceed --N1 = ",
                         std::to_string(args.count("N1"))));
    counts.push_back(U1);
    if (comma == std::string::npos) return counts;
    from = comma + 1;
  }
}

// The question at several budgets (--budgets): the counts over each budget, non-increasing,
// each budget's alpha and the level its test runs at.
struct BudgetsQuestion {
  std::int64_t N = 0, N1 = 0;
  double delta = 0.1;
  std::vector<double> budgets, alphas, levels;
  std::vector<std::int64_t> U1;
  ltt::BudgetProcedure procedure = ltt::BudgetProcedure::one_threshold;
};

inline BudgetsQuestion read_budgets_question(const Arguments& args) {
  require_not_above(args, "N1", "N");
  BudgetsQuestion q;
  q.budgets = read_budgets(args);
  q.alphas = read_alphas(args, q.budgets.size());
  q.procedure = read_procedure(args);
  q.U1 = read_U1_counts(args);
  if (q.U1.size() != q.budgets.size())
    throw BadInput(cat("--U1: ", std::to_string(q.U1.size()), " counts for ",
                       std::to_string(q.budgets.size()), " budgets (one count per budget)"));
  for (std::size_t k = 1; k < q.U1.size(); ++k)
    if (q.U1[k] > q.U1[k - 1])
      throw BadInput(cat("--U1: ", std::to_string(q.U1[k]), " over budget ",
                         shortest(q.budgets[k]), " exceeds ", std::to_string(q.U1[k - 1]),
                         " over the tighter budget ", shortest(q.budgets[k - 1]),
                         " (a trajectory over a looser budget is over every tighter one)"));
  q.N = args.count("N");
  q.N1 = args.count("N1");
  q.delta = args.real("delta");
  q.levels = ltt::budget_levels(q.procedure, q.delta, static_cast<std::int64_t>(q.budgets.size()));
  return q;
}

// The question as the flags give it, N1 <= N and U1 <= N1 checked; one budget.
inline FirstSelectionQuestion read_first_selection(const Arguments& args) {
  require_not_above(args, "N1", "N");
  const std::vector<std::int64_t> U1 = read_U1_counts(args);
  if (U1.size() != 1)
    throw BadInput(cat("--U1: ", std::to_string(U1.size()),
                       " counts given; one, unless --budgets names several budgets (ltt rate)"));
  return {args.count("N"), args.count("N1"), U1[0], args.real("alpha"), args.real("delta")};
}

struct FirstSelection {
  std::int64_t N1 = 0;
  std::int64_t U1 = 0;
  std::int64_t null_boundary = 0;       // U* = floor(alpha N1) + 1
  std::optional<double> purity_margin;  // alpha - U1/N1; none for an empty selection
  bool true_null = false;               // U1 >= U*: H_1 holds, rate <= delta at every n
};

inline FirstSelection first_selection(std::int64_t N1, std::int64_t U1, double alpha) {
  FirstSelection s;
  s.N1 = N1;
  s.U1 = U1;
  s.null_boundary = ltt::null_boundary(N1, alpha);
  if (N1 > 0) {
    const double unsafe_fraction = static_cast<double>(U1) / static_cast<double>(N1);
    s.purity_margin = ltt::purity_margin(alpha, std::span(&unsafe_fraction, 1));
  }
  s.true_null = U1 >= s.null_boundary;
  return s;
}

// One line for a human reader: which side of the dichotomy S_1 is on.
inline std::string interpretation(const FirstSelection& s) {
  if (s.N1 == 0) return "the first selection is empty: the walk never certifies";
  if (s.true_null) return "the first selection is a true null (U1 >= U*): rate <= delta at every n";
  return "the first selection meets alpha (U1 < U*): the rate tends to 1 as n -> N";
}

inline void write_json(JsonWriter& json, const FirstSelection& s) {
  json.field("null_boundary", s.null_boundary)
      .field("purity_margin", s.purity_margin)
      .field("true_null", s.true_null)
      .field("interpretation", interpretation(s));
}

inline std::string describe_margin(const FirstSelection& s) {
  return s.purity_margin ? brief(*s.purity_margin) : std::string("undefined (N1 = 0)");
}

// The summary's lines on the question and on S_1, under the subcommand's answer.
inline void write_first_selection_summary(std::ostream& out, const FirstSelectionQuestion& q,
                                          const FirstSelection& s) {
  out << "  pool N = " << q.N << ", first selection N1 = " << q.N1 << " with U1 = " << q.U1
      << " unsafe\n"
      << "  alpha = " << shortest(q.alpha) << ", delta = " << shortest(q.delta) << "\n"
      << "  null boundary U* = " << s.null_boundary
      << ", purity margin alpha - U1/N1 = " << describe_margin(s) << "\n"
      << "  " << interpretation(s) << "\n";
}

}  // namespace ltt::cli
