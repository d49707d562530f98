// The HDF5 store of dsrl.hpp in a build without HDF5 (LTT_WITH_HDF5=OFF): dsrl.cpp refuses
// HDF5 paths before it gets here, so these only keep the link whole.

#include "dsrl_store.hpp"
#include "error.hpp"

namespace ltt::data::detail {

namespace {
[[noreturn]] void no_hdf5(const std::filesystem::path& path) {
  fail(path.string(), "this build of ltt has no HDF5 support (LTT_WITH_HDF5 is OFF)");
}
}  // namespace

std::unique_ptr<DsrlSource> open_hdf5(const std::filesystem::path& path) { no_hdf5(path); }
void write_hdf5(const std::filesystem::path& path, const DsrlDataset&) { no_hdf5(path); }
void write_hdf5_selection(const std::filesystem::path& in, const std::filesystem::path&,
                          std::int64_t, const std::vector<RowRange>&) {
  no_hdf5(in);
}

}  // namespace ltt::data::detail
