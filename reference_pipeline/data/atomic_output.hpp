#pragma once
// Output appears whole or not at all. The writer fills a temporary file (or directory) next to
// the destination, so the final rename never crosses a file system; the data is flushed to
// disk, then renamed over the destination, which POSIX makes atomic for a file. If the writer
// throws, or any step fails, the temporary is removed and the destination is left as it was.
// Failures throw DataError naming the destination.
//
// What a writer may replace: nothing but a regular file. A destination that is a symbolic link,
// a device, a FIFO or a socket (or, for a file, a directory) is refused before the writer runs
// and checked again just before the rename, so /dev/null named as an output stays /dev/null and
// a link is never replaced by a file. A link in a directory component of the path is followed
// as usual: only the last component is the destination. check_file_destination and
// check_directory_destination state the rule; callers that want to refuse before any work
// call them first (the `ltt` program does, reference_pipeline/certification/output_paths.hpp).
//
//   write_file_atomically("selection.hdf5", [&](const std::filesystem::path& temporary) {
//     ... create and fill `temporary` by name (it exists, empty) ...
//   });

#include <filesystem>
#include <functional>
#include <ostream>

namespace ltt::data {

// Throws DataError naming `path` unless write_file_atomically may write there: a name that does
// not exist yet, or a regular file that is not a symbolic link. Whether the directory holding
// it exists and is writable is the writer's to find out.
void check_file_destination(const std::filesystem::path& path);

// What an existing directory may hold for write_directory_atomically to replace it:
//   npy_files       .npy files, directly or in infos/ and world/ (a dataset stored as .npy files,
//                   with a pool's world geometry)
//   dsrl_datasets   .hdf5, .h5 and .npy files in directories of any depth (a selection from a
//                   dataset of several files, dataset_files.hpp)
enum class DirectoryContents { npy_files, dsrl_datasets };

// The same for write_directory_atomically: a name that does not exist yet, or a directory (not
// a symbolic link to one) that holds only what `contents` allows, which the writer may replace.
void check_directory_destination(const std::filesystem::path& path,
                                 DirectoryContents contents = DirectoryContents::npy_files);

void write_file_atomically(
    const std::filesystem::path& path,
    const std::function<void(const std::filesystem::path& temporary)>& write);

// The same for a writer that fills a stream (a text file, .npy bytes): the stream is opened on
// the temporary here and checked for errors once `write` returns.
//
//   write_stream_atomically("certificate.json", [&](std::ostream& out) { out << json; });
void write_stream_atomically(const std::filesystem::path& path,
                             const std::function<void(std::ostream& out)>& write);

// The same for a directory of files (a DSRL dataset stored as .npy files). A directory already
// at `path` is replaced only when every entry in it is a .npy file, so a directory that holds
// anything else is never removed; replacing it takes two renames, and between them `path` is
// briefly absent but never half-written.
void write_directory_atomically(
    const std::filesystem::path& path,
    const std::function<void(const std::filesystem::path& temporary)>& write,
    DirectoryContents contents = DirectoryContents::npy_files);

}  // namespace ltt::data
