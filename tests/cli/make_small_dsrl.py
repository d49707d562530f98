#!/usr/bin/env python3
"""Writes the seeds of the corrupted-HDF5 tests (corrupted_hdf5.test.cpp) into OUT_DIR.

    make_small_dsrl.py OUT_DIR

small.hdf5        a DSRL-layout file as h5py writes DSRL's (float32 columns, h5py's enum flags),
                  20 episodes of 3 to 9 rows and a truncated final one, a per-row key in a group
                  (infos/step) and a root attribute: about 16 KB, mostly metadata, so that most
                  truncations and bit flips land in object headers, heaps and B-trees
small_gzip.hdf5   the same with every key chunked, shuffled and gzip-compressed (filter
                  pipelines, chunk B-trees)
small_scores.npy  float64, one score per episode
"""
import os
import sys

import h5py
import numpy as np


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(13)
    lengths = rng.integers(3, 10, 20)
    n = int(lengths.sum()) + 2
    obs = rng.normal(size=(n + 1, 3)).astype(np.float32)
    d = {
        "observations": obs[:-1],
        "next_observations": obs[1:],
        "actions": rng.uniform(-1, 1, size=(n, 2)).astype(np.float32),
        "rewards": rng.normal(1.0, 0.5, size=n).astype(np.float32),
        "costs": (rng.uniform(size=n) < 0.3).astype(np.float32),
        "terminals": np.zeros(n, dtype=bool),
        "timeouts": np.zeros(n, dtype=bool),
    }
    ends = np.cumsum(lengths) - 1
    d["terminals"][ends[1::2]] = True
    d["timeouts"][ends[0::2]] = True
    for name, options in (("small.hdf5", {}),
                          ("small_gzip.hdf5", {"chunks": True, "shuffle": True, "compression": "gzip"})):
        with h5py.File(os.path.join(out, name), "w") as f:
            for k, v in d.items():
                f.create_dataset(k, data=v, **options)
            f.create_dataset("infos/step", data=np.arange(n, dtype=np.int32), **options)
            f.attrs["env"] = "tests/cli/make_small_dsrl.py"
    np.save(os.path.join(out, "small_scores.npy"), rng.random(len(lengths)))


if __name__ == "__main__":
    main()
