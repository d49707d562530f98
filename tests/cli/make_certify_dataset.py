#!/usr/bin/env python3
"""Writes the inputs of the `ltt certify --dataset` tests into OUT_DIR (a scratch directory).

    make_certify_dataset.py OUT_DIR [--no-hdf5]

d.hdf5          a DSRL-layout dataset as h5py writes DSRL's files: float32 columns, bool flags
                (h5py enums), E = 400 episodes of 2 to 8 rows ending in terminals or timeouts,
                then a truncated final episode of 3 rows; plus a per-row key in a group
                (infos/step) and a root attribute, which a selection carries along
d/              the same dataset as a directory of .npy files (one per key)
episodes.npy    float64 rows (start, length, return, cost) by DSRL's rule, sums by math.fsum
scores.npy      float64, one score per episode: g, a multiple of 2^-20 in [0, 1)
scores.csv      id,score with the same scores, rows shuffled
values.npy      float32, one state value per row: g + (t - (L - 1) / 2) 2^-12 at step t of an
                episode of L rows, so the mean over an episode is exactly g (all exact dyadics)
values.csv      value, the same, one record per row in row order
values_id.csv   id,value, the same grouped by episode id, rows shuffled
labels.csv      id,unsafe for 150 episodes drawn uniformly, unsafe = cost > 10
missing_costs.hdf5, missing_costs/   d without its costs key

Episode i is unsafe (cost in [15, 40]) with probability 1.6 (1 - g)^2, else its cost is in
[0, 8]: far from the budget 10, so float32 rounding of the costs cannot move a label.
"""
import math
import os
import sys

import numpy as np

BUDGET = 10.0


def main():
    out = sys.argv[1]
    hdf5 = "--no-hdf5" not in sys.argv[2:]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(7)
    E, tail = 400, 3
    g = np.floor(rng.random(E) * 2**20) / 2**20
    unsafe = rng.random(E) < 1.6 * (1 - g) ** 2
    cost = np.where(unsafe, rng.uniform(15, 40, E), rng.uniform(0, 8, E))
    lengths = rng.integers(2, 9, E)
    n = int(lengths.sum()) + tail

    rows_cost = np.zeros(n, dtype=np.float32)
    values = np.zeros(n, dtype=np.float32)
    terminals = np.zeros(n, dtype=bool)
    timeouts = np.zeros(n, dtype=bool)
    row = 0
    for i, L in enumerate(lengths):
        rows_cost[row:row + L] = cost[i] / L
        values[row:row + L] = g[i] + (np.arange(L) - (L - 1) / 2) * 2.0**-12
        (terminals if i % 3 else timeouts)[row + L - 1] = True
        row += L
    values[row:] = 0.5  # the truncated tail: in no episode
    rows_cost[row:] = 1.0
    obs = rng.normal(size=(n + 1, 3)).astype(np.float32)
    d = {
        "observations": obs[:-1],
        "next_observations": obs[1:],
        "actions": rng.uniform(-1, 1, size=(n, 2)).astype(np.float32),
        "rewards": rng.normal(1.0, 0.5, size=n).astype(np.float32),
        "costs": rows_cost,
        "terminals": terminals,
        "timeouts": timeouts,
    }
    step = np.arange(n, dtype=np.int64)

    # DSRL's rule (OfflineEnv.pre_process_data): an episode ends where terminals | timeouts.
    done = np.where(terminals | timeouts)[0]
    episodes = []
    for i, end in enumerate(done):
        start = 0 if i == 0 else done[i - 1] + 1
        episodes.append((start, end + 1 - start, math.fsum(map(float, d["rewards"][start:end + 1])),
                         math.fsum(map(float, d["costs"][start:end + 1]))))
    episodes = np.array(episodes, dtype=np.float64)
    assert len(episodes) == E and np.array_equal(episodes[:, 1], lengths)
    assert np.array_equal(episodes[:, 3] > BUDGET, unsafe)
    np.save(os.path.join(out, "episodes.npy"), episodes)

    np.save(os.path.join(out, "scores.npy"), g)
    order = rng.permutation(E)
    with open(os.path.join(out, "scores.csv"), "w") as f:
        f.write("id,score\n" + "".join(f"{i},{g[i]!r}\n" for i in order))
    np.save(os.path.join(out, "values.npy"), values)
    with open(os.path.join(out, "values.csv"), "w") as f:
        f.write("value\n" + "".join(f"{float(v)!r}\n" for v in values))
    owner = np.repeat(np.arange(E), lengths)
    by_row = rng.permutation(len(owner))
    with open(os.path.join(out, "values_id.csv"), "w") as f:
        f.write("id,value\n" + "".join(f"{owner[r]},{float(values[r])!r}\n" for r in by_row))
    drawn = rng.choice(E, size=150, replace=False)
    with open(os.path.join(out, "labels.csv"), "w") as f:
        f.write("id,unsafe\n" + "".join(f"{i},{int(unsafe[i])}\n" for i in drawn))

    def write_npy_dir(path, columns, extra):
        os.makedirs(path, exist_ok=True)
        for k, v in list(columns.items()) + list(extra.items()):
            np.save(os.path.join(path, k.replace("/", "_") + ".npy"), v)

    write_npy_dir(os.path.join(out, "d"), d, {"infos/step": step})
    missing = {k: v for k, v in d.items() if k != "costs"}
    write_npy_dir(os.path.join(out, "missing_costs"), missing, {})
    if hdf5:
        import h5py
        with h5py.File(os.path.join(out, "d.hdf5"), "w") as f:
            for k, v in d.items():
                f.create_dataset(k, data=v)
            f.create_dataset("infos/step", data=step)
            f.attrs["env"] = "tests/cli/make_certify_dataset.py"
        with h5py.File(os.path.join(out, "missing_costs.hdf5"), "w") as f:
            for k, v in missing.items():
                f.create_dataset(k, data=v)


if __name__ == "__main__":
    main()
