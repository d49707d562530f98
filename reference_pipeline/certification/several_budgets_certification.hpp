#pragma once
// `ltt certify --budgets`: several budgets certified from one calibration sample
// (curation/several_budgets_selection.hpp, docs/several-budgets.md), as steps:
//
//   read_banded_labels      a labels CSV with id and one of cost, band (0..K) or, for one
//                           budget, unsafe; each row checked with its line
//   draw_banded             --draw: the draw labeled by each trajectory's cost column
//   certify_budgets         the selection at every budget, and each certified budget's triple
//   write_budgets_json      one object: procedure, levels, joint p-values, one certificate per
//                           budget (every number of its walk), output and inputs
//   write_budgets_summary   the same for a human reader, a line per budget

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <ostream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <curation/calibration.hpp>
#include <curation/cost_bands.hpp>
#include <curation/fields.hpp>
#include <curation/several_budgets_selection.hpp>
#include <ltt/certificate_triple.hpp>
#include <ltt/several_budgets.hpp>

#include <data/dsrl.hpp>

#include "bad_input.hpp"
#include "certification.hpp"
#include "format.hpp"
#include "inputs.hpp"
#include "pool_file.hpp"
#include "table_reader.hpp"

namespace ltt::certification {

// --procedure's spelling of a procedure.
inline std::string_view procedure_label(ltt::BudgetProcedure procedure) {
  return procedure == ltt::BudgetProcedure::one_threshold ? "one-threshold" : "per-budget";
}

struct BudgetsRequest {
  std::vector<double> budgets;  // ascending
  cur::SeveralBudgetsOptions options;
};

// The labels CSV: id and exactly one of cost (a finite number: its band is computed), band
// (an integer in [0, K]) or unsafe (0 or 1, one budget only).
inline cur::BandedCalibration read_banded_labels(const std::string& path, const PoolFile& pool,
                                                 std::span<const double> budgets) {
  CsvFile csv = CsvFile::read(path);
  const std::size_t id_column = csv.column("id");
  const auto cost = csv.find_column("cost"), band = csv.find_column("band"),
             unsafe = csv.find_column("unsafe");
  const auto K = static_cast<std::int64_t>(budgets.size());
  const int given = int(cost.has_value()) + int(band.has_value()) + int(unsafe.has_value());
  if (given == 0)
    csv.fail(csv.header_line(), "the header needs a 'cost' or a 'band' column (or, with one "
                                "budget, 'unsafe')");
  if (given > 1)
    csv.fail(csv.header_line(),
             "the header has more than one of 'cost', 'band' and 'unsafe': which one labels?");
  if (unsafe && K != 1)
    csv.fail(csv.header_line(), cat("'unsafe' says over one budget or not; --budgets names ",
                                    std::to_string(K), ": label 'cost' or 'band' instead"));
  std::vector<std::int64_t> ids, bands;
  std::unordered_map<std::int64_t, std::int64_t> line_of_position;
  for (CsvRecord row; csv.next(row);) {
    const std::string_view id = row.fields[id_column];
    if (id.empty()) csv.fail(row.line, "id is missing");
    std::int64_t b = 0;
    if (cost) {
      b = curation::cost_band(finite_field(csv, row, *cost, "cost"), budgets);
    } else {
      b = integer_field(csv, row, band ? *band : *unsafe, band ? "band" : "unsafe");
      if (b < 0 || b > K)
        csv.fail(row.line, band ? cat("band ", std::to_string(b), " must lie in [0, ",
                                      std::to_string(K), "] (the number of budgets exceeded)")
                                : cat("unsafe ", std::to_string(b), " must be 0 or 1"));
    }
    const std::int64_t position =
        labeled_position(csv, row, id, pool, ids.size(), line_of_position);
    ids.push_back(pool.pool.id[static_cast<std::size_t>(position)]);
    bands.push_back(b);
  }
  if (ids.empty())
    csv.fail(csv.header_line(), "no labels after the header: at least one is needed");
  return curation::banded_calibration_from_bands(pool.pool.id, ids, bands, K);
}

// --draw n: n trajectories drawn with --seed, each labeled by its cost against the budgets.
inline cur::BandedCalibration draw_banded(const PoolFile& pool, const Inputs& in,
                                          std::span<const double> budgets) {
  check_draw(pool, in);
  return curation::label_banded_calibration(
      curation::draw_calibration(pool.size(), *in.draw, in.seed), pool.pool.episodic_cost, budgets);
}

struct BudgetsCertification {
  cur::SeveralBudgetsSelection result;
  std::vector<std::optional<CertificateTriple>> triples;  // per budget, certified ones
  std::vector<std::int64_t> written;  // the selection --selection writes (one threshold)
};

// The selection at every budget; the written selection is the tightest budget's: under one
// threshold the common certified selection, or the smallest fallback, which suits every budget.
inline BudgetsCertification certify_budgets(const PoolFile& pool,
                                            const cur::BandedCalibration& banded,
                                            const BudgetsRequest& request) {
  BudgetsCertification out;
  out.result = cur::several_budgets_selection(pool.pool.score, banded, request.options);
  for (std::size_t k = 0; k < out.result.budgets.size(); ++k) {
    const cur::Certificate& c = out.result.budgets[k].certificate;
    std::optional<CertificateTriple> triple;
    if (c.certified) {
      const cur::CertificateStep& first = c.steps.front();
      triple = ltt::certificate_triple(pool.size(), first.N, first.m, first.k, c.calibration_size,
                                       c.alpha, c.delta);
    }
    out.triples.push_back(triple);
  }
  out.written = out.result.budgets.front().selected;
  return out;
}

inline void write_budgets_json(JsonWriter& json, const BudgetsCertification& b,
                               const BudgetsRequest& request, const Inputs& in,
                               const data::DsrlPool* dataset, std::int64_t written_size,
                               const std::function<void(JsonWriter&)>& more_fields = {}) {
  const cur::SeveralBudgetsSelection& r = b.result;
  json.begin_object()
      .field("procedure", ltt::budget_procedure_name(r.procedure))
      .field("delta", r.delta);
  JsonFields{json}("levels", r.levels);
  if (r.procedure == ltt::BudgetProcedure::one_threshold)
    JsonFields{json}("joint_pvalues", r.joint_pvalues);
  else
    json.field("joint_pvalues", std::optional<double>{});
  bool all = true;
  for (const auto& s : r.budgets) all = all && s.certificate.certified;
  json.field("certified", all);
  json.key("budgets").begin_array();
  for (std::size_t k = 0; k < r.budgets.size(); ++k) {
    json.begin_object().field("budget", request.budgets[k]).field("level", r.levels[k]);
    fields(cur::PricedCertificate{&r.budgets[k].certificate, &b.triples[k]}, JsonFields{json});
    json.end_object();
  }
  json.end_array();
  write_output_json(json, in, written_size,
                    dataset ? std::optional(written_rows(*dataset, b.written)) : std::nullopt);
  json.key("inputs").begin_object();
  write_source_json(json, in, dataset);
  json.field("labels", in.labels_file).field("draw", in.draw).field("seed", in.seed);
  JsonFields{json}("budgets", request.budgets);
  JsonFields{json}("alphas", request.options.alphas);
  JsonFields{json}("grid", request.options.quantiles);
  json.field("min_selection", request.options.minimum_selection)
      .field("drop_unsafe_calibration", request.options.drop_unsafe_calibration);
  json.end_object();
  if (more_fields) more_fields(json);
  json.end_object();
}

inline void write_budgets_summary(std::ostream& out, const BudgetsCertification& b,
                                  const BudgetsRequest& request, const Inputs& in) {
  const cur::SeveralBudgetsSelection& r = b.result;
  bool all = true;
  for (const auto& s : r.budgets) all = all && s.certificate.certified;
  out << (all ? "every budget certified" : "not every budget certified") << " ("
      << procedure_label(r.procedure) << ", delta = " << shortest(r.delta) << ", "
      << r.budgets.front().certificate.calibration_size << " labels)\n";
  for (std::size_t k = 0; k < r.budgets.size(); ++k) {
    const cur::Certificate& c = r.budgets[k].certificate;
    out << "  budget " << shortest(request.budgets[k]) << " (alpha " << shortest(c.alpha)
        << ", level " << shortest(r.levels[k]) << "): ";
    if (c.certified)
      out << "certified at quantile " << shortest(c.quantile) << ", threshold "
          << shortest(c.threshold) << ", " << c.selection_size << " selected\n";
    else
      out << "not certified; uncertified fallback of " << c.selection_size << " (quantile "
          << brief(c.quantile) << ")\n";
  }
  if (in.selection_file)
    out << "  wrote " << b.written.size() << " to " << *in.selection_file
        << (all ? " (certified for every budget)\n" : " (the tightest budget's selection)\n");
}

}  // namespace ltt::certification
