#!/usr/bin/env python3
"""Writes the DSRL files of compressed_dsrl.test.cpp into OUT_DIR, with h5py.

    make_compressed_dsrl.py OUT_DIR

plain.hdf5          make_small_dsrl.py's dataset (small_dataset), unfiltered; scores.npy, one
                    score per episode
NAME.hdf5           the same with the seven keys chunked through one filter plugin each:
                    lzf (h5py's own name), lz4, blosc and bitshuffle (their registered ids and
                    options, decoded by Debian's plugins, which scripts/setup installs)
NAME-claims.hdf5    the same, but 'observations' claims 10^7 rows of which only the first few
                    chunks are stored: far more than the filter can unpack from them

Exit 1 with a line naming the Debian package when h5py cannot find a filter's plugin.
"""
import os
import sys

import numpy as np

sys.dont_write_bytecode = True  # nothing lands in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data"))
from make_dsrl_fixtures import write_h5  # noqa: E402
from make_small_dsrl import small_dataset  # noqa: E402

# name: (registered filter id, the Debian 12 package of its plugin, create_dataset's keywords)
FILTERS = {
    "lzf": (32000, "hdf5-plugin-lzf", {"compression": "lzf"}),
    # LZ4 blocks of the default size
    "lz4": (32004, "hdf5-filter-plugin", {"compression": 32004, "compression_opts": (0,)}),
    # Blosc: the first four slots are the plugin's; level 5, byte shuffle, its LZ4 codec
    "blosc": (32001, "hdf5-filter-plugin-blosc-serial",
              {"compression": 32001, "compression_opts": (0, 0, 0, 0, 5, 1, 1)}),
    # Bitshuffle: automatic block size, then LZ4
    "bitshuffle": (32008, "bitshuffle", {"compression": 32008, "compression_opts": (0, 2)}),
}


def main():
    import h5py
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    d, extra, scores = small_dataset()
    write_h5(os.path.join(out, "plain.hdf5"), d, extra)
    np.save(os.path.join(out, "scores.npy"), scores)
    for name, (filter_id, package, options) in FILTERS.items():
        if not h5py.h5z.filter_avail(filter_id):
            sys.exit(f"make_compressed_dsrl.py: h5py finds no plugin for HDF5 filter {filter_id} "
                     f"({name}); scripts/setup installs it (Debian package {package})")
        write_h5(os.path.join(out, name + ".hdf5"), d, extra, filters=options)
        claims = os.path.join(out, name + "-claims.hdf5")
        write_h5(claims, d, extra, filters=options)
        with h5py.File(claims, "a") as f:
            obs = d["observations"]
            del f["observations"]
            k = f.create_dataset("observations", shape=(10**7,) + obs.shape[1:], dtype=obs.dtype,
                                 chunks=(64,) + obs.shape[1:], **options)
            k[: len(obs)] = obs


if __name__ == "__main__":
    main()
