// libFuzzer target: the program's CSV tables (reference_pipeline/certification/:
// table_reader.hpp and pool_file.hpp), the readers behind `ltt certify --pool/--labels/--state-values`.
//
// Input: a pool CSV, optionally followed by a NUL byte and a second table, which is read
// against the pool both as labels (id,unsafe) and as state values (id,value). The pool is read
// with and without its score column, as `--pool` and `--state-values` read it. Whatever a
// reader accepts must satisfy what its callers rely on: the pool passes the curation layer's
// own check (curation::validate_pool), labels name distinct pool positions.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <curation/score_aggregation.hpp>
#include <curation/trajectory_pool.hpp>

#include <certification/pool_file.hpp>
#include <certification/table_reader.hpp>

#include "fuzz_support.hpp"

namespace {

using namespace ltt;
using fuzz::accepted;
using fuzz::check;

void check_pool(const certification::PoolFile& f, bool with_score) {
  const auto N = static_cast<std::size_t>(f.size());
  check(N > 0, "an accepted pool is not empty");
  check(f.line.size() == N && f.id_text.size() == N && f.position_by_key.size() == N,
        "one line, one id and one distinct key per trajectory");
  for (std::size_t p = 0; p < N; ++p) {
    check(!f.id_text[p].empty(), "an accepted id is not empty");
    check(f.position_of(f.id_text[p]) == static_cast<std::int64_t>(p),
          "each id, as written, finds its own trajectory");
  }
  if (with_score) {
    check(f.pool.score.size() == N, "one score per trajectory");
    check(fuzz::succeeds([&] { curation::validate_pool(f.pool); }),
          "an accepted pool passes curation::validate_pool");
  } else {
    check(f.pool.score.empty(), "no score read when none is needed");
  }
}

void read_against(const certification::PoolFile& pool, std::string_view table) {
  if (const auto labels = accepted(
          [&] { return certification::read_labels(certification::CsvFile("labels.csv", std::string(table)), pool); })) {
    check(labels->index.size() == labels->unsafe.size() && labels->size() >= 1 &&
              labels->size() <= pool.size(),
          "labels: one bit per position, at least one, at most the pool");
    for (std::size_t i = 0; i < labels->index.size(); ++i) {
      check(labels->index[i] >= 0 && labels->index[i] < pool.size(), "labels: a pool position");
      check(i == 0 || labels->index[i - 1] < labels->index[i], "labels: distinct, ascending");
      check(labels->unsafe[i] <= 1, "labels: unsafe is 0 or 1");
    }
  }
  for (const auto kind : {curation::Aggregation::mean, curation::Aggregation::minimum,
                          curation::Aggregation::percentile}) {
    const curation::Aggregator aggregator{kind, 10.0};
    if (const auto scores = accepted([&] {
          return certification::read_state_scores(certification::CsvFile("states.csv", std::string(table)), pool,
                                        aggregator);
        }))
      check(static_cast<std::int64_t>(scores->size()) == pool.size(),
            "state values: one score per trajectory");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  const std::size_t nul = bytes.find('\0');
  const std::string_view pool_text = bytes.substr(0, nul);

  const auto pool = accepted(
      [&] { return certification::read_pool_csv(certification::CsvFile("pool.csv", std::string(pool_text))); });
  if (pool) check_pool(*pool, true);
  const auto unscored = accepted(
      [&] { return certification::read_pool_csv(certification::CsvFile("pool.csv", std::string(pool_text)), false); });
  if (unscored) check_pool(*unscored, false);
  check(!pool || unscored, "a pool read with scores reads without them");

  if (nul != std::string_view::npos && unscored) read_against(*unscored, bytes.substr(nul + 1));
  return 0;
}
