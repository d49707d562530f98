# The extension for `pip install ./python` (pyproject.toml): the sources and headers CMake
# uses, compiled as C++20. The version is the one in the root CMakeLists.txt.
import pathlib
import re

from setuptools import Extension, setup

here = pathlib.Path(__file__).resolve().parent
root = here.parent
version = re.search(r"project\(ltt VERSION (\S+)", (root / "CMakeLists.txt").read_text()).group(1)

include_dirs = [str(root / "include")]
try:  # pybind11 from pip; Debian's pybind11-dev puts the headers on the default path instead
    import pybind11
    include_dirs.append(pybind11.get_include())
except ImportError:
    pass

setup(
    version=version,
    ext_modules=[
        Extension(
            "ltt",
            sources=[str(p.relative_to(here)) for p in sorted((here / "src").glob("*.cpp"))],
            include_dirs=include_dirs,
            define_macros=[("LTT_VERSION", f'"{version}"')],
            extra_compile_args=["-std=c++20", "-fvisibility=hidden", "-O2"],
            language="c++",
        )
    ],
)
