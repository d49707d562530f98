# The package ltt (docs/python.md): every public name of the compiled module ltt._ltt
# (python/src/), re-exported, after a CPU check. ltt._ltt is compiled for x86-64-v3 (AVX2, FMA,
# BMI2) unless built with LTT_NATIVE, and loading it on an older CPU could die of SIGILL before
# any Python code runs; so ltt._cpu, compiled for the baseline x86-64, asks the CPU first and
# the import fails with one line instead. An LTT_NATIVE build targets the machine that built
# it, which nothing here can check: _cpu.build_target says "native" and the check passes. An
# x86-64-v4 build (LTT_ARCH) also needs AVX-512 F, BW, CD, DQ and VL, and checks for them.

from . import _cpu

_missing = _cpu.missing_features()
if _missing:
    raise ImportError(
        f"ltt: this module targets {_cpu.build_target} ({_cpu.build_features}) and this CPU "
        f"lacks {_missing}; "
        "rebuild it on this machine: CMAKE_ARGS=-DLTT_NATIVE=ON pip install --no-build-isolation ."
    )

from ._ltt import *  # noqa: E402,F401,F403  (every public name; __init__.pyi lists them)
from ._ltt import __doc__, __version__  # noqa: E402

# The classes say they are ltt's, as when the compiled module was `ltt` itself: in reprs,
# help() and pickles.
for _cls in (Record, Certificate, CertificationRateModel, SafetyValue):  # noqa: F405
    _cls.__module__ = __name__
del _cls, _missing
