#!/usr/bin/env python3
"""Writes the seeds of the corrupted-HDF5 tests (corrupted_hdf5.test.cpp) into OUT_DIR.

    make_small_dsrl.py OUT_DIR

small.hdf5        a DSRL-layout file as h5py writes DSRL's (float32 columns, h5py's enum flags),
                  20 episodes of 3 to 9 rows and a truncated final one, a per-row key in a group
                  (infos/step) and a root attribute: about 16 KB, mostly metadata, so that most
                  truncations and bit flips land in object headers, heaps and B-trees
small_gzip.hdf5   the same with the seven keys chunked and gzip-compressed (filter pipelines,
                  chunk B-trees)
small_scores.npy  float64, one score per episode

The datasets are built and written as the data tests' fixtures are (tests/data/make_dsrl_fixtures.py).
"""
import os
import sys

import numpy as np

sys.dont_write_bytecode = True  # nothing lands in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data"))
from make_dsrl_fixtures import dataset, write_h5  # noqa: E402


def small_dataset():
    """The dataset, its extra per-row key, one score per episode; make_compressed_dsrl.py's too."""
    rng = np.random.default_rng(13)
    lengths = [int(n) for n in rng.integers(3, 10, 20)]
    d = dataset(rng, lengths, ["timeout", "terminal"] * 10, 2)
    extra = {"infos/step": np.arange(d["observations"].shape[0], dtype=np.int32)}
    return d, extra, rng.random(len(lengths))


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    d, extra, scores = small_dataset()
    write_h5(os.path.join(out, "small.hdf5"), d, extra)
    write_h5(os.path.join(out, "small_gzip.hdf5"), d, extra, compress=True)
    np.save(os.path.join(out, "small_scores.npy"), scores)


if __name__ == "__main__":
    main()
