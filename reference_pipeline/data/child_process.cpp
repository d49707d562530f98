#include "child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "error.hpp"

namespace ltt::data::detail {

namespace {

// Shared between parent and child (one anonymous MAP_SHARED page): how the child ended and the
// step it was on, which the parent reads once the child has exited.
struct Report {
  alignas(std::atomic_ref<std::uint64_t>::required_alignment) std::uint64_t progress;
  char outcome;  // 0: ended without a word (a signal, or a sanitizer's exit); 'o': ok;
                 // 'd': DataError, 'm': bad_alloc, 'x': another exception, with message
  char step[1024];
  char message[3 * 1024 - 16];
};

void copy_text(char* to, std::size_t capacity, std::string_view text) {
  const std::size_t n = std::min(text.size(), capacity - 1);
  std::memcpy(to, text.data(), n);
  to[n] = '\0';
}

[[noreturn]] void child_main(int pipe, [[maybe_unused]] pid_t parent, Report& report,
                             const ChildWork& work) {
#ifdef __linux__
  // A child outlives a parent killed alone (SIGTERM, SIGKILL); this one follows it.
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(1);
#endif
  const int null = ::open("/dev/null", O_RDWR);
  if (null >= 0)
    for (const int fd : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO}) ::dup2(null, fd);
  ChildOutput out(pipe, report.step, sizeof report.step, &report.progress);
  char outcome = 'o';
  try {
    work(out);
  } catch (const DataError& e) {
    outcome = 'd';
    copy_text(report.message, sizeof report.message, e.what());
  } catch (const std::bad_alloc&) {
    outcome = 'm';
  } catch (const std::exception& e) {
    outcome = 'x';
    copy_text(report.message, sizeof report.message, e.what());
  } catch (...) {
    outcome = 'x';
    copy_text(report.message, sizeof report.message, "unknown exception");
  }
  report.outcome = outcome;
  ::_exit(outcome == 'o' ? 0 : 1);
}

// The parent's hold on a running child: on an exception it kills and reaps it.
struct Child {
  pid_t pid = -1;
  int status = 0;
  void wait() {
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    pid = -1;
  }
  ~Child() {
    if (pid > 0) {
      ::kill(pid, SIGKILL);
      wait();
    }
  }
};

struct Descriptor {
  int fd = -1;
  void close() {
    if (fd >= 0) ::close(fd);
    fd = -1;
  }
  ~Descriptor() { close(); }
};

struct SharedReport {
  Report* report = nullptr;
  SharedReport() {
    void* page =
        ::mmap(nullptr, sizeof(Report), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED)
      throw std::runtime_error(cat("cannot map a shared page: ", std::strerror(errno)));
    report = static_cast<Report*>(page);
    std::memset(report, 0, sizeof(Report));
  }
  ~SharedReport() { ::munmap(report, sizeof(Report)); }
  SharedReport(const SharedReport&) = delete;
  SharedReport& operator=(const SharedReport&) = delete;
};

// The parent's receive buffer: its own anonymous mapping, made before the fork and left out of
// the child (MADV_DONTFORK). A buffer allocated after the fork comes from heap pages the child
// shares copy-on-write, so the parent's first write to each page copies it and flushes the TLB
// of every core the process runs on: on a virtual machine that took most of a small file's read
// (0.29 of 0.49 CPU-s for `ltt certify --dataset` on an 11-episode file, measured with perf).
struct ReceiveBuffer {
  static constexpr std::size_t size = std::size_t{1} << 20;
  unsigned char* bytes = nullptr;
  ReceiveBuffer() {
    void* mapped = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapped == MAP_FAILED)
      throw std::runtime_error(cat("cannot map a receive buffer: ", std::strerror(errno)));
    bytes = static_cast<unsigned char*>(mapped);
#ifdef MADV_DONTFORK
    ::madvise(mapped, size, MADV_DONTFORK);  // best effort: without it only slower
#endif
  }
  ~ReceiveBuffer() { ::munmap(bytes, size); }
  ReceiveBuffer(const ReceiveBuffer&) = delete;
  ReceiveBuffer& operator=(const ReceiveBuffer&) = delete;
};

}  // namespace

void ChildOutput::send(const void* bytes, std::size_t n) {
  const auto* p = static_cast<const unsigned char*>(bytes);
  while (n > 0) {
    const ssize_t wrote = ::write(pipe_, p, n);
    if (wrote < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(cat("cannot send to the parent process: ", std::strerror(errno)));
    }
    p += wrote;
    n -= static_cast<std::size_t>(wrote);
    tick();
  }
}

void ChildOutput::step(std::string_view what) {
  copy_text(step_, step_capacity_, what);
  tick();
}

void ChildOutput::tick() { std::atomic_ref(*progress_).fetch_add(1, std::memory_order_relaxed); }

void run_in_child(std::string_view file, std::string_view worker, const ChildWork& work,
                  const ChildReceiver& receive) {
  const SharedReport shared;
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw std::runtime_error(cat("cannot create a pipe: ", std::strerror(errno)));
  Descriptor read_end{fds[0]}, write_end{fds[1]};
#ifdef F_SETPIPE_SZ
  ::fcntl(fds[0], F_SETPIPE_SZ, 1 << 20);  // columns cross in fewer, larger pieces (best effort)
#endif
  const ReceiveBuffer buffer;
  Child child;
  const pid_t parent = ::getpid();
  child.pid = ::fork();
  if (child.pid < 0)
    throw std::runtime_error(
        cat("cannot start a process to read ", file, ": ", std::strerror(errno)));
  if (child.pid == 0) {
    read_end.close();
    child_main(write_end.fd, parent, *shared.report, work);
  }
  write_end.close();

  // Reads what the child sends; once a second without data, looks at its progress counter.
  using Clock = std::chrono::steady_clock;
  Report& report = *shared.report;
  std::uint64_t progress = 0;
  Clock::time_point moved = Clock::now();
  for (;;) {
    pollfd ready{read_end.fd, POLLIN, 0};
    const int polled = ::poll(&ready, 1, 1000);
    if (polled < 0 && errno != EINTR)
      throw std::runtime_error(cat("cannot wait for the process reading ", file));
    if (polled <= 0) {
      const std::uint64_t now = std::atomic_ref(report.progress).load(std::memory_order_relaxed);
      if (now != progress) {
        progress = now;
        moved = Clock::now();
      } else if (Clock::now() - moved > child_stall_limit) {
        ::kill(child.pid, SIGKILL);
        child.wait();
        const std::string_view step = report.step;
        fail(file, cat(worker, " hung (no progress in ", std::to_string(child_stall_limit.count()),
                       " s)", step.empty() ? "" : " ", step));
      }
      continue;
    }
    const ssize_t got = ::read(read_end.fd, buffer.bytes, ReceiveBuffer::size);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) throw std::runtime_error(cat("cannot read from the process reading ", file));
    if (got == 0) break;
    moved = Clock::now();
    receive(std::span<const unsigned char>(buffer.bytes, static_cast<std::size_t>(got)));
  }
  child.wait();

  switch (report.outcome) {
    case 'o':
      if (WIFEXITED(child.status) && WEXITSTATUS(child.status) == 0) return;
      break;
    case 'd':
      throw DataError(report.message);
    case 'm':
      throw std::bad_alloc();
    case 'x':
      throw std::runtime_error(report.message);
    default:
      break;
  }
  const std::string how = WIFSIGNALED(child.status)
                              ? std::string(::strsignal(WTERMSIG(child.status)))
                              : cat("exit status ", std::to_string(WEXITSTATUS(child.status)));
  const std::string_view step = report.step;
  fail(file, cat(worker, " crashed (", how, ")", step.empty() ? "" : " ", step));
}

std::vector<unsigned char> run_in_child(std::string_view file, std::string_view worker,
                                        const ChildWork& work) {
  std::vector<unsigned char> bytes;
  run_in_child(file, worker, work, [&](std::span<const unsigned char> piece) {
    bytes.insert(bytes.end(), piece.begin(), piece.end());
  });
  return bytes;
}

}  // namespace ltt::data::detail
