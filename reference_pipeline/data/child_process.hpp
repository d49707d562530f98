#pragma once
// Work that may crash the process, run in a forked child so that a crash costs the caller an
// exception instead of its life. libhdf5 (1.10, as Debian and Ubuntu ship it) trusts parts of
// what a file claims: a corrupted object header makes it copy out of bounds inside H5Oopen,
// before any call could look at what it decoded (docs/dsrl.md, "Corrupted files"). So
// dsrl_hdf5.cpp calls libhdf5 on an input file only inside run_in_child.
//
//   std::vector<double> x(n);
//   run_in_child(file, "corrupted HDF5: libhdf5", [&](ChildOutput& out) {
//     out.step("reading key 'rewards'");      // named in the message if the child dies now
//     ... out.send(block.data(), bytes) ...    // arrives in the parent, in order
//   }, fill(x));                               // the parent's receiver, called per piece
//
// What the parent sees:
//   work returns                 run_in_child returns once the child has exited
//   work throws DataError        a DataError with the same message
//   work throws std::bad_alloc   std::bad_alloc
//   work throws anything else    std::runtime_error with its what()
//   the child dies by a signal   DataError "FILE: WORKER crashed (Segmentation fault) STEP"
//   the child stalls             DataError "FILE: WORKER hung (no progress in 60 s) STEP"
// A child stalls when it neither sends, nor names a step, nor ticks for child_stall_limit:
// libhdf5 can loop forever on a corrupted global heap, and a reader that never returns is no
// better than one that crashes. The parent then kills it (SIGKILL).
// The child's standard input, output and error are /dev/null, so nothing it or a library in
// it prints (HDF5's error stack, glibc's "malloc(): corrupted ..." before an abort) reaches the
// user, and it ends with _exit: no atexit handler and no destructor of the parent's objects
// runs twice. A receiver that throws kills the child and the exception goes on.
//
// fork copies only the calling thread: work must not need a lock another thread of the
// parent may hold (libhdf5's own, when another thread of the process is inside HDF5).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

namespace ltt::data::detail {

// The child's end: bytes for the parent, and the step it is on.
class ChildOutput {
 public:
  ChildOutput(int pipe, char* step, std::size_t step_capacity, std::uint64_t* progress)
      : pipe_(pipe), step_(step), step_capacity_(step_capacity), progress_(progress) {}
  // Sends n bytes to the parent (blocks while the parent has not read the earlier ones).
  void send(const void* bytes, std::size_t n);
  // What the child does now, for the parent's message if the child dies ("opening key 'x'").
  void step(std::string_view what);
  // Progress without a new step (one more block copied).
  void tick();

 private:
  int pipe_;
  char* step_;
  std::size_t step_capacity_;
  std::uint64_t* progress_;
};

// How long a child may go without progress before the parent stops it. The HDF5 readers and
// the selection writer report progress at least once per block of rows (16 MiB), far more
// often than this; tests shorten it.
inline std::chrono::seconds child_stall_limit{60};

using ChildWork = std::function<void(ChildOutput& out)>;
using ChildReceiver = std::function<void(std::span<const unsigned char> bytes)>;

void run_in_child(std::string_view file, std::string_view worker, const ChildWork& work,
                  const ChildReceiver& receive);

// The same, collecting every byte the child sends.
std::vector<unsigned char> run_in_child(std::string_view file, std::string_view worker,
                                        const ChildWork& work);

}  // namespace ltt::data::detail
