#pragma once
// The journal of a labeling session (`ltt label`, docs/label.md, "Nothing lost"): one JSON
// object per line in DIR/journal.jsonl, the first naming the session's inputs and settings
// (journal_header.hpp), then one record per answer, undo or files written
// (journal_record.hpp). Each record is written and fsync'ed before the page is told it is
// accepted, so a crash (kill -9, power) loses at most the answer in flight, and a restart with
// the same DIR replays the records to the same state. An undo is a record of its own: nothing
// is ever deleted from the journal but a record that was never acknowledged.
//
// Faults: a write or fsync that fails (disk full, I/O error) cuts the file back to its last
// complete record (ftruncate) and throws NotRecorded, so the next answer is appended after a
// whole line. A new journal's header is written to a temporary and renamed into place, so it
// is whole or absent. On opening, nothing is removed from the file before its header and
// every complete record have been checked.

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
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

// A record that is not on disk: the session's state is as it was, and the page says so.
class NotRecorded : public std::runtime_error {
 public:
  explicit NotRecorded(const std::string& message) : std::runtime_error(message) {}
};

class Journal {
 public:
  // Opens DIR's journal, or starts one whose first line is `header`. An existing journal must
  // begin with the same header (the same inputs, by content, and settings): its records are
  // replayed, read strictly against `words`, the answers the session's page writes. A last
  // line without its newline that is not JSON is a write cut short by a crash: it was never
  // acknowledged, so it is cut off the file.
  Journal(const std::filesystem::path& file, const nlohmann::json& header,
          std::vector<std::string> words)
      : file_(file), words_(std::move(words)) {
    const std::string header_line = header.dump();
    std::error_code ec;
    const bool existed = std::filesystem::exists(file, ec);
    if (existed)
      replay(header_line);
    else
      create(header_line);
    fd_ = ::open(file.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd_ < 0)
      throw BadInput(cat("--out: cannot open ", in_quotes(file.string()), ": ",
                         std::strerror(errno)));
    struct stat st {};
    if (::fstat(fd_, &st) != 0)
      throw BadInput(cat("--out: cannot stat ", in_quotes(file.string()), ": ",
                         std::strerror(errno)));
    size_ = st.st_size;
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

  // Appends a record and returns once it is on disk; throws NotRecorded, the file cut back to
  // its last complete record, when it cannot be.
  void append(const nlohmann::json& record) {
    if (broken_)
      throw NotRecorded(cat("not recorded: ", file_.string(), " could not be cut back after a "
                            "failed write; stop ltt label (the restart drops the cut line)"));
    const std::string text = record.dump() + "\n";
    std::size_t done = 0;
    while (done < text.size()) {
      const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) cut_back("write");
      done += static_cast<std::size_t>(n);
    }
    if (::fsync(fd_) != 0) cut_back("sync");
    size_ += static_cast<off_t>(text.size());
  }

 private:
  // After a failed write or fsync (errno set): the file back to size_, then NotRecorded. The
  // cut is synced by the next append's fsync if not by this one; a crash before either may
  // bring back a whole record whose answer the page was told was not recorded (never a part).
  [[noreturn]] void cut_back(const char* what) {
    const std::string reason = std::strerror(errno);
    if (::ftruncate(fd_, size_) != 0)
      broken_ = true;
    else
      ::fsync(fd_);
    throw NotRecorded(cat("not recorded: cannot ", what, " ", file_.string(), ": ", reason,
                          broken_ ? "; the journal could not be cut back: stop ltt label"
                                  : "; the journal is as it was: answer again"));
  }

  // A new journal: the header in a temporary, synced, renamed into place, the directory synced.
  void create(const std::string& header_line) {
    const std::filesystem::path temporary = file_.string() + ".new";
    const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    const std::string text = header_line + "\n";
    bool ok = fd >= 0 && ::write(fd, text.data(), text.size()) ==
                             static_cast<ssize_t>(text.size()) && ::fsync(fd) == 0;
    std::string reason = ok ? "" : std::strerror(errno);
    if (fd >= 0) ::close(fd);
    if (ok && ::rename(temporary.c_str(), file_.c_str()) != 0) {
      ok = false;
      reason = std::strerror(errno);
    }
    if (!ok) {
      std::error_code ec;
      std::filesystem::remove(temporary, ec);
      throw BadInput(cat("--out: cannot write ", in_quotes(file_.string()), ": ", reason));
    }
    const int dir = ::open(file_.parent_path().empty() ? "." : file_.parent_path().c_str(),
                           O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir >= 0) {
      ::fsync(dir);
      ::close(dir);
    }
  }

  void replay(const std::string& header_line) {
    std::ifstream in(file_, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    const std::string all = text.str();
    const std::size_t end = all.rfind('\n');
    if (end == std::string::npos)
      throw BadInput(cat(record_place(file_, 1), all.empty() ? "empty" : "the header is cut short",
                         ": no answer is in it; remove the file to begin the session again"));
    const std::size_t complete = end + 1;
    std::istringstream lines(all.substr(0, complete));
    std::string line;
    std::size_t number = 0;
    const auto next = [&] {
      if (!std::getline(lines, line)) return false;
      ++number;
      if (!line.empty() && line.back() == '\r')
        throw BadInput(cat(record_place(file_, number),
                           "ends in CR LF (saved by an editor that writes Windows line ends); "
                           "convert the file back to LF line ends"));
      return true;
    };
    next();
    if (line != header_line) {
      const nlohmann::json stored = nlohmann::json::parse(line, nullptr, false);
      throw BadInput(cat("--out: ", in_quotes(file_.string()), " cannot be resumed: ",
                         header_difference(stored, nlohmann::json::parse(header_line)),
                         "; give another --out"));
    }
    while (next()) {
      const nlohmann::json record = nlohmann::json::parse(line, nullptr, false);
      if (record.is_discarded())
        throw BadInput(cat(record_place(file_, number), "not JSON: ", line.substr(0, 80)));
      replayed_.push_back(read_record(file_, number, record, words_));
    }
    if (complete < all.size()) {
      // A whole record without its newline: the program writes each with its newline in one
      // write, so it was edited, or written by something else; which is meant is not guessed.
      if (!nlohmann::json::parse(all.substr(complete), nullptr, false).is_discarded())
        throw BadInput(cat(record_place(file_, number + 1),
                           "a whole record without its final newline (an edit?): add the newline "
                           "to keep it, or remove the line"));
      std::filesystem::resize_file(file_, complete);
    }
  }

  std::filesystem::path file_;
  std::vector<std::string> words_;
  int fd_ = -1;
  off_t size_ = 0;       // bytes up to the end of the last complete record
  bool broken_ = false;  // a cut back failed: nothing more is appended
  std::vector<JournalRecord> replayed_;
};

}  // namespace ltt::label
