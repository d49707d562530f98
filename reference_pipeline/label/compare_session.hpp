#pragma once
// `ltt label compare`: segment comparisons ("which of these two clips is safer?") for the
// safety value (paper, section 4.1). The segments are the pairs `ltt score` synthesizes on the
// same file with the same --seed, --pairs and --segment (curation::sample_preference_pairs
// with the seed learning::safety_value_seeds gives it), shown without the sampler's label and
// each pair's sides in a seeded random order, so neither the cost nor the side gives the
// answer away. DIR/pairs.csv holds the decided pairs in the format `ltt score --pairs-file`
// reads; "cannot tell" is kept in the journal and left out of the file (the format has no tie).

#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include <curation/preference_pairs.hpp>

#include <data/atomic_output.hpp>
#include <data/dsrl.hpp>

#include <certification/output_directory.hpp>
#include <certification/table_reader.hpp>

#include "episode_view.hpp"
#include "journal.hpp"
#include "session.hpp"

namespace ltt::label {

// One pair as the page shows it: side A and side B, each a segment of H rows.
struct ShownPair {
  curation::Segment a, b;
};

// The sampler's pairs with each pair's sides swapped by a seeded coin.
inline std::vector<ShownPair> shown_pairs(const curation::PreferencePairs& drawn,
                                          std::uint64_t seed) {
  std::mt19937_64 coin(seed);
  std::vector<ShownPair> pairs;
  for (const curation::PreferencePair& p : drawn.pairs) {
    if (coin() & 1)
      pairs.push_back({p.second, p.first});
    else
      pairs.push_back({p.first, p.second});
  }
  return pairs;
}

class CompareSession final : public Session {
 public:
  CompareSession(const data::DsrlPool& dataset, std::vector<ShownPair> pairs, std::int64_t H,
                 const EpisodeView& view, std::filesystem::path out, Journal& journal)
      : dataset_(dataset), pairs_(std::move(pairs)), H_(H), view_(view), out_(std::move(out)),
        journal_(journal) {
    // Each record as answer() and undo() append it, read strictly (journal_record.hpp); here
    // the order is checked: an answer for the pair asked for, an undo of the last answer.
    using certification::BadInput;
    using certification::cat;
    for (const JournalRecord& record : journal.replayed()) {
      const std::string at = journal.place(record);
      switch (record.kind) {
        case RecordKind::answer:
          if (done() || record.item != item_id(answers_.size()))
            throw BadInput(cat(at, "field 'item' = ", certification::in_quotes(record.item),
                               " is not the pair asked for (",
                               done() ? "none: every pair is judged" : item_id(answers_.size()),
                               "); give another --out"));
          answers_.push_back(record.word);
          break;
        case RecordKind::undo:
          if (answers_.empty() || record.item != item_id(answers_.size() - 1))
            throw BadInput(cat(at, "field 'undo' = ", certification::in_quotes(record.item),
                               " is not the last answer's item"));
          if (!can_undo()) throw BadInput(cat(at, "an undo after ", undo_after_writing(files_hold_)));
          answers_.pop_back();
          break;
        case RecordKind::written:
          if (record.written != answered())
            throw BadInput(cat(at, "field 'written' = ", std::to_string(record.written), " after ",
                               std::to_string(answered()), " answers"));
          written_ = true;
          files_hold_ = record.written;
          break;
      }
    }
  }

  nlohmann::json state() const override {
    std::int64_t a = 0, b = 0, tie = 0;
    for (const std::string& x : answers_) (x == "a" ? a : x == "b" ? b : tie) += 1;
    nlohmann::json s{{"mode", "compare"},
                     {"dataset", dataset_.file},
                     {"pairs", static_cast<std::int64_t>(pairs_.size())},
                     {"segment", H_},
                     {"answered", answered()},
                     {"a_safer", a},
                     {"b_safer", b},
                     {"cannot_tell", tie},
                     {"stopped", done()},
                     {"written", written_},
                     {"can_undo", can_undo()}};
    s["verdict"] = done() ? "every pair judged: write pairs.csv"
                          : certification::cat(std::to_string(pairs_.size() - answers_.size()),
                                     " pairs to go");
    s["last"] = answers_.empty() ? nlohmann::json(nullptr)
                                 : nlohmann::json{{"item", item_id(answers_.size() - 1)},
                                                  {"answer", answers_.back()}};
    s["item"] = nullptr;
    if (!done()) {
      const ShownPair& p = pairs_[answers_.size()];
      s["item"] = {{"id", item_id(answers_.size())},
                   {"number", answered() + 1},
                   {"a", side(p.a)},
                   {"b", side(p.b)}};
    }
    return s;
  }

  Reply answer(const nlohmann::json& request) override {
    const std::optional<Answer> given = read_answer(request);
    if (!given)
      return refuse(400, "an answer is {\"item\": id, \"answer\": \"a\", \"b\" or \"tie\"}");
    const auto& [item, answer] = *given;
    if (answer != "a" && answer != "b" && answer != "tie")
      return refuse(400, "answer must be \"a\", \"b\" or \"tie\"");
    if (done()) return refuse(409, "every pair is judged: nothing is asked for");
    if (item != item_id(answers_.size()))
      return refuse(409, certification::cat("pair ", item, " is not the one asked for (",
                                  item_id(answers_.size()),
                                  " is): answered already, or in another tab"));
    journal_.append({{"answer", answer}, {"item", item}});
    answers_.push_back(answer);
    written_ = false;
    return {200, {{"recorded", item}}};
  }

  Reply undo(const nlohmann::json& request) override {
    const std::optional<std::string> item = read_item(request);
    if (!item) return refuse(400, "an undo is {\"item\": the id of the last answer}");
    if (answers_.empty() || *item != item_id(answers_.size() - 1))
      return refuse(409, "that pair is not the last answer: nothing undone");
    if (!can_undo()) return refuse(409, undo_after_writing(files_hold_));
    journal_.append({{"undo", *item}});
    answers_.pop_back();
    written_ = false;
    return {200, {{"undone", *item}}};
  }

  Reply finish() override {
    std::string text = "episode_a,start_a,episode_b,start_b,preferred\n";
    std::int64_t decided = 0;
    for (std::size_t i = 0; i < answers_.size(); ++i) {
      if (answers_[i] == "tie") continue;
      const ShownPair& p = pairs_[i];
      text += certification::cat(std::to_string(p.a.trajectory), ",", std::to_string(p.a.offset), ",",
                       std::to_string(p.b.trajectory), ",", std::to_string(p.b.offset), ",",
                       answers_[i], "\n");
      ++decided;
    }
    if (decided == 0)
      return refuse(409, "no pair is decided yet (A or B safer): nothing to write");
    certification::write_output_directory(out_, {{"pairs.csv", [&](const std::filesystem::path& file) {
                                          data::write_stream_atomically(
                                              file, [&](std::ostream& o) { o << text; });
                                        }}});
    journal_.append({{"written", answered()}});
    written_ = true;
    files_hold_ = answered();
    return {200, {{"written", {(out_ / "pairs.csv").string()}}, {"pairs", decided}}};
  }

  std::vector<std::string> media_names() const override {
    if (done()) return {};
    const ShownPair& p = pairs_[answers_.size()];
    return {segment_name(p.a), segment_name(p.b)};
  }

 private:
  static std::string item_id(std::size_t index) { return std::to_string(index + 1); }
  static std::string segment_name(const curation::Segment& s) {
    return certification::cat(std::to_string(s.trajectory), "_", std::to_string(s.offset));
  }
  std::int64_t answered() const { return static_cast<std::int64_t>(answers_.size()); }
  bool done() const { return answers_.size() == pairs_.size(); }
  bool can_undo() const { return answered() > files_hold_; }

  nlohmann::json side(const curation::Segment& s) const {
    const data::Episode& e = dataset_.episodes[static_cast<std::size_t>(s.trajectory)];
    return {{"episode", s.trajectory}, {"start", s.offset}, {"view", view_.rows(e.start + s.offset, H_)}};
  }

  const data::DsrlPool& dataset_;
  std::vector<ShownPair> pairs_;
  std::int64_t H_;
  const EpisodeView& view_;
  std::filesystem::path out_;
  Journal& journal_;
  std::vector<std::string> answers_;  // "a", "b" or "tie", pair by pair
  bool written_ = false;
  std::int64_t files_hold_ = 0;  // answers the pairs.csv written holds (0: none written)
};

}  // namespace ltt::label
