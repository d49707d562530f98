#!/usr/bin/env python3
"""Writes the data tests' fixtures into OUT_DIR (a build directory; nothing here is committed).

    make_dsrl_fixtures.py OUT_DIR [--no-hdf5]

npy/       arrays written by numpy itself (np.save, np.lib.format.write_array) of every dtype the
           reader supports, in the values value_at() below defines (tests/data/npy.test.cpp
           computes the same), plus files the reader must refuse.
dsrl/      DSRL-layout datasets written by h5py, as DSRL publishes them (bool flags are h5py
           enums), good and broken; the same datasets as .npy directories; and for each good
           one <name>.episodes.npy, float64 rows (start, length, return, cost, terminal)
           computed by DSRL's own rule (OfflineEnv.pre_process_data), cross-checked here
           against OSRL's (process_sequence_dataset).

Run by ctest (test data.fixtures) with Debian's /usr/bin/python3, which has numpy and h5py.
"""
import math
import os
import shutil
import sys

import numpy as np

# --- npy ------------------------------------------------------------------------------------

def value_at(dtype, i):
    """Element i (C order) of every generated array; npy.test.cpp mirrors this."""
    if dtype in ("float32", "float64"):
        return (i - 5) * 0.25
    if dtype == "int64":
        return (i - 5) * 1000000007
    if dtype == "uint8":
        return (i * 37) % 256
    if dtype == "bool":
        return i % 3 == 0
    raise ValueError(dtype)


def generated(dtype, shape):
    n = int(np.prod(shape, dtype=np.int64))
    return np.array([value_at(dtype, i) for i in range(n)], dtype=dtype).reshape(shape)


def write_npy_fixtures(out):
    os.makedirs(out)
    for dtype in ("float32", "float64", "int64", "uint8", "bool"):
        for shape in ((7,), (3, 4), (2, 3, 2), (0,), (0, 3)):
            name = f"{dtype}_{'x'.join(map(str, shape))}.npy"
            np.save(os.path.join(out, name), generated(dtype, shape))
    np.save(os.path.join(out, "scalar.npy"), np.float64(2.5))
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, 1.7976931348623157e308])
    np.save(os.path.join(out, "special.npy"), special)
    for version in ((2, 0), (3, 0)):
        with open(os.path.join(out, f"version{version[0]}.npy"), "wb") as f:
            np.lib.format.write_array(f, generated("float64", (3, 4)), version=version)
    # Fortran order: a 2-D array with two long dimensions is refused; a column (5, 1) is the
    # same bytes in both orders (np.save writes it as C order, so this header is hand-made).
    np.save(os.path.join(out, "fortran.npy"), np.asfortranarray(generated("float64", (3, 4))))
    with open(os.path.join(out, "fortran_column.npy"), "wb") as f:
        header = {"descr": "<f8", "fortran_order": True, "shape": (5, 1)}
        np.lib.format.write_array_header_1_0(f, header)
        f.write(generated("float64", (5, 1)).tobytes())
    np.save(os.path.join(out, "big_endian.npy"), generated("float64", (4,)).astype(">f8"))
    np.save(os.path.join(out, "int32.npy"), generated("int64", (4,)).astype(np.int32))
    with open(os.path.join(out, "truncated.npy"), "wb") as f:
        np.save(f, generated("float64", (10,)))
    with open(os.path.join(out, "truncated.npy"), "r+b") as f:
        f.truncate(os.path.getsize(os.path.join(out, "truncated.npy")) - 12)
    with open(os.path.join(out, "not_npy.npy"), "wb") as f:
        f.write(b"id,score\n1,0.5\n")


# --- DSRL datasets --------------------------------------------------------------------------

KEYS = ["observations", "next_observations", "actions", "rewards", "costs", "terminals", "timeouts"]


def dataset(rng, lengths, ends, tail, obs_dtype=np.float32, flag_dtype=np.bool_, column=False):
    """lengths[i] rows for episode i, ended by ends[i] in {'terminal', 'timeout', 'both'},
    then `tail` rows with neither flag (a truncated final episode)."""
    n = sum(lengths) + tail
    obs = rng.normal(size=(n + 1, 3)).astype(obs_dtype)
    d = {
        "observations": obs[:-1],
        "next_observations": obs[1:],
        "actions": rng.uniform(-1, 1, size=(n, 2)).astype(obs_dtype),
        "rewards": rng.normal(1.0, 0.5, size=n).astype(obs_dtype),
        "costs": (rng.uniform(size=n) < 0.3).astype(obs_dtype),
        "terminals": np.zeros(n, dtype=flag_dtype),
        "timeouts": np.zeros(n, dtype=flag_dtype),
    }
    row = 0
    for length, end in zip(lengths, ends):
        row += length
        if end in ("terminal", "both"):
            d["terminals"][row - 1] = 1
        if end in ("timeout", "both"):
            d["timeouts"][row - 1] = 1
    if column:
        for k in ("rewards", "costs", "terminals", "timeouts"):
            d[k] = d[k].reshape(n, 1)
    return d


def dsrl_episodes(d):
    """DSRL's rule, as in dsrl/offline_env.py OfflineEnv.pre_process_data."""
    terminals, timeouts = np.ravel(d["terminals"]), np.ravel(d["timeouts"])
    done_idx = np.where((terminals == 1) | (timeouts == 1))[0]
    rows = []
    for i in range(done_idx.shape[0]):
        start = 0 if i == 0 else done_idx[i - 1] + 1
        end = done_idx[i] + 1
        # math.fsum: the correctly rounded sum, a reference for the reader's compensated one.
        ret = math.fsum(float(x) for x in np.ravel(d["rewards"])[start:end])
        cost = math.fsum(float(x) for x in np.ravel(d["costs"])[start:end])
        rows.append((start, end - start, ret, cost, float(bool(terminals[end - 1]))))
    return np.array(rows, dtype=np.float64).reshape(-1, 5)


def osrl_episode_lengths(d):
    """OSRL's rule, as in osrl/common/dataset.py process_sequence_dataset (its own traj_lens
    are off by one for the first episode; the trajectories themselves are what count)."""
    lengths, current = [], 0
    for i in range(np.ravel(d["rewards"]).shape[0]):
        current += 1
        if np.ravel(d["terminals"])[i] or np.ravel(d["timeouts"])[i]:
            lengths.append(current)
            current = 0
    return lengths


def write_h5(path, d, extra=None, compress=False, filters=None):
    """filters: create_dataset's keywords for the seven keys, e.g. {"compression": "lzf"};
    compress=True is gzip at level 4."""
    import h5py
    if compress:
        filters = {"compression": "gzip", "compression_opts": 4}
    with h5py.File(path, "w") as f:
        for k, v in d.items():
            if filters and np.ndim(v) >= 1 and len(v) > 0:
                f.create_dataset(k, data=v, chunks=True, **filters)
            else:
                f.create_dataset(k, data=v)
        for k, v in (extra or {}).items():
            f.create_dataset(k, data=v)
        f.attrs["source"] = "tests/data/make_dsrl_fixtures.py"


def write_npy_dir(path, d, extra=None):
    os.makedirs(path)
    for k, v in list(d.items()) + list((extra or {}).items()):
        np.save(os.path.join(path, k.replace("/", "_") + ".npy"), v)


def write_dsrl_fixtures(out, hdf5):
    os.makedirs(out)
    rng = np.random.default_rng(20240607)
    good = {
        # h5py's bool enums, float32, episodes of each ending, a truncated final episode.
        "enum_flags": (dataset(rng, [4, 3, 5, 2, 6], ["terminal", "timeout", "both", "timeout", "terminal"], 3),
                       True),
        # uint8 flags, float64, (N, 1) columns, gzip-compressed chunks, no tail.
        "uint8_flags": (dataset(rng, [5, 1, 4], ["timeout", "terminal", "timeout"], 0,
                                obs_dtype=np.float64, flag_dtype=np.uint8, column=True), False),
    }
    for name, (d, with_extra) in good.items():
        n = d["observations"].shape[0]
        extra = None
        if with_extra:
            # A per-transition key besides the seven (sliced with them) and one that is not.
            extra = {"infos/goal": np.arange(2 * n, dtype=np.int64).reshape(n, 2),
                     "env_name": np.array([11, 22, 33], dtype=np.int64)}
        episodes = dsrl_episodes(d)
        assert [int(x) for x in episodes[:, 1]] == osrl_episode_lengths(d), "DSRL and OSRL split differently"
        np.save(os.path.join(out, f"{name}.episodes.npy"), episodes)
        np.save(os.path.join(out, f"{name}.rows.npy"), np.int64(n))
        if hdf5:
            write_h5(os.path.join(out, f"{name}.hdf5"), d, extra, compress=(name == "uint8_flags"))
        write_npy_dir(os.path.join(out, f"{name}_npy"), d, extra)

    base = dataset(rng, [3, 4], ["terminal", "timeout"], 0)
    n = base["observations"].shape[0]
    broken = {}
    broken["missing_costs"] = {k: v for k, v in base.items() if k != "costs"}
    broken["missing_two"] = {k: v for k, v in base.items() if k not in ("costs", "timeouts")}
    broken["mismatched_rows"] = dict(base, costs=base["costs"][:-1])
    broken["wrong_rank"] = dict(base, observations=base["observations"][:, 0])
    broken["wide_rewards"] = dict(base, rewards=np.stack([base["rewards"]] * 2, axis=1))
    broken["bad_flag"] = dict(base, terminals=np.where(base["terminals"], 2, 0).astype(np.uint8))
    broken["nan_reward"] = dict(base, rewards=np.where(np.arange(n) == 2, np.nan, base["rewards"]).astype(np.float32))
    broken["int_observations"] = dict(base, observations=np.zeros((n, 3), dtype=np.int32))
    broken["no_episode"] = dict(base, terminals=np.zeros(n, dtype=bool), timeouts=np.zeros(n, dtype=bool))
    broken["next_obs_shape"] = dict(base, next_observations=np.zeros((n, 4), dtype=np.float32))
    for name, d in broken.items():
        if hdf5:
            write_h5(os.path.join(out, f"{name}.hdf5"), d)
        if name != "int_observations":  # int32 is not a .npy dtype the reader supports at all
            write_npy_dir(os.path.join(out, f"{name}_npy"), d)
    if hdf5:
        import h5py
        with h5py.File(os.path.join(out, "group_key.hdf5"), "w") as f:
            for k, v in base.items():
                if k != "costs":
                    f.create_dataset(k, data=v)
            f.create_group("costs")
        with h5py.File(os.path.join(out, "string_rewards.hdf5"), "w") as f:
            for k, v in base.items():
                f.create_dataset(k, data=v if k != "rewards" else np.array([b"x"] * n))
        # libhdf5 1.10 dies inside H5Oopen on a dataset whose enum type claims a base of 1 GiB
        # (as hdf5-crash/crash-on-open.hdf5's 'terminals'); here it is a key besides the seven,
        # which only a selection opens, after it has written other keys; or the world
        # geometry's world/arena, which only read_world_geometry opens.
        for name, key in [("crash_in_extra_key", "infos/flag"), ("crash_in_world_key", "world/arena")]:
            path = os.path.join(out, name + ".hdf5")
            with h5py.File(path, "w") as f:
                for k, v in base.items():
                    f.create_dataset(k, data=v)
                f.create_dataset(key, data=np.zeros(n, dtype=bool))
                header = h5py.h5o.get_info(f[key].id).addr
            with open(path, "r+b") as f:
                f.seek(header)
                # The datatype message: enum of 1 byte, 2 members, over int8 of 1 byte.
                at = header + f.read(512).index(bytes.fromhex("180200000100000010080000" "01000000"))
                f.seek(at + 15)
                f.write(b"\x40")  # the base's size: 0x40000001 bytes
    with open(os.path.join(out, "not_hdf5.hdf5"), "wb") as f:
        f.write(b"this is not an HDF5 file\n" * 4)


def main():
    args = sys.argv[1:]
    hdf5 = "--no-hdf5" not in args
    args = [a for a in args if a != "--no-hdf5"]
    if len(args) != 1:
        sys.exit(__doc__)
    out = args[0]
    if os.path.exists(out):
        shutil.rmtree(out)
    write_npy_fixtures(os.path.join(out, "npy"))
    write_dsrl_fixtures(os.path.join(out, "dsrl"), hdf5)


if __name__ == "__main__":
    main()
