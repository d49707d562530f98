#pragma once
// What `--selection FILE` writes (docs/cli.md, "ltt certify"), chosen from the file's name, the
// kind of input (a pool or a DSRL dataset, and the dataset's store) and the gate.

#include <optional>
#include <string>
#include <string_view>

#include <data/dsrl.hpp>

#include "bad_input.hpp"
#include "format.hpp"
#include "gate.hpp"

namespace ltt::certification {

enum class SelectionFormat {
  ids,           // a pool's ids, one per line (repeats after --gate resample)
  npy_mask,      // uint8 by pool row
  npy_counts,    // int64 by pool row: how often --gate resample drew each trajectory
  npy_indices,   // --dataset: int64 episode indices (repeats after --gate resample)
  dsrl_dataset,  // --dataset: the selected episodes in the DSRL layout, the dataset's store (of
                 // several files: a directory holding each file's selection in its store)
};

inline std::string_view format_name(SelectionFormat f, data::DsrlStore store,
                                    bool several_files = false) {
  switch (f) {
    case SelectionFormat::ids:
      return "ids";
    case SelectionFormat::npy_mask:
      return "npy-mask-uint8";
    case SelectionFormat::npy_counts:
      return "npy-counts-int64";
    case SelectionFormat::npy_indices:
      return "npy-episode-indices-int64";
    case SelectionFormat::dsrl_dataset:
      return several_files                    ? "dsrl-directory-per-file"
             : store == data::DsrlStore::hdf5 ? "dsrl-hdf5"
                                              : "dsrl-npy-directory";
  }
  return "ids";
}

inline bool names_hdf5(const std::string& file) {
  return data::store_for(file) == data::DsrlStore::hdf5;
}

// The format of the selection `file`: of a pool (no `dataset_file`) ids or a .npy by pool row;
// of a dataset episode indices (.npy) or a dataset in the store of `dataset_file`, or for a
// dataset of several files a directory of datasets, one per file.
inline SelectionFormat selection_format(const std::string& file,
                                        const std::optional<std::string>& dataset_file,
                                        data::DsrlStore store, Gate gate,
                                        std::size_t dataset_files = 1) {
  if (!dataset_file) {
    return !file.ends_with(".npy")  ? SelectionFormat::ids
           : gate == Gate::resample ? SelectionFormat::npy_counts
                                    : SelectionFormat::npy_mask;
  }
  if (file.ends_with(".npy")) return SelectionFormat::npy_indices;
  if (dataset_files > 1) {
    if (names_hdf5(file))
      throw BadInput(cat("--selection: ", in_quotes(file), ": the dataset has ",
                         std::to_string(dataset_files),
                         " files, so its selection is a directory holding each file's selection "
                         "(a name without .hdf5 or .h5) or episode indices (*.npy)"));
    return SelectionFormat::dsrl_dataset;
  }
  if (store == data::DsrlStore::hdf5 && !names_hdf5(file))
    throw BadInput(cat("--selection: ", in_quotes(file), ": the dataset ", in_quotes(*dataset_file),
                       " is HDF5, so its selection is written as HDF5 (name it *.hdf5 or "
                       "*.h5) or as episode indices (*.npy)"));
  if (store == data::DsrlStore::npy_directory && names_hdf5(file))
    throw BadInput(cat("--selection: ", in_quotes(file), ": the dataset ", in_quotes(*dataset_file),
                       " is a directory of .npy files, so its selection is written as one "
                       "too (a name without .hdf5 or .h5) or as episode indices (*.npy)"));
  return SelectionFormat::dsrl_dataset;
}

}  // namespace ltt::certification
