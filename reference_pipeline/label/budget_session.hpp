#pragma once
// `ltt label budget`: budget labels ("did this episode exceed its budget?") for the sequential
// walk, one at a time in the walk's own order (docs/label.md, docs/sequential.md). The walk is
// `ltt certify --sequential`'s SequentialRun, and the files written when the stop rule fires
// are what certify --sequential writes (sequential_result, write_outputs) from the labels
// written beside them: DIR/labels.csv, DIR/certificate.json and, for a dataset, the selection.
// A session that is resumed replays its journal through the same walk.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include <curation/sequential_options.hpp>

#include <certification/pool_inputs.hpp>
#include <certification/selection_output.hpp>
#include <certification/sequential_certification.hpp>

#include "episode_view.hpp"
#include "journal.hpp"
#include "session.hpp"

namespace ltt::label {


class BudgetSession final : public Session {
 public:
  // `in` names the files as `ltt certify --sequential --labels DIR/labels.csv` would be given
  // them (labels, certificate, selection in DIR); `view` is null for a pool file.
  BudgetSession(const certification::PoolInputs& inputs, certification::Inputs in,
                certification::SequentialRequest request, const EpisodeView* view,
                Journal& journal)
      : inputs_(inputs), in_(std::move(in)), request_(std::move(request)), view_(view),
        journal_(journal) {
    restart();
    for (const JournalRecord& record : journal.replayed()) replay(record);
  }

  nlohmann::json state() const override {
    const certification::PoolFile& pool = inputs_.pool;
    const curation::SequentialCertificate c = run_->certificate();
    const std::int64_t depth = c.certified ? *c.certified_step + 1 : 0;
    nlohmann::json s{{"mode", "budget"},
                     {"pool", pool.name},
                     {"pool_size", pool.size()},
                     {"labels_used", c.labels_used},
                     {"unsafe_labels", c.unsafe_labels},
                     {"cap", c.label_cap},
                     {"grid_size", c.grid_size},
                     {"certified_depth", depth},
                     {"selection_size", c.selection_size},
                     {"stopped", run_->stopped()},
                     {"written", written_},
                     {"can_undo", can_undo()}};
    // The fixed walk's p is its exact test with the unbought labels counted unsafe; the
    // anytime walks show the anytime p-value of the step they test.
    s["fixed_walk"] = c.fixed_walk;
    s["depth_upper"] = c.depth_upper ? nlohmann::json(*c.depth_upper) : nlohmann::json(nullptr);
    if (depth < c.grid_size) {
      const curation::SequentialStep& step = c.steps[static_cast<std::size_t>(depth)];
      s["step_tested"] = depth + 1;
      s["p_anytime"] = c.fixed_walk ? step.p : step.p_anytime;
    } else {
      s["step_tested"] = nullptr;
      s["p_anytime"] = nullptr;
    }
    s["reason"] = run_->reason() ? nlohmann::json(curation::stopping_reason_name(*run_->reason()))
                                 : nlohmann::json(nullptr);
    s["verdict"] = verdict(c);
    s["last"] = answers_.empty()
                    ? nlohmann::json(nullptr)
                    : nlohmann::json{{"item", pool.id_of(answers_.back().first)},
                                     {"answer", answers_.back().second ? "over" : "within"}};
    s["item"] = nullptr;
    if (const auto next = run_->next()) {
      nlohmann::json item{{"id", pool.id_of(*next)}, {"number", c.labels_used + 1}};
      if (const data::DsrlPool* dataset = inputs_.dsrl()) {
        const data::Episode& e = dataset->episodes[static_cast<std::size_t>(*next)];
        item["view"] = view_->rows(e.start, e.length);
      } else {
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
    if (!given)
      return refuse(400, "an answer is {\"item\": id, \"answer\": \"over\" or \"within\"}");
    const auto& [item, answer] = *given;
    if (answer != "over" && answer != "within")
      return refuse(400, "answer must be \"over\" or \"within\" (the budget)");
    const auto next = run_->next();
    if (!next) return refuse(409, "the walk has stopped: no episode is asked for");
    const std::string asked = inputs_.pool.id_of(*next);
    if (item != asked)
      return refuse(409, certification::cat("episode ", item, " is not the one asked for (", asked,
                                  " is): answered already, or in another tab"));
    journal_.append({{"answer", answer}, {"item", item}});
    add(answer == "over");
    return {200, {{"recorded", item}}};
  }

  Reply undo(const nlohmann::json& request) override {
    const std::optional<std::string> item = read_item(request);
    if (!item) return refuse(400, "an undo is {\"item\": the id of the last answer}");
    if (answers_.empty() || inputs_.pool.id_of(answers_.back().first) != *item)
      return refuse(409, certification::cat("episode ", *item, " is not the last answer: nothing undone"));
    if (!can_undo()) return refuse(409, undo_after_writing(files_hold_));
    journal_.append({{"undo", *item}});
    take_back();
    return {200, {{"undone", *item}}};
  }

  Reply finish() override {
    if (!run_->stopped())
      return refuse(409, "the stop rule has not fired: keep labeling (the certificate so far is "
                         "valid, but certify --labels would ask for more)");
    const certification::SequentialResult result =
        certification::sequential_result(*run_, inputs_.pool, in_, request_, inputs_.dsrl());
    certification::Inputs written = in_;
    written.record_file = in_.labels_file;  // the labels as --record writes them
    certification::write_outputs(written, inputs_.pool, inputs_.dsrl(), result.selection,
                                 result.json_text, certification::record_csv(*run_, inputs_.pool));
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

  void add(bool unsafe) {
    answers_.emplace_back(*run_->next(), unsafe);
    run_->add(unsafe);
    written_ = false;
  }

  // The walk has no way back: it is replayed from the start on the answers that remain.
  void take_back() {
    answers_.pop_back();
    restart();
    for (const auto& [position, unsafe] : answers_) run_->add(unsafe);
    written_ = false;
  }

  // A record as answer() and undo() append it, read strictly (journal_record.hpp); here the
  // order is checked: an answer for the episode the walk asks for, an undo of the last answer.
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
          throw BadInput(cat(at, "field 'item' = ", in_quotes(record.item), " is not ",
                             in_quotes(inputs_.pool.id_of(*next)),
                             ", the episode the walk of these inputs asks for; give another --out"));
        add(record.word == "over");
        break;
      }
      case RecordKind::undo:
        if (answers_.empty() || inputs_.pool.id_of(answers_.back().first) != record.item)
          throw BadInput(cat(at, "field 'undo' = ", in_quotes(record.item),
                             " is not the last answer's item"));
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

  std::string verdict(const curation::SequentialCertificate& c) const {
    const std::int64_t depth = c.certified ? *c.certified_step + 1 : 0;
    if (!run_->stopped()) return "keep going";
    if (*run_->reason() == curation::StoppingReason::early_refusal) return "refused early";
    if (c.certified) return certification::cat("certified to step ", std::to_string(depth), ": you can stop");
    return certification::cat("stopped (", curation::stopping_reason_name(*run_->reason()),
                    "): nothing certified");
  }

  const certification::PoolInputs& inputs_;
  certification::Inputs in_;
  certification::SequentialRequest request_;
  const EpisodeView* view_;
  Journal& journal_;
  std::optional<certification::SequentialRun> run_;
  std::vector<std::pair<std::int64_t, bool>> answers_;  // pool position, over the budget
  bool written_ = false;
  std::int64_t files_hold_ = 0;  // answers the files written hold (0: none written)
};

}  // namespace ltt::label
