# ltt.dask: episode scores of DSRL files on a dask.distributed cluster (docs/scale.md).
#
# Scoring is a map over rows (V-bar at every state) and a per-episode reduction (the mean of
# V-bar, paper section 4.2), so it spreads over machines: each task reads a block of rows where
# the data lives (h5py inside the task), evaluates the value on it (ltt.load_value, which
# releases the GIL), and reduces what it can; the client stitches the episodes that cross a
# block boundary. The result is `ltt score --model`'s scores.npy for each file, byte for byte:
#
# - V-bar of a row is the same double whatever block it is computed in, as long as every block
#   but a file's last is a whole number of learning::state_values_chunk = 65536 rows (the
#   forward calls are then the ones `ltt score` makes), so blocks are multiples of it;
# - each episode is reduced by ltt.trajectory_scores over its own values in row order, the
#   aggregation `ltt score` applies (the Neumaier mean), once: a task reduces the episodes that
#   lie inside its block, and the client those that cross blocks, from their values in order.
#
# The episodes are split as ltt::data::load_dsrl_pool and DSRL split them: an episode ends at
# each row with terminals | timeouts, and the rows after the last end belong to none.
#
# dask is an optional dependency of ltt, imported here only (Debian: python3-dask,
# python3-distributed).

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Sequence

import numpy as np

import dask

import ltt

#: The rows of one forward call of the value (learning::state_values_chunk): blocks are
#: multiples of it so that every row's value is the one `ltt score` computes.
FORWARD_ROWS = 65536

_values: dict[str, Any] = {}  # per worker process: the loaded value of each model file


def _value(model: str):
    v = _values.get(model)
    if v is None:
        v = _values[model] = ltt.load_value(model)
    return v


def _column(path: str, key: str, start: int, stop: int) -> np.ndarray:
    """Rows [start, stop) of a key of a DSRL dataset: an HDF5 file or a directory of .npy."""
    if os.path.isdir(path):
        return np.asarray(np.load(os.path.join(path, key + ".npy"), mmap_mode="r")[start:stop])
    import h5py

    with h5py.File(path, "r") as f:
        return np.asarray(f[key][start:stop])


def _rows(path: str) -> int:
    if os.path.isdir(path):
        return int(np.load(os.path.join(path, "observations.npy"), mmap_mode="r").shape[0])
    import h5py

    with h5py.File(path, "r") as f:
        return int(f["observations"].shape[0])


def _flags(path: str, key: str, start: int, stop: int) -> np.ndarray:
    x = _column(path, key, start, stop)
    if x.ndim == 2 and x.shape[1] == 1:
        x = x[:, 0]
    if x.ndim != 1:
        raise ValueError(f"ltt.dask: {path}: key '{key}' has shape {x.shape}; want (rows,)")
    bad = np.flatnonzero((x != 0) & (x != 1))
    if bad.size:
        raise ValueError(f"ltt.dask: {path}: key '{key}' at row {start + int(bad[0])} is "
                         f"{x[bad[0]]!r}; flags must be 0 or 1")
    return x != 0


def _episode_ends(path: str, start: int, stop: int) -> np.ndarray:
    """The rows in [start, stop) where an episode ends (terminals | timeouts)."""
    ends = _flags(path, "terminals", start, stop) | _flags(path, "timeouts", start, stop)
    return start + np.flatnonzero(ends).astype(np.int64)


def _score_block(path: str, model: str, start: int, stop: int, offsets: np.ndarray,
                 first: int, aggregation: str, percentile: float):
    """V-bar on rows [start, stop) and the scores of the episodes inside them.

    offsets: the offsets of the episodes first, first + 1, ... that overlap the block (their
    starts and the last one's end). Returns (first, scores of the episodes inside the block
    (nan for the others), {episode: its values in the block} for those that cross an edge).
    """
    obs = np.asarray(_column(path, "observations", start, stop), dtype=np.float32)
    if obs.ndim != 2:
        raise ValueError(f"ltt.dask: {path}: key 'observations' has shape {obs.shape}; "
                         "want (rows, observation_dim)")
    values = _value(model).state_values(obs, dtype="float64")
    count = len(offsets) - 1
    scores = np.full(count, np.nan)
    inside = [i for i in range(count) if offsets[i] >= start and offsets[i + 1] <= stop]
    if inside:
        a, b = inside[0], inside[-1] + 1  # the inside episodes are consecutive
        local = offsets[a:b + 1] - start
        scores[a:b] = ltt.trajectory_scores(values[local[0]:local[-1]], local - local[0],
                                            aggregation=aggregation, percentile=percentile)
    pieces = {}
    for i in range(count):
        if offsets[i] < start or offsets[i + 1] > stop:
            lo, hi = max(offsets[i], start), min(offsets[i + 1], stop)
            pieces[first + i] = values[lo - start:hi - start]
    return first, scores, pieces


def _blocks(rows: int, block_rows: int) -> list[tuple[int, int]]:
    return [(a, min(a + block_rows, rows)) for a in range(0, rows, block_rows)]


def _compute(client, tasks):
    if client is not None:
        return client.gather(client.compute(tasks))
    return list(dask.compute(*tasks))


def episode_scores(files: Sequence[str | os.PathLike], model: str | os.PathLike, *,
                   block_rows: int = 4 * FORWARD_ROWS, aggregation: str = "mean",
                   percentile: float = 10.0, client=None) -> list[np.ndarray]:
    """One score per episode of each DSRL dataset in files (HDF5 or a directory of .npy).

    The scores `ltt score --dataset F --model M` writes to scores.npy for each file F, byte for
    byte, computed on a dask cluster: tasks of block_rows rows (a multiple of 65536) read their
    rows where they run, evaluate the value of the model file M and reduce the episodes inside
    them. client: a dask.distributed Client (default: dask's current scheduler). Returns one
    float64 array per file, in episode order.
    """
    if not isinstance(block_rows, (int, np.integer)) or block_rows < FORWARD_ROWS or \
            block_rows % FORWARD_ROWS:
        raise ValueError(f"ltt.dask.episode_scores: block_rows = {block_rows!r} must be a "
                         f"positive multiple of {FORWARD_ROWS} (the value's forward call)")
    if aggregation not in ("mean", "minimum", "percentile"):
        raise ValueError(f"ltt.dask.episode_scores: aggregation = {aggregation!r} must be "
                         "'mean', 'minimum' or 'percentile'")
    paths = [str(Path(f)) for f in files]
    if not paths:
        raise ValueError("ltt.dask.episode_scores: files is empty")
    for p in paths:
        if not os.path.exists(p):
            raise ValueError(f"ltt.dask.episode_scores: {p}: no such file or directory")
    model = str(Path(model))
    _value(model)  # a bad model file fails here, once, with load_value's message

    # Where the episodes end: a pass over the flags, a task per block.
    rows = [_rows(p) for p in paths]
    end_tasks = [[dask.delayed(_episode_ends)(p, a, b) for a, b in _blocks(n, block_rows)]
                 for p, n in zip(paths, rows)]
    flat = _compute(client, [t for ts in end_tasks for t in ts])
    offsets, at = [], 0
    for p, ts in zip(paths, end_tasks):
        ends = np.concatenate(flat[at:at + len(ts)]) if ts else np.zeros(0, np.int64)
        at += len(ts)
        if ends.size == 0:
            raise ValueError(f"ltt.dask.episode_scores: {p}: no complete episode "
                             "(no row has terminals or timeouts set)")
        offsets.append(np.concatenate([[0], ends + 1]).astype(np.int64))

    # V-bar and the reduction, a task per block, each given the offsets of its episodes.
    score_tasks = []
    for p, n, off in zip(paths, rows, offsets):
        tasks = []
        # Blocks of the whole file, so the one holding the last episode's end makes the forward
        # calls `ltt score` makes; the blocks past it hold no episode and are not scored.
        for a, b in _blocks(n, block_rows):
            if a >= off[-1]:
                break
            first = int(np.searchsorted(off, a, side="right")) - 1
            last = int(np.searchsorted(off, b, side="left"))  # the end offset of the last one
            tasks.append(dask.delayed(_score_block)(p, model, a, b, off[first:last + 1], first,
                                                    aggregation, percentile))
        score_tasks.append(tasks)
    flat = _compute(client, [t for ts in score_tasks for t in ts])

    out, at = [], 0
    for off, ts in zip(offsets, score_tasks):
        scores = np.full(len(off) - 1, np.nan)
        crossing: dict[int, list[np.ndarray]] = {}
        for first, s, pieces in flat[at:at + len(ts)]:
            inside = ~np.isnan(s)
            scores[first:first + len(s)][inside] = s[inside]
            for e, v in pieces.items():
                crossing.setdefault(e, []).append(v)
        at += len(ts)
        for e, parts in crossing.items():  # blocks in row order: the values in row order
            values = np.concatenate(parts)
            scores[e] = ltt.trajectory_scores(values, [0, len(values)], aggregation=aggregation,
                                              percentile=percentile)[0]
        out.append(scores)
    return out
