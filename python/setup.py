# The extension for `pip install ./python` (pyproject.toml): the sources and headers CMake
# uses, compiled as C++20. The version is the one in the root CMakeLists.txt. Besides the
# module's own sources, the reference pipeline's ltt_learning and ltt_data are compiled in
# (CMake links them as static libraries): Eigen's headers are needed, and HDF5 is used when
# pkg-config finds it (LTT_WITH_HDF5=0 in the environment leaves it out; .npy directories
# are read and written either way).
import os
import pathlib
import re
import shlex
import subprocess

from setuptools import Extension, setup

here = pathlib.Path(__file__).resolve().parent
root = here.parent
version = re.search(r"project\(ltt VERSION (\S+)", (root / "CMakeLists.txt").read_text()).group(1)


def pkg_config(*args):
    try:
        out = subprocess.run(["pkg-config", *args], capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return shlex.split(out.stdout)


include_dirs = [str(root / "include"), str(root / "reference_pipeline")]
try:  # pybind11 from pip; Debian's pybind11-dev puts the headers on the default path instead
    import pybind11
    include_dirs.append(pybind11.get_include())
except ImportError:
    pass
eigen = pkg_config("--cflags-only-I", "eigen3") or ["-I/usr/include/eigen3"]
include_dirs += [flag[2:] for flag in eigen]

hdf5 = None if os.environ.get("LTT_WITH_HDF5", "1") == "0" else pkg_config("--cflags", "--libs", "hdf5")
learning = sorted(p for p in (root / "reference_pipeline" / "learning").glob("*.cpp")
                  if p.name != "torch_backend.cpp")
data = [root / "reference_pipeline" / "data" / name for name in
        ["atomic_output.cpp", "npy.cpp", "dsrl.cpp", "dsrl_npy.cpp",
         "dsrl_hdf5.cpp" if hdf5 else "dsrl_no_hdf5.cpp"]]
sources = sorted((here / "src").glob("*.cpp")) + learning + data

setup(
    version=version,
    ext_modules=[
        Extension(
            "ltt",
            sources=[os.path.relpath(p, here) for p in sources],
            include_dirs=include_dirs + [f[2:] for f in hdf5 or [] if f.startswith("-I")],
            library_dirs=[f[2:] for f in hdf5 or [] if f.startswith("-L")],
            libraries=[f[2:] for f in hdf5 or [] if f.startswith("-l")],
            define_macros=[("LTT_VERSION", f'"{version}"'), ("EIGEN_DONT_PARALLELIZE", None),
                           ("LTT_DATA_WITH_HDF5", "1" if hdf5 else "0")],
            extra_compile_args=["-std=c++20", "-fvisibility=hidden", "-O2"],
            language="c++",
        )
    ],
)
