"""OpenBLAS's kernel for a BLAS-backed peer (PyTorch, numpy), chosen so the peer runs at its best.

OpenBLAS built with DYNAMIC_ARCH (Debian's) picks its kernels from the CPU it recognises at
load time. A CPU newer than the library falls back to an older kernel: Debian's 0.3.21 runs its
generic "Prescott" kernel on recent Intel Xeons (single-thread SGEMM about four times slower
than with the SkylakeX kernel) and its AVX2 "Haswell" kernel on AMD EPYCs with AVX-512. The
environment variable OPENBLAS_CORETYPE overrides the pick, and must be set before the library
loads.

candidates() lists the kernels worth trying: the library's own pick and each kernel family the
CPU's flags allow. choose() times a probe of the coming workload (one-thread SGEMM by default)
under each, each in a fresh process, sets OPENBLAS_CORETYPE to the fastest (or to a kernel the
caller names) and says what it did; loaded_corename() names the kernel that actually ran
(openblas_get_corename), for the benchmark's report. A peer that times several workloads can
instead run once per candidate and keep each workload's best (learning_torch.py does).
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

SGEMM_PROBE = r"""
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
print(json.dumps({"corename": lib.openblas_get_corename().decode(), "rate": sorted(rates)[1]}))
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


def probe(coretype=None, code=SGEMM_PROBE) -> dict:
    """Runs `code` (which prints one JSON object with "corename" and "rate") in a fresh process
    with OPENBLAS_CORETYPE=coretype (None: the library's own pick), one thread; {} if it could
    not run."""
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    env.pop("OPENBLAS_CORETYPE", None)
    if coretype:
        env["OPENBLAS_CORETYPE"] = coretype
    try:
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                             text=True, timeout=120, check=True).stdout
        return json.loads(out)
    except (OSError, subprocess.SubprocessError, ValueError):
        return {}


def candidates(also=None) -> list:
    """The OPENBLAS_CORETYPE values worth trying on this CPU: None (the library's own pick), each
    kernel family the CPU's flags allow, and `also` (the environment's) if it is another."""
    flags = cpu_flags()
    names = [None] + [name for name, needs in CANDIDATES if needs <= flags]
    if also and also not in names:
        names.append(also)
    return names


def label(coretype) -> str:
    return coretype or "(library's own)"


def choose(forced=None, code=SGEMM_PROBE) -> dict:
    """Sets OPENBLAS_CORETYPE for this process before OpenBLAS loads (call it before importing
    torch or numpy): `forced` if given, else the candidate whose `code` (a probe of the workload
    to come; one-thread SGEMM by default) runs fastest, whatever the environment held (a
    machine's environment may pin a slower kernel; it is one of the candidates). The best kernel
    depends on the shapes: on a Zen 4, SkylakeX doubles a square SGEMM's rate over Haswell and
    halves a 65536 x 72 by 72 x 256 one's. Returns what was decided, for the report."""
    preset = os.environ.pop("OPENBLAS_CORETYPE", None)
    decided = {"environment_had": preset}
    if forced:
        os.environ["OPENBLAS_CORETYPE"] = forced
        decided.update(openblas_coretype=forced, chosen_by="--openblas-coretype")
        return decided
    probes = {label(c): probe(c, code) for c in candidates(also=preset)}
    timed = {k: v for k, v in probes.items() if v.get("rate")}
    best = max(timed, key=lambda k: timed[k]["rate"]) if timed else label(None)
    if best != label(None):
        os.environ["OPENBLAS_CORETYPE"] = best
    decided.update(openblas_coretype=best, chosen_by="the fastest probe of the workload",
                   probes={k: {"corename": v.get("corename"), "rate": v.get("rate")}
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
