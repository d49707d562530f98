// Progress lines on stderr (progress.hpp).

#include "learning/progress.hpp"

#include <unistd.h>

#include <cstdio>
#include <utility>

namespace ltt::learning {

ProgressReporter::ProgressReporter(Progress mode, std::string task, std::string unit,
                                   std::int64_t members, std::int64_t epochs)
    : task_(std::move(task)), unit_(std::move(unit)), members_(members), epochs_(epochs) {
  const bool terminal = isatty(fileno(stderr)) == 1;
  enabled_ = mode == Progress::always || (mode == Progress::automatic && terminal);
  in_place_ = enabled_ && terminal;
  start_ = std::chrono::steady_clock::now();
}

ProgressReporter::~ProgressReporter() {
  if (line_open_) std::fputc('\n', stderr);
}

void ProgressReporter::epoch_done(std::int64_t member, std::int64_t epoch, double loss,
                                  double items_per_second) {
  if (!enabled_) return;
  const std::lock_guard lock(mutex_);
  const auto now = std::chrono::steady_clock::now();
  ++done_;
  const bool last = epoch + 1 == epochs_;
  if (in_place_ && !last && now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  char line[256];
  const std::string who =
      members_ > 1 ? " member " + std::to_string(member + 1) + "/" + std::to_string(members_)
                   : std::string();
  // ETA from the mean time per member-epoch so far (members on several threads overlap).
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double eta =
      elapsed / static_cast<double>(done_) * static_cast<double>(members_ * epochs_ - done_);
  std::snprintf(line, sizeof line, "%s%s: epoch %lld/%lld loss %.6g %.3g %s/s ETA %.0f s",
                task_.c_str(), who.c_str(), static_cast<long long>(epoch + 1),
                static_cast<long long>(epochs_), loss, items_per_second, unit_.c_str(), eta);
  if (in_place_) {
    std::fprintf(stderr, "\r%s\033[K", line);  // rewrite the line, clear what is left of it
    line_open_ = true;
    if (last) {  // a finished member keeps its last line
      std::fputc('\n', stderr);
      line_open_ = false;
    }
  } else {
    std::fprintf(stderr, "%s\n", line);
  }
  std::fflush(stderr);
}

}  // namespace ltt::learning
