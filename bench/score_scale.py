#!/usr/bin/env python3
"""`ltt score --model` at scale (docs/scale.md): rows/s and peak RSS on generated DSRL
files of N rows x 72 float32 observations, next to PyTorch inference of the same network (the
paper's value ensemble: 3 members of 72 -> 256 -> 256 -> 1, ReLU) on the same rows.

    /usr/bin/python3 bench/score_scale.py --ltt build/bin/ltt --rows 1000000 10000000

For each N it writes /tmp/ltt-scale/rows-N.hdf5 (unless it exists; --keep leaves it, else it is
removed afterwards): observations in slabs of 2^20 rows, so the generator holds one slab;
next_observations is an HDF5 hard link to observations (the reader checks its shape, never
reads it), so a 5e7-row file is 14 GB, not 29. Episodes of 1000 rows end by timeouts. With
--fresh-normals every slab is drawn anew; by default one slab of normals is drawn and each
slab is that one rotated by its own offset (the speed of scoring does not depend on the
values, and drawing 3.6e9 normals on a shared 2-core machine takes longer than scoring them).

Then, one at a time (nothing else of this script runs alongside):
  ltt      /usr/bin/time ltt score --dataset F --model M --out O --threads T [--no-state-values]:
           wall seconds and the peak resident set (GNU time's maximum RSS, the reader child
           included), rows/s = N / wall; also score.json's states/s of the evaluation alone.
  torch    the same three networks with torch.inference_mode() on torch.set_num_threads(T)
           (one thread per core; OpenBLAS's fastest kernel for the CPU, named in the output), the rows read from the same file with h5py in blocks of 2^18
           rows: rows/s end to end (read + forward + the mean over members) and of the forward
           alone, and the peak RSS of the Python process (resource.getrusage).
The model M is trained once by `ltt score --epochs 1` on the first file (the weights do not
change the speed). Prints one JSON object per measurement.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

import openblas_kernel

# OpenBLAS reads OPENBLAS_CORETYPE when it loads, with numpy: PyTorch's kernel is chosen first,
# the fastest of the candidates on a one-thread probe of this workload (the ensemble's forward
# on 2^16 rows; openblas_kernel.py), or the one --openblas-coretype names.
SCORING_PROBE = r"""
import ctypes, json, time, torch
torch.set_num_threads(1)
lib = ctypes.CDLL("libopenblas.so.0")
lib.openblas_get_corename.restype = ctypes.c_char_p
members = [torch.nn.Sequential(torch.nn.Linear(72, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256),
                               torch.nn.ReLU(), torch.nn.Linear(256, 1)) for _ in range(3)]
x = torch.randn(1 << 16, 72)
with torch.inference_mode():
    sum(m(x) for m in members)
    rates = []
    for _ in range(3):
        calls, t0 = 0, time.process_time()
        while time.process_time() - t0 < 0.3:
            sum(m(x) for m in members)
            calls += 1
        rates.append(calls * x.shape[0] / (time.process_time() - t0))
print(json.dumps({"corename": lib.openblas_get_corename().decode(), "rate": sorted(rates)[1]}))
"""
_early = argparse.ArgumentParser(add_help=False)
_early.add_argument("--openblas-coretype")
KERNEL = openblas_kernel.choose(_early.parse_known_args()[0].openblas_coretype, code=SCORING_PROBE)

import h5py  # noqa: E402  (after the kernel's choice)
import numpy as np  # noqa: E402

OBS_DIM = 72
EPISODE = 1000
SLAB = 1 << 20


def generate(path: str, rows: int, fresh_normals: bool, seed: int = 25) -> None:
    tmp = path + ".partial"
    rng = np.random.default_rng(seed)
    base = rng.standard_normal((min(rows, SLAB), OBS_DIM), dtype=np.float32)
    with h5py.File(tmp, "w") as f:
        obs = f.create_dataset("observations", (rows, OBS_DIM), dtype="f4",
                               chunks=(min(rows, 4096), OBS_DIM))
        f["next_observations"] = obs  # a hard link: the same dataset under both names
        act = f.create_dataset("actions", (rows, 2), dtype="f4")
        rew = f.create_dataset("rewards", (rows,), dtype="f4")
        cost = f.create_dataset("costs", (rows,), dtype="f4")
        term = f.create_dataset("terminals", (rows,), dtype="?")
        tout = f.create_dataset("timeouts", (rows,), dtype="?")
        for start in range(0, rows, SLAB):
            n = min(SLAB, rows - start)
            if fresh_normals:
                x = rng.standard_normal((n, OBS_DIM), dtype=np.float32)
            else:
                x = np.roll(base, (start // SLAB) * 7919, axis=0)[:n]
            obs[start:start + n] = x
            act[start:start + n] = 0.0
            rew[start:start + n] = x[:, 0]
            cost[start:start + n] = (x[:, 1] > 1.0).astype(np.float32)
            term[start:start + n] = False
            t = np.zeros(n, dtype=bool)
            t[(EPISODE - 1 - start % EPISODE)::EPISODE] = True
            tout[start:start + n] = t
    os.replace(tmp, path)


def run_ltt(ltt: str, dataset: str, model: str, threads: int, state_values: bool) -> dict:
    with tempfile.TemporaryDirectory(dir="/tmp") as scratch:
        out = os.path.join(scratch, "out")
        cmd = ["/usr/bin/time", "-f", "%M %e", ltt, "score", "--dataset", dataset, "--model",
               model, "--out", out, "--threads", str(threads), "--quiet"]
        if not state_values:
            cmd.append("--no-state-values")
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(r.stderr)
        rss_kb, wall = r.stderr.strip().splitlines()[-1].split()
        score = json.load(open(os.path.join(out, "score.json")))
        return {"peak_rss_mib": int(rss_kb) / 1024, "wall_s": float(wall),
                "evaluation_states_per_s": score["time"]["states_per_second"],
                "streaming": score["streaming"]}


def torch_peer(dataset: str, threads: int) -> dict:
    import torch
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    members = [torch.nn.Sequential(
        torch.nn.Linear(OBS_DIM, 256), torch.nn.ReLU(),
        torch.nn.Linear(256, 256), torch.nn.ReLU(),
        torch.nn.Linear(256, 1)) for _ in range(3)]
    block = 1 << 18
    forward = 0.0
    start = time.perf_counter()
    with h5py.File(dataset, "r") as f, torch.inference_mode():
        obs = f["observations"]
        rows = obs.shape[0]
        values = np.empty(rows, dtype=np.float32)
        for first in range(0, rows, block):
            x = torch.from_numpy(obs[first:first + block])
            t = time.perf_counter()
            v = sum(m(x) for m in members) / len(members)
            forward += time.perf_counter() - t
            values[first:first + len(x)] = v[:, 0].numpy()
    wall = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"rows_per_s": rows / wall, "forward_rows_per_s": rows / forward, "wall_s": wall,
            "peak_rss_mib": peak, "openblas_corename": openblas_kernel.loaded_corename(),
            "openblas_choice": KERNEL}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ltt", required=True)
    parser.add_argument("--rows", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--model", help="an existing model.ltt (else trained on the first file)")
    parser.add_argument("--no-torch", action="store_true")
    parser.add_argument("--no-state-values", action="store_true")
    parser.add_argument("--fresh-normals", action="store_true")
    parser.add_argument("--openblas-coretype", metavar="NAME",
                        help="PyTorch's OpenBLAS kernel (default: the fastest of the library's "
                             "own pick and the kernels the CPU supports on a probe of the scoring)")
    args = parser.parse_args()
    os.makedirs("/tmp/ltt-scale", exist_ok=True)
    model = args.model
    for rows in args.rows:
        path = f"/tmp/ltt-scale/rows-{rows}.hdf5"
        t = time.perf_counter()
        existed = os.path.exists(path)
        if not existed:
            generate(path, rows, args.fresh_normals)
        print(json.dumps({"rows": rows, "file": path, "bytes": os.path.getsize(path),
                          "generated_s": None if existed else time.perf_counter() - t}),
              flush=True)
        try:
            if model is None:
                model = "/tmp/ltt-scale/model.ltt"
                out = tempfile.mkdtemp(dir="/tmp/ltt-scale")
                subprocess.run([args.ltt, "score", "--dataset", path, "--out", out, "--epochs",
                                "1", "--model", model, "--quiet"], check=True,
                               stdout=subprocess.DEVNULL)
            r = run_ltt(args.ltt, path, model, args.threads, not args.no_state_values)
            r.update(peer="ltt", rows=rows, threads=args.threads,
                     rows_per_s=rows / r["wall_s"], state_values=not args.no_state_values)
            print(json.dumps(r), flush=True)
            if not args.no_torch:
                p = torch_peer(path, args.threads)
                p.update(peer="torch", rows=rows, threads=args.threads)
                print(json.dumps(p), flush=True)
        finally:
            if not args.keep and not existed:
                os.remove(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
