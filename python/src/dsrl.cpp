// Bindings for the reference pipeline's DSRL I/O (reference_pipeline/data/dsrl.hpp,
// docs/dsrl.md): ltt.load_dsrl reads a dataset (HDF5 file or .npy directory) into numpy arrays
// with its episode offsets; ltt.write_dsrl_selection writes chosen episodes to a new file.
// data::DataError is a std::invalid_argument, so a missing file or key arrives as ValueError
// with the message naming the file and key.

#include <data/dataset_files.hpp>
#include <data/dsrl.hpp>

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl/filesystem.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "convert.hpp"

namespace ltt::python {

namespace {

py::dtype numpy_dtype(data::DType t) {
  switch (t) {
    case data::DType::float32:
      return py::dtype::of<float>();
    case data::DType::float64:
      return py::dtype::of<double>();
    case data::DType::int64:
      return py::dtype::of<std::int64_t>();
    case data::DType::uint8:
      return py::dtype::of<std::uint8_t>();
    case data::DType::boolean:
      return py::dtype("bool");
  }
  return py::dtype::of<double>();
}

// The array's bytes handed to numpy without a copy: a 2e6 x 72 observation table is read once.
py::array array_to_numpy(data::Array&& a) {
  auto* bytes = new std::vector<std::byte>(std::move(a.bytes));
  py::capsule owner(bytes, [](void* p) { delete static_cast<std::vector<std::byte>*>(p); });
  std::vector<py::ssize_t> shape(a.shape.begin(), a.shape.end());
  return py::array(numpy_dtype(a.dtype), shape, bytes->data(), owner);
}

}  // namespace

void bind_dsrl(py::module_& m) {
  m.def(
      "load_dsrl",
      [](const std::filesystem::path& path) {
        data::DsrlDataset d;
        data::EpisodeSplit split;
        {
          py::gil_scoped_release release;
          d = data::read_dsrl(path);
          const data::Array& terminals = d.terminals;
          const data::Array& timeouts = d.timeouts;
          split = data::split_episodes(d.rewards.to_double(), d.costs.to_double(),
                                       terminals.values<std::uint8_t>(),
                                       timeouts.values<std::uint8_t>());
        }
        const std::size_t E = split.episodes.size();
        std::vector<std::int64_t> offsets(E + 1, 0);
        std::vector<double> returns(E), costs(E);
        for (std::size_t i = 0; i < E; ++i) {
          const data::Episode& e = split.episodes[i];
          offsets[i + 1] = e.start + e.length;
          returns[i] = e.episodic_return;
          costs[i] = e.episodic_cost;
        }
        py::dict out;
        for (const std::string_view key : data::dsrl_keys)
          out[py::str(std::string(key))] = array_to_numpy(std::move(d[key]));
        out["episode_offsets"] = python::to_numpy(offsets);
        out["episode_returns"] = python::to_numpy(returns);
        out["episode_costs"] = python::to_numpy(costs);
        return out;
      },
      py::arg("path"),
      "load_dsrl(path) -> dict\n\n"
      "A DSRL-layout dataset (an .hdf5/.h5 file, or a directory of .npy files) as numpy "
      "arrays: the seven keys observations, next_observations, actions, rewards, costs, "
      "terminals, timeouts, as DSRL's get_dataset gives them: per-row keys (N,) (an (N, 1) "
      "column squeezed), flags as bool, integer rewards or costs as float64, other arrays "
      "with their stored dtype and shape; plus the episodes by the DSRL/OSRL rule (an episode ends "
      "at each row "
      "where terminals | timeouts; rows after the last end belong to no episode):\n"
      "episode_offsets (int64, episodes + 1 entries: episode i owns rows "
      "[offsets[i], offsets[i+1]); offsets[-1] < rows when a tail was dropped), "
      "episode_returns and episode_costs (float64, compensated sums per episode).\n"
      "Raises ValueError naming the file and key on a missing file or key, a wrong shape or "
      "dtype, a flag other than 0/1, or no complete episode.");

  m.def(
      "write_dsrl_selection",
      [](py::handle src, const std::filesystem::path& dst, py::handle episodes) {
        const std::vector<std::int64_t> e =
            count_vector(episodes, "write_dsrl_selection", "episodes");
        const py::module_ os = py::module_::import("os");
        if (py::isinstance<py::str>(src) || py::hasattr(src, "__fspath__")) {
          const auto path = py::cast<std::filesystem::path>(os.attr("fspath")(src));
          py::gil_scoped_release release;
          data::write_dsrl_selection(path, dst, e);
          return;
        }
        // Several files (names, directories of datasets, glob patterns), as `--dataset` takes.
        std::vector<std::string> named;
        for (const py::handle item : src)
          named.push_back(py::cast<std::string>(os.attr("fspath")(item)));
        py::gil_scoped_release release;
        const data::DsrlPool pool = data::load_dsrl_pool(data::dataset_paths(named));
        data::write_dsrl_selection(pool, dst, e);
      },
      py::arg("src"), py::arg("dst"), py::arg("episodes"),
      "write_dsrl_selection(src, dst, episodes)\n\n"
      "Writes the episodes of the DSRL dataset at src with the given indices (positions among "
      "its episodes, in the order given; a repeated index repeats its rows) to dst, in the "
      "same store (dst ends in .hdf5/.h5 exactly when src does), every key with the file's "
      "own element types, atomically. src may also be a list of files (or directories of "
      "datasets, or glob patterns), read as one dataset as `ltt certify --dataset` reads "
      "several: the indices are positions among all their episodes, file after file, and dst "
      "is a directory holding each file's selection under its name, in its store (files "
      "without a selected episode are left out). Raises ValueError on an empty selection, an "
      "index outside [0, episodes), or files that are not one dataset.");
}

}  // namespace ltt::python
