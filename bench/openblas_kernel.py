"""OpenBLAS's kernel for a BLAS-backed peer (PyTorch, numpy), chosen so the peer runs at its best.

OpenBLAS built with DYNAMIC_ARCH (Debian's) picks its kernels from the CPU it recognises at
load time. A CPU newer than the library falls back to an older kernel: Debian's 0.3.21 runs its
generic "Prescott" kernel on recent Intel Xeons (single-thread SGEMM about four times slower
than with the SkylakeX kernel) and its AVX2 "Haswell" kernel on AMD EPYCs with AVX-512. The
environment variable OPENBLAS_CORETYPE overrides the pick, and must be set before the library
loads.

best_coretype() times one-thread SGEMM (numpy float32 matmul, which calls OpenBLAS's sgemm)
under the library's own pick and under each kernel family the CPU's flags allow, each in a fresh
process, and returns the fastest. choose() sets OPENBLAS_CORETYPE to it (or to a kernel the
caller names) and says what it did; loaded_corename() names the kernel that actually ran
(openblas_get_corename), for the benchmark's report.
"""

import ctypes
import json
import os
import subprocess
import sys

# Kernel families the timing may try, with the CPU flags (/proc/cpuinfo) each needs.
CANDIDATES = (
    ("Haswell", {"avx2", "fma"}),
    ("SkylakeX", {"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"}),
)

_PROBE = r"""
import ctypes, json, time
import numpy as np
lib = ctypes.CDLL("libopenblas.so.0")
lib.openblas_get_corename.restype = ctypes.c_char_p
n = 512
a = np.random.default_rng(0).standard_normal((n, n)).astype(np.float32)
b = a.T.copy()
a @ b  # warm-up
rates = []
for _ in range(3):
    calls, t0 = 0, time.process_time()
    while time.process_time() - t0 < 0.2:
        a @ b
        calls += 1
    rates.append(calls * 2 * n**3 / (time.process_time() - t0))
print(json.dumps({"corename": lib.openblas_get_corename().decode(), "gflops": sorted(rates)[1] / 1e9}))
"""


def cpu_flags() -> set:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def probe(coretype=None) -> dict:
    """The kernel OpenBLAS loads under OPENBLAS_CORETYPE=coretype (None: the library's own pick)
    and its one-thread SGEMM rate, in a fresh process; {} if it could not run."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    env.pop("OPENBLAS_CORETYPE", None)
    if coretype:
        env["OPENBLAS_CORETYPE"] = coretype
    try:
        out = subprocess.run([sys.executable, "-c", _PROBE], env=env, capture_output=True,
                             text=True, timeout=60, check=True).stdout
        return json.loads(out)
    except (OSError, subprocess.SubprocessError, ValueError):
        return {}


def best_coretype(also=None) -> tuple:
    """(the fastest kernel's OPENBLAS_CORETYPE value, or None for the library's own pick; the
    probes by name). `also`: one more value to try (the environment's)."""
    flags = cpu_flags()
    probes = {"(library's own)": probe()}
    names = [name for name, needs in CANDIDATES if needs <= flags]
    if also and also not in names:
        names.append(also)
    for name in names:
        probes[name] = probe(name)
    timed = {k: v for k, v in probes.items() if v.get("gflops")}
    if not timed:
        return None, probes
    best = max(timed, key=lambda k: timed[k]["gflops"])
    return (None if best == "(library's own)" else best), probes


def choose(forced=None) -> dict:
    """Sets OPENBLAS_CORETYPE for this process before OpenBLAS loads (call it before importing
    torch or numpy): `forced` if given, else the fastest kernel, whatever the environment held
    (a machine's environment may pin a slower one; it is one of the kernels tried). Returns what
    was decided, for the report."""
    preset = os.environ.pop("OPENBLAS_CORETYPE", None)
    decided = {"environment_had": preset}
    if forced:
        os.environ["OPENBLAS_CORETYPE"] = forced
        decided.update(openblas_coretype=forced, chosen_by="--openblas-coretype")
        return decided
    best, probes = best_coretype(also=preset)
    if best:
        os.environ["OPENBLAS_CORETYPE"] = best
    decided.update(
        openblas_coretype=best or "(library's own)",
        chosen_by="fastest one-thread SGEMM",
        probes={k: {"corename": v.get("corename"), "gflops": v.get("gflops")}
                for k, v in probes.items()})
    return decided


def loaded_corename() -> str:
    """The kernel of the OpenBLAS loaded in this process, or "" if none is."""
    try:
        lib = ctypes.CDLL("libopenblas.so.0", mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
    except OSError:
        return ""
    lib.openblas_get_corename.restype = ctypes.c_char_p
    return lib.openblas_get_corename().decode()
