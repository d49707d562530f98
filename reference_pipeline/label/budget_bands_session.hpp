#pragma once
// `ltt label budget --budgets b1,b2,...`: cost-band labels ("which of these intervals did the
// episode's cost fall in?") for the sequential walk at several budgets, one at a time in the
// walk's uniform order (docs/label.md, docs/several-budgets.md). The page offers one answer per
// band (cost <= b1, b1 < cost <= b2, ..., cost > bK) and never shows the cost; the journal
// records the band ("band0" .. "bandK"). The walk is `ltt certify --sequential --budgets`'s
// SequentialBudgetsRun, and the files written when a stop rule fires are what that command
// writes from the labels written beside them: DIR/labels.csv (id,band), DIR/certificate.json
// and, under one threshold, the selection. A session that is resumed replays its journal
// through the same walk.

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include <curation/several_budgets_sequential.hpp>

#include <certification/format.hpp>
#include <certification/pool_inputs.hpp>
#include <certification/selection_output.hpp>
#include <certification/sequential_budgets_certification.hpp>

#include "episode_view.hpp"
#include "journal.hpp"
#include "session.hpp"

namespace ltt::label {

// The journal's answer words, band0 .. bandK.
inline std::vector<std::string> band_words(std::int64_t budgets) {
  std::vector<std::string> words;
  for (std::int64_t b = 0; b <= budgets; ++b) words.push_back("band" + std::to_string(b));
  return words;
}

// What each band means, as the page's buttons say it: "cost <= 20", "20 < cost <= 40", ...,
// "cost > 80" (a cost equal to a budget is within it).
inline std::vector<std::string> band_texts(const std::vector<double>& budgets) {
  using certification::cat;
  using certification::shortest;
  std::vector<std::string> texts{cat("cost <= ", shortest(budgets.front()))};
  for (std::size_t k = 1; k < budgets.size(); ++k)
    texts.push_back(cat(shortest(budgets[k - 1]), " < cost <= ", shortest(budgets[k])));
  texts.push_back(cat("cost > ", shortest(budgets.back())));
  return texts;
}

class BudgetBandsSession final : public Session {
 public:
  // `in` names the files as `ltt certify --sequential --budgets --labels DIR/labels.csv` would
  // be given them; `view` is null for a pool file.
  BudgetBandsSession(const certification::PoolInputs& inputs, certification::Inputs in,
                     certification::SequentialBudgetsRequest request, const EpisodeView* view,
                     Journal& journal)
      : inputs_(inputs),
        in_(std::move(in)),
        request_(std::move(request)),
        view_(view),
        journal_(journal),
        words_(band_words(static_cast<std::int64_t>(request_.budgets.size()))) {
    restart();
    for (const JournalRecord& record : journal.replayed()) replay(record);
  }

  nlohmann::json state() const override {
    const certification::PoolFile& pool = inputs_.pool;
    const curation::SeveralBudgetsSequentialCertificate c = run_->certificate();
    const curation::SequentialCertificate& tightest = c.budgets.front();
    std::vector<std::int64_t> depths;
    for (const curation::SequentialCertificate& b : c.budgets)
      depths.push_back(b.certified ? *b.certified_step + 1 : 0);
    const std::int64_t depth = *std::min_element(depths.begin(), depths.end());
    nlohmann::json s{{"mode", "budget"},
                     {"pool", pool.name},
                     {"pool_size", pool.size()},
                     {"labels_used", c.labels_used},
                     {"band_labels", c.band_labels},
                     {"bands", band_texts(request_.budgets)},
                     {"words", words_},
                     {"procedure", ltt::budget_procedure_name(c.procedure)},
                     {"cap", tightest.label_cap},
                     {"grid_size", tightest.grid_size},
                     {"certified_depth", depth},
                     {"certified_depths", depths},
                     {"selection_size", tightest.selection_size},
                     {"stopped", run_->stopped()},
                     {"written", written_},
                     {"can_undo", can_undo()}};
    // The p-value the shallowest walk tests next: under one threshold max_k p_jk.
    s["step_tested"] = nullptr;
    s["p"] = nullptr;
    if (depth < tightest.grid_size) {
      s["step_tested"] = depth + 1;
      double p = 0.0;
      for (std::size_t k = 0; k < c.budgets.size(); ++k)
        if (depths[k] == depth)
          p = std::max(p, c.budgets[k].steps[static_cast<std::size_t>(depth)].p);
      s["p"] = p;
    }
    s["reason"] = run_->reason() ? nlohmann::json(curation::stopping_reason_name(*run_->reason()))
                                 : nlohmann::json(nullptr);
    s["verdict"] = verdict(c, depth);
    s["last"] =
        answers_.empty()
            ? nlohmann::json(nullptr)
            : nlohmann::json{{"item", pool.id_of(answers_.back().first)},
                             {"answer", words_[static_cast<std::size_t>(answers_.back().second)]}};
    s["item"] = nullptr;
    if (const auto next = run_->next()) {
      nlohmann::json item{{"id", pool.id_of(*next)}, {"number", c.labels_used + 1}};
      if (const data::DsrlPool* dataset = inputs_.dsrl()) {
        const data::Episode& e = dataset->episodes[static_cast<std::size_t>(*next)];
        item["view"] = view_->rows(e.start, e.length);
      } else {
        // Never the cost: the labeler is asked for it.
        nlohmann::json fields = nlohmann::json::object();
        const curation::TrajectoryPool& p = pool.pool;
        const auto i = static_cast<std::size_t>(*next);
        if (!p.episodic_return.empty()) fields["return"] = p.episodic_return[i];
        if (!p.length.empty()) fields["length"] = p.length[i];
        item["fields"] = fields;
      }
      s["item"] = item;
    }
    return s;
  }

  Reply answer(const nlohmann::json& request) override {
    const std::optional<Answer> given = read_answer(request);
    const std::string allowed = certification::cat("\"band0\" to \"", words_.back(), "\"");
    if (!given)
      return refuse(400,
                    certification::cat("an answer is {\"item\": id, \"answer\": ", allowed, "}"));
    const auto& [item, answer] = *given;
    const std::optional<std::int64_t> band = band_of(answer);
    if (!band)
      return refuse(400, certification::cat("answer must be one of ", allowed,
                                            " (the number of budgets the cost exceeds)"));
    const auto next = run_->next();
    if (!next) return refuse(409, "the walk has stopped: no episode is asked for");
    const std::string asked = inputs_.pool.id_of(*next);
    if (item != asked)
      return refuse(409, certification::cat("episode ", item, " is not the one asked for (", asked,
                                            " is): answered already, or in another tab"));
    journal_.append({{"answer", answer}, {"item", item}});
    add(*band);
    return {200, {{"recorded", item}}};
  }

  Reply undo(const nlohmann::json& request) override {
    const std::optional<std::string> item = read_item(request);
    if (!item) return refuse(400, "an undo is {\"item\": the id of the last answer}");
    if (answers_.empty() || inputs_.pool.id_of(answers_.back().first) != *item)
      return refuse(
          409, certification::cat("episode ", *item, " is not the last answer: nothing undone"));
    if (!can_undo()) return refuse(409, undo_after_writing(files_hold_));
    journal_.append({{"undo", *item}});
    take_back();
    return {200, {{"undone", *item}}};
  }

  Reply finish() override {
    if (!run_->stopped())
      return refuse(409,
                    "the stop rule has not fired: keep labeling (the certificate so far is "
                    "valid, but certify --labels would ask for more)");
    const certification::SequentialBudgetsResult result = certification::sequential_budgets_result(
        *run_, inputs_.pool, in_, request_, inputs_.dsrl());
    certification::Inputs written = in_;
    written.record_file = in_.labels_file;  // the labels as --record writes them
    certification::write_outputs(written, inputs_.pool, inputs_.dsrl(), result.selection,
                                 result.json_text,
                                 certification::band_record_csv(*run_, inputs_.pool));
    journal_.append({{"written", run_->labels_used()}});
    written_ = true;
    files_hold_ = run_->labels_used();
    nlohmann::json files = nlohmann::json::array({*in_.labels_file, *in_.certificate_file});
    if (in_.selection_file) files.push_back(*in_.selection_file);
    return {200, {{"written", files}}};
  }

  std::vector<std::string> media_names() const override {
    if (const auto next = run_->next()) return {inputs_.pool.id_of(*next)};
    return {};
  }

  std::int64_t labels_used() const { return run_->labels_used(); }

 private:
  void restart() { run_.emplace(inputs_.pool.pool.score, request_.options, in_.seed); }

  std::optional<std::int64_t> band_of(const std::string& word) const {
    for (std::size_t b = 0; b < words_.size(); ++b)
      if (words_[b] == word) return static_cast<std::int64_t>(b);
    return std::nullopt;
  }

  void add(std::int64_t band) {
    answers_.emplace_back(*run_->next(), band);
    run_->add(band);
    written_ = false;
  }

  // The walk has no way back: it is replayed from the start on the answers that remain.
  void take_back() {
    answers_.pop_back();
    restart();
    for (const auto& [position, band] : answers_) run_->add(band);
    written_ = false;
  }

  // A record as answer() and undo() append it (the words checked by the journal's reader);
  // here the order is checked, as BudgetSession does.
  void replay(const JournalRecord& record) {
    using certification::BadInput;
    using certification::cat;
    using certification::in_quotes;
    const std::string at = journal_.place(record);
    switch (record.kind) {
      case RecordKind::answer: {
        const auto next = run_->next();
        if (!next)
          throw BadInput(cat(at, "field 'item' = ", in_quotes(record.item),
                             ": the walk had stopped, no episode was asked for"));
        if (inputs_.pool.id_of(*next) != record.item)
          throw BadInput(
              cat(at, "field 'item' = ", in_quotes(record.item), " is not ",
                  in_quotes(inputs_.pool.id_of(*next)),
                  ", the episode the walk of these inputs asks for; give another --out"));
        add(*band_of(record.word));
        break;
      }
      case RecordKind::undo:
        if (answers_.empty() || inputs_.pool.id_of(answers_.back().first) != record.item)
          throw BadInput(
              cat(at, "field 'undo' = ", in_quotes(record.item), " is not the last answer's item"));
        if (!can_undo()) throw BadInput(cat(at, "an undo after ", undo_after_writing(files_hold_)));
        take_back();
        break;
      case RecordKind::written:
        if (record.written != static_cast<std::int64_t>(answers_.size()))
          throw BadInput(cat(at, "field 'written' = ", std::to_string(record.written), " after ",
                             std::to_string(answers_.size()), " answers"));
        written_ = true;
        files_hold_ = record.written;
        break;
    }
  }

  bool can_undo() const { return static_cast<std::int64_t>(answers_.size()) > files_hold_; }

  std::string verdict(const curation::SeveralBudgetsSequentialCertificate& c,
                      std::int64_t depth) const {
    if (!run_->stopped()) return "keep going";
    if (c.certified)
      return certification::cat("every budget certified to step ", std::to_string(depth),
                                " or deeper: you can stop");
    return certification::cat("stopped (", curation::stopping_reason_name(*run_->reason()),
                              "): not every budget certified");
  }

  const certification::PoolInputs& inputs_;
  certification::Inputs in_;
  certification::SequentialBudgetsRequest request_;
  const EpisodeView* view_;
  Journal& journal_;
  std::vector<std::string> words_;
  std::optional<certification::SequentialBudgetsRun> run_;
  std::vector<std::pair<std::int64_t, std::int64_t>> answers_;  // pool position, band
  bool written_ = false;
  std::int64_t files_hold_ = 0;  // answers the files written hold (0: none written)
};

}  // namespace ltt::label
