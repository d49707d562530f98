#pragma once
// What a certification run reads and writes, as `ltt certify`, `ltt curate` and `ltt label
// budget` ask for it (their flags set it: cli/certification_flags.hpp):
//
//   Inputs                   the files read and written, and the settings of the stage
//   read_dataset_names       the files a dataset's names expand to (files, directories, globs)
//   choose_selection_format  what the selection is written as, from its name and the store
//   input_files, check_outputs  each output against the rule of output_paths.hpp (no input, no
//                            other output, no device, FIFO or link): before any work

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <curation/score_aggregation.hpp>

#include <data/dsrl.hpp>

#include "dataset_file.hpp"
#include "gate.hpp"
#include "output_paths.hpp"
#include "selection_format.hpp"

namespace ltt::certification {

namespace cur = ltt::curation;

// What the flags ask for: the files read and written, and the settings of the stage.
struct Inputs {
  std::optional<std::string> pool_file;
  bool pool_npy = false;
  std::optional<std::string> dataset_file;  // as named: one path, or the names given, joined
  std::vector<std::filesystem::path>
      dataset_files;  // every file of the dataset (dataset_files.hpp)
  data::DsrlStore dataset_store = data::DsrlStore::hdf5;  // of the first file
  std::optional<std::string> scores_file;
  std::optional<std::string> state_values;
  cur::Aggregator aggregator;
  std::string aggregation_name;
  std::optional<std::string> labels_file;
  std::optional<std::int64_t> draw;
  std::optional<double> budget;
  std::int64_t seed = 0;
  Gate gate = Gate::none;
  double kappa = 2.0;
  bool override_gate = false;
  std::optional<std::string> certificate_file, selection_file, transition_mask_file;
  std::optional<std::string> record_file;  // --sequential: every label, --labels' and typed
  SelectionFormat selection_format = SelectionFormat::ids;
};

// The files --dataset names (files, directories, glob patterns), expanded into `in`.
inline void read_dataset_names(const DatasetNames& names, Inputs& in) {
  in.dataset_files = names.files;
  in.dataset_file = names.shown;
  in.dataset_store = data::store_for(names.files.front());
}
inline void read_dataset_names(const std::vector<std::string>& named, Inputs& in) {
  read_dataset_names(dataset_names(named), in);
}

// What --selection writes, from its name and the dataset's store (in.selection_file set).
inline void choose_selection_format(Inputs& in) {
  in.selection_format = selection_format(*in.selection_file, in.dataset_file, in.dataset_store,
                                         in.gate, in.dataset_files.size());
}

// What --selection writes: a file, a directory of .npy files (a dataset in that store), or for
// several files a directory of datasets.
inline Destination selection_destination(const Inputs& in) {
  if (in.selection_format != SelectionFormat::dsrl_dataset) return Destination::file;
  if (in.dataset_files.size() > 1) return Destination::datasets;
  return in.dataset_store == data::DsrlStore::npy_directory ? Destination::directory
                                                            : Destination::file;
}

// The files `ltt certify` reads, by flag.
inline NamedPaths input_files(const Inputs& in) {
  NamedPaths inputs;
  const std::pair<std::string_view, const std::optional<std::string>*> named[] = {
      {"pool", &in.pool_file},
      {"scores", &in.scores_file},
      {"state-values", &in.state_values},
      {"labels", &in.labels_file}};
  for (const auto& [flag, file] : named)
    if (*file) inputs.emplace_back(flag, **file);
  for (const std::filesystem::path& file : in.dataset_files) inputs.emplace_back("dataset", file);
  return inputs;
}

// The outputs set in `in`, each checked by output_paths.hpp's rule against `inputs`, against
// `outputs` (files the run writes elsewhere) and against each other; `created_first` is a
// directory the run creates before writing them (check_output).
inline void check_outputs(Inputs& in, const NamedPaths& inputs, NamedPaths outputs = {},
                          const std::filesystem::path& created_first = {}) {
  if (in.selection_file) choose_selection_format(in);
  const std::pair<std::string_view, const std::optional<std::string>*> named[] = {
      {"selection", &in.selection_file},
      {"transition-mask", &in.transition_mask_file},
      {"certificate", &in.certificate_file},
      {"record", &in.record_file}};
  for (const auto& [flag, file] : named) {
    if (!*file) continue;
    check_output(flag, **file, flag == "selection" ? selection_destination(in) : Destination::file,
                 inputs, outputs, created_first);
    outputs.emplace_back(flag, **file);
  }
}

}  // namespace ltt::certification
