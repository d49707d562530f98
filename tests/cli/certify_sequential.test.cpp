// `ltt certify --sequential`: labels read in the order the walk asks for them (the seeded
// permutation `ltt draw --sequential --seed S` prints, read in the stratified order), walked
// one at a time until the stop rule fires; labels it has not asked for wait their turn. Checked
// against the library's walk (curation::sequential_selection on the same pool, labels and seed),
// not against stored outputs; a label file is read in the walk's order whatever its row order; a
// prefix that has not stopped names the next id; the interactive mode fed through a pipe gives the
// file mode's certificate.

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <curation/sequential_selection.hpp>

#include "certify_checks.hpp"
#include "run_program.hpp"

using namespace ltt_cli_test;
namespace cur = ltt::curation;

namespace {

constexpr std::int64_t pool_N = 1000;
constexpr std::int64_t seed = 5;

// Scores N..1 (ids t0 .. t999 from the top); the top 15% hold 2% unsafe, the rest 30%, spread
// evenly, so the first steps certify well before the cap and the deep ones do not.
struct SequentialPool {
  std::string file;
  std::vector<double> score;
  std::vector<std::uint8_t> unsafe;
  std::vector<std::int64_t> order;  // the positions the default (`--stop auto`) asks for
};

const SequentialPool& sequential_pool() {
  static const SequentialPool pool = [] {
    SequentialPool p;
    p.file = (scratch_dir() / "sequential_pool.csv").string();
    const std::int64_t top = 150;
    std::ofstream out(p.file);
    out << "id,score\n";
    for (std::int64_t i = 0; i < pool_N; ++i) {
      const bool in_top = i < top;
      const std::int64_t start = in_top ? 0 : top, count = in_top ? top : pool_N - top;
      const std::int64_t bad = in_top ? 3 : (3 * count) / 10, r = i - start;
      p.score.push_back(static_cast<double>(pool_N - i));
      p.unsafe.push_back((r + 1) * bad / count > r * bad / count ? 1 : 0);
      out << "t" << i << "," << pool_N - i << "\n";
    }
    // the default walk (the fixed walk, `auto`) skips the sample's positions that can no
    // longer change its depth, which depends on the labels: replay the library's walk
    cur::SequentialSelectionOptions o;
    cur::apply_stop_rule("auto", o);
    cur::SequentialWalk walk(p.score, o, seed);
    while (!walk.stopping_reason()) {
      const std::int64_t position = *walk.next_position();
      p.order.push_back(position);
      walk.add_label(position, p.unsafe[static_cast<std::size_t>(position)] != 0);
    }
    return p;
  }();
  return pool;
}

// The first `count` labels of the order (all of them if fewer) as a --labels file; with
// count = pool_N, every trajectory of the pool (the order's first), so any rule's walk finds
// its labels.
std::string label_file(const std::string& name, std::int64_t count) {
  const SequentialPool& p = sequential_pool();
  const std::string file = (scratch_dir() / name).string();
  std::ofstream out(file);
  out << "id,unsafe\n";
  std::vector<std::uint8_t> written(static_cast<std::size_t>(pool_N), 0);
  for (std::int64_t t = 0; t < std::min<std::int64_t>(count, std::ssize(p.order)); ++t) {
    const std::int64_t pos = p.order[static_cast<std::size_t>(t)];
    out << "t" << pos << "," << int{p.unsafe[static_cast<std::size_t>(pos)]} << "\n";
    written[static_cast<std::size_t>(pos)] = 1;
  }
  if (count >= pool_N)
    for (std::int64_t pos = 0; pos < pool_N; ++pos)
      if (written[static_cast<std::size_t>(pos)] == 0)
        out << "t" << pos << "," << int{p.unsafe[static_cast<std::size_t>(pos)]} << "\n";
  return file;
}

// The same labels as lines of 0 and 1, for --interactive.
std::string label_lines(std::int64_t from, std::int64_t to) {
  const SequentialPool& p = sequential_pool();
  std::string text;
  for (std::int64_t t = from; t < std::min<std::int64_t>(to, std::ssize(p.order)); ++t)
    text +=
        p.unsafe[static_cast<std::size_t>(p.order[static_cast<std::size_t>(t)])] ? "1\n" : "0\n";
  return text;
}

std::string certify_sequential_args(const std::string& flags) {
  return "certify --pool '" + sequential_pool().file + "' --sequential --seed " +
         std::to_string(seed) + " " + flags;
}

// `ltt certify ...` with `stdin_text` on its standard input through a pipe.
Result certify_piped(const std::string& stdin_text, const std::string& flags) {
  const std::string input = (scratch_dir() / "stdin.txt").string();
  std::ofstream(input) << stdin_text;
  return shell("( cat '" + input + "' | '" + std::string(LTT_PROGRAM) + "' " +
               certify_sequential_args(flags) + " )");
}

cur::SequentialCertificate library_walk(const std::string& stop, std::int64_t cap) {
  const SequentialPool& p = sequential_pool();
  cur::SequentialSelectionOptions o;
  o.label_cap = cap;
  cur::apply_stop_rule(stop, o);
  return cur::sequential_selection(p.score, p.unsafe, seed, o);
}

// A string as json.dumps writes it (no escapes needed here).
std::string json_string(std::string_view text) {
  std::string quoted = "\"";
  quoted.append(text);
  quoted.push_back('"');
  return quoted;
}

// The certificate's keys of a run's JSON: everything but the inputs.
std::map<std::string, std::string> certificate_keys(const std::string& json_text) {
  auto keys = json_object(json_text);
  keys.erase("inputs");
  return keys;
}

}  // namespace

TEST_CASE("ltt certify --sequential: labels in order reproduce the library's walk") {
  const std::string all = label_file("all.csv", pool_N);
  for (const std::string stop :
       {"auto", "depth", "forecast", "labels", "target:0", "cap", "early-refusal", "stall:20"}) {
    CAPTURE(stop);
    const cur::SequentialCertificate want = library_walk(stop, 200);
    const std::string cert_file = (scratch_dir() / "seq_cert.json").string();
    const std::string sel_file = (scratch_dir() / "seq_sel.txt").string();
    std::filesystem::remove(cert_file);
    std::filesystem::remove(sel_file);
    const Result r = run_ltt(certify_sequential_args("--labels '" + all + "' --stop " + stop +
                                                     " --json --certificate '" + cert_file +
                                                     "' --selection '" + sel_file + "'"));
    REQUIRE_MESSAGE(r.code == 0, r.err);
    const auto json = json_object(r.out);
    CHECK(json.at("labels_used") == std::to_string(want.labels_used));
    CHECK(json.at("unsafe_labels") == std::to_string(want.unsafe_labels));
    CHECK(json.at("stop") == json_string(stop));
    CHECK(json.at("stopped") == "true");
    CHECK(json.at("reason") == json_string(cur::stopping_reason_name(want.reason)));
    CHECK(json.at("next_id") == "null");
    CHECK(json.at("certified") == (want.certified ? "true" : "false"));
    CHECK(json.at("certified_step") ==
          (want.certified_step ? std::to_string(*want.certified_step) : "null"));
    CHECK(json.at("selection_size") == std::to_string(want.selection_size));
    if (want.certified) CHECK(number(json.at("threshold")) == want.threshold);
    const std::vector<double> trace = numbers(json.at("depth_trace"));
    REQUIRE(trace.size() == want.depth_trace.size());
    for (std::size_t t = 0; t < trace.size(); ++t)
      CHECK(trace[t] == static_cast<double>(want.depth_trace[t]));
    const std::string p_values = json_query(
        r.out, "' '.join(repr(s['p']) + ',' + repr(s['p_anytime']) for s in d['steps'])");
    std::istringstream words(p_values);
    for (const cur::SequentialStep& s : want.steps) {
      std::string word;
      REQUIRE(static_cast<bool>(words >> word));
      const auto comma = word.find(',');
      CHECK(number(word.substr(0, comma)) == s.p);
      CHECK(number(word.substr(comma + 1)) == s.p_anytime);
    }
    CHECK(slurp(cert_file) == r.out);
    CHECK(lines(slurp(sel_file)) == want.selection_size);
  }
}

TEST_CASE("ltt certify --sequential: labels are read in the walk's order; the rest wait") {
  const SequentialPool& p = sequential_pool();
  const auto bit = [&](std::int64_t pos) { return int{p.unsafe[static_cast<std::size_t>(pos)]}; };
  // a trajectory the walk does not ask for soon: the last of the order outside it
  std::int64_t later = 0;
  while (std::find(p.order.begin(), p.order.end(), later) != p.order.end()) ++later;
  const std::string file = (scratch_dir() / "shuffled.csv").string();
  {
    std::ofstream out(file);
    out << "id,unsafe\n";
    out << "t" << p.order[2] << "," << bit(p.order[2]) << "\n";  // rows in any order
    out << "t" << later << "," << bit(later) << "\n";            // not asked for
    out << "t" << p.order[0] << "," << bit(p.order[0]) << "\n";
    out << "t" << p.order[1] << "," << bit(p.order[1]) << "\n";
  }
  const Result r = run_ltt(certify_sequential_args("--labels '" + file + "' --stop depth --json"));
  REQUIRE_MESSAGE(r.code == 0, r.err);
  const auto json = json_object(r.out);
  CHECK(json.at("labels_used") == "3");
  CHECK(json.at("unused_labels") == "1");
  CHECK(json.at("next_id") == json_string("t" + std::to_string(p.order[3])));
  const Result text = run_ltt(certify_sequential_args("--labels '" + file + "' --stop depth"));
  CHECK(text.out.find("not stopped: label t" + std::to_string(p.order[3]) + " next (label 4") !=
        std::string::npos);
  CHECK(text.out.find("1 labels of --labels not used yet") != std::string::npos);

  // refused with the line: an id twice, an id not in the pool (exit 2, nothing written)
  const std::string cert_file = (scratch_dir() / "refused_cert.json").string();
  std::filesystem::remove(cert_file);
  for (const auto& [name, rows, message] :
       {std::tuple<std::string, std::string, std::string>{
            "twice.csv", "t1,0\nt1,0\n", "twice.csv:3: id t1 is labeled twice (also on line 2)"},
        {"stranger.csv", "t1,0\nq9,1\n", "stranger.csv:3: "}}) {
    const std::string path = (scratch_dir() / name).string();
    std::ofstream(path) << "id,unsafe\n" << rows;
    const Result bad = run_ltt(
        certify_sequential_args("--labels '" + path + "' --certificate '" + cert_file + "'"));
    CHECK(bad.code == 2);
    CHECK(lines(bad.err) == 1);
    CHECK_MESSAGE(bad.err.find(message) != std::string::npos, bad.err);
    CHECK(bad.out.empty());
    CHECK_FALSE(std::filesystem::exists(cert_file));
  }
}

TEST_CASE("ltt certify --sequential: a prefix that has not stopped names the next id") {
  const SequentialPool& p = sequential_pool();
  const std::string five = label_file("five.csv", 5);
  const Result r = run_ltt(certify_sequential_args("--labels '" + five + "' --stop depth --json"));
  REQUIRE_MESSAGE(r.code == 0, r.err);
  const auto json = json_object(r.out);
  CHECK(json.at("labels_used") == "5");
  CHECK(json.at("stopped") == "false");
  CHECK(json.at("reason") == "null");
  CHECK(json.at("certified") == "false");
  CHECK(json.at("next_id") == json_string("t" + std::to_string(p.order[5])));
  // the next ten if the depth stays: nothing is certified yet, so the walk's next ten
  const std::string next_ids = json_query(r.out, "' '.join(d['next_ids'])");
  std::string want_ids;
  for (std::size_t t = 5; t < 15; ++t)
    want_ids += (t == 5 ? "t" : " t") + std::to_string(p.order[t]);
  CHECK(next_ids == want_ids);
  const Result text = run_ltt(certify_sequential_args("--labels '" + five + "' --stop depth"));
  REQUIRE(text.code == 0);
  CHECK(text.out.find("not stopped: label t" + std::to_string(p.order[5]) + " next (label 6") !=
        std::string::npos);

  // Nothing certified yet: the uncertified fallback, as the library's walk gives it after the
  // same five labels, with --min-selection as its floor; the selection file holds it.
  cur::SequentialSelectionOptions o;
  cur::apply_stop_rule("depth", o);
  o.minimum_selection = 7;
  cur::SequentialWalk walk(p.score, o, seed);
  for (std::size_t t = 0; t < 5; ++t)
    walk.add_label(p.order[t], p.unsafe[static_cast<std::size_t>(p.order[t])] != 0);
  const cur::SequentialCertificate fallback = walk.certificate();
  REQUIRE(fallback.fallback_record);
  const std::string sel_file = (scratch_dir() / "fallback_selection.csv").string();
  const Result refused = run_ltt(certify_sequential_args("--labels '" + five +
                                                         "' --stop depth --min-selection 7 --json "
                                                         "--selection '" +
                                                         sel_file + "'"));
  REQUIRE_MESSAGE(refused.code == 0, refused.err);
  const auto refused_json = json_object(refused.out);
  CHECK(refused_json.at("fallback") == "true");
  CHECK(refused_json.at("selection_size") == std::to_string(fallback.selection_size));
  CHECK(json_query(refused.out, "d['fallback_record']['count']") ==
        std::to_string(fallback.fallback_record->count));
  CHECK(json_query(refused.out, "d['fallback_record']['unsafe_upper']") ==
        std::to_string(fallback.fallback_record->unsafe_upper));
  CHECK(json_query(refused.out, "d['fallback_record']['minimum_selection']") == "7");
  CHECK(json_query(refused.out, "d['inputs']['min_selection']") == "7");
  CHECK(lines(slurp(sel_file)) == fallback.selection_size);
  const Result refused_text =
      run_ltt(certify_sequential_args("--labels '" + five + "' --stop depth --min-selection 7"));
  REQUIRE(refused_text.code == 0);
  CHECK(refused_text.out.find("uncertified fallback: the top K = " +
                              std::to_string(fallback.fallback_record->count)) !=
        std::string::npos);

  // Labels past the stop are not used: the walk says where it stopped.
  const cur::SequentialCertificate want = library_walk("target:0", 200);
  const Result past = run_ltt(certify_sequential_args(
      "--labels '" + label_file("past.csv", pool_N) + "' --stop target:0"));
  REQUIRE(past.code == 0);
  CHECK(past.out.find("stopped by target_certified after " + std::to_string(want.labels_used) +
                      " labels") != std::string::npos);
}

TEST_CASE("ltt certify --sequential --order uniform: labels from the top of the printed order") {
  const SequentialPool& p = sequential_pool();
  const std::vector<std::int64_t> order = cur::draw_label_order(pool_N, pool_N, seed);
  const std::string file = (scratch_dir() / "uniform.csv").string();
  {
    std::ofstream out(file);
    out << "id,unsafe\n";
    for (const std::int64_t pos : order)
      out << "t" << pos << "," << int{p.unsafe[static_cast<std::size_t>(pos)]} << "\n";
  }
  cur::SequentialSelectionOptions o;
  cur::apply_stop_rule("labels", o);
  o.order = cur::LabelOrder::uniform;
  const cur::SequentialCertificate want = cur::sequential_selection(p.score, p.unsafe, seed, o);
  const Result r = run_ltt(
      certify_sequential_args("--labels '" + file + "' --stop labels --order uniform --json"));
  REQUIRE_MESSAGE(r.code == 0, r.err);
  const auto json = json_object(r.out);
  CHECK(json.at("order") == json_string("uniform"));
  CHECK(json.at("labels_used") == std::to_string(want.labels_used));
  CHECK(json.at("certified_step") ==
        (want.certified_step ? std::to_string(*want.certified_step) : "null"));
  // the same labels serve the stratified order (`--stop labels` without --order) and the
  // default's fixed walk too: the walk reads what it asks for
  const Result stratified =
      run_ltt(certify_sequential_args("--labels '" + file + "' --stop labels --json"));
  REQUIRE(stratified.code == 0);
  CHECK(json_object(stratified.out).at("order") == json_string("stratified"));
  CHECK(json_object(stratified.out).at("labels_used") ==
        std::to_string(library_walk("labels", 200).labels_used));
  const Result fixed_walk = run_ltt(certify_sequential_args("--labels '" + file + "' --json"));
  REQUIRE(fixed_walk.code == 0);
  CHECK(json_object(fixed_walk.out).at("order") == json_string("uniform"));
  CHECK(json_object(fixed_walk.out).at("labels_used") ==
        std::to_string(library_walk("auto", 200).labels_used));
  const Result draw = run_ltt("draw --pool '" + p.file +
                              "' --sequential --stop labels --order uniform --seed " +
                              std::to_string(seed) + " --n 3");
  REQUIRE(draw.code == 0);
  CHECK(draw.out == "t" + std::to_string(order[0]) + "\nt" + std::to_string(order[1]) + "\nt" +
                        std::to_string(order[2]) + "\n");
}

TEST_CASE("ltt certify --sequential --interactive: a pipe gives the file mode's certificate") {
  const cur::SequentialCertificate want = library_walk("auto", 200);
  const std::int64_t used = want.labels_used;
  const Result file_mode =
      run_ltt(certify_sequential_args("--labels '" + label_file("all_i.csv", used) + "' --json"));
  REQUIRE(file_mode.code == 0);
  // Every label on standard input (more than the walk needs: it stops reading at the rule).
  const Result piped = certify_piped(label_lines(0, used + 10), "--interactive --json");
  REQUIRE_MESSAGE(piped.code == 0, piped.err);
  CHECK(certificate_keys(piped.out) == certificate_keys(file_mode.out));
  CHECK(piped.err.find("stopped: " + std::string(cur::stopping_reason_name(want.reason))) !=
        std::string::npos);
  // The first labels from a file, the rest from standard input.
  const Result resumed = certify_piped(
      label_lines(7, used), "--labels '" + label_file("seven.csv", 7) + "' --interactive --json");
  REQUIRE_MESSAGE(resumed.code == 0, resumed.err);
  CHECK(certificate_keys(resumed.out) == certificate_keys(file_mode.out));
  // Input that ends before the rule fires: the prefix's certificate and the next id.
  const Result short_input = certify_piped(label_lines(0, 5), "--interactive --stop depth --json");
  REQUIRE(short_input.code == 0);
  const Result five = run_ltt(
      certify_sequential_args("--labels '" + label_file("five_i.csv", 5) + "' --stop depth --json"));
  CHECK(certificate_keys(short_input.out) == certificate_keys(five.out));
  // The summary of a run stopped with every label used.
  const Result summary = certify_piped(label_lines(0, used), "--interactive");
  REQUIRE(summary.code == 0);
  CHECK(summary.out.find("stopped by " + std::string(cur::stopping_reason_name(want.reason)) +
                         " after " + std::to_string(used) + " labels") != std::string::npos);
  CHECK(summary.out.find("not stopped") == std::string::npos);
  // A line that is not a label, from a pipe: exit 2, nothing printed.
  const Result bad = certify_piped("0\nyes\n", "--interactive");
  CHECK(bad.code == 2);
  CHECK(bad.err.find("standard input line 2: 'yes' is not a label") != std::string::npos);
  CHECK(bad.out.empty());
}

TEST_CASE("ltt certify --sequential --record: typed labels saved for the next run") {
  const SequentialPool& p = sequential_pool();
  const std::string five = label_file("five_r.csv", 5);
  const std::string record = (scratch_dir() / "record.csv").string();
  std::filesystem::remove(record);
  const Result typed = certify_piped(
      label_lines(5, 8),
      "--labels '" + five + "' --interactive --stop depth --record '" + record + "' --json");
  REQUIRE_MESSAGE(typed.code == 0, typed.err);
  std::ostringstream want;
  want << "id,unsafe\n";
  for (std::size_t t = 0; t < 8; ++t)
    want << "t" << p.order[t] << "," << int{p.unsafe[static_cast<std::size_t>(p.order[t])]} << "\n";
  CHECK(slurp(record) == want.str());
  const Result again =
      run_ltt(certify_sequential_args("--labels '" + record + "' --stop depth --json"));
  REQUIRE(again.code == 0);
  CHECK(certificate_keys(again.out) == certificate_keys(typed.out));
  // the record may not replace the labels it was read from
  const Result same =
      run_ltt(certify_sequential_args("--labels '" + record + "' --record '" + record + "'"));
  CHECK(same.code == 2);
  CHECK(same.err.find("--record") != std::string::npos);
}

TEST_CASE("ltt certify --sequential: flags checked before any file is read") {
  const std::string missing = (scratch_dir() / "no_such_labels.csv").string();
  const auto refused = [&](const std::string& args, const std::string& message) {
    CAPTURE(args);
    const Result r = run_ltt(args);
    CHECK(r.code == 2);
    CHECK(lines(r.err) == 1);
    CHECK(r.err.find(message) != std::string::npos);
    CHECK(r.out.empty());
  };
  refused(certify_sequential_args("--labels '" + missing + "' --stop sometimes"),
          "--stop: 'sometimes' is not one of cap, target:J, stall:L, early-refusal, labels, "
          "forecast, depth, auto");
  refused(certify_sequential_args("--labels '" + missing + "' --order stratified"),
          "--order: 'stratified' does not go with --stop auto");
  refused(certify_sequential_args("--labels '" + missing + "' --n 0"), "--n: 0 must be at least 1");
  refused(certify_sequential_args("--labels '" + missing + "' --gate top-half"),
          "--gate does not apply to --sequential");
  refused(certify_sequential_args("--draw 20 --budget 1"), "--draw does not apply to --sequential");
  refused(certify_sequential_args(""), "--sequential needs --labels");
  refused("certify --pool '" + sequential_pool().file + "' --labels '" + missing + "' --stop depth",
          "--stop needs --sequential");
  refused(
      "certify --pool '" + sequential_pool().file + "' --labels '" + missing + "' --interactive",
      "--interactive needs --sequential");
  refused(certify_sequential_args("--labels '" + label_file("cap.csv", 3) + "' --n 1001"),
          "--n: 1001 must not exceed the pool size 1000");
  for (const std::string flag : {"--order uniform", "--record r.csv", "--refusal-rate 0.1"})
    refused("certify --pool '" + sequential_pool().file + "' --labels '" + missing + "' " + flag,
            flag.substr(0, flag.find(' ')) + " needs --sequential");
  refused(certify_sequential_args("--labels '" + missing + "' --order sorted"),
          "--order: 'sorted' is not one of stratified, uniform");
  refused(certify_sequential_args("--labels '" + missing + "' --refusal-rate 2"), "--refusal-rate");
}
