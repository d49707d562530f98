#pragma once
// Progress of long training on stderr: epoch, loss and throughput. By default (automatic) it
// shows only when stderr is a terminal, as one line rewritten in place at most ten times a
// second; Progress::quiet (the command line's --quiet) silences it, and Progress::always
// writes one plain line per epoch even into a file or pipe (logs, tests).

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

namespace ltt::learning {

enum class Progress { automatic, quiet, always };

class ProgressReporter {
 public:
  // task: what is trained ("value ensemble"); unit: what the throughput counts ("states")
  ProgressReporter(Progress mode, std::string task, std::string unit, std::int64_t members,
                   std::int64_t epochs);
  ~ProgressReporter();
  ProgressReporter(const ProgressReporter&) = delete;
  ProgressReporter& operator=(const ProgressReporter&) = delete;

  bool enabled() const { return enabled_; }
  // member in [0, members), epoch in [0, epochs); safe to call from several threads
  void epoch_done(std::int64_t member, std::int64_t epoch, double loss, double items_per_second);

 private:
  bool enabled_ = false;
  bool in_place_ = false;
  bool line_open_ = false;
  std::string task_, unit_;
  std::int64_t members_, epochs_;
  std::chrono::steady_clock::time_point last_{}, start_{};
  std::int64_t done_ = 0;  // member-epochs reported, for the ETA
  std::mutex mutex_;
};

}  // namespace ltt::learning
