#!/usr/bin/env python3
"""Writes a DSRL-layout dataset whose per-step cost is a known function of the observation, for
docs/curate.md, the `ltt score` / `ltt curate` tests and the performance runs (docs/performance.md).

    make_curate_example.py OUT [--episodes E] [--length L] [--dim D] [--seed S]
                               [--dtype float32|float64] [--tail T]

OUT ending in .hdf5 or .h5 is written with h5py (as DSRL publishes its files); any other name
is a directory of .npy files, one per key. Nothing is downloaded.

Episode i has a riskiness r_i ~ U(0, 1). Its observation column 0 wanders around 2 r_i - 1
(an AR(1) walk), so risky episodes spend more steps high; the per-step cost is

    cost(s) = 1 if s[0] > 0.5 else 0                (a hazard zone, as in Safety-Gymnasium)

The other columns are noise at scales 1 to 100 (a lidar next to velocities), and column 1
echoes column 0 with noise, so the value must find the signal among badly scaled inputs.
Reward per step is 0.5 + 0.5 s[0] plus noise: the riskier episodes earn more, as in DSRL.
Episodes are L rows (one in ten is a short one of L / 10 rows, shorter than a segment when
L / 10 < 30), the last row flagged timeouts (terminals for one in seven); T rows of a truncated
episode with no end flag follow the last one (DSRL drops them).
"""
import argparse
import os

import numpy as np


def make(episodes, length, dim, seed, dtype, tail):
    rng = np.random.default_rng(seed)
    lengths = np.where(np.arange(episodes) % 10 == 9, max(2, length // 10), length)
    rows = int(lengths.sum()) + tail
    risk = rng.random(episodes)
    center = np.repeat(np.append(2 * risk - 1, 0.0), np.append(lengths, tail))
    walk = np.empty(rows)
    noise = rng.normal(0.0, 0.3, rows)
    walk[0] = 0.0
    for k in range(1, rows):  # AR(1) around zero, added to each episode's center
        walk[k] = 0.8 * walk[k - 1] + noise[k]
    obs = np.empty((rows + 1, dim), dtype=np.float64)
    s0 = center + walk
    obs[:rows, 0] = s0
    if dim > 1:
        obs[:rows, 1] = s0 + rng.normal(0.0, 0.5, rows)
    for c in range(2, dim):
        obs[:rows, c] = rng.normal(0.0, 10.0 ** (c % 3), rows)
    obs[rows] = obs[rows - 1]
    cost = (s0 > 0.5).astype(np.float32)
    reward = (0.5 + 0.5 * s0 + rng.normal(0.0, 0.1, rows)).astype(np.float32)
    terminals = np.zeros(rows, dtype=bool)
    timeouts = np.zeros(rows, dtype=bool)
    ends = np.cumsum(lengths) - 1
    for i, e in enumerate(ends):
        (terminals if i % 7 == 6 else timeouts)[e] = True
    return {
        "observations": obs[:-1].astype(dtype),
        "next_observations": obs[1:].astype(dtype),
        "actions": rng.uniform(-1, 1, (rows, 2)).astype(np.float32),
        "rewards": reward,
        "costs": cost,
        "terminals": terminals,
        "timeouts": timeouts,
    }


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("--episodes", type=int, default=300)
    p.add_argument("--length", type=int, default=200)
    p.add_argument("--dim", type=int, default=8)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    p.add_argument("--tail", type=int, default=7)
    a = p.parse_args()
    d = make(a.episodes, a.length, a.dim, a.seed, np.dtype(a.dtype), a.tail)
    if a.out.endswith((".hdf5", ".h5")):
        import h5py

        with h5py.File(a.out, "w") as f:
            for k, v in d.items():
                f.create_dataset(k, data=v)
    else:
        os.makedirs(a.out, exist_ok=True)
        for k, v in d.items():
            np.save(os.path.join(a.out, k + ".npy"), v)


if __name__ == "__main__":
    main()
