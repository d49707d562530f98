#pragma once
// What the certification stage writes besides its report: the selection in the format
// --selection names (selection_format.hpp), the transition mask, and the certificate text, each
// whole or not at all; outputs this run created are removed again when a later one fails.

#include <cstdint>
#include <filesystem>
#include <ostream>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <data/atomic_output.hpp>
#include <data/dataset_files.hpp>
#include <data/dsrl.hpp>
#include <data/npy.hpp>

#include "dataset_file.hpp"
#include "format.hpp"
#include "gate.hpp"
#include "inputs.hpp"
#include "pool_file.hpp"
#include "selection_format.hpp"
#include "table_reader.hpp"

namespace ltt::certification {

// Rows of the dataset the written episodes hold (repeats counted again).
inline std::int64_t written_rows(const data::DsrlPool& dataset,
                                 const std::vector<std::int64_t>& written) {
  std::int64_t rows = 0;
  for (const std::int64_t e : written) rows += dataset.episodes[static_cast<std::size_t>(e)].length;
  return rows;
}

// Rows in the selected episodes, each counted once: the true entries of the transition mask.
inline std::int64_t written_rows_distinct(const data::DsrlPool& dataset,
                                          const std::vector<std::int64_t>& written) {
  std::vector<std::uint8_t> seen(dataset.episodes.size(), 0);
  std::int64_t rows = 0;
  for (const std::int64_t e : written)
    if (!std::exchange(seen[static_cast<std::size_t>(e)], 1))
      rows += dataset.episodes[static_cast<std::size_t>(e)].length;
  return rows;
}

// A pool's selection: ids one per line, or a .npy by pool row (a mask, or draw counts).
inline void write_pool_selection(const std::string& file, SelectionFormat format,
                                 const PoolFile& pool, const std::vector<std::int64_t>& written) {
  const auto N = static_cast<std::size_t>(pool.size());
  if (format == SelectionFormat::npy_counts) {
    std::vector<std::int64_t> counts(N, 0);
    for (const std::int64_t p : written) ++counts[static_cast<std::size_t>(p)];
    data::write_npy(file, data::make_array(counts));
    return;
  }
  if (format == SelectionFormat::npy_mask) {
    std::vector<std::uint8_t> mask(N, 0);
    for (const std::int64_t p : written) mask[static_cast<std::size_t>(p)] = 1;
    data::write_npy(file, data::make_array(mask));
    return;
  }
  // Each id exactly as the pool spells it (a CSV field, quoted if it must be).
  std::string text;
  text.reserve(written.size() * 8);
  for (const std::int64_t p : written) {
    text += csv_field(pool.id_of(p));
    text.push_back('\n');
  }
  data::write_stream_atomically(file, [&](std::ostream& out) {
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
  });
}

// The selection in the format chosen for it, at `file`.
inline void write_selection(const std::string& file, const Inputs& in, const PoolFile& pool,
                            const data::DsrlPool* dataset, const GateResult& gate) {
  switch (in.selection_format) {
    case SelectionFormat::dsrl_dataset:
      data::write_dsrl_selection(*dataset, file, gate.written);
      break;
    case SelectionFormat::npy_indices:
      data::write_npy(file, data::selection_indices(*dataset, gate.written));
      break;
    case SelectionFormat::ids:
    case SelectionFormat::npy_mask:
    case SelectionFormat::npy_counts:
      write_pool_selection(file, in.selection_format, pool, gate.written);
      break;
  }
}

// Outputs: the selection, the transition mask, then the certificate that describes them.
// Each appears whole or not at all; if one fails, those this run created are removed again
// (an output that replaced an earlier file stays: the old one is gone).
inline void write_outputs(const Inputs& in, const PoolFile& pool, const data::DsrlPool* dataset,
                          const GateResult& gate, const std::string& json_text,
                          const std::string& record_text = {}) {
  std::vector<std::string> created;
  const auto write_output = [&](const std::string& file, const auto& write) {
    std::error_code ec;
    const bool existed = std::filesystem::exists(std::filesystem::symlink_status(file, ec));
    write();
    if (!existed) created.push_back(file);
  };
  try {
    if (in.selection_file) {
      const std::string& file = *in.selection_file;
      write_output(file, [&] { write_selection(file, in, pool, dataset, gate); });
    }
    if (in.transition_mask_file)
      write_output(*in.transition_mask_file, [&] {
        data::write_npy(*in.transition_mask_file,
                        data::selection_transition_mask(*dataset, gate.written));
      });
    if (in.certificate_file)
      write_output(*in.certificate_file, [&] {
        data::write_stream_atomically(*in.certificate_file,
                                      [&](std::ostream& out) { out << json_text; });
      });
    if (in.record_file)
      write_output(*in.record_file, [&] {
        data::write_stream_atomically(*in.record_file,
                                      [&](std::ostream& out) { out << record_text; });
      });
  } catch (...) {
    for (const std::string& file : created) {
      std::error_code ec;
      std::filesystem::remove_all(file, ec);
    }
    throw;
  }
}

}  // namespace ltt::certification
