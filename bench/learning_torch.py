#!/usr/bin/env python3
"""PyTorch peer of bench/learning.bench.cpp: the same Bradley-Terry training step and the same
forward-only inference, on the paper's architecture (obs dim 40, hidden 256 x 256, one output),
float32, one thread.

Run it the way an informed user runs PyTorch on CPU: Debian's python3-torch with OpenBLAS as the
system BLAS (apt-get install python3-torch libopenblas0-pthread; the default reference BLAS is
about 20 times slower and is not a fair peer), OpenBLAS's fastest kernel for the CPU (chosen by
openblas_kernel.py before torch loads, and reported) and one thread on both sides:

    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 /usr/bin/python3 bench/learning_torch.py

Figures are state-evaluations per CPU second (median over repetitions; wall-clock figures
too): for the step, 512 pairs of two segments of 30 states = 30720 states per step, forward +
backward + Adam (lr 3e-4); for inference, a forward pass over the same 30720 states without
autograd. build/bin/bench_learning runs this script itself after its own benchmarks and prints
both figures and their ratio.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import openblas_kernel

# OpenBLAS reads OPENBLAS_CORETYPE when it loads, with torch. Which kernel is fastest depends on
# the shapes, so without --openblas-coretype this script runs itself once per candidate kernel
# (openblas_kernel.candidates(); "library" is the library's own pick) and reports each
# workload's best with the kernel that gave it.
_early = argparse.ArgumentParser(add_help=False)
_early.add_argument("--openblas-coretype")
_FORCED = _early.parse_known_args()[0].openblas_coretype
METRICS = ("bt_step", "inference", "ensemble_scoring")


def each_kernel() -> int:
    preset = os.environ.pop("OPENBLAS_CORETYPE", None)
    runs = []
    for coretype in openblas_kernel.candidates(also=preset):
        command = [sys.executable, os.path.abspath(__file__), *sys.argv[1:], "--json",
                   "--openblas-coretype", coretype or "library"]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            sys.stderr.write(done.stderr)
            return done.returncode
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    result = dict(runs[0])
    result["openblas_environment_had"] = preset
    result["openblas_runs"] = [{"openblas_corename": r["openblas_corename"],
                                **{m + "_states_per_second": r[m + "_states_per_second"]
                                   for m in METRICS}} for r in runs]
    for m in METRICS:
        best = max(runs, key=lambda r: r[m + "_states_per_second"])
        for key in (m + "_states_per_second", m + "_states_per_wall_second"):
            result[key] = best[key]
        result[m + "_openblas_corename"] = best["openblas_corename"]
    result["bt_step_repetitions"] = max(runs, key=lambda r: r["bt_step_states_per_second"])[
        "bt_step_repetitions"]
    result["inference_repetitions"] = max(runs, key=lambda r: r["inference_states_per_second"])[
        "inference_repetitions"]
    result.pop("openblas_corename", None)
    result.pop("openblas_choice", None)
    report(result, "--json" in sys.argv)
    return 0


KERNEL = {}
if _FORCED == "library":
    os.environ.pop("OPENBLAS_CORETYPE", None)
    KERNEL = {"openblas_coretype": "(library's own)", "chosen_by": "--openblas-coretype library"}
elif _FORCED:
    KERNEL = openblas_kernel.choose(_FORCED)

import torch  # noqa: E402  (after the kernel's choice)


def make_model(obs_dim: int, hidden: int) -> torch.nn.Module:
    return torch.nn.Sequential(
        torch.nn.Linear(obs_dim, hidden), torch.nn.ReLU(),
        torch.nn.Linear(hidden, hidden), torch.nn.ReLU(),
        torch.nn.Linear(hidden, 1))


def timed(fn, states_per_call: int, min_time: float, repetitions: int) -> tuple:
    """Runs fn for at least min_time CPU seconds per repetition. Returns states per second per
    repetition by CPU time (what Google Benchmark reports for the C++ side: robust on a shared
    machine) and by wall-clock time."""
    fn()  # warm-up: allocator, BLAS buffers
    cpu_rates, wall_rates = [], []
    for _ in range(repetitions):
        calls = 0
        cpu0, wall0 = time.process_time(), time.perf_counter()
        while True:
            fn()
            calls += 1
            cpu = time.process_time() - cpu0
            if cpu >= min_time:
                break
        wall = time.perf_counter() - wall0
        cpu_rates.append(calls * states_per_call / cpu)
        wall_rates.append(calls * states_per_call / wall)
    return cpu_rates, wall_rates


def report(result: dict, as_json: bool) -> None:
    if as_json:
        print(json.dumps(result))
        return
    print(f"torch {result['torch']}, {result['threads']} thread(s), "
          f"OPENBLAS_NUM_THREADS={result['openblas_num_threads']}")
    rows = (("BT step (fwd + bwd + Adam):", "bt_step"), ("inference (forward only):  ", "inference"),
            ("ensemble scoring (K = 3, 72-dim):", "ensemble_scoring"))
    for text, m in rows:
        kernel = result.get(m + "_openblas_corename", result.get("openblas_corename"))
        print(f"{text} {result[m + '_states_per_second']:.3e} states/s (CPU time; "
              f"{result[m + '_states_per_wall_second']:.3e} by wall clock; OpenBLAS {kernel})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--obs-dim", type=int, default=40)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--pairs", type=int, default=512)
    parser.add_argument("--segment-length", type=int, default=30)
    parser.add_argument("--min-time", type=float, default=2.0, help="CPU seconds per repetition")
    parser.add_argument("--repetitions", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--openblas-coretype", metavar="NAME",
                        help="OpenBLAS's kernel, or 'library' for its own pick (default: each "
                             "candidate in turn, each workload's best reported)")
    args = parser.parse_args()

    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = make_model(args.obs_dim, args.hidden)
    optimizer = torch.optim.Adam(model.parameters(), lr=3e-4)
    P, H, d = args.pairs, args.segment_length, args.obs_dim
    states = P * 2 * H
    x = torch.randn(P, 2, H, d)

    def step():
        v = model(x.view(states, d)).view(P, 2, H).sum(dim=2)
        loss = torch.nn.functional.softplus(v[:, 1] - v[:, 0]).mean()  # -log logistic(V+ - V-)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

    flat = x.view(states, d)

    def inference():
        with torch.no_grad():
            model(flat)

    # `ltt score`'s scoring: V-bar of K = 3 members on 72-dim rows (OfflineCarGoal1's width),
    # 2^18 rows in chunks of 65536, as bench_learning's ensemble_scoring/threads:1.
    ensemble = [make_model(72, args.hidden) for _ in range(3)]
    table = torch.randn(1 << 18, 72)

    def ensemble_scoring():
        with torch.no_grad():
            for chunk in table.split(1 << 16):
                sum(m(chunk) for m in ensemble) / 3

    step_cpu, step_wall = timed(step, states, args.min_time, args.repetitions)
    inference_cpu, inference_wall = timed(inference, states, args.min_time, args.repetitions)
    scoring_cpu, scoring_wall = timed(ensemble_scoring, 1 << 18, args.min_time, args.repetitions)
    result = {
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "openblas_num_threads": os.environ.get("OPENBLAS_NUM_THREADS"),
        "openblas_corename": openblas_kernel.loaded_corename(),
        "openblas_choice": KERNEL,
        "states_per_call": states,
        "bt_step_states_per_second": statistics.median(step_cpu),
        "inference_states_per_second": statistics.median(inference_cpu),
        "bt_step_states_per_wall_second": statistics.median(step_wall),
        "inference_states_per_wall_second": statistics.median(inference_wall),
        "bt_step_repetitions": step_cpu,
        "inference_repetitions": inference_cpu,
        "ensemble_scoring_states_per_second": statistics.median(scoring_cpu),
        "ensemble_scoring_states_per_wall_second": statistics.median(scoring_wall),
    }
    report(result, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main() if _FORCED is not None else each_kernel())
