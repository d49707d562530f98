# The extensions of the package ltt for `pip install .` (pyproject.toml): configures the
# project's CMake with the Python package alone (no tests, benchmarks, examples, program or
# LibTorch), builds the target ltt_python, which brings ltt._cpu with it, and copies both
# where setuptools puts an extension. The flags are CMake's: Release and x86-64-v3 (or
# -march=native with CMAKE_ARGS=-DLTT_NATIVE=ON), so a wheel computes what the program computes,
# bit for bit. CMAKE_ARGS in the environment is passed on to the configure step (e.g.
# -DLTT_WITH_HDF5=OFF). The CMake build lives in build-pip/ in a checkout, where a second
# `pip install .` rebuilds only what changed; from an sdist it is pip's temporary directory.
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

root = pathlib.Path(__file__).resolve().parent
version = re.search(r"project\(ltt VERSION (\S+)", (root / "CMakeLists.txt").read_text()).group(1)


def pybind11_config():
    """pybind11 from pip when importable; else CMake finds Debian's pybind11-dev on its own."""
    try:
        import pybind11
    except ImportError:
        return []
    return [f"-Dpybind11_DIR={pybind11.get_cmake_dir()}"]


class CMakeBuild(build_ext):
    def build_extensions(self):
        build = pathlib.Path(self.build_temp).resolve()
        generator = []
        if shutil.which("ninja") and not (build / "CMakeCache.txt").exists():
            generator = ["-G", "Ninja"]
        subprocess.run(
            ["cmake", "-S", str(root), "-B", str(build), *generator,
             "-DCMAKE_BUILD_TYPE=Release", "-DLTT_BUILD_PYTHON=ON", "-DLTT_BUILD_TESTS=OFF",
             "-DLTT_BUILD_BENCH=OFF", "-DLTT_BUILD_EXAMPLES=OFF", "-DLTT_BUILD_PROGRAM=OFF",
             "-DLTT_INSTALL=OFF", "-DLTT_WITH_TORCH=OFF", f"-DPython3_EXECUTABLE={sys.executable}",
             *pybind11_config(), *shlex.split(os.environ.get("CMAKE_ARGS", ""))],
            check=True)
        jobs = []
        if self.parallel or "CMAKE_BUILD_PARALLEL_LEVEL" not in os.environ:
            jobs = ["--parallel", str(self.parallel if self.parallel else os.cpu_count() or 1)]
        subprocess.run(["cmake", "--build", str(build), "--target", "ltt_python", *jobs],
                       check=True)
        for ext in self.extensions:  # ltt._ltt and ltt._cpu, built into <build>/python/ltt/
            built = build / "python" / pathlib.Path(*ext.name.split("."))
            built = built.with_name(built.name + sysconfig.get_config_var("EXT_SUFFIX"))
            target = pathlib.Path(self.get_ext_fullpath(ext.name))
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(built, target)


setup(
    version=version,
    packages=["ltt"],
    package_dir={"": "python"},
    package_data={"ltt": ["__init__.pyi", "py.typed"]},
    ext_modules=[Extension("ltt._ltt", sources=[]), Extension("ltt._cpu", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    options={"build": {"build_base": "build-pip"}},
)
