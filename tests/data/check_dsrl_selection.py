#!/usr/bin/env python3
"""Checks a selection written by ltt against its input, with h5py and numpy only.

    check_dsrl_selection.py IN OUT INDEX...

IN and OUT are both HDF5 files or both directories of .npy files. The episodes of IN are found
by DSRL's rule (an episode ends where terminals | timeouts; rows after the last end belong to
none). OUT must hold, for every key of IN with one row per transition, exactly the rows of
episodes INDEX... one after another, with IN's dtype (h5py bool enums stay bool) and trailing
shape; every other key and every attribute unchanged. Then OUT is loaded the way DSRL's
OfflineEnv.get_dataset loads a file, with its shape checks. Exit 0 when all holds; otherwise
each difference on stderr and exit 1.
"""
import os
import sys

import numpy as np

problems = []


def problem(message):
    problems.append(message)
    print("check_dsrl_selection: " + message, file=sys.stderr)


def load(path):
    """{key: array}, {key: attrs} of every dataset, and the root attributes."""
    if os.path.isdir(path):
        data = {f[:-4]: np.load(os.path.join(path, f)) for f in sorted(os.listdir(path)) if f.endswith(".npy")}
        return data, {k: {} for k in data}, {}
    import h5py
    data, attrs = {}, {}
    with h5py.File(path, "r") as f:
        def visit(name, item):
            if isinstance(item, h5py.Dataset):
                data[name] = item[()]
                attrs[name] = dict(item.attrs)
        f.visititems(visit)
        root = dict(f.attrs)
        flags_are_enums = {k: h5py.check_enum_dtype(f[k].dtype) is not None or f[k].dtype == np.bool_
                           for k in ("terminals", "timeouts") if k in f}
    attrs["/"] = root
    attrs["/flags"] = flags_are_enums
    return data, attrs, root


def same(a, b):
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind == "f":
        return np.array_equal(a, b, equal_nan=True)
    return np.array_equal(a, b)


def episodes(data):
    done = np.ravel(data["terminals"]).astype(bool) | np.ravel(data["timeouts"]).astype(bool)
    ends = np.where(done)[0]
    starts = np.concatenate([[0], ends[:-1] + 1])
    return list(zip(starts, ends + 1))


def dsrl_get_dataset_checks(data):
    """The assertions of DSRL's OfflineEnv.get_dataset (without the env's spaces)."""
    for key in ["observations", "next_observations", "actions", "rewards", "costs", "terminals", "timeouts"]:
        if key not in data:
            problem(f"OUT is missing key {key!r}")
            return
    n = data["observations"].shape[0]
    for key in ("rewards", "costs", "terminals"):
        v = data[key]
        if v.shape == (n, 1):
            v = v[:, 0]
        if v.shape != (n,):
            problem(f"OUT key {key!r} has shape {data[key].shape}, DSRL wants ({n},)")
    for key in ("observations", "actions", "next_observations", "rewards", "costs"):
        data[key].astype("float32")


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    source, target = sys.argv[1], sys.argv[2]
    indices = [int(x) for x in sys.argv[3:]]
    d_in, a_in, _ = load(source)
    d_out, a_out, _ = load(target)
    n = d_in["observations"].shape[0]
    spans = episodes(d_in)
    rows = np.concatenate([np.arange(*spans[i]) for i in indices])

    if sorted(d_in) != sorted(d_out):
        problem(f"keys differ: IN {sorted(d_in)}, OUT {sorted(d_out)}")
    for key, v in d_in.items():
        if key not in d_out:
            continue
        per_row = np.ndim(v) >= 1 and v.shape[0] == n
        expected = v[rows] if per_row else v
        if not same(expected, d_out[key]):
            problem(f"key {key!r}: OUT {d_out[key].dtype} {d_out[key].shape} differs from the expected "
                    f"{expected.dtype} {expected.shape}")
        if a_in.get(key, {}).keys() != a_out.get(key, {}).keys():
            problem(f"key {key!r}: attributes differ")
    if a_in.get("/") != a_out.get("/"):
        problem(f"root attributes differ: IN {a_in.get('/')}, OUT {a_out.get('/')}")
    if a_in.get("/flags") != a_out.get("/flags"):
        problem(f"flag types differ: IN {a_in.get('/flags')}, OUT {a_out.get('/flags')}")
    dsrl_get_dataset_checks(d_out)
    # The episodes of OUT are the selected ones, in order.
    out_lengths = [b - a for a, b in episodes(d_out)]
    in_lengths = [spans[i][1] - spans[i][0] for i in indices]
    if out_lengths != in_lengths:
        problem(f"OUT splits into episodes of lengths {out_lengths}, expected {in_lengths}")
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
