#pragma once
// The journal of a labeling session (`ltt label`, docs/label.md, "Nothing lost"): one JSON
// object per line in DIR/journal.jsonl, the first naming the session's settings, then one
// record per answer or undo. Each record is written and fsync'ed before the page is told it
// is accepted, so a crash (kill -9, power) loses at most the answer in flight, and a restart
// with the same DIR replays the records to the same state. An undo is a record of its own:
// nothing is ever deleted from the journal.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <certification/bad_input.hpp>
#include <certification/format.hpp>

#include "journal_header.hpp"
#include "journal_record.hpp"

namespace ltt::label {

using certification::BadInput;
using certification::cat;
using certification::in_quotes;

class Journal {
 public:
  // Opens DIR's journal, or starts one whose first line is `header`. An existing journal must
  // begin with the same header (the same inputs and settings): its records are replayed. A
  // last line without its newline is a write cut short by a crash: it was never acknowledged,
  // so it is cut off the file. `words` are the answers the session's page writes; a record is
  // read strictly (journal_record.hpp).
  Journal(const std::filesystem::path& file, const nlohmann::json& header,
          std::vector<std::string> words)
      : file_(file), words_(std::move(words)) {
    const std::string header_line = header.dump();
    std::error_code ec;
    const bool existed = std::filesystem::exists(file, ec);
    if (existed) replay(header_line);
    fd_ = ::open(file.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
    if (fd_ < 0)
      throw BadInput(cat("--out: cannot open ", in_quotes(file.string()), ": ",
                         std::strerror(errno)));
    if (!existed) {
      append_line(header_line);
      sync_directory();
    }
  }
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;
  ~Journal() {
    if (fd_ >= 0) ::close(fd_);
  }

  // The records found when the journal was opened, in order.
  const std::vector<JournalRecord>& replayed() const { return replayed_; }

  // "--out: FILE line N: ", for a session's messages about a record it cannot replay.
  std::string place(const JournalRecord& record) const { return record_place(file_, record.line); }

  // Appends a record and returns once it is on disk.
  void append(const nlohmann::json& record) { append_line(record.dump()); }

 private:
  void replay(const std::string& header_line) {
    std::ifstream in(file_, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    const std::string all = text.str();
    const std::size_t complete = all.rfind('\n') == std::string::npos ? 0 : all.rfind('\n') + 1;
    if (complete < all.size()) std::filesystem::resize_file(file_, complete);
    std::istringstream lines(all.substr(0, complete));
    std::string line;
    if (!std::getline(lines, line) || line != header_line) {
      const nlohmann::json stored = nlohmann::json::parse(line, nullptr, false);
      throw BadInput(cat("--out: ", in_quotes(file_.string()), " cannot be resumed: ",
                         header_difference(stored, nlohmann::json::parse(header_line)),
                         "; give another --out"));
    }
    for (std::size_t number = 2; std::getline(lines, line); ++number) {
      const nlohmann::json record = nlohmann::json::parse(line, nullptr, false);
      if (record.is_discarded())
        throw BadInput(cat(record_place(file_, number), "not JSON: ", line.substr(0, 80)));
      replayed_.push_back(read_record(file_, number, record, words_));
    }
  }

  void append_line(const std::string& line) {
    const std::string text = line + "\n";
    std::size_t done = 0;
    while (done < text.size()) {
      const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw std::runtime_error(cat("cannot write ", file_.string(), ": ",
                                              std::strerror(errno)));
      done += static_cast<std::size_t>(n);
    }
    if (::fsync(fd_) != 0)
      throw std::runtime_error(cat("cannot sync ", file_.string(), ": ", std::strerror(errno)));
  }

  // A new file's name is durable once its directory is synced too.
  void sync_directory() {
    const int dir = ::open(file_.parent_path().empty() ? "." : file_.parent_path().c_str(),
                           O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0) return;
    ::fsync(dir);
    ::close(dir);
  }

  std::filesystem::path file_;
  std::vector<std::string> words_;
  int fd_ = -1;
  std::vector<JournalRecord> replayed_;
};

}  // namespace ltt::label
