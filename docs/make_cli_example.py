#!/usr/bin/env python3
"""Writes the synthetic pools of docs/cli.md's `ltt certify` and `ltt validate` examples.

    make_cli_example.py [DIR]        (default: the current directory)

pool.csv (id,score,return,cost), 5000 trajectories: the score g is uniform on [0, 1] and a
trajectory is unsafe (cost above the budget 25) with probability 1.6 (1 - g)^2, so the top of
the ranking is nearly clean and the bottom mostly unsafe; unsafe trajectories earn more.
labels.csv (id,unsafe): a uniform draw of 200 of them without replacement, labeled.
demo_pool.csv (id,score,cost), 1000 trajectories, scores to 4 decimals, unsafe with
probability 0.72 (1 - g)^2: the pool `ltt validate --budget 25` resamples.
Ids are 1000, 1001, ... so that an id such as 77 is not in either pool. numpy's PCG64 with
fixed seeds: the same files on every machine.
"""
import os
import sys

import numpy as np


def write_pool(path, n, seed, risk, decimals=None, with_return=True):
    rng = np.random.default_rng(seed)
    score = rng.random(n)
    if decimals is not None:
        score = np.round(score, decimals)
    unsafe = rng.random(n) < risk * (1 - score) ** 2
    cost = np.where(unsafe, 26 + 30 * rng.random(n), 25 * rng.random(n))
    ret = 100 * rng.random(n) + 50 * unsafe
    ids = 1000 + np.arange(n)
    with open(path, "w") as f:
        f.write("id,score,return,cost\n" if with_return else "id,score,cost\n")
        for i in range(n):
            row = [str(ids[i]), repr(float(score[i]))]
            if with_return:
                row.append(f"{ret[i]:.2f}")
            row.append(f"{cost[i]:.2f}")
            f.write(",".join(row) + "\n")
    return ids, unsafe, rng


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    ids, unsafe, rng = write_pool(os.path.join(out, "pool.csv"), 5000, 11, 1.6)
    drawn = rng.choice(len(ids), size=200, replace=False)
    with open(os.path.join(out, "labels.csv"), "w") as f:
        f.write("id,unsafe\n")
        for i in drawn:
            f.write(f"{ids[i]},{int(unsafe[i])}\n")
    write_pool(os.path.join(out, "demo_pool.csv"), 1000, 7, 0.72, decimals=4, with_return=False)


if __name__ == "__main__":
    main()
